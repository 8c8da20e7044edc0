"""A track's pose at one time, sampled once and shared by the views that show it (issue 9).

On every playback frame the timeline readout (Euler triple, quaternion, angular speed) and the 3D
view (tripod rotation, gimbal rings) show the primary track at the current time. Each sampled it on
its own: two ``display.sample_track`` calls and two ``played`` evaluations per frame for the same
pose. :func:`samples_at` samples once per (track object, time) and hands the same
:class:`~curveeditor.engine.display.TrackSamples` to every caller; tracks are immutable and an edit
replaces the tracks it changes, so the track object is the cache key's version.
"""

from __future__ import annotations

import numpy as np

from curveeditor.engine import display
from curveeditor.engine.clip import RotationTrack

__all__ = ["samples_at", "SPEED_DT"]

#: second sample time after ``t`` (seconds) from which the angular speed at ``t`` is taken
SPEED_DT = 1e-3
_KEEP = 4  # entries: the primary, before and original tracks of the current time, and one more

_cache: list[tuple[RotationTrack, float, display.TrackSamples]] = []


def samples_at(track: RotationTrack, t: float) -> display.TrackSamples:
    """``display.sample_track(track, [t, t + SPEED_DT])``, computed once per (track, ``t`` seconds).

    Index 0 of each field is the pose at ``t`` (what Unity plays there); ``speed[0]`` is the angular
    speed (degrees/second) from ``t`` to ``t + SPEED_DT``. Treat the arrays as read-only."""
    t = float(t)
    for i, (tr, ti, s) in enumerate(_cache):
        if tr is track and ti == t:
            if i:
                _cache.insert(0, _cache.pop(i))
            return s
    s = display.sample_track(track, np.array([t, t + SPEED_DT]))
    _cache.insert(0, (track, t, s))
    del _cache[_KEEP:]
    return s
