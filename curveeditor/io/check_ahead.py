"""The write check started while the file renders (issue 8: checked ``.anim`` writes at disk speed;
issue 26: CSV too).

:func:`~curveeditor.io.verify.write_checked` reads every written file back and compares it with the
clip it was given. For an ``.anim`` or a CSV the comparison does not need the file: the writer hands
over the rotation tracks as the file will read back (:func:`announce_written`, heard within
:func:`on_written_tracks`): for an ``.anim`` the tracks it is about to write, whose stored numbers are
known in advance (float32, :func:`as_stored`); for a CSV the curves its reader rebuilds from the rows
(or the track's own, when the file carries its tangents). :class:`CheckAhead` compares those while the
file is rendered and written, on the second core:

* **in a child process** (``os.fork``) when the process may fork safely (:func:`_may_fork`: a single
  thread and no Qt, i.e. the CLI and batch workers). The child has its own interpreter lock, so the
  comparison runs fully beside the render and the read-back, and sends back the pickled
  :class:`~curveeditor.io.verify.WriteCheck` of each track. On CMU_Sample_05_01 (100 MB written)
  the compare is 0.9-1.0 s of CPU against 2.0 s of render and read-back: all of it leaves the
  critical path. Where it is longer, the caller compares the tracks the child has not begun once
  its read-back is done (the tracks are queued: :class:`~curveeditor.io.beside.ForkQueue`).
* **in a thread** otherwise (the editor, a Dask worker's threads): numpy releases the lock in its
  loops, but the render is Python code, so the two share the lock and the gain is small (measured
  0-10 % either way); kept because it costs nothing when a core is free.

The file is still read back with our reader: :meth:`CheckAhead.result_for` returns the early figures
only when every track read back holds bit for bit the numbers compared (:func:`plays_the_same`), so
they are the read-back file's figures; otherwise (or if the child or thread failed) None and the
caller compares the tracks read back itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np

__all__ = [
    "CHECK_AHEAD",
    "AHEAD_IN_PROCESS",
    "CheckAhead",
    "check_ahead",
    "as_stored",
    "plays_the_same",
    "same_curve_numbers",
    "on_written_tracks",
    "announce_written",
]

#: Compare ``.anim`` writes while they are rendered: True always, False never (after the read-back
#: only), None = in a child process always, in a thread when a core looks free (:func:`core_free`):
#: the thread shares the interpreter lock with the render, so it only pays with a core of its own
#: (on the shared 2-core machine at load 1.6-3.5 it made checked writes 0-10 % slower), while a
#: child does the same CPU work as the comparison after the read-back, wherever it is scheduled.
#: ``benchmarks/anim_io.py`` measures each way.
CHECK_AHEAD: bool | None = None
#: Where: None = in a forked child when the process may fork safely (:func:`_may_fork`), else in a
#: thread; True = in a child whenever ``os.fork`` exists (tests); False = always in a thread.
AHEAD_IN_PROCESS: bool | None = None
#: Fewest keys written for which the default (``AHEAD_IN_PROCESS`` None) forks: a fork and its result
#: cost 4-12 ms here, more than the whole comparison of a small clip (a batch of 200 four-track
#: files would pay it 200 times); below, the comparison runs after the read-back.
FORK_MIN_KEYS = 20_000


#: ``callback(tracks)`` given the rotation tracks of a clip as the file being written will read back
#: (see :func:`on_written_tracks`); None = nobody asks.
_ON_TRACKS: contextvars.ContextVar[Callable[[list], None] | None] = contextvars.ContextVar(
    "curveeditor_written_tracks", default=None
)


@contextlib.contextmanager
def on_written_tracks(callback: Callable[[list], None]) -> Iterator[None]:
    """Within the block, a writer that can say what its file will read back as calls
    ``callback(tracks)`` once, before its first chunk (:func:`announce_written`): the ``.anim``
    writer for a new clip (no ``.anim`` source) its rotation tracks as written (after order, kind
    and hemisphere conversions; values before the float32 spelling), the CSV writer the tracks its
    reader will build from the rows. ``io.verify`` starts its read-back comparison on them while the
    file is rendered."""
    token = _ON_TRACKS.set(callback)
    try:
        yield
    finally:
        _ON_TRACKS.reset(token)


def announce_written(tracks: Callable[[], list]) -> None:
    """A writer's side of :func:`on_written_tracks`: ``tracks()`` (made only when someone listens)
    handed to the callback of the enclosing block, if any."""
    hook = _ON_TRACKS.get()
    if hook is not None:
        hook(tracks())


def core_free() -> bool:
    """True when the 1-minute load average leaves at least one of this process's CPUs idle."""
    try:
        cpus = len(os.sched_getaffinity(0))
        return cpus >= 2 and os.getloadavg()[0] <= cpus - 1.0
    except (AttributeError, OSError):  # (no load average on this platform)
        return False


def check_ahead() -> bool:
    """Whether this write compares ahead (:data:`CHECK_AHEAD`; by default always in a child, which
    costs no more CPU than comparing afterwards even when no core is free, and in a thread only when
    a core looks free)."""
    if CHECK_AHEAD is None:
        return _may_fork() or core_free()
    return bool(CHECK_AHEAD)


def _may_fork() -> bool:
    """Whether this write compares in a child (:data:`AHEAD_IN_PROCESS`, :func:`beside.may_fork`)."""
    from .beside import may_fork

    if AHEAD_IN_PROCESS is None:
        return may_fork()
    return AHEAD_IN_PROCESS and hasattr(os, "fork")


_STORED_F32 = ("time", "value", "in_slope", "out_slope", "in_weight", "out_weight")


def as_stored(track):
    """``track`` with the numbers an ``.anim`` file stores for it: float32 times, values, slopes and
    weights (what the file reads back as when the writer spelled it faithfully)."""
    c = track.curve
    f32 = {f: np.asarray(getattr(c, f), dtype=np.float32).astype(np.float64) for f in _STORED_F32}
    return replace(track, curve=replace(c, **f32))


def plays_the_same(a, b) -> bool:
    """True when tracks ``a`` and ``b`` hold bit for bit the same numbers for everything
    ``clip.played`` reads (kind, order, key times, values, slopes, weights, weighted modes, wrap
    modes): they play the same at every time, so every figure of one is the other's."""
    if a is None or b is None:
        return a is b
    from ..engine.rotations import extrinsic_order

    if a.kind != b.kind or extrinsic_order(a.order) != extrinsic_order(b.order):
        return False  # (an intrinsic order is written as its extrinsic m_RotationOrder)
    return same_curve_numbers(a.curve, b.curve)


def same_curve_numbers(ca, cb) -> bool:
    """True when curves ``ca`` and ``cb`` hold bit for bit the same numbers for everything Unity's
    evaluation reads (key times, values, slopes, weights, weighted modes, wrap modes)."""
    if ca.pre_infinity != cb.pre_infinity or ca.post_infinity != cb.post_infinity:
        return False
    for f in (*_STORED_F32, "weighted_mode"):
        x, y = np.asarray(getattr(ca, f)), np.asarray(getattr(cb, f))
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            return False
    return True


class CheckAhead:
    """The read-back comparison of one write, started on what the writer is about to write.

    :meth:`start` (the writer's :func:`on_written_tracks` callback) begins it in a child process or a
    thread (module docstring); :meth:`result_for` the clip read back returns its
    :class:`~curveeditor.io.verify.WriteCheck` when that clip plays exactly what was compared, else
    None; :meth:`close` ends a child still running (a write that failed first).

    In a child, the tracks are queued (:class:`~curveeditor.io.beside.ForkQueue`): the caller takes
    those the child has not begun once its own read-back is done, in :meth:`result_for`. The compare
    of a 10-minute take's reduced ``.anim`` (31 tracks) is 7.7 s of CPU against 5 s of render and
    read-back: the caller waited 2.8 s for the child; sharing the rest, 1.4 s."""

    def __init__(self, clip, compare_one, join, stored=as_stored):
        self.clip = clip
        #: ``stored(track)``: the track as the file holds it (:func:`as_stored` for an ``.anim``; a
        #: CSV's decimal numbers read back exactly, the track itself)
        self.stored = stored
        #: ``compare_one(track, written) -> WriteCheck``: the write check of one track of ``clip``
        #: against the track handed to the writer for it (None: none), compared as the file stores it;
        #: ``join(parts) -> WriteCheck`` joins those of every track, in order. Passed down by
        #: :func:`~curveeditor.io.verify.write_checked`, so this module needs nothing of the checks.
        self.compare_one = compare_one
        self.join = join
        self.tracks: dict | None = None
        self.result = None
        self.thread: threading.Thread | None = None
        self.queue = None  # a beside.ForkQueue of the tracks when the comparison runs in a child

    @property
    def in_process(self) -> bool:
        """True when the comparison runs (or ran) in a child process."""
        return self.queue is not None

    def start(self, tracks) -> None:
        if self.tracks is not None:
            return
        self.tracks = {t.path: t for t in tracks}
        if _may_fork():
            if AHEAD_IN_PROCESS or sum(t.n_keys for t in tracks) >= FORK_MIN_KEYS:
                from .beside import ForkQueue

                self.queue = ForkQueue(self._compare, range(len(self.clip.tracks)), fork=True)
            return  # (a small clip: compared after the read-back, result_for gives None)
        err = np.geterr()  # numpy's error state is per thread: compare under the caller's

        def run() -> None:
            try:
                with np.errstate(**err):
                    self.result = self.join([self._compare(i) for i in range(len(self.clip.tracks))])
            except Exception:  # the main thread compares (and reports) instead
                self.result = None

        self.thread = threading.Thread(target=run, name="write-check-ahead", daemon=True)
        self.thread.start()

    def _compare(self, i: int):
        t = self.clip.tracks[i]
        return self.compare_one(t, self.tracks.get(t.path))

    def wait(self) -> None:
        """Until the comparison is done (a thread joined; a child's queue shared with the caller, its
        results read and the child reaped)."""
        if self.thread is not None:
            self.thread.join()
        if self.queue is not None and self.result is None:
            self.result = self.join(self.queue.results())

    def close(self) -> None:
        """End a child still running (the write failed or was cancelled before the check)."""
        if self.queue is not None:
            self.queue.close()

    def result_for(self, written):
        """The early check if ``written`` (the clip read back) plays exactly what it compared."""
        self.wait()
        if self.result is None:
            return None
        back = {t.path: t for t in written.tracks}
        for t in self.clip.tracks:
            if not t.n_keys:
                continue
            w = self.tracks.get(t.path)
            if not plays_the_same(None if w is None else self.stored(w), back.get(t.path)):
                return None
        return self.result
