"""curveeditor-cli: the headless face of the engine.

Commands (``curveeditor-cli COMMAND --help`` for details)::

    inspect FILE [--json] [--order ORDER] [--take NAME|INDEX]
    clean   FILE -o OUT [--order ORDER] [--take NAME|INDEX] [--track PATH]... [operation flags |
            --recipe R.json] [--report R.json] [--no-editor-curves]
    sample  FILE --rate HZ -o OUT.csv [--track PATH]... [--take NAME|INDEX]
    convert FILE OUT [--tolerance DEG] [--take NAME|INDEX] [--no-editor-curves]
    turn    --from DEG --to DEG [--axis x|y|z|X,Y,Z] [--direction ...] --speed DEG_PER_S [--rate HZ]
            [--tolerance DEG] [--path NAME] -o OUT
    batch   INPUT_DIR_OR_GLOB... -o OUT_DIR --recipe R.json [--jobs N | --scheduler ADDRESS|local[:N]
            [--ship auto|shared|ship]] [--report R.json] [--format anim|csv|bvh|gltf|glb]
            [--json] [--no-editor-curves]
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
SHORTHAND_ORDER = (
    "to_order",
    "unwrap",
    "unflip",
    "despike",
    "smooth",
    "max_speed",
    "limit",
    "resample",
    "reduce",
)

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


def _read(path: str, order: str | None = None, take: str | None = None):
    from .io import read_clip

    return read_clip(path, order=order, take=take)


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


def _path_shortener(paths, out):
    """``text -> text`` with every track path of ``paths`` standing alone in it (after a space or
    ``(``, before a space, ``)``, ``,``, ``:`` or ``;``) shown as :func:`_shown_path` shows it: the
    engine's sentences name whole paths, a terminal's lines need the bone names whole."""
    if out is None or out.width is None:
        return lambda text: text
    import re

    names = sorted({p for p in paths if p}, key=len, reverse=True)
    if not names:
        return lambda text: text
    pattern = re.compile(r"(?<=[(\s])(" + "|".join(map(re.escape, names)) + r")(?=[),:;\s]|$)")
    return lambda text: pattern.sub(lambda m: _shown_path(m.group(1), out), text)


def _shown_path(path: str, out) -> str:
    """A track path as a line of text shows it: whole in a pipe, on a terminal at most half its
    width (the middle elided, the bone name whole)."""
    shown = path or "(root)"
    if out is None or out.width is None:
        return shown
    from .console.tables import elide_path

    return elide_path(shown, max(out.width // 2, len(shown.rpartition("/")[2]) + 2), out.ellipsis)


def _take_lines(clip) -> list[str]:
    """For a file of several takes (FBX stacks, glTF animations): which one was read, and the FBX
    nodes Unity resamples (their rotation is not their curves alone)."""
    takes = clip.meta.get("takes")
    if not takes:
        return []
    take = clip.meta.get("take")
    i = takes.index(take) if take in takes else 0
    others = "" if len(takes) == 1 else f" (--take NAME|INDEX picks another: {', '.join(map(repr, takes))})"
    lines = [f"take: {take!r}, {i + 1} of {len(takes)}{others}"]
    resampled = clip.meta.get("resampled") or []
    if resampled:
        lines.append(
            f"resampled per frame as Unity's importer does: {len(resampled)} node(s), e.g. {resampled[0]}"
        )
    return lines


#: The problem columns of ``inspect``: (report field, header, counted in the verdict, the word for
#: one in the verdict). Gimbal keys
#: are the poses themselves (no clean-up removes them): shown, but they do not fail a file.
PROBLEM_COLUMNS = (
    ("wrap_jumps", "wraps", True, "wrap"),
    ("euler_flips", "flips", True, "flip"),
    ("hemisphere_flips", "hemi", True, "hemisphere flip"),
    ("gimbal_keys", "gimbal", False, "gimbal key"),
    ("spikes", "spikes", True, "spike"),
    ("pops", "pops", True, "pop"),
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
    from .console.tables import Column, file_lines, render_table, wrap_text
    from .console.verdict import verdict_line
    from .engine.analysis import flip_details_all, inspect_clip

    clip = _read(args.file, args.order, args.take)
    reports = inspect_clip(clip)
    flips = flip_details_all(clip.tracks)
    if args.json:
        import json

        out = {"file": args.file, "tracks": [r.as_dict() for r in reports]}
        if clip.meta.get("takes"):
            out["take"] = clip.meta.get("take")
            out["takes"] = list(clip.meta["takes"])
        out["flips"] = [dict(fd.as_dict(), reason=fd.reason) for fd in flips]
        out["pops"] = _pop_dicts(clip, reports)
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
    for line in _take_lines(clip):
        out.print(line)
    paths = [_shown_path(r.path, out) for r in reports]
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
        "pops": sum(r.pops for r in reports),
    }
    found = [f"{k} {n}" for k, n in totals.items() if n]
    out.print("problems: " + (", ".join(found) if found else "none"))
    for line in _flip_lines(flips, out=out):
        out.print(line)
    for line in _pop_lines(clip, reports, out):
        for part in wrap_text(out, line.lstrip(" "), line[: len(line) - len(line.lstrip(" "))], paths):
            out.print(part)
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


def _pop_dicts(clip, reports) -> list[dict]:
    """``inspect --json``'s ``pops``: ``{path, time, index, detail}`` per pop."""
    from .engine.analysis import find_problems

    out = []
    for r in reports:
        if r.pops:
            for p in find_problems(clip.track(r.path)):
                if p.kind == "pop":
                    out.append({"path": p.path, "time": p.time, "index": p.index, "detail": p.detail})
    return out


def _pop_lines(clip, reports, out=None) -> list[str]:
    """One line per pop (``analysis``'s "pop" problems: a step far faster than the rest of its track
    that does not come back), at most :data:`MAX_LISTED_FLIPS`."""
    from .engine.analysis import find_problems

    pops = []
    for r in reports:
        if r.pops:
            pops += [p for p in find_problems(clip.track(r.path)) if p.kind == "pop"]
    if not pops:
        return []
    lines = [f"pops: {len(pops)} (the poses do not say what plays between those keys; fix the capture)"]
    for p in pops[:MAX_LISTED_FLIPS]:
        lines.append(f"  {_shown_path(p.path, out)} key {p.index} at {p.time:.3f} s: {p.detail}")
    if len(pops) > MAX_LISTED_FLIPS:
        lines.append(f"  ... and {len(pops) - MAX_LISTED_FLIPS} more (--json lists all)")
    return lines


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
    if args.unflip:
        steps["unflip"] = {"op": "unflip"}
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
        if args.pose_error is not None:
            steps["resample"]["pose_error"] = args.pose_error
    if args.reduce is not None:
        steps["reduce"] = {"op": "reduce", "max_error": args.reduce}
        if args.tip_error is not None:
            steps["reduce"]["tip_error"] = args.tip_error
        if args.per_channel:
            steps["reduce"]["per_channel"] = True
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
    ("unflip", "--unflip"),
    ("despike", "--despike"),
    ("smooth", "--smooth"),
    ("max_speed", "--max-speed"),
    ("limit", "--limit"),
    ("resample", "--resample"),
    ("method", "--method"),
    ("pose_error", "--pose-error"),
    ("reduce", "--reduce"),
    ("tip_error", "--tip-error"),
    ("per_channel", "--per-channel"),
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
    if args.pose_error is not None and args.resample is None:
        raise CliError("--pose-error needs --resample HZ")
    if args.tip_error is not None and args.reduce is None:
        raise CliError("--tip-error needs --reduce DEG (the angle bound; both hold)")
    if args.per_channel and args.reduce is None:
        raise CliError("--per-channel needs --reduce DEG")
    steps = _shorthand_steps(args)
    if not steps:
        raise CliError("nothing to do: give --recipe R.json or at least one operation (e.g. --unwrap)")
    try:
        return Recipe.of(*steps)
    except RecipeError as exc:
        raise CliError(str(exc)) from None


def _writer_flags(args) -> dict:
    """The writer options of ``convert``'s flags (``--no-editor-curves``: ``.anim`` only)."""
    if args.editor_curves:
        return {}
    if not args.output.lower().endswith(".anim"):
        raise CliError(f"{args.output}: --no-editor-curves applies to .anim outputs only")
    return {"editor_curves": False}


def cmd_clean(args) -> int:
    from .engine.recipe import RecipeError, run_recipe, write_options
    from .io import write_checked
    from .io.losses import write_losses
    from .io.promises import recipe_promise, track_entries, write_margin

    protect = [args.file]
    _check_output(args.output, protect)
    _writer_flags(args)  # a flag the output's format has no use for fails before any work
    if args.report:
        _check_report(args.report, args.file, args.output)
    recipe = _clean_recipe(args)
    with _progress(args, ["read", *(s.op for s in recipe.steps), "write", "verify"]) as progress:
        progress.step("read")
        clip = _read(args.file, args.order, args.take)
        paths = _select_paths(clip, args.track, args.file)
        # The format's own error (float32, a writer's conversion) is kept inside every --reduce
        # bound, so the file read back holds the bound asked for at the input's keys (io.promises).
        margin = write_margin(clip, args.output)
        try:
            # The figures of the file are the written file's (write_checked below); the steps'
            # figures are each step against the track just before it (engine.step_figures).
            from .io.beside import fork_map

            # reduce's chunks of work, every other one on the second core (io.beside.fork_map).
            result = run_recipe(
                clip,
                recipe,
                paths=paths,
                diffs=False,
                reserve_deg=margin,
                step_progress=progress.recipe_step,
                map_chunks=fork_map,
            )
        except RecipeError as exc:
            raise CliError(f"{args.file}: {exc}") from None
        # What the output format cannot hold of this clip, computed from the clip before the write
        # and printed first once it succeeded (a failed command prints only its one-line error).
        losses = write_losses(result.clip, args.output)
        # The figures below are the written file's: read back before the rename and compared with
        # the input (within the recipe's bound when it has one; nothing is written when it is missed).
        check = write_checked(
            result.clip,
            args.output,
            protect=protect,
            promise=recipe_promise(clip, recipe, margin),
            phase=progress.phase,
            **write_options(recipe, args.output, paths, result, args.editor_curves),
        )
    warnings = []
    for path, log in result.changes.items():
        warnings.extend(f"track {path!r}: {line}" for line in log if line.startswith("skipped"))
    _warn(losses)
    warnings.extend(w for w in check.warnings if w not in losses)

    tracks = track_entries(clip, result, check)
    positions = _position_figures(clip, result, recipe, check)
    # Counted on the written file: the writer's Euler conversion (e.g. a BVH's ZYX frames keyed as
    # Unity's ZXY) decides the Euler curves the user gets, not the recipe's in-memory result.
    flips = _flips_left(check.clip if check.clip is not None else result.clip, tracks)
    report = {
        "file": args.file,
        "output": args.output,
        "recipe": recipe.to_dict(),
        "margin_deg": margin,
        "steps": result.step_lines(),
        "tracks": tracks,
        "flips": [dict(fd.as_dict(), reason=fd.reason) for fd in flips],
        "warnings": warnings,
        "written": check.as_dict(),
    }
    if positions is not None:
        report["positions"] = positions
    if args.json:
        import json

        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        from .console.style import Out

        out = Out.for_stream(wide=args.wide)
        for line in _clean_lines(args, clip, recipe, result, check, tracks, flips, out):
            out.print(line)
        _print_check_notes(args, check)
        if positions is not None:
            print(
                f"joint positions: max error {positions['max_error_mm']:.3f} mm at the input's keys "
                f"({positions['worst_joint']}), certified bound {positions['certified_mm']:.3f} mm "
                f"(--tip-error {positions['tip_error_mm']:g} mm; {positions['mm_per_unit']:g} mm per unit)"
            )
    _warn(warnings)
    failed = _failed_steps(result)
    if not args.json:
        _print_write_verdict(args, check, failed)
    if args.html:
        path = _write_review(args.html, [_clean_entry(args, clip, check, result, tracks, failed)], args)
        if not args.json:
            print(f"review page: {path}")
    if args.report:
        _write_json(args.report, report, protect=[args.file, args.output])
    return 1 if failed else 0


def _failed_steps(result) -> list:
    """The step figures that missed the tolerance asked for (``StepFigure.ok`` False), worst first."""
    figs = [f for fl in result.figures.values() for f in fl if f.passed is False]
    return sorted(figs, key=lambda f: -(f.measured or 0.0))


def _clean_entry(args, clip, check, result, tracks, failed) -> dict:
    """``clean``'s one entry of the review page (:mod:`curveeditor.review`)."""
    import math

    from .review.data import clip_review

    written = check.clip if check.clip is not None else result.clip
    worst = max(tracks, key=lambda t: t["max_error"], default=None)
    reason = f"{len(tracks)} tracks"
    if worst is not None:
        reason += f"; worst {worst['path'] or '(root)'}: {worst['max_error']:.4f} deg"
    if failed:
        reason = f"{len(failed)} step figure(s) over their tolerance; " + reason
    return {
        "input": args.file,
        "output": args.output,
        "status": "ok",
        "ok": not failed,
        "reason": reason,
        "tracks": len(tracks),
        "keys_before": sum(t["keys_before"] for t in tracks),
        "keys_after": sum(t["keys_written"] for t in tracks),
        "max_error": max((t["max_error"] for t in tracks), default=0.0),
        "rms_error": math.sqrt(sum(t["rms_error"] ** 2 for t in tracks) / len(tracks)) if tracks else 0.0,
        "steps": result.step_lines(),
        "review": clip_review(clip, written, {t["path"]: t["max_error"] for t in tracks}),
    }


#: ``clean`` text lists at most this many explaining notes (``--json`` has them all).
MAX_LISTED_NOTES = 20


def _clean_lines(args, source, recipe, result, check, tracks, flips, out) -> list[str]:
    """``clean``'s text report for ``out`` (a terminal: fitted to its width; a pipe: whole rows): the
    per-track table (keys; each step's figure against the track just before it; the written file read
    back), one line per step, the written file's line, the notes that explain large figures, the
    flips left. Clips of more than :data:`PROBLEMS_FIRST_TRACKS` tracks list the
    :data:`CLEAN_WORST_SHOWN` of largest change (``--all``: every track)."""
    from .console.tables import Column, file_lines, render_table, wrap_text
    from .io import SAMPLE_FORMATS

    figs = result.figures
    steps = list(recipe.steps)
    labels = {}
    for f in (f for fl in figs.values() for f in fl):
        labels.setdefault(f.number, f.label)
    step_heads = [f"{n} {labels.get(n, s.op)}" for n, s in enumerate(steps, start=1)]
    shown = tracks
    if len(tracks) > PROBLEMS_FIRST_TRACKS and not args.all:
        shown = sorted(tracks, key=lambda t: -t["max_error"])[:CLEAN_WORST_SHOWN]
    rows = []
    for t in shown:
        cells = {f.number: f.cell() for f in figs.get(t["path"], ())}
        rows.append(
            [
                t["path"] or "(root)",
                str(t["keys_before"]),
                str(t["keys_after"]),
                str(t["keys_written"]),
                *[cells.get(n, "-") for n in range(1, len(steps) + 1)],
                f"{t['writer_max_error']:.6f}",
                f"{t['max_key_error']:.6f}",
            ]
        )
    lines = file_lines(out, f"{args.file} -> {args.output}", ", ".join(s.op for s in steps))
    fail = lambda cell: "failed" if cell.endswith(("FAIL", "!")) else None  # noqa: E731
    columns = [
        Column("track", "left", path=True),
        Column("keys before"),
        Column("keys after"),
        Column("keys written"),
        *[Column(h, style=fail) for h in step_heads],
        Column("file vs result (deg)"),
        Column("at keys (deg)"),
    ]
    lines += render_table(columns, rows, out)
    if len(shown) < len(tracks):
        lines.append(
            f"... and {len(tracks) - len(shown)} track(s) with smaller changes (--all lists every track)"
        )
    keep = [_shown_path(t["path"], out) for t in tracks]
    text = list(result.step_lines())
    if tracks:
        sample_out = os.path.splitext(args.output)[1].lower() in SAMPLE_FORMATS
        text.append(_written_line(source, recipe, result, check, tracks, sample_out, out))
    # The largest changes first: each explained in a line (the rest: --json).
    notes = sorted(((p, f) for p, fl in figs.items() for f in fl if f.notes), key=lambda x: -x[1].max_error)
    for p, f in notes[:MAX_LISTED_NOTES]:
        for n in f.notes:
            text.append(f"  note: {_shown_path(p, out)}, step {f.number} {f.op}: {n}")
    if len(notes) > MAX_LISTED_NOTES:
        text.append(f"  ... and {len(notes) - MAX_LISTED_NOTES} more notes (--json lists all)")
    shown_paths = _path_shortener([t["path"] for t in tracks], out)
    for line in text:
        body = shown_paths(line.lstrip(" "))
        lines += wrap_text(out, body, line[: len(line) - len(line.lstrip(" "))], keep)
    lines += _flip_lines(flips, "in the written file's Euler curves; --to-kind quaternion has none", out)
    return lines


def _written_line(source, recipe, result, check, tracks, sample_out: bool, out=None) -> str:
    """The written file read back: keys, its error from the recipe's result (the format's own), and
    against the input at its keys (held to the bound asked for, when the recipe has one) and, when
    no step changed the motion on purpose, between them."""
    from .io.promises import recipe_key_bound

    before = sum(t["keys_before"] for t in tracks)
    after = sum(t["keys_after"] for t in tracks)
    written = sum(t["keys_written"] for t in tracks)
    extra = f" ({written - after:+d} by the writer)" if written != after else ""
    fmt = max(tracks, key=lambda t: t["writer_max_error"])
    at = max(tracks, key=lambda t: t["max_key_error"])
    # A BVH holds poses at frames (no curves between them): its figures are at the frames.
    where = " at the frames" if sample_out else ""
    keys = "frames" if any(c.figures.frames for c in check.tracks) else "keys"
    line = (
        f"total keys {before} -> {after}, written {written}{extra}; written file read back{where}: "
        f"{fmt['writer_max_error']:.6f} deg from the recipe's result ({_shown_path(fmt['path'], out)}); "
        f"vs the input at its {keys}: max {at['max_key_error']:.6f} deg ({_shown_path(at['path'], out)})"
    )
    bound = recipe_key_bound(recipe)
    if bound is not None and any(s.op == "reduce" for s in recipe.steps):
        ok = all(t["key_bound"] is None or t["max_key_error"] <= t["key_bound"] for t in tracks)
        line += f" (bound {bound:g} deg: {'ok' if ok else 'FAIL'})"
    intended = any(
        f.changed and f.role in ("lossless", "change") or f.op == "resample"
        for fl in result.figures.values()
        for f in fl
    )
    if not intended and not sample_out:
        worst = max(tracks, key=lambda t: t["max_error"])
        name = _shown_path(worst["path"], out)
        if keys == "frames":
            own = _input_curve_deviation(source, worst["path"])
            line += (
                f"; between frames, against what a BVH plays (the Slerp of its frames: README): max "
                f"{worst['max_error']:.6f} deg ({name}), where the input's own curves (ClampedAuto "
                f"through its frames, what the editor and the recipe work on) already play up to {own}"
            )
        else:
            line += f", between keys: max {worst['max_error']:.6f} deg ({name})"
    return line


def _input_curve_deviation(source, path: str) -> str:
    """How far the input track ``path`` (per-frame samples, read as curves through its frames) plays
    from the Slerp of its frames, at most, and where (``engine.reorder.frame_deviation``); a pop
    there (``analysis.pop_mask``) is named: its frames do not say what plays between them."""
    import numpy as np

    from .engine.analysis import pop_mask
    from .engine.clip import key_quaternions
    from .engine.reorder import frame_deviation

    t = source.track(path)
    q = key_quaternions(t)
    grid, err = frame_deviation(t.times, q, t)
    i = int(np.argmax(err))
    k = int(np.clip(np.searchsorted(t.times, grid[i], side="right") - 1, 0, t.n_keys - 2))
    text = f"{err[i]:.6f} deg from that Slerp (at {grid[i]:.3f} s"
    if pop_mask(t.times, q)[k]:
        step = float(np.degrees(2 * np.arccos(min(1.0, abs(float(np.dot(q[k], q[k + 1])))))))
        dt = float(t.times[k + 1] - t.times[k])
        text += f", a pop: {step:.1f} deg in one frame, {step / dt:,.0f} deg/s (inspect)"
    return text + ")"


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


def _position_figures(clip, result, recipe, check) -> dict | None:
    """For a recipe whose reduce step has a ``tip_error``: the joint-position figures of the written
    file against the input (mm), measured at the input's keys (a BVH: every frame) and certified from
    each track's certified angle error (``engine.tip_error.position_bound``), else None."""
    step = next((s for s in recipe.steps if s.op == "reduce" and s.params.get("tip_error") is not None), None)
    if step is None:
        return None
    import numpy as np

    from .engine.diff import diff_tracks
    from .engine.skeleton import skeleton_from_clip
    from .engine.tip_error import length_unit_mm, position_bound, position_errors
    from .io.verify import FLOAT32_SLACK_DEG

    skeleton, _why = skeleton_from_clip(clip)
    written = check.clip if check.clip is not None else result.clip
    unit = length_unit_mm(clip, skeleton)
    times = np.unique(np.concatenate([t.times for t in clip.tracks if t.n_keys]))
    measured, where = position_errors(skeleton, clip, written, times)
    angles = {}
    for path in result.changes:
        d = diff_tracks(clip.track(path), result.clip.track(path))
        proven = d.bound if np.isfinite(d.bound) else d.max_error
        angles[path] = max(d.max_error, proven) + FLOAT32_SLACK_DEG
    return {
        "tip_error_mm": float(step.params["tip_error"]),
        "max_error_mm": measured * unit,
        "worst_joint": where,
        "certified_mm": position_bound(skeleton, clip, angles) * unit,
        "mm_per_unit": unit,
    }


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
        clip = _read(args.file, args.order, args.take)
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
    flags = _writer_flags(args)
    from .io.beside import Beside, may_fork
    from .io.losses import write_losses

    with _progress(args, ["read", "write", "verify"]) as progress:
        progress.step("read")
        clip = _read(args.file, args.order, args.take)
        # The reduce hint needs only the source: computed in a child beside the write when it may
        # fork (CMU_Sample_05_01: 1.4 s of reduction off the command's path).
        # What the output format cannot hold, from the clip alone (printed first once the write
        # succeeded: a failed command prints only its one-line error).
        losses = write_losses(clip, args.output)
        hint_beside = _hint_wanted(clip, args.output) and may_fork()
        hinting = Beside(lambda: _reduce_hint(clip, args.output)) if hint_beside else None
        try:
            check = write_checked(
                clip,
                args.output,
                protect=[args.file],
                tolerance=args.tolerance,
                phase=progress.phase,
                **flags,
            )
        except BaseException:
            if hinting is not None:
                hinting.close()
            raise
    # The clip read back keeps the file's text for minimal-diff rewrites (100 MB for a dense clip):
    # not needed past the figures, and a hint computed here would otherwise add to it.
    check = dataclasses.replace(check, clip=None)
    keys = sum(t.n_keys for t in clip.tracks)
    from .console.style import Out
    from .console.tables import file_lines

    out = Out.for_stream(wide=getattr(args, "wide", False))
    for line in file_lines(
        out, f"{args.file} -> {args.output}", f"{len(clip.tracks)} rotation track(s), {keys} keys"
    ):
        out.print(line)
    _print_fitted(args, [_convert_figures(check)], check)
    _print_check_notes(args, check)
    done, hint = hinting.result() if hinting is not None else (False, None)
    if not done:
        hint = _reduce_hint(clip, args.output)
    _print_fitted(args, [hint], check)
    _warn(losses + [w for w in check.warnings if w not in losses])
    _print_write_verdict(args, check)
    return 0


def _print_write_verdict(args, check, failed=()) -> None:
    """The closing verdict of a command that wrote ``check.path``: the worst deviation of the file
    read back against the bound it was held to (a missed bound is an error before this: nothing is
    written then), or FAILED with the first of ``failed`` (step figures over their tolerance)."""
    from .console.style import Out
    from .console.verdict import verdict_line

    out = Out.for_stream(wide=getattr(args, "wide", False))
    if failed:
        f = failed[0]
        reason = (
            f"{len(failed)} step figure(s) over their tolerance; worst {{path}}: {f.label} "
            f"{f.measured:.4g} deg > {f.tolerance:g} deg ({f.tolerance_of})"
        )
        out.print(verdict_line(out, args.output, False, reason, f.path or "(root)"))
        return
    if not check.tracks:
        out.print(verdict_line(out, args.output, True, "written, no rotation tracks"))
        return
    worst = max(check.tracks, key=lambda t: t.figures.key_error)
    fig = worst.figures
    where = "at the frames" if (fig.at_frames or fig.frames) else "at the input's keys"
    bound = fig.key_bound if fig.key_bound is not None else fig.bound
    held = f", bound {bound:.4g} deg" if bound is not None else ""
    reason = f"{len(check.tracks)} tracks read back; worst {{path}}: {fig.key_error:.4f} deg {where}{held}"
    out.print(verdict_line(out, args.output, True, reason, worst.path or "(root)"))


def _print_check_notes(args, check) -> None:
    """The written file's format-precision line (``WriteCheck.precision_line``) and its non-rotation
    curves line (``WriteCheck.curves_line``), those it has (:func:`_print_fitted`)."""
    _print_fitted(args, [check.precision_line(), check.curves_line()], check)


def _print_fitted(args, lines, check) -> None:
    """``lines`` (None: skipped) fitted to the terminal with the write ``check``'s track paths and
    curve names whole; one line each in a pipe."""
    from .console.style import Out
    from .console.tables import wrap_text

    out = Out.for_stream(wide=getattr(args, "wide", False))
    whole = [*(t.path for t in check.tracks), *(c.name for c in check.curves)]
    for line in lines:
        if line is not None:
            for part in wrap_text(out, line, keep=whole):
                out.print(part)


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
    import default) would make it, in keys, by the engine's batched reduction
    (``reduce.kept_key_estimate``: exact up to 262,144 keys, 1.4 s for CMU_Sample_05_01's 165 joints x
    599 frames idle; a long take is measured on an even sample of its windows and says so)."""
    if not _hint_wanted(clip, output):
        return None
    from .engine.reduce import kept_key_estimate

    keys = sum(t.n_keys for t in clip.tracks)
    kept, share = kept_key_estimate(clip.tracks, UNITY_REDUCE_DEG)
    if kept >= keys:
        return None
    fewer = f"{100.0 * (1 - kept / keys):.0f}% fewer"
    if share < 1.0:
        about = round(kept, 3 - len(str(kept)))  # three significant digits: it is an estimate
        return (
            f"dense clip: clean --reduce {UNITY_REDUCE_DEG:g} (Unity's import default error) would keep "
            f"about {about} of {keys} keys ({fewer}; estimated on {100.0 * share:.0f}% of the keys)"
        )
    return (
        f"dense clip: clean --reduce {UNITY_REDUCE_DEG:g} (Unity's import default error) would keep "
        f"{kept} of {keys} keys ({fewer})"
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
            editor_curves=args.editor_curves,
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
            out.print(verdict_line(out, f.label, e["ok"], e["reason"], e.get("worst")))
        line = f"{len(report.files)} file(s): {report.ok} ok, {report.failed} failed"
        if report.cancelled:
            line += f", {report.cancelled} cancelled"
        if report.retried:
            line += f", {report.retried} re-run after a worker died"
        print(f"{line} -> {args.output}")
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
    """A batch file's review-page entry and verdict (``reason`` holds ``{path}`` for the track it
    names): FAILED when the file failed or a step's figure missed its tolerance; else the worst
    bounded step's figure against its tolerance (the intended changes of lossless steps are not
    error), or without one the largest move of a pose at the input's keys."""
    figures = [(t["path"], s) for t in f.track_details for s in t.get("steps", ())]
    failed = sorted(
        (x for x in figures if x[1].get("passed") is False), key=lambda x: -(x[1]["measured"] or 0)
    )
    bounded = [x for x in figures if x[1].get("tolerance")]
    worst_path = None
    keys = f"{f.tracks} tracks, keys {f.keys_before} -> {f.keys_after}"
    if not f.ok:
        reason = " ".join(str(f.error or f.status).split())
    elif failed:
        worst_path, s = failed[0]
        reason = (
            f"{len(failed)} step figure(s) over their tolerance; worst {{path}}: {s['label']} "
            f"{s['measured']:.4g} deg > {s['tolerance']:g} deg"
        )
    elif bounded:
        worst_path, s = max(bounded, key=lambda x: (x[1]["measured"] or 0.0) / x[1]["tolerance"])
        reason = f"{keys}; worst {{path}}: {s['label']} {s['measured']:.4g} deg (ok)"
    elif f.track_details:
        t = max(f.track_details, key=lambda t: t.get("max_key_error", 0.0))
        worst_path = t["path"]
        reason = f"{keys}; poses at keys moved max {t.get('max_key_error', 0.0):.4f} deg ({{path}})"
    else:
        reason = "written, no rotation tracks"
    return {
        "input": f.input,
        "output": f.output if f.ok else None,
        "status": f.status,
        "error": f.error,
        "ok": f.ok and not failed,
        "reason": reason,
        "worst": (worst_path or "(root)") if worst_path is not None else None,
        "tracks": f.tracks,
        "keys_before": f.keys_before,
        "keys_after": f.keys_after,
        "max_error": f.max_error if f.ok else None,
        "rms_error": f.rms_error if f.ok else None,
        "steps": list(getattr(f, "steps", []) or []),
        "review": f.review or [],
    }


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
    return write_page(
        folder,
        shown,
        title,
        note=(
            "Figures: the written files read back against the inputs, in degrees; a clip's section "
            "lists what its steps changed on purpose and each lossy step's figure against its tolerance."
        ),
    )


# ------------------------------------------------------------------------------------------- parser


#: What a writer needs beyond the clip, for the help text (formats without a note need nothing).
_WRITE_NOTES = {".bvh": "clips read from a BVH"}


def _exts(table) -> str:
    """``.anim, .bvh, .csv``: the extensions of a format table (``io.formats``), sorted."""
    return ", ".join(sorted(table))


def _write_exts() -> str:
    """The written formats with what each needs: ``.anim, .bvh (clips read from a BVH), .csv``."""
    from .io.formats import WRITE_FORMATS

    return ", ".join(f"{e} ({_WRITE_NOTES[e]})" if e in _WRITE_NOTES else e for e in sorted(WRITE_FORMATS))


def build_parser() -> argparse.ArgumentParser:
    # Format lists come from the reader and writer tables, so the help stays true as formats land.
    from .io.formats import READ_FORMATS, WRITE_FORMATS

    reads, writes = _exts(READ_FORMATS), _write_exts()
    plain = _exts([e for e in WRITE_FORMATS if e not in _WRITE_NOTES])  # what a generated clip can be
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect and clean rotation curves of Unity .anim, BVH, CSV, FBX (read) and glTF clips "
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
        p.add_argument(
            "--take",
            default=None,
            metavar="NAME|INDEX",
            help="FBX animation stack / glTF animation to read (default the first; inspect lists them)",
        )

    def quiet_arg(p):
        p.add_argument(
            "--quiet",
            action="store_true",
            help="no progress line on stderr (it shows on a terminal when the work takes over 0.5 s)",
        )

    def editor_curves_arg(p):
        p.add_argument(
            "--no-editor-curves",
            dest="editor_curves",
            action="store_false",
            help=".anim outputs: write only the curves Unity plays, not the Animation window's editor "
            "curves (a third of the size of a dense Euler clip, as an FBX import's copy or a clip made in "
            "code; the Animation window then has no curves to show or edit)",
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
    p.add_argument("file", help=f"clip file ({reads})")
    p.add_argument("--json", action="store_true", help='print {"file": ..., "tracks": [...]} as JSON')
    order_arg(p)
    wide_arg(p)
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every track in clip order (clips of more than {PROBLEMS_FIRST_TRACKS} tracks list the "
        "tracks with problems first, worst first)",
    )
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "clean",
        help="run clean-up operations (or a recipe) and write the result",
        description="Operations run in this order whatever the order of the flags: --to-order, --unwrap, "
        "--despike, --smooth, --max-speed, --limit, --resample, --reduce, then --to-kind. "
        "--recipe runs a recipe file instead (it cannot be combined with operation flags).",
    )
    p.add_argument("file", help="input clip (never overwritten)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=f"output clip: {writes}")
    order_arg(p)
    p.add_argument("--track", action="append", metavar="PATH", help="only this track (repeatable)")
    p.add_argument("--unwrap", action="store_true", help="remove wrap jumps and Euler flips (pose unchanged)")
    p.add_argument(
        "--unflip",
        action="store_true",
        help="quaternion tracks: every key on its predecessor's hemisphere (Euler tracks: --unwrap)",
    )
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
        "--pose-error",
        type=_nonneg_float,
        metavar="DEG",
        help="with --resample: pose error allowed per key near gimbal lock for smoother Euler channels "
        "(default 0: every key exactly the resampled pose); the report prints the figure",
    )
    p.add_argument(
        "--reduce", type=_positive_float, metavar="DEG", help="remove keys within DEG geodesic error"
    )
    p.add_argument(
        "--tip-error",
        type=_positive_float,
        metavar="MM",
        # The reduce op's tip_error parameter (engine.recipe.OPS; not imported here: --help stays numpy-free)
        help="with --reduce: also keep every joint's world position within MM (clips with a skeleton; "
        "BVH taken as centimetres, .anim as metres)",
    )
    p.add_argument(
        "--per-channel",
        action="store_true",
        help="with --reduce: key the X, Y, Z channels of Euler tracks (x, y, z, w of quaternion "
        "tracks) independently where that keeps fewer keys per channel (.anim editor curves hold each "
        "channel's own keys), and refit near misses for the smallest largest error: the fewest keys, slower",
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
        "--json",
        action="store_true",
        help="print the report (the --report JSON) on stdout instead of the table",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every track (clips of more than {PROBLEMS_FIRST_TRACKS} tracks list the "
        f"{CLEAN_WORST_SHOWN} of largest change)",
    )
    p.add_argument("--html", metavar="REPORT_DIR", help="also write a review page, REPORT_DIR/index.html")
    editor_curves_arg(p)
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

    p = sub.add_parser(
        "convert",
        help=f"convert between formats by extension (reads {reads}; writes {writes})",
        description=f"Rewrite a clip in the format of OUT's extension. Reads {reads}; writes {writes}. "
        "The written file is read back and compared before it is put in place.",
    )
    p.add_argument("file", help=f"input clip: {reads}")
    p.add_argument("output", metavar="OUT", help=f"output clip: {writes}")
    order_arg(p)
    p.add_argument(
        "--tolerance",
        type=_positive_float,
        metavar="DEG",
        help="per-frame (BVH) clips: add keys where the written curves leave the Slerp between frames by "
        "more than DEG (default: keys at the frames only; the deviation is reported)",
    )
    editor_curves_arg(p)
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
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=f"output clip: {plain}")
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
        choices=tuple(e.lstrip(".") for e in sorted(WRITE_FORMATS)),
        help="write every output in this format (default: as the input; BVH and FBX inputs as .anim; bvh "
        "needs BVH inputs)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout (schema: README)")
    editor_curves_arg(p)
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
