"""CompareDialog: the figures per resampling method are engine.diff's, and the chosen method can be
sent to the recipe panel or applied."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from curveeditor.app.model.document import ClipDocument
from curveeditor.app.recipe.compare import CompareDialog
from curveeditor.app.recipe.panel import RecipePanel
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.resample import METHODS, resample_track


def _clip():
    # Sparse keys with a fast Y turn: the methods differ between keys.
    t = np.array([0.0, 0.3, 0.5, 1.1, 1.4, 2.0])
    v = np.array([[0, 0, 0], [30, 80, 5], [10, 200, -20], [-20, 260, 40], [45, 300, 0], [0, 360, 10.0]])
    return Clip("c", 30.0, [RotationTrack("Root/Arm", "euler", Curve.make(t, v))])


@pytest.fixture
def setup(qtbot):
    doc = ClipDocument()
    doc.load(_clip(), None)
    dlg = CompareDialog(doc)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.result is not None, timeout=10000)
    yield doc, dlg
    dlg.runner.shutdown()


def test_figures_equal_engine_diff(setup, qtbot):
    doc, dlg = setup
    assert not dlg.isModal()
    track = doc.current_track()
    figures = dlg.figures()
    assert figures["raw"] == (6, "0.00", "0.00")
    for m in METHODS:
        d = diff_tracks(track, resample_track(track, 30.0, m))
        assert figures[m] == (d.keys_after, f"{d.max_error:.2f}", f"{d.rms_error:.2f}"), m
        assert dlg.result.methods[m].diff.max_error == pytest.approx(d.max_error, abs=1e-12)
    assert figures["slerp"][0] == 61  # 0..2 s at 30 Hz, both ends
    # At a different rate the figures follow.
    with qtbot.waitSignal(dlg.resultsReady, timeout=10000):
        dlg.rate.setValue(10.0)
    d = diff_tracks(track, resample_track(track, 10.0, "squad"))
    assert dlg.figures()["squad"] == (21, f"{d.max_error:.2f}", f"{d.rms_error:.2f}")


def test_plots_channels(setup):
    _doc, dlg = setup
    n_all = len(dlg.euler_plot.listDataItems())
    assert n_all == 3 * (len(METHODS) + 1)
    dlg.channel.setCurrentIndex(dlg.channel.findData(1))
    assert len(dlg.euler_plot.listDataItems()) == len(METHODS) + 1
    assert len(dlg.error_plot.listDataItems()) == len(METHODS)
    # Unticking a method hides it.
    dlg.table.item(1, 0).setCheckState(Qt.CheckState.Unchecked)
    assert len(dlg.euler_plot.listDataItems()) == len(METHODS)


def test_send_to_recipe_and_apply(setup, qtbot):
    doc, dlg = setup
    panel = RecipePanel(doc)
    qtbot.addWidget(panel)
    dlg.recipe_panel = panel
    dlg.select_method("squad")
    with qtbot.waitSignal(dlg.sendToRecipe) as sig:
        step = dlg.send_selected()
    assert sig.args[0] == step == {"op": "resample", "hz": 30.0, "method": "squad"}
    assert panel.recipe().to_dict()["steps"] == [{**step, "spin_speed": 1800.0, "pose_error": 0.0}]
    panel.discard()
    panel.shutdown()

    original = doc.clip
    dlg.select_method("spline")
    assert dlg.apply_selected()
    new = doc.clip.track("Root/Arm")
    assert new.n_keys == 61
    expected = resample_track(original.track("Root/Arm"), 30.0, "spline")
    np.testing.assert_allclose(new.curve.value, expected.curve.value)
    doc.undo_stack.undo()
    assert doc.clip is original
