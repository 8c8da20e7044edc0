"""Background work for the GUI: cancellable jobs whose results come back on the GUI thread.

Two tools:

* :class:`LatestRunner` runs "the latest request only" jobs such as recipe previews: every
  :meth:`LatestRunner.submit` cancels the previous job (its :class:`CancelToken` turns True, which
  ``engine.recipe.run_recipe(..., cancel=token)`` checks between steps and tracks) and bumps a
  generation number; a result whose generation is not the newest is dropped, so a slow old run can
  never overwrite a newer preview.
* :func:`run_in_thread` runs one job (e.g. a long clip load) with progress and cancel, and calls
  ``on_done`` / ``on_error`` / ``on_cancelled`` / ``on_progress`` on the GUI thread.

Job functions are called as ``fn(token, progress)``: ``token()`` is True once the job is cancelled
(stop early by returning or raising :class:`JobCancelled`), ``progress(fraction, text)`` reports a
fraction 0..1 and a short message. They run on a worker thread, so they must not touch widgets.

Results are delivered with Qt signals of a relay ``QObject`` created on the GUI thread; a signal
emitted from the worker thread is therefore queued to the GUI thread's event loop.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

__all__ = ["CancelToken", "JobCancelled", "LatestRunner", "ThreadJob", "run_in_thread"]

ProgressFn = Callable[[float, str], None]
JobFn = Callable[["CancelToken", ProgressFn], Any]


class JobCancelled(Exception):
    """Raised by a job function that notices its token was cancelled."""


class CancelToken:
    """A thread-safe cancel flag. Calling the token returns True once it is cancelled.

    It is the ``cancel`` callable ``engine.recipe.run_recipe`` expects.
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise JobCancelled()


class _Relay(QObject):
    """Carries results from a worker thread to the GUI thread (lives on the GUI thread)."""

    done = Signal(int, object, float)  # generation, result, seconds
    failed = Signal(int, object, str, float)  # generation, exception, traceback text, seconds
    cancelled = Signal(int)
    progress = Signal(int, float, str)


# Jobs that are queued or running. QThreadPool does not keep the Python wrapper of a QRunnable
# alive, so this set does; a job removes itself when its last signal has been emitted.
_LIVE: set[_Task] = set()
_LIVE_LOCK = threading.Lock()


def _emit(signal, *args) -> None:
    """Emit from a worker thread; a relay deleted meanwhile (window closed) just drops the result."""
    try:
        signal.emit(*args)
    except RuntimeError:  # "Signal source has been deleted"
        pass


class _Task(QRunnable):
    def __init__(self, fn: JobFn, token: CancelToken, relay: _Relay, generation: int) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self._fn = fn
        self._token = token
        self._relay = relay  # a strong reference: the relay outlives its owner while we run
        self._generation = generation

    def run(self) -> None:
        gen, relay, token = self._generation, self._relay, self._token
        t0 = time.perf_counter()
        try:
            if token():
                _emit(relay.cancelled, gen)
                return

            def progress(fraction: float, text: str = "") -> None:
                if not token():
                    _emit(relay.progress, gen, float(fraction), str(text))

            result = self._fn(token, progress)
            if token():
                _emit(relay.cancelled, gen)
            else:
                _emit(relay.done, gen, result, time.perf_counter() - t0)
        except JobCancelled:
            _emit(relay.cancelled, gen)
        except Exception as exc:  # delivered to the GUI as an error, never a crash
            # An error raised after cancellation (e.g. engine.recipe.RecipeCancelled) is a cancel.
            if token():
                _emit(relay.cancelled, gen)
            else:
                _emit(relay.failed, gen, exc, traceback.format_exc(), time.perf_counter() - t0)
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(self)


def _start(pool: QThreadPool, task: _Task) -> None:
    with _LIVE_LOCK:
        _LIVE.add(task)
    pool.start(task)


class LatestRunner(QObject):
    """Runs the latest submitted job; each new submission cancels the previous one.

    Signals (all on the GUI thread):
        started(generation)
        finished(generation, result, seconds): only for the newest generation.
        failed(generation, message, traceback): only for the newest generation.
        cancelled(generation): the newest job stopped because :meth:`cancel` was called.
        progress(generation, fraction 0..1, text): only for the newest generation.
        busyChanged(bool)
    """

    started = Signal(int)
    finished = Signal(int, object, float)
    failed = Signal(int, str, str)
    cancelled = Signal(int)
    progress = Signal(int, float, str)
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, max_threads: int = 2) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        # Two threads: a new preview does not wait for an older run that is still winding down.
        self._pool.setMaxThreadCount(max_threads)
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._relay.cancelled.connect(self._on_cancelled)
        self._relay.progress.connect(self._on_progress)
        self._generation = 0
        self._token: CancelToken | None = None
        self._busy = False

    @property
    def generation(self) -> int:
        """The generation number of the newest submitted job (0 = none yet)."""
        return self._generation

    @property
    def busy(self) -> bool:
        """True while the newest job has not reported back."""
        return self._busy

    def submit(self, fn: JobFn) -> int:
        """Cancel the running job (if any) and start ``fn(token, progress)``; return its generation."""
        if self._token is not None:
            self._token.cancel()
        self._generation += 1
        self._token = CancelToken()
        _start(self._pool, _Task(fn, self._token, self._relay, self._generation))
        self._set_busy(True)
        self.started.emit(self._generation)
        return self._generation

    def cancel(self) -> None:
        """Cancel the newest job; its result (if any) is dropped."""
        if self._token is not None:
            self._token.cancel()

    def wait(self, timeout_ms: int = 5000) -> bool:
        """Block until every job of this runner has returned (tests, shutdown)."""
        return self._pool.waitForDone(timeout_ms)

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel and wait; call before the owner goes away."""
        self.cancel()
        return self.wait(timeout_ms)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    def _on_done(self, gen: int, result: object, seconds: float) -> None:
        if gen != self._generation:
            return  # stale: a newer request exists
        self._set_busy(False)
        self.finished.emit(gen, result, seconds)

    def _on_failed(self, gen: int, exc: object, tb: str, seconds: float) -> None:
        if gen != self._generation:
            return
        self._set_busy(False)
        self.failed.emit(gen, str(exc) or type(exc).__name__, tb)

    def _on_cancelled(self, gen: int) -> None:
        if gen != self._generation:
            return
        self._set_busy(False)
        self.cancelled.emit(gen)

    def _on_progress(self, gen: int, fraction: float, text: str) -> None:
        if gen == self._generation:
            self.progress.emit(gen, fraction, text)


class ThreadJob(QObject):
    """One background job started by :func:`run_in_thread`.

    Signals (GUI thread): ``done(result)``, ``failed(exception)``, ``cancelled()``,
    ``progress(fraction, text)``, and ``finished()`` after any of the first three.
    """

    done = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    progress = Signal(float, str)
    finished = Signal()

    def __init__(self, token: CancelToken, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.token = token
        self.traceback = ""
        self.result: Any = None
        self.error: BaseException | None = None
        self.is_finished = False
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._relay.cancelled.connect(self._on_cancelled)
        self._relay.progress.connect(lambda _g, f, t: self.progress.emit(f, t))

    def cancel(self) -> None:
        self.token.cancel()

    def _finish(self) -> None:
        self.is_finished = True
        self.finished.emit()
        _JOBS.discard(self)

    def _on_done(self, _gen: int, result: object, _s: float) -> None:
        self.result = result
        self.done.emit(result)
        self._finish()

    def _on_failed(self, _gen: int, exc: object, tb: str, _s: float) -> None:
        self.error = exc  # type: ignore[assignment]
        self.traceback = tb
        self.failed.emit(exc)
        self._finish()

    def _on_cancelled(self, _gen: int) -> None:
        self.cancelled.emit()
        self._finish()


# Jobs without a Qt parent are kept alive here until they finish.
_JOBS: set[ThreadJob] = set()


def run_in_thread(
    fn: JobFn,
    on_done: Callable[[Any], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    cancel_token: CancelToken | None = None,
    on_progress: Callable[[float, str], None] | None = None,
    on_cancelled: Callable[[], None] | None = None,
    pool: QThreadPool | None = None,
) -> ThreadJob:
    """Run ``fn(token, progress)`` on a worker thread; callbacks run on the GUI thread.

    Args:
        fn: the job; ``token()`` is True once cancelled, ``progress(fraction 0..1, text)`` reports.
        on_done: called with ``fn``'s return value.
        on_error: called with the exception ``fn`` raised (e.g. a ``ClipError``; ``str(exc)`` is the
            message to show). The formatted traceback is on ``job.traceback``.
        cancel_token: share a token to cancel from elsewhere; a new one is made otherwise
            (``job.cancel()`` works either way).
        on_progress, on_cancelled: optional.
        pool: the thread pool (default: the global one).

    Returns the :class:`ThreadJob` (also has the signals) so the caller can cancel it.
    """
    token = cancel_token or CancelToken()
    job = ThreadJob(token)
    if on_done is not None:
        job.done.connect(on_done)
    if on_error is not None:
        job.failed.connect(on_error)
    if on_progress is not None:
        job.progress.connect(on_progress)
    if on_cancelled is not None:
        job.cancelled.connect(on_cancelled)
    _JOBS.add(job)
    _start(pool or QThreadPool.globalInstance(), _Task(fn, token, job._relay, 1))
    return job
