"""Humanoid muscle curves and other float curves in the editor (issue 22): grouped and sorted by
body part in the track tree, one curve per track in the graphs' value strip in its own units, keys
selected / dragged / deleted / added / given tangent presets with the engine's edits, one undo step
each, saved back to the real VRChat gesture ``.anim`` with a minimal diff."""

from __future__ import annotations

import difflib

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from curveeditor.engine import float_curves as fc
from curveeditor.engine.curves import TangentMode, tangent_mode_sides
from tests.app.rig_clips import humanoid_muscle_clip
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui
FIST = "anim/BlackStartx__VRC-Gesture-Manager__Resources_Gm_Animations_Gesture__GESTURE__Fist.anim"


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("win"), active=True)


@pytest.fixture
def fist(win, qtbot, corpus_dir):
    from curveeditor.io import read_clip

    path = corpus_dir / FIST
    win.doc.undo_stack.setClean()
    win.doc.load(read_clip(path), str(path))
    qtbot.wait(30)
    return win, path


def _mouse(widget, etype, pos: QPoint, button, buttons, mods=Qt.KeyboardModifier.NoModifier):
    ev = QMouseEvent(etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, mods)
    QApplication.sendEvent(widget, ev)


def _px(win, t, v) -> QPoint:
    vb = win.graphs.strip_of("other").vb
    return win.graphs.glw.mapFromScene(vb.mapViewToScene(QPointF(t, v)))


def _tree_rows(win) -> list[tuple[int, str]]:
    """(depth, text) of every row of the track tree, in order."""
    m = win.tracks.view.model()
    out = []

    def walk(parent, depth):
        for r in range(m.rowCount(parent)):
            idx = m.index(r, 0, parent)
            out.append((depth, m.data(idx)))
            walk(idx, depth + 1)

    from PySide6.QtCore import QModelIndex

    walk(QModelIndex(), 0)
    return out


def _select_in_tree(win, qtbot, names: list[str]) -> None:
    from PySide6.QtCore import QItemSelectionModel

    from curveeditor.app.tracks.tree import OTHER_ROLE

    view = win.tracks.view
    m = view.model()
    found = []

    def walk(parent):
        for r in range(m.rowCount(parent)):
            idx = m.index(r, 0, parent)
            if m.data(idx, OTHER_ROLE) in names:
                found.append(idx)
            walk(idx)

    from PySide6.QtCore import QModelIndex

    walk(QModelIndex())
    sm = view.selectionModel()
    sm.clearSelection()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for idx in found:
        sm.select(idx, flags)
    qtbot.wait(30)


def test_fist_muscles_in_the_tree_by_body_part_in_unity_order(fist):
    win, _ = fist
    rows = _tree_rows(win)
    assert rows[0] == (0, "Humanoid muscles (40)")
    end = next(k for k, (d, _t) in enumerate(rows) if d == 0 and k > 0)
    muscles = rows[1:end]
    assert [t for d, t in muscles if d == 1] == ["Left Hand fingers", "Right Hand fingers"]
    # Thumb 1, Spread, 2, 3, Index 1, ... as HumanTrait lists them (the file's own order differs)
    assert [t for d, t in muscles if d == 2] == list(fc.FINGER_MUSCLES)
    # the 40 m_EditorCurves copies are the same curves: not listed again among the read-only ones
    assert rows[end] == (0, "Read-only curves (1)")


def test_full_body_muscles_grouped_as_unity_lists_them(win, qtbot):
    win.doc.load(humanoid_muscle_clip(), None)
    qtbot.wait(30)
    rows = _tree_rows(win)
    assert rows[0] == (0, "Humanoid muscles (98)")
    end = next(k for k, (d, _t) in enumerate(rows) if d == 0 and k > 0)
    parts = [t for d, t in rows[:end] if d == 1]
    assert parts[:8] == ["Root and IK goals", "Spine", "Chest", "Upper Chest", "Neck", "Head", "Eyes", "Jaw"]
    assert parts[-2:] == ["Left Hand fingers", "Right Hand fingers"]
    assert "Left Forearm" in parts and parts.index("Left Arm") < parts.index("Left Forearm")
    i = next(k for k, (d, t) in enumerate(rows) if t == "Left Forearm")
    assert [t for _d, t in rows[i + 1 : i + 3]] == ["Left Forearm Stretch", "Left Forearm Twist In-Out"]
    assert (0, "Blend shapes (1)") in rows
    muscles = [t for d, t in rows if d == 2 and t in fc.HUMAN_MUSCLES]
    assert muscles == list(fc.HUMAN_MUSCLES)


def test_selected_muscles_are_drawn_one_curve_each_in_muscle_units(win, qtbot):
    win.doc.load(humanoid_muscle_clip(), None)
    names = ["Left Forearm Stretch", "Left Forearm Twist In-Out", "Left Hand Down-Up"]
    _select_in_tree(win, qtbot, names)
    g = win.graphs
    assert win.doc.selected_other == names and win.doc.selected_paths == []
    assert [s.role[0] for s in g.strips] == ["other"]  # no empty degree plots beside them
    s = g.strip_of("other")
    assert s.plot.getAxis("left").labelText == "muscle (-1..1)"
    assert len(s.multi.curves()) == 3
    kt, kv = s.multi_keys.getData()
    assert len(kt) == 3 * 31 and np.all(np.abs(kv) <= 1.0)
    # a blend shape is in percent
    _select_in_tree(win, qtbot, ["Body:blendShape.Smile"])
    assert g.strip_of("other").plot.getAxis("left").labelText == "blend shape (%)"


def test_drag_a_muscle_key_is_one_undo_step_and_saves_a_minimal_diff(fist, qtbot, tmp_path):
    win, path = fist
    name = "RightHand.Index.2 Stretched"
    _select_in_tree(win, qtbot, [name])
    g, doc = win.graphs, win.doc
    vb = g.strip_of("other").vb
    vb.setRange(xRange=(-0.01, 0.03), yRange=(-1.5, 0.5), padding=0)
    qtbot.wait(20)
    before = doc.clip
    c0 = doc.other_track(name).curve
    vp = g.glw.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    start = _px(win, float(c0.time[1]), -1.0)
    end = _px(win, float(c0.time[1]), -0.5)
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    for k in range(1, 11):
        p = start + (end - start) * (k / 10)
        _mouse(vp, QEvent.Type.MouseMove, p, none, left)
        qtbot.wait(12)
    _mouse(vp, QEvent.Type.MouseButtonRelease, end, left, none)
    qtbot.wait(20)
    c1 = doc.other_track(name).curve
    assert doc.selected_float_keys == {name: {1}}
    assert c1.value[1, 0] == pytest.approx(-0.5, abs=0.02) and c1.value[0, 0] == -1.0
    assert np.array_equal(c1.time, c0.time)  # a vertical drag keeps the key's frame
    assert doc.undo_stack.count() == 1
    mirror = next(o for o in doc.clip.other_tracks if o.meta.get("mirror_of") == name)
    assert np.array_equal(mirror.curve.value, c1.value)
    # the graph shows it: the selected marker is at the new value
    sx, sy = g.strip_of("other").selected.getData()
    assert sy[0] == pytest.approx(c1.value[1, 0])
    # saved: only the key's value line of the float curve and of its editor copy changed
    out = tmp_path / "fist-edited.anim"
    _save(win, out)
    diff = _changed_lines(path, out)
    assert len(diff) == 4 and all("value:" in line for line in diff), diff
    doc.undo_stack.undo()
    assert doc.clip is before
    assert doc.other_track(name).curve.value[1, 0] == -1.0


def _changed_lines(before, after) -> list[str]:
    """The removed and added lines between two files (unified diff, no context)."""
    return [
        line
        for line in difflib.unified_diff(
            before.read_text().splitlines(), after.read_text().splitlines(), lineterm="", n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def _save(win, out):
    from curveeditor.io import write_clip

    write_clip(win.doc.clip, out)


def test_delete_add_and_tangent_presets_on_muscle_keys(fist, qtbot):
    win, _ = fist
    doc = win.doc
    names = ["LeftHand.Thumb.1 Stretched", "LeftHand.Thumb.Spread"]
    _select_in_tree(win, qtbot, names)
    n0 = doc.other_track(names[0]).n_keys
    # K at a time between the keys: one key per shown curve, on the curve (its shape kept)
    t_mid = 0.5 * float(doc.other_track(names[0]).curve.time[-1])
    doc.set_time(t_mid)
    win.act_add_key.trigger()
    assert [doc.other_track(n).n_keys for n in names] == [n0 + 1, n0 + 1]
    assert doc.selected_float_keys == {names[0]: {1}, names[1]: {1}}
    assert win.tracks.model._by_float[names[0]].keys == n0 + 1  # the tree's key count follows
    assert win.act_delete.isEnabled()
    # Linear both sides on the new keys
    lin = next(a for a in win.side_actions["Both Tangents"] if a.text() == "Linear")
    lin.trigger()
    tm = doc.other_track(names[0]).curve.tangent_mode[1, 0]
    assert tangent_mode_sides(int(tm))[:2] == (TangentMode.LINEAR, TangentMode.LINEAR)
    # Delete removes them again; three undo steps
    win.act_delete.trigger()
    assert [doc.other_track(n).n_keys for n in names] == [n0, n0]
    assert doc.undo_stack.count() == 3
    doc.undo_stack.undo()
    assert doc.other_track(names[0]).n_keys == n0 + 1


def test_click_box_and_escape(fist, qtbot):
    win, _ = fist
    doc, g = win.doc, win.graphs
    names = ["LeftHand.Index.1 Stretched"]
    _select_in_tree(win, qtbot, names)
    vb = g.strip_of("other").vb
    vb.setRange(xRange=(-0.01, 0.03), yRange=(-1.5, 0.5), padding=0)
    qtbot.wait(20)
    c = doc.other_track(names[0]).curve
    vp = g.glw.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    p = _px(win, float(c.time[0]), -1.0)
    _mouse(vp, QEvent.Type.MouseMove, p, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, p, left, left)
    _mouse(vp, QEvent.Type.MouseButtonRelease, p, left, none)
    qtbot.wait(20)
    assert doc.selected_float_keys == {names[0]: {0}}
    # box over both keys
    a, b = _px(win, -0.005, -0.8), _px(win, 0.025, -1.2)
    _mouse(vp, QEvent.Type.MouseMove, a, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, a, left, left)
    for k in range(1, 6):
        _mouse(vp, QEvent.Type.MouseMove, a + (b - a) * (k / 5), none, left)
        qtbot.wait(12)  # pyqtgraph handles mouse moves at most 100 times a second
    _mouse(vp, QEvent.Type.MouseButtonRelease, b, left, none)
    qtbot.wait(20)
    assert doc.selected_float_keys == {names[0]: {0, 1}}
    # Escape mid-drag: back to the start, nothing on the undo stack
    start = _px(win, float(c.time[1]), -1.0)
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    for k in range(1, 6):
        _mouse(vp, QEvent.Type.MouseMove, start + QPoint(0, -8 * k), none, left)
        qtbot.wait(12)
    assert doc.other_track(names[0]).curve.value[1, 0] > -1.0
    win.graphs.input.cancel_drag()
    _mouse(vp, QEvent.Type.MouseButtonRelease, start + QPoint(0, -40), left, none)
    qtbot.wait(20)
    assert doc.other_track(names[0]).curve.value[1, 0] == -1.0 and doc.undo_stack.count() == 0


def test_a_selected_muscle_keys_tangent_handle_is_drawn_and_dragged(fist, qtbot):
    """The selected float key's handles are drawn as the rotation graphs draw theirs; dragging one
    sets the slope through the mouse (Free Smooth: both sides), one undo step, Escape-free."""
    win, _ = fist
    name = "RightHand.Index.2 Stretched"
    _select_in_tree(win, qtbot, [name])
    g, doc = win.graphs, win.doc
    vb = g.strip_of("other").vb
    c0 = doc.other_track(name).curve
    i = 1
    t, v = float(c0.time[i]), float(c0.value[i, 0])
    vb.setRange(xRange=(t - 0.05, t + 0.05), yRange=(v - 1.0, v + 1.0), padding=0)
    doc.select_float_keys({name: {i}})
    qtbot.wait(30)
    floats = g.floats
    ends = {(n, k, side): (x, y) for n, k, side, x, y in floats.handle_points}
    assert set(ends) == {(name, i, "in"), (name, i, "out")}
    hx, hy = g.strip_of("other").handle_pts.getData()
    assert len(hx) == 2 and sorted(hx) == sorted(x for x, _ in ends.values())
    # drag the out handle up: to a point 0.02 s after the key and 0.4 above it
    x0, y0 = ends[(name, i, "out")]
    vp = g.glw.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    start, end = _px(win, x0, y0), _px(win, t + 0.02, v + 0.4)
    before = doc.clip
    _mouse(vp, QEvent.Type.MouseMove, start, none, none)
    _mouse(vp, QEvent.Type.MouseButtonPress, start, left, left)
    for k in range(1, 9):
        _mouse(vp, QEvent.Type.MouseMove, start + (end - start) * (k / 8), none, left)
        qtbot.wait(12)
    _mouse(vp, QEvent.Type.MouseButtonRelease, end, left, none)
    qtbot.wait(30)
    c1 = doc.other_track(name).curve
    assert c1.out_slope[i, 0] == pytest.approx(0.4 / 0.02, rel=0.05)  # units per second
    assert c1.in_slope[i, 0] == c1.out_slope[i, 0]  # not broken: both sides follow
    left_mode, right_mode, broken = tangent_mode_sides(int(c1.tangent_mode[i, 0]))
    assert (left_mode, right_mode, broken) == (TangentMode.FREE, TangentMode.FREE, False)
    assert np.array_equal(c1.value, c0.value) and np.array_equal(c1.time, c0.time)
    assert doc.undo_stack.undoText() == "Edit float tangent"
    # the handle follows the new slope
    (n, k, side, x, y), *_ = [h for h in floats.handle_points if h[2] == "out"]
    assert (y - v) / (x - t) == pytest.approx(c1.out_slope[i, 0], rel=1e-6)
    doc.undo_stack.undo()
    assert doc.clip is before


def test_copy_and_paste_muscle_keys_at_the_time_cursor(win, qtbot):
    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(humanoid_muscle_clip(), None)
    name, other = "Left Forearm Stretch", "Left Hand Down-Up"
    _select_in_tree(win, qtbot, [name])
    c0 = doc.other_track(name).curve
    doc.select_float_keys({name: {0, 1}})
    win.copy_keys()
    assert set(win.clipboard) == {("float", name)}
    t = float(c0.time[20]) + 0.3 * float(c0.time[21] - c0.time[20])  # between two keys
    doc.set_time(t)
    assert doc.current_time == pytest.approx(t)
    win.paste_keys()
    c1 = doc.other_track(name).curve
    pasted = sorted(doc.selected_float_keys[name])
    assert c1.n_keys == c0.n_keys + 2 and len(pasted) == 2  # both between existing keys
    np.testing.assert_allclose(c1.time[pasted], t + (c0.time[:2] - c0.time[0]))
    np.testing.assert_array_equal(c1.value[pasted, 0], c0.value[:2, 0])
    assert doc.undo_stack.undoText().startswith("Paste float keys at ")
    # one copied curve pastes into the one shown curve, as Unity pastes into the selection
    _select_in_tree(win, qtbot, [other])
    n0 = doc.other_track(other).curve.n_keys
    win.paste_keys()
    assert doc.other_track(other).curve.n_keys > n0
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.other_track(name).curve.n_keys == c0.n_keys


def test_the_key_fields_show_and_edit_the_active_float_key(win, qtbot):
    """With no rotation key selected, the fields above the graphs are the first selected float
    key's, in the curve's own units; typing a value or a slope is one engine edit, one undo step."""
    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(humanoid_muscle_clip(), None)
    name = "Body:blendShape.Smile"
    _select_in_tree(win, qtbot, [name])
    f = win.key_fields
    assert f.name.text() == "No key selected" and not f.value.isEnabled()
    c0 = doc.other_track(name).curve
    doc.select_float_keys({name: {5, 9}})
    qtbot.wait(20)
    assert f.float_key == (name, 5) and f.name.text() == "key 5 · blendShape.Smile +1"
    assert f.value.suffix() == " %" and f.in_slope.suffix() == " %/s"
    assert f.time.value() == pytest.approx(float(c0.time[5]), abs=1e-4)
    assert f.value.value() == pytest.approx(float(c0.value[5, 0]), abs=1e-3)
    f.value.entered.emit(42.0)
    c1 = doc.other_track(name).curve
    assert c1.value[5, 0] == 42.0 and doc.undo_stack.undoText() == "Key 42.000%"
    f.out_slope.entered.emit(12.5)
    c2 = doc.other_track(name).curve
    assert c2.out_slope[5, 0] == 12.5 and c2.in_slope[5, 0] == 12.5  # Free Smooth: both sides
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert np.array_equal(doc.other_track(name).curve.value, c0.value)
    # nothing selected: empty fields
    doc.select_float_keys({})
    assert f.name.text() == "No key selected"


def test_the_key_table_holds_the_shown_float_curve(win, qtbot):
    """No rotation track selected, a muscle shown: the key table lists its keys (time, frame,
    value, tangents, slopes), mirrors the float-key selection both ways and edits a cell as one
    undo step."""
    from PySide6.QtCore import QItemSelectionModel

    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(humanoid_muscle_clip(), None)
    name = "Left Forearm Stretch"
    _select_in_tree(win, qtbot, [name])
    table = win.keys
    m = table.model
    c0 = doc.other_track(name).curve
    assert m.float_name == name and m.rowCount() == c0.n_keys
    headers = [m.headerData(k, Qt.Orientation.Horizontal) for k in range(m.columnCount())]
    assert headers == ["Time (s)", "Frame", "Value", "Tangents", "In slope", "Out slope"]
    assert table.caption_info.text() == f"— float curve (muscle), {c0.n_keys} keys"
    assert m.data(m.index(3, 2)) == f"{c0.value[3, 0]:.4f}"
    # the graphs' selection shows in the table, and the table's in the graphs
    doc.select_float_keys({name: {4, 6}})
    qtbot.wait(20)
    assert {i.row() for i in table.view.selectionModel().selectedRows()} == {4, 6}
    sm = table.view.selectionModel()
    sm.select(
        m.index(8, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )
    assert doc.selected_float_keys == {name: {8}}
    # an edited cell: one engine edit, one undo step, the row redrawn
    assert m.setData(m.index(8, 2), "0.25")
    assert doc.other_track(name).curve.value[8, 0] == 0.25 and m.data(m.index(8, 2)) == "0.2500"
    assert doc.undo_stack.undoText() == "Set key 8 Value"
    doc.undo_stack.undo()
    assert doc.other_track(name).curve.value[8, 0] == c0.value[8, 0]
    assert m.data(m.index(8, 2)) == f"{c0.value[8, 0]:.4f}"


def test_one_selection_across_rotation_and_float_keys(win, qtbot):
    """A plain click on a rotation key deselects the float keys, and one on a float key the rotation
    keys: Delete, the tangent presets and the fields act on what is shown selected."""
    from dataclasses import replace

    from curveeditor.engine.clip import RotationTrack
    from curveeditor.engine.tangents import make_curve

    base = humanoid_muscle_clip()
    t = np.arange(31) / 30.0
    hips = RotationTrack("Hips", "euler", make_curve(t, np.stack([30 * np.sin(3 * t), 0 * t, 0 * t], axis=1)))
    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(replace(base, tracks=(hips,)), None)
    name = "Left Forearm Stretch"
    doc.select_paths(["Hips"])
    doc.select_other([name])
    qtbot.wait(30)
    g = win.graphs
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    vp = g.glw.viewport()

    def click(vb, x, y):
        p = g.glw.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
        _mouse(vp, QEvent.Type.MouseButtonPress, p, left, left)
        _mouse(vp, QEvent.Type.MouseButtonRelease, p, left, none)
        qtbot.wait(20)

    doc.select_float_keys({name: {3}})
    xvb = g.euler_plots[0].getViewBox()
    click(xvb, float(t[5]), float(hips.curve.value[5, 0]))
    assert doc.selected_keys == {"Hips": {5}} and doc.selected_float_keys == {}
    f = doc.other_track(name).curve
    click(g.strip_of("other").vb, float(f.time[7]), float(f.value[7, 0]))
    assert doc.selected_float_keys == {name: {7}} and not any(doc.selected_keys.values())


FACE = "anim/HEL-d__Facecapture__Assets_0000000001.anim"


def test_a_facial_capture_clips_blend_shapes_in_every_view(win, qtbot, corpus_dir, tmp_path):
    """The corpus's facial-capture clip (5 blend shapes, 118 keys each, broken Linear tangents):
    shown, its curves are in the Keys table, the key fields and the dope sheet, and a slope typed
    in the fields is one undo step whose save changes only that key's lines (and its editor copy's)."""
    from curveeditor.io import read_clip

    path = corpus_dir / FACE
    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(read_clip(path), str(path))
    names = [o.name for o in doc.clip.other_tracks if o.kind == "float" and not o.meta.get("mirror_of")][:3]
    _select_in_tree(win, qtbot, names)
    assert doc.shown_float_curves() == names
    c0 = doc.other_track(names[0]).curve
    assert c0.n_keys == 118
    assert win.keys.model.float_name == names[0] and win.keys.model.rowCount() == 118
    rows = [r for r in win.tools.dope.canvas.rows if r.kind == "float"]
    assert [r.float_name for r in rows] == names
    np.testing.assert_array_equal(win.tools.dope.canvas.row_times(rows[0]), c0.time)
    doc.select_float_keys({names[0]: {40}})
    qtbot.wait(20)
    assert win.key_fields.float_key == (names[0], 40) and win.key_fields.value.suffix() == " %"
    win.key_fields.in_slope.entered.emit(-250.0)
    c1 = doc.other_track(names[0]).curve
    assert c1.in_slope[40, 0] == -250.0 and doc.undo_stack.count() == 1
    out = tmp_path / "face-edited.anim"
    _save(win, out)
    diff = _changed_lines(path, out)
    assert diff and all(("inSlope:" in ln or "tangentMode:" in ln) for ln in diff), diff
    doc.undo_stack.undo()
    assert np.array_equal(doc.other_track(names[0]).curve.in_slope, c0.in_slope)
