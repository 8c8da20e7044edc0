"""The write check started while the file renders (io.check_ahead.CheckAhead), in a forked child or a
thread: its figures are used only when the file read back holds exactly the numbers it compared, and
are then the same figures."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import replace

import numpy as np
import pytest

from curveeditor.io import ClipWriteError, check_ahead, read_clip, verify, write_checked
from tests.io.test_frame_samples import wavy_rows, write_bvh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(params=["process", "thread"], autouse=True)
def mode(request, monkeypatch):
    """Every test in both places; always ahead (not only when the load average leaves a core)."""
    monkeypatch.setattr(check_ahead, "CHECK_AHEAD", True)
    monkeypatch.setattr(check_ahead, "AHEAD_IN_PROCESS", request.param == "process")
    return request.param


@pytest.fixture
def bvh(tmp_path):
    p = tmp_path / "wavy.bvh"
    write_bvh(p, wavy_rows(120))
    return read_clip(p)


class _Calls(list):
    """Thread names of the whole-clip comparisons (``check_written`` after the read-back); ``ahead``:
    those of the per-track comparisons begun ahead (``check_one_track``). A child's calls are not
    recorded here (the child appends to its own copy of the lists)."""

    ahead: list


def _spy(monkeypatch) -> _Calls:
    """Where the comparisons run, as seen from this process (:class:`_Calls`)."""
    real_one, real = verify.check_one_track, verify.check_written
    calls = _Calls()
    calls.ahead = []
    inside = threading.local()

    def one(*a, **k):
        calls.ahead.append(threading.current_thread().name)
        inside.on = True
        try:
            return real_one(*a, **k)
        finally:
            inside.on = False

    def spy(*a, **k):
        if not getattr(inside, "on", False):
            calls.append(threading.current_thread().name)
        return real(*a, **k)

    monkeypatch.setattr(verify, "check_one_track", one)
    monkeypatch.setattr(verify, "check_written", spy)
    return calls


def _assert_used_ahead(calls: _Calls, mode: str) -> None:
    """Every comparison ran ahead and its figures were used: nothing compared after the read-back; in
    a thread, every track there; with a child, the caller's share of the queue only (here)."""
    assert calls == []
    if mode == "thread":
        assert set(calls.ahead) == {"write-check-ahead"}
    else:
        assert set(calls.ahead) <= {"MainThread"}


@pytest.mark.parametrize("ext", [".anim", ".csv"])
def test_the_figures_checked_ahead_are_the_read_back_figures(bvh, tmp_path, monkeypatch, mode, ext):
    calls = _spy(monkeypatch)
    ahead = write_checked(bvh, tmp_path / f"a{ext}")
    _assert_used_ahead(calls, mode)
    monkeypatch.setattr(check_ahead, "CHECK_AHEAD", False)
    calls.clear()
    after = write_checked(bvh, tmp_path / f"b{ext}")
    assert calls == ["MainThread"]
    assert (tmp_path / f"a{ext}").read_bytes() == (tmp_path / f"b{ext}").read_bytes()
    assert ahead.as_dict()["tracks"] == after.as_dict()["tracks"]
    assert ahead.tracks[0].writer.max_error > 0  # real figures (between frames)


def test_a_csv_check_ahead_foresees_rebuilt_and_carried_curves(tmp_path, monkeypatch, mode):
    """A CSV reads back with curves the reader makes: ClampedAuto through a quaternion track's Euler
    rows, the track's own curve where the file carries its tangents and wrap modes. The CSV writer
    says which (``_as_read_back``), so those figures too are computed ahead, and are the read-back's."""
    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.curves import WRAP_REPEAT
    from curveeditor.engine.tangents import make_curve

    t = np.arange(40) / 30.0
    e = np.stack([40 * np.sin(3 * t), 25 * np.cos(2 * t), 10 * t], axis=1)
    authored = make_curve(t, e, mode="auto")  # not what the reader rebuilds: tangent columns
    looped = replace(make_curve(t, e[:, ::-1], mode="clamped_auto"), post_infinity=WRAP_REPEAT)
    q = np.stack([np.sin(t / 2) * 0.3, np.sin(t / 2), 0 * t, np.cos(t / 2)], axis=1)
    q /= np.linalg.norm(q, axis=1)[:, None]
    clip = Clip(
        "c",
        30.0,
        [
            RotationTrack("Hips", "euler", authored),
            RotationTrack("Hips/Spine", "euler", looped, order="xyz"),
            RotationTrack("Hand", "quaternion", make_curve(t, q, mode="auto")),
        ],
    )
    calls = _spy(monkeypatch)
    ahead = write_checked(clip, tmp_path / "a.csv")
    _assert_used_ahead(calls, mode)
    monkeypatch.setattr(check_ahead, "CHECK_AHEAD", False)
    after = write_checked(clip, tmp_path / "b.csv")
    assert ahead.as_dict()["tracks"] == after.as_dict()["tracks"]
    assert [c.writer.max_error > 0 for c in ahead.tracks] == [False, False, True]


@pytest.mark.parametrize("ext", [".anim", ".csv"])
def test_a_file_that_reads_back_otherwise_is_compared_as_read(bvh, tmp_path, monkeypatch, ext):
    """The early check compared what the writer meant to write; the file read back holds another value
    at one key (a writer or reader fault): the figures of the file as read are the ones that count."""
    calls = _spy(monkeypatch)
    real = verify._read_back

    def damaged(tmp, target, clip, order=None):
        back = real(tmp, target, clip, order)
        t = back.tracks[1]
        value = t.curve.value.copy()
        value[60, 0] += 4.0
        return back.with_track(replace(t, curve=t.curve.with_keys(value=value)))

    monkeypatch.setattr(verify, "_read_back", damaged)
    out = tmp_path / f"out{ext}"
    miss = r"track 'Hips/Spine' at 2\.000 s plays [0-9.]+ deg from the clip to write"
    with pytest.raises(ClipWriteError, match=miss):
        write_checked(bvh, out)
    assert not out.exists()
    assert calls.count("MainThread") == 1  # compared again on what was read back


def test_a_float32_difference_alone_is_enough_to_compare_again(bvh, tmp_path, monkeypatch):
    """Bit for bit: one slope one float32 step off is not what was compared ahead."""
    calls = _spy(monkeypatch)
    real = verify._read_back

    def nudged(tmp, target, clip, order=None):
        back = real(tmp, target, clip, order)
        t = back.tracks[0]
        ins = t.curve.in_slope.copy()
        ins[5, 2] = np.nextafter(np.float32(ins[5, 2]), np.float32(np.inf))
        # The slope's editor curve with it (a file whose editor curve disagrees is refused).
        others = [
            replace(o, curve=o.curve.with_keys(in_slope=ins[:, 2:3].astype(np.float64)))
            if (o.kind, o.path, o.attribute) == ("editor", t.path, "localEulerAnglesRaw.z")
            else o
            for o in back.other_tracks
        ]
        back = replace(back, other_tracks=others)
        return back.with_track(replace(t, curve=t.curve.with_keys(in_slope=ins.astype(np.float64))))

    monkeypatch.setattr(verify, "_read_back", nudged)
    write_checked(bvh, tmp_path / "out.anim")
    assert calls.count("MainThread") == 1


def test_a_failing_early_check_leaves_the_check_to_the_writer(bvh, tmp_path, monkeypatch):
    real = verify.check_written
    parent = os.getpid()

    def flaky(*a, **k):
        if threading.current_thread().name == "write-check-ahead" or os.getpid() != parent:
            raise MemoryError("simulated")
        return real(*a, **k)

    monkeypatch.setattr(verify, "check_written", flaky)
    check = write_checked(bvh, tmp_path / "out.anim")
    assert len(check.tracks) == 2 and check.failure is None


@pytest.mark.parametrize("mode", ["process"], indirect=True)
def test_a_child_that_dies_leaves_the_check_to_the_writer(bvh, tmp_path, monkeypatch, mode):
    real = verify.check_written
    parent = os.getpid()

    def killed(*a, **k):
        if os.getpid() != parent:
            os.kill(os.getpid(), 9)
        return real(*a, **k)

    calls = []
    monkeypatch.setattr(verify, "check_written", lambda *a, **k: calls.append(1) or killed(*a, **k))
    check = write_checked(bvh, tmp_path / "out.anim")
    assert check.failure is None and calls  # compared here, after the read-back
    assert check.tracks[0].writer.max_error > 0


@pytest.mark.parametrize("mode", ["process"], indirect=True)
def test_a_failed_write_ends_the_child(bvh, tmp_path, monkeypatch, mode):
    """The write fails after the child started (the read-back refuses the file): no child is left."""
    started = []
    real_start = check_ahead.CheckAhead.start

    def start(self, tracks):
        real_start(self, tracks)
        started.append(self)

    monkeypatch.setattr(check_ahead.CheckAhead, "start", start)

    def refuse(tmp, target, clip, order=None):
        raise ClipWriteError(target, None, "simulated read-back failure; nothing written")

    monkeypatch.setattr(verify, "_read_back", refuse)
    with pytest.raises(ClipWriteError, match="simulated"):
        write_checked(bvh, tmp_path / "out.anim")
    child = started[0].queue.child if started and started[0].queue is not None else None
    assert child is not None and not child.running
    assert not (tmp_path / "out.anim").exists()


def test_by_default_a_thread_runs_ahead_only_when_a_core_looks_free(bvh, tmp_path, monkeypatch, mode):
    """A child always runs ahead (it adds no CPU work, wherever it is scheduled); a thread only when
    the load average leaves a core free (it shares the interpreter lock with the render)."""
    calls = _spy(monkeypatch)
    monkeypatch.setattr(check_ahead, "CHECK_AHEAD", None)
    monkeypatch.setattr(check_ahead.os, "getloadavg", lambda: (1.7, 1.0, 1.0))
    monkeypatch.setattr(check_ahead.os, "sched_getaffinity", lambda pid: {0, 1})
    write_checked(bvh, tmp_path / "busy.anim")
    assert calls == ([] if mode == "process" else ["MainThread"])
    if mode == "process":
        return
    calls.clear()
    monkeypatch.setattr(check_ahead.os, "getloadavg", lambda: (0.4, 1.0, 1.0))
    write_checked(bvh, tmp_path / "quiet.anim")
    _assert_used_ahead(calls, mode)
    monkeypatch.setattr(check_ahead.os, "sched_getaffinity", lambda pid: {0})  # one CPU: never
    calls.clear()
    write_checked(bvh, tmp_path / "one.anim")
    assert calls == ["MainThread"]


SCRIPT = r"""
import sys, threading
from curveeditor.io import check_ahead, read_clip, write_checked
check_ahead.CHECK_AHEAD = None if sys.argv[3] == "alone" else True
check_ahead.FORK_MIN_KEYS = 0
seen = []
real = check_ahead.CheckAhead.wait
def wait(self):
    child = self.queue.child if self.queue is not None else None
    seen.append(child is not None and child.running)
    real(self)
    seen.append(child is not None and child.peak_rss > 0 and self.result is not None)
check_ahead.CheckAhead.wait = wait
write_checked(read_clip(sys.argv[1]), sys.argv[2])
if sys.argv[3] == "thread":
    threading.Thread(target=lambda: None).start()  # (finished: active_count back to 1)
    t = threading.Thread(target=lambda: threading.Event().wait(5), daemon=True)
    t.start()
    seen.clear()
    write_checked(read_clip(sys.argv[1]), sys.argv[2])
print(seen[:2])
"""


@pytest.mark.parametrize("mode", ["process"], indirect=True)
@pytest.mark.parametrize("other", ["alone", "thread"])
def test_a_single_threaded_process_forks_another_does_not(tmp_path, mode, other):
    """By default (AHEAD_IN_PROCESS None) the child runs only in a process with one thread and no Qt:
    in a fresh interpreter it does, with a second thread alive it does not."""
    src = tmp_path / "wavy.bvh"
    write_bvh(src, wavy_rows(60))
    env = dict(os.environ, PYTHONPATH=ROOT)
    args = [sys.executable, "-c", SCRIPT, str(src), str(tmp_path / "o.anim"), other]
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("[True, True]" if other == "alone" else "[False, False]")


@pytest.mark.parametrize("mode", ["process"], indirect=True)
def test_a_small_clip_is_compared_after_the_read_back(bvh, tmp_path, monkeypatch, mode):
    """By default a clip under FORK_MIN_KEYS keys is not worth a fork: compared here, afterwards."""
    monkeypatch.setattr(check_ahead, "AHEAD_IN_PROCESS", None)
    monkeypatch.setattr(check_ahead, "_may_fork", lambda: True)
    calls = _spy(monkeypatch)
    write_checked(bvh, tmp_path / "small.anim")
    assert calls == ["MainThread"]
    monkeypatch.setattr(check_ahead, "FORK_MIN_KEYS", 100)
    calls.clear()
    write_checked(bvh, tmp_path / "big.anim")
    assert calls == []
