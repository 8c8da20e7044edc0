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

import numpy as np

from .curves import Curve, TangentMode, tangent_mode_bits, tangent_mode_sides

__all__ = [
    "MODES",
    "MODE_BITS",
    "auto_slopes",
    "clamped_auto_slopes",
    "linear_slopes",
    "recompute_tangents",
    "make_curve",
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


def _secants(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(N-1, C)`` slopes of the straight lines between neighbouring keys (0 where dt is 0)."""
    dt = np.diff(t)[:, None]
    dv = np.diff(v, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dt > 0, dv / np.where(dt > 0, dt, 1.0), 0.0)


def auto_slopes(time, value) -> np.ndarray:
    """Unity Auto (legacy smooth) slopes ``(N, C)``: mean of the two neighbouring secants."""
    t, v = _as_2d(time, value)
    n = t.shape[0]
    out = np.zeros_like(v)
    if n < 2:
        return out
    s = _secants(t, v)
    out[0] = s[0]
    out[-1] = s[-1]
    out[1:-1] = 0.5 * (s[:-1] + s[1:])
    return out


def clamped_auto_slopes(time, value) -> np.ndarray:
    """Unity ClampedAuto slopes ``(N, C)``: smooth, flat at extrema and ends, never overshooting."""
    t, v = _as_2d(time, value)
    n = t.shape[0]
    out = np.zeros_like(v)
    if n < 3:
        return out
    s = _secants(t, v)
    left, right = s[:-1], s[1:]
    m = 0.5 * (left + right)
    bound = 3.0 * np.minimum(np.abs(left), np.abs(right))
    m = np.clip(m, -bound, bound)
    out[1:-1] = np.where(left * right > 0, m, 0.0)
    return out


def linear_slopes(time, value) -> tuple[np.ndarray, np.ndarray]:
    """Linear ``(in_slope, out_slope)``, each ``(N, C)``: secants to the left / right neighbour.

    The first key's in slope and the last key's out slope (no neighbour) copy the only secant.
    """
    t, v = _as_2d(time, value)
    n = t.shape[0]
    ins = np.zeros_like(v)
    outs = np.zeros_like(v)
    if n < 2:
        return ins, outs
    s = _secants(t, v)
    ins[1:] = s
    outs[:-1] = s
    ins[0] = s[0]
    outs[-1] = s[-1]
    return ins, outs


def _dilate(mask: np.ndarray) -> np.ndarray:
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    return out


def recompute_tangents(curve: Curve, changed=None) -> Curve:
    """Recompute the slopes the keys' ``tangent_mode`` asks for, as Unity does after an edit.

    ``changed``: bool mask ``(N,)`` of edited keys (None = all keys). Their slopes and their
    neighbours' are recomputed, side by side and component by component, from the modern
    ``tangentMode`` encoding: Auto, ClampedAuto, Linear and Constant sides get new slopes; Free sides
    (and garbage/unknown modes, e.g. the 0xCDCDCDCD seen in real files) keep theirs. Weights and modes
    are unchanged. Returns a new curve.
    """
    n = curve.n_keys
    if n == 0:
        return curve
    if changed is None:
        scope = np.ones(n, dtype=bool)
    else:
        changed = np.asarray(changed, dtype=bool).reshape(-1)
        if changed.shape[0] != n:
            raise ValueError(f"changed mask has {changed.shape[0]} entries for {n} keys")
        scope = _dilate(changed)
    mode = np.asarray(curve.tangent_mode, dtype=np.int64)
    left, right, _broken = tangent_mode_sides(mode)
    valid = mode >= 0
    left = np.where(valid, left, TangentMode.FREE)
    right = np.where(valid, right, TangentMode.FREE)
    scope2 = scope[:, None]

    t, v = curve.time, curve.value
    auto = auto_slopes(t, v)
    clamped = clamped_auto_slopes(t, v)
    lin_in, lin_out = linear_slopes(t, v)
    # Unity leaves the missing side of an end key alone for Linear.
    lin_in[0] = curve.in_slope[0]
    lin_out[-1] = curve.out_slope[-1]

    def side(m: np.ndarray, lin: np.ndarray, old: np.ndarray) -> np.ndarray:
        new = np.select(
            [
                m == TangentMode.AUTO,
                m == TangentMode.CLAMPED_AUTO,
                m == TangentMode.LINEAR,
                m == TangentMode.CONSTANT,
            ],
            [auto, clamped, lin, np.full_like(old, np.inf)],
            default=old,
        )
        return np.where(scope2, new, old)

    return curve.with_keys(
        in_slope=side(left, lin_in, np.asarray(curve.in_slope)),
        out_slope=side(right, lin_out, np.asarray(curve.out_slope)),
    )


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
    return Curve.make(t, v, ins, outs, tangent_mode=MODE_BITS[mode], **curve_kwargs)
