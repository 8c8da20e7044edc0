"""Checks (and fixes) a rotation track needs before it is written in a given runtime form.

Pure functions, no I/O: writers call :func:`prepare_for_export` and report the returned messages as
warnings. Conventions: quaternions ``(N, 4)`` (x, y, z, w), Euler ``(N, 3)`` degrees, times seconds.

What Unity plays (``shared/domain/rotations.md`` section 2) decides every check:

* **Hemisphere**: quaternion curves are interpolated per component, so neighbouring keys with
  ``dot < 0`` make the bone swing the long way. That swing is what Unity plays (and what the editor
  draws), so a writer must not change it: the keys are *re-keyed along the played path*
  (:func:`~curveeditor.engine.reorder.rekey`), which gives hemisphere-continuous keys playing the same
  motion within :data:`CONVERT_TOLERANCE_DEG`. Where no keys can follow the played path (a sign flip
  of one pose between two keys plays an instantaneous swing through a near-zero quaternion), the
  track is written as keyed, which Unity plays the same way; ``clean --unflip`` is the operation that
  removes such swings. (Negating keys, the old fix, turned a reduced 360 deg turn the other way.)
* **More than 180 deg between keys**: the same re-keying splits every segment whose played motion
  sweeps more than 180 deg, so each segment sweeps at most ``max_step_deg``.
* **Euler winding**: converting an Euler track to quaternion keys without densifying would drop every
  spin of 180 deg or more; the same densification keeps it, and the message says so.
* **CSV**: a CSV holds key values only and its reader gives Euler channels ClampedAuto tangents;
  :func:`csv_track` re-keys a track for that model (keys added only where the read-back would leave
  the played motion by more than the tolerance).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clip import EULER, QUATERNION, RotationTrack, played
from .curves import Curve, stepped_intervals
from .diff import diff_tracks
from .reorder import DEFAULT_MAX_ERROR_DEG, convert_kind, rekey, values_on_path
from .rotations import UNITY_ORDER, geodesic_angle, hemisphere_continuous, quat_dot
from .tangents import make_curve, recompute_tangents

__all__ = [
    "segment_sweep",
    "fix_hemisphere",
    "to_quaternion_track",
    "to_euler_track",
    "prepare_for_export",
    "csv_track",
    "hemisphere_pairs",
    "has_sign_flips",
    "CONVERT_TOLERANCE_DEG",
    "csv_losses",
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


def hemisphere_pairs(track: RotationTrack) -> int:
    """Neighbouring quaternion key pairs on opposite hemispheres (``dot < 0``); 0 for Euler tracks."""
    if track.kind != QUATERNION or track.n_keys < 2:
        return 0
    v = track.curve.value
    return int(np.sum(quat_dot(v[1:], v[:-1]) < 0))


#: Played speed (deg/s) above which a swing between opposite-hemisphere keys is a sign flip, not
#: motion: the unwrap's default rule (``unwrap.unwrap_euler(spin_speed=1800)``).
SPIN_SPEED_DEG_S = 1800.0


#: Key-to-key angle (degrees, the short way) below which an opposite-hemisphere pair is a sign flip:
#: two poses 30 deg apart that play a 330 deg swing are one pose stored with the other sign; a pair
#: 179 deg apart playing 181 deg the other way (a reduced turn) is motion.
SIGN_FLIP_MAX_STEP_DEG = 90.0


def has_sign_flips(track: RotationTrack) -> bool:
    """True when a neighbouring quaternion key pair on opposite hemispheres is a sign flip, not motion:
    the keys are less than :data:`SIGN_FLIP_MAX_STEP_DEG` apart, or the swing Unity plays between them
    is faster than :data:`SPIN_SPEED_DEG_S` (the unwrap's rule)."""
    if track.kind != QUATERNION or track.n_keys < 2:
        return False
    v = track.curve.value
    flip = quat_dot(v[1:], v[:-1]) < 0
    if not flip.any():
        return False
    near = geodesic_angle(v[1:], v[:-1]) < SIGN_FLIP_MAX_STEP_DEG
    dt = np.diff(track.times)
    with np.errstate(divide="ignore", invalid="ignore"):
        speed = segment_sweep(track) / dt
    return bool(np.any(flip & (near | (speed > SPIN_SPEED_DEG_S))))


def _quaternion_for_export(
    track: RotationTrack, fix: bool, max_step_deg: float
) -> tuple[RotationTrack, list[str]]:
    """A quaternion track ready to write, and what was done (module docstring, "Hemisphere"): never a
    change of the played motion beyond :data:`CONVERT_TOLERANCE_DEG`."""
    flips = hemisphere_pairs(track)
    long = int(np.sum(segment_sweep(track) > 180.0)) if track.n_keys > 1 else 0
    if not flips and not long:
        return track, []
    found = []
    if flips:
        found.append(f"{flips} neighbouring key pair(s) on opposite hemispheres")
    if long:
        found.append(f"{long} segment(s) turning more than 180 deg between keys")
    found_text = " and ".join(found)
    if not fix and not long:
        return track, [f"{found_text} (Unity swings the long way between them; kept as keyed)"]
    if flips and has_sign_flips(track):
        # A sign flip (one pose stored with the other sign) plays a long swing within one key
        # interval: re-keying it would take hundreds of keys (121 -> 759 on the bundled demo's
        # RightHand) and follow it only loosely. Kept as keyed, it plays the same in Unity; removing
        # it changes the motion, which is `clean --unflip`'s job.
        return track, [
            f"{found_text}; kept as keyed (sign flips: Unity swings the long way there, as the editor "
            "shows; clean --unflip removes them)"
        ]
    out = rekey(track, QUATERNION, UNITY_ORDER, CONVERT_TOLERANCE_DEG, max_step_deg)
    err = diff_tracks(track, out).max_error
    if err <= CONVERT_TOLERANCE_DEG * 1.001:
        added = out.n_keys - track.n_keys
        return out, [
            f"{found_text}; re-keyed along what Unity plays ({added} key(s) added), "
            f"same motion within {CONVERT_TOLERANCE_DEG:g} deg"
        ]
    return track, [
        f"{found_text}; kept as keyed (no keys follow the played path within "
        f"{CONVERT_TOLERANCE_DEG:g} deg: {err:.3g} deg off), Unity plays them the same way; "
        "clean --unflip makes them continuous"
    ]


def csv_track(track: RotationTrack, order: str | None = None) -> RotationTrack:
    """``track`` as the Euler keys a CSV holds (``order``: default the track's own for Euler tracks,
    Unity's ``"zxy"`` for quaternion tracks), with the ClampedAuto tangents the CSV reader gives them.

    A CSV holds key values, not curves: keys at the track's key times, valued along what the track
    plays, so the winding between keys survives (a reduced 360 deg turn keyed at 0, 2.5 and 5 s is
    0 -> 180 -> 360 deg, not 0 -> 180 -> 0, which read back turned the other way for 2.5 s): the
    decomposition follows the played path through :func:`~curveeditor.engine.resample.densify`'s
    samples and keeps the values at the keys. Keys that already are the curve (a clip read from CSV)
    are kept exactly, so CSV -> CSV is the identity; a quaternion track with sign flips
    (:func:`has_sign_flips`) gets the continuous values the graphs draw."""
    from .display import key_euler
    from .resample import densify

    target = order or (track.order if track.kind == EULER else UNITY_ORDER)
    if track.n_keys < 2:
        return convert_kind(track, EULER, target)
    if track.kind == EULER and track.order == target:
        as_read = replace(track, curve=make_curve(track.times, track.curve.value, "clamped_auto"))
        if diff_tracks(track, as_read).max_error <= 1e-9:
            return as_read  # its own keys are the curve (a clip read from CSV): the identity
    if track.kind == QUATERNION and target == UNITY_ORDER and has_sign_flips(track):
        values = key_euler(track)
    else:
        dense = densify(track, 90.0)[0]
        path_values = values_on_path(track, dense, EULER, target)[0]
        values = path_values[np.searchsorted(dense, track.times)]
        own = track.curve.value if track.kind == EULER and track.order == target else None
        if own is None and track.kind == QUATERNION and target == UNITY_ORDER:
            own = key_euler(track)
        if own is not None and np.max(np.abs(own - values)) <= 1e-6:
            values = own  # bit-exact where the graphs' key values already follow the played path
    return replace(track, kind=EULER, order=target, curve=make_curve(track.times, values, "clamped_auto"))


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
    * quaternion output: opposite-hemisphere neighbours and segments over 180 deg re-keyed along the
      played path (``fix_hemisphere_flips``; never a change of the motion), warned.
    """
    kind = kind or track.kind
    warnings: list[str] = []
    name = track.path or "(root)"
    out = track
    if kind == QUATERNION:
        if track.kind == EULER:
            out, inserted, long = to_quaternion_track(track, max_step_deg)
            if inserted:
                why = (
                    f"{long} segment(s) turn more than 180 deg, which quaternion keys cannot hold unsplit"
                    if long
                    else "quaternion keys interpolate differently from Euler channels"
                )
                warnings.append(
                    f"{name}: written as quaternion keys with {inserted} key(s) inserted so it plays "
                    f"the winding and same motion within {CONVERT_TOLERANCE_DEG:g} deg ({why})"
                )
        else:
            out, w = _quaternion_for_export(track, fix_hemisphere_flips, max_step_deg)
            warnings += [f"{name}: {x}" for x in w]
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


def csv_losses(clip, keys_only: bool = False, quaternion_line: bool = True) -> list[str]:
    """What a CSV written from ``clip`` (``io.csv_io.write_csv``) cannot hold, one line per kind of
    loss, known before writing (the editor's export dialog and the CLI list them): the non-rotation
    curves (positions, floats, events: a CSV holds rotation tracks only) and quaternion tracks
    (written as Euler keys along the played path, read back as Euler curves with ClampedAuto
    tangents; ``quaternion_line=False`` leaves that line to the writer, which measures it). Euler
    tracks keep their keys, tangent slopes and modes, weights and pre/post infinity, and the clip its
    frame rate (the CSV's optional columns); the clip's name comes back from the file name."""
    out = []
    quat = [t.path or "(root)" for t in clip.tracks if t.kind == QUATERNION and t.n_keys]
    if quat and not keys_only and quaternion_line:
        shown = ", ".join(quat[:3]) + (", ..." if len(quat) > 3 else "")
        out.append(
            f"{len(quat)} quaternion track(s) ({shown}) written as Euler keys along the played path: read "
            "back as Euler curves with ClampedAuto tangents (use .anim to keep quaternion curves)"
        )
    if clip.other_tracks:
        out.append(
            f"{len(clip.other_tracks)} non-rotation curve(s) not written (CSV holds rotation tracks only)"
        )
    return out
