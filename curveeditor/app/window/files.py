"""Opening, saving and exporting clips, recent files, and session autosave / crash recovery.

* Loads run on a worker thread behind a cancellable :class:`QProgressDialog`; the document is only
  replaced when the read succeeded, so a bad file leaves the current clip untouched and shows the
  reader's one-line ``FILE:LINE: REASON`` in a message box.
* Save writes ``.anim`` with the minimal-diff writer (``curveeditor.io.write_checked``); the writer's
  export checks are computed first (``io.anim.anim_text``) and shown in a dialog, with the figures of
  the written file read back (keys written, keys the writer added and why, max error at and between
  keys), before the file is put in place; declining leaves nothing written. A file that would miss
  the writer's bound is refused with the same one-line reason as the CLI, in an error dialog.
* Autosave: every ``Settings.autosave_seconds`` while the document has unsaved changes, the clip is
  written with the engine's ``.anim`` writer into ``AppDataLocation/autosave`` next to a small JSON
  (original path, time, selection, process id). A clean exit deletes them; a later start finds the
  files of a process that is gone and offers recovery.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog, QWidget

from curveeditor.engine.clip import Clip
from curveeditor.resources import SAMPLES_DIR

from ..common.workers import run_in_thread
from ..model.document import ClipDocument
from ..model.problems import inspect_tracks
from .settings import Settings

__all__ = [
    "FileController",
    "Autosaver",
    "OPEN_FILTER",
    "sample_path",
    "export_warnings",
    "read_clip_file",
    "write_clip_file",
    "check_lines",
]

OPEN_FILTER = (
    "Clips (*.anim *.bvh *.csv *.fbx *.gltf *.glb);;Unity animation (*.anim);;BVH motion capture (*.bvh);;"
    "FBX take (*.fbx);;glTF 2.0 (*.gltf *.glb);;CSV (*.csv);;All files (*)"
)


def sample_path() -> Path | None:
    """The bundled sample clip, package data of ``curveeditor`` (``curveeditor/resources/samples``,
    shipped by ``pip install .`` and by the PyInstaller bundle): ``demo.anim``, else ``demo.csv``,
    else None (a broken install)."""
    for name in ("demo.anim", "demo.csv"):
        p = SAMPLES_DIR / name
        if p.is_file():
            return p
    return None


def read_clip_file(path: str) -> Clip:
    """Read any supported clip (raises ``curveeditor.io.ClipError``)."""
    from curveeditor.io import read_clip

    return read_clip(path)


#: Export kind -> (extension, file-name suffix, dialog filter, .anim mode, .anim editor curves). A BVH
#: needs the skeleton of a clip read from a .bvh (``clip.meta["hierarchy"]``; :func:`can_export_bvh`).
#: ``anim-played``: only the curves Unity plays, in each track's own kind and order (the writer's
#: ``editor_curves=False``: a third of the size of a dense Euler clip).
EXPORT_KINDS = {
    "anim-euler": (".anim", "_euler", "Unity animation (*.anim)", "euler", True),
    "anim-quaternion": (".anim", "_quat", "Unity animation (*.anim)", "quaternion", True),
    "anim-played": (".anim", "_played", "Unity animation (*.anim)", None, False),
    "csv": (".csv", "", "CSV (*.csv)", None, True),
    "bvh": (".bvh", "_clean", "BVH motion capture (*.bvh)", None, True),
    "gltf": (".glb", "", "glTF 2.0 binary (*.glb);;glTF 2.0 JSON (*.gltf)", None, True),
}
#: Other extensions an export kind accepts as typed (the first of :data:`EXPORT_KINDS` is the default).
EXPORT_ALSO = {"gltf": (".gltf",)}


def can_export_bvh(clip) -> bool:
    """True when ``clip`` carries a BVH skeleton (joint hierarchy with offsets) to write back."""
    return isinstance(clip.meta, dict) and bool(clip.meta.get("hierarchy"))


def write_clip_file(clip: Clip, path: str, mode: str | None = None, confirm=None, editor_curves: bool = True):
    """Write ``clip`` atomically by extension (``mode``: ``"euler"``/``"quaternion"``/None and
    ``editor_curves`` for .anim), read back and checked before the rename; returns the
    ``io.verify.WriteCheck`` (its ``warnings`` are the writer's). ``confirm(check) -> bool`` may
    decline the checked file (nothing written: ``io.verify.WriteCancelled``). Raises ``ClipError``."""
    from curveeditor.io import write_checked

    return write_checked(clip, path, confirm=confirm, **_anim_options(path, mode, editor_curves))


def _anim_options(path: str, mode: str | None, editor_curves: bool) -> dict:
    """The ``.anim`` writer's options of an export (none for other formats)."""
    if not path.lower().endswith(".anim"):
        return {}
    return {
        **({"mode": mode} if mode is not None else {}),
        **({} if editor_curves else {"editor_curves": False}),
    }


def check_lines(check) -> list[str]:
    """The read-back figures of a write as dialog lines: the summary, then each track the writer
    re-keyed (keys added and why) or that plays measurably off."""
    lines = [check.summary()]
    lines += [n for n in (check.precision_line(), check.curves_line()) if n is not None]
    for t in check.tracks:
        if t.keys_added or t.writer.max_error > 1e-3:
            why = "; ".join(t.reasons) or "float32 rounding"
            lines.append(
                f"{t.path or '(root)'}: {t.keys_in} -> {t.keys_written} keys, max error "
                f"{t.writer.max_error:.4f} deg between keys, {t.writer.key_error:.4f} deg at keys ({why})"
            )
    return lines


def export_warnings(clip: Clip, path: str, mode: str | None = None, editor_curves: bool = True) -> list[str]:
    """The export checks for writing ``clip`` to ``path`` (nothing is written): the ``.anim`` writer's
    warnings; glTF: what the file cannot hold (``io.gltf.gltf_document``); else what the format cannot
    hold (``io.losses.write_losses``: a CSV's non-rotation curves and quaternion tracks)."""
    if path.lower().endswith((".gltf", ".glb")):
        from curveeditor.io.gltf import gltf_document

        return list(gltf_document(clip)[2])
    if not path.lower().endswith(".anim"):
        from curveeditor.io.losses import write_losses

        return write_losses(clip, path)
    from curveeditor.io.anim import anim_text
    from curveeditor.io.verify import prepare_samples

    # The clip as write_checked hands it to the writer (per-frame BVH tracks keyed at their frames),
    # so the dialog's words are those of the write.
    opts = _anim_options(path, mode, editor_curves)
    _text, warnings = anim_text(prepare_samples(clip, ".anim", mode), path=path, **{"mode": mode, **opts})
    return list(warnings or [])


class FileController(QObject):
    """File menu logic for a window: open (async), save, save as, export, recent files."""

    loaded = Signal(str)  # path
    loadFailed = Signal(str)  # message
    saved = Signal(str)
    written = Signal(object)  # io.verify.WriteCheck of the file just written (read-back figures)
    recentChanged = Signal()

    def __init__(self, document: ClipDocument, settings: Settings, parent_widget: QWidget, problems=None):
        super().__init__(parent_widget)
        self.doc = document
        self.settings = settings
        self.widget = parent_widget
        #: the window's ProblemIndex, if any: a load inspects the clip on the worker, after the read
        self.problems = problems
        self._job = None
        self._progress: QProgressDialog | None = None
        self.last_warnings: list[str] = []
        self.last_check = None  # io.verify.WriteCheck of the last write

    # ------------------------------------------------------------------ open
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.widget, "Open clip", self.settings.last_dir(), OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_path(
        self, path: str, *, recovered_from: str | None = None, on_loaded=None, on_failed=None
    ) -> None:
        """Load ``path`` on a worker thread; the document changes only on success. A failure shows
        the reader's one-line error in a box, then calls ``on_failed(message)`` when given."""
        path = os.fspath(path)
        if self._job is not None:
            self._job.cancel()
        progress = QProgressDialog(f"Reading {os.path.basename(path)}…", "Cancel", 0, 0, self.widget)
        progress.setWindowTitle("Opening clip")
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(400)
        progress.setAutoClose(False)
        progress.setAutoReset(False)
        self._progress = progress
        # A busy (0..0) dialog never receives setValue(), so Qt's minimumDuration timer would not show
        # it: show it ourselves when the read is still running after 400 ms.
        QTimer.singleShot(400, lambda: progress.show() if self._progress is progress else None)

        inspect = self.problems is not None

        def job(token, report):
            report(0.0, "reading")
            clip = read_clip_file(path)
            return clip, (inspect_tracks(clip.tracks) if inspect else None)

        def done(result):
            clip, found = result
            if self._job is not job_handle:
                return  # a newer load replaced this one
            self._finish_progress()
            self._job = None
            if found is not None:
                self.problems.prime(found)
            self.doc.load(clip, recovered_from or path)
            if recovered_from is None:
                self.settings.add_recent(path)
                self.settings.set_last_dir(os.path.dirname(os.path.abspath(path)))
                self.recentChanged.emit()
            if on_loaded is not None:
                on_loaded(clip)
            self.loaded.emit(path)

        def failed(exc):
            if self._job is not job_handle:
                return
            self._finish_progress()
            self._job = None
            msg = str(exc) if str(exc) else type(exc).__name__
            QMessageBox.critical(self.widget, "Cannot open clip", f"The file could not be opened:\n\n{msg}")
            if not os.path.exists(path):
                self.settings.remove_recent(os.path.abspath(path))
                self.recentChanged.emit()
            self.loadFailed.emit(msg)
            if on_failed is not None:
                on_failed(msg)

        def cancelled():
            self._finish_progress()
            if self._job is job_handle:
                self._job = None

        job_handle = run_in_thread(job, on_done=done, on_error=failed, on_cancelled=cancelled)
        self._job = job_handle
        progress.canceled.connect(self._cancel_load)

    def _cancel_load(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self._job = None  # the result of a cancelled read is dropped
        self._finish_progress()
        self.loadFailed.emit("cancelled")

    def _finish_progress(self) -> None:
        """Put the load's progress box away for good. ``reset()`` stops Qt's own force-show timer
        (4 s from construction, whatever ``minimumDuration`` says): the box is deleted only when
        control returns to the event loop, and the error box that follows a failed read runs its own
        loop meanwhile, so a closed but live box re-opened itself over the error box 4 s later and
        neither answered (issue 20)."""
        progress, self._progress = self._progress, None
        if progress is not None:
            progress.blockSignals(True)
            progress.reset()
            progress.hide()
            progress.close()
            progress.deleteLater()

    def is_loading(self) -> bool:
        return self._job is not None

    # ------------------------------------------------------------------ save / export
    def save(self) -> bool:
        """Save to the current path when it is an ``.anim``; otherwise ask for one."""
        if self.doc.path and self.doc.path.lower().endswith(".anim"):
            return self.write(self.doc.path, None, mark_saved=True)
        return self.save_as()

    def save_as(self) -> bool:
        start = self.doc.path or os.path.join(self.settings.last_dir(), f"{self.doc.clip.name}.anim")
        start = os.path.splitext(start)[0] + ".anim"
        path, _ = QFileDialog.getSaveFileName(self.widget, "Save clip as", start, "Unity animation (*.anim)")
        if not path:
            return False
        if not path.lower().endswith(".anim"):
            path += ".anim"
        return self.write(path, None, mark_saved=True)

    def export_dialog(self, kind: str) -> bool:
        """``kind``: one of :data:`EXPORT_KINDS` (``"anim-euler"``, ``"anim-quaternion"``, ``"csv"``,
        ``"bvh"``, ``"gltf"``)."""
        ext, suffix, filt, mode, editor_curves = EXPORT_KINDS[kind]
        # the folder of the last export (else the clip's own folder, else the last folder used)
        name = os.path.splitext(os.path.basename(self.doc.path or self.doc.clip.name))[0]
        folder = self.settings.get_str("files/last_export_dir", "") or (
            os.path.dirname(self.doc.path) if self.doc.path else self.settings.last_dir()
        )
        base = os.path.join(folder, name)
        path, chosen = QFileDialog.getSaveFileName(self.widget, "Export", base + suffix + ext, filt)
        if not path:
            return False
        if not path.lower().endswith((ext, *EXPORT_ALSO.get(kind, ()))):
            path += ".gltf" if kind == "gltf" and "(*.gltf)" in (chosen or "") else ext
        ok = self.write(path, mode, mark_saved=False, editor_curves=editor_curves)
        if ok:
            self.settings.set("files/last_export_dir", os.path.dirname(os.path.abspath(path)))
        return ok

    def write(
        self, path: str, mode: str | None, *, mark_saved: bool, confirm=None, editor_curves: bool = True
    ) -> bool:
        """Check, confirm warnings, write. ``confirm(warnings) -> bool`` overrides the dialog (tests).
        ``mode`` and ``editor_curves``: the ``.anim`` writer's options."""
        clip = self.doc.clip
        try:
            warnings = export_warnings(clip, path, mode, editor_curves)
        except Exception as exc:  # noqa: BLE001 - a failing check must not block saving silently
            warnings = [f"export checks could not run: {exc}"]
        self.last_warnings = warnings

        def ask(check) -> bool:
            # Called after the temp file was read back and passed its checks, before the rename: the
            # dialog shows the written file's figures next to the warnings.
            self.last_check = check
            if not warnings:
                return True
            if confirm is not None:
                return confirm(warnings)
            return self._confirm_warnings(path, warnings, check)

        from curveeditor.io.verify import WriteCancelled

        try:
            check = write_clip_file(clip, path, mode, confirm=ask, editor_curves=editor_curves)
        except WriteCancelled:
            return False
        except Exception as exc:  # noqa: BLE001 - ClipError or anything the writer let through
            QMessageBox.critical(self.widget, "Cannot write clip", f"Nothing was written:\n\n{exc}")
            return False
        self.last_check = check
        self.written.emit(check)
        if mark_saved:
            self.doc.mark_saved(path)
            self.settings.add_recent(path)
            self.recentChanged.emit()
        self.settings.set_last_dir(os.path.dirname(os.path.abspath(path)))
        self.saved.emit(path)
        return True

    def _confirm_warnings(self, path: str, warnings: list[str], check=None) -> bool:
        box = QMessageBox(self.widget)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Export checks")
        box.setText(f"Writing {os.path.basename(path)} raised {len(warnings)} warning(s).")
        figures = check_lines(check) if check is not None else []
        box.setInformativeText(
            "\n".join(f"• {w}" for w in warnings[:12])
            + ("\n…" if len(warnings) > 12 else "")
            + ("\n\n" + "\n".join(figures[:8]) if figures else "")
        )
        box.setDetailedText("\n".join(warnings + [""] + figures))
        box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Save).setText("Write anyway")
        return box.exec() == QMessageBox.StandardButton.Save

    def export_graphs(self, graph_panel) -> bool:
        base = os.path.splitext(self.doc.path or self.doc.clip.name)[0]
        path, filt = QFileDialog.getSaveFileName(
            self.widget, "Export graphs", base + "_graphs.png", "PNG image (*.png);;SVG drawing (*.svg)"
        )
        if not path:
            return False
        if not path.lower().endswith((".png", ".svg")):
            path += ".svg" if "svg" in filt.lower() else ".png"
        graph_panel.export_image(path)
        return True


# ---------------------------------------------------------------------------------------------------
class Autosaver(QObject):
    """Periodic session autosave and crash recovery (see the module docstring)."""

    autosaved = Signal(str)

    def __init__(
        self, document: ClipDocument, interval_s: float = 60.0, folder: str | None = None, parent=None
    ):
        super().__init__(parent)
        self.doc = document
        self.folder = Path(folder or self.default_folder())
        self.pid = os.getpid()
        self._last_clip = None
        self._timer = QTimer(self)
        self._timer.setInterval(int(interval_s * 1000))
        self._timer.timeout.connect(self.autosave)
        document.dirtyChanged.connect(self._on_dirty)

    @staticmethod
    def default_folder() -> str:
        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        return os.path.join(base, "autosave")

    @property
    def json_path(self) -> Path:
        return self.folder / f"session-{self.pid}.json"

    @property
    def clip_path(self) -> Path:
        return self.folder / f"session-{self.pid}.anim"

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _on_dirty(self, dirty: bool) -> None:
        if not dirty:
            self.discard()

    def autosave(self) -> bool:
        """Write the session now if there are unsaved changes not yet autosaved; True if written."""
        if not self.doc.is_dirty() or self.doc.clip is self._last_clip or self.doc.in_live_edit():
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        written = None
        # .anim keeps everything (tangent modes, weights, read-only curves); CSV is the fallback when
        # the .anim writer refuses the clip.
        for target in (self.clip_path, self.clip_path.with_suffix(".csv")):
            try:
                write_clip_file(self.doc.clip, str(target))
            except Exception:  # noqa: BLE001 - autosave must never interrupt editing
                continue
            written = target
            break
        if written is None:
            return False
        for other in (self.clip_path, self.clip_path.with_suffix(".csv")):
            if other != written and other.exists():
                other.unlink()
        meta = {
            "version": 1,
            "path": self.doc.path,
            "time": self.doc.current_time,
            "selected_paths": list(self.doc.selected_paths),
            "clip_file": written.name,
            "pid": self.pid,
            "saved_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }
        tmp = self.json_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
        os.replace(tmp, self.json_path)
        self._last_clip = self.doc.clip
        self.autosaved.emit(str(written))
        return True

    def discard(self) -> None:
        """Remove this process's autosave (after a save or a clean exit)."""
        for p in (self.json_path, self.clip_path, self.clip_path.with_suffix(".csv")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass
        self._last_clip = None

    def orphaned_sessions(self) -> list[dict]:
        """Autosaves left by editors that are not running any more (newest first)."""
        out = []
        if not self.folder.is_dir():
            return out
        for j in self.folder.glob("session-*.json"):
            try:
                meta = json.loads(j.read_text(encoding="utf-8"))
                pid = int(meta.get("pid", -1))
            except (OSError, ValueError, TypeError):
                continue
            if pid == self.pid or _alive(pid):
                continue
            clip = self.folder / str(meta.get("clip_file", ""))
            if not clip.is_file():
                continue
            meta["_json"] = str(j)
            meta["_clip"] = str(clip)
            out.append(meta)
        out.sort(key=lambda m: str(m.get("saved_at", "")), reverse=True)
        return out

    @staticmethod
    def remove_session(meta: dict) -> None:
        for k in ("_json", "_clip"):
            try:
                os.unlink(meta[k])
            except (KeyError, OSError):
                pass


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
