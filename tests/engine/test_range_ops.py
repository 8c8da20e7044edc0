"""Recipes on a time range of a track blend in and out without a pop (module docstring's rule)."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.range_ops import blend_weight, run_on_range, run_recipe_on_range
from curveeditor.engine.recipe import Recipe, run_recipe_on_track
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, hemisphere_continuous
from curveeditor.engine.tangents import make_curve

RATE = 30.0


def noisy(kind="euler", noise=4.0):
    rng = np.random.default_rng(7)
    t = np.arange(121) / RATE
    e = np.stack([30 * np.sin(2 * t), 50 * np.sin(1.3 * t) + 40 * t, 20 * np.cos(t)], axis=1)
    e += rng.normal(0, noise, e.shape)
    if kind == "quaternion":
        return RotationTrack("A", kind, make_curve(t, hemisphere_continuous(euler_to_quat(e))))
    return RotationTrack("A", kind, make_curve(t, e))


def frame_steps(track, times):
    q = played(track, times)
    return geodesic_angle(q[1:], q[:-1])


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_smoothing_a_range_blends_in_and_out_without_a_pop(kind):
    src = noisy(kind)
    recipe = Recipe.of({"op": "smooth", "sigma": 0.08})
    t0, t1 = 1.0, 3.0
    out = run_on_range(src, recipe, RATE, t0, t1, blend_s=0.3)
    full = run_recipe_on_track(src, recipe, RATE)
    grid = np.linspace(0, 4, 8001)
    err = geodesic_angle(played(out, grid), played(src, grid))
    assert err[(grid < t0) | (grid > t1)].max() < 1e-6  # untouched outside the range
    mid = (grid > t0 + 0.3) & (grid < t1 - 0.3)
    assert geodesic_angle(played(out, grid[mid]), played(full, grid[mid])).max() < 0.01
    assert err[mid].max() > 1.0  # the range really was smoothed
    # Continuity at both ends: the played motion just inside equals the untouched motion within
    # 0.01 deg (w and dw/dt are 0 there), and the angular velocity does not jump.
    for edge, inward in ((t0, 1.0), (t1, -1.0)):
        for d in (1e-4, 1e-3):
            inside = edge + inward * d
            assert geodesic_angle(played(out, [inside]), played(src, [inside]))[0] < 0.01
        fine = edge + np.array([-2e-3, -1e-3, 0.0, 1e-3, 2e-3])
        steps = frame_steps(out, fine) / 1e-3
        ref = frame_steps(src, fine) / 1e-3
        np.testing.assert_allclose(steps, ref, atol=1.0)  # deg/s
    # A naive splice (the recipe's keys inside, the source's outside) pops: the check above fails on it.
    keep = (src.curve.time < t0) | (src.curve.time > t1)
    inner = (full.curve.time >= t0) & (full.curve.time <= t1)
    order = np.argsort(np.concatenate([src.curve.time[keep], full.curve.time[inner]]))
    parts = [src.curve.select(keep), full.curve.select(inner)]
    naive = Curve.make(
        *(
            np.concatenate([getattr(c, f) for c in parts])[order]
            for f in ("time", "value", "in_slope", "out_slope")
        )
    )
    naive_track = RotationTrack("A", kind, naive)
    assert geodesic_angle(played(naive_track, [t0 + 1e-3]), played(src, [t0 + 1e-3]))[0] > 0.1


def test_clip_range_runs_only_on_selected_tracks_and_reduce_reduces_inside():
    a = noisy(noise=0.0)
    b = RotationTrack("B", "euler", a.curve)
    clip = Clip("c", RATE, (a, b))
    res = run_recipe_on_range(clip, Recipe.of({"op": "reduce", "max_error": 1.0}), 1.0, 3.0, paths=["A"])
    assert res.clip.track("B") is b
    new = res.clip.track("A")
    inside = (new.times > 1.3) & (new.times < 2.7)
    assert inside.sum() < ((a.times > 1.3) & (a.times < 2.7)).sum() / 2
    assert res.diffs[0].max_error < 1.0 + 1e-6
    w = blend_weight(np.array([0.9, 1.0, 1.15, 2.0, 3.0, 3.1]), 1.0, 3.0, 0.3)
    np.testing.assert_allclose(w[[0, 1, 3, 4, 5]], [0, 0, 1, 0, 0])
    assert 0 < w[2] < 1
