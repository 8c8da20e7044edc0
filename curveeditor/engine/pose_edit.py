"""Rotate a bone's pose at one time and key it: the engine half of the 3D view's rotation gizmo.

Two parts, both pure (arrays in, arrays or tracks out):

* **Keying** (:func:`rotate_pose`, :func:`key_pose`): the pose a track plays at ``t`` seconds, turned
  by an axis-angle given in the bone's own (``"local"``), its parent's (``"parent"``) or the world
  (``"world"``) frame, written into the key at ``t`` (inserted on the played curve when there is
  none: the pose elsewhere does not move). Euler tracks keep their rotation order and take, of every
  triple giving the new pose (the two equivalent triples, any component +- 360 k), the one nearest a
  reference: the key's old value, or the previous step of a drag, so a drag past 180 degrees winds
  on and the curve stays continuous with its neighbours. Quaternion tracks take the sign on their
  neighbours' hemisphere. Slopes are recomputed only where the keys' tangent modes ask for it (the
  keyed key and its neighbours; Free and broken sides keep theirs; every other key is untouched).
* **Mouse to angle** (:func:`grip_ring`, :func:`ring_angle`, :func:`trackball`): how a drag on a
  ring drawn on screen, or a free drag inside it, maps to a rotation. They work on pixel
  coordinates and on vectors of one frame (the view's GL scene frame); :func:`axis_angle` and
  ``display.gl_to_unity_axis`` take the result into Unity's frame.

Frames and units: quaternions ``(x, y, z, w)``, Unity's left-handed frame (Y up, Z forward) for
everything keyed; ``parent_q`` is the parent joint's world rotation (``None`` = identity: a track
without a skeleton is shown in its parent's frame). Angles in degrees at the keying boundary, radians
for the drag mapping (they come from pixel arcs). Pixels: x right, y down.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .clip import EULER, RotationTrack, played
from .edit import insert_key
from .rotations import nearest_euler, quat_conj, quat_exp, quat_log, quat_mul, quat_normalize, quat_to_matrix
from .tangents import recomputed_slopes

__all__ = [
    "SPACES",
    "KeyedPose",
    "ring_axes",
    "rotated_local",
    "key_pose",
    "rotate_pose",
    "circle_points",
    "RingGrip",
    "grip_ring",
    "ring_angle",
    "trackball",
    "axis_angle",
]

#: Frames a gizmo ring's axis can be given in (Unity's Pivot Rotation Local / Global, plus the parent).
SPACES = ("local", "parent", "world")
_TIME_EPS = 1e-6  # seconds: a key this close to ``t`` is the key at ``t`` (as engine.edit)
#: A ring whose projected area is under this fraction of a face-on circle's is treated as edge-on:
#: the angle about its centre on screen is ill-defined there, so the drag follows its tangent.
OPEN_MIN = 0.2
#: Largest angle (rad) one mouse step may add along an edge-on ring's tangent.
_MAX_TANGENT_STEP = 0.5


@dataclass(frozen=True, eq=False)
class KeyedPose:
    """The result of keying a pose.

    Attributes:
        track: the new track.
        index: index of the key that holds the pose (inserted or edited).
        value: that key's value, ``(3,)`` Euler degrees (x, y, z) or ``(4,)`` quaternion: the reference
            for the next step of a drag.
        inserted: a key was added at ``t`` (there was none).
    """

    track: RotationTrack
    index: int
    value: np.ndarray
    inserted: bool


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64).reshape(3)
    n = float(np.linalg.norm(v))
    if not n > 0.0:
        raise ValueError("rotation axis has zero length")
    return v / n


def _quat(q) -> np.ndarray:
    return quat_normalize(np.asarray(q, dtype=np.float64).reshape(4))


def ring_axes(space: str, local_q, parent_q=None) -> np.ndarray:
    """World-frame unit axes ``(3, 3)`` (rows X, Y, Z) of the gizmo's rings for a bone whose local
    rotation is ``local_q (4,)`` under a parent at world rotation ``parent_q (4,)`` (``None`` =
    identity): ``"local"`` = the bone's rotated axes, ``"parent"`` = the parent's, ``"world"`` = the
    world's. Unity frame."""
    if space not in SPACES:
        raise ValueError(f"unknown space {space!r} (one of {', '.join(SPACES)})")
    if space == "world":
        return np.eye(3)
    p = np.array([0.0, 0.0, 0.0, 1.0]) if parent_q is None else _quat(parent_q)
    frame = p if space == "parent" else quat_mul(p, _quat(local_q))
    return np.ascontiguousarray(quat_to_matrix(frame).T)  # columns of R = rotated basis vectors


def rotated_local(local_q, axis, angle_deg: float, space: str = "world", parent_q=None) -> np.ndarray:
    """The local rotation ``(4,)`` after turning the bone by ``angle_deg`` degrees about ``axis (3,)``
    (right-handed in Unity's frame, i.e. as Unity's ``Quaternion.AngleAxis``), the axis given in
    ``space``: ``"local"`` ``q R``, ``"parent"`` ``R q``, ``"world"`` ``P^-1 R P q`` with ``P = parent_q``."""
    if space not in SPACES:
        raise ValueError(f"unknown space {space!r} (one of {', '.join(SPACES)})")
    q = _quat(local_q)
    r = quat_exp(_unit(axis) * np.radians(float(angle_deg)))
    if space == "local":
        out = quat_mul(q, r)
    elif space == "parent" or parent_q is None:
        out = quat_mul(r, q)
    else:
        p = _quat(parent_q)
        out = quat_mul(quat_conj(p), quat_mul(r, quat_mul(p, q)))
    return quat_normalize(out)


def key_pose(track: RotationTrack, t: float, q, reference=None) -> KeyedPose:
    """Key the rotation ``q (4,)`` (Unity frame, the bone's local rotation) at ``t`` seconds.

    The key at ``t`` (within 1 us) takes the value; without one, a Clamped Auto key is inserted on the
    played curve first (``edit.insert_key``: nothing else moves). Euler tracks: the triple in the
    track's order nearest ``reference (3,)`` (default: the key's value before the edit), so the key
    stays on its curve's winding. Quaternion tracks: ``q`` or ``-q``, whichever lies on the
    hemisphere of the neighbouring keys (of ``reference`` when given and the key has no neighbour).
    Slopes of the key and its neighbours are recomputed as their tangent modes ask; modes, weights
    and every other key are unchanged.
    """
    q = _quat(q)
    t = float(t)
    c = track.curve
    inserted = True
    if c.n_keys:
        j = int(np.argmin(np.abs(c.time - t)))
        if abs(float(c.time[j]) - t) < _TIME_EPS:
            inserted = False
    base, idx = insert_key(track, t) if inserted else (track, j)
    bc = base.curve
    old = np.array(bc.value[idx], dtype=np.float64)
    if track.kind == EULER:
        ref = old if reference is None else np.asarray(reference, dtype=np.float64).reshape(3)
        value = nearest_euler(q, track.order, ref)
    else:
        near = np.zeros(4)
        if idx > 0:
            near += quat_normalize(bc.value[idx - 1])
        if idx + 1 < bc.n_keys:
            near += quat_normalize(bc.value[idx + 1])
        if not np.any(near):
            near = old if reference is None else np.asarray(reference, dtype=np.float64).reshape(4)
        value = q if float(np.dot(q, near)) >= 0.0 else -q
    values = np.array(bc.value, dtype=np.float64)
    values[idx] = value
    mask = np.zeros(bc.n_keys, dtype=bool)
    mask[idx] = True
    # the slopes first, then one new curve (validated once: this runs on every gizmo drag step)
    ins, outs = recomputed_slopes(bc.time, values, bc.in_slope, bc.out_slope, bc.tangent_mode, mask)
    curve = bc.with_keys(value=values, in_slope=ins, out_slope=outs)
    return KeyedPose(base.with_curve(curve), int(idx), np.array(value), inserted)


def rotate_pose(
    track: RotationTrack,
    t: float,
    axis,
    angle_deg: float,
    space: str = "world",
    parent_q=None,
    reference=None,
) -> KeyedPose:
    """Turn the pose ``track`` plays at ``t`` seconds by ``angle_deg`` degrees about ``axis (3,)`` given
    in ``space`` (:func:`rotated_local`) and key it (:func:`key_pose`; ``reference`` as there)."""
    q0 = played(track, np.array([float(t)]))[0]
    return key_pose(track, t, rotated_local(q0, axis, angle_deg, space, parent_q), reference)


# ---------------------------------------------------------------------------------- mouse to angle
@functools.lru_cache(maxsize=8)
def _cos_sin(n: int) -> tuple[np.ndarray, np.ndarray]:
    ang = np.linspace(0.0, 2.0 * np.pi, n + 1)
    c, s = np.cos(ang), np.sin(ang)
    c[-1], s[-1] = 1.0, 0.0  # closed exactly
    return c, s


def circle_points(axis, n: int = 96) -> np.ndarray:
    """``(n + 1, 3)`` closed unit circle about ``axis (3,)`` (or ``(K, n + 1, 3)`` for axes ``(K, 3)``),
    its points in the right-handed sense of a rotation about the axis (point k = the first point
    turned by ``2 pi k / n``)."""
    a = np.asarray(axis, dtype=np.float64)
    single = a.ndim == 1
    a = a.reshape(-1, 3)
    norm = np.sqrt(np.einsum("ij,ij->i", a, a))
    if not np.all(norm > 0.0):
        raise ValueError("rotation axis has zero length")
    a = a / norm[:, None]
    helper = np.eye(3)[np.argmin(np.abs(a), axis=1)]
    u = np.cross(a, helper)
    u /= np.sqrt(np.einsum("ij,ij->i", u, u))[:, None]
    v = np.cross(a, u)
    c, s = _cos_sin(int(n))
    pts = c[None, :, None] * u[:, None, :] + s[None, :, None] * v[:, None, :]
    return pts[0] if single else pts


@dataclass(frozen=True, eq=False)
class RingGrip:
    """A press on a ring drawn on screen (:func:`grip_ring`).

    Attributes:
        center: ``(2,)`` pixels of the ring's centre.
        ring: ``(n + 1, 2)`` pixels of the ring's points (closed; point k at ring parameter ``2 pi k / n``).
        start: ring parameter (rad) of the grabbed point.
        sign: +1 / -1 when the drag follows the mouse's angle about the centre (the ring parameter grows
            with that angle / against it), 0 for an edge-on ring (the drag follows its tangent).
    """

    center: np.ndarray
    ring: np.ndarray
    start: float
    sign: float


def _wrap(a: float) -> float:
    return float((a + np.pi) % (2.0 * np.pi) - np.pi)


def grip_ring(ring_px, center_px, press_px, open_min: float = OPEN_MIN) -> RingGrip:
    """How a press at ``press_px (2,)`` on the projected ring ``ring_px (n + 1, 2)`` (from
    :func:`circle_points`, closed) around ``center_px (2,)`` turns mouse motion into an angle."""
    ring = np.asarray(ring_px, dtype=np.float64).reshape(-1, 2)
    c = np.asarray(center_px, dtype=np.float64).reshape(2)
    p = np.asarray(press_px, dtype=np.float64).reshape(2)
    n = ring.shape[0] - 1
    rel = ring - c
    area = 0.5 * float(np.sum(rel[:-1, 0] * rel[1:, 1] - rel[1:, 0] * rel[:-1, 1]))
    radius = float(np.max(np.linalg.norm(rel, axis=1)))
    openness = abs(area) / max(np.pi * radius * radius, 1e-12)
    a, b = ring[:-1], ring[1:]
    ab = b - a
    s = np.clip(np.sum((p - a) * ab, axis=1) / np.maximum(np.sum(ab * ab, axis=1), 1e-12), 0.0, 1.0)
    d = np.linalg.norm(a + s[:, None] * ab - p, axis=1)
    k = int(np.argmin(d))
    start = 2.0 * np.pi * (k + float(s[k])) / n
    sign = 0.0 if openness < open_min else float(np.sign(area))
    return RingGrip(c, ring, start, sign)


def _tangent(grip: RingGrip, alpha: float) -> np.ndarray:
    """d(pixel)/d(ring parameter) ``(2,)`` of the projected ring at ``alpha`` radians."""
    n = grip.ring.shape[0] - 1
    u = (alpha / (2.0 * np.pi)) % 1.0 * n
    k = int(np.floor(u)) % n
    return (grip.ring[k + 1] - grip.ring[k]) * (n / (2.0 * np.pi))


def ring_angle(grip: RingGrip, angle: float, prev_px, cur_px) -> float:
    """The drag's accumulated angle (radians, right-handed about the ring's axis) after the mouse moved
    from ``prev_px`` to ``cur_px``, given the accumulated ``angle`` before. An open ring follows the
    mouse's angle about its centre (several turns wind on); an edge-on one follows its tangent at
    the grabbed point as it turns, so the grabbed point stays under the mouse."""
    prev = np.asarray(prev_px, dtype=np.float64).reshape(2) - grip.center
    cur = np.asarray(cur_px, dtype=np.float64).reshape(2) - grip.center
    if grip.sign:
        step = _wrap(float(np.arctan2(cur[1], cur[0]) - np.arctan2(prev[1], prev[0])))
        return float(angle + grip.sign * step)
    t = _tangent(grip, grip.start + angle)
    t2 = float(np.dot(t, t))
    if t2 < 1e-9:
        return float(angle)
    step = float(np.dot(cur - prev, t)) / t2
    return float(angle + np.clip(step, -_MAX_TANGENT_STEP, _MAX_TANGENT_STEP))


def trackball(delta_px, right, up, radius_px: float) -> np.ndarray:
    """The free rotation ``(4,)`` of a mouse step ``delta_px (dx, dy)`` (pixels, y down) inside a gizmo of
    ``radius_px``: the point of the sphere facing the viewer follows the mouse, ``|delta| / radius``
    radians about the axis in the view plane at right angles to the motion. ``right``/``up`` are the
    view's unit vectors in the frame the rotation is wanted in (the viewer looks along
    ``-(right x up)``)."""
    dx, dy = (float(v) for v in np.asarray(delta_px, dtype=np.float64).reshape(2))
    length = float(np.hypot(dx, dy))
    if length == 0.0 or not radius_px > 0:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = dx * np.asarray(up, dtype=np.float64) + dy * np.asarray(right, dtype=np.float64)
    return quat_exp(_unit(axis) * (length / float(radius_px)))


def axis_angle(q) -> tuple[np.ndarray, float]:
    """Unit axis ``(3,)`` and angle in degrees (``[0, 180]``) of the rotation ``q (4,)``; the X axis for
    the identity."""
    r = quat_log(_quat(q))
    ang = float(np.linalg.norm(r))
    if ang < 1e-15:
        return np.array([1.0, 0.0, 0.0]), 0.0
    return r / ang, float(np.degrees(ang))
