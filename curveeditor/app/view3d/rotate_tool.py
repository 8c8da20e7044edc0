"""Rotate the selected bone in the 3D view with a rotation gizmo, keying the current frame.

The gizmo (as Unity's rotate tool, Maya's and Blender's rotate manipulators):

* three rings, one per axis (X red, Y green, Z blue), in the bone's own frame (*Local*, Unity's
  Pivot Rotation Local), its parent's (*Parent*) or the world's (*World*, Unity's Global); the half
  of a ring behind the bone is drawn faint;
* an outer ring facing the viewer: rotation about the view direction;
* inside the rings, a free rotation (trackball): the bone's front follows the mouse.

The rings sit on the selected joint (the skeleton's, or the single gizmo's centre), at least
:data:`RING_PX` pixels on screen and outside the joint's gimbal rings; a ring under the mouse turns
yellow. Dragging keys the current time: the key at the current frame, or the selected key when
exactly one key of the track is selected (the time cursor moves to it), or a new key at the current
frame (``engine.pose_edit``: the engine turns the pose and keys it; this module only maps the mouse
to an axis and an angle with the engine's functions). The curves, the key table and the character
follow the drag live (``ClipDocument.update_live``); the release is one undo step
(``end_live_edit``), Escape cancels. A click without a drag selects the bone under the mouse, as
without the gizmo. E toggles the gizmo while the 3D view has the focus.

Unity's data are left-handed; the rings are built in the GL scene frame from the Unity axes
(``display.unity_to_gl_points``) and a rotation dragged in GL goes back to Unity with
``display.gl_to_unity_axis`` (``rotations.md`` section 1).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl import GLGraphicsItem
from pyqtgraph.opengl.GLGraphicsItem import GLOptions
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from curveeditor.engine import display
from curveeditor.engine.pose_edit import (
    SPACES,
    axis_angle,
    circle_points,
    grip_ring,
    ring_angle,
    ring_axes,
    rotate_pose,
    trackball,
)
from curveeditor.engine.rotations import quat_mul

from ..model.time_samples import samples_at
from .gizmo import AXIS_COLORS, GizmoView, legend_entry
from .projection import camera_axes, point_segment_px, scene_mvp, to_pixels

__all__ = ["RotateGizmo", "RING_PX", "PICK_PX"]

#: the axis rings' radius on screen (pixels), at least (a fraction of the view's shorter side)
RING_PX = 50
RING_FRACTION = 0.14
#: the view ring is this much larger than the axis rings
VIEW_RING = 1.18
#: just outside the joint's gimbal rings (their largest radius is 1.22 tripod units)
OUTSIDE_GIMBAL = 1.34
#: a press within this many pixels of a ring grabs it (the hit target is twice this wide)
PICK_PX = 8.0
#: mouse travel (pixels) that turns a press into a drag; less is a click (selects a bone)
DRAG_PX = 3.0
#: the status line shows the drag's angle at most this often (ms), and at the release
STATUS_MS = 150
_SEGMENTS = 96
_HOVER = np.array([1.0, 0.86, 0.2, 1.0], dtype=np.float32)  # Unity's active handle yellow
_VIEW_COLOR = np.array([0.88, 0.88, 0.92, 0.85], dtype=np.float32)
_FREE_COLOR = np.array([0.8, 0.8, 0.85, 0.22], dtype=np.float32)
#: drawn over the character (no depth test), as Unity draws its handles
_ON_TOP = {
    **GLOptions["translucent"],
    GL.GL_DEPTH_TEST: False,
    "glDepthMask": (False,),
}
SPACE_LABELS = {"local": "Local", "parent": "Parent", "world": "World"}


@dataclass
class _Geometry:
    """What the gizmo draws now (GL scene frame)."""

    center: np.ndarray  # (3,)
    radius: float  # axis rings' radius, scene units
    toward: np.ndarray  # (3,) unit, from the centre toward the eye
    right: np.ndarray
    up: np.ndarray
    rings: list  # [(name, axis_gl (3,), points (N+1, 3))]: "x", "y", "z", "view"
    free: np.ndarray  # (N+1, 3) the free-rotate circle
    local_q: np.ndarray  # (4,) Unity, the bone's local rotation at t
    parent_q: np.ndarray | None  # (4,) Unity, the parent's world rotation (None = identity)
    path: str


@dataclass
class _Drag:
    kind: str  # "x" / "y" / "z" / "view" / "free"
    path: str
    t: float
    clip: object  # the clip at the press (every step turns its track)
    track: object
    parent_q: np.ndarray | None
    press: np.ndarray  # (2,) pixels
    last: np.ndarray
    axis_gl: np.ndarray | None = None
    grip: object = None
    angle: float = 0.0  # radians (rings)
    free_q: np.ndarray | None = None  # GL frame (free rotation)
    right: np.ndarray | None = None
    up: np.ndarray | None = None
    radius_px: float = 1.0
    started: bool = False
    reference: np.ndarray | None = None
    keyed: int | None = None
    angle_deg: float = 0.0


class RotateGizmo(QObject):
    """The rotation gizmo on a :class:`GizmoView` (module docstring). ``skeleton``: the view's
    :class:`~curveeditor.app.view3d.skeleton.SkeletonLayer`, or ``None`` (single gizmo only)."""

    statusMessage = Signal(str)
    dragFinished = Signal()

    def __init__(self, gizmo: GizmoView, skeleton=None, parent: QObject | None = None):
        super().__init__(parent or gizmo)
        self.gizmo = gizmo
        self.doc = gizmo.document
        self.skeleton = skeleton
        self.enabled = True
        self.space = "local"
        self.hover: str | None = None
        self.drag: _Drag | None = None
        self.geometry: _Geometry | None = None
        self._drawn_key = None
        self.steps = 0  # drag steps keyed (tests, benchmarks)
        self._status_at = 0.0

        self.root = GLGraphicsItem.GLGraphicsItem(parentItem=gizmo._scene)
        self.root.setDepthValue(10)  # drawn after the character and the tripods

        # every ring in one item (segment pairs, a colour per vertex): each GL item costs ~0.2 ms of
        # the main thread per paint under llvmpipe, whatever its size
        self.rings = gl.GLLinePlotItem(
            pos=np.zeros((2, 3)),
            color=(1, 1, 1, 1),
            width=2.5,
            mode="lines",
            antialias=False,
            glOptions=_ON_TOP,
            parentItem=self.root,
        )
        self.root.hide()

        # ---- actions: the gizmo toggle (E) and its space, in the view's tools row
        self.act_rotate = QAction("&Rotation gizmo", self)
        self.act_rotate.setIconText("Rotate")  # the tools row
        self.act_rotate.setCheckable(True)
        self.act_rotate.setChecked(True)
        self.act_rotate.setToolTip(
            "Rotation gizmo (E in the 3D view): drag a ring to rotate about its axis, the outer ring about "
            "the view, inside for a free rotation; keys the current frame (one undo step per drag)"
        )
        self.act_rotate.toggled.connect(self.set_enabled)
        self.act_rotate.setShortcut(Qt.Key.Key_E)  # the 3D view's panel (the GL window: eventFilter)
        self.act_rotate.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        gizmo.addAction(self.act_rotate)
        self.space_group = QActionGroup(self)
        self.space_actions = {}
        menu = QMenu(gizmo)
        for sp in SPACES:
            a = QAction(SPACE_LABELS[sp], self, checkable=True)
            a.setChecked(sp == self.space)
            a.triggered.connect(lambda _c=False, s=sp: self.set_space(s))
            self.space_group.addAction(a)
            menu.addAction(a)
            self.space_actions[sp] = a
        self.space_action = gizmo.menu_tool("", menu)
        self.space_action.setToolTip(
            "Ring orientation: Local (the bone's axes, Unity's Pivot Rotation Local), Parent (the parent "
            "bone's axes) or World (Unity's Global)"
        )
        self._set_space_text()
        gizmo.add_tool(self.act_rotate)
        gizmo.add_tool(self.space_action)
        gizmo.legend_extra.append(self._legend)

        gizmo.gimbal_rings_dim = True
        gizmo.view.before_paint.append(self._before_paint)
        gizmo.view.installEventFilter(self)  # after the skeleton layer's: runs first
        for sig in (self.doc.timeChanged, self.doc.selectionChanged):
            sig.connect(self._changed)
        self.doc.clipChanged.connect(self._clip_changed)
        self._shown_frame = None  # the bone's (centre, local q, parent q, scale, path) last drawn

    # ------------------------------------------------------------------ state
    def set_enabled(self, on: bool) -> None:
        self.enabled = bool(on)
        self.gizmo.gimbal_rings_dim = self.enabled  # one set of axis-coloured rings stands out
        self.gizmo._on_time(None)
        if not self.enabled:
            self.cancel()
        if self.act_rotate.isChecked() != self.enabled:
            self.act_rotate.setChecked(self.enabled)
        self._changed()
        self.gizmo.update_legend()

    def set_space(self, space: str) -> None:
        if space not in SPACES:
            raise ValueError(f"unknown space {space!r}")
        self.space = space
        self.space_actions[space].setChecked(True)
        self._set_space_text()
        self._changed()

    def _set_space_text(self) -> None:
        self.space_action.setText(f"{SPACE_LABELS[self.space]} \u25be")

    def _changed(self, *_a) -> None:
        self.gizmo.view.update()  # the geometry follows at the next paint (_before_paint)

    def _clip_changed(self) -> None:
        """An edit repaints the rings only when the bone they sit on moved at the current time: a key
        dragged away from the cursor costs no GL frame (tests/app/test_responsiveness.py)."""
        if not self.enabled or self.gizmo._unseen():
            return
        layer = self.skeleton
        if layer is not None and layer.active():
            return  # the character view: the skeleton layer repaints when the pose moves (throttled
            # mid-drag) and the rings follow at that paint (_before_paint); posing here would not be
        fr = self._frame()
        if not _same_frame(fr, self._shown_frame):
            self._changed()

    def _legend(self) -> list[tuple[str, str]]:
        if not self.enabled or self.geometry is None:
            return []
        return [legend_entry("drag rings: rotate, inside: free")]

    # ------------------------------------------------------------------ geometry
    def _frame(self):
        """(centre in the scene, local q, parent world q | None, tripod scale, path) of the bone the
        gizmo turns, or None (no keyed track, the character view without that joint)."""
        doc = self.doc
        track = doc.current_track()
        if track is None or track.n_keys == 0:
            return None
        t = doc.current_time
        local_q = samples_at(track, t).quat[0]
        layer = self.skeleton
        if layer is not None and layer.active():
            frame = layer.joint_frame(track.path)
            if frame is None:
                return None
            center, parent_q, scale = frame
            return center, local_q, parent_q, scale, track.path
        return np.zeros(3), local_q, None, 1.0, track.path

    def compute_geometry(self) -> _Geometry | None:
        """The gizmo as it is drawn now (camera, pose, space): rings in the GL scene frame."""
        if not self.enabled or self.gizmo._unseen():
            return None
        fr = self._frame()
        self._shown_frame = fr
        if fr is None:
            return None
        center, local_q, parent_q, scale, path = fr
        v = self.gizmo.view
        w, h = max(v.width(), 1), max(v.height(), 1)
        eye, right, up = camera_axes(v, self.gizmo._scene)
        toward = eye - center
        toward = toward / max(float(np.linalg.norm(toward)), 1e-12)
        mvp = scene_mvp(v, self.gizmo._scene)
        px = to_pixels(mvp, np.stack([center, center + right]), w, h)
        px_per_unit = max(float(np.linalg.norm(px[1] - px[0])), 1e-9)
        want_px = max(RING_PX, RING_FRACTION * min(w, h))
        radius = max(want_px / px_per_unit, OUTSIDE_GIMBAL * scale)
        axes = display.unity_to_gl_points(ring_axes(self.space, local_q, parent_q))
        circles = center + radius * circle_points(np.vstack([axes, toward]), _SEGMENTS)  # (4, N+1, 3)
        rings = [(n, axes[i], circles[i]) for i, n in enumerate("xyz")]
        view_circle = (circles[3] - center) / radius
        rings.append(("view", toward, center + VIEW_RING * radius * view_circle))
        return _Geometry(
            center, radius, toward, right, up, rings, center + radius * view_circle, local_q, parent_q, path
        )

    def _before_paint(self) -> None:
        geo = self.compute_geometry()
        self.geometry = geo
        if geo is None:
            if self.root.visible():
                self.root.hide()
            return
        active = self.drag.kind if self.drag is not None and self.drag.started else self.hover
        key = (
            tuple(np.round(geo.center, 9)),
            round(geo.radius, 9),
            tuple(np.round(geo.toward, 9)),
            tuple(np.round(np.concatenate([r[1] for r in geo.rings]), 9)),
            active,
        )
        if not self.root.visible():
            self.root.show()
        if key == self._drawn_key:
            return
        self._drawn_key = key
        pts = np.stack([p for _n, _a, p in geo.rings] + [geo.free])  # (5, N+1, 3)
        col = np.empty(pts.shape[:2] + (4,), dtype=np.float32)
        for i, name in enumerate("xyz"):
            col[i] = _HOVER if active == name else AXIS_COLORS[i]
        col[3] = _HOVER if active == "view" else _VIEW_COLOR
        col[4] = _HOVER * np.array([1, 1, 1, 0.35]) if active == "free" else _FREE_COLOR
        back = (pts[:3] - geo.center) @ geo.toward < -1e-3 * geo.radius
        col[:3, :, 3] = np.where(
            back, 0.22, col[:3, :, 3]
        )  # the half behind the bone: faint (Unity hides it)
        # line strips as segment pairs (point k to k + 1 of each ring): one GL item for all
        seg = np.stack([pts[:, :-1], pts[:, 1:]], axis=2).reshape(-1, 3)
        seg_col = np.stack([col[:, :-1], col[:, 1:]], axis=2).reshape(-1, 4)
        self.rings.setData(pos=seg, color=seg_col)

    # ------------------------------------------------------------------ picking
    def pick(self, x: float, y: float) -> str | None:
        """What a press at widget pixel ``(x, y)`` grabs: ``"x"``/``"y"``/``"z"`` (an axis ring's
        front half), ``"view"`` (the outer ring), ``"free"`` (inside the rings) or None."""
        geo = self.compute_geometry()
        if geo is None:
            return None
        v = self.gizmo.view
        w, h = max(v.width(), 1), max(v.height(), 1)
        mvp = scene_mvp(v, self.gizmo._scene)
        p = np.array([x, y], dtype=np.float64)
        best, best_d = None, PICK_PX
        for name, _axis, pts in geo.rings:
            px = to_pixels(mvp, pts, w, h)
            d = point_segment_px(p, px[:-1], px[1:])
            if name != "view":
                mid = 0.5 * (pts[:-1] + pts[1:])
                d = np.where((mid - geo.center) @ geo.toward >= -1e-3 * geo.radius, d, np.inf)
            k = float(np.min(d))
            if k <= best_d:
                best, best_d = name, k
        if best is not None:
            return best
        c = to_pixels(mvp, geo.center[None], w, h)[0]
        free_px = to_pixels(mvp, geo.free, w, h)
        if float(np.linalg.norm(p - c)) < float(np.min(np.linalg.norm(free_px - c, axis=1))):
            return "free"
        return None

    def ring_pixels(self, name: str) -> np.ndarray:
        """Widget pixels ``(N + 1, 2)`` of ring ``name`` as drawn now, or of the centre for
        ``"center"`` ``(1, 2)`` (tests, benchmarks)."""
        geo = self.compute_geometry()
        v = self.gizmo.view
        w, h = max(v.width(), 1), max(v.height(), 1)
        mvp = scene_mvp(v, self.gizmo._scene)
        if name == "center":
            return to_pixels(mvp, geo.center[None], w, h)
        if name == "free":
            return to_pixels(mvp, geo.free, w, h)
        return to_pixels(mvp, next(p for n, _a, p in geo.rings if n == name), w, h)

    # ------------------------------------------------------------------ drag
    def _target_time(self, track) -> float:
        """The time the drag keys: the only selected key of the track, else the current frame."""
        sel = self.doc.selected_keys.get(track.path) or set()
        if len(sel) == 1:
            return float(track.times[next(iter(sel))])
        return float(self.doc.snap_time(self.doc.current_time))

    def press(self, x: float, y: float) -> bool:
        """Start a drag at widget pixel ``(x, y)`` when it hits the gizmo; False lets the view orbit."""
        kind = self.pick(x, y)
        if kind is None:
            return False
        doc = self.doc
        track = doc.current_track()
        t = self._target_time(track)
        if t != doc.current_time:
            doc.set_time(t)  # the pose edited is the pose shown
        geo = self.compute_geometry()
        if geo is None:
            return False
        v = self.gizmo.view
        w, h = max(v.width(), 1), max(v.height(), 1)
        mvp = scene_mvp(v, self.gizmo._scene)
        p = np.array([x, y], dtype=np.float64)
        d = _Drag(kind, track.path, t, doc.clip, track, geo.parent_q, p, p.copy())
        center_px = to_pixels(mvp, geo.center[None], w, h)[0]
        if kind == "free":
            d.free_q = np.array([0.0, 0.0, 0.0, 1.0])
            d.right, d.up = geo.right, geo.up
            d.radius_px = float(np.mean(np.linalg.norm(to_pixels(mvp, geo.free, w, h) - center_px, axis=1)))
        else:
            _n, axis, pts = next(r for r in geo.rings if r[0] == kind)
            d.axis_gl = axis
            d.grip = grip_ring(to_pixels(mvp, pts, w, h), center_px, p)
        self.drag = d
        return True

    def move(self, x: float, y: float) -> None:
        d = self.drag
        if d is None:
            return
        p = np.array([x, y], dtype=np.float64)
        if not d.started:
            if float(np.linalg.norm(p - d.press)) < DRAG_PX:
                return
            d.started = True
            self.gizmo.trails_after_drag = True
            self.doc.begin_live_edit()
        if d.kind == "free":
            step = trackball(p - d.last, d.right, d.up, d.radius_px)
            d.free_q = quat_mul(step, d.free_q)
            axis_gl, deg = axis_angle(d.free_q)
        else:
            d.angle = ring_angle(d.grip, d.angle, d.last, p)
            axis_gl, deg = d.axis_gl, float(np.degrees(d.angle))
        d.last = p
        self._key(display.gl_to_unity_axis(axis_gl), deg)

    def _key(self, axis_unity: np.ndarray, angle_deg: float) -> None:
        d = self.drag
        res = rotate_pose(d.track, d.t, axis_unity, angle_deg, "world", d.parent_q, d.reference)
        d.reference = res.value
        d.keyed = res.index
        self.steps += 1
        self.doc.update_live(d.clip.with_track(res.track), [d.path], {d.path: {res.index}})
        if self.skeleton is not None and self.skeleton.active():
            self.skeleton.update_pose()  # the bone follows every step (the layer throttles other drags)
        now = time.perf_counter()
        if now - self._status_at >= STATUS_MS / 1000.0:  # the status bar's relayout: not every step
            self._status_at = now
            self.statusMessage.emit(self._status_text(angle_deg))
        d.angle_deg = angle_deg

    def _status_text(self, angle_deg: float) -> str:
        d = self.drag
        return f"Rotate {d.path.rsplit('/', 1)[-1]}: {angle_deg:+.1f}\u00b0 at {d.t:.3f} s"

    def release(self, x: float, y: float) -> bool:
        """End the drag: one undo step. False when the press was a click (no drag)."""
        d = self.drag
        if d is None:
            return False
        if not d.started:
            self.drag = None
            return False
        self.move(x, y)
        self.statusMessage.emit(self._status_text(d.angle_deg) + " (one undo step)")
        self.drag = None
        self.gizmo.trails_after_drag = False
        bone = d.path.rsplit("/", 1)[-1]
        self.doc.end_live_edit(
            f"Rotate {bone}", keys_after={d.path: {d.keyed}} if d.keyed is not None else None
        )
        self.gizmo.view.update()
        self.dragFinished.emit()
        return True

    def cancel(self) -> None:
        """Abort the drag under way (Escape): the clip as at the press."""
        d, self.drag = self.drag, None
        self.gizmo.trails_after_drag = False
        if d is not None and d.started:
            self.doc.cancel_live_edit()
            self.gizmo.view.update()

    # ------------------------------------------------------------------ events
    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt API
        et = ev.type()
        if et == QEvent.Type.MouseButtonDblClick:
            # a double-click is no rotation: the skeleton layer selects the bone's hierarchy
            if self.drag is not None and not self.drag.started:
                self.cancel()
            return False
        if et == QEvent.Type.MouseButtonPress:
            if ev.button() != Qt.MouseButton.LeftButton or ev.modifiers() != Qt.KeyboardModifier.NoModifier:
                return False
            pos = ev.position()
            return self.press(pos.x(), pos.y())
        if et == QEvent.Type.MouseMove:
            pos = ev.position()
            if self.drag is not None:
                self.move(pos.x(), pos.y())
                return True
            if ev.buttons() == Qt.MouseButton.NoButton and self.enabled:
                hit = self.pick(pos.x(), pos.y())
                if hit != self.hover:
                    self.hover = hit
                    self.gizmo.view.update()
            return False
        if et == QEvent.Type.MouseButtonRelease and self.drag is not None:
            if ev.button() != Qt.MouseButton.LeftButton:
                return True
            pos = ev.position()
            dragged = self.release(pos.x(), pos.y())
            if not dragged and self.skeleton is not None:
                path = self.skeleton.bone_at(pos.x(), pos.y())  # a click: select, as without the gizmo
                if path is not None:
                    self.doc.select_paths([path])
            return True
        if et == QEvent.Type.KeyPress:
            if ev.key() == Qt.Key.Key_Escape and self.drag is not None:
                self.cancel()
                return True
            if ev.key() == Qt.Key.Key_E and ev.modifiers() == Qt.KeyboardModifier.NoModifier:
                self.set_enabled(not self.enabled)
                return True
        if et == QEvent.Type.FocusOut and self.drag is not None:
            self.cancel()
        return False


def _same_frame(a, b) -> bool:
    """Two ``RotateTool._frame`` results the rings would be drawn the same from."""
    if a is None or b is None:
        return a is b
    return (
        a[4] == b[4]
        and a[3] == b[3]
        and all(
            (x is None and y is None) or (x is not None and y is not None and np.array_equal(x, y))
            for x, y in zip(a[:3], b[:3], strict=True)
        )
    )
