"""What issue 20's figures cost ``clean``: the per-step records (``engine.step_figures``), the bound kept
in the file (the format margin, the key-bound check) and the explaining lines, against ``clean``
without them. Goal: ``clean`` of the generated CMU-style BVH (31 joints x 2,752 frames at 120 fps, ZYX:
the issue's CMU 01_01 is not in the corpus) slows down by at most 10%.

Rows, each the CPU time (user + sys of a child process running one command, best of ``--repeats``):

* ``figures off``: this tree's ``clean`` with ``run_recipe(figures=False)`` and no format margin
  (what ``clean`` computed before issue 20, on this tree's engine);
* ``figures on``: this tree's ``clean`` as shipped;
* ``main`` (with ``--main PATH``): the same command from another checkout (e.g. ``/work/main``, run
  with its own ``.venv`` when it has one), the code before this branch, for the end-to-end comparison
  (the margin reduces to a tighter bound, so it may keep more keys; the key counts are printed).

    .venv/bin/python benchmarks/step_figures.py [--repeats 3] [--main /work/main] [--bounds 0.5,0.1]

CPU time, not wall time, because the machine is shared: the load average is printed with the table.
The last rows are measured inside one process (less sensitive to the load): the CPU time of the
figures' own functions (``step_figures.step_figures``, the explaining line of a BVH input, the format
margin, the losses) as a share of the whole ``clean``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL = 1.10

#: The child for "figures off": this tree's CLI with the figures and the margin turned off.
_OFF = """
import sys
import curveeditor.engine.recipe as recipe
import curveeditor.io.promises as promises
real = recipe.run_recipe
recipe.run_recipe = lambda *a, **k: real(*a, **dict(k, figures=False, reserve_deg=0.0))
promises.write_margin = lambda clip, path: 0.0
from curveeditor.cli import main
sys.exit(main(sys.argv[1:]))
"""


def cpu_of(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, str]:
    """CPU seconds (user + sys) of one child running ``argv`` in ``cwd``, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {r.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stdout


def in_process_share(cmd: list[str], repeats: int) -> tuple[float, float]:
    """``(clean CPU s, figures CPU s)``, best of ``repeats``, in this process (imports warmed)."""
    import curveeditor.cli as cli
    import curveeditor.engine.step_figures as sf
    import curveeditor.io.losses as losses
    import curveeditor.io.promises as promises

    spent = [0.0]

    def timed(fn):
        def run(*a, **k):
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[0] += time.process_time() - t0

        return run

    patches = [
        (sf, "step_figures"),
        (cli, "_input_curve_deviation"),
        (promises, "write_margin"),
        (losses, "write_losses"),
    ]
    saved = [(m, n, getattr(m, n)) for m, n in patches]
    for m, n, f in saved:
        setattr(m, n, timed(f))
    import contextlib
    import io

    best = None
    try:
        for i in range(repeats + 1):
            spent[0] = 0.0
            t0 = time.process_time()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                cli.main(cmd)
            total = time.process_time() - t0
            if i and (best is None or total < best[0]):  # the first run warms the imports
                best = (total, spent[0])
    finally:
        for m, n, f in saved:
            setattr(m, n, f)
    return best


def written_keys(stdout: str) -> str:
    line = next((ln for ln in stdout.splitlines() if ln.startswith("total keys")), "")
    return line.split(";")[0].replace("total keys ", "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--main", help="another checkout to time the same command with (e.g. /work/main)")
    ap.add_argument("--bounds", default="0.5,0.1")
    args = ap.parse_args()
    from benchmarks.anim_io import write_cmu_style_bvh

    tmp = Path(tempfile.mkdtemp(prefix="step-figures-"))
    src = tmp / "cmu31.bvh"
    write_cmu_style_bvh(src)
    py = sys.executable
    rows = []
    for bound in args.bounds.split(","):
        cmd = ["clean", str(src), "--unwrap", "--reduce", bound, "-o", str(tmp / "out.anim")]
        variants = [
            ("figures off", [py, "-c", _OFF, *cmd], None),
            ("figures on", [py, "-m", "curveeditor.cli", *cmd], None),
        ]
        if args.main:
            # Its own venv (an editable install wins over PYTHONPATH), else this interpreter.
            other = Path(args.main).resolve()
            main_py = other / ".venv" / "bin" / "python"
            env = dict(os.environ, PYTHONPATH=str(other)) if not main_py.exists() else None
            variants.append(
                ("main", [str(main_py) if main_py.exists() else py, "-m", "curveeditor.cli", *cmd], env)
            )
        times = {}
        for name, argv, env in variants:
            # In the temp folder: a checkout's own package, not the one in the current directory.
            best, out = min(cpu_of(argv, env, tmp) for _ in range(args.repeats))
            times[name] = best
            rows.append((f"--unwrap --reduce {bound}", name, best, written_keys(out)))
        ratio = times["figures on"] / times["figures off"]
        rows.append((f"--unwrap --reduce {bound}", "on / off", ratio, "PASS" if ratio <= GOAL else "FAIL"))
        if "main" in times:
            rows.append((f"--unwrap --reduce {bound}", "on / main", times["figures on"] / times["main"], ""))
        total, figs = in_process_share(cmd, args.repeats)
        share = figs / total
        verdict = "PASS" if 1.0 / (1.0 - share) <= GOAL else "FAIL"
        rows.append((f"--unwrap --reduce {bound}", "in-process", total, f"clean CPU s; figures {figs:.3f} s"))
        rows.append((f"--unwrap --reduce {bound}", "figure share", share, verdict))
    print(
        f"clean cmu31.bvh (31 joints x 2,752 frames, ZYX) -o .anim; CPU s, best of {args.repeats}; "
        f"load average {os.getloadavg()[0]:.2f}; goal on / off <= {GOAL:.2f}"
    )
    print(f"{'command':<26} {'variant':<12} {'CPU s / ratio':>13}  keys (before -> after, written) / verdict")
    for cmd, name, value, extra in rows:
        print(f"{cmd:<26} {name:<12} {value:13.3f}  {extra}")


if __name__ == "__main__":
    main()
