"""A curve item whose zoom / pan steps re-clip and re-downsample its samples in a few numpy calls.

pyqtgraph's ``PlotDataItem.viewRangeChanged`` runs its whole ``updateItems`` per curve on every view
change: style arguments re-collected and re-applied to the curve (``setPen``, ``setShadowPen``,
``setFillLevel``, ``setBrush`` ...), ``_getDisplayDataset`` (clip to view + peak downsampling), then a
``setData`` whose data bounds the scene asks for again (``nanmin`` / ``nanmax`` under a warnings
filter). Measured on the Gangnam BVH (4 curves, wheel zoom, idle machine): ~0.16 ms per curve per
step, ~0.65 ms of the ~2 ms the wheel event takes. :class:`ViewCurve` computes the same visible slice
and the same downsampling factor (pyqtgraph's arithmetic, its hysteresis included), so it draws the
same points, and

* skips the step when the slice and factor are the ones already shown (a Y-only change, a pan below
  one sample);
* hands the curve only the new arrays (its style did not change); its bounds are kept by the
  curve child itself (``items.SteadyCurve``, one NaN-ignoring reduction per axis after new data).

Anything else pyqtgraph's path handles (symbols, connect arrays, other downsampling methods, the
dynamic range limit actually clipping at extreme Y zoom) goes to pyqtgraph's own path.
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset

__all__ = ["ViewCurve", "visible_span", "peak_downsample"]


def visible_span(x: np.ndarray, left: float, right: float, ds: int, clip: bool) -> tuple[int, int]:
    """``(i0, i1)``: the slice of the increasing ``x`` that pyqtgraph's clip-to-view keeps for the view
    ``[left, right]`` (one downsampled bin of ``ds`` samples past each edge, so the curve reaches the
    plot's edges); the whole array when ``clip`` is off."""
    n = len(x)
    if not clip or n <= 1:
        return 0, n
    i0 = min(max(bisect.bisect_left(x, left) - ds, 0), n)
    i1 = min(max(bisect.bisect_left(x, right) + ds, i0), n)
    return i0, i1


def peak_downsample(x: np.ndarray, y: np.ndarray, ds: int) -> tuple[np.ndarray, np.ndarray]:
    """pyqtgraph's ``downsampleMethod="peak"``: per bin of ``ds`` samples one (max, min) pair at the
    bin's middle sample time, ``(2 * (len(x) // ds),)`` arrays; the inputs themselves when ``ds`` is 1."""
    if ds <= 1:
        return x, y
    n = len(x) // ds
    stx = ds // 2
    x1 = np.empty((n, 2))
    x1[:] = x[stx : stx + n * ds : ds, np.newaxis]
    y1 = np.empty((n, 2))
    _bin_extremes(y[: n * ds], n, ds, y1[:, 0], y1[:, 1])
    return x1.reshape(n * 2), y1.reshape(n * 2)


#: bins up to this many samples take their max / min column by column (see _bin_extremes)
COLUMN_LOOP_DS = 12


def _bin_extremes(y: np.ndarray, n: int, ds: int, out_max: np.ndarray, out_min: np.ndarray) -> None:
    """Max and min of each of the ``n`` bins of ``ds`` consecutive samples of ``y`` (``n * ds``,), into
    the given (strided) outputs: the values of ``y.reshape(n, ds).max(axis=1)`` / ``.min(axis=1)``.

    numpy reduces a short last axis slowly: 4,000 samples in bins of 5 took 157 us per ``max``
    (two per curve per zoom / pan step), the same as ``ds - 1`` element-wise ``maximum`` calls over
    the columns take 12 us; wide bins go through ``reduceat`` (60 samples: 4 us)."""
    if ds <= COLUMN_LOOP_DS:
        cols = y.reshape((n, ds))
        out_max[:] = cols[:, 0]
        out_min[:] = cols[:, 0]
        for j in range(1, ds):
            np.maximum(out_max, cols[:, j], out=out_max)
            np.minimum(out_min, cols[:, j], out=out_min)
        return
    starts = np.arange(0, n * ds, ds)
    out_max[:] = np.maximum.reduceat(y, starts)
    out_min[:] = np.minimum.reduceat(y, starts)


class ViewCurve(pg.PlotDataItem):
    """``PlotDataItem`` with a lean view-change path (see the module docstring); data changes,
    style changes and exports go through pyqtgraph as before."""

    def __init__(self, *args, **kwargs):
        #: (mapped dataset, i0, i1, ds) of the points the curve shows, set by the lean path only;
        #: None = unknown (shown by pyqtgraph's path, which may have clipped Y)
        self._vc_key: tuple | None = None
        self.lean_updates = 0  # view changes that re-set the curve through the lean path (tests)
        self.lean_skips = 0  # view changes that found the same points shown (tests)
        super().__init__(*args, **kwargs)
        if self.opts["symbol"] is None:
            # no symbols: the scatter child draws nothing, yet in the view box it took two view
            # signals per step (its viewTransformChanged a prepareGeometryChange); out of the scene
            # until a symbol is set (updateItems)
            self.scatter.setParentItem(None)

    def updateItems(self, styleUpdate: bool = True):  # noqa: N802,N803 - pyqtgraph API
        if self.opts["symbol"] is not None and self.scatter.parentItem() is None:
            self.scatter.setParentItem(self)
        super().updateItems(styleUpdate)

    def _lean_ok(self) -> bool:
        o = self.opts
        return (
            self._datasetMapped is not None
            and self._datasetDisplay is not None
            and o["symbol"] is None
            and o["pen"] is not None
            and not isinstance(o["connect"], np.ndarray)
            and o["downsampleMethod"] == "peak"
            and o["stepMode"] is None
            and self._exportOpts is False
        )

    def _range_clip_needed(self, view_rect) -> bool:
        """pyqtgraph's dynamic range limit would clip Y here (data taller than ``2 * hyst * limit``
        view heights and overlapping the view)."""
        limit = self.opts["dynamicRangeLimit"]
        if limit is None:
            return False
        data = self._datasetMapped.dataRect()
        if data is None:
            return False
        h = view_rect.height()
        return (
            h > 0
            and not data.bottom() < view_rect.top()
            and not data.top() > view_rect.bottom()
            and data.height() > 2 * self.opts["dynamicRangeHyst"] * limit * h
        )

    def _downsample_factor(self, view, view_rect, x: np.ndarray, x_all_finite) -> int:
        """``PlotDataItem._getDisplayDataset``'s factor: view width in samples per pixel column
        times ``autoDownsampleFactor``, held at the last value when within 1 %."""
        ds = self.opts["downsample"]
        if not isinstance(ds, int):
            ds = 1
        if not self.opts["autoDownsample"]:
            return ds
        fx = x if x_all_finite else x[np.isfinite(x)]
        if len(fx) > 1:
            dx = float(fx[-1] - fx[0]) / (len(fx) - 1)
            if dx != 0.0:
                width = view.width()
                if width != 0.0:
                    f = max(1.0, abs(view_rect.width() / dx / (width * self.opts["autoDownsampleFactor"])))
                    if math.isfinite(f):
                        ds = int(f)
        if math.isclose(ds, self._adsLastValue, rel_tol=0.01):
            ds = self._adsLastValue
        self._adsLastValue = ds
        return ds

    def viewRangeChanged(self, vb=None, ranges=None, changed=None):  # noqa: N802 - pyqtgraph hook
        view = self.getViewBox()
        if view is None or not self._lean_ok():
            self._vc_key = None
            super().viewRangeChanged(vb, ranges, changed)
            return
        view_rect = view.viewRect()
        if self._range_clip_needed(view_rect):
            self._vc_key = None
            super().viewRangeChanged(vb, ranges, changed)
            return
        x_changed = changed is None or changed[0]
        if not x_changed and self._vc_key is not None:
            return  # Y only and not clipped before or now: the same points
        if not (self.opts["clipToView"] or self.opts["autoDownsample"]) and self._vc_key is not None:
            return
        mapped = self._datasetMapped
        x, y = mapped.x, mapped.y
        ds = self._downsample_factor(view, view_rect, x, mapped.xAllFinite)
        clip = self.opts["clipToView"] and not view.autoRangeEnabled()[0]
        i0, i1 = visible_span(x, view_rect.left(), view_rect.right(), ds, clip)
        key = self._vc_key
        if key is not None and key[0] is mapped and key[1:] == (i0, i1, ds):
            self.lean_skips += 1
            return
        xd, yd = peak_downsample(x[i0:i1], y[i0:i1], ds)
        self._datasetDisplay = PlotDataset(xd, yd, mapped.xAllFinite, mapped.yAllFinite, None)
        self.setProperty("xViewRangeWasChanged", False)
        self.setProperty("yViewRangeWasChanged", False)
        self._vc_key = (mapped, i0, i1, ds)
        self.lean_updates += 1
        curve = self.curve
        curve.updateData(x=xd, y=yd)  # the style is the curve's already
        if self.opts["pen"] is not None and not curve.isVisible():
            curve.show()
