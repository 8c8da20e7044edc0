"""The recipe panel: the toolbox operations as an ordered list of steps, previewed live.

Every change (a parameter, a step added, removed, enabled or moved, the scope) re-runs the recipe
with ``engine.recipe.run_recipe`` in a worker thread (the signals of one edit coalesced, 8 ms); a
newer run cancels the older one and stale results are dropped
(:class:`~curveeditor.app.workers.LatestRunner`). The result becomes ``document.preview`` (the
"after" state every view overlays). **Apply** bakes the preview into the clip as one undoable
command, **Discard** clears it. Recipes save and load as the JSON the CLI runs
(``curveeditor-cli clean --recipe``); disabled steps are not saved (the format has no such flag).

Parameter widgets are built from each op's :class:`~curveeditor.engine.recipe.ParamSpec` (units as
suffixes, bounds as ranges, choices as combo boxes, "auto" for ``None``, parameters that only apply
to one method shown only with it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine.recipe import OPS, REQUIRED, ParamSpec, Recipe, RecipeError, run_recipe

from .elided import ElidedLabel
from .workers import LatestRunner, run_in_thread

__all__ = ["RecipePanel", "StepState", "GUI_DEFAULTS"]

#: Starting values for parameters the recipe format requires (no default in the engine).
GUI_DEFAULTS: dict[tuple[str, str], Any] = {
    ("reduce", "max_error"): 0.5,
    ("smooth", "sigma"): 0.05,
    ("smooth", "cutoff"): 6.0,
    ("max_speed", "speed"): 720.0,
    ("to_kind", "kind"): "quaternion",
}

_OP_TITLES = {
    "unwrap": "Unwrap (Euler filter)",
    "unflip": "Unflip (hemisphere / unwrap)",
    "resample": "Resample",
    "reduce": "Reduce keys",
    "smooth": "Smooth",
    "despike": "Despike",
    "max_speed": "Max speed",
    "limit": "Limit yaw / pitch",
    "to_order": "Convert rotation order",
    "to_kind": "Convert Euler / quaternion",
}

_UNIT_SUFFIX = {"deg": " \u00b0", "deg/s": " \u00b0/s", "s": " s", "Hz": " Hz"}
#: A running preview shows its progress bar and Cancel button after this long (ms).
PROGRESS_DELAY_MS = 300

#: Coalescing delay (ms) of preview runs. Only a floor: a newer run cancels an older one anyway, so
#: this merely folds the signals of one edit (a spin box step, a list move) into one run.
_DEBOUNCE_MS = 8


def _warm_up(_token, _progress) -> None:
    """Import the engine op modules (about 2 s of scipy imports on first use) off the GUI thread, so
    the first preview costs what the recipe costs."""
    import importlib

    for name in {s.module for s in OPS.values()} | {"diff"}:
        try:
            importlib.import_module(f"curveeditor.engine.{name}")
        except ImportError:
            pass  # reported by run_recipe when a step needs it


def _default(op: str, p: ParamSpec) -> Any:
    if p.default is REQUIRED:
        if (op, p.name) in GUI_DEFAULTS:
            return GUI_DEFAULTS[(op, p.name)]
        if p.kind == "choice":
            return p.choices[0]
        return p.minimum if p.minimum is not None else 0.0
    return list(p.default) if isinstance(p.default, tuple) else p.default


def _applies(p: ParamSpec, params: dict[str, Any]) -> bool:
    return p.when is None or params.get(p.when[0]) == p.when[1]


class StepState:
    """One step as edited in the panel: op, every parameter's value (also inactive ones, so
    switching a method back keeps what was typed), and whether it is enabled."""

    def __init__(self, op: str, params: dict[str, Any] | None = None, enabled: bool = True):
        if op not in OPS:
            raise RecipeError(f"unknown op {op!r}; ops: {', '.join(OPS)}")
        self.op = op
        self.enabled = enabled
        self.params: dict[str, Any] = {p.name: _default(op, p) for p in OPS[op].params}
        for k, v in (params or {}).items():
            self.params[k] = list(v) if isinstance(v, tuple) else v

    def step_dict(self) -> dict[str, Any]:
        """The JSON object of this step (only the parameters that apply)."""
        out: dict[str, Any] = {"op": self.op}
        for p in OPS[self.op].params:
            if _applies(p, self.params):
                out[p.name] = copy.copy(self.params[p.name])
        return out

    def summary(self) -> str:
        parts = []
        for p in OPS[self.op].params:
            if not _applies(p, self.params):
                continue
            v = self.params[p.name]
            unit = _UNIT_SUFFIX.get(p.unit, f" {p.unit}" if p.unit else "").strip()
            if v is None:
                parts.append(f"{p.name} auto")
            elif isinstance(v, bool):
                parts.append(f"{p.name} {'on' if v else 'off'}")
            elif isinstance(v, (list, tuple)):
                parts.append(f"{p.name} {v[0]:g}..{v[1]:g}{unit}")
            elif isinstance(v, float):
                parts.append(f"{p.name} {v:g}{unit}")
            else:
                parts.append(f"{p.name} {v}")
        return ", ".join(parts)


class RecipePanel(QWidget):
    """Live-previewed clean-up recipe for the document's tracks.

    Args:
        document: the shared :class:`~curveeditor.app.document.ClipDocument`.

    Signals:
        resultReady(object): a :class:`~curveeditor.engine.recipe.RecipeResult` was set as preview.
        statusChanged(str): the status line text changed.
        applied(): the preview was applied to the clip (one undo step).
    """

    resultReady = Signal(object)
    #: (before clip, preview clip, list[TrackDiff]) just before the preview is shown: the diffs the
    #: worker computed with the recipe, so the diff panel need not recompute them.
    diffsComputed = Signal(object, object, list)
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
        self._param_widgets: dict[str, tuple[QLabel, QWidget]] = {}
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
            act = menu.addAction(_OP_TITLES.get(name, name))
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

        self.list = QListWidget(self)
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
        self.params_box = QGroupBox("Parameters", self)
        self.params_form = QFormLayout(self.params_box)
        self.params_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.op_doc = QLabel(self.params_box)
        self.op_doc.setWordWrap(True)
        self.op_doc.setStyleSheet("color: palette(mid);")

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
        lay.addWidget(self.list, 2)
        # The parameters scroll: their form must not set the dock's minimum height (with the 3D
        # view above it, the right-hand column forced a 957 px window onto a 768 px screen).
        self.params_scroll = QScrollArea(self)
        self.params_scroll.setWidgetResizable(True)
        self.params_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.params_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.params_scroll.setWidget(self.params_box)
        self.params_scroll.setMinimumHeight(60)
        lay.addWidget(self.params_scroll, 3)
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

    def warm_up(self) -> None:
        """Import the engine's op modules on a worker thread (once). The window calls this after the
        first clip is drawn: started from ``__init__`` it held the GIL through ~1.9 s of
        scipy.signal / scipy.ndimage imports while the window tried to paint (cold start)."""
        if not self._warmed:
            self._warmed = True
            run_in_thread(_warm_up)

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
            self._sync_widgets(index)
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

    # ------------------------------------------------------------------ preview
    def scope_paths(self) -> list[str] | None:
        """Tracks the recipe runs on: the selection, or ``None`` = all tracks."""
        if self.scope.currentData() == "all":
            return None
        return list(self.document.selected_paths)

    def _changed(self) -> None:
        self._active = True
        self._debounce.start()

    def rerun(self) -> None:
        """Schedule a preview run now (debounced)."""
        self._changed()

    def _run_now(self) -> None:
        if not self._active:
            return
        enabled = [s for s in self.steps if s.enabled]
        if not enabled:
            self.runner.cancel()
            self._clear_preview()
            self._set_status("No enabled steps: nothing to preview.")
            return
        try:
            recipe = self.recipe()
        except RecipeError as e:
            self.runner.cancel()
            self._clear_preview()
            self._set_status(str(e), error=True)
            return
        paths = self.scope_paths()
        if paths is not None and not paths:
            self.runner.cancel()
            self._clear_preview()
            self._set_status("Select a track (or run on all tracks).")
            return
        clip = self.document.clip
        self._run_clip = clip
        self._set_status("Running\u2026")

        def job(token, progress):
            def tracks_done(done: int, total: int) -> None:
                progress(done / max(total, 1), f"{done} of {total} tracks")

            return run_recipe(clip, recipe, paths, cancel=token, progress=tracks_done)

        self.runner.submit(job)

    def _on_finished(self, _gen: int, result, seconds: float) -> None:
        if not self._active:
            return
        if self._run_clip is not self.document.clip:  # the clip changed while we ran
            self._debounce.start()
            return
        self.result = result
        self.diffsComputed.emit(self._run_clip, result.clip, list(result.diffs))
        self.document.set_preview(result.clip)
        n = len(result.changes)
        self._set_status(f"Preview of {n} track{'s' if n != 1 else ''} in {seconds * 1000:.0f} ms.")
        self._show_changes(result)
        self._update_buttons()
        self.resultReady.emit(result)

    def _on_failed(self, _gen: int, message: str, _tb: str) -> None:
        if not self._active:
            return
        self._clear_preview()
        self._set_status(message, error=True)

    def _show_changes(self, result) -> None:
        lines = []
        for path, log in list(result.changes.items())[:4]:
            lines.append(f"<b>{path}</b>: " + "; ".join(s.split(": ", 1)[-1] for s in log))
        more = len(result.changes) - 4
        if more > 0:
            lines.append(f"\u2026 and {more} more tracks")
        diffs = {d.path: d for d in result.diffs}
        sel = self.document.selected_paths[:1]
        if sel and sel[0] in diffs:
            d = diffs[sel[0]]
            lines.append(
                f"{sel[0]}: keys {d.keys_before} \u2192 {d.keys_after}, "
                f"max {d.max_error:.2f}\u00b0, RMS {d.rms_error:.2f}\u00b0"
            )
        self.changes_label.setText("<br>".join(lines))

    def _clear_preview(self) -> None:
        self.result = None
        self.changes_label.setText("")
        self.document.set_preview(None)
        self._update_buttons()

    def apply(self) -> bool:
        """Bake the preview into the clip as one undoable step. Returns False when there is none."""
        preview = self.document.preview
        if preview is None or self.result is None:
            return False
        if self._run_clip is not self.document.clip:
            # The clip was edited after this preview was computed: baking it would undo that edit.
            self._set_status("The clip changed since this preview; recomputing\u2026", error=True)
            self._changed()
            return False
        self._active = False
        self._debounce.stop()
        self.runner.cancel()
        self._ignore_clip_change = True
        try:
            self.document.apply_clip(preview, "Apply recipe")
        finally:
            self._ignore_clip_change = False
        self._clear_preview()
        self._set_status("Applied (Ctrl+Z to undo). Change a parameter to preview again.")
        self.applied.emit()
        return True

    def cancel_run(self) -> None:
        """Stop the running preview; the clip and any earlier preview stay as they are."""
        if not self.runner.busy:
            return
        self._active = False
        self._debounce.stop()
        self.runner.cancel()
        self._set_status("Preview cancelled. Change a parameter to preview again.")

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.progress_bar.setValue(0)
            self.progress_bar.setFormat("running…")
            self._progress_timer.start()
        else:
            self._progress_timer.stop()
            self.progress_row.hide()

    def _show_progress(self) -> None:
        if self.runner.busy:
            self.progress_row.show()

    def _on_progress(self, _gen: int, fraction: float, text: str) -> None:
        self.progress_bar.setValue(round(1000 * fraction))
        self.progress_bar.setFormat(text)

    def discard(self) -> None:
        """Drop the preview and stop previewing until the next change."""
        self._active = False
        self._debounce.stop()
        self.runner.cancel()
        self._clear_preview()
        self._set_status("Preview discarded.")

    def shutdown(self) -> None:
        """Stop the worker (call before the application quits)."""
        self._debounce.stop()
        self.runner.shutdown()

    def status_text(self) -> str:
        return self._status

    def _on_doc_selection(self) -> None:
        if self._active and self.scope.currentData() == "selected":
            self._debounce.start()

    def _on_doc_clip(self) -> None:
        if self._active and not self._ignore_clip_change:
            self.apply_button.setEnabled(False)  # the preview is stale until the re-run lands
            self._debounce.start()

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
            item.setText(f"{i + 1}. {_OP_TITLES.get(s.op, s.op)}   {s.summary()}")
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

    # ------------------------------------------------------------------ parameter widgets
    def _clear_form(self) -> None:
        while self.params_form.rowCount():
            self.params_form.removeRow(0)
        self._param_widgets = {}

    def _show_params(self, row: int) -> None:
        self._update_buttons()
        self._clear_form()
        if not (0 <= row < len(self.steps)):
            self.params_box.setTitle("Parameters")
            placeholder = ElidedLabel("Select a step to edit its parameters.", self.params_box)
            self.params_form.addRow(placeholder)
            return
        s = self.steps[row]
        self.params_box.setTitle(f"{row + 1}. {_OP_TITLES.get(s.op, s.op)}")
        # one elided line (full text in the tooltip): a word-wrapped label in the form was cut off
        # at the bottom in a short dock
        self.op_doc = ElidedLabel(OPS[s.op].doc, self.params_box, elide=Qt.TextElideMode.ElideRight)
        self.params_form.addRow(self.op_doc)
        if not OPS[s.op].params:
            self.params_form.addRow(QLabel("No parameters.", self.params_box))
        for p in OPS[s.op].params:
            w = self._make_widget(row, s, p)
            label = QLabel(p.name.replace("_", " ").capitalize() + ":", self.params_box)
            label.setToolTip(p.doc)
            w.setToolTip(p.doc + (f" ({p.unit})" if p.unit else ""))
            self.params_form.addRow(label, w)
            self._param_widgets[p.name] = (label, w)
        self._sync_visibility(row)

    def _sync_visibility(self, row: int) -> None:
        s = self.steps[row]
        for p in OPS[s.op].params:
            if p.name in self._param_widgets:
                label, w = self._param_widgets[p.name]
                on = _applies(p, s.params)
                label.setVisible(on)
                w.setVisible(on)

    def _sync_widgets(self, row: int) -> None:
        """Push the state's values into the widgets (after a programmatic ``set_param``)."""
        s = self.steps[row]
        for p in OPS[s.op].params:
            if p.name not in self._param_widgets:
                continue
            w = self._param_widgets[p.name][1]
            v = s.params[p.name]
            with QSignalBlocker(w):
                _set_widget_value(w, p, v)
        self._sync_visibility(row)

    def _make_widget(self, row: int, s: StepState, p: ParamSpec) -> QWidget:
        def commit(value: Any) -> None:
            if s.params.get(p.name) == value:
                return
            s.params[p.name] = value
            idx = self.steps.index(s) if s in self.steps else -1
            if idx < 0:
                return
            self._refresh_item(idx)
            if any(q.when and q.when[0] == p.name for q in OPS[s.op].params):
                self._sync_visibility(idx)
            self._changed()

        value = s.params[p.name]
        if p.kind == "choice":
            w = QComboBox(self.params_box)
            for c in p.choices:
                w.addItem(str(c).upper() if p.name == "order" else str(c), c)
            w.setCurrentIndex(max(0, list(p.choices).index(value) if value in p.choices else 0))
            w.currentIndexChanged.connect(lambda i, w=w: commit(w.itemData(i)))
            return w
        if p.kind == "bool":
            w = QCheckBox(self.params_box)
            w.setChecked(bool(value))
            w.toggled.connect(lambda on: commit(bool(on)))
            return w
        if p.kind == "int":
            w = QSpinBox(self.params_box)
            w.setRange(int(p.minimum if p.minimum is not None else -(10**6)), int(p.maximum or 10**6))
            w.setValue(int(value))
            w.valueChanged.connect(lambda v: commit(int(v)))
            return w
        if p.kind == "range":
            box = QWidget(self.params_box)
            h = QHBoxLayout(box)
            h.setContentsMargins(0, 0, 0, 0)
            lo, hi = _spin(p, box), _spin(p, box)
            lo.setValue(float(value[0]))
            hi.setValue(float(value[1]))
            lo.setPrefix("min ")
            hi.setPrefix("max ")
            h.addWidget(lo)
            h.addWidget(hi)

            def lo_changed(a: float) -> None:
                if a > hi.value():  # keep min <= max: drag the other end along
                    with QSignalBlocker(hi):
                        hi.setValue(a)
                commit([lo.value(), hi.value()])

            def hi_changed(b: float) -> None:
                if b < lo.value():
                    with QSignalBlocker(lo):
                        lo.setValue(b)
                commit([lo.value(), hi.value()])

            lo.valueChanged.connect(lo_changed)
            hi.valueChanged.connect(hi_changed)
            box.lo, box.hi = lo, hi  # type: ignore[attr-defined]
            return box
        # float / float_or_none
        w = _spin(p, self.params_box)
        if p.kind == "float_or_none":
            # The spin box's minimum shows "auto" and means None.
            w.setMinimum(w.minimum() - _step_for(p))
            w.setSpecialValueText("auto (clip rate)" if p.unit == "Hz" else "auto")
            w.setValue(w.minimum() if value is None else float(value))
            w.valueChanged.connect(lambda v, w=w: commit(None if v <= w.minimum() else float(v)))
        else:
            w.setValue(float(value))
            w.valueChanged.connect(lambda v: commit(float(v)))
        return w

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


def _step_for(p: ParamSpec) -> float:
    return {"deg": 0.1, "deg/s": 10.0, "s": 0.01, "Hz": 1.0}.get(p.unit, 0.1)


def _spin(p: ParamSpec, parent: QWidget) -> QDoubleSpinBox:
    w = QDoubleSpinBox(parent)
    decimals = {"deg": 3, "deg/s": 1, "s": 3, "Hz": 2}.get(p.unit, 3)
    w.setDecimals(decimals)
    lo = p.minimum if p.minimum is not None else -1e6
    if p.exclusive_minimum and p.minimum is not None:
        lo = p.minimum + 10.0**-decimals
    w.setRange(lo, p.maximum if p.maximum is not None else 1e6)
    w.setSingleStep(_step_for(p))
    w.setSuffix(_UNIT_SUFFIX.get(p.unit, f" {p.unit}" if p.unit else ""))
    w.setKeyboardTracking(False)
    w.setAccelerated(True)
    return w


def _set_widget_value(w: QWidget, p: ParamSpec, v: Any) -> None:
    if isinstance(w, QCheckBox):
        w.setChecked(bool(v))
    elif isinstance(w, QComboBox):
        i = w.findData(v)
        w.setCurrentIndex(max(i, 0))
    elif isinstance(w, QSpinBox):
        w.setValue(int(v))
    elif isinstance(w, QDoubleSpinBox):
        w.setValue(w.minimum() if v is None else float(v))
    elif hasattr(w, "lo"):
        with QSignalBlocker(w.lo), QSignalBlocker(w.hi):
            w.lo.setValue(float(v[0]))
            w.hi.setValue(float(v[1]))
