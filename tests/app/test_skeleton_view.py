"""The character in the 3D view: joint positions = independent forward kinematics of the raw BVH,
clicking a bone selects its track, F frames the character, clips without positions say why."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip
from tests.app.test_key_manipulators import win  # noqa: F401 - the shared window fixture
from tests.conftest import corpus_files
from tests.engine.test_skeleton import independent_fk, raw_motion

pytestmark = pytest.mark.gui
WALK = corpus_files("bvh", "*cmu_12_01_walk.bvh")


@pytest.mark.skipif(not WALK, reason="corpus BVH not present")
def test_skeleton_joints_equal_independent_fk_and_clicking_a_bone_selects_its_track(win, qtbot):  # noqa: F811
    clip = read_clip(WALK[0])
    doc, layer = win.doc, win.tools.skeleton
    doc.undo_stack.setClean()
    doc.load(clip, None)
    qtbot.wait(30)
    assert layer.active() and "31 joints" in layer.note and "31 joints" in win.gizmo._legend.text()
    motion = raw_motion(WALK[0])
    mirror = np.array([-1.0, 1.0, 1.0])
    for frame in (0, 100, 377):
        doc.set_time(frame / clip.frame_rate)
        qtbot.wait(5)
        want_unity = independent_fk(clip.meta["hierarchy"], motion, frame) * mirror
        want_gl = want_unity * np.array([1.0, 1.0, -1.0])  # Unity left-handed -> GL: z mirrored
        got = layer.joint_scene_positions() / layer._scale + layer._center
        np.testing.assert_allclose(got, want_gl, atol=1e-6 * np.ptp(want_gl))
    # Click the bone from the left thigh to the left knee: its track (the thigh) becomes selected.
    skel = layer.skeleton
    lowerleg = next(i for i, p in enumerate(skel.paths) if p.endswith("LeftLeg") or p.endswith("LeftKnee"))
    upper = skel.parents[lowerleg]
    win.gizmo.view_widget.setMinimumSize(420, 420)
    qtbot.wait(50)
    layer.frame_character()
    qtbot.wait(30)
    px = layer.joint_pixels()
    mid = 0.5 * (px[upper] + px[lowerleg])
    doc.select_paths([clip.tracks[0].path])
    QTest.mouseClick(
        win.gizmo.view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(*map(int, mid))
    )
    qtbot.wait(30)
    assert doc.selected_paths == [skel.paths[upper]]
    # The selected joint carries the gizmo: the anchor sits at that joint.
    m = np.array(layer.anchor.transform().data()).reshape(4, 4).T
    np.testing.assert_allclose(m[:3, 3], layer.joint_scene_positions()[upper], atol=1e-6)
    # F in the 3D view frames the character: the camera centre moves to the pose's centre.
    win.gizmo.view.setCameraPosition(distance=40.0)
    QTest.keyClick(win.gizmo.view, Qt.Key.Key_F)
    assert win.gizmo.view.opts["distance"] < 40.0


def test_a_clip_without_positions_keeps_the_single_gizmo_and_says_why(win, qtbot):  # noqa: F811
    t = np.arange(5) / 30.0
    tracks = (
        RotationTrack("Hips", "euler", make_curve(t, np.zeros((5, 3)))),
        RotationTrack("Hips/Spine", "euler", make_curve(t, np.zeros((5, 3)))),
    )
    win.doc.undo_stack.setClean()
    win.doc.load(Clip("rot", 30.0, tracks), None)
    qtbot.wait(20)
    layer = win.tools.skeleton
    assert not layer.active() and not layer.bones.visible()
    assert "Single gizmo" in layer.note and "no local positions" in layer.note
    assert "no local positions" in win.gizmo._legend.text()


@pytest.mark.skipif(not WALK, reason="corpus BVH not present")
def test_ghosts_of_preview_and_original_and_follow_root(win, qtbot):  # noqa: F811
    from curveeditor.engine import edit as ed

    clip = read_clip(WALK[0])
    doc, layer = win.doc, win.tools.skeleton
    doc.undo_stack.setClean()
    doc.load(clip, None)
    doc.set_time(1.0)
    qtbot.wait(20)
    assert not layer.ghost_preview.visible() and not layer.ghost_original.visible()
    arm = next(t for t in clip.tracks if t.path.endswith("LeftArm"))
    lifted = clip.with_track(ed.move_keys(arm, range(arm.n_keys), 0.0, 0, 40.0))
    doc.set_preview(lifted)  # a recipe result not applied yet
    qtbot.wait(20)
    assert layer.ghost_preview.visible()
    ghost = np.asarray(layer.ghost_preview.pos)
    assert np.abs(ghost - np.asarray(layer.bones.pos)).max() > 1e-3  # a different pose, drawn apart
    doc.set_preview(None)
    doc.apply_clip(lifted, "Lift arm")
    qtbot.wait(20)
    assert layer.ghost_original.visible()
    win.tools.act_follow.setChecked(True)
    doc.set_time(2.0)
    qtbot.wait(20)
    np.testing.assert_allclose(layer.joint_scene_positions()[0], 0.0, atol=1e-9)  # the root stays centred
    win.tools.act_follow.setChecked(False)
    doc.undo_stack.undo()
