"""The editor opens FBX and glTF takes (File > Open filter, drag and drop) and exports glTF (issue 21)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from curveeditor.app.window.files import OPEN_FILTER
from curveeditor.app.window.main_window import MainWindow
from curveeditor.app.window.settings import Settings

pytestmark = pytest.mark.gui

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "fbx"


@pytest.fixture(autouse=True)
def no_modal_errors(monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda *a, **k: shown.append(a[1:3]))
    yield shown
    assert not shown, shown


def _window(tmp_path) -> MainWindow:
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Settings(store), autosave_folder=str(tmp_path / "autosave"))
    w.show()
    return w


def _close(w: MainWindow) -> None:
    w.doc.undo_stack.setClean()
    w.close()


def _drop(w, qtbot, path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    ev = QDropEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(w.files.loaded, timeout=30000):
        w.dropEvent(ev)


def test_open_filter_names_fbx_and_gltf():
    first = OPEN_FILTER.split(";;")[0]
    for pattern in ("*.fbx", "*.gltf", "*.glb", "*.anim", "*.bvh", "*.csv"):
        assert pattern in first
    assert "glTF 2.0 (*.gltf *.glb)" in OPEN_FILTER and "FBX take (*.fbx)" in OPEN_FILTER


def test_drop_fbx_then_export_gltf_and_drop_it_back(qapp, qtbot, tmp_path, monkeypatch):
    pytest.importorskip("pufbx", reason="the 'fbx' extra (pufbx) is not installed")
    w = _window(tmp_path)
    try:
        _drop(w, qtbot, DATA / "chain_armature.fbx")
        assert w.doc.path.endswith("chain_armature.fbx")
        assert len(w.doc.clip.tracks) == 8 and w.doc.clip.meta["format"] == "fbx"
        from PySide6.QtWidgets import QMenu

        menus = w.menuBar().findChildren(QMenu)
        assert any(a is w.act_exp_gltf for m in menus for a in m.actions())  # File > Export > glTF
        out = tmp_path / "take.glb"
        monkeypatch.setattr(
            QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), "glTF 2.0 binary (*.glb)")
        )
        monkeypatch.setattr(w.files, "_confirm_warnings", lambda *a, **k: True)
        assert w.files.export_dialog("gltf")
        assert out.is_file() and out.read_bytes()[:4] == b"glTF"
        check = w.files.last_check
        assert check is not None and max(t.writer.max_error for t in check.tracks) < 0.012
        from tests.io.gltf_validator import validator_dir

        if validator_dir() is not None:
            from tests.io.gltf_validator import assert_valid

            assert_valid(out)
        # a glTF typed without the default extension keeps it
        out2 = tmp_path / "take2.gltf"
        monkeypatch.setattr(
            QFileDialog, "getSaveFileName", lambda *a, **k: (str(out2), "glTF 2.0 JSON (*.gltf)")
        )
        assert w.files.export_dialog("gltf") and out2.is_file()
        before = [t.path for t in w.doc.clip.tracks]
        _drop(w, qtbot, out)
        assert w.doc.path == str(out) and [t.path for t in w.doc.clip.tracks] == before
        # the skeleton view gets the node hierarchy
        from curveeditor.engine.skeleton import skeleton_from_clip

        skel, why = skeleton_from_clip(w.doc.clip)
        assert why == "" and skel.n_joints == 8 and np.all(np.isfinite(skel.offsets))
    finally:
        _close(w)


def test_export_of_played_curves_only_writes_a_compact_anim_of_a_real_rig(qapp, qtbot, tmp_path, monkeypatch):
    """File > Export > .anim (played curves only): each track in its own kind and order, no editor
    curves, the dialog's warnings naming what the Animation window loses (issue 21)."""
    from tests.conftest import corpus_files

    rigs = corpus_files("bvh", "*Malcolm_Gangnam-Style.bvh") or corpus_files("bvh", "*.bvh")
    if not rigs:
        pytest.skip("../shared/corpus is not present")
    from PySide6.QtWidgets import QMenu

    from curveeditor.engine.rotations import extrinsic_order
    from curveeditor.io import read_clip
    from curveeditor.io.anim.writer import NO_EDITOR_CURVES

    w = _window(tmp_path)
    try:
        _drop(w, qtbot, rigs[0])
        menus = w.menuBar().findChildren(QMenu)
        assert any(a is w.act_exp_played for m in menus for a in m.actions())
        out = tmp_path / "played.anim"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
        shown = []
        monkeypatch.setattr(
            w.files, "_confirm_warnings", lambda path, ws, check=None: shown.extend(ws) or True
        )
        assert w.files.export_dialog("anim-played")
        assert NO_EDITOR_CURVES in shown
        data = out.read_bytes()
        assert b"  m_EditorCurves: []\n" in data and b"  m_EulerEditorCurves: []\n" in data
        again = read_clip(out)
        clip = w.doc.clip
        assert [t.path for t in again.tracks] == [t.path for t in clip.tracks]
        # the BVH's own orders (intrinsic, written as their extrinsic equivalent)
        assert [t.order for t in again.tracks] == [extrinsic_order(t.order) for t in clip.tracks]
        assert [t.n_keys for t in again.tracks] == [t.n_keys for t in clip.tracks]  # its frames, no more
        assert max(t.writer.key_error for t in w.files.last_check.tracks) < 0.012
    finally:
        _close(w)
