"""Issue 11 in the real window: the fuzzer's reproducers opened in the editor give the error dialog
with the reader's one-line ``FILE:LINE: REASON`` and leave the open document untouched (same clip,
same path, same undo stack, still dirty), never a raw exception text, a hang or a half-loaded clip.

The document is a loaded sample with one edit on the undo stack, so "untouched" covers unsaved work.
"""

from __future__ import annotations

import errno
import os
import time

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from curveeditor.app.window.files import sample_path
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings
from curveeditor.engine import edit as ed
from tests.fuzz import reproducers as rp
from tests.fuzz.seeds import bvh_text

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    folder = tmp_path_factory.mktemp("load-errors")
    store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(folder / "autosave"))
    w.resize(1200, 800)
    w.show()
    yield w
    w.doc.undo_stack.setClean()
    w.doc._saved_externally_dirty = False
    w.close()


@pytest.fixture
def edited(win, qtbot):
    """The sample clip loaded and one key deleted (one undo step, unsaved)."""
    win.doc.undo_stack.setClean()
    win.doc._saved_externally_dirty = False
    with qtbot.waitSignal(win.files.loaded, timeout=20000):
        win.files.open_path(str(sample_path()))
    track = next(t for t in win.doc.clip.tracks if t.n_keys >= 3)
    win.doc.apply_clip(win.doc.clip.with_track(ed.delete_keys(track, [1])), "Delete key")
    state = _state(win)
    assert state[2] == 1 and win.doc.is_dirty()
    yield state
    win.doc.undo_stack.setClean()


def _state(win):
    stack = win.doc.undo_stack
    return (win.doc.clip, win.doc.path, stack.count(), stack.index(), stack.text(0), win.doc.is_dirty())


def _open(win, qtbot, monkeypatch, path, timeout_ms=20000):
    """Open ``path``; returns the error dialogs shown (title, text) once the load has finished."""
    shown = []
    monkeypatch.setattr(
        QMessageBox, "critical", lambda parent, title, text, *a, **k: shown.append((title, text))
    )
    win.files.open_path(str(path))
    qtbot.waitUntil(lambda: not win.files.is_loading(), timeout=timeout_ms)
    qtbot.wait(50)  # let queued view updates run (an exception there fails the test via pytest-qt)
    return shown


def _assert_refused(win, shown, path, before):
    assert len(shown) == 1, f"expected one error dialog, got {shown}"
    title, text = shown[0]
    assert title == "Cannot open clip"
    message = text.split("\n\n", 1)[1]
    # The reader's typed error: one line starting with the file name, not a raw exception's text.
    assert message.startswith(str(path)) and "\n" not in message, message
    assert "memory" not in message and "recursion" not in message.lower(), message
    assert _state(win) == before, "the open document changed"


def _write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


AGREED = {
    "zero_quaternion.anim": rp.anim_zero_quaternion,
    "truncated.anim": rp.anim_truncated,
    "past_float32.anim": rp.anim_past_float32,
    "mixed_rows.csv": rp.csv_mixed_rows,
    "time_garbage.anim": lambda: rp.anim_sub(rb"time: (\S+)", rb"time: \1 garbage"),
    "frame_time_5e-324.bvh": lambda: rp.bvh_frame_time("5e-324"),
}


def _params():
    return [pytest.param(name, make, id=name) for name, make in AGREED.items()]


@pytest.mark.parametrize("name,make", _params())
def test_bad_file_gives_dialog_and_keeps_document(win, qtbot, monkeypatch, tmp_path, edited, name, make):
    path = _write(tmp_path, name, make())
    shown = _open(win, qtbot, monkeypatch, path)
    _assert_refused(win, shown, path, edited)
    assert path.read_bytes() == make()  # the input is never modified


def test_bvh_3000_levels_deep_is_read_or_refused_in_one_line(win, qtbot, monkeypatch, tmp_path, edited):
    """A 3,000-level BVH either opens (iterative parsing) or is refused with the reader's one line;
    before, a RecursionError's text reached the dialog."""
    path = _write(tmp_path, "deep.bvh", bvh_text(depth=3000, frames=1).encode())
    shown = _open(win, qtbot, monkeypatch, path, timeout_ms=60000)
    if shown:
        _assert_refused(win, shown, path, edited)
    else:
        assert win.doc.path == str(path) and len(win.doc.clip.tracks) == 3001
        assert win.doc.undo_stack.count() == 0


def test_fifo_is_refused_without_blocking(win, qtbot, monkeypatch, tmp_path, edited):
    """A FIFO behind a clip name (nobody writes to it): refused at once as not a regular file; before,
    the load blocked for ever in open()."""
    path = tmp_path / "pipe.anim"
    os.mkfifo(path)
    try:
        t0 = time.monotonic()
        shown = _open(win, qtbot, monkeypatch, path, timeout_ms=5000)
        assert time.monotonic() - t0 < 5
        _assert_refused(win, shown, path, edited)
    finally:
        _unblock_fifo(win, qtbot, path)


def _unblock_fifo(win, qtbot, path) -> None:
    """Give a reader stuck in open()/read() on ``path`` its end of file, so no worker thread is left
    blocked (it would keep the test process from exiting)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader (the load did not open it)
                raise
            if not win.files.is_loading():
                return
            qtbot.wait(50)
            continue
        os.close(fd)
        qtbot.waitUntil(lambda: not win.files.is_loading(), timeout=5000)
        return


def _reference_tree(clip):
    """The track tree built the plain way (walk from the root, scanning each level's children for the
    bone of that name: one row per bone, a track being its own parent node), kept here to check that
    the dict-indexed ``TrackTreeModel.rebuild`` gives the same tree."""
    from curveeditor.app.tracks.tree import TrackNode, _split

    def bone(node, name, full):
        for c in node.children:
            if c.name == name and not c.group:
                return c
        c = TrackNode(name, full, node)
        node.children.append(c)
        return c

    root = TrackNode("", "")
    for tr in clip.tracks:
        node, parts = root, _split(tr.path)
        for i, part in enumerate(parts[:-1]):
            node = bone(node, part, "/".join(parts[: i + 1]))
        leaf = bone(node, parts[-1], tr.path)
        leaf.track, leaf.kind, leaf.keys, leaf.full = tr.path, tr.kind, tr.n_keys, tr.path
    return root


def _shape(node):
    return (node.name, node.full, node.track, node.kind, [_shape(c) for c in node.children])


def test_track_tree_of_nested_paths_in_any_order_is_unchanged(qapp):
    """Deeper tracks before their parents, parents after, humanoid ``PATH:RootQ`` names, repeated
    prefixes: the same tree as the walk-from-the-root construction."""
    import numpy as np

    from curveeditor.app.model.document import ClipDocument
    from curveeditor.app.model.problems import ProblemIndex
    from curveeditor.app.tracks.tree import TrackTreeModel
    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.tangents import make_curve

    paths = ["A/B/C", "A", "A/B", "X/Y", "A/B/C/D", "Body:RootQ", "X", "A/B", "Q/R/S/T", "Q/R"]
    paths = list(dict.fromkeys(paths))
    curve = make_curve(np.array([0.0, 1.0]), np.zeros((2, 3)))
    clip = Clip("t", 30.0, [RotationTrack(p, "euler", curve) for p in paths])
    doc = ClipDocument()
    doc.load(clip, None)
    model = TrackTreeModel(doc, ProblemIndex(doc))
    assert _shape(model.root) == _shape(_reference_tree(clip))
