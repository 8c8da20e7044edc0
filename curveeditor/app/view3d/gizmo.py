"""The 3D view: the orientation of the selected track at the current time, drawn as Unity shows it.

What is drawn (pyqtgraph.opengl):

* the main axis tripod (Unity X red, Y green, Z blue, with cones and labels) at ``current_time``:
  the recipe preview ("after") when one exists, else the current clip;
* ghost tripods: the current clip ("before", when a preview exists) and the original as loaded
  (when its pose differs from the one shown);
* the trails of the forward (Unity +Z) and up (+Y) vectors over the whole clip on a wireframe unit
  sphere, with a dot at the current time, plus faint "before" trails while a preview is shown;
* the gimbal rings of the track's rotation order (Unity's ZXY by default) from
  ``engine.display.gimbal_rings``, turning red as the middle angle approaches the lock.

Unity is left-handed (Y up, Z forward). Every Unity quantity goes through
``engine.display.unity_to_gl_quat`` / ``unity_to_gl_points`` (mirror Z) into right-handed GL
coordinates, still Y-up. pyqtgraph's camera orbits about its world Z axis, so the whole scene hangs
under one group item rotated +90 degrees about X: GL (x, y, z) lands at world (x, -z, y), which puts
Unity's Y on the screen's up and Unity's forward (+Z) into the screen at the default azimuth.

Updates: ``timeChanged`` only moves the tripods and rings (``setTransform`` / one ring evaluation);
``clipChanged`` / ``previewChanged`` / ``selectionChanged`` resample the trails. During a key drag
(``document.in_live_edit()``) the trails are resampled at most every ``_LIVE_TRAIL_MS`` and once when
the drag ends, the tripods and rings follow at most every ``_LIVE_FRAME_MS`` (the final pose exactly
when the drag ends), and the GL view repaints only when a tripod's pose at the current time changed.

The GL view is a :class:`GLViewWindow` (pyqtgraph's ``GLViewMixin`` on a ``QOpenGLWindow``) in a
``QWidget.createWindowContainer``, not a ``QOpenGLWidget``: see the class for the measured reason.
``set_theme`` follows the UI's dark/light theme.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pyqtgraph.opengl as gl
from pyqtgraph.opengl import GLGraphicsItem
from pyqtgraph.opengl.GLGraphicsItem import GLOptions
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from PySide6.QtCore import QElapsedTimer, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QMatrix4x4,
    QOpenGLContext,
    QPainter,
    QQuaternion,
    QSurfaceFormat,
    QVector3D,
)
from PySide6.QtOpenGL import QOpenGLWindow
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QSizePolicy,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import display
from curveeditor.engine.clip import played
from curveeditor.engine.curves import changed_span
from curveeditor.engine.rotations import UNITY_ORDER

from ..common.elided import ELIDE_PATH, ElidedLabel
from ..model.time_samples import samples_at

__all__ = ["GizmoView", "AXIS_COLORS", "FlowLegend", "legend_entry", "swatch"]

#: RGBA 0..1 of the Unity axes X, Y, Z (Unity's own gizmo colours).
AXIS_COLORS = np.array(
    [[0.93, 0.22, 0.20, 1.0], [0.45, 0.85, 0.20, 1.0], [0.22, 0.50, 1.0, 1.0]], dtype=np.float32
)
_LOCK_RED = np.array([1.0, 0.12, 0.12, 1.0], dtype=np.float32)
_BACKGROUND = (38, 40, 44)


@dataclass(frozen=True)
class _Scheme:
    """Colours of the 3D view for one UI theme (RGB 0..255 background, RGBA 0..1 otherwise)."""

    background: tuple[int, int, int]
    grid: tuple[int, int, int, int]  # 0..255, GLGridItem's convention
    sphere: tuple[float, float, float, float]
    fwd: np.ndarray  # RGB 0..1
    up: np.ndarray
    dot: tuple[float, float, float, float]


#: Dark: the look Unity's dark skin users know. Light: a pale background with darker trails, since
#: the cyan/lime trails and the white grid and dots vanish on white.
_SCHEMES = {
    True: _Scheme(
        background=_BACKGROUND,
        grid=(255, 255, 255, 40),
        sphere=(0.75, 0.78, 0.85, 0.16),
        fwd=np.array([0.30, 0.85, 1.0], dtype=np.float32),
        up=np.array([0.85, 1.0, 0.35], dtype=np.float32),
        dot=(1.0, 1.0, 1.0, 1.0),
    ),
    False: _Scheme(
        background=(236, 238, 242),
        grid=(0, 0, 0, 45),
        sphere=(0.20, 0.23, 0.30, 0.18),
        fwd=np.array([0.0, 0.50, 0.78], dtype=np.float32),
        up=np.array([0.42, 0.58, 0.0], dtype=np.float32),
        dot=(0.08, 0.08, 0.10, 1.0),
    ),
}
# Every item sets the depth mask explicitly: ghosts must not write depth (they would z-fight with
# the main tripod where both coincide), and GL state leaks from one item to the next.
_OPAQUE = {**GLOptions["opaque"], "glDepthMask": (True,)}
_TRANSLUCENT = {**GLOptions["translucent"], "glDepthMask": (True,)}
_GHOST = {**GLOptions["translucent"], "glDepthMask": (False,)}
#: forward (+Z) and up (+Y) trail colours: tints of the axis colours, distinct from the rings.
_FWD_COLOR = _SCHEMES[True].fwd
_UP_COLOR = _SCHEMES[True].up
#: trail samples per second of clip, and a cap so a long clip stays cheap to draw.
_TRAIL_HZ = 120.0
_TRAIL_BUDGET = 5000
_TRAIL_PER_KEY = 16
#: during a key drag the trails are resampled at most this often (ms), and once when it ends.
_LIVE_TRAIL_MS = 250
#: Mid-drag, the tripod and rings follow at most every this many ms (about 30 frames/s; leading
#: edge at once, the last state on the trailing edge, the exact final pose when the drag ends): a
#: software-GL frame (llvmpipe) cost ~7-10 ms of the GUI thread per mouse move, in series with the
#: graphs' repaint, which kept key-drag input-to-pixel at 27-55 ms (issue 22, benchmarks/gui.py).
_LIVE_FRAME_MS = 33
#: gimbal ring radii (outer, middle, inner): just outside the unit sphere of the trails.
_RING_RADII = (1.22, 1.15, 1.08)


def _gl_axes() -> np.ndarray:
    """Unit Unity axes X, Y, Z as GL points ``(3, 3)`` (rows)."""
    return np.asarray(display.unity_to_gl_points(np.eye(3)), dtype=float)


def _matrix(rot3: np.ndarray) -> QMatrix4x4:
    """A 4x4 transform holding the 3x3 rotation ``rot3`` (row-major)."""
    m = np.eye(4)
    m[:3, :3] = rot3
    return QMatrix4x4(*m.ravel().tolist())


class GLViewWindow(GLViewMixin, QOpenGLWindow):
    """pyqtgraph's GL view as a native ``QOpenGLWindow`` (embedded with ``createWindowContainer``).

    Why not ``GLViewWidget`` (a ``QOpenGLWidget``): a QOpenGLWidget makes Qt compose the *whole*
    top-level window through OpenGL on every repaint of any widget. With Mesa's llvmpipe (software GL,
    e.g. under Xvfb) that cost 17 ms per repaint of a 1500x940 window (measured: raster widget repaint
    0.9 ms alone, 17.5 ms beside a QOpenGLWidget, 0.45 ms beside a QOpenGLWindow container), which
    alone broke the 16 ms drag budget. A QOpenGLWindow is its own native surface: the rest of the
    window flushes as plain raster, and the 3D view repaints only when its own items change.

    Contexts are shared with ``QOpenGLContext.globalShareContext()`` (``Qt.AA_ShareOpenGLContexts``),
    as a QOpenGLWidget would, so pyqtgraph's shader cache stays valid across several GL views.
    """

    def __init__(self, parent_window=None):
        super().__init__(
            QOpenGLContext.globalShareContext(),
            QOpenGLWindow.UpdateBehavior.NoPartialUpdate,
            parent_window,
        )
        fmt = QSurfaceFormat.defaultFormat()
        fmt.setDepthBufferSize(max(fmt.depthBufferSize(), 24))  # the tripod cones need depth testing
        self.setFormat(fmt)
        self.before_paint = []

    def devicePixelRatioF(self) -> float:  # noqa: N802 - the mixin's QWidget API
        return float(self.devicePixelRatio())

    #: called on Home while the GL window has the keyboard focus (a native window's key events do
    #: not reach the widgets' shortcuts reliably)
    on_home = None
    #: callables run at the start of every paint, before the items draw: geometry that depends on
    #: the camera (a gizmo of constant size on screen, rings facing the viewer). Repaints they
    #: request are dropped (the paint under way draws what they set).
    before_paint: list = []
    _painting = False

    def paintGL(self) -> None:  # noqa: N802 - Qt API
        if self.before_paint:
            self._painting = True
            try:
                for fn in self.before_paint:
                    fn()
            finally:
                self._painting = False
        super().paintGL()

    def update(self) -> None:  # noqa: D102 - QPaintDeviceWindow.update
        if not self._painting:
            super().update()

    def keyPressEvent(self, ev) -> None:  # noqa: N802
        if ev.key() == Qt.Key.Key_Home and self.on_home is not None:
            ev.accept()
            self.on_home()
            return
        super().keyPressEvent(ev)

    def rect(self) -> QRect:  # GLTextItem projects labels through view().rect()
        return QRect(0, 0, self.width(), self.height())

    def render_image(self) -> QImage:
        """Render the scene now into the back buffer and read it back (no swap, nothing shown).

        ``QOpenGLWindow.grabFramebuffer`` only reads whatever the buffer holds; after a swap that is
        the previous frame, so a grab right after a data change would miss it.
        """
        if not self.isExposed():
            return QImage()
        self.makeCurrent()
        ctx = self.context()
        if ctx is None:
            return QImage()
        f = ctx.functions()
        f.glBindFramebuffer(0x8D40, self.defaultFramebufferObject())  # GL_FRAMEBUFFER
        dpr = self.devicePixelRatio()
        f.glViewport(0, 0, int(self.width() * dpr), int(self.height() * dpr))
        self.paintGL()
        return self.grabFramebuffer()


class _Labels(GLGraphicsItem.GLGraphicsItem):
    """Text labels at 3D points, drawn as pyqtgraph's ``GLTextItem`` draws one each (its default
    font, left/bottom aligned at the projected point, additive GL options), with one QPainter for
    all: each QPainter on the GL window costs its begin/end. Measured in one process, switching
    every 5 frames (Gangnam BVH, shared 2-core machine): paintGL 3.45 -> 3.20 ms for the tripod's
    labels; 3.47 -> 3.26 ms for the world axis labels of a clip without a character.
    """

    def __init__(
        self,
        labels: list[tuple[np.ndarray, str, QColor]],
        font: QFont | None = None,
        parentItem=None,  # noqa: N803 - pyqtgraph's keyword
    ):
        super().__init__(parentItem=parentItem)
        self.setGLOptions("additive")
        #: (position (3,) in the item's coordinates, text, colour), drawn in this order
        self.labels = [(QVector3D(*map(float, pos)), text, QColor(c)) for pos, text, c in labels]
        self.font = QFont("Helvetica", 16) if font is None else QFont(font)

    def set_color(self, i: int, color: QColor) -> None:
        pos, text, _old = self.labels[i]
        self.labels[i] = (pos, text, QColor(color))
        self.update()

    def paint(self) -> None:
        if not self.labels:
            return
        self.setupGLState()
        view = self.view()
        rect = QRectF(view.rect())  # as GLTextItem.compute_projection
        ndc_to_viewport = QMatrix4x4()
        ndc_to_viewport.viewport(rect.left(), rect.bottom(), rect.width(), -rect.height())
        project = ndc_to_viewport * self.mvpMatrix()
        painter = QPainter(view)
        painter.setFont(self.font)
        painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        for pos, text, color in self.labels:
            painter.setPen(color)
            painter.drawText(project.map(pos).toPointF(), text)
        painter.end()


class _Tripod:
    """Axis lines, cones and (optionally) labels under one transform group item."""

    def __init__(self, parent: GLGraphicsItem, alpha: float, labels: bool, scale: float = 1.0):
        self.group = GLGraphicsItem.GLGraphicsItem(parentItem=parent)
        if alpha < 1.0:
            self.group.setDepthValue(-1)  # ghosts first: the main tripod then draws over them
        axes = _gl_axes() * scale
        colors = AXIS_COLORS.copy()
        colors[:, 3] = alpha
        opts = _OPAQUE if alpha >= 1.0 else _GHOST
        pts = np.zeros((6, 3))
        pts[1::2] = axes * 0.86
        self.lines = gl.GLLinePlotItem(
            pos=pts,
            color=np.repeat(colors, 2, axis=0),
            width=3 if alpha >= 1.0 else 2.5,
            mode="lines",
            antialias=False,
            glOptions=opts,
            parentItem=self.group,
        )
        cone = gl.MeshData.cylinder(rows=1, cols=16, radius=[0.055 * scale, 0.0], length=0.14 * scale)
        self.cones = []
        for i in range(3):
            item = gl.GLMeshItem(
                meshdata=cone,
                color=tuple(colors[i]),
                shader="shaded" if alpha >= 1.0 else None,
                smooth=True,
                glOptions=opts,
                parentItem=self.group,
            )
            # Glyph placement only: turn the cone's +z onto the axis and move it to the tip.
            q = QQuaternion.rotationTo(QVector3D(0, 0, 1), QVector3D(*axes[i]))
            m = QMatrix4x4()
            m.translate(QVector3D(*(axes[i] * 0.86)))
            m.rotate(q)
            item.setTransform(m)
            self.cones.append(item)
        self.labels: _Labels | None = None
        if labels:
            self.labels = _Labels(
                [(axes[i] * 1.08, name, QColor.fromRgbF(*colors[i])) for i, name in enumerate("XYZ")],
                parentItem=self.group,
            )

    def set_rotation(self, rot3: np.ndarray | None) -> None:
        if rot3 is None:
            self.group.hide()
            return
        self.group.show()
        self.group.setTransform(_matrix(rot3))

    def set_visible(self, on: bool) -> None:
        self.group.setVisible(on)


def _trail_times(start: float, end: float, key_times: np.ndarray) -> np.ndarray:
    """Sample times (s) for the trails: subdivisions of every key interval, so motion packed between
    two keys (a wrap playing a full spin in one frame) draws as an arc, plus a uniform grid; about
    :data:`_TRAIL_BUDGET` samples in all so a drag on a long track stays cheap to redraw. A track
    with more keys than that draws through every k-th key (k = keys / budget, rounded up): a
    10-minute 120 fps take drew 4 x 72,000 trail points, a third of each mid-drag 3D frame (issue 26)."""
    n_keys = len(key_times)
    if n_keys > _TRAIL_BUDGET:
        stride = -(-n_keys // _TRAIL_BUDGET)
        picked = key_times[::stride]
        return np.unique(np.concatenate([[start], picked, key_times[-1:], [end]]))
    per = int(np.clip(_TRAIL_BUDGET // max(n_keys, 1), 1, _TRAIL_PER_KEY)) if n_keys >= 2 else 0
    n_grid = int(np.clip(min((end - start) * _TRAIL_HZ, _TRAIL_BUDGET - per * n_keys), 2, _TRAIL_BUDGET))
    grid = np.linspace(start, end, n_grid + 1)
    if per == 0:
        return grid
    u = np.arange(per) / per
    sub = (key_times[:-1, None] + np.diff(key_times)[:, None] * u[None, :]).ravel()
    return np.unique(np.concatenate([grid, sub, key_times]))


def _sphere_lines(n_lat: int = 7, n_lon: int = 12, steps: int = 72) -> np.ndarray:
    """Segment pairs ``(K, 3)`` of a wireframe unit sphere (latitude circles about GL Y = Unity up)."""
    segs = []
    a = np.linspace(0.0, 2 * np.pi, steps + 1)
    for lat in np.linspace(-np.pi / 2, np.pi / 2, n_lat + 2)[1:-1]:
        r, y = np.cos(lat), np.sin(lat)
        ring = np.stack([r * np.cos(a), np.full_like(a, y), r * np.sin(a)], axis=1)
        segs.append(np.repeat(ring, 2, axis=0)[1:-1])
    b = np.linspace(-np.pi / 2, np.pi / 2, steps // 2 + 1)
    for lon in np.linspace(0.0, np.pi, n_lon // 2, endpoint=False):
        meridian = np.stack(
            [np.cos(b) * np.cos(lon), np.sin(b), np.cos(b) * np.sin(lon)], axis=1
        )  # half great circle through both poles; with lon + pi below, a full one
        full = np.concatenate([meridian, meridian[::-1] * [-1, 1, -1]])
        segs.append(np.repeat(full, 2, axis=0)[1:-1])
    return np.concatenate(segs)


class GizmoView(QWidget):
    """3D orientation view of the document's primary selected track.

    Args:
        document: the shared :class:`~curveeditor.app.model.document.ClipDocument`.

    Signals:
        rendered(): emitted after the scene data changed (trails/tripods updated); tests wait on it.
    """

    rendered = Signal()
    #: set by the character layer: ``frame_hook(reset_angles) -> bool`` fits the camera to the
    #: character (Home, a resize of an untouched camera); False = the single gizmo's default view
    frame_hook = None
    #: draw the original's faint tripod (the character layer turns it off: its ghost skeleton shows
    #: the original's pose, and the tripod's 4 GL items cost ~1 ms of every paint)
    original_tripod_on = True
    #: the gimbal rings drawn faint (the rotation gizmo's rings are on): they still turn red near lock
    gimbal_rings_dim = False
    #: mid-drag, resample the sphere trails only when the drag ends (a gizmo drag re-keys one pose:
    #: the trails change around one key, and their 5,000 samples were a GL repaint of their own)
    trails_after_drag = False

    def __init__(self, document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self._main_track = None
        self._before_track = None
        self._original_track = None
        self._order = UNITY_ORDER
        self._scheme = _SCHEMES[True]
        self._main_rot: np.ndarray | None = None
        self._shown_rots: tuple | None = None
        self._gimbal_proximity = 0.0
        self._trails_stale = False
        self._unseen_stale = False  # work skipped while unseen, done on the next showEvent
        self._trail_timer = QTimer(self)
        self._trail_timer.setSingleShot(True)
        self._trail_timer.setInterval(_LIVE_TRAIL_MS)
        self._trail_timer.timeout.connect(self.refresh)
        self._live_frame_timer = QTimer(self)  # the trailing edge of the mid-drag frame cap
        self._live_frame_timer.setSingleShot(True)
        self._live_frame_timer.timeout.connect(self._live_frame)
        self._live_frame_clock = QElapsedTimer()
        self.trail_updates = 0  # how many times the trails were resampled (tests)

        self.view = GLViewWindow()
        self.view.setBackgroundColor(_BACKGROUND)
        self.view.on_home = self.reset_view
        self.view_widget = QWidget.createWindowContainer(self.view, self)
        self.view_widget.setMinimumSize(220, 120)  # a short dock keeps the legend below the view
        self.view_widget.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

        self._scene = GLGraphicsItem.GLGraphicsItem()
        yup = QMatrix4x4()
        yup.rotate(90.0, 1.0, 0.0, 0.0)  # GL Y-up scene -> pyqtgraph's Z-up world
        self._scene.setTransform(yup)
        self.view.addItem(self._scene)

        self._grid = grid = gl.GLGridItem(
            size=QVector3D(4, 4, 1), color=(255, 255, 255, 40), glOptions=_TRANSLUCENT
        )
        grid.setSpacing(0.25, 0.25, 1)
        self.view.addItem(grid)  # world XY = Unity's ground plane XZ

        self._sphere = gl.GLLinePlotItem(
            pos=_sphere_lines(),
            color=(0.75, 0.78, 0.85, 0.16),
            width=1,
            mode="lines",
            antialias=False,
            glOptions=_GHOST,  # trails lie on the same sphere: no depth write, no z-fighting
            parentItem=self._scene,
        )
        self._sphere.setDepthValue(-2)
        self._world_labels = _Labels(
            [
                (_gl_axes()[i] * 1.4, name, QColor.fromRgbF(*(AXIS_COLORS[i, :3] * 0.6 + 0.25), 0.9))
                for i, name in enumerate(("+X", "+Y up", "+Z forward"))
            ],
            font=QFont("DejaVu Sans", 9),
            parentItem=self._scene,
        )
        self._world_axes = gl.GLLinePlotItem(
            pos=np.concatenate([np.zeros((3, 3)), _gl_axes() * 1.3], axis=1).reshape(6, 3),
            color=np.repeat(np.c_[AXIS_COLORS[:, :3] * 0.6 + 0.2, np.full(3, 0.35)], 2, axis=0),
            width=1,
            mode="lines",
            glOptions=_TRANSLUCENT,
            parentItem=self._scene,
        )

        def trail(color, width, ghost=False):
            item = gl.GLLinePlotItem(
                pos=np.zeros((2, 3)),
                color=color,
                width=width,
                mode="line_strip",
                antialias=False,
                glOptions=_GHOST if ghost else _TRANSLUCENT,
                parentItem=self._scene,
            )
            if ghost:
                item.setDepthValue(-1)
            return item

        self._trail_fwd_before = trail((*(_FWD_COLOR * 0.7), 0.4), 1, ghost=True)
        self._trail_up_before = trail((*(_UP_COLOR * 0.7), 0.4), 1, ghost=True)
        self._trail_fwd = trail((*_FWD_COLOR, 1.0), 2)
        self._trail_up = trail((*_UP_COLOR, 1.0), 2)
        self._trail_dots = gl.GLScatterPlotItem(
            pos=np.zeros((2, 3)),
            color=np.array([[1, 1, 1, 1.0], [1, 1, 1, 1.0]]),
            size=9,
            pxMode=True,
            glOptions=_TRANSLUCENT,
            parentItem=self._scene,
        )

        self._rings = [
            gl.GLLinePlotItem(
                pos=np.zeros((2, 3)),
                color=(1, 1, 1, 0.5),
                width=2,
                mode="line_strip",
                antialias=False,
                glOptions=_TRANSLUCENT,
                parentItem=self._scene,
            )
            for _ in range(3)
        ]

        self.original_tripod = _Tripod(self._scene, alpha=0.3, labels=False, scale=0.97)
        self.before_tripod = _Tripod(self._scene, alpha=0.6, labels=False, scale=0.985)
        self.main_tripod = _Tripod(self._scene, alpha=1.0, labels=True)

        # ---- chrome: title, kind and gimbal; the tools row; the legend
        # Elided labels: a long bone path must never force the dock (and squeeze the graphs) wider.
        self._title = ElidedLabel("", self, elide=ELIDE_PATH)
        self._legend = FlowLegend(LEGEND_LINES, self)
        #: callables returning more legend entries ``[(html, plain text)]`` (the character, the
        #: rotation gizmo, trails and onion skin add theirs); :meth:`update_legend` asks them
        self.legend_extra: list = []
        self._has_preview = False
        self._kind_label = QLabel(self)
        self._gimbal_label = QLabel(self)
        # A fixed size (the widest text): a label whose minimum and maximum sizes are equal does not
        # invalidate the dock's layout when its text changes (at every percent during playback).
        self._gimbal_label.setFixedSize(
            self._gimbal_label.fontMetrics().horizontalAdvance("gimbal ZXY: 100%") + 8,
            self._gimbal_label.sizeHint().height(),
        )
        self.reset_action = QAction("Reset view", self)
        self.reset_action.setToolTip("Reset the 3D camera (Home)")
        self.reset_action.setShortcut(Qt.Key.Key_Home)
        self.reset_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.reset_action.triggered.connect(self.reset_view)
        self.addAction(self.reset_action)
        #: the tools row: the layers add their toggles (rotate, space, trail, onion, follow) before
        #: the options button; a row too narrow folds its last tools into Qt's extension menu
        self.toolbar = QToolBar(self)
        self.toolbar.setIconSize(QSize(12, 12))
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toolbar.setMovable(False)
        # no frame or padding (the style's 4 px a side cost the GL view 8 px of height); every button
        # is the tool bar's own (for actions), so the theme's colours reach them
        self.toolbar.setStyleSheet(_TOOLBAR_CSS)
        #: the options menu (the last button of the tools row): settings of the layers, camera
        self.options_menu = QMenu("View options", self)
        self.options_menu.addAction(self.reset_action)
        self._options_action = self.menu_tool("\u2261", self.options_menu)  # a menu glyph (U+22EF drew faint)
        self._options_action.setToolTip("3D view options: trail and onion-skin frames, camera")
        self.toolbar.addAction(self._options_action)
        self._menu_button(self._options_action)
        button = self.toolbar.widgetForAction(self._options_action)
        glyph = QFont(button.font())
        glyph.setBold(True)  # its three thin strokes read as grey in the dark theme otherwise
        glyph.setPointSizeF(glyph.pointSizeF() + 1)
        button.setFont(glyph)

        # row 1: the bone's path (elided by path parts: its name stays) and the gimbal figure;
        # row 2: the tools, and the track's kind and order at the right
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 0)
        top.addWidget(self._title, 1)
        top.addWidget(self._gimbal_label)
        second = QHBoxLayout()
        second.setContentsMargins(2, 0, 4, 0)
        second.addWidget(self.toolbar, 1)
        second.addWidget(self._kind_label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addLayout(second)
        lay.addWidget(self.view_widget, 1)
        lay.addWidget(self._legend)

        self.reset_view()
        document.timeChanged.connect(self._on_time)
        document.clipChanged.connect(self._on_data_changed)
        document.previewChanged.connect(self._on_data_changed)
        document.selectionChanged.connect(self._on_data_changed)
        self.refresh()

    # ------------------------------------------------------------------ public
    def add_tool(self, item) -> None:
        """Add a QAction (or a widget) to the tools row, before the options button. An action with a
        menu (:meth:`menu_tool`) opens it on a click."""
        if isinstance(item, QAction):
            self.toolbar.insertAction(self._options_action, item)
            if item.menu() is not None:
                self._menu_button(item)
        else:
            self.toolbar.insertWidget(self._options_action, item)

    def menu_tool(self, text: str, menu: QMenu) -> QAction:
        """An action for the tools row that pops ``menu`` up (for :meth:`add_tool`)."""
        act = QAction(text, self)
        act.setMenu(menu)
        return act

    def _menu_button(self, act: QAction) -> None:
        button = self.toolbar.widgetForAction(act)
        if isinstance(button, QToolButton):
            button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)

    def update_legend(self) -> None:
        """Re-flow the legend: the view's own entries, then the layers' (:attr:`legend_extra`)."""
        entries = self._legend_entries(self._has_preview) if self._main_track is not None else []
        extra = [e for fn in self.legend_extra for e in fn()]
        # the layers' first entry (what the character view says) leads
        self._legend.set_entries(extra[:1] + entries + extra[1:])

    def reset_view(self) -> None:
        """Camera back to a 3/4 view from behind-left, Unity Y up, looking along Unity +Z, far
        enough that the sphere, rings and labels fit the widget's shorter side."""
        self.view.opts["fov"] = 50  # pyqtgraph's fov is horizontal: wide, short docks need distance
        if self.frame_hook is None or not self.frame_hook(True):
            w, h = max(self.view_widget.width(), 1), max(self.view_widget.height(), 1)
            distance = 4.6 * max(1.0, (w / h) / 1.1)
            self.view.setCameraPosition(
                pos=QVector3D(0, 0, 0), distance=distance, elevation=22.0, azimuth=-112.0
            )
        self._reset_params = dict(self.view.cameraParams())
        self.view.update()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        # Keep the default framing while the user has not moved the camera.
        if getattr(self, "_reset_params", None) == dict(self.view.cameraParams()):
            self.reset_view()

    def tripod_rotation(self) -> np.ndarray | None:
        """The GL rotation ``(3, 3)`` of the main tripod (right-handed, Y up), or ``None``."""
        return None if self._main_rot is None else self._main_rot.copy()

    def tripod_transform(self) -> QMatrix4x4:
        """The main tripod's GL transform as set on the item (for tests and debugging)."""
        return self.main_tripod.group.transform()

    def scene_transform(self) -> QMatrix4x4:
        """GL (Y-up) -> pyqtgraph world (Z-up) transform of the whole scene."""
        return self._scene.transform()

    def render_to_array(self) -> np.ndarray:
        """The current frame as ``(H, W, 4)`` uint8 RGBA (renders if needed; the widget must be shown)."""
        img = self.view.render_image()
        img = img.convertToFormat(img.Format.Format_RGBA8888)
        w, h = img.width(), img.height()
        if w == 0 or h == 0:
            return np.zeros((0, 0, 4), np.uint8)
        bpl = img.bytesPerLine()
        arr = np.frombuffer(img.constBits(), dtype=np.uint8, count=bpl * h).reshape(h, bpl)
        return arr[:, : w * 4].reshape(h, w, 4).copy()

    def grab_image(self):
        """The current frame as a ``QImage`` (rendered now, so it shows the latest scene)."""
        return self.view.render_image()

    # ------------------------------------------------------------------ updates
    def _tracks(self):
        doc = self.document
        track = doc.current_track()
        if track is None:
            return None, None, None
        path = track.path

        def find(clip):
            if clip is None:
                return None
            try:
                return clip.track(path)
            except KeyError:
                return None

        if doc.preview is not None and find(doc.preview) is not None:
            return find(doc.preview), track, find(doc.original)
        return track, None, find(doc.original)

    def _unseen(self) -> bool:
        """The window is shown but this view is not (its dock closed, or tabbed behind another):
        its work waits for :meth:`showEvent` (a key drag step, a playback tick did it for nobody)."""
        if self.isVisible() or not self.window().isVisible():
            return False
        self._unseen_stale = True
        return True

    def showEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._unseen_stale:
            self._unseen_stale = False
            self.refresh()

    def _on_data_changed(self) -> None:
        if self._unseen():
            return
        # Tracks are immutable and edits replace only the tracks they change: when the three tracks
        # drawn are the same objects (a drag on another track), there is nothing to redraw.
        main, before, original = self._tracks()
        same = main is self._main_track and before is self._before_track and original is self._original_track
        live = self.document.in_live_edit()
        if same and main is not None:
            if self._trails_stale and not live:
                self.refresh()  # the drag ended: trails of the final clip
            return
        old = self._main_track
        if live and main is not None and old is not None and main.path == old.path and main.n_keys:
            # Mid-drag on the shown track: trails (5000 samples) at most every _LIVE_TRAIL_MS and once
            # after the drag; the tripod and rings now, and the GL view repaints only if they moved.
            others_same = before is self._before_track and original is self._original_track
            self._main_track, self._before_track, self._original_track = main, before, original
            self._trails_stale = True
            if not self._trail_timer.isActive() and not self.trails_after_drag:
                self._trail_timer.start()
            # A key dragged away from the current time changes nothing the tripod shows: the
            # engine says where the two states may play differently (0.5 ms a step otherwise).
            span = changed_span(old.curve, main.curve) if others_same else None
            if span is not None and not (span[0] <= self.document.current_time <= span[1]):
                return
            if self._live_frame_timer.isActive():
                return  # a frame is due: it poses the latest clip
            clock = self._live_frame_clock
            if clock.isValid() and clock.elapsed() < _LIVE_FRAME_MS:
                self._live_frame_timer.start(max(1, _LIVE_FRAME_MS - int(clock.elapsed())))
                return
            self._live_frame()
            return
        self.refresh()

    def _live_frame(self) -> None:
        """One mid-drag frame: the tripods and rings at the current time, if they moved."""
        self._live_frame_clock.start()
        self._on_time(None, only_if_moved=True)

    def refresh(self) -> None:
        """Recompute everything that depends on the clip, preview or selection."""
        self._trail_timer.stop()
        self._live_frame_timer.stop()
        if self._unseen():
            return
        self._trails_stale = False
        main, before, original = self._tracks()
        self._main_track, self._before_track, self._original_track = main, before, original
        doc = self.document
        if main is None or main.n_keys == 0:
            self._title.setText("<i>No rotation track selected</i>")
            self._kind_label.setText("")
            for item in (self._trail_fwd, self._trail_up, self._trail_fwd_before, self._trail_up_before):
                item.hide()
            self._trail_dots.hide()
            for r in self._rings:
                r.hide()
            self._shown_rots = None
            self.main_tripod.set_rotation(None)
            self.before_tripod.set_rotation(None)
            self.original_tripod.set_rotation(None)
            self._main_rot = None
            self._legend.set_entries([])
            self._gimbal_label.setText("")
            self.rendered.emit()
            return
        self._order = main.order  # the order display.sample_track decomposes in, for both kinds
        start = min(doc.clip.start, main.curve.start)
        end = max(doc.clip.end, main.curve.end)
        keys = [main.times] + ([before.times] if before is not None else [])
        times = _trail_times(start, end, np.unique(np.concatenate(keys)))
        self._set_trails(main, times, self._trail_fwd, self._trail_up, fade=True)
        if before is not None:
            self._set_trails(before, times, self._trail_fwd_before, self._trail_up_before, fade=False)
        else:
            self._trail_fwd_before.hide()
            self._trail_up_before.hide()
        # the path alone (elided in the middle: root and bone name stay); kind and order apart
        self._title.setText(f"<b>{html.escape(main.path)}</b>")
        self._kind_label.setText(
            f"<span style='color:#999'>{main.kind}"
            f"{', ' + main.order.upper() if main.kind == 'euler' else ''}</span>"
        )
        self._has_preview = before is not None
        self.update_legend()
        self._on_time(doc.current_time)

    def _set_trails(self, track, times, fwd_item, up_item, fade: bool) -> None:
        self.trail_updates += 1
        rots = display.rotation_matrices(played(track, times))  # Unity frame, columns = rotated axes
        fwd = display.unity_to_gl_points(rots[:, :, 2])
        up = display.unity_to_gl_points(rots[:, :, 1])
        if fade:
            # Older samples dimmer: the trail shows the direction of travel.
            k = np.linspace(0.25, 1.0, len(times))[:, None]
            cf = np.c_[self._scheme.fwd * (0.4 + 0.6 * k), 0.35 + 0.6 * k]
            cu = np.c_[self._scheme.up * (0.4 + 0.6 * k), 0.35 + 0.6 * k]
            fwd_item.setData(pos=fwd, color=cf.astype(np.float32))
            up_item.setData(pos=up, color=cu.astype(np.float32))
        else:
            fwd_item.setData(pos=fwd)
            up_item.setData(pos=up)
        fwd_item.show()
        up_item.show()

    def _rotation_at(self, track, t: float, shared: bool = True) -> np.ndarray | None:
        """GL rotation matrix (3, 3) of what Unity plays for ``track`` at ``t`` seconds. With
        ``shared``, the primary track's pose comes from the samples shared with the readout and the
        rings (its quaternion may be the other sign of ``played``'s: the same matrix, bit for bit)."""
        if track is None or track.n_keys == 0:
            return None
        if shared and track is self._main_track:
            q = samples_at(track, t).quat[:1]
        else:
            q = played(track, np.array([t]))
        return display.rotation_matrices(display.unity_to_gl_quat(q))[0]

    def _on_time(self, t: float | None, only_if_moved: bool = False) -> None:
        """Place tripods, dots and rings at ``t`` seconds (``None`` = the document's time).

        ``only_if_moved``: skip everything (no GL repaint) when no tripod rotation changed, e.g. a key
        dragged far from the current time."""
        if self._unseen():
            return
        t = float(self.document.current_time if t is None else t)
        main = self._main_track
        if main is None or main.n_keys == 0:
            return
        # Mid-drag (only_if_moved) most steps move nothing here: the bare rotation decides, and the
        # full samples (the rings' and the readout's) are taken only when it moved.
        shared = not only_if_moved
        main_rot = self._rotation_at(main, t, shared)
        original_rot = self._rotation_at(self._original_track, t, shared) if self.original_tripod_on else None
        same = original_rot is not None and main_rot is not None
        if same and np.allclose(original_rot, main_rot, atol=1e-9):
            # The original's pose is the one shown (no edit, or none at this time): its faint
            # tripod would lie under the main one. Not drawn: 4 GL items, ~0.9 ms of a ~5 ms paint
            # under llvmpipe.
            original_rot = None
        rots = (main_rot, self._rotation_at(self._before_track, t, shared), original_rot)
        if (
            only_if_moved
            and self._shown_rots is not None
            and all(
                (a is None and b is None)
                or (a is not None and b is not None and np.allclose(a, b, atol=1e-9))
                for a, b in zip(rots, self._shown_rots, strict=True)
            )
        ):
            return
        self._shown_rots = rots
        self._main_rot = rots[0]
        self.main_tripod.set_rotation(self._main_rot)
        self.before_tripod.set_rotation(rots[1])
        self.original_tripod.set_rotation(rots[2])
        # The dots: tips of forward and up at t (columns of the GL rotation = rotated GL axes).
        axes = _gl_axes()
        tips = np.stack([self._main_rot @ axes[2], self._main_rot @ axes[1]])
        self._trail_dots.setData(pos=tips)
        self._trail_dots.show()
        self._update_rings(main, t)
        self.view.update()
        self.rendered.emit()

    def _update_rings(self, track, t: float) -> None:
        samples = samples_at(track, t)  # index 0: the pose at t, shared with the readout
        proximity = float(np.clip(samples.gimbal[0], 0.0, 1.0))
        # The keyed (continuous) triple places the rings; equivalent triples would put them elsewhere.
        rings = display.gimbal_rings(samples.quat[0], self._order, euler=samples.euler[0], radii=_RING_RADII)
        for item, ring in zip(self._rings, rings, strict=True):
            pts = display.unity_to_gl_points(ring.points)
            base = AXIS_COLORS[ring.axis].copy()
            base[3] = 0.22 if self.gimbal_rings_dim else 0.5
            # Red creeps in from 40 % proximity and is full at the lock.
            w = float(np.clip((ring.proximity - 0.4) / 0.6, 0.0, 1.0))
            col = (1 - w) * base + w * _LOCK_RED
            item.setData(pos=pts, color=tuple(col), width=(1.0 if self.gimbal_rings_dim else 1.5) + 2.5 * w)
            item.show()
        self._gimbal_proximity = proximity
        text = (
            f"<span style='color:{'#ff5050' if proximity > 0.4 else '#aaa'}'>"
            f"gimbal {self._order.upper()}: {proximity * 100:.0f}%</span>"
        )
        if text != self._gimbal_label.text():  # every playback frame: re-laid out only on change
            self._gimbal_label.setText(text)
            self._gimbal_label.setToolTip(
                "Gimbal-lock proximity of the rotation order's middle axis (100% = locked, 0% = 20 deg "
                "or more away); the rings turn red near the lock."
            )

    def ring_colors(self) -> list[tuple[float, float, float, float]]:
        """Current RGBA colours of the (outer, middle, inner) gimbal rings (tests)."""
        return [tuple(float(c) for c in np.asarray(r.color).reshape(-1)[:4]) for r in self._rings]

    def set_theme(self, theme) -> None:
        """Follow the UI theme (:class:`~curveeditor.app.common.theme.Theme`): background, grid, sphere,
        trail and dot colours, legend swatches."""
        # the theme's app.setStyle re-polished the row's style-sheet buttons with the old palette,
        # which the new one then did not replace: polish them again with it
        self.toolbar.setStyleSheet("")
        self.toolbar.setStyleSheet(_TOOLBAR_CSS)
        scheme = _SCHEMES[bool(getattr(theme, "dark", True))]
        if scheme is self._scheme:
            return
        self._scheme = scheme
        self.view.setBackgroundColor(scheme.background)
        self._grid.setColor(scheme.grid)
        self._sphere.setData(color=scheme.sphere)
        self._trail_fwd_before.setData(color=(*(scheme.fwd * 0.7), 0.4))
        self._trail_up_before.setData(color=(*(scheme.up * 0.7), 0.4))
        self._trail_dots.setData(color=np.array([scheme.dot, scheme.dot]))
        tint = (0.6, 0.25) if scheme is _SCHEMES[True] else (0.75, 0.0)  # darker labels on light
        for i in range(3):
            self._world_labels.set_color(i, QColor.fromRgbF(*(AXIS_COLORS[i, :3] * tint[0] + tint[1]), 0.9))
        self.refresh()  # trails and legend in the new colours

    def background_color(self) -> tuple[int, int, int]:
        """The 3D view's background as RGB 0..255 (tests)."""
        r, g, b, _a = self.view.opts["bgcolor"]
        return round(r * 255), round(g * 255), round(b * 255)

    def _legend_entries(self, has_preview: bool) -> list:
        """The view's legend entries (:func:`legend_entry`; the legend flows them into lines)."""
        axes = [(QColor.fromRgbF(*AXIS_COLORS[i, :3]), n) for i, n in enumerate("XYZ")]
        if has_preview:
            state = [
                legend_entry(("b", "solid"), "preview"),
                legend_entry(("b", "half"), "current"),
                legend_entry(("b", "faint"), "original"),
            ]
        else:
            state = [legend_entry(("b", "solid"), "current"), legend_entry(("b", "faint"), "original")]
        fwd, up = QColor.fromRgbF(*self._scheme.fwd), QColor.fromRgbF(*self._scheme.up)
        return [
            legend_entry("Unity axes", *axes),
            *state,
            legend_entry((fwd, "fwd"), (up, "up"), "trails"),
            legend_entry("gimbal rings red near lock"),
        ]


def swatch(color: QColor) -> str:
    """A coloured square for legend text (rich text)."""
    return f"<span style='color:{QColor(color).name()}'>&#9632;</span>"


#: the tools row: no frame or padding (the style's 4 px a side cost the GL view 8 px of height)
_TOOLBAR_CSS = "QToolBar { border: 0px; padding: 0px; spacing: 1px; }"

#: lines of the 3D view's legend (fixed: the view must not change size when the text changes)
LEGEND_LINES = 4


def legend_entry(*parts) -> list[tuple[str, str, bool]]:
    """One legend entry as word tokens ``(html, plain, bold)`` for :class:`FlowLegend`. ``parts``: plain
    text (split into words), ``("b", text)`` for bold words, ``(QColor, label)`` for a coloured
    square before ``label`` (kept with it on one line)."""
    tokens: list[tuple[str, str, bool]] = []
    for part in parts:
        if isinstance(part, str):
            tokens.extend((html.escape(w), w, False) for w in part.split())
        elif part[0] == "b":
            tokens.extend((f"<b>{html.escape(w)}</b>", w, True) for w in part[1].split())
        else:
            color, label = part
            tokens.append((f"{swatch(color)}{html.escape(label)}", f"\u25a0{label}", False))
    return tokens


class FlowLegend(QLabel):
    """Legend entries (:func:`legend_entry`) flowed word by word into at most ``lines`` lines at the
    label's width, entries apart by " · ", never clipped: an entry that does not fit in the lines
    left moves to the tooltip (which lists every entry) and the last line ends with "+N". The
    height is fixed (``lines`` lines), so the GL view never changes size with the text."""

    SEP = " \u00b7 "

    def __init__(self, lines: int, parent=None):
        super().__init__(parent)
        self._lines = lines
        self._entries: list = []
        self._shown_plain = ""
        self.hidden = 0  # entries that did not fit (tests)
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF() - 1.0, 6.5))
        self.setFont(font)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(0)
        self.setContentsMargins(6, 0, 6, 4)
        self.setFixedHeight(lines * self.fontMetrics().lineSpacing() + 6)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

    def set_entries(self, entries: list) -> None:
        entries = [list(e) for e in entries if e]
        if entries == self._entries:
            return
        self._entries = entries
        self.setToolTip("\n".join(" ".join(t[1] for t in e) for e in self._entries))
        self._relayout()

    def full_text(self) -> str:
        return self.SEP.join(" ".join(t[1] for t in e) for e in self._entries)

    def shown_text(self) -> str:
        """The plain text as displayed, lines joined by newlines."""
        return self._shown_plain

    def text(self) -> str:  # noqa: D102 - every entry's plain text (what the legend says)
        return self.full_text()

    def _relayout(self) -> None:
        m = self.contentsMargins()
        # rich text lays out a few pixels wider than the metrics say: keep a margin (never clipped)
        width = self.width() - m.left() - m.right() - 10
        fm = QFontMetrics(self.font())
        bold = QFont(self.font())
        bold.setBold(True)
        fmb = QFontMetrics(bold)
        space, sep = fm.horizontalAdvance(" "), fm.horizontalAdvance(self.SEP)
        lines: list[list[tuple[str, str]]] = [[]]  # per line: (html, plain) pieces incl. separators
        used = [0]
        hidden = 0
        for entry in self._entries:
            trial, trial_used = [list(line) for line in lines], list(used)
            ok = True
            for k, (h, p, b) in enumerate(entry):
                w = (fmb if b else fm).horizontalAdvance(p)
                lead = (sep if k == 0 else space) if trial[-1] else 0
                if trial_used[-1] + lead + w <= width or (not trial[-1] and width <= 0):
                    pass
                elif len(trial) < self._lines and w <= width:
                    trial.append([])
                    trial_used.append(0)
                    lead = 0
                else:
                    ok = False
                    break
                if lead:
                    piece = self.SEP if k == 0 else " "
                    trial[-1].append((piece, piece))
                trial[-1].append((h, p))
                trial_used[-1] += lead + w
            if ok:
                lines, used = trial, trial_used
            else:
                hidden += 1
        self.hidden = hidden
        html_lines = ["".join(h for h, _p in line) for line in lines]
        plain_lines = ["".join(p for _h, p in line) for line in lines]
        if hidden:
            html_lines[-1] += f" <i>+{hidden}</i>"
            plain_lines[-1] += f" +{hidden}"
        self._shown_plain = "\n".join(plain_lines)
        shown = "<br>".join(html_lines)
        if shown != super().text():
            super().setText(shown)

    def resizeEvent(self, ev):  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self._relayout()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(0, self.height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(0, self.height())
