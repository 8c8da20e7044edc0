"""Graphics items the graphs are drawn with (nothing here handles input or knows the document).

* :func:`curve_item` / :func:`set_if_changed`: one pyqtgraph curve of one track channel.
* :class:`KeyMarkers`: many key points from numpy arrays in one ``drawPixmapFragments`` call.
* :class:`MultiCurveItem`: the curves of many tracks in one item (a 60-track selection).
* :class:`LegendOverlay`: the track legend pinned to a plot's corner.
* :func:`track_colors`: one hue family per track (X/Y/Z shades of the track's hue).
"""

from __future__ import annotations

import colorsys
import html
import weakref
from math import floor

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QLineF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QTransform,
)
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem

from .view_curve import ViewCurve

__all__ = [
    "SteadyCurve",
    "curve_item",
    "CursorLine",
    "set_if_changed",
    "set_curve_cache",
    "KeyMarkers",
    "MultiCurveItem",
    "LegendOverlay",
    "GridLines",
    "track_colors",
]


def track_colors(i: int, dark: bool) -> tuple[str, str, str]:
    """X, Y, Z colours of the ``i``-th drawn track: three shades of one hue (golden-ratio spaced
    hues, so neighbours in the selection differ most); Y is the track's main colour."""
    h = (0.02 + i * 0.618034) % 1.0
    base_l = 0.62 if dark else 0.42
    out = []
    for dl in (0.16, 0.0, -0.14):
        r, g, b = colorsys.hls_to_rgb(h, min(max(base_l + dl, 0.15), 0.85), 0.75)
        out.append(QColor.fromRgbF(r, g, b).name())
    return out[0], out[1], out[2]


def view_of(item) -> tuple[QRectF | None, float, float]:
    """``(visible rect, pixel width, pixel height)`` in view coordinates for an item in a ViewBox's
    child group (there view coordinates are the item's own). The ViewBox keeps its pixel size per
    view change; ``GraphicsItem.pixelLength`` / ``viewRect`` map through the transforms per item and
    per call: ~0.17 ms per key-marker bounds, 15 marker items twice per zoom step (~5 ms a step)."""
    vb = item.getViewBox()
    if not isinstance(vb, pg.ViewBox):
        return None, 0.0, 0.0
    px, py = vb.viewPixelSize()
    return vb.viewRect(), px, py


class SteadyCurve(pg.PlotCurveItem):
    """pyqtgraph's curve item with cheaper bounds and a shorter paint for a view box's curves
    (untransformed in the view box: their coordinates are view coordinates).

    Bounds: the data bounds are kept across view changes (pyqtgraph recomputes them on every zoom
    and pan step) and found with two NaN-ignoring reductions per axis; the pixel padding comes from
    the view box's pixel size (:func:`view_of`). Paint: a plain 1-px or thinner solid-pen curve (a
    tangent handle's pairs of points, dashed ghosts) is the one ``drawPath`` pyqtgraph's paint
    ends in, without its profiler, OpenGL and fill tests (~25 us a paint)."""

    def __init__(self, *args, hide_empty: bool = False, **kw):
        #: hidden while it has no data (Qt then skips its bounds and paint; see KeyMarkers.setData)
        self.hide_empty = hide_empty
        super().__init__(*args, **kw)
        if hide_empty:
            self.setVisible(False)

    def updateData(self, *args, **kw):  # noqa: N802 - pyqtgraph hook (every setData)
        super().updateData(*args, **kw)
        if self.hide_empty:
            self.setVisible(self.xData is not None and len(self.xData) > 0)

    def boundingRect(self):  # noqa: N802 - Qt API
        """pyqtgraph's bounds (data bounds + pixel padding), the padding from the view box's pixel
        size (:func:`view_of`, kept per view change) instead of ``pixelVectors`` per curve: the
        curves sit untransformed in the view box, so their coordinates are view coordinates.
        ~20 curve bounds per zoom step, 4 of them after new data (the plot clips and downsamples
        to each new view): :meth:`_data_rect` finds those data bounds."""
        if self._boundingRect is None:
            d = self._data_rect()
            if d is None:
                return QRectF()
            xmn, xmx, ymn, ymx = d
            _vr, px, py = view_of(self)
            pad = self.pixelPadding()
            px, py = px * pad, py * pad
            self._boundingRect = QRectF(xmn - px, ymn - py, (2 * px) + xmx - xmn, (2 * py) + ymx - ymn)
        return self._boundingRect

    def _data_rect(self) -> tuple[float, float, float, float] | None:
        """``(xmin, xmax, ymin, ymax)`` of the data, NaNs ignored (None: no finite data), as
        ``dataBounds(0)`` / ``dataBounds(1)`` give them, kept until the data or pen change.

        ``np.fmin.reduce`` / ``fmax.reduce`` (NaN-ignoring, no warnings) on the plain case, a
        cosmetic pen and no fill level; pyqtgraph's ``dataBounds`` (a ``warnings`` context, nanmin,
        nanmax, percentile options) elsewhere and where a bound is infinite: ~40 us a call, two
        per curve and view change."""
        x, y = self.xData, self.yData
        hit = self.__dict__.get("_data_rect_cache")
        if hit is not None and hit[0] is x and hit[1] is y:  # (``clear()`` drops the data only)
            return hit[2]
        pen = self.opts["pen"]
        out = None
        if x is not None and y is not None and len(x) and len(y):
            plain = (
                self.opts["fillLevel"] is None
                and (pen is None or pen.isCosmetic() or pen.style() == Qt.PenStyle.NoPen)
                and self.opts["shadowPen"] is None
                and x.dtype.kind == "f"
                and y.dtype.kind == "f"
            )
            if plain:
                b = (float(np.fmin.reduce(x)), float(np.fmax.reduce(x)))
                b += (float(np.fmin.reduce(y)), float(np.fmax.reduce(y)))
                if all(np.isfinite(b)):
                    out = b
                elif any(np.isinf(b)):
                    plain = False
            if not plain:
                xmn, xmx = self.dataBounds(ax=0)
                ymn, ymx = self.dataBounds(ax=1)
                if None not in (xmn, xmx, ymn, ymx) and all(np.isfinite((xmn, xmx, ymn, ymx))):
                    out = (xmn, xmx, ymn, ymx)
        self.__dict__["_data_rect_cache"] = (x, y, out)
        return out

    def invalidateBounds(self):  # noqa: N802 - pyqtgraph hook (new data, new pen)
        super().invalidateBounds()
        self.__dict__.pop("_data_rect_cache", None)

    def viewTransformChanged(self):  # noqa: N802 - pyqtgraph hook
        # pyqtgraph drops the data bounds too (nanmin / nanmax of both arrays per curve per zoom
        # step); they depend on the data and pen only, which clear them when they change.
        self._boundingRect = None
        self.prepareGeometryChange()

    def _plain_pen(self):
        """The pen when pyqtgraph's paint would be one ``drawPath`` of it (else None)."""
        pen = self.opts["pen"]
        if (
            pen is None
            or pen.style() == Qt.PenStyle.NoPen
            or self.opts["shadowPen"] is not None
            or self.opts["fillLevel"] is not None
            or self.opts["compositionMode"] is not None
            or self.opts["stepMode"]
            or self._exportOpts is not False
            or self._shouldUseDrawLineSegments(pen)
        ):
            return None
        return pen

    def paint(self, p, opt, widget):
        pen = self._plain_pen()
        if pen is None or isinstance(widget, QOpenGLWidget):
            super().paint(p, opt, widget)
            return
        if self.xData is None or len(self.xData) == 0:
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, bool(self.opts["antialias"]))
        p.setPen(pen)
        lines = self._pair_lines()
        if lines is None:
            p.drawPath(self.getPath())
        else:
            p.drawLines(lines)

    def _pair_lines(self) -> list[QLineF] | None:
        """``connect="pairs"`` data (tangent handles: a few segments) as lines, kept until the
        data change: the segments pyqtgraph's path holds (points 0-1, 2-3, ...; an odd last point
        alone), without its ``QDataStream`` path build (~50 us per handle item and zoom step).
        None for other data (drawn through the path)."""
        x, y = self.xData, self.yData
        hit = self.__dict__.get("_pairs_cache")
        if hit is not None and hit[0] is x and hit[1] is y:
            return hit[2]
        lines = None
        if (
            self.opts["connect"] == "pairs"
            and x is not None
            and y is not None
            and len(x) == len(y) <= 64
            and np.isfinite(x).all()
            and np.isfinite(y).all()
        ):
            xy = np.column_stack([x, y])[: len(x) // 2 * 2].reshape(-1, 4).tolist()
            lines = [QLineF(x0, y0, x1, y1) for x0, y0, x1, y1 in xy]
        self.__dict__["_pairs_cache"] = (x, y, lines)
        return lines


class BoldCurve(SteadyCurve):
    """A curve whose wide solid cosmetic pen (the primary track's 1.6 px) is drawn as three 1-px
    strokes of its path, the copies one device pixel right and down: a 2-px line. Qt's raster engine
    strokes 1-px cosmetic lines on its fast path; wider ones go through ``QStroker`` (pyqtgraph then
    draws one segment per point). Measured on a 6,000-point curve (1000 x 300 image): 1.6-px
    ``drawLines`` 4.5 ms, ``drawPath`` 12.1 ms, one 1-px ``drawPath`` 0.57 ms. Other pens (dashed,
    dotted, 1 px, fills, exports) are drawn by pyqtgraph as before."""

    _OFFSETS = ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0))

    def _bold_pen(self):
        pen = self.opts["pen"]
        if (
            pen is None
            or pen.widthF() <= 1.0
            or not pen.isCosmetic()
            or pen.style() != Qt.PenStyle.SolidLine
            or self.opts["shadowPen"] is not None
            or self.opts["fillLevel"] is not None
            or self.opts["antialias"]
            or self._exportOpts is not False
        ):
            return None
        # the 1-px copy, kept while the pen stays equal (setPen gives a new pen object)
        hit = self.__dict__.get("_thin_pen")
        if hit is not None and hit[0] is pen and hit[1] == pen:
            return hit[2]
        thin = QPen(pen)
        thin.setWidthF(1.0)
        self._thin_pen = (pen, QPen(pen), thin)
        return thin

    def paint(self, p, opt, widget):
        thin = self._bold_pen()
        if thin is None:
            super().paint(p, opt, widget)
            return
        if self.xData is None or len(self.xData) == 0:
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setPen(thin)
        # (drawPolyline of the same points is no faster and joins segments on other pixels)
        path = self.getPath()
        tr = p.transform()
        for dx, dy in self._OFFSETS:
            p.setTransform(tr * QTransform.fromTranslate(dx, dy))
            p.drawPath(path)
        p.setTransform(tr)

    def pixelPadding(self):  # noqa: N802 - pyqtgraph API
        return max(super().pixelPadding(), 2.0)


class CursorLine(pg.InfiniteLine):
    """The time cursor: pyqtgraph's vertical InfiniteLine with its bounds from the view box's view
    rect and pixel size (:func:`view_of`, kept per view change) instead of ``viewRect`` +
    ``pixelVectors`` through the item's transforms (~0.1 ms per plot and view change, every
    plot of a zoom / pan step). Other angles (and a transformed line) keep pyqtgraph's bounds."""

    def _computeBoundingRect(self):  # noqa: N802 - pyqtgraph hook
        plain = self.transform().isIdentity() and self.rotation() == 90 and self.scale() == 1
        if self.angle != 90 or not plain:
            return super()._computeBoundingRect()
        vr, px, _py = view_of(self)
        if vr is None:
            return QRectF()
        # rotated by 90 degrees about its position (x, 0): local (u, v) is view (x - v, u)
        pos = self.pos()
        u0, u1 = vr.top() - pos.y(), vr.bottom() - pos.y()
        pw = max(self.pen.width() / 2, self.hoverPen.width() / 2)
        w = (self._maxMarkerSize + pw + 1) * abs(px)
        length = u1 - u0
        left, right = u0 + length * self.span[0], u0 + length * self.span[1]
        br = QRectF(left, -w, right - left, 2 * w).normalized()
        vs = self.getViewBox().size()
        if self._bounds != br or self._lastViewSize != vs:
            self._bounds = br
            self._lastViewSize = vs
            self.prepareGeometryChange()
        self._endPoints = (left, right)
        self._lastViewRect = QRectF(u0, pos.x() - vr.right(), length, vr.width())
        return self._bounds


def _use_bold_curve(item: pg.PlotDataItem) -> None:
    """Swap the curve child pyqtgraph made for a :class:`BoldCurve` (the PlotDataItem passes its pen
    and data to ``item.curve`` on every update)."""
    old = item.curve
    new = BoldCurve()
    new.setParentItem(item)
    new.sigClicked.connect(item.sigClicked)
    old.setParentItem(None)
    item.curve = new


def curve_item(**kw) -> pg.PlotDataItem:
    """A curve item; its plot makes it draw only the visible part, downsampled to the pixel grid
    (peaks kept) -- see ``GraphPanel``. Give it data only after it is in a plot."""
    # Peak downsampling to one min/max pair per pixel column (pyqtgraph's default keeps 5 samples
    # per pixel): the same envelope on screen with fewer points to stroke.
    kw.setdefault("autoDownsampleFactor", 1.0)
    # ViewCurve: pyqtgraph's item with a lean zoom / pan path (same points; see view_curve.py)
    item = ViewCurve(skipFiniteCheck=True, **kw)
    _use_bold_curve(item)
    set_curve_cache(item, True)
    return item


def set_curve_cache(item: pg.PlotDataItem, on: bool) -> None:
    """Draw ``item``'s curve through a device pixmap (``on``) or straight.

    With the pixmap, a repaint that does not change the curve is a blit: a playback frame (the
    cursor's band), a drag step over the unchanged curves of the plot. A view change (zoom, pan)
    re-renders every pixmap and then blits it, more than stroking the curve (benchmarks/gui.py on
    the Gangnam BVH, CPU per zoom / pan step: 12-22 / 18-23 ms with pixmaps, 11-18 / 10-18 ms
    without), so :class:`~.panel.GraphPanel` turns them off while the view moves."""
    mode = QGraphicsItem.CacheMode.DeviceCoordinateCache if on else QGraphicsItem.CacheMode.NoCache
    if item.curve.cacheMode() != mode:
        item.curve.setCacheMode(mode)


def set_if_changed(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
    """``setData`` unless the item already shows exactly these arrays (skips the repaint)."""
    old = getattr(item, "_ce_xy", None)
    if old is not None and old[0] is x and np.array_equal(old[1], y):
        return
    if (
        old is not None
        and old[0].shape == x.shape
        and np.array_equal(old[1], y)
        and np.array_equal(old[0], x)
    ):
        item._ce_xy = (x, y)
        return
    item.setData(x, y)
    item._ce_xy = (x, y)


DEDUPE_MARKERS = 2000  # more visible markers than this are drawn once per occupied device pixel


class KeyMarkers(pg.GraphicsObject):
    """Key points as fixed-size screen markers, drawn from numpy arrays in one ``drawPoints`` call.

    pyqtgraph's ScatterPlotItem keeps a Python record per point; with 3000 keys its ``setData`` took
    ~2.7 ms and its hit bookkeeping more on every drag step. This item stores the arrays only and
    draws the visible ones (keys are sorted in time, so the visible slice is two ``searchsorted``).
    """

    #: up to this many keys are drawn whole (Qt clips them), more are cut to the visible slice
    WHOLE = 64

    def __init__(self, size: float, fill: str, outline: str | None = None):
        super().__init__()
        self._x = np.zeros(0)
        self._y = np.zeros(0)
        self._rect = QRectF()
        self._br: QRectF | None = None
        self.size = float(size)
        self.fill = QColor(fill)
        self.outline = QColor(outline) if outline else None
        self._sprite_pm: QPixmap | None = None
        self._sprite_key: tuple | None = None
        # PixmapFragment rows (x, y, source x, y, w, h, scale x, y, rotation, opacity): _fragments
        self._frag_buf = np.empty((0, 10))
        self._frag_ptr = None
        self._frag_look: tuple | None = None
        #: draw nothing when more than this many keys per pixel column are visible (None = always)
        self.max_per_px: float | None = None
        #: denser than this many visible keys per pixel column: draw ``dense_size`` px solid dots of
        #: the outline colour instead of the (ringed) marks, which would merge into a band (mocap
        #: keys on every frame, zoomed out); None = never
        self.dense_per_px: float | None = None
        self.dense_size = 2.0
        self._dense = False
        self.setVisible(False)  # no keys yet
        # paint() gets the exposed rect: a cursor move repaints two thin bands, not every key
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def setData(self, x, y) -> None:  # noqa: N802 - pyqtgraph naming
        self.prepareGeometryChange()
        self._x = np.asarray(x, dtype=np.float64)
        self._y = np.asarray(y, dtype=np.float64)
        if self._x.size:
            x0, x1 = float(self._x.min()), float(self._x.max())
            y0, y1 = float(self._y.min()), float(self._y.max())
            self._rect = QRectF(x0, y0, max(x1 - x0, 1e-9), max(y1 - y0, 1e-9))
        else:
            self._rect = QRectF()
        self._br = None
        # Empty marker items (no selection, no handles, no secondary keys) are hidden: Qt then skips
        # their bounds and paint calls on every repaint (a dozen such items in a 4-plot panel).
        self.setVisible(bool(self._x.size))
        self.informViewBoundsChanged()
        self.update()

    def clear(self) -> None:
        self.setData(np.zeros(0), np.zeros(0))

    def getData(self):  # noqa: N802
        return self._x, self._y

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802,N803
        if self._x.size == 0:
            return None, None
        d = self._x if ax == 0 else self._y
        return float(d.min()), float(d.max())

    def pixelPadding(self) -> float:  # noqa: N802
        return self.size

    def boundingRect(self) -> QRectF:  # noqa: N802
        # Qt asks for this dozens of times per frame: computed once per data or view change.
        if self._br is None:
            self._br = self._compute_bounds()
        return self._br

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph hook
        if self._x.size:
            self.prepareGeometryChange()
        self._br = None

    def viewRangeChanged(self) -> None:  # noqa: N802 - pyqtgraph hook
        if self._x.size:
            self.prepareGeometryChange()
        self._br = None

    def _compute_bounds(self) -> QRectF:
        if self._x.size == 0:
            return QRectF()
        vr, px, py = view_of(self)
        pad = self.size
        rect = self._rect.adjusted(-pad * px, -pad * py, pad * px, pad * py)
        # Keep the dirty region inside the visible part: a 50 s track must not repaint the axes.
        if vr is not None and vr.isValid():
            rect = rect.intersected(vr.adjusted(-pad * px, -pad * py, pad * px, pad * py))
        return rect

    def _sprite(self, dpr: float) -> QPixmap:
        """The marker as a pixmap (outline square, fill square inside), rebuilt when its look changes."""
        if self._dense and self.outline is not None:
            return self._dense_sprite(dpr)
        key = (self.size, self.fill.rgba(), None if self.outline is None else self.outline.rgba(), dpr)
        if self._sprite_key != key:
            side = self.size + (2.0 if self.outline is not None else 0.0)
            px = max(1, int(np.ceil(side * dpr)))
            pm = QPixmap(px, px)
            pm.fill(Qt.GlobalColor.transparent)
            p = QPainter(pm)
            if self.outline is not None:
                p.fillRect(QRectF(0, 0, px, px), self.outline)
            inset = (px - self.size * dpr) / 2.0
            p.fillRect(QRectF(inset, inset, px - 2 * inset, px - 2 * inset), self.fill)
            p.end()
            self._sprite_pm, self._sprite_key = pm, key
        return self._sprite_pm

    def _dense_sprite(self, dpr: float) -> QPixmap:
        key = ("dense", self.dense_size, self.outline.rgba(), dpr)
        pm = self.__dict__.get("_dense_pm")
        if pm is None or self.__dict__.get("_dense_key") != key:
            px = max(1, int(np.ceil(self.dense_size * dpr)))
            pm = QPixmap(px, px)
            c = QColor(self.outline)
            c.setAlpha(120)  # the curve's colour shows through the band of dots
            pm.fill(c)
            self._dense_pm, self._dense_key = pm, key
        return pm

    def _visible(self, option) -> tuple[np.ndarray, np.ndarray] | None:
        """The keys to draw: those in the visible time range (and the exposed band), none when
        denser than :attr:`max_per_px`. A few keys (a selection, a key's handles) are drawn
        whole without looking at the view: Qt clips them, and the view look-ups, searches and
        slices cost more than the blits (~25 us per paint of a 1-2 key item, 6 per zoom step)."""
        n = self._x.size
        self._dense = False
        if n <= self.WHOLE and self.max_per_px is None:
            return self._x, self._y
        vr, px, _py = view_of(self)
        lo, hi = 0, n
        if vr is not None and n > self.WHOLE:
            lo = max(int(np.searchsorted(self._x, vr.left(), side="left")) - 1, 0)
            hi = int(np.searchsorted(self._x, vr.right(), side="right")) + 1
        if hi <= lo:
            return None
        if self.dense_per_px is not None and vr is not None and px > 0:
            self._dense = (min(hi, n) - lo) > self.dense_per_px * vr.width() / px
        if self.max_per_px is not None and vr is not None:
            if px > 0 and (min(hi, n) - lo) > self.max_per_px * vr.width() / px:
                return None
        ex = getattr(option, "exposedRect", None) if n > self.WHOLE else None
        if ex is not None and ex.isValid() and vr is not None and px > 0:
            # Only the exposed band (a playback step exposes the two cursor lines): the density
            # test above still looks at everything visible, so what is drawn does not change.
            pad = 2 * self.size * px
            lo = max(lo, int(np.searchsorted(self._x, ex.left() - pad, side="left")) - 1)
            hi = min(hi, int(np.searchsorted(self._x, ex.right() + pad, side="right")) + 1)
            if hi <= lo:
                return None
        return self._x[lo:hi], self._y[lo:hi]

    def paint(self, painter, option=None, *args) -> None:
        if self._x.size == 0:
            return
        keys = self._visible(option)
        if keys is None or keys[0].size == 0:
            return
        x, y = keys
        # One pre-rendered sprite blitted per key (drawPixmapFragments), in device pixels: stroking
        # wide square-capped points cost ~0.13 ms per call, twice per item, ~2 ms per drag step.
        dev = painter.device()
        dpr = float(dev.devicePixelRatioF()) if dev is not None else 1.0
        pm = self._sprite(dpr)
        tr = painter.transform()
        if tr.m12() == 0.0 and tr.m21() == 0.0:
            # the graphs' transforms only scale and translate: two multiply-adds, not pyqtgraph's
            # general transformCoordinates (a 3 x 3 matrix from the QTransform per call)
            xy = np.empty((2, x.size))
            np.multiply(x, tr.m11(), out=xy[0])
            xy[0] += tr.dx()
            np.multiply(y, tr.m22(), out=xy[1])
            xy[1] += tr.dy()
        else:
            xy = pg.functions.transformCoordinates(tr, np.vstack([x, y]))
        # |coords| <= 2**30 (ufuncs: np.clip's Python wrapper cost more than the clip of a few keys)
        np.minimum(xy, 2.0**30, out=xy)
        np.maximum(xy, -(2.0**30), out=xy)
        if xy.shape[1] > DEDUPE_MARKERS:
            # Thousands of markers (a 10,000-key dope-sheet selection) overlap: one sprite per
            # occupied device pixel draws the same picture with 3-10x fewer blits; past 4x that
            # many, one per 2 x 2 pixels (edges of the band of squares move by at most 1 px).
            for grid in (1, 2):
                pix = np.floor(xy / grid).astype(np.int64)
                keep = np.unique((pix[0] << 32) + pix[1], return_index=True)[1]  # |coords| <= 2**30
                xy = xy[:, keep]
                if xy.shape[1] <= 4 * DEDUPE_MARKERS:
                    break
        k = xy.shape[1]
        frags, ptr = self._fragments(k, pm, dpr)
        frags[:, 0:2] = xy.T
        # the fragments are in device pixels; drawPixmapFragments changes no other painter state
        # (a save / restore copies all of it)
        painter.resetTransform()
        painter.drawPixmapFragments(ptr, k, pm)
        painter.setTransform(tr)

    def _fragments(self, k: int, pm: QPixmap, dpr: float):
        """``(rows (k, 10) of the PixmapFragment buffer, its C++ pointer)``; the source rect, scale,
        rotation and opacity columns are filled when the buffer or the sprite changes. The buffer
        and its pointer wrapper are kept: pyqtgraph's ``PrimitiveArray.drawargs`` wraps the
        pointer again per call (``ndarray.ctypes`` + ``shiboken.wrapInstance``, ~8 us a paint)."""
        buf = self._frag_buf
        look = (pm.width(), pm.height(), dpr)
        if buf.shape[0] < k:
            buf = self._frag_buf = np.empty((max(k, 2 * buf.shape[0], 16), 10))
            self._frag_ptr = shiboken6.wrapInstance(buf.ctypes.data, QPainter.PixmapFragment)
            self._frag_look = None
        if self._frag_look != look:
            buf[:, 2:6] = (0.0, 0.0, look[0], look[1])
            buf[:, 6:10] = (1.0 / dpr, 1.0 / dpr, 0.0, 1.0)
            self._frag_look = look
        return buf[:k], self._frag_ptr


class MultiCurveItem(pg.GraphicsObject):
    """The curves of many tracks in one item: each ``(x (M,), y (M,), colour)`` is cut to the visible
    time range, reduced to a min/max pair per pixel column (peaks kept) and stroked with a 1-px
    cosmetic pen.

    Why not one PlotDataItem per curve: creating and adding one costs ~3 ms (its own ScatterPlotItem,
    curve item, signals), so 60 tracks x 3 channels took ~0.6 s before a single pixel was drawn.
    """

    def __init__(self, style=Qt.PenStyle.SolidLine):
        super().__init__()
        self.style = style
        self._curves: list[tuple[np.ndarray, np.ndarray, QColor]] = []
        self._rect = QRectF()
        self._br: QRectF | None = None
        self._paths: list[tuple[QPainterPath, QPen]] | None = None
        self._paths_key: tuple | None = None
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setVisible(False)  # no curves yet

    def setCurves(self, curves) -> None:  # noqa: N802 - pyqtgraph naming
        """``curves``: iterable of ``(x, y, colour)``; x sorted (seconds), y in view units."""
        self.prepareGeometryChange()
        self._curves = [(np.asarray(x, float), np.asarray(y, float), QColor(c)) for x, y, c in curves]
        xs = [(float(x[0]), float(x[-1])) for x, _y, _c in self._curves if x.size]
        ys = [(float(np.nanmin(y)), float(np.nanmax(y))) for x, y, _c in self._curves if x.size]
        if xs:
            x0, x1 = min(a for a, _ in xs), max(b for _, b in xs)
            y0, y1 = min(a for a, _ in ys), max(b for _, b in ys)
            self._rect = QRectF(x0, y0, max(x1 - x0, 1e-9), max(y1 - y0, 1e-9))
        else:
            self._rect = QRectF()
        self._br = None
        self._paths = None
        self.setVisible(bool(self._curves))  # see KeyMarkers.setData
        self.informViewBoundsChanged()
        self.update()

    def curves(self) -> list[tuple[np.ndarray, np.ndarray, QColor]]:
        return list(self._curves)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):  # noqa: N802,N803
        if not self._curves:
            return None, None
        r = self._rect
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def boundingRect(self) -> QRectF:  # noqa: N802
        if self._br is None:
            vr = view_of(self)[0]
            rect = QRectF(self._rect)
            if vr is not None and vr.isValid() and not rect.isNull():
                rect = rect.intersected(vr)
            self._br = rect
        return self._br

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph hook
        if self._curves:
            self.prepareGeometryChange()
        self._br = None

    def viewRangeChanged(self) -> None:  # noqa: N802 - pyqtgraph hook
        if self._curves:
            self.prepareGeometryChange()
        self._br = None

    def _build_paths(self, vr: QRectF, width_px: int) -> list[tuple[QPainterPath, QPen]]:
        out = []
        x0, x1 = vr.left(), vr.right()
        bins = max(int(width_px), 1)
        for x, y, colour in self._curves:
            if x.size == 0:
                continue
            lo = max(int(np.searchsorted(x, x0)) - 1, 0)
            hi = min(int(np.searchsorted(x, x1, side="right")) + 1, x.size)
            xv, yv = x[lo:hi], y[lo:hi]
            if xv.size > 3 * bins:
                # min/max per pixel column: the same picture as every sample, ~2 points per pixel
                edges = np.searchsorted(xv, np.linspace(xv[0], xv[-1], bins + 1)[:-1])
                edges = np.unique(edges)
                mn = np.minimum.reduceat(yv, edges)
                mx = np.maximum.reduceat(yv, edges)
                xm = xv[edges]
                xv = np.repeat(xm, 2)
                yv = np.column_stack([mn, mx]).reshape(-1)
            pen = QPen(colour)
            pen.setCosmetic(True)
            pen.setWidthF(1.0)
            pen.setStyle(self.style)
            out.append((pg.arrayToQPath(xv, yv, connect="finite"), pen))
        return out

    def paint(self, painter, *args) -> None:
        if not self._curves:
            return
        vr, px, _py = view_of(self)
        if vr is None or not vr.isValid():
            return
        width_px = int(vr.width() / px) if px else 1000
        key = (vr.left(), vr.right(), width_px)
        if self._paths is None or self._paths_key != key:
            self._paths = self._build_paths(vr, width_px)
            self._paths_key = key
        for path, pen in self._paths:
            painter.setPen(pen)
            painter.drawPath(path)


class LegendOverlay(QGraphicsTextItem):
    """Track legend in a plot's top-right corner (fixed on screen, not in data coordinates): one line
    per track with its colour swatch(es), in as many columns (up to :attr:`MAX_COLUMNS`) as the plot's
    height needs (a short strip of a 3-strip panel held 12 of 15 lines, and the view box clipped the
    rest without a word); at most ``max_rows`` lines a column, then "+N more"."""

    MAX_COLUMNS = 3

    def __init__(self, view_box: pg.ViewBox, max_rows: int = 16):
        super().__init__()
        self.vb = view_box
        self.max_rows = max_rows
        self.entries: list[tuple[str, tuple[str, ...]]] = []
        self._style = ("", "", "")
        self._rendered_per = None
        self._rendered_room = None
        self.setParentItem(view_box)
        self.setZValue(1e8)
        view_box.sigResized.connect(self._relayout)

    def set_entries(self, entries, fg: str, bg: str, note: str = "") -> None:
        """``entries``: ``(label, (colour, ...))`` per track; ``note``: an extra first line."""
        self.entries = list(entries)
        self._style = (fg, bg, note)
        self._render()

    def clear(self) -> None:
        """No legend: entries forgotten and hidden. A hidden legend that kept its entries came back on
        the next resize of its view box (``_relayout`` re-renders and shows what it holds): after
        View > Reset layout the previous selection's or file's legend was drawn over the new clip."""
        self.entries = []
        self._style = ("", "", "")
        self._rendered_room = None
        self.setPlainText("")
        self.setVisible(False)

    def _estimate_rows(self) -> int:
        font = QFont(self.font())
        font.setPointSizeF(8.0)
        line = QFontMetricsF(font).lineSpacing()
        fit = int((self.vb.boundingRect().height() - 8) // line) - (1 if self._style[2] else 0)
        return max(1, min(self.max_rows, fit))

    def _render(self) -> None:
        """Lay the lines out in columns of the most lines that fit the view box's height (a first
        guess from the font's line spacing, lowered while the rendered text is still too tall)."""
        room = self.vb.boundingRect().height() - 2
        per = self._estimate_rows()
        while True:
            self._set_html(per)
            if per == 1 or self.boundingRect().height() <= room:
                break
            per -= 1
        self._rendered_per = per
        self._rendered_room = room
        self.setVisible(bool(self.entries) or bool(self._style[2]))
        self._place()

    def _set_html(self, per: int) -> None:
        fg, bg, note = self._style
        cells = []
        for label, colours in self.entries:
            sw = "".join(f'<span style="color:{c}">&#9632;</span>' for c in colours)
            cells.append(f"{sw}&nbsp;{html.escape(label)}")
        cols = min(self.MAX_COLUMNS, max(1, -(-len(cells) // per)))
        if len(cells) > per * cols:
            hidden = len(cells) - (per * cols - 1)
            cells = cells[: per * cols - 1] + [f"+{hidden} more"]
        columns = ["<br>".join(cells[i : i + per]) for i in range(0, len(cells), per)]
        body = "".join(
            f'<td style="padding-right:{8 if i < len(columns) - 1 else 0}px">{c}</td>'
            for i, c in enumerate(columns)
        )
        head = f"<i>{html.escape(note)}</i><br>" if note else ""
        self.setHtml(
            f'<div style="color:{fg}; background-color:{bg}; font-size:8pt">{head}'
            f'<table cellspacing="0" cellpadding="0" style="background-color:{bg}"><tr>{body}</tr></table>'
            "</div>"
        )

    def _relayout(self, *_):
        if self.entries and self.vb.boundingRect().height() - 2 != self._rendered_room:
            self._render()
        self._place()

    def text_lines(self) -> list[str]:
        """The legend's lines, column after column (each label once)."""
        return [ln for ln in self.toPlainText().splitlines() if ln.strip()]

    def _place(self, *_):
        r = self.vb.boundingRect()
        w = self.boundingRect().width()
        self.setPos(max(r.right() - w - 4, 0), 2)


class GridLines(pg.GraphicsObject):
    """The plot grid at the axes' tick positions, in one opaque colour (``blend`` of background and
    foreground), drawn as 1-px device lines.

    pyqtgraph's own grid (``showGrid``) lives in the axis items: each axis then caches a device
    pixmap as large as the whole plot and blends it with alpha on every repaint -- 41 % of a wheel
    zoom step on a 4-plot panel (1.2 s of 2.9 s for 10 steps, measured), ~3x slower zoom/pan/drag.
    """

    def __init__(self, plot: pg.PlotItem):
        super().__init__()
        # a weak reference: plot -> item -> plot would be a cycle of Qt wrappers that Python's GC
        # may collect from a worker thread (Qt objects deleted off their thread crash)
        self._plot = weakref.ref(plot)
        self.major = QColor("#dddddd")
        self.minor = QColor("#eeeeee")
        #: ``(view key, [(colour, pen or None, rects or lines)])`` of the last paint
        self._lines: tuple | None = None
        self.setZValue(-100)

    def set_colours(self, bg: str, fg: str, alpha: float) -> None:
        b, f = QColor(bg), QColor(fg)

        def mix(a):
            return QColor.fromRgbF(
                b.redF() + (f.redF() - b.redF()) * a,
                b.greenF() + (f.greenF() - b.greenF()) * a,
                b.blueF() + (f.blueF() - b.blueF()) * a,
            )

        self.major, self.minor = mix(alpha), mix(alpha * 0.45)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802
        # the visible rect only (view_of would also compute the pixel size, the first call after
        # each range change of every plot). The deferred view matrix is applied here as view_of
        # did: applied later, inside the paint, it makes Qt paint the whole scene twice.
        vb = self.getViewBox()
        if not isinstance(vb, pg.ViewBox):
            return QRectF()
        vb.updateMatrix()
        return vb.viewRect()

    def viewRangeChanged(self) -> None:  # noqa: N802 - pyqtgraph hook
        self.prepareGeometryChange()
        self.update()

    def _ticks(self, name: str, size: float):
        """Tick values (major, minor) of the axis ``name`` for its range, asked as the axis asks
        (its range, its length + 2 px), so the axis' tick memo (``strips.FastAxis``) answers
        both; the plot region is repainted on every drag step and ``tickValues`` cost ~0.4 ms."""
        plot = self._plot()
        if plot is None:
            return []
        ax = plot.getAxis(name)
        lo, hi = ax.range
        levels = ax.tickValues(lo, hi, size) if hi != lo else []
        return [np.asarray(v, dtype=float) for _spacing, v in levels[:2]]

    def _view_key(self, tr, dpr: float) -> tuple | None:
        """What the drawn lines depend on: the painter's transform, both axes' ranges (the grid's
        ticks are the axes' ticks for them), the time axis' seconds/frames mode, the colours."""
        plot = self._plot()
        if plot is None:
            return None
        bottom, left = plot.getAxis("bottom"), plot.getAxis("left")
        (x0, x1), (y0, y1) = bottom.range, left.range
        return (
            tr.m11(), tr.m12(), tr.m21(), tr.m22(), tr.dx(), tr.dy(), x0, x1, y0, y1, dpr,
            getattr(bottom, "frames", None), getattr(bottom, "frame_rate", None),
            self.major.rgba(), self.minor.rgba(),
        )  # fmt: skip

    def paint(self, painter, *args) -> None:
        tr = painter.transform()
        dev_obj = painter.device()
        dpr = float(dev_obj.devicePixelRatioF()) if dev_obj is not None else 1.0
        # The same lines are drawn again by every repaint of a view that did not move (each drag
        # step repaints the plot under the curves): built once per view, colours and ticks.
        key = self._view_key(tr, dpr)
        hit = self._lines
        if hit is None or hit[0] != key:
            vb = self.getViewBox()
            if not isinstance(vb, pg.ViewBox):
                return
            vr = vb.viewRect()
            if not vr.isValid():
                return
            dev = tr.mapRect(vr)
            xs = self._ticks("bottom", dev.width() + 2.0)
            ys = self._ticks("left", dev.height() + 2.0)
            hit = self._lines = (key, self._build_lines(tr, vr, dev, xs, ys, dpr == 1.0))
        if not hit[1]:
            return
        # (Qt saves and restores the painter around each item's paint; the transform is put back
        # for painters that do not, e.g. a direct call)
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for brush, pen, shapes in hit[1]:
            if pen is None:
                rects, ptr = shapes
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(brush)
                painter.drawRects(ptr, len(rects))
            else:
                painter.setPen(pen)
                painter.drawLines(shapes)
        painter.setTransform(tr)

    def _build_lines(self, tr, vr, dev, xs, ys, as_rects: bool) -> list:
        """``(brush, pen, shapes)`` per level (minor first, major on top). At a device pixel ratio
        of 1 the 1-px lines are 1-px wide integer rects, ``shapes = (rects (n, 4) int32 in
        QRect's memory layout x1, y1, x2, y2, their QRect pointer)`` for one ``drawRects`` with
        no pen (the raster engine's rect fill: the same pixels as the aliased cosmetic line
        through the pixel centres, floor(start) to floor(end) inclusive; 4-5x faster than
        ``drawLines``; a ``fillRect`` per line cost 2x the Python time, a QRect built per line
        more, ~100 us per plot and view in the window); else ``(None, pen, QLineFs)``."""
        top, bottom, left, right = dev.top(), dev.bottom(), dev.left(), dev.right()
        LIM = 2.0**30  # noqa: N806 - QRect holds 32-bit ints
        t0, l0 = floor(max(top, -LIM)), floor(max(left, -LIM))
        h, w = floor(min(bottom, LIM)) - t0 + 1, floor(min(right, LIM)) - l0 + 1
        # device pixel of each tick (np.round's half-to-even rint), clipped to QRect's range
        sx, ox = tr.m11(), tr.m21() * vr.top() + tr.dx()
        sy, oy = tr.m22(), tr.m12() * vr.left() + tr.dy()

        def device(values, scale, off):
            if values is None or not values.size:
                return np.zeros(0)
            d = values * scale
            d += off
            np.rint(d, out=d)
            np.minimum(d, LIM, out=d)
            np.maximum(d, -LIM, out=d)
            return d

        out = []
        for level in (1, 0):
            colour = self.major if level == 0 else self.minor
            vx = device(xs[level] if level < len(xs) else None, sx, ox)
            hy = device(ys[level] if level < len(ys) else None, sy, oy)
            nx, ny = vx.size, hy.size
            if not (nx or ny):
                continue
            if as_rects:
                rects = np.empty((nx + ny, 4), dtype=np.int32)
                rects[:nx, 0] = vx
                rects[:nx, 1] = t0
                rects[:nx, 2] = vx
                rects[:nx, 3] = t0 + h - 1
                rects[nx:, 0] = l0
                rects[nx:, 1] = hy
                rects[nx:, 2] = l0 + w - 1
                rects[nx:, 3] = hy
                ptr = shiboken6.wrapInstance(rects.ctypes.data, QRect)
                out.append((QBrush(colour), None, (rects, ptr)))
            else:
                pen = QPen(colour)
                pen.setWidth(0)
                shapes = [QLineF(x + 0.5, top, x + 0.5, bottom) for x in vx.tolist()]
                shapes += [QLineF(left, y + 0.5, right, y + 0.5) for y in hy.tolist()]
                out.append((None, pen, shapes))
        return out
