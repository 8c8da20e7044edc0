"""The curve graphs: Euler channels, angular speed and quaternion components of the selected tracks.

Everything drawn comes from the engine (``engine.display.sample_track`` / ``key_euler``, cached in
:mod:`.sampling`): curves are what Unity plays, sampled densely and never wrapped; keys sit at
the key values. Plots (:class:`~.strips.Strip`) share a time axis; a draggable cursor in each
plot scrubs the document time.

The panel is split along what is drawn and what is handled:

* :class:`GraphPanel` (here): the strips' layout, the display units (Normalize view), framing, and
  :meth:`GraphPanel._connect_document`, the one place mapping the document's signals to view updates;
* :class:`~.track_drawer.TrackDrawer`: the tracks' curves and keys (primary, batched secondary tracks,
  ghost, preview, read-only curves);
* :class:`~.marks.Marks`: selected keys, tangent handles, gimbal bands, problem markers, legend;
* :class:`~.input.GraphInput`: mouse and keyboard (hit tests, clicks, drags, hover).

With more than one track drawn every track gets its own hue family (X/Y/Z shades) and a legend names
them; at most ``MAX_DRAWN_TRACKS`` are drawn and the plot says so. The Normalize view maps each Euler
curve onto [-1, 1] (as Blender / Maya do).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QToolTip, QWidget

from ..common.theme import LIGHT, Theme
from ..model.document import ClipDocument
from ..model.problems import ProblemIndex
from .display_units import DisplayUnits
from .float_edit import FloatEditing
from .input import CurveViewBox, Drag, GraphInput, no_hover_while_buttons_down
from .items import track_colors
from .legend import SideLegend
from .marks import HANDLE_PX, MAX_HANDLE_KEYS, Marks
from .sampling import SampleCache, dense_times
from .solo import CurveSolo
from .strips import Strip, export_scene
from .track_drawer import FULL_TRACKS, LIVE_BATCH_MS, MAX_DRAWN_TRACKS, TrackDrawer, TrackItems
from .wheel_zoom import WheelZoom

__all__ = [
    "GraphPanel",
    "CurveViewBox",
    "dense_times",
    "MAX_DRAWN_TRACKS",
    "FULL_TRACKS",
    "LIVE_BATCH_MS",
    "HANDLE_PX",
    "MAX_HANDLE_KEYS",
    "TrackItems",
]

MIN_SPAN_DEG = 2.0  # a flat channel is framed at least this tall (degrees) around its value


def scale_changed(vb: pg.ViewBox, ranges) -> bool:
    """Whether ``vb``'s pixel scale (view span per pixel, both axes) differs from the last range
    change seen for it (``ranges`` = ``[[x0, x1], [y0, y1]]``, as ``sigRangeChanged`` gives it); a
    pure translation keeps it (to 1e-9 relative: a shifted range's span differs in its last bits)."""
    try:
        (x0, x1), (y0, y1) = ranges
    except (TypeError, ValueError):
        return True
    scale = (x1 - x0, y1 - y0, vb.width(), vb.height())
    last = getattr(vb, "_ce_last_scale", None)
    vb._ce_last_scale = scale
    if last is None:
        return True
    return any(abs(a - b) > 1e-9 * max(abs(a), abs(b)) for a, b in zip(scale, last, strict=True))


class GraphPanel(QWidget):
    """Stacked (or overlaid) Euler plots + speed strip + quaternion strip, linked in time."""

    contextMenuRequested = Signal(object)  # QPoint (global) -> the main window shows the key menu
    statusMessage = Signal(str)
    rebuilt = Signal()  # after rebuild() re-created every item: overlay layers (layers.py) re-add theirs
    soloChanged = Signal()

    def __init__(self, document: ClipDocument, problems: ProblemIndex | None = None, parent=None):
        super().__init__(parent)
        self.doc = document
        self.problems = problems
        self.theme: Theme = LIGHT
        self.cache = SampleCache()
        self.input = GraphInput(self)
        self.overlay = False
        self.show_speed = True
        self.show_quat = False
        self.show_original = True
        self.normalize = False
        self.time_in_frames = False
        self.solo = CurveSolo(self)  # Isolate / Solo: the only curves drawn (:mod:`.solo`)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.ci.setSpacing(2)
        self.side_legend = SideLegend(solo=self.solo)  # the drawn tracks' legend, beside the plots
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.glw, 1)
        lay.addWidget(self.side_legend)
        self.strips: list[Strip] = []
        self.units = DisplayUnits(self)  # degrees, or the Normalize view's map per track
        self.hues: dict[str, tuple[str, str, str]] = {}
        self.tracks = TrackDrawer(self)  # what is drawn of the tracks
        self.marks = Marks(self)  # what is drawn over them
        self.floats = FloatEditing(self)  # float curves' keys (muscles, blend shapes) in the value strip
        self.glw.scene().sigMouseMoved.connect(self._on_mouse_moved)
        no_hover_while_buttons_down(self.glw.scene())
        self.wheel = WheelZoom(self.glw, lambda: (s.vb for s in self.strips))
        self._build_plots()
        self._connect_document()
        self.rebuild()

    def _connect_document(self) -> None:
        """The one place where document signals become view updates."""
        self.doc.clipChanged.connect(self._on_clip_changed)
        self.doc.selectionChanged.connect(self.rebuild)
        self.doc.keySelectionChanged.connect(self.marks.update_selection)
        self.doc.timeChanged.connect(self._on_time)
        self.doc.previewChanged.connect(self.tracks.update_preview)
        self.doc.otherSelectionChanged.connect(self._on_other_selection)
        if self.problems is not None:
            self.problems.updated.connect(lambda _p: self.marks.update_markers())

    # ------------------------------------------------------------------ compatibility views
    @property
    def plots(self) -> list[pg.PlotItem]:
        return [s.plot for s in self.strips]

    @property
    def euler_plots(self) -> list[pg.PlotItem]:
        return [s.plot for s in self.strips if s.is_euler]

    @property
    def speed_plot(self) -> pg.PlotItem | None:
        return next((s.plot for s in self.strips if s.role[0] == "speed"), None)

    @property
    def quat_plot(self) -> pg.PlotItem | None:
        return next((s.plot for s in self.strips if s.role[0] == "quat"), None)

    @property
    def cursors(self) -> list[pg.InfiniteLine]:
        return [s.cursor for s in self.strips]

    @property
    def items(self) -> dict[str, TrackItems]:
        """The fully drawn tracks' items (path -> :class:`~.track_drawer.TrackItems`)."""
        return self.tracks.items

    @property
    def handle_points(self):
        """``(view box, path, key, channel, side, x, y)`` of every drawn tangent handle end."""
        return self.marks.handle_points

    _handle_points = handle_points  # older name (tests)

    @property
    def preview_redraws(self) -> int:
        return self.tracks.preview_redraws

    @property
    def batched_updates(self) -> int:
        return self.tracks.batched_updates

    def legend_lines(self) -> list[str]:
        return self.marks.legend_lines()

    def note_text(self) -> str:
        return self.marks.note_text()

    def strip_of(self, role_kind: str) -> Strip | None:
        return next((s for s in self.strips if s.role[0] == role_kind), None)

    _strip = strip_of  # older name

    # ------------------------------------------------------------------ layout
    def _build_plots(self) -> None:
        self.glw.clear()
        self.tracks.forget()
        self.marks.forget()
        self.strips = []
        roles = [("euler", None)] if self.overlay else [("euler", c) for c in range(3)]
        if self.show_speed:
            roles.append(("speed", None))
        if self.show_quat:
            roles.append(("quat", None))
        if self.floats.only_floats():
            roles = []  # only float curves shown (a humanoid muscle clip): they take the whole panel
        if self.doc.selected_other:
            roles.append(("other", None))  # float curves (editable) and read-only curves (view only)
        for row, role in enumerate(roles):
            link = self.strips[0].plot if self.strips else None
            s = Strip(self.glw, self.input, role, row, link=link, normalized=self.normalize)
            s.vb.sigRangeChanged.connect(self._on_range_changed)
            s.cursor.sigDragged.connect(self._on_cursor_dragged)
            s.cursor.setValue(self.doc.current_time)
            if role[0] == "quat":
                s.plot.setYRange(-1.05, 1.05)
            # Euler plots take the room; strips are thinner.
            self.glw.ci.layout.setRowStretchFactor(row, 3 if role[0] == "euler" else 2)
            self.strips.append(s)
        for s in self.strips[:-1]:
            # Only the last strip shows the time axis: an upper strip's unlabelled axis still built
            # its tick specs in Python on every zoom/pan step (~7 ms each, 3 of 4 plots). Hidden, it
            # still gives the grid its tick positions (GridLines asks the axis for them).
            s.plot.hideAxis("bottom")
        self._apply_time_axis()
        self._apply_theme_to_plots()

    def set_layout(
        self,
        *,
        overlay: bool | None = None,
        speed: bool | None = None,
        quat: bool | None = None,
        normalize: bool | None = None,
    ):
        """Switch stacked/overlaid channels, the speed / quaternion strips and the Normalize view."""
        if overlay is not None:
            self.overlay = overlay
        if speed is not None:
            self.show_speed = speed
        if quat is not None:
            self.show_quat = quat
        if normalize is not None:
            self.normalize = normalize
        xr = self.strips[0].vb.viewRange()[0] if self.strips else None
        self._build_plots()
        self.rebuild(frame=xr is None)
        if xr is not None:
            self.strips[0].plot.setXRange(*xr, padding=0)
            self._frame_values()

    def set_show_original(self, on: bool) -> None:
        self.show_original = on
        self.rebuild(frame=False)

    def set_time_in_frames(self, on: bool) -> None:
        """Time axis in frames (True) or seconds (False)."""
        self.time_in_frames = bool(on)
        self._apply_time_axis()

    def _apply_time_axis(self) -> None:
        if not self.strips:
            return
        for s in self.strips:
            s.time_axis.set_mode(self.time_in_frames, self.doc.frame_rate)
        unit = f"frames @ {self.doc.frame_rate:g} fps" if self.time_in_frames else "s"
        self.strips[-1].plot.setLabel("bottom", f"time ({unit})")

    def time_text(self, t: float) -> str:
        if self.time_in_frames:
            f = t * self.doc.frame_rate
            return f"frame {round(f)}" if abs(f - round(f)) < 1e-6 else f"frame {f:.2f}"
        return f"{t:.3f} s"

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.glw.setBackground(theme.plot_bg)
        self._apply_theme_to_plots()
        self.rebuild(frame=False)

    def _apply_theme_to_plots(self) -> None:
        for s in self.strips:
            s.apply_theme(self.theme)
        self.glw.setBackground(self.theme.plot_bg)

    # ------------------------------------------------------------------ what is drawn, in what units
    def drawn_paths(self) -> list[str]:
        return list(self.doc.selected_paths[:MAX_DRAWN_TRACKS])

    def curve_shown(self, path: str, ch: int) -> bool:
        return self.solo.shown(path, ch)

    def full_paths(self) -> list[str]:
        return self.drawn_paths()[:FULL_TRACKS]

    def primary(self) -> str | None:
        """The primary (first selected) track's path."""
        return self.doc.selected_paths[0] if self.doc.selected_paths else None

    # display units (degrees or the Normalize map): .display_units.DisplayUnits
    def display_map(self, path: str) -> tuple[np.ndarray, np.ndarray] | None:
        return self.units.display_map(path)

    def value_factor(self, path: str, ch: int) -> float:
        return self.units.value_factor(path, ch)

    def to_display(self, path: str, values: np.ndarray, ch: int | None = None) -> np.ndarray:
        return self.units.to_display(path, values, ch)

    def from_display(self, path: str, ch: int, y: float) -> float:
        return self.units.from_display(path, ch, y)

    def display_keys(self, path: str) -> tuple[np.ndarray, np.ndarray]:
        """Key times (s) and drawn key values ``(N, 3)`` of the current track at ``path``."""
        kt, kv = self.cache.keys(self.doc.clip.track(path))
        return kt, self.to_display(path, kv)

    def colours(self, path: str) -> tuple[str, str, str]:
        """X, Y, Z colours of a drawn track (the theme's channel colours when it is drawn alone)."""
        return self.hues.get(path, tuple(self.theme.channels[:3]))

    # ------------------------------------------------------------------ drawing
    def rebuild(self, frame: bool = True) -> None:
        """Redraw every selected track (selection change, load, layout change)."""
        if self._layout_stale():  # rotation tracks selected or not beside the shown float curves
            self.set_layout()
            return
        self.marks.forget()  # their items go with the tracks' (Strip.clear_track_items)
        paths = self.drawn_paths()
        if self.solo.prune(paths):  # solo outlives a selection change for the curves still drawn
            self.soloChanged.emit()
        self.hues = (
            {p: track_colors(i, self.theme.dark) for i, p in enumerate(paths)} if len(paths) > 1 else {}
        )
        self.tracks.draw(self.full_paths())
        self.marks.update_markers()
        self.marks.update_selection()
        self.marks.update_legend()
        self.tracks.update_other()
        self._on_time(self.doc.current_time)
        self._apply_time_axis()
        if frame:
            self.frame_all()
        self.rebuilt.emit()
        # pyqtgraph applies a new view range in the next paint's prepareForPaint, where the items'
        # transform changes ask for a second full repaint (measured: 2 paints per selection); apply
        # it now so that every change lands in one paint
        for s in self.strips:
            s.vb.prepareForPaint()

    def _layout_stale(self) -> bool:
        has = self.strip_of("other") is not None
        only = bool(self.strips) and all(s.role[0] == "other" for s in self.strips)
        return has != bool(self.doc.selected_other) or only != self.floats.only_floats()

    def _on_other_selection(self) -> None:
        if self._layout_stale():
            self.set_layout()
        else:
            self.tracks.update_other()
            self.floats.frame_strip()

    # ------------------------------------------------------------------ document -> view
    def _on_range_changed(self, vb=None, ranges=None, *_):
        """A view box's range changed (one call per plot per zoom / pan step)."""
        if vb is None or scale_changed(vb, ranges):
            # unweighted tangent handles are HANDLE_PX long on screen: only a change of scale (zoom,
            # resize) moves their ends; a pan (the same span, shifted) leaves them where they are
            # (re-placing them cost ~0.3 ms per pan step on the Gangnam BVH)
            self.marks.on_range_changed()
            if self.floats.handle_points:
                self.floats.update_handles()  # (a few handles: placed at once)
        self.tracks.view_moved()

    def _on_clip_changed(self) -> None:
        if self.doc.selected_other and self.doc.changed_paths is not None:
            self.tracks.update_other()  # a float-curve edit (or the clip under the shown curves)
        paths = self.doc.changed_paths
        if paths is None:
            self.rebuild(frame=True)
            return
        shown = set(self.drawn_paths())
        drawn = [p for p in paths if p in shown]
        self.tracks.after_edit(drawn)
        if drawn:
            self.marks.update_selection()
            speed = self.strip_of("speed")
            if speed is not None and not self.doc.in_live_edit():
                # a committed edit (a fix that removed a 15,000 deg/s spike, an undo) re-ranges the
                # speed strip to the drawn speed; the Euler plots keep the user's zoom; not mid-drag
                speed.fit()

    def _on_time(self, t: float) -> None:
        for c in self.cursors:
            if c.value() != t:
                c.blockSignals(True)
                c.setValue(t)
                c.blockSignals(False)

    def _on_cursor_dragged(self, line: pg.InfiniteLine) -> None:
        self.doc.set_time(self.doc.snap_time(line.value()))
        self._on_time(self.doc.current_time)

    def _on_mouse_moved(self, scene_pos) -> None:
        if self.input.drag is not None or self.doc.in_live_edit():
            return  # mid-drag the curves are partial samples: no hover work on the drag's hot path
        for s in self.strips:
            if s.vb.sceneBoundingRect().contains(scene_pos):
                text = self.input.hover(s.vb, scene_pos)
                for o in self.strips:
                    o.hover_label.setVisible(False)
                if text:
                    pos = s.vb.mapSceneToView(scene_pos)
                    s.hover_label.setText(text)
                    # right of the mouse in the plot's left half, left of it in the right half: a
                    # long track path stays inside the plot instead of running off its edge
                    right_half = scene_pos.x() > s.vb.sceneBoundingRect().center().x()
                    s.hover_label.setAnchor((1, 1) if right_half else (0, 1))
                    s.hover_label.setPos(pos)
                    s.hover_label.setVisible(True)
                    QToolTip.hideText()
                return

    # ------------------------------------------------------------------ framing
    def frame_all(self) -> None:
        """Fit every plot to its content (A); flat channels get at least MIN_SPAN_DEG."""
        for s in self.strips:
            s.fit(values_only=False)
        self._widen_flat()
        q = self.quat_plot
        if q is not None:
            q.setYRange(-1.05, 1.05)

    def _frame_values(self) -> None:
        for s in self.strips:
            s.fit()
        self._widen_flat()

    def _widen_flat(self) -> None:
        """A flat channel framed by auto-range spans ~1e-6 deg and pyqtgraph labels it in milli-units;
        give it a readable range around its value instead."""
        for s in self.strips:
            if not s.is_euler:
                continue
            lo, hi = s.vb.viewRange()[1]
            span = MIN_SPAN_DEG if not self.normalize else 2.2
            if hi - lo < span:
                mid = 0.5 * (lo + hi)
                s.plot.setYRange(mid - span / 2, mid + span / 2, padding=0)
        self.floats.widen()

    def frame_selection(self) -> None:
        """Fit the plots to the selected keys (F); everything when nothing is selected."""
        sel = {p: s for p, s in self.doc.selected_keys.items() if p in set(self.drawn_paths()) and s}
        if not sel:
            self.frame_all()
            return
        times, vals = [], []
        for path, idx in sel.items():
            s_kt, s_kv = self.display_keys(path)
            ii = np.array(sorted(idx))
            times.append(s_kt[ii])
            vals.append(s_kv[ii])
        t = np.concatenate(times)
        v = np.concatenate(vals)
        t0, t1 = float(t.min()), float(t.max())
        pad = max((t1 - t0) * 0.1, 2.0 / self.doc.frame_rate)
        self.strips[0].plot.setXRange(t0 - pad, t1 + pad, padding=0)
        for s in self.strips:
            if not s.is_euler:
                continue
            ch = s.role[1]
            col = v.reshape(-1) if ch is None else v[:, ch]
            lo, hi = float(col.min()), float(col.max())
            pv = max((hi - lo) * 0.15, 2.0 if not self.normalize else 0.05)
            s.plot.setYRange(lo - pv, hi + pv, padding=0)

    # ------------------------------------------------------------------ input (delegated)
    def on_click(self, vb, scene_pos, mods) -> None:
        self.input.on_click(vb, scene_pos, mods)

    def begin_drag(self, vb, scene_pos, mods):
        return self.input.begin_drag(vb, scene_pos, mods)

    def drag_to(self, vb, p0, p1, mods, finish: bool) -> None:
        self.input.drag_to(vb, p0, p1, mods, finish)

    def box_select(self, vb, rect, mods) -> None:
        self.input.box_select(vb, rect, mods)

    def select_keys_in_rect(self, vb, rect):
        return self.input.select_keys_in_rect(vb, rect)

    def move_selection(self, d: Drag, dt: float, dv: float) -> None:
        self.input.move_selection(d, dt, dv)

    def cancel_drag(self) -> None:
        self.input.cancel_drag()

    def on_context_menu(self, vb, scene_pos, screen_pos) -> None:
        self.input.on_context_menu(vb, scene_pos, screen_pos)

    # ------------------------------------------------------------------ export
    def export_image(self, path: str) -> None:
        """Write the graphs as PNG or SVG (by extension); see :func:`.strips.export_scene`."""
        export_scene(self.glw, path)
