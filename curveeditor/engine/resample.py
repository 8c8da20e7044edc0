"""Resampling rotation tracks onto a uniform time grid (``shared/domain/rotations.md`` section 5).

Interpolants over sampled rotations (all take key ``times (N,)`` in seconds and unit quaternions
``(N, 4)`` (x, y, z, w), and return hemisphere-continuous unit quaternions ``(M, 4)`` at ``t (M,)``):

* :func:`slerp` -- piecewise geodesic (C0), identical to ``scipy.spatial.transform.Slerp``.
* :func:`squad` -- Shoemake's spherical quadrangle, C1 also with non-uniform key spacing
  (controls placed so both sides of a key have the same angular velocity per second).
* :func:`catmull_rom` -- spherical Catmull-Rom (C1, non-uniform knots), evaluated as a spherical
  cubic Bezier with De Casteljau slerps.
* :func:`rotation_spline` -- ``scipy.spatial.transform.RotationSpline`` (C2 angular velocity).

Every interpolant passes through the given rotations, takes the short way between neighbours and
clamps times outside the key range to the end rotations (Unity's Clamp wrap mode). Input keys may be
unsorted: they are sorted by time and, for duplicate times, the last given key wins.

:func:`resample_track` is the track-level operation, the resampling article's pipeline: key
orientations (Euler keys -> quaternions), interpolated in quaternion space with a method from
:data:`METHODS`, back to Euler. Neighbouring keys are joined the short way (a channel going
179 -> -179 deg between two mocap frames is a 2 deg turn, not the 358 deg spin Unity would play),
except where the keys show deliberate motion over 180 deg: a key interval whose implied speed is
below ``spin_speed`` (the unwrap's rule, :data:`~curveeditor.engine.unwrap.DEFAULT_SPIN_SPEED`) is
densified with samples of what Unity plays there (:func:`densify` with ``spin_speed``), so a
0 -> 360 deg spin over a second stays a spin. "unity" bakes what Unity plays, like the importer's
Resample Curves.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clip import EULER, RotationTrack, key_quaternions, played
from .curves import (
    Curve,
    TangentMode,
    _segment_index,
    evaluate,
    stepped_intervals,
    tangent_mode_bits,
    tangent_mode_sides,
)
from .rotations import (
    _extrinsic_axes,
    equivalent_euler,
    euler_to_quat,
    geodesic_angle,
    quat_exp,
    quat_mul,
    quat_mul_components,
    quat_normalize,
    quat_to_euler,
)
from .unwrap import DEFAULT_SPIN_SPEED, unwrap_track

__all__ = [
    "METHODS",
    "DELIBERATE_MIN_DEG",
    "uniform_grid",
    "densify",
    "slerp",
    "squad",
    "catmull_rom",
    "rotation_spline",
    "resample_quats",
    "euler_following",
    "resample_track_measured",
    "EXACT_POSE_DEG",
    "resample_track",
]

METHODS = ("slerp", "squad", "catmull-rom", "spline", "unity")

#: Probes per key interval used by :func:`densify` to measure the motion Unity plays.
_PROBES = 32
#: Upper bound on samples :func:`densify` inserts into one key interval.
_MAX_SUBDIVISIONS = 4096
#: With ``spin_speed``, :func:`densify` splits only intervals whose played motion exceeds this
#: (degrees): the short way between the two keys cannot hold such a motion.
DELIBERATE_MIN_DEG = 180.0


# --------------------------------------------------------------------------------------------- grid


def uniform_grid(start: float, end: float, hz: float) -> np.ndarray:
    """Times ``(M,)`` in seconds from ``start`` to ``end`` inclusive with step ``1 / hz``.

    The last step may be short so that ``end`` is always the last sample; when ``end`` is within a
    thousandth of a step past a grid point (float32 key times such as 2.8333335 s at 30 Hz) that
    point is moved onto ``end`` instead of leaving a sliver step. ``hz`` in samples per second.
    """
    start, end, hz = float(start), float(end), float(hz)
    if not (np.isfinite(hz) and hz > 0):
        raise ValueError(f"sample rate must be a positive number of Hz, got {hz}")
    if not (np.isfinite(start) and np.isfinite(end)) or end < start:
        raise ValueError(f"invalid time range {start} .. {end}")
    span = (end - start) * hz
    n = int(np.floor(span + 1e-3))
    grid = start + np.arange(n + 1) / hz
    if span - n > 1e-3:
        grid = np.append(grid, end)
    else:
        grid[-1] = end
    return grid


# ---------------------------------------------------------------------------------------- densify


def _probe_motion(track: RotationTrack, seg: np.ndarray, probes: int) -> tuple[np.ndarray, np.ndarray]:
    """Motion (deg) per probe step of the intervals ``seg``, ``(len(seg), probes)``, and their durations (s).

    Euler tracks are measured by the sum of the channels' absolute changes: literal degrees, so a
    channel spinning 720 deg is never aliased, and an upper bound of the geodesic motion. Quaternion
    tracks by the geodesic angle between probes.
    """
    curve = track.curve
    t0 = curve.time[seg]
    dt = curve.time[seg + 1] - t0
    s = np.arange(1, probes) / probes
    inner = (t0[:, None] + s[None, :] * dt[:, None]).reshape(-1)
    k = len(seg)
    if track.kind == EULER:
        vals = evaluate(curve, inner).reshape(k, probes - 1, 3)
        path = np.concatenate([curve.value[seg][:, None], vals, curve.value[seg + 1][:, None]], axis=1)
        step = np.abs(np.diff(path, axis=1)).sum(axis=2)
    else:
        q = played(track, inner).reshape(k, probes - 1, 4)
        kq = key_quaternions(track)
        path = np.concatenate([kq[seg][:, None], q, kq[seg + 1][:, None]], axis=1)
        step = geodesic_angle(path[:, :-1], path[:, 1:])
    return step, dt


def _motion_bound(track: RotationTrack) -> np.ndarray:
    """Upper bound (deg) of the geodesic path length Unity plays over each key interval, ``(N-1,)``.

    Each channel of a non-stepped interval is a 1-D cubic Bezier in its own parameter (Hermite:
    controls ``v0, v0 + m0 dt/3, v1 - m1 dt/3, v1``; weighted sides use their weights), and a Bezier's
    total variation is at most its control polygon's (variation diminishing), which also bounds the
    channel's range. Euler tracks: the angular speed is at most the sum of the channels' speeds (unit
    axes), so the summed polygon lengths (degrees) bound the motion. Quaternion tracks: the
    components' summed polygon lengths ``L`` bound the path of the blended 4-vector ``H``, whose
    normalization moves at most ``|dH| / |H|``; ``|H|`` is at least the distance ``r`` from the origin
    to the box of the components' control ranges, so the rotation path is at most ``2 L / r`` radians
    (``inf`` when the box holds the origin). Stepped intervals get ``inf`` or NaN (callers skip them).
    """
    c = track.curve
    dt = np.diff(c.time)[:, None]
    v0, v1 = c.value[:-1], c.value[1:]
    if np.any(c.weighted_mode):
        wo = np.where((c.weighted_mode[:-1] & 2) != 0, c.out_weight[:-1], 1.0 / 3.0)
        wi = np.where((c.weighted_mode[1:] & 1) != 0, c.in_weight[1:], 1.0 / 3.0)
        p1 = v0 + c.out_slope[:-1] * wo * dt
        p2 = v1 - c.in_slope[1:] * wi * dt
    else:
        dt3 = dt / 3.0
        p1 = v0 + c.out_slope[:-1] * dt3
        p2 = v1 - c.in_slope[1:] * dt3
    with np.errstate(invalid="ignore"):
        length = (np.abs(p1 - v0) + np.abs(p2 - p1) + np.abs(v1 - p2)).sum(axis=1)
        if track.kind == EULER:
            return length
        lo = np.minimum(np.minimum(v0, v1), np.minimum(p1, p2))
        hi = np.maximum(np.maximum(v0, v1), np.maximum(p1, p2))
        gap = np.maximum(np.maximum(lo, -hi), 0.0)
        r = np.sqrt(np.einsum("ij,ij->i", gap, gap))
        with np.errstate(divide="ignore"):
            bound = np.degrees(2.0 * length / r)
    return np.where(r > 0, bound, np.inf)


def _implied_speed(track: RotationTrack, seg: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Implied speed (deg/s) of the key steps ``seg``: the unwrap's rule for Euler tracks (largest
    authored channel change / dt), the played path ``total`` (degrees) / dt for quaternion tracks."""
    c = track.curve
    dt = c.time[seg + 1] - c.time[seg]
    if track.kind == EULER:
        step = np.abs(c.value[seg + 1] - c.value[seg]).max(axis=1)
    else:
        step = total
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dt > 0, step / np.where(dt > 0, dt, 1.0), np.inf)


def densify(
    track: RotationTrack, max_step_deg: float = 90.0, spin_speed: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Key times plus samples of what Unity plays wherever a key interval moves more than ``max_step_deg``.

    With ``spin_speed`` (deg/s) only *deliberate* motion is sampled: intervals whose played path
    exceeds :data:`DELIBERATE_MIN_DEG` and whose implied speed (:func:`_implied_speed`, the unwrap's
    rule) is below ``spin_speed``. The other intervals keep their two key orientations only, which
    the interpolants join the short way: a 358 deg wrap between two 1/30 s frames becomes 2 deg.

    Returns ``(times (K,), quats (K, 4))``: seconds, strictly increasing, and hemisphere-continuous
    unit quaternions of :func:`~curveeditor.engine.clip.played`. The motion of an interval is its path
    length measured on 32 probes (Euler tracks: the channels' summed absolute change, which catches a
    channel moving > 180 deg even when the end poses coincide, e.g. a 720 deg spin over 2 keys). An
    interval whose path exceeds ``max_step_deg`` is split uniformly in time so that no piece can move
    more than ``max_step_deg`` at the interval's peak probed speed. Stepped intervals (infinite slope)
    are never split: they hold.

    Only intervals whose analytic motion bound (:func:`_motion_bound`, vectorized over all keys)
    exceeds ``max_step_deg`` are probed; the others cannot have a probed path above it, so the result
    is the same as probing everything (tested). Densify of a 10k-key mocap track (benchmarks/run.py
    data) took ~90 ms probing every interval (31 ms with today's ``evaluate``), ~2 ms with the bound.
    """
    if max_step_deg <= 0:
        raise ValueError(f"max_step_deg must be positive, got {max_step_deg}")
    curve = track.curve
    times = np.asarray(curve.time, dtype=np.float64)
    kq = key_quaternions(track)
    if curve.n_keys < 2:
        return times.copy(), kq.reshape(-1, 4).copy()
    # NaN bounds (infinite slopes) are stepped intervals, excluded anyway.
    # (1 + 1e-9): rounding of the bound must not hide an interval the probes would split.
    least = max_step_deg if spin_speed is None else max(max_step_deg, DELIBERATE_MIN_DEG)
    seg = np.nonzero(~stepped_intervals(curve) & ~(_motion_bound(track) * (1 + 1e-9) <= least))[0]
    if seg.size == 0:
        return times.copy(), _align(kq, kq[0])
    step, dt = _probe_motion(track, seg, _PROBES)
    # A quaternion probe step near 180 deg could hide more turns: probe those intervals finer.
    fine = step.max(axis=1, initial=0.0) > 45.0 if track.kind != EULER else np.zeros(len(seg), bool)
    peak = step.max(axis=1, initial=0.0) * _PROBES
    total = step.sum(axis=1)
    if np.any(fine):
        fstep, _ = _probe_motion(track, seg[fine], _PROBES * 16)
        peak[fine] = fstep.max(axis=1) * _PROBES * 16
        total[fine] = fstep.sum(axis=1)
    split_it = total > max_step_deg
    if spin_speed is not None:
        split_it &= (total > DELIBERATE_MIN_DEG) & (_implied_speed(track, seg, total) < spin_speed)
    pieces = np.where(split_it, np.ceil(np.maximum(peak, total) / max_step_deg), 1.0)
    pieces = np.minimum(pieces, _MAX_SUBDIVISIONS).astype(np.int64)
    split = pieces > 1
    if not np.any(split):
        return times.copy(), _align(kq, kq[0])
    sseg, spieces, sdt = seg[split], pieces[split], dt[split]
    owner = np.repeat(np.arange(len(sseg)), spieces - 1)
    # j-th inner sample (1-based) of its interval: position within the repeated block.
    first = np.cumsum(spieces - 1) - (spieces - 1)
    j = np.arange(len(owner)) - first[owner] + 1
    extra_t = times[sseg][owner] + sdt[owner] * j / spieces[owner]
    extra_q = played(track, extra_t)
    all_t = np.concatenate([times, extra_t])
    all_q = np.concatenate([kq, extra_q])
    order = np.argsort(all_t, kind="stable")
    all_q = all_q[order]
    return all_t[order], _align(all_q, all_q[0])


# ----------------------------------------------------------------------------------- interpolants


def _prepare(times, quats, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(times (N,), quats (N, 4), t (M,))``: sorted, deduplicated (last wins), clamped t."""
    ts = np.asarray(times, dtype=np.float64).reshape(-1)
    q = np.asarray(quats, dtype=np.float64).reshape(-1, 4)
    tt = np.asarray(t, dtype=np.float64).reshape(-1)
    if ts.shape[0] != q.shape[0]:
        raise ValueError(f"{ts.shape[0]} key times but {q.shape[0]} quaternions")
    if ts.shape[0] == 0:
        raise ValueError("cannot interpolate zero rotations")
    if not (np.all(np.isfinite(ts)) and np.all(np.isfinite(q)) and np.all(np.isfinite(tt))):
        raise ValueError("times and quaternions must be finite")
    if not np.all(ts[1:] > ts[:-1]):  # already strictly increasing (densify output): nothing to sort
        order = np.argsort(ts, kind="stable")
        ts, q = ts[order], q[order]
        last = np.append(ts[1:] != ts[:-1], True)
        ts, q = ts[last], q[last]
    q = quat_normalize(q)
    return ts, _align(q, q[0]), np.clip(tt, ts[0], ts[-1])


def _locate(ts: np.ndarray, tt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interval index ``(M,)`` and fraction ``u`` in [0, 1] of each time in ``tt``."""
    seg = _segment_index(ts, tt)
    t0 = ts[seg]
    u = (tt - t0) / (ts[seg + 1] - t0)
    return seg, np.clip(u, 0.0, 1.0, out=u)


def _align(out: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Hemisphere-continuous ``out (M, 4)`` with its first sample on ``ref``'s hemisphere.

    ``rotations.hemisphere_continuous`` then a flip, computed on the four component columns: its
    row-wise dot products (reductions over an axis of length 4) were a fifth of :func:`slerp`'s
    time on 10k samples.
    """
    if len(out) == 0:
        return out
    x, y, z, w = out[:, 0], out[:, 1], out[:, 2], out[:, 3]
    neg = (x[1:] * x[:-1] + y[1:] * y[:-1]) + (z[1:] * z[:-1] + w[1:] * w[:-1]) < 0
    first = float(np.dot(out[0], ref)) < 0
    if not first and not neg.any():
        return out
    flips = np.empty(len(out), dtype=np.int64)
    flips[0] = first
    np.cumsum(neg, out=flips[1:])
    flips[1:] += first
    sign = 1.0 - 2.0 * (flips & 1)
    return out * sign[:, None]


# Quaternions as tuples of component columns (x, y, z, w). Row-wise products on (M, 4) arrays run
# numpy inner loops of length 4; on columns every operation is one contiguous loop over M. Measured:
# the lock solve of euler_following (8 iterations; row-wise products, batched 3x3 matmuls and
# np.linalg.solve) cost ~10 us per sample, 5.8 ms of a 10k-key track's resample, now ~1 us; squad and
# catmull_rom evaluation 2-3x faster (benchmarks/resample_diff.py).


def _caxis(axis: int, rad: np.ndarray) -> tuple:
    """Component columns of rotations by ``rad`` (radians) about basis axis ``axis``."""
    zero = np.zeros_like(rad)
    out = [zero, zero, zero, np.cos(0.5 * rad)]
    out[axis] = np.sin(0.5 * rad)
    return tuple(out)


def _cbasis_image(q: tuple, k: int) -> tuple:
    """Basis vector ``k`` rotated by the inverse of unit quaternion ``q``: row ``k`` of its matrix."""
    x, y, z, w = q
    if k == 0:
        return 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)
    if k == 1:
        return 2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)
    return 2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)


def _clog(q: tuple) -> tuple:
    """Rotation vector columns (radians, short way) of component-column unit quaternions."""
    x, y, z, w = q
    s = np.sqrt(x * x + y * y + z * z)
    small = s < 1e-12
    scale = np.where(small, 2.0, 2.0 * np.arctan2(s, np.abs(w)) / np.where(small, 1.0, s))
    scale = np.where(w < 0, -scale, scale)
    return x * scale, y * scale, z * scale


def _dot3(a: tuple, b: tuple) -> np.ndarray:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cexp(r: tuple) -> tuple:
    """Component-column unit quaternions of rotation vector columns (radians); as ``quat_exp``."""
    x, y, z = r
    k, w = _scaled_exp_factors(1.0, np.sqrt(x * x + y * y + z * z))  # (u = 1: the same floats)
    return x * k, y * k, z * k, w


def _cconj(q: tuple) -> tuple:
    return -q[0], -q[1], -q[2], q[3]


def _gather(arrays, seg: np.ndarray) -> list[tuple]:
    """Rows ``seg`` of each ``(K, 4)`` array as component-column tuples (one ``np.take``)."""
    table = np.concatenate([np.asarray(a).T for a in arrays], axis=0)
    g = np.take(table, seg, axis=1)
    return [tuple(g[4 * i : 4 * i + 4]) for i in range(len(arrays))]


def _rows(q: tuple) -> np.ndarray:
    """``(M, 4)`` array (column-major storage) of a component-column tuple."""
    out = np.empty((4, len(q[3])))
    for i in range(4):
        out[i] = q[i]
    return out.T


def _qslerp(a: tuple, b: tuple, u: np.ndarray) -> tuple:
    """Short-way slerp ``a (a^-1 b)^u`` of component-column quaternions; ``u (M,)``."""
    x, y, z = _clog(quat_mul_components(_cconj(a), b))
    return quat_mul_components(a, _cexp((u * x, u * y, u * z)))


def _rel_rotvecs(q: np.ndarray) -> np.ndarray:
    """Rotation vectors ``(N-1, 3)`` (radians) of ``q_k^-1 q_(k+1)``: the step, same in both keys' frames.

    ``quat_log(quat_mul(quat_conj(a), b))`` computed on component columns (row-wise it took ~1 ms
    per 10k keys, half of :func:`slerp` on a 10k-key track); same formulas, short way.
    """
    a = (q[:-1, 0], q[:-1, 1], q[:-1, 2], q[:-1, 3])
    b = (q[1:, 0], q[1:, 1], q[1:, 2], q[1:, 3])
    return np.stack(_clog(quat_mul_components(_cconj(a), b)), axis=1)


def _scaled_exp_factors(u: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp(u r) = (k r, w)`` for rotation vectors ``r`` of length ``theta`` (radians) scaled by
    ``u``: ``k = u sin(a/2) / a`` and ``w = cos(a/2)`` with ``a = u theta``, a series for tiny angles
    (as ``quat_exp``). One order of float operations for every Slerp built on it."""
    a = u * theta
    half = 0.5 * a
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.sin(half) / a
    small = a < 1e-6
    if small.any():
        k[small] = 0.5 - a[small] ** 2 / 48.0
    k *= u
    return k, np.cos(half)


def slerp(times, quats, t) -> np.ndarray:
    """Piecewise spherical linear interpolation: ``(M, 4)`` unit quaternions at ``t`` (seconds).

    Same formula as ``scipy.spatial.transform.Slerp`` (``q_k exp(u log(q_k^-1 q_(k+1)))``, short way per
    interval) and equal to it within 1e-9 deg (tested). Written here because scipy was 3.5x slower:
    1000 keys -> 1M samples took 0.65 s with ``Slerp(...)(t).as_quat()`` and 0.19 s with this on the
    shared 2-core machine (scipy 1.17). The per-sample part works on component rows gathered with one
    ``np.take``: on a densified 10k-key track onto 10k samples, row-wise ``quat_exp``/``quat_mul`` on
    ``(M, 4)`` arrays took ~5 ms, this ~1.5 ms (``benchmarks/resample_diff.py``).
    """
    ts, q, tt = _prepare(times, quats, t)
    if len(ts) == 1:
        return np.broadcast_to(q[0], (len(tt), 4)).copy()
    seg, u = _locate(ts, tt)
    r = _rel_rotvecs(q)
    table = np.empty((8, len(r)))
    table[:4] = q[:-1].T
    table[4:7] = r.T
    table[7] = np.sqrt(np.einsum("ij,ij->i", r, r))
    g = np.take(table, seg, axis=1)
    k, ew = _scaled_exp_factors(u, g[7])
    ex, ey, ez = g[4] * k, g[5] * k, g[6] * k
    qx, qy, qz, qw = g[0], g[1], g[2], g[3]
    return _align(_rows(quat_mul_components((qx, qy, qz, qw), (ex, ey, ez, ew))), q[0])


def _squad_curve(q0, a0, b1, q1, u) -> np.ndarray:
    """Shoemake's squad: ``slerp(slerp(q0, q1, u), slerp(a0, b1, u), 2u(1-u))``."""
    return _qslerp(_qslerp(q0, q1, u), _qslerp(a0, b1, u), 2.0 * u * (1.0 - u))


def squad(times, quats, t) -> np.ndarray:
    """Spherical quadrangle interpolation (C1 in time, through every key): ``(M, 4)`` at ``t`` (seconds).

    Shoemake's squad, generalised to non-uniform key spacing. Squad's derivative at an interval's
    start is ``q_k (log(q_k^-1 q_(k+1)) + 2 log(q_k^-1 a_k))`` per unit parameter (Dam, Koch and
    Lillholm, *Quaternions, Interpolation and Animation*, 1998, prove these identities), so the
    controls are placed to give key k the same body-frame angular velocity, per second, on both sides:
    ``w_k = (r_(k-1) + r_k) / (dt_(k-1) + dt_k)`` (``r`` = relative rotation vectors in radians; the
    Kochanek-Bartels time adjustment), ``a_k = q_k exp((w_k dt_k - r_k) / 2)`` (outgoing control),
    ``b_k = q_k exp((r_(k-1) - w_k dt_(k-1)) / 2)`` (incoming). For uniform spacing this is exactly
    Shoemake's ``q_k exp(-(log(q_k^-1 q_(k+1)) + log(q_k^-1 q_(k-1))) / 4)`` (tested);
    end keys use the chord velocity (their control is the key itself).
    """
    ts, q, tt = _prepare(times, quats, t)
    if len(ts) == 1:
        return np.broadcast_to(q[0], (len(tt), 4)).copy()
    dt = np.diff(ts)
    r = _rel_rotvecs(q)
    w = np.empty((len(ts), 3))
    w[0] = r[0] / dt[0]
    w[-1] = r[-1] / dt[-1]
    w[1:-1] = (r[:-1] + r[1:]) / (dt[:-1] + dt[1:])[:, None]
    a = quat_mul(q[:-1], quat_exp(0.5 * (w[:-1] * dt[:, None] - r)))  # outgoing control of keys 0..N-2
    b = quat_mul(q[1:], quat_exp(0.5 * (r - w[1:] * dt[:, None])))  # incoming control of keys 1..N-1
    seg, u = _locate(ts, tt)
    q0, a0, b1, q1 = _gather([q[:-1], a, b, q[1:]], seg)
    return _align(_rows(_squad_curve(q0, a0, b1, q1, u)), q[0])


def _bezier(p0, p1, p2, p3, u) -> np.ndarray:
    """Spherical cubic Bezier by De Casteljau's construction with slerps (Shoemake 1985)."""
    a, b, c = _qslerp(p0, p1, u), _qslerp(p1, p2, u), _qslerp(p2, p3, u)
    return _qslerp(_qslerp(a, b, u), _qslerp(b, c, u), u)


def catmull_rom(times, quats, t, alpha: float = 0.0) -> np.ndarray:
    """Spherical Catmull-Rom spline (C1 in time, through every key): ``(M, 4)`` at ``t`` (seconds).

    Knots: ``alpha = 0`` uses the key times themselves (the non-uniform Catmull-Rom of the animation's
    own timing); ``alpha = 0.5`` (centripetal) or ``1`` (chordal) spaces knots by ``angle ** alpha``
    between neighbours and maps time to knots with a monotone C1 cubic (PCHIP), so the result stays C1
    in time and passes through every key at its time.
    Tangents are Barry-Goldman's non-uniform Catmull-Rom tangents taken in the tangent space (body
    frame): ``v_k = (d_k r_(k-1) / d_(k-1) + d_(k-1) r_k / d_k) / (d_(k-1) + d_k)`` (``d`` = knot steps,
    ``r`` = relative rotation vectors); end keys use the chord. Each interval is the spherical cubic
    Bezier with controls ``q_k``, ``q_k exp(v_k d_k / 3)``, ``q_(k+1) exp(-v_(k+1) d_k / 3)``, ``q_(k+1)``,
    evaluated with De Casteljau slerps (its end derivatives are exactly ``v``).
    """
    if not (0.0 <= alpha <= 1.0):
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    ts, q, tt = _prepare(times, quats, t)
    if len(ts) == 1:
        return np.broadcast_to(q[0], (len(tt), 4)).copy()
    r = _rel_rotvecs(q)
    if alpha == 0.0:
        knots, tk = ts, tt
    else:
        ang = np.linalg.norm(r, axis=1)
        # A floor keeps knots strictly increasing where the pose does not move.
        d = np.maximum(ang, 1e-6) ** alpha
        knots = np.concatenate([[0.0], np.cumsum(d)])
        if len(ts) > 2:
            # scipy imported here: it is 0.2-2 s of start-up a Slerp resample does not need.
            from scipy.interpolate import PchipInterpolator

            tk = PchipInterpolator(ts, knots)(tt)
        else:
            tk = np.interp(tt, ts, knots)
    d = np.diff(knots)
    v = np.empty((len(knots), 3))
    v[0] = r[0] / d[0]
    v[-1] = r[-1] / d[-1]
    dl, dr = d[:-1, None], d[1:, None]
    v[1:-1] = (dr * r[:-1] / dl + dl * r[1:] / dr) / (dl + dr)
    p1 = quat_mul(q[:-1], quat_exp(v[:-1] * d[:, None] / 3.0))
    p2 = quat_mul(q[1:], quat_exp(-v[1:] * d[:, None] / 3.0))
    seg, u = _locate(knots, np.clip(tk, knots[0], knots[-1]))
    c0, c1, c2, c3 = _gather([q[:-1], p1, p2, q[1:]], seg)
    return _align(_rows(_bezier(c0, c1, c2, c3, u)), q[0])


def rotation_spline(times, quats, t) -> np.ndarray:
    """``scipy.spatial.transform.RotationSpline`` (C2 angular velocity, through every key) at ``t``.

    Returns ``(M, 4)`` hemisphere-continuous unit quaternions; times in seconds.
    """
    from scipy.spatial.transform import Rotation, RotationSpline

    ts, q, tt = _prepare(times, quats, t)
    if len(ts) == 1:
        return np.broadcast_to(q[0], (len(tt), 4)).copy()
    out = RotationSpline(ts, Rotation.from_quat(q))(tt).as_quat()
    return _align(out.reshape(-1, 4), q[0])


#: Interpolants whose value at t depends only on the two samples around t.
_LOCAL_METHODS = frozenset({"slerp"})

_INTERPOLANTS = {
    "slerp": slerp,
    "squad": squad,
    "catmull-rom": catmull_rom,
    "spline": rotation_spline,
}


# -------------------------------------------------------------------------------------- tracks


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown resampling method {method!r}; expected one of {METHODS}")


def resample_quats(
    track: RotationTrack,
    t,
    method: str = "slerp",
    max_step_deg: float = 90.0,
    spin_speed: float = DEFAULT_SPIN_SPEED,
) -> np.ndarray:
    """What ``method`` makes of ``track`` at times ``t (M,)``: hemisphere-continuous ``(M, 4)``.

    "unity" is :func:`~curveeditor.engine.clip.played` itself. The other methods interpolate the key
    orientations, the short way between neighbours, plus samples of what Unity plays in intervals of
    deliberate motion over 180 deg (:func:`densify` with ``spin_speed`` deg/s, pieces of at most
    ``max_step_deg``). Stepped (constant) intervals break the interpolant into independent runs and
    hold their first rotation, as Unity plays them.
    """
    _check_method(method)
    tt = np.asarray(t, dtype=np.float64).reshape(-1)
    if track.n_keys == 0:
        raise ValueError(f"track {track.path!r} has no keys to resample")
    if method == "unity" or track.n_keys == 1:
        return _align(played(track, tt), key_quaternions(track)[0])
    fn = _INTERPOLANTS[method]
    dtimes, dq = densify(track, max_step_deg, spin_speed)
    key_t = track.curve.time
    stepped = stepped_intervals(track.curve)
    if not np.any(stepped):
        return fn(dtimes, dq, tt)
    out = played(track, tt)  # stepped intervals (and run boundaries) hold as Unity plays them
    if method in _LOCAL_METHODS:
        # A local interpolant only uses the two samples around t, which lie in t's own run: one call
        # over all samples gives every run's result (up to sign, which the alignment below fixes)
        # instead of a call per run (10k keys stepped every 50: 54 ms per run, ~16 ms in one call).
        seg = _segment_index(key_t, tt)
        moving = (tt >= key_t[0]) & (tt <= key_t[-1]) & ~stepped[seg]
        if np.any(moving):
            out[moving] = fn(dtimes, dq, tt[moving])
        return _align(out, key_quaternions(track)[0])
    # Runs of non-stepped intervals: each interpolated on its own samples (a loop over runs, not keys).
    breaks = np.nonzero(stepped)[0]
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(key_t) - 1]])
    for k0, k1 in zip(starts[ends > starts], ends[ends > starts], strict=True):
        lo, hi = key_t[k0], key_t[k1]
        sel = (dtimes >= lo) & (dtimes <= hi)
        inside = (tt >= lo) & (tt < hi) if k1 < len(key_t) - 1 else (tt >= lo) & (tt <= hi)
        if np.any(inside):
            out[inside] = fn(dtimes[sel], dq[sel], tt[inside])
    return _align(out, key_quaternions(track)[0])


#: Within this many degrees of gimbal lock :func:`euler_following` solves for channels near the
#: reference instead of decomposing (where a decomposition's outer channels swing wildly).
LOCK_WINDOW_DEG = 10.0
#: A pose counts as exact within this many degrees (float rounding of the decompositions): by
#: default every Euler sample :func:`euler_following` gives is its quaternion within it (issue 20:
#: the damped solve near gimbal lock used to accept 0.5 deg, silently).
EXACT_POSE_DEG = 1e-3
#: Damping of that solve (squared singular value below which a direction is damped, ~ sin(1.8 deg)^2).
_LOCK_DAMPING = 1e-3
_LOCK_ITERATIONS = 8


def _solve_near(q: np.ndarray, order: str, start: np.ndarray) -> np.ndarray:
    """Euler channels (degrees) near ``start`` whose rotation approaches ``q``: damped Gauss-Newton.

    The Jacobian of the body-frame rotation w.r.t. the channels loses rank at gimbal lock; damping
    keeps the channels near ``start`` along the lost direction instead of swinging them (the pose
    error left there is at most the component of ``q``'s offset from ``start`` along that direction).
    Each step solves ``(J^T J + damping I) d = J^T r`` in closed form (adjugate of the symmetric 3x3).
    """
    first, mid, last = _extrinsic_axes(order)
    target = tuple(q[:, i] for i in range(4))
    e = np.array(start, dtype=np.float64)
    m = len(e)
    one = np.ones(m)
    zero = np.zeros(m)
    for _ in range(_LOCK_ITERATIONS):
        rad = np.deg2rad(e)
        qf = _caxis(first, rad[:, first])
        qmf = quat_mul_components(_caxis(mid, rad[:, mid]), qf)
        qe = quat_mul_components(_caxis(last, rad[:, last]), qmf)
        cols = [None, None, None]  # Jacobian column per channel: the body-frame axis it turns about
        cols[first] = tuple(one if a == first else zero for a in range(3))
        cols[mid] = _cbasis_image(qf, mid)
        cols[last] = _cbasis_image(qmf, last)
        r = _clog(quat_mul_components((-qe[0], -qe[1], -qe[2], qe[3]), target))
        a00 = _dot3(cols[0], cols[0]) + _LOCK_DAMPING
        a11 = _dot3(cols[1], cols[1]) + _LOCK_DAMPING
        a22 = _dot3(cols[2], cols[2]) + _LOCK_DAMPING
        a01, a02, a12 = _dot3(cols[0], cols[1]), _dot3(cols[0], cols[2]), _dot3(cols[1], cols[2])
        b0, b1, b2 = _dot3(cols[0], r), _dot3(cols[1], r), _dot3(cols[2], r)
        c00 = a11 * a22 - a12 * a12
        c01 = a02 * a12 - a01 * a22
        c02 = a01 * a12 - a02 * a11
        c11 = a00 * a22 - a02 * a02
        c12 = a01 * a02 - a00 * a12
        c22 = a00 * a11 - a01 * a01
        det = a00 * c00 + a01 * c01 + a02 * c02
        step = np.empty((m, 3))
        step[:, 0] = (c00 * b0 + c01 * b1 + c02 * b2) / det
        step[:, 1] = (c01 * b0 + c11 * b1 + c12 * b2) / det
        step[:, 2] = (c02 * b0 + c12 * b1 + c22 * b2) / det
        e = e + np.rad2deg(step)
    return e


def euler_following(
    q: np.ndarray, order: str, ref: np.ndarray, smooth_lock: bool = True, pose_error: float = 0.0
) -> np.ndarray:
    """Euler angles ``(M, 3)`` (degrees, columns x, y, z) of quaternions ``q (M, 4)`` in ``order`` that
    follow the reference channels ``ref (M, 3)``.

    Each sample is the equivalent triple (of the 2, shifted by 360 deg multiples) nearest to ``ref``,
    so every channel ends within 180 deg of it: following a source's own channels keeps their winding
    (spins, turn counts) while the pose is exactly ``q``. Within :data:`LOCK_WINDOW_DEG` of gimbal
    lock, where that decomposition's outer channels swing by tens of degrees between neighbouring
    samples, ``smooth_lock`` solves for the channels starting from ``ref`` instead (damped
    Gauss-Newton), which keeps them smooth: its result is taken where its pose is within
    ``pose_error`` degrees of ``q`` (default 0: exact, i.e. within :data:`EXACT_POSE_DEG`; exact
    where ``ref`` is ``q``'s pose, e.g. at source keys), else (or with a channel more than 180 deg
    from ``ref``) the exact decomposition is kept. A larger ``pose_error`` trades pose error for
    smoother Euler curves near lock (``resample``'s ``pose_error`` parameter: an explicit choice
    whose figure the recipe report prints). A display of exact poses passes ``smooth_lock=False``.
    """
    e1 = quat_to_euler(q, order)
    e2 = equivalent_euler(e1, order)
    c1 = e1 + 360.0 * np.round((ref - e1) / 360.0)
    c2 = e2 + 360.0 * np.round((ref - e2) / 360.0)
    d1 = np.sum((c1 - ref) ** 2, axis=1)
    d2 = np.sum((c2 - ref) ** 2, axis=1)
    out = np.where((d2 < d1)[:, None], c2, c1)
    near = 90.0 - np.abs(e1[:, _extrinsic_axes(order)[1]]) < LOCK_WINDOW_DEG
    if smooth_lock and np.any(near):
        solved = _solve_near(q[near], order, ref[near])
        err = geodesic_angle(euler_to_quat(solved, order), q[near])
        # A solve that wandered a channel more than 180 deg from the reference (it can, a few deg from
        # the lock, where the damped step along the lost direction is large) would break the winding
        # the reference holds: the exact decomposition nearest the reference is kept there.
        ok = (err <= max(float(pose_error), EXACT_POSE_DEG)) & np.all(
            np.abs(solved - ref[near]) <= 180.0, axis=1
        )
        idx = np.nonzero(near)[0][ok]
        out[idx] = solved[ok]
    return out


def resample_track(
    track: RotationTrack,
    hz: float,
    method: str = "slerp",
    max_step_deg: float = 90.0,
    spin_speed: float = DEFAULT_SPIN_SPEED,
    pose_error: float = 0.0,
) -> RotationTrack:
    """``track`` resampled at ``hz`` (samples per second) from its first to its last key with ``method``.

    The rotations are :func:`resample_quats` (short way between neighbouring keys except deliberate
    spins slower than ``spin_speed`` deg/s). Keeps the kind, path, order, meta and wrap modes:

    * Euler tracks: the resampled rotations converted back to Euler in the track's order, each sample
      taking the equivalent triple nearest to the source's channels unwrapped with the same
      ``spin_speed`` (``unwrap.unwrap_track``; "unity" follows the source's own channels), so spins
      and winding survive and wraps do not come back; with ClampedAuto tangents
      (``tangents.make_curve(mode="clamped_auto")``), the Animation window's default, except at the
      two end keys (Free, the source's end slopes: ClampedAuto would flatten them). Every key's pose
      is the interpolated rotation (within :data:`EXACT_POSE_DEG`) unless ``pose_error`` (degrees)
      allows smoother channels near gimbal lock at that price (:func:`euler_following`).
    * Quaternion tracks: hemisphere-continuous keys (first key on the source's hemisphere) with slopes
      from central differences of the sampled components (``np.gradient``), which makes Unity's
      per-component Hermite follow the sampled motion. Tangent mode Free.

    A track with fewer than 2 keys is returned unchanged. :func:`resample_track_measured` also
    returns the largest pose error of the keys written against the interpolated rotations.
    """
    return resample_track_measured(track, hz, method, max_step_deg, spin_speed, pose_error)[0]


def resample_track_measured(
    track: RotationTrack,
    hz: float,
    method: str = "slerp",
    max_step_deg: float = 90.0,
    spin_speed: float = DEFAULT_SPIN_SPEED,
    pose_error: float = 0.0,
) -> tuple[RotationTrack, float]:
    """:func:`resample_track` and the largest geodesic error (degrees) of its keys from the rotations
    the method interpolated at their times (0 where the keys are those rotations: quaternion tracks,
    ``method="unity"``, keys on the source's own times; at most ``pose_error`` or
    :data:`EXACT_POSE_DEG` otherwise): the figure the recipe report holds against ``pose_error``."""
    _check_method(method)
    if track.n_keys < 2:
        return track, 0.0
    # Imported here: tangents is a sibling engine module that may import this one's users.
    from .tangents import make_curve

    curve = track.curve
    grid = uniform_grid(curve.start, curve.end, hz)
    on_keys = track.kind == EULER and np.array_equal(grid, curve.time)
    # Every method interpolates the key poses, so on the track's own key times (resampling a 120 fps
    # clip at 120 Hz) the samples are the keys: their (unwrapped) values as they are, not re-derived
    # through quaternions (which only added rounding, and 40% of the step on a 65-track clip).
    q = None if on_keys else resample_quats(track, grid, method, max_step_deg, spin_speed)
    wrap = dict(pre_infinity=curve.pre_infinity, post_infinity=curve.post_infinity)
    steps = _grid_steps(curve, grid, per_channel=track.kind == EULER)
    pose = 0.0
    if track.kind == EULER:
        # Baking what Unity plays: the evaluated channels are that motion, winding included. The
        # interpolants took the short way across wraps, so their reference is the unwrapped source.
        ref = curve if method == "unity" else unwrap_track(track, spin_speed).curve
        if on_keys:
            values = np.array(ref.value)
        else:
            source = evaluate(ref, grid)
            if method == "unity":
                values = source
            else:
                values = euler_following(q, track.order, source, pose_error=pose_error)
                pose = float(geodesic_angle(euler_to_quat(values, track.order), q).max())
        new = make_curve(grid, values, mode="clamped_auto", **wrap)
        ins, outs = np.array(new.in_slope), np.array(new.out_slope)
        # ClampedAuto is flat at the end keys; a spin that starts or ends at speed would lose up to
        # speed * dt * 0.15 deg in the first and last frame. The end keys take the (unwrapped)
        # source's own end slopes (the played channels' derivative there) in the Free mode instead.
        first = np.where(np.isfinite(ref.out_slope[0]), ref.out_slope[0], 0.0)
        last = np.where(np.isfinite(ref.in_slope[-1]), ref.in_slope[-1], 0.0)
        ins[0] = outs[0] = first
        ins[-1] = outs[-1] = last
        mode = np.array(new.tangent_mode)
        mode[[0, -1]] = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
        new = new.with_keys(in_slope=ins, out_slope=outs, tangent_mode=mode)
    else:
        ins = np.gradient(q, grid, axis=0)
        # End keys: the derivative of what the source plays there (its end slopes projected onto the
        # unit sphere, as the normalization does), which a one-sided difference only approximates;
        # not where the end interval was taken the short way (a hemisphere flip Unity swings through).
        short = _short_way_ends(track, method, spin_speed)
        if not short[0]:
            ins[0] = _played_derivative(curve.value[0], curve.out_slope[0], q[0])
        if not short[1]:
            ins[-1] = _played_derivative(curve.value[-1], curve.in_slope[-1], q[-1])
        outs = ins.copy()
        # Next to a step, one-sided differences: the jump must not leak into the held frames.
        i = np.nonzero(steps.any(axis=1))[0]
        slope = np.diff(q, axis=0) / np.diff(grid)[:, None]
        ins[i] = np.where((i > 0)[:, None], slope[np.maximum(i - 1, 0)], 0.0)
        outs[i + 1] = np.where((i + 2 < len(grid))[:, None], slope[np.minimum(i + 1, len(slope) - 1)], 0.0)
        new = Curve.make(grid, q, ins, outs, **wrap)
    if np.any(steps):
        new = _with_steps(new, steps, ins, outs)
    return replace(track, curve=new), pose


def _short_way_ends(track: RotationTrack, method: str, spin_speed: float) -> tuple[bool, bool]:
    """Whether the first / last key interval of a quaternion track is resampled the short way while
    Unity plays it the long way (keys on opposite hemispheres, a step faster than ``spin_speed``)."""
    if method == "unity":
        return False, False
    v = np.asarray(track.curve.value)
    ends = np.array([0, track.n_keys - 2])
    flipped = np.einsum("ij,ij->i", v[ends], v[ends + 1]) < 0
    fast = _implied_speed(track, ends, 360.0 - geodesic_angle(v[ends], v[ends + 1])) >= spin_speed
    out = flipped & fast
    return bool(out[0]), bool(out[1])


def _played_derivative(value: np.ndarray, slope: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Time derivative ``(4,)`` of ``normalize(H)`` where the component curve ``H`` is ``value`` with
    slope ``slope`` (per second), expressed on the hemisphere of the unit quaternion ``unit``."""
    norm = np.linalg.norm(value)
    q = value / norm
    m = np.where(np.isfinite(slope), slope, 0.0)
    d = (m - q * np.dot(q, m)) / norm
    return -d if np.dot(q, unit) < 0 else d


def _grid_steps(curve: Curve, grid: np.ndarray, per_channel: bool) -> np.ndarray:
    """Bool ``(M-1, C)``: grid intervals ``(g_i, g_(i+1)]`` containing the end of a stepped source
    interval (where the source jumps), per channel (Unity steps each Euler channel on its own) or,
    for quaternion tracks, for all components at once. The resampled curve keeps those jumps as
    stepped (Constant) intervals."""
    c = curve.n_components
    steps = np.zeros((max(len(grid) - 1, 0), c), dtype=bool)
    if curve.n_keys < 2 or len(grid) < 2:
        return steps
    stepped = ~np.isfinite(curve.out_slope[:-1]) | ~np.isfinite(curve.in_slope[1:])  # (N-1, C)
    if not per_channel:
        stepped = np.repeat(stepped.any(axis=1, keepdims=True), c, axis=1)
    seg, ch = np.nonzero(stepped)
    j = np.searchsorted(grid, curve.time[seg + 1], side="left")
    ok = (j >= 1) & (j < len(grid))
    steps[j[ok] - 1, ch[ok]] = True
    return steps


def _with_steps(curve: Curve, steps: np.ndarray, ins: np.ndarray, outs: np.ndarray) -> Curve:
    """``curve`` with infinite slopes (Unity's stepped interpolation) and Constant tangent sides on the
    grid intervals and channels ``steps (M-1, C)``; the other sides keep their slopes and modes (the
    key becomes broken)."""
    ins, outs = ins.copy(), outs.copy()
    left, right, _ = tangent_mode_sides(curve.tangent_mode)
    left, right = left.copy(), right.copy()
    out_step = np.zeros(ins.shape, dtype=bool)
    in_step = np.zeros(ins.shape, dtype=bool)
    out_step[:-1] = steps
    in_step[1:] = steps
    outs[out_step] = np.inf
    ins[in_step] = np.inf
    right[out_step] = TangentMode.CONSTANT
    left[in_step] = TangentMode.CONSTANT
    # tangent_mode_bits(left, right, broken=True), vectorized (np.vectorize was a Python call per key
    # and channel: ~9 ms per 10k keys x 3 channels).
    packed = 1 | ((left & 15) << 1) | ((right & 15) << 5)
    mode = np.where(out_step | in_step, packed, curve.tangent_mode)
    return curve.with_keys(in_slope=ins, out_slope=outs, tangent_mode=mode)
