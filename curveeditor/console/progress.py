"""A progress line on stderr for one file's long work (issue 25): the step running, the percent
done and an estimate of the time left, e.g. ``reduce   46%  0:03 left``.

Shown only when stderr is a terminal and ``--quiet`` is not given, and only once the work has taken
:data:`DELAY_S` (most commands finish sooner and print nothing extra); erased when the work ends,
so the command's own output starts on a clean line. The steps report through the engine's own
callbacks (``run_recipe``'s ``step_progress``, the checked write's ``phase``), the ones the
editor's recipe panel shows.

Between callbacks the line is redrawn from a ``SIGALRM`` interval timer (main thread only), not a
thread: a second thread would stop the checked write from comparing in a forked child
(``io.beside.may_fork`` needs a single thread), and a fork does not inherit the timer.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

__all__ = ["Progress", "DELAY_S", "format_duration"]

#: Work shorter than this shows no progress line.
DELAY_S = 0.5
#: Redraws at most this often (seconds).
REDRAW_S = 0.2


def format_duration(seconds: float) -> str:
    """``0:07``, ``12:30``, ``1:02:03`` (minutes:seconds, hours when needed)."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Progress over ``plan``, ``[(step, weight), ...]`` in the order the work runs (weights: the
    expected share of the time). ``enabled`` None: on when ``stream`` is a terminal. Use as a context
    manager, or call :meth:`close` at the end."""

    def __init__(
        self,
        plan: Sequence[tuple[str, float]],
        stream: TextIO | None = None,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        width: int | None = None,
    ):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            try:
                enabled = bool(self.stream.isatty())
            except (AttributeError, ValueError):
                enabled = False
        self.enabled = enabled
        self.clock = clock
        self.start = clock()
        self.plan = [(name, max(float(w), 0.0)) for name, w in plan]
        self.total = sum(w for _, w in self.plan) or 1.0
        self.name = self.plan[0][0] if self.plan else ""
        self.fraction = 0.0
        self.step_start: float | None = None
        self.eta_at_start: float | None = None
        self.shown = False
        self.last_draw = -1.0
        self.width = width
        self._timer = False
        self._drawing = False
        if self.enabled:
            self._start_timer()

    # ------------------------------------------------------------------ what the work reports
    def step(self, name: str, fraction: float = 0.0) -> None:
        """Step ``name`` is running, ``fraction`` (0..1) of it done."""
        if name not in (n for n, _ in self.plan):
            self.plan.append((name, 0.0))
        if name != self.name or self.step_start is None:
            # A step that reports no fractions of its own (a lockstep reduce) counts down the
            # estimate made when it started, rather than an estimate that grows while it runs.
            self.step_start = self.clock()
            self.fraction = 0.0
            self.name = name
            self.eta_at_start = self._estimate()
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        self.draw()

    def recipe_step(self, op: str, fraction: float) -> None:
        """``run_recipe``'s ``step_progress``: the op running and the fraction of it done."""
        self.step(op, fraction)

    def phase(self, name: str) -> None:
        """The checked write's ``phase(name)``: "write", then "verify"."""
        self.step(name)

    # ------------------------------------------------------------------ drawing
    def done_fraction(self) -> float:
        before = 0.0
        for n, w in self.plan:
            if n == self.name:
                return min(1.0, (before + w * self.fraction) / self.total)
            before += w
        return min(1.0, before / self.total)

    def _estimate(self) -> float | None:
        """Seconds left at the current rate (None before 3 % and 1 s of work)."""
        elapsed = self.clock() - self.start
        p = self.done_fraction()
        return elapsed * (1 - p) / p if p >= 0.03 and elapsed >= 1.0 else None

    def text(self) -> str:
        p = self.done_fraction()
        if self.fraction > 0 or self.step_start is None:
            left = self._estimate()
        else:
            if self.eta_at_start is None:  # the first estimate this step can make: count it down
                est = self._estimate()
                if est is not None:
                    self.eta_at_start = est + (self.clock() - self.step_start)
            left = None
            if self.eta_at_start is not None:
                left = self.eta_at_start - (self.clock() - self.step_start)
                left = left if left > 0 else None
        shown = f"  {format_duration(left)} left" if left is not None else ""
        return f"{self.name:<8} {100 * p:3.0f}%{shown}"

    def draw(self, force: bool = False) -> None:
        if not self.enabled or self._drawing:
            return  # (a timer tick inside a draw: a re-entrant write to the stream would raise)
        now = self.clock()
        if now - self.start < DELAY_S or (not force and now - self.last_draw < REDRAW_S):
            return
        self.last_draw = now
        line = self.text()
        if self.width:
            line = line[: self.width - 1]
        self._drawing = True
        try:
            self.stream.write("\r\x1b[K" + line)
            self.stream.flush()
            self.shown = True
        except (OSError, ValueError, RuntimeError):
            self.enabled = False
        finally:
            self._drawing = False

    def close(self) -> None:
        """Stop redrawing and erase the line (the command's output follows on a clean line)."""
        self._stop_timer()
        self._drawing = False
        if self.shown:
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self.shown = False
        self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ the timer
    def _start_timer(self) -> None:
        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
            return  # someone else owns SIGALRM: redraw at the callbacks only
        self._pid = os.getpid()
        signal.signal(signal.SIGALRM, self._on_alarm)
        signal.setitimer(signal.ITIMER_REAL, DELAY_S, REDRAW_S)
        self._timer = True

    def _on_alarm(self, _sig, _frame) -> None:
        if os.getpid() == self._pid:  # (a forked child has no timer, but may inherit the handler)
            self.draw()

    def _stop_timer(self) -> None:
        if self._timer:
            signal.setitimer(signal.ITIMER_REAL, 0.0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            self._timer = False
