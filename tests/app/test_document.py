"""ClipDocument: undo/redo of clip replacements, live (drag) edits as one undo step, selections."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.app.model.document import ClipDocument
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve


def _clip(n_tracks=3, n_keys=5):
    t = np.arange(n_keys) / 30.0
    tracks = [
        RotationTrack(f"Root/T{i}", "euler", Curve.make(t, np.tile([0.0, 10.0 * i, 0.0], (n_keys, 1))))
        for i in range(n_tracks)
    ]
    return Clip("c", 30.0, tracks)


def _moved(clip, path, dv):
    tr = clip.track(path)
    return clip.with_track(tr.with_curve(tr.curve.with_keys(value=tr.curve.value + dv)))


@pytest.fixture
def doc(qapp):
    d = ClipDocument()
    d.load(_clip(), "/tmp/x.anim")
    return d


def test_load_resets_state(doc):
    assert doc.selected_paths == ["Root/T0"]
    assert doc.current_track().path == "Root/T0"
    assert not doc.is_dirty()
    assert doc.original is doc.clip
    assert doc.changed_paths is None


def test_apply_undo_redo_tracks_changed_paths(doc, qtbot):
    before = doc.clip
    dirty = []
    doc.dirtyChanged.connect(dirty.append)
    with qtbot.waitSignal(doc.clipChanged):
        doc.apply_clip(_moved(before, "Root/T1", 5.0), "move")
    assert doc.changed_paths == frozenset({"Root/T1"})
    assert doc.clip.track("Root/T1").curve.value[0, 1] == 15.0
    assert doc.is_dirty() and dirty == [True]
    doc.undo_stack.undo()
    assert doc.clip is before and not doc.is_dirty()
    doc.undo_stack.redo()
    assert doc.clip.track("Root/T1").curve.value[0, 1] == 15.0


def test_live_edit_is_one_undo_step(doc):
    before = doc.clip
    doc.begin_live_edit()
    for k in range(1, 6):
        doc.update_live(_moved(before, "Root/T2", float(k)), ["Root/T2"])
        assert doc.changed_paths == frozenset({"Root/T2"})
    doc.end_live_edit("drag keys")
    assert doc.undo_stack.count() == 1
    assert doc.clip.track("Root/T2").curve.value[0, 1] == 25.0
    doc.undo_stack.undo()
    assert doc.clip is before
    doc.undo_stack.redo()
    assert doc.clip.track("Root/T2").curve.value[0, 1] == 25.0


def test_cancel_live_edit_restores(doc):
    before = doc.clip
    doc.begin_live_edit()
    doc.update_live(_moved(before, "Root/T0", 3.0))
    doc.cancel_live_edit()
    assert doc.clip is before and doc.undo_stack.count() == 0


def test_key_selection_restored_by_undo_and_pruned(doc):
    doc.select_keys({"Root/T0": {0, 4, 99}, "nope": {1}})
    assert doc.selected_keys == {"Root/T0": {0, 4}}
    tr = doc.clip.track("Root/T0")
    shorter = doc.clip.with_track(tr.with_curve(tr.curve.select(np.arange(3))))
    doc.apply_clip(shorter, "delete keys", keys_after={})
    assert doc.selected_keys == {}
    doc.undo_stack.undo()
    assert doc.selected_keys == {"Root/T0": {0, 4}}


def test_time_and_paths(doc, qtbot):
    with qtbot.waitSignal(doc.timeChanged) as blocker:
        doc.set_time(0.1)
    assert blocker.args == [pytest.approx(0.1)]
    doc.set_time(99.0)
    assert doc.current_time == pytest.approx(4 / 30.0)
    assert doc.snap_time(0.051) == pytest.approx(2 / 30.0)
    doc.select_paths(["Root/T2", "bogus", "Root/T1"])
    assert doc.selected_paths == ["Root/T2", "Root/T1"]


def test_mark_saved_clears_dirty(doc):
    doc.apply_clip(_moved(doc.clip, "Root/T0", 1.0), "m")
    doc.mark_saved("/tmp/y.anim")
    assert not doc.is_dirty() and doc.path == "/tmp/y.anim"
    doc.mark_dirty()
    assert doc.is_dirty()


def test_switching_tracks_drops_key_selection_of_unselected_tracks(doc, qtbot):
    # Keys of a track the user switched away from are invisible: Delete/copy/drag must not act on them.
    doc.select_paths(["Root/T0", "Root/T1"])
    doc.select_keys({"Root/T0": {1}, "Root/T1": {2}})
    with qtbot.waitSignal(doc.keySelectionChanged):
        doc.select_paths(["Root/T1"])
    assert doc.selected_keys == {"Root/T1": {2}}
    doc.select_keys({"Root/T0": {3}, "Root/T1": {0}})
    assert doc.selected_keys == {"Root/T1": {0}}


def test_set_time_clamps_to_the_clip_without_rescanning_its_tracks(doc, monkeypatch):
    """A playback tick's clamp (and the timeline's range) scan the tracks once per clip, not per
    tick (90 us per tick on a 67-track BVH); a new clip (an edit, undo) is scanned again."""
    scans = []
    real_end = Clip.end

    monkeypatch.setattr(Clip, "end", property(lambda c: scans.append(c) or real_end.fget(c)))
    for i in range(20):
        doc.set_time(i / 100.0)
    assert doc.current_time == pytest.approx(4 / 30.0)  # clamped at the clip's last key
    assert len(scans) <= 1
    tr = doc.clip.track("Root/T0")
    longer = tr.with_curve(Curve.make(np.arange(8) / 30.0, np.zeros((8, 3))))
    doc.apply_clip(doc.clip.with_track(longer), "longer")
    doc.set_time(1.0)
    assert doc.current_time == pytest.approx(7 / 30.0)
    doc.undo_stack.undo()
    doc.set_time(1.0)
    assert doc.current_time == pytest.approx(4 / 30.0)
