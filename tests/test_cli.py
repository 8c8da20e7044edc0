"""curveeditor-cli: commands on the bundled sample, one-line errors with exit status 2, inputs protected.

Most tests call ``main([...])`` in-process (fast); a few run the real console script in a subprocess
to check exit codes, stderr and that the CLI starts without numpy or Qt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from curveeditor.cli import SHORTHAND_ORDER, _clean_recipe, build_parser, main
from curveeditor.engine.clip import played
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.io import read_clip
from tests.conftest import INSPECT_TRACK_KEYS

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "resources" / "samples" / "demo.csv"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed console script's code path: ``python -m curveeditor.cli``."""
    return subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        timeout=120,
    )


def inspect_json(capsys, path) -> dict:
    capsys.readouterr()  # drop what earlier commands printed
    assert main(["inspect", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def sample(tmp_path) -> Path:
    """A private copy of the sample, so a bug can never damage the bundled file."""
    p = tmp_path / "demo.csv"
    p.write_bytes(SAMPLE.read_bytes())
    return p


# --------------------------------------------------------------------------------------------- basics


def test_help_and_version_without_numpy_or_qt():
    code = (
        "import sys, contextlib, io\n"
        "from curveeditor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    rc = main(['--help'])\n"
        "assert rc == 0 and 'inspect' in out.getvalue() and 'batch' in out.getvalue(), out.getvalue()\n"
        "bad = [m for m in ('numpy', 'scipy', 'PySide6', 'pyqtgraph') if m in sys.modules]\n"
        "print(bad)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("curveeditor-cli ")


def test_usage_error_exit_2(capsys):
    assert main(["clean", str(SAMPLE)]) == 2  # -o missing
    assert "required" in capsys.readouterr().err


# -------------------------------------------------------------------------------------------- inspect


def test_inspect_json_schema_and_values(capsys, sample):
    data = inspect_json(capsys, sample)
    assert list(data) == ["file", "tracks", "flips", "pops"] and data["file"] == str(sample)
    tracks = {t["path"]: t for t in data["tracks"]}
    assert [t["path"] for t in data["tracks"]] == [
        "Character",
        "Character/Spine",
        "Character/Spine/Neck",
        "Character/Spine/Neck/Head",
        "Character/RightHand",
        "Prop",
    ]
    for t in data["tracks"]:
        assert list(t) == INSPECT_TRACK_KEYS
        assert t["order"] == "zxy" and t["start"] == 0.0 and t["end"] == 4.0
    assert tracks["Character"]["wrap_jumps"] > 0 and tracks["Character"]["kind"] == "euler"
    assert tracks["Character/Spine"]["euler_flips"] > 0
    assert tracks["Character/Spine/Neck"]["gimbal_keys"] > 0
    assert tracks["Character/Spine/Neck/Head"]["spikes"] == 1
    assert tracks["Character/Spine/Neck/Head"]["max_angular_speed"] > 1700
    hand = tracks["Character/RightHand"]
    assert hand["kind"] == "quaternion" and hand["hemisphere_flips"] > 0 and hand["keys"] == 121
    assert tracks["Prop"]["keys"] == 5
    assert all(t["hemisphere_flips"] == 0 for t in data["tracks"] if t["kind"] == "euler")


def test_inspect_table(capsys, sample):
    assert main(["inspect", str(sample)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{sample}: clip 'demo', 6 rotation track(s), 30 fps")
    head = out[1].split()
    assert head[:4] == ["track", "kind", "order", "keys"] and "wraps" in head and "spikes" in head
    row = next(line for line in out if line.startswith("Character/RightHand "))
    assert row.split()[1:4] == ["quaternion", "zxy", "121"]
    problems = next(i for i, line in enumerate(out) if line.startswith("problems: "))
    assert out[problems].startswith("problems: wrap jumps")
    assert out[problems + 1].startswith("flips: 2")  # then one line per flip, with its reason


def test_bad_csv_one_line_error_exit_2(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time,x,y,z\n0,1,2,3\n0.1,nan,2,3\n")
    r = run_cli("inspect", bad)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"curveeditor-cli: error: {bad}:3: NaN in column 'x'\n"
    r = run_cli("inspect", tmp_path / "missing.csv")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "missing.csv: no such file" in r.stderr


def test_order_option_reads_other_orders(capsys, tmp_path):
    p = tmp_path / "o.csv"
    p.write_text("time,x,y,z\n0,10,20,30\n")
    data = inspect_json(capsys, p)
    assert data["tracks"][0]["order"] == "zxy"
    assert main(["inspect", str(p), "--json", "--order", "XYZ"]) == 0
    assert json.loads(capsys.readouterr().out)["tracks"][0]["order"] == "XYZ"


# ---------------------------------------------------------------------------------------------- clean


def test_clean_unwrap_removes_wraps_and_keeps_poses(capsys, sample, tmp_path):
    out, rep = tmp_path / "clean.csv", tmp_path / "report.json"
    before_bytes = sample.read_bytes()
    assert main(["clean", str(sample), "-o", str(out), "--unwrap", "--report", str(rep)]) == 0
    printed = capsys.readouterr().out
    assert "Character" in printed and "1 unwrap" in printed and "at keys (deg)" in printed
    # The spins the unwrap removed are stated as intended, not as an error (issue 20).
    head = "step 1 unwrap (lossless, intended): 4 wrap jumps, 2 Euler flips, 3 hemisphere flips removed"
    assert head in printed
    assert "poses at keys moved 0.000 deg (ok)" in printed and "max err" not in printed
    assert sample.read_bytes() == before_bytes

    after = {t["path"]: t for t in inspect_json(capsys, out)["tracks"]}
    for path, t in after.items():
        if path != "Prop":
            assert t["wrap_jumps"] == 0, path
    assert after["Character/Spine"]["euler_flips"] == 0
    # The deliberate spin (0 -> 360 deg in 1 s, 360 deg/s) survives: same keys as authored.
    src, dst = read_clip(sample), read_clip(out)
    np.testing.assert_array_equal(dst.track("Prop").curve.value, src.track("Prop").curve.value)
    assert after["Prop"]["wrap_jumps"] == 1
    # Poses at every key unchanged.
    for t in src.tracks:
        q0, q1 = played(t, t.times), played(dst.track(t.path), t.times)
        assert np.max(1 - np.abs(np.sum(q0 * q1, axis=1))) < 1e-12, t.path

    report = json.loads(rep.read_text())
    assert set(report) == {
        "file",
        "output",
        "recipe",
        "tracks",
        "flips",
        "warnings",
        "written",
        "margin_deg",
        "steps",
    }
    assert report["steps"][0].startswith("step 1 unwrap (lossless, intended)")
    assert report["flips"] == []  # the unwrap left none (each would be listed with its reason)
    assert report["written"]["failure"] is None and len(report["written"]["tracks"]) == len(src.tracks)
    assert report["recipe"] == {"version": 1, "steps": [{"op": "unwrap", "spin_speed": 1800.0}]}
    rows = {t["path"]: t for t in report["tracks"]}
    assert set(rows) == {t.path for t in src.tracks}
    for r in rows.values():
        assert r["keys_before"] == r["keys_after"]
        assert r["max_key_error"] < 1e-6  # the pose at every key is kept
    # Between keys the removed 358-degree spins are real changes of what Unity plays, and say so.
    assert rows["Character"]["max_error"] > 170
    assert rows["Prop"]["max_error"] < 1e-6 and rows["Character/Spine/Neck"]["max_error"] < 1e-6
    # ... as the unwrap step's intended change, with the poses at the keys measured (issue 20).
    (step,) = rows["Character"]["steps"]
    assert step["role"] == "lossless" and step["verdict"] == "intended" and step["removed"]["wrap"] == 4
    assert step["max_error"] > 170 and step["key_error"] < 1e-6 and step["passed"] is True
    assert len(step["removed_times"]) == 4 and "Unity played" in step["notes"][0]
    assert rows["Prop"]["steps"][0]["verdict"] == "no change"


def test_clean_never_overwrites_input(sample, tmp_path):
    original = sample.read_bytes()
    os.symlink(sample, tmp_path / "link.csv")
    for target in (sample, tmp_path / "." / "demo.csv", tmp_path / "link.csv"):
        r = run_cli("clean", sample, "-o", target, "--unwrap")
        assert r.returncode == 2
        assert r.stderr.startswith("curveeditor-cli: error: ") and r.stderr.count("\n") == 1
        assert "refusing to overwrite the input" in r.stderr
    assert sample.read_bytes() == original


def test_clean_errors_write_nothing(capsys, sample, tmp_path):
    out = tmp_path / "out.csv"
    assert main(["clean", str(sample), "-o", str(out), "--unwrap", "--track", "Nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"curveeditor-cli: error: {sample}: no rotation track 'Nope'")
    assert not out.exists()
    assert main(["clean", str(sample), "-o", str(tmp_path / "x.txt"), "--unwrap"]) == 2
    assert "cannot write '.txt' files" in capsys.readouterr().err
    recipe = tmp_path / "r.json"
    recipe.write_text('{"version": 1, "steps": [{"op": "unwrap"}]}')
    assert main(["clean", str(sample), "-o", str(out), "--recipe", str(recipe), "--reduce", "0.1"]) == 2
    assert "--recipe and --reduce cannot be combined" in capsys.readouterr().err
    assert main(["clean", str(sample), "-o", str(out)]) == 2
    assert "nothing to do" in capsys.readouterr().err
    recipe.write_text('{"version": 1, "steps": [{"op": "smooth", "sigmaa": 1}]}')
    assert main(["clean", str(sample), "-o", str(out), "--recipe", str(recipe)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "step 1 (smooth)" in err and "sigmaa" in err
    assert sorted(os.listdir(tmp_path)) == ["demo.csv", "r.json"]


def test_clean_track_selection_and_recipe_file(capsys, sample, tmp_path):
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"version": 1, "steps": [{"op": "unwrap"}]}))
    out, rep = tmp_path / "o.csv", tmp_path / "rep.json"
    args = ["clean", str(sample), "-o", str(out), "--recipe", str(recipe), "--track", "Character"]
    assert main([*args, "--report", str(rep)]) == 0
    report = json.loads(rep.read_text())
    assert [t["path"] for t in report["tracks"]] == ["Character"]
    after = {t["path"]: t for t in inspect_json(capsys, out)["tracks"]}
    assert after["Character"]["wrap_jumps"] == 0 and after["Character/Spine"]["euler_flips"] > 0


def _recipe_for(argv):
    return _clean_recipe(build_parser().parse_args(["clean", "in.csv", "-o", "out.csv", *argv]))


def test_shorthand_flags_become_steps_in_documented_order():
    recipe = _recipe_for(
        [
            "--reduce",
            "0.5",
            "--resample",
            "60",
            "--method",
            "squad",
            "--limit",
            "yaw=-80:80,pitch=-45:30,smooth=0.1",
            "--max-speed",
            "900",
            "--smooth",
            "butterworth:6:4",
            "--despike",
            "--unflip",
            "--unwrap",
            "--spin-speed",
            "1000",
            "--to-order",
            "xyz",
        ]
    )
    assert [s.op for s in recipe.steps] == list(SHORTHAND_ORDER)
    p = {s.op: s.params for s in recipe.steps}
    assert p["unwrap"]["spin_speed"] == 1000.0
    assert p["despike"]["speed"] is None
    assert (
        p["smooth"]["method"] == "butterworth" and p["smooth"]["cutoff"] == 6.0 and p["smooth"]["order"] == 4
    )
    assert tuple(p["limit"]["yaw"]) == (-80.0, 80.0) and tuple(p["limit"]["pitch"]) == (-45.0, 30.0)
    assert p["limit"]["smooth"] == 0.1 and p["limit"]["turnback"] is False
    turn = _recipe_for(["--limit", "yaw=-50:50,turnback=on,lerp_speed=8"]).steps[0].params
    assert turn["turnback"] is True and turn["lerp_speed"] == 8.0 and "smooth" not in turn
    assert p["resample"]["hz"] == 60.0 and p["resample"]["method"] == "squad"
    assert p["reduce"]["max_error"] == 0.5 and p["max_speed"]["speed"] == 900.0
    assert p["to_order"]["order"] == "xyz"
    gauss = _recipe_for(["--smooth", "gaussian:0.05", "--despike", "500", "--to-kind", "quaternion"])
    assert [s.op for s in gauss.steps] == ["despike", "smooth", "to_kind"]
    assert gauss.steps[0].params["speed"] == 500.0 and gauss.steps[1].params["sigma"] == 0.05


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--smooth", "median:3"], "expected gaussian:SIGMA_S or butterworth"),
        (["--smooth", "gaussian:-1"], "must be a positive number"),
        (["--limit", "yaw=10"], "yaw needs MIN:MAX"),
        (["--limit", "roll=1:2"], "unknown key 'roll'"),
        (["--limit", "turnback=maybe"], "turnback needs on or off"),
        (["--spin-speed", "100"], "--spin-speed only applies to --unwrap"),
        (["--method", "squad"], "--method needs --resample"),
    ],
)
def test_bad_shorthand_values(capsys, sample, tmp_path, argv, message):
    assert main(["clean", str(sample), "-o", str(tmp_path / "o.csv"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("curveeditor-cli: error: ") and message in err and err.count("\n") == 1


def test_clean_full_pipeline_runs(capsys, sample, tmp_path):
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    argv = ["clean", str(sample), "-o", str(out), "--unwrap", "--despike", "--reduce", "0.5"]
    assert main([*argv, "--report", str(rep)]) == 0, capsys.readouterr().err
    report = json.loads(rep.read_text())
    rows = {t["path"]: t for t in report["tracks"]}
    assert rows["Character"]["keys_after"] < rows["Character"]["keys_before"]
    assert inspect_json(capsys, out)["tracks"][3]["spikes"] == 0


# --------------------------------------------------------------------------------------------- sample


def test_sample_writes_uniform_grid_of_what_unity_plays(capsys, sample, tmp_path):
    out = tmp_path / "grid.csv"
    assert main(["sample", str(sample), "--rate", "20", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "path,time,x,y,z,qx,qy,qz,qw,speed"
    rows = [ln.split(",") for ln in lines[1:]]
    clip = read_clip(sample)
    assert [p for p in dict.fromkeys(r[0] for r in rows)] == [t.path for t in clip.tracks]
    for track in clip.tracks:
        vals = np.array([[float(c) for c in r[1:]] for r in rows if r[0] == track.path])
        t = vals[:, 0]
        assert t[0] == 0.0 and t[-1] == 4.0 and t.shape[0] == 81
        np.testing.assert_allclose(np.diff(t), 0.05, atol=1e-12)
        q = played(track, t)
        np.testing.assert_allclose(np.abs(np.sum(q * vals[:, 4:8], axis=1)), 1.0, atol=1e-12)
        assert np.all(np.sum(vals[1:, 4:8] * vals[:-1, 4:8], axis=1) >= 0)  # hemisphere-continuous
        assert np.all(vals[:, 8] >= 0)
    # Prop spins 0 -> 360 deg in the first second: the sampled Euler yaw shows the whole spin.
    prop = np.array([[float(c) for c in r[1:]] for r in rows if r[0] == "Prop"])
    assert prop[20, 2] == pytest.approx(360.0)
    assert main(["sample", str(sample), "--rate", "10", "-o", str(out), "--track", "Prop"]) == 0
    assert {ln.split(",")[0] for ln in out.read_text().splitlines()[1:]} == {"Prop"}


def test_sample_rows_are_what_the_graphs_draw(sample, tmp_path):
    """``sample`` and the editor's graphs share ``display.sample_track``: same Euler, quaternion, speed."""
    from curveeditor.engine.display import sample_track

    out = tmp_path / "grid.csv"
    assert main(["sample", str(sample), "--rate", "25", "-o", str(out)]) == 0
    rows = [ln.split(",") for ln in out.read_text().splitlines()[1:]]
    for track in read_clip(sample).tracks:
        vals = np.array([[float(c) for c in r[1:]] for r in rows if r[0] == track.path])
        s = sample_track(track, vals[:, 0])
        np.testing.assert_array_equal(vals[:, 1:4], s.euler)
        # (the quaternion and speed cells, derived from the Euler angles: 9 significant digits)
        np.testing.assert_allclose(vals[:, 4:8], s.quat, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(vals[:, 8], s.speed, rtol=1e-8, atol=1e-12)


def test_sample_needs_csv_output_and_protects_input(capsys, sample, tmp_path):
    assert main(["sample", str(sample), "--rate", "10", "-o", str(tmp_path / "x.anim")]) == 2
    assert "cannot write '.anim'" in capsys.readouterr().err
    assert main(["sample", str(sample), "--rate", "10", "-o", str(sample)]) == 2
    assert "refusing to overwrite the input" in capsys.readouterr().err
    assert main(["sample", str(sample), "--rate", "0", "-o", str(tmp_path / "g.csv")]) == 2


# -------------------------------------------------------------------------------------------- convert


def test_convert_csv_to_csv(capsys, sample, tmp_path):
    out = tmp_path / "copy.csv"
    assert main(["convert", str(sample), str(out)]) == 0
    assert "6 rotation track(s)" in capsys.readouterr().out
    a, b = read_clip(sample), read_clip(out)
    for ta in a.tracks:
        tb = b.track(ta.path)
        np.testing.assert_array_equal(tb.times, ta.times)
        if ta.kind == "euler":
            np.testing.assert_array_equal(tb.curve.value, ta.curve.value)
        q0, q1 = played(ta, ta.times), played(tb, ta.times)
        np.testing.assert_allclose(np.abs(np.sum(q0 * q1, axis=1)), 1.0, atol=1e-12)
    assert main(["convert", str(sample), str(sample)]) == 2
    assert main(["convert", str(sample), str(tmp_path / "c.bvh")]) == 2
    assert "the clip has no BVH skeleton" in capsys.readouterr().err  # BVH out needs a BVH in
    assert not (tmp_path / "c.bvh").exists()


def test_convert_to_anim_and_back(capsys, sample, tmp_path):
    anim, back = tmp_path / "demo.anim", tmp_path / "back.csv"
    assert main(["convert", str(sample), str(anim)]) == 0, capsys.readouterr().err
    assert main(["convert", str(anim), str(back)]) == 0, capsys.readouterr().err
    a, b = read_clip(sample), read_clip(back)
    for ta in a.tracks:
        tb = b.track(ta.path)
        q0, q1 = played(ta, ta.times), played(tb, ta.times)
        # .anim stores float32 text: same poses at the keys within 1e-3 deg.
        assert geodesic_angle(q0, q1).max() < 1e-3, ta.path


# ----------------------------------------------------------------------------------------------- turn


def test_turn_writes_constant_speed_csv(capsys, tmp_path):
    out = tmp_path / "turn.csv"
    argv = [
        "turn",
        "--from",
        "0",
        "--to",
        "90",
        "--speed",
        "180",
        "--rate",
        "30",
        "--path",
        "Root",
        "-o",
        str(out),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    (track,) = read_clip(out).tracks
    assert track.path == "Root"
    q = played(track, track.times)
    total = geodesic_angle(q[0], q[-1])
    assert total == pytest.approx(90.0, abs=0.5)
    assert track.times[-1] - track.times[0] == pytest.approx(0.5, abs=1 / 30 + 1e-9)


def test_turn_positive_direction_takes_the_long_way(capsys, tmp_path):
    out = tmp_path / "long.csv"
    argv = ["turn", "--from", "0", "--to", "-90", "--direction", "positive", "--speed", "270", "-o", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    (track,) = read_clip(out).tracks
    assert track.times[-1] - track.times[0] == pytest.approx(1.0, abs=1 / 60 + 1e-9)  # 270 deg at 270 deg/s
    assert main(["turn", "--from", "0", "--to", "1", "--speed", "10", "--axis", "0,0,0", "-o", str(out)]) == 2
    assert "expected x, y, z or a non-zero vector" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- batch


def test_batch_exit_status_and_report(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_bytes(SAMPLE.read_bytes())
    (src / "b.csv").write_text("time,x,y,z\n0,0,170,0\n0.1,0,-170,0\n0.2,0,-160,0\n")
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"version": 1, "steps": [{"op": "unwrap"}]}))
    out, rep = tmp_path / "out", tmp_path / "rep.json"
    r = run_cli("batch", src, "-o", out, "--recipe", recipe, "--jobs", "2", "--report", rep)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out)) == ["a.csv", "b.csv"]
    b = read_clip(out / "b.csv").tracks[0].curve.value[:, 1]
    np.testing.assert_allclose(b, [170, 190, 200])
    assert json.loads(rep.read_text())["files"][0]["status"] == "ok"

    (src / "c.csv").write_text("time,x,y,z\n0,1,2,nan\n")
    r = run_cli("batch", src, "-o", tmp_path / "out2", "--recipe", recipe)
    assert r.returncode == 2
    assert "c.csv:2: NaN in column 'z'" in r.stderr
    assert sorted(os.listdir(tmp_path / "out2")) == ["a.csv", "b.csv"]
    assert (src / "c.csv").read_text() == "time,x,y,z\n0,1,2,nan\n"


def _display_jumps(clip) -> dict[str, float]:
    """Largest key-to-key step (deg) of each Euler display curve (localEulerAngles*) in a .anim."""
    out = {}
    for o in clip.other_tracks:
        if o.attribute.startswith("localEulerAngles") and o.curve is not None and o.curve.n_keys > 1:
            out[f"{o.path}:{o.attribute}"] = float(np.abs(np.diff(o.curve.value[:, 0])).max())
    return out


def test_clean_unwrap_that_changes_nothing_says_nothing(capsys, corpus_dir, tmp_path):
    # Issue 20: `clean --unwrap` on a clip with no wrap to remove rewrote its Euler display curves
    # (Unity writes them wrapped to (-180, 180]) with one warning per track (16 on a Biped rig).
    # An operation that changes nothing says nothing: the file is the input, byte for byte.
    anims = sorted((corpus_dir / "anim").glob("*.anim"), key=lambda p: p.stat().st_size, reverse=True)
    fit = corpus_dir / "anim" / "fish-ken__unity-animation-compressor__Assets_CurveFitTest.anim"
    checked = 0
    for src in dict.fromkeys([fit, *anims[:4]]):
        if not src.exists():
            continue
        before = _display_jumps(read_clip(src))
        out = tmp_path / f"{checked}.anim"
        assert main(["clean", str(src), "-o", str(out), "--unwrap"]) == 0
        captured = capsys.readouterr()
        assert "made continuous" not in captured.err, src.name
        if "no change on any" in captured.out:
            assert out.read_bytes() == src.read_bytes(), src.name
            assert _display_jumps(read_clip(out)) == before
        checked += 1
    assert checked >= 2


def test_bad_report_path_fails_before_writing_the_clip(capsys, sample, tmp_path):
    # The report's folder used to be checked only when the report was written, after the clip:
    # exit 2 with the output already on disk.
    out = tmp_path / "out.csv"
    folder = tmp_path / "sub"
    folder.mkdir()
    for report in (tmp_path / "nodir" / "r.json", folder):
        assert main(["clean", str(sample), "-o", str(out), "--unwrap", "--report", str(report)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"curveeditor-cli: error: {report}: ") and err.count("\n") == 1
        assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["demo.csv", "sub"] and not os.listdir(folder)


def test_batch_bad_report_path_fails_before_writing_clips(capsys, sample, tmp_path):
    recipe = tmp_path / "r.json"
    recipe.write_text('{"version": 1, "steps": [{"op": "unwrap"}]}')
    out_dir = tmp_path / "out"
    report = tmp_path / "nodir" / "rep.json"
    argv = ["batch", str(sample), "-o", str(out_dir), "--recipe", str(recipe), "--report", str(report)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"curveeditor-cli: error: {report}: output folder") and err.count("\n") == 1
    assert not out_dir.exists() or not os.listdir(out_dir)


def test_sample_and_turn_refuse_absurd_sizes_with_one_line(capsys, sample, tmp_path):
    # sample --rate 1e9 ended in a numpy MemoryError traceback; turn with a tiny speed too.
    out = tmp_path / "o.csv"
    assert main(["sample", str(sample), "--rate", "1e9", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"curveeditor-cli: error: {sample}: --rate 1e+09 Hz") and err.count("\n") == 1
    assert main(["turn", "--from", "0", "--to", "90", "--speed", "1e-9", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("curveeditor-cli: error: turn: ") and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["demo.csv"]


def test_a_warning_naming_a_path_with_a_line_break_stays_one_line(tmp_path, capsys):
    """A CSV path cell holding a newline came back inside the tangent-loss warning and split it over two
    stderr lines (found by the fuzz suite)."""
    from curveeditor.cli import _warn

    _warn(["track 'Hips\nbreak' changed by 2 deg", "plain"])
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "curveeditor-cli: warning: track 'Hips break' changed by 2 deg",
        "curveeditor-cli: warning: plain",
    ]
