"""A read-only table model over a list of rows with fixed column headers."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

__all__ = ["RowTableModel"]

_NO_PARENT = QModelIndex()


class RowTableModel(QAbstractTableModel):
    """Rows are ``self.rows`` (a list the subclass fills), columns ``HEADERS``; subclasses give
    ``data``. The count and header methods every such table repeated (the Problems dock, the batch
    report dialog)."""

    HEADERS: tuple[str, ...] = ()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list = []

    def rowCount(self, parent=_NO_PARENT):  # noqa: N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_NO_PARENT):  # noqa: N802
        return len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None
