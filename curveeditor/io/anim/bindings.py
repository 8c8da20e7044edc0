"""``m_ClipBindingConstant.genericBindings``: the derived binding table Unity computes from the curves.

Rules (``shared/domain/unity-anim-format.md`` section 7, checked on all 467 corpus bindings):

* ``path`` = CRC-32 (IEEE, zlib) of the UTF-8 transform path (``''`` -> 0, ``Armature/Hips`` ->
  3561920168).
* Transform curves: ``attribute`` 1 position, 2 quaternion rotation, 3 scale, 4 Euler; ``typeID`` 4;
  ``customType`` 4 for Euler, else 0.
* Humanoid (classID 95): ``attribute`` = Unity's fixed muscle/IK index, ``customType`` 8.
* BlendShape (``blendShape.NAME``, classID 137): ``attribute`` = CRC-32 of NAME, ``typeID`` 137,
  ``customType`` 20.
* Other float properties: ``attribute`` = CRC-32 of the attribute string.
* Single-key (constant) curves get no binding.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from ...engine.float_curves import muscle_index

__all__ = [
    "crc32",
    "Binding",
    "HUMANOID_IK_INDEX",
    "TRANSFORM_ATTRIBUTE",
    "transform_binding",
    "float_binding",
    "binding_lines",
]

#: Transform binding attribute per runtime curve list.
TRANSFORM_ATTRIBUTE = {"position": 1, "quaternion": 2, "scale": 3, "euler": 4}


def _humanoid_ik() -> dict[str, int]:
    """Root and IK goal attribute indices: ``RootT.x`` = 7 ... ``RootQ.w`` = 13, ``LeftFootT.x`` = 14 ...
    ``RightHandQ.w`` = 41 (MotionT/MotionQ are 0-6)."""
    names = ["Motion", "Root", "LeftFoot", "RightFoot", "LeftHand", "RightHand"]
    out = {}
    i = 0
    for n in names:
        for part, comps in (("T", "xyz"), ("Q", "xyzw")):
            for c in comps:
                out[f"{n}{part}.{c}"] = i
                i += 1
    return out


HUMANOID_IK_INDEX = _humanoid_ik()


def crc32(s: str) -> int:
    """CRC-32 (IEEE) of the UTF-8 bytes of ``s``, as Unity stores binding hashes (unsigned)."""
    return zlib.crc32(s.encode("utf-8")) & 0xFFFFFFFF


@dataclass(frozen=True)
class Binding:
    """One generic binding (the fields Unity writes)."""

    path: int
    attribute: int
    type_id: int
    custom_type: int = 0
    is_pptr: int = 0
    script: str = "{fileID: 0}"


def transform_binding(path: str, kind: str) -> Binding:
    """Binding of a transform curve: ``kind`` in ``position``, ``quaternion``, ``scale``, ``euler``."""
    return Binding(crc32(path), TRANSFORM_ATTRIBUTE[kind], 4, 4 if kind == "euler" else 0)


def float_binding(path: str, attribute: str, class_id: int, script: str = "{fileID: 0}") -> Binding:
    """Binding of a float curve (humanoid, blend shape or generic property)."""
    if class_id == 95 and attribute in HUMANOID_IK_INDEX:
        return Binding(crc32(path), HUMANOID_IK_INDEX[attribute], 95, 8)
    if class_id == 95 and muscle_index(attribute) is not None:  # muscles follow the goals: 42..136
        return Binding(crc32(path), len(HUMANOID_IK_INDEX) + muscle_index(attribute), 95, 8)
    if attribute.startswith("blendShape."):
        return Binding(crc32(path), crc32(attribute[len("blendShape.") :]), class_id, 20)
    return Binding(crc32(path), crc32(attribute), class_id, 0, 0, script)


def binding_lines(b: Binding, key_style: str = "typeID", sv7: bool = False, versioned: bool = True) -> str:
    """YAML text of one ``genericBindings`` item at Unity's indentation (4 spaces), ending in a newline.

    ``key_style``: ``"typeID"`` (2017+) or ``"classID"`` (Unity 4.x-5.x files); ``versioned`` adds the
    ``serializedVersion: 2`` line; ``sv7`` adds ``isIntCurve`` / ``isSerializeReferenceCurve``.
    """
    lines = []
    first = True

    def add(k: str, v) -> None:
        nonlocal first
        lines.append(("    - " if first else "      ") + f"{k}: {v}\n")
        first = False

    if versioned:
        add("serializedVersion", 2)
    add("path", b.path)
    add("attribute", b.attribute)
    add("script", b.script)
    add(key_style, b.type_id)
    add("customType", b.custom_type)
    add("isPPtrCurve", b.is_pptr)
    if sv7:
        add("isIntCurve", 0)
        add("isSerializeReferenceCurve", 0)
    return "".join(lines)
