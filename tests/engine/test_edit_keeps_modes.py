"""Every key edit of the engine keeps the tangent mode of every key it does not name, and the slopes
of every key whose neighbourhood it does not change, bit for bit (issue 20, "no silent side effects";
the rules: ``tests/edit_invariants.py``). Run on real clips (a Unity-written ClampedAuto ``.anim``
whose slopes are Unity's own, not our rule's, and a BVH rig) and on a generated clip holding every
mode. The editor's commands are checked through the window in ``tests/app/test_edit_side_effects.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine import edit as ed
from curveeditor.engine.curves import evaluate
from curveeditor.engine.recipe import Recipe
from curveeditor.engine.retime import retime_clip, retime_over, scale_key_values
from tests.conftest import corpus_files
from tests.edit_invariants import check_clip_edit, check_track_edit, key_map, mixed_mode_clip

ANIM = corpus_files("anim", "*EulerAnimation.anim")
BVH = corpus_files("bvh", "*cmu_12_01_walk.bvh")
CLIPS = ["mixed", "anim", "bvh"]


@pytest.fixture(params=CLIPS)
def clip(request):
    if request.param == "mixed":
        return mixed_mode_clip()
    files = ANIM if request.param == "anim" else BVH
    if not files:
        pytest.skip("corpus clip absent")
    from curveeditor.io import read_clip

    return read_clip(files[0])


def _mid(tr, width=1):
    """Key indices in the middle of ``tr`` (``width`` of them)."""
    i = tr.n_keys // 2
    return list(range(i, min(i + width, tr.n_keys - 1)))


def _tracks(clip):
    return clip.tracks[:3]


def test_the_unity_corpus_clip_has_slopes_our_rule_does_not_give():
    """Why the .anim is the sharp test: recomputing a key that did not change would show."""
    if not ANIM:
        pytest.skip("corpus clip absent")
    from curveeditor.engine.tangents import recompute_tangents
    from curveeditor.io import read_clip

    tr = read_clip(ANIM[0]).tracks[0]
    assert np.all(tr.curve.tangent_mode == 136)
    assert np.abs(recompute_tangents(tr.curve).in_slope - tr.curve.in_slope).max() > 1.0


def test_move_keys_in_time_and_value(clip):
    for tr in _tracks(clip):
        idx = _mid(tr)
        if tr.n_keys < 4:
            idx = [1]
        dt = 0.4 * float(np.min(np.diff(tr.times)))
        for d_t, ch, dv in ((dt, None, 0.0), (0.0, 0, 7.5), (dt, 2, -3.0), (0.0, 1, 2.0)):
            check_track_edit(tr, ed.move_keys(tr, idx, d_t, ch, dv), what=f"move dt={d_t} ch={ch}")
        if tr.kind == "quaternion":
            check_track_edit(tr, ed.move_keys(tr, idx, 0.0, 4, 0.05), what="raw quaternion y")


def test_set_key_time_and_value(clip):
    for tr in _tracks(clip):
        i = _mid(tr)[0] if tr.n_keys > 2 else 0
        if 0 < i < tr.n_keys - 1:
            t = 0.5 * float(tr.times[i] + tr.times[i + 1])
            check_track_edit(tr, ed.set_key(tr, i, time=t), what="set time")
        check_track_edit(tr, ed.set_key(tr, i, channel=1, value=33.0), what="set value")


def test_set_slope_and_weight_change_only_that_key_component(clip):
    for tr in _tracks(clip):
        i = _mid(tr)[0]
        new = ed.set_slope(tr, i, 0, "out", 12.5)
        check_track_edit(tr, new, named=[i], what="set slope")
        # the key's other components are not named: they keep everything
        c, n = tr.curve, new.curve
        for f in ("tangent_mode", "in_slope", "out_slope"):
            np.testing.assert_array_equal(getattr(n, f)[i, 1:], getattr(c, f)[i, 1:])
        check_track_edit(tr, ed.set_weight(tr, i, 0, "in", 0.5), what="set weight", named=[i])


def test_delete_keys(clip):
    for tr in _tracks(clip):
        if tr.n_keys < 4:
            continue
        idx = _mid(tr, 2)
        new = ed.delete_keys(tr, idx)
        check_track_edit(tr, new, removed=idx, what="delete")
        first = ed.delete_keys(tr, [0])
        check_track_edit(tr, first, removed=[0], what="delete first")


def test_paste_and_insert_keys(clip):
    for tr in _tracks(clip):
        keys = ed.copy_keys(tr, _mid(tr, 2))
        # paste between keys (no clash) and onto existing keys (replacing them)
        gap = float(tr.times[1] - tr.times[0])
        for at, clash in ((float(tr.times[0]) + 0.5 * gap, False), (float(tr.times[0]), True)):
            new, idx = ed.paste_keys(tr, keys, at)
            removed = []
            if clash:
                d = np.abs(tr.curve.time[:, None] - (keys.time + at)[None, :])
                removed = list(np.nonzero(np.any(d < 1e-6, axis=1))[0])
            check_track_edit(tr, new, added=idx, removed=removed, what=f"paste at {at}")
        t = 0.5 * float(tr.times[0] + tr.times[1])
        new, i = ed.insert_key(tr, t)
        check_track_edit(tr, new, added=[i], what="insert key")
        np.testing.assert_allclose(new.curve.value[i], evaluate(tr.curve, [t])[0], atol=1e-9)


@pytest.mark.parametrize("preset", ed.TANGENT_PRESETS)
def test_tangent_presets_change_only_the_selected_keys(clip, preset):
    for tr in _tracks(clip):
        idx = _mid(tr, 2)
        check_track_edit(tr, ed.set_tangent_preset(tr, idx, preset), named=idx, what=preset)


@pytest.mark.parametrize("side", ["in", "out", "both"])
@pytest.mark.parametrize("mode", ed.SIDE_MODES)
def test_side_modes_change_only_the_selected_keys(clip, side, mode):
    for tr in _tracks(clip):
        idx = _mid(tr, 2)
        check_track_edit(tr, ed.set_side_mode(tr, idx, side, mode), named=idx, what=f"{side} {mode}")


def _room(tr, rate):
    """A run of keys with a free frame after it (every key of a BVH is on a frame: its last keys)."""
    gaps = np.diff(np.round(np.asarray(tr.times) * rate))
    free = np.nonzero(gaps > 1)[0]
    if free.size:
        i = int(free[free.size // 2])
        return [i - 1, i] if i > 0 else [i]
    return [tr.n_keys - 2, tr.n_keys - 1]  # at the end: nothing after them


def test_nudge_one_frame_keeps_every_mode(clip):
    """The arrow-key nudge (``retime_clip`` offset): before issue 20 it made the key Broken Free and
    its neighbours Free Smooth."""
    sel = {tr.path: set(_room(tr, clip.frame_rate)) for tr in _tracks(clip)}
    new = retime_clip(clip, sel, offset=1.0 / clip.frame_rate)
    check_clip_edit(clip, new, {p: {} for p in sel}, what="nudge")


def test_time_scale_keeps_every_mode(clip):
    """The S-scale's time part (``retime_clip`` scale about the selection's centre, snapped)."""
    for tr in _tracks(clip):
        idx, scale = (_mid(tr, 3) if tr.n_keys > 8 else [1, 2]), 0.6
        if tr.n_keys > 100:  # a key per frame: stretch the last keys, with nothing after them
            idx, scale = list(range(tr.n_keys - 4, tr.n_keys)), 2.0
        pivot = float(tr.times[min(idx)])
        new = retime_clip(clip, {tr.path: set(idx)}, scale=scale, pivot=pivot, snap=True)
        check_clip_edit(clip, new, {tr.path: {}}, scaled_free=idx, what=f"time scale {scale}")


def test_value_scale_keeps_every_mode(clip):
    for tr in _tracks(clip):
        idx = _mid(tr, 3)
        for ch in (0, 2):
            # the selected keys' slopes on that channel scale with the values (the curve is scaled)
            new = scale_key_values(tr, idx, ch, 1.6, 10.0, None)
            check_track_edit(tr, new, scaled_free=idx, what=f"value scale ch {ch}")
        new = scale_key_values(tr, idx, 1, 0.5, 0.0, 1.0)
        check_track_edit(tr, new, scaled_free=idx, what="value scale snapped")


def test_dope_sheet_retime_over_keeps_every_mode(clip):
    """The dope sheet's drag and scale (``retime_over``): moved keys overwrite what they land on."""
    tracks = _tracks(clip)
    for offset, scale in ((2.0, 1.0), (0.0, 1.5)):
        sel = {tr.path: set(_mid(tr, 3)) for tr in tracks}
        pivot = float(tracks[0].times[min(sel[tracks[0].path])])
        new, moved = retime_over(clip, sel, offset / clip.frame_rate, scale, pivot)
        from curveeditor.engine.retime import group_selection, retime_plan

        edited = {}
        for g in group_selection(clip, sel):
            order, _t = retime_plan(g, offset / clip.frame_rate, scale, pivot, clip.frame_rate)
            for tr in g.tracks:
                scaled = moved[tr.path] if scale != 1.0 else ()
                edited[tr.path] = {"kmap": np.asarray(order), "scaled_free": scaled}
        check_clip_edit(clip, new, edited, what=f"retime_over {offset} {scale}")


def test_recipe_on_a_range_keeps_the_keys_outside_it(clip):
    """Run recipe on range: the keys before and after the range are the source's, modes and slopes
    bit for bit (values after it may be whole turns apart, the same poses)."""
    from curveeditor.engine.range_ops import run_recipe_on_range

    tr = max(_tracks(clip), key=lambda t: t.n_keys)
    if tr.n_keys < 6:
        pytest.skip("too few keys for a range")
    t = np.asarray(tr.times)
    t0, t1 = float(t[1] + 0.3 * (t[2] - t[1])), float(t[-3] + 0.5 * (t[-2] - t[-3]))
    res = run_recipe_on_range(
        clip, Recipe.of({"op": "smooth", "method": "gaussian", "sigma": 0.05}), t0, t1, [tr.path]
    )
    new = res.clip.track(tr.path)
    c, n = tr.curve, new.curve
    before, after = c.time < t0, c.time > t1
    nb, na = int(before.sum()), int(after.sum())
    for f in ("tangent_mode", "weighted_mode", "in_slope", "out_slope", "in_weight", "out_weight"):
        np.testing.assert_array_equal(getattr(n, f)[:nb], getattr(c, f)[before], err_msg=f)
        np.testing.assert_array_equal(getattr(n, f)[n.n_keys - na :], getattr(c, f)[after], err_msg=f)
    np.testing.assert_array_equal(n.value[:nb], c.value[before])
    turns = (n.value[n.n_keys - na :] - c.value[after]) / 360.0
    np.testing.assert_array_equal(turns, np.round(turns))
    for other in clip.tracks:
        if other.path != tr.path:
            assert res.clip.track(other.path) is other


def test_key_map_matches_counts():
    assert key_map(5, 4, removed=[2]).tolist() == [0, 1, 3, 4]
    assert key_map(3, 4, added=[1]).tolist() == [0, -1, 1, 2]
