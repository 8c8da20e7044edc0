"""Timeline bar: play/pause, loop, step frame, playback speed, a scrub slider and the readout.

Playback advances ``document.current_time`` by real elapsed time x speed (a 60 Hz timer, so slow
frames never slow the clip down). The readout shows, for the primary track at the current time, what
Unity plays there: the Euler triple (continuous, as the graphs draw it) with its equivalent triple,
the quaternion and the angular speed — all computed by the engine.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSlider,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import display
from curveeditor.engine.rotations import equivalent_euler

from .document import ClipDocument

__all__ = ["Timeline", "readout_text"]

SPEEDS = (0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0)


def readout_text(document: ClipDocument) -> str:
    """One-line description of the primary track's pose at the current time (HTML)."""
    tr = document.current_track()
    t = document.current_time
    frame = t * document.frame_rate
    ftxt = f"{round(frame)}" if abs(frame - round(frame)) < 1e-3 else f"{frame:.2f}"
    head = f"<b>{t:.3f} s</b> · frame {ftxt}"
    if tr is None or tr.n_keys == 0:
        return head
    s = display.sample_track(tr, np.array([t, t + 1e-3]))
    e = s.euler[0]
    eq = np.asarray(equivalent_euler(e[None, :], tr.order))[0]  # e is in tr.order for both kinds
    q = s.quat[0]
    speed = float(s.speed[0])
    name = tr.path.rsplit("/", 1)[-1] or tr.path
    return (
        f"{head} · <b>{name}</b> · Euler ({e[0]:.2f}, {e[1]:.2f}, {e[2]:.2f})° "
        f"≡ ({eq[0]:.2f}, {eq[1]:.2f}, {eq[2]:.2f})° · q ({q[0]:.3f}, {q[1]:.3f}, {q[2]:.3f}, {q[3]:.3f}) "
        f"· <b>{speed:.1f} °/s</b>"
    )


class Timeline(QWidget):
    """Transport controls + time slider + readout. Actions are exposed for menus and shortcuts."""

    playingChanged = Signal(bool)

    def __init__(self, document: ClipDocument, parent=None):
        super().__init__(parent)
        self.doc = document
        self.speed = 1.0
        self._timer = QTimer(self)
        self._timer.setInterval(16)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()

        self.act_play = QAction("Play", self)
        self.act_play.setCheckable(True)
        self.act_play.setShortcut(QKeySequence(Qt.Key.Key_Space))
        self.act_play.toggled.connect(self.set_playing)
        self.act_loop = QAction("Loop", self)
        self.act_loop.setCheckable(True)
        self.act_loop.setChecked(True)
        self.act_loop.setShortcut(QKeySequence("L"))
        self.act_next = QAction("Next frame", self)
        self.act_next.setShortcut(QKeySequence(Qt.Key.Key_Period))
        self.act_next.triggered.connect(lambda: self.step(1))
        self.act_prev = QAction("Previous frame", self)
        self.act_prev.setShortcut(QKeySequence(Qt.Key.Key_Comma))
        self.act_prev.triggered.connect(lambda: self.step(-1))
        self.act_start = QAction("Go to start", self)
        self.act_start.setShortcut(QKeySequence(Qt.Key.Key_Home))
        self.act_start.triggered.connect(lambda: self.doc.set_time(self.doc.clip.start))
        self.act_end = QAction("Go to end", self)
        self.act_end.setShortcut(QKeySequence(Qt.Key.Key_End))
        self.act_end.triggered.connect(lambda: self.doc.set_time(self.doc.clip.end))
        sp = QStyle.StandardPixmap
        style = self.style()
        self._icon_play = style.standardIcon(sp.SP_MediaPlay)
        self._icon_pause = style.standardIcon(sp.SP_MediaPause)
        for a, tip, icon in (
            (self.act_start, "Go to the first key", sp.SP_MediaSkipBackward),
            (self.act_prev, "Step one frame back", sp.SP_MediaSeekBackward),
            (self.act_play, "Play / pause", sp.SP_MediaPlay),
            (self.act_next, "Step one frame forward", sp.SP_MediaSeekForward),
            (self.act_end, "Go to the last key", sp.SP_MediaSkipForward),
            (self.act_loop, "Loop playback", sp.SP_BrowserReload),
        ):
            a.setToolTip(f"{tip} ({a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
            a.setStatusTip(tip)
            a.setIcon(style.standardIcon(icon))

        row = QHBoxLayout()
        row.setContentsMargins(4, 2, 4, 2)
        for a in (self.act_start, self.act_prev, self.act_play, self.act_next, self.act_end, self.act_loop):
            b = QToolButton()
            b.setDefaultAction(a)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            b.setAutoRaise(True)
            row.addWidget(b)
        self.speed_box = QComboBox()
        for s in SPEEDS:
            self.speed_box.addItem(f"{s:g}×", s)
        self.speed_box.setCurrentIndex(SPEEDS.index(1.0))
        self.speed_box.setToolTip("Playback speed")
        self.speed_box.currentIndexChanged.connect(lambda _i: self.set_speed(self.speed_box.currentData()))
        row.addWidget(self.speed_box)
        self.time_box = QDoubleSpinBox()
        self.time_box.setDecimals(3)
        self.time_box.setSuffix(" s")
        self.time_box.setSingleStep(1.0 / 30)
        self.time_box.setToolTip("Current time (seconds)")
        self.time_box.setKeyboardTracking(False)
        self.time_box.valueChanged.connect(lambda v: self.doc.set_time(v))
        row.addWidget(self.time_box)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip("Scrub (frames)")
        self.slider.valueChanged.connect(self._on_slider)
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        row.addWidget(self.slider, 1)
        self.readout = QLabel()
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        # Long readouts must never resize the window or shift the graphs while scrubbing.
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.readout.setMinimumWidth(0)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(row)
        lay.addWidget(self.readout)
        self.readout.setContentsMargins(8, 0, 8, 3)

        document.timeChanged.connect(self._on_time)
        document.clipChanged.connect(self._on_clip)
        document.selectionChanged.connect(self._update_readout)
        self._on_clip()

    # ------------------------------------------------------------------ playback
    def set_speed(self, s: float) -> None:
        self.speed = float(s)
        i = self.speed_box.findData(self.speed)
        if i >= 0 and i != self.speed_box.currentIndex():
            self.speed_box.setCurrentIndex(i)

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def set_playing(self, on: bool) -> None:
        if on == self.is_playing():
            return
        if on:
            start, end = self.bounds()
            if not start <= self.doc.current_time < end:
                self.doc.set_time(start)
            self._clock.start()
            self._timer.start()
        else:
            self._timer.stop()
        self.act_play.blockSignals(True)
        self.act_play.setChecked(on)
        self.act_play.setIcon(self._icon_pause if on else self._icon_play)
        self.act_play.blockSignals(False)
        self.playingChanged.emit(on)

    def toggle(self) -> None:
        self.set_playing(not self.is_playing())

    def _tick(self) -> None:
        dt = self._clock.restart() / 1000.0 * self.speed
        start, end = self.bounds()
        t = self.doc.current_time + dt
        if t < start:  # before the playback range: jump into it
            t = start
        if t > end:
            if self.act_loop.isChecked() and end > start:
                t = start + (t - start) % (end - start)
            else:
                self.doc.set_time(end)
                self.set_playing(False)
                return
        self.doc.set_time(t)

    #: an object with ``bounds() -> (start, end)`` seconds (the playback range), or None = the clip
    range_source = None

    def bounds(self) -> tuple[float, float]:
        """Where playback runs and loops: the playback range, else the whole clip."""
        if self.range_source is not None:
            return self.range_source.bounds()
        return self.doc.clip.start, self.doc.clip.end

    def step(self, frames: int) -> None:
        """Move by whole frames, landing on the frame grid."""
        fr = self.doc.frame_rate
        f = round(self.doc.current_time * fr) + frames
        self.doc.set_time(f / fr)

    # ------------------------------------------------------------------ sync
    def _on_clip(self) -> None:
        fr = self.doc.frame_rate
        start, end = self.doc.clip.start, self.doc.clip.end
        self.slider.blockSignals(True)
        self.slider.setRange(int(np.floor(min(0.0, start) * fr)), int(np.ceil(end * fr)))
        self.slider.blockSignals(False)
        self.time_box.blockSignals(True)
        self.time_box.setRange(min(0.0, start), max(end, 0.0))
        self.time_box.setSingleStep(1.0 / fr)
        self.time_box.blockSignals(False)
        self._on_time(self.doc.current_time)

    def _on_slider(self, frame: int) -> None:
        self.doc.set_time(frame / self.doc.frame_rate)

    def _on_time(self, t: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(t * self.doc.frame_rate)))
        self.slider.blockSignals(False)
        self.time_box.blockSignals(True)
        self.time_box.setValue(t)
        self.time_box.blockSignals(False)
        self._update_readout()

    def _update_readout(self) -> None:
        self.readout.setText(readout_text(self.doc))
        tr = self.doc.current_track()
        self.readout.setToolTip(
            f"{tr.path}: the pose Unity plays at the cursor, its equivalent Euler triple, quaternion "
            "(x, y, z, w) and angular speed"
            if tr
            else ""
        )
