"""The reduction bound on real clips (issue 23): never exceeded, at every frame and between keys, in
memory and in the written ``.anim`` read back."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine._diff_bound import _Piecewise
from curveeditor.engine._reduce_certify import failing_segments
from curveeditor.engine.clip import key_quaternions, played
from curveeditor.engine.recipe import Recipe, run_recipe
from curveeditor.engine.reduce import reduce_tracks
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.io import read_clip, write_checked
from curveeditor.io.verify import FLOAT32_SLACK_DEG
from tests.conftest import corpus_files

BVHS = corpus_files("bvh", "*.bvh")
ANIMS = sorted(corpus_files("anim", "*.anim"), key=lambda p: -p.stat().st_size)[:3]
BOUND = 0.5


def _frames(clip) -> np.ndarray:
    return (
        np.arange(round(clip.start * clip.frame_rate), round(clip.end * clip.frame_rate) + 1)
        / clip.frame_rate
    )


def _between(source, reduced, per: int = 16) -> np.ndarray:
    """``per`` samples in every source key interval, keys included."""
    t = source.times
    if t.shape[0] < 2:
        return t
    u = np.arange(per) / per
    return np.concatenate([(t[:-1, None] + np.diff(t)[:, None] * u).ravel(), t[-1:]])


def _proven(source, reduced, bound: float) -> bool:
    """The segment proof the reducer uses, over the whole track (one segment from the first to the
    last source key; a one-key result as the flat two-key curve it plays)."""
    if reduced.n_keys < 2:
        c = reduced.curve
        two = c.with_keys(
            time=source.times[[0, -1]],
            value=np.repeat(c.value, 2, axis=0),
            in_slope=np.zeros((2, c.value.shape[1])),
            out_slope=np.zeros((2, c.value.shape[1])),
            in_weight=np.full((2, c.value.shape[1]), 1 / 3),
            out_weight=np.full((2, c.value.shape[1]), 1 / 3),
            weighted_mode=np.zeros((2, c.value.shape[1]), dtype=int),
            tangent_mode=np.zeros((2, c.value.shape[1]), dtype=int),
        )
        from dataclasses import replace

        reduced = replace(reduced, curve=two)
    n = source.n_keys
    fail = failing_segments(source, reduced, _Piecewise(source), np.array([0]), np.array([n - 1]), bound)
    return not bool(fail[0])


def _check_in_memory(clip, reduced):
    frames = _frames(clip)
    for s, r in zip(clip.tracks, reduced, strict=True):
        if s.n_keys < 3:
            continue
        assert r.n_keys <= s.n_keys
        at_keys = geodesic_angle(played(r, s.times), key_quaternions(s)).max()
        assert at_keys <= BOUND, s.path
        t = np.union1d(frames[(frames >= s.times[0]) & (frames <= s.times[-1])], _between(s, r))
        assert geodesic_angle(played(r, t), played(s, t)).max() <= BOUND, s.path
        if not np.any(s.curve.weighted_mode):
            assert _proven(s, r, BOUND), s.path


@pytest.mark.parametrize("path", BVHS, ids=lambda p: p.name[:48])
def test_bvh_reduction_within_the_bound_everywhere(path, tmp_path):
    clip = read_clip(path)
    reduced = reduce_tracks(list(clip.tracks), BOUND)
    assert sum(r.n_keys for r in reduced) < sum(t.n_keys for t in clip.tracks)
    _check_in_memory(clip, reduced)
    # The written .anim (own order) as read back, at every frame (float32 storage aside)
    res = run_recipe(clip, Recipe.of({"op": "reduce", "max_error": BOUND}), diffs=False)
    write_checked(res.clip, tmp_path / "r.anim")
    back = read_clip(tmp_path / "r.anim")
    for s in clip.tracks:
        w = back.track(s.path)
        err = geodesic_angle(played(w, s.times), key_quaternions(s)).max()
        assert err <= BOUND + FLOAT32_SLACK_DEG, s.path


@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:48])
def test_anim_reduction_within_the_bound_everywhere(path, tmp_path):
    clip = read_clip(path)
    reduced = reduce_tracks(list(clip.tracks), BOUND)
    _check_in_memory(clip, reduced)
    res = run_recipe(clip, Recipe.of({"op": "reduce", "max_error": BOUND}), diffs=False)
    write_checked(res.clip, tmp_path / "r.anim")
    back = read_clip(tmp_path / "r.anim")
    frames = _frames(clip)
    for s in clip.tracks:
        w = back.track(s.path)
        t = np.union1d(frames, _between(s, w, 8))
        t = t[(t >= s.times[0]) & (t <= s.times[-1])]
        assert geodesic_angle(played(w, t), played(s, t)).max() <= BOUND + FLOAT32_SLACK_DEG, s.path


PER_CHANNEL = [p for p in BVHS if any(k in p.name for k in ("Elephant", "cmu_12_01", "bvh_test3"))]


@pytest.mark.parametrize("path", PER_CHANNEL, ids=lambda p: p.name[:48])
def test_channels_keyed_independently_within_the_bound(path, tmp_path):
    """``per_channel``: each Euler channel keeps its own keys (the curve holds their union and
    ``channel_keys``); fewer keys per channel than shared keys, the same bound everywhere, and the
    written .anim's editor curves hold each channel's own keys (read back as such)."""
    clip = read_clip(path)
    shared = reduce_tracks(list(clip.tracks), BOUND)
    split = reduce_tracks(list(clip.tracks), BOUND, channels=True)
    n_shared = sum(r.curve.channel_key_count() for r in shared)
    n_split = sum(r.curve.channel_key_count() for r in split)
    assert n_split < n_shared
    assert any(r.curve.channel_keys is not None for r in split)
    for s, r in zip(clip.tracks, split, strict=True):
        k = r.curve.channel_keys
        if k is not None:  # the split points lie on their channel's cubic: the channel alone plays the same
            for c in range(3):
                t = _between(s, r, 8)
                own = r.curve.channel(c)
                from curveeditor.engine.curves import evaluate

                assert np.abs(evaluate(own, t)[:, 0] - evaluate(r.curve, t)[:, c]).max() < 1e-6
    _check_in_memory(clip, split)
    res = run_recipe(clip, Recipe.of({"op": "reduce", "max_error": BOUND, "per_channel": True}), diffs=False)
    write_checked(res.clip, tmp_path / "r.anim")
    back = read_clip(tmp_path / "r.anim")
    assert sum(t.curve.channel_key_count() for t in back.tracks) == sum(
        t.curve.channel_key_count() for t in res.clip.tracks
    )
    text = (tmp_path / "r.anim").read_text()
    editor = text[text.index("m_EditorCurves:") : text.index("m_EulerEditorCurves:")]
    runtime = text[text.index("m_EulerCurves:") : text.index("m_PositionCurves:")]
    assert editor.count("localEulerAnglesRaw") == 3 * runtime.count("path:")
    for s in clip.tracks:
        err = geodesic_angle(played(back.track(s.path), s.times), key_quaternions(s)).max()
        assert err <= BOUND + FLOAT32_SLACK_DEG, s.path
