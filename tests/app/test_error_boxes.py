"""No error path may wedge the window (issue 20): every error box of the file, recipe and recovery
paths is left open for a few seconds, as a user reading it would, then answered with the keyboard.

Before issue 20 a failed open left its "Reading..." ``QProgressDialog`` alive (closed, its deletion
deferred past the error box's own event loop) with Qt's 4 s force-show timer still running: 4 s later
the progress box opened on top of the error box, neither answered OK, Cancel or Esc, and the only way
out was to kill the process, losing unsaved work.

Each test: trigger the path with a real error, wait :data:`LEFT_OPEN_MS` with the box open, check that
the box is the only modal window and no progress box is showing, press Esc (or Enter), and check that
the box closed, the window takes input again (an edit and its undo) and the open document is intact.
"""

from __future__ import annotations

import json
import os

import pytest
import shiboken6
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QProgressDialog

from curveeditor.app.window.files import sample_path
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine import edit as ed

pytestmark = pytest.mark.gui

#: How long each error box stays open before it is answered: past Qt's 4 s QProgressDialog
#: force-show timer, which is what re-opened a dead "Reading..." box over the error box.
LEFT_OPEN_MS = 4600

GARBAGE_ANIM = b"%YAML 1.1\n--- !u!74 &7400000\nAnimationClip:\n  m_Name: x\n  m_EulerCurves: [garbage\n"


def _window(folder):
    store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))
    w.resize(1200, 800)
    w.show()
    QTest.qWaitForWindowExposed(w)
    w.activateWindow()
    return w


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    w = _window(tmp_path_factory.mktemp("boxes"))
    yield w
    w.doc.undo_stack.setClean()
    w.doc._saved_externally_dirty = False
    w.close()


@pytest.fixture
def edited(win, qtbot):
    """The sample loaded and one key deleted (unsaved work the error must not cost)."""
    _clean(win)
    with qtbot.waitSignal(win.files.loaded, timeout=20000):
        win.files.open_path(str(sample_path()))
    qtbot.wait(50)
    track = next(t for t in win.doc.clip.tracks if t.n_keys >= 3)
    win.doc.apply_clip(win.doc.clip.with_track(ed.delete_keys(track, [1])), "Delete key")
    assert win.doc.is_dirty()
    yield (win.doc.clip, win.doc.path, win.doc.undo_stack.count())
    _clean(win)


def _clean(win):
    win.doc.undo_stack.setClean()
    win.doc._saved_externally_dirty = False


def _showing(w) -> bool:
    """``w`` exists and is on screen (a static ``QMessageBox.critical`` deletes its box on return)."""
    return w is not None and shiboken6.isValid(w) and w.isVisible()


def _visible_progress():
    return [w for w in QApplication.allWidgets() if isinstance(w, QProgressDialog) and w.isVisible()]


def _modal_dialogs():
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]


class BoxLeftOpen:
    """Answer the error box ``LEFT_OPEN_MS`` after it opens, recording what was on screen then;
    anything still modal 3 s after the answer is force-closed (recorded as a wedge) so a failing
    test ends instead of hanging the suite."""

    def __init__(self, qtbot, key=Qt.Key.Key_Escape, title: str | None = None):
        self.qtbot = qtbot
        self.key = key
        self.title = title
        self.box = None
        self.opened_at_ms = None
        self.seen_progress: list = []
        self.seen_modal = None
        self.answered = False
        self.wedged: list[str] = []
        self._timer = QTimer()
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._poll)
        self._elapsed = 0
        self._timer.start()

    def _poll(self):
        self._elapsed += 50
        if self.box is None:
            for w in _modal_dialogs():
                if isinstance(w, QMessageBox) and (self.title is None or w.windowTitle() == self.title):
                    self.box = w
                    self.opened_at_ms = self._elapsed
                    self.title = w.windowTitle()
                    self.text = w.text()
            return
        if not self.answered and self._elapsed - self.opened_at_ms >= LEFT_OPEN_MS:
            self.seen_progress = [p.labelText() for p in _visible_progress()]
            self.seen_modal = QApplication.activeModalWidget()
            target = self.seen_modal or self.box
            QTest.keyClick(target, self.key)
            self.answered = True
            self.answered_at_ms = self._elapsed
            return
        if self.answered and not _showing(self.box):
            self._timer.stop()  # answered and gone: done
            return
        if self.answered and self._elapsed - self.answered_at_ms >= 3000:
            self._timer.stop()
            for w in _modal_dialogs():  # the box is still up: a wedge; record it and get out
                self.wedged.append(f"{type(w).__name__} {w.windowTitle()!r}")
                w.blockSignals(True)
                w.done(0)
                w.hide()

    def wait(self, timeout_ms: int = 20000):
        """Until the box was answered and has closed (or the wedge was broken)."""
        self.qtbot.waitUntil(
            lambda: self.answered and (not _showing(self.box) or self.wedged), timeout=timeout_ms
        )
        self.qtbot.wait(100)
        self._timer.stop()

    def assert_answered(self):
        assert self.box is not None, "no error box was shown"
        assert not self.seen_progress, f"a progress box showed over the error box: {self.seen_progress}"
        assert self.seen_modal is self.box, f"the active modal window was {self.seen_modal!r}, not the box"
        assert not self.wedged, f"the window was wedged: {self.wedged}"


def _window_responds(win, qtbot):
    """An edit and its undo go through: nothing modal is left in the way."""
    assert QApplication.activeModalWidget() is None
    win.activateWindow()
    QTest.qWaitForWindowActive(win)
    n = win.doc.undo_stack.count()
    track = next(t for t in win.doc.clip.tracks if t.n_keys >= 3)
    win.doc.select_paths([track.path])
    win.doc.select_keys({track.path: {0}})
    win.graphs.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_Delete)
    assert win.doc.undo_stack.count() == n + 1
    QTest.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert win.doc.undo_stack.index() == n


def _garbage(tmp_path, name="bad.anim", data=GARBAGE_ANIM):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _intact(win, state):
    clip, path, count = state
    assert win.doc.clip is clip and win.doc.path == path and win.doc.undo_stack.count() == count
    assert win.doc.is_dirty()


# ------------------------------------------------------------------ opening
def test_open_garbage_anim_box_left_open(win, qtbot, tmp_path, edited):
    bad = _garbage(tmp_path)
    box = BoxLeftOpen(qtbot, title="Cannot open clip")
    win.files.open_path(str(bad))
    box.wait()
    box.assert_answered()
    assert str(bad) in box.text or "could not be opened" in box.text
    _intact(win, edited)
    _window_responds(win, qtbot)


def test_open_dialog_then_garbage_box_left_open(win, qtbot, tmp_path, edited, monkeypatch):
    """File > Open (the dialog's answer is the bad file)."""
    from PySide6.QtWidgets import QFileDialog

    bad = _garbage(tmp_path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    _clean(win)  # (no unsaved-changes prompt in the way)
    box = BoxLeftOpen(qtbot, key=Qt.Key.Key_Return, title="Cannot open clip")
    win.act_open.trigger()
    box.wait()
    box.assert_answered()
    _window_responds(win, qtbot)


def test_recent_file_gone_box_left_open(win, qtbot, tmp_path, edited):
    gone = tmp_path / "gone.anim"
    win.settings.add_recent(str(gone))
    win.files.recentChanged.emit()
    _clean(win)
    box = BoxLeftOpen(qtbot, title="Cannot open clip")
    win.open_file(str(gone))
    box.wait()
    box.assert_answered()
    assert str(gone) not in win.settings.recent_files()
    _window_responds(win, qtbot)


def test_drop_of_a_bad_file_box_left_open(win, qtbot, tmp_path, edited):
    """A drop returns at once (a modal box inside dropEvent blocks the drag source on X11); the
    error box opens after it."""
    bad = _garbage(tmp_path, "dropped.bvh", b"HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    _clean(win)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(bad))])
    ev = QDropEvent(
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    box = BoxLeftOpen(qtbot, title="Cannot open clip")
    win.dropEvent(ev)
    assert box.box is None and not _modal_dialogs()  # the drop handler returned without a dialog
    box.wait()
    box.assert_answered()
    _window_responds(win, qtbot)


def test_reopening_a_file_that_went_bad_box_left_open(win, qtbot, tmp_path):
    """Reload: the open file is opened again after it was damaged on disk."""
    good = tmp_path / "clip.anim"
    good.write_bytes(sample_path().read_bytes())
    _clean(win)
    with qtbot.waitSignal(win.files.loaded, timeout=20000):
        win.files.open_path(str(good))
    clip = win.doc.clip
    good.write_bytes(GARBAGE_ANIM)
    box = BoxLeftOpen(qtbot, title="Cannot open clip")
    win.open_file(str(good))
    box.wait()
    box.assert_answered()
    assert win.doc.clip is clip
    _window_responds(win, qtbot)


def test_missing_file_on_the_command_line_box_left_open(qapp, qtbot, tmp_path):
    """Start-up with a path that does not exist: the error box, then the window works (a fresh
    window, as ``main`` builds it: ``open_initial`` from the event loop after show)."""
    w = _window(tmp_path)
    try:
        box = BoxLeftOpen(qtbot, title="Cannot open clip")
        QTimer.singleShot(0, lambda: w.open_initial(str(tmp_path / "missing.anim")))
        box.wait()
        box.assert_answered()
        assert "missing.anim" in box.text
        qtbot.waitUntil(lambda: not w.files.is_loading(), timeout=20000)
        # the window takes input: File > Open of another clip works, then an edit and its undo
        with qtbot.waitSignal(w.files.loaded, timeout=20000):
            w.files.open_path(str(sample_path()))
        _window_responds(w, qtbot)
    finally:
        _clean(w)
        w.close()


# ------------------------------------------------------------------ writing
def test_save_failure_box_left_open(win, qtbot, tmp_path, edited):
    target = tmp_path / "no-such-folder" / "out.anim"
    box = BoxLeftOpen(qtbot, title="Cannot write clip")
    QTimer.singleShot(0, lambda: win.files.write(str(target), None, mark_saved=True))
    box.wait()
    box.assert_answered()
    assert not target.exists()
    _intact(win, edited)
    _window_responds(win, qtbot)


def test_export_failure_box_left_open(win, qtbot, tmp_path, edited, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    if os.access(folder, os.W_OK):  # root writes anyway: use a path under a file instead
        target = tmp_path / "a-file"
        target.write_text("x")
        out = target / "out.csv"
    else:
        out = folder / "out.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    box = BoxLeftOpen(qtbot, title="Cannot write clip")
    QTimer.singleShot(0, lambda: win.files.export_dialog("csv"))
    box.wait()
    box.assert_answered()
    os.chmod(folder, 0o700)
    _intact(win, edited)
    _window_responds(win, qtbot)


# ------------------------------------------------------------------ recipes
def test_recipe_load_error_box_left_open(win, qtbot, tmp_path, edited, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "steps": [{"op": "smooth", "sigmaa": 1}]}))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    box = BoxLeftOpen(qtbot, title="Load recipe")
    QTimer.singleShot(0, win.recipe._load_dialog)
    box.wait()
    box.assert_answered()
    assert "sigmaa" in box.text
    _intact(win, edited)
    _window_responds(win, qtbot)


# ------------------------------------------------------------------ autosave recovery
def test_recovery_of_a_damaged_autosave_box_left_open(qapp, qtbot, tmp_path):
    """A crashed session's autosave that no longer reads: the error box, the autosave kept (not lost:
    its path in the box), and the window opens the sample and works."""
    folder = tmp_path / "autosave"
    folder.mkdir()
    (folder / "session-999999.anim").write_bytes(GARBAGE_ANIM)
    (folder / "session-999999.json").write_text(
        json.dumps({"version": 1, "path": None, "pid": 999999, "clip_file": "session-999999.anim"})
    )
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder))
    w.resize(1200, 800)
    w.show()
    QTest.qWaitForWindowExposed(w)
    try:
        # the recovery question (Return = Recover), then the error box left open
        # (both watchers from the start: the error box may open inside the first one's wait)
        ask = BoxLeftOpen(qtbot, key=Qt.Key.Key_Return, title="Recover unsaved work?")
        box = BoxLeftOpen(qtbot, title="Cannot open clip")
        QTimer.singleShot(0, lambda: w.open_initial(None))
        ask.wait()
        assert ask.box is not None and not ask.wedged
        box.wait()
        box.assert_answered()
        assert (folder / "session-999999.anim").exists()  # the autosave is not deleted
        qtbot.waitUntil(lambda: w.doc.clip is not None and len(w.doc.clip.tracks) > 0, timeout=20000)
        _window_responds(w, qtbot)
    finally:
        _clean(w)
        w.close()
