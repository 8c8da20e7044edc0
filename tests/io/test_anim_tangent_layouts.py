"""Tangent-mode edits on quaternion keys of old-format .anim files (issue 8 section 2, last bullet).

Keys without serializedVersion (Unity 4.x-5.2) hold tangentMode in a 2-bit-per-side layout (bit 0
broken, bits 1-2 left, bits 3-4 right; Editable/Smooth/Linear/Stepped); serializedVersion 2 keys use the
modern layout but have no weight fields. An edit is written as Unity writes that layout, or the
export says what the layout cannot hold.
"""

from __future__ import annotations

import numpy as np

from curveeditor.engine.edit import set_side_mode, set_tangent_preset
from curveeditor.io import read_clip, write_clip
from curveeditor.io.anim.keys import modern_tangent_modes

HEADER = "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!74 &7400000\nAnimationClip:\n"


def quat_keys(version: int | None) -> str:
    q = [(0, 0, 0, 1), (0, 0.38268343, 0, 0.9238795), (0, 0.70710677, 0, 0.70710677)]
    out = ""
    for i, v in enumerate(q):
        head = (
            f"      - serializedVersion: {version}\n        time: {i * 0.5}\n"
            if version
            else f"      - time: {i * 0.5}\n"
        )
        vec = "{" + ", ".join(f"{c}: {x}" for c, x in zip("xyzw", v, strict=True)) + "}"
        out += (
            head + f"        value: {vec}\n        inSlope: {{x: 0, y: 0, z: 0, w: 0}}\n"
            "        outSlope: {x: 0, y: 0, z: 0, w: 0}\n        tangentMode: 0\n"
        )
    return out


def clip_text(version: int | None) -> str:
    clip_sv = 4 if version is None else 6
    return (
        HEADER
        + "  m_ObjectHideFlags: 0\n  m_PrefabParentObject: {fileID: 0}\n  m_PrefabInternal: {fileID: 0}\n"
        + f"  m_Name: Old\n  serializedVersion: {clip_sv}\n  m_Legacy: 1\n  m_Compressed: 0\n"
        + "  m_UseHighQualityCurve: 1\n  m_RotationCurves:\n  - curve:\n"
        + "      serializedVersion: 2\n      m_Curve:\n"
        + quat_keys(version)
        + "      m_PreInfinity: 2\n      m_PostInfinity: 2\n    path: Cube\n"
        + "  m_CompressedRotationCurves: []\n  m_PositionCurves: []\n  m_ScaleCurves: []\n"
        + "  m_FloatCurves: []\n  m_PPtrCurves: []\n  m_SampleRate: 60\n  m_WrapMode: 0\n"
        + "  m_Bounds:\n    m_Center: {x: 0, y: 0, z: 0}\n    m_Extent: {x: 0, y: 0, z: 0}\n"
        + "  m_ClipBindingConstant:\n    genericBindings: []\n    pptrCurveMapping: []\n"
        + "  m_AnimationClipSettings:\n    m_StartTime: 0\n    m_StopTime: 1\n"
        + "  m_EditorCurves: []\n  m_EulerEditorCurves: []\n  m_Events: []\n"
    )


def written_modes(text: str) -> list[int]:
    return [int(line.split(":")[1]) for line in text.splitlines() if line.strip().startswith("tangentMode:")]


def edit_and_write(tmp_path, version, edit):
    src = tmp_path / "old.anim"
    src.write_text(clip_text(version))
    clip = read_clip(src)
    tr = edit(clip.tracks[0])
    out = tmp_path / "out.anim"
    warnings = write_clip(clip.with_track(tr), out)
    return tr, out, warnings


def test_linear_edit_on_keys_without_version_uses_the_old_2_bit_layout(tmp_path):
    tr, out, warnings = edit_and_write(tmp_path, None, lambda t: set_side_mode(t, [1], "both", "Linear"))
    modes = written_modes(out.read_text())
    # broken Linear/Linear: modern 69, old layout 1 | 2 << 1 | 2 << 3 = 21 (used to be written as 0)
    assert modes[1] == 21 and modern_tangent_modes(np.array([21]), None)[0] == tr.curve.tangent_mode[1, 0]
    back = read_clip(out).tracks[0]
    assert np.array_equal(back.curve.tangent_mode[1], tr.curve.tangent_mode[1])
    assert not [w for w in warnings if "tangent" in w.lower()]


def test_clamped_auto_on_keys_without_version_is_written_as_smooth_and_said(tmp_path):
    tr, out, warnings = edit_and_write(
        tmp_path, None, lambda t: set_tangent_preset(t, [0, 1, 2], "Clamped Auto")
    )
    modes = written_modes(out.read_text())
    assert modes == [10, 10, 10]  # Smooth/Smooth, the old layout's nearest mode
    said = [w for w in warnings if "ClampedAuto" in w]
    assert len(said) == 1 and "3 key(s)" in said[0] and "Smooth" in said[0]
    back = read_clip(out).tracks[0]
    assert np.all(back.curve.tangent_mode == 34)  # Auto: what the file now says
    assert np.allclose(back.curve.in_slope, tr.curve.in_slope, atol=1e-6)  # slopes as edited


def test_version_2_keys_without_editor_curves_hold_the_common_mode(tmp_path):
    tr, out, warnings = edit_and_write(tmp_path, 2, lambda t: set_tangent_preset(t, [2], "Auto"))
    modes = written_modes(out.read_text())
    assert modes[2] == 34
    assert np.all(read_clip(out).tracks[0].curve.tangent_mode[2] == 34)


def test_modes_a_runtime_key_cannot_hold_are_said(tmp_path):
    def per_component(t):
        tm = np.array(t.curve.tangent_mode)
        tm[1, 0] = 69  # x Linear, the rest Free: a vector key has one tangentMode
        return t.with_curve(t.curve.with_keys(tangent_mode=tm))

    _, out, warnings = edit_and_write(tmp_path, 2, per_component)
    said = [w for w in warnings if "per component" in w]
    assert len(said) == 1 and "1 key(s)" in said[0]


def test_weights_in_a_file_without_weight_fields_are_said(tmp_path):
    def weighted(t):
        return set_side_mode(t, [1], "out", "Weighted")

    _, out, warnings = edit_and_write(tmp_path, 2, weighted)
    said = [w for w in warnings if "weighted" in w]
    assert len(said) == 1 and "no weight fields" in said[0]
