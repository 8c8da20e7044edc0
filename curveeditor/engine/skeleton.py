"""The whole character: joints, their local positions and forward kinematics, in Unity's frame.

A :class:`Skeleton` is built from a clip (:func:`skeleton_from_clip`):

* BVH clips (``clip.meta["hierarchy"]``): one joint per BVH joint, rest offsets mirrored into Unity's
  left-handed frame like the motion (``io.bvh``: ``(x, y, z) -> (-x, y, z)``). A joint with position
  channels (the root) takes its local position from them (they replace the offset, as Blender's and
  PyMO's importers read BVH); the others use their offset. End sites become tip points.
* ``.anim`` clips: one joint per transform path (and every parent path up to the root), local
  positions from the ``m_LocalPosition`` curves (a curve with one key is a constant position). Joints
  without a position curve sit at their parent (their local position is unknown). A clip needs
  positions on most of its rotated joints to draw as a character; otherwise :func:`skeleton_from_clip`
  returns ``None`` and a reason the view shows.

Forward kinematics (:func:`pose`): world rotation ``W_j = W_parent * L_j`` and world position
``p_j = p_parent + W_parent (local position_j)``, quaternions ``(x, y, z, w)``, positions in the clip's
length unit, Unity's frame (Y up, Z forward, left-handed; the view mirrors Z for GL with
``display.unity_to_gl_points``). Local rotations are what Unity plays (``clip.played``). Vectorized
over times; a loop over joints (tens), never over frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .clip import Clip, played
from .curves import evaluate
from .rotations import quat_mul

__all__ = ["Skeleton", "Pose", "skeleton_from_clip", "pose", "quat_rotate"]

#: A clip draws as a character when at least this fraction of its rotated joints (other than the root)
#: have a local position (a curve, or an offset for BVH).
MIN_POSITIONED_FRACTION = 0.5


@dataclass(frozen=True, eq=False)
class Skeleton:
    """Joints in parent-before-child order.

    Attributes:
        paths: ``(J,)`` transform paths (``Hips/Spine``); the track of joint j (if any) has that path.
        parents: ``(J,)`` int, index of the parent joint, -1 for roots.
        offsets: ``(J, 3)`` constant local positions (Unity frame) used where ``position_tracks`` is None.
        position_tracks: ``(J,)`` for each joint the index of its position curve in
            ``clip.other_tracks`` or None.
        tips: ``(K, 2)`` rows ``(joint, index into tip_offsets)``: end sites, drawn as bones to a tip.
        tip_offsets: ``(K, 3)`` local positions of the tips (Unity frame).
        source: ``"bvh"`` or ``"anim"``.
    """

    paths: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    position_tracks: tuple[int | None, ...]
    tips: np.ndarray
    tip_offsets: np.ndarray
    source: str

    @property
    def n_joints(self) -> int:
        return len(self.paths)

    def index(self, path: str) -> int:
        return self.paths.index(path)

    def bones(self) -> np.ndarray:
        """``(B, 2)`` joint index pairs (parent, child) for every joint with a parent."""
        child = np.nonzero(self.parents >= 0)[0]
        return np.stack([self.parents[child], child], axis=1)


@dataclass(frozen=True, eq=False)
class Pose:
    """Joint positions ``(M, J, 3)``, world rotations ``(M, J, 4)`` and tip positions ``(M, K, 3)``."""

    positions: np.ndarray
    rotations: np.ndarray
    tips: np.ndarray


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``v (..., 3)`` rotated by unit quaternions ``q (..., 4)`` (x, y, z, w), broadcasting."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _bvh_skeleton(clip: Clip) -> Skeleton:
    h = clip.meta["hierarchy"]
    mirror = np.array([-1.0, 1.0, 1.0])  # BVH (right-handed) -> Unity (left-handed), as io.bvh
    pos_index = {
        (o.path, o.attribute): i for i, o in enumerate(clip.other_tracks) if o.kind == "position" and o.curve
    }
    paths = tuple(j["path"] for j in h)
    parents = np.array([-1 if j["parent"] is None else int(j["parent"]) for j in h], dtype=np.int64)
    offsets = np.array([j["offset"] for j in h], dtype=np.float64).reshape(-1, 3) * mirror
    position_tracks = tuple(pos_index.get((p, "m_LocalPosition")) for p in paths)
    tips = [(k, j["end_site"]) for k, j in enumerate(h) if j.get("end_site") is not None]
    tip_rows = np.array([[k, i] for i, (k, _) in enumerate(tips)], dtype=np.int64).reshape(-1, 2)
    tip_off = np.array([e for _, e in tips], dtype=np.float64).reshape(-1, 3) * mirror
    return Skeleton(paths, parents, offsets, position_tracks, tip_rows, tip_off, "bvh")


def _anim_skeleton(clip: Clip) -> tuple[Skeleton | None, str]:
    rotated = [t.path for t in clip.tracks if "humanoid" not in t.meta and t.path]
    pos_index = {
        o.path: i
        for i, o in enumerate(clip.other_tracks)
        if o.kind == "position"
        and o.attribute == "m_LocalPosition"
        and o.curve is not None
        and o.curve.n_keys
    }
    names = set(rotated) | set(pos_index)
    if not names:
        return None, "no transform rotation or position curves"
    every = set()
    for p in names:
        parts = p.split("/")
        every.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    paths = tuple(sorted(every, key=lambda p: (p.count("/"), p)))
    index = {p: i for i, p in enumerate(paths)}
    parents = np.array(
        [index.get(p.rpartition("/")[0], -1) if "/" in p else -1 for p in paths], dtype=np.int64
    )
    depth_one = [p for p in rotated if "/" in p]
    have = [p for p in depth_one if p in pos_index]
    if not depth_one or len(have) < MIN_POSITIONED_FRACTION * len(depth_one):
        n = len(depth_one)
        return None, (
            f"bones have no local positions ({len(have)} of {n} rotated child bones have an "
            "m_LocalPosition curve): only rotations can be shown"
        )
    position_tracks = tuple(pos_index.get(p) for p in paths)
    empty = np.zeros((0, 3))
    return (
        Skeleton(
            paths,
            parents,
            np.zeros((len(paths), 3)),
            position_tracks,
            np.zeros((0, 2), np.int64),
            empty,
            "anim",
        ),
        "",
    )


def skeleton_from_clip(clip: Clip) -> tuple[Skeleton | None, str]:
    """The clip's skeleton and ``""``, or ``None`` and why it cannot be drawn as a character."""
    if clip.meta.get("hierarchy"):
        return _bvh_skeleton(clip), ""
    if not clip.tracks and not clip.other_tracks:
        return None, "the clip is empty"
    return _anim_skeleton(clip)


def local_rotations(skeleton: Skeleton, clip: Clip, times, overrides: dict | None = None) -> np.ndarray:
    """``(M, J, 4)`` local rotations at ``times`` (seconds): what Unity plays for joints with a track
    (``overrides`` path -> RotationTrack replaces the clip's), identity for the others."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    out = np.zeros((t.shape[0], skeleton.n_joints, 4))
    out[..., 3] = 1.0
    tracks = {tr.path: tr for tr in clip.tracks}
    if overrides:
        tracks.update(overrides)
    for j, path in enumerate(skeleton.paths):
        tr = tracks.get(path)
        if tr is not None and tr.n_keys:
            out[:, j] = played(tr, t)
    return out


def local_positions(skeleton: Skeleton, clip: Clip, times) -> np.ndarray:
    """``(M, J, 3)`` local positions at ``times``: position curves where the joint has one, else the
    constant offset."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    out = np.broadcast_to(skeleton.offsets, (t.shape[0], skeleton.n_joints, 3)).copy()
    for j, k in enumerate(skeleton.position_tracks):
        if k is not None:
            out[:, j] = evaluate(clip.other_tracks[k].curve, t)[:, :3]
    return out


def pose(skeleton: Skeleton, clip: Clip, times, overrides: dict | None = None) -> Pose:
    """Forward kinematics at ``times (M,)`` seconds (module docstring). ``overrides``: path -> track to
    pose instead of the clip's (the recipe preview's or the original's tracks, for ghosts)."""
    local_q = local_rotations(skeleton, clip, times, overrides)
    local_p = local_positions(skeleton, clip, times)
    m, n = local_q.shape[:2]
    world_q = np.empty_like(local_q)
    world_p = np.empty_like(local_p)
    for j in range(n):  # parents come first
        p = skeleton.parents[j]
        if p < 0:
            world_q[:, j] = local_q[:, j]
            world_p[:, j] = local_p[:, j]
        else:
            world_q[:, j] = quat_mul(world_q[:, p], local_q[:, j])
            world_p[:, j] = world_p[:, p] + quat_rotate(world_q[:, p], local_p[:, j])
    tips = np.zeros((m, skeleton.tips.shape[0], 3))
    if skeleton.tips.shape[0]:
        j = skeleton.tips[:, 0]
        tips = world_p[:, j] + quat_rotate(world_q[:, j], skeleton.tip_offsets[skeleton.tips[:, 1]][None])
    return Pose(world_p, world_q, tips)
