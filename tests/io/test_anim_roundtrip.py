"""Lossless round trip, Unity float spelling, bindings, and new clips written from code."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.tangents import make_curve
from curveeditor.io.anim import anim_text, read_anim, write_anim
from curveeditor.io.anim.bindings import crc32
from curveeditor.io.anim.floats import detect_style, format_floats
from curveeditor.io.errors import ClipWriteError
from tests.conftest import corpus_files

ANIMS = corpus_files("anim", "*.anim")
corpus = pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")


@corpus
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:60])
def test_open_save_is_byte_identical(path, tmp_path):
    clip = read_anim(path)
    out = tmp_path / "out.anim"
    assert write_anim(clip, out) == []
    assert out.read_bytes() == path.read_bytes()


_TOK = re.compile(r"(?<=: )(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?Infinity)(?=[,}]|$)")


@corpus
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:60])
def test_numbers_spelled_like_unity(path):
    text = path.read_text(encoding="utf-8")
    version = int(re.search(r"^  serializedVersion: (\d+)", text, re.M).group(1))
    style = detect_style(text, version)
    toks = []
    for line in text.splitlines():
        if any(k in line for k in ("guid", "fileID", "path:", "attribute:", "m_Name", "classID", "typeID")):
            continue
        toks += _TOK.findall(line)
    assert toks
    assert format_floats([float(t) for t in toks], style) == toks


def test_modern_spellings():
    vals = [1 / 30, 1 / 3, 0.1, 1.0, -0.0, 3e-45, 2.1619235e-9, 1.341595e-10, np.inf, -np.inf, 60.0, 7.983333]
    assert format_floats(vals) == [
        "0.033333335",
        "0.33333334",
        "0.1",
        "1",
        "-0",
        "3e-45",
        "0.0000000021619235",
        "1.341595e-10",
        "Infinity",
        "-Infinity",
        "60",
        "7.983333",
    ]
    assert format_floats([1 / 60, -0.998090386], "g9") == [".0166666675", "-.998090386"]
    assert format_floats([3.8146973e-06], "net") == ["3.8146973E-06"]
    with pytest.raises(ValueError):
        format_floats([np.nan])


def test_binding_hashes():
    assert crc32("") == 0
    assert crc32("Armature/Hips") == 3561920168
    assert crc32("ClapEffect") == 3698844428
    assert crc32("m_IsActive") == 2086281974
    assert crc32("Breast_flat") == 2664728714


@corpus
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:60])
def test_corpus_binding_paths_are_crc32_of_curve_paths(path):
    doc = read_anim(path).source
    paths = {crc32(e.path) for lst in doc.entries.values() for e in lst}
    for b in doc.bindings:
        assert b.path in paths


def spin_clip() -> Clip:
    t = np.linspace(0.0, 2.0, 9)
    e = np.stack([np.linspace(0, 30, 9), np.linspace(0, 1800, 9), 10 * np.sin(t)], axis=1)
    hips = RotationTrack("Armature/Hips", "euler", make_curve(t, e))
    single = RotationTrack("Armature/Hips/Spine", "euler", make_curve([0.0], [[10.0, 20.0, 30.0]]))
    q = np.array([[0, 0, 0, 1.0], [0, 0.38268343, 0, 0.9238795], [0.2, 0.5, 0.1, 0.83]])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    head = RotationTrack("Armature/Hips/Spine/Head", "quaternion", make_curve([0, 0.5, 1.0], q))
    pos = OtherTrack("Armature/Hips", "m_LocalPosition", "position", make_curve(t, np.c_[t, t * 0, -t]), t)
    return Clip("Spin [test]", 30.0, [hips, single, head], [pos])


@pytest.mark.parametrize("mode", [None, "euler", "quaternion"])
def test_new_clip_reads_back_same_rotations(tmp_path, mode):
    clip = spin_clip()
    out = tmp_path / "new.anim"
    warnings = write_anim(clip, out, mode=mode)
    text = out.read_text()
    back = read_anim(out)
    assert back.name == "Spin [test]" and back.frame_rate == 30
    assert "  m_Name: 'Spin [test]'\n" in text
    grid = np.linspace(0, 2, 801)
    for a in clip.tracks:
        b = back.track(a.path)
        assert b.kind == (mode or a.kind)
        err = geodesic_angle(played(a, grid), played(b, grid))
        tol = 1e-4 if (mode or a.kind) == a.kind else 1.0
        assert err.max() < tol, (a.path, mode, err.max())
    if mode == "quaternion":
        assert any("winding" in w for w in warnings)
        # Spin survived: each quaternion segment sweeps less than 180 deg.
        b = back.track("Armature/Hips")
        assert b.n_keys > 9
    # Modern field set, editor curves, bindings (single-key curves have none).
    for f in (
        "m_CompressedRotationCurves: []",
        "m_PPtrCurves: []",
        "m_HasMotionFloatCurves: 0",
        "m_Events: []",
    ):
        assert f in text
    assert "    m_StopTime: 2\n" in text
    kind_attr = {"euler": 4, "quaternion": 2}
    hips_kind = mode or "euler"
    assert f"      path: 3561920168\n      attribute: {kind_attr[hips_kind]}\n" in text
    assert f"      path: {crc32('Armature/Hips/Spine')}\n" not in text
    n_euler = sum(1 for t in back.tracks if t.kind == "euler")
    n_quat = len(back.tracks) - n_euler
    assert text.count("attribute: localEulerAnglesRaw.") == 3 * n_euler
    assert text.count("attribute: m_LocalEulerAngles.") == 3 * n_euler
    assert text.count("attribute: m_LocalRotation.") == 4 * n_quat
    assert text.count("attribute: m_LocalPosition.") == 3
    pos = [o for o in back.other_tracks if o.kind == "position"][0]
    assert np.allclose(pos.curve.value, clip.other_tracks[0].curve.value)


def test_order_conversion_and_keep_order():
    t = np.linspace(0, 1, 5)
    e = np.stack([np.linspace(0, 40, 5), np.linspace(0, 50, 5), np.linspace(0, 60, 5)], axis=1)
    clip = Clip("o", 60.0, [RotationTrack("A", "euler", make_curve(t, e), order="xyz")])
    text, warnings = anim_text(clip, keep_order=False)
    assert any("converted to 'zxy'" in w for w in warnings)
    assert "m_RotationOrder: 4" in text
    # The default (issue 21): its own order, the same keys and values, and a note saying so.
    text2, warnings2 = anim_text(clip)
    assert text2.count("m_RotationOrder: 0") == 4  # the runtime curve and its three editor curves
    assert text2.count("m_RotationOrder: 4") == 3  # the empty m_LocalEulerAngles placeholders
    assert len(warnings2) == 1 and "'xyz' kept (m_RotationOrder 0 XYZ)" in warnings2[0]
    from curveeditor.io.anim.document import parse_document
    from curveeditor.io.anim.reader import build_clip

    for txt in (text, text2):
        back = build_clip(parse_document("x", txt.encode()))
        err = geodesic_angle(played(clip.tracks[0], t), played(back.tracks[0], t))
        assert err.max() < 1e-4


@corpus
def test_protect_and_atomic(tmp_path):
    src = next(p for p in ANIMS if "Camera_Rot" in p.name)
    clip = read_anim(src)
    with pytest.raises(ClipWriteError):
        write_anim(clip, src, protect=src)
    with pytest.raises(ClipWriteError):
        write_anim(clip, tmp_path / "missing" / "x.anim")
    assert not list(tmp_path.iterdir())


@settings(deadline=None, max_examples=40)
@given(
    n=st.integers(1, 6),
    scale=st.sampled_from([1e-12, 1e-6, 1e-3, 1.0, 360.0, 1e7]),
    seed=st.integers(0, 2**31 - 1),
    kind=st.sampled_from(["euler", "quaternion"]),
)
def test_written_values_read_back_as_their_float32(n, scale, seed, kind):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.01, 1.0, n))
    c = 3 if kind == "euler" else 4
    v = rng.normal(size=(n, c)) * scale
    if kind == "quaternion":
        v = np.abs(v) + 0.1  # one hemisphere, nonzero norm: no export fix changes the keys
    slopes = rng.normal(size=(n, c)) * scale
    slopes[rng.uniform(size=(n, c)) < 0.1] = np.inf
    curve = Curve.make(t, v, slopes, slopes, tangent_mode=136)
    clip = Clip("p", 30.0, [RotationTrack("A/B", kind, curve)])
    from curveeditor.io.anim.document import parse_document
    from curveeditor.io.anim.reader import build_clip

    text, _ = anim_text(clip)
    back = build_clip(parse_document("x", text.encode())).track("A/B").curve
    for name in ("time", "value", "in_slope", "out_slope"):
        assert np.array_equal(getattr(back, name), getattr(curve, name).astype(np.float32).astype(np.float64))
    assert (back.tangent_mode == 136).all()


def test_times_closer_than_float32_are_refused(tmp_path):
    curve = make_curve([0.0, 1.0, 1.0 + 1e-12], np.zeros((3, 3)))
    clip = Clip("p", 30.0, [RotationTrack("A", "euler", curve)])
    with pytest.raises(ClipWriteError) as info:
        write_anim(clip, tmp_path / "x.anim")
    assert "float32" in str(info.value)
    assert not (tmp_path / "x.anim").exists()
