"""Selection-scoped clean-up: run a recipe on a time range of some tracks, blending in and out.

Blend rule. For a source track ``S`` and the recipe's result ``R`` (the recipe run on the whole track,
so filters see the motion around the range), the output plays

    ``O(t) = slerp(S(t), R(t), w(t))``,  ``w(t) = smoothstep((t - t0) / h) * smoothstep((t1 - t) / h)``

with ``smoothstep(x) = 3x^2 - 2x^3`` clipped to [0, 1] and ``h`` the blend time (seconds; default a
quarter of the range, at most :data:`DEFAULT_BLEND_S`). Outside ``[t0, t1]`` ``w = 0``: ``O`` is the
source. At ``t0`` and ``t1`` both ``w`` and ``dw/dt`` are 0, so the pose *and* the angular velocity
continue the untouched motion: no pop.

Keys. Keys before ``t0`` and after ``t1`` are the source's (values, slopes, modes). New keys at ``t0``,
``t1``, every frame of the two blend zones, and the result's keys in between, with values of ``O``
(Euler tracks: the continuous decomposition in the track's order continuing the source's value at
``t0``; quaternion tracks: hemisphere-continuous from the source's sign) and one-sided slopes of
``O`` (Free tangents, broken where in != out). The interval from the last key before ``t0`` to the key
at ``t0`` is the source's Hermite segment cut at ``t0`` (same end values and slopes), so it plays as
before (exactly for Hermite segments; a weighted side keeps its fraction of the shorter interval).
If the range changed an Euler track's winding (an unwrap), the keys after ``t1`` are shifted
by the whole turns that make them continue it (same poses).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .clip import EULER, Clip, RotationTrack, played
from .curves import DEFAULT_WEIGHT, Curve, TangentMode, evaluate, tangent_mode_bits
from .recipe import Recipe, RecipeCancelled, RecipeError, RecipeResult, run_recipe_on_track
from .reduce import slerp_pairs
from .reorder import euler_chain
from .rotations import hemisphere_continuous, quat_dot

__all__ = ["DEFAULT_BLEND_S", "blend_weight", "blend_track", "run_on_range", "run_recipe_on_range"]

#: Longest default blend time (seconds) at each end of a range.
DEFAULT_BLEND_S = 0.25
_FD_S = 1e-5
_FREE = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
_FREE_BROKEN = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True)


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _hermite_slope(curve: Curve, t: float, side: str) -> np.ndarray:
    """``(C,)`` derivative (units per second) of ``curve``'s Hermite segment at ``t`` from the ``side``
    ("left" or "right"): the exact slope a key cut in at ``t`` needs to keep that segment."""
    key_t = curve.time
    k = int(np.searchsorted(key_t, t, side="left" if side == "left" else "right")) - 1
    k = min(max(k, 0), curve.n_keys - 2)
    dt = key_t[k + 1] - key_t[k]
    s = (t - key_t[k]) / dt
    m0, m1 = curve.out_slope[k], curve.in_slope[k + 1]
    if not (np.all(np.isfinite(m0)) and np.all(np.isfinite(m1))):
        return np.zeros(curve.n_components)  # stepped: the value is held
    v0, v1 = curve.value[k], curve.value[k + 1]
    d00, d10, d01, d11 = 6 * s * s - 6 * s, 3 * s * s - 4 * s + 1, -6 * s * s + 6 * s, 3 * s * s - 2 * s
    return (d00 * v0 + d10 * dt * m0 + d01 * v1 + d11 * dt * m1) / dt


def blend_weight(t, t0: float, t1: float, blend_s: float) -> np.ndarray:
    """``w(t)`` of the module docstring at ``t (M,)`` seconds: 0 outside ``[t0, t1]``, 1 in the middle."""
    t = np.asarray(t, dtype=np.float64)
    h = max(float(blend_s), 1e-9)
    return _smoothstep((t - t0) / h) * _smoothstep((t1 - t) / h)


def _default_blend(t0: float, t1: float) -> float:
    return min(DEFAULT_BLEND_S, 0.25 * (t1 - t0))


def blend_track(
    source: RotationTrack,
    result: RotationTrack,
    t0: float,
    t1: float,
    frame_rate: float,
    blend_s: float | None = None,
) -> RotationTrack:
    """``source`` with ``result`` blended in on ``[t0, t1]`` seconds (module docstring)."""
    c = source.curve
    if c.n_keys < 2:
        return source
    t0 = max(float(t0), c.start)
    t1 = min(float(t1), c.end)
    if not t1 > t0:
        return source
    h = _default_blend(t0, t1) if blend_s is None else min(float(blend_s), 0.5 * (t1 - t0))
    frames = np.arange(np.ceil(t0 * frame_rate - 1e-9), np.floor(t1 * frame_rate + 1e-9) + 1) / frame_rate
    zone = (frames <= t0 + h) | (frames >= t1 - h)
    rt = np.asarray(result.curve.time)
    middle = rt[(rt > t0 + h) & (rt < t1 - h)]
    new_t = np.unique(np.concatenate([[t0, t1], frames[zone & (frames >= t0) & (frames <= t1)], middle]))
    new_t = new_t[np.concatenate([[True], np.diff(new_t) > 4 * _FD_S])]  # no slivers (float32 key times)
    new_t[-1] = t1
    eps = min(_FD_S, 0.25 * float(np.min(np.diff(new_t)))) if new_t.shape[0] > 1 else _FD_S
    probe = np.stack([new_t - eps, new_t, new_t + eps], axis=1).ravel()
    w = blend_weight(probe, t0, t1, h)
    q = slerp_pairs(played(source, probe), played(result, probe), w)
    if source.kind == EULER:
        start = evaluate(c, [t0 - eps])[0]
        vals = euler_chain(q, source.order, start).reshape(-1, 3, 3)
    else:
        q = hemisphere_continuous(q)
        if quat_dot(q[0], played(source, [t0 - eps])[0]) < 0:
            q = -q
        vals = q.reshape(-1, 3, 4)
    value = vals[:, 1]
    ins = (vals[:, 1] - vals[:, 0]) / eps
    outs = (vals[:, 2] - vals[:, 1]) / eps
    # The two cut keys take the source's own value and slope on the untouched side (exact cut).
    value[0] = evaluate(c, [t0])[0]
    ins[0] = _hermite_slope(c, t0, "left")
    value[-1] = evaluate(c, [t1])[0]
    outs[-1] = _hermite_slope(c, t1, "right")
    before = c.time < new_t[0] - 4 * _FD_S
    after = c.time > new_t[-1] + 4 * _FD_S
    shift = np.zeros(value.shape[1])
    if source.kind == EULER and after.any():
        # Whole turns between the new value at t1 and the source there: the keys after continue it.
        turns = np.round((vals[-1, 1] - value[-1]) / 360.0)
        if np.allclose(vals[-1, 1] - value[-1], 360.0 * turns, atol=1e-6):
            shift = 360.0 * turns
    elif source.kind != EULER and quat_dot(vals[-1, 1], value[-1]) < 0:
        shift = None  # flip the key at t1 and the keys after it onto the new hemisphere
    if shift is None:
        value[-1], outs[-1] = -value[-1], -outs[-1]
    else:
        value[-1] += shift
    n_new = new_t.shape[0]
    broken = np.any(np.abs(ins - outs) > 1e-9 * np.maximum(1.0, np.abs(ins)), axis=1)
    mode = np.where(broken, _FREE_BROKEN, _FREE)[:, None] * np.ones((1, value.shape[1]), dtype=np.int64)
    after_val = c.value[after]
    after_in, after_out = c.in_slope[after], c.out_slope[after]
    if shift is None:
        after_val, after_in, after_out = -after_val, -after_in, -after_out
    else:
        after_val = after_val + shift
    curve = Curve.make(
        np.concatenate([c.time[before], new_t, c.time[after]]),
        np.concatenate([c.value[before], value, after_val]),
        np.concatenate([c.in_slope[before], ins, after_in]),
        np.concatenate([c.out_slope[before], outs, after_out]),
        in_weight=np.concatenate(
            [c.in_weight[before], np.full_like(value, DEFAULT_WEIGHT), c.in_weight[after]]
        ),
        out_weight=np.concatenate(
            [c.out_weight[before], np.full_like(value, DEFAULT_WEIGHT), c.out_weight[after]]
        ),
        weighted_mode=np.concatenate(
            [c.weighted_mode[before], np.zeros((n_new, value.shape[1]), np.int64), c.weighted_mode[after]]
        ),
        tangent_mode=np.concatenate([c.tangent_mode[before], mode, c.tangent_mode[after]]),
        pre_infinity=c.pre_infinity,
        post_infinity=c.post_infinity,
    )
    return source.with_curve(curve)


def run_on_range(
    track: RotationTrack,
    recipe: Recipe,
    frame_rate: float,
    t0: float,
    t1: float,
    blend_s: float | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RotationTrack:
    """``recipe`` applied to ``track`` on ``[t0, t1]`` seconds only, blended in and out (module docstring)."""
    result = run_recipe_on_track(track, recipe, frame_rate, cancel)
    if result is track:
        return track
    return blend_track(track, result, t0, t1, frame_rate, blend_s)


def run_recipe_on_range(
    clip: Clip,
    recipe: Recipe,
    t0: float,
    t1: float,
    paths: Sequence[str] | None = None,
    blend_s: float | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RecipeResult:
    """:func:`~curveeditor.engine.recipe.run_recipe` restricted to the time range ``[t0, t1]`` (seconds)
    of the tracks ``paths`` (all when None): one :class:`RecipeResult` with a diff per changed track."""
    from .diff import diff_tracks

    if not (np.isfinite(t0) and np.isfinite(t1)) or t1 <= t0:
        raise RecipeError(f"time range {t0:g} .. {t1:g} s is empty")
    known = {t.path for t in clip.tracks}
    selected = known if paths is None else set(paths)
    missing = sorted(selected - known)
    if missing:
        raise RecipeError(f"no rotation track {missing[0]!r} in clip {clip.name!r}")
    new_tracks, diffs, changes = [], [], {}
    for tr in clip.tracks:
        if tr.path not in selected or tr.n_keys < 2:
            new_tracks.append(tr)
            continue
        if cancel is not None and cancel():
            raise RecipeCancelled()
        new = run_on_range(tr, recipe, clip.frame_rate, t0, t1, blend_s, cancel)
        new_tracks.append(new)
        changes[tr.path] = [f"range {t0:g}..{t1:g} s: {tr.n_keys} -> {new.n_keys} keys"]
        diffs.append(diff_tracks(tr, new))
    return RecipeResult(clip.with_tracks(new_tracks), diffs, changes)
