"""Persistent editor settings (QSettings): recent files, theme, layout toggles, autosave.

All keys live under organization ``curveeditor`` / application ``curveeditor`` (INI format, so
tests can redirect them with ``QSettings.setPath``). Window geometry and dock layout are stored as
raw ``QByteArray`` blobs by the main window.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

__all__ = ["Settings", "ORG", "APP", "MAX_RECENT"]

ORG = "curveeditor"
APP = "curveeditor"
MAX_RECENT = 10


def _to_bool(v, default: bool) -> bool:
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    return str(v).lower() in ("1", "true", "yes", "on")


class Settings:
    """Typed accessors over a :class:`QSettings` store."""

    def __init__(self, store: QSettings | None = None):
        self.store = store or QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORG, APP)

    # ------------------------------------------------------------------ recent files
    def recent_files(self) -> list[str]:
        v = self.store.value("files/recent", [])
        if isinstance(v, str):
            v = [v] if v else []
        return [str(p) for p in (v or [])]

    def add_recent(self, path: str) -> list[str]:
        path = os.path.abspath(path)
        files = [p for p in self.recent_files() if p != path]
        files.insert(0, path)
        files = files[:MAX_RECENT]
        self.store.setValue("files/recent", files)
        return files

    def remove_recent(self, path: str) -> list[str]:
        files = [p for p in self.recent_files() if p != path]
        self.store.setValue("files/recent", files)
        return files

    def clear_recent(self) -> None:
        self.store.setValue("files/recent", [])

    def last_dir(self) -> str:
        return str(self.store.value("files/last_dir", "") or "")

    def set_last_dir(self, d: str) -> None:
        self.store.setValue("files/last_dir", d)

    # ------------------------------------------------------------------ generic typed values
    def get_bool(self, key: str, default: bool) -> bool:
        return _to_bool(self.store.value(key), default)

    def get_float(self, key: str, default: float) -> float:
        try:
            return float(self.store.value(key, default))
        except (TypeError, ValueError):
            return default

    def get_str(self, key: str, default: str) -> str:
        v = self.store.value(key, default)
        return default if v is None else str(v)

    def set(self, key: str, value) -> None:
        self.store.setValue(key, value)

    # ------------------------------------------------------------------ keyboard shortcuts
    def shortcut(self, action_id: str) -> str | None:
        """The saved shortcuts of a keymap entry (Qt portable text, ``"; "`` between several, ``""``
        = none), or None when the user kept the default (``window/shortcuts.py``)."""
        v = self.store.value(f"shortcuts/{action_id}")
        if v is None:
            return None
        if isinstance(v, (list, tuple)):  # QSettings reads "a, b" back as a list
            return "; ".join(str(x) for x in v)
        return str(v)

    def set_shortcut(self, action_id: str, text: str | None) -> None:
        """Save a keymap entry's shortcuts (None: back to the default, the key removed)."""
        if text is None:
            self.store.remove(f"shortcuts/{action_id}")
        else:
            self.store.setValue(f"shortcuts/{action_id}", text)

    # ------------------------------------------------------------------ named settings
    @property
    def theme(self) -> str:
        """``"system"`` (follow the OS colour scheme), ``"light"`` or ``"dark"``."""
        v = self.get_str("view/theme", "system")
        return v if v in ("system", "light", "dark") else "system"

    @theme.setter
    def theme(self, v: str) -> None:
        self.set("view/theme", v)

    @property
    def autosave_seconds(self) -> float:
        return max(5.0, self.get_float("files/autosave_seconds", 60.0))

    def sync(self) -> None:
        self.store.sync()
