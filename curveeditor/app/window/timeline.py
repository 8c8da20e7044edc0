"""Timeline bar: play/pause, loop, step frame, playback speed, a scrub slider and the readout.

Playback advances ``document.current_time`` by real elapsed time x speed, one timer tick per frame
of the clip up to 60 per second (:func:`frame_interval_ms`), so slow frames never slow the clip
down. The readout shows, for the primary track at the current time, what Unity plays there: the
Euler triple (continuous, as the graphs draw it) with its equivalent triple, the quaternion and the
angular speed, all computed by the engine (sampled once per time with the 3D view,
:mod:`.time_samples`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QElapsedTimer, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPainter, QPalette, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QSizePolicy,
    QSlider,
    QStyle,
    QStyleOptionSlider,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine.rotations import equivalent_euler

from ..common.elided import ElidedLabel
from ..model.document import ClipDocument
from ..model.time_samples import samples_at

__all__ = ["Timeline", "readout_text", "frame_text", "frame_interval_ms", "transport_icon", "JumpSlider"]

SPEEDS = (0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0)
MAX_PLAY_HZ = 60.0  # playback ticks per second at most (see frame_interval_ms)
PLAY_HEADROOM = 1.1  # playback ticks this much faster than the clip's frame rate
READOUT_LIVE_MS = 250  # mid-drag refresh interval of the readout (ms); exact again at the release


def frame_interval_ms(frame_rate: float) -> int:
    """Playback timer interval (ms): about one tick per frame of the clip, at most :data:`MAX_PLAY_HZ`
    per second (16 ms, 62.5 Hz, for clips of 50 fps and more). A 25 fps clip ticked at 60 Hz drew 2.4
    interpolated poses per frame of its own, and on the 2-core machine those frames' work (~20 ms
    each on a 165-joint rig) held it under its own 25 fps. The rate is :data:`PLAY_HEADROOM` above
    the clip's: a precise Qt timer late by more than one interval drops that tick, and a stall of
    the machine (measured: 40-180 ms gaps while another thread held the GIL) then still leaves the
    clip's own rate."""
    rate = min(float(frame_rate) * PLAY_HEADROOM, MAX_PLAY_HZ) if frame_rate > 0 else MAX_PLAY_HZ
    return max(int(1000.0 / rate), 1)


def frame_text(t: float, frame_rate: float) -> str:
    """The frame number at ``t`` seconds: whole on (within 1e-3 of) a frame boundary, else 2 decimals."""
    frame = t * frame_rate
    return f"{round(frame)}" if abs(frame - round(frame)) < 1e-3 else f"{frame:.2f}"


def readout_text(document: ClipDocument, frames_first: bool = False) -> str:
    """One-line description of the primary track's pose at the current time (HTML)."""
    tr = document.current_track()
    t = document.current_time
    ftxt = frame_text(t, document.frame_rate)
    head = f"<b>frame {ftxt}</b> · {t:.3f} s" if frames_first else f"<b>{t:.3f} s</b> · frame {ftxt}"
    if tr is None or tr.n_keys == 0:
        return head
    s = samples_at(tr, t)  # shared with the 3D view's tripod and rings at this time
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


def transport_icon(kind: str, colour: str, size: int = 32) -> QIcon:
    """Transport glyphs drawn in ``colour`` (the theme's text colour): the style's standard icons
    are dark grey and all but vanish on the dark theme. ``kind``: play, pause, start, end, prev,
    next, loop."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    c = QColor(colour)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(c)
    s = size

    def tri(x0, x1):  # a triangle pointing from x0 towards x1
        p.drawPolygon(QPolygonF([QPointF(x0, 0.22 * s), QPointF(x1, 0.5 * s), QPointF(x0, 0.78 * s)]))

    if kind == "play":
        tri(0.3 * s, 0.78 * s)
    elif kind == "pause":
        p.drawRect(QRectF(0.28 * s, 0.22 * s, 0.15 * s, 0.56 * s))
        p.drawRect(QRectF(0.57 * s, 0.22 * s, 0.15 * s, 0.56 * s))
    elif kind in ("start", "end"):
        flip = kind == "start"
        bar_x = 0.2 * s if flip else 0.7 * s
        p.drawRect(QRectF(bar_x, 0.22 * s, 0.1 * s, 0.56 * s))
        if flip:
            tri(0.7 * s, 0.3 * s)
        else:
            tri(0.3 * s, 0.7 * s)
    elif kind in ("prev", "next"):
        if kind == "prev":
            tri(0.5 * s, 0.18 * s)
            tri(0.82 * s, 0.5 * s)
        else:
            tri(0.18 * s, 0.5 * s)
            tri(0.5 * s, 0.82 * s)
    elif kind == "loop":
        pen = QPen(c, 0.09 * s)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawArc(QRectF(0.2 * s, 0.25 * s, 0.6 * s, 0.5 * s), 30 * 16, 300 * 16)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(c)
        head = [QPointF(0.66 * s, 0.14 * s), QPointF(0.9 * s, 0.3 * s), QPointF(0.64 * s, 0.42 * s)]
        p.drawPolygon(QPolygonF(head))
    p.end()
    return QIcon(pm)


class JumpSlider(QSlider):
    """A slider that jumps to the clicked position (QSlider pages by its pageStep instead)."""

    def mousePressEvent(self, ev):  # noqa: N802 - Qt API
        if ev.button() == Qt.MouseButton.LeftButton:
            opt = QStyleOptionSlider()
            self.initStyleOption(opt)
            handle = self.style().subControlRect(
                QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle, self
            )
            if not handle.contains(ev.position().toPoint()):
                groove = self.style().subControlRect(
                    QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderGroove, self
                )
                x = ev.position().x() - groove.left() - handle.width() / 2
                span = max(groove.width() - handle.width(), 1)
                v = QStyle.sliderValueFromPosition(self.minimum(), self.maximum(), int(round(x)), int(span))
                self.setValue(v)
        super().mousePressEvent(ev)


class _FixedHost(QWidget):
    """Holds one child at a fixed size equal to its own (no layout): a QLabel's ``setText`` calls
    ``updateGeometry``, which invalidates the layouts above a widget unless its minimum and maximum
    sizes are equal. The readout changes on every playback frame; in a layout it re-laid out the
    main window (its docks with their animations) on every frame, ~2 ms of each (issue 9)."""

    def __init__(self, child: QWidget):
        super().__init__()
        self.child = child
        child.setParent(self)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(child.sizeHint().height())

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self.child.setFixedSize(self.size())


class Timeline(QWidget):
    """Transport controls + time slider + readout. Actions are exposed for menus and shortcuts."""

    playingChanged = Signal(bool)

    def __init__(self, document: ClipDocument, parent=None):
        super().__init__(parent)
        self.doc = document
        self.speed = 1.0
        self._timer = QTimer(self)
        self._timer.setInterval(frame_interval_ms(document.frame_rate))
        # A coarse timer may fire up to 5 % late and is aligned with other coarse timers: playback
        # wants each frame on time.
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
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
        self.time_in_frames = False
        self._icon_kinds = {
            self.act_start: "start",
            self.act_prev: "prev",
            self.act_play: "play",
            self.act_next: "next",
            self.act_end: "end",
            self.act_loop: "loop",
        }
        for a, tip in (
            (self.act_start, "Go to the first key"),
            (self.act_prev, "Step one frame back"),
            (self.act_play, "Play / pause"),
            (self.act_next, "Step one frame forward"),
            (self.act_end, "Go to the last key"),
            (self.act_loop, "Loop playback"),
        ):
            a.setToolTip(f"{tip} ({a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
            a.setStatusTip(tip)
        self.set_icon_colour(self.palette().color(QPalette.ColorRole.WindowText).name())

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
        self.time_box.valueChanged.connect(self._on_time_box)
        row.addWidget(self.time_box)
        self.slider = JumpSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip("Scrub (frames): click jumps there, drag scrubs")
        self.slider.valueChanged.connect(self._on_slider)
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        row.addWidget(self.slider, 1)
        # Long readouts never resize the window or shift the graphs while scrubbing: elided in the
        # middle, so the time at the start and the speed with its unit at the end stay readable.
        self.readout = ElidedLabel()
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setContentsMargins(8, 0, 8, 3)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(row)
        lay.addWidget(_FixedHost(self.readout))

        # Mid-drag the readout follows at most every READOUT_LIVE_MS (as the graphs' batched
        # tracks do), exactly at the release: sampling the pose at the cursor was ~1 ms of every
        # drag step on a quaternion clip (its Euler keys unwrapped again per step).
        self._readout_timer = QTimer(self)
        self._readout_timer.setSingleShot(True)
        self._readout_timer.setInterval(READOUT_LIVE_MS)
        self._readout_timer.timeout.connect(self._update_readout)
        document.timeChanged.connect(self._on_time)
        document.clipChanged.connect(self._on_clip)
        document.selectionChanged.connect(self._update_readout)
        self._on_clip()

    # ------------------------------------------------------------------ look
    def set_icon_colour(self, colour: str) -> None:
        """Draw the transport icons in ``colour``."""
        self.icon_colour = colour
        self._icon_play = transport_icon("play", colour)
        self._icon_pause = transport_icon("pause", colour)
        for a, kind in self._icon_kinds.items():
            a.setIcon(transport_icon(kind, colour))
        self.act_play.setIcon(self._icon_pause if self.is_playing() else self._icon_play)

    def set_theme(self, theme) -> None:
        self.set_icon_colour(theme.text)

    def set_time_in_frames(self, on: bool) -> None:
        """The time box and the readout lead with frames (True) or seconds (False)."""
        self.time_in_frames = bool(on)
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
            self._timer.start(frame_interval_ms(self.doc.frame_rate))
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
        return self.doc.clip_bounds()

    def step(self, frames: int) -> None:
        """Move by whole frames, landing on the frame grid."""
        fr = self.doc.frame_rate
        f = round(self.doc.current_time * fr) + frames
        self.doc.set_time(f / fr)

    # ------------------------------------------------------------------ sync
    def _on_clip(self) -> None:
        if self.doc.in_live_edit() and getattr(self, "_range_key", None) is not None:
            # a drag step: the range (Clip.start/end scan every track) follows when the drag ends,
            # the readout at most every READOUT_LIVE_MS
            if not self._readout_timer.isActive():
                self._readout_timer.start()
            return
        fr = self.doc.frame_rate
        self._timer.setInterval(frame_interval_ms(fr))
        start, end = self.doc.clip.start, self.doc.clip.end
        key = (fr, start, end, self.time_in_frames)
        if key == getattr(self, "_range_key", None):
            self._on_time(self.doc.current_time)  # a key edit: same range
            return
        self._range_key = key
        self.slider.blockSignals(True)
        self.slider.setRange(int(np.floor(min(0.0, start) * fr)), int(np.ceil(end * fr)))
        self.slider.blockSignals(False)
        self.time_box.blockSignals(True)
        if self.time_in_frames:
            self.time_box.setSuffix(" f")
            self.time_box.setDecimals(2)
            self.time_box.setRange(min(0.0, start) * fr, max(end, 0.0) * fr)
            self.time_box.setSingleStep(1.0)
            self.time_box.setToolTip("Current time (frames)")
        else:
            self.time_box.setSuffix(" s")
            self.time_box.setDecimals(3)
            self.time_box.setRange(min(0.0, start), max(end, 0.0))
            self.time_box.setSingleStep(1.0 / fr)
            self.time_box.setToolTip("Current time (seconds)")
        self.time_box.blockSignals(False)
        self._on_time(self.doc.current_time)

    def _on_time_box(self, v: float) -> None:
        self.doc.set_time(v / self.doc.frame_rate if self.time_in_frames else v)

    def _on_slider(self, frame: int) -> None:
        self.doc.set_time(frame / self.doc.frame_rate)

    def _on_time(self, t: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(t * self.doc.frame_rate)))
        self.slider.blockSignals(False)
        self.time_box.blockSignals(True)
        self.time_box.setValue(t * self.doc.frame_rate if self.time_in_frames else t)
        self.time_box.blockSignals(False)
        self._update_readout()

    def _update_readout(self) -> None:
        self._readout_timer.stop()
        text = readout_text(self.doc, self.time_in_frames)
        tr = self.doc.current_track()
        key = (text, tr.path if tr else None)
        if key == getattr(self, "_readout_key", None) and self.readout.full_text() == text:
            # the same readout (a drag step away from the cursor): setText would re-measure the
            # lines and post a layout request of the window's bottom bar (~0.5 ms per drag step)
            return
        self._readout_key = key
        self.readout.setText(text)
        if tr:
            self.readout.setToolTip(
                f"{self.readout.toolTip()}\n\n{tr.path}: the pose Unity plays at the cursor, its "
                "equivalent Euler triple, quaternion (x, y, z, w) and angular speed"
            )
