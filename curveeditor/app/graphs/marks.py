"""What the graphs draw over the curves: the selected keys and their tangent handles, the gimbal-lock
bands and problem markers of the primary track, the legend of the drawn tracks, the cap note and the
live label beside a dragged key.
Nothing here handles input (:mod:`.input`) or decides when to redraw (:class:`~.panel.GraphPanel`
maps the document's signals to these calls).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from ..model.problems import KIND_LABELS
from .host import GraphHost
from .sampling import Sampled
from .track_drawer import MAX_DRAWN_TRACKS

__all__ = ["Marks", "HANDLE_PX", "MAX_HANDLE_KEYS", "BIG"]

HANDLE_PX = 45.0  # length of an unweighted tangent handle on screen (pixels)
MAX_HANDLE_KEYS = 64  # more selected keys per track than this: no handles drawn
#: more selected keys over all drawn tracks than this: no handles drawn (a dope-sheet box over 100
#: drawn BVH joints x 61 keys made 36,600 handles, 0.45 s per refresh in Python, unreadable anyway)
MAX_HANDLE_TOTAL = 512
BIG = 1e7  # half-height of vertical markers (ignored by auto-range)
DRAG_LABEL_PX = 14.0  # the drag label's corner is this far (px, both axes) from the dragged key


def _band_item() -> QGraphicsPathItem:
    item = QGraphicsPathItem()
    item.setPen(QPen(Qt.PenStyle.NoPen))
    item.setZValue(-10)
    return item


def _marker_item(kind: str) -> pg.PlotDataItem:
    item = pg.PlotDataItem()
    item.setZValue(-5)
    item.setToolTip(KIND_LABELS.get(kind, kind))
    return item


def _set_markers(item, x: np.ndarray, y: np.ndarray) -> None:
    """``item.setData(x, y)`` (a :class:`~.items.KeyMarkers`) unless it shows exactly these."""
    old_x, old_y = item.getData()
    if not (np.array_equal(old_x, x) and np.array_equal(old_y, y)):
        item.setData(x, y)


class Marks:
    """Selection, handles, problem marks and legend of a :class:`~.panel.GraphPanel`."""

    def __init__(self, panel: GraphHost):
        self.panel = panel
        self.doc = panel.doc
        self.handle_points: list[tuple] = []  # (view box, path, key, channel, side, x, y)
        self.bands: list[tuple[pg.PlotItem, QGraphicsPathItem]] = []
        self.markers: list[pg.PlotDataItem] = []
        # Unweighted handles have a fixed length in pixels: re-place them after zoom/pan (coalesced).
        self._handle_timer = QTimer(panel)
        self._handle_timer.setSingleShot(True)
        self._handle_timer.setInterval(0)
        self._handle_timer.timeout.connect(self.update_handles)

    @property
    def strips(self):
        return self.panel.strips

    @property
    def theme(self):
        return self.panel.theme

    def forget(self) -> None:
        """The per-track items were removed from the plots (a rebuild); the pooled band and marker
        items live on in their strips (``_pooled``) and are re-filled."""
        self.bands, self.markers = [], []

    def on_range_changed(self) -> None:
        if self.handle_points or any(self.doc.selected_keys.values()):
            self._handle_timer.start()

    @staticmethod
    def _pooled(strip, key, make):
        """The strip's item for ``key``, made and added once: a selection change re-fills them
        (creating a PlotDataItem costs ~1.5-3 ms; a track with problems made one per kind and plot
        on every selection). Strips are rebuilt with the layout, and their pools with them."""
        pool = strip.__dict__.setdefault("_mark_pool", {})
        item = pool.get(key)
        if item is None:
            item = make()
            strip.plot.addItem(item, ignoreBounds=True)
            if isinstance(item, pg.PlotDataItem):
                # after addItem, which applies the plot's settings: clipping would split the (x, x)
                # pairs of the markers
                item.setClipToView(False)
                item.setDownsampling(ds=1, auto=False)
            strip.fixed.add(item)  # kept by Strip.clear_track_items
            pool[key] = item
        return item

    def update_bands(self, s: Sampled) -> None:
        self.bands = []
        g = s.samples.gimbal
        t = s.samples.times
        col = QColor(self.theme.gimbal_band)
        for level, alpha in ((0.5, col.alpha()), (0.9, min(255, col.alpha() * 2))):
            mask = g >= level if g.size else np.zeros(0, dtype=bool)
            path = None
            if np.any(mask):
                edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
                starts = np.nonzero(edges == 1)[0]
                ends = np.nonzero(edges == -1)[0] - 1
                path = QPainterPath()
                for a, b in zip(starts, ends, strict=True):
                    t0 = t[max(a - 1, 0)]
                    t1 = t[min(b + 1, len(t) - 1)]
                    path.addRect(QRectF(t0, -BIG, max(t1 - t0, 1e-6), 2 * BIG))
            c = QColor(col)
            c.setAlpha(alpha)
            for strip in self.strips:
                if path is None:
                    item = strip.__dict__.get("_mark_pool", {}).get(("band", level))
                    if item is not None:
                        item.hide()
                    continue
                item = self._pooled(strip, ("band", level), _band_item)
                item.setPath(path)
                item.setBrush(c)
                item.show()
                self.bands.append((strip.plot, item))

    def update_markers(self) -> None:
        self.markers = []
        path = self.panel.primary()
        by_kind: dict[str, list[float]] = {}
        if path is not None and self.panel.problems is not None:
            for p in self.panel.problems.problems(path):
                if p.kind != "gimbal":
                    by_kind.setdefault(p.kind, []).append(p.time)
        for strip in self.strips:
            for (what, kind), item in strip.__dict__.get("_mark_pool", {}).items():
                if what == "marker" and kind not in by_kind:
                    item.hide()
        for kind, times in by_kind.items():
            t = np.repeat(np.asarray(times), 2)
            y = np.tile([-BIG, BIG], len(times))
            c = QColor(self.theme.problems[kind])
            c.setAlpha(170)
            for strip in self.strips:
                item = self._pooled(strip, ("marker", kind), lambda kind=kind: _marker_item(kind))
                item.setData(t, y, connect="pairs", pen=pg.mkPen(c, width=1, style=Qt.PenStyle.DashLine))
                item.show()
                self.markers.append(item)

    def update_selection(self) -> None:
        """Selected keys of every drawn track on the curves they are selected on (one marker item
        per plot), then their handles."""
        sel = self.doc.key_selection
        for s in self.strips:
            if not s.is_euler:
                continue
            xs, ys = [], []
            for path in self.panel.drawn_paths():
                if path not in self.doc.selected_keys:
                    continue
                try:
                    s_kt, s_kv = self.panel.display_keys(path)
                except KeyError:
                    continue
                for ch in s.channels():
                    got = sel.get((path, ch))
                    if not got:
                        continue
                    idx = np.fromiter(got, dtype=np.int64, count=len(got))
                    xs.append(s_kt[idx])
                    ys.append(s_kv[idx, ch])
            if xs:
                x, y = np.concatenate(xs), np.concatenate(ys)
                order = np.argsort(x, kind="stable")
                _set_markers(s.selected, x[order], y[order])
            else:
                _set_markers(s.selected, np.zeros(0), np.zeros(0))
        self.update_handles()

    def update_handles(self) -> None:
        """Tangent handles of the selected keys (Euler tracks, at most MAX_HANDLE_KEYS per track and
        MAX_HANDLE_TOTAL over the drawn tracks);
        cleared whenever no key is selected (after a track switch or a load too)."""
        self.handle_points = []
        per_vb: dict[int, tuple[list, list, list, list]] = {
            id(s.vb): ([], [], [], []) for s in self.strips if s.is_euler
        }
        drawn = self.panel.drawn_paths()
        if sum(len(self.doc.selected_keys.get(p, ())) for p in drawn) > MAX_HANDLE_TOTAL:
            drawn = []
        for path in drawn:
            n_sel = len(self.doc.selected_keys.get(path, ()))
            if not n_sel or n_sel > MAX_HANDLE_KEYS:
                continue
            try:
                tr = self.doc.clip.track(path)
            except KeyError:
                continue
            if tr.kind != "euler":
                continue  # quaternion slopes have no direction in the Euler view
            c = tr.curve
            for s in self.strips:
                if not s.is_euler:
                    continue
                px, py = s.vb.viewPixelSize()
                if not (px > 0 and py > 0):
                    continue
                xs, ys, hx, hy = per_vb[id(s.vb)]
                for ch in s.channels():
                    idx = sorted(self.doc.channel_keys(path, ch))
                    if not idx:
                        continue
                    f = self.panel.value_factor(path, ch)
                    for i in idx:
                        t = float(c.time[i])
                        v = float(self.panel.to_display(path, np.array([c.value[i, ch]]), ch)[0])
                        for side in ("in", "out"):
                            end = self.handle_end(c, i, ch, side, px, py, v, f)
                            if end is None:
                                continue
                            xs += [t, end[0]]
                            ys += [v, end[1]]
                            hx.append(end[0])
                            hy.append(end[1])
                            self.handle_points.append((s.vb, path, i, ch, side, end[0], end[1]))
        for s in self.strips:
            if not s.is_euler:
                continue
            xs, ys, hx, hy = per_vb[id(s.vb)]
            # Items whose data did not change are not set again (no repaint): a key dragged in
            # one channel leaves the other plots' markers and handles where they are, and those
            # plots unpainted (Gangnam BVH: 4 plots repainted per drag step, now 2).
            x, y = np.array(xs, dtype=float), np.array(ys, dtype=float)
            old_x, old_y = s.handle_line.xData, s.handle_line.yData
            if old_x is None or not (np.array_equal(old_x, x) and np.array_equal(old_y, y)):
                if xs or (old_x is not None and len(old_x)):
                    s.handle_line.setData(x, y, connect="pairs")
            _set_markers(s.handle_pts, np.array(hx, dtype=float), np.array(hy, dtype=float))

    @staticmethod
    def handle_end(c, i, ch, side, px, py, v=None, factor=1.0):
        """Handle end point (display coords; ``v`` the drawn key value, ``factor`` display units per
        degree): weighted sides at weight x interval, others HANDLE_PX long."""
        n = c.n_keys
        slope = float(c.in_slope[i, ch] if side == "in" else c.out_slope[i, ch]) * factor
        if not np.isfinite(slope):
            return None
        t = float(c.time[i])
        v = float(c.value[i, ch]) if v is None else v
        sign = -1.0 if side == "in" else 1.0
        weighted = bool(c.weighted_mode[i, ch] & (1 if side == "in" else 2))
        if weighted:
            j = i - 1 if side == "in" else i + 1
            if 0 <= j < n:
                dt = abs(float(c.time[j]) - t) * float(
                    c.in_weight[i, ch] if side == "in" else c.out_weight[i, ch]
                )
                return t + sign * dt, v + sign * slope * dt
        # fixed screen length along the tangent direction
        dxp, dyp = 1.0 / px, slope / py
        norm = np.hypot(dxp, dyp)
        k = HANDLE_PX / norm
        return t + sign * k, v + sign * slope * k

    def update_legend(self) -> None:
        """Legend of the drawn tracks (more than one) beside the plots (``panel.side_legend``), and
        the cap note in the first plot."""
        if not self.strips:
            return
        first = self.strips[0]
        n_sel, n_drawn = len(self.doc.selected_paths), len(self.panel.drawn_paths())
        note = ""
        if n_sel > n_drawn:
            note = f"{n_drawn} of {n_sel} selected tracks drawn (limit {MAX_DRAWN_TRACKS})"
        solo = getattr(getattr(self.panel, "solo", None), "curves", None)
        if solo:
            shown = f"Isolate: {len(solo)} curve{'s' if len(solo) > 1 else ''} drawn (Alt+H: all)"
            note = f"{note} · {shown}" if note else shown
        for s in self.strips:
            s.set_note(note if s is first else "", self.theme)
            s.legend.clear()  # (a hidden legend keeps no entries to redraw over another clip)
            s.legend.setVisible(False)  # the in-plot legend covered the curves: the side legend
        entries = []
        if n_drawn > 1:
            for p in self.panel.drawn_paths():
                cols = self.panel.colours(p)
                entries.append((p.rsplit("/", 1)[-1] or p, cols if self.panel.overlay else (cols[1],), p))
        legend = getattr(self.panel, "side_legend", None)
        if legend is not None:
            legend.set_entries(entries)

    def hide_hover(self) -> None:
        for s in self.panel.strips:
            s.hover_label.setVisible(False)

    def show_drag_label(self, vb, path: str, index: int, channel: int | None) -> None:
        """During a key drag: the grabbed key's live time and value, beside the key (never over
        it: ``DRAG_LABEL_PX`` right of and above it, mirrored near the plot's right / top edge)."""
        strip = next((s for s in self.panel.strips if s.vb is vb), None)
        if strip is None:
            return
        for o in self.panel.strips:
            if o is not strip:
                o.hover_label.setVisible(False)
        try:
            tr = self.doc.clip.track(path)
            kt, kv = self.panel.display_keys(path)
        except KeyError:
            return
        if not (0 <= index < kt.size):
            return
        ch = 0 if channel is None else channel
        t, y = float(kt[index]), float(kv[index, ch])
        real = self.panel.from_display(path, ch, y)
        name = path.rsplit("/", 1)[-1] or path
        ch_name = ("X", "Y", "Z")[ch] if ch < 3 else "?"
        text = f"{name} · {ch_name} {real:.2f}° at {self.panel.time_text(t)}"
        if tr.kind == "quaternion":
            text += " (display Euler)"
        px, py = vb.viewPixelSize()
        (x0, x1), (y0, y1) = vb.viewRange()
        right = t > 0.5 * (x0 + x1)
        top = y > y1 - 0.3 * (y1 - y0)
        dx = -DRAG_LABEL_PX * px if right else DRAG_LABEL_PX * px
        dy = -DRAG_LABEL_PX * py if top else DRAG_LABEL_PX * py
        strip.hover_label.setText(text)
        strip.hover_label.setAnchor((1 if right else 0, 0 if top else 1))
        strip.hover_label.setPos(t + dx, y + dy)
        strip.hover_label.setVisible(True)

    def legend_lines(self) -> list[str]:
        """The legend's text lines ([] when no legend is shown or it is folded)."""
        legend = getattr(self.panel, "side_legend", None)
        return [] if legend is None else legend.text_lines()

    def note_text(self) -> str:
        n = self.strips[0].note if self.strips else None
        return n.textItem.toPlainText() if n is not None and n.isVisible() else ""
