"""Undo commands: every edit of the document is one of these on ``ClipDocument.undo_stack``.

A command stores whole immutable :class:`~curveeditor.engine.clip.Clip` objects (before/after), which
is cheap because clips share their untouched tracks and arrays. It also remembers which tracks it
touched so views redraw only those, and the key selection before/after so undo restores it. The key
edits themselves are pure functions in :mod:`curveeditor.engine.edit`.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtGui import QUndoCommand

from curveeditor.engine.clip import Clip


class ClipHolder(Protocol):
    """What a command needs of the document (``ClipDocument`` is one). A protocol, not an import:
    document.py imports this module, so importing it back made a cycle."""

    key_selection: dict[tuple[str, int], set[int]]

    def cancel_live_edit(self) -> None: ...

    def _set_clip(self, clip: Clip, paths, keys) -> None: ...


__all__ = ["ReplaceClipCommand", "changed_track_paths", "DRAG_COMMAND_ID", "ClipHolder"]

#: Merge id of drag commands (QUndoCommand.id); consecutive drags with the same token merge.
DRAG_COMMAND_ID = 4201


def changed_track_paths(before: Clip, after: Clip) -> frozenset[str] | None:
    """Paths of rotation tracks that differ (by identity) between two clips, or ``None`` when the
    track set itself changed (views must rebuild everything)."""
    if before is None or after is None:
        return None
    if len(before.tracks) != len(after.tracks):
        return None
    changed = set()
    for a, b in zip(before.tracks, after.tracks, strict=True):
        if a.path != b.path:
            return None
        if a is not b:
            changed.add(a.path)
    if before.other_tracks is not after.other_tracks and len(before.other_tracks) != len(after.other_tracks):
        return None
    return frozenset(changed)


class ReplaceClipCommand(QUndoCommand):
    """Replace the document's clip (redo: ``after``; undo: ``before``).

    ``merge_token``: commands pushed with the same non-None token merge into one undo step (used for
    a mouse drag, which pushes one command per release but may also stream intermediate states).
    """

    def __init__(
        self,
        document: ClipHolder,
        before: Clip,
        after: Clip,
        text: str,
        *,
        keys_before: dict | None = None,
        keys_after: dict | None = None,
        merge_token: object | None = None,
    ):
        super().__init__(text)
        self._doc = document
        self.before = before
        self.after = after
        self.paths = changed_track_paths(before, after)
        self.keys_before = _copy_keys(keys_before if keys_before is not None else document.key_selection)
        self.keys_after = _copy_keys(keys_after) if keys_after is not None else None
        self.merge_token = merge_token

    def redo(self) -> None:
        # Undo/redo pressed mid-drag: end the drag first, else its release would push a command on
        # top of the undone state and cut the earlier history off.
        self._doc.cancel_live_edit()
        self._doc._set_clip(self.after, self.paths, self.keys_after)

    def undo(self) -> None:
        self._doc.cancel_live_edit()
        self._doc._set_clip(self.before, self.paths, self.keys_before)

    def id(self) -> int:  # noqa: A003 - Qt API name
        return DRAG_COMMAND_ID if self.merge_token is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt API name
        if not isinstance(other, ReplaceClipCommand) or other.merge_token is None:
            return False
        if other.merge_token != self.merge_token:
            return False
        self.after = other.after
        self.keys_after = other.keys_after
        paths = changed_track_paths(self.before, self.after)
        self.paths = paths
        return True


def _copy_keys(keys: dict | None) -> dict | None:
    """A copy of a key selection (``{(path, channel): indices}``, or ``{path: indices}``)."""
    if keys is None:
        return None
    return {k: set(s) for k, s in keys.items()}
