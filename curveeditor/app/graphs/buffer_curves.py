"""Buffer curves (Maya): a snapshot of the selected tracks, drawn faintly, swapped with one key.

:class:`BufferCurves` keeps ``snapshot`` (track path -> the track as it was when snapshotted).
:meth:`BufferCurves.swap` exchanges the snapshot and the current tracks as one undo step: undoing or
redoing the swap exchanges them again, so the buffer always holds the other version. The
:class:`BufferLayer` draws the snapshot of the drawn tracks behind the curves (thin, translucent).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor

from curveeditor.engine import display

from ..model.undo import ReplaceClipCommand
from .layers import CurveLayer, _channels
from .panel import dense_times

__all__ = ["BufferCurves", "BufferLayer", "SwapBufferCommand"]


class BufferCurves(QObject):
    """The snapshot and the swap (module docstring)."""

    changed = Signal()

    def __init__(self, document, parent: QObject | None = None):
        super().__init__(parent)
        self.doc = document
        self.snapshot: dict = {}
        document.clipChanged.connect(self._on_clip)

    def take_snapshot(self, paths=None) -> int:
        """Snapshot the tracks ``paths`` (default: the selected tracks); returns how many."""
        paths = list(self.doc.selected_paths if paths is None else paths)
        self.snapshot = {p: self.doc.clip.track(p) for p in paths}
        self.changed.emit()
        return len(self.snapshot)

    def clear(self) -> None:
        self.snapshot = {}
        self.changed.emit()

    def swap(self) -> bool:
        """Exchange the snapshot and the current tracks (one undo step)."""
        clip = self.doc.clip
        known = {t.path for t in clip.tracks}
        snap = {p: t for p, t in self.snapshot.items() if p in known}
        if not snap:
            return False
        new = clip.with_tracks(snap.get(t.path, t) for t in clip.tracks)
        self.doc.undo_stack.push(
            SwapBufferCommand(self, clip, new, f"Swap buffer curves ({len(snap)} track(s))")
        )
        return True

    def _exchange(self, before, after) -> None:
        self.snapshot = {p: before.track(p) for p in self.snapshot if p in {t.path for t in before.tracks}}
        self.changed.emit()

    def _on_clip(self) -> None:
        if self.doc.changed_paths is None and not self.doc.undo_stack.count():
            self.snapshot = {}  # a new clip
            self.changed.emit()


class SwapBufferCommand(ReplaceClipCommand):
    """Replace the clip and hand the replaced tracks to the buffer (both directions)."""

    def __init__(self, buffer: BufferCurves, before, after, text: str):
        super().__init__(buffer.doc, before, after, text)
        self.buffer = buffer

    def redo(self) -> None:
        super().redo()
        self.buffer._exchange(self.before, self.after)

    def undo(self) -> None:
        super().undo()
        self.buffer._exchange(self.after, self.before)


class BufferLayer(CurveLayer):
    """The snapshot of the drawn tracks, thin and translucent, behind the curves."""

    def __init__(self, panel, buffer: BufferCurves, parent: QObject | None = None):
        self.buffer = buffer
        super().__init__(panel, parent)
        buffer.changed.connect(self.schedule)

    def draw(self) -> None:
        for path in self.panel.drawn_paths():
            tr = self.buffer.snapshot.get(path)
            if tr is None or tr.n_keys == 0:
                continue
            try:
                if self.doc.clip.track(path) is tr:
                    continue  # identical to the current curve: nothing to show
            except KeyError:
                continue
            s = display.sample_track(tr, dense_times(tr))
            for plot in self.panel.euler_plots:
                for ch in _channels(plot):
                    c = QColor(self.panel.theme.channels[ch])
                    c.setAlpha(80)
                    y = self.panel.to_display(path, s.euler[:, ch], ch)  # the track's Normalize map
                    item = pg.PlotCurveItem(s.times, y, pen=pg.mkPen(c, width=3.0))
                    item.setZValue(2)
                    self.add(plot, item)
