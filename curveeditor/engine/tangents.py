"""Key slopes as Unity's curve editor computes them, vectorized over keys and components.

Units: times in seconds, values in the curve's unit (degrees for Euler curves), slopes in value units
per second. Arrays: ``time (N,)``, ``value (N, C)`` (``(N,)`` is accepted as C = 1).

Unity's rules (``AnimationUtility.UpdateTangentsFromMode``, public decompiled editor code):

* **Linear** side: the secant to the neighbour on that side (the first key's in side and the last
  key's out side have no neighbour and keep their slope).
* **Auto** (legacy "smooth", ``AnimationCurve.SmoothTangents(i, 0)``): both sides get the mean of the
  two neighbouring secants, ``0.5 * (m_left + m_right)``; an end key gets its only secant.
* **ClampedAuto** (the Animation window's default since 5.5): the native ``CalculateAutoTangent`` is
  not public. We reproduce its documented behaviour: the Auto slope, set to 0 where the key is a
  local extremum (neighbour secants of opposite sign or one of them 0) and limited to
  ``3 * min(|m_left|, |m_right|)`` so the Hermite segments never overshoot the neighbouring values
  (the Fritsch-Carlson monotonicity bound); end keys are flat (what a two-key ClampedAuto curve shows
  in Unity: an ease-in/ease-out).
* **Constant**: ``+inf`` slopes (a stepped segment); Unity writes ``tangentMode`` 103 (broken,
  Constant/Constant).
* **Free**: slopes are the user's and are never recomputed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .curves import KEY_FIELDS, Curve, TangentMode, rows_any, tangent_mode_bits, tangent_mode_sides

__all__ = [
    "MODES",
    "MODE_BITS",
    "auto_slopes",
    "clamped_auto_slopes",
    "linear_slopes",
    "recompute_tangents",
    "recomputed_slopes",
    "interval_ends",
    "ruled_sides",
    "make_curve",
    "make_curves",
]

#: ``make_curve`` mode names.
MODES = ("clamped_auto", "auto", "linear", "flat", "constant")

#: The ``tangentMode`` integer Unity writes for keys set with each ``make_curve`` mode.
#: Flat: Unity's "Flat" menu leaves the key Free (not broken) with zero slopes.
MODE_BITS = {
    "clamped_auto": tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False),  # 136
    "auto": tangent_mode_bits(TangentMode.AUTO, TangentMode.AUTO, False),  # 34
    "linear": tangent_mode_bits(TangentMode.LINEAR, TangentMode.LINEAR, True),  # 69
    "flat": tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False),  # 0
    "constant": tangent_mode_bits(TangentMode.CONSTANT, TangentMode.CONSTANT, True),  # 103
}


def _as_2d(time, value) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(time, dtype=np.float64).reshape(-1)
    v = np.asarray(value, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2 or v.shape[0] != t.shape[0]:
        raise ValueError(f"value shape {v.shape} does not match {t.shape[0]} key times")
    return t, v


class _Local:
    """Neighbour secants of the keys ``idx`` (``(K,)`` ints) of ``t (N,)``, ``v (N, C)``.

    Every slope rule is a function of the left secant ``sl`` and right secant ``sr`` (0 where missing
    or where dt is 0); computing them only at the keys that need them keeps edits O(changed keys).
    """

    def __init__(self, t: np.ndarray, v: np.ndarray, idx: np.ndarray):
        n = t.shape[0]
        self.has_l = (idx > 0)[:, None]
        self.has_r = (idx < n - 1)[:, None]
        il = np.maximum(idx - 1, 0)
        ir = np.minimum(idx + 1, n - 1)
        dl = (t[idx] - t[il])[:, None]
        dr = (t[ir] - t[idx])[:, None]
        vi = v[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            self.sl = np.where(dl > 0, (vi - v[il]) / np.where(dl > 0, dl, 1.0), 0.0)
            self.sr = np.where(dr > 0, (v[ir] - vi) / np.where(dr > 0, dr, 1.0), 0.0)
        self.inner = self.has_l & self.has_r

    def auto(self) -> np.ndarray:
        one = np.where(self.has_l, self.sl, self.sr)  # end keys: their only secant
        return np.where(self.inner, 0.5 * (self.sl + self.sr), one)

    def clamped(self) -> np.ndarray:
        sl, sr = self.sl, self.sr
        bound = 3.0 * np.minimum(np.abs(sl), np.abs(sr))
        m = np.clip(0.5 * (sl + sr), -bound, bound)
        return np.where(self.inner & (sl * sr > 0), m, 0.0)

    def linear(self) -> tuple[np.ndarray, np.ndarray]:
        return np.where(self.has_l, self.sl, self.sr), np.where(self.has_r, self.sr, self.sl)


def _all(t: np.ndarray) -> np.ndarray:
    return np.arange(t.shape[0])


def auto_slopes(time, value) -> np.ndarray:
    """Unity Auto (legacy smooth) slopes ``(N, C)``: mean of the two neighbouring secants."""
    t, v = _as_2d(time, value)
    return _Local(t, v, _all(t)).auto()


def clamped_auto_slopes(time, value, at=None) -> np.ndarray:
    """Unity ClampedAuto slopes ``(N, C)``: smooth, flat at extrema and ends, never overshooting.

    ``at``: optional key indices ``(K,)``; then only those keys' slopes ``(K, C)`` are computed.
    """
    t, v = _as_2d(time, value)
    return _Local(t, v, _all(t) if at is None else np.asarray(at, dtype=np.int64)).clamped()


def linear_slopes(time, value) -> tuple[np.ndarray, np.ndarray]:
    """Linear ``(in_slope, out_slope)``, each ``(N, C)``: secants to the left / right neighbour.

    The first key's in slope and the last key's out slope (no neighbour) copy the only secant.
    """
    t, v = _as_2d(time, value)
    return _Local(t, v, _all(t)).linear()


def _dilate(mask: np.ndarray) -> np.ndarray:
    """``mask`` (keys on axis 0) or'ed with its neighbours' entries."""
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    return out


def _scope(n: int, c: int, changed, at) -> np.ndarray | None:
    """``(N, C)`` bool: the key components whose slopes to recompute, ``changed`` ones and their
    neighbours and ``at`` ones; each mask ``(N,)`` (every component of a key) or ``(N, C)``.
    None = all."""
    if changed is None and at is None:
        return None
    scope = np.zeros((n, c), dtype=bool)
    for name, mask in (("changed", changed), ("at", at)):
        if mask is None:
            continue
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim == 1:
            mask = mask[:, None]
        if mask.ndim != 2 or mask.shape[0] != n or mask.shape[1] not in (1, c):
            raise ValueError(f"{name} mask has {mask.shape[0]} entries for {n} keys")
        if name == "changed":
            mask = _dilate(mask)
        scope |= mask
    return scope


def interval_ends(intervals) -> np.ndarray:
    """``(N,)`` bool: the keys at either end of the ``intervals (N-1,)`` marked True."""
    iv = np.asarray(intervals, dtype=bool).reshape(-1)
    keys = np.zeros(iv.shape[0] + 1, dtype=bool)
    keys[:-1] |= iv
    keys[1:] |= iv
    return keys


def ruled_sides(tangent_mode) -> tuple[np.ndarray, np.ndarray]:
    """``(in_ruled, out_ruled)`` bool arrays shaped like ``tangent_mode``: the sides whose slopes
    follow from their mode (Auto, ClampedAuto, Linear, Constant) and are recomputed after an edit.
    The other sides (Free, and garbage/unknown modes read as Free) hold the user's slopes."""
    m = np.asarray(tangent_mode, dtype=np.int64)
    left, right, _broken = tangent_mode_sides(m)
    ruled = (TangentMode.AUTO, TangentMode.CLAMPED_AUTO, TangentMode.LINEAR, TangentMode.CONSTANT)
    valid = m >= 0
    return valid & np.isin(left, ruled), valid & np.isin(right, ruled)


def recompute_tangents(curve: Curve, changed=None, at=None) -> Curve:
    """Recompute the slopes the keys' ``tangent_mode`` asks for, as Unity does after an edit.

    ``changed``: bool mask of edited keys (a key whose time or value changed, or a new key): their
    slopes and their neighbours' are recomputed. ``at``: bool mask of keys recomputed themselves only
    (a key whose neighbour was deleted, the ends of a retimed interval: :func:`interval_ends`). Each
    mask is ``(N,)`` (all components of a key) or ``(N, C)`` (per component: an edit of one Euler
    channel leaves the other channels' slopes alone, as Unity's separate x/y/z curves do). Both
    None = all keys.
    Side by side and component by component, from the modern ``tangentMode`` encoding: Auto,
    ClampedAuto, Linear and Constant sides get new slopes; Free sides (and garbage/unknown modes,
    e.g. the 0xCDCDCDCD seen in real files) keep theirs, and so does every key out of scope, bit for
    bit. Weights and modes are unchanged. Returns a new curve.
    """
    if curve.n_keys == 0:
        return curve
    ins, outs = recomputed_slopes(
        curve.time, curve.value, curve.in_slope, curve.out_slope, curve.tangent_mode, changed, at
    )
    return curve.with_keys(in_slope=ins, out_slope=outs)


def recomputed_slopes(time, value, in_slope, out_slope, tangent_mode, changed=None, at=None):
    """Array form of :func:`recompute_tangents`: new ``(in_slope, out_slope)``, each ``(N, C)``.

    For callers that change values and slopes together and build one new curve. ``C`` may hold the
    columns of several curves sharing the key times (a stacked group of tracks).
    """
    t, v = _as_2d(time, value)
    n = t.shape[0]
    old_in = np.asarray(in_slope, dtype=np.float64)
    old_out = np.asarray(out_slope, dtype=np.float64)
    scope = _scope(n, v.shape[1], changed, at)
    idx = np.arange(n) if scope is None else np.nonzero(rows_any(scope))[0]
    ins = np.array(old_in, copy=True)
    outs = np.array(old_out, copy=True)
    if idx.size == 0:
        return ins, outs
    mode = np.asarray(tangent_mode, dtype=np.int64)[idx]
    left, right, _broken = tangent_mode_sides(mode)
    valid = mode >= 0
    left = np.where(valid, left, TangentMode.FREE)
    right = np.where(valid, right, TangentMode.FREE)
    if scope is not None:  # out-of-scope components keep their slopes: Free for the rules below
        inside = scope[idx]
        left = np.where(inside, left, TangentMode.FREE)
        right = np.where(inside, right, TangentMode.FREE)

    loc = _Local(t, v, idx)
    auto = loc.auto()
    clamped = loc.clamped()
    lin_in, lin_out = loc.linear()
    # Unity leaves the missing side of an end key alone for Linear.
    lin_in = np.where(loc.has_l, lin_in, old_in[idx])
    lin_out = np.where(loc.has_r, lin_out, old_out[idx])

    def side(m: np.ndarray, lin: np.ndarray, old: np.ndarray) -> np.ndarray:
        return np.select(
            [
                m == TangentMode.AUTO,
                m == TangentMode.CLAMPED_AUTO,
                m == TangentMode.LINEAR,
                m == TangentMode.CONSTANT,
            ],
            [auto, clamped, lin, np.full_like(old, np.inf)],
            default=old,
        )

    ins[idx] = side(left, lin_in, old_in[idx])
    outs[idx] = side(right, lin_out, old_out[idx])
    return ins, outs


def make_curve(time, value, mode: str = "clamped_auto", **curve_kwargs) -> Curve:
    """A new curve through ``(time (N,), value (N, C))`` with slopes and ``tangent_mode`` set as Unity would.

    ``mode``: one of :data:`MODES`; the keys get ``MODE_BITS[mode]`` (ClampedAuto = 136). Extra keyword
    arguments (``pre_infinity``, ``post_infinity``) go to :meth:`Curve.make`.
    """
    if mode not in MODE_BITS:
        raise ValueError(f"unknown tangent mode {mode!r}; expected one of {MODES}")
    t, v = _as_2d(time, value)
    if mode == "clamped_auto":
        ins = outs = clamped_auto_slopes(t, v)
    elif mode == "auto":
        ins = outs = auto_slopes(t, v)
    elif mode == "linear":
        ins, outs = linear_slopes(t, v)
    elif mode == "flat":
        ins = outs = np.zeros_like(v)
    else:
        ins = outs = np.full_like(v, np.inf)
    if ins is outs:
        ins.flags.writeable = False  # one read-only array for both sides (Curve.make shares it)
    return Curve.make(t, v, ins, outs, tangent_mode=MODE_BITS[mode], **curve_kwargs)


#: Values per :func:`make_curve` call of :func:`make_curves`: a call makes several temporaries of its
#: size, which for a whole 10-minute take at once were 420 MB (issue 26); CMU_Sample_05_01's 165
#: joints x 599 frames still go in one call.
CURVES_CALL_VALUES = 1 << 21


def _own_columns(a: np.ndarray, cols: slice) -> np.ndarray:
    """Columns ``cols`` of a group's ``(N, C)`` key array as a read-only array of their own (a
    broadcast default stays a broadcast): a track's arrays as strided views into the group's made
    every edit of a long take copy them slowly (a key drag step on a 10-minute take's track spent
    3 ms copying its slopes out of the 93-column group, issue 26), and kept the whole group alive."""
    part = a[:, cols]
    if part.strides[0] == 0:
        return part
    own = np.ascontiguousarray(part)
    own.flags.writeable = False
    return own


def make_curves(time, blocks: list, mode: str = "clamped_auto") -> list[Curve]:
    """:func:`make_curve` of each ``(N, C)`` block of ``blocks`` over the same key times ``(N,)``,
    computed a few blocks at a time side by side (slopes are per channel, so a block's curve is the
    same alone or beside others) and split back: one call per block cost ~1.2 ms each, 0.2 s for a
    165-joint BVH, while one call for all of a long take held several copies of it."""
    t = np.asarray(time, dtype=np.float64).reshape(-1)
    if not blocks:
        return []
    if t.shape[0] == 0:
        return [Curve.make(t, np.asarray(b).reshape(0, np.shape(b)[-1])) for b in blocks]
    n = t.shape[0]
    out: list[Curve] = []
    start = 0
    while start < len(blocks):
        stop, size = start, 0
        while stop < len(blocks) and (
            stop == start or size + n * np.shape(blocks[stop])[1] <= CURVES_CALL_VALUES
        ):
            size += n * np.shape(blocks[stop])[1]
            stop += 1
        group = blocks[start:stop]
        if len(group) == 1:
            out.append(make_curve(t, group[0], mode=mode))
        else:
            whole = make_curve(t, np.concatenate(group, axis=1), mode=mode)
            lo = 0
            for b in group:
                cols = slice(lo, lo + np.shape(b)[1])
                lo += np.shape(b)[1]
                own: dict[int, np.ndarray] = {}  # one copy of an array two fields share (the slopes)
                fields = {}
                for f in KEY_FIELDS[1:]:
                    a = getattr(whole, f)
                    if id(a) not in own:
                        own[id(a)] = _own_columns(a, cols)
                    fields[f] = own[id(a)]
                out.append(replace(whole, **fields))
        start = stop
    return out
