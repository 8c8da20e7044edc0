"""Where the command line prints: a terminal (fit its width, colour) or a pipe or file (whole rows,
plain text, stable for scripts).

Colour follows the usual conventions: only on a terminal, never when ``NO_COLOR`` is set (any
value, https://no-color.org) or ``TERM=dumb``; ``FORCE_COLOR`` turns it on in a pipe.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from typing import TextIO

__all__ = ["Out", "MIN_WIDTH", "ELLIPSIS"]

#: Narrowest terminal the tables are laid out for; a narrower one gets tables this wide.
MIN_WIDTH = 80
ELLIPSIS = "\u2026"

_CODES = {"ok": "32", "failed": "1;31", "warn": "33", "dim": "2", "bold": "1"}


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@dataclass
class Out:
    """How to print on ``stream``: ``width`` is the terminal's columns (None in a pipe or with
    ``--wide``: whole rows), ``color`` whether ANSI colours are used, ``ellipsis`` the character an
    elided path shows (``"..."`` where the stream cannot encode ``…``)."""

    stream: TextIO
    width: int | None
    color: bool
    ellipsis: str = ELLIPSIS

    @classmethod
    def for_stream(cls, stream: TextIO | None = None, wide: bool = False) -> Out:
        stream = sys.stdout if stream is None else stream
        tty = _isatty(stream)
        width = None
        if tty and not wide:
            width = max(MIN_WIDTH, shutil.get_terminal_size((MIN_WIDTH, 24)).columns)
        env = os.environ
        color = (tty or bool(env.get("FORCE_COLOR"))) and "NO_COLOR" not in env and env.get("TERM") != "dumb"
        ellipsis = ELLIPSIS
        try:
            ELLIPSIS.encode(getattr(stream, "encoding", None) or "utf-8")
        except (UnicodeEncodeError, LookupError):
            ellipsis = "..."
        return cls(stream, width, color, ellipsis)

    def paint(self, text: str, style: str) -> str:
        """``text`` in ``style`` ("ok", "failed", "warn", "dim", "bold") when colour is on."""
        if not self.color or not text or style not in _CODES:
            return text
        return f"\x1b[{_CODES[style]}m{text}\x1b[0m"

    def print(self, text: str = "") -> None:
        print(text, file=self.stream)
