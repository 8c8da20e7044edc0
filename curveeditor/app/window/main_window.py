"""The editor window: graphs in the centre, tracks on the left, 3D view and recipe on the right,
keys / problems / diff / undo history docked, timeline at the bottom.

Every edit goes through ``ClipDocument`` (one undo command each). ``MainWindow`` builds the views and
maps the document's signals to the window's own displays in one place (:meth:`_connect_document`);
what it handles lives in mixins, one module each:

* :mod:`.layout` -- docks, screen fitting, Reset layout, maximise, saved layouts;
* :mod:`.actions` -- actions, shortcuts, menus, About;
* :mod:`.file_menu` -- open / recent / drop / start-up clip / close;
* :mod:`curveeditor.app.keys.commands` -- the Key and Edit menus' key edits.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSizePolicy, QUndoView, QVBoxLayout, QWidget

from ..common.elided import ElidedLabel
from ..common.theme import ThemeManager
from ..graphs.panel import GraphPanel
from ..keys.commands import KeyCommands, insert_key_keeping_shape
from ..keys.fields import KeyFields
from ..keys.table import KeyTable
from ..model.document import ClipDocument
from ..model.problems import ProblemIndex
from ..recipe.diff_panel import DiffPanel
from ..recipe.panel import RecipePanel
from ..tracks.problems_panel import ProblemsPanel
from ..tracks.tree import TrackTree
from ..view3d.gizmo import GizmoView
from .actions import WindowActions, versions_text
from .editing_tools import EditingTools
from .file_menu import WindowFiles
from .files import Autosaver, FileController
from .layout import DEFAULT_SIZE, LAYOUT_VERSION, DockLayout
from .settings import Settings
from .shortcuts import Keymap
from .timeline import Timeline

__all__ = [
    "MainWindow",
    "versions_text",
    "insert_key_keeping_shape",
    "LAYOUT_VERSION",
    "DEFAULT_SIZE",
    "WARM_UP_DELAY_MS",
]

#: After a clip is drawn, the recipe ops are imported in the background this much later (ms).
WARM_UP_DELAY_MS = 1000


class MainWindow(WindowFiles, KeyCommands, WindowActions, DockLayout, QMainWindow):
    """The editor's main window (see the module docstring for what lives where)."""

    def __init__(self, settings: Settings | None = None, autosave_folder: str | None = None):
        super().__init__()
        self.settings = settings or Settings()
        self.setWindowTitle("curveeditor")
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)
        self.doc = ClipDocument(self)
        self.doc.whole_keys = self.settings.get_bool("view/whole_keys", False)
        self.problem_index = ProblemIndex(self.doc, self)
        self.themes = ThemeManager(self.settings.theme, self)
        self.files = FileController(self.doc, self.settings, self, self.problem_index)
        self.autosaver = Autosaver(self.doc, self.settings.autosave_seconds, autosave_folder, self)
        self.clipboard: dict = {}
        self._compare = None  # CompareDialog, built on first use (Tools > A/B compare)

        self._build_central()
        self._build_docks()
        self._build_actions()
        self._build_menus()
        self.tools.add_menus(self.menuBar())
        # every action's shortcut, the user's saved ones applied (Help > Keyboard shortcuts edits it)
        self.keymap = Keymap(self, self.settings)
        self.keymap.apply_saved()
        self._build_status()
        self._connect_document()

        self._fit_to_screen()
        self._restore_layout()
        self._apply_theme(self.themes.apply())
        self._update_title()
        self._update_actions()
        self.autosaver.start()

    # ------------------------------------------------------------------ construction
    def _build_central(self) -> None:
        """Graphs over the timeline, with the saved view settings."""
        self.graphs = g = GraphPanel(self.doc, self.problem_index)
        view = {
            "overlay": self.settings.get_bool("view/overlay", False),
            "speed": self.settings.get_bool("view/speed", True),
            "quat": self.settings.get_bool("view/quat", False),
            "normalize": self.settings.get_bool("view/normalize", False),
        }
        # The panel has built its default strips: rebuilding them unasked cost ~0.27 s of cold start.
        if (g.overlay, g.show_speed, g.show_quat, g.normalize) != tuple(view.values()):
            g.set_layout(**view)
        g.show_original = self.settings.get_bool("view/original", True)
        g.side_legend.set_folded(self.settings.get_bool("view/legend_folded", False))
        if self.settings.get_bool("view/frames", False):
            g.set_time_in_frames(True)
        self.timeline = Timeline(self.doc)
        self.timeline.set_time_in_frames(g.time_in_frames)
        self.timeline.act_loop.setChecked(self.settings.get_bool("play/loop", True))
        self.timeline.set_speed(self.settings.get_float("play/speed", 1.0))
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        self.key_fields = KeyFields(self.doc)
        lay.addWidget(self.key_fields)
        lay.addWidget(g, 1)
        lay.addWidget(self.timeline)
        self.setCentralWidget(central)

    def _build_docks(self) -> None:
        """The panels and their default places; the default layout is saved for Reset layout."""
        self.tracks = TrackTree(self.doc, self.problem_index)
        self.keys = KeyTable(self.doc)
        self.problems = ProblemsPanel(self.doc, self.problem_index)
        self.undo_view = QUndoView(self.doc.undo_stack)
        self.undo_view.setEmptyLabel("<opened file>")
        self.docks: dict[str, QDockWidget] = {}
        self._dock_set: set[QDockWidget] = set()
        self._limiting = False
        left, right = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        # The right column (3D view over Recipe) runs down to the status bar beside the bottom docks:
        # at 1600 x 1000 the 3D view got 340 x 234 px above the Keys dock, now ~480 x 480.
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("Tracks", self.tracks, left)
        self.gizmo = GizmoView(self.doc, self)
        self._dock("3D view", self.gizmo, right)
        self.recipe = RecipePanel(self.doc, self)
        self._dock("Recipe", self.recipe, right, scroll=True)
        self._dock("Keys", self.keys, bottom)
        self._dock("Problems", self.problems, bottom)
        self.diff = DiffPanel(self.doc, self)
        self._dock("Diff", self.diff, bottom, scroll=True)
        self._dock("History", self.undo_view, left)
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

    def _build_status(self) -> None:
        self.status_label = ElidedLabel()
        self.status_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.statusBar().addPermanentWidget(self.status_label)
        self.statusBar().showMessage(
            "Click keys to select, drag to move (Shift constrains), K adds a key, F frames the selection",
            8000,
        )

    def _connect_document(self) -> None:
        """The one place where the document's, the files' and the views' signals reach the window's
        own displays (title, status line, action states, messages) and the panels that feed each
        other. The views connect to the document themselves (each draws its own part)."""
        doc, status = self.doc, self.statusBar()
        doc.dirtyChanged.connect(lambda _d: self._update_title())
        doc.pathChanged.connect(self._update_title)
        doc.clipChanged.connect(self._update_status)
        doc.keySelectionChanged.connect(self._update_status)
        doc.selectionChanged.connect(self._update_status)
        doc.undo_stack.canUndoChanged.connect(lambda _c: self._update_actions())
        doc.keySelectionChanged.connect(self._update_actions)
        doc.keySelectionChanged.connect(self._mark_tangent_mode)
        doc.floatKeySelectionChanged.connect(self._update_actions)  # float curves' keys (muscles)
        doc.floatKeySelectionChanged.connect(self._update_status)
        doc.otherSelectionChanged.connect(self._update_status)
        doc.floatKeySelectionChanged.connect(self._mark_tangent_mode)
        doc.clipChanged.connect(self._mark_tangent_mode)
        doc.clipChanged.connect(self._update_export_actions)
        # The recipe ops' scipy imports (~2 s) wait until the first clip is drawn (cold start).
        doc.clipChanged.connect(lambda: QTimer.singleShot(WARM_UP_DELAY_MS, self.recipe.warm_up))
        self.recipe.diffsComputed.connect(self.diff.offer_diffs)
        self.recipe.figuresComputed.connect(self.diff.offer_figures)
        self.files.written.connect(self.diff.show_written)  # the Diff dock shows the file as read back
        self.files.recentChanged.connect(self._rebuild_recent)
        self.files.loaded.connect(lambda p: status.showMessage(f"Opened {p}", 5000))
        self.files.saved.connect(lambda p: status.showMessage(f"Wrote {p}", 5000))
        self.graphs.statusMessage.connect(lambda m: status.showMessage(m, 3000))
        self.key_fields.statusMessage.connect(lambda m: status.showMessage(m, 5000))
        self.graphs.contextMenuRequested.connect(self._show_key_menu)
        self.graphs.soloChanged.connect(self._mark_solo)
        self.graphs.side_legend.foldChanged.connect(lambda on: self.settings.set("view/legend_folded", on))
        self.themes.changed.connect(self._apply_theme)

    # ------------------------------------------------------------------ state display
    def _update_title(self) -> None:
        name = os.path.basename(self.doc.path) if self.doc.path else self.doc.clip.name
        self.setWindowTitle(f"{name}{' *' if self.doc.is_dirty() else ''} — curveeditor")

    def _update_status(self) -> None:
        clip = self.doc.clip
        nsel = sum(len(s) for s in self.doc.selected_keys.values())
        nsel += sum(len(s) for s in self.doc.selected_float_keys.values())
        tr = self.doc.current_track()
        floats = len(self.doc.selected_other)
        what = tr.path if tr else (f"{floats} float curve(s)" if floats else "no track")
        # the path last: middle elision keeps the counts and the bone's name
        self.status_label.setText(
            f"{len(clip.tracks)} rotation tracks · {clip.frame_rate:g} fps · {nsel} key(s) selected · {what}"
        )

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
        elif what == "whole_keys":
            self.doc.whole_keys = bool(on)
        else:
            self.graphs.set_layout(**{"overlay" if what == "overlay" else what: on})

    def _focus_filter(self) -> None:
        self.docks["Tracks"].show()
        self.tracks.filter.setFocus()
        self.tracks.filter.selectAll()

    def show_compare(self) -> None:
        """Tools > A/B compare: one dialog, kept in sync with the document (imported on first use:
        nothing of it is drawn at start-up)."""
        if self._compare is None:
            from ..recipe.compare import CompareDialog

            self._compare = CompareDialog(self.doc, self, recipe_panel=self.recipe)
            self._compare.set_theme(self.themes.theme)
        self._compare.show()
        self._compare.raise_()
