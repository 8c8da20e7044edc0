"""The active key's fields above the graphs (Maya's stats fields, Blender's N panel).

:class:`KeyFields` shows the document's active key (``ClipDocument.active_key``: the key last
clicked, else the first selected): which track and curve, its time (s, with the frame), its value
(deg) and its in / out tangent slopes (deg/s), and its tangent mode. Typing a number (Enter, or
leaving the field) or stepping it applies one engine edit (``engine.edit.set_key`` /
``set_slope``) as one undo step through ``ClipDocument.apply_clip``. The fields follow the selection
and every clip change, drags included (at most every ``LIVE_FIELDS_MS`` mid-drag, exactly at its
end), except a field being typed in.

Quaternion tracks: the value is the key's display Euler angle on that channel (the engine converts
back, the other two display angles kept); their slopes are quaternion components, not degrees per
second of one angle, so the slope fields are off there.

Float curves (humanoid muscles, blend shapes): with no rotation key selected, the first selected
float key (of the shown curves, in their order) is the active key, in the curve's own units (muscle,
%, m), edited with the same engine edits (``engine.float_curves.with_float_curve``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QLayout, QSizePolicy, QWidget

from curveeditor.engine import display
from curveeditor.engine import edit as ed
from curveeditor.engine import float_curves as fc

from ..common.elided import ElidedLabel
from ..model.document import ClipDocument

__all__ = ["KeyFields", "LIVE_FIELDS_MS"]

#: mid-drag the fields follow at most this often (ms; four number fields repainted per drag step
#: cost ~2 ms of a 9-ms step on the Gangnam BVH), and exactly at the drag's end
LIVE_FIELDS_MS = 100

_CHANNELS = ("X", "Y", "Z")


class _Field(QDoubleSpinBox):
    """A number field with a unit suffix that reports a value the user entered (not ones we set)."""

    entered = Signal(float)

    def __init__(self, suffix: str, decimals: int, tip: str):
        super().__init__()
        self.setRange(-1e9, 1e9)
        self.setDecimals(decimals)
        self.setSuffix(suffix)
        self.setKeyboardTracking(False)  # typing does not apply each digit: Enter / focus out does
        self.setToolTip(tip)
        self.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.NoButtons)
        self.setMinimumWidth(78)
        self.setAlignment(Qt.AlignmentFlag.AlignRight)
        self._setting = False
        self.valueChanged.connect(self._changed)

    def show_value(self, v: float | None) -> None:
        if self.hasFocus() and self.isEnabled():
            return  # the user is typing here
        self._setting = True
        try:
            if v is None or not np.isfinite(v):
                self.setSpecialValueText("—")
                self.setValue(self.minimum())
            else:
                self.setSpecialValueText("")
                self.setValue(float(v))
        finally:
            self._setting = False

    def _changed(self, v: float) -> None:
        if not self._setting and v != self.minimum():
            self.entered.emit(float(v))


def _set_text(label, text: str) -> None:
    """``label.setText`` only when the text changes: a drag step refreshes the fields, and a
    label's new text re-lays out the window above it."""
    if label.text() != text:
        label.setText(text)


class KeyFields(QWidget):
    """Track / curve label, time, value, in and out slope of the active key (module docstring)."""

    statusMessage = Signal(str)

    def __init__(self, document: ClipDocument, parent: QWidget | None = None):
        super().__init__(parent)
        self.doc = document
        self.key: tuple[str, int, int] | None = None
        #: the active float-curve key (``OtherTrack.name``, index) when no rotation key is active
        self.float_key: tuple[str, int] | None = None
        self.name = ElidedLabel(elide=Qt.TextElideMode.ElideMiddle)
        self.name.setMinimumWidth(150)
        self.time = _Field(" s", 4, "Active key time (seconds); must stay between its neighbours")
        self.frame = QLabel()
        self.value = _Field(" °", 3, "Active key value on its curve (degrees)")
        self.in_slope = _Field(" °/s", 3, "In tangent slope (degrees per second)")
        self.out_slope = _Field(" °/s", 3, "Out tangent slope (degrees per second)")
        self.mode = QLabel()
        self.mode.setToolTip("Tangent mode of the active key on its curve")
        lay = QHBoxLayout(self)
        # the row never widens the window's centre (its docks would shrink): narrower, it clips
        lay.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(0)
        lay.setContentsMargins(4, 1, 4, 1)
        lay.setSpacing(4)
        lay.addWidget(self.name, 1)
        for label, w in (
            ("Time", self.time),
            (None, self.frame),
            ("Value", self.value),
            ("In", self.in_slope),
            ("Out", self.out_slope),
        ):
            if label:
                lab = QLabel(label)
                lab.setBuddy(w)
                lay.addWidget(lab)
            lay.addWidget(w)
        lay.addWidget(self.mode)
        self.time.entered.connect(self._set_time)
        self.value.entered.connect(self._set_value)
        self.in_slope.entered.connect(lambda v: self._set_slope("in", v))
        self.out_slope.entered.connect(lambda v: self._set_slope("out", v))
        self._live = QTimer(self)
        self._live.setSingleShot(True)
        self._live.setInterval(LIVE_FIELDS_MS)
        self._live.timeout.connect(self.refresh)
        document.keySelectionChanged.connect(self.refresh)
        document.floatKeySelectionChanged.connect(self.refresh)
        document.clipChanged.connect(self._on_clip)
        document.selectionChanged.connect(self.refresh)
        self.refresh()

    # ------------------------------------------------------------------ display
    def fields(self) -> list[_Field]:
        return [self.time, self.value, self.in_slope, self.out_slope]

    def _on_clip(self) -> None:
        if self.doc.in_live_edit():
            if not self._live.isActive():
                self._live.start()
            return
        self.refresh()

    def refresh(self) -> None:
        """Show the document's active key (or empty, disabled fields without one)."""
        self._live.stop()
        key = self.doc.active_key()
        self.key = key
        track = None
        if key is not None:
            try:
                track = self.doc.clip.track(key[0])
            except KeyError:
                track = None
            if track is not None and not (0 <= key[1] < track.n_keys):
                track = None
        self.float_key = None
        if track is None:
            self.key = None
            if self._show_float_key():
                return
            self._units("°")
            _set_text(self.name, "No key selected")
            self.name.setToolTip("Click a key in the graphs: its time, value and slopes show here")
            for f in self.fields():
                f.setEnabled(False)
                f.show_value(None)
            _set_text(self.frame, "")
            _set_text(self.mode, "")
            return
        self._units("°")
        path, i, ch = key
        n = sum(len(s) for s in self.doc.selected_keys.values())
        more = f" (+{n - 1} selected)" if n > 1 else ""
        bone = path.rsplit("/", 1)[-1] or path
        self._show_name(
            f"{_CHANNELS[ch]} key {i} · {bone}{' +' + str(n - 1) if n > 1 else ''}",
            f"{path}\n{_CHANNELS[ch]} curve, key {i}{more}",
        )
        c = track.curve
        self.value.setEnabled(True)
        self._show_time(float(c.time[i]))
        if track.kind == "euler":
            self.value.show_value(float(c.value[i, ch]))
            for f, arr in ((self.in_slope, c.in_slope), (self.out_slope, c.out_slope)):
                f.setEnabled(True)
                f.show_value(float(arr[i, ch]))
            _set_text(self.mode, ed.describe_mode(int(c.tangent_mode[i, ch]), int(c.weighted_mode[i, ch])))
        else:
            self.value.show_value(float(display.key_euler(track)[i, ch]))
            for f in (self.in_slope, self.out_slope):
                f.setEnabled(False)
                f.show_value(None)
            _set_text(self.mode, "quaternion key (display Euler)")

    def _show_name(self, text: str, tip: str) -> None:
        _set_text(self.name, text)
        if self.name.toolTip() != tip:
            self.name.setToolTip(tip)

    def _show_time(self, t: float) -> None:
        """The active key's time (s) and its frame (whole when it is on one)."""
        self.time.setEnabled(True)
        self.time.show_value(t)
        f = t * self.doc.frame_rate
        _set_text(self.frame, f"f {round(f)}" if abs(f - round(f)) < 1e-6 else f"f {f:.2f}")

    def _units(self, unit: str) -> None:
        """Value and slope suffixes: degrees for rotation keys, a float curve's own unit."""
        value = f" {unit}" if unit else ""
        slope = f" {unit}/s" if unit else " /s"
        for f, suffix in ((self.value, value), (self.in_slope, slope), (self.out_slope, slope)):
            if f.suffix() != suffix:
                f.setSuffix(suffix)

    def _active_float_key(self) -> tuple[str, int] | None:
        """The first selected key of the first shown float curve that has one."""
        for n in self.doc.shown_float_curves():
            idx = self.doc.selected_float_keys.get(n)
            if idx:
                return n, min(idx)
        return None

    def _show_float_key(self) -> bool:
        """Show the active float key (:meth:`_active_float_key`); False when there is none."""
        fk = self._active_float_key()
        if fk is None:
            return False
        name, i = fk
        try:
            o = self.doc.other_track(name)
        except StopIteration:
            return False
        c = o.curve
        if c is None or not (0 <= i < c.n_keys) or c.n_components != 1:
            return False
        self.float_key = fk
        unit = fc.unit(o)
        self._units({"muscle": "", "%": "%"}.get(unit, unit))
        n = sum(len(v) for v in self.doc.selected_float_keys.values())
        more = f" (+{n - 1} selected)" if n > 1 else ""
        self._show_name(
            f"key {i} · {o.attribute}{' +' + str(n - 1) if n > 1 else ''}",
            f"{name}\nfloat curve ({unit or 'value'}), key {i}{more}",
        )
        self._show_time(float(c.time[i]))
        for f, v in (
            (self.value, float(c.value[i, 0])),
            (self.in_slope, float(c.in_slope[i, 0])),
            (self.out_slope, float(c.out_slope[i, 0])),
        ):
            f.setEnabled(True)
            f.show_value(v)
        _set_text(self.mode, ed.describe_mode(int(c.tangent_mode[i, 0]), int(c.weighted_mode[i, 0])))
        return True

    # ------------------------------------------------------------------ edits (one undo step each)
    def _apply(self, fn, text: str) -> None:
        """``fn(track)`` on the active key's track (a rotation track, or the active float curve) as
        one undo step; a refused edit is a status message."""
        if self.key is not None:
            track = self.doc.clip.track(self.key[0])
        elif self.float_key is not None:
            track = self.doc.other_track(self.float_key[0])
        else:
            return
        try:
            new = fn(track)
        except ValueError as exc:
            self.statusMessage.emit(f"{text}: {exc}")
            self.refresh()
            return
        if new is not track:
            self.doc.apply_clip(fc.with_edited(self.doc.clip, new), text)

    def _target(self) -> tuple[int, int, str] | None:
        """(key index, component, value unit) of the active key: a rotation key's channel in
        degrees, else the active float key's one component in the curve's own unit."""
        if self.key is not None:
            return self.key[1], self.key[2], "°"
        if self.float_key is not None:
            return self.float_key[1], 0, self.value.suffix().strip()
        return None

    def _set_time(self, t: float) -> None:
        target = self._target()
        if target is None:
            return
        i = target[0]
        self._apply(lambda tr: ed.set_key(tr, i, time=t), f"Key time {t:.4f} s")

    def _set_value(self, v: float) -> None:
        target = self._target()
        if target is None:
            return
        i, ch, unit = target
        name = _CHANNELS[ch] + " " if self.key is not None else ""
        self._apply(lambda tr: ed.set_key(tr, i, channel=ch, value=v), f"Key {name}{v:.3f}{unit}")

    def _set_slope(self, side: str, v: float) -> None:
        target = self._target()
        if target is None:
            return
        i, ch, unit = target
        self._apply(lambda tr: ed.set_slope(tr, i, ch, side, v), f"Key {side} slope {v:.3f}{unit}/s")
