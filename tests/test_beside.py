"""curveeditor.io.beside: work computed in a forked child, its result or a clean failure."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from curveeditor.io.beside import Beside

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork only")


def test_the_result_comes_from_another_process():
    parent = os.getpid()
    job = Beside(lambda: (os.getpid(), np.arange(5) * 2.0))
    ok, (pid, values) = job.result()
    assert ok and pid != parent and not job.running
    np.testing.assert_array_equal(values, [0, 2, 4, 6, 8])
    assert job.peak_rss > 0 and job.cpu >= 0.0
    again = job.result()  # asked again: the same answer, no second wait
    assert again[0] and again[1][0] == pid


def test_a_large_result_passes_the_pipe():
    job = Beside(lambda: np.ones(3_000_000))  # 24 MB: many pipe buffers
    ok, value = job.result()
    assert ok and value.shape == (3_000_000,) and value.sum() == 3_000_000


@pytest.mark.parametrize(
    "fn",
    [
        lambda: 1 / 0,  # an exception
        lambda: os.kill(os.getpid(), signal.SIGKILL),  # killed
        lambda: lambda: None,  # a result that does not pickle
        lambda: os._exit(3),  # exits early
    ],
)
def test_any_failure_of_the_child_is_a_clean_no(fn):
    assert Beside(fn).result() == (False, None)


def test_close_ends_a_running_child():
    job = Beside(lambda: __import__("time").sleep(30))
    pid = job.pid
    job.close()
    assert not job.running and job.result() == (False, None)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: no such process


def test_the_child_computes_under_the_callers_numpy_error_state():
    with np.errstate(divide="raise"):
        job = Beside(lambda: np.float64(1.0) / np.float64(0.0))
    assert job.result() == (False, None)  # FloatingPointError in the child
    assert Beside(lambda: float(np.float64(1.0) / np.float64(0.0))).result() == (True, np.inf)


def test_convert_prints_the_reduce_hint_when_its_child_fails(tmp_path, monkeypatch, capsys):
    """The hint computed beside the write, or here when that child failed: the same line."""
    from curveeditor import cli
    from curveeditor.io import beside
    from tests.io.test_frame_samples import wavy_rows, write_bvh

    src = tmp_path / "wavy.bvh"
    write_bvh(src, wavy_rows(120))
    lines = []
    for failing in (False, True):
        monkeypatch.setattr(beside, "may_fork", lambda: True)
        if failing:
            monkeypatch.setattr(cli, "_reduce_hint", _fails_in_child(cli._reduce_hint))
        assert cli.main(["convert", str(src), str(tmp_path / f"out{failing}.anim")]) == 0
        out = capsys.readouterr().out
        lines.append([ln for ln in out.splitlines() if ln.startswith("dense clip:")])
    assert lines[0] == lines[1] and len(lines[0]) == 1 and "would keep" in lines[0][0]


def _fails_in_child(real):
    parent = os.getpid()

    def hint(*a, **k):
        if os.getpid() != parent:
            raise MemoryError("simulated")
        return real(*a, **k)

    return hint


def test_fork_map_shares_the_items_with_a_child():
    """The caller and a forked child each take the next item not yet taken (issue 26: clean's reduce
    chunks on the second core): uneven items end together; the results come back in order."""
    import time

    from curveeditor.io.beside import fork_map, may_fork

    parent = os.getpid()

    def fn(x):
        if x == 0:
            time.sleep(0.3)  # one long item: the other side takes all the rest meanwhile
        return x * x, os.getpid()

    out = fork_map(fn, range(6))
    assert [v for v, _ in out] == [0, 1, 4, 9, 16, 25]
    pids = [p for _, p in out]
    if may_fork():
        assert parent in pids and len(set(pids)) == 2  # both sides worked
        assert pids[0] not in pids[1:]  # the side on the long item (either) took no other


def test_a_fork_queue_is_joined_by_the_caller_when_it_is_free():
    """The child starts on the items at once; the caller, busy meanwhile (the write check's render and
    read-back), takes what is left when it asks for the results (issue 26)."""
    import time

    from curveeditor.io.beside import ForkQueue

    parent = os.getpid()

    def fn(x):
        time.sleep(0.05)
        return x + 10, os.getpid()

    queue = ForkQueue(fn, range(40), fork=True)
    time.sleep(0.5)  # the caller's own work: the child takes items meanwhile
    out = queue.results()
    assert [v for v, _ in out] == list(range(10, 50))
    pids = [p for _, p in out]
    assert pids[0] != parent and pids.count(parent) < 30  # the child began, alone
    assert parent in pids  # the caller took its share once free
    assert not queue.child.running


def test_a_closed_fork_queue_leaves_no_child():
    import time

    from curveeditor.io.beside import ForkQueue

    queue = ForkQueue(lambda x: time.sleep(30), range(4), fork=True)
    queue.close()
    assert not queue.child.running


def test_fork_map_makes_up_for_a_failed_child():
    from curveeditor.io.beside import fork_map

    parent = os.getpid()

    def fn(x):
        if os.getpid() != parent:
            os._exit(3)  # the child dies without a result
        return x + 1

    assert fork_map(fn, [1, 2, 3, 4]) == [2, 3, 4, 5]


def _stream_item(item):
    import time

    time.sleep(0.02)
    return item[0] * item[1], os.getpid(), np.arange(50_000)  # (a result larger than a pipe holds)


def test_a_fork_stream_computes_items_as_they_are_put():
    """The child computes each item as the caller puts it, while the caller works on; the caller
    takes what is still queued when it asks for the results, which come back in order (issue 26:
    the key blocks of an .anim read back in parts, parsed beside the scan)."""
    import struct
    import time

    from curveeditor.io.beside import ForkStream

    parent = os.getpid()
    stream = ForkStream(_stream_item, struct.Struct("<qq"), fork=True)
    for i in range(30):
        stream.put((i, 3))
        time.sleep(0.01)  # the caller's own work between items
    out = stream.results()
    assert [v for v, _, _ in out] == [3 * i for i in range(30)]
    pids = [p for _, p, _ in out]
    assert pids[0] != parent and parent in pids  # the child began; the caller took its share
    assert all(np.array_equal(a, np.arange(50_000)) for _, _, a in out)
    assert stream.pid is None and stream._spill is None  # reaped, the spill file closed


def test_a_fork_stream_makes_up_for_a_failed_child_and_a_full_queue():
    import struct

    from curveeditor.io.beside import ForkStream

    parent = os.getpid()

    def fn(item):
        if os.getpid() != parent:
            os._exit(3)  # the child dies on the first item it takes, without its result
        return item[0] + 1

    stream = ForkStream(fn, struct.Struct("<q"), fork=True)
    for i in range(3000):  # (more records than the queue's pipe holds: the rest are the caller's)
        stream.put((i,))
    assert stream.results() == list(range(1, 3001))
    assert ForkStream(fn, struct.Struct("<q"), fork=False).pid is None


def test_a_fork_stream_applies_loaded_to_the_childs_results_in_order():
    """``loaded`` sees each result the child sent, in the order it sent them, and what it returns is
    the result kept; the caller's own results are its ``fn``'s, untouched."""
    import struct
    import time

    from curveeditor.io.beside import ForkStream

    parent = os.getpid()
    seen = []

    def loaded(result):
        seen.append(result[0])
        return ("loaded", *result)

    stream = ForkStream(_stream_item, struct.Struct("<qq"), fork=True, loaded=loaded)
    for i in range(30):
        stream.put((i, 3))
        time.sleep(0.01)
    out = stream.results()
    child = [r for r in out if r[0] == "loaded"]
    assert child and seen == [r[1] for r in child] == sorted(seen)
    assert all(r[2] != parent for r in child)
    assert all(r[1] == parent for r in out if r[0] != "loaded")  # (the caller's: (value, pid, array))


def test_a_closed_fork_stream_leaves_no_child():
    import struct
    import time

    from curveeditor.io.beside import ForkStream

    stream = ForkStream(lambda item: time.sleep(30), struct.Struct("<q"), fork=True)
    stream.put((1,))
    pid = stream.pid
    stream.close()
    assert stream.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)


def test_reduce_tracks_on_two_cores_gives_the_serial_result():
    from curveeditor.engine.reduce import reduce_tracks
    from curveeditor.io.beside import fork_map
    from tests.engine.test_reduce_long import mocap_track

    tracks = [mocap_track(f"J{i}", 20_000, seed=i) for i in range(2)]
    serial = reduce_tracks(tracks, 0.5)
    forked = reduce_tracks(tracks, 0.5, map_chunks=fork_map)
    for a, b in zip(serial, forked, strict=True):
        assert a.curve.equals(b.curve)


def test_a_fork_stream_without_a_spill_file_is_computed_by_the_caller(monkeypatch):
    """No room for the spill file (or no descriptors, no fork): no child, and no error either."""
    import struct
    import tempfile

    from curveeditor.io.beside import ForkStream

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    stream = ForkStream(lambda item: item[0] * 2, struct.Struct("<q"), fork=True)
    assert stream.pid is None
    for i in range(5):
        stream.put((i,))
    assert stream.results() == [0, 2, 4, 6, 8]
