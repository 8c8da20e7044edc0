"""The Problems dock: every problem of the clip in a sortable table filtered by kind; clicking a row
selects the track and key and moves the time cursor there. The rows come from
:class:`~curveeditor.app.model.problems.ProblemsModel`.
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import analysis

from ..common.elided import ElidedLabel, PathDelegate
from ..common.theme import PROBLEM_KINDS, Theme
from ..model.document import ClipDocument
from ..model.problems import KIND_LABELS, KindFilter, ProblemIndex, ProblemsModel

__all__ = ["ProblemsPanel"]


class ProblemsPanel(QWidget):
    """The Problems dock: a sortable table filtered by kind; clicking a row jumps there."""

    def __init__(self, document: ClipDocument, index: ProblemIndex, parent: QWidget | None = None):
        super().__init__(parent)
        self.doc = document
        self.model = ProblemsModel(index, self)
        self.proxy = KindFilter(self)
        self.proxy.setSourceModel(self.model)
        self.kind_box = QComboBox()
        self.kind_box.addItem("All kinds", None)
        for k in PROBLEM_KINDS:
            self.kind_box.addItem(KIND_LABELS[k], k)
        self.kind_box.currentIndexChanged.connect(lambda _i: self.proxy.set_kind(self.kind_box.currentData()))
        self.summary = ElidedLabel()
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        self.table.setColumnWidth(0, 200)
        # the path's middle parts go first: "Bip001/…/Bip001 L Finger12", never "Bip001/Bip001 Pel…"
        self.table.setItemDelegateForColumn(0, PathDelegate(self.table))
        self.table.clicked.connect(self._jump)
        self.table.activated.connect(self._jump)
        top = QHBoxLayout()
        top.addWidget(self.kind_box)
        top.addWidget(self.summary, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.table)
        self.model.modelReset.connect(self._update_summary)
        self._update_summary()

    def set_theme(self, theme: Theme) -> None:
        self.model.theme = theme
        self.model.layoutChanged.emit()

    def _update_summary(self) -> None:
        c = Counter(p.kind for p in self.model.rows)
        if not c:
            self.summary.setText("No problems found")
            return
        self.summary.setText(", ".join(f"{c[k]} {KIND_LABELS[k].lower()}" for k in PROBLEM_KINDS if c[k]))

    def _jump(self, proxy_index) -> None:
        src = self.proxy.mapToSource(proxy_index)
        if not src.isValid():
            return
        p = self.model.problem(src.row())
        self.jump_to(p)

    def jump_to(self, p: analysis.Problem) -> None:
        """Select the problem's track and key and move the time cursor there."""
        self.doc.select_paths([p.path])
        self.doc.set_time(p.time)
        self.doc.select_keys({p.path: {p.index}})
