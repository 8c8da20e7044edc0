"""The dope sheet's key ticks as pixels, and the preview of a drag that moves keys in time.

:class:`TickRaster` turns the key times of the visible rows into one pixel line per row with numpy
(no per-key graphics items): the pixel columns of each key-time array are computed once per view and
kept by the array's identity, so tracks sharing their key times (every joint of a BVH, or every track
of a drag's preview) cost one pass, and folded / summary rows OR the columns of their tracks.

:class:`DragPreview` is what a drag of selected keys shows while the mouse moves: each track's key
times after the retime and the moved keys' new times, from :func:`curveeditor.engine.retime.
retime_plan` (times only, one plan per group of tracks sharing times and selection). The document
(and every other view) follows the drag at a throttled rate; the ticks follow every mouse move.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from PySide6.QtGui import QColor, QImage

from curveeditor.engine.clip import Clip
from curveeditor.engine.retime import group_selection, retime_plan

__all__ = ["DragPreview", "TickRaster"]


class DragPreview:
    """The key times a retime of ``sel`` (path -> key indices) of ``clip`` would give, for painting.

    ``times[path] = (key times (M,), moved keys' times (K,))`` in seconds, after :meth:`show`; the
    arrays are shared by the tracks of a group (same objects), which :class:`TickRaster` caches on.
    """

    def __init__(self, clip: Clip, sel: Mapping[str, set[int]]):
        self.clip = clip
        self.sel = sel
        self.groups = group_selection(clip, sel)
        self.args: tuple[float, float, float] | None = None  # (offset s, scale, pivot s) shown
        self.identity = True  # the preview shown is the clip's own key times: no edit
        self.times: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def show(self, offset: float = 0.0, scale: float = 1.0, pivot: float = 0.0) -> None:
        """Preview the time map ``pivot + scale (t - pivot) + offset`` snapped to frames. ``ValueError``
        (naming a track) when keys would land on each other or move before 0 s; the previous preview
        stays."""
        out = {}
        identity = True
        for g in self.groups:
            try:
                order, new_t = retime_plan(g, offset, scale, pivot, self.clip.frame_rate)
            except ValueError as e:
                raise ValueError(f"track {g.paths[0]!r}: {e}") from None
            moved = new_t[g.sel[order]]
            # within float rounding of the snap (0.30000000000000004 s is frame 9 at 30 fps too)
            identity = (
                identity and new_t.shape == g.times.shape and bool(np.allclose(new_t, g.times, 0, 1e-9))
            )
            for p in g.paths:
                out[p] = (new_t, moved)
        self.times = out
        self.args = (offset, scale, pivot)
        self.identity = identity


def _argb(c: QColor) -> int:
    return 0xFF000000 | (c.red() << 16) | (c.green() << 8) | c.blue()


class TickRaster:
    """Rasterises key ticks into an ``(rows, width)`` ARGB image (image row ``k`` = the ``k``-th row
    given), transparent between ticks, selected ticks on top; the caller stretches each pixel line
    over its row's tick band."""

    def __init__(self) -> None:
        self._view: tuple | None = None
        self._cols: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._img: np.ndarray | None = None  # kept alive while the QImage uses it

    def columns(self, times: np.ndarray) -> np.ndarray:
        """``(w,)`` bool: the pixel columns of ``times`` (seconds) in the current view, one pixel each,
        cached by the array's identity for this paint and the next."""
        hit = self._used.get(id(times))
        if hit is None:
            hit = self._cols.get(id(times))
        if hit is not None and hit[0] is times:
            self._used[id(times)] = hit
            return hit[1]
        v0, ppx, w = self._view
        x = ((np.asarray(times) - v0) * ppx + 0.5).astype(np.int64)
        m = np.zeros(w, dtype=bool)
        m[x[(x >= 0) & (x < w)]] = True
        self._used[id(times)] = (times, m)
        return m

    def image(
        self,
        rows: list[tuple[tuple[str, ...], bool]],
        times_of: Callable[[str], np.ndarray],
        selected_of: Mapping[str, np.ndarray],
        view: tuple[float, float, int],
        half: int,
        colors: tuple[QColor, QColor, QColor],
    ) -> QImage:
        """The ticks of ``rows`` (each ``(paths, summary)``: a row summarising several tracks is drawn
        in the summary colour) for ``view = (first visible second, pixels per second, width px)``.
        ``times_of(path)`` gives a track's key times, ``selected_of[path]`` its selected keys' times;
        ticks are ``2 half - 1`` pixels wide (selected ones at least 3); ``colors`` = (own keys,
        summary, selected)."""
        if view != self._view:
            self._view = view
            self._cols = {}
        self._used: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        w = view[2]
        n = len(rows)
        ticks = np.zeros((n, w), dtype=bool)
        sel = np.zeros((n, w), dtype=bool)
        summary = np.zeros(n, dtype=bool)
        for k, (paths, is_summary) in enumerate(rows):
            summary[k] = is_summary
            for p in paths:
                ticks[k] |= self.columns(times_of(p))
                st = selected_of.get(p)
                if st is not None:
                    sel[k] |= self.columns(st)
        self._cols = self._used  # drop the columns of arrays no longer painted

        def widen(m: np.ndarray, half: int) -> np.ndarray:  # tick width: shifted ORs of every row at once
            out = m.copy()
            for d in range(1, half):
                out[:, d:] |= m[:, :-d]
                out[:, :-d] |= m[:, d:]
            return out

        lut = np.array([0, *(_argb(c) for c in colors)], dtype=np.uint32)
        cls = widen(ticks, half).astype(np.uint8) * np.where(summary, 2, 1).astype(np.uint8)[:, None]
        cls[widen(sel, max(half, 2))] = 3  # selected ticks at least 3 px wide: seen on dense keys
        self._img = np.ascontiguousarray(lut[cls])
        return QImage(self._img.data, w, n, 4 * w, QImage.Format.Format_ARGB32_Premultiplied)
