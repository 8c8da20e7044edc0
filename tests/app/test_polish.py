"""Correctness and polish of issue 9, each on the real window under Xvfb: File > Open asks about
unsaved edits, tangent handles vanish after a track switch or a load, axes never SI-rescale,
flat channels get a readable range, time in seconds or frames (kept in settings), the slider
jumps to the click, previews are framed and their keys drawn, K keeps the curve's shape, the key
menu shows the tangent mode, visible dark-theme transport icons, the export folder remembered."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from curveeditor.engine import edit as ed
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import evaluate
from curveeditor.engine.tangents import make_curve
from tests.app.rig_clips import biped_clip
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("polish"))


def sparse_clip() -> Clip:
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    e = np.stack([60 * np.sin(2 * t), 30 * np.cos(3 * t), 10 * t], axis=1)
    return Clip(
        "sparse",
        30.0,
        [
            RotationTrack("Root/Arm", "euler", make_curve(t, e)),
            RotationTrack("Root/Leg", "euler", make_curve(t, -e)),
        ],
    )


def test_file_open_asks_about_unsaved_edits(win, qtbot, monkeypatch):
    win.doc.load(sparse_clip(), None)
    tr = win.doc.clip.tracks[0]
    win.doc.apply_clip(win.doc.clip.with_track(ed.move_keys(tr, [1], 0.0, 0, 5.0)), "Move")
    asked, dialogs = [], []
    monkeypatch.setattr(
        QMessageBox, "warning", lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.Cancel
    )
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: dialogs.append(a) or ("", ""))
    win.act_open.trigger()
    assert len(asked) == 1 and dialogs == []  # cancelled: no file dialog, the edit is kept
    assert win.doc.is_dirty()
    win.doc.undo_stack.setClean()


def test_tangent_handles_vanish_after_switching_track_and_opening_a_file(win, qtbot):
    win.doc.load(sparse_clip(), None)
    a, b = (t.path for t in win.doc.clip.tracks)
    win.doc.select_paths([a])
    win.doc.select_keys({a: {2}})
    qtbot.wait(10)

    def handle_counts():
        return [s.handle_pts.getData()[0].size for s in win.graphs.strips if s.is_euler]

    assert all(n == 2 for n in handle_counts())  # in and out handle in each channel plot
    win.doc.select_paths([b])
    qtbot.wait(10)
    assert handle_counts() == [0, 0, 0] and win.graphs.handle_points == []
    win.doc.select_paths([a])
    win.doc.select_keys({a: {2}})
    win.doc.load(biped_clip(20), None)
    qtbot.wait(10)
    assert handle_counts() == [0, 0, 0]
    assert all(
        s.handle_line.getData()[0] is None or s.handle_line.getData()[0].size == 0
        for s in win.graphs.strips
        if s.is_euler
    )


def test_axes_never_si_rescale_and_a_flat_channel_gets_a_readable_range(win, qtbot):
    t = np.linspace(0.0, 0.4, 13)  # 0.4 s: pyqtgraph labelled it "time (s) (x0.001)", ticks 0-400
    e = np.zeros((13, 3))
    e[:, 0] = 0.0004  # flat: auto-range spans ~1e-9 deg, labelled "(x0.001)"
    e[:, 1] = 20 * np.sin(10 * t)
    win.doc.load(Clip("flat", 30.0, [RotationTrack("Flat", "euler", make_curve(t, e))]), None)
    qtbot.wait(20)
    g = win.graphs
    for s in g.strips:
        for name in ("left", "bottom"):
            ax = s.plot.getAxis(name)
            assert ax.autoSIPrefixScale == 1.0 and "x0.001" not in ax.labelString()
    lo, hi = g.strips[0].vb.viewRange()[1]
    assert hi - lo >= 2.0 - 1e-9 and lo < 0.0004 < hi


def test_time_axis_in_frames_is_a_kept_setting_and_the_readout_shows_whole_frames(win, qtbot):
    win.doc.load(sparse_clip(), None)
    win.act_frames.setChecked(True)
    try:
        ax = win.graphs.strips[-1].time_axis
        assert ax.tickStrings([0.5, 1.0], 1.0, 0.5) == ["15", "30"]
        assert "frames" in ax.labelString()
        assert win.settings.get_bool("view/frames", False) is True
        win.doc.set_time(12 / 30)
        assert win.timeline.readout.shown_text().startswith("frame 12 ·")
        assert win.timeline.time_box.value() == pytest.approx(12.0)
    finally:
        win.act_frames.setChecked(False)
    assert win.graphs.strips[-1].time_axis.tickStrings([0.5], 1.0, 0.5) == ["0.5"]


def test_timeline_slider_jumps_to_the_clicked_time(win, qtbot):
    win.doc.load(sparse_clip(), None)
    win.doc.set_time(0.0)
    sl = win.timeline.slider
    QTest.mouseClick(sl, Qt.MouseButton.LeftButton, pos=QPoint(int(sl.width() * 0.75), sl.height() // 2))
    end = win.doc.clip.end
    assert win.doc.current_time == pytest.approx(0.75 * end, abs=0.08 * end)  # not a 10-frame page


def test_unwrap_preview_leaving_the_range_is_framed_and_reduce_keys_are_drawn(win, qtbot):
    win.doc.load(sparse_clip(), None)
    tr = win.doc.clip.tracks[0]
    win.doc.select_paths([tr.path])
    win.graphs.frame_all()
    moved = tr.with_curve(tr.curve.with_keys(value=tr.curve.value + np.array([720.0, 0, 0])))
    win.doc.set_preview(win.doc.clip.with_track(moved))
    qtbot.wait(10)
    lo, hi = win.graphs.strips[0].vb.viewRange()[1]
    assert hi >= float(moved.curve.value[:, 0].max())
    # a preview with other key times (reduce / resample): its keys are drawn as markers
    t = np.linspace(0, 2, 9)
    other = RotationTrack(tr.path, "euler", make_curve(t, evaluate(tr.curve, t)))
    win.doc.set_preview(win.doc.clip.with_track(other))
    qtbot.wait(10)
    keys = [it for it, where, ch in win.graphs.items[tr.path].preview if where == "keys" and ch == 0]
    assert len(keys) == 1
    np.testing.assert_allclose(keys[0].getData()[0], t)
    win.doc.set_preview(None)


def test_k_inserts_a_key_keeping_the_curve_shape(win, qtbot):
    win.doc.load(sparse_clip(), None)
    tr = win.doc.clip.tracks[0]
    win.doc.select_paths([tr.path])
    win.doc.set_time(0.7)
    win.activateWindow()
    QTest.qWaitForWindowActive(win)
    win.graphs.glw.setFocus()
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_K)
    new = win.doc.clip.track(tr.path)
    assert new.n_keys == tr.n_keys + 1
    grid = np.linspace(0.5, 1.0, 51)
    err = np.abs(evaluate(new.curve, grid) - evaluate(tr.curve, grid)).max()
    # ClampedAuto at the new key (the old behaviour) bends the neighbouring segments by degrees
    plain, _i = ed.insert_key(tr, 0.7)
    err_plain = np.abs(evaluate(plain.curve, grid) - evaluate(tr.curve, grid)).max()
    assert err < 0.05 * err_plain and err < 0.5
    i = int(np.argmin(np.abs(new.times - 0.7)))
    h = 1e-4
    slope = (evaluate(tr.curve, np.array([0.7 + h])) - evaluate(tr.curve, np.array([0.7 - h])))[0] / (2 * h)
    np.testing.assert_allclose(new.curve.in_slope[i], slope, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(new.curve.out_slope[i], slope, rtol=1e-4, atol=1e-6)
    win.doc.undo_stack.undo()


def test_key_menu_shows_the_selected_keys_tangent_mode(win, qtbot):
    win.doc.load(sparse_clip(), None)
    tr = win.doc.clip.tracks[0]
    win.doc.select_paths([tr.path])
    win.doc.select_keys({tr.path: {2}})
    checked = [a.text() for a in win.tangent_actions if a.isChecked()]
    assert checked == ["Clamped Auto"]
    win.set_tangent_preset("Auto")
    assert [a.text() for a in win.tangent_actions if a.isChecked()] == ["Auto"]
    win.doc.undo_stack.undo()


def test_dark_theme_transport_icons_are_visible(win, qtbot):
    win.set_theme("dark")
    try:
        img = win.timeline.act_play.icon().pixmap(32, 32).toImage()
        lightest = max(
            QColor(img.pixel(x, y)).lightness()
            for x in range(32)
            for y in range(32)
            if QColor.fromRgba(img.pixel(x, y)).alpha() > 200
        )
        assert lightest > 180  # drawn in the dark theme's light text colour
    finally:
        win.set_theme("light")


def test_export_dialog_opens_in_the_last_export_folder(win, qtbot, tmp_path, monkeypatch):
    win.doc.load(sparse_clip(), None)
    out = tmp_path / "exports"
    out.mkdir()
    starts = []

    def fake_save(_parent, _title, start, _filter):
        starts.append(start)
        return str(out / "clip_out.csv"), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake_save)
    monkeypatch.setattr(win.files, "write", lambda *a, **k: True)
    assert win.files.export_dialog("csv")
    assert win.files.export_dialog("anim-euler")
    assert os.path.dirname(starts[1]) == str(out)
