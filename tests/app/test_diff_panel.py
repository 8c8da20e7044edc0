"""DiffPanel: per-track figures and the error strip come from engine.diff."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.app.model.document import ClipDocument
from curveeditor.app.recipe.diff_panel import DiffPanel
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve
from curveeditor.engine.diff import diff_tracks


def _clip():
    t = np.linspace(0.0, 2.0, 21)
    a = RotationTrack("Root/A", "euler", Curve.make(t, np.c_[20 * np.sin(t), 90 * t, 10 * np.cos(t)]))
    b = RotationTrack("Root/B", "euler", Curve.make(t, np.c_[5 * t, np.zeros(21), np.zeros(21)]))
    return Clip("c", 30.0, [a, b])


def _offset(track, dx):
    # Adding a constant to the X channel of a ZXY track (slopes unchanged) turns every played pose by
    # exactly dx degrees (R_y R_x(x + dx) R_z = R_y R_x(x) R_z (R_z^-1 R_x(dx) R_z)).
    return track.with_curve(track.curve.with_keys(value=track.curve.value + [dx, 0.0, 0.0]))


@pytest.fixture
def setup(qtbot):
    doc = ClipDocument()
    doc.load(_clip(), None)
    panel = DiffPanel(doc)
    qtbot.addWidget(panel)
    panel.resize(500, 400)
    yield doc, panel
    panel.runner.shutdown()


def test_constant_two_degree_offset(setup, qtbot):
    doc, panel = setup
    assert panel.figures() == []
    preview = doc.clip.with_track(_offset(doc.clip.track("Root/A"), 2.0))
    with qtbot.waitSignal(panel.diffsReady, timeout=5000):
        doc.set_preview(preview)
    assert panel.figures() == [("Root/A", 21, 21, "2.00", "2.00")]
    t, err = panel.plotted()
    assert len(t) > 1000  # dense grid, not just the keys
    np.testing.assert_allclose(err, 2.0, atol=1e-6)
    assert panel.max_line.value() == pytest.approx(2.0, abs=1e-6)
    assert "preview" in panel.title.text()


def test_figures_equal_engine_and_follow_selection(setup, qtbot):
    doc, panel = setup
    new_a = _offset(doc.clip.track("Root/A"), 3.0)
    new_b = doc.clip.track("Root/B").with_curve(
        doc.clip.track("Root/B").curve.select(np.array([0, 5, 10, 20]))
    )
    edited = doc.clip.with_track(new_a).with_track(new_b)
    with qtbot.waitSignal(panel.diffsReady, timeout=5000):
        doc.apply_clip(edited, "edit")  # no preview: original vs clip
    rows = {r[0]: r for r in panel.figures()}
    for before, after in ((doc.original.track("Root/A"), new_a), (doc.original.track("Root/B"), new_b)):
        d = diff_tracks(before, after)
        assert rows[d.path] == (
            d.path,
            d.keys_before,
            d.keys_after,
            f"{d.max_error:.2f}",
            f"{d.rms_error:.2f}",
        )
    assert rows["Root/B"][1:3] == (21, 4)
    doc.select_paths(["Root/B"])
    t, err = panel.plotted()
    d = diff_tracks(doc.original.track("Root/B"), new_b)
    np.testing.assert_allclose(err, d.errors)
    # Clicking a row selects its track.
    row = [r for r in range(panel.table.rowCount()) if panel.table.item(r, 0).text() == "Root/A"][0]
    panel.table.itemClicked.emit(panel.table.item(row, 3))
    assert doc.selected_paths == ["Root/A"]


def test_cursor_follows_time_and_scrubs(setup):
    doc, panel = setup
    doc.set_time(1.25)
    assert panel.cursor.value() == pytest.approx(1.25)
    panel.cursor.setValue(0.5)
    assert doc.current_time == pytest.approx(0.5)


def test_no_changes_message(setup, qtbot):
    doc, panel = setup
    assert panel.figures() == []
    assert "no preview and no edits" in panel.empty_text.toPlainText()
