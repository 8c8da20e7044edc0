"""Problem counts on constructed tracks (rotations.md section 3), and a corpus run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curveeditor.engine.analysis import (
    TrackReport,
    default_spike_speed,
    find_problems,
    inspect_clip,
    inspect_track,
    spike_mask,
)
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve
from curveeditor.engine.rotations import axis_angle_quat, euler_to_quat, quat_mul
from curveeditor.engine.speed import angular_speed
from curveeditor.engine.tangents import make_curve
from tests.conftest import INSPECT_TRACK_KEYS, corpus_files


def euler_track(values, fps=30.0, order="zxy", path="bone"):
    v = np.asarray(values, dtype=float)
    t = np.arange(len(v)) / fps
    return RotationTrack(path, "euler", make_curve(t, v), order)


def quat_track(q, fps=30.0, path="q"):
    t = np.arange(len(q)) / fps
    return RotationTrack(path, "quaternion", Curve.make(t, q))


def smooth_values(n=60):
    s = np.linspace(0, 1, n)
    return np.stack([20 * np.sin(3 * s), 40 * s, 10 * np.cos(2 * s)], axis=1)


def test_clean_track_reports_nothing_and_dict_keys():
    tr = euler_track(smooth_values())
    rep = inspect_track(tr)
    assert isinstance(rep, TrackReport)
    d = rep.as_dict()
    assert list(d) == INSPECT_TRACK_KEYS
    assert d["keys"] == 60 and d["start"] == 0.0 and d["end"] == pytest.approx(59 / 30)
    assert (d["wrap_jumps"], d["euler_flips"], d["hemisphere_flips"], d["gimbal_keys"], d["spikes"]) == (
        0,
        0,
        0,
        0,
        0,
    )
    assert d["order"] == "zxy" and d["kind"] == "euler"
    assert find_problems(tr) == []


def test_wrap_and_flip_counts():
    v = smooth_values(40)
    v[:, 1] += 160.0  # y around 160..200
    v[:, 1] = (v[:, 1] + 180.0) % 360.0 - 180.0  # wrap into [-180, 180): one 360 jump
    alt = v.copy()
    alt[25:, 0] = 180.0 - v[25:, 0]  # equivalent triples from key 25 on: one flip, same poses
    alt[25:, 1] = v[25:, 1] + 180.0
    alt[25:, 2] = v[25:, 2] + 180.0
    rep = inspect_track(euler_track(alt))
    wraps = int(np.sum(np.any(np.abs(np.diff(alt, axis=0)) > 180, axis=1)))
    assert wraps >= 1
    assert rep.wrap_jumps == wraps
    assert rep.euler_flips == 1
    probs = find_problems(euler_track(alt))
    flips = [p for p in probs if p.kind == "flip"]
    assert [p.index for p in flips] == [25]
    assert flips[0].time == pytest.approx(25 / 30)
    assert len([p for p in probs if p.kind == "wrap"]) == wraps


def test_pure_wrap_is_not_a_flip():
    rep = inspect_track(euler_track([[0, 170, 0], [0, 178, 0], [0, -174, 0], [0, -166, 0]]))
    assert rep.wrap_jumps == 1 and rep.euler_flips == 0


def test_hemisphere_flips_only_for_quaternion_tracks():
    q = euler_to_quat(smooth_values(20))
    q[5] *= -1
    q[12:] *= -1
    rep = inspect_track(quat_track(q))
    assert rep.hemisphere_flips == 3  # 4->5, 5->6, 11->12
    assert rep.kind == "quaternion" and rep.order == "zxy"
    assert rep.wrap_jumps == 0 and rep.euler_flips == 0
    assert inspect_track(euler_track(smooth_values(20))).hemisphere_flips == 0


def test_gimbal_keys_use_the_middle_axis_of_the_order():
    v = np.zeros((6, 3))
    v[:, 0] = [0, 86, 90, 94, 96, 270 - 3]  # x is the middle axis of zxy
    assert inspect_track(euler_track(v)).gimbal_keys == 4
    w = np.zeros((6, 3))
    w[:, 1] = [0, 88, -89, 450, 10, 20]  # y is the middle axis of xyz
    assert inspect_track(euler_track(w, order="xyz")).gimbal_keys == 3
    assert inspect_track(euler_track(w, order="ZXY")).gimbal_keys == 0
    probs = [p for p in find_problems(euler_track(v)) if p.kind == "gimbal"]
    assert [p.index for p in probs] == [1, 2, 3, 5]


def test_spike_one_and_two_frames():
    base = euler_to_quat(smooth_values(50))
    t = np.arange(50) / 30.0
    q = base.copy()
    q[20] = quat_mul(axis_angle_quat(0, np.deg2rad(40.0)), base[20])
    q[35] = quat_mul(axis_angle_quat(1, np.deg2rad(60.0)), base[35])
    q[36] = quat_mul(axis_angle_quat(1, np.deg2rad(55.0)), base[36])
    mask = spike_mask(t, q)
    assert np.nonzero(mask)[0].tolist() == [20, 35, 36]
    rep = inspect_track(quat_track(q))
    assert rep.spikes == 2
    spikes = [p for p in find_problems(quat_track(q)) if p.kind == "spike"]
    assert [p.index for p in spikes] == [20, 35]
    # An explicit bound above the spikes' speed finds nothing.
    assert not spike_mask(t, q, 5000.0).any()


def test_fast_steady_spin_is_not_a_spike():
    t = np.arange(100) / 30.0
    q = axis_angle_quat(1, np.deg2rad(1000.0 * t))  # 33 deg per frame, steady
    assert default_spike_speed(t, q) == pytest.approx(8000.0, rel=1e-6)
    assert not spike_mask(t, q).any()
    assert inspect_track(quat_track(q)).max_angular_speed == pytest.approx(1000.0, rel=1e-6)


def test_angular_speed():
    t = np.array([0.0, 0.5, 1.5])
    q = axis_angle_quat(2, np.deg2rad([0.0, 10.0, 30.0]))
    assert np.allclose(angular_speed(t, q), [20.0, 20.0, 20.0])
    assert angular_speed(t[:1], q[:1]).tolist() == [0.0]


def test_inspect_clip_and_empty_tracks():
    tracks = [euler_track(smooth_values(), path="a"), euler_track(smooth_values()[:1], path="b")]
    reports = inspect_clip(Clip("c", 30.0, tracks))
    assert [r.path for r in reports] == ["a", "b"]
    assert reports[1].keys == 1 and reports[1].max_angular_speed == 0.0


bvh_files = corpus_files("bvh", "*.bvh")


@pytest.mark.corpus
@pytest.mark.parametrize("path", bvh_files[:4], ids=lambda p: p.name[:40])
def test_corpus_bvh_reports_are_consistent(path):
    bvh = pytest.importorskip("curveeditor.io.bvh")
    clip = bvh.read_bvh(path)
    for tr in clip.tracks[:25]:
        rep = inspect_track(tr)
        probs = find_problems(tr)
        counts = {k: sum(p.kind == k for p in probs) for k in ("wrap", "flip", "gimbal", "spike")}
        assert counts == {
            "wrap": rep.wrap_jumps,
            "flip": rep.euler_flips,
            "gimbal": rep.gimbal_keys,
            "spike": rep.spikes,
        }
        assert rep.hemisphere_flips == 0
        assert np.isfinite(rep.max_angular_speed)


# ------------------------------------------- quaternion tracks judged as drawn (issue 8 s5)


def yaw_spin_quats(n=302, seconds=5.0, turns=1.0):
    """A correctly converted spin: ``turns`` x 360 deg about Y over ``seconds`` (72 deg/s for one)."""
    t = np.linspace(0.0, seconds, n)
    return t, axis_angle_quat(1, np.deg2rad(360.0 * turns) * t / seconds)


def test_converted_spin_shows_no_wraps_and_counts_match_the_drawn_curves():
    from curveeditor.engine.display import key_euler

    t, q = yaw_spin_quats()
    track = RotationTrack("Turntable", "quaternion", Curve.make(t, q))
    rep = inspect_track(track)
    # Before: each key's own decomposition wrapped at +-180 (a "wrap" no clean-up could remove).
    assert rep.wrap_jumps == 0 and rep.euler_flips == 0 and rep.hemisphere_flips == 0
    drawn = key_euler(track)
    assert np.ptp(drawn[:, 1]) == pytest.approx(360.0, abs=1e-6)
    assert rep.wrap_jumps == int(np.count_nonzero(np.any(np.abs(np.diff(drawn, axis=0)) > 180, axis=1)))
    assert [p.kind for p in find_problems(track)] == []


def test_quaternion_counts_drop_after_a_clean_up():
    from curveeditor.engine.unwrap import unwrap_track

    t = np.arange(200) / 30.0
    e = np.stack([25 * np.sin(t), 150 * t, 10 * np.cos(2 * t)], axis=1)  # yaw crosses +-180 often
    q = euler_to_quat(e, "zxy")
    q[1::9] *= -1  # stored hemisphere flips
    track = RotationTrack("Hips", "quaternion", make_curve(t, q, mode="linear"))
    before = inspect_track(track)
    assert before.hemisphere_flips > 0 and before.wrap_jumps == 0  # old code: a wrap at every crossing
    after = inspect_track(unwrap_track(track))
    assert after.hemisphere_flips == 0 and after.wrap_jumps == 0 and after.euler_flips == 0


def test_flips_carry_their_reason():
    from curveeditor.engine.analysis import FLIP_GIMBAL_DEG, flip_details
    from curveeditor.engine.rotations import equivalent_euler

    # A representation flip far from lock: the same pose switched to its equivalent triple.
    v = smooth_values(40)
    v[20:] = equivalent_euler(v[20:], "zxy")
    far = flip_details(euler_track(v))
    assert len(far) == 1 and not far[0].near_gimbal and far[0].index == 20
    assert far[0].gimbal_distance > 40 and "not near gimbal" in far[0].reason
    # A pose passing 0.3 deg from the lock (a 10 deg turn about X from 85 to 95 deg, rolled 0.3 deg
    # about Z): the outer angles of every decomposition swing ~180 deg within two frames while the
    # pose moves 0.5 deg per frame. No unwrap can remove that.
    s = np.linspace(0, 1, 21)
    q = quat_mul(
        axis_angle_quat(2, np.full(21, np.deg2rad(0.3))), axis_angle_quat(0, np.deg2rad(85 + 10 * s))
    )
    from curveeditor.engine.rotations import quat_to_euler
    from curveeditor.engine.unwrap import unwrap_track

    near_track = unwrap_track(euler_track(quat_to_euler(q, "zxy")))
    near = flip_details(near_track)
    assert near and all(f.near_gimbal and f.gimbal_distance <= FLIP_GIMBAL_DEG for f in near)
    assert all(abs(f.middle_deg) > 89 for f in near) and "near gimbal lock" in near[0].reason
    problems = [p for p in find_problems(near_track) if p.kind == "flip"]
    assert len(problems) == len(near) and "middle angle x" in problems[0].detail


@pytest.mark.corpus
@pytest.mark.parametrize("path", bvh_files, ids=lambda p: p.name[:40])
def test_no_flip_outside_the_gimbal_neighbourhood_after_unwrap(path):
    from curveeditor.engine.analysis import flip_details
    from curveeditor.engine.unwrap import unwrap_track

    bvh = pytest.importorskip("curveeditor.io.bvh")
    clip = bvh.read_bvh(path)
    for tr in clip.tracks:
        left = flip_details(unwrap_track(tr))
        assert all(f.near_gimbal for f in left), [f for f in left if not f.near_gimbal][:3]


def test_cli_inspect_lists_flips_with_their_reason():
    import json
    import subprocess
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "resources" / "samples" / "demo.csv"
    if not demo.exists():
        pytest.skip("demo sample not generated")
    cmd = [sys.executable, "-m", "curveeditor.cli", "inspect", str(demo)]
    data = json.loads(subprocess.run(cmd + ["--json"], check=True, capture_output=True, text=True).stdout)
    flips = data["flips"]
    spine = [t for t in data["tracks"] if t["path"] == "Character/Spine"][0]
    assert len(flips) == spine["euler_flips"] == 2
    assert {f["path"] for f in flips} == {"Character/Spine"}
    assert all(not f["near_gimbal"] and f["gimbal_distance"] > 10 and f["reason"] for f in flips)
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    assert "flips: 2, 2 not near gimbal lock" in text and "Character/Spine key 45 at 1.500 s" in text


def test_cli_clean_report_lists_the_flips_left(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "resources" / "samples" / "demo.csv"
    if not demo.exists():
        pytest.skip("demo sample not generated")

    def clean(*ops):
        rep = tmp_path / "r.json"
        cmd = [sys.executable, "-m", "curveeditor.cli", "clean", str(demo), "-o", str(tmp_path / "o.csv")]
        r = subprocess.run(
            cmd + list(ops) + ["--report", str(rep)], check=True, capture_output=True, text=True
        )
        return json.loads(rep.read_text())["flips"], r.stdout

    flips, out = clean("--despike")
    assert len(flips) == 2 and not any(f["near_gimbal"] for f in flips) and "flips: 2" in out
    flips, out = clean("--unwrap")
    assert flips == [] and "flips:" not in out


#: ZXY key values of the corpus Gangnam BVH's RightLeg (keys 145-156) as written to .anim: the pose
#: passes 10.2 deg from lock between keys 150 and 151 (an 8.7 deg step) and Y, Z turn 45-46 deg,
#: continuously.
_SWING_NEAR_LOCK = [
    (64.049, 160.555, 163.532), (64.921, 160.577, 163.46), (67.286, 158.333, 161.065),
    (71.016, 152.256, 154.768), (75.547, 138.232, 140.379), (79.309, 107.752, 109.283),
    (78.34, 62.89, 63.611), (71.597, 35.287, 35.006), (62.209, 22.039, 20.688),
    (51.545, 13.566, 11.499), (40.001, 7.672, 5.544), (28.164, 3.582, 2.098),
]  # fmt: skip


def test_a_continuous_swing_just_past_10_deg_from_lock_is_near_gimbal_a_branch_jump_is_not():
    from curveeditor.engine.analysis import FLIP_GIMBAL_DEG, flip_details, gimbal_reach
    from curveeditor.engine.rotations import equivalent_euler

    v = np.array(_SWING_NEAR_LOCK)
    flips = flip_details(euler_track(v))
    assert len(flips) == 1 and flips[0].index == 6
    f = flips[0]
    assert FLIP_GIMBAL_DEG < f.gimbal_distance < 10.5 and f.gimbal_distance <= gimbal_reach(f.step_deg)
    assert f.near_gimbal and "continuous swing" in f.reason  # old code: "not near gimbal lock"
    # The same poses with the other Euler triple from key 6 on: a real flip at the same place.
    w = v.copy()
    w[6:] = equivalent_euler(w[6:], "zxy")
    jump = [x for x in flip_details(euler_track(w)) if x.index == 6]
    assert len(jump) == 1 and not jump[0].near_gimbal and "not near gimbal" in jump[0].reason


@pytest.mark.corpus
@pytest.mark.parametrize("path", bvh_files, ids=lambda p: p.name[:40])
def test_no_flip_outside_the_gimbal_neighbourhood_in_the_written_unity_curves(path):
    """What `clean X.bvh --unwrap -o X.anim` writes: each unwrapped per-frame track keyed for Unity
    (``reorder.sampled_track``: ZXY Euler or quaternion curves, as ``io.verify.prepare_samples``)."""
    from curveeditor.engine.analysis import flip_details
    from curveeditor.engine.reorder import sampled_track
    from curveeditor.engine.unwrap import unwrap_track

    bvh = pytest.importorskip("curveeditor.io.bvh")
    clip = bvh.read_bvh(path)
    for tr in clip.tracks:
        left = flip_details(sampled_track(unwrap_track(tr)))
        assert all(f.near_gimbal for f in left), [f for f in left if not f.near_gimbal][:3]


def _mixed_clip(seed: int) -> Clip:
    """Tracks of both kinds and several orders, with wraps, flips, hemisphere flips, spikes, gimbal
    keys, uneven key times and 1-2 key tracks."""
    from curveeditor.engine.rotations import equivalent_euler

    rng = np.random.default_rng(seed)
    tracks = []
    for k in range(14):
        n = int(rng.choice([1, 2, 3, 5, 40, 90]))
        order = ["zxy", "XYZ", "zyx"][k % 3]
        t = np.cumsum(rng.uniform(0.005, 0.1, n))
        e = np.cumsum(rng.normal(0, 2, (n, 3)), axis=0)
        if n > 5:
            e[n // 2] += 120.0  # a spike
            e[n // 3 :, 1] += 360.0  # a wrap
            e[2 * n // 3 :] = equivalent_euler(e[2 * n // 3 :], order)  # a flip
            e[n // 4, 0] = 89.0  # near gimbal lock (ZXY middle angle x)
        if k % 2:
            q = euler_to_quat(e, order)
            q[::7] *= -1.0  # stored hemisphere flips
            tracks.append(RotationTrack(f"Q{k}", "quaternion", make_curve(t, q, mode="auto"), order))
        else:
            tracks.append(RotationTrack(f"E{k}", "euler", make_curve(t, e, mode="auto"), order))
    return Clip("mixed", 30.0, tracks)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("spike_speed", [None, 300.0])
def test_clip_analysis_in_lockstep_equals_track_by_track(seed, spike_speed):
    from curveeditor.engine.analysis import flip_details, flip_details_all

    clip = _mixed_clip(seed)
    reports = inspect_clip(clip, spike_speed)
    assert reports == [inspect_track(t, spike_speed) for t in clip.tracks]
    assert [f.as_dict() for f in flip_details_all(clip.tracks)] == [
        f.as_dict() for t in clip.tracks for f in flip_details(t)
    ]
    found = {k: sum(getattr(r, k) for r in reports) for k in ("wrap_jumps", "euler_flips", "spikes")}
    assert all(found.values()), found  # the clip exercises what it claims to


@pytest.mark.corpus
def test_clip_analysis_in_lockstep_equals_track_by_track_on_the_corpus():
    from curveeditor.engine.analysis import flip_details, flip_details_all
    from curveeditor.io import read_clip

    files = corpus_files("bvh", "*.bvh")[:4] + corpus_files("anim", "*.anim")[:4]
    if not files:
        pytest.skip("corpus not available")
    for path in files:
        clip = read_clip(str(path))
        assert inspect_clip(clip) == [inspect_track(t) for t in clip.tracks], path.name
        assert [f.as_dict() for f in flip_details_all(clip.tracks)] == [
            f.as_dict() for t in clip.tracks for f in flip_details(t)
        ], path.name


# ------------------------------------------------------------------------------------ pops (issue 20)


def test_a_step_that_does_not_come_back_is_a_pop_a_spike_is_not():
    from curveeditor.engine.analysis import pop_mask

    base = smooth_values(90)
    popped = base.copy()
    popped[40:, 1] += 120.0  # 120 deg in one frame, then the motion goes on from there
    rep = inspect_track(euler_track(popped))
    assert rep.pops == 1 and rep.spikes == 0 and rep.as_dict()["pops"] == 1
    (p,) = [p for p in find_problems(euler_track(popped)) if p.kind == "pop"]
    assert p.index == 40 and p.time == pytest.approx(40 / 30)
    assert (
        p.detail.startswith("120.5 deg in one key step (0.03333 s: 3,615 deg/s") and "come back" in p.detail
    )
    q = euler_to_quat(popped, "zxy")
    mask = pop_mask(np.arange(90) / 30.0, q)
    assert mask.shape == (89,) and np.flatnonzero(mask).tolist() == [39]
    # A spike comes straight back: a spike, not a pop.
    spiky = base.copy()
    spiky[40, 1] += 120.0
    rep = inspect_track(euler_track(spiky))
    assert rep.spikes == 1 and rep.pops == 0
    # A fast but smooth swing (the same 120 deg over 8 frames) is motion.
    swing = base.copy()
    swing[40:, 1] += 120.0 * np.clip((np.arange(50) + 1) / 8.0, 0, 1)
    assert inspect_track(euler_track(swing)).pops == 0


def test_pops_in_lockstep_equal_track_by_track():
    tracks = []
    for i in range(4):
        v = smooth_values(70) * (1 + 0.3 * i)
        if i % 2:
            v[30 + i :, 0] += 90.0
        tracks.append(euler_track(v, path=f"b{i}"))
    joined = inspect_clip(Clip("c", 30.0, tracks))
    assert [r.pops for r in joined] == [inspect_track(t).pops for t in tracks] == [0, 1, 0, 1]


@pytest.mark.corpus
def test_a_pop_added_to_a_corpus_walk_is_found_where_it_is(corpus_dir):
    from curveeditor.io import read_clip
    from tests.trust_clips import with_pop

    src = corpus_dir / "bvh" / "VictorS-67__pybvh__bvh_data_cmu_12_01_walk.bvh"
    if not src.exists():
        pytest.skip("cmu_12_01_walk.bvh absent")
    clip = read_clip(src)
    before = {r.path: r.pops for r in inspect_clip(clip)}
    # The walk's first frame is a T-pose: its step into the walk is a pop on the arms and legs.
    assert before["Hips/LowerBack/Spine/Spine1/LeftShoulder/LeftArm"] == 1
    popped, path = with_pop(clip, "/LeftForeArm", 200)
    after = {r.path: r.pops for r in inspect_clip(popped)}
    assert after[path] == before[path] + 1
    assert {p: n for p, n in after.items() if p != path} == {p: n for p, n in before.items() if p != path}
    (p,) = [p for p in find_problems(popped.track(path)) if p.kind == "pop" and p.index == 200]
    assert p.detail.startswith("136.0 deg in one key step") and "16,3" in p.detail


@pytest.mark.parametrize(
    "path",
    [Path(__file__).resolve().parents[2] / "resources" / "samples" / "demo.anim", *bvh_files[:3]],
    ids=lambda p: p.name[:40],
)
def test_reports_in_parts_are_the_reports_of_one_pass(path, monkeypatch):
    """``inspect`` analyses a clip's tracks joined up to ``_JOIN_KEYS`` keys a pass (bounded memory on
    long takes): a pass per track gives the same reports and flip details as one pass over all."""
    from curveeditor.engine import analysis
    from curveeditor.io import read_clip

    clip = read_clip(path)
    monkeypatch.setattr(analysis, "_JOIN_KEYS", 10**12)
    whole = (inspect_clip(clip), analysis.flip_details_all(clip.tracks))
    monkeypatch.setattr(analysis, "_JOIN_KEYS", 1)
    parts = list(analysis._findings_in_parts(list(clip.tracks), None))
    assert len(parts) == len(clip.tracks)  # (a pass per track)
    assert (inspect_clip(clip), analysis.flip_details_all(clip.tracks)) == whole
