"""Editing depth in the main window: dope sheet, character view, key manipulators, buffer curves,
pre/post infinity, playback range and selection-scoped recipes, with their actions and menus.

:class:`EditingTools` is built by :class:`~curveeditor.app.window.main_window.MainWindow` (one line) and owns
everything of issue 12 so the window's own code stays as it was: it adds the *Dope sheet* dock, the
overlay layers of the graphs, the skeleton layer of the 3D view, and actions that appear in the menus
(``fill_key_menu`` for the Key menu and the graphs' context menu, ``add_menus`` for the rest) and in
Help > Keyboard shortcuts (:mod:`curveeditor.app.window.shortcuts`).

Graph keys (arrows, S) act while the graphs have the focus (``WidgetWithChildrenShortcut``) so the
track tree and editors keep their arrow keys.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from curveeditor.engine.curves import INFINITY_MODES, infinity_name, with_infinity
from curveeditor.engine.recipe import RecipeError

from ..dope_sheet.sheet import DopeSheet
from ..graphs.buffer_curves import BufferCurves, BufferLayer
from ..graphs.layers import InfinityLayer, PlaybackRangeLayer
from ..keys.manipulators import KeyManipulator, PlaybackRange
from ..view3d.motion import MotionLayer
from ..view3d.rotate_tool import RotateGizmo
from ..view3d.skeleton import SkeletonLayer

__all__ = ["EditingTools"]


class EditingTools(QObject):
    """Issue 12's features wired into a main window (module docstring)."""

    def __init__(self, window):
        super().__init__(window)
        self.win = window
        doc = window.doc
        self.doc = doc
        self.playback = PlaybackRange(doc, self)
        window.timeline.range_source = self.playback
        self.dope = DopeSheet(doc, playback=self.playback)
        self.dope.statusMessage.connect(self._status)
        dock = window._dock("Dope sheet", self.dope, Qt.DockWidgetArea.BottomDockWidgetArea)
        if "Diff" in window.docks:
            window.tabifyDockWidget(window.docks["Diff"], dock)
            window.docks["Keys"].raise_()
        self.infinity_layer = InfinityLayer(window.graphs)
        self.range_layer = PlaybackRangeLayer(window.graphs, self.playback)
        self.buffer = BufferCurves(doc, self)
        self.buffer_layer = BufferLayer(window.graphs, self.buffer)
        self.manip = KeyManipulator(window.graphs)
        self.manip.statusMessage.connect(self._status)
        self.skeleton = SkeletonLayer(window.gizmo)
        self.rotate = RotateGizmo(window.gizmo, self.skeleton)
        self.rotate.statusMessage.connect(self._status)
        self.motion = MotionLayer(self.skeleton)
        self._build_actions()
        self.act_follow.setIconText("Follow")  # the 3D view's tools row: short
        window.gizmo.add_tool(self.act_follow)
        window.gizmo.options_menu.addAction(self.act_frame_char)

    def _up_down(self, steps: int) -> None:
        """Nudge the selected keys' values by ``steps`` value steps, or with no key selected move the
        track selection (Up = previous track)."""
        if self.doc.selected_keys and any(self.doc.selected_keys.values()):
            self.manip.nudge_value(steps)
        else:
            self.win.tracks.step(-steps)

    def _status(self, msg: str) -> None:
        self.win.statusBar().showMessage(msg, 4000)

    # ------------------------------------------------------------------ actions
    def _act(
        self, text, slot, shortcut=None, tip=None, widget=None, checkable=False, checked=False
    ) -> QAction:
        a = QAction(text, self.win)
        if checkable:
            a.setCheckable(True)
            a.setChecked(checked)
            a.toggled.connect(slot)
        else:
            a.triggered.connect(lambda _checked=False: slot())  # not slot(checked)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        sc = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        label = text.replace("&", "")
        a.setToolTip(f"{label} ({sc})" if sc else label)
        a.setStatusTip(tip or label)
        if widget is None:
            self.win.addAction(a)
        else:  # keys that the graphs / dope sheet own while focused
            a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            for w in widget:
                w.addAction(a)
        return a

    def _build_actions(self) -> None:
        g = self.win.graphs
        m = self.manip
        focus = (g,)
        self.act_scale = self._act(
            "&Scale keys (time and value)",
            m.begin_scale,
            "S",
            "S then move the mouse: scale about the pivot",
            focus,
        )
        self.act_nudge_left = self._act(
            "Nudge keys one frame &earlier", lambda: m.nudge_time(-1), "Left", None, focus
        )
        self.act_nudge_right = self._act(
            "Nudge keys one frame &later", lambda: m.nudge_time(1), "Right", None, focus
        )
        # Up/Down nudge selected keys; with no key selected they walk the track tree (issue 9), so one
        # pair of shortcuts serves both (two actions on one key would be ambiguous and neither fires).
        self.act_nudge_up = self._act(
            "Nudge keys &up one step (no keys: previous track)", lambda: self._up_down(1), "Up", None, focus
        )
        self.act_nudge_down = self._act(
            "Nudge keys &down one step (no keys: next track)", lambda: self._up_down(-1), "Down", None, focus
        )
        self.act_value_snap = self._act(
            "Snap &values to the step",
            lambda on: setattr(m, "value_snap", bool(on)),
            "Shift+S",
            "Round scaled values to multiples of the value step",
            checkable=True,
        )
        self.act_next_key = self._act(
            "Jump to &next key", lambda: m.jump_key(1), "Ctrl+Right", "Next key of the selected tracks"
        )
        self.act_prev_key = self._act(
            "Jump to &previous key",
            lambda: m.jump_key(-1),
            "Ctrl+Left",
            "Previous key of the selected tracks",
        )
        self.act_in = self._act(
            "Set playback &in", self.playback.set_in, "I", "Playback starts here (loops inside)"
        )
        self.act_out = self._act("Set playback &out", self.playback.set_out, "Shift+I", "Playback ends here")
        self.act_clear_range = self._act(
            "&Clear playback range", self.playback.clear, "Alt+I", "Play the whole clip"
        )
        self.act_snapshot = self._act(
            "&Buffer snapshot", self.snapshot, "Ctrl+Shift+B", "Keep the selected tracks as buffer curves"
        )
        self.act_swap = self._act(
            "S&wap buffer curves", self.swap_buffer, "B", "Swap the snapshot and the current curves"
        )
        self.act_range_recipe = self._act(
            "Run recipe on &range",
            self.run_recipe_on_range,
            "Ctrl+Shift+R",
            "Run the recipe on the selected keys' span (or the playback range) of the selected tracks",
        )
        self.act_character = self._act(
            "Show &character (skeleton)",
            self.skeleton.set_enabled,
            None,
            "Draw the whole character in the 3D view",
            checkable=True,
            checked=True,
        )
        self.act_follow = self._act(
            "&Follow root", self.skeleton.set_follow_root, None, "Keep the root centred", checkable=True
        )
        self.act_frame_char = self._act(
            "&Frame character", self.skeleton.frame_character, None, "F in the 3D view"
        )
        self.act_frame_char.setToolTip("Frame the character (F in the 3D view)")
        self.infinity_actions: dict[str, list[QAction]] = {}
        for side in ("pre", "post"):
            group = QActionGroup(self)
            acts = []
            for name, mode in INFINITY_MODES.items():
                a = QAction(name, self.win, checkable=True)
                a.triggered.connect(lambda _c=False, s=side, md=mode: self.set_infinity(s, md))
                group.addAction(a)
                acts.append(a)
            self.infinity_actions[side] = acts
        self.doc.selectionChanged.connect(self._sync_infinity)
        self.doc.clipChanged.connect(self._sync_infinity)
        self._sync_infinity()

    def fill_key_menu(self, m: QMenu) -> None:
        """Key-menu entries (the menu bar's Key menu and the graphs' right-click menu)."""
        m.addSeparator()
        for a in (self.act_scale, self.act_value_snap, self.act_nudge_left, self.act_nudge_right):
            m.addAction(a)
        m.addAction(self.act_nudge_up)
        m.addAction(self.act_nudge_down)
        m.addSeparator()
        for side, label in (
            ("pre", "Pre-infinity (before the first key)"),
            ("post", "Post-infinity (after the last key)"),
        ):
            sub = m.addMenu(label)
            for a in self.infinity_actions[side]:
                sub.addAction(a)
        m.addSeparator()
        m.addAction(self.act_snapshot)
        m.addAction(self.act_swap)

    def add_menus(self, menubar) -> None:
        """Playback-range, jump and view entries in the existing menus (Playback, View, Tools)."""
        menus = {a.text().replace("&", ""): a.menu() for a in menubar.actions() if a.menu() is not None}
        pm = menus.get("Playback")
        if pm is not None:
            pm.addSeparator()
            for a in (self.act_prev_key, self.act_next_key, self.act_in, self.act_out, self.act_clear_range):
                pm.addAction(a)
        vm = menus.get("View")
        if vm is not None:
            vm.addSeparator()
            for a in (self.act_character, self.act_follow, self.act_frame_char):
                vm.addAction(a)
            vm.addAction(self.rotate.act_rotate)  # E in the 3D view
        tm = menus.get("Tools")
        if tm is not None:
            tm.addAction(self.act_range_recipe)

    # ------------------------------------------------------------------ infinity
    def _infinity_targets(self) -> list[str]:
        return list(self.doc.selected_paths)

    def _sync_infinity(self) -> None:
        paths = self._infinity_targets()
        for side in ("pre", "post"):
            on = bool(paths)
            name = None
            if paths:
                c = self.doc.clip.track(paths[0]).curve
                name = infinity_name(c.pre_infinity if side == "pre" else c.post_infinity)
            for a in self.infinity_actions[side]:
                a.setEnabled(on)
                a.setChecked(a.text() == name)

    def set_infinity(self, side: str, mode: int) -> bool:
        """Set the pre (``side="pre"``) or post infinity of the selected tracks (one undo step)."""
        paths = self._infinity_targets()
        if not paths:
            self._status("Select tracks first")
            return False
        clip = self.doc.clip
        kw = {"pre": mode} if side == "pre" else {"post": mode}
        tracks = {p: clip.track(p).with_curve(with_infinity(clip.track(p).curve, **kw)) for p in paths}
        new = clip.with_tracks(tracks.get(t.path, t) for t in clip.tracks)
        label = "Pre" if side == "pre" else "Post"
        self.doc.apply_clip(new, f"{label}-infinity: {infinity_name(mode)}")
        return True

    # ------------------------------------------------------------------ buffer curves
    def snapshot(self) -> None:
        n = self.buffer.take_snapshot()
        self._status(f"Buffer: {n} track(s) snapshotted" if n else "Select tracks first")

    def swap_buffer(self) -> None:
        if not self.buffer.swap():
            self._status("No buffer snapshot of the tracks (Key > Buffer snapshot)")

    # ------------------------------------------------------------------ selection-scoped recipe
    def recipe_range(self) -> tuple[float, float] | None:
        """The selected keys' time span, else the playback range, else None."""
        spans = [
            (float(self.doc.clip.track(p).times[min(s)]), float(self.doc.clip.track(p).times[max(s)]))
            for p, s in self.doc.selected_keys.items()
            if s
        ]
        if spans:
            a, b = min(s[0] for s in spans), max(s[1] for s in spans)
            if b > a:
                return a, b
        return self.playback.play_range

    def run_recipe_on_range(self) -> bool:
        rng = self.recipe_range()
        paths = list(self.doc.selected_paths)
        if rng is None or not paths:
            QMessageBox.information(
                self.win,
                "Run recipe on range",
                "Select keys (their time span) or set a playback range, on selected tracks.",
            )
            return False
        # imported here: range_ops pulls in reduce / reorder, nothing the first paint needs (cold start)
        from curveeditor.engine.range_ops import run_recipe_on_range

        try:
            recipe = self.win.recipe.recipe()
            res = run_recipe_on_range(self.doc.clip, recipe, rng[0], rng[1], paths=paths)
        except RecipeError as e:
            QMessageBox.warning(self.win, "Run recipe on range", str(e))
            return False
        worst = max((d.max_error for d in res.diffs), default=0.0)
        self.doc.apply_clip(res.clip, f"Recipe on {rng[0]:.3f}..{rng[1]:.3f} s ({len(paths)} track(s))")
        self._status(f"Recipe on {rng[0]:.3f}..{rng[1]:.3f} s: max change {worst:.3f}°, blended in and out")
        return True
