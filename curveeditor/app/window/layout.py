"""The main window's dock layout: docks, default sizes, fitting the screen, Reset layout, Ctrl+Space,
the graphs' half-window guarantee, and the saved layout (versioned; dropped when it does not fit).

A mixin of :class:`~curveeditor.app.window.main_window.MainWindow` (it uses ``self.docks``, ``self.settings``,
``self.timeline``, ``self.status_label``); nothing here draws or edits.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget

__all__ = ["DockLayout", "LAYOUT_VERSION", "DEFAULT_SIZE"]

#: Saved dock layouts carry this number; a layout saved by another version is dropped (a layout
#: from before versioning could hold a 3D dock squeezing the graphs to ~200 px, forever). 3: the
#: right column (3D view, Recipe) reaches the window's bottom, beside the Keys dock (issue 22).
LAYOUT_VERSION = 3
DEFAULT_SIZE = (1500, 940)
#: Extra default height (px) of the Recipe dock for a selected step's parameters (3-4 rows visible;
#: longer forms scroll), taken from the 3D view above it (its GL view keeps ~180 px at 1500 x 940).
PARAMS_ROOM = 48


class DockLayout:
    """Where the docks go and how big they may be (mixin of ``MainWindow``)."""

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

    def side_widths(self) -> tuple[int, int]:
        """Default widths (px) of the Tracks column and the right column (3D view, Recipe) for the
        window's width: 312 px of tracks when there is room (a 12-level Biped bone name beside the
        whole "Problems" title), 30 % of the window for the 3D view, and the graphs keep half."""
        w = self.width()
        tracks = int(min(312, max(240, 0.2 * w)))
        right = int(min(max(0.3 * w, 340), w // 2 - tracks - 16))  # 16: the dock separators
        return tracks, right

    def _default_dock_sizes(self) -> None:
        tracks, right = self.side_widths()
        self.resizeDocks([self.docks["Tracks"]], [tracks], Qt.Orientation.Horizontal)
        if "3D view" in self.docks:
            self.resizeDocks([self.docks["3D view"]], [right], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["Keys"]], [220], Qt.Orientation.Vertical)
        self._split_right_column()

    def _split_right_column(self) -> None:
        """The Recipe dock gets the height its panel asks for (Apply / Discard in sight, no scroll bar),
        the 3D view the rest. Needs real dock heights: runs again on the first show."""
        if "3D view" not in self.docks or "Recipe" not in self.docks:
            return
        top, recipe = self.docks["3D view"], self.docks["Recipe"]
        area = recipe.widget()
        # + PARAMS_ROOM: the empty panel's hint leaves a selected step's form 80 px (2 rows)
        want = area.widget().sizeHint().height() + (recipe.height() - area.viewport().height()) + PARAMS_ROOM
        col = top.height() + recipe.height()
        if self.isVisible() and col > want:
            self.resizeDocks([top, recipe], [col - want, want], Qt.Orientation.Vertical)
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
        QTimer.singleShot(0, self._split_right_column)  # again once the fitted window is laid out
        self.statusBar().showMessage("Layout reset", 3000)

    def toggle_maximize_graphs(self) -> None:
        """Ctrl+Space (as in Blender): hide every dock so the graphs take the window; again restores."""
        if self._maximized_docks is None:
            # the layout as it is, sizes included: shown again, docks got other heights (the Recipe
            # dock came back 80 px short, behind a scroll bar)
            self._unmaximized_state = self.saveState(LAYOUT_VERSION)
            self._maximized_docks = [d for d in self.docks.values() if d.isVisible()]
            for d in self._maximized_docks:
                d.hide()
        else:
            for d in self._maximized_docks:
                d.show()
            self.restoreState(self._unmaximized_state, LAYOUT_VERSION)
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

    def showEvent(self, ev):  # noqa: N802 - Qt API
        super().showEvent(ev)
        if not getattr(self, "_shown_once", False):
            self._shown_once = True
            if not getattr(self, "_layout_restored", False):
                # the default layout's dock sizes hold only now (a hidden window's docks keep their
                # minimum widths) and the window may have been resized since they were set
                QTimer.singleShot(0, self._default_dock_sizes)

    def resizeEvent(self, ev):  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self.limit_dock_widths()
        self.status_label.setMaximumWidth(max(int(self.width() * 0.5), 100))

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
            self._layout_restored = True

    def _drop_saved_layout(self) -> None:
        for k in ("window/geometry", "window/state", "window/layout_version"):
            self.settings.store.remove(k)
