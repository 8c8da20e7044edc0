"""The Euler filter: remove 360-degree wraps and equivalent-triple flips without changing any pose.

Every Euler key ``e_i`` (degrees, columns x, y, z) has two equivalent triples,
``c0 = e_i`` and ``c1 = equivalent_euler(e_i)`` (``rotations.md`` section 1), and each component may
move by any multiple of 360 without changing the rotation. :func:`unwrap_euler` picks, over the whole
track, the candidate sequence with the least total jump (sum over steps and components of
``|delta|``), not greedily key by key.

Why no dynamic-programming pass is needed: once a candidate is chosen at keys i-1 and i, the best
360k shift of key i relative to key i-1 makes each component's step ``wrap180(c_b[i] - c_a[i-1])``
whatever shifts came before, so this is a 2-state Viterbi with step matrices ``M_i[a, b]``. The map
``E = equivalent_euler`` is ``E(v) = P v + k`` with ``P`` mirroring the middle axis and
``k = 180`` per component, so it preserves the per-component wrapped distance and ``E(E(v)) = v``
modulo 360. Hence ``M_i[1, 1] = M_i[0, 0]`` (stay) and ``M_i[0, 1] = M_i[1, 0]`` (switch): the cost of a
step depends only on *whether* it switches, never on the state it starts from, and the whole-track
minimum is reached by switching exactly at the steps where switching is cheaper. The state of key i
is the parity of the switches before it (a cumulative sum: O(N), fully vectorized). The tests check the
result against a brute-force Viterbi over both candidates. The output is the cumulative sum of the
chosen wrapped steps, snapped so each key equals its chosen candidate plus an exact multiple of 360.

Deliberate spins survive: a step whose authored implied speed ``max_c |e_i - e_{i-1}| / dt``
(deg/s) is below ``spin_speed`` is kept exactly as authored (same candidate on both sides, authored
delta). A 0 -> 360 pair one second apart (360 deg/s) stays a spin; a 358-degree step between 1/30 s
frames (10740 deg/s) is unwrapped to -2 degrees.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clip import EULER, RotationTrack
from .curves import TangentMode, tangent_mode_sides
from .rotations import equivalent_euler, hemisphere_continuous, middle_axis, quat_to_euler
from .tangents import clamped_auto_slopes, recomputed_slopes

__all__ = [
    "DEFAULT_SPIN_SPEED",
    "unwrap_euler",
    "unwrap_track",
    "unwrap_tracks",
    "continuous_euler",
    "wrap180",
]

#: Default implied speed (deg/s) above which a step is treated as a wrap/flip, not authored motion.
DEFAULT_SPIN_SPEED = 1800.0


def wrap180(a: np.ndarray) -> np.ndarray:
    """Angles (degrees) mapped into [-180, 180) (up to one rounding step at the ends).

    ``a - 360 floor(a / 360 + 1/2)``: 9x faster than ``np.mod`` on 3M values, which dominated unwrap.
    """
    a = np.asarray(a, dtype=np.float64)
    return a - 360.0 * np.floor(a * (1.0 / 360.0) + 0.5)


def _choose(values: np.ndarray, times: np.ndarray, order: str, spin_speed: float, starts=None):
    """Optimal unwrap: ``(unwrapped (N, 3), switched (N,) bool, kept_step (N-1,) bool)``.

    ``starts``: sorted first-key indices of several tracks joined end to end (``starts[0] == 0``, each
    track at least 2 keys): each is unwrapped on its own, as if alone (the step between two tracks is
    neither kept nor unwrapped, and each track starts from its first key's values)."""
    if starts is not None:
        return _choose_joined(values, times, order, spin_speed, np.asarray(starts, dtype=np.int64))
    e = np.asarray(values, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    if e.ndim != 2 or e.shape[1] != 3 or e.shape[0] != t.shape[0]:
        raise ValueError(f"expected values (N, 3) and times (N,), got {e.shape} and {t.shape}")
    n = e.shape[0]
    if n < 2:
        return e.copy(), np.zeros(n, dtype=bool), np.zeros(max(n - 1, 0), dtype=bool)
    alt = equivalent_euler(e, order)

    authored = np.diff(e, axis=0)
    dt = np.diff(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        speed = np.max(np.abs(authored), axis=1) / np.where(dt > 0, dt, 0.0)
    kept = speed < spin_speed  # nan (0/0) and inf compare False: unwrapped

    free = np.nonzero(~kept)[0]  # steps that may be unwrapped: usually few
    state = np.zeros(n, dtype=bool)
    if free.size == 0:
        return e.copy(), state, kept
    # Step costs: stay on the same kind of triple or switch. Equal for both previous states.
    stay = np.abs(wrap180(authored[free])).sum(axis=1)
    switch = np.abs(wrap180(alt[free + 1] - e[free])).sum(axis=1)
    flips = np.zeros(n - 1, dtype=np.int64)
    flips[free] = switch < stay
    state[1:] = (np.cumsum(flips) & 1).astype(bool)

    target = np.where(state[:, None], alt, e)
    step = np.diff(target, axis=0)
    step[free] = wrap180(step[free])
    raw = np.empty_like(e)
    raw[0] = e[0]
    np.cumsum(step, axis=0, out=raw[1:])
    raw[1:] += e[0]
    # Snap: chosen candidate + an exact multiple of 360 (no drift from the long cumulative sum).
    out = target + 360.0 * np.round((raw - target) / 360.0)
    return out, state, kept


def unwrap_euler(values, times, order: str, spin_speed: float = DEFAULT_SPIN_SPEED) -> np.ndarray:
    """Continuous Euler keys ``(N, 3)`` (degrees, columns x, y, z) with the same pose at every key.

    ``values``: ``(N, 3)`` degrees; ``times``: ``(N,)`` seconds; ``order``: the track's rotation order;
    ``spin_speed``: deg/s, steps authored slower than this are kept as they are (deliberate spins).
    The first key keeps its values. The result minimizes the total variation over the whole track;
    it never exceeds the input's.
    """
    return _choose(values, times, order, spin_speed)[0]


def _fix_free_slopes(slopes, free, bound, repl):
    """Free slopes next to a fixed step that are faster than ``bound`` were computed across the wrap."""
    bad = free & (np.abs(slopes) > bound) & np.isfinite(slopes)
    return np.where(bad, repl, slopes)


def unwrap_track(track: RotationTrack, spin_speed: float = DEFAULT_SPIN_SPEED) -> RotationTrack:
    """The track with wraps and flips removed; what Unity shows at every key is unchanged.

    Euler tracks: :func:`unwrap_euler`. A key moved by 360 k keeps its slopes; a key switched to its
    equivalent triple gets the exact derivative of that triple (``(a', -b', c')``: the middle axis's
    slopes are negated). Auto/ClampedAuto/Linear/Constant sides of changed keys and their neighbours are
    then recomputed (:func:`tangents.recompute_tangents`), and Free slopes next to a fixed step that
    exceed ``spin_speed`` (computed by the exporter across the old wrap) are replaced with ClampedAuto
    slopes of the new values.
    Quaternion tracks: hemisphere continuity (each key on the same side as its predecessor); flipped
    keys have their values and slopes negated, which plays the same motion the short way.
    """
    curve = track.curve
    n = curve.n_keys
    if n < 2:
        return track
    if track.kind != EULER:
        q = np.asarray(curve.value)
        cont = hemisphere_continuous(q)
        flipped = np.any(cont != q, axis=1)
        if not np.any(flipped):
            return track
        sign = np.where(flipped, -1.0, 1.0)[:, None]
        new = curve.with_keys(
            value=q * sign, in_slope=curve.in_slope * sign, out_slope=curve.out_slope * sign
        )
        return replace(track, curve=new)

    values = np.asarray(curve.value)
    out, switched, _ = _choose(values, curve.time, track.order, spin_speed)
    return _with_values(track, out, switched, spin_speed)


def unwrap_tracks(tracks, spin_speed: float = DEFAULT_SPIN_SPEED) -> list[RotationTrack]:
    """:func:`unwrap_track` of each of ``tracks``, the Euler tracks of each order computed together
    (joined end to end, :func:`_choose` with ``starts``: one pass instead of one per track; the
    per-track call was half of ``clean --unwrap``'s engine time on a 165-joint clip). The same
    tracks as one call per track; a track the unwrap leaves as it is comes back as the same object."""
    tracks = list(tracks)
    out: list = list(tracks)
    groups: dict[str, list[int]] = {}
    for n, t in enumerate(tracks):
        if t.kind == EULER and t.curve.n_keys >= 2:
            groups.setdefault(t.order, []).append(n)
        else:
            out[n] = unwrap_track(t, spin_speed)
    for order, tracks_of_order in groups.items():
        for members in _batches(tracks_of_order, [tracks[n].curve.n_keys for n in tracks_of_order]):
            _unwrap_joined(tracks, members, order, spin_speed, out)
    return out


#: Most keys unwrapped in one joined pass: its dozen ``(N, 3)`` temporaries of a whole 10-minute
#: 120 fps take (31 tracks, 2.2M keys) were 330 MB at the ``clean`` command's peak; batches of this
#: many keys keep the one-pass speed of many short tracks and bound them to about 60 MB.
JOIN_MAX_KEYS = 1 << 19


def _batches(members: list[int], sizes: list[int]) -> list[list[int]]:
    """``members`` in runs of at most :data:`JOIN_MAX_KEYS` keys (``sizes``); a longer track alone."""
    out: list[list[int]] = []
    total = JOIN_MAX_KEYS
    for n, k in zip(members, sizes, strict=True):
        if total + k > JOIN_MAX_KEYS:
            out.append([])
            total = 0
        out[-1].append(n)
        total += k
    return out


def _unwrap_joined(tracks, members: list[int], order: str, spin_speed: float, out: list) -> None:
    """:func:`unwrap_track` of ``tracks[n]`` for ``n`` in ``members`` (Euler, one ``order``) as one
    joined pass, into ``out[n]``."""
    curves = [tracks[n].curve for n in members]
    sizes = np.array([c.n_keys for c in curves])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    values = np.concatenate([np.asarray(c.value) for c in curves])
    # Times joined in one increasing sequence is not needed: steps between tracks are excluded.
    times = np.concatenate([np.asarray(c.time) for c in curves])
    joined, switched, _ = _choose(values, times, order, spin_speed, starts=starts)
    moved = np.any(joined != values, axis=1)
    for n, a, b in zip(members, starts, starts + sizes, strict=True):
        if moved[a:b].any():
            out[n] = _with_values(tracks[n], joined[a:b], switched[a:b], spin_speed)


def _with_values(track: RotationTrack, out: np.ndarray, switched: np.ndarray, spin_speed: float):
    """``track`` keyed at the unwrapped values ``out (N, 3)`` (``switched``: keys moved to their
    equivalent triple), slopes made to follow (:func:`unwrap_track`); the track itself when no key
    moved."""
    curve = track.curve
    n = curve.n_keys
    values = np.asarray(curve.value)
    changed = np.any(out != values, axis=1)
    if not np.any(changed):
        return track
    mid = middle_axis(track.order)
    sign = np.ones((n, 3))
    sign[switched, mid] = -1.0
    ins = curve.in_slope * sign
    outs = curve.out_slope * sign

    # Steps whose delta differs from the authored one: the keys on both sides may hold slopes that
    # were computed across the old discontinuity.
    fixed_step = np.any(np.abs(np.diff(out, axis=0) - np.diff(values, axis=0)) > 1e-9, axis=1)
    near = np.zeros(n, dtype=bool)
    near[1:] |= fixed_step
    near[:-1] |= fixed_step
    left, right, _ = tangent_mode_sides(curve.tangent_mode)
    valid = np.asarray(curve.tangent_mode) >= 0
    free_l = (left == TangentMode.FREE) | ~valid | (left > TangentMode.CLAMPED_AUTO)
    free_r = (right == TangentMode.FREE) | ~valid | (right > TangentMode.CLAMPED_AUTO)
    idx = np.nonzero(near)[0]
    if idx.size:
        repl = clamped_auto_slopes(curve.time, out, at=idx)
        ins[idx] = _fix_free_slopes(ins[idx], free_l[idx], spin_speed, repl)
        outs[idx] = _fix_free_slopes(outs[idx], free_r[idx], spin_speed, repl)

    ins, outs = recomputed_slopes(curve.time, out, ins, outs, curve.tangent_mode, changed)
    return replace(track, curve=curve.with_keys(value=out, in_slope=ins, out_slope=outs))


def _choose_joined(values, times, order: str, spin_speed: float, starts: np.ndarray):
    """:func:`_choose` of each track of a joined sequence (see its ``starts``), in one pass: the same
    costs and choices; parities and cumulative sums restart at every track's first key."""
    e = np.asarray(values, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    n = e.shape[0]
    first = np.repeat(starts, np.diff(np.append(starts, n)))  # (N,) first key of each key's track
    inside = np.ones(max(n - 1, 0), dtype=bool)
    inside[starts[1:] - 1] = False  # the steps from one track to the next
    alt = equivalent_euler(e, order)
    authored = np.diff(e, axis=0)
    dt = np.diff(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        speed = np.max(np.abs(authored), axis=1) / np.where(dt > 0, dt, 0.0)
    kept = speed < spin_speed
    free = np.nonzero(~kept & inside)[0]
    flips = np.zeros(n - 1, dtype=np.int64)
    stay = np.abs(wrap180(authored[free])).sum(axis=1)
    switch = np.abs(wrap180(alt[free + 1] - e[free])).sum(axis=1)
    flips[free] = switch < stay
    count = np.concatenate([[0], np.cumsum(flips)])
    state = ((count - count[first]) & 1).astype(bool)
    target = np.where(state[:, None], alt, e)
    step = np.diff(target, axis=0)
    step[free] = wrap180(step[free])
    step[~inside] = 0.0
    total = np.concatenate([np.zeros((1, 3)), np.cumsum(step, axis=0)])
    raw = target[first] + (total - total[first])
    out = target + 360.0 * np.round((raw - target) / 360.0)
    return out, state, kept & inside


def continuous_euler(quats, order: str) -> np.ndarray:
    """Display-friendly continuous Euler angles ``(N, 3)`` (degrees, columns x, y, z) for ``quats (N, 4)``.

    Each quaternion is decomposed with ``order`` and the sequence is unwrapped over its whole length
    (every step may wrap or flip: there is no authored spin in a decomposition).
    """
    q = np.asarray(quats, dtype=np.float64)
    e = quat_to_euler(q, order)
    if e.ndim == 1:
        return e
    return _choose(e, np.arange(e.shape[0], dtype=np.float64), order, 0.0)[0]
