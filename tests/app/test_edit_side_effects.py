"""Every edit command of the editor, through the real window with real key and mouse events, keeps
the tangent mode of every key it does not name and the slopes of every key whose neighbourhood it
does not change (issue 20, "no silent side effects"; the rules: ``tests/edit_invariants.py``).

Before issue 20 an arrow-key nudge made the key "Broken: Free | Free" and its neighbours Free Smooth,
and S-scale made every key it retimed Free, while a mouse drag of the same key kept Clamped Auto.

Clips: a real Unity ``.anim`` (ClampedAuto keys whose slopes are Unity's own, not our rule's: a key
recomputed without need shows), opened through the file menu's code, and a generated clip holding
every tangent mode (``mixed_mode_clip``, Euler and quaternion tracks).
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtTest import QTest

from curveeditor.engine.clip import played
from curveeditor.engine.rotations import geodesic_angle
from tests.app.test_main_window import drag, mouse, view_pos
from tests.app.windows import shown_window
from tests.conftest import corpus_files
from tests.edit_invariants import check_clip_edit, mixed_mode_clip

pytestmark = pytest.mark.gui
ANIM = corpus_files("anim", "*EulerAnimation.anim")
NONE, LEFT = Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("sidefx"), active=True)


@pytest.fixture(params=["anim", "mixed"])
def loaded(request, win, qtbot):
    """(window, path of the edited track, a key in its middle)."""
    win.activateWindow()
    win.doc.undo_stack.setClean()
    win.doc._saved_externally_dirty = False
    if request.param == "anim":
        if not ANIM:
            pytest.skip("corpus clip absent")
        with qtbot.waitSignal(win.files.loaded, timeout=20000):
            win.files.open_path(str(ANIM[0]))
    else:
        win.doc.load(mixed_mode_clip(), None)
    qtbot.wait(30)
    tr = win.doc.clip.tracks[0]
    win.doc.select_paths([tr.path])
    win.graphs.set_layout(overlay=False)
    qtbot.wait(30)
    yield win, tr.path, tr.n_keys // 2 - (1 if tr.n_keys < 6 else 0)
    win.doc.clear_key_selection()
    win.doc.undo_stack.setClean()


def _frame(win, qtbot, path, idx, plot_i=0):
    """Frame keys ``idx`` of ``path`` in channel plot ``plot_i``; returns the plot."""
    g = win.graphs
    tr = win.doc.clip.track(path)
    kt, kv = g.cache.keys(tr)
    lo, hi = float(kt[min(idx)]), float(kt[max(idx)])
    pad = max(hi - lo, float(np.min(np.diff(kt)))) * 1.5
    plot = g.euler_plots[plot_i]
    plot.setXRange(lo - pad, hi + pad, padding=0)
    v = kv[:, plot_i]
    plot.setYRange(float(v.min()) - 10, float(v.max()) + 10, padding=0)
    qtbot.wait(30)
    return plot


def _key_px(win, path, i, plot, ch=0) -> QPoint:
    kt, kv = win.graphs.cache.keys(win.doc.clip.track(path))
    return view_pos(win, plot, float(kt[i]), float(kv[i, ch]))


def _edited(win, before, paths=None, **kw):
    check_clip_edit(before, win.doc.clip, {p: kw for p in (paths or win.doc.selected_paths)})


def test_arrow_nudges_keep_every_mode(loaded, qtbot):
    win, path, i = loaded
    doc, g = win.doc, win.graphs
    plot = _frame(win, qtbot, path, [i])
    doc.select_keys({path: {i}})
    before = doc.clip
    g.glw.setFocus()
    QTest.keyClick(g.glw, Qt.Key.Key_Right)
    assert doc.clip.track(path).times[i] > before.track(path).times[i]
    _edited(win, before)
    after_time = doc.clip
    mouse(g.glw.viewport(), QEvent.Type.MouseMove, _key_px(win, path, i, plot), NONE, NONE)
    QTest.keyClick(g.glw, Qt.Key.Key_Up)
    assert not doc.clip.track(path).curve.equals(after_time.track(path).curve)
    _edited(win, after_time)
    _edited(win, before)  # both nudges together: still only the rule's slopes near the key


def test_s_scale_keeps_every_mode(loaded, qtbot):
    win, path, i = loaded
    doc, g = win.doc, win.graphs
    sel = [i - 1, i] if doc.clip.track(path).n_keys < 6 else [i - 1, i, i + 1]
    plot = _frame(win, qtbot, path, sel)
    doc.select_keys({path: set(sel)})
    before = doc.clip
    vp = g.glw.viewport()
    start = _key_px(win, path, sel[-1], plot)
    g.glw.setFocus()
    mouse(vp, QEvent.Type.MouseMove, start, NONE, NONE)
    QTest.keyClick(g.glw, Qt.Key.Key_S)
    assert win.tools.manip.in_modal()
    end = start + QPoint(-25, -20)  # time and value shrink toward the pivot
    for k in (0.5, 1.0):
        mouse(vp, QEvent.Type.MouseMove, start + (end - start) * k, NONE, NONE)
    mouse(vp, QEvent.Type.MouseButtonPress, end, LEFT, LEFT)
    mouse(vp, QEvent.Type.MouseButtonRelease, end, LEFT, NONE)
    assert not win.tools.manip.in_modal() and doc.undo_stack.undoText().startswith("Scale")
    assert not np.array_equal(doc.clip.track(path).times, before.track(path).times)
    _edited(win, before, scaled_free=sel)


def test_mouse_drag_of_a_key_keeps_every_mode(loaded, qtbot):
    win, path, i = loaded
    doc, g = win.doc, win.graphs
    plot = _frame(win, qtbot, path, [i])
    doc.select_keys({path: {i}})
    before = doc.clip
    start = _key_px(win, path, i, plot)
    drag(qtbot, g.glw.viewport(), start, start + QPoint(14, -18))
    assert doc.undo_stack.undoText() == "Move keys"
    _edited(win, before)


def test_tangent_handle_drag_changes_only_that_key(loaded, qtbot):
    win, path, i = loaded
    doc, g = win.doc, win.graphs
    plot = _frame(win, qtbot, path, [i])
    doc.select_keys({path: {i}})
    qtbot.waitUntil(lambda: any(h[1] == path and h[2] == i for h in g.handle_points), timeout=2000)
    vb = plot.getViewBox()
    h = next(h for h in g.handle_points if h[0] is vb and h[2] == i and h[4] == "out")
    before = doc.clip
    start = view_pos(win, plot, h[5], h[6])
    drag(qtbot, g.glw.viewport(), start, start + QPoint(0, -25))
    assert doc.undo_stack.undoText() == "Edit tangent"
    _edited(win, before, named=[i])
    c0, c1 = before.track(path).curve, doc.clip.track(path).curve
    np.testing.assert_array_equal(c1.tangent_mode[i, 1:], c0.tangent_mode[i, 1:])  # other channels
    np.testing.assert_array_equal(c1.in_slope[i, 1:], c0.in_slope[i, 1:])


def test_key_table_edits_keep_every_mode(loaded, qtbot):
    win, path, i = loaded
    doc = win.doc
    doc.select_keys({path: {i}})
    model = win.keys.model
    qtbot.waitUntil(lambda: model.track is not None and model.track.path == path, timeout=2000)
    cols = {(f, k): n for n, (_h, f, k) in enumerate(model.columns())}
    tr = doc.clip.track(path)
    mid_t = float(0.5 * (tr.times[i] + tr.times[i + 1]))
    for (field, k), value, named in (
        (("time", 0), mid_t, []),
        (("value", 1), float(tr.curve.value[i, 1]) + 0.3 if tr.kind == "euler" else 0.4, []),
        (("out", 0), 11.0, [i]),
    ):
        before = doc.clip
        assert model.setData(model.index(i, cols[(field, k)]), str(value), Qt.ItemDataRole.EditRole)
        _edited(win, before, paths=[path], named=named)


def _dope(win, qtbot):
    win.docks["Dope sheet"].raise_()
    w = win.tools.dope
    qtbot.waitUntil(lambda: w.canvas.isVisible() and w.canvas.width() > 300, timeout=3000)
    w.frame_all()
    qtbot.wait(30)
    return w


def test_dope_sheet_drag_and_scale_keep_every_mode(loaded, qtbot):
    from tests.app.test_dope_sheet import _pos, _row

    win, path, i = loaded
    doc = win.doc
    w = _dope(win, qtbot)
    c = w.canvas
    row = _row(w, "track", path)
    tr = doc.clip.track(path)
    t_i = float(tr.times[i])
    qtbot.mouseClick(c, LEFT, pos=_pos(w, row, t_i))
    assert doc.selected_keys == {path: {i}}
    before = doc.clip
    start = _pos(w, row, t_i)
    fr = doc.frame_rate
    end = QPoint(int(round(float(c.t_to_x(t_i + 1.2 / fr)))), start.y())
    QTest.mousePress(c, LEFT, Qt.KeyboardModifier.NoModifier, start)
    for k in range(1, 5):
        QTest.mouseMove(c, start + (end - start) * (k / 4))
    QTest.mouseRelease(c, LEFT, Qt.KeyboardModifier.NoModifier, end)
    qtbot.wait(30)
    assert doc.clip.track(path).times[i] == pytest.approx(t_i + 1 / fr)
    _edited(win, before)
    # S in the dope sheet: scale the selected keys about the time cursor
    doc.select_keys({path: {i, i + 1}})
    doc.set_time(float(tr.times[i - 1]))
    before = doc.clip
    t_a = float(doc.clip.track(path).times[i + 1])
    here = _pos(w, row, t_a)
    mouse(c, QEvent.Type.MouseMove, here, NONE, NONE)  # S starts where the pointer is
    qtbot.keyClick(c, Qt.Key.Key_S)
    end = _pos(w, row, 0.7 * t_a + 0.3 * doc.current_time)
    mouse(c, QEvent.Type.MouseMove, (here + end) / 2, NONE, NONE)
    mouse(c, QEvent.Type.MouseMove, end, NONE, NONE)
    mouse(c, QEvent.Type.MouseButtonPress, end, LEFT, LEFT)
    mouse(c, QEvent.Type.MouseButtonRelease, end, LEFT, NONE)
    assert doc.undo_stack.undoText().startswith("Scale") and doc.clip is not before
    _edited(win, before, scaled_free=[i, i + 1])


def test_copy_paste_insert_and_delete_keep_every_mode(loaded, qtbot):
    win, path, i = loaded
    doc = win.doc
    tr = doc.clip.track(path)
    doc.select_keys({path: {i, i + 1}})
    win.graphs.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    # paste between the first two keys: no clash, the pasted keys are new
    doc.set_time(float(tr.times[0] + 0.3 * (tr.times[1] - tr.times[0])))
    before = doc.clip
    QTest.keyClick(win, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert doc.undo_stack.undoText().startswith("Paste")
    pasted = sorted(doc.selected_keys[path])
    new = doc.clip.track(path)
    removed = [k for k in range(tr.n_keys) if not np.any(np.abs(new.times - tr.times[k]) < 1e-9)]
    _edited(win, before, added=pasted, removed=removed)
    doc.undo_stack.undo()
    # K: a key on the curve at the cursor; its neighbours keep their slopes (the curve's shape)
    t_k = float(tr.times[i] + 0.5 * (tr.times[i + 1] - tr.times[i]))
    doc.set_time(t_k)
    doc.clear_key_selection()
    before = doc.clip
    QTest.keyClick(win, Qt.Key.Key_K)
    assert doc.undo_stack.undoText().startswith("Add key")
    _edited(win, before, added=[i + 1], kept=[i, i + 2])
    grid = np.linspace(float(tr.times[0]), float(tr.times[-1]), 400)
    err = geodesic_angle(played(doc.clip.track(path), grid), played(before.track(path), grid))
    assert err.max() < 1e-3  # the curve plays as before (the new key's slope: a central difference)
    doc.undo_stack.undo()
    # Delete
    doc.select_keys({path: {i}})
    before = doc.clip
    win.graphs.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_Delete)
    assert doc.clip.track(path).n_keys == tr.n_keys - 1
    _edited(win, before, removed=[i])


def test_buffer_swap_exchanges_only_the_snapshot_tracks(loaded, qtbot):
    win, path, i = loaded
    doc = win.doc
    snap = doc.clip
    win.graphs.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    doc.select_keys({path: {i}})
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_Right)  # an edit after the snapshot
    edited = doc.clip
    _edited(win, snap)
    doc.clear_key_selection()
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_B)
    for tr in snap.tracks:  # back to the snapshot, bit for bit; nothing else
        assert doc.clip.track(tr.path).curve.equals(tr.curve), tr.path
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_B)
    for tr in edited.tracks:
        assert doc.clip.track(tr.path).curve.equals(tr.curve), tr.path


def test_tangent_presets_and_side_modes_change_only_the_selected_keys(loaded, qtbot):
    win, path, i = loaded
    doc = win.doc
    sel = {i, i + 1}
    acts = [(a.text(), a) for a in win.tangent_actions]
    acts += [(f"{side} {a.text()}", a) for side, group in win.side_actions.items() for a in group]
    for name, act in acts:
        doc.select_keys({path: sel})
        before = doc.clip
        act.trigger()
        assert doc.undo_stack.undoText(), name
        _edited(win, before, named=sorted(sel))
        doc.undo_stack.undo()


def test_recipe_on_a_range_keeps_the_keys_outside_it(loaded, qtbot):
    from curveeditor.engine.recipe import Recipe

    win, path, i = loaded
    doc = win.doc
    tr = doc.clip.track(path)
    if tr.n_keys < 6:
        pytest.skip("too few keys for a range with keys outside it")
    doc.select_keys({path: {i - 2, i + 2}})
    win.recipe.set_recipe(Recipe.of({"op": "smooth", "method": "gaussian", "sigma": 0.05}))
    before = doc.clip
    win.graphs.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.wait(30)
    assert doc.undo_stack.undoText().startswith("Recipe on")
    new = doc.clip.track(path).curve
    c = tr.curve
    t0, t1 = float(c.time[i - 2]), float(c.time[i + 2])
    b_old, a_old = c.time < t0 - 1e-6, c.time > t1 + 1e-6
    nb, na = int(b_old.sum()), int(a_old.sum())
    for f in ("tangent_mode", "weighted_mode", "in_slope", "out_slope", "in_weight", "out_weight"):
        np.testing.assert_array_equal(getattr(new, f)[:nb], getattr(c, f)[b_old], err_msg=f)
        np.testing.assert_array_equal(getattr(new, f)[new.n_keys - na :], getattr(c, f)[a_old], err_msg=f)
    for other in before.tracks:
        if other.path != path:
            assert doc.clip.track(other.path) is other
    win.recipe.set_recipe(Recipe.of())
