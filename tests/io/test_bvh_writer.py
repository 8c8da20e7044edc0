"""BVH writer: a BVH read and written back keeps its skeleton, channels, frames and poses; unwrapped
values are written as held; other orders/kinds are converted; clips that cannot be a BVH are refused
with one line and nothing written; the numbers' spelling round-trips."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from curveeditor.engine.clip import QUATERNION, key_quaternions, played
from curveeditor.engine.reduce import reduce_track
from curveeditor.engine.reorder import convert_kind, convert_order
from curveeditor.engine.resample import resample_track
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.unwrap import unwrap_track
from curveeditor.io import WRITE_FORMATS, read_clip, write_checked, write_clip
from curveeditor.io.bvh import read_bvh
from curveeditor.io.bvh_writer import bvh_bytes, format_block
from curveeditor.io.errors import ClipWriteError
from tests.conftest import corpus_files
from tests.io.test_bvh import SMALL

REPO = Path(__file__).resolve().parents[2]

#: Two joints, the root spinning through +-180 (a wrap the unwrap removes) and a ZYX child.
WRAPPED = """HIERARCHY
ROOT Hips
{
\tOFFSET 0.5 -1.25 3
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10.125 0
\t\tCHANNELS 3 Zrotation Yrotation Xrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 4 0
\t\t}
\t}
}
MOTION
Frames: 5
Frame Time: 0.0333333
0.1 90.123456789 -3 10 0 170 1 2 3
0.2 90.2 -3 10 0 178 1.5 2 3
0.3 90.3 -3 10 0 -176 2 2 3
0.4 90.4 -3 10 0 -168 2.5 2 3
0.5 90.5 -3 10 0 -160 3 2 3
"""


def _poses(clip):
    return {t.path: key_quaternions(t) for t in clip.tracks}


def _frame_error(a, b) -> float:
    """Largest geodesic degrees between the poses of two clips at their (shared) frames."""
    qa, qb = _poses(a), _poses(b)
    assert qa.keys() == qb.keys()
    return max(float(np.max(geodesic_angle(qa[p], qb[p]))) for p in qa)


def test_bvh_is_a_write_format():
    assert WRITE_FORMATS[".bvh"] == ("curveeditor.io.bvh_writer", "write_bvh")


@pytest.mark.parametrize("path", corpus_files("bvh", "*.bvh"), ids=lambda p: p.stem[-30:])
def test_corpus_round_trip(path, tmp_path):
    clip = read_clip(path)
    out = tmp_path / "out.bvh"
    check = write_checked(clip, out, protect=[path])
    back = read_clip(out)
    # Skeleton: names, nesting, OFFSETs (exact), CHANNELS lists in their own orders, End Sites.
    assert back.meta["hierarchy"] == clip.meta["hierarchy"]
    assert [t.order for t in back.tracks] == [t.order for t in clip.tracks]
    assert [t.meta["bvh_channels"] for t in back.tracks] == [t.meta["bvh_channels"] for t in clip.tracks]
    assert back.meta["frame_time"] == clip.meta["frame_time"]
    assert back.meta["frames"] == clip.meta["frames"]
    assert back.frame_rate == clip.frame_rate
    for a, b in zip(clip.tracks, back.tracks, strict=True):
        assert np.array_equal(a.times, b.times)
        # Values as held, within the 6 decimals written (the corpus holds 6 or fewer).
        assert np.max(np.abs(a.curve.value - b.curve.value)) <= 5.001e-7
    assert _frame_error(clip, back) < 1e-4
    for a, b in zip(clip.other_tracks, back.other_tracks, strict=True):
        assert a.path == b.path
        assert np.array_equal(a.curve.value, b.curve.value)  # positions exactly
    # The figures are the written file's, at its frames.
    assert max(t.writer.key_error for t in check.tracks) < 1e-4
    assert all(t.writer.frames for t in check.tracks)


def test_small_file_round_trip_keeps_text_layout(tmp_path):
    src = tmp_path / "small.bvh"
    src.write_text(SMALL)
    clip = read_bvh(src)
    data, warnings = bvh_bytes(clip)
    assert warnings == []
    text = data.decode()
    assert text.startswith("HIERARCHY\nROOT Hips\n{\n\tOFFSET 1 2 3\n")
    assert "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n" in text
    assert "\t\tCHANNELS 6 Zposition Yposition Xposition Yrotation Zrotation Xrotation\n" in text
    assert "\tJOINT Leg\n\t{\n\t\tOFFSET 3 -1 0\n\t\tEnd Site\n" in text  # CHANNELS 0: no line
    assert "MOTION\nFrames: 3\nFrame Time: 0.04\n" in text
    # The file's own values, in its own channel order (mirrored into Unity's frame and back).
    assert text.endswith(
        "1 2 3 10 20 30 5 6 7 0.1 0.2 0.3 90 -45 170\n"
        "4 5 6 -179 179 0 8 9 10 0.4 0.5 0.6 91 -46 -170\n"
        "7 8 9 12 22 32 11 12 13 0.7 0.8 0.9 92 -47 175\n"
    )


def test_unwrapped_values_written_as_held(tmp_path):
    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    clip = read_bvh(src)
    unwrapped = clip.with_tracks([unwrap_track(t) for t in clip.tracks])
    hips = unwrapped.track("Hips").curve.value
    assert hips[2, 1] == pytest.approx(-184.0)  # Unity y = -(file Y) = 176, unwrapped past -180
    out = tmp_path / "out.bvh"
    write_checked(unwrapped, out)
    back = read_bvh(out)
    assert np.allclose(back.track("Hips").curve.value, hips, atol=5e-7)
    rows = out.read_text().split("Frame Time: 0.0333333\n")[1].splitlines()
    assert rows[2].split()[5] == "184"  # file Yrotation -176 written as 184: the unwrap kept
    # Positions exactly, more than 6 decimals included.
    assert rows[0].split()[:3] == ["0.1", "90.123456789", "-3"]
    assert _frame_error(clip, back) < 1e-4


@pytest.mark.parametrize("convert", ["quaternion", "zxy"])
def test_other_kind_or_order_converted_to_the_joints_order(tmp_path, convert):
    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    clip = read_bvh(src)
    if convert == "quaternion":
        tracks = [convert_kind(t, QUATERNION) for t in clip.tracks]
    else:
        tracks = [convert_order(t, "zxy") for t in clip.tracks]
    assert all(t.kind == QUATERNION or t.order == "zxy" for t in tracks)
    out = tmp_path / "out.bvh"
    write_checked(clip.with_tracks(tracks), out)
    back = read_bvh(out)
    assert [t.order for t in back.tracks] == ["ZXY", "ZYX"]  # the joints' own orders
    assert _frame_error(clip, back) < 1e-4
    # Followed continuously: no step of 180 or more between frames in any channel.
    assert np.max(np.abs(np.diff(back.track("Hips").curve.value, axis=0))) < 20


def test_resampled_clip_writes_its_new_frames(tmp_path):
    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    clip = read_bvh(src)
    res = clip.with_tracks([resample_track(t, 60.0, "slerp") for t in clip.tracks])
    others = clip.other_tracks
    out = tmp_path / "out.bvh"
    write_checked(res, out)
    back = read_bvh(out)
    assert back.frame_rate == 60.0
    assert back.meta["frames"] == res.tracks[0].n_keys
    assert np.allclose(back.tracks[0].times, res.tracks[0].times)
    for t in res.tracks:
        err = geodesic_angle(played(back.track(t.path), t.times), played(t, t.times))
        assert np.max(err) < 1e-4
    # The root position sampled at the new frames (its curve evaluated there).
    assert back.other_tracks[0].curve.value.shape == (res.tracks[0].n_keys, 3)
    assert back.other_tracks[0].curve.value[0].tolist() == others[0].curve.value[0].tolist()


def test_reduced_curves_sampled_at_the_frame_rate(tmp_path):
    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    clip = read_bvh(src)
    red = clip.with_tracks([reduce_track(t, 5.0) for t in clip.tracks])
    assert red.tracks[1].n_keys < clip.tracks[1].n_keys
    out = tmp_path / "out.bvh"
    check = write_checked(red, out)
    back = read_bvh(out)
    assert back.meta["frames"] == 5
    for t in red.tracks:
        frames = back.track(t.path).times
        err = geodesic_angle(played(back.track(t.path), frames), played(t, frames))
        assert np.max(err) < 1e-4  # what Unity plays of the reduced curve, at every frame
    assert max(c.writer.max_error for c in check.tracks) < 1e-4


def _refused(clip, out: Path, match: str):
    with pytest.raises(ClipWriteError, match=match) as info:
        write_clip(clip, out)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(str(out) + ": ")
    assert not out.exists()
    assert list(out.parent.glob(".*tmp")) == []


def test_clip_without_skeleton_refused(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("path,time,x,y,z\nHips,0,0,0,0\nHips,0.5,10,0,0\n")
    _refused(read_clip(csv), tmp_path / "o.bvh", "no BVH skeleton")


def test_unsupported_clips_refused(tmp_path):
    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    clip = read_bvh(src)
    out = tmp_path / "o.bvh"
    hier = [dict(j) for j in clip.meta["hierarchy"]]
    hier[1]["offset"] = [0.0, 1.0]
    _refused(_with_meta(clip, hier), out, "offset needs 3 numbers")
    stray = clip.tracks[0].__class__("Hips/Tail", "euler", clip.tracks[0].curve, order="ZXY")
    _refused(clip.with_tracks(list(clip.tracks) + [stray]), out, "not a joint with rotation channels")
    _refused(
        clip.with_tracks(clip.tracks[:1]), out, "has rotation channels but the clip has no rotation track"
    )
    hier = [dict(j) for j in clip.meta["hierarchy"]]
    hier[1]["name"] = "Spi{ne"
    _refused(_with_meta(clip, hier), out, "cannot be written")


def _with_meta(clip, hierarchy):
    from dataclasses import replace

    return replace(clip, meta=dict(clip.meta, hierarchy=hierarchy))


def test_format_block_spelling():
    rng = np.random.default_rng(4)
    v = rng.normal(0, 200, (50, 7))
    for k in range(6):
        v[:, k] = np.round(v[:, k], k)
    v[:, 6] = rng.normal(0, 1e-3, 50)  # many decimals: exact column
    exact = np.array([False] * 6 + [True])
    text = format_block(v, exact)
    back = np.array([[float(x) for x in line.split()] for line in text.decode().splitlines()])
    assert np.array_equal(back[:, :6], v[:, :6])  # 6 decimals or fewer: exact
    assert np.array_equal(back[:, 6], v[:, 6])  # exact column: repr where needed
    assert format_block(np.array([[0.0, -0.0, -1.5, 1e-7, 0.5, 123456.0, 1e12, 9.9999999]])) == (
        b"0 0 -1.5 0 0.5 123456 1000000000000.0 10\n"
    )
    assert (
        format_block(np.array([[-3.25e-9, 0.1 + 0.2]]), np.array([True, True]))
        == b"-3.25e-09 0.30000000000000004\n"
    )
    inexact = rng.normal(0, 100, (20, 3))
    got = np.array([[float(x) for x in ln.split()] for ln in format_block(inexact).decode().splitlines()])
    assert np.max(np.abs(got - inexact)) <= 5e-7
    with pytest.raises(ValueError):
        format_block(np.array([[np.nan]]))


def test_cli_clean_unwrap_to_bvh(tmp_path):
    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    out = tmp_path / "clean.bvh"
    report = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "curveeditor.cli",
            "clean",
            str(src),
            "--unwrap",
            "-o",
            str(out),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    back = read_bvh(out)
    assert back.track("Hips").curve.value[2, 1] == pytest.approx(-184.0)  # unwrapped, as written
    assert _frame_error(read_bvh(src), back) < 1e-4
    assert "at the frames" in r.stdout
    written = __import__("json").loads(report.read_text())["written"]["tracks"][0]
    assert written["promise"]["reference"] == "poses at the frames (a file of samples)"
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "convert", str(src), str(tmp_path / "conv.bvh")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "max deviation at the frames 0.0000 deg" in r.stdout and "between" not in r.stdout
    csv = tmp_path / "c.csv"
    csv.write_text("path,time,x,y,z\nHips,0,0,0,0\nHips,0.5,10,0,0\n")
    bad = tmp_path / "c.bvh"
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "clean", str(csv), "--unwrap", "-o", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.startswith(f"curveeditor-cli: error: {bad}: the clip has no BVH skeleton")
    assert len(r.stderr.strip().splitlines()) == 1
    assert not bad.exists()


def test_zero_frames_round_trip(tmp_path):
    src = tmp_path / "empty.bvh"
    src.write_text(WRAPPED.split("MOTION")[0] + "MOTION\nFrames: 0\nFrame Time: 0.0333333\n")
    clip = read_bvh(src)
    out = tmp_path / "out.bvh"
    write_checked(clip, out)
    back = read_bvh(out)
    assert back.meta["frames"] == 0 and back.meta["hierarchy"] == clip.meta["hierarchy"]
