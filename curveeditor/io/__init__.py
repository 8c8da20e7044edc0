"""Clip readers and writers, chosen by file extension.

``read_clip(path, order=None) -> Clip`` and ``write_clip(clip, path, **opts) -> list[str]`` (warnings).
Formats: ``.csv`` (read and write, :mod:`.csv_io`), ``.anim`` (Unity, read and write, :mod:`.anim`),
``.bvh`` (read only, :mod:`.bvh`). Format modules are imported on first use so importing this package
stays cheap. Every failure is a :class:`ClipError` (``FILE:LINE: REASON``); writes are atomic and can
protect the input file.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from pathlib import Path

from .errors import ClipError, ClipReadError, ClipWriteError

__all__ = [
    "read_clip",
    "write_clip",
    "READ_FORMATS",
    "MAX_CLIP_BYTES",
    "WRITE_FORMATS",
    "ClipError",
    "ClipReadError",
    "ClipWriteError",
]

#: extension -> (module, reader function)
READ_FORMATS = {
    ".csv": ("curveeditor.io.csv_io", "read_csv"),
    ".anim": ("curveeditor.io.anim", "read_anim"),
    ".bvh": ("curveeditor.io.bvh", "read_bvh"),
}
#: Largest clip file read (bytes). The largest real clips are a few MB; a file past this is almost
#: certainly not an animation clip (or needs splitting), and reading it would take minutes and many GB
#: (the .anim parser holds ~4x the file size while it works). Override: $CURVEEDITOR_MAX_CLIP_BYTES.
MAX_CLIP_BYTES = 1 << 30


def max_clip_bytes() -> int:
    """The size limit in force (``MAX_CLIP_BYTES`` unless the environment variable overrides it)."""
    try:
        return int(os.environ.get("CURVEEDITOR_MAX_CLIP_BYTES", MAX_CLIP_BYTES))
    except ValueError:
        return MAX_CLIP_BYTES


def _size_text(n: int) -> str:
    if n < 1 << 20:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1 << 20):.1f} MB" if n < (1 << 30) else f"{n / (1 << 30):.2f} GB"


#: extension -> (module, writer function)
WRITE_FORMATS = {
    ".csv": ("curveeditor.io.csv_io", "write_csv"),
    ".anim": ("curveeditor.io.anim", "write_anim"),
}


def _extension(path: str | os.PathLike) -> str:
    return Path(path).suffix.lower()


def _load(path: str, table: dict, what: str, error: type[ClipError]):
    ext = _extension(path)
    if ext not in table:
        known = ", ".join(sorted(table))
        shown = f"'{ext}'" if ext else "no extension"
        raise error(path, None, f"cannot {what} {shown} files (supported: {known})")
    module_name, func_name = table[ext]
    try:
        module = importlib.import_module(module_name)
        return getattr(module, func_name)
    except (ImportError, AttributeError) as exc:
        raise error(path, None, f"{what}ing {ext} files is not available in this build ({exc})") from exc


def read_clip(path: str | os.PathLike, order: str | None = None):
    """Read a clip, choosing the reader by extension (``.csv``, ``.anim``, ``.bvh``; case-insensitive).

    ``order`` is the Euler order of CSV ``x, y, z`` columns (default Unity's ``"zxy"``); other formats
    carry their own orders and ignore it. Raises :class:`ClipReadError` for an unknown extension, a
    missing reader, a missing file or bad content; never another exception type for bad input.
    """
    fname = os.fspath(path)
    reader = _load(fname, READ_FORMATS, "read", ClipReadError)
    if not os.path.exists(fname):
        raise ClipReadError(fname, None, "no such file")
    if os.path.isdir(fname):
        raise ClipReadError(fname, None, "is a folder, not a file")
    size, limit = os.path.getsize(fname), max_clip_bytes()
    if size > limit:
        raise ClipReadError(
            fname,
            None,
            f"file is {_size_text(size)}, over the {_size_text(limit)} limit for one clip "
            "(set CURVEEDITOR_MAX_CLIP_BYTES to raise it)",
        )
    kwargs = {"order": order} if order is not None and _extension(fname) == ".csv" else {}
    try:
        return reader(fname, **kwargs)
    except ClipError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise ClipReadError(fname, None, getattr(exc, "strerror", None) or str(exc)) from exc
    except ValueError as exc:
        # A reader let a validation error of the clip model through: still the file's fault.
        raise ClipReadError(fname, None, str(exc)) from exc
    except MemoryError:
        raise ClipReadError(fname, None, f"not enough memory to read this {_size_text(size)} clip") from None


def write_clip(
    clip,
    path: str | os.PathLike,
    protect: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    **opts,
) -> list[str]:
    """Write ``clip``, choosing the writer by extension (``.csv``, ``.anim``); returns warnings.

    The write is atomic (the target is whole or untouched) and refuses to overwrite ``protect``
    (the input path(s)). Extra ``opts`` go to the writer (e.g. ``mode=`` for ``.anim``,
    ``keys_only=`` for ``.csv``). Raises :class:`ClipWriteError`.
    """
    from .atomic import check_not_protected

    fname = os.fspath(path)
    writer = _load(fname, WRITE_FORMATS, "write", ClipWriteError)
    check_not_protected(fname, protect)
    # Every writer writes atomically through io.atomic (temp file, fsync, rename) and raises
    # ClipWriteError naming ``fname``; a second temp-file layer here only doubled the disk writes.
    return list(writer(clip, fname, protect=protect, **opts) or [])
