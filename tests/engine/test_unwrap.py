"""Euler unwrap: poses kept, optimal against a brute-force DP, spins kept, tangents, quaternion tracks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from curveeditor.engine.analysis import inspect_track
from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.rotations import equivalent_euler, euler_to_quat, geodesic_angle, quat_to_euler
from curveeditor.engine.tangents import make_curve
from curveeditor.engine.unwrap import continuous_euler, unwrap_euler, unwrap_track, wrap180
from tests.conftest import corpus_files

ORDERS = ["zxy", "xyz", "yzx", "ZXY", "XZY", "zyx"]
SETTINGS = settings(deadline=None, max_examples=60)


@st.composite
def messy(draw, n_max=40):
    """Smooth-ish motion with random wraps, equivalent-triple flips and random times."""
    n = draw(st.integers(2, n_max))
    steps = draw(arrays(np.float64, (n, 3), elements=st.floats(-25, 25)))
    e = np.cumsum(steps, axis=0) + draw(arrays(np.float64, 3, elements=st.floats(-180, 180)))
    order = draw(st.sampled_from(ORDERS))
    flip = draw(arrays(np.bool_, n))
    e = np.where(flip[:, None], equivalent_euler(e, order), e)
    shifts = draw(arrays(np.int64, (n, 3), elements=st.integers(-2, 2)))
    e = e + 360.0 * shifts
    dts = draw(arrays(np.float64, n, elements=st.floats(1 / 120, 1.0)))
    return e, np.cumsum(dts), order


def total_variation(e):
    return float(np.abs(np.diff(e, axis=0)).sum())


def brute_force_cost(e, t, order, spin):
    """Plain sequential DP over (candidate) per key, the reference for the scan-based optimizer."""
    cand = [e, equivalent_euler(e, order)]
    cost = [0.0, np.inf]
    for i in range(1, len(e)):
        d = e[i] - e[i - 1]
        kept = np.max(np.abs(d)) / (t[i] - t[i - 1]) < spin
        new = [np.inf, np.inf]
        for a, b in itertools.product((0, 1), (0, 1)):
            if kept:
                step = np.abs(cand[b][i] - cand[a][i - 1]).sum() if a == b else np.inf
            else:
                step = np.abs(wrap180(cand[b][i] - cand[a][i - 1])).sum()
            new[b] = min(new[b], cost[a] + step)
        cost = new
    return min(cost)


@SETTINGS
@given(case=messy())
def test_unwrap_keeps_poses_and_never_adds_variation(case):
    e, t, order = case
    u = unwrap_euler(e, t, order)
    assert np.max(geodesic_angle(euler_to_quat(u, order), euler_to_quat(e, order))) < 1e-6
    assert total_variation(u) <= total_variation(e) + 1e-6
    assert np.array_equal(u[0], e[0])
    assert np.array_equal(e, case[0])  # input untouched


@SETTINGS
@given(case=messy(12), spin=st.sampled_from([0.0, 300.0, 1800.0, np.inf]))
def test_unwrap_is_optimal_against_brute_force(case, spin):
    e, t, order = case
    u = unwrap_euler(e, t, order, spin_speed=spin)
    assert total_variation(u) == pytest.approx(brute_force_cost(e, t, order, spin), abs=1e-6)


def test_deliberate_spin_survives_and_mocap_wrap_is_fixed():
    spin = unwrap_euler(np.array([[0.0, 0.0, 0.0], [0.0, 360.0, 0.0]]), np.array([0.0, 1.0]), "zxy")
    assert spin.tolist() == [[0.0, 0.0, 0.0], [0.0, 360.0, 0.0]]
    wrap = unwrap_euler(np.array([[0.0, 179.0, 0.0], [0.0, -179.0, 0.0]]), np.array([0.0, 1 / 30]), "zxy")
    assert wrap[1].tolist() == [0.0, 181.0, 0.0]
    # With spin_speed above the spin's 360 deg/s it is unwrapped as well.
    fast = unwrap_euler(np.array([[0.0, 0.0, 0.0], [0.0, 360.0, 0.0]]), np.array([0.0, 1.0]), "zxy", 300.0)
    assert fast[1].tolist() == [0.0, 0.0, 0.0]


def test_slow_steps_are_kept_exactly_as_authored():
    rng = np.random.default_rng(5)
    e = np.cumsum(rng.normal(0, 2, (200, 3)), axis=0)
    e[100:] = equivalent_euler(e[100:], "zxy") + [0, 360, -720]
    t = np.arange(200) / 30.0
    u = unwrap_euler(e, t, "zxy")
    de, du = np.diff(e, axis=0), np.diff(u, axis=0)
    slow = np.max(np.abs(de), axis=1) * 30.0 < 1800.0
    assert not slow[99] and slow[:99].all() and slow[100:].all()
    assert np.allclose(de[:99], du[:99], atol=1e-9)
    # Keys 100.. went back to the other triple: the same authored motion, middle axis (x) mirrored.
    assert np.allclose(de[100:] * [-1, 1, 1], du[100:], atol=1e-9)
    assert np.max(np.abs(du)) < 20.0  # the flip at 100 is gone


def test_unwrap_handles_a_long_track_without_drift():
    rng = np.random.default_rng(7)
    n = 20000
    e = np.cumsum(rng.normal(0, 4, (n, 3)), axis=0)
    w = wrap180(e)
    u = unwrap_euler(w, np.arange(n) / 60.0, "zxy")
    assert np.max(np.abs(u - e)) < 1e-6  # recovers the continuous source exactly
    k = (u - w) / 360.0
    assert np.allclose(k, np.round(k), atol=1e-12)  # exact multiples of 360 added


def test_continuous_euler_from_quaternions():
    t = np.linspace(0, 4, 400)
    src = np.stack([30 * np.sin(t), 200 * t, 50 * np.cos(t)], axis=1)
    for order in ("zxy", "XYZ"):
        q = euler_to_quat(src, order)
        c = continuous_euler(q, order)
        assert np.max(geodesic_angle(euler_to_quat(c, order), q)) < 1e-6
        assert np.max(np.abs(np.diff(c, axis=0))) < 10.0
        assert np.max(np.abs(np.diff(quat_to_euler(q, order), axis=0))) > 180.0  # raw decomposition wraps


def test_unwrap_track_euler_fixes_wraps_and_keeps_key_poses():
    t = np.arange(90) / 30.0
    src = np.stack([10 * np.sin(t), 150 + 60 * t, 5 * t], axis=1)
    wrapped = wrap180(src)
    tr = RotationTrack("b", "euler", make_curve(t, wrapped), "zxy")
    before = inspect_track(tr)
    out = unwrap_track(tr)
    after = inspect_track(out)
    assert before.wrap_jumps >= 1 and after.wrap_jumps == 0
    assert np.max(geodesic_angle(key_quaternions(out), key_quaternions(tr))) < 1e-6
    # ClampedAuto keys were recomputed: the curve now plays the source motion smoothly.
    dense = np.linspace(0, t[-1], 2000)
    want = euler_to_quat(make_curve(t, src).value, "zxy")
    assert np.max(geodesic_angle(key_quaternions(out), want)) < 1e-6
    steps = geodesic_angle(played(out, dense[:-1]), played(out, dense[1:]))
    assert np.max(steps) < 1.0
    assert np.array_equal(out.curve.tangent_mode, tr.curve.tangent_mode)
    assert unwrap_track(out).curve.equals(out.curve)  # idempotent


def test_unwrap_track_switched_free_keys_keep_played_motion():
    t = np.arange(40) / 30.0
    src = np.stack([20 * np.sin(3 * t), 30 * t, 10 * np.cos(t)], axis=1)
    slopes = np.gradient(src, t, axis=0)
    alt = src.copy()
    alt[20:] = equivalent_euler(src[20:], "zxy")
    alt_slopes = slopes.copy()
    alt_slopes[20:, 0] *= -1  # d/dt of (180 - x) for the middle axis x
    c = Curve.make(t, alt, alt_slopes, alt_slopes)  # Free keys (mode 0)
    tr = RotationTrack("b", "euler", c, "zxy")
    out = unwrap_track(tr)
    assert np.allclose(out.curve.value, src)
    assert np.allclose(out.curve.in_slope, slopes) and np.allclose(out.curve.out_slope, slopes)
    dense = np.linspace(t[21], t[-1], 500)  # segments between switched keys play exactly as before
    assert np.max(geodesic_angle(played(out, dense), played(tr, dense))) < 1e-6


def test_unwrap_track_replaces_free_slopes_computed_across_a_wrap():
    t = np.arange(6) / 30.0
    v = np.array([[0, 170, 0], [0, 175, 0], [0, 179, 0], [0, -177, 0], [0, -173, 0], [0, -169, 0]], float)
    slopes = np.gradient(v, t, axis=0)  # an exporter's slopes across the wrap: about -5000 deg/s
    tr = RotationTrack("b", "euler", Curve.make(t, v, slopes, slopes), "zxy")
    out = unwrap_track(tr)
    assert np.all(np.abs(out.curve.in_slope) < 1800.0) and np.all(np.abs(out.curve.out_slope) < 1800.0)
    dense = np.linspace(0, t[-1], 300)
    steps = geodesic_angle(played(out, dense[:-1]), played(out, dense[1:]))
    assert np.max(steps) < 1.0


def test_unwrap_track_quaternion_hemisphere():
    t = np.arange(30) / 30.0
    q = euler_to_quat(np.stack([10 * t, 40 * t, 5 * t], axis=1), "zxy")
    q[10:20] *= -1
    slopes = np.gradient(q, t, axis=0)
    tr = RotationTrack("q", "quaternion", Curve.make(t, q, slopes, slopes))
    out = unwrap_track(tr)
    assert inspect_track(tr).hemisphere_flips == 2 and inspect_track(out).hemisphere_flips == 0
    assert np.allclose(out.curve.value[10:20], -q[10:20])
    assert np.allclose(out.curve.in_slope[10:20], -slopes[10:20])
    assert np.max(geodesic_angle(key_quaternions(out), q)) < 1e-9
    assert unwrap_track(out) is out


bvh_files = corpus_files("bvh", "*.bvh")


@pytest.mark.corpus
@pytest.mark.parametrize("path", bvh_files[:4], ids=lambda p: p.name[:40])
def test_corpus_bvh_unwrap(path):
    bvh = pytest.importorskip("curveeditor.io.bvh")
    clip = bvh.read_bvh(path)
    for tr in clip.tracks[:25]:
        out = unwrap_track(tr)
        assert np.max(geodesic_angle(key_quaternions(out), key_quaternions(tr)), initial=0) < 1e-6
        assert inspect_track(out).wrap_jumps <= inspect_track(tr).wrap_jumps
        v0, v1 = np.asarray(tr.curve.value), np.asarray(out.curve.value)
        assert total_variation(v1) <= total_variation(v0) + 1e-6


def _same_track(a: RotationTrack, b: RotationTrack) -> bool:
    return a.path == b.path and a.kind == b.kind and a.order == b.order and a.curve.equals(b.curve)


@pytest.mark.parametrize("join_max", [None, 150, 1])
def test_unwrap_tracks_equals_one_call_per_track(join_max, monkeypatch):
    """The joined pass gives each track exactly what unwrap_track gives it (mixed orders, kinds,
    wraps, flips, deliberate spins, Free slopes, 1-key tracks); unchanged tracks come back as is.
    ``join_max``: passes of at most that many keys (a long take's bounded temporaries), down to
    one track a pass."""
    from curveeditor.engine import unwrap
    from curveeditor.engine.unwrap import unwrap_tracks

    if join_max is not None:
        monkeypatch.setattr(unwrap, "JOIN_MAX_KEYS", join_max)
        batches = unwrap._batches([0, 1, 2, 3], [100, 40, 200, 10])
        assert batches == ([[0, 1], [2], [3]] if join_max == 150 else [[0], [1], [2], [3]])

    rng = np.random.default_rng(11)
    tracks = []
    for k, order in enumerate(["zxy", "ZYX", "zxy", "XYZ", "zxy", "ZYX"]):
        n = int(rng.integers(20, 200))
        t = np.sort(rng.uniform(0, 5, n)) + k  # each its own times
        e = np.cumsum(rng.normal(0, 8, (n, 3)), axis=0)
        if k % 2 == 0:
            e = quat_to_euler(euler_to_quat(e, order), order)  # wrapped and flipped per key
        if k == 4:
            e[:, 1] = 400.0 * t  # a deliberate spin (400 deg/s), kept
        mode = "clamped_auto" if k != 2 else "auto"
        tracks.append(RotationTrack(f"T{k}", "euler", make_curve(t, e, mode=mode), order))
    free = make_curve(
        np.arange(30) / 30.0, quat_to_euler(euler_to_quat(np.cumsum(rng.normal(0, 30, (30, 3)), 0)))
    )
    tracks.append(
        RotationTrack("Free", "euler", free.with_keys(tangent_mode=np.zeros_like(free.tangent_mode)))
    )
    q = euler_to_quat(np.cumsum(rng.normal(0, 10, (40, 3)), 0))
    q[::3] *= -1
    tracks.append(RotationTrack("Q", "quaternion", make_curve(np.arange(40) / 30.0, q)))
    tracks.append(RotationTrack("One", "euler", make_curve(np.zeros(1), np.array([[190.0, 0, 0]]))))
    calm = make_curve(np.arange(10) / 30.0, np.linspace(0, 20, 30).reshape(10, 3))
    tracks.append(RotationTrack("Calm", "euler", calm))
    got = unwrap_tracks(tracks)
    for a, t in zip(got, tracks, strict=True):
        assert _same_track(a, unwrap_track(t)), t.path
    assert got[-1] is tracks[-1] and got[-2] is tracks[-2]
    assert sum(a is not t for a, t in zip(got, tracks, strict=True)) >= 3  # the wrapped ones changed
    assert unwrap_tracks(tracks, spin_speed=100.0)[4].curve.equals(unwrap_track(tracks[4], 100.0).curve)


@pytest.mark.corpus
@pytest.mark.parametrize("path", bvh_files, ids=lambda p: p.name[:40])
def test_corpus_unwrap_tracks_equals_one_call_per_track(path):
    from curveeditor.engine.unwrap import unwrap_tracks
    from curveeditor.io.bvh import read_bvh

    clip = read_bvh(path)
    for a, t in zip(unwrap_tracks(clip.tracks), clip.tracks, strict=True):
        assert _same_track(a, unwrap_track(t)), t.path
