"""Display helpers: sampled curves, key Euler values, the GL mirror and the gimbal rings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve, evaluate
from curveeditor.engine.display import (
    gimbal_proximity,
    gimbal_rings,
    key_euler,
    rotation_matrices,
    sample_track,
    unity_to_gl_points,
    unity_to_gl_quat,
)
from curveeditor.engine.rotations import (
    axis_angle_quat,
    euler_to_quat,
    geodesic_angle,
    quat_dot,
    quat_to_euler,
)
from curveeditor.engine.tangents import make_curve

ORDERS = ("xyz", "xzy", "yzx", "yxz", "zxy", "zyx", "ZXY", "XYZ")


# ---------------------------------------------------------------------------------- GL mirror


def test_unity_plus_90_about_y_turns_forward_to_right_in_both_frames():
    q = axis_angle_quat(1, np.deg2rad(90.0))  # Unity: +90 about Y
    forward = np.array([0.0, 0.0, 1.0])
    unity_rotated = rotation_matrices(q) @ forward
    np.testing.assert_allclose(unity_rotated, [1.0, 0.0, 0.0], atol=1e-12)  # forward -> right (+X)
    gl_q = unity_to_gl_quat(q)
    np.testing.assert_allclose(gl_q, [0.0, -np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4)], atol=1e-12)
    gl_rotated = rotation_matrices(gl_q) @ unity_to_gl_points(forward)
    # GL forward is -Z; the turned forward is still +X (right) after mirroring.
    np.testing.assert_allclose(unity_to_gl_points(forward), [0, 0, -1])
    np.testing.assert_allclose(gl_rotated, [1.0, 0.0, 0.0], atol=1e-12)


@settings(deadline=None, max_examples=50)
@given(st.integers(0, 2**31 - 1))
def test_gl_mirror_commutes_with_rotation(seed):
    rng = np.random.default_rng(seed)
    q = Rotation.random(5, random_state=seed).as_quat()
    p = rng.normal(size=(5, 3))
    unity = np.einsum("nij,nj->ni", rotation_matrices(q), p)
    gl = np.einsum("nij,nj->ni", rotation_matrices(unity_to_gl_quat(q)), unity_to_gl_points(p))
    np.testing.assert_allclose(gl, unity_to_gl_points(unity), atol=1e-12)
    # Inputs untouched, single rotations keep their rank.
    assert unity_to_gl_quat(q[0]).shape == (4,) and rotation_matrices(q[0]).shape == (3, 3)


# ------------------------------------------------------------------------------- sample_track


def test_euler_track_samples_are_unwrapped_channels_as_played():
    track = RotationTrack(
        "spin", "euler", make_curve([0.0, 1.0, 2.0], [[0, 0, 0], [10, 360, 0], [0, 720, 5]])
    )
    t = np.linspace(0, 2, 201)
    s = sample_track(track, t)
    np.testing.assert_array_equal(s.euler, evaluate(track.curve, t))
    assert s.euler[:, 1].max() == pytest.approx(720.0)
    assert geodesic_angle(s.quat, played(track, t)).max() < 1e-9
    assert np.all(quat_dot(s.quat[1:], s.quat[:-1]) >= 0)
    np.testing.assert_array_equal(key_euler(track), track.curve.value)


def test_speed_of_a_constant_spin():
    track = RotationTrack("y", "euler", make_curve([0.0, 2.0], [[0, 0, 0], [0, 720, 0]], mode="linear"))
    s = sample_track(track, np.linspace(0, 2, 481))
    np.testing.assert_allclose(s.speed, 360.0, rtol=1e-9)


@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8), order=st.sampled_from(ORDERS))
def test_quaternion_track_decomposition_is_exact_continuous_and_through_keys(seed, n, order):
    rng = np.random.default_rng(seed)
    times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.1, 0.5, n - 1))])
    e = np.cumsum(rng.uniform(-50, 50, (n, 3)), axis=0)
    q = euler_to_quat(e, order)
    q[rng.random(n) < 0.3] *= -1  # sign noise: a display must not care
    q[1:] *= np.where(np.sum(q[1:] * q[:-1], axis=1) < 0, -1.0, 1.0)[:, None]
    track = RotationTrack("q", "quaternion", make_curve(times, q, mode="auto"), order=order)
    ke = key_euler(track)
    assert geodesic_angle(euler_to_quat(ke, order), key_quaternions(track)).max() < 1e-6
    t = np.union1d(np.linspace(times[0], times[-1], 400), times)
    s = sample_track(track, t)
    # Exact poses, hemisphere-continuous quaternions, and the curve passes through the drawn keys.
    assert geodesic_angle(euler_to_quat(s.euler, order), played(track, t)).max() < 1e-6
    assert np.all(quat_dot(s.quat[1:], s.quat[:-1]) >= 0)
    at_keys = np.searchsorted(t, times)
    far_from_lock = s.gimbal[at_keys] < 0.5
    np.testing.assert_allclose(s.euler[at_keys][far_from_lock], ke[far_from_lock], atol=1e-6)


def test_gimbal_proximity_from_the_middle_angle():
    np.testing.assert_allclose(
        gimbal_proximity([90, -90, 270, 80, 100, 70, 0, 450]), [1, 1, 1, 0.5, 0.5, 0, 0, 1]
    )
    # ZXY: the middle axis is X.
    track = RotationTrack("g", "euler", make_curve([0.0, 1.0], [[0, 30, 0], [90, 30, 0]], mode="linear"))
    s = sample_track(track, np.linspace(0, 1, 91))
    np.testing.assert_allclose(s.gimbal, np.clip(1 - (90 - s.euler[:, 0]) / 20, 0, 1), atol=1e-12)
    assert s.gimbal[-1] == 1.0 and s.gimbal[0] == 0.0
    # A quaternion track near the lock reports the same, whatever the decomposition.
    qt = RotationTrack("g", "quaternion", make_curve([0.0, 1.0], key_quaternions(track), mode="linear"))
    assert sample_track(qt, [1.0]).gimbal[0] == pytest.approx(1.0)
    assert sample_track(qt, [0.0]).gimbal[0] == 0.0


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_sample_track_converts_only_the_first_key_for_the_hemisphere(kind, monkeypatch):
    """The played quaternions take the first key's hemisphere; a per-tick sample (the readout, the
    3D view) converts only that key, not all N (0.30 -> 0.24 ms per call on a 742-key BVH track)."""
    import curveeditor.engine.clip as clip_mod
    import curveeditor.engine.display as display_mod

    rng = np.random.default_rng(3)
    n = 200
    times = np.arange(n) / 60.0
    if kind == "euler":
        values = np.cumsum(rng.normal(0, 5, (n, 3)), axis=0)
    else:
        values = Rotation.random(n, random_state=4).as_quat()
        values *= np.where(rng.random(n) < 0.5, -1.0, 1.0)[:, None]  # mixed hemispheres
    track = RotationTrack("t", kind, make_curve(times, values, mode="auto"))
    t = np.array([0.31, 0.31 + 1 / 240])
    before = sample_track(track, t)
    q0 = key_quaternions(track)[0]
    assert quat_dot(before.quat[0], q0) >= 0  # the first key's hemisphere

    def no_full_conversion(*_a, **_k):
        raise AssertionError("sample_track converted every key to use the first")

    monkeypatch.setattr(display_mod, "key_quaternions", no_full_conversion)
    monkeypatch.setattr(clip_mod, "key_quaternions", no_full_conversion)
    after = sample_track(track, t)
    np.testing.assert_array_equal(after.quat, before.quat)
    np.testing.assert_array_equal(after.euler, before.euler)
    np.testing.assert_array_equal(after.speed, before.speed)


def test_sample_track_rejects_empty():
    empty = RotationTrack("e", "euler", Curve.make(np.zeros(0), np.zeros((0, 3))))
    with pytest.raises(ValueError, match="no keys"):
        sample_track(empty, [0.0])


# ------------------------------------------------------------------------------ gimbal rings


@settings(deadline=None, max_examples=50)
@given(
    e=st.lists(st.floats(-360, 360), min_size=3, max_size=3),
    order=st.sampled_from(ORDERS),
)
def test_gimbal_rings_follow_the_euler_chain(e, order):
    e = np.array(e)
    q = euler_to_quat(e, order)
    outer, middle, inner = gimbal_rings(q, order, n=32, euler=e)
    assert [r.role for r in (outer, middle, inner)] == ["outer", "middle", "inner"]
    assert sorted([outer.axis, middle.axis, inner.axis]) == [0, 1, 2]
    basis = np.eye(3)
    r = rotation_matrices(q)
    # Outer ring fixed in the parent; the inner ring's axis is where the full rotation takes it
    # (the first-applied rotation leaves its own axis alone); the middle ring turns with the outer one.
    np.testing.assert_allclose(outer.normal, basis[outer.axis], atol=1e-12)
    np.testing.assert_allclose(inner.normal, r @ basis[inner.axis], atol=1e-9)
    outer_rot = rotation_matrices(axis_angle_quat(outer.axis, np.deg2rad(e[outer.axis])))
    np.testing.assert_allclose(middle.normal, outer_rot @ basis[middle.axis], atol=1e-9)
    for ring, radius in zip((outer, middle, inner), (1.0, 0.9, 0.8), strict=True):
        assert ring.points.shape == (33, 3)
        np.testing.assert_allclose(ring.points[0], ring.points[-1])
        np.testing.assert_allclose(np.linalg.norm(ring.points, axis=1), radius, atol=1e-12)
        np.testing.assert_allclose(ring.points @ ring.normal, 0.0, atol=1e-9)
    assert middle.proximity == 0.0
    assert outer.proximity == inner.proximity == pytest.approx(float(gimbal_proximity(e[middle.axis])))


def test_gimbal_rings_at_lock_make_outer_and_inner_coplanar():
    q = euler_to_quat([90.0, 25.0, 40.0], "zxy")
    outer, middle, inner = gimbal_rings(q, "zxy")
    assert (outer.axis, middle.axis, inner.axis) == (1, 0, 2)
    assert abs(outer.normal @ inner.normal) == pytest.approx(1.0)
    assert outer.proximity == inner.proximity == pytest.approx(1.0)
    # Without explicit Euler values the rings use q's own decomposition.
    e = quat_to_euler(euler_to_quat([30.0, 20.0, 10.0]), "zxy")
    rings = gimbal_rings(euler_to_quat(e), "zxy", n=16)
    np.testing.assert_allclose(rings[0].normal, [0, 1, 0], atol=1e-12)
    with pytest.raises(ValueError, match="segments"):
        gimbal_rings(q, "zxy", n=2)
