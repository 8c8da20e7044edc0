"""A bound on where the bones end up (issue 23): joint-position error from per-joint rotation errors.

Forward kinematics (:mod:`.skeleton`): ``p_j = p_root + sum_i W_parent(i) o_i`` over the joints ``i`` on
the path from the root to ``j`` (``o_i`` its local position). Reduction changes local rotations only.
If joint ``m``'s local rotation is off by at most ``e_m`` (radians, geodesic), its world rotation is off
by at most the sum of ``e`` over ``m`` and its ancestors (``d(AB, A'B') <= d(A, A') + d(B, B')``), and a
vector ``o`` rotated by rotations ``d`` apart moves by ``2 sin(d/2) |o| <= d |o|``. Summing over the
path::

    |p_j - p'_j| <= sum over rotated ancestors m of j of  e_m * L(m -> j)

with ``L(m -> j)`` the length of the chain from ``m`` to ``j`` (the sum of the local position lengths
below ``m`` on the path; an upper bound on their distance whatever the pose). The same holds for the
tips (BVH end sites). That is the certified bound :func:`position_bound` reports.

:func:`joint_bounds` turns a position bound ``T`` into per-joint angle bounds that guarantee it:
``e_m = T / (D_m * Lmax_m)`` with ``Lmax_m`` the longest chain below ``m`` and ``D_m`` the number of
rotated joints (with a chain below them) on the deepest root-to-leaf path through ``m``: on every path
the terms ``e_m L(m -> j) <= T / D_m`` add up to at most ``T``. Joints with nothing below them (leaves
without tips) get no position constraint. Units: positions in the clip's length unit; the caller
converts millimetres (``length_unit_mm``).
"""

from __future__ import annotations

import numpy as np

from .clip import Clip
from .skeleton import Skeleton, local_positions, pose

__all__ = ["chain_lengths", "joint_bounds", "position_bound", "position_errors", "length_unit_mm"]


def length_unit_mm(clip: Clip, skeleton: Skeleton) -> float:
    """Millimetres per length unit of the clip: Unity ``.anim`` positions are metres (1000); BVH files
    carry no unit, centimetres by the common convention (Blender's and Mixamo's exports: 10)."""
    return 10.0 if skeleton.source == "bvh" else 1000.0


def _local_lengths(skeleton: Skeleton, clip: Clip) -> np.ndarray:
    """``(J,)`` largest length of each joint's local position over the clip (offsets, or position curves
    sampled at 1 kHz and at their keys, +1 %: curves may bulge between keys)."""
    lengths = np.linalg.norm(skeleton.offsets, axis=1)
    if any(k is not None for k in skeleton.position_tracks):
        keyed = [clip.other_tracks[k].curve for k in skeleton.position_tracks if k is not None]
        t0 = min(float(c.time[0]) for c in keyed)
        t1 = max(float(c.time[-1]) for c in keyed)
        times = np.union1d(
            np.concatenate([c.time for c in keyed]), np.linspace(t0, t1, int((t1 - t0) * 1000) + 2)
        )
        local = local_positions(skeleton, clip, times)
        moving = np.array([k is not None for k in skeleton.position_tracks])
        lengths = np.where(moving, 1.01 * np.linalg.norm(local, axis=2).max(axis=0), lengths)
    return lengths


def _ancestors(skeleton: Skeleton) -> np.ndarray:
    """``(J, J)`` bool: ``a[m, j]`` when ``m`` is a strict ancestor of ``j``."""
    n = skeleton.n_joints
    a = np.zeros((n, n), dtype=bool)
    for j in range(n):  # parents come first; tens of joints
        p = skeleton.parents[j]
        if p >= 0:
            a[:, j] = a[:, p]
            a[p, j] = True
    return a


def chain_lengths(skeleton: Skeleton, clip: Clip) -> tuple[np.ndarray, np.ndarray]:
    """``(L (J, P), moves (J, P) bool)`` over the points (the joints, then the tips): ``moves[m, p]``
    when joint ``m``'s rotation moves point ``p`` (a strict ancestor of a joint point; an ancestor or
    the joint itself of a tip), ``L[m, p]`` the chain length from ``m`` to ``p`` (0 elsewhere)."""
    n = skeleton.n_joints
    loc = _local_lengths(skeleton, clip)
    anc = _ancestors(skeleton)
    k = skeleton.tips.shape[0]
    lengths = np.zeros((n, n + k))
    for j in range(n):
        p = skeleton.parents[j]
        if p >= 0:
            col = lengths[:, p].copy()
            col[anc[:, p]] += loc[j]
            col[p] = loc[j]
            lengths[:, j] = col
    moves = np.zeros((n, n + k), dtype=bool)
    moves[:, :n] = anc
    for i, (j, t) in enumerate(skeleton.tips):
        tip = float(np.linalg.norm(skeleton.tip_offsets[t]))
        col = lengths[:, j].copy()
        col[anc[:, j]] += tip
        col[j] = tip
        lengths[:, n + i] = col
        moves[:, n + i] = anc[:, j]
        moves[j, n + i] = True
    return lengths, moves


def joint_bounds(
    skeleton: Skeleton, clip: Clip, tip_error: float, rotated: set[str] | None = None
) -> dict[str, float]:
    """Path -> angle bound (degrees) per rotated joint that keeps every joint and tip within
    ``tip_error`` (the clip's length unit) of its source position (module docstring). Joints with no
    chain below them are absent (no position constraint). ``rotated``: the paths whose rotations may
    change (default: every joint with a track in ``clip``)."""
    if rotated is None:
        rotated = {t.path for t in clip.tracks}
    lengths, moves = chain_lengths(skeleton, clip)
    longest = lengths.max(axis=1) if lengths.size else np.zeros(skeleton.n_joints)
    live = np.array([p in rotated for p in skeleton.paths], dtype=bool) & (longest > 0)
    count = (moves & live[:, None]).sum(axis=0)  # (P,) rotated joints that move each point
    out = {}
    for m in np.nonzero(live)[0]:
        d = int(count[moves[m]].max())  # the deepest path through m
        out[skeleton.paths[m]] = float(np.degrees(tip_error / (d * longest[m])))
    return out


def position_bound(skeleton: Skeleton, clip: Clip, angle_errors: dict[str, float]) -> float:
    """The certified largest position error (the clip's length unit) of any joint or tip, given each
    rotated joint's largest angle error (path -> degrees; absent = unchanged)."""
    lengths, _ = chain_lengths(skeleton, clip)
    e = np.array([np.radians(angle_errors.get(p, 0.0)) for p in skeleton.paths])
    return float((e[:, None] * lengths).sum(axis=0).max()) if lengths.size else 0.0


def position_errors(skeleton: Skeleton, source: Clip, reduced: Clip, times) -> tuple[float, str]:
    """The largest distance (the clip's length unit) between a joint's or tip's world position in
    ``source`` and in ``reduced`` at ``times``, and the joint (or ``"tip of J"``) where it occurs."""
    a = pose(skeleton, source, times)
    b = pose(skeleton, reduced, times)
    d = np.linalg.norm(a.positions - b.positions, axis=2).max(axis=0)
    dt = np.linalg.norm(a.tips - b.tips, axis=2).max(axis=0) if a.tips.size else np.zeros(0)
    if dt.size and dt.max() > d.max():
        k = int(np.argmax(dt))
        return float(dt[k]), "tip of " + (skeleton.paths[int(skeleton.tips[k, 0])] or "(root)")
    j = int(np.argmax(d))
    return float(d[j]), skeleton.paths[j] or "(root)"
