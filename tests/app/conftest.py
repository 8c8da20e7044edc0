"""GUI test setup.

* Qt's GL context sharing must be on before any QApplication exists (pyqtgraph GL views).
* pytest-xvfb provides the X server: never the ``offscreen`` platform (GL views need a display).
* Settings and autosaves go to a throw-away folder (QSettings INI path, QStandardPaths test mode),
  never to the user's real configuration.
* Importing ``curveeditor.app`` applies its guard against PySide6 6.12's refcount leak on None/True.
"""

from __future__ import annotations

import tempfile

from PySide6.QtCore import QCoreApplication, QSettings, QStandardPaths, Qt

import curveeditor.app  # noqa: F401 - applies guard_singleton_refcounts()

QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
QStandardPaths.setTestModeEnabled(True)
_SETTINGS_DIR = tempfile.mkdtemp(prefix="curveeditor-test-settings-")
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, _SETTINGS_DIR)
