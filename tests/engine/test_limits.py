"""Look-at limits: yaw/pitch never exceed the ranges, smoothing rounds the clamp, rest untouched."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.limits import exponential_smooth, limit_look, look_angles
from curveeditor.engine.rotations import euler_to_quat, hemisphere_continuous
from curveeditor.engine.tangents import make_curve


def head_track(yaw, pitch, roll=None, rate=30.0, order="zxy", kind="euler"):
    n = len(yaw)
    t = np.arange(n) / rate
    roll = np.zeros(n) if roll is None else roll
    e = np.stack([pitch, yaw, roll], axis=1).astype(float)
    if kind == "quaternion":
        q = hemisphere_continuous(euler_to_quat(e))
        return RotationTrack("Head", "quaternion", make_curve(t, q, mode="auto"))
    if order != "zxy":
        from curveeditor.engine.reorder import euler_chain

        e = euler_chain(euler_to_quat(e), order, np.zeros(3))
    return RotationTrack("Head", "euler", make_curve(t, e), order=order)


def test_clamp_keeps_inside_keys_bit_identical():
    t = np.arange(90) / 30.0
    yaw = 120 * np.sin(2 * t)
    pitch = 30 * np.sin(3 * t)
    src = head_track(yaw, pitch, roll=5 * np.ones(90))
    out = limit_look(src)
    a = look_angles(key_quaternions(out))
    assert a[:, 1].max() == pytest.approx(70.0) and a[:, 1].min() == pytest.approx(-70.0)
    np.testing.assert_allclose(a[:, 2], 5.0, atol=1e-9)  # roll kept
    inside = np.abs(yaw) <= 70
    np.testing.assert_array_equal(out.curve.value[inside], src.curve.value[inside])
    grid = np.linspace(0, t[-1], 3000)
    p = look_angles(played(out, grid))
    assert p[:, 1].max() <= 70.0 + 1e-9 and p[:, 1].min() >= -70.0 - 1e-9


def test_winding_is_kept():
    t = np.arange(30) / 30.0
    src = head_track(np.full(30, 10.0), 80 * np.sin(3 * t))
    shifted = src.curve.with_keys(value=src.curve.value + [0.0, 720.0, 0.0])
    src = RotationTrack("Head", "euler", shifted)
    out = limit_look(src, pitch=(-45, 45))
    assert np.all(np.abs(out.curve.value[:, 1] - 730.0) < 1e-6)
    assert look_angles(key_quaternions(out))[:, 0].max() <= 45.0 + 1e-9


def test_smoothing_rounds_the_corner_within_limits():
    t = np.arange(120) / 60.0
    src = head_track(100 * np.sin(2 * t), np.zeros(120), rate=60.0)
    hard = look_angles(key_quaternions(limit_look(src)))[:, 1]
    soft = look_angles(key_quaternions(limit_look(src, smooth_s=0.05)))[:, 1]
    assert soft.max() <= 70.0 and soft.min() >= -70.0
    # Second differences (corners) are smaller with smoothing.
    assert np.abs(np.diff(soft, 2)).max() < 0.5 * np.abs(np.diff(hard, 2)).max()
    # Zero phase: the smoothed peak is at the middle of the hard plateau (the source peak, t = pi/4).
    plateau = np.nonzero(hard >= 70.0 - 1e-9)[0]
    assert abs(np.argmax(soft) - 0.5 * (plateau[0] + plateau[-1])) <= 1.0


def test_exponential_smooth_matches_recursion():
    t = np.array([0.0, 0.1, 0.25, 0.3, 0.6])
    x = np.array([[0.0], [10.0], [10.0], [-5.0], [3.0]])
    tau = 0.2
    y = x.copy()
    for i in range(1, 5):
        a = 1 - np.exp(-(t[i] - t[i - 1]) / tau)
        y[i] = y[i - 1] + a * (x[i] - y[i - 1])
    z = y.copy()
    for i in range(3, -1, -1):
        a = 1 - np.exp(-(t[i + 1] - t[i]) / tau)
        z[i] = z[i + 1] + a * (y[i] - z[i + 1])
    np.testing.assert_allclose(exponential_smooth(t, x, tau), z, atol=1e-12)


def test_unchanged_track_and_bad_arguments():
    src = head_track(np.zeros(10), np.zeros(10))
    assert limit_look(src) is src
    for kwargs, msg in (
        (dict(yaw=(10, -10)), "yaw"),
        (dict(pitch=(-100, 0)), "pitch"),
        (dict(smooth_s=-1.0), "smooth_s"),
        (dict(yaw=5), "yaw"),
    ):
        with pytest.raises(ValueError, match=msg):
            limit_look(src, **kwargs)


ranges = st.tuples(st.floats(-170.0, 0.0), st.floats(0.0, 170.0))


@settings(deadline=None, max_examples=80)
@given(
    st.lists(
        st.tuples(st.floats(-179.0, 179.0), st.floats(-89.0, 89.0), st.floats(-179, 179)),
        min_size=2,
        max_size=30,
    ),
    ranges,
    st.tuples(st.floats(-85.0, 0.0), st.floats(0.0, 85.0)),
    st.sampled_from([0.0, 0.02, 0.3]),
    st.sampled_from([("euler", "zxy"), ("euler", "XYZ"), ("quaternion", "zxy")]),
)
def test_property_limits_never_exceeded(keys, yaw, pitch, smooth, kind_order):
    kind, order = kind_order
    k = np.asarray(keys)
    src = head_track(k[:, 0], k[:, 1], k[:, 2], order=order, kind=kind)
    out = limit_look(src, yaw=yaw, pitch=pitch, smooth_s=smooth)
    a = look_angles(key_quaternions(out))
    eps = 1e-7
    assert np.all(a[:, 1] >= yaw[0] - eps) and np.all(a[:, 1] <= yaw[1] + eps)
    assert np.all(a[:, 0] >= pitch[0] - eps) and np.all(a[:, 0] <= pitch[1] + eps)
    if kind == "euler" and order == "zxy":
        # Unity's own convention with non-overshooting tangents: also between keys.
        grid = np.linspace(src.times[0], src.times[-1], 50 * len(keys))
        p = look_angles(played(out, grid))
        near_lock = np.abs(p[:, 0]) > 89.0
        ok = ~near_lock
        assert np.all(p[ok, 1] >= yaw[0] - 1e-6) and np.all(p[ok, 1] <= yaw[1] + 1e-6)
        assert np.all(p[:, 0] >= pitch[0] - 1e-6) and np.all(p[:, 0] <= pitch[1] + 1e-6)


# ------------------------------------------------------------------ turn-back (the article's loop)


def article_loop(times, target_pitch, target_yaw, yaw, pitch, speed):
    """A direct per-frame port of the head-tracking article's Update():
    out of range -> target neutral; angle = Clamp(Lerp(angle, target, dt * speed), min, max)."""

    def lerp(a, b, t):  # Mathf.Lerp clamps t to [0, 1]
        t = min(max(t, 0.0), 1.0)
        return a + (b - a) * t

    def clamp(v, lo, hi):
        return min(max(v, lo), hi)

    out = []
    cur_y = cur_p = None
    for i, t in enumerate(times):
        ty, tp = target_yaw[i], target_pitch[i]
        if not (yaw[0] <= ty <= yaw[1] and pitch[0] <= tp <= pitch[1]):
            ty, tp = 0.0, 0.0  # the target left the range: turn back to neutral
        if i == 0:  # the head starts where the first target puts it
            cur_y, cur_p = clamp(ty, *yaw), clamp(tp, *pitch)
        else:
            dt = t - times[i - 1]
            cur_y = clamp(lerp(cur_y, ty, dt * speed), *yaw)
            cur_p = clamp(lerp(cur_p, tp, dt * speed), *pitch)
        out.append((cur_p, cur_y))
    return np.array(out)


@pytest.mark.parametrize(
    ("yaw", "pitch", "speed"),
    [
        ((-70.0, 70.0), (-60.0, 60.0), 5.0),
        ((-40.0, 30.0), (-20.0, 50.0), 12.0),
        ((10.0, 70.0), (5.0, 60.0), 3.0),
    ],
)
def test_turnback_matches_the_articles_per_frame_loop(yaw, pitch, speed):
    from curveeditor.engine.limits import limit_turnback
    from curveeditor.engine.resample import uniform_grid

    # Sparse keys (not on frames): the op evaluates what Unity plays at the clip's frame rate.
    t = np.linspace(0.0, 4.0, 23)
    src = head_track(110 * np.sin(1.7 * t), 75 * np.sin(2.3 * t + 0.4), roll=8 * np.cos(t), rate=23 / 4.0)
    src = RotationTrack("Head", "euler", make_curve(t, src.curve.value))
    out = limit_turnback(src, 30.0, yaw=yaw, pitch=pitch, lerp_speed=speed)
    frames = uniform_grid(0.0, 4.0, 30.0)
    np.testing.assert_allclose(out.curve.time, frames)
    target = look_angles(played(src, frames))
    want = article_loop(frames, target[:, 0], target[:, 1], yaw, pitch, speed)
    got = look_angles(played(out, frames))
    np.testing.assert_allclose(got[:, :2], want, atol=1e-9)
    np.testing.assert_allclose(got[:, 2], target[:, 2], atol=1e-9)  # roll follows the source
    # It really turned back: frames whose target is out of range approach neutral.
    outside = (
        (target[:, 1] < yaw[0])
        | (target[:, 1] > yaw[1])
        | (target[:, 0] < pitch[0])
        | (target[:, 0] > pitch[1])
    )
    assert outside.sum() > 10 and not np.allclose(got[outside, 1], np.clip(target[outside, 1], *yaw))


def test_turnback_quaternion_track_and_recipe_runs_at_clip_rate():
    from curveeditor.engine.clip import Clip
    from curveeditor.engine.recipe import Recipe, run_recipe

    t = np.arange(61) / 30.0
    src = head_track(120 * np.sin(2 * t), np.zeros(61), kind="quaternion")
    clip = Clip("c", 30.0, (src,))
    r = Recipe.of({"op": "limit", "turnback": True, "lerp_speed": 5})
    out = run_recipe(clip, r).clip.tracks[0]
    assert out.kind == "quaternion" and out.n_keys == 61
    target = look_angles(played(src, t))
    want = article_loop(t, target[:, 0], target[:, 1], (-70, 70), (-60, 60), 5.0)
    np.testing.assert_allclose(look_angles(played(out, t))[:, :2], want, atol=1e-9)
    assert np.all(np.sum(out.curve.value[1:] * out.curve.value[:-1], axis=1) >= 0)  # one hemisphere
    # Without turnback the same recipe step clamps (and smooth is refused with turnback).
    from curveeditor.engine.recipe import RecipeError

    with pytest.raises(RecipeError, match="'smooth' only applies when turnback is False"):
        Recipe.of({"op": "limit", "turnback": True, "smooth": 0.1})
    with pytest.raises(RecipeError, match="'turnback' must be true or false"):
        Recipe.of({"op": "limit", "turnback": 1})
