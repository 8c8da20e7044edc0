"""CSV reader and writer speed against the csv module, in the same run (issue 10).

Run: ``.venv/bin/python benchmarks/csv_io.py`` (about a minute on the shared 2-core machine).

Two files:

* a generated mocap-like clip of 65 tracks x 1,295 frames at 120 fps (random-walk Euler motion, full
  precision values), written by ``write_csv``: about 16 MB, the size of the clip in issue 10;
* the corpus's largest BVH (``../shared/corpus/bvh``, by file size) converted to CSV.

For each, best of ``REPEATS`` interleaved runs (the machine is shared; figures are inflated by the others'
load):

* write: ``write_csv(clip, path)`` (the whole writer: Euler/quaternion/speed rows from the clip, the
  tangent check, formatting, the atomic write) against a plain ``csv.writer`` writing the same rows
  (path, time, x, y, z, qx, qy, qz, qw, speed) from already computed numbers to a file;
* "format only": ``format_csv`` of the same rows written to the file, against the same baseline (the
  part of the writer both do: ``repr`` of every float, which both use, is most of either's time);
* read: ``read_csv(path)`` (the whole reader: parse, checks, tracks with tangents) against a plain
  ``csv.reader`` + ``float()`` per cell into one numpy array.

Goal: ours at or under 0.5x the csv module's time for write and read, on both files (PASS/FAIL per
row; the "format only" row is informative and judged the same way).
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curveeditor.engine.clip import Clip, RotationTrack  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402
from curveeditor.io.bvh import read_bvh  # noqa: E402
from curveeditor.io.csv_io import format_csv, read_csv, track_rows, write_csv  # noqa: E402

REPEATS = 5
GOAL = 0.5
CORPUS = ROOT.parent / "shared" / "corpus" / "bvh"


def mocap_clip(tracks: int = 65, frames: int = 1295, fps: float = 120.0, seed: int = 1) -> Clip:
    rng = np.random.default_rng(seed)
    t = np.arange(frames) / fps
    out = []
    for k in range(tracks):
        v = np.cumsum(rng.normal(0.0, 2.0, (frames, 3)), axis=0)
        out.append(RotationTrack(f"Armature/Hips/Bone{k:02d}", "euler", make_curve(t, v), order="zxy"))
    return Clip("mocap", fps, tuple(out))


def best(*fns, repeats: int = REPEATS) -> list[float]:
    """Best time of each function, runs interleaved (a, b, a, b, ...) so that load drifting on the
    shared machine hits both sides of a ratio alike."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return [min(t) for t in times]


def baseline_write(rows_by_track, path: str, with_order: bool) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        header = ["path", "time", "x", "y", "z", "qx", "qy", "qz", "qw", "speed"]
        w.writerow(header[:1] + ["order"] + header[1:] if with_order else header)
        for name, order, cols in rows_by_track:
            n = len(cols[0])
            lead = [[name] * n, [order] * n] if with_order else [[name] * n]
            w.writerows(zip(*lead, *cols, strict=True))


def baseline_read(path: str) -> None:
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        text_cols = [i for i, h in enumerate(header) if h in ("path", "order")]
        num_cols = [i for i, h in enumerate(header) if h not in ("path", "order")]
        strings, values = [], []
        for row in r:
            strings.append([row[i] for i in text_cols])
            values.append([float(row[i]) for i in num_cols])
    arr = np.array(values)
    assert arr.shape[1] == len(num_cols)


def measure(label: str, clip: Clip, folder: str) -> list[list[str]]:
    ours_path = os.path.join(folder, "ours.csv")
    base_path = os.path.join(folder, "base.csv")
    blocks = [track_rows(t) for t in clip.tracks]
    rows_by_track = [
        (b.path, b.order, [b.times.tolist(), *b.euler.T.tolist(), *b.quats.T.tolist(), b.speed.tolist()])
        for b in blocks
    ]
    with_order = any(b.order != "zxy" for b in blocks)
    w_ours, w_fmt, w_base = best(
        lambda: write_csv(clip, ours_path),
        lambda: Path(ours_path).write_text(format_csv(blocks)),
        lambda: baseline_write(rows_by_track, base_path, with_order),
    )
    write_csv(clip, ours_path)
    mb = os.path.getsize(ours_path) / 1e6
    r_ours, r_base = best(lambda: read_csv(ours_path), lambda: baseline_read(ours_path))
    # Same content both ways (the baseline file is what a script writes: same text for these rows).
    same = Path(ours_path).read_bytes() == Path(base_path).read_bytes()
    back = read_csv(ours_path)
    assert [t.path for t in back.tracks] == [t.path for t in clip.tracks]
    out = []
    ops = (("write", w_ours, w_base), ("  format only", w_fmt, w_base), ("read", r_ours, r_base))
    for what, ours, base in ops:
        ratio = ours / base
        out.append(
            [
                label,
                f"{mb:.1f}",
                what,
                f"{ours:.3f}",
                f"{mb / ours:.1f}",
                f"{base:.3f}",
                f"{mb / base:.1f}",
                f"{ratio:.2f}",
                "PASS" if ratio <= GOAL else "FAIL",
            ]
        )
    out[0][0] += "" if same else " (files differ)"
    return out


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        clip = mocap_clip()
        rows += measure(f"generated {len(clip.tracks)} tracks x 1295 frames", clip, folder)
        bvhs = sorted(CORPUS.glob("*.bvh"), key=lambda p: p.stat().st_size) if CORPUS.is_dir() else []
        if bvhs:
            largest = bvhs[-1]
            clip = read_bvh(largest)
            rows += measure(f"{largest.name[:40]} ({len(clip.tracks)} tracks)", clip, folder)
        else:
            print("corpus not found: the BVH row is skipped")
    headers = ["file", "MB", "op", "ours s", "ours MB/s", "csv s", "csv MB/s", "ratio", f"<= {GOAL}x"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(f"best of {REPEATS}; shared 2-core machine: absolute times inflated by other load, ratios same-run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
