"""Per-step figures (issue 20): each recipe step measured against the track just before it, the
intended change of a lossless step apart from the error of a bounded one, next to its tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack, key_quaternions, played
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.recipe import Recipe, run_recipe
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.step_figures import StepFigure, step_figures, step_label
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip
from curveeditor.resources import SAMPLES_DIR


@pytest.fixture(scope="module")
def demo():
    return read_clip(SAMPLES_DIR / "demo.anim")


def figs(result, path):
    return {f.op: f for f in result.figures[path]}


def test_unwrap_then_reduce_on_the_demo_separates_the_spins_from_the_error(demo):
    # Before: `clean demo --unwrap --reduce 2` reported one "max 180.00 deg" for both steps.
    r = run_recipe(demo, Recipe.of({"op": "unwrap"}, {"op": "reduce", "max_error": 2.0}), diffs=False)
    assert set(r.figures) == {t.path for t in demo.tracks}
    u, red = figs(r, "Character")["unwrap"], figs(r, "Character")["reduce"]
    # The unwrap: 4 wrap jumps removed on purpose, where, the largest played change, poses kept.
    assert (u.role, u.verdict, u.removed["wrap"], u.n_removed) == ("lossless", "intended", 4, 4)
    assert len(u.removed_times) == 4 and u.certified
    assert 179.0 < u.max_error <= 180.0 and u.key_error < 1e-9 and u.passed
    assert "358" in u.notes[0] or "356" in u.notes[0] or "Unity played 35" in u.notes[0]
    assert u.cell() == "4 wraps"
    assert u.text().startswith("Character: unwrap: 4 wrap jumps removed at ") and "(intended)" in u.text()
    assert "poses at keys moved 0.000 deg" in u.text()
    # The reduce: measured against the unwrapped track (not the input), within its 2 deg.
    unwrapped = run_recipe(demo, Recipe.of({"op": "unwrap"}), diffs=False).clip.track("Character")
    d = diff_tracks(unwrapped, r.clip.track("Character"))
    assert red.role == "bounded" and red.tolerance == 2.0 and red.passed and red.verdict == "ok"
    assert red.measured == red.max_error <= d.max_error + 1e-9 and red.max_error > 0.9 * d.max_error
    assert red.cell() == f"{red.max_error:.3f} ok" and red.notes == ()
    assert figs(r, "Character/Spine")["unwrap"].removed["flip"] == 2
    prop = figs(r, "Prop")
    assert prop["unwrap"].verdict == "no change" and prop["unwrap"].cell() == "-"
    lines = r.step_lines()
    assert lines[0].startswith("step 1 unwrap (lossless, intended): 4 wrap jumps, 2 Euler flips removed")
    assert lines[0].endswith("poses at keys moved 0.000 deg (ok)")
    assert lines[1].startswith("step 2 reduce 2 deg: played motion max ") and lines[1].endswith(
        "tolerance 2 deg: ok"
    )
    assert "180" not in lines[1]


def test_figures_are_optional_and_json_ready(demo):
    import json

    r = run_recipe(demo, Recipe.of({"op": "unwrap"}), figures=False)
    assert r.figures == {} and r.step_lines() == []
    r = run_recipe(demo, Recipe.of({"op": "unwrap"}), diffs=False)
    d = r.figures["Character"][0].as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["verdict"] == "intended" and d["removed"] == {"wrap": 4, "flip": 0, "hemisphere": 0}


def test_reserve_keeps_the_format_margin_inside_the_bound(demo):
    recipe = Recipe.of({"op": "reduce", "max_error": 0.1})
    r = run_recipe(demo, recipe, diffs=False, reserve_deg=0.012)
    assert r.reserve_deg == 0.012
    for t in demo.tracks:
        f = r.figures[t.path][0]
        if not f.changed:
            continue
        assert f.tolerance == 0.1 and f.passed  # held against the bound asked for ...
        d = diff_tracks(t, r.clip.track(t.path))
        assert d.max_error <= 0.1 - 0.012 + 1e-6  # ... reduced inside it by the margin
    # A margin above half the bound leaves half of it.
    half = run_recipe(demo, recipe, diffs=False, reserve_deg=1.0)
    t = demo.track("Character")
    assert diff_tracks(t, half.clip.track(t.path)).max_error <= 0.05 + 1e-6


def _wrapped_turn(n=61, fps=30.0):
    """A track turning about y at 90 deg/s whose keys are wrapped into (-180, 180]: Unity plays a
    spin at every wrap jump."""
    t = np.arange(n) / fps
    y = (90.0 * t + 150.0 + 180.0) % 360.0 - 180.0
    return RotationTrack("Turn", "euler", make_curve(t, np.c_[np.zeros(n), y, np.zeros(n)]))


def test_resample_slerp_explains_its_180_degree_figure_and_holds_the_poses():
    track = _wrapped_turn()
    clip = Clip("c", 30.0, [track])
    r = run_recipe(clip, Recipe.of({"op": "resample", "hz": 60.0, "method": "slerp"}), diffs=False)
    (f,) = r.figures["Turn"]
    assert f.op == "resample" and f.role == "bounded" and f.label == "resample 60 Hz slerp"
    assert f.tolerance == 1e-3 and f.tolerance_of == "poses at the samples"
    assert f.measured < 1e-6 and f.passed and f.verdict == "ok"
    assert f.max_error > 170  # the spin Unity played across the wrap is gone (the short way) ...
    (note,) = f.notes  # ... and a line says so
    assert "Unity played 3" in note and "spin or long-way swing the keys do not need: removed" in note
    assert f.cell() == f"{f.max_error:.2f}, poses ok"


def test_resample_pose_error_is_explicit_and_its_figure_reported():
    # X (ZXY's middle axis) passes within 0.05 deg of 90 while Y and Z keep moving.
    t = np.arange(9) * 8 / 30
    values = np.stack([[60, 75, 85, 89.9, 90, 89.95, 85, 75, 60], 40 * np.sin(2 * t), 30 * np.cos(3 * t)], 1)
    clip = Clip("g", 30.0, [RotationTrack("g", "euler", make_curve(t, values))])
    exact = run_recipe(clip, Recipe.of({"op": "resample", "hz": 30.0}), diffs=False).figures["g"][0]
    assert exact.measured <= 1e-3 and exact.passed
    trade = Recipe.of({"op": "resample", "hz": 30.0, "pose_error": 0.5})
    f = run_recipe(clip, trade, diffs=False).figures["g"][0]
    assert f.label == "resample 30 Hz slerp, pose_error 0.5 deg" and f.tolerance == 0.5
    assert 1e-3 < f.measured <= 0.5 and f.passed
    assert "poses at the samples max" in f.text() and "tolerance 0.5 deg: ok" in f.text()


def test_on_purpose_changes_and_conversions(demo):
    steps = ({"op": "smooth", "method": "gaussian", "sigma": 0.1}, {"op": "to_order", "order": "xyz"})
    r = run_recipe(demo, Recipe.of(*steps), diffs=False)
    s, o = figs(r, "Character/Spine/Neck")["smooth"], figs(r, "Character/Spine/Neck")["to_order"]
    assert s.role == "change" and s.verdict == "intended" and s.tolerance is None and s.passed is None
    assert s.max_error > 0.01 and "on purpose" in s.text()
    assert o.role == "conversion" and o.tolerance == 0.01 and o.passed and o.max_error <= 0.01
    assert step_label("smooth", steps[0]) == "smooth gaussian 0.1 s"
    assert (
        step_label("limit", {"yaw": (-70, 70), "pitch": (-60, 60)}) == "limit yaw -70..70 pitch -60..60 deg"
    )


def test_a_failing_bound_says_fail():
    t = np.arange(5) / 10.0
    a = RotationTrack("a", "euler", make_curve(t, np.zeros((5, 3))))
    b = RotationTrack("a", "euler", make_curve(t, np.c_[np.zeros(5), [0, 0, 3, 0, 0], np.zeros(5)]))
    (f,) = step_figures("reduce", 1, {"max_error": 2.0}, [a], [b])
    assert isinstance(f, StepFigure) and f.passed is False and f.verdict == "FAIL"
    assert f.measured == pytest.approx(3.0, abs=1e-9) and f.notes  # a failure is explained
    assert f.cell() == "3.000 FAIL"
    assert geodesic_angle(key_quaternions(a), played(b, t)).max() == pytest.approx(f.key_error)


def test_figures_spread_over_map_chunks_are_the_serial_figures(demo, monkeypatch):
    """From ``SPREAD_MIN_KEYS`` keys the tracks' figures go through ``map_chunks`` in runs (the CLI's
    ``clean``: on both cores); same figures, same order."""
    from curveeditor.engine import step_figures as sf
    from curveeditor.io.beside import fork_map

    recipe = Recipe.of({"op": "unwrap"}, {"op": "reduce", "max_error": 1.0})
    serial = run_recipe(demo, recipe, diffs=False)
    monkeypatch.setattr(sf, "SPREAD_MIN_KEYS", 1)
    seen = []

    def spy(fn, items):
        items = list(items)
        if fn.__name__ == "figures":  # (reduce's chunks come this way too)
            seen.append([list(i) for i in items])
        return fork_map(fn, items)

    spread = run_recipe(demo, recipe, diffs=False, map_chunks=spy)
    assert len(seen) == 2  # unwrap's figures, reduce's
    assert all(sorted(i for run in runs for i in run) == list(range(len(demo.tracks))) for runs in seen)
    assert [[f.as_dict() for f in figs] for figs in spread.figures.values()] == [
        [f.as_dict() for f in figs] for figs in serial.figures.values()
    ]
