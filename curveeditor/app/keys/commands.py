"""The main window's key commands (Key and Edit menus): delete, add (K), copy / paste, select all,
tangent presets and per-side modes -- each one undo command through ``ClipDocument.apply_clip``,
the edit itself an engine function (:mod:`curveeditor.engine.edit`). Each acts on exactly the
(key, channel) cells the document shows selected (``ClipDocument.key_selection``).

A mixin of :class:`~curveeditor.app.window.main_window.MainWindow` (it uses ``self.doc``, ``self.clipboard``
and the status bar).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QMessageBox

from curveeditor.engine import edit as ed
from curveeditor.engine import float_curves as fc
from curveeditor.engine.curves import evaluate

__all__ = ["KeyCommands", "insert_key_keeping_shape"]


def insert_key_keeping_shape(track, t: float):
    """K: a key at ``t`` s on the curve as it plays whose tangents take the curve's slope there
    (Blender's insert), so the neighbouring segments keep their shape. Free Smooth tangents (mode 0);
    an existing key at ``t`` is left as is. Returns ``(track, index)``."""
    c = track.curve
    if c.n_keys >= 2 and float(c.time[0]) < t < float(c.time[-1]):
        existed = bool(np.any(np.abs(c.time - t) < 1e-9))
        new, i = ed.insert_key(track, t)
        if existed:
            return new, i
        h = 1e-4 * max(float(c.time[-1] - c.time[0]), 1e-3)
        slope = (evaluate(c, np.array([t + h])) - evaluate(c, np.array([t - h])))[0] / (2 * h)
        for comp in range(new.curve.value.shape[1]):
            new = ed.set_slope(new, i, comp, "in", float(slope[comp]))
        # A cubic segment split at t with the curve's value and slope there is the same curve, as
        # long as the neighbours keep their slopes: insert_key recomputed their auto tangents. Both
        # sides of each neighbour are restored (its other segment is untouched too), and their modes
        # were never changed: the neighbours are bit for bit what they were.
        nc = new.curve
        ins, outs = np.array(nc.in_slope), np.array(nc.out_slope)
        ins[i - 1], outs[i - 1] = c.in_slope[i - 1], c.out_slope[i - 1]
        ins[i + 1], outs[i + 1] = c.in_slope[i], c.out_slope[i]
        new = new.with_curve(nc.with_keys(in_slope=ins, out_slope=outs))
        return new, i
    return ed.insert_key(track, t)


def _cells(track, mask):
    """The (key, component) cells an edit of a per-curve selection touches: the ``(N, 3)`` channel
    mask on Euler tracks, None (whole keys) on quaternion tracks, whose components are not X, Y, Z."""
    return mask if track.kind == "euler" else None


class KeyCommands:
    """Key edits on the selected keys / tracks (mixin of ``MainWindow``)."""

    def _selected(self) -> dict[str, set[int]]:
        return {p: s for p, s in self.doc.selected_keys.items() if s}

    def _selected_floats(self) -> dict[str, set[int]]:
        return {n: s for n, s in self.doc.selected_float_keys.items() if s}

    def _edit_floats(self, fn, text: str, keys_after=None) -> bool:
        """Apply ``fn(curve_track, idx, None) -> curve_track`` to every shown float curve with selected keys
        (muscles, blend shapes: the same engine edits, channel 0) as one command."""
        sel = self._selected_floats()
        if not sel:
            self.statusBar().showMessage("Select keys first", 3000)
            return False
        clip = self.doc.clip
        try:
            for n, idx in sel.items():
                clip = fc.with_float_curve(clip, n, fn(self.doc.other_track(n), idx, None).curve)
        except ValueError as exc:
            QMessageBox.warning(self, text, str(exc))
            return False
        self.doc.apply_clip(clip, text)
        if keys_after is not None:
            self.doc.select_float_keys(keys_after)
        return True

    def _edit_tracks(self, fn, text: str, keys_after=None) -> bool:
        """Apply ``fn(track, idx, cells) -> track`` to every track with selected keys as one command
        (``idx``: the keys selected on any channel; ``cells``: the ``(N, 3)`` channel mask; the
        float curves' selected keys, with ``cells`` None, when no rotation key is selected)."""
        sel = self._selected()
        if not sel and self._selected_floats():
            return self._edit_floats(fn, text, keys_after)
        if not sel:
            self.statusBar().showMessage("Select keys first", 3000)
            return False
        clip = self.doc.clip
        try:
            tracks = {p: fn(clip.track(p), idx, self.doc.channel_mask(p)) for p, idx in sel.items()}
        except ValueError as exc:
            QMessageBox.warning(self, text, str(exc))
            return False
        new = clip.with_tracks(tracks.get(t.path, t) for t in clip.tracks)
        self.doc.apply_clip(new, text, keys_after=keys_after)
        return True

    def delete_keys(self) -> None:
        """Delete the selected keys; a key selected on some channels only keeps its time and stops
        shaping those channels (:func:`~curveeditor.engine.edit.delete_channel_keys`)."""
        masks = {p: self.doc.channel_mask(p) for p in self._selected()}
        whole = sum(int(m.all(axis=1).sum()) for m in masks.values())
        cells = sum(int(m.sum()) for m in masks.values())
        n = sum(len(s) for s in (self._selected() or self._selected_floats()).values())
        text = f"Delete {n} key(s)" if cells == 3 * whole else f"Delete {cells} key(s) on their curves"

        def delete(tr, idx, m):
            return ed.delete_keys(tr, idx) if m is None else ed.delete_channel_keys(tr, m)

        if self._edit_tracks(delete, text, keys_after={}):
            self.statusBar().showMessage(text.replace("Delete", "Deleted"), 3000)

    def add_key(self) -> None:
        t = self.doc.current_time
        paths = self.doc.selected_paths
        if not paths:
            self._add_float_keys(t)
            return
        clip = self.doc.clip
        keys = {}
        tracks = {}
        for p in paths:
            tr, i = insert_key_keeping_shape(clip.track(p), t)
            tracks[p] = tr
            keys[p] = {i}
        new = clip.with_tracks(tracks.get(tr.path, tr) for tr in clip.tracks)
        self.doc.apply_clip(new, f"Add key at {t:.3f} s", keys_after=keys)

    def _add_float_keys(self, t: float) -> None:
        """K with only float curves shown: a key at the cursor on each editable one (its shape kept)."""
        names = self.doc.shown_float_curves()
        if not names:
            return
        clip = self.doc.clip
        keys = {}
        for n in names:
            tr, i = insert_key_keeping_shape(self.doc.other_track(n), t)
            clip = fc.with_float_curve(clip, n, tr.curve)
            keys[n] = {i}
        self.doc.apply_clip(clip, f"Add key at {t:.3f} s")
        self.doc.select_float_keys(keys)

    def copy_keys(self) -> None:
        """Copy the selected keys (their times relative to the first one): rotation keys with the
        channels each was selected on, else the selected float-curve keys (muscles, blend shapes)."""
        sel = self._selected()
        if not sel:
            self._copy_float_keys()
            return
        self.clipboard = {}
        t0 = min(float(self.doc.clip.track(p).times[min(i)]) for p, i in sel.items())
        for p, idx in sel.items():
            tr = self.doc.clip.track(p)
            keys = ed.copy_keys(tr, idx)
            first = float(tr.times[min(idx)])
            rows = np.array(sorted(idx), dtype=np.int64)
            # the channels each copied key was selected on: paste writes only those
            self.clipboard[p] = (keys, first - t0, self.doc.channel_mask(p, tr.n_keys)[rows])
        n = sum(len(s) for s in sel.values())
        self.statusBar().showMessage(f"Copied {n} key(s)", 3000)

    def _copy_float_keys(self) -> None:
        """Float curves' selected keys into the clipboard, keyed ``("float", name)``."""
        sel = self._selected_floats()
        if not sel:
            return
        curves = {n: self.doc.other_track(n) for n in sel}
        t0 = min(float(curves[n].curve.time[min(idx)]) for n, idx in sel.items())
        self.clipboard = {
            ("float", n): (ed.copy_keys(curves[n], idx), float(curves[n].curve.time[min(idx)]) - t0, None)
            for n, idx in sel.items()
        }
        n = sum(len(s) for s in sel.values())
        self.statusBar().showMessage(f"Copied {n} float key(s)", 3000)

    def _paste_float_keys(self, items: list) -> None:
        """Copied float keys at the current time: into the curves they came from when shown, a
        single copied curve into the one shown editable curve (as Unity pastes into the selection);
        one undo step, the pasted keys selected."""
        t = self.doc.current_time
        shown = self.doc.shown_float_curves()
        if len(items) == 1 and len(shown) == 1:
            targets = [(shown[0], items[0][1])]
        else:
            targets = [(key[1], v) for key, v in items if key[1] in shown]
        if not targets:
            self.statusBar().showMessage("Show the float curve to paste into first", 3000)
            return
        clip, keys = self.doc.clip, {}
        try:
            for n, (curve, offset, _chans) in targets:
                o, idx = ed.paste_keys(self.doc.other_track(n), curve, t + offset)
                clip = fc.with_float_curve(clip, n, o.curve)
                keys[n] = {int(i) for i in idx}
        except ValueError as exc:
            QMessageBox.warning(self, "Paste keys", str(exc))
            return
        self.doc.apply_clip(clip, f"Paste float keys at {t:.3f} s")
        self.doc.select_float_keys(keys)

    def paste_keys(self) -> None:
        if not self.clipboard:
            return
        floats = [(k, v) for k, v in self.clipboard.items() if isinstance(k, tuple)]
        if floats:
            self._paste_float_keys(floats)
            return
        clip = self.doc.clip
        t = self.doc.current_time
        tracks, keys = {}, {}
        items = list(self.clipboard.items())
        if len(items) == 1 and self.doc.selected_paths:
            # a single copied track pastes into the current track (Unity pastes into the selection)
            targets = [(self.doc.selected_paths[0], items[0][1])]
        else:
            targets = [(p, v) for p, v in items if p in {tr.path for tr in clip.tracks}]
        try:
            for p, (curve, offset, chans) in targets:
                tr, idx = ed.paste_channel_keys(clip.track(p), curve, t + offset, chans)
                tracks[p] = tr
                for ch in range(3):
                    on = np.asarray(chans[:, ch]) if tr.kind == "euler" else np.ones(len(idx), dtype=bool)
                    keys[(p, ch)] = {int(i) for i, o in zip(idx, on, strict=True) if o}
        except ValueError as exc:
            QMessageBox.warning(self, "Paste keys", str(exc))
            return
        if tracks:
            new = clip.with_tracks(tracks.get(tr.path, tr) for tr in clip.tracks)
            self.doc.apply_clip(new, f"Paste keys at {t:.3f} s", keys_after=keys)

    def select_all_keys(self) -> None:
        """Every key of the selected tracks; while the graphs isolate / solo curves, of those only."""
        clip = self.doc.clip
        solo = getattr(getattr(getattr(self, "graphs", None), "solo", None), "curves", None)
        if solo:
            sel = set(self.doc.selected_paths)
            self.doc.select_keys({(p, ch): set(range(clip.track(p).n_keys)) for p, ch in solo if p in sel})
            return
        self.doc.select_keys({p: set(range(clip.track(p).n_keys)) for p in self.doc.selected_paths})

    def set_tangent_preset(self, preset: str) -> None:
        self._edit_tracks(
            lambda tr, idx, m: ed.set_tangent_preset(tr, idx, preset, channels=_cells(tr, m)),
            f"Tangents: {preset}",
        )

    def set_side_mode(self, side: str, mode: str) -> None:
        label = {"in": "Left", "out": "Right", "both": "Both"}[side]
        self._edit_tracks(
            lambda tr, idx, m: ed.set_side_mode(tr, idx, side, mode, channels=_cells(tr, m)),
            f"{label} tangent: {mode}",
        )

    def selected_tangent_mode(self) -> str | None:
        """The selected keys' tangent mode (``ed.describe_mode`` of channel 0), when they share one."""
        pairs = set()
        sel = self._selected()
        tracks = {p: self.doc.clip.track(p) for p in sel}
        if not sel:
            sel = self._selected_floats()
            tracks = {n: self.doc.other_track(n) for n in sel}
        for p, idx in sel.items():
            tr = tracks[p]
            c = tr.curve
            # the selected cells (Euler tracks: per channel; quaternion keys and float curves: whole)
            cells = _cells(tr, self.doc.channel_mask(p, c.n_keys)) if tr.kind == "euler" else None
            if cells is None:
                rows = np.fromiter(idx, dtype=np.int64, count=len(idx))
                tm, wm = c.tangent_mode[rows], c.weighted_mode[rows]
            else:
                tm, wm = c.tangent_mode[cells], c.weighted_mode[cells]
            # Only the distinct (mode, weighted) pairs are described: a per-key describe_mode cost
            # 0.65 s per dope-sheet drag step with 10,000 selected keys.
            both = tm.astype(np.int64) * 4 + (wm.astype(np.int64) & 3)
            pairs.update(np.unique(both).tolist())
        names = {ed.describe_mode(int(mw // 4), int(mw % 4)) for mw in pairs}
        return names.pop() if len(names) == 1 else None
