"""The PySide6 + pyqtgraph editor (see ``main_window.MainWindow``; entry point ``main.main``).

Importing this package applies :func:`guard_singleton_refcounts`. PySide6 6.12.0 drops references
to Python's singletons that it never took (measured on CPython 3.11.7: 50 ``Signal.emit()`` calls
lower ``sys.getrefcount(True)`` by 50; 50 ``setZValue``/``update`` calls on a Python
``QGraphicsObject`` lower ``sys.getrefcount(None)`` by 50). Before Python 3.12 these objects are
not immortal, so an editor session reaches zero after a few thousand calls (a minute of playback or
a few dozen graph rebuilds) and aborts with "bool_dealloc" / "none_dealloc". Python 3.12+ made them
immortal (2**32-ish refcounts that are never decremented to zero); the guard does the equivalent on
older versions by adding 2**40 references to None, True, False, Ellipsis and NotImplemented, which
are never freed anyway.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["guard_singleton_refcounts"]

_GUARDED = False


def guard_singleton_refcounts() -> bool:
    """Make the singletons effectively immortal on CPython < 3.12; True when applied."""
    global _GUARDED
    if _GUARDED or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _GUARDED
    for obj in (None, True, False, Ellipsis, NotImplemented):
        # ob_refcnt is the first field of every CPython object (3.11 layout, non-debug build).
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
    _GUARDED = True
    return True


guard_singleton_refcounts()
