"""Zero-phase smoothing of rotation tracks in rotation space (``rotations.md`` section 7).

Never per Euler channel: the track is sampled as Unity plays it, as hemisphere-continuous unit
quaternions on a uniform grid, and every output sample ``i`` is the filter applied in the tangent
space of its own input sample (a local log map that moves with the motion, so large turns are fine)::

    out_i = q_i exp( sum_j H_ij log(q_i^-1 q_j) )

``H`` is the linear filter's own operator (rows sum to 1, so it is an affine average in each chart):

* ``"gaussian"``: kernel ``exp(-t^2 / (2 sigma_s^2))`` truncated at 4 sigma;
* ``"butterworth"``: ``scipy.signal.butter(order, cutoff_hz)`` run forward and backward
  (``filtfilt``), zero phase, effective order ``2 x order``.

Both see the signal extended at each end by odd (point) reflection about the end sample, so a
constant-speed motion passes the ends unchanged (no pull toward the interior) and the first and last
poses are kept (scipy's ``filtfilt`` default behaves the same; loops and blend points stay put).
``H`` is built by filtering unit impulses: a stationary kernel for interior rows plus exact rows near
the ends. The relative rotation vectors are unrolled by whole turns across the window, so fast spins
under wide kernels are averaged along the motion, not across a wrapped log map.

Sampling: key times when they are uniform (within 1e-6 relative), otherwise a uniform grid at the
median key step; refined by an integer factor when the played motion between samples exceeds 45
degrees (Euler spins), so no motion is lost. The result is keyed at the source's key times:
Euler tracks in their own order, each key the equivalent triple nearest the source key (same winding,
no new wraps or flips), with Unity Auto tangents; quaternion tracks hemisphere-continuous, slopes from
central differences (Free), like :func:`~curveeditor.engine.resample.resample_track`.

Limits seen on the corpus BVH clips: an Euler wrap in the source (a channel jumping 179 -> -179 between
frames) is a spin Unity plays, and smoothing spreads that spin over the kernel: unwrap first (the CLI's
shorthand order does). Within a few degrees of the order's gimbal lock the channels of the smoothed
poses can move fast (an inspector "flip") where the smoothed path passes closer to the lock than the
source did; one joint of one corpus clip showed this.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.signal import butter, filtfilt

from .clip import EULER, RotationTrack
from .curves import Curve
from .resample import densify, euler_following, resample_quats, slerp, uniform_grid
from .rotations import hemisphere_continuous, quat_conj, quat_dot, quat_exp, quat_log, quat_mul
from .tangents import make_curve

__all__ = ["METHODS", "smooth_track", "smooth_quats", "filter_band"]

METHODS = ("gaussian", "butterworth")
#: Kernel entries below this fraction of the peak are dropped (then rows are renormalized).
_KERNEL_EPS = 1e-9
#: Above this many samples the operator is built as a band plus exact end rows instead of densely.
_DENSE_MAX = 1200
#: Largest played motion (degrees) allowed between two filter samples.
_MAX_SAMPLE_STEP_DEG = 45.0


def _odd_pad(x: np.ndarray, pad: int) -> np.ndarray:
    """``x (L, K)`` extended by ``pad`` samples at each end by point reflection about the end samples."""
    pad = min(pad, x.shape[0] - 1)
    if pad <= 0:
        return x
    left = 2.0 * x[:1] - x[pad:0:-1]
    right = 2.0 * x[-1:] - x[-2 : -pad - 2 : -1]
    return np.concatenate([left, x, right])


def _make_apply(method: str, step_s: float, sigma_s, cutoff_hz, order: int):
    """``(apply, half_width)``: a linear filter along axis 0 with odd padding, and its kernel half-width."""
    if method == "gaussian":
        sig = float(sigma_s) / step_s
        half = max(1, int(np.ceil(4.0 * sig)))

        def apply(x: np.ndarray) -> np.ndarray:
            pad = min(half, x.shape[0] - 1)
            y = gaussian_filter1d(_odd_pad(x, half), sig, axis=0, mode="nearest", truncate=4.0)
            return y[pad : pad + x.shape[0]]

        return apply, half
    nyq = 0.5 / step_s
    b, a = butter(int(order), float(cutoff_hz) / nyq)
    # Kernel width from the impulse response of the forward-backward pass.
    span = int(min(20000, np.ceil(40.0 / (float(cutoff_hz) * step_s)) + 10))
    imp = np.zeros(2 * span + 1)
    imp[span] = 1.0
    k = filtfilt(b, a, imp, padlen=0)
    big = np.nonzero(np.abs(k) > _KERNEL_EPS * np.abs(k).max())[0]
    half = max(1, int(max(span - big[0], big[-1] - span)))

    def apply(x: np.ndarray) -> np.ndarray:
        pad = min(half, x.shape[0] - 1)
        return filtfilt(b, a, x, axis=0, padtype="odd", padlen=pad)

    return apply, half


def filter_band(apply, m: int, half: int) -> np.ndarray:
    """The filter's operator on ``m`` samples as a band ``(m, 2 half + 1)``: ``band[i, d + half]`` is the
    weight of sample ``i + d`` in output ``i``. Rows sum to 1 (an affine average).

    Built by filtering unit impulses, so it is exactly the filter ``apply`` implements (including its
    end handling) up to entries below ``_KERNEL_EPS`` of the peak. Small ``m``: the dense operator;
    otherwise the stationary kernel for interior rows and exact operators for ``2 half`` rows at each end.
    """
    width = 2 * half + 1
    band = np.zeros((m, width))
    edge = min(2 * half, m)
    span = edge + 2 * half + 1
    rows = np.arange(m)[:, None]
    cols = rows + np.arange(-half, half + 1)[None, :]
    inside = (cols >= 0) & (cols < m)
    if m <= max(_DENSE_MAX, 2 * span):
        dense = apply(np.eye(m))
        band[inside] = dense[np.broadcast_to(rows, cols.shape)[inside], cols[inside]]
    else:
        center = np.zeros((4 * half + 1, 1))
        center[2 * half] = 1.0
        kernel = apply(center)[half : 3 * half + 1, 0][::-1]
        band[:] = kernel[None, :]
        full = apply(np.eye(span))
        e_rows = np.arange(edge)[:, None]
        e_cols = e_rows + np.arange(-half, half + 1)[None, :]
        ok = (e_cols >= 0) & (e_cols < span)
        left = np.zeros((edge, width))
        left[ok] = full[np.broadcast_to(e_rows, e_cols.shape)[ok], e_cols[ok]]
        right = np.zeros((edge, width))
        r_rows = e_rows + span - edge
        r_cols = r_rows + np.arange(-half, half + 1)[None, :]
        ok = (r_cols >= 0) & (r_cols < span)
        right[ok] = full[np.broadcast_to(r_rows, r_cols.shape)[ok], r_cols[ok]]
        band[:edge] = left
        band[m - edge :] = right
        band[~inside] = 0.0
    band[np.abs(band) < _KERNEL_EPS * np.abs(band).max()] = 0.0
    band[:, half] += 1.0 - band.sum(axis=1)
    return band


def smooth_quats(q, step_s: float, method: str, sigma_s=None, cutoff_hz=None, order: int = 2) -> np.ndarray:
    """Filter uniformly sampled rotations ``q (M, 4)`` (sample step ``step_s`` seconds) in rotation space.

    Returns hemisphere-continuous unit quaternions ``(M, 4)`` (see module docstring). The relative
    rotation vectors ``log(q_i^-1 q_(i+d))`` are unrolled outward from ``d = 0`` (the 2 pi branch nearest
    the previous offset's), so a window holding more than half a turn (a fast spin under a wide
    Butterworth kernel) still sees a straight line, not a wrapped one. A loop over the kernel's offsets,
    vectorized over samples.
    """
    q = hemisphere_continuous(np.asarray(q, dtype=np.float64))
    m = q.shape[0]
    if m < 3:
        return q.copy()
    apply, half = _make_apply(method, step_s, sigma_s, cutoff_hz, order)
    band = filter_band(apply, m, half)
    rv = np.zeros((m, 3))
    conj = quat_conj(q)
    for sign in (1, -1):
        prev = np.zeros((m, 3))
        for k in range(1, half + 1):
            d = sign * k
            lo, hi = max(0, -d), min(m, m - d)
            if lo >= hi:
                break
            r = np.zeros((m, 3))
            r[lo:hi] = quat_log(quat_mul(conj[lo:hi], q[lo + d : hi + d]))
            r = _unroll(r, prev)
            w = band[:, d + half]
            rv += w[:, None] * r
            prev = r
    out = quat_mul(q, quat_exp(rv))
    return hemisphere_continuous(out)


def _unroll(r: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """Rotation vectors ``r (M, 3)`` moved by whole turns along their axis to be nearest ``prev``."""
    theta = np.linalg.norm(r, axis=1)
    ok = theta > 1e-12
    axis = np.where(ok[:, None], r / np.where(ok, theta, 1.0)[:, None], 0.0)
    proj = np.einsum("ij,ij->i", prev, axis)
    turns = np.where(ok, np.round((proj - theta) / (2.0 * np.pi)), 0.0)
    return r + (2.0 * np.pi * turns)[:, None] * axis


def _sampling(track: RotationTrack) -> tuple[np.ndarray, float]:
    """Uniform filter grid (seconds) and its step for ``track`` (see module docstring)."""
    t = np.asarray(track.curve.time)
    dt = np.diff(t)
    step = float(np.median(dt))
    uniform = np.allclose(dt, step, rtol=1e-6, atol=0.0)
    dtimes, _ = densify(track, _MAX_SAMPLE_STEP_DEG)
    per = np.bincount(np.searchsorted(t, dtimes, side="right") - 1, minlength=len(t))[:-1]
    factor = int(max(1, per.max(initial=1)))
    if uniform and factor == 1:
        return t.copy(), step
    step = step / factor
    grid = uniform_grid(t[0], t[-1], 1.0 / step)
    return grid, step


def smooth_track(
    track: RotationTrack,
    method: str = "gaussian",
    sigma_s: float | None = None,
    cutoff_hz: float | None = None,
    order: int = 2,
) -> RotationTrack:
    """``track`` smoothed in rotation space, zero phase, keyed at the same times (module docstring).

    ``method``: ``"gaussian"`` (needs ``sigma_s``, seconds) or ``"butterworth"`` (needs ``cutoff_hz``,
    below the key rate's Nyquist frequency, and ``order`` >= 1). Tracks with fewer than 3 keys are
    returned unchanged. Raises ``ValueError`` on bad parameters.
    """
    if method not in METHODS:
        raise ValueError(f"unknown smoothing method {method!r}; expected one of {METHODS}")
    if method == "gaussian":
        if sigma_s is None or not (np.isfinite(sigma_s) and sigma_s > 0):
            raise ValueError(f"gaussian smoothing needs sigma_s > 0 (seconds), got {sigma_s!r}")
    else:
        if cutoff_hz is None or not (np.isfinite(cutoff_hz) and cutoff_hz > 0):
            raise ValueError(f"butterworth smoothing needs cutoff_hz > 0 (Hz), got {cutoff_hz!r}")
        if int(order) != order or order < 1:
            raise ValueError(f"butterworth order must be a positive integer, got {order!r}")
    if track.n_keys < 3:
        return track
    grid, step = _sampling(track)
    if method == "butterworth" and cutoff_hz >= 0.5 / step:
        raise ValueError(
            f"cutoff_hz {cutoff_hz} must be below the Nyquist frequency {0.5 / step:.6g} Hz of the "
            f"track's {1.0 / step:.6g} Hz samples"
        )
    q = resample_quats(track, grid, "unity")
    fq = smooth_quats(q, step, method, sigma_s, cutoff_hz, int(order))
    curve = track.curve
    t = np.asarray(curve.time)
    if grid.shape[0] != t.shape[0] or not np.array_equal(grid, t):
        fq = slerp(grid, fq, t)
    wrap = dict(pre_infinity=curve.pre_infinity, post_infinity=curve.post_infinity)
    if track.kind == EULER:
        values = euler_following(fq, track.order, np.asarray(curve.value))
        new = make_curve(t, values, mode="auto", **wrap)
    else:
        fq = hemisphere_continuous(fq)
        if quat_dot(fq[0], curve.value[0]) < 0:
            fq = -fq
        slopes = np.gradient(fq, t, axis=0)
        new = Curve.make(t, fq, slopes, slopes, **wrap)
    return replace(track, curve=new)
