"""Motion in the 3D view: the selected bone tip's trail and onion-skin ghosts of the character.

* **Motion trail** (Maya's motion trail, Blender's motion paths): the world positions of the
  selected bone's tip (``engine.skeleton.bone_tip``: its only child joint or end site, else the
  joint itself) at every frame of a window around the current frame (``trail_before`` /
  ``trail_after`` frames), fading away from the current frame, frames before in one colour and
  after in another, a dot per frame.
* **Onion skin** (Maya's ghosting, Blender's onion skin): the whole skeleton at ``onion_count``
  frames before and after the current frame, ``onion_step`` frames apart, fading with distance.

Both come from :class:`~curveeditor.app.model.frame_poses.FramePoses` (the engine's vectorized
forward kinematics over blocks of frames, kept across playback ticks and recomputed around edits):
a playback tick slices arrays and sets two GL items. Mid-drag they follow at most every
:data:`LIVE_MS` and exactly at the drag's end. Nothing is computed while the 3D view is unseen.
Positions go through the skeleton layer's scene mapping (``display.unity_to_gl_points``: Unity's
left-handed frame mirrored into GL).
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph.opengl as gl
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QFormLayout, QSpinBox, QWidget, QWidgetAction

from curveeditor.engine.skeleton import bone_tip

from ..model.frame_poses import FramePoses
from .gizmo import _GHOST, _TRANSLUCENT, legend_entry

__all__ = ["MotionLayer", "LIVE_MS"]

#: mid-drag refresh interval of trail and onion skin (ms); exact at the drag's end
LIVE_MS = 100
#: RGB 0..1: frames before the current one (cool) and after it (warm), as Blender's onion skin
BEFORE = np.array([0.35, 0.62, 1.0])
AFTER = np.array([1.0, 0.55, 0.25])


class MotionLayer(QObject):
    """Motion trail and onion skin on a :class:`~curveeditor.app.view3d.skeleton.SkeletonLayer`
    (module docstring)."""

    def __init__(self, skeleton, parent: QObject | None = None):
        super().__init__(parent or skeleton)
        self.layer = skeleton
        self.gizmo = skeleton.gizmo
        self.doc = skeleton.doc
        self.poses = FramePoses()
        self.trail_on = True
        self.onion_on = False
        self.trail_before = 30
        self.trail_after = 30
        self.onion_count = 3
        self.onion_step = 5
        self._drawn = None
        scene = self.gizmo._scene
        self.trail = gl.GLLinePlotItem(
            pos=np.zeros((2, 3)),
            width=2.5,
            mode="line_strip",
            antialias=True,
            glOptions=_TRANSLUCENT,
            parentItem=scene,
        )
        self.trail_dots = gl.GLScatterPlotItem(
            pos=np.zeros((1, 3)), size=4, pxMode=True, glOptions=_TRANSLUCENT, parentItem=scene
        )
        self.onion = gl.GLLinePlotItem(
            pos=np.zeros((2, 3)), width=2.0, mode="lines", antialias=True, glOptions=_GHOST, parentItem=scene
        )
        self.onion.setDepthValue(-1)
        for item in (self.trail, self.trail_dots, self.onion):
            item.hide()
        self._live = QTimer(self)
        self._live.setSingleShot(True)
        self._live.setInterval(LIVE_MS)
        self._live.timeout.connect(self.update)
        self._live_at = 0.0  # perf_counter of the last mid-drag update

        self.act_trail = QAction("Trail", self, checkable=True, checked=True)
        self.act_trail.setToolTip("Motion trail of the selected bone's tip over the frames around the cursor")
        self.act_trail.toggled.connect(self.set_trail)
        self.act_onion = QAction("Onion", self, checkable=True, checked=False)
        self.act_onion.setToolTip("Onion skin: the character a few frames before (blue) and after (orange)")
        self.act_onion.toggled.connect(self.set_onion)
        self.gizmo.add_tool(self.act_trail)
        self.gizmo.add_tool(self.act_onion)
        self._build_options()
        self.gizmo.legend_extra.append(self._legend)

        self.doc.timeChanged.connect(lambda _t: self.update())
        self.doc.selectionChanged.connect(self.update)
        self.doc.clipChanged.connect(self._on_clip)
        skeleton.updated.connect(self._after_pose)

    # ------------------------------------------------------------------ settings
    def _build_options(self) -> None:
        """Trail and onion settings in the view's options menu (spin boxes)."""
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(8, 4, 8, 4)

        def spin(lo, hi, value, tip, slot):
            s = QSpinBox(box)
            s.setRange(lo, hi)
            s.setValue(value)
            s.setToolTip(tip)
            s.valueChanged.connect(slot)
            return s

        self.spin_before = spin(
            0,
            100000,
            self.trail_before,
            "Trail frames before the current frame",
            lambda v: self.set_trail_frames(before=v),
        )
        self.spin_after = spin(
            0,
            100000,
            self.trail_after,
            "Trail frames after the current frame",
            lambda v: self.set_trail_frames(after=v),
        )
        self.spin_count = spin(
            1,
            20,
            self.onion_count,
            "Ghosts before and after the current frame",
            lambda v: self.set_onion_frames(count=v),
        )
        self.spin_step = spin(
            1, 1000, self.onion_step, "Frames between ghosts", lambda v: self.set_onion_frames(step=v)
        )
        form.addRow("Trail frames before", self.spin_before)
        form.addRow("Trail frames after", self.spin_after)
        form.addRow("Onion ghosts (each side)", self.spin_count)
        form.addRow("Onion step (frames)", self.spin_step)
        act = QWidgetAction(self)
        act.setDefaultWidget(box)
        menu = self.gizmo.options_menu
        menu.insertAction(menu.actions()[0] if menu.actions() else None, act)
        menu.insertSeparator(menu.actions()[1])

    def set_trail(self, on: bool) -> None:
        self.trail_on = bool(on)
        if self.act_trail.isChecked() != self.trail_on:
            self.act_trail.setChecked(self.trail_on)
        self.update()

    def set_onion(self, on: bool) -> None:
        self.onion_on = bool(on)
        if self.act_onion.isChecked() != self.onion_on:
            self.act_onion.setChecked(self.onion_on)
        self.update()

    def set_trail_frames(self, before: int | None = None, after: int | None = None) -> None:
        """Frames of the trail before / after the current frame."""
        if before is not None:
            self.trail_before = max(int(before), 0)
        if after is not None:
            self.trail_after = max(int(after), 0)
        self._sync_spins()
        self.update()

    def set_onion_frames(self, count: int | None = None, step: int | None = None) -> None:
        """Ghosts on each side of the current frame, and frames between them."""
        if count is not None:
            self.onion_count = max(int(count), 1)
        if step is not None:
            self.onion_step = max(int(step), 1)
        self._sync_spins()
        self.update()

    def _sync_spins(self) -> None:
        """The options menu's spin boxes show the settings (set from code too)."""
        for spin, value in (
            (self.spin_before, self.trail_before),
            (self.spin_after, self.trail_after),
            (self.spin_count, self.onion_count),
            (self.spin_step, self.onion_step),
        ):
            if spin.value() != value:
                spin.blockSignals(True)
                spin.setValue(value)
                spin.blockSignals(False)

    def _legend(self) -> list:
        if not self.layer.active():
            return []
        out = []
        if self.trail_on:
            out.append(legend_entry("tip trail"))
        if self.onion_on:
            out.append(legend_entry("onion skin"))
        if out:
            out.append(legend_entry((QColor.fromRgbF(*BEFORE), "before"), (QColor.fromRgbF(*AFTER), "after")))
        return out

    # ------------------------------------------------------------------ drawing
    def _on_clip(self) -> None:
        if self.doc.in_live_edit():
            # mid-drag at most every LIVE_MS, in the step's own repaint when that long has passed
            # (a timer-driven update is a GL repaint of its own), and once after the mouse rests
            now = time.perf_counter()
            if now - self._live_at >= LIVE_MS / 1000.0:
                self._live_at = now
                self._live.stop()
                self.update()
            elif not self._live.isActive():
                self._live.start()
            return
        self._live.stop()
        self.update()

    def _after_pose(self) -> None:
        """The skeleton layer drew (a new character, a new scene mapping when following the root)."""
        if not self._live.isActive():
            self.update()

    def current_frame(self) -> int:
        return int(round(float(self.doc.current_time) * float(self.doc.clip.frame_rate)))

    def trail_frames(self) -> np.ndarray:
        """The frames the trail shows now (clamped to the clip)."""
        lo, hi = self.poses.frame_range(self.doc.clip)
        f = self.current_frame()
        return np.arange(max(lo, f - self.trail_before), min(hi, f + self.trail_after) + 1)

    def onion_frames(self) -> np.ndarray:
        """The ghosts' frames, nearest first on each side ``(before..., after...)``, inside the clip."""
        lo, hi = self.poses.frame_range(self.doc.clip)
        f = self.current_frame()
        k = np.arange(1, self.onion_count + 1) * self.onion_step
        frames = np.concatenate([f - k, f + k])
        return frames[(frames >= lo) & (frames <= hi)]

    def update(self) -> None:
        layer = self.layer
        if self.gizmo._unseen():
            return
        show_trail = self.trail_on and layer.active()
        show_onion = self.onion_on and layer.active()
        path = self.doc.selected_paths[0] if self.doc.selected_paths else None
        skel = layer.skeleton
        joint = skel.index(path) if show_trail and path in (skel.paths if skel else ()) else None
        state = (
            show_trail and joint is not None,
            show_onion,
            joint,
            self.doc.clip,
            skel,
            self.current_frame(),
            self.trail_before,
            self.trail_after,
            self.onion_count,
            self.onion_step,
            tuple(layer._center),
            layer._scale,
        )
        if not state[0] and not show_onion:
            state = (False, False)  # nothing drawn: an edit or a time step changes nothing here
        if state == self._drawn:
            return
        first = self._drawn is None or self._drawn[:2] != state[:2]
        self._drawn = state
        if state[0]:
            self._draw_trail(joint)
        else:
            for item in (self.trail, self.trail_dots):
                if item.visible():
                    item.hide()
        if show_onion:
            self._draw_onion()
        elif self.onion.visible():
            self.onion.hide()
        if first:
            self.gizmo.update_legend()
        self.gizmo.view.update()

    def trail_points(self) -> np.ndarray:
        """Scene positions ``(M, 3)`` of the trail as drawn (tests)."""
        return np.asarray(self.trail.pos).copy()

    def _draw_trail(self, joint: int) -> None:
        layer, skel, clip = self.layer, self.layer.skeleton, self.doc.clip
        frames = self.trail_frames()
        tip = bone_tip(skel, joint)
        unity = self.poses.points(skel, clip, frames, columns=[tip])[:, 0]
        pts = layer._to_scene(unity)
        f = self.current_frame()
        d = frames - f
        span = np.where(d < 0, max(self.trail_before, 1), max(self.trail_after, 1))
        fade = 1.0 - np.abs(d) / (span + 1.0)
        rgb = np.where((d < 0)[:, None], BEFORE, AFTER)
        rgb[d == 0] = 1.0
        col = np.c_[rgb, 0.25 + 0.75 * fade].astype(np.float32)
        if len(pts) < 2:
            self.trail.hide()
            self.trail_dots.hide()
            return
        self.trail.setData(pos=pts, color=col)
        sizes = np.where(d == 0, 8.0, 4.0)
        self.trail_dots.setData(pos=pts, color=col, size=sizes)
        self.trail.show()
        self.trail_dots.show()

    def onion_points(self) -> np.ndarray:
        """Scene positions ``(G, P, 3)`` of the ghosts' points (joints, then tips) as drawn (tests)."""
        return getattr(self, "_onion_pts", np.zeros((0, 0, 3))).copy()

    def _draw_onion(self) -> None:
        layer, skel, clip = self.layer, self.layer.skeleton, self.doc.clip
        frames = self.onion_frames()
        if not frames.size or not layer._segments.size:
            self.onion.hide()
            self._onion_pts = np.zeros((0, 0, 3))
            return
        pts = layer._to_scene(self.poses.points(skel, clip, frames))  # (G, P, 3)
        self._onion_pts = pts
        seg = layer._segments.reshape(-1)
        lines = pts[:, seg].reshape(-1, 3)
        f = self.current_frame()
        d = frames - f
        k = np.abs(d) / self.onion_step  # 1 .. count
        alpha = 0.7 * (1.0 - (k - 1) / (self.onion_count + 0.5))
        rgb = np.where((d < 0)[:, None], BEFORE, AFTER)
        col = np.repeat(np.c_[rgb, alpha], len(seg), axis=0).astype(np.float32)
        self.onion.setData(pos=lines, color=col)
        self.onion.show()
