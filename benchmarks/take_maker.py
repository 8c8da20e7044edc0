"""Long mocap takes for the long-take benchmarks and reproductions (issue 26).

A *forward-and-back* take plays a real BVH's frames forward, then backward, then forward again, ...
to the length asked for: no seams (each turn repeats the turning frame's neighbour), the real rig's
motion and channel layout, any number of minutes. :func:`write_take` writes one, with an optional
fast swing (degrees per second) on one joint after a given time, which is what long takes break on
(float32 key times lose precision as the clock runs: at 137 s a time is good to 7.6e-6 s).

Run: ``.venv/bin/python benchmarks/take_maker.py OUT.bvh --frames 72000 [--source X.bvh] [--rate 120]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
if not CORPUS.exists():
    CORPUS = Path("/work/shared/corpus")
#: The corpus's 31-joint, 120 fps CMU clip (the CMU skeleton of 01_01: Hips, LowerBack, Spine, ...).
CMU_WALK = CORPUS / "bvh" / "VictorS-67__pybvh__bvh_data_cmu_12_01_walk.bvh"


def forward_and_back(rows: np.ndarray, frames: int) -> np.ndarray:
    """``(frames, C)``: ``rows`` (``(F, C)``) played forward, back, forward, ... (the turning frames
    are not repeated, so the motion has no seam and no held frame)."""
    cycle = np.concatenate([rows, rows[-2:0:-1]]) if len(rows) > 2 else rows
    reps = -(-frames // len(cycle))
    return np.tile(cycle, (reps, 1))[:frames]


def _header_and_rows(source: Path) -> tuple[str, np.ndarray, float]:
    text = source.read_text()
    head, _, motion = text.partition("MOTION")
    lines = motion.strip().splitlines()
    frame_time = float(lines[1].split(":", 1)[1])
    rows = np.loadtxt(lines[2:], ndmin=2)
    return head, rows, frame_time


def swing_columns(head: str, joint: str) -> list[int]:
    """Motion columns of ``joint``'s rotation channels in a BVH header (file order)."""
    col = 0
    name = None
    for raw in head.splitlines():
        words = raw.split()
        if not words:
            continue
        if words[0] in ("ROOT", "JOINT"):
            name = words[1]
        elif words[0] == "CHANNELS":
            n = int(words[1])
            if name == joint:
                return [col + i for i, c in enumerate(words[2 : 2 + n]) if c.lower().endswith("rotation")]
            col += n
    raise KeyError(joint)


def write_take(
    path: Path,
    frames: int,
    source: Path | None = None,
    rate: float | None = None,
    swing_deg_s: float = 3000.0,
    swing_after_s: float = 60.0,
    swing_joint: str = "LeftForeArm",
) -> Path:
    """Write a forward-and-back take of ``source`` (default the corpus CMU walk, else a generated
    CMU-style clip) with ``frames`` frames at ``rate`` fps (default the source's), and a 0.5 s swing
    of ``swing_joint``'s first rotation channel peaking at ``swing_deg_s`` deg/s starting at
    ``swing_after_s`` seconds (when the take is that long). Returns ``path``."""
    if source is None and not CMU_WALK.is_file():
        from anim_io import write_cmu_style_bvh

        source = path.with_suffix(".src.bvh")
        write_cmu_style_bvh(source)
    head, rows, frame_time = _header_and_rows(source or CMU_WALK)
    fps = rate or round(1.0 / frame_time, 6)
    table = forward_and_back(rows, frames)
    try:
        cols = swing_columns(head, swing_joint)
    except KeyError:
        cols = swing_columns(head, head.split("JOINT", 1)[1].split()[0])
    start = int(round(swing_after_s * fps))
    if swing_deg_s and start < frames:
        n = min(frames - start, int(round(0.5 * fps)))
        t = np.arange(n) / fps
        shape = np.sin(2.0 * np.pi * 2.0 * t) * np.hanning(n + 2)[1:-1]  # a 2 Hz swing, eased in and out
        peak = np.abs(np.diff(shape)).max() * fps  # deg/s per degree of amplitude, as the frames step
        table[start : start + n, cols[0]] += shape * (swing_deg_s / peak)
    motion = f"MOTION\nFrames: {frames}\nFrame Time: {1.0 / fps:.8f}\n"
    with open(path, "w") as fh:
        fh.write(head)
        fh.write(motion)
        np.savetxt(fh, table, fmt="%.4f")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--frames", type=int, default=72_000)
    ap.add_argument("--source", type=Path)
    ap.add_argument("--rate", type=float)
    ap.add_argument("--swing", type=float, default=3000.0, help="peak deg/s of the swing after 60 s")
    args = ap.parse_args(argv)
    write_take(args.out, args.frames, args.source, args.rate, args.swing)
    print(f"{args.out}: {args.frames} frames, {args.out.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
