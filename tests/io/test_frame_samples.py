"""A BVH holds samples, not curves (issue 8 section 2): written at its frames, no keys added unless a
tolerance demands them; at the frames the pose, between frames the Slerp; bounded work in rekey."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from curveeditor.engine.clip import key_quaternions, played
from curveeditor.engine.reorder import convert_kind, convert_order, is_frame_samples, rekey
from curveeditor.engine.resample import slerp
from curveeditor.engine.rotations import geodesic_angle, hemisphere_continuous
from curveeditor.io import read_clip, write_checked
from tests.conftest import corpus_files


def write_bvh(path, rows, frame_time=1 / 30):
    """Two joints, ZYX rotation channels; ``rows`` (F, 6): Hips Z Y X, Spine Z Y X (degrees)."""
    head = [
        "HIERARCHY",
        "ROOT Hips",
        "{",
        "  OFFSET 0 0 0",
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
        "  JOINT Spine",
        "  {",
        "    OFFSET 0 1 0",
        "    CHANNELS 3 Zrotation Yrotation Xrotation",
        "    End Site",
        "    {",
        "      OFFSET 0 1 0",
        "    }",
        "  }",
        "}",
        "MOTION",
        f"Frames: {len(rows)}",
        f"Frame Time: {frame_time}",
    ]
    body = [" ".join(["0", "0", "0"] + [repr(float(v)) for v in r]) for r in rows]
    path.write_text("\n".join(head + body) + "\n")


def wavy_rows(frames=90):
    i = np.arange(frames)
    rows = np.stack(
        [
            40 * np.sin(i / 9.0),
            25 * np.cos(i / 7.0),
            (i * 7.0 + 180) % 360 - 180,  # X winds through +-180 every ~51 frames: a wrap jump
            10 * np.sin(i / 5.0),
            60 * np.sin(i / 11.0),
            30 * np.cos(i / 6.0),
        ],
        axis=1,
    )
    return rows


def frame_figures(src_track, written_track):
    q = hemisphere_continuous(key_quaternions(src_track))
    t = src_track.times
    at = geodesic_angle(played(written_track, t), q).max()
    u = np.linspace(0, 1, 9)[1:-1]
    mid = (t[:-1, None] + np.diff(t)[:, None] * u).ravel()
    between = geodesic_angle(played(written_track, mid), slerp(t, q, mid)).max()
    return at, between


def test_bvh_to_anim_keys_at_frames_only_and_plays_the_samples(tmp_path):
    bvh = tmp_path / "wavy.bvh"
    write_bvh(bvh, wavy_rows())
    src = read_clip(bvh)
    assert all(is_frame_samples(t) for t in src.tracks)
    check = write_checked(src, tmp_path / "wavy.anim")
    back = read_clip(tmp_path / "wavy.anim")
    for t in src.tracks:
        w = back.track(t.path)
        assert w.n_keys == t.n_keys == 90  # the old writer added keys to follow the ZYX Hermite
        at, between = frame_figures(t, w)
        assert at < 0.01
        # Between frames the short way (Slerp), also across the X wrap: the old file played the
        # ZYX channels' 353 deg spin there.
        assert between < 0.5
    c = check.track("Hips")
    assert c.keys_added == 0 and c.writer.frames and c.writer.key_error < 0.01
    assert c.writer.bound is None  # between frames reported, not bounded, without --tolerance


def test_tolerance_adds_keys_only_where_needed(tmp_path):
    bvh = tmp_path / "wavy.bvh"
    write_bvh(bvh, wavy_rows())
    src = read_clip(bvh)
    loose = write_checked(src, tmp_path / "a.anim")
    tight = write_checked(src, tmp_path / "b.anim", tolerance=0.0003)
    assert tight.keys_added > 0
    assert tight.keys_added < loose.keys_written  # not a key per sample of a dense grid
    for c in tight.tracks:
        assert c.writer.max_error <= 0.0003 + 0.002 and c.writer.bound == pytest.approx(0.0023)


def test_order_conversion_of_samples_keeps_frames(tmp_path):
    bvh = tmp_path / "wavy.bvh"
    write_bvh(bvh, wavy_rows())
    t = read_clip(bvh).track("Hips")
    for conv in (convert_order(t, "zxy"), convert_kind(t, "quaternion")):
        assert conv.n_keys == t.n_keys
        at, between = frame_figures(t, conv)
        # The short way between frames (the old conversion kept the ZYX channels' 353 deg spin).
        assert at < 1e-6 and between < 2.0


def test_cli_convert_reports_frames_and_tolerance(tmp_path):
    bvh = tmp_path / "wavy.bvh"
    write_bvh(bvh, wavy_rows())
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "convert", str(bvh), str(tmp_path / "o.anim")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert "written file read back: 180 keys (no keys added); max deviation at frames" in r.stdout
    assert "between frames" in r.stdout and "key(s) added to keep the motion" not in r.stderr


def test_rekey_work_is_bounded_for_a_huge_cell(tmp_path):
    """A 1e6 deg cell plus a conversion climbed to 3.8 GB and a MemoryError (issue 11)."""
    csv = tmp_path / "big.csv"
    csv.write_text("path,time,x,y,z\nA,0,0,0,0\nA,0.033,0,10,5\nA,0.066,1000000,20,0\nA,0.1,0,30,0\n")
    track = read_clip(csv).track("A")
    out = rekey(track, "quaternion", "zxy")
    assert out.n_keys <= 8 * track.n_keys + 5000
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "curveeditor.cli",
            "clean",
            str(csv),
            "--to-kind",
            "quaternion",
            "-o",
            str(tmp_path / "o.anim"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr and r.stderr.count("\n") <= 1


@pytest.mark.parametrize(
    "path",
    [p for p in corpus_files("bvh", "*.bvh") if "kick_normal" in p.name or "bvh_test2" in p.name],
    ids=lambda p: p.name[-30:],
)
def test_corpus_bvh_written_at_frames(path, tmp_path):
    # kick_normal_001 got 1,635 keys added and played up to 180 deg from its frames' Slerp.
    src = read_clip(path)
    check = write_checked(src, tmp_path / "o.anim")
    assert check.keys_added == 0
    for c in check.tracks:
        assert c.writer.key_error < 0.01
    assert max(c.writer.max_error for c in check.tracks) < 20.0


def test_frame_deviation_figures_match_a_direct_evaluation(tmp_path):
    """verify.deviation reads the error at the frames off its grid evaluation and shares that
    evaluation between the writer's and the promise's check (memo): the figures of evaluating
    the written track at the frames and on the grid separately."""
    from curveeditor.engine.reduce import dense_check_grid
    from curveeditor.io.verify import Promise, check_written, deviation

    bvh = tmp_path / "wavy.bvh"
    write_bvh(bvh, wavy_rows())
    src = read_clip(bvh)
    write_checked(src, tmp_path / "w.anim", tolerance=0.0003)  # keys added between some frames
    back = read_clip(tmp_path / "w.anim")
    assert any(back.track(t.path).n_keys > t.n_keys for t in src.tracks)
    for t in src.tracks:
        w = back.track(t.path)
        q = key_quaternions(t)
        grid, _ = dense_check_grid(np.union1d(t.times, w.times))
        at = geodesic_angle(played(w, t.times), q)
        between = geodesic_angle(played(w, grid), slerp(t.times, q, grid))
        memo: dict = {}
        for m in (None, memo, memo):  # without a memo, filling it, reading it
            d = deviation(t, w, frames=True, memo=m)
            # Equal up to the last bits (numpy's SIMD loops may round a long batch differently).
            assert d.key_error == pytest.approx(float(at.max()), rel=1e-9, abs=1e-12)
            assert d.max_error == pytest.approx(float(between.max()), rel=1e-9, abs=1e-12)
    # The promise against the same source: the same figures as the writer's check.
    check = check_written(src, back, Promise(reference=src.with_tracks(list(src.tracks))), ".anim")
    for tc in check.tracks:
        assert tc.promise is None or tc.promise.max_error == tc.writer.max_error


def test_sampled_tracks_together_are_the_tracks_one_by_one(tmp_path):
    """reorder.sampled_tracks (the joints of a BVH judged together) = sampled_track per joint, with
    Euler and quaternion picks, a joint already in ZXY, other key times and a tolerance."""
    from dataclasses import replace

    from curveeditor.engine.reorder import sampled_track, sampled_tracks
    from curveeditor.engine.rotations import euler_to_quat
    from curveeditor.engine.tangents import make_curve

    p = tmp_path / "a.bvh"
    write_bvh(p, wavy_rows(90))
    clip = read_clip(p)
    hips, spine = clip.tracks
    t = hips.times
    fast = np.stack([170 * np.sin(t * 9), 80 * np.cos(t * 7), t * 900.0], axis=1)  # big steps: quaternions
    spin = replace(spine, path="Fast", curve=make_curve(t, fast, "linear"))
    zxy = replace(spine, path="Zxy", order="zxy")
    qcurve = make_curve(t, euler_to_quat(fast, "ZYX"), "linear")
    quat = replace(spine, path="Q", kind="quaternion", curve=qcurve)
    other = replace(spine, path="Other", curve=make_curve(t * 1.5, spine.curve.value, "linear"))
    slow = replace(spine, path="Slow", curve=make_curve(t, 0.05 * spine.curve.value, "linear"))
    tracks = [hips, spine, spin, zxy, quat, other, slow]
    for kw in ({}, {"tolerance_deg": 0.002}, {"kind": "quaternion"}):
        one = [sampled_track(x, **kw) for x in tracks]
        together = sampled_tracks(tracks, **kw)
        for a, b in zip(one, together, strict=True):
            assert (a.path, a.kind, a.order) == (b.path, b.kind, b.order)
            for f in ("time", "value", "in_slope", "out_slope", "tangent_mode"):  # bit for bit (-0 too)
                assert getattr(a.curve, f).tobytes() == getattr(b.curve, f).tobytes(), f
    assert {x.kind for x in sampled_tracks(tracks)} == {"euler", "quaternion"}


@pytest.mark.corpus
@pytest.mark.parametrize(
    "path", [p for p in corpus_files("bvh", "*.bvh") if "Gangnam" in p.name], ids=lambda p: p.name[:40]
)
def test_sampled_tracks_of_a_corpus_bvh_are_bit_for_bit_the_tracks_one_by_one(path):
    """Zeros of either sign included: a joined unwrap over all joints wrote -0 where one joint's
    own unwrap wrote 0 (the same poses, another file)."""
    from curveeditor.engine.reorder import sampled_track, sampled_tracks

    tracks = [t for t in read_clip(path).tracks if is_frame_samples(t)]
    for a, b in zip([sampled_track(t) for t in tracks], sampled_tracks(tracks), strict=True):
        assert (a.kind, a.order) == (b.kind, b.order)
        for f in ("time", "value", "in_slope", "out_slope"):
            assert getattr(a.curve, f).tobytes() == getattr(b.curve, f).tobytes(), (a.path, f)
