"""Dope sheet: click / Shift / Ctrl / box selection shared with the document, moving and scaling keys
in time with real mouse and key events (one undo step each, tangent modes kept), and the written .anim."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from curveeditor.app.dope_sheet.sheet import INDENT_PX, ROW_H, DopeSheet
from curveeditor.app.model.document import ClipDocument
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import evaluate
from curveeditor.engine.tangents import make_curve, recompute_tangents

RATE = 30.0


def _clip():
    t = np.arange(11) / RATE * 3  # a key every 3 frames, 0 .. 1 s
    rng = np.random.default_rng(2)
    tracks = [
        RotationTrack("Hips", "euler", make_curve(t, rng.normal(0, 20, (11, 3)))),
        RotationTrack("Hips/Spine", "euler", make_curve(t, rng.normal(0, 20, (11, 3)))),
        RotationTrack("Hips/Spine/Head", "euler", make_curve(t, rng.normal(0, 20, (11, 3)))),
    ]
    return Clip("walk", RATE, tracks)


def _shown(qtbot, doc, width=900, height=260) -> DopeSheet:
    """A dope sheet on ``doc``, shown at ``width`` x ``height`` and framed on the clip."""
    w = DopeSheet(doc)
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    w.frame_all()
    return w


@pytest.fixture
def sheet(qtbot):
    doc = ClipDocument()
    doc.load(_clip(), None)
    w = _shown(qtbot, doc)
    return doc, w


def _row(w, kind, path=None):
    return next(
        i for i, r in enumerate(w.canvas.rows) if r.kind == kind and (path is None or r.paths[0] == path)
    )


def _pos(w, row, t):
    c = w.canvas
    return QPoint(int(round(float(c.t_to_x(t)))), int(c.row_y(row) + ROW_H / 2))


def test_rows_summary_then_one_row_per_bone(sheet):
    _doc, w = sheet
    rows = w.canvas.rows
    assert rows[0].kind == "summary" and rows[0].paths == ("Hips", "Hips/Spine", "Hips/Spine/Head")
    assert w.canvas.row_times(rows[0]).size == 11
    # each bone once (no group row repeating a bone's name above its own track row)
    assert [(r.kind, r.label, r.paths) for r in rows[1:]] == [
        ("track", "Hips", ("Hips",)),
        ("track", "Spine", ("Hips/Spine",)),
        ("track", "Head", ("Hips/Spine/Head",)),
    ]
    assert [r.folds for r in rows[1:]] == [True, True, False]
    assert [r.depth for r in rows[1:]] == [0, 1, 2]


def _offset_clip():
    """Hips/Spine keyed every 3 frames, its child Head every 3 frames from frame 1 (times apart)."""
    t = np.arange(11) / RATE * 3
    rng = np.random.default_rng(5)
    tracks = [
        RotationTrack("Hips", "euler", make_curve(t, rng.normal(0, 20, (11, 3)))),
        RotationTrack("Hips/Spine", "euler", make_curve(t, rng.normal(0, 20, (11, 3)))),
        RotationTrack("Hips/Spine/Head", "euler", make_curve(t[:10] + 1 / RATE, rng.normal(0, 20, (10, 3)))),
    ]
    return Clip("walk", RATE, tracks)


def _tick_at(w, row, t) -> bool:
    """A tick is painted in ``row`` at time ``t`` (pixels of the grabbed widget, not the model)."""
    c = w.canvas
    img = c.grab().toImage()
    x = int(round(float(c.t_to_x(t))))
    y = int(c.row_y(row) + ROW_H / 2)
    bg = img.pixelColor(x + 8, y)  # between ticks (3 frames apart)
    return img.pixelColor(x, y) != bg


def test_folded_bone_row_summarises_its_children_and_selects_them(qtbot):
    doc = ClipDocument()
    doc.load(_offset_clip(), None)
    w = _shown(qtbot, doc)
    c = w.canvas
    spine = _row(w, "track", "Hips/Spine")
    # unfolded: the bone's own keys only (Head's frame-1 key is not in Spine's row)
    assert _tick_at(w, spine, 0.0) and not _tick_at(w, spine, 1 / RATE)
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, spine, 1 / RATE))
    assert doc.selected_keys == {}
    # fold Spine with a click on its triangle: Head's row goes, Spine's row summarises both
    y = int(c.row_y(spine) + ROW_H / 2)
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=QPoint(6 + INDENT_PX * c.rows[spine].depth + 4, y))
    assert [r.label for r in c.rows] == ["walk (all tracks)", "Hips", "Spine"]
    assert c.rows[spine].paths == ("Hips/Spine", "Hips/Spine/Head")
    assert _tick_at(w, spine, 0.0) and _tick_at(w, spine, 1 / RATE)
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, spine, 1 / RATE))
    assert doc.selected_keys == {"Hips/Spine/Head": {0}}
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, spine, 0.1))
    assert doc.selected_keys == {"Hips/Spine": {1}}
    # unfold again: one row per bone
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=QPoint(6 + INDENT_PX * c.rows[spine].depth + 4, y))
    assert [r.label for r in c.rows] == ["walk (all tracks)", "Hips", "Spine", "Head"]


def test_click_shift_ctrl_and_box_select_share_the_documents_selection(sheet, qtbot):
    doc, w = sheet
    c = w.canvas
    head = _row(w, "track", "Hips/Spine/Head")
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, head, 0.3))
    assert doc.selected_keys == {"Hips/Spine/Head": {3}} and doc.selected_paths == ["Hips/Spine/Head"]
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=_pos(w, head, 0.5))
    assert doc.selected_keys == {"Hips/Spine/Head": {3, 5}}
    qtbot.mouseClick(
        c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, pos=_pos(w, head, 0.3)
    )
    assert doc.selected_keys == {"Hips/Spine/Head": {5}}
    # A summary tick selects that time in every track (and those tracks become selected).
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, 0, 0.1))
    assert doc.selected_keys == {p: {1} for p in ("Hips", "Hips/Spine", "Hips/Spine/Head")}
    # Box: from empty space left of 0.4 s in the Spine track row to past 0.7 s in the Head row.
    spine = _row(w, "track", "Hips/Spine")
    a = _pos(w, spine, 0.35) - QPoint(0, ROW_H // 2 - 1)
    b = _pos(w, head, 0.65) + QPoint(0, ROW_H // 2 - 1)
    QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    QTest.mouseMove(c, (a + b) / 2)
    QTest.mouseMove(c, b)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)
    assert doc.selected_keys == {"Hips/Spine": {4, 5, 6}, "Hips/Spine/Head": {4, 5, 6}}


def test_drag_moves_selected_keys_in_time_snapped_one_undo_step_modes_kept(sheet, qtbot, tmp_path):
    doc, w = sheet
    c = w.canvas
    before = doc.clip
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, 0, 0.9))  # summary tick: 3 tracks
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=_pos(w, 0, 1.0))
    start = _pos(w, 0, 0.9)
    end = QPoint(int(round(float(c.t_to_x(0.9 + 4.4 / RATE)))), start.y())  # 4.4 frames -> 4
    QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for k in range(1, 6):
        QTest.mouseMove(c, start + (end - start) * (k / 5))
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    assert doc.undo_stack.count() == 1
    for tr0 in before.tracks:
        tr = doc.clip.track(tr0.path)
        np.testing.assert_allclose(tr.times[-2:], tr0.times[-2:] + 4 / RATE)
        # interval 8->9 was stretched by 4 frames: every key stays Clamped Auto (as in Unity), the
        # two keys at its ends take the rule's slopes, every other key keeps its slopes bit for bit
        np.testing.assert_array_equal(tr.curve.tangent_mode, tr0.curve.tangent_mode)
        rule = recompute_tangents(tr.curve)
        np.testing.assert_array_equal(tr.curve.in_slope[8:10], rule.in_slope[8:10])
        for k in [*range(8), 10]:
            assert np.array_equal(tr.curve.in_slope[k], tr0.curve.in_slope[k])
            assert np.array_equal(tr.curve.out_slope[k], tr0.curve.out_slope[k])
        # the untouched intervals play as before
        grid = np.linspace(0, tr0.times[7], 50)
        np.testing.assert_array_equal(evaluate(tr.curve, grid), evaluate(tr0.curve, grid))
    doc.undo_stack.undo()
    assert doc.clip is before
    doc.undo_stack.redo()
    # The written .anim holds the retimed keys (read back).
    from curveeditor.io import read_clip, write_clip

    out = tmp_path / "moved.anim"
    write_clip(doc.clip, out)
    back = read_clip(out).track("Hips/Spine")
    np.testing.assert_allclose(back.times[-1], 1.0 + 4 / RATE, atol=1e-6)


def test_s_scales_in_time_about_the_cursor_and_escape_cancels(sheet, qtbot):
    doc, w = sheet
    c = w.canvas
    head = _row(w, "track", "Hips/Spine/Head")
    QTest.mousePress(
        c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _pos(w, head, 0.0) - QPoint(8, 6)
    )
    QTest.mouseMove(c, _pos(w, head, 1.0) + QPoint(8, 6))
    QTest.mouseRelease(
        c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _pos(w, head, 1.0) + QPoint(8, 6)
    )
    assert doc.selected_keys == {"Hips/Spine/Head": set(range(11))}
    doc.set_time(0.0)  # pivot: the time cursor
    before = doc.clip
    QTest.mouseMove(c, _pos(w, head, 0.5))
    qtbot.keyClick(c, Qt.Key.Key_S)
    QTest.mouseMove(c, _pos(w, head, 0.25))  # half the distance to the pivot: x0.5
    qtbot.keyClick(c, Qt.Key.Key_Escape)
    assert doc.clip is before and doc.undo_stack.count() == 0
    QTest.mouseMove(c, _pos(w, head, 0.5))
    qtbot.wait(30)
    qtbot.keyClick(c, Qt.Key.Key_S)
    QTest.mouseMove(c, _pos(w, head, 0.8))
    QTest.mouseMove(c, _pos(w, head, 1.0))  # twice the distance to the pivot: x2
    QTest.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _pos(w, head, 1.0))
    assert doc.undo_stack.count() == 1
    tr = doc.clip.track("Hips/Spine/Head")
    want = np.round(before.track("Hips/Spine/Head").times * 2 * RATE) / RATE
    np.testing.assert_allclose(tr.times, want)
    assert doc.clip.track("Hips") is before.track("Hips")


def _drag_to(c, start: QPoint, end: QPoint, steps: int = 5) -> None:
    QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(c, start + (end - start) * (k / steps))


def test_drag_previews_the_ticks_and_the_document_follows_when_the_mouse_rests(sheet, qtbot):
    """Mid-drag the ticks move at once but the document (every other view) is not retimed per mouse
    move; it follows when the mouse rests, and the release lands exactly the retime shown."""
    from curveeditor.app.dope_sheet.sheet import LIVE_REST_MS
    from curveeditor.engine.retime import retime_over

    doc, w = sheet
    c = w.canvas
    before = doc.clip
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, 0, 0.6))  # summary tick: 3 tracks
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=_pos(w, 0, 0.7))
    sel = {p: set(s) for p, s in doc.selected_keys.items()}
    start = _pos(w, 0, 0.6)
    _drag_to(c, start, QPoint(int(round(float(c.t_to_x(0.6 + 2 / RATE)))), start.y()))
    assert doc.clip is before and c.live_updates == 0  # no retime of the document per move
    head = _row(w, "track", "Hips/Spine/Head")
    assert _tick_at(w, head, 0.7 + 2 / RATE) and not _tick_at(w, head, 0.6)  # the preview is painted
    assert _tick_at(w, head, 0.5) and _tick_at(w, head, 0.8)
    qtbot.waitUntil(lambda: doc.clip is not before, timeout=20 * LIVE_REST_MS)  # the mouse rests
    want, want_keys = retime_over(before, sel, offset=2 / RATE)
    for tr in want.tracks:
        np.testing.assert_array_equal(doc.clip.track(tr.path).times, tr.times)
    assert doc.selected_keys == want_keys and doc.undo_stack.count() == 0
    # more moves, then the release: one undo step holding the last position shown
    end = QPoint(int(round(float(c.t_to_x(0.6 + 4 / RATE)))), start.y())
    QTest.mouseMove(c, end)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    want, want_keys = retime_over(before, sel, offset=4 / RATE)
    assert doc.undo_stack.count() == 1 and doc.selected_keys == want_keys
    for tr in want.tracks:
        assert doc.clip.track(tr.path).curve.equals(tr.curve)
    assert _tick_at(w, head, 0.7 + 4 / RATE) and not _tick_at(w, head, 0.8)  # overwritten
    doc.undo_stack.undo()
    assert doc.clip is before and doc.selected_keys == sel


def test_escape_after_the_document_followed_a_drag_restores_the_clip(sheet, qtbot):
    from curveeditor.app.dope_sheet.sheet import LIVE_REST_MS

    doc, w = sheet
    c = w.canvas
    before = doc.clip
    head = _row(w, "track", "Hips/Spine/Head")
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, head, 0.6))
    start = _pos(w, head, 0.6)
    _drag_to(c, start, QPoint(int(round(float(c.t_to_x(0.6 + 1 / RATE)))), start.y()), steps=2)
    qtbot.waitUntil(lambda: doc.clip is not before, timeout=20 * LIVE_REST_MS)
    assert doc.clip.track("Hips/Spine/Head").times[6] == pytest.approx(0.6 + 1 / RATE)
    qtbot.keyClick(c, Qt.Key.Key_Escape)
    assert doc.clip is before and doc.undo_stack.count() == 0 and not doc.in_live_edit()
    assert _tick_at(w, head, 0.6) and not _tick_at(w, head, 0.6 + 1 / RATE)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    assert doc.undo_stack.count() == 0


def test_a_drag_back_to_the_start_is_no_edit(sheet, qtbot):
    doc, w = sheet
    c = w.canvas
    before = doc.clip
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, 0, 0.3))
    start = _pos(w, 0, 0.3)
    _drag_to(c, start, QPoint(int(round(float(c.t_to_x(0.3 + 1 / RATE)))), start.y()), steps=2)
    QTest.mouseMove(c, start)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    assert doc.clip is before and doc.undo_stack.count() == 0


def test_long_summary_name_is_elided_with_the_full_text_in_its_tooltip(qtbot):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QFontMetrics, QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    from curveeditor.app.dope_sheet.sheet import LABEL_W

    doc = ClipDocument()
    clip = _clip()
    from dataclasses import replace

    name = "FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01"
    doc.load(replace(clip, name=name), None)
    w = DopeSheet(doc)
    qtbot.addWidget(w)
    w.resize(900, 260)
    w.show()
    qtbot.waitExposed(w)
    c = w.canvas
    full = f"{name} (all tracks)"
    shown = c.label_text(0)
    assert "…" in shown and shown.startswith("FORTH") and shown.endswith("tracks)")
    assert QFontMetrics(c.label_font(c.rows[0])).horizontalAdvance(shown) <= LABEL_W - 10
    assert c.label_text(1).strip() == "▾ Hips"  # short names are whole
    pos = QPoint(40, int(c.row_y(0) + ROW_H / 2))
    QApplication.sendEvent(c, QHelpEvent(QEvent.Type.ToolTip, pos, c.mapToGlobal(pos)))
    qtbot.waitUntil(lambda: QToolTip.text() == full, timeout=2000)
    pos = QPoint(40, int(c.row_y(3) + ROW_H / 2))
    QApplication.sendEvent(c, QHelpEvent(QEvent.Type.ToolTip, pos, c.mapToGlobal(pos)))
    qtbot.waitUntil(lambda: QToolTip.text() == "Hips/Spine/Head", timeout=2000)


@pytest.fixture
def win(qapp, tmp_path):
    from tests.app.windows import shown_window

    yield from shown_window(tmp_path)


def test_drag_in_the_main_window_graphs_and_key_table_show_the_retime_on_release(win, qtbot, tmp_path):
    """The other views do not follow each mouse move; on release the graphs' selected-key markers, the
    key table and the written .anim hold the retimed keys, and undo brings every view back."""
    doc = win.doc
    doc.load(_clip(), None)
    win.docks["Dope sheet"].raise_()
    w = win.tools.dope
    qtbot.waitUntil(lambda: w.canvas.isVisible() and w.canvas.width() > 300)
    w.frame_all()
    c = w.canvas
    before = doc.clip
    head = _row(w, "track", "Hips/Spine/Head")
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, head, 0.3))
    assert doc.selected_paths == ["Hips/Spine/Head"] and doc.selected_keys == {"Hips/Spine/Head": {3}}
    start = _pos(w, head, 0.3)
    end = QPoint(int(round(float(c.t_to_x(0.3 + 2 / RATE)))), start.y())
    _drag_to(c, start, end, steps=4)
    assert doc.clip is before  # mid-drag: only the dope sheet's ticks moved
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    qtbot.wait(50)
    new_t = 0.3 + 2 / RATE
    assert doc.undo_stack.count() == 1
    assert doc.clip.track("Hips/Spine/Head").times[3] == pytest.approx(new_t)
    marks = [s.selected._x for s in win.graphs.strips if s.is_euler]
    assert marks and all(np.allclose(x, new_t) and x.size for x in marks)
    model = win.keys.model
    qtbot.waitUntil(lambda: float(model.index(3, 0).data()) == pytest.approx(new_t, abs=1e-3))
    from curveeditor.io import read_clip, write_clip

    write_clip(doc.clip, tmp_path / "moved.anim")
    back = read_clip(tmp_path / "moved.anim").track("Hips/Spine/Head")
    np.testing.assert_allclose(back.times[3], new_t, atol=1e-6)
    doc.undo_stack.undo()
    assert doc.clip is before
    marks = [s.selected._x for s in win.graphs.strips if s.is_euler]
    assert all(np.allclose(x, 0.3) for x in marks)


def test_b_then_drag_box_selects_over_mocap_keys_on_every_frame(qtbot):
    """Zoomed out on keys at every frame (~2 px apart) every press lands on a tick; B arms a box."""
    t = np.arange(300) / RATE
    rng = np.random.default_rng(1)
    clip = Clip(
        "mocap",
        RATE,
        tuple(
            RotationTrack(p, "euler", make_curve(t, rng.normal(0, 5, (300, 3))))
            for p in ("A", "A/B", "A/B/C")
        ),
    )
    doc = ClipDocument()
    doc.load(clip, None)
    w = _shown(qtbot, doc)
    c = w.canvas
    assert c.tick_half() == 1 and c.hit_px() == 3.0
    a = _pos(w, 2, 99.6 / RATE) - QPoint(0, ROW_H // 2 - 2)
    b = _pos(w, 3, 120.4 / RATE) + QPoint(0, ROW_H // 2 - 2)
    assert c.hit(a.x(), a.y()) is not None  # a plain drag here would move the key under the mouse
    qtbot.keyClick(c, Qt.Key.Key_B)
    QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    QTest.mouseMove(c, (a + b) / 2)
    QTest.mouseMove(c, b)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)
    assert doc.undo_stack.count() == 0 and doc.clip is not None
    assert doc.selected_keys == {"A/B": set(range(100, 121)), "A/B/C": set(range(100, 121))}
    # armed once: the next press on a tick grabs it again
    assert not c.box_armed


def test_no_catch_up_while_the_cursor_moved_on_after_a_stall(sheet, qtbot, monkeypatch):
    """A busy event loop fires the rest timer before the queued moves arrive; the cursor has moved on,
    so the document waits (no 100 ms catch-up in the middle of a moving drag)."""
    import curveeditor.app.dope_sheet.sheet as ds

    cursor = [QPoint(0, 0)]

    class Cursor:
        @staticmethod
        def pos():
            return cursor[0]

    monkeypatch.setattr(ds, "QCursor", Cursor)
    doc, w = sheet
    c = w.canvas
    before = doc.clip
    head = _row(w, "track", "Hips/Spine/Head")
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=_pos(w, head, 0.6))
    start = _pos(w, head, 0.6)
    _drag_to(c, start, QPoint(int(round(float(c.t_to_x(0.6 + 1 / RATE)))), start.y()), steps=2)
    for k in range(6):  # the real cursor keeps moving, its events not delivered yet
        cursor[0] = QPoint(k + 1, 0)
        qtbot.wait(ds.LIVE_REST_MS // 2)
    assert doc.clip is before
    qtbot.waitUntil(lambda: doc.clip is not before, timeout=20 * ds.LIVE_REST_MS)  # now it rests
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)


def test_a_time_step_repaints_only_the_cursor_bands_with_the_same_pixels(sheet, qtbot):
    """A playback tick repaints the strips under the old and new cursor (not every row): painting
    just those regions over the old picture gives the picture of a whole repaint at the new time."""
    from PySide6.QtGui import QImage, QRegion

    doc, w = sheet
    c = w.canvas
    doc.selected_keys = {}
    doc.set_time(0.2)

    def render(img, region=None):
        # a region is drawn with its bounding rect's corner at the target offset
        at = QPoint(0, 0) if region is None else region.boundingRect().topLeft()
        c.render(img, at, QRegion() if region is None else region)

    size = c.size()
    before = QImage(size, QImage.Format.Format_ARGB32)
    render(before)
    at_start = before.copy()
    old_x = c._cursor_x
    asked = []
    c.update = lambda *a: asked.append(a[0] if a else None)  # the regions a time step asks for
    doc.set_time(0.7)
    assert len(asked) == 2 and all(r is not None and r.width() <= 7 for r in asked)
    assert asked[0].contains(int(old_x), 5) and asked[1].contains(int(c.t_to_x(0.7)), 5)
    region = QRegion(asked[0]) | QRegion(asked[1])
    painted = c.paints
    render(before, region)
    assert c.paints == painted + 1
    full = QImage(size, QImage.Format.Format_ARGB32)
    del c.update
    render(full)
    a = np.frombuffer(before.constBits(), np.uint8).reshape(size.height(), -1)
    b = np.frombuffer(full.constBits(), np.uint8).reshape(size.height(), -1)
    assert np.array_equal(a, b)
    s = np.frombuffer(at_start.constBits(), np.uint8).reshape(size.height(), -1)
    assert not np.array_equal(s, b)  # the cursor did move


def test_shown_float_curves_have_rows_selected_and_moved(qtbot):
    """Float curves shown in the graphs (muscles, blend shapes) get a dope-sheet row each, as in
    Unity's Dopesheet: their ticks, click / box selection as the float keys (a plain click on one kind
    of row clears the other's), and a drag moves the selected float keys in time, one undo step."""
    from tests.app.rig_clips import humanoid_muscle_clip

    doc = ClipDocument()
    doc.load(humanoid_muscle_clip(), None)
    names = ["Left Forearm Stretch", "Body:blendShape.Smile"]
    doc.select_other(names)
    w = _shown(qtbot, doc, 1000, 400)
    c = w.canvas
    rows = [i for i, r in enumerate(c.rows) if r.kind == "float"]
    assert [c.rows[i].float_name for i in rows] == names
    assert [c.rows[i].label for i in rows] == ["Left Forearm Stretch", "blendShape.Smile"]
    f0 = doc.other_track(names[0]).curve
    np.testing.assert_array_equal(c.row_times(c.rows[rows[0]]), f0.time)
    if c.row_y(rows[0]) + ROW_H > c.height():  # (the rows after the tracks, scrolled into view)
        c.scroll_rows = rows[0]
    # click a tick: that float key selected
    QTest.mouseClick(
        c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _pos(w, rows[0], f0.time[6])
    )
    assert doc.selected_float_keys == {names[0]: {6}}
    # the selected tick is drawn in the selection colour
    img = c.grab().toImage()
    p = _pos(w, rows[0], f0.time[6])
    assert img.pixelColor(p.x(), p.y()).name() == c.theme.key_selected.lower()
    # drag the last key a frame later (keys do not pass their neighbours): one undo step, that key
    # moved, the other curve untouched
    last = f0.n_keys - 1
    QTest.mouseClick(
        c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _pos(w, rows[0], f0.time[last])
    )
    start, end = _pos(w, rows[0], f0.time[last]), _pos(w, rows[0], f0.time[last] + 1 / doc.frame_rate)
    _drag_to(c, start, end, steps=2)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    f1 = doc.other_track(names[0]).curve
    assert f1.time[last] == pytest.approx(f0.time[last] + 1 / doc.frame_rate)
    np.testing.assert_array_equal(f1.time[:last], f0.time[:last])
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Move 1 float key(s) in time"
    assert np.array_equal(doc.other_track(names[1]).curve.time, f0.time)
    # a box over the blend shape's row selects its keys in the box, and only those
    r1 = rows[1]
    a0 = _pos(w, r1, 0.45) - QPoint(0, ROW_H // 2 - 1)
    a1 = _pos(w, r1, 0.55) + QPoint(0, ROW_H // 2 - 1)
    _drag_to(c, a0, a1, steps=1)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a1)
    assert doc.selected_float_keys == {names[1]: {14, 15, 16}}
    # S scales the selected float keys in time (no rotation key selected): x2 about the selection's
    # start, the last two keys of the first curve
    w.pivot.setCurrentIndex(w.pivot.findData("start"))
    doc.select_float_keys({names[0]: {last - 1, last}})
    f2 = doc.other_track(names[0]).curve
    QTest.mouseMove(c, _pos(w, rows[0], f2.time[last]))
    assert c.begin_scale() and c.gesture.kind == "fscale"
    px = float(c.t_to_x(f2.time[last - 1]))
    c.scale_to(px + 2 * (c.gesture.x0 - px))
    c.finish(True)
    f3 = doc.other_track(names[0]).curve
    assert f3.time[last] == pytest.approx(f2.time[last - 1] + 2 * (f2.time[last] - f2.time[last - 1]))
    assert (
        f3.time[last - 1] == f2.time[last - 1] and doc.undo_stack.undoText() == "Scale 2 float key(s) in time"
    )
    doc.undo_stack.undo()
    # one selection across the rows: a plain selection of rotation keys clears the float keys'
    c.apply_selection({}, "set")
    assert doc.selected_float_keys == {}
    doc.undo_stack.undo()
    assert np.array_equal(doc.other_track(names[0]).curve.time, f0.time)
