"""One-channel float curves (``m_FloatCurves``): humanoid muscles, blend shapes, generic floats.

They are :class:`~curveeditor.engine.clip.OtherTrack` s of kind ``"float"`` whose curve has one
component (``Curve`` with C = 1); the key edits of :mod:`~curveeditor.engine.edit` work on them as on
rotation tracks (channel 0 = the value, in the curve's own units). This module names and orders them
as Unity's Animation window does:

* humanoid muscles (``classID: 95``) by Unity's ``HumanTrait.MuscleName`` order, grouped by body
  part (Spine, Chest, Upper Chest, Neck, Head, Eyes, Jaw, legs, arms, Left / Right Hand fingers),
  with the root and IK goal curves (``RootT.x``, ``LeftHandQ.w`` ...) first;
* blend shapes (``blendShape.<name>``, 0..100 %), then every other float by path and attribute.

Pure Python + numpy: no Qt, no I/O.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clip import Clip, OtherTrack
from .curves import Curve

__all__ = [
    "BODY_MUSCLES",
    "FINGER_MUSCLES",
    "HUMAN_MUSCLES",
    "muscle_index",
    "body_part",
    "category",
    "unit",
    "is_editable",
    "float_tracks",
    "sort_key",
    "with_float_curve",
    "move_float_keys",
    "with_edited",
]

#: Unity's body muscles in ``HumanTrait.MuscleName`` order (0..54), as animation clips spell them.
BODY_MUSCLES: tuple[str, ...] = (
    "Spine Front-Back", "Spine Left-Right", "Spine Twist Left-Right",
    "Chest Front-Back", "Chest Left-Right", "Chest Twist Left-Right",
    "UpperChest Front-Back", "UpperChest Left-Right", "UpperChest Twist Left-Right",
    "Neck Nod Down-Up", "Neck Tilt Left-Right", "Neck Turn Left-Right",
    "Head Nod Down-Up", "Head Tilt Left-Right", "Head Turn Left-Right",
    "Left Eye Down-Up", "Left Eye In-Out", "Right Eye Down-Up", "Right Eye In-Out",
    "Jaw Close", "Jaw Left-Right",
    "Left Upper Leg Front-Back", "Left Upper Leg In-Out", "Left Upper Leg Twist In-Out",
    "Left Lower Leg Stretch", "Left Lower Leg Twist In-Out",
    "Left Foot Up-Down", "Left Foot Twist In-Out", "Left Toes Up-Down",
    "Right Upper Leg Front-Back", "Right Upper Leg In-Out", "Right Upper Leg Twist In-Out",
    "Right Lower Leg Stretch", "Right Lower Leg Twist In-Out",
    "Right Foot Up-Down", "Right Foot Twist In-Out", "Right Toes Up-Down",
    "Left Shoulder Down-Up", "Left Shoulder Front-Back",
    "Left Arm Down-Up", "Left Arm Front-Back", "Left Arm Twist In-Out",
    "Left Forearm Stretch", "Left Forearm Twist In-Out",
    "Left Hand Down-Up", "Left Hand In-Out",
    "Right Shoulder Down-Up", "Right Shoulder Front-Back",
    "Right Arm Down-Up", "Right Arm Front-Back", "Right Arm Twist In-Out",
    "Right Forearm Stretch", "Right Forearm Twist In-Out",
    "Right Hand Down-Up", "Right Hand In-Out",
)  # fmt: skip

_FINGERS = ("Thumb", "Index", "Middle", "Ring", "Little")
#: Finger muscles (55..94): ``LeftHand.Thumb.1 Stretched``, ``LeftHand.Thumb.Spread``, ...
FINGER_MUSCLES: tuple[str, ...] = tuple(
    f"{hand}.{finger}.{part}"
    for hand in ("LeftHand", "RightHand")
    for finger in _FINGERS
    for part in ("1 Stretched", "Spread", "2 Stretched", "3 Stretched")
)
HUMAN_MUSCLES: tuple[str, ...] = BODY_MUSCLES + FINGER_MUSCLES
_INDEX = {name: i for i, name in enumerate(HUMAN_MUSCLES)}

#: Root motion and IK goal curves of a humanoid clip, in binding order (7..41).
_GOALS = tuple(
    f"{goal}{tq}.{c}"
    for goal in ("Root", "LeftFoot", "RightFoot", "LeftHand", "RightHand")
    for tq, comps in (("T", "xyz"), ("Q", "xyzw"))
    for c in comps
)
_GOAL_INDEX = {name: i for i, name in enumerate(_GOALS)}

# body part of a body muscle: its name up to the motion ("Left Upper Leg" of "Left Upper Leg In-Out")
_PARTS = (
    "Spine", "Chest", "UpperChest", "Neck", "Head", "Left Eye", "Right Eye", "Jaw",
    "Left Upper Leg", "Left Lower Leg", "Left Foot", "Left Toes",
    "Right Upper Leg", "Right Lower Leg", "Right Foot", "Right Toes",
    "Left Shoulder", "Left Arm", "Left Forearm", "Left Hand",
    "Right Shoulder", "Right Arm", "Right Forearm", "Right Hand",
)  # fmt: skip
_PART_LABEL = {"UpperChest": "Upper Chest", "Left Eye": "Eyes", "Right Eye": "Eyes"}


def muscle_index(attribute: str) -> int | None:
    """Unity's muscle index (``HumanTrait.MuscleName``, 0..94) of an attribute, or None."""
    return _INDEX.get(attribute)


def body_part(attribute: str) -> tuple[int, str] | None:
    """``(order, label)`` of the body part a humanoid curve belongs to: "Root and IK goals", "Spine",
    ..., "Left Hand fingers", "Right Hand fingers"; parts order as Unity lists the muscles."""
    if attribute in _GOAL_INDEX:
        return (0, "Root and IK goals")
    i = _INDEX.get(attribute)
    if i is None:
        return None
    if i >= len(BODY_MUSCLES):
        left = attribute.startswith("LeftHand.")
        return (100 if left else 101, "Left Hand fingers" if left else "Right Hand fingers")
    for k, part in enumerate(_PARTS):
        if attribute.startswith(part + " "):
            return (1 + k, _PART_LABEL.get(part, part))
    return None  # pragma: no cover - every body muscle starts with a part


def category(track: OtherTrack) -> str:
    """``"humanoid"`` (muscles, root / IK curves of an Animator), ``"blendshape"`` or ``"float"``."""
    a = track.attribute
    if track.meta.get("class_id") == 95 and body_part(a) is not None:
        return "humanoid"
    if a.startswith("blendShape."):
        return "blendshape"
    return "float"


def unit(track: OtherTrack) -> str:
    """The value axis's unit: muscles are normalized (-1..1: Unity's muscle range), blend shape
    weights percent, root / IK positions metres, anything else the property's own (no unit)."""
    c = category(track)
    if c == "humanoid":
        a = track.attribute
        if a in _GOAL_INDEX:
            return "m" if a.split(".")[0].endswith("T") else ""
        return "muscle"
    if c == "blendshape":
        return "%"
    return ""


def is_editable(track: OtherTrack) -> bool:
    """A one-channel ``m_FloatCurves`` curve with keys (the key edits work on it)."""
    return (
        track.kind == "float"
        and track.curve is not None
        and track.curve.n_components == 1
        and track.curve.n_keys > 0
    )


def sort_key(track: OtherTrack) -> tuple:
    """Order of the Animation window: humanoid curves by body part and Unity's muscle order, then
    blend shapes, then the other floats by path and attribute."""
    c = category(track)
    a = track.attribute
    if c == "humanoid":
        part = body_part(a)
        i = _GOAL_INDEX.get(a, _INDEX.get(a, 0))
        return (0, part[0] if part else 0, i, track.path)
    if c == "blendshape":
        return (1, track.path, 0, a)
    return (2, track.path, 0, a)


def float_tracks(clip: Clip) -> list[OtherTrack]:
    """The clip's editable float curves in :func:`sort_key` order."""
    return sorted((o for o in clip.other_tracks if is_editable(o)), key=sort_key)


def move_float_keys(clip: Clip, moving: dict, dt: float, dv: float, gap: float) -> tuple[Clip, float]:
    """``clip`` with the keys ``moving[name] = (float curve as it was, key indices)`` moved ``dt``
    seconds and ``dv`` (the curve's units), and the ``dt`` applied: as far as every curve's
    neighbouring keys let it (``edit.clamp_time_shift``: at least ``gap`` seconds, or half the
    curve's shortest interval, between keys). The graphs' and the dope sheet's float-key drags."""
    from .edit import clamp_time_shift, move_keys

    if dt:
        for o, idx in moving.values():
            t = np.asarray(o.curve.time)
            mask = np.zeros(t.shape[0], dtype=bool)
            mask[list(idx)] = True
            step = float(np.min(np.diff(t))) if t.size > 1 else 1.0
            dt = clamp_time_shift(t, mask, dt, min(gap, 0.5 * step))
    for name, (o, idx) in moving.items():
        clip = with_float_curve(clip, name, move_keys(o, list(idx), dt, 0, dv).curve)
    return clip, dt


def with_edited(clip: Clip, track) -> Clip:
    """``clip`` with ``track`` in place of its own: a rotation track by path, a float curve
    (``OtherTrack``) through :func:`with_float_curve` (its editor mirror follows). The views' key
    fields and key table edit either kind through one call."""
    if isinstance(track, OtherTrack):
        return with_float_curve(clip, track.name, track.curve)
    return clip.with_track(track)


def with_float_curve(clip: Clip, name: str, curve: Curve) -> Clip:
    """``clip`` with the float curve ``name`` (``OtherTrack.name``) holding ``curve`` (C = 1). Its
    editor-curve mirror (``meta["mirror_of"] == name``: Unity's ``m_EditorCurves`` copy, which the
    Animation window edits and regenerates the runtime curve from) gets the same keys, so the two
    never disagree."""
    if curve.n_components != 1:
        raise ValueError(f"float curve {name!r}: one component expected, got {curve.n_components}")
    found = False
    out = []
    for o in clip.other_tracks:
        if o.name == name and o.kind == "float":
            found = True
            o = replace(o, curve=curve, times=np.asarray(curve.time))
        elif o.meta.get("mirror_of") == name:
            o = replace(o, curve=curve, times=np.asarray(curve.time))
        out.append(o)
    if not found:
        raise KeyError(f"no float curve {name!r}")
    return replace(clip, other_tracks=tuple(out))
