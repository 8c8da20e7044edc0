"""Input-to-pixel timing for the editor benchmarks: from an input event to the changed pixels on the
X server's screen, not only to the event handler's return.

One step (:meth:`PixelProbe.step`):

1. ``t0``; the input event is sent (a ``QMouseEvent`` / ``QWheelEvent`` to the graph viewport, as a
   real move reaches it; the caller's ``send`` function);
2. ``t_handler``: the handler returned (the old "data updated" figure);
3. Qt's event loop runs (``processEvents``) until every part of the window the step changed has been
   painted *and flushed to the X server*: a ``Paint`` of the watched widget (the graph viewport)
   delivered after ``t0`` (Qt paints every dirty widget of a top-level window in one sync and flushes
   the backing store to X right after, in the same ``UpdateRequest``), and, when the step asked the
   3D view (a native ``QOpenGLWindow``) to update, its ``frameSwapped`` (the GL frame copied to the
   X window: on Mesa's llvmpipe an ``XPutImage``). Paints posted late (Qt's 5 ms update timer for
   native windows, scene updates queued behind the handler) are waited for, which one
   ``processEvents`` after the handler did not;
4. ``t_pixels``: an X round trip (``QScreen.grabWindow`` of one pixel: X handles requests in order,
   so when the reply is back every earlier ``PutImage`` is on the screen).

Outside the timed span, :meth:`PixelProbe.verify` grabs the watched area from the screen
(``QScreen.grabWindow(0, ...)``: the X server's framebuffer, native GL windows included) and
compares it with the previous grab, so a figure is never of a step that changed nothing.

Reusable: ``PixelProbe(app, watched_widget, gl_window=None)``, then ``probe.step(send)`` per input
event; ``probe.close()`` removes the hooks. The gizmo rotate drag row uses it the same way with
``watched_widget`` = the graph viewport (the curves follow the gizmo) and ``gl_window`` = the 3D view.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QGuiApplication, QImage

__all__ = ["PixelProbe", "StepTiming"]

#: A step that has not shown its pixels after this long is reported as this long (and counted).
TIMEOUT_S = 1.0


@dataclass
class StepTiming:
    """One input event: ms from sending it to the handler's return, to the pixels on screen, and
    the process CPU time of the whole span."""

    handler_ms: float
    first_pass_ms: float  # handler + one processEvents (what the table printed as "painted" before)
    pixel_ms: float
    graph_ms: float  # until the watched widget's repaint was flushed (the 3D view's frame not waited for)
    cpu_ms: float
    gl_frame: bool  # the 3D view drew a frame for this step
    timed_out: bool = False
    changed: bool = True  # the screen's watched area differed after the step (set by the caller)


class _Watch(QObject):
    """Event filter on the watched widget: the time of the last Paint delivered to it."""

    def __init__(self) -> None:
        super().__init__()
        self.last_paint = 0.0
        self.paints = 0

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 - Qt API
        if ev.type() == QEvent.Type.Paint:
            self.last_paint = time.perf_counter()
            self.paints += 1
        return False


class PixelProbe:
    """Times input events to their pixels on screen (module docstring). ``watched`` is the widget
    whose repaint shows the step (the graph viewport); ``gl_window`` the 3D view's ``QOpenGLWindow``
    (or None): when a step calls its ``update()``, the step also waits for its ``frameSwapped``."""

    def __init__(self, app, watched, gl_window=None):
        self.app = app
        self.watched = watched
        self.watch = _Watch()
        watched.installEventFilter(self.watch)
        self.gl = gl_window
        self._gl_requested = 0.0
        self._gl_swapped = 0.0
        self.timeouts = 0
        self._last_image: QImage | None = None
        if gl_window is not None:
            # Python callers (GizmoView, pyqtgraph's GL items) call ``view.update()``: an instance
            # attribute in front of the C++ slot records the request and forwards it.
            original = gl_window.update

            def update(*a, _orig=original):
                self._gl_requested = time.perf_counter()
                return _orig(*a)

            gl_window.update = update
            self._gl_original = original
            gl_window.frameSwapped.connect(self._on_swap)

    def _on_swap(self) -> None:
        self._gl_swapped = time.perf_counter()

    def close(self) -> None:
        self.watched.removeEventFilter(self.watch)
        if self.gl is not None:
            self.gl.frameSwapped.disconnect(self._on_swap)
            try:
                del self.gl.update
            except AttributeError:
                pass

    def _round_trip(self) -> None:
        """One X round trip: every request sent before it (the flushes) has been executed."""
        screen = QGuiApplication.primaryScreen()
        screen.grabWindow(0, 0, 0, 1, 1)

    def step(self, send: Callable[[], None]) -> StepTiming:
        """Send one input event (``send()``) and run Qt's event loop until its pixels are on screen."""
        app = self.app
        c0 = time.process_time()
        t0 = time.perf_counter()
        send()
        t_h = time.perf_counter()
        timed_out = False
        t_first = t_graph = 0.0
        while True:
            app.processEvents()
            now = time.perf_counter()
            t_first = t_first or now
            painted = self.watch.last_paint >= t0
            if painted and not t_graph:
                t_graph = now
            gl_wanted = self._gl_requested >= t0
            gl_done = (not gl_wanted) or self._gl_swapped >= self._gl_requested
            if painted and gl_done:
                break
            if now - t0 > TIMEOUT_S:
                timed_out = True
                self.timeouts += 1
                break
            # Qt's native-window update timer (5 ms) or queued scene updates are still to come:
            # wait for them without spinning a core the neighbours need (0.2 ms granularity).
            time.sleep(0.0002)
        self._round_trip()
        t_p = time.perf_counter()
        return StepTiming(
            handler_ms=(t_h - t0) * 1000,
            first_pass_ms=(t_first - t0) * 1000,
            graph_ms=((t_graph or t_p) - t0) * 1000,
            pixel_ms=(t_p - t0) * 1000,
            cpu_ms=(time.process_time() - c0) * 1000,
            gl_frame=self._gl_requested >= t0,
            timed_out=timed_out,
        )

    def grab(self) -> QImage:
        """The watched widget's area as the X server shows it now (untimed)."""
        w = self.watched
        top_left = w.mapToGlobal(QPoint(0, 0))
        screen = QGuiApplication.primaryScreen()
        return screen.grabWindow(0, top_left.x(), top_left.y(), w.width(), w.height()).toImage()

    def verify(self) -> bool:
        """Whether the watched area on screen differs from the previous :meth:`verify` (the first
        call only records it). Untimed: call it between steps."""
        img = self.grab()
        changed = self._last_image is None or img != self._last_image
        self._last_image = img
        return changed
