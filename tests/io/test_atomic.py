"""Atomic writes: whole file or nothing, temp files cleaned up, the input never overwritten."""

from __future__ import annotations

import os
import pickle

import pytest

from curveeditor.io import atomic
from curveeditor.io.atomic import atomic_write_bytes, atomic_write_text
from curveeditor.io.errors import ClipError, ClipReadError, ClipWriteError


def test_error_formats_file_line_reason():
    e = ClipReadError("clip.csv", 12, "NaN in column 'x'")
    assert str(e) == "clip.csv:12: NaN in column 'x'"
    assert (e.path, e.line, e.reason) == ("clip.csv", 12, "NaN in column 'x'")
    assert str(ClipWriteError("out.csv", None, "disk full")) == "out.csv: disk full"
    # Reason-first and keyword forms give the same error; reasons are kept on one line.
    assert str(ClipReadError("a.anim", "bad\nvalue", 3)) == "a.anim:3: bad value"
    assert str(ClipReadError("a.anim", line=3, reason="x")) == "a.anim:3: x"
    assert isinstance(e, ClipError) and isinstance(e, Exception)
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is ClipReadError and str(again) == str(e) and again.line == 12


def test_writes_whole_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.csv"
    atomic_write_text(target, "a,b\n1,2\n")
    assert target.read_text() == "a,b\n1,2\n"
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["out.csv"]
    # New files get normal permissions, not mkstemp's 0600.
    umask = os.umask(0)
    os.umask(umask)
    assert (target.stat().st_mode & 0o777) == (0o666 & ~umask)


def test_failure_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("old content")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", broken_fsync)
    with pytest.raises(ClipWriteError) as info:
        atomic_write_text(target, "new content that must not appear")
    assert "No space left on device" in str(info.value)
    assert str(info.value).startswith(str(target))
    assert target.read_text() == "old content"
    assert os.listdir(tmp_path) == ["out.csv"]


@pytest.mark.parametrize("fork", [False, True], ids=["thread", "forked child"])
def test_fsync_beside_the_check_fails_the_write_as_inline(tmp_path, monkeypatch, fork):
    """With a read-back check the fsync runs beside it, in a forked child where the process may
    fork (so that the check itself may fork: no second thread) and else in a thread: its failure
    still fails the write (target untouched, no temp file), and the check saw the whole file before
    the rename."""
    import threading

    from curveeditor.io import beside

    monkeypatch.setattr(beside, "may_fork", lambda: fork)
    target = tmp_path / "out.csv"
    target.write_text("old content")
    seen = []
    threads = threading.active_count()

    def check(tmp, shown):
        with open(tmp, "rb") as f:
            seen.append(f.read())
        if fork:
            assert threading.active_count() == threads  # (a thread's fsync may be over already)

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    with atomic.check_before_replace(check):
        atomic_write_bytes(target, b"new content")
        assert target.read_bytes() == b"new content" and seen == [b"new content"]
        monkeypatch.setattr(atomic.os, "fsync", broken_fsync)
        with pytest.raises(ClipWriteError, match="Input/output error"):
            atomic_write_bytes(target, b"newer content that must not appear")
    assert target.read_bytes() == b"new content"
    assert os.listdir(tmp_path) == ["out.csv"]
    assert seen[-1] == b"newer content that must not appear"


def test_interrupted_write_removes_temp(tmp_path, monkeypatch):
    target = tmp_path / "new.csv"

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(target, b"data")
    assert os.listdir(tmp_path) == []


def test_protected_input_is_refused(tmp_path):
    src = tmp_path / "clip.csv"
    src.write_text("original")
    with pytest.raises(ClipWriteError, match="refusing to overwrite the input"):
        atomic_write_text(src, "x", protect=src)
    # Same file through another spelling and through a symlink.
    with pytest.raises(ClipWriteError):
        atomic_write_text(tmp_path / "." / "clip.csv", "x", protect=str(src))
    link = tmp_path / "link.csv"
    link.symlink_to(src)
    with pytest.raises(ClipWriteError):
        atomic_write_text(link, "x", protect=[tmp_path / "other.csv", src])
    assert src.read_text() == "original"
    atomic_write_text(tmp_path / "other.csv", "ok", protect=src)
    assert (tmp_path / "other.csv").read_text() == "ok"


def test_missing_folder_and_folder_target(tmp_path):
    with pytest.raises(ClipWriteError, match="does not exist"):
        atomic_write_text(tmp_path / "nope" / "out.csv", "x")
    with pytest.raises(ClipWriteError, match="folder"):
        atomic_write_text(tmp_path, "x")


def test_write_clip_anim_is_atomic_and_names_the_target(tmp_path):
    """``write_clip`` relies on the writers' own atomic writes: whole file, kept permissions, errors
    naming the user's path, nothing half-written and no temp file left."""
    import numpy as np

    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.tangents import make_curve
    from curveeditor.io import read_clip, write_clip

    curve = make_curve(np.array([0.0, 1.0]), np.array([[0.0, 10.0, 0.0], [0.0, 90.0, 0.0]]))
    clip = Clip("c", 30.0, [RotationTrack("Hips", "euler", curve)])
    out = tmp_path / "out.anim"
    out.write_text("old")
    out.chmod(0o640)
    assert write_clip(clip, out) == []
    assert (out.stat().st_mode & 0o777) == 0o640
    np.testing.assert_allclose(read_clip(out).track("Hips").curve.value, curve.value)
    before = out.read_bytes()
    # Keys 1e-9 s apart at 1 s are the same float32 time, which Unity stores: the writer must refuse.
    close = make_curve(np.array([1.0, 1.0 + 1e-9]), curve.value)
    bad = Clip("c", 30.0, [RotationTrack("Hips", "euler", close)])
    with pytest.raises(ClipWriteError) as err:
        write_clip(bad, out)
    assert err.value.path == str(out)
    assert out.read_bytes() == before
    with pytest.raises(ClipWriteError, match="does not exist") as err:
        write_clip(clip, tmp_path / "nope" / "x.anim")
    assert err.value.path == str(tmp_path / "nope" / "x.anim")
    with pytest.raises(ClipWriteError, match="refusing to overwrite"):
        write_clip(clip, out, protect=out)
    assert os.listdir(tmp_path) == ["out.anim"]


def test_chunks_are_written_in_order_and_a_failing_stream_leaves_nothing(tmp_path):
    target = tmp_path / "out.anim"
    atomic.atomic_write_chunks(target, (c for c in (b"one\n", b"two\n", b"three\n")))
    assert target.read_bytes() == b"one\ntwo\nthree\n"

    def broken():
        yield b"half of a new file\n"
        raise ValueError("cannot write NaN")

    # The producer's own error comes through unchanged (the writer turns it into one line), the
    # old file stays and no temp file is left.
    with pytest.raises(ValueError, match="NaN"):
        atomic.atomic_write_chunks(target, broken())
    assert target.read_bytes() == b"one\ntwo\nthree\n"
    assert sorted(os.listdir(tmp_path)) == ["out.anim"]
