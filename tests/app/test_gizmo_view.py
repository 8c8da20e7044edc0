"""GizmoView under Xvfb: it renders, follows the time cursor, mirrors Unity's frame correctly, and
shows gimbal proximity and the preview."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QVector3D

# Must be set before the QApplication exists (tests/app/conftest.py does it too).
QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)

from curveeditor.app.model.document import ClipDocument  # noqa: E402
from curveeditor.app.view3d.gizmo import GizmoView  # noqa: E402
from curveeditor.engine import display  # noqa: E402
from curveeditor.engine.clip import Clip, RotationTrack  # noqa: E402
from curveeditor.engine.curves import Curve  # noqa: E402

BG = np.array([38, 40, 44])


def _track(values, times=None, path="Root/Head"):
    values = np.asarray(values, dtype=float)
    times = np.arange(len(values)) * 0.5 if times is None else np.asarray(times, dtype=float)
    return RotationTrack(path, "euler", Curve.make(times, values))


def _doc(*tracks):
    doc = ClipDocument()
    doc.load(Clip("c", 30.0, list(tracks)), None)
    return doc


@pytest.fixture
def spinning(qtbot):
    # Y spins 0 -> 360 over 2 s (key every 0.5 s); X and Z stay 0.
    doc = _doc(_track([[0, 90 * i, 0] for i in range(5)]))
    view = GizmoView(doc)
    qtbot.addWidget(view)
    view.resize(480, 420)
    view.show()
    qtbot.waitExposed(view)
    return doc, view


def _foreground(img: np.ndarray) -> np.ndarray:
    return np.abs(img[..., :3].astype(int) - BG).sum(axis=2) > 30


def test_renders_non_background_pixels(spinning):
    _doc, view = spinning
    img = view.render_to_array()
    assert img.shape[0] > 200 and img.shape[1] > 200
    fg = _foreground(img)
    assert fg.sum() > 2000, "the grid, sphere and tripod should cover thousands of pixels"
    # The three axis colours are present: strong red, green and blue pixels.
    r, g, b = (img[..., i].astype(int) for i in range(3))
    assert ((r > 180) & (g < 100) & (b < 100)).sum() > 20
    assert ((g > 150) & (r < 160) & (b < 120)).sum() > 20
    assert ((b > 180) & (r < 120)).sum() > 20


def test_tripod_pixels_follow_time(spinning):
    doc, view = spinning
    doc.set_time(0.0)
    a = view.render_to_array()
    rot_a = view.tripod_rotation()
    doc.set_time(0.5)  # Y = 90 deg
    b = view.render_to_array()
    rot_b = view.tripod_rotation()
    changed = np.abs(a[..., :3].astype(int) - b[..., :3].astype(int)).sum(axis=2) > 60
    assert changed.sum() > 150, "moving the time must move the tripod on screen"
    assert not np.allclose(rot_a, rot_b)
    # The item's transform is what was computed (setTransform, no rebuild).
    m = np.array(view.tripod_transform().data()).reshape(4, 4).T  # column-major -> row-major
    np.testing.assert_allclose(m[:3, :3], rot_b, atol=1e-6)


def test_unity_y_plus_90_turns_forward_to_unity_plus_x(qtbot):
    doc = _doc(_track([[0, 90, 0], [0, 90, 0]]))
    view = GizmoView(doc)
    qtbot.addWidget(view)
    rot_gl = view.tripod_rotation()
    fwd_gl = rot_gl @ display.unity_to_gl_points(np.array([0.0, 0.0, 1.0]))
    fwd_unity = display.unity_to_gl_points(fwd_gl)  # the mirror is its own inverse
    np.testing.assert_allclose(fwd_unity, [1.0, 0.0, 0.0], atol=1e-9)
    # Same through the Qt transform set on the tripod item.
    p = view.tripod_transform().map(QVector3D(0.0, 0.0, -1.0))  # Unity +Z in GL
    np.testing.assert_allclose([p.x(), p.y(), p.z()], [1.0, 0.0, 0.0], atol=1e-6)
    # Up stays up, and GL's Y (Unity up) is the world's Z (pyqtgraph's camera up).
    up = rot_gl @ np.array([0.0, 1.0, 0.0])
    np.testing.assert_allclose(up, [0.0, 1.0, 0.0], atol=1e-9)
    w = view.scene_transform().map(QVector3D(0.0, 1.0, 0.0))
    np.testing.assert_allclose([w.x(), w.y(), w.z()], [0.0, 0.0, 1.0], atol=1e-6)


def test_unity_x_plus_90_pitches_forward_down(qtbot):
    # Unity: Quaternion.Euler(90, 0, 0) * forward = (0, -1, 0) (left-handed: +X pitches down).
    doc = _doc(_track([[90, 0, 0], [90, 0, 0]]))
    view = GizmoView(doc)
    qtbot.addWidget(view)
    fwd_gl = view.tripod_rotation() @ display.unity_to_gl_points(np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(display.unity_to_gl_points(fwd_gl), [0.0, -1.0, 0.0], atol=1e-9)


def test_gimbal_rings_turn_red_near_lock(qtbot):
    doc = _doc(_track([[0, 30, 0], [89, 30, 10]], times=[0.0, 1.0]))
    view = GizmoView(doc)
    qtbot.addWidget(view)
    doc.set_time(0.0)
    calm = view.ring_colors()
    doc.set_time(1.0)
    locked = view.ring_colors()
    outer_calm, outer_locked = calm[0], locked[0]
    assert outer_locked[0] > 0.9 and outer_locked[1] < 0.3, outer_locked
    assert outer_calm != outer_locked
    assert view._gimbal_proximity > 0.9


def test_preview_is_main_tripod_and_clip_is_ghost(qtbot):
    track = _track([[0, 0, 0], [0, 0, 0]])
    doc = _doc(track)
    view = GizmoView(doc)
    qtbot.addWidget(view)
    np.testing.assert_allclose(view.tripod_rotation(), np.eye(3), atol=1e-9)
    assert not view.before_tripod.group.visible()
    preview = Clip("c", 30.0, [_track([[0, 90, 0], [0, 90, 0]])])
    doc.set_preview(preview)
    fwd_gl = view.tripod_rotation() @ np.array([0.0, 0.0, -1.0])
    np.testing.assert_allclose(display.unity_to_gl_points(fwd_gl), [1, 0, 0], atol=1e-9)
    assert view.before_tripod.group.visible()
    before = np.array(view.before_tripod.group.transform().data()).reshape(4, 4).T
    np.testing.assert_allclose(before[:3, :3], np.eye(3), atol=1e-9)
    assert "preview" in view._legend.text()
    doc.set_preview(None)
    np.testing.assert_allclose(view.tripod_rotation(), np.eye(3), atol=1e-9)


def test_no_selection_shows_message(qtbot):
    doc = ClipDocument()
    view = GizmoView(doc)
    qtbot.addWidget(view)
    assert view.tripod_rotation() is None
    assert "No rotation track" in view._title.text()


def test_reset_view_restores_camera(spinning):
    _doc, view = spinning
    before = dict(view.view.cameraParams())
    view.view.orbit(40, 15)
    view.view.setCameraParams(distance=9.0)
    view.reset_action.trigger()
    after = view.view.cameraParams()
    assert after["distance"] == pytest.approx(before["distance"])
    assert after["azimuth"] == pytest.approx(before["azimuth"])
    assert after["elevation"] == pytest.approx(before["elevation"])


def test_edit_of_another_track_does_not_redraw(qtbot):
    a = _track([[0, 0, 0], [0, 90, 0]], path="A")
    b = _track([[0, 0, 0], [0, 0, 0]], path="B")
    doc = _doc(a, b)
    view = GizmoView(doc)
    qtbot.addWidget(view)
    doc.set_time(1.0)
    renders = []
    view.rendered.connect(lambda: renders.append(1))
    moved_b = b.with_curve(b.curve.with_keys(value=b.curve.value + [10.0, 0.0, 0.0]))
    doc.apply_clip(doc.clip.with_track(moved_b), "move B")
    assert renders == []
    moved_a = a.with_curve(a.curve.with_keys(value=a.curve.value + [0.0, 0.0, 30.0]))
    doc.apply_clip(doc.clip.with_track(moved_a), "move A")
    assert renders == [1]
    fwd = display.unity_to_gl_points(view.tripod_rotation() @ np.array([0.0, 0.0, -1.0]))
    np.testing.assert_allclose(fwd, [1.0, 0.0, 0.0], atol=1e-9)  # Z roll keeps forward


def test_rings_of_a_quaternion_track_use_its_order(qtbot):
    """display.sample_track decomposes quaternion tracks in the track's order; the rings and the label
    must use that same order (an 'XYZ' track near its Y lock is not near ZXY's X lock)."""
    from curveeditor.engine.rotations import euler_to_quat

    q = euler_to_quat(np.array([[10.0, 30.0, 20.0], [10.0, 89.0, 20.0]]), "XYZ")
    track = RotationTrack("Root/Head", "quaternion", Curve.make(np.array([0.0, 1.0]), q), order="XYZ")
    doc = _doc(track)
    view = GizmoView(doc)
    qtbot.addWidget(view)
    doc.set_time(1.0)
    s = display.sample_track(track, np.array([1.0]))
    want = display.gimbal_rings(s.quat[0], "XYZ", euler=s.euler[0])
    assert [r.axis for r in want] == [0, 1, 2]  # outer X (last applied), middle Y, inner Z
    for item, ring in zip(view._rings, want, strict=True):
        pts = np.asarray(item.pos)
        ring_pts = display.unity_to_gl_points(ring.points)
        # Same plane: every drawn point is perpendicular to the ring's (GL) normal.
        normal = display.unity_to_gl_points(ring.normal)
        assert np.max(np.abs(pts @ normal)) < 1e-6 * max(1.0, np.max(np.abs(ring_pts)))  # float32 pos
    assert "gimbal XYZ" in view._gimbal_label.text()
    assert view._gimbal_proximity > 0.9


def test_tripod_labels_are_one_item_drawing_what_three_text_items_drew(spinning):
    """The main tripod's X/Y/Z labels are one GL item with one QPainter per frame (three
    ``GLTextItem`` each opened their own: 0.5 ms of a 3 ms playback frame), drawing the same pixels."""
    import pyqtgraph.opengl as gl

    doc, view = spinning
    doc.set_time(0.7)  # a turned tripod: the labels away from their rest place
    group = view.main_tripod.group
    texts = [c for c in group.childItems() if isinstance(c, gl.GLTextItem)]
    assert texts == [], "one label item, not a GLTextItem per axis"
    labels = view.main_tripod.labels
    assert [t for _p, t, _c in labels.labels] == ["X", "Y", "Z"]
    new = view.render_to_array()
    # pyqtgraph's own items in its place, as the tripod was built before
    labels.setParentItem(None)
    old_items = [
        gl.GLTextItem(pos=np.array([p.x(), p.y(), p.z()], dtype=float), text=t, color=c, parentItem=group)
        for p, t, c in labels.labels
    ]
    old = view.render_to_array()
    assert _foreground(old).sum() > 2000
    np.testing.assert_array_equal(view.render_to_array(), old)  # rendering is deterministic
    np.testing.assert_array_equal(new, old)
    for it in old_items:
        it.setParentItem(None)
    group_without = view.render_to_array()
    assert np.abs(group_without.astype(int) - old.astype(int)).sum() > 0, "the labels draw pixels"


def test_world_axis_labels_are_one_item_drawing_what_three_text_items_drew(spinning):
    """The "+X / +Y up / +Z forward" labels (shown without a character) are one GL item too, drawn
    at the same place among the scene's items, with the same pixels as three ``GLTextItem``s."""
    import pyqtgraph.opengl as gl

    _doc, view = spinning
    labels = view._world_labels
    assert labels.visible()
    scene = labels.parentItem()
    assert not any(isinstance(c, gl.GLTextItem) for c in scene.childItems())
    assert [t for _p, t, _c in labels.labels] == ["+X", "+Y up", "+Z forward"]
    from curveeditor.app.common.theme import LIGHT

    dark_colours = [c.rgba() for _p, _t, c in labels.labels]
    view.set_theme(LIGHT)  # the colours follow the theme (darker labels on the light background)
    assert [c.rgba() for _p, _t, c in labels.labels] != dark_colours
    new = view.render_to_array()
    children = scene._GLGraphicsItem__children  # the draw order: replaced in place
    at = children.index(labels)
    olds = [
        gl.GLTextItem(pos=np.array([p.x(), p.y(), p.z()], dtype=float), text=t, color=c, font=labels.font)
        for p, t, c in labels.labels
    ]
    labels.setParentItem(None)
    for k, it in enumerate(olds):
        it.setParentItem(scene)
        children.remove(it)
        children.insert(at + k, it)
    old = view.render_to_array()
    np.testing.assert_array_equal(new, old)
    for it in olds:
        it.setParentItem(None)
    assert np.abs(view.render_to_array().astype(int) - old.astype(int)).sum() > 0, "the labels draw pixels"
