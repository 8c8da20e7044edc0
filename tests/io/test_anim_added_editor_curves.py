"""A clip without editor curves given a whole set when its channels are keyed independently (issue 23).

Clips Unity saves from code or copies of FBX imports have ``m_EditorCurves: []``: their runtime
curves key every component at the same times. A ``--per-channel`` reduction keys each channel on its
own; the writer then adds the Animation window's editor curves for every curve of the clip (rotation,
position, scale, float) to hold them, the runtime curves at the union of their times, and says so.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack, played
from curveeditor.engine.recipe import Recipe, run_recipe
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, hemisphere_continuous
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, write_checked, write_clip
from tests.conftest import corpus_files

PLASTAR = [p for p in corpus_files("anim", "*.anim") if "PlastAR__Assets_mixamo" in p.name]


def _no_editor_clip(tmp_path):
    """A 3-track clip (Euler, quaternion, and a position and float curve) written without editor
    curves, as read back."""
    t = np.arange(90) / 30.0
    e = np.stack([40 * np.sin(2 * t), 25 * np.cos(3 * t), 10 * np.sin(5 * t) + 30 * t], axis=1)
    q = hemisphere_continuous(euler_to_quat(e[:, ::-1] * 0.7))
    clip = Clip(
        "plain",
        30.0,
        [
            RotationTrack("Hips", "euler", make_curve(t, e)),
            RotationTrack("Hips/Spine", "euler", make_curve(t, e * 0.5), order="zyx"),
            RotationTrack("Hips/Spine/Head", "quaternion", make_curve(t, q)),
        ],
        [
            OtherTrack("Hips", "m_LocalPosition", "position", make_curve(t, np.c_[t, t * 0, t * 2]), t, {}),
            OtherTrack(
                "Face", "blendShape.smile", "float", make_curve(t, np.sin(t)[:, None]), t, {"class_id": 137}
            ),
        ],
    )
    src = tmp_path / "plain.anim"
    write_clip(clip, src, editor_curves=False)
    assert "  m_EditorCurves: []\n" in src.read_text()
    return read_clip(src)


def _reduced(clip, per_channel=True, bound=0.5):
    step = {"op": "reduce", "max_error": bound}
    if per_channel:
        step["per_channel"] = True
    return run_recipe(clip, Recipe.of(step), diffs=False).clip


def test_per_channel_keys_of_a_clip_without_editor_curves_are_held_in_added_ones(tmp_path):
    src = _no_editor_clip(tmp_path)
    red = _reduced(src)
    assert any(tr.curve.channel_keys is not None for tr in red.tracks)
    out = tmp_path / "out.anim"
    check = write_checked(red, out)
    said = [w for w in check.warnings if "editor curves added" in w]
    assert len(said) == 1 and not [w for w in check.warnings if "union of their times" in w and w not in said]
    text = out.read_text()
    for attr in ("localEulerAnglesRaw.x", "m_LocalRotation.w", "m_LocalPosition.z", "blendShape.smile"):
        assert f"attribute: {attr}\n" in text, attr
    back = read_clip(out)
    t = np.linspace(0.0, 89 / 30.0, 2000)
    for tr in red.tracks:
        b = back.track(tr.path)
        # each channel's own keys come back; what Unity plays is the reduced track's motion
        assert b.curve.channel_key_count() == tr.curve.channel_key_count(), tr.path
        err = geodesic_angle(played(b, t), played(tr, t)).max()
        assert err < 1e-3, (tr.path, err)
        assert geodesic_angle(played(b, t), played(src.track(tr.path), t)).max() <= 0.5 + 1e-6
    assert sum(tr.curve.channel_key_count() for tr in back.tracks) < sum(
        tr.n_keys * tr.curve.value.shape[1] for tr in back.tracks
    )
    pos = back.other_tracks[0]
    np.testing.assert_array_equal(pos.curve.value, src.other_tracks[0].curve.value)


def test_shared_keys_and_played_only_writes_add_no_editor_curves(tmp_path):
    src = _no_editor_clip(tmp_path)
    out = tmp_path / "shared.anim"
    warnings = write_clip(_reduced(src, per_channel=False), out)
    assert "  m_EditorCurves: []\n" in out.read_text()
    assert not [w for w in warnings if "editor curves added" in w]
    played_only = tmp_path / "played.anim"
    warnings = write_clip(_reduced(src), played_only, editor_curves=False)
    assert "  m_EditorCurves: []\n" in played_only.read_text()
    assert [w for w in warnings if "union of their times" in w]


@pytest.mark.skipif(not PLASTAR, reason="../shared/corpus/anim is not present")
def test_a_mixamo_copy_reduced_per_channel_keeps_its_bound_with_fewer_channel_keys(tmp_path):
    src = read_clip(PLASTAR[0])
    shared, per = _reduced(src, per_channel=False), _reduced(src)
    out = tmp_path / "pc.anim"
    write_checked(per, out)
    back = read_clip(out)
    t = np.arange(0, 27) / 30.0
    for tr in src.tracks:
        assert geodesic_angle(played(back.track(tr.path), t), played(tr, t)).max() <= 0.5 + 1e-6, tr.path
    kept = sum(tr.curve.channel_key_count() for tr in back.tracks)
    assert kept < sum(tr.n_keys * tr.curve.value.shape[1] for tr in shared.tracks)


def test_a_track_without_editor_curves_beside_others_keeps_one_key_list(tmp_path):
    """Only a clip with no editor curves at all is given them: in a clip whose editor curves leave a
    track out, that track keeps one key list (``separate_channel_keys`` False), the others split."""
    src = _no_editor_clip(tmp_path)
    full = tmp_path / "full.anim"
    write_clip(replace(src, source=None), full)  # (a new clip: every editor curve)
    text = full.read_text()
    head, rest = text.split("  m_EditorCurves:\n", 1)
    body, tail = rest.split("  m_EulerEditorCurves:", 1)
    entries = ["  - curve:\n" + e for e in body.split("  - curve:\n")[1:]]
    kept = [e for e in entries if "    path: Hips/Spine/Head\n" not in e]
    assert len(kept) == len(entries) - 4
    partial = tmp_path / "partial.anim"
    partial.write_text(head + "  m_EditorCurves:\n" + "".join(kept) + "  m_EulerEditorCurves:" + tail)
    clip = read_clip(partial)
    assert clip.track("Hips/Spine/Head").meta.get("separate_channel_keys") is False
    assert "separate_channel_keys" not in clip.track("Hips").meta
    red = _reduced(clip)
    assert red.track("Hips/Spine/Head").curve.channel_keys is None
    assert red.track("Hips").curve.channel_keys is not None
    assert "separate_channel_keys" not in src.track("Hips").meta  # (none at all: addable)
