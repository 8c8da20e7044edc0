"""The write check holds a ``.anim``'s editor curves to what it plays: Unity's Animation window edits
``localEulerAnglesRaw.*`` / ``m_LocalRotation.*`` and rebuilds the played curves from them, so a file
whose editor curves say another motion is refused, nothing written; a file that already had such
curves keeps them (its own state, not the writer's)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from curveeditor.engine import edit as ed
from curveeditor.io import ClipWriteError, read_clip, write_checked
from curveeditor.io.anim import writer
from curveeditor.resources import SAMPLES_DIR
from tests.io.test_anim_played_only import _bvh


def _off_by_one_degree(real):
    def editor_curve(curve, c):
        ec, comp = real(curve, c)
        if c != 1:
            return ec, comp
        value = np.array(ec.value)
        value[len(value) // 2, comp] += 1.0
        return replace(ec, value=value), comp

    return editor_curve


@pytest.mark.parametrize("kind", [None, "quaternion"])
def test_editor_curves_that_play_another_motion_are_refused(tmp_path, monkeypatch, kind):
    src = tmp_path / "swing.bvh"
    _bvh(src)
    clip = read_clip(src)
    out = tmp_path / "out.anim"
    opts = {"mode": kind} if kind else {}
    write_checked(clip, out, **opts)  # the writer's own editor curves pass
    good = out.read_bytes()
    monkeypatch.setattr(writer, "_editor_curve", _off_by_one_degree(writer._editor_curve))
    with pytest.raises(ClipWriteError, match=r"editor curve (localEulerAnglesRaw|m_LocalRotation)\.y value"):
        write_checked(clip, out, **opts)
    assert out.read_bytes() == good  # nothing written
    # Without editor curves there is nothing to hold to the played curves.
    write_checked(clip, tmp_path / "played.anim", editor_curves=False, **opts)


def test_an_edited_track_of_a_unity_file_is_checked_and_its_own_state_kept(tmp_path, monkeypatch):
    clip = read_clip(SAMPLES_DIR / "demo.anim")
    t = next(t for t in clip.tracks if t.n_keys > 4)
    edited = clip.with_track(ed.move_keys(t, [2], 0.0, 1, 3.0))
    write_checked(edited, tmp_path / "ok.anim")
    monkeypatch.setattr(writer, "_editor_curve", _off_by_one_degree(writer._editor_curve))
    with pytest.raises(ClipWriteError, match="editor curve"):
        write_checked(edited, tmp_path / "bad.anim")
    assert not (tmp_path / "bad.anim").exists()


def test_position_editor_curves_are_held_to_their_curve_and_unused_weights_are_not(tmp_path):
    from curveeditor.io.verify import editor_mirror_failure

    src = tmp_path / "swing.bvh"
    _bvh(src)
    clip = read_clip(src)
    write_checked(clip, tmp_path / "out.anim")
    back = read_clip(tmp_path / "out.anim")
    assert editor_mirror_failure(clip, back, ".anim") is None

    def changed(attr, **fields):
        others = [
            replace(o, curve=o.curve.with_keys(**fields)) if (o.kind, o.attribute) == ("editor", attr) else o
            for o in back.other_tracks
        ]
        return replace(back, other_tracks=others)

    pos = next(o for o in back.other_tracks if (o.kind, o.attribute) == ("editor", "m_LocalPosition.y"))
    value = np.array(pos.curve.value)
    value[3, 0] += 0.01
    why = editor_mirror_failure(clip, changed("m_LocalPosition.y", value=value), ".anim")
    assert why is not None and "m_LocalPosition.y value at" in why and why.endswith("nothing written")
    # A weight on an unweighted side is not played: 0 where the runtime key says 1/3 is no difference.
    w = np.zeros_like(pos.curve.in_weight)
    assert editor_mirror_failure(clip, changed("m_LocalPosition.y", in_weight=w), ".anim") is None
