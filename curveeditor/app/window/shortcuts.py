"""Help > Keyboard shortcuts: every action with a shortcut, by the menu it lives in.

The page is built from the menus themselves (and the window's other actions), so it never disagrees
with what the keys do; actions that only work while the graphs have the focus say so.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

__all__ = ["shortcut_rows", "ShortcutsDialog"]


def _text(a) -> str:
    return a.text().replace("&", "")


def shortcut_rows(window) -> list[tuple[str, str, str]]:
    """``(keys, action, where)`` for every action of the window's menus (recursively) and the window's
    own actions that have a shortcut, one row per action."""
    rows: list[tuple[str, str, str]] = []
    seen = set()

    def add(a, where: str) -> None:
        if id(a) in seen:
            return
        keys = ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts())
        if not keys:
            return
        seen.add(id(a))
        if a.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut:
            where += " (in the focused panel)"
        rows.append((keys, _text(a), where))

    def walk(menu, where: str) -> None:
        for a in menu.actions():
            if a.menu() is not None:
                walk(a.menu(), f"{where} > {_text(a)}")
            elif not a.isSeparator():
                add(a, where)

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu(), _text(top))
    for a in window.actions():
        add(a, "Window")
    return rows


class ShortcutsDialog(QDialog):
    """A sortable table of :func:`shortcut_rows`."""

    def __init__(self, window):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 3, self)
        self.table.setHorizontalHeaderLabels(["Keys", "Action", "Menu"])
        for i, row in enumerate(rows):
            for j, text in enumerate(row):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(buttons)
        self.resize(720, 640)
