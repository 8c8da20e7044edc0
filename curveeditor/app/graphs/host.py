"""What the graph panel offers the parts that draw and handle its strips (the cycle breaker).

:class:`~.panel.GraphPanel` owns the strips and decides when to redraw; :class:`~.track_drawer.TrackDrawer`
and :class:`~.marks.Marks` draw, :class:`~.input.GraphInput` handles input. They need a few of the
panel's attributes and display-unit conversions, listed here as a :class:`typing.Protocol` so they
depend on this small module and never on the panel itself (which imports them all).
Units: times in seconds, Euler values in degrees (the display units differ only under Normalize).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..common.theme import Theme
from ..model.document import ClipDocument
from ..model.problems import ProblemIndex
from .sampling import SampleCache

__all__ = ["GraphHost"]


class GraphHost(Protocol):
    """The panel as its drawers and its input handler see it (implemented by ``GraphPanel``)."""

    doc: ClipDocument
    theme: Theme
    problems: ProblemIndex
    cache: SampleCache
    #: Overlay mode (all channels in one plot), Normalize (each curve scaled to [-1, 1]), the ghost.
    overlay: bool
    normalize: bool
    show_original: bool
    #: path -> (X, Y, Z) colours of the drawn tracks.
    hues: dict[str, tuple[str, str, str]]
    #: The panel's strips (``strips.Strip``), its drawers and the tangent-handle hit points.
    strips: list[Any]
    marks: Any
    #: float-curve key editing in the value strip (``float_edit.FloatEditing``)
    floats: Any
    handle_points: list
    statusMessage: Any  # noqa: N815  (Signal(str))
    contextMenuRequested: Any  # noqa: N815  (Signal(QPoint))

    @property
    def euler_plots(self) -> list[Any]: ...

    def strip_of(self, role_kind: str) -> Any: ...

    def drawn_paths(self) -> list[str]: ...

    def primary(self) -> str | None: ...

    def time_text(self, t: float) -> str: ...

    def value_factor(self, path: str, ch: int) -> float: ...

    def to_display(self, path: str, values: np.ndarray, ch: int | None = None) -> np.ndarray: ...

    def from_display(self, path: str, ch: int, y: float) -> float: ...

    def display_map(self, path: str) -> tuple[np.ndarray, np.ndarray] | None: ...

    def display_keys(self, path: str) -> tuple[np.ndarray, np.ndarray]: ...

    def colours(self, path: str) -> tuple[str, str, str]: ...

    @property
    def items(self) -> dict[str, Any]: ...

    def curve_shown(self, path: str, ch: int) -> bool: ...
