"""Rotating a pose at one time and keying it (the gizmo's engine half), checked against scipy's
rotations composed independently in Unity's frame; and the mouse-to-angle mapping on pixels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from curveeditor.engine import display
from curveeditor.engine.clip import RotationTrack, played
from curveeditor.engine.curves import TangentMode, tangent_mode_bits
from curveeditor.engine.pose_edit import (
    axis_angle,
    circle_points,
    grip_ring,
    key_pose,
    ring_angle,
    ring_axes,
    rotate_pose,
    rotated_local,
    trackball,
)
from curveeditor.engine.rotations import geodesic_angle, nearest_euler
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip
from tests.conftest import corpus_files

GANGNAM = corpus_files("bvh", "*Gangnam-Style.bvh")


def _track(order="zxy", n=9, kind="euler"):
    t = np.arange(n) / 10.0
    e = np.stack([20 * np.sin(t * 3), 170 + 30 * t, -40 * np.cos(t * 2)], axis=1)
    if kind == "euler":
        return RotationTrack("Root/Arm", "euler", make_curve(t, e), order=order)
    q = Rotation.from_euler("zxy", e[:, [2, 0, 1]], degrees=True).as_quat()
    return RotationTrack("Root/Arm", "quaternion", make_curve(t, q))


def _scipy_q(q):
    return Rotation.from_quat(np.asarray(q))


def test_world_space_rotation_keys_the_pose_composed_in_unitys_frame():
    tr = _track()
    parent = Rotation.from_euler("xyz", [30, -50, 10], degrees=True)
    axis = np.array([0.3, -0.8, 0.5])
    t = 0.3  # a key
    res = rotate_pose(tr, t, axis, 37.0, space="world", parent_q=parent.as_quat())
    q0 = _scipy_q(played(tr, [t])[0])
    want = parent.inv() * Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.radians(37.0)) * parent * q0
    got = played(res.track, [t])[0]
    assert geodesic_angle(got, want.as_quat()) < 1e-6
    assert not res.inserted and res.index == 3
    # every other key untouched, modes untouched
    keep = np.arange(tr.n_keys) != 3
    np.testing.assert_array_equal(res.track.curve.value[keep], tr.curve.value[keep])
    np.testing.assert_array_equal(res.track.curve.tangent_mode, tr.curve.tangent_mode)


@pytest.mark.parametrize("space", ["local", "parent", "world"])
def test_spaces(space):
    q = Rotation.from_euler("zxy", [10, 70, -20], degrees=True)
    p = Rotation.from_euler("zxy", [-30, 5, 60], degrees=True)
    r = Rotation.from_rotvec(np.radians(25) * np.array([0, 1, 0]))
    got = rotated_local(q.as_quat(), [0, 1, 0], 25, space, p.as_quat())
    want = {"local": q * r, "parent": r * q, "world": p.inv() * r * p * q}[space]
    assert geodesic_angle(got, want.as_quat()) < 1e-9
    # the ring axes: turning about ring_axes(space)[1] in world space is the same rotation
    world_axis = ring_axes(space, q.as_quat(), p.as_quat())[1]
    via_world = rotated_local(q.as_quat(), world_axis, 25, "world", p.as_quat())
    assert geodesic_angle(via_world, want.as_quat()) < 1e-9


def test_a_key_is_inserted_between_keys_and_nothing_else_moves():
    tr = _track(n=5)
    tr = tr.with_curve(tr.curve.with_keys(time=np.array([0.0, 0.4, 0.8, 1.2, 1.6])))
    res = rotate_pose(tr, 0.55, [1, 0, 0], -15.0, space="parent")
    assert res.inserted and res.track.n_keys == 6 and res.index == 2
    want = Rotation.from_rotvec([np.radians(-15.0), 0, 0]) * _scipy_q(played(tr, [0.55])[0])
    assert geodesic_angle(played(res.track, [0.55])[0], want.as_quat()) < 1e-6
    old = np.delete(res.track.curve.value, 2, axis=0)
    np.testing.assert_array_equal(old, tr.curve.value)
    clamped = tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False)
    assert np.all(res.track.curve.tangent_mode[2] == clamped)


def test_a_drag_past_180_degrees_winds_on_and_keeps_the_order():
    tr = _track(order="ZYX")  # an intrinsic BVH order: R = Rz Ry Rx, the parent's Z is its z channel
    t = 0.4
    ref = None
    q0 = played(tr, [t])[0]
    z0 = float(tr.curve.value[4, 2])
    values = []
    for k in range(1, 41):  # 40 steps of 10 degrees about the parent's Z: 400 degrees
        res = key_pose(tr, t, rotated_local(q0, [0, 0, 1], 10.0 * k, "parent"), reference=ref)
        ref = res.value
        values.append(res.value)
    assert res.track.order == "ZYX"
    assert geodesic_angle(played(res.track, [t])[0], rotated_local(q0, [0, 0, 1], 400.0, "parent")) < 1e-6
    # the z channel winds on through +-180 (no wrap back), the others stay where they were
    assert res.value[2] - z0 == pytest.approx(400.0, abs=1e-6)
    assert np.abs(np.diff(np.array(values), axis=0)).max() < 10.0 + 1e-6
    np.testing.assert_allclose(res.value[:2], tr.curve.value[4, :2], atol=1e-6)


def test_quaternion_tracks_stay_on_their_neighbours_hemisphere():
    tr = _track(kind="quaternion")
    q_before = tr.curve.value.copy()
    res = rotate_pose(tr, 0.5, [0, 0, 1], 170.0, space="local")
    v = res.track.curve.value
    assert np.dot(v[5], v[4]) >= 0 and np.dot(v[5], v[6]) >= 0
    np.testing.assert_array_equal(np.delete(v, 5, axis=0), np.delete(q_before, 5, axis=0))
    want = _scipy_q(played(tr, [0.5])[0]) * Rotation.from_rotvec([0, 0, np.radians(170.0)])
    assert geodesic_angle(played(res.track, [0.5])[0], want.as_quat()) < 1e-6


def test_free_neighbours_keep_their_slopes_auto_neighbours_follow():
    tr = _track(n=5)
    free = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
    modes = np.array(tr.curve.tangent_mode)
    modes[1] = free
    ins = np.array(tr.curve.in_slope)
    ins[1] = 12.5
    tr = tr.with_curve(tr.curve.with_keys(tangent_mode=modes, in_slope=ins, out_slope=ins))
    res = rotate_pose(tr, 0.2, [0, 0, 1], 30.0)
    c = res.track.curve
    np.testing.assert_array_equal(c.in_slope[1], 12.5)  # Free: as authored
    assert not np.array_equal(c.in_slope[3], tr.curve.in_slope[3])  # Clamped Auto neighbour follows
    np.testing.assert_array_equal(c.in_slope[4:], tr.curve.in_slope[4:])  # beyond: untouched
    np.testing.assert_array_equal(c.tangent_mode, tr.curve.tangent_mode)


def test_nearest_euler_picks_the_triple_nearest_the_reference():
    e = np.array([[10.0, 80.0, 30.0]])
    q = Rotation.from_euler("zxy", e[:, [2, 0, 1]], degrees=True).as_quat()
    got = nearest_euler(q, "zxy", [190.0, 100.0, 210.0])  # the equivalent triple (180-x, y+180, z+180)
    np.testing.assert_allclose(got, [[170.0, 260.0, 210.0]], atol=1e-9)
    got = nearest_euler(q, "zxy", [370.0, 700.0, -330.0])
    np.testing.assert_allclose(got, [[370.0, 800.0, -330.0]], atol=1e-9)


def test_gl_axis_maps_to_unity_as_the_quaternion_mirror_does():
    rng = np.random.default_rng(3)
    for _ in range(20):
        g = rng.normal(size=3)
        g /= np.linalg.norm(g)
        a = rng.uniform(-3, 3)
        q_gl = Rotation.from_rotvec(g * a).as_quat()
        q_u = Rotation.from_rotvec(display.gl_to_unity_axis(g) * a).as_quat()
        assert geodesic_angle(display.unity_to_gl_quat(q_u), q_gl) < 1e-9


def _project(points, center=(200.0, 150.0), scale=100.0):
    """A camera looking down -z (x right, y up, z toward the viewer) to pixels (y down)."""
    p = np.asarray(points)
    return np.c_[center[0] + scale * p[:, 0], center[1] - scale * p[:, 1]]


@pytest.mark.parametrize("axis_z", [1.0, -1.0])
def test_a_face_on_ring_follows_the_mouse_angle_about_its_centre(axis_z):
    axis = np.array([0.0, 0.0, axis_z])
    ring = circle_points(axis)
    px = _project(ring)
    c = np.array([200.0, 150.0])
    grip = grip_ring(px, c, px[0])
    angle, prev = 0.0, px[0]
    for k in range(1, 41):  # the mouse goes round 400 degrees counter-clockwise on screen
        phi = np.radians(10.0 * k)
        start = np.arctan2(-(px[0][1] - c[1]), px[0][0] - c[0])
        cur = c + 100.0 * np.array([np.cos(start + phi), -np.sin(start + phi)])
        angle = ring_angle(grip, angle, prev, cur)
        prev = cur
    # counter-clockwise on screen = right-handed about +z (toward the viewer)
    assert angle == pytest.approx(np.radians(400.0) * axis_z, abs=1e-9)


def test_an_edge_on_ring_follows_its_tangent():
    ring = circle_points([0.0, 1.0, 0.02])  # nearly edge-on: seen as a flat ellipse
    px = _project(ring)
    c = np.array([200.0, 150.0])
    k = int(np.argmin(px[:, 0]))  # grab the leftmost point and pull a little along the ring
    grip = grip_ring(px, c, px[k])
    assert grip.sign == 0.0
    t = px[(k + 1) % 96] - px[k]
    cur = px[k] + 3.0 * t
    angle = ring_angle(grip, 0.0, px[k], cur)
    assert angle == pytest.approx(3.0 * 2 * np.pi / 96, rel=0.05)


def test_trackball_moves_the_front_of_the_sphere_with_the_mouse():
    right, up = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    front = np.array([0, 0, 1.0])  # toward the viewer
    q = trackball((100 * np.pi / 2, 0), right, up, 100.0)  # a quarter turn to the right
    np.testing.assert_allclose(_scipy_q(q).apply(front), [1, 0, 0], atol=1e-12)
    q = trackball((0, 100 * np.pi / 2), right, up, 100.0)  # pixels y down: dragged down
    np.testing.assert_allclose(_scipy_q(q).apply(front), [0, -1, 0], atol=1e-12)
    axis, deg = axis_angle(q)
    np.testing.assert_allclose(axis, [1, 0, 0], atol=1e-12)
    assert deg == pytest.approx(90.0)


@pytest.mark.skipif(not GANGNAM, reason="corpus BVH not present")
def test_keying_a_corpus_joint_keeps_its_order_and_other_frames():
    clip = read_clip(GANGNAM[0])
    tr = next(t for t in clip.tracks if t.path.endswith("LeftArm"))
    t = float(tr.times[200])
    res = rotate_pose(tr, t, [0.2, 0.9, -0.3], 55.0, space="local")
    assert res.track.order == tr.order and res.track.n_keys == tr.n_keys and not res.inserted
    want = _scipy_q(played(tr, [t])[0]) * Rotation.from_rotvec(
        np.radians(55.0) * np.array([0.2, 0.9, -0.3]) / np.linalg.norm([0.2, 0.9, -0.3])
    )
    assert geodesic_angle(played(res.track, [t])[0], want.as_quat()) < 1e-6
    far = np.r_[0:198, 203 : tr.n_keys]
    np.testing.assert_array_equal(played(res.track, tr.times[far]), played(tr, tr.times[far]))
