"""The whole character: joints, their local positions and forward kinematics, in Unity's frame.

A :class:`Skeleton` is built from a clip (:func:`skeleton_from_clip`):

* BVH clips (``clip.meta["hierarchy"]``): one joint per BVH joint, rest offsets mirrored into Unity's
  left-handed frame like the motion (``io.bvh``: ``(x, y, z) -> (-x, y, z)``). A joint with position
  channels (the root) takes its local position from them (they replace the offset, as Blender's and
  PyMO's importers read BVH); the others use their offset. End sites become tip points.
* FBX and glTF clips (``clip.meta["joints"]``: ``paths``, ``parents``, ``offsets`` and ``rotations``,
  the rest local transforms already in Unity's frame): one joint per node; position curves replace the
  offset where a node has one, the rest rotation stands where a node has no rotation track.
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

from .clip import EULER, Clip, played
from .curves import KEY_FIELDS, Curve, evaluate
from .rotations import euler_to_quat, quat_mul_components, quat_normalize

__all__ = ["Skeleton", "Pose", "skeleton_from_clip", "pose", "pose_points", "bone_tip", "quat_rotate"]

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
        source: ``"bvh"``, ``"fbx"`` / ``"gltf"`` (``meta["joints"]``) or ``"anim"``.
        rest_rotations: ``(J, 4)`` local rotations of joints without a track (None: identity).
    """

    paths: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    position_tracks: tuple[int | None, ...]
    tips: np.ndarray
    tip_offsets: np.ndarray
    source: str
    rest_rotations: np.ndarray | None = None

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
    """Vectors ``v (..., 3)`` rotated by unit quaternions ``q (..., 4)`` (x, y, z, w), broadcasting.

    ``v + 2w (u x v) + 2 u x (u x v)`` written out per component: ``np.cross`` cost 0.4 ms per call
    in axis handling, most of a 31-joint pose."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return np.stack(
        _rotate_components((q[..., 0], q[..., 1], q[..., 2], q[..., 3]), (v[..., 0], v[..., 1], v[..., 2])),
        axis=-1,
    )


def _rotate_components(q, v) -> tuple:
    """:func:`quat_rotate` on components, ``q = (x, y, z, w)`` and ``v = (vx, vy, vz)`` as floats or
    equal-shape arrays; returns the rotated ``(vx, vy, vz)``. The one place the rotation is written."""
    x, y, z, w = q
    vx, vy, vz = v
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx))


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


def _joints_skeleton(clip: Clip) -> Skeleton:
    j = clip.meta["joints"]
    source = str(clip.meta.get("format") or "joints")
    paths = tuple(j["paths"])
    parents = np.array(j["parents"], dtype=np.int64).reshape(-1)
    offsets = np.array(j["offsets"], dtype=np.float64).reshape(-1, 3)
    rest = np.array(j.get("rotations") or [[0.0, 0.0, 0.0, 1.0]] * len(paths), dtype=np.float64).reshape(
        -1, 4
    )
    pos_index = {
        o.path: i
        for i, o in enumerate(clip.other_tracks)
        if o.kind == "position"
        and o.attribute == "m_LocalPosition"
        and o.curve is not None
        and o.curve.n_keys
    }
    position_tracks = tuple(pos_index.get(p) for p in paths)
    empty = np.zeros((0, 3))
    return Skeleton(paths, parents, offsets, position_tracks, np.zeros((0, 2), np.int64), empty, source, rest)


def skeleton_from_clip(clip: Clip) -> tuple[Skeleton | None, str]:
    """The clip's skeleton and ``""``, or ``None`` and why it cannot be drawn as a character."""
    if clip.meta.get("hierarchy"):
        return _bvh_skeleton(clip), ""
    joints = clip.meta.get("joints")
    if isinstance(joints, dict) and joints.get("paths"):
        if len(joints["paths"]) < 2:
            return None, "the file has a single node: no bones to draw"
        return _joints_skeleton(clip), ""
    if not clip.tracks and not clip.other_tracks:
        return None, "the clip is empty"
    return _anim_skeleton(clip)


def local_rotations(skeleton: Skeleton, clip: Clip, times, overrides: dict | None = None) -> np.ndarray:
    """``(M, J, 4)`` local rotations at ``times`` (seconds): what Unity plays for joints with a track
    (``overrides`` path -> RotationTrack replaces the clip's), the rest rotation (identity when the
    skeleton has none) for the others."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    out = np.zeros((t.shape[0], skeleton.n_joints, 4))
    out[..., 3] = 1.0
    if skeleton.rest_rotations is not None:
        out[:] = skeleton.rest_rotations[None]
    tracks = {tr.path: tr for tr in clip.tracks}
    if overrides:
        tracks.update(overrides)
    joints = [(j, tracks.get(p)) for j, p in enumerate(skeleton.paths)]
    joints = [(j, tr) for j, tr in joints if tr is not None and tr.n_keys]
    for idx, merged, kind, order in _pose_groups(tuple(tr for _, tr in joints), t):
        js = np.array([joints[i][0] for i in idx])
        if merged is None:  # a track of its own
            out[:, js[0]] = played(joints[idx[0]][1], t)
            continue
        c = 3 if kind == EULER else 4
        v = evaluate(merged, t).reshape(t.shape[0], len(idx), c)
        if kind == EULER:
            out[:, js] = euler_to_quat(v.reshape(-1, 3), order).reshape(t.shape[0], len(idx), 4)
        else:
            out[:, js] = quat_normalize(v.reshape(-1, 4)).reshape(t.shape[0], len(idx), 4)
    return out


_GROUP_CACHE: dict = {}

#: Keys x components of all the tracks from which the poses at a short span of times (one pose, a
#: block of playback frames) are evaluated on the keys of that span, merged side by side, instead of
#: on the whole tracks merged: merging a 10-minute take's 31 joints (72,000 keys, 93 components)
#: copied 160 MB and took 0.46 s of the editor's open, where the keys of a span are a few rows.
WINDOW_FROM = 2_000_000


def _pose_groups(tracks: tuple, t: np.ndarray) -> list:
    """:func:`_merged_groups` of ``tracks``; for times ``t`` spanning a small part of long tracks (a
    quarter of their keys at most), the same groups made of the keys of that span
    (:func:`_keys_around`), which play the same numbers there."""
    total = sum(tr.n_keys * tr.curve.n_components for tr in tracks)
    if t.size and total >= WINDOW_FROM:
        lo, hi = float(t.min()), float(t.max())
        near = [_keys_around(tr.curve, lo, hi) for tr in tracks]
        if all(c is not None for c in near) and 4 * sum(c.n_keys * c.n_components for c in near) < total:
            return _groups(tracks, near)
    return _merged_groups(tracks)


def _keys_around(curve: Curve, lo: float, hi: float) -> Curve | None:
    """The keys of ``curve`` its values at times in ``[lo, hi]`` (seconds) are made of, with one more
    on each side, as a curve (views, no copy) that evaluates to the same numbers there (a curve of
    one key: itself); None outside the key range, where the wrap modes (measured on the whole
    range) decide."""
    n = curve.n_keys
    if n < 2:
        return curve  # (a constant: itself)
    if not (curve.start <= lo and hi <= curve.end):
        return None
    a, b = np.searchsorted(curve.time, [lo, hi], side="right") - 1
    return curve.select(slice(max(int(a) - 1, 0), min(int(b) + 3, n)))


def _merged_groups(tracks: tuple) -> list:
    """Tracks with the same key times, kind, order and wrap modes merged into one many-component
    curve, so a pose is one ``evaluate`` per group instead of one per joint (a BVH's joints share
    their key times: 31 evaluations of a 2,752-key curve cost 15 ms, one of 93 components 0.6 ms).
    Returns ``[(indices into tracks, merged Curve | None, kind, order)]``; cached per track objects."""
    key = tuple(id(tr) for tr in tracks)
    hit = _GROUP_CACHE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], tracks, strict=True)):
        if hit[1] is not None:
            return hit[1]
    else:
        reused = _reuse_groups(tracks)
        if reused is not None:
            _remember(key, (tracks, reused))
            return reused
        # First pose of these tracks (e.g. one step of a drag): one evaluation per track. Merging
        # costs about 15 evaluations and pays off from the second pose on (playback, scrubbing).
        _remember(key, (tracks, None))
        return [([i], None, tr.kind, tr.order) for i, tr in enumerate(tracks)]
    out = _groups(tracks, [tr.curve for tr in tracks])
    _remember(key, (tracks, out))
    return out


def _groups(tracks: tuple, curves: list) -> list:
    """``[(indices into tracks, merged Curve | None, kind, order)]`` of ``curves`` (one per track: the
    track's own, or the keys of a span of it) merged by kind, order and key times."""
    tags = [(tr.kind, tr.order) for tr in tracks]
    return [
        (idx, merged if len(idx) > 1 else None, *tag) for tag, idx, merged in _merged_by_times(curves, tags)
    ]


def _merged_by_times(curves: list, tags: list) -> list[tuple[object, list[int], Curve]]:
    """``curves`` grouped by equal ``tag`` (e.g. kind and order), key times and wrap modes, each group
    as ``(tag, indices, curve)``: one many-component curve (channels side by side) for a group of
    several, the curve itself for one alone. Evaluating one merged curve is one evaluation."""
    groups: dict = {}
    for i, (c, tag) in enumerate(zip(curves, tags, strict=True)):
        gk = (tag, c.n_keys, c.start, c.end, c.pre_infinity, c.post_infinity)
        for cand in groups.setdefault(gk, []):
            if np.array_equal(curves[cand[0]].time, c.time):
                cand.append(i)
                break
        else:
            groups[gk].append([i])
    out = []
    for gk, lists in groups.items():
        for idx in lists:
            if len(idx) == 1:
                out.append((gk[0], idx, curves[idx[0]]))
                continue
            cs = [curves[i] for i in idx]
            cat = {f: _side_by_side([getattr(c, f) for c in cs]) for f in KEY_FIELDS if f != "time"}
            out.append((gk[0], idx, Curve.make(cs[0].time, pre_infinity=gk[4], post_infinity=gk[5], **cat)))
    return out


def _side_by_side(arrays: list[np.ndarray]) -> np.ndarray:
    """``(N, C)`` arrays side by side, ``(N, sum C)``; one value broadcast over every key (the default
    weights and modes of mocap curves, ``curves._per_key``) stays a broadcast: materialized, the four
    such arrays of a 10-minute take's merged skeleton curve were 210 MB (issue 26)."""
    first = arrays[0]
    if all(a.strides == (0, 0) and a.dtype == first.dtype for a in arrays):
        one = first[:1, :1]
        if all(np.array_equal(a[:1, :1], one) for a in arrays):
            return np.broadcast_to(one, (first.shape[0], sum(a.shape[1] for a in arrays)))
    out = np.concatenate(arrays, axis=1)
    out.flags.writeable = False  # fresh and read-only: Curve.make keeps it (a copy was 0.35 s of a
    return out  # 10-minute take's open)


def _remember(key: tuple, entry: tuple) -> None:
    """Cache ``entry``, dropping the oldest entries beyond 8 (the newest is what the next drag
    step reuses, so the cache is never emptied at once)."""
    _GROUP_CACHE.pop(key, None)
    while len(_GROUP_CACHE) >= 8:
        del _GROUP_CACHE[next(iter(_GROUP_CACHE))]
    _GROUP_CACHE[key] = entry


def _reuse_groups(tracks: tuple) -> list | None:
    """Groups for ``tracks`` from the newest merged entry of the same joints where at most half the
    tracks differ (a drag edits one track of 165 per step: re-merging or evaluating all 165 per
    step cost 40 ms). The old merged curves are kept, stale members included; the changed tracks
    follow as tracks of their own, so their values overwrite the stale ones in ``local_rotations``."""
    for old_tracks, groups in reversed(list(_GROUP_CACHE.values())):
        if groups is None or len(old_tracks) != len(tracks):
            continue
        changed = [i for i, (a, b) in enumerate(zip(old_tracks, tracks, strict=True)) if a is not b]
        if len(changed) * 2 > len(tracks):
            continue
        singles = {i for idx, merged, _k, _o in groups if merged is None for i in idx} | set(changed)
        out = [g for g in groups if g[1] is not None]
        out += [([i], None, tracks[i].kind, tracks[i].order) for i in sorted(singles)]
        return out
    return None


def local_positions(skeleton: Skeleton, clip: Clip, times) -> np.ndarray:
    """``(M, J, 3)`` local positions at ``times``: position curves where the joint has one, else the
    constant offset."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    out = np.broadcast_to(skeleton.offsets, (t.shape[0], skeleton.n_joints, 3)).copy()
    joints = [(j, k) for j, k in enumerate(skeleton.position_tracks) if k is not None]
    curves = tuple(clip.other_tracks[k].curve for _j, k in joints)
    for idx, curve in _position_groups(curves):
        v = evaluate(curve, t)
        col = 0
        for i in idx:
            out[:, joints[i][0]] = v[:, col : col + 3]
            col += curves[i].value.shape[1]
    return out


_POSITION_CACHE: dict = {}


def _position_groups(curves: tuple) -> list[tuple[list[int], Curve]]:
    """Position curves with the same key times and wrap modes merged into one many-component curve
    (cached per curve objects; position curves are not edited, so they are merged at once): a
    117-bone Biped ``.anim`` evaluated 117 position curves per pose, ~25 ms of every 3D-view update."""
    key = tuple(id(c) for c in curves)
    hit = _POSITION_CACHE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], curves, strict=True)):
        return hit[1]
    out = [(idx, merged) for _tag, idx, merged in _merged_by_times(list(curves), [None] * len(curves))]
    _POSITION_CACHE.clear()  # one clip's position curves at a time
    _POSITION_CACHE[key] = (curves, out)
    return out


def _levels(skeleton: Skeleton) -> list[np.ndarray]:
    """Joint indices grouped by depth (roots first)."""
    depth = np.zeros(skeleton.n_joints, dtype=np.int64)
    for j in range(skeleton.n_joints):  # parents come first: one pass (tens of joints, not frames)
        p = skeleton.parents[j]
        depth[j] = 0 if p < 0 else depth[p] + 1
    return [np.nonzero(depth == d)[0] for d in range(int(depth.max()) + 1 if depth.size else 0)]


def pose(skeleton: Skeleton, clip: Clip, times, overrides: dict | None = None) -> Pose:
    """Forward kinematics at ``times (M,)`` seconds (module docstring). ``overrides``: path -> track to
    pose instead of the clip's (the recipe preview's or the original's tracks, for ghosts)."""
    local_q = local_rotations(skeleton, clip, times, overrides)
    local_p = local_positions(skeleton, clip, times)
    m, n = local_q.shape[:2]
    if m == 1:
        world_q, world_p = _forward_one(skeleton.parents, local_q[0], local_p[0])
    else:
        world_q, world_p = _forward_levels(skeleton, local_q, local_p)
    tips = np.zeros((m, skeleton.tips.shape[0], 3))
    if skeleton.tips.shape[0]:
        j = skeleton.tips[:, 0]
        tips = world_p[:, j] + quat_rotate(world_q[:, j], skeleton.tip_offsets[skeleton.tips[:, 1]][None])
    return Pose(world_p, world_q, tips)


def pose_points(skeleton: Skeleton, clip: Clip, times, overrides: dict | None = None) -> np.ndarray:
    """Joint then tip positions ``(M, J + K, 3)`` at ``times (M,)`` seconds (Unity frame): :func:`pose`
    for drawing many frames at once (motion trails, onion skins, framing over a clip)."""
    p = pose(skeleton, clip, times, overrides)
    return np.concatenate([p.positions, p.tips], axis=1)


def bone_tip(skeleton: Skeleton, joint: int) -> int:
    """Index into :func:`pose_points`' points of the tip of the bone ``joint`` turns: its only child
    joint, else its only end site, else (no child, or a branching joint such as the hips) the joint
    itself."""
    children = np.nonzero(skeleton.parents == joint)[0]
    tips = np.nonzero(skeleton.tips[:, 0] == joint)[0] if skeleton.tips.size else np.zeros(0, np.int64)
    if len(children) == 1 and not len(tips):
        return int(children[0])
    if len(tips) == 1 and not len(children):
        return skeleton.n_joints + int(tips[0])
    return int(joint)


def _forward_one(
    parents: np.ndarray, local_q: np.ndarray, local_p: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World rotations ``(1, J, 4)`` and positions ``(1, J, 3)`` of one pose (a playback frame), joint
    by joint in Python floats: the per-level numpy loop spent ~1 ms of a 67-joint, 12-level pose in
    array overhead on arrays of a few elements. The same products and sums in the same order as
    :func:`_forward_levels` (IEEE doubles both): the same floats."""
    lq = local_q.tolist()
    lp = local_p.tolist()
    wq: list = [None] * len(lq)
    wp: list = [None] * len(lq)
    for j, p in enumerate(parents.tolist()):  # parents come before their children
        if p < 0:
            wq[j], wp[j] = lq[j], lp[j]
            continue
        pq, pp = wq[p], wp[p]
        wq[j] = quat_mul_components(pq, lq[j])
        r = _rotate_components(pq, lp[j])
        wp[j] = (pp[0] + r[0], pp[1] + r[1], pp[2] + r[2])
    return np.array(wq, dtype=np.float64).reshape(1, -1, 4), np.array(wp, dtype=np.float64).reshape(1, -1, 3)


def _forward_levels(
    skeleton: Skeleton, local_q: np.ndarray, local_p: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World rotations and positions of ``M`` poses, one depth level of joints at a time.

    Component-major ``(4, J, M)`` / ``(3, J, M)`` arrays: a level's parents are gathered as whole
    contiguous rows and the products run on component arrays (:func:`quat_mul_components`,
    :func:`_rotate_components`: the same products and sums as :func:`_forward_one`, the same
    floats). The ``(M, J, 4)`` layout gathered strided joints per time and stacked the components
    back per level: 599 frames of the 165-joint CMU BVH took 33 ms in this function, now ~8 ms."""
    lq = np.ascontiguousarray(np.moveaxis(local_q, -1, 0).transpose(0, 2, 1))  # (4, J, M)
    lp = np.ascontiguousarray(np.moveaxis(local_p, -1, 0).transpose(0, 2, 1))  # (3, J, M)
    wq = np.empty_like(lq)
    wp = np.empty_like(lp)
    for js in _levels(skeleton):  # all joints of one depth at once: parents are done before
        ps = skeleton.parents[js]
        if (ps < 0).all():
            wq[:, js] = lq[:, js]
            wp[:, js] = lp[:, js]
            continue
        pq = wq[:, ps]
        q_l = lq[:, js]
        p_l = lp[:, js]
        wq[:, js] = np.array(quat_mul_components(tuple(pq), tuple(q_l)))
        r = _rotate_components(tuple(pq), tuple(p_l))
        pp = wp[:, ps]
        wp[0, js] = pp[0] + r[0]
        wp[1, js] = pp[1] + r[1]
        wp[2, js] = pp[2] + r[2]
    return wq.transpose(2, 1, 0), wp.transpose(2, 1, 0)
