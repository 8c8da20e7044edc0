"""FBX takes in (issue 21): the takes made by ``tests/data/make_fbx.py`` (Blender's FBX exporter on a
generated BVH) read back as the BVH they came from, joint by joint and frame by frame, in Unity's
frame; per-channel keys kept; bad files give one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curveeditor.cli import main as cli_main
from curveeditor.engine.clip import EULER, QUATERNION, key_quaternions, played
from curveeditor.engine.curves import Curve, evaluate
from curveeditor.engine.rotations import geodesic_angle, quat_conj, quat_mul
from curveeditor.engine.skeleton import pose, skeleton_from_clip
from curveeditor.io import ClipReadError, read_clip

pytest.importorskip("pufbx", reason="the 'fbx' extra (pufbx) is not installed")

from curveeditor.io import fbx as fbx_io  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "fbx"
BVH = DATA / "chain.bvh"
EMPTIES = DATA / "chain_empties.fbx"
ARMATURE = DATA / "chain_armature.fbx"
STATIC = DATA / "chain_static.fbx"
ZUP = DATA / "chain_zup.fbx"


def _frames_error(a, b) -> float:
    """Largest geodesic difference (deg) between two tracks' key poses, frame by frame."""
    assert a.n_keys == b.n_keys
    return float(np.max(geodesic_angle(key_quaternions(a), key_quaternions(b))))


def test_every_joint_at_every_frame_matches_the_bvh():
    bvh, fbx = read_clip(BVH), read_clip(EMPTIES)
    assert [t.path for t in fbx.tracks] == sorted(t.path for t in bvh.tracks) or {
        t.path for t in fbx.tracks
    } == {t.path for t in bvh.tracks}
    assert fbx.frame_rate == bvh.frame_rate == 30.0
    for t in bvh.tracks:
        f = fbx.track(t.path)
        # Per-channel keys kept (Blender bakes every channel at every frame) in the FBX's order
        assert f.kind == EULER and f.order == "xyz" and f.meta.get("fbx_curves")
        np.testing.assert_allclose(f.times, t.times, atol=1e-12)
        assert _frames_error(f, t) < 1e-3, t.path
    assert fbx.meta["resampled"] == []
    assert fbx.meta["take"] == "Scene" and fbx.meta["takes"] == ["Scene"]
    # the root's translation (BVH units: the exporter's UnitScaleFactor 100 cm = 1 unit), mirrored
    (pos,) = [o for o in fbx.other_tracks if o.attribute == "m_LocalPosition" and o.path == "Hips"]
    (src,) = [o for o in bvh.other_tracks if o.attribute == "m_LocalPosition"]
    np.testing.assert_allclose(pos.curve.value, src.curve.value, atol=1e-3)


def test_a_z_up_take_matches_the_bvh():
    """The empties exported Z up (``UpAxis`` 2, Blender's own axes): Unity's importer turns the
    top-level node from Z up to Y up (-90 deg about X), which gives back the BVH's root; every joint
    at every frame and the root's translation match the BVH (the root, converted, is sampled per
    frame as Unity resamples it)."""
    from curveeditor.io.fbx import _setting

    raw = ZUP.read_bytes()
    assert _setting(raw, "UpAxis") == 2
    bvh, fbx = read_clip(BVH), read_clip(ZUP)
    assert {t.path for t in fbx.tracks} == {t.path for t in bvh.tracks}
    for t in bvh.tracks:
        f = fbx.track(t.path)
        np.testing.assert_allclose(f.times, t.times, atol=1e-12)
        assert _frames_error(f, t) < 1e-3, t.path
    assert fbx.meta["resampled"] == ["Hips: the axis conversion of a top-level node"]
    (pos,) = [o for o in fbx.other_tracks if o.attribute == "m_LocalPosition" and o.path == "Hips"]
    (src,) = [o for o in bvh.other_tracks if o.attribute == "m_LocalPosition"]
    np.testing.assert_allclose(pos.curve.value, src.curve.value, atol=1e-3)


def test_armature_take_matches_the_bvh_in_world_space():
    """Bones with rest orientations (Blender's BVH importer): their local rotations are rest-relative,
    so the check is in world space: joint positions, and each joint's world rotation change since the
    first frame, equal the BVH's at every frame."""
    bvh, fbx = read_clip(BVH), read_clip(ARMATURE)
    assert {t.path for t in fbx.tracks} == {"chain"} | {f"chain/{t.path}" for t in bvh.tracks}
    sb, _ = skeleton_from_clip(bvh)
    sf, why = skeleton_from_clip(fbx)
    assert why == ""
    times = bvh.tracks[0].times
    pb, pf = pose(sb, bvh, times), pose(sf, fbx, times)
    for j, p in enumerate(sb.paths):
        k = sf.index("chain/" + p)
        assert np.max(np.abs(pb.positions[:, j] - pf.positions[:, k])) < 1e-3, p
        db = quat_mul(pb.rotations[:, j], quat_conj(pb.rotations[:1, j]))
        df = quat_mul(pf.rotations[:, k], quat_conj(pf.rotations[:1, k]))
        assert float(np.max(geodesic_angle(db, df))) < 1e-3, p


def test_convert_to_anim_reads_back_through_our_reader(tmp_path, capsys):
    out = tmp_path / "take.anim"
    assert cli_main(["convert", str(EMPTIES), str(out)]) == 0
    assert "written file read back" in capsys.readouterr().out
    back, bvh = read_clip(out), read_clip(BVH)
    for t in bvh.tracks:
        w = back.track(t.path)
        assert float(np.max(geodesic_angle(played(w, t.times), key_quaternions(t)))) < 1e-3


@pytest.mark.parametrize("ext", [".csv", ".glb"])
def test_convert_to_csv_and_gltf(tmp_path, ext):
    out = tmp_path / f"take{ext}"
    assert cli_main(["convert", str(EMPTIES), str(out)]) == 0
    if ext == ".glb":
        from tests.io.gltf_validator import assert_valid

        assert_valid(out)
    back, fbx = read_clip(out), read_clip(EMPTIES)
    for t in fbx.tracks:
        w = back.track(t.path)
        assert float(np.max(geodesic_angle(played(w, t.times), played(t, t.times)))) < 1e-3


def test_inspect_names_the_take(capsys):
    assert cli_main(["inspect", str(ARMATURE)]) == 0
    assert "take: 'Scene', 1 of 1" in capsys.readouterr().out
    assert cli_main(["inspect", "--take", "Scene", str(EMPTIES)]) == 0
    assert cli_main(["inspect", "--take", "0", str(EMPTIES)]) == 0


@pytest.mark.parametrize("take, reason", [(1, "no take 1"), ("Walk", "no take named 'Walk'")])
def test_unknown_take(take, reason):
    with pytest.raises(ClipReadError, match=reason):
        read_clip(EMPTIES, take=take)


def _truncated(tmp_path):
    p = tmp_path / "cut.fbx"
    p.write_bytes(EMPTIES.read_bytes()[:60_000])
    return p


def _garbage(tmp_path):
    p = tmp_path / "noise.fbx"
    p.write_bytes(bytes(range(256)) * 8)
    return p


def _header_only(tmp_path):
    p = tmp_path / "header.fbx"
    p.write_bytes(EMPTIES.read_bytes()[:27] + b"\x00" * 400)
    return p


def _empty(tmp_path):
    p = tmp_path / "empty.fbx"
    p.write_bytes(b"")
    return p


@pytest.mark.parametrize(
    "make, reason",
    [
        (_truncated, "not a readable FBX file"),
        (_garbage, "not an FBX file"),
        (_header_only, "no animation stacks"),  # ufbx reads the zeros as an empty scene
        (_empty, "empty file"),
        (lambda tmp: STATIC, "no animation stacks"),
    ],
)
def test_bad_fbx_one_line_error_nothing_written(tmp_path, make, reason, capsys):
    bad = make(tmp_path)
    with pytest.raises(ClipReadError, match=reason) as e:
        read_clip(bad)
    assert "\n" not in str(e.value)
    out = tmp_path / "out.anim"
    assert cli_main(["convert", str(bad), str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("curveeditor-cli: error:")


def test_missing_binding_says_how_to_install(monkeypatch):
    monkeypatch.setattr(fbx_io, "_import_binding", lambda: None)
    with pytest.raises(ClipReadError, match=r"needs the 'fbx' extra: pip install 'curveeditor\[fbx\]'"):
        read_clip(EMPTIES)


def test_channels_keyed_at_different_times_merge_exactly():
    """Channels with their own key times become one curve on the union of the times; each channel
    plays as before (an unweighted cubic split exactly)."""
    ax = Curve.make(
        [0.0, 1.0, 2.0], [[0.0], [40.0], [10.0]], [[0.0], [20.0], [-5.0]], [[30.0], [10.0], [0.0]]
    )
    ay = Curve.make(
        [0.0, 0.5, 2.0], [[5.0], [-20.0], [30.0]], [[0.0], [-60.0], [0.0]], [[-10.0], [15.0], [0.0]]
    )
    merged, why = fbx_io._euler_curve([ax, ay, None], np.array([0.0, 0.0, 7.0]))
    assert why == "" and merged is not None
    np.testing.assert_array_equal(merged.time, [0.0, 0.5, 1.0, 2.0])
    grid = np.linspace(0, 2, 801)
    got = evaluate(merged, grid)
    np.testing.assert_allclose(got[:, 0], evaluate(ax, grid)[:, 0], atol=1e-9)
    np.testing.assert_allclose(got[:, 1], evaluate(ay, grid)[:, 0], atol=1e-9)
    np.testing.assert_allclose(got[:, 2], 7.0)


def test_constant_and_weighted_fbx_keys():
    dt = np.dtype(
        [
            ("time", "<f8"),
            ("value", "<f8"),
            ("interpolation", "<i4"),
            ("left", [("dx", "<f4"), ("dy", "<f4")]),
            ("right", [("dx", "<f4"), ("dy", "<f4")]),
        ]
    )
    kf = np.zeros(3, dtype=dt)
    kf["time"] = [1.0, 2.0, 4.0]
    kf["value"] = [0.0, 10.0, 0.0]
    kf["interpolation"] = [0, 3, 3]  # constant, then a cubic with a long out handle
    kf["right"]["dx"] = [0.3, 1.0, 0.6]
    kf["right"]["dy"] = [0.0, 5.0, 0.0]
    kf["left"]["dx"] = [0.3, 0.3, 0.5]
    kf["left"]["dy"] = [0.0, 0.0, 1.0]
    curve, why = fbx_io._channel_curve(kf, 1.0)
    assert why == ""
    np.testing.assert_array_equal(curve.time, [0.0, 1.0, 3.0])  # relative to the take's start
    assert np.isinf(curve.out_slope[0, 0]) and np.isinf(curve.in_slope[1, 0])  # stepped
    assert evaluate(curve, [0.99])[0, 0] == 0.0
    assert curve.weighted_mode[1, 0] & 2 and abs(curve.out_weight[1, 0] - 0.5) < 1e-6
    assert curve.weighted_mode[2, 0] & 1 and abs(curve.in_weight[2, 0] - 0.25) < 1e-6
    assert abs(curve.out_slope[1, 0] - 5.0) < 1e-6 and abs(curve.in_slope[2, 0] - 2.0) < 1e-6


def test_resampled_nodes_are_frame_samples(monkeypatch):
    """A node Unity resamples (here: every node, as if they all had pre-rotations) comes out as
    quaternion keys at the frames, the same poses."""
    monkeypatch.setattr(fbx_io, "_has_pre_post", lambda node: True)
    fbx, bvh = read_clip(EMPTIES), read_clip(BVH)
    assert len(fbx.meta["resampled"]) == len(fbx.tracks)
    for t in bvh.tracks:
        f = fbx.track(t.path)
        assert f.kind == QUATERNION and f.meta["frame_poses"]
        assert _frames_error(f, t) < 1e-3


def test_two_stacks_are_two_clips(capsys):
    """``chain_takes.fbx``: one node, two Blender actions exported as two animation stacks."""
    takes = DATA / "chain_takes.fbx"
    first = read_clip(takes)
    assert first.meta["takes"] == ["Head|Nod", "Head|Turn"] and first.meta["take"] == "Head|Nod"
    assert first.name == "Head|Nod" and first.tracks[0].n_keys == 21
    turn = read_clip(takes, take="Head|Turn")
    assert turn.tracks[0].n_keys == 31 and read_clip(takes, take=1).tracks[0].n_keys == 31
    # Blender turned the empty 90 deg about its up axis (Z in Blender, Y in the FBX): in Unity's frame
    # the turn is about Y, since the start pose.
    q = key_quaternions(turn.tracks[0])
    d = quat_mul(q[-1], quat_conj(q[0]))
    angle = np.degrees(2 * np.arccos(min(1.0, abs(d[3]))))
    axis = d[:3] / np.linalg.norm(d[:3])
    assert abs(angle - 90.0) < 1e-3 and abs(abs(axis[1]) - 1.0) < 1e-6
    assert cli_main(["inspect", "--take", "Head|Turn", str(takes)]) == 0
    assert "take: 'Head|Turn', 2 of 2" in capsys.readouterr().out


def test_take_names_list_every_take_without_reading_one():
    from curveeditor.io import take_names

    assert take_names(DATA / "chain_takes.fbx") == ["Head|Nod", "Head|Turn"]
    assert take_names(ARMATURE) == read_clip(ARMATURE).meta["takes"]
    assert take_names(BVH) == []  # a BVH holds one clip
    with pytest.raises(ClipReadError):
        take_names(DATA / "no-such-file.fbx")


def test_batch_writes_every_take_of_an_fbx(tmp_path):
    """A batch over a file of several takes writes one output per take, named ``<name>@<take>`` as
    Unity names an FBX's animation files; each is read with its take and reported with it."""
    from curveeditor.batch.runner import run_batch
    from curveeditor.engine.recipe import Recipe

    src = tmp_path / "in"
    src.mkdir()
    for f in ("chain_takes.fbx", "chain_armature.fbx"):
        (src / f).write_bytes((DATA / f).read_bytes())
    out = tmp_path / "out"
    report = run_batch([src], out, Recipe.of({"op": "unwrap"}), jobs=1)
    assert report.exit_status == 0
    got = [(Path(f.input).name, f.take, Path(f.output).name) for f in report.files]
    assert got == [
        ("chain_armature.fbx", None, "chain_armature.anim"),
        ("chain_takes.fbx", "Head|Nod", "chain_takes@Head_Nod.anim"),
        ("chain_takes.fbx", "Head|Turn", "chain_takes@Head_Turn.anim"),
    ]
    for take, name in (
        ("Head|Nod", "chain_takes@Head_Nod.anim"),
        ("Head|Turn", "chain_takes@Head_Turn.anim"),
    ):
        written = read_clip(out / name)
        source = read_clip(DATA / "chain_takes.fbx", take=take)
        assert written.tracks[0].n_keys == source.tracks[0].n_keys
        err = geodesic_angle(
            played(written.tracks[0], source.tracks[0].times), key_quaternions(source.tracks[0])
        )
        assert err.max() < 0.012
    d = report.files[1].as_dict()
    assert d["take"] == "Head|Nod" and "take" not in report.files[0].as_dict()
