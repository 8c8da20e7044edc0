"""Rotation math against scipy and against Unity's documented semantics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from curveeditor.engine import rotations as r

ORDERS = [o for base in ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx") for o in (base, base.upper())]
AX = {"x": 0, "y": 1, "z": 2}
SETTINGS = settings(deadline=None, max_examples=60)

angles = arrays(np.float64, (20, 3), elements=st.floats(-720, 720, allow_nan=False, width=64))
quat_arrays = arrays(np.float64, (20, 4), elements=st.floats(-1, 1, allow_nan=False, width=64)).filter(
    lambda a: np.all(np.linalg.norm(a, axis=1) > 0.1)
)


def seq_cols(order: str) -> list[int]:
    return [AX[c] for c in order.lower()]


def scipy_from_euler(e: np.ndarray, order: str) -> np.ndarray:
    return Rotation.from_euler(order, e[:, seq_cols(order)], degrees=True).as_quat()


def geo(a, b):
    return r.geodesic_angle(a, b)


@pytest.mark.parametrize("order", ORDERS)
@SETTINGS
@given(e=angles)
def test_euler_to_quat_matches_scipy(order, e):
    ours = r.euler_to_quat(e, order)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0)
    assert np.max(geo(ours, scipy_from_euler(e, order))) < 1e-6


@pytest.mark.parametrize("order", ORDERS)
@SETTINGS
@given(q=quat_arrays)
def test_quat_to_euler_matches_scipy_away_from_gimbal(order, q):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    ours = r.quat_to_euler(q, order)
    # Same rotation, always (gimbal included).
    assert np.max(geo(r.euler_to_quat(ours, order), q)) < 1e-6
    mid = r.middle_axis(order)
    assert np.all(np.abs(ours[:, mid]) <= 90.0 + 1e-9)
    others = [i for i in range(3) if i != mid]
    assert np.all((ours[:, others] > -180.0) & (ours[:, others] <= 180.0))
    away = np.abs(np.abs(ours[:, mid]) - 90.0) > 1.0
    ref = Rotation.from_quat(q[away]).as_euler(order, degrees=True)
    ref_by_axis = np.empty_like(ref)
    ref_by_axis[:, seq_cols(order)] = ref
    diff = (ours[away] - ref_by_axis + 180.0) % 360.0 - 180.0
    assert np.max(np.abs(diff), initial=0.0) < 1e-6


@pytest.mark.parametrize("order", ORDERS)
def test_quat_to_euler_exact_gimbal_round_trips(order):
    mid = r.middle_axis(order)
    e = np.zeros((4, 3))
    e[:, mid] = [90.0, -90.0, 90.0, -90.0]
    others = [i for i in range(3) if i != mid]
    e[:, others[0]] = [30.0, -50.0, 170.0, 10.0]
    e[:, others[1]] = [40.0, 20.0, -120.0, 0.0]
    q = r.euler_to_quat(e, order)
    back = r.quat_to_euler(q, order)
    assert np.max(geo(r.euler_to_quat(back, order), q)) < 1e-6
    assert np.allclose(np.abs(back[:, mid]), 90.0, atol=1e-6)


def test_unity_euler_matches_documented_formula():
    # Quaternion.Euler(x, y, z) = qY(y) qX(x) qZ(z), component formulas from rotations.md.
    x, y, z = np.deg2rad([30.0, 45.0, 60.0]) / 2
    sx, sy, sz, cx, cy, cz = np.sin(x), np.sin(y), np.sin(z), np.cos(x), np.cos(y), np.cos(z)
    want = np.array(
        [
            sx * cy * cz + cx * sy * sz,
            cx * sy * cz - sx * cy * sz,
            cx * cy * sz - sx * sy * cz,
            cx * cy * cz + sx * sy * sz,
        ]
    )
    got = r.euler_to_quat(np.array([30.0, 45.0, 60.0]), "zxy")
    assert np.allclose(got, want, atol=1e-12)
    assert np.allclose(r.unity_euler_angles(got), [30.0, 45.0, 60.0], atol=1e-9)


def test_unity_euler_angles_range_and_quirks():
    q = r.euler_to_quat(np.array([[-10.0, -20.0, -30.0], [0.0, 0.0, -0.001], [0.0, 0.0, -0.01]]), "zxy")
    got = r.unity_euler_angles(q)
    assert np.allclose(got[0], [350.0, 340.0, 330.0], atol=1e-9)
    # Values below 0 by less than 0.0057 deg stay negative; -0.01 wraps.
    assert got[1, 2] == pytest.approx(-0.001, abs=1e-9)
    assert got[2, 2] == pytest.approx(359.99, abs=1e-9)
    many = r.unity_euler_angles(r.euler_to_quat(np.random.default_rng(1).uniform(-400, 400, (500, 3))))
    ok = ((many >= 0) & (many < 360)) | ((many < 0) & (many > -0.0057))
    assert np.all(ok)


def test_unity_gimbal_branch_puts_free_angle_on_z():
    # At x = 90: Ry(y) Rx(90) Rz(z) == Ry(y - z) Rx(90), so Unity reports y = 0, z = z - y.
    q = r.euler_to_quat(np.array([[90.0, 30.0, 10.0], [89.95, 30.0, 10.0]]), "zxy")
    got = r.unity_euler_angles(q)
    assert got[0, 1] == 0.0 and got[1, 1] == 0.0
    assert got[0, 0] == pytest.approx(90.0, abs=1e-6)
    assert got[0, 2] == pytest.approx(340.0, abs=1e-6)
    assert np.max(geo(r.euler_to_quat(got, "zxy"), q)) < 0.11
    # Outside the 0.11 deg band the general branch keeps y.
    far = r.unity_euler_angles(r.euler_to_quat(np.array([89.5, 30.0, 10.0]), "zxy"))
    assert far[1] == pytest.approx(30.0, abs=1e-6)


@pytest.mark.parametrize("order", ORDERS)
@SETTINGS
@given(e=angles)
def test_equivalent_triples_are_the_same_rotation(order, e):
    alt = r.equivalent_euler(e, order)
    assert np.max(geo(r.euler_to_quat(alt, order), r.euler_to_quat(e, order))) < 1e-6
    assert np.allclose(r.equivalent_euler(alt, order), e + np.array([360.0, 0, 360.0])[_perm(order)])


def _perm(order: str) -> list[int]:
    """Map the (first, middle, last) shift (+360, 0, +360) of a double application onto axis columns."""
    first, mid, last = r._extrinsic_axes(order)
    out = [0, 0, 0]
    out[first], out[mid], out[last] = 0, 1, 2
    return out


def test_equivalent_euler_zxy_formula():
    assert np.allclose(r.equivalent_euler(np.array([10.0, 20.0, 30.0]), "zxy"), [170.0, 200.0, 210.0])


@SETTINGS
@given(q=quat_arrays)
def test_geodesic_angle_matches_scipy(q):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    a, b = q[:10], q[10:]
    want = np.rad2deg((Rotation.from_quat(a).inv() * Rotation.from_quat(b)).magnitude())
    assert np.allclose(geo(a, b), want, atol=1e-6)
    assert np.allclose(geo(a, -b), want, atol=1e-6)
    assert np.allclose(geo(a, a), 0.0, atol=1e-12)


def test_geodesic_angle_is_accurate_near_zero():
    a = r.euler_to_quat(np.array([10.0, 20.0, 30.0]))
    b = r.quat_mul(a, r.axis_angle_quat(0, np.deg2rad(1e-7)))
    assert geo(a, b) == pytest.approx(1e-7, rel=1e-5)


@SETTINGS
@given(q=quat_arrays)
def test_log_exp_round_trip(q):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    v = r.quat_log(q)
    assert np.all(np.linalg.norm(v, axis=1) <= np.pi + 1e-12)
    ref = Rotation.from_quat(q).as_rotvec()
    clear = np.linalg.norm(ref, axis=1) < np.deg2rad(179.0)  # at 180 deg +-axis are both right
    assert np.allclose(v[clear], ref[clear], atol=1e-9)
    assert np.max(geo(r.quat_exp(v), q)) < 1e-6
    tiny = np.array([[1e-9, -2e-9, 3e-10]])
    assert np.allclose(r.quat_log(r.quat_exp(tiny)), tiny, rtol=1e-6, atol=0)


@SETTINGS
@given(q=quat_arrays, signs=arrays(np.bool_, 20))
def test_hemisphere_continuous(q, signs):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    flipped = np.where(signs[:, None], -q, q)
    c = r.hemisphere_continuous(flipped)
    assert np.all(r.quat_dot(c[1:], c[:-1]) >= 0)
    assert np.array_equal(c[0], flipped[0])
    assert np.allclose(np.abs(c), np.abs(flipped))
    assert np.max(geo(c, flipped)) < 1e-9


def test_quat_mul_matches_scipy_composition():
    rng = np.random.default_rng(3)
    a, b = Rotation.random(50, random_state=rng), Rotation.random(50, random_state=rng)
    assert np.max(geo(r.quat_mul(a.as_quat(), b.as_quat()), (a * b).as_quat())) < 1e-9
    assert np.max(geo(r.quat_mul(a.as_quat(), r.quat_inv(a.as_quat())), np.array([0, 0, 0, 1.0]))) < 1e-9


def test_quat_mul_components_on_floats_and_columns_is_quat_mul():
    a, b = Rotation.random(50, random_state=7).as_quat(), Rotation.random(50, random_state=8).as_quat()
    want = r.quat_mul(a, b)
    cols = r.quat_mul_components(tuple(a.T), tuple(b.T))
    np.testing.assert_array_equal(np.stack(cols, axis=-1), want)
    one = r.quat_mul_components(tuple(a[3].tolist()), tuple(b[3].tolist()))
    assert all(isinstance(c, float) for c in one)
    np.testing.assert_array_equal(one, want[3])
    np.testing.assert_array_equal(r.quat_mul(a[3], b[3]), want[3])  # (4,) in, (4,) out


def test_bad_order_and_zero_quaternion_raise():
    with pytest.raises(ValueError, match="rotation order"):
        r.euler_to_quat(np.zeros(3), "zxz")
    with pytest.raises(ValueError, match="zero"):
        r.quat_to_euler(np.zeros(4), "zxy")


def test_quat_to_matrix_equals_scipy_as_matrix():
    from curveeditor.engine.rotations import quat_to_matrix

    q = np.random.default_rng(4).normal(size=(500, 4)) * 3.0  # non-unit on purpose: normalized
    np.testing.assert_allclose(quat_to_matrix(q), Rotation.from_quat(q).as_matrix(), atol=1e-14)
    for one in q[:20]:  # the one-quaternion path (Python floats)
        np.testing.assert_allclose(quat_to_matrix(one), Rotation.from_quat(one).as_matrix(), atol=1e-14)
