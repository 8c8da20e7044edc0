"""The real editor window under Xvfb: open, select, drag keys with the mouse, undo/redo, key table,
add/delete/copy/paste keys, tangent modes, export and re-open, bad files, unsaved-changes prompt.

One window is shared by the module (start-up is the slow part); every test loads what it needs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

import curveeditor
from curveeditor.app.window.files import sample_path
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine import edit as ed
from curveeditor.engine.curves import TangentMode, tangent_mode_bits
from curveeditor.io import read_clip
from tests.conftest import corpus_files

pytestmark = pytest.mark.gui

CORPUS_ANIM = corpus_files("anim", "*.anim")


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    from PySide6.QtCore import QSettings

    folder = tmp_path_factory.mktemp("win")
    store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))
    w.resize(1400, 900)
    w.show()
    QTest.qWaitForWindowExposed(w)
    w.activateWindow()
    QTest.qWaitForWindowActive(w)
    yield w
    w.doc.undo_stack.setClean()
    w.doc._saved_externally_dirty = False
    w.close()


def load(win, qtbot, path) -> None:
    win.activateWindow()  # keyboard shortcuts only reach the active window
    win.doc.undo_stack.setClean()
    win.doc._saved_externally_dirty = False
    with qtbot.waitSignal(win.files.loaded, timeout=20000):
        win.files.open_path(str(path))
    qtbot.wait(30)


def euler_track_with_keys(clip, min_keys=4):
    for t in clip.tracks:
        if t.kind == "euler" and t.n_keys >= min_keys:
            return t
    return None


def mouse(widget, etype, pos: QPoint, button, buttons, mods=Qt.KeyboardModifier.NoModifier):
    ev = QMouseEvent(etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, mods)
    QApplication.sendEvent(widget, ev)


def view_pos(win, plot, t: float, v: float) -> QPoint:
    scene = plot.getViewBox().mapViewToScene(QPointF(t, v))
    return win.graphs.glw.mapFromScene(scene)


def drag(qtbot, widget, start: QPoint, end: QPoint, steps=6, mods=Qt.KeyboardModifier.NoModifier):
    left = Qt.MouseButton.LeftButton
    mouse(widget, QEvent.Type.MouseMove, start, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, mods)
    mouse(widget, QEvent.Type.MouseButtonPress, start, left, left, mods)
    for k in range(1, steps + 1):
        qtbot.wait(15)  # pyqtgraph drops mouse moves closer than 10 ms apart
        p = start + (end - start) * (k / steps)
        mouse(widget, QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, left, mods)
    qtbot.wait(15)
    mouse(widget, QEvent.Type.MouseButtonRelease, end, left, Qt.MouseButton.NoButton, mods)
    qtbot.wait(10)


# ---------------------------------------------------------------------------------------------------
def test_sample_opens_with_tracks_problems_and_graphs(win, qtbot):
    sample = sample_path()
    assert sample is not None
    load(win, qtbot, sample)
    clip = win.doc.clip
    assert len(clip.tracks) >= 1
    assert win.doc.selected_paths == [clip.tracks[0].path]
    # tree: one selectable row per rotation track, rotation tracks before the read-only group
    model = win.tracks.model
    assert set(model._by_track) == {t.path for t in clip.tracks}
    # graphs draw the primary track from the engine's samples (no wrapping: values may exceed 180)
    items = win.graphs.items[clip.tracks[0].path]
    x, y = items.curves[0][0].getData()
    assert x.size > clip.tracks[0].n_keys and np.all(np.isfinite(y))
    # problems: the sample has flips/wraps; the dock lists them and the tree shows badges
    total = len(win.problem_index.all_problems())
    assert win.problems.model.rowCount() == total > 0
    assert "No problems" not in win.problems.summary.text()


def test_select_track_in_tree_and_filter(win, qtbot):
    load(win, qtbot, sample_path())
    paths = [t.path for t in win.doc.clip.tracks]
    target = paths[-1]
    idx = win.tracks.proxy.mapFromSource(win.tracks.model.index_for_track(target))
    rect = win.tracks.view.visualRect(idx)
    QTest.mouseClick(win.tracks.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert win.doc.selected_paths[0] == target
    assert win.keys.model.track.path == target
    assert target in win.graphs.items
    # the filter keeps matching rows (and their parents) only
    leaf = target.split("/")[-1]
    win.tracks.filter.setText(leaf)
    visible = []

    def walk(parent):
        for r in range(win.tracks.proxy.rowCount(parent)):
            i = win.tracks.proxy.index(r, 0, parent)
            p = win.tracks.proxy.data(i, Qt.ItemDataRole.UserRole + 2)
            if p:
                visible.append(p)
            walk(i)

    from PySide6.QtCore import QModelIndex

    walk(QModelIndex())
    # rows that do not match are the matching rows' parents (a track is its own parent node)
    matching = [p for p in visible if leaf.lower() in p.lower()]
    assert target in matching
    assert all(any(m.startswith(p + "/") for m in matching) for p in visible if p not in matching)
    win.tracks.filter.clear()


def test_drag_key_with_mouse_is_one_undo_step_and_saved(win, qtbot, tmp_path):
    if not CORPUS_ANIM:
        pytest.skip("../shared/corpus/anim is not present")
    pytest.importorskip("curveeditor.io.anim.writer")
    src = None
    for f in CORPUS_ANIM:
        try:
            c = read_clip(f)
        except Exception:  # noqa: BLE001 - some corpus files may not be supported yet
            continue
        if euler_track_with_keys(c, 4) is not None:
            src = f
            break
    if src is None:
        pytest.skip("no corpus clip with an Euler track of 4+ keys")
    path = tmp_path / "clip.anim"
    shutil.copy(src, path)
    load(win, qtbot, path)
    tr = euler_track_with_keys(win.doc.clip, 4)
    win.doc.select_paths([tr.path])
    win.graphs.frame_all()
    qtbot.wait(20)
    plot = win.graphs.euler_plots[0]
    i = 1
    t0, v0 = float(tr.times[i]), float(tr.curve.value[i, 0])
    fr = win.doc.frame_rate
    dt_target = 1.0 / fr  # one frame later ...
    span = plot.getViewBox().viewRange()[1]
    dv_target = (span[1] - span[0]) * 0.1  # ... and 10 % of the plot higher
    start = view_pos(win, plot, t0, v0)
    end = view_pos(win, plot, t0 + dt_target, v0 + dv_target)
    before = win.doc.clip
    n_undo = win.doc.undo_stack.count()
    vp = win.graphs.glw.viewport()
    drag(qtbot, vp, start, end)
    after = win.doc.clip.track(tr.path)
    assert win.doc.undo_stack.count() == n_undo + 1  # one undo step for the whole drag
    assert win.doc.selected_keys == {tr.path: {i}}
    new_t = float(after.times[i])
    new_v = float(after.curve.value[i, 0])
    # the key time snapped to the frame grid; the value moved by ~dv (pixel rounding)
    assert abs(new_t * fr - round(new_t * fr)) < 1e-6
    assert new_t > t0
    assert new_v - v0 == pytest.approx(dv_target, rel=0.08)
    # the other channels and keys are untouched
    np.testing.assert_array_equal(after.curve.value[:, 1:], tr.curve.value[:, 1:])
    np.testing.assert_array_equal(np.delete(after.curve.value, i, 0), np.delete(tr.curve.value, i, 0))
    # after the drag the whole track is sampled again (mid-drag only the visible part is)
    curve_item = win.graphs.items[tr.path].curves[0][0]
    assert curve_item.xData[0] <= tr.times[0] + 1e-9 and curve_item.xData[-1] >= tr.times[-1] - 1e-9
    # the graph shows the moved key
    keys_item = win.graphs.items[tr.path].keys[0][0]
    kx, ky = keys_item.getData()
    assert ky[i] == pytest.approx(new_v)
    # save back (minimal-diff writer) and read again
    assert win.files.write(str(path), None, mark_saved=True, confirm=lambda w: True)
    assert not win.doc.is_dirty()
    again = read_clip(path).track(tr.path)
    assert float(again.times[i]) == pytest.approx(new_t, abs=1e-5)
    assert float(again.curve.value[i, 0]) == pytest.approx(new_v, abs=1e-3)
    # undo / redo with the keyboard
    QTest.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert win.doc.clip is before
    QTest.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert float(win.doc.clip.track(tr.path).curve.value[i, 0]) == pytest.approx(new_v)


def test_box_select_and_shift_constrained_drag(win, qtbot):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 10)
    win.doc.select_paths([tr.path])
    win.graphs.frame_all()
    qtbot.wait(20)
    plot = win.graphs.euler_plots[0]
    vb = plot.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    # a box around the first third of the clip, full height
    j = tr.n_keys // 3
    t_end = float(tr.times[j] + tr.times[j + 1]) / 2  # between two keys: no pixel-rounding ambiguity
    a = view_pos(win, plot, x0 + 1e-9, y1)
    b = view_pos(win, plot, t_end, y0)
    a = QPoint(a.x() + 2, a.y() + 2)
    b = QPoint(b.x(), b.y() - 2)
    drag(qtbot, win.graphs.glw.viewport(), a, b)
    sel = win.doc.selected_keys.get(tr.path, set())
    expect = {int(k) for k in np.nonzero(tr.times <= t_end + 1e-9)[0]}
    assert sel == expect
    # Shift + drag mostly sideways moves in time only
    k = sorted(sel)[len(sel) // 2]  # away from the time cursor at 0 s, which takes drags itself
    t0, v0 = float(tr.times[k]), float(tr.curve.value[k, 0])
    before = win.doc.clip.track(tr.path)
    win.doc.select_keys({tr.path: {k}})
    start = view_pos(win, plot, t0, v0)
    end = start + QPoint(40, 6)
    drag(qtbot, win.graphs.glw.viewport(), start, end, mods=Qt.KeyboardModifier.ShiftModifier)
    after = win.doc.clip.track(tr.path)
    assert float(after.curve.value[k, 0]) == pytest.approx(float(before.curve.value[k, 0]))
    assert float(after.times[k]) != float(before.times[k])
    win.doc.undo_stack.undo()


def test_key_table_edit_goes_through_undo(win, qtbot):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 3)
    win.doc.select_paths([tr.path])
    m = win.keys.model
    col = [c[0] for c in m._cols].index("Y")
    assert m.setData(m.index(2, col), "12.5")
    assert win.doc.clip.track(tr.path).curve.value[2, 1] == 12.5
    assert m.data(m.index(2, col)) == "12.5000"
    # a time that would overtake the neighbour is refused and nothing changes
    tcol = [c[0] for c in m._cols].index("Time (s)")
    assert not m.setData(m.index(2, tcol), str(float(tr.times[5])))
    assert "between" in m.error
    win.doc.undo_stack.undo()
    assert win.doc.clip.track(tr.path).curve.value[2, 1] == tr.curve.value[2, 1]


def test_add_delete_copy_paste_keys(win, qtbot):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 3)
    win.doc.select_paths([tr.path])
    n = tr.n_keys
    # K adds a key at the cursor between two keys, on the curve as it plays
    t = float(tr.times[1] + tr.times[2]) / 2
    win.doc.set_time(t)
    QTest.keyClick(win, Qt.Key.Key_K)
    new = win.doc.clip.track(tr.path)
    assert new.n_keys == n + 1
    j = int(np.argmin(np.abs(new.times - t)))
    assert new.times[j] == pytest.approx(t)
    assert win.doc.selected_keys == {tr.path: {j}}
    assert int(new.curve.tangent_mode[j, 0]) == 0  # Free Smooth at the curve's slope (keeps its shape)
    # Del removes it again
    QTest.keyClick(win, Qt.Key.Key_Delete)
    assert win.doc.clip.track(tr.path).n_keys == n
    # copy two keys, paste at a later time
    win.doc.select_keys({tr.path: {0, 1}})
    win.copy_keys()
    paste_at = float(tr.times[-1]) + 1.0
    win.doc.set_time(float(tr.times[-1]))
    win.paste_keys()
    pasted = win.doc.clip.track(tr.path)
    assert pasted.n_keys == n + 1  # the first pasted key replaced the last key (same time)
    np.testing.assert_allclose(pasted.curve.value[-2:], tr.curve.value[:2])
    assert pasted.times[-1] == pytest.approx(float(tr.times[-1]) + float(tr.times[1] - tr.times[0]))
    assert paste_at > 0
    for _ in range(3):
        win.doc.undo_stack.undo()
    assert win.doc.clip.track(tr.path).n_keys == n


def test_tangent_modes_written_as_unity_encodes_them(win, qtbot):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 4)
    win.doc.select_paths([tr.path])
    win.doc.select_keys({tr.path: {1, 2}})
    win.set_tangent_preset("Flat")
    c = win.doc.clip.track(tr.path).curve
    assert np.all(c.tangent_mode[1:3] == 0) and np.all(c.in_slope[1:3] == 0) and np.all(c.out_slope[1:3] == 0)
    win.set_side_mode("out", "Constant")
    c = win.doc.clip.track(tr.path).curve
    assert np.all(c.tangent_mode[1:3] == tangent_mode_bits(TangentMode.FREE, TangentMode.CONSTANT, True))
    assert np.all(np.isinf(c.out_slope[1:3]))
    win.set_side_mode("in", "Weighted")
    assert np.all(win.doc.clip.track(tr.path).curve.weighted_mode[1:3] & 1)
    win.set_tangent_preset("Clamped Auto")
    c = win.doc.clip.track(tr.path).curve
    assert np.all(c.tangent_mode[1:3] == 136) and np.all(c.weighted_mode[1:3] == 0)
    assert ed.describe_mode(136) == "Clamped Auto"
    for _ in range(4):
        win.doc.undo_stack.undo()
    assert win.doc.clip.track(tr.path).curve.equals(tr.curve)


def test_tangent_handle_drag_sets_free_slope(win, qtbot):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 4)
    win.doc.select_paths([tr.path])
    win.doc.select_keys({tr.path: {2}})
    win.graphs.frame_selection()
    qtbot.wait(20)
    pts = [h for h in win.graphs._handle_points if h[3] == 0 and h[4] == "out"]
    assert pts, "a selected key shows tangent handles"
    vb, path, i, ch, side, hx, hy = pts[0]
    plot = next(p for p in win.graphs.euler_plots if p.getViewBox() is vb)
    start = view_pos(win, plot, hx, hy)
    drag(qtbot, win.graphs.glw.viewport(), start, start + QPoint(0, -30))
    c = win.doc.clip.track(tr.path).curve
    assert c.out_slope[2, 0] > tr.curve.out_slope[2, 0]
    assert c.in_slope[2, 0] == c.out_slope[2, 0]  # Free Smooth: both sides follow
    assert int(c.tangent_mode[2, 0]) == 0
    win.doc.undo_stack.undo()


def test_export_csv_and_reopen(win, qtbot, tmp_path):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 3)
    win.doc.select_paths([tr.path])
    win.doc.select_keys({tr.path: {0}})
    win.graphs.move_selection(
        type("D", (), {"base_clip": win.doc.clip, "sel": {tr.path: {0}}, "t0": 0.0, "channel": 2})(), 0.0, 7.0
    )
    win.doc.end_live_edit("Move keys")
    out = tmp_path / "out.csv"
    assert win.files.write(str(out), None, mark_saved=False, confirm=lambda w: True)
    load(win, qtbot, out)
    again = win.doc.clip.track(tr.path)
    assert float(again.curve.value[0, 2]) == pytest.approx(float(tr.curve.value[0, 2]) + 7.0, abs=1e-6)
    # graphs export as PNG and SVG
    png, svg = tmp_path / "g.png", tmp_path / "g.svg"
    win.graphs.export_image(str(png))
    win.graphs.export_image(str(svg))
    assert png.stat().st_size > 5000 and svg.read_text().lstrip().startswith("<?xml")


def test_corrupted_file_shows_error_and_keeps_document(win, qtbot, tmp_path, monkeypatch):
    load(win, qtbot, sample_path())
    before = win.doc.clip
    path_before = win.doc.path
    bad = tmp_path / "broken.anim"
    bad.write_text(
        "%YAML 1.1\n--- !u!74 &7400000\nAnimationClip:\n  m_Name: x\n  m_EulerCurves:\n  - curve: [\n"
    )
    shown = []

    def critical(parent, title, text, *a, **k):
        shown.append((title, text))

    monkeypatch.setattr(QMessageBox, "critical", critical)
    with qtbot.waitSignal(win.files.loadFailed, timeout=10000):
        win.files.open_path(str(bad))
    assert shown and "broken.anim" in shown[0][1]
    assert win.doc.clip is before and win.doc.path == path_before


def test_unsaved_changes_prompt(win, qtbot, monkeypatch):
    load(win, qtbot, sample_path())
    tr = euler_track_with_keys(win.doc.clip, 3)
    win.doc.apply_clip(win.doc.clip.with_track(ed.delete_keys(tr, [1])), "Delete")
    assert win.doc.is_dirty() and win.windowTitle().startswith(os.path.basename(win.doc.path) + " *")
    asked = []

    def cancel(*a, **k):
        asked.append(a[2] if len(a) > 2 else "")
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "warning", cancel)
    assert not win.maybe_save()
    assert asked and "Save the changes" in asked[0]
    win.close()  # closing asks too; Cancel keeps the window and the edit
    assert win.isVisible() and win.doc.is_dirty() and len(asked) == 2
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Discard)
    assert win.maybe_save()
    win.doc.undo_stack.undo()
    assert not win.doc.is_dirty()


def test_problem_click_jumps_to_track_and_time(win, qtbot):
    load(win, qtbot, sample_path())
    panel = win.problems
    rows = panel.proxy.rowCount()
    assert rows > 0
    idx = panel.proxy.index(rows - 1, 0)
    p = panel.model.problem(panel.proxy.mapToSource(idx).row())
    panel._jump(idx)
    assert win.doc.selected_paths[0] == p.path
    assert win.doc.current_time == pytest.approx(p.time)
    assert win.doc.selected_keys == {p.path: {p.index}}


def test_timeline_steps_and_readout(win, qtbot):
    load(win, qtbot, sample_path())
    win.doc.set_time(0.0)
    QTest.keyClick(win, Qt.Key.Key_Period)
    assert win.doc.current_time == pytest.approx(1 / win.doc.frame_rate)
    text = win.timeline.readout.text()
    assert "Euler" in text and "≡" in text and "°/s" in text
    win.timeline.set_playing(True)
    qtbot.wait(120)
    win.timeline.set_playing(False)
    assert win.doc.current_time > 1 / win.doc.frame_rate


def test_dark_theme_applies_to_plots(win, qtbot):
    win.set_theme("dark")
    qtbot.wait(20)
    img = win.graphs.glw.grab().toImage()
    c = img.pixelColor(img.width() // 2, 5)
    assert c.lightness() < 80
    win.set_theme("light")
    qtbot.wait(20)
    img = win.graphs.glw.grab().toImage()
    assert img.pixelColor(img.width() // 2, 5).lightness() > 200


def test_preview_overlay_and_ghost(win, qtbot):
    from curveeditor.engine.unwrap import unwrap_track

    load(win, qtbot, sample_path())
    tr = next(t for t in win.doc.clip.tracks if t.kind == "euler" and t.n_keys > 10)
    win.doc.select_paths([tr.path])
    fixed = unwrap_track(tr)
    win.doc.set_preview(win.doc.clip.with_track(fixed))
    items = win.graphs.items[tr.path]
    assert len(items.preview) >= 3  # dashed "after" curves in every channel plot (+ strips)
    eul = [it for it, where, ch in items.preview if where == "euler"]
    _x, y = eul[1].getData()
    assert np.all(np.isfinite(y))
    win.doc.set_preview(None)
    assert items.preview == []
    # an edit draws the curve as loaded behind (ghost) until it is undone
    win.doc.apply_clip(win.doc.clip.with_track(ed.move_keys(tr, [3], 0.0, 0, 30.0)), "Move")
    assert win.graphs.items[tr.path].ghost
    win.doc.undo_stack.undo()
    assert not win.graphs.items[tr.path].ghost


def test_open_initial_opens_the_bundled_sample(win, qtbot, monkeypatch):
    monkeypatch.setattr(win.autosaver, "orphaned_sessions", lambda: [])
    win.doc.undo_stack.setClean()
    with qtbot.waitSignal(win.files.loaded, timeout=20000):
        win.open_initial(None)
    assert win.doc.path == str(sample_path())
    assert sample_path().name == "demo.anim"
    # The package data, not a file next to a source checkout: `pip install .` ships it.
    assert sample_path().parent == Path(curveeditor.__file__).resolve().parent / "resources" / "samples"
    assert win.doc.clip.name == "demo" and len(win.doc.clip.tracks) == 6


def test_about_lists_versions():
    from curveeditor.app.window.main_window import versions_text

    text = versions_text()
    for name in ("curveeditor", "Python", "PySide6", "pyqtgraph", "numpy", "scipy"):
        assert name in text


def test_layout_toggles_overlay_and_strips(win, qtbot):
    load(win, qtbot, sample_path())
    try:
        win.act_overlay.setChecked(True)
        win.act_quat.setChecked(True)
        g = win.graphs
        assert len(g.euler_plots) == 1 and g.quat_plot is not None and g.speed_plot is not None
        assert len(g.plots) == 3
        path = win.doc.selected_paths[0]
        assert len(g.items[path].curves) == 3 and len(g.items[path].quat) == 4
        # every plot shares the time axis
        g.plots[0].setXRange(0.5, 1.0, padding=0)
        qtbot.wait(10)
        ranges = [p.getViewBox().viewRange()[0] for p in g.plots]
        widths = [p.getViewBox().width() for p in g.plots]
        for lo, hi in ranges[1:]:
            assert lo == pytest.approx(0.5) and hi == pytest.approx(1.0), (ranges, widths)
        # keys stay pickable in the overlaid plot
        tr = win.doc.clip.track(path)
        g.frame_all()
        qtbot.wait(10)
        k = tr.n_keys // 2
        pos = view_pos(win, g.euler_plots[0], float(tr.times[k]), float(g.cache.get(tr).key_values[k, 2]))
        hit = g.input.key_hit(g.euler_plots[0].getViewBox(), g.glw.mapToScene(pos))
        assert hit is not None and hit[0] == path and abs(hit[1] - k) <= 1
    finally:
        win.act_overlay.setChecked(False)
        win.act_quat.setChecked(False)
    assert len(win.graphs.euler_plots) == 3


def test_compare_dialog_opens(win, qtbot):
    load(win, qtbot, sample_path())
    if not win.act_compare.isEnabled():
        pytest.skip("compare dialog not available")
    win.show_compare()
    qtbot.wait(50)
    assert win._compare.isVisible()
    win._compare.close()


def test_middle_drag_pans_and_strip_drag_scrubs(win, qtbot):
    load(win, qtbot, sample_path())
    g = win.graphs
    g.frame_all()
    qtbot.wait(20)
    vb = g.euler_plots[0].getViewBox()
    (x0, x1), _ = vb.viewRange()
    vp = g.glw.viewport()
    mid = Qt.MouseButton.MiddleButton
    start = view_pos(win, g.euler_plots[0], (x0 + x1) / 2, 0.0)
    end = start + QPoint(-80, 0)
    mouse(vp, QEvent.Type.MouseButtonPress, start, mid, mid)
    for k in range(1, 5):
        qtbot.wait(15)
        mouse(vp, QEvent.Type.MouseMove, start + (end - start) * (k / 4), Qt.MouseButton.NoButton, mid)
    qtbot.wait(15)
    mouse(vp, QEvent.Type.MouseButtonRelease, end, mid, Qt.MouseButton.NoButton)
    (nx0, nx1), _ = vb.viewRange()
    assert nx0 > x0 and nx1 - nx0 == pytest.approx(x1 - x0, rel=1e-6)  # panned later in time, same zoom
    assert win.doc.undo_stack.isClean()  # panning is not an edit
    # dragging in the speed strip scrubs the time (snapped to frames)
    sp = g.speed_plot
    a = view_pos(win, sp, nx0 + 0.1 * (nx1 - nx0), 0.0)
    b = view_pos(win, sp, nx0 + 0.6 * (nx1 - nx0), 0.0)
    drag(qtbot, vp, a + QPoint(0, -5), b + QPoint(0, -5))
    t = win.doc.current_time
    assert t == pytest.approx(nx0 + 0.6 * (nx1 - nx0), abs=2.5 / win.doc.frame_rate)
    assert t * win.doc.frame_rate == pytest.approx(round(t * win.doc.frame_rate))


def test_degenerate_clips_do_not_break_the_views(win, qtbot, monkeypatch):
    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.curves import Curve

    win.doc.load(Clip("empty", 30.0), None)
    qtbot.wait(10)
    assert win.doc.current_track() is None and win.keys.model.rowCount() == 0
    assert "0.000 s" in win.timeline.readout.text()
    one = RotationTrack("One", "euler", Curve.make([0.5], [[10.0, 20.0, 30.0]]))
    two = RotationTrack("Q", "quaternion", Curve.make([0.0, 1.0], [[0, 0, 0, 1.0], [0, 0.7071, 0, 0.7071]]))
    win.doc.load(Clip("tiny", 30.0, [one, two]), None)
    qtbot.wait(10)
    win.doc.select_paths(["One", "Q"])
    win.graphs.frame_all()
    win.doc.select_keys({"One": {0}, "Q": {1}})
    win.graphs.frame_selection()
    win.doc.set_time(0.5)
    QTest.keyClick(win, Qt.Key.Key_K)  # a key already at the cursor on One; Q gets a new one
    assert win.doc.clip.track("One").n_keys == 1 and win.doc.clip.track("Q").n_keys == 3
    win.doc.select_keys({"One": {0}})
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    win.delete_keys()  # the last key of a track cannot be deleted: a warning, nothing changes
    assert shown and "at least one key" in shown[0]
    assert win.doc.clip.track("One").n_keys == 1
    win.doc.undo_stack.setClean()


def test_delete_after_switching_track_does_not_touch_the_hidden_track(win, qtbot):
    load(win, qtbot, sample_path())
    a, b = (t.path for t in win.doc.clip.tracks[:2])
    n_a = win.doc.clip.track(a).n_keys
    win.doc.select_keys({a: {5}})
    idx = win.tracks.proxy.mapFromSource(win.tracks.model.index_for_track(b))
    QTest.mouseClick(
        win.tracks.view.viewport(), Qt.MouseButton.LeftButton, pos=win.tracks.view.visualRect(idx).center()
    )
    assert win.doc.selected_paths == [b]
    assert win.doc.selected_keys == {}
    win.graphs.setFocus()
    QTest.keyClick(win.graphs, Qt.Key.Key_Delete)
    assert win.doc.clip.track(a).n_keys == n_a
    assert win.doc.undo_stack.count() == 0


def test_key_table_editor_keeps_full_precision(win, qtbot):
    # Opening a cell editor and pressing Enter must not round the value (the default float editor
    # had 2 decimals: qw 0.99992 -> 1.0, time 1/6 s -> 0.17 s); typing a value commits it exactly.
    load(win, qtbot, sample_path())
    tr = next(t for t in win.doc.clip.tracks if t.kind == "quaternion")
    win.doc.select_paths([tr.path])
    win.docks["Keys"].raise_()
    view, m = win.keys.view, win.keys.model
    names = [c[0] for c in m._cols]
    qw, tcol = names.index("qw"), names.index("Time (s)")

    def edit(row, col, typed=None):
        rect = view.visualRect(m.index(row, col))
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        if typed is None:
            QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
            editor = view.focusWidget()
        else:
            QTest.keyClick(view, typed[0])  # the first key opens the editor, which takes the focus
            editor = view.focusWidget()
            QTest.keyClicks(editor, typed[1:])
        QTest.keyClick(editor, Qt.Key.Key_Return)
        qtbot.wait(10)

    edit(2, qw)
    edit(1, tcol)
    assert win.doc.clip.track(tr.path).curve.equals(tr.curve)
    assert win.doc.undo_stack.count() == 0
    edit(2, qw, typed="0.123456789")
    assert win.doc.clip.track(tr.path).curve.value[2, 3] == 0.123456789
    assert win.doc.undo_stack.count() == 1


def test_undo_pressed_during_a_key_drag_keeps_the_history_reachable(win, qtbot):
    # Ctrl+Z while the mouse button is still down used to undo under the drag, whose release then
    # pushed a command on top of the undone state: the earlier edit could no longer be undone.
    load(win, qtbot, sample_path())
    original = win.doc.clip
    tr = euler_track_with_keys(original, 4)
    win.doc.select_paths([tr.path])
    win.doc.select_keys({tr.path: {0}})
    win.delete_keys()  # an earlier edit on the undo stack
    win.graphs.frame_all()
    qtbot.wait(20)
    tr = win.doc.clip.track(tr.path)
    plot = win.graphs.euler_plots[0]
    span = plot.getViewBox().viewRange()[1]
    start = view_pos(win, plot, float(tr.times[1]), float(tr.curve.value[1, 0]))
    end = view_pos(win, plot, float(tr.times[1]), float(tr.curve.value[1, 0]) + 0.1 * (span[1] - span[0]))
    vp = win.graphs.glw.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    mouse(vp, QEvent.Type.MouseMove, start, none, none)
    mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    for k in range(1, 4):
        qtbot.wait(15)
        mouse(vp, QEvent.Type.MouseMove, start + (end - start) * (k / 3), none, left)
    assert win.doc.in_live_edit()
    QTest.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    for k in range(3):
        qtbot.wait(15)
        mouse(vp, QEvent.Type.MouseMove, end + QPoint(0, 5 * k), none, left)
    mouse(vp, QEvent.Type.MouseButtonRelease, end, left, none)
    qtbot.wait(10)
    while win.doc.undo_stack.canUndo():
        win.doc.undo_stack.undo()
    assert win.doc.clip is original
