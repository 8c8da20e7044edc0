"""Run a recipe over many clip files in parallel (no Qt; used by ``curveeditor-cli batch``).

:func:`run_batch` expands the inputs (folders, glob patterns or files) to ``.anim``, ``.bvh``,
``.csv``, ``.fbx``, ``.gltf`` and ``.glb`` files (FBX and glTF: every take), applies the recipe to
every rotation track of each clip on one of three engines, writes one output per clip into
``out_dir`` and returns a :class:`BatchReport`:

* ``jobs=1``: in this process; ``jobs=N``: ``N`` worker processes on this machine;
* ``scheduler="tcp://HOST:PORT"``: an existing Dask cluster (:mod:`curveeditor.batch.dask_engine`, needs the
  ``cluster`` extra); ``scheduler="local"`` or ``"local:N"`` starts a Dask ``LocalCluster`` of ``N``
  single-threaded worker processes on this machine for the batch.

Rules:

* Every engine runs the same worker function per file (:func:`process_file`: read, run the recipe,
  render the output's bytes) and hands the bytes back; only this process writes outputs, through
  one function (:func:`write_output`: atomic, refusing to replace the input). So outputs are
  byte-for-byte the same and the report is the same whatever the engine.
* Inputs are never written: ``out_dir`` must not contain any input (checked before any work) and
  every write also refuses to replace its own input.
* Output names: the input's file name in ``out_dir``; a file of several takes (FBX animation
  stacks, glTF animations) gives one output per take, named ``<name>@<take>`` as Unity names an
  FBX's animation files (characters other than letters, digits, ``-``, ``_`` and ``.`` in the take's
  name become ``_``), each an entry of the report with its ``take``. ``.anim``, ``.csv``, ``.gltf``
  and ``.glb`` inputs keep their extension; ``.bvh`` and ``.fbx`` inputs become ``.anim`` clips.
  ``out_ext=".csv"``, ``".anim"``, ``".gltf"``, ``".glb"`` or ``".bvh"`` forces one output format for
  every file (``.bvh``:
  mocap in, mocap out; a file without a BVH skeleton fails with that reason and the batch goes on).
  Two inputs that would produce the same output (``a/walk.anim`` and ``b/walk.anim``, or ``walk.bvh``
  and ``walk.anim``) are not allowed to overwrite each other: the later one in input order fails with
  a message naming the first.
* A folder input means the clip files directly inside it (sorted by name); use a glob such as
  ``"mocap/**/*.bvh"`` for subfolders. An input that matches no clip file is a failed entry.
* Bad files do not stop the batch: each file's entry says ``"ok"`` or ``"failed"`` with the error
  (``FILE:LINE: REASON`` for unreadable clips, ``step N (op) on track 'X': ...`` for recipe failures).
  A failed file writes nothing (writes are atomic); an output left by an earlier run stays as it was.
* A worker process that dies while running a file: on Dask the scheduler re-runs the file on another
  worker (up to ``distributed.scheduler.allowed-failures`` deaths, default 3) and the file's entry
  counts the ``attempts`` and says which worker died in ``retries``.
* Ctrl+C (``KeyboardInterrupt``) cancels the files not finished (workers stop, queued work is
  dropped), writes the report with those files ``"cancelled"`` and raises :class:`BatchCancelled`
  (a ``KeyboardInterrupt`` carrying the report). Outputs are whole or absent: a file finished before
  the interrupt keeps its complete output, no other output or temporary file is left.
* The report lists files in input order, not completion order. Only the progress calls come in
  completion order.
* ``exit_status`` is 0 when every file succeeded, 2 otherwise, 130 when cancelled (the CLI's exit code).
"""

from __future__ import annotations

import contextlib
import glob
import json
import multiprocessing
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jobs import BatchError, failed_fields, interrupt_deferred, largest_first, process_file, write_output

__all__ = [
    "CLIP_EXTENSIONS",
    "OUTPUT_EXTENSIONS",
    "SHIP_MODES",
    "BatchCancelled",
    "BatchError",
    "FileResult",
    "BatchReport",
    "expand_inputs",
    "output_name",
    "run_batch",
    "stderr_progress",
]

#: Files a batch picks up.
CLIP_EXTENSIONS = (".anim", ".bvh", ".csv", ".fbx", ".gltf", ".glb")
#: Formats a batch can write (``.bvh`` only for BVH inputs: a clip needs a BVH skeleton).
OUTPUT_EXTENSIONS = (".anim", ".csv", ".bvh", ".gltf", ".glb")
#: Input extensions kept as the output's when no format is forced (BVH and FBX inputs become ``.anim``).
_KEPT_EXTENSIONS = (".anim", ".csv", ".gltf", ".glb")
#: How a Dask batch gets its inputs to the workers: "auto" (shared path when every worker sees every
#: input with the client's size and modification time, else shipped), "shared" (workers read the
#: path), "ship" (the client reads each file and sends its bytes with the task).
SHIP_MODES = ("auto", "shared", "ship")

REPORT_VERSION = 1
SUMMARY_VERSION = 1
#: Exit status of a batch cancelled by Ctrl+C (128 + SIGINT, what shells report).
CANCELLED_STATUS = 130


class BatchCancelled(KeyboardInterrupt):
    """Ctrl+C during :func:`run_batch`; ``.report`` holds the finished files and the cancelled ones."""

    def __init__(self, report: BatchReport):
        super().__init__(f"batch cancelled: {report.ok} ok, {report.cancelled} cancelled")
        self.report = report


@dataclass
class FileResult:
    """One input file's outcome.

    Attributes:
        input: the input path as expanded from the arguments (or the pattern that matched nothing).
        output: the output path (``None`` when no output was planned).
        status: ``"ok"``, ``"failed"`` or ``"cancelled"`` (Ctrl+C before it finished; nothing written).
        error: one-line reason when failed or cancelled.
        tracks: number of rotation tracks the recipe ran on.
        keys_before, keys_after: total rotation keys over those tracks.
        max_error: largest geodesic error (degrees) between input and output over all tracks.
        rms_error: root mean square over tracks of each track's RMS error (degrees).
        warnings: writer warnings (e.g. quaternion keys more than 180 degrees apart).
        track_details: per track ``{path, keys_before, keys_after, keys_written, max_error, rms_error,
            max_key_error, writer_max_error, changes, steps}`` (``steps``: each recipe step's figure
            against the track just before it, ``engine.step_figures.StepFigure.as_dict``).
        steps: one line per recipe step over all the file's tracks (what it removed on purpose, or
            its error against its tolerance: ``RecipeResult.step_lines``).
        attempts: how many times a worker started this file (1 unless a worker died running it).
        retries: one line per re-run: which worker died and that the scheduler re-ran the file.
        review: with ``run_batch(review=True)``, the review page's plots of the worst tracks.
    """

    input: str
    output: str | None
    status: str = "failed"
    #: the take read, for a file of several (``io.take_names``); None for a file of one clip
    take: str | None = None
    error: str | None = None
    tracks: int = 0
    keys_before: int = 0
    keys_after: int = 0
    max_error: float = 0.0
    rms_error: float = 0.0
    warnings: list[str] = field(default_factory=list)
    track_details: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 1
    retries: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    #: The review page's data (``run_batch(review=True)``); not in the JSON report.
    review: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def label(self) -> str:
        """The input as reports name it: its path, and the take of a file of several."""
        return self.input if self.take is None else f"{self.input} take {self.take!r}"

    def as_dict(self) -> dict[str, Any]:
        take = {} if self.take is None else {"take": self.take}
        return {
            "input": self.input,
            **take,
            "output": self.output,
            "status": self.status,
            "error": self.error,
            "tracks": self.tracks,
            "keys_before": self.keys_before,
            "keys_after": self.keys_after,
            "max_error": self.max_error,
            "rms_error": self.rms_error,
            "warnings": list(self.warnings),
            "track_details": list(self.track_details),
            "attempts": self.attempts,
            "retries": list(self.retries),
            "steps": list(self.steps),
        }


@dataclass
class BatchReport:
    """All files' results in input order, the recipe, and the exit status (0 all ok, 2 otherwise,
    130 cancelled). ``run`` describes how it ran (engine, workers, seconds): it is in the ``--json``
    summary (:meth:`summary`) but not in the report file, which is the same whatever the engine."""

    files: list[FileResult]
    recipe: dict[str, Any]
    out_dir: str
    exit_status: int = 0
    run: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> int:
        return sum(f.ok for f in self.files)

    @property
    def cancelled(self) -> int:
        return sum(f.status == "cancelled" for f in self.files)

    @property
    def failed(self) -> int:
        return sum(f.status == "failed" for f in self.files)

    @property
    def retried(self) -> int:
        return sum(f.attempts > 1 for f in self.files)

    def _totals(self) -> dict[str, Any]:
        done = [f for f in self.files if f.ok]
        return {
            "files": len(self.files),
            "ok": self.ok,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "retried": self.retried,
            "keys_before": sum(f.keys_before for f in done),
            "keys_after": sum(f.keys_after for f in done),
            "max_error": max((f.max_error for f in done), default=0.0),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "recipe": self.recipe,
            "out_dir": self.out_dir,
            "summary": self._totals(),
            "exit_status": self.exit_status,
            "files": [f.as_dict() for f in self.files],
        }

    def summary(self, report_path: str | os.PathLike | None = None) -> dict[str, Any]:
        """The ``--json`` summary for pipelines (schema in the README, "batch --json")."""
        totals = self._totals()
        seconds = float(self.run.get("seconds", 0.0))
        status = "cancelled" if self.cancelled else ("ok" if self.exit_status == 0 else "failed")
        return {
            "version": SUMMARY_VERSION,
            "status": status,
            "exit_status": self.exit_status,
            **totals,
            "seconds": seconds,
            "files_per_s": totals["ok"] / seconds if seconds > 0 else 0.0,
            "keys_per_s": totals["keys_before"] / seconds if seconds > 0 else 0.0,
            "engine": dict(self.run.get("engine", {})),
            "out_dir": self.out_dir,
            "report": None if report_path is None else os.fspath(report_path),
            "outputs": [f.output for f in self.files if f.ok],
            "failures": [{"input": f.input, "error": f.error} for f in self.files if f.status == "failed"],
            "retries": [
                {"input": f.input, "attempts": f.attempts, "retries": list(f.retries)}
                for f in self.files
                if f.attempts > 1
            ],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    def write(self, path: str | os.PathLike) -> None:
        """Write the JSON report atomically, refusing to replace any input of the batch."""
        from ..io.atomic import atomic_write_text

        atomic_write_text(path, self.to_json(), protect=[f.input for f in self.files if f.output])


# ------------------------------------------------------------------------------------------- inputs


def _is_clip(p: Path) -> bool:
    return p.suffix.lower() in CLIP_EXTENSIONS and p.is_file()


def expand_inputs(inputs: Iterable[str | os.PathLike]) -> list[tuple[str, list[str]]]:
    """For each input (folder, glob pattern or file), the clip files it names, sorted, as strings.

    A folder gives the clip files directly inside it; a pattern is expanded with ``glob`` (``**``
    recursive); an existing file is taken as is when its extension is a clip format.
    """
    out = []
    for item in inputs:
        s = os.fspath(item)
        p = Path(s)
        if p.is_dir():
            files = sorted(str(c) for c in p.iterdir() if _is_clip(c))
        elif p.is_file():
            files = [s] if p.suffix.lower() in CLIP_EXTENSIONS else []
        else:
            files = sorted(f for f in glob.glob(s, recursive=True) if _is_clip(Path(f)))
        out.append((s, files))
    return out


def output_name(input_path: str, out_ext: str | None = None, take: str | None = None) -> str:
    """The output file name for ``input_path`` (see module docstring), for its ``take`` if given."""
    p = Path(input_path)
    ext = out_ext or (p.suffix.lower() if p.suffix.lower() in _KEPT_EXTENSIONS else ".anim")
    if take is None:
        return p.stem + ext
    return f"{p.stem}@{re.sub(r'[^A-Za-z0-9._-]', '_', take)}{ext}"


def _takes(path: str) -> list[str | None]:
    """The takes a batch runs of ``path``: each named take of a file of several, else ``[None]``
    (one clip; also for a file whose takes cannot be listed: its job reports why it cannot be read)."""
    from ..io import take_names
    from ..io.errors import ClipError

    try:
        names = take_names(path)
    except ClipError:
        return [None]
    return list(names) if len(names) > 1 else [None]


def _normalize_ext(out_ext: str | None) -> str | None:
    if out_ext is None:
        return None
    ext = out_ext.lower() if out_ext.startswith(".") else "." + out_ext.lower()
    if ext not in OUTPUT_EXTENSIONS:
        raise BatchError(f"cannot write {out_ext!r} files (choose {', '.join(OUTPUT_EXTENSIONS)})")
    return ext


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# ------------------------------------------------------------------------------------------- runner

#: Modules a forkserver imports once, so workers start without importing numpy/scipy/ops again
#: (a spawned worker spent 1.35 s importing them, 0.73 s of it scipy.signal via the ops).
_PRELOAD = [
    "curveeditor.batch.jobs",
    "curveeditor.io",
    "curveeditor.io.csv_io",
    "curveeditor.io.bvh",
    "curveeditor.engine.recipe",
    "curveeditor.engine.diff",
    "curveeditor.engine.unwrap",
    "curveeditor.engine.reduce",
]


def _pool_context():
    """``forkserver`` where the OS has it (workers fork from a clean server process that preloaded the
    engine: no inherited threads or Qt state, fast start), ``spawn`` elsewhere. The worker is a
    top-level function of this module, so both work."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


_STARTED = None  # in a pool worker: the queue it announces each file on before running it


def _pool_worker_init(started=None) -> None:
    """Pool workers ignore SIGINT: Ctrl+C in a terminal reaches the whole process group, and the
    client alone decides (cancels, then stops the workers) instead of each worker dying mid-task.
    ``started`` is the queue on which :func:`_pool_task` announces each file it starts."""
    global _STARTED
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STARTED = started


def _pool_task(index: int, job: dict[str, Any]) -> dict[str, Any]:
    if _STARTED is not None:
        _STARTED.put(index)
    return process_file(job)


def stderr_progress(done: int, total: int, result: FileResult) -> None:
    """The default progress line: ``[12/40] walk.anim ok`` (or ``failed: reason``) on stderr."""
    from .progress import progress_line

    print(progress_line(done, total, result), file=sys.stderr, flush=True)


Finish = Callable[[int, dict[str, Any]], None]


def _run_inline(todo, finish: Finish) -> dict[str, Any]:
    for index, job in todo:
        finish(index, process_file(job))
    return {"kind": "inline", "workers": 1, "scheduler": None, "inputs": "shared"}


#: Worker deaths a file may cause before the pool gives up on it (as Dask's allowed-failures).
ALLOWED_WORKER_DEATHS = 3


def _run_pool(todo, workers: int, finish: Finish) -> dict[str, Any]:
    """``workers`` forkserver processes. A worker that dies (crash, OOM kill) breaks the whole
    ``ProcessPoolExecutor``: the files that had started and not finished (announced on a queue by
    :func:`_pool_task`) count a death and, up to :data:`ALLOWED_WORKER_DEATHS`, run again in a new
    pool with the files that had not started; the report says so (``attempts``, ``retries``)."""
    ctx = _pool_context()
    deaths: dict[int, int] = {}
    queue = largest_first(todo)
    while queue:
        started = ctx.SimpleQueue()
        pool = ProcessPoolExecutor(
            max_workers=min(workers, len(queue)),
            mp_context=ctx,
            initializer=_pool_worker_init,
            initargs=(started,),
        )
        broken: list[tuple[int, dict[str, Any]]] = []
        finished: set[int] = set()
        try:
            futures = {pool.submit(_pool_task, index, job): (index, job) for index, job in queue}
            for fut in as_completed(futures):
                index, job = futures[fut]
                try:
                    fields = fut.result()
                except BrokenProcessPool:
                    broken.append((index, job))
                    continue
                except Exception as e:
                    fields = failed_fields(
                        job, f"{job['input']}: worker process failed: {type(e).__name__}: {e}"
                    )
                finished.add(index)
                finish(index, _with_deaths(fields, deaths.get(index, 0)))
        except BaseException:
            # Ctrl+C (or a bug): drop the queue and stop the workers now; they never write outputs.
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)
        running = set()
        while broken and not started.empty():
            running.add(started.get())
        queue = []
        for index, job in broken:
            if index in running and index not in finished:
                deaths[index] = deaths.get(index, 0) + 1
                if deaths[index] > ALLOWED_WORKER_DEATHS:
                    reason = (
                        f"{job['input']}: {deaths[index]} worker processes died while running this file; "
                        "gave up"
                    )
                    finish(index, _with_deaths(failed_fields(job, reason), deaths[index] - 1))
                    continue
            queue.append((index, job))
    return {"kind": "processes", "workers": workers, "scheduler": None, "inputs": "shared"}


def _with_deaths(fields: dict[str, Any], n: int) -> dict[str, Any]:
    if n:
        fields = dict(fields, attempts=n + 1)
        fields["retries"] = [
            f"a worker process died before finishing this file (attempt {k + 1}); re-run in a new worker"
            for k in range(n)
        ]
    return fields


def _stop_pool(pool) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(5)


MISSING_DASK = (
    "running a batch on a Dask cluster needs dask.distributed, which is not installed: "
    "pip install 'curveeditor[cluster]'"
)


def _dask_backend():
    """:mod:`curveeditor.batch.dask_engine`, imported only when a scheduler is asked for."""
    import importlib

    try:
        batch_dask = importlib.import_module(".dask_engine", __package__)
    except ImportError as exc:
        if (
            "distributed" in str(exc)
            or "dask" in str(exc)
            or getattr(exc, "name", "") in ("dask", "distributed")
        ):
            raise BatchError(MISSING_DASK) from None
        raise
    return batch_dask


def run_batch(
    inputs: Iterable[str | os.PathLike],
    out_dir: str | os.PathLike,
    recipe,
    jobs: int = 1,
    report_path: str | os.PathLike | None = None,
    progress: Callable[[int, int, FileResult], None] | None = None,
    out_ext: str | None = None,
    scheduler: str | None = None,
    ship: str = "auto",
    log: Callable[[str], None] | None = None,
    review: bool = False,
    editor_curves: bool = True,
) -> BatchReport:
    """Apply ``recipe`` (a :class:`~curveeditor.engine.recipe.Recipe`, a recipe dict, or a path to a
    recipe JSON file) to every clip named by ``inputs`` and write the results into ``out_dir``.

    ``jobs`` worker processes (1 = in this process), or ``scheduler``: a Dask scheduler address
    (``tcp://HOST:PORT``) or ``local[:N]`` (see the module docstring; ``jobs`` must then stay 1).
    ``ship`` (Dask only, :data:`SHIP_MODES`) says how inputs reach the workers. ``progress(done,
    total, result)`` is called as each file finishes (default :func:`stderr_progress`; pass
    ``lambda *a: None`` for silence); ``log(line)`` gets one-line notes on the engine (default stderr).
    The JSON report is written to ``report_path`` when given. ``review=True`` also fills each ok
    file's :attr:`FileResult.review` (the review page's plots, computed by the workers).
    ``editor_curves=False``: ``.anim`` outputs hold only the curves Unity plays (the writer's option).
    Raises :class:`BatchError` (before any work) for bad arguments, an ``out_dir`` that contains an
    input, a missing Dask or an unreachable cluster, ``RecipeError`` for an invalid recipe,
    :class:`BatchCancelled` on Ctrl+C; per-file problems are reported, not raised.
    """
    from ..engine.recipe import Recipe

    t_start = time.perf_counter()
    if isinstance(recipe, Recipe):
        rec = recipe
    elif isinstance(recipe, dict):
        rec = Recipe.from_dict(recipe)
    else:
        rec = Recipe.load(recipe)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise BatchError(f"jobs must be a whole number >= 1, got {jobs!r}")
    if ship not in SHIP_MODES:
        raise BatchError(f"ship must be one of {', '.join(SHIP_MODES)}, got {ship!r}")
    backend = None
    if scheduler is not None:
        if jobs != 1:
            raise BatchError("jobs and scheduler cannot be combined (local:N sets the number of workers)")
        backend = _dask_backend()
        backend.parse_scheduler(scheduler)  # a bad address fails before any work
    ext = _normalize_ext(out_ext)
    progress = stderr_progress if progress is None else progress
    log = (lambda line: print(line, file=sys.stderr, flush=True)) if log is None else log
    out_s = os.fspath(out_dir)
    results, jobs_todo = _plan(inputs, out_s, ext, rec, report_path)
    for _i, job in jobs_todo:
        job["review"] = review
        if not editor_curves:
            job["editor_curves"] = False
    with contextlib.ExitStack() as stack:
        # Connect (or start the local cluster) before writing anything: an unreachable scheduler
        # fails the batch with nothing written.
        session = stack.enter_context(backend.open_session(scheduler, log)) if backend and jobs_todo else None
        if jobs_todo:
            os.makedirs(out_s, exist_ok=True)
        return _execute(results, jobs_todo, rec, out_s, jobs, session, ship, report_path, progress, t_start)


def _plan(inputs, out_s: str, ext: str | None, rec, report_path):
    """``(results, jobs)``: a :class:`FileResult` per input file in input order (``"pending"`` for
    the files to run, ``"failed"`` for unmatched patterns and output collisions) and the
    ``[(index into results, job dict)]`` to run. Raises :class:`BatchError` for an output folder
    containing an input and for a bad report path; touches nothing on disk."""
    out_real = Path(os.path.realpath(out_s))
    if out_real.exists() and not out_real.is_dir():
        raise BatchError(f"output folder {out_s} is a file")
    results: list[FileResult] = []
    planned: dict[str, str] = {}  # resolved output -> input that claimed it
    seen: set[str] = set()
    jobs_todo: list[tuple[int, dict[str, Any]]] = []
    for pattern, files in expand_inputs(inputs):
        if not files:
            results.append(
                FileResult(pattern, None, error=f"{pattern}: no {', '.join(CLIP_EXTENSIONS)} files match")
            )
            continue
        for f in files:
            real = os.path.realpath(f)
            if real in seen:
                continue
            seen.add(real)
            if _inside(Path(real), out_real):
                raise BatchError(
                    f"output folder {out_s} contains the input {f}: choose another folder so inputs "
                    "are never overwritten"
                )
            for take in _takes(f):
                out_path = os.path.join(out_s, output_name(f, ext, take))
                key = os.path.realpath(out_path)
                entry = FileResult(f, out_path, status="pending", take=take)
                if key in planned:
                    entry.status = "failed"
                    entry.error = f"{f}: output {out_path} is already written for {planned[key]}"
                    results.append(entry)
                    continue
                planned[key] = entry.label
                job = {"input": f, "output": out_path, "recipe": rec.to_dict()}
                if take is not None:
                    job["take"] = take
                jobs_todo.append((len(results), job))
                results.append(entry)

    if report_path is not None and os.path.realpath(report_path) in seen:
        raise BatchError(f"report path {os.fspath(report_path)} is one of the inputs")
    if report_path is not None and os.path.realpath(report_path) in planned:
        # The report is written last: it would replace that clip's output.
        raise BatchError(f"report path {os.fspath(report_path)} is one of the outputs")
    if report_path is not None:
        from ..io.atomic import check_target
        from ..io.errors import ClipWriteError

        # Fail before the clips are written, not after. The output folder may not exist yet: the
        # report's own folder must.
        folder = os.path.realpath(os.path.dirname(os.path.abspath(report_path)))
        try:
            if folder != str(out_real) or out_real.exists():  # the output folder is made before the run
                check_target(report_path)
        except ClipWriteError as exc:
            raise BatchError(str(exc)) from None
    return results, jobs_todo


def _execute(results, jobs_todo, rec, out_s, jobs, session, ship, report_path, progress, t_start):
    """Run the planned jobs on the chosen engine, fill ``results``, write the report."""
    total = len(results)
    done = 0
    for r in results:  # entries that failed before running (no match, collision)
        if r.error is not None:
            done += 1
            progress(done, total, r)

    def finish(index: int, fields: dict[str, Any]) -> None:
        nonlocal done
        if results[index].status != "pending":
            return  # already finished (a late duplicate result after a retry)
        results[index] = FileResult(**write_output(fields))
        done += 1
        progress(done, total, results[index])

    engine: dict[str, Any] = {}
    cancelled = False
    try:
        if session is not None:
            engine = session.run(jobs_todo, finish, ship=ship)
        elif min(jobs, len(jobs_todo)) <= 1:
            engine = _run_inline(jobs_todo, finish)
        else:
            engine = _run_pool(jobs_todo, min(jobs, len(jobs_todo)), finish)
    except KeyboardInterrupt:
        cancelled = True
    for i, r in enumerate(results):
        if r.status == "pending":
            results[i] = FileResult(
                r.input, r.output, status="cancelled", take=r.take, error=f"{r.input}: cancelled (Ctrl+C)"
            )

    if cancelled:
        status = CANCELLED_STATUS
    else:
        status = 0 if results and all(r.ok for r in results) else 2
    if not engine:  # nothing ran (no files, or cancelled before the engine answered)
        engine = {
            "kind": "dask" if session else ("inline" if jobs == 1 else "processes"),
            "workers": jobs,
            "scheduler": session.address if session else None,
            "inputs": None,
        }
    report = BatchReport(files=results, recipe=rec.to_dict(), out_dir=out_s, exit_status=status)
    if report_path is not None:
        with interrupt_deferred():
            report.write(report_path)
    report.run = {"engine": engine, "seconds": time.perf_counter() - t_start}
    if cancelled:
        raise BatchCancelled(report)
    return report
