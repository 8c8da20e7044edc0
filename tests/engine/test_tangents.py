"""Unity tangent rules: Auto, ClampedAuto, Linear, Flat, Constant, and per-side recompute."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from curveeditor.engine.curves import Curve, TangentMode, evaluate, tangent_mode_bits
from curveeditor.engine.tangents import (
    MODE_BITS,
    auto_slopes,
    clamped_auto_slopes,
    linear_slopes,
    make_curve,
    recompute_tangents,
)

SETTINGS = settings(deadline=None, max_examples=60)


@st.composite
def keys(draw, n_min=2, n_max=12):
    n = draw(st.integers(n_min, n_max))
    gaps = draw(arrays(np.float64, n, elements=st.floats(0.01, 1.0)))
    t = np.cumsum(gaps)
    v = draw(arrays(np.float64, (n, 2), elements=st.floats(-500, 500)))
    return t, v


def test_auto_is_mean_of_secants():
    t = np.array([0.0, 1.0, 3.0])
    v = np.array([0.0, 2.0, 0.0])
    s = auto_slopes(t, v)[:, 0]
    assert s.tolist() == [2.0, 0.5 * (2.0 + -1.0), -1.0]


def test_clamped_auto_is_flat_at_extrema_and_ends():
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    v = np.array([0.0, 5.0, 1.0, 2.0, 3.0])
    s = clamped_auto_slopes(t, v)[:, 0]
    assert s[0] == 0 and s[-1] == 0  # ends
    assert s[1] == 0 and s[2] == 0  # local max, local min
    assert s[3] == pytest.approx(1.0)


def test_clamped_auto_limits_slope_near_a_plateau():
    t = np.array([0.0, 1.0, 2.0])
    v = np.array([0.0, 100.0, 101.0])
    s = clamped_auto_slopes(t, v)[1, 0]
    assert s == pytest.approx(3.0)  # mean 50.5 clamped to 3 x min secant


@SETTINGS
@given(k=keys(3))
def test_clamped_auto_never_overshoots(k):
    t, v = k
    c = make_curve(t, v, "clamped_auto")
    ts = np.linspace(t[0], t[-1], 400)
    got = evaluate(c, ts)
    seg = np.clip(np.searchsorted(t, ts, side="right") - 1, 0, len(t) - 2)
    lo = np.minimum(v[seg], v[seg + 1])
    hi = np.maximum(v[seg], v[seg + 1])
    tol = 1e-9 * (1 + np.abs(v).max())
    assert np.all(got >= lo - tol) and np.all(got <= hi + tol)


@SETTINGS
@given(k=keys())
def test_every_mode_reproduces_a_straight_line(k):
    t, _ = k
    v = np.stack([3.0 * t - 1.0, -2.0 * t], axis=1)
    ts = np.linspace(t[0], t[-1], 50)
    want = np.stack([3.0 * ts - 1.0, -2.0 * ts], axis=1)
    for mode in ("auto", "linear"):
        assert np.allclose(evaluate(make_curve(t, v, mode), ts), want, atol=1e-6)
    ins, outs = linear_slopes(t, v)
    assert np.allclose(ins, [3.0, -2.0]) and np.allclose(outs, [3.0, -2.0])


def test_make_curve_modes_and_bits():
    t, v = [0.0, 1.0, 2.0], [0.0, 10.0, 0.0]
    assert MODE_BITS == {"clamped_auto": 136, "auto": 34, "linear": 69, "flat": 0, "constant": 103}
    for mode, bits in MODE_BITS.items():
        c = make_curve(t, v, mode)
        assert np.all(c.tangent_mode == bits)
    const = make_curve(t, v, "constant")
    assert np.all(np.isinf(const.in_slope)) and np.all(np.isinf(const.out_slope))
    assert evaluate(const, [0.99, 1.0, 1.5])[:, 0].tolist() == [0.0, 10.0, 10.0]
    flat = make_curve(t, v, "flat")
    assert np.all(flat.in_slope == 0) and np.all(flat.out_slope == 0)
    with pytest.raises(ValueError, match="unknown tangent mode"):
        make_curve(t, v, "smooth")


def test_recompute_honours_per_side_modes():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    v = np.array([0.0, 4.0, 6.0, 0.0])
    modes = np.array(
        [
            tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False),
            tangent_mode_bits(TangentMode.LINEAR, TangentMode.CONSTANT, True),
            tangent_mode_bits(TangentMode.AUTO, TangentMode.CLAMPED_AUTO, True),
            -842150451,  # garbage seen in a real file: treated as Free
        ]
    )
    c = Curve.make(t, v, 7.0, 7.0, tangent_mode=modes)
    r = recompute_tangents(c)
    assert r.in_slope[0, 0] == 7.0 and r.out_slope[0, 0] == 7.0  # Free keeps
    assert r.in_slope[1, 0] == 4.0  # Linear to the left neighbour
    assert np.isinf(r.out_slope[1, 0])  # Constant
    assert r.in_slope[2, 0] == pytest.approx(0.5 * (2.0 - 6.0))  # Auto
    assert r.out_slope[2, 0] == 0.0  # ClampedAuto at a local maximum
    assert r.in_slope[3, 0] == 7.0 and r.out_slope[3, 0] == 7.0
    assert c.in_slope[1, 0] == 7.0  # input not mutated


def test_recompute_only_touches_changed_keys_and_neighbours():
    t = np.arange(6, dtype=float)
    v = np.array([0.0, 1.0, 3.0, 2.0, 5.0, 4.0])
    c = Curve.make(t, v, 99.0, 99.0, tangent_mode=136)
    changed = np.zeros(6, dtype=bool)
    changed[1] = True
    r = recompute_tangents(c, changed)
    full = clamped_auto_slopes(t, v)[:, 0]
    assert np.allclose(r.in_slope[:3, 0], full[:3])
    assert np.all(r.in_slope[3:, 0] == 99.0)
    with pytest.raises(ValueError, match="changed mask"):
        recompute_tangents(c, np.ones(3, dtype=bool))


def test_single_and_two_key_curves():
    one = make_curve([1.0], [5.0])
    assert one.in_slope[0, 0] == 0.0
    two = make_curve([0.0, 1.0], [0.0, 1.0])  # ClampedAuto ends are flat: ease in/out
    assert evaluate(two, [0.5])[0, 0] == pytest.approx(0.5)
    assert evaluate(two, [0.25])[0, 0] < 0.25
