"""The clip data model: a named clip with a frame rate, rotation tracks and read-only tracks.

Everything is immutable; operations return new objects (``dataclasses.replace``).

* :class:`RotationTrack`: a transform's rotation, keyed either in Euler angles (a 3-component
  :class:`~curveeditor.engine.curves.Curve` of degrees, columns x, y, z, with a rotation ``order``)
  or in quaternions (a 4-component curve, columns x, y, z, w).
* :class:`OtherTrack`: any other curve (position, scale, float, object reference); carried through
  untouched; one-channel float curves (muscles, blend shapes) are editable (``engine.float_curves``).
* :class:`Clip`: tracks plus ``source``, an opaque format document (e.g. the parsed ``.anim`` text)
  that writers use to reproduce untouched parts byte for byte.

"What Unity plays" is :func:`played`: Euler tracks are evaluated channel by channel and then
converted with their order; quaternion tracks component by component and then normalized.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from .curves import Curve, evaluate
from .rotations import UNITY_ORDER, euler_to_quat, normalize_order, quat_normalize

__all__ = ["RotationTrack", "OtherTrack", "Clip", "played", "key_quaternions", "EULER", "QUATERNION"]

EULER: Literal["euler"] = "euler"
QUATERNION: Literal["quaternion"] = "quaternion"


@dataclass(frozen=True, eq=False)
class RotationTrack:
    """One rotation curve of a clip.

    Attributes:
        path: the track's name, unique in the clip: the transform path (``Hips/Spine``) for
            transform rotations, the attribute prefix for humanoid quartets (``RootQ``, or
            ``PATH:RootQ`` when the curves' path is not empty).
        kind: ``"euler"`` (curve has 3 components, degrees, columns x, y, z) or ``"quaternion"``
            (4 components, x, y, z, w).
        curve: the keys.
        order: rotation order for Euler tracks (scipy-style: ``"zxy"`` = Unity default, upper case
            = intrinsic as in BVH). Ignored for quaternion tracks.
        meta: format-specific facts a writer needs (e.g. which ``.anim`` block the track came from).
    """

    path: str
    kind: Literal["euler", "quaternion"]
    curve: Curve
    order: str = UNITY_ORDER
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in (EULER, QUATERNION):
            raise ValueError(f"track {self.path!r}: kind must be 'euler' or 'quaternion'")
        want = 3 if self.kind == EULER else 4
        if self.curve.n_components != want:
            raise ValueError(
                f"track {self.path!r}: a {self.kind} curve needs {want} components, "
                f"got {self.curve.n_components}"
            )
        normalize_order(self.order)

    @property
    def times(self) -> np.ndarray:
        """Key times ``(N,)`` in seconds."""
        return self.curve.time

    @property
    def n_keys(self) -> int:
        return self.curve.n_keys

    def with_curve(self, curve: Curve) -> RotationTrack:
        return replace(self, curve=curve)


@dataclass(frozen=True, eq=False)
class OtherTrack:
    """A non-rotation curve, carried through untouched and shown read-only.

    Attributes:
        path: the transform path the curve animates ('' = root).
        attribute: the property (``m_LocalPosition``, ``m_LocalScale``, ``blendShape.Blink``,
            ``m_Sprite`` ...).
        kind: ``"position"``, ``"scale"``, ``"float"``, ``"pptr"`` or ``"editor"``.
        curve: the keys when the curve is numeric, else ``None`` (object-reference curves).
        times: key times (seconds) for any kind, including ``pptr``.
        meta: format-specific facts.
    """

    path: str
    attribute: str
    kind: str
    curve: Curve | None
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.path}:{self.attribute}" if self.path else self.attribute

    @property
    def n_keys(self) -> int:
        return len(self.times)

    def with_curve(self, curve: Curve) -> OtherTrack:
        """The same curve with new keys (a one-channel float curve edited by ``engine.edit``)."""
        return replace(self, curve=curve, times=np.asarray(curve.time))


@dataclass(frozen=True, eq=False)
class Clip:
    """An animation clip.

    Attributes:
        name: clip name.
        frame_rate: frames per second (Unity's ``m_SampleRate``; the BVH frame rate).
        tracks: rotation tracks, in file order; paths are unique.
        other_tracks: everything else, read-only.
        source: opaque format document used by the matching writer for lossless output.
        meta: clip-level facts (e.g. ``{"format": "anim"}``).
    """

    name: str
    frame_rate: float
    tracks: tuple[RotationTrack, ...] = ()
    other_tracks: tuple[OtherTrack, ...] = ()
    source: Any = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tracks", tuple(self.tracks))
        object.__setattr__(self, "other_tracks", tuple(self.other_tracks))
        paths = [t.path for t in self.tracks]
        if len(set(paths)) != len(paths):
            dup = sorted({p for p in paths if paths.count(p) > 1})
            raise ValueError(f"duplicate rotation track paths: {dup}")
        if not (np.isfinite(self.frame_rate) and self.frame_rate > 0):
            raise ValueError(f"frame rate must be positive, got {self.frame_rate}")

    def track(self, path: str) -> RotationTrack:
        """The rotation track named ``path``; ``KeyError`` listing the available names otherwise."""
        for t in self.tracks:
            if t.path == path:
                return t
        raise KeyError(f"no rotation track {path!r}; tracks: {[t.path for t in self.tracks]}")

    def with_track(self, track: RotationTrack) -> Clip:
        """A copy with the track of the same path replaced."""
        self.track(track.path)
        return replace(self, tracks=tuple(track if t.path == track.path else t for t in self.tracks))

    def with_tracks(self, tracks) -> Clip:
        return replace(self, tracks=tuple(tracks))

    def _curves(self):
        """The curves that give the clip its time span: the rotation tracks', or, in a clip with
        no rotation track at all (a humanoid muscle clip), its float curves."""
        if self.tracks:
            return [t.curve for t in self.tracks if t.n_keys]
        return [
            o.curve for o in self.other_tracks if o.kind == "float" and o.curve is not None and o.curve.n_keys
        ]

    @property
    def start(self) -> float:
        starts = [c.start for c in self._curves()]
        return min(starts) if starts else 0.0

    @property
    def end(self) -> float:
        ends = [c.end for c in self._curves()]
        return max(ends) if ends else 0.0


def played(track: RotationTrack, times) -> np.ndarray:
    """What Unity plays: unit quaternions ``(M, 4)`` (x, y, z, w) of ``track`` at ``times`` (seconds)."""
    values = evaluate(track.curve, times)
    if track.kind == EULER:
        return euler_to_quat(values, track.order)
    return quat_normalize(values)


def key_quaternions(track: RotationTrack) -> np.ndarray:
    """Unit quaternions ``(N, 4)`` at the track's keys (the key values themselves, not re-evaluated)."""
    if track.kind == EULER:
        return euler_to_quat(track.curve.value, track.order)
    return quat_normalize(track.curve.value)
