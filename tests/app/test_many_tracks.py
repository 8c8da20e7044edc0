"""Many tracks at once (issue 9): 60 selected tracks all drawn (batched), the cap stated on the plot,
one hue family per track with a legend, hovering names track/channel/value, the Normalize view.

Generated 60-track and Biped-like clips; speed is measured in ``benchmarks/gui.py``, not here.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent
from PySide6.QtWidgets import QApplication

from curveeditor.app.graphs import panel as graphs_mod
from tests.app.rig_clips import biped_clip, many_tracks_clip
from tests.app.windows import shown_window

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("many"))


@pytest.fixture
def sixty(win, qtbot):
    clip = many_tracks_clip(60, 240, 60.0)
    win.doc.load(clip, None)
    win.graphs.set_layout(overlay=False, normalize=False)
    win.doc.select_paths([t.path for t in clip.tracks])
    qtbot.wait(20)
    return clip


def _mouse(widget, etype, pos: QPoint, button, buttons):
    ev = QMouseEvent(
        etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, ev)


def test_sixty_selected_tracks_are_all_drawn_with_a_legend(win, sixty):
    g = win.graphs
    assert g.drawn_paths() == [t.path for t in sixty.tracks]
    for plot_strip in (s for s in g.strips if s.is_euler):
        # the primary has its own items, the 59 others are batched: one curve per track and channel
        curves = plot_strip.multi.curves()
        assert len(curves) == 59
        x, y = curves[10][0], curves[10][1]
        tr = sixty.tracks[11]
        ch = plot_strip.role[1]
        # the batched curve is what Unity plays: it passes through the key values
        np.testing.assert_allclose(np.interp(tr.times, x, y), tr.curve.value[:, ch], atol=1e-6)
    lines = g.legend_lines()
    # every track is listed (the side legend scrolls), none hidden behind "+N more"
    assert [ln.rsplit(" ", 1)[-1] for ln in lines] == [f"Bone{i:02d}" for i in range(60)]
    _legend_fits(g)
    assert g.note_text() == ""  # nothing capped


def _legend_fits(g):
    """Issue 22: the legend sits beside the plots, never over them (31 tracks hid a quarter of the
    X graph), and folds away to its button."""
    legend = g.side_legend
    assert legend.isVisible()
    lr = legend.geometry()
    gr = g.glw.geometry()
    assert not lr.intersects(gr) and lr.left() >= gr.right(), (lr, gr)
    assert not g.strips[0].legend.isVisible()  # the in-plot overlay is gone
    width = gr.width()
    legend.set_folded(True)
    QApplication.processEvents()
    assert g.legend_lines() == [] and legend.width() < 40
    assert g.glw.width() > width + 100  # the plots take the room back
    legend.set_folded(False)
    QApplication.processEvents()


def test_fifteen_tracks_are_all_named_in_a_short_strip(win, sixty, qtbot):
    """Three channel strips leave the first one ~150 px: 12 of 15 legend lines showed, the rest were
    clipped by the plot. The legend takes a second column instead."""
    g = win.graphs
    win.doc.select_paths([t.path for t in sixty.tracks[:15]])
    qtbot.wait(10)
    assert g.strips[0].vb.boundingRect().height() < 15 * 14  # too short for 15 lines in one column
    lines = g.legend_lines()
    assert [ln.rsplit(" ", 1)[-1] for ln in lines] == [f"Bone{i:02d}" for i in range(15)]
    _legend_fits(g)
    win.doc.select_paths([t.path for t in sixty.tracks])
    qtbot.wait(10)


def test_each_track_has_its_own_hue_and_overlay_uses_shades(win, sixty, qtbot):
    g = win.graphs
    paths = g.drawn_paths()[:15]
    main = [QColor(g.colours(p)[1]).hue() for p in paths]
    # golden-ratio hues: 15 tracks, every pair at least ~9 degrees of hue apart
    d = np.abs(np.subtract.outer(main, main))
    d = np.minimum(d, 360 - d)
    assert d[~np.eye(len(main), dtype=bool)].min() >= 9
    strip = g.strips[0]
    cols = {c.name() for _x, _y, c in strip.multi.curves()}
    assert len(cols) == 59  # stacked: a track's curves take its main colour in every channel plot
    g.set_layout(overlay=True)
    qtbot.wait(10)
    curves = g.strips[0].multi.curves()
    assert len(curves) == 59 * 3
    x_, y_, z_ = (c.name() for _x, _y, c in curves[:3])
    assert len({x_, y_, z_}) == 3 and QColor(x_).hue() == QColor(z_).hue()  # one hue family, 3 shades
    assert "■■■" in g.legend_lines()[0]  # overlay legend: three swatches per track
    g.set_layout(overlay=False)


def test_cap_is_stated_on_the_plot(win, qtbot):
    n = graphs_mod.MAX_DRAWN_TRACKS + 5
    clip = many_tracks_clip(n, 20, 30.0)
    win.doc.load(clip, None)
    win.doc.select_paths([t.path for t in clip.tracks])
    qtbot.wait(10)
    assert len(win.graphs.drawn_paths()) == graphs_mod.MAX_DRAWN_TRACKS
    assert f"{graphs_mod.MAX_DRAWN_TRACKS} of {n} selected tracks drawn" in win.graphs.note_text()


def test_hovering_a_curve_names_its_track_channel_and_value(win, sixty, qtbot):
    g = win.graphs
    tr = sixty.tracks[37]
    strip = g.strips[1]  # Y
    # a key where every other track's Y is at least 2 degrees away
    ys = np.stack([t_.curve.value[:, 1] for t_ in sixty.tracks])
    gap = np.min(np.abs(np.delete(ys, 37, 0) - ys[37]), axis=0)
    k = int(np.argmax(gap))
    assert gap[k] > 2.0
    t = float(tr.times[k])
    v = float(tr.curve.value[k, 1])
    g.strips[0].plot.setXRange(t - 0.5, t + 0.5, padding=0)
    strip.plot.setYRange(v - 8, v + 8, padding=0)  # neighbours > 20 px away
    qtbot.wait(10)
    scene = strip.vb.mapViewToScene(QPointF(t, v))
    pos = g.glw.mapFromScene(scene)
    _mouse(g.glw.viewport(), QEvent.Type.MouseMove, pos, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton)
    qtbot.wait(10)
    assert g.input.hover_text.startswith(f"{tr.path} · Y · {v:.2f}°")
    assert strip.hover_label.isVisible()


def test_normalize_view_scales_each_curve_to_unit_range_and_edits_in_degrees(win, qtbot):
    clip = biped_clip(60)
    win.doc.load(clip, None)
    g = win.graphs
    paths = [clip.tracks[3].path, clip.tracks[20].path]
    win.doc.select_paths(paths)
    g.set_layout(normalize=True, overlay=False)
    qtbot.wait(10)
    try:
        x, y = g.items[paths[0]].curves[0][0].getData()
        assert y.min() == pytest.approx(-1.0, abs=1e-3) and y.max() == pytest.approx(1.0, abs=1e-3)
        bx, by, _c = g.strips[2].multi.curves()[0]
        assert by.min() == pytest.approx(-1.0, abs=1e-3) and by.max() == pytest.approx(1.0, abs=1e-3)
        # a drag in normalized units moves the key in degrees by dv / factor
        tr = win.doc.clip.track(paths[0])
        f = g.value_factor(paths[0], 0)
        assert f == pytest.approx(2.0 / np.ptp(g.cache.get(tr).samples.euler[:, 0]), rel=1e-2)
        win.doc.select_keys({paths[0]: {10}})
        from curveeditor.app.graphs.input import Drag

        d = Drag("keys", g.strips[0].vb, win.doc.clip, {paths[0]: {10}}, channel=0, path=paths[0], index=10)
        win.doc.begin_live_edit()
        g.input.drag_to(g.strips[0].vb, QPointF(0, 0), QPointF(0, 0.1), Qt.KeyboardModifier.NoModifier, False)
        g.input.drag = d
        g.input.drag_to(g.strips[0].vb, QPointF(0, 0), QPointF(0, 0.1), Qt.KeyboardModifier.NoModifier, True)
        moved = win.doc.clip.track(paths[0]).curve.value[10, 0] - tr.curve.value[10, 0]
        assert moved == pytest.approx(0.1 / f, rel=1e-6)
        win.doc.undo_stack.undo()
    finally:
        g.set_layout(normalize=False)


def test_read_only_curves_can_be_shown_as_graphs_view_only(win, qtbot):
    from curveeditor.app.tracks.tree import OTHER_ROLE
    from curveeditor.engine.clip import Clip, OtherTrack
    from curveeditor.engine.curves import Curve, evaluate

    base = many_tracks_clip(3, 60, 30.0)
    t = np.linspace(0, 2, 7)
    pos = Curve.make(t, np.stack([t, 2 * t, np.sin(t)], axis=1))
    muscle = Curve.make(t, np.cos(t)[:, None])
    others = (
        OtherTrack("Root", "m_LocalPosition", "position", pos, t),
        OtherTrack("", "LeftHand.Thumb.1 Stretched", "float", muscle, t),
    )
    clip = Clip("ro", 30.0, base.tracks, other_tracks=others)
    win.doc.load(clip, None)
    qtbot.wait(10)
    tree = win.tracks
    # find the muscle curve's row in the (expanded on demand) read-only group
    found = []

    def walk(parent):
        for r in range(tree.proxy.rowCount(parent)):
            idx = tree.proxy.index(r, 0, parent)
            if idx.data(OTHER_ROLE) == others[1].name:
                found.append(idx)
            walk(idx)

    from PySide6.QtCore import QItemSelectionModel, QModelIndex

    walk(QModelIndex())
    assert found, "the muscle curve is selectable in the tree"
    primary = list(win.doc.selected_paths)
    tree.view.selectionModel().select(
        found[0], QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    )
    qtbot.wait(10)
    assert win.doc.selected_other == [others[1].name]
    assert win.doc.selected_paths == primary  # rotation selection unchanged
    strip = win.graphs._strip("other")
    # a one-channel float curve is editable (issue 22: tests/app/test_float_curves.py): named, keys drawn
    assert strip is not None and "LeftHand.Thumb.1 Stretched" in strip.note.textItem.toPlainText()
    ((x, y, _c),) = strip.multi.curves()
    np.testing.assert_allclose(np.interp(t, x, y), np.cos(t), atol=1e-9)
    np.testing.assert_allclose(y, evaluate(muscle, x)[:, 0])
    assert len(strip.multi_keys.getData()[0]) == len(t)
    # a position curve stays view only: a left drag there scrubs time, it never edits
    win.doc.select_other([others[0].name])
    qtbot.wait(10)
    strip = win.graphs._strip("other")
    assert "view only" in strip.note.textItem.toPlainText()
    assert (
        win.graphs.input.begin_drag(
            strip.vb, strip.vb.sceneBoundingRect().center(), Qt.KeyboardModifier.NoModifier
        )
        == "scrub"
    )
    assert win.doc.undo_stack.count() == 0
    win.doc.select_other([])
    qtbot.wait(10)
    assert win.graphs._strip("other") is None
