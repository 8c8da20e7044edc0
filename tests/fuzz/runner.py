"""Run a fuzz case in a forked child and classify the outcome against the contract.

Why a fork: a fresh interpreter per case costs ~1 s (numpy, scipy); a fork of a process that already
imported the engine costs a few milliseconds, and still isolates the case: its own memory limit
(``RLIMIT_AS``: the parent's address space plus ``mem_mb``), a wall-clock bound (the parent kills it
with SIGKILL), its own stdout/stderr (file descriptors 1 and 2 go to files, so numpy's C-level and
Python-level warnings are seen exactly as a user sees them) and fresh warning filters. The child runs
``curveeditor.cli.main(argv)`` (or the editor's load step), then checks what it wrote, and reports a
small JSON result.

The contract (issue 11): exit 0 with every output reading back with ``read_clip`` to the same tracks
(and nothing but ``curveeditor-cli: warning:`` lines on stderr), or exit 2 with exactly one stderr
line ``curveeditor-cli: error: FILE...`` naming the input or output; never a traceback, a hang, a
memory blow-up; the input never modified, no output or temp file left after a failure.

Failure classes (``FAILURES``):

* ``traceback``: an exception escaped (exit 1 with a Python traceback);
* ``hang``: still running after the time bound;
* ``no_readback``: exit 0 but an output does not read back (our reader refuses it, tracks differ,
  ``inspect --json`` output is not strict JSON);
* ``multiline``: the error is not one line naming the file, or stray stderr lines (numpy warnings);
* ``accepted_invalid``: exit 0 on an input that is invalid by construction (``Case.invalid``);
* ``memory``: a MemoryError or "not enough memory" on a small input (the address-space bound);
* ``crash``: killed by a signal or an unexpected exit status without a traceback;
* ``input_modified``: the input file changed;
* ``half_written``: an output (or a temp file) left behind by a failed command, or temp files after
  a successful one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass

from .cases import Case

FAILURES = (
    "traceback",
    "hang",
    "no_readback",
    "multiline",
    "accepted_invalid",
    "memory",
    "crash",
    "input_modified",
    "half_written",
)
GOOD = ("ok", "error")
PROG = "curveeditor-cli"
#: Default bounds: seconds per case (the issue counted > 20 s as a hang) and extra address space.
TIMEOUT_S = 20.0
MEM_MB = 1536
_PKG = os.sep + "curveeditor" + os.sep


@dataclass
class Outcome:
    """What one case did. ``cls`` is "ok", "error" (the promised one-line error) or a failure class."""

    cls: str
    detail: str
    signature: str
    rc: int | None
    stderr: str
    elapsed: float
    frame: str = ""  # last curveeditor frame of a traceback: "io/bvh.py:_parse_joint"
    exc: str = ""  # exception type of a traceback

    @property
    def failed(self) -> bool:
        return self.cls in FAILURES

    def as_dict(self) -> dict:
        return asdict(self)


def preload() -> None:
    """Import what every case uses, once, before forking (each child then starts warm)."""
    import curveeditor.cli  # noqa: F401
    import curveeditor.engine.analysis  # noqa: F401
    import curveeditor.engine.display  # noqa: F401
    import curveeditor.engine.recipe  # noqa: F401
    import curveeditor.io.anim.reader  # noqa: F401
    import curveeditor.io.anim.writer  # noqa: F401
    import curveeditor.io.bvh  # noqa: F401
    import curveeditor.io.csv_io  # noqa: F401


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _sha(path: str) -> str | None:
    if not os.path.isfile(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _make_input(case: Case, folder: str) -> str:
    inp = os.path.join(folder, "in" + case.ext)
    if case.special == "fifo":
        os.mkfifo(inp)
    elif case.special in ("dev_zero", "dev_urandom"):
        os.symlink("/dev/" + case.special[4:], inp)
    elif case.special == "folder":
        os.mkdir(inp)
    else:
        with open(inp, "wb") as f:
            f.write(case.data)
    return inp


def run_case(
    case: Case,
    root: str | None = None,
    timeout_s: float = TIMEOUT_S,
    mem_mb: int = MEM_MB,
    keep: bool = False,
) -> Outcome:
    """Run ``case`` in a forked child under the bounds and classify it (see the module docstring)."""
    job = start_case(case, root, timeout_s, mem_mb, keep)
    while (outcome := job.poll()) is None:
        time.sleep(0.002 if time.monotonic() - job.t0 < 0.2 else 0.02)
    return outcome


class Job:
    """A case running in a forked child; :meth:`poll` returns its :class:`Outcome` once it ended (or
    after killing it at the time bound), else None. Several jobs may run at once."""

    def __init__(self, case: Case, folder: str, timeout_s: float, mem_mb: int, keep: bool):
        self.case, self.folder, self.timeout_s, self.keep = case, folder, timeout_s, keep
        self.inp = _make_input(case, folder)
        self.out_dir = os.path.join(folder, "out")
        os.mkdir(self.out_dir)
        self.out = os.path.join(self.out_dir, "out" + case.out_ext) if case.out_ext else None
        self.files = {k: os.path.join(folder, k) for k in ("stdout", "stderr", "result", "check_stderr")}
        self.before = _sha(self.inp)
        limit = _vm_bytes() + mem_mb * (1 << 20)
        sys.stdout.flush()
        sys.stderr.flush()
        self.t0 = time.monotonic()
        self.pid = os.fork()
        if self.pid == 0:  # child: never returns
            _child(case, self.inp, self.out, self.files, limit, timeout_s)

    def poll(self) -> Outcome | None:
        wpid, status, _ru = os.wait4(self.pid, os.WNOHANG)
        timed_out = False
        if not wpid:
            if time.monotonic() - self.t0 <= self.timeout_s:
                return None
            os.kill(self.pid, signal.SIGKILL)
            _, status, _ru = os.wait4(self.pid, 0)
            timed_out = True
        try:
            return self._finish(status, timed_out)
        finally:
            if not self.keep:
                shutil.rmtree(self.folder, ignore_errors=True)

    def _finish(self, status: int, timed_out: bool) -> Outcome:
        elapsed = time.monotonic() - self.t0
        stderr = _read_text(self.files["stderr"])
        result = None
        if os.path.exists(self.files["result"]):
            try:
                result = json.loads(_read_text(self.files["result"]))
            except ValueError:
                result = None
        out = self.out
        leftovers = sorted(n for n in os.listdir(self.out_dir) if out is None or n != os.path.basename(out))
        return classify(
            self.case,
            self.inp,
            out,
            status,
            timed_out,
            elapsed,
            stderr,
            result,
            self.before,
            leftovers,
            self.timeout_s,
        )


def start_case(
    case: Case,
    root: str | None = None,
    timeout_s: float = TIMEOUT_S,
    mem_mb: int = MEM_MB,
    keep: bool = False,
) -> Job:
    """Start ``case`` in a forked child; poll the returned :class:`Job` for its outcome."""
    return Job(case, tempfile.mkdtemp(prefix="case-", dir=root), timeout_s, mem_mb, keep)


def _read_text(path: str, cap: int = 1 << 20) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(cap).decode("utf-8", "backslashreplace")
    except OSError:
        return ""


# ------------------------------------------------------------------------------------------- child


def _child(case: Case, inp: str, out: str | None, files: dict, limit: int, timeout_s: float) -> None:
    code = 70
    try:
        # Backstop: end by SIGALRM's default action even if the parent died and cannot kill us.
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(int(timeout_s) + 10)
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        for fd, key in ((1, "stdout"), (2, "stderr")):
            f = os.open(files[key], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stdin = open(os.devnull)
        _fresh_warnings()
        result = _child_run(case, inp, out, files)
        with open(files["result"], "w") as f:
            json.dump(result, f)
        code = result["rc"] & 0xFF
    except BaseException:  # noqa: BLE001 - the harness itself failed; say so on stderr
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(code)


def _fresh_warnings() -> None:
    """The warning filters of a fresh ``python`` (pytest's -W options must not turn warnings into
    errors here); changing the filters also invalidates every module's once-per-location registry."""
    import warnings

    def show(msg):  # what Python prints for a warning (pytest's recorder is inherited by the fork)
        sys.stderr.write(
            warnings.formatwarning(msg.message, msg.category, msg.filename, msg.lineno, msg.line)
        )

    warnings._showwarnmsg_impl = show
    warnings.showwarning = warnings._showwarning_orig
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for cat in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", cat)


def _last_frames(exc: BaseException) -> tuple[str, str]:
    """(last frame, last frame inside curveeditor) of a traceback, as "pkg/file.py:function"."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = own = ""
    for fr in frames:
        name = fr.filename
        if _PKG in name:
            own = name.split(_PKG, 1)[1] + ":" + fr.name
        last = os.path.basename(name) + ":" + fr.name
    return last, own


def _child_run(case: Case, inp: str, out: str | None, files: dict) -> dict:
    import importlib

    from curveeditor.io import WRITE_FORMATS

    # Record every clip handed to a format writer (whatever calls it: write_clip, a read-back
    # checking wrapper, batch), so the check compares the file with what the command meant to write.
    written: list = []
    patched = []
    for module_name, func_name in WRITE_FORMATS.values():
        module = importlib.import_module(module_name)
        orig = getattr(module, func_name)

        def spy(clip, path, *a, _orig=orig, **k):
            written.append((clip, os.fspath(path)))
            return _orig(clip, path, *a, **k)

        setattr(module, func_name, spy)
        patched.append((module, func_name, orig))
    res: dict = {"rc": 1}
    try:
        if case.command == "load":
            res["rc"] = _editor_load(inp)
        else:
            from curveeditor.cli import main

            res["rc"] = main(case.argv(inp, out))
    except SystemExit as exc:
        res["rc"] = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # noqa: BLE001 - what `python -m curveeditor.cli` would print
        traceback.print_exc()
        res["rc"] = 1
        res["exc"] = type(exc).__name__
        res["frame"], res["own_frame"] = _last_frames(exc)
    finally:
        for module, func_name, orig in patched:
            setattr(module, func_name, orig)
    sys.stdout.flush()
    sys.stderr.flush()
    if res["rc"] == 0:
        # The checks' own output goes elsewhere: stderr holds only what the command printed.
        with open(files["check_stderr"], "w") as err:
            saved, sys.stderr = sys.stderr, err
            try:
                res["check"] = verify(case, inp, out, written, files["stdout"])
            except BaseException as exc:  # noqa: BLE001
                last, own = _last_frames(exc)
                res["check"] = f"checking the output raised {type(exc).__name__}: {exc} ({own or last})"
            finally:
                sys.stderr = saved
    return res


def _editor_load(inp: str) -> int:
    """What the editor computes when it opens a file, without Qt: ``app.files.read_clip_file`` (=
    ``read_clip``), the problems panel (``analysis.find_problems``), the graphs' and timeline's
    samples (``display.sample_track`` on a grid over the clip) and, as a save would, the export checks
    (``anim_text``). A ClipError is the dialog's one line (exit 2); anything else escapes."""
    import warnings

    import numpy as np

    from curveeditor.engine import analysis, display
    from curveeditor.io import ClipError, read_clip
    from curveeditor.io.anim import anim_text

    # The editor shows the error's text in a dialog; numpy warnings go to its console, not the user.
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return _editor_load_steps(inp, np, analysis, display, ClipError, read_clip, anim_text)


def _editor_load_steps(inp, np, analysis, display, ClipError, read_clip, anim_text) -> int:  # noqa: N803
    try:
        clip = read_clip(inp)
    except ClipError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    for t in clip.tracks:
        if t.n_keys:
            analysis.find_problems(t)
            display.sample_track(t, np.linspace(t.curve.start, t.curve.end, 512))
            display.key_euler(t)
    try:
        anim_text(clip)
    except ClipError:
        pass  # a save would show the writer's one-line refusal
    return 0


# -------------------------------------------------------------------------------------- verification


def verify(case: Case, inp: str, out: str | None, written: list, stdout_path: str) -> str | None:
    """None when the outputs of a successful command keep the contract, else what is wrong."""
    import numpy as np

    from curveeditor.io import ClipError, read_clip

    if case.command == "inspect_json":
        text = _read_text(stdout_path, cap=1 << 30)

        def no_constants(c):
            raise ValueError(f"non-standard JSON constant {c}")

        try:
            data = json.loads(text, parse_constant=no_constants)
        except ValueError as exc:
            return f"inspect --json output is not strict JSON: {exc}"
        paths = [t["path"] for t in data.get("tracks", [])]
        want = [t.path for t in read_clip(inp).tracks]
        return (
            None if paths == want else f"inspect --json lists {len(paths)} tracks, the file has {len(want)}"
        )
    if out is None:
        return None
    if not os.path.isfile(out):
        return "exit 0 but no output file"
    try:
        back = read_clip(out)
    except ClipError as exc:
        return f"our reader refuses the written {case.out_ext}: {exc.reason}"
    if case.command == "sample":
        src = [t for t in read_clip(inp).tracks if t.n_keys]
        got = [t.path for t in back.tracks]
        if got != [t.path for t in src]:
            return f"sample wrote tracks {_short(got)}, sampled {_short([t.path for t in src])}"
        return None
    if not written:
        return "exit 0 but no format writer was called"
    clip = written[-1][0]
    return compare_tracks(clip, back, case.out_ext, np)


def _short(paths) -> str:
    s = repr(paths)
    return s if len(s) < 120 else s[:117] + "..."


def compare_tracks(clip, back, ext: str, np) -> str | None:
    """The same track paths (in any order), and every track plays the same pose at its written key
    times (within float32 rounding of the values and times, 0.05 deg + relative terms)."""
    from curveeditor.engine.clip import played
    from curveeditor.engine.rotations import geodesic_angle

    a = sorted(t.path for t in clip.tracks)
    b = sorted(t.path for t in back.tracks)
    if a != b:  # the order may differ (.anim lists quaternion curves before Euler curves)
        return f"read back tracks {_short(b)}, written {_short(a)}"
    by_path = {u.path: u for u in back.tracks}
    for t in clip.tracks:
        u = by_path[t.path]
        if t.n_keys != u.n_keys and (t.n_keys == 0 or u.n_keys == 0):
            return f"track {t.path[:60]!r}: {t.n_keys} keys written, {u.n_keys} read back"
        if not t.n_keys:
            continue
        times = np.unique(np.float32(t.times).astype(np.float64))
        with np.errstate(all="ignore"):
            err = geodesic_angle(played(t, times), played(u, times))
            scale = float(np.max(np.abs(t.curve.value))) if t.kind == "euler" else 1.0
            span = float(np.max(np.abs(times)))
            steps = np.diff(t.curve.value, axis=0) if t.n_keys > 1 else np.zeros((1, 3))
            dts = np.diff(t.times) if t.n_keys > 1 else np.ones(1)
            speed = (
                float(np.max(np.abs(steps)) / max(float(np.min(dts)), 1e-300)) if t.kind == "euler" else 0.0
            )
        tol = 0.05 + 1e-6 * scale + 1.2e-7 * span * speed
        worst = float(np.nanmax(err)) if err.size else 0.0
        if not np.isfinite(worst) or worst > tol:
            k = int(np.nanargmax(err)) if np.isfinite(err).any() else 0
            return (
                f"track {t.path[:60]!r} ({ext}): read back pose differs by {worst:.3g} deg at "
                f"t={times[k]:.6g} s (tolerance {tol:.3g})"
            )
    return None


# ------------------------------------------------------------------------------------ classification

_NUM = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")


def _norm(text: str, n: int = 90) -> str:
    """A signature-friendly version of a message: numbers and quoted names blanked, trimmed."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"/\S+/(in|out)\.\w+", "FILE", text)
    text = re.sub(r"/\S*/curveeditor/", "curveeditor/", text)
    return _NUM.sub("N", text)[:n]


def classify(case, inp, out, status, timed_out, elapsed, stderr, result, before, leftovers, timeout_s):
    def make(cls, detail, key, rc=None, frame="", exc=""):
        return Outcome(cls, detail, f"{cls}|{key}", rc, stderr[-4000:], elapsed, frame, exc)

    if timed_out:
        return make(
            "hang",
            f"still running after {timeout_s:g} s",
            f"{case.command}|{'+'.join(sorted(set(case.mutations))) or case.special}",
        )
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        return make("crash", f"killed by {sig}", f"{sig}|{case.command}")
    rc = os.WEXITSTATUS(status)
    if result is None:
        if "MemoryError" in stderr:
            return make("memory", "MemoryError (harness)", "harness", rc)
        return make("crash", f"exit {rc} without a result (harness failure?)", f"rc{rc}", rc)
    rc = result["rc"]
    if rc not in (0, 2):
        exc, own, last = result.get("exc", ""), result.get("own_frame", ""), result.get("frame", "")
        where = own or last
        if exc == "MemoryError":
            return make("memory", f"MemoryError at {where}", f"{exc}|{where}", rc, where, exc)
        if "Traceback (most recent call last)" in stderr:
            msg = stderr.strip().splitlines()[-1] if stderr.strip() else exc
            return make("traceback", f"{msg[:200]} ({where})", f"{exc}|{where}", rc, where, exc)
        return make("crash", f"exit status {rc}", f"rc{rc}|{case.command}", rc)
    if before is not None and _sha(inp) != before:
        return make("input_modified", "the input file changed", case.command, rc)
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    stray = [ln for ln in lines if not ln.startswith(f"{PROG}: warning: ")]
    temps = [n for n in leftovers]
    if rc == 2:
        if out is not None and os.path.exists(out):
            return make("half_written", "exit 2 but the output file exists", case.command, rc)
        if temps:
            return make(
                "half_written", f"exit 2 and files left in the output folder: {temps[:3]}", case.command, rc
            )
        if len(lines) != 1:
            first = next(
                (ln for ln in stray if not ln.startswith(f"{PROG}: error: ")), lines[0] if lines else ""
            )
            return make(
                "multiline", f"{len(lines)} stderr lines: {' / '.join(lines)[:300]}", _norm(first), rc
            )
        line = lines[0]
        if not line.startswith(f"{PROG}: error: ") or not (inp in line or (out and out in line)):
            return make("multiline", f"error line does not name the file: {line[:200]}", _norm(line), rc)
        if any(m in line for m in ("not enough memory", "MemoryError", "Unable to allocate")):
            return make("memory", line[:200], _norm(line), rc)
        return make("error", line[len(PROG) + 9 :][:300], _norm(line), rc)
    # rc == 0
    if temps:
        return make("half_written", f"temp files left after success: {temps[:3]}", case.command, rc)
    check = result.get("check")
    if check:
        return make("no_readback", check[:400], f"{case.out_ext}|{_norm(check)}", rc)
    if case.invalid:
        return make("accepted_invalid", f"exit 0 on invalid input: {case.invalid}", _norm(case.invalid), rc)
    if stray:
        return make("multiline", f"exit 0 with stray stderr: {' / '.join(stray)[:300]}", _norm(stray[0]), rc)
    return make("ok", "", "ok", rc)
