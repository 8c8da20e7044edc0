"""The graphs' track legend, beside the plots instead of over them (issue 22: with 31 tracks the
in-plot legend hid a quarter of the X graph).

:class:`SideLegend` is a narrow column right of the plots: a fold button (the column shrinks to the
button; the state is saved by the main window, ``view/legend_folded``) over a list of the drawn
tracks, one row each with its colour swatch(es) and bone name (elided on the left, as the track
tree; the full path as tooltip). Double-clicking a row solos that track's curves
(``GraphPanel.solo``). The plots keep their whole area whatever the number of tracks.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QToolButton, QVBoxLayout, QWidget

__all__ = ["SideLegend", "LEGEND_WIDTH"]

LEGEND_WIDTH = 170  # px, the unfolded column


def _swatch(colours: tuple[str, ...], h: int = 10) -> QIcon:
    w = h * len(colours) + (len(colours) - 1)
    pm = QPixmap(w, h)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    for i, c in enumerate(colours):
        p.fillRect(i * (h + 1), 0, h, h, QColor(c))
    p.end()
    return QIcon(pm)


class SideLegend(QWidget):
    """Fold button + list of ``(label, colours, path)`` entries (module docstring)."""

    soloRequested = Signal(str)  # track path (double-click)
    foldChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None, solo=None):
        """``solo``: the panel's :class:`~.solo.CurveSolo` (a double-clicked track's curves go solo)."""
        super().__init__(parent)
        if solo is not None:
            self.soloRequested.connect(lambda p: solo.set({(p, ch) for ch in range(3)}))
        self.entries: list[tuple[str, tuple[str, ...], str]] = []
        self.folded = False
        self.button = QToolButton()
        self.button.setAutoRaise(True)
        self.button.clicked.connect(lambda: self.set_folded(not self.folded))
        self.list = QListWidget()
        self.list.setTextElideMode(Qt.TextElideMode.ElideLeft)  # the end tells bones apart
        self.list.setUniformItemSizes(True)
        self.list.setIconSize(QSize(32, 10))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemDoubleClicked.connect(
            lambda it: self.soloRequested.emit(it.data(Qt.ItemDataRole.UserRole))
        )
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.list, 1)
        self._apply_fold()
        self.setVisible(False)

    def set_entries(self, entries) -> None:
        """``entries``: ``(label, (colour, ...), path)`` per drawn track; fewer than two: hidden."""
        entries = list(entries)
        if entries == self.entries and self.isHidden() == (len(entries) < 2):
            return
        self.entries = entries
        self.list.clear()
        for label, colours, path in entries:
            it = QListWidgetItem(_swatch(colours), label)
            it.setToolTip(f"{path}\ndouble-click: solo its curves")
            it.setData(Qt.ItemDataRole.UserRole, path)
            self.list.addItem(it)
        self.button.setText("◂" if self.folded else f"▸ {len(entries)} tracks")
        self.setVisible(len(entries) > 1)

    def set_folded(self, on: bool) -> None:
        on = bool(on)
        if on != self.folded:
            self.folded = on
            self._apply_fold()
            self.foldChanged.emit(on)

    def _apply_fold(self) -> None:
        self.list.setVisible(not self.folded)
        self.button.setText("◂" if self.folded else f"▸ {len(self.entries)} tracks")
        self.button.setToolTip("Show the track legend" if self.folded else "Fold the legend away")
        self.setFixedWidth(self.button.sizeHint().width() + 2 if self.folded else LEGEND_WIDTH)

    def text_lines(self) -> list[str]:
        """One line per entry, swatches as ``■`` (one per colour) then the label."""
        if self.folded or self.isHidden():
            return []
        return [f"{'■' * len(c)} {label}" for label, c, _p in self.entries]

    def set_theme(self, bg: str, fg: str) -> None:
        self.list.setStyleSheet(
            f"QListWidget {{ background: {bg}; color: {fg}; border: none; font-size: 8pt; }}"
        )
