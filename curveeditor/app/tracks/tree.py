"""The track list: the clip's tracks as a tree by path, with a filter box and problem badges.

Rotation tracks come first, one row per bone: the path is split at ``/`` only (``mixamorig:Hips``
stays whole) and a track is its own parent node (``Hips`` holds ``Hips/Spine``). Then a "Read-only
curves" group with positions, scales and float curves. Column 0 is the bone name (compact
indentation so a 12-level Biped bone's name shows at the default dock width; the full path is the
tooltip), column 1 key counts, column 2 a badge per problem kind (from
:class:`~.problems.ProblemIndex`). "Problems only" keeps the tracks with problems (and their parents).
Selecting rows selects rotation tracks in the document (first = primary); :meth:`TrackTree.step`
moves the selection to the previous / next track in tree order (Up / Down from the graphs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import (
    QAbstractItemModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QRectF,
    QSize,
    QSortFilterProxyModel,
    Qt,
    QTimer,
)
from PySide6.QtGui import QAction, QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import float_curves as fc

from ..common.elided import elide_name, name_prefix
from ..common.theme import LIGHT, PROBLEM_KINDS, Theme
from ..model.document import ClipDocument
from ..model.problems import KIND_LABELS, ProblemIndex

_NO_PARENT = QModelIndex()

__all__ = ["TrackNode", "TrackTreeModel", "TrackTree", "PATH_ROLE", "TRACK_ROLE", "HAS_PROBLEMS_ROLE"]

PATH_ROLE = Qt.ItemDataRole.UserRole + 1  # full path (str) of the node
TRACK_ROLE = Qt.ItemDataRole.UserRole + 2  # rotation track path or None
HAS_PROBLEMS_ROLE = Qt.ItemDataRole.UserRole + 3  # bool: a rotation track with problems
OTHER_ROLE = Qt.ItemDataRole.UserRole + 4  # OtherTrack.name of a numeric read-only curve, or None
INDENT_PX = 8  # 12 levels = 96 px (Qt's default 20 px left no room for deep names)
MIN_INDENT_PX = 3  # the indentation shrinks down to this so that deep rows keep their whole name
SHORT = {"wrap": "W", "flip": "F", "hemisphere": "H", "gimbal": "G", "spike": "S", "pop": "P"}


@dataclass(eq=False)
class TrackNode:
    name: str
    full: str
    parent: TrackNode | None = None
    children: list[TrackNode] = field(default_factory=list)
    track: str | None = None  # rotation track path
    kind: str = ""  # "euler"/"quaternion" or read-only kind
    keys: int = 0
    readonly: bool = False
    group: bool = False
    other: str | None = None  # OtherTrack.name of a numeric read-only curve (viewable as a graph)

    def row(self) -> int:
        return self.parent.children.index(self) if self.parent else 0


#: More changed rows than this are announced with one layout signal instead of one signal per row.
MAX_ROW_SIGNALS = 64


def _split(path: str) -> list[str]:
    """``Hips/Spine`` -> [Hips, Spine]; ``mixamorig:Hips/mixamorig:Spine`` keeps the namespaces."""
    parts = [p for p in path.split("/") if p]
    return parts or [path or "(root)"]


def _group_node(
    groups: dict[tuple[int, str], TrackNode], top: TrackNode, chain: list[str], readonly: bool
) -> TrackNode:
    """The bone node for the names ``chain`` below ``top`` (a track or a plain bone: a track is its own
    parent node), found or created with a dict lookup per level instead of a scan of the children, the
    full name joined only for a new node. ``groups`` maps (id(parent), name) to the bone nodes."""
    node = top
    for i, name in enumerate(chain):
        key = (id(node), name)
        found = groups.get(key)
        if found is None:
            found = TrackNode(name, "/".join(chain[: i + 1]), node, readonly=readonly)
            node.children.append(found)
            groups[key] = found
        node = found
    return node


class TrackTreeModel(QAbstractItemModel):
    HEADERS = ("Track", "Keys", "Problems")

    def __init__(self, document: ClipDocument, problems: ProblemIndex, parent: QObject | None = None):
        super().__init__(parent)
        self.doc = document
        self.problems = problems
        self.theme: Theme = LIGHT
        self.root = TrackNode("", "")
        self._by_track: dict[str, TrackNode] = {}
        self._pending: set[str] = set()  # tracks changed by a live edit, counts not refreshed yet
        self.inspected = 0  # tests: tracks whose key count was looked at after edits
        document.clipChanged.connect(self._on_clip_changed)
        problems.updated.connect(self._on_problems)
        self.rebuild()

    # ------------------------------------------------------------------ building
    def rebuild(self) -> None:
        self._pending = set()
        self.beginResetModel()
        root = TrackNode("", "")
        by_track: dict[str, TrackNode] = {}
        clip = self.doc.clip
        # Group nodes by (parent, name): finding a track's parent was a scan of every level's
        # children plus a '/'-join of the prefix at every level, cubic in the depth: a 1,100-level BVH
        # chain took 54 s to list, 3,000 levels did not finish in 10 minutes (issue 11).
        groups: dict[tuple[int, str], TrackNode] = {}
        for tr in clip.tracks:
            parts = _split(tr.path)
            node = _group_node(groups, root, parts[:-1], readonly=False)
            # A bone node created earlier by a deeper track becomes this track (one row per bone).
            leaf = groups.get((id(node), parts[-1]))
            if leaf is None:
                leaf = TrackNode(parts[-1], tr.path, node)
                node.children.append(leaf)
                groups[(id(node), parts[-1])] = leaf
            leaf.track, leaf.kind, leaf.keys, leaf.full = tr.path, tr.kind, tr.n_keys, tr.path
            by_track[tr.path] = leaf
        floats = fc.float_tracks(clip)
        self._by_float = self._add_float_groups(root, floats)
        editable = {id(o) for o in floats}
        rest = [o for o in clip.other_tracks if id(o) not in editable and not o.meta.get("mirror_of")]
        if rest:
            group = TrackNode(f"Read-only curves ({len(rest)})", "", root, readonly=True, group=True)
            root.children.append(group)
            for ot in rest:
                node = _group_node(groups, group, [p for p in ot.path.split("/") if p], readonly=True)
                n = len(ot.times) if ot.times is not None else 0
                leaf = TrackNode(ot.attribute, ot.name, node, kind=ot.kind, keys=n, readonly=True)
                leaf.other = ot.name if ot.curve is not None else None
                node.children.append(leaf)
        self.root = root
        self._by_track = by_track
        self.endResetModel()

    @staticmethod
    def _add_float_groups(root: TrackNode, floats) -> dict[str, TrackNode]:
        """Editable float curves (``engine.float_curves``, in Unity's order): "Humanoid muscles"
        with a row per body part (Spine, Chest, ..., Left Hand fingers), "Blend shapes" and "Float
        curves" by path. Their editor-curve mirrors (the same curve) are not listed. Returns the
        rows by curve name."""
        rows: dict[str, TrackNode] = {}
        for cat, label, kind in (
            ("humanoid", "Humanoid muscles", "muscle"),
            ("blendshape", "Blend shapes", "blend shape"),
            ("float", "Float curves", "float"),
        ):
            items = [o for o in floats if fc.category(o) == cat]
            if not items:
                continue
            group = TrackNode(f"{label} ({len(items)})", "", root, group=True)
            root.children.append(group)
            parts: dict[object, TrackNode] = {}
            for o in items:
                if cat == "humanoid":
                    part = fc.body_part(o.attribute)[1]
                    key = (o.path, part)
                    parent = parts.get(key)
                    if parent is None:
                        name = f"{o.path}: {part}" if o.path else part
                        parent = TrackNode(name, "", group, group=True)
                        group.children.append(parent)
                        parts[key] = parent
                else:
                    parent = parts.get(o.path)
                    if parent is None:
                        parent = group
                        if o.path:
                            parent = TrackNode(o.path.rsplit("/", 1)[-1], o.path, group, group=True)
                            group.children.append(parent)
                        parts[o.path] = parent
                leaf = TrackNode(o.attribute, o.name, parent, kind=kind, keys=o.n_keys)
                leaf.other = o.name
                parent.children.append(leaf)
                rows[o.name] = leaf
        return rows

    def _on_clip_changed(self) -> None:
        paths = self.doc.changed_paths
        if paths is None:
            self.rebuild()
            return
        if self.doc.in_live_edit():
            # Mid-drag the counts wait for the drag's end (which re-sends the changed paths): each
            # dataChanged makes the filter proxy re-walk the rows (0.1 s per dope-sheet drag step).
            self._pending.update(paths)
            return
        paths = set(paths) | self._pending
        self._pending = set()
        recounted = self._recount_floats()
        for p in paths:
            node = self._by_track.get(p)
            if node is None:
                self.rebuild()
                return
            self.inspected += 1
            try:
                n = self.doc.clip.track(p).n_keys
            except KeyError:
                self.rebuild()
                return
            if n != node.keys:
                node.keys = n
                recounted.append(node)
        self._rows_changed(recounted, 1)

    def _recount_floats(self) -> list[TrackNode]:
        """Float-curve rows whose key count an edit changed (K, Delete on muscle keys)."""
        floats = getattr(self, "_by_float", {})
        if not floats:
            return []
        out = []
        for o in self.doc.clip.other_tracks:
            node = floats.get(o.name)
            if node is not None and o.kind == "float" and o.n_keys != node.keys:
                node.keys = o.n_keys
                out.append(node)
        return out

    def _rows_changed(self, nodes: list, column: int) -> None:
        """Tell the views that ``column`` of ``nodes`` changed: a dataChanged per row, or one layout
        signal past :data:`MAX_ROW_SIGNALS` rows (each row's signal is mapped through the filter proxy
        up the row's ancestors: 165 of them took 0.13 s after a dope-sheet drag on a 165-joint rig)."""
        if len(nodes) > MAX_ROW_SIGNALS:
            self.layoutAboutToBeChanged.emit()
            self.layoutChanged.emit()
            return
        for node in nodes:
            idx = self.index_of(node, column)
            self.dataChanged.emit(idx, idx)

    def _on_problems(self, paths) -> None:
        if paths is None:
            paths = self._by_track
        # One layout signal instead of a dataChanged per row past MAX_ROW_SIGNALS: each row's signal
        # makes the recursive filter proxy re-check the row's ancestors, quadratic on deep rigs (a
        # newly loaded 500-level chain took 12 s here, 3,000 levels minutes).
        self._rows_changed([n for p in paths if (n := self._by_track.get(p)) is not None], 2)

    # ------------------------------------------------------------------ lookup
    def node(self, index: QModelIndex) -> TrackNode:
        return index.internalPointer() if index.isValid() else self.root

    def index_of(self, node: TrackNode, column: int = 0) -> QModelIndex:
        if node is self.root or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.row(), column, node)

    def index_for_track(self, path: str) -> QModelIndex:
        node = self._by_track.get(path)
        return self.index_of(node) if node is not None else QModelIndex()

    # ------------------------------------------------------------------ Qt model API
    def index(self, row, column, parent=_NO_PARENT):
        pnode = self.node(parent)
        if 0 <= row < len(pnode.children):
            return self.createIndex(row, column, pnode.children[row])
        return QModelIndex()

    def parent(self, index=_NO_PARENT):
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer()
        p = node.parent
        if p is None or p is self.root:
            return QModelIndex()
        return self.createIndex(p.row(), 0, p)

    def rowCount(self, parent=_NO_PARENT):  # noqa: N802
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).children)

    def columnCount(self, parent=_NO_PARENT):  # noqa: N802
        return 3

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        node = index.internalPointer()
        f = Qt.ItemFlag.ItemIsEnabled
        if node.track is not None or node.other is not None:
            f |= Qt.ItemFlag.ItemIsSelectable
        return f

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        node: TrackNode = index.internalPointer()
        col = index.column()
        if role == PATH_ROLE:
            return node.full
        if role == TRACK_ROLE:
            return node.track
        if role == OTHER_ROLE:
            return node.other
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return node.name
            if col == 1:
                return str(node.keys) if (node.track or node.kind) else ""
            if col == 2 and node.track:
                c = self.problems.counts(node.track)
                return " ".join(f"{c[k]}{SHORT[k]}" for k in PROBLEM_KINDS if c[k])
            return None
        if role == Qt.ItemDataRole.UserRole and col == 2 and node.track:
            return self.problems.counts(node.track)
        if role == Qt.ItemDataRole.ToolTipRole:
            if node.track:
                c = self.problems.counts(node.track)
                probs = ", ".join(f"{c[k]} {KIND_LABELS[k].lower()}" for k in PROBLEM_KINDS if c[k])
                return f"{node.track}\n{node.kind} rotation, {node.keys} keys\n{probs or 'no problems'}"
            if node.other and not node.readonly:
                return f"{node.full}\n{node.kind} curve, {node.keys} keys (select to edit in the graphs)"
            if node.readonly and node.kind:
                view = " - select to view as a graph" if node.other else ""
                return f"{node.full}\n{node.kind} curve, {node.keys} keys (read-only{view})"
            return node.full or None
        if role == Qt.ItemDataRole.ForegroundRole and node.readonly:
            return QColor("#8a8d93")
        if role == Qt.ItemDataRole.FontRole and node.group:
            f = QFont()
            f.setItalic(True)
            return f
        if role == HAS_PROBLEMS_ROLE:
            return bool(node.track) and sum(self.problems.counts(node.track).values()) > 0
        return None


class NameDelegate(QStyledItemDelegate):
    """Bone names that do not fit lose the rig's prefix first (``elide_name``: "…L Finger0Nub"),
    then their start; the tree's fitted indentation (``TrackTree.fit_indentation``) makes that rare."""

    def __init__(self, tree: TrackTree):
        super().__init__(tree.view)
        self.tree = tree

    def initStyleOption(self, option, index):  # noqa: N802 - Qt API
        super().initStyleOption(option, index)
        text = option.text
        if text:
            shown = elide_name(text, self.tree.prefix, option.fontMetrics, option.rect.width() - 8)
            if shown != text:
                option.text = shown


class BadgeDelegate(QStyledItemDelegate):
    """Paints problem counts as coloured pills (one per kind)."""

    def __init__(self, model: TrackTreeModel, parent=None):
        super().__init__(parent)
        self.model = model

    def paint(self, painter: QPainter, option, index):
        counts = index.data(Qt.ItemDataRole.UserRole)
        if not counts:
            super().paint(painter, option, index)
            return
        self.initStyleOption(option, index)
        option.text = ""
        option.widget.style().drawControl(
            option.widget.style().ControlElement.CE_ItemViewItem, option, painter, option.widget
        )
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        f = painter.font()
        f.setPointSizeF(max(6.5, f.pointSizeF() * 0.85))
        f.setBold(True)
        painter.setFont(f)
        fm = painter.fontMetrics()
        x = option.rect.left() + 3
        h = fm.height() + 2
        y = option.rect.center().y() - h / 2
        for k in PROBLEM_KINDS:
            n = counts.get(k, 0)
            if not n:
                continue
            text = f"{n}{SHORT[k]}"
            w = fm.horizontalAdvance(text) + 8
            if x + w > option.rect.right():
                break
            rect = QRectF(x, y, w, h)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(self.model.theme.problems[k]))
            painter.drawRoundedRect(rect, h / 2, h / 2)
            painter.setPen(QColor("#000000") if k in ("gimbal", "wrap") else QColor("#ffffff"))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            x += w + 3
        painter.restore()

    def sizeHint(self, option, index):  # noqa: N802
        s = super().sizeHint(option, index)
        return QSize(max(s.width(), 90), s.height())


class _Filter(QSortFilterProxyModel):
    """Text filter on the full path, optionally only tracks with problems (parents kept)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.problems_only = False
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterRole(PATH_ROLE)
        self.setFilterKeyColumn(0)

    def set_problems_only(self, on: bool) -> None:
        self.refilter(lambda: setattr(self, "problems_only", bool(on)))
        self.sync_dynamic()

    def sync_dynamic(self) -> None:
        """Re-filter on source changes only while a filter is on: with none, every row is accepted
        anyway, and a dynamic filter re-checks each changed row's ancestors (recursive filtering), so
        a key-count change on 165 tracks after a dope-sheet drag cost ~0.15 s for nothing."""
        self.setDynamicSortFilter(self.problems_only or bool(self.filterRegularExpression().pattern()))

    def refilter(self, change=None) -> None:
        """Re-run the row filter around ``change()`` (Qt >= 6.9: begin/endFilterChange; before:
        invalidateRowsFilter, deprecated since)."""
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()
            if change is not None:
                change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            if change is not None:
                change()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, row, parent):  # noqa: N802 - Qt API
        if self.problems_only:
            idx = self.sourceModel().index(row, 0, parent)
            if not idx.data(HAS_PROBLEMS_ROLE):
                return False
        return super().filterAcceptsRow(row, parent)


class TrackTree(QWidget):
    """Filter box + tree view; keeps the tree selection and ``document.selected_paths`` in sync."""

    def __init__(self, document: ClipDocument, problems: ProblemIndex, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = document
        self.model = TrackTreeModel(document, problems, self)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.sync_dynamic()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tracks (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._on_filter)
        self.problems_only = QCheckBox("Problems only")
        self.problems_only.setToolTip("Show only the tracks with wraps, flips, gimbal lock, spikes or pops")
        self.problems_only.toggled.connect(self._on_problems_only)
        problems.updated.connect(self._on_problems_updated)
        self.view = QTreeView()
        self.view.setIndentation(INDENT_PX)
        # Names that do not fit lose their start, not their end: on namespaced rigs the end is what
        # tells bones apart ("…LeftHandMiddle3", not "mixamorig:LeftHand…"); the tooltip has the path.
        self.view.setTextElideMode(Qt.TextElideMode.ElideLeft)
        self.view.setModel(self.proxy)
        self.view.setUniformRowHeights(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setItemDelegateForColumn(2, BadgeDelegate(self.model, self.view))
        self.prefix = ""  # the rig's name prefix ("Bip001 ", "mixamorig:"): elided first
        self.view.setItemDelegateForColumn(0, NameDelegate(self))
        self.view.setAlternatingRowColors(True)
        # right click: select the bone's hierarchy (its children), as the View menu's Ctrl+Shift+H
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.act_hierarchy = QAction("Select hierarchy (children)", self.view)
        self.act_hierarchy.triggered.connect(lambda: self.select_hierarchy())
        self.view.addAction(self.act_hierarchy)
        hh = self.view.header()
        hh.setStretchLastSection(False)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        hh.resizeSection(2, self.problems_column_width())
        # The name takes the width: key counts are in the tooltip and the key table (the column is
        # back from the header's context menu), problem badges get a narrow column.
        self.view.setColumnHidden(1, True)
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        show_keys = QAction("Show key counts", hh)
        show_keys.setCheckable(True)
        show_keys.toggled.connect(lambda on: self.view.setColumnHidden(1, not on))
        hh.addAction(show_keys)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter, 1)
        top.addWidget(self.problems_only)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self._syncing = False
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection)
        self.model.modelReset.connect(self._after_reset)
        # the name column's width follows the dock: fit the indentation again after each resize
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_indentation)
        hh.sectionResized.connect(lambda i, _o, _n: i == 0 and self._fit_timer.start())
        self.view.expanded.connect(lambda _i: self._fit_timer.start())
        document.selectionChanged.connect(self._sync_from_doc)
        self._after_reset()

    def problems_column_width(self) -> int:
        """Narrow (the name takes the width), but never narrower than its own title: 44 px clipped
        "Problems" to "Problen". Title text plus the style's header margins (px)."""
        hh = self.view.header()
        margin = hh.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, hh)
        title = str(self.model.headerData(2, Qt.Orientation.Horizontal))
        return max(44, hh.fontMetrics().horizontalAdvance(title) + 2 * margin + 4)

    def set_theme(self, theme: Theme) -> None:
        self.model.theme = theme
        self.view.viewport().update()

    def _on_problems_only(self, on: bool) -> None:
        self.proxy.set_problems_only(on)
        self._expand(collapse_readonly=not self.filter.text().strip())
        self._sync_from_doc()

    def _on_problems_updated(self, _paths) -> None:
        if self.proxy.problems_only:
            self.proxy.refilter()
            self._expand(collapse_readonly=not self.filter.text().strip())

    def track_order(self) -> list[str]:
        """Rotation track paths in the order the (filtered) tree shows them."""
        out: list[str] = []

        def walk(parent):
            for r in range(self.proxy.rowCount(parent)):
                idx = self.proxy.index(r, 0, parent)
                p = idx.data(TRACK_ROLE)
                if p:
                    out.append(p)
                walk(idx)

        walk(QModelIndex())
        return out

    def step(self, delta: int) -> None:
        """Select the track ``delta`` rows after the primary one in tree order (Up = -1, Down = +1)."""
        order = self.track_order()
        if not order:
            return
        cur = self.doc.selected_paths[0] if self.doc.selected_paths else None
        i = order.index(cur) + delta if cur in order else 0
        self.doc.select_paths([order[max(0, min(i, len(order) - 1))]])

    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        self.proxy.sync_dynamic()
        self._expand(collapse_readonly=not text.strip())

    def _expand(self, collapse_readonly: bool) -> None:
        """Expand the rotation tracks; the (long) read-only group stays folded unless filtering."""
        self.view.expandAll()
        if collapse_readonly:
            for r in range(self.proxy.rowCount()):
                idx = self.proxy.index(r, 0)
                node = self.model.node(self.proxy.mapToSource(idx))
                if node.group and node.readonly:
                    self.view.collapse(idx)
        self.fit_indentation()

    def _after_reset(self) -> None:
        self.prefix = name_prefix(t.path.rsplit("/", 1)[-1] for t in self.doc.clip.tracks)
        self._expand(collapse_readonly=not self.filter.text().strip())
        self._sync_from_doc()

    def fit_indentation(self) -> int:
        """Indent levels by up to ``INDENT_PX``, less (down to ``MIN_INDENT_PX``) when a deep row's
        whole bone name would not fit the name column otherwise (a 13-level Biped finger at 8 px
        per level cut "Bip001 L Finger0Nub" to "…01 L Finger0Nub"). Returns the indentation."""
        width = self.view.header().sectionSize(0)
        if width <= 0:
            return self.view.indentation()
        fm = self.view.fontMetrics()
        best = float(INDENT_PX)
        stack = [(QModelIndex(), 0)]
        while stack:
            parent, depth = stack.pop()
            for r in range(self.proxy.rowCount(parent)):
                idx = self.proxy.index(r, 0, parent)
                name = idx.data(Qt.ItemDataRole.DisplayRole) or ""
                # the row's text starts after (depth + 1) indents (the root is decorated), + margins
                room = (width - fm.horizontalAdvance(name) - 14) / (depth + 1)
                best = min(best, room)
                if self.view.isExpanded(idx):
                    stack.append((idx, depth + 1))
        indent = int(max(MIN_INDENT_PX, min(INDENT_PX, best)))
        if indent != self.view.indentation():
            self.view.setIndentation(indent)
        return indent

    def _on_view_selection(self, *_):
        if self._syncing:
            return
        sm = self.view.selectionModel()
        rows = [i for i in sm.selectedRows(0)]
        paths = [self.proxy.data(i, TRACK_ROLE) for i in rows]
        paths = [p for p in paths if p]
        self.doc.select_other([n for n in (self.proxy.data(i, OTHER_ROLE) for i in rows) if n])
        cur = (
            self.proxy.data(sm.currentIndex().siblingAtColumn(0), TRACK_ROLE)
            if sm.currentIndex().isValid()
            else None
        )
        if cur in paths:
            paths.remove(cur)
            paths.insert(0, cur)
        if paths:
            self.doc.select_paths(paths)

    def _sync_from_doc(self) -> None:
        sm = self.view.selectionModel()
        self._syncing = True
        try:
            sel = QItemSelection()
            first = None
            for p in self.doc.selected_paths:
                src = self.model.index_for_track(p)
                idx = self.proxy.mapFromSource(src)
                if idx.isValid():
                    sel.select(idx, idx.siblingAtColumn(2))
                    first = first or idx
            sm.select(
                sel,
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )
            if first is not None:
                sm.setCurrentIndex(first, QItemSelectionModel.SelectionFlag.NoUpdate)
                self.view.scrollTo(first)
        finally:
            self._syncing = False

    def select_hierarchy(self, path: str | None = None) -> None:
        """Select the bone under the current row (or ``path``) and every track below it. A row that
        is a bone without a track of its own (a group) selects the tracks below it."""
        if path is None:
            idx = self.view.currentIndex()
            if idx.isValid():
                idx = idx.siblingAtColumn(0)
                path = self.proxy.data(idx, TRACK_ROLE) or self.proxy.data(idx, PATH_ROLE)
        if path is None and self.doc.selected_paths:
            path = self.doc.selected_paths[0]
        if path:
            self.doc.select_hierarchy(path)

    def select_track(self, path: str) -> None:
        self.doc.select_paths([path])
