"""Key manipulators in the real window with real key and mouse events: S-scale in time and value,
arrow nudges, jump to keys, playback range looping, pre/post infinity menus (model, drawing, written
.anim, undo) and a recipe run on a time range."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from curveeditor.engine.clip import Clip, RotationTrack, played
from curveeditor.engine.curves import evaluate
from curveeditor.engine.recipe import Recipe
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.tangents import make_curve
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui
RATE = 30.0


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("win"), active=True)


def _clip():
    t = np.arange(0, 41, 10) / RATE  # keys at frames 0, 10, 20, 30, 40
    v = np.array([[0.0, 5, 0], [10, 5, 0], [20, 5, 0], [40, 5, 0], [30, 5, 0]])
    rng = np.random.default_rng(1)
    dense_t = np.arange(61) / RATE
    other = RotationTrack(
        "Root/Other", "euler", make_curve(dense_t, rng.normal(0, 10, (61, 3)).cumsum(axis=0))
    )
    return Clip("manip", RATE, (RotationTrack("Root", "euler", make_curve(t, v)), other))


@pytest.fixture
def loaded(win, qtbot):
    win.doc.undo_stack.setClean()
    win.doc.load(_clip(), None)
    win.doc.select_paths(["Root"])
    win.graphs.set_layout(overlay=False)
    qtbot.wait(30)
    return win


def _mouse(widget, etype, pos: QPoint, button, buttons):
    ev = QMouseEvent(
        etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, ev)


def _px(win, plot, t, v) -> QPoint:
    return win.graphs.glw.mapFromScene(plot.getViewBox().mapViewToScene(QPointF(t, v)))


def test_s_scales_selected_keys_in_time_and_value_about_their_centre(loaded, qtbot):
    win = loaded
    doc, g = win.doc, win.graphs
    plot = g.euler_plots[0]  # channel X
    plot.setXRange(-0.2, 1.6, padding=0)
    plot.setYRange(-20, 60, padding=0)
    qtbot.wait(20)
    doc.select_keys({"Root": {1, 2, 3}})  # t 10/20/30 f, X 10/20/40: pivot (20 f, 25 deg)
    pt, pv = 20 / RATE, 25.0
    vp = g.glw.viewport()
    start = _px(win, plot, 30 / RATE, 40.0)
    g.glw.setFocus()
    none, left = Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)  # the mouse is over the key
    QTest.keyClick(g.glw, Qt.Key.Key_S)
    assert win.tools.manip.in_modal()
    target = _px(win, plot, pt + 1.5 * (30 / RATE - pt), pv + 0.5 * (40.0 - pv))  # time x1.5, value x0.5
    for k in (0.3, 0.7, 1.0):
        _mouse(vp, QEvent.Type.MouseMove, start + (target - start) * k, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, target, left, left)
    _mouse(vp, QEvent.Type.MouseButtonRelease, target, left, none)
    assert not win.tools.manip.in_modal() and doc.undo_stack.count() == 1
    tr = doc.clip.track("Root")
    np.testing.assert_allclose(tr.times * RATE, [0, 5, 20, 35, 40], atol=1e-9)  # snapped to frames
    np.testing.assert_allclose(tr.curve.value[:, 0], [0, 17.5, 22.5, 32.5, 30], atol=0.6)
    np.testing.assert_allclose(tr.curve.value[:, 1], 5.0)  # other channels untouched
    doc.undo_stack.undo()
    np.testing.assert_allclose(doc.clip.track("Root").times * RATE, [0, 10, 20, 30, 40])
    # Escape cancels: nothing changes, no undo step.
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)
    QTest.keyClick(g.glw, Qt.Key.Key_S)
    _mouse(vp, QEvent.Type.MouseMove, target, none, none)
    QTest.keyClick(vp, Qt.Key.Key_Escape)
    assert not win.tools.manip.in_modal()
    np.testing.assert_allclose(doc.clip.track("Root").times * RATE, [0, 10, 20, 30, 40])
    assert doc.undo_stack.index() == 0


def test_arrows_nudge_a_frame_and_a_value_step_and_ctrl_arrows_jump_to_keys(loaded, qtbot):
    win = loaded
    doc, g = win.doc, win.graphs
    doc.select_keys({("Root", 2): {2}})  # key 2 selected on its Z curve only
    vp = g.glw.viewport()
    plot = g.euler_plots[0]  # the mouse over X: Up/Down still act on what is selected (Z)
    _mouse(
        vp, QEvent.Type.MouseMove, _px(win, plot, 0.5, 0.0), Qt.MouseButton.NoButton, Qt.MouseButton.NoButton
    )
    g.glw.setFocus()
    QTest.keyClick(g.glw, Qt.Key.Key_Right)
    QTest.keyClick(g.glw, Qt.Key.Key_Right)
    QTest.keyClick(g.glw, Qt.Key.Key_Up)
    tr = doc.clip.track("Root")
    assert tr.times[2] * RATE == pytest.approx(22)
    assert tr.curve.value[2, 2] == pytest.approx(1.0) and tr.curve.value[2, 0] == pytest.approx(20.0)
    assert doc.undo_stack.count() == 3
    # issue 20: a key shown selected on X, Y and Z gets the step on all three
    before = doc.clip.track("Root").curve.value.copy()
    doc.select_keys({"Root": {2}})
    g.glw.setFocus()
    QTest.keyClick(g.glw, Qt.Key.Key_Up)
    d = doc.clip.track("Root").curve.value - before
    np.testing.assert_allclose(d[2], [1.0, 1.0, 1.0], atol=1e-9)
    assert not np.any(np.delete(d, 2, axis=0))
    doc.undo_stack.undo()
    QTest.keyClick(g.glw, Qt.Key.Key_Left)
    assert doc.clip.track("Root").times[2] * RATE == pytest.approx(21)
    doc.set_time(0.0)
    g.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert doc.current_time == pytest.approx(10 / RATE)
    QTest.keyClick(win, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert doc.current_time == pytest.approx(21 / RATE)
    QTest.keyClick(win, Qt.Key.Key_Left, Qt.KeyboardModifier.ControlModifier)
    assert doc.current_time == pytest.approx(10 / RATE)


def test_playback_range_in_out_and_loop_inside(loaded, qtbot):
    win = loaded
    doc = win.doc
    win.graphs.glw.setFocus()  # (in a text field, I types an I)
    doc.set_time(10 / RATE)
    QTest.keyClick(win, Qt.Key.Key_I)
    doc.set_time(20 / RATE)
    QTest.keyClick(win, Qt.Key.Key_I, Qt.KeyboardModifier.ShiftModifier)
    assert win.tools.playback.play_range == pytest.approx((10 / RATE, 20 / RATE))
    assert win.timeline.bounds() == pytest.approx((10 / RATE, 20 / RATE))
    seen = []
    doc.timeChanged.connect(seen.append)
    win.timeline.act_loop.setChecked(True)
    win.timeline.set_playing(True)
    qtbot.wait(900)  # 0.9 s of playback inside a 0.33 s range: it loops
    win.timeline.set_playing(False)
    doc.timeChanged.disconnect(seen.append)
    assert len(seen) > 10
    assert min(seen) >= 10 / RATE - 1e-9 and max(seen) <= 20 / RATE + 1e-9
    assert any(b < a for a, b in zip(seen, seen[1:], strict=False))  # wrapped back at least once
    assert any(
        isinstance(it, __import__("pyqtgraph").LinearRegionItem) for _p, it in win.tools.range_layer.items
    )
    QTest.keyClick(win, Qt.Key.Key_I, Qt.KeyboardModifier.AltModifier)
    assert win.tools.playback.play_range is None


def test_post_infinity_menu_sets_loop_draws_it_and_writes_it(loaded, qtbot, tmp_path):
    win = loaded
    doc = win.doc
    loop = next(a for a in win.tools.infinity_actions["post"] if a.text() == "Loop")
    assert loop in win.key_menu.findChildren(type(loop)) or any(
        loop in m.actions() for m in win.key_menu.findChildren(type(win.key_menu))
    )
    win.graphs.plots[0].setXRange(-0.5, 3.0, padding=0)
    loop.trigger()
    qtbot.wait(30)
    c = doc.clip.track("Root").curve
    assert c.post_infinity == 1 and c.pre_infinity == 2 and doc.undo_stack.count() == 1
    assert loop.isChecked()
    # The graphs draw the loop past the last key: the drawn X values equal what Unity plays there.
    layer = win.tools.infinity_layer
    qtbot.waitUntil(lambda: bool(layer.items), timeout=2000)
    after = [it for p, it in layer.items if p is win.graphs.euler_plots[0] and it.xData[0] >= c.end - 1e-9]
    assert after
    x, y = after[0].xData, after[0].yData
    np.testing.assert_allclose(y, evaluate(c, x)[:, 0], atol=1e-9)
    assert np.ptp(y) > 30  # it repeats the motion, not a flat line
    from curveeditor.io import read_clip, write_clip

    out = tmp_path / "loop.anim"
    write_clip(doc.clip, out)
    assert "m_PostInfinity: 1" in out.read_text()
    assert read_clip(out).track("Root").curve.post_infinity == 1
    doc.undo_stack.undo()
    assert doc.clip.track("Root").curve.post_infinity == 2


def test_recipe_on_the_selected_keys_span_blends_in_and_out(loaded, qtbot):
    win = loaded
    doc = win.doc
    doc.select_paths(["Root/Other"])
    doc.select_keys({"Root/Other": set(range(20, 41))})  # 0.667 .. 1.333 s
    win.recipe.add_step("smooth", {"method": "gaussian", "sigma": 0.1})
    before = doc.clip.track("Root/Other")
    QTest.keyClick(win, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.wait(30)
    after = doc.clip.track("Root/Other")
    assert after is not before and doc.undo_stack.undoText().startswith("Recipe on 0.667..1.333 s")
    grid = np.linspace(0, 2, 2001)
    err = geodesic_angle(played(after, grid), played(before, grid))
    assert err[(grid < 20 / RATE) | (grid > 40 / RATE)].max() < 1e-6
    assert err[(grid > 0.9) & (grid < 1.1)].max() > 0.5
    for edge, d in ((20 / RATE, 1e-4), (40 / RATE, -1e-4)):
        assert geodesic_angle(played(after, [edge + d]), played(before, [edge + d]))[0] < 0.01
    win.recipe.set_recipe(Recipe.of())  # no live preview recomputed by the next tests


def test_help_keyboard_shortcuts_lists_the_menus_keys(loaded, qtbot):
    from curveeditor.app.window.shortcuts import shortcut_rows

    rows = {(k, a): w for k, a, w in shortcut_rows(loaded)}
    assert rows[("S", "Scale keys (time and value)")].startswith("Key")
    assert "focused panel" in rows[("Left", "Nudge keys one frame earlier")]
    assert ("Ctrl+Right", "Jump to next key") in rows and ("B", "Swap buffer curves") in rows
    assert ("I", "Set playback in") in rows and ("Ctrl+Z", "Undo") in rows
    loaded.act_shortcuts.trigger()
    dlg = loaded.shortcuts_dialog
    shown = {dlg.table.item(i, 0).text() for i in range(dlg.table.rowCount()) if dlg.table.item(i, 1).text()}
    assert dlg.isVisible() and shown == {a for _k, a in rows}
    dlg.close()
