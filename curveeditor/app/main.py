"""Entry point: ``curveeditor [FILE]`` / ``python -m curveeditor [FILE]``.

``Qt.AA_ShareOpenGLContexts`` is set before the QApplication exists: pyqtgraph's GL views share
shader programs, which breaks from the second GL widget on without it.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["main", "parse_args"]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="curveeditor", description="Rotation-curve editor for .anim, .bvh and .csv clips"
    )
    p.add_argument("file", nargs="?", help="clip to open (default: the bundled sample)")
    p.add_argument("--theme", choices=("system", "light", "dark"), help="override the colour theme")
    p.add_argument("--quit-after-paint", action="store_true", help=argparse.SUPPRESS)  # start-up benchmark
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from PySide6.QtCore import QCoreApplication, Qt, QTimer

    QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setOrganizationName("curveeditor")
    app.setApplicationName("curveeditor")
    app.setApplicationDisplayName("curveeditor")

    from .window.main_window import MainWindow

    win = MainWindow()
    if args.theme:
        win.set_theme(args.theme)
    if args.quit_after_paint:
        from PySide6.QtCore import QEvent, QObject

        class _FirstPaint(QObject):
            def eventFilter(self, obj, ev):  # noqa: N802
                if ev.type() == QEvent.Type.Paint:
                    obj.removeEventFilter(self)
                    print("painted", flush=True)
                    QTimer.singleShot(0, app.quit)
                return False

        spy = _FirstPaint(win)
        win.installEventFilter(spy)
        win.show()
        return app.exec()
    win.show()
    QTimer.singleShot(0, lambda: win.open_initial(args.file))
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
