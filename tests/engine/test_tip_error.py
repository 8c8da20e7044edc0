"""The joint-position bound of ``reduce`` (issue 23): every joint and tip stays within ``tip_error``."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.recipe import Recipe, RecipeError, run_recipe, run_recipe_on_track, tip_bounds
from curveeditor.engine.skeleton import pose, skeleton_from_clip
from curveeditor.engine.tip_error import (
    chain_lengths,
    joint_bounds,
    length_unit_mm,
    position_bound,
    position_errors,
)
from curveeditor.io import read_clip
from tests.conftest import corpus_files

BVHS = corpus_files("bvh", "*.bvh")
SMALL = [p for p in BVHS if p.stat().st_size < 700_000]


def _chain_clip(tmp_path):
    """Root -> A -> B -> end site, offsets 10 units each, all moving."""
    t = np.arange(120) / 60.0
    rows = []
    for k in range(120):
        a = [20 * np.sin(2 * t[k]), 10 * np.cos(3 * t[k]), 5 * np.sin(t[k])]
        rows.append(" ".join(f"{v:.4f}" for v in [0, 0, 0, *a, *(x * 0.5 for x in a), *(x * 2 for x in a)]))
    p = tmp_path / "chain.bvh"
    p.write_text(
        "HIERARCHY\nROOT R\n{\n  OFFSET 0 0 0\n"
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        "  JOINT A\n  {\n    OFFSET 0 10 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "    JOINT B\n    {\n      OFFSET 0 10 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "      End Site\n      {\n        OFFSET 0 10 0\n      }\n    }\n  }\n}\n"
        f"MOTION\nFrames: 120\nFrame Time: {1 / 60:.8f}\n" + "\n".join(rows) + "\n"
    )
    return read_clip(p)


def test_chain_lengths_and_bounds_add_up(tmp_path):
    clip = _chain_clip(tmp_path)
    sk, _ = skeleton_from_clip(clip)
    lengths, moves = chain_lengths(sk, clip)
    r, a, b = (sk.index(p) for p in ("R", "R/A", "R/A/B"))
    tip = sk.n_joints  # the one end site
    assert lengths[r, b] == pytest.approx(20.0) and lengths[a, b] == pytest.approx(10.0)
    assert lengths[r, tip] == pytest.approx(30.0) and lengths[b, tip] == pytest.approx(10.0)
    assert moves[b, tip] and not moves[b, b] and moves[r, a]
    bounds = joint_bounds(sk, clip, 1.0)
    # 3 rotated joints move the tip: each gets a third of the 1-unit budget over its chain
    assert bounds["R"] == pytest.approx(np.degrees(1.0 / (3 * 30.0)))
    assert bounds["R/A/B"] == pytest.approx(np.degrees(1.0 / (3 * 10.0)))
    assert position_bound(sk, clip, bounds) == pytest.approx(1.0)


def test_tip_error_bound_holds_at_every_frame(tmp_path):
    clip = _chain_clip(tmp_path)
    sk, _ = skeleton_from_clip(clip)
    mm = length_unit_mm(clip, sk)
    recipe = Recipe.of({"op": "reduce", "max_error": 2.0, "tip_error": 1.0})
    res = run_recipe(clip, recipe)
    loose = run_recipe(clip, Recipe.of({"op": "reduce", "max_error": 2.0}))
    keys = sum(t.n_keys for t in res.clip.tracks)
    assert keys < sum(t.n_keys for t in clip.tracks)
    assert keys > sum(t.n_keys for t in loose.clip.tracks)  # the position bound is the tighter here
    dense = np.linspace(0, clip.end, 4001)
    err, _ = position_errors(sk, clip, res.clip, np.union1d(dense, clip.tracks[0].times))
    assert err * mm <= 1.0
    # the certified bound from the certified angle errors is within the request too
    angles = {d.path: max(d.max_error, d.bound) for d in res.diffs}
    assert position_bound(sk, clip, angles) * mm <= 1.0 + 1e-9
    # the loose reduction moves the tip further than that
    err_loose, _ = position_errors(sk, clip, loose.clip, dense)
    assert err_loose * mm > 1.0


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name[:40])
def test_tip_error_on_corpus_bvh(path):
    clip = read_clip(path)
    sk, _ = skeleton_from_clip(clip)
    mm = length_unit_mm(clip, sk)
    recipe = Recipe.of({"op": "reduce", "max_error": 1.0, "tip_error": 5.0})
    res = run_recipe(clip, recipe)
    times = clip.tracks[0].times
    grid = np.union1d(times, np.linspace(times[0], times[-1], 4 * len(times)))
    err, where = position_errors(sk, clip, res.clip, grid)
    assert err * mm <= 5.0, where
    # Each track within its joint's bound (the reducer certifies it; the diff measures it), and those
    # bounds keep every joint and tip within the request
    bounds = tip_bounds(clip, recipe)[0]
    for d in res.diffs:
        assert d.max_error <= min(1.0, bounds.get(d.path, 1.0)) + 1e-6, d.path
    held = {p: min(1.0, b) for p, b in bounds.items()}
    assert position_bound(sk, clip, held) * mm <= 5.0 + 1e-6
    a = pose(sk, clip, times[:3])
    assert np.isfinite(a.positions).all()


def test_tip_error_needs_a_skeleton_and_the_clip(tmp_path):
    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.tangents import make_curve

    t = np.arange(10) / 10.0
    tr = RotationTrack("A", "euler", make_curve(t, np.zeros((10, 3)) + t[:, None]))
    recipe = Recipe.of({"op": "reduce", "max_error": 1.0, "tip_error": 1.0})
    with pytest.raises(RecipeError, match="skeleton"):
        run_recipe(Clip("c", 10.0, [tr]), recipe)
    with pytest.raises(RecipeError, match="whole clip"):
        run_recipe_on_track(tr, recipe, 10.0)
    with pytest.raises(RecipeError, match="tip_error"):
        Recipe.of({"op": "reduce", "max_error": 1.0, "tip_error": -1.0})
