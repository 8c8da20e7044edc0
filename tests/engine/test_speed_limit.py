"""Angular speed limiting like RotateTowards: bound respected, direction kept, rest untouched."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.rotations import (
    euler_to_quat,
    geodesic_angle,
    hemisphere_continuous,
    quat_conj,
    quat_log,
    quat_mul,
)
from curveeditor.engine.speed_limit import limit_speed, rotate_towards_path
from curveeditor.engine.tangents import make_curve


def euler_track(e, t, order="zxy", mode="clamped_auto") -> RotationTrack:
    return RotationTrack("j", "euler", make_curve(t, np.asarray(e, float), mode=mode), order=order)


def key_speeds(track: RotationTrack) -> np.ndarray:
    q = key_quaternions(track)
    return geodesic_angle(q[:-1], q[1:]) / np.diff(track.times)


def test_step_is_ramped_at_the_limit_then_rejoins():
    t = np.arange(61) / 30.0
    y = np.where(t < 0.5, 0.0, 90.0)  # a 90 deg snap at 0.5 s
    src = euler_track(np.stack([0 * t, y, 0 * t], axis=1), t, mode="linear")
    out = limit_speed(src, 180.0)  # 6 deg per frame: 15 frames to get there
    sp = key_speeds(out)
    assert sp.max() <= 180.0 * (1 + 1e-9)
    np.testing.assert_allclose(sp[14:29], 180.0, rtol=1e-9)  # constant speed while lagging
    np.testing.assert_allclose(out.curve.value[14:30, 1], np.arange(16) * 6.0, atol=1e-9)
    # Joins the source exactly at key 29, everything after is untouched and bit-identical.
    np.testing.assert_array_equal(out.curve.value[29:], src.curve.value[29:])
    np.testing.assert_array_equal(out.curve.value[:15], src.curve.value[:15])
    assert out.curve.tangent_mode[20, 0] == 69  # Linear both sides: constant speed between keys


def test_direction_of_motion_follows_the_target():
    # Target turns 170 deg one way; the output moves the same way (never the long way round).
    t = np.arange(31) / 30.0
    y = np.where(t < 0.1, 0.0, 170.0)
    src = euler_track(np.stack([0 * t, y, 0 * t], axis=1), t, mode="linear")
    out = limit_speed(src, 300.0)
    assert np.all(np.diff(out.curve.value[:, 1]) >= -1e-9)


def test_track_under_the_limit_is_returned_unchanged():
    t = np.arange(30) / 30.0
    src = euler_track(np.stack([0 * t, 30 * t, 0 * t], axis=1), t)
    assert limit_speed(src, 100.0) is src
    with pytest.raises(ValueError, match="max_speed_deg_s"):
        limit_speed(src, 0.0)


def test_spin_faster_than_the_limit_keeps_turning_the_same_way():
    # Source spins 720 deg/s for 2 s; capped at 180 deg/s the output keeps spinning forward (RotateTowards
    # alone would turn back once the target is more than half a turn ahead).
    t = np.arange(121) / 60.0
    y = np.minimum(t, 2.0) * 720.0
    src = euler_track(np.stack([0 * t, y, 0 * t], axis=1), t, mode="linear")
    out = limit_speed(src, 180.0)
    assert np.all(np.diff(out.curve.value[:, 1]) > 0)
    np.testing.assert_allclose(np.diff(out.curve.value[:, 1]), 3.0, atol=1e-9)


def test_quaternion_track_and_spin_between_keys():
    t = np.arange(3) * 1.0
    src = euler_track(np.array([[0, 0, 0], [0, 360, 0], [0, 360, 0]], float), t, mode="linear")
    out = limit_speed(src, 180.0)  # a full turn in 1 s at 360 deg/s: limited to 180 deg/s
    grid = np.linspace(0, 2, 801)
    q = hemisphere_continuous(played(out, grid))
    assert (geodesic_angle(q[:-1], q[1:]) / np.diff(grid)).max() <= 180.0 * 1.01
    tq = np.arange(40) / 20.0
    e = np.stack([0 * tq, np.where(tq < 1, 0.0, 120.0), 0 * tq], axis=1)
    qs = hemisphere_continuous(euler_to_quat(e))
    qtrack = RotationTrack("q", "quaternion", make_curve(tq, qs, mode="linear"))
    outq = limit_speed(qtrack, 240.0)
    assert key_speeds(outq).max() <= 240.0 * (1 + 1e-9)
    assert geodesic_angle(key_quaternions(outq)[-1], qs[-1]) < 1e-9


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.floats(-200.0, 200.0), min_size=3, max_size=40),
    st.floats(20.0, 2000.0),
    st.floats(10.0, 60.0),
)
def test_property_rotate_towards_recursion(steps, speed, rate):
    n = len(steps)
    t = np.arange(n) / rate
    e = np.stack([np.zeros(n), np.cumsum(steps) * 0.5, np.asarray(steps) * 0.1], axis=1)
    q = hemisphere_continuous(euler_to_quat(e))
    out, limited = rotate_towards_path(t, q, speed)
    sp = geodesic_angle(out[:-1], out[1:]) / np.diff(t)
    assert np.all(sp <= speed * (1 + 1e-6) + 1e-9)
    np.testing.assert_array_equal(out[~limited], q[~limited])
    # A limited sample is on the great circle from the previous output to the target: the short way
    # (RotateTowards), or the long way when the target has run more than half a turn ahead.
    for i in np.nonzero(limited)[0]:
        moved = geodesic_angle(out[i - 1], out[i])
        assert moved == pytest.approx(speed / rate, rel=1e-6)
        step = quat_log(quat_mul(quat_conj(out[i - 1]), out[i]))
        to_target = quat_log(quat_mul(quat_conj(out[i - 1]), q[i]))
        cos = np.dot(step, to_target) / (np.linalg.norm(step) * np.linalg.norm(to_target))
        assert abs(cos) == pytest.approx(1.0, abs=1e-6)
