"""Retiming keys: move or scale selected keys in time, keeping what each track plays between its keys.

A key interval whose duration changes from ``dt`` to ``dt'`` plays the same values at the same
*fraction* of the interval when the slopes at its ends are scaled by ``dt / dt'``: Unity's Hermite
segment is ``h00 v0 + h10 dt m0 + h01 v1 + h11 dt m1`` in ``s = (t - t0) / dt``, so ``dt * m`` is what
shapes it; weights are fractions of the interval and stay. So the out-slope of key i scales with its
right interval and the in-slope with its left one (``m' = m dt / dt'``; infinite slopes stay
infinite: stepped stays stepped).

Tangent modes are never changed (as in Unity; :func:`retimed_slopes` is the one rule, shared by every
retime): a side in Auto, ClampedAuto, Linear or Constant mode is recomputed from its mode at the keys
of every interval the retime changed (its duration, or a new pair of neighbours), as Unity does after
moving a key; a Free side keeps its slope, except on an interval both of whose keys are moved (the
inside of a scaled block of selected keys), where it scales by ``dt / dt'`` so the block plays the
same shape; an unbroken (Free Smooth) key takes one factor on both sides, so its in and out slopes
stay equal. Keys away from the changed intervals keep their slopes bit for bit. An Auto-rule key
inside a uniformly scaled block keeps the block's shape too: the rules are homogeneous in time
(secants scale by ``dt / dt'``).

Moving keys over other keys (:func:`retime_over`, the dope sheet's drag) works as Unity's Animation
window does: a moved key that lands on an unselected key replaces it, and unselected keys inside the
span a moved run of keys now covers are overwritten too; moved keys may pass unselected ones. Intervals
inside a moved run keep their shape (Free keys exactly; Auto-rule keys at the run's ends are
recomputed from their new neighbours); the new intervals at a run's edges join what is there.

The time map of a retime is ``t' = pivot + scale (t - pivot) + offset`` (seconds), applied to the
selected keys and snapped to the frame grid (``round(t' * frame_rate) / frame_rate``) when a frame
rate is given. The result must keep every track's key times strictly increasing and >= 0: otherwise
``ValueError`` (the editor keeps the last valid state of a drag).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from .clip import Clip, RotationTrack
from .curves import tangent_mode_sides
from .tangents import interval_ends, recompute_tangents, recomputed_slopes, ruled_sides

__all__ = [
    "retime_track",
    "retime_clip",
    "retime_over",
    "map_times",
    "scale_key_values",
    "RetimeGroup",
    "group_selection",
    "retime_plan",
    "retimed_slopes",
]

#: A ratio of interval durations this close to 1 is 1 (an offset of a block of keys leaves the
#: durations inside it equal up to float rounding).
_SAME_RATIO = 1e-12


def map_times(
    times, offset: float = 0.0, scale: float = 1.0, pivot: float = 0.0, frame_rate=None
) -> np.ndarray:
    """``pivot + scale (times - pivot) + offset`` (seconds), snapped to frames of ``frame_rate`` Hz."""
    t = float(pivot) + float(scale) * (np.asarray(times, dtype=np.float64) - float(pivot)) + float(offset)
    if frame_rate:
        t = np.round(t * float(frame_rate)) / float(frame_rate)
    return t


def retime_track(track: RotationTrack, new_times, moved=None) -> RotationTrack:
    """``track`` with its key times replaced by ``new_times (N,)`` (seconds), modes kept and slopes
    from :func:`retimed_slopes` (module docstring). ``moved``: the keys the retime moves (key indices
    or a bool mask: the selection, a pivot key that stays in place included); None = the keys whose
    time changes. Raises ``ValueError`` when the times are not strictly increasing or start before
    0 s."""
    c = track.curve
    new_t = np.asarray(new_times, dtype=np.float64).reshape(-1)
    if new_t.shape[0] != c.n_keys:
        raise ValueError(f"{new_t.shape[0]} new times for {c.n_keys} keys")
    if c.n_keys == 0 or np.array_equal(new_t, c.time):
        return track
    if not np.all(np.isfinite(new_t)) or (new_t.shape[0] > 1 and not np.all(np.diff(new_t) > 0)):
        raise ValueError("keys would overlap: key times must stay strictly increasing")
    if new_t[0] < 0:
        raise ValueError("keys would move before 0 s")
    if c.n_keys == 1:
        return track.with_curve(c.with_keys(time=new_t))
    if moved is None:
        moved = new_t != c.time
    else:
        moved = np.asarray(moved)
        if moved.dtype != bool:
            moved = np.isin(np.arange(c.n_keys), moved)
    ins, outs = retimed_slopes(
        c.time, np.arange(c.n_keys), new_t, moved, c.value, c.in_slope, c.out_slope, c.tangent_mode
    )
    return track.with_curve(c.with_keys(time=new_t, in_slope=ins, out_slope=outs))


def retimed_slopes(
    old_times, order, new_times, moved, value, in_slope, out_slope, tangent_mode, inplace=False
):
    """New ``(in_slope, out_slope)`` of retimed keys, modes kept (module docstring).

    ``old_times (N,)``: the key times before (seconds); ``order (M,)``: the old indices of the keys
    kept, in their new order; ``new_times (M,)``: their new times, strictly increasing; ``moved (M,)``
    bool: the keys the retime moves (the selection, a pivot key that stays in place included).
    ``value``, slopes and ``tangent_mode`` are the kept keys' fields in the new order, ``(M, C)``, or
    ``(G, M, C)`` for ``G`` tracks sharing the key times (a stacked group: one pass for all).
    ``inplace``: the slope arrays are the caller's own (fresh gathers) and are updated in place.
    Returns arrays shaped like ``in_slope``.

    The work is on the keys next to a changed interval (an offset drag of a block: its two edges),
    so a drag step over 165 tracks does not pass over every key of every track.
    """
    new_t = np.asarray(new_times, dtype=np.float64)
    order = np.asarray(order, dtype=np.int64)
    moved = np.asarray(moved, dtype=bool)
    flat = np.asarray(in_slope).ndim == 2
    ins = np.array(in_slope, dtype=np.float64, copy=not inplace)
    outs = np.array(out_slope, dtype=np.float64, copy=not inplace)
    value, mode = np.asarray(value), np.asarray(tangent_mode)
    if flat:
        ins, outs, value, mode = ins[None], outs[None], value[None], mode[None]
    m = new_t.shape[0]
    if m >= 2:
        adjacent = np.diff(order) == 1
        old_dt = np.diff(np.asarray(old_times, dtype=np.float64))
        old_pair = np.zeros(m - 1)
        old_pair[adjacent] = old_dt[order[:-1][adjacent]]
        new_dt = np.diff(new_t)
        ratio = np.ones(m - 1)
        ratio[adjacent] = old_pair[adjacent] / new_dt[adjacent]
        same = adjacent & (np.abs(ratio - 1.0) <= _SAME_RATIO)
        # Free sides scale only on intervals inside a moved block (both keys moved, same neighbours).
        scaled = adjacent & moved[:-1] & moved[1:] & ~same
        if scaled.any():
            _scale_free_sides(ins, outs, mode, scaled, ratio, old_pair, new_dt)
        # Auto-rule sides: recomputed at the keys of every changed interval (duration or neighbours)
        at = interval_ends(~same)
        if at.any():
            _recompute_at(new_t, value, ins, outs, mode, at)
    if flat:
        ins, outs = ins[0], outs[0]
    return ins, outs


def _scale_free_sides(ins, outs, mode, scaled, ratio, old_pair, new_dt) -> None:
    """Scale, in place, the Free sides of the keys of ``scaled`` intervals by ``dt / dt'``
    (``ratio``); unbroken keys take one factor, their scaled sides' old over new span.
    Arrays ``(G, M, C)``; interval arrays ``(M-1,)``."""
    m = ins.shape[1]
    f_in = np.ones(m)
    f_out = np.ones(m)
    f_in[1:] = np.where(scaled, ratio, 1.0)
    f_out[:-1] = np.where(scaled, ratio, 1.0)
    old_span = np.zeros(m)
    new_span = np.zeros(m)
    for span, d in ((old_span, old_pair), (new_span, new_dt)):
        span[1:] += np.where(scaled, d, 0.0)
        span[:-1] += np.where(scaled, d, 0.0)
    rows = np.nonzero(new_span > 0)[0]
    f_key = old_span[rows] / new_span[rows]
    md = mode[:, rows]
    in_ruled, out_ruled = ruled_sides(md)
    broken = tangent_mode_sides(md)[2]
    fi = np.where(broken, f_in[rows][None, :, None], f_key[None, :, None])
    fo = np.where(broken, f_out[rows][None, :, None], f_key[None, :, None])
    for arr, f, ruled in ((ins, fi, in_ruled), (outs, fo, out_ruled)):
        sub = arr[:, rows]
        with np.errstate(invalid="ignore"):
            arr[:, rows] = np.where(~ruled & np.isfinite(sub), sub * f, sub)


def _recompute_at(new_t, value, ins, outs, mode, at) -> None:
    """The Auto-rule sides of keys ``at (M,)`` recomputed in place from their new neighbours, all
    tracks of the stack at once (the keys and their neighbours gathered as one ``(K, G*C)`` block)."""
    g, m, c = ins.shape
    idx = np.nonzero(at)[0]
    near = np.unique(np.concatenate([np.maximum(idx - 1, 0), idx, np.minimum(idx + 1, m - 1)]))
    pos = np.searchsorted(near, idx)
    sub_at = np.zeros(near.shape[0], dtype=bool)
    sub_at[pos] = True

    def block(a):
        return a[:, near].transpose(1, 0, 2).reshape(near.shape[0], g * c)

    r_in, r_out = recomputed_slopes(
        new_t[near], block(value), block(ins), block(outs), block(mode), at=sub_at
    )
    ins[:, idx] = r_in[pos].reshape(pos.shape[0], g, c).transpose(1, 0, 2)
    outs[:, idx] = r_out[pos].reshape(pos.shape[0], g, c).transpose(1, 0, 2)


def retime_clip(
    clip: Clip,
    keys: Mapping[str, object],
    offset: float = 0.0,
    scale: float = 1.0,
    pivot: float = 0.0,
    snap: bool = True,
) -> Clip:
    """``clip`` with the selected keys (``keys``: track path -> key indices) moved by ``offset`` seconds
    and scaled by ``scale`` about ``pivot`` seconds, snapped to the clip's frames when ``snap``; other
    keys stay. Tracks without selected keys are the same objects. ``ValueError`` naming the track when
    keys would overlap."""
    by_path = {t.path: t for t in clip.tracks}
    new_tracks = {}
    for path, idx in keys.items():
        tr = by_path[path]
        sel = np.zeros(tr.n_keys, dtype=bool)
        sel[np.asarray(sorted(idx), dtype=np.int64)] = True
        if not sel.any():
            continue
        t = np.array(tr.curve.time)
        t[sel] = map_times(t[sel], offset, scale, pivot, clip.frame_rate if snap else None)
        try:
            new_tracks[path] = retime_track(tr, t, moved=sel)
        except ValueError as e:
            raise ValueError(f"track {path!r}: {e}") from None
    if not new_tracks:
        return clip
    return clip.with_tracks(new_tracks.get(t.path, t) for t in clip.tracks)


def scale_key_values(
    track: RotationTrack, idx, channel: int, factor: float, pivot: float, snap: float | None = None
):
    """``track`` with display channel ``channel`` of keys ``idx`` scaled about ``pivot``:
    ``v' = pivot + factor (v - pivot)`` (degrees), rounded to multiples of ``snap`` when given.

    Euler tracks: the Euler column; the selected keys' slopes on that channel scale by ``factor`` too
    (the same vertical scaling of the curve), then Auto/ClampedAuto keys are recomputed as Unity does.
    Quaternion tracks: ``channel`` 0..2 is the continuous display Euler channel (converted back through
    the engine, each key on its old hemisphere, as ``edit.move_keys`` does).
    """
    from . import edit

    c = track.curve
    sel = np.zeros(c.n_keys, dtype=bool)
    sel[np.asarray(sorted(idx), dtype=np.int64)] = True
    if not sel.any() or (factor == 1.0 and not snap):
        return track
    value = np.array(c.value)
    if track.kind == "euler":
        v = pivot + factor * (value[sel, channel] - pivot)
        if snap:
            v = np.round(v / snap) * snap
        value[sel, channel] = v
        ins, outs = np.array(c.in_slope), np.array(c.out_slope)
        with np.errstate(invalid="ignore"):
            ins[sel, channel] = np.where(
                np.isfinite(ins[sel, channel]), ins[sel, channel] * factor, ins[sel, channel]
            )
            outs[sel, channel] = np.where(
                np.isfinite(outs[sel, channel]), outs[sel, channel] * factor, outs[sel, channel]
            )
        curve = c.with_keys(value=value, in_slope=ins, out_slope=outs)
    else:
        e = edit._key_euler(track)[sel]
        v = pivot + factor * (e[:, channel] - pivot)
        if snap:
            v = np.round(v / snap) * snap
        e[:, channel] = v
        curve = c.with_keys(value=edit._quat_keys_from_euler(value, sel, e, track.order))
    return track.with_curve(recompute_tangents(curve, edit._component_mask(track, sel, channel)))


@dataclass(frozen=True, eq=False)
class RetimeGroup:
    """Tracks that share their key times and their selected keys (a box selection over a mocap clip:
    usually every track), so one time plan (:func:`retime_plan`) and one gather per key field serve
    them all. Built by :func:`group_selection` for one clip; the arrays are that clip's.

    Attributes:
        tracks: the tracks, in clip order.
        times: ``(N,)`` their key times (seconds).
        sel: ``(N,)`` bool, the selected keys.
    """

    tracks: tuple[RotationTrack, ...]
    times: np.ndarray
    sel: np.ndarray
    _stacks: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(t.path for t in self.tracks)

    def stack(self, name: str) -> np.ndarray:
        """``(G, N, C)``: key field ``name`` of every track, stacked once (a drag retimes the same
        group on every step: stacking 165 BVH joints' fields cost ~20 ms per step)."""
        arr = self._stacks.get(name)
        if arr is None:
            arr = np.stack([getattr(t.curve, name) for t in self.tracks])
            arr.flags.writeable = False
            self._stacks[name] = arr
        return arr


def group_selection(clip: Clip, keys: Mapping[str, object]) -> tuple[RetimeGroup, ...]:
    """The selected tracks (``keys``: path -> key indices) grouped by equal key times, equal selected
    indices and equal curve width, in clip order; tracks without selected keys are left out."""
    groups: dict[tuple, list] = {}
    for tr in clip.tracks:
        idx = keys.get(tr.path)
        if not idx:
            continue
        sel = np.zeros(tr.n_keys, dtype=bool)
        sel[np.fromiter(idx, dtype=np.int64, count=len(idx))] = True
        t = np.asarray(tr.curve.time)
        k = (t.tobytes(), sel.tobytes(), tr.curve.value.shape[1])
        if k in groups:
            groups[k][0].append(tr)
        else:
            groups[k] = [[tr], t, sel]
    return tuple(RetimeGroup(tuple(ts), t, sel) for ts, t, sel in groups.values())


def retime_plan(
    group: RetimeGroup, offset: float = 0.0, scale: float = 1.0, pivot: float = 0.0, frame_rate=None
) -> tuple[np.ndarray, np.ndarray]:
    """Where the keys of ``group`` go when its selected keys are retimed by ``pivot + scale (t - pivot)
    + offset`` (snapped to ``frame_rate`` frames when given), moved keys overwriting the unselected
    keys they land on or cover (module docstring). Returns ``(order (M,), new_times (M,))``: the old
    indices of the keys kept, in their new time order, and their new times (seconds). Times only, so
    the dope sheet previews a drag with it; ``ValueError`` when keys would land on each other or
    move before 0 s.

    The work is on the moved runs' edges (searchsorted on the unselected times), not per key."""
    sel = group.sel
    t = np.array(group.times, dtype=np.float64)
    t[sel] = map_times(t[sel], offset, scale, pivot, frame_rate)
    eps = 0.25 / frame_rate if frame_rate else 1e-9
    keep = np.ones(t.shape[0], dtype=bool)
    idx = np.nonzero(sel)[0]
    run_starts = np.concatenate([[0], np.nonzero(np.diff(idx) > 1)[0] + 1])
    lo = np.minimum.reduceat(t[idx], run_starts) - eps
    hi = np.maximum.reduceat(t[idx], run_starts) + eps
    uns = np.nonzero(~sel)[0]
    tu = t[uns]  # unselected keys did not move: still sorted
    a = np.searchsorted(tu, lo, side="left")
    b = np.searchsorted(tu, hi, side="right")
    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        keep[uns[i:j]] = False
    order = np.nonzero(keep)[0]
    new_t = np.take(t, order)
    step = np.diff(new_t)
    if step.size and not np.all(step > 0):
        order = order[np.argsort(new_t, kind="stable")]
        new_t = np.take(t, order)
        if not np.all(np.diff(new_t) > 0):
            raise ValueError("moved keys would land on each other")
    if new_t.shape[0] and new_t[0] < 0:
        raise ValueError("keys would move before 0 s")
    return order, new_t


_GATHERED = ("value", "in_weight", "out_weight", "weighted_mode")


def _retime_group(group: RetimeGroup, order: np.ndarray, new_t: np.ndarray) -> dict:
    """The tracks of ``group`` with the keys ``order`` kept at ``new_t`` (:func:`retime_plan`), modes
    kept and slopes from :func:`retimed_slopes` (all tracks of the group in one pass). Returns
    ``{path: (track, moved indices)}``.

    The group's key fields are gathered as one ``(G, M, C)`` stack per field, so a drag over 165 BVH
    joints costs one gather per field, not one per track (per track: ~0.3 ms each at 2,752 keys)."""
    tracks = group.tracks

    def gather(name: str) -> np.ndarray:
        # np.take along the key axis: 4x faster than fancy indexing of (N, C) rows
        if len(tracks) == 1:
            return np.take(getattr(tracks[0].curve, name), order, axis=0)[None]
        return np.take(group.stack(name), order, axis=1)

    value, mode = gather("value"), gather("tangent_mode")
    ins, outs = retimed_slopes(
        group.times,
        order,
        new_t,
        group.sel[order],
        value,
        gather("in_slope"),
        gather("out_slope"),
        mode,
        inplace=True,
    )
    stacks = dict(in_slope=ins, out_slope=outs, tangent_mode=mode, value=value)
    stacks.update((f, gather(f)) for f in _GATHERED if f != "value")
    for arr in stacks.values():
        arr.flags.writeable = False  # fresh arrays handed over: Curve keeps them without a copy
    new_t.flags.writeable = False
    moved = set(np.nonzero(group.sel[order])[0].tolist())
    out = {}
    for g, tr in enumerate(tracks):
        # Times were checked by the plan and values/weights are gathered from a valid curve: no
        # re-validation through Curve.make (a third of a 10,000-key drag step).
        curve = replace(tr.curve, time=new_t, **{f: a[g] for f, a in stacks.items()})
        out[tr.path] = (tr.with_curve(curve), set(moved))
    return out


def retime_over(
    clip: Clip,
    keys: Mapping[str, object],
    offset: float = 0.0,
    scale: float = 1.0,
    pivot: float = 0.0,
    snap: bool = True,
    groups: tuple[RetimeGroup, ...] | None = None,
) -> tuple[Clip, dict[str, set[int]]]:
    """Like :func:`retime_clip`, but moved keys overwrite the unselected keys they land on or cover
    (module docstring). Returns the clip and the moved keys' new indices per track.

    ``groups``: :func:`group_selection` of ``(clip, keys)`` when the caller retimes the same selection
    many times (a drag); computed here otherwise. ``ValueError`` when they are another clip's."""
    if groups is None:
        groups = group_selection(clip, keys)
    by_path = {t.path: t for t in clip.tracks}
    if any(by_path.get(t.path) is not t for g in groups for t in g.tracks):
        raise ValueError("retime groups of another clip")
    rate = clip.frame_rate if snap else None
    new: dict = {}
    for group in groups:
        try:
            order, new_t = retime_plan(group, offset, scale, pivot, rate)
        except ValueError as e:
            raise ValueError(f"track {group.paths[0]!r}: {e}") from None
        new.update(_retime_group(group, order, new_t))
    if not new:
        return clip, {}
    tracks = (new[t.path][0] if t.path in new else t for t in clip.tracks)
    return clip.with_tracks(tracks), {p: k for p, (_tr, k) in new.items()}
