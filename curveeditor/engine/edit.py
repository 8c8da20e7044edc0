"""Key edits: pure functions on a rotation track's keys (track in, new track out).

They take one-channel float curves too (an ``OtherTrack`` of kind ``"float"``, ``Curve`` with C = 1:
humanoid muscles, blend shapes): channel 0 is the value in the curve's own units.

The editor turns each into one undoable command; nothing here knows about Qt. Times are seconds,
Euler values degrees (columns x, y, z), quaternion keys (x, y, z, w). Slopes come from
:mod:`~curveeditor.engine.tangents`; quaternion keys edited through Euler values are converted with
:mod:`~curveeditor.engine.rotations` and kept on their neighbour's hemisphere.
"""

from __future__ import annotations

import numpy as np

from .clip import RotationTrack
from .curves import KEY_FIELDS, Curve, TangentMode, evaluate, tangent_mode_bits, tangent_mode_sides
from .rotations import euler_to_quat
from .tangents import recompute_tangents, recomputed_slopes

__all__ = [
    "clamp_time_shift",
    "move_keys",
    "set_key",
    "set_slope",
    "set_weight",
    "delete_keys",
    "merge_keys",
    "insert_key",
    "copy_keys",
    "paste_keys",
    "set_tangent_preset",
    "set_side_mode",
    "describe_mode",
    "TANGENT_PRESETS",
    "SIDE_MODES",
]


_TIME_EPS = 1e-6


def _mask(n: int, idx) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    if len(idx):
        m[np.asarray(sorted(idx), dtype=np.int64)] = True
    return m


def clamp_time_shift(times: np.ndarray, sel: np.ndarray, dt: float, min_gap: float) -> float:
    """Largest shift toward ``dt`` (seconds) that keeps ``times`` strictly increasing with at least
    ``min_gap`` between a moved key and an unmoved neighbour, and no key before 0 s."""
    if not np.any(sel) or dt == 0.0:
        return 0.0 if not np.any(sel) else dt
    lo, hi = -np.inf, np.inf
    prev_unsel = np.zeros_like(sel)
    prev_unsel[1:] = sel[1:] & ~sel[:-1]
    next_unsel = np.zeros_like(sel)
    next_unsel[:-1] = sel[:-1] & ~sel[1:]
    if np.any(prev_unsel):
        i = np.nonzero(prev_unsel)[0]
        lo = max(lo, float(np.max(times[i - 1] - times[i])) + min_gap)
    if np.any(next_unsel):
        i = np.nonzero(next_unsel)[0]
        hi = min(hi, float(np.min(times[i + 1] - times[i])) - min_gap)
    lo = max(lo, -float(np.min(times[sel])))
    return float(min(max(dt, lo), hi)) if lo <= hi else 0.0


def move_keys(track: RotationTrack, idx, dt: float, channel: int | None, dv: float) -> RotationTrack:
    """Shift keys ``idx`` by ``dt`` seconds (already clamped) and, if ``channel`` is given, add ``dv``
    to that display channel.

    Euler tracks: ``channel`` 0..2 is the Euler column (degrees). Quaternion tracks: ``channel`` 0..2
    is a continuous Euler channel of the display (degrees, converted back through the engine, same
    hemisphere as the old key), 3..6 a raw quaternion component (x, y, z, w).
    Tangent modes are kept; the slopes of Auto/ClampedAuto/Linear/Constant sides are recomputed at
    the edited keys and their neighbours, only on the components whose values change (a time shift:
    all of them), as in Unity; every other slope is kept bit for bit.
    """
    c = track.curve
    sel = _mask(c.n_keys, idx)
    if not np.any(sel):
        return track
    time, value = c.time, c.value  # unchanged arrays are shared with the new curve
    if dt:
        time = np.array(c.time)
        time[sel] += dt
    if channel is not None and dv:
        value = _shift_values(track, sel, channel, dv, np.array(c.value))
    if not dt and (channel is None or not dv):
        return track
    # the slopes first, then one new curve (validated once: this is every key drag step)
    changed = sel if dt else _component_mask(track, sel, channel)
    ins, outs = recomputed_slopes(time, value, c.in_slope, c.out_slope, c.tangent_mode, changed)
    return track.with_curve(c.with_keys(time=time, value=value, in_slope=ins, out_slope=outs))


def _direct(track) -> bool:
    """Channels are the curve's own components: Euler tracks and float curves (not rotations)."""
    return track.kind == "euler" or not isinstance(track, RotationTrack)


def _component_mask(track: RotationTrack, sel: np.ndarray, channel: int) -> np.ndarray:
    """``(N, C)`` bool: the curve components whose values an edit of display ``channel`` of the keys
    ``sel`` changes (an Euler column or a float curve's value; every component of a quaternion key,
    its four numbers move together, except for a raw component 3..6). Other components keep their
    slopes bit for bit."""
    c = track.curve
    mask = np.zeros((c.n_keys, c.n_components), dtype=bool)
    if _direct(track):
        mask[sel, channel] = True
    elif channel >= 3:
        mask[sel, channel - 3] = True
    else:
        mask[sel] = True
    return mask


def _shift_values(track: RotationTrack, sel: np.ndarray, channel: int, dv: float, value: np.ndarray):
    if _direct(track):
        value[sel, channel] += dv
        return value
    if channel >= 3:
        value[sel, channel - 3] += dv
        return value
    e = _key_euler(track)[sel]
    e[:, channel] += dv
    return _quat_keys_from_euler(value, sel, e, track.order)


def _key_euler(track: RotationTrack) -> np.ndarray:
    from curveeditor.engine import display  # being written in parallel; imported on use

    return np.array(display.key_euler(track), dtype=np.float64)


def _quat_keys_from_euler(value: np.ndarray, sel: np.ndarray, euler: np.ndarray, order: str) -> np.ndarray:
    """Quaternion key values for display Euler triples (degrees, in ``order``: the track's order, the one
    ``display.key_euler`` decomposes in), on the old keys' hemisphere."""
    old = value[sel]
    q = euler_to_quat(euler, order)
    sign = np.where(np.sum(q * old, axis=1) < 0, -1.0, 1.0)[:, None]
    value[sel] = q * sign
    return value


def set_key(track: RotationTrack, i: int, *, time=None, channel=None, value=None) -> RotationTrack:
    """Set one key's time (seconds) and/or one channel's value (same channels as :func:`move_keys`).
    Raises ``ValueError`` when the new time is not strictly between the neighbouring keys."""
    c = track.curve
    t = np.array(c.time)
    v = np.array(c.value)
    if time is not None:
        time = float(time)
        if (i > 0 and time <= t[i - 1]) or (i < c.n_keys - 1 and time >= t[i + 1]):
            raise ValueError(f"time {time:g} s must lie between the neighbouring keys")
        t[i] = time
    if channel is not None and value is not None:
        sel = _mask(c.n_keys, [i])
        if _direct(track):
            v[i, channel] = float(value)
        elif channel >= 3:
            v[i, channel - 3] = float(value)
        else:
            e = _key_euler(track)[sel]
            e[0, channel] = float(value)
            v = _quat_keys_from_euler(v, sel, e, track.order)
    curve = c.with_keys(time=t, value=v)
    sel = _mask(c.n_keys, [i])
    if time is None and channel is not None and value is not None:
        changed = _component_mask(track, sel, channel)
    else:
        changed = sel
    return track.with_curve(recompute_tangents(curve, changed))


def set_slope(track: RotationTrack, i: int, component: int, side: str, slope: float) -> RotationTrack:
    """Set a key's in/out slope (value units per second) on one curve component, as dragging a
    tangent handle in Unity does: Auto/ClampedAuto keys become Free Smooth (both sides follow) unless
    the key is broken, in which case only that side changes and becomes Free."""
    c = track.curve
    ins, outs = np.array(c.in_slope), np.array(c.out_slope)
    tm = np.array(c.tangent_mode)
    left, right, broken = tangent_mode_sides(tm[i, component])
    if bool(broken):
        if side == "in":
            ins[i, component] = slope
            left = TangentMode.FREE
        else:
            outs[i, component] = slope
            right = TangentMode.FREE
        tm[i, component] = tangent_mode_bits(left, right, True)
    else:
        ins[i, component] = outs[i, component] = slope
        tm[i, component] = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
    return track.with_curve(c.with_keys(in_slope=ins, out_slope=outs, tangent_mode=tm))


def set_weight(track: RotationTrack, i: int, component: int, side: str, weight: float) -> RotationTrack:
    """Set a weighted side's handle length (fraction of the segment duration, 0..1)."""
    c = track.curve
    w = np.array(c.in_weight if side == "in" else c.out_weight)
    w[i, component] = float(np.clip(weight, 0.0, 1.0))
    return track.with_curve(c.with_keys(**{("in_weight" if side == "in" else "out_weight"): w}))


def delete_keys(track: RotationTrack, idx) -> RotationTrack:
    """Remove keys ``idx``; neighbours' automatic slopes are recomputed. At least one key stays
    (``ValueError`` otherwise: an empty rotation curve cannot be written)."""
    c = track.curve
    sel = _mask(c.n_keys, idx)
    if not np.any(sel):
        return track
    if np.all(sel):
        raise ValueError(f"{track.path}: a track keeps at least one key")
    keep = ~sel
    # The kept neighbours of removed keys have a new neighbour (or none): their automatic slopes
    # are recomputed, and only theirs (the other keys' neighbours are the same).
    touched = np.zeros_like(sel)
    touched[:-1] |= sel[1:]
    touched[1:] |= sel[:-1]
    curve = c.select(keep)
    return track.with_curve(recompute_tangents(curve, at=touched[keep]))


def merge_keys(track: RotationTrack, keys: Curve) -> tuple[RotationTrack, np.ndarray]:
    """Insert the keys of ``keys`` (same component count) into the track, replacing existing keys at
    the same times (within 1 µs). Returns the new track and the indices of the inserted keys."""
    c = track.curve
    if keys.n_components != c.n_components:
        raise ValueError(
            f"{track.path}: cannot paste {keys.n_components}-component keys into a "
            f"{c.n_components}-component curve"
        )
    if c.n_keys:
        d = np.abs(c.time[:, None] - keys.time[None, :])
        clash = np.any(d < _TIME_EPS, axis=1)
    else:
        clash = np.zeros(0, dtype=bool)
    base = c.select(~clash)
    cat = {f: np.concatenate([getattr(base, f), getattr(keys, f)]) for f in KEY_FIELDS}
    order = np.argsort(cat["time"], kind="stable")
    new = {f: a[order] for f, a in cat.items()}
    inserted = np.zeros(len(order), dtype=bool)
    inserted[np.nonzero(order >= base.n_keys)[0]] = True
    curve = c.with_keys(**new)
    return track.with_curve(recompute_tangents(curve, inserted)), np.nonzero(inserted)[0]


def insert_key(track: RotationTrack, t: float) -> tuple[RotationTrack, int]:
    """Add a ClampedAuto key at ``t`` seconds on the curve as it plays (the pose does not change
    at ``t``). An existing key at ``t`` is kept as is. Returns the track and the key's index."""
    c = track.curve
    if c.n_keys:
        j = int(np.argmin(np.abs(c.time - t)))
        if abs(c.time[j] - t) < _TIME_EPS:
            return track, j
    value = evaluate(c, np.array([t]))
    key = Curve.make(
        [t], value, tangent_mode=tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False)
    )
    new, idx = merge_keys(track, key)
    return new, int(idx[0])


def copy_keys(track: RotationTrack, idx) -> Curve | None:
    """The selected keys as a curve whose times start at 0 (clipboard content)."""
    sel = _mask(track.curve.n_keys, idx)
    if not np.any(sel):
        return None
    keys = track.curve.select(sel)
    return keys.with_keys(time=keys.time - keys.time[0])


def paste_keys(track: RotationTrack, keys: Curve, at: float) -> tuple[RotationTrack, np.ndarray]:
    """Paste clipboard ``keys`` with their first key at ``at`` seconds."""
    return merge_keys(track, keys.with_keys(time=keys.time + at))


#: Tangent-mode menu entries: name -> (left, right, broken) or a special action.
TANGENT_PRESETS = ("Clamped Auto", "Auto", "Free Smooth", "Flat", "Broken")
SIDE_MODES = ("Free", "Linear", "Constant", "Weighted")


def set_tangent_preset(track: RotationTrack, idx, preset: str) -> RotationTrack:
    """Apply one of :data:`TANGENT_PRESETS` to keys ``idx`` (all components), as Unity's key menu does."""
    c = track.curve
    sel = _mask(c.n_keys, idx)
    if not np.any(sel):
        return track
    tm = np.array(c.tangent_mode)
    wm = np.array(c.weighted_mode)
    ins, outs = np.array(c.in_slope), np.array(c.out_slope)
    if preset == "Clamped Auto":
        tm[sel] = tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False)
        wm[sel] = 0
    elif preset == "Auto":
        tm[sel] = tangent_mode_bits(TangentMode.AUTO, TangentMode.AUTO, False)
        wm[sel] = 0
    elif preset == "Free Smooth":
        tm[sel] = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
        a, b = ins[sel], outs[sel]
        # A stepped side has no direction to keep: use the finite side (or flat).
        smooth = np.where(np.isfinite(a) & np.isfinite(b), 0.5 * (a + b), np.where(np.isfinite(a), a, b))
        smooth = np.where(np.isfinite(smooth), smooth, 0.0)
        ins[sel] = outs[sel] = smooth
    elif preset == "Flat":
        tm[sel] = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
        ins[sel] = outs[sel] = 0.0
    elif preset == "Broken":
        left, right, _ = tangent_mode_sides(tm[sel])
        auto = (TangentMode.AUTO, TangentMode.CLAMPED_AUTO)
        left = np.where(np.isin(left, auto), TangentMode.FREE, left)
        right = np.where(np.isin(right, auto), TangentMode.FREE, right)
        tm[sel] = 1 | (left << 1) | (right << 5)
    else:
        raise ValueError(f"unknown tangent preset {preset!r}")
    curve = c.with_keys(in_slope=ins, out_slope=outs, tangent_mode=tm, weighted_mode=wm)
    # a mode change moves no key: the neighbours' slopes stay as they are
    return track.with_curve(recompute_tangents(curve, at=sel))


def set_side_mode(track: RotationTrack, idx, side: str, mode: str) -> RotationTrack:
    """Set ``side`` ("in", "out" or "both") of keys ``idx`` to Free, Linear or Constant (which breaks
    the key, as in Unity), or toggle Weighted on that side (bit 0 in, bit 1 out of ``weighted_mode``)."""
    c = track.curve
    sel = _mask(c.n_keys, idx)
    if not np.any(sel):
        return track
    sides = ("in", "out") if side == "both" else (side,)
    tm = np.array(c.tangent_mode)
    wm = np.array(c.weighted_mode)
    left, right, broken = tangent_mode_sides(tm)
    if mode == "Weighted":
        bits = sum(1 if s == "in" else 2 for s in sides)
        on = not np.all((wm[sel] & bits) == bits)
        wm[sel] = (wm[sel] | bits) if on else (wm[sel] & ~bits)
        # Unity cannot keep Auto modes on a weighted side: they become Free.
        auto = np.isin(left, (TangentMode.AUTO, TangentMode.CLAMPED_AUTO))
        if "in" in sides:
            left = np.where(sel[:, None] & auto, TangentMode.FREE, left)
        auto = np.isin(right, (TangentMode.AUTO, TangentMode.CLAMPED_AUTO))
        if "out" in sides:
            right = np.where(sel[:, None] & auto, TangentMode.FREE, right)
        tm = np.where(sel[:, None], (broken.astype(np.int64)) | (left << 1) | (right << 5), tm)
        return track.with_curve(c.with_keys(weighted_mode=wm, tangent_mode=tm))
    code = {"Free": TangentMode.FREE, "Linear": TangentMode.LINEAR, "Constant": TangentMode.CONSTANT}[mode]
    if "in" in sides:
        left = np.where(sel[:, None], code, left)
    if "out" in sides:
        right = np.where(sel[:, None], code, right)
    broken = np.where(sel[:, None], True, broken)
    # only the selected keys get new bits: another key's mode stays as read (a raw garbage value too)
    tm = np.where(sel[:, None], broken.astype(np.int64) | (left << 1) | (right << 5), tm)
    curve = c.with_keys(tangent_mode=tm)
    return track.with_curve(recompute_tangents(curve, at=sel))


def describe_mode(mode: int, weighted: int = 0) -> str:
    """Human-readable tangent mode of one key component (``"Clamped Auto"``, ``"Broken: Free | Linear"``)."""
    if mode < 0 or mode > 0x1FF:
        return f"Free (raw {mode})"
    left, right, broken = (int(x) for x in tangent_mode_sides(np.array(mode)))
    names = TangentMode.NAMES
    w_in = " (w)" if weighted & 1 else ""
    w_out = " (w)" if weighted & 2 else ""
    if not broken:
        if left == right == TangentMode.CLAMPED_AUTO:
            return "Clamped Auto"
        if left == right == TangentMode.AUTO:
            return "Auto"
        if left == right == TangentMode.FREE:
            return "Free Smooth" + (w_in or w_out)
    return f"Broken: {names.get(left, '?')}{w_in} | {names.get(right, '?')}{w_out}"
