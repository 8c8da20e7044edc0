"""Find wraps, flips, hemisphere flips, gimbal keys and spikes in rotation tracks (``rotations.md`` s. 3).

All figures are per key pair i -> i+1 of the track's own keys (times in seconds, angles in degrees,
speeds in deg/s):

* *wrap jump*: some Euler channel changes by more than 180 degrees.
* *Euler flip*: some Euler channel changes by more than 45 degrees, measured the short way round
  (``wrap180`` of the change, so a pure 360 wrap is counted as a wrap only), while the geodesic step
  is below 10 degrees: a change of representation, not motion.
* *hemisphere flip*: ``q_i . q_{i+1} < 0`` on the stored quaternion keys (0 for Euler-keyed tracks).
* *gimbal key*: the middle angle of the order within 5 degrees of +-90 (any multiple of 360 apart).
* *spike*: see :func:`spike_mask`.
* *pop*: a physically implausible step that does not come back (:func:`pop_mask`): a key step whose
  geodesic speed is far above the track's own (at least :data:`POP_MIN_SPEED` deg/s and
  :data:`POP_MEDIAN_FACTOR` times its median key speed) and :data:`POP_ISOLATION` times both
  neighbouring steps, and that is not part of a spike (a spike returns within a few keys; a pop
  stays: a marker swap, a solver jump, a T-pose first frame). What plays between the two keys of
  a pop is not defined by the poses: Unity's Euler interpolation and the Slerp of the frames may
  be tens of degrees apart there.

Euler values: an Euler track's key values as stored (what Unity interpolates channel by channel); a
quaternion track's keys as the graphs draw them, the continuous decomposition in the track's order
(:func:`~curveeditor.engine.display.key_euler`: hemisphere-continuous keys, unwrapped over the whole
track). So the counts match the curves a user sees: a quaternion track has no wrap jumps (its drawn
curves never jump 360), its flips are the places where the drawn curves swing while the pose barely
moves (only near gimbal lock), and its hemisphere flips are the stored keys a clean-up (``unflip``)
fixes. Judging each quaternion key on its own decomposition (as before) counted a wrap at every
+-180 crossing of a correctly converted spin, which no clean-up could change.
The reported ``order`` is the order those Euler values use: the track's order string (``"zxy"`` is
Unity's extrinsic ZXY, upper case is an intrinsic BVH order such as ``"ZXY"``).

Flips left after an unwrap sit near gimbal lock, where no Euler sequence can be continuous:
:func:`flip_details` gives each flip's middle angle and whether it is within
:data:`FLIP_GIMBAL_DEG` of lock (the reason it remains). A step a little further out whose key values
are the decomposition followed continuously along it is a swing near lock too (:func:`gimbal_reach`:
the outer channels turn up to step / sin(distance to lock)), not a flip an unwrap could remove.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .clip import EULER, Clip, RotationTrack, key_quaternions
from .display import key_euler
from .rotations import (
    euler_to_quat,
    geodesic_angle,
    middle_axis,
    quat_conj,
    quat_exp,
    quat_log,
    quat_mul,
    quat_normalize,
    quat_to_euler,
)
from .speed import angular_speed, step_speeds
from .unwrap import _choose, wrap180

__all__ = [
    "TrackReport",
    "Problem",
    "PROBLEM_KINDS",
    "WRAP_DEG",
    "FLIP_CHANNEL_DEG",
    "FLIP_GEODESIC_DEG",
    "GIMBAL_DEG",
    "SPIKE_MIN_SPEED",
    "SPIKE_MEDIAN_FACTOR",
    "SPIKE_RETURN_FRAMES",
    "POP_MIN_SPEED",
    "POP_MEDIAN_FACTOR",
    "POP_ISOLATION",
    "pop_mask",
    "inspect_track",
    "find_problems",
    "inspect_clip",
    "default_spike_speed",
    "spike_mask",
    "key_euler_values",
    "FlipDetail",
    "FLIP_GIMBAL_DEG",
    "flip_details",
    "flip_details_all",
    "gimbal_distance",
    "gimbal_reach",
    "FLIP_FOLLOW_TOL_DEG",
]

PROBLEM_KINDS = ("wrap", "flip", "hemisphere", "gimbal", "spike", "pop")
WRAP_DEG = 180.0
FLIP_CHANNEL_DEG = 45.0
FLIP_GEODESIC_DEG = 10.0
GIMBAL_DEG = 5.0
#: Automatic spike bound: max(SPIKE_MIN_SPEED, SPIKE_MEDIAN_FACTOR x the track's median key speed).
#: 720 deg/s is faster than any joint moves for long in mocap (a fast punch's wrist peaks around
#: 1000-1500 deg/s, but then the motion does not come straight back); scaling with the median keeps
#: fast tracks (spinning props) from being flagged everywhere.
SPIKE_MIN_SPEED = 720.0
SPIKE_MEDIAN_FACTOR = 8.0
#: A spike must come back within this many keys after the step that starts it.
SPIKE_RETURN_FRAMES = 3
#: A pop is at least this fast (deg/s: the unwrap's spin speed, 15 deg in one frame at 120 fps) ...
POP_MIN_SPEED = 1800.0
#: ... and this many times the track's median key speed ...
POP_MEDIAN_FACTOR = 20.0
#: ... and this many times the speed of the steps before and after it (an isolated jump, not the peak
#: of a fast swing). The corpus's walks, dances and gestures have none except cmu_12_01_walk's
#: T-pose first frame (82 deg in one frame, 9,874 deg/s, on LeftArm).
POP_ISOLATION = 4.0
#: A flip whose middle angle is within this many degrees of +-90 is a gimbal-lock flip: no Euler
#: sequence through that pose can be continuous, so an unwrap cannot remove it.
FLIP_GIMBAL_DEG = 10.0
#: Agreement (degrees, per channel) between a flip's next key values and the decomposition followed
#: continuously along the step, for the step to count as a continuous swing (:func:`flip_details`).
FLIP_FOLLOW_TOL_DEG = 0.01


@dataclass
class TrackReport:
    """Problem counts for one rotation track (the CLI's ``inspect`` JSON rows)."""

    path: str
    kind: str
    order: str
    keys: int
    start: float
    end: float
    wrap_jumps: int
    euler_flips: int
    hemisphere_flips: int
    gimbal_keys: int
    spikes: int
    max_angular_speed: float
    pops: int = 0

    def as_dict(self) -> dict:
        """Plain JSON-ready dict with exactly the CLI keys (in field order; ``pops`` last, added after
        the others)."""
        return asdict(self)


@dataclass
class Problem:
    """One problem at a key: ``index``/``time`` (seconds) of the key where it shows, ``detail`` text."""

    path: str
    time: float
    kind: str
    index: int
    detail: str


def _auto_bound(speeds: np.ndarray) -> float:
    sp = speeds[:-1]
    sp = sp[np.isfinite(sp)]
    med = _median(sp) if sp.size else 0.0
    return max(SPIKE_MIN_SPEED, SPIKE_MEDIAN_FACTOR * med)


def _median(x: np.ndarray) -> float:
    """``np.median`` of a finite 1-D array, bit for bit (the middle value, or the mean of the two
    middle ones), without np.median's masked-array check: it imports numpy.ma, a fifth of a
    headless ``inspect`` run's start-up."""
    s = np.sort(x)
    m = s.shape[0] // 2
    return float(s[m]) if s.shape[0] % 2 else float((s[m - 1] + s[m]) / 2.0)


def default_spike_speed(times, quats) -> float:
    """The automatic spike bound (deg/s): ``max(720, 8 x median key-to-key speed)``."""
    sp = angular_speed(times, quats)
    if sp.shape[0] < 2:
        return SPIKE_MIN_SPEED
    return _auto_bound(sp)


def _spikes(
    t: np.ndarray, q: np.ndarray, speed: float | None, steps: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, mask)``: bool ``(N,)`` keys that begin a spike (the last good key before it) and the
    outlier keys themselves. ``steps``: precomputed ``(N-1,)`` geodesic steps (degrees)."""
    n = t.shape[0]
    starts = np.zeros(n, dtype=bool)
    mask = np.zeros(n, dtype=bool)
    if n < 3:
        return starts, mask
    size = geodesic_angle(q[:-1], q[1:]) if steps is None else steps
    if speed is None:
        speed = _auto_bound(step_speeds(t, size))
    with np.errstate(divide="ignore", invalid="ignore"):
        fast = (size > 0) & (size > speed * np.diff(t))
    cand = np.nonzero(fast)[0]  # few: only these need the return test
    ret = np.zeros(cand.shape[0], dtype=np.int64)
    # First key j in i+2 .. i+1+SPIKE_RETURN_FRAMES back within half the step's size of key i.
    for k in range(2, SPIKE_RETURN_FRAMES + 2):
        sel = np.nonzero((ret == 0) & (cand + k < n))[0]
        if sel.size == 0:
            continue
        i = cand[sel]
        back = geodesic_angle(q[i], q[i + k]) <= 0.5 * size[i]
        ret[sel[back]] = k
    hit = ret > 0
    starts[cand[hit]] = True
    for k in range(2, SPIKE_RETURN_FRAMES + 2):
        # Outliers are keys i+1 .. i+k-1 for a spike starting at i and returning at i+k.
        src = cand[ret == k]
        for j in range(1, k):
            mask[src + j] = True
    return starts, mask


def spike_mask(times, quats, speed_deg_s: float | None = None) -> np.ndarray:
    """Bool ``(N,)``: the outlier keys of spikes.

    A spike starts with a geodesic step i -> i+1 faster than ``speed_deg_s`` (deg/s; None = automatic,
    :func:`default_spike_speed`) and ends at the first key j in ``i+2 .. i+1+3`` that is back within
    half that step's size of key i; keys i+1 .. j-1 are marked (what a despiker replaces).
    """
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    q = np.asarray(quats, dtype=np.float64)
    return _spikes(t, q, speed_deg_s)[1]


def _pop_steps(
    size: np.ndarray, dt: np.ndarray, inside: np.ndarray, med: np.ndarray, spike_keys
) -> np.ndarray:
    """Bool ``(N-1,)`` pop steps of one or more tracks joined end to end: ``size`` geodesic steps
    (degrees), ``dt`` seconds, ``inside`` False for the steps across two tracks, ``med (N-1,)`` the
    median key speed of each step's track, ``spike_keys (N,)`` the keys spikes replace."""
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(size > 0, size / dt, 0.0)
    sp = np.where(inside, sp, 0.0)
    fast = (sp >= np.maximum(POP_MIN_SPEED, POP_MEDIAN_FACTOR * med)) & inside
    if not fast.any():
        return fast
    before = np.concatenate([[0.0], sp[:-1]])
    after = np.concatenate([sp[1:], [0.0]])
    alone = sp >= POP_ISOLATION * np.maximum(before, after)
    # A step into or out of a spike's outlier keys is the spike, which comes back.
    spiky = spike_keys[:-1] | spike_keys[1:]
    return fast & alone & ~spiky


def pop_mask(times, quats, spike_speed: float | None = None) -> np.ndarray:
    """Bool ``(N-1,)``: the key steps ``i -> i+1`` that are pops (module docstring): at least
    :data:`POP_MIN_SPEED` deg/s and :data:`POP_MEDIAN_FACTOR` x the median key speed, at least
    :data:`POP_ISOLATION` x both neighbouring steps, and not into or out of a spike (``spike_speed``
    as for :func:`spike_mask`). ``times (N,)`` seconds, ``quats (N, 4)``."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    q = np.asarray(quats, dtype=np.float64)
    if t.shape[0] < 2:
        return np.zeros(max(t.shape[0] - 1, 0), dtype=bool)
    size = geodesic_angle(q[:-1], q[1:])
    dt = np.diff(t)
    med = _median_speed(size, dt)
    keys = _spikes(t, q, spike_speed, size)[1]
    inside = np.ones(size.shape, dtype=bool)
    return _pop_steps(size, dt, inside, np.full(size.shape, med), keys)


def _median_speed(size: np.ndarray, dt: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(size > 0, size / dt, 0.0)
    sp = sp[np.isfinite(sp)]
    return _median(sp) if sp.size else 0.0


def key_euler_values(track: RotationTrack) -> tuple[np.ndarray, str]:
    """``(values (N, 3) degrees, order)`` the inspector judges: an Euler track's key values, a
    quaternion track's continuous decomposition as the graphs draw it (``display.key_euler``)."""
    if track.kind == EULER:
        return np.asarray(track.curve.value), track.order
    return key_euler(track), track.order


def gimbal_distance(middle_deg) -> np.ndarray:
    """Degrees from the middle angle(s) ``middle_deg`` (any winding) to the nearest gimbal lock (+-90)."""
    x = np.mod(np.asarray(middle_deg, dtype=np.float64) - 90.0, 180.0)
    return np.minimum(x, 180.0 - x)


@dataclass
class FlipDetail:
    """One Euler flip (key step ``index - 1 -> index``) and why it is there.

    ``middle_deg``: the middle angle of the track's order (degrees, in [-90, 90]) where the pose
    passes nearest gimbal lock on the geodesic step between the two keys (at a key or between);
    ``gimbal_distance``: its distance to +-90 (degrees);
    ``near_gimbal``: within :data:`FLIP_GIMBAL_DEG` of lock, or a *continuous swing* within the
    gimbal reach of its step (:func:`gimbal_reach`): the key values are the decomposition followed
    continuously along the step, which passes so near lock that its outer channels must turn more
    than :data:`FLIP_CHANNEL_DEG` (the reason it remains after an unwrap either way);
    ``step_deg``: the geodesic step between the two keys (degrees).
    """

    path: str
    time: float
    index: int
    axis: str
    middle_deg: float
    gimbal_distance: float
    near_gimbal: bool
    step_deg: float

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def reason(self) -> str:
        """One phrase: ``near gimbal lock (middle angle x = 86.2 deg)`` or why not."""
        where = f"middle angle {self.axis} = {self.middle_deg:.1f} deg"
        if self.near_gimbal and self.gimbal_distance > FLIP_GIMBAL_DEG:
            gain = 1.0 / max(float(np.sin(np.radians(self.gimbal_distance))), 1e-9)
            return (
                f"near gimbal lock ({where}, {self.gimbal_distance:.1f} deg from +-90: a continuous swing, "
                f"the outer channels turn up to {gain:.1f}x the {self.step_deg:.1f} deg step there)"
            )
        if self.near_gimbal:
            return f"near gimbal lock ({where}, {self.gimbal_distance:.1f} deg from +-90)"
        return f"not near gimbal lock ({where}): a wrap/flip an unwrap removes"


class _Steps:
    """Key values and the Euler flips of one track (what :func:`flip_details` needs)."""

    def __init__(self, track: RotationTrack):
        t = np.asarray(track.curve.time)
        n = t.shape[0]
        self.t = t
        self.euler, self.order = key_euler_values(track)
        q = key_quaternions(track) if n else np.zeros((0, 4))
        self.q = q
        if n >= 2:
            self.de = np.diff(self.euler, axis=0)
            self.geo = geodesic_angle(q[:-1], q[1:])
            self.flip = np.any(np.abs(wrap180(self.de)) > FLIP_CHANNEL_DEG, axis=1) & (
                self.geo < FLIP_GEODESIC_DEG
            )
        else:
            self.de = np.zeros((0, 3))
            self.geo = np.zeros(0)
            self.flip = np.zeros(0, dtype=bool)


class _Findings(_Steps):
    """Per-key boolean findings of one track, computed once for counts and problem lists."""

    def __init__(self, track: RotationTrack, spike_speed: float | None):
        super().__init__(track)
        t, q, e = self.t, self.q, self.euler
        n = t.shape[0]
        if n >= 2:
            self.wrap = np.any(np.abs(self.de) > WRAP_DEG, axis=1)
            if track.kind == EULER:
                self.hemi = np.zeros(n - 1, dtype=bool)
            else:
                v = np.asarray(track.curve.value)
                self.hemi = np.einsum("ij,ij->i", v[:-1], v[1:]) < 0
            self.speed = step_speeds(t, self.geo)
        else:
            self.wrap = self.hemi = np.zeros(0, dtype=bool)
            self.speed = np.zeros(n)
        mid = np.abs(wrap180(e[:, middle_axis(self.order)])) if n else np.zeros(0)
        self.gimbal = np.abs(mid - 90.0) <= GIMBAL_DEG
        self.spike_start, self.spike_keys = _spikes(t, q, spike_speed, self.geo if n >= 2 else None)
        if n >= 2:
            dt = np.diff(t)
            med = np.full(n - 1, _median_speed(self.geo, dt))
            self.pop = _pop_steps(self.geo, dt, np.ones(n - 1, dtype=bool), med, self.spike_keys)
        else:
            self.pop = np.zeros(0, dtype=bool)


class _Part:
    """One track's slice of :func:`_joined_findings`: the attributes of :class:`_Findings`."""

    __slots__ = ("t", "euler", "order", "q", "de", "geo", "flip", "wrap", "hemi", "speed", "gimbal")
    __slots__ += ("spike_start", "spike_keys", "pop")


def _joined_findings(tracks: list[RotationTrack], spike_speed: float | None) -> list[_Part]:
    """:class:`_Findings` of many tracks of one kind and order (each at least 3 keys) in one pass over
    their keys joined end to end: the same arrays, value for value (tested), with steps across two
    tracks excluded. ``inspect`` of a 304-track ``.anim`` spent ~1 ms per track in numpy call
    overheads of the per-track analysis (as long as reading the file); this is one call per kind."""
    kind, order = tracks[0].kind, tracks[0].order
    lens = np.array([tr.n_keys for tr in tracks], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    ends = starts + lens  # one past each track's last key
    t = np.concatenate([tr.curve.time for tr in tracks])
    v = np.concatenate([tr.curve.value for tr in tracks])
    n = t.shape[0]
    inside = np.ones(n - 1, dtype=bool)
    inside[ends[:-1] - 1] = False  # the step from one track's last key to the next one's first
    first = np.repeat(starts, lens)
    if kind == EULER:
        q = euler_to_quat(v, order)
        euler = v
    else:
        q = quat_normalize(v)
        # display.key_euler per track: hemisphere-continuous keys, then the continuous decomposition.
        neg = np.einsum("ij,ij->i", q[1:], q[:-1]) < 0
        neg &= inside
        count = np.concatenate([[0], np.cumsum(neg)])
        flipped = ((count - count[first]) & 1).astype(bool)
        keys = np.where(flipped[:, None], -q, q)
        euler = _choose(quat_to_euler(keys, order), np.arange(n, dtype=np.float64), order, 0.0, starts)[0]
    de = np.diff(euler, axis=0)
    geo = geodesic_angle(q[:-1], q[1:])
    flip = np.any(np.abs(wrap180(de)) > FLIP_CHANNEL_DEG, axis=1) & (geo < FLIP_GEODESIC_DEG) & inside
    wrap = np.any(np.abs(de) > WRAP_DEG, axis=1) & inside
    hemi = (np.einsum("ij,ij->i", v[:-1], v[1:]) < 0) & inside if kind != EULER else np.zeros(n - 1, bool)
    dt = np.diff(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(geo > 0, geo / dt, 0.0)
    speed = np.append(sp, 0.0)
    speed[ends - 1] = sp[ends - 2]  # a track's last key repeats its last step (_speeds)
    mid = np.abs(wrap180(euler[:, middle_axis(order)]))
    gimbal = np.abs(mid - 90.0) <= GIMBAL_DEG
    spike_start, spike_keys = _joined_spikes(q, geo, dt, sp, inside, starts, ends, spike_speed)
    pop = _pop_steps(geo, dt, inside, _joined_medians(sp, inside, starts, ends), spike_keys)
    parts = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        p = _Part()
        p.t, p.euler, p.order, p.q = t[a:b], euler[a:b], order, q[a:b]
        p.de, p.geo, p.flip, p.wrap, p.hemi = (
            de[a : b - 1],
            geo[a : b - 1],
            flip[a : b - 1],
            wrap[a : b - 1],
            hemi[a : b - 1],
        )
        p.speed, p.gimbal = speed[a:b], gimbal[a:b]
        p.spike_start, p.spike_keys = spike_start[a:b], spike_keys[a:b]
        p.pop = pop[a : b - 1]
        parts.append(p)
    return parts


def _joined_spikes(q, size, dt, sp, inside, starts, ends, spike_speed):
    """:func:`_spikes` of every track of :func:`_joined_findings` (steps across tracks excluded; the
    automatic bound from each track's own median speed)."""
    n = q.shape[0]
    if spike_speed is None:
        # _auto_bound per track, from the median of its finite step speeds (one sort of all of them).
        med = _joined_medians(sp, inside, starts, ends)
        step_bound = np.where(inside, np.maximum(SPIKE_MIN_SPEED, SPIKE_MEDIAN_FACTOR * med), np.inf)
    else:
        step_bound = np.full(n - 1, float(spike_speed))
    with np.errstate(divide="ignore", invalid="ignore"):
        fast = (size > 0) & (size > step_bound * dt) & inside
    track_end = np.repeat(ends, ends - starts)  # one past the last key of each key's track
    cand = np.nonzero(fast)[0]
    ret = np.zeros(cand.shape[0], dtype=np.int64)
    for k in range(2, SPIKE_RETURN_FRAMES + 2):
        sel = np.nonzero((ret == 0) & (cand + k < track_end[cand]))[0]
        if sel.size == 0:
            continue
        i = cand[sel]
        back = geodesic_angle(q[i], q[i + k]) <= 0.5 * size[i]
        ret[sel[back]] = k
    starts_mask = np.zeros(n, dtype=bool)
    mask = np.zeros(n, dtype=bool)
    starts_mask[cand[ret > 0]] = True
    for k in range(2, SPIKE_RETURN_FRAMES + 2):
        src = cand[ret == k]
        for j in range(1, k):
            mask[src + j] = True
    return starts_mask, mask


def _joined_medians(sp, inside, starts, ends) -> np.ndarray:
    """Per step ``(N-1,)`` of :func:`_joined_findings`, the median key speed of its track (the same
    value as :func:`_median_speed` of the track alone), by one sort of all the steps."""
    seg = np.repeat(np.arange(len(starts)), ends - starts - 1)
    s_in = sp[inside]
    ok = np.isfinite(s_in)
    vals, vseg = s_in[ok], seg[ok]
    order_ = np.lexsort((vals, vseg))
    vals = vals[order_]
    cnt = np.bincount(vseg, minlength=len(starts))
    off = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    lo = np.minimum(off + (cnt - 1) // 2, max(len(vals) - 1, 0))
    hi = np.minimum(off + cnt // 2, max(len(vals) - 1, 0))
    med = np.where(cnt > 0, (vals[lo] + vals[hi]) / 2 if len(vals) else 0.0, 0.0)
    out = np.zeros(sp.shape[0])
    out[inside] = med[seg]
    return out


def _clip_findings(tracks, spike_speed: float | None) -> list:
    """:class:`_Findings` (or an equal :class:`_Part`) of each of ``tracks``, in order (all of them
    held at once: :func:`_findings_in_parts` hands them over a part at a time)."""
    return _per_track(tracks, spike_speed, lambda _tr, f: f)


def _per_track(tracks: list, spike_speed: float | None, fn) -> list:
    """``[fn(track, findings)]`` of each of ``tracks``, in order, made a part of
    :func:`_findings_in_parts` at a time (each part's arrays dropped once ``fn`` has read them)."""
    out: list = [None] * len(tracks)
    for part in _findings_in_parts(tracks, spike_speed):
        for i, f in part:
            out[i] = fn(tracks[i], f)
    return out


#: Keys analysed in one joined pass at most (:func:`_findings_in_parts`). The 10-minute take's
#: 2.2M keys in one pass made ``inspect`` peak at 609 MB; a pass of 250,000 keys still makes one
#: numpy call per step for dozens of tracks of a clip of short ones.
_JOIN_KEYS = 250_000


def _findings_in_parts(tracks, spike_speed: float | None):
    """``[(index, findings)]`` lists covering each of ``tracks`` once: tracks of at least 3 keys
    grouped by kind and order through :func:`_joined_findings`, up to :data:`_JOIN_KEYS` keys a pass
    (so a caller that drops each part bounds its memory), the others alone."""
    groups: dict[tuple, list[int]] = {}
    for i, tr in enumerate(tracks):
        if tr.n_keys >= 3:
            groups.setdefault((tr.kind, tr.order), []).append(i)
        else:
            yield [(i, _Findings(tr, spike_speed))]
    for idx in groups.values():
        chunk: list[int] = []
        keys = 0
        for n, i in enumerate(idx):
            chunk.append(i)
            keys += tracks[i].n_keys
            if keys >= _JOIN_KEYS or n == len(idx) - 1:
                yield list(zip(chunk, _joined_findings([tracks[j] for j in chunk], spike_speed), strict=True))
                chunk, keys = [], 0


#: Points per flip step at which :func:`flip_details` measures the distance to gimbal lock.
_FLIP_PATH_SAMPLES = 33


def _flip_details(track: RotationTrack, f: _Steps) -> list[FlipDetail]:
    idx = np.nonzero(f.flip)[0] if track.n_keys >= 2 else np.zeros(0, dtype=np.int64)
    if idx.size == 0:
        return []
    mid = middle_axis(f.order)
    # The pose passes nearest the lock somewhere on the (short, < 10 deg) step between the two keys,
    # not necessarily at a key: measure along the geodesic between them.
    q0, q1 = f.q[idx], f.q[idx + 1]
    rel = quat_log(quat_mul(quat_conj(q0), q1))  # (K, 3) radians
    s = np.linspace(0.0, 1.0, _FLIP_PATH_SAMPLES)
    path = quat_mul(
        np.repeat(q0, s.size, axis=0), quat_exp((rel[:, None, :] * s[None, :, None]).reshape(-1, 3))
    )
    e_path = quat_to_euler(path, f.order).reshape(idx.size, s.size, 3)
    m_path = e_path[:, :, mid]
    nearest = np.argmax(np.abs(m_path), axis=1)
    m = m_path[np.arange(idx.size), nearest]
    d = 90.0 - np.abs(m)
    near = d <= FLIP_GIMBAL_DEG
    # Past FLIP_GIMBAL_DEG a "flip" can still be motion: the outer channels of a continuous
    # decomposition turn up to step / sin(distance to lock), so an 8.7 deg step 10.2 deg from lock
    # turns them 49 deg (the written ZXY curves of the corpus Gangnam BVH, converted from its XYZ
    # frames). Such a step is a swing near lock, not a flip an unwrap removes, when the key values are
    # the decomposition followed continuously along it.
    maybe = ~near & (d <= gimbal_reach(f.geo[idx]))
    if np.any(maybe):
        near[maybe] = _follows_path(f.euler[idx[maybe]], e_path[maybe], f.euler[idx[maybe] + 1], f.order)
    axis = "xyz"[mid]
    return [
        FlipDetail(
            track.path,
            float(f.t[i + 1]),
            int(i + 1),
            axis,
            float(mk),
            float(dk),
            bool(nk),
            float(f.geo[i]),
        )
        for i, mk, dk, nk in zip(idx, m, d, near, strict=True)
    ]


def gimbal_reach(step_deg) -> np.ndarray:
    """Degrees from gimbal lock within which a continuous Euler curve's outer channels can turn more
    than :data:`FLIP_CHANNEL_DEG` over a geodesic step of ``step_deg`` degrees (they turn at most
    step / sin(distance) there), never less than :data:`FLIP_GIMBAL_DEG`."""
    ratio = np.clip(np.asarray(step_deg, dtype=np.float64) / FLIP_CHANNEL_DEG, 0.0, 1.0)
    return np.maximum(np.degrees(np.arcsin(ratio)), FLIP_GIMBAL_DEG)


def _follows_path(e0: np.ndarray, e_path: np.ndarray, e1: np.ndarray, order: str) -> np.ndarray:
    """Bool ``(K,)``: the Euler values ``e1 (K, 3)`` are the decomposition ``e_path (K, S, 3)`` (samples
    along each step, degrees) followed continuously from ``e0 (K, 3)``: at each sample the equivalent
    triple and 360 degree shifts nearest the previous sample, within :data:`FLIP_FOLLOW_TOL_DEG`."""
    from .rotations import equivalent_euler

    cur = np.asarray(e0, dtype=np.float64)
    for j in range(e_path.shape[1]):  # the samples of a step (33), vectorized over the flips
        best, best_d = None, None
        for cand in (e_path[:, j], equivalent_euler(e_path[:, j], order)):
            shifted = cand + 360.0 * np.round((cur - cand) / 360.0)
            dist = np.sum((shifted - cur) ** 2, axis=1)
            if best is None:
                best, best_d = shifted, dist
            else:
                take = dist < best_d
                best = np.where(take[:, None], shifted, best)
                best_d = np.where(take, dist, best_d)
        cur = best
    return np.all(np.abs(cur - e1) <= FLIP_FOLLOW_TOL_DEG, axis=1)


def flip_details(track: RotationTrack) -> list[FlipDetail]:
    """Every Euler flip of ``track`` (the ones :func:`inspect_track` counts) with its middle angle and
    whether it sits within :data:`FLIP_GIMBAL_DEG` of gimbal lock, in key order."""
    return _flip_details(track, _Steps(track))


def inspect_track(track: RotationTrack, spike_speed: float | None = None) -> TrackReport:
    """Counts of each problem kind for ``track`` (definitions in the module docstring).

    ``spike_speed``: deg/s bound for spikes; None = automatic (:func:`default_spike_speed`).
    ``max_angular_speed`` is the largest key-to-key geodesic speed (deg/s).
    """
    return _report(track, _Findings(track, spike_speed))


def flip_details_all(tracks) -> list[FlipDetail]:
    """:func:`flip_details` of every track of ``tracks`` (in order), analysed together by kind and
    order (``clean``'s flips left in the written file)."""
    return [fd for per_track in _per_track(list(tracks), None, _flip_details) for fd in per_track]


def _report(track: RotationTrack, f: _Findings) -> TrackReport:
    n = track.n_keys
    return TrackReport(
        path=track.path,
        kind=track.kind,
        order=f.order,
        keys=n,
        start=float(f.t[0]) if n else 0.0,
        end=float(f.t[-1]) if n else 0.0,
        wrap_jumps=int(np.count_nonzero(f.wrap)),
        euler_flips=int(np.count_nonzero(f.flip)),
        hemisphere_flips=int(np.count_nonzero(f.hemi)),
        gimbal_keys=int(np.count_nonzero(f.gimbal)),
        spikes=int(np.count_nonzero(f.spike_start)),
        max_angular_speed=float(np.max(f.speed[np.isfinite(f.speed)], initial=0.0)),
        pops=int(np.count_nonzero(f.pop)),
    )


def _fmt3(v: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:.3f}" for x in v) + ")"


def find_problems(track: RotationTrack, spike_speed: float | None = None) -> list[Problem]:
    """Every problem of ``track`` as a :class:`Problem`, sorted by key index then kind.

    Step problems (wrap, flip, hemisphere) are reported at the key the step lands on; spikes at their
    first outlier key; gimbal at the key itself. The counts agree with :func:`inspect_track`.
    """
    f = _Findings(track, spike_speed)
    t, e = f.t, f.euler
    out: list[Problem] = []
    path = track.path

    def add(kind: str, idx: int, detail: str) -> None:
        out.append(Problem(path, float(t[idx]), kind, int(idx), detail))

    for i in np.nonzero(f.wrap)[0]:
        add("wrap", i + 1, f"Euler {_fmt3(e[i])} -> {_fmt3(e[i + 1])}: a channel jumps more than 180 deg")
    for fd in _flip_details(track, f):
        i = fd.index - 1
        add(
            "flip",
            fd.index,
            f"Euler {_fmt3(e[i])} -> {_fmt3(e[i + 1])} while the pose moves {f.geo[i]:.3f} deg; {fd.reason}",
        )
    for i in np.nonzero(f.hemi)[0]:
        add("hemisphere", i + 1, "quaternion key on the opposite hemisphere of the previous key")
    mid = middle_axis(f.order)
    axis = "xyz"[mid]
    for i in np.nonzero(f.gimbal)[0]:
        add("gimbal", i, f"middle angle {axis} = {e[i, mid]:.3f} deg is within 5 deg of +-90 ({f.order})")
    for i in np.nonzero(f.spike_start)[0]:
        step = geodesic_angle(f.q[i], f.q[i + 1])
        add("spike", i + 1, f"{step:.3f} deg step at {f.speed[i]:.1f} deg/s that comes straight back")
    for i in np.nonzero(f.pop)[0]:
        add("pop", i + 1, pop_detail(float(f.geo[i]), float(f.t[i + 1] - f.t[i]), f.speed))
    rank = {k: r for r, k in enumerate(PROBLEM_KINDS)}
    out.sort(key=lambda p: (p.index, rank[p.kind]))
    return out


def pop_detail(step_deg: float, dt: float, speeds: np.ndarray) -> str:
    """One phrase for a pop of ``step_deg`` degrees in ``dt`` seconds on a track whose key speeds
    are ``speeds (N,)`` deg/s."""
    sp = speeds[np.isfinite(speeds)]
    med = _median(sp) if sp.size else 0.0
    rate = step_deg / dt if dt > 0 else float("inf")
    times = f"{rate / med:,.0f}x the track's median {med:,.1f} deg/s" if med > 0 else "the track is still"
    return (
        f"{step_deg:.1f} deg in one key step ({dt:.4g} s: {rate:,.0f} deg/s, {times}) that does not come back"
    )


def inspect_clip(clip: Clip, spike_speed: float | None = None) -> list[TrackReport]:
    """One :class:`TrackReport` per rotation track of ``clip``, in track order."""
    return _per_track(list(clip.tracks), spike_speed, _report)
