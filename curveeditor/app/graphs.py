"""The curve graphs: Euler channels, angular speed and quaternion components of the selected tracks.

Everything drawn comes from the engine (``engine.display.sample_track`` / ``key_euler``, cached in
:mod:`.graph_sampling`): curves are what Unity plays, sampled densely and never wrapped; keys sit at
the key values. Plots (:class:`~.graph_strips.Strip`) share a time axis; a draggable cursor in each
plot scrubs the document time. Mouse and keyboard handling lives in :mod:`.graph_input`; this module
draws, and :meth:`GraphPanel._connect_document` is the one place mapping the document's signals to
view updates.

Many tracks: the primary (first selected) track gets its own items, reused from one selection to
the next (creating a pyqtgraph curve costs ~3 ms); its ghost, preview, gimbal bands and problem
markers are drawn. The other tracks, and their previews, are batched into
:class:`~.graph_items.MultiCurveItem` s (one per plot). With more than one track drawn every track gets its
own hue family (X/Y/Z shades) and a legend names them; at most ``MAX_DRAWN_TRACKS`` are drawn and the
plot says so. The Normalize view maps each Euler curve onto [-1, 1] (as Blender / Maya do).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QToolTip, QVBoxLayout, QWidget

from curveeditor.engine.clip import RotationTrack
from curveeditor.engine.curves import evaluate

from .document import ClipDocument
from .graph_input import CurveViewBox, Drag, GraphInput, no_hover_while_buttons_down
from .graph_items import KeyMarkers, curve_item, set_if_changed, track_colors
from .graph_sampling import SampleCache, Sampled, dense_times, dense_times_of, normalize_scale
from .graph_strips import Strip
from .problems import KIND_LABELS, ProblemIndex
from .theme import LIGHT, Theme

__all__ = ["GraphPanel", "CurveViewBox", "dense_times", "MAX_DRAWN_TRACKS", "FULL_TRACKS"]

QUAT_NAMES = ("x", "y", "z", "w")
HANDLE_PX = 45.0
MAX_DRAWN_TRACKS = 100
FULL_TRACKS = 1
LIVE_BATCH_MS = 250  # mid-drag refresh interval of the batched secondary tracks (ms)
MAX_HANDLE_KEYS = 64
MIN_SPAN_DEG = 2.0  # a flat channel is framed at least this tall (degrees) around its value
BIG = 1e7  # half-height of vertical markers (ignored by auto-range)


class _TrackItems:
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


class GraphPanel(QWidget):
    """Stacked (or overlaid) Euler plots + speed strip + quaternion strip, linked in time."""

    contextMenuRequested = Signal(object)  # QPoint (global) -> the main window shows the key menu
    statusMessage = Signal(str)
    rebuilt = Signal()  # after rebuild() re-created every item: overlay layers (curve_layers) re-add theirs

    def __init__(self, document: ClipDocument, problems: ProblemIndex | None = None, parent=None):
        super().__init__(parent)
        self.doc = document
        self.problems = problems
        self.theme: Theme = LIGHT
        self.cache = SampleCache()
        self.input = GraphInput(self)
        self.overlay = False
        self.show_speed = True
        self.show_quat = False
        self.show_original = True
        self.normalize = False
        self.time_in_frames = False
        self.preview_redraws = 0  # preview tracks (re)drawn (tests)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.ci.setSpacing(2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.glw)
        self.strips: list[Strip] = []
        self.items: dict[str, _TrackItems] = {}
        self.handle_points: list[tuple[CurveViewBox, str, int, int, str, float, float]] = []
        self.bands: list[tuple[pg.PlotItem, QGraphicsPathItem]] = []
        self.markers: list[pg.PlotDataItem] = []
        self._norm: dict[int, tuple[RotationTrack, np.ndarray, np.ndarray]] = {}
        self._colours: dict[str, tuple[str, str, str]] = {}
        self._pool: _TrackItems | None = None  # the primary's base items, reused across selections
        # Unweighted handles have a fixed length in pixels: re-place them after zoom/pan (coalesced).
        self._handle_timer = QTimer(self)
        self._handle_timer.setSingleShot(True)
        self._handle_timer.setInterval(0)
        self._handle_timer.timeout.connect(self._update_handles)
        # Mid-drag the batched secondary tracks follow at most every LIVE_BATCH_MS (a dope-sheet
        # drag moves keys of every drawn track: re-sampling 31 x 2,752-key tracks per mouse move
        # cost 130 ms); the drag's end redraws them at once. The primary track stays live.
        self._batch_timer = QTimer(self)
        self._batch_timer.setSingleShot(True)
        self._batch_timer.setInterval(LIVE_BATCH_MS)
        self._batch_timer.timeout.connect(self._update_batched)
        self.batched_updates = 0  # tests
        self.glw.scene().sigMouseMoved.connect(self._on_mouse_moved)
        no_hover_while_buttons_down(self.glw.scene())
        self._build_plots()
        self._connect_document()
        self.rebuild()

    def _connect_document(self) -> None:
        """The one place where document signals become view updates."""
        self.doc.clipChanged.connect(self._on_clip_changed)
        self.doc.selectionChanged.connect(self.rebuild)
        self.doc.keySelectionChanged.connect(self._update_selection)
        self.doc.timeChanged.connect(self._on_time)
        self.doc.previewChanged.connect(self._update_preview)
        self.doc.otherSelectionChanged.connect(self._on_other_selection)
        if self.problems is not None:
            self.problems.updated.connect(lambda _p: self._update_markers())

    # ------------------------------------------------------------------ compatibility views
    @property
    def plots(self) -> list[pg.PlotItem]:
        return [s.plot for s in self.strips]

    @property
    def euler_plots(self) -> list[pg.PlotItem]:
        return [s.plot for s in self.strips if s.is_euler]

    @property
    def speed_plot(self) -> pg.PlotItem | None:
        return next((s.plot for s in self.strips if s.role[0] == "speed"), None)

    @property
    def quat_plot(self) -> pg.PlotItem | None:
        return next((s.plot for s in self.strips if s.role[0] == "quat"), None)

    @property
    def cursors(self) -> list[pg.InfiniteLine]:
        return [s.cursor for s in self.strips]

    @property
    def _handle_points(self):  # older name (tests)
        return self.handle_points

    def _strip(self, role_kind: str) -> Strip | None:
        return next((s for s in self.strips if s.role[0] == role_kind), None)

    # ------------------------------------------------------------------ layout
    def _build_plots(self) -> None:
        self.glw.clear()
        self._pool = None
        self.strips = []
        self.items = {}
        self.bands, self.markers = [], []
        roles = [("euler", None)] if self.overlay else [("euler", c) for c in range(3)]
        if self.show_speed:
            roles.append(("speed", None))
        if self.show_quat:
            roles.append(("quat", None))
        if self.doc.selected_other:
            roles.append(("other", None))  # read-only curves, view only (drags scrub time)
        for row, role in enumerate(roles):
            s = Strip(self.glw, self.input, role, row, link=self.strips[0].plot if self.strips else None)
            s.vb.sigRangeChanged.connect(self._on_range_changed)
            s.cursor.sigDragged.connect(self._on_cursor_dragged)
            s.cursor.setValue(self.doc.current_time)
            if role[0] == "quat":
                s.plot.setYRange(-1.05, 1.05)
            # Euler plots take the room; strips are thinner.
            self.glw.ci.layout.setRowStretchFactor(row, 3 if role[0] == "euler" else 2)
            self.strips.append(s)
        for s in self.strips[:-1]:
            s.plot.getAxis("bottom").setStyle(showValues=False)
        self._apply_time_axis()
        self._apply_theme_to_plots()

    def set_layout(
        self,
        *,
        overlay: bool | None = None,
        speed: bool | None = None,
        quat: bool | None = None,
        normalize: bool | None = None,
    ):
        """Switch stacked/overlaid channels, the speed / quaternion strips and the Normalize view."""
        if overlay is not None:
            self.overlay = overlay
        if speed is not None:
            self.show_speed = speed
        if quat is not None:
            self.show_quat = quat
        if normalize is not None:
            self.normalize = normalize
        xr = self.strips[0].vb.viewRange()[0] if self.strips else None
        self._build_plots()
        self.rebuild(frame=xr is None)
        if xr is not None:
            self.strips[0].plot.setXRange(*xr, padding=0)
            self._frame_values()

    def set_show_original(self, on: bool) -> None:
        self.show_original = on
        self.rebuild(frame=False)

    def set_time_in_frames(self, on: bool) -> None:
        """Time axis in frames (True) or seconds (False)."""
        self.time_in_frames = bool(on)
        self._apply_time_axis()

    def _apply_time_axis(self) -> None:
        if not self.strips:
            return
        for s in self.strips:
            s.time_axis.set_mode(self.time_in_frames, self.doc.frame_rate)
        unit = f"frames @ {self.doc.frame_rate:g} fps" if self.time_in_frames else "s"
        self.strips[-1].plot.setLabel("bottom", f"time ({unit})")

    def time_text(self, t: float) -> str:
        if self.time_in_frames:
            f = t * self.doc.frame_rate
            return f"frame {round(f)}" if abs(f - round(f)) < 1e-6 else f"frame {f:.2f}"
        return f"{t:.3f} s"

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.glw.setBackground(theme.plot_bg)
        self._apply_theme_to_plots()
        self.rebuild(frame=False)

    def _apply_theme_to_plots(self) -> None:
        for s in self.strips:
            s.apply_theme(self.theme)
        self.glw.setBackground(self.theme.plot_bg)

    # ------------------------------------------------------------------ what is drawn, in what units
    def drawn_paths(self) -> list[str]:
        return list(self.doc.selected_paths[:MAX_DRAWN_TRACKS])

    def full_paths(self) -> list[str]:
        return self.drawn_paths()[:FULL_TRACKS]

    def _primary(self) -> str | None:
        return self.doc.selected_paths[0] if self.doc.selected_paths else None

    def _norm_for(self, path: str) -> tuple[np.ndarray, np.ndarray]:
        """(centre (3,), factor (3,)) of the Normalize view for the current track at ``path``."""
        tr = self.doc.clip.track(path)
        hit = self._norm.get(id(tr))
        if hit is not None and hit[0] is tr:
            return hit[1], hit[2]
        s = self.cache.get(tr, coarse=True)
        vals = np.concatenate([s.samples.euler, s.key_values]) if s.key_values.size else s.samples.euler
        c, f = normalize_scale(vals)
        self._norm[id(tr)] = (tr, c, f)
        if len(self._norm) > 512:
            self._norm.clear()
        return c, f

    def value_factor(self, path: str, ch: int) -> float:
        """Display units per degree of channel ``ch`` of ``path`` (1 unless normalized)."""
        if not self.normalize:
            return 1.0
        return float(self._norm_for(path)[1][ch])

    def to_display(self, path: str, values: np.ndarray, ch: int | None = None) -> np.ndarray:
        """Euler degrees -> what the plot shows (``values`` (M, 3), or (M,) of channel ``ch``)."""
        if not self.normalize:
            return values
        c, f = self._norm_for(path)
        if ch is None:
            return (values - c) * f
        return (values - c[ch]) * f[ch]

    def from_display(self, path: str, ch: int, y: float) -> float:
        if not self.normalize:
            return float(y)
        c, f = self._norm_for(path)
        return float(y / f[ch] + c[ch])

    def display_keys(self, path: str) -> tuple[np.ndarray, np.ndarray]:
        """Key times (s) and drawn key values ``(N, 3)`` of the current track at ``path``."""
        kt, kv = self.cache.keys(self.doc.clip.track(path))
        return kt, self.to_display(path, kv)

    def colours(self, path: str) -> tuple[str, str, str]:
        """X, Y, Z colours of a drawn track (the theme's channel colours when it is drawn alone)."""
        return self._colours.get(path, tuple(self.theme.channels[:3]))

    def strip_curves(self, vb: CurveViewBox):
        """``(path, channel, x, y)`` of every curve drawn in ``vb`` (display units), for hovering."""
        strip = next((s for s in self.strips if s.vb is vb), None)
        if strip is None:
            return
        for path in self.drawn_paths():
            try:
                tr = self.doc.clip.track(path)
            except KeyError:
                continue
            s = self.cache.get(tr, coarse=path not in self.items)
            t = s.samples.times
            if strip.is_euler:
                for ch in strip.channels():
                    yield path, ch, t, self.to_display(path, s.samples.euler[:, ch], ch)
            elif strip.role[0] == "speed":
                yield path, 0, t, s.samples.speed
            elif strip.role[0] == "quat":
                for k in range(4):
                    yield path, k, t, s.samples.quat[:, k]

    # ------------------------------------------------------------------ drawing
    def _pen(self, path: str, ch: int, primary: bool, width=1.6):
        many = len(self._colours) > 1
        colour = self.colours(path)[ch if (self.overlay or not many) else 1]
        c = QColor(colour)
        if not primary and not many:
            c.setAlpha(130)
        return pg.mkPen(c, width=width if primary else 1.0)

    def rebuild(self, frame: bool = True) -> None:
        """Redraw every selected track (selection change, load, layout change)."""
        pool = self._pool
        keep = [] if pool is None else [i for i, *_ in pool.curves] + [k for k, *_ in pool.keys]
        if pool is not None:
            keep += ([pool.speed] if pool.speed is not None else []) + pool.quat
        for s in self.strips:
            s.clear_track_items(keep)
        self.items = {}
        self.bands, self.markers = [], []
        paths = self.drawn_paths()
        self._colours = (
            {p: track_colors(i, self.theme.dark) for i, p in enumerate(paths)} if len(paths) > 1 else {}
        )
        for i, path in enumerate(self.full_paths()):
            self.items[path] = self._track_items(path, primary=(i == 0))
        for path in self.full_paths():
            self._update_track(path)
        self._update_batched()
        self._update_preview()
        self._update_markers()
        self._update_selection()
        self._update_legend()
        self._update_other()
        self._on_time(self.doc.current_time)
        self._apply_time_axis()
        if frame:
            self.frame_all()
        self.rebuilt.emit()

    def _on_other_selection(self) -> None:
        has = self._strip("other") is not None
        if has != bool(self.doc.selected_other):
            self.set_layout()
        else:
            self._update_other()
            s = self._strip("other")
            if s is not None:
                s.plot.enableAutoRange(axis=pg.ViewBox.YAxis)
                s.vb.updateAutoRange()
                s.plot.disableAutoRange()

    def _update_other(self) -> None:
        """The selected read-only curves (positions, scales, floats, muscles), one curve per
        component, from the engine's ``evaluate``; they cannot be edited (view only)."""
        s = self._strip("other")
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
        names = ", ".join(n.rsplit("/", 1)[-1] for n in self.doc.selected_other)
        s.set_note(f"read-only, view only: {names}", self.theme)

    def _track_items(self, path: str, primary: bool) -> _TrackItems:
        """The primary track's items: the pooled ones re-coloured, or new ones the first time."""
        pool = self._pool
        if pool is None or not primary:
            it = self._make_track_items(path, primary)
            if primary:
                self._pool = it
            return it
        pool.ghost, pool.ghost_track, pool.preview, pool.preview_track = [], None, [], None
        for curve, ch in pool.curves:
            curve.setPen(self._pen(path, ch, True))
            curve._ce_xy = None
        for keys, ch, _vb in pool.keys:
            keys.fill = self._key_colour(path, ch)
            keys._sprite_key = None
        if pool.speed is not None:
            pool.speed.setPen(pg.mkPen(self._speed_colour(path), width=1.4))
            pool.speed._ce_xy = None
        for q in pool.quat:
            q._ce_xy = None
        return pool

    def _key_colour(self, path: str, ch: int) -> QColor:
        kc = QColor(self._pen(path, ch, True).color())
        kc.setAlpha(255)
        return kc.lighter(118) if self.theme.dark else kc.darker(150)

    def _speed_colour(self, path: str) -> QColor:
        return QColor(self.theme.speed if not self._colours else self.colours(path)[1])

    def _make_track_items(self, path: str, primary: bool) -> _TrackItems:
        it = _TrackItems()
        for s in self.strips:
            p = s.plot
            if s.is_euler:
                for ch in s.channels():
                    curve = curve_item(pen=self._pen(path, ch, primary))
                    curve.setZValue(10 if primary else 5)
                    p.addItem(curve)
                    it.curves.append((curve, ch))
                    # keys: the curve colour, lifted toward the key colour (one drawPoints pass per frame)
                    keys = KeyMarkers(4 if primary else 3, self._key_colour(path, ch).name())
                    keys.setZValue(20)
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

    def _window(self) -> tuple[float, float] | None:
        if self.doc.in_live_edit() and self.strips:
            # mid-drag: sample only what is visible (+ a margin); the drag's end resamples it all
            x0, x1 = self.strips[0].vb.viewRange()[0]
            pad = 0.25 * (x1 - x0)
            return (x0 - pad, x1 + pad)
        return None

    def _update_track(self, path: str) -> None:
        it = self.items.get(path)
        if it is None:
            return
        try:
            tr = self.doc.clip.track(path)
        except KeyError:
            return
        s = self.cache.get(tr, self._window())
        for curve, ch in it.curves:
            set_if_changed(curve, s.samples.times, self.to_display(path, s.samples.euler[:, ch], ch))
        kv = self.to_display(path, s.key_values)
        for keys, ch, _vb in it.keys:
            old = keys.getData()
            if not (np.array_equal(old[0], s.key_times) and np.array_equal(old[1], kv[:, ch])):
                keys.setData(s.key_times, kv[:, ch])
        if it.speed is not None:
            set_if_changed(it.speed, s.samples.times, s.samples.speed)
        for k, q in enumerate(it.quat):
            set_if_changed(q, s.samples.times, s.samples.quat[:, k])
        self._update_ghost(path, tr, it)
        if path == self._primary():
            self._update_bands(s)

    def _update_batched(self) -> None:
        """The secondary tracks (past ``FULL_TRACKS``): one batched curve item and one key item per plot.

        Mid-drag (throttled to ``LIVE_BATCH_MS``) the Euler plots draw each secondary track through
        its keys (the engine's key values, nothing sampled) and the speed / quaternion strips keep
        their curves; the drag's end draws the sampled curves again. Sampling 30 mocap tracks per
        refresh cost ~170 ms, longer than the throttle interval, so every dope-sheet step paid it."""
        self._batch_timer.stop()
        self.batched_updates += 1
        live = self.doc.in_live_edit()
        rest = self.drawn_paths()[FULL_TRACKS:]
        per: dict[int, list] = {id(s): [] for s in self.strips}
        keys: dict[int, tuple[list, list]] = {id(s): ([], []) for s in self.strips}
        for path in rest:
            try:
                tr = self.doc.clip.track(path)
            except KeyError:
                continue
            cols = self.colours(path)
            if live:
                kt, kv = self.cache.keys(tr)
                kv = self.to_display(path, kv)
                for s in self.strips:
                    if s.is_euler:
                        for ch in s.channels():
                            per[id(s)].append((kt, kv[:, ch], cols[ch] if self.overlay else cols[1]))
                            keys[id(s)][0].append(kt)
                            keys[id(s)][1].append(kv[:, ch])
                continue
            smp = self.cache.get(tr, coarse=True)
            t = smp.samples.times
            kv = self.to_display(path, smp.key_values)
            for s in self.strips:
                if s.is_euler:
                    for ch in s.channels():
                        y = self.to_display(path, smp.samples.euler[:, ch], ch)
                        per[id(s)].append((t, y, cols[ch] if self.overlay else cols[1]))
                        keys[id(s)][0].append(smp.key_times)
                        keys[id(s)][1].append(kv[:, ch])
                elif s.role[0] == "speed":
                    per[id(s)].append((t, smp.samples.speed, cols[1]))
                elif s.role[0] == "quat":
                    for k in range(4):
                        per[id(s)].append((t, smp.samples.quat[:, k], self.theme.channels[k]))
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

    def _update_legend(self) -> None:
        """Legend of the drawn tracks (more than one) and the cap note, in the first plot."""
        if not self.strips:
            return
        first = self.strips[0]
        n_sel, n_drawn = len(self.doc.selected_paths), len(self.drawn_paths())
        note = ""
        if n_sel > n_drawn:
            note = f"{n_drawn} of {n_sel} selected tracks drawn (limit {MAX_DRAWN_TRACKS})"
        for s in self.strips:
            s.set_note(note if s is first else "", self.theme)
            s.legend.setVisible(False)
        if n_drawn > 1:
            bg = QColor(self.theme.plot_bg)
            bg.setAlpha(200)
            entries = []
            for p in self.drawn_paths():
                cols = self.colours(p)
                entries.append((p.rsplit("/", 1)[-1] or p, cols if self.overlay else (cols[1],)))
            first.legend.set_entries(entries, self.theme.plot_fg, bg.name(QColor.NameFormat.HexArgb))
            first.legend.setToolTip("\n".join(self.drawn_paths()))

    def legend_lines(self) -> list[str]:
        """The legend's text lines ([] when no legend is shown)."""
        if not self.strips or not self.strips[0].legend.isVisible():
            return []
        return self.strips[0].legend.text_lines()

    def note_text(self) -> str:
        n = self.strips[0].note if self.strips else None
        return n.textItem.toPlainText() if n is not None and n.isVisible() else ""

    def _update_ghost(self, path: str, tr: RotationTrack, it: _TrackItems) -> None:
        """Draw the track as loaded behind the edited one (kept while the original is unchanged)."""
        orig = None
        if self.show_original and path == self._primary():
            try:
                orig = self.doc.original.track(path)
            except KeyError:
                orig = None
        want = orig is not None and orig is not tr
        if want and it.ghost and it.ghost_track is orig:
            return
        for item, where, _ch in it.ghost:
            self._plot_for(where, item).removeItem(item)
        it.ghost = []
        it.ghost_track = None
        if want:
            it.ghost = self._overlay_items(path, orig, self.theme.original, Qt.PenStyle.DotLine, z=3)
            it.ghost_track = orig

    def _overlay_items(self, path: str, track: RotationTrack, color: str | None, style, z: float, width=1.3):
        s = self.cache.get(track)
        out = []
        for strip in self.strips:
            p = strip.plot
            if strip.is_euler:
                for ch in strip.channels():
                    pen = pg.mkPen(color or self._pen(path, ch, True).color(), width=width, style=style)
                    item = curve_item(pen=pen)
                    item.setZValue(z)
                    p.addItem(item)
                    item.setData(s.samples.times, self.to_display(path, s.samples.euler[:, ch], ch))
                    out.append((item, "euler", ch))
            elif strip.role[0] == "speed":
                pen = pg.mkPen(color or self.theme.speed, width=width, style=style)
                item = curve_item(pen=pen)
                item.setZValue(z)
                p.addItem(item)
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
            return self._strip(where).plot
        for p in self.euler_plots:
            if item in p.items:
                return p
        return self.euler_plots[0]

    def _update_preview(self) -> None:
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
                        item.setData(s.samples.times, self.to_display(path, s.samples.euler[:, ch], ch))
                    elif where == "quat":
                        item.setData(s.samples.times, s.samples.quat[:, ch])
                    elif where == "speed":
                        item.setData(s.samples.times, s.samples.speed)
                    elif where == "keys":
                        item.setData(s.key_times, self.to_display(path, s.key_values[:, ch], ch))
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
                        km = KeyMarkers(5, self.theme.plot_bg, self._pen(path, ch, True).color().name())
                        km.setZValue(18)
                        strip.plot.addItem(km)
                        km.setData(s.key_times, self.to_display(path, s.key_values[:, ch], ch))
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
                [self.to_display(path, s.samples.euler[:, ch], ch) for ch in strip.channels()]
            )
            lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
            vlo, vhi = strip.vb.viewRange()[1]
            if lo < vlo or hi > vhi:
                nlo, nhi = min(lo, vlo), max(hi, vhi)
                pad = 0.05 * (nhi - nlo)
                lo_pad, hi_pad = (pad if lo < vlo else 0.0), (pad if hi > vhi else 0.0)
                strip.plot.setYRange(nlo - lo_pad, nhi + hi_pad, padding=0)

    def _update_batched_preview(self) -> None:
        """Dashed "after" curves of the secondary tracks, batched per plot."""
        prev = self.doc.preview
        per: dict[int, list] = {id(s): [] for s in self.strips}
        for path in self.drawn_paths()[FULL_TRACKS:] if prev is not None else ():
            try:
                ptr = prev.track(path)
            except KeyError:
                continue
            if ptr is self.doc.clip.track(path):
                continue
            smp = self.cache.get(ptr, coarse=True)
            t = smp.samples.times
            cols = self.colours(path)
            for s in self.strips:
                if s.is_euler:
                    for ch in s.channels():
                        y = self.to_display(path, smp.samples.euler[:, ch], ch)
                        per[id(s)].append((t, y, cols[ch] if self.overlay else cols[1]))
                elif s.role[0] == "speed":
                    per[id(s)].append((t, smp.samples.speed, cols[1]))
                elif s.role[0] == "quat":
                    for k in range(4):
                        per[id(s)].append((t, smp.samples.quat[:, k], self.theme.channels[k]))
        for s in self.strips:
            if per[id(s)] or s.preview_multi.curves():
                s.preview_multi.setCurves(per[id(s)])

    def _update_bands(self, s: Sampled) -> None:
        for plot, b in self.bands:
            plot.removeItem(b)
        self.bands = []
        g = s.samples.gimbal
        t = s.samples.times
        if g.size == 0:
            return
        col = QColor(self.theme.gimbal_band)
        for level, alpha in ((0.5, col.alpha()), (0.9, min(255, col.alpha() * 2))):
            mask = g >= level
            if not np.any(mask):
                continue
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
            for p in self.plots:
                item = QGraphicsPathItem(path)
                item.setBrush(c)
                item.setPen(QPen(Qt.PenStyle.NoPen))
                item.setZValue(-10)
                p.addItem(item, ignoreBounds=True)
                self.bands.append((p, item))

    def _update_markers(self) -> None:
        for m in self.markers:
            for p in self.plots:
                if m in p.items:
                    p.removeItem(m)
        self.markers = []
        path = self._primary()
        if path is None or self.problems is None:
            return
        probs = [p for p in self.problems.problems(path) if p.kind != "gimbal"]
        by_kind: dict[str, list[float]] = {}
        for p in probs:
            by_kind.setdefault(p.kind, []).append(p.time)
        for kind, times in by_kind.items():
            t = np.repeat(np.asarray(times), 2)
            y = np.tile([-BIG, BIG], len(times))
            c = QColor(self.theme.problems[kind])
            c.setAlpha(170)
            for p in self.plots:
                item = pg.PlotDataItem(
                    t, y, connect="pairs", pen=pg.mkPen(c, width=1, style=Qt.PenStyle.DashLine)
                )
                item.setZValue(-5)
                item.setToolTip(KIND_LABELS.get(kind, kind))
                p.addItem(item, ignoreBounds=True)
                item.setClipToView(False)  # clipping would split the (x, x) pairs of the markers
                item.setDownsampling(ds=1, auto=False)
                self.markers.append(item)

    def _update_selection(self) -> None:
        """Selected keys of every drawn track (one marker item per plot), then their handles."""
        for s in self.strips:
            if not s.is_euler:
                continue
            xs, ys = [], []
            for path in self.drawn_paths():
                idx = np.array(sorted(self.doc.selected_keys.get(path, ())), dtype=np.int64)
                if not idx.size:
                    continue
                try:
                    s_kt, s_kv = self.display_keys(path)
                except KeyError:
                    continue
                for ch in s.channels():
                    xs.append(s_kt[idx])
                    ys.append(s_kv[idx, ch])
            if xs:
                x, y = np.concatenate(xs), np.concatenate(ys)
                order = np.argsort(x, kind="stable")
                s.selected.setData(x[order], y[order])
            else:
                s.selected.clear()
        self._update_handles()

    def _update_handles(self) -> None:
        """Tangent handles of the selected keys (Euler tracks, at most MAX_HANDLE_KEYS per track);
        cleared whenever no key is selected (after a track switch or a load too)."""
        self.handle_points = []
        per_vb: dict[int, tuple[list, list, list, list]] = {
            id(s.vb): ([], [], [], []) for s in self.strips if s.is_euler
        }
        for path in self.drawn_paths():
            idx = sorted(self.doc.selected_keys.get(path, ()))
            if not idx or len(idx) > MAX_HANDLE_KEYS:
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
                    f = self.value_factor(path, ch)
                    for i in idx:
                        t = float(c.time[i])
                        v = float(self.to_display(path, np.array([c.value[i, ch]]), ch)[0])
                        for side in ("in", "out"):
                            end = self._handle_end(c, i, ch, side, px, py, v, f)
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
            if xs or (s.handle_line.xData is not None and len(s.handle_line.xData)):
                s.handle_line.setData(np.array(xs, dtype=float), np.array(ys, dtype=float), connect="pairs")
            s.handle_pts.setData(np.array(hx, dtype=float), np.array(hy, dtype=float))

    @staticmethod
    def _handle_end(c, i, ch, side, px, py, v=None, factor=1.0):
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

    # ------------------------------------------------------------------ document -> view
    def _on_range_changed(self, *_):
        if self.handle_points or any(self.doc.selected_keys.values()):
            self._handle_timer.start()

    def _on_clip_changed(self) -> None:
        paths = self.doc.changed_paths
        if paths is None:
            self.rebuild(frame=True)
            return
        drawn = [p for p in paths if p in set(self.drawn_paths())]
        for p in drawn:
            self._update_track(p)
        if any(p not in self.items for p in drawn):
            if self.doc.in_live_edit():
                if not self._batch_timer.isActive():
                    self._batch_timer.start()
            else:
                self._update_batched()
        elif not self.doc.in_live_edit() and self._batch_timer.isActive():
            self._update_batched()  # a drag ended without touching the batched tracks again
        if drawn:
            self._update_selection()
            if self.doc.preview is not None:
                self._update_preview()

    def _on_time(self, t: float) -> None:
        for c in self.cursors:
            if c.value() != t:
                c.blockSignals(True)
                c.setValue(t)
                c.blockSignals(False)

    def _on_cursor_dragged(self, line: pg.InfiniteLine) -> None:
        self.doc.set_time(self.doc.snap_time(line.value()))
        self._on_time(self.doc.current_time)

    def _on_mouse_moved(self, scene_pos) -> None:
        if self.input.drag is not None or self.doc.in_live_edit():
            return  # mid-drag the curves are partial samples: no hover work on the drag's hot path
        for s in self.strips:
            if s.vb.sceneBoundingRect().contains(scene_pos):
                text = self.input.hover(s.vb, scene_pos)
                for o in self.strips:
                    o.hover_label.setVisible(False)
                if text:
                    pos = s.vb.mapSceneToView(scene_pos)
                    s.hover_label.setText(text)
                    s.hover_label.setPos(pos)
                    s.hover_label.setVisible(True)
                    QToolTip.hideText()
                return

    # ------------------------------------------------------------------ framing
    def frame_all(self) -> None:
        """Fit every plot to its content (A); flat channels get at least MIN_SPAN_DEG."""
        for s in self.strips:
            s.plot.enableAutoRange()
            s.vb.updateAutoRange()
            s.plot.disableAutoRange()
        self._widen_flat()
        q = self.quat_plot
        if q is not None:
            q.setYRange(-1.05, 1.05)

    def _frame_values(self) -> None:
        for s in self.strips:
            s.plot.enableAutoRange(axis=pg.ViewBox.YAxis)
            s.vb.updateAutoRange()
            s.plot.disableAutoRange()
        self._widen_flat()

    def _widen_flat(self) -> None:
        """A flat channel framed by auto-range spans ~1e-6 deg and pyqtgraph labels it in milli-units;
        give it a readable range around its value instead."""
        for s in self.strips:
            if not s.is_euler:
                continue
            lo, hi = s.vb.viewRange()[1]
            span = MIN_SPAN_DEG if not self.normalize else 2.2
            if hi - lo < span:
                mid = 0.5 * (lo + hi)
                s.plot.setYRange(mid - span / 2, mid + span / 2, padding=0)

    def frame_selection(self) -> None:
        """Fit the plots to the selected keys (F); everything when nothing is selected."""
        sel = {p: s for p, s in self.doc.selected_keys.items() if p in set(self.drawn_paths()) and s}
        if not sel:
            self.frame_all()
            return
        times, vals = [], []
        for path, idx in sel.items():
            s_kt, s_kv = self.display_keys(path)
            ii = np.array(sorted(idx))
            times.append(s_kt[ii])
            vals.append(s_kv[ii])
        t = np.concatenate(times)
        v = np.concatenate(vals)
        t0, t1 = float(t.min()), float(t.max())
        pad = max((t1 - t0) * 0.1, 2.0 / self.doc.frame_rate)
        self.strips[0].plot.setXRange(t0 - pad, t1 + pad, padding=0)
        for s in self.strips:
            if not s.is_euler:
                continue
            ch = s.role[1]
            col = v.reshape(-1) if ch is None else v[:, ch]
            lo, hi = float(col.min()), float(col.max())
            pv = max((hi - lo) * 0.15, 2.0 if not self.normalize else 0.05)
            s.plot.setYRange(lo - pv, hi + pv, padding=0)

    # ------------------------------------------------------------------ input (delegated)
    def on_click(self, vb, scene_pos, mods) -> None:
        self.input.on_click(vb, scene_pos, mods)

    def begin_drag(self, vb, scene_pos, mods):
        return self.input.begin_drag(vb, scene_pos, mods)

    def drag_to(self, vb, p0, p1, mods, finish: bool) -> None:
        self.input.drag_to(vb, p0, p1, mods, finish)

    def box_select(self, vb, rect, mods) -> None:
        self.input.box_select(vb, rect, mods)

    def select_keys_in_rect(self, vb, rect):
        return self.input.select_keys_in_rect(vb, rect)

    def move_selection(self, d: Drag, dt: float, dv: float) -> None:
        self.input.move_selection(d, dt, dv)

    def cancel_drag(self) -> None:
        self.input.cancel_drag()

    def on_context_menu(self, vb, scene_pos, screen_pos) -> None:
        self.input.on_context_menu(vb, scene_pos, screen_pos)

    # ------------------------------------------------------------------ export
    def export_image(self, path: str) -> None:
        """Write the graphs as PNG or SVG (by extension) with pyqtgraph's exporters.

        pyqtgraph's SVG exporter cannot parse closed sub-paths (the gimbal bands); when it fails the
        scene is rendered through Qt's own SVG generator instead.
        """
        from pyqtgraph.exporters import ImageExporter, SVGExporter

        scene = self.glw.scene()
        if not path.lower().endswith(".svg"):
            exp = ImageExporter(scene)
            exp.parameters()["width"] = max(int(self.glw.width()), 800)
            exp.export(path)
            return
        try:
            SVGExporter(scene).export(path)
        except (ValueError, IndexError):
            from PySide6.QtGui import QPainter
            from PySide6.QtSvg import QSvgGenerator

            gen = QSvgGenerator()
            gen.setFileName(path)
            gen.setSize(self.glw.size())
            gen.setViewBox(self.glw.rect())
            gen.setTitle("curveeditor graphs")
            painter = QPainter(gen)
            self.glw.render(painter)
            painter.end()
