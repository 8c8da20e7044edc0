"""The graphs' paint-side shortcuts (issue 9 speed) draw the pixels of the plain paths they replace:
curves as polylines, tangent handles as lines, the grid, key markers, axes; items that draw nothing
are hidden so Qt skips them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402

from curveeditor.app.graphs import items as gi  # noqa: E402
from curveeditor.app.graphs.panel import GraphPanel  # noqa: E402
from curveeditor.app.model.document import ClipDocument  # noqa: E402
from curveeditor.engine.clip import Clip, RotationTrack  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402

#: (x range, y range) views: wide, zoomed on a few keys, fractional edges, a tiny range
VIEWS = [
    ((0.0, 4.0), (-40.0, 60.0)),
    ((1.1, 1.6), (-5.0, 25.0)),
    ((0.1234, 3.77), (-13.3, 41.7)),
    ((2.0, 2.01), (3.3, 3.31)),
]


def _panel(qtbot, n_tracks=1):
    t = np.arange(120) / 30.0
    tracks = []
    for k in range(n_tracks):
        e = np.column_stack([35 * np.sin(t + k) + 15, 20 * np.cos(2 * t + k), 10 * t - k])
        tracks.append(RotationTrack(f"Root/Bone{k}", "euler", make_curve(t, e)))
    doc = ClipDocument()
    doc.load(Clip("c", 30.0, tracks), None)
    doc.select_paths([tr.path for tr in tracks])
    doc.select_keys({"Root/Bone0": {40, 41}})
    g = GraphPanel(doc)
    qtbot.addWidget(g)
    g.resize(900, 700)
    g.show()
    qtbot.waitExposed(g)
    return doc, g


def _render(g) -> QImage:
    img = QImage(g.glw.size(), QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    g.glw.render(p)
    p.end()
    return img


def _set_view(g, xr, yr):
    for s in g.strips:
        if s.is_euler:
            s.plot.setYRange(*yr, padding=0)
    g.strips[0].plot.setXRange(*xr, padding=0)


def _refresh(g) -> None:
    """Every item drops what it keeps per view (bounds, end points) and repaints."""
    for it in g.glw.scene().items():
        if hasattr(it, "viewTransformChanged"):
            it.viewTransformChanged()
        it.update()


def _shots_with_and_without(g, monkeypatch, patches):
    """Images of every view drawn with the shortcut and with ``patches`` ((owner, name, value))
    applied (the plain path)."""
    out = []
    for xr, yr in VIEWS:
        _set_view(g, xr, yr)
        fast = _render(g)
        with monkeypatch.context() as m:
            for owner, name, value in patches:
                m.setattr(owner, name, value)
            _refresh(g)
            plain = _render(g)
        _refresh(g)
        out.append((fast, plain))
    return out


def test_handle_lines_as_lines_paint_the_pixels_of_their_path(qtbot, monkeypatch):
    """Tangent handles (connect="pairs") drawn as QLineFs give the pixels of pyqtgraph's path."""
    _doc, g = _panel(qtbot)
    lines = [s.handle_line for s in g.strips if s.is_euler]
    assert all(isinstance(h, gi.SteadyCurve) for h in lines)
    assert sum(len(h._pair_lines() or ()) for h in lines) >= 6  # two keys, two handles each, 3 plots
    patches = [(gi.SteadyCurve, "_pair_lines", lambda self: None)]
    for fast, plain in _shots_with_and_without(g, monkeypatch, patches):
        assert fast == plain


def test_view_curve_paint_is_pyqtgraphs_paint(qtbot, monkeypatch):
    """SteadyCurve's short paint (one drawPath) and its bounds give pyqtgraph's pixels."""
    import pyqtgraph as pg

    _doc, g = _panel(qtbot, n_tracks=1)
    patches = [
        (gi.SteadyCurve, "paint", pg.PlotCurveItem.paint),
        (gi.SteadyCurve, "boundingRect", pg.PlotCurveItem.boundingRect),
        (gi.SteadyCurve, "viewTransformChanged", pg.PlotCurveItem.viewTransformChanged),
    ]
    for fast, plain in _shots_with_and_without(g, monkeypatch, patches):
        assert fast == plain


def test_view_curve_bounds_are_pyqtgraphs_bounds(qtbot):
    """The kept data bounds equal pyqtgraph's dataBounds, NaNs ignored, and follow new data."""
    _doc, g = _panel(qtbot)
    s = g.strips[0]
    c = gi.SteadyCurve()
    s.plot.addItem(c)
    for x, y in [
        (np.linspace(0, 4, 50), np.sin(np.linspace(0, 4, 50))),
        (np.array([1.0, 2.0, np.nan, 3.0]), np.array([5.0, np.nan, -2.0, 1.0])),
        (np.array([0.0, 1.0]), np.array([np.inf, 1.0])),
    ]:
        c.setData(x, y)
        xb, yb = c.dataBounds(0), c.dataBounds(1)
        d = c._data_rect()
        assert d == (xb[0], xb[1], yb[0], yb[1])
        br = c.boundingRect()
        assert br.left() < xb[0] and br.right() > xb[1]
    c.setData(np.array([np.nan]), np.array([np.nan]))
    assert c._data_rect() is None and c.boundingRect().isNull()


def test_cursor_bounds_are_pyqtgraphs_bounds(qtbot):
    """CursorLine's bounds and end points (from the view box's rect and pixel size) are pyqtgraph's
    InfiniteLine ones (through viewRect / pixelVectors), for cursors inside and outside the view."""
    import pyqtgraph as pg

    doc, g = _panel(qtbot)
    n = 0
    for xr, yr in VIEWS:
        _set_view(g, xr, yr)
        for t in (0.0, 1.3, 2.005, 3.9):
            doc.set_time(t)
            for s in g.strips:
                c = s.cursor
                assert isinstance(c, gi.CursorLine)
                c.viewTransformChanged()
                mine = c.boundingRect()
                ends = tuple(c._endPoints)
                c.viewTransformChanged()
                theirs = pg.InfiniteLine._computeBoundingRect(c)
                for a, b in [(mine.left(), theirs.left()), (mine.right(), theirs.right())]:
                    assert a == pytest.approx(b, rel=1e-9, abs=1e-9 * abs(mine.width()))
                for a, b in [(mine.top(), theirs.top()), (mine.bottom(), theirs.bottom())]:
                    assert a == pytest.approx(b, rel=1e-6, abs=1e-12)
                assert ends == pytest.approx(tuple(c._endPoints), rel=1e-9)
                n += 1
    assert n == len(VIEWS) * 4 * len(g.strips)


def test_cursor_paints_pyqtgraphs_pixels(qtbot, monkeypatch):
    import pyqtgraph as pg

    doc, g = _panel(qtbot)
    doc.set_time(1.3)
    patches = [(gi.CursorLine, "_computeBoundingRect", pg.InfiniteLine._computeBoundingRect)]
    for fast, plain in _shots_with_and_without(g, monkeypatch, patches):
        assert fast == plain


def test_few_key_markers_drawn_whole_paint_as_the_visible_slice(qtbot, monkeypatch):
    """Marker items of a few keys (selection, handles) are drawn whole, without the view look-up:
    the pixels equal the visible-slice paint, with keys inside, across and outside the view."""
    _doc, g = _panel(qtbot, n_tracks=3)
    small = [it for s in g.strips for it in (s.selected, s.handle_pts) if it.isVisible()]
    assert len(small) >= 6 and all(it._x.size <= gi.KeyMarkers.WHOLE for it in small)
    for fast, plain in _shots_with_and_without(g, monkeypatch, [(gi.KeyMarkers, "WHOLE", -1)]):
        assert fast == plain


def test_items_that_draw_nothing_are_hidden(qtbot):
    """Qt skips hidden items and asks no-content ones for neither bounds nor paint: the view boxes'
    and layout cells' pen-less border rects are hidden, plots and the layout have no contents, an
    empty handle line is hidden (shown again with data); the picture is the same as with them all
    drawn."""
    from PySide6.QtWidgets import QGraphicsItem

    doc, g = _panel(qtbot)
    no_contents = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
    speed = next(s for s in g.strips if not s.is_euler)
    assert not speed.handle_line.isVisible()  # no handles in the speed strip
    assert all(s.handle_line.isVisible() for s in g.strips if s.is_euler)  # two selected keys
    borders = []
    for s in g.strips:
        assert not s.vb.borderRect.isVisible() and s.plot.flags() & no_contents
        borders.append(g.glw.ci.itemBorders[s.plot])
    assert g.glw.ci.flags() & no_contents and not any(b.isVisible() for b in borders)
    assert not s.vb.flags() & no_contents  # it clips: Qt culls its subtree by its own bounds
    hidden = _render(g)
    for s in g.strips:
        s.vb.borderRect.setVisible(True)
        s.plot.setFlag(no_contents, False)
    for b in borders:
        b.setVisible(True)
    g.glw.ci.setFlag(no_contents, False)
    assert _render(g) == hidden
    doc.select_keys({})
    qtbot.waitUntil(lambda: not any(s.handle_line.isVisible() for s in g.strips))
    doc.select_keys({"Root/Bone0": {40}})
    qtbot.waitUntil(lambda: all(s.handle_line.isVisible() for s in g.strips if s.is_euler))
