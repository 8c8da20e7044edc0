"""Overlay layers on the curve graphs: extrapolation past the curve ends and the playback range.

A :class:`CurveLayer` owns a few items in a :class:`~curveeditor.app.graphs.panel.GraphPanel`'s Euler plots
and re-adds them after every ``GraphPanel.rebuild`` (its ``rebuilt`` signal), after edits and, when it
asks for it, after pans and zooms (coalesced to one redraw per event-loop turn). Layers never change
what the panel draws itself; all values come from the engine.

* :class:`InfinityLayer`: each drawn track past its first and last key as Unity plays it there, by its
  pre/post infinity mode (Constant, Loop, PingPong; ``engine.curves.evaluate`` wraps the time), dashed,
  in the panel's display units (the track's Normalize map in the Normalize view).
* :class:`PlaybackRangeLayer`: the playback in/out range as a shaded band in every plot.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor

from curveeditor.engine import display
from curveeditor.engine.clip import EULER
from curveeditor.engine.curves import WRAP_PINGPONG, WRAP_REPEAT

from .items import BoldCurve
from .sampling import same_map

__all__ = ["CurveLayer", "InfinityLayer", "PlaybackRangeLayer", "EXTRAPOLATION_SAMPLES"]

#: Samples drawn on each side past a curve's ends (per channel).
EXTRAPOLATION_SAMPLES = 600


class CurveLayer(QObject):
    """Base: items per plot, removed and re-created by :meth:`draw` (subclasses fill ``self.items``)."""

    follow_view = False  # redraw after pans/zooms

    def __init__(self, panel, parent: QObject | None = None):
        super().__init__(parent or panel)
        self.panel = panel
        self.doc = panel.doc
        self.items: list[tuple[pg.PlotItem, object]] = []
        self.redraws = 0  # tests
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.redraw)
        panel.rebuilt.connect(self.redraw)
        self.doc.clipChanged.connect(self.schedule)
        self._watched: list = []
        self._watch_plots()

    def _watch_plots(self) -> None:
        if not self.follow_view:
            return
        for p in self.panel.plots:
            vb = p.getViewBox()
            if vb not in self._watched:
                vb.sigXRangeChanged.connect(self.view_changed)
                self._watched.append(vb)

    def view_changed(self, _vb=None, x_range=None) -> None:
        """A plot's X range changed (every plot, every zoom / pan step): redraw unless
        :meth:`idle_for` says the redraw would draw what is drawn."""
        if x_range is not None and self.idle_for(*x_range):
            return
        self.schedule()

    def idle_for(self, x0: float, x1: float) -> bool:
        """True when a redraw for the view ``[x0, x1]`` would change nothing (subclasses say)."""
        return False

    #: during a live edit (a drag) the layer redraws at most this often (ms); at once otherwise
    live_interval_ms = 250

    def schedule(self, *_args) -> None:
        want = self.live_interval_ms if self.doc.in_live_edit() else 0
        if self._timer.isActive() and (want or self._timer.interval() == 0):
            return  # already due (a pending throttled redraw is brought forward when the drag ends)
        self._timer.setInterval(want)
        self._timer.start()

    def clear(self) -> None:
        for plot, item in self.items:
            if item.scene() is not None:
                plot.removeItem(item)
        self.items = []

    def redraw(self) -> None:
        self._timer.stop()
        self._timer.setInterval(0)
        self._watch_plots()
        self.clear()
        self.draw()
        self.redraws += 1

    def add(self, plot: pg.PlotItem, item) -> None:
        plot.addItem(item, ignoreBounds=True)
        self.items.append((plot, item))

    def draw(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _channels(plot) -> range | list[int]:
    ch = plot.getViewBox().role[1]
    return range(3) if ch is None else [ch]


class InfinityLayer(CurveLayer):
    """The drawn tracks past their ends, as their pre/post infinity modes play there (dashed)."""

    follow_view = True

    def extrapolated(self, track, x0: float, x1: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """``[(times, euler (M, 3))]`` for the visible parts before the first and after the last key."""
        out = []
        c = track.curve
        start, end = c.start, c.end
        keys = self.panel.cache.keys(track)[1]  # the drawn key values (display Euler, degrees)
        for lo, hi, anchor, k in ((x0, start, start, 0), (end, x1, end, -1)):
            if hi <= lo or track.n_keys < 2:
                continue
            if (c.pre_infinity if k == 0 else c.post_infinity) not in (WRAP_REPEAT, WRAP_PINGPONG):
                # Constant (Clamp/Default): Unity holds the end key's pose, drawn as its key value;
                # two points instead of sampling 600 (5 ms per track on a 15-track selection)
                out.append((np.array([lo, hi]), np.repeat(keys[k][None], 2, axis=0)))
                continue
            t = np.linspace(lo, hi, EXTRAPOLATION_SAMPLES)
            e = display.sample_track(track, np.append(t, anchor) if k == 0 else np.insert(t, 0, anchor)).euler
            if track.kind != EULER:  # continuous Euler of a quaternion track: meet the drawn key
                ref = e[-1] if k == 0 else e[0]
                e = e + 360.0 * np.round((keys[k] - ref) / 360.0)
            out.append((t, e[:-1] if k == 0 else e[1:]))
        return out

    def __init__(self, panel, parent: QObject | None = None):
        #: (clip, drawn paths, latest first key time, earliest last key time) of the last draw that
        #: drew nothing: views inside those times have no extrapolated part (see idle_for)
        self._idle: tuple | None = None
        super().__init__(panel, parent)
        #: path -> (track, span start, span end, parts): a track is extrapolated again only when it
        #: changed (by identity) or the view left the sampled span (a drag of one track of 31 re-sampled
        #: all 31 on every redraw: 0.36 s per redraw with 10,000 selected keys)
        self._parts: dict[str, tuple] = {}
        self._shown: dict[tuple, tuple] = {}  # (plot id, channel, primary, side) -> (parts, rgba, item, plot)
        self.extrapolations = 0  # tests: tracks (re-)extrapolated

    def _cached_parts(self, track, x0: float, x1: float, stale_ok: bool = False) -> list:
        """The extrapolated parts of ``track`` covering ``[x0, x1]``; ``stale_ok``: an older
        version of the track's parts will do (secondary tracks mid-drag; the drag's end redraws)."""
        hit = self._parts.get(track.path)
        w = max(x1 - x0, 1e-9)
        if (
            hit is not None
            and (hit[0] is track or stale_ok)
            and hit[1] <= x0
            and x1 <= hit[2]
            and hit[2] - hit[1] <= 3 * w
        ):
            return hit[3]
        a0, a1 = x0 - 0.5 * w, x1 + 0.5 * w  # pans within half a view reuse the samples
        parts = self.extrapolated(track, a0, a1)
        self._parts[track.path] = (track, a0, a1, parts)
        self.extrapolations += 1
        return parts

    def draw(self) -> None:
        """One dashed item per plot, channel, side and primary/secondary: the parts of every drawn
        track joined with NaN breaks (one item per track, channel and side cost 0.5 ms each to
        create: 90 items, 45 ms, on a 15-track selection). Items are kept and re-filled."""
        if not self.panel.plots:
            return
        x0, x1 = self.panel.plots[0].getViewBox().viewRange()[0]
        drawn = self.panel.drawn_paths()
        for path in set(self._parts) - set(drawn):
            del self._parts[path]
        live = self.doc.in_live_edit()
        groups: dict[tuple, list] = {}
        spans = []  # (first, last key time) of each drawn track
        for n, path in enumerate(drawn):
            try:
                track = self.doc.clip.track(path)
            except KeyError:
                continue
            end = track.curve.end
            spans.append((track.curve.start, end))
            dmap = self.panel.display_map(path)  # the track's Normalize map (None: degrees)
            for t, e in self._cached_parts(track, x0, x1, stale_ok=live and n > 0):
                side = "post" if t[0] >= end else "pre"
                groups.setdefault((n == 0, side), []).append((t, e, path, dmap))
        self._idle = None
        if not groups and spans and len(spans) == len(drawn):
            self._idle = (self.doc.clip, tuple(drawn), max(a for a, _b in spans), min(b for _a, b in spans))
        old, self._shown = self._shown, {}
        for plot in self.panel.euler_plots:
            for ch in _channels(plot):
                for (primary, side), all_parts in groups.items():
                    # curves hidden by Isolate / Solo have no extrapolation either
                    parts = [(t, e, d) for t, e, p, d in all_parts if self.panel.curve_shown(p, ch)]
                    if not parts:
                        continue
                    key = (id(plot), ch, primary, side)
                    c = QColor(self.panel.theme.channels[ch])
                    c.setAlpha(170 if primary else 90)
                    prev = old.get(key)
                    if (
                        prev is not None
                        and prev[1] == c.rgba()
                        and prev[2].scene() is not None
                        and _same_parts(prev[0], parts)
                    ):
                        # a zoom / pan within the cached samples: the same data, no setData (its
                        # repaint came from this 0-ms timer after the view's paint: a second
                        # paint of the whole scene in about half the zoom steps)
                        del old[key]
                        self._shown[key] = prev
                        self.items.append((plot, prev[2]))
                        continue
                    xs, ys = [], []
                    for t, e, dmap in parts:
                        xs += [t, [np.nan]]
                        y = e[:, ch] if dmap is None else (e[:, ch] - dmap[0][ch]) * dmap[1][ch]
                        ys += [y, [np.nan]]
                    x, y = np.concatenate(xs[:-1]), np.concatenate(ys[:-1])
                    prev = old.pop(key, None)
                    if prev is not None and prev[2].scene() is not None:
                        item = prev[2]
                        item.setData(x, y, connect="finite")
                        if prev[1] != c.rgba():
                            item.setPen(pg.mkPen(c, width=1.0, style=Qt.PenStyle.DashLine))
                    else:
                        # BoldCurve (drawn by pyqtgraph for a dashed pen) keeps its data bounds across
                        # zoom / pan steps: a PlotCurveItem recomputes them (nanmin / nanmax, pixelVectors)
                        # after every view change
                        item = BoldCurve(
                            x, y, connect="finite", pen=pg.mkPen(c, width=1.0, style=Qt.PenStyle.DashLine)
                        )
                        item.setZValue(4)
                        plot.addItem(item, ignoreBounds=True)
                    self._shown[key] = (parts, c.rgba(), item, plot)
                    self.items.append((plot, item))
        for _parts, _rgba, item, plot in old.values():
            if item.scene() is not None:
                plot.removeItem(item)

    def clear(self) -> None:
        """Forget the list only: :meth:`draw` re-fills its kept items and removes the unused ones."""
        self.items = []

    def idle_for(self, x0: float, x1: float) -> bool:
        """The last draw drew no extrapolation and the view ``[x0, x1]`` lies inside every drawn
        track's keys (same clip, same tracks): a zoom / pan there draws nothing either (the redraw
        and its timer event were ~0.1 ms of every zoom / pan step on the Gangnam BVH)."""
        idle = self._idle
        return (
            idle is not None
            and idle[0] is self.doc.clip
            and idle[2] <= x0
            and x1 <= idle[3]
            and not self._timer.isActive()
            and idle[1] == tuple(self.panel.drawn_paths())
        )


def _same_parts(a: list, b: list) -> bool:
    """The same extrapolated parts (the same ``(t, e)`` arrays, by identity, drawn with equal
    Normalize maps)."""
    return len(a) == len(b) and all(
        ta is tb and ea is eb and same_map(ma, mb) for (ta, ea, ma), (tb, eb, mb) in zip(a, b, strict=True)
    )


class PlaybackRangeLayer(CurveLayer):
    """The playback range (in/out) as a shaded band in every plot; nothing when no range is set."""

    def __init__(self, panel, playback, parent: QObject | None = None):
        self.playback = playback
        super().__init__(panel, parent)
        playback.rangeChanged.connect(self.schedule)

    def draw(self) -> None:
        r = self.playback.play_range
        if r is None:
            return
        c = QColor(self.panel.theme.highlight)
        c.setAlpha(28)
        for plot in self.panel.plots:
            band = pg.LinearRegionItem(values=r, movable=False, brush=c, pen=pg.mkPen(c.darker(130), width=1))
            band.setZValue(-10)
            self.add(plot, band)
