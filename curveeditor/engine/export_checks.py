"""Checks (and fixes) a rotation track needs before it is written in a given runtime form.

Pure functions, no I/O: writers call :func:`prepare_for_export` and report the returned messages as
warnings. Conventions: quaternions ``(N, 4)`` (x, y, z, w), Euler ``(N, 3)`` degrees, times seconds.

What Unity plays (``shared/domain/rotations.md`` section 2) decides every check:

* **Hemisphere**: quaternion curves are interpolated per component, so neighbouring keys with
  ``dot < 0`` make the bone swing the long way. Fixed by default by negating keys (and their slopes)
  so each key is on its predecessor's hemisphere.
* **More than 180 deg between keys**: a quaternion segment can only express the short way, so when
  the motion to preserve (an Euler spin, a long arc) sweeps more than 180 deg between two keys, keys
  are inserted (samples of what the source plays) so every segment sweeps at most ``max_step_deg``.
* **Euler winding**: converting an Euler track to quaternion keys without densifying would drop every
  spin of 180 deg or more; the same densification keeps it, and the message says so.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clip import EULER, QUATERNION, RotationTrack, played
from .curves import Curve
from .rotations import (
    UNITY_ORDER,
    equivalent_euler,
    geodesic_angle,
    hemisphere_continuous,
    quat_dot,
    quat_to_euler,
)
from .tangents import recompute_tangents

__all__ = [
    "segment_sweep",
    "fix_hemisphere",
    "densify_times",
    "to_quaternion_track",
    "to_euler_track",
    "prepare_for_export",
]

#: Samples per key segment used to measure the swept angle of what Unity plays.
SWEEP_SAMPLES = 24


def _stepped_segments(curve: Curve) -> np.ndarray:
    """``(N-1,)`` True where a segment holds its first value (an infinite slope on either side)."""
    if curve.n_keys < 2:
        return np.zeros(0, dtype=bool)
    return (~np.isfinite(curve.out_slope[:-1])).any(axis=1) | (~np.isfinite(curve.in_slope[1:])).any(axis=1)


def segment_sweep(track: RotationTrack, samples: int = SWEEP_SAMPLES) -> np.ndarray:
    """Angle in degrees that what Unity plays travels within each key segment, ``(N-1,)``.

    Measured as the sum of geodesic steps over ``samples`` sub-steps per segment (stepped segments: 0,
    the jump happens at the next key).
    """
    t = track.times
    n = t.shape[0]
    if n < 2:
        return np.zeros(0)
    u = np.linspace(0.0, 1.0, samples + 1)
    grid = (t[:-1, None] + (t[1:] - t[:-1])[:, None] * u[None, :]).reshape(-1)
    q = played(track, grid).reshape(n - 1, samples + 1, 4)
    steps = geodesic_angle(q[:, :-1].reshape(-1, 4), q[:, 1:].reshape(-1, 4)).reshape(n - 1, samples)
    sweep = steps.sum(axis=1)
    return np.where(_stepped_segments(track.curve), 0.0, sweep)


def densify_times(track: RotationTrack, max_step_deg: float = 90.0, limit_deg: float = 180.0):
    """Key times plus evenly spaced extra times in every segment sweeping more than ``limit_deg``,
    so that each piece sweeps about ``max_step_deg`` or less. Returns ``(times, n_inserted, long_mask)``."""
    t = track.times
    sweep = segment_sweep(track)
    long = sweep > limit_deg
    if not np.any(long):
        return t.copy(), 0, long
    parts = [t[:1]]
    for i in range(t.shape[0] - 1):
        if long[i]:
            k = int(np.ceil(sweep[i] / max_step_deg))
            parts.append(np.linspace(t[i], t[i + 1], k + 1)[1:])
        else:
            parts.append(t[i + 1 : i + 2])
    times = np.concatenate(parts)
    return times, int(times.shape[0] - t.shape[0]), long


def _step(times: np.ndarray) -> float:
    dt = np.diff(times)
    base = float(np.min(dt)) if dt.size else 1.0
    return max(min(1e-4, 0.1 * base), 1e-7)


def fix_hemisphere(track: RotationTrack) -> tuple[RotationTrack, int]:
    """Quaternion track with every key on its predecessor's hemisphere (flipped keys get negated slopes).

    Returns ``(track, number of neighbour pairs that were on opposite hemispheres)``.
    """
    if track.kind != QUATERNION or track.n_keys < 2:
        return track, 0
    v = track.curve.value
    flips = int(np.sum(quat_dot(v[1:], v[:-1]) < 0))
    if flips == 0:
        return track, 0
    fixed = hemisphere_continuous(v)
    sign = np.where(np.sum(fixed * v, axis=1) < 0, -1.0, 1.0)[:, None]
    c = track.curve
    curve = c.with_keys(value=fixed, in_slope=c.in_slope * sign, out_slope=c.out_slope * sign)
    # Keys whose tangent mode derives the slopes from the neighbours (Auto, ClampedAuto, Linear)
    # get them recomputed around the flipped keys; Free keys keep their (negated) slopes.
    curve = recompute_tangents(curve, sign[:, 0] < 0)
    return replace(track, curve=curve), flips


#: Default largest deviation (degrees) a converted track may have from the source's played motion.
CONVERT_TOLERANCE_DEG = 0.01


def _refine(track: RotationTrack, build, times: np.ndarray, tol: float, rounds: int = 8):
    """Build with ``build(times)`` and add segment midpoints where the result's played motion departs
    from the source's by more than ``tol`` degrees (checked on 16 samples per segment)."""
    for _ in range(rounds):
        out = build(times)
        if tol is None or times.shape[0] < 2:
            return out, times
        u = np.linspace(0.0, 1.0, 17)[1:-1]
        grid = (times[:-1, None] + np.diff(times)[:, None] * u[None, :]).reshape(-1)
        err = (
            geodesic_angle(played(track, grid), played(out, grid)).reshape(times.shape[0] - 1, -1).max(axis=1)
        )
        bad = (err > tol) & ~_stepped_at(track, times)
        if not np.any(bad):
            return out, times
        mids = 0.5 * (times[:-1][bad] + times[1:][bad])
        times = np.sort(np.concatenate([times, mids]))
    return build(times), times


def _stepped_at(track: RotationTrack, times: np.ndarray) -> np.ndarray:
    """``(M-1,)`` True for sub-segments of ``times`` that lie in a held (stepped) source segment."""
    stepped = _stepped_segments(track.curve)
    if not np.any(stepped):
        return np.zeros(max(times.shape[0] - 1, 0), dtype=bool)
    seg = np.clip(np.searchsorted(track.times, times[:-1], side="right") - 1, 0, track.n_keys - 2)
    return stepped[seg]


def to_quaternion_track(
    track: RotationTrack, max_step_deg: float = 90.0, tol: float | None = CONVERT_TOLERANCE_DEG
) -> tuple[RotationTrack, int, int]:
    """The same played motion as quaternion keys: keys at the track's key times, plus samples wherever a
    segment sweeps more than 180 deg, plus midpoints where the result would depart from the source by
    more than ``tol`` degrees. Slopes are the derivative of the played unit quaternion; held (stepped)
    segments stay held. Returns ``(track, keys inserted for winding, long segments)``."""
    times, inserted, long = densify_times(track, max_step_deg)
    if times.shape[0] == 0:
        curve = Curve.make(np.zeros(0), np.zeros((0, 4)))
        return replace(track, kind=QUATERNION, curve=curve, order=UNITY_ORDER), 0, 0
    out, _ = _refine(track, lambda ts: _quat_keys(track, ts), times, tol)
    return out, inserted, int(np.sum(long))


def _quat_keys(track: RotationTrack, times: np.ndarray) -> RotationTrack:
    q = hemisphere_continuous(played(track, times))
    h = _step(times)
    t0, t1 = times[0], times[-1]
    qa = played(track, np.maximum(times - h, t0))
    qb = played(track, np.minimum(times + h, t1))
    qa = np.where(quat_dot(qa, q)[:, None] < 0, -qa, qa)
    qb = np.where(quat_dot(qb, q)[:, None] < 0, -qb, qb)
    ha = (times - np.maximum(times - h, t0))[:, None]
    hb = (np.minimum(times + h, t1) - times)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        ins = np.where(ha > 0, (q - qa) / np.where(ha > 0, ha, 1.0), 0.0)
        outs = np.where(hb > 0, (qb - q) / np.where(hb > 0, hb, 1.0), 0.0)
    ins[0] = outs[0]
    outs[-1] = ins[-1]
    # Held segments of the source stay held.
    stepped = _stepped_segments(track.curve)
    if np.any(stepped):
        src_idx = np.searchsorted(times, track.times)
        for i in np.flatnonzero(stepped):
            a, b = src_idx[i], src_idx[i + 1]
            outs[a:b] = np.inf
            ins[a + 1 : b + 1] = np.inf
    curve = Curve.make(
        times, q, ins, outs, pre_infinity=track.curve.pre_infinity, post_infinity=track.curve.post_infinity
    )
    return replace(track, kind=QUATERNION, curve=curve, order=UNITY_ORDER, meta=dict(track.meta))


def _euler_near(q: np.ndarray, ref: np.ndarray, order: str) -> np.ndarray:
    """Euler triples of ``q`` (both equivalent forms, any 360 shifts) closest to ``ref`` row by row."""
    e = quat_to_euler(q, order)
    best = None
    for cand in (e, equivalent_euler(e, order)):
        c = cand + 360.0 * np.round((ref - cand) / 360.0)
        if best is None:
            best = c
        else:
            closer = np.abs(c - ref).max(axis=1) < np.abs(best - ref).max(axis=1)
            best = np.where(closer[:, None], c, best)
    return best


def _continuous_euler(q: np.ndarray, order: str) -> np.ndarray:
    try:
        from .unwrap import continuous_euler
    except ImportError:  # pragma: no cover - the unwrap module is part of the engine
        continuous_euler = None
    if continuous_euler is not None:
        return continuous_euler(q, order)
    e = quat_to_euler(q, order)
    out = e.copy()
    for i in range(1, e.shape[0]):
        out[i] = _euler_near(q[i : i + 1], out[i - 1 : i], order)[0]
    return out


def to_euler_track(
    track: RotationTrack, order: str = UNITY_ORDER, tol: float | None = CONVERT_TOLERANCE_DEG
) -> RotationTrack:
    """The same played motion as a continuous Euler track in ``order`` (degrees): keys at the track's
    key times, extra keys where a segment sweeps more than 180 deg (winding kept) and midpoints where
    Euler interpolation would depart from the source by more than ``tol`` degrees (None: keys only).

    Slopes are the derivative of the played motion on each key's Euler branch; held segments stay held.
    """
    if track.n_keys == 0:
        return replace(track, kind=EULER, order=order, curve=Curve.make(np.zeros(0), np.zeros((0, 3))))
    times = densify_times(track)[0]
    return _refine(track, lambda ts: _euler_keys(track, ts, order), times, tol)[0]


def _euler_keys(track: RotationTrack, times: np.ndarray, order: str) -> RotationTrack:
    n = times.shape[0]
    q = played(track, times)
    e = _continuous_euler(q, order)
    h = _step(times)
    ta = np.maximum(times - h, times[0])
    tb = np.minimum(times + h, times[-1])
    ea = _euler_near(played(track, ta), e, order)
    eb = _euler_near(played(track, tb), e, order)
    ha = (times - ta)[:, None]
    hb = (tb - times)[:, None]
    ins = np.where(ha > 0, (e - ea) / np.where(ha > 0, ha, 1.0), 0.0)
    outs = np.where(hb > 0, (eb - e) / np.where(hb > 0, hb, 1.0), 0.0)
    if n > 1:
        ins[0] = outs[0]
        outs[-1] = ins[-1]
    else:
        ins[:] = 0.0
        outs[:] = 0.0
    stepped = _stepped_segments(track.curve)
    if np.any(stepped):
        src_idx = np.searchsorted(times, track.times)
        for i in np.flatnonzero(stepped):
            a, b = src_idx[i], src_idx[i + 1]
            outs[a:b] = np.inf
            ins[a + 1 : b + 1] = np.inf
    curve = Curve.make(
        times, e, ins, outs, pre_infinity=track.curve.pre_infinity, post_infinity=track.curve.post_infinity
    )
    return replace(track, kind=EULER, order=order, curve=curve)


def prepare_for_export(
    track: RotationTrack,
    kind: str | None = None,
    order: str | None = None,
    fix_hemisphere_flips: bool = True,
    max_step_deg: float = 90.0,
) -> tuple[RotationTrack, list[str]]:
    """The track as it should be written in runtime form ``kind`` (default: its own) and, for Euler,
    ``order`` (default: its own), plus human-readable warnings of what was found and done.

    * Euler -> quaternion: keys inserted where a segment sweeps > 180 deg (winding kept), warned.
    * quaternion -> Euler: continuous Euler values in ``order``.
    * Euler order change: same poses at the keys, continuous values, warned.
    * quaternion output: opposite-hemisphere neighbours fixed (``fix_hemisphere_flips``), warned.
    """
    kind = kind or track.kind
    warnings: list[str] = []
    name = track.path or "(root)"
    out = track
    if kind == QUATERNION:
        if track.kind == EULER:
            out, inserted, long = to_quaternion_track(track, max_step_deg)
            if inserted:
                warnings.append(
                    f"{name}: Euler winding of more than 180 deg in {long} segment(s) would be lost as "
                    f"quaternion keys; inserted {inserted} key(s) so the spin survives"
                )
        else:
            if fix_hemisphere_flips:
                out, flips = fix_hemisphere(out)
                if flips:
                    warnings.append(
                        f"{name}: {flips} quaternion key(s) on the opposite hemisphere of the previous key "
                        "(Unity would swing the long way); flipped"
                    )
            elif out.n_keys > 1:
                flips = int(np.sum(quat_dot(out.curve.value[1:], out.curve.value[:-1]) < 0))
                if flips:
                    warnings.append(
                        f"{name}: {flips} quaternion key(s) on the opposite hemisphere "
                        "(Unity swings the long way)"
                    )
            sweep = segment_sweep(out)
            if np.any(sweep > 180.0):
                out, inserted, long = to_quaternion_track(out, max_step_deg)
                warnings.append(
                    f"{name}: {long} quaternion segment(s) move more than 180 deg between keys (Unity "
                    f"plays the short way); inserted {inserted} key(s) so the motion survives"
                )
    else:
        target = order or (track.order if track.kind == EULER else UNITY_ORDER)
        if track.kind == QUATERNION:
            out = to_euler_track(track, target)
        elif target != track.order:
            out = to_euler_track(track, target)
            added = out.n_keys - track.n_keys
            how = f"; {added} key(s) added to keep the motion" if added else ""
            warnings.append(
                f"{name}: rotation order {track.order!r} converted to {target!r} "
                f"(same motion within {CONVERT_TOLERANCE_DEG:g} deg{how})"
            )
    return out, warnings
