"""The terminal output helpers (curveeditor.console, issue 25): path elision keeps the bone name,
tables fit a width with numbers under their headers, verdicts fit one line, the progress line's
percent and estimate, colour rules."""

from __future__ import annotations

import io

import pytest

from curveeditor.console.progress import Progress
from curveeditor.console.style import Out
from curveeditor.console.tables import Column, elide_file, elide_path, render_table
from curveeditor.console.verdict import verdict_line

DEEP = (
    "Bip001/Bip001 Pelvis/Bip001 Spine/Bip001 Spine1/Bip001 Spine2/Bip001 Neck/Bip001 L Clavicle/"
    "Bip001 L UpperArm/Bip001 L Forearm/Bip001 L ForeTwist7"
)


def out(width):
    return Out(io.StringIO(), width, False)


@pytest.mark.parametrize("width", [20, 30, 45, 80])
def test_elide_path_keeps_the_bone_name_and_the_start(width):
    s = elide_path(DEEP, width)
    assert s.endswith("Bip001 L ForeTwist7") and len(s) <= max(width, len("Bip001 L ForeTwist7"))
    assert "\u2026" not in s or DEEP.startswith(s.split("\u2026")[0])
    assert elide_path("hip/abdomen", 40) == "hip/abdomen"  # fits: unchanged
    assert elide_path("A very long root bone name", 5) == "A very long root bone name"  # no parent: whole


def test_elide_file_keeps_the_extension():
    f = "/work/shared/corpus/bvh/FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh"
    for w in (24, 40, 70):
        s = elide_file(f, w)
        assert len(s) <= w and s.endswith(".bvh")


def test_table_fits_and_keeps_numbers_under_headers():
    cols = [Column("track", "left", path=True), Column("keys before"), Column("max err (deg)")]
    rows = [[DEEP, "2752", "0.493211"], ["hip", "12", "0.000000"]]
    whole = render_table(cols, rows, out(None))
    assert whole[2].startswith(DEEP) and len(whole) == 4  # a pipe: one header line, whole paths
    for width in (40, 60, 80):
        lines = render_table(cols, rows, out(width))
        assert max(map(len, lines)) <= width
        dashes = next(line for line in lines if line.startswith("-"))
        ends = [
            i + 1
            for i, ch in enumerate(dashes)
            if ch == "-" and (i + 1 == len(dashes) or dashes[i + 1] == " ")
        ]
        for row in lines[lines.index(dashes) + 1 :]:
            assert row.rstrip()[-1] != " "
            for end in ends[1:]:
                assert row[end - 1] != " "  # right-aligned numbers end at their column's edge
        assert lines[lines.index(dashes) + 1].split("  ")[0].rstrip().endswith("Bip001 L ForeTwist7")


def test_colour_cells_keep_their_columns():
    cols = [Column("track", "left"), Column("wraps", style=lambda c: "warn" if c != "0" else None)]
    o = Out(io.StringIO(), 80, True)
    lines = render_table(cols, [["a", "3"], ["b", "0"]], o)
    assert "\x1b[33m3\x1b[0m" in lines[2] and "\x1b" not in lines[3]
    assert len(lines[2].replace("\x1b[33m", "").replace("\x1b[0m", "")) == len(lines[3])


def test_verdict_fits_one_line():
    reason = "5 of 99 tracks with problems; worst {path}: 12 wraps"
    line = verdict_line(out(100), "/some/long/folder/Biped.anim", False, reason, DEEP)
    assert len(line) <= 100 and "FAILED" in line and "…/Bip001 L ForeTwist7: 12 wraps)" in line
    line = verdict_line(out(80), "/some/long/folder/Biped.anim", False, reason, DEEP)
    # The details go last, and the room they leave goes back to the file's folders.
    assert line == "/some/long/folder/Biped.anim: FAILED (5 of 99 tracks with problems)"
    long_file = "/tmp/pytest-of-root/pytest-7/test_convert0/written out.anim"
    reason = "165 tracks read back; worst {path}: 0.0000 deg at the frames, bound 0.012 deg"
    line = verdict_line(out(80), long_file, True, reason, DEEP)
    assert line.endswith("/written out.anim: ok (165 tracks read back)") and 76 <= len(line) <= 80
    assert verdict_line(out(None), "a.anim", True, "fine") == "a.anim: ok (fine)"
    tight = verdict_line(
        out(40), "/x/y/z/a_very_long_name_of_a_clip.anim", False, "3 of 9 bad; worst {path}: 1", DEEP
    )
    assert len(tight) <= 40 and "FAILED (3 of 9 bad" in tight


def test_out_colour_rules(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "123")
    o = Out.for_stream(Tty())
    assert o.color and o.width == 123
    assert Out.for_stream(Tty(), wide=True).width is None
    monkeypatch.setenv("NO_COLOR", "")
    assert not Out.for_stream(Tty()).color
    monkeypatch.delenv("NO_COLOR")
    assert not Out.for_stream(io.StringIO()).color and Out.for_stream(io.StringIO()).width is None
    monkeypatch.setenv("COLUMNS", "40")
    assert Out.for_stream(Tty()).width == 80  # laid out for 80 columns at least


def test_progress_percent_estimate_and_quiet():
    now = [0.0]
    stream = io.StringIO()
    p = Progress(
        [("read", 1), ("reduce", 3), ("write", 1)], stream=stream, enabled=True, clock=lambda: now[0]
    )
    p._stop_timer()  # driven by the fake clock only
    p.step("read")
    assert stream.getvalue() == ""  # nothing before 0.5 s
    now[0] = 2.0
    p.step("reduce", 0.5)  # (1 + 1.5) / 5 = 50 % after 2 s: 2 s left
    assert stream.getvalue().endswith("reduce    50%  0:02 left")
    now[0] = 2.5
    p.step("write")
    now[0] = 3.0
    p.draw(force=True)
    assert "write     80%" in stream.getvalue()
    p.close()
    assert stream.getvalue().endswith("\r\x1b[K")
    silent = io.StringIO()
    q = Progress([("read", 1)], stream=silent, enabled=False, clock=lambda: 10.0)
    q.step("read", 0.5)
    q.close()
    assert silent.getvalue() == ""


def test_a_step_without_fractions_counts_its_estimate_down():
    now = [0.0]
    stream = io.StringIO()
    p = Progress([("read", 1), ("reduce", 3)], stream=stream, enabled=True, clock=lambda: now[0])
    p._stop_timer()
    now[0] = 1.0
    p.step("reduce")  # 25 % after 1 s: 3 s left, counted down while reduce reports nothing
    now[0] = 2.0
    p.draw(force=True)
    assert stream.getvalue().endswith("0:02 left")
    now[0] = 5.0
    p.draw(force=True)
    assert stream.getvalue().endswith("reduce    25%")  # past the estimate: no made-up figure
    p.close()
