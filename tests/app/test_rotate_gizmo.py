"""The 3D view's rotation gizmo on corpus rigs: a drag keys the current frame with the rotation the
mouse made, checked against scipy rotations composed in Unity's frame (the GL view mirrored back
independently, ``M R M`` with ``M = diag(1, 1, -1)``), one undo step per drag, curves and key table
live, auto-key inserting a key (or editing the selected one), Escape cancelling, a click selecting."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication
from scipy.spatial.transform import Rotation

from curveeditor.engine import display
from curveeditor.engine.clip import played
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.skeleton import pose
from curveeditor.io import read_clip
from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip
from tests.app.windows import shown_window
from tests.conftest import corpus_files

pytestmark = pytest.mark.gui
WALK = corpus_files("bvh", "*cmu_12_01_walk.bvh")
GANGNAM = corpus_files("bvh", "*Gangnam-Style.bvh")
SPARSE = corpus_files("anim", "*Player_EulerAnimation.anim")  # 4 keys per bone, with positions
MALMAARS = corpus_files("anim", "Malmaars__3Dto2DTool__Assets_Resources_LoadedAnimationanim.anim")
MIRROR = np.diag([1.0, 1.0, -1.0])  # Unity (left-handed) <-> GL (right-handed): z mirrored
L, NB = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("rotate"), active=True)


def _send(view, et, pos, button, buttons):
    p = QPointF(float(pos[0]), float(pos[1]))
    ev = QMouseEvent(
        et,
        p,
        QPointF(view.mapToGlobal(QPoint(int(p.x()), int(p.y())))),
        button,
        buttons,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(view, ev)


def _load(win, qtbot, path, bone, t=None):
    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(read_clip(path) if not hasattr(path, "tracks") else path, None)
    tr = next(x for x in doc.clip.tracks if x.path.endswith(bone))
    doc.select_paths([tr.path])
    if t is not None:
        doc.set_time(t)
    win.gizmo.view_widget.setMinimumSize(440, 420)
    qtbot.wait(60)
    win.tools.rotate.set_enabled(True)
    win.tools.rotate.set_space("local")
    win.gizmo.reset_view()
    qtbot.wait(60)
    return doc, tr


def _circle_drag(win, qtbot, ring: str, degrees: float, steps: int = 12, release: bool = True, grab: int = 8):
    """Press on ``ring`` and move the mouse about the gizmo's centre by ``degrees`` (counter-clockwise
    on screen for positive values), at the ring's radius. Returns (centre px, press px, last px)."""
    rot, view = win.tools.rotate, win.gizmo.view
    c = rot.ring_pixels("center")[0]
    px = rot.ring_pixels(ring)
    if ring == "free":
        p0 = c + 0.4 * (px[0] - c)
    else:
        front = [k for k in range(0, len(px) - 1, 4) if rot.pick(*px[k]) == ring]
        assert front, f"no point of the {ring} ring picks it"
        p0 = px[front[min(grab, len(front) - 1)]]
    assert rot.pick(*p0) == ring
    rel = p0 - c
    r, a0 = float(np.hypot(*rel)), float(np.arctan2(rel[1], rel[0]))
    _send(view, QEvent.Type.MouseMove, p0, NB, NB)
    _send(view, QEvent.Type.MouseButtonPress, p0, L, L)
    pos = p0
    for k in range(1, steps + 1):
        a = a0 - np.radians(degrees) * k / steps  # pixels: y down, so minus = counter-clockwise
        pos = c + r * np.array([np.cos(a), np.sin(a)])
        _send(view, QEvent.Type.MouseMove, pos, NB, L)
        qtbot.wait(2)
    if release:
        _send(view, QEvent.Type.MouseButtonRelease, pos, L, NB)
        qtbot.wait(20)
    return c, p0, pos


def _toward_viewer(win, center_scene) -> np.ndarray:
    """Unit vector from the gizmo's centre to the camera, in the GL scene frame (from Qt's matrices)."""
    g = win.gizmo
    inv, _ok = g.scene_transform().inverted()
    e = inv.map(g.view.cameraPosition())
    d = np.array([e.x(), e.y(), e.z()]) - center_scene
    return d / np.linalg.norm(d)


def _unity_rotation(gl_axis, degrees) -> Rotation:
    """A rotation drawn in GL about ``gl_axis``, expressed in Unity's frame: ``M R M``."""
    r = Rotation.from_rotvec(np.asarray(gl_axis) * np.radians(degrees)).as_matrix()
    return Rotation.from_matrix(MIRROR @ r @ MIRROR)


def _parent_world(win, path, t) -> Rotation:
    layer = win.tools.skeleton
    skel = layer.skeleton
    j = skel.index(path)
    parent = skel.parents[j]
    if parent < 0:
        return Rotation.identity()
    return Rotation.from_quat(pose(skel, win.doc.clip, [t]).rotations[0, parent])


@pytest.mark.skipif(not WALK, reason="corpus BVH not present")
def test_view_ring_drag_keys_the_rotation_composed_in_unitys_frame_one_undo_step(win, qtbot):
    doc, tr = _load(win, qtbot, WALK[0], "LeftArm", t=1.0)
    t = doc.snap_time(doc.current_time)
    j = win.tools.skeleton.skeleton.index(tr.path)
    center = win.tools.skeleton.joint_scene_positions()[j]
    toward = _toward_viewer(win, center)  # before the drag: the axis the view ring turns about
    parent = _parent_world(win, tr.path, t)
    q0 = Rotation.from_quat(played(tr, [t])[0])
    n0 = doc.undo_stack.count()
    _circle_drag(win, qtbot, "view", 40.0)
    # counter-clockwise on screen = right-handed about the axis toward the viewer: +40 degrees
    want = parent.inv() * _unity_rotation(toward, 40.0) * parent * q0
    new = doc.clip.track(tr.path)
    assert geodesic_angle(played(new, [t])[0], want.as_quat()) < 1e-6
    assert doc.undo_stack.count() == n0 + 1 and doc.undo_stack.text(n0) == "Rotate LeftArm"
    assert new.order == tr.order and new.n_keys == tr.n_keys  # BVH: every frame has its key
    k = int(np.argmin(np.abs(tr.times - t)))
    keep = np.arange(tr.n_keys) != k
    np.testing.assert_array_equal(new.curve.value[keep], tr.curve.value[keep])
    np.testing.assert_array_equal(new.curve.tangent_mode, tr.curve.tangent_mode)
    assert doc.selected_keys == {tr.path: {k}}  # the keyed key is selected: the table shows it
    doc.undo_stack.undo()
    np.testing.assert_array_equal(doc.clip.track(tr.path).curve.value, tr.curve.value)


@pytest.mark.skipif(not GANGNAM, reason="corpus BVH not present")
def test_local_ring_turns_about_the_bones_own_axis_and_the_grabbed_point_follows_the_mouse(win, qtbot):
    doc, tr = _load(win, qtbot, GANGNAM[0], "LeftForeArm", t=3.0)
    t = doc.current_time
    rot = win.tools.rotate
    geo = rot.compute_geometry()
    q0 = Rotation.from_quat(played(tr, [t])[0])
    parent = _parent_world(win, tr.path, t)
    best = None
    for name in "xyz":  # the most open ring: the screen angle is its angle
        grip_px = rot.ring_pixels(name)
        rel = grip_px - rot.ring_pixels("center")[0]
        area = 0.5 * abs(np.sum(rel[:-1, 0] * rel[1:, 1] - rel[1:, 0] * rel[:-1, 1]))
        if best is None or area > best[1]:
            best = (name, area)
    name = best[0]
    ring_pts = next(p for n, _a, p in geo.rings if n == name)
    c, p0, last = _circle_drag(win, qtbot, name, 25.0)
    q1 = Rotation.from_quat(played(doc.clip.track(tr.path), [t])[0])
    delta = (q0.inv() * q1).as_rotvec()  # in the bone's own frame
    axis = np.eye(3)["xyz".index(name)]
    assert np.linalg.norm(np.cross(delta, axis)) < 1e-9  # about the bone's own axis only
    assert np.degrees(np.linalg.norm(delta)) == pytest.approx(25.0, abs=1e-6)
    # the grabbed ring point, turned by the new world rotation (mirrored into GL), moves on screen
    # the way the mouse went: left-handed data mirrored the right way
    w_gl = MIRROR @ ((parent * q1) * (parent * q0).inv()).as_matrix() @ MIRROR
    k = int(np.argmin(np.linalg.norm(rot.ring_pixels(name) - p0, axis=1)))
    moved = geo.center + w_gl @ (ring_pts[k] - geo.center)
    g = win.gizmo
    from curveeditor.app.view3d.projection import scene_mvp, to_pixels

    px = to_pixels(
        scene_mvp(g.view, g._scene), np.stack([ring_pts[k], moved]), g.view.width(), g.view.height()
    )

    def ang(p):
        return np.arctan2(p[1] - c[1], p[0] - c[0])

    mouse_turn = (ang(last) - ang(p0) + np.pi) % (2 * np.pi) - np.pi
    point_turn = (ang(px[1]) - ang(px[0]) + np.pi) % (2 * np.pi) - np.pi
    assert np.sign(point_turn) == np.sign(mouse_turn) and abs(point_turn) > np.radians(5)
    doc.undo_stack.undo()


@pytest.mark.skipif(not SPARSE, reason="corpus .anim not present")
def test_auto_key_inserts_a_key_at_the_current_frame_or_edits_the_selected_key(win, qtbot):
    doc, tr = _load(win, qtbot, SPARSE[0], "RightUpperArm", t=0.5)
    assert not np.any(np.abs(tr.times - 0.5) < 1e-6)
    t = doc.current_time
    parent = _parent_world(win, tr.path, t)
    j = win.tools.skeleton.skeleton.index(tr.path)
    toward = _toward_viewer(win, win.tools.skeleton.joint_scene_positions()[j])
    q0 = Rotation.from_quat(played(tr, [t])[0])
    _circle_drag(win, qtbot, "view", -30.0)
    new = doc.clip.track(tr.path)
    assert new.n_keys == tr.n_keys + 1 and np.any(np.abs(new.times - 0.5) < 1e-6)
    want = parent.inv() * _unity_rotation(toward, -30.0) * parent * q0
    assert geodesic_angle(played(new, [t])[0], want.as_quat()) < 1e-6
    i = int(np.argmin(np.abs(new.times - 0.5)))
    old = np.delete(np.arange(new.n_keys), i)
    np.testing.assert_array_equal(new.curve.value[old], tr.curve.value)  # the other keys as they were
    np.testing.assert_array_equal(new.curve.tangent_mode[old], tr.curve.tangent_mode)
    doc.undo_stack.undo()
    # with one key selected, the drag keys into it: the cursor moves there, no key is added
    doc.select_keys({tr.path: {2}})
    doc.set_time(0.1)
    qtbot.wait(30)
    _circle_drag(win, qtbot, "view", 20.0)
    new = doc.clip.track(tr.path)
    assert new.n_keys == tr.n_keys and doc.current_time == pytest.approx(float(tr.times[2]))
    assert not np.array_equal(new.curve.value[2], tr.curve.value[2])
    np.testing.assert_array_equal(np.delete(new.curve.value, 2, axis=0), np.delete(tr.curve.value, 2, axis=0))
    doc.undo_stack.undo()


@pytest.mark.skipif(not MALMAARS, reason="corpus .anim not present")
def test_single_gizmo_free_rotate_on_a_quaternion_track_stays_hemisphere_continuous(win, qtbot):
    doc, tr = _load(win, qtbot, MALMAARS[0], "mixamorig:Spine", t=1.0)
    assert not win.tools.skeleton.active() and tr.kind == "quaternion"
    t = doc.current_time
    q0 = Rotation.from_quat(played(tr, [t])[0])
    _circle_drag(win, qtbot, "free", 60.0, steps=8)
    new = doc.clip.track(tr.path)
    assert new.n_keys == tr.n_keys + 1  # no key at 1.0 s: one inserted
    v = new.curve.value / np.linalg.norm(new.curve.value, axis=1, keepdims=True)
    assert np.all(np.sum(v[1:] * v[:-1], axis=1) >= 0)  # hemisphere-continuous
    q1 = Rotation.from_quat(played(new, [t])[0])
    assert (q1 * q0.inv()).magnitude() > np.radians(5)  # it turned
    doc.undo_stack.undo()


@pytest.mark.skipif(not GANGNAM, reason="corpus BVH not present")
def test_curves_and_key_table_follow_the_drag_live_and_escape_cancels(win, qtbot):
    doc, tr = _load(win, qtbot, GANGNAM[0], "LeftArm", t=2.0)
    k = int(np.argmin(np.abs(tr.times - doc.current_time)))
    n0 = doc.undo_stack.count()
    _circle_drag(win, qtbot, "view", 35.0, release=False)
    assert doc.in_live_edit()
    qtbot.wait(250)  # the key table follows at most every 150 ms mid-drag
    live = doc.clip.track(tr.path)
    assert not np.array_equal(live.curve.value[k], tr.curve.value[k])
    model = win.keys.model
    col = next(c for c in range(model.columnCount()) if model.headerData(c, Qt.Orientation.Horizontal) == "X")
    shown = float(model.data(model.index(k, col)))
    assert shown == pytest.approx(float(live.curve.value[k, 0]), abs=1e-3)
    # the graphs draw the live track: the X key markers and the X curve pass through the new value
    kx, ky = win.graphs.items[tr.path].keys[0][0].getData()
    i = int(np.argmin(np.abs(kx - tr.times[k])))
    assert ky[i] == pytest.approx(float(live.curve.value[k, 0]), abs=1e-6)
    curve = win.graphs.items[tr.path].curves[0][0]
    cx, cy = curve.xData, curve.yData  # the data set, not its downsampled display
    near = np.abs(cx - tr.times[k]) < 0.05
    want = display.sample_track(live, cx[near]).euler[:, 0]
    np.testing.assert_allclose(cy[near], want, atol=1e-6)
    before = display.sample_track(tr, cx[near]).euler[:, 0]
    assert np.abs(want - before).max() > 1.0  # it did move there
    QApplication.sendEvent(
        win.gizmo.view, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier)
    )
    qtbot.wait(20)
    assert not doc.in_live_edit() and doc.undo_stack.count() == n0
    np.testing.assert_array_equal(doc.clip.track(tr.path).curve.value, tr.curve.value)
    _send(win.gizmo.view, QEvent.Type.MouseButtonRelease, (10, 10), L, NB)


@pytest.mark.skipif(not WALK, reason="corpus BVH not present")
def test_a_click_inside_the_gizmo_selects_the_bone_under_it_and_spaces_orient_the_rings(win, qtbot):
    doc, tr = _load(win, qtbot, WALK[0], "LeftArm", t=1.0)
    rot, layer = win.tools.rotate, win.tools.skeleton
    # the bone from the elbow (LeftForeArm) to the wrist lies inside the rings
    skel = layer.skeleton
    fore = skel.index(next(p for p in skel.paths if p.endswith("LeftForeArm")))
    hand = int(np.nonzero(skel.parents == fore)[0][0])
    px = layer.joint_pixels()
    mid = 0.5 * (px[fore] + px[hand])
    assert rot.pick(*mid) == "free" and layer.bone_at(*mid) == skel.paths[fore], mid
    _send(win.gizmo.view, QEvent.Type.MouseButtonPress, mid, L, L)
    _send(win.gizmo.view, QEvent.Type.MouseButtonRelease, mid, L, NB)
    qtbot.wait(20)
    assert doc.selected_paths == [skel.paths[fore]]
    assert doc.undo_stack.count() == 0  # a click edits nothing
    # World space: the rings are the world axes; Parent: the parent's axes (from the engine's pose)
    doc.select_paths([tr.path])
    qtbot.wait(20)
    rot.set_space("world")
    geo = rot.compute_geometry()
    np.testing.assert_allclose([a for _n, a, _p in geo.rings[:3]], MIRROR, atol=1e-12)
    rot.set_space("parent")
    geo = rot.compute_geometry()
    par = _parent_world(win, tr.path, doc.current_time).as_matrix()
    np.testing.assert_allclose(np.array([a for _n, a, _p in geo.rings[:3]]), (MIRROR @ par).T, atol=1e-9)
    rot.set_space("local")


def test_single_gizmo_on_the_biped_rig_keys_a_deep_bone(win, qtbot):
    doc, tr = _load(win, qtbot, biped_clip(120, 30.0), DEEP_BIPED_BONE.rsplit("/", 1)[-1], t=1.5)
    t = doc.current_time
    toward = _toward_viewer(win, np.zeros(3))
    q0 = Rotation.from_quat(played(tr, [t])[0])
    _circle_drag(win, qtbot, "view", 50.0)
    want = _unity_rotation(toward, 50.0) * q0  # no skeleton: the track's parent frame is the view's
    assert geodesic_angle(played(doc.clip.track(tr.path), [t])[0], want.as_quat()) < 1e-6
    assert doc.undo_stack.text(doc.undo_stack.count() - 1) == "Rotate Bip001 L Finger12"
    doc.undo_stack.undo()
