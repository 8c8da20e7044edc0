"""Unity ``.anim`` (YAML AnimationClip) reading and writing.

* :func:`read_anim` parses a file with a hand-written streaming parser (no generic YAML load) into a
  :class:`~curveeditor.engine.clip.Clip` whose ``source`` is the :class:`AnimDocument` (the original
  bytes cut into blocks).
* :func:`write_anim` writes a clip: unedited parts of the source byte for byte, edited rotation
  tracks (and their mirrored editor curves, ``m_StopTime`` and bindings) regenerated; clips without
  an ``.anim`` source get Unity's full modern field set. Returns export-check warnings.
"""

from __future__ import annotations

import os

from ..errors import ClipReadError, ClipWriteError
from .document import AnimDocument, parse_document
from .reader import build_clip

__all__ = ["read_anim", "write_anim", "AnimDocument", "anim_text"]


def read_anim(path: str | os.PathLike, keep_source: bool = True):
    """Read a Unity ``.anim`` file into a Clip. Raises :class:`ClipReadError` (file, line, reason).

    ``keep_source=False``: the clip is only looked at (the write check's read-back), never written
    back over its file's bytes; a large file is then read in parts (:mod:`.parts`: a fraction of the
    memory) and the clip has no source document."""
    if not keep_source:
        from .parts import PARTS_MIN_BYTES, read_in_parts

        try:
            big = os.path.getsize(path) >= PARTS_MIN_BYTES
        except OSError:
            big = False  # (the read below names the fault)
        if big:
            return read_in_parts(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ClipReadError(path, None, exc.strerror or str(exc)) from exc
    return build_clip(parse_document(path, data))


def write_anim(clip, path, mode=None, protect=None, **options) -> list[str]:
    """Write ``clip`` to ``path`` (atomically; never onto ``protect``). See :mod:`.writer`."""
    from .writer import write_anim as _write

    return _write(clip, path, mode=mode, protect=protect, **options)


def anim_text(clip, mode=None, path=None, **options) -> tuple[str, list[str]]:
    """The ``.anim`` text :func:`write_anim` would write, and its warnings (nothing is written).

    Raises :class:`ClipWriteError` (naming ``path``, the file it is meant for, when given) when the
    clip cannot be written (values past float32, keys closer than float32 time resolution...)."""
    from .writer import render

    try:
        return render(clip, mode=mode, **options)
    except ValueError as exc:
        raise ClipWriteError(
            os.fspath(path) if path is not None else "(unsaved clip)", None, str(exc)
        ) from exc
