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
from .curves import Curve, stepped_intervals
from .reorder import DEFAULT_MAX_ERROR_DEG, convert_kind, rekey, values_on_path
from .rotations import UNITY_ORDER, geodesic_angle, hemisphere_continuous, quat_dot
from .tangents import recompute_tangents

__all__ = [
    "segment_sweep",
    "fix_hemisphere",
    "to_quaternion_track",
    "to_euler_track",
    "prepare_for_export",
]

#: Samples per key segment used to measure the swept angle of what Unity plays.
SWEEP_SAMPLES = 24


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
    return np.where(stepped_intervals(track.curve), 0.0, sweep)


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
CONVERT_TOLERANCE_DEG = DEFAULT_MAX_ERROR_DEG


def to_quaternion_track(
    track: RotationTrack, max_step_deg: float = 90.0, tol: float = CONVERT_TOLERANCE_DEG
) -> tuple[RotationTrack, int, int]:
    """The same played motion as quaternion keys (:func:`~curveeditor.engine.reorder.rekey`): keys at
    the track's key times, extra keys wherever it moves more than ``max_step_deg`` between keys (so no
    segment sweeps 180 deg or more and Unity cannot take the short way), and wherever the result would
    depart from the source by more than ``tol`` degrees.

    Returns ``(track, keys inserted, segments of the source sweeping more than 180 deg)``.
    """
    long = int(np.sum(segment_sweep(track) > 180.0))
    if track.n_keys < 2:
        return convert_kind(track, QUATERNION), 0, long
    out = rekey(track, QUATERNION, UNITY_ORDER, tol, max_step_deg)
    return out, out.n_keys - track.n_keys, long


def to_euler_track(
    track: RotationTrack, order: str = UNITY_ORDER, tol: float | None = CONVERT_TOLERANCE_DEG
) -> RotationTrack:
    """The same played motion as a continuous Euler track in ``order`` (degrees), winding kept
    (:func:`~curveeditor.engine.reorder.rekey`). With ``tol=None`` the keys stay exactly on the track's
    key times (values and slopes along the played path, no keys added): what the ``.anim`` Euler display
    curves mirror."""
    if track.n_keys < 2 or tol is not None:
        return convert_kind(track, EULER, order, tol or DEFAULT_MAX_ERROR_DEG)
    value, ins, outs = values_on_path(track, track.times, EULER, order)
    stepped = stepped_intervals(track.curve)
    outs[:-1][stepped] = np.inf
    ins[1:][stepped] = np.inf
    curve = Curve.make(
        track.times,
        value,
        ins,
        outs,
        pre_infinity=track.curve.pre_infinity,
        post_infinity=track.curve.post_infinity,
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
