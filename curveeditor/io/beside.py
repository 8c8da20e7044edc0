"""Work computed beside the caller in a forked child process (no Qt; POSIX).

The headless commands have independent work on a 2-core machine: the read-back comparison of a
written file needs the tracks the writer writes, not the file (``io.check_ahead``), and ``convert``'s
reduction hint needs only the source clip. A thread would share the interpreter lock with the
caller's Python code (the ``.anim`` render, the read-back parse); a child forked with ``os.fork`` has
its own, starts in a few milliseconds (the pages are shared copy-on-write) and sends its pickled
result back through a pipe. :func:`may_fork` says when that is safe.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Beside", "ForkQueue", "ForkStream", "may_fork", "fork_map"]


def may_fork() -> bool:
    """True when a forked child can compute safely: POSIX ``fork``, the caller the only Python thread
    (a lock another thread holds at the fork would stay held in the child) and no Qt (its own
    threads are invisible to :mod:`threading`)."""
    if not hasattr(os, "fork"):
        return False
    return threading.active_count() == 1 and "PySide6.QtCore" not in sys.modules


class Beside:
    """``fn()`` computed in a forked child, from the moment of construction.

    :meth:`result` waits for it and returns ``(True, value)``, or ``(False, None)`` when the child
    failed in any way (an exception, a signal, a result that does not pickle, no fork possible): the
    caller then computes it itself. :meth:`close` ends a child whose result is no longer wanted. The
    child never unwinds the caller's stack (open files, temp files) and never flushes its buffers: it
    leaves with ``os._exit``. Ctrl+C goes to the caller, which ends the child."""

    def __init__(self, fn: Callable[[], Any]):
        #: The child's peak resident memory in bytes (``ru_maxrss``: the pages it shares with the
        #: caller count in both) and CPU seconds (user + system), once :meth:`result` has reaped it.
        self.peak_rss = 0
        self.cpu = 0.0
        self.pid: int | None = None
        self._fd: int | None = None
        self._done: tuple[bool, Any] | None = None
        err = np.geterr()  # numpy's error state: the child computes under the caller's
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # (no memory for the page tables, a process limit): the caller computes
            os.close(r)
            os.close(w)
            self._done = (False, None)
            return
        if pid == 0:
            status = 1
            try:
                os.close(r)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                with np.errstate(**err):
                    data = pickle.dumps(fn(), protocol=pickle.HIGHEST_PROTOCOL)
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view) :]
                status = 0
            except BaseException:  # noqa: BLE001 - any failure: the caller computes instead
                pass
            finally:
                os._exit(status)
        os.close(w)
        self.pid, self._fd = pid, r

    @property
    def running(self) -> bool:
        """True until the child has been reaped (by :meth:`result` or :meth:`close`)."""
        return self.pid is not None

    def result(self) -> tuple[bool, Any]:
        """``(True, fn())`` from the child, or ``(False, None)`` when it failed (class docstring)."""
        if self._done is not None:
            return self._done
        chunks = []
        try:
            while True:
                b = os.read(self._fd, 1 << 20)
                if not b:
                    break
                chunks.append(b)
        finally:
            os.close(self._fd)
            _, status, usage = os.wait4(self.pid, 0)
            self.pid = self._fd = None
            self.peak_rss = max(1, usage.ru_maxrss * 1024)
            self.cpu = usage.ru_utime + usage.ru_stime
        self._done = (False, None)
        if os.waitstatus_to_exitcode(status) == 0 and chunks:
            try:
                self._done = (True, pickle.loads(b"".join(chunks)))
            except Exception:  # noqa: BLE001 - (cannot happen with our own types; be safe)
                pass
        return self._done

    def close(self) -> None:
        """End and reap a child still running (its result is no longer wanted)."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self._fd)
        os.waitpid(self.pid, 0)
        self.pid = self._fd = None
        self._done = (False, None)


def fork_map(fn: Callable[[Any], Any], items) -> list:
    """``[fn(x) for x in items]``, computed by the caller and one forked child side by side
    (:class:`ForkQueue`) when :func:`may_fork` and there are two items or more: the second core of
    the 2-core machine for independent work of one command (``clean``'s ``reduce`` chunks and step
    figures, ``engine.reduce.reduce_tracks(map_chunks=)``)."""
    items = list(items)
    if len(items) < 2:
        return [fn(x) for x in items]
    return ForkQueue(fn, items).results()


class ForkQueue:
    """``[fn(x) for x in items]``, started in a forked child (:class:`Beside`) at construction and
    joined by the caller in :meth:`results`, when it is free (straight away for :func:`fork_map`;
    after its own read-back for the write check, ``io.check_ahead``).

    Each takes the next item not yet taken (item numbers queued in a pipe, read 4 bytes at a time), so
    the two finish together however uneven the items are: every other item each had the caller end
    3.4 s after the child on a 10-minute take's ``reduce``. The child's results come back pickled; a
    child that fails (or no fork: :func:`may_fork` false, more items than the pipe queues) is made
    up for by the caller computing the items it did not."""

    def __init__(self, fn: Callable[[Any], Any], items, fork: bool | None = None):
        """``fork``: None = when :func:`may_fork`; True = whenever ``os.fork`` exists (the caller has
        decided, as ``io.check_ahead`` does)."""
        self.fn = fn
        self.items = list(items)
        if fork is None:
            fork = may_fork()
        self._r: int | None = None
        #: The :class:`Beside` child (None: the caller computes every item), for its figures.
        self.child: Beside | None = None
        if not (self.items and fork and hasattr(os, "fork")) or 4 * len(self.items) > _PIPE_QUEUE_BYTES:
            return
        r, w = os.pipe()
        try:
            os.write(w, np.arange(len(self.items), dtype="<u4").tobytes())  # fits the pipe: no reader
        finally:
            os.close(w)
        self._r = r
        self.child = Beside(self._take)

    def _take(self) -> list:
        done = []
        while True:
            b = os.read(self._r, 4)  # one whole item number: written whole, read under the pipe's lock
            if len(b) < 4:
                return done
            i = int.from_bytes(b, "little")
            done.append((i, self.fn(self.items[i])))

    def results(self) -> list:
        """``[fn(x) for x in items]``: the caller takes the items still queued, then the child's."""
        try:
            mine = self._take() if self._r is not None else []
        finally:
            self._close_queue()
        ok, theirs = self.child.result() if self.child is not None else (False, None)
        out: list = [None] * len(self.items)
        have = [False] * len(self.items)
        for i, res in mine + (theirs if ok else []):
            out[i], have[i] = res, True
        for i, got in enumerate(have):
            if not got:
                out[i] = self.fn(self.items[i])
        return out

    def close(self) -> None:
        """End a child still running (its results are no longer wanted)."""
        self._close_queue()
        if self.child is not None:
            self.child.close()

    def _close_queue(self) -> None:
        if self._r is not None:
            os.close(self._r)
            self._r = None


#: Bytes of item numbers :func:`fork_map` queues in a pipe before forking (Linux's default pipe
#: holds 64 KiB; more items are computed by the caller alone).
_PIPE_QUEUE_BYTES = 1 << 16


class ForkStream:
    """``fn(item)`` for items the caller finds as it works: each :meth:`put` queues one for a child
    forked at construction, which computes them as they come; :meth:`results` (once the caller has
    put the last) has the caller take the items still queued, then returns every result in order.

    For work whose items appear one by one in a longer sequential pass, as the key blocks of an
    ``.anim`` read back in parts (``io.anim.parts``): the child parses each block while the caller
    scans for the next. Items are tuples of ints (``record``, a :class:`struct.Struct`), queued in a
    pipe as fixed records no larger than ``PIPE_BUF`` (a write is whole or not at all; an item the
    full pipe does not take is the caller's). The child appends each pickled result to an unlinked
    temporary file and sends its place in a record of its own; the caller loads them in :meth:`poll`
    (call it between items). (Results through a pipe stalled the child: a 10 MB block's keys are 160
    pipe-fulls, one per poll.) A result is thus held once in the caller, not twice at the end as
    one pickle (:class:`Beside`), and the file's pages are the page cache's, not either process's.

    A child that fails in any way, or no fork (``fork`` false, :func:`may_fork` false by default), is
    made up for by the caller computing what the child did not send back.
    """

    _PLACE = struct.Struct("<IQQ")  # (item, offset, length) of a result in the spill file

    def __init__(
        self,
        fn: Callable[[tuple], Any],
        record: struct.Struct,
        fork: bool | None = None,
        loaded: Callable[[Any], Any] | None = None,
    ):
        self.fn = fn
        #: ``loaded(result)``: a child's result as the caller keeps it, applied as each is loaded, in
        #: the order the child sent them (the parts reader resolves its references to earlier ones)
        self.loaded = loaded
        self._record = struct.Struct("<I" + record.format.lstrip("<=!>@"))
        self.items: list[tuple] = []
        self._got: dict[int, Any] = {}
        self._buf = b""
        self.pid: int | None = None
        self._q: tuple[int, int] | None = None  # the queue pipe (read, write); None once closed
        self._r: int | None = None  # the read end of the pipe of result places
        self._spill = None
        if fork is None:
            fork = may_fork()
        if not (fork and hasattr(os, "fork")) or self._record.size > select.PIPE_BUF:
            return
        import tempfile

        fds: list[int] = []
        try:  # (no room for the spill file, no descriptors, no memory for a fork: the caller computes)
            self._spill = tempfile.TemporaryFile()
            fds += os.pipe()
            fds += os.pipe()
            qr, qw, rr, rw = fds
            err = np.geterr()
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            if self._spill is not None:
                self._spill.close()
                self._spill = None
            return
        if pid == 0:
            status = 1
            try:
                os.close(qw)
                os.close(rr)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                self._serve(fn, qr, rw, err)
                status = 0
            except BaseException:  # noqa: BLE001 - any failure: the caller computes the rest
                pass
            finally:
                os._exit(status)
        os.close(rw)
        os.set_blocking(qw, False)
        os.set_blocking(rr, False)
        self.pid, self._q, self._r = pid, (qr, qw), rr

    def _serve(self, fn, qr: int, rw: int, err: dict) -> None:
        """The child: compute queued items until the queue ends, each result spilled and placed."""
        spill = self._spill.fileno()
        pos = 0
        with np.errstate(**err):
            while True:
                b = os.read(qr, self._record.size)
                if len(b) < self._record.size:
                    return
                i, *item = self._record.unpack(b)
                view = memoryview(pickle.dumps(fn(tuple(item)), protocol=pickle.HIGHEST_PROTOCOL))
                n = len(view)
                while view:
                    view = view[os.pwrite(spill, view, pos + n - len(view)) :]
                os.write(rw, self._PLACE.pack(i, pos, n))
                pos += n

    def put(self, item: tuple) -> None:
        """Queue ``item`` (a tuple of ints, of ``record``'s format) for the child."""
        i = len(self.items)
        self.items.append(tuple(item))
        if self._q is not None:
            try:
                os.write(self._q[1], self._record.pack(i, *item))
            except BlockingIOError:
                pass  # (the queue is full: the caller computes it, in results())
        self.poll()

    def poll(self) -> None:
        """Load the results the child has finished so far (without waiting, unless the pipe of
        places is blocking: :meth:`results` reads it to the child's end)."""
        if self._r is None:
            return
        while True:
            try:
                b = os.read(self._r, 1 << 16)
            except BlockingIOError:
                break
            if not b:
                break
            self._buf += b
        size = self._PLACE.size
        whole = len(self._buf) - len(self._buf) % size
        for i, pos, n in self._PLACE.iter_unpack(self._buf[:whole]):
            got = pickle.loads(os.pread(self._spill.fileno(), n, pos))
            self._got[i] = got if self.loaded is None else self.loaded(got)
        self._buf = self._buf[whole:]

    def results(self) -> list:
        """``[fn(item) for item in items]``: the caller takes the items still queued, then waits for
        the child's results and computes any it did not send."""
        try:
            if self._q is not None:
                qr, qw = self._q
                os.close(qw)
                self._q = (qr, -1)
                while True:  # (records are written whole: a read of one record gets one or none)
                    b = os.read(qr, self._record.size)
                    if len(b) < self._record.size:
                        break
                    i, *item = self._record.unpack(b)
                    self._got[i] = self.fn(tuple(item))
                    self.poll()
            if self._r is not None:
                os.set_blocking(self._r, True)
                self.poll()  # (blocking now: reads to the child's end)
            if self.pid is not None:
                os.waitpid(self.pid, 0)
                self.pid = None
        finally:
            self.close()
        for i, item in enumerate(self.items):
            if i not in self._got:
                self._got[i] = self.fn(item)
        return [self._got.pop(i) for i in range(len(self.items))]

    def close(self) -> None:
        """End a child still running (its results are no longer wanted) and close the pipes and the
        spill file."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None
        if self._q is not None:
            for fd in self._q:
                if fd >= 0:
                    os.close(fd)
            self._q = None
        if self._r is not None:
            os.close(self._r)
            self._r = None
        if self._spill is not None:
            self._spill.close()
            self._spill = None
