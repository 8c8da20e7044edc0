"""What keeps the editor responsive: secondary views coalesce their work during a key drag, the 3D
view repaints only when what it shows moved, recipe previews reuse the worker's diffs and update the
preview curves in place, and every panel follows the theme (3D background included)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from curveeditor.app.common.theme import DARK, LIGHT
from curveeditor.app.window.files import sample_path
from curveeditor.engine import edit as ed
from curveeditor.engine.diff import diff_tracks
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("resp"))


@pytest.fixture
def sample(win, qtbot):
    win.doc.undo_stack.setClean()
    with qtbot.waitSignal(win.files.loaded, timeout=20000):
        win.files.open_path(str(sample_path()))
    win.doc.select_paths(["Character"])
    qtbot.waitUntil(lambda: win.diff.wait(50), timeout=5000)
    qtbot.wait(20)
    return win.doc.clip.track("Character")


def _mouse(widget, etype, pos: QPoint, button, buttons):
    ev = QMouseEvent(
        etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, ev)


def test_drag_recomputes_the_diff_once_after_the_drag(win, qtbot, sample):
    tr = sample
    i = 40
    win.doc.select_keys({tr.path: {i}})
    plot = win.graphs.euler_plots[0]
    t0, v0 = float(tr.times[i]), float(tr.curve.value[i, 0])
    plot.setXRange(t0 - 0.5, t0 + 0.5, padding=0)
    qtbot.wait(20)
    vb = plot.getViewBox()
    start = win.graphs.glw.mapFromScene(vb.mapViewToScene(QPointF(t0, v0)))
    vp = win.graphs.glw.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    computed, trails = win.diff.computed, win.gizmo.trail_updates
    during: list[tuple[bool, int]] = []

    def record():
        during.append((win.doc.in_live_edit(), win.diff.computed))

    win.doc.clipChanged.connect(record)
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    t_start = time.perf_counter()
    for k in range(1, 9):
        qtbot.wait(12)  # pyqtgraph drops mouse moves closer than 10 ms apart
        _mouse(vp, QEvent.Type.MouseMove, start + QPoint(0, -4 * k), none, left)
    elapsed = time.perf_counter() - t_start
    live = [c for in_live, c in during if in_live]
    assert len(live) >= 4, "the drag must have produced live updates"
    assert all(c == computed for c in live), "no diff computed per mouse move"
    # trails throttled (one update per 250 ms) mid-drag: 8 moves, at most one more per 250 ms the
    # drag lasted (a loaded 2-core machine stretches the drag past 250 ms)
    assert win.gizmo.trail_updates - trails <= 1 + int(elapsed / 0.25)
    assert win.gizmo.trail_updates - trails < len(live)
    _mouse(vp, QEvent.Type.MouseButtonRelease, start + QPoint(0, -32), left, none)
    assert win.diff.computed == computed + 1  # once, for the final clip
    assert win.diff.wait(5000)
    qtbot.wait(10)
    after = win.doc.clip.track(tr.path)
    assert after.curve.value[i, 0] > v0
    shown = {d.path: d for d in win.diff.diffs}[tr.path]
    expected = diff_tracks(win.doc.original.track(tr.path), after)
    assert shown.max_error == pytest.approx(expected.max_error, abs=1e-9)
    assert win.gizmo.trail_updates > trails  # the trails show the final clip
    win.doc.clipChanged.disconnect(record)
    win.doc.undo_stack.undo()


def test_gizmo_repaints_only_when_the_tripod_moves(win, qtbot, sample, monkeypatch):
    tr = sample
    gizmo = win.gizmo
    win.doc.set_time(float(tr.times[10]))
    qtbot.wait(10)
    updates = []
    monkeypatch.setattr(gizmo.view, "update", lambda *a: updates.append(1))
    rendered = []

    def on_rendered():
        rendered.append(1)

    gizmo.rendered.connect(on_rendered)
    win.doc.begin_live_edit()
    try:
        # A key far from the current time: the pose at the cursor is the same, nothing to repaint.
        far = win.doc.clip.with_track(ed.move_keys(tr, [100], 0.0, 0, 25.0))
        win.doc.update_live(far, [tr.path])
        assert rendered == [] and updates == []
        rot = gizmo.tripod_rotation()
        # The key at the cursor: the tripod turns and the view repaints.
        near = win.doc.clip.with_track(ed.move_keys(win.doc.clip.track(tr.path), [10], 0.0, 0, 25.0))
        win.doc.update_live(near, [tr.path])
        assert len(rendered) == 1 and updates
        assert not np.allclose(gizmo.tripod_rotation(), rot)
    finally:
        win.doc.cancel_live_edit()
        gizmo.rendered.disconnect(on_rendered)


def test_recipe_preview_reuses_worker_diffs_and_updates_curves_in_place(win, qtbot, sample):
    panel = win.recipe
    graphs = win.graphs
    with qtbot.waitSignal(panel.resultReady, timeout=20000) as blocker:
        panel.add_step("smooth", {"method": "gaussian", "sigma": 0.05})
    result = blocker.args[0]
    qtbot.wait(10)
    shown = {d.path: d for d in win.diff.diffs}
    assert shown["Character"] is {d.path: d for d in result.diffs}["Character"]  # not recomputed
    items = graphs.items["Character"].preview
    assert items
    first = [it for it, _w, _c in items]
    redraws = graphs.preview_redraws
    with qtbot.waitSignal(panel.resultReady, timeout=20000) as blocker:
        panel.set_param(0, "sigma", 0.12)
    qtbot.wait(10)
    assert graphs.preview_redraws == redraws + 1  # one track affected, one redraw
    now = graphs.items["Character"].preview
    assert [it for it, _w, _c in now] == first  # same items, new data
    y = now[0][0].yData  # the data set on the item (getData() is the displayed, downsampled set)
    expected = graphs.cache.get(blocker.args[0].clip.track("Character")).samples.euler[:, 0]
    np.testing.assert_allclose(y, expected)
    assert {d.path: d for d in win.diff.diffs}["Character"] is blocker.args[0].diffs[0]
    panel.discard()
    while panel.steps:
        panel.list.setCurrentRow(0)
        panel.remove_current()
    panel.discard()


def _near(rgb, color: QColor, tol=3) -> bool:
    return all(
        abs(a - b) <= tol for a, b in zip(rgb, (color.red(), color.green(), color.blue()), strict=True)
    )


def test_theme_switch_restyles_3d_diff_recipe_and_compare(win, qtbot, sample):
    win.show_compare()
    try:
        for name, theme in (("dark", DARK), ("light", LIGHT), ("dark", DARK)):
            win.set_theme(name)
            qtbot.wait(20)
            bg = win.gizmo.background_color()
            img = win.gizmo.render_to_array()
            assert img.size and tuple(int(c) for c in img[2, 2, :3]) == pytest.approx(
                bg, abs=8
            )  # 16-bit Xvfb
            assert (sum(bg) / 3 < 80) == theme.dark
            assert win.diff.plot.backgroundBrush().color().name() == theme.plot_bg
            assert win.diff.cursor.pen.color().name() == QColor(theme.cursor).name()
            cmp = win._compare
            assert cmp.euler_plot.backgroundBrush().color().name() == theme.plot_bg
            assert cmp.error_plot.backgroundBrush().color().name() == theme.plot_bg
            assert cmp.cursors[0].pen.color().name() == QColor(theme.cursor).name()
            win.recipe._set_status("bad value", error=True)
            assert ("#ff6b6b" if theme.dark else "#c0392b") in win.recipe.status_label.styleSheet()
        # the light and dark 3D backgrounds really differ on screen
        win.set_theme("light")
        qtbot.wait(20)
        light = win.gizmo.render_to_array()[2, 2, :3].astype(int)
        assert _near(light, QColor(236, 238, 242))
    finally:
        win._compare.close()
        win.recipe._set_status("")
        win.set_theme("light")


def test_mouse_orbits_and_home_resets_the_native_3d_view(win, qtbot, sample):
    view = win.gizmo.view  # a QOpenGLWindow: mouse and keys arrive as QWindow events
    win.gizmo.reset_view()
    reset = dict(view.cameraParams())
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QTest.mousePress(view, left, none, QPoint(60, 60))
    for k in range(1, 6):
        QTest.mouseMove(view, QPoint(60 + 8 * k, 60 + 2 * k))
    QTest.mouseRelease(view, left, none, QPoint(100, 70))
    assert view.cameraParams()["azimuth"] != pytest.approx(reset["azimuth"])
    QTest.keyClick(view, Qt.Key.Key_Home)
    assert view.cameraParams()["azimuth"] == pytest.approx(reset["azimuth"])
    assert view.cameraParams()["elevation"] == pytest.approx(reset["elevation"])
