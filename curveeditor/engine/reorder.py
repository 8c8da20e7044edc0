"""Rotation order and kind conversion that keep what Unity plays (``rotations.md`` sections 1, 2, 5).

:func:`convert_order` re-expresses an Euler track in another rotation order, :func:`convert_kind`
switches between Euler and quaternion keys. Both keep the pose at every source key exactly (up to
float rounding) and keep the *played motion* between keys close:

* The new keys sit on the source's key times, plus extra keys where the source moves more than
  ``DENSIFY_STEP_DEG`` between two keys (:func:`~curveeditor.engine.resample.densify`), so a spin is
  never lost and quaternion keys are never 180 degrees or more apart.
* Values come from one continuous decomposition of the played path, so the new Euler channels have no
  wraps or flips and keep the source's turn count (a 720 degree spin stays 720 degrees).
* Slopes are the one-sided derivatives of the new representation along the played path (central
  differences of the decomposition 1e-5 s each side of the key), written as Free tangents (broken where
  the two sides differ), so each Hermite segment matches the source's motion in value and speed at both
  ends.
* Then the result is checked as Unity plays it against the source on the dense grid of
  :func:`~curveeditor.engine.reduce.dense_check_grid`; each segment still more than ``max_error_deg``
  away gets a key at its worst instant, until none is (at most ``_MAX_ROUNDS`` rounds).

The trade-off: an Euler curve in another order (or a quaternion curve) is a different function of time
between keys, so staying on the source's key times exactly would leave a small error between keys
(measured on corpus BVH joints at 25-120 Hz with these slopes: 0.0000-0.005 degrees, 1 key added to
599 on one joint). Adding a few keys where that error exceeds ``max_error_deg`` (default 0.01 degrees)
bounds it; a stepped source
interval keeps its stepped (infinite) slopes and is never split. Where the played path crosses the
gimbal lock of the new order, the Euler channels swing by up to 180 degrees in an instant and no Euler
curve follows closely: the bound is then not reached within ``_MAX_ROUNDS`` (the pose at every key is
still exact); ``diff.diff_tracks`` reports what remains.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clip import EULER, QUATERNION, RotationTrack, key_quaternions, played
from .curves import Curve, TangentMode, stepped_intervals, tangent_mode_bits
from .reduce import dense_check_grid
from .resample import densify
from .rotations import (
    UNITY_ORDER,
    equivalent_euler,
    euler_to_quat,
    geodesic_angle,
    hemisphere_continuous,
    normalize_order,
    quat_dot,
    quat_normalize,
    quat_to_euler,
)
from .tangents import make_curve
from .unwrap import _choose, continuous_euler

__all__ = [
    "convert_order",
    "convert_kind",
    "rekey",
    "values_on_path",
    "euler_chain",
    "DENSIFY_STEP_DEG",
    "DEFAULT_MAX_ERROR_DEG",
    "is_frame_samples",
    "sampled_track",
    "sampled_tracks",
    "frame_deviation",
]

#: Source intervals moving more than this (degrees) get extra keys before conversion.
DENSIFY_STEP_DEG = 90.0
#: Default bound (degrees) on the played error between keys after conversion.
DEFAULT_MAX_ERROR_DEG = 0.01
_MAX_ROUNDS = 12
_FD_STEP_S = 1e-5


#: Most keys :func:`rekey` may produce: this many per source key plus :data:`MAX_EXTRA_KEYS`. Each
#: round adds up to one key per segment still off, so a motion no keys can follow (a BVH cell of
#: 1e6 deg: 3e7 deg/s) doubled the keys 12 times and climbed to 3.8 GB before a MemoryError. The
#: rounds stop at the limit instead; the played error left is what ``diff``/the write check report.
MAX_KEYS_PER_SOURCE_KEY = 8
MAX_EXTRA_KEYS = 5_000
#: Most checker-grid samples per :func:`rekey` round (bounded work per segment): 1 kHz with up to
#: 2,000 samples per key interval made a quaternion segment over 180 deg spanning 1e6 s (a fuzzed CSV
#: key time; densified to 1,030 keys) check 2 M samples per round, 12 rounds, 26 s. Real tracks stay
#: far below it (a 10,000-key 120 fps track: 100 k); the grid then thins long intervals, and what
#: the rounds could not bring within the bound is caught by the certified diff the callers run.
REKEY_GRID_SAMPLES = 250_000


#: Quaternion curves replace Euler ones for a sampled track only when they are this much (degrees)
#: closer to the Slerp between frames.
PREFER_EULER_DEG = 0.01


def is_frame_samples(track: RotationTrack) -> bool:
    """True for a track of per-frame samples read from a BVH (``meta["bvh_channels"]``) or marked so by
    its reader (``meta["frame_poses"]``: a glTF LINEAR sampler, an FBX take Unity resamples), keys
    evenly spaced: poses, not curves (issue 8 section 2). A reduced or hand-edited track is not."""
    if track.n_keys < 2 or (track.meta.get("bvh_channels") is None and not track.meta.get("frame_poses")):
        return False
    dt = np.diff(track.times)
    step = track.meta.get("bvh_frame_step")
    if step is not None and abs(dt[0] - step) > 1e-9 + 1e-6 * step:
        return False  # evenly spaced keys, but not the frames (e.g. a track reduced to 2 keys)
    return bool(np.all(np.abs(dt - dt[0]) <= 1e-9 + 1e-6 * dt[0]))


def frame_deviation(times, quats, track: RotationTrack):
    """``(grid, errors)``: geodesic degrees between what ``track`` plays and the Slerp of the frame
    poses ``quats (N, 4)`` at ``times (N,)``, on the checker grid over ``track``'s keys."""
    from .resample import slerp

    grid, _ = dense_check_grid(np.union1d(times, track.times))
    return grid, geodesic_angle(played(track, grid), slerp(times, quats, grid))


def sampled_track(
    track: RotationTrack,
    kind: str | None = None,
    order: str = UNITY_ORDER,
    tolerance_deg: float | None = None,
) -> RotationTrack:
    """A per-frame track (:func:`is_frame_samples`) keyed for Unity at its frames: the frame's pose at
    each frame, the short way between frames (what the samples mean: Slerp between them), no extra
    keys unless ``tolerance_deg`` demands them.

    Candidates, both with Linear tangents (a cubic through each frame would overshoot the Slerp):
    continuous Euler in ``order`` (default Unity's ZXY) and hemisphere-continuous quaternions (Unity's
    per-component interpolation of neighbouring frames is within ~1e-4 deg of Slerp for 10 deg steps).
    ``kind`` None picks the one closer to the Slerp of the frames, else that kind. With
    ``tolerance_deg``, keys (Slerp poses) go at the worst instant of every frame interval still
    further than that from the Slerp, until none is (at most ``_MAX_ROUNDS`` rounds)."""
    from .resample import slerp
    from .tangents import make_curve as _make

    times = track.times
    frames_q = hemisphere_continuous(key_quaternions(track))

    def _euler_values(q):
        start = track.curve.value[0] if track.kind == EULER and track.order == order else None
        return continuous_euler(q, order) if start is None else euler_chain(q, order, start)

    def build(k, t, q, e=None):
        if k == EULER:
            e = _euler_values(q) if e is None else e
            return replace(track, kind=EULER, order=order, curve=_make(t, e, mode="linear"))
        return replace(track, kind=QUATERNION, order=UNITY_ORDER, curve=_make(t, q, mode="linear"))

    if kind == EULER and track.kind == EULER and track.order == order:
        # Its own order: the frames' own values, shifted by whole turns (or swapped for the
        # equivalent triple) only where a step between frames would otherwise spin the long way.
        best = build(EULER, times, frames_q, own_frame_values(track, frames_q))
    elif kind is not None:
        best = build(kind, times, frames_q)
    else:
        # Candidates are compared at 3 instants per frame interval (both deviate most mid-interval;
        # the full checker grid, >= 10 per interval, made this 2.5x slower on a 165-joint clip for the
        # same pick). Linear tangents play each channel (Euler) or component (quaternion, then
        # normalized) as the straight blend of its two keys, so the candidates are judged on their key
        # values and only the one picked is built as a curve (half the work of building both).
        u = _PROBES
        probe = (times[:-1, None] + np.diff(times)[:, None] * u[None, :]).ravel()
        ref = slerp(times, frames_q, probe)
        euler = _euler_values(frames_q)
        err_e = float(geodesic_angle(euler_to_quat(_blend(euler, u), order), ref).max())
        err_q = float(geodesic_angle(quat_normalize(_blend(frames_q, u)), ref).max())
        best = _pick(track, times, frames_q, euler, err_e, err_q, order)
    return _refine(track, times, frames_q, best, tolerance_deg)


_PROBES = np.array([0.25, 0.5, 0.75])


def own_frame_values(track: RotationTrack, frames_q: np.ndarray | None = None) -> np.ndarray:
    """Euler values ``(N, 3)`` (degrees) of an Euler per-frame track in its own order that go the
    short way between frames (the samples' meaning): the track's own values where they already do,
    else the same values plus whole turns (exact), else (an equivalent triple) the continuous
    decomposition. The poses at the frames are the track's."""
    own = np.asarray(track.curve.value, dtype=np.float64)
    if frames_q is None:
        frames_q = hemisphere_continuous(key_quaternions(track))
    chain = euler_chain(frames_q, track.order, own[0])
    shifted = own + 360.0 * np.round((chain - own) / 360.0)
    exact = np.all(np.abs(shifted - chain) <= 1e-6, axis=1)
    return np.where(exact[:, None], shifted, chain)


def _pick(track, times, frames_q, euler, err_e: float, err_q: float, order: str) -> RotationTrack:
    """Euler (ZXY) unless quaternion curves hold the samples clearly better: Euler curves are what
    Unity's Animation window edits, and smaller files (3 channels, not 4). Linear tangents."""
    if err_q < err_e - PREFER_EULER_DEG:
        curve = make_curve(times, frames_q, mode="linear")
        return replace(track, kind=QUATERNION, order=UNITY_ORDER, curve=curve)
    return replace(track, kind=EULER, order=order, curve=make_curve(times, euler, mode="linear"))


def sampled_tracks(
    tracks, kind: str | None = None, order: str = UNITY_ORDER, tolerance_deg: float | None = None
) -> list[RotationTrack]:
    """:func:`sampled_track` of each of ``tracks`` (per-frame tracks), the same tracks: the candidates
    of tracks sharing their key times (a BVH's joints) are decomposed and judged together, one numpy
    pass per step instead of one per joint (CPU on the shared machine: CMU_Sample_05_01's 165 joints
    0.30-0.41 -> 0.27-0.31 s, Gangnam's 67 0.14-0.17 -> 0.10-0.13 s; the same tracks, tested)."""
    out: list = [None] * len(tracks)
    groups: dict = {}
    for i, t in enumerate(tracks):
        # Tracks whose Euler values continue their own keys (already in ``order``) go alone.
        alone = kind is not None or t.n_keys < 2 or (t.kind == EULER and t.order == order)
        groups.setdefault(None if alone else (t.n_keys, t.times.tobytes()), []).append(i)
    for key, idx in groups.items():
        if key is None or len(idx) == 1:
            for i in idx:
                out[i] = sampled_track(tracks[i], kind, order, tolerance_deg)
            continue
        # A few tracks at a time: bounded temporaries (the probes of 165 joints at once were 10 MB
        # an array and lifted the checked write's peak memory by 100 MB).
        step = max(1, GROUP_PROBES // (3 * len(tracks[idx[0]].times)))
        for c in range(0, len(idx), step):
            part = idx[c : c + step]
            done = _sampled_group([tracks[i] for i in part], order, tolerance_deg)
            for i, t in zip(part, done, strict=True):
                out[i] = t
    return out


#: Probe samples per batch of :func:`sampled_tracks` (~1.5 MB a temporary array).
GROUP_PROBES = 50_000


def _sampled_group(tracks, order: str, tolerance_deg: float | None) -> list[RotationTrack]:
    """:func:`sampled_track` (``kind`` None) of tracks with the same key times, computed together with
    the same operations on the stacked frames (so the same values and picks)."""
    from .resample import _cconj, _clog, _locate, _scaled_exp_factors
    from .rotations import quat_mul_components

    times = tracks[0].times
    n, m = times.shape[0], len(tracks)
    q = np.empty((m, n, 4))
    by_order: dict = {}
    for j, t in enumerate(tracks):
        by_order.setdefault((t.kind, t.order), []).append(j)
    for (k, o), js in by_order.items():
        vals = np.concatenate([tracks[j].curve.value for j in js])
        keyq = euler_to_quat(vals, o) if k == EULER else quat_normalize(vals)
        q[js] = keyq.reshape(len(js), n, 4)
    # hemisphere_continuous per track (a key's sign: the parity of negative neighbour dots before it).
    neg = quat_dot(q[:, 1:], q[:, :-1]) < 0
    flips = np.zeros((m, n), dtype=np.int64)
    np.cumsum(neg, axis=1, out=flips[:, 1:])
    frames_q = np.where((flips % 2 == 1)[..., None], -q, q)
    del q, flips
    u = _PROBES
    probe = (times[:-1, None] + np.diff(times)[:, None] * u[None, :]).ravel()
    # resample.slerp(times, frames_q[j], probe) of every track: same operations (its _prepare keeps
    # hemisphere-continuous keys as they are, normalized).
    qn = quat_normalize(frames_q)
    seg, uu = _locate(times, probe)
    a, b = qn[:, :-1], qn[:, 1:]
    cols = range(4)
    rel = quat_mul_components(_cconj(tuple(a[..., c] for c in cols)), tuple(b[..., c] for c in cols))
    r = np.stack(_clog(rel), axis=-1)  # (m, n-1, 3): resample._rel_rotvecs of each track
    g_q = qn[:, seg]  # (m, P, 4) first key of each probe's interval
    g_r = r[:, seg]
    theta = np.sqrt(np.einsum("...i,...i->...", g_r, g_r))
    kk, ew = _scaled_exp_factors(uu, theta)
    e = (g_r[..., 0] * kk, g_r[..., 1] * kk, g_r[..., 2] * kk, ew)
    ref = np.stack(quat_mul_components(tuple(g_q[..., c] for c in range(4)), e), axis=-1).reshape(-1, 4)
    # continuous_euler of every track's frames: one decomposition, each track unwrapped alone (the
    # joined unwrap's one cumulative sum rounds differently: the same angles, but zeros of either sign).
    eul = quat_to_euler(frames_q.reshape(-1, 4), order).reshape(m, n, 3)
    steps = np.arange(n, dtype=np.float64)
    eul = np.stack([_choose(eul[j], steps, order, 0.0)[0] for j in range(m)])
    blend_e = np.concatenate([_blend(eul[j], u) for j in range(m)])
    err_e = geodesic_angle(euler_to_quat(blend_e, order), ref).reshape(m, -1).max(axis=1)
    blend_q = np.concatenate([_blend(frames_q[j], u) for j in range(m)])
    err_q = geodesic_angle(quat_normalize(blend_q), ref).reshape(m, -1).max(axis=1)
    out = []
    for j, t in enumerate(tracks):
        best = _pick(t, times, frames_q[j], eul[j], float(err_e[j]), float(err_q[j]), order)
        out.append(_refine(t, times, frames_q[j], best, tolerance_deg))
    return out


def _refine(track, times, frames_q, best: RotationTrack, tolerance_deg: float | None) -> RotationTrack:
    """``best`` with Slerp keys added at the worst instant of every frame interval still further
    than ``tolerance_deg`` from the Slerp of the frames (None: ``best`` as it is)."""
    from .resample import slerp

    def build(k, t, q):
        if k == EULER:
            start = track.curve.value[0] if track.kind == EULER and track.order == best.order else None
            e = continuous_euler(q, best.order) if start is None else euler_chain(q, best.order, start)
            return replace(track, kind=EULER, order=best.order, curve=make_curve(t, e, mode="linear"))
        return replace(track, kind=QUATERNION, order=UNITY_ORDER, curve=make_curve(t, q, mode="linear"))

    if tolerance_deg is None:
        return best
    best_err = float(frame_deviation(times, frames_q, best)[1].max())
    if best_err <= tolerance_deg:
        return best
    tol = _check_bound(tolerance_deg)
    out = best
    for _ in range(_MAX_ROUNDS):
        grid, err = frame_deviation(times, frames_q, out)
        t = out.times
        seg = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(t) - 2)
        worst = np.full(len(t) - 1, -1.0)
        np.maximum.at(worst, seg, err)
        bad = np.nonzero(worst > tol)[0]
        if bad.shape[0] == 0:
            break
        idx = np.lexsort((-err, seg))
        new_t = grid[idx[np.searchsorted(seg[idx], bad)]]
        new_t = np.where((new_t > t[bad]) & (new_t < t[bad + 1]), new_t, 0.5 * (t[bad] + t[bad + 1]))
        merged = np.unique(np.concatenate([t, new_t]))
        if merged.shape[0] == t.shape[0]:
            break
        out = build(out.kind, merged, hemisphere_continuous(slerp(times, frames_q, merged)))
    return out


def _blend(values: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``values (N, C)`` blended linearly at fractions ``u (U,)`` of every key interval: ``((N-1)*U, C)``,
    interval-major (what Linear tangents play per channel)."""
    v0, v1 = values[:-1, None, :], values[1:, None, :]
    return (v0 + (v1 - v0) * u[None, :, None]).reshape(-1, values.shape[1])


def euler_chain(quats, order: str, start) -> np.ndarray:
    """Continuous Euler angles ``(N, 3)`` (degrees, columns x, y, z) of ``quats (N, 4)`` in ``order`` whose
    first row is the representation of ``quats[0]`` nearest to ``start (3,)`` (equivalent triple and
    360 degree shifts): a continuation of a curve that ended at ``start``."""
    e = continuous_euler(np.asarray(quats, dtype=np.float64).reshape(-1, 4), order)
    start = np.asarray(start, dtype=np.float64)
    best, best_d = e, np.inf
    for cand in (e, equivalent_euler(e, order)):
        shifted = cand + 360.0 * np.round((start - cand[0]) / 360.0)
        d = float(np.sum((shifted[0] - start) ** 2))
        if d < best_d:
            best, best_d = shifted, d
    return best


def values_on_path(source: RotationTrack, times: np.ndarray, kind: str, order: str):
    """Values and one-sided in/out slopes ``(K, C)`` of ``kind`` (Euler degrees in ``order``, or
    hemisphere-continuous quaternions) at sorted ``times`` (seconds) along what ``source`` plays."""
    h = _FD_STEP_S
    t0, t1 = times[0], times[-1]
    lo = np.maximum(times - h, t0)
    hi = np.minimum(times + h, t1)
    path_t = np.stack([lo, times, hi], axis=1).ravel()
    q = hemisphere_continuous(played(source, path_t))
    if kind == EULER:
        if source.kind == EULER and source.order == order:
            start = source.curve.value[0]
        else:
            start = continuous_euler(q[1:2], order)[0]
        v = euler_chain(q, order, start).reshape(-1, 3, 3)
    else:
        v = q.reshape(-1, 3, 4)
        if quat_dot(v[0, 1], key_quaternions(source)[0]) < 0:
            v = -v
    val = v[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ins = np.where((times - lo)[:, None] > 0, (val - v[:, 0]) / (times - lo)[:, None], 0.0)
        outs = np.where((hi - times)[:, None] > 0, (v[:, 2] - val) / (hi - times)[:, None], 0.0)
    ins[0] = outs[0]
    outs[-1] = ins[-1]
    return val, ins, outs


def rekey(
    source: RotationTrack,
    kind: str,
    order: str,
    max_error_deg: float = DEFAULT_MAX_ERROR_DEG,
    max_step_deg: float = DENSIFY_STEP_DEG,
    slopes: str = "path",
) -> RotationTrack:
    """``source`` re-keyed as ``kind`` in ``order`` along its played path: keys at the source's key times
    plus wherever it moves more than ``max_step_deg`` between keys, then keys at the worst instants until
    the played error is within ``max_error_deg`` (module docstring). Works for any kind to any kind,
    including quaternion -> quaternion (to split segments Unity would play the short way).

    ``slopes``: ``"path"`` (Free tangents along the played path) or ``"clamped_auto"`` (Euler only: the
    tangents a CSV reader gives key values, so the keys are chosen for that read-back)."""
    max_error_deg = _check_bound(max_error_deg)
    if slopes not in ("path", "clamped_auto") or (slopes == "clamped_auto" and kind != EULER):
        raise ValueError(f"slopes must be 'path' or (Euler only) 'clamped_auto', got {slopes!r}")
    curve = source.curve
    times, _ = densify(source, max_step_deg)
    limit = MAX_KEYS_PER_SOURCE_KEY * source.n_keys + MAX_EXTRA_KEYS
    if times.shape[0] > limit:
        # Bounded work: keep every source key and an even subset of the densified samples.
        extra = np.setdiff1d(times, curve.time)
        keep = extra[np.linspace(0, len(extra) - 1, max(limit - source.n_keys, 0)).astype(np.int64)]
        times = np.union1d(curve.time, keep)
    src_t = np.asarray(curve.time)
    stepped_src = stepped_intervals(curve)
    for _ in range(_MAX_ROUNDS):
        # The checker grid follows the new keys too: on the source's grid alone, keys added ~1 ms
        # apart near gimbal lock sat between grid points and played 0.85 deg off (kick_normal_001 Hips).
        grid, _ = dense_check_grid(times, max_samples=REKEY_GRID_SAMPLES)
        q_src = played(source, grid)
        val, ins, outs = values_on_path(source, times, kind, order)
        # Source keys keep their exact pose (the path value there is the key itself, up to rounding);
        # stepped source intervals stay stepped.
        seg_of = np.clip(np.searchsorted(src_t, times, side="right") - 1, 0, len(src_t) - 2)
        step_out = stepped_src[seg_of] & (times < src_t[-1])
        outs[step_out] = np.inf
        at_key = np.isin(times, src_t)
        prev_stepped = np.zeros(len(times), dtype=bool)
        prev_stepped[1:] = step_out[:-1]
        ins[prev_stepped & at_key] = np.inf
        broken = np.any(ins != outs, axis=1)
        mode = np.where(
            broken,
            tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True),
            tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False),
        )
        if slopes == "clamped_auto":
            new_curve = make_curve(times, val, mode="clamped_auto")
        else:
            new_curve = Curve.make(
                times,
                val,
                ins,
                outs,
                tangent_mode=mode,
                pre_infinity=curve.pre_infinity,
                post_infinity=curve.post_infinity,
            )
        out = replace(source, kind=kind, curve=new_curve, order=order)
        err = geodesic_angle(played(out, grid), q_src)
        seg = np.clip(np.searchsorted(times, grid, side="right") - 1, 0, len(times) - 2)
        worst = np.full(len(times) - 1, -1.0)
        np.maximum.at(worst, seg, err)
        bad = np.nonzero(worst > max_error_deg)[0]
        if bad.shape[0] == 0:
            break
        # Insert a key at each bad segment's worst instant (strictly inside the segment).
        order_idx = np.lexsort((-err, seg))
        first = np.searchsorted(seg[order_idx], bad)
        new_t = grid[order_idx[first]]
        inside = (new_t > times[bad]) & (new_t < times[bad + 1])
        new_t = np.where(inside, new_t, 0.5 * (times[bad] + times[bad + 1]))
        new_t = new_t[~stepped_src[np.clip(np.searchsorted(src_t, new_t, "right") - 1, 0, len(src_t) - 2)]]
        merged = np.unique(np.concatenate([times, new_t]))
        if merged.shape[0] == times.shape[0]:
            break  # no new instant to add (e.g. a decomposition crossing gimbal lock)
        if merged.shape[0] > limit:
            break  # bounded work: a motion no keys can follow (module docstring of MAX_KEYS_...)
        times = merged
    return out


def convert_order(
    track: RotationTrack, order: str, max_error_deg: float = DEFAULT_MAX_ERROR_DEG
) -> RotationTrack:
    """``track`` keyed in Euler ``order`` (scipy-style, e.g. ``"zxy"``, ``"ZXY"``): same pose at every key,
    continuous (no wraps or flips), turn count kept, played motion within ``max_error_deg`` degrees of the
    source on the dense grid (extra keys where needed; see the module docstring).

    Quaternion tracks have no order to convert: returned with ``order`` set, curve untouched. An Euler
    track already in ``order`` is returned unchanged.
    """
    normalize_order(order)
    if track.kind != EULER:
        return replace(track, order=order)
    if track.order == order:
        return track
    if is_frame_samples(track):
        # Samples, not curves: the frames' poses in the new order, the short way between frames, no
        # keys added (issue 8 section 2), instead of re-keying the old order's Hermite playback.
        return sampled_track(track, EULER, order)
    if track.n_keys < 2:
        if track.n_keys == 0:
            return replace(track, order=order)
        e = euler_chain(key_quaternions(track), order, np.zeros(3))
        return replace(track, order=order, curve=track.curve.with_keys(value=e))
    return rekey(track, EULER, order, max_error_deg)


def convert_kind(
    track: RotationTrack, kind: str, order: str | None = None, max_error_deg: float = DEFAULT_MAX_ERROR_DEG
) -> RotationTrack:
    """``track`` keyed as ``kind`` (``"euler"`` or ``"quaternion"``) with the same played motion.

    Euler -> quaternion: hemisphere-continuous keys, extra keys wherever an Euler segment spins so no two
    keys are 180 degrees or more apart. Quaternion -> Euler: one continuous decomposition in ``order``
    (default: the track's ``order``, Unity's ``"zxy"`` for quaternion tracks), so multi-turn motion keeps
    its winding. Both bounded by ``max_error_deg`` on the dense grid (module docstring).
    """
    if kind not in (EULER, QUATERNION):
        raise ValueError(f"kind must be 'euler' or 'quaternion', got {kind!r}")
    target_order = normalize_order(order) if order is not None else (track.order or UNITY_ORDER)
    if kind == track.kind:
        return convert_order(track, target_order, max_error_deg) if kind == EULER else track
    if is_frame_samples(track):
        return sampled_track(track, kind, target_order if kind == EULER else UNITY_ORDER)
    if track.n_keys < 2:
        q = key_quaternions(track)
        if kind == EULER:
            value = euler_chain(q, target_order, np.zeros(3)) if len(q) else np.zeros((0, 3))
        else:
            value = q
        return replace(track, kind=kind, order=target_order, curve=Curve.make(track.times, value))
    return rekey(track, kind, target_order, max_error_deg)


def _check_bound(max_error_deg: float) -> float:
    b = float(max_error_deg)
    if not (np.isfinite(b) and b > 0):
        raise ValueError(f"max_error_deg must be a positive number of degrees, got {max_error_deg!r}")
    return b
