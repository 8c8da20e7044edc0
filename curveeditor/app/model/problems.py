"""Problems of the clip (wrap, flip, hemisphere, gimbal, spike, pop): the index and the table model.

:class:`ProblemIndex` runs ``engine.analysis.find_problems`` per rotation track and caches the result
by track identity (tracks are immutable, so an unchanged track is never re-inspected). After an edit
only the changed tracks are re-inspected, deferred by a short timer so a mouse drag stays fluid;
``updated`` then fires with the paths whose problems changed (``None`` = all). :class:`ProblemsModel`
is the Problems dock's table model (the dock itself: :mod:`curveeditor.app.tracks.problems_panel`).
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import (
    QObject,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from curveeditor.engine import analysis

from ..common.row_table import RowTableModel
from ..common.theme import LIGHT, Theme
from .document import ClipDocument

__all__ = ["ProblemIndex", "ProblemsModel", "KindFilter", "KIND_LABELS", "inspect_tracks"]

KIND_LABELS = {
    "wrap": "Wrap jump",
    "flip": "Euler flip",
    "hemisphere": "Hemisphere flip",
    "gimbal": "Gimbal lock",
    "spike": "Spike",
    "pop": "Pop",
}


class ProblemIndex(QObject):
    """Per-track problem lists, recomputed lazily for changed tracks only."""

    updated = Signal(object)  # frozenset of paths, or None for everything

    def __init__(self, document: ClipDocument, parent: QObject | None = None, delay_ms: int = 120):
        super().__init__(parent)
        self.doc = document
        self._cache: dict[str, tuple[object, list[analysis.Problem]]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.refresh)
        self._pending_all = True
        document.clipChanged.connect(self._on_clip_changed)

    def _on_clip_changed(self) -> None:
        if self.doc.changed_paths is None:
            self._pending_all = True
            self.refresh()  # a load: badges must be right at first paint
            return
        self._timer.start()

    def prime(self, found: dict) -> None:
        """Take the problems :func:`inspect_tracks` found (on the file loader's worker thread, beside
        the read) for the tracks of a clip about to be loaded: the load's refresh finds them in the
        cache (a 10-minute take's 31 tracks took 0.7 s on the window's thread)."""
        self._cache.update(found)

    def refresh(self) -> None:
        """Re-inspect tracks that changed since the last refresh (skipped during a drag)."""
        if self.doc.in_live_edit():
            self._timer.start()
            return
        self._timer.stop()
        changed = set()
        tracks = {t.path: t for t in self.doc.clip.tracks}
        for path in list(self._cache):
            if path not in tracks:
                del self._cache[path]
                changed.add(path)
        for path, tr in tracks.items():
            hit = self._cache.get(path)
            if hit is not None and hit[0] is tr:
                continue
            probs = _problems_of(tr)
            # Only a changed list is news: a retime of 165 clean tracks would otherwise re-walk the
            # track tree's rows and reload the Problems table for nothing (0.2-0.4 s per drag release).
            if hit is None or hit[1] != probs:
                changed.add(path)
            self._cache[path] = (tr, probs)
        everything = self._pending_all
        self._pending_all = False
        if changed or everything:
            self.updated.emit(None if everything else frozenset(changed))

    def problems(self, path: str) -> list[analysis.Problem]:
        hit = self._cache.get(path)
        return hit[1] if hit is not None else []

    def counts(self, path: str) -> Counter:
        return Counter(p.kind for p in self.problems(path))

    def all_problems(self) -> list[analysis.Problem]:
        out: list[analysis.Problem] = []
        for t in self.doc.clip.tracks:
            out.extend(self.problems(t.path))
        return out


def _problems_of(track) -> list[analysis.Problem]:
    try:
        return analysis.find_problems(track) if track.n_keys else []
    except (ValueError, FloatingPointError):  # a degenerate track must not take the editor down
        return []


def inspect_tracks(tracks) -> dict:
    """``path -> (track, problems)`` of ``tracks``, as :class:`ProblemIndex` caches them: pure (no Qt
    object touched), so the file loader's worker thread runs it after the read
    (:meth:`ProblemIndex.prime`)."""
    return {t.path: (t, _problems_of(t)) for t in tracks}


class ProblemsModel(RowTableModel):
    """Rows: every problem of the clip. Columns: track, time (s), frame, kind, detail."""

    HEADERS = ("Track", "Time (s)", "Frame", "Kind", "Detail")

    def __init__(self, index: ProblemIndex, parent: QObject | None = None):
        super().__init__(parent)
        self.pindex = index
        self.theme: Theme = LIGHT
        self.rows: list[analysis.Problem] = []
        index.updated.connect(self.reload)
        self.reload()

    def reload(self, *_):
        self.beginResetModel()
        self.rows = self.pindex.all_problems()
        self.endResetModel()

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        p = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            fr = self.pindex.doc.frame_rate
            return (
                p.path,
                f"{p.time:.4f}",
                f"{p.time * fr:.1f}",
                KIND_LABELS.get(p.kind, p.kind),
                p.detail,
            )[col]
        if role == Qt.ItemDataRole.UserRole:  # sort key
            return (str(p.path), float(p.time), float(p.time), str(p.kind), str(p.detail))[col]
        if role == Qt.ItemDataRole.ForegroundRole and col == 3:
            return QBrush(QColor(self.theme.problems.get(p.kind, self.theme.text)))
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{KIND_LABELS.get(p.kind, p.kind)} on {p.path} at {p.time:.4f} s (key {p.index}): {p.detail}"
            )
        return None

    def problem(self, row: int) -> analysis.Problem:
        return self.rows[row]


class KindFilter(QSortFilterProxyModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.kind: str | None = None
        self.setSortRole(Qt.ItemDataRole.UserRole)

    def set_kind(self, kind: str | None) -> None:
        if not hasattr(self, "beginFilterChange"):  # Qt before 6.9
            self.kind = kind
            self.invalidateFilter()
            return
        # Qt 6.9's begin/endFilterChange replace the deprecated invalidateFilter (same effect)
        self.beginFilterChange()
        self.kind = kind
        self.endFilterChange()

    def filterAcceptsRow(self, row, parent):  # noqa: N802
        if self.kind is None:
            return True
        return self.sourceModel().rows[row].kind == self.kind
