"""Curve evaluation against an independent, scalar, loop-based reference of Unity's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.curves import (
    DEFAULT_WEIGHT,
    WRAP_REPEAT,
    Curve,
    TangentMode,
    evaluate,
    tangent_mode_bits,
    tangent_mode_sides,
)

SETTINGS = settings(deadline=None, max_examples=80)


def ref_wrap(t: float, t0: float, t1: float, pre: int, post: int) -> float:
    """Map a time outside [t0, t1]: PingPong 0, Repeat 1, Clamp 2 / Default 3, scalar, with Unity's
    ``Mathf.Repeat(t, L) = clamp(t - floor(t / L) * L, 0, L)`` and ``Mathf.PingPong(t, L) =
    L - |Repeat(t, 2L) - L|``. (Counting whole cycles instead rounds differently at a cycle's end:
    t = 1.0 on a 0.2 s curve lands on 0.2 there and on 0.2 - 6e-17 here, which a stepped last
    segment turns into a different value; Hypothesis found such a curve.)"""
    length = t1 - t0
    mode = pre if t < t0 else post if t > t1 else None
    if mode is None or length <= 0:
        return t

    def repeat(x: float, period: float) -> float:
        return min(max(x - math.floor(x / period) * period, 0.0), period)

    if mode in (2, 3):
        return min(max(t, t0), t1)
    if mode == 1:
        return t0 + repeat(t - t0, length)
    # t0 + length - x can round past t0 (t0 = 1e-98): the curve then plays its first key
    return min(max(t0 + length - abs(repeat(t - t0, 2 * length) - length), t0), t1)


def ref_segment(t, k0, k1):
    """One component of one segment, scalar: Hermite, stepped, or weighted Bezier by bisection."""
    t0, v0, m0, w0, wm0 = k0
    t1, v1, m1, w1, wm1 = k1
    if math.isinf(m0) or math.isinf(m1):
        return v1 if t >= t1 else v0
    dt = t1 - t0
    s = (t - t0) / dt
    out_weighted, in_weighted = bool(wm0 & 2), bool(wm1 & 1)
    if not (out_weighted or in_weighted):
        return (
            (2 * s**3 - 3 * s**2 + 1) * v0
            + (s**3 - 2 * s**2 + s) * dt * m0
            + (-2 * s**3 + 3 * s**2) * v1
            + (s**3 - s**2) * dt * m1
        )
    wo = w0 if out_weighted else 1 / 3
    wi = w1 if in_weighted else 1 / 3
    xs = (0.0, min(max(wo, 0), 1), 1 - min(max(wi, 0), 1), 1.0)
    ys = (v0, v0 + m0 * wo * dt, v1 - m1 * wi * dt, v1)

    def bez(p, u):
        return (1 - u) ** 3 * p[0] + 3 * (1 - u) ** 2 * u * p[1] + 3 * (1 - u) * u**2 * p[2] + u**3 * p[3]

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if bez(xs, mid) < s:
            lo = mid
        else:
            hi = mid
    return bez(ys, 0.5 * (lo + hi))


def ref_evaluate(keys, t, pre=2, post=2):
    """keys: list of (time, value, in_slope, out_slope, in_w, out_w, weighted_mode)."""
    if len(keys) == 1:
        return keys[0][1]
    tw = ref_wrap(t, keys[0][0], keys[-1][0], pre, post)
    for a, b in zip(keys[:-1], keys[1:], strict=True):
        if a[0] <= tw <= b[0]:
            return ref_segment(tw, (a[0], a[1], a[3], a[5], a[6]), (b[0], b[1], b[2], b[4], b[6]))
    raise AssertionError("time not covered")


finite_slope = st.floats(-50, 50, allow_nan=False)
slope = st.one_of(finite_slope, finite_slope, finite_slope, st.just(math.inf), st.just(-math.inf))


@st.composite
def curves(draw):
    n = draw(st.integers(1, 6))
    gaps = draw(st.lists(st.floats(0.05, 2.0), min_size=n, max_size=n))
    t = np.cumsum(gaps) - gaps[0] + draw(st.floats(-1, 1))
    keys = []
    for i in range(n):
        keys.append(
            (
                float(t[i]),
                draw(st.floats(-100, 100)),
                draw(slope),
                draw(slope),
                draw(st.floats(0.0, 1.0)),
                draw(st.floats(0.0, 1.0)),
                draw(st.integers(0, 3)),
            )
        )
    pre, post = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    return keys, pre, post


@SETTINGS
@given(spec=curves(), probes=st.lists(st.floats(-8, 8), min_size=1, max_size=25))
def test_evaluate_matches_scalar_reference(spec, probes):
    keys, pre, post = spec
    k = np.array(keys)
    curve = Curve.make(
        k[:, 0],
        k[:, 1],
        k[:, 2],
        k[:, 3],
        in_weight=k[:, 4],
        out_weight=k[:, 5],
        weighted_mode=k[:, 6].astype(int),
        pre_infinity=pre,
        post_infinity=post,
    )
    probes = np.array(probes + [keys[0][0], keys[-1][0]] + [kk[0] for kk in keys])
    got = evaluate(curve, probes)[:, 0]
    want = np.array([ref_evaluate(keys, float(p), pre, post) for p in probes])
    scale = 1.0 + np.max(np.abs(k[:, 1])) + np.max(np.abs(np.where(np.isfinite(k[:, 2:4]), k[:, 2:4], 0)))
    assert np.allclose(got, want, atol=1e-7 * scale, rtol=1e-7)


def test_keys_are_hit_exactly_and_stepped_holds():
    c = Curve.make([0.0, 1.0, 2.0], [0.0, 10.0, -5.0], [0, np.inf, 0], [np.inf, 0, 0])
    v = evaluate(c, [0.0, 0.5, 0.999, 1.0, 1.5, 2.0])[:, 0]
    assert v[0] == 0 and v[1] == 0 and v[2] == 0 and v[3] == 10
    assert v[5] == -5
    assert v[4] != 10  # the second segment is a Hermite again


def test_weighted_default_weights_reduce_to_hermite():
    t, v = [0.0, 1.5], [1.0, 4.0]
    plain = Curve.make(t, v, [2.0, -3.0], [2.0, -3.0])
    weighted = plain.with_keys(weighted_mode=[3, 3], in_weight=1.0 / 3.0, out_weight=1.0 / 3.0)
    ts = np.linspace(0, 1.5, 41)
    assert np.allclose(evaluate(plain, ts), evaluate(weighted, ts), atol=1e-9)


def test_vector_curve_components_are_independent():
    c = Curve.make([0, 1], [[0, 10, 20], [1, 30, 0]])
    mid = evaluate(c, [0.5])[0]
    assert np.allclose(mid, [0.5, 20.0, 10.0])


def test_infinity_modes():
    c = Curve.make([1.0, 2.0], [0.0, 10.0], [10.0, 10.0], [10.0, 10.0], pre_infinity=0, post_infinity=1)
    # Linear segment 0..10 over 1..2 s.
    assert evaluate(c, [2.25])[0, 0] == pytest.approx(2.5)  # Repeat
    assert evaluate(c, [0.75])[0, 0] == pytest.approx(2.5)  # PingPong: 1 - 0.25 -> 1.25
    assert evaluate(c, [0.25])[0, 0] == pytest.approx(7.5)
    clamp = c.with_keys(pre_infinity=2, post_infinity=3)
    assert evaluate(clamp, [-5.0, 9.0])[:, 0].tolist() == [0.0, 10.0]


def test_make_validates():
    with pytest.raises(ValueError, match="strictly increasing"):
        Curve.make([0, 0], [1, 2])
    with pytest.raises(ValueError, match="finite"):
        Curve.make([0, 1], [1, np.nan])
    with pytest.raises(ValueError, match="does not match"):
        Curve.make([0, 1, 2], [1, 2])


def test_curve_is_immutable_and_select_equals():
    c = Curve.make([0, 1, 2], [1, 2, 3], weighted_mode=0, tangent_mode=136)
    with pytest.raises(ValueError):
        c.value[0, 0] = 5
    s = c.select([0, 2])
    assert s.time.tolist() == [0, 2] and s.value[:, 0].tolist() == [1, 3]
    assert c.equals(c.with_keys()) and not c.equals(s)
    assert c.in_weight[0, 0] == DEFAULT_WEIGHT


def test_tangent_mode_bits_round_trip():
    assert tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False) == 136
    assert tangent_mode_bits(TangentMode.CONSTANT, TangentMode.CONSTANT, True) == 103
    assert tangent_mode_bits(TangentMode.LINEAR, TangentMode.LINEAR, True) == 69
    left, right, broken = tangent_mode_sides(np.array([136, 103, 69, 34, 0]))
    assert left.tolist() == [4, 3, 2, 1, 0]
    assert right.tolist() == [4, 3, 2, 1, 0]
    assert broken.tolist() == [False, True, True, False, False]


def test_zero_weight_at_a_key_hits_the_key_value():
    # X'(0) = 0 when the out weight is 0: the Bezier solver must keep the exact root u = 0.
    c = Curve.make([0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0], out_weight=0.0, weighted_mode=[2, 0])
    assert evaluate(c, [0.0])[0, 0] == 0.0
    ref = ref_evaluate([(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2), (1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0)], 0.3)
    assert evaluate(c, [0.3])[0, 0] == pytest.approx(ref, abs=1e-9)


def test_stepped_intervals_any_infinite_side_in_any_component():
    from curveeditor.engine.curves import stepped_intervals

    t = np.arange(5.0)
    v = np.zeros((5, 3))
    out_s = np.zeros((5, 3))
    in_s = np.zeros((5, 3))
    out_s[0, 2] = np.inf  # key 0's out side, one component: interval 0 holds
    in_s[3, 1] = -np.inf  # key 3's in side: interval 2 holds
    out_s[4, 0] = np.inf  # the last key's out side belongs to no interval
    c = Curve.make(t, v, in_s, out_s)
    np.testing.assert_array_equal(stepped_intervals(c), [True, False, True, False])
    assert stepped_intervals(Curve.make(t[:1], v[:1])).shape == (0,)


def _mathf_repeat(t, length):  # Unity's Mathf.Repeat
    return np.clip(t - np.floor(t / length) * length, 0.0, length)


def _mathf_pingpong(t, length):  # Unity's Mathf.PingPong
    t = _mathf_repeat(t, length * 2.0)
    return length - np.abs(t - length)


@pytest.mark.parametrize(("pre", "post"), [(1, 0), (0, 1), (2, 1), (1, 2)])
def test_infinity_matches_unitys_repeat_and_pingpong(pre, post):
    from curveeditor.engine.curves import INFINITY_MODES, infinity_name, with_infinity
    from curveeditor.engine.tangents import make_curve

    rng = np.random.default_rng(5)
    c = with_infinity(
        make_curve(0.5 + np.cumsum(rng.uniform(0.1, 0.4, 9)), rng.normal(0, 30, (9, 3))), pre, post
    )
    t0, t1 = c.start, c.end
    length = t1 - t0
    t = np.linspace(t0 - 3.3 * length, t1 + 3.3 * length, 2001)

    def wrapped(mode, tt):
        if mode == 1:
            return t0 + _mathf_repeat(tt - t0, length)
        if mode == 0:
            return t0 + _mathf_pingpong(tt - t0, length)
        return np.clip(tt, t0, t1)

    want_t = np.where(t < t0, wrapped(pre, t), np.where(t > t1, wrapped(post, t), t))
    np.testing.assert_allclose(evaluate(c, t), evaluate(c, want_t), atol=1e-9)
    assert INFINITY_MODES == {"Constant": 2, "Loop": 1, "PingPong": 0}
    assert infinity_name(3) == "Constant" and infinity_name(1) == "Loop"
    with pytest.raises(ValueError, match="unknown infinity mode"):
        with_infinity(c, pre=7)


def test_infinity_modes_are_written_to_anim_as_unity_encodes_them(tmp_path, corpus_dir):
    from curveeditor.engine.curves import with_infinity
    from curveeditor.io import read_clip, write_clip

    src = next((corpus_dir / "anim").glob("*EulerAnimation.anim"))
    clip = read_clip(src)
    tr = clip.tracks[0]
    clip2 = clip.with_track(tr.with_curve(with_infinity(tr.curve, pre=1, post=0)))
    out = tmp_path / "o.anim"
    write_clip(clip2, out)
    text = out.read_text()
    block = text[text.index(f"path: {tr.path}\n") - 20000 : text.index(f"path: {tr.path}\n")]
    last = block[block.rindex("m_PreInfinity") :]
    assert "m_PreInfinity: 1\n" in last and "m_PostInfinity: 0\n" in last
    back = read_clip(out).track(tr.path).curve
    assert (back.pre_infinity, back.post_infinity) == (1, 0)
    # Only that curve changed: its m_EulerCurves entry and its 3 m_EditorCurves channels (Unity keeps
    # the editor curves in step with the rotation curve).
    assert text.count("m_PreInfinity: 1") == 4 and text.count("m_PostInfinity: 0") == 4


def test_repeat_at_an_exact_period_multiple_starts_the_cycle_as_unity():
    """t = 1.0 on a 0.05 s Repeat curve is the start of a cycle in Unity's Mathf.Repeat; np.mod rounded it
    to the cycle's end (found by the property test above)."""
    c = Curve.make([0.0, 0.05], [[1.0], [0.0]], post_infinity=WRAP_REPEAT)
    assert evaluate(c, np.array([1.0]))[0, 0] == pytest.approx(1.0)
