"""Certification of :mod:`.reduce`'s segments against the bound, with :mod:`._diff_bound`'s proof.

``diff.diff_tracks`` certifies the *maximum* error of a whole track to 1e-6 deg: it refines every
interval whose proven bound exceeds the largest sample. A reduction only needs to know, per kept
segment, whether the error can exceed the bound: an interval whose proven bound is already below the
bound needs no sample at all (nearly all of them), and a segment is given up (split by the caller)
as soon as one sample exceeds the bound. Measured on the generated 31 x 2,752 clip (benchmarks/run.py,
shared 2-core machine): one ``diff_tracks`` of the joined track was ~1 s per round; this check of the
whole clip ~0.1 s, and later rounds test only the segments just split.

Same proof as the diff (:func:`._diff_bound._bounds`: a bound on how fast the error can change
between two samples, from the Bezier controls of both versions' Hermite segments), so it covers the
same pairs: unweighted curves of one kind and Euler order, compared inside their key range.
"""

from __future__ import annotations

import numpy as np

from ._diff_bound import MIN_SPLIT_S, _bounds, _evaluate, _Piecewise, _speed_term
from .clip import EULER, RotationTrack

__all__ = ["failing_segments", "MAX_ROUNDS", "SPLIT"]

#: Refinement rounds at most; intervals still open then count as failing (their segment is split).
MAX_ROUNDS = 24
#: Pieces each open sample interval is cut into per round. Bisection: on the generated 31 x 2,752
#: clip 14k of 85k key intervals are open after the first round and nearly all close after one cut,
#: so 8 pieces (the diff's choice) evaluated 113k samples in round 2 where 2 pieces need 28k.
SPLIT = 2


def _bound(kind, pw_source, pw_reduced, t0, t1, e0, e1, s0, s1) -> np.ndarray:
    """Proven upper bound (degrees) of the error on each sample interval ``[t0, t1]``.

    Euler tracks: :func:`._diff_bound._bounds`' Euler bound against the source's own triples only.
    The diff also tries the source's equivalent triples (for an unwrap that switched them); a reduced
    track keeps the source's values at its keys and follows them between, so that second bound is
    not needed here, and skipping it halves the cost. Quaternion tracks: ``_bounds``."""
    if kind != EULER:
        return _bounds(kind, pw_source, pw_reduced, t0, t1, e0, e1, s0, s1)
    ca, step_a = pw_source.controls(t0, t1)
    cb, step_b = pw_reduced.controls(t0, t1)
    diff = cb - ca
    # A channel shifted by 360 k plays the same rotation: remove it (as the diff does).
    diff -= 360.0 * np.round(diff.mean(axis=-1, keepdims=True) / 360.0)
    d_range = np.abs(diff).max(axis=-1).sum(axis=1)  # deg
    w = _speed_term(diff).sum(axis=1) + _speed_term(ca).sum(axis=1) * np.deg2rad(d_range)
    up = np.where(step_a | step_b, e0 + w, 0.5 * (e0 + e1 + w))
    return np.minimum(up, 180.0)


def failing_segments(
    source: RotationTrack,
    reduced: RotationTrack,
    pw_source: _Piecewise,
    a: np.ndarray,
    b: np.ndarray,
    bound: float,
) -> np.ndarray:
    """Bool ``(S,)``: segments from source key ``a[s]`` to key ``b[s]`` (indices into ``source``'s
    keys, ``b > a``) where what Unity plays from ``reduced`` may stray more than ``bound`` degrees
    (geodesic) from ``source``. False is proven: every instant of the segment is within the bound.
    True: a sample exceeds the bound, or the proof did not close within :data:`MAX_ROUNDS`.

    ``reduced`` holds the segment ends as keys (and any other keys outside the segments);
    ``pw_source`` is ``_Piecewise(source)`` (reused across calls). Both unweighted, same kind/order.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    n_seg = a.shape[0]
    failed = np.zeros(n_seg, dtype=bool)
    if n_seg == 0:
        return failed
    kt = np.asarray(source.curve.time)
    pw_reduced = _Piecewise(reduced)
    # Samples at every source key of every segment (segment s: keys a[s] .. b[s]).
    n_pts = b - a + 1
    start = np.cumsum(n_pts) - n_pts
    p_owner = np.repeat(np.arange(n_seg), n_pts)
    p_key = a[p_owner] + np.arange(int(n_pts.sum())) - start[p_owner]
    e_pts, s_pts = _evaluate(source, reduced, kt[p_key])
    np.logical_or.at(failed, p_owner, e_pts > bound)
    # Key intervals: left sample at p, right at p + 1 (the last point of each segment starts none).
    left = np.ones(p_key.shape[0], dtype=bool)
    left[start + n_pts - 1] = False
    li = np.nonzero(left)[0]
    own = p_owner[li]
    t0, t1 = kt[p_key[li]], kt[p_key[li] + 1]
    e0, e1, s0, s1 = e_pts[li], e_pts[li + 1], s_pts[li], s_pts[li + 1]
    kind = source.kind
    for _ in range(MAX_ROUNDS):
        live = ~failed[own]
        if not live.all():
            own, t0, t1, e0, e1, s0, s1 = (x[live] for x in (own, t0, t1, e0, e1, s0, s1))
        if own.size == 0:
            return failed
        up = _bound(kind, pw_source, pw_reduced, t0, t1, e0, e1, s0, s1)
        open_ = up > bound
        if not open_.any():
            return failed
        own, t0, t1, e0, e1, s0, s1 = (x[open_] for x in (own, t0, t1, e0, e1, s0, s1))
        tiny = t1 - t0 <= MIN_SPLIT_S
        if tiny.any():  # cannot be cut further: not proven
            failed[own[tiny]] = True
        # Cut each open interval into SPLIT pieces: SPLIT - 1 new samples.
        j = np.arange(1, SPLIT)
        m = (t0[:, None] + (t1 - t0)[:, None] * (j / SPLIT)).ravel()
        em, sm = _evaluate(source, reduced, m)
        em = em.reshape(-1, SPLIT - 1)
        sm = sm.reshape(-1, SPLIT - 1)
        np.logical_or.at(failed, own, (em > bound).any(axis=1))
        tt = np.concatenate([t0[:, None], m.reshape(-1, SPLIT - 1), t1[:, None]], axis=1)
        ee = np.concatenate([e0[:, None], em, e1[:, None]], axis=1)
        ss = np.concatenate([s0[:, None], sm, s1[:, None]], axis=1)
        own = np.repeat(own, SPLIT)
        t0, t1 = tt[:, :-1].ravel(), tt[:, 1:].ravel()
        e0, e1 = ee[:, :-1].ravel(), ee[:, 1:].ravel()
        s0, s1 = ss[:, :-1].ravel(), ss[:, 1:].ravel()
    failed[own] = True  # rounds exhausted: what is still open is not proven
    return failed
