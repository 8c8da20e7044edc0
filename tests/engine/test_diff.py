"""Geodesic diff of two versions of a track or clip."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import Clip, RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.diff import MAX_SAMPLES, diff_clips, diff_tracks
from curveeditor.engine.rotations import (
    axis_angle_quat,
    euler_to_quat,
    geodesic_angle,
    quat_mul,
    quat_to_euler,
)
from curveeditor.engine.tangents import make_curve


def quat_track(seed: int, n: int, path: str = "q") -> RotationTrack:
    rng = np.random.default_rng(seed)
    times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.05, 0.5, n - 1))])
    e = np.cumsum(rng.uniform(-40, 40, (n, 3)), axis=0)
    q = euler_to_quat(e)
    return RotationTrack(path, "quaternion", make_curve(times, q, mode="auto"))


def left_multiply(track: RotationTrack, offset: np.ndarray) -> RotationTrack:
    """Every played rotation premultiplied by ``offset``: left multiplication is a linear isometry of
    the components, so values and slopes transform alike and the normalized Hermite follows exactly."""
    c = track.curve
    return track.with_curve(
        c.with_keys(
            value=quat_mul(offset, c.value),
            in_slope=quat_mul(offset, c.in_slope),
            out_slope=quat_mul(offset, c.out_slope),
        )
    )


@settings(deadline=None, max_examples=30)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 10),
    angle=st.floats(0.01, 179.0),
    axis=st.integers(0, 2),
)
def test_constant_offset_gives_max_equal_rms_equal_offset(seed, n, angle, axis):
    before = quat_track(seed, n)
    after = left_multiply(before, axis_angle_quat(axis, np.deg2rad(angle)))
    d = diff_tracks(before, after)
    assert d.max_error == pytest.approx(angle, abs=1e-6)
    assert d.rms_error == pytest.approx(angle, abs=1e-6)
    np.testing.assert_allclose(d.errors, angle, atol=1e-6)
    assert d.keys_before == d.keys_after == n and d.path == "q"


def test_identical_tracks_have_zero_error_and_key_times_sampled():
    t = quat_track(1, 6)
    d = diff_tracks(t, t)
    assert d.max_error == 0.0 and d.rms_error == 0.0 and d.bound == 0.0
    assert np.all(np.isin(t.times, d.times))
    # The grid asked for explicitly is still there.
    g = diff_tracks(t, t, hz=1000)
    assert np.diff(g.times).max() <= 1e-3 + 1e-12 and np.isnan(g.bound)


def test_samples_union_of_both_key_sets_and_cap():
    a = quat_track(2, 5)
    b = RotationTrack("q", "quaternion", make_curve([0.0123, 0.5, 0.777], key_quaternions(a)[:3]))
    d = diff_tracks(a, b, hz=30)
    assert np.all(np.isin(a.times, d.times)) and np.all(np.isin(b.times, d.times))
    assert np.diff(d.times).max() <= 1 / 30 + 1e-12
    # float32 vs float64 key times do not count as tiny key intervals (10 per shortest own interval).
    f32 = RotationTrack(
        "f", "euler", Curve.make(np.float32(np.arange(4) / 30).astype(float), np.zeros((4, 3)))
    )
    f64 = RotationTrack("f", "euler", Curve.make(np.arange(4) / 30, np.zeros((4, 3))))
    assert len(diff_tracks(f32, f64).times) < 200
    # A long clip with tight keys is capped.
    long = RotationTrack("l", "euler", Curve.make([0.0, 1e-4, 600.0], np.zeros((3, 3))))
    d = diff_tracks(long, long)
    assert len(d.times) <= MAX_SAMPLES + 3


def test_error_between_keys_is_caught():
    # Same keys, but the edited version spins 360 deg between them: invisible at the keys.
    before = RotationTrack("s", "euler", Curve.make([0.0, 1.0], [[0, 0, 0], [0, 0, 0]]))
    after = RotationTrack("s", "euler", Curve.make([0.0, 1.0], [[0, 0, 0], [0, 360, 0]]))
    d = diff_tracks(before, after)
    assert d.errors[0] == 0.0 and d.errors[-1] < 1e-9
    assert d.max_error == pytest.approx(180.0, abs=1e-3)
    # Exact RMS: the played angle is 360 (3s^2 - 2s^3); error = geodesic of that (<= 180).
    s = np.linspace(0, 1, 200_001)
    ang = 360 * (3 * s**2 - 2 * s**3)
    err = np.minimum(ang, 360 - ang)
    assert d.rms_error == pytest.approx(np.sqrt(np.mean(err**2)), abs=1e-2)  # trapezoid on the samples


def test_single_changed_key():
    before = quat_track(3, 5)
    q = key_quaternions(before).copy()
    q[2] = quat_mul(axis_angle_quat(1, np.deg2rad(7.0)), q[2])
    after = before.with_curve(before.curve.with_keys(value=q))
    d = diff_tracks(before, after)
    # Normalizing the blended components may push a neighbouring instant slightly past 7 deg.
    assert 7.0 - 1e-9 <= d.max_error < 7.1
    assert d.errors[np.searchsorted(d.times, before.times[2])] == pytest.approx(7.0, abs=1e-6)
    assert geodesic_angle(key_quaternions(before)[2], q[2]) == pytest.approx(7.0)


def test_diff_clips_paths_and_errors():
    a, b, c = quat_track(1, 4, "a"), quat_track(2, 5, "b"), quat_track(3, 3, "c")
    before = Clip("x", 30, (a, b, c))
    b2 = left_multiply(b, axis_angle_quat(0, np.deg2rad(3.0)))
    after = Clip("x", 30, (c, b2))  # 'a' removed, order changed
    diffs = diff_clips(before, after)
    assert [d.path for d in diffs] == ["b", "c"]
    assert diffs[0].max_error == pytest.approx(3.0, abs=1e-6) and diffs[1].max_error == 0.0
    assert [d.path for d in diff_clips(before, after, paths=["c"])] == ["c"]
    with pytest.raises(KeyError, match="'a'"):
        diff_clips(before, after, paths=["a"])
    assert diffs[0].as_dict()["keys_before"] == 5
    empty = RotationTrack("e", "euler", Curve.make(np.zeros(0), np.zeros((0, 3))))
    with pytest.raises(ValueError, match="no keys"):
        diff_tracks(empty, a)


def _full_errors(before: RotationTrack, after: RotationTrack, times: np.ndarray) -> np.ndarray:
    return geodesic_angle(played(before, times), played(after, times))


@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12), kind=st.sampled_from(["euler", "quaternion"]))
def test_unchanged_intervals_are_exactly_zero_and_changed_ones_fully_evaluated(seed, n, kind):
    # Same key times: intervals whose two keys are identical in both versions are not evaluated
    # (error exactly 0); the result equals evaluating everything, bit for bit.
    rng = np.random.default_rng(seed)
    before = quat_track(seed, n) if kind == "quaternion" else euler_keys(seed, n)
    c = before.curve
    k = int(rng.integers(0, n))
    value = np.array(c.value)
    value[k] += rng.normal(0, 0.2, value.shape[1])
    after = before.with_curve(c.with_keys(value=value))
    d = diff_tracks(before, after)
    np.testing.assert_allclose(d.errors, _full_errors(before, after, d.times), rtol=0, atol=1e-9)
    far = (d.times < c.time[max(k - 1, 0)]) | (d.times > c.time[min(k + 1, n - 1)])
    assert np.all(d.errors[far] == 0.0)
    assert d.max_error > 0.0


def euler_keys(seed: int, n: int, order: str = "zxy") -> RotationTrack:
    rng = np.random.default_rng(seed)
    times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.05, 0.5, n - 1))])
    return RotationTrack(
        "e", "euler", make_curve(times, np.cumsum(rng.uniform(-60, 60, (n, 3)), axis=0)), order
    )


def test_same_curve_with_another_order_or_kind_is_compared():
    # The skip needs the same kind and order: the same channels in another order play other poses.
    a = euler_keys(4, 6)
    b = RotationTrack("e", "euler", a.curve, order="xyz")
    d = diff_tracks(a, b)
    assert d.max_error > 1.0
    np.testing.assert_array_equal(d.errors, _full_errors(a, b, d.times))
    same = diff_tracks(a, RotationTrack("e", "euler", a.curve, order="zxy"))
    assert same.max_error == 0.0 and np.all(same.errors == 0.0)


def test_long_tracks_are_evaluated_in_chunks_exactly():
    # More samples than one evaluation chunk (32k): same bits as one evaluation.
    a = quat_track(5, 40)
    b = left_multiply(a, axis_angle_quat(2, 0.01))
    d = diff_tracks(a, b, hz=5000)
    assert len(d.times) > 40_000
    np.testing.assert_array_equal(d.errors, _full_errors(a, b, d.times))


# ------------------------------------------------------------- certified maximum (issue 10)


def _brute_max(before, after, n=100_001):
    t = np.linspace(before.curve.start, before.curve.end, n)
    return float(_full_errors(before, after, t).max())


@settings(deadline=None, max_examples=15)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 9), kind=st.sampled_from(["euler", "quaternion"]))
def test_max_error_is_the_true_max_within_the_tolerance(seed, n, kind):
    from curveeditor.engine.diff import CERTIFY_TOL_DEG

    rng = np.random.default_rng(seed)
    before = quat_track(seed, n) if kind == "quaternion" else euler_keys(seed, n)
    c = before.curve
    after = before.with_curve(
        c.with_keys(
            value=c.value + rng.normal(0, 0.05 if kind == "quaternion" else 3.0, c.value.shape),
            out_slope=c.out_slope * rng.uniform(0.5, 1.5, c.value.shape),
        )
    )
    d = diff_tracks(before, after)
    brute = _brute_max(before, after)
    # Never below what a very fine grid finds (minus its own error), never above the proven bound.
    assert d.max_error >= brute - CERTIFY_TOL_DEG * max(1.0, brute) - 1e-9
    assert brute <= d.bound + 1e-9 and d.max_error <= d.bound
    # The old 1 kHz grid reading is never above the proven bound.
    assert diff_tracks(before, after, hz=1000).max_error <= d.bound + 1e-12


def test_peak_between_grid_samples_is_found():
    # A long clip: the former grid was capped at 200k samples (3 ms steps over 600 s) and read the
    # bump's top off the grid; the certified max finds it.
    times = np.array([0.0, 300.0, 300.0017, 300.0034, 600.0])
    flat = np.zeros((5, 3))
    bump = flat.copy()
    bump[2, 1] = 5.0
    before = RotationTrack("b", "euler", Curve.make(times, flat))
    after = RotationTrack("b", "euler", Curve.make(times, bump))
    d = diff_tracks(before, after)
    assert d.max_error == pytest.approx(5.0, abs=1e-6) and d.bound - d.max_error <= 1e-6
    assert len(d.times) < 5000  # not a 1 kHz grid over 600 s


def test_mocap_pair_needs_far_fewer_samples_than_the_dense_grid():
    from curveeditor.engine.resample import resample_track
    from curveeditor.engine.unwrap import unwrap_track

    rng = np.random.default_rng(4)
    t = np.arange(600) / 120.0
    e = np.cumsum(rng.normal(0, 1.5, (600, 3)), axis=0) + np.array([0.0, 200.0, 0.0]) * t[:, None]
    wrapped = quat_to_euler(euler_to_quat(e, "zxy"), "zxy")  # exporter-style: wraps at +-180
    src = RotationTrack("m", "euler", make_curve(t, wrapped), "zxy")
    out = resample_track(unwrap_track(src), 120.0, "slerp")
    d = diff_tracks(src, out)
    grid = diff_tracks(src, out, hz=1000)
    assert len(d.times) < 0.6 * len(grid.times)
    assert d.max_error > 90  # the spins Unity played across the wraps
    assert grid.max_error <= d.max_error + 1e-9 and d.max_error <= d.bound <= d.max_error * (1 + 1e-6)


def test_ends_that_differ_by_float32_rounding_are_the_same_time_on_a_loop():
    """A written .anim holds float32 key times (40/30 s -> 1.3333334 s); past a Loop curve's end Unity
    plays its start, so the 1e-7 s sliver past the float64 end must not read as a 30 deg error."""
    from dataclasses import replace

    from curveeditor.engine.curves import WRAP_REPEAT
    from curveeditor.engine.tangents import make_curve

    t = np.arange(0, 41, 10) / 30.0
    v = np.array([[0.0, 5, 0], [10, 5, 0], [20, 5, 0], [40, 5, 0], [30, 5, 0]])
    a = RotationTrack("A", "euler", replace(make_curve(t, v), post_infinity=WRAP_REPEAT))
    b = RotationTrack("A", "euler", replace(a.curve, time=t.astype(np.float32).astype(np.float64)))
    assert b.curve.end > a.curve.end
    assert diff_tracks(a, b).max_error < 1e-3


@settings(deadline=None, max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    turns=st.integers(-3, 3),
    noise=st.sampled_from([0.0, 1e-13, 1e-9, 1e-7, 1e-5, 1e-3, 0.3]),
)
def test_whole_turn_shifts_and_rounding_are_proven_without_samples(seed, turns, noise):
    """Intervals that differ by whole turns per channel plus small changes: the interval bound of
    ``_diff_bound._shifted_bound`` proves them when within the tolerance (no samples), else they are
    certified as before; either way the max is the true max within the tolerance."""
    from curveeditor.engine.diff import CERTIFY_TOL_DEG

    rng = np.random.default_rng(seed)
    before = euler_keys(seed, 40)
    c = before.curve
    shift = np.zeros(c.value.shape)
    shift[20:, rng.integers(0, 3)] = 360.0 * turns  # a wrap removed half way (the interval across it too)
    after = before.with_curve(
        c.with_keys(
            value=c.value + shift + rng.normal(0, noise, c.value.shape),
            out_slope=c.out_slope + rng.normal(0, noise, c.value.shape),
            in_slope=c.in_slope + rng.normal(0, noise, c.value.shape),
        )
    )
    d = diff_tracks(before, after)
    brute = _brute_max(before, after, n=40_001)
    assert d.max_error >= brute - CERTIFY_TOL_DEG * max(1.0, brute) - 1e-9
    assert brute <= d.bound + 1e-9 and d.max_error <= d.bound
    if noise <= 1e-9 and turns == 0:
        assert d.times.size == 40 and d.max_error == 0.0 and d.bound <= 1e-6  # nothing evaluated
