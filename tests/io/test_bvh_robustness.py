"""BVH reader robustness (issue 11): deep nesting, many siblings, absurd frame times and values.

Each test is named after the cause the fuzzer found; each failed on the reader before the fix
(RecursionError, quadratic duplicate check, OverflowError, silently accepted values)."""

from __future__ import annotations

import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from curveeditor.io import bvh
from curveeditor.io.bvh import frame_rate_from_frame_time, read_bvh
from curveeditor.io.errors import ClipReadError

REPO = Path(__file__).resolve().parents[2]


def _nested(depth: int, frames: int = 2) -> str:
    out = ["HIERARCHY", "ROOT J0", "{", "OFFSET 0 0 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    for i in range(1, depth):
        out += [f"JOINT J{i}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    out += ["}"] * depth
    out += ["MOTION", f"Frames: {frames}", "Frame Time: 0.033333"]
    out += [" ".join(["0"] * (3 * depth))] * frames
    return "\n".join(out) + "\n"


def _siblings(n: int) -> str:
    out = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    for i in range(n):
        out += [f"JOINT J{i}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation", "}"]
    out += ["}", "MOTION", "Frames: 1", "Frame Time: 0.033333", " ".join(["1"] * (3 + 3 * n))]
    return "\n".join(out) + "\n"


#: Two joints (ZXY root with positions, XYZ child), 8 frames; ``{ft}`` and ``{cell}`` are filled in.
SMALL = """HIERARCHY
ROOT Hips
{
OFFSET 0 0 0
CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
JOINT Spine
{
OFFSET 0 1 0
CHANNELS 3 Xrotation Yrotation Zrotation
End Site
{
OFFSET 0 1 0
}
}
}
MOTION
Frames: 4
Frame Time: {ft}
0 0 0 1 2 3 1 1 1
0 0 0 2 {cell} 6 2 2 2
{pos} 0 0 3 6 9 3 3 3
0 0 0 4 8 12 4 4 4
"""
FRAME_TIME_LINE = 18


def _small(tmp_path: Path, ft="0.033333", cell="4", pos="0") -> Path:
    p = tmp_path / "clip.bvh"
    p.write_text(SMALL.replace("{ft}", ft).replace("{cell}", cell).replace("{pos}", pos))
    return p


def test_nesting_3000_levels_deep_parses_without_recursion_error(tmp_path):
    p = tmp_path / "deep.bvh"
    p.write_text(_nested(3000))
    clip = read_bvh(p)
    assert len(clip.tracks) == 3000
    deepest = clip.tracks[-1].path
    assert deepest.count("/") == 2999 and deepest.startswith("J0/J1/J2/") and deepest.endswith("/J2999")
    hierarchy = clip.meta["hierarchy"]
    assert [h["parent"] for h in hierarchy[:4]] == [None, 0, 1, 2]
    assert hierarchy[-1]["parent"] == 2998


def test_nesting_depth_is_bounded_by_the_total_path_length(tmp_path, monkeypatch):
    # Paths grow with depth (N nested joints: ~N^2/2 characters): the total is bounded, error names the joint.
    monkeypatch.setattr(bvh, "MAX_TOTAL_PATH_CHARS", 10_000)
    p = tmp_path / "deep.bvh"
    text = _nested(300)
    p.write_text(text)
    with pytest.raises(ClipReadError) as info:
        read_bvh(p)
    err = info.value
    lines = text.splitlines()
    assert lines[err.line - 1].startswith("JOINT J"), str(err)
    assert "joint paths exceed 10,000 characters" in err.reason and "levels deep" in err.reason


def test_duplicate_joint_paths_are_found_in_linear_time(tmp_path):
    # The duplicate-path check scanned all earlier joints: 10,000 siblings took 4.6 s, 20,000 25 s.
    # Now a set: 20,000 siblings parse in about 1.7 s on the loaded 2-core machine (hang guard: 12 s).
    p = tmp_path / "wide.bvh"
    p.write_text(_siblings(20_000))
    t0 = time.perf_counter()
    clip = read_bvh(p)
    elapsed = time.perf_counter() - t0
    assert len(clip.tracks) == 20_001 and clip.tracks[-1].path == "Hips/J19999"
    assert elapsed < 12.0, f"{elapsed:.1f} s for 20,000 sibling joints"
    # Still a duplicate among 20,000 siblings is found, on its own line.
    text = _siblings(20_000).replace("JOINT J19999", "JOINT J7")
    p.write_text(text)
    with pytest.raises(ClipReadError, match="duplicate joint path 'Hips/J7'") as info:
        read_bvh(p)
    assert text.splitlines()[info.value.line - 1] == "JOINT J7" and info.value.line > 20_000 * 5


@pytest.mark.parametrize(
    "ft, side",
    [
        ("5e-324", "over 10,000"),
        ("1e-9", "over 10,000"),
        ("0.00005", "over 10,000"),
        ("100", "under 1"),
        ("1000", "under 1"),
    ],
)
def test_frame_time_outside_the_frame_rate_range_is_a_one_line_error(tmp_path, ft, side):
    # 5e-324: OverflowError in frame_rate_from_frame_time; 1e-9: keys a nanosecond apart; 100/1000:
    # `--resample 60` ran 115 s and took 3.9 GB on 8 frames.
    p = _small(tmp_path, ft=ft)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ClipReadError) as info:
            read_bvh(p)
    err = info.value
    assert err.line == FRAME_TIME_LINE
    assert f"Frame Time: {ft} s is {side} frames per second" in err.reason
    assert "1 to 10,000 fps" in err.reason


@pytest.mark.parametrize("ft, rate", [("1", 1.0), ("0.0001", 10_000.0), ("0.008333", 120.0)])
def test_frame_times_at_the_ends_of_the_range_are_read(tmp_path, ft, rate):
    assert read_bvh(_small(tmp_path, ft=ft)).frame_rate == rate


def test_frame_rate_from_a_denormal_frame_time_does_not_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert frame_rate_from_frame_time(5e-324) == np.inf
    assert frame_rate_from_frame_time(0.033333) == 30.0


@pytest.mark.parametrize(
    "cell, pos, column, what",
    [
        ("1e300", "0", 5, "rotation value 1e+300 deg"),
        ("-1.7e308", "0", 5, "rotation value -1.7e+308 deg"),
        ("4", "1e300", 1, "position value 1e+300"),
    ],
)
def test_values_near_float64_limits_are_a_typed_error_without_numpy_warnings(
    tmp_path, cell, pos, column, what
):
    p = _small(tmp_path, cell=cell, pos=pos)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # overflow in the slopes printed RuntimeWarnings first
        with pytest.raises(ClipReadError) as info:
            read_bvh(p)
    err = info.value
    assert what in err.reason and f"column {column}" in err.reason, str(err)
    assert err.line == (20 if pos == "0" else 21)


def test_one_cell_of_a_million_degrees_reads_as_stored(tmp_path):
    # The read itself stays small (the order conversion on export is reorder.rekey's business).
    import tracemalloc

    p = _small(tmp_path, cell="1e6")
    tracemalloc.start()
    clip = read_bvh(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert clip.track("Hips").curve.value[1, 0] == 1e6
    assert peak < 5_000_000


def test_cli_on_the_fuzzed_frame_time_prints_one_line(tmp_path):
    p = _small(tmp_path, ft="5e-324")
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "convert", str(p), str(tmp_path / "out.csv")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(
        f"curveeditor-cli: error: {p}:{FRAME_TIME_LINE}: "
    )
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("fork", [False, True], ids=["one process", "halves side by side"])
def test_a_long_motion_read_in_halves_is_the_whole_read(tmp_path, monkeypatch, fork):
    """From ``bvh.SPLIT_MIN_ROWS`` frame lines the motion is parsed as two halves (one in a forked
    child where the process may fork): the same values bit for bit, and a bad value in either half
    is named at its line as the one-piece read names it."""
    from curveeditor.io import beside
    from tests.io.test_frame_samples import wavy_rows, write_bvh

    monkeypatch.setattr(beside, "may_fork", lambda: fork)
    src = tmp_path / "long.bvh"
    write_bvh(src, wavy_rows(3001))
    monkeypatch.setattr(bvh, "SPLIT_MIN_ROWS", 10**9)
    whole = read_bvh(src)
    monkeypatch.setattr(bvh, "SPLIT_MIN_ROWS", 1000)
    halves = read_bvh(src)
    for a, b in zip(whole.tracks, halves.tracks, strict=True):
        assert a.curve.equals(b.curve)
    lines = src.read_text().splitlines()
    first = lines.index("MOTION") + 3
    for frame in (10, 2900):  # one in each half
        bad = list(lines)
        bad[first + frame] = bad[first + frame].replace("0 0 0", "0 zero 0", 1)
        (tmp_path / "bad.bvh").write_text("\n".join(bad) + "\n")
        with pytest.raises(bvh.ClipReadError) as info:
            read_bvh(tmp_path / "bad.bvh")
        assert info.value.line == first + frame + 1 and "'zero' is not a number" in str(info.value)
