"""The whole character in the 3D view: a skeleton layer on :class:`~curveeditor.app.view3d.gizmo.GizmoView`.

For clips with joint positions (BVH offsets, ``.anim`` local position curves; see
:mod:`curveeditor.engine.skeleton`) the view draws the skeleton at the current time as bones, the
ghost of the original clip and of the recipe preview as faint second skeletons, and the selected
bone highlighted, with the gizmo's tripod, gimbal rings and trails moved onto that joint (oriented by
its parent, so the tripod shows the joint's world rotation). Clicking a bone selects its track. F (with
the 3D view focused) frames the character; *Follow root* keeps the camera on the root; orbiting is the
view's own mouse drag. Clips without positions keep the single gizmo and the view says why.

Unity's data are left-handed: joint positions are mirrored into GL with
``display.unity_to_gl_points`` and rotations with ``display.unity_to_gl_quat``, so the character
looks as it does in Unity (``rotations.md`` section 1). The character is scaled to about
:data:`CHARACTER_SIZE` scene units (the gizmo's sphere is 1) and centred on its first pose.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from pyqtgraph.opengl import GLGraphicsItem
from PySide6.QtCore import QEvent, QObject, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QMatrix4x4, QVector3D

from curveeditor.engine import display
from curveeditor.engine.skeleton import Skeleton, pose, pose_points, skeleton_from_clip

from .gizmo import _GHOST, _TRANSLUCENT, GizmoView, legend_entry
from .projection import camera_axes, point_segment_px, scene_mvp, to_pixels

__all__ = ["SkeletonLayer", "CHARACTER_SIZE"]

#: Height of the drawn character in scene units.
CHARACTER_SIZE = 3.0
#: Size of the tripod / rings drawn on the selected joint, as a fraction of the character size.
JOINT_GIZMO = 0.07
#: poses sampled over the clip (one vectorized call) for the box the camera frames
FRAME_SAMPLES = 64
#: the framed box's bounding sphere fills the view's shorter side but this margin
FRAME_MARGIN = 1.08
#: the default orbit (Home, a new clip): a 3/4 view from behind-left, as the single gizmo's
DEFAULT_ELEVATION = 22.0
DEFAULT_AZIMUTH = -112.0
#: ground grid cell (scene units; the character is CHARACTER_SIZE tall)
GRID_CELL = 0.25
PICK_PX = 8.0
LIVE_POSE_MS = 100  # mid-drag pose refresh interval (ms); see SkeletonLayer.rebuild


class SkeletonLayer(QObject):
    """Skeleton drawing, picking and framing for one :class:`GizmoView` (module docstring)."""

    updated = Signal()

    def __init__(self, gizmo: GizmoView, parent: QObject | None = None):
        super().__init__(parent or gizmo)
        self.gizmo = gizmo
        self.doc = gizmo.document
        self.enabled = True
        self.follow_root = False
        self.skeleton: Skeleton | None = None
        self.reason = ""
        self._scale = 1.0
        self._center = np.zeros(3)
        self._segments = np.zeros((0, 2), dtype=np.int64)
        self._gl_points = np.zeros((0, 3))  # scene positions of the joints (last update)
        self._press = None
        scene = gizmo._scene
        # The per-track gizmo items move onto the selected joint: one anchor carries them.
        self.anchor = GLGraphicsItem.GLGraphicsItem(parentItem=scene)
        self._movable = [
            gizmo._sphere,
            gizmo._trail_fwd,
            gizmo._trail_up,
            gizmo._trail_fwd_before,
            gizmo._trail_up_before,
            gizmo._trail_dots,
            *gizmo._rings,
            gizmo.main_tripod.group,
            gizmo.before_tripod.group,
            gizmo.original_tripod.group,
        ]
        self._fixed = [gizmo._world_axes, gizmo._world_labels]
        for item in self._movable:
            item.setParentItem(self.anchor)

        def lines(color, width, ghost=False):
            item = gl.GLLinePlotItem(
                pos=np.zeros((2, 3)),
                color=color,
                width=width,
                mode="lines",
                antialias=True,
                glOptions=_GHOST if ghost else _TRANSLUCENT,
                parentItem=scene,
            )
            item.hide()
            return item

        self.ghost_original = lines((0.75, 0.75, 0.8, 0.28), 2, ghost=True)
        self.ghost_preview = lines((0.55, 0.35, 0.95, 0.55), 2, ghost=True)
        self.bones = lines((0.88, 0.9, 0.95, 0.95), 3)
        self.selected_bones = lines((1.0, 0.82, 0.25, 1.0), 7)
        self.selected_bones.setDepthValue(1)  # over the other bones
        self.joints = gl.GLScatterPlotItem(
            pos=np.zeros((1, 3)), color=(0.95, 0.95, 1.0, 1.0), size=6, pxMode=True, parentItem=scene
        )
        self.joints.hide()
        #: what the layer says about the character (or why there is none): the first entry of the
        #: view's legend, which flows it with the rest (no label of its own: the GL view keeps the room)
        self.note = ""
        gizmo.legend_extra.insert(0, self._legend)
        gizmo.view.installEventFilter(self)
        gizmo.frame_hook = self._frame
        self._pose_stale = False  # a pose skipped while the 3D view was not visible
        self._ghost_memo: dict = {}
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.setInterval(LIVE_POSE_MS)
        self._live_timer.timeout.connect(self.update_pose)
        self.doc.clipChanged.connect(self.rebuild)
        self.doc.timeChanged.connect(lambda _t: self.update_pose())
        self.doc.previewChanged.connect(self.update_pose)
        self.doc.selectionChanged.connect(self.update_pose)
        gizmo.rendered.connect(self._after_gizmo)
        self.rebuild()

    # ------------------------------------------------------------------ state
    def active(self) -> bool:
        return self.enabled and self.skeleton is not None

    def set_enabled(self, on: bool) -> None:
        self.enabled = bool(on)
        self.rebuild()

    def set_follow_root(self, on: bool) -> None:
        """Keep the root at the centre of the view (the ground scrolls under it) and frame the
        character's box about the root; off: the whole clip's box again."""
        self.follow_root = bool(on)
        self.update_pose()
        self.frame_character()

    def rebuild(self) -> None:
        """New skeleton for the document's clip (after a load or a track-set change)."""
        if self.doc.changed_paths is not None and self.skeleton is not None:
            if self.doc.in_live_edit():
                # Mid-drag the pose follows at most every LIVE_POSE_MS (a dope-sheet step moves
                # keys of every joint: forward kinematics + a GL repaint per mouse move), and
                # exactly on the drag's end (its clipChanged arrives outside the live edit).
                if not self._live_timer.isActive():
                    self._live_timer.start()
                return
            self._live_timer.stop()
            self.update_pose()
            return
        self.skeleton, self.reason = skeleton_from_clip(self.doc.clip)
        if self.skeleton is not None:
            skel = self.skeleton
            tips = np.c_[skel.tips[:, 0], skel.n_joints + np.arange(skel.tips.shape[0])]
            self._segments = np.concatenate([skel.bones(), tips.astype(np.int64)]).reshape(-1, 2)
            clip = self.doc.clip
            # The clip's poses at FRAME_SAMPLES times in one vectorized call: the first pose sets
            # the scale, all of them the box the camera fits (the whole walk, not the first step)
            times = np.unique(np.linspace(float(clip.start), float(clip.end), FRAME_SAMPLES))
            pts = self._scene_points(pose_points(skel, clip, times))  # (M, P, 3), GL, clip units
            first = pts[0]
            self._scale = CHARACTER_SIZE / max(float(np.max(first.max(axis=0) - first.min(axis=0))), 1e-9)
            self._clip_box = (pts.min(axis=(0, 1)), pts.max(axis=(0, 1)))
            rel = pts - pts[:, :1]
            self._root_box = (rel.min(axis=(0, 1)), rel.max(axis=(0, 1)))
            self._home_center = 0.5 * (self._clip_box[0] + self._clip_box[1])
            self._center = self._home_center.copy()
            self._grid_state = None
        self.update_pose()
        if self.active():
            self.gizmo.reset_view()  # a new character: framed (camera angles as at start)

    def _scene_points(self, unity_pos: np.ndarray) -> np.ndarray:
        return np.asarray(display.unity_to_gl_points(unity_pos), dtype=np.float64)

    def _to_scene(self, unity_pos: np.ndarray) -> np.ndarray:
        return (self._scene_points(unity_pos) - self._center) * self._scale

    def joint_scene_positions(self) -> np.ndarray:
        """Scene (GL, Y-up) positions ``(J, 3)`` of the joints as last drawn (tests, picking)."""
        return self._gl_points[: self.skeleton.n_joints].copy() if self.skeleton else self._gl_points.copy()

    def _set_lines(self, item, pts: np.ndarray) -> None:
        seg = pts[self._segments.reshape(-1)] if self._segments.size else np.zeros((2, 3))
        item.setData(pos=seg)
        item.show()

    # ------------------------------------------------------------------ drawing
    def update_pose(self) -> None:
        g = self.gizmo
        if g._unseen():  # the 3D view is closed or tabbed away: posed when it shows again
            self._pose_stale = True
            return
        if not self.active():
            why = self.reason if self.skeleton is None else "the character view is off"
            if getattr(self, "_drawn", None) == ("off", why):
                return  # nothing changed: no GL repaint
            self._drawn = ("off", why)
            g.original_tripod_on = True
            for item in (
                self.bones,
                self.selected_bones,
                self.ghost_original,
                self.ghost_preview,
                self.joints,
            ):
                item.hide()
            self.anchor.setTransform(QMatrix4x4())
            self._default_grid()
            for item in self._fixed:
                item.show()
            self._set_note(f"Single gizmo (no character view): {why}.")
            g.view.update()
            self.updated.emit()
            return
        skel, clip, t = self.skeleton, self.doc.clip, self.doc.current_time
        if g.original_tripod_on:
            g.original_tripod_on = False  # the ghost skeleton shows the original's pose
            g.original_tripod.set_rotation(None)
        memo = getattr(self, "_pose_memo", None)
        if memo is not None and memo[0] is skel and memo[1] is clip and memo[2] == t:
            cur = memo[3]  # a selection change: same clip, same time, same pose
        else:
            cur = pose(skel, clip, [t])
            self._pose_memo = (skel, clip, t, cur)
        root = self._scene_points(cur.positions[0, :1])[0]
        self._center = root if self.follow_root else self._home_center
        self._place_grid(root)
        pts = self._to_scene(np.concatenate([cur.positions[0], cur.tips[0]]))
        sel = self.doc.selected_paths[0] if self.doc.selected_paths else None
        state = ("on", sel, id(self.doc.preview), id(self.doc.original), self.skeleton)
        prev_state = getattr(self, "_drawn", None)
        if (
            prev_state == state
            and self._gl_points.shape == pts.shape
            and np.array_equal(self._gl_points, pts)
        ):
            return  # the pose at the cursor did not move (ghosts neither): no GL repaint
        self._drawn = state
        self._gl_points = pts
        self._set_lines(self.bones, pts)
        self.joints.setData(pos=pts[: skel.n_joints])
        self.joints.show()
        overrides = (
            {tr.path: tr for tr in self.doc.original.tracks} if self.doc.original is not clip else None
        )
        if overrides and any(overrides[p] is not clip.track(p) for p in overrides if p in skel.paths):
            self._set_lines(self.ghost_original, self._ghost(overrides, self.doc.original))
        else:
            self.ghost_original.hide()
        prev = self.doc.preview
        if prev is not None and prev is not clip:
            over = {tr.path: tr for tr in prev.tracks}
            self._set_lines(self.ghost_preview, self._ghost(over, prev))
        else:
            self.ghost_preview.hide()
        for item in self._fixed:
            item.hide()
        self._apply_colors()
        if sel in skel.paths:
            j = skel.index(sel)
            seg = self._segments[self._segments[:, 0] == j]  # the bones this joint's rotation turns
            if not seg.size:
                seg = self._segments[self._segments[:, 1] == j]
            if seg.size:
                self.selected_bones.setData(pos=pts[seg.reshape(-1)])
                self.selected_bones.show()
            else:
                self.selected_bones.hide()
            parent = skel.parents[j]
            m = QMatrix4x4()
            m.translate(QVector3D(*pts[j]))
            if parent >= 0:
                rot = display.rotation_matrices(display.unity_to_gl_quat(cur.rotations[0, parent]))
                r4 = np.eye(4)
                r4[:3, :3] = rot
                m = m * QMatrix4x4(*r4.ravel().tolist())
            s = JOINT_GIZMO * CHARACTER_SIZE
            m.scale(s, s, s)
            self.anchor.setTransform(m)
            self.anchor.show()
        else:
            self.selected_bones.hide()
            self.anchor.hide()
        self._set_note(
            f"Character: {skel.n_joints} joints ({skel.source}); click a bone: its track; F frames it"
        )
        g.view.update()
        self.updated.emit()

    def _set_note(self, text: str) -> None:
        # the legend is re-flowed only when the note changes (not on every playback frame)
        if text != self.note:
            self.note = text
            self.gizmo.update_legend()

    def _legend(self) -> list:
        return [legend_entry(self.note)] if self.note else []

    def _apply_colors(self) -> None:
        """Bones that contrast with the 3D view's background (dark and light themes)."""
        bg = np.array(self.gizmo._scheme.background, dtype=float) / 255.0
        dark = float(bg.mean()) < 0.5
        bone = (0.88, 0.9, 0.95, 0.95) if dark else (0.16, 0.18, 0.24, 0.95)
        ghost = (0.75, 0.75, 0.8, 0.3) if dark else (0.3, 0.32, 0.4, 0.3)
        sel = (1.0, 0.82, 0.25, 1.0) if dark else (0.95, 0.55, 0.0, 1.0)
        if getattr(self, "_colors", None) != (bone, ghost, sel):
            self._colors = (bone, ghost, sel)
            self.bones.setData(color=bone)
            self.joints.setData(color=bone)
            self.ghost_original.setData(color=ghost)
            self.selected_bones.setData(color=sel)

    def _ghost(self, overrides: dict, source) -> np.ndarray:
        """Scene points of the ghost of ``source`` (the original or the preview) at the cursor. Its
        pose is kept per (source, clip's other tracks, time): a drag re-keys the current clip, not the
        ghost, so the ghost's pose is computed once per drag."""
        t = self.doc.current_time
        memo = self._ghost_memo.get(id(source))
        if memo is not None and memo[0] is source and memo[1] is self.skeleton and memo[2] == t:
            unity = memo[3]
        else:
            g = pose(self.skeleton, self.doc.clip, [t], overrides)
            unity = np.concatenate([g.positions[0], g.tips[0]])
            self._ghost_memo[id(source)] = (source, self.skeleton, t, unity)
        return self._to_scene(unity)

    def _after_gizmo(self) -> None:
        if self._pose_stale:  # the view was shown again (GizmoView.showEvent refreshed it)
            self._pose_stale = False
            self.update_pose()
        # The gizmo re-shows its items when its track changes; keep the world axes hidden meanwhile.
        if self.active():
            for item in self._fixed:
                item.hide()

    def joint_frame(self, path: str):
        """Where the selected joint's gizmo sits: ``(scene position (3,), parent world rotation (4,)
        in Unity's frame or None for a root, tripod scale)`` from the pose drawn now, or None when
        ``path`` is not a joint of the drawn character."""
        if not self.active() or path not in self.skeleton.paths:
            return None
        memo = getattr(self, "_pose_memo", None)
        if memo is None or memo[1] is not self.doc.clip or memo[2] != self.doc.current_time:
            self.update_pose()
            memo = getattr(self, "_pose_memo", None)
            if memo is None:
                return None
        j = self.skeleton.index(path)
        parent = int(self.skeleton.parents[j])
        parent_q = None if parent < 0 else np.array(memo[3].rotations[0, parent])
        return self._gl_points[j].copy(), parent_q, JOINT_GIZMO * CHARACTER_SIZE

    # ------------------------------------------------------------------ camera
    def frame_character(self) -> None:
        """Fit the camera to the character's box over the whole clip (F); following the root, to
        its box about the root (the camera then stays put while the character walks)."""
        if not self._frame(reset_angles=False):
            self.gizmo.reset_view()

    def _frame(self, reset_angles: bool) -> bool:
        """Camera on the character's box (see :meth:`frame_character`); ``reset_angles`` also puts the
        default orbit back (Home, a new clip). False when there is no character to frame.

        The distance is the smallest at which every corner of the box is inside the view from the
        camera's angle (per corner: its depth toward the camera plus its offset over the tangent of
        the half field of view, horizontally and vertically), times :data:`FRAME_MARGIN`."""
        if not self.active():
            return False
        if self.follow_root:
            lo, hi = self._root_box[0] * self._scale, self._root_box[1] * self._scale
        else:
            lo, hi = self._to_box(self._clip_box[0]), self._to_box(self._clip_box[1])
        mid = 0.5 * (lo + hi)
        v = self.gizmo.view
        c = self.gizmo.scene_transform().map(QVector3D(*mid))
        if reset_angles:
            v.setCameraPosition(pos=c, elevation=DEFAULT_ELEVATION, azimuth=DEFAULT_AZIMUTH)
        else:
            v.setCameraPosition(pos=c)
        _eye, right, up = camera_axes(v, self.gizmo._scene)
        back = np.cross(right, up)  # toward the camera
        corners = np.array(
            [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
        )
        rel = corners - mid
        w, h = max(v.width(), 1), max(v.height(), 1)
        tan_h = np.tan(0.5 * np.radians(v.opts.get("fov", 50)))  # pyqtgraph's fov is horizontal
        tan_v = tan_h * h / w
        need = rel @ back + np.maximum(np.abs(rel @ right) / tan_h, np.abs(rel @ up) / tan_v)
        v.setCameraPosition(distance=max(FRAME_MARGIN * float(need.max()), 1.0))
        v.update()
        return True

    def _to_box(self, gl_point: np.ndarray) -> np.ndarray:
        return (gl_point - self._home_center) * self._scale

    def _place_grid(self, root: np.ndarray) -> None:
        """The ground grid under the character: at the lowest point of the clip, covering where it
        goes; following the root, the grid scrolls under it (moved by the root's offset modulo a
        cell) so the ground shows the walk while the character stays centred."""
        lo, hi = self._clip_box
        spacing = GRID_CELL
        if self.follow_root:
            rlo, rhi = self._root_box[0] * self._scale, self._root_box[1] * self._scale
            span = float(max(rhi[0] - rlo[0], rhi[2] - rlo[2])) + 4 * spacing
            off = (root - self._home_center) * self._scale
            shift = np.array([-(off[0] % spacing), 0.0, -(off[2] % spacing)])
            mid = np.zeros(3)
        else:
            blo, bhi = self._to_box(lo), self._to_box(hi)
            span = float(max(bhi[0] - blo[0], bhi[2] - blo[2])) + 4 * spacing
            shift = np.zeros(3)
            mid = 0.5 * (blo + bhi)
        floor = float((lo[1] - self._center[1]) * self._scale)  # the clip's lowest point, in the scene
        size = spacing * 2 * int(np.ceil(0.5 * span / spacing))
        state = (round(size, 6), tuple(np.round(mid + shift, 6)), round(floor, 6))
        if state == getattr(self, "_grid_state", None):
            return
        self._grid_state = state
        grid = self.gizmo._grid
        grid.setSize(size, size, 1)
        grid.setSpacing(spacing, spacing, 1)
        m = QMatrix4x4()  # world (pyqtgraph, Z up) = GL (x, -z, y)
        m.translate(float(mid[0] + shift[0]), float(-(mid[2] + shift[2])), floor)
        grid.setTransform(m)

    def _default_grid(self) -> None:
        if getattr(self, "_grid_state", None) == "default":
            return
        self._grid_state = "default"
        grid = self.gizmo._grid
        grid.setSize(4, 4, 1)
        grid.setSpacing(0.25, 0.25, 1)
        grid.setTransform(QMatrix4x4())

    # ------------------------------------------------------------------ picking
    def bone_at(self, x: float, y: float) -> str | None:
        """Track path of the bone under widget pixel ``(x, y)`` of the GL view (within PICK_PX)."""
        if not self.active() or not self._segments.size:
            return None
        px = self.joint_pixels(all_points=True)
        a, b = px[self._segments[:, 0]], px[self._segments[:, 1]]
        d = point_segment_px(np.array([x, y], dtype=np.float64), a, b)
        k = int(np.argmin(d))
        if d[k] > PICK_PX:
            return None
        known = {t.path for t in self.doc.clip.tracks}
        # A bone belongs to the joint it starts at: that joint's rotation turns it.
        parent = self.skeleton.paths[self._segments[k, 0]]
        if parent in known:
            return parent
        child = self._segments[k, 1]
        path = self.skeleton.paths[child] if child < self.skeleton.n_joints else None
        return path if path in known else None

    def joint_pixels(self, all_points: bool = False) -> np.ndarray:
        """Widget pixels ``(P, 2)`` of the drawn points (joints, then tips) in the GL view."""
        v = self.gizmo.view
        px = to_pixels(
            scene_mvp(v, self.gizmo._scene), self._gl_points, max(v.width(), 1), max(v.height(), 1)
        )
        return px if all_points or self.skeleton is None else px[: self.skeleton.n_joints]

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802
        et = ev.type()
        if et == QEvent.Type.MouseButtonDblClick and ev.button() == Qt.MouseButton.LeftButton:
            # double-click a bone: its hierarchy (the bone and its children), as the tree's menu
            p = ev.position()
            path = self.bone_at(p.x(), p.y())
            if path is not None:
                self.doc.select_hierarchy(path)
                self._press = None  # the release that follows is no click (it would select the bone alone)
        elif et == QEvent.Type.MouseButtonPress and ev.button() == Qt.MouseButton.LeftButton:
            self._press = QPointF(ev.position())
        elif et == QEvent.Type.MouseButtonRelease and ev.button() == Qt.MouseButton.LeftButton:
            p0, self._press = self._press, None
            p = ev.position()
            if p0 is not None and (p - p0).manhattanLength() < 4:
                path = self.bone_at(p.x(), p.y())
                if path is not None:
                    self.doc.select_paths([path])
        elif et == QEvent.Type.ShortcutOverride and ev.key() == Qt.Key.Key_F and self.active():
            ev.accept()  # F in the 3D view frames the character, not the graphs' selection
            return True
        elif et == QEvent.Type.KeyPress and ev.key() == Qt.Key.Key_F:
            self.frame_character()
            return True
        return False
