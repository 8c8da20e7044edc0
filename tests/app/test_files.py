"""Files: recent list, export checks before writing, autosave and crash recovery, drag and drop."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from curveeditor.app.window.files import Autosaver, export_warnings, sample_path
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine import edit as ed

pytestmark = pytest.mark.gui


def _window(folder) -> MainWindow:
    store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))
    w.show()
    return w


def _close(w: MainWindow) -> None:
    w.doc.undo_stack.setClean()
    w.doc._saved_externally_dirty = False
    w.close()


def _load(w, qtbot, path):
    with qtbot.waitSignal(w.files.loaded, timeout=20000):
        w.files.open_path(str(path))


@pytest.fixture(autouse=True)
def no_modal_errors(monkeypatch):
    """A modal error box would block the test run: record it instead."""
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *a, **k: shown.append(a[1:3]))
    yield shown
    assert not shown, shown


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("files")


def test_recent_files_and_drop(qapp, qtbot, folder, tmp_path):
    w = _window(folder)
    try:
        _load(w, qtbot, sample_path())
        assert w.settings.recent_files()[0] == os.path.abspath(sample_path())
        assert w.recent_menu.isEnabled() and w.recent_menu.actions()[0].toolTip() == str(sample_path())
        # dropping a clip file opens it
        copy = tmp_path / ("dropped" + sample_path().suffix)
        copy.write_bytes(sample_path().read_bytes())
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(copy))])
        ev = QDropEvent(
            QPoint(10, 10),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        with qtbot.waitSignal(w.files.loaded, timeout=20000):
            w.dropEvent(ev)
        assert w.doc.path == str(copy)
        assert w.settings.recent_files()[0] == str(copy)
    finally:
        _close(w)


def test_export_checks_shown_before_writing(qapp, qtbot, folder, tmp_path):
    pytest.importorskip("curveeditor.io.anim.writer")
    w = _window(folder)
    try:
        _load(w, qtbot, sample_path())
        quat = [t for t in w.doc.clip.tracks if t.kind == "quaternion"]
        if not quat:
            pytest.skip("sample has no quaternion track")
        out = tmp_path / "checked.anim"
        warnings = export_warnings(w.doc.clip, str(out), "quaternion")
        if not warnings:
            pytest.skip("the writer reports no warnings for the sample")
        seen = []
        assert not w.files.write(str(out), "quaternion", mark_saved=False, confirm=lambda ws: seen.extend(ws))
        assert seen == warnings and not out.exists()  # declined: nothing written
        assert w.files.write(str(out), "quaternion", mark_saved=False, confirm=lambda ws: True)
        assert out.exists() and out.read_text().startswith("%YAML")
        # re-open the export: every rotation is now a quaternion track with the same poses at the keys
        from curveeditor.engine.clip import played
        from curveeditor.engine.rotations import geodesic_angle
        from curveeditor.io import read_clip

        again = read_clip(out)
        assert {t.kind for t in again.tracks} == {"quaternion"}
        for t in w.doc.clip.tracks:
            a = again.track(t.path)
            err = geodesic_angle(played(a, t.times), played(t, t.times))
            assert float(np.max(err)) < 0.01
    finally:
        _close(w)


def test_autosave_and_recovery_round_trip(qapp, qtbot, folder, tmp_path):
    src = tmp_path / ("work" + sample_path().suffix)
    src.write_bytes(sample_path().read_bytes())
    a = _window(folder)
    try:
        _load(a, qtbot, src)
        tr = next(t for t in a.doc.clip.tracks if t.kind == "euler" and t.n_keys > 3)
        a.doc.apply_clip(a.doc.clip.with_track(ed.set_key(tr, 2, channel=0, value=42.0)), "Set value")
        a.doc.select_paths([tr.path])
        a.doc.set_time(0.1)
        assert a.autosaver.autosave()
        meta = json.loads(a.autosaver.json_path.read_text())
        assert meta["path"] == str(src) and meta["selected_paths"] == [tr.path]
        assert not a.autosaver.autosave()  # nothing new since the last autosave
        # simulate a crash: the session now belongs to a process that no longer exists
        dead = 2**22 + 12345
        while True:
            try:
                os.kill(dead, 0)
                dead += 1
            except ProcessLookupError:
                break
        clip_file = a.autosaver.folder / meta["clip_file"]
        new_clip = clip_file.with_name(f"session-{dead}{clip_file.suffix}")
        os.replace(clip_file, new_clip)
        meta.update(pid=dead, clip_file=new_clip.name)
        (a.autosaver.folder / f"session-{dead}.json").write_text(json.dumps(meta))
        a.autosaver.json_path.unlink()
    finally:
        _close(a)
    b = _window(folder)
    try:
        sessions = b.autosaver.orphaned_sessions()
        assert len(sessions) == 1 and sessions[0]["pid"] == dead
        asked = []
        with qtbot.waitSignal(b.files.loaded, timeout=20000):
            assert b.offer_recovery(ask=lambda m: asked.append(m) or True)
        qtbot.wait(10)
        assert asked[0]["path"] == str(src)
        rec = b.doc.clip.track(tr.path)
        assert float(rec.curve.value[2, 0]) == pytest.approx(42.0, abs=1e-4)
        assert b.doc.path == str(src) and b.doc.is_dirty()
        assert b.doc.selected_paths == [tr.path] and b.doc.current_time == pytest.approx(0.1)
        assert b.autosaver.orphaned_sessions() == []  # the recovered session is consumed
        np.testing.assert_allclose(rec.times, tr.times, atol=1e-6)
    finally:
        _close(b)


def test_clean_close_removes_autosave(qapp, qtbot, folder):
    w = _window(folder)
    _load(w, qtbot, sample_path())
    tr = w.doc.clip.tracks[0]
    w.doc.apply_clip(w.doc.clip.with_track(ed.set_key(tr, 0, channel=1, value=1.0)), "Set")
    assert w.autosaver.autosave() and w.autosaver.json_path.exists()
    w.doc.undo_stack.undo()  # back to the saved state: the autosave is dropped
    assert not w.autosaver.json_path.exists()
    _close(w)
    QApplication.processEvents()
    assert not any(Autosaver(w.doc, folder=str(folder / "autosave")).folder.glob(f"session-{os.getpid()}.*"))


def test_slow_load_can_be_cancelled_and_leaves_document(qapp, qtbot, folder, monkeypatch):
    import threading

    from curveeditor.app.window import files

    w = _window(folder)
    try:
        _load(w, qtbot, sample_path())
        before = w.doc.clip
        gate = threading.Event()
        real = files.read_clip_file

        def slow(path):
            gate.wait(5)
            return real(path)

        monkeypatch.setattr(files, "read_clip_file", slow)
        w.files.open_path(str(sample_path()))
        qtbot.waitUntil(lambda: w.files._progress is not None and w.files._progress.isVisible(), timeout=3000)
        with qtbot.waitSignal(w.files.loadFailed, timeout=3000) as blocker:
            from PySide6.QtWidgets import QPushButton

            w.files._progress.findChild(QPushButton).click()  # the dialog's Cancel button
        assert blocker.args == ["cancelled"]
        gate.set()
        qtbot.wait(200)  # the abandoned read finishes in the background and is dropped
        assert w.doc.clip is before and not w.files.is_loading()
    finally:
        _close(w)


def test_theme_follows_system_colour_scheme(qapp, qtbot, folder, monkeypatch):
    """With "Follow system", a change of the system colour scheme restyles the window and plots."""
    from PySide6.QtGui import QGuiApplication

    from curveeditor.app.common.theme import ThemeManager

    hints = QGuiApplication.styleHints()
    w = _window(folder)
    system = {"dark": True}
    try:
        w.set_theme("system")
        # The xcb platform theme under Xvfb cannot switch schemes, so the system answer is simulated
        # and the change signal's handler called the way QStyleHints.colorSchemeChanged would.
        monkeypatch.setattr(ThemeManager, "system_is_dark", staticmethod(lambda: system["dark"]))
        w.themes._on_system_changed(Qt.ColorScheme.Dark)
        assert w.themes.theme.dark and w.graphs.theme.dark
        img = w.graphs.glw.grab().toImage()
        assert img.pixelColor(img.width() // 2, 5).lightness() < 80
        system["dark"] = False
        w.themes._on_system_changed(Qt.ColorScheme.Light)
        assert not w.graphs.theme.dark
        w.set_theme("dark")  # an explicit choice wins over the system
        w.themes._on_system_changed(Qt.ColorScheme.Light)
        assert w.themes.theme.dark
        assert hasattr(hints, "colorSchemeChanged")  # the signal the manager listens to exists
    finally:
        w.set_theme("light")
        _close(w)
