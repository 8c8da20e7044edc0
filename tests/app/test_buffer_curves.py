"""Buffer curves: snapshot, faint drawing, swap with one key as one undo step (undo/redo swap back)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from curveeditor.engine import edit as ed
from tests.app.test_key_manipulators import _clip, win  # noqa: F401 - the shared window fixture

pytestmark = pytest.mark.gui


def test_snapshot_edit_swap_undo(win, qtbot):  # noqa: F811
    doc = win.doc
    doc.undo_stack.setClean()
    doc.load(_clip(), None)
    doc.select_paths(["Root"])
    qtbot.wait(20)
    win.graphs.glw.setFocus()
    QTest.keyClick(win, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    original = doc.clip.track("Root")
    assert win.tools.buffer.snapshot == {"Root": original}
    edited = ed.move_keys(original, [2], 0.0, 0, 30.0)
    doc.apply_clip(doc.clip.with_track(edited), "Edit")
    qtbot.wait(20)
    layer = win.tools.buffer_layer
    qtbot.waitUntil(lambda: bool(layer.items), timeout=2000)
    # The faint curve is the snapshot as Unity plays it (X channel plot).
    x_items = [it for p, it in layer.items if p is win.graphs.euler_plots[0]]
    from curveeditor.engine.curves import evaluate

    np.testing.assert_allclose(x_items[0].yData, evaluate(original.curve, x_items[0].xData)[:, 0], atol=1e-9)
    count = doc.undo_stack.count()
    QTest.keyClick(win, Qt.Key.Key_B)
    assert doc.clip.track("Root") is original and doc.undo_stack.count() == count + 1
    assert win.tools.buffer.snapshot["Root"] is edited
    QTest.keyClick(win, Qt.Key.Key_B)  # swap back
    assert doc.clip.track("Root") is edited and win.tools.buffer.snapshot["Root"] is original
    doc.undo_stack.undo()  # undo the second swap
    assert doc.clip.track("Root") is original and win.tools.buffer.snapshot["Root"] is edited
    doc.undo_stack.undo()  # undo the first swap
    assert doc.clip.track("Root") is edited and win.tools.buffer.snapshot["Root"] is original
    doc.undo_stack.redo()
    assert doc.clip.track("Root") is original and win.tools.buffer.snapshot["Root"] is edited
