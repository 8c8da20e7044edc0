"""File > Open batch report: a batch's JSON report (``curveeditor-cli batch ... --report R.json``) as a
sortable table, one row per input with its status, figures and output; double-click (or Open) a row
to open that clip in the editor: its output when it was written, else its input.

Paths in the report are as the batch was given them (relative ones to the folder the batch ran in):
a relative path is looked up next to the report file, then from the current folder.
"""

from __future__ import annotations

import json
import os

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..common.row_table import RowTableModel

__all__ = ["BatchReportDialog", "BatchReportModel", "load_batch_report", "BatchReportError"]


class BatchReportError(ValueError):
    """The file is not a batch report (one line, shown in the error box)."""


def load_batch_report(path: str) -> dict:
    """The report's dict (``files``: list of entries), or :class:`BatchReportError` saying why not."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise BatchReportError(f"{path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BatchReportError(f"{path}: not JSON ({exc})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(isinstance(e, dict) and "input" in e for e in files):
        raise BatchReportError(
            f"{path}: not a batch report (curveeditor-cli batch --report R.json writes one)"
        )
    return data


def step_error(entry: dict) -> float | None:
    """The largest figure of a file's steps that promise a tolerance (``reduce``, the conversions,
    the lossless steps' poses at the keys: ``StepFigure.measured``), degrees; None when no step
    promises one. This is the error; the played change of an intended step (an unwrap's removed
    spin) is the file's ``max_error``, shown apart (issue 20)."""
    figs = [
        float(st["measured"])
        for t in entry.get("track_details") or ()
        for st in t.get("steps") or ()
        if st.get("tolerance") is not None and st.get("measured") is not None
    ]
    return max(figs) if figs else None


class BatchReportModel(RowTableModel):
    """Rows: the report's files in input order. Columns: input, status, tracks, keys, the steps'
    error against their tolerances (:func:`step_error`), the played change input -> output, output."""

    HEADERS = (
        "Input",
        "Status",
        "Tracks",
        "Keys before → after",
        "Error (deg)",
        "Change (deg)",
        "Output",
    )

    def __init__(self, report: dict, base: str, parent=None):
        super().__init__(parent)
        self.rows = list(report["files"])
        self.base = base

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        e, col = self.rows[index.row()], index.column()
        ok = e.get("status") == "ok"
        name = e["input"] if e.get("take") is None else f"{e['input']} take {e['take']!r}"
        err = step_error(e) if ok else None
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                name,
                e.get("status", ""),
                str(e.get("tracks", "")) if ok else "",
                f"{e.get('keys_before', '')} → {e.get('keys_after', '')}" if ok else "",
                f"{err:.4f}" if err is not None else "",
                f"{e.get('max_error', 0.0):.4f}" if ok else "",
                (e.get("output") or "") if ok else (e.get("error") or ""),
            )[col]
        if role == Qt.ItemDataRole.UserRole:  # sort key
            keys = float(e.get("keys_after", 0)) if ok else -1.0
            return (
                name,
                e.get("status", ""),
                int(e.get("tracks", 0) or 0),
                keys,
                (err if err is not None else -1.0) if ok else float("inf"),
                float(e.get("max_error", 0.0)) if ok else float("inf"),
                e.get("output") or "",
            )[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return e.get("error") if not ok else e.get("output")
        return None

    def clip_path(self, row: int) -> str | None:
        """The clip a row opens: the output when written, else the input; None when neither exists."""
        e = self.rows[row]
        for p in ([e.get("output")] if e.get("status") == "ok" else []) + [e["input"]]:
            if not p:
                continue
            for cand in (p,) if os.path.isabs(p) else (os.path.join(self.base, p), p):
                if os.path.isfile(cand):
                    return cand
        return None


class BatchReportDialog(QDialog):
    """The report's table; ``open_clip(path)`` (the window's open, which asks about unsaved edits
    first) is called for the row opened."""

    def __init__(self, path: str, open_clip, parent: QWidget | None = None):
        super().__init__(parent)
        report = load_batch_report(path)
        self.setWindowTitle(f"Batch report — {os.path.basename(path)}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.open_clip = open_clip
        self.model = BatchReportModel(report, os.path.dirname(os.path.abspath(path)), self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)  # worst error first
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        self.table.setColumnWidth(0, 320)
        for col in range(1, len(BatchReportModel.HEADERS) - 1):
            # whole headers ("Keys before → after" was cut at the default width) and values
            self.table.resizeColumnToContents(col)
        self.table.doubleClicked.connect(lambda ix: self.open_row(self.proxy.mapToSource(ix).row()))
        files = len(self.model.rows)
        done = [e for e in self.model.rows if e.get("status") == "ok"]
        ok = len(done)
        # Derived from the rows the table shows: the error against the steps' tolerances, apart
        # from the intended changes (an unwrap's removed 180 deg spin is no error).
        errors = [x for x in (step_error(e) for e in done) if x is not None]
        change = max((float(e.get("max_error") or 0.0) for e in done), default=0.0)
        err_text = f"largest error {max(errors):.4f} deg against the steps' tolerances; " if errors else ""
        summary = QLabel(
            f"{files} file(s): {ok} ok, {files - ok} not ok; {err_text}largest played change "
            f"{change:.4f} deg. Double-click a row to open its clip (the output, or the input of a "
            "failed file)."
        )
        summary.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = buttons.addButton("Open clip", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.clicked.connect(self._open_selected)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(summary)
        lay.addWidget(self.table)
        lay.addWidget(buttons)
        self.resize(1100, 420)

    def _open_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.open_row(self.proxy.mapToSource(rows[0]).row())

    def open_row(self, row: int) -> None:
        path = self.model.clip_path(row)
        if path is None:
            QMessageBox.warning(
                self, "Open clip", f"{self.model.rows[row]['input']}: the clip file is not there"
            )
            return
        self.open_clip(path)
