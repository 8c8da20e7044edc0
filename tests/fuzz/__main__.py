"""The long fuzz run: ``python -m tests.fuzz --minutes N [--seed S] [--out DIR]``.

Generates cases (:func:`tests.fuzz.cases.make_case` from ``Random(f"{seed}:{i}")``, so a run is
reproducible and case ``i`` can be re-made alone with ``--case i``), runs each in a forked child under
the time and memory bounds, and prints the counts per class. For every distinct failure cause
(class + last frame / reason) the first input is shrunk (line then byte deletions that keep the same
cause, bounded per cause) and saved under ``DIR/<class>/<n>-<slug>/``: the input file, the exact
command, stderr, and ``outcome.json``. ``DIR/summary.md`` lists the counts and the causes.
Exit status: 0 when no case failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import random
import re
import shlex
import sys
import tempfile
import time

from . import mutations
from .cases import COMMANDS, Case, make_case
from .runner import FAILURES, GOOD, MEM_MB, TIMEOUT_S, Job, Outcome, preload, run_case, start_case

#: Which helper's module a traceback frame is in (issue 11's split of the work).
OWNERS = (
    ("io/anim/", "animio"),
    ("io/bvh.py", "textio"),
    ("io/csv_io.py", "textio"),
    ("io/__init__.py", "fidelity"),
    ("io/atomic.py", "fidelity"),
    ("engine/export_checks.py", "fidelity"),
    ("engine/reorder.py", "fidelity"),
    ("cli.py", "fidelity"),
    ("engine/", "engine"),
)


def owner(frame: str) -> str:
    for prefix, who in OWNERS:
        if frame.startswith(prefix):
            return who
    return "?"


def command_line(case: Case, inp: str = "IN", out: str = "OUT") -> str:
    if case.command == "load":
        return f"python -c 'the editor load step (tests/fuzz/runner.py:_editor_load)' {inp}"
    return "curveeditor-cli " + " ".join(shlex.quote(a) for a in case.argv(inp, out))


#: Classes not shrunk: each try of a hang costs the timeout; an accepted-invalid mark belongs to the
#: mutation, which a deletion could remove while the mark stays.
NO_SHRINK = ("hang", "crash", "memory", "accepted_invalid")


def shrink(case: Case, target: str, run, budget_runs: int = 40, budget_s: float = 30.0) -> Case:
    """Delete lines, then byte chunks, while the case keeps failing with signature ``target``."""
    if case.special:
        return case
    t0, runs = time.monotonic(), 0

    def still(data: bytes) -> bool:
        nonlocal runs
        runs += 1
        c = Case(case.ext, data, case.command, case.mutations, case.invalid)
        return run(c).signature == target

    def budget() -> bool:
        return runs < budget_runs and time.monotonic() - t0 < budget_s

    data = case.data
    for sep in (b"\n", None):
        parts = data.split(b"\n") if sep else [data[i : i + 16] for i in range(0, len(data), 16)]
        join = (lambda ps: b"\n".join(ps)) if sep else (lambda ps: b"".join(ps))
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and budget():
            i, changed = 0, False
            while i < len(parts) and budget():
                trial = parts[:i] + parts[i + chunk :]
                if trial and still(join(trial)):
                    parts, changed = trial, True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        data = join(parts)
    return Case(case.ext, data, case.command, case.mutations, case.invalid)


def _printable(text: str) -> str:
    """One terminal line: control characters (a newline in a track name, a CR) shown escaped."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], text)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:60] or "case"


def save(out_dir: str, n: int, case: Case, outcome: Outcome, index: int, seed: str) -> str:
    folder = os.path.join(out_dir, outcome.cls, f"{n:03d}-{_slug(outcome.signature.split('|', 1)[1])}")
    os.makedirs(folder, exist_ok=True)
    name = "in" + case.ext
    if case.special:
        with open(os.path.join(folder, "SPECIAL.txt"), "w") as f:
            f.write(f"{case.special}: make {name} a {case.special} (tests/fuzz/runner.py:_make_input)\n")
    else:
        with open(os.path.join(folder, name), "wb") as f:
            f.write(case.data)
    out = "out" + (case.out_ext or "")
    with open(os.path.join(folder, "command.txt"), "w") as f:
        f.write(command_line(case, name, out) + "\n")
        f.write(f"# regenerate: python -m tests.fuzz --seed {seed} --case {index}\n")
    with open(os.path.join(folder, "stderr.txt"), "w") as f:
        f.write(outcome.stderr)
    info = outcome.as_dict() | {
        "case": case.describe(),
        "index": index,
        "owner": owner(outcome.frame),
        "bytes": len(case.data),
    }
    with open(os.path.join(folder, "outcome.json"), "w") as f:
        json.dump(info, f, indent=1)
    return folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0, help="time budget (default 10)")
    p.add_argument("--seed", default="0", help="run seed (default 0)")
    p.add_argument("--out", default="fuzz-out", help="folder for reproducers and summary (default fuzz-out)")
    p.add_argument(
        "--timeout", type=float, default=TIMEOUT_S, help=f"seconds per case (default {TIMEOUT_S:g})"
    )
    p.add_argument(
        "--mem-mb", type=int, default=MEM_MB, help=f"extra address space per case (default {MEM_MB})"
    )
    p.add_argument("--max-cases", type=int, default=None, help="stop after this many cases")
    p.add_argument("--case", type=int, default=None, help="run only case number CASE of this seed")
    p.add_argument("--commands", default=None, help=f"comma-separated subset of {','.join(COMMANDS)}")
    p.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    p.add_argument("--no-shrink", action="store_true", help="save failing inputs as found")
    args = p.parse_args(argv)

    mutations.set_scale("long")
    preload()
    commands = args.commands.split(",") if args.commands else None
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fuzz-work-")

    def run(c: Case) -> Outcome:
        return run_case(c, root=work, timeout_s=args.timeout, mem_mb=args.mem_mb)

    counts: collections.Counter = collections.Counter()
    causes: dict[str, dict] = {}
    t0 = time.monotonic()
    deadline = t0 + args.minutes * 60
    last_print = t0
    todo = iter([args.case]) if args.case is not None else itertools.count()
    running: list[tuple[int, Case, Job]] = []

    def record(i: int, case: Case, outcome: Outcome) -> None:
        counts[outcome.cls] += 1
        if not outcome.failed:
            return
        c = causes.get(outcome.signature)
        if c is None:
            shrinkable = not (args.no_shrink or outcome.cls in NO_SHRINK)
            small = shrink(case, outcome.signature, run) if shrinkable else case
            again = run(small) if small is not case else outcome
            folder = save(args.out, len(causes) + 1, small, again, i, args.seed)
            causes[outcome.signature] = c = {
                "count": 0,
                "first": i,
                "cls": outcome.cls,
                "detail": outcome.detail,
                "frame": outcome.frame,
                "case": case.describe(),
                "folder": folder,
                "bytes": len(small.data),
                "owner": owner(outcome.frame),
            }
            print(
                _printable(
                    f"[{i}] NEW {outcome.cls}: {case.describe()} :: {outcome.detail[:160]} -> {folder}"
                ),
                flush=True,
            )
        c["count"] += 1

    started = 0
    while True:
        open_slots = args.jobs - len(running)
        more = time.monotonic() < deadline and (args.max_cases is None or started < args.max_cases)
        while open_slots > 0 and more:
            i = next(todo, None)
            if i is None:
                more = False
                break
            try:
                case = make_case(random.Random(f"{args.seed}:{i}"), commands=commands, special_p=0.01)
            except Exception as exc:  # noqa: BLE001 - a harness bug must not end a long run
                counts["harness"] += 1
                print(
                    _printable(f"[{i}] HARNESS: making the case raised {type(exc).__name__}: {exc}"),
                    flush=True,
                )
                continue
            running.append((i, case, start_case(case, root=work, timeout_s=args.timeout, mem_mb=args.mem_mb)))
            started += 1
            open_slots -= 1
        if not running:
            break
        for item in list(running):
            outcome = item[2].poll()
            if outcome is not None:
                running.remove(item)
                record(item[0], item[1], outcome)
        time.sleep(0.005)
        if time.monotonic() - last_print > 60:
            last_print = time.monotonic()
            print(f"... {sum(counts.values())} cases, {dict(counts)}", flush=True)

    total = sum(counts.values())
    minutes = (time.monotonic() - t0) / 60
    lines = [
        f"# fuzz run: seed {args.seed}, {total} cases in {minutes:.1f} min "
        f"(timeout {args.timeout:g} s, +{args.mem_mb} MB address space per case)",
        "",
        "| class | cases |",
        "|---|---|",
    ]
    for cls in GOOD + FAILURES + (("harness",) if counts.get("harness") else ()):
        lines.append(f"| {cls} | {counts.get(cls, 0)} |")
    lines += [
        "",
        "## distinct causes",
        "",
        "| class | cases | owner | last frame | first case | detail | reproducer |",
        "|---|---|---|---|---|---|---|",
    ]
    for _sig, c in sorted(causes.items(), key=lambda kv: (kv[1]["cls"], -kv[1]["count"])):
        detail = _printable(c["detail"]).replace("|", "\\|")[:150]
        lines.append(
            f"| {c['cls']} | {c['count']} | {c['owner']} | {c['frame']} | {c['case']} | {detail} | "
            f"{os.path.relpath(c['folder'], args.out)} ({c['bytes']} B) |"
        )
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"seed": args.seed, "cases": total, "counts": dict(counts), "causes": causes}, f, indent=1)
    print(text)
    return 1 if any(counts.get(c) for c in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
