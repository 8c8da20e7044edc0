"""A/B compare of resampling methods on the selected track (non-modal dialog).

The reference is the track as Unity plays it (raw Euler or quaternion keys, Hermite per channel).
Every method of ``engine.resample.METHODS`` (Slerp, Squad, Catmull-Rom, scipy's RotationSpline, and
"unity" = bake what Unity plays) re-keys the track at the chosen rate with
``engine.resample.resample_track``; ``engine.diff.diff_tracks`` then measures, as Unity will play
the new keys, the geodesic error against the reference. Figures per method: keys, max and RMS error
(degrees). The plots overlay the Euler channels (one or all three, continuous degrees from
``engine.display.sample_track``) and the error over time. The chosen method can be sent to the
recipe panel as a ``resample`` step or applied to the clip directly (one undo step).

The work runs in a worker thread (a long track at a high rate is hundreds of thousands of samples).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import display
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.resample import METHODS, resample_track

from ..common.elided import ELIDE_PATH, ElidedLabel
from ..common.workers import JobCancelled, LatestRunner

__all__ = ["CompareDialog", "MethodResult", "compare_methods", "METHOD_LABELS", "METHOD_COLORS"]

METHOD_LABELS = {
    "slerp": "Slerp",
    "squad": "Squad",
    "catmull-rom": "Catmull-Rom",
    "spline": "Spline (RotationSpline)",
    "unity": "Bake as Unity plays",
}
METHOD_COLORS = {
    "slerp": "#4fc3f7",
    "squad": "#ffb74d",
    "catmull-rom": "#ce93d8",
    "spline": "#81c784",
    "unity": "#ef9a9a",
}
#: The same hues, darker, for a light plot background (the pastel ones vanish on white).
METHOD_COLORS_LIGHT = {
    "slerp": "#0277bd",
    "squad": "#e65100",
    "catmull-rom": "#8e24aa",
    "spline": "#2e7d32",
    "unity": "#c62828",
}
_CHANNEL_STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine)
_PLOT_SAMPLES_MAX = 4000
COLUMNS = ("Method", "Keys", "Max error (\u00b0)", "RMS error (\u00b0)")


@dataclass(frozen=True, eq=False)
class MethodResult:
    """One method's outcome: the resampled track, its diff against the source (as Unity plays
    both), and its Euler channels sampled for the plot (``euler (M, 3)`` degrees at ``plot_times``)."""

    method: str
    track: object
    diff: object
    euler: np.ndarray


@dataclass(frozen=True, eq=False)
class CompareResult:
    source: object
    hz: float
    plot_times: np.ndarray
    reference_euler: np.ndarray
    methods: dict[str, MethodResult]


def _plot_times(track) -> np.ndarray:
    start, end = float(track.curve.start), float(track.curve.end)
    n = int(np.clip(max(track.n_keys * 8, 400), 2, _PLOT_SAMPLES_MAX))
    return np.linspace(start, end, n)


def compare_methods(track, hz: float, methods=METHODS, cancel=None) -> CompareResult:
    """Resample ``track`` at ``hz`` (keys per second) with each method and measure it (engine calls
    only). ``cancel()`` returning True stops with :class:`~curveeditor.app.common.workers.JobCancelled`."""
    times = _plot_times(track)
    ref = display.sample_track(track, times).euler
    out = {}
    for m in methods:
        if cancel is not None and cancel():
            raise JobCancelled()
        new = resample_track(track, hz, m)
        out[m] = MethodResult(m, new, diff_tracks(track, new), display.sample_track(new, times).euler)
    return CompareResult(track, float(hz), times, ref, out)


def _swatch(color: str) -> QIcon:
    pix = QPixmap(12, 12)
    pix.fill(QColor(color))
    return QIcon(pix)


class _NumberItem(QTableWidgetItem):
    def __init__(self, value: float, text: str):
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, float(value))
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class CompareDialog(QDialog):
    """Non-modal A/B compare of resampling methods on the document's primary selected track.

    Args:
        document: the shared :class:`~curveeditor.app.model.document.ClipDocument`.
        recipe_panel: optional :class:`~curveeditor.app.recipe.panel.RecipePanel`; "Send to recipe"
            appends a ``resample`` step to it (the ``sendToRecipe`` signal fires either way).

    Signals:
        sendToRecipe(dict): a recipe step ``{"op": "resample", "hz": HZ, "method": M}``.
        resultsReady(): the table and plots show a new comparison.
    """

    sendToRecipe = Signal(dict)
    resultsReady = Signal()

    def __init__(self, document, parent: QWidget | None = None, recipe_panel=None):
        super().__init__(parent)
        self.setWindowTitle("Compare resampling methods")
        self.setModal(False)
        self.resize(900, 640)
        self.document = document
        self.recipe_panel = recipe_panel
        self.theme = None
        self._colors = METHOD_COLORS
        self.result: CompareResult | None = None
        self._track_key = None

        # ---- controls
        self.track_label = ElidedLabel("", self, elide=ELIDE_PATH)
        self.track_label.setTextFormat(Qt.TextFormat.RichText)
        self.rate = QDoubleSpinBox(self)
        self.rate.setRange(1.0, 1000.0)
        self.rate.setDecimals(2)
        self.rate.setSuffix(" Hz")
        self.rate.setKeyboardTracking(False)
        self.rate.setToolTip("Keys per second of the resampled tracks")
        self.rate.setValue(float(document.clip.frame_rate))
        self.rate.valueChanged.connect(lambda _v: self.recompute())
        self.channel = QComboBox(self)
        for text, data in (("All channels", -1), ("X", 0), ("Y", 1), ("Z", 2)):
            self.channel.addItem(text, data)
        self.channel.setToolTip("Euler channel(s) to plot (continuous degrees)")
        self.channel.currentIndexChanged.connect(lambda _i: self._plot())
        self.status = QLabel(self)

        top = QHBoxLayout()
        top.addWidget(self.track_label, 1)
        top.addWidget(QLabel("Rate:", self))
        top.addWidget(self.rate)
        top.addWidget(QLabel("Plot:", self))
        top.addWidget(self.channel)

        # ---- plots
        self.euler_plot = pg.PlotWidget(self)
        self.euler_plot.setLabel("left", "Euler", units="\u00b0")
        self.euler_plot.showGrid(x=True, y=True, alpha=0.2)
        self.euler_plot.addLegend(offset=(8, 8), labelTextSize="8pt")
        self.error_plot = pg.PlotWidget(self)
        self.error_plot.setLabel("left", "error", units="\u00b0")
        self.error_plot.setLabel("bottom", "time", units="s")
        self.error_plot.showGrid(x=True, y=True, alpha=0.2)
        self.error_plot.setXLink(self.euler_plot)
        for p in (self.euler_plot, self.error_plot):
            p.getPlotItem().setDownsampling(auto=True, mode="peak")
            p.getPlotItem().setClipToView(True)
            # Degrees stay degrees: no "m\u00b0" SI prefixes on small errors.
            p.getAxis("left").enableAutoSIPrefix(False)
            p.getAxis("bottom").enableAutoSIPrefix(False)
        self.cursors = []
        for p in (self.euler_plot, self.error_plot):
            c = pg.InfiniteLine(angle=90, movable=True, pen=pg.mkPen("#bbbbbb"))
            c.sigPositionChanged.connect(lambda line: self.document.set_time(float(line.value())))
            p.addItem(c, ignoreBounds=True)
            self.cursors.append(c)

        # ---- table
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemChanged.connect(lambda _i: self._plot())
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.setToolTip("Untick a method to hide it from the plots; select one to use it")

        self.send_button = QPushButton("Send to recipe", self)
        self.send_button.setToolTip("Append a resample step with the selected method and rate to the recipe")
        self.send_button.clicked.connect(self.send_selected)
        self.apply_button = QPushButton("Apply to track", self)
        self.apply_button.setToolTip("Replace the track by its resampled version (one undo step)")
        self.apply_button.clicked.connect(self.apply_selected)
        close = QPushButton("Close", self)
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.apply_button)
        buttons.addWidget(close)

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.euler_plot)
        split.addWidget(self.error_plot)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 0)
        split.setSizes([330, 180, 200])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(split, 1)
        lay.addLayout(buttons)

        self.runner = LatestRunner(self)
        self.runner.finished.connect(self._on_result)
        self.runner.failed.connect(lambda _g, msg, _tb: self._set_status(msg, error=True))

        document.selectionChanged.connect(self._on_source_changed)
        document.clipChanged.connect(self._on_source_changed)
        document.timeChanged.connect(self._on_time)
        self._on_time(document.current_time)
        self._update_buttons()
        self.recompute()

    # ------------------------------------------------------------------ compute
    def recompute(self) -> None:
        """Re-run the comparison for the current track and rate (worker thread)."""
        track = self.document.current_track()
        self._track_key = id(track)
        if track is None or track.n_keys < 2:
            self.runner.cancel()
            self.result = None
            self.track_label.setText("<i>Select a rotation track with at least 2 keys.</i>")
            self.table.setRowCount(0)
            self.euler_plot.clear()
            self.error_plot.clear()
            self._update_buttons()
            return
        kind = f"{track.kind}, {track.order.upper()}" if track.kind == "euler" else track.kind
        self.track_label.setText(
            f"<b>{track.path}</b> <span style='color:#999'>({kind}, {track.n_keys} keys)</span>"
        )
        hz = float(self.rate.value())
        self._set_status("Computing\u2026")
        self.runner.submit(lambda token, _p: compare_methods(track, hz, cancel=token))

    def wait(self, timeout_ms: int = 10000) -> bool:
        return self.runner.wait(timeout_ms)

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel the running computation and wait for the worker (call before quitting)."""
        return self.runner.shutdown(timeout_ms)

    def _on_source_changed(self) -> None:
        track = self.document.current_track()
        if id(track) != self._track_key:
            self.recompute()

    def _on_result(self, _gen: int, result: CompareResult, seconds: float) -> None:
        self.result = result
        self._fill_table()
        self._plot()
        self._set_status(f"{len(result.methods)} methods at {result.hz:g} Hz in {seconds * 1000:.0f} ms")
        self._update_buttons()
        self.resultsReady.emit()

    def figures(self) -> dict[str, tuple[int, str, str]]:
        """The table as shown: method -> (keys, max text, rms text)."""
        out = {}
        for r in range(self.table.rowCount()):
            m = self.table.item(r, 0).data(Qt.ItemDataRole.UserRole)
            out[m] = (
                int(self.table.item(r, 1).text()),
                self.table.item(r, 2).text(),
                self.table.item(r, 3).text(),
            )
        return out

    # ------------------------------------------------------------------ views
    def _fill_table(self) -> None:
        res = self.result
        self.table.blockSignals(True)
        shown = self._shown_methods() if self.table.rowCount() else set(METHODS) | {"raw"}
        self.table.setRowCount(len(res.methods) + 1)
        raw = QTableWidgetItem("Raw keys as Unity plays them (reference)")
        raw.setData(Qt.ItemDataRole.UserRole, "raw")
        raw.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        raw.setCheckState(Qt.CheckState.Checked if "raw" in shown else Qt.CheckState.Unchecked)
        raw.setIcon(_swatch("#808080"))
        font = raw.font()
        font.setBold(True)
        raw.setFont(font)
        self.table.setItem(0, 0, raw)
        self.table.setItem(0, 1, _NumberItem(res.source.n_keys, str(res.source.n_keys)))
        self.table.setItem(0, 2, _NumberItem(0.0, "0.00"))
        self.table.setItem(0, 3, _NumberItem(0.0, "0.00"))
        best = min(res.methods.values(), key=lambda r: r.diff.max_error).method
        for row, (m, r) in enumerate(res.methods.items(), start=1):
            name = QTableWidgetItem(METHOD_LABELS.get(m, m) + ("  \u2605 best max" if m == best else ""))
            name.setData(Qt.ItemDataRole.UserRole, m)
            name.setFlags(
                Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsUserCheckable
            )
            name.setCheckState(Qt.CheckState.Checked if m in shown else Qt.CheckState.Unchecked)
            name.setIcon(_swatch(self._colors.get(m, "#ffffff")))
            self.table.setItem(row, 0, name)
            self.table.setItem(row, 1, _NumberItem(r.diff.keys_after, str(r.diff.keys_after)))
            self.table.setItem(row, 2, _NumberItem(r.diff.max_error, f"{r.diff.max_error:.2f}"))
            self.table.setItem(row, 3, _NumberItem(r.diff.rms_error, f"{r.diff.rms_error:.2f}"))
        self.table.blockSignals(False)
        if not self.table.selectedItems():
            self.table.selectRow(1 + list(res.methods).index(best))

    def _shown_methods(self) -> set[str]:
        out = set()
        for r in range(self.table.rowCount()):
            it = self.table.item(r, 0)
            if it is not None and it.checkState() == Qt.CheckState.Checked:
                out.add(it.data(Qt.ItemDataRole.UserRole))
        return out

    def set_theme(self, theme) -> None:
        """Follow the UI theme (:class:`~curveeditor.app.common.theme.Theme`): plot backgrounds, axes, grid,
        cursors, the reference curve and method colours (darker hues on a light background)."""
        self.theme = theme
        self._colors = METHOD_COLORS if theme.dark else METHOD_COLORS_LIGHT
        for p in (self.euler_plot, self.error_plot):
            p.setBackground(theme.plot_bg)
            for name in ("left", "bottom"):
                ax = p.getAxis(name)
                ax.setPen(theme.plot_fg)
                ax.setTextPen(theme.plot_fg)
            p.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        legend = self.euler_plot.getPlotItem().legend
        if legend is not None:
            legend.setLabelTextColor(theme.plot_fg)
            legend.setBrush(
                pg.mkBrush(
                    QColor(theme.plot_bg).red(),
                    QColor(theme.plot_bg).green(),
                    QColor(theme.plot_bg).blue(),
                    200,
                )
            )
        for c in self.cursors:
            c.setPen(pg.mkPen(theme.cursor))
        if getattr(self, "result", None) is not None:
            self._fill_table()
            self._plot()

    def _raw_color(self) -> str:
        return self.theme.plot_fg if self.theme is not None else pg.getConfigOption("foreground")

    def _plot(self) -> None:
        res = self.result
        for p in (self.euler_plot, self.error_plot):
            for item in list(p.listDataItems()):
                p.removeItem(item)
        if res is None:
            return
        shown = self._shown_methods()
        ch = self.channel.currentData()
        channels = (0, 1, 2) if ch == -1 else (ch,)
        t = res.plot_times

        def draw(euler, color, width, label):
            for c in channels:
                style = _CHANNEL_STYLES[c] if ch == -1 else Qt.PenStyle.SolidLine
                name = label if c == channels[0] else None
                self.euler_plot.plot(t, euler[:, c], pen=pg.mkPen(color, width=width, style=style), name=name)

        if "raw" in shown:
            # The plot foreground colour: visible on dark and light themes alike.
            draw(res.reference_euler, self._raw_color(), 2.5, "Unity (raw)")
        for m, r in res.methods.items():
            if m in shown:
                draw(r.euler, self._colors.get(m, "#fff"), 1.3, METHOD_LABELS.get(m, m))
                self.error_plot.plot(
                    r.diff.times, r.diff.errors, pen=pg.mkPen(self._colors.get(m, "#fff"), width=1.3)
                )
        if ch == -1:
            self.euler_plot.setTitle("X solid, Y dashed, Z dotted", size="8pt", color="#999")
        else:
            self.euler_plot.setTitle(f"{'XYZ'[ch]} channel", size="8pt", color="#999")

    def selected_method(self) -> str | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows:
            return None
        m = self.table.item(rows[0].row(), 0).data(Qt.ItemDataRole.UserRole)
        return None if m == "raw" else m

    def select_method(self, method: str) -> None:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(Qt.ItemDataRole.UserRole) == method:
                self.table.selectRow(r)
                return
        raise KeyError(method)

    def _update_buttons(self) -> None:
        ok = self.result is not None and self.selected_method() is not None
        self.send_button.setEnabled(ok)
        self.apply_button.setEnabled(ok)

    # ------------------------------------------------------------------ actions
    def send_selected(self) -> dict | None:
        """Emit (and give the recipe panel) ``{"op": "resample", "hz": HZ, "method": M}``."""
        m = self.selected_method()
        if m is None or self.result is None:
            return None
        step = {"op": "resample", "hz": self.result.hz, "method": m}
        if self.recipe_panel is not None:
            self.recipe_panel.add_step_dict(step)
        self.sendToRecipe.emit(step)
        self._set_status(f"Sent resample ({METHOD_LABELS.get(m, m)}, {self.result.hz:g} Hz) to the recipe.")
        return step

    def apply_selected(self) -> bool:
        """Replace the source track by the selected method's track (one undo step)."""
        m = self.selected_method()
        res = self.result
        if m is None or res is None:
            return False
        doc = self.document
        try:
            current = doc.clip.track(res.source.path)
        except KeyError:
            return False
        if current is not res.source:
            self._set_status("The track changed since the comparison; recomputing.", error=True)
            self.recompute()
            return False
        new = res.methods[m].track
        doc.apply_clip(
            doc.clip.with_track(new), f"Resample {new.path} ({METHOD_LABELS.get(m, m)}, {res.hz:g} Hz)"
        )
        self._set_status(f"Applied {METHOD_LABELS.get(m, m)} to {new.path} (Ctrl+Z to undo).")
        return True

    def _on_time(self, t: float) -> None:
        for c in self.cursors:
            c.blockSignals(True)
            c.setValue(float(t))
            c.blockSignals(False)

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet("color: #e05050;" if error else "")
        self.status.setText(text)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.runner.cancel()
        super().closeEvent(event)
