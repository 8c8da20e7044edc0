"""Skeleton forward kinematics equals an independent per-joint loop on the raw BVH channels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack
from curveeditor.engine.curves import Curve
from curveeditor.engine.skeleton import pose, skeleton_from_clip
from curveeditor.io import read_clip
from tests.conftest import corpus_files

BVH = [
    p
    for p in corpus_files("bvh", "*.bvh")
    if "CMU_Sample_05_01" in p.name or "kick_normal_001" in p.name or "cmu_12_01" in p.name
]


def raw_motion(path):
    """The MOTION rows of a BVH file as floats (F, channels), read straight from the text."""
    text = path.read_text().split("\n")
    at = next(i for i, line in enumerate(text) if line.strip().lower().startswith("frame time"))
    rows = [line.split() for line in text[at + 1 :] if line.strip()]
    return np.array(rows, dtype=np.float64)


def independent_fk(hierarchy, motion, frame):
    """World joint positions (BVH's right-handed frame) at one frame: a plain loop over joints,
    scipy rotations from each joint's rotation channels in their listed (intrinsic) order; position
    channels replace the offset (as Blender reads BVH)."""
    col = 0
    world_r, world_p = [], []
    for j in hierarchy:
        values = motion[frame, col : col + len(j["channels"])]
        col += len(j["channels"])
        rot_axes = "".join(c[0].upper() for c in j["channels"] if c.lower().endswith("rotation"))
        rot_vals = [v for c, v in zip(j["channels"], values, strict=True) if c.lower().endswith("rotation")]
        local_r = Rotation.from_euler(rot_axes, rot_vals, degrees=True) if rot_axes else Rotation.identity()
        local_p = np.array(j["offset"], dtype=float)
        pos = {
            c[0].upper(): v
            for c, v in zip(j["channels"], values, strict=True)
            if c.lower().endswith("position")
        }
        if pos:
            local_p = np.array([pos.get("X", 0.0), pos.get("Y", 0.0), pos.get("Z", 0.0)])
        if j["parent"] is None:
            world_r.append(local_r)
            world_p.append(local_p)
        else:
            pr, pp = world_r[j["parent"]], world_p[j["parent"]]
            world_r.append(pr * local_r)
            world_p.append(pp + pr.apply(local_p))
    return np.array(world_p)


@pytest.mark.parametrize("path", BVH, ids=[p.name[:40] for p in BVH])
def test_joint_positions_equal_independent_fk_from_the_bvh(path):
    clip = read_clip(path)
    skel, why = skeleton_from_clip(clip)
    assert skel is not None and why == ""
    motion = raw_motion(path)
    frames = [0, 1, motion.shape[0] // 3, motion.shape[0] // 2, motion.shape[0] - 1]
    got = pose(skel, clip, np.array(frames) / clip.frame_rate).positions
    mirror = np.array([-1.0, 1.0, 1.0])  # BVH right-handed -> Unity left-handed (rotations.md s. 1)
    size = np.ptp(got[0], axis=0).max()
    for k, f in enumerate(frames):
        want = independent_fk(clip.meta["hierarchy"], motion, f) * mirror
        np.testing.assert_allclose(got[k], want, atol=1e-6 * max(size, 1.0))


def _anim_clip(with_positions: bool) -> Clip:
    t = np.array([0.0, 1.0])
    spin = Curve.make(t, [[0.0, 0.0, 0.0], [0.0, 90.0, 0.0]])
    still = Curve.make(t, np.zeros((2, 3)))
    tracks = (RotationTrack("Hips", "euler", spin), RotationTrack("Hips/Spine", "euler", still))
    others = ()
    if with_positions:
        others = (
            OtherTrack("Hips", "m_LocalPosition", "position", Curve.make([0.0], [[0.0, 1.0, 0.0]])),
            OtherTrack("Hips/Spine", "m_LocalPosition", "position", Curve.make([0.0], [[0.0, 0.0, 0.5]])),
        )
    return Clip("c", 30.0, tracks, others)


def test_anim_local_positions_left_handed_and_clips_without_positions_say_why():
    clip = _anim_clip(True)
    skel, _ = skeleton_from_clip(clip)
    p = pose(skel, clip, [0.0, 1.0]).positions
    j = skel.index("Hips/Spine")
    np.testing.assert_allclose(p[0, j], [0.0, 1.0, 0.5], atol=1e-12)
    # Unity: +90 about Y turns +Z (forward) to +X (right) -- left-handed, as Unity shows it.
    np.testing.assert_allclose(p[1, j], [0.5, 1.0, 0.0], atol=1e-12)
    none, why = skeleton_from_clip(_anim_clip(False))
    assert none is None and "no local positions" in why


def test_anim_positions_merged_equal_per_curve_evaluation():
    """Position curves sharing key times are evaluated as one merged curve: the same values as one
    evaluation per curve (including a curve with other key times, kept on its own)."""
    from curveeditor.engine.curves import evaluate
    from curveeditor.engine.skeleton import local_positions
    from curveeditor.engine.tangents import make_curve

    rng = np.random.default_rng(5)
    t = np.arange(7) / 30.0
    paths = ["Hips", "Hips/Spine", "Hips/Spine/Head", "Hips/Leg"]
    tracks, others = [], []
    for i, p in enumerate(paths):
        q = Rotation.from_rotvec(rng.normal(0, 0.4, (7, 3))).as_quat()
        tracks.append(RotationTrack(p, "quaternion", make_curve(t, q)))
        kt = t if i != 3 else np.arange(5) / 20.0  # one joint keyed at other times
        others.append(
            OtherTrack(
                p, "m_LocalPosition", "position", make_curve(kt, rng.normal(0, 1, (kt.size, 3))), kt, {}
            )
        )
    clip = Clip("c", 30.0, tracks, others)
    skel, why = skeleton_from_clip(clip)
    assert skel is not None, why
    at = np.linspace(-0.1, 0.4, 23)
    got = local_positions(skel, clip, at)
    for j, k in enumerate(skel.position_tracks):
        if k is not None:
            np.testing.assert_array_equal(got[:, j], evaluate(clip.other_tracks[k].curve, at)[:, :3])


@pytest.mark.parametrize("path", BVH, ids=lambda p: p.name[:40])
def test_one_time_pose_is_the_same_floats_as_the_many_times_pose(path):
    """A playback frame poses one time joint by joint in Python floats (``_forward_one``); the many
    times path goes level by level in numpy. Same products and sums in the same order: bit-equal."""
    clip = read_clip(path)
    skel, _ = skeleton_from_clip(clip)
    times = np.linspace(clip.start, clip.end, 5)
    many = pose(skel, clip, times)
    for i, t in enumerate(times):
        one = pose(skel, clip, [t])
        assert one.positions.shape == (1, skel.n_joints, 3)
        assert np.array_equal(one.positions[0], many.positions[i])
        assert np.array_equal(one.rotations[0], many.rotations[i])
        assert np.array_equal(one.tips[0], many.tips[i])


CHAIN_BVH = Path(__file__).resolve().parents[1] / "data" / "fbx" / "chain.bvh"


@pytest.mark.parametrize("path", [CHAIN_BVH, *BVH], ids=lambda p: p.name[:40])
def test_poses_of_a_short_span_from_its_keys_are_the_merged_poses(path, monkeypatch):
    """Poses at a short span of times of long tracks (one pose; a block of playback frames) are
    evaluated on the keys of that span (``skeleton.WINDOW_FROM``): the same floats as the tracks
    merged whole, at key times, between them, at both ends and past the end (where the wrap modes
    decide: the whole tracks), and no whole-track merge is made for them."""
    from curveeditor.engine import skeleton as sk

    clip = read_clip(path)
    skel, _ = skeleton_from_clip(clip)
    kt = clip.tracks[0].curve.time
    mid = len(kt) // 2
    spans = [[kt[0]], [kt[1]], [0.5 * (kt[1] + kt[2])], [kt[mid]], [kt[-2]], [kt[-1]], [kt[-1] + 0.25]]
    spans += [
        np.linspace(kt[0], kt[3], 8),
        np.linspace(kt[mid], kt[mid + 2], 5),
        np.linspace(kt[-4], kt[-1], 6),
    ]
    monkeypatch.setattr(sk, "WINDOW_FROM", 10**12)
    for t in spans:  # (the first pose of these tracks evaluates them one by one; the second merges)
        sk.local_rotations(skel, clip, t)
    merged = [sk.local_rotations(skel, clip, t) for t in spans]
    sk._GROUP_CACHE.clear()
    monkeypatch.setattr(sk, "WINDOW_FROM", 1)
    whole = []
    real = sk._merged_groups
    monkeypatch.setattr(sk, "_merged_groups", lambda tracks: whole.append(1) or real(tracks))
    for t, want in zip(spans, merged, strict=True):
        got = sk.local_rotations(skel, clip, t)
        assert np.array_equal(got, want), t
    assert len(whole) == 1  # (only the pose past the end went to the whole tracks)
