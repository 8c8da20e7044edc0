"""Valid seed files for the fuzzer, made in code from a ``random.Random``.

* ``.anim`` and CSV seeds are small clips built with the engine (``tangents.make_curve``) and written
  by the project's own writers (``io.anim.anim_text``, ``io.csv_io.write_csv``), or the bundled demo
  clip (``curveeditor.samples``); so a seed is exactly what our writers produce today.
* BVH seeds are hand-made text (the project has no BVH writer): a joint tree with per-joint rotation
  orders, a root with position channels, ``Frames``/``Frame Time`` and random channel values.

Track paths and joint names are plain here (``Hips``, ``Hips/Spine``...); awkward names (``%``,
quotes, newlines, 100 KB names) are introduced by :mod:`.mutations`, so a seed never fails to write.
Seeds are cached by their parameters (the writers cost tens of milliseconds).
"""

from __future__ import annotations

import functools
import os
import random
import tempfile

import numpy as np

#: Joint / track names used by seeds (a chain, so .anim paths nest).
NAMES = ("Hips", "Spine", "Chest", "Neck", "Head", "LeftArm", "RightArm", "LeftLeg")
#: BVH channel orders (intrinsic, as listed on CHANNELS lines).
BVH_ORDERS = ("ZXY", "XYZ", "YXZ", "ZYX", "YZX", "XZY")
#: Frame times a BVH seed may declare (seconds).
FRAME_TIMES = ("0.033333", "0.0333333", "0.008333", "0.04", "0.1", "1")


def _paths(n: int) -> list[str]:
    out, parent = [], ""
    for k in range(n):
        name = NAMES[k % len(NAMES)] + ("" if k < len(NAMES) else str(k))
        parent = name if not parent else f"{parent}/{name}"
        out.append(parent)
    return out


@functools.lru_cache(maxsize=64)
def _clip(n_tracks: int, n_keys: int, kinds: str, step: float, seed: int, spread: float):
    """A small clip: ``kinds`` is a string of 'e'/'q' per track; values from ``seed``."""
    from curveeditor.engine.clip import EULER, QUATERNION, Clip, RotationTrack
    from curveeditor.engine.rotations import quat_normalize
    from curveeditor.engine.tangents import make_curve

    rs = np.random.default_rng(seed)
    t = np.arange(n_keys, dtype=np.float64) * step
    tracks = []
    for path, kind in zip(_paths(n_tracks), kinds, strict=True):
        if kind == "e":
            e = np.cumsum(rs.normal(0.0, spread, size=(n_keys, 3)), axis=0)
            tracks.append(RotationTrack(path, EULER, make_curve(t, e, mode="clamped_auto")))
        else:
            q = quat_normalize(rs.normal(size=(n_keys, 4)))
            tracks.append(RotationTrack(path, QUATERNION, make_curve(t, q, mode="auto")))
    return Clip(
        name="seed",
        frame_rate=round(1.0 / step) if step < 1 else 1.0,
        tracks=tracks,
        meta={"format": "generated"},
    )


def _clip_params(rng: random.Random) -> tuple:
    n_tracks = rng.randint(1, 4)
    return (
        n_tracks,
        rng.choice((1, 2, 3, 5, 8, 13)),
        "".join(rng.choice("eeq") for _ in range(n_tracks)),
        rng.choice((1 / 30, 1 / 60, 0.1, 0.5)),
        rng.randrange(1000),
        rng.choice((5.0, 30.0, 120.0)),
    )


@functools.lru_cache(maxsize=64)
def _anim_bytes(params: tuple, mode: str | None) -> bytes:
    from curveeditor.io.anim import anim_text

    text, _warnings = anim_text(_clip(*params), mode=mode)
    return text.encode("utf-8")


@functools.lru_cache(maxsize=64)
def _csv_bytes(params: tuple, keys_only: bool) -> bytes:
    from curveeditor.io.csv_io import write_csv

    with tempfile.TemporaryDirectory(prefix="fuzz-seed-") as d:
        path = os.path.join(d, "seed.csv")
        write_csv(_clip(*params), path, keys_only=keys_only)
        with open(path, "rb") as f:
            return f.read()


@functools.lru_cache(maxsize=4)
def _demo_bytes(ext: str) -> bytes:
    from curveeditor.samples import demo_clip

    clip = demo_clip()
    if ext == ".anim":
        return _anim_text(clip)
    from curveeditor.io.csv_io import write_csv

    with tempfile.TemporaryDirectory(prefix="fuzz-seed-") as d:
        path = os.path.join(d, "demo.csv")
        write_csv(clip, path, keys_only=True)
        with open(path, "rb") as f:
            return f.read()


def _anim_text(clip) -> bytes:
    from curveeditor.io.anim import anim_text

    return anim_text(clip)[0].encode("utf-8")


def anim_seed(rng: random.Random) -> bytes:
    """A valid ``.anim`` file (UTF-8 bytes): a random small clip, or the demo clip (1 in 8)."""
    if rng.random() < 0.125:
        return _demo_bytes(".anim")
    return _anim_bytes(_clip_params(rng), rng.choice((None, None, "euler", "quaternion")))


def csv_seed(rng: random.Random) -> bytes:
    """A valid CSV file: full rows (Euler + quaternion + speed) or ``keys_only``; or the demo clip."""
    if rng.random() < 0.125:
        return _demo_bytes(".csv")
    return _csv_bytes(_clip_params(rng), rng.random() < 0.5)


def bvh_text(
    depth: int = 2,
    siblings: int = 1,
    frames: int = 3,
    frame_time: str = "0.033333",
    orders: list[str] | None = None,
    values: np.ndarray | None = None,
    names: list[str] | None = None,
) -> str:
    """BVH text: a root (6 channels) with ``siblings`` chains of ``depth`` joints (3 rotation channels
    each, ``orders`` cycled), an End Site per chain, ``frames`` frames of ``values`` (frames x
    channels, degrees / file units; default zeros). Written iteratively so 3,000 levels are cheap."""
    orders = orders or ["ZXY"]
    lines = [
        "HIERARCHY",
        "ROOT Hips",
        "{",
        "  OFFSET 0.0 0.0 0.0",
        f"  CHANNELS 6 Xposition Yposition Zposition {' '.join(c + 'rotation' for c in orders[0])}",
    ]
    n_channels = 6
    k = 0
    for s in range(siblings):
        for d in range(depth):
            order = orders[(k + 1) % len(orders)]
            name = names[k % len(names)] if names else f"J{s}_{d}"
            ind = _indent(d + 1)
            lines += [
                f"{ind}JOINT {name}",
                f"{ind}{{",
                f"{ind}  OFFSET 0.0 1.0 0.0",
                f"{ind}  CHANNELS 3 {' '.join(c + 'rotation' for c in order)}",
            ]
            n_channels += 3
            k += 1
        ind = _indent(depth + 1)
        lines += [f"{ind}End Site", f"{ind}{{", f"{ind}  OFFSET 0.0 1.0 0.0", f"{ind}}}"]
        for d in reversed(range(depth)):
            lines.append(_indent(d + 1) + "}")
    lines += ["}", "MOTION", f"Frames: {frames}", f"Frame Time: {frame_time}"]
    if values is None:
        values = np.zeros((frames, n_channels))
    values = np.asarray(values, dtype=np.float64).reshape(frames, n_channels)
    lines += [" ".join(f"{v:.6g}" for v in row) for row in values]
    return "\n".join(lines) + "\n"


def _indent(level: int) -> str:
    """Two spaces per level up to 16 levels, then flat (3,000 levels would otherwise be 9 MB of blanks)."""
    return "  " * min(level, 16)


def bvh_seed(rng: random.Random) -> bytes:
    """A valid BVH: 1-2 chains of 1-4 joints, mixed rotation orders (1 in 3), 1-12 frames."""
    depth, siblings, frames = rng.randint(1, 4), rng.randint(1, 2), rng.choice((1, 2, 3, 5, 12))
    n = 6 + 3 * depth * siblings
    orders = [rng.choice(BVH_ORDERS) for _ in range(3)] if rng.random() < 0.33 else ["ZXY"]
    rs = np.random.default_rng(rng.randrange(1 << 30))
    values = np.cumsum(rs.normal(0.0, rng.choice((2.0, 20.0, 90.0)), size=(frames, n)), axis=0)
    return bvh_text(depth, siblings, frames, rng.choice(FRAME_TIMES), orders, values).encode("ascii")


SEEDERS = {".anim": anim_seed, ".csv": csv_seed, ".bvh": bvh_seed}
