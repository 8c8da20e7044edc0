"""Despiking: replace spike keys by Slerp between their neighbouring good keys (``rotations.md`` s. 3, 7).

Spikes are found by :func:`curveeditor.engine.analysis.spike_mask` on the track's key quaternions (a
step faster than the speed bound that comes back within 3 keys). Each run of spike keys is replaced by
the Slerp, at each key's time, between the last good key before the run and the first good key after
it; a run touching an end of the track holds its one good neighbour.

What changes, and what does not (the decision the editor documents):

* Values: only the spike keys. Every other key's value is bit-identical.
* Slopes: the spike keys get slopes from their tangent mode; spike keys whose mode is Free (or not a
  Unity mode) are switched to ClampedAuto first, because their old slopes described the spike. Then
  :func:`~curveeditor.engine.tangents.recompute_tangents` runs for the changed keys and their
  neighbours, exactly as Unity does after an edit: neighbours with Auto/ClampedAuto/Linear sides get new
  slopes (their values are untouched, the played motion right next to the spike follows the repair);
  Free neighbours keep theirs.
* Euler tracks: the new keys are the Euler triples of the Slerp result nearest to the linear
  interpolation of the neighbours' own channel values, so winding is kept and no wrap is introduced.
  Quaternion tracks: the new keys sit on the previous good key's hemisphere.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .analysis import spike_mask
from .clip import EULER, RotationTrack, key_quaternions
from .curves import TangentMode, tangent_mode_bits, tangent_mode_sides
from .reduce import slerp_pairs
from .resample import euler_following
from .rotations import hemisphere_continuous, quat_dot
from .tangents import recompute_tangents

__all__ = ["despike_track", "spike_neighbours"]

_CLAMPED_AUTO = tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False)
_RECOMPUTED = (TangentMode.AUTO, TangentMode.LINEAR, TangentMode.CLAMPED_AUTO)


def spike_neighbours(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the True keys of ``mask (N,)``: ``(indices, previous good key, next good key)``.

    A missing neighbour (run at an end) is replaced by the other one. Requires at least one good key.
    """
    idx = np.nonzero(mask)[0]
    good = np.nonzero(~mask)[0]
    pos = np.searchsorted(good, idx)
    prev = good[np.maximum(pos - 1, 0)]
    nxt = good[np.minimum(pos, good.shape[0] - 1)]
    prev = np.where(pos == 0, nxt, prev)
    nxt = np.where(pos == good.shape[0], prev, nxt)
    return idx, prev, nxt


def despike_track(track: RotationTrack, speed_deg_s: float | None = None) -> tuple[RotationTrack, np.ndarray]:
    """``(despiked track, changed key indices (K,) int)``.

    ``speed_deg_s``: spike speed bound in deg/s (None = automatic, see
    :func:`~curveeditor.engine.analysis.default_spike_speed`). A track without spikes is returned as
    is (same object) with an empty index array. See the module docstring for what else changes.
    """
    if speed_deg_s is not None and not (np.isfinite(speed_deg_s) and speed_deg_s > 0):
        raise ValueError(f"speed_deg_s must be a positive speed in deg/s or None, got {speed_deg_s!r}")
    empty = np.zeros(0, dtype=np.int64)
    n = track.n_keys
    if n < 3:
        return track, empty
    curve = track.curve
    t = np.asarray(curve.time)
    q = hemisphere_continuous(key_quaternions(track))
    mask = spike_mask(t, q, speed_deg_s)
    if not np.any(mask) or np.all(mask):
        return track, empty
    idx, prev, nxt = spike_neighbours(mask)
    span = t[nxt] - t[prev]
    u = np.where(span > 0, (t[idx] - t[prev]) / np.where(span > 0, span, 1.0), 0.0)
    new_q = slerp_pairs(q[prev], q[nxt], u)

    values = np.array(curve.value)
    if track.kind == EULER:
        ref = values[prev] + u[:, None] * (values[nxt] - values[prev])
        values[idx] = euler_following(new_q, track.order, ref)
    else:
        sign = np.where(quat_dot(new_q, values[prev]) < 0, -1.0, 1.0)
        values[idx] = new_q * sign[:, None]

    mode = np.array(curve.tangent_mode)
    left, right, _ = tangent_mode_sides(mode)
    keeps = np.isin(left, _RECOMPUTED) & np.isin(right, _RECOMPUTED) & (mode >= 0)
    fix = np.zeros(mode.shape, dtype=bool)
    fix[idx] = ~keeps[idx]
    mode[fix] = _CLAMPED_AUTO
    new = curve.with_keys(value=values, tangent_mode=mode)
    new = recompute_tangents(new, mask)
    return replace(track, curve=new), idx
