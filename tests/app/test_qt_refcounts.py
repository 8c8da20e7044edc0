"""Guard against Qt bindings that drop references to Python singletons.

PySide6 6.12.0 lowered ``sys.getrefcount(True)`` by one per ``Signal.emit()`` and ``None``'s by one per
``setZValue``/``update`` on a Python ``QGraphicsObject``; on CPython < 3.12 the editor then aborted with
"bool_dealloc" after a minute of playback. ``pyproject.toml`` excludes that release; this test fails on
any binding with the same bug.
"""

import sys

from PySide6.QtCore import QObject, QRectF, Signal
from PySide6.QtWidgets import QGraphicsObject, QGraphicsScene


class _Emitter(QObject):
    plain = Signal()
    flag = Signal(bool)


class _Item(QGraphicsObject):
    def boundingRect(self):
        return QRectF(0, 0, 1, 1)

    def paint(self, painter, option, widget=None):
        pass


def test_signal_emit_keeps_singleton_refcounts(qapp):
    o = _Emitter()
    o.plain.connect(lambda: None)
    o.flag.connect(lambda v: None)
    before = sys.getrefcount(True), sys.getrefcount(None)
    for _ in range(200):
        o.plain.emit()
        o.flag.emit(True)
    after = sys.getrefcount(True), sys.getrefcount(None)
    # Other threads may hold a few references for a moment; the bug loses one per call (400 here).
    assert before[0] - after[0] < 50 and before[1] - after[1] < 50, (before, after)


def test_graphics_item_calls_keep_none_refcount(qapp):
    scene = QGraphicsScene()
    item = _Item()
    scene.addItem(item)
    before = sys.getrefcount(None)
    for i in range(200):
        item.setZValue(i)
        item.update()
    after = sys.getrefcount(None)
    assert before - after < 50, (before, after)  # the bug loses two per iteration (400 here)
