"""Retiming keys keeps every tangent mode and what Free keys play between keys (their tangents scale
with time inside a scaled block); Auto-rule keys follow their rule."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack, played
from curveeditor.engine.curves import Curve, TangentMode, evaluate, tangent_mode_bits
from curveeditor.engine.retime import map_times, retime_clip, retime_track
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.tangents import make_curve, recompute_tangents


def _track(kind="euler", weighted=False, free=True):
    """12 keys; ``free``: Free Smooth keys (mode 0) with key 7's in side stepped (broken Free | Free),
    else the Auto-rule modes ``make_curve`` gives (Euler ClampedAuto, quaternion Auto)."""
    rng = np.random.default_rng(3)
    t = np.arange(12) / 30.0 * 3
    if kind == "euler":
        c = make_curve(t, rng.normal(0, 40, (12, 3)))
    else:
        q = rng.normal(0, 1, (12, 4))
        q[:, 3] += 3
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        c = make_curve(t, q, mode="auto")
    if weighted:
        wm = np.zeros((12, c.n_components), dtype=int)
        wm[4] = 3
        c = c.with_keys(weighted_mode=wm, in_weight=0.6, out_weight=0.15)
    if free:
        ins = np.array(c.in_slope)
        ins[7] = np.inf  # a stepped interval stays stepped
        tm = np.zeros((12, c.n_components), dtype=np.int64)
        tm[7] = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True)
        c = c.with_keys(in_slope=ins, tangent_mode=tm)
    return RotationTrack("A", kind, c)


def _same_shape(old: Curve, new: Curve, intervals=None):
    s = np.linspace(0, 1, 41)[1:-1]
    for i in range(old.n_keys - 1) if intervals is None else intervals:
        to = old.time[i] + s * (old.time[i + 1] - old.time[i])
        tn = new.time[i] + s * (new.time[i + 1] - new.time[i])
        np.testing.assert_allclose(evaluate(new, tn), evaluate(old, to), atol=1e-9, err_msg=f"interval {i}")


def _stretched(tr):
    t = np.array(tr.times)
    sel = slice(3, 9)
    t[sel] = map_times(t[sel], scale=1.7, pivot=t[3])
    t[9:] += t[8] - tr.times[8]  # keep the rest after the stretched block
    return t


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
@pytest.mark.parametrize("weighted", [False, True])
def test_scaling_selected_free_keys_keeps_each_interval_shape(kind, weighted):
    tr = _track(kind, weighted)
    out = retime_track(tr, _stretched(tr), moved=range(3, 12))
    # Inside the block (intervals 3..7) and away from it the shape is kept. A Free Smooth key at the
    # block's edge (3, 8) scales both its sides by the block's factor (Unity's box scale), so the
    # interval beside the block (2, 8) plays its keys' slopes at the new pace, unbroken.
    _same_shape(tr.curve, out.curve, intervals=[0, 1, 3, 4, 5, 6, 7, 9, 10])
    np.testing.assert_allclose(out.curve.out_slope[3], tr.curve.out_slope[3] / 1.7, rtol=1e-12)
    np.testing.assert_allclose(out.curve.in_slope[3], tr.curve.in_slope[3] / 1.7, rtol=1e-12)
    np.testing.assert_array_equal(out.curve.out_slope[:3], tr.curve.out_slope[:3])
    assert np.isinf(out.curve.in_slope[7]).all()
    np.testing.assert_array_equal(out.curve.tangent_mode, tr.curve.tangent_mode)  # modes kept
    assert np.array_equal(out.curve.in_slope, out.curve.out_slope, equal_nan=True) is False  # key 7
    unbroken = np.ones(12, dtype=bool)
    unbroken[7] = False
    np.testing.assert_array_equal(out.curve.in_slope[unbroken], out.curve.out_slope[unbroken])
    # What Unity plays at corresponding instants is the same rotation.
    s = 0.37
    to = tr.times[4] + s * (tr.times[5] - tr.times[4])
    tn = out.times[4] + s * (out.times[5] - out.times[4])
    assert geodesic_angle(played(out, [tn]), played(tr, [to]))[0] < 1e-9


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_scaling_auto_keys_keeps_their_modes_and_recomputes_them(kind):
    """Auto-rule keys stay in their mode (Unity): the keys of changed intervals get the rule's slopes,
    the rest keep theirs bit for bit, and inside the uniformly scaled block the shape is kept."""
    tr = _track(kind, free=False)
    out = retime_track(tr, _stretched(tr), moved=range(3, 12))
    c, n = tr.curve, out.curve
    np.testing.assert_array_equal(n.tangent_mode, c.tangent_mode)
    rule = recompute_tangents(n)  # every key by its mode
    touched = np.zeros(12, dtype=bool)
    touched[3:9] = True  # the ends of the changed intervals 3..8
    np.testing.assert_array_equal(n.in_slope[touched], rule.in_slope[touched])
    np.testing.assert_array_equal(n.out_slope[touched], rule.out_slope[touched])
    np.testing.assert_array_equal(n.in_slope[~touched], c.in_slope[~touched])
    np.testing.assert_array_equal(n.out_slope[~touched], c.out_slope[~touched])
    _same_shape(c, n, intervals=[0, 1, 4, 5, 6, 9, 10])  # homogeneous rules inside the block


def test_retime_clip_moves_snapped_and_refuses_overlap():
    tr = _track()
    other = RotationTrack("B", "euler", make_curve(np.arange(5) / 30.0, np.zeros((5, 3))))
    clip = Clip("c", 30.0, (tr, other))
    out = retime_clip(clip, {"A": {10, 11}}, offset=0.051)  # 1.53 frames -> 2 frames
    new = out.track("A").curve
    np.testing.assert_allclose(new.time[10:], tr.times[10:] + 2 / 30.0)
    assert out.track("B") is other
    _same_shape(tr.curve, new, intervals=[*range(9), 10])  # all but the stretched interval 9..10
    # Free keys keep their slopes (Unity moves keys without touching Free tangents); modes kept
    np.testing.assert_array_equal(new.in_slope, tr.curve.in_slope)
    np.testing.assert_array_equal(new.out_slope, tr.curve.out_slope)
    np.testing.assert_array_equal(new.tangent_mode, tr.curve.tangent_mode)
    with pytest.raises(ValueError, match="track 'A': keys would overlap"):
        retime_clip(clip, {"A": {5}}, offset=-0.5)
    # Scaling about the cursor (pivot) by 2 doubles the distances from it.
    out = retime_clip(clip, {"B": {0, 1, 2, 3, 4}}, scale=2.0, pivot=0.0)
    np.testing.assert_allclose(out.track("B").times, np.arange(5) * 2 / 30.0)


def test_retime_over_overwrites_covered_keys_and_keeps_the_moved_runs_shape():
    from curveeditor.engine.retime import retime_over

    t = np.arange(30) / 30.0  # a key per frame (mocap)
    rng = np.random.default_rng(4)
    tr = RotationTrack("A", "euler", make_curve(t, rng.normal(0, 10, (30, 3)).cumsum(axis=0)))
    clip = Clip("c", 30.0, (tr,))
    out, keys = retime_over(clip, {"A": set(range(10, 15))}, offset=3 / 30.0)
    new = out.track("A")
    # frames 10..14 moved to 13..17: the old 13..17 are overwritten, 10..12 are now empty
    np.testing.assert_allclose(new.times * 30, [*range(10), *range(13, 30)])
    assert keys == {"A": set(range(10, 15))}
    np.testing.assert_allclose(new.curve.value[10:15], tr.curve.value[10:15])
    # ClampedAuto kept on every key; the run's end keys (10, 14) and their new neighbours (9, 15)
    # take the rule's slopes, the inside of the run (11..13) and the rest keep theirs bit for bit
    np.testing.assert_array_equal(new.curve.tangent_mode, 136)
    kept = np.ones(new.n_keys, dtype=bool)
    kept[[9, 10, 14, 15]] = False
    old_i = np.r_[0:10, 10:15, 18:30]
    np.testing.assert_array_equal(new.curve.in_slope[kept], tr.curve.in_slope[old_i][kept])
    rule = recompute_tangents(new.curve)
    np.testing.assert_array_equal(new.curve.in_slope[~kept], rule.in_slope[~kept])
    _same_shape(tr.curve.select(slice(10, 15)), new.curve.select(slice(10, 15)), intervals=[1, 2])
    back, keys = retime_over(clip, {"A": set(range(10, 15))}, offset=0.0)
    assert back.track("A").curve.equals(tr.curve)


def _mocap_clip(n_tracks=6, n=40):
    """Tracks keyed on every frame at the same times (a BVH), Euler and quaternion, one weighted."""
    t = np.arange(n) / 30.0
    rng = np.random.default_rng(8)
    tracks = []
    for i in range(n_tracks):
        if i % 3 == 2:
            q = rng.normal(0, 1, (n, 4))
            q[:, 3] += 4
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            c = make_curve(t, q, mode="auto")
            tracks.append(RotationTrack(f"Q{i}", "quaternion", c))
        else:
            c = make_curve(t, rng.normal(0, 10, (n, 3)).cumsum(axis=0))
            if i == 1:
                wm = np.zeros((n, 3), dtype=int)
                wm[12] = 3
                c = c.with_keys(weighted_mode=wm, in_weight=0.5, out_weight=0.2)
            tracks.append(RotationTrack(f"E{i}", "euler", c))
    return Clip("mocap", 30.0, tuple(tracks))


@pytest.mark.parametrize(
    "offset, scale, pivot", [(3 / 30.0, 1.0, 0.0), (-4 / 30.0, 1.0, 0.0), (0.0, 1.6, 0.4), (0.1, 2.0, 0.5)]
)
def test_retime_over_in_groups_equals_one_track_at_a_time(offset, scale, pivot):
    """Tracks sharing times and selection are retimed as one stacked group: the same curves, key for
    key, as retiming each track alone (its own clip)."""
    from curveeditor.engine.retime import group_selection, retime_over

    clip = _mocap_clip()
    keys = {t.path: set(range(10, 20)) for t in clip.tracks}
    keys["E4"] = {8, 9, 10, 30, 31}  # another selection: its own group
    groups = group_selection(clip, keys)
    assert sorted(len(g.tracks) for g in groups) == [1, 2, 3]  # E0 E1 | Q2 Q5 | E4 (widths differ)
    out, new_keys = retime_over(clip, keys, offset, scale, pivot, groups=groups)
    for tr in clip.tracks:
        alone, k_alone = retime_over(Clip("one", 30.0, (tr,)), {tr.path: keys[tr.path]}, offset, scale, pivot)
        assert out.track(tr.path).curve.equals(alone.track(tr.path).curve), tr.path
        assert new_keys[tr.path] == k_alone[tr.path]
    # the plan alone gives the times retime_over writes (the dope sheet's drag preview)
    from curveeditor.engine.retime import retime_plan

    for g in groups:
        _order, new_t = retime_plan(g, offset, scale, pivot, 30.0)
        np.testing.assert_array_equal(new_t, out.track(g.tracks[0].path).times)


def test_retime_over_groups_of_another_clip_are_refused():
    from curveeditor.engine.retime import group_selection, retime_over

    clip = _mocap_clip()
    keys = {"E0": {5, 6}}
    groups = group_selection(clip, keys)
    e0 = clip.track("E0")
    other = clip.with_track(e0.with_curve(e0.curve.with_keys(value=e0.curve.value + 1.0)))
    with pytest.raises(ValueError, match="another clip"):
        retime_over(other, keys, 1 / 30.0, groups=groups)
