"""Dope sheet: one row per track with its key ticks, a summary row and group rows; retime keys.

Rows: **Clip** (every key time of the clip), then one row per bone in clip order, indented by depth, as
the track tree shows them. A bone with child tracks has a fold triangle: unfolded, its row shows its
own keys and its children follow below; folded, the children are hidden and its row summarises the
whole subtree (its own keys and every descendant's). A tick in the summary or a folded row stands for
every key at that time in the tracks it covers.

Mouse (Unity / Blender): click a tick to select its keys (Shift adds, Ctrl toggles), drag on empty space
to box-select (B then drag: a box even when it starts on a key, as on mocap keyed every frame), drag a
selected tick to move the selection in time (snapped to frames), click or drag in the ruler to move
the time cursor, wheel zooms about the mouse, middle or Alt drag pans. Keys:
S then move the mouse scales the selection in time about the pivot (the time cursor or the selection's
start, the toolbar's choice; click or Enter confirms, Escape or right click cancels); F frames the
selection, A the whole clip. Every move or scale is one undo step, through the document's live edit.
The selection is the document's (``selected_keys``), shared with the graphs and the key table; tracks
whose keys get selected become the selected tracks.

Float curves shown in the graphs (humanoid muscles, blend shapes: ``ClipDocument.shown_float_curves``)
get a row each after the tracks, as in Unity's Dopesheet: their ticks, selected as the float keys
(``selected_float_keys``; a plain click or box on one kind of row clears the other kind's selection),
and a drag moves the selected float keys in time (snapped to frames; keys do not pass their
neighbours, as the graphs' float drag), one undo step; S with float keys selected (and no rotation
key) scales them in time (``engine.retime.retime_track`` per curve: shapes kept, as the tracks').

Retiming is :func:`curveeditor.engine.retime.retime_over`: each track plays the same shape between the
keys that stay neighbours (tangents scale with time); moved keys overwrite the keys they land on or
cover, as in Unity (a drag restarts from the clip at its start, so dragging back restores them).

Speed: ticks of every visible row are rasterised with numpy into one pixel line per row (stretched
over the row when drawn; no per-key graphics items, :mod:`.ticks`), so a 31 x 2,752-key clip
repaints in a few milliseconds. While keys are dragged only the ticks follow each mouse move (the
drag's key times, :class:`~.ticks.DragPreview`); the document, with every other view, follows
when the mouse rests (``LIVE_REST_MS``) and on release (see ``LIVE_REST_MS`` for the figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QFont, QFontMetrics, QImage, QPainter, QPen
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolButton, QToolTip, QVBoxLayout, QWidget

from curveeditor.engine import float_curves as fc
from curveeditor.engine.retime import map_times, retime_over, retime_track

from ..common.theme import LIGHT, Theme
from ..model.document import ClipDocument
from .ticks import DragPreview, TickRaster

__all__ = ["DopeSheet", "DopeCanvas", "Row"]

ROW_H = 18
RULER_H = 22
LABEL_W = 210
TICK_HALF = 3  # tick half-width in pixels
HIT_PX = 5.0  # at most; on dense keys the drawn tick's half-width + 2 px, so boxes start between
_FLOAT_KEY = "\x00float:"  # the tick raster's key of a float row's curve (never a track path)
CURSOR_BAND = 3  # px either side of the time cursor's 1.5-px line that a time step repaints
INDENT_PX = 8  # per hierarchy level, as the track tree (12 levels = 96 px of the label column)
#: While keys are dragged the ticks follow every mouse move (a preview, times only); the document,
#: and with it the graphs, key table, diff and 3D view, follows when the mouse rests LIVE_REST_MS,
#: then exactly on release. One document step of a 10,000-key drag cost the main window 100 ms to
#: over a second (retime + every view's refresh), far more than a frame at 60 Hz.
LIVE_REST_MS = 80


def _keys_between(times, t_lo: float, t_hi: float) -> range:
    """Indices of the sorted key ``times`` (s) within [t_lo, t_hi] (1 ns slack either side)."""
    t = np.asarray(times)
    return range(int(np.searchsorted(t, t_lo - 1e-9)), int(np.searchsorted(t, t_hi + 1e-9, side="right")))


@dataclass
class Row:
    """One dope-sheet row: the ``paths`` whose keys it shows (the bone's own track; its whole subtree,
    own track first, when folded; every track for the summary)."""

    kind: str  # "summary", "track", "float"
    label: str
    paths: tuple[str, ...]
    depth: int = 0
    group: str = ""  # the bone's path when it has child tracks (the row folds), else ""
    float_name: str = ""  # a "float" row's curve (``OtherTrack.name``)

    @property
    def folds(self) -> bool:
        return bool(self.group)


@dataclass
class _Gesture:
    kind: str  # "move", "box", "scrub", "pan", "scale"; on float keys "fmove", "fscale"
    x0: float
    y0: float
    base_clip: object = None
    sel: dict = field(default_factory=dict)
    grab_t: float = 0.0
    view0: tuple[float, float] = (0.0, 1.0)
    last_ok: object = None  # the moved keys' indices in the document's clip (last applied)
    preview: DragPreview | None = None  # move / scale: the ticks shown while the mouse moves
    applied: tuple | None = None  # (offset, scale, pivot) the document shows
    floats: dict = field(default_factory=dict)  # "fmove": name -> the float curve at the press


class DopeCanvas(QWidget):
    """The painted area of the dope sheet (labels, ruler, ticks)."""

    statusMessage = Signal(str)

    def __init__(self, document: ClipDocument, sheet: DopeSheet):
        super().__init__(sheet)
        self.doc = document
        self.sheet = sheet
        self.theme: Theme = LIGHT
        self.rows: list[Row] = []
        self.folded: set[str] = set()
        self.view = (0.0, 1.0)  # visible seconds
        self.scroll_rows = 0
        self.gesture: _Gesture | None = None
        self.band: QRectF | None = None
        self.paints = 0
        self._cursor_x: float | None = None  # where the last paint drew the time cursor (px)
        self._mouse_x: float | None = None
        self.raster = TickRaster()
        self._sel_times: dict[str, tuple] = {}
        self.box_armed = False  # B pressed: the next left drag is a box even when it starts on a tick
        self.live_updates = 0  # document updates of drags (tests, benchmark)
        self._rest_timer = QTimer(self, singleShot=True, interval=LIVE_REST_MS)
        self._rest_timer.timeout.connect(self._on_rest)
        self._rest_cursor = QCursor.pos()
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumHeight(RULER_H + 3 * ROW_H)

    # ------------------------------------------------------------------ model
    def rebuild_rows(self) -> None:
        clip = self.doc.clip
        paths = [t.path for t in clip.tracks]
        rows = [Row("summary", f"{clip.name} (all tracks)", tuple(paths))]
        hidden_under: list[str] = []
        for p in paths:
            if any(p.startswith(h + "/") for h in hidden_under):
                continue
            children = tuple(q for q in paths if q.startswith(p + "/"))
            folded = bool(children) and p in self.folded
            if folded:
                hidden_under.append(p)
            rows.append(
                Row(
                    "track",
                    p.rsplit("/", 1)[-1],
                    (p, *children) if folded else (p,),
                    p.count("/"),
                    group=p if children else "",
                )
            )
        for n in self.doc.shown_float_curves():
            rows.append(Row("float", self.doc.other_track(n).attribute, (), float_name=n))
        self.rows = rows
        self.update()

    def refresh_times(self, changed) -> None:
        """Repaint after an edit of the tracks ``changed`` (None = all: rows rebuilt)."""
        if changed is None:
            self.rebuild_rows()
            return
        self.update()

    def row_times(self, row: Row) -> np.ndarray:
        """Sorted unique key times (s) of ``row``'s tracks (computed on demand: clicks, not paints)."""
        if row.kind == "float":
            return np.asarray(self.doc.other_track(row.float_name).curve.time)
        clip = self.doc.clip
        ts = [np.asarray(clip.track(p).times) for p in row.paths]
        if not ts:
            return np.zeros(0)
        return ts[0] if len(ts) == 1 else np.unique(np.concatenate(ts))

    # ------------------------------------------------------------------ geometry
    def px_per_s(self) -> float:
        return max(self.width() - LABEL_W, 1) / max(self.view[1] - self.view[0], 1e-9)

    def time_moved(self) -> None:
        """Repaint the bands under the old and the new time cursor only: on a playback tick the
        rows, labels and ticks between them are unchanged (a whole repaint cost ~1.9 ms per tick
        on the CMU clip's 165 rows)."""
        x_new = float(self.t_to_x(self.doc.current_time))
        for x in (self._cursor_x, x_new):
            if x is not None and x >= LABEL_W - CURSOR_BAND:
                self.update(QRect(int(np.floor(x)) - CURSOR_BAND, 0, 2 * CURSOR_BAND + 1, self.height()))

    def t_to_x(self, t):
        return LABEL_W + (np.asarray(t, dtype=np.float64) - self.view[0]) * self.px_per_s()

    def x_to_t(self, x: float) -> float:
        return self.view[0] + (x - LABEL_W) / self.px_per_s()

    def row_at(self, y: float) -> int | None:
        if y < RULER_H:
            return None
        i = int((y - RULER_H) // ROW_H) + self.scroll_rows
        return i if 0 <= i < len(self.rows) else None

    def row_y(self, i: int) -> float:
        return RULER_H + (i - self.scroll_rows) * ROW_H

    def frame_range(self, t0: float, t1: float) -> None:
        pad = max(0.04 * (t1 - t0), 2.0 / self.doc.frame_rate)
        self.view = (t0 - pad, t1 + pad) if t1 > t0 else (t0 - 1.0, t0 + 1.0)
        self.update()

    # ------------------------------------------------------------------ selection helpers
    def keys_of_row_times(self, row: Row, t_lo: float, t_hi: float) -> dict[str, set[int]]:
        """Keys of ``row``'s tracks with times in [t_lo, t_hi]."""
        out: dict[str, set[int]] = {}
        clip = self.doc.clip
        for p in row.paths:
            keys = _keys_between(clip.track(p).times, t_lo, t_hi)
            if keys:
                out.setdefault(p, set()).update(keys)
        return out

    def float_keys_of_row_times(self, row: Row, t_lo: float, t_hi: float) -> dict[str, set[int]]:
        """Keys of a ``"float"`` row's curve with times in [t_lo, t_hi] (``{}`` for other rows)."""
        keys = _keys_between(self.row_times(row), t_lo, t_hi) if row.kind == "float" else range(0)
        return {row.float_name: set(keys)} if keys else {}

    def hit(self, x: float, y: float) -> tuple[int, float] | None:
        """``(row, key time)`` of the tick under the mouse (within HIT_PX pixels, less on dense keys:
        :meth:`hit_px`), or None."""
        i = self.row_at(y)
        if i is None or x < LABEL_W:
            return None
        t = self.row_times(self.rows[i])
        if t.size == 0:
            return None
        xs = self.t_to_x(t)
        j = int(np.argmin(np.abs(xs - x)))
        return (i, float(t[j])) if abs(xs[j] - x) <= self.hit_px() else None

    def tick_half(self) -> int:
        """Half-width (px) of a drawn tick: at most TICK_HALF, less on dense keys so neighbouring frames
        stay apart."""
        return int(np.clip(0.3 * self.px_per_s() / self.doc.frame_rate, 1, TICK_HALF))

    def hit_px(self) -> float:
        """How far (px) from a tick a press grabs it: a frame's keys 5 px apart (mocap zoomed out)
        would otherwise leave no empty space to start a box from."""
        return min(HIT_PX, self.tick_half() + 2.0)

    def apply_selection(self, keys: dict[str, set[int]], mode: str) -> None:
        """Set (``"set"``), add (``"add"``) or toggle (``"toggle"``) keys in the document's selection.
        A tick is a whole key (X, Y and Z); adding or toggling keeps the other keys' per-curve
        selection as it is."""
        keys = {p: set(s) for p, s in keys.items() if s}
        touched = set(keys) | (set(self.doc.selected_keys) if mode != "set" else set())
        if touched:
            order = [p for p in self.doc.selected_paths if p in touched]
            order += [t.path for t in self.doc.clip.tracks if t.path in touched and t.path not in order]
            self.doc.select_paths(order)
        self.doc.select_keys(keys, mode, exclusive=mode == "set")  # (one selection across the rows)

    # ------------------------------------------------------------------ editing
    def _retime(self, g: _Gesture, offset: float = 0.0, scale: float = 1.0, pivot: float = 0.0) -> bool:
        """Show the selection retimed by ``(offset, scale, pivot)`` (ticks now, the document soon);
        False (status message) when keys would overlap: the last valid state stays."""
        ok = True
        if g.preview.args != (offset, scale, pivot):  # else a sub-frame move: already shown
            try:
                g.preview.show(offset, scale, pivot)
                self.update()
            except ValueError as e:
                self.statusMessage.emit(str(e))
                ok = False
        if g.preview.args != g.applied:
            self._rest_timer.start()  # restarted by every move: fires when the mouse rests
            self._rest_cursor = QCursor.pos()
        return ok

    def _on_rest(self) -> None:
        # A stalled event loop (a busy machine) fires the timer before the moves queued meanwhile
        # are delivered: the cursor has moved on, so this is no rest.
        if QCursor.pos() != self._rest_cursor:
            self._rest_cursor = QCursor.pos()
            self._rest_timer.start()
            return
        self.apply_live()

    def apply_live(self) -> None:
        """Bring the document to the drag's preview (one ``retime_over`` + ``update_live``): every
        other view follows. Called when the mouse rests during a drag and once on release."""
        self._rest_timer.stop()
        g = self.gesture
        if g is None or g.preview is None or g.preview.args is None or g.applied == g.preview.args:
            return
        if not self.doc.in_live_edit():  # undo pressed mid-drag
            return
        args = g.preview.args
        if g.preview.identity:
            new, keys = g.base_clip, {p: set(s) for p, s in g.sel.items()}
        else:
            offset, scale, pivot = args
            groups = g.preview.groups
            new, keys = retime_over(g.base_clip, g.sel, offset, scale, pivot, snap=True, groups=groups)
        g.applied = args
        g.last_ok = keys
        self.live_updates += 1
        # indices shift when moved keys overwrite earlier ones: the selection comes with the clip
        self.doc.update_live(new, g.sel.keys(), keys)

    def begin_scale(self) -> bool:
        """Enter the S modal: scale the selected keys in time about the pivot while the mouse moves
        (the selected float keys when no rotation key is selected)."""
        sel = {p: set(s) for p, s in self.doc.selected_keys.items() if s}
        floats = {n: sorted(v) for n, v in self.doc.selected_float_keys.items() if v}
        if not (sel or floats) or self.gesture is not None:
            return False
        here = self.mapFromGlobal(QCursor.pos())
        x = float(here.x()) if self.rect().contains(here) or self._mouse_x is None else self._mouse_x
        if sel:
            preview = DragPreview(self.doc.clip, sel)
            self.gesture = _Gesture("scale", x, 0.0, self.doc.clip, sel, preview=preview)
        else:
            curves = {n: self.doc.other_track(n) for n in floats}
            self.gesture = _Gesture("fscale", x, 0.0, self.doc.clip, floats, floats=curves)
        self.doc.begin_live_edit()
        self.grabMouse()
        self.statusMessage.emit(
            "Scale keys in time: move the mouse, click or Enter to confirm, Esc to cancel"
        )
        return True

    def scale_pivot(self, g: _Gesture) -> float:
        if self.sheet.pivot_mode() == "cursor":
            return self.doc.current_time
        if g.kind == "fscale":
            return min(float(g.floats[n].curve.time[min(s)]) for n, s in g.sel.items())
        clip = g.base_clip
        return min(float(np.asarray(clip.track(p).times)[min(s)]) for p, s in g.sel.items())

    def scale_to(self, x: float) -> None:
        g = self.gesture
        pivot = self.scale_pivot(g)
        px = float(self.t_to_x(pivot))
        denom = g.x0 - px
        f = 1.0 if abs(denom) < 2 else (x - px) / denom
        f = max(f, 1e-3)
        ok = self._scale_floats(g, f, pivot) if g.kind == "fscale" else self._retime(g, scale=f, pivot=pivot)
        if ok:
            self.statusMessage.emit(f"Scale keys in time: x{f:.3f} about {pivot:.3f} s")

    def _scale_floats(self, g: _Gesture, f: float, pivot: float) -> bool:
        """The selected float keys' times scaled by ``f`` about ``pivot`` (snapped to frames), each
        curve through ``engine.retime.retime_track`` (what it plays between kept neighbours keeps its
        shape, as the rotation tracks' retime); False (status message, the last valid state kept)
        when keys would land on each other or before 0 s."""
        clip = g.base_clip
        try:
            for n, idx in g.sel.items():
                o = g.floats[n]
                t = np.array(o.curve.time)
                t[idx] = map_times(t[idx], 0.0, f, pivot, self.doc.frame_rate)
                clip = fc.with_float_curve(clip, n, retime_track(o, t, idx).curve)
        except ValueError as e:
            self.statusMessage.emit(f"float curve {n!r}: {e}")
            return False
        self.doc.update_live(clip, ())
        self.update()
        return True

    def finish(self, commit: bool) -> None:
        g = self.gesture
        self.gesture = None
        self._rest_timer.stop()
        if g is None:
            return
        if g.kind in ("scale", "fscale"):
            self.releaseMouse()
        if g.kind in ("fmove", "fscale"):
            if commit and self.doc.in_live_edit():
                n = sum(len(v) for v in g.sel.values())
                what = "Move" if g.kind == "fmove" else "Scale"
                self.doc.end_live_edit(f"{what} {n} float key(s) in time")
            elif self.doc.in_live_edit():
                self.doc.cancel_live_edit()
        if g.kind in ("move", "scale"):
            if commit:
                self.gesture = g
                self.apply_live()  # the document lands exactly on the preview shown
                self.gesture = None
                n = sum(len(s) for s in g.sel.values())
                text = f"{'Move' if g.kind == 'move' else 'Scale'} {n} key(s) in time"
                self.doc.end_live_edit(text, keys_after=g.last_ok)
            else:
                self.doc.cancel_live_edit()
        self.band = None
        self.update()

    # ------------------------------------------------------------------ events
    def mousePressEvent(self, ev) -> None:  # noqa: N802
        x, y = ev.position().x(), ev.position().y()
        g = self.gesture
        if g is not None and g.kind in ("scale", "fscale"):
            if ev.button() == Qt.MouseButton.LeftButton:
                self.scale_to(x)  # the click's position is the final one
            self.finish(ev.button() == Qt.MouseButton.LeftButton)
            return
        mods = ev.modifiers()
        if ev.button() == Qt.MouseButton.MiddleButton or (
            ev.button() == Qt.MouseButton.LeftButton and mods & Qt.KeyboardModifier.AltModifier
        ):
            self.gesture = _Gesture("pan", x, y, view0=self.view)
            return
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        if y < RULER_H:
            self.gesture = _Gesture("scrub", x, y)
            self.doc.set_time(self.doc.snap_time(self.x_to_t(x)))
            return
        i = self.row_at(y)
        if i is not None and x < LABEL_W:
            r = self.rows[i]
            if r.folds and x < 6 + INDENT_PX * r.depth + 12:  # the fold triangle
                self.folded ^= {r.group}
                self.rebuild_rows()
            elif r.kind != "summary":
                self.doc.select_paths(list(r.paths))
            return
        h = None if self.box_armed else self.hit(x, y)
        self.box_armed = False
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        if h is None:
            self.gesture = _Gesture("box", x, y)
            return
        row, t = h
        if self.rows[row].kind == "float":
            self._press_float(self.rows[row], x, y, t, shift, ctrl)
            return
        keys = self.keys_of_row_times(self.rows[row], t, t)
        selected = all(k in self.doc.selected_keys.get(p, ()) for p, s in keys.items() for k in s)
        if ctrl:
            self.apply_selection(keys, "toggle")
            return
        if not selected:
            self.apply_selection(keys, "add" if shift else "set")
        sel = {p: set(s) for p, s in self.doc.selected_keys.items() if s}
        preview = DragPreview(self.doc.clip, sel)
        self.gesture = _Gesture("move", x, y, self.doc.clip, sel, grab_t=t, preview=preview)
        self.doc.begin_live_edit()

    def _press_float(self, row: Row, x: float, y: float, t: float, shift: bool, ctrl: bool) -> None:
        """A press on a float row's tick: select its key (Shift adds, Ctrl toggles), then a drag
        moves the selected float keys in time (:meth:`_move_floats`)."""
        keys = self.float_keys_of_row_times(row, t, t)
        if ctrl:
            self.doc.select_float_keys(keys, "toggle")
            return
        if not all(k in self.doc.selected_float_keys.get(n, ()) for n, s in keys.items() for k in s):
            self.doc.select_float_keys(keys, "add" if shift else "set", exclusive=not shift)
        sel = {n: sorted(v) for n, v in self.doc.selected_float_keys.items() if v}
        floats = {n: self.doc.other_track(n) for n in sel}
        self.gesture = _Gesture("fmove", x, y, self.doc.clip, sel, grab_t=t, floats=floats)
        self.doc.begin_live_edit()

    def _move_floats(self, g: _Gesture, dt: float) -> None:
        """The selected float keys ``dt`` seconds from where the drag began (already snapped): as
        far as their neighbours let them (``engine.edit.clamp_time_shift``, a frame apart)."""
        moving = {n: (g.floats[n], idx) for n, idx in g.sel.items()}
        clip, dt = fc.move_float_keys(g.base_clip, moving, dt, 0.0, 1.0 / self.doc.frame_rate)
        self.doc.update_live(clip, ())
        fr = self.doc.frame_rate
        self.statusMessage.emit(f"Move float keys: {dt:+.4f} s ({dt * fr:+.0f} frames)")

    def mouseMoveEvent(self, ev) -> None:  # noqa: N802
        x, y = ev.position().x(), ev.position().y()
        self._mouse_x = x
        g = self.gesture
        if g is None:
            return
        if g.kind in ("scale", "fscale"):
            self.scale_to(x)
        elif g.kind == "pan":
            dt = (x - g.x0) / self.px_per_s()
            self.view = (g.view0[0] - dt, g.view0[1] - dt)
            self.update()
        elif g.kind == "scrub":
            self.doc.set_time(self.doc.snap_time(self.x_to_t(x)))
        elif g.kind == "box":
            self.band = QRectF(QPointF(g.x0, g.y0), QPointF(x, y)).normalized()
            self.update()
        elif g.kind == "fmove":
            if not self.doc.in_live_edit():  # undo pressed mid-drag
                self.gesture = None
                return
            self._move_floats(g, self.doc.snap_time(g.grab_t + (x - g.x0) / self.px_per_s()) - g.grab_t)
        elif g.kind == "move":
            if not self.doc.in_live_edit():  # undo pressed mid-drag
                self.gesture = None
                self.update()
                return
            dt = self.doc.snap_time(g.grab_t + (x - g.x0) / self.px_per_s()) - g.grab_t
            if self._retime(g, offset=dt):
                fr = self.doc.frame_rate
                self.statusMessage.emit(f"Move keys: {dt:+.4f} s ({dt * fr:+.0f} frames)")

    def mouseReleaseEvent(self, ev) -> None:  # noqa: N802
        g = self.gesture
        if g is None or g.kind in ("scale", "fscale"):
            return
        if g.kind == "box":
            x, y = ev.position().x(), ev.position().y()
            rect = QRectF(QPointF(g.x0, g.y0), QPointF(x, y)).normalized()
            mods = ev.modifiers()
            mode = (
                "toggle"
                if mods & Qt.KeyboardModifier.ControlModifier
                else "add"
                if mods & Qt.KeyboardModifier.ShiftModifier
                else "set"
            )
            self.box_select(rect, mode)
            self.gesture = None
            self.band = None
            self.update()
            return
        self.finish(True)

    def box_select(self, rect: QRectF, mode: str) -> None:
        """Select the keys whose ticks lie in ``rect`` (widget pixels)."""
        t_lo, t_hi = self.x_to_t(rect.left()), self.x_to_t(rect.right())
        keys: dict[str, set[int]] = {}
        first = self.row_at(max(rect.top(), RULER_H))
        last = self.row_at(rect.bottom())
        if first is None:
            first = self.scroll_rows
        if last is None:
            last = len(self.rows) - 1
        floats: dict[str, set[int]] = {}
        for i in range(first, last + 1):
            for p, s in self.keys_of_row_times(self.rows[i], t_lo, t_hi).items():
                keys.setdefault(p, set()).update(s)
            floats.update(self.float_keys_of_row_times(self.rows[i], t_lo, t_hi))
        if keys or (mode == "set" and not floats):
            self.apply_selection(keys, mode)
        if floats:  # (a "set" box over both kinds of rows selects both)
            both = mode == "set" and bool(keys)
            self.doc.select_float_keys(floats, "add" if both else mode, exclusive=mode == "set" and not keys)

    def wheelEvent(self, ev) -> None:  # noqa: N802
        if ev.modifiers() & Qt.KeyboardModifier.ShiftModifier or ev.position().x() < LABEL_W:
            step = -1 if ev.angleDelta().y() > 0 else 1
            self.scroll_rows = int(np.clip(self.scroll_rows + 3 * step, 0, max(len(self.rows) - 1, 0)))
            self.update()
            return
        k = 0.85 if ev.angleDelta().y() > 0 else 1 / 0.85
        t = self.x_to_t(ev.position().x())
        self.view = (t + (self.view[0] - t) * k, t + (self.view[1] - t) * k)
        self.update()

    def keyPressEvent(self, ev) -> None:  # noqa: N802
        g = self.gesture
        if g is not None and ev.key() == Qt.Key.Key_Escape:
            self.finish(False)
            return
        if (
            g is not None
            and g.kind in ("scale", "fscale")
            and ev.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            self.finish(True)
            return
        if ev.key() == Qt.Key.Key_B and g is None:
            self.box_armed = True
            self.statusMessage.emit("Box select: drag a rectangle, over keys too (Shift adds, Ctrl toggles)")
            return
        if ev.key() == Qt.Key.Key_Escape and self.box_armed:
            self.box_armed = False
            return
        if ev.key() == Qt.Key.Key_S and g is None:
            self.begin_scale()
            return
        if ev.key() == Qt.Key.Key_F:
            self.sheet.frame_selection()
            return
        if ev.key() == Qt.Key.Key_A and not ev.modifiers():
            self.sheet.frame_all()
            return
        super().keyPressEvent(ev)

    # ------------------------------------------------------------------ painting
    def _tick_rows(self, first: int, last: int) -> QImage:
        """The ticks of rows ``first..last`` as one pixel line per row (:class:`TickRaster`), from the
        drag's preview while keys move, else from the document. :meth:`paintEvent` stretches each
        line over its row's tick band."""
        clip = self.doc.clip
        by = {t.path: t for t in clip.tracks}
        g = self.gesture
        preview = g.preview.times if g is not None and g.preview is not None and g.preview.args else None
        if preview:
            sel_t = {p: moved for p, (_t, moved) in preview.items()}

            def times_of(p: str) -> np.ndarray:
                hit = preview.get(p)
                return hit[0] if hit is not None else by[p].curve.time

        else:
            # selected keys' times kept per (selection set, key times) object: the same arrays from
            # paint to paint, so the raster's column cache holds for them too
            sel_t, cache = {}, {}
            for p, idx in self.doc.selected_keys.items():
                if p in by and idx:
                    t = by[p].curve.time
                    hit = self._sel_times.get(p)
                    if hit is None or hit[0] is not idx or hit[1] is not t:
                        hit = (idx, t, t[np.fromiter(idx, dtype=np.int64, count=len(idx))])
                    cache[p] = hit
                    sel_t[p] = hit[2]
            self._sel_times = cache

            def times_of(p: str) -> np.ndarray:
                return by[p].curve.time

        # a float row's curve under a key no track path can be (track paths hold no NUL)
        floats = {}
        for r in self.rows[first : last + 1]:
            if r.kind == "float":
                c = self.doc.other_track(r.float_name).curve
                key = _FLOAT_KEY + r.float_name
                floats[key] = c.time
                idx = self.doc.selected_float_keys.get(r.float_name)
                if idx:
                    sel_t[key] = c.time[np.fromiter(idx, dtype=np.int64, count=len(idx))]
        track_times = times_of

        def times_of(p: str) -> np.ndarray:  # noqa: F811 - (the tracks' times, or a float row's)
            hit = floats.get(p)
            return hit if hit is not None else track_times(p)

        rows = [
            (
                (_FLOAT_KEY + r.float_name,) if r.kind == "float" else r.paths,
                r.kind == "summary" or len(r.paths) > 1,
            )
            for r in self.rows[first : last + 1]
        ]
        w = max(self.width() - LABEL_W, 1)
        ppx = self.px_per_s()
        # Ticks are at most 5 px wide and shrink on dense keys so neighbouring frames stay apart.
        half = self.tick_half()
        th = self.theme
        colors = (QColor(th.channels[2]), QColor(th.plot_fg), QColor(th.key_selected))
        return self.raster.image(rows, times_of, sel_t, (self.view[0], ppx, w), half, colors)

    def label_font(self, r: Row) -> QFont:
        font = QFont(self.font())
        font.setBold(r.kind == "summary" or len(r.paths) > 1)
        return font

    def label_text(self, i: int) -> str:
        """Row ``i``'s label as drawn: fold mark, name elided in the middle to the label column (the
        summary row's clip name is often longer: ``CMU_Sam…_01 (all tracks)``); the full text is the
        row's tooltip (:meth:`label_tooltip`)."""
        r = self.rows[i]
        label = r.label
        if r.folds:
            label = ("▸ " if r.group in self.folded else "▾ ") + label
        elif r.kind in ("track", "float"):
            label = "   " + label  # aligned with the names of rows that fold
        width = LABEL_W - (6 + INDENT_PX * r.depth) - 4
        return QFontMetrics(self.label_font(r)).elidedText(label, Qt.TextElideMode.ElideMiddle, width)

    def label_tooltip(self, i: int) -> str:
        """The full text behind row ``i``'s label: the summary row's label, a track's whole path, a
        float curve's name."""
        r = self.rows[i]
        if r.kind == "float":
            return f"{r.float_name} (float curve)"
        return r.label if r.kind == "summary" else r.paths[0]

    def event(self, ev) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            pos = ev.position() if hasattr(ev, "position") else ev.pos()
            i = self.row_at(pos.y())
            if i is not None and pos.x() < LABEL_W:
                QToolTip.showText(ev.globalPos(), self.label_tooltip(i), self)
            else:
                QToolTip.hideText()
                ev.ignore()
            return True
        return super().event(ev)

    def paintEvent(self, ev) -> None:  # noqa: N802
        self.paints += 1
        region = ev.region()
        p = QPainter(self)
        th = self.theme
        p.fillRect(self.rect(), QColor(th.plot_bg))
        fg = QColor(th.plot_fg)
        n_vis = max((self.height() - RULER_H) // ROW_H + 1, 1)
        first = self.scroll_rows
        last = min(len(self.rows) - 1, first + n_vis - 1)
        # row backgrounds and labels
        alt = QColor(fg)
        alt.setAlpha(14)
        labels = region.intersects(QRect(0, 0, LABEL_W, self.height()))  # a cursor band misses them
        for i in range(first, last + 1):
            r = self.rows[i]
            y = self.row_y(i)
            if i % 2 == 0:
                p.fillRect(QRectF(0, y, self.width(), ROW_H), alt)
            selected = r.kind == "track" and r.paths[0] in self.doc.selected_paths
            if selected:
                hc = QColor(th.highlight)
                hc.setAlpha(60)
                p.fillRect(QRectF(0, y, LABEL_W, ROW_H), hc)
            if not labels:
                continue
            p.setPen(fg)
            p.setFont(self.label_font(r))
            indent = 6 + INDENT_PX * r.depth
            p.drawText(
                QRectF(indent, y, LABEL_W - indent - 4, ROW_H),
                Qt.AlignmentFlag.AlignVCenter,
                self.label_text(i),
            )
        if last >= first:
            # one pixel line per row, stretched over the row's tick band (nearest, no smoothing):
            # a full-height RGBA image cost ~9 ms per repaint to fill and blend at 31 rows
            img = self._tick_rows(first, last)
            w = img.width()
            # only the exposed columns (a time step exposes two cursor bands): the image maps 1:1
            # onto the columns right of the labels, so a column range is the same pixels
            spans = []
            for r in region:
                a, b = max(r.left() - LABEL_W, 0), min(r.right() + 1 - LABEL_W, w)
                if b > a:
                    spans.append((float(a), float(b - a)))
            if region.rectCount() > 4 or len(spans) > 4:
                spans = [(0.0, float(w))]
            for k in range(last - first + 1):
                y = self.row_y(first + k)
                for a, sw in spans:
                    p.drawImage(QRectF(LABEL_W + a, y + 4, sw, ROW_H - 8), img, QRectF(a, k, sw, 1))
        # ruler: frame numbers
        p.fillRect(QRectF(0, 0, self.width(), RULER_H), QColor(th.plot_bg).darker(110))
        p.setPen(fg)
        fr = self.doc.frame_rate
        span_frames = (self.view[1] - self.view[0]) * fr
        step = max(1, int(10 ** np.ceil(np.log10(max(span_frames / 12, 1)))))
        if span_frames / step < 5:
            step = max(1, step // 2)
        f0 = int(np.floor(self.view[0] * fr / step)) * step
        f = f0
        while f / fr <= self.view[1]:
            x = float(self.t_to_x(f / fr))
            if x >= LABEL_W:
                p.drawLine(QPointF(x, RULER_H - 6), QPointF(x, RULER_H))
                p.drawText(QPointF(x + 2, RULER_H - 8), str(f))
            f += step
        p.drawText(QRectF(6, 0, LABEL_W, RULER_H), Qt.AlignmentFlag.AlignVCenter, "frame")
        # playback range and cursor
        pr = self.sheet.play_range()
        if pr is not None:
            c = QColor(th.highlight)
            c.setAlpha(30)
            xa, xb = (float(v) for v in self.t_to_x(np.array(pr)))
            p.fillRect(QRectF(max(xa, LABEL_W), RULER_H, max(xb - max(xa, LABEL_W), 0), self.height()), c)
        x = float(self.t_to_x(self.doc.current_time))
        self._cursor_x = x
        if x >= LABEL_W:
            p.setPen(QPen(QColor(th.cursor), 1.5))
            p.drawLine(QPointF(x, 0), QPointF(x, self.height()))
        p.setPen(QPen(fg, 1))
        p.drawLine(QPointF(LABEL_W, 0), QPointF(LABEL_W, self.height()))
        if self.band is not None:
            c = QColor(th.highlight)
            p.setPen(QPen(c, 1, Qt.PenStyle.DashLine))
            c.setAlpha(40)
            p.setBrush(c)
            p.drawRect(self.band)
        p.end()


class DopeSheet(QWidget):
    """The dock widget: a small toolbar (scale pivot, frame buttons) over the :class:`DopeCanvas`."""

    statusMessage = Signal(str)

    def __init__(self, document: ClipDocument, parent: QWidget | None = None, playback=None):
        super().__init__(parent)
        self.doc = document
        self.playback = playback
        self.canvas = DopeCanvas(document, self)
        self.canvas.statusMessage.connect(self.statusMessage)
        self.pivot = QComboBox(self)
        self.pivot.addItem("Scale about the time cursor", "cursor")
        self.pivot.addItem("Scale about the selection's start", "start")
        self.pivot.setToolTip("Pivot of S (scale keys in time)")
        fa = QToolButton(self)
        fa.setText("Frame all")
        fa.clicked.connect(self.frame_all)
        fs = QToolButton(self)
        fs.setText("Frame selection")
        fs.clicked.connect(self.frame_selection)
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 0)
        top.addWidget(QLabel("Dope sheet", self))
        top.addStretch(1)
        top.addWidget(self.pivot)
        top.addWidget(fs)
        top.addWidget(fa)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.canvas, 1)
        document.clipChanged.connect(self._on_clip)
        document.keySelectionChanged.connect(self.canvas.update)
        document.floatKeySelectionChanged.connect(self.canvas.update)
        document.otherSelectionChanged.connect(self.canvas.rebuild_rows)
        document.selectionChanged.connect(self.canvas.update)
        document.timeChanged.connect(lambda _t: self.canvas.time_moved())
        if playback is not None:
            playback.rangeChanged.connect(self.canvas.update)
        self._on_clip(frame=True)

    def pivot_mode(self) -> str:
        return self.pivot.currentData()

    def play_range(self):
        return None if self.playback is None else self.playback.play_range

    def set_theme(self, theme: Theme) -> None:
        self.canvas.theme = theme
        self.canvas.update()

    def _on_clip(self, frame: bool = False) -> None:
        changed = self.doc.changed_paths
        if changed is None or frame:
            self.canvas.rebuild_rows()
            if frame or not self.doc.in_live_edit():
                self.frame_all()
        else:
            self.canvas.refresh_times(changed)

    def frame_all(self) -> None:
        clip = self.doc.clip
        self.canvas.frame_range(clip.start, clip.end)

    def frame_selection(self) -> None:
        ts = [
            np.asarray(self.doc.clip.track(p).times)[np.fromiter(s, dtype=np.int64)]
            for p, s in self.doc.selected_keys.items()
            if s
        ]
        if not ts:
            self.frame_all()
            return
        t = np.concatenate(ts)
        self.canvas.frame_range(float(t.min()), float(t.max()))
