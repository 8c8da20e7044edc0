"""The 3D view opens at a usable size with its header, tools and legend whole (1280 x 800,
1600 x 1000, 1920 x 1080), frames the character over the whole clip, and follows the root."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRect, QSettings
from PySide6.QtTest import QTest

from curveeditor.app.view3d.projection import scene_mvp, to_pixels
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine.skeleton import pose_points
from curveeditor.io import read_clip
from tests.conftest import corpus_files

pytestmark = pytest.mark.gui
GANGNAM = corpus_files("bvh", "*Gangnam-Style.bvh")
WALK = corpus_files("bvh", "*Joe_Walk-In-Circle.bvh")
#: (window, the GL view's smallest usable size there)
SIZES = [((1280, 800), (360, 260)), ((1600, 1000), (460, 420)), ((1920, 1080), (560, 500))]


def _window(tmp_path, size):
    screen = QRect(0, 0, *size)
    store = QSettings(str(tmp_path / f"s{size[0]}.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(tmp_path / "autosave"))
    w.available_screen = lambda: screen
    w.setGeometry(0, 0, *size)
    w.show()
    QTest.qWaitForWindowExposed(w)
    QTest.qWait(150)
    return w


@pytest.mark.skipif(not GANGNAM, reason="corpus BVH not present")
@pytest.mark.parametrize(("size", "usable"), SIZES)
def test_the_3d_view_opens_usable_with_header_tools_and_legend_whole(qapp, tmp_path, size, usable):
    w = _window(tmp_path, size)
    try:
        clip = read_clip(GANGNAM[0])
        w.doc.load(clip, None)
        deep = next(t.path for t in clip.tracks if t.path.endswith("LeftHandIndex3"))
        w.doc.select_paths([deep])
        QTest.qWait(100)
        g = w.gizmo
        assert g.view_widget.width() >= usable[0] and g.view_widget.height() >= usable[1], (
            g.view_widget.size(),
            size,
        )
        assert w.graph_share() >= 0.5
        # header: the bone's name whole, kind and gimbal labels at their full size
        assert g._title.shown_text().endswith("mixamorig:LeftHandIndex3")
        for label in (g._kind_label, g._gimbal_label):
            assert label.width() >= label.sizeHint().width() - 1, (label.text(), label.width())
        # tools: every one on the row (none folded into the overflow menu), inside the dock
        bar = g.toolbar
        for a in bar.actions():
            wid = bar.widgetForAction(a)
            assert wid is not None and wid.isVisible(), a.text()
            assert wid.geometry().right() <= bar.width(), (a.text(), wid.geometry(), bar.width())
        # legend: every entry shown, every line inside the label, the label off the GL window
        leg = g._legend
        assert leg.hidden == 0 and "Character: 67 joints" in leg.shown_text(), leg.shown_text()
        fm = leg.fontMetrics()
        m = leg.contentsMargins()
        for line in leg.shown_text().splitlines():
            assert fm.horizontalAdvance(line) <= leg.width() - m.left() - m.right() + 8, line
        top_left = leg.mapTo(w, leg.rect().topLeft())
        view = QRect(g.view_widget.mapTo(w, g.view_widget.rect().topLeft()), g.view_widget.size())
        assert not QRect(top_left, leg.size()).intersects(view)
    finally:
        w.doc.undo_stack.setClean()
        w.close()


def _pixels(w, points):
    g = w.gizmo
    v = g.view
    return to_pixels(scene_mvp(v, g._scene), points, v.width(), v.height())


@pytest.mark.skipif(not WALK, reason="corpus BVH not present")
def test_the_character_is_framed_over_the_whole_clip_and_follow_root_keeps_it_centred(qapp, tmp_path):
    w = _window(tmp_path, (1600, 1000))
    try:
        clip = read_clip(WALK[0])
        w.doc.load(clip, None)
        QTest.qWait(100)
        layer, v = w.tools.skeleton, w.gizmo.view
        times = np.linspace(clip.start, clip.end, 25)
        pts = layer._to_scene(pose_points(layer.skeleton, clip, times)).reshape(-1, 3)
        px = _pixels(w, pts)
        assert px[:, 0].min() >= 0 and px[:, 0].max() <= v.width(), "the whole walk is in the view"
        assert px[:, 1].min() >= 0 and px[:, 1].max() <= v.height()
        # ... and its box over the clip fills it (the tight fit from the camera's angle)
        lo, hi = (layer._to_box(b) for b in layer._clip_box)
        corners = np.array(
            [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
        )
        cpx = _pixels(w, corners)
        ndc = np.abs(np.c_[2 * cpx[:, 0] / v.width() - 1, 2 * cpx[:, 1] / v.height() - 1])
        assert 0.85 < ndc.max() <= 1.0, ndc.max()  # the outermost corner reaches the view's edge
        # following the root: the root stays at one place on screen while the character walks
        w.tools.act_follow.setChecked(True)
        QTest.qWait(30)
        roots, heights = [], []
        for t in times[::4]:
            w.doc.set_time(float(t))
            QTest.qWait(5)
            p = _pixels(w, layer.joint_scene_positions())
            roots.append(p[0])
            heights.append(np.ptp(p[:, 1]))
        roots = np.array(roots)
        assert np.abs(roots - roots[0]).max() < 1.0
        assert np.median(heights) > 0.3 * v.height()  # the character itself fills the view
        # the ground scrolls under it: the grid moves with the root's offset
        w.doc.set_time(float(times[3]))
        g1 = np.array(w.gizmo._grid.transform().data()).reshape(4, 4).T[:3, 3]
        w.doc.set_time(float(times[4]))
        g2 = np.array(w.gizmo._grid.transform().data()).reshape(4, 4).T[:3, 3]
        assert np.abs(g1 - g2).max() > 1e-6
        w.tools.act_follow.setChecked(False)
    finally:
        w.doc.undo_stack.setClean()
        w.close()
