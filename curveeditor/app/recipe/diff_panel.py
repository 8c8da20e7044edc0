"""Before/after diff: geodesic error per instant and per-track figures, from ``engine.diff``.

"Before" and "after" are the current clip and the recipe preview when a preview exists, else the
original (as loaded) and the current clip. Only tracks whose objects differ are compared (the engine
returns new track objects for changed tracks and keeps the others), and the comparison runs in a
worker thread because a long clip means hundreds of thousands of samples per track.

The strip plots the error in degrees of the primary selected track over time with the shared time
cursor (draggable to scrub); the table lists keys before/after, max and RMS error (degrees) per track.
Clicking a row selects that track.

For a recipe preview the table also shows each step's figure against the track just before it
(``engine.step_figures``, offered by the recipe worker: :meth:`DiffPanel.offer_figures`), so the
change a lossless step made on purpose (an unwrap's removed spins: "4 wraps") reads apart from a
bounded step's error against its tolerance ("0.505 ok"); the row's tooltip has the sentences and
notes, the line under the title one summary per step. The last file written shows its read-back
figures (:meth:`DiffPanel.show_written`).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine.diff import diff_tracks

from ..common.elided import ElidedLabel
from ..common.workers import LatestRunner

__all__ = ["DiffPanel", "changed_pairs"]

COLUMNS = ("Track", "Keys before", "Keys after", "Max error (\u00b0)", "RMS error (\u00b0)", "Steps")


def changed_pairs(before, after) -> list[tuple]:
    """``(before_track, after_track)`` for the rotation tracks present in both clips whose track
    objects differ and that have keys on both sides, in ``before``'s order."""
    if before is None or after is None or before is after:
        return []
    after_by_path = {t.path: t for t in after.tracks}
    out = []
    for t in before.tracks:
        a = after_by_path.get(t.path)
        if a is not None and a is not t and t.n_keys and a.n_keys:
            out.append((t, a))
    return out


def _compute(pairs, token) -> list:
    diffs = []
    for b, a in pairs:
        if token():
            return []
        diffs.append(diff_tracks(b, a))
    return diffs


class _NumberItem(QTableWidgetItem):
    """Sorts by value, not text."""

    def __init__(self, value: float, text: str):
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, float(value))
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other):  # noqa: D105
        return self.data(Qt.ItemDataRole.UserRole) < other.data(Qt.ItemDataRole.UserRole)


class DiffPanel(QWidget):
    """Error strip + per-track figures between "before" and "after".

    Args:
        document: the shared :class:`~curveeditor.app.model.document.ClipDocument`.

    Signals:
        diffsReady(list): the :class:`~curveeditor.engine.diff.TrackDiff` list now shown.
    """

    diffsReady = Signal(list)

    def __init__(self, document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.diffs: list = []
        self._by_path: dict[str, object] = {}
        self._pair_key: tuple | None = None
        self._mode = ""
        self._offered: tuple | None = None
        self._offered_figures: tuple | None = None
        self.step_figures: dict[str, list] = {}  # path -> StepFigure list of the preview shown
        self.theme = None
        self.computed = 0  # diff refreshes that (re)started a comparison (tests)

        self.title = ElidedLabel("", self)

        self.plot = pg.PlotWidget(self)
        self.plot.setMinimumHeight(110)
        self.plot.setLabel("left", "error", units="\u00b0")
        self.plot.setLabel("bottom", "time", units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.getPlotItem().setDownsampling(auto=True, mode="peak")
        self.plot.getPlotItem().setClipToView(True)
        self.plot.getAxis("left").enableAutoSIPrefix(False)  # degrees, never "m\u00b0"
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.curve = self.plot.plot(
            pen=pg.mkPen("#ff9a3c", width=1.5), fillLevel=0, brush=pg.mkBrush(255, 154, 60, 60)
        )
        self.max_line = pg.InfiniteLine(
            angle=0,
            pen=pg.mkPen("#ff9a3c", style=Qt.PenStyle.DashLine),
            label="max {value:.2f}\u00b0",
            labelOpts={"position": 0.88, "color": "#ffb070"},
        )
        self.plot.addItem(self.max_line)
        self.cursor = pg.InfiniteLine(
            angle=90, movable=True, pen=pg.mkPen("#e8e8e8", width=1), hoverPen=pg.mkPen("#ffffff", width=2)
        )
        self.cursor.setToolTip("Current time: drag to scrub")
        self.cursor.sigPositionChanged.connect(self._cursor_dragged)
        self.plot.addItem(self.cursor)
        # The message sits at the plot's centre in screen space (it used to sit at the time cursor in
        # data coordinates and ran off the plot's edge when the cursor was near the end).
        self.empty_text = pg.TextItem("", color="#999", anchor=(0.5, 0.5))
        vb = self.plot.getPlotItem().getViewBox()
        self.empty_text.setParentItem(vb)
        vb.sigResized.connect(self._place_empty_text)
        for ax in ("left", "bottom"):
            self.plot.getPlotItem().getAxis(ax).enableAutoSIPrefix(False)  # never "(x0.001)" degrees

        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        hdr = self.table.horizontalHeader()
        hdr.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(COLUMNS)):
            hdr.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemClicked.connect(self._row_clicked)

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        # One line per recipe step (what it removed on purpose, or its error against its tolerance).
        self.steps_label = ElidedLabel("", self)
        self.steps_label.setVisible(False)
        lay.addWidget(self.steps_label)
        lay.addWidget(split, 1)
        # The figures of the last file written, as read back (io.verify.WriteCheck): what the file on
        # disk plays, next to the in-memory before/after above.
        self.written = ElidedLabel("", self)
        self.written.setVisible(False)
        lay.addWidget(self.written)
        self.last_check = None

        self.runner = LatestRunner(self)
        self.runner.finished.connect(self._on_diffs)
        self.runner.failed.connect(lambda _g, msg, _tb: self._show_error(msg))

        document.previewChanged.connect(self.refresh)
        document.clipChanged.connect(self.refresh)
        document.selectionChanged.connect(self._plot_selected)
        document.timeChanged.connect(self._on_time)
        self._on_time(document.current_time)
        self.refresh()

    def show_written(self, check) -> None:
        """Show the read-back figures of the file just written (``io.verify.WriteCheck``): the one-line
        summary, and in the tooltip a line per track with keys written and the errors at and between
        keys against what the writer was handed."""
        self.last_check = check
        lines = [f"{check.path}: {check.summary()}"]
        lines += [n for n in (check.precision_line(), check.curves_line()) if n is not None]
        for t in check.tracks:
            f = t.figures
            lines.append(
                f"{t.path or '(root)'}: {t.keys_in} -> {t.keys_written} keys; max error "
                f"{f.max_error:.4f} deg (at {f.worst_time:.3f} s), at keys {f.key_error:.4f} deg"
            )
        self.written.setText(lines[0])
        self.written.setToolTip("\n".join(lines))
        self.written.setVisible(True)

    # ------------------------------------------------------------------ theme
    def set_theme(self, theme) -> None:
        """Follow the UI theme (:class:`~curveeditor.app.common.theme.Theme`): plot background, axes, grid,
        cursor and the error curve's colours."""
        self.theme = theme
        self.plot.setBackground(theme.plot_bg)
        for name in ("left", "bottom"):
            ax = self.plot.getAxis(name)
            ax.setPen(theme.plot_fg)
            ax.setTextPen(theme.plot_fg)
        self.plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        err = "#ff9a3c" if theme.dark else "#d06000"
        c = QColor(err)
        self.curve.setPen(pg.mkPen(err, width=1.5))
        self.curve.setBrush(pg.mkBrush(c.red(), c.green(), c.blue(), 60))
        self.max_line.setPen(pg.mkPen(err, style=Qt.PenStyle.DashLine))
        self.max_line.label.setColor("#ffb070" if theme.dark else "#a04800")
        self.cursor.setPen(pg.mkPen(theme.cursor, width=1))
        self.cursor.setHoverPen(pg.mkPen(theme.key_selected, width=2))
        self.empty_text.setColor(theme.plot_fg)

    # ------------------------------------------------------------------ data
    def before_after(self):
        """``(before, after, mode)``: the clips compared and a label for them."""
        doc = self.document
        if doc.preview is not None:
            return doc.clip, doc.preview, "preview"
        return doc.original, doc.clip, "edits"

    def offer_figures(self, before, after, figures: dict) -> None:
        """The recipe worker's step figures for ``before`` -> ``after`` (``RecipeResult.figures``):
        shown with the diffs while those are the compared clips."""
        self._offered_figures = (before, after, dict(figures))

    def offer_diffs(self, before, after, diffs: list) -> None:
        """Diffs already computed for ``before`` -> ``after`` (the recipe worker's ``RecipeResult.diffs``):
        when those become the compared clips, :meth:`refresh` shows them instead of recomputing."""
        self._offered = (before, after, list(diffs))

    def refresh(self) -> None:
        """Recompute the diffs (in the worker) if the compared clips changed.

        During a key drag (``document.in_live_edit()``) nothing is computed: the drag's end replaces
        the clip once more, and that one refresh shows the result (a diff per mouse move would queue
        worker runs that compete with the drag for the CPU)."""
        if self.document.in_live_edit():
            return
        before, after, mode = self.before_after()
        key = (id(before), id(after))
        if key == self._pair_key:
            return
        self._pair_key = key
        self._mode = mode
        self.computed += 1
        if mode == "preview":
            self.title.setText("<b>Diff</b>: recipe preview (after) vs current clip (before)")
        else:
            self.title.setText("<b>Diff</b>: current clip (after) vs original as loaded (before)")
        figs, self._offered_figures = self._offered_figures, None
        matched = figs is not None and figs[0] is before and figs[1] is after and mode == "preview"
        self.step_figures = figs[2] if matched else {}
        self._show_step_lines()
        offered, self._offered = self._offered, None
        if offered is not None and offered[0] is before and offered[1] is after:
            self.runner.cancel()
            pairs = {(b.path) for b, _a in changed_pairs(before, after)}
            self._on_diffs(0, [d for d in offered[2] if d.path in pairs], 0.0)
            return
        pairs = changed_pairs(before, after)
        if not pairs:
            self.runner.cancel()
            self._on_diffs(0, [], 0.0)
            return
        self.title.setText(self.title.text() + " &nbsp; <i>computing\u2026</i>")
        self.runner.submit(lambda token, _p: _compute(pairs, token))

    def wait(self, timeout_ms: int = 5000) -> bool:
        """Block until the worker is idle (tests)."""
        return self.runner.wait(timeout_ms)

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel the running computation and wait for the worker (call before quitting)."""
        return self.runner.shutdown(timeout_ms)

    def _on_diffs(self, _gen: int, diffs: list, seconds: float) -> None:
        self.diffs = list(diffs)
        self._by_path = {d.path: d for d in self.diffs}
        base = self.title.text().split(" &nbsp; <i>")[0]
        if self.diffs:
            worst = max(self.diffs, key=lambda d: d.max_error)
            base += (
                f" &nbsp; <span style='color:#999'>{len(self.diffs)} changed, "
                f"{'largest change' if self.step_figures else 'worst'} {worst.max_error:.2f}\u00b0</span>"
            )
        self.title.setText(base)
        self._fill_table()
        self._plot_selected()
        self.diffsReady.emit(self.diffs)

    def _show_error(self, message: str) -> None:
        self.title.setText(f"<span style='color:#e05050'>Diff failed: {message}</span>")

    # ------------------------------------------------------------------ views
    def _show_step_lines(self) -> None:
        from curveeditor.engine.step_figures import step_summary

        per_step: dict[int, list] = {}
        for fl in self.step_figures.values():
            for f in fl:
                per_step.setdefault(f.number, []).append(f)
        lines = [step_summary(per_step[k]) for k in sorted(per_step)]
        self.steps_label.setText("; ".join(lines))
        self.steps_label.setToolTip("\n".join(lines))
        self.steps_label.setVisible(bool(lines))
        # With step figures the before/after difference holds the intended changes too: a change,
        # of which the steps' figures say what is intended and what is error.
        word = "change" if lines else "error"
        self.plot.setLabel("left", word, units="\u00b0")
        self.max_line.label.setFormat(f"max {word} {{value:.2f}}\u00b0" if lines else "max {value:.2f}\u00b0")

    def step_cells(self) -> dict[str, str]:
        """Track -> its Steps cell as shown (tests)."""
        return {
            self.table.item(r, 0).text(): self.table.item(r, 5).text() for r in range(self.table.rowCount())
        }

    def _fill_table(self) -> None:
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.diffs))
        for r, d in enumerate(self.diffs):
            name = QTableWidgetItem(d.path)
            name.setData(Qt.ItemDataRole.UserRole, d.path)
            self.table.setItem(r, 0, name)
            self.table.setItem(r, 1, _NumberItem(d.keys_before, str(d.keys_before)))
            self.table.setItem(r, 2, _NumberItem(d.keys_after, str(d.keys_after)))
            self.table.setItem(r, 3, _NumberItem(d.max_error, f"{d.max_error:.2f}"))
            self.table.setItem(r, 4, _NumberItem(d.rms_error, f"{d.rms_error:.2f}"))
            figs = self.step_figures.get(d.path, ())
            steps = QTableWidgetItem("  ".join(f"{f.number} {f.op}: {f.cell()}" for f in figs))
            tip = [f.text() for f in figs] + [n for f in figs for n in f.notes]
            steps.setToolTip("\n".join(tip))
            self.table.setItem(r, 5, steps)
            if figs:  # the mixed before/after figures: say what they include
                why = "the intended changes of the lossless steps included; the Steps column separates them"
                for c in (3, 4):
                    self.table.item(r, c).setToolTip(why)
        self.table.setSortingEnabled(True)

    def figures(self) -> list[tuple[str, int, int, str, str]]:
        """The table as shown: ``(track, keys before, keys after, max text, rms text)`` rows."""
        rows = []
        for r in range(self.table.rowCount()):
            cells = [self.table.item(r, c).text() for c in range(5)]
            rows.append((cells[0], int(cells[1]), int(cells[2]), cells[3], cells[4]))
        return rows

    def _place_empty_text(self, *_):
        vb = self.plot.getPlotItem().getViewBox()
        self.empty_text.setPos(vb.boundingRect().center())

    def _plot_selected(self) -> None:
        sel = self.document.selected_paths
        d = self._by_path.get(sel[0]) if sel else None
        if d is None:
            self.curve.setData([], [])
            self.max_line.hide()
            if not self.diffs:
                msg = "no preview and no edits" if self._mode != "preview" else "the preview changes nothing"
            else:
                msg = "selected track unchanged" if sel else "select a track"
            self.empty_text.setText(msg)
            self._place_empty_text()
            self.empty_text.show()
            self.plot.setYRange(0, 1)
            return
        self.empty_text.hide()
        self.curve.setData(np.asarray(d.times), np.asarray(d.errors))
        self.max_line.show()  # before setValue: a hidden line's label does not update its text
        self.max_line.setValue(d.max_error)
        self.max_line.label.valueChanged()
        self.plot.setYRange(0, max(d.max_error * 1.15, 1e-3))
        self.plot.setXRange(float(d.times[0]), float(d.times[-1]), padding=0.02)
        self._select_row(d.path)

    def plotted(self) -> tuple[np.ndarray, np.ndarray]:
        """The strip's data (times s, errors deg) (tests)."""
        x, y = self.curve.getOriginalDataset()
        return (np.zeros(0), np.zeros(0)) if x is None else (np.asarray(x), np.asarray(y))

    def _select_row(self, path: str) -> None:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(Qt.ItemDataRole.UserRole) == path:
                self.table.blockSignals(True)
                self.table.selectRow(r)
                self.table.blockSignals(False)
                return

    def _row_clicked(self, item: QTableWidgetItem) -> None:
        path = self.table.item(item.row(), 0).data(Qt.ItemDataRole.UserRole)
        if path:
            self.document.select_paths([path])

    def _on_time(self, t: float) -> None:
        self.cursor.blockSignals(True)
        self.cursor.setValue(float(t))
        self.cursor.blockSignals(False)

    def _cursor_dragged(self) -> None:
        self.document.set_time(float(self.cursor.value()))
