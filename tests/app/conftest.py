"""GUI test setup: Qt's GL context sharing must be on before any QApplication exists.

pytest-xvfb provides the X server (never the ``offscreen`` platform: GL views need a real display).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt

QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
