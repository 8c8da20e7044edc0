"""Edits recomputed around the changed keys only (issue 9, key drag speed): the results must be the
ones of the whole-track computation, bit for bit.

``display.resample_edited`` splices a drag step's samples into the previous step's;
``curves.changed_span`` says where two states of a curve can play differently; ``edit.move_keys``
recomputes the slopes of the moved keys and their neighbours only.
"""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine import display
from curveeditor.engine import edit as ed
from curveeditor.engine.clip import RotationTrack
from curveeditor.engine.curves import (
    WRAP_PINGPONG,
    WRAP_REPEAT,
    Curve,
    TangentMode,
    changed_keys,
    changed_span,
    evaluate,
    tangent_mode_bits,
    with_infinity,
)
from curveeditor.engine.tangents import make_curve, recompute_tangents
from tests.conftest import corpus_files

FIELDS = ("times", "euler", "quat", "speed", "gimbal")

# Per-key modes a real clip mixes: Unity's presets, broken Linear/Free/Constant sides.
MODES = [
    tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False),
    tangent_mode_bits(TangentMode.AUTO, TangentMode.AUTO, False),
    tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False),
    tangent_mode_bits(TangentMode.LINEAR, TangentMode.LINEAR, True),
    tangent_mode_bits(TangentMode.FREE, TangentMode.LINEAR, True),
    tangent_mode_bits(TangentMode.CONSTANT, TangentMode.CONSTANT, True),
    tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.FREE, True),
]


def _dense(t: np.ndarray, per: int) -> np.ndarray:
    """``app.graphs.sampling.dense_times`` (the app's grid): ``per`` samples per key interval + the
    last key."""
    frac = np.arange(per) / per
    return np.concatenate([(t[:-1, None] + np.diff(t)[:, None] * frac).reshape(-1), t[-1:]])


def _mixed_track(rng, n: int, order: str = "zxy") -> RotationTrack:
    """Euler track whose keys mix tangent modes, some weighted sides, slopes consistent with modes."""
    t = np.cumsum(rng.uniform(1 / 60, 0.2, n))
    v = np.cumsum(rng.normal(0, 25, (n, 3)), axis=0)  # winds past +-180: continuous degrees
    tm = rng.choice(MODES, size=(n, 3))
    wm = np.where(rng.random((n, 3)) < 0.15, rng.integers(1, 4, (n, 3)), 0)
    free = rng.normal(0, 200, (n, 3))
    c = Curve.make(
        t,
        v,
        free,
        free,
        in_weight=rng.uniform(0.05, 0.9, (n, 3)),
        out_weight=rng.uniform(0.05, 0.9, (n, 3)),
        weighted_mode=wm,
        tangent_mode=tm,
    )
    return RotationTrack("Root/Bone", "euler", recompute_tangents(c), order=order)


def _random_move(rng, tr: RotationTrack) -> RotationTrack:
    """A drag step: one key (often the first or last) or a few, in time and/or one channel."""
    n = tr.n_keys
    r = rng.random()
    if r < 0.2:
        idx = {0}
    elif r < 0.4:
        idx = {n - 1}
    elif r < 0.8:
        idx = {int(rng.integers(0, n))}
    else:
        k = int(rng.integers(0, n - 4))
        idx = set(range(k, k + int(rng.integers(2, 5))))
    sel = np.zeros(n, dtype=bool)
    sel[list(idx)] = True
    dt = float(rng.uniform(-0.05, 0.05)) if rng.random() < 0.5 else 0.0
    dt = ed.clamp_time_shift(np.asarray(tr.times), sel, dt, 1e-3)
    return ed.move_keys(tr, idx, dt, int(rng.integers(0, 3)), float(rng.uniform(-90, 90)))


def _assert_same(got: display.TrackSamples, want: display.TrackSamples) -> None:
    for f in FIELDS:
        a, b = getattr(got, f), getattr(want, f)
        assert a.shape == b.shape, f
        assert np.array_equal(a, b), f"{f}: max diff {np.max(np.abs(a - b))}"


@pytest.mark.parametrize("order", ["zxy", "xyz", "yxz"])
@pytest.mark.parametrize("per", [2, 8])
def test_spliced_drag_steps_equal_whole_track_samples(order, per):
    rng = np.random.default_rng(hash((order, per)) % 2**32)
    spliced = 0
    for _trial in range(6):
        tr = _mixed_track(rng, 120, order)
        smp = display.sample_track(tr, _dense(np.asarray(tr.times), per))
        for _step in range(12):  # a drag: each step spliced into the previous step's samples
            new = _random_move(rng, tr)
            times = _dense(np.asarray(new.times), per)
            got = display.resample_edited(tr, smp, new, times)
            want = display.sample_track(new, times)
            if got is not None:
                spliced += 1
                _assert_same(got, want)
            tr, smp = new, (got if got is not None else want)
    assert spliced >= 6 * 12 * 0.9  # the splice applies to nearly every step of a long track


def test_splice_keeps_quaternion_signs_across_a_flip():
    """A stepped interval into a key moved by 200 degrees jumps to the other hemisphere (the smooth
    interval after it comes back without one): every sample after the re-sampled window changes
    sign as a whole, as sampling the whole track chooses."""
    t = np.arange(40) / 30.0
    v = np.zeros((40, 3))
    v[:, 1] = np.linspace(0, 60, 40)
    tm = np.full((40, 3), MODES[0])
    tm[19] = tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CONSTANT, True)
    tr = RotationTrack("a", "euler", recompute_tangents(Curve.make(t, v, tangent_mode=tm)))
    times = _dense(t, 8)
    smp = display.sample_track(tr, times)
    new = ed.move_keys(tr, {20}, 0.0, 1, 200.0)
    got = display.resample_edited(tr, smp, new, times)
    want = display.sample_track(new, times)
    assert got is not None
    _assert_same(got, want)
    assert np.array_equal(want.quat[-1], -smp.quat[-1])  # the flip really happened


def test_splice_declines_what_it_cannot_follow():
    rng = np.random.default_rng(5)
    tr = _mixed_track(rng, 50)
    times = _dense(np.asarray(tr.times), 4)
    smp = display.sample_track(tr, times)
    other = RotationTrack("q", "quaternion", make_curve(tr.times, display.sample_track(tr, tr.times).quat))
    assert display.resample_edited(tr, smp, other, times) is None  # another kind
    fewer = tr.with_curve(tr.curve.select(np.arange(1, 50)))
    assert display.resample_edited(tr, smp, fewer, _dense(np.asarray(fewer.times), 4)) is None
    looped = tr.with_curve(with_infinity(tr.curve, post=WRAP_REPEAT))
    moved = ed.move_keys(looped, {10}, 0.0, 0, 5.0)
    assert changed_span(looped.curve, moved.curve) is None
    assert display.resample_edited(looped, display.sample_track(looped, times), moved, times) is None
    # most keys changed: sampled whole instead
    shifted = tr.with_curve(tr.curve.with_keys(value=tr.curve.value + 1.0))
    assert display.resample_edited(tr, smp, shifted, times) is None


def _quaternion_track(rng, n: int, order: str) -> RotationTrack:
    """Quaternion track of a wandering rotation (hemisphere-continuous keys), mixed tangent modes."""
    e = np.cumsum(rng.normal(0, 20, (n, 3)), axis=0)
    q = display.sample_track(
        RotationTrack("e", "euler", make_curve(np.arange(n) / 30.0, e), order=order), np.arange(n) / 30.0
    ).quat
    t = np.cumsum(rng.uniform(1 / 60, 0.2, n))
    tm = rng.choice(MODES[:3] + MODES[5:6], size=(n, 4))
    c = Curve.make(t, q, tangent_mode=tm)
    return RotationTrack("Root/Q", "quaternion", recompute_tangents(c), order=order)


@pytest.mark.parametrize("order", ["zxy", "xyz"])
def test_spliced_quaternion_drag_steps_equal_whole_track_samples(order):
    rng = np.random.default_rng(21 if order == "zxy" else 22)
    spliced = 0
    for _trial in range(5):
        tr = _quaternion_track(rng, 100, order)
        smp = display.sample_track(tr, _dense(np.asarray(tr.times), 6))
        for _step in range(10):
            n = tr.n_keys
            idx = {int(rng.choice([0, n - 1, int(rng.integers(1, n - 1))]))}
            sel = np.zeros(n, dtype=bool)
            sel[list(idx)] = True
            dt = ed.clamp_time_shift(np.asarray(tr.times), sel, float(rng.uniform(-0.03, 0.03)), 1e-3)
            # a display Euler channel (converted back through the engine) or a raw component
            ch = int(rng.choice([0, 1, 2, 3, 6]))
            new = ed.move_keys(
                tr,
                idx,
                dt if rng.random() < 0.4 else 0.0,
                ch,
                float(rng.uniform(-40, 40)) if ch < 3 else 0.05,
            )
            times = _dense(np.asarray(new.times), 6)
            got = display.resample_edited(tr, smp, new, times)
            want = display.sample_track(new, times)
            if got is not None:
                spliced += 1
                _assert_same(got, want)
            tr, smp = new, (got if got is not None else want)
    assert spliced >= 5 * 10 * 0.8


@pytest.mark.parametrize("mode", [None, WRAP_PINGPONG])
def test_changed_span_bounds_where_two_curves_play_differently(mode):
    rng = np.random.default_rng(11)
    for _ in range(40):
        tr = _mixed_track(rng, 30)
        new = _random_move(rng, tr)
        a, b = tr.curve, new.curve
        if mode is not None:
            a, b = with_infinity(a, pre=mode), with_infinity(b, pre=mode)
        span = changed_span(a, b)
        if mode is not None:
            assert span is None
            continue
        grid = np.linspace(-1.0, max(a.end, b.end) + 1.0, 4001)
        same = np.all(evaluate(a, grid) == evaluate(b, grid), axis=1)
        outside = (grid < span[0]) | (grid > span[1])
        assert np.all(same[outside])
        assert not np.all(same)  # a real move (never 0 in this draw)
    c = make_curve(np.arange(5.0), np.ones((5, 3)))
    assert changed_keys(c, c.with_keys(value=np.array(c.value))) == (0, -1)
    assert changed_span(c, c.with_keys(value=np.array(c.value))) == (np.inf, -np.inf)


def test_move_keys_slopes_equal_a_whole_curve_recompute():
    rng = np.random.default_rng(2)
    for _ in range(60):
        tr = _mixed_track(rng, 25)
        new = _random_move(rng, tr)
        full = recompute_tangents(
            new.curve.with_keys(in_slope=tr.curve.in_slope, out_slope=tr.curve.out_slope)
        )
        assert np.array_equal(new.curve.in_slope, full.in_slope)
        assert np.array_equal(new.curve.out_slope, full.out_slope)


def test_move_keys_shares_the_arrays_it_does_not_change():
    rng = np.random.default_rng(4)
    tr = _mixed_track(rng, 20)
    new = ed.move_keys(tr, {5}, 0.0, 1, 3.0)
    c0, c1 = tr.curve, new.curve
    assert c1.time is c0.time and c1.in_weight is c0.in_weight and c1.tangent_mode is c0.tangent_mode
    assert not np.shares_memory(c1.value, c0.value)
    lo, hi = changed_keys(c0, c1)
    assert 4 <= lo <= 5 <= hi <= 6  # the key and, through their automatic slopes, its neighbours


def test_curve_shares_read_only_views_and_copies_views_of_writeable_arrays():
    block = np.arange(24, dtype=np.float64).reshape(4, 6).copy()
    block.flags.writeable = False
    view = block[:, :3]
    c = Curve.make(np.arange(4.0), view)
    assert np.shares_memory(c.value, block)  # read-only all the way down: shared
    live = np.arange(24, dtype=np.float64).reshape(4, 6)
    ro = live[:, :3]
    ro.flags.writeable = False
    c2 = Curve.make(np.arange(4.0), ro)
    live[0, 0] = 99.0  # the base is still writeable: the curve must not see this
    assert c2.value[0, 0] == 0.0


@pytest.mark.parametrize("path", corpus_files("bvh", "*Gangnam*.bvh")[:1], ids=lambda p: p.name)
def test_spliced_drag_on_the_gangnam_bvh(path):
    from curveeditor.io import read_clip

    clip = read_clip(path)
    tr = max((t for t in clip.tracks if t.kind == "euler"), key=lambda t: t.n_keys)
    per = int(np.clip(6000 // (tr.n_keys - 1), 2, 32))
    smp = display.sample_track(tr, _dense(np.asarray(tr.times), per))
    i = tr.n_keys // 2
    base = tr
    for k in range(1, 9):  # the drag moves key i from its start state, as GraphInput does
        new = ed.move_keys(base, {i}, 0.0, k % 3, 0.7 * k)
        times = _dense(np.asarray(new.times), per)
        got = display.resample_edited(tr, smp, new, times)
        assert got is not None
        _assert_same(got, display.sample_track(new, times))
        tr, smp = new, got


def test_curve_shares_read_only_arrays_unpickled_over_bytes():
    """Arrays unpickled from another process view an immutable ``bytes`` (from 100 rows here):
    read-only, a curve shares them (the parts reader's blocks parsed in a child, issue 26); over a
    ``bytearray`` it copies them."""
    import pickle

    value = pickle.loads(pickle.dumps(np.arange(600.0).reshape(200, 3)))
    assert isinstance(value.base, bytes)
    value.flags.writeable = False
    assert np.shares_memory(Curve.make(np.arange(200.0), value).value, value)
    buf = bytearray(np.arange(600.0).tobytes())
    over = np.frombuffer(buf, dtype=np.float64).reshape(200, 3)
    over.flags.writeable = False
    c = Curve.make(np.arange(200.0), over)
    buf[:8] = np.float64(99.0).tobytes()  # (the bytearray is still writeable: the curve must not see it)
    assert c.value[0, 0] == 0.0
