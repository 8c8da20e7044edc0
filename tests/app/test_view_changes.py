"""What a zoom / pan step of the graphs re-does on the handling side (view range -> curves, handles,
extrapolation layer), and that the curves show the points pyqtgraph's own path shows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from curveeditor.app.graphs.view_curve import ViewCurve, peak_downsample
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.tangents import make_curve
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("view_changes"))


def _clip(n_keys: int = 400, rate: float = 60.0) -> Clip:
    t = np.arange(n_keys) / rate
    e = np.c_[40 * np.sin(3 * t), 90 * np.sin(1.3 * t) + 10 * np.sin(17 * t), 25 * np.cos(2 * t)]
    return Clip("wave", rate, [RotationTrack("Hips/Spine", "euler", make_curve(t, e))])


def test_peak_downsample_is_pyqtgraphs_peak_reduction():
    rng = np.random.default_rng(3)
    for n in (9, 400, 5929):
        x = np.sort(rng.random(n))
        y = rng.standard_normal(n) * 40
        y[rng.random(n) < 0.01] = np.nan  # NaNs propagate into their bin as numpy's max / min do
        for ds in (2, 3, 5, 12, 13, 64):
            m = n // ds
            if m == 0:
                continue
            xd, yd = peak_downsample(x, y, ds)
            ref_x = np.repeat(x[ds // 2 : ds // 2 + m * ds : ds], 2)
            bins = y[: m * ds].reshape(m, ds)
            ref_y = np.c_[bins.max(axis=1), bins.min(axis=1)].reshape(-1)
            np.testing.assert_array_equal(xd, ref_x)
            np.testing.assert_array_equal(yd, ref_y)


def _plot_pair(qtbot):
    """A plot set up as the graphs' strips (clip to view, peak auto-downsampling) holding a
    :class:`ViewCurve` and a plain ``PlotDataItem`` of the same 12,000 samples."""
    w = pg.PlotWidget()
    w.resize(800, 300)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    p = w.getPlotItem()
    p.setClipToView(True)
    p.setDownsampling(auto=True, mode="peak")
    x = np.linspace(0.0, 12.0, 12_000)
    y = 50 * np.sin(2.1 * x) + 8 * np.sin(37 * x)
    lean = ViewCurve(skipFiniteCheck=True, autoDownsampleFactor=1.0, pen="r")
    plain = pg.PlotDataItem(skipFiniteCheck=True, autoDownsampleFactor=1.0, pen="b")
    for item in (lean, plain):
        p.addItem(item)
        item.setData(x, y)
    p.disableAutoRange()
    p._test_widget = w  # the widget lives as long as the plot is used
    return p, lean, plain


def test_a_view_curve_shows_the_points_pyqtgraph_shows_after_zooms_and_pans(qtbot):
    p, lean, plain = _plot_pair(qtbot)
    vb = p.getViewBox()
    steps = [
        lambda: p.setXRange(4.0, 8.0, padding=0),
        lambda: vb.scaleBy(x=0.743, y=0.743, center=pg.Point(6.0, 0.0)),
        lambda: vb.scaleBy(x=1 / 0.743, y=1.0, center=pg.Point(6.0, 0.0)),
        lambda: vb.translateBy(x=0.37),
        lambda: vb.translateBy(x=-2.5),
        lambda: p.setXRange(-3.0, 20.0, padding=0),  # wider than the data: nothing clipped
        lambda: p.setXRange(5.0, 5.05, padding=0),  # a few samples, no downsampling
        lambda: p.setYRange(-10, 10, padding=0),  # value range only
    ]
    for step in steps:
        step()
        xs, ys = lean.curve.getData()
        xr, yr = plain.curve.getData()
        np.testing.assert_array_equal(xs, xr)
        np.testing.assert_array_equal(ys, yr)
        # the bounds handed to the curve are the ones pyqtgraph computes from its points
        seeded = (lean.curve.dataBounds(0), lean.curve.dataBounds(1))
        lean.curve.invalidateBounds()
        assert seeded == (lean.curve.dataBounds(0), lean.curve.dataBounds(1))
    assert lean.lean_updates >= len(steps) - 2  # the lean path did the work, not pyqtgraph's
    # a value-range change shows the same points: nothing re-set
    before = lean.lean_updates
    data = lean.curve.getData()
    p.setYRange(-30, 30, padding=0)
    assert lean.lean_updates == before and lean.curve.getData()[0] is data[0]


def test_a_view_curve_hands_extreme_value_zooms_to_pyqtgraphs_range_limit(qtbot):
    """Zoomed in on Y far enough that pyqtgraph clips the curve's values (its dynamic range limit,
    against Qt's coordinate overflow), the lean path steps aside: the same clipped points."""
    p, lean, plain = _plot_pair(qtbot)
    p.setXRange(4.0, 8.0, padding=0)
    p.setYRange(0.0, 1e-6, padding=0)
    np.testing.assert_array_equal(lean.curve.getData()[1], plain.curve.getData()[1])
    assert lean.curve.getData()[1].max() < 60  # clipped (the data reach 58, limit 1e6 x 1e-6)
    p.setYRange(-60, 60, padding=0)
    np.testing.assert_array_equal(lean.curve.getData()[1], plain.curve.getData()[1])


def test_a_pan_leaves_the_tangent_handles_and_a_zoom_re_places_them(win, qtbot):
    """Unweighted handles are a fixed number of pixels long: a zoom moves their ends, a pan (the same
    scale) does not, so a pan step no longer re-places them (~0.3 ms a step on a mocap clip)."""
    doc, graphs = win.doc, win.graphs
    clip = _clip()
    doc.load(clip, None)
    path = clip.tracks[0].path
    doc.select_paths([path])
    doc.select_keys({path: {200}})
    plot = graphs.euler_plots[0]
    plot.setXRange(2.0, 5.0, padding=0)
    qtbot.wait(20)
    timer = graphs.marks._handle_timer  # re-places the handles, coalesced to one per event-loop turn
    before = list(graphs.handle_points)
    vb = plot.getViewBox()
    for _ in range(3):
        vb.translateBy(x=0.05)
        assert not timer.isActive()
        qtbot.wait(5)
    assert graphs.handle_points == before
    vb.scaleBy(x=0.8, y=0.8)
    assert timer.isActive()
    qtbot.wait(5)
    moved = {(p[1], p[2], p[3], p[4]): p[5:] for p in graphs.handle_points}
    old = {(p[1], p[2], p[3], p[4]): p[5:] for p in before}
    assert moved.keys() == old.keys() and moved != old
    # the re-placed handles are what a fresh placement gives at the new scale
    graphs.marks.update_handles()
    assert {(p[1], p[2], p[3], p[4]): p[5:] for p in graphs.handle_points} == moved


def test_the_extrapolation_layer_skips_view_steps_inside_the_keys_and_draws_past_them(win, qtbot):
    layer = win.tools.infinity_layer
    doc, graphs = win.doc, win.graphs
    clip = _clip()
    doc.load(clip, None)
    doc.select_paths([clip.tracks[0].path])
    plot = graphs.euler_plots[0]
    plot.setXRange(2.0, 4.0, padding=0)
    qtbot.wait(20)
    redraws = layer.redraws
    vb = plot.getViewBox()
    for _ in range(4):
        vb.translateBy(x=0.1)
        vb.scaleBy(x=0.9, y=1.0)
        qtbot.wait(5)
    assert layer.redraws == redraws  # nothing past the ends to draw: no redraw, no timer event
    assert not [it for _p, it in layer.items]
    end = clip.tracks[0].curve.end
    plot.setXRange(end - 1.0, end + 1.0, padding=0)  # past the last key: the held pose is drawn
    qtbot.wait(20)
    assert layer.redraws > redraws
    drawn = [it for _p, it in layer.items]
    assert drawn and all(it.getData()[0].max() >= end + 0.5 for it in drawn)


def _wheel(widget, pos, delta: int) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    ev = QWheelEvent(
        QPointF(pos),
        QPointF(widget.mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, delta),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, ev)


def test_a_wheel_turn_over_a_plot_zooms_as_qts_scene_dispatch_does(win, qtbot):
    """The wheel goes straight to the view box under the mouse (no scene item look-up): the same
    ranges in every plot as Qt's own dispatch gives; over a value axis only that axis zooms."""
    doc, graphs = win.doc, win.graphs
    clip = _clip()
    doc.load(clip, None)
    doc.select_paths([clip.tracks[0].path])
    first = graphs.strips[0]
    glw, vp = graphs.glw, graphs.glw.viewport()
    start = [(s.vb.viewRange()[0][:], s.vb.viewRange()[1][:]) for s in graphs.strips]

    def restore():
        for s, (xr, yr) in zip(graphs.strips, start, strict=True):
            s.vb.setRange(xRange=xr, yRange=yr, padding=0)

    def turns(pos):
        for delta in (120, 120, -240, 360):
            _wheel(vp, pos, delta)
        return [tuple(map(tuple, s.vb.viewRange())) for s in graphs.strips]

    inside = glw.mapFromScene(first.vb.mapViewToScene(first.vb.viewRect().center()))
    axis = glw.mapFromScene(first.plot.getAxis("left").sceneBoundingRect().center())
    delivered = graphs.wheel.delivered
    ours = turns(inside)
    assert graphs.wheel.delivered == delivered + 4
    restore()
    ours_axis = turns(axis)
    assert graphs.wheel.delivered == delivered + 4  # axes: Qt's path
    restore()
    vp.removeEventFilter(graphs.wheel)
    try:
        qts = turns(inside)
        restore()
        qts_axis = turns(axis)
        restore()
    finally:
        vp.installEventFilter(graphs.wheel)
    np.testing.assert_allclose(ours, qts, rtol=1e-12)  # (restoring a range may move its last bit)
    np.testing.assert_allclose(ours_axis, qts_axis, rtol=1e-12)
    assert ours[0] != tuple(map(tuple, start[0]))  # it zoomed, X linked across the plots
    assert all(r[0] == ours[0][0] for r in ours)
    assert ours_axis[0][0] == tuple(start[0][0]) and ours_axis[0][1] != tuple(start[0][1])


def test_linked_plots_take_the_zoomed_plots_time_range_exactly(win, qtbot, monkeypatch):
    """A zoom / pan on any plot reaches every plot with the same time range, copied (the plots share
    their left edge and width) instead of lined up through screen rectangles per linked plot."""
    doc, graphs = win.doc, win.graphs
    clip = _clip()
    doc.load(clip, None)
    doc.select_paths([clip.tracks[0].path])
    qtbot.wait(10)
    lined_up = []
    real = pg.ViewBox.screenGeometry
    monkeypatch.setattr(pg.ViewBox, "screenGeometry", lambda self: (lined_up.append(self), real(self))[1])
    for s in (graphs.strips[0], graphs.strips[2], graphs.strips[-1]):
        s.vb.scaleBy(x=0.8, y=0.9)
        s.vb.translateBy(x=0.07)
        xr = s.vb.viewRange()[0]
        assert all(o.vb.viewRange()[0] == xr for o in graphs.strips)
    assert lined_up == []
    y_ranges = [o.vb.viewRange()[1] for o in graphs.strips]
    assert len({tuple(r) for r in y_ranges}) == len(y_ranges)  # values stay per plot
