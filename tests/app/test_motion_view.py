"""Motion trail and onion skin in the 3D view on corpus BVH rigs: the drawn points are the engine's
forward kinematics at the right frames (the trail's tip checked against an independent FK of the raw
BVH channels), settings count, playback reuses computed frames, an edit refreshes what it changed."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.pose_edit import rotate_pose
from curveeditor.engine.skeleton import bone_tip, pose_points
from curveeditor.io import read_clip
from tests.app.windows import shown_window
from tests.conftest import corpus_files
from tests.engine.test_skeleton import independent_fk, raw_motion

pytestmark = pytest.mark.gui
GANGNAM = corpus_files("bvh", "*Gangnam-Style.bvh")
WALK = corpus_files("bvh", "*cmu_12_01_walk.bvh")


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    yield from shown_window(tmp_path_factory.mktemp("motion"))


def _load(win, qtbot, path, bone, frame):
    doc = win.doc
    doc.undo_stack.setClean()
    clip = read_clip(path)
    doc.load(clip, None)
    tr = next(t for t in clip.tracks if t.path.endswith(bone))
    doc.select_paths([tr.path])
    doc.set_time(frame / clip.frame_rate)
    qtbot.wait(40)
    return doc, clip, tr


@pytest.mark.skipif(not WALK, reason="corpus BVH not present")
def test_trail_is_the_bone_tip_over_the_frames_around_the_cursor(win, qtbot):
    doc, clip, tr = _load(win, qtbot, WALK[0], "LeftForeArm", 200)
    motion, layer = win.tools.motion, win.tools.skeleton
    motion.set_trail(True)
    motion.set_trail_frames(before=40, after=25)
    qtbot.wait(20)
    assert motion.trail.visible()
    frames = np.arange(160, 226)
    np.testing.assert_array_equal(motion.trail_frames(), frames)
    skel = layer.skeleton
    j = skel.index(tr.path)
    tip = bone_tip(skel, j)
    assert skel.paths[tip].endswith("LeftHand")  # the forearm's only child
    pts = motion.trail_points()
    assert pts.shape == (len(frames), 3)
    # the tip against an independent FK of the raw BVH channels (BVH right-handed -> Unity: x
    # mirrored; Unity -> GL: z mirrored), through the layer's scene mapping
    motion_rows = raw_motion(WALK[0])
    for k in (0, 40, 65):
        bvh = independent_fk(clip.meta["hierarchy"], motion_rows, int(frames[k]))[tip]
        gl = bvh * np.array([-1.0, 1.0, 1.0]) * np.array([1.0, 1.0, -1.0])
        np.testing.assert_allclose(
            pts[k], (gl - layer._center) * layer._scale, atol=1e-6 * layer._scale * 100
        )
    # faded away from the current frame: alpha highest at the cursor
    alpha = np.asarray(motion.trail.color)[:, 3]
    assert alpha[40] == alpha.max() and alpha[0] < alpha[30] and alpha[-1] < alpha[50]


@pytest.mark.skipif(not GANGNAM, reason="corpus BVH not present")
def test_onion_skin_ghosts_at_the_chosen_step_fade_and_playback_reuses_frames(win, qtbot):
    doc, clip, tr = _load(win, qtbot, GANGNAM[0], "Spine", 300)
    motion, layer = win.tools.motion, win.tools.skeleton
    motion.set_onion(True)
    motion.set_onion_frames(count=2, step=4)
    qtbot.wait(20)
    assert motion.onion.visible()
    np.testing.assert_array_equal(motion.onion_frames(), [296, 292, 304, 308])
    want = layer._to_scene(
        pose_points(layer.skeleton, clip, np.array([296, 292, 304, 308]) / clip.frame_rate)
    )
    np.testing.assert_allclose(motion.onion_points(), want, atol=1e-9)
    seg = layer._segments.shape[0] * 2
    alpha = np.asarray(motion.onion.color)[::seg, 3]  # one alpha per ghost
    assert alpha[0] > alpha[1] and alpha[2] > alpha[3]  # nearer ghosts are stronger
    rgb = np.asarray(motion.onion.color)[::seg, :3]
    assert rgb[0][2] > rgb[0][0] and rgb[2][0] > rgb[2][2]  # before blue, after orange
    # playback inside computed blocks: no new pose computation
    before = motion.poses.computed
    for f in range(300, 312):
        doc.set_time(f / clip.frame_rate)
    qtbot.wait(10)
    assert motion.poses.computed == before
    # the options reach the layer; the legend names the onion skin
    motion.spin_count.setValue(3)
    assert motion.onion_count == 3 and len(motion.onion_frames()) == 6
    assert "onion" in win.gizmo._legend.text()
    motion.set_onion(False)
    assert not motion.onion.visible()


@pytest.mark.skipif(not GANGNAM, reason="corpus BVH not present")
def test_an_edit_refreshes_the_trail_where_it_changed_and_keeps_the_other_frames(win, qtbot):
    doc, clip, tr = _load(win, qtbot, GANGNAM[0], "LeftArm", 400)
    motion, layer = win.tools.motion, win.tools.skeleton
    motion.set_trail(True)
    motion.set_trail_frames(before=30, after=30)
    qtbot.wait(20)
    old = motion.trail_points()
    computed, recomputed = motion.poses.computed, motion.poses.recomputed_frames
    res = rotate_pose(tr, 400 / clip.frame_rate, [0, 1, 0], 35.0, "local")
    doc.apply_clip(clip.with_track(res.track), "Rotate LeftArm")
    qtbot.wait(30)
    new = motion.trail_points()
    frames = motion.trail_frames()
    skel = layer.skeleton
    tip = bone_tip(skel, skel.index(tr.path))
    want = layer._to_scene(pose_points(skel, doc.clip, frames / clip.frame_rate)[:, tip])
    np.testing.assert_allclose(new, want, atol=1e-9)
    moved = np.linalg.norm(new - old, axis=1) > 1e-9
    assert moved[30] and not moved[0] and not moved[-1]  # only around the keyed frame
    assert motion.poses.computed == computed  # no block posed whole again ...
    assert 0 < motion.poses.recomputed_frames - recomputed <= 8  # ... only the frames the edit changed
    doc.undo_stack.undo()
