"""Cold start (issue 9): the window's first paint does not wait on work it does not show.

The timing itself is measured by ``benchmarks/gui.py`` (cold start -> first painted window); these
tests pin the two causes found with ``python -X importtime`` and cProfile: the recipe ops' scipy
imports (~1.9 s of scipy.signal / scipy.ndimage on a worker thread, holding the GIL during the first
paint) and a second build of the graph strips (~0.27 s) in ``MainWindow.__init__``.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from curveeditor.app.graphs import panel as graphs
from curveeditor.app.window.main_window import WARM_UP_DELAY_MS, MainWindow
from curveeditor.app.window.settings import Settings
from tests.app.rig_clips import biped_clip

pytestmark = pytest.mark.gui


def _window(folder, **view):
    store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    for k, v in view.items():
        store.setValue(f"view/{k}", v)
    return MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))


def test_strips_built_once_and_ops_imported_after_the_first_clip(qapp, qtbot, tmp_path, monkeypatch):
    builds = []
    real = graphs.GraphPanel._build_plots
    monkeypatch.setattr(graphs.GraphPanel, "_build_plots", lambda self: (builds.append(1), real(self)))
    w = _window(tmp_path)
    try:
        assert len(builds) == 1  # the panel's own default strips, not rebuilt by the window
        assert not w.recipe._warmed  # nothing imported behind the first paint
        w.doc.load(biped_clip(10), None)
        qtbot.waitUntil(lambda: w.recipe._warmed, timeout=WARM_UP_DELAY_MS + 3000)
    finally:
        w.close()


def test_saved_view_settings_still_apply(qapp, tmp_path):
    w = _window(tmp_path, overlay=True, quat=True, frames=True)
    try:
        g = w.graphs
        assert g.overlay and g.show_quat and g.time_in_frames
        assert g.quat_plot is not None
        assert "frames" in g.strips[-1].plot.getAxis("bottom").labelText
    finally:
        w.close()
