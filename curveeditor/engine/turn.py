"""Turn generator: the smooth-turning article's controller written out as keys (``rotations.md`` s. 8).

The controller turns a transform about an axis from one heading to another at a constant angular speed:

* the signed angle from ``from`` to ``to`` about the axis (:func:`signed_angle`: project both directions
  onto the plane normal to the axis, ``atan2((a x b) . axis, a . b)``), in (-180, 180];
* ``direction="shortest"`` turns by that angle; ``"positive"`` makes the angle about the axis increase
  and ``"negative"`` decrease, taking the long way (``theta -/+ 360``) when the short way goes the
  other way;
* constant speed ``speed_deg_s``; the controller stops once it is within ``tolerance_deg`` of the
  target and snaps onto it.

As keys: one key per frame at ``rate_hz`` while turning, and the last key at the exact arrival time
``T = |turn| / speed`` holding exactly the target (so the speed is constant to the very end, instead of
a faster or slower last frame); a frame key closer than ``tolerance_deg`` to the target is the
controller's snap frame and is dropped in favour of that exact last key (no sliver segment). A turn
smaller than the tolerance snaps at once: a single key at the target.

Output kinds:

* ``"euler"`` (Unity's ZXY order): a basis axis is one channel moving linearly from ``from_deg``
  (winding kept: 350 -> 370, not 350 -> 10) with Linear tangents, so the played speed is exactly
  constant between keys; any other axis gets the continuous decomposition of the turn with its exact
  derivatives as Free slopes, with extra keys so neighbours are at most 3 degrees apart (played speed
  constant within about 1e-5 relative).
* ``"quaternion"``: the key poses with their exact component derivatives as Free slopes; extra keys
  are inserted so no two neighbouring keys are more than 90 degrees apart (never >= 180, which Unity
  would play the short way).
"""

from __future__ import annotations

import numpy as np

from .clip import EULER, QUATERNION, RotationTrack
from .curves import Curve, TangentMode, tangent_mode_bits
from .reorder import euler_chain
from .rotations import UNITY_ORDER, quat_exp, quat_to_euler
from .tangents import make_curve

__all__ = ["generate_turn", "signed_angle", "turn_angle", "axis_vector", "DIRECTIONS"]

DIRECTIONS = ("shortest", "positive", "negative")
#: Largest angle (degrees) between neighbouring keys of a generated quaternion or vector-axis turn.
MAX_KEY_STEP_DEG = 90.0

#: Smallest turn (degrees per degree of the start angle) that is keyed; below it the turn is no turn.
MIN_TURN_DEG = 1e-9

#: Most keys a generated turn may have (duration x rate); more is an argument error, not a clip.
MAX_KEYS = 10_000_000
#: Largest angle (degrees) between keys of an Euler turn about a non-basis axis: the channels are not
#: linear in the angle there, and Hermite segments with exact end slopes keep the played speed within
#: 1e-5 relative of constant at this spacing (at 18 deg, 24 fps x 446 deg/s, it was 0.12 %).
EULER_AXIS_STEP_DEG = 3.0
_BASIS = {"x": 0, "y": 1, "z": 2}
_FREE = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False)


def axis_vector(axis) -> tuple[np.ndarray, int | None]:
    """``(unit axis (3,), basis index or None)`` for ``"x" | "y" | "z"`` or a non-zero vector (x, y, z).

    A vector along a basis axis counts as that axis only when it points the positive way.
    """
    if isinstance(axis, str):
        key = axis.strip().lower()
        if key not in _BASIS:
            raise ValueError(f"axis must be 'x', 'y', 'z' or a vector (x, y, z), got {axis!r}")
        v = np.zeros(3)
        v[_BASIS[key]] = 1.0
        return v, _BASIS[key]
    v = np.asarray(axis, dtype=np.float64).reshape(-1)
    norm = np.linalg.norm(v) if v.shape == (3,) else 0.0
    if v.shape != (3,) or not np.all(np.isfinite(v)) or norm == 0:
        raise ValueError(f"axis must be 'x', 'y', 'z' or a non-zero finite vector (x, y, z), got {axis!r}")
    v = v / norm
    for i in range(3):
        if v[i] == 1.0:
            return v, i
    return v, None


def signed_angle(a, b, axis) -> np.ndarray:
    """Signed angle (degrees, (-180, 180]) from direction ``a`` to ``b`` about ``axis`` (all ``(..., 3)``).

    Both directions are projected onto the plane normal to the axis; positive is counter-clockwise
    looking down the axis (right-hand rule in the numbers given). ``atan2((a x b) . n, a . b)``.
    """
    n = np.asarray(axis, dtype=np.float64)
    n = n / np.linalg.norm(n, axis=-1, keepdims=True)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a = a - np.sum(a * n, axis=-1, keepdims=True) * n
    b = b - np.sum(b * n, axis=-1, keepdims=True) * n
    ang = np.degrees(np.arctan2(np.sum(np.cross(a, b) * n, axis=-1), np.sum(a * b, axis=-1)))
    return np.where(ang <= -180.0, ang + 360.0, ang)


def _perpendicular(n: np.ndarray) -> np.ndarray:
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    p = np.cross(n, helper)
    return p / np.linalg.norm(p)


def _rotate(v: np.ndarray, n: np.ndarray, deg: float) -> np.ndarray:
    """Rodrigues rotation of ``v`` about unit ``n`` by ``deg`` degrees."""
    a = np.radians(deg)
    return v * np.cos(a) + np.cross(n, v) * np.sin(a) + n * np.dot(n, v) * (1 - np.cos(a))


def turn_angle(from_deg: float, to_deg: float, axis="y", direction: str = "shortest") -> float:
    """The signed turn (degrees) the controller makes: in (-180, 180] for ``"shortest"``, in [0, 360) for
    ``"positive"``, in (-360, 0] for ``"negative"``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    n, _ = axis_vector(axis)
    ref = _perpendicular(n)
    theta = float(signed_angle(_rotate(ref, n, from_deg), _rotate(ref, n, to_deg), n))
    # Snap float noise so that e.g. 0 -> 90 is exactly 90.
    exact = float(np.mod(to_deg - from_deg + 180.0, 360.0) - 180.0)
    if exact == -180.0:
        exact = 180.0
    if abs(theta - exact) < 1e-9 or abs(abs(theta - exact) - 360.0) < 1e-9:
        theta = exact
    if direction == "positive" and theta < 0:
        theta += 360.0
    elif direction == "negative" and theta > 0:
        theta -= 360.0
    return theta


def _check(name: str, value, positive: bool = True) -> float:
    v = float(value)
    if not np.isfinite(v) or (v <= 0 if positive else v < 0):
        need = "a positive" if positive else "a non-negative"
        raise ValueError(f"{name} must be {need} finite number, got {value!r}")
    return v


def generate_turn(
    from_deg: float,
    to_deg: float,
    axis="y",
    direction: str = "shortest",
    speed_deg_s: float | None = None,
    rate_hz: float = 60.0,
    tolerance_deg: float = 0.5,
    path: str = "Turn",
    kind: str = EULER,
) -> RotationTrack:
    """A rotation track turning about ``axis`` from ``from_deg`` to ``to_deg`` at ``speed_deg_s`` (deg/s).

    ``axis``: ``"x" | "y" | "z"`` or a vector (x, y, z); ``direction``: ``"shortest" | "positive" |
    "negative"``; ``rate_hz``: key rate (frames per second); ``tolerance_deg``: the controller's snap
    distance; ``kind``: ``"euler"`` (Unity ZXY) or ``"quaternion"``. Starts at t = 0. See the module
    docstring for the keys written. Raises ``ValueError`` on bad arguments.
    """
    if speed_deg_s is None:
        raise ValueError("speed_deg_s (deg/s) is required")
    speed = _check("speed_deg_s", speed_deg_s)
    rate = _check("rate_hz", rate_hz)
    tol = _check("tolerance_deg", tolerance_deg, positive=False)
    start = float(from_deg)
    if not np.isfinite(start) or not np.isfinite(float(to_deg)):
        raise ValueError(f"from_deg and to_deg must be finite, got {from_deg!r}, {to_deg!r}")
    if kind not in (EULER, QUATERNION):
        raise ValueError(f"kind must be 'euler' or 'quaternion', got {kind!r}")
    n, basis = axis_vector(axis)
    delta = turn_angle(start, float(to_deg), axis, direction)
    total = abs(delta)
    sign = 1.0 if delta >= 0 else -1.0
    meta = {
        "generator": "turn",
        "from_deg": start,
        "to_deg": float(to_deg),
        "turn_deg": delta,
        "speed_deg_s": speed,
        "direction": direction,
    }

    # A turn below the start angle's float resolution (359.9999999999999 -> 0 "shortest" is 1e-13 deg)
    # cannot be keyed: its two keys would hold the same value 6e-15 s apart. It is no turn.
    if total <= max(tol, MIN_TURN_DEG * max(1.0, abs(start))):
        times = np.zeros(1)
        angles = np.array([start + delta])
    else:
        duration = total / speed
        if duration * rate > MAX_KEYS:
            # A tiny speed or huge rate would allocate gigabytes (or hang) before failing.
            raise ValueError(
                f"a {total:g} deg turn at {speed:g} deg/s and {rate:g} Hz needs "
                f"{duration * rate:.3g} keys (at most {MAX_KEYS:,})"
            )
        frames = np.arange(int(np.floor(duration * rate)) + 1) / rate
        frames = frames[frames < duration]
        # The snap: a frame key within tolerance of the target is replaced by the exact arrival key.
        frames = frames[(total - speed * frames > tol) | (frames == 0)]
        times = np.append(frames, duration)
        step = speed * np.diff(times).max(initial=0.0)
        limit = MAX_KEY_STEP_DEG if kind == QUATERNION else EULER_AXIS_STEP_DEG
        if (kind == QUATERNION or basis is None) and step > limit:
            pieces = int(np.ceil(step / limit))
            sub = times[:-1, None] + np.diff(times)[:, None] * (np.arange(pieces) / pieces)[None, :]
            times = np.append(sub.ravel(), duration)
        angles = start + sign * speed * times
        angles[-1] = start + delta
    omega = sign * speed  # deg/s about n

    if kind == EULER and basis is not None:
        values = np.zeros((times.shape[0], 3))
        values[:, basis] = angles
        curve = make_curve(times, values, mode="linear") if times.shape[0] > 1 else Curve.make(times, values)
        return RotationTrack(path, EULER, curve, order=UNITY_ORDER, meta=meta)

    half = np.radians(angles) / 2.0
    q = np.concatenate([n[None, :] * np.sin(half)[:, None], np.cos(half)[:, None]], axis=1)
    # Exact derivative of q(t) = (n sin(a/2), cos(a/2)), a = angle(t).
    da = np.radians(omega) / 2.0
    dq = np.concatenate([n[None, :] * (np.cos(half) * da)[:, None], (-np.sin(half) * da)[:, None]], axis=1)
    if times.shape[0] == 1:
        dq[:] = 0.0
    if kind == QUATERNION:
        curve = Curve.make(times, q, dq, dq, tangent_mode=_FREE)
        return RotationTrack(path, QUATERNION, curve, order=UNITY_ORDER, meta=meta)

    # Euler about a general axis: continuous decomposition plus exact slopes from the path itself.
    h = 1e-6
    around = np.stack([angles - sign * speed * h, angles, angles + sign * speed * h], axis=1).ravel()
    qa = quat_exp(np.radians(around)[:, None] * n[None, :])
    e = euler_chain(qa, UNITY_ORDER, quat_to_euler(qa[0], UNITY_ORDER)).reshape(-1, 3, 3)
    values = e[:, 1]
    slopes = (e[:, 2] - e[:, 0]) / (2 * h) if times.shape[0] > 1 else np.zeros_like(values)
    curve = Curve.make(times, values, slopes, slopes, tangent_mode=_FREE)
    return RotationTrack(path, EULER, curve, order=UNITY_ORDER, meta=meta)
