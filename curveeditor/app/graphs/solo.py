"""Isolate / Solo: which Euler curves the graphs draw (issue 22 "Per-curve work").

:class:`CurveSolo` holds the set of ``(path, channel)`` curves drawn while isolating (Maya's isolate
curve display: the curves holding selected keys) or soloing (one curve, one track's three), or
``None`` for every curve. The panel's drawers, hit tests and extrapolation layer ask
``GraphPanel.curve_shown``; keys selected on a curve this hides are deselected (an edit acts only on
keys one can see).
"""

from __future__ import annotations

__all__ = ["CurveSolo"]


class CurveSolo:
    """The drawn-curve filter of a :class:`~.panel.GraphPanel` (module docstring)."""

    def __init__(self, panel):
        self.panel = panel
        self.curves: frozenset[tuple[str, int]] | None = None

    def shown(self, path: str, ch: int) -> bool:
        return self.curves is None or (path, ch) in self.curves

    def set(self, curves) -> None:
        """Draw only ``curves`` (empty / None: every curve); the panel redraws and says so
        (``soloChanged``) when that changed anything."""
        curves = frozenset((p, int(c)) for p, c in curves) if curves else None
        if curves == self.curves:
            return
        self.curves = curves
        doc = self.panel.doc
        if curves is not None:
            keep = {k: v for k, v in doc.key_selection.items() if k in curves}
            if keep != doc.key_selection:
                doc.select_keys(keep)
        self.panel.rebuild(frame=False)
        self.panel.soloChanged.emit()

    def isolate_selected(self) -> bool:
        """Toggle Isolate (Maya's isolate curve display): only the drawn curves holding selected
        keys, or every curve again. False when no key is selected to isolate."""
        if self.curves is not None:
            self.set(None)
            return True
        drawn = set(self.panel.drawn_paths())
        curves = {k for k, v in self.panel.doc.key_selection.items() if v and k[0] in drawn}
        if not curves:
            return False
        self.set(curves)
        return True

    def prune(self, drawn) -> bool:
        """Keep only the curves of tracks still drawn (after a selection change); True if changed."""
        if self.curves is None:
            return False
        kept = frozenset(k for k in self.curves if k[0] in set(drawn))
        if kept == self.curves:
            return False
        self.curves = kept or None
        return True
