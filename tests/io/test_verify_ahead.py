"""The write check started while the file renders (io.verify._CheckAhead): its figures are used only
when the file read back holds exactly the numbers it compared, and are then the same figures."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
import pytest

from curveeditor.io import ClipWriteError, read_clip, verify, write_checked
from tests.io.test_frame_samples import wavy_rows, write_bvh


@pytest.fixture(autouse=True)
def always_ahead(monkeypatch):
    monkeypatch.setattr(verify, "CHECK_AHEAD", True)


@pytest.fixture
def bvh(tmp_path):
    p = tmp_path / "wavy.bvh"
    write_bvh(p, wavy_rows(120))
    return read_clip(p)


def _spy(monkeypatch):
    real = verify.check_written
    threads = []

    def spy(*a, **k):
        threads.append(threading.current_thread().name)
        return real(*a, **k)

    monkeypatch.setattr(verify, "check_written", spy)
    return threads


def test_the_figures_checked_ahead_are_the_read_back_figures(bvh, tmp_path, monkeypatch):
    threads = _spy(monkeypatch)
    ahead = write_checked(bvh, tmp_path / "a.anim")
    assert threads and set(threads) == {"write-check-ahead"}  # the thread's figures were used
    monkeypatch.setattr(verify, "CHECK_AHEAD", False)
    threads.clear()
    after = write_checked(bvh, tmp_path / "b.anim")
    assert threads == ["MainThread"]
    assert (tmp_path / "a.anim").read_bytes() == (tmp_path / "b.anim").read_bytes()
    assert ahead.as_dict()["tracks"] == after.as_dict()["tracks"]
    assert ahead.tracks[0].writer.max_error > 0  # real figures (Linear ZXY between frames)


def test_a_file_that_reads_back_otherwise_is_compared_as_read(bvh, tmp_path, monkeypatch):
    """The thread compared what the writer meant to write; the file read back holds another value at
    one key (a writer or reader fault): the figures of the file as read are the ones that count."""
    threads = _spy(monkeypatch)
    real = verify._read_back

    def damaged(tmp, target, clip, order=None):
        back = real(tmp, target, clip, order)
        t = back.tracks[1]
        value = t.curve.value.copy()
        value[60, 0] += 4.0
        return back.with_track(replace(t, curve=t.curve.with_keys(value=value)))

    monkeypatch.setattr(verify, "_read_back", damaged)
    out = tmp_path / "out.anim"
    miss = r"track 'Hips/Spine' at 2\.000 s plays [0-9.]+ deg from the clip to write"
    with pytest.raises(ClipWriteError, match=miss):
        write_checked(bvh, out)
    assert not out.exists()
    assert threads.count("MainThread") == 1  # compared again on what was read back


def test_a_float32_difference_alone_is_enough_to_compare_again(bvh, tmp_path, monkeypatch):
    """Bit for bit: one slope one float32 step off is not what the thread compared."""
    threads = _spy(monkeypatch)
    real = verify._read_back

    def nudged(tmp, target, clip, order=None):
        back = real(tmp, target, clip, order)
        t = back.tracks[0]
        ins = t.curve.in_slope.copy()
        ins[5, 2] = np.nextafter(np.float32(ins[5, 2]), np.float32(np.inf))
        return back.with_track(replace(t, curve=t.curve.with_keys(in_slope=ins.astype(np.float64))))

    monkeypatch.setattr(verify, "_read_back", nudged)
    write_checked(bvh, tmp_path / "out.anim")
    assert threads.count("MainThread") == 1


def test_a_failing_thread_leaves_the_check_to_the_main_thread(bvh, tmp_path, monkeypatch):
    real = verify.check_written

    def flaky(*a, **k):
        if threading.current_thread().name == "write-check-ahead":
            raise MemoryError("simulated")
        return real(*a, **k)

    monkeypatch.setattr(verify, "check_written", flaky)
    check = write_checked(bvh, tmp_path / "out.anim")
    assert len(check.tracks) == 2 and check.failure is None


def test_by_default_the_thread_runs_only_when_a_core_looks_free(bvh, tmp_path, monkeypatch):
    threads = _spy(monkeypatch)
    monkeypatch.setattr(verify, "CHECK_AHEAD", None)
    monkeypatch.setattr(verify.os, "getloadavg", lambda: (1.7, 1.0, 1.0))
    monkeypatch.setattr(verify.os, "sched_getaffinity", lambda pid: {0, 1})
    write_checked(bvh, tmp_path / "busy.anim")
    assert threads == ["MainThread"]
    threads.clear()
    monkeypatch.setattr(verify.os, "getloadavg", lambda: (0.4, 1.0, 1.0))
    write_checked(bvh, tmp_path / "quiet.anim")
    assert set(threads) == {"write-check-ahead"}
    monkeypatch.setattr(verify.os, "sched_getaffinity", lambda pid: {0})  # one CPU: never
    threads.clear()
    write_checked(bvh, tmp_path / "one.anim")
    assert threads == ["MainThread"]
