"""How the graphs draw (issue 9 speed work): tick labels inside their axis, 2-px primary curves
from 1-px strokes, key markers painting only the exposed band the same as a full paint."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF, QRectF  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter, QPicture  # noqa: E402

from curveeditor.app.graphs.panel import GraphPanel  # noqa: E402
from curveeditor.app.model.document import ClipDocument  # noqa: E402
from curveeditor.engine.clip import Clip, RotationTrack  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402


def _panel(qtbot):
    t = np.arange(120) / 30.0
    e = np.column_stack([35 * np.sin(t) + 15, 20 * np.cos(2 * t), 10 * t])
    doc = ClipDocument()
    doc.load(Clip("c", 30.0, [RotationTrack("Root/Bone", "euler", make_curve(t, e))]), None)
    doc.select_paths(["Root/Bone"])
    g = GraphPanel(doc)
    qtbot.addWidget(g)
    g.resize(900, 700)
    g.show()
    qtbot.waitExposed(g)
    return doc, g


def test_tick_labels_stay_inside_their_axis(qtbot):
    """Regression: a label on the axis' end (-20 on a -20..50 range) overhung into the strip below
    and was drawn cut in half; now labels that do not fit inside the axis are left out."""
    _doc, g = _panel(qtbot)
    for s in g.strips:
        if s.is_euler:
            s.plot.setYRange(-20, 50, padding=0)
    g.glw.repaint()
    checked = 0
    for s in g.strips:
        ax = s.plot.getAxis("left")
        own = ax.mapRectFromParent(ax.geometry())
        pic = QPicture()
        p = QPainter(pic)
        specs = ax.generateDrawSpecs(p)
        p.end()
        assert specs is not None
        for rect, _flags, text in specs[2]:
            assert own.top() - 0.5 <= rect.top() and rect.bottom() <= own.bottom() + 0.5, (s.role, text)
            checked += 1
    assert checked > 10


def test_primary_curve_is_two_pixels_wide(qtbot):
    """The primary's 1.6-px pen is drawn as 1-px strokes one pixel apart: a horizontal stretch is a
    2-px band of the curve colour (and nothing is drawn by the slow wide-pen path)."""
    doc, g = _panel(qtbot)
    curve = g.items["Root/Bone"].curves[0][0]
    assert type(curve.curve).__name__ == "BoldCurve"
    x = np.linspace(0, 4, 400)
    curve.setData(x, np.full_like(x, 10.0))
    s = g.strips[0]
    s.plot.setYRange(0, 20, padding=0)
    s.plot.setXRange(0, 4, padding=0)
    img = QImage(g.glw.size(), QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    g.glw.render(p)
    p.end()
    colour = curve.opts["pen"].color()
    at = g.glw.mapFromScene(s.vb.mapViewToScene(QPointF(2.0, 10.0)))
    col_x, y10 = at.x(), at.y()
    rows = [y for y in range(y10 - 4, y10 + 5) if QColor(img.pixel(col_x, y)).rgb() == colour.rgb()]
    assert len(rows) == 2 and rows[1] - rows[0] == 1, rows


def test_key_markers_exposed_band_paints_as_a_full_paint(qtbot):
    """Key markers paint only the keys in the exposed rect; the pixels there equal a full paint's."""
    doc, g = _panel(qtbot)
    keys = g.items["Root/Bone"].keys[0][0]
    g.glw.repaint()
    full = g.glw.grab().toImage()
    band = QRectF(300, 0, 40, g.glw.height())
    g.glw.viewport().repaint(band.toRect())
    part = g.glw.grab().toImage()
    assert keys.getData()[0].size == 120
    for x in range(300, 340):
        for y in range(0, g.glw.height(), 3):
            assert full.pixel(x, y) == part.pixel(x, y)


def test_fast_axis_draws_what_pyqtgraph_draws(qtbot):
    """FastAxis' own generateDrawSpecs gives pyqtgraph's axis line, ticks and labels exactly, for
    seconds and frames, wide and tiny ranges, on shown and hidden axes."""
    import pyqtgraph as pg

    doc, g = _panel(qtbot)

    def specs(ax, fn):
        pic = QPicture()
        p = QPainter(pic)
        a, ticks, texts = fn(p)
        p.end()
        return (
            (a[1].x(), a[1].y(), a[2].x(), a[2].y()),
            [(pn.color().rgba(), q1.x(), q1.y(), q2.x(), q2.y()) for pn, q1, q2 in ticks],
            [(r.x(), r.y(), r.width(), r.height(), int(f), s) for r, f, s in texts],
        )

    n = 0
    for lo, hi in [(-20, 50), (0, 1e-3), (-1000, 3000), (3.3, 3.31)]:
        for frames in (False, True):
            g.set_time_in_frames(frames)
            for s in g.strips:
                s.plot.setYRange(lo, hi, padding=0)
            g.strips[0].plot.setXRange(lo / 10, hi / 10 + 0.01, padding=0)
            g.glw.repaint()
            for s in g.strips:
                for name in ("left", "bottom"):
                    ax = s.plot.getAxis(name)
                    mine = specs(ax, ax.generateDrawSpecs)
                    assert mine == specs(ax, lambda p, ax=ax: pg.AxisItem.generateDrawSpecs(ax, p))
                    n += len(mine[2])
    assert n > 100


def test_fast_axis_paints_the_pixels_of_pyqtgraphs_picture(qtbot):
    """FastAxis paints straight onto the painter (ticks of a level in one drawLines) the pixels that
    pyqtgraph's paint (the specs recorded in a QPicture, a drawLine per tick, then replayed) gives,
    for seconds and frames, wide and tiny ranges, left and bottom axes."""
    import pyqtgraph as pg

    _doc, g = _panel(qtbot)

    def image(ax, paint):
        br = ax.boundingRect()
        img = QImage(int(br.width()) + 2, int(br.height()) + 2, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0)
        ax.picture = None
        p = QPainter(img)
        paint(ax, p, None, None)
        p.end()
        return img

    n = 0
    for lo, hi in [(-20, 50), (0, 1e-3), (-1000, 3000), (3.3, 3.31)]:
        for frames in (False, True):
            g.set_time_in_frames(frames)
            for s in g.strips:
                s.plot.setYRange(lo, hi, padding=0)
            g.strips[0].plot.setXRange(lo / 10, hi / 10 + 0.01, padding=0)
            g.glw.repaint()
            for s in (g.strips[0], g.strips[-1]):
                for name in ("left", "bottom"):
                    ax = s.plot.getAxis(name)
                    if not ax.isVisible():
                        continue
                    mine = image(ax, type(ax).paint)
                    blank = QImage(mine.size(), mine.format())
                    blank.fill(0)
                    assert mine != blank  # ticks and labels drawn
                    assert mine == image(ax, pg.AxisItem.paint), (lo, hi, frames, name)
                    n += 1
    assert n >= 16


def test_grid_rects_paint_the_pixels_of_the_grid_lines(qtbot, monkeypatch):
    """The grid drawn as 1-px rects (one drawRects of QRects per level, the fast path at device pixel
    ratio 1) gives exactly the pixels of its 1-px cosmetic lines, over zooms with fractional plot
    edges."""
    from curveeditor.app.graphs.items import GridLines

    _doc, g = _panel(qtbot)
    build = GridLines._build_lines
    n_lines = 0
    for lo, hi in [(-20, 50), (-1000, 3000), (3.3, 3.31), (0.1234, 7.77)]:
        for s in g.strips:
            s.plot.setYRange(lo, hi, padding=0)
        g.strips[0].plot.setXRange(lo / 10, hi / 10 + 0.37, padding=0)
        shots = []
        for rects in (True, False):
            monkeypatch.setattr(
                GridLines, "_build_lines", lambda self, *a, rects=rects: build(self, *a[:-1], rects)
            )
            for s in g.strips:
                s.grid._lines = None
                s.grid.update()
            g.glw.repaint()
            shots.append(g.glw.grab().toImage())
        assert shots[0] == shots[1]
        n_lines += sum(
            len(shapes[0] if pen is None else shapes)
            for s in g.strips
            for _b, pen, shapes in s.grid._lines[1]
        )
    assert n_lines > 40
