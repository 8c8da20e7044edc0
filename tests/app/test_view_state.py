"""View state that must follow the clip shown (issue 20), on real rigs in the real window:

* View > Normalize maps everything drawn of a track through one map that covers its curve and its
  ghost (the track as loaded), and draws its pre/post infinity through the same map; the axis says
  "normalized". Before, the ghost set the range (an edit that shrank the curve to 40 % left it a
  third of the plot's height) and the infinity curves were drawn in degrees (vertical dashes off
  the [-1, 1] plot), under an axis saying "deg".
* After View > Reset layout (or a resize) the legend of a previous selection or file is not drawn
  over the clip shown (a hidden legend kept its entries and a resize showed it again).
* After a fix (recipe Apply) the speed strip re-ranges to the new speed (it kept the old
  16,000 deg/s scale of the wraps the unwrap removed: its range followed the ghost's spikes too).
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRect
from PySide6.QtGui import QColor

from curveeditor.engine.curves import with_infinity
from curveeditor.engine.recipe import Recipe
from curveeditor.engine.retime import scale_key_values
from tests.app.windows import shown_window
from tests.conftest import corpus_files

pytestmark = pytest.mark.gui
WALK = corpus_files("bvh", "*cmu_12_01_walk.bvh")
KICK = corpus_files("bvh", "*kick_normal_001.bvh")
LEG = "Hips/LHipJoint/LeftUpLeg"
ARM = "Hips/LowerBack/Spine/Spine1/RightShoulder/RightArm"


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("view-state"), active=True)


def _open(win, qtbot, path):
    win.doc.undo_stack.setClean()
    win.doc._saved_externally_dirty = False
    with qtbot.waitSignal(win.files.loaded, timeout=30000):
        win.files.open_path(str(path))
    qtbot.wait(50)


@pytest.fixture
def walk(win, qtbot):
    if not WALK:
        pytest.skip("corpus BVH absent")
    _open(win, qtbot, WALK[0])
    yield win
    win.graphs.set_layout(normalize=False)
    win.doc.undo_stack.setClean()


def _shrunk_and_looping(win):
    """The leg's X values scaled to 40 % (every key) and its infinity Loop on both sides."""
    doc = win.doc
    tr = doc.clip.track(LEG)
    new = scale_key_values(tr, range(tr.n_keys), 0, 0.4, 0.0)
    new = new.with_curve(with_infinity(new.curve, pre=1, post=1))
    doc.select_paths([LEG])
    doc.apply_clip(doc.clip.with_track(new), "shrink X")
    return tr, new


def _red_rows(img, rect) -> np.ndarray:
    """Rows of ``rect`` (device pixels of ``img``) holding a red pixel (the X curve and its keys)."""
    rows = []
    for y in range(rect.top(), rect.bottom()):
        for x in range(rect.left(), rect.right(), 2):
            c = QColor(img.pixel(x, y))
            if c.red() > c.green() + 60 and c.red() > c.blue() + 60:
                rows.append(y)
                break
    return np.array(rows)


def test_normalize_covers_the_ghost_and_the_infinity_curves(walk, qtbot):
    win = walk
    g = win.graphs
    assert g.show_original
    _old, new = _shrunk_and_looping(win)
    g.set_layout(overlay=False, normalize=True)
    qtbot.wait(100)
    g.strips[0].plot.setXRange(-2.0, new.curve.end + 2.0, padding=0)
    g.frame_all()
    g.strips[0].plot.setXRange(-2.0, new.curve.end + 2.0, padding=0)
    qtbot.wait(300)
    x_plot = g.euler_plots[0]
    # the axis says what it shows
    for p in g.euler_plots:
        label = p.getAxis("left").labelText
        assert "normalized" in label and "deg" not in label, label
    # everything drawn of the track lies in [-1, 1]: the curve, its ghost, its extrapolation
    it = g.tracks.items[LEG]
    curve = next(c for c, ch in it.curves if ch == 0)
    ghost = [item for item, where, ch in it.ghost if where == "euler" and ch == 0]
    assert ghost, "the ghost of the edited track is drawn"
    for item in [curve, *ghost]:
        y = np.asarray(item.yData if hasattr(item, "yData") and item.yData is not None else item.getData()[1])
        assert np.nanmax(np.abs(y)) <= 1.0 + 1e-9
    gy = np.asarray(ghost[0].getData()[1])
    assert np.nanmax(gy) - np.nanmin(gy) > 1.9  # the ghost, 2.5x the edited curve, fills the range
    cy = np.asarray(curve.getData()[1])
    assert 0.6 < np.nanmax(cy) - np.nanmin(cy) < 1.0  # the curve, 40 % of it, keeps its proportion
    inf_items = [item for plot, item in win.tools.infinity_layer.items if plot is x_plot]
    assert inf_items
    for item in inf_items:
        y = np.asarray(item.getData()[1], dtype=float)
        y = y[np.isfinite(y)]
        assert y.size and np.max(np.abs(y)) <= 1.0 + 1e-6, "the infinity curves go through the map"
    lo, hi = x_plot.getViewBox().viewRange()[1]
    assert hi - lo < 2.8, (lo, hi)  # nothing drawn in degrees set the range
    # pixels: between the clip's ends (no extrapolation there) the X curve's red spans a good part
    # of the plot's height, not crushed into a band by a range set in degrees
    img = g.glw.grab().toImage()
    vb = x_plot.getViewBox()
    r = g.glw.mapFromScene(vb.sceneBoundingRect()).boundingRect()
    x0 = g.glw.mapFromScene(vb.mapViewToScene(QPointF(0.05, 0.0))).x()
    x1 = g.glw.mapFromScene(vb.mapViewToScene(QPointF(new.curve.end - 0.05, 0.0))).x()
    rows = _red_rows(img, QRect(x0, r.top(), x1 - x0, r.height()))
    assert rows.size and (rows.max() - rows.min()) > 0.25 * r.height(), (rows.min(), rows.max(), r.height())


def test_reset_layout_and_a_second_file_draw_no_old_legend(win, qtbot):
    if not WALK or not KICK:
        pytest.skip("corpus BVH absent")
    _open(win, qtbot, WALK[0])
    doc, g = win.doc, win.graphs
    doc.select_paths([LEG, ARM])
    qtbot.wait(50)
    assert g.legend_lines() and any("LeftUpLeg" in ln for ln in g.legend_lines())
    doc.select_paths([LEG])
    qtbot.wait(50)
    assert g.legend_lines() == []
    win.act_reset_layout.trigger()
    qtbot.wait(300)
    legend = g.strips[0].legend
    assert not legend.isVisible() and g.legend_lines() == [], g.strips[0].legend.text_lines()
    # two tracks of the first file, then a second file: no legend of the first one, even after
    # the layout is reset
    doc.select_paths([LEG, ARM])
    qtbot.wait(50)
    _open(win, qtbot, KICK[0])
    doc.select_paths([doc.clip.tracks[1].path])
    qtbot.wait(50)
    win.act_reset_layout.trigger()
    qtbot.wait(300)
    for s in g.strips:
        assert not s.legend.isVisible(), s.legend.text_lines()
    # pixels: nothing but the plot (no legend background or text) in the first plot's top-right
    # corner, where the legend sits: the same pixels with the legend item removed from the scene
    vb = g.strips[0].vb
    r = g.glw.mapFromScene(vb.sceneBoundingRect()).boundingRect()
    corner = type(r)(r.right() - 160, r.top() + 2, 150, 60)
    with_item = g.glw.grab(corner).toImage()
    g.strips[0].legend.setParentItem(None)
    vb.scene().removeItem(g.strips[0].legend) if g.strips[0].legend.scene() else None
    without = g.glw.grab(corner).toImage()
    assert with_item == without
    g.set_layout()  # rebuild the strips (a fresh legend item)


def test_speed_strip_reranges_after_a_fix(win, qtbot):
    """The kick BVH's hips: three Euler wraps play as 16,000 deg/s spikes; the unwrap fix removes them
    (726 deg/s left), and the speed strip follows, while the ghost (as loaded) keeps its spikes."""
    if not KICK:
        pytest.skip("corpus BVH absent")
    _open(win, qtbot, KICK[0])
    doc, g = win.doc, win.graphs
    assert g.show_original
    g.set_layout(speed=True)
    hips = "joint_Root/Hips"
    doc.select_paths([hips])
    qtbot.wait(100)
    g.frame_all()
    speed = g.strip_of("speed")
    top_before = speed.vb.viewRange()[1][1]
    assert top_before > 15000
    win.recipe.set_recipe(Recipe.of({"op": "unwrap"}))
    win.recipe.scope.setCurrentIndex(win.recipe.scope.findData("selected"))
    qtbot.waitUntil(lambda: doc.preview is not None and win.recipe.result is not None, timeout=30000)
    assert win.recipe.apply()
    qtbot.waitUntil(lambda: doc.undo_stack.undoText() == "Apply recipe", timeout=30000)
    qtbot.wait(200)
    drawn = np.asarray(g.tracks.items[hips].speed.getData()[1])
    new_max = float(np.nanmax(drawn))
    assert new_max < 1500
    assert g.tracks.items[hips].ghost, "the ghost (with its spikes) is drawn"
    lo, hi = speed.vb.viewRange()[1]
    assert new_max <= hi < 2.5 * new_max, (hi, new_max)  # re-ranged to the new data, which fits
    doc.undo_stack.undo()
    qtbot.wait(100)
    assert speed.vb.viewRange()[1][1] > 15000  # undo brings the spikes and their scale back
    win.recipe.set_recipe(Recipe.of())
