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
