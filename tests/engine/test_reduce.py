"""Key reduction: the bound holds on what Unity plays, extrema and ends are kept, RDP baseline."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.reduce import dense_check_grid, rdp_reduce, reduce_track, reduce_tracks, slerp_pairs
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, hemisphere_continuous
from curveeditor.engine.tangents import make_curve


def played_error(src: RotationTrack, red: RotationTrack, per_interval: int = 60) -> float:
    """Max geodesic error (deg) on a grid much denser than the checker's."""
    t = src.times
    s = np.linspace(0.0, 1.0, per_interval, endpoint=False)
    grid = np.concatenate([(t[:-1, None] + np.diff(t)[:, None] * s).ravel(), t[-1:]])
    return float(np.max(geodesic_angle(played(src, grid), played(red, grid))))


def euler_track(values, rate=30.0, mode="clamped_auto", order="zxy") -> RotationTrack:
    values = np.asarray(values, dtype=float)
    t = np.arange(values.shape[0]) / rate
    return RotationTrack("j", "euler", make_curve(t, values, mode=mode), order=order)


def as_quaternion_track(track: RotationTrack) -> RotationTrack:
    """``track``'s key poses as a quaternion track (slopes by finite differences)."""
    q = key_quaternions(track)
    return RotationTrack("q", "quaternion", Curve.make(track.times, q, np.gradient(q, track.times, axis=0)))


def quat_track(quats, rate=30.0) -> RotationTrack:
    t = np.arange(len(quats)) / rate
    return RotationTrack("q", "quaternion", make_curve(t, quats, mode="auto"))


def test_smooth_motion_needs_few_keys_and_stays_in_bound():
    t = np.arange(120) / 60.0
    e = np.stack([40 * np.sin(2 * t), 90 * t, 10 * np.cos(3 * t)], axis=1)
    src = euler_track(e, rate=60.0)
    red = reduce_track(src, 0.1)
    assert red.n_keys < 25
    assert played_error(src, red) <= 0.1
    # Same kind/order, kept keys are source keys with their values.
    assert red.kind == "euler" and red.order == "zxy"
    idx = np.searchsorted(src.times, red.times)
    np.testing.assert_array_equal(src.curve.value[idx], red.curve.value)
    assert red.times[0] == src.times[0] and red.times[-1] == src.times[-1]


def test_beats_rdp_on_curved_motion():
    t = np.arange(240) / 120.0
    e = np.stack([30 * np.sin(3 * t), 60 * np.sin(1.3 * t), 20 * np.cos(2 * t)], axis=1)
    src = euler_track(e, rate=120.0)
    for bound in (0.1, 0.5, 1.0):
        ours = reduce_track(src, bound).n_keys
        base = rdp_reduce(src.times, key_quaternions(src), bound).shape[0]
        assert ours <= 0.8 * base, (bound, ours, base)


def test_large_extrema_are_kept():
    t = np.arange(200) / 50.0
    e = np.stack([45 * np.sin(2 * np.pi * 0.5 * t), np.zeros_like(t), np.zeros_like(t)], axis=1)
    src = euler_track(e, rate=50.0)
    red = reduce_track(src, 0.5)
    peaks = [i for i in range(1, 199) if abs(e[i, 0]) >= abs(e[i - 1, 0]) and abs(e[i, 0]) > abs(e[i + 1, 0])]
    for i in peaks:
        assert src.times[i] in red.times


def test_quaternion_track_reduction():
    t = np.arange(90) / 30.0
    e = np.stack([20 * np.sin(t), 200 * t, 5 * t], axis=1)
    src = quat_track(hemisphere_continuous(euler_to_quat(e)))
    red = reduce_track(src, 0.2)
    assert red.kind == "quaternion"
    assert red.n_keys < 30
    assert played_error(src, red) <= 0.2


def test_wound_euler_spin_kept():
    # A 720-degree spin keyed every 0.5 s: key quaternions alone cannot show it; the reduction must.
    t = np.arange(9) * 0.5
    e = np.stack([np.zeros(9), np.arange(9) * 90.0, np.zeros(9)], axis=1)
    src = RotationTrack("s", "euler", make_curve(t, e, mode="linear"))
    red = reduce_track(src, 0.1)
    assert played_error(src, red) <= 0.1
    assert red.curve.value[-1, 1] == 720.0


def test_stepped_and_weighted_source_segments_are_reproduced():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    v = np.array([[0, 0, 0], [0, 30, 0], [0, 30, 0], [10, 0, 0]], dtype=float)
    ins = np.zeros((4, 3))
    outs = np.zeros((4, 3))
    outs[1] = np.inf
    curve = Curve.make(
        t, v, ins, outs, weighted_mode=np.array([2, 1, 2, 1])[:, None], out_weight=0.8, in_weight=0.1
    )
    src = RotationTrack("w", "euler", curve)
    red = reduce_track(src, 0.05)
    assert played_error(src, red) <= 0.05


def test_small_tracks_and_bad_bound():
    src = euler_track(np.zeros((2, 3)))
    assert reduce_track(src, 0.1) is src
    with pytest.raises(ValueError, match="max_error_deg"):
        reduce_track(euler_track(np.zeros((5, 3))), 0.0)


def test_dense_check_grid_density():
    t = np.array([0.0, 0.001, 0.5])
    grid, start = dense_check_grid(t)
    np.testing.assert_array_equal(grid[start], t)
    assert start[1] - start[0] == 10  # at least 10 per interval
    assert start[2] - start[1] == 499  # 1 kHz on the long interval
    assert np.all(np.diff(grid) > 0)


def test_rdp_baseline():
    # Keys on one great circle: RDP keeps only the ends; a bump in the middle is kept.
    t = np.arange(11, dtype=float)
    e = np.stack([np.zeros(11), np.arange(11) * 5.0, np.zeros(11)], axis=1)
    q = euler_to_quat(e)
    np.testing.assert_array_equal(rdp_reduce(t, q, 0.01), [0, 10])
    e[5, 0] = 3.0
    kept = rdp_reduce(t, euler_to_quat(e), 0.5)
    assert 5 in kept and kept[0] == 0 and kept[-1] == 10
    # Every dropped key is within the bound of the Slerp between its kept neighbours.
    qq = euler_to_quat(e)
    for a, b in zip(kept[:-1], kept[1:], strict=True):
        for i in range(a + 1, b):
            s = np.array([(t[i] - t[a]) / (t[b] - t[a])])
            assert geodesic_angle(slerp_pairs(qq[a][None], qq[b][None], s), qq[i][None])[0] <= 0.5


angles = st.floats(-170.0, 170.0, allow_nan=False)


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.tuples(angles, angles, angles), min_size=3, max_size=25),
    st.sampled_from([0.05, 0.2, 1.0, 3.0]),
    st.sampled_from(["clamped_auto", "auto", "linear"]),
    st.sampled_from(["zxy", "XYZ", "yzx"]),
    st.floats(5.0, 120.0),
)
def test_property_bound_holds_on_what_unity_plays(values, bound, mode, order, rate):
    # Random walks (cumulative) so tracks wind past 180 like real curves do.
    e = np.cumsum(np.asarray(values) * 0.3, axis=0)
    src = euler_track(e, rate=rate, mode=mode, order=order)
    red = reduce_track(src, bound)
    assert played_error(src, red) <= bound + 1e-9
    assert red.times[0] == src.times[0] and red.times[-1] == src.times[-1]


@settings(deadline=None, max_examples=40)
@given(
    st.lists(st.tuples(angles, angles, angles), min_size=3, max_size=20),
    st.sampled_from([0.1, 0.5, 2.0]),
)
def test_property_bound_holds_for_quaternion_tracks(values, bound):
    e = np.cumsum(np.asarray(values) * 0.2, axis=0)
    src = quat_track(hemisphere_continuous(euler_to_quat(e)))
    red = reduce_track(src, bound)
    assert played_error(src, red) <= bound + 1e-9


def test_slerp_pairs_matches_scipy_short_way_and_ends():
    from scipy.spatial.transform import Rotation

    ra, rb = Rotation.random(300, random_state=4), Rotation.random(300, random_state=5)
    a, b = ra.as_quat(), rb.as_quat()
    b[::2] *= -1.0  # the other hemisphere: still the short way
    s = np.linspace(0.0, 1.0, 300)
    want = (ra * Rotation.from_rotvec((ra.inv() * rb).as_rotvec() * s[:, None])).as_quat()
    got = slerp_pairs(a, b, s)
    assert got.shape == (300, 4)
    assert np.max(geodesic_angle(got, want)) < 1e-9
    assert geodesic_angle(got[0], a[0]) < 1e-9 and geodesic_angle(got[-1], b[-1]) < 1e-9
    assert slerp_pairs(a[:0], b[:0], s[:0]).shape == (0, 4)


def test_reduce_that_keeps_every_key_returns_the_track_unchanged():
    # Every key is an extremum, so none can go; the result used to rewrite every key's tangent mode
    # to Free (ClampedAuto 136 -> 0 in the .anim diff) although nothing was reduced.
    values = np.array([[0.0, 0.0, 0.0], [0.0, 90.0, 0.0], [0.0, 0.0, 0.0], [0.0, 90.0, 0.0]])
    track = RotationTrack("t", "euler", make_curve(np.arange(4.0), values, mode="clamped_auto"))
    out = reduce_track(track, 0.5)
    assert out.n_keys == 4
    assert out.curve.equals(track.curve)


def test_reduced_mocap_is_certified_within_the_bound():
    from curveeditor.engine.diff import diff_tracks

    rng = np.random.default_rng(11)
    t = np.arange(900) / 120.0
    e = np.stack([40 * np.sin(1.3 * t), 60 * np.sin(0.7 * t + 1), 25 * np.cos(2.1 * t)], axis=1)
    e += rng.normal(0, 0.05, e.shape)
    src = RotationTrack("m", "euler", make_curve(t, e), "ZYX")
    for bound in (0.1, 0.5):
        red = reduce_track(src, bound)
        d = diff_tracks(src, red)
        assert red.n_keys < 0.2 * src.n_keys
        # The true max of what Unity plays (proven upper bound), not a grid reading.
        assert d.max_error <= bound and d.bound <= bound * 1.001


def _mocap_tracks():
    """Mixed tracks: two ZYX and one zxy Euler, a quaternion, a weighted and a 2-key one."""
    rng = np.random.default_rng(5)
    t = np.arange(300) / 60.0
    out = []
    for k, order in enumerate(("ZYX", "ZYX", "zxy")):
        e = np.stack([40 * np.sin((1 + k) * t), 50 * np.sin(0.6 * t + k), 20 * np.cos(2 * t)], axis=1)
        e += rng.normal(0, 0.05, e.shape)
        out.append(RotationTrack(f"e{k}", "euler", make_curve(t, e), order))
    q = hemisphere_continuous(euler_to_quat(np.stack([30 * np.sin(t), 120 * t, 10 * t], axis=1)))
    out.append(RotationTrack("q", "quaternion", make_curve(t, q, mode="auto")))
    w = make_curve(t, np.stack([30 * np.sin(t), 0 * t, 0 * t], axis=1))
    w = w.with_keys(weighted_mode=np.full((300, 3), 3), in_weight=np.full((300, 3), 0.4))
    out.append(RotationTrack("w", "euler", w))
    out.append(euler_track(np.zeros((2, 3))))
    return out


def test_reduce_tracks_is_reduce_track_of_each_and_certified():
    from curveeditor.engine.diff import diff_tracks

    tracks = _mocap_tracks()
    together = reduce_tracks(tracks, 0.3)
    assert [r.path for r in together] == [t.path for t in tracks]
    assert together[-1] is tracks[-1]
    for src, red in zip(tracks, together, strict=True):
        alone = reduce_track(src, 0.3)
        assert (red.kind, red.order) == (src.kind, src.order)
        # Joining shifts key times by rounding only: the same keys are kept, slopes agree closely.
        np.testing.assert_array_equal(red.times, alone.times)
        np.testing.assert_array_equal(red.curve.value, alone.curve.value)
        np.testing.assert_allclose(red.curve.out_slope, alone.curve.out_slope, rtol=1e-6, atol=1e-6)
        if src.n_keys > 2:
            assert red.n_keys < 0.3 * src.n_keys
            d = diff_tracks(src, red)
            assert d.max_error <= 0.3
            assert played_error(src, red) <= 0.3


def test_failing_segments_flags_exactly_the_segments_that_stray():
    from curveeditor.engine._diff_bound import _Piecewise
    from curveeditor.engine._reduce_certify import failing_segments
    from curveeditor.engine.curves import Curve as C

    t = np.arange(61) / 30.0
    e = np.stack([40 * np.sin(2 * t), 10 * t, 0 * t], axis=1)
    src = euler_track(e, rate=30.0, order="ZYX")
    # Reduced: keys 0, 30, 60 with the source's slopes at them (a cubic per half: strays > 1 deg
    # in the middle of each half of a 40-degree sine) - but key 30..60 is rebuilt to stray only
    # 0.01 deg by keeping all its keys and nudging one value.
    c = src.curve
    v = np.array(c.value)
    v[45, 2] += 0.01
    kept = np.r_[0, 30:61]
    red_curve = C.make(c.time[kept], v[kept], c.in_slope[kept], c.out_slope[kept])
    red = RotationTrack("j", "euler", red_curve, "ZYX")
    a, b = np.array([0, 30]), np.array([30, 60])
    fails = failing_segments(src, red, _Piecewise(src), a, b, 0.5)
    np.testing.assert_array_equal(fails, [True, False])
    # What "False" claims holds: the second half plays within the bound everywhere.
    grid = np.linspace(1.0, 2.0, 20001)
    assert np.max(geodesic_angle(played(src, grid), played(red, grid))) <= 0.5
    assert np.max(geodesic_angle(played(src, grid), played(red, grid))) > 0.005
    # ... and a bound below the nudge flags it.
    assert failing_segments(src, red, _Piecewise(src), a[1:], b[1:], 0.001).tolist() == [True]


def test_constant_tracks_keep_one_key_and_play_the_same():
    """A joint that never moves (fingers, toes of a mocap rig) keeps one key (Unity plays a one-key
    curve as a constant, as its own recordings store static curves), plays its value exactly, and
    taking it out of the lockstep fit leaves the moving tracks' key counts; the moving tracks keep
    the clip's time span."""
    rng = np.random.default_rng(5)
    still = euler_track(np.tile([12.5, -3.0, 170.0], (300, 1)))
    still_q = quat_track(np.tile(euler_to_quat(np.array([[10.0, 20.0, 30.0]]))[0], (300, 1)))
    moving = [euler_track(np.cumsum(rng.normal(0, 2, (300, 3)), axis=0)) for _ in range(3)]
    out = reduce_tracks([still, moving[0], still_q, moving[1], moving[2]], 0.5)
    for src, red in ((still, out[0]), (still_q, out[2])):
        assert red.n_keys == 1
        assert np.array_equal(red.times, src.times[:1])
        assert not np.any(red.curve.in_slope) and not np.any(red.curve.out_slope)
        t = np.linspace(-1, 11, 500)
        assert np.max(geodesic_angle(played(red, t), played(src, t))) < 1e-9  # float rounding only
    for src, red in zip(moving, (out[1], out[3], out[4]), strict=True):
        assert red.n_keys == reduce_track(src, 0.5).n_keys
        assert played_error(src, red) <= 0.5
        assert red.times[0] == src.times[0] and red.times[-1] == src.times[-1]


def test_static_clip_keeps_its_span():
    """When every track is static, one keeps its end keys so the clip keeps its length; a nearly
    static track (within the bound of one pose) becomes one key too."""
    rng = np.random.default_rng(2)
    still = euler_track(np.tile([12.5, -3.0, 170.0], (300, 1)))
    near = euler_track(np.tile([1.0, 2.0, 3.0], (300, 1)) + rng.normal(0, 0.02, (300, 3)))
    out = reduce_tracks([still, near], 0.5)
    assert sorted(r.n_keys for r in out) == [1, 2]
    two = next(r for r in out if r.n_keys == 2)
    assert two.times[0] == still.times[0] and two.times[-1] == still.times[-1]
    assert played_error(near, out[1]) <= 0.5
    alone = reduce_tracks([near, still, near], 0.5)
    assert [r.n_keys for r in alone].count(2) == 1


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_fit_target_shortcut_decides_the_same(kind):
    """Fitter.fit(target=): the same slopes and the same pass/fail against the target as with every
    sample's quaternion; a passing segment settled by the Euler bound reports an upper bound of its
    error, a failing one settled by its first probe a lower bound still above the target, and
    segments the shortcuts leave open their exact error."""
    from curveeditor.engine.reduce import _Fitter

    rng = np.random.default_rng(2)
    e = np.cumsum(rng.normal(0, 1.5, (400, 3)), axis=0)
    e[100:200] = e[100]  # a still stretch: settled without quaternions
    tr = euler_track(e, order="ZYX")
    if kind == "quaternion":
        tr = as_quaternion_track(tr)
    f = _Fitter(tr)
    a = rng.integers(0, 350, 300)
    b = a + rng.integers(1, 50, 300)
    for target in (0.1, 0.485, 2.0):
        err0, m0, m1 = f.fit(a, b)
        err1, n0, n1 = f.fit(a, b, target)
        assert np.array_equal(err0 <= target, err1 <= target)
        assert np.array_equal(m0, n0) and np.array_equal(m1, n1)
        ok = err0 <= target
        assert np.all(err1[ok] >= err0[ok] - 1e-9)
        assert np.all((err1[~ok] > target) & (err1[~ok] <= err0[~ok] + 1e-9))
        if kind == "quaternion":
            assert np.allclose(err1[ok], err0[ok], atol=1e-9)


def test_euler_bound_holds_for_every_order():
    """_Fitter._euler_bound: never below the geodesic angle between Euler triples y and y + d, for
    every Tait-Bryan order, small to large differences, and near gimbal lock (middle angle +-90)."""
    from curveeditor.engine.reduce import _Fitter

    rng = np.random.default_rng(4)
    for order in ("xyz", "xzy", "yzx", "yxz", "zxy", "ZYX"):
        f = _Fitter(euler_track(np.zeros((3, 3)), order=order))
        y = rng.uniform(-180, 180, (60000, 3))
        y[:20000, "xyz".index(order[1].lower())] = rng.choice([-90.0, 90.0], 20000)
        d = rng.normal(0, 1, (60000, 3)) * rng.choice([0.01, 0.5, 5.0, 40.0], (60000, 1))
        geo = geodesic_angle(euler_to_quat(y, order), euler_to_quat(y + d, order))
        bound = f._euler_bound(d)
        assert np.all(geo <= bound + 1e-9)
        assert np.median(bound / np.abs(d).sum(axis=1)) < 0.85  # tighter than the sum of the three


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_rescue_lowers_the_peak_of_near_misses(kind):
    """_Fitter.rescue: a segment whose least-squares slopes miss the target by at most MINIMAX_REACH
    gets the reweighted slopes where their largest error is smaller, and the error it then reports
    decides ``<= target`` as the error of those slopes does (on Euler tracks an upper bound of it);
    some segments the least squares failed now pass, and nothing else is touched."""
    from curveeditor.engine.reduce import MINIMAX_REACH, _Fitter, _segment_error

    rng = np.random.default_rng(5)
    e = np.cumsum(rng.normal(0, 1.5, (400, 3)), axis=0)
    tr = euler_track(e, order="zyx")
    if kind == "quaternion":
        tr = as_quaternion_track(tr)
    f = _Fitter(tr)
    a = rng.integers(0, 350, 400)
    b = a + rng.integers(2, 40, 400)
    target = 0.5
    err0, m00, m10 = f.fit(a, b)
    err, m0, m1 = err0.copy(), m00.copy(), m10.copy()
    at = np.arange(0, 400, 2)  # only these may change
    f.rescue(a, b, err, m0, m1, target, at)
    others = np.setdiff1d(np.arange(400), at)
    assert np.array_equal(err[others], err0[others]) and np.array_equal(m0[others], m00[others])
    near = np.zeros(400, bool)
    near[at] = (err0[at] > target) & (err0[at] <= MINIMAX_REACH * target)
    assert np.all(err[~near] == err0[~near])
    assert np.all(err[near] <= err0[near])
    assert np.count_nonzero(err[near] < err0[near]) > 0.5 * np.count_nonzero(near)
    assert np.count_nonzero(near & (err <= target)) > 0
    changed = near & (err < err0)
    exact = _segment_error(f, a[changed], b[changed], m0[changed], m1[changed])
    assert np.all(exact <= err[changed] + 1e-9)
    assert np.array_equal(exact <= target, err[changed] <= target)


def test_refit_keeps_fewer_keys_within_the_bound():
    """reduce_tracks(refit=True) (the default with channels=True): fewer keys than the plain greedy
    on jittery Euler and quaternion tracks, and what Unity plays stays within the bound between keys."""
    rng = np.random.default_rng(11)
    tracks = []
    for i in range(6):
        e = np.cumsum(rng.normal(0, 1.2, (600, 3)), axis=0)
        tr = euler_track(e, order=("zxy", "zyx", "xyz")[i % 3])
        if i >= 4:
            tr = as_quaternion_track(tr)
        tracks.append(replace(tr, path=f"t{i}"))
    plain = reduce_tracks(tracks, 0.5)
    refit = reduce_tracks(tracks, 0.5, refit=True)
    assert sum(r.n_keys for r in refit) < 0.97 * sum(r.n_keys for r in plain)
    t = np.linspace(tracks[0].times[0], tracks[0].times[-1], 20000)
    for src, red in zip(tracks, refit, strict=True):
        assert geodesic_angle(played(red, t), played(src, t)).max() <= 0.5 + 1e-6


def test_per_channel_mends_where_channel_errors_add_up(monkeypatch):
    """Channels reduced apart at a share of the bound may stray together past it in places: each key
    interval not proven gets its worst channel's segment split (reduce._repair) rather than the whole
    track re-keyed at a smaller share. Fewer channel keys than that fallback, every track keyed per
    channel, and what Unity plays within the bound between keys."""
    import curveeditor.engine.reduce as reduce_mod

    rng = np.random.default_rng(3)
    wave = 20 * np.sin(np.arange(400)[:, None] / 15 + np.arange(3))
    tracks = [
        replace(euler_track(np.cumsum(rng.normal(0, 1.0, (400, 3)), axis=0) + wave, order=o), path=f"t{k}")
        for k, o in enumerate(("zxy", "zyx", "xyz", "zxy"))
    ]
    mended = []
    repair = reduce_mod._repair
    monkeypatch.setattr(reduce_mod, "_repair", lambda *a: mended.append(repair(*a)) or mended[-1])
    split = reduce_tracks(tracks, 0.5, channels=True)
    assert mended and mended[0]  # the first share did not hold together everywhere, and was mended
    monkeypatch.setattr(reduce_mod, "REPAIR_ROUNDS", 0)
    fallback = reduce_tracks(tracks, 0.5, channels=True)
    keys = sum(r.curve.channel_key_count() for r in split)
    assert keys < 0.95 * sum(r.curve.channel_key_count() for r in fallback)
    t = np.linspace(0.0, tracks[0].times[-1], 40000)
    for src, red in zip(tracks, split, strict=True):
        assert red.curve.channel_keys is not None
        assert geodesic_angle(played(red, t), played(src, t)).max() <= 0.5 + 1e-6


def test_per_channel_keys_near_still_joints_below_two_keys_each():
    """A joint that barely moves (shared keys: 2, six channel keys) may still key some channels
    once: each channel one key holds within the whole bound starts as that key, and the mend gives
    a channel its segment back where the others stray with it. Fewer than six channel keys, and what
    Unity plays stays within the bound."""
    t = np.arange(61) / 120.0
    e = np.stack([0.4 * np.sin(9 * t), 0.41 * np.cos(7 * t), 0.0 + 0.9 * t / t[-1]], axis=1)
    src = euler_track(e, rate=120.0, order="yxz")
    bound = 0.6
    shared = reduce_track(src, bound)
    split = reduce_track(src, bound, channels=True)
    assert shared.curve.channel_key_count() == 6
    assert split.curve.channel_key_count() < 6
    grid = np.linspace(0.0, t[-1], 5000)
    assert geodesic_angle(played(split, grid), played(src, grid)).max() <= bound + 1e-6


def test_one_axis_fitter_scores_as_the_quaternions_do():
    """_Fitter(one_axis=True) on a track turning about one axis (a per-channel channel track, wraps
    past 180 deg included): the same slopes and the same geodesic errors as the quaternion path, on
    fit, on the minimax refit and on _segment_error."""
    from curveeditor.engine.reduce import _Fitter, _segment_error

    rng = np.random.default_rng(8)
    e = np.zeros((300, 3))
    e[:, 1] = np.cumsum(rng.normal(0, 6.0, 300))  # spans several turns
    tr = euler_track(e, order="zxy")
    fast, slow = _Fitter(tr, one_axis=True), _Fitter(tr)
    a = rng.integers(0, 250, 300)
    b = a + rng.integers(1, 40, 300)
    e1, m0, m1 = fast.fit(a, b)
    e0, n0, n1 = slow.fit(a, b)
    assert np.allclose(e1, e0, atol=1e-7) and np.array_equal(m0, n0) and np.array_equal(m1, n1)
    long = b - a > 1
    assert np.allclose(
        _segment_error(fast, a[long], b[long], m0[long], m1[long]),
        _segment_error(slow, a[long], b[long], m0[long], m1[long]),
        atol=1e-7,
    )
    f1, _, _ = fast._minimax(a[long], b[long], 0.5)
    f0, _, _ = slow._minimax(a[long], b[long], 0.5)
    assert np.array_equal(f1 <= 0.5, f0 <= 0.5)
    assert np.allclose(f1[f0 > 0.5], f0[f0 > 0.5], atol=1e-7)
