"""Played error of a track keyed at frames from the Slerp of those frames, on a dense grid (issue 8).

A sampled track (one pose per frame, read from a BVH) means its frame poses and the Slerp between
neighbouring frames. After it is written and read back, the write check measures how far the file
plays from that reference: at the frames, at the written key times (the frame times as float32) and
on a grid of at least 1 kHz and at least 10 samples per frame interval
(:func:`~curveeditor.engine.reduce.dense_check_grid`'s density), which is what
``io.verify.deviation(..., frames=True)`` reports.

:func:`frame_errors` computes that when the written track has one key per frame (the usual case:
``reorder.sampled_track`` keys the frames, the file rounds their times to float32). Every frame
interval then gets the same number ``K`` of evenly spaced samples (the most any interval of the
frames gets from the 1 kHz / 10 rule), so the samples of all intervals form one ``(K - 1, N - 1)``
array: the written curve's Hermite coefficients and the frames' Slerp steps are per-interval rows
broadcast over it, with no per-sample gathers and no sort. The same float operations as
``curves.evaluate``, ``rotations.euler_to_quat``, ``resample.slerp`` and ``rotations.geodesic_angle``
(so the same values at the same times; the frame and key-time samples go through those functions
themselves). Measured on CMU_Sample_05_01 (165 joints x 599 frames at 25 fps, 40 samples per
interval): 0.55x the time of the generic path (played + slerp + geodesic on the union grid).
Returns None where the structure does not hold (keys added between frames, weighted or stepped
written keys, a written key time that moved past a grid sample): the caller takes the generic path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .clip import EULER, RotationTrack, played
from .curves import hermite_basis
from .reduce import GRID_HZ, GRID_MAX_PER_INTERVAL, GRID_MIN_PER_INTERVAL
from .resample import _align, _rel_rotvecs, slerp
from .rotations import euler_to_quat, geodesic_angle, quat_mul_components, quat_normalize

__all__ = ["FrameErrors", "frame_errors"]


@dataclass(frozen=True)
class FrameErrors:
    """Errors (degrees) of a written track from the frames and their Slerp.

    ``max_error`` the largest over every sample (frames, written key times, grid), ``worst_time``
    (seconds) where it occurs, ``key_errors (N,)`` at the frame times, ``rms_error`` trapezoid-weighted
    over the frames and grid samples."""

    max_error: float
    worst_time: float
    key_errors: np.ndarray
    rms_error: float


def _hermite_rows(curve, k: slice, s: np.ndarray, dt: np.ndarray, out: np.ndarray) -> None:
    """Channels of ``curve`` at fractions ``s (J, B)`` of its key intervals ``k`` (``dt (B,)``
    seconds) into ``out (C, J, B)``: ``curves.evaluate``'s Hermite in the same operations and order
    (bit-identical values)."""
    h00, h10, h01, h11 = hermite_basis(s)
    h10 *= dt
    h11 *= dt
    tmp = np.empty_like(s)
    k1 = slice(k.start + 1, k.stop + 1)
    for c in range(curve.n_components):
        v = out[c]
        np.multiply(h00, curve.value[k, c], out=v)
        v += np.multiply(h10, curve.out_slope[k, c], out=tmp)
        v += np.multiply(h01, curve.value[k1, c], out=tmp)
        v += np.multiply(h11, curve.in_slope[k1, c], out=tmp)


def _slerp_rows(q: np.ndarray, u: np.ndarray) -> tuple:
    """Component arrays of the Slerp between neighbouring rows of ``q (N, 4)`` (unit, hemisphere-
    aligned) at fractions ``u (J, N-1)`` of each interval: ``resample.slerp``'s
    ``q_k exp(u r_k)`` with ``r_k`` the step's rotation vector, written as
    ``cos(u |r| / 2) q_k + sin(u |r| / 2) / |r| (q_k (r_k, 0))`` so the quaternion product is one
    per interval, not per sample (equal to ``slerp`` within 1e-15)."""
    r = _rel_rotvecs(q)
    theta = np.sqrt(np.einsum("ij,ij->i", r, r))
    with np.errstate(divide="ignore"):
        inv = np.where(theta > 0, 1.0 / theta, 0.0)  # (a zero step has r = 0: any finite factor)
    p = (q[:-1, 0], q[:-1, 1], q[:-1, 2], q[:-1, 3])
    b = quat_mul_components(p, (r[:, 0], r[:, 1], r[:, 2], np.zeros_like(theta)))
    half = u * (0.5 * theta)
    cs = np.cos(half)
    sn = np.sin(half, out=half)
    sn *= inv
    out = []
    tmp = np.empty_like(u)
    for i in range(4):
        o = np.multiply(cs, p[i])
        o += np.multiply(sn, b[i], out=tmp)
        out.append(o)
    return tuple(out)


def _geodesic_rows(a, b) -> np.ndarray:
    """``rotations.geodesic_angle`` (degrees) of unit quaternions given as component arrays ``a``
    and ``b`` (``|a|^2 + |b|^2`` taken as 2: both are unit within 1e-15)."""
    dot = a[0] * b[0]
    tmp = np.empty_like(dot)
    for i in (1, 2, 3):
        dot += np.multiply(a[i], b[i], out=tmp)
    sign = np.copysign(1.0, dot, out=dot)
    d2 = np.zeros_like(dot)
    for i in range(4):
        np.multiply(sign, b[i], out=tmp)
        np.subtract(a[i], tmp, out=tmp)
        tmp *= tmp
        d2 += tmp
    p2 = np.subtract(4.0, d2, out=sign)
    np.maximum(p2, 0.0, out=p2)
    np.sqrt(p2, out=p2)
    np.sqrt(d2, out=d2)
    out = np.arctan2(d2, p2, out=d2)
    out *= 4.0 * 180.0 / np.pi
    return out


def _played_rows(track: RotationTrack, k: slice, grid: np.ndarray) -> tuple:
    """What ``track`` plays at ``grid (J, B)`` (column j inside key interval ``k.start + j`` of
    ``track``): component arrays (x, y, z, w) of that shape, as ``clip.played`` computes them."""
    curve = track.curve
    wt = curve.time
    w0 = wt[k]
    wdt = wt[k.start + 1 : k.stop + 1] - w0
    s = grid - w0
    s /= wdt
    shape = grid.shape
    vals = np.empty((curve.n_components,) + shape)
    _hermite_rows(curve, k, s, wdt, vals)
    del s
    flat = vals.reshape(curve.n_components, -1).T  # (M, C), each channel contiguous (as evaluate's)
    q = euler_to_quat(flat, track.order) if track.kind == EULER else quat_normalize(flat)
    return tuple(q[:, c].reshape(shape) for c in range(4))


#: Grid samples per block of frame intervals: bounded temporaries (a few dozen arrays of this
#: many float64 live at once; the write check runs this beside the file's render).
BLOCK_SAMPLES = 8192


def frame_errors(
    times,
    quats,
    track: RotationTrack,
    hz: float = GRID_HZ,
    min_per: int = GRID_MIN_PER_INTERVAL,
    memo: dict | None = None,
) -> FrameErrors | None:
    """How far ``track`` (the written track) plays from frame poses ``quats (N, 4)`` at ``times (N,)``
    (seconds, increasing) and the Slerp between them (module docstring), or None when ``track`` is not
    one key per frame with unweighted, unstepped keys that keep each frame interval's grid samples
    inside the matching key interval. ``memo`` (a dict kept across calls on the same ``track``)
    reuses what ``track`` plays on the grid of the same frame times (the write check's writer and
    promise comparisons of one written track)."""
    rt = np.asarray(times, dtype=np.float64).reshape(-1)
    n = rt.shape[0]
    curve = track.curve
    if n < 2 or curve.n_keys != n or np.any(curve.weighted_mode):
        return None
    if not (np.all(np.isfinite(curve.out_slope[:-1])) and np.all(np.isfinite(curve.in_slope[1:]))):
        return None
    wt = curve.time
    dt = np.diff(rt)
    if not np.all(dt > 0):
        return None
    per = int(np.clip(np.ceil(dt * hz), min_per, GRID_MAX_PER_INTERVAL).max())
    frac = (np.arange(1, per) / per)[:, None]
    # The interior samples of every frame interval, rows = fraction (first and last only: the rest
    # lie between them), to check they stay inside the matching written key interval.
    if not (np.all(rt[:-1] + dt * frac[0] >= wt[:-1]) and np.all(rt[:-1] + dt * frac[-1] < wt[1:])):
        return None
    memo_key = (per, rt.tobytes())
    cached = None if memo is None else memo.get(memo_key)
    played_blocks = [] if cached is None else cached
    frames_q = quat_normalize(np.asarray(quats, dtype=np.float64))
    frames_q = _align(frames_q, frames_q[0])
    width = max(1, BLOCK_SAMPLES // per)
    best = (-1.0, 0.0)
    sq_sum = np.empty(n - 1)
    for bi, b0 in enumerate(range(0, n - 1, width)):
        k = slice(b0, min(n - 1, b0 + width))
        grid = rt[k] + dt[k] * frac  # (per - 1, B)
        if cached is None:
            got = _played_rows(track, k, grid)
            played_blocks.append(got)
        else:
            got = cached[bi]
        u = grid - rt[k]
        u /= dt[k]
        np.clip(u, 0.0, 1.0, out=u)
        err = _geodesic_rows(got, _slerp_rows(frames_q[k.start : k.stop + 1], u))
        i = int(np.argmax(err))
        if err.flat[i] > best[0]:
            best = (float(err.flat[i]), float(grid.flat[i]))
        err *= err
        sq_sum[k] = err.sum(axis=0)
    if memo is not None and cached is None:
        memo.clear()  # one grid at a time: the memo is for the next call on the same track
        memo[memo_key] = played_blocks
    # The frames and the written key times through the generic functions.
    key_err = geodesic_angle(played(track, rt), quats)
    key_t_err = geodesic_angle(played(track, wt), slerp(rt, frames_q, wt))
    for e, t in ((key_err, rt), (key_t_err, wt)):
        i = int(np.argmax(e))
        if e[i] > best[0]:
            best = (float(e[i]), float(t[i]))
    # Trapezoid rms over the frames and the grid (evenly spaced in each interval: dt / per apart).
    ksq = key_err * key_err
    per_interval = sq_sum + 0.5 * (ksq[:-1] + ksq[1:])
    rms = float(np.sqrt(np.sum(per_interval * (dt / per)) / (rt[-1] - rt[0])))
    return FrameErrors(best[0], best[1], key_err, rms)
