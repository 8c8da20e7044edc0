"""Keyboard work on the curve graphs: S-scale, nudges, jump to keys, and the playback range.

* **S then move the mouse** (Blender's S): scales the selected keys in time and value about the pivot
  (the selection's centre, or the time cursor for time), like a live drag; time snaps to frames, values
  snap to the value step when *Snap values* is on. X keeps it to time, Y to values; a left click or
  Enter confirms (one undo step), Escape or a right click cancels.
* **Arrow keys** nudge the selected keys: Left/Right one frame in time (a key selected on any channel:
  its channels share the time), Up/Down one value step (degrees) on exactly the channels each key is
  shown selected on (``ClipDocument.key_selection``), wherever the mouse is.
* **Jump** to the next / previous key of the selected tracks.
* :class:`PlaybackRange`: in/out points; the timeline loops inside them (``Timeline.range_source``).

Time changes go through :func:`curveeditor.engine.retime.retime_clip` (shapes kept), value scaling
through :func:`~curveeditor.engine.retime.scale_key_values`, value nudges through ``edit.move_keys``.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Signal
from PySide6.QtGui import QCursor

from curveeditor.engine import edit as ed
from curveeditor.engine.retime import retime_clip, scale_key_values

__all__ = ["PlaybackRange", "KeyManipulator"]


class PlaybackRange(QObject):
    """Playback in/out points in seconds (``play_range``: ``(t_in, t_out)`` or None = whole clip)."""

    rangeChanged = Signal()

    def __init__(self, document, parent: QObject | None = None):
        super().__init__(parent)
        self.doc = document
        self.play_range: tuple[float, float] | None = None
        document.clipChanged.connect(self._on_clip)

    def bounds(self) -> tuple[float, float]:
        """``(start, end)`` the timeline plays and loops in."""
        clip = self.doc.clip
        if self.play_range is None:
            return clip.start, clip.end
        return self.play_range

    def _set(self, r) -> None:
        if r != self.play_range:
            self.play_range = r
            self.rangeChanged.emit()

    def set_in(self, t: float | None = None) -> None:
        """In point at ``t`` (default: the time cursor); the out point moves along when before it."""
        t = self.doc.current_time if t is None else float(t)
        out = self.play_range[1] if self.play_range else self.doc.clip.end
        self._set((t, max(out, t + 1.0 / self.doc.frame_rate)))

    def set_out(self, t: float | None = None) -> None:
        t = self.doc.current_time if t is None else float(t)
        start = self.play_range[0] if self.play_range else self.doc.clip.start
        self._set((min(start, t - 1.0 / self.doc.frame_rate), t))

    def clear(self) -> None:
        self._set(None)

    def _on_clip(self) -> None:
        if self.doc.changed_paths is None and not self.doc.undo_stack.count():
            self.clear()  # a new clip


class KeyManipulator(QObject):
    """S-scale, nudges and key jumps on a :class:`~curveeditor.app.graphs.panel.GraphPanel`."""

    statusMessage = Signal(str)

    def __init__(self, panel, parent: QObject | None = None):
        super().__init__(parent or panel)
        self.panel = panel
        self.doc = panel.doc
        self.value_step = 1.0  # degrees (Up/Down, value snapping)
        self.value_snap = False
        self.active_channel: int | None = 0
        self._modal = None
        self._last_pos = None  # viewport position of the last mouse event
        panel.glw.viewport().installEventFilter(self)

    # ------------------------------------------------------------------ helpers
    def _selection(self) -> dict[str, set[int]]:
        return {p: set(s) for p, s in self.doc.selected_keys.items() if s}

    def _vb_at(self, scene_pos):
        for p in self.panel.euler_plots:
            vb = p.getViewBox()
            if vb.sceneBoundingRect().contains(scene_pos):
                return vb
        return None

    def _channels(self) -> list[int]:
        return [0, 1, 2] if self.active_channel is None else [self.active_channel]

    def _note(self, msg: str) -> None:
        self.statusMessage.emit(msg)

    # ------------------------------------------------------------------ nudge / jump
    def nudge_time(self, frames: int) -> bool:
        """Move the selected keys by ``frames`` frames (one undo step)."""
        sel = self._selection()
        if not sel:
            self._note("Select keys first")
            return False
        try:
            new = retime_clip(self.doc.clip, sel, offset=frames / self.doc.frame_rate)
        except ValueError as e:
            self._note(f"Cannot nudge: {e}")
            return False
        self.doc.apply_clip(new, f"Nudge keys {frames:+d} frame(s)")
        return True

    def nudge_value(self, steps: int) -> bool:
        """Add ``steps`` value steps (degrees) to the selected keys on the channels they are
        selected on (one undo step)."""
        sel = self._selection()
        if not sel:
            self._note("Select keys first")
            return False
        clip = self.doc.clip
        dv = steps * self.value_step
        tracks = {}
        for p, idx in sel.items():
            tr = clip.track(p)
            tracks[p] = ed.move_keys(tr, idx, 0.0, None, dv, value_mask=self.doc.channel_mask(p, tr.n_keys))
        self.doc.apply_clip(
            clip.with_tracks(tracks.get(t.path, t) for t in clip.tracks), f"Nudge keys {dv:+g}°"
        )
        return True

    def jump_key(self, direction: int) -> float | None:
        """Move the time cursor to the next (``+1``) or previous (``-1``) key of the selected tracks."""
        ts = [np.asarray(self.doc.clip.track(p).times) for p in self.doc.selected_paths]
        if not ts:
            return None
        t = np.unique(np.concatenate(ts))
        now = self.doc.current_time
        eps = 1e-6
        cand = t[t > now + eps] if direction > 0 else t[t < now - eps]
        if cand.size == 0:
            return None
        target = float(cand[0] if direction > 0 else cand[-1])
        self.doc.set_time(target)
        return target

    # ------------------------------------------------------------------ S: scale in time and value
    def begin_scale(self) -> bool:
        """Enter the S modal at the mouse position (module docstring)."""
        sel = self._selection()
        if not sel or self._modal is not None:
            if not sel:
                self._note("Select keys first")
            return False
        view = self.panel.glw
        here = view.viewport().mapFromGlobal(QCursor.pos())
        if self._last_pos is not None and not view.viewport().rect().contains(here):
            here = self._last_pos
        elif self._last_pos is not None:
            here = self._last_pos  # the last mouse event: exact, where the cursor query can lag
        scene = view.mapToScene(here)
        vb = self._vb_at(scene) or self.panel.euler_plots[0].getViewBox()
        clip = self.doc.clip
        # values scale on the channels each key is selected on (the selection as shown)
        chans = {
            p: {ch: sorted(self.doc.channel_keys(p, ch)) for ch in range(3) if self.doc.channel_keys(p, ch)}
            for p in sel
        }
        times, values = [], {0: [], 1: [], 2: []}
        for p, idx in sel.items():
            kt, kv = self.panel.cache.keys(clip.track(p))
            ii = np.array(sorted(idx))
            times.append(kt[ii])
            for ch, rows in chans[p].items():
                values[ch].append(kv[np.asarray(rows), ch])
        t = np.concatenate(times)
        # each channel scales about the centre of its own selected values (the stacked plots are
        # separate value spaces); the factor is read in the plot under the mouse, about its centre
        # (all channels' centre in the overlaid plot)
        centre = {
            ch: 0.5 * (float(np.min(np.concatenate(v))) + float(np.max(np.concatenate(v))))
            for ch, v in values.items()
            if v
        }
        mine = [ch for ch in ((vb.role[1],) if vb.role[1] is not None else (0, 1, 2)) if ch in centre]
        if mine:
            v = np.concatenate([np.concatenate(values[ch]) for ch in mine])
            pivot_v = 0.5 * (float(v.min()) + float(v.max()))
        else:
            pivot_v = float(np.mean(list(centre.values())))
        pivot_t = 0.5 * (float(t.min()) + float(t.max()))
        p0 = vb.mapSceneToView(QPointF(scene))
        self._modal = {
            "vb": vb,
            "chans": chans,
            "base": clip,
            "sel": sel,
            "pivot": (pivot_t, pivot_v),
            "centre": centre,
            "p0": (p0.x(), p0.y()),
            "axis": None,
            "last": None,
        }
        self.doc.begin_live_edit()
        view.viewport().setMouseTracking(True)
        view.viewport().grabMouse()
        view.viewport().grabKeyboard()
        self._note("Scale keys: move the mouse (X time only, Y values only), click or Enter, Esc cancels")
        return True

    def scale_factors(self, x: float, y: float) -> tuple[float, float]:
        m = self._modal
        (pt, pv), (x0, y0) = m["pivot"], m["p0"]
        px, py = m["vb"].viewPixelSize()
        ft = (x - pt) / (x0 - pt) if abs(x0 - pt) > 4 * px else 1.0
        fv = (y - pv) / (y0 - pv) if abs(y0 - pv) > 4 * py else 1.0
        if m["axis"] == "x":
            fv = 1.0
        elif m["axis"] == "y":
            ft = 1.0
        return max(ft, 1e-3), fv

    def scale_to(self, x: float, y: float) -> bool:
        m = self._modal
        ft, fv = self.scale_factors(x, y)
        pt, pv = m["pivot"]
        try:
            new = retime_clip(m["base"], m["sel"], scale=ft, pivot=pt, snap=True)
        except ValueError as e:
            self._note(str(e))
            return False
        tracks = {}
        snap = self.value_step if self.value_snap else None
        for p in m["sel"]:
            tr = new.track(p)
            for ch, rows in m["chans"][p].items():
                tr = scale_key_values(tr, rows, ch, fv, m["centre"][ch], snap)
            tracks[p] = tr
        new = new.with_tracks(tracks.get(t.path, t) for t in new.tracks)
        m["last"] = (ft, fv)
        self.doc.update_live(new, tracks.keys())
        self._note(f"Scale keys: time x{ft:.3f}, value x{fv:.3f} about ({pt:.3f} s, {pv:.2f}°)")
        return True

    def end_scale(self, commit: bool) -> None:
        m = self._modal
        if m is None:
            return
        self._modal = None
        vp = self.panel.glw.viewport()
        vp.releaseMouse()
        vp.releaseKeyboard()
        if commit and self.doc.in_live_edit():
            n = sum(len(s) for s in m["sel"].values())
            self.doc.end_live_edit(f"Scale {n} key(s)")
        else:
            self.doc.cancel_live_edit()

    def in_modal(self) -> bool:
        return self._modal is not None

    # ------------------------------------------------------------------ events
    def _view_pos(self, ev):
        view = self.panel.glw
        scene = view.mapToScene(ev.position().toPoint())
        return self._modal["vb"].mapSceneToView(QPointF(scene)), scene

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802
        et = ev.type()
        if self._modal is None:
            if et in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseMove):
                self._last_pos = ev.position().toPoint()
                vb = self._vb_at(self.panel.glw.mapToScene(self._last_pos))
                if vb is not None:
                    self.active_channel = vb.role[1]
            return False
        if et == QEvent.Type.MouseMove:
            p, _ = self._view_pos(ev)
            self.scale_to(p.x(), p.y())
            return True
        if et == QEvent.Type.MouseButtonPress:
            if ev.button() == Qt.MouseButton.LeftButton:
                p, _ = self._view_pos(ev)
                self.scale_to(p.x(), p.y())
                self.end_scale(True)
            else:
                self.end_scale(False)
            return True
        if et in (QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonDblClick):
            return True
        if et == QEvent.Type.ShortcutOverride:
            ev.accept()  # while scaling, Escape / Enter / X / Y are ours, not the window's shortcuts
            return True
        if et == QEvent.Type.KeyPress:
            k = ev.key()
            if k == Qt.Key.Key_Escape:
                self.end_scale(False)
            elif k in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.end_scale(True)
            elif k in (Qt.Key.Key_X, Qt.Key.Key_Y):
                axis = "x" if k == Qt.Key.Key_X else "y"
                self._modal["axis"] = None if self._modal["axis"] == axis else axis
            return True
        return False
