"""Keyboard shortcuts: one table of every action (:class:`Keymap`), the settings it saves, and the
Help > Keyboard shortcuts page that lists and edits it (:class:`ShortcutsDialog`).

The table is built from the menus themselves (and the window's and the focused panels' own actions),
so it never disagrees with what the keys do. Each entry keeps the action's default shortcuts (as the
code set them); the user's changes are saved in the settings (``shortcuts/<id>``: Qt's portable text,
``"; "`` between several, empty = none; no key = the default) and applied to the actions at once.
A shortcut that another action can see at the same time (both window-wide, or one window-wide, or
focused panels inside one another) is a conflict: Qt fires neither. The editor refuses it unless the
user explicitly takes it over (it is then removed from the other action); conflicts already in the
settings (a hand-edited file) are shown in the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

__all__ = ["Keymap", "KeymapEntry", "shortcut_rows", "ShortcutsDialog", "SETTINGS_GROUP"]

#: Settings group of the user's shortcuts (``shortcuts/<entry id>``).
SETTINGS_GROUP = "shortcuts"
_NATIVE = QKeySequence.SequenceFormat.NativeText
_PORTABLE = QKeySequence.SequenceFormat.PortableText
_FOCUSED = " (in the focused panel)"


def _text(a: QAction) -> str:
    return a.text().replace("&", "")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower().replace("&", "")).strip("_")


def keys_text(seqs, fmt=_NATIVE) -> str:
    """Shortcuts as one line (``"Ctrl+Shift+Z, Ctrl+Y"``)."""
    return ", ".join(s.toString(fmt) for s in seqs if not s.isEmpty())


@dataclass(eq=False)
class KeymapEntry:
    """One action of the table: a stable ``id`` (menu path + label, saved in the settings), the
    action, where it lives, the shortcuts the code gave it, and where it fires (``scope``: None =
    anywhere in the window, else the widgets whose focus it needs)."""

    id: str
    action: QAction
    label: str
    where: str
    default: tuple[QKeySequence, ...]
    scope: tuple[QWidget, ...] | None = field(default=None)

    @property
    def shortcuts(self) -> tuple[QKeySequence, ...]:
        return tuple(s for s in self.action.shortcuts() if not s.isEmpty())

    @property
    def is_default(self) -> bool:
        return [s.toString(_PORTABLE) for s in self.shortcuts] == [
            s.toString(_PORTABLE) for s in self.default
        ]


def _scopes_overlap(a: tuple[QWidget, ...] | None, b: tuple[QWidget, ...] | None) -> bool:
    if a is None or b is None:
        return True
    return any(x is y or x.isAncestorOf(y) or y.isAncestorOf(x) for x in a for y in b)


class Keymap:
    """Every action of ``window`` with its default and current shortcuts (module docstring).

    Build it once the window's menus exist (the ids come from the menu path and the action's label
    at that time; the undo action's label changes later, its id does not); :meth:`apply_saved` then
    puts the user's saved shortcuts on the actions."""

    def __init__(self, window, settings=None):
        self.window = window
        self.settings = settings
        self.entries: list[KeymapEntry] = []
        self._by_action: dict[int, KeymapEntry] = {}
        self._build()

    # ------------------------------------------------------------------ the table
    def _add(self, a: QAction, where: str, scope: tuple[QWidget, ...] | None = None) -> None:
        if id(a) in self._by_action or a.isSeparator() or not _text(a):
            return
        if a.shortcutContext() in (
            Qt.ShortcutContext.WidgetWithChildrenShortcut,
            Qt.ShortcutContext.WidgetShortcut,
        ):
            if scope is None:
                scope = tuple(
                    o for o in a.associatedObjects() if isinstance(o, QWidget) and not isinstance(o, QMenu)
                )
            where += _FOCUSED
        else:
            scope = None
        base = ".".join(_slug(p) for p in where.replace(_FOCUSED, "").split(" > ")) + "." + _slug(_text(a))
        key, n = base, 2
        while any(e.id == key for e in self.entries):
            key, n = f"{base}_{n}", n + 1
        e = KeymapEntry(key, a, _text(a), where, tuple(s for s in a.shortcuts() if not s.isEmpty()), scope)
        self.entries.append(e)
        self._by_action[id(a)] = e

    def _build(self) -> None:
        w = self.window
        skip = {id(m) for m in (getattr(w, "recent_menu", None),) if m is not None}

        def walk(menu: QMenu, where: str) -> None:
            if id(menu) in skip:
                return
            for a in menu.actions():
                if a.menu() is not None:
                    walk(a.menu(), f"{where} > {_text(a)}")
                else:
                    self._add(a, where)

        for top in w.menuBar().actions():
            if top.menu() is not None:
                walk(top.menu(), _text(top))
        for a in w.actions():
            if a.shortcuts():
                self._add(a, "Window")
        # keys the focused panels own (Escape cancels a drag in the graphs, ...)
        for name, panel in (
            ("Graphs", getattr(w, "graphs", None)),
            ("Dope sheet", getattr(w.tools, "dope", None)),
        ):
            if panel is not None:
                for a in panel.actions():
                    if a.shortcuts():
                        self._add(a, name, (panel,))

    def entry(self, key: str | QAction) -> KeymapEntry:
        """The entry of an id or an action (``KeyError`` otherwise)."""
        if isinstance(key, QAction):
            return self._by_action[id(key)]
        for e in self.entries:
            if e.id == key:
                return e
        raise KeyError(key)

    def rows(self) -> list[tuple[str, str, str]]:
        """``(keys, action, where)`` of every entry that has a shortcut (the list page)."""
        return [(keys_text(e.shortcuts), e.label, e.where) for e in self.entries if e.shortcuts]

    # ------------------------------------------------------------------ conflicts
    def conflicts(self, entry: KeymapEntry, seqs=None) -> list[tuple[KeymapEntry, QKeySequence]]:
        """Other entries that hold one of ``seqs`` (default: ``entry``'s own shortcuts) where both
        fire at once (module docstring), with the shared sequence."""
        seqs = entry.shortcuts if seqs is None else tuple(s for s in seqs if not s.isEmpty())
        out = []
        for other in self.entries:
            if other is entry or not _scopes_overlap(entry.scope, other.scope):
                continue
            for s in seqs:
                if any(s == o for o in other.shortcuts):
                    out.append((other, s))
        return out

    def all_conflicts(self) -> dict[str, list[tuple[KeymapEntry, QKeySequence]]]:
        """Entry id -> its conflicts, for entries that have any."""
        out = {}
        for e in self.entries:
            c = self.conflicts(e)
            if c:
                out[e.id] = c
        return out

    # ------------------------------------------------------------------ changes
    def set_shortcuts(self, entry: KeymapEntry, seqs, save: bool = True) -> None:
        """Put ``seqs`` on the action now (tooltip too) and save them (the default: the saved key
        is removed). Conflicts are the caller's to check (:meth:`conflicts`)."""
        seqs = [QKeySequence(s) for s in seqs if not QKeySequence(s).isEmpty()]
        entry.action.setShortcuts(seqs)
        sc = keys_text(seqs)
        entry.action.setToolTip(f"{entry.label} ({sc})" if sc else entry.label)
        if save and self.settings is not None:
            text = "; ".join(s.toString(_PORTABLE) for s in seqs)
            self.settings.set_shortcut(entry.id, None if entry.is_default else text)

    def take_over(self, entry: KeymapEntry, seqs) -> list[KeymapEntry]:
        """Give ``seqs`` to ``entry``, removing them from every conflicting entry; returns those."""
        seqs = [QKeySequence(s) for s in seqs]
        losers = []
        for other, s in self.conflicts(entry, seqs):
            self.set_shortcuts(other, [o for o in other.shortcuts if o != s])
            losers.append(other)
        self.set_shortcuts(entry, seqs)
        return losers

    def reset(self, entry: KeymapEntry) -> None:
        self.set_shortcuts(entry, entry.default)

    def reset_all(self) -> None:
        for e in self.entries:
            self.set_shortcuts(e, e.default)

    def apply_saved(self) -> None:
        """The saved shortcuts onto the actions (unknown ids are left in the settings untouched)."""
        if self.settings is None:
            return
        for e in self.entries:
            text = self.settings.shortcut(e.id)
            if text is None:
                continue
            seqs = [QKeySequence.fromString(p.strip(), _PORTABLE) for p in text.split(";") if p.strip()]
            self.set_shortcuts(e, seqs, save=False)


def shortcut_rows(window) -> list[tuple[str, str, str]]:
    """``(keys, action, where)`` for every action with a shortcut: the window's keymap table."""
    km = getattr(window, "keymap", None) or Keymap(window)
    return km.rows()


class ShortcutsDialog(QDialog):
    """Help > Keyboard shortcuts: the keymap as a table (action, shortcut, default, menu, conflict),
    a filter, and under it the selected action's shortcut: record a new one, clear it, reset it (or
    all) to the default. A recorded shortcut that conflicts is refused unless "Take it over" is
    pressed. Every change is live and saved."""

    COLS = ("Action", "Shortcut", "Default", "Menu", "Conflict")

    def __init__(self, window, keymap: Keymap | None = None):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.keymap = keymap or getattr(window, "keymap", None) or Keymap(window)
        self._pending: tuple[KeymapEntry, list[QKeySequence]] | None = None
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter actions or keys")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.table = QTableWidget(len(self.keymap.entries), len(self.COLS), self)
        self.table.setHorizontalHeaderLabels(list(self.COLS))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.currentCellChanged.connect(lambda *_: self._show_current())

        self.current_label = QLabel("Select an action.", self)
        self.recorder = QKeySequenceEdit(self)
        if hasattr(self.recorder, "setMaximumSequenceLength"):
            self.recorder.setMaximumSequenceLength(1)
        self.recorder.setToolTip("Click, then press the new shortcut")
        self.recorder.editingFinished.connect(self._recorded)
        self.clear_button = QPushButton("Clear", self)
        self.clear_button.setToolTip("No shortcut for this action")
        self.clear_button.clicked.connect(lambda: self._assign([]))
        self.reset_button = QPushButton("Reset to default", self)
        self.reset_button.clicked.connect(self._reset_current)
        self.reset_all_button = QPushButton("Reset all", self)
        self.reset_all_button.clicked.connect(self.reset_all)
        self.conflict_label = QLabel("", self)
        self.conflict_label.setWordWrap(True)
        self.take_over_button = QPushButton("Take it over", self)
        self.take_over_button.setToolTip("Give the shortcut to this action and remove it from the other")
        self.take_over_button.clicked.connect(self.take_over)
        self.take_over_button.setEnabled(False)

        edit_row = QHBoxLayout()
        edit_row.addWidget(QLabel("New shortcut:", self))
        edit_row.addWidget(self.recorder, 1)
        for b in (self.clear_button, self.reset_button, self.reset_all_button):
            edit_row.addWidget(b)
        conflict_row = QHBoxLayout()
        conflict_row.addWidget(self.conflict_label, 1)
        conflict_row.addWidget(self.take_over_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.filter)
        lay.addWidget(self.table)
        lay.addWidget(self.current_label)
        lay.addLayout(edit_row)
        lay.addLayout(conflict_row)
        lay.addWidget(buttons)
        self.resize(860, 680)
        self.refresh()
        self._show_current()

    # ------------------------------------------------------------------ table
    def refresh(self) -> None:
        """Every row from the keymap (after any change: a take-over changes two rows)."""
        conflicts = self.keymap.all_conflicts()
        warn = QColor(255, 200, 120)
        for i, e in enumerate(self.keymap.entries):
            cells = (
                e.label,
                keys_text(e.shortcuts),
                keys_text(e.default),
                e.where,
                "; ".join(f"{s.toString(_NATIVE)}: {o.label}" for o, s in conflicts.get(e.id, [])),
            )
            for j, text in enumerate(cells):
                item = self.table.item(i, j)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(i, j, item)
                item.setText(text)
                item.setToolTip(text)
                item.setData(Qt.ItemDataRole.UserRole, e.id)
                if e.id in conflicts:
                    item.setBackground(warn)
                    item.setForeground(QColor(0, 0, 0))
                else:
                    item.setData(Qt.ItemDataRole.BackgroundRole, None)
                    item.setData(Qt.ItemDataRole.ForegroundRole, None)
            font = self.table.item(i, 1).font()
            font.setBold(not e.is_default)
            self.table.item(i, 1).setFont(font)
        self._apply_filter(self.filter.text())

    def _apply_filter(self, text: str) -> None:
        t = text.strip().lower()
        for i in range(self.table.rowCount()):
            cells = " ".join(self.table.item(i, j).text().lower() for j in range(3))
            self.table.setRowHidden(i, bool(t) and t not in cells)

    def row_of(self, entry_id: str) -> int:
        return next(i for i, e in enumerate(self.keymap.entries) if e.id == entry_id)

    def select(self, entry_id: str) -> None:
        self.table.setCurrentCell(self.row_of(entry_id), 0)

    def current_entry(self) -> KeymapEntry | None:
        row = self.table.currentRow()
        return self.keymap.entries[row] if 0 <= row < len(self.keymap.entries) else None

    def _show_current(self) -> None:
        e = self.current_entry()
        self._set_pending(None)
        on = e is not None
        for w in (self.recorder, self.clear_button, self.reset_button):
            w.setEnabled(on)
        self.recorder.clear()
        if e is None:
            self.current_label.setText("Select an action to change its shortcut.")
            return
        sc = keys_text(e.shortcuts) or "none"
        self.current_label.setText(
            f"<b>{e.label}</b> ({e.where}): {sc}; default {keys_text(e.default) or 'none'}"
        )

    # ------------------------------------------------------------------ edits
    def _set_pending(self, pending) -> None:
        self._pending = pending
        self.take_over_button.setEnabled(pending is not None)
        if pending is None:
            self.conflict_label.setText("")

    def _recorded(self) -> None:
        seq = self.recorder.keySequence()
        if seq.isEmpty():
            return
        self._assign([seq])

    def _assign(self, seqs: list[QKeySequence]) -> bool:
        """Give the current action ``seqs`` unless they conflict (then wait for Take it over)."""
        e = self.current_entry()
        if e is None:
            return False
        clash = self.keymap.conflicts(e, seqs)
        if clash:
            names = "; ".join(f"{s.toString(_NATIVE)} is {o.label} ({o.where})" for o, s in clash)
            self.conflict_label.setText(
                f"<span style='color:#c03000'><b>Conflict:</b> {names}. Not assigned: press "
                f"Take it over to move it to {e.label}.</span>"
            )
            self._pending = (e, list(seqs))
            self.take_over_button.setEnabled(True)
            return False
        self.keymap.set_shortcuts(e, seqs)
        self.refresh()
        self._show_current()
        return True

    def take_over(self) -> None:
        if self._pending is None:
            return
        e, seqs = self._pending
        self.keymap.take_over(e, seqs)
        self.refresh()
        self._show_current()

    def _reset_current(self) -> None:
        e = self.current_entry()
        if e is not None:
            self._assign(list(e.default))

    def reset_all(self) -> None:
        self.keymap.reset_all()
        self.refresh()
        self._show_current()
