"""Resampling: grid, densify, the four interpolants and track-level resampling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation, Slerp

from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve, evaluate, stepped_intervals
from curveeditor.engine.resample import (
    LOCK_WINDOW_DEG,
    METHODS,
    catmull_rom,
    densify,
    resample_quats,
    resample_track,
    rotation_spline,
    slerp,
    squad,
    uniform_grid,
)
from curveeditor.engine.rotations import (
    euler_to_quat,
    geodesic_angle,
    hemisphere_continuous,
    quat_conj,
    quat_dot,
    quat_exp,
    quat_log,
    quat_mul,
    quat_to_euler,
)
from curveeditor.engine.tangents import make_curve
from curveeditor.engine.unwrap import unwrap_track

SETTINGS = settings(deadline=None, max_examples=40)

INTERPOLANTS = {
    "slerp": slerp,
    "squad": squad,
    "catmull-rom": catmull_rom,
    "catmull-rom centripetal": lambda ts, q, t: catmull_rom(ts, q, t, alpha=0.5),
    "spline": rotation_spline,
}


def random_keys(seed: int, n: int, max_step_deg: float = 80.0, uniform: bool = False):
    """Strictly increasing times and hemisphere-continuous quaternions with bounded key steps."""
    rng = np.random.default_rng(seed)
    gaps = np.full(n - 1, 0.2) if uniform else rng.uniform(0.05, 0.5, n - 1)
    times = np.concatenate([[rng.uniform(-1, 1)], rng.uniform(-1, 1) + np.cumsum(gaps)])
    times[1:] = times[0] + np.cumsum(gaps)
    axes = rng.normal(size=(n - 1, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    steps = quat_exp(axes * np.deg2rad(rng.uniform(1.0, max_step_deg, n - 1))[:, None])
    q = np.empty((n, 4))
    q[0] = Rotation.random(random_state=seed % 2**32).as_quat()
    for i in range(1, n):  # test data only
        q[i] = quat_mul(q[i - 1], steps[i - 1])
    return times, hemisphere_continuous(q)


def euler_track(seed: int, n: int, spin: float = 0.0, mode: str = "clamped_auto", fps: float | None = None):
    rng = np.random.default_rng(seed)
    if fps:
        frames = np.cumsum(rng.integers(1, 8, n))
        times = (frames - frames[0]) / fps
    else:
        times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.1, 0.6, n - 1))])
    values = np.cumsum(rng.uniform(-60, 60, (n, 3)), axis=0)
    values[:, 1] += np.linspace(0, spin, n)
    return RotationTrack("t", "euler", make_curve(times, values, mode=mode), order="zxy")


# ------------------------------------------------------------------------------------------ grid


def test_uniform_grid_is_inclusive_with_short_last_step():
    g = uniform_grid(0.0, 1.0, 30)
    assert len(g) == 31 and g[0] == 0.0 and g[-1] == 1.0
    np.testing.assert_allclose(np.diff(g), 1 / 30)
    g = uniform_grid(0.5, 1.01, 10)
    assert g[-1] == 1.01
    np.testing.assert_allclose(g[:-1], 0.5 + np.arange(6) / 10)
    assert g[-1] - g[-2] == pytest.approx(0.01)
    assert list(uniform_grid(2.0, 2.0, 60)) == [2.0]
    # float32 key times (2.8333335 s = 85.000005 frames at 30 Hz) end on a frame, not a sliver step.
    g = uniform_grid(0.0, float(np.float32(85 / 30)), 30)
    assert len(g) == 86 and g[-1] == float(np.float32(85 / 30))
    assert np.diff(g).min() > 0.9 / 30
    with pytest.raises(ValueError, match="positive"):
        uniform_grid(0, 1, 0)
    with pytest.raises(ValueError, match="time range"):
        uniform_grid(1, 0, 30)


# --------------------------------------------------------------------------------- interpolants


@SETTINGS
@given(st.integers(0, 10_000), st.integers(2, 12))
def test_interpolants_pass_through_keys(seed, n):
    times, q = random_keys(seed, n)
    for name, fn in INTERPOLANTS.items():
        out = fn(times, q, times)
        assert geodesic_angle(out, q).max() < 1e-6, name
        assert np.all(quat_dot(out[1:], out[:-1]) >= 0), name


@SETTINGS
@given(st.integers(0, 10_000), st.integers(2, 20))
def test_slerp_matches_scipy(seed, n):
    times, q = random_keys(seed, n, max_step_deg=170.0)
    t = np.random.default_rng(seed).uniform(times[0], times[-1], 500)
    ref = Slerp(times, Rotation.from_quat(q))(t).as_quat()
    assert geodesic_angle(slerp(times, q, t), ref).max() < 1e-9


def test_interpolants_clamp_outside_and_handle_unsorted_duplicates():
    times, q = random_keys(3, 5)
    for name, fn in INTERPOLANTS.items():
        out = fn(times, q, [times[0] - 1.0, times[-1] + 1.0])
        assert geodesic_angle(out, q[[0, -1]]).max() < 1e-9, name
    # Unsorted input with a duplicate time: sorted, and the last given key at that time wins.
    shuffled = np.array([times[2], times[0], times[1], times[1], times[3], times[4]])
    other = euler_to_quat([10.0, 20.0, 30.0])
    qs = np.stack([q[2], q[0], other, q[1], q[3], q[4]])
    for name, fn in INTERPOLANTS.items():
        out = fn(shuffled, qs, times)
        assert geodesic_angle(out, q).max() < 1e-6, name
    with pytest.raises(ValueError, match="quaternions"):
        slerp(times, q[:-1], times)


def _velocity_jumps(fn, times, q, h):
    """Body-frame angular velocity (rad/s) just left and right of each interior key; max jump."""
    k = times[1:-1]
    ql, q0, qr = fn(times, q, k - h), fn(times, q, k), fn(times, q, k + h)
    wl = quat_log(quat_mul(quat_conj(ql), q0)) / h
    wr = quat_log(quat_mul(quat_conj(q0), qr)) / h
    return np.linalg.norm(wr - wl, axis=1).max(), np.linalg.norm(wl, axis=1).max()


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 10_000), st.integers(3, 10), st.booleans())
def test_splines_have_continuous_angular_velocity(seed, n, uniform):
    times, q = random_keys(seed, n, max_step_deg=60.0, uniform=uniform)
    for name, fn in INTERPOLANTS.items():
        if name == "slerp":
            continue
        jumps = [_velocity_jumps(fn, times, q, h)[0] for h in (1e-3, 1e-4, 1e-5)]
        # C1: the one-sided velocities (rad/s) differ only by O(h) (about h times the angular
        # acceleration), so the jump shrinks ~10x per 10x smaller step; C0 slerp's jump does not.
        assert jumps[1] < 0.15 * jumps[0] + 1e-7, name
        assert jumps[2] < 0.15 * jumps[1] + 1e-7, name
        assert jumps[2] < 0.05, name


def test_slerp_is_only_c0():
    times, q = random_keys(11, 6, max_step_deg=60.0)
    coarse, speed = _velocity_jumps(slerp, times, q, 1e-3)
    fine, _ = _velocity_jumps(slerp, times, q, 1e-5)
    assert fine > 0.05 * speed and fine == pytest.approx(coarse, rel=0.05)


def test_squad_uniform_matches_shoemake_controls():
    """With uniform spacing the inner controls are Shoemake's q_i exp(-(log(q_i^-1 q_i+1) + log(q_i^-1
    q_i-1)) / 4) (half-angle logs), so squad at the middle of an interval matches the textbook formula."""
    times, q = random_keys(5, 5, uniform=True)

    def hlog(a, b):  # half-angle log of a^-1 b
        return 0.5 * quat_log(quat_mul(quat_conj(a), b))

    def ctrl(i):
        if i in (0, len(q) - 1):
            return q[i]
        return quat_mul(q[i], quat_exp(2 * (-(hlog(q[i], q[i + 1]) + hlog(q[i], q[i - 1])) / 4)))

    def sl(a, b, u):
        return quat_mul(a, quat_exp(u * quat_log(quat_mul(quat_conj(a), b))))

    for i in range(len(q) - 1):
        u = 0.3
        want = sl(sl(q[i], q[i + 1], u), sl(ctrl(i), ctrl(i + 1), u), 2 * u * (1 - u))
        got = squad(times, q, [times[i] + u * (times[i + 1] - times[i])])[0]
        assert geodesic_angle(got, want) < 1e-9


# -------------------------------------------------------------------------------------- densify


def spin_track(degrees: float = 720.0) -> RotationTrack:
    return RotationTrack("spin", "euler", Curve.make([0.0, 1.0], [[0, 0, 0], [0, degrees, 0]]))


def test_densify_keeps_a_two_key_720_spin():
    track = spin_track()
    times, q = densify(track)
    assert times[0] == 0.0 and times[-1] == 1.0 and np.all(np.diff(times) > 0)
    assert len(times) > 9
    # Every step is <= 90 deg of what Unity plays, and the samples are what Unity plays.
    assert geodesic_angle(q[:-1], q[1:]).max() <= 90.0 + 1e-9
    assert geodesic_angle(q, played(track, times)).max() < 1e-9
    # Summed steps give the whole 720 deg.
    assert geodesic_angle(q[:-1], q[1:]).sum() == pytest.approx(720.0, abs=1e-6)


def test_densify_leaves_slow_tracks_alone():
    track = euler_track(1, 6)
    track = RotationTrack("t", "euler", make_curve(track.times, track.curve.value * 0.1))
    times, q = densify(track)
    np.testing.assert_array_equal(times, track.times)
    assert geodesic_angle(q, key_quaternions(track)).max() < 1e-9


def test_densify_quaternion_track_follows_a_long_way_segment():
    # Keys on opposite hemispheres: Unity plays the long way (~340 deg); densify must sample it.
    a = euler_to_quat([0.0, 10.0, 0.0])
    b = -euler_to_quat([0.0, -10.0, 0.0])
    track = RotationTrack("q", "quaternion", make_curve([0.0, 1.0], np.stack([a, b]), mode="linear"))
    times, q = densify(track)
    dense = np.linspace(0, 1, 2001)
    path = geodesic_angle(played(track, dense[:-1]), played(track, dense[1:])).sum()
    assert path > 300
    assert geodesic_angle(q[:-1], q[1:]).max() <= 90.0 + 1e-6
    assert geodesic_angle(q[:-1], q[1:]).sum() == pytest.approx(path, rel=1e-3)


def random_curve_track(seed: int, kind: str, n: int = 8) -> RotationTrack:
    """Keys with random slopes (some weighted, some far apart, some stepped, quaternions of any norm
    and sign): the cases the analytic motion bound must cover."""
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(0.02, 0.6, n))
    scale = rng.choice([3.0, 40.0, 200.0])
    if kind == "euler":
        value = np.cumsum(rng.normal(0, scale, (n, 3)), axis=0)
        slopes = rng.normal(0, 4 * scale, (2, n, 3))
    else:
        value = euler_to_quat(np.cumsum(rng.normal(0, scale, (n, 3)), axis=0))
        value *= rng.choice([-1.0, 1.0], (n, 1)) * rng.uniform(0.5, 2.0, (n, 1))
        slopes = rng.normal(0, 3.0, (2, n, 4))
    c = value.shape[1]
    slopes[1][rng.random((n, c)) < 0.05] = np.inf
    curve = Curve.make(
        times,
        value,
        slopes[0],
        slopes[1],
        weighted_mode=rng.integers(0, 4, (n, c)) * (rng.random() < 0.5),
        in_weight=rng.uniform(0.0, 1.0, (n, c)),
        out_weight=rng.uniform(0.0, 1.0, (n, c)),
    )
    return RotationTrack("r", kind, curve)


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(["euler", "quaternion"]))
def test_motion_bound_covers_what_unity_plays(seed, kind):
    # The bound lets densify skip probing: it must be >= the motion measured on fine probes (Euler:
    # the channels' summed change; quaternions: the geodesic path) of every non-stepped interval.
    from curveeditor.engine.resample import _motion_bound, _probe_motion

    track = random_curve_track(seed, kind)
    seg = np.nonzero(~stepped_intervals(track.curve))[0]
    step, _ = _probe_motion(track, seg, 512)
    bound = _motion_bound(track)[seg]
    assert np.all(step.sum(axis=1) <= bound * (1 + 1e-9) + 1e-9)


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(["euler", "quaternion"]), st.sampled_from([90.0, 20.0]))
def test_densify_equals_probing_every_interval(seed, kind, max_step):
    # Reference: the probe rule applied to all intervals (what densify did before the bound).
    from curveeditor.engine import resample as rs

    track = random_curve_track(seed, kind)
    times, q = densify(track, max_step)
    seg = np.nonzero(~stepped_intervals(track.curve))[0]
    step, dt = rs._probe_motion(track, seg, 32)
    total = step.sum(axis=1)
    fine = (step.max(axis=1) > 45.0) if kind == "quaternion" else np.zeros(len(seg), bool)
    if np.any(fine):
        total[fine] = rs._probe_motion(track, seg[fine], 512)[0].sum(axis=1)
    split = seg[total > max_step]
    # Exactly the key times plus inner samples of the split intervals, all played exactly.
    inner = times[~np.isin(times, track.times)]
    owner = np.searchsorted(track.times, inner) - 1
    assert set(owner.tolist()) == set(split.tolist())
    assert np.all(np.isin(track.times, times))
    assert geodesic_angle(q, played(track, times)).max() < 1e-9


def test_evaluate_paths_agree_bit_for_bit():
    # evaluate() takes a sorted-grid path, a few-samples-of-a-long-curve path and a general path:
    # all give the same bits (densify and diff rely on evaluating subsets exactly as the whole).
    track = random_curve_track(7, "euler", n=200)
    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(track.curve.start - 1, track.curve.end + 1, 5000))
    t = np.concatenate([t, track.times])
    t.sort()
    whole = evaluate(track.curve, t)
    shuffled = rng.permutation(len(t))
    np.testing.assert_array_equal(evaluate(track.curve, t[shuffled]), whole[shuffled])
    few = np.sort(rng.choice(len(t), 20, replace=False))
    np.testing.assert_array_equal(evaluate(track.curve, t[few]), whole[few])
    np.testing.assert_array_equal(evaluate(track.curve, track.times), track.curve.value)


# ------------------------------------------------------------------------------------- tracks


@pytest.mark.parametrize("method", METHODS)
def test_resample_track_keeps_720_spin(method):
    track = spin_track()
    out = resample_track(track, 60, method)
    assert out.kind == "euler" and out.order == track.order and out.path == track.path
    y = out.curve.value[:, 1]
    assert y.max() - y.min() == pytest.approx(720.0, abs=0.5)
    dense = np.linspace(0, 1, 4001)
    err = geodesic_angle(played(out, dense), played(track, dense))
    # The interpolants only see Unity's motion at the densified samples (<= 90 deg apart), so slerp's
    # constant speed between them differs from the eased Hermite by a few degrees; splines by less.
    limit = {"unity": 0.5, "slerp": 5.0}.get(method, 3.0)
    assert err.max() < limit
    # Finer densification brings every method close to what Unity plays.
    fine = resample_track(track, 60, method, max_step_deg=20.0)
    assert geodesic_angle(played(fine, dense), played(track, dense)).max() < 0.6


@pytest.mark.parametrize("method", METHODS)
@settings(deadline=None, max_examples=15)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8))
def test_resampled_keys_reproduce_source_key_orientations(method, seed, n):
    track = euler_track(seed, n, spin=float(seed % 5) * 300, fps=30.0)
    # Interpolants evaluated at the key times ...
    got = resample_quats(track, track.times, method)
    assert geodesic_angle(got, key_quaternions(track)).max() < 1e-6
    # ... and keys on the 30 Hz grid keep their orientation in the resampled track.
    out = resample_track(track, 30, method)
    idx = np.rint(track.times * 30).astype(int)
    np.testing.assert_allclose(out.times[idx], track.times, atol=1e-12)
    assert geodesic_angle(key_quaternions(out)[idx], key_quaternions(track)).max() < 1e-6


@settings(deadline=None, max_examples=20)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8), spin=st.floats(-1500, 1500))
# Found by CI: catmull-rom passes 6 deg from gimbal lock, where the damped solve wandered z 215 deg.
@example(seed=1810, n=3, spin=-1181.0)
def test_resampled_euler_keeps_the_source_winding(seed, n, spin):
    track = euler_track(seed, n, spin=spin)
    for method in ("slerp", "catmull-rom"):
        out = resample_track(track, 30, method)
        # Winding of the source as the unwrap leaves it: steps faster than the spin speed are
        # wraps, taken the short way; slower ones are spins and kept.
        src = evaluate(unwrap_track(track).curve, out.times)
        assert np.abs(out.curve.value - src).max() <= 180.0 + 1e-9
        # Every key is the resampled pose: exactly, except within 10 deg of gimbal lock where the
        # channels are kept smooth at the price of a pose error below 0.5 deg.
        want = resample_quats(track, out.times, method)
        err = geodesic_angle(euler_to_quat(out.curve.value, "zxy"), want)
        far = np.abs(90.0 - np.abs(quat_to_euler(want, "zxy")[:, 0])) >= LOCK_WINDOW_DEG
        assert err[far].max(initial=0.0) < 1e-6
        assert err.max() < 0.5
    total = out.curve.value[-1] - out.curve.value[0]
    unwrapped = unwrap_track(track).curve.value
    assert total == pytest.approx(unwrapped[-1] - unwrapped[0], abs=180.0)


@pytest.mark.parametrize("method", ["slerp", "squad", "spline"])
def test_resample_quaternion_track(method):
    src = euler_track(7, 6, spin=500.0)
    q = key_quaternions(src)
    q[2] *= -1  # a hemisphere flip in the source keys
    track = RotationTrack("q", "quaternion", make_curve(src.times, q, mode="auto"), meta={"k": 1})
    out = resample_track(track, 60, method)
    assert out.kind == "quaternion" and out.meta == {"k": 1}
    keys = out.curve.value
    assert np.all(quat_dot(keys[1:], keys[:-1]) >= 0)
    assert quat_dot(keys[0], track.curve.value[0]) > 0
    # Central-difference slopes make Unity's per-component Hermite follow the sampled motion.
    dense = np.linspace(out.curve.start, out.curve.end, 3001)
    want = resample_quats(track, dense, method)
    assert geodesic_angle(played(out, out.times), resample_quats(track, out.times, method)).max() < 1e-9
    # Slerp's velocity kinks at the densified samples cannot be followed by a smooth 60 Hz curve.
    assert geodesic_angle(played(out, dense), want).max() < (3.0 if method == "slerp" else 0.5)


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_resample_holds_stepped_keys(kind):
    times = [0.0, 1.0, 2.05, 3.0]
    values = np.array([[0, 0, 0], [0, 90, 0], [0, 100, 0], [0, 300, 0]], float)
    track = RotationTrack("s", "euler", make_curve(times, values, mode="constant"))
    if kind == "quaternion":
        track = RotationTrack("s", kind, make_curve(times, key_quaternions(track), mode="constant"))
    dense = np.linspace(0, 3, 3001)
    # The only difference: the step at 2.05 s lands at the next 10 Hz frame (2.1 s).
    late = (dense >= 2.05) & (dense < 2.1)
    for method in METHODS:
        out = resample_track(track, 10, method)
        assert out.kind == kind
        err = geodesic_angle(played(out, dense), played(track, dense))
        assert err[~late].max() < 1e-9, method
        assert err[late].max() == pytest.approx(10.0), method
        if kind == "euler":
            np.testing.assert_allclose(out.curve.value[:10, 1], 0.0, atol=1e-9)
            np.testing.assert_allclose(out.curve.value[10:21, 1], 90.0, atol=1e-9)
            np.testing.assert_allclose(out.curve.value[30, 1], 300.0, atol=1e-9)
        # The jumps are written as stepped (Constant) tangents.
        assert (
            np.isinf(out.curve.out_slope[[9, 20, 29]]).all()
            and np.isinf(out.curve.in_slope[[10, 21, 30]]).all()
        )


def test_resample_rejects_bad_parameters_and_passes_tiny_tracks():
    track = spin_track()
    with pytest.raises(ValueError, match="unknown resampling method"):
        resample_track(track, 30, "cubic")
    with pytest.raises(ValueError, match="positive"):
        resample_track(track, -1, "slerp")
    single = RotationTrack("one", "euler", Curve.make([0.5], [[1.0, 2.0, 3.0]]))
    assert resample_track(single, 30, "squad") is single


@pytest.mark.parametrize("method", ["slerp", "squad", "spline"])
def test_resampled_euler_stays_smooth_through_gimbal_lock(method):
    # X (ZXY's middle axis) passes within 0.05 deg of 90 while Y and Z keep moving.
    t = np.arange(9) * 8 / 30  # keys on the 30 Hz grid
    values = np.stack([[60, 75, 85, 89.9, 90, 89.95, 85, 75, 60], 40 * np.sin(2 * t), 30 * np.cos(3 * t)], 1)
    track = RotationTrack("g", "euler", make_curve(t, values))
    # By default every key is exactly the resampled pose (issue 20: the damped solve's 0.5 deg pose
    # error was silent) ...
    exact = resample_track(track, 30, method)
    want = resample_quats(track, exact.times, method)
    assert geodesic_angle(key_quaternions(exact), want).max() < 1e-3
    # ... and pose_error trades pose error for smooth channels, explicitly: a plain decomposition
    # swings Y and Z by 40-80 deg per frame here; the followed channels do not ...
    out = resample_track(track, 30, method, pose_error=0.5)
    assert np.abs(np.diff(out.curve.value, axis=0)).max() < 8.0
    assert np.abs(np.diff(exact.curve.value, axis=0)).max() > 8.0
    assert 1e-3 < geodesic_angle(key_quaternions(out), want).max() <= 0.5
    # ... so what Unity plays of them stays close to the resampled motion between frames too.
    dense = np.linspace(0, t[-1], 2001)
    assert geodesic_angle(played(out, dense), resample_quats(track, dense, method)).max() < 1.0
    assert geodesic_angle(played(out, t), key_quaternions(track)).max() < 1e-6


def test_only_the_stepped_euler_channel_steps():
    # X is stepped (Constant), Y turns linearly: Unity steps each channel on its own.
    times = np.array([0.0, 1.0, 2.0])
    values = np.array([[0.0, 0.0, 0.0], [30.0, 60.0, 0.0], [30.0, 120.0, 0.0]])
    slopes = np.array([[np.inf, 60.0, 0.0], [np.inf, 60.0, 0.0], [np.inf, 60.0, 0.0]])
    track = RotationTrack("c", "euler", Curve.make(times, values, slopes, slopes))
    out = resample_track(track, 10, "unity")
    assert np.isinf(out.curve.out_slope[9, 0]) and np.isinf(out.curve.in_slope[10, 0])
    assert np.isfinite(out.curve.out_slope[:, 1:]).all() and np.isfinite(out.curve.in_slope[:, 1:]).all()
    dense = np.linspace(0, 2, 2001)
    assert geodesic_angle(played(out, dense), played(track, dense)).max() < 1e-6


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(["euler", "quaternion"]))
def test_stepped_slerp_in_one_call_equals_run_by_run(seed, kind):
    # Slerp is local, so a stepped track is interpolated in one call; the per-run loop (kept for the
    # spline methods) must give the same bits.
    import curveeditor.engine.resample as rs

    rng = np.random.default_rng(seed)
    track = random_curve_track(seed, kind, n=12)
    c = track.curve
    outs = np.array(c.out_slope)
    outs[rng.random(len(outs)) < 0.3] = np.inf
    track = track.with_curve(c.with_keys(out_slope=outs))
    t = np.linspace(c.start - 0.2, c.end + 0.2, 400)
    t = np.sort(np.concatenate([t, c.time]))
    fast = resample_quats(track, t, "slerp")
    saved = rs._LOCAL_METHODS
    try:
        rs._LOCAL_METHODS = frozenset()
        loop = resample_quats(track, t, "slerp")
    finally:
        rs._LOCAL_METHODS = saved
    np.testing.assert_array_equal(fast, loop)


def test_step_rotvecs_are_quat_log_of_relative_rotation():
    """The column-wise step used by slerp/squad is the same math as rotations.quat_log/quat_mul."""
    from curveeditor.engine.resample import _rel_rotvecs
    from curveeditor.engine.rotations import quat_conj, quat_log, quat_mul

    q = Rotation.random(200, random_state=11).as_quat()
    want = quat_log(quat_mul(quat_conj(q[:-1]), q[1:]))
    np.testing.assert_allclose(_rel_rotvecs(q), want, rtol=0, atol=1e-12)


# ------------------------------------------------------------- short way across wraps (issue 8 s3)


def wrapped_mocap_track(seed: int = 3, n: int = 240, fps: float = 30.0) -> RotationTrack:
    """Exporter-style mocap: smooth motion with a fast yaw drift, decomposed per frame into Unity's
    ZXY with outer angles in (-180, 180], so the channels wrap (179 -> -179) several times."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / fps
    e = np.stack(
        [
            30 * np.sin(2 * np.pi * 0.4 * t + rng.uniform(0, 6)),
            170 * t + 40 * np.sin(2 * np.pi * 0.7 * t),  # crosses +-180 several times
            25 * np.sin(2 * np.pi * 0.9 * t + rng.uniform(0, 6)),
        ],
        axis=1,
    )
    wrapped = quat_to_euler(euler_to_quat(e, "zxy"), "zxy")
    return RotationTrack("Hips", "euler", make_curve(t, wrapped, mode="clamped_auto"), order="zxy")


def test_wrapped_track_really_wraps():
    track = wrapped_mocap_track()
    assert np.any(np.abs(np.diff(track.curve.value, axis=0)) > 300)


@pytest.mark.parametrize("hz", [60.0, 120.0, 30.0])
def test_slerp_resample_across_wraps_is_scipy_slerp_of_the_keys(hz):
    track = wrapped_mocap_track()
    out = resample_track(track, hz, "slerp")
    ref = Slerp(track.times, Rotation.from_quat(key_quaternions(track)))(out.times).as_quat()
    # Every written key is scipy's Slerp between the same keys (before: up to 180 deg off, the
    # 358 deg spins Unity plays across each wrap were densified and kept).
    assert geodesic_angle(key_quaternions(out), ref).max() < 1e-6
    # ... and what Unity plays from the result stays on it between the written keys too.
    dense = np.linspace(out.times[0], out.times[-1], 7001)
    want = Slerp(track.times, Rotation.from_quat(key_quaternions(track)))(dense).as_quat()
    assert geodesic_angle(played(out, dense), want).max() < 3.0  # ClampedAuto curves vs chords
    # No wrap is written back: the channels are continuous.
    assert np.abs(np.diff(out.curve.value, axis=0)).max() < 180 * 2 / hz + 20


@pytest.mark.parametrize("method", ["squad", "catmull-rom", "spline"])
def test_spline_resample_across_wraps_interpolates_the_key_orientations(method):
    track = wrapped_mocap_track()
    grid = uniform_grid(track.curve.start, track.curve.end, 90.0)
    got = resample_quats(track, grid, method)
    fn = {"squad": squad, "catmull-rom": catmull_rom, "spline": rotation_spline}[method]
    want = fn(track.times, key_quaternions(track), grid)
    assert geodesic_angle(got, want).max() < 1e-9
    out = resample_track(track, 90.0, method)
    assert np.abs(np.diff(out.curve.value, axis=0)).max() < 30.0


def test_unity_method_keeps_baking_what_unity_plays_across_wraps():
    track = wrapped_mocap_track()
    out = resample_track(track, 60.0, "unity")
    np.testing.assert_allclose(geodesic_angle(key_quaternions(out), played(track, out.times)), 0.0, atol=1e-6)
    # Unity plays the 358 deg spins: the baked channels keep them.
    assert np.abs(np.diff(out.curve.value, axis=0)).max() > 90.0


@pytest.mark.parametrize("method", ["slerp", "squad", "catmull-rom", "spline"])
def test_slow_spin_over_a_second_stays_a_spin(method):
    times = np.array([0.0, 1.0])
    values = np.array([[0.0, 0.0, 0.0], [0.0, 360.0, 0.0]])
    track = RotationTrack("Spin", "euler", make_curve(times, values, mode="linear"), order="zxy")
    out = resample_track(track, 30.0, method)
    y = out.curve.value[:, 1]
    assert y[-1] - y[0] == pytest.approx(360.0, abs=1e-6)
    dense = np.linspace(0, 1, 2001)
    assert geodesic_angle(played(out, dense), played(track, dense)).max() < 3.0
    # The same step made faster than --spin-speed is a wrap: the short way (no motion at all).
    fast = resample_track(track, 30.0, method, spin_speed=300.0)
    assert geodesic_angle(played(fast, dense), key_quaternions(track)[:1]).max() < 1e-6


def test_quaternion_hemisphere_flip_between_frames_goes_the_short_way():
    track = wrapped_mocap_track()
    q = key_quaternions(track)
    q[::7] *= -1  # stored hemisphere flips: Unity swings the long way between those frames
    qtrack = RotationTrack("Hips", "quaternion", make_curve(track.times, q, mode="linear"))
    out = resample_track(qtrack, 60.0, "slerp")
    want = Slerp(track.times, Rotation.from_quat(q))(out.times).as_quat()
    assert geodesic_angle(key_quaternions(out), want).max() < 1e-6
    assert np.all(np.einsum("ij,ij->i", out.curve.value[1:], out.curve.value[:-1]) > 0)


def test_recipe_and_cli_pass_spin_speed(tmp_path):
    import subprocess
    import sys

    from curveeditor.engine.clip import Clip
    from curveeditor.engine.recipe import OPS, Recipe, run_recipe
    from curveeditor.io import read_clip, write_clip

    assert OPS["resample"].param("spin_speed").default == 1800.0
    times = np.array([0.0, 1.0])
    values = np.array([[0.0, 0.0, 0.0], [0.0, 360.0, 0.0]])
    spin = RotationTrack("Spin", "euler", make_curve(times, values, mode="linear"), order="zxy")
    clip = Clip("c", 30.0, [spin, wrapped_mocap_track()])
    slow = run_recipe(clip, Recipe.of({"op": "resample", "hz": 30, "spin_speed": 200.0}))
    assert np.ptp(slow.clip.track("Spin").curve.value[:, 1]) < 1e-6  # 360 deg/s > 200: a wrap
    src = tmp_path / "in.csv"
    write_clip(clip, str(src))
    out = tmp_path / "out.csv"
    cmd = [sys.executable, "-m", "curveeditor.cli", "clean", str(src), "-o", str(out)]
    subprocess.run(cmd + ["--resample", "60", "--method", "slerp"], check=True, capture_output=True)
    back = read_clip(str(out))
    hips = back.track("Hips")
    src_hips = read_clip(str(src)).track("Hips")
    ref = Slerp(src_hips.times, Rotation.from_quat(key_quaternions(src_hips)))(hips.times).as_quat()
    assert geodesic_angle(key_quaternions(hips), ref).max() < 1e-3  # CSV text rounding
    assert np.ptp(back.track("Spin").curve.value[:, 1]) == pytest.approx(360.0, abs=1e-3)
    out2 = tmp_path / "out2.csv"
    subprocess.run(
        cmd[:-1] + [str(out2), "--resample", "60", "--spin-speed", "200"], check=True, capture_output=True
    )
    assert np.ptp(read_clip(str(out2)).track("Spin").curve.value[:, 1]) < 1e-3


def test_resample_on_the_tracks_own_frames_keeps_the_unwrapped_keys():
    """At the track's own key times every method's samples are the keys: the unwrapped values as
    they are (no quaternion round trip), with the resampler's tangents."""
    from curveeditor.engine.resample import resample_quats, resample_track
    from curveeditor.engine.unwrap import unwrap_track

    rng = np.random.default_rng(8)
    t = np.arange(240) / 120.0
    e = np.cumsum(rng.normal(0, 4, (240, 3)), axis=0) + np.array([0.0, 300.0, 0.0]) * t[:, None]
    wrapped = quat_to_euler(euler_to_quat(e, "zxy"), "zxy")
    src = RotationTrack("m", "euler", make_curve(t, wrapped), "zxy")
    for method in ("slerp", "squad", "catmull-rom"):
        out = resample_track(src, 120.0, method)
        assert np.array_equal(out.times, t)
        assert np.array_equal(out.curve.value, unwrap_track(src).curve.value)
        q = resample_quats(src, t, method, 90.0, 1800.0)
        assert np.max(geodesic_angle(key_quaternions(out), q)) < 1e-9
