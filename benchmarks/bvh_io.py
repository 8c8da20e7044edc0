"""BVH reader scaling (issue 11): sibling joints and nesting depth, and BVH -> CSV of the widest file.

Run: ``.venv/bin/python benchmarks/bvh_io.py`` (about half a minute on the shared 2-core machine).

Generated files (2 frames each): 1,000 / 10,000 / 30,000 sibling joints under one root, and a chain of
3,000 nested joints. For each: ``read_bvh`` seconds (best of 3) and microseconds per joint; then
``write_csv`` of the 10,000-sibling clip (the ``convert X.bvh Y.csv`` work after reading). Goals:

* linear in joints: the per-joint time at 30,000 joints within 2x of that at 1,000 (the duplicate-path
  check was quadratic: 10,000 joints took 4.6 s, 20,000 took 25 s);
* read + write_csv of 10,000 siblings under 5 s (the issue's bound for the whole command is 20 s);
* 3,000 nested joints read without RecursionError.

Timings on the shared machine are inflated by the other helpers' load; the ratios are same-run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curveeditor.io.bvh import read_bvh  # noqa: E402
from curveeditor.io.csv_io import write_csv  # noqa: E402


def siblings(n: int) -> str:
    out = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    for i in range(n):
        out += [f"JOINT J{i}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
        out += ["End Site", "{", "OFFSET 0 1 0", "}", "}"]
    out += ["}", "MOTION", "Frames: 2", "Frame Time: 0.033333"]
    out += [" ".join(["1"] * (3 + 3 * n))] * 2
    return "\n".join(out) + "\n"


def chain(depth: int) -> str:
    out = ["HIERARCHY", "ROOT J0", "{", "OFFSET 0 0 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    for i in range(1, depth):
        out += [f"JOINT J{i}", "{", "OFFSET 0 1 0", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    out += ["}"] * depth + ["MOTION", "Frames: 2", "Frame Time: 0.033333"]
    out += [" ".join(["0"] * (3 * depth))] * 2
    return "\n".join(out) + "\n"


def best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    rows, per_joint = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for label, text, joints in (
            ("1,000 siblings", siblings(1_000), 1_001),
            ("10,000 siblings", siblings(10_000), 10_001),
            ("30,000 siblings", siblings(30_000), 30_001),
            ("3,000 nested", chain(3_000), 3_000),
        ):
            path = Path(folder) / "x.bvh"
            path.write_text(text)
            s = best(lambda path=path: read_bvh(path))
            per_joint[label] = s / joints * 1e6
            rows.append([label, f"{joints:,}", f"{s:.3f}", f"{per_joint[label]:.0f}"])
            if label == "10,000 siblings":
                clip = read_bvh(path)
                w = best(lambda clip=clip: write_csv(clip, Path(folder) / "x.csv"))
                convert = s + w
    headers = ["file", "joints", "read s", "us/joint"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    ratio = per_joint["30,000 siblings"] / per_joint["1,000 siblings"]
    verdict = "PASS" if ratio <= 2 else "FAIL"
    print(f"linear: us/joint at 30,000 / at 1,000 = {ratio:.2f} (goal <= 2): {verdict}")
    verdict = "PASS" if convert < 5 else "FAIL"
    print(f"10,000 siblings read + write_csv: {convert:.2f} s (goal < 5 s): {verdict}")
    print("3,000 nested joints: read (no RecursionError): PASS")
    print("best of 3; shared 2-core machine: absolute times inflated by other load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
