"""The open clip and everything views share about it: current time, selection, preview, undo.

:class:`ClipDocument` is the single source of truth of the editor. Views read ``document.clip`` (an
immutable :class:`~curveeditor.engine.clip.Clip`) and listen to the signals; edits never mutate a
clip, they go through :meth:`ClipDocument.apply_clip` (one undoable command) or, for a mouse drag,
through :meth:`begin_live_edit` / :meth:`update_live` / :meth:`end_live_edit` (many redraws, one
undo step).

Key selection (one representation, :attr:`ClipDocument.key_selection`): per ``(track path, display
channel)`` the selected key indices, channel 0..2 = the X, Y, Z curve the graphs draw. Every view
reads it (graphs per curve, the key table, dope sheet and timeline per key through the derived
:attr:`ClipDocument.selected_keys`) and every key edit acts on exactly it. A key's time is shared by
its X, Y and Z (Unity keeps one time per rotation key), so time edits move a key selected on any
channel; value, tangent, delete and paste edits act on the selected channels only. Quaternion
tracks' keys are whole rotations: selecting one channel of a quaternion key selects all three.

Times are seconds. ``changed_paths`` tells listeners of ``clipChanged`` which rotation tracks changed
(``None`` = assume everything changed, e.g. after a load), so a drag on one track of a 60-track clip
redraws only that track.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from curveeditor.engine.clip import Clip, RotationTrack

from .undo import ReplaceClipCommand, changed_track_paths

__all__ = ["ClipDocument", "CHANNELS", "KeySelection"]

#: display channels of a rotation track's graphs (X, Y, Z)
CHANNELS = (0, 1, 2)

#: the key selection: ``{(track path, channel 0..2): key indices}``
KeySelection = dict[tuple[str, int], set[int]]


def _merged(current: dict, keys: dict, mode: str) -> dict:
    """``keys`` as the new selection (``"set"``), or added to (``"add"``) / toggled in (``"toggle"``)
    ``current`` (both ``{key: indices}``)."""
    if mode == "set":
        return keys
    out = {k: set(v) for k, v in current.items()}
    for k, idx in keys.items():
        have = out.setdefault(k, set())
        if mode == "toggle":
            have ^= set(idx)
        else:
            have |= set(idx)
    return out


def _as_channel_keys(keys) -> KeySelection:
    """``keys`` in the canonical form: a dict keyed by ``(path, channel)`` is taken as it is, one keyed
    by path (``{path: indices}``, whole keys) is spread over the three channels."""
    out: KeySelection = {}
    if not keys:
        return out
    for k, idx in keys.items():
        if isinstance(k, tuple):
            out[(k[0], int(k[1]))] = set(idx)
        else:
            s = set(idx)
            for ch in CHANNELS:
                out[(k, ch)] = set(s)
    return out


class ClipDocument(QObject):
    """The edited clip, the clip as loaded, the recipe preview, time and selections.

    Attributes:
        clip: the current (edited) clip.
        original: the clip as loaded (ghost curves, diff baseline).
        preview: a recipe result not yet applied, or ``None``.
        path: the file the clip was loaded from / last saved to, or ``None``.
        undo_stack: every edit is one command here.
        current_time: seconds.
        selected_paths: selected rotation tracks, first = primary (the "current" track).
        key_selection: the key selection, ``{(path, channel): key indices}`` (module docstring).
        selected_keys: derived from it (read only): per track path, the keys selected on any channel.
        whole_keys: a graph click selects a key on X, Y and Z together (the "three-channel key"
            option); False = per curve, as Maya's and Blender's graph editors.
        changed_paths: rotation tracks changed by the last ``clipChanged`` (``None`` = all).
    """

    clipChanged = Signal()
    previewChanged = Signal()
    timeChanged = Signal(float)
    selectionChanged = Signal()
    keySelectionChanged = Signal()
    dirtyChanged = Signal(bool)
    pathChanged = Signal()
    otherSelectionChanged = Signal()  # read-only curves shown as graphs (view only)
    floatKeySelectionChanged = Signal()  # selected keys of the shown float curves

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        empty = Clip(name="empty", frame_rate=30.0)
        self.clip: Clip = empty
        self.original: Clip = empty
        self.preview: Clip | None = None
        self.path: str | None = None
        self.undo_stack = QUndoStack(self)
        self.current_time: float = 0.0
        self.selected_paths: list[str] = []
        self.key_selection: KeySelection = {}
        self._by_track: dict[str, set[int]] = {}
        self.whole_keys = False
        #: the key last picked in the graphs, ``(path, index, channel)`` (the active key's fields);
        #: see :meth:`active_key`
        self._active: tuple[str, int, int] | None = None
        self.selected_other: list[str] = []  # OtherTrack.name of read-only curves shown (view only)
        #: per shown float curve (``OtherTrack.name``), the selected key indices (muscles, blend
        #: shapes: ``engine.float_curves``; edited with the same ``engine.edit`` functions)
        self.selected_float_keys: dict[str, set[int]] = {}
        self.changed_paths: frozenset[str] | None = None
        self._live_before: Clip | None = None
        self._live_keys: KeySelection | None = None
        self._saved_externally_dirty = False
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)

    # ------------------------------------------------------------------ loading / state
    def load(self, clip: Clip, path: str | None) -> None:
        """Make ``clip`` the document (as loaded from ``path``): resets undo, original, preview,
        selections, and moves the time to the clip's start."""
        was_dirty = self.is_dirty()
        self._live_before = None
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self._saved_externally_dirty = False
        self.clip = clip
        self.original = clip
        self.preview = None
        self.path = None if path is None else str(path)
        self._install_keys({})
        first = next((t.path for t in clip.tracks if t.n_keys), None)
        self.selected_paths = [first] if first is not None else []
        had_other = bool(self.selected_other)
        self.selected_other = []
        self.selected_float_keys = {}
        self.current_time = float(clip.start)
        self.changed_paths = None
        self.clipChanged.emit()
        self.previewChanged.emit()
        self.selectionChanged.emit()
        self.keySelectionChanged.emit()
        self.timeChanged.emit(self.current_time)
        self.pathChanged.emit()
        if had_other:
            self.otherSelectionChanged.emit()
        if was_dirty:
            self.dirtyChanged.emit(False)

    def set_path(self, path: str | None) -> None:
        self.path = None if path is None else str(path)
        self.pathChanged.emit()

    def mark_saved(self, path: str | None = None) -> None:
        """The current clip is what is on disk now (after a save)."""
        if path is not None:
            self.set_path(path)
        was = self.is_dirty()
        self._saved_externally_dirty = False
        self.undo_stack.setClean()
        if was and not self.is_dirty():
            self.dirtyChanged.emit(False)

    def mark_dirty(self) -> None:
        """Flag unsaved changes that are not on the undo stack (e.g. a recovered session)."""
        if not self._saved_externally_dirty:
            self._saved_externally_dirty = True
            self.dirtyChanged.emit(True)

    def is_dirty(self) -> bool:
        return self._saved_externally_dirty or not self.undo_stack.isClean()

    def _on_clean_changed(self, clean: bool) -> None:
        if not self._saved_externally_dirty:
            self.dirtyChanged.emit(not clean)

    # ------------------------------------------------------------------ time
    @property
    def frame_rate(self) -> float:
        return float(self.clip.frame_rate)

    def snap_time(self, t: float) -> float:
        """``t`` (seconds) rounded to the nearest frame of the clip's frame rate."""
        fr = self.frame_rate
        return round(float(t) * fr) / fr

    def clip_bounds(self) -> tuple[float, float]:
        """``(clip.start, clip.end)`` in seconds, scanned once per clip object (clips are immutable):
        each scan visits every track, 90 us for both on the 67-track Gangnam BVH, and a playback
        tick asked twice (the timeline's range, then ``set_time``'s clamp)."""
        memo = getattr(self, "_bounds_memo", None)
        if memo is None or memo[0] is not self.clip:
            memo = self._bounds_memo = (self.clip, float(self.clip.start), float(self.clip.end))
        return memo[1], memo[2]

    def set_time(self, t: float) -> None:
        """Move the time cursor (seconds), clamped to [min(0, start), end] of the clip."""
        start, end = self.clip_bounds()
        lo = min(0.0, start)
        hi = max(lo, end)
        t = min(max(float(t), lo), hi)
        if t != self.current_time:
            self.current_time = t
            self.timeChanged.emit(t)

    # ------------------------------------------------------------------ selection
    def select_paths(self, paths) -> None:
        """Select rotation tracks (first = primary); unknown paths are ignored."""
        known = {t.path for t in self.clip.tracks}
        new = []
        for p in paths:
            if p in known and p not in new:
                new.append(p)
        if new != self.selected_paths:
            self.selected_paths = new
            # Keys stay selected only on selected (drawn) tracks: otherwise Delete, copy or a
            # drag would act on keys of a track the user switched away from and cannot see.
            keys = self._clean_keys(self.key_selection)
            keys_changed = keys != self.key_selection
            self._install_keys(keys)
            self.selectionChanged.emit()
            if keys_changed:
                self.keySelectionChanged.emit()

    def hierarchy_of(self, path: str) -> list[str]:
        """``path`` and every rotation track below it (its children, grandchildren, ...: paths that
        continue ``path/``), in clip order, ``path`` first when it is a track."""
        head = path.rstrip("/") + "/"
        below = [t.path for t in self.clip.tracks if t.path.startswith(head)]
        own = [path] if any(t.path == path for t in self.clip.tracks) else []
        return own + below

    def select_hierarchy(self, path: str | None = None) -> None:
        """Select ``path``'s hierarchy (default: the primary track's), ``path`` stays primary."""
        path = path if path is not None else (self.selected_paths[0] if self.selected_paths else None)
        if path is not None:
            self.select_paths(self.hierarchy_of(path))

    def select_other(self, names) -> None:
        """Show these read-only curves (``OtherTrack.name``) as graphs; numeric ones only."""
        known = {o.name for o in self.clip.other_tracks if o.curve is not None}
        new = [n for n in dict.fromkeys(names) if n in known]
        if new != self.selected_other:
            self.selected_other = new
            self.otherSelectionChanged.emit()
            self.select_float_keys(self.selected_float_keys)

    def select_float_keys(
        self, keys: dict[str, set[int]], mode: str = "set", exclusive: bool = False
    ) -> None:
        """Set (``"set"``), add (``"add"``) or toggle (``"toggle"``) keys of the shown float curves
        (indices per ``OtherTrack.name``; curves not shown and indices out of range dropped).
        ``exclusive``: a plain pick, which deselects the rotation keys (the views keep one selection
        across both kinds: :meth:`select_keys` likewise)."""
        if exclusive:
            self.select_keys({})
        keys = _merged(self.selected_float_keys, keys, mode)
        clean: dict[str, set[int]] = {}
        for name, idx in keys.items():
            if name not in self.selected_other or not idx:
                continue
            n = self.other_track(name).n_keys
            s = {int(i) for i in idx if 0 <= int(i) < n}
            if s:
                clean[name] = s
        if clean != self.selected_float_keys:
            self.selected_float_keys = clean
            self.floatKeySelectionChanged.emit()

    def shown_float_curves(self) -> list[str]:
        """The shown curves (``selected_other``) that can be edited as float curves
        (``engine.float_curves.is_editable``), in their order: the graphs' value strip, the key
        fields and the key table work on these."""
        from curveeditor.engine.float_curves import is_editable

        out = []
        for n in self.selected_other:
            try:
                o = self.other_track(n)
            except StopIteration:
                continue
            if is_editable(o):
                out.append(n)
        return out

    def other_track(self, name: str):
        """The curve named ``name``: the float curve rather than its editor mirror (same name)."""
        return next(
            (o for o in self.clip.other_tracks if o.name == name and not o.meta.get("mirror_of")),
            None,
        ) or next(o for o in self.clip.other_tracks if o.name == name)

    def current_track(self) -> RotationTrack | None:
        """The primary selected rotation track, or ``None``."""
        if not self.selected_paths:
            return None
        try:
            return self.clip.track(self.selected_paths[0])
        except KeyError:
            return None

    @property
    def selected_keys(self) -> dict[str, set[int]]:
        """Per track path, the keys selected on at least one channel (derived from
        :attr:`key_selection`; do not mutate). Time edits, the dope sheet and the key table's rows
        work on these whole keys."""
        return self._by_track

    @selected_keys.setter
    def selected_keys(self, keys) -> None:
        self._install_keys(_as_channel_keys(keys))

    def _install_keys(self, sel: KeySelection) -> None:
        self.key_selection = sel
        by: dict[str, set[int]] = {}
        for (p, _ch), idx in sel.items():
            if idx:
                have = by.get(p)
                if have is None:
                    by[p] = set(idx)
                else:
                    have |= idx
        self._by_track = by

    def active_key(self) -> tuple[str, int, int] | None:
        """``(path, key index, channel)`` of the active key: the one last picked (clicked) when it is
        still selected, else the first selected key (first selected track, lowest channel, then
        index); None without a selection."""
        a = self._active
        if a is not None and a[1] in self.key_selection.get((a[0], a[2]), ()):
            return a
        for p in self.selected_paths:
            for ch in CHANNELS:
                idx = self.key_selection.get((p, ch))
                if idx:
                    return p, min(idx), ch
        return None

    def select_keys(
        self, keys, mode: str = "set", active: tuple[str, int, int] | None = None, exclusive: bool = False
    ) -> None:
        """Set (``"set"``), add (``"add"``) or toggle (``"toggle"``) keys in the selection.

        ``keys``: ``{path: indices}`` (whole keys: all three channels) or ``{(path, channel):
        indices}`` (per curve). Out-of-range indices and tracks that are not selected are dropped.
        ``active``: the key picked, ``(path, index, channel)``, made the active key. ``exclusive``:
        a plain pick, which deselects the float curves' keys (:meth:`select_float_keys`)."""
        if exclusive:
            self.select_float_keys({})
        if active is not None:
            changed = active != self._active
            self._active = (active[0], int(active[1]), int(active[2]))
        else:
            changed = False
        clean = self._clean_keys(_merged(self.key_selection, _as_channel_keys(keys), mode))
        if clean != self.key_selection:
            self._install_keys(clean)
            self.keySelectionChanged.emit()
        elif changed:
            self.keySelectionChanged.emit()  # the same keys, another active one

    def clear_key_selection(self) -> None:
        """Nothing selected: no rotation key, no float-curve key."""
        self.select_keys({}, exclusive=True)

    def channel_keys(self, path: str, channel: int) -> set[int]:
        """The keys of ``path`` selected on ``channel`` (0..2)."""
        return self.key_selection.get((path, channel), set())

    def channel_mask(self, path: str, n_keys: int | None = None) -> np.ndarray:
        """``(N, 3)`` bool: key ``i`` selected on channel ``c`` (``N`` = the track's key count)."""
        if n_keys is None:
            n_keys = self.clip.track(path).n_keys
        m = np.zeros((n_keys, 3), dtype=bool)
        for ch in CHANNELS:
            idx = self.key_selection.get((path, ch))
            if idx:
                m[np.fromiter(idx, dtype=np.int64, count=len(idx)), ch] = True
        return m

    def selection_masks(self) -> dict[str, np.ndarray]:
        """Per track with selected keys, its :meth:`channel_mask`."""
        return {p: self.channel_mask(p) for p in self._by_track}

    def _clean_keys(self, keys) -> KeySelection:
        """``keys`` (either form, :meth:`select_keys`) restricted to existing keys of the selected
        tracks; a quaternion track's keys spread over its three channels (whole rotations)."""
        out: KeySelection = {}
        keys = _as_channel_keys(keys)
        if not keys:
            return out
        selected = set(self.selected_paths)
        tracks = {t.path: t for t in self.clip.tracks if t.path in selected}
        quat: dict[str, set[int]] = {}
        for (p, ch), idx in keys.items():
            tr = tracks.get(p)
            if tr is None or ch not in CHANNELS:
                continue
            n = tr.n_keys
            # in range (the usual case): one C-level pass (a per-key test cost 7 ms per drag step
            # of a 10,000-key dope-sheet selection)
            s = set(map(int, idx))
            if s and (min(s) < 0 or max(s) >= n):
                s = {i for i in s if 0 <= i < n}
            if not s:
                continue
            if tr.kind == "quaternion":
                quat.setdefault(p, set()).update(s)
            else:
                out[(p, ch)] = s
        for p, s in quat.items():
            for ch in CHANNELS:
                out[(p, ch)] = set(s)
        return out

    # ------------------------------------------------------------------ preview
    def set_preview(self, clip: Clip | None) -> None:
        """Show a recipe result as the "after" state (not applied); ``None`` clears it."""
        if clip is self.preview:
            return
        self.preview = clip
        self.previewChanged.emit()

    # ------------------------------------------------------------------ edits
    def apply_clip(
        self,
        new_clip: Clip,
        text: str,
        *,
        keys_after=None,
    ) -> None:
        """Replace the clip with ``new_clip`` as one undoable command named ``text``.

        ``keys_after`` is the key selection to show after the edit, in either form of
        :meth:`select_keys` (default: keep the current one, dropping indices that no longer exist).
        """
        if self._live_before is not None:
            self.cancel_live_edit()
        self.undo_stack.push(
            ReplaceClipCommand(
                self,
                self.clip,
                new_clip,
                text,
                keys_before=self.key_selection,
                keys_after=None if keys_after is None else _as_channel_keys(keys_after),
            )
        )

    def begin_live_edit(self) -> None:
        """Start an interactive edit (mouse drag): :meth:`update_live` redraws, one undo step at the end."""
        if self._live_before is None:
            self._live_before = self.clip
            self._live_keys = {k: set(s) for k, s in self.key_selection.items()}

    def in_live_edit(self) -> bool:
        return self._live_before is not None

    def update_live(self, new_clip: Clip, paths=None, keys=None) -> None:
        """Show ``new_clip`` during a live edit without touching the undo stack.

        ``paths``: the rotation tracks that changed (speeds up views); ``None`` = work it out.
        ``keys``: the key selection that goes with ``new_clip`` (a retime shifts indices), installed
        before ``clipChanged`` so its listeners see the clip and its selection together
        (``keySelectionChanged`` follows when it changed); ``None`` = keep the selection.
        """
        if self._live_before is None:
            self.begin_live_edit()
        if paths is None:
            changed = changed_track_paths(self.clip, new_clip)
        else:
            changed = frozenset(paths)
        self._set_clip(new_clip, changed, keys)

    def end_live_edit(self, text: str, keys_after=None) -> None:
        """Finish a live edit: push one command from the state at :meth:`begin_live_edit` to now."""
        before = self._live_before
        if before is None:
            return
        keys_before = self._live_keys
        self._live_before = None
        self._live_keys = None
        if self.clip is before:
            return
        after = self.clip
        # Restore the start state silently so the command's redo() is the one that lands ``after``.
        self.clip = before
        self.undo_stack.push(
            ReplaceClipCommand(
                self,
                before,
                after,
                text,
                keys_before=keys_before,
                keys_after=_as_channel_keys(keys_after) if keys_after is not None else self.key_selection,
            )
        )

    def cancel_live_edit(self) -> None:
        """Abort a live edit (Escape during a drag): back to the state at its start."""
        before = self._live_before
        if before is None:
            return
        keys = self._live_keys
        self._live_before = None
        self._live_keys = None
        if self.clip is not before:
            self._set_clip(before, changed_track_paths(self.clip, before), keys)

    def _set_clip(
        self,
        clip: Clip,
        paths: frozenset[str] | None,
        keys,
    ) -> None:
        """Install ``clip`` and notify (used by commands and live edits)."""
        self.clip = clip
        self.changed_paths = paths
        known = {t.path for t in clip.tracks}
        sel = [p for p in self.selected_paths if p in known]
        sel_changed = sel != self.selected_paths
        self.selected_paths = sel
        new_keys = self._clean_keys(keys if keys is not None else self.key_selection)
        keys_changed = new_keys != self.key_selection
        self._install_keys(new_keys)
        self.clipChanged.emit()
        if self.selected_float_keys:
            self.select_float_keys(self.selected_float_keys)  # a deleted key's index is gone
        if sel_changed:
            self.selectionChanged.emit()
        if keys_changed:
            self.keySelectionChanged.emit()
