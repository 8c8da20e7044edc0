"""The curve graphs: Euler channels, angular speed and quaternion components of the selected tracks.

Everything drawn comes from the engine (``engine.display.sample_track`` / ``key_euler``): curves are
what Unity plays, sampled densely and never wrapped; keys sit at the key values. Plots share a time
axis (linked X); a draggable cursor in each plot scrubs the document time.

Mouse (Unity / Blender conventions): click a key to select it (Shift adds, Ctrl toggles), drag on empty
space for a box selection, drag a key to move the selection in time (snapped to frames) and value
(Shift constrains to the dominant direction), drag a tangent handle of a selected key, middle drag or
Alt+drag pans, wheel zooms, right click opens the key menu. A drag is one undo step.

Performance: sampled data is cached per (immutable) track object; after an edit only the tracks named
by ``document.changed_paths`` are re-sampled and redrawn.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem, QVBoxLayout, QWidget

from curveeditor.engine import display
from curveeditor.engine import edit as ed
from curveeditor.engine.clip import RotationTrack

from .document import ClipDocument
from .problems import KIND_LABELS, ProblemIndex
from .theme import LIGHT, Theme

__all__ = ["GraphPanel", "CurveViewBox", "dense_times"]

CHANNEL_NAMES = ("X", "Y", "Z")
QUAT_NAMES = ("x", "y", "z", "w")
HIT_PX = 7.0
HANDLE_PX = 45.0
MAX_DRAWN_TRACKS = 8
MAX_HANDLE_KEYS = 64
BIG = 1e7  # half-height of vertical markers (ignored by auto-range)


def _curve(**kw) -> pg.PlotDataItem:
    """A curve item; its plot makes it draw only the visible part, downsampled to the pixel grid
    (peaks kept) -- see ``GraphPanel._new_plot``. Give it data only after it is in a plot."""
    item = pg.PlotDataItem(skipFiniteCheck=True, **kw)
    # Any change repaints the whole region it dirties, and every curve crossing it is stroked again
    # (a 2-px, 2400-segment curve costs 2-4 ms in the raster engine). As device pixmaps, curves that
    # did not change are blitted: a recipe preview redraw of a 50 s track went from ~60 to ~40 ms.
    item.curve.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    return item


def _set_if_changed(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
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


def dense_times(track: RotationTrack) -> np.ndarray:
    """Key times plus evenly spread samples inside every key interval (seconds, sorted).

    Short tracks get up to 32 samples per interval, long ones at least 2, so a 3000-key track is
    drawn from ~6k samples (enough for per-frame keys; sampling is part of every drag step).
    """
    t = np.asarray(track.times, dtype=np.float64)
    n = t.shape[0]
    if n == 0:
        return np.zeros(1)
    if n == 1:
        return t.copy()
    per = int(np.clip(6000 // max(n - 1, 1), 2, 32))
    frac = np.arange(per) / per
    seg = t[:-1, None] + np.diff(t)[:, None] * frac[None, :]
    return np.concatenate([seg.reshape(-1), t[-1:]])


@dataclass
class _Sampled:
    track: RotationTrack
    samples: display.TrackSamples
    key_times: np.ndarray
    key_values: np.ndarray  # (N, 3) display Euler at keys
    partial: bool = False  # samples cover only ``window`` (a drag in progress)
    window: tuple[float, float] | None = None


class _SampleCache:
    """Samples per track object (identity), LRU-bounded.

    ``get(track)`` samples the whole track; ``get(track, window=(t0, t1))`` only the visible part
    (used while a drag is in progress: the end of the drag samples the whole track again);
    ``keys(track)`` gives the key arrays without sampling anything.
    """

    def __init__(self, size: int = 64):
        self.size = size
        self._d: OrderedDict[int, _Sampled] = OrderedDict()

    def _hit(self, track: RotationTrack) -> _Sampled | None:
        hit = self._d.get(id(track))
        if hit is not None and hit.track is track:
            self._d.move_to_end(id(track))
            return hit
        return None

    def get(self, track: RotationTrack, window: tuple[float, float] | None = None) -> _Sampled:
        hit = self._hit(track)
        if hit is not None and (not hit.partial or (window is not None and hit.window == window)):
            return hit
        times = dense_times(track)
        if window is not None:
            lo = max(int(np.searchsorted(times, window[0])) - 1, 0)
            hi = int(np.searchsorted(times, window[1], side="right")) + 1
            times = times[lo:hi]
        s = display.sample_track(track, times)
        kt, kv = self.keys(track) if hit is None else (hit.key_times, hit.key_values)
        out = _Sampled(track, s, kt, kv, partial=window is not None, window=window)
        self._d[id(track)] = out
        while len(self._d) > self.size:
            self._d.popitem(last=False)
        return out

    def keys(self, track: RotationTrack) -> tuple[np.ndarray, np.ndarray]:
        """Key times ``(N,)`` (s) and display Euler at the keys ``(N, 3)`` (deg)."""
        hit = self._hit(track)
        if hit is not None:
            return hit.key_times, hit.key_values
        kv = np.asarray(display.key_euler(track), dtype=np.float64)
        return np.asarray(track.times, dtype=np.float64), kv


class KeyMarkers(pg.GraphicsObject):
    """Key points as fixed-size screen markers, drawn from numpy arrays in one ``drawPoints`` call.

    pyqtgraph's ScatterPlotItem keeps a Python record per point; with 3000 keys its ``setData`` took
    ~2.7 ms and its hit bookkeeping more on every drag step. This item stores the arrays only and
    draws the visible ones (keys are sorted in time, so the visible slice is two ``searchsorted``).
    """

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
        self._frags = pg.Qt.internals.PrimitiveArray(QPainter.PixmapFragment, 10)

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
        self.prepareGeometryChange()
        self._br = None

    def viewRangeChanged(self) -> None:  # noqa: N802 - pyqtgraph hook
        self.prepareGeometryChange()
        self._br = None

    def _compute_bounds(self) -> QRectF:
        if self._x.size == 0:
            return QRectF()
        px = self.pixelLength(QPointF(1, 0)) or 0.0
        py = self.pixelLength(QPointF(0, 1)) or 0.0
        pad = self.size
        rect = self._rect.adjusted(-pad * px, -pad * py, pad * px, pad * py)
        # Keep the dirty region inside the visible part: a 50 s track must not repaint the axes.
        vr = self.viewRect()
        if vr is not None and vr.isValid():
            rect = rect.intersected(vr.adjusted(-pad * px, -pad * py, pad * px, pad * py))
        return rect

    def _sprite(self, dpr: float) -> QPixmap:
        """The marker as a pixmap (outline square, fill square inside), rebuilt when its look changes."""
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

    def paint(self, painter, *args) -> None:
        n = self._x.size
        if n == 0:
            return
        vr = self.viewRect()
        if vr is not None and n > 64:
            lo = int(np.searchsorted(self._x, vr.left(), side="left"))
            hi = int(np.searchsorted(self._x, vr.right(), side="right"))
            x, y = self._x[max(lo - 1, 0) : hi + 1], self._y[max(lo - 1, 0) : hi + 1]
        else:
            x, y = self._x, self._y
        if x.size == 0:
            return
        # One pre-rendered sprite blitted per key (drawPixmapFragments), in device pixels: stroking
        # wide square-capped points cost ~0.13 ms per call, twice per item, ~2 ms per drag step.
        dev = painter.device()
        dpr = float(dev.devicePixelRatioF()) if dev is not None else 1.0
        pm = self._sprite(dpr)
        xy = pg.functions.transformCoordinates(painter.transform(), np.vstack([x, y]))
        xy = np.clip(xy, -(2.0**30), 2.0**30)
        painter.save()
        painter.resetTransform()
        self._frags.resize(x.size)
        frags = self._frags.ndarray()
        frags[:, 0:2] = xy.T
        frags[:, 2:6] = (0.0, 0.0, pm.width(), pm.height())
        frags[:, 6:10] = (1.0 / dpr, 1.0 / dpr, 0.0, 1.0)
        painter.drawPixmapFragments(*self._frags.drawargs(), pm)
        painter.restore()


class CurveViewBox(pg.ViewBox):
    """A ViewBox whose left-button gestures edit keys instead of panning.

    ``role``: ``("euler", channel)`` for a stacked channel plot, ``("euler", None)`` for the overlaid
    plot, ``("speed", None)`` or ``("quat", None)`` for the strips (where left-drag scrubs time).
    """

    def __init__(self, panel: GraphPanel, role: tuple[str, int | None]):
        super().__init__(enableMenu=False)
        self.panel = panel
        self.role = role
        self._gesture: str | None = None
        self._band: QGraphicsRectItem | None = None

    # clicks -----------------------------------------------------------------------------------
    def mouseClickEvent(self, ev):  # noqa: N802
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.panel.on_click(self, ev.scenePos(), ev.modifiers())
        elif ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self.panel.on_context_menu(self, ev.scenePos(), ev.screenPos())
        else:
            super().mouseClickEvent(ev)

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802
        mods = ev.modifiers()
        if ev.button() != Qt.MouseButton.LeftButton or (mods & Qt.KeyboardModifier.AltModifier):
            if ev.button() == Qt.MouseButton.LeftButton or ev.button() == Qt.MouseButton.MiddleButton:
                # Pan: pyqtgraph pans with the left button in its default mode.
                ev_button = ev.button
                ev.button = lambda: Qt.MouseButton.LeftButton  # noqa: B023
                try:
                    super().mouseDragEvent(ev, axis)
                finally:
                    ev.button = ev_button
            else:
                super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        if ev.isStart():
            self._gesture = self.panel.begin_drag(self, ev.buttonDownScenePos(), mods)
            if self._gesture == "box":
                self._band = QGraphicsRectItem()
                pen = QPen(QColor(self.panel.theme.highlight))
                pen.setCosmetic(True)
                pen.setStyle(Qt.PenStyle.DashLine)
                self._band.setPen(pen)
                c = QColor(self.panel.theme.highlight)
                c.setAlpha(40)
                self._band.setBrush(c)
                self._band.setZValue(1e9)
                self.addItem(self._band, ignoreBounds=True)
        if self._gesture is None:
            return
        p0 = self.mapSceneToView(ev.buttonDownScenePos())
        p1 = self.mapSceneToView(ev.scenePos())
        if self._gesture == "box" and self._band is not None:
            self._band.setRect(QRectF(p0, p1).normalized())
            if ev.isFinish():
                self.removeItem(self._band)
                self._band = None
                self.panel.box_select(self, QRectF(p0, p1).normalized(), mods)
        else:
            self.panel.drag_to(self, p0, p1, mods, ev.isFinish())
        if ev.isFinish():
            self._gesture = None


class _TrackItems:
    """The graphics items of one drawn track."""

    def __init__(self):
        self.curves: list[tuple[pg.PlotDataItem, int]] = []  # (item, channel)
        self.keys: list[tuple[KeyMarkers, int, CurveViewBox]] = []
        self.selected: list[tuple[KeyMarkers, int, CurveViewBox]] = []
        self.speed: pg.PlotDataItem | None = None
        self.quat: list[pg.PlotDataItem] = []
        self.preview: list[tuple[pg.PlotDataItem, str, int]] = []  # (item, "euler"/"speed"/"quat", ch)
        self.preview_track: RotationTrack | None = None  # the preview track drawn by ``preview``
        self.ghost: list[tuple[pg.PlotDataItem, str, int]] = []
        self.ghost_track: RotationTrack | None = None
        self.all: list[tuple[pg.PlotItem, object]] = []


@dataclass
class _Drag:
    kind: str  # "keys", "handle", "scrub"
    vb: CurveViewBox
    base_clip: object = None
    sel: dict = field(default_factory=dict)
    channel: int | None = None
    path: str = ""
    index: int = 0
    side: str = ""
    t0: float = 0.0
    v0: float = 0.0


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
        self.cache = _SampleCache()
        self.overlay = False
        self.show_speed = True
        self.show_quat = False
        self.show_original = True
        self.preview_redraws = 0  # preview tracks (re)drawn (tests)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.ci.setSpacing(2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.glw)
        self.plots: list[pg.PlotItem] = []
        self.euler_plots: list[pg.PlotItem] = []
        self.speed_plot: pg.PlotItem | None = None
        self.quat_plot: pg.PlotItem | None = None
        self.cursors: list[pg.InfiniteLine] = []
        self.items: dict[str, _TrackItems] = {}
        self.handles: list[tuple[pg.PlotCurveItem, KeyMarkers, CurveViewBox]] = []
        self._handle_points: list[tuple[CurveViewBox, str, int, int, str, float, float]] = []
        self.bands: list[tuple[pg.PlotItem, QGraphicsPathItem]] = []
        self.markers: list[pg.PlotDataItem] = []
        self._drag: _Drag | None = None
        # Unweighted handles have a fixed length in pixels: re-place them after zoom/pan (coalesced).
        self._handle_timer = QTimer(self)
        self._handle_timer.setSingleShot(True)
        self._handle_timer.setInterval(0)
        self._handle_timer.timeout.connect(self._update_handles)
        self._build_plots()
        document.clipChanged.connect(self._on_clip_changed)
        document.selectionChanged.connect(self.rebuild)
        document.keySelectionChanged.connect(self._update_selection)
        document.timeChanged.connect(self._on_time)
        document.previewChanged.connect(self._update_preview)
        if problems is not None:
            problems.updated.connect(lambda _p: self._update_markers())
        self.rebuild()

    # ------------------------------------------------------------------ layout
    def _build_plots(self) -> None:
        self.glw.clear()
        self.plots, self.euler_plots, self.cursors = [], [], []
        self.items = {}
        self.handles, self.bands, self.markers = [], [], []
        row = 0
        roles = [("euler", None)] if self.overlay else [("euler", c) for c in range(3)]
        for role in roles:
            p = self._new_plot(role, row)
            title = "Euler (deg)" if role[1] is None else f"{CHANNEL_NAMES[role[1]]} (deg)"
            p.setLabel("left", title)
            self.euler_plots.append(p)
            row += 1
        self.speed_plot = self.quat_plot = None
        if self.show_speed:
            self.speed_plot = self._new_plot(("speed", None), row)
            self.speed_plot.setLabel("left", "speed (deg/s)")
            row += 1
        if self.show_quat:
            self.quat_plot = self._new_plot(("quat", None), row)
            self.quat_plot.setLabel("left", "quaternion")
            self.quat_plot.setYRange(-1.05, 1.05)
            row += 1
        # Euler plots take the room; strips are thinner.
        for i in range(row):
            self.glw.ci.layout.setRowStretchFactor(i, 3 if i < len(self.euler_plots) else 2)
        self.plots[-1].setLabel("bottom", "time (s)")
        for p in self.plots[:-1]:
            p.getAxis("bottom").setStyle(showValues=False)
        self._apply_theme_to_plots()

    def _new_plot(self, role, row) -> pg.PlotItem:
        vb = CurveViewBox(self, role)
        p = self.glw.addPlot(row=row, col=0, viewBox=vb)
        p.showGrid(x=True, y=True, alpha=self.theme.grid_alpha)
        p.getAxis("left").setWidth(62)
        p.setMenuEnabled(False)
        p.hideButtons()
        # 12k-sample curves: draw only what is visible, at most ~2 samples per pixel (peaks kept).
        p.setClipToView(True)
        p.setDownsampling(auto=True, mode="peak")
        # Replaying an axis' cached QPicture costs ~2 ms per axis; a curve edit dirties a region that
        # overlaps the axes, so keep them as device pixmaps (redrawn only when the range changes).
        for name in ("left", "bottom"):
            p.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if self.plots:
            p.setXLink(self.plots[0])
        vb.sigRangeChanged.connect(self._on_range_changed)
        cursor = pg.InfiniteLine(pos=self.doc.current_time, angle=90, movable=True)
        cursor.setZValue(1e6)
        cursor.sigDragged.connect(self._on_cursor_dragged)
        p.addItem(cursor, ignoreBounds=True)
        self.cursors.append(cursor)
        self.plots.append(p)
        return p

    def set_layout(self, *, overlay: bool | None = None, speed: bool | None = None, quat: bool | None = None):
        """Switch stacked/overlaid channels and the speed / quaternion strips."""
        if overlay is not None:
            self.overlay = overlay
        if speed is not None:
            self.show_speed = speed
        if quat is not None:
            self.show_quat = quat
        xr = self.plots[0].getViewBox().viewRange()[0] if self.plots else None
        self._build_plots()
        self.rebuild(frame=xr is None)
        if xr is not None:
            self.plots[0].setXRange(*xr, padding=0)
            for p in self.plots:
                p.enableAutoRange(axis=pg.ViewBox.YAxis)
                p.getViewBox().updateAutoRange()
                p.disableAutoRange()

    def set_show_original(self, on: bool) -> None:
        self.show_original = on
        self.rebuild(frame=False)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.glw.setBackground(theme.plot_bg)
        self._apply_theme_to_plots()
        self.rebuild(frame=False)

    def _apply_theme_to_plots(self) -> None:
        fg = self.theme.plot_fg
        for p in self.plots:
            for ax in ("left", "bottom"):
                a = p.getAxis(ax)
                a.setPen(fg)
                a.setTextPen(fg)
            p.showGrid(x=True, y=True, alpha=self.theme.grid_alpha)
        for c in self.cursors:
            c.setPen(pg.mkPen(self.theme.cursor, width=1.5))
            c.setHoverPen(pg.mkPen(self.theme.key_selected, width=2.5))
        self.glw.setBackground(self.theme.plot_bg)

    # ------------------------------------------------------------------ drawing
    def drawn_paths(self) -> list[str]:
        return list(self.doc.selected_paths[:MAX_DRAWN_TRACKS])

    def _track_pens(self, primary: bool, ch: int, style=Qt.PenStyle.SolidLine, width=1.6):
        c = QColor(self.theme.channels[ch])
        if not primary:
            c.setAlpha(130)
        pen = pg.mkPen(c, width=width if primary else 1.0, style=style)
        return pen

    def rebuild(self, frame: bool = True) -> None:
        """Redraw every selected track (selection change, load, layout change)."""
        for p in self.plots:
            for item in list(p.items):
                if item not in self.cursors:
                    p.removeItem(item)
        self.items = {}
        self.handles, self.bands, self.markers = [], [], []
        self._make_handle_items()
        paths = self.drawn_paths()
        for i, path in enumerate(paths):
            self.items[path] = self._make_track_items(path, primary=(i == 0))
        self._update_all_tracks(paths)
        self._update_preview()
        self._update_markers()
        self._update_selection()
        self._on_time(self.doc.current_time)
        if frame:
            self.frame_all()
        self.rebuilt.emit()

    def _make_track_items(self, path: str, primary: bool) -> _TrackItems:
        it = _TrackItems()
        for p in self.euler_plots:
            vb = p.getViewBox()
            chans = range(3) if vb.role[1] is None else [vb.role[1]]
            for ch in chans:
                curve = _curve(pen=self._track_pens(primary, ch))
                curve.setZValue(10 if primary else 5)
                p.addItem(curve)
                it.curves.append((curve, ch))
                # keys: the channel colour, lifted toward the key colour (one drawPoints pass per frame)
                kc = QColor(self.theme.channels[ch])
                kc = kc.lighter(118) if self.theme.dark else kc.darker(150)
                keys = KeyMarkers(4 if primary else 3, kc.name())
                keys.setZValue(20)
                p.addItem(keys)
                it.keys.append((keys, ch, vb))
                sel = KeyMarkers(6, self.theme.key_selected, self.theme.cursor)
                sel.setZValue(30)
                p.addItem(sel)
                it.selected.append((sel, ch, vb))
        if self.speed_plot is not None:
            c = QColor(self.theme.speed)
            if not primary:
                c.setAlpha(120)
            it.speed = _curve(pen=pg.mkPen(c, width=1.4))
            it.speed.setZValue(10)
            self.speed_plot.addItem(it.speed)
        if self.quat_plot is not None:
            for k in range(4):
                c = QColor(self.theme.channels[k])
                if not primary:
                    c.setAlpha(120)
                q = _curve(pen=pg.mkPen(c, width=1.3))
                q.setZValue(10)
                self.quat_plot.addItem(q)
                it.quat.append(q)
        return it

    def _update_all_tracks(self, paths) -> None:
        for path in paths:
            self._update_track(path)

    def _update_track(self, path: str) -> None:
        it = self.items.get(path)
        if it is None:
            return
        try:
            tr = self.doc.clip.track(path)
        except KeyError:
            return
        window = None
        if self.doc.in_live_edit() and self.plots:
            # mid-drag: sample only what is visible (+ a margin); the drag's end resamples it all
            x0, x1 = self.plots[0].getViewBox().viewRange()[0]
            pad = 0.25 * (x1 - x0)
            window = (x0 - pad, x1 + pad)
        s = self.cache.get(tr, window)
        for curve, ch in it.curves:
            _set_if_changed(curve, s.samples.times, s.samples.euler[:, ch])
        for keys, ch, _vb in it.keys:
            old = keys.getData()
            if not (np.array_equal(old[0], s.key_times) and np.array_equal(old[1], s.key_values[:, ch])):
                keys.setData(s.key_times, s.key_values[:, ch])
        if it.speed is not None:
            _set_if_changed(it.speed, s.samples.times, s.samples.speed)
        for k, q in enumerate(it.quat):
            _set_if_changed(q, s.samples.times, s.samples.quat[:, k])
        self._update_ghost(path, tr, it)
        if path == self._primary():
            self._update_bands(s)

    def _primary(self) -> str | None:
        return self.doc.selected_paths[0] if self.doc.selected_paths else None

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
            it.ghost = self._overlay_items(orig, self.theme.original, Qt.PenStyle.DotLine, z=3)
            it.ghost_track = orig

    def _overlay_items(self, track: RotationTrack, color: str | None, style, z: float, width=1.3):
        s = self.cache.get(track)
        out = []
        for p in self.euler_plots:
            chans = range(3) if p.getViewBox().role[1] is None else [p.getViewBox().role[1]]
            for ch in chans:
                pen = pg.mkPen(color or self.theme.channels[ch], width=width, style=style)
                item = _curve(pen=pen)
                item.setZValue(z)
                p.addItem(item)
                item.setData(s.samples.times, s.samples.euler[:, ch])
                out.append((item, "euler", ch))
        if self.speed_plot is not None:
            pen = pg.mkPen(color or self.theme.speed, width=width, style=style)
            item = _curve(pen=pen)
            item.setZValue(z)
            self.speed_plot.addItem(item)
            item.setData(s.samples.times, s.samples.speed)
            out.append((item, "speed", 0))
        if self.quat_plot is not None:
            for k in range(4):
                pen = pg.mkPen(color or self.theme.channels[k], width=width, style=style)
                item = _curve(pen=pen)
                item.setZValue(z)
                self.quat_plot.addItem(item)
                item.setData(s.samples.times, s.samples.quat[:, k])
                out.append((item, "quat", k))
        return out

    def _plot_for(self, where: str, item) -> pg.PlotItem:
        if where == "speed":
            return self.speed_plot
        if where == "quat":
            return self.quat_plot
        for p in self.euler_plots:
            if item in p.items:
                return p
        return self.euler_plots[0]

    def _update_preview(self) -> None:
        """Dashed "after" curves of the drawn tracks the preview changes. Only tracks whose preview
        track object changed are touched, and existing items get ``setData`` (no remove/add, which
        would relayout the plots) so a recipe parameter change redraws just the affected curves."""
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
                    y = {"euler": s.samples.euler, "quat": s.samples.quat}.get(where)
                    item.setData(s.samples.times, s.samples.speed if y is None else y[:, ch])
                self.preview_redraws += 1
                continue
            for item, where, _ch in it.preview:
                plot = self._plot_for(where, item)
                if plot is not None:
                    plot.removeItem(item)
            it.preview = []
            if ptr is not None:
                # 1-px dashes: Qt's raster engine strokes wider dashed pens through its path
                # stroker, ~3 ms per 50 s curve (measured: preview drawing 45 -> 21 ms).
                it.preview = self._overlay_items(ptr, None, Qt.PenStyle.DashLine, z=15, width=1.0)
                self.preview_redraws += 1

    def _update_bands(self, s: _Sampled) -> None:
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
        for path, it in self.items.items():
            try:
                tr = self.doc.clip.track(path)
            except KeyError:
                continue
            idx = np.array(sorted(self.doc.selected_keys.get(path, ())), dtype=np.int64)
            s_kt, s_kv = self.cache.keys(tr)
            for sel, ch, _vb in it.selected:
                if idx.size:
                    sel.setData(s_kt[idx], s_kv[idx, ch])
                else:
                    sel.clear()
        self._update_handles()

    def _make_handle_items(self) -> None:
        """One handle line item + one marker item per Euler plot, reused for every update."""
        self.handles = []
        for p in self.euler_plots:
            vb = p.getViewBox()
            line = pg.PlotCurveItem(pen=pg.mkPen(self.theme.handle, width=1), connect="pairs")
            line.setZValue(25)
            pts = KeyMarkers(6, self.theme.plot_bg, self.theme.handle)
            pts.setZValue(26)
            vb.addItem(line, ignoreBounds=True)
            vb.addItem(pts, ignoreBounds=True)
            self.handles.append((line, pts, vb))

    def _update_handles(self) -> None:
        self._handle_points = []
        per_vb: dict[int, tuple[list, list, list, list]] = {
            id(vb): ([], [], [], []) for _l, _p, vb in self.handles
        }
        for path in self.items:
            idx = sorted(self.doc.selected_keys.get(path, ()))
            if not idx or len(idx) > MAX_HANDLE_KEYS:
                continue
            tr = self.doc.clip.track(path)
            if tr.kind != "euler":
                continue  # quaternion slopes have no direction in the Euler view
            c = tr.curve
            for _line, _pts, vb in self.handles:
                px, py = vb.viewPixelSize()
                if not (px > 0 and py > 0):
                    continue
                xs, ys, hx, hy = per_vb[id(vb)]
                chans = range(3) if vb.role[1] is None else [vb.role[1]]
                for ch in chans:
                    for i in idx:
                        t, v = float(c.time[i]), float(c.value[i, ch])
                        for side in ("in", "out"):
                            end = self._handle_end(c, i, ch, side, px, py)
                            if end is None:
                                continue
                            xs += [t, end[0]]
                            ys += [v, end[1]]
                            hx.append(end[0])
                            hy.append(end[1])
                            self._handle_points.append((vb, path, i, ch, side, end[0], end[1]))
        for line, pts, vb in self.handles:
            xs, ys, hx, hy = per_vb[id(vb)]
            if xs or line.xData is not None and len(line.xData):
                line.setData(np.array(xs, dtype=float), np.array(ys, dtype=float), connect="pairs")
            pts.setData(np.array(hx, dtype=float), np.array(hy, dtype=float))

    @staticmethod
    def _handle_end(c, i, ch, side, px, py):
        """Handle end point (data coords): weighted sides at weight x interval, others 45 px long."""
        n = c.n_keys
        slope = float(c.in_slope[i, ch] if side == "in" else c.out_slope[i, ch])
        if not np.isfinite(slope):
            return None
        t, v = float(c.time[i]), float(c.value[i, ch])
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

    def _on_range_changed(self, *_):
        if self._handle_points or any(self.doc.selected_keys.values()):
            self._handle_timer.start()

    def _on_clip_changed(self) -> None:
        paths = self.doc.changed_paths
        if paths is None:
            self.rebuild(frame=True)
            return
        drawn = [p for p in paths if p in self.items]
        self._update_all_tracks(drawn)
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

    # ------------------------------------------------------------------ framing
    def frame_all(self) -> None:
        """Fit every plot to its content (A)."""
        for p in self.plots:
            p.enableAutoRange()
            p.getViewBox().updateAutoRange()
            p.disableAutoRange()
        if self.quat_plot is not None:
            self.quat_plot.setYRange(-1.05, 1.05)

    def frame_selection(self) -> None:
        """Fit the plots to the selected keys (F); everything when nothing is selected."""
        sel = {p: s for p, s in self.doc.selected_keys.items() if p in self.items and s}
        if not sel:
            self.frame_all()
            return
        times, vals = [], []
        for path, idx in sel.items():
            s_kt, s_kv = self.cache.keys(self.doc.clip.track(path))
            ii = np.array(sorted(idx))
            times.append(s_kt[ii])
            vals.append(s_kv[ii])
        t = np.concatenate(times)
        v = np.concatenate(vals)
        t0, t1 = float(t.min()), float(t.max())
        pad = max((t1 - t0) * 0.1, 2.0 / self.doc.frame_rate)
        self.plots[0].setXRange(t0 - pad, t1 + pad, padding=0)
        for p in self.euler_plots:
            ch = p.getViewBox().role[1]
            col = v.reshape(-1) if ch is None else v[:, ch]
            lo, hi = float(col.min()), float(col.max())
            pv = max((hi - lo) * 0.15, 2.0)
            p.setYRange(lo - pv, hi + pv, padding=0)

    # ------------------------------------------------------------------ hit testing
    def _key_hit(self, vb: CurveViewBox, scene_pos) -> tuple[str, int, int] | None:
        """(path, key index, channel) of the key nearest to the mouse within HIT_PX pixels."""
        if vb.role[0] != "euler":
            return None
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        best = None
        for path, it in self.items.items():
            for _keys, ch, kvb in it.keys:
                if kvb is not vb:
                    continue
                s_kt, s_kv = self.cache.keys(self.doc.clip.track(path))
                if s_kt.size == 0:
                    continue
                # the keys are sorted in time: only look at the ones within the hit radius in x
                lo = np.searchsorted(s_kt, pos.x() - HIT_PX * px)
                hi = np.searchsorted(s_kt, pos.x() + HIT_PX * px, side="right")
                if hi <= lo:
                    continue
                dx = (s_kt[lo:hi] - pos.x()) / px
                dy = (s_kv[lo:hi, ch] - pos.y()) / py
                d = dx * dx + dy * dy
                j = int(np.argmin(d))
                if d[j] <= HIT_PX * HIT_PX and (best is None or d[j] < best[0]):
                    best = (float(d[j]), path, lo + j, ch)
        return None if best is None else best[1:]

    def _handle_hit(self, vb: CurveViewBox, scene_pos):
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        best = None
        for hvb, path, i, ch, side, hx, hy in self._handle_points:
            if hvb is not vb:
                continue
            d = ((hx - pos.x()) / px) ** 2 + ((hy - pos.y()) / py) ** 2
            if d <= HIT_PX * HIT_PX and (best is None or d < best[0]):
                best = (d, path, i, ch, side)
        return None if best is None else best[1:]

    # ------------------------------------------------------------------ mouse gestures
    def on_click(self, vb: CurveViewBox, scene_pos, mods) -> None:
        if vb.role[0] != "euler":
            self._scrub(vb, scene_pos)
            return
        hit = self._key_hit(vb, scene_pos)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        if hit is None:
            if not (shift or ctrl):
                self.doc.clear_key_selection()
            return
        path, i, _ch = hit
        keys = {p: set(s) for p, s in self.doc.selected_keys.items()} if (shift or ctrl) else {}
        cur = keys.setdefault(path, set())
        if ctrl and i in cur:
            cur.discard(i)
        else:
            cur.add(i)
        self.doc.select_keys(keys)

    def _scrub(self, vb: CurveViewBox, scene_pos) -> None:
        self.doc.set_time(self.doc.snap_time(vb.mapSceneToView(scene_pos).x()))

    def select_keys_in_rect(self, vb: CurveViewBox, rect: QRectF) -> dict[str, set[int]]:
        """Keys of the drawn tracks inside ``rect`` (data coords) in ``vb``'s channel(s)."""
        out: dict[str, set[int]] = {}
        chans = range(3) if vb.role[1] is None else [vb.role[1]]
        for path in self.items:
            s_kt, s_kv = self.cache.keys(self.doc.clip.track(path))
            inside = (s_kt >= rect.left()) & (s_kt <= rect.right())
            vin = np.zeros_like(inside)
            for ch in chans:
                vin |= (s_kv[:, ch] >= rect.top()) & (s_kv[:, ch] <= rect.bottom())
            idx = np.nonzero(inside & vin)[0]
            if idx.size:
                out[path] = {int(i) for i in idx}
        return out

    def box_select(self, vb: CurveViewBox, rect: QRectF, mods) -> None:
        found = self.select_keys_in_rect(vb, rect)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        if not (shift or ctrl):
            self.doc.select_keys(found)
            return
        keys = {p: set(s) for p, s in self.doc.selected_keys.items()}
        for p, idx in found.items():
            cur = keys.setdefault(p, set())
            if ctrl:
                cur ^= idx
            else:
                cur |= idx
        self.doc.select_keys(keys)

    def begin_drag(self, vb: CurveViewBox, scene_pos, mods) -> str | None:
        """Decide what a left drag starting at ``scene_pos`` does: "handle", "keys", "box" or "scrub"."""
        if vb.role[0] != "euler":
            self._drag = _Drag("scrub", vb)
            self._scrub(vb, scene_pos)
            return "scrub"
        h = self._handle_hit(vb, scene_pos)
        if h is not None:
            path, i, ch, side = h
            self._drag = _Drag("handle", vb, self.doc.clip, channel=ch, path=path, index=i, side=side)
            self.doc.begin_live_edit()
            return "handle"
        hit = self._key_hit(vb, scene_pos)
        if hit is None:
            return "box"
        path, i, ch = hit
        if i not in self.doc.selected_keys.get(path, ()):  # grabbing an unselected key selects it
            if mods & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier):
                keys = {p: set(s) for p, s in self.doc.selected_keys.items()}
                keys.setdefault(path, set()).add(i)
            else:
                keys = {path: {i}}
            self.doc.select_keys(keys)
        tr = self.doc.clip.track(path)
        s_kt, s_kv = self.cache.keys(tr)
        self._drag = _Drag(
            "keys",
            vb,
            self.doc.clip,
            {p: set(v) for p, v in self.doc.selected_keys.items()},
            channel=ch,
            path=path,
            index=i,
            t0=float(s_kt[i]),
            v0=float(s_kv[i, ch]),
        )
        self.doc.begin_live_edit()
        return "keys"

    def drag_to(self, vb: CurveViewBox, p0: QPointF, p1: QPointF, mods, finish: bool) -> None:
        d = self._drag
        if d is None:
            return
        if d.kind in ("keys", "handle") and not self.doc.in_live_edit():
            self._drag = None  # the edit was cancelled under the drag (undo/redo mid-drag)
            return
        if d.kind == "scrub":
            self.doc.set_time(self.doc.snap_time(p1.x()))
        elif d.kind == "keys":
            dt, dv = p1.x() - p0.x(), p1.y() - p0.y()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                px, py = vb.viewPixelSize()
                if abs(dt / px) >= abs(dv / py):
                    dv = 0.0
                else:
                    dt = 0.0
            self.move_selection(d, dt, dv)
        elif d.kind == "handle":
            self._drag_handle(d, p1)
        if finish:
            self._drag = None
            if d.kind == "keys":
                self.doc.end_live_edit("Move keys")
            elif d.kind == "handle":
                self.doc.end_live_edit("Edit tangent")

    def move_selection(self, d: _Drag, dt: float, dv: float) -> None:
        """Move the keys selected at drag start by ``dt`` s (grabbed key snapped to a frame) and
        ``dv`` degrees in the grabbed channel; one live-edit update."""
        base = d.base_clip
        fr = self.doc.frame_rate
        if dt:
            dt = self.doc.snap_time(d.t0 + dt) - d.t0
        gap = 1.0 / fr if dt else 0.0
        tracks = {}
        for path, idx in d.sel.items():
            tr = base.track(path)
            mask = np.zeros(tr.n_keys, dtype=bool)
            mask[np.fromiter(idx, dtype=np.int64)] = True
            dt = ed.clamp_time_shift(np.asarray(tr.times), mask, dt, min(gap, 0.5 * _min_step(tr)))
        for path, idx in d.sel.items():
            tracks[path] = ed.move_keys(base.track(path), idx, dt, d.channel, dv)
        new = base.with_tracks(tracks.get(t.path, t) for t in base.tracks)
        self.doc.update_live(new, tracks.keys())
        tlabel = f"Δt {dt:+.4f} s ({dt * fr:+.1f} f)" if dt else ""
        vlabel = f"Δ{CHANNEL_NAMES[d.channel] if d.channel is not None and d.channel < 3 else ''} {dv:+.3f}°"
        self.statusMessage.emit(f"Move keys: {tlabel} {vlabel if dv else ''}".strip())

    def _drag_handle(self, d: _Drag, p: QPointF) -> None:
        tr = d.base_clip.track(d.path)
        c = tr.curve
        t, v = float(c.time[d.index]), float(c.value[d.index, d.channel])
        dx = p.x() - t
        if d.side == "in":
            dx = min(dx, -1e-6)
        else:
            dx = max(dx, 1e-6)
        slope = (p.y() - v) / dx
        new = ed.set_slope(tr, d.index, d.channel, d.side, slope)
        if c.weighted_mode[d.index, d.channel] & (1 if d.side == "in" else 2):
            j = d.index - 1 if d.side == "in" else d.index + 1
            if 0 <= j < c.n_keys:
                new = ed.set_weight(new, d.index, d.channel, d.side, abs(dx) / abs(float(c.time[j]) - t))
        self.doc.update_live(d.base_clip.with_track(new), [d.path])
        self.statusMessage.emit(f"Tangent {d.side}: slope {slope:.3f} deg/s")

    def cancel_drag(self) -> None:
        """Escape during a drag: restore the state at drag start."""
        if self._drag is not None and self._drag.kind in ("keys", "handle"):
            self.doc.cancel_live_edit()
        self._drag = None

    def on_context_menu(self, vb: CurveViewBox, scene_pos, screen_pos) -> None:
        hit = self._key_hit(vb, scene_pos)
        if hit is not None and hit[1] not in self.doc.selected_keys.get(hit[0], ()):
            self.doc.select_keys({hit[0]: {hit[1]}})
        self.contextMenuRequested.emit(screen_pos.toPoint())

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


def _min_step(track: RotationTrack) -> float:
    t = np.asarray(track.times)
    return float(np.min(np.diff(t))) if t.size > 1 else 1.0
