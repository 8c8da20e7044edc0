"""The PySide6 + pyqtgraph editor (see ``main_window.MainWindow``; entry point ``main.main``)."""
