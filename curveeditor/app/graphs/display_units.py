"""The graphs' display units: degrees, or the Normalize view's map of each track onto [-1, 1].

:class:`DisplayUnits` is the one map per track and channel for everything drawn of a track (its
curve, its keys, its ghost -- the track as loaded --, its extrapolation past the ends, its buffer
curve), computed over the curve and the ghost so both fill [-1, 1] and stay comparable (issue 20:
the ghost set the range and crushed the normalized curve; the infinity curves were drawn in degrees).
The map is ``(v - centre) * factor`` (:func:`~.sampling.normalize_scale`).
"""

from __future__ import annotations

import numpy as np

from curveeditor.engine.clip import RotationTrack

from .sampling import normalize_scale

__all__ = ["DisplayUnits"]


class DisplayUnits:
    """Degrees <-> what a :class:`~.panel.GraphPanel` draws (its ``normalize`` flag decides)."""

    def __init__(self, panel):
        self.panel = panel
        self._maps: dict[int, tuple] = {}  # id(track) -> (track, centre, factor, ghost)

    def ghost_of(self, path: str) -> RotationTrack | None:
        """The track as loaded, drawn dotted behind the current one (the primary track, while
        View > Show original is on and the track was edited); None when no ghost is drawn."""
        p = self.panel
        if not p.show_original or path != p.primary():
            return None
        try:
            orig, tr = p.doc.original.track(path), p.doc.clip.track(path)
        except KeyError:
            return None
        return orig if orig is not tr else None

    def normalize_map(self, path: str) -> tuple[np.ndarray, np.ndarray]:
        """``(centre (3,), factor (3,))`` of the Normalize view for the current track at ``path``,
        over its curve, its keys and its ghost (module docstring)."""
        tr = self.panel.doc.clip.track(path)
        ghost = self.ghost_of(path)
        hit = self._maps.get(id(tr))
        if hit is not None and hit[0] is tr and hit[3] is ghost:
            return hit[1], hit[2]
        parts = []
        for track in (tr, ghost):
            if track is not None:
                s = self.panel.cache.get(track, coarse=True)
                parts += [s.samples.euler, s.key_values] if s.key_values.size else [s.samples.euler]
        c, f = normalize_scale(np.concatenate(parts))
        if len(self._maps) > 512:
            self._maps.clear()
        self._maps[id(tr)] = (tr, c, f, ghost)
        return c, f

    def display_map(self, path: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The Normalize map of ``path``; None when the panel shows degrees."""
        return self.normalize_map(path) if self.panel.normalize else None

    def value_factor(self, path: str, ch: int) -> float:
        """Display units per degree of channel ``ch`` of ``path`` (1 unless normalized)."""
        m = self.display_map(path)
        return 1.0 if m is None else float(m[1][ch])

    def to_display(self, path: str, values: np.ndarray, ch: int | None = None) -> np.ndarray:
        """Euler degrees -> what the plot shows (``values`` (M, 3), or (M,) of channel ``ch``)."""
        m = self.display_map(path)
        if m is None:
            return values
        c, f = m
        return (values - c) * f if ch is None else (values - c[ch]) * f[ch]

    def from_display(self, path: str, ch: int, y: float) -> float:
        m = self.display_map(path)
        return float(y) if m is None else float(y / m[1][ch] + m[0][ch])
