"""Read-back checks: the figures of a write are the figures of the file written (issues 8 and 11).

:func:`write_checked` writes a clip with the writer its extension selects and, *before the temp file
is renamed into place* (:func:`~curveeditor.io.atomic.check_before_replace`), reads the temp file back
with our own reader and plays every rotation track as Unity would. Two comparisons per track:

* **writer**: the written file against the clip handed to the writer *as the format stores it*
  (:func:`as_format_stores`: an ``.anim`` holds float32 times and values, and that is what Unity
  plays; issue 26). Whatever the writer did beyond that (hemisphere re-keying, keys for segments over
  180 deg, order or kind conversion, CSV's loss of tangents) must stay within
  :data:`WRITER_TOLERANCE_DEG` plus :data:`FLOAT32_SLACK_DEG`, at the keys and between them (a
  CSV, which holds key values only: at the keys; between keys reported, and bounded by the promise).
  A *sampled* track (one key per frame read from a BVH, :func:`is_sampled`) is a sequence of poses, not a
  curve: its reference is the frame's pose at each frame and the Slerp between neighbouring frames, and the
  between-frames deviation is bounded only when the caller states a tolerance
  (``Promise.between_bound_deg``).
* **promise**: the written file against what the operation promised (``Promise.reference``, e.g. the
  input of ``clean``), within ``Promise.bound_deg`` when the operation has a bound (``--reduce 0.5``:
  0.5 deg plus the writer's tolerance) or reported only (smoothing, unwrap: they change the motion on
  purpose). These are the figures the CLI tables, ``--report`` JSON and the editor show.

A file of samples (``io.SAMPLE_FORMATS``: ``.bvh``, poses at frames and no curves) is compared at its
frames only, both ways (``deviation(..., at_frames=True)``; ``io.bvh_writer`` says why that is the whole
comparison), and its writer samples every track itself (no :func:`prepare_samples`).

Comparing like with like keeps long takes writable: at 137 s a float32 time is good to 7.6e-6 s, and
a 3,000 deg/s swing moves 0.023 deg in that time, more than the writer's tolerance, though the file
holds exactly what the format can hold. What the format's precision costs is measured on its own
(``TrackCheck.stored_error``: the track as stored against the track at its keys) and named in one
report line when it reaches :data:`PRECISION_NOTE_DEG` (``WriteCheck.precision_line``). A promise
(``--reduce 0.5``) is still measured against its reference as given, with the float32 time slack
reserved inside the bound (``io.promises.write_margin``).

A miss raises :class:`ClipWriteError` (``OUT: track 'Spin' at 2.513 s plays 180 deg from the input
(bound 0.51 deg); nothing written``) and the target is left as it was. Errors are geodesic degrees.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field, replace

import numpy as np

from .atomic import check_before_replace, check_not_protected
from .check_ahead import (
    CheckAhead,
    as_stored,
    check_ahead,
    on_written_tracks,
    plays_the_same,
    same_curve_numbers,
)
from .errors import ClipError, ClipWriteError
from .formats import GLTF_FORMATS, READ_FORMATS, SAMPLE_FORMATS, WRITE_FORMATS, extension, load_format

__all__ = [
    "Promise",
    "Deviation",
    "TrackCheck",
    "WriteCheck",
    "WriteCancelled",
    "write_checked",
    "check_written",
    "deviation",
    "viewer_deviation",
    "is_sampled",
    "prepare_samples",
    "recipe_bound",
    "recipe_promise",
    "WRITER_TOLERANCE_DEG",
    "FLOAT32_SLACK_DEG",
    "FLOAT32_TIME_REL",
    "PRECISION_NOTE_DEG",
    "as_format_stores",
    "CurveCheck",
    "check_curves",
]

#: What a writer may change in the played motion (degrees): the engine's conversion tolerance.
WRITER_TOLERANCE_DEG = 0.01
#: Extra allowance (degrees) for float32 key times and values in ``.anim`` files (a 60 s clip's key
#: times move by up to 2e-6 s: 0.002 deg at 1000 deg/s).
FLOAT32_SLACK_DEG = 0.002
#: Relative precision of a float32 key time (half an ulp): a time ``t`` is good to ``|t| * 2**-24`` s.
FLOAT32_TIME_REL = 2.0**-24
#: Formats whose writers say what the file will read back as (``check_ahead.announce_written``):
#: their read-back comparison runs beside the write (:class:`~curveeditor.io.check_ahead.CheckAhead`).
AHEAD_FORMATS = (".anim", ".csv")
#: Reports name the format's own precision (``WriteCheck.precision_line``) from this many degrees.
PRECISION_NOTE_DEG = FLOAT32_SLACK_DEG


@dataclass(frozen=True)
class Promise:
    """What the written file must hold besides the writer's own fidelity.

    Attributes:
        reference: the clip the figures are measured against (``None``: the clip written, so the
            promise is the writer's own check).
        bound_deg: largest played error (degrees) of the written file from ``reference``, at and
            between keys; ``None`` = report only.
        what: how messages name ``reference`` ("the input").
        between_bound_deg: for sampled (per-frame) tracks, the deviation allowed between frames from
            the Slerp of the frames (``--tolerance``); ``None`` = reported, not enforced.
        clip_what: how messages name the clip handed to the writer ("the recipe's result").
        key_bound_deg: largest error at the reference's keys (frames), if tighter than
            ``bound_deg`` (``io.promises.recipe_promise``: a requested ``--reduce`` bound, kept at
            the keys of the file read back); ``None`` = ``bound_deg``.
    """

    reference: object | None = None
    bound_deg: float | None = None
    what: str = "the input"
    between_bound_deg: float | None = None
    clip_what: str = "the clip to write"
    key_bound_deg: float | None = None


@dataclass(frozen=True)
class Deviation:
    """Played error of a written track from a reference track, degrees.

    ``max_error`` over a dense grid that includes every key (keys and between keys), ``key_error`` at the
    reference's key times, ``rms_error`` trapezoid-weighted over time, ``worst_time`` (seconds) where
    ``max_error`` occurs; ``bound``/``key_bound`` the limits served (``None`` = not enforced);
    ``frames``: the reference was a sampled track (Slerp between its frames)."""

    max_error: float
    key_error: float
    rms_error: float
    worst_time: float
    bound: float | None = None
    key_bound: float | None = None
    frames: bool = False
    #: Compared at the frames only (a file of samples, ``io.SAMPLE_FORMATS``): nothing between them.
    at_frames: bool = False

    @property
    def between_error(self) -> float:
        return self.max_error

    def miss(self) -> tuple[float, float, float] | None:
        """``(time s, error deg, bound deg)`` of the first bound missed, else None."""
        if self.key_bound is not None and self.key_error > self.key_bound:
            return (self.worst_time, self.key_error, self.key_bound)
        if self.bound is not None and self.max_error > self.bound:
            return (self.worst_time, self.max_error, self.bound)
        return None

    def as_dict(self) -> dict:
        return {
            "max_error": self.max_error,
            "key_error": self.key_error,
            "rms_error": self.rms_error,
            "worst_time": self.worst_time,
            "bound": self.bound,
            "key_bound": self.key_bound,
            "reference": (
                "poses at the frames (a file of samples)"
                if self.at_frames
                else "frames (Slerp between them)"
                if self.frames
                else "played curves"
            ),
        }


@dataclass(frozen=True)
class TrackCheck:
    """One rotation track of a checked write.

    ``keys_in``: keys of the track handed to the writer; ``keys_written``: keys in the file read back;
    ``reasons``: why they differ (or why the writer re-keyed); ``writer``: written vs the clip handed
    to the writer; ``promise``: written vs the promised reference (None when that is the same clip)."""

    path: str
    keys_in: int
    keys_written: int
    reasons: tuple[str, ...]
    writer: Deviation
    promise: Deviation | None = None
    #: How far the format's own precision moves the track's poses at its keys (degrees), and where
    #: (seconds): an ``.anim`` stores float32 times and values, which is what Unity plays (issue 26).
    #: The ``writer`` figures compare the file with the track *as stored*, so this is not in them.
    stored_error: float = 0.0
    stored_time: float = 0.0

    @property
    def keys_added(self) -> int:
        return self.keys_written - self.keys_in

    @property
    def figures(self) -> Deviation:
        """The deviation the tables show: from the promised reference when there is one."""
        return self.promise if self.promise is not None else self.writer

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "keys_in": self.keys_in,
            "keys_written": self.keys_written,
            "keys_added": self.keys_added,
            "reasons": list(self.reasons),
            "writer": self.writer.as_dict(),
            "promise": None if self.promise is None else self.promise.as_dict(),
            "stored_error": self.stored_error,
            "stored_time": self.stored_time,
        }


@dataclass(frozen=True)
class CurveCheck:
    """One numeric non-rotation curve of a checked write (float: muscles, blend shapes, generic
    floats; position; scale): how far the file as read back plays from the curve handed to the
    writer as the file stores it, in the curve's own units (largest over its components, at every key
    of both and :data:`CURVE_READ_POINTS` points inside each interval), against ``bound``."""

    name: str
    kind: str
    keys_in: int
    keys_written: int
    max_error: float
    worst_time: float
    bound: float

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "keys_in": self.keys_in,
            "keys_written": self.keys_written,
            "max_error": self.max_error,
            "worst_time": self.worst_time,
            "bound": self.bound,
        }


@dataclass(frozen=True)
class WriteCheck:
    """The read-back result of one write: per-track checks, the writer's warnings, and ``failure``
    (the one-line reason the file was not written, else None)."""

    path: str
    tracks: tuple[TrackCheck, ...]
    warnings: tuple[str, ...] = ()
    failure: str | None = None
    what: str = field(default="the input")
    #: The written file as read back (a Clip; None when the check did not read it).
    clip: object = field(default=None, repr=False, compare=False)
    #: The numeric non-rotation curves the format holds (``.anim``), each checked as read back.
    curves: tuple[CurveCheck, ...] = ()

    def track(self, path: str) -> TrackCheck:
        for t in self.tracks:
            if t.path == path:
                return t
        raise KeyError(path)

    @property
    def keys_written(self) -> int:
        return sum(t.keys_written for t in self.tracks)

    @property
    def keys_added(self) -> int:
        return sum(t.keys_added for t in self.tracks)

    def summary(self) -> str:
        """One line: keys written/added and the worst read-back errors."""
        if not self.tracks:
            return f"{self.path}: no rotation tracks written"
        worst = max(self.tracks, key=lambda t: t.figures.max_error)
        at_keys = max(t.figures.key_error for t in self.tracks)
        added = self.keys_added
        add = f" ({added:+d} by the writer)" if added else ""
        return (
            f"written file read back: {self.keys_written} keys{add}; max error {worst.figures.max_error:.6f} "
            f"deg ({worst.path or '(root)'}), at keys {at_keys:.6f} deg"
        )

    def precision_line(self) -> str | None:
        """The line a report prints when the format's own precision moves a pose by
        :data:`PRECISION_NOTE_DEG` or more (module docstring), else None."""
        if not self.tracks:
            return None
        worst = max(self.tracks, key=lambda t: t.stored_error)
        if worst.stored_error < PRECISION_NOTE_DEG:
            return None
        step = abs(worst.stored_time) * FLOAT32_TIME_REL
        return (
            f"format precision: {extension(self.path) or 'the file'} stores key times and values as "
            f"float32 (at {worst.stored_time:.1f} s a time is good to {step:.2g} s), which moves "
            f"{worst.path or '(root)'!r} {worst.stored_error:.4f} deg at its keys as Unity plays it; "
            "the write check compares the file with the clip as stored"
        )

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "precision": self.precision_line(),
            "keys_written": self.keys_written,
            "keys_added": self.keys_added,
            "tracks": [t.as_dict() for t in self.tracks],
            "curves": [c.as_dict() for c in self.curves],
            "warnings": list(self.warnings),
            "failure": self.failure,
        }

    def curves_line(self) -> str | None:
        """One line on the float, position and scale curves read back, or None when there are none."""
        if not self.curves:
            return None
        worst = max(self.curves, key=lambda c: c.max_error / c.bound)
        if worst.max_error == 0.0:
            return f"{len(self.curves)} float/position/scale curve(s) read back exactly as stored"
        return (
            f"{len(self.curves)} float/position/scale curve(s) read back: largest difference "
            f"{worst.max_error:.3g} ({worst.name}, {worst.kind}; bound {worst.bound:.3g})"
        )


# -------------------------------------------------------------------------------------------------


def is_sampled(track, clip=None) -> bool:
    """True for a per-frame track read from a BVH (:func:`~curveeditor.engine.reorder.is_frame_samples`)."""
    from ..engine.reorder import is_frame_samples

    return is_frame_samples(track)


def prepare_samples(
    clip, ext: str, mode: str | None = None, tolerance_deg: float | None = None, keep_order: bool = True
):
    """``clip`` with its per-frame tracks keyed for the target format
    (:func:`~curveeditor.engine.reorder.sampled_track`): keys at the frames, keys added only where
    ``tolerance_deg`` demands. ``.anim``: Euler frames in their own order (``keep_order``, the
    default: the frames' own values with Linear tangents, ``m_RotationOrder`` of their order; issue
    21), else (``keep_order=False``, or ``mode="quaternion"``) ZXY Euler or quaternion curves,
    whichever is closer to the Slerp between frames (``mode`` forces one). A CSV always keeps Euler
    frames as they are (its ``order`` column holds each joint's order, and its keys are the frames
    themselves, so they read back exactly)."""
    from ..engine.clip import EULER
    from ..engine.reorder import is_frame_samples, sampled_track, sampled_tracks

    if ext in SAMPLE_FORMATS or ext in GLTF_FORMATS:
        # A file of samples: its writer samples every track at the frames itself. glTF: the writer
        # writes frames as a LINEAR sampler, which plays the Slerp between them (what they mean).
        return clip
    kind = EULER if ext == ".csv" else mode
    own = keep_order and ext != ".csv" and mode in (None, EULER)
    todo = [
        i
        for i, t in enumerate(clip.tracks)
        if is_frame_samples(t) and not (ext == ".csv" and t.kind == EULER)
    ]
    if not todo:
        return clip
    tracks = list(clip.tracks)
    if own:
        for i in [i for i in todo if tracks[i].kind == EULER]:
            t = tracks[i]
            kept = sampled_track(t, EULER, t.order, tolerance_deg=tolerance_deg)
            if kept.n_keys > t.n_keys:
                # ``--tolerance`` asks for the Slerp between frames: Linear channels in the own order
                # may need many keys for it where ZXY or quaternion curves need fewer.
                other = sampled_track(t, mode, tolerance_deg=tolerance_deg)
                kept = other if other.n_keys < kept.n_keys else kept
            tracks[i] = kept
        todo = [i for i in todo if clip.tracks[i].kind != EULER]
        if not todo:
            return clip.with_tracks(tracks)
    done = sampled_tracks([tracks[i] for i in todo], kind, tolerance_deg=tolerance_deg)
    for i, t in zip(todo, done, strict=True):
        tracks[i] = t
    return clip.with_tracks(tracks)


def deviation(
    reference,
    written,
    frames: bool = False,
    bound: float | None = None,
    key_bound: float | None = None,
    memo: dict | None = None,
    at_frames: bool = False,
) -> Deviation:
    """How far ``written`` plays from ``reference`` (two :class:`RotationTrack`), degrees.

    ``frames=False``: both as Unity plays them (:func:`~curveeditor.engine.diff.diff_tracks`: key
    times of both plus a dense grid). ``frames=True``: the reference is its key poses and the Slerp
    between neighbouring keys (a sampled clip), at the frames, at ``written``'s key times and on a
    grid of at least 1 kHz and 10 samples per interval: :func:`~curveeditor.engine.frame_errors.
    frame_errors` when ``written`` has one key per frame (one evenly spaced grid for every frame
    interval, no per-sample gathers), else the checker grid over both key sets (which holds every
    key time exactly, so the error at the frames is read off the same evaluation).
    ``memo`` (a dict kept across the calls of one written track) reuses what ``written`` plays on
    a grid another call already evaluated (the writer's and the promise's check of one track).
    ``at_frames``: ``written`` is a file of samples (``io.SAMPLE_FORMATS``): compared at the
    reference's frames (``frames=True``) or at the file's frames (a curve reference) only."""
    from ..engine.clip import key_quaternions, played
    from ..engine.rotations import geodesic_angle

    rt = reference.times
    fast = None
    if at_frames:
        points = rt if frames else written.times
        got = _played_memo(written, points, memo)
        want = key_quaternions(reference) if frames else played(reference, points)
        err = key_err = geodesic_angle(got, want)
        times = points
    elif frames:
        from ..engine.frame_errors import frame_errors

        key_q = key_quaternions(reference)
        fast = frame_errors(rt, key_q, written, memo=memo)
    if fast is not None:
        key_error = float(fast.key_errors.max())
        worst = fast.worst_time
        if key_bound is not None and key_error > key_bound:
            worst = float(rt[int(np.argmax(fast.key_errors))])
        return Deviation(fast.max_error, key_error, fast.rms_error, worst, bound, key_bound, frames)
    if at_frames:
        pass  # err, key_err and times hold the figures at the frames (above)
    elif frames:  # a written track keyed off the frames: the checker grid over both key sets
        from ..engine.reduce import dense_check_grid
        from ..engine.resample import slerp

        keys = np.union1d(rt, written.times)
        grid, key_index = dense_check_grid(keys)
        got = _played_memo(written, grid, memo)
        at_keys = key_index[np.searchsorted(keys, rt)]
        key_err = geodesic_angle(got[at_keys], key_q)
        err = geodesic_angle(got, slerp(rt, key_q, grid))
        times = grid
    else:
        from ..engine.diff import diff_tracks

        d = diff_tracks(reference, written)
        times, err = d.times, d.errors
        key_err = geodesic_angle(played(reference, rt), played(written, rt))
    i = int(np.argmax(err))
    if len(times) > 1 and times[-1] > times[0]:
        sq = err * err
        rms = float(np.sqrt(np.sum(0.5 * (sq[1:] + sq[:-1]) * np.diff(times)) / (times[-1] - times[0])))
    else:
        rms = float(np.sqrt(np.mean(err * err)))
    key_error = float(key_err.max()) if key_err.size else 0.0
    worst = float(times[i])
    if key_bound is not None and key_error > key_bound:
        worst = float(rt[int(np.argmax(key_err))])
    return Deviation(float(err[i]), key_error, rms, worst, bound, key_bound, frames, at_frames)


def viewer_deviation(
    reference,
    written,
    player,
    frames: bool = False,
    bound: float | None = None,
    key_bound: float | None = None,
) -> Deviation:
    """How far ``written`` plays from ``reference`` (degrees) when ``written`` is played by ``player(track,
    times) -> (M, 4)`` rather than as Unity plays it: a glTF file as a viewer plays it
    (``io.gltf.viewer_played``: Slerp between the keys of a LINEAR sampler). Sampled on the checker
    grid over both key sets (``reduce.dense_check_grid``: >= 1 kHz and 10 samples per interval, every
    key time included); the reference is what Unity plays, or with ``frames`` its key poses and the
    Slerp between them."""
    from ..engine.clip import key_quaternions, played
    from ..engine.reduce import dense_check_grid
    from ..engine.resample import slerp
    from ..engine.rotations import geodesic_angle

    rt = reference.times
    keys = np.union1d(rt, written.times)
    grid, key_index = dense_check_grid(keys)
    got = player(written, grid)
    want = slerp(rt, key_quaternions(reference), grid) if frames else played(reference, grid)
    err = geodesic_angle(got, want)
    key_err = err[key_index[np.searchsorted(keys, rt)]]
    i = int(np.argmax(err))
    if len(grid) > 1 and grid[-1] > grid[0]:
        sq = err * err
        rms = float(np.sqrt(np.sum(0.5 * (sq[1:] + sq[:-1]) * np.diff(grid)) / (grid[-1] - grid[0])))
    else:
        rms = float(np.sqrt(np.mean(err * err)))
    key_error = float(key_err.max()) if key_err.size else 0.0
    worst = float(grid[i])
    if key_bound is not None and key_error > key_bound:
        worst = float(rt[int(np.argmax(key_err))])
    return Deviation(float(err[i]), key_error, rms, worst, bound, key_bound, frames)


def _played_memo(written, grid: np.ndarray, memo: dict | None) -> np.ndarray:
    """``played(written, grid)``, reused from ``memo`` when the last call evaluated the same grid
    (at the track's own key times: its key poses, which a curve passes through)."""
    from ..engine.clip import key_quaternions, played

    memo_key = (grid.shape[0], grid.tobytes())
    got = None if memo is None else memo.get(memo_key)
    if got is None:
        got = key_quaternions(written) if np.array_equal(grid, written.times) else played(written, grid)
        if memo is not None:
            memo.clear()  # one grid at a time: the memo is for the next call on the same track
            memo[memo_key] = got
    return got


def as_format_stores(track, ext: str):
    """``track`` with the numbers a file of extension ``ext`` holds for it: an ``.anim`` stores float32
    times, values, slopes and weights (:func:`~curveeditor.io.check_ahead.as_stored`); the other
    formats read back at full precision (CSV and BVH values in decimal, glTF times snapped back onto
    the frames by its reader), so ``track`` itself."""
    return as_stored(track) if ext == ".anim" else track


def _stored_error(track, stored, frames: bool) -> tuple[float, float]:
    """``(degrees, seconds)``: the largest move of ``track``'s poses at its keys when played as
    ``stored`` (the format's precision), and where; ``(0, 0)`` when they are the same track.
    ``frames``: a sampled track, which plays the Slerp between its frames (at their stored times)."""
    if stored is track or track.n_keys == 0:
        return 0.0, 0.0
    from ..engine.clip import key_quaternions, played
    from ..engine.resample import slerp
    from ..engine.rotations import geodesic_angle

    if frames:
        got = slerp(stored.times, key_quaternions(stored), track.times)
    else:
        got = played(stored, track.times)
    err = geodesic_angle(got, key_quaternions(track))
    i = int(np.argmax(err))
    return float(err[i]), float(track.times[i])


def _reasons(given, written, ext: str) -> tuple[str, ...]:
    from ..engine.clip import EULER, QUATERNION
    from ..engine.export_checks import hemisphere_pairs, segment_sweep
    from ..engine.rotations import extrinsic_order

    out = []
    if given.kind != written.kind:
        out.append(f"{given.kind} keys written as {written.kind} keys")
    elif given.kind == EULER and extrinsic_order(given.order) != extrinsic_order(written.order):
        out.append(f"rotation order {given.order!r} written as {written.order!r}")
    if given.kind == QUATERNION and written.kind == QUATERNION and given.n_keys != written.n_keys:
        flips = hemisphere_pairs(given)
        long = int(np.sum(segment_sweep(given) > 180.0)) if given.n_keys > 1 else 0
        if flips:
            out.append(f"{flips} key pair(s) on opposite hemispheres, re-keyed along the played path")
        if long:
            out.append(f"{long} segment(s) turning more than 180 deg, split")
    if ext == ".csv" and given.n_keys != written.n_keys:
        out.append(
            "CSV holds key values only (read back with ClampedAuto tangents): keys added to keep the motion"
        )
    if given.n_keys != written.n_keys and not out:
        out.append("keys added to keep the motion within the writer's tolerance")
    return tuple(out)


#: Formats whose files hold a clip's numeric non-rotation curves, checked as read back
#: (:func:`check_curves`); the others name them among the writer's warnings as not written.
CURVE_FORMATS = (".anim",)
#: Kinds of :class:`~curveeditor.engine.clip.OtherTrack` the curve check compares.
CHECKED_CURVE_KINDS = ("float", "position", "scale")
#: A numeric curve may play this far from the clip's as stored, relative to its largest value
#: (at least 1): float32 spelling is exact (as stored), so this is the writer's own slack.
CURVE_TOLERANCE_REL = 1e-6
#: Points inside each key interval where :func:`check_curves` reads both curves (besides the keys).
CURVE_READ_POINTS = 8


def check_curves(clip, written, ext: str) -> tuple[tuple[CurveCheck, ...], str | None]:
    """The numeric non-rotation curves of ``clip`` (:data:`CHECKED_CURVE_KINDS`) against the same
    curves of ``written`` (the file read back), for a format that holds them (:data:`CURVE_FORMATS`):
    ``(checks, failure)``, ``failure`` naming the first curve missing from the file or playing
    further than its bound from the curve as stored (issue 22: edited float curves are exported)."""
    if ext not in CURVE_FORMATS:
        return (), None
    from ..engine.curves import evaluate

    back = {(o.kind, o.name): o for o in written.other_tracks if o.curve is not None}
    checks = []
    failure = None
    for o in clip.other_tracks:
        if o.curve is None or o.kind not in CHECKED_CURVE_KINDS or o.curve.n_keys == 0:
            continue
        w = back.get((o.kind, o.name))
        if w is None:
            failure = (
                failure or f"{o.kind} curve {o.name!r} is missing from the written file; nothing written"
            )
            continue
        stored = as_format_stores(o, ext).curve
        bound = CURVE_TOLERANCE_REL * max(1.0, float(np.max(np.abs(stored.value))))
        err, when = 0.0, float(stored.time[0])
        if not same_curve_numbers(stored, w.curve):
            keys = np.union1d(stored.time, w.curve.time)
            u = np.arange(1, CURVE_READ_POINTS + 1) / (CURVE_READ_POINTS + 1)
            inner = (keys[:-1, None] + np.diff(keys)[:, None] * u).ravel()
            t = np.concatenate([keys, inner])
            a, b = evaluate(stored, t), evaluate(w.curve, t)
            diff = np.max(np.abs(a - b), axis=1) if a.shape == b.shape else np.full(t.shape, np.inf)
            i = int(np.argmax(diff))
            err, when = float(diff[i]), float(t[i])
        checks.append(CurveCheck(o.name, o.kind, o.curve.n_keys, w.curve.n_keys, err, when, bound))
        if failure is None and not err <= bound:
            failure = (
                f"{o.kind} curve {o.name!r} at {when:.3f} s reads back {err:.3g} from the clip to write "
                f"(bound {bound:.3g}); nothing written"
            )
    return tuple(checks), failure


#: Fields of a key an editor curve repeats from its runtime curve's channel (``.anim``), and the
#: ``weightedMode`` bit that makes each weight count (Unity ignores an unweighted side's weight, and
#: writes 0 or 1/3 there alike: corpus ``TransformLookthrough_test``).
_MIRRORED_FIELDS = (("value", 0), ("in_slope", 0), ("out_slope", 0), ("in_weight", 1), ("out_weight", 2))


def _mirror_mismatches(tracks, others) -> dict[str, str]:
    """Curve name -> what differs, for the curves of a ``.anim`` as read (rotation ``tracks``, and
    the position, scale and float curves among ``others``, which also hold its editor curves) whose
    editor curves (``localEulerAnglesRaw.*`` / ``m_LocalRotation.*`` / ``m_LocalPosition.*`` /
    ``m_LocalScale.*`` / a float curve's copy: what Unity's Animation window edits and rebuilds the
    played curves from) do not hold the played curve: a missing channel, a key time the runtime
    curve lacks, or a key's numbers not bit for bit the runtime key's (the writer spells both from
    the same numbers). Curves without editor curves (clips made in code, ``--no-editor-curves``)
    and humanoid quartets are not mirrors."""
    from .anim.reader import EULER_EDITOR, QUAT_EDITOR

    editors = {(o.path, o.attribute): o.curve for o in others if o.kind == "editor"}
    mirrored = []  # (name, runtime curve, editor attribute per component)
    for t in tracks:
        if not t.meta.get("humanoid") and t.kind in ("euler", "quaternion"):
            prefix, comps = (EULER_EDITOR, "xyz") if t.kind == "euler" else (QUAT_EDITOR, "xyzw")
            mirrored.append((t.path, t.path, t.curve, [f"{prefix}.{c}" for c in comps]))
    for o in others:
        if o.curve is None or o.curve.n_keys == 0:
            continue
        if o.kind in ("position", "scale") and o.curve.n_components == 3:
            mirrored.append((o.name, o.path, o.curve, [f"{o.attribute}.{c}" for c in "xyz"]))
        elif o.kind == "float" and (o.path, o.attribute) in editors:
            mirrored.append((o.name, o.path, o.curve, [o.attribute]))
    out: dict[str, str] = {}
    for name, path, curve, attrs in mirrored:
        curves = [editors.get((path, a)) for a in attrs]
        if all(c is None for c in curves):
            continue
        for k, ec in enumerate(curves):
            what = _mirror_mismatch(curve, k, ec)
            if what is not None:
                out[name] = f"{attrs[k]} {what}"
                break
    return out


def _mirror_mismatch(curve, k: int, ec) -> str | None:
    """What editor curve ``ec`` gets wrong of channel ``k`` of the runtime ``curve``, or None."""
    from ..engine.curves import equal_or_nan

    if ec is None or ec.n_keys == 0:
        return "is missing"
    pos = np.searchsorted(curve.time, ec.time)
    if pos.max() >= curve.n_keys or not np.array_equal(curve.time[pos], ec.time):
        return "has a key the played curve does not"
    for f, weighted in _MIRRORED_FIELDS:
        a, b = getattr(curve, f)[pos, k], getattr(ec, f)[:, 0]
        bad = ~equal_or_nan(a, b)
        if weighted:
            bad &= (ec.weighted_mode[:, 0] & weighted) != 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return (
                f"{f} at {float(ec.time[i]):.3f} s is {float(b[i]):.9g}, the played key's {float(a[i]):.9g}"
            )
    return None


def editor_mirror_failure(clip, written, ext: str) -> str | None:
    """The write check's reason to refuse a ``.anim`` whose editor curves do not hold what it plays
    (:func:`_mirror_mismatches` of the file read back), or None. A track whose editor curves already
    differed from its played curve in the file ``clip`` was read from (``clip.source``, its tracks
    as read) is that file's own state, not the writer's: left alone."""
    if ext != ".anim":
        return None
    bad = _mirror_mismatches(written.tracks, written.other_tracks)
    if not bad:
        return None
    # The file the clip was read from, as read: its rotation tracks before any edit, and its other
    # curves (the editor curves among them) as they were.
    original = getattr(clip.source, "original_tracks", None)
    known = (
        _mirror_mismatches([t for t, _src in original.values()], _source_others(clip))
        if original is not None
        else {}
    )
    for p, what in bad.items():
        if p not in known:
            return (
                f"{p or '(root)'!r}: its editor curve {what} (Unity's Animation window would "
                "rebuild another curve from it); nothing written"
            )
    return None


def _source_others(clip) -> list:
    """The other curves of the ``.anim`` ``clip`` was read from, as read (edited float curves keep
    their read state in ``source.original_floats``; the rest are the clip's own, never edited)."""
    floats = getattr(clip.source, "original_floats", None) or {}
    first = {name: t for name, (t, _e, _m) in floats.items()}
    return [first.get(o.name, o) if o.kind == "float" else o for o in clip.other_tracks]


def check_one_track(clip, track, written, promise: Promise | None, ext: str, path: str) -> WriteCheck:
    """:func:`check_written` of ``track`` (one track of ``clip``) against ``written`` (the track handed
    to the writer, None if it wrote none) as the file stores it (:func:`as_format_stores`): one part
    of what :class:`~curveeditor.io.check_ahead.CheckAhead` runs beside the write (the float32
    copies exist one track at a time), joined by :func:`joined_checks`."""
    from ..engine.clip import Clip

    return check_written(
        Clip(clip.name, clip.frame_rate, [track]),
        Clip(clip.name, clip.frame_rate, [] if written is None else [as_format_stores(written, ext)]),
        promise,
        ext,
        path,
    )


def joined_checks(parts: list[WriteCheck], promise: Promise | None, path: str) -> WriteCheck:
    """The :func:`check_one_track` results of a clip's tracks (in track order) as one call of
    :func:`check_written` over the clip returns them: the checks in order, the first failure."""
    checks = [c for part in parts for c in part.tracks]
    failure = next((part.failure for part in parts if part.failure), None)
    return WriteCheck(path, tuple(checks), (), failure, (promise or Promise()).what)


def check_written(
    clip, written, promise: Promise | None = None, ext: str = ".anim", path: str = ""
) -> WriteCheck:
    """Compare ``written`` (the clip read back) with ``clip`` (handed to the writer) and with the
    ``promise``; returns the :class:`WriteCheck` with ``failure`` set when a bound is missed or a
    track did not come back."""

    promise = promise or Promise()
    at_frames = ext in SAMPLE_FORMATS
    player = None
    if ext in GLTF_FORMATS:
        from .gltf import viewer_played as player
    ref_clip = promise.reference
    by_path = {t.path: t for t in written.tracks}
    ref_by_path = {t.path: t for t in ref_clip.tracks} if ref_clip is not None else {}
    writer_bound = WRITER_TOLERANCE_DEG + FLOAT32_SLACK_DEG
    checks = []
    failure = None
    for t in clip.tracks:
        if t.n_keys == 0:
            continue
        w = by_path.get(t.path)
        if w is None or w.n_keys == 0:
            failure = failure or f"track {t.path!r} is missing from the written file; nothing written"
            continue
        frames = is_sampled(t, clip)
        stored = as_format_stores(t, ext)
        stored_error, stored_time = _stored_error(t, stored, frames)
        between = promise.between_bound_deg if frames else writer_bound
        if ext == ".csv":
            # A CSV holds key values only (read back with ClampedAuto tangents): the poses at the keys
            # are bounded, the motion between keys is reported (and bounded by a promise, if any).
            between = None
        if frames and between is not None:
            between = between + FLOAT32_SLACK_DEG
        memo: dict = {}
        if player is not None:
            wd = viewer_deviation(stored, w, player, frames, between, writer_bound)
        elif not frames and not at_frames and plays_the_same(stored, w):
            # Bit for bit the same numbers play the same everywhere: 0 without a dense comparison
            # (1.4 s of the check of a 10-minute take's reduced .anim, 31 tracks).
            wd = Deviation(0.0, 0.0, 0.0, float(w.times[0]), between, writer_bound, False, False)
        else:
            wd = deviation(stored, w, frames, between, writer_bound, memo=memo, at_frames=at_frames)
        pd = None
        ref = ref_by_path.get(t.path)
        if ref is not None and ref.n_keys and ref is not t:
            rframes = is_sampled(ref, ref_clip)
            pbound = promise.bound_deg
            kbound = pbound if promise.key_bound_deg is None else promise.key_bound_deg
            # Against samples (a BVH input) the promise holds at the frames; between them the
            # deviation from their Slerp is reported (bounded only by a stated tolerance).
            if player is not None:
                pd = viewer_deviation(
                    ref, w, player, rframes, promise.between_bound_deg if rframes else pbound, kbound
                )
            else:
                pd = deviation(
                    ref,
                    w,
                    rframes,
                    promise.between_bound_deg if rframes else pbound,
                    kbound,
                    memo=memo,
                    at_frames=at_frames,
                )
        checks.append(
            TrackCheck(t.path, t.n_keys, w.n_keys, _reasons(t, w, ext), wd, pd, stored_error, stored_time)
        )
        if failure is None:
            for dev, what in ((wd, promise.clip_what), (pd, promise.what)):
                miss = dev.miss() if dev is not None else None
                if miss is not None:
                    tm, err, bnd = miss
                    hint = (
                        " (a CSV holds key values only: write .anim to keep the curves)"
                        if ext == ".csv"
                        else ""
                    )
                    where = (
                        "between frames"
                        if dev.frames and err == dev.max_error and dev.bound is not None
                        else ""
                    )
                    failure = (
                        f"track {t.path or '(root)'!r} at {tm:.3f} s plays {err:.3g} deg from {what}"
                        f"{' ' + where if where else ''} (bound {bnd:.3g} deg){hint}; nothing written"
                    )
                    break
    return WriteCheck(path, tuple(checks), (), failure, promise.what)


def _read_back(tmp: str, target: str, clip, order: str | None = None):
    """The temp file ``tmp`` read with the reader of ``target``'s extension (CSV: in the order the
    writer used, which a CSV does not record)."""
    from ..engine.clip import EULER

    ext = extension(target)
    if ext not in READ_FORMATS:
        raise ClipWriteError(target, None, f"no reader for {ext} files to check the written file")
    reader = load_format(target, READ_FORMATS, "read", ClipWriteError)
    kwargs = {}
    if ext == ".anim":
        kwargs["keep_source"] = False  # (only compared: a large file is read in parts, io.anim.parts)
    if ext == ".csv":
        orders = {t.order for t in clip.tracks if t.kind == EULER} if clip is not None else {order}
        orders.discard(None)
        if len(orders) == 1:
            kwargs["order"] = orders.pop()
    try:
        return reader(tmp, **kwargs)
    except ClipError as exc:
        line = f" line {exc.line}" if exc.line else ""
        raise ClipWriteError(
            target, None, f"the written file does not read back ({exc.reason}{line}); nothing written"
        ) from None
    except (ValueError, OSError, MemoryError) as exc:
        raise ClipWriteError(
            target, None, f"the written file does not read back ({exc}); nothing written"
        ) from None


def check_samples_read_back(tmp: str, target: str, expected: dict, order: str = "zxy") -> None:
    """For a file of samples (``cli sample``'s CSV): ``tmp`` must read back (CSV in ``order``) with the
    same track paths and, at each track's sample times, the same poses as ``expected`` (path ->
    ``(times (M,), quats (M, 4))``) within :data:`WRITER_TOLERANCE_DEG`; else :class:`ClipWriteError`."""
    from ..engine.clip import played
    from ..engine.rotations import geodesic_angle

    written = _read_back(tmp, target, None, order)
    got = {t.path: t for t in written.tracks}
    for path, (times, quats) in expected.items():
        t = got.get(path)
        if t is None:
            raise ClipWriteError(
                target, None, f"track {path!r} is missing from the written file; nothing written"
            )
        err = geodesic_angle(played(t, times), quats)
        i = int(np.argmax(err))
        if err[i] > WRITER_TOLERANCE_DEG:
            raise ClipWriteError(
                target,
                None,
                f"track {path or '(root)'!r} at {times[i]:.3f} s reads back {err[i]:.3g} deg from the "
                f"samples (bound {WRITER_TOLERANCE_DEG:g} deg); nothing written",
            )


class WriteCancelled(ClipWriteError):
    """The ``confirm`` callback of :func:`write_checked` declined the checked file: nothing written."""


def write_checked(
    clip,
    path: str | os.PathLike,
    protect=None,
    promise: Promise | None = None,
    tolerance: float | None = None,
    confirm=None,
    phase=None,
    **opts,
) -> WriteCheck:
    """Write ``clip`` to ``path`` (writer by extension, options ``opts`` as for ``write_clip``), read the
    temp file back, check it (module docstring) and only then rename it into place.

    Returns the :class:`WriteCheck` (with the writer's warnings). Raises :class:`ClipWriteError` when
    the path is protected or unwritable, the writer refuses the clip, the written file does not read
    back, or it misses a bound; the target is then untouched.

    Per-frame tracks (BVH samples) are keyed at their frames first (:func:`prepare_samples`);
    ``tolerance`` (degrees) bounds their deviation from the Slerp between frames, adding keys where
    needed (without it that deviation is measured and reported, not bounded).

    ``confirm(check) -> bool``, if given, is called with the passed :class:`WriteCheck` (read-back
    figures, no warnings yet) before the rename; False raises :class:`WriteCancelled` and nothing is
    written (the editor's export dialog shows the written file's figures this way).

    ``phase(name)``, if given, is called as the work moves on: ``"write"`` (render and write the temp
    file), then ``"verify"`` (read it back and compare): the CLI's progress line shows it."""

    fname = os.fspath(path)
    writer = load_format(fname, WRITE_FORMATS, "write", ClipWriteError)
    check_not_protected(fname, protect)
    ext = extension(fname)
    box: dict = {}
    if tolerance is not None:
        if not (np.isfinite(tolerance) and tolerance > 0):
            raise ClipWriteError(
                fname, None, f"tolerance must be a positive number of degrees, got {tolerance}"
            )
        promise = replace(promise or Promise(), between_bound_deg=float(tolerance))
    to_write = prepare_samples(clip, ext, opts.get("mode"), tolerance, bool(opts.get("keep_order", True)))
    ahead = None
    if ext in AHEAD_FORMATS and check_ahead() and not (ext == ".csv" and opts.get("keys_only")):
        ahead = CheckAhead(
            clip,
            lambda track, written: check_one_track(clip, track, written, promise, ext, fname),
            lambda parts: joined_checks(parts, promise, fname),
            stored=lambda track: as_format_stores(track, ext),
        )

    def check(tmp: str, target: str) -> None:
        if phase is not None:
            phase("verify")
        if ahead is not None and not ahead.in_process:
            ahead.wait()  # a thread ends before the read-back: they would share the lock and memory
        written = _read_back(tmp, fname, to_write)
        try:
            result = ahead.result_for(written) if ahead is not None else None
            if result is None:
                result = check_written(clip, written, promise, ext, fname)
        except (ValueError, FloatingPointError) as exc:
            raise ClipWriteError(
                fname, None, f"cannot compare the written file: {exc}; nothing written"
            ) from None
        curves, curve_failure = check_curves(to_write, written, ext)
        mirror_failure = editor_mirror_failure(clip, written, ext)
        result = replace(result, curves=curves, failure=result.failure or curve_failure or mirror_failure)
        if result.failure:
            raise ClipWriteError(fname, None, result.failure)
        box["check"] = replace(result, clip=written)
        if confirm is not None and not confirm(result):
            raise WriteCancelled(fname, None, "cancelled; nothing written")

    if ext == ".csv" and not opts.get("keys_only"):
        # The CSV writer's tangent-loss warning is the played change of each track as read back,
        # which the check just measured (frames=False: the track against its read-back curve).
        opts = dict(opts, played_change=lambda: _played_changes(box.get("check")))
    with contextlib.ExitStack() as stack:
        stack.enter_context(check_before_replace(check))
        if ahead is not None:
            stack.callback(ahead.close)
            stack.enter_context(on_written_tracks(ahead.start))
        if phase is not None:
            phase("write")
        warnings = list(writer(to_write, fname, protect=protect, **opts) or [])
    result = box.get("check")
    if result is None:  # pragma: no cover - every writer writes through io.atomic
        raise ClipWriteError(fname, None, "the writer did not write through io.atomic; not checked")
    return replace(result, warnings=tuple(warnings))


def _played_changes(result: WriteCheck | None) -> dict[str, float]:
    """Path -> how far the file as read back plays from the track handed to the writer (degrees),
    for the tracks compared as curves (a sampled track is compared with the Slerp between its
    frames, another figure)."""
    if result is None:
        return {}
    return {c.path: c.writer.max_error for c in result.tracks if not c.writer.frames}


#: Recipe ops that promise the motion stays within a bound of their input, and that bound (degrees):
#: ``reduce`` its ``max_error``, the lossless conversions the engine's conversion tolerance.
_BOUNDED_OPS = {"reduce": None, "to_order": WRITER_TOLERANCE_DEG, "to_kind": WRITER_TOLERANCE_DEG}


def recipe_bound(recipe) -> float | None:
    """The bound (degrees) a recipe promises between its input and the file written: the sum of its
    steps' bounds plus the writer's tolerance, or None when a step changes the motion on purpose
    (unwrap, smoothing, resampling, ...; then the figures are reported, not enforced)."""
    total = WRITER_TOLERANCE_DEG + FLOAT32_SLACK_DEG
    for step in recipe.steps:
        if step.op not in _BOUNDED_OPS:
            return None
        b = _BOUNDED_OPS[step.op]
        total += float(step.params.get("max_error")) if b is None else b
    return total


def recipe_promise(source, recipe) -> Promise:
    """The :class:`Promise` of running ``recipe`` on ``source`` and writing the result."""
    return Promise(
        reference=source, bound_deg=recipe_bound(recipe), what="the input", clip_what="the recipe's result"
    )
