"""Issue 20 in the editor: the recipe panel and the Diff dock show each step's figure against the
track just before it (the unwrap's removed spins as intended, the reduce's error against its
tolerance); pops are a problem kind with a track-tree badge and a Problems-dock row that jumps to
them, on a corpus rig; the export dialog names what a CSV cannot hold. A screenshot of the Diff dock
and the recipe panel on the demo clip is saved for review."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from curveeditor.app.common.theme import PROBLEM_KINDS
from curveeditor.app.tracks.tree import TRACK_ROLE
from curveeditor.app.window.files import export_warnings
from curveeditor.engine import analysis
from curveeditor.io import read_clip
from curveeditor.samples import SAMPLES_DIR
from tests.app.windows import shown_window
from tests.conftest import corpus_files

pytestmark = pytest.mark.gui

WALK = [p for p in corpus_files("bvh", "*.bvh") if p.name.endswith("cmu_12_01_walk.bvh")]


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("trust"))


def test_app_problem_kinds_are_the_engines():
    assert PROBLEM_KINDS == analysis.PROBLEM_KINDS


def test_recipe_panel_and_diff_dock_separate_the_intended_change_from_the_error(win, qtbot, tmp_path):
    clip = read_clip(SAMPLES_DIR / "demo.anim")
    win.doc.load(clip, None)
    win.doc.select_paths(["Character"])
    panel = win.recipe
    panel.scope.setCurrentIndex(panel.scope.findData("all"))
    panel.add_step("unwrap")
    panel.add_step("reduce", {"max_error": 2.0})
    qtbot.waitUntil(
        lambda: panel.result is not None and len(panel.result.figures) == len(clip.tracks), timeout=20000
    )
    qtbot.waitUntil(lambda: win.diff.step_figures and win.diff.wait(100), timeout=20000)
    text = panel.changes_label.text()
    # Before: one "max 180.00" for unwrap + reduce, spins and reduction error mixed.
    assert "step 1 unwrap (lossless, intended): 4 wrap jumps, 2 Euler flips removed" in text
    assert "poses at keys moved 0.000 deg (ok)" in text
    assert "step 2 reduce 2 deg: played motion max" in text and "tolerance 2 deg: ok" in text
    assert "<b>Character</b> unwrap: 4 wrap jumps removed at" in text
    cells = win.diff.step_cells()
    assert cells["Character"].startswith("1 unwrap: 4 wraps  2 reduce: ")
    assert cells["Character"].endswith(" ok")
    assert cells["Character/Spine"].startswith("1 unwrap: 2 flips")
    assert win.diff.steps_label.isVisible() and "lossless, intended" in win.diff.steps_label.toolTip()
    row = next(r for r in range(win.diff.table.rowCount()) if win.diff.table.item(r, 0).text() == "Character")
    tip = win.diff.table.item(row, 5).toolTip()
    assert "Unity played" in tip and "(a spin or long-way swing the keys do not need: removed)" in tip
    from PySide6.QtWidgets import QDockWidget

    dock = next(d for d in win.findChildren(QDockWidget) if d.windowTitle() == "Diff")
    dock.raise_()
    qtbot.wait(100)
    shot = Path(os.environ.get("CURVEEDITOR_SHOTS", tmp_path)) / "trust-diff-dock.png"
    win.grab().save(str(shot))
    assert shot.stat().st_size > 10_000
    panel.discard()
    while panel.steps:
        panel.list.setCurrentRow(0)
        panel.remove_current()


@pytest.mark.corpus
@pytest.mark.skipif(not WALK, reason="corpus cmu_12_01_walk.bvh absent")
def test_pops_get_a_badge_and_a_problems_row_that_jumps_there(win, qtbot):
    clip = read_clip(WALK[0])
    arm = next(t.path for t in clip.tracks if t.path.endswith("/LeftShoulder/LeftArm"))
    win.doc.load(clip, str(WALK[0]))
    qtbot.waitUntil(lambda: win.problem_index.counts(arm)["pop"] > 0, timeout=20000)
    tree = win.tracks
    idx = tree.model.index_for_track(arm)
    badge = tree.model.data(idx.siblingAtColumn(2))
    assert "1P" in badge.split()
    assert "pop" in tree.model.data(idx, 3).lower()  # tooltip
    # The Problems dock lists it; a click selects the track and key and moves the time there.
    panel = win.problems
    panel.kind_box.setCurrentIndex(panel.kind_box.findData("pop"))
    rows = [
        panel.model.problem(panel.proxy.mapToSource(panel.proxy.index(r, 0)).row())
        for r in range(panel.proxy.rowCount())
    ]
    assert rows and all(p.kind == "pop" for p in rows)
    target = next(p for p in rows if p.path == arm)
    assert "9,874 deg/s" in target.detail or "deg/s" in target.detail
    r = next(i for i, p in enumerate(rows) if p is target)
    panel.table.clicked.emit(panel.proxy.index(r, 0))
    assert win.doc.selected_paths[0] == arm
    assert win.doc.current_time == pytest.approx(target.time)
    assert win.doc.selected_keys.get(arm) == {target.index}
    assert "pop" in panel.summary.text()
    panel.kind_box.setCurrentIndex(0)
    assert idx.data(TRACK_ROLE) == arm


def test_export_dialog_names_what_a_csv_cannot_hold(tmp_path):
    clip = read_clip(SAMPLES_DIR / "demo.anim")
    lines = export_warnings(clip, str(tmp_path / "out.csv"))
    assert any("quaternion track(s) (Character/RightHand) written as Euler keys" in w for w in lines)
    euler_only = clip.with_tracks([t for t in clip.tracks if t.kind == "euler"])
    assert export_warnings(euler_only, str(tmp_path / "out.csv")) == [] or all(
        "non-rotation" in w for w in export_warnings(euler_only, str(tmp_path / "out.csv"))
    )
    assert np.isfinite(clip.frame_rate)


def test_the_export_dialog_shows_the_csv_losses_before_writing(win, tmp_path, monkeypatch):
    # Issue 20: "Export CSV then reopen: tangents reset, pre/post infinity and read-only curves gone,
    # no warning". The dialog now lists what the CSV cannot hold, and the Euler tracks come back whole.
    clip = read_clip(SAMPLES_DIR / "demo.anim")
    win.doc.load(clip, None)
    out = tmp_path / "demo.csv"
    seen: list[str] = []
    errors: list = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *a, **k: errors.append(a[2]))
    in_place: list[bool] = []

    def confirm(warnings):
        seen.extend(warnings)
        in_place.append(out.exists())  # asked before the file is put in place
        return True

    assert win.files.write(str(out), None, mark_saved=False, confirm=confirm), errors
    assert in_place == [False] and not errors
    assert any("quaternion track(s) (Character/RightHand) written as Euler keys" in w for w in seen)
    assert any("non-rotation curve(s) not written" in w for w in seen)
    back = read_clip(out)
    assert back.frame_rate == clip.frame_rate
    for t in clip.tracks:
        if t.kind == "euler":
            assert back.track(t.path).curve.equals(t.curve), t.path
    win.doc.undo_stack.setClean()
