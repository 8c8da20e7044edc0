"""The editor's Save/Export: the dialog shows the written file's read-back figures; a file that would
miss the writer's bound is refused in a dialog and nothing is written (issue 8 section 1)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from curveeditor.app.window.files import check_lines
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.reduce import reduce_track
from curveeditor.engine.rotations import axis_angle_quat, hemisphere_continuous
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, verify

pytestmark = pytest.mark.gui


def reduced_turn() -> tuple[Clip, Clip]:
    t = np.linspace(0.0, 5.0, 302)
    q = hemisphere_continuous(axis_angle_quat(1, np.deg2rad(72.0 * t)))
    src = Clip("spin", 60.0, [RotationTrack("Spin", "quaternion", make_curve(t, q, mode="auto"))])
    return src, src.with_track(reduce_track(src.track("Spin"), 0.5))


@pytest.fixture
def window(qapp, tmp_path, monkeypatch):
    errors = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *a, **k: errors.append(a[2]))
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(tmp_path / "autosave"))
    w.errors = errors
    yield w
    w.doc.undo_stack.setClean()
    w.close()


def test_export_dialog_shows_the_written_files_figures(window, tmp_path):
    src, reduced = reduced_turn()
    window.doc.load(reduced, None)
    out = tmp_path / "out.anim"
    seen = []
    written = []
    window.files.written.connect(written.append)
    assert window.files.write(str(out), None, mark_saved=False, confirm=lambda ws: seen.extend(ws) or True)
    check = window.files.last_check
    back = read_clip(out).track("Spin")
    # The figures are those of the file on disk, and the warning counts agree with them.
    assert check.track("Spin").keys_written == back.n_keys > reduced.track("Spin").n_keys
    added = check.track("Spin").keys_added
    assert any(f"({added} key(s) added)" in w for w in seen)
    lines = check_lines(check)
    assert lines[0].startswith(f"written file read back: {back.n_keys} keys (+{added} by the writer)")
    assert "Spin: " in lines[1] and "opposite hemispheres" in lines[1]
    assert written == [check] and not window.errors
    # ... and the written file still turns the same way as the input (was 180 deg off).
    assert diff_tracks(src.track("Spin"), back).max_error < 0.5 + 0.012


def test_a_file_missing_the_bound_is_refused_in_a_dialog(window, tmp_path, monkeypatch):
    src, reduced = reduced_turn()
    window.doc.load(reduced, None)
    out = tmp_path / "out.anim"
    real = verify.check_written

    def too_far(clip, written, promise=None, ext=".anim", path=""):
        # A writer step that misses its bound (simulated by a much stricter promise).
        strict = verify.Promise(reference=src, bound_deg=0.01, what="the input")
        return real(clip, written, strict, ext, path)

    monkeypatch.setattr(verify, "check_written", too_far)
    assert not window.files.write(str(out), None, mark_saved=False, confirm=lambda ws: True)
    assert not out.exists()
    assert len(window.errors) == 1 and "track 'Spin' at " in window.errors[0]
    assert "nothing written" in window.errors[0]


def test_export_warnings_of_a_bvh_match_the_write(window, tmp_path):
    from curveeditor.app.window.files import export_warnings

    bvh = tmp_path / "a.bvh"
    rows = [
        " ".join(["0 0 0"] + [str(v) for v in (i * 5, i * 3, (i * 40) % 360 - 180, i, 2 * i, 3 * i)])
        for i in range(30)
    ]
    bvh.write_text(
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
        "Yrotation Xrotation\n  JOINT Spine\n  {\n    OFFSET 0 1 0\n    "
        "CHANNELS 3 Zrotation Yrotation Xrotation\n"
        "    End Site\n    {\n      OFFSET 0 1 0\n    }\n  }\n}\nMOTION\nFrames: 30\nFrame Time: 0.0333333\n"
        + "\n".join(rows)
        + "\n"
    )
    clip = read_clip(bvh)
    window.doc.load(clip, None)
    out = tmp_path / "a.anim"
    warnings = export_warnings(clip, str(out))
    assert not any("key(s) added" in w for w in warnings)  # keyed at the frames: nothing added
    assert window.files.write(str(out), None, mark_saved=False, confirm=lambda ws: True)
    assert window.files.last_check.keys_added == 0


def test_diff_dock_shows_the_written_files_figures(window, tmp_path):
    """After Export the Diff dock shows what the file on disk plays (read back), per track in the
    tooltip, with the keys written by the writer."""
    _src, reduced = reduced_turn()
    window.doc.load(reduced, None)
    out = tmp_path / "out.anim"
    assert window.files.write(str(out), None, mark_saved=False, confirm=lambda ws: True)
    back = read_clip(out).track("Spin")
    label = window.diff.written
    assert not label.isHidden() and window.diff.last_check is window.files.last_check
    assert label.full_text().startswith(f"{out}: written file read back: {back.n_keys} keys")
    assert f"Spin: {reduced.track('Spin').n_keys} -> {back.n_keys} keys; max error " in label.toolTip()


def test_export_bvh_writes_the_skeleton_back_and_is_offered_only_for_bvh_clips(window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from curveeditor.engine.clip import key_quaternions
    from curveeditor.engine.rotations import geodesic_angle
    from tests.io.test_bvh_writer import WRAPPED

    src = tmp_path / "wrapped.bvh"
    src.write_text(WRAPPED)
    window.doc.load(*reduced_turn()[:1], None)
    assert not window.act_exp_bvh.isEnabled()  # no skeleton to write back
    clip = read_clip(src)
    window.doc.load(clip, str(src))
    assert window.act_exp_bvh.isEnabled()
    out = tmp_path / "exports" / "clean.bvh"
    out.parent.mkdir()
    starts = []

    def fake_save(_parent, _title, start, filt):
        starts.append((start, filt))
        return str(out.with_suffix("")), filt  # no extension typed: the dialog adds .bvh

    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake_save)
    window.act_exp_bvh.trigger()
    assert starts and starts[0][0].endswith("wrapped_clean.bvh") and "*.bvh" in starts[0][1]
    back = read_clip(out)
    assert [t.path for t in back.tracks] == [t.path for t in clip.tracks]
    assert back.meta["hierarchy"] == clip.meta["hierarchy"]
    for a, b in zip(clip.tracks, back.tracks, strict=True):
        assert geodesic_angle(key_quaternions(a), key_quaternions(b)).max() < 1e-4
    # The Diff dock gets the written file's read-back figures, as for every other export.
    assert window.files.last_check is not None and window.files.last_check.path.endswith("clean.bvh")
    assert not window.errors
