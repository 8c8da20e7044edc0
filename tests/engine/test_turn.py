"""Turn generator: signed angle, direction, constant speed, end inside the tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import key_quaternions, played
from curveeditor.engine.rotations import axis_angle_quat, geodesic_angle, hemisphere_continuous, quat_exp
from curveeditor.engine.turn import generate_turn, signed_angle, turn_angle


def played_speeds(track, per_second=2000):
    t0, t1 = track.curve.start, track.curve.end
    grid = np.linspace(t0, t1, max(3, int((t1 - t0) * per_second) + 1))
    q = hemisphere_continuous(played(track, grid))
    return geodesic_angle(q[:-1], q[1:]) / np.diff(grid)


def test_signed_angle_formula():
    n = np.array([0.0, 1.0, 0.0])
    a = np.array([1.0, 0.0, 0.0])
    b = np.array([0.0, 0.0, -1.0])  # +90 about +y (right-hand rule: x -> -z)
    assert signed_angle(a, b, n) == pytest.approx(90.0)
    assert signed_angle(b, a, n) == pytest.approx(-90.0)
    assert signed_angle(a, -a, n) == pytest.approx(180.0)
    assert signed_angle(a + [0, 5, 0], b + [0, -3, 0], n) == pytest.approx(90.0)  # projected


def test_turn_angle_directions():
    assert turn_angle(10, 350, "y", "shortest") == pytest.approx(-20.0)
    assert turn_angle(10, 350, "y", "positive") == pytest.approx(340.0)
    assert turn_angle(10, 350, "y", "negative") == pytest.approx(-20.0)
    assert turn_angle(350, 10, "y", "negative") == pytest.approx(-340.0)
    assert turn_angle(0, 180, "x", "shortest") == pytest.approx(180.0)
    assert turn_angle(0, 90, (0, 0, -2), "shortest") == pytest.approx(90.0)


def test_euler_turn_keeps_winding_and_speed():
    tr = generate_turn(350, 10, "y", "positive", 90.0, rate_hz=30, tolerance_deg=0.5)
    assert tr.kind == "euler" and tr.order == "zxy" and tr.path == "Turn"
    v = tr.curve.value
    assert v[0, 1] == 350.0 and v[-1, 1] == 370.0
    assert np.all(v[:, [0, 2]] == 0.0)
    assert tr.curve.end == pytest.approx(20.0 / 90.0)
    sp = played_speeds(tr)
    np.testing.assert_allclose(sp, 90.0, rtol=1e-3)
    np.testing.assert_allclose(np.diff(tr.times)[:-1], 1 / 30)


def test_long_way_and_quaternion_keys_under_180_apart():
    tr = generate_turn(0, 10, "z", "negative", 3600.0, rate_hz=10, kind="quaternion")
    q = tr.curve.value
    assert np.all(geodesic_angle(q[:-1], q[1:]) <= 90.0 + 1e-9)
    assert np.all(np.sum(q[:-1] * q[1:], axis=1) > 0)
    assert tr.curve.end == pytest.approx(350.0 / 3600.0)
    np.testing.assert_allclose(played_speeds(tr, 200000), 3600.0, rtol=1e-3)
    assert geodesic_angle(key_quaternions(tr)[-1], axis_angle_quat(2, np.radians(10.0))) < 1e-9


def test_vector_axis_euler_follows_axis():
    axis = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    tr = generate_turn(0, 120, tuple(axis), "shortest", 60.0, rate_hz=60)
    assert tr.kind == "euler"
    np.testing.assert_allclose(played_speeds(tr), 60.0, rtol=1e-3)
    end = quat_exp(np.radians(120.0) * axis)
    assert geodesic_angle(key_quaternions(tr)[-1], end) < 1e-9


def test_snap_and_bad_arguments():
    one = generate_turn(30, 30.2, "y", "shortest", 90.0)
    assert one.n_keys == 1 and one.curve.value[0, 1] == pytest.approx(30.2)
    # The frame key within tolerance of the target is dropped (the snap), the speed stays constant.
    # 10.2 deg at 6 deg/s: frame 10 (1.667 s) is 0.2 deg short of the target.
    tr = generate_turn(0, 10.2, "y", "shortest", 6.0, rate_hz=6, tolerance_deg=0.5)
    np.testing.assert_allclose(tr.times, np.append(np.arange(10) / 6, 1.7))
    tr = generate_turn(0, 10.2, "y", "shortest", 6.0, rate_hz=6, tolerance_deg=0.1)
    np.testing.assert_allclose(tr.times, np.append(np.arange(11) / 6, 1.7))
    for kwargs, msg in (
        (dict(speed_deg_s=0.0), "speed_deg_s"),
        (dict(speed_deg_s=10.0, rate_hz=-1), "rate_hz"),
        (dict(speed_deg_s=10.0, direction="left"), "direction"),
        (dict(speed_deg_s=10.0, axis="w"), "axis"),
        (dict(speed_deg_s=10.0, axis=(0, 0, 0)), "axis"),
        (dict(speed_deg_s=10.0, kind="matrix"), "kind"),
        (dict(speed_deg_s=10.0, tolerance_deg=-1), "tolerance_deg"),
    ):
        with pytest.raises(ValueError, match=msg):
            generate_turn(0, 90, **{"axis": "y", **kwargs})


@settings(deadline=None, max_examples=60)
@given(
    st.floats(-720.0, 720.0),
    st.floats(-720.0, 720.0),
    st.sampled_from(["x", "y", "z", (0.3, -1.0, 0.5)]),
    st.sampled_from(["shortest", "positive", "negative"]),
    st.floats(20.0, 720.0),
    st.sampled_from([24.0, 30.0, 60.0]),
    st.sampled_from([0.0, 0.5, 2.0]),
    st.sampled_from(["euler", "quaternion"]),
)
def test_property_constant_speed_and_ends_in_tolerance(a, b, axis, direction, speed, rate, tol, kind):
    tr = generate_turn(a, b, axis, direction, speed, rate_hz=rate, tolerance_deg=tol, kind=kind)
    target = turn_angle(a, b, axis, direction)
    n = np.array([1.0, 0, 0]) if axis == "x" else np.array([0, 1.0, 0]) if axis == "y" else None
    n = np.array([0, 0, 1.0]) if axis == "z" else n
    n = np.asarray(axis, float) / np.linalg.norm(axis) if n is None else n
    end = quat_exp(np.radians(a + target) * n)
    assert geodesic_angle(key_quaternions(tr)[-1], end) <= tol + 1e-6
    if tr.n_keys > 1:
        np.testing.assert_allclose(played_speeds(tr, 4000), speed, rtol=1e-3)
        assert tr.curve.end == pytest.approx(abs(target) / speed)
    if direction == "positive" and tr.n_keys > 1 and axis == "y" and kind == "euler":
        assert np.all(np.diff(tr.curve.value[:, 1]) > 0)


def test_turn_with_too_many_keys_is_an_argument_error():
    # 90 deg at 1e-9 deg/s used to try to allocate 39 TiB (MemoryError), 1e9 Hz to hang.
    with pytest.raises(ValueError, match="keys"):
        generate_turn(0.0, 90.0, speed_deg_s=1e-9)
    with pytest.raises(ValueError, match="keys"):
        generate_turn(0.0, 90.0, speed_deg_s=90.0, rate_hz=1e9)


def test_turn_below_float_resolution_is_one_key():
    """359.9999999999999 -> 0 the short way is a 1e-13 deg turn: keyed as two equal keys 6e-15 s apart it
    played at a noise speed (found by the property test above)."""
    tr = generate_turn(359.9999999999999, 0.0, "x", "shortest", 20.0, rate_hz=24.0, tolerance_deg=0.0)
    assert tr.n_keys == 1
