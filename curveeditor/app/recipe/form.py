"""The parameter form of one recipe step: a widget per :class:`~curveeditor.engine.recipe.ParamSpec`
(units as suffixes, bounds as ranges, choices as combo boxes, "auto" for ``None``), parameters that
apply to one method shown only with it. What is drawn; the panel handles what a change means.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from curveeditor.engine.recipe import OPS, ParamSpec

from ..common.elided import ElidedLabel
from .steps import UNIT_SUFFIX, StepState, applies, op_title

__all__ = ["ParamForm"]


class ParamForm(QGroupBox):
    """The form of the current step. ``on_commit(step, name)`` runs after a widget changed
    ``step.params[name]`` (the panel refreshes the list and re-runs the preview)."""

    def __init__(self, parent: QWidget, on_commit: Callable[[StepState, str], None]):
        super().__init__("Parameters", parent)
        self.on_commit = on_commit
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.op_doc = QLabel(self)
        self.param_widgets: dict[str, tuple[QLabel, QWidget]] = {}
        self.step: StepState | None = None

    def _clear(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.param_widgets = {}

    def show_step(self, number: int, step: StepState | None) -> None:
        """Show ``step`` (numbered ``number`` in the list), or the placeholder for None."""
        self._clear()
        self.step = step
        if step is None:
            self.setTitle("Parameters")
            self.form.addRow(ElidedLabel("Select a step to edit its parameters.", self))
            return
        s = step
        self.setTitle(f"{number}. {op_title(s.op)}")
        # one elided line (full text in the tooltip): a word-wrapped label in the form was cut off
        # at the bottom in a short dock
        self.op_doc = ElidedLabel(OPS[s.op].doc, self, elide=Qt.TextElideMode.ElideRight)
        self.form.addRow(self.op_doc)
        if not OPS[s.op].params:
            self.form.addRow(QLabel("No parameters.", self))
        for p in OPS[s.op].params:
            w = self._make_widget(s, p)
            label = QLabel(p.name.replace("_", " ").capitalize() + ":", self)
            label.setToolTip(p.doc)
            w.setToolTip(p.doc + (f" ({p.unit})" if p.unit else ""))
            self.form.addRow(label, w)
            self.param_widgets[p.name] = (label, w)
        self.sync_visibility()

    def sync_visibility(self) -> None:
        """Show only the parameters that apply with the step's current values."""
        s = self.step
        if s is None:
            return
        for p in OPS[s.op].params:
            if p.name in self.param_widgets:
                label, w = self.param_widgets[p.name]
                on = applies(p, s.params)
                label.setVisible(on)
                w.setVisible(on)

    def sync_widgets(self) -> None:
        """Push the step's values into the widgets (after a programmatic ``set_param``)."""
        s = self.step
        if s is None:
            return
        for p in OPS[s.op].params:
            if p.name not in self.param_widgets:
                continue
            w = self.param_widgets[p.name][1]
            with QSignalBlocker(w):
                _set_widget_value(w, p, s.params[p.name])
        self.sync_visibility()

    def _make_widget(self, s: StepState, p: ParamSpec) -> QWidget:
        def commit(value: Any) -> None:
            if s.params.get(p.name) == value:
                return
            s.params[p.name] = value
            self.on_commit(s, p.name)

        value = s.params[p.name]
        if p.kind == "choice":
            w = QComboBox(self)
            for c in p.choices:
                w.addItem(str(c).upper() if p.name == "order" else str(c), c)
            w.setCurrentIndex(max(0, list(p.choices).index(value) if value in p.choices else 0))
            w.currentIndexChanged.connect(lambda i, w=w: commit(w.itemData(i)))
            return w
        if p.kind == "bool":
            w = QCheckBox(self)
            w.setChecked(bool(value))
            w.toggled.connect(lambda on: commit(bool(on)))
            return w
        if p.kind == "int":
            w = QSpinBox(self)
            w.setRange(int(p.minimum if p.minimum is not None else -(10**6)), int(p.maximum or 10**6))
            w.setValue(int(value))
            w.valueChanged.connect(lambda v: commit(int(v)))
            return w
        if p.kind == "range":
            box = QWidget(self)
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
        w = _spin(p, self)
        if p.kind == "float_or_none":
            # The spin box's minimum shows "auto" and means None.
            w.setMinimum(w.minimum() - _step_for(p))
            # None means "the clip's rate" for a rate, "not used" for an optional bound (tip_error)
            w.setSpecialValueText({"Hz": "auto (clip rate)", "mm": "off"}.get(p.unit, "auto"))
            w.setValue(w.minimum() if value is None else float(value))
            w.valueChanged.connect(lambda v, w=w: commit(None if v <= w.minimum() else float(v)))
        else:
            w.setValue(float(value))
            w.valueChanged.connect(lambda v: commit(float(v)))
        return w


def _step_for(p: ParamSpec) -> float:
    return {"deg": 0.1, "deg/s": 10.0, "s": 0.01, "Hz": 1.0, "mm": 0.5}.get(p.unit, 0.1)


def _spin(p: ParamSpec, parent: QWidget) -> QDoubleSpinBox:
    w = QDoubleSpinBox(parent)
    decimals = {"deg": 3, "deg/s": 1, "s": 3, "Hz": 2, "mm": 2}.get(p.unit, 3)
    w.setDecimals(decimals)
    lo = p.minimum if p.minimum is not None else -1e6
    if p.exclusive_minimum and p.minimum is not None:
        lo = p.minimum + 10.0**-decimals
    w.setRange(lo, p.maximum if p.maximum is not None else 1e6)
    w.setSingleStep(_step_for(p))
    w.setSuffix(UNIT_SUFFIX.get(p.unit, f" {p.unit}" if p.unit else ""))
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
