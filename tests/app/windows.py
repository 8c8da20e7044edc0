"""One way for GUI tests to open the real main window: settings and autosaves in a test folder,
shown at 1400 x 900 and exposed; closed clean (no unsaved-changes prompt) afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest

from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings


def shown_window(folder: Path, active: bool = False) -> Iterator[MainWindow]:
    """Yield a shown :class:`MainWindow` whose settings live in ``folder``; ``active`` also waits for
    it to take keyboard focus (tests that send key events). Use with ``yield from`` in a fixture."""
    store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))
    w.resize(1400, 900)
    w.show()
    QTest.qWaitForWindowExposed(w)
    if active:
        w.activateWindow()
        QTest.qWaitForWindowActive(w)
    yield w
    w.doc.undo_stack.setClean()
    w.doc._saved_externally_dirty = False
    w.close()
