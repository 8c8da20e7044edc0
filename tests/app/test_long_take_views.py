"""What the window does for long takes (issue 26): the 3D trail stays within its point budget on a
long track, and a file's problems are inspected on the loader's thread, beside the read."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest

from curveeditor.app.view3d import gizmo
from curveeditor.app.window.files import sample_path
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine import analysis

pytestmark = pytest.mark.gui


def test_a_long_track_trail_keeps_its_budget_and_passes_through_keys():
    keys = np.arange(72_000) / 120.0  # 10 minutes at 120 fps
    t = gizmo._trail_times(0.0, float(keys[-1]), keys)
    assert t.shape[0] <= gizmo._TRAIL_BUDGET + 2  # was every key: 4 trails x 72,000 points a frame
    assert t[0] == 0.0 and t[-1] == keys[-1]
    assert np.isin(t, keys).all() and np.all(np.diff(t) > 0)
    assert np.diff(t).max() <= 15 / 120.0 + 1e-12  # every 15th key of 72,000
    short = np.arange(200) / 30.0  # a short track: subdivided key intervals, as before
    s = gizmo._trail_times(0.0, float(short[-1]), short)
    assert np.isin(short, s).all() and s.shape[0] > 4 * short.shape[0]


def test_a_files_problems_are_inspected_on_the_loader_thread(qapp, qtbot, tmp_path, monkeypatch):
    seen = []
    real = analysis.find_problems

    def spy(track, *a, **k):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(track, *a, **k)

    monkeypatch.setattr(analysis, "find_problems", spy)
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(tmp_path / "autosave"))
    w.show()
    QTest.qWaitForWindowExposed(w)
    try:
        seen.clear()
        with qtbot.waitSignal(w.files.loaded, timeout=20000):
            w.files.open_path(str(sample_path()))
        qtbot.wait(50)
        tracks = w.doc.clip.tracks
        assert seen and not any(seen)  # every track inspected, none on the window's thread
        expected = {t.path: real(t) for t in tracks if t.n_keys}
        assert {t.path: w.problem_index.problems(t.path) for t in tracks if t.n_keys} == expected
        assert any(expected.values())  # (the sample has problems to show)
    finally:
        w.doc.undo_stack.setClean()
        w.close()
