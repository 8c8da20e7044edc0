"""What an edit of a few tracks re-does: only the changed tracks (counted, not timed).

A drag step edits one track (graphs) or a few (dope sheet); listeners must not redo whole-clip
work per step: the skeleton re-evaluates only the changed tracks, the infinity layer re-extrapolates
only the changed tracks and keeps the items of the others, the key menu's tangent-mode mark looks at
distinct modes.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest

from curveeditor.app.graphs.layers import _channels
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine import edit as ed
from curveeditor.engine import skeleton
from curveeditor.engine.skeleton import pose, skeleton_from_clip
from curveeditor.io import read_clip
from tests.app.rig_clips import many_tracks_clip

pytestmark = pytest.mark.gui


def _chain_bvh(path, joints: int = 8, frames: int = 120) -> None:
    """A BVH chain of ``joints`` joints (ZXY rotations, root position) with smooth random motion."""
    lines = [
        "HIERARCHY",
        "ROOT J0",
        "{",
        "OFFSET 0 0 0",
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
    ]
    for j in range(1, joints):
        lines += [f"JOINT J{j}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    lines += ["End Site", "{", "OFFSET 0 1 0", "}"] + ["}"] * joints
    rng = np.random.default_rng(3)
    t = np.arange(frames)[:, None] / 30.0
    rot = 40 * np.sin(t * rng.uniform(0.5, 2, 3 * joints) + rng.uniform(0, 6, 3 * joints))
    motion = np.c_[np.zeros((frames, 3)), rot]
    lines += ["MOTION", f"Frames: {frames}", "Frame Time: 0.0333333"]
    lines += [" ".join(f"{v:.4f}" for v in row) for row in motion]
    path.write_text("\n".join(lines) + "\n")


def test_pose_after_one_track_edit_evaluates_only_that_track(monkeypatch, tmp_path):
    _chain_bvh(tmp_path / "chain.bvh")
    clip = read_clip(tmp_path / "chain.bvh")
    skel, why = skeleton_from_clip(clip)
    if skel is None:
        pytest.fail(f"no skeleton for the generated rig: {why}")
    t = [0.4, 1.7]
    pose(skel, clip, t)
    pose(skel, clip, t)  # second pose of the same tracks: merged groups cached
    tr = clip.tracks[3]
    edited = clip.with_track(ed.move_keys(tr, [5], 0.0, 0, 7.0))
    calls = []
    real = skeleton.played

    def counted(track, times):
        calls.append(track.path)
        return real(track, times)

    monkeypatch.setattr(skeleton, "played", counted)
    got = pose(skel, edited, t)
    assert calls == [tr.path]  # one track evaluated on its own, the others through the merged curves
    skeleton._GROUP_CACHE.clear()
    monkeypatch.setattr(skeleton, "played", real)
    want = pose(skel, edited, t)  # fresh: no cached groups
    np.testing.assert_allclose(got.positions, want.positions, atol=1e-9)
    np.testing.assert_allclose(got.rotations, want.rotations, atol=1e-9)


@pytest.fixture
def win(qapp, tmp_path):
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(tmp_path / "autosave"))
    w.resize(1400, 900)
    w.show()
    QTest.qWaitForWindowExposed(w)
    yield w
    w.doc.undo_stack.setClean()
    w.close()


def test_infinity_layer_redraw_after_one_track_edit_reextrapolates_only_it(win, qtbot):
    clip = many_tracks_clip(6, 120, 30.0)
    doc = win.doc
    doc.load(clip, None)
    doc.select_paths([t.path for t in clip.tracks])
    win.graphs.plots[0].setXRange(-2.0, clip.end + 2.0, padding=0)
    layer = win.tools.infinity_layer
    layer.redraw()
    items_before = [it for _p, it in layer.items]  # kept alive: ids are not reused
    assert items_before
    n0 = layer.extrapolations
    tr = clip.tracks[2]
    new = tr.with_curve(tr.curve.with_keys(value=tr.curve.value + 5.0))
    doc.apply_clip(clip.with_track(new), "shift")
    layer.redraw()
    assert layer.extrapolations - n0 == 1  # only the edited track
    after = [it for _p, it in layer.items]
    assert len(after) == len(items_before) and all(a is b for a, b in zip(after, items_before, strict=True))
    # the secondary tracks' Constant extrapolation past the end: each holds its last drawn key value
    plot = win.graphs.euler_plots[0]
    ch = _channels(plot)[0]
    post = [it for p, it in layer.items if p is plot and it.xData[0] >= clip.end - 1e-9]
    ys = np.concatenate([it.yData for it in post])
    for t in doc.clip.tracks:
        assert np.any(np.isclose(ys, t.curve.value[-1, ch], atol=1e-9)), t.path
    assert np.isclose(ys, new.curve.value[-1, ch]).any()  # the edited track drawn as edited


def test_infinity_layer_zoom_within_its_samples_sets_no_data(win, qtbot, monkeypatch):
    """A zoom / pan that stays inside the extrapolated span gives the same parts: no item gets its
    data again (each setData repainted the scene once more after the view's own paint)."""
    import pyqtgraph as pg

    clip = many_tracks_clip(3, 120, 30.0)
    win.doc.load(clip, None)
    win.doc.select_paths([t.path for t in clip.tracks])
    win.graphs.plots[0].setXRange(-2.0, clip.end + 2.0, padding=0)
    layer = win.tools.infinity_layer
    layer.redraw()
    assert layer.items
    mine = {id(it) for _p, it in layer.items}
    calls = []
    orig = pg.PlotCurveItem.setData

    def counting(self, *a, **k):
        if id(self) in mine:
            calls.append(self)
        return orig(self, *a, **k)

    monkeypatch.setattr(pg.PlotCurveItem, "setData", counting)
    win.graphs.plots[0].setXRange(-1.9, clip.end + 1.9, padding=0)  # inside the sampled span
    layer.redraw()
    assert calls == [] and {id(it) for _p, it in layer.items} == mine
    win.doc.select_paths([clip.tracks[0].path])
    layer.redraw()  # other parts: filled again
    assert calls


def test_selected_tangent_mode_of_many_keys(win):
    clip = many_tracks_clip(3, 3000, 60.0)
    doc = win.doc
    doc.load(clip, None)
    doc.select_paths([t.path for t in clip.tracks])
    doc.select_keys({t.path: set(range(t.n_keys)) for t in clip.tracks})
    modes = {ed.describe_mode(int(m)) for t in clip.tracks for m in np.unique(t.curve.tangent_mode)}
    assert win.selected_tangent_mode() == (modes.pop() if len(modes) == 1 else None)
    tr = clip.tracks[1]
    tm = tr.curve.tangent_mode.copy()
    tm[7, 0] = 0  # one Free component among 27,000
    doc.apply_clip(clip.with_track(tr.with_curve(tr.curve.with_keys(tangent_mode=tm))), "free one")
    assert win.selected_tangent_mode() is None


def test_track_tree_looks_only_at_edited_tracks_and_counts_after_a_drag(win):
    clip = many_tracks_clip(20, 60, 30.0)
    doc = win.doc
    doc.load(clip, None)
    model = win.tracks.model
    n0 = model.inspected
    tr = clip.tracks[4]
    one_less = tr.with_curve(tr.curve.select(np.arange(1, tr.n_keys)))
    doc.begin_live_edit()
    doc.update_live(clip.with_track(one_less), [tr.path])
    doc.update_live(clip.with_track(one_less), [tr.path])
    assert model.inspected == n0  # mid-drag: nothing re-inspected
    doc.end_live_edit("drop a key")
    assert model.inspected == n0 + 1  # the drag's end: the one edited track, not all 20
    idx = model.index_for_track(tr.path).siblingAtColumn(1)
    assert idx.data() == str(tr.n_keys - 1)
    doc.undo_stack.undo()
    assert model.inspected == n0 + 2 and idx.data() == str(tr.n_keys)


def test_drag_of_every_drawn_track_refreshes_the_batched_tracks_throttled_then_exactly(win, qtbot):
    clip = many_tracks_clip(8, 200, 30.0)
    doc, g = win.doc, win.graphs
    doc.load(clip, None)
    doc.select_paths([t.path for t in clip.tracks])
    qtbot.wait(10)
    n0 = g.batched_updates
    doc.begin_live_edit()
    moved = clip
    for k in range(10):  # ten quick moves of keys on every track (as a dope-sheet drag)
        for tr in clip.tracks:
            moved = moved.with_track(tr.with_curve(tr.curve.with_keys(value=tr.curve.value + k + 1.0)))
        doc.update_live(moved, [t.path for t in clip.tracks])
    assert g.batched_updates - n0 <= 1  # throttled: at most one refresh is due within the interval
    doc.end_live_edit("shift all")
    assert g.batched_updates - n0 >= 1
    # after the drag the batched curves are exactly the final clip's samples
    last = clip.tracks[-1]
    smp = g.cache.get(doc.clip.track(last.path), coarse=True)
    assert not smp.partial
    np.testing.assert_allclose(smp.key_values[:, 0], last.curve.value[:, 0] + 10.0)
    drawn = np.concatenate([s.multi_keys._y for s in g.strips if s.is_euler])
    want = last.curve.value[:, 0] + 10.0
    assert np.all(np.min(np.abs(drawn[None, :] - want[:, None]), axis=1) < 1e-9)  # drawn as moved


def test_key_table_mid_drag_refreshes_throttled_then_exactly_at_the_end(win, qtbot):
    clip = many_tracks_clip(3, 200, 30.0)
    doc = win.doc
    doc.load(clip, None)
    tr = clip.tracks[0]
    doc.select_paths([tr.path])
    model = win.keys.model
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    doc.begin_live_edit()
    for k in range(1, 11):  # ten steps of a dope-sheet drag that overwrites k keys each
        doc.update_live(clip.with_track(tr.with_curve(tr.curve.select(np.arange(k, tr.n_keys)))), [tr.path])
    assert len(resets) <= 1  # throttled: a model reset per step cost ~6 ms in the main window
    doc.end_live_edit("drop keys")
    assert model.rowCount() == tr.n_keys - 10  # exact at the drag's end
    t0 = model.index(0, 0).data()
    assert float(t0) == pytest.approx(float(tr.times[10]), abs=1e-3)
    doc.undo_stack.undo()
    assert model.rowCount() == tr.n_keys


def test_skeleton_mid_drag_poses_throttled_then_exact_at_the_end(win, tmp_path, monkeypatch):
    _chain_bvh(tmp_path / "chain.bvh")
    clip = read_clip(tmp_path / "chain.bvh")
    doc, layer = win.doc, win.tools.skeleton
    doc.load(clip, None)
    assert layer.active()
    poses = []
    real = layer.update_pose
    monkeypatch.setattr(layer, "update_pose", lambda: (poses.append(1), real()))
    tr = clip.tracks[2]
    moved = clip
    doc.begin_live_edit()
    for k in range(1, 11):  # ten steps of a drag on one joint
        moved = clip.with_track(ed.move_keys(tr, list(range(tr.n_keys)), 0.0, 0, 3.0 * k))
        doc.update_live(moved, [tr.path])
    assert len(poses) <= 1  # throttled: forward kinematics + a GL repaint per step before
    doc.end_live_edit("bend")
    assert len(poses) >= 1
    want = pose(layer.skeleton, doc.clip, [doc.current_time])
    got = layer.joint_scene_positions()
    np.testing.assert_allclose(got, layer._to_scene(want.positions[0]), atol=1e-9)


def test_graph_handles_drawn_for_a_few_selected_keys_not_for_a_dope_sheet_box(win, qtbot):
    """A box over many drawn tracks selects thousands of keys: no tangent handles (36,600 handles
    cost 0.45 s per refresh in Python); a few keys keep theirs."""
    from curveeditor.app.graphs.marks import MAX_HANDLE_KEYS, MAX_HANDLE_TOTAL

    clip = many_tracks_clip(20, 120, 30.0)
    doc = win.doc
    doc.load(clip, None)
    paths = [t.path for t in clip.tracks]
    doc.select_paths(paths)
    per = MAX_HANDLE_KEYS - 4  # under the per-track cap, over the total one
    assert per * len(paths) > MAX_HANDLE_TOTAL
    doc.select_keys({p: set(range(10, 10 + per)) for p in paths})
    assert win.graphs.handle_points == []
    doc.select_keys({p: {10, 11} for p in paths[:3]})
    assert {(h[1], h[2]) for h in win.graphs.handle_points} == {(p, i) for p in paths[:3] for i in (10, 11)}
