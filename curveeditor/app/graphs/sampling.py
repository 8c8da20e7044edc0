"""What the graphs draw, sampled once per track object: dense samples of what Unity plays and the
display Euler values at the keys (degrees, seconds), cached by the identity of the immutable track.

All the numbers come from the engine (``engine.display.sample_track`` / ``key_euler``); this module
only chooses the sample times and keeps the results.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from curveeditor.engine import display
from curveeditor.engine.clip import RotationTrack

__all__ = ["Sampled", "SampleCache", "dense_times", "dense_times_of", "normalize_scale", "same_map"]


FULL_BUDGET = 6000
COARSE_BUDGET = 1500  # secondary tracks of a many-track selection (5x less sampling, same keys)


def dense_times(track: RotationTrack, budget: int = FULL_BUDGET) -> np.ndarray:
    """Key times plus evenly spread samples inside every key interval (seconds, sorted).

    Short tracks get up to 32 samples per interval, long ones at least 2, so a 3000-key track is
    drawn from ~6k samples (enough for per-frame keys; sampling is part of every drag step).
    ``budget`` is the sample count aimed at: the secondary tracks of a 60-track selection are drawn
    from ``COARSE_BUDGET`` (sampling 60 CMU tracks at the full budget took 0.6 s of a 1.5 s selection).
    """
    return dense_times_of(np.asarray(track.times, dtype=np.float64), budget)


def dense_times_of(t: np.ndarray, budget: int = FULL_BUDGET) -> np.ndarray:
    """:func:`dense_times` of key times ``t (N,)`` (seconds, sorted)."""
    n = t.shape[0]
    if n == 0:
        return np.zeros(1)
    if n == 1:
        return t.copy()
    per = int(np.clip(budget // max(n - 1, 1), 2, 32))
    frac = np.arange(per) / per
    seg = t[:-1, None] + np.diff(t)[:, None] * frac[None, :]
    return np.concatenate([seg.reshape(-1), t[-1:]])


def normalize_scale(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``values (M, C)``: the centre and factor mapping its range onto [-1, 1]
    (``(v - centre) * factor``). A flat column maps to 0 (factor 1)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return np.zeros(v.shape[1:]), np.ones(v.shape[1:])
    lo, hi = np.nanmin(v, axis=0), np.nanmax(v, axis=0)
    half = 0.5 * (hi - lo)
    factor = np.where(half > 1e-9, 1.0 / np.where(half > 1e-9, half, 1.0), 1.0)
    return 0.5 * (hi + lo), factor


def same_map(a, b) -> bool:
    """Two Normalize maps (``GraphPanel.display_map``: None or ``(centre, factor)``) are equal."""
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))


@dataclass
class Sampled:
    track: RotationTrack
    samples: display.TrackSamples
    key_times: np.ndarray
    key_values: np.ndarray  # (N, 3) display Euler at keys
    partial: bool = False  # samples cover only ``window`` (a drag in progress)
    window: tuple[float, float] | None = None
    coarse: bool = False  # sampled at COARSE_BUDGET
    derived: bool = False  # spliced from an earlier state of the track (a drag step)


class SampleCache:
    """Samples per track object (identity), LRU-bounded (room for every drawn track of a 60-track
    selection plus their previews and originals).

    ``get(track)`` samples the whole track; ``get(track, window=(t0, t1))`` is a drag in progress:
    coarse samples (``COARSE_BUDGET``) of the whole track, so that the next step can splice into
    them (of the visible part only for a track of one key); the end of the drag samples the whole
    track fully. ``keys(track)`` gives the key arrays without sampling anything.

    An edited track (a new object of a cached track's path, e.g. a key drag step) is sampled by
    splicing: ``display.resample_edited`` re-samples only around the keys that changed, bit-equal
    to sampling it whole (``resplices`` counts these). On the Gangnam BVH (742 keys) a drag step
    sampled a coarse window in ~0.9 ms, the splice takes ~0.35 ms; the drag's end splices the
    final track into the full samples of the track before the drag (~0.4 ms instead of ~1.6 ms).
    Each density splices from the last entry of its own density and path; mid-drag states do not
    pile up in the LRU (a coarse spliced entry replaces the spliced one it came from).
    """

    def __init__(self, size: int = 256):
        self.size = size
        self._d: OrderedDict[int, Sampled] = OrderedDict()
        self._latest: dict[tuple[str, bool], Sampled] = {}  # (path, coarse) -> last whole-track entry
        self.resplices = 0  # tests

    def _hit(self, track: RotationTrack) -> Sampled | None:
        hit = self._d.get(id(track))
        if hit is not None and hit.track is track:
            self._d.move_to_end(id(track))
            return hit
        return None

    def get(
        self, track: RotationTrack, window: tuple[float, float] | None = None, coarse: bool = False
    ) -> Sampled:
        """Samples of ``track``; ``coarse=True`` accepts (or makes) the coarse sampling."""
        # Mid-drag the coarse density: a drag step sampled ~3,000 points of a 742-key mocap track
        # (2 ms of each step) where 2 per key interval draw the same picture at the zoom a key is
        # dragged at (and stroke 4x fewer points); the drag's end samples the whole track fully.
        coarse = coarse or window is not None
        hit = self._hit(track)
        if hit is not None and (not hit.partial or (window is not None and hit.window == window)):
            if coarse or not hit.coarse:
                return hit
        spliced = self._splice(track, coarse)
        if spliced is not None:
            return spliced
        if track.n_keys > 1:
            window = None  # sampled whole, so that the next drag step can splice into it
        times = dense_times(track, COARSE_BUDGET if coarse else FULL_BUDGET)
        if window is not None:
            lo = max(int(np.searchsorted(times, window[0])) - 1, 0)
            hi = int(np.searchsorted(times, window[1], side="right")) + 1
            times = times[lo:hi]
        s = display.sample_track(track, times)
        kt, kv = self.keys(track) if hit is None else (hit.key_times, hit.key_values)
        return self._store(
            Sampled(track, s, kt, kv, partial=window is not None, window=window, coarse=coarse)
        )

    def _splice(self, track: RotationTrack, coarse: bool) -> Sampled | None:
        """``track`` sampled from the last whole-track entry of its path and density, or ``None``."""
        prev = self._latest.get((track.path, coarse))
        if (
            prev is None
            or prev.track is track
            or self._d.get(id(prev.track)) is not prev
            or prev.track.n_keys != track.n_keys
        ):
            return None
        if track.curve.time is prev.track.curve.time:  # a value-only edit shares its key times
            times = prev.samples.times
        else:
            times = dense_times(track, COARSE_BUDGET if coarse else FULL_BUDGET)
        s = display.resample_edited(prev.track, prev.samples, track, times)
        if s is None:
            return None
        self.resplices += 1
        if prev.derived and coarse:  # an intermediate drag state nobody asks for again
            del self._d[id(prev.track)]
        kt, kv = self.keys(track)
        return self._store(Sampled(track, s, kt, kv, coarse=coarse, derived=True))

    def _store(self, out: Sampled) -> Sampled:
        self._d[id(out.track)] = out
        self._d.move_to_end(id(out.track))
        if not out.partial:
            self._latest[(out.track.path, out.coarse)] = out
        while len(self._d) > self.size:
            _k, gone = self._d.popitem(last=False)
            key = (gone.track.path, gone.coarse)
            if self._latest.get(key) is gone:  # not kept alive past the LRU
                del self._latest[key]
        return out

    def keys(self, track: RotationTrack) -> tuple[np.ndarray, np.ndarray]:
        """Key times ``(N,)`` (s) and display Euler at the keys ``(N, 3)`` (deg)."""
        hit = self._hit(track)
        if hit is not None:
            return hit.key_times, hit.key_values
        kv = np.asarray(display.key_euler(track), dtype=np.float64)
        return np.asarray(track.times, dtype=np.float64), kv

    def clear(self) -> None:
        self._d.clear()
        self._latest.clear()
