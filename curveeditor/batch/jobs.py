"""The work of one batch file, shared by every batch engine (:mod:`.runner`'s in-process and pool
engines, :mod:`.dask_engine`): :func:`process_file` (read, run the recipe, render the output's bytes),
:func:`write_output` (the batch's one write, in the client), the failed entry of a worker that never
returned, the code fingerprint Dask workers must match, and the largest-first order of the queue.
Nothing here knows an engine, so the engines import it and never each other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import os
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "BatchError",
    "code_fingerprint",
    "failed_fields",
    "interrupt_deferred",
    "largest_first",
    "process_file",
    "render_output",
    "write_output",
]


class BatchError(ValueError):
    """The batch cannot start (bad arguments, output folder containing inputs); nothing was written."""


def process_file(job: dict[str, Any]) -> dict[str, Any]:
    """Read, run the recipe, render the output: the one worker function of every engine.

    ``job``: ``input`` (the path as the user gave it, used in messages), ``output``, ``recipe`` (dict),
    ``take`` (optional: which clip of a file of several, ``io.read_clip(take=)``),
    ``review`` (True: also the review page's data, :func:`~curveeditor.review.data.clip_review`), and
    optionally ``read_path`` (where this worker finds the input: an absolute path on a cluster)
    or ``data`` (the input's bytes, shipped by the client). Returns the :class:`FileResult` fields as
    a dict plus ``data``, the output file's bytes packed (:func:`pack_file`; ok files only), and
    ``worker`` (where it ran).
    Never raises for a bad file; error messages name ``input`` and ``output`` whatever path the
    worker used, so reports are identical on every engine. Top level so any worker can import it.
    """
    from ..engine.recipe import Recipe, RecipeError
    from ..io import read_clip
    from ..io.errors import ClipError
    from ..io.promises import recipe_promise, write_margin

    res: dict[str, Any] = {**_entry(job), "status": "failed"}
    with tempfile.TemporaryDirectory(prefix="curveeditor-batch-") as tmp:
        renames = {_rendered_path(tmp, job["output"]): job["output"]}
        try:
            read_path = _input_for_worker(job, tmp)
            renames[read_path] = job["input"]
            recipe = Recipe.from_dict(job["recipe"])
            clip = read_clip(read_path, take=job.get("take"))
            # The format's margin is kept inside every reduce bound (io.promises), as in `clean`.
            margin = write_margin(clip, job["output"])
            result = _run(clip, recipe, margin)
            # Read back before the bytes leave the worker, checked against the input (the recipe's
            # bound, if any; at the input's keys the bound asked for): the client writes exactly the
            # bytes that passed.
            promise = recipe_promise(clip, recipe, margin)
            release_freed_memory()
            data, check = render_output(
                result.clip, recipe, job["output"], tmp, promise, result, job.get("editor_curves", True)
            )
        except (ClipError, RecipeError) as e:
            res["error"] = _renamed(str(e), renames)
            return res
        except Exception as e:  # keep going past anything a file can trigger; name the failure
            res["error"] = _renamed(f"{job['input']}: internal error: {type(e).__name__}: {e}", renames)
            return res
    res.update(_stats(clip, result, check))
    if job.get("review"):  # the review page's plots, made here so only kilobytes travel back
        from ..review.data import clip_review

        errors = {t["path"]: t["max_error"] for t in res["track_details"]}
        res["review"] = clip_review(clip, check.clip if check.clip is not None else result.clip, errors)
    res["warnings"] = [_renamed(str(w), renames) for w in check.warnings]
    res["status"] = "ok"
    res["data"] = data
    return res


def release_freed_memory() -> None:
    """Hand the C heap's freed pages back to the system (glibc's ``malloc_trim``; nothing elsewhere).
    The recipe's temporaries are freed but stay in the process (numpy's mid-size arrays come from
    the heap, and glibc raises its mmap threshold as large arrays are freed): a worker's memory, as
    its Dask nanny measures it, then carries them into the write. 57 MB of a 10-minute take's
    ``unwrap + reduce`` (issue 26); Dask's documentation suggests the same for its workers."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _input_for_worker(job: dict[str, Any], tmp: str) -> str:
    """The path this worker reads: the shipped bytes saved under the input's own file name (readers
    and writers see the same name as on the client), else ``read_path`` or ``input``."""
    if job.get("data") is not None:
        folder = os.path.join(tmp, "in")
        os.mkdir(folder)
        path = os.path.join(folder, os.path.basename(job["input"]))
        with open(path, "wb") as f:
            f.write(job["data"])
        return path
    return job.get("read_path") or job["input"]


def _rendered_path(tmp: str, output: str) -> str:
    return os.path.join(tmp, "out", os.path.basename(output))


def render_output(clip, recipe, output: str, tmp: str, promise=None, result=None, editor_curves=True):
    """The output file's bytes for ``output``, written by the regular checked writer
    (``io.write_checked``, chosen by the extension: read back and compared with ``promise`` before it
    is put in place) into the private folder ``tmp`` under the output's own name, then read.
    Returns ``(packed bytes, io.verify.WriteCheck)`` (:func:`pack_file`); the client writes the bytes
    with :func:`write_output`."""
    from ..engine.recipe import write_options
    from ..io import write_checked

    rendered = _rendered_path(tmp, output)
    os.makedirs(os.path.dirname(rendered), exist_ok=True)
    opts = write_options(recipe, output, None, result, editor_curves)
    check = write_checked(clip, rendered, promise=promise, **opts)
    if check.clip is not None and check.clip.source is not None:
        # The read-back clip's document holds the whole file's bytes (for minimal-diff rewrites):
        # kept with the packed bytes it was a second copy of the output (issue 26).
        check = dataclasses.replace(check, clip=dataclasses.replace(check.clip, source=None))
    return pack_file(rendered), check


#: zlib level of the output bytes a worker sends back (:func:`pack_file`): 1, the fastest (an
#: ``.anim`` packs to about 1/7 at ~250 MB/s; higher levels gained little and cost 3-5x the time).
PACK_LEVEL = 1


def pack_file(path: str) -> bytes:
    """The zlib-compressed bytes of the file at ``path``, read and packed in chunks: what a worker
    holds and sends of an output is a fraction of it (a 10-minute take's reduced ``.anim`` is
    350 MB, 50 MB packed; sent as it was, it and its pickled copy outgrew a 1 GB worker, issue 26)."""
    import zlib

    packer = zlib.compressobj(PACK_LEVEL)
    parts = []
    with open(path, "rb") as f:
        while chunk := f.read(1 << 23):
            parts.append(packer.compress(chunk))
    parts.append(packer.flush())
    return b"".join(parts)


def unpacked_chunks(data: bytes):
    """The original bytes of :func:`pack_file`'s ``data``, in chunks (never all at once)."""
    import zlib

    unpacker = zlib.decompressobj()
    view = memoryview(data)
    for a in range(0, len(view), 1 << 22):
        out = unpacker.decompress(view[a : a + (1 << 22)])
        if out:
            yield out
    tail = unpacker.flush()
    if tail:
        yield tail


def write_output(fields: dict[str, Any]) -> dict[str, Any]:
    """The batch's one write: a worker's output bytes (``fields["data"]``, packed by :func:`pack_file`)
    to ``fields["output"]``, atomically (temp file, fsync, rename), refusing to replace the input.
    Runs in the client for every engine. Returns the fields without ``data``; a write failure turns
    them into a failed entry with the one-line ``ClipWriteError``."""
    from ..io.atomic import atomic_write_chunks
    from ..io.errors import ClipWriteError

    fields = dict(fields)
    data = fields.pop("data", None)
    fields.pop("worker", None)
    if fields.get("status") != "ok":
        return fields
    try:
        with interrupt_deferred():  # Ctrl+C lands before or after a whole file, never in the rename
            atomic_write_chunks(fields["output"], unpacked_chunks(data), protect=fields["input"])
    except ClipWriteError as e:
        return {**_entry(fields), "status": "failed", "error": str(e)}
    return fields


@contextlib.contextmanager
def interrupt_deferred():
    """Hold a SIGINT that arrives inside the block and raise its ``KeyboardInterrupt`` after it (main
    thread only; elsewhere signals cannot be handled and the block just runs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda *a: caught.append(a))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _renamed(text: str, renames: dict[str, str]) -> str:
    for worker_path, shown in renames.items():
        if worker_path != shown:
            text = text.replace(worker_path, shown)
    return text


def _run(clip, recipe, margin: float = 0.0):
    from ..engine.recipe import run_recipe

    # The report's figures are the written file's (render_output's read-back check) and each step's
    # against the track just before it (RecipeResult.figures).
    return run_recipe(clip, recipe, diffs=False, reserve_deg=margin)


def _stats(clip, result, check=None) -> dict[str, Any]:
    """Per-track figures; with ``check`` (the read-back ``io.verify.WriteCheck``) the errors are the
    written file's against the input, and ``keys_written`` its key count."""
    before = {t.path: t for t in clip.tracks}
    after = {t.path: t for t in result.clip.tracks}
    written = {t.path: t for t in check.tracks} if check is not None else {}
    details = []
    for path, changes in result.changes.items():
        w = written.get(path)
        fig = w.figures if w is not None else None  # no keys: nothing played, nothing off
        details.append(
            {
                "path": path,
                "keys_before": before[path].n_keys,
                "keys_after": after[path].n_keys,
                "keys_written": w.keys_written if w is not None else after[path].n_keys,
                "max_error": float(fig.max_error) if fig is not None else 0.0,
                "rms_error": float(fig.rms_error) if fig is not None else 0.0,
                "max_key_error": float(fig.key_error) if fig is not None else 0.0,
                "writer_max_error": float(w.writer.max_error) if w is not None else 0.0,
                "changes": list(changes),
                "steps": [f.as_dict() for f in result.figures.get(path, ())],
            }
        )
    rms = [t["rms_error"] for t in details]
    return {
        "tracks": len(details),
        "keys_before": sum(t["keys_before"] for t in details),
        "keys_after": sum(t["keys_after"] for t in details),
        "max_error": max((t["max_error"] for t in details), default=0.0),
        "rms_error": math.sqrt(sum(r * r for r in rms) / len(rms)) if rms else 0.0,
        "track_details": details,
        "steps": result.step_lines(),
    }


def failed_fields(job: dict[str, Any], reason: str) -> dict[str, Any]:
    """A failed entry for ``job`` whose worker never returned (process died, cluster gave up)."""
    return {**_entry(job), "status": "failed", "error": reason}


def _entry(job: dict[str, Any]) -> dict[str, Any]:
    """The fields naming ``job``'s entry in the report: its input, its take (if any), its output."""
    take = {"take": job["take"]} if job.get("take") is not None else {}
    return {"input": job["input"], **take, "output": job["output"]}


def code_fingerprint() -> str:
    """SHA-256 (12 hex digits) of this curveeditor's engine, I/O and batch sources: a Dask batch
    refuses workers whose fingerprint differs, since their outputs would not match ``--jobs``."""
    return _fingerprint_of(str(Path(__file__).resolve().parent.parent))


_FINGERPRINTS: dict[str, str] = {}


def _fingerprint_of(package_dir: str) -> str:
    if package_dir not in _FINGERPRINTS:
        h = hashlib.sha256()
        root = Path(package_dir)
        files = (
            sorted((root / "batch").rglob("*.py"))
            + sorted((root / "review").rglob("*.py"))
            + sorted((root / "engine").rglob("*.py"))
            + sorted((root / "io").rglob("*.py"))
        )
        for p in files:
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(p.read_bytes())
        _FINGERPRINTS[package_dir] = h.hexdigest()[:12]
    return _FINGERPRINTS[package_dir]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def largest_first(todo: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """Biggest files first so one large clip does not start last and leave a worker idle at the end;
    the report keeps input order whatever the completion order."""
    return sorted(todo, key=lambda ij: -_size(ij[1]["input"]))
