"""Atomic file output: a reader of the target path sees the old file or the whole new one, never a part.

The data goes to a temporary file in the target's own folder (so ``os.replace`` is a rename on the
same file system), is flushed and fsynced, then renamed over the target. On any failure the temporary
file is removed and the target is left as it was. A ``protect`` path (the input a command read) is
never written: writing onto it raises :class:`ClipWriteError` before anything touches the disk.

A target that is a symbolic link is written *through* the link: the temp file goes next to the file
the link points to and replaces that file, so the link stays a link (``os.replace`` onto the link's
own name would have swapped it for a regular file).

Read-back checks: :func:`check_before_replace` installs a function that gets the finished temp file
(and the target name) before the rename; when it raises, the temp file is removed and the target is
left as it was. ``io.write_checked`` uses it so that every writer's output is read back with our own
reader and compared with what the operation promised before it is put in place (issues 8 and 11).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator

from .errors import ClipWriteError

__all__ = [
    "atomic_write_bytes",
    "atomic_write_chunks",
    "atomic_write_text",
    "same_file",
    "check_not_protected",
    "check_target",
    "check_before_replace",
    "write_target",
]

PathLike = str | os.PathLike

#: ``check(temp_path, target_path)`` run on every finished temp file before the rename (see
#: :func:`check_before_replace`); None = no check.
_BEFORE_REPLACE: contextvars.ContextVar[Callable[[str, str], None] | None] = contextvars.ContextVar(
    "curveeditor_before_replace", default=None
)


@contextlib.contextmanager
def check_before_replace(check: Callable[[str, str], None]) -> Iterator[None]:
    """Within the block, every atomic write calls ``check(temp_path, target_path)`` after the data is
    on disk and before ``os.replace``; an exception from ``check`` aborts that write (temp file
    removed, target untouched) and propagates."""
    token = _BEFORE_REPLACE.set(check)
    try:
        yield
    finally:
        _BEFORE_REPLACE.reset(token)


def write_target(path: PathLike) -> str:
    """The file a write to ``path`` replaces: ``path`` itself, or the final target of a symbolic link
    (also a dangling one, which the write then creates)."""
    target = os.fspath(path)
    if os.path.islink(target):
        return os.path.realpath(target)
    return target


def same_file(a: PathLike, b: PathLike) -> bool:
    """True when ``a`` and ``b`` name the same file (through links and relative paths)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        # One of them does not exist (yet): compare the resolved names.
        return os.path.realpath(a) == os.path.realpath(b)


def check_not_protected(path: PathLike, protect: PathLike | Iterable[PathLike] | None) -> None:
    """Raise :class:`ClipWriteError` when ``path`` is (one of) the ``protect`` path(s)."""
    if protect is None:
        return
    items = [protect] if isinstance(protect, (str, os.PathLike)) else list(protect)
    for p in items:
        if p is not None and same_file(path, p):
            raise ClipWriteError(path, None, f"refusing to overwrite the input file {os.fspath(p)}")


def check_target(path: PathLike) -> str:
    """Raise :class:`ClipWriteError` when ``path`` cannot be written: its folder is missing or
    ``path`` is a folder. Commands call it before any work so a bad second output (a report) does
    not fail after the first was written. Returns the absolute folder."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise ClipWriteError(target, None, f"output folder {folder} does not exist")
    if os.path.isdir(target):
        raise ClipWriteError(target, None, "is a folder, not a file")
    return folder


def atomic_write_bytes(
    path: PathLike, data: bytes, protect: PathLike | Iterable[PathLike] | None = None
) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, ``os.replace``).

    Raises :class:`ClipWriteError` (nothing written, no temp file left) when ``path`` is a ``protect``
    path, its folder does not exist, or any OS error occurs.
    """
    atomic_write_chunks(path, (data,), protect=protect)


@contextlib.contextmanager
def _syncing(fd: int) -> Iterator[None]:
    """``os.fsync(fd)`` beside the block; an error of either is raised after both are done (the
    block's first). Beside it in a forked child where the process may fork (``io.beside.may_fork``):
    a thread would make the block's own forks unsafe (the read-back of a large ``.anim`` parses its
    key blocks in a child, ``io.anim.parts``); else in a thread."""
    from .beside import Beside, may_fork

    if may_fork():
        sync = Beside(lambda: _fsync_error(fd))
        try:
            yield
        except BaseException:
            sync.close()
            raise
        ok, err = sync.result()
        if not ok:  # (the child failed: the caller syncs)
            os.fsync(fd)
        elif err is not None:
            raise OSError(*err)
        return
    failed: list[OSError] = []

    def run() -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            failed.append(exc)

    sync = threading.Thread(target=run, name="fsync", daemon=True)
    sync.start()
    try:
        yield
    finally:
        sync.join()
    if failed:
        raise failed[0]


def _fsync_error(fd: int) -> tuple[int, str] | None:
    """``os.fsync(fd)``; its error as ``(errno, strerror)`` (what pickles back from a child), or None."""
    try:
        os.fsync(fd)
    except OSError as exc:
        return exc.errno, exc.strerror
    return None


def atomic_write_chunks(
    path: PathLike, chunks: Iterable[bytes], protect: PathLike | Iterable[PathLike] | None = None
) -> None:
    """:func:`atomic_write_bytes` of the concatenation of ``chunks``, written as they come (a
    streaming writer never holds the whole file). An exception raised while producing the chunks
    propagates unchanged after the temp file is removed (the target is untouched)."""
    check_not_protected(path, protect)
    shown = os.fspath(path)
    target = write_target(shown)
    folder = check_target(target)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
        check = _BEFORE_REPLACE.get()
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            # Keep the permissions an existing target had; new files get the usual umask-based mode
            # instead of mkstemp's 0600.
            if os.path.exists(target):
                os.chmod(tmp, os.stat(target).st_mode & 0o7777)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            if check is None:
                os.fsync(f.fileno())
            else:
                # The data goes to disk while the check reads it back from the page cache (fsync
                # waits on the device, not the CPU): both done before the rename.
                with _syncing(f.fileno()):
                    check(tmp, shown)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise ClipWriteError(shown, None, exc.strerror or str(exc)) from exc
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _fsync_folder(folder)


def atomic_write_text(
    path: PathLike,
    text: str,
    protect: PathLike | Iterable[PathLike] | None = None,
    encoding: str = "utf-8",
) -> None:
    """Write ``text`` atomically, encoded with ``encoding``; newlines are written as given."""
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ClipWriteError(path, None, f"cannot encode as {encoding}: {exc.reason}") from exc
    atomic_write_bytes(path, data, protect=protect)


def _fsync_folder(folder: str) -> None:
    """Make the rename durable; not every platform/file system lets a folder be opened, so best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
