"""Progress display of a batch: a one-line bar with rate and ETA on a terminal, one line per file
otherwise (logs, CI, pipes). Both are ``progress(done, total, result)`` callables for
:func:`curveeditor.batch.runner.run_batch`; no Qt, standard library only.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..console.progress import format_duration

__all__ = ["ProgressBar", "progress_line", "format_duration", "choose_progress"]


def _name(result) -> str:
    name = Path(result.input).name or result.input
    take = getattr(result, "take", None)
    return name if take is None else f"{name} take {take!r}"


def progress_line(done: int, total: int, result) -> str:
    """``[12/40] walk.anim ok`` (or ``failed: REASON``); a file re-run after a worker died adds
    ``(attempt 2: worker tcp://... died while running it)``."""
    status = "ok" if result.ok else f"{result.status}: {result.error}"
    line = f"[{done}/{total}] {_name(result)} {status}"
    if getattr(result, "attempts", 1) > 1:
        line += f" (attempt {result.attempts}: {'; '.join(result.retries)})"
    return line


class ProgressBar:
    """``[#######-------------]  12/40  30%  3.2 files/s  ETA 0:09  walk.anim`` redrawn in place
    (carriage return + erase line) after every file. Failed and re-run files also get a line of
    their own above the bar, so they stay on screen. ``rate`` is files finished per second of wall
    time since the bar was made; ``ETA`` = files left / rate. Call :meth:`close` at the end."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic, width=None):
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.start = clock()
        self.width = width
        self.drawn = False

    def text(self, done: int, total: int, result) -> str:
        elapsed = max(self.clock() - self.start, 1e-9)
        rate = done / elapsed
        frac = done / total if total else 1.0
        eta = format_duration((total - done) / rate) if rate > 0 else "--:--"
        cells = 20
        filled = int(round(frac * cells))
        bar = "#" * filled + "-" * (cells - filled)
        count = f"{done:>{len(str(total))}}/{total}"
        line = f"[{bar}] {count} {frac:4.0%}  {rate:.2f} files/s  ETA {eta}  {_name(result)}"
        width = self.width or shutil.get_terminal_size((100, 20)).columns
        return line[: max(width - 1, 20)]

    def __call__(self, done: int, total: int, result) -> None:
        if not result.ok or getattr(result, "attempts", 1) > 1:
            self.stream.write("\r\x1b[K" + progress_line(done, total, result) + "\n")
        self.stream.write("\r\x1b[K" + self.text(done, total, result))
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def choose_progress(mode: str, stream: TextIO | None = None):
    """The progress callable for ``--progress MODE``: ``bar``, ``lines``, ``none``, or ``auto`` (a bar
    when ``stream``, default stderr, is a terminal, else lines). Returns ``(callable, close)``."""
    stream = sys.stderr if stream is None else stream
    if mode == "auto":
        mode = "bar" if stream.isatty() else "lines"
    if mode == "bar":
        bar = ProgressBar(stream)
        return bar, bar.close
    if mode == "none":
        return (lambda *a: None), (lambda: None)

    def lines(done, total, result):
        print(progress_line(done, total, result), file=stream, flush=True)

    return lines, (lambda: None)
