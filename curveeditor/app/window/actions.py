"""The main window's actions and menus: one ``QAction`` per command with its shortcut (shown in the
tooltip), the menu bar, the key context menu, recent files, About and the shortcut list.

A mixin of :class:`~curveeditor.app.window.main_window.MainWindow`: actions call the window's handlers
(files, key commands, layout) and the views' own slots; nothing here edits the clip itself.
"""

from __future__ import annotations

import platform
from functools import partial

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from curveeditor.engine import edit as ed

from .files import can_export_bvh

__all__ = ["WindowActions", "versions_text"]

#: File > Export: (action name, files.EXPORT_KINDS kind, menu label, tooltip), in menu order.
EXPORT_ACTIONS = (
    ("euler", "anim-euler", "Export .anim (&Euler)…", "Write every rotation as Euler curves (m_EulerCurves)"),
    (
        "quat",
        "anim-quaternion",
        "Export .anim (&Quaternion)…",
        "Write every rotation as quaternion curves (m_RotationCurves)",
    ),
    (
        "played",
        "anim-played",
        "Export .anim (&played curves only)…",
        "Write only the curves Unity plays, each track in its own kind and rotation order, without the "
        "Animation window's editor curves (a third of the size; the Animation window cannot edit it)",
    ),
    ("csv", "csv", "Export &CSV…", "Write CSV"),
    (
        "bvh",
        "bvh",
        "Export &BVH…",
        "Write the clip back as BVH motion capture (clips read from a .bvh: same skeleton and channels)",
    ),
    (
        "gltf",
        "gltf",
        "Export g&lTF…",
        "Write glTF 2.0 (.glb or .gltf): node rotation animation, checked as a glTF viewer plays it",
    ),
)


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


def _sc(action: QAction, seq, tip: str | None = None) -> QAction:
    """Set a shortcut and show it in the tooltip and status tip."""
    if seq is not None:
        action.setShortcut(QKeySequence(seq))
    text = action.text().replace("&", "")
    sc = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{text} ({sc})" if sc else text)
    action.setStatusTip(tip or text)
    return action


class WindowActions:
    """Actions, menus and dialogs of the main window (mixin of ``MainWindow``)."""

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
        self.act_open = self._act(
            "&Open…", self.open_dialog, S.Open, "Open an .anim, .bvh, .csv, .fbx, .gltf or .glb clip"
        )
        self.act_open_report = self._act(
            "Open &batch report…",
            self.open_batch_report,
            None,
            "Open a batch's JSON report (curveeditor-cli batch --report) and open its clips from it",
        )
        self.act_save = self._act("&Save", self.files.save, S.Save, "Save back to the .anim (minimal diff)")
        self.act_save_as = self._act("Save &As…", self.files.save_as, "Ctrl+Shift+S", "Save to a new .anim")
        # File > Export: one action per export kind (files.EXPORT_KINDS), named act_exp_<name>.
        for name, kind, label, tip in EXPORT_ACTIONS:
            setattr(
                self, f"act_exp_{name}", self._act(label, partial(self.files.export_dialog, kind), None, tip)
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
        self.act_whole_keys = self._act(
            "Select &whole keys (X, Y, Z)",
            lambda on: self._set_view("whole_keys", on),
            None,
            "A click or box in the graphs selects a key on X, Y and Z together (off: per curve)",
            checkable=True,
            checked=self.doc.whole_keys,
        )
        self.act_isolate = self._act(
            "&Isolate selected curves",
            lambda _on=False: self._isolate(),
            "Shift+H",
            "Draw only the curves holding selected keys (again: every curve)",
            checkable=True,
        )
        self.act_show_all_curves = self._act(
            "Show all &curves", lambda: self.graphs.solo.set(None), "Alt+H", "End Isolate / Solo"
        )
        self.act_solo_curve = self._act(
            "&Solo this curve", lambda: self._solo_menu_curve(), None, "Draw only the curve under the mouse"
        )
        self.act_select_hierarchy = self._act(
            "Select &hierarchy",
            lambda: self.tracks.select_hierarchy(),
            "Ctrl+Shift+H",
            "Select the current bone's track and every track below it (its children)",
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
        self.act_shortcuts = self._act(
            "&Keyboard shortcuts…", self.show_shortcuts, "F1", "List and change the keyboard shortcuts"
        )
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
        m.addAction(self.act_open_report)
        m.addSeparator()
        m.addAction(self.act_save)
        m.addAction(self.act_save_as)
        exp = m.addMenu("&Export")
        for a in (
            *(getattr(self, f"act_exp_{name}") for name, *_ in EXPORT_ACTIONS),
            self.act_exp_graph,
        ):
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
            self.act_whole_keys,
            self.act_isolate,
            self.act_show_all_curves,
            self.act_select_hierarchy,
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

    def _update_export_actions(self) -> None:
        self.act_exp_bvh.setEnabled(can_export_bvh(self.doc.clip))

    def _update_actions(self) -> None:
        has_keys = any(self.doc.selected_keys.values()) or any(self.doc.selected_float_keys.values())
        for a in (self.act_copy, self.act_delete, *self.tangent_actions):
            a.setEnabled(has_keys)
        for acts in self.side_actions.values():
            for a in acts:
                a.setEnabled(has_keys)

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
        m.addSeparator()
        m.addAction(self.act_whole_keys)
        curve = self.graphs.input.menu_curve
        if curve is not None:
            self.act_solo_curve.setText(f"&Solo {('X', 'Y', 'Z')[curve[1]]} of {curve[0].rsplit('/', 1)[-1]}")
            m.addAction(self.act_solo_curve)
        m.addAction(self.act_isolate)
        m.addAction(self.act_show_all_curves)
        m.exec(global_pos)

    def _isolate(self) -> None:
        if not self.graphs.solo.isolate_selected():
            self.statusBar().showMessage("Select keys first: Isolate draws the curves holding them", 3000)
        self._mark_solo()

    def _mark_solo(self) -> None:
        """The Isolate action shows whether curves are isolated / soloed (without toggling it)."""
        a = self.act_isolate
        a.blockSignals(True)
        a.setChecked(self.graphs.solo.curves is not None)
        a.blockSignals(False)

    def _solo_menu_curve(self) -> None:
        curve = self.graphs.input.menu_curve
        if curve is not None:
            self.graphs.solo.set({curve})

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            "About curveeditor",
            "<b>curveeditor</b> — a rotation-curve editor for Unity .anim, BVH and CSV clips.<br>"
            "Find flips, wraps and gimbal lock, fix them without changing the pose, and prove it in degrees."
            f"<pre>{versions_text()}</pre>",
        )

    def show_shortcuts(self) -> None:
        """Help > Keyboard shortcuts: the keymap's list, editable (``window/shortcuts.py``)."""
        from .shortcuts import ShortcutsDialog

        if getattr(self, "shortcuts_dialog", None) is None:
            self.shortcuts_dialog = ShortcutsDialog(self, self.keymap)
        self.shortcuts_dialog.refresh()
        self.shortcuts_dialog.show()
        self.shortcuts_dialog.raise_()
