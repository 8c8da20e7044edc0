"""curveeditor-cli: the headless face of the engine.

Commands (``curveeditor-cli COMMAND --help`` for details)::

    inspect FILE [--json] [--order ORDER]
    clean   FILE -o OUT [--order ORDER] [--track PATH]... [operation flags | --recipe R.json]
            [--report R.json]
    sample  FILE --rate HZ -o OUT.csv [--track PATH]...
    convert FILE OUT [--tolerance DEG]
    turn    --from DEG --to DEG [--axis x|y|z|X,Y,Z] [--direction ...] --speed DEG_PER_S [--rate HZ]
            [--tolerance DEG] [--path NAME] -o OUT
    batch   INPUT_DIR_OR_GLOB... -o OUT_DIR --recipe R.json [--jobs N | --scheduler ADDRESS|local[:N]
            [--ship auto|shared|ship]] [--report R.json] [--format anim|csv|bvh] [--json]
            [--progress auto|bar|lines|none]

Rules every command follows: outputs never overwrite the input (error), writes are atomic (nothing is
written when a command fails), every written file is read back before it is put in place and the
figures printed are the written file's (``io.verify``), and every error is one line on stderr,
``curveeditor-cli: error: FILE:LINE: REASON``, with exit status 2.

Startup stays fast (``--help`` well under 0.3 s): only the standard library is imported here; the
engine, numpy and the readers are imported inside the commands. No Qt anywhere.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

PROG = "curveeditor-cli"

#: Order of the ``clean`` shorthand steps (docs/architecture.md, "CLI flag -> recipe step mapping").
SHORTHAND_ORDER = ("to_order", "unwrap", "despike", "smooth", "max_speed", "limit", "resample", "reduce")

_RESAMPLE_METHODS = ("slerp", "squad", "catmull-rom", "spline", "unity")
_ORDERS = ("zxy", "xyz", "xzy", "yzx", "yxz", "zyx", "ZXY", "XYZ", "XZY", "YZX", "YXZ", "ZYX")


#: ``--despike`` given without a value: automatic speed bound (not a string, so argparse keeps it).
_AUTO = object()


class CliError(Exception):
    """A user-facing error: printed as ``curveeditor-cli: error: MESSAGE``, exit status 2."""


# ------------------------------------------------------------------------------------------ helpers


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("curveeditor")
    except Exception:  # not installed as a distribution (running from a source tree)
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version`` that looks the version up only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{PROG} {_version()}")
        parser.exit(0)


def _parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _positive_float(text: str) -> float:
    v = _parse_float(text)
    if not (v > 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return v


def _finite_float(text: str) -> float:
    v = _parse_float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return v


def _nonneg_float(text: str) -> float:
    v = _finite_float(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return v


def _read(path: str, order: str | None = None):
    from .io import read_clip

    return read_clip(path, order=order)


def _check_output(out: str, inputs: list[str], writable_exts: tuple[str, ...] | None = None) -> None:
    """Fail before any work when ``out`` is an input or has an extension no writer handles."""
    from .io.atomic import check_not_protected

    check_not_protected(out, inputs)
    ext = os.path.splitext(out)[1].lower()
    if writable_exts is None:
        from .io import WRITE_FORMATS

        writable_exts = tuple(WRITE_FORMATS)
    if ext not in writable_exts:
        from .io.errors import ClipWriteError

        shown = f"'{ext}'" if ext else "no extension"
        raise ClipWriteError(out, None, f"cannot write {shown} files (supported: {', '.join(writable_exts)})")


def _write_json(path: str, data, protect: list[str]) -> None:
    import json

    from .io.atomic import atomic_write_text

    atomic_write_text(path, json.dumps(data, indent=2, allow_nan=False) + "\n", protect=protect)


def _warn(messages) -> None:
    """One stderr line per warning: line breaks inside (a track path holding a newline) are folded
    into spaces, as in error lines, so every warning stays one line in a pipe or a log; on a
    terminal a long warning wraps at its width, continuation lines indented."""
    from .console.style import Out
    from .console.tables import wrap_text

    out = Out.for_stream(sys.stderr)
    for m in messages:
        for line in wrap_text(out, f"{PROG}: warning: {' '.join(str(m).split())}"):
            out.print(line)


def _select_paths(clip, paths: list[str] | None, fname: str) -> list[str] | None:
    if not paths:
        return None
    available = [t.path for t in clip.tracks]
    for p in paths:
        if p not in available:
            raise CliError(f"{fname}: no rotation track {p!r} (tracks: {', '.join(map(repr, available))})")
    return list(dict.fromkeys(paths))


#: Rough share of the time each step of a command takes, for the progress line's percent and ETA.
_STEP_WEIGHTS = {"read": 1.0, "unwrap": 1.0, "reduce": 3.0, "resample": 2.0, "smooth": 2.0, "write": 2.0}


def _progress(args, steps):
    """The progress line on stderr (:class:`console.progress.Progress`) for ``steps`` (names), off
    with ``--quiet`` and in pipes."""
    from .console.progress import Progress

    plan = [(name, _STEP_WEIGHTS.get(name, 1.0)) for name in steps]
    return Progress(plan, enabled=False if getattr(args, "quiet", False) else None)


def _fmt_num(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}f}"


def _table(headers: list[str], rows: list[list[str]], left: int = 1) -> str:
    """Plain text table: the first ``left`` columns left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


# ------------------------------------------------------------------------------------------ inspect


#: ``inspect`` text lists at most this many flips (``--json`` lists them all).
MAX_LISTED_FLIPS = 20


def _flip_lines(flips, fix: str = "run clean --unwrap", out=None) -> list[str]:
    """Text lines for the flips left in a clip: a summary (``fix`` says what removes the flips that
    are not near gimbal lock), then one line per flip with its reason. With ``out`` (a terminal) the
    lines fit its width: paths elided in the middle (bone name whole), long lines wrapped."""
    if not flips:
        return []
    near = sum(1 for f in flips if f.near_gimbal)
    summary = f"flips: {len(flips)}"
    if near == len(flips):
        summary += (
            ", all near gimbal lock (within 10 deg, or a continuous swing just past it): no Euler curve "
            "through those poses avoids them"
        )
    else:
        summary += f", {len(flips) - near} not near gimbal lock ({fix})"
    lines = [summary]
    listed = sorted(flips, key=lambda f: (f.near_gimbal, f.path, f.index))[:MAX_LISTED_FLIPS]
    for f in listed:
        lines.append(f"  {_shown_path(f.path, out)} key {f.index} at {f.time:.3f} s: {f.reason}")
    if len(flips) > len(listed):
        lines.append(f"  ... and {len(flips) - len(listed)} more (--json lists all)")
    if out is None:
        return lines
    from .console.tables import wrap_text

    keep = [_shown_path(f.path, out) for f in listed]
    return [
        w
        for line in lines
        for w in wrap_text(out, line.lstrip(" "), line[: len(line) - len(line.lstrip())], keep)
    ]


def _shown_path(path: str, out) -> str:
    """A track path as a line of text shows it: whole in a pipe, on a terminal at most half its
    width (the middle elided, the bone name whole)."""
    shown = path or "(root)"
    if out is None or out.width is None:
        return shown
    from .console.tables import elide_path

    return elide_path(shown, max(out.width // 2, len(shown.rpartition("/")[2]) + 2), out.ellipsis)


#: The problem columns of ``inspect``: (report field, header, counted in the verdict, the word for
#: one in the verdict). Gimbal keys
#: are the poses themselves (no clean-up removes them): shown, but they do not fail a file.
PROBLEM_COLUMNS = (
    ("wrap_jumps", "wraps", True, "wrap"),
    ("euler_flips", "flips", True, "flip"),
    ("hemisphere_flips", "hemi", True, "hemisphere flip"),
    ("gimbal_keys", "gimbal", False, "gimbal key"),
    ("spikes", "spikes", True, "spike"),
)
#: ``inspect`` tables of more tracks than this list the tracks with problems first (``--all``: every
#: track, in clip order); ``clean`` tables list the :data:`CLEAN_WORST_SHOWN` tracks of largest error.
PROBLEMS_FIRST_TRACKS = 40
CLEAN_WORST_SHOWN = 20


def _severity(r) -> tuple:
    """Sort key, worst first: failing problems, then all problems, then speed."""
    failing = sum(getattr(r, f) for f, _h, counted, _w in PROBLEM_COLUMNS if counted)
    return (-failing, -sum(getattr(r, f) for f, _h, _c, _w in PROBLEM_COLUMNS), -r.max_angular_speed)


def _problem_text(r) -> str:
    counts = [(getattr(r, f), word) for f, _h, _c, word in PROBLEM_COLUMNS]
    return ", ".join(f"{n} {word}{'s' if n != 1 else ''}" for n, word in counts if n)


def cmd_inspect(args) -> int:
    from .console.style import Out
    from .console.tables import Column, file_lines, render_table
    from .console.verdict import verdict_line
    from .engine.analysis import flip_details_all, inspect_clip

    clip = _read(args.file, args.order)
    reports = inspect_clip(clip)
    flips = flip_details_all(clip.tracks)
    if args.json:
        import json

        out = {"file": args.file, "tracks": [r.as_dict() for r in reports]}
        out["flips"] = [dict(fd.as_dict(), reason=fd.reason) for fd in flips]
        print(json.dumps(out, indent=2))
        return 0
    out = Out.for_stream(wide=args.wide)
    named = f"clip '{clip.name}', "
    if out.width is not None and clip.name == os.path.splitext(os.path.basename(args.file))[0]:
        named = ""  # (on a terminal: the file's own name once is enough)
    about = (
        f"{named}{len(clip.tracks)} rotation track(s), "
        f"{clip.frame_rate:g} fps, {_fmt_num(clip.start)}-{_fmt_num(clip.end)} s"
    )
    for line in file_lines(out, args.file, about):
        out.print(line)
    with_problems = [r for r in reports if any(getattr(r, f) for f, _h, _c, _w in PROBLEM_COLUMNS)]
    shown = reports
    if len(reports) > PROBLEMS_FIRST_TRACKS and not args.all:
        shown = sorted(with_problems, key=_severity)
    warn = lambda cell: "warn" if cell not in ("0", "") else None  # noqa: E731
    columns = [
        Column("track", "left", path=True),
        Column("kind", "left"),
        Column("order", "left"),
        Column("keys"),
        Column("start (s)"),
        Column("end (s)"),
        *(Column(h, style=warn) for _f, h, _c, _w in PROBLEM_COLUMNS),
        Column("max speed (deg/s)"),
    ]
    rows = [
        [
            r.path or "(root)",
            r.kind,
            r.order,
            str(r.keys),
            _fmt_num(r.start),
            _fmt_num(r.end),
            *(str(getattr(r, f)) for f, _h, _c, _w in PROBLEM_COLUMNS),
            f"{r.max_angular_speed:.1f}",
        ]
        for r in shown
    ]
    if out.width is not None:
        columns, rows, common = _drop_uniform(columns, rows, ("kind", "order", "start (s)", "end (s)"))
        if common:
            out.print("every track: " + ", ".join(common))
    if rows:
        for line in render_table(columns, rows, out):
            out.print(line)
    hidden = len(reports) - len(shown)
    if hidden and shown:
        out.print(f"... and {hidden} track(s) with no problems (--all lists every track)")
    elif hidden:
        out.print(f"no track has problems (--all lists all {hidden})")
    totals = {
        "wrap jumps": sum(r.wrap_jumps for r in reports),
        "Euler flips": sum(r.euler_flips for r in reports),
        "hemisphere flips": sum(r.hemisphere_flips for r in reports),
        "gimbal keys": sum(r.gimbal_keys for r in reports),
        "spikes": sum(r.spikes for r in reports),
    }
    found = [f"{k} {n}" for k, n in totals.items() if n]
    out.print("problems: " + (", ".join(found) if found else "none"))
    for line in _flip_lines(flips, out=out):
        out.print(line)
    failing = [r for r in reports if any(getattr(r, f) for f, _h, counted, _w in PROBLEM_COLUMNS if counted)]
    if with_problems:
        worst = min(with_problems, key=_severity)
        reason = (
            f"{len(with_problems)} of {len(reports)} tracks with problems; "
            f"worst {{path}}: {_problem_text(worst)}"
        )
        if not failing:
            reason += " (gimbal keys are the poses themselves: no clean-up removes them)"
        out.print(verdict_line(out, args.file, not failing, reason, worst.path or "(root)"))
    else:
        out.print(verdict_line(out, args.file, True, f"{len(reports)} tracks, none with problems"))
    return 0


def _drop_uniform(columns, rows, names):
    """On a terminal, columns among ``names`` whose cell is the same in every row are dropped and
    returned as ``header value`` texts for one line above the table (their room goes to the paths)."""
    keep, common = [], []
    for i, c in enumerate(columns):
        values = {r[i] for r in rows}
        if c.header in names and len(values) == 1 and rows:
            common.append(f"{c.header.split(' (')[0]} {next(iter(values))}")
        else:
            keep.append(i)
    return [columns[i] for i in keep], [[r[i] for i in keep] for r in rows], common


# -------------------------------------------------------------------------------------------- clean


def _shorthand_steps(args) -> list[dict]:
    """Recipe steps from the shorthand flags, in the documented order."""
    steps: dict[str, dict] = {}
    if args.to_order:
        steps["to_order"] = {"op": "to_order", "order": args.to_order}
    if args.unwrap:
        step = {"op": "unwrap"}
        if args.spin_speed is not None:
            step["spin_speed"] = args.spin_speed
        steps["unwrap"] = step
    if args.despike is not None:
        speed = None if args.despike is _AUTO else args.despike
        steps["despike"] = {"op": "despike", "speed": speed}
    if args.smooth:
        steps["smooth"] = _parse_smooth(args.smooth)
    if args.max_speed is not None:
        steps["max_speed"] = {"op": "max_speed", "speed": args.max_speed}
    if args.limit:
        steps["limit"] = _parse_limit(args.limit)
    if args.resample is not None:
        steps["resample"] = {"op": "resample", "hz": args.resample, "method": args.method or "slerp"}
        if args.spin_speed is not None:
            steps["resample"]["spin_speed"] = args.spin_speed
    if args.reduce is not None:
        steps["reduce"] = {"op": "reduce", "max_error": args.reduce}
    out = [steps[name] for name in SHORTHAND_ORDER if name in steps]
    if args.to_kind:
        out.append({"op": "to_kind", "kind": args.to_kind})
    return out


def _parse_smooth(text: str) -> dict:
    parts = text.split(":")
    method = parts[0].strip().lower()
    try:
        if method == "gaussian" and len(parts) == 2:
            return {"op": "smooth", "method": "gaussian", "sigma": _positive_float(parts[1])}
        if method == "butterworth" and len(parts) in (2, 3):
            step = {"op": "smooth", "method": "butterworth", "cutoff": _positive_float(parts[1])}
            if len(parts) == 3:
                step["order"] = _positive_int(parts[2])
            return step
    except argparse.ArgumentTypeError as exc:
        raise CliError(f"--smooth {text}: {exc}") from None
    raise CliError(f"--smooth {text}: expected gaussian:SIGMA_S or butterworth:CUTOFF_HZ[:ORDER]")


_BOOL_WORDS = {
    "on": True,
    "true": True,
    "yes": True,
    "1": True,
    "off": False,
    "false": False,
    "no": False,
    "0": False,
}


def _limit_spec_help() -> str:
    """``--limit`` syntax, from the ``limit`` op's parameters in the recipe registry."""
    from curveeditor.engine.recipe import OPS

    forms = {"range": "{}=MIN:MAX", "bool": "{}=on|off", "float": "{}=NUMBER"}
    return ",".join(forms.get(p.kind, "{}=VALUE").format(p.name) for p in OPS["limit"].params)


def _parse_limit(text: str) -> dict:
    """A ``limit`` step from ``KEY=VALUE,...``; keys and their kinds come from ``OPS["limit"]``."""
    from curveeditor.engine.recipe import OPS

    params = {p.name: p for p in OPS["limit"].params}
    step: dict = {"op": "limit"}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep:
            raise CliError(f"--limit {text}: expected {_limit_spec_help()}")
        try:
            spec = params.get(key)
            if spec is None:
                raise argparse.ArgumentTypeError(f"unknown key {key!r} ({', '.join(params)})")
            if spec.kind == "range":
                lo, sep2, hi = value.partition(":")
                if not sep2:
                    raise argparse.ArgumentTypeError(f"{key} needs MIN:MAX, got {value!r}")
                step[key] = [_finite_float(lo), _finite_float(hi)]
            elif spec.kind == "bool":
                word = value.strip().lower()
                if word not in _BOOL_WORDS:
                    raise argparse.ArgumentTypeError(f"{key} needs on or off, got {value!r}")
                step[key] = _BOOL_WORDS[word]
            else:
                step[key] = _nonneg_float(value)
        except argparse.ArgumentTypeError as exc:
            raise CliError(f"--limit {text}: {exc}") from None
    return step


_SHORTHAND_FLAGS = (
    ("to_order", "--to-order"),
    ("unwrap", "--unwrap"),
    ("spin_speed", "--spin-speed"),
    ("despike", "--despike"),
    ("smooth", "--smooth"),
    ("max_speed", "--max-speed"),
    ("limit", "--limit"),
    ("resample", "--resample"),
    ("method", "--method"),
    ("reduce", "--reduce"),
    ("to_kind", "--to-kind"),
)


def _given_flags(args) -> list[str]:
    given = []
    for dest, flag in _SHORTHAND_FLAGS:
        v = getattr(args, dest)
        if v is not None and v is not False:
            given.append(flag)
    return given


def _clean_recipe(args):
    from .engine.recipe import Recipe, RecipeError

    given = _given_flags(args)
    if args.recipe:
        if given:
            raise CliError(f"--recipe and {given[0]} cannot be combined (put every step in the recipe file)")
        return Recipe.load(args.recipe)
    if args.spin_speed is not None and not args.unwrap and args.resample is None:
        raise CliError("--spin-speed only applies to --unwrap and --resample")
    if args.method and args.resample is None:
        raise CliError("--method needs --resample HZ")
    steps = _shorthand_steps(args)
    if not steps:
        raise CliError("nothing to do: give --recipe R.json or at least one operation (e.g. --unwrap)")
    try:
        return Recipe.of(*steps)
    except RecipeError as exc:
        raise CliError(str(exc)) from None


def cmd_clean(args) -> int:
    from .engine.recipe import RecipeError, run_recipe, write_options
    from .io import SAMPLE_FORMATS, write_checked
    from .io.verify import recipe_promise

    protect = [args.file]
    _check_output(args.output, protect)
    if args.report:
        _check_report(args.report, args.file, args.output)
    recipe = _clean_recipe(args)
    with _progress(args, ["read", *(s.op for s in recipe.steps), "write", "verify"]) as progress:
        progress.step("read")
        clip = _read(args.file, args.order)
        paths = _select_paths(clip, args.track, args.file)
        try:
            # The figures are the written file's (write_checked below), not the in-memory diff.
            result = run_recipe(clip, recipe, paths=paths, diffs=False, step_progress=progress.recipe_step)
        except RecipeError as exc:
            raise CliError(f"{args.file}: {exc}") from None
        # The figures below are the written file's: read back before the rename and compared with
        # the input (within the recipe's bound when it has one; nothing is written when it is missed).
        check = write_checked(
            result.clip,
            args.output,
            protect=protect,
            promise=recipe_promise(clip, recipe),
            phase=progress.phase,
            **write_options(recipe, args.output, paths),
        )
    warnings = []
    for path, log in result.changes.items():
        warnings.extend(f"track {path!r}: {line}" for line in log if line.startswith("skipped"))
    warnings.extend(check.warnings)

    tracks = _track_report(clip, result, check)
    from .console.style import Out
    from .console.tables import Column, file_lines, render_table, wrap_text

    out = Out.for_stream(wide=args.wide)
    steps = ", ".join(s.op for s in recipe.steps)
    for line in file_lines(out, f"{args.file} -> {args.output}", steps):
        out.print(line)
    shown = tracks
    if len(tracks) > PROBLEMS_FIRST_TRACKS and not args.all:
        shown = sorted(tracks, key=lambda t: -t["max_error"])[:CLEAN_WORST_SHOWN]
    columns = [
        Column("track", "left", path=True),
        Column("keys before"),
        Column("keys after"),
        Column("keys written"),
        Column("max err (deg)"),
        Column("rms err (deg)"),
        Column("at keys (deg)"),
    ]
    rows = [
        [
            t["path"] or "(root)",
            str(t["keys_before"]),
            str(t["keys_after"]),
            str(t["keys_written"]),
            f"{t['max_error']:.6f}",
            f"{t['rms_error']:.6f}",
            f"{t['max_key_error']:.6f}",
        ]
        for t in shown
    ]
    for line in render_table(columns, rows, out):
        out.print(line)
    if len(shown) < len(tracks):
        out.print(
            f"... and {len(tracks) - len(shown)} track(s) with smaller errors (--all lists every track)"
        )
    if tracks:
        worst = max(tracks, key=lambda t: t["max_error"])
        at_keys = max(t["max_key_error"] for t in tracks)
        before = sum(t["keys_before"] for t in tracks)
        after = sum(t["keys_after"] for t in tracks)
        written = sum(t["keys_written"] for t in tracks)
        extra = f" ({written - after:+d} by the writer)" if written != after else ""
        # A BVH holds poses at frames (no curves between them): its figures are at the frames.
        where = " at the frames" if os.path.splitext(args.output)[1].lower() in SAMPLE_FORMATS else ""
        total = (
            f"total keys {before} -> {after}, written {written}{extra}; written file read back{where}: max "
            f"error {worst['max_error']:.6f} deg ({_shown_path(worst['path'], out)}); at the input's keys: "
            f"max error {at_keys:.6f} deg"
        )
        for line in wrap_text(out, total, "", [_shown_path(worst["path"], out)]):
            out.print(line)
    # Counted on the written file: the writer's Euler conversion (e.g. a BVH's ZYX frames keyed as
    # Unity's ZXY) decides the Euler curves the user gets, not the recipe's in-memory result.
    flips = _flips_left(check.clip if check.clip is not None else result.clip, tracks)
    for line in _flip_lines(flips, "in the written file's Euler curves; --to-kind quaternion has none", out):
        out.print(line)
    _warn(warnings)
    _print_write_verdict(args, check)
    if args.html:
        import math

        from .review.data import clip_review

        written = check.clip if check.clip is not None else result.clip
        worst = max(tracks, key=lambda t: t["max_error"], default=None)
        entry = {
            "input": args.file,
            "output": args.output,
            "status": "ok",
            "ok": True,
            "reason": f"{len(tracks)} tracks; worst {(worst['path'] or '(root)') if worst else ''}: "
            f"{worst['max_error'] if worst else 0.0:.4f} deg",
            "tracks": len(tracks),
            "keys_before": sum(t["keys_before"] for t in tracks),
            "keys_after": sum(t["keys_written"] for t in tracks),
            "max_error": max((t["max_error"] for t in tracks), default=0.0),
            "rms_error": math.sqrt(sum(t["rms_error"] ** 2 for t in tracks) / len(tracks)) if tracks else 0.0,
            "review": clip_review(clip, written, {t["path"]: t["max_error"] for t in tracks}),
        }
        print(f"review page: {_write_review(args.html, [entry], args)}")
    if args.report:
        report = {
            "file": args.file,
            "output": args.output,
            "recipe": recipe.to_dict(),
            "tracks": tracks,
            "flips": [dict(fd.as_dict(), reason=fd.reason) for fd in flips],
            "warnings": warnings,
            "written": check.as_dict(),
        }
        _write_json(args.report, report, protect=[args.file, args.output])
    return 0


def _flips_left(clip, tracks) -> list:
    """The Euler flips left in the processed tracks of ``clip`` (the written file as read back), each
    with its reason (``engine.analysis.flip_details``: near gimbal lock or not)."""
    from .engine.analysis import flip_details_all

    by_path = {t.path: t for t in clip.tracks}
    return flip_details_all(by_path[t["path"]] for t in tracks)


def _check_report(report: str, input_path: str, output: str) -> None:
    """Fail before any work when ``--report`` names the input, the output or an unwritable place."""
    from .io.atomic import check_not_protected, check_target, same_file
    from .io.errors import ClipWriteError

    if same_file(report, output):
        raise ClipWriteError(
            report, None, f"--report names the output file {output}: give the report its own name"
        )
    check_not_protected(report, [input_path])
    check_target(report)


def _track_report(clip, result, check) -> list[dict]:
    """Per processed track: key counts (input, recipe result, written file), the played-motion error
    of the *written file* read back against the input (max/RMS over a dense grid) and
    ``max_key_error``, the largest error at the input's own key times; plus what the writer did.

    Both errors matter: an unwrap keeps every key pose (``max_key_error`` ~ 0) while the motion Unity
    plays between keys changes wherever a wrap jump or flip made it spin (``max_error`` up to 180)."""
    checks = {t.path: t for t in check.tracks}
    tracks = []
    for path, log in result.changes.items():
        before, after = clip.track(path), result.clip.track(path)
        c = checks.get(path)
        fig = c.figures if c is not None else None
        tracks.append(
            {
                "path": path,
                "keys_before": before.n_keys,
                "keys_after": after.n_keys,
                "keys_written": c.keys_written if c is not None else after.n_keys,
                "max_error": fig.max_error if fig is not None else 0.0,
                "rms_error": fig.rms_error if fig is not None else 0.0,
                "max_key_error": fig.key_error if fig is not None else 0.0,
                "bound": fig.bound if fig is not None else None,
                "writer_keys_added": c.keys_added if c is not None else 0,
                "writer_reasons": list(c.reasons) if c is not None else [],
                "writer_max_error": c.writer.max_error if c is not None else 0.0,
                "changes": list(log),
            }
        )
    return tracks


# ------------------------------------------------------------------------------------------- sample


#: Most CSV rows ``sample`` writes (samples x tracks): about 100 MB of CSV, written and read back in
#: well under 20 s (a 100,000 s clip at 30 Hz, 3e6 rows, took longer than that under the fuzz bound).
MAX_SAMPLE_ROWS = 1_000_000


def cmd_sample(args) -> int:
    from .io.atomic import atomic_write_text
    from .io.csv_io import format_csv

    _check_output(args.output, [args.file], writable_exts=(".csv",))
    with _progress(args, ["read", "sample", "write", "verify"]) as progress:
        progress.step("read")
        clip = _read(args.file, args.order)
        grid, blocks, expected, span = _sample_blocks(args, clip, progress)
        from .io.atomic import check_before_replace
        from .io.verify import check_samples_read_back

        def check(tmp, target):
            progress.step("verify")
            check_samples_read_back(tmp, target, expected, "zxy")

        # The CSV must read back to the samples; joints in several orders (BVH) carry an order column.
        with check_before_replace(check):
            progress.step("write")
            atomic_write_text(args.output, format_csv(blocks, fname=args.output), protect=[args.file])
    start, end = span
    print(
        f"{args.file} -> {args.output}: {len(blocks)} track(s) x {grid.shape[0]} samples at {args.rate:g} Hz "
        f"({_fmt_num(start)}-{_fmt_num(end)} s)"
    )
    return 0


def _sample_blocks(args, clip, progress):
    """``(grid, CSV row blocks, expected read-back samples, (start, end))`` of ``sample``."""
    import numpy as np

    from .engine.display import sample_track
    from .engine.resample import uniform_grid
    from .io.csv_io import TrackRows

    progress.step("sample")
    paths = _select_paths(clip, args.track, args.file)
    tracks = [t for t in clip.tracks if paths is None or t.path in paths]
    tracks = [t for t in tracks if t.n_keys]
    if not tracks:
        raise CliError(f"{args.file}: no keyed rotation tracks to sample")
    start = min(t.curve.start for t in tracks)
    end = max(t.curve.end for t in tracks)
    rows = ((end - start) * args.rate + 2) * len(tracks)
    if rows > MAX_SAMPLE_ROWS:
        # Checked before allocating: --rate 1e9 used to end in a MemoryError traceback.
        raise CliError(
            f"{args.file}: --rate {args.rate:g} Hz over {end - start:g} s x {len(tracks)} track(s) "
            f"gives {rows:.3g} rows (at most {MAX_SAMPLE_ROWS:,})"
        )
    grid = np.asarray(uniform_grid(start, end, args.rate), dtype=np.float64)
    blocks = []
    expected = {}
    for k, t in enumerate(tracks):
        # The same samples the graphs draw: Euler tracks' channels as Unity evaluates them (winding
        # included), quaternion tracks' continuous decomposition through the key Euler values.
        s = sample_track(t, grid)
        blocks.append(TrackRows(t.path, grid, s.euler, s.quat, s.speed, order=t.order))
        expected[t.path] = (grid, s.quat)
        progress.step("sample", (k + 1) / len(tracks))
    return grid, blocks, expected, (start, end)


# ------------------------------------------------------------------------------------------ convert


def cmd_convert(args) -> int:
    from .io import write_checked

    _check_output(args.output, [args.file])
    from .io.beside import Beside, may_fork

    with _progress(args, ["read", "write", "verify"]) as progress:
        progress.step("read")
        clip = _read(args.file, args.order)
        # The reduce hint needs only the source: computed in a child beside the write when it may
        # fork (CMU_Sample_05_01: 1.4 s of reduction off the command's path).
        hint_beside = _hint_wanted(clip, args.output) and may_fork()
        hinting = Beside(lambda: _reduce_hint(clip, args.output)) if hint_beside else None
        try:
            check = write_checked(
                clip, args.output, protect=[args.file], tolerance=args.tolerance, phase=progress.phase
            )
        except BaseException:
            if hinting is not None:
                hinting.close()
            raise
    # The clip read back keeps the file's text for minimal-diff rewrites (100 MB for a dense clip):
    # not needed past the figures, and a hint computed here would otherwise add to it.
    check = dataclasses.replace(check, clip=None)
    keys = sum(t.n_keys for t in clip.tracks)
    print(f"{args.file} -> {args.output}: {len(clip.tracks)} rotation track(s), {keys} keys")
    print(_convert_figures(check))
    done, hint = hinting.result() if hinting is not None else (False, None)
    if not done:
        hint = _reduce_hint(clip, args.output)
    if hint:
        print(hint)
    _warn(check.warnings)
    _print_write_verdict(args, check)
    return 0


def _print_write_verdict(args, check) -> None:
    """The closing verdict of a command that wrote ``check.path``: the worst deviation of the file
    read back against the bound it was held to (a missed bound is an error before this: nothing is
    written then)."""
    from .console.style import Out
    from .console.verdict import verdict_line

    out = Out.for_stream(wide=getattr(args, "wide", False))
    if not check.tracks:
        out.print(verdict_line(out, args.output, True, "written, no rotation tracks"))
        return
    worst = max(check.tracks, key=lambda t: t.figures.max_error)
    fig = worst.figures
    where = "at the frames" if fig.at_frames else "between frames" if fig.frames else "at and between keys"
    bound = fig.bound if fig.bound is not None else fig.key_bound
    held = f", bound {bound:.4g} deg" if bound is not None else ""
    reason = f"{len(check.tracks)} tracks read back; worst {{path}}: {fig.max_error:.4f} deg {where}{held}"
    out.print(verdict_line(out, args.output, True, reason, worst.path or "(root)"))


def _convert_figures(check) -> str:
    """One line of read-back figures for a lossless write: keys added and the deviation at and
    between keys (frames, for per-frame BVH tracks, whose reference between frames is their Slerp)."""
    if not check.tracks:
        return "written file read back: no rotation tracks"
    at = max(check.tracks, key=lambda t: t.writer.key_error)
    between = max(check.tracks, key=lambda t: t.writer.max_error)
    frames = any(t.writer.frames for t in check.tracks)
    unit = "frames" if frames else "keys"
    added = check.keys_added
    add = f"{added} key(s) added by the writer" if added else "no keys added"
    if all(t.writer.at_frames for t in check.tracks):  # a BVH: poses at frames, nothing between
        return (
            f"written file read back: {check.keys_written} keys ({add}); max deviation at the frames "
            f"{at.writer.key_error:.4f} deg ({at.path or '(root)'})"
        )
    return (
        f"written file read back: {check.keys_written} keys ({add}); max deviation at {unit} "
        f"{at.writer.key_error:.4f} deg ({at.path or '(root)'}), between {unit} "
        f"{between.writer.max_error:.4f} deg ({between.path or '(root)'})"
    )


#: Unity's own import default for keyframe reduction error (degrees).
UNITY_REDUCE_DEG = 0.5


def _hint_wanted(clip, output: str) -> bool:
    """True for a dense clip (keys at half the frame rate or more) written as ``.anim``."""
    if not output.lower().endswith(".anim"):
        return False
    tracks = [t for t in clip.tracks if t.n_keys > 2]
    keys = sum(t.n_keys for t in clip.tracks)
    span = sum(t.curve.end - t.curve.start for t in tracks)
    return bool(tracks) and clip.frame_rate > 0 and keys >= 0.5 * clip.frame_rate * span


def _reduce_hint(clip, output: str) -> str | None:
    """For a dense clip written as ``.anim``: how much smaller ``clean --reduce 0.5`` (Unity's
    import default) would make it, in keys, measured by the engine's batched reduction of every
    track (``reduce.reduce_tracks``: 1.4 s for CMU_Sample_05_01's 165 joints x 599 frames idle, where the
    track-by-track loop it replaced took ~25 s and so stopped at a 4 s budget with an estimate)."""
    if not _hint_wanted(clip, output):
        return None
    tracks = [t for t in clip.tracks if t.n_keys > 2]
    keys = sum(t.n_keys for t in clip.tracks)
    from .engine.reduce import reduce_tracks

    before = sum(t.n_keys for t in tracks)
    after = sum(t.n_keys for t in reduce_tracks(tracks, UNITY_REDUCE_DEG))
    if after >= before:
        return None
    kept = after + keys - before
    return (
        f"dense clip: clean --reduce {UNITY_REDUCE_DEG:g} (Unity's import default error) would keep "
        f"{kept} of {keys} keys ({100.0 * (1 - kept / keys):.0f}% fewer)"
    )


# --------------------------------------------------------------------------------------------- turn


def _parse_axis(text: str):
    t = text.strip()
    if t.lower() in ("x", "y", "z"):
        return t.lower()
    parts = t.split(",")
    if len(parts) == 3:
        try:
            vec = tuple(_finite_float(p) for p in parts)
        except argparse.ArgumentTypeError:
            vec = None
        if vec is not None and any(vec):
            return vec
    raise argparse.ArgumentTypeError(f"expected x, y, z or a non-zero vector X,Y,Z, got {text!r}")


def cmd_turn(args) -> int:
    from pathlib import Path

    from .engine.clip import Clip
    from .io import write_checked

    _check_output(args.output, [])
    try:
        from .engine.turn import generate_turn
    except ImportError as exc:
        raise CliError(f"the turn generator is not available in this build ({exc})") from None
    try:
        track = generate_turn(
            args.from_deg,
            args.to_deg,
            axis=args.axis,
            direction=args.direction,
            speed_deg_s=args.speed,
            rate_hz=args.rate,
            tolerance_deg=args.tolerance,
            path=args.path,
            kind=args.kind,
        )
    except ValueError as exc:
        raise CliError(f"turn: {exc}") from None
    clip = Clip(
        name=Path(args.output).stem, frame_rate=args.rate, tracks=[track], meta={"format": "generated"}
    )
    check = write_checked(clip, args.output)
    warnings = list(check.warnings)
    duration = track.curve.end - track.curve.start
    print(
        f"{args.output}: turn {args.from_deg:g} -> {args.to_deg:g} deg about {args.axis} ({args.direction}) "
        f"at {args.speed:g} deg/s: {track.n_keys} keys over {duration:.3f} s"
    )
    print(_convert_figures(check))
    _warn(warnings)
    return 0


# -------------------------------------------------------------------------------------------- batch


def cmd_batch(args) -> int:
    import json

    try:
        from .batch.progress import choose_progress
        from .batch.runner import BatchCancelled, BatchError, run_batch
    except ImportError as exc:
        raise CliError(f"batch processing is not available in this build ({exc})") from None
    from .engine.recipe import Recipe

    if args.scheduler is not None and args.jobs is not None:
        raise CliError(
            "--jobs and --scheduler cannot be combined (--scheduler local:N sets the worker count)"
        )
    if args.ship is not None and args.scheduler is None:
        raise CliError("--ship needs --scheduler (it says how inputs reach the Dask workers)")
    recipe = Recipe.load(args.recipe)
    progress, close_progress = choose_progress(args.progress)
    try:
        report = run_batch(
            args.inputs,
            args.output,
            recipe,
            jobs=args.jobs or 1,
            report_path=args.report,
            progress=progress,
            out_ext=args.format and "." + args.format,
            scheduler=args.scheduler,
            ship=args.ship or "auto",
            review=args.html is not None,
        )
    except BatchError as exc:
        close_progress()
        raise CliError(str(exc)) from None
    except BatchCancelled as exc:
        report = exc.report
    except KeyboardInterrupt:  # before any file started (e.g. while a local cluster was starting)
        close_progress()
        print(f"{PROG}: cancelled before any file ran", file=sys.stderr)
        return 130
    finally:
        close_progress()
    page = _write_review(args.html, [_batch_entry(f) for f in report.files], args) if args.html else None
    if args.json:
        print(json.dumps(report.summary(args.report), indent=2))
    else:
        from .console.style import Out
        from .console.verdict import verdict_line

        out = Out.for_stream(wide=args.wide)
        for f in report.files:
            e = _batch_entry(f)
            out.print(verdict_line(out, f.input, e["ok"], e["reason"], e.get("worst")))
        line = f"{len(report.files)} file(s): {report.ok} ok, {report.failed} failed"
        if report.cancelled:
            line += f", {report.cancelled} cancelled"
        if report.retried:
            line += f", {report.retried} re-run after a worker died"
        print(f"{line} -> {args.output} (errors: the written files read back, against the inputs)")
        if page:
            print(f"review page: {page}")
    for f in report.files:
        if f.status == "failed":
            print(f"{PROG}: failed: {f.error}", file=sys.stderr)
    if report.cancelled:
        print(
            f"{PROG}: cancelled: {report.ok} output(s) written whole, {report.cancelled} file(s) not run",
            file=sys.stderr,
        )
    return report.exit_status


def _batch_entry(f) -> dict:
    """A batch file's review-page entry and verdict (``reason`` holds ``{path}`` for the worst track)."""
    worst = max(f.track_details, key=lambda t: t["max_error"], default=None) if f.ok else None
    if not f.ok:
        reason = " ".join(str(f.error or f.status).split())
    elif worst is None:
        reason = "written, no rotation tracks"
    else:
        reason = (
            f"{f.tracks} tracks, keys {f.keys_before} -> {f.keys_after}; worst {{path}}: "
            f"{worst['max_error']:.4f} deg"
        )
    entry = {
        "input": f.input,
        "output": f.output if f.ok else None,
        "status": f.status,
        "error": f.error,
        "ok": f.ok,
        "reason": reason,
        "worst": (worst["path"] or "(root)") if worst is not None else None,
        "tracks": f.tracks,
        "keys_before": f.keys_before,
        "keys_after": f.keys_after,
        "max_error": f.max_error if f.ok else None,
        "rms_error": f.rms_error if f.ok else None,
        "review": f.review or [],
    }
    return entry


def _write_review(folder: str, entries: list[dict], args) -> str:
    """The review page (``--html FOLDER``): ``FOLDER/index.html``; returns its path."""
    from .review.page import write_page

    shown = [
        dict(e, reason=e["reason"].format(path=e.get("worst") or "")) if "worst" in e else e for e in entries
    ]
    recipe = getattr(args, "recipe", None)
    title = f"curveeditor review: {len(entries)} clip(s)" + (
        f", recipe {os.path.basename(recipe)}" if recipe else ""
    )
    return write_page(folder, shown, title, note="Errors are of the written files read back, in degrees.")


# ------------------------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect and clean rotation curves of Unity .anim, BVH and CSV clips "
        "(Euler ZXY degrees, quaternions x,y,z,w).",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def order_arg(p):
        p.add_argument(
            "--order",
            choices=_ORDERS,
            default=None,
            metavar="ORDER",
            help="Euler order of CSV x,y,z columns (default zxy = Unity; upper case = intrinsic)",
        )

    def quiet_arg(p):
        p.add_argument(
            "--quiet",
            action="store_true",
            help="no progress line on stderr (it shows on a terminal when the work takes over 0.5 s)",
        )

    def wide_arg(p):
        p.add_argument(
            "--wide",
            action="store_true",
            help="on a terminal, print whole track paths (tables are fitted to the terminal's width "
            "otherwise; output into a pipe or file is always whole)",
        )

    p = sub.add_parser(
        "inspect",
        help="count wrap jumps, flips, gimbal keys, spikes per track",
        description="Counts per key step. Euler tracks are judged on their key values as stored (what Unity "
        "interpolates channel by channel); quaternion tracks on the continuous Euler decomposition the "
        "editor's graphs draw. wraps: a channel steps more than 180 deg (Euler: Unity plays a spin there; "
        "quaternion: always 0, the drawn curves never jump). flips: a channel moves more than 45 deg while "
        "the pose moves less than 10 deg (Euler: an equivalent-triple switch an unwrap removes, or a "
        "gimbal-lock flip; quaternion: only near gimbal lock); every flip is listed with its middle angle. "
        "hemi: quaternion keys on the opposite hemisphere of the previous one (Unity swings the long way; "
        "Euler: 0). gimbal: keys whose middle angle is within 5 deg of +-90. spikes: a fast step that "
        "comes straight back within 3 keys.",
    )
    p.add_argument("file", help="clip file (.anim, .bvh, .csv)")
    p.add_argument("--json", action="store_true", help='print {"file": ..., "tracks": [...]} as JSON')
    wide_arg(p)
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every track in clip order (clips of more than {PROBLEMS_FIRST_TRACKS} tracks list the "
        "tracks with problems first, worst first)",
    )
    order_arg(p)
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "clean",
        help="run clean-up operations (or a recipe) and write the result",
        description="Operations run in this order whatever the order of the flags: --to-order, --unwrap, "
        "--despike, --smooth, --max-speed, --limit, --resample, --reduce, then --to-kind. "
        "--recipe runs a recipe file instead (it cannot be combined with operation flags).",
    )
    p.add_argument("file", help="input clip (never overwritten)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output clip (.csv or .anim)")
    order_arg(p)
    p.add_argument("--track", action="append", metavar="PATH", help="only this track (repeatable)")
    p.add_argument("--unwrap", action="store_true", help="remove wrap jumps and Euler flips (pose unchanged)")
    p.add_argument(
        "--spin-speed",
        type=_positive_float,
        metavar="DEG_PER_S",
        help="with --unwrap and --resample: key steps slower than this are deliberate spins and keep "
        "their winding, faster ones are wraps taken the short way (default 1800)",
    )
    p.add_argument(
        "--resample", type=_positive_float, metavar="HZ", help="re-key on a uniform grid of HZ keys/s"
    )
    p.add_argument("--method", choices=_RESAMPLE_METHODS, help="resampling method (default slerp)")
    p.add_argument(
        "--reduce", type=_positive_float, metavar="DEG", help="remove keys within DEG geodesic error"
    )
    p.add_argument(
        "--smooth",
        metavar="SPEC",
        help="gaussian:SIGMA_S or butterworth:CUTOFF_HZ[:ORDER], in rotation space, zero-phase",
    )
    p.add_argument(
        "--despike",
        nargs="?",
        const=_AUTO,
        type=_positive_float,
        metavar="SPEED",
        help="replace spikes by Slerp (optional speed bound in deg/s; default automatic)",
    )
    p.add_argument("--max-speed", type=_positive_float, metavar="DEG_PER_S", help="cap the angular speed")
    p.add_argument(
        "--limit",
        metavar="SPEC",
        help="look-at clamp: yaw=MIN:MAX,pitch=MIN:MAX (degrees)[,smooth=SECONDS] or "
        "[,turnback=on[,lerp_speed=PER_S]] to turn back to neutral out of range, per frame "
        "(keys: the limit op's parameters)",
    )
    p.add_argument("--to-order", choices=_ORDERS, metavar="ORDER", help="same poses in another Euler order")
    p.add_argument("--to-kind", choices=("euler", "quaternion"), help="switch key kind, keeping the motion")
    p.add_argument("--recipe", metavar="R.json", help="run this recipe file instead of operation flags")
    p.add_argument("--report", metavar="R.json", help="also write the per-track report as JSON")
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every track (clips of more than {PROBLEMS_FIRST_TRACKS} tracks list the "
        f"{CLEAN_WORST_SHOWN} of largest error)",
    )
    p.add_argument("--html", metavar="REPORT_DIR", help="also write a review page, REPORT_DIR/index.html")
    quiet_arg(p)
    wide_arg(p)
    p.set_defaults(func=cmd_clean)

    p = sub.add_parser("sample", help="what Unity plays, sampled on a uniform grid, as CSV")
    p.add_argument("file", help="input clip")
    p.add_argument("--rate", type=_positive_float, required=True, metavar="HZ", help="samples per second")
    p.add_argument("-o", "--output", required=True, metavar="OUT.csv", help="output CSV")
    p.add_argument("--track", action="append", metavar="PATH", help="only this track (repeatable)")
    order_arg(p)
    quiet_arg(p)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("convert", help="convert between formats by extension (.anim, .csv; .bvh read only)")
    p.add_argument("file", help="input clip")
    p.add_argument("output", metavar="OUT", help="output clip")
    order_arg(p)
    p.add_argument(
        "--tolerance",
        type=_positive_float,
        metavar="DEG",
        help="per-frame (BVH) clips: add keys where the written curves leave the Slerp between frames by "
        "more than DEG (default: keys at the frames only; the deviation is reported)",
    )
    quiet_arg(p)
    wide_arg(p)
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("turn", help="generate keys for a constant-speed turn about an axis")
    p.add_argument("--from", dest="from_deg", type=_finite_float, required=True, metavar="DEG")
    p.add_argument("--to", dest="to_deg", type=_finite_float, required=True, metavar="DEG")
    p.add_argument("--axis", type=_parse_axis, default="y", metavar="x|y|z|X,Y,Z", help="default y (yaw)")
    p.add_argument(
        "--direction",
        choices=("positive", "negative", "shortest"),
        default="shortest",
        help="positive = the angle about the axis increases (may take the long way); default shortest",
    )
    p.add_argument("--speed", type=_positive_float, required=True, metavar="DEG_PER_S")
    p.add_argument("--rate", type=_positive_float, default=60.0, metavar="HZ", help="keys/s (default 60)")
    p.add_argument(
        "--tolerance", type=_nonneg_float, default=0.5, metavar="DEG", help="snap at the end (default 0.5)"
    )
    p.add_argument("--path", default="", metavar="NAME", help="track path (default '' = the root)")
    p.add_argument(
        "--kind", choices=("euler", "quaternion"), default="euler", help="key kind (default euler)"
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output clip (.csv or .anim)")
    p.set_defaults(func=cmd_turn)

    p = sub.add_parser("batch", help="run a recipe over many clips in parallel")
    p.add_argument("inputs", nargs="+", metavar="INPUT_DIR_OR_GLOB", help="folders, glob patterns or files")
    p.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="output folder")
    p.add_argument("--recipe", required=True, metavar="R.json", help="recipe file")
    p.add_argument(
        "--jobs", type=_positive_int, default=None, metavar="N", help="worker processes (default 1)"
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a Dask cluster: tcp://HOST:PORT of a running `dask scheduler`, or local[:N] to start "
        "N worker processes on this machine (needs: pip install 'curveeditor[cluster]')",
    )
    p.add_argument(
        "--ship",
        choices=("auto", "shared", "ship"),
        help="with --scheduler: shared = workers read the input paths (same storage at the same path), "
        "ship = send each file's bytes to the workers, auto (default) = shared when every worker sees "
        "every input with this machine's size and time",
    )
    p.add_argument("--report", metavar="R.json", help="write the per-file report as JSON")
    p.add_argument(
        "--format",
        choices=("anim", "csv", "bvh"),
        help="write every output in this format (default: as the input; BVH inputs as .anim; bvh needs "
        "BVH inputs)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout (schema: README)")
    p.add_argument(
        "--html",
        metavar="REPORT_DIR",
        help="also write a review page, REPORT_DIR/index.html: every input's verdict and figures, links "
        "to the outputs, before/after plots of each clip's worst tracks (opens from disk, no network)",
    )
    wide_arg(p)
    p.add_argument(
        "--progress",
        choices=("auto", "bar", "lines", "none"),
        default="auto",
        help="progress on stderr: a bar with rate and ETA on a terminal, one line per file otherwise (auto)",
    )
    p.set_defaults(func=cmd_batch)
    return parser


#: Threads OpenBLAS may start when numpy is first imported, unless the environment says otherwise.
#: The engine's work is element-wise numpy (no large matrix products), and ``batch --jobs N`` /
#: Dask workers are the parallelism: OpenBLAS's default pool (one thread per core) cost 0.06 s of CPU
#: at every numpy import on the 2-core machine (0.22 -> 0.16 s for ``import numpy``) and bought nothing.
BLAS_THREADS = "1"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 error) instead of exiting, so tests can call it."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, BLAS_THREADS)  # before numpy is imported (a user's setting wins)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        return _run_command(args)
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error of the command.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except CliError as exc:
        return _fail(str(exc))
    except Exception as exc:
        return _fail_typed(exc)


def _run_command(args) -> int:
    """Run the command with numpy's floating-point warnings collected instead of printed.

    Policy (issue 11): numpy prints a RuntimeWarning (two lines, file and source) when a value near
    the float limits overflows or turns invalid somewhere in a computation; printed raw before the
    one-line error they broke the error contract, and after a success they are noise the user cannot
    act on. Readers and writers check the values that matter (non-finite keys, float32 range) and
    raise a typed error, so: a command that fails prints only its one-line error; a command that
    succeeds prints at most one ``warning:`` line summarizing what numpy reported (the first message,
    where, and how many more). Warnings of other kinds are summarized the same way."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = args.func(args)
    if status == 0 and caught:
        _warn([_numeric_warning_summary(caught)])
    return status


def _numeric_warning_summary(caught) -> str:
    first = caught[0]
    where = first.filename.replace(os.sep, "/")
    where = where.split("/curveeditor/", 1)[-1] if "/curveeditor/" in where else os.path.basename(where)
    text = " ".join(str(first.message).split())
    more = f"; {len(caught) - 1} more" if len(caught) > 1 else ""
    return (
        f"{first.category.__name__}: {text} ({where}:{first.lineno}{more}): "
        "the input holds values near the floating-point limits"
    )


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _fail_typed(exc: Exception) -> int:
    """Known error types become one-line errors; anything else is a bug and keeps its traceback."""
    from .io.errors import ClipError

    if isinstance(exc, ClipError):
        return _fail(str(exc))
    try:
        from .engine.recipe import RecipeError
    except ImportError:
        RecipeError = ()  # noqa: N806
    if isinstance(exc, RecipeError):
        return _fail(str(exc))
    raise exc


if __name__ == "__main__":
    sys.exit(main())
