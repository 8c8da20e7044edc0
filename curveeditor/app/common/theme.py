"""Dark and light themes that follow the system colour scheme, for Qt widgets and pyqtgraph.

:class:`ThemeManager` picks the scheme (setting ``"system"`` follows
``QStyleHints.colorScheme()`` and its change signal), applies a Fusion palette to the application and
emits ``changed(Theme)`` so plots restyle themselves. Colours for curves follow Unity's convention:
X red, Y green, Z blue (W grey for quaternions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

__all__ = ["Theme", "ThemeManager", "LIGHT", "DARK", "PROBLEM_KINDS"]

#: Problem kinds in display order (engine.analysis.Problem.kind values).
PROBLEM_KINDS = ("wrap", "flip", "hemisphere", "gimbal", "spike", "pop")


@dataclass(frozen=True)
class Theme:
    name: str
    dark: bool
    window: str
    base: str
    text: str
    plot_bg: str
    plot_fg: str
    grid_alpha: float
    channels: tuple[str, str, str, str]  # x, y, z, w
    speed: str
    key: str
    key_selected: str
    handle: str
    cursor: str
    gimbal_band: str  # with alpha, "#AARRGGBB" (Qt's 8-digit order)
    original: str  # ghost (as loaded)
    problems: dict[str, str] = field(default_factory=dict)
    highlight: str = "#2f6fd0"
    key_selected_outline: str = "#000000"

    def qcolor(self, name_or_hex: str) -> QColor:
        return QColor(getattr(self, name_or_hex, name_or_hex))

    def channel(self, i: int) -> str:
        return self.channels[i]


_PROBLEMS_DARK = {
    "wrap": "#ff9f1c",
    "flip": "#ff4d6d",
    "hemisphere": "#c77dff",
    "gimbal": "#ffd60a",
    "spike": "#f72585",
    "pop": "#00c2e0",
}
_PROBLEMS_LIGHT = {
    "wrap": "#d46a00",
    "flip": "#d00030",
    "hemisphere": "#7b2cbf",
    "gimbal": "#b08900",
    "spike": "#c9184a",
    "pop": "#0077b6",
}

DARK = Theme(
    name="dark",
    dark=True,
    window="#2b2d31",
    base="#1e1f22",
    text="#dfe1e5",
    plot_bg="#1b1c1f",
    plot_fg="#b9bcc2",
    grid_alpha=0.18,
    channels=("#ff5c5c", "#5ddc6a", "#5c9dff", "#c0c0c0"),
    speed="#ffb347",
    key="#e6e6e6",  # unselected keys: a ring of this around the plot background
    key_selected="#ffc400",  # selected keys: solid, larger
    handle="#e0e0e0",
    cursor="#ffffff",
    gimbal_band="#30ffd60a",  # Qt reads 8-digit hex as #AARRGGBB
    original="#8a8d93",
    problems=_PROBLEMS_DARK,
    highlight="#3d7be0",
)

LIGHT = Theme(
    name="light",
    dark=False,
    window="#f3f3f3",
    base="#ffffff",
    text="#1d1d1f",
    plot_bg="#ffffff",
    plot_fg="#3a3a3c",
    grid_alpha=0.25,
    channels=("#d62828", "#2a9d3a", "#1f5fd0", "#555555"),
    speed="#d17a00",
    key="#1a1a1a",
    key_selected="#e06a00",  # 3.3:1 on white (non-text contrast >= 3)
    handle="#404040",
    cursor="#000000",
    gimbal_band="#38e0a800",  # #AARRGGBB
    original="#9a9a9a",
    problems=_PROBLEMS_LIGHT,
    highlight="#2f6fd0",
)


def _palette(t: Theme) -> QPalette:
    p = QPalette()
    win, base, text = QColor(t.window), QColor(t.base), QColor(t.text)
    p.setColor(QPalette.ColorRole.Window, win)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, win.darker(108) if t.dark else win)
    p.setColor(QPalette.ColorRole.ToolTipBase, base)
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor("#7f8388"))
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, win)
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.BrightText, QColor("#ff5555"))
    p.setColor(QPalette.ColorRole.Highlight, QColor(t.highlight))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    p.setColor(QPalette.ColorRole.Link, QColor(t.highlight))
    p.setColor(QPalette.ColorRole.Mid, win.darker(130) if not t.dark else win.lighter(130))
    p.setColor(QPalette.ColorRole.Light, win.lighter(150))
    p.setColor(QPalette.ColorRole.Dark, win.darker(150))
    disabled = QColor("#7f8388")
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return p


class ThemeManager(QObject):
    """Chooses and applies the theme; ``changed`` fires with the new :class:`Theme`."""

    changed = Signal(object)

    def __init__(self, preference: str = "system", parent: QObject | None = None):
        super().__init__(parent)
        self.preference = preference
        self.theme: Theme = self._resolve()
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_system_changed)

    @staticmethod
    def system_is_dark() -> bool:
        hints = QGuiApplication.styleHints()
        scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else Qt.ColorScheme.Unknown
        if scheme == Qt.ColorScheme.Dark:
            return True
        if scheme == Qt.ColorScheme.Light:
            return False
        # Unknown (e.g. a bare X server): judge by the default palette's window colour.
        app = QApplication.instance()
        if app is None:
            return False
        return QApplication.style().standardPalette().color(QPalette.ColorRole.Window).lightness() < 128

    def _resolve(self) -> Theme:
        if self.preference == "dark":
            return DARK
        if self.preference == "light":
            return LIGHT
        return DARK if self.system_is_dark() else LIGHT

    def set_preference(self, preference: str) -> None:
        self.preference = preference
        self.apply()

    def _on_system_changed(self, *_):
        if self.preference == "system":
            self.apply()

    def apply(self) -> Theme:
        """Apply the resolved theme to the application and pyqtgraph; returns it."""
        self.theme = self._resolve()
        app = QApplication.instance()
        if app is not None:
            app.setStyle("Fusion")
            app.setPalette(_palette(self.theme))
        pg.setConfigOptions(background=self.theme.plot_bg, foreground=self.theme.plot_fg, antialias=False)
        self.changed.emit(self.theme)
        return self.theme
