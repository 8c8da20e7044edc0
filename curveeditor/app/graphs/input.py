"""Mouse and keyboard handling of the graphs, apart from drawing.

:class:`CurveViewBox` turns pyqtgraph's mouse events into calls on :class:`GraphInput`, which decides
what they do (Maya / Blender conventions): click a key to select it on the curve clicked (Shift adds,
Ctrl toggles; with the document's ``whole_keys`` option, on X, Y and Z together), drag on empty space
for a box selection of the keys of the curves it covers, drag a key to move the selection in time
(snapped to frames; a key's channels share its time) and value (every selected curve's keys by the
same amount; Shift constrains to the dominant direction), drag a tangent handle of a selected key, middle
drag or Alt+drag pans, wheel zooms, right click opens the key menu. A drag is one undo step. Hovering
a curve names its track, channel and value.

Everything is hit-tested in *display* coordinates (what is drawn: degrees, or [-1, 1] in the
Normalize view); the panel converts values back (``GraphPanel.value_factor``) before editing.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from curveeditor.engine import edit as ed
from curveeditor.engine.clip import RotationTrack

from .host import GraphHost

__all__ = [
    "CurveViewBox",
    "Drag",
    "GraphInput",
    "HIT_PX",
    "HOVER_PX",
    "CHANNEL_NAMES",
    "no_hover_while_buttons_down",
]

CHANNEL_NAMES = ("X", "Y", "Z")
#: grab radius of a key / handle (px): at least 8 px (issue 22), around a KEY_PX mark
HIT_PX = 9.0
HOVER_PX = 8.0


def no_hover_while_buttons_down(scene) -> None:
    """Skip pyqtgraph's own hover pass (``itemsNearEvent`` over every item, ~2 ms) on mouse moves
    with a button held: mid-drag no item may accept hover anyway (pyqtgraph marks those events
    unacceptable), so key drags and pans only lose work. Hover resumes with the next free move."""
    send = type(scene).sendHoverEvents
    ref = weakref.ref(scene)  # no scene -> closure -> scene cycle of Qt wrappers

    def hover(ev, exitOnly=False):  # noqa: N803 - pyqtgraph's signature
        sc = ref()
        if sc is None or (not exitOnly and ev.buttons()):
            return
        send(sc, ev, exitOnly)

    scene.sendHoverEvents = hover


class CurveViewBox(pg.ViewBox):
    """A ViewBox whose left-button gestures edit keys instead of panning.

    ``role``: ``("euler", channel)`` for a stacked channel plot, ``("euler", None)`` for the overlaid
    plot, ``("speed", None)`` or ``("quat", None)`` for the strips (where left-drag scrubs time).
    """

    def __init__(self, handler: GraphInput, role: tuple[str, int | None]):
        super().__init__(enableMenu=False)
        self.handler = handler
        self.role = role
        self._gesture: str | None = None
        self._band: QGraphicsRectItem | None = None

    def channels(self) -> range | list[int]:
        return range(3) if self.role[1] is None else [self.role[1]]

    def viewPixelSize(self):  # noqa: N802 - pyqtgraph API
        """``ViewBox.viewPixelSize`` with the same arithmetic, the child transform inverted once
        instead of three times (``mapToView`` per point): recomputed by every plot after each range
        change (4 plots per zoom / pan step)."""
        if self._viewPixelSizeCache is None:
            self.updateMatrix()
            m = pg.functions.invertQTransform(self.childTransform())
            o = m.map(pg.Point(0, 0))
            px, py = [pg.Point(m.map(v) - o) for v in self.pixelVectors()]
            self._viewPixelSizeCache = (px.length(), py.length())
        return self._viewPixelSizeCache

    def linkedViewChanged(self, view, axis):  # noqa: N802 - pyqtgraph API
        """Follow ``view``'s X range (the plots share time). pyqtgraph lines the two views up through
        their integer screen rectangles (``screenGeometry`` twice, ``Point`` maths) and re-disables
        auto-range (emitting ``sigStateChanged`` again) for each of the 3 linked plots on every zoom /
        pan step; the stacked plots have the same left edge and width in the scene, where its
        alignment is a copy of the range, so copy it. Anything else goes to pyqtgraph."""
        if axis != self.XAxis or self.linksBlocked or view is None or self.getViewWidget() is None:
            super().linkedViewChanged(view, axis)
            return
        mine, theirs = self.sceneBoundingRect(), view.sceneBoundingRect()
        if mine.width() <= 0 or mine.left() != theirs.left() or mine.width() != theirs.width():
            super().linkedViewChanged(view, axis)
            return
        x0, x1 = view.viewRange()[0]
        view.blockLink(True)
        try:
            if self.state["autoRange"][0] is not False:
                self.enableAutoRange(self.XAxis, False)
            self.setXRange(x0, x1, padding=0)
        finally:
            view.blockLink(False)

    def mouseClickEvent(self, ev):  # noqa: N802
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.handler.on_click(self, ev.scenePos(), ev.modifiers())
        elif ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self.handler.on_context_menu(self, ev.scenePos(), ev.screenPos())
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
            self._gesture = self.handler.begin_drag(self, ev.buttonDownScenePos(), mods)
            if self._gesture == "box":
                self._band = QGraphicsRectItem()
                theme = self.handler.panel.theme
                pen = QPen(QColor(theme.highlight))
                pen.setCosmetic(True)
                pen.setStyle(Qt.PenStyle.DashLine)
                self._band.setPen(pen)
                c = QColor(theme.highlight)
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
                self.handler.box_select(self, QRectF(p0, p1).normalized(), mods)
        else:
            self.handler.drag_to(self, p0, p1, mods, ev.isFinish())
        if ev.isFinish():
            self._gesture = None


@dataclass
class Drag:
    kind: str  # "keys", "handle", "scrub", "float" (float-curve keys: ``float_edit``)
    vb: CurveViewBox
    base_clip: object = None
    sel: dict = field(default_factory=dict)
    channel: int | None = None
    path: str = ""
    index: int = 0
    side: str = ""
    t0: float = 0.0
    v0: float = 0.0
    #: per selected track: (track at drag start, selected-key mask, smallest key interval s),
    #: worked out at the first step (the same for every step of the drag)
    moving: dict | None = None


def _min_step(track: RotationTrack) -> float:
    t = np.asarray(track.times)
    return float(np.min(np.diff(t))) if t.size > 1 else 1.0


def selection_mode(mods) -> str:
    """The selection mode of a click's modifiers (``ClipDocument.select_keys`` / ``select_float_keys``):
    Ctrl toggles, Shift adds, none sets."""
    if mods & Qt.KeyboardModifier.ControlModifier:
        return "toggle"
    return "add" if mods & Qt.KeyboardModifier.ShiftModifier else "set"


class GraphInput:
    """Selection, drags, handle edits, hover and the context menu of a :class:`GraphPanel`."""

    def __init__(self, panel: GraphHost):
        self.panel = panel
        self.doc = panel.doc
        self.drag: Drag | None = None
        self.hover_text = ""
        #: ``(path, channel)`` of the Euler curve under the last right click (the menu's Solo), or None
        self.menu_curve: tuple[str, int] | None = None

    # ------------------------------------------------------------------ hit testing
    def key_hit(self, vb: CurveViewBox, scene_pos) -> tuple[str, int, int] | None:
        """(path, key index, channel) of the key nearest to the mouse within HIT_PX pixels."""
        if vb.role[0] != "euler":
            return None
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        best = None
        for path in self.panel.drawn_paths():
            s_kt, s_kv = self.panel.display_keys(path)
            if s_kt.size == 0:
                continue
            # the keys are sorted in time: only look at the ones within the hit radius in x
            lo = np.searchsorted(s_kt, pos.x() - HIT_PX * px)
            hi = np.searchsorted(s_kt, pos.x() + HIT_PX * px, side="right")
            if hi <= lo:
                continue
            for ch in vb.channels():
                if not self.panel.curve_shown(path, ch):
                    continue
                dx = (s_kt[lo:hi] - pos.x()) / px
                dy = (s_kv[lo:hi, ch] - pos.y()) / py
                d = dx * dx + dy * dy
                j = int(np.argmin(d))
                if d[j] <= HIT_PX * HIT_PX and (best is None or d[j] < best[0]):
                    best = (float(d[j]), path, int(lo + j), ch)
        return None if best is None else best[1:]

    def handle_hit(self, vb: CurveViewBox, scene_pos):
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        best = None
        for hvb, path, i, ch, side, hx, hy in self.panel.handle_points:
            if hvb is not vb:
                continue
            d = ((hx - pos.x()) / px) ** 2 + ((hy - pos.y()) / py) ** 2
            if d <= HIT_PX * HIT_PX and (best is None or d < best[0]):
                best = (d, path, i, ch, side)
        return None if best is None else best[1:]

    def strip_curves(self, vb: CurveViewBox):
        """``(path, channel, x, y)`` of every curve drawn in ``vb`` (display units), for hovering."""
        strip = next((s for s in self.panel.strips if s.vb is vb), None)
        if strip is None:
            return
        for path in self.panel.drawn_paths():
            try:
                tr = self.doc.clip.track(path)
            except KeyError:
                continue
            s = self.panel.cache.get(tr, coarse=path not in self.panel.items)
            t = s.samples.times
            if strip.is_euler:
                for ch in strip.channels():
                    if self.panel.curve_shown(path, ch):
                        yield path, ch, t, self.panel.to_display(path, s.samples.euler[:, ch], ch)
            elif strip.role[0] == "speed":
                yield path, 0, t, s.samples.speed
            elif strip.role[0] == "quat":
                for k in range(4):
                    yield path, k, t, s.samples.quat[:, k]

    def curve_hit(self, vb: CurveViewBox, scene_pos) -> tuple[str, str, float, float] | None:
        """(path, channel name, time s, value) of the drawn curve nearest to the mouse within
        HOVER_PX pixels (vertical distance at the mouse's time)."""
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        if not (px > 0 and py > 0):
            return None
        x = pos.x()
        best = None
        for path, ch, xs, ys in self.strip_curves(vb):
            if xs.size == 0 or x < xs[0] or x > xs[-1]:
                continue
            y = float(np.interp(x, xs, ys))
            d = abs(y - pos.y()) / py
            if d <= HOVER_PX and (best is None or d < best[0]):
                best = (d, path, ch, y)
        if best is None:
            return None
        _d, path, ch, y = best
        name = {"euler": CHANNEL_NAMES, "quat": ("x", "y", "z", "w")}.get(vb.role[0], ("speed",))[ch]
        return path, name, x, y

    def hover(self, vb: CurveViewBox, scene_pos) -> str:
        """Text naming the curve under the mouse ("" when none); also kept in ``hover_text``."""
        hit = self.curve_hit(vb, scene_pos)
        if hit is None:
            self.hover_text = ""
            return ""
        path, name, t, y = hit
        unit = {"euler": "°", "speed": " °/s", "quat": ""}[vb.role[0]]
        if vb.role[0] == "euler" and self.panel.normalize:
            real = self.panel.from_display(path, CHANNEL_NAMES.index(name), y)
            val = f"{real:.2f}° (normalized {y:+.2f})"
        else:
            val = f"{y:.2f}{unit}" if vb.role[0] != "quat" else f"{y:.4f}"
        self.hover_text = f"{path} · {name} · {val} at {self.panel.time_text(t)}"
        return self.hover_text

    # ------------------------------------------------------------------ clicks
    def pick(self, path: str, i: int, ch: int) -> dict:
        """The selection a click on key ``i`` of ``path``'s channel ``ch`` makes: that curve's key, or
        the whole key (X, Y and Z) with the document's ``whole_keys`` option."""
        return {path: {i}} if self.doc.whole_keys else {(path, ch): {i}}

    def on_click(self, vb: CurveViewBox, scene_pos, mods) -> None:
        if vb.role[0] == "other" and self.panel.floats.on_click(vb, scene_pos, mods):
            return  # float curves (muscles, blend shapes): their keys are selected there
        if vb.role[0] != "euler":
            self._scrub(vb, scene_pos)
            return
        hit = self.key_hit(vb, scene_pos)
        mode = selection_mode(mods)
        if hit is None:
            if mode == "set":
                self.doc.clear_key_selection()
            return
        path, i, ch = hit
        self.doc.select_keys(self.pick(path, i, ch), mode, active=(path, i, ch), exclusive=mode == "set")

    def _scrub(self, vb: CurveViewBox, scene_pos) -> None:
        self.doc.set_time(self.doc.snap_time(vb.mapSceneToView(scene_pos).x()))

    def select_keys_in_rect(self, vb: CurveViewBox, rect: QRectF) -> dict:
        """Keys of the drawn tracks inside ``rect`` (display coords) on ``vb``'s channel(s):
        ``{(path, channel): indices}``, or ``{path: indices}`` (whole keys) with ``whole_keys``."""
        out: dict = {}
        whole = self.doc.whole_keys
        for path in self.panel.drawn_paths():
            s_kt, s_kv = self.panel.display_keys(path)
            inside = (s_kt >= rect.left()) & (s_kt <= rect.right())
            if not np.any(inside):
                continue
            for ch in vb.channels():
                if not self.panel.curve_shown(path, ch):
                    continue
                vin = inside & (s_kv[:, ch] >= rect.top()) & (s_kv[:, ch] <= rect.bottom())
                idx = np.nonzero(vin)[0]
                if not idx.size:
                    continue
                if whole:
                    out.setdefault(path, set()).update(idx.tolist())
                else:
                    out[(path, ch)] = set(idx.tolist())
        return out

    def box_select(self, vb: CurveViewBox, rect: QRectF, mods) -> None:
        if vb.role[0] == "other":
            self.panel.floats.box_select(rect, mods)
            return
        found = self.select_keys_in_rect(vb, rect)
        mode = selection_mode(mods)
        self.doc.select_keys(found, mode, exclusive=mode == "set")

    # ------------------------------------------------------------------ drags
    def begin_drag(self, vb: CurveViewBox, scene_pos, mods) -> str | None:
        """Decide what a left drag starting at ``scene_pos`` does: "handle", "keys", "box" or "scrub"."""
        if vb.role[0] == "other":
            gesture = self.panel.floats.begin_drag(vb, scene_pos, mods)
            if gesture is not None:
                self.drag = Drag("float" if gesture in ("keys", "handle") else "box", vb)
                return gesture
        if vb.role[0] != "euler":
            self.drag = Drag("scrub", vb)
            self._scrub(vb, scene_pos)
            return "scrub"
        h = self.handle_hit(vb, scene_pos)
        if h is not None:
            path, i, ch, side = h
            self.drag = Drag("handle", vb, self.doc.clip, channel=ch, path=path, index=i, side=side)
            self.doc.begin_live_edit()
            return "handle"
        hit = self.key_hit(vb, scene_pos)
        if hit is None:
            return "box"
        path, i, ch = hit
        if i not in self.doc.channel_keys(path, ch):  # grabbing an unselected key selects it
            add = mods & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier)
            pick = self.pick(path, i, ch)
            self.doc.select_keys(pick, "add" if add else "set", active=(path, i, ch), exclusive=not add)
        else:
            self.doc.select_keys(self.doc.key_selection, active=(path, i, ch))  # the grabbed key is active
        s_kt, s_kv = self.panel.display_keys(path)
        self.drag = Drag(
            "keys",
            vb,
            self.doc.clip,
            {k: set(v) for k, v in self.doc.key_selection.items() if v},
            channel=ch,
            path=path,
            index=i,
            t0=float(s_kt[i]),
            v0=float(s_kv[i, ch]),
        )
        self.panel.marks.hide_hover()  # the label left at the press would sit over the moving key
        self.doc.begin_live_edit()
        return "keys"

    def drag_to(self, vb: CurveViewBox, p0: QPointF, p1: QPointF, mods, finish: bool) -> None:
        d = self.drag
        if d is None:
            return
        if d.kind in ("keys", "handle") and not self.doc.in_live_edit():
            self.drag = None  # the edit was cancelled under the drag (undo/redo mid-drag)
            return
        if d.kind == "float":
            self.panel.floats.drag_to(p0, p1, mods, finish)
            if finish:
                self.drag = None
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
            if d.channel is not None:
                dv = dv / self.panel.value_factor(d.path, d.channel)  # display units -> degrees
            self.move_selection(d, dt, dv)
        elif d.kind == "handle":
            self.drag_handle(d, p1)
        if finish:
            self.drag = None
            if d.kind == "keys":
                self.panel.marks.hide_hover()
                self.doc.end_live_edit("Move keys")
            elif d.kind == "handle":
                self.doc.end_live_edit("Edit tangent")

    def move_selection(self, d: Drag, dt: float, dv: float) -> None:
        """Move the keys selected at drag start by ``dt`` s (grabbed key snapped to a frame; a key
        selected on any channel moves, its channels share the time) and ``dv`` degrees on every
        selected (key, channel); one live-edit update. ``d.sel`` in the per-track form
        (``{path: indices}``) moves the values of ``d.channel`` only."""
        base = d.base_clip
        fr = self.doc.frame_rate
        if dt:
            dt = self.doc.snap_time(d.t0 + dt) - d.t0
        gap = 1.0 / fr if dt else 0.0
        moving = getattr(d, "moving", None)  # (GraphPanel.move_selection takes any drag-like object)
        if moving is None:
            moving = {}
            cells: dict[str, list] = {}
            for k, idx in d.sel.items():
                path, ch = k if isinstance(k, tuple) else (k, None)
                if idx:
                    cells.setdefault(path, []).append((ch, idx))
            for path, entries in cells.items():
                tr = base.track(path)
                mask = np.zeros(tr.n_keys, dtype=bool)
                vmask = None
                for ch, idx in entries:
                    ii = np.fromiter(idx, dtype=np.int64, count=len(idx))
                    mask[ii] = True
                    if ch is not None:
                        if vmask is None:
                            vmask = np.zeros((tr.n_keys, 3), dtype=bool)
                        vmask[ii, ch] = True
                moving[path] = (tr, mask, _min_step(tr), np.nonzero(mask)[0], vmask)
            d.moving = moving
        if dt:
            for tr, mask, step, *_ in moving.values():
                dt = ed.clamp_time_shift(np.asarray(tr.times), mask, dt, min(gap, 0.5 * step))
        tracks = {
            p: ed.move_keys(tr, rows, dt, None if vm is not None else d.channel, dv, value_mask=vm)
            for p, (tr, _m, _s, rows, vm) in moving.items()
        }
        new = base.with_tracks(tracks.get(t.path, t) for t in base.tracks)
        self.doc.update_live(new, tracks.keys())
        if getattr(d, "vb", None) is not None and getattr(d, "path", ""):
            self.panel.marks.show_drag_label(d.vb, d.path, d.index, d.channel)
        tlabel = f"Δt {dt:+.4f} s ({dt * fr:+.1f} f)" if dt else ""
        vlabel = f"Δ{CHANNEL_NAMES[d.channel] if d.channel is not None and d.channel < 3 else ''} {dv:+.3f}°"
        self.panel.statusMessage.emit(f"Move keys: {tlabel} {vlabel if dv else ''}".strip())

    def drag_handle(self, d: Drag, p: QPointF) -> None:
        tr = d.base_clip.track(d.path)
        dt = p.x() - float(tr.curve.time[d.index])
        value = self.panel.from_display(d.path, d.channel, p.y())
        new, slope = ed.drag_tangent(tr, d.index, d.channel, d.side, dt, value)
        self.doc.update_live(d.base_clip.with_track(new), [d.path])
        self.panel.statusMessage.emit(f"Tangent {d.side}: slope {slope:.3f} deg/s")

    def cancel_drag(self) -> None:
        """Escape during a drag: restore the state at drag start."""
        if self.drag is not None and self.drag.kind == "float":
            self.panel.floats.cancel()
        if self.drag is not None and self.drag.kind in ("keys", "handle"):
            self.doc.cancel_live_edit()
        self.drag = None

    def on_context_menu(self, vb: CurveViewBox, scene_pos, screen_pos) -> None:
        self.menu_curve = None
        if vb.role[0] == "euler":
            c = self.curve_hit(vb, scene_pos)
            if c is not None:
                self.menu_curve = (c[0], CHANNEL_NAMES.index(c[1]))
        hit = self.key_hit(vb, scene_pos)
        if hit is not None:
            self.menu_curve = (hit[0], hit[2])
        if hit is not None and hit[1] not in self.doc.channel_keys(hit[0], hit[2]):
            self.doc.select_keys(self.pick(*hit))
        self.panel.contextMenuRequested.emit(screen_pos.toPoint())
