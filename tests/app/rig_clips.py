"""Generated production-like rigs for the GUI tests and ``benchmarks/gui.py`` (no files needed).

* :func:`biped_clip`: a 99-track 3ds Max Biped-like rig with long paths (``Bip001/Bip001 Pelvis/
  Bip001 Spine/.../Bip001 L Clavicle/...``), 13 levels deep at the fingers.
* :func:`namespaced_clip`: Mixamo-style ``mixamorig:Hips/mixamorig:Spine/...`` names.
* :func:`many_tracks_clip`: ``n`` tracks of smooth motion under one root.
"""

from __future__ import annotations

import numpy as np

from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.tangents import make_curve

__all__ = [
    "biped_paths",
    "biped_clip",
    "namespaced_clip",
    "many_tracks_clip",
    "humanoid_muscle_clip",
    "DEEP_BIPED_BONE",
]


def biped_paths() -> list[str]:
    """99 Biped bone paths, parents before children."""
    paths: list[str] = []

    def add(parent: str, name: str) -> str:
        p = f"{parent}/Bip001 {name}" if parent else f"Bip001{(' ' + name) if name else ''}"
        paths.append(p)
        return p

    root = add("", "")
    pelvis = add(root, "Pelvis")
    spine = add(pelvis, "Spine")
    s1 = add(spine, "Spine1")
    s2 = add(s1, "Spine2")
    neck = add(s2, "Neck")
    head = add(neck, "Head")
    for k in range(4):
        head = add(head, f"HeadNub{k}" if k else "Ponytail1")
    for side in ("L", "R"):
        c = add(neck, f"{side} Clavicle")
        ua = add(c, f"{side} UpperArm")
        fa = add(ua, f"{side} Forearm")
        add(fa, f"{side} ForeTwist")
        hand = add(fa, f"{side} Hand")
        for f in range(5):
            b = hand
            for j in range(3):
                b = add(b, f"{side} Finger{f}{j if j else ''}")
            add(b, f"{side} Finger{f}Nub")
        th = add(pelvis, f"{side} Thigh")
        add(th, f"{side} ThighTwist")
        calf = add(th, f"{side} Calf")
        add(calf, f"{side} CalfTwist")
        foot = add(calf, f"{side} Foot")
        for t in range(3):
            add(add(foot, f"{side} Toe{t}"), f"{side} Toe{t}Nub")
    paths = paths[:99]
    while len(paths) < 99:
        paths.append(f"{root}/Bip001 Prop{len(paths)}")
    return paths


#: a 13-level-deep bone of :func:`biped_clip` (depth counted in path parts)
DEEP_BIPED_BONE = (
    "Bip001/Bip001 Pelvis/Bip001 Spine/Bip001 Spine1/Bip001 Spine2/Bip001 Neck/Bip001 L Clavicle/"
    "Bip001 L UpperArm/Bip001 L Forearm/Bip001 L Hand/Bip001 L Finger1/Bip001 L Finger11/Bip001 L Finger12"
)


def _tracks(paths, n_keys: int, rate: float, seed: int) -> list[RotationTrack]:
    rng = np.random.default_rng(seed)
    t = np.arange(n_keys) / rate
    out = []
    for p in paths:
        amp = rng.uniform(5, 80, 3)
        freq = rng.uniform(0.1, 1.5, 3)
        phase = rng.uniform(0, 2 * np.pi, 3)
        e = amp * np.sin(2 * np.pi * freq * t[:, None] + phase)
        out.append(RotationTrack(p, "euler", make_curve(t, e)))
    return out


def biped_clip(n_keys: int = 300, rate: float = 30.0) -> Clip:
    return Clip("biped", rate, _tracks(biped_paths(), n_keys, rate, 1))


def namespaced_clip(n_keys: int = 120, rate: float = 30.0) -> Clip:
    chain = ["Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "HeadTop_End"]
    paths, acc = [], []
    for b in chain:
        acc.append(f"mixamorig:{b}")
        paths.append("/".join(acc))
    for side in ("Left", "Right"):
        arm = ["/".join(acc[:4])]
        for b in ("Shoulder", "Arm", "ForeArm", "Hand"):
            arm.append(f"{arm[-1]}/mixamorig:{side}{b}")
            paths.append(arm[-1])
    return Clip("mixamo", rate, _tracks(paths, n_keys, rate, 2))


def many_tracks_clip(n: int = 60, n_keys: int = 600, rate: float = 60.0) -> Clip:
    paths = [f"Root/Group{i // 10}/Bone{i:02d}" for i in range(n)]
    return Clip("many", rate, _tracks(paths, n_keys, rate, 3))


def humanoid_muscle_clip(n_keys: int = 31, rate: float = 30.0, shuffle: bool = True) -> Clip:
    """A full-body humanoid clip as Unity's Animator records it: one float curve per muscle (all
    95 of ``HumanTrait.MuscleName``, values in -1..1) plus ``RootT.x/y/z`` (metres), classID 95,
    path '', in a shuffled order (FBX-derived clips do not follow Unity's), and a blend shape."""
    from curveeditor.engine.clip import OtherTrack
    from curveeditor.engine.float_curves import HUMAN_MUSCLES

    rng = np.random.default_rng(4)
    t = np.arange(n_keys) / rate
    names = [*HUMAN_MUSCLES, "RootT.x", "RootT.y", "RootT.z"]
    order = rng.permutation(len(names)) if shuffle else np.arange(len(names))
    others = []
    for k in order:
        v = 0.6 * np.sin(2 * np.pi * rng.uniform(0.2, 1.0) * t + rng.uniform(0, 6))[:, None]
        c = make_curve(t, v)
        others.append(OtherTrack("", names[k], "float", c, c.time, {"list": "m_FloatCurves", "class_id": 95}))
    c = make_curve(t, 50 + 40 * np.sin(t)[:, None])
    others.append(
        OtherTrack("Body", "blendShape.Smile", "float", c, c.time, {"list": "m_FloatCurves", "class_id": 137})
    )
    return Clip("humanoid", rate, (), others)
