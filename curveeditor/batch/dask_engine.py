"""The Dask engine of :func:`curveeditor.batch.runner.run_batch` (``curveeditor-cli batch --scheduler``).

Imported only when a scheduler is asked for: it needs ``dask.distributed`` (the ``cluster`` extra,
``pip install 'curveeditor[cluster]'``); without it :mod:`curveeditor.batch.runner` turns the ImportError
into a one-line :class:`~curveeditor.batch.jobs.BatchError` saying so.

* ``tcp://HOST:PORT`` (or ``HOST:PORT``, ``tls://...``): an existing cluster (``dask scheduler`` and
  ``dask worker`` processes on a farm). Every worker must run the same curveeditor code as this client
  (checked: :func:`~curveeditor.batch.jobs.code_fingerprint` of the engine, I/O and batch sources), since
  outputs must match ``--jobs`` byte for byte.
* ``local`` / ``local:N``: a ``LocalCluster`` of ``N`` (default: CPU count) single-threaded worker
  processes on 127.0.0.1, closed at the end of the batch.

Each file is one task running :func:`curveeditor.batch.jobs.process_file`; at most ``2 x threads + 2``
tasks are queued at once, so shipped inputs never pile up in memory. Inputs reach the workers in one
of two ways (``ship``): ``shared`` (the task carries the absolute path: the farm mounts the same
storage at the same path) or ``ship`` (the client reads each file and sends its bytes with the task).
``auto`` asks every worker to stat every input and uses the shared path only when all of them see
each file with the client's size and modification time. Outputs always come back as bytes and are
written by the client (:func:`curveeditor.batch.jobs.write_output`), so workers need no access to the
output folder.

A worker that dies while running a file (crash, OOM kill, machine lost): the scheduler re-runs the
task on another worker, up to ``distributed.scheduler.allowed-failures`` deaths (Dask's default 3),
then gives up with ``KilledWorker`` (the file is reported failed). The scheduler's ``remove-worker``
events (topic ``all``) name the tasks the dead worker was processing or held; the file's report entry
gets ``attempts`` and one ``retries`` line per death.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
import uuid
import warnings
from collections import deque
from collections.abc import Callable
from typing import Any

import dask
from distributed import Client, LocalCluster, as_completed, get_worker
from distributed.scheduler import KilledWorker

from ..io import max_clip_bytes
from .jobs import BatchError, code_fingerprint, failed_fields, largest_first, process_file

__all__ = ["parse_scheduler", "DaskSession", "open_session"]

#: Seconds to reach the scheduler, and to wait for a first worker.
CONNECT_TIMEOUT = 10.0
WORKER_TIMEOUT = 60.0
#: Seconds to wait for the client and a local cluster to shut down.
CLOSE_TIMEOUT = 10.0

_LOCAL = re.compile(r"^local(?::(\d+))?$")
_ADDRESS = re.compile(r"^(?:(tcp|tls|ucx|inproc)://)?\[?[A-Za-z0-9_.:-]+\]?:\d+$")


def parse_scheduler(text: str) -> tuple[str, Any]:
    """``("local", N or None)`` for ``local[:N]``, ``("address", "tcp://HOST:PORT")`` for an address;
    :class:`BatchError` otherwise."""
    m = _LOCAL.match(text)
    if m:
        n = None if m.group(1) is None else int(m.group(1))
        if n is not None and n < 1:
            raise BatchError(f"scheduler {text!r}: local:N needs N >= 1 workers")
        return "local", n
    if _ADDRESS.match(text):
        return "address", text if "://" in text else "tcp://" + text
    raise BatchError(f"scheduler {text!r}: expected tcp://HOST:PORT, HOST:PORT, local or local:N")


def _dask_task(job: dict[str, Any]) -> dict[str, Any]:
    """A batch task: :func:`process_file` on the worker, plus the worker's address for the report."""
    fields = process_file(job)
    with contextlib.suppress(ValueError):
        fields["worker"] = get_worker().address
    return fields


#: How the client stats its inputs for the ``auto`` comparison (a seam for tests).
_client_stat = os.stat


def _worker_check(entries: list[tuple[str, int, int]]) -> dict[str, Any]:
    """Run on each worker: its code fingerprint, and the first input it does not see as the client
    does (``(absolute path, size, st_mtime_ns)``), or None when it sees them all."""
    unseen = None
    for path, size, mtime in entries:
        try:
            st = os.stat(path)
        except OSError:
            unseen = f"{path} is missing"
            break
        if st.st_size != size or st.st_mtime_ns != mtime:
            unseen = f"{path} differs (size or modification time)"
            break
    return {"fingerprint": code_fingerprint(), "unseen": unseen, "python": sys.version.split()[0]}


@contextlib.contextmanager
def _children_ignore_sigint():
    """Ignore SIGINT while a local cluster starts its worker processes: an ignored signal stays
    ignored across fork and exec (and Python then installs no KeyboardInterrupt handler), so Ctrl+C
    in a terminal, which reaches the whole process group, interrupts only this client, which cancels
    the tasks and closes the cluster in order instead of every worker dying with a traceback. (Blocking
    SIGINT with pthread_sigmask did not reach the workers: they still died of KeyboardInterrupt.) The
    price: a Ctrl+C during these ~1.5 s of start-up is ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class DaskSession:
    """A client connected to a cluster (started here for ``local[:N]``) that runs batch jobs."""

    def __init__(self, scheduler: str, log: Callable[[str], None]):
        self.scheduler = scheduler
        self.log = log
        self.kind, value = parse_scheduler(scheduler)
        self.cluster = None
        self.client = None
        try:
            if self.kind == "local":
                n = value or os.cpu_count() or 1
                with _children_ignore_sigint():
                    self.cluster = LocalCluster(
                        n_workers=n,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        # No dashboard; its HTTP routes (health, metrics) on a free port, not 8787.
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                        # Worker/scheduler chatter (a heartbeat lost while the cluster closes)
                        # is no user's business: task failures come back with the results.
                        silence_logs=logging.CRITICAL,
                    )
                self.address = self.cluster.scheduler_address
            else:
                self.address = value
            try:
                self.client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise BatchError(f"cannot reach the Dask scheduler at {self.address}: {exc}") from None
            try:
                self.client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
            except TimeoutError:
                raise BatchError(
                    f"the Dask scheduler at {self.address} has no workers (waited {WORKER_TIMEOUT:.0f} s): "
                    "start some with `dask worker ADDRESS`"
                ) from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close(timeout=CLOSE_TIMEOUT)
            self.client = None
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close(timeout=CLOSE_TIMEOUT)
            self.cluster = None

    # ------------------------------------------------------------------------------------------ run

    def _decide_inputs(self, todo, ship: str) -> tuple[str, str]:
        """``("shared" | "ship", reason)`` after checking the workers' code (and inputs for auto)."""
        if self.kind == "local":
            return ("ship", "as asked") if ship == "ship" else ("shared", "local cluster")
        entries = []
        if ship == "auto":
            for _, job in todo:
                path = os.path.abspath(job["input"])
                try:
                    st = _client_stat(path)
                except OSError:
                    continue  # the client cannot read it either: that file fails the same way anywhere
                entries.append((path, st.st_size, st.st_mtime_ns))
        try:
            checks = self.client.run(_worker_check, entries)
        except Exception as exc:
            raise BatchError(
                f"the workers at {self.address} cannot run curveeditor ({type(exc).__name__}: {exc}): "
                "install the same curveeditor on every worker"
            ) from None
        mine = code_fingerprint()
        for worker, info in sorted(checks.items()):
            if info["fingerprint"] != mine:
                raise BatchError(
                    f"worker {worker} runs other curveeditor code (fingerprint {info['fingerprint']}, "
                    f"this client {mine}): its outputs would differ; install the same version on every worker"
                )
        if ship != "auto":
            return ship, "as asked"
        for worker, info in sorted(checks.items()):
            if info["unseen"]:
                return "ship", f"worker {worker}: {info['unseen']}"
        return "shared", f"all {len(checks)} worker(s) see the {len(entries)} input(s)"

    def run(self, todo, finish, ship: str = "auto") -> dict[str, Any]:
        """Run ``todo`` (``[(index, job)]``) as tasks; ``finish(index, fields)`` as each completes."""
        client = self.client
        mode, reason = self._decide_inputs(todo, ship)
        nthreads = sum(client.nthreads().values()) or 1
        workers = len(client.nthreads())
        how = "read from the shared path" if mode == "shared" else "shipped to the workers"
        where = f"{workers} worker(s), {nthreads} thread(s) at {self.address}"
        self.log(f"dask: {where}; inputs {how} ({reason})")
        deaths: dict[str, list[tuple[str, bool]]] = {}  # task key -> [(worker, left gracefully)]

        def on_event(event) -> None:  # runs in the client's event-loop thread
            msg = event[1] if isinstance(event, tuple) and len(event) == 2 else event
            if isinstance(msg, dict) and msg.get("action") == "remove-worker":
                keys = set(msg.get("processing-tasks") or ()) | set(msg.get("lost-computed-tasks") or ())
                for key in keys:
                    deaths.setdefault(str(key), []).append(
                        (str(msg.get("worker")), bool(msg.get("expected")))
                    )

        client.subscribe_topic("all", on_event)
        allowed = dask.config.get("distributed.scheduler.allowed-failures", 3)
        token = uuid.uuid4().hex[:8]
        pending = deque(largest_first(todo))
        futures: dict[str, tuple[Any, int, dict[str, Any]]] = {}
        ac = as_completed(loop=client.loop)
        limit = 2 * nthreads + 2

        def submit_next() -> None:
            index, job = pending.popleft()
            task = self._task_job(job, mode)
            if task is None:  # the client cannot read it: fail here exactly as a worker would
                finish(index, process_file(job))
                return
            key = f"curveeditor-batch-{token}-{index}-{os.path.basename(job['input'])}"
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*[Ll]arge graph.*")
                fut = client.submit(_dask_task, task, key=key, pure=False)
            futures[key] = (fut, index, job)
            ac.add(fut)

        try:
            while pending and len(futures) < limit:
                submit_next()
            for fut in ac:
                _, index, job = futures.pop(fut.key)
                try:
                    fields = fut.result()
                except KilledWorker:
                    n = len(deaths.get(str(fut.key), [])) or allowed + 1
                    fields = failed_fields(
                        job,
                        f"{job['input']}: {n} worker(s) died while running this file; Dask gave up "
                        f"(distributed.scheduler.allowed-failures = {allowed})",
                    )
                except Exception as exc:
                    fields = failed_fields(job, f"{job['input']}: worker failed: {type(exc).__name__}: {exc}")
                fut.release()
                dead = deaths.pop(str(fut.key), [])
                if dead:
                    fields["attempts"] = len(dead) + (1 if "worker" in fields else 0)
                    fields["retries"] = [
                        f"worker {w} {'left the cluster' if left else 'died'} before finishing this file "
                        f"(attempt {k + 1}); Dask re-ran it"
                        + (f" on {fields['worker']}" if k == len(dead) - 1 and "worker" in fields else "")
                        for k, (w, left) in enumerate(dead)
                    ]
                finish(index, fields)
                while pending and len(futures) < limit:
                    submit_next()
        except BaseException:
            # Ctrl+C: drop the queued and running tasks on the cluster; nothing of theirs is written.
            with contextlib.suppress(Exception):
                client.cancel([f for f, _, _ in futures.values()], force=True)
            raise
        finally:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic("all")
        return {"kind": "dask", "workers": workers, "scheduler": self.address, "inputs": mode}

    @staticmethod
    def _task_job(job: dict[str, Any], mode: str) -> dict[str, Any] | None:
        if mode == "shared":
            return dict(job, read_path=os.path.abspath(job["input"]))
        try:
            if os.path.getsize(job["input"]) > max_clip_bytes():
                return None  # refused by the size check; no point sending it
            with open(job["input"], "rb") as f:
                return dict(job, data=f.read())
        except OSError:
            return None


@contextlib.contextmanager
def open_session(scheduler: str, log: Callable[[str], None]):
    """A :class:`DaskSession` closed on exit (the local cluster's processes are gone then)."""
    session = DaskSession(scheduler, log)
    try:
        yield session
    finally:
        session.close()
