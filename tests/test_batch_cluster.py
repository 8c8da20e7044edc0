"""Batches on a real Dask cluster: a ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1.

Same outputs byte for byte and the same report as ``--jobs 1`` / ``--jobs 2``, shared and shipped
inputs, a worker killed mid-file (the file is re-run elsewhere and the report says so), Ctrl+C, the
``--json`` summary, ``--scheduler local:N``. Every wait is bounded; the fixture kills what it started.
CI installs the ``cluster`` extra (packaging/bootstrap.sh test), so there the tests never skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

if os.environ.get("CI"):
    import distributed  # noqa: F401  (CI must have the cluster extra: fail, never skip)
else:
    pytest.importorskip("distributed")

from distributed import Client  # noqa: E402

from curveeditor.batch.dask_engine import parse_scheduler  # noqa: E402
from curveeditor.batch.runner import BatchError, run_batch  # noqa: E402
from curveeditor.engine.recipe import Recipe  # noqa: E402
from tests.test_batch import SUMMARY_SCHEMA  # noqa: E402  (the one spelled-out --json schema)

REPO = Path(__file__).resolve().parents[1]
RECIPE = Recipe.of({"op": "unwrap"}, {"op": "reduce", "max_error": 0.05})
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(":"))


def _quiet(*_a) -> None:
    pass


def clip_csv(seed: int, tracks: int = 2, keys: int = 40) -> str:
    """Smooth motion stored wrapped (the unwrap step has work), ``tracks`` x ``keys`` at 30 fps."""
    rng = np.random.default_rng(seed)
    t = np.arange(keys) / 30.0
    rows = ["path,time,x,y,z"]
    for k in range(tracks):
        yaw = rng.uniform(300, 600) * t + 20 * np.sin(3 * t + seed + k)
        yaw = (yaw + 180.0) % 360.0 - 180.0
        x = 10 * np.sin(t * (2 + seed))
        rows += [
            f"Hips/B{k},{ti!r},{xi!r},{yi!r},0.0"
            for ti, xi, yi in zip(t.tolist(), x.tolist(), yaw.tolist(), strict=True)
        ]
    return "\n".join(rows) + "\n"


def make_inputs(folder: Path, n: int = 4, big: bool = False) -> Path:
    folder.mkdir()
    for i in range(n):
        (folder / f"clip{i}.csv").write_text(clip_csv(i))
    bad = clip_csv(9).splitlines()
    bad[5] = bad[5].rsplit(",", 2)[0] + ",nan,0.0"
    (folder / "bad.csv").write_text("\n".join(bad) + "\n")
    if big:  # a few seconds of work: a worker can be killed while it runs. 6 x 1,000 keys took
        # 0.5 s once the reader, reduce and writer got faster: shorter than a worker's start-up, so
        # Ctrl+C after the first small clip found it already written; 12 x 4,000 take about 3 s.
        (folder / "big.csv").write_text(clip_csv(3, tracks=12, keys=4000))
    return folder


def hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def entries(report, drop=()) -> list[dict]:
    """Report entries without the output folder (and without ``drop`` fields)."""
    out = []
    for f in report.as_dict()["files"]:
        f = {k: v for k, v in f.items() if k not in drop}
        f["output"] = None if f["output"] is None else Path(f["output"]).name
        out.append(f)
    return out


def _wait(predicate, timeout: float, what: str, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _stop(procs, kill: bool = False) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill() if kill else p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


class Cluster:
    def __init__(self, address: str, client: Client, workers: dict[str, subprocess.Popen]):
        self.address = address
        self.client = client
        self.workers = workers  # name -> process

    def addresses(self) -> dict[str, str]:
        """worker name -> address."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        return {w["name"]: addr for addr, w in info.items()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``dask scheduler`` + two single-threaded ``dask worker`` processes (no nanny, so a killed
    worker stays dead) on 127.0.0.1, random ports."""
    tmp = tmp_path_factory.mktemp("dask")
    log = open(tmp / "cluster.log", "wb")  # noqa: SIM115 - closed in the finally
    procs: list[subprocess.Popen] = []
    client = None
    common = dict(env=ENV, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp)
    try:
        sched_file = tmp / "scheduler.json"
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0"]
                # --idle-timeout, and the workers' --death-timeout: should this test process be killed
                # before its teardown, the cluster still goes away by itself.
                + ["--no-dashboard", "--scheduler-file", str(sched_file), "--idle-timeout", "300s"],
                **common,
            )
        )

        def address():
            try:
                return json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                return None

        addr = _wait(address, 30, "the scheduler")
        assert addr.startswith("tcp://127.0.0.1:")
        workers = {}
        for name in ("w0", "w1"):
            workers[name] = subprocess.Popen(
                [sys.executable, "-m", "dask", "worker", addr, "--host", "127.0.0.1", "--nthreads", "1"]
                + ["--no-nanny", "--no-dashboard", "--name", name, "--death-timeout", "60"],
                **common,
            )
            procs.append(workers[name])
        client = Client(addr, timeout=20, set_as_default=False)
        client.wait_for_workers(2, timeout=60)
        yield Cluster(addr, client, workers)
    finally:
        if client is not None:
            client.close(timeout=10)
        _stop(procs[1:], kill=True)  # workers hold nothing worth a graceful close (which takes seconds)
        _stop(procs[:1])
        log.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Inputs (4 clips and a bad file) and their ``--jobs 1`` report and output hashes."""
    tmp = tmp_path_factory.mktemp("ref")
    src = make_inputs(tmp / "in")
    rep = run_batch([str(src)], tmp / "out", RECIPE, jobs=1, progress=_quiet)
    assert [f.status for f in rep.files] == ["failed", "ok", "ok", "ok", "ok"]
    return src, rep, hashes(tmp / "out")


@pytest.fixture(scope="module")
def with_big(tmp_path_factory):
    """The same inputs plus big.csv (about a second of work, the largest, so it is submitted first)."""
    return make_inputs(tmp_path_factory.mktemp("big") / "in", big=True)


@pytest.fixture(scope="module")
def big_reference(with_big, tmp_path_factory):
    """The ``--jobs 1`` report and output hashes of ``with_big``."""
    out = tmp_path_factory.mktemp("bigref") / "out"
    return run_batch([str(with_big)], out, RECIPE, progress=_quiet), hashes(out)


def test_parse_scheduler():
    assert parse_scheduler("local") == ("local", None)
    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("tcp://10.0.0.5:8786") == ("address", "tcp://10.0.0.5:8786")
    assert parse_scheduler("farm-01.studio:8786") == ("address", "tcp://farm-01.studio:8786")
    for bad in ("local:0", "nonsense", "tcp://host", ""):
        with pytest.raises(BatchError, match="scheduler"):
            parse_scheduler(bad)


def test_cluster_gives_the_same_outputs_and_report_as_jobs_1_and_2(cluster, reference, tmp_path):
    src, ref, ref_hashes = reference
    notes = []
    r2 = run_batch([str(src)], tmp_path / "j2", RECIPE, jobs=2, progress=_quiet)
    shared = run_batch(
        [str(src)], tmp_path / "d1", RECIPE, scheduler=cluster.address, progress=_quiet, log=notes.append
    )
    shipped = run_batch(
        [str(src)],
        tmp_path / "d2",
        RECIPE,
        scheduler=cluster.address,
        ship="ship",
        progress=_quiet,
        log=notes.append,
    )
    for rep, out in ((r2, "j2"), (shared, "d1"), (shipped, "d2")):
        assert hashes(tmp_path / out) == ref_hashes, out  # byte for byte
        assert entries(rep) == entries(ref), out  # the same report, bad file included
        assert rep.exit_status == 2 and rep.failed == 1
    assert shared.run["engine"] == {
        "kind": "dask",
        "workers": 2,
        "scheduler": cluster.address,
        "inputs": "shared",
    }
    assert shipped.run["engine"]["inputs"] == "ship"
    # Same machine: every worker sees every input, so auto reads the shared path.
    assert "inputs read from the shared path (all 2 worker(s) see the 5 input(s))" in notes[0]
    assert "inputs shipped to the workers (as asked)" in notes[1]
    assert shared.files[0].error == ref.files[0].error == f"{src / 'bad.csv'}:6: NaN in column 'y'"


def test_auto_ships_when_a_worker_does_not_see_an_input(cluster, tmp_path, monkeypatch):
    """auto compares each worker's stat of every input with the client's: a file the workers see
    with another modification time (another machine's copy) makes the batch ship the bytes."""
    from types import SimpleNamespace

    import curveeditor.batch.dask_engine as bd

    src = make_inputs(tmp_path / "in", n=2)

    def client_stat(path):  # the client sees clip1.csv one second newer than the workers do
        st = os.stat(path)
        bump = 10**9 if str(path).endswith("clip1.csv") else 0
        return SimpleNamespace(st_size=st.st_size, st_mtime_ns=st.st_mtime_ns + bump)

    notes = []
    monkeypatch.setattr(bd, "_client_stat", client_stat)
    rep = run_batch(
        [str(src)], tmp_path / "o", RECIPE, scheduler=cluster.address, progress=_quiet, log=notes.append
    )
    assert rep.run["engine"]["inputs"] == "ship"
    assert "clip1.csv differs (size or modification time)" in notes[0]
    monkeypatch.undo()
    ref = run_batch([str(src)], tmp_path / "r", RECIPE, progress=_quiet)
    assert hashes(tmp_path / "o") == hashes(tmp_path / "r") and entries(rep) == entries(ref)


def test_workers_with_other_code_are_refused(cluster, tmp_path, monkeypatch):
    import curveeditor.batch.dask_engine as bd

    src = make_inputs(tmp_path / "in", n=1)
    monkeypatch.setattr(bd, "code_fingerprint", lambda: "0123456789ab")
    with pytest.raises(BatchError, match="runs other curveeditor code .* this client 0123456789ab"):
        run_batch([str(src)], tmp_path / "o", RECIPE, scheduler=cluster.address, progress=_quiet, log=_quiet)
    assert not (tmp_path / "o").exists() or not os.listdir(tmp_path / "o")


def test_json_summary_schema_on_the_cluster(cluster, reference, tmp_path, capsys):
    from curveeditor.cli import main

    src, ref, ref_hashes = reference
    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    out, rep = tmp_path / "out", tmp_path / "rep.json"
    argv = ["batch", str(src), "-o", str(out), "--recipe", str(recipe)]
    assert main(argv + ["--scheduler", cluster.address, "--json", "--report", str(rep)]) == 2
    summary = json.loads(capsys.readouterr().out)  # stdout is the JSON and nothing else
    assert list(summary) == list(SUMMARY_SCHEMA)
    for key, kind in SUMMARY_SCHEMA.items():
        assert isinstance(summary[key], kind), key
    assert summary["version"] == 1 and summary["status"] == "failed" and summary["exit_status"] == 2
    assert (summary["files"], summary["ok"], summary["failed"], summary["cancelled"]) == (5, 4, 1, 0)
    assert summary["keys_before"] == sum(f.keys_before for f in ref.files if f.ok)
    assert summary["keys_after"] == sum(f.keys_after for f in ref.files if f.ok)
    assert summary["engine"] == {
        "kind": "dask",
        "workers": 2,
        "scheduler": cluster.address,
        "inputs": "shared",
    }
    assert summary["out_dir"] == str(out) and summary["report"] == str(rep)
    assert sorted(Path(p).name for p in summary["outputs"]) == sorted(ref_hashes)
    assert summary["failures"] == [{"input": str(src / "bad.csv"), "error": ref.files[0].error}]
    assert summary["retries"] == [] and summary["retried"] == 0
    assert summary["seconds"] > 0 and summary["files_per_s"] == pytest.approx(4 / summary["seconds"])
    assert hashes(out) == ref_hashes
    written = json.loads(rep.read_text())["files"]
    assert [dict(f, output=f["output"] and Path(f["output"]).name) for f in written] == entries(ref)


def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _interrupt_batch(src: Path, tmp_path: Path, extra: list[str], group: bool = True):
    """Run a CLI batch over ``src`` and send SIGINT once its first file is done (the small clips
    finish while big.csv, submitted first, still runs). ``group``: to the whole process group, as a
    terminal's Ctrl+C does; else to the CLI process only. Returns (returncode, stderr, out folder,
    report path, the processes that were under the CLI)."""
    recipe = tmp_path / "r.json"
    RECIPE.save(recipe)
    out, rep = tmp_path / "out", tmp_path / "rep.json"
    argv = [
        sys.executable,
        "-m",
        "curveeditor.cli",
        "batch",
        str(src),
        "-o",
        str(out),
        "--recipe",
        str(recipe),
    ]
    argv += ["--report", str(rep), "--progress", "lines", *extra]
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=ENV, start_new_session=True)
        try:
            _wait(lambda: b"clip" in err_path.read_bytes() and b" ok" in err_path.read_bytes(), 90, "a file")
            children = _descendants(proc.pid)
            if group:
                os.killpg(proc.pid, signal.SIGINT)
            else:
                proc.send_signal(signal.SIGINT)
            proc.wait(60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    return proc.returncode, err_path.read_text(), out, rep, children


def _check_cancelled(ref_hashes, rc, err, out, rep, children):
    import psutil

    assert rc == 130, err
    assert "curveeditor-cli: cancelled: " in err and "Traceback" not in err, err
    written = hashes(out)
    assert 0 < len(written) and "big.csv" not in written, err  # interrupted mid-batch
    assert not [n for n in os.listdir(out) if n.startswith(".") or n.endswith(".tmp")]  # no temp files
    for name, digest in written.items():  # whatever was written is whole and right
        assert digest == ref_hashes[name], name
    report = json.loads(rep.read_text())
    assert report["exit_status"] == 130
    status = {Path(f["input"]).name: f["status"] for f in report["files"]}
    assert set(written) == {n for n, s in status.items() if s == "ok"}
    assert status["big.csv"] == "cancelled" and set(status.values()) <= {"ok", "failed", "cancelled"}
    gone, alive = psutil.wait_procs(children, timeout=20)
    assert not alive, f"processes outlived the batch: {alive}"


def test_ctrl_c_on_a_local_cluster_cancels_cleanly(reference, with_big, tmp_path):
    _, _, ref_hashes = reference
    _check_cancelled(ref_hashes, *_interrupt_batch(with_big, tmp_path, ["--scheduler", "local:2"]))


def test_ctrl_c_with_jobs_2_cancels_cleanly(reference, with_big, tmp_path):
    _, _, ref_hashes = reference
    _check_cancelled(ref_hashes, *_interrupt_batch(with_big, tmp_path, ["--jobs", "2"]))


def test_ctrl_c_on_the_cluster_client_cancels_its_tasks(cluster, reference, with_big, tmp_path):
    """On a farm only the client gets Ctrl+C: its tasks leave the cluster, the workers stay up."""
    _, _, ref_hashes = reference
    _check_cancelled(
        ref_hashes, *_interrupt_batch(with_big, tmp_path, ["--scheduler", cluster.address], group=False)
    )
    _wait(
        lambda: not any(cluster.client.processing().values()), 20, "the cluster to drop the cancelled tasks"
    )
    assert len(cluster.client.nthreads()) == 2


def test_local_cluster_matches_jobs_1(reference, tmp_path):
    src, ref, ref_hashes = reference
    # One worker: the Ctrl+C test above runs local:2; each worker's first file imports the engine.
    rep = run_batch([str(src)], tmp_path / "o", RECIPE, scheduler="local:1", progress=_quiet, log=_quiet)
    assert hashes(tmp_path / "o") == ref_hashes and entries(rep) == entries(ref)
    assert rep.run["engine"]["kind"] == "dask" and rep.run["engine"]["workers"] == 1


def test_a_worker_killed_mid_file_gets_the_file_rerun_elsewhere(cluster, with_big, big_reference, tmp_path):
    """Runs last of the cluster tests: it kills one of the two workers."""
    src = with_big
    ref, ref_hashes = big_reference
    lines = []
    box = {}

    def run():
        box["rep"] = run_batch(
            [str(src)],
            tmp_path / "o",
            RECIPE,
            scheduler=cluster.address,
            progress=lambda d, n, r: lines.append((r.input, r.status, r.attempts)),
            log=_quiet,
        )

    th = threading.Thread(target=run, daemon=True)
    th.start()

    def big_running():  # the worker whose processing set holds big.csv (it is submitted first)
        for addr, keys in cluster.client.processing().items():
            if any(str(k).endswith("-big.csv") for k in keys):
                return addr
        return None

    victim = _wait(big_running, 60, "big.csv to start on a worker", step=0.01)
    time.sleep(0.1)  # well inside its second of work
    name = {a: n for n, a in cluster.addresses().items()}[victim]
    cluster.workers[name].kill()
    cluster.workers[name].wait(10)
    th.join(120)
    assert not th.is_alive(), "the batch did not finish after the worker died"
    rep = box["rep"]

    big = next(f for f in rep.files if f.input.endswith("big.csv"))
    assert big.status == "ok" and big.attempts == 2
    assert big.retries[0].startswith(
        f"worker {victim} died before finishing this file (attempt 1); Dask re-ran it on "
    )
    assert victim not in big.retries[0].split(" on ")[-1]
    assert rep.retried >= 1 and rep.summary()["retries"][0]["attempts"] >= 2
    assert hashes(tmp_path / "o") == ref_hashes  # same bytes as --jobs 1
    assert entries(rep, drop=("attempts", "retries")) == entries(ref, drop=("attempts", "retries"))
    assert (big.input, "ok", 2) in lines


def test_a_pool_worker_killed_mid_file_gets_the_file_rerun(with_big, big_reference, tmp_path):
    """--jobs N too: a dead worker process breaks Python's pool; the files it had started run again
    in a new pool (the others simply go on) and the report says which were re-run."""
    import psutil

    src = with_big
    ref, ref_hashes = big_reference
    done = []
    box = {}

    def run():
        box["rep"] = run_batch(
            [str(src)], tmp_path / "o", RECIPE, jobs=2, progress=lambda d, n, r: done.append(r)
        )

    th = threading.Thread(target=run, daemon=True)
    th.start()

    def pool_workers():  # children of the forkserver, once a small clip is done (big.csv still runs)
        if not any(r.ok for r in done):
            return None
        servers = [p for p in psutil.Process().children() if "forkserver" in " ".join(p.cmdline())]
        return [w for s in servers for w in s.children()] or None

    workers = _wait(pool_workers, 60, "a finished file and the pool's workers", step=0.01)
    for w in workers:  # both: whichever runs big.csv dies mid-file
        w.kill()
    th.join(120)
    assert not th.is_alive(), "the batch did not finish after its workers died"
    rep = box["rep"]
    big = next(f for f in rep.files if f.input.endswith("big.csv"))
    assert big.status == "ok" and big.attempts == 2
    assert big.retries == [
        "a worker process died before finishing this file (attempt 1); re-run in a new worker"
    ]
    assert hashes(tmp_path / "o") == ref_hashes
    assert entries(rep, drop=("attempts", "retries")) == entries(ref, drop=("attempts", "retries"))
    assert all(f.attempts == 1 for f in rep.files if f.ok and f in done[:1])
