"""Typed errors for clip readers and writers.

Every error names the file, the 1-based line when it is known, and the reason, and prints as one
line (``FILE:LINE: REASON`` or ``FILE: REASON``) so the CLI can show it verbatim.
"""

from __future__ import annotations

import numbers
import os

__all__ = ["ClipError", "ClipReadError", "ClipWriteError"]


class ClipError(Exception):
    """A clip could not be read or written.

    Attributes:
        path: the file concerned (as given by the caller, ``str``).
        line: 1-based line number in the file, or ``None`` when the problem is not tied to a line.
        reason: what is wrong, one line, no file name.
    """

    def __init__(self, path: str | os.PathLike, *args, line: int | None = None, reason: str | None = None):
        """``ClipError(path, line, reason)``; also accepted: ``(path, reason)``, ``(path, reason, line)``
        and keywords ``line=``/``reason=``. ``line`` is an ``int`` (1-based) or ``None``."""
        for a in args:
            if isinstance(a, str):
                reason = a
            elif a is None or isinstance(a, numbers.Integral):  # numpy's integers are Integral too
                line = a
            else:
                raise TypeError(f"ClipError: unexpected argument {a!r}")
        self.path = os.fspath(path)
        self.line = None if line is None else int(line)
        # Keep the message on one line whatever the caller passes (multi-line exception texts).
        self.reason = " ".join(str(reason if reason is not None else "error").split())
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}:{self.line}: {self.reason}"

    def __reduce__(self):
        # Picklable across process pools (batch workers) with all three fields intact.
        return (type(self), (self.path, self.line, self.reason))


class ClipReadError(ClipError):
    """The input file is missing, unreadable, or its content is invalid."""


class ClipWriteError(ClipError):
    """The output could not be written (or would overwrite the input); nothing was written."""
