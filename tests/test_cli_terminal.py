"""The CLI's human-readable output on a terminal (issue 25): tables fit 80, 100 and 200 columns with
every bone name whole and the figures under their headers, progress on stderr only on a terminal,
colour only on a terminal without NO_COLOR; in a pipe the same commands print whole, stable rows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.app.rig_clips import biped_clip
from tests.conftest import corpus_files
from tests.pty_run import run_on_pty

REPO = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_pty(args, cols: int, env: dict | None = None) -> tuple[int, str, str]:
    """``curveeditor-cli ARGS`` with stdout on a pseudo-terminal ``cols`` wide; (status, stdout, stderr)."""
    return run_on_pty([sys.executable, "-m", "curveeditor.cli", *args], cols, "stdout", env)


def run_pipe(args) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    e["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", *map(str, args)], capture_output=True, text=True, env=e
    )


def table(lines: list[str]) -> tuple[list[tuple[int, int]], list[str], list[str]]:
    """(column spans from the dashes line, header lines, row lines) of the first table in ``lines``."""
    k = next(i for i, line in enumerate(lines) if line.startswith("---"))
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[k])]
    head_start = k - 1
    while head_start > 0 and lines[head_start - 1].startswith(" "):
        head_start -= 1  # folded headers: the first line starts with spaces
    rows = []
    for line in lines[k + 1 :]:
        if not line.strip() or line.startswith(("problems:", "...", "no track", "total keys")):
            break
        rows.append(line)
    return spans, lines[head_start:k], rows


def _deep_rigs(tmp: Path) -> list[Path]:
    """The corpus's deepest rigs and a generated 99-track Biped with a few problems."""
    from curveeditor.engine.clip import RotationTrack
    from curveeditor.engine.tangents import make_curve
    from curveeditor.io import write_clip

    clip = biped_clip(n_keys=90)
    tracks = list(clip.tracks)
    for i in (12, 40, 77):  # a wrap jump in three deep tracks
        t = tracks[i]
        v = np.array(t.curve.value)
        v[45:, 1] += 360.0
        tracks[i] = RotationTrack(t.path, "euler", make_curve(t.times, v))
    biped = tmp / "biped.anim"
    write_clip(clip.with_tracks(tracks), biped)
    files = [biped]
    for pattern in ("*CMU_Sample_05_01.bvh", "*Joe_Walk-In-Circle.bvh", "*Malmaars*LoadedAnimation*"):
        files += corpus_files("bvh" if pattern.endswith(".bvh") else "anim", pattern)
    return files


@pytest.fixture(scope="module")
def rigs(tmp_path_factory):
    return _deep_rigs(tmp_path_factory.mktemp("rigs"))


def _paths(path: Path) -> list[str]:
    r = run_pipe(["inspect", path, "--json"])
    return [t["path"] or "(root)" for t in json.loads(r.stdout)["tracks"]]


@pytest.mark.parametrize("cols", [80, 100, 200])
def test_inspect_fits_the_terminal_with_whole_bone_names(rigs, cols):
    for rig in rigs:
        status, out, _err = run_pty(["inspect", rig, "--all"], cols)
        assert status == 0, out
        lines = [ANSI.sub("", line) for line in out.splitlines()]
        assert max(len(line) for line in lines) <= cols, (rig.name, cols, max(lines, key=len))
        spans, heads, rows = table(lines)
        paths = _paths(rig)
        assert len(rows) == len(paths)
        for row, path in zip(rows, paths, strict=True):
            cell = row[spans[0][0] : spans[0][1]].rstrip()
            bone = path.rpartition("/")[2]
            assert cell.endswith(bone), (cell, bone)  # the bone name whole
            assert cell == path or "\u2026" in cell  # elided in the middle, never cut silently
            for a, b in spans[1:]:  # every other cell inside its column, under its header
                text = row[a:b]
                assert row[a - 1] == " " and (b == len(row) or row[b] == " "), (row, a, b)
                assert text.strip(), (row, a, b)
        assert "max speed" in " ".join(heads) and "(deg/s)" in " ".join(heads)
        assert lines[-1].startswith(tuple(f"{p}" for p in ("biped.anim", "\u2026", str(rig)[:10]))) or (
            ": ok (" in lines[-1] or ": FAILED (" in lines[-1]
        )


def test_inspect_in_a_pipe_prints_whole_rows(rigs):
    for rig in rigs:
        r = run_pipe(["inspect", rig, "--all"])
        assert r.returncode == 0
        lines = r.stdout.splitlines()
        spans, _heads, rows = table(lines)
        for row, path in zip(rows, _paths(rig), strict=True):
            assert row.startswith(path + " "), (row, path)
        assert "\x1b[" not in r.stdout and "\u2026" not in r.stdout


def test_many_tracks_list_problems_first_then_a_count(rigs):
    biped = rigs[0]
    status, out, _ = run_pty(["inspect", biped], 100)
    lines = [ANSI.sub("", line) for line in out.splitlines()]
    _spans, _heads, rows = table(lines)
    assert len(rows) == 3  # the three tracks with a wrap jump, worst first
    assert any(line.startswith("... and 96 track(s) with no problems") for line in lines)
    assert ": FAILED (3 of 99 tracks with problems; worst " in lines[-1] and lines[-1].endswith("1 wrap)")
    assert len(table(run_pipe(["inspect", biped, "--all"]).stdout.splitlines())[2]) == 99


def test_colour_on_a_terminal_only_and_never_with_no_color(rigs):
    biped = rigs[0]
    _, coloured, _ = run_pty(["inspect", biped], 100)
    assert "\x1b[1;31mFAILED\x1b[0m" in coloured and "\x1b[33m1\x1b[0m" in coloured
    _, plain, _ = run_pty(["inspect", biped], 100, env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain and "FAILED" in plain
    assert "\x1b[" not in run_pipe(["inspect", biped]).stdout


@pytest.mark.parametrize("cols", [80, 100])
def test_clean_output_fits_and_ends_with_a_verdict(rigs, tmp_path, cols):
    rig = next((r for r in rigs if "CMU_Sample" in r.name), rigs[0])
    status, out, err = run_pty(["clean", rig, "-o", tmp_path / "o.anim", "--unwrap", "--reduce", "0.5"], cols)
    assert status == 0, err
    lines = [ANSI.sub("", line) for line in out.splitlines()]
    assert max(len(line) for line in lines) <= cols, max(lines, key=len)
    assert re.search(r"o\.anim: ok \(", lines[-1]), lines[-1]


def test_progress_line_on_a_terminal_only(tmp_path):
    from curveeditor.engine.clip import Clip
    from curveeditor.io import write_clip

    # long enough work to pass the 0.5 s delay: a dense 40-track clip reduced
    clip = biped_clip(n_keys=1500, rate=120.0)
    src = tmp_path / "long.anim"
    write_clip(Clip("long", 120.0, clip.tracks[:40]), src)
    args = ["clean", src, "-o", tmp_path / "o.anim", "--unwrap", "--reduce", "0.2"]
    status, err, stdout = run_on_pty([sys.executable, "-m", "curveeditor.cli", *args], 100, "stderr")
    assert status == 0
    shown = [s for s in re.split(r"\r\x1b\[K", err) if s.strip()]
    assert any(re.match(r"(read|unwrap|reduce|write|verify)\s+\d+%", s) for s in shown), err[:400]
    assert err.endswith("\r\x1b[K") or "\r\x1b[K" in err  # erased at the end
    assert "%" not in stdout  # the table on stdout has no progress in it
    quiet = run_pipe(args + ["--quiet"])
    assert quiet.returncode == 0 and "%" not in quiet.stderr
    piped = run_pipe(args)
    assert "\x1b[K" not in piped.stderr


@pytest.mark.parametrize("cols", [80, 100, 200])
def test_convert_output_fits_with_paths_whole(rigs, tmp_path, cols):
    """Every line ``convert`` prints fits the terminal (its first line named two corpus paths on 118
    columns at 80: now elided as ``clean``'s), track paths whole; in a pipe, one line each."""
    rig = next((r for r in rigs if "CMU_Sample" in r.name), rigs[0])
    out = tmp_path / "written out.anim"
    status, shown, err = run_pty(["convert", rig, out], cols)
    assert status == 0, err
    lines = [ANSI.sub("", line) for line in shown.splitlines()]
    assert max(len(line) for line in lines) <= cols, max(lines, key=len)
    assert "written out.anim" in lines[0]  # (the output's name is what an elided line keeps)
    assert re.search(r"written out\.anim: ok \(", lines[-1]), lines[-1]
    piped = run_pipe(["convert", rig, tmp_path / "again.anim"]).stdout.splitlines()
    assert piped[0] == f"{rig} -> {tmp_path / 'again.anim'}: " + piped[0].split(": ", 1)[1]
    assert piped[1].startswith("written file read back: ")
