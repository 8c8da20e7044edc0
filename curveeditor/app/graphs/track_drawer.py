"""What the graphs draw of the tracks themselves: the fully drawn primary track's items (curves, keys,
speed, quaternion components), the batched secondary tracks, the ghost of the track as loaded, the
recipe preview and the read-only curves. Nothing here handles input (:mod:`.input`) or decides
when to redraw (:class:`~.panel.GraphPanel` maps the document's signals to these calls).

The primary (first selected) track gets its own items, reused from one selection to the next
(creating a pyqtgraph curve costs ~3 ms); its ghost, preview, gimbal bands and problem markers are
drawn. The other tracks, and their previews, are batched into :class:`~.items.MultiCurveItem` s
(one per plot). Values go through the panel's display units (``GraphPanel.to_display``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor

from curveeditor.engine.clip import RotationTrack
from curveeditor.engine.curves import evaluate

from .host import GraphHost
from .input import CurveViewBox
from .items import KeyMarkers, curve_item, set_curve_cache, set_if_changed, track_colors
from .sampling import dense_times_of, same_map

__all__ = ["TrackItems", "TrackDrawer", "FULL_TRACKS", "MAX_DRAWN_TRACKS", "LIVE_BATCH_MS", "KEY_PX"]

FULL_TRACKS = 1  # selected tracks drawn with their own items (the rest batched)
MAX_DRAWN_TRACKS = 100  # selected tracks drawn at all (the plot says so past it)
LIVE_BATCH_MS = 250  # mid-drag refresh interval of the batched secondary tracks (ms)
VIEW_REST_MS = 300  # curve pixmaps come back this long after the last zoom / pan step (ms)
_NONE = np.zeros(0)  # a hidden curve's keys (Isolate / Solo)
KEY_PX = 5  # an unselected key: a 1-px ring around this many px of plot background (7 px in all)


class TrackItems:
    """The graphics items of one fully drawn track (``FULL_TRACKS`` first selected)."""

    def __init__(self):
        self.curves: list[tuple[pg.PlotDataItem, int]] = []  # (item, channel)
        self.keys: list[tuple[KeyMarkers, int, CurveViewBox]] = []
        self.speed: pg.PlotDataItem | None = None
        self.quat: list[pg.PlotDataItem] = []
        self.preview: list[tuple[pg.PlotDataItem, str, int]] = []  # (item, "euler"/"speed"/"quat", ch)
        self.preview_track: RotationTrack | None = None  # the preview track drawn by ``preview``
        self.ghost: list[tuple[pg.PlotDataItem, str, int]] = []
        self.ghost_track: RotationTrack | None = None
        self.ghost_map: tuple | None = None  # the Normalize map its Euler curves were drawn with


class TrackDrawer:
    """Draws the selected tracks into the panel's strips (see the module docstring)."""

    def __init__(self, panel: GraphHost):
        self.panel = panel
        self.doc = panel.doc
        self.cache = panel.cache
        self.items: dict[str, TrackItems] = {}
        self._pool: TrackItems | None = None  # the primary's base items, reused across selections
        self.preview_redraws = 0  # preview tracks (re)drawn (tests)
        self.batched_updates = 0  # tests
        # Mid-drag the batched secondary tracks follow at most every LIVE_BATCH_MS (a dope-sheet
        # drag moves keys of every drawn track: re-sampling 31 x 2,752-key tracks per mouse move
        # cost 130 ms); the drag's end redraws them at once. The primary track stays live.
        self._batch_timer = QTimer(panel)
        self._batch_timer.setSingleShot(True)
        self._batch_timer.setInterval(LIVE_BATCH_MS)
        self._batch_timer.timeout.connect(self.update_batched)
        # Curve pixmaps off while the view moves, back on once it rested VIEW_REST_MS
        self._cache_timer = QTimer(panel)
        self._cache_timer.setSingleShot(True)
        self._cache_timer.setInterval(VIEW_REST_MS)
        self._cache_timer.timeout.connect(lambda: self.set_caching(True))

    @property
    def strips(self):
        return self.panel.strips

    @property
    def theme(self):
        return self.panel.theme

    def forget(self) -> None:
        """The plots were rebuilt: every item is gone, the pooled ones too."""
        self._pool = None
        self.items = {}

    def curve_items(self):
        """Every per-track curve item drawn (curves, speed, quaternion, ghost, preview)."""
        for it in self.items.values():
            yield from (c for c, _ch in it.curves)
            if it.speed is not None:
                yield it.speed
            yield from it.quat
            yield from (c for c, where, _ch in it.ghost + it.preview if where != "keys")

    def view_moved(self) -> None:
        """A zoom / pan step (or any view range change): curves straight until the view rests."""
        self.set_caching(False)
        self._cache_timer.start()

    def set_caching(self, on: bool) -> None:
        """Curves through device pixmaps (``on``) or straight (while the view moves): see
        :func:`~.items.set_curve_cache`."""
        for item in self.curve_items():
            set_curve_cache(item, on)

    def draw(self, full_paths: list[str]) -> None:
        """Redraw every selected track (selection change, load, layout change): the fully drawn
        ``full_paths`` (the first is the primary), the batched rest and the preview."""
        pool = self._pool
        keep = [] if pool is None else [i for i, *_ in pool.curves] + [k for k, *_ in pool.keys]
        if pool is not None:
            keep += ([pool.speed] if pool.speed is not None else []) + pool.quat
        for s in self.strips:
            s.clear_track_items(keep)
        self.items = {}
        for i, path in enumerate(full_paths):
            self.items[path] = self._track_items(path, primary=(i == 0))
        for path in full_paths:
            self.update_track(path)
        self.update_batched()
        self.update_preview()

    def after_edit(self, drawn: list[str]) -> None:
        """``drawn`` tracks changed (an edit or a drag step): their items now, the batched ones at
        once or, mid-drag, throttled."""
        for p in drawn:
            self.update_track(p)
        if any(p not in self.items for p in drawn):
            if self.doc.in_live_edit():
                if not self._batch_timer.isActive():
                    self._batch_timer.start()
            else:
                self.update_batched()
        elif not self.doc.in_live_edit() and self._batch_timer.isActive():
            self.update_batched()  # a drag ended without touching the batched tracks again
        if drawn and self.doc.preview is not None:
            self.update_preview()

    def pen(self, path: str, ch: int, primary: bool, width=1.6):
        many = len(self.panel.hues) > 1
        colour = self.panel.colours(path)[ch if (self.panel.overlay or not many) else 1]
        c = QColor(colour)
        if not primary and not many:
            c.setAlpha(130)
        return pg.mkPen(c, width=width if primary else 1.0)

    def _track_items(self, path: str, primary: bool) -> TrackItems:
        """The primary track's items: the pooled ones re-coloured, or new ones the first time."""
        pool = self._pool
        if pool is None or not primary:
            it = self._make_track_items(path, primary)
            if primary:
                self._pool = it
            return it
        pool.ghost, pool.ghost_track, pool.preview, pool.preview_track = [], None, [], None
        for curve, ch in pool.curves:
            curve.setPen(self.pen(path, ch, True))
            curve._ce_xy = None
        for keys, _ch, _vb in pool.keys:
            keys.fill, keys.outline = QColor(self.theme.plot_bg), QColor(self.theme.key)
            keys._sprite_key = None
        if pool.speed is not None:
            pool.speed.setPen(pg.mkPen(self._speed_colour(path), width=1.4))
            pool.speed._ce_xy = None
        for q in pool.quat:
            q._ce_xy = None
        return pool

    def _speed_colour(self, path: str) -> QColor:
        return QColor(self.theme.speed if not self.panel.hues else self.panel.colours(path)[1])

    def _make_track_items(self, path: str, primary: bool) -> TrackItems:
        it = TrackItems()
        for s in self.strips:
            p = s.plot
            if s.is_euler:
                for ch in s.channels():
                    curve = curve_item(pen=self.pen(path, ch, primary))
                    curve.setZValue(10 if primary else 5)
                    p.addItem(curve)
                    it.curves.append((curve, ch))
                    # unselected keys: rings of the theme's key colour (selected: Strip.selected);
                    # rings closer than their own width would merge into a band: dots then
                    keys = KeyMarkers(KEY_PX if primary else KEY_PX - 2, self.theme.plot_bg, self.theme.key)
                    keys.setZValue(20)
                    keys.dense_per_px = 1.0 / (KEY_PX + 4)
                    p.addItem(keys)
                    it.keys.append((keys, ch, s.vb))
            elif s.role[0] == "speed":
                c = self._speed_colour(path)
                if not primary:
                    c.setAlpha(120)
                it.speed = curve_item(pen=pg.mkPen(c, width=1.4 if primary else 1.0))
                it.speed.setZValue(10)
                p.addItem(it.speed)
            elif s.role[0] == "quat":
                for k in range(4):
                    c = QColor(self.theme.channels[k])
                    if not primary:
                        c.setAlpha(120)
                    q = curve_item(pen=pg.mkPen(c, width=1.3))
                    q.setZValue(10)
                    p.addItem(q)
                    it.quat.append(q)
        return it

    def window(self) -> tuple[float, float] | None:
        if self.doc.in_live_edit() and self.strips:
            # mid-drag: coarse samples, spliced from the previous step's (SampleCache; only what is
            # visible, + a margin, for a one-key track); the drag's end has the full samples
            x0, x1 = self.strips[0].vb.viewRange()[0]
            pad = 0.25 * (x1 - x0)
            return (x0 - pad, x1 + pad)
        return None

    def update_track(self, path: str) -> None:
        it = self.items.get(path)
        if it is None:
            return
        try:
            tr = self.doc.clip.track(path)
        except KeyError:
            return
        s = self.cache.get(tr, self.window())
        shown = self.panel.curve_shown
        for curve, ch in it.curves:
            curve.setVisible(shown(path, ch))
            set_if_changed(curve, s.samples.times, self.panel.to_display(path, s.samples.euler[:, ch], ch))
        kv = self.panel.to_display(path, s.key_values)
        for keys, ch, _vb in it.keys:
            x, y = (s.key_times, kv[:, ch]) if shown(path, ch) else (_NONE, _NONE)
            old = keys.getData()
            if not (np.array_equal(old[0], x) and np.array_equal(old[1], y)):
                keys.setData(x, y)
        if it.speed is not None:
            set_if_changed(it.speed, s.samples.times, s.samples.speed)
        for k, q in enumerate(it.quat):
            set_if_changed(q, s.samples.times, s.samples.quat[:, k])
        self._update_ghost(path, tr, it)
        if path == self.panel.primary():
            self.panel.marks.update_bands(s)

    def update_batched(self) -> None:
        """The secondary tracks (past ``FULL_TRACKS``): one batched curve item and one key item per plot.

        Mid-drag (throttled to ``LIVE_BATCH_MS``) the Euler plots draw each secondary track through
        its keys (the engine's key values, nothing sampled) and the speed / quaternion strips keep
        their curves; the drag's end draws the sampled curves again. Sampling 30 mocap tracks per
        refresh cost ~170 ms, longer than the throttle interval, so every dope-sheet step paid it."""
        self._batch_timer.stop()
        self.batched_updates += 1
        live = self.doc.in_live_edit()
        rest = self.panel.drawn_paths()[FULL_TRACKS:]
        per: dict[int, list] = {id(s): [] for s in self.strips}
        keys: dict[int, tuple[list, list]] = {id(s): ([], []) for s in self.strips}
        for path in rest:
            try:
                tr = self.doc.clip.track(path)
            except KeyError:
                continue
            cols = self.panel.colours(path)
            if live:
                kt, kv = self.cache.keys(tr)
                kv = self.panel.to_display(path, kv)
                for s in self.strips:
                    if s.is_euler:
                        for ch in (c for c in s.channels() if self.panel.curve_shown(path, c)):
                            per[id(s)].append((kt, kv[:, ch], cols[ch] if self.panel.overlay else cols[1]))
                            keys[id(s)][0].append(kt)
                            keys[id(s)][1].append(kv[:, ch])
                continue
            smp = self.cache.get(tr, coarse=True)
            kv = self.panel.to_display(path, smp.key_values)
            for s in self.strips:
                per[id(s)].extend(self._sampled_curves(s, path, smp, cols))
                if s.is_euler:
                    for ch in (c for c in s.channels() if self.panel.curve_shown(path, c)):
                        keys[id(s)][0].append(smp.key_times)
                        keys[id(s)][1].append(kv[:, ch])
        for s in self.strips:
            if s.role[0] == "other" or (live and not s.is_euler):
                continue  # read-only curves: _update_other; mid-drag strips: kept until the end
            s.multi.setCurves(per[id(s)])
            kx, ky = keys[id(s)]
            if kx:
                x, y = np.concatenate(kx), np.concatenate(ky)
                order = np.argsort(x, kind="stable")
                s.multi_keys.setData(x[order], y[order])
            else:
                s.multi_keys.clear()

    def _update_ghost(self, path: str, tr: RotationTrack, it: TrackItems) -> None:
        """Draw the track as loaded behind the edited one (kept while the original is unchanged)."""
        orig = self.panel.units.ghost_of(path)
        want = orig is not None
        dmap = self.panel.display_map(path)  # drawn again when an edit changed the Normalize map
        if want and it.ghost and it.ghost_track is orig and same_map(it.ghost_map, dmap):
            return
        for item, where, _ch in it.ghost:
            self._plot_for(where, item).removeItem(item)
        it.ghost = []
        it.ghost_track = None
        if want:
            it.ghost = self._overlay_items(path, orig, self.theme.original, Qt.PenStyle.DotLine, z=3)
            it.ghost_track = orig
            it.ghost_map = dmap

    def _overlay_items(self, path: str, track: RotationTrack, color: str | None, style, z: float, width=1.0):
        """Dotted / dashed curves of ``track`` (the ghost, the preview), 1 px wide: Qt strokes wider
        non-solid pens through its dash and path strokers, a 6,000-point dotted curve in 8 ms at
        1.3 px against 0.3 ms at 1 px (the ghost of an edited track is re-stroked on every drag step)."""
        s = self.cache.get(track)
        out = []
        for strip in self.strips:
            p = strip.plot
            if strip.is_euler:
                for ch in strip.channels():
                    pen = pg.mkPen(color or self.pen(path, ch, True).color(), width=width, style=style)
                    item = curve_item(pen=pen)
                    item.setZValue(z)
                    p.addItem(item)
                    item.setData(s.samples.times, self.panel.to_display(path, s.samples.euler[:, ch], ch))
                    out.append((item, "euler", ch))
            elif strip.role[0] == "speed":
                pen = pg.mkPen(color or self.theme.speed, width=width, style=style)
                item = curve_item(pen=pen)
                item.setZValue(z)
                # the speed strip ranges on the current curve: the ghost of a fixed 15,000 deg/s spike
                # (or a preview's) must not keep it at the old scale
                p.addItem(item, ignoreBounds=True)
                item.setData(s.samples.times, s.samples.speed)
                out.append((item, "speed", 0))
            elif strip.role[0] == "quat":
                for k in range(4):
                    pen = pg.mkPen(color or self.theme.channels[k], width=width, style=style)
                    item = curve_item(pen=pen)
                    item.setZValue(z)
                    p.addItem(item)
                    item.setData(s.samples.times, s.samples.quat[:, k])
                    out.append((item, "quat", k))
        return out

    def _plot_for(self, where: str, item) -> pg.PlotItem:
        if where in ("speed", "quat"):
            return self.panel.strip_of(where).plot
        for p in self.panel.euler_plots:
            if item in p.items:
                return p
        return self.panel.euler_plots[0]

    def update_preview(self) -> None:
        """Dashed "after" curves of the fully drawn tracks the preview changes. Only tracks whose
        preview track object changed are touched, and existing items get ``setData`` (no remove/add,
        which would relayout the plots) so a recipe parameter change redraws just the affected curves.
        Keys a preview adds or moves (reduce, resample) are drawn as hollow markers."""
        prev = self.doc.preview
        for path, it in self.items.items():
            ptr = None
            if prev is not None:
                try:
                    ptr = prev.track(path)
                except KeyError:
                    ptr = None
                if ptr is not None and ptr is self.doc.clip.track(path):
                    ptr = None
            if ptr is it.preview_track and bool(it.preview) == (ptr is not None):
                continue
            it.preview_track = ptr
            if ptr is not None and it.preview:
                s = self.cache.get(ptr)
                for item, where, ch in it.preview:
                    if where == "euler":
                        item.setData(s.samples.times, self.panel.to_display(path, s.samples.euler[:, ch], ch))
                    elif where == "quat":
                        item.setData(s.samples.times, s.samples.quat[:, ch])
                    elif where == "speed":
                        item.setData(s.samples.times, s.samples.speed)
                    elif where == "keys":
                        item.setData(s.key_times, self.panel.to_display(path, s.key_values[:, ch], ch))
                self.preview_redraws += 1
                continue
            for item, where, _ch in it.preview:
                plot = self._plot_for("euler" if where == "keys" else where, item)
                if plot is not None:
                    plot.removeItem(item)
            it.preview = []
            if ptr is not None:
                # 1-px dashes: Qt's raster engine strokes wider dashed pens through its path
                # stroker, ~3 ms per 50 s curve (measured: preview drawing 45 -> 21 ms).
                it.preview = self._overlay_items(path, ptr, None, Qt.PenStyle.DashLine, z=15, width=1.0)
                s = self.cache.get(ptr)
                for strip in self.strips:
                    if not strip.is_euler:
                        continue
                    for ch in strip.channels():
                        km = KeyMarkers(5, self.theme.plot_bg, self.pen(path, ch, True).color().name())
                        km.setZValue(18)
                        strip.plot.addItem(km)
                        km.setData(s.key_times, self.panel.to_display(path, s.key_values[:, ch], ch))
                        it.preview.append((km, "keys", ch))
                self.preview_redraws += 1
            if ptr is not None:
                self._frame_preview(path, ptr)
        self._update_batched_preview()

    def _frame_preview(self, path: str, ptr: RotationTrack) -> None:
        """Grow the Euler plots' value range to hold the preview (an unwrap moving a curve by
        360 degrees left it outside the view): the preview is framed, the view never shrinks."""
        s = self.cache.get(ptr)
        for strip in self.strips:
            if not strip.is_euler:
                continue
            vals = np.concatenate(
                [self.panel.to_display(path, s.samples.euler[:, ch], ch) for ch in strip.channels()]
            )
            lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
            vlo, vhi = strip.vb.viewRange()[1]
            if lo < vlo or hi > vhi:
                nlo, nhi = min(lo, vlo), max(hi, vhi)
                pad = 0.05 * (nhi - nlo)
                lo_pad, hi_pad = (pad if lo < vlo else 0.0), (pad if hi > vhi else 0.0)
                strip.plot.setYRange(nlo - lo_pad, nhi + hi_pad, padding=0)

    def _sampled_curves(self, strip, path: str, smp, cols) -> list:
        """``(times, values, colour)`` of one track's sampled curves in ``strip`` (Euler channels in
        display units, angular speed, or quaternion components); [] for other strips."""
        t = smp.samples.times
        if strip.is_euler:
            return [
                (
                    t,
                    self.panel.to_display(path, smp.samples.euler[:, ch], ch),
                    cols[ch] if self.panel.overlay else cols[1],
                )
                for ch in strip.channels()
                if self.panel.curve_shown(path, ch)
            ]
        if strip.role[0] == "speed":
            return [(t, smp.samples.speed, cols[1])]
        if strip.role[0] == "quat":
            return [(t, smp.samples.quat[:, k], self.theme.channels[k]) for k in range(4)]
        return []

    def _update_batched_preview(self) -> None:
        """Dashed "after" curves of the secondary tracks, batched per plot."""
        prev = self.doc.preview
        per: dict[int, list] = {id(s): [] for s in self.strips}
        for path in self.panel.drawn_paths()[FULL_TRACKS:] if prev is not None else ():
            try:
                ptr = prev.track(path)
            except KeyError:
                continue
            if ptr is self.doc.clip.track(path):
                continue
            smp = self.cache.get(ptr, coarse=True)
            cols = self.panel.colours(path)
            for s in self.strips:
                per[id(s)].extend(self._sampled_curves(s, path, smp, cols))
        for s in self.strips:
            if per[id(s)] or s.preview_multi.curves():
                s.preview_multi.setCurves(per[id(s)])

    def update_other(self) -> None:
        """The selected non-rotation curves (floats, muscles, blend shapes, positions, scales), one
        curve per component, from the engine's ``evaluate``; float curves' keys are drawn and edited
        by ``float_edit`` (their units on the value axis), the rest is view only."""
        s = self.panel.strip_of("other")
        if s is None:
            return
        curves = []
        for k, name in enumerate(self.doc.selected_other):
            try:
                ot = self.doc.other_track(name)
            except StopIteration:
                continue
            t = dense_times_of(np.asarray(ot.curve.time, dtype=float))
            v = evaluate(ot.curve, t)
            for comp in range(v.shape[1]):
                colour = (
                    self.theme.channels[comp % 4]
                    if len(self.doc.selected_other) == 1
                    else (track_colors(k, self.theme.dark)[comp % 3])
                )
                curves.append((t, v[:, comp], colour))
        s.multi.setCurves(curves)
        floats = self.panel.floats
        editable = set(floats.names())
        names = ", ".join(n.rsplit("/", 1)[-1] for n in self.doc.selected_other if n not in editable)
        if editable:
            shown = [n.rsplit("/", 1)[-1] for n in self.doc.selected_other if n in editable]
            more = f" (+{len(shown) - 3})" if len(shown) > 3 else ""
            note = ", ".join(shown[:3]) + more + (f"; read-only: {names}" if names else "")
        else:
            note = f"read-only, view only: {names}"
        s.set_note(note, self.theme)
        s.plot.setLabel("left", floats.unit_label())
        floats.update_marks()
