"""What one drag / zoom / pan step of the graphs re-does (counted, not timed), and that what is
drawn stays what a full recompute draws."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from curveeditor.engine import display, unwrap
from curveeditor.engine.clip import Clip, RotationTrack, key_quaternions
from curveeditor.engine.rotations import euler_to_quat
from curveeditor.engine.tangents import make_curve
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("steps"))


def _quat_clip(n_keys: int = 40) -> Clip:
    """One quaternion track whose Euler decomposition wraps (a spin past 180 degrees about Y)."""
    t = np.arange(n_keys) / 30.0
    e = np.c_[30 * np.sin(3 * t), 400 * t / t[-1] - 100, 20 * np.cos(2 * t)]
    q = euler_to_quat(e, "zxy")
    q[1::2] *= -1.0  # keys on alternating hemispheres: the display must make them continuous
    tr = RotationTrack("Root/Spin", "quaternion", make_curve(t, q))
    return Clip("quat", 30.0, [tr])


def _full_unwrap(tr: RotationTrack) -> np.ndarray:
    """The keys' display Euler values computed from scratch (what ``display.key_euler`` does)."""
    keys = display.hemisphere_continuous(key_quaternions(tr).reshape(-1, 4))
    return np.asarray(unwrap.continuous_euler(keys, tr.order), dtype=np.float64).reshape(-1, 3)


def _mouse(widget, etype, pos: QPoint, button, buttons):
    ev = QMouseEvent(
        etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, ev)


def test_key_euler_is_computed_once_per_track_and_equals_a_fresh_unwrap():
    tr = _quat_clip().tracks[0]
    fresh = _full_unwrap(tr)
    a = display.key_euler(tr)
    np.testing.assert_array_equal(a, fresh)
    a[:] = 0.0  # the caller's copy: the next call is not affected
    b = display.key_euler(tr)
    np.testing.assert_array_equal(b, fresh)
    # a new track object with other keys is unwrapped again, not served from the memo
    moved = tr.with_curve(tr.curve.with_keys(value=tr.curve.value[::-1].copy()))
    c = display.key_euler(moved)
    np.testing.assert_array_equal(c, _full_unwrap(moved))


def test_quaternion_key_drag_step_unwraps_the_keys_once(win, qtbot, monkeypatch):
    """A drag step of a quaternion track's key asked for the keys' continuous Euler values three times
    (the edit on the previous track, the key markers and the samples on the new one)."""
    doc, graphs = win.doc, win.graphs
    clip = _quat_clip()
    doc.load(clip, None)
    tr = clip.tracks[0]
    doc.select_paths([tr.path])
    i = 20
    doc.select_keys({tr.path: {i}})
    plot = graphs.euler_plots[0]
    kv = graphs.cache.keys(tr)[1]
    t0, v0 = float(tr.times[i]), float(kv[i, 0])
    plot.setXRange(t0 - 0.5, t0 + 0.5, padding=0)
    plot.setYRange(v0 - 20, v0 + 20, padding=0)
    qtbot.wait(20)
    calls = []
    real = unwrap.continuous_euler
    monkeypatch.setattr(unwrap, "continuous_euler", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    vp = graphs.glw.viewport()
    start = graphs.glw.mapFromScene(plot.getViewBox().mapViewToScene(QPointF(t0, v0)))
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    steps = 0
    for k in range(1, 7):
        qtbot.wait(12)  # pyqtgraph drops mouse moves closer than 10 ms apart
        before = len(calls)
        _mouse(vp, QEvent.Type.MouseMove, start + QPoint(0, -5 * k), none, left)
        if doc.in_live_edit() and len(calls) > before:
            steps += 1
            assert len(calls) - before == 1, "one unwrap of the keys per drag step"
    _mouse(vp, QEvent.Type.MouseButtonRelease, start + QPoint(0, -30), left, none)
    assert steps >= 3, "the drag must have produced live steps"
    new = doc.clip.track(tr.path)
    assert new is not tr
    # what is drawn at the keys is the full recompute of the edited track
    np.testing.assert_array_equal(graphs.display_keys(tr.path)[1], _full_unwrap(new))
    doc.undo_stack.setClean()


def _painted(qtbot, graphs) -> None:
    """Let the views apply their ranges and paint (as the event loop does after a mouse step)."""
    for s in graphs.strips:
        s.vb.prepareForPaint()
    graphs.glw.viewport().repaint()
    qtbot.wait(5)


def test_time_pan_repaints_only_the_time_axis_and_a_zoom_also_its_plots_value_axis(win, qtbot, monkeypatch):
    """A pan in time moves every strip (linked X) but no value range: the strips' value axes keep
    their device pixmaps, only the time axis is painted again; a zoom on one plot adds that plot's
    value axis, not the others'."""
    from curveeditor.app.graphs.strips import FastAxis

    doc, graphs = win.doc, win.graphs
    clip = _quat_clip()
    doc.load(clip, None)
    doc.select_paths([clip.tracks[0].path])
    qtbot.wait(20)
    painted = []
    real = FastAxis._layout  # what FastAxis.paint draws (Qt caches the paint override itself)
    monkeypatch.setattr(FastAxis, "_layout", lambda self, *a: (painted.append(self), real(self, *a))[1])
    _painted(qtbot, graphs)
    painted.clear()
    first = graphs.strips[0]
    x0, x1 = first.vb.viewRange()[0]
    first.plot.setXRange(x0 + 0.1, x1 + 0.1, padding=0)
    _painted(qtbot, graphs)
    time_axis = graphs.strips[-1].time_axis
    assert painted and all(a is time_axis for a in painted)
    painted.clear()
    first.vb.scaleBy((0.8, 0.8))
    _painted(qtbot, graphs)
    assert {id(a) for a in painted} == {id(time_axis), id(first.plot.getAxis("left"))}
