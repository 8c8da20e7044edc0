"""Every write reads back: figures of the file written, checked before the rename (issues 8 and 11)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack, played
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.rotations import axis_angle_quat, geodesic_angle, hemisphere_continuous
from curveeditor.engine.tangents import make_curve
from curveeditor.io import ClipReadError, ClipWriteError, read_clip, write_checked, write_clip
from curveeditor.io.verify import Promise, WriteCheck


def spin_clip(n=302, seconds=5.0, turn=360.0) -> Clip:
    """A quaternion-keyed track turning ``turn`` deg about Y at constant speed (72 deg/s by default)."""
    t = np.linspace(0.0, seconds, n)
    q = hemisphere_continuous(axis_angle_quat(1, np.deg2rad(t * turn / seconds)))
    return Clip("spin", 60.0, [RotationTrack("Spin", "quaternion", make_curve(t, q, mode="auto"))])


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", *map(str, args)], capture_output=True, text=True, env=env
    )


@pytest.fixture
def spin_anim(tmp_path):
    path = tmp_path / "spin.anim"
    write_clip(spin_clip(), path)
    return path


def test_reduced_full_turn_written_anim_keeps_the_turn(spin_anim, tmp_path):
    """Issue 8 known failure: 302 keys -> reduce 0.5 -> the writer's hemisphere fix turned the file the
    other way for 2.5 s (180 deg off) while the table said 0.167 deg. Checked on the WRITTEN file."""
    out, rep = tmp_path / "out.anim", tmp_path / "r.json"
    r = run_cli("clean", spin_anim, "--reduce", "0.5", "-o", out, "--report", rep)
    assert r.returncode == 0, r.stderr
    src, back = read_clip(spin_anim), read_clip(out)
    d = diff_tracks(src.track("Spin"), back.track("Spin"))
    assert d.max_error < 0.5 + 0.012
    # The printed / reported figures are those of the file read back.
    report = json.loads(rep.read_text())
    row = report["tracks"][0]
    assert row["max_error"] == pytest.approx(d.max_error, abs=1e-6)
    assert row["keys_written"] == back.track("Spin").n_keys
    assert report["written"]["tracks"][0]["keys_written"] == back.track("Spin").n_keys
    assert f"{d.max_error:.6f}" in r.stdout
    # Warnings and figures agree: the keys the writer says it added are the keys in the file.
    added = back.track("Spin").n_keys - row["keys_after"]
    assert added > 0 and f"({added} key(s) added)" in r.stderr and f"+{added} by the writer" in r.stdout


def test_reduced_full_turn_csv_is_never_written_the_other_way(spin_anim, tmp_path):
    out = tmp_path / "out.csv"
    r = run_cli("clean", spin_anim, "--reduce", "0.5", "-o", out)
    src = read_clip(spin_anim).track("Spin")
    if r.returncode == 0:
        back = read_clip(out).track("Spin")
        assert diff_tracks(src, back).max_error < 0.5 + 0.012
    else:
        # A CSV (key values, ClampedAuto on read) cannot hold 3 fitted keys within the bound: refused.
        assert r.returncode == 2 and r.stderr.count("\n") == 1
        # At the input's keys the bound asked for holds exactly (issue 20), between them plus the
        # writer's tolerance.
        assert "track 'Spin' at " in r.stderr
        assert "deg from the input (bound 0.5 deg)" in r.stderr or "(bound 0.512 deg)" in r.stderr
        assert not out.exists()
    # Either way the key values follow the turn: 0 -> ~180 -> 360, never back to 0.
    from curveeditor.engine.export_checks import csv_track
    from curveeditor.engine.reduce import reduce_track

    reduced = reduce_track(src, 0.5)
    yaw = csv_track(reduced).curve.value[:, 1]
    assert np.all(np.diff(yaw) > 0) and yaw[-1] == pytest.approx(360.0, abs=0.5)


def test_a_file_missing_its_bound_is_not_written(tmp_path):
    clip = spin_clip()
    other = spin_clip(turn=350.0)  # 10 deg short at the end
    out = tmp_path / "o.anim"
    out.write_text("old")
    with pytest.raises(ClipWriteError) as info:
        write_checked(other, out, promise=Promise(reference=clip, bound_deg=0.5))
    msg = str(info.value)
    assert "\n" not in msg and "track 'Spin' at 5.000 s plays 10 deg from the input (bound 0.5 deg)" in msg
    assert out.read_text() == "old" and os.listdir(tmp_path) == ["o.anim"]


def test_write_checked_returns_the_read_back_figures(tmp_path):
    clip = spin_clip()
    check = write_checked(clip, tmp_path / "o.anim")
    assert isinstance(check, WriteCheck) and check.failure is None
    (t,) = check.tracks
    assert (t.keys_in, t.keys_written, t.keys_added) == (302, 302, 0)
    assert t.writer.max_error < 0.002 and t.writer.bound == pytest.approx(0.012)
    d = check.as_dict()
    assert d["tracks"][0]["writer"]["bound"] == pytest.approx(0.012)
    json.dumps(d)


def test_a_track_read_back_bit_for_bit_is_figured_as_the_dense_comparison_would(tmp_path):
    """The writer's figure of a track that reads back holding exactly the stored numbers is 0 without
    the dense comparison (issue 26: 1.4 s of a long take's check), as that comparison gives it."""
    from curveeditor.io.verify import as_format_stores, check_written, deviation

    clip = spin_clip()
    stored = as_format_stores(clip.tracks[0], ".anim")
    back = Clip("spin", 60.0, [as_format_stores(clip.tracks[0], ".anim")])
    (got,) = check_written(clip, back, ext=".anim").tracks
    dense = deviation(stored, back.tracks[0], bound=got.writer.bound, key_bound=got.writer.key_bound)
    assert got.writer == dense and got.writer.max_error == 0.0


def test_a_written_file_that_does_not_read_back_is_not_put_in_place(tmp_path, monkeypatch):
    from curveeditor.io import csv_io

    bad = "time,x\n1,2,3\n"
    monkeypatch.setattr(csv_io, "iter_csv", lambda blocks, with_speed=True, fname="", **_: iter([bad]))
    out = tmp_path / "o.csv"
    with pytest.raises(ClipWriteError) as info:
        write_clip(spin_clip(), out)
    assert "does not read back" in str(info.value)
    assert os.listdir(tmp_path) == []


def test_output_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.anim"
    real.write_text("old")
    link = tmp_path / "link.anim"
    link.symlink_to(real)
    write_clip(spin_clip(), link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert read_clip(real).track("Spin").n_keys == 302
    assert sorted(os.listdir(tmp_path)) == ["link.anim", "real.anim"]


def test_read_clip_refuses_non_regular_files(tmp_path):
    fifo = tmp_path / "pipe.anim"
    os.mkfifo(fifo)
    with pytest.raises(ClipReadError, match="not a regular file .it is a named pipe"):
        read_clip(fifo)  # used to block for ever in open()
    dev = tmp_path / "zero.anim"
    dev.symlink_to("/dev/zero")
    with pytest.raises(ClipReadError, match="character device"):
        read_clip(dev)  # used to read until memory ran out


def test_zero_quaternion_key_fails_before_any_write(spin_anim, tmp_path):
    text = spin_anim.read_text().splitlines(keepends=True)
    i = [k for k, line in enumerate(text) if "value: {x:" in line][4]
    text[i] = text[i].split("value:")[0] + "value: {x: 0, y: 0, z: 0, w: 0}\n"
    bad = tmp_path / "bad.anim"
    bad.write_text("".join(text))
    out = tmp_path / "o.anim"
    r = run_cli("clean", bad, "--unwrap", "-o", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    # The .anim reader names the key's line (read_clip's own check stays for the other readers).
    assert f"{bad}:{i + 1}: quaternion key" in r.stderr and "zero length" in r.stderr
    assert not out.exists()


def test_report_named_as_the_output_says_so(spin_anim, tmp_path):
    out = tmp_path / "o.anim"
    r = run_cli("clean", spin_anim, "--reduce", "0.5", "-o", out, "--report", out)
    assert r.returncode == 2 and "input" not in r.stderr
    assert "--report names the output file" in r.stderr and not out.exists()


def test_convert_reports_read_back_and_reduce_hint(spin_anim, tmp_path):
    r = run_cli("convert", spin_anim, tmp_path / "c.anim")
    assert r.returncode == 0, r.stderr
    assert "written file read back: 302 keys (no keys added)" in r.stdout
    assert re.search(r"--reduce 0.5 \(Unity's import default error\) would keep \d+ of 302 keys", r.stdout)


def test_reduce_hint_of_a_long_clip_is_an_estimate_that_says_so(monkeypatch):
    """Past ``reduce.ESTIMATE_SAMPLE_KEYS`` the hint is measured on a sample: rounded to three
    digits, with the share of the keys it was measured on."""
    from curveeditor import cli
    from curveeditor.engine import reduce as reduce_mod
    from tests.engine.test_reduce_long import mocap_track

    clip = Clip("takes", 120.0, [mocap_track(f"J{i}", 3_000, seed=i) for i in range(6)])
    exact = cli._reduce_hint(clip, "out.anim")
    assert re.fullmatch(r".* would keep \d+ of 18000 keys \(\d+% fewer\)", exact)
    monkeypatch.setattr(reduce_mod, "ESTIMATE_SAMPLE_KEYS", 6_000)
    line = cli._reduce_hint(clip, "out.anim")
    m = re.fullmatch(
        r".* would keep about (\d+) of 18000 keys \(\d+% fewer; estimated on 33% of the keys\)", line
    )
    assert m, line
    kept = int(re.search(r"keep (\d+)", exact).group(1))
    assert abs(int(m.group(1)) - kept) <= 0.15 * kept
    estimate, _ = reduce_mod.kept_key_estimate(clip.tracks, 0.5)
    assert int(m.group(1)) == round(estimate, 3 - len(str(estimate)))


def test_unity_plays_the_csv_the_same_at_keys(tmp_path):
    clip = spin_clip(n=31, seconds=3.0, turn=270.0)
    check = write_checked(clip, tmp_path / "o.csv")
    back = read_clip(tmp_path / "o.csv").track("Spin")
    src = clip.track("Spin")
    assert geodesic_angle(played(src, src.times), played(back, src.times)).max() < 1e-6
    assert check.tracks[0].writer.key_error < 1e-6 and check.tracks[0].writer.bound is None


def test_batch_writes_are_read_back_against_the_input(spin_anim, tmp_path):
    from curveeditor.batch.runner import run_batch
    from curveeditor.engine.recipe import Recipe

    out = tmp_path / "o"
    out.mkdir()
    rep = run_batch([str(spin_anim)], str(out), Recipe.of({"op": "reduce", "max_error": 0.5}), jobs=1)
    assert rep.exit_status == 0, [f.error for f in rep.files]
    back = read_clip(out / "spin.anim").track("Spin")
    detail = rep.files[0].track_details[0]
    assert detail["keys_written"] == back.n_keys
    d = diff_tracks(read_clip(spin_anim).track("Spin"), back)
    assert detail["max_error"] == pytest.approx(d.max_error, abs=1e-6) and d.max_error < 0.512


def test_sample_of_a_mixed_order_bvh_reads_back(tmp_path):
    """``sample`` of joints in several Euler orders wrote a CSV our reader refused (issue 11)."""
    bvh = tmp_path / "mixed.bvh"
    bvh.write_text(
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
        "Yrotation Xrotation\n  JOINT Arm\n  {\n    OFFSET 0 1 0\n    "
        "CHANNELS 3 Xrotation Yrotation Zrotation\n"
        "    End Site\n    {\n      OFFSET 0 1 0\n    }\n  }\n}\nMOTION\nFrames: 3\nFrame Time: 0.1\n"
        "0 0 0 10 20 30 40 50 60\n0 0 0 15 25 35 45 55 65\n0 0 0 20 30 40 50 60 70\n"
    )
    out = tmp_path / "s.csv"
    r = run_cli("sample", bvh, "--rate", "20", "-o", out)
    assert r.returncode == 0, r.stderr
    src, back = read_clip(bvh), read_clip(out)
    for t in src.tracks:
        b = back.track(t.path)
        assert geodesic_angle(played(t, b.times), played(b, b.times)).max() < 0.01


def test_sample_refuses_a_grid_past_its_row_bound(tmp_path):
    csv = tmp_path / "long.csv"
    csv.write_text("path,time,x,y,z\nA,0,0,0,0\nA,1,0,10,0\nA,100000,0,20,0\n")
    out = tmp_path / "s.csv"
    r = run_cli("sample", csv, "--rate", "30", "-o", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "rows (at most 1,000,000)" in r.stderr
    assert not out.exists()


def test_a_clip_over_the_track_limit_is_refused_in_one_line(tmp_path, monkeypatch):
    """10,000 sibling joints read in a second but every command then spent over 20 s on them (a few ms
    per track): read_clip refuses clips over MAX_ROTATION_TRACKS, overridable by the environment."""
    lines = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    for i in range(30):
        lines += [f"JOINT J{i}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
        lines += ["End Site", "{", "OFFSET 0 1 0", "}", "}"]
    lines += ["}", "MOTION", "Frames: 1", "Frame Time: 0.033333", " ".join(["0"] * 93)]
    bvh = tmp_path / "many.bvh"
    bvh.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("CURVEEDITOR_MAX_TRACKS", "20")
    with pytest.raises(ClipReadError) as info:
        read_clip(bvh)
    assert str(info.value) == (
        f"{bvh}: 31 rotation tracks, over the 20 limit for one clip (set CURVEEDITOR_MAX_TRACKS to raise it)"
    )
    monkeypatch.setenv("CURVEEDITOR_MAX_TRACKS", "31")
    assert len(read_clip(bvh).tracks) == 31


def _with_float_curves(clip: Clip) -> Clip:
    """``clip`` plus a blend-shape curve and a root position curve, as an ``.anim`` holds them."""
    from dataclasses import replace as _replace

    from curveeditor.engine.clip import OtherTrack

    t = np.linspace(0.0, 2.0, 9)
    blend = make_curve(t, 50 + 50 * np.sin(3 * t), mode="clamped_auto")
    pos = make_curve(t, np.stack([t, 0.1 * t * t, 1 - t], axis=1), mode="clamped_auto")
    others = (
        OtherTrack("Body", "blendShape.Smile", "float", blend, blend.time, {"class_id": 137}),
        OtherTrack("", "m_LocalPosition", "position", pos, pos.time),
    )
    return _replace(clip, other_tracks=others)


def test_float_and_position_curves_are_checked_as_read_back(tmp_path):
    """An ``.anim`` holds a clip's float, position and scale curves: each is compared as read back
    (issue 22: edited float curves are exported), figures in the check, its JSON and one line."""
    clip = _with_float_curves(spin_clip())
    check = write_checked(clip, tmp_path / "o.anim")
    got = {(c.kind, c.name): c for c in check.curves}
    assert set(got) == {("float", "Body:blendShape.Smile"), ("position", "m_LocalPosition")}
    smile = got[("float", "Body:blendShape.Smile")]
    assert (smile.keys_in, smile.keys_written) == (9, 9)
    assert smile.max_error <= smile.bound == pytest.approx(1e-4, rel=0.01)  # 1e-6 of its ~100 %
    assert check.as_dict()["curves"][0]["name"] == check.curves[0].name
    assert check.curves_line() == "2 float/position/scale curve(s) read back exactly as stored"
    # A CSV does not hold them: nothing to compare (the writer names them among its warnings).
    csv = write_checked(clip, tmp_path / "o.csv")
    assert csv.curves == () and csv.curves_line() is None
    assert any("non-rotation curve" in w for w in csv.warnings)


@pytest.mark.parametrize("damage", ["value", "missing"])
def test_a_float_curve_that_reads_back_otherwise_is_not_written(tmp_path, monkeypatch, damage):
    from dataclasses import replace as _replace

    from curveeditor.io import verify

    real = verify._read_back

    def damaged(tmp, target, clip, order=None):
        back = real(tmp, target, clip, order)
        others = []
        for o in back.other_tracks:
            if o.attribute == "blendShape.Smile":
                if damage == "missing":
                    continue
                value = o.curve.value.copy()
                value[4, 0] += 0.5
                o = o.with_curve(o.curve.with_keys(value=value))
            others.append(o)
        return _replace(back, other_tracks=tuple(others))

    monkeypatch.setattr(verify, "_read_back", damaged)
    out = tmp_path / "o.anim"
    miss = (
        r"float curve 'Body:blendShape.Smile' at 1\.000 s reads back 0\.5 from the clip to write"
        if damage == "value"
        else "float curve 'Body:blendShape.Smile' is missing from the written file; nothing written"
    )
    with pytest.raises(ClipWriteError, match=miss):
        write_checked(_with_float_curves(spin_clip()), out)
    assert not out.exists()


def test_corpus_clips_float_curves_read_back_within_their_bounds(tmp_path):
    from tests.conftest import corpus_files

    clips = corpus_files("anim", "*.anim")
    if not clips:
        pytest.skip("../shared/corpus is not present")
    checked = 0
    for path in clips:
        check = write_checked(read_clip(path), tmp_path / "o.anim")
        assert all(c.max_error <= c.bound for c in check.curves), path.name
        checked += len(check.curves)
    assert checked > 100  # (muscle, blend-shape, position and scale curves of the corpus)


def test_the_curves_line_names_the_curve_nearest_its_bound():
    from curveeditor.io.verify import CurveCheck

    check = WriteCheck(
        "o.anim",
        (),
        curves=(
            CurveCheck("Body:blendShape.Smile", "float", 9, 9, 2e-5, 1.0, 1e-4),
            CurveCheck("m_LocalPosition", "position", 9, 9, 5e-7, 0.5, 1e-6),
        ),
    )
    assert check.curves_line() == (
        "2 float/position/scale curve(s) read back: largest difference 5e-07 (m_LocalPosition, "
        "position; bound 1e-06)"
    )
    assert WriteCheck("o.anim", ()).curves_line() is None
