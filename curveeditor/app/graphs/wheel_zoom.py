"""Wheel turns over a plot go straight to its view box.

``QGraphicsView.wheelEvent`` hands a wheel turn to the scene, which looks up every item under the
mouse (``itemsAtPosition``: each candidate's Python ``boundingRect``) and offers the turn to them top
down until one accepts; over a plot that is always its view box (no curve, marker, grid, cursor or
label item takes wheel turns), and the look-up was ~0.45 ms of each ~2 ms zoom step on the Gangnam
BVH. :class:`WheelZoom` finds the view box by its scene rectangle and sends it the same scene wheel
event Qt builds (same scene position, delta, orientation, buttons, modifiers; no widget: PySide
cannot set it and the view box does not read it); turns anywhere else
(the axes zoom one axis, ``AxisItem.wheelEvent``) take Qt's path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QGraphicsSceneWheelEvent

__all__ = ["WheelZoom"]


class WheelZoom(QObject):
    """Event filter on ``view``'s viewport delivering wheel turns over one of ``boxes()`` to it."""

    def __init__(self, view: pg.GraphicsView, boxes: Callable[[], Iterable[pg.ViewBox]]):
        super().__init__(view)
        self.view = view
        self.boxes = boxes
        self.delivered = 0  # wheel turns sent straight to a view box (tests)
        view.viewport().installEventFilter(self)

    def eventFilter(self, obj, ev):  # noqa: N802 - Qt API
        if ev.type() != QEvent.Type.Wheel or obj is not self.view.viewport():
            return False
        scene = self.view.scene()
        if scene is None or not self.view.isInteractive():
            return False
        scene_pos = self.view.mapToScene(ev.position().toPoint())  # as QGraphicsView does
        box = next(
            (b for b in self.boxes() if b.isVisible() and b.sceneBoundingRect().contains(scene_pos)),
            None,
        )
        if box is None:
            return False
        d = ev.angleDelta()
        horizontal = abs(d.x()) > abs(d.y())
        sev = QGraphicsSceneWheelEvent(QEvent.Type.GraphicsSceneWheel)
        sev.setScenePos(scene_pos)
        sev.setPos(box.mapFromScene(scene_pos))
        sev.setScreenPos(ev.globalPosition().toPoint())
        sev.setButtons(ev.buttons())
        sev.setModifiers(ev.modifiers())
        sev.setDelta(d.x() if horizontal else d.y())
        sev.setPixelDelta(ev.pixelDelta())
        sev.setPhase(ev.phase())
        sev.setInverted(ev.inverted())
        sev.setOrientation(Qt.Orientation.Horizontal if horizontal else Qt.Orientation.Vertical)
        sev.setTimestamp(ev.timestamp())
        sev.setAccepted(False)
        scene.sendEvent(box, sev)
        if not sev.isAccepted():
            return False  # (mouse zoom off): Qt's own path, as before
        ev.accept()
        self.delivered += 1
        return True
