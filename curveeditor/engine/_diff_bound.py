"""The certified maximum of the error between two versions of a track (used by :mod:`.diff`).

Between two sample times ``a < b`` that lie inside one key interval of each track, every channel of
each track is one cubic (Unity's Hermite; a stepped channel holds a constant). Written as a cubic
Bezier in ``x = (t - a) / (b - a)``, its control points bound its range and (times 3) its derivative
(variation diminishing), and the controls of the *difference* of the two versions are the
difference of their controls. That bounds how far the played error can rise between the samples:

* Euler tracks (same order), error ``e`` in degrees: ``|de/dt| <= |w_after - w_before|`` (the
  relative angular velocity), and with channel differences ``d_c`` (less any common 360 k shift,
  which plays the same rotation) and the first version's channel
  rates ``r_c``: ``|w_after - w_before| <= sum |d_c'| + (sum |r_c|) (sum |d_c|)`` (each channel's
  rotation axis is turned by the channels applied after it, at most by their difference in angle).
  Over ``[a, b]``: ``e <= (e_a + e_b + W (b - a)) / 2``.
* Quaternion tracks, raw components ``H`` normalized by Unity: with ``s`` the hemisphere sign at
  ``a`` and ``dH = H_after - s H_before``, the chord ``f = |q_after - s q_before|``
  (``e = 4 asin(f / 2)``) moves at most ``|dH'| / n_a + 4 |dH| |H_b'| / n_a^2 + |dH| |H_b'| / (n_a n_b)``
  per second (``q' = (I - q q^T) H' / |H|``; ``|q_a - s q_b| <= 2 |dH| / n_a``), ``n`` being the
  distance from the origin to the box of each version's controls (the least ``|H|`` can be; index
  ``a`` = after, ``b`` = before here).

Sample intervals whose bound exceeds the largest sampled error by more than the tolerance are
bisected (all of them at once, per round) until none does. The result's maximum is then within the
tolerance of the true maximum of what Unity plays, and ``bound`` is a proven upper bound. A
first-order bound cannot certify a flat error (a constant offset) to the tolerance at finite cost:
refinement has a budget (:data:`REFINE_BUDGET`), after which ``bound`` is the proven bound of what
is still open (looser than the tolerance; the caller sees both figures).
Stepped channels jump at their interval's end key: those intervals use the one-sided bound
``e_a + W (b - a)``.
"""

from __future__ import annotations

import numpy as np

from .clip import EULER, RotationTrack, played
from .curves import WRAP_CLAMP, WRAP_DEFAULT, _segment_index
from .rotations import _extrinsic_axes, geodesic_angle

#: Interior samples per union key interval before refinement (at least) ...
INITIAL_INTERIOR = 2
#: ... and enough that the error can change at most about this much (degrees) between them ...
INITIAL_STEP_DEG = 2.0
#: ... but no more than this many sub-intervals per union key interval (or 1 per ms if more).
MAX_INITIAL = 32
#: Refinement rounds at most (each splits the open intervals into SPLIT pieces).
MAX_ROUNDS = 40
SPLIT = 8
#: Sample intervals shorter than this (seconds) are not split further; their bound is kept.
MIN_SPLIT_S = 1e-10
#: Refinement evaluates at most this many times the initial samples (plus 4096) more: a flat error
#: (a constant offset) cannot be certified to the tolerance by a first-order bound at any finite
#: cost; the bound of what is still open is kept then (still proven, just looser).
REFINE_BUDGET = 2.0


def _applicable(before: RotationTrack, after: RotationTrack, start: float, end: float) -> bool:
    if before.kind != after.kind or (before.kind == EULER and before.order != after.order):
        return False
    for tr in (before, after):
        c = tr.curve
        if c.n_keys < 2 or np.any(c.weighted_mode):
            return False
        if start < c.start and c.pre_infinity not in (WRAP_CLAMP, WRAP_DEFAULT):
            return False
        if end > c.end and c.post_infinity not in (WRAP_CLAMP, WRAP_DEFAULT):
            return False
    return True


def _power_coefficients(track: RotationTrack) -> tuple[np.ndarray, np.ndarray]:
    """Per key interval and channel, ``v(s) = c0 + c1 s + c2 s^2 + c3 s^3`` with ``s`` in [0, 1]:
    ``(coef (N-1, C, 4), stepped (N-1,) any channel held)``."""
    c = track.curve
    dt = np.diff(c.time)[:, None]
    v0, v1 = c.value[:-1], c.value[1:]
    m0, m1 = c.out_slope[:-1], c.in_slope[1:]
    held = ~np.isfinite(m0) | ~np.isfinite(m1)
    with np.errstate(invalid="ignore"):
        a = dt * np.where(held, 0.0, m0)
        b = dt * np.where(held, 0.0, m1)
    coef = np.empty(v0.shape + (4,))
    coef[..., 0] = v0
    coef[..., 1] = a
    coef[..., 2] = -3.0 * v0 - 2.0 * a + 3.0 * v1 - b
    coef[..., 3] = 2.0 * v0 + a - 2.0 * v1 + b
    coef[held, 1:] = 0.0
    return coef, held.any(axis=1)


class _Piecewise:
    """One track's channels as cubics per key interval, re-expressed on arbitrary sample intervals."""

    def __init__(self, track: RotationTrack):
        self.track = track
        c = track.curve
        self.t = np.asarray(c.time)
        self.coef, self.stepped = _power_coefficients(track)
        self.axes = _extrinsic_axes(track.order)
        self.first = np.asarray(c.value[0])
        self.last = np.asarray(c.value[-1])

    def controls(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bezier controls ``(M, C, 4)`` of each channel on ``[a_k, b_k]`` (inside one key interval or
        outside the key range, where the Clamp mode holds the end value), and ``(M,)`` bool: the
        interval lies in a stepped key interval (the value may jump at its end)."""
        t = self.t
        mid = 0.5 * (a + b)
        seg = _segment_index(t, mid)
        t0 = t[seg]
        dt = t[seg + 1] - t0
        s0 = (a - t0) / dt
        d = ((b - a) / dt)[:, None]
        s0 = s0[:, None]
        c = self.coef[seg]  # (M, C, 4)
        c0, c1, c2, c3 = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
        p0 = c0 + s0 * (c1 + s0 * (c2 + s0 * c3))
        p1 = d * (c1 + s0 * (2.0 * c2 + 3.0 * s0 * c3))
        p2 = d * d * (c2 + 3.0 * s0 * c3)
        p3 = d * d * d * c3
        out = np.empty(c.shape)
        out[..., 0] = p0
        out[..., 1] = p0 + p1 / 3.0
        out[..., 2] = p0 + (2.0 * p1 + p2) / 3.0
        out[..., 3] = p0 + p1 + p2 + p3
        before = mid < t[0]
        after = mid > t[-1]
        if before.any():
            out[before] = self.first[None, :, None]
        if after.any():
            out[after] = self.last[None, :, None]
        return out, self.stepped[seg] & ~before & ~after


def _equivalent_controls(ctrl: np.ndarray, axes: tuple[int, int, int]) -> np.ndarray:
    """Controls ``(M, 3, 4)`` of the equivalent Euler triple path (``rotations.equivalent_euler``)."""
    first, mid, last = axes
    out = ctrl.copy()
    out[:, first] += 180.0
    out[:, last] += 180.0
    out[:, mid] = 180.0 - ctrl[:, mid]
    return out


def _speed_term(ctrl: np.ndarray) -> np.ndarray:
    """Per channel, 3 x the largest control step: (max |dv/dx|) over the interval, ``(M, C)``."""
    return 3.0 * np.abs(np.diff(ctrl, axis=-1)).max(axis=-1)


def _bounds(
    kind: str,
    pa: _Piecewise,
    pb: _Piecewise,
    a: np.ndarray,
    b: np.ndarray,
    ea: np.ndarray,
    eb: np.ndarray,
    sa: np.ndarray,
    sb: np.ndarray,
) -> np.ndarray:
    """Upper bound (degrees) of the error on each sample interval ``[a_k, b_k]``."""
    ca, step_a = pa.controls(a, b)
    cb, step_b = pb.controls(a, b)
    one_sided = step_a | step_b
    if kind == EULER:
        rate = _speed_term(ca).sum(axis=1)

        def rel_motion(other):
            diff = cb - other
            # A channel shifted by 360 k plays the same rotation (an unwrap's shifts): remove it.
            diff -= 360.0 * np.round(diff.mean(axis=-1, keepdims=True) / 360.0)
            d_range = np.abs(diff).max(axis=-1).sum(axis=1)  # deg
            return _speed_term(diff).sum(axis=1) + rate * np.deg2rad(d_range)

        # The first version also plays its equivalent triples (a + 180, 180 - b, c + 180), an affine
        # image of its controls: an unwrap that switched triples is compared with the right one.
        w_h = np.minimum(rel_motion(ca), rel_motion(_equivalent_controls(ca, pa.axes)))
        up = np.where(one_sided, ea + w_h, 0.5 * (ea + eb + w_h))
        return np.minimum(up, 180.0)
    # Quaternions: chord f = |qb - s qa| with the hemisphere sign s of the interval's start.
    s = sa[:, None, None]
    diff = cb - s * ca
    dh = np.sqrt((np.abs(diff).max(axis=-1) ** 2).sum(axis=1))
    ddh = np.sqrt((_speed_term(diff) ** 2).sum(axis=1))
    dha = np.sqrt((_speed_term(ca) ** 2).sum(axis=1))

    def least_norm(ctrl):
        gap = np.maximum(np.maximum(ctrl.min(axis=-1), -ctrl.max(axis=-1)), 0.0)
        return np.sqrt((gap * gap).sum(axis=1))

    na, nb = least_norm(ca), least_norm(cb)
    with np.errstate(divide="ignore", invalid="ignore"):
        lf_h = ddh / nb + 4.0 * dha * dh / (nb * nb) + dha * dh / (na * nb)
    fa = 2.0 * np.sin(np.deg2rad(ea) / 4.0)
    same = sb == sa
    fb = np.where(same, 2.0 * np.sin(np.deg2rad(eb) / 4.0), 2.0 * np.cos(np.deg2rad(eb) / 4.0))
    fmax = np.where(one_sided, fa + lf_h, 0.5 * (fa + fb + lf_h))
    up = np.degrees(4.0 * np.arcsin(np.minimum(0.5 * fmax, 1.0)))
    return np.where(np.isfinite(up), np.minimum(up, 180.0), 180.0)


def _evaluate(before: RotationTrack, after: RotationTrack, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Error (degrees, ``rotations.geodesic_angle``) and hemisphere sign of ``after`` relative to
    ``before`` at ``t``."""
    qa, qb = played(before, t), played(after, t)
    sign = np.where(np.einsum("ij,ij->i", qa, qb) < 0, -1.0, 1.0)
    return geodesic_angle(qa, qb), sign


def _shifted_bound(before: RotationTrack, after: RotationTrack, live: np.ndarray) -> np.ndarray:
    """Per key interval (same key times, Euler, same order), a proven bound (degrees) of the error
    when the two versions differ by whole turns per channel plus small value and slope changes;
    ``inf`` for the intervals not in ``live`` or with stepped slopes.

    With ``k_c`` whole turns removed per channel, the difference of channel ``c`` is the Hermite
    ``h00 r0 + h01 r1 + dt (h10 dm0 + h11 dm1)`` of the key differences ``r`` and slope differences
    ``dm``: at most ``max(|r0|, |r1|) + (4/27) dt (|dm0| + |dm1|)`` (``h00 + h01 = 1``, ``|h10|,
    |h11| <= 4/27`` on [0, 1]); and a rotation ``R_k(c) R_j(b) R_i(a)`` moves by at most the sum of
    its three angle changes (the geodesic distance is bi-invariant). A 360 k shift plays the same
    rotation, so an unwrapped track against its source is bounded by the rounding alone."""
    cb, ca = before.curve, after.curve
    out = np.full(live.shape, np.inf)
    idx = np.nonzero(live)[0]
    dv = np.asarray(ca.value) - np.asarray(cb.value)
    r0, r1 = dv[idx], dv[idx + 1]
    k = 360.0 * np.round(0.5 * (r0 + r1) / 360.0)
    r0, r1 = np.abs(r0 - k), np.abs(r1 - k)
    with np.errstate(invalid="ignore"):
        dm0 = np.abs(np.asarray(ca.out_slope)[idx] - np.asarray(cb.out_slope)[idx])
        dm1 = np.abs(np.asarray(ca.in_slope)[idx + 1] - np.asarray(cb.in_slope)[idx + 1])
    dt = (cb.time[idx + 1] - cb.time[idx])[:, None]
    per = np.maximum(r0, r1) + (4.0 / 27.0) * dt * (dm0 + dm1)
    near = per.sum(axis=1)
    out[idx] = np.where(np.isfinite(near), near, np.inf)
    return out


def certified_error(
    before: RotationTrack,
    after: RotationTrack,
    keys: np.ndarray,
    changed: np.ndarray | None,
    tol: float = 1e-6,
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(times, errors, bound)``: errors (degrees) at the sorted sample ``times`` (seconds) whose
    maximum is within ``tol`` degrees (relative above 1 degree) of the true maximum of what Unity
    plays, and the proven upper bound; ``None`` when the pair is not covered (see
    :func:`_applicable`). ``keys``: the sorted union of both key time sets; ``changed``: per key
    interval of ``before`` (same key times in both), the intervals that may differ (others are
    exactly 0), or None."""
    start, end = float(keys[0]), float(keys[-1])
    if not _applicable(before, after, start, end):
        return None
    pa, pb = _Piecewise(before), _Piecewise(after)
    # Round 0 works on the union key intervals themselves; an interval whose bound already proves
    # it below the tolerance (unchanged poses: most of an unwrap) needs no interior sample. The
    # others get interior samples enough that the error can change by at most INITIAL_STEP_DEG
    # between them (so the RMS, a trapezoid over the samples, sees its shape), then SPLIT pieces per
    # round until every piece is proven.
    times = keys
    live = np.ones(keys.size - 1, dtype=bool)
    errors = np.zeros(keys.shape)
    signs = np.ones(keys.shape)
    bound = 0.0
    if changed is not None:  # same key times in both: unchanged intervals are exactly 0
        live = changed.copy()
        if before.kind == EULER and live.any():
            # Intervals that differ only by whole turns and float rounding (an unwrap's 360 k shifts,
            # a resample onto the same frames) are proven within the tolerance without a sample:
            # 84,000 of the 84,110 intervals of the 65-track benchmark clip after unwrap + resample.
            near = _shifted_bound(before, after, live)
            quiet = near <= tol
            if quiet.any():
                bound = float(near[quiet].max())
                live &= ~quiet
        pts = np.zeros(keys.shape, dtype=bool)
        pts[:-1] |= live
        pts[1:] |= live
        if pts.any():
            errors[pts], signs[pts] = _evaluate(before, after, keys[pts])
    else:
        errors, signs = _evaluate(before, after, keys)
    idx = np.nonzero(live)[0]
    a, b = keys[idx], keys[idx + 1]
    ea, eb, sa, sb = errors[idx], errors[idx + 1], signs[idx], signs[idx + 1]
    best = float(errors.max())
    bound = max(bound, best)
    extra_t: list[np.ndarray] = []
    extra_e: list[np.ndarray] = []
    budget = int(REFINE_BUDGET * (keys.size * (INITIAL_INTERIOR + 1))) + 4096
    first = True
    for _ in range(MAX_ROUNDS):
        if a.size == 0:
            break
        if 180.0 - best <= tol * max(1.0, best):
            bound = 180.0  # no error exceeds 180 deg: the maximum is proven
            a = a[:0]
            break
        up = _bounds(before.kind, pa, pb, a, b, ea, eb, sa, sb)
        split = (up > best + tol * max(1.0, best)) & (b - a > MIN_SPLIT_S)
        if first:
            # Intervals with a real error get their initial samples even when already proven.
            spread = up - np.minimum(ea, eb)
            split |= spread > INITIAL_STEP_DEG
        if (~split).any():
            bound = max(bound, float(up[~split].max()))
        if not split.any():
            a = a[:0]
            break
        a, b, ea, eb, sa, sb = a[split], b[split], ea[split], eb[split], sa[split], sb[split]
        if first:
            most = np.maximum(MAX_INITIAL, np.ceil((b - a) * 1000.0))
            pieces = np.clip(np.ceil(2.0 * spread[split] / INITIAL_STEP_DEG), INITIAL_INTERIOR + 1, most)
            pieces = pieces.astype(np.int64)
            first = False
        else:
            pieces = np.full(a.size, SPLIT, dtype=np.int64)
        inner = pieces - 1
        if int(inner.sum()) > budget:
            break
        budget -= int(inner.sum())
        owner = np.repeat(np.arange(a.size), inner)
        start_of = np.cumsum(inner) - inner
        j = np.arange(owner.size) - start_of[owner] + 1
        m = a[owner] + (b - a)[owner] * (j / pieces[owner])
        em, sm = _evaluate(before, after, m)
        extra_t.append(m)
        extra_e.append(em)
        best = max(best, float(em.max()))
        # Children: (left end, right end) of every piece, in order.
        pos = np.cumsum(pieces) - pieces  # first child of each parent
        n_child = int(pieces.sum())
        ca = np.empty(n_child)
        cea = np.empty(n_child)
        csa = np.empty(n_child)
        ca[pos] = a
        cea[pos] = ea
        csa[pos] = sa
        child = pos[owner] + j  # the child starting at each inner point
        ca[child] = m
        cea[child] = em
        csa[child] = sm
        cb = np.empty(n_child)
        ceb = np.empty(n_child)
        csb = np.empty(n_child)
        cb[:-1] = ca[1:]
        ceb[:-1] = cea[1:]
        csb[:-1] = csa[1:]
        last = pos + pieces - 1
        cb[last] = b
        ceb[last] = eb
        csb[last] = sb
        a, b, ea, eb, sa, sb = ca, cb, cea, ceb, csa, csb
    if a.size:  # rounds exhausted: keep the bounds of what is still open
        bound = max(bound, float(_bounds(before.kind, pa, pb, a, b, ea, eb, sa, sb).max()))
    if extra_t:
        times = np.concatenate([times, *extra_t])
        errors = np.concatenate([errors, *extra_e])
        order = np.argsort(times, kind="stable")
        times, errors = times[order], errors[order]
    return times, errors, max(bound, float(errors.max()))
