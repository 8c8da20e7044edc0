"""Clips for the issue-20 tests (figures, bounds, pops): a pop added to a real BVH track, the
generated CMU-style BVH of the benchmarks (31 joints x 2,752 frames, ZYX; the held-out CMU 01_01 is
not in the corpus), and a dance-like CSV built from a corpus BVH (the held-out DANCE.csv is not
either: Euler values wrapped into (-180, 180] as exporters write them, at 30 fps)."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import numpy as np

from curveeditor.engine.clip import key_quaternions
from curveeditor.engine.rotations import axis_angle_quat, quat_mul
from curveeditor.engine.tangents import make_curve
from curveeditor.engine.unwrap import continuous_euler

__all__ = ["with_pop", "cmu_style_bvh", "wrapped_csv"]


def with_pop(clip, suffix: str, frame: int, deg: float = 136.0, axis: int = 0):
    """``clip`` with the track whose path ends with ``suffix`` turned by ``deg`` degrees about basis
    ``axis`` (0 = x, in its own frame) from key ``frame`` on: one step of ``deg`` that does not come back
    (a solver or marker pop, like the issue's LeftForeArm: 136 deg in one frame at 120 fps). The track
    stays a BVH joint (values in its own order, ClampedAuto through the frames, as the reader makes
    them). Returns ``(clip, path)``."""
    track = next(t for t in clip.tracks if t.path.endswith(suffix))
    q = key_quaternions(track)
    turn = axis_angle_quat(axis, np.array([np.radians(deg)]))
    q = q.copy()
    q[frame:] = quat_mul(q[frame:], np.broadcast_to(turn, q[frame:].shape))
    values = continuous_euler(q, track.order)
    values += 360.0 * np.round((track.curve.value[0] - values[0]) / 360.0)
    curve = make_curve(track.times, values, mode="clamped_auto")
    return clip.with_track(replace(track, curve=curve)), track.path


def cmu_style_bvh(path: Path) -> Path:
    """The benchmarks' generated CMU-style BVH (31 joints x 2,752 frames at 120 fps, ZYX)."""
    from benchmarks.anim_io import write_cmu_style_bvh

    write_cmu_style_bvh(path)
    return path


def wrapped_csv(src_csv: Path, out: Path, every: int = 2) -> Path:
    """The rows of a CSV the project wrote (``path[,order],time,x,y,z,...``), every ``every``-th frame,
    with the Euler values wrapped into (-180, 180] and only the Euler columns kept: what many
    exporters write, whose wrap jumps Unity plays as spins."""
    with open(src_csv, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    keep = head[: head.index("qx")]
    ti, cols = head.index("time"), [head.index(c) for c in ("x", "y", "z")]
    times = sorted({float(r[ti]) for r in rows[1:]})
    step = times[1] - times[0]
    out_rows = [keep]
    for r in rows[1:]:
        if round(float(r[ti]) / step) % every:
            continue
        r = list(r)
        for i in cols:
            r[i] = repr(float((float(r[i]) + 180.0) % 360.0 - 180.0))
        out_rows.append(r[: len(keep)])
    with open(out, "w", newline="") as f:
        csv.writer(f).writerows(out_rows)
    return out
