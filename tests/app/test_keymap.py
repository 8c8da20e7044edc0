"""Customisable shortcuts (issue 22): the keymap table, its editor (Help > Keyboard shortcuts), the
settings it saves, conflicts refused or taken over explicitly, changes live, on a real corpus rig."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest

from curveeditor.app.window.shortcuts import ShortcutsDialog, shortcut_rows
from tests.app.windows import shown_window

CMU = "bvh/FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh"


@pytest.fixture
def win(tmp_path, qtbot, corpus_dir):
    from curveeditor.io import read_clip

    gen = shown_window(tmp_path, active=True)
    w = next(gen)
    w.doc.load(read_clip(corpus_dir / CMU), str(corpus_dir / CMU))
    qtbot.wait(50)
    yield w
    d = getattr(w, "shortcuts_dialog", None)
    if d is not None:
        d.close()
    next(gen, None)


def _ini(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def _open_editor(win, qtbot) -> ShortcutsDialog:
    win.act_shortcuts.trigger()
    dlg = win.shortcuts_dialog
    qtbot.waitExposed(dlg)
    return dlg


def _record(dlg: ShortcutsDialog, qtbot, entry_id: str, key, mods=Qt.KeyboardModifier.NoModifier):
    """Select ``entry_id``'s row and press ``key`` in the recorder, as a user does."""
    dlg.select(entry_id)
    dlg.recorder.setFocus()
    QTest.keyClick(dlg.recorder, key, mods)
    qtbot.wait(20)


def test_the_table_is_every_menu_action_and_the_list_page_reads_it(win, qtbot):
    km = win.keymap
    ids = [e.id for e in km.entries]
    assert len(ids) == len(set(ids))  # stable, unique ids (they are the settings keys)
    # every action of every menu, with or without a shortcut (so any can be given one)
    menu_actions = []

    def walk(menu):
        for a in menu.actions():
            if a.menu() is not None:
                if a.menu() is not win.recent_menu:
                    walk(a.menu())
            elif not a.isSeparator():
                menu_actions.append(a)

    for top in win.menuBar().actions():
        walk(top.menu())
    assert {id(km.entry(a).action) for a in menu_actions} == {id(a) for a in menu_actions}
    assert km.entry("edit.undo").shortcuts == (QKeySequence("Ctrl+Z"),)
    assert km.entry("graphs.cancel_drag").scope == (win.graphs,)
    assert km.all_conflicts() == {}  # the defaults never clash
    # the list page is the same table
    assert shortcut_rows(win) == km.rows()
    dlg = _open_editor(win, qtbot)
    assert dlg.table.rowCount() == len(km.entries)
    shown = {(dlg.table.item(i, 1).text(), dlg.table.item(i, 0).text()) for i in range(dlg.table.rowCount())}
    assert {(k, a) for k, a, _w in km.rows()} <= shown


def test_record_a_new_shortcut_applies_live_and_is_saved(win, qtbot, tmp_path):
    dlg = _open_editor(win, qtbot)
    frame_all = win.keymap.entry("view.frame_all")
    _record(dlg, qtbot, "view.frame_all", Qt.Key.Key_J, Qt.KeyboardModifier.AltModifier)
    assert frame_all.action.shortcuts() == [QKeySequence("Alt+J")]
    assert "Alt+J" in frame_all.action.toolTip()
    row = dlg.row_of("view.frame_all")
    assert dlg.table.item(row, 1).text() == "Alt+J" and dlg.table.item(row, 2).text() == "A"
    win.settings.store.sync()
    assert _ini(tmp_path).value("shortcuts/view.frame_all") == "Alt+J"
    # live: the new key frames the whole clip in the graphs, the old one no longer does
    dlg.close()
    win.activateWindow()
    QTest.qWaitForWindowActive(win)
    vb = win.graphs.euler_plots[0].getViewBox()
    clip = win.doc.clip
    vb.setXRange(clip.start + 1.0, clip.start + 2.0, padding=0)
    win.graphs.setFocus()
    QTest.keyClick(win.graphs, Qt.Key.Key_A)
    qtbot.wait(20)
    assert vb.viewRange()[0][1] < clip.start + 2.5  # A is free now: nothing happened
    QTest.keyClick(win.graphs, Qt.Key.Key_J, Qt.KeyboardModifier.AltModifier)
    qtbot.wait(20)
    lo, hi = vb.viewRange()[0]
    assert lo <= clip.start + 0.5 and hi >= clip.end - 0.5


def test_saved_shortcuts_are_applied_to_a_new_window(tmp_path, qtbot):
    s = _ini(tmp_path)
    s.setValue("shortcuts/view.frame_all", "Ctrl+Alt+F")
    s.setValue("shortcuts/edit.redo", "")  # explicitly none
    s.setValue("shortcuts/no.such.action", "F9")  # an old id: ignored, kept
    s.sync()
    gen = shown_window(tmp_path)
    w = next(gen)
    try:
        assert w.keymap.entry("view.frame_all").action.shortcuts() == [QKeySequence("Ctrl+Alt+F")]
        assert w.act_redo.shortcuts() == []
        assert ("Ctrl+Alt+F", "Frame all", "View") in shortcut_rows(w)
        assert w.keymap.entry("edit.undo").action.shortcuts() == [QKeySequence("Ctrl+Z")]
    finally:
        next(gen, None)
    assert _ini(tmp_path).value("shortcuts/no.such.action") == "F9"


def test_a_conflict_is_refused_until_taken_over(win, qtbot, tmp_path):
    dlg = _open_editor(win, qtbot)
    km = win.keymap
    frame_all, frame_sel = km.entry("view.frame_all"), km.entry("view.frame_selection")
    _record(dlg, qtbot, "view.frame_all", Qt.Key.Key_F)  # F is Frame selection's
    assert frame_all.action.shortcuts() == [QKeySequence("A")]  # refused
    assert frame_sel.action.shortcuts() == [QKeySequence("F")]
    assert "Conflict" in dlg.conflict_label.text() and "Frame selection" in dlg.conflict_label.text()
    assert dlg.take_over_button.isEnabled()
    qtbot.mouseClick(dlg.take_over_button, Qt.MouseButton.LeftButton)
    assert frame_all.action.shortcuts() == [QKeySequence("F")]
    assert frame_sel.action.shortcuts() == []
    assert km.all_conflicts() == {}
    win.settings.store.sync()
    ini = _ini(tmp_path)
    assert ini.value("shortcuts/view.frame_all") == "F" and ini.value("shortcuts/view.frame_selection") == ""
    # a window-wide key against a key the focused graphs own: both would fire, so it is a conflict
    _record(dlg, qtbot, "view.overlay_channels", Qt.Key.Key_S)
    assert km.entry("view.overlay_channels").action.shortcuts() == [QKeySequence("O")]
    assert "Scale keys" in dlg.conflict_label.text()
    # reset all: every default back, the settings keys removed
    qtbot.mouseClick(dlg.reset_all_button, Qt.MouseButton.LeftButton)
    assert frame_all.action.shortcuts() == [QKeySequence("A")] and frame_sel.action.shortcuts() == [
        QKeySequence("F")
    ]
    win.settings.store.sync()
    assert [k for k in _ini(tmp_path).allKeys() if k.startswith("shortcuts/")] == []


def test_clear_and_reset_one(win, qtbot, tmp_path):
    dlg = _open_editor(win, qtbot)
    e = win.keymap.entry("key.add_key_at_cursor")
    dlg.select(e.id)
    qtbot.mouseClick(dlg.clear_button, Qt.MouseButton.LeftButton)
    assert e.action.shortcuts() == [] and dlg.table.item(dlg.row_of(e.id), 1).text() == ""
    win.settings.store.sync()
    assert _ini(tmp_path).value(f"shortcuts/{e.id}") == ""
    qtbot.mouseClick(dlg.reset_button, Qt.MouseButton.LeftButton)
    assert e.action.shortcuts() == [QKeySequence("K")]
    win.settings.store.sync()
    assert _ini(tmp_path).value(f"shortcuts/{e.id}") is None
    # an action with no default shortcut can get one
    dlg.filter.setText("reset layout")
    visible = [i for i in range(dlg.table.rowCount()) if not dlg.table.isRowHidden(i)]
    assert [dlg.keymap.entries[i].id for i in visible] == ["view.reset_layout"]
    _record(dlg, qtbot, "view.reset_layout", Qt.Key.Key_F8)
    assert win.act_reset_layout.shortcuts() == [QKeySequence("F8")]


def test_conflicts_in_the_settings_are_shown(tmp_path, qtbot):
    s = _ini(tmp_path)
    s.setValue("shortcuts/view.frame_all", "F")  # hand-edited: Frame selection has F too
    s.sync()
    gen = shown_window(tmp_path)
    w = next(gen)
    try:
        conflicts = w.keymap.all_conflicts()
        assert set(conflicts) == {"view.frame_all", "view.frame_selection"}
        w.act_shortcuts.trigger()
        dlg = w.shortcuts_dialog
        row = dlg.row_of("view.frame_all")
        assert "Frame selection" in dlg.table.item(row, 4).text()
        assert dlg.table.item(row, 0).background().color().isValid()
        dlg.close()
    finally:
        next(gen, None)
