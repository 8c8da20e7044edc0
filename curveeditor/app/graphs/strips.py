"""One plot ("strip") of the graph panel: its PlotItem and view box, time cursor, axes, and the
items shared by all the tracks it shows (batched curves of the secondary tracks, their keys, the
selected keys, the tangent handles, the legend and a note line).

Axes never rescale degrees or seconds with SI prefixes ("(x0.001)"); the time axis shows seconds
or frames (:class:`TimeAxis`).
"""

from __future__ import annotations

from collections import OrderedDict
from math import ceil

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from ..common.theme import Theme
from .input import CHANNEL_NAMES, CurveViewBox, GraphInput
from .items import CursorLine, GridLines, KeyMarkers, LegendOverlay, MultiCurveItem, SteadyCurve

__all__ = ["Strip", "FastAxis", "TimeAxis", "export_scene", "SELECTED_PX", "SECONDARY_KEY_PX"]

#: a selected key's mark (px, inside its 1-px outline: 10 px in all): solid ``Theme.key_selected``,
#: larger than an unselected key's ring (``track_drawer.KEY_PX``) so the two differ in size, fill and colour
SELECTED_PX = 8
#: the keys of the batched (secondary) tracks (px)
SECONDARY_KEY_PX = 4


class FastAxis(pg.AxisItem):
    """pyqtgraph's AxisItem with the Python work of a repaint cut down; same ticks, same labels.

    Every zoom / pan / drag step repaints an axis (its range changed) and its plot's grid, which asks
    the axis for the same tick values. Measured on a 2-plot panel (``benchmarks/gui.py``, wheel
    zoom): ``generateDrawSpecs`` took ~2.8 ms per axis, mostly ``tickValues`` (numpy ``isclose``
    per level, computed again by the grid), label measuring and ``boundingRect`` (once per label).
    Here tick values are memoised per (range, size, settings) across axes, the duplicate test is
    one broadcast subtraction, labels are measured once per text, ``boundingRect`` is computed
    once per paint, and the axis is painted straight onto the painter (:meth:`paint`).
    """

    _ticks_memo: OrderedDict = OrderedDict()
    _text_memo: OrderedDict = OrderedDict()

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._br_paint: QRectF | None = None

    def _tick_key(self, lo: float, hi: float, size: float) -> tuple:
        return (
            type(self),
            lo,
            hi,
            size,
            self.scale,
            self._tickDensity,
            None if self._tickSpacing is None else repr(self._tickSpacing),
            self.style["maxTickLevel"],
            getattr(self, "frames", None),
            getattr(self, "frame_rate", None),
        )

    def tickValues(self, minVal, maxVal, size):  # noqa: N802,N803 - pyqtgraph API
        if self.logMode:
            return super().tickValues(minVal, maxVal, size)
        key = self._tick_key(minVal, maxVal, size)
        memo = FastAxis._ticks_memo
        hit = memo.get(key)
        if hit is None:
            hit = self._tick_values(minVal, maxVal, size)
            memo[key] = hit
            if len(memo) > 256:
                memo.popitem(last=False)
        return [(spacing, list(values)) for spacing, values in hit]

    def _tick_values(self, minVal, maxVal, size):  # noqa: N803
        """``AxisItem.tickValues`` (linear axes), with its ``np.isclose`` duplicate test replaced by
        the same |a - b| <= atol test as one broadcast subtraction."""
        minVal, maxVal = sorted((minVal, maxVal))
        minVal *= self.scale
        maxVal *= self.scale
        ticks = []
        seen = np.zeros(0)
        for spacing, offset in self.tickSpacing(minVal, maxVal, size):
            start = (ceil((minVal - offset) / spacing) * spacing) + offset
            num = int((maxVal - start) / spacing) + 1
            values = (np.arange(num) * spacing + start) / self.scale
            if seen.size and values.size:
                atol = spacing / self.scale * 0.01
                close = (np.abs(seen[None, :] - values[:, None]) <= atol).any(axis=1)
                values = values[~close]
            seen = np.concatenate([seen, values])
            ticks.append((spacing / self.scale, values.tolist()))
        return ticks

    _ALIGN_CENTER = Qt.AlignmentFlag.AlignCenter
    _FLAGS_LEFT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip
    _FLAGS_BOTTOM = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip

    def generateDrawSpecs(self, p):  # noqa: N802 - pyqtgraph API
        """``AxisItem.generateDrawSpecs`` for the left and bottom axes of the graphs (linear, automatic
        ticks, axis line to the box edges): the same specs, from :meth:`_layout`; other set-ups go
        to pyqtgraph's version."""
        if not self._own_layout():
            return super().generateDrawSpecs(p)
        lay = self._layout(p)
        if lay is None:
            return None
        axis_spec, levels, tick_start, vertical, text_specs = lay
        tick_specs = []
        for pen, xs, end in levels:
            if vertical:
                tick_specs += [(pen, QPointF(tick_start, x), QPointF(end, x)) for x in xs.tolist()]
            else:
                tick_specs += [(pen, QPointF(x, tick_start), QPointF(x, end)) for x in xs.tolist()]
        return axis_spec, tick_specs, text_specs

    def _own_layout(self) -> bool:
        style = self.style
        return not (
            self.orientation not in ("left", "bottom")
            or self._tickLevels is not None
            or self.logMode
            or any(style["stopAxisAtTick"])
        )

    def _text_size(self, p, font_key: str, text: str) -> tuple[float, float]:
        """(width, 0.8 x height) of a tick label as ``AxisItem`` measures it, memoised per (font,
        text): the labels of a zoom step are mostly the last step's."""
        key = (font_key, text)
        memo = FastAxis._text_memo
        hit = memo.get(key)
        if hit is None:
            r = p.boundingRect(QRectF(0, 0, 100, 100), self._ALIGN_CENTER, text)
            hit = memo[key] = (r.width(), r.height() * 0.8)
            if len(memo) > 2048:
                memo.popitem(last=False)
        return hit

    def _level_pen(self, base_pen: QPen, alpha) -> QPen:
        """The tick pen of a level: ``base_pen`` with ``alpha`` (0-255), kept per alpha while the
        base pen stays equal (``tickPen()`` is a new copy per call)."""
        memo = self.__dict__.setdefault("_pen_memo", {})
        hit = memo.get(int(alpha))
        if hit is not None and hit[0] == base_pen:
            return hit[1]
        pen = QPen(base_pen)
        c = QColor(pen.color())
        c.setAlpha(int(alpha))
        pen.setColor(c)
        memo[int(alpha)] = (QPen(base_pen), pen)
        return pen

    def _layout(self, p):
        """pyqtgraph's ``generateDrawSpecs`` step for step, with the ticks of a level as one array of
        positions instead of a ``Point`` pair per tick, the labels measured once per text, and a
        level's labels measured only until pyqtgraph's fill limit decides that the level is not
        drawn (the sum of label sizes only grows, so the first label past the limit settles it;
        the time axis' 30-40 minor labels were formatted and measured to be dropped):
        ``(axis_spec, [(pen, positions, tick end)], tick start, vertical, text_specs)``.

        Assumes ``tickStrings`` formats each value on its own (pyqtgraph's and TimeAxis' do): a
        level's strings are asked for in chunks."""
        style = self.style
        if style["tickFont"] is not None:
            p.setFont(style["tickFont"])
        bounds = self.mapRectFromParent(self.geometry())
        lv = self.linkedView()
        tick_bounds = (
            bounds if lv is None or self.grid is False else lv.mapRectToItem(self, lv.boundingRect())
        )
        left = self.orientation == "left"
        if left:
            span = (
                QPointF(bounds.right() - 1, bounds.top() - 1),
                QPointF(bounds.right() - 1, bounds.bottom() + 1),
            )
            tick_start, tick_stop, tick_dir, axis = tick_bounds.right(), bounds.right(), -1, 0
        else:
            span = (
                QPointF(bounds.left() - 1, bounds.top() + 1),
                QPointF(bounds.right() + 1, bounds.top() + 1),
            )
            tick_start, tick_stop, tick_dir, axis = tick_bounds.top(), bounds.top(), 1, 1
        dt = self.deviceTransform_()  # what mapToDevice maps through, once for both ends
        if dt is None:
            return None
        d0, d1 = dt.map(span[0]), dt.map(span[1])
        length = float(np.hypot(d1.x() - d0.x(), d1.y() - d0.y()))
        if length == 0:
            return None
        levels = self.tickValues(self.range[0], self.range[1], length)
        r0, r1 = self.range
        dif = r1 - r0
        if dif == 0:
            scale, offset = 1, 0
        elif axis == 0:
            scale = -bounds.height() / dif
            offset = r0 * scale - bounds.height()
        else:
            scale = bounds.width() / dif
            offset = r0 * scale
        e0, e1 = r0 * scale - offset, r1 * scale - offset
        lo, hi = min(e0, e1), max(e0, e1)
        inside: list[np.ndarray] = []  # per level: which tick values are drawn (device position in range)
        tick_levels = []
        base_pen = self._pen_of("_tickPen") or self._pen_of("_pen") or self.tickPen()
        solid = base_pen.brush().style() == Qt.BrushStyle.SolidPattern
        for i, (_spacing, ticks) in enumerate(levels):
            xs = np.asarray(ticks, dtype=np.float64) * scale - offset
            keep = (xs >= lo) & (xs <= hi)
            inside.append(keep)
            tick_len = style["tickLength"] / ((i * 0.5) + 1.0)
            alpha = style["tickAlpha"]
            if alpha is None:
                alpha = 255 / (i + 1)
                if self.grid is not False:
                    alpha *= self.grid / 255.0 * min(max(0.05 * length / (len(ticks) + 1), 0.0), 1.0)
            elif isinstance(alpha, float):
                alpha = min(255, max(0, int(round(alpha * 255))))
            pen = self._level_pen(base_pen, alpha) if solid else base_pen
            end = tick_stop + (tick_len * tick_dir if self.grid is False else 0)
            tick_levels.append((pen, xs[keep], end))
        axis_spec = (self._pen_of("_pen") or self.pen(), span[0], span[1])
        text_specs: list = []
        if not style["showValues"]:
            return axis_spec, tick_levels, tick_start, left, text_specs
        text_offset = style["tickTextOffset"][axis]
        off = max(0, style["tickLength"]) + text_offset
        flags = self._FLAGS_LEFT if left else self._FLAGS_BOTTOM
        br = self.boundingRect()
        b_left, b_top, b_right, b_bottom = br.left(), br.top(), br.right(), br.bottom()
        font_key = self._font_key(p.font())
        memo = FastAxis._text_memo
        limits = style["textFillLimits"]
        sip_scale = self.autoSIPrefixScale * self.scale
        size = size2 = 0.0  # over the labels of every level so far, as pyqtgraph sums them
        last_size2 = 0
        for i in range(min(len(levels), style["maxTextLevel"] + 1)):
            spacing, values = levels[i]
            if not values:
                continue
            keep = inside[i]
            positions = tick_levels[i][1].tolist()
            shown = [v for v, k in zip(values, keep.tolist(), strict=True) if k]
            # the fill limit this level is held to (pyqtgraph: any limit whose label count the
            # levels above reached); None for the top level, always drawn
            limit = None
            if i > 0:
                reached = [lim for n, lim in limits if len(text_specs) >= n]
                limit = min(reached) if reached else None
            measured = []
            over = False
            chunk = 12 if limit is not None else len(shown)
            for c0 in range(0, len(shown), chunk):
                strings = self.tickStrings(shown[c0 : c0 + chunk], sip_scale, spacing)
                for x, text in zip(positions[c0 : c0 + chunk], strings, strict=True):
                    hit = memo.get((font_key, text))
                    w, h = hit if hit is not None else self._text_size(p, font_key, text)
                    measured.append((x, w, h, text))
                    if axis == 0:
                        size += h
                        size2 = max(size2, w)
                    else:
                        size += w
                        size2 = max(size2, h)
                    if limit is not None and float(size) / length >= limit:
                        over = True
                        break
                if over:
                    break
            if over:
                break
            last_size2 = size2
            for x, w, h, text in measured:
                if left:
                    rx, ry = tick_stop - off - w, x - h / 2
                else:
                    rx, ry = x - w / 2.0, tick_stop + off
                # pyqtgraph keeps a label when (bounds & rect) == rect: inside the bounds; only a
                # rect on an edge (within float noise) asks Qt's own test
                if b_left <= rx and rx + w <= b_right and b_top <= ry and ry + h <= b_bottom:
                    text_specs.append((QRectF(rx, ry, w, h), flags, text))
                    continue
                if (
                    rx < b_left - 1e-6 * (1 + abs(b_left))
                    or rx + w > b_right + 1e-6 * (1 + abs(b_right))
                    or ry < b_top - 1e-6 * (1 + abs(b_top))
                    or ry + h > b_bottom + 1e-6 * (1 + abs(b_bottom))
                ):
                    continue
                rect = QRectF(rx, ry, w, h)
                if br & rect == rect:
                    text_specs.append((rect, flags, text))
        self._update_max_text_size(last_size2)
        return axis_spec, tick_levels, tick_start, left, text_specs

    def _pen_of(self, attr: str) -> QPen | None:
        """The axis' own pen ``attr`` (``_pen``, ``_tickPen``, ``_textPen``: what ``pen()`` /
        ``tickPen()`` / ``textPen()`` copy through ``mkPen`` per call), None when not set. Only
        read: setting a pen on the painter copies it."""
        pen = self.__dict__.get(attr)
        return pen if isinstance(pen, QPen) else None

    _last_font: tuple | None = None

    def _font_key(self, font: QFont) -> str:
        """``font.key()`` (a string built per call), kept while the font stays equal."""
        hit = FastAxis._last_font
        if hit is not None and hit[0] == font:
            return hit[1]
        key = font.key()
        FastAxis._last_font = (QFont(font), key)
        return key

    def _update_max_text_size(self, size2: float) -> None:
        """pyqtgraph's ``_updateMaxTextSize`` when it would change something: it re-derives the
        axis' height/width and sets the size hints on every paint (~10 us), the same values
        while the label size and text space do not change."""
        vertical = self.orientation in ("left", "right")
        attr = "textWidth" if vertical else "textHeight"
        style = self.style
        what_else = (  # everything else _updateWidth / _updateHeight look at
            style["autoReduceTextSpace"],
            style["autoExpandTextSpace"],
            style["showValues"],
            self.isVisible(),
            self.label.isVisible(),
            self.fixedWidth if vertical else self.fixedHeight,
        )
        if self.__dict__.get("_max_text_key") == (size2, getattr(self, attr), what_else):
            return
        self._updateMaxTextSize(size2)
        self._max_text_key = (size2, getattr(self, attr), what_else)

    def boundingRect(self):  # noqa: N802 - Qt API
        """pyqtgraph's bounds (the geometry, widened for labels past the ends), kept while the
        geometry and the style that widens it are the same: Qt asks ~25 times per zoom step."""
        if self._br_paint is not None:
            return self._br_paint
        if self.grid is not False and self.linkedView() is not None:
            return super().boundingRect()
        geo = self.geometry()
        key = (self.style["tickLength"], self.style["hideOverlappingLabels"], self.orientation)
        hit = self.__dict__.get("_br_memo")
        if hit is not None and hit[0] == geo and hit[1] == key:
            return QRectF(hit[2])
        br = super().boundingRect()
        self._br_memo = (geo, key, QRectF(br))
        return br

    def _tick_lines(self, vertical: bool, tick_start: float, xs: np.ndarray, end: float):
        """``(QLineF pointer, count)`` of a level's ticks from a kept float64 buffer (x1, y1, x2,
        y2 rows): the same lines as a ``QLineF`` per tick, without constructing them."""
        n = xs.size
        buf = self.__dict__.get("_line_buf")
        if buf is None or buf.shape[0] < n:
            buf = self._line_buf = np.empty((max(n, 64), 4))
            self._line_ptr = shiboken6.wrapInstance(buf.ctypes.data, QLineF)
        rows = buf[:n]
        if vertical:
            rows[:, 0] = tick_start
            rows[:, 1] = xs
            rows[:, 2] = end
            rows[:, 3] = xs
        else:
            rows[:, 0] = xs
            rows[:, 1] = tick_start
            rows[:, 2] = xs
            rows[:, 3] = end
        return self._line_ptr, n

    def paint(self, p, opt, widget):
        """Drawn straight onto ``p``: with the device-pixmap cache (``Strip``) Qt calls this only when
        the axis changed, so pyqtgraph's QPicture (recorded, then replayed into the pixmap) was two
        passes for one; the ticks of a level are one ``drawLines`` (pyqtgraph: a setPen and a
        drawLine per tick). Gangnam clip, same-run A/B over 300 ranges (load ~3), pixel-identical:
        bottom axis (40 ticks, 8 labels) 1.58 -> 0.95 ms per paint, left axis 1.31 -> 0.88 ms.
        Then (issue 9 margin) labels measured only up to the fill limit, tick lines from a kept
        buffer, label containment in floats, pens / font key / bounds / text-space update kept:
        Gangnam, the same ranges painted 1,000 times into an image (load ~1.5), bottom axis
        0.47 -> 0.21 ms per paint, left axis 0.27 -> 0.18 ms, same specs and pixels (tests)."""
        if not self._own_layout():
            super().paint(p, opt, widget)
            return
        self.picture = None
        p.save()
        try:
            # the font pyqtgraph's labels got: the QPicture painter's (the application font)
            p.setFont(self.style["tickFont"] or QFont())
            self._br_paint = FastAxis.boundingRect(self)
            lay = self._layout(p)
            if lay is None:
                return
            (pen, p1, p2), levels, tick_start, vertical, text_specs = lay
            p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            p.setPen(pen)
            p.drawLine(p1, p2)
            for tick_pen, xs, end in levels:
                if not xs.size:
                    continue
                p.setPen(tick_pen)
                p.drawLines(*self._tick_lines(vertical, tick_start, xs, end))
            if self.style["tickFont"] is not None:
                p.setFont(self.style["tickFont"])
            p.setPen(self._pen_of("_textPen") or self.textPen())
            p.setClipRect(self._br_paint.toAlignedRect(), Qt.ClipOperation.IntersectClip)
            for rect, flags, text in text_specs:
                p.drawText(rect, int(flags), text)
        finally:
            self._br_paint = None
            p.restore()


class TimeAxis(FastAxis):
    """Bottom axis in seconds, or in frames of ``frame_rate`` (whole-frame tick spacing)."""

    def __init__(self, *a, **kw):
        super().__init__("bottom", *a, **kw)
        self.frames = False
        self.frame_rate = 30.0
        self.enableAutoSIPrefix(False)

    def set_mode(self, frames: bool, frame_rate: float) -> None:
        self.frames, self.frame_rate = bool(frames), float(frame_rate) or 30.0
        self.picture = None
        self.update()

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802,N803 - pyqtgraph API
        if not self.frames:
            return super().tickSpacing(minVal, maxVal, size)
        fr = self.frame_rate
        levels = super().tickSpacing(minVal * fr, maxVal * fr, size)
        out = []
        for spacing, offset in levels:
            s = max(round(spacing), 1)
            if not out or s != round(out[-1][0] * fr):
                out.append((s / fr, offset / fr))
        return out

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph API
        if not self.frames:
            return super().tickStrings(values, scale, spacing)
        return [f"{round(v * self.frame_rate):d}" for v in values]


class Strip:
    """A plot of role ``("euler", ch)``, ``("euler", None)`` (overlay), ``("speed", None)`` or
    ``("quat", None)``, added to ``glw`` at ``row``; ``normalized``: an Euler plot of the Normalize
    view (its axis says so)."""

    def __init__(
        self, glw: pg.GraphicsLayoutWidget, handler: GraphInput, role, row: int, link=None, normalized=False
    ):
        self.role = role
        self.vb = CurveViewBox(handler, role)
        self.time_axis = TimeAxis()
        self.plot: pg.PlotItem = glw.addPlot(
            row=row, col=0, viewBox=self.vb, axisItems={"bottom": self.time_axis, "left": FastAxis("left")}
        )
        p = self.plot
        p.getAxis("left").setWidth(62)
        # Tick labels stay inside the axis: pyqtgraph lets them overhang its ends by 15 px, where the
        # strip below drew over the lowest one (a "-20" cut in half above the speed strip).
        p.getAxis("left").setStyle(hideOverlappingLabels=True)
        for name in ("left", "top", "right"):
            # the hidden top/right axes follow the view too: with SI prefixes on, each range change
            # re-set their label's HTML and re-laid them out (5 setHtml per zoom step)
            p.getAxis(name).enableAutoSIPrefix(False)
        p.setMenuEnabled(False)
        p.hideButtons()
        # 12k-sample curves: draw only what is visible, at most ~2 samples per pixel (peaks kept).
        p.setClipToView(True)
        p.setDownsampling(auto=True, mode="peak")
        # Replaying an axis' cached QPicture costs ~2 ms per axis; a curve edit dirties a region that
        # overlaps the axes, so keep them as device pixmaps (redrawn only when the range changes).
        for name in ("left", "bottom"):
            p.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if link is not None:
            p.setXLink(link)
        if role[0] == "euler":
            # the Normalize view shows each curve mapped onto [-1, 1]: no degrees on that axis
            unit = "normalized" if normalized else "deg"
            label = f"Euler ({unit})" if role[1] is None else f"{CHANNEL_NAMES[role[1]]} ({unit})"
        else:
            label = {"speed": "speed (deg/s)", "quat": "quaternion", "other": "read-only (view)"}[role[0]]
        p.setLabel("left", label)
        self.grid = GridLines(p)
        p.addItem(self.grid, ignoreBounds=True)
        self.cursor = CursorLine(angle=90, movable=True)
        self.cursor.setZValue(1e6)
        p.addItem(self.cursor, ignoreBounds=True)
        # shared items: secondary tracks (batched), their keys, selected keys, handles
        self.multi = MultiCurveItem()
        self.multi.setZValue(4)
        p.addItem(self.multi)
        self.preview_multi = MultiCurveItem(style=Qt.PenStyle.DashLine)
        self.preview_multi.setZValue(14)
        p.addItem(self.preview_multi)
        self.multi_keys = KeyMarkers(SECONDARY_KEY_PX, "#808080")
        self.multi_keys.setZValue(19)
        self.multi_keys.max_per_px = 0.5  # hide dense secondary keys (mocap: one per frame) until zoomed
        p.addItem(self.multi_keys)
        self.selected = KeyMarkers(SELECTED_PX, "#e08e00", "#000000")
        self.selected.setZValue(30)
        p.addItem(self.selected, ignoreBounds=True)
        self.handle_line = SteadyCurve(connect="pairs", hide_empty=True)
        self.handle_line.setZValue(25)
        # tangent handle ends: small solid dots, unlike the keys' rings and squares
        self.handle_pts = KeyMarkers(5, "#404040")
        self.handle_pts.setZValue(26)
        p.addItem(self.handle_line, ignoreBounds=True)
        p.addItem(self.handle_pts, ignoreBounds=True)
        self.legend = LegendOverlay(self.vb)
        self.legend.setVisible(False)
        self.note = pg.TextItem(anchor=(0, 0))
        self.note.setParentItem(self.vb)
        self.note.setPos(4, 2)
        self.note.setZValue(1e8)
        self.hover_label = pg.TextItem(anchor=(0, 1))
        self.hover_label.setZValue(1e8)
        self.hover_label.setVisible(False)
        p.addItem(self.hover_label, ignoreBounds=True)
        self._skip_empty_items(glw)
        self.fixed = {
            self.grid,
            self.cursor,
            self.multi,
            self.preview_multi,
            self.multi_keys,
            self.selected,
            self.handle_line,
            self.handle_pts,
            self.hover_label,
        }

    def _skip_empty_items(self, glw: pg.GraphicsLayoutWidget) -> None:
        """Items of pyqtgraph's plot that draw nothing here are hidden or flagged as having no
        contents, so Qt asks neither their bounds (Python for pyqtgraph's widgets) nor their paint
        on each repaint: the view box's and the layout cell's border rects (no pen), the plot and
        the layout (QGraphicsWidgets painting nothing; they still take events and lay out their
        children). Not the view box: it clips its children, and Qt skips a clipping item's
        subtree outside the repainted region only when the item itself has contents."""
        no_pen = Qt.PenStyle.NoPen
        if self.vb.borderRect.pen().style() == no_pen:
            self.vb.borderRect.setVisible(False)
        cell = glw.ci.itemBorders.get(self.plot)
        if cell is not None and cell.pen().style() == no_pen:
            cell.setVisible(False)
        no_contents = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
        self.plot.setFlag(no_contents, True)
        glw.ci.setFlag(no_contents, True)

    @property
    def is_euler(self) -> bool:
        return self.role[0] == "euler"

    def channels(self):
        return self.vb.channels()

    def clear_track_items(self, keep=()) -> None:
        """Remove every per-track item (keeps the shared ones and ``keep``)."""
        keep = set(keep)
        for item in list(self.plot.items):
            if item not in self.fixed and item not in keep:
                self.plot.removeItem(item)

    def fit(self, values_only: bool = True) -> None:
        """Fit the view to its items' bounds once (the values, or both axes), auto-range off after."""
        self.plot.enableAutoRange(axis=pg.ViewBox.YAxis if values_only else None)
        self.vb.updateAutoRange()
        self.plot.disableAutoRange()

    def set_note(self, text: str, theme: Theme) -> None:
        self.note.setText(text, color=theme.plot_fg)
        self.note.setVisible(bool(text))

    def apply_theme(self, theme: Theme) -> None:
        fg = theme.plot_fg
        for ax in ("left", "bottom"):
            a = self.plot.getAxis(ax)
            a.setPen(fg)
            a.setTextPen(fg)
        self.plot.showGrid(x=False, y=False)  # GridLines draws it (see there: 3x faster repaints)
        self.grid.set_colours(theme.plot_bg, theme.plot_fg, theme.grid_alpha)
        self.cursor.setPen(pg.mkPen(theme.cursor, width=1.5))
        self.cursor.setHoverPen(pg.mkPen(theme.key_selected, width=2.5))
        self.selected.fill = QColor(theme.key_selected)
        self.selected.outline = QColor(theme.key_selected_outline)
        self.handle_line.setPen(pg.mkPen(theme.handle, width=1))
        self.handle_pts.fill = QColor(theme.handle)
        kc = QColor(theme.key)
        kc.setAlpha(190)
        self.multi_keys.fill = kc
        self.hover_label.setColor(fg)
        self.hover_label.fill = pg.mkBrush(QColor(theme.plot_bg))


def export_scene(glw: pg.GraphicsLayoutWidget, path: str) -> None:
    """Write the graphs as PNG or SVG (by extension) with pyqtgraph's exporters.

    pyqtgraph's SVG exporter cannot parse closed sub-paths (the gimbal bands); when it fails the
    scene is rendered through Qt's own SVG generator instead.
    """
    from pyqtgraph.exporters import ImageExporter, SVGExporter

    scene = glw.scene()
    if not path.lower().endswith(".svg"):
        exp = ImageExporter(scene)
        exp.parameters()["width"] = max(int(glw.width()), 800)
        exp.export(path)
        return
    try:
        SVGExporter(scene).export(path)
    except (ValueError, IndexError):
        from PySide6.QtGui import QPainter
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setFileName(path)
        gen.setSize(glw.size())
        gen.setViewBox(glw.rect())
        gen.setTitle("curveeditor graphs")
        painter = QPainter(gen)
        glw.render(painter)
        painter.end()
