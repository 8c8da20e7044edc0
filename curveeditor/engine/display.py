"""Everything a view needs to draw rotations, so views hold no rotation math.

* :func:`sample_track`: continuous Euler curves (degrees), quaternions, angular speed and gimbal
  proximity of a track at display times.
* :func:`key_euler`: the Euler values to draw at the keys, consistent with :func:`sample_track`.
* :func:`unity_to_gl_quat`, :func:`unity_to_gl_points`: Unity's left-handed frame (Y up, Z forward)
  mirrored into right-handed OpenGL (``shared/domain/rotations.md`` section 1).
* :func:`rotation_matrices`, :func:`gimbal_rings`: geometry for the 3D gizmo (in Unity space; the view
  mirrors it with the two functions above).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .clip import EULER, RotationTrack, key_quaternions, played
from .curves import changed_span, evaluate, rows_any
from .rotations import (
    _extrinsic_axes,
    euler_to_quat,
    hemisphere_continuous,
    quat_dot,
    quat_normalize,
    quat_to_euler,
    quat_to_matrix,
)
from .speed import angular_speed

__all__ = [
    "GIMBAL_WARN_DEG",
    "TrackSamples",
    "GimbalRing",
    "sample_track",
    "resample_edited",
    "key_euler",
    "gimbal_proximity",
    "unity_to_gl_quat",
    "unity_to_gl_points",
    "gl_to_unity_axis",
    "rotation_matrices",
    "gimbal_rings",
]

#: Gimbal proximity is 0 when the middle angle is this many degrees or more from +-90.
GIMBAL_WARN_DEG = 20.0


@dataclass(frozen=True, eq=False)
class TrackSamples:
    """A track sampled for display.

    Attributes:
        times: ``(M,)`` seconds.
        euler: ``(M, 3)`` continuous degrees, columns (x, y, z), never wrapped into a range.
        quat: ``(M, 4)`` (x, y, z, w) hemisphere-continuous unit quaternions of what Unity plays.
        speed: ``(M,)`` angular speed in deg/s (each sample's step to the next; the last repeats).
        gimbal: ``(M,)`` gimbal-lock proximity, 1 at lock (middle angle +-90) falling linearly to 0 at
            :data:`GIMBAL_WARN_DEG` away.
    """

    times: np.ndarray
    euler: np.ndarray
    quat: np.ndarray
    speed: np.ndarray
    gimbal: np.ndarray


@dataclass(frozen=True, eq=False)
class GimbalRing:
    """One ring of the gimbal gizmo.

    Attributes:
        axis: the Euler axis the ring turns about (0 x, 1 y, 2 z).
        role: ``"outer"`` (last-applied axis, fixed in the parent), ``"middle"`` or ``"inner"``
            (first-applied axis, carried by both other rotations).
        points: ``(n + 1, 3)`` closed polyline (first point repeated) in Unity's parent space.
        normal: ``(3,)`` the ring's rotation axis in Unity's parent space.
        proximity: 0..1 lock proximity; the outer and inner rings become coplanar at lock, the middle
            ring never locks (0).
    """

    axis: int
    role: str
    points: np.ndarray
    normal: np.ndarray
    proximity: float


def gimbal_proximity(middle_deg) -> np.ndarray:
    """Lock proximity 0..1 from middle-axis angles (degrees, any winding): 1 at +-90 (mod 180), 0 at
    :data:`GIMBAL_WARN_DEG` or further."""
    x = np.mod(np.asarray(middle_deg, dtype=np.float64) - 90.0, 180.0)
    dist = np.minimum(x, 180.0 - x)
    return np.clip(1.0 - dist / GIMBAL_WARN_DEG, 0.0, 1.0)


# Quaternion tracks' key Euler values of the last few track objects (tracks are immutable, so the
# identity of the object is the key). A key drag step asked for the same unwrap three times: the
# edit (engine.edit, on the previous step's track), the graphs' key markers and sample_track (on the
# new one) -- 3 x ~0.5 ms of each step on the Malmaars clip (benchmarks/gui.py, cProfile).
_KEY_EULER_MEMO: OrderedDict[int, tuple[RotationTrack, np.ndarray]] = OrderedDict()
_KEY_EULER_MEMO_SIZE = 32
_KEY_EULER_LOCK = threading.Lock()


def key_euler(track: RotationTrack) -> np.ndarray:
    """Euler values ``(N, 3)`` (degrees, columns x, y, z) to draw at the keys (a new array each call).

    Euler tracks: the key values themselves. Quaternion tracks: a continuous decomposition in the
    track's order (``unwrap.continuous_euler`` of the hemisphere-continuous keys), computed once per
    track object (the last :data:`_KEY_EULER_MEMO_SIZE` are kept).
    """
    if track.kind == EULER:
        return np.array(track.curve.value, dtype=np.float64)
    if track.n_keys == 0:
        return np.zeros((0, 3))
    with _KEY_EULER_LOCK:
        hit = _KEY_EULER_MEMO.get(id(track))
        if hit is not None and hit[0] is track:
            _KEY_EULER_MEMO.move_to_end(id(track))
            return hit[1].copy()
    from .unwrap import continuous_euler

    keys = hemisphere_continuous(key_quaternions(track).reshape(-1, 4))
    out = np.asarray(continuous_euler(keys, track.order), dtype=np.float64).reshape(-1, 3)
    with _KEY_EULER_LOCK:
        _KEY_EULER_MEMO[id(track)] = (track, out.copy())
        while len(_KEY_EULER_MEMO) > _KEY_EULER_MEMO_SIZE:
            _KEY_EULER_MEMO.popitem(last=False)
    return out


def _first_key_quaternion(track: RotationTrack) -> np.ndarray:
    """``key_quaternions(track)[0]`` (x, y, z, w) converting only the first key: the 3D view and the
    readout sample one time per playback tick, where converting all 742 keys of a mocap track to use
    one made a call 0.30 ms instead of 0.24 ms (Gangnam BVH, shared 2-core machine)."""
    first = track.curve.value[:1]
    if track.kind == EULER:
        return euler_to_quat(first, track.order)[0]
    return quat_normalize(first)[0]


def sample_track(track: RotationTrack, times) -> TrackSamples:
    """``track`` as Unity plays it at ``times (M,)`` (seconds), for graphs and the gizmo.

    Euler tracks show their channels evaluated as Unity plays them (no wrapping). Quaternion tracks
    show the decomposition in the track's order that, sample by sample, is the equivalent triple
    nearest to the key Euler values (:func:`key_euler`) interpolated linearly, so the curve passes
    through the drawn keys and stays continuous between them.
    """
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    if track.n_keys == 0:
        raise ValueError(f"track {track.path!r} has no keys to sample")
    q = played(track, t)
    q = hemisphere_continuous(q)
    if len(q) and quat_dot(q[0], _first_key_quaternion(track)) < 0:
        q = -q
    if track.kind == EULER:
        euler = evaluate(track.curve, t)
    else:
        ke = key_euler(track)
        ref = np.stack([np.interp(t, track.curve.time, ke[:, c]) for c in range(3)], axis=1)
        from .resample import euler_following  # (here: 40 KB of code a headless inspect need not load)

        euler = euler_following(q, track.order, ref, smooth_lock=False)
    mid = _extrinsic_axes(track.order)[1]
    return TrackSamples(
        times=t,
        euler=euler,
        quat=q,
        speed=angular_speed(t, q),
        gimbal=gimbal_proximity(euler[:, mid]),
    )


def resample_edited(
    old_track: RotationTrack, old: TrackSamples, track: RotationTrack, times
) -> TrackSamples | None:
    """``sample_track(track, times)`` bit for bit, computed from ``old`` (the samples of
    ``old_track``, an earlier state of the same track) by re-sampling only around the keys that
    changed; ``None`` when that does not apply (then call :func:`sample_track`).

    For a key drag step: moving one key of a 742-key mocap track changes the samples of the two
    segments beside it (four with its neighbours' automatic slopes), a few dozen of ~6,000.
    ``times (M,)`` seconds must have ``old.times``' length and differ from them only where the keys
    changed (``dense_times`` of the same key count). Quaternion tracks also re-sample where their
    display Euler keys (:func:`key_euler`, a continuous decomposition of all keys) changed. The
    quaternions stay hemisphere-continuous: samples after the re-sampled ones keep or flip their
    sign as a whole, as :func:`sample_track` would have chosen. ``None`` when over 4/5 of the
    samples change (a short track: sampling it whole is then as fast).
    """
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    m = t.shape[0]
    if (
        track.kind != old_track.kind
        or track.order != old_track.order
        or track.n_keys < 2
        or m < 2
        or old.times.shape != t.shape
    ):
        return None
    span = changed_span(old_track.curve, track.curve)
    if span is None:
        return None
    ke = None
    if track.kind != EULER:  # the reference the samples' Euler follows: the keys' decomposition
        ke = key_euler(track)
        rows = np.flatnonzero(rows_any(key_euler(old_track) != ke))
        if rows.size:
            kt, kt_old, n = track.curve.time, old_track.curve.time, track.n_keys
            lo = -np.inf if rows[0] == 0 else float(min(kt[rows[0] - 1], kt_old[rows[0] - 1]))
            hi = np.inf if rows[-1] == n - 1 else float(max(kt[rows[-1] + 1], kt_old[rows[-1] + 1]))
            span = (min(span[0], lo), max(span[1], hi))
    moved = np.flatnonzero(t != old.times)
    if not moved.size:
        t = old.times  # the same object: views drawing the samples see unchanged x data at once
    a = int(np.searchsorted(t, span[0], side="left"))
    b = int(np.searchsorted(t, span[1], side="right"))
    if moved.size:  # samples whose times moved (a key moved in time) are re-sampled too
        a, b = min(a, int(moved[0])), max(b, int(moved[-1]) + 1)
    if b <= a:
        return TrackSamples(times=t, euler=old.euler, quat=old.quat, speed=old.speed, gimbal=old.gimbal)
    if 5 * (b - a) > 4 * m:
        return None
    # Re-sample [a, b) plus one unchanged sample on each side (the sign chain and the speeds
    # between the changed samples and their neighbours): what ``played`` gives there.
    a0, b1 = max(a - 1, 0), min(b + 1, m)
    inner = slice(a - a0, b - a0)
    values = evaluate(track.curve, t[a0:b1])
    raw = euler_to_quat(values, track.order) if ke is None else quat_normalize(values)
    # sample_track's signs: hemisphere_continuous flips at each negative neighbour dot, then the
    # whole array is negated if it starts on the other side of the first key.
    neg = quat_dot(raw[1:], raw[:-1]) < 0
    parity = np.concatenate([[0], np.cumsum(neg)]) % 2
    if a0 < a:  # the sign the kept sample before the window carries
        start = _same_or_negated(old.quat[a0], raw[0])
        if start is None:
            return None  # (the kept samples are not this track's: sample it whole)
    else:
        start = -1.0 if quat_dot(raw[0], _first_key_quaternion(track)) < 0 else 1.0
    sign = np.where(parity == 1, -start, start)
    q_win = raw * sign[:, None]
    quat = np.array(old.quat, copy=True)
    if b < b1:  # samples after the window keep their sign, or all flip
        tail = _same_or_negated(old.quat[b], q_win[-1])
        if tail is None:
            return None
        if tail < 0:
            quat[b:] *= -1.0
    quat[a:b] = q_win[inner]
    if ke is None:
        seg_euler = values[inner]
    else:
        from .resample import euler_following

        tw = t[a:b]
        ref = np.stack([np.interp(tw, track.curve.time, ke[:, c]) for c in range(3)], axis=1)
        seg_euler = euler_following(q_win[inner], track.order, ref, smooth_lock=False)
    euler = np.array(old.euler, copy=True)
    euler[a:b] = seg_euler
    speed = np.array(old.speed, copy=True)
    # pairs (j, j + 1) for j in [a0, b1 - 1): their geodesic steps, as angular_speed computes them
    speed[a0 : b1 - 1] = angular_speed(t[a0:b1], quat[a0:b1])[:-1]
    speed[-1] = speed[-2]
    gimbal = np.array(old.gimbal, copy=True)
    gimbal[a:b] = gimbal_proximity(seg_euler[:, _extrinsic_axes(track.order)[1]])
    return TrackSamples(times=t, euler=euler, quat=quat, speed=speed, gimbal=gimbal)


def _same_or_negated(kept: np.ndarray, q: np.ndarray) -> float | None:
    """1.0 when ``kept`` is exactly ``q``, -1.0 when exactly ``-q``, else ``None``."""
    if np.array_equal(kept, q):
        return 1.0
    return -1.0 if np.array_equal(kept, -q) else None


def unity_to_gl_quat(q) -> np.ndarray:
    """Unity rotations ``(N, 4)`` (x, y, z, w) as right-handed GL rotations: ``(-x, -y, z, w)``.

    Mirroring Z flips the handedness; a rotation's axis is a pseudovector, so it maps to
    ``-mirror(axis)`` with the same angle.
    """
    out = np.array(q, dtype=np.float64, copy=True)
    out[..., :2] *= -1.0
    return out


def unity_to_gl_points(p) -> np.ndarray:
    """Unity positions/directions ``(N, 3)`` as right-handed GL points: ``(x, y, -z)``."""
    out = np.array(p, dtype=np.float64, copy=True)
    out[..., 2] *= -1.0
    return out


def gl_to_unity_axis(axis) -> np.ndarray:
    """The Unity-frame axis ``(..., 3)`` of a rotation drawn in GL about ``axis (..., 3)``: a GL rotation of
    angle a about ``g`` is the Unity rotation of the same angle a about ``(-gx, -gy, gz)`` (the
    inverse of :func:`unity_to_gl_quat`'s axis map; a mirror turns a rotation's axis into minus its
    mirror image). Angles keep their sign."""
    out = np.array(axis, dtype=np.float64, copy=True)
    out[..., :2] *= -1.0
    return out


def rotation_matrices(q) -> np.ndarray:
    """Rotation matrices ``(N, 3, 3)`` of quaternions ``(N, 4)`` (x, y, z, w); ``(3, 3)`` for one ``(4,)``.

    Column j is the rotated basis vector j (``R @ v`` rotates column vectors).
    """
    return quat_to_matrix(q)


def _circle(axis: int, n: int, radius: float) -> np.ndarray:
    """``(n + 1, 3)`` closed circle of ``radius`` around basis ``axis``, counter-clockwise about it."""
    a = np.linspace(0.0, 2.0 * np.pi, n + 1)
    a[-1] = 0.0
    u, v = (axis + 1) % 3, (axis + 2) % 3
    pts = np.zeros((n + 1, 3))
    pts[:, u] = radius * np.cos(a)
    pts[:, v] = radius * np.sin(a)
    return pts


def gimbal_rings(
    q,
    order: str,
    n: int = 64,
    euler=None,
    radii: tuple[float, float, float] = (1.0, 0.9, 0.8),
) -> tuple[GimbalRing, GimbalRing, GimbalRing]:
    """The three rings of a gimbal gizmo (like Maya's gimbal manipulator) for one rotation.

    ``q`` is one quaternion ``(4,)`` (x, y, z, w); ``order`` the rotation order; ``euler`` optionally
    the ``(3,)`` Euler triple (degrees, columns x, y, z) actually keyed, since equivalent triples put
    the rings in different places (default: ``q`` decomposed in ``order``). With the extrinsic
    sequence ``R = R_last(c) R_mid(b) R_first(a)``: the outer ring turns about the last-applied axis
    and is fixed in the parent; the middle ring is carried by ``R_last(c)``; the inner ring (first
    applied axis) by ``R_last(c) R_mid(b)``. Returns ``(outer, middle, inner)`` in Unity's parent space,
    radii ``radii``, each a closed polyline of ``n`` segments.
    """
    if n < 3:
        raise ValueError(f"a ring needs at least 3 segments, got {n}")
    e = quat_to_euler(np.asarray(q, dtype=np.float64).reshape(4), order) if euler is None else euler
    e = np.asarray(e, dtype=np.float64).reshape(3)
    first, mid, last = _extrinsic_axes(order)
    outer_rot = np.eye(3)
    middle_rot = rotation_matrices(euler_to_quat(_single_axis(e, last), order))
    inner_rot = rotation_matrices(euler_to_quat(_drop_axis(e, first), order))
    prox = float(gimbal_proximity(e[mid]))
    rings = []
    for axis, role, rot, radius, p in (
        (last, "outer", outer_rot, radii[0], prox),
        (mid, "middle", middle_rot, radii[1], 0.0),
        (first, "inner", inner_rot, radii[2], prox),
    ):
        pts = _circle(axis, n, radius) @ rot.T
        rings.append(GimbalRing(axis=axis, role=role, points=pts, normal=rot[:, axis].copy(), proximity=p))
    return tuple(rings)


def _single_axis(e: np.ndarray, axis: int) -> np.ndarray:
    """The triple with only ``axis`` kept (the others 0)."""
    out = np.zeros(3)
    out[axis] = e[axis]
    return out


def _drop_axis(e: np.ndarray, axis: int) -> np.ndarray:
    """The triple with ``axis`` set to 0."""
    out = e.copy()
    out[axis] = 0.0
    return out
