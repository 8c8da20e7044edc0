"""Look-at limits: clamp a track's local yaw and pitch like the head-tracking article (``rotations.md`` s. 8).

Every key's rotation is read in Unity's convention, ZXY Euler angles (``quat_to_euler(q, "zxy")``):
pitch = X in [-90, 90], yaw = Y and roll = Z normalized to (-180, 180]. Yaw is clamped to ``yaw``
and pitch to ``pitch`` (degrees, ``(min, max)``); roll is kept. Optional smoothing with time constant
``smooth_s`` seconds is the article's exponential approach ``a += (1 - exp(-dt / tau)) (target - a)``,
run forward and then backward over the keys (zero phase: no lag, and the clamp's corners are rounded
on both sides). Each smoothed value is a convex combination of clamped values, so the limits are never
exceeded. Yaw is smoothed as the normalized angle (not unwrapped): with a range inside (-180, 180] the
clamped yaw has no wrap to cross, and unwrapping could push a value past a limit.

Output: only keys whose pose changes get new values (others stay bit-identical). Euler tracks keep their
order; each run of new keys continues the unchanged key next to it (winding kept, no wrap added;
nearest-to-the-source-key would add a full spin where the clamp moves a key by about 180 degrees).
Changed keys and their neighbours get ClampedAuto tangents (Unity's non-overshooting mode), so for
Unity's ZXY Euler tracks the played yaw and pitch between those keys stay within the neighbouring keys'
values and therefore within the limits. Quaternion tracks: new keys on the source key's hemisphere,
same tangent rule (per component; between keys the normalized interpolation can leave the range by a
small fraction of the step).

Turn-back (:func:`limit_turnback`, the article's per-frame loop): the source's played yaw and pitch at
each frame of the clip's frame rate are the *target*; while the target is out of range (yaw or pitch
outside its range) the target is neutral (yaw 0, pitch 0: the head turns back to rest), and every
frame ``angle = clamp(lerp(angle, target, dt * lerp_speed), min, max)`` with Unity's clamped
``Mathf.Lerp`` (``t`` capped at 1). The head starts where the first frame's target puts it (clamped),
as if it had been tracking before the clip started. Roll is the source's played roll.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.linalg import solve_banded

from .clip import EULER, RotationTrack, key_quaternions, played
from .curves import TangentMode, tangent_mode_bits
from .reorder import euler_chain
from .rotations import (
    UNITY_ORDER,
    euler_to_quat,
    geodesic_angle,
    hemisphere_continuous,
    quat_dot,
    quat_to_euler,
)
from .tangents import make_curve, recompute_tangents

__all__ = ["limit_look", "limit_turnback", "lerp_follow", "exponential_smooth", "look_angles"]

_CLAMPED_AUTO = tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False)
#: Keys whose pose moves less than this (degrees) count as unchanged.
_UNCHANGED_DEG = 1e-9


def look_angles(q) -> np.ndarray:
    """``(N, 3)`` Unity ZXY angles (degrees, columns pitch x, yaw y, roll z; x in [-90, 90], y and z in
    (-180, 180]) of quaternions ``q (N, 4)``."""
    return quat_to_euler(np.asarray(q, dtype=np.float64).reshape(-1, 4), UNITY_ORDER)


def exponential_smooth(times, values, tau_s: float) -> np.ndarray:
    """Zero-phase exponential smoothing of ``values (N, K)`` sampled at ``times (N,)`` seconds.

    Forward ``y_i = y_(i-1) + a_i (x_i - y_(i-1))`` with ``a_i = 1 - exp(-dt_i / tau_s)``, then the same
    backward over the result. Each pass is a bidiagonal linear system solved at once
    (``scipy.linalg.solve_banded``; no per-key Python loop, any key spacing). Outputs are convex
    combinations of inputs.
    """
    x = np.asarray(values, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    n = x.shape[0]
    if n < 2 or tau_s <= 0:
        return x.copy()
    keep = np.exp(-np.diff(t) / float(tau_s))  # 1 - a_i for i = 1..n-1

    def forward(v: np.ndarray, k: np.ndarray) -> np.ndarray:
        # y_0 = v_0; y_i - k_i y_(i-1) = (1 - k_i) v_i
        ab = np.zeros((2, n))
        ab[0] = 1.0
        ab[1, :-1] = -k
        rhs = v.copy()
        rhs[1:] = (1.0 - k)[:, None] * v[1:]
        return solve_banded((1, 0), ab, rhs)

    y = forward(x, keep)
    return forward(y[::-1], keep[::-1])[::-1]


def _linear_follow(x0: np.ndarray, target: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``y_i = y_(i-1) + a_i (target_i - y_(i-1))`` from ``y_(-1) = x0 (K,)`` for ``target (M, K)`` and
    ``a (M,)``: one bidiagonal solve (no per-frame Python loop)."""
    m = target.shape[0]
    ab = np.zeros((2, m))
    ab[0] = 1.0
    ab[1, :-1] = -(1.0 - a[1:])
    rhs = a[:, None] * target
    rhs[0] += (1.0 - a[0]) * x0
    return solve_banded((1, 0), ab, rhs)


def lerp_follow(times, target, lo, hi, lerp_speed: float, out=None) -> np.ndarray:
    """The article's per-frame loop ``x = clamp(lerp(x, target_i, dt_i * lerp_speed), lo, hi)``, vectorized.

    ``times (M,)`` seconds, ``target (M, K)`` angles (degrees), ``lo``/``hi (K,)`` bounds, ``lerp_speed``
    per second; ``x_0 = clamp(target_0)``. ``out (M,)`` bool marks frames whose target lies outside the
    bounds (the neutral target when 0 is not in range); None = every target is inside. Inside a run of
    in-range targets the clamp never acts (each step is a convex combination of in-range values); a run
    of one constant out-of-range target approaches it geometrically, so clamping the unclamped run gives
    the loop's values exactly. One solve per run of ``out`` (a loop over runs, not frames).
    """
    t = np.asarray(times, dtype=np.float64)
    x = np.asarray(target, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    m = x.shape[0]
    y = np.empty_like(x)
    if m == 0:
        return y
    a = np.ones(m)
    a[1:] = np.minimum(np.diff(t) * float(lerp_speed), 1.0)  # Mathf.Lerp clamps t to [0, 1]
    y[0] = np.clip(x[0], lo, hi)
    if m == 1:
        return y
    flags = np.zeros(m, dtype=bool) if out is None else np.asarray(out, dtype=bool)
    cuts = np.concatenate([[1], 1 + np.nonzero(flags[2:] != flags[1:-1])[0] + 1, [m]])
    for a0, b0 in zip(cuts[:-1], cuts[1:], strict=True):
        y[a0:b0] = np.clip(_linear_follow(y[a0 - 1], x[a0:b0], a[a0:b0]), lo, hi)
    return y


def limit_turnback(
    track: RotationTrack,
    frame_rate: float,
    yaw=(-70.0, 70.0),
    pitch=(-60.0, 60.0),
    lerp_speed: float = 5.0,
) -> RotationTrack:
    """``track`` re-keyed at ``frame_rate`` (Hz) over its key range with the article's turn-back look-at
    (module docstring): yaw/pitch follow the played target with ``lerp_speed`` (per second), turning
    back to neutral while the target is out of ``yaw``/``pitch`` (degrees, (min, max)).

    Euler tracks keep their order's winding from the first key; quaternion tracks come out
    hemisphere-continuous on the first key's side. Keys get ClampedAuto tangents. Raises ``ValueError``
    for bad ranges, a non-positive rate or a negative speed.
    """
    from .resample import uniform_grid  # heavy module; only this path needs it

    ymin, ymax = _check_range("yaw", yaw, -180.0, 180.0)
    pmin, pmax = _check_range("pitch", pitch, -90.0, 90.0)
    speed = float(lerp_speed)
    if not (np.isfinite(speed) and speed >= 0):
        raise ValueError(f"lerp_speed must be a non-negative number per second, got {lerp_speed!r}")
    if track.n_keys < 2:
        return track
    curve = track.curve
    grid = uniform_grid(curve.start, curve.end, frame_rate)
    src = look_angles(played(track, grid))
    lo = np.array([pmin, ymin])
    hi = np.array([pmax, ymax])
    outside = np.any((src[:, :2] < lo) | (src[:, :2] > hi), axis=1)
    target = np.where(outside[:, None], 0.0, src[:, :2])
    neutral_out = bool(np.any((0.0 < lo) | (0.0 > hi)))
    new = src.copy()
    new[:, :2] = lerp_follow(grid, target, lo, hi, speed, outside if neutral_out else None)
    q = euler_to_quat(new, UNITY_ORDER)
    if track.kind == EULER:
        first = curve.value[0]
        if track.order == UNITY_ORDER:
            values = _zxy_run(new, first, False)
        else:
            values = euler_chain(q, track.order, first)
    else:
        values = hemisphere_continuous(q)
        if quat_dot(values[:1], curve.value[:1])[0] < 0:
            values = -values
    out_curve = make_curve(
        grid, values, "clamped_auto", pre_infinity=curve.pre_infinity, post_infinity=curve.post_infinity
    )
    return replace(track, curve=out_curve)


def _check_range(name: str, rng, lo: float, hi: float) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in rng)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (min, max) pair of degrees, got {rng!r}") from None
    if not (np.isfinite(a) and np.isfinite(b)) or a > b or a < lo or b > hi:
        raise ValueError(f"{name} range must satisfy {lo:g} <= min <= max <= {hi:g} degrees, got {rng!r}")
    return a, b


def _zxy_run(target: np.ndarray, anchor: np.ndarray, backward: bool) -> np.ndarray:
    """Channel values for a run of clamped ZXY angles ``target (K, 3)`` next to the key ``anchor (3,)``.

    Pitch and yaw stay in the anchor's own turn (``angle + 360 k`` with the anchor's k), not the nearest
    turn: every clamped angle lies inside its range, so the channel path between any two keys of the
    same turn stays inside the range too (the nearest turn could make it cross +-180 outside it). Roll
    is not limited: unwrapped along the run and shifted to the anchor. An anchor keyed on the other
    equivalent triple falls back to nearest turns.
    """
    look = look_angles(euler_to_quat(anchor[None, :], UNITY_ORDER))[0]
    turns = (anchor - look) / 360.0
    own = np.all(np.abs(turns - np.round(turns)) < 1e-9)
    seq = target.copy()
    seq[:, 2] = np.unwrap(seq[:, 2], period=360.0)
    ref = seq[-1] if backward else seq[0]
    nearest = np.round((anchor - ref) / 360.0)
    k = nearest.copy()
    if own:
        k[:2] = np.round(turns[:2])
    return seq + 360.0 * k


def _write_runs(values, changed, target, new_q, order: str) -> None:
    """Write the changed keys of an Euler curve in place, run by run (a loop over runs, not keys).

    Each run of changed keys continues the unchanged key before it (or, for a run at the start, the
    one after it; for an all-changed track, the source's first key): same winding, no wrap at the run's
    edge. Unity's ZXY: the clamped angles themselves (principal branch, so the pitch channel stays in
    [-90, 90] between keys) in the anchor's turn (:func:`_zxy_run`). Other
    orders: the continuous decomposition of the new poses from the anchor (``reorder.euler_chain``).
    """
    n = changed.shape[0]
    edges = np.diff(np.concatenate([[0], changed.astype(np.int8), [0]]))
    for a, b in zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0], strict=True):
        backward = a == 0 and b < n
        anchor = values[b] if backward else values[a - 1] if a > 0 else values[0]
        if order == UNITY_ORDER:
            values[a:b] = _zxy_run(target[a:b], anchor, backward)
        elif backward:
            values[a:b] = euler_chain(new_q[a : b + 1][::-1], order, anchor)[1:][::-1]
        elif a > 0:
            values[a:b] = euler_chain(new_q[a - 1 : b], order, anchor)[1:]
        else:
            values[a:b] = euler_chain(new_q[a:b], order, anchor)


def limit_look(
    track: RotationTrack,
    yaw=(-70.0, 70.0),
    pitch=(-60.0, 60.0),
    smooth_s: float = 0.0,
) -> RotationTrack:
    """``track`` with its local yaw (Y) and pitch (X) clamped to ``yaw`` / ``pitch`` (degrees, (min, max))
    and optionally smoothed with time constant ``smooth_s`` seconds (see the module docstring).

    Returns the same object when no key changes. Raises ``ValueError`` for bad ranges or a negative
    smoothing time.
    """
    ymin, ymax = _check_range("yaw", yaw, -180.0, 180.0)
    pmin, pmax = _check_range("pitch", pitch, -90.0, 90.0)
    tau = float(smooth_s)
    if not (np.isfinite(tau) and tau >= 0):
        raise ValueError(f"smooth_s must be a non-negative time in seconds, got {smooth_s!r}")
    n = track.n_keys
    if n == 0:
        return track
    curve = track.curve
    q = key_quaternions(track)
    e = look_angles(q)
    target = e.copy()
    target[:, 0] = np.clip(e[:, 0], pmin, pmax)
    target[:, 1] = np.clip(e[:, 1], ymin, ymax)
    if tau > 0:
        target[:, :2] = exponential_smooth(curve.time, target[:, :2], tau)
        # Rounding in the solve must not step outside the range.
        target[:, 0] = np.clip(target[:, 0], pmin, pmax)
        target[:, 1] = np.clip(target[:, 1], ymin, ymax)
    new_q = euler_to_quat(target, UNITY_ORDER)
    changed = geodesic_angle(new_q, q) > _UNCHANGED_DEG
    if not np.any(changed):
        return track
    values = np.array(curve.value)
    if track.kind == EULER:
        _write_runs(values, changed, target, new_q, track.order)
    else:
        sign = np.where(quat_dot(new_q[changed], values[changed]) < 0, -1.0, 1.0)
        values[changed] = new_q[changed] * sign[:, None]
    scope = changed.copy()
    scope[1:] |= changed[:-1]
    scope[:-1] |= changed[1:]
    mode = np.array(curve.tangent_mode)
    mode[scope] = _CLAMPED_AUTO
    new = curve.with_keys(
        value=values, tangent_mode=mode, weighted_mode=np.where(scope[:, None], 0, curve.weighted_mode)
    )
    new = recompute_tangents(new, changed)
    return replace(track, curve=new)
