"""Engine speed on 1M rotations (100 tracks x 10,000 keys of noisy mocap-like motion with wraps).

Run: ``.venv/bin/python benchmarks/run.py`` (about a minute on the shared 2-core machine).

Prints one table: seconds for each operation, the ratio to scipy's equivalent (``Rotation.from_euler``,
``as_euler``, ``Slerp``) where scipy has one, and to a plain per-key Python loop. The loops are timed on
one track (10,000 rotations) and extrapolated x100; the table says so. Every figure is the best of a
few repeats, because the machine is shared. Then the goals, each with PASS/FAIL:

* every scipy ratio <= 1.5;
* unwrap_track + resample_track(..., "slerp") + inspect_track of the 1M rotations under 2 s in total
  (the bare ``slerp`` function is timed on its own row too);
* ``curveeditor-cli --help`` under 0.3 s (best of 5 subprocess runs).

The data: per track, smooth motion (a few sinusoids of 40-150 deg amplitude, 0.1-2 Hz) plus slow drift
(some tracks spin) plus 0.3 deg noise at 60 Hz, converted to quaternions and decomposed back into
Unity's ZXY like an exporter does (wrapped to (-180, 180], middle axis in [-90, 90], so it has wraps and
flips), with a few one-frame spikes.
"""

from __future__ import annotations

import bisect
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curveeditor.engine.analysis import inspect_track  # noqa: E402
from curveeditor.engine.clip import RotationTrack, key_quaternions  # noqa: E402
from curveeditor.engine.rotations import euler_to_quat, quat_to_euler  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402
from curveeditor.engine.unwrap import unwrap_euler, unwrap_track  # noqa: E402

try:
    from curveeditor.engine import resample as _resample
except ImportError:  # written by another helper; the table prints n/a without it
    _resample = None

N_TRACKS = 100
N_KEYS = 10_000
FPS = 60.0
ORDER = "zxy"
SEQ = [2, 0, 1]  # ZXY columns (z, x, y) for scipy's "zxy" sequence


def make_data(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(times (N_KEYS,), euler (N_TRACKS, N_KEYS, 3))`` exporter-style ZXY degrees."""
    rng = np.random.default_rng(seed)
    t = np.arange(N_KEYS) / FPS
    out = np.empty((N_TRACKS, N_KEYS, 3))
    for k in range(N_TRACKS):
        e = np.zeros((N_KEYS, 3))
        for c in range(3):
            for _ in range(3):
                amp = rng.uniform(40, 150) / 3
                freq = rng.uniform(0.1, 2.0)
                e[:, c] += amp * np.sin(2 * np.pi * freq * t + rng.uniform(0, 2 * np.pi))
        if k % 5 == 0:  # a spinning root-like track
            e[:, 1] += rng.uniform(30, 200) * t
        e += rng.normal(0, 0.3, e.shape)
        spikes = rng.choice(N_KEYS - 2, size=3, replace=False) + 1
        e[spikes] += rng.uniform(20, 60, (3, 3))
        out[k] = quat_to_euler(euler_to_quat(e, ORDER), ORDER)
    return t, out


def best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        s = time.perf_counter()
        fn()
        times.append(time.perf_counter() - s)
    return min(times)


# ------------------------------------------------------------------------- per-key Python loops


def loop_e2q(e):
    out = []
    for x, y, z in e.tolist():
        hx, hy, hz = math.radians(x) / 2, math.radians(y) / 2, math.radians(z) / 2
        sx, sy, sz = math.sin(hx), math.sin(hy), math.sin(hz)
        cx, cy, cz = math.cos(hx), math.cos(hy), math.cos(hz)
        out.append(
            (
                sx * cy * cz + cx * sy * sz,
                cx * sy * cz - sx * cy * sz,
                cx * cy * sz - sx * sy * cz,
                cx * cy * cz + sx * sy * sz,
            )
        )
    return out


def loop_q2e(q):
    out = []
    for x, y, z, w in q.tolist():
        ax = math.degrees(math.asin(max(-1.0, min(1.0, 2 * (w * x - y * z)))))
        ay = math.degrees(math.atan2(2 * (x * z + w * y), w * w - x * x - y * y + z * z))
        az = math.degrees(math.atan2(2 * (x * y + w * z), w * w - x * x + y * y - z * z))
        out.append((ax, ay, az))
    return out


def loop_unwrap(e):
    """Greedy per-key Euler filter (both ZXY triples, 360k shifts toward the previous key)."""
    rows = e.tolist()
    prev = rows[0]
    out = [prev]
    for x, y, z in rows[1:]:
        best_c, best_d = None, None
        for c in ((x, y, z), (180.0 - x, y + 180.0, z + 180.0)):
            shifted = [v + 360.0 * round((p - v) / 360.0) for v, p in zip(c, prev, strict=True)]
            d = sum(abs(a - b) for a, b in zip(shifted, prev, strict=True))
            if best_d is None or d < best_d:
                best_c, best_d = shifted, d
        out.append(best_c)
        prev = best_c
    return out


def loop_slerp(times, q, grid):
    ts = times.tolist()
    qs = q.tolist()
    out = []
    for t in grid.tolist():
        i = min(max(bisect.bisect_right(ts, t) - 1, 0), len(ts) - 2)
        u = (t - ts[i]) / (ts[i + 1] - ts[i])
        a, b = qs[i], qs[i + 1]
        d = sum(x * y for x, y in zip(a, b, strict=True))
        if d < 0:
            b, d = [-v for v in b], -d
        d = min(d, 1.0)
        th = math.acos(d)
        if th < 1e-9:
            out.append(a)
            continue
        sa, sb = math.sin((1 - u) * th) / math.sin(th), math.sin(u * th) / math.sin(th)
        out.append([sa * x + sb * y for x, y in zip(a, b, strict=True)])
    return out


def loop_inspect(times, e, q):
    wraps = flips = gimbal = 0
    top = 0.0
    ts, es, qs = times.tolist(), e.tolist(), q.tolist()
    for i in range(len(ts) - 1):
        d = [b - a for a, b in zip(es[i], es[i + 1], strict=True)]
        dot = abs(sum(x * y for x, y in zip(qs[i], qs[i + 1], strict=True)))
        geo = math.degrees(2 * math.acos(min(dot, 1.0)))
        wraps += any(abs(v) > 180 for v in d)
        flips += any(abs((v + 180) % 360 - 180) > 45 for v in d) and geo < 10
        gimbal += abs(abs(es[i][0]) - 90) <= 5
        top = max(top, geo / (ts[i + 1] - ts[i]))
    return wraps, flips, gimbal, top


# ------------------------------------------------------------------------------------- benchmark


def main() -> int:
    print(f"numpy {np.__version__}, 1M rotations = {N_TRACKS} tracks x {N_KEYS} keys at {FPS:g} Hz")
    times, eul = make_data()
    flat_e = eul.reshape(-1, 3)
    flat_q = euler_to_quat(flat_e, ORDER)
    quats = flat_q.reshape(N_TRACKS, N_KEYS, 4)
    tracks = [RotationTrack(f"bone{k}", "euler", make_curve(times, eul[k]), ORDER) for k in range(N_TRACKS)]
    grid = _resample.uniform_grid(times[0], times[-1], FPS) if _resample else times
    rows = []  # (name, ours, scipy or None, loop or None)

    ours = best(lambda: euler_to_quat(flat_e, ORDER))
    sc = best(lambda: Rotation.from_euler("zxy", flat_e[:, SEQ], degrees=True).as_quat(), 2)
    lp = best(lambda: loop_e2q(eul[0]), 1) * N_TRACKS
    rows.append(("Euler -> quaternion", ours, sc, lp))

    ours = best(lambda: quat_to_euler(flat_q, ORDER))
    sc = best(lambda: Rotation.from_quat(flat_q).as_euler("zxy", degrees=True), 2)
    lp = best(lambda: loop_q2e(quats[0]), 1) * N_TRACKS
    rows.append(("quaternion -> Euler", ours, sc, lp))

    ours = best(lambda: [unwrap_euler(eul[k], times, ORDER) for k in range(N_TRACKS)])
    lp = best(lambda: loop_unwrap(eul[0]), 1) * N_TRACKS
    rows.append(("unwrap_euler (arrays)", ours, None, lp))
    t_unwrap = best(lambda: [unwrap_track(tr) for tr in tracks])
    rows.append(("unwrap_track (+ tangents)", t_unwrap, None, None))

    if _resample is not None:
        key_q = [key_quaternions(tr) for tr in tracks]
        t_slerp = best(lambda: [_resample.slerp(times, key_q[k], grid) for k in range(N_TRACKS)])
        sc = best(
            lambda: [Slerp(times, Rotation.from_quat(key_q[k]))(grid).as_quat() for k in range(N_TRACKS)],
            2,
        )
        lp = best(lambda: loop_slerp(times, key_q[0], grid), 1) * N_TRACKS
        rows.append(("Slerp resample (bare slerp)", t_slerp, sc, lp))
        # The whole operation: densify what Unity plays, slerp, Euler following the source, curve.
        t_rtrack = best(lambda: [_resample.resample_track(tr, FPS, "slerp") for tr in tracks])
        rows.append(("Slerp resample_track", t_rtrack, sc, lp))
    else:
        t_slerp = t_rtrack = None
        rows.append(("Slerp resample_track", None, None, None))

    t_inspect = best(lambda: [inspect_track(tr) for tr in tracks])
    lp = best(lambda: loop_inspect(times, eul[0], quats[0]), 1) * N_TRACKS
    rows.append(("inspect_track", t_inspect, None, lp))

    def fmt(v, spec="{:8.3f}"):
        return "     n/a" if v is None else spec.format(v)

    print()
    print(
        f"{'operation (1M rotations)':30} {'ours s':>8} {'scipy s':>8} {'ours/sp':>8} {'loop s*':>8} "
        f"{'ours/loop':>9}"
    )
    print("-" * 78)
    for name, o, s, lp in rows:
        r_s = None if (o is None or s is None) else o / s
        r_l = None if (o is None or lp is None) else o / lp
        print(f"{name:30} {fmt(o)} {fmt(s)} {fmt(r_s, '{:8.2f}')} {fmt(lp, '{:8.1f}')} {fmt(r_l, '{:9.4f}')}")
    print("* loop: a plain per-key Python loop timed on one track (10,000 rotations), extrapolated x100.")

    # CLI start-up.
    cli = shutil.which("curveeditor-cli", path=str(Path(sys.executable).parent)) or "curveeditor-cli"
    t_cli = None
    try:
        runs = []
        for _ in range(5):
            s = time.perf_counter()
            subprocess.run([cli, "--help"], check=True, capture_output=True, timeout=30)
            runs.append(time.perf_counter() - s)
        t_cli = min(runs)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"curveeditor-cli --help could not run: {exc}")

    print()
    ratios = [o / s for _, o, s, _ in rows if o is not None and s is not None]
    goals = []
    goals.append(("every scipy ratio <= 1.5", f"max {max(ratios):.2f}", max(ratios) <= 1.5))
    if t_rtrack is not None:
        total = t_unwrap + t_rtrack + t_inspect
        goals.append(
            (
                "unwrap_track + resample_track + inspect < 2 s",
                f"{t_unwrap:.3f} + {t_rtrack:.3f} + {t_inspect:.3f} = {total:.3f} s",
                total < 2.0,
            )
        )
    else:
        goals.append(("unwrap + resample + inspect < 2 s", "resample: n/a", False))
    goals.append(
        (
            "curveeditor-cli --help < 0.3 s",
            "n/a" if t_cli is None else f"{t_cli:.3f} s (best of 5)",
            t_cli is not None and t_cli < 0.3,
        )
    )
    for name, figure, ok in goals:
        print(f"{'PASS' if ok else 'FAIL'}  {name:45} {figure}")
    return 0 if all(ok for _, _, ok in goals) else 1


if __name__ == "__main__":
    raise SystemExit(main())
