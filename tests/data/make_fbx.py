"""Make the FBX test takes in ``tests/data/fbx/`` from small generated BVH clips (run once, commit the
outputs; needs Debian's ``blender``, run headless):

    .venv/bin/python tests/data/make_fbx.py [MODE...]   (default: every file)

Writes ``chain.bvh`` (7 joints, six rotation orders, a root that spins past 180 deg and translates,
a joint near gimbal lock; 120 frames at 30 fps) and from it, through Blender's FBX exporter
(``blender_fbx.py``): ``chain_empties.fbx`` (each joint an empty keyed with the BVH's own local
rotations: node rotations equal the BVH's), ``chain_armature.fbx`` (Blender's BVH importer: an
armature whose bones have rest orientations, as DCC takes do), ``chain_static.fbx`` (the empties, no
animation: a file without takes), ``chain_takes.fbx`` (one node, two actions: two animation
stacks) and ``chain_zup.fbx`` (the empties exported Z up: Unity's importer converts them to Y
up). ``tests/io/test_fbx.py`` compares them with the BVH frame by frame. Needs ``python3-numpy``
only for Blender's glTF importer (``benchmarks/blender_gltf.py``), not here.
Blender writes a time stamp into each file: re-running changes their bytes, not their content.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "fbx"

#: (name, parent index, offset, rotation channel order or "" for an end site)
JOINTS = [
    ("Hips", None, (0.0, 90.0, 0.0), "ZXY"),
    ("Spine", 0, (0.0, 10.0, 1.0), "ZYX"),
    ("Neck", 1, (0.0, 25.0, -2.0), "YXZ"),
    ("Head", 2, (0.0, 9.0, 1.5), "XYZ"),
    ("LeftUpLeg", 0, (9.0, -5.0, 0.0), "YZX"),
    ("LeftLeg", 4, (0.0, -40.0, 1.0), "XZY"),
    ("RightUpLeg", 0, (-9.0, -5.0, 0.0), "ZXY"),
]
ENDS = {3: (0.0, 12.0, 0.0), 5: (0.0, -42.0, 0.0), 6: (0.0, -40.0, 0.0)}
FRAMES, RATE = 120, 30


def angles(j: int, f: int) -> tuple[float, float, float]:
    """Degrees about X, Y, Z of joint ``j`` at frame ``f`` (smooth, large, one near gimbal lock)."""
    t = f / RATE
    if j == 0:
        return (10 * math.sin(2 * t), 100.0 * t - 150.0, 15 * math.sin(3 * t + 1))  # yaw past +-180
    if j == 2:
        return (84.0 + 4 * math.sin(5 * t), 30 * math.sin(t), 20 * math.cos(2 * t))  # near lock (YXZ: X)
    a = 35.0 + 7 * j
    return (a * math.sin(1.7 * t + j), 0.6 * a * math.sin(2.3 * t - j), 0.4 * a * math.cos(1.1 * t + 2 * j))


def bvh_text() -> str:
    lines = ["HIERARCHY"]
    children: dict[int | None, list[int]] = {}
    for k, (_n, p, _o, _c) in enumerate(JOINTS):
        children.setdefault(p, []).append(k)

    def emit(k: int, depth: int) -> None:
        name, parent, off, order = JOINTS[k]
        pad = "  " * depth
        lines.append(f"{pad}{'ROOT' if parent is None else 'JOINT'} {name}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {off[0]:.4f} {off[1]:.4f} {off[2]:.4f}")
        rot = " ".join(f"{c}rotation" for c in order)
        chans = f"6 Xposition Yposition Zposition {rot}" if parent is None else f"3 {rot}"
        lines.append(f"{pad}  CHANNELS {chans}")
        for c in children.get(k, []):
            emit(c, depth + 1)
        if k in ENDS:
            e = ENDS[k]
            site = f"{pad}    OFFSET {e[0]:.4f} {e[1]:.4f} {e[2]:.4f}"
            lines.extend([f"{pad}  End Site", pad + "  {", site, pad + "  }"])
        lines.append(pad + "}")

    emit(0, 0)
    lines += ["MOTION", f"Frames: {FRAMES}", f"Frame Time: {1.0 / RATE:.8f}"]
    order = []

    def walk(k: int) -> None:
        order.append(k)
        for c in children.get(k, []):
            walk(c)

    walk(0)
    for f in range(FRAMES):
        row = []
        for k in order:
            if JOINTS[k][1] is None:
                t = f / RATE
                row += [20 * math.sin(t), 90 + 3 * math.sin(4 * t), 40 * t]
            ang = dict(zip("XYZ", angles(k, f), strict=True))
            row += [ang[c] for c in JOINTS[k][3]]
        lines.append(" ".join(f"{v:.6f}" for v in row))
    return "\n".join(lines) + "\n"


def main() -> int:
    blender = shutil.which("blender")
    if blender is None:
        print("make_fbx.py: needs Debian's blender (apt-get install blender)", file=sys.stderr)
        return 1
    OUT.mkdir(exist_ok=True)
    bvh = OUT / "chain.bvh"
    bvh.write_text(bvh_text())
    modes = sys.argv[1:] or ["empties", "armature", "static", "takes", "zup"]
    for mode in modes:
        dst = OUT / f"chain_{mode}.fbx"
        subprocess.run(
            [
                blender,
                "-b",
                "--factory-startup",
                "--python",
                str(HERE / "blender_fbx.py"),
                "--",
                str(bvh),
                str(dst),
                mode,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"{dst.relative_to(HERE.parent.parent)}: {dst.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
