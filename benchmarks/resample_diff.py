"""Speed of ``resample_track`` (every method) and ``diff_clips``, against scipy and the previous code.

Run: ``.venv/bin/python benchmarks/resample_diff.py [--baseline REV] [--quick]`` (a few minutes on the
shared 2-core machine; ``--quick`` times 20 of the 100 synthetic tracks and extrapolates).

Data sets:

* ``synthetic``: 100 tracks x 10,000 keys at 60 Hz = 1M rotations, exporter-style Unity ZXY Euler with
  wraps, flips, spins and spikes (``benchmarks/run.py``'s ``make_data``), resampled at 60 Hz.
* the largest corpus BVH (most rotation keys in ``/work/shared/corpus/bvh``, read with
  ``curveeditor.io.read_clip``), resampled at its own frame rate; skipped when the corpus is absent.

Rows: ``resample_track(track, hz, method)`` for each of ``METHODS`` over all tracks, then
``diff_clips`` of the clip against its Slerp-resampled version at ``hz`` (the usual clean; where the
grid equals the key times, intervals whose keys came out identical are not evaluated), at ``1.5 hz``
(new key times everywhere: every sample is evaluated, the full diff) and against its unwrapped
version (same key times: only the intervals whose keys changed are evaluated).
Columns: seconds (best of a few runs), samples/s (output keys for resampling,
compared samples for diffs), the previous implementation's seconds and ``old/new`` (the engine
package at ``--baseline``, default the commit before the speed-up, loaded from git into a temporary
package so its own ``evaluate`` is used too), and for slerp the ratio to scipy
(``Slerp(times, Rotation.from_quat(key rotations))(grid)``: the bare interpolation without densify
or curve building, the lower bound resample_track cannot beat by construction).
"""

from __future__ import annotations

import argparse
import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from scipy.spatial.transform import Rotation, Slerp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from curveeditor.engine.clip import Clip, RotationTrack, key_quaternions  # noqa: E402
from curveeditor.engine.diff import diff_clips  # noqa: E402
from curveeditor.engine.resample import METHODS, resample_track, uniform_grid  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402
from curveeditor.engine.unwrap import unwrap_track  # noqa: E402

#: The last commit before resample/diff/curves were sped up.
DEFAULT_BASELINE = "39a0c17395177adcdbdfc4f065fa99fb148f47fc"
CORPUS_BVH = Path("/work/shared/corpus/bvh")


def best(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        s = time.perf_counter()
        fn()
        out.append(time.perf_counter() - s)
    return min(out)


def load_baseline(rev: str):
    """The engine package at git ``rev`` as an importable package ``ce_baseline.engine``
    (relative imports only, so it runs with its own curves/clip/rotations)."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "curveeditor/engine"], check=True, capture_output=True
    ).stdout
    tmp = Path(tempfile.mkdtemp(prefix="ce_baseline_"))
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp, filter="data")
    pkg = tmp / "ce_baseline"
    (tmp / "curveeditor").rename(pkg)
    (pkg / "__init__.py").write_text("")
    sys.path.insert(0, str(tmp))
    return (
        importlib.import_module("ce_baseline.engine.resample"),
        importlib.import_module("ce_baseline.engine.diff"),
        importlib.import_module("ce_baseline.engine.clip"),
    )


def synthetic_clip(n_tracks: int) -> tuple[Clip, float]:
    import run  # benchmarks/run.py: the 1M-rotation data of the goal

    run.N_TRACKS = n_tracks
    times, eul = run.make_data()
    tracks = [
        RotationTrack(f"bone{k}", "euler", make_curve(times, eul[k]), run.ORDER) for k in range(n_tracks)
    ]
    return Clip("synthetic", run.FPS, tracks), run.FPS


def largest_bvh() -> tuple[Clip, float, str] | None:
    if not CORPUS_BVH.is_dir():
        return None
    from curveeditor.io import read_clip

    best_clip, best_keys, best_name = None, -1, ""
    for path in sorted(CORPUS_BVH.glob("*.bvh")):
        try:
            clip = read_clip(path)
        except Exception as exc:  # a corpus file the reader rejects is not this benchmark's business
            print(f"(skipped {path.name}: {exc})")
            continue
        keys = sum(t.n_keys for t in clip.tracks)
        if keys > best_keys:
            best_clip, best_keys, best_name = clip, keys, path.name
    if best_clip is None:
        return None
    return best_clip, best_clip.frame_rate, best_name


def bench_clip(label: str, clip: Clip, hz: float, old, repeats: int, old_subset: int | None) -> list[tuple]:
    """Rows ``(label, operation, new s, samples, old s or None, scipy s or None)``."""
    old_resample, old_diff, _ = old if old else (None, None, None)
    tracks = list(clip.tracks)
    n = len(tracks)
    sub = tracks[:old_subset] if old_subset else tracks
    scale = n / len(sub)
    rows = []
    out_keys = None
    for method in METHODS:
        t_new = best(lambda m=method: [resample_track(tr, hz, m) for tr in tracks], repeats)
        if out_keys is None:
            out_keys = sum(
                len(uniform_grid(tr.curve.start, tr.curve.end, hz)) for tr in tracks if tr.n_keys > 1
            )
        t_old = None
        if old_resample is not None:
            t_old = best(lambda m=method: [old_resample.resample_track(tr, hz, m) for tr in sub], 1) * scale
        t_sp = None
        if method == "slerp":
            grids = [uniform_grid(tr.curve.start, tr.curve.end, hz) for tr in tracks]
            kq = [key_quaternions(tr) for tr in tracks]

            def scipy_slerp(kq=kq, grids=grids):
                for tr, q, g in zip(tracks, kq, grids, strict=True):
                    Slerp(tr.curve.time, Rotation.from_quat(q))(g).as_quat()

            t_sp = best(scipy_slerp, repeats)
        rows.append((label, f"resample_track {method}", t_new, out_keys, t_old, t_sp))

    afters = (
        ("diff_clips vs slerp @ hz", clip.with_tracks([resample_track(tr, hz, "slerp") for tr in tracks])),
        (
            "diff_clips vs slerp @ 1.5 hz",
            clip.with_tracks([resample_track(tr, 1.5 * hz, "slerp") for tr in tracks]),
        ),
        ("diff_clips vs unwrapped", clip.with_tracks([unwrap_track(tr) for tr in tracks])),
    )
    sub_paths = [tr.path for tr in sub]
    for name, after in afters:
        diffs = diff_clips(clip, after)
        samples = sum(len(d.times) for d in diffs)
        t_new = best(lambda a=after: diff_clips(clip, a), repeats)
        t_old = None
        if old_diff is not None:
            t_old = best(lambda a=after: old_diff.diff_clips(clip, a, paths=sub_paths), 1) * scale
        rows.append((label, name, t_new, samples, t_old, None))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--baseline", default=DEFAULT_BASELINE, help="git revision of the previous implementation"
    )
    ap.add_argument(
        "--quick", action="store_true", help="20 synthetic tracks instead of 100 (x5 extrapolated)"
    )
    ap.add_argument("--no-old", action="store_true", help="skip timing the previous implementation")
    args = ap.parse_args()

    old = None
    if not args.no_old:
        try:
            old = load_baseline(args.baseline)
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"previous implementation unavailable ({exc}); old columns print n/a")

    n_tracks = 20 if args.quick else 100
    rows = []
    clip, hz = synthetic_clip(n_tracks)
    scale = 100 / n_tracks
    label = f"synthetic {n_tracks}x10k" if args.quick else "synthetic 100x10k"
    # The old code takes 10-20 s per method on 1M rotations: timed on 10 tracks, extrapolated.
    for r in bench_clip(label, clip, hz, old, repeats=2, old_subset=max(1, n_tracks // 10)):
        rows.append(
            (
                r[0],
                r[1],
                r[2] * scale,
                r[3] * scale,
                None if r[4] is None else r[4] * scale,
                None if r[5] is None else r[5] * scale,
            )
        )
    if args.quick:
        rows = [("synthetic 100x10k*",) + r[1:] for r in rows]

    bvh = largest_bvh()
    if bvh is None:
        print(f"(corpus {CORPUS_BVH} absent: BVH rows skipped)")
    else:
        bclip, bhz, name = bvh
        keys = sum(t.n_keys for t in bclip.tracks)
        print(f"largest corpus BVH: {name}: {len(bclip.tracks)} tracks, {keys} keys, {bhz:g} Hz")
        rows += bench_clip("largest BVH", bclip, bhz, old, repeats=3, old_subset=None)

    def fmt(v, spec):
        return f"{'n/a':>{len(spec.format(0.0))}}" if v is None else spec.format(v)

    print()
    print(
        f"{'data':19} {'operation':31} {'new s':>8} {'samples/s':>10} {'old s':>8} {'old/new':>8} "
        f"{'scipy s':>8} {'new/sp':>7}"
    )
    print("-" * 106)
    for data, op, t_new, samples, t_old, t_sp in rows:
        print(
            f"{data:19} {op:31} {t_new:8.3f} {samples / t_new:10.3g} {fmt(t_old, '{:8.3f}')} "
            f"{fmt(None if t_old is None else t_old / t_new, '{:8.1f}')} {fmt(t_sp, '{:8.3f}')} "
            f"{fmt(None if t_sp is None else t_new / t_sp, '{:7.2f}')}"
        )
    print(
        "old: the engine at --baseline, timed on a tenth of the synthetic tracks and extrapolated; "
        "scipy: bare Slerp of the key rotations (no densify, no curve)."
    )
    if args.quick:
        print("* --quick: timed on 20 tracks, extrapolated x5.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
