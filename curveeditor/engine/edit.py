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
from .curves import KEY_FIELDS, Curve, TangentMode, evaluate, rows_any, tangent_mode_bits, tangent_mode_sides
from .rotations import euler_to_quat
from .tangents import recompute_tangents, recomputed_slopes

__all__ = [
    "clamp_time_shift",
    "move_keys",
    "set_key",
    "set_slope",
    "set_weight",
    "delete_keys",
    "delete_channel_keys",
    "merge_keys",
    "insert_key",
    "copy_keys",
    "paste_keys",
    "paste_channel_keys",
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


def move_keys(
    track: RotationTrack, idx, dt: float, channel: int | None, dv: float, value_mask=None
) -> RotationTrack:
    """Shift keys ``idx`` by ``dt`` seconds (already clamped) and, if ``channel`` is given, add ``dv``
    to that display channel.

    ``value_mask``: ``(N, 3)`` bool of the (key, display channel) cells that get ``dv`` (a per-curve
    selection), instead of ``channel`` for every key of ``idx``; time still moves the keys ``idx``
    (a key's X, Y and Z share its time).

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
    cells = None  # the (key, component) cells a masked value edit changes
    if value_mask is not None and dv:
        vm = np.asarray(value_mask, dtype=bool)
        rows = rows_any(vm)
        if np.any(rows):
            cells = vm[:, : c.n_components] if track.kind == "euler" else rows
            sel = sel | rows
            value = np.array(c.value)
            if track.kind == "euler":
                value[:, :3][vm] += dv
            else:
                e = _key_euler(track)[rows]
                e[vm[rows]] += dv
                value = _quat_keys_from_euler(value, rows, e, track.order)
    elif channel is not None and dv:
        value = _shift_values(track, sel, channel, dv, np.array(c.value))
    if not dt and cells is None and (channel is None or not dv):
        return track
    # the slopes first, then one new curve (validated once: this is every key drag step); a value
    # edit recomputes only the components it changed (and their neighbours), a time shift all
    if dt:
        changed = sel
    elif cells is not None:
        changed = cells
    else:
        changed = _component_mask(track, sel, channel)
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


def drag_tangent(
    track: RotationTrack, i: int, component: int, side: str, dt: float, value: float
) -> tuple[RotationTrack, float]:
    """Key ``i``'s ``side`` tangent handle on ``component`` dragged to ``dt`` seconds from the key
    (kept on its side: before the key for ``"in"``, after for ``"out"``) at ``value`` (the curve's
    units): the slope through that point (:func:`set_slope`), and on a weighted side the weight
    ``|dt|`` / the interval (:func:`set_weight`), as dragging a handle in Unity does. Returns the
    track and the slope (units per second)."""
    c = track.curve
    t, v = float(c.time[i]), float(c.value[i, component])
    dt = min(float(dt), -1e-6) if side == "in" else max(float(dt), 1e-6)
    slope = (float(value) - v) / dt
    new = set_slope(track, i, component, side, slope)
    j = i - 1 if side == "in" else i + 1
    if c.weighted_mode[i, component] & (1 if side == "in" else 2) and 0 <= j < c.n_keys:
        new = set_weight(new, i, component, side, abs(dt) / abs(float(c.time[j]) - t))
    return new, slope


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


_FD_S = 1e-5  # seconds: half step of the central difference giving a curve's slope


def _slopes_at(curve: Curve, t: np.ndarray) -> np.ndarray:
    """``(M, C)`` slopes (units per second) of ``curve`` as played at ``t``: a central difference of
    :func:`evaluate` (exact to ~1e-9 deg/s on Hermite segments; flat on stepped ones)."""
    d = (evaluate(curve, t + _FD_S) - evaluate(curve, t - _FD_S)) / (2 * _FD_S)
    return np.where(np.isfinite(d), d, 0.0)


def delete_channel_keys(track: RotationTrack, mask) -> RotationTrack:
    """Delete the (key, channel) cells of ``mask`` (``(N, 3)`` bool, display channels X, Y, Z).

    A key selected on every channel is removed. A key selected on some channels only stays (the
    track's X, Y and Z share one time per key, as Unity's rotation curves do) and, on each selected
    channel, takes the value and slope that channel's curve plays without its selected keys, with
    Free Smooth tangents: the channel plays as if those keys were deleted (exactly, on unweighted
    segments); its neighbours' automatic slopes are recomputed as :func:`delete_keys` does.
    Quaternion tracks' keys are whole rotations: any selected channel deletes the key.
    """
    c = track.curve
    m = np.asarray(mask, dtype=bool).reshape(c.n_keys, -1)[:, :3]
    rows = rows_any(m)
    if track.kind != "euler" or not np.any(rows):
        return delete_keys(track, np.nonzero(rows)[0])
    full = np.all(m, axis=1)
    if not np.any(rows & ~full):
        return delete_keys(track, np.nonzero(full)[0])
    keep = ~full
    if not np.any(keep):
        raise ValueError(f"{track.path}: a track keeps at least one key")
    kept = np.nonzero(keep)[0]
    new = {f: np.array(getattr(c, f)[keep]) for f in KEY_FIELDS}
    for ch in range(m.shape[1]):
        sel = m[:, ch]
        if not np.any(sel):
            continue
        rest = ~sel
        if not np.any(rest):
            raise ValueError(f"{track.path}: a channel keeps at least one key")
        touched = np.zeros_like(sel)
        touched[:-1] |= sel[1:]
        touched[1:] |= sel[:-1]
        without = recompute_tangents(c.select(rest), touched[rest])
        at = np.cumsum(rest) - 1  # row of each original key in ``without`` (for unselected keys)
        on = rest[keep]  # kept rows not selected on ch: the slopes ``without`` gives them
        src = at[kept[on]]
        new["in_slope"][on, ch] = without.in_slope[src, ch]
        new["out_slope"][on, ch] = without.out_slope[src, ch]
        through = sel[keep]  # kept rows selected on ch: points on ``without``
        t = c.time[kept[through]]
        new["value"][through, ch] = evaluate(without, t)[:, ch]
        slope = _slopes_at(without, t)[:, ch]
        new["in_slope"][through, ch] = slope
        new["out_slope"][through, ch] = slope
        new["tangent_mode"][through, ch] = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)
        new["weighted_mode"][through, ch] = 0
    return track.with_curve(c.with_keys(**new))


def _near(times: np.ndarray, others: np.ndarray, eps: float) -> np.ndarray:
    """Bool ``(len(times),)``: a time of ``others`` (sorted, seconds) lies within ``eps`` of each of
    ``times``. Through a binary search: the (N, K) difference table it replaces was 576 MB for 1,000
    keys pasted into a 10-minute take's 72,000."""
    times = np.asarray(times, dtype=np.float64)
    others = np.asarray(others, dtype=np.float64)
    if times.size == 0 or others.size == 0:
        return np.zeros(times.shape[0], dtype=bool)
    j = np.searchsorted(others, times)
    right = others[np.minimum(j, others.size - 1)]
    left = others[np.maximum(j - 1, 0)]
    return (np.abs(right - times) < eps) | (np.abs(times - left) < eps)


def merge_keys(track: RotationTrack, keys: Curve) -> tuple[RotationTrack, np.ndarray]:
    """Insert the keys of ``keys`` (same component count) into the track, replacing existing keys at
    the same times (within 1 µs). Returns the new track and the indices of the inserted keys."""
    c = track.curve
    if keys.n_components != c.n_components:
        raise ValueError(
            f"{track.path}: cannot paste {keys.n_components}-component keys into a "
            f"{c.n_components}-component curve"
        )
    clash = _near(c.time, keys.time, _TIME_EPS)
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


def paste_channel_keys(
    track: RotationTrack, keys: Curve, at: float, channels
) -> tuple[RotationTrack, np.ndarray]:
    """Paste clipboard ``keys`` (first key at ``at`` seconds) on the ``channels`` cells only
    (``(K, 3)`` bool per copied key: the display channels it was copied from; all True =
    :func:`paste_keys`).

    Each pasted time gets a key: an existing key there keeps its other channels; a new key takes,
    on the channels not pasted, the value and slope the curve plays there (Free Smooth: those
    channels keep their shape). The pasted channels take the copied value, slopes, weights and
    modes; their neighbours' automatic slopes are recomputed. Quaternion tracks paste whole keys.
    Returns the new track and the indices of the pasted keys."""
    ch = np.asarray(channels, dtype=bool).reshape(keys.n_keys, -1)
    if track.kind != "euler" or np.all(ch) or track.curve.n_components != keys.n_components:
        return paste_keys(track, keys, at)
    c = track.curve
    times = keys.time + at
    # the pasted times as keys on the curve as it plays (values and slopes of every channel)
    base = keys.with_keys(
        time=times,
        value=evaluate(c, times),
        in_slope=_slopes_at(c, times),
        out_slope=_slopes_at(c, times),
        tangent_mode=np.zeros_like(keys.tangent_mode),
        weighted_mode=np.zeros_like(keys.weighted_mode),
    )
    if c.n_keys:
        # times that already hold a key keep that key's channels
        j = np.clip(np.searchsorted(c.time, times), 0, c.n_keys - 1)
        j = np.where(
            (j > 0) & (np.abs(c.time[np.maximum(j - 1, 0)] - times) < np.abs(c.time[j] - times)), j - 1, j
        )
        hit = np.abs(c.time[j] - times) < _TIME_EPS
        if np.any(hit):
            fields = {f: np.array(getattr(base, f)) for f in KEY_FIELDS if f != "time"}
            for f in fields:
                fields[f][hit] = getattr(c, f)[j[hit]]
            base = base.with_keys(**fields)
    fields = {f: np.array(getattr(base, f)) for f in KEY_FIELDS if f != "time"}
    for f in fields:
        src = getattr(keys, f)
        fields[f][:, :3][ch] = src[:, :3][ch]
    pasted = base.with_keys(**fields)
    before = c
    new, idx = merge_keys(track, pasted)
    # merge_keys recomputed automatic slopes around the pasted keys on every channel; the channels
    # not pasted keep the slopes they had (their shape does not change)
    nc = new.curve
    ins, outs = np.array(nc.in_slope), np.array(nc.out_slope)
    pasted_rows = np.zeros(nc.n_keys, dtype=bool)
    pasted_rows[idx] = True
    old_rows = ~pasted_rows
    if before.n_keys and np.any(old_rows):
        # old keys not replaced: same order in both curves
        old_t = nc.time[old_rows]
        src = np.searchsorted(before.time, old_t)
        src = np.clip(src, 0, before.n_keys - 1)
        untouched = ~ch  # (K, 3): channels of each pasted key left as played
        keep_cols = ~np.any(ch, axis=0)  # channels no pasted key writes: exactly as before
        for k in range(3):
            if keep_cols[k]:
                ins[old_rows, k] = before.in_slope[src, k]
                outs[old_rows, k] = before.out_slope[src, k]
        for r, i in enumerate(idx):
            for k in range(3):
                if untouched[r, k]:
                    ins[i, k] = pasted.in_slope[r, k]
                    outs[i, k] = pasted.out_slope[r, k]
    new = new.with_curve(nc.with_keys(in_slope=ins, out_slope=outs))
    return new, idx


#: Tangent-mode menu entries: name -> (left, right, broken) or a special action.
TANGENT_PRESETS = ("Clamped Auto", "Auto", "Free Smooth", "Flat", "Broken")
SIDE_MODES = ("Free", "Linear", "Constant", "Weighted")


def _cells(c: Curve, idx, channels) -> tuple[np.ndarray, np.ndarray]:
    """``(rows (N,), cells)``: the keys ``idx`` and the (key, component) cells an edit touches:
    ``channels`` ``(N, C')`` bool (C' <= C: the first components) restricts it, None = all
    components of the keys."""
    sel = _mask(c.n_keys, idx)
    if channels is None:
        return sel, sel
    cells = np.zeros((c.n_keys, c.n_components), dtype=bool)
    m = np.asarray(channels, dtype=bool).reshape(c.n_keys, -1)
    cells[:, : m.shape[1]] = m[:, : c.n_components]
    cells &= sel[:, None]
    return rows_any(cells), cells


def set_tangent_preset(track: RotationTrack, idx, preset: str, channels=None) -> RotationTrack:
    """Apply one of :data:`TANGENT_PRESETS` to keys ``idx`` (all components, or the cells of the
    ``(N, C)`` bool ``channels``: a per-curve selection), as Unity's key menu does."""
    c = track.curve
    rows, sel = _cells(c, idx, channels)
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


def set_side_mode(track: RotationTrack, idx, side: str, mode: str, channels=None) -> RotationTrack:
    """Set ``side`` ("in", "out" or "both") of keys ``idx`` to Free, Linear or Constant (which breaks
    the key, as in Unity), or toggle Weighted on that side (bit 0 in, bit 1 out of ``weighted_mode``).
    ``channels``: the ``(N, C)`` bool cells to change (a per-curve selection), None = every component."""
    c = track.curve
    rows, sel = _cells(c, idx, channels)
    if not np.any(sel):
        return track
    cell = sel if sel.ndim == 2 else np.broadcast_to(sel[:, None], c.tangent_mode.shape)
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
            left = np.where(cell & auto, TangentMode.FREE, left)
        auto = np.isin(right, (TangentMode.AUTO, TangentMode.CLAMPED_AUTO))
        if "out" in sides:
            right = np.where(cell & auto, TangentMode.FREE, right)
        tm = np.where(cell, (broken.astype(np.int64)) | (left << 1) | (right << 5), tm)
        return track.with_curve(c.with_keys(weighted_mode=wm, tangent_mode=tm))
    code = {"Free": TangentMode.FREE, "Linear": TangentMode.LINEAR, "Constant": TangentMode.CONSTANT}[mode]
    if "in" in sides:
        left = np.where(cell, code, left)
    if "out" in sides:
        right = np.where(cell, code, right)
    broken = np.where(cell, True, broken)
    # only the selected cells get new bits: another key's mode stays as read (a raw garbage value too)
    tm = np.where(cell, broken.astype(np.int64) | (left << 1) | (right << 5), tm)
    curve = c.with_keys(tangent_mode=tm)
    return track.with_curve(recompute_tangents(curve, at=cell))


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
