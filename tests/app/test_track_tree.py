"""The track tree on production rigs (issue 9): one row per bone (a track is its own parent),
``namespace:Bone`` names kept whole, a 12-level-deep Biped bone's name readable at the default dock
width, the full path in the tooltip, the "Problems only" filter, Up/Down from the graphs."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest

from curveeditor.app.tracks.tree import TRACK_ROLE
from curveeditor.app.window.main_window import MainWindow
from curveeditor.io import read_clip
from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip, namespaced_clip
from tests.app.windows import shown_window
from tests.conftest import corpus_files

pytestmark = pytest.mark.gui

MIXAMO = [p for p in corpus_files("anim", "*.anim") if p.name == "Tiotao__PlastAR__Assets_mixamo.com.anim"]


@pytest.fixture(scope="module", autouse=True)
def thousand_px_screen():
    """pytest-xvfb's screen is 800 x 600; the issue's default layout is on a 1600 x 1000 one."""
    from PySide6.QtCore import QRect

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MainWindow, "available_screen", lambda self: QRect(0, 0, 1600, 1000))
        yield


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory, thousand_px_screen):
    yield from shown_window(tmp_path_factory.mktemp("tree"))


def rows(tree):
    """(name, track path or None, depth) of every row of the proxy, depth first."""
    out = []

    def walk(p, depth):
        for r in range(tree.proxy.rowCount(p)):
            idx = tree.proxy.index(r, 0, p)
            out.append((idx.data(), idx.data(TRACK_ROLE), depth))
            walk(idx, depth + 1)

    walk(QModelIndex(), 0)
    return out


def test_one_row_per_bone_on_a_biped_rig(win, qtbot):
    clip = biped_clip(30)
    win.doc.load(clip, None)
    qtbot.wait(10)
    got = rows(win.tracks)
    assert len(got) == len(clip.tracks) == 99  # no group row repeating a bone's name
    assert sorted(p for _n, p, _d in got) == sorted(t.path for t in clip.tracks)
    deep = next(r for r in got if r[1] == DEEP_BIPED_BONE)
    assert deep[0] == "Bip001 L Finger12" and deep[2] == 12


def test_namespaced_names_stay_whole(win, qtbot):
    clip = namespaced_clip(20)
    win.doc.load(clip, None)
    qtbot.wait(10)
    got = rows(win.tracks)
    assert len(got) == len(clip.tracks)
    assert got[0][0] == "mixamorig:Hips" and got[1][0] == "mixamorig:Spine"
    assert not any(n == "mixamorig" or n == "Hips" for n, _p, _d in got)


@pytest.mark.corpus
@pytest.mark.skipif(not MIXAMO, reason="corpus clip absent")
def test_mixamo_corpus_clip_has_one_row_per_track(win, qtbot):
    clip = read_clip(MIXAMO[0])
    win.doc.load(clip, str(MIXAMO[0]))
    qtbot.wait(10)
    got = [r for r in rows(win.tracks) if r[1] is not None]
    assert len(got) == len(clip.tracks)
    assert all(":" in n for n, p, _d in got if p.rsplit("/", 1)[-1].startswith("mixamorig:"))
    all_rows = rows(win.tracks)
    ro = next(i for i, r in enumerate(all_rows) if r[0].startswith("Read-only"))
    tracks_only = [r for r in all_rows[:ro] if r[1] is None]  # rotation part: no group rows at all
    assert tracks_only == []
    rot_names = {p.rsplit("/", 1)[-1] for p in (t.path for t in clip.tracks)}
    assert not any(n in rot_names for n, _p, _d in tracks_only)


def test_deep_bone_name_visible_at_default_width_with_full_path_tooltip(win, qtbot):
    win.reset_layout()
    clip = biped_clip(30)
    win.doc.load(clip, None)
    win.doc.select_paths([DEEP_BIPED_BONE])
    qtbot.wait(50)
    tree = win.tracks
    idx = tree.proxy.mapFromSource(tree.model.index_for_track(DEEP_BIPED_BONE))
    tree.view.scrollTo(idx)
    qtbot.wait(10)
    rect = tree.view.visualRect(idx)
    fm = tree.view.fontMetrics()
    name = "Bip001 L Finger12"
    # the name column starts after 12 compact indents and still holds the whole name
    assert rect.width() >= fm.horizontalAdvance(name) + 6, (rect, tree.view.width())
    assert rect.right() <= tree.view.viewport().width()
    assert tree.proxy.data(idx, Qt.ItemDataRole.ToolTipRole).splitlines()[0] == DEEP_BIPED_BONE


def test_problems_only_filter(win, qtbot):
    clip = biped_clip(60)
    # one track with a 360 degree wrap between two keys
    tr = clip.tracks[40]
    v = np.array(tr.curve.value)
    v[30:, 0] += 360.0
    from curveeditor.engine.tangents import make_curve

    bad = tr.with_curve(make_curve(tr.curve.time, v))
    clip = clip.with_track(bad)
    win.doc.load(clip, None)
    qtbot.waitUntil(lambda: sum(win.problem_index.counts(bad.path).values()) > 0, timeout=10000)
    win.tracks.problems_only.setChecked(True)
    try:
        qtbot.wait(10)
        shown = [p for _n, p, _d in rows(win.tracks) if p]
        assert bad.path in shown
        flagged = {t.path for t in clip.tracks if sum(win.problem_index.counts(t.path).values())}
        assert flagged <= set(shown) and len(shown) < len(clip.tracks)
        # the others shown are the flagged tracks' parents (context), nothing else
        assert all(any(f.startswith(p + "/") for f in flagged) for p in set(shown) - flagged)
    finally:
        win.tracks.problems_only.setChecked(False)


def test_up_down_from_the_graphs_walk_the_tree(win, qtbot):
    clip = biped_clip(20)
    win.doc.load(clip, None)
    win.activateWindow()
    QTest.qWaitForWindowActive(win)
    order = win.tracks.track_order()
    win.doc.select_paths([order[5]])
    win.graphs.glw.setFocus()
    qtbot.wait(10)
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_Down)
    assert win.doc.selected_paths == [order[6]]
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_Up)
    QTest.keyClick(win.graphs.glw, Qt.Key.Key_Up)
    assert win.doc.selected_paths == [order[4]]


def test_names_that_do_not_fit_keep_their_end(qapp):
    """On a namespaced rig the end of a bone name tells bones apart: the tree elides on the left."""
    from PySide6.QtCore import Qt

    from curveeditor.app.model.document import ClipDocument
    from curveeditor.app.model.problems import ProblemIndex
    from curveeditor.app.tracks.tree import TrackTree

    doc = ClipDocument()
    tree = TrackTree(doc, ProblemIndex(doc))
    assert tree.view.textElideMode() == Qt.TextElideMode.ElideLeft


def test_an_edit_that_keeps_the_problems_is_no_news_and_the_unfiltered_tree_is_not_refiltered(qapp):
    """After an edit, only tracks whose problem lists changed are announced (a dope-sheet retime of
    165 clean tracks re-walked the tree and reloaded the Problems table for nothing), and the filter
    proxy re-filters on source changes only while a filter is on."""
    from curveeditor.app.model.document import ClipDocument
    from curveeditor.app.model.problems import ProblemIndex
    from curveeditor.app.tracks.tree import TrackTree
    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.tangents import make_curve

    t = np.linspace(0.0, 1.0, 31)
    smooth = np.stack([10 * t, 20 * t, 5 * t], axis=1)
    wrapped = smooth.copy()
    wrapped[15:, 1] += 360.0  # a wrap jump
    tracks = [
        RotationTrack("a", "euler", make_curve(t, smooth), order="zxy"),
        RotationTrack("b", "euler", make_curve(t, wrapped), order="zxy"),
    ]
    doc = ClipDocument()
    index = ProblemIndex(doc, delay_ms=0)
    tree = TrackTree(doc, index)
    doc.load(Clip("c", 30.0, tracks), None)
    news = []
    index.updated.connect(news.append)
    # Both tracks replaced by new objects: "a" shifted (still clean), "b" with its wrap removed.
    a2 = RotationTrack("a", "euler", make_curve(t, smooth + 1.0), order="zxy")
    b2 = RotationTrack("b", "euler", make_curve(t, smooth), order="zxy")
    doc.apply_clip(doc.clip.with_tracks([a2, b2]), "edit")
    index.refresh()
    assert news and news[-1] == frozenset({"b"})
    assert not tree.proxy.dynamicSortFilter()
    tree.filter.setText("b")
    assert tree.proxy.dynamicSortFilter()
    tree.filter.setText("")
    tree.proxy.set_problems_only(True)
    assert tree.proxy.dynamicSortFilter()
