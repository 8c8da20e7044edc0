"""Batch throughput: files/s and keys/s of ``run_batch`` for ``--jobs 1``, ``--jobs 2`` and a
2-worker Dask cluster (``--scheduler``), with the scaling ratio against ``--jobs 1``.

Sets: 200 generated CSV clips (smooth motion stored wrapped, so the unwrap step has work) and, when
``../shared/corpus/bvh`` is present, the corpus BVH files (written as ``.anim``). Engines (``--engines``):

* ``jobs1``: in this process; ``jobs2``: two forkserver worker processes;
* ``dask2``: a Dask ``LocalCluster`` of two single-threaded worker processes on 127.0.0.1, started
  once before the runs (its start-up is printed on its own line, not in the runs); or the cluster at
  ``--scheduler tcp://HOST:PORT`` when given. Needs the ``cluster`` extra; skipped without it.

The baseline of every ratio is ``jobs1`` on the same set; files/s, keys/s and the ratio use the best
of ``--repeat`` runs, ``first s`` is the first run (for ``jobs2`` it includes starting the worker
pool's forkserver, about 1.4 s; for ``dask2`` the workers' first import of the engine). Every run's
outputs are hashed: the script fails (exit 1) unless all engines wrote the same bytes. Also prints the
BVH reader's load time per corpus file. On a machine shared with other work the absolute figures are
inflated; the load average is printed with the table.

    .venv/bin/python benchmarks/batch.py [--engines jobs1,jobs2,dask2] [--files 200] [--tracks 4]
                                         [--keys 300] [--recipe R.json] [--no-corpus] [--repeat 2]
                                         [--scheduler tcp://HOST:PORT]
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

from curveeditor.batch.runner import run_batch  # noqa: E402
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


ENGINES = ("jobs1", "jobs2", "dask2")


def run_set(name: str, inputs: list[str], recipe: Recipe, args, work: Path, out_ext):
    """Best of ``args.repeat`` runs per engine; the ratio's baseline is jobs1 (or the first engine)."""
    rows = []
    digests = set()
    best_by_engine = {}
    for engine in args.engine_list:
        kw = {"scheduler": args.scheduler_address} if engine == "dask2" else {"jobs": int(engine[4:])}
        best = first = None
        for rep_i in range(args.repeat):
            out = work / f"{name}-{engine}-{rep_i}"
            t0 = time.perf_counter()
            rep = run_batch(
                inputs, out, recipe, progress=lambda *a: None, log=lambda line: None, out_ext=out_ext, **kw
            )
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
            first = dt if first is None else first
            digests.add(digest(out) if out.exists() else "-")
        best_by_engine[engine] = best
        ok = [f for f in rep.files if f.ok]
        keys = sum(f.keys_before for f in ok)
        kept = sum(f.keys_after for f in ok)
        base = best_by_engine.get("jobs1", best_by_engine[args.engine_list[0]])
        n = len(rep.files)
        rows.append((name, engine, n, len(ok), keys, kept, first, best, n / best, keys / best, base / best))
        for f in rep.files:
            if not f.ok:
                print(f"  failed: {f.error}", file=sys.stderr)
    return rows, len(digests) == 1


def start_dask(args):
    """``(address, close)`` of the cluster the dask2 engine uses (None when not asked for / no Dask)."""
    if "dask2" not in args.engine_list:
        return None, lambda: None
    if args.scheduler:
        return args.scheduler, lambda: None
    try:
        from distributed import LocalCluster
    except ImportError:
        print("dask2: skipped (no dask.distributed: pip install 'curveeditor[cluster]')")
        args.engine_list.remove("dask2")
        return None, lambda: None
    import logging

    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.ERROR,
    )
    took = time.perf_counter() - t0
    print(f"dask2: LocalCluster of 2 single-threaded worker processes started in {took:.2f} s")
    return cluster.scheduler_address, cluster.close


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--engines", default=",".join(ENGINES), help="comma-separated: jobs1, jobs2, dask2 (default all)"
    )
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--tracks", type=int, default=4)
    ap.add_argument("--keys", type=int, default=300)
    ap.add_argument("--recipe", help="recipe JSON (default: unwrap, reduce 0.5 deg)")
    ap.add_argument("--no-corpus", action="store_true", help="skip the corpus BVH set")
    ap.add_argument("--repeat", type=int, default=2, help="runs per engine; the best is shown")
    ap.add_argument("--scheduler", help="dask2 on this running cluster instead of a LocalCluster")
    args = ap.parse_args(argv)
    args.engine_list = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [
        e for e in args.engine_list if e not in ENGINES and not (e.startswith("jobs") and e[4:].isdigit())
    ]
    if unknown:
        ap.error(f"unknown engine(s) {unknown}: choose from {', '.join(ENGINES)} (or jobsN)")
    recipe = Recipe.load(args.recipe) if args.recipe else Recipe.from_dict(DEFAULT_RECIPE)
    print(f"recipe: {recipe.to_dict()['steps']}")
    args.scheduler_address, close_dask = start_dask(args)

    try:
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
    finally:
        close_dask()

    print(f"\nbatch throughput ({len(files)} generated clips of {args.tracks} tracks x {args.keys} keys)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cores: {os.cpu_count()}, load average at the end: {load:.2f} (timings are noisy when > cores)")
    head = (
        f"{'set':<18} {'engine':>6} {'files':>5} {'ok':>4} {'keys in':>9} {'keys out':>9} "
        f"{'first s':>8} {'best s':>8} {'files/s':>8} {'keys/s':>10} {'vs jobs1':>9}"
    )
    print(head)
    print("-" * len(head))
    for name, engine, n, ok, keys, kept, first, dt, fps, kps, ratio in rows:
        print(
            f"{name:<18} {engine:>6} {n:>5} {ok:>4} {keys:>9} {kept:>9} "
            f"{first:8.2f} {dt:8.2f} {fps:8.2f} {kps:10.0f} {ratio:8.2f}x"
        )
    for name, same in identical.items():
        print(f"outputs identical across engines ({name}): {'yes' if same else 'NO'}")
    return 0 if all(identical.values()) else 1


def _timed(fn, *a) -> float:
    t = time.perf_counter()
    fn(*a)
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
