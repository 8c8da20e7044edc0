"""Long tracks are reduced as windows and in chunks of keys (issue 26), and keep the certified bound."""

from __future__ import annotations

import numpy as np
import pytest

import curveeditor.engine.reduce as reduce_mod
from curveeditor.engine.clip import RotationTrack
from curveeditor.engine.curves import TangentMode, tangent_mode_sides
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.reduce import reduce_tracks
from curveeditor.engine.tangents import make_curve


def mocap_track(path: str, n: int, rate: float = 120.0, seed: int = 0) -> RotationTrack:
    """``n`` frames of smooth motion with jitter and a fast swing, ZXY Euler degrees."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    v = np.stack(
        [
            40 * np.sin(0.7 * t + seed) + 0.05 * rng.standard_normal(n),
            25 * np.sin(1.3 * t) + 60 * np.exp(-(((t % 30) - 15) ** 2) / 0.02),
            10 * np.sin(0.2 * t) + 0.05 * rng.standard_normal(n),
        ],
        axis=1,
    )
    return RotationTrack(path, "euler", make_curve(t, v, mode="clamped_auto"), order="zxy")


def test_long_track_windows_keep_the_bound_and_cost_few_keys(monkeypatch):
    tracks = [mocap_track(f"J{i}", 20_000, seed=i) for i in range(3)]
    assert tracks[0].n_keys > reduce_mod.WINDOW_KEYS
    windowed = reduce_tracks(tracks, 0.5)
    monkeypatch.setattr(reduce_mod, "WINDOW_KEYS", 10**9)
    monkeypatch.setattr(reduce_mod, "CHUNK_KEYS", 10**9)
    whole = reduce_tracks(tracks, 0.5)
    for src, red, ref in zip(tracks, windowed, whole, strict=True):
        d = diff_tracks(src, red)
        assert d.max_error <= 0.5  # certified on every window, so on the stitched track
        assert red.curve.start == src.curve.start and red.curve.end == src.curve.end
        # One forced key per window boundary (2 here), and a little of the greedy's freedom near them.
        assert red.n_keys <= ref.n_keys * 1.02 + 4
        assert red.n_keys < src.n_keys / 10
        left, right, _ = tangent_mode_sides(red.curve.tangent_mode)
        assert np.all(left == TangentMode.FREE) and np.all(right == TangentMode.FREE)
        # The window boundaries are kept keys, with the in side of the window before and the out
        # side of the one after: the stitched curve plays each window's segments exactly.
        step = 8192 - 1  # (WINDOW_KEYS, patched above for the reference run)
        for b in range(step, src.n_keys - 1, step):
            assert np.any(red.curve.time == src.curve.time[b])


def test_chunks_do_not_change_results(monkeypatch):
    """Tracks of one group reduced in chunks of keys give what one lockstep group gives (up to the
    rounding of the joined track's shifted key times, :func:`reduce._join`: a key or two)."""
    tracks = [mocap_track(f"J{i}", 3_000, seed=i) for i in range(6)]
    monkeypatch.setattr(reduce_mod, "CHUNK_KEYS", 7_000)
    chunked = reduce_tracks(tracks, 0.3)
    monkeypatch.setattr(reduce_mod, "CHUNK_KEYS", 10**9)
    together = reduce_tracks(tracks, 0.3)
    for src, a, b in zip(tracks, chunked, together, strict=True):
        assert abs(a.n_keys - b.n_keys) <= 2
        assert diff_tracks(src, a).max_error <= 0.3


@pytest.mark.parametrize("n", [8192, 8193, 8194, 16383, 16384])
def test_window_cuts_at_the_edges(n):
    track = mocap_track("J", n)
    parts = reduce_mod._windows(track)
    assert parts[0].curve.start == track.curve.start and parts[-1].curve.end == track.curve.end
    assert all(p.n_keys >= 3 for p in parts)
    assert sum(p.n_keys for p in parts) == n + len(parts) - 1  # neighbours share one key
    stitched = reduce_mod._stitch(track, parts)
    assert stitched.curve.equals(track.curve)


def test_kept_key_estimate_is_exact_up_to_its_sample_and_close_past_it():
    """The convert hint's figure: the whole reduction up to ``sample_keys``, past it an even sample of
    the windows (every k-th, over joints and time) scaled to all keys, near the whole reduction."""
    from curveeditor.engine.reduce import kept_key_estimate

    tracks = [mocap_track(f"J{i}", 30_000, seed=i) for i in range(4)]
    tracks.append(RotationTrack("Two", "euler", make_curve([0.0, 1.0], np.zeros((2, 3))), order="zxy"))
    exact = sum(t.n_keys for t in reduce_tracks(tracks, 0.5))
    assert kept_key_estimate(tracks, 0.5, sample_keys=200_000) == (exact, 1.0)
    kept, share = kept_key_estimate(tracks, 0.5, sample_keys=30_000)
    assert 0.15 < share < 0.35  # 4 of the 16 windows
    assert abs(kept - exact) <= 0.1 * exact


def test_chunks_go_to_map_chunks_largest_first(monkeypatch):
    """``map_chunks`` gets the chunks largest first (a side that takes the next one as it frees up
    then ends on a small one), and the results are those of the serial run."""
    tracks = [mocap_track(f"J{i}", n, seed=i) for i, n in enumerate([900, 3_000, 400, 3_000, 1_500])]
    monkeypatch.setattr(reduce_mod, "CHUNK_KEYS", 3_500)  # chunks [900], [3000, 400], [3000], [1500]
    seen = []

    def record(fn, jobs):
        seen.extend(sum(tracks[j].n_keys for j in chunk) for _, chunk in jobs)  # (a piece = a track)
        return [fn(job) for job in jobs]

    serial = reduce_tracks(tracks, 0.5)
    got = reduce_tracks(tracks, 0.5, map_chunks=record)
    assert seen == [3_400, 3_000, 1_500, 900]
    assert all(a.curve.equals(b.curve) for a, b in zip(serial, got, strict=True))
