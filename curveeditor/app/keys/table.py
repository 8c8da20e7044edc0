"""The key table dock: the primary track's keys, editable in place through the undo stack.

Columns: time (s), frame, the key values (X, Y, Z degrees for Euler tracks; x, y, z, w for
quaternion tracks), the tangent mode (of the first component, "mixed" when components differ), and
the in/out slopes per component. Editing a time, value or slope pushes one command; the row
selection mirrors ``document.selected_keys`` for the track (a row per key selected on any channel;
the cells of the channels it is selected on, ``document.key_selection``, are bold and underlined).

With no rotation track selected and float curves shown (humanoid muscles, blend shapes), the table
holds the first shown editable float curve: one value column in the curve's own units, its rows
mirroring ``document.selected_float_keys``, edits through ``engine.float_curves.with_float_curve``.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    Qt,
    QTimer,
)
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import edit as ed
from curveeditor.engine import float_curves as fc
from curveeditor.engine.clip import RotationTrack
from curveeditor.engine.curves import equal_or_nan, rows_any

from ..common.elided import ELIDE_PATH, ElidedLabel
from ..model.document import ClipDocument

__all__ = ["KeyTableModel", "KeyTable"]

_NO_PARENT = QModelIndex()
_ROLES = frozenset(
    (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.EditRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.FontRole,
    )
)
_SELECTED_CELL = QFont()
_SELECTED_CELL.setBold(True)
_SELECTED_CELL.setUnderline(True)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_GREY = QColor("#8a8d93")
# Mid-drag the table follows at most this often (ms), and exactly at the drag's end: a dope-sheet
# drag changes the key count every step (a model reset, ~6 ms, plus repainting every visible row),
# and nobody reads a table of numbers changing 60 times a second.
LIVE_TABLE_MS = 150


def _changed_rows(a, b) -> np.ndarray:
    """Indices of keys that differ between two curves with the same key count."""
    diff = a.time != b.time
    for f in ("value", "in_slope", "out_slope", "in_weight", "out_weight", "weighted_mode", "tangent_mode"):
        x, y = getattr(a, f), getattr(b, f)
        if x is not y:
            diff |= rows_any(~equal_or_nan(x, y))
    return np.nonzero(diff)[0]


class KeyTableModel(QAbstractTableModel):
    """Rows = keys of ``document.current_track()``."""

    def __init__(self, document: ClipDocument, parent=None):
        super().__init__(parent)
        self.doc = document
        self.track: RotationTrack | None = None
        #: the float curve shown instead (``OtherTrack.name``; ``track`` is then that OtherTrack)
        self.float_name: str | None = None
        self.error: str = ""
        self._text: dict[int, list[str]] = {}
        self._pending_paths: set[str] = set()
        self._pending_all = False
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.setInterval(LIVE_TABLE_MS)
        self._live_timer.timeout.connect(self._apply_clip_change)
        document.clipChanged.connect(self._on_clip_changed)
        document.selectionChanged.connect(self.reset_track)
        document.otherSelectionChanged.connect(self.reset_track)
        self.reset_track()

    def _current(self):
        """``(track, float curve name or None)``: the primary rotation track, else the first shown
        editable float curve, else ``(None, None)``."""
        tr = self.doc.current_track()
        if tr is not None:
            return tr, None
        shown = self.doc.shown_float_curves()
        return (self.doc.other_track(shown[0]), shown[0]) if shown else (None, None)

    # ------------------------------------------------------------------ columns
    def value_names(self) -> tuple[str, ...]:
        if self.track is None:
            return ()
        if self.float_name is not None:
            unit = fc.unit(self.track)
            return (f"Value ({unit})" if unit and unit != "muscle" else "Value",)
        return ("X", "Y", "Z") if self.track.kind == "euler" else ("qx", "qy", "qz", "qw")

    def columns(self) -> list[tuple[str, str, int]]:
        """(header, field, component) per column."""
        names = self.value_names()
        cols = [("Time (s)", "time", 0), ("Frame", "frame", 0)]
        cols += [(n, "value", i) for i, n in enumerate(names)]
        cols.append(("Tangents", "mode", 0))
        if self.float_name is not None:  # one component: its slopes, in its units per second
            return cols + [("In slope", "in", 0), ("Out slope", "out", 0)]
        cols += [(f"In {n}", "in", i) for i, n in enumerate(names)]
        cols += [(f"Out {n}", "out", i) for i, n in enumerate(names)]
        return cols

    def reset_track(self) -> None:
        self._live_timer.stop()
        self._pending_all, self._pending_paths = False, set()
        self.beginResetModel()
        self._text = {}
        self.track, self.float_name = self._current()
        self._cols = self.columns()
        self.endResetModel()

    def _on_clip_changed(self) -> None:
        if self.doc.changed_paths is None:
            self._pending_all = True
        else:
            self._pending_paths |= set(self.doc.changed_paths)
        if self.doc.in_live_edit():
            if not self._live_timer.isActive():
                self._live_timer.start()
            return
        self._apply_clip_change()

    def _apply_clip_change(self) -> None:
        """Bring the rows up to the document's clip (every change since the last call)."""
        self._live_timer.stop()
        paths = None if self._pending_all else self._pending_paths
        self._pending_all, self._pending_paths = False, set()
        new, name = self._current()
        if (
            new is None
            or self.track is None
            or paths is None
            or name != self.float_name
            or new.path != self.track.path
            or new.kind != self.track.kind
            or new.n_keys != self.track.n_keys
        ):
            self.reset_track()
            return
        if name is None and new.path not in paths:
            return  # (a float curve's edit names no rotation path: its rows are compared below)
        old, self.track = self.track, new
        rows = _changed_rows(old.curve, new.curve)
        for r in rows.tolist():
            self._text.pop(r, None)
        if rows.size:
            # one signal for the span of changed rows (a drag changes a key and its neighbours)
            last = self.columnCount() - 1
            self.dataChanged.emit(self.index(int(rows[0]), 0), self.index(int(rows[-1]), last))

    # ------------------------------------------------------------------ Qt API
    def rowCount(self, parent=_NO_PARENT):  # noqa: N802
        return 0 if parent.isValid() or self.track is None else self.track.n_keys

    def columnCount(self, parent=_NO_PARENT):  # noqa: N802
        return len(self._cols)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._cols[section][0]
        return str(section)

    def flags(self, index):
        f = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.isValid() and self._cols[index.column()][1] in ("time", "frame", "value", "in", "out"):
            f |= Qt.ItemFlag.ItemIsEditable
        return f

    def _row_text(self, i: int) -> list[str]:
        """Display strings of row ``i`` (cached: Qt asks for every cell and role on each repaint)."""
        hit = self._text.get(i)
        if hit is not None:
            return hit
        c = self.track.curve
        out = []
        for _h, field, k in self._cols:
            if field == "time":
                out.append(f"{c.time[i]:.4f}")
            elif field == "frame":
                out.append(f"{c.time[i] * self.doc.frame_rate:.2f}".rstrip("0").rstrip("."))
            elif field == "value":
                out.append(f"{c.value[i, k]:.4f}")
            elif field in ("in", "out"):
                v = float((c.in_slope if field == "in" else c.out_slope)[i, k])
                out.append("∞" if np.isinf(v) else f"{v:.3f}")
            else:
                modes = c.tangent_mode[i]
                text = ed.describe_mode(int(modes[0]), int(c.weighted_mode[i, 0]))
                if np.any(modes != modes[0]) or np.any(c.weighted_mode[i] != c.weighted_mode[i, 0]):
                    text += " (mixed)"
                out.append(text)
        self._text[i] = out
        return out

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if role not in _ROLES or not index.isValid() or self.track is None:
            return None
        i = index.row()
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._row_text(i)[col]
        _h, field, k = self._cols[col]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return None if field == "mode" else _RIGHT
        if role == Qt.ItemDataRole.ForegroundRole:
            return _GREY if field in ("in", "out") else None
        if role == Qt.ItemDataRole.FontRole:
            # a per-curve selection: the selected channels' cells (Euler columns X, Y, Z)
            if (
                self.float_name is None
                and field in ("value", "in", "out")
                and k < 3
                and self.track.kind == "euler"
            ):
                if i in self.doc.key_selection.get((self.track.path, k), ()):
                    return _SELECTED_CELL
            return None
        c = self.track.curve
        if role == Qt.ItemDataRole.EditRole:
            if field == "time":
                return float(c.time[i])
            if field == "frame":
                return float(c.time[i] * self.doc.frame_rate)
            if field == "value":
                return float(c.value[i, k])
            if field in ("in", "out"):
                return float((c.in_slope if field == "in" else c.out_slope)[i, k])
            return self._row_text(i)[col]
        if role == Qt.ItemDataRole.ToolTipRole and field == "mode":
            return "Unity tangentMode " + ", ".join(str(int(m)) for m in c.tangent_mode[i])
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole):  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or self.track is None:
            return False
        _h, field, k = self._cols[index.column()]
        i = index.row()
        try:
            v = float(str(value).replace(",", ".").replace("∞", "inf"))
            if field == "frame":
                field, v = "time", v / self.doc.frame_rate
            if not np.isfinite(v) and field != "in" and field != "out":
                raise ValueError("value must be finite")
            floating = self.float_name is not None
            tr = self.doc.other_track(self.float_name) if floating else self.doc.clip.track(self.track.path)
            if field == "time":
                new = ed.set_key(tr, i, time=v)
                text = f"Set key {i} time"
            elif field == "value":
                direct = floating or tr.kind == "euler"
                new = ed.set_key(tr, i, channel=k if direct else k + 3, value=v)
                text = f"Set key {i} {self._cols[index.column()][0]}"
            else:
                new = ed.set_slope(tr, i, k, field, v)
                text = f"Set key {i} {field} slope"
        except ValueError as exc:
            self.error = str(exc)
            return False
        self.error = ""
        self.doc.apply_clip(fc.with_edited(self.doc.clip, new), text)
        return True


class _ExactEditDelegate(QStyledItemDelegate):
    """Cell editor holding the full-precision value; commits only when the text was changed.

    Qt's default editor for a float is a QDoubleSpinBox with 2 decimals: opening a cell and pressing
    Enter rounded a quaternion component 0.99992 to 1.0 or a key time 0.1667 s to 0.17 s (off-frame).
    """

    def createEditor(self, parent, option, index):  # noqa: N802 - Qt API name
        editor = QLineEdit(parent)
        editor.setFrame(False)
        editor.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return editor

    def setEditorData(self, editor, index):  # noqa: N802 - Qt API name
        value = index.data(Qt.ItemDataRole.EditRole)
        text = repr(float(value)) if isinstance(value, float) else str(value)
        editor.setText(text)
        editor.setProperty("initial_text", text)

    def setModelData(self, editor, model, index):  # noqa: N802 - Qt API name
        text = editor.text().strip()
        if text and text != editor.property("initial_text"):
            model.setData(index, text, Qt.ItemDataRole.EditRole)


class KeyTable(QWidget):
    """Key table view + a caption naming the track; row selection <-> document key selection."""

    def __init__(self, document: ClipDocument, parent=None):
        super().__init__(parent)
        self.doc = document
        self.model = KeyTableModel(document, self)
        # the path elided by parts (a long Biped path grew the window past the screen), kind apart
        self.caption = ElidedLabel("", self, elide=ELIDE_PATH)
        self.caption_info = QLabel()
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setItemDelegate(_ExactEditDelegate(self.view))
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setDefaultSectionSize(20)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.horizontalHeader().setDefaultSectionSize(78)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.caption, 1)
        top.addWidget(self.caption_info)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self._syncing = False
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection)
        self.model.modelReset.connect(self._after_reset)
        self._sync_timer = QTimer(self)  # mid-drag selection sync, as the model's (LIVE_TABLE_MS)
        self._sync_timer.setSingleShot(True)
        self._sync_timer.setInterval(LIVE_TABLE_MS)
        self._sync_timer.timeout.connect(self._sync_from_doc)
        document.keySelectionChanged.connect(self._on_key_selection)
        document.floatKeySelectionChanged.connect(self._on_key_selection)
        document.clipChanged.connect(self._after_live_edit)
        self._after_reset()

    def _on_key_selection(self) -> None:
        if self.doc.in_live_edit():
            if not self._sync_timer.isActive():
                self._sync_timer.start()
            return
        self._sync_from_doc()

    def _after_live_edit(self) -> None:
        if self._sync_timer.isActive() and not self.doc.in_live_edit():
            self._sync_from_doc()  # the drag ended: the final selection now

    def _after_reset(self) -> None:
        tr = self.model.track
        if tr is None:
            self.caption.setText("No rotation track selected")
            self.caption_info.setText("")
        elif self.model.float_name is not None:
            unit = fc.unit(tr)
            self.caption.setText(f"<b>{html.escape(self.model.float_name)}</b>")
            self.caption_info.setText(f"— float curve{' (' + unit + ')' if unit else ''}, {tr.n_keys} keys")
            self.caption_info.setToolTip("Double-click a cell to edit")
        else:
            kind = "Euler " + tr.order.upper() if tr.kind == "euler" else "Quaternion"
            self.caption.setText(f"<b>{html.escape(tr.path)}</b>")
            self.caption_info.setText(f"— {kind}, {tr.n_keys} keys")
            self.caption_info.setToolTip("Double-click a cell to edit")
        self.view.setColumnWidth(
            self.model.columnCount() and [c[1] for c in self.model._cols].index("mode"), 150
        )
        self._sync_from_doc()

    def _on_view_selection(self, *_):
        if self._syncing or self.model.track is None:
            return
        rows = {i.row() for i in self.view.selectionModel().selectedRows()}
        name = self.model.float_name
        if name is not None:  # the float curve's keys; the other shown curves keep theirs
            keys = {n: set(v) for n, v in self.doc.selected_float_keys.items() if n != name}
            if rows:
                keys[name] = rows
            self.doc.select_float_keys(keys)
            return
        # rows are whole keys (X, Y, Z); the other tracks keep their per-curve selection
        keys = {k: set(s) for k, s in self.doc.key_selection.items() if k[0] != self.model.track.path}
        if rows:
            keys.update({(self.model.track.path, ch): set(rows) for ch in range(3)})
        self.doc.select_keys(keys)

    def _sync_from_doc(self) -> None:
        self._sync_timer.stop()
        tr = self.model.track
        if tr is None:
            return
        if self.model.float_name is not None:
            rows = sorted(self.doc.selected_float_keys.get(self.model.float_name, ()))
        else:
            rows = sorted(self.doc.selected_keys.get(tr.path, ()))
        sm = self.view.selectionModel()
        current = {i.row() for i in sm.selectedRows()}
        self.view.viewport().update()  # the selected cells' fonts (per channel)
        if current == set(rows):
            return
        self._syncing = True
        try:
            sel = QItemSelection()
            last = self.model.columnCount() - 1
            # contiguous runs become one range (fast for thousands of rows)
            start = prev = None
            for r in rows + [None]:
                if start is None:
                    start = prev = r
                elif r is not None and r == prev + 1:
                    prev = r
                else:
                    sel.select(self.model.index(start, 0), self.model.index(prev, last))
                    start = prev = r
            sm.select(sel, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            if rows:
                self.view.scrollTo(self.model.index(rows[0], 0))
        finally:
            self._syncing = False
