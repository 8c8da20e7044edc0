"""Layout on production rigs (issue 9): long paths elide (middle) with the full text as tooltip,
the graphs keep at least half the window, saved layouts are versioned and dropped when they do not
fit, View > Reset layout, Ctrl+Space maximises the graphs, the window fits the screen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtTest import QTest

from curveeditor.app.window.main_window import LAYOUT_VERSION, MainWindow
from curveeditor.app.window.settings import Settings
from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip

pytestmark = pytest.mark.gui

# pytest-xvfb's screen is 800 x 600; the case is a 1000 px high screen (1600 x 1000).
SCREEN = QRect(0, 0, 1600, 1000)


@pytest.fixture(scope="module", autouse=True)
def thousand_px_screen():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MainWindow, "available_screen", lambda self: SCREEN)
        yield


def make_window(folder, name="settings.ini", show=True):
    store = QSettings(str(folder / name), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))
    if show:
        w.show()
        QTest.qWaitForWindowExposed(w)
    return w


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    w = make_window(tmp_path_factory.mktemp("layout"))
    w.doc.load(biped_clip(60), None)
    w.doc.select_paths([DEEP_BIPED_BONE])
    QTest.qWait(50)
    yield w
    w.doc.undo_stack.setClean()
    w.close()


def _fits(label) -> bool:
    return label.fontMetrics().horizontalAdvance(label.shown_text().splitlines()[0]) <= label.width()


def test_long_path_labels_elide_with_the_full_text_in_the_tooltip(win, qtbot):
    title = win.gizmo._title
    assert DEEP_BIPED_BONE in title.toolTip()
    assert title.is_elided() and _fits(title)
    # the start of the path and the bone's own name stay readable
    assert title.shown_text().endswith("/Bip001 L Finger12")
    assert "euler" in win.gizmo._kind_label.text()
    legend = win.gizmo._legend
    assert "Unity axes" in legend.shown_text() and legend.hidden == 0  # every entry shown, none clipped
    assert all(
        legend.fontMetrics().horizontalAdvance(line) <= legend.width()
        for line in legend.shown_text().splitlines()
    )
    readout = win.timeline.readout
    assert readout.shown_text().rstrip().endswith("°/s")  # the speed keeps its unit
    assert "Finger12" in readout.toolTip() and _fits(readout)
    status = win.status_label
    assert DEEP_BIPED_BONE in status.toolTip() and _fits(status)
    assert status.width() <= win.width() // 2 + 1  # leaves the left half to status messages


def test_recipe_parameter_text_and_diff_message_stay_inside(win, qtbot):
    win.recipe.add_step("smooth", {"method": "gaussian", "sigma": 0.05})
    qtbot.wait(20)
    try:
        doc_label = win.recipe.op_doc
        from curveeditor.engine.recipe import OPS

        assert doc_label.toolTip() == OPS["smooth"].doc
        assert _fits(doc_label)
    finally:
        win.recipe.discard()
    win.docks["Diff"].show()
    win.docks["Diff"].raise_()
    qtbot.wait(50)
    vb = win.diff.plot.getPlotItem().getViewBox()
    text = win.diff.empty_text
    if text.isVisible():
        r = text.mapRectToItem(vb, text.boundingRect())
        assert vb.boundingRect().contains(r), (r, vb.boundingRect())


def test_no_dock_pushes_the_graphs_under_half_the_window(win, qtbot):
    assert win.graph_share() >= 0.5
    win.resizeDocks([win.docks["3D view"]], [win.width()], Qt.Orientation.Horizontal)
    win.resizeDocks([win.docks["Tracks"]], [win.width()], Qt.Orientation.Horizontal)
    qtbot.wait(20)
    assert win.graph_share() >= 0.49
    win.reset_layout()
    qtbot.wait(20)
    assert win.graph_share() >= 0.5


def test_reset_layout_and_maximize_graphs(win, qtbot):
    win.docks["Tracks"].hide()
    win.docks["3D view"].hide()
    win.act_reset_layout.trigger()
    qtbot.wait(20)
    assert all(d.isVisible() for d in win.docks.values())
    win.act_maximize.trigger()
    qtbot.wait(20)
    assert not any(d.isVisible() for d in win.docks.values())
    assert win.graph_share() > 0.95
    win.act_maximize.trigger()
    qtbot.wait(20)
    assert all(d.isVisible() for d in win.docks.values())


def test_main_window_fits_the_available_screen(qapp, tmp_path):
    w = make_window(tmp_path)
    try:
        w.doc.load(biped_clip(30), None)
        w.doc.select_paths([DEEP_BIPED_BONE])  # long labels everywhere must not grow the window
        QTest.qWait(50)
        assert w.width() <= SCREEN.width() and w.height() <= SCREEN.height()
        assert w.minimumSizeHint().width() <= SCREEN.width() // 2
        # ... and on a 1366 x 768 laptop (a taskbar takes ~40 px): the Recipe and Diff forms and a
        # 200 px 3D view made the window at least 957 px high.
        assert w.minimumSizeHint().height() <= 768 - 40 - 60, w.minimumSizeHint()
        assert w.graph_share() >= 0.5
    finally:
        w.close()


def _window_rect(w, widget) -> QRect:
    return QRect(widget.mapTo(w, widget.rect().topLeft()), widget.size())


def test_short_3d_dock_keeps_the_legend_and_note_off_the_gl_window(win, qtbot):
    """The GL view is a native window, drawn over any sibling it overlaps: in a short 3D dock it hid
    the legend's second line. Whatever the dock's height, legend and note lie outside it, whole."""
    win.reset_layout()
    g = win.gizmo
    for height in (40, 300):  # squeezed to its minimum, and roomy
        win.resizeDocks([win.docks["3D view"]], [height], Qt.Orientation.Vertical)
        qtbot.wait(30)
        view = _window_rect(win, g.view_widget)
        two_lines = 2 * g._legend.fontMetrics().lineSpacing()
        for label in (g._legend,):  # the character's note is the legend's first entry
            r = _window_rect(win, label)
            assert not r.intersects(view), (height, label.full_text(), r, view)
            assert r.height() >= two_lines and label.isVisible()
        assert _window_rect(win, g).contains(_window_rect(win, g._legend))
    win.reset_layout()
    qtbot.wait(20)


def test_track_tree_problems_title_is_whole_at_the_default_width(win, qtbot):
    win.reset_layout()
    qtbot.wait(20)
    hh = win.tracks.view.header()
    title = win.tracks.model.headerData(2, Qt.Orientation.Horizontal)
    assert title == "Problems"
    # 44 px showed "Problen": the section holds the title plus the style's margins
    assert hh.sectionSize(2) >= hh.fontMetrics().horizontalAdvance(title) + 8, hh.sectionSize(2)
    assert hh.sectionViewportPosition(2) + hh.sectionSize(2) <= win.tracks.view.viewport().width()


def test_saved_layouts_are_versioned_and_dropped_when_they_do_not_fit(qapp, tmp_path):
    # a squeezed layout saved by the old editor (no version): dropped, defaults used
    w = make_window(tmp_path, "old.ini")
    w.resizeDocks([w.docks["3D view"]], [900], Qt.Orientation.Horizontal)
    state = w.saveState()
    w.close()
    store = QSettings(str(tmp_path / "old.ini"), QSettings.Format.IniFormat)
    store.clear()
    store.setValue("window/state", state)
    store.sync()
    w = make_window(tmp_path, "old.ini")
    try:
        assert w.settings.store.value("window/state") is None
        assert w.graph_share() >= 0.5
    finally:
        w.close()
    # a versioned layout whose window is larger than the screen: dropped, window fitted
    w = make_window(tmp_path, "big.ini", show=False)
    avail = w.available_screen()
    w.setGeometry(0, 0, avail.width() + 600, avail.height() + 400)
    geo = w.saveGeometry()
    w.close()
    store = QSettings(str(tmp_path / "big.ini"), QSettings.Format.IniFormat)
    store.setValue("window/layout_version", LAYOUT_VERSION)
    store.setValue("window/geometry", geo)
    store.sync()
    w = make_window(tmp_path, "big.ini", show=False)
    try:
        assert w.fits_screen()
    finally:
        w.close()
    # a layout saved by this version round-trips
    w = make_window(tmp_path, "ok.ini")
    w.docks["History"].hide()
    w.close()
    w = make_window(tmp_path, "ok.ini")
    try:
        assert not w.docks["History"].isVisible() and w.docks["Tracks"].isVisible()
    finally:
        w.close()


def test_default_right_column_shows_the_whole_recipe_and_a_usable_3d_view(win, qtbot):
    """The Recipe dock scrolls only when squeezed: at the default layout Apply / Discard are in sight
    (no scroll bar), a selected step's parameters get their rows, and the 3D view keeps a usable
    height (it got ~120 px when the steps list asked for Qt's default 192 px)."""
    win.reset_layout()
    qtbot.wait(50)
    area = win.docks["Recipe"].widget()
    assert not area.verticalScrollBar().isVisible()
    apply = win.recipe.apply_button
    top_left = apply.mapTo(area.viewport(), apply.rect().topLeft())
    assert area.viewport().rect().contains(QRect(top_left, apply.size()))
    assert win.gizmo.view_widget.height() >= 160, win.gizmo.view_widget.height()
    # a typical step's form (reduce: 4 rows) is whole without scrolling
    win.recipe.add_step("reduce")
    try:
        # Settled layout, not a fixed wait: under load the relayout after the form is built can take
        # longer than 30 ms (the CI flake); a real overflow keeps the scroll bar up past the timeout.
        def whole():
            assert not win.recipe.params_scroll.verticalScrollBar().isVisible()
            assert not area.verticalScrollBar().isVisible()

        qtbot.waitUntil(whole, timeout=2000)
    finally:
        win.recipe.remove_current()
        win.recipe.discard()


def test_maximize_twice_gives_back_the_same_dock_sizes(win, qtbot):
    win.reset_layout()
    qtbot.wait(50)
    sizes = {k: d.size() for k, d in win.docks.items() if d.isVisible()}
    win.act_maximize.trigger()
    qtbot.wait(20)
    win.act_maximize.trigger()
    qtbot.wait(50)
    # shown again without the saved state, the Recipe dock came back ~80 px short, behind a scroll bar
    assert {k: d.size() for k, d in win.docks.items() if d.isVisible()} == sizes
    assert not win.docks["Recipe"].widget().verticalScrollBar().isVisible()
