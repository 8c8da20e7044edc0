"""The main window's file handling: File > Open / Recent / drag-and-drop (each asks about unsaved edits
first), the start-up clip (the recovery offer, else the file given, else the bundled sample), and the
unsaved-changes prompt on close; File > Open batch report (:mod:`.batch_report`). Reading and
writing themselves are :mod:`curveeditor.app.window.files`'.

A mixin of :class:`~curveeditor.app.window.main_window.MainWindow`.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from .files import Autosaver, sample_path

__all__ = ["WindowFiles", "CLIP_SUFFIXES"]

#: What File > Open and drag-and-drop accept.
CLIP_SUFFIXES = (".anim", ".bvh", ".csv", ".fbx", ".gltf", ".glb")


class WindowFiles:
    """Open / start-up / close handling of the main window (mixin of ``MainWindow``)."""

    def open_dialog(self) -> None:
        """File > Open: ask about unsaved edits first (as Recent files and drag-and-drop do)."""
        if not self.maybe_save():
            return
        self.files.open_dialog()

    def open_batch_report(self, path: str | None = None) -> None:
        """File > Open batch report: a batch's JSON report as a table whose rows open their clips."""
        from PySide6.QtWidgets import QFileDialog

        from .batch_report import BatchReportDialog, BatchReportError

        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open batch report", "", "Batch report (*.json)")
            if not path:
                return
        try:
            self.batch_report = BatchReportDialog(path, self.open_file, self)
        except BatchReportError as exc:
            QMessageBox.warning(self, "Open batch report", str(exc))
            return
        self.batch_report.show()

    def _rebuild_recent(self) -> None:
        """File > Open Recent from the settings' list (each entry opens through :meth:`open_file`)."""
        self.recent_menu.clear()
        files = self.settings.recent_files()
        for i, p in enumerate(files):
            a = self.recent_menu.addAction(f"&{i + 1} {os.path.basename(p)}")
            a.setStatusTip(p)
            a.setToolTip(p)
            a.triggered.connect(lambda _c=False, path=p: self.open_file(path))
        if files:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self._clear_recent)
        self.recent_menu.setEnabled(bool(files))

    def _clear_recent(self) -> None:
        self.settings.clear_recent()
        self._rebuild_recent()

    def open_file(self, path: str) -> None:
        if not self.maybe_save():
            return
        self.files.open_path(path)

    def open_initial(self, path: str | None) -> None:
        """Start-up: recovery offer first, then ``path`` or the bundled sample (also when the
        autosave offered does not read: it is kept, and its reader error shown)."""
        if self.offer_recovery(on_failed=lambda _msg: self._open_start_clip(path)):
            return
        self._open_start_clip(path)

    def _open_start_clip(self, path: str | None) -> None:
        # The sample is package data (curveeditor/resources/samples), shipped by `pip install .`.
        target = path or (str(sample_path()) if sample_path() else None)
        if target:
            self.files.open_path(target)
        else:
            self.statusBar().showMessage("The bundled sample clip is missing: reinstall curveeditor", 8000)

    def offer_recovery(self, ask=None, on_failed=None) -> bool:
        """Offer the newest orphaned autosave; True when its recovery started. ``ask(meta) -> bool``
        replaces the dialog (tests). An autosave that does not read back is kept (the error box
        names it) and ``on_failed(message)`` runs."""
        sessions = self.autosaver.orphaned_sessions()
        if not sessions:
            return False
        meta = sessions[0]
        if ask is None:
            box = QMessageBox(self)
            box.setIcon(QMessageBox.Icon.Question)
            box.setWindowTitle("Recover unsaved work?")
            box.setText("curveeditor did not shut down cleanly. Recover the autosaved session?")
            box.setInformativeText(
                f"File: {meta.get('path') or '(untitled)'}\nAutosaved: {meta.get('saved_at', '?')}"
            )
            box.setStandardButtons(
                QMessageBox.StandardButton.Yes
                | QMessageBox.StandardButton.No
                | QMessageBox.StandardButton.Discard
            )
            box.button(QMessageBox.StandardButton.Yes).setText("Recover")
            box.button(QMessageBox.StandardButton.Discard).setText("Delete autosave")
            res = box.exec()
            if res == QMessageBox.StandardButton.Discard:
                Autosaver.remove_session(meta)
                return False
            ok = res == QMessageBox.StandardButton.Yes
        else:
            ok = ask(meta)
        if not ok:
            return False

        def restored(_clip):
            self.doc.mark_dirty()
            self.doc.select_paths(meta.get("selected_paths") or [])
            self.doc.set_time(float(meta.get("time", 0.0)))
            Autosaver.remove_session(meta)
            self.statusBar().showMessage("Recovered the autosaved session (not saved yet)", 8000)

        self.files.open_path(
            meta["_clip"], recovered_from=meta.get("path"), on_loaded=restored, on_failed=on_failed
        )
        return True

    def maybe_save(self) -> bool:
        """Ask to save unsaved changes; False when the user cancels."""
        if not self.doc.is_dirty():
            return True
        res = QMessageBox.warning(
            self,
            "Unsaved changes",
            f"Save the changes to {os.path.basename(self.doc.path or self.doc.clip.name)}?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if res == QMessageBox.StandardButton.Save:
            return self.files.save()
        return res == QMessageBox.StandardButton.Discard

    def closeEvent(self, event):  # noqa: N802
        if not self.maybe_save():
            event.ignore()
            return
        self.timeline.set_playing(False)
        self._save_layout()
        self.autosaver.stop()
        self.autosaver.discard()
        self.recipe.shutdown()
        self.diff.shutdown()
        if self._compare is not None:
            self._compare.shutdown()
        event.accept()

    def dragEnterEvent(self, event):  # noqa: N802
        if event.mimeData().hasUrls() and any(
            u.toLocalFile().lower().endswith(CLIP_SUFFIXES) for u in event.mimeData().urls()
        ):
            event.acceptProposedAction()

    def dropEvent(self, event):  # noqa: N802
        for u in event.mimeData().urls():
            p = u.toLocalFile()
            if p.lower().endswith(CLIP_SUFFIXES):
                event.acceptProposedAction()
                # Opened from the event loop, after the drop returns: a modal box (unsaved changes,
                # a read error) inside dropEvent would keep the drag source waiting for the drop's
                # end (X11's drag protocol), freezing the file manager the file came from.
                QTimer.singleShot(0, lambda path=p: self.open_file(path))
                return
