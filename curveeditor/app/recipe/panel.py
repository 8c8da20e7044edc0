"""The recipe panel: the toolbox operations as an ordered list of steps, previewed live.

Every change (a parameter, a step added, removed, enabled or moved, the scope) re-runs the recipe
with ``engine.recipe.run_recipe`` in a worker thread (the signals of one edit coalesced, 8 ms); a
newer run cancels the older one and stale results are dropped
(:class:`~curveeditor.app.common.workers.LatestRunner`). The result becomes ``document.preview`` (the
"after" state every view overlays). **Apply** bakes the preview into the clip as one undoable
command, **Discard** clears it. Recipes save and load as the JSON the CLI runs
(``curveeditor-cli clean --recipe``); disabled steps are not saved (the format has no such flag).

What is drawn lives apart: the steps' model in :mod:`.steps`, the parameter form (a widget per
:class:`~curveeditor.engine.recipe.ParamSpec`) in :mod:`.form`; this panel handles the list,
the runs, the preview and Apply / Discard / Save / Load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSignalBlocker, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine.recipe import OPS, Recipe, RecipeError

from ..common.workers import LatestRunner
from .form import ParamForm
from .preview import RecipePreview
from .steps import GUI_DEFAULTS, StepState, op_title

__all__ = ["RecipePanel", "StepState", "GUI_DEFAULTS"]


#: A running preview shows its progress bar and Cancel button after this long (ms).
PROGRESS_DELAY_MS = 300

#: Coalescing delay (ms) of preview runs. Only a floor: a newer run cancels an older one anyway, so
#: this merely folds the signals of one edit (a spin box step, a list move) into one run.
_DEBOUNCE_MS = 8


class _StepList(QListWidget):
    """The steps list, asking for room for about four steps (QListWidget's default 192 px made the
    panel want 424 px, which squeezed the 3D view above it to ~120 px or hid Apply under a scroll)."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(super().sizeHint().width(), 4 * self.fontMetrics().lineSpacing() + 16)


class RecipePanel(RecipePreview, QWidget):
    """Live-previewed clean-up recipe for the document's tracks.

    Args:
        document: the shared :class:`~curveeditor.app.model.document.ClipDocument`.

    Signals:
        resultReady(object): a :class:`~curveeditor.engine.recipe.RecipeResult` was set as preview.
        statusChanged(str): the status line text changed.
        applied(): the preview was applied to the clip (one undo step).
    """

    resultReady = Signal(object)
    #: (before clip, preview clip, list[TrackDiff]) just before the preview is shown: the diffs the
    #: worker computed with the recipe, so the diff panel need not recompute them.
    diffsComputed = Signal(object, object, list)
    #: (before clip, preview clip, {path: [StepFigure]}) with ``diffsComputed``: each step's figure
    #: against the track just before it (``RecipeResult.figures``), for the Diff dock.
    figuresComputed = Signal(object, object, object)
    statusChanged = Signal(str)
    applied = Signal()

    def __init__(self, document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.steps: list[StepState] = []
        self.result = None  # last RecipeResult shown as preview
        self._active = False  # a preview is wanted (set by panel edits, cleared by Apply/Discard)
        self._ignore_clip_change = False
        self._run_clip = None
        self._status = ""
        self._status_error = False
        self._error_color = "#e05050"

        self.runner = LatestRunner(self)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.progress.connect(self._on_progress)
        self.runner.busyChanged.connect(self._on_busy)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(_DEBOUNCE_MS)
        self._debounce.timeout.connect(self._run_now)

        # ---- step list + buttons
        self.add_button = QToolButton(self)
        self.add_button.setText("Add step")
        self.add_button.setToolTip("Add a toolbox operation at the end of the recipe")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.add_button)
        self.add_actions: dict[str, QAction] = {}
        for name, spec in OPS.items():
            act = menu.addAction(op_title(name))
            act.setToolTip(spec.doc)
            act.setStatusTip(spec.doc)
            act.triggered.connect(lambda _=False, n=name: self.add_step(n))
            self.add_actions[name] = act
        menu.setToolTipsVisible(True)
        menu.aboutToShow.connect(self.warm_up)  # a step is coming: its imports start now
        self.add_button.setMenu(menu)

        def tool(text: str, tip: str, slot: Callable[[], None]) -> QToolButton:
            b = QToolButton(self)
            b.setText(text)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            return b

        self.remove_button = tool("Remove", "Remove the selected step (Del)", self.remove_current)
        self.up_button = tool("\u25b2", "Move the selected step up", lambda: self.move_current(-1))
        self.down_button = tool("\u25bc", "Move the selected step down", lambda: self.move_current(1))

        self.list = _StepList(self)
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setToolTip("Steps run top to bottom; drag to reorder, untick to skip a step")
        self.list.model().rowsMoved.connect(self._on_rows_moved)
        self.list.itemChanged.connect(self._on_item_changed)
        self.list.currentRowChanged.connect(self._show_params)
        self.list.setMinimumHeight(60)
        del_action = QAction(self.list)
        del_action.setShortcut(Qt.Key.Key_Delete)
        del_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        del_action.triggered.connect(self.remove_current)
        self.list.addAction(del_action)

        # ---- parameters of the current step
        self.params_box = ParamForm(self, self._on_param_committed)

        # ---- scope, status, apply/discard, save/load
        self.scope = QComboBox(self)
        self.scope.addItem("Selected tracks", "selected")
        self.scope.addItem("All tracks", "all")
        self.scope.setToolTip("Which rotation tracks the recipe runs on")
        self.scope.currentIndexChanged.connect(lambda _i: self._changed())

        self.status_label = QLabel(self)
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.changes_label = QLabel(self)
        self.changes_label.setWordWrap(True)
        small = self.changes_label.font()
        small.setPointSizeF(max(small.pointSizeF() * 0.9, 7.0))
        self.changes_label.setFont(small)

        # A long run (all tracks of a big clip, key reduction) shows progress and can be cancelled;
        # the bar appears only after PROGRESS_DELAY_MS so quick previews do not flicker.
        self.progress_bar = QProgressBar(self)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop the running preview (Esc in the panel)")
        self.cancel_button.clicked.connect(self.cancel_run)
        self._progress_timer = QTimer(self)
        self._progress_timer.setSingleShot(True)
        self._progress_timer.setInterval(PROGRESS_DELAY_MS)
        self._progress_timer.timeout.connect(self._show_progress)
        self.progress_row = QWidget(self)
        prow = QHBoxLayout(self.progress_row)
        prow.setContentsMargins(0, 0, 0, 0)
        prow.addWidget(self.progress_bar, 1)
        prow.addWidget(self.cancel_button)
        self.progress_row.hide()

        self.apply_button = QPushButton("Apply", self)
        self.apply_button.setToolTip("Bake the preview into the clip (one undo step)")
        self.apply_button.clicked.connect(self.apply)
        self.discard_button = QPushButton("Discard", self)
        self.discard_button.setToolTip("Drop the preview; the clip is unchanged")
        self.discard_button.clicked.connect(self.discard)
        self.save_button = QPushButton("Save\u2026", self)
        self.save_button.setToolTip("Save the enabled steps as a recipe JSON (runs with curveeditor-cli)")
        self.save_button.clicked.connect(self._save_dialog)
        self.load_button = QPushButton("Load\u2026", self)
        self.load_button.setToolTip("Load a recipe JSON")
        self.load_button.clicked.connect(self._load_dialog)

        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        row.addWidget(self.up_button)
        row.addWidget(self.down_button)
        scope_row = QHBoxLayout()
        scope_row.addWidget(QLabel("Run on:", self))
        scope_row.addWidget(self.scope, 1)
        # Apply/Discard and Load/Save in two rows: four buttons in one row made the dock's minimum
        # width 346 px, which on a small screen squeezed the graphs under half the window.
        apply_row = QVBoxLayout()
        first, second = QHBoxLayout(), QHBoxLayout()
        first.addWidget(self.apply_button)
        first.addWidget(self.discard_button)
        second.addStretch(1)
        second.addWidget(self.load_button)
        second.addWidget(self.save_button)
        apply_row.addLayout(first)
        apply_row.addLayout(second)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(row)
        lay.addWidget(self.list, 1)
        # The parameters scroll: their form must not set the dock's minimum height (with the 3D
        # view above it, the right-hand column forced a 957 px window onto a 768 px screen).
        self.params_scroll = QScrollArea(self)
        self.params_scroll.setWidgetResizable(True)
        self.params_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.params_scroll.setWidget(self.params_box)
        self.params_scroll.setMinimumHeight(60)
        lay.addWidget(self.params_scroll, 4)  # extra height goes to the parameters, not the list
        lay.addLayout(scope_row)
        lay.addWidget(self.status_label)
        lay.addWidget(self.progress_row)
        lay.addWidget(self.changes_label)
        lay.addLayout(apply_row)

        self._warmed = False
        document.selectionChanged.connect(self._on_doc_selection)
        document.clipChanged.connect(self._on_doc_clip)
        self._set_status("Add a step to preview a clean-up.")
        self._update_buttons()
        self._show_params(-1)

    # ------------------------------------------------------------------ recipe model
    def add_step(self, op: str, params: dict[str, Any] | None = None, enabled: bool = True) -> StepState:
        """Append a step (parameters default from the op's spec) and preview."""
        state = StepState(op, params, enabled)
        self.steps.append(state)
        self._rebuild_list(select=len(self.steps) - 1)
        self._changed()
        return state

    def add_step_dict(self, step: dict[str, Any]) -> StepState:
        """Append a step given as its JSON object (``{"op": "resample", "hz": 30, ...}``)."""
        d = dict(step)
        return self.add_step(d.pop("op"), d)

    def remove_current(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.steps):
            del self.steps[row]
            self._rebuild_list(select=min(row, len(self.steps) - 1))
            self._changed()

    def move_current(self, delta: int) -> None:
        row = self.list.currentRow()
        new = row + delta
        if 0 <= row < len(self.steps) and 0 <= new < len(self.steps):
            self.steps[row], self.steps[new] = self.steps[new], self.steps[row]
            self._rebuild_list(select=new)
            self._changed()

    def set_enabled(self, index: int, enabled: bool) -> None:
        self.steps[index].enabled = enabled
        item = self.list.item(index)
        with QSignalBlocker(self.list):
            item.setCheckState(Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked)
        self._changed()

    def set_param(self, index: int, name: str, value: Any) -> None:
        """Set a parameter of step ``index`` (as typed in its widget) and preview."""
        self.steps[index].params[name] = value
        if self.list.currentRow() == index:
            self.params_box.sync_widgets()
        self._refresh_item(index)
        self._changed()

    def recipe(self) -> Recipe:
        """The enabled steps as a validated :class:`Recipe` (``RecipeError`` if a value is bad)."""
        return Recipe.of(*[s.step_dict() for s in self.steps if s.enabled])

    def set_recipe(self, recipe: Recipe) -> None:
        """Replace the steps with ``recipe``'s and preview."""
        self.steps = [StepState(s.op, dict(s.params)) for s in recipe.steps]
        self._rebuild_list(select=0 if self.steps else -1)
        self._changed()

    def save_recipe(self, path: str) -> None:
        self.recipe().save(path)

    def load_recipe(self, path: str) -> None:
        """Load a recipe file; ``RecipeError`` (naming file and step) when it is invalid."""
        self.set_recipe(Recipe.load(path))

    # ------------------------------------------------------------------ scope, status, buttons
    def scope_paths(self) -> list[str] | None:
        """Tracks the recipe runs on: the selection, or ``None`` = all tracks."""
        if self.scope.currentData() == "all":
            return None
        return list(self.document.selected_paths)

    def _changed(self) -> None:
        self._active = True
        self._debounce.start()

    def status_text(self) -> str:
        return self._status

    def set_theme(self, theme) -> None:
        """Follow the UI theme: the error colour of the status line (widgets use the palette)."""
        self._error_color = "#ff6b6b" if theme.dark else "#c0392b"
        self._set_status(self._status, self._status_error)

    def _set_status(self, text: str, error: bool = False) -> None:
        self._status = text
        self._status_error = error
        color = self._error_color if error else "palette(text)"
        self.status_label.setStyleSheet(f"color: {color};")
        self.status_label.setText(text)
        self.statusChanged.emit(text)

    def _update_buttons(self) -> None:
        has = (
            self.document.preview is not None
            and self.result is not None
            and self._run_clip is self.document.clip
        )
        self.apply_button.setEnabled(has)
        self.discard_button.setEnabled(has or self._active)
        row = self.list.currentRow()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < len(self.steps) - 1)
        self.save_button.setEnabled(any(s.enabled for s in self.steps))

    # ------------------------------------------------------------------ list widget
    def _rebuild_list(self, select: int = -1) -> None:
        with QSignalBlocker(self.list):
            self.list.clear()
            for i, s in enumerate(self.steps):
                item = QListWidgetItem()
                item.setFlags(
                    Qt.ItemFlag.ItemIsEnabled
                    | Qt.ItemFlag.ItemIsSelectable
                    | Qt.ItemFlag.ItemIsUserCheckable
                    | Qt.ItemFlag.ItemIsDragEnabled
                )
                item.setData(Qt.ItemDataRole.UserRole, id(s))
                item.setCheckState(Qt.CheckState.Checked if s.enabled else Qt.CheckState.Unchecked)
                self.list.addItem(item)
                self._refresh_item(i)
            self.list.setCurrentRow(select)
        self._show_params(select)

    def _refresh_item(self, i: int) -> None:
        s = self.steps[i]
        item = self.list.item(i)
        if item is None:
            return
        with QSignalBlocker(self.list):
            item.setText(f"{i + 1}. {op_title(s.op)}   {s.summary()}")
            item.setToolTip(OPS[s.op].doc)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        if 0 <= row < len(self.steps):
            enabled = item.checkState() == Qt.CheckState.Checked
            if enabled != self.steps[row].enabled:
                self.steps[row].enabled = enabled
                self._changed()

    def _on_rows_moved(self, *_args) -> None:
        # Drag-and-drop moved items: reorder our states to match the list.
        by_id = {id(s): s for s in self.steps}
        order = [by_id[self.list.item(i).data(Qt.ItemDataRole.UserRole)] for i in range(self.list.count())]
        if order != self.steps:
            self.steps = order
            QTimer.singleShot(0, lambda: self._rebuild_list(select=self.list.currentRow()))
            self._changed()

    # ------------------------------------------------------------------ parameter form (form)
    def _show_params(self, row: int) -> None:
        self._update_buttons()
        valid = 0 <= row < len(self.steps)
        self.params_box.show_step(row + 1, self.steps[row] if valid else None)

    def _on_param_committed(self, s: StepState, name: str) -> None:
        """A parameter widget changed ``s.params[name]``: refresh its list row, show the parameters
        that apply now, re-run the preview."""
        idx = self.steps.index(s) if s in self.steps else -1
        if idx < 0:
            return
        self._refresh_item(idx)
        if any(q.when and q.when[0] == name for q in OPS[s.op].params):
            self.params_box.sync_visibility()
        self._changed()

    @property
    def op_doc(self):
        """The current step's description line (an :class:`ElidedLabel`)."""
        return self.params_box.op_doc

    @property
    def _param_widgets(self) -> dict:
        return self.params_box.param_widgets

    # ------------------------------------------------------------------ files
    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save recipe", "recipe.json", "Recipe (*.json)")
        if not path:
            return
        try:
            self.save_recipe(path)
        except (RecipeError, OSError) as e:
            QMessageBox.warning(self, "Save recipe", f"Could not save the recipe:\n{e}")
            return
        self._set_status(f"Saved {path}")

    def _load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load recipe", "", "Recipe (*.json);;All files (*)")
        if path:
            self.load_recipe_interactive(path)

    def load_recipe_interactive(self, path: str) -> bool:
        """Load ``path``; a bad file shows a message box with the ``RecipeError`` text."""
        try:
            self.load_recipe(path)
        except RecipeError as e:
            QMessageBox.warning(self, "Load recipe", f"This recipe cannot be used:\n\n{e}")
            return False
        self._set_status(f"Loaded {path}")
        return True
