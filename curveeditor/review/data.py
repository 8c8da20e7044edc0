"""What the review page shows of one clip (:mod:`curveeditor.review`), as plain lists and numbers.

Computed next to the clip (a batch worker or ``clean``), so only these few kilobytes travel: the
:data:`WORST_TRACKS` tracks with the largest error of the written file read back, each sampled as
Unity plays it before (the input) and after (the file read back), as continuous Euler degrees in
the written track's order (the input's poses re-expressed near the written curves when the orders
or kinds differ, so X is X on both), min/max-binned to :data:`PLOT_POINTS` points per curve; the
key times kept and dropped; the wraps and flips the input had that the output no longer has (what
the lossless steps changed on purpose).
"""

from __future__ import annotations

import numpy as np

from ..engine.analysis import find_problems
from ..engine.clip import Clip, RotationTrack
from ..engine.display import sample_track

__all__ = ["WORST_TRACKS", "PLOT_POINTS", "clip_review", "track_review"]

#: Tracks plotted per clip (the worst by the written file's error against the input).
WORST_TRACKS = 3
#: Points per plotted curve (min/max pairs of 2 x this many bins, so a one-frame spike stays drawn).
PLOT_POINTS = 400
#: Problem kinds an intended (lossless) step removes and the page marks.
INTENDED_KINDS = ("wrap", "flip", "hemisphere")


def _binned(t: np.ndarray, v: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """``(times, values (K, 3))`` with at most ``points`` rows: per bin of samples, each channel's
    two extremes in the order they occur (at the bin's first and last time), so peaks survive the
    thinning and monotone stretches stay straight."""
    n = t.shape[0]
    if n <= points:
        return t, v
    bins = points // 2
    k = -(-n // bins)
    pad = bins * k - n
    tp = np.concatenate([t, np.repeat(t[-1:], pad)]).reshape(bins, k)
    vp = np.concatenate([v, np.repeat(v[-1:], pad, axis=0)]).reshape(bins, k, v.shape[1])
    lo_i, hi_i = vp.argmin(axis=1), vp.argmax(axis=1)  # (bins, 3)
    lo = np.take_along_axis(vp, lo_i[:, None, :], axis=1)[:, 0]
    hi = np.take_along_axis(vp, hi_i[:, None, :], axis=1)[:, 0]
    first = np.where(lo_i <= hi_i, lo, hi)
    second = np.where(lo_i <= hi_i, hi, lo)
    times = np.stack([tp[:, 0], tp[:, -1]], axis=1).reshape(-1)
    values = np.stack([first, second], axis=1).reshape(-1, v.shape[1])
    return times, values


def track_review(before: RotationTrack, after: RotationTrack, points: int = PLOT_POINTS) -> dict:
    """One plotted track: ``path``, ``order``, ``times`` and ``before``/``after`` (lists of three
    channel lists, degrees), ``keys_before``/``keys_after`` (counts), ``dropped`` (seconds: input key
    times the output has no key at), ``removed`` ([[seconds, kind], ...]: wraps and flips of the
    input the output no longer has)."""
    start = min(before.curve.start, after.curve.start)
    end = max(before.curve.end, after.curve.end)
    dense = np.linspace(start, end, max(8 * points, 2)) if end > start else np.array([start])
    t = np.unique(np.concatenate([dense, after.times]))
    sa = sample_track(after, t)
    sb = sample_track(before, t)
    b_euler = sb.euler
    if before.kind != after.kind or before.order != after.order:
        from ..engine.resample import euler_following

        b_euler = euler_following(sb.quat, after.order, sa.euler, smooth_lock=False)
    tt, bv = _binned(t, b_euler, points)
    _, av = _binned(t, sa.euler, points)
    kept = np.asarray(after.times)
    bt = np.asarray(before.times)
    near = np.searchsorted(kept, bt)
    gap = np.full(bt.shape, np.inf)
    ok = near < kept.shape[0]
    gap[ok] = np.abs(kept[near[ok]] - bt[ok])
    ok = near > 0
    gap[ok] = np.minimum(gap[ok], np.abs(kept[near[ok] - 1] - bt[ok]))
    dropped = bt[gap > 1e-6]
    left = {(p.kind, round(p.time, 6)) for p in find_problems(after) if p.kind in INTENDED_KINDS}
    removed = [
        [float(p.time), p.kind]
        for p in find_problems(before)
        if p.kind in INTENDED_KINDS and (p.kind, round(p.time, 6)) not in left
    ]
    return {
        "path": after.path,
        "order": after.order,
        "kind": after.kind,
        "times": [round(float(x), 5) for x in tt],
        "before": [[round(float(x), 3) for x in bv[:, c]] for c in range(3)],
        "after": [[round(float(x), 3) for x in av[:, c]] for c in range(3)],
        "keys_before": int(before.n_keys),
        "keys_after": int(after.n_keys),
        "dropped": [round(float(x), 5) for x in dropped[:2000]],
        "removed": removed[:500],
    }


def clip_review(before: Clip, after: Clip, errors: dict[str, float], count: int = WORST_TRACKS) -> list[dict]:
    """:func:`track_review` of the ``count`` tracks with the largest ``errors`` (path -> degrees, the
    written file's figures), worst first; tracks missing from either clip or without keys skipped."""
    b = {t.path: t for t in before.tracks}
    a = {t.path: t for t in after.tracks}
    ranked = sorted(errors, key=lambda p: -errors[p])
    out = []
    for path in ranked:
        if len(out) >= count:
            break
        tb, ta = b.get(path), a.get(path)
        if tb is None or ta is None or not tb.n_keys or not ta.n_keys:
            continue
        out.append(dict(track_review(tb, ta), max_error=float(errors[path])))
    return out
