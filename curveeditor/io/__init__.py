"""Clip readers and writers, chosen by file extension.

``read_clip(path, order=None) -> Clip`` and ``write_clip(clip, path, **opts) -> list[str]`` (warnings);
``write_checked(clip, path, protect=None, promise=None, **opts) -> WriteCheck`` (:mod:`.verify`) is the
same write returning the read-back figures. Every write reads its temp file back with our own reader
and compares what it plays with the clip (and the promise) before the rename: a file that does not
read back, or misses its bound, is never put in place.
Formats: ``.csv`` (read and write, :mod:`.csv_io`), ``.anim`` (Unity, read and write, :mod:`.anim`),
``.bvh`` (read :mod:`.bvh`, write :mod:`.bvh_writer`: a clip with a BVH skeleton), ``.fbx`` (read
only, :mod:`.fbx`, needs the ``fbx`` extra), ``.gltf`` / ``.glb`` (read and write, :mod:`.gltf`). The
format table and its loader are :mod:`.formats` (modules imported on first use, so importing this
package stays cheap). Every failure is a :class:`ClipError` (``FILE:LINE: REASON``); writes are atomic
and can protect the input file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from .errors import ClipError, ClipReadError, ClipWriteError
from .formats import (
    GLTF_FORMATS,
    READ_FORMATS,
    SAMPLE_FORMATS,
    TAKE_FORMATS,
    TAKE_NAMES,
    WRITE_FORMATS,
    extension,
    load_format,
)

__all__ = [
    "read_clip",
    "take_names",
    "write_clip",
    "write_checked",
    "Promise",
    "WriteCheck",
    "READ_FORMATS",
    "MAX_CLIP_BYTES",
    "WRITE_FORMATS",
    "SAMPLE_FORMATS",
    "GLTF_FORMATS",
    "TAKE_FORMATS",
    "ClipError",
    "ClipReadError",
    "ClipWriteError",
]

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


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def take_names(path: str | os.PathLike) -> list[str]:
    """The names of the clips a file of several holds (:data:`TAKE_FORMATS`: FBX takes, glTF
    animations; ``read_clip(path, take=name)`` reads one), without reading them; ``[]`` for the
    formats that hold one clip. Raises :class:`ClipReadError` for a file that cannot be opened."""
    fname = os.fspath(path)
    if extension(fname) not in TAKE_FORMATS:
        return []
    return load_format(fname, TAKE_NAMES, "list the takes of", ClipReadError)(fname)


def read_clip(path: str | os.PathLike, order: str | None = None, take: str | int | None = None):
    """Read a clip, choosing the reader by extension (``.csv``, ``.anim``, ``.bvh``, ``.fbx``, ``.gltf``,
    ``.glb``; case-insensitive).

    ``order`` is the Euler order of CSV ``x, y, z`` columns (default Unity's ``"zxy"``); other formats
    carry their own orders and ignore it. ``take`` picks the clip of a file holding several
    (:data:`TAKE_FORMATS`: an FBX animation stack, a glTF animation; index or name, default the
    first); the other formats hold one clip and refuse a take other than 0 or None.
    Raises :class:`ClipReadError` for an unknown extension, a missing reader, a missing file or bad
    content; never another exception type for bad input.
    """
    fname = os.fspath(path)
    reader = load_format(fname, READ_FORMATS, "read", ClipReadError)
    try:
        st = os.stat(fname)
    except FileNotFoundError:
        raise ClipReadError(fname, None, "no such file") from None
    except OSError as exc:
        raise ClipReadError(fname, None, exc.strerror or str(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise ClipReadError(fname, None, "is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        # A FIFO with no writer blocks open() for ever; /dev/zero or /dev/urandom never end.
        raise ClipReadError(fname, None, f"is not a regular file (it is a {_file_kind(st.st_mode)})")
    size, limit = st.st_size, max_clip_bytes()
    if size > limit:
        raise ClipReadError(
            fname,
            None,
            f"file is {_size_text(size)}, over the {_size_text(limit)} limit for one clip "
            "(set CURVEEDITOR_MAX_CLIP_BYTES to raise it)",
        )
    ext = extension(fname)
    kwargs = {"order": order} if order is not None and ext == ".csv" else {}
    if take is not None:
        if ext in TAKE_FORMATS:
            kwargs["take"] = take
        elif str(take) != "0":
            raise ClipReadError(fname, None, f"{ext} files hold one clip (no take {take!r})")
    try:
        clip = reader(fname, **kwargs)
    except ClipError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise ClipReadError(fname, None, getattr(exc, "strerror", None) or str(exc)) from exc
    except ValueError as exc:
        # A reader let a validation error of the clip model through: still the file's fault.
        raise ClipReadError(fname, None, str(exc)) from exc
    except MemoryError:
        raise ClipReadError(fname, None, f"not enough memory to read this {_size_text(size)} clip") from None
    _check_quaternion_keys(fname, clip)
    _check_track_count(fname, clip)
    return clip


#: Most rotation tracks in one clip. Every operation costs a few ms per track (inspect, clean, the
#: writer and its read-back check, the editor's load): 1,000 sibling joints took 4.6 s through
#: ``clean --unwrap --reduce 0.5`` (6.6 s for a 1,000-level chain), 10,000 over 20 s. Real rigs have tens
#: to a few hundred bones.
#: Override: $CURVEEDITOR_MAX_TRACKS.
MAX_ROTATION_TRACKS = 1024


def max_rotation_tracks() -> int:
    """The track limit in force (``MAX_ROTATION_TRACKS`` unless the environment variable overrides it)."""
    try:
        return int(os.environ.get("CURVEEDITOR_MAX_TRACKS", MAX_ROTATION_TRACKS))
    except ValueError:
        return MAX_ROTATION_TRACKS


def _check_track_count(fname: str, clip) -> None:
    n, limit = len(clip.tracks), max_rotation_tracks()
    if n > limit:
        raise ClipReadError(
            fname,
            None,
            f"{n:,} rotation tracks, over the {limit:,} limit for one clip "
            "(set CURVEEDITOR_MAX_TRACKS to raise it)",
        )


def _check_quaternion_keys(fname: str, clip) -> None:
    """Every quaternion key must be a rotation: a zero (or non-finite) key cannot be normalized, and
    the first computation on it (inspect, clean, the editor's load) would fail far from the file.
    Readers that know the line report it themselves; this is the guarantee for all of them."""
    import numpy as np

    for t in clip.tracks:
        if t.kind != "quaternion" or t.n_keys == 0:
            continue
        with np.errstate(all="ignore"):
            norm = np.linalg.norm(t.curve.value, axis=1)
        bad = ~(np.isfinite(norm) & (norm > 1e-12))
        if bad.any():
            i = int(np.argmax(bad))
            what = "zero" if np.isfinite(norm[i]) else "non-finite"
            raise ClipReadError(
                fname,
                None,
                f"track {t.path or '(root)'!r}: key {i} at {float(t.times[i]):g} s is a {what} quaternion "
                "(not a rotation)",
            )


def write_clip(
    clip,
    path: str | os.PathLike,
    protect: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    **opts,
) -> list[str]:
    """Write ``clip``, choosing the writer by extension (``.csv``, ``.anim``, ``.bvh``, ``.gltf``, ``.glb``);
    returns warnings.

    The write is atomic (the target is whole or untouched; a symbolic link is written through to its
    target) and refuses to overwrite ``protect`` (the input path(s)). Before the rename the temp file
    is read back and must play like ``clip`` within the writer's tolerance
    (:func:`~curveeditor.io.verify.write_checked`, which returns the figures too). Extra ``opts`` go to
    the writer (e.g. ``mode=`` for ``.anim``, ``keys_only=`` for ``.csv``). Raises
    :class:`ClipWriteError`.
    """
    return list(write_checked(clip, path, protect=protect, **opts).warnings)


def __getattr__(name: str):
    # The read-back API lives in .verify (numpy-heavy); imported on first use.
    if name in ("Promise", "WriteCheck"):
        from . import verify

        return getattr(verify, name)
    raise AttributeError(name)


def write_checked(clip, path, protect=None, promise=None, tolerance=None, confirm=None, phase=None, **opts):
    """:func:`curveeditor.io.verify.write_checked` (kept here so callers need one import)."""
    from .verify import write_checked as _write_checked

    return _write_checked(
        clip,
        path,
        protect=protect,
        promise=promise,
        tolerance=tolerance,
        confirm=confirm,
        phase=phase,
        **opts,
    )
