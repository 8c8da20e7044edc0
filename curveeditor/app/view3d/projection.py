"""Scene points to widget pixels and the camera's axes, for the 3D view's picking and gizmo drags.

The scene (GL, Y up) hangs under one item rotated into pyqtgraph's Z-up world
(:class:`~curveeditor.app.view3d.gizmo.GizmoView`); these helpers take scene coordinates and the
view's current camera. Pixels: x right, y down, the GL window's logical size. Nothing here is
rotation math of the clip: only the camera's projection, as the GL view draws it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["scene_mvp", "to_pixels", "camera_axes", "point_segment_px"]


def _array(m) -> np.ndarray:
    return np.array(m.data(), dtype=np.float64).reshape(4, 4).T  # QMatrix4x4.data() is column-major


def scene_mvp(view, scene_item) -> np.ndarray:
    """Row-major ``(4, 4)`` projection x camera x scene-item transform of ``view`` (a GL view)."""
    w, h = max(view.width(), 1), max(view.height(), 1)
    m = view.projectionMatrix((0, 0, w, h), (0, 0, w, h)) * view.viewMatrix() * scene_item.transform()
    return _array(m)


def to_pixels(mvp: np.ndarray, pts: np.ndarray, w: int, h: int) -> np.ndarray:
    """Scene points ``(N, 3)`` to widget pixels ``(N, 2)`` through ``mvp`` (vectorized)."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
    hom = np.c_[pts, np.ones(len(pts))] @ mvp.T
    ndc = hom[:, :3] / hom[:, 3:4]
    return np.c_[(ndc[:, 0] + 1) * 0.5 * w, (1 - ndc[:, 1]) * 0.5 * h]


def camera_axes(view, scene_item) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The camera's eye position, right and up unit vectors, in the scene item's coordinates."""
    to_scene = _array(scene_item.transform())[:3, :3].T  # a rotation: its inverse is its transpose
    cam = _array(view.viewMatrix())[:3, :3]  # rows: camera right, up, backward in world coordinates
    eye = view.cameraPosition()
    eye_w = np.array([eye.x(), eye.y(), eye.z()])
    origin_w = _array(scene_item.transform())[:3, 3]
    return to_scene @ (eye_w - origin_w), to_scene @ cam[0], to_scene @ cam[1]


def point_segment_px(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pixel distances ``(N,)`` from point ``p (2,)`` to the segments ``a (N, 2)`` -> ``b (N, 2)``."""
    ab = b - a
    t = np.clip(np.sum((p - a) * ab, axis=1) / np.maximum(np.sum(ab * ab, axis=1), 1e-12), 0, 1)
    return np.linalg.norm(a + t[:, None] * ab - p, axis=1)
