"""Angular speed of a rotation sequence: degrees per second of each key's step to the next.

The inspector (:mod:`.analysis`: spikes, the speed column) and the views' samples
(:mod:`.display`: the speed strip) both read it; it lives below both so neither imports the other.
"""

from __future__ import annotations

import numpy as np

from .rotations import geodesic_angle

__all__ = ["angular_speed", "step_speeds"]


def step_speeds(t: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Per-key speeds ``(N,)`` (deg/s) from the key times ``t (N,)`` (seconds) and the ``(N-1,)``
    geodesic steps (degrees); the last key repeats the previous step's speed."""
    out = np.zeros(t.shape[0])
    if t.shape[0] < 2:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(steps > 0, steps / np.diff(t), 0.0)
    out[:-1] = sp
    out[-1] = sp[-1]
    return out


def angular_speed(times, quats) -> np.ndarray:
    """Angular speed ``(N,)`` in deg/s of each key's step to the next (the last key repeats the previous).

    ``times (N,)`` seconds, ``quats (N, 4)`` (x, y, z, w). Geodesic angle / dt; 0 for one key;
    ``inf`` where dt is 0 and the rotation changes.
    """
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    q = np.asarray(quats, dtype=np.float64)
    if t.shape[0] < 2:
        return np.zeros(t.shape[0])
    return step_speeds(t, geodesic_angle(q[:-1], q[1:]))
