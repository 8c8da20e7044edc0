"""Batch throughput: files/s and keys/s of ``run_batch`` for ``--jobs 1`` and ``--jobs 2``.

Sets: generated CSV clips (smooth motion stored wrapped, so the unwrap step has work) and, when
``../shared/corpus/bvh`` is present, the corpus BVH files (written as ``.anim`` when the ``.anim``
writer is available, else ``.csv``). The baseline of every ratio is ``--jobs 1`` on the same set;
files/s, keys/s and the ratio use the best of ``--repeat`` runs, ``first s`` is the first run (for
``--jobs 2`` it includes starting the worker pool's forkserver, about 1.4 s, once per process).
Also prints the BVH reader's load time per corpus file.

    .venv/bin/python benchmarks/batch.py [--jobs 1,2] [--files 24] [--tracks 8] [--keys 600]
                                         [--recipe R.json] [--no-corpus]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from curveeditor.batch import run_batch  # noqa: E402
from curveeditor.engine.recipe import Recipe  # noqa: E402

DEFAULT_RECIPE = {"version": 1, "steps": [{"op": "unwrap"}, {"op": "reduce", "max_error": 0.5}]}


def generate(folder: Path, files: int, tracks: int, keys: int, seed: int = 1) -> list[Path]:
    rng = np.random.default_rng(seed)
    out = []
    t = np.arange(keys) / 60.0
    for f in range(files):
        rows = ["path,time,x,y,z"]
        for k in range(tracks):
            speed = rng.uniform(100, 500)
            ph = rng.uniform(0, 6, 3)
            x = 25 * np.sin(1.3 * t + ph[0]) + rng.normal(0, 0.05, keys)
            y = speed * t + 30 * np.sin(0.7 * t + ph[1])
            y = (y + 180.0) % 360.0 - 180.0  # stored wrapped, as exporters do
            z = 15 * np.sin(2.1 * t + ph[2])
            path = f"Root/Bone{k}"
            rows += [
                f"{path},{a!r},{b!r},{c!r},{d!r}"
                for a, b, c, d in zip(t.tolist(), x.tolist(), y.tolist(), z.tolist(), strict=True)
            ]
        p = folder / f"gen{f:03d}.csv"
        p.write_text("\n".join(rows) + "\n")
        out.append(p)
    return out


def corpus_bvh() -> list[Path]:
    root = REPO.parent / "shared" / "corpus" / "bvh"
    return sorted(root.glob("*.bvh")) if root.is_dir() else []


def anim_writer_available() -> bool:
    try:
        import importlib

        from curveeditor.io import WRITE_FORMATS

        mod, fn = WRITE_FORMATS[".anim"]
        return hasattr(importlib.import_module(mod), fn)
    except Exception:
        return False


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def run_set(name: str, inputs: list[str], recipe: Recipe, args, work: Path, out_ext):
    """Best of ``args.repeat`` runs per job count; the ratio's baseline is jobs=1 (or the first count)."""
    rows = []
    digests = set()
    best_by_jobs = {}
    for jobs in args.jobs_list:
        best = first = None
        for rep_i in range(args.repeat):
            out = work / f"{name}-j{jobs}-{rep_i}"
            t0 = time.perf_counter()
            rep = run_batch(inputs, out, recipe, jobs=jobs, progress=lambda *a: None, out_ext=out_ext)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
            first = dt if first is None else first
            digests.add(digest(out) if out.exists() else "-")
        best_by_jobs[jobs] = best
        ok = [f for f in rep.files if f.ok]
        keys = sum(f.keys_before for f in ok)
        kept = sum(f.keys_after for f in ok)
        base = best_by_jobs.get(1, best_by_jobs[args.jobs_list[0]])
        n = len(rep.files)
        rows.append((name, jobs, n, len(ok), keys, kept, first, best, n / best, keys / best, base / best))
        for f in rep.files:
            if not f.ok:
                print(f"  failed: {f.error}", file=sys.stderr)
    return rows, len(digests) == 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", default="1,2", help="comma-separated job counts (default 1,2)")
    ap.add_argument("--files", type=int, default=24)
    ap.add_argument("--tracks", type=int, default=8)
    ap.add_argument("--keys", type=int, default=600)
    ap.add_argument("--recipe", help="recipe JSON (default: unwrap, reduce 0.5 deg)")
    ap.add_argument("--no-corpus", action="store_true", help="skip the corpus BVH set")
    ap.add_argument("--repeat", type=int, default=2, help="runs per job count; the best is shown")
    args = ap.parse_args(argv)
    args.jobs_list = [int(j) for j in args.jobs.split(",")]
    recipe = Recipe.load(args.recipe) if args.recipe else Recipe.from_dict(DEFAULT_RECIPE)
    print(f"recipe: {recipe.to_dict()['steps']}")

    with tempfile.TemporaryDirectory(prefix="ce-batch-bench-") as tmp:
        work = Path(tmp)
        gen_dir = work / "generated"
        gen_dir.mkdir()
        files = generate(gen_dir, args.files, args.tracks, args.keys)
        rows, same = run_set("generated", [str(gen_dir)], recipe, args, work, None)
        identical = {"generated": same}

        bvh = [] if args.no_corpus else corpus_bvh()
        if bvh:
            from curveeditor.io.bvh import read_bvh

            print("\nBVH read (curveeditor.io.bvh.read_bvh, best of 3)")
            print(f"{'file':<48} {'MB':>6} {'frames':>7} {'tracks':>6} {'ms':>8}")
            for p in bvh:
                best = min(_timed(read_bvh, p) for _ in range(3))
                clip = read_bvh(p)
                mb = p.stat().st_size / 1e6
                frames, ntracks = clip.meta["frames"], len(clip.tracks)
                print(f"{p.name[-48:]:<48} {mb:6.2f} {frames:7d} {ntracks:6d} {best * 1e3:8.1f}")
            ext = ".anim" if anim_writer_available() else ".csv"
            r2, same = run_set(f"corpus-bvh{ext}", [str(p) for p in bvh], recipe, args, work, ext)
            rows += r2
            identical[f"corpus-bvh{ext}"] = same

    print(f"\nbatch throughput ({len(files)} generated clips of {args.tracks} tracks x {args.keys} keys)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cores: {os.cpu_count()}, load average at the end: {load:.2f} (timings are noisy when > cores)")
    head = (
        f"{'set':<18} {'jobs':>4} {'files':>5} {'ok':>4} {'keys in':>9} {'keys out':>9} "
        f"{'first s':>8} {'best s':>8} {'files/s':>8} {'keys/s':>10} {'vs jobs=1':>9}"
    )
    print(head)
    print("-" * len(head))
    for name, jobs, n, ok, keys, kept, first, dt, fps, kps, ratio in rows:
        print(
            f"{name:<18} {jobs:>4} {n:>5} {ok:>4} {keys:>9} {kept:>9} "
            f"{first:8.2f} {dt:8.2f} {fps:8.2f} {kps:10.0f} {ratio:8.2f}x"
        )
    for name, same in identical.items():
        print(f"outputs identical across jobs ({name}): {'yes' if same else 'NO'}")
    return 0 if all(identical.values()) else 1


def _timed(fn, *a) -> float:
    t = time.perf_counter()
    fn(*a)
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
