"""Editing the shown float curves (humanoid muscles, blend shapes, generic floats) in the graphs'
value strip: one curve per float track, its keys drawn, selected (click, Shift/Ctrl, box), dragged in
time (snapped to frames) and value (the curve's own units; Shift constrains), the selected keys'
tangent handles drawn and dragged (slope, and weight on a weighted side), Escape cancels, one undo
step per drag. The edits are the engine's key edits (``engine.edit.move_keys`` / ``set_slope`` /
``set_weight`` on the float ``OtherTrack``, channel 0) and ``engine.float_curves.with_float_curve``
(the editor mirror follows).

Read-only curves (positions, scales, object references) in the same strip stay view only: a drag
over them scrubs time, as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt

from curveeditor.engine import edit as ed
from curveeditor.engine import float_curves as fc

from .input import selection_mode
from .marks import MAX_HANDLE_KEYS, MAX_HANDLE_TOTAL, Marks, _set_markers

__all__ = ["FloatEditing", "HIT_PX"]

#: Pick radius of a key, in screen pixels (at least the 8 px target of issue 22).
HIT_PX = 8.0


class FloatEditing:
    """Selection and drags of float-curve keys in the panel's ``"other"`` strip."""

    def __init__(self, panel):
        self.panel = panel
        self.doc = panel.doc
        self._drag: dict[str, Any] | None = None
        #: drawn tangent handle ends: (curve name, key index, "in" | "out", x, y)
        self.handle_points: list[tuple[str, int, str, float, float]] = []
        # its own markers follow the float-key selection (the panel maps the rest of the document)
        self.doc.floatKeySelectionChanged.connect(self.update_marks)

    # ------------------------------------------------------------------ what is shown
    def names(self) -> list[str]:
        """The shown curves that can be edited (``OtherTrack.name``), in the selection's order."""
        return self.doc.shown_float_curves()

    def unit_label(self) -> str:
        """The value axis's label for the shown curves (their own units: not degrees)."""
        units = set()
        kinds = set()
        for n in self.doc.selected_other:
            o = self.doc.other_track(n)
            units.add(fc.unit(o) if fc.is_editable(o) else o.kind)
            kinds.add(fc.category(o) if fc.is_editable(o) else "read-only")
        if not units:
            return "value"
        if kinds == {"humanoid"} and units == {"muscle"}:
            return "muscle (-1..1)"
        if units == {"%"}:
            return "blend shape (%)"
        if "read-only" in kinds and len(kinds) == 1:
            return "read-only (view)"
        u = units.pop() if len(units) == 1 else ""
        return f"value ({u})" if u and u not in ("muscle",) else "value"

    def only_floats(self) -> bool:
        """Curves of ``selected_other`` shown and no rotation track selected: the panel holds the
        value strip alone (a humanoid muscle clip has no rotation tracks to draw)."""
        return bool(self.doc.selected_other) and not self.doc.selected_paths

    def frame_strip(self) -> None:
        """The value strip's Y range around the shown curves (:meth:`widen`)."""
        s = self.panel.strip_of("other")
        if s is None:
            return
        s.plot.enableAutoRange(axis=pg.ViewBox.YAxis)
        s.vb.updateAutoRange()
        s.plot.disableAutoRange()
        self.widen()

    def widen(self) -> None:
        """Never a flat Y range: a held muscle pose is a constant curve (+-1 unit around it, or the
        muscle range -1..1 when that is wider)."""
        s = self.panel.strip_of("other")
        if s is None:
            return
        lo, hi = s.vb.viewRange()[1]
        if hi - lo < 1e-3:
            mid = 0.5 * (lo + hi)
            lo, hi = mid - 1.0, mid + 1.0
            if self.unit_label().startswith("muscle"):
                lo, hi = min(lo, -1.1), max(hi, 1.1)
            s.plot.setYRange(lo, hi, padding=0.05)

    def update_marks(self) -> None:
        """Key markers of every shown editable curve, the selected ones highlighted."""
        s = self.panel.strip_of("other")
        if s is None:
            return
        names = self.names()
        s.multi_keys.max_per_px = None if names else 0.5
        xs, ys, sx, sy = [], [], [], []
        for n in names:
            c = self.doc.other_track(n).curve
            xs.append(c.time)
            ys.append(c.value[:, 0])
            sel = sorted(self.doc.selected_float_keys.get(n, ()))
            if sel:
                sx.append(c.time[sel])
                sy.append(c.value[sel, 0])
        cat = lambda a: np.concatenate(a) if a else np.zeros(0)  # noqa: E731
        s.multi_keys.setData(cat(xs), cat(ys))
        s.selected.setData(cat(sx), cat(sy))
        self.update_handles()

    def update_handles(self) -> None:
        """Tangent handles of the selected keys of the shown editable curves, as the rotation
        graphs draw theirs (``Marks.handle_end``: unweighted sides a fixed screen length, weighted
        ones at weight x interval; none past ``MAX_HANDLE_KEYS`` per curve, ``MAX_HANDLE_TOTAL``)."""
        self.handle_points = []
        s = self.panel.strip_of("other")
        if s is None:
            return
        px, py = s.vb.viewPixelSize()
        sel = {n: self.doc.selected_float_keys.get(n, ()) for n in self.names()}
        xs, ys = [], []
        if px > 0 and py > 0 and sum(len(v) for v in sel.values()) <= MAX_HANDLE_TOTAL:
            for n, idx in sel.items():
                if not idx or len(idx) > MAX_HANDLE_KEYS:
                    continue
                c = self.doc.other_track(n).curve
                for i in sorted(idx):
                    t, v = float(c.time[i]), float(c.value[i, 0])
                    for side in ("in", "out"):
                        end = Marks.handle_end(c, i, 0, side, px, py)
                        if end is None:
                            continue
                        xs += [t, end[0]]
                        ys += [v, end[1]]
                        self.handle_points.append((n, i, side, end[0], end[1]))
        x, y = np.array(xs, dtype=float), np.array(ys, dtype=float)
        if xs or (s.handle_line.xData is not None and len(s.handle_line.xData)):
            s.handle_line.setData(x, y, connect="pairs")
        _set_markers(s.handle_pts, x[1::2], y[1::2])

    def handle_hit(self, vb, scene_pos) -> tuple[str, int, str] | None:
        """(curve name, key index, side) of the handle end nearest the mouse within :data:`HIT_PX`."""
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        best = None
        for n, i, side, x, y in self.handle_points:
            d = ((x - pos.x()) / px) ** 2 + ((y - pos.y()) / py) ** 2
            if d <= HIT_PX * HIT_PX and (best is None or d < best[0]):
                best = (d, n, i, side)
        return None if best is None else best[1:]

    # ------------------------------------------------------------------ hit testing
    def key_hit(self, vb, scene_pos) -> tuple[str, int] | None:
        """(curve name, key index) of the key nearest to the mouse within :data:`HIT_PX` pixels."""
        pos = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        if not (px > 0 and py > 0):
            return None
        best = None
        for n in self.names():
            c = self.doc.other_track(n).curve
            d = ((c.time - pos.x()) / px) ** 2 + ((c.value[:, 0] - pos.y()) / py) ** 2
            j = int(np.argmin(d))
            if d[j] <= HIT_PX * HIT_PX and (best is None or d[j] < best[0]):
                best = (float(d[j]), n, j)
        return None if best is None else (best[1], best[2])

    def keys_in_rect(self, rect: QRectF) -> dict[str, set[int]]:
        out = {}
        for n in self.names():
            c = self.doc.other_track(n).curve
            v = c.value[:, 0]
            in_t = (c.time >= rect.left()) & (c.time <= rect.right())
            inside = in_t & (v >= rect.top()) & (v <= rect.bottom())
            idx = np.nonzero(inside)[0]
            if idx.size:
                out[n] = {int(i) for i in idx}
        return out

    # ------------------------------------------------------------------ selection
    def on_click(self, vb, scene_pos, mods) -> bool:
        """Select the key under the mouse (Shift adds, Ctrl toggles); False when nothing is
        editable here (the caller scrubs time)."""
        if not self.names():
            return False
        hit = self.key_hit(vb, scene_pos)
        mode = selection_mode(mods)
        if hit is None:
            if mode == "set":
                self.doc.clear_key_selection()
            self.doc.set_time(self.doc.snap_time(vb.mapSceneToView(scene_pos).x()))
            return True
        name, i = hit
        self.doc.select_float_keys({name: {i}}, mode, exclusive=mode == "set")
        return True

    def box_select(self, rect: QRectF, mods) -> None:
        mode = selection_mode(mods)
        self.doc.select_float_keys(self.keys_in_rect(rect), mode, exclusive=mode == "set")

    # ------------------------------------------------------------------ drags
    def begin_drag(self, vb, scene_pos, mods) -> str | None:
        """ "handle" (a tangent handle grabbed), "keys" (a key grabbed; either starts the live
        edit), "box", or None (nothing editable here)."""
        if not self.names():
            return None
        h = self.handle_hit(vb, scene_pos)
        if h is not None:
            name, i, side = h
            self._drag = {
                "kind": "handle",
                "base": self.doc.clip,
                "track": self.doc.other_track(name),
                "index": i,
                "side": side,
            }
            self.doc.begin_live_edit()
            return "handle"
        hit = self.key_hit(vb, scene_pos)
        if hit is None:
            return "box"
        name, i = hit
        if i not in self.doc.selected_float_keys.get(name, ()):  # grabbing an unselected key selects it
            add = selection_mode(mods) != "set"
            self.doc.select_float_keys({name: {i}}, "add" if add else "set", exclusive=not add)
        base = self.doc.clip
        sel = {n: sorted(v) for n, v in self.doc.selected_float_keys.items()}
        moving = {n: (self.doc.other_track(n), idx) for n, idx in sel.items()}
        c = self.doc.other_track(name).curve
        self._drag = {"kind": "keys", "base": base, "moving": moving, "t0": float(c.time[i]), "vb": vb}
        self.doc.begin_live_edit()
        return "keys"

    def drag_to(self, p0: QPointF, p1: QPointF, mods, finish: bool) -> None:
        d = self._drag
        if d is None:
            return
        if not self.doc.in_live_edit():
            self._drag = None  # cancelled under the drag (undo / redo mid-drag)
            return
        if d["kind"] == "handle":
            self._drag_handle(d, p1)
            if finish:
                self._drag = None
                self.doc.end_live_edit("Edit float tangent")
            return
        dt, dv = p1.x() - p0.x(), p1.y() - p0.y()
        if mods & Qt.KeyboardModifier.ShiftModifier:
            px, py = d["vb"].viewPixelSize()
            if abs(dt / px) >= abs(dv / py):
                dv = 0.0
            else:
                dt = 0.0
        if dt:
            dt = self.doc.snap_time(d["t0"] + dt) - d["t0"]
        clip, dt = fc.move_float_keys(d["base"], d["moving"], dt, dv, 1.0 / self.doc.frame_rate)
        self.doc.update_live(clip, ())
        self.panel.statusMessage.emit(f"Move keys: Δt {dt:+.4f} s, Δ {dv:+.4f}")
        if finish:
            self._drag = None
            self.doc.end_live_edit("Move float keys")

    def _drag_handle(self, d: dict, p: QPointF) -> None:
        """The grabbed handle through the mouse (``engine.edit.drag_tangent``, as the rotation
        graphs' handles: the slope in the curve's units per second, the weight on a weighted side)."""
        o, i, side = d["track"], d["index"], d["side"]
        new, slope = ed.drag_tangent(o, i, 0, side, p.x() - float(o.curve.time[i]), p.y())
        self.doc.update_live(fc.with_float_curve(d["base"], o.name, new.curve), ())
        self.panel.statusMessage.emit(f"Tangent {side}: slope {slope:.4g} per s")

    def cancel(self) -> bool:
        if self._drag is None:
            return False
        self._drag = None
        self.doc.cancel_live_edit()
        return True

    @property
    def dragging(self) -> bool:
        return self._drag is not None
