"""The editor window: graphs in the centre, tracks on the left, 3D view and recipe on the right,
keys / problems / diff / undo history docked, timeline at the bottom; menus, shortcuts, files.

Every edit goes through ``ClipDocument`` (one undo command each); this module only wires widgets,
actions and files together.
"""

from __future__ import annotations

import os
import platform

import numpy as np
from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QSizePolicy,
    QUndoView,
    QVBoxLayout,
    QWidget,
)

from curveeditor.engine import edit as ed
from curveeditor.engine.curves import evaluate

from .compare import CompareDialog
from .diff_panel import DiffPanel
from .document import ClipDocument
from .editing_tools import EditingTools
from .elided import ElidedLabel
from .files import Autosaver, FileController, sample_path
from .gizmo_view import GizmoView
from .graphs import GraphPanel
from .key_table import KeyTable
from .problems import ProblemIndex, ProblemsPanel
from .recipe_panel import RecipePanel
from .settings import Settings
from .theme import ThemeManager
from .timeline import Timeline
from .track_tree import TrackTree

__all__ = ["MainWindow", "versions_text", "LAYOUT_VERSION"]

#: Saved dock layouts carry this number; a layout saved by another version is dropped (a layout
#: from before versioning could hold a 3D dock squeezing the graphs to ~200 px, forever).
LAYOUT_VERSION = 2
DEFAULT_SIZE = (1500, 940)
#: After a clip is drawn, the recipe ops are imported in the background this much later (ms).
WARM_UP_DELAY_MS = 1000


def versions_text() -> str:
    import pyqtgraph
    import PySide6
    import scipy
    from PySide6.QtCore import qVersion

    try:
        from importlib.metadata import version

        ce = version("curveeditor")
    except Exception:  # noqa: BLE001
        ce = "dev"
    return (
        f"curveeditor {ce}\nPython {platform.python_version()}\n"
        f"Qt {qVersion()} / PySide6 {PySide6.__version__}\n"
        f"pyqtgraph {pyqtgraph.__version__}\nnumpy {np.__version__}\nscipy {scipy.__version__}\n"
        f"{platform.system()} {platform.machine()}"
    )


def insert_key_keeping_shape(track, t: float):
    """K: a key at ``t`` s on the curve as it plays whose tangents take the curve's slope there
    (Blender's insert), so the neighbouring segments keep their shape. Free Smooth tangents (mode 0);
    an existing key at ``t`` is left as is. Returns ``(track, index)``."""
    c = track.curve
    if c.n_keys >= 2 and float(c.time[0]) < t < float(c.time[-1]):
        existed = bool(np.any(np.abs(c.time - t) < 1e-9))
        new, i = ed.insert_key(track, t)
        if existed:
            return new, i
        h = 1e-4 * max(float(c.time[-1] - c.time[0]), 1e-3)
        slope = (evaluate(c, np.array([t + h])) - evaluate(c, np.array([t - h])))[0] / (2 * h)
        for comp in range(new.curve.value.shape[1]):
            new = ed.set_slope(new, i, comp, "in", float(slope[comp]))
        # A cubic segment split at t with the curve's value and slope there is the same curve, as
        # long as the neighbours keep their slopes: insert_key recomputed their auto tangents.
        nc = new.curve
        ins, outs = np.array(nc.in_slope), np.array(nc.out_slope)
        outs[i - 1] = c.out_slope[i - 1]
        ins[i + 1] = c.in_slope[i]
        new = new.with_curve(nc.with_keys(in_slope=ins, out_slope=outs))
        return new, i
    return ed.insert_key(track, t)


def _sc(action: QAction, seq, tip: str | None = None) -> QAction:
    """Set a shortcut and show it in the tooltip and status tip."""
    if seq is not None:
        action.setShortcut(QKeySequence(seq))
    text = action.text().replace("&", "")
    sc = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{text} ({sc})" if sc else text)
    action.setStatusTip(tip or text)
    return action


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None, autosave_folder: str | None = None):
        super().__init__()
        self.settings = settings or Settings()
        self.setWindowTitle("curveeditor")
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)
        self.doc = ClipDocument(self)
        self.problem_index = ProblemIndex(self.doc, self)
        self.themes = ThemeManager(self.settings.theme, self)
        self.files = FileController(self.doc, self.settings, self)
        self.autosaver = Autosaver(self.doc, self.settings.autosave_seconds, autosave_folder, self)
        self.clipboard: dict = {}

        # central: graphs + timeline
        self.graphs = GraphPanel(self.doc, self.problem_index)
        view = {
            "overlay": self.settings.get_bool("view/overlay", False),
            "speed": self.settings.get_bool("view/speed", True),
            "quat": self.settings.get_bool("view/quat", False),
            "normalize": self.settings.get_bool("view/normalize", False),
        }
        g = self.graphs
        # The panel has built its default strips: rebuilding them unasked cost ~0.27 s of cold start.
        if (g.overlay, g.show_speed, g.show_quat, g.normalize) != tuple(view.values()):
            g.set_layout(**view)
        g.show_original = self.settings.get_bool("view/original", True)
        if self.settings.get_bool("view/frames", False):
            g.set_time_in_frames(True)
        self.timeline = Timeline(self.doc)
        self.timeline.set_time_in_frames(self.graphs.time_in_frames)
        self.timeline.act_loop.setChecked(self.settings.get_bool("play/loop", True))
        self.timeline.set_speed(self.settings.get_float("play/speed", 1.0))
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.graphs, 1)
        lay.addWidget(self.timeline)
        self.setCentralWidget(central)

        # docks
        self.tracks = TrackTree(self.doc, self.problem_index)
        self.keys = KeyTable(self.doc)
        self.problems = ProblemsPanel(self.doc, self.problem_index)
        self.undo_view = QUndoView(self.doc.undo_stack)
        self.undo_view.setEmptyLabel("<opened file>")
        self.docks: dict[str, QDockWidget] = {}
        self._dock_set: set[QDockWidget] = set()
        self._limiting = False
        self._compare: CompareDialog | None = None
        self._dock("Tracks", self.tracks, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.gizmo = GizmoView(self.doc, self)
        self._dock("3D view", self.gizmo, Qt.DockWidgetArea.RightDockWidgetArea)
        self.recipe = RecipePanel(self.doc, self)
        self._dock("Recipe", self.recipe, Qt.DockWidgetArea.RightDockWidgetArea, scroll=True)
        self._dock("Keys", self.keys, Qt.DockWidgetArea.BottomDockWidgetArea)
        self._dock("Problems", self.problems, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.diff = DiffPanel(self.doc, self)
        self.recipe.diffsComputed.connect(self.diff.offer_diffs)
        self.files.written.connect(self.diff.show_written)  # the Diff dock shows the file as read back
        self._dock("Diff", self.diff, Qt.DockWidgetArea.BottomDockWidgetArea, scroll=True)
        self._dock("History", self.undo_view, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.docks["Keys"], self.docks["Problems"])
        self.tabifyDockWidget(self.docks["Problems"], self.docks["Diff"])
        self.docks["Keys"].raise_()
        self.splitDockWidget(self.docks["3D view"], self.docks["Recipe"], Qt.Orientation.Vertical)
        self.splitDockWidget(self.docks["Tracks"], self.docks["History"], Qt.Orientation.Vertical)
        # issue 12's dope sheet dock, character view, key manipulators...; built before the default
        # layout is saved so that View > Reset layout restores the dope sheet dock too.
        self.tools = EditingTools(self)
        self._default_dock_sizes()
        self._default_state = self.saveState(LAYOUT_VERSION)
        self._maximized_docks: list[QDockWidget] | None = None

        self._build_actions()
        self._build_menus()
        self.tools.add_menus(self.menuBar())
        self._build_status()

        self.doc.dirtyChanged.connect(lambda _d: self._update_title())
        self.doc.pathChanged.connect(self._update_title)
        self.doc.clipChanged.connect(self._update_status)
        self.doc.keySelectionChanged.connect(self._update_status)
        self.doc.selectionChanged.connect(self._update_status)
        self.doc.undo_stack.canUndoChanged.connect(lambda _c: self._update_actions())
        self.doc.keySelectionChanged.connect(self._update_actions)
        self.doc.keySelectionChanged.connect(self._mark_tangent_mode)
        self.doc.clipChanged.connect(self._mark_tangent_mode)
        self.graphs.statusMessage.connect(lambda m: self.statusBar().showMessage(m, 3000))
        self.graphs.contextMenuRequested.connect(self._show_key_menu)
        self.files.recentChanged.connect(self._rebuild_recent)
        self.files.loaded.connect(lambda p: self.statusBar().showMessage(f"Opened {p}", 5000))
        # The recipe ops' scipy imports (~2 s) wait until the first clip is drawn (cold start).
        self.doc.clipChanged.connect(lambda: QTimer.singleShot(WARM_UP_DELAY_MS, self.recipe.warm_up))
        self.files.saved.connect(lambda p: self.statusBar().showMessage(f"Wrote {p}", 5000))
        self.themes.changed.connect(self._apply_theme)
        self._fit_to_screen()
        self._restore_layout()
        self._apply_theme(self.themes.apply())
        self._update_title()
        self._update_actions()
        self.autosaver.start()

    # ------------------------------------------------------------------ layout
    def _default_dock_sizes(self) -> None:
        # 312 px: a 12-level Biped bone name ("Bip001 L Finger12") beside the whole "Problems" title
        self.resizeDocks([self.docks["Tracks"]], [312], Qt.Orientation.Horizontal)
        if "3D view" in self.docks:
            self.resizeDocks([self.docks["3D view"]], [340], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["Keys"]], [220], Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["Tracks"], self.docks["History"]], [520, 160], Qt.Orientation.Vertical)

    def available_screen(self):
        """The available geometry (QRect) of the screen the window is on (or the primary one)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def _fit_to_screen(self) -> None:
        """The default size, shrunk to the available screen (a 1000 px screen got a 1040 px window)."""
        avail = self.available_screen()
        w = min(DEFAULT_SIZE[0], avail.width())
        h = min(DEFAULT_SIZE[1], avail.height())
        self.resize(w, h)
        fg = self.frameGeometry()
        # the frame (title bar) comes on top of the client size
        extra_w, extra_h = max(fg.width() - self.width(), 0), max(fg.height() - self.height(), 0)
        if w + extra_w > avail.width() or h + extra_h > avail.height():
            self.resize(min(w, avail.width() - extra_w), min(h, avail.height() - extra_h))
        self.move(avail.left() + max((avail.width() - self.frameGeometry().width()) // 2, 0), avail.top())

    def fits_screen(self) -> bool:
        avail = self.available_screen()
        return self.width() <= avail.width() and self.height() <= avail.height()

    def reset_layout(self) -> None:
        """View > Reset layout: every dock back where it starts, default sizes, window fitted."""
        self._maximized_docks = None
        self.restoreState(self._default_state, LAYOUT_VERSION)
        for d in self.docks.values():
            d.show()
        self._fit_to_screen()
        self._default_dock_sizes()
        self.statusBar().showMessage("Layout reset", 3000)

    def toggle_maximize_graphs(self) -> None:
        """Ctrl+Space (as in Blender): hide every dock so the graphs take the window; again restores."""
        if self._maximized_docks is None:
            self._maximized_docks = [d for d in self.docks.values() if d.isVisible()]
            for d in self._maximized_docks:
                d.hide()
        else:
            for d in self._maximized_docks:
                d.show()
            self._maximized_docks = None
        self.act_maximize.blockSignals(True)
        self.act_maximize.setChecked(self._maximized_docks is not None)
        self.act_maximize.blockSignals(False)

    def graph_share(self) -> float:
        """Width of the graph area / width of the window."""
        return self.centralWidget().width() / max(self.width(), 1)

    def _side_docks(self, area) -> list[QDockWidget]:
        return [
            d
            for d in self.docks.values()
            if d.isVisible() and not d.isFloating() and self.dockWidgetArea(d) == area
        ]

    def limit_dock_widths(self) -> None:
        """No dock pushes the graphs under half the window: the left and right dock areas share at
        most half its width (each side's docks get a maximum width from what the other side uses).
        Maximum widths never grow the window (a minimum width on the graphs did: 800 -> 1683 px)."""
        if self._limiting:
            return
        self._limiting = True
        try:
            half = self.width() // 2
            left = self._side_docks(Qt.DockWidgetArea.LeftDockWidgetArea)
            right = self._side_docks(Qt.DockWidgetArea.RightDockWidgetArea)
            lw = max((d.width() for d in left), default=0)
            rw = max((d.width() for d in right), default=0)
            for docks, other in ((left, rw), (right, lw)):
                cap = max(half - other - 8, 60)
                for d in docks:
                    d.setMaximumWidth(max(cap, d.minimumSizeHint().width()))
            for d in self.docks.values():
                if d not in left and d not in right:
                    d.setMaximumWidth(16777215)
        finally:
            self._limiting = False

    def eventFilter(self, obj, ev):  # noqa: N802 - Qt API
        if ev.type() in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide) and obj in self._dock_set:
            self.limit_dock_widths()
        return False

    def resizeEvent(self, ev):  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self.limit_dock_widths()
        self.status_label.setMaximumWidth(max(int(self.width() * 0.5), 100))

    # ------------------------------------------------------------------ construction
    def _dock(self, title: str, widget: QWidget, area, scroll: bool = False) -> QDockWidget:
        """A dock for ``widget``; ``scroll`` puts it in a vertical scroll area, so its form does not
        set the window's minimum height (the Recipe and Diff docks made it 957 px on a 768 px screen)."""
        d = QDockWidget(title, self)
        d.setObjectName(f"dock_{title.replace(' ', '_')}")
        if scroll:
            area_widget = QScrollArea(d)
            area_widget.setWidgetResizable(True)
            area_widget.setFrameShape(QFrame.Shape.NoFrame)
            area_widget.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            area_widget.setWidget(widget)
            bar = area_widget.verticalScrollBar().sizeHint().width()
            area_widget.setMinimumWidth(widget.minimumSizeHint().width() + bar)
            area_widget.setMinimumHeight(80)
            widget = area_widget
        d.setWidget(widget)
        self.addDockWidget(area, d)
        d.installEventFilter(self)
        self._dock_set.add(d)
        self.docks[title] = d
        return d

    def _act(self, text, slot=None, shortcut=None, tip=None, checkable=False, checked=False) -> QAction:
        a = QAction(text, self)
        if checkable:
            a.setCheckable(True)
            a.setChecked(checked)
            if slot is not None:
                a.toggled.connect(slot)
        elif slot is not None:
            a.triggered.connect(slot)
        _sc(a, shortcut, tip)
        self.addAction(a)
        return a

    def _build_actions(self) -> None:
        S = QKeySequence.StandardKey  # noqa: N806
        self.act_open = self._act("&Open…", self.open_dialog, S.Open, "Open an .anim, .bvh or .csv clip")
        self.act_save = self._act("&Save", self.files.save, S.Save, "Save back to the .anim (minimal diff)")
        self.act_save_as = self._act("Save &As…", self.files.save_as, "Ctrl+Shift+S", "Save to a new .anim")
        self.act_exp_euler = self._act(
            "Export .anim (&Euler)…",
            lambda: self.files.export_dialog("anim-euler"),
            None,
            "Write every rotation as Euler curves (m_EulerCurves)",
        )
        self.act_exp_quat = self._act(
            "Export .anim (&Quaternion)…",
            lambda: self.files.export_dialog("anim-quaternion"),
            None,
            "Write every rotation as quaternion curves (m_RotationCurves)",
        )
        self.act_exp_csv = self._act(
            "Export &CSV…", lambda: self.files.export_dialog("csv"), None, "Write CSV"
        )
        self.act_exp_graph = self._act(
            "Export &graphs (PNG/SVG)…",
            lambda: self.files.export_graphs(self.graphs),
            None,
            "Save the graphs",
        )
        self.act_quit = self._act("&Quit", self.close, S.Quit, "Quit curveeditor")
        self.act_undo = self.doc.undo_stack.createUndoAction(self, "&Undo")
        _sc(self.act_undo, "Ctrl+Z", "Undo the last edit")
        self.act_redo = self.doc.undo_stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        _sc(self.act_redo, None, "Redo")
        self.addAction(self.act_undo)
        self.addAction(self.act_redo)
        self.act_copy = self._act("&Copy keys", self.copy_keys, S.Copy, "Copy the selected keys")
        self.act_paste = self._act("&Paste keys", self.paste_keys, S.Paste, "Paste keys at the time cursor")
        self.act_delete = self._act(
            "&Delete keys", self.delete_keys, Qt.Key.Key_Delete, "Delete the selected keys"
        )
        self.act_add_key = self._act(
            "&Add key at cursor", self.add_key, "K", "Key the selected track(s) at the cursor"
        )
        self.act_select_all = self._act(
            "Select all &keys", self.select_all_keys, "Ctrl+A", "Select every key"
        )
        self.act_deselect = self._act("Deselect keys", self.doc.clear_key_selection, "Ctrl+Shift+A", "Clear")
        self.act_frame_sel = self._act(
            "&Frame selection", self.graphs.frame_selection, "F", "Zoom to selected keys"
        )
        self.act_frame_all = self._act("Frame &all", self.graphs.frame_all, "A", "Zoom to the whole clip")
        self.act_overlay = self._act(
            "&Overlay channels",
            lambda on: self._set_view("overlay", on),
            "O",
            "X, Y, Z in one plot",
            checkable=True,
            checked=self.graphs.overlay,
        )
        self.act_speed = self._act(
            "Angular &speed strip",
            lambda on: self._set_view("speed", on),
            "Ctrl+1",
            "Show speed (deg/s)",
            checkable=True,
            checked=self.graphs.show_speed,
        )
        self.act_quat = self._act(
            "&Quaternion strip",
            lambda on: self._set_view("quat", on),
            "Ctrl+2",
            "Show quaternion components",
            checkable=True,
            checked=self.graphs.show_quat,
        )
        self.act_original = self._act(
            "Show &original (ghost)",
            lambda on: self._set_view("original", on),
            "Ctrl+3",
            "Draw the curves as loaded behind the edited ones",
            checkable=True,
            checked=self.graphs.show_original,
        )
        self.act_normalize = self._act(
            "&Normalize curves",
            lambda on: self._set_view("normalize", on),
            "N",
            "Scale every Euler curve to [-1, 1] (shape comparison; edits stay in degrees)",
            checkable=True,
            checked=self.graphs.normalize,
        )
        self.act_frames = self._act(
            "Time in &frames",
            lambda on: self._set_view("frames", on),
            "Ctrl+T",
            "Time axis in frames instead of seconds",
            checkable=True,
            checked=self.graphs.time_in_frames,
        )
        self.act_reset_layout = self._act(
            "&Reset layout", self.reset_layout, None, "Put every panel back where it starts"
        )
        self.act_maximize = self._act(
            "&Maximize graphs",
            lambda _on: self.toggle_maximize_graphs(),
            "Ctrl+Space",
            "Hide the panels so the graphs fill the window (again to restore)",
            checkable=True,
        )
        self.act_filter = self._act("Filter tracks", self._focus_filter, "Ctrl+F", "Filter the track list")
        # Up / Down in the graphs walk the track tree while no key is selected (with keys selected they
        # nudge the keys' values: EditingTools' nudge actions own the shortcuts and call step_track).
        self.act_prev_track = self._act("Previous track", lambda: self.tracks.step(-1))
        self.act_next_track = self._act("Next track", lambda: self.tracks.step(1))
        self.act_cancel = self._act("Cancel drag", self.graphs.cancel_drag, Qt.Key.Key_Escape, "Cancel")
        # Escape only cancels drags in the graphs; elsewhere it must keep closing editors and popups.
        self.removeAction(self.act_cancel)
        self.act_cancel.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.graphs.addAction(self.act_cancel)
        self.act_compare = self._act(
            "A/B &compare resampling…",
            self.show_compare,
            "Ctrl+B",
            "Compare Euler/Slerp/Squad/spline on a track",
        )
        self.act_about = self._act("&About curveeditor", self.show_about, None, "Versions")
        self.act_shortcuts = self._act("&Keyboard shortcuts", self.show_shortcuts, "F1", "List the shortcuts")
        # tangent modes
        self.tangent_actions: list[QAction] = []
        for preset in ed.TANGENT_PRESETS:
            a = self._act(
                preset, lambda _c=False, p=preset: self.set_tangent_preset(p), None, f"Tangents: {preset}"
            )
            a.setCheckable(True)  # checked = the selected keys' current mode (see _mark_tangent_mode)
            self.tangent_actions.append(a)
        self.side_actions: dict[str, list[QAction]] = {}
        for side, label in (("in", "Left Tangent"), ("out", "Right Tangent"), ("both", "Both Tangents")):
            acts = []
            for mode in ed.SIDE_MODES:
                a = self._act(
                    mode, lambda _c=False, s=side, m=mode: self.set_side_mode(s, m), None, f"{label}: {mode}"
                )
                acts.append(a)
            self.side_actions[label] = acts
        # playback (owned by the timeline)
        for a in (
            self.timeline.act_play,
            self.timeline.act_loop,
            self.timeline.act_prev,
            self.timeline.act_next,
            self.timeline.act_start,
            self.timeline.act_end,
        ):
            self.addAction(a)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addAction(self.act_open)
        self.recent_menu = m.addMenu("Open &Recent")
        self._rebuild_recent()
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_save_as)
        exp = m.addMenu("&Export")
        for a in (self.act_exp_euler, self.act_exp_quat, self.act_exp_csv, self.act_exp_graph):
            exp.addAction(a)
        m.addSeparator()
        m.addAction(self.act_quit)
        m = mb.addMenu("&Edit")
        for a in (
            self.act_undo,
            self.act_redo,
            None,
            self.act_copy,
            self.act_paste,
            self.act_delete,
            None,
            self.act_select_all,
            self.act_deselect,
        ):
            m.addSeparator() if a is None else m.addAction(a)
        self.key_menu = mb.addMenu("&Key")
        self._fill_key_menu(self.key_menu)
        m = mb.addMenu("&View")
        for a in (
            self.act_frame_sel,
            self.act_frame_all,
            None,
            self.act_overlay,
            self.act_speed,
            self.act_quat,
            self.act_original,
            self.act_normalize,
            self.act_frames,
            None,
            self.act_maximize,
            self.act_reset_layout,
            None,
            self.act_filter,
        ):
            m.addSeparator() if a is None else m.addAction(a)
        m.addSeparator()
        tm = m.addMenu("&Theme")
        group = QActionGroup(self)
        for name in ("system", "light", "dark"):
            a = QAction(name.capitalize() if name != "system" else "Follow system", self, checkable=True)
            a.setChecked(self.themes.preference == name)
            a.triggered.connect(lambda _c=False, n=name: self.set_theme(n))
            group.addAction(a)
            tm.addAction(a)
        pm = m.addMenu("&Panels")
        for d in self.docks.values():
            pm.addAction(d.toggleViewAction())
        m = mb.addMenu("&Playback")
        for a in (
            self.timeline.act_play,
            self.timeline.act_loop,
            None,
            self.timeline.act_prev,
            self.timeline.act_next,
            self.timeline.act_start,
            self.timeline.act_end,
        ):
            m.addSeparator() if a is None else m.addAction(a)
        m = mb.addMenu("&Tools")
        m.addAction(self.act_compare)
        m = mb.addMenu("&Help")
        m.addAction(self.act_shortcuts)
        m.addAction(self.act_about)

    def _fill_key_menu(self, m: QMenu) -> None:
        m.addAction(self.act_add_key)
        m.addAction(self.act_delete)
        m.addAction(self.act_copy)
        m.addAction(self.act_paste)
        m.addSeparator()
        for a in self.tangent_actions:
            m.addAction(a)
        m.addSeparator()
        for label, acts in self.side_actions.items():
            sub = m.addMenu(label)
            for a in acts:
                sub.addAction(a)
        self.tools.fill_key_menu(m)

    def _build_status(self) -> None:
        self.status_label = ElidedLabel()
        self.status_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.statusBar().addPermanentWidget(self.status_label)
        self.statusBar().showMessage(
            "Click keys to select, drag to move (Shift constrains), K adds a key, F frames the selection",
            8000,
        )

    # ------------------------------------------------------------------ state display
    def _update_title(self) -> None:
        name = os.path.basename(self.doc.path) if self.doc.path else self.doc.clip.name
        self.setWindowTitle(f"{name}{' *' if self.doc.is_dirty() else ''} — curveeditor")

    def _update_status(self) -> None:
        clip = self.doc.clip
        nsel = sum(len(s) for s in self.doc.selected_keys.values())
        tr = self.doc.current_track()
        # the path last: middle elision keeps the counts and the bone's name
        self.status_label.setText(
            f"{len(clip.tracks)} rotation tracks · {clip.frame_rate:g} fps · {nsel} key(s) selected · "
            f"{tr.path if tr else 'no track'}"
        )

    def _update_actions(self) -> None:
        has_keys = any(self.doc.selected_keys.values())
        for a in (self.act_copy, self.act_delete, *self.tangent_actions):
            a.setEnabled(has_keys)
        for acts in self.side_actions.values():
            for a in acts:
                a.setEnabled(has_keys)

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        files = self.settings.recent_files()
        for i, p in enumerate(files):
            a = self.recent_menu.addAction(f"&{i + 1} {os.path.basename(p)}")
            a.setStatusTip(p)
            a.setToolTip(p)
            a.triggered.connect(lambda _c=False, path=p: self.open_file(path))
        if files:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self._clear_recent)
        self.recent_menu.setEnabled(bool(files))

    def _clear_recent(self) -> None:
        self.settings.clear_recent()
        self._rebuild_recent()

    def _apply_theme(self, theme) -> None:
        self.graphs.set_theme(theme)
        self.timeline.set_theme(theme)
        self.tracks.set_theme(theme)
        self.problems.set_theme(theme)
        for w in (self.gizmo, self.recipe, self.diff, self._compare):
            if w is not None and hasattr(w, "set_theme"):
                w.set_theme(theme)

    def set_theme(self, name: str) -> None:
        self.settings.theme = name
        self.themes.set_preference(name)

    def _set_view(self, what: str, on: bool) -> None:
        self.settings.set(f"view/{what}", on)
        if what == "original":
            self.graphs.set_show_original(on)
        elif what == "frames":
            self.graphs.set_time_in_frames(on)
            self.timeline.set_time_in_frames(on)
        elif what == "normalize":
            self.graphs.set_layout(normalize=on)
        else:
            self.graphs.set_layout(**{"overlay" if what == "overlay" else what: on})

    def _focus_filter(self) -> None:
        self.docks["Tracks"].show()
        self.tracks.filter.setFocus()
        self.tracks.filter.selectAll()

    # ------------------------------------------------------------------ files
    def open_dialog(self) -> None:
        """File > Open: ask about unsaved edits first (as Recent files and drag-and-drop do)."""
        if not self.maybe_save():
            return
        self.files.open_dialog()

    def open_file(self, path: str) -> None:
        if not self.maybe_save():
            return
        self.files.open_path(path)

    def open_initial(self, path: str | None) -> None:
        """Start-up: recovery offer first, then ``path`` or the bundled sample."""
        if self.offer_recovery():
            return
        # The sample is package data (curveeditor/resources/samples), shipped by `pip install .`.
        target = path or (str(sample_path()) if sample_path() else None)
        if target:
            self.files.open_path(target)
        else:
            self.statusBar().showMessage("The bundled sample clip is missing: reinstall curveeditor", 8000)

    def offer_recovery(self, ask=None) -> bool:
        """Offer the newest orphaned autosave; True when one was recovered. ``ask(meta) -> bool``
        replaces the dialog (tests)."""
        sessions = self.autosaver.orphaned_sessions()
        if not sessions:
            return False
        meta = sessions[0]
        if ask is None:
            box = QMessageBox(self)
            box.setIcon(QMessageBox.Icon.Question)
            box.setWindowTitle("Recover unsaved work?")
            box.setText("curveeditor did not shut down cleanly. Recover the autosaved session?")
            box.setInformativeText(
                f"File: {meta.get('path') or '(untitled)'}\nAutosaved: {meta.get('saved_at', '?')}"
            )
            box.setStandardButtons(
                QMessageBox.StandardButton.Yes
                | QMessageBox.StandardButton.No
                | QMessageBox.StandardButton.Discard
            )
            box.button(QMessageBox.StandardButton.Yes).setText("Recover")
            box.button(QMessageBox.StandardButton.Discard).setText("Delete autosave")
            res = box.exec()
            if res == QMessageBox.StandardButton.Discard:
                Autosaver.remove_session(meta)
                return False
            ok = res == QMessageBox.StandardButton.Yes
        else:
            ok = ask(meta)
        if not ok:
            return False

        def restored(_clip):
            self.doc.mark_dirty()
            self.doc.select_paths(meta.get("selected_paths") or [])
            self.doc.set_time(float(meta.get("time", 0.0)))
            Autosaver.remove_session(meta)
            self.statusBar().showMessage("Recovered the autosaved session (not saved yet)", 8000)

        self.files.open_path(meta["_clip"], recovered_from=meta.get("path"), on_loaded=restored)
        return True

    def maybe_save(self) -> bool:
        """Ask to save unsaved changes; False when the user cancels."""
        if not self.doc.is_dirty():
            return True
        res = QMessageBox.warning(
            self,
            "Unsaved changes",
            f"Save the changes to {os.path.basename(self.doc.path or self.doc.clip.name)}?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if res == QMessageBox.StandardButton.Save:
            return self.files.save()
        return res == QMessageBox.StandardButton.Discard

    def closeEvent(self, event):  # noqa: N802
        if not self.maybe_save():
            event.ignore()
            return
        self.timeline.set_playing(False)
        self._save_layout()
        self.autosaver.stop()
        self.autosaver.discard()
        self.recipe.shutdown()
        self.diff.shutdown()
        if self._compare is not None:
            self._compare.shutdown()
        event.accept()

    def dragEnterEvent(self, event):  # noqa: N802
        if event.mimeData().hasUrls() and any(
            u.toLocalFile().lower().endswith((".anim", ".bvh", ".csv")) for u in event.mimeData().urls()
        ):
            event.acceptProposedAction()

    def dropEvent(self, event):  # noqa: N802
        for u in event.mimeData().urls():
            p = u.toLocalFile()
            if p.lower().endswith((".anim", ".bvh", ".csv")):
                event.acceptProposedAction()
                self.open_file(p)
                return

    def _save_layout(self) -> None:
        if self._maximized_docks is not None:
            self.toggle_maximize_graphs()  # never save the maximised state as the layout
        self.settings.set("window/layout_version", LAYOUT_VERSION)
        self.settings.set("window/geometry", self.saveGeometry())
        self.settings.set("window/state", self.saveState(LAYOUT_VERSION))
        self.settings.set("play/loop", self.timeline.act_loop.isChecked())
        self.settings.set("play/speed", self.timeline.speed)
        self.settings.sync()

    def _restore_layout(self) -> None:
        """The saved layout, unless it is from another layout version or does not fit the screen
        (then the defaults stay and the saved one is dropped)."""
        g = self.settings.store.value("window/geometry")
        s = self.settings.store.value("window/state")
        try:
            version = int(self.settings.store.value("window/layout_version", 0) or 0)
        except (TypeError, ValueError):
            version = 0
        if version != LAYOUT_VERSION:
            self._drop_saved_layout()
            return
        if isinstance(g, QByteArray) and not g.isEmpty():
            self.restoreGeometry(g)
            if not self.fits_screen():
                self._drop_saved_layout()
                self._fit_to_screen()
                return
        if isinstance(s, QByteArray) and not s.isEmpty():
            self.restoreState(s, LAYOUT_VERSION)

    def _drop_saved_layout(self) -> None:
        for k in ("window/geometry", "window/state", "window/layout_version"):
            self.settings.store.remove(k)

    # ------------------------------------------------------------------ key edits
    def _selected(self) -> dict[str, set[int]]:
        return {p: s for p, s in self.doc.selected_keys.items() if s}

    def _edit_tracks(self, fn, text: str, keys_after=None) -> bool:
        """Apply ``fn(track, idx) -> track`` to every track with selected keys as one command."""
        sel = self._selected()
        if not sel:
            self.statusBar().showMessage("Select keys first", 3000)
            return False
        clip = self.doc.clip
        try:
            tracks = {p: fn(clip.track(p), idx) for p, idx in sel.items()}
        except ValueError as exc:
            QMessageBox.warning(self, text, str(exc))
            return False
        new = clip.with_tracks(tracks.get(t.path, t) for t in clip.tracks)
        self.doc.apply_clip(new, text, keys_after=keys_after)
        return True

    def delete_keys(self) -> None:
        n = sum(len(s) for s in self._selected().values())
        if self._edit_tracks(ed.delete_keys, f"Delete {n} key(s)", keys_after={}):
            self.statusBar().showMessage(f"Deleted {n} key(s)", 3000)

    def add_key(self) -> None:
        t = self.doc.current_time
        paths = self.doc.selected_paths
        if not paths:
            return
        clip = self.doc.clip
        keys = {}
        tracks = {}
        for p in paths:
            tr, i = insert_key_keeping_shape(clip.track(p), t)
            tracks[p] = tr
            keys[p] = {i}
        new = clip.with_tracks(tracks.get(tr.path, tr) for tr in clip.tracks)
        self.doc.apply_clip(new, f"Add key at {t:.3f} s", keys_after=keys)

    def copy_keys(self) -> None:
        sel = self._selected()
        if not sel:
            return
        self.clipboard = {}
        t0 = min(float(self.doc.clip.track(p).times[min(i)]) for p, i in sel.items())
        for p, idx in sel.items():
            tr = self.doc.clip.track(p)
            keys = ed.copy_keys(tr, idx)
            first = float(tr.times[min(idx)])
            self.clipboard[p] = (keys, first - t0)
        n = sum(len(s) for s in sel.values())
        self.statusBar().showMessage(f"Copied {n} key(s)", 3000)

    def paste_keys(self) -> None:
        if not self.clipboard:
            return
        clip = self.doc.clip
        t = self.doc.current_time
        tracks, keys = {}, {}
        items = list(self.clipboard.items())
        if len(items) == 1 and self.doc.selected_paths:
            # a single copied track pastes into the current track (Unity pastes into the selection)
            targets = [(self.doc.selected_paths[0], items[0][1])]
        else:
            targets = [(p, v) for p, v in items if p in {tr.path for tr in clip.tracks}]
        try:
            for p, (curve, offset) in targets:
                tr, idx = ed.paste_keys(clip.track(p), curve, t + offset)
                tracks[p] = tr
                keys[p] = {int(i) for i in idx}
        except ValueError as exc:
            QMessageBox.warning(self, "Paste keys", str(exc))
            return
        if tracks:
            new = clip.with_tracks(tracks.get(tr.path, tr) for tr in clip.tracks)
            self.doc.apply_clip(new, f"Paste keys at {t:.3f} s", keys_after=keys)

    def select_all_keys(self) -> None:
        clip = self.doc.clip
        self.doc.select_keys({p: set(range(clip.track(p).n_keys)) for p in self.doc.selected_paths})

    def set_tangent_preset(self, preset: str) -> None:
        self._edit_tracks(lambda tr, idx: ed.set_tangent_preset(tr, idx, preset), f"Tangents: {preset}")

    def set_side_mode(self, side: str, mode: str) -> None:
        label = {"in": "Left", "out": "Right", "both": "Both"}[side]
        self._edit_tracks(lambda tr, idx: ed.set_side_mode(tr, idx, side, mode), f"{label} tangent: {mode}")

    def selected_tangent_mode(self) -> str | None:
        """The selected keys' tangent mode (``ed.describe_mode`` of channel 0), when they share one."""
        pairs = set()
        for p, idx in self._selected().items():
            c = self.doc.clip.track(p).curve
            rows = np.fromiter(idx, dtype=np.int64, count=len(idx))
            # Only the distinct (mode, weighted) pairs are described: a per-key describe_mode cost
            # 0.65 s per dope-sheet drag step with 10,000 selected keys.
            both = c.tangent_mode[rows].astype(np.int64) * 4 + (c.weighted_mode[rows].astype(np.int64) & 3)
            pairs.update(np.unique(both).tolist())
        names = {ed.describe_mode(int(mw // 4), int(mw % 4)) for mw in pairs}
        return names.pop() if len(names) == 1 else None

    def _mark_tangent_mode(self) -> None:
        if self.doc.in_live_edit():
            return  # a drag moves keys, it does not change their modes; its end marks them again
        mode = self.selected_tangent_mode()
        for a in self.tangent_actions:
            name = a.text().replace("&", "")
            broken = name == "Broken" and mode is not None and mode.startswith("Broken")
            a.setChecked(mode is not None and (mode == name or broken))
        self.key_menu.setToolTip(f"Selected keys: {mode}" if mode else "")

    def _show_key_menu(self, global_pos) -> None:
        self._mark_tangent_mode()
        m = QMenu(self)
        self._fill_key_menu(m)
        m.addSeparator()
        m.addAction(self.act_frame_sel)
        m.addAction(self.act_frame_all)
        m.exec(global_pos)

    # ------------------------------------------------------------------ dialogs
    def show_compare(self) -> None:
        if self._compare is None:  # one dialog, kept in sync with the document
            self._compare = CompareDialog(self.doc, self, recipe_panel=self.recipe)
            self._compare.set_theme(self.themes.theme)
        self._compare.show()
        self._compare.raise_()

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            "About curveeditor",
            "<b>curveeditor</b> — a rotation-curve editor for Unity .anim, BVH and CSV clips.<br>"
            "Find flips, wraps and gimbal lock, fix them without changing the pose, and prove it in degrees."
            f"<pre>{versions_text()}</pre>",
        )

    def show_shortcuts(self) -> None:
        rows = []
        for a in self.actions():
            sc = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if sc:
                rows.append(f"<tr><td><b>{sc}</b></td><td>{a.text().replace('&', '')}</td></tr>")
        QMessageBox.information(
            self, "Keyboard shortcuts", "<table>" + "".join(sorted(set(rows))) + "</table>"
        )
