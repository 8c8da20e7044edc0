"""The reduction bound on real clips (issue 23): never exceeded, at every frame and between keys, in
memory and in the written ``.anim`` read back."""

from __future__ import annotations

import re

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


#: The corpus quaternion clips with editor curves m_LocalRotation.x/y/z/w (one track each).
QUAT_EDITOR_ANIMS = [
    p for p in corpus_files("anim", "*.anim") if any(k in p.name for k in ("CurveFitTest", "SpaceShipAnim"))
]


def _quaternion_clip_from(bvh_path):
    """A corpus BVH's joints as quaternion tracks (their key poses, hemisphere-continuous, Unity's
    auto slopes), as a quaternion clip made in code would hold them."""
    from dataclasses import replace

    from curveeditor.engine.clip import RotationTrack
    from curveeditor.engine.curves import Curve
    from curveeditor.engine.rotations import hemisphere_continuous

    clip = read_clip(bvh_path)
    tracks = []
    for t in clip.tracks:
        q = hemisphere_continuous(key_quaternions(t))
        slope = np.gradient(q, t.times, axis=0)
        tracks.append(RotationTrack(t.path, "quaternion", Curve.make(t.times, q, slope, slope)))
    return replace(clip, tracks=tuple(tracks))


def _check_quaternion_split(clip, tmp_path, name: str):
    from curveeditor.engine.clip import EULER
    from curveeditor.engine.curves import evaluate

    quats = [t for t in clip.tracks if t.kind != EULER]
    shared = reduce_tracks(list(clip.tracks), BOUND)
    split = reduce_tracks(list(clip.tracks), BOUND, channels=True)
    q_shared = sum(r.curve.channel_key_count() for r in shared if r.kind != EULER)
    q_split = sum(r.curve.channel_key_count() for r in split if r.kind != EULER)
    assert q_split < 0.9 * q_shared
    keyed = [r for r in split if r.kind != EULER and r.curve.channel_keys is not None]
    assert keyed
    for r in keyed:  # the split points lie on their component's cubic: the component alone plays the same
        t = np.linspace(r.times[0], r.times[-1], 400)
        for c in range(4):
            assert np.abs(evaluate(r.curve.channel(c), t)[:, 0] - evaluate(r.curve, t)[:, c]).max() < 1e-9
    _check_in_memory(clip, split)
    res = run_recipe(clip, Recipe.of({"op": "reduce", "max_error": BOUND, "per_channel": True}), diffs=False)
    out = tmp_path / name
    write_checked(res.clip, out)
    back = read_clip(out)
    for r in res.clip.tracks:
        assert back.track(r.path).curve.channel_key_count() == r.curve.channel_key_count(), r.path
    text = out.read_text()
    editor = text[text.index("m_EditorCurves:") : text.index("m_EulerEditorCurves:")]
    blocks = editor.split("  - curve:")[1:]
    q_keys = sum(
        len(re.findall(r"^ +(?:- )?time: ", b, re.M)) for b in blocks if "attribute: m_LocalRotation." in b
    )
    assert q_keys == sum(r.curve.channel_key_count() for r in res.clip.tracks if r.kind != EULER)
    frames = _frames(clip)
    for s in quats:
        w = back.track(s.path)
        t = np.union1d(frames[(frames >= s.times[0]) & (frames <= s.times[-1])], _between(s, w, 8))
        assert geodesic_angle(played(w, t), played(s, t)).max() <= BOUND + FLOAT32_SLACK_DEG, s.path


@pytest.mark.parametrize("path", QUAT_EDITOR_ANIMS, ids=lambda p: p.name[:48])
def test_quaternion_components_keyed_independently_within_the_bound(path, tmp_path):
    """``per_channel`` on a quaternion track with editor curves: each component keeps its own keys
    in its editor curve ``m_LocalRotation.x/y/z/w`` (the runtime ``m_RotationCurves`` curve holds
    their union, each component's split points on its own cubic); fewer keys per channel than
    shared keys, the bound held in memory (at every frame, between keys, proven) and in the file
    read back."""
    _check_quaternion_split(read_clip(path), tmp_path, "r.anim")


@pytest.mark.parametrize("path", PER_CHANNEL[:1], ids=lambda p: p.name[:48])
def test_quaternion_clip_made_in_code_keyed_per_component(path, tmp_path):
    """A whole rig of quaternion tracks (a corpus BVH's poses) written to a new ``.anim``, which has
    editor curves: every joint may key its components apart."""
    _check_quaternion_split(_quaternion_clip_from(path), tmp_path, "q.anim")


@pytest.mark.parametrize("path", [p for p in ANIMS if "Malmaars" in p.name], ids=lambda p: p.name[:48])
def test_per_channel_keys_a_clip_without_editor_curves_apart(path, tmp_path):
    """A quaternion clip saved without editor curves (made in code): ``per_channel`` keys its
    components apart, as the writer gives the clip editor curves to hold them (the runtime curves
    hold their union); fewer channel keys than shared ones, within the bound between keys, and the
    file read back holds the same."""
    clip = read_clip(path)
    assert not any(t.meta.get("separate_channel_keys") is False for t in clip.tracks)
    split = reduce_tracks(list(clip.tracks), BOUND, channels=True)
    assert any(r.curve.channel_keys is not None for r in split)
    shared = reduce_tracks(list(clip.tracks), BOUND)
    assert sum(r.curve.channel_key_count() for r in split) < sum(r.n_keys * 4 for r in shared)
    for src, red in zip(clip.tracks, split, strict=True):
        if red is not src:
            t = _between(src, red, 8)
            assert geodesic_angle(played(red, t), played(src, t)).max() <= BOUND + 1e-6
    from dataclasses import replace

    write_checked(replace(clip, tracks=tuple(split)), tmp_path / "pc.anim")
    back = read_clip(tmp_path / "pc.anim")
    for red in split:
        assert back.track(red.path).curve.channel_key_count() == red.curve.channel_key_count()


@pytest.mark.parametrize("path", [p for p in ANIMS if "Malmaars" in p.name], ids=lambda p: p.name[:48])
def test_writer_names_channel_keys_it_cannot_keep(path, tmp_path):
    """Per-component keys written with only the curves Unity plays (``--no-editor-curves``): the
    runtime curve holds their union, within the bound, and the writer says so, naming the track."""
    from dataclasses import replace

    clip = read_clip(path)
    split = reduce_tracks(list(clip.tracks), BOUND, channels=True)
    keyed = [r for r in split if r.curve.channel_keys is not None]
    assert keyed
    check = write_checked(replace(clip, tracks=tuple(split)), tmp_path / "u.anim", editor_curves=False)
    said = [w for w in check.warnings if "union of their times" in w]
    assert len(said) == len(keyed) and keyed[0].path in said[0]
    back = read_clip(tmp_path / "u.anim")
    r = keyed[0]
    assert back.track(r.path).n_keys == r.n_keys and back.track(r.path).curve.channel_keys is None
    t = _between(clip.track(r.path), r, 8)
    assert (
        geodesic_angle(played(back.track(r.path), t), played(clip.track(r.path), t)).max()
        <= BOUND + FLOAT32_SLACK_DEG
    )
