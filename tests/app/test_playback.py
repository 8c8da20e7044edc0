"""Playback frames in the real main window (issue 9): what one ``timeChanged`` tick does.

The goal is the clip's frame rate (up to 60 fps) on production rigs; these tests pin the behaviour
that keeps a frame cheap (no window re-layout, one pose sample shared by the views, a timer at the
clip's rate) while the pose drawn stays exactly the engine's.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject

from curveeditor.io import read_clip
from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui


def _bvh_text(frames: int = 90, rate: float = 60.0) -> str:
    """A 4-joint BVH (root with positions) whose joints all turn over time."""
    t = np.arange(frames) / rate
    rows = []
    for k in range(frames):
        a = 40.0 * np.sin(2 * np.pi * 0.7 * t[k])
        b = 25.0 * np.cos(2 * np.pi * 0.4 * t[k])
        rows.append(
            f"{3 * np.sin(t[k]):.4f} 90 {2 * t[k]:.4f} {a:.3f} {b:.3f} {a / 2:.3f} "
            f"{b:.3f} {a:.3f} {-b:.3f} {-a:.3f} {b / 3:.3f} {a / 4:.3f} {a:.3f} {b:.3f} 0"
        )
    return (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n"
        " CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        " JOINT Spine\n {\n  OFFSET 0 12 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  JOINT Head\n  {\n   OFFSET 0 10 1\n   CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "   End Site\n   {\n    OFFSET 0 6 0\n   }\n  }\n }\n"
        " JOINT Leg\n {\n  OFFSET 4 -2 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 -20 0\n  }\n }\n}\n"
        f"MOTION\nFrames: {frames}\nFrame Time: {1 / rate:.7f}\n" + "\n".join(rows) + "\n"
    )


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("playback"))


@pytest.fixture
def bvh_clip(tmp_path):
    p = tmp_path / "chain.bvh"
    p.write_text(_bvh_text())
    return read_clip(p)


class _LayoutRequests(QObject):
    """Counts LayoutRequest events reaching the watched widgets."""

    def __init__(self, widgets):
        super().__init__()
        self.count = 0
        for w in widgets:
            w.installEventFilter(self)

    def eventFilter(self, obj, ev):  # noqa: N802 - Qt API
        if ev.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _ticks(win, qapp, times) -> None:
    for t in times:
        win.doc.set_time(float(t))
        qapp.processEvents()


@pytest.mark.parametrize("rig", ["bvh", "biped"])
def test_a_playback_frame_does_not_re_lay_out_the_window(win, qapp, bvh_clip, rig):
    """The readout, the 3D view's note and its gimbal label change text on every frame: none may
    invalidate the layouts above them (the old code re-laid out the main window and its docks on
    every frame, ~2 ms of a 16 ms frame)."""
    clip = bvh_clip if rig == "bvh" else biped_clip(120, 30.0)
    win.doc.load(clip, None)
    win.doc.select_paths([clip.tracks[1].path if rig == "bvh" else DEEP_BIPED_BONE])
    _ticks(win, qapp, [0.0])
    text0 = win.timeline.readout.full_text()
    watched = [win, win.centralWidget(), win.timeline, win.gizmo, win.docks["3D view"]]
    counter = _LayoutRequests(watched)
    _ticks(win, qapp, np.linspace(0.05, 1.3, 12))
    assert win.timeline.readout.full_text() != text0  # the readout did change
    assert "1.300 s" in win.timeline.readout.full_text()
    assert counter.count == 0
    # the readout still fills the bar's width and elides there
    assert win.timeline.readout.width() == win.timeline.width()


@pytest.mark.parametrize("rate, interval", [(25.0, 36), (30.0, 30), (60.0, 16), (120.0, 16)])
def test_playback_ticks_about_once_per_frame_of_the_clip_up_to_60_per_second(win, rate, interval):
    """A 25 fps clip ticked at 60 Hz drew 2.4 poses per frame of its own (the old timer: 16 ms for
    every clip); now 10 % above the clip's rate (a late tick is dropped, the rate stays)."""
    clip = biped_clip(60, rate)
    win.doc.load(clip, None)
    tl = win.timeline
    tl.set_playing(True)
    try:
        assert tl._timer.interval() == interval
    finally:
        tl.set_playing(False)


def test_one_pose_sample_per_frame_is_shared_by_the_readout_and_the_3d_view(win, qapp, bvh_clip, monkeypatch):
    """The readout, the tripods and the rings show the primary track at the current time: one
    ``display.sample_track`` per frame for all of them (the old code: two, plus two ``played``), and
    what each shows is exactly what the engine plays there."""
    from curveeditor.app.view3d import gizmo as gizmo_view
    from curveeditor.engine import display
    from curveeditor.engine.clip import played

    doc = win.doc
    doc.load(bvh_clip, None)
    path = bvh_clip.tracks[1].path
    doc.select_paths([path])
    _ticks(win, qapp, [0.0])
    calls = {"sample_track": 0, "played": 0}
    real_sample, real_played = display.sample_track, gizmo_view.played

    def counting_sample(*a, **k):
        calls["sample_track"] += 1
        return real_sample(*a, **k)

    def counting_played(*a, **k):
        calls["played"] += 1
        return real_played(*a, **k)

    monkeypatch.setattr(display, "sample_track", counting_sample)
    monkeypatch.setattr(gizmo_view, "played", counting_played)
    times = np.linspace(0.1, 1.2, 8)
    track = doc.clip.track(path)
    for t in times:
        _ticks(win, qapp, [t])
        rot = win.gizmo.tripod_rotation()
        want = display.rotation_matrices(display.unity_to_gl_quat(played(track, np.array([t]))))[0]
        assert np.array_equal(rot, want)
        alone = real_sample(track, np.array([t]))
        assert win.gizmo._gimbal_proximity == float(np.clip(alone.gimbal[0], 0.0, 1.0))
        e = alone.euler[0]
        assert f"Euler ({e[0]:.2f}, {e[1]:.2f}, {e[2]:.2f})°" in win.timeline.readout.full_text()
    assert calls == {"sample_track": len(times), "played": 0}


def test_the_original_tripod_is_drawn_only_where_its_pose_differs_from_the_shown_one(win, qapp, bvh_clip):
    """Unedited, the faint "original" tripod had the main tripod's rotation and lay under it (4 GL
    items per frame for nothing); after an edit it shows the original's pose. (Tripod view: a clip
    without a skeleton; in the character view the ghost skeleton shows the original, below.)"""
    from curveeditor.engine import display
    from curveeditor.engine.clip import Clip, played

    doc = win.doc
    doc.load(Clip(bvh_clip.name, bvh_clip.frame_rate, bvh_clip.tracks), None)
    path = bvh_clip.tracks[1].path
    doc.select_paths([path])
    _ticks(win, qapp, [0.4])
    ghost = win.gizmo.original_tripod.group
    assert not ghost.visible() and win.gizmo.main_tripod.group.visible()
    tr = doc.clip.track(path)
    edited = tr.with_curve(tr.curve.with_keys(value=tr.curve.value + np.array([30.0, 0.0, 0.0])))
    doc.apply_clip(doc.clip.with_track(edited), "test edit")
    _ticks(win, qapp, [0.5])
    assert ghost.visible()
    m = np.array(ghost.transform().data()).reshape(4, 4).T[:3, :3]
    want = display.rotation_matrices(display.unity_to_gl_quat(played(tr, np.array([0.5]))))[0]
    np.testing.assert_allclose(m, want, atol=1e-6)  # QMatrix4x4 holds floats
    doc.undo_stack.undo()
    _ticks(win, qapp, [0.6])
    assert not ghost.visible()
    # the character view: no original tripod; the edited pose's original is the ghost skeleton
    doc.load(bvh_clip, None)
    doc.select_paths([path])
    _ticks(win, qapp, [0.4])
    tr = doc.clip.track(path)
    edited = tr.with_curve(tr.curve.with_keys(value=tr.curve.value + np.array([30.0, 0.0, 0.0])))
    doc.apply_clip(doc.clip.with_track(edited), "test edit")
    _ticks(win, qapp, [0.5])
    assert not ghost.visible() and win.tools.skeleton.ghost_original.visible()


def test_the_skeleton_drawn_at_each_frame_is_the_engines_pose(win, qapp, bvh_clip):
    """Every playback frame draws exactly ``engine.skeleton.pose`` at the current time (mirrored
    into GL, centred and scaled), bones included."""
    from curveeditor.engine.skeleton import pose

    doc = win.doc
    doc.load(bvh_clip, None)
    doc.select_paths([bvh_clip.tracks[2].path])
    layer = win.tools.skeleton
    for t in np.linspace(0.0, 1.4, 6):
        _ticks(win, qapp, [t])
        p = pose(layer.skeleton, doc.clip, [t])
        want = layer._to_scene(np.concatenate([p.positions[0], p.tips[0]]))
        assert np.array_equal(layer._gl_points, want)
        drawn = np.asarray(layer.bones.pos, dtype=np.float64)
        assert np.array_equal(drawn, want[layer._segments.reshape(-1)].astype(np.float32))
