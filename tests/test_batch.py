"""Batch runner: report statuses, exit status, identical results for any jobs, inputs untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from curveeditor.batch.runner import BatchError, expand_inputs, output_name, run_batch, stderr_progress
from curveeditor.engine.clip import key_quaternions
from curveeditor.engine.recipe import Recipe, RecipeError
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.io import read_clip
from tests.pty_run import run_on_pty

RECIPE = Recipe.of({"op": "unwrap"}, {"op": "reduce", "max_error": 0.05})


def _csv_text(seed: int, n: int = 40) -> str:
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 30.0
    rows = ["path,time,x,y,z"]
    for path in ("Hips", "Hips/Spine"):
        speed = rng.uniform(300, 600)  # deg/s of smooth real motion ...
        yaw = speed * t + 20 * np.sin(3 * t + seed)
        yaw = (yaw + 180.0) % 360.0 - 180.0  # ... stored wrapped: jumps the unwrap step fixes
        x = 10 * np.sin(t * (2 + seed))
        rows += [
            f"{path},{ti!r},{xi!r},{yi!r},0.0"
            for ti, xi, yi in zip(t.tolist(), x.tolist(), yaw.tolist(), strict=True)
        ]
    return "\n".join(rows) + "\n"


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def inputs(tmp_path) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    for i in range(4):
        (src / f"clip{i}.csv").write_text(_csv_text(i))
    bad = _csv_text(9).splitlines()
    bad[5] = bad[5].rsplit(",", 2)[0] + ",nan,0.0"  # line 6 has a NaN
    (src / "bad.csv").write_text("\n".join(bad) + "\n")
    (src / "notes.txt").write_text("not a clip")
    return src


def _quiet(*_args) -> None:
    pass


def _entries(report) -> list[dict]:
    """Report entries with the output folder taken out, to compare runs into different folders."""
    out = []
    for f in report.as_dict()["files"]:
        f = dict(f)
        f["output"] = None if f["output"] is None else Path(f["output"]).name
        out.append(f)
    return out


def test_batch_reports_statuses_and_is_identical_for_any_jobs(inputs, tmp_path):
    before = _hashes(inputs)
    lines = []
    r1 = run_batch(
        [str(inputs)],
        tmp_path / "out1",
        RECIPE,
        jobs=1,
        report_path=tmp_path / "r1.json",
        progress=lambda d, n, r: lines.append((d, n, r.input, r.status)),
    )
    r2 = run_batch(
        [str(inputs)], tmp_path / "out2", RECIPE, jobs=2, report_path=tmp_path / "r2.json", progress=_quiet
    )

    assert _hashes(inputs) == before  # inputs never touched
    assert r1.exit_status == 2 and r2.exit_status == 2
    names = [Path(f.input).name for f in r1.files]
    assert names == ["bad.csv", "clip0.csv", "clip1.csv", "clip2.csv", "clip3.csv"]  # sorted, no .txt
    status = {Path(f.input).name: f for f in r1.files}
    assert status["bad.csv"].status == "failed"
    assert status["bad.csv"].error.startswith(f"{inputs / 'bad.csv'}:6: ")
    assert "nan" in status["bad.csv"].error.lower() or "finite" in status["bad.csv"].error.lower()
    for i in range(4):
        f = status[f"clip{i}.csv"]
        assert f.status == "ok" and f.error is None
        assert f.tracks == 2 and f.keys_before == 80
        assert 0 < f.keys_after < f.keys_before
        assert f.max_error > 0 and f.rms_error > 0
        assert [t["path"] for t in f.track_details] == ["Hips", "Hips/Spine"]
        assert f.track_details[0]["changes"][0].startswith("step 1 (unwrap): ")
        assert f.track_details[0]["changes"][1].startswith("step 2 (reduce): 40 -> ")
    assert r1.ok == 4 and r1.failed == 1

    # identical outputs and reports whatever jobs is
    assert _hashes(tmp_path / "out1") == _hashes(tmp_path / "out2")
    assert sorted(_hashes(tmp_path / "out1")) == [f"clip{i}.csv" for i in range(4)]  # nothing for bad.csv
    assert _entries(r1) == _entries(r2)
    d1 = json.loads((tmp_path / "r1.json").read_text())
    d2 = json.loads((tmp_path / "r2.json").read_text())
    assert d1["exit_status"] == 2 and d1["summary"]["failed"] == 1 and d1["summary"]["ok"] == 4
    assert d1["recipe"] == RECIPE.to_dict()
    assert [f["status"] for f in d1["files"]] == ["failed", "ok", "ok", "ok", "ok"]
    assert d1["files"][1]["keys_before"] == 80
    assert {k: v for k, v in d1.items() if k not in ("files", "out_dir")} == {
        k: v for k, v in d2.items() if k not in ("files", "out_dir")
    }

    # progress: one call per file, counting up to the total
    assert [(d, n) for d, n, *_ in lines] == [(k, 5) for k in range(1, 6)]
    assert sorted(s for *_, s in lines) == ["failed", "ok", "ok", "ok", "ok"]

    # the outputs really are the processed clips: a subset of the input keys, same poses there
    src = read_clip(inputs / "clip0.csv")
    out = read_clip(tmp_path / "out1" / "clip0.csv")
    for track in out.tracks:
        ref = src.track(track.path)
        idx = np.searchsorted(ref.times, track.times)
        assert np.allclose(ref.times[idx], track.times, atol=1e-12)
        assert np.max(geodesic_angle(key_quaternions(ref)[idx], key_quaternions(track))) < 1e-6
        assert track.n_keys == status["clip0.csv"].track_details[out.tracks.index(track)]["keys_after"]


def test_all_ok_gives_exit_status_zero_and_globs(inputs, tmp_path):
    rep = run_batch(
        [str(inputs / "clip[12].csv"), str(inputs / "clip1.csv")], tmp_path / "o", RECIPE, progress=_quiet
    )
    assert rep.exit_status == 0
    assert [Path(f.input).name for f in rep.files] == ["clip1.csv", "clip2.csv"]  # duplicate dropped


def test_out_dir_containing_an_input_is_refused(inputs, tmp_path):
    before = _hashes(inputs)
    with pytest.raises(BatchError, match="contains the input"):
        run_batch([str(inputs)], inputs, RECIPE, progress=_quiet)
    with pytest.raises(BatchError, match="contains the input"):
        run_batch([str(inputs / "clip0.csv")], tmp_path, RECIPE, progress=_quiet)
    assert _hashes(inputs) == before
    with pytest.raises(BatchError, match="report path"):
        run_batch([str(inputs)], tmp_path / "o", RECIPE, report_path=inputs / "clip0.csv", progress=_quiet)
    assert _hashes(inputs) == before
    assert not (tmp_path / "o").exists()
    # Nor an output: the report, written last, would replace that clip's result.
    with pytest.raises(BatchError, match="is one of the outputs"):
        run_batch(
            [str(inputs)], tmp_path / "o", RECIPE, report_path=tmp_path / "o" / "clip1.csv", progress=_quiet
        )
    assert not (tmp_path / "o").exists()


def test_collisions_and_unmatched_inputs_fail_without_stopping(inputs, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "clip0.csv").write_text(_csv_text(5))
    rep = run_batch(
        [str(inputs / "clip0.csv"), str(other / "clip0.csv"), str(tmp_path / "nothing*.anim")],
        tmp_path / "o",
        RECIPE,
        progress=_quiet,
    )
    assert [f.status for f in rep.files] == ["ok", "failed", "failed"]
    assert "already written for" in rep.files[1].error
    assert "no .anim, .bvh, .csv, .fbx, .gltf, .glb files match" in rep.files[2].error
    assert rep.exit_status == 2
    # the first file's output is the one kept
    assert (
        read_clip(tmp_path / "o" / "clip0.csv").track("Hips").n_keys
        == rep.files[0].track_details[0]["keys_after"]
    )


def test_bad_arguments(inputs, tmp_path):
    with pytest.raises(BatchError, match="jobs"):
        run_batch([str(inputs)], tmp_path / "o", RECIPE, jobs=0)
    with pytest.raises(BatchError, match="cannot write '.txt'"):
        run_batch([str(inputs)], tmp_path / "o", RECIPE, out_ext=".txt")
    with pytest.raises(RecipeError, match="step 1"):
        run_batch([str(inputs)], tmp_path / "o", {"version": 1, "steps": [{"op": "nope"}]})
    recipe_file = tmp_path / "r.json"
    RECIPE.save(recipe_file)
    rep = run_batch([str(inputs / "clip3.csv")], tmp_path / "o", str(recipe_file), progress=_quiet)
    assert rep.exit_status == 0 and rep.recipe == RECIPE.to_dict()


def test_output_names_and_expansion(inputs):
    assert output_name("a/walk.anim") == "walk.anim"
    assert output_name("a/walk.CSV") == "walk.csv"
    assert output_name("mocap/run.bvh") == "run.anim"  # BVH is read-only: .anim by default
    assert output_name("mocap/run.bvh", ".csv") == "run.csv"
    assert output_name("a/walk.anim", ".csv") == "walk.csv"
    exp = expand_inputs([str(inputs), str(inputs / "*.txt"), str(inputs / "clip0.csv")])
    assert [Path(f).name for f in exp[0][1]] == [
        "bad.csv",
        "clip0.csv",
        "clip1.csv",
        "clip2.csv",
        "clip3.csv",
    ]
    assert exp[1][1] == []
    assert exp[2][1] == [str(inputs / "clip0.csv")]


def test_bvh_input_to_csv(tmp_path, capsys):
    src = tmp_path / "mocap"
    src.mkdir()
    frames = "\n".join(" ".join(f"{v:.3f}" for v in (0, 90, 0, 10 * k, 170 + 5 * k, 0)) for k in range(6))
    (src / "walk.bvh").write_text(
        "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\n"
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        "End Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\nFrames: 6\nFrame Time: 0.1\n" + frames + "\n"
    )
    rep = run_batch([str(src)], tmp_path / "o", Recipe.of({"op": "unwrap"}), out_ext="csv")
    assert rep.exit_status == 0, rep.files[0].error
    assert rep.files[0].output == str(tmp_path / "o" / "walk.csv")
    assert (tmp_path / "o" / "walk.csv").exists()
    assert rep.files[0].tracks == 1 and rep.files[0].keys_after == 6
    assert "[1/1] walk.bvh ok" in capsys.readouterr().err  # default progress line on stderr


def test_bvh_inputs_to_bvh_and_a_csv_input_refused(tmp_path):
    """``--format bvh``: mocap in, mocap out (the skeleton and frames kept, unwrapped); a clip
    without a BVH skeleton fails with the reason and the batch goes on."""
    src = tmp_path / "mocap"
    src.mkdir()
    frames = "\n".join(" ".join(f"{v:.3f}" for v in (0, 90, 0, 10 * k, 170 + 5 * k, 0)) for k in range(6))
    (src / "walk.bvh").write_text(
        "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\n"
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        "End Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\nFrames: 6\nFrame Time: 0.1\n" + frames + "\n"
    )
    (src / "pose.csv").write_text("path,time,x,y,z\nHips,0,0,0,0\nHips,0.5,10,0,0\n")
    rep = run_batch([str(src)], tmp_path / "o", Recipe.of({"op": "unwrap"}), out_ext="bvh", progress=_quiet)
    by_name = {Path(f.input).name: f for f in rep.files}
    assert by_name["walk.bvh"].status == "ok", by_name["walk.bvh"].error
    assert by_name["pose.csv"].status == "failed" and "no BVH skeleton" in by_name["pose.csv"].error
    back = read_clip(tmp_path / "o" / "walk.bvh")
    assert back.meta["frames"] == 6 and back.meta["frame_time"] == 0.1
    x = back.track("Hips").curve.value[:, 0]  # file Xrotation 170..195 (the mirror keeps x)
    assert np.allclose(x, 170 + 5 * np.arange(6))
    assert not (tmp_path / "o" / "pose.bvh").exists()


def test_stderr_progress_line_for_failures(capsys):
    from curveeditor.batch.runner import FileResult

    stderr_progress(3, 7, FileResult("x/bad.anim", None, error="x/bad.anim:4: truncated"))
    assert capsys.readouterr().err == "[3/7] bad.anim failed: x/bad.anim:4: truncated\n"


def test_spawned_workers_give_the_same_results(inputs, tmp_path, monkeypatch):
    """The worker is spawn-safe (the start method on Windows): same outputs as in-process."""
    import multiprocessing

    import curveeditor.batch.runner as batch

    monkeypatch.setattr(batch, "_pool_context", lambda: multiprocessing.get_context("spawn"))
    files = [str(inputs / "clip1.csv"), str(inputs / "bad.csv"), str(inputs / "clip2.csv")]
    r_spawn = run_batch(files, tmp_path / "s", RECIPE, jobs=2, progress=_quiet)
    r_local = run_batch(files, tmp_path / "l", RECIPE, jobs=1, progress=_quiet)
    assert [f.status for f in r_spawn.files] == ["ok", "failed", "ok"]
    assert _entries(r_spawn) == _entries(r_local)
    assert _hashes(tmp_path / "s") == _hashes(tmp_path / "l")


# ------------------------------------------------------------------- progress, --json, Ctrl+C, Dask

#: The keys of ``batch --json`` (README "batch --json"), in order, with their types.
SUMMARY_SCHEMA = {
    "version": int,
    "status": str,
    "exit_status": int,
    "files": int,
    "ok": int,
    "failed": int,
    "cancelled": int,
    "retried": int,
    "keys_before": int,
    "keys_after": int,
    "max_error": float,
    "seconds": float,
    "files_per_s": float,
    "keys_per_s": float,
    "engine": dict,
    "out_dir": str,
    "report": (str, type(None)),
    "outputs": list,
    "failures": list,
    "retries": list,
}


def _run_cli(*args, **kw):
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **kw,
    )


def test_progress_bar_shows_rate_and_eta():
    import io

    from curveeditor.batch.progress import ProgressBar, format_duration
    from curveeditor.batch.runner import FileResult

    now = [100.0]
    out = io.StringIO()
    bar = ProgressBar(out, clock=lambda: now[0], width=200)
    now[0] = 104.0  # 2 files in 4 s: 0.5 files/s, 8 left -> 16 s
    bar(2, 10, FileResult("in/walk.anim", "o/walk.anim", status="ok"))
    assert out.getvalue() == "\r\x1b[K[####----------------]  2/10  20%  0.50 files/s  ETA 0:16  walk.anim"
    now[0] = 106.0
    bar(3, 10, FileResult("in/bad.csv", None, error="in/bad.csv:3: NaN in column 'x'"))
    # a failure gets its own line above the bar, then the bar is redrawn
    assert out.getvalue().endswith(
        "\r\x1b[K[3/10] bad.csv failed: in/bad.csv:3: NaN in column 'x'\n"
        "\r\x1b[K[######--------------]  3/10  30%  0.50 files/s  ETA 0:14  bad.csv"
    )
    bar.close()
    assert out.getvalue().endswith("\n")
    narrow = ProgressBar(io.StringIO(), clock=lambda: 0.0, width=40)
    text = narrow.text(1, 3, FileResult("x" * 80 + ".csv", None))
    assert len(text) == 39 and text.startswith("[#######-------------] 1/3  33%")  # fits the terminal
    assert [format_duration(s) for s in (0, 7.4, 750, 3723)] == ["0:00", "0:07", "12:30", "1:02:03"]


def test_progress_auto_is_a_bar_on_a_terminal_and_lines_otherwise(inputs, tmp_path, capsys):
    import io
    import sys

    from curveeditor.batch.progress import ProgressBar, choose_progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert isinstance(choose_progress("auto", Tty())[0], ProgressBar)
    assert not isinstance(choose_progress("auto", io.StringIO())[0], ProgressBar)

    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    files = [inputs / "clip0.csv", inputs / "bad.csv", inputs / "clip1.csv"]
    # stderr on a real pseudo-terminal: the bar, redrawn in place, with rate and ETA
    args = [sys.executable, "-m", "curveeditor.cli", "batch", *map(str, files), "-o", str(tmp_path / "o")]
    status, err, _out = run_on_pty(args + ["--recipe", str(recipe)], 100, "stderr", timeout=120)
    assert status == 2
    assert "\r\x1b[K[" in err and "files/s  ETA " in err and "3/3 100%" in err
    assert "[2/3] bad.csv failed: " in err or "[1/3] bad.csv failed: " in err
    # not a terminal (pytest's captured stderr): one plain line per file, no control characters
    from curveeditor.cli import main

    assert main(["batch", *map(str, files), "-o", str(tmp_path / "o2"), "--recipe", str(recipe)]) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("[")]
    assert [ln.split()[0] for ln in lines] == ["[1/3]", "[2/3]", "[3/3]"] and "\x1b" not in err


def test_json_summary_for_pipelines(inputs, tmp_path):
    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    rep = tmp_path / "rep.json"
    r = _run_cli(
        "batch", inputs, "-o", tmp_path / "o", "--recipe", recipe, "--jobs", "2", "--json", "--report", rep
    )
    assert r.returncode == 2
    s = json.loads(r.stdout)  # stdout holds the JSON only
    assert list(s) == list(SUMMARY_SCHEMA)
    for key, kind in SUMMARY_SCHEMA.items():
        assert isinstance(s[key], kind), key
    report = json.loads(rep.read_text())
    assert s["status"] == "failed" and s["exit_status"] == 2 == report["exit_status"]
    assert (s["files"], s["ok"], s["failed"], s["cancelled"], s["retried"]) == (5, 4, 1, 0, 0)
    assert {k: s[k] for k in ("keys_before", "keys_after", "max_error")} == {
        k: report["summary"][k] for k in ("keys_before", "keys_after", "max_error")
    }
    assert s["engine"] == {"kind": "processes", "workers": 2, "scheduler": None, "inputs": "shared"}
    assert s["outputs"] == [str(tmp_path / "o" / f"clip{i}.csv") for i in range(4)]
    assert s["failures"] == [{"input": str(inputs / "bad.csv"), "error": report["files"][0]["error"]}]
    assert s["report"] == str(rep) and s["out_dir"] == str(tmp_path / "o") and s["retries"] == []
    assert s["seconds"] > 0 and s["keys_per_s"] == pytest.approx(s["keys_before"] / s["seconds"])


def test_ctrl_c_in_process_cancels_the_rest(inputs, tmp_path):
    from curveeditor.batch.runner import BatchCancelled

    def progress(done, total, result):
        if done == 2:
            raise KeyboardInterrupt  # what Ctrl+C raises in the main thread

    with pytest.raises(BatchCancelled) as info:
        run_batch([str(inputs)], tmp_path / "o", RECIPE, report_path=tmp_path / "r.json", progress=progress)
    rep = info.value.report
    assert isinstance(info.value, KeyboardInterrupt)
    assert [f.status for f in rep.files] == ["failed", "ok", "cancelled", "cancelled", "cancelled"]
    assert rep.exit_status == 130 and rep.cancelled == 3
    assert rep.files[2].error == f"{inputs / 'clip1.csv'}: cancelled (Ctrl+C)"
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["clip0.csv"]  # whole, nothing else
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["exit_status"] == 130 and saved["summary"]["cancelled"] == 3


def test_scheduler_without_dask_says_how_to_install_it(inputs, tmp_path, monkeypatch, capsys):
    import sys

    from curveeditor.cli import main

    # Simulate an install without the cluster extra: importing distributed fails.
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.delitem(sys.modules, "curveeditor.batch.dask_engine", raising=False)
    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    for sched in ("local:2", "tcp://127.0.0.1:8786"):
        rc = main(
            ["batch", str(inputs), "-o", str(tmp_path / "o"), "--recipe", str(recipe), "--scheduler", sched]
        )
        err = capsys.readouterr().err
        assert rc == 2
        assert err == (
            "curveeditor-cli: error: running a batch on a Dask cluster needs dask.distributed, which is "
            "not installed: pip install 'curveeditor[cluster]'\n"
        )
    assert not (tmp_path / "o").exists()


def test_dask_is_imported_only_for_a_scheduler(inputs, tmp_path):
    import subprocess
    import sys

    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    code = (
        "import sys; from curveeditor.cli import main; "
        f"rc = main(['batch', {str(inputs / 'clip0.csv')!r}, '-o', {str(tmp_path / 'o')!r}, "
        f"'--recipe', {str(recipe)!r}, '--progress', 'none']); "
        "print(rc, sorted(m for m in ('dask', 'distributed', 'curveeditor.batch.dask_engine')"
        " if m in sys.modules))"
    )
    env = dict(__import__("os").environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.stdout.split("\n")[-2] == "0 []", r.stdout + r.stderr


def test_cli_flag_conflicts(inputs, tmp_path, capsys):
    from curveeditor.cli import main

    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    base = ["batch", str(inputs), "-o", str(tmp_path / "o"), "--recipe", str(recipe)]
    assert main(base + ["--jobs", "2", "--scheduler", "local"]) == 2
    assert "--jobs and --scheduler cannot be combined" in capsys.readouterr().err
    assert main(base + ["--ship", "ship"]) == 2
    assert capsys.readouterr().err == (
        "curveeditor-cli: error: --ship needs --scheduler (it says how inputs reach the Dask workers)\n"
    )
    assert main(base + ["--scheduler", "farm"]) == 2
    assert "expected tcp://HOST:PORT, HOST:PORT, local or local:N" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_unreachable_scheduler_is_one_line_and_writes_nothing(inputs, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    import curveeditor.batch.dask_engine as bd

    monkeypatch.setattr(bd, "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(BatchError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9: "):
        run_batch([str(inputs)], tmp_path / "o", RECIPE, scheduler="127.0.0.1:9", progress=_quiet)
    assert not (tmp_path / "o").exists()


def test_write_errors_name_the_real_output_not_the_workers_temp_file(inputs, tmp_path, monkeypatch):
    # Workers render outputs in a private temp folder; a writer error must still name OUT_DIR/x.csv.
    import curveeditor.io as cio
    from curveeditor.io.errors import ClipWriteError

    def failing_writer(clip, path, **opts):
        raise ClipWriteError(path, None, f"value out of range while writing {path}")

    monkeypatch.setattr(cio, "write_checked", failing_writer)
    rep = run_batch([str(inputs / "clip0.csv")], tmp_path / "o", RECIPE, progress=_quiet)
    (f,) = rep.files
    out = tmp_path / "o" / "clip0.csv"
    assert f.status == "failed" and f.error == f"{out}: value out of range while writing {out}"
    assert not out.exists()
