"""BVH writer: a clip with a BVH skeleton (``clip.meta["hierarchy"]``, as :func:`~.bvh.read_bvh`
leaves it) written back as a ``.bvh`` file.

What is written (``shared/domain/rotations.md`` section 1; the inverse of :mod:`.bvh`):

* The hierarchy as read: joint names, nesting, ``OFFSET`` values (spelled to round-trip exactly),
  each joint's ``CHANNELS`` list in its own order (position channels included), ``End Site``\\ s.
* ``Frames`` and ``Frame Time``: when every rotation track is keyed at the same evenly spaced times
  from 0 s (a BVH read and cleaned, or resampled: its frames), those times are the frames; else the
  tracks are sampled at ``i / clip.frame_rate`` from 0 s to their last key. The file's own
  ``Frame Time`` text (``clip.meta["frame_time"]``) is kept when its rate is the frames' rate.
* Rotation channels: each joint's track in the joint's own intrinsic order (``"ZXY"`` for
  ``Zrotation Xrotation Yrotation``). An Euler track in that order keyed at the frames is written
  as it holds its values (an unwrapped track stays unwrapped: 190 is written as 190, not -170);
  any other track (another order, quaternion keys, keys off the frames: reduced or edited curves) is
  what Unity plays at the frames (:func:`~curveeditor.engine.clip.played`), decomposed in the joint's
  order and followed continuously (:func:`~curveeditor.engine.unwrap.continuous_euler`).
* Position channels: the joint's ``m_LocalPosition`` track at the frames.
* Everything is mirrored back from Unity's left-handed frame (:data:`.bvh.ROTATION_MIRROR`,
  :data:`.bvh.POSITION_MIRROR`: each is its own inverse).

Numbers: rotation values with at most 6 decimals (trailing zeros dropped; within 5e-7 deg of the
value, far inside the 0.01 deg a write may change the pose), positions with the shortest spelling
that reads back to the same float64 (6 decimals or fewer for the values capture files hold, Python's
``repr`` for the rest), all spelled by :func:`format_block` in one vectorized pass (numpy byte
matrices; 17-35 ms for CMU's 599 x 498 values where one ``%`` format of the block took 110 ms).

The read-back check compares the file with the clip at the frames only, and that is the whole
comparison: a BVH holds one pose per frame and nothing between frames (each player interpolates in
its own way: Blender's F-curves, our reader's ClampedAuto curves). When the clip handed to the writer
is itself per-frame samples of the same poses at the same times (a BVH read and cleaned), two such
sequences are the same motion exactly when their poses agree at every frame: whatever a player shows
between frames is a function of the frames alone, the same for both. When the clip holds curves
(reduced or edited keys), the file is what Unity plays of them at the frames, which is what the check
confirms; how much of the curve lies between frames is the frame rate's choice, not a writer error.

A clip that cannot be a BVH (no skeleton, a track that is not one of its joints, a joint with
channels and no track, keys before 0 s, too many frames) raises a one-line
:class:`~.errors.ClipWriteError`, before anything is written. The write is atomic (:mod:`.atomic`),
and ``io.write_checked`` reads the temp file back with :func:`~.bvh.read_bvh` and compares it with the
clip at the frames before it is put in place (:data:`.SAMPLE_FORMATS`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from ..engine.clip import EULER, Clip, played
from ..engine.curves import evaluate
from .atomic import atomic_write_bytes
from .bvh import (
    _CHANNELS,
    FRAME_RATE_RANGE,
    MAX_POSITION,
    MAX_ROTATION_DEG,
    POSITION_MIRROR,
    ROTATION_MIRROR,
    frame_rate_from_frame_time,
)
from .errors import ClipWriteError

__all__ = ["write_bvh", "bvh_bytes", "format_block", "MAX_MOTION_VALUES", "ROTATION_DECIMALS"]

#: Decimals of rotation channel values (degrees): within 5e-7 deg of the value.
ROTATION_DECIMALS = 6
#: Most motion values (frames x channels) one file may hold (about 1 GB of text): a clip whose
#: tracks end at 1e6 s would otherwise ask for 3e7 frames per channel.
MAX_MOTION_VALUES = 50_000_000
#: Values from this magnitude on are spelled by ``repr`` (the fixed point holds 10**16 in int64).
_FIXED_LIMIT = 1e10


# ------------------------------------------------------------------------------------------ numbers

#: "0000".."9999" as a (4, 10000) byte table, one row per digit place: four digits per gather.
_DIGITS4 = ((np.arange(10_000) // np.array([[1000], [100], [10], [1]])) % 10 + ord("0")).astype(np.uint8)
_ZERO, _MINUS, _POINT, _SPACE, _NEWLINE = (np.uint8(ord(ch)) for ch in "0-. \n")
_MARK = 1  # where a ``repr`` spelling goes (no number character is 0x01)


def _digits(x: np.ndarray, k: int, out: np.ndarray) -> None:
    """Non-negative integers ``x (M,)`` below ``10**k`` into ``out (k, M)``: zero-padded digit
    bytes, most significant first."""
    rest, j = x, k
    while j > 0:
        w = min(4, j)
        if j > 4:
            rest, low = np.divmod(rest, 10_000)
        else:
            low = rest
        for q in range(w):
            np.take(_DIGITS4[4 - w + q], low, out=out[j - w + q])
        j -= w


def format_block(values: np.ndarray, exact: np.ndarray | None = None, decimals: int = 6) -> bytes:
    """The rows of ``values (F, C)`` as text: numbers separated by spaces, one line per row.

    Each number is spelled with at most ``decimals`` decimals (fixed point, trailing zeros and a
    bare ``.`` dropped, no ``-`` on zero), so a value with that many decimals or fewer reads back
    exactly and any other within ``0.5 * 10**-decimals``. Columns flagged in ``exact (C,) bool`` must
    read back to the same float64: their values that the fixed point cannot hold exactly (more
    decimals) are spelled by ``repr``, as are values of 1e10 or more in any column.
    Values must be finite (``ValueError``).

    How: character position by character position (``(W, M)`` bytes, each row one contiguous numpy
    pass): sign, integer digits as wide as the largest value needs (gathered from a digit table,
    four per division), point, fraction; characters a number drops (leading and trailing zeros) are
    NUL bytes, deleted at the end by ``bytes.translate`` (a boolean mask over the matrix was 2-3x
    slower); ``repr`` spellings are spliced in at 0x01 marks. 17-35 ms for CMU's 599 x 498 values
    on the shared machine; one ``%`` format of the block took 110 ms.
    """
    v = np.asarray(values, dtype=np.float64)
    f, c = v.shape
    if v.size == 0:
        return b"\n" * f if c == 0 else b""
    if not 0 <= decimals <= 12:
        raise ValueError(f"format_block: decimals must be 0 to 12, got {decimals}")
    flat = v.reshape(-1)
    if not np.all(np.isfinite(flat)):
        raise ValueError("format_block: values must be finite")
    scale = 10.0**decimals
    a = np.abs(flat)
    fallback = a >= _FIXED_LIMIT
    n = np.rint(np.where(fallback, 0.0, a) * scale) if fallback.any() else np.rint(a * scale)
    if exact is not None and np.any(exact):
        ex = np.broadcast_to(np.asarray(exact, dtype=bool), (f, c)).reshape(-1)
        # n / scale is correctly rounded, as a reader's strtod of the spelled digits: equal means
        # the spelling reads back to this very float64.
        fallback |= ex & (n / scale != a)
        n[fallback] = 0.0
    n = n.astype(np.int64)
    ip, fp = np.divmod(n, 10**decimals)
    k = len(str(int(ip.max())))
    w = 1 + k + 1 + decimals + 1
    m = np.empty((w, flat.size), dtype=np.uint8)
    np.multiply(np.signbit(flat) & (n != 0), _MINUS, out=m[0])
    col = 1
    _digits(ip, k, m[col : col + k])
    started = m[col] != _ZERO  # leading zeros dropped; the last integer digit always kept
    for j in range(col, col + k - 1):
        if j > col:
            started |= m[j] != _ZERO
        m[j] *= started
    col += k
    _digits(fp, decimals, m[col + 1 : col + 1 + decimals])
    tail = np.zeros(flat.size, dtype=bool)  # trailing zeros dropped
    for j in range(col + decimals, col, -1):
        tail |= m[j] != _ZERO
        m[j] *= tail
    np.multiply(tail, _POINT, out=m[col])
    m[w - 1] = _SPACE
    m[w - 1, c - 1 :: c] = _NEWLINE
    idx = np.nonzero(fallback)[0]
    if idx.size:
        m[: w - 1, idx] = 0
        m[0, idx] = _MARK  # spliced below
    text = np.ascontiguousarray(m.T).tobytes().translate(None, b"\0")
    if not idx.size:
        return text
    pieces = text.split(bytes([_MARK]))
    spelled = [repr(float(x)).encode() for x in flat[idx]]
    return b"".join([p for pair in zip(pieces, spelled, strict=False) for p in pair] + [pieces[-1]])


def _spell(x: float) -> str:
    """One header number (an OFFSET) spelled to read back to the same float64."""
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


# ---------------------------------------------------------------------------------------- skeleton


def _hierarchy(clip: Clip, fname: str) -> list[dict]:
    """The skeleton in ``clip.meta`` checked for what a BVH needs; one-line errors otherwise."""
    hier = clip.meta.get("hierarchy") if isinstance(clip.meta, dict) else None
    if not hier:
        raise ClipWriteError(
            fname,
            None,
            "the clip has no BVH skeleton (joint hierarchy with offsets): only a clip read from a .bvh "
            "file can be written as BVH",
        )
    if clip.meta.get("mirror", "x") != "x":
        raise ClipWriteError(fname, None, f"unknown handedness conversion {clip.meta.get('mirror')!r}")
    out = []
    paths = set()
    for i, j in enumerate(hier):
        try:
            name, path, parent = j["name"], j["path"], j["parent"]
            offset = [float(x) for x in j["offset"]]
            channels = [str(ch) for ch in j["channels"]]
            end = j.get("end_site")
            end = None if end is None else [float(x) for x in end]
        except (KeyError, TypeError, ValueError):
            raise ClipWriteError(fname, None, f"BVH skeleton joint {i + 1} is malformed") from None
        if (
            not isinstance(name, str)
            or not name.strip()
            or any(ch in name for ch in "{}\r\n")
            or name != " ".join(name.split())
        ):
            raise ClipWriteError(fname, None, f"BVH joint name {name!r} cannot be written")
        if parent is not None and not (isinstance(parent, int) and 0 <= parent < i):
            raise ClipWriteError(
                fname, None, f"BVH joint {name!r}: parent {parent!r} is not an earlier joint"
            )
        if len(offset) != 3 or (end is not None and len(end) != 3):
            raise ClipWriteError(fname, None, f"BVH joint {name!r}: an offset needs 3 numbers")
        if not np.all(np.isfinite(offset + (end or []))):
            raise ClipWriteError(fname, None, f"BVH joint {name!r}: offset is not finite")
        lower = [ch.lower() for ch in channels]
        if any(ch not in _CHANNELS for ch in lower) or len(set(lower)) != len(lower):
            raise ClipWriteError(
                fname, None, f"BVH joint {name!r}: channels {' '.join(channels)} are not BVH's"
            )
        for kind in ("rotation", "position"):
            if sum(_CHANNELS[ch][0] == kind for ch in lower) not in (0, 3):
                raise ClipWriteError(
                    fname, None, f"BVH joint {name!r}: {kind} channels must be 0 or 3: {' '.join(channels)}"
                )
        if path in paths:
            raise ClipWriteError(fname, None, f"BVH skeleton has the joint path {path!r} twice")
        paths.add(path)
        out.append(
            {
                "name": name,
                "path": path,
                "parent": parent,
                "offset": offset,
                "channels": channels,
                "end_site": end,
            }
        )
    return out


def _header(joints: list[dict]) -> str:
    """The HIERARCHY section (tab-indented, one ROOT per parentless joint)."""
    lines = ["HIERARCHY"]
    children: list[list[int]] = [[] for _ in joints]
    for i, j in enumerate(joints):
        if j["parent"] is not None:
            children[j["parent"]].append(i)
    # Iterative depth-first walk in file order: ("open", i) emits a joint and schedules its close.
    stack: list[tuple[str, int, int]] = [
        ("open", i, 0) for i in reversed(range(len(joints))) if joints[i]["parent"] is None
    ]
    while stack:
        what, i, depth = stack.pop()
        j = joints[i]
        tab = "\t" * depth
        if what == "close":
            if j["end_site"] is not None:
                lines += [
                    f"{tab}\tEnd Site",
                    f"{tab}\t{{",
                    f"{tab}\t\tOFFSET {' '.join(map(_spell, j['end_site']))}",
                    f"{tab}\t}}",
                ]
            lines.append(f"{tab}}}")
            continue
        lines.append(f"{tab}{'ROOT' if j['parent'] is None else 'JOINT'} {j['name']}")
        lines.append(f"{tab}{{")
        lines.append(f"{tab}\tOFFSET {' '.join(map(_spell, j['offset']))}")
        if j["channels"]:
            lines.append(f"{tab}\tCHANNELS {len(j['channels'])} {' '.join(j['channels'])}")
        stack.append(("close", i, depth))
        stack.extend(("open", k, depth + 1) for k in reversed(children[i]))
    return "\n".join(lines) + "\n"


def _order(channels: list[str], kind: str) -> str:
    """The axes of a joint's ``kind`` channels in their listed order (``"ZXY"``)."""
    return "".join("XYZ"[_CHANNELS[ch.lower()][1]] for ch in channels if _CHANNELS[ch.lower()][0] == kind)


# ------------------------------------------------------------------------------------------ motion


def _frames(clip: Clip, keyed: list[np.ndarray], fname: str) -> tuple[np.ndarray, float]:
    """Frame times (seconds, from 0) and the frame rate (Hz) for tracks keyed at ``keyed``."""
    nonempty = [t for t in keyed if t.shape[0]]
    if not nonempty:
        return np.zeros(0), float(clip.frame_rate)
    first = nonempty[0]
    lo, hi = FRAME_RATE_RANGE
    if min(float(t[0]) for t in nonempty) < -1e-9:
        raise ClipWriteError(fname, None, "the clip has keys before 0 s: BVH frames start at 0 s")
    shared = len(nonempty) == len(keyed) and all(t is first or np.array_equal(t, first) for t in nonempty)
    if shared and first.shape[0] >= 2 and abs(first[0]) <= 1e-9:
        dt = np.diff(first)
        rate = frame_rate_from_frame_time(float(first[-1] - first[0]) / (first.shape[0] - 1))
        if np.all(np.abs(dt - dt[0]) <= 1e-9 + 1e-6 * dt[0]) and lo <= rate <= hi:
            return first, rate
    if shared and first.shape[0] == 1 and abs(first[0]) <= 1e-9:
        return first, float(clip.frame_rate)
    rate = float(clip.frame_rate)
    if not lo <= rate <= hi:
        raise ClipWriteError(fname, None, f"frame rate {rate:g} fps is outside BVH's {lo:g} to {hi:,g} fps")
    end = max(float(t[-1]) for t in nonempty)
    count = int(np.floor(end * rate + 1e-6)) + 1
    if (count - 1) / rate < end - 1e-9:
        count += 1  # a last frame at or past the last key
    return np.arange(count, dtype=np.float64) / rate, rate


def _frame_time_text(clip: Clip, rate: float) -> str:
    ft = clip.meta.get("frame_time") if isinstance(clip.meta, dict) else None
    if isinstance(ft, float | int) and ft > 0 and frame_rate_from_frame_time(float(ft)) == rate:
        return repr(float(ft))
    return repr(1.0 / rate)


def bvh_bytes(clip: Clip, fname: str = "<clip>") -> tuple[bytes, list[str]]:
    """The BVH file of ``clip`` and the writer's warnings (see the module docstring).

    Raises :class:`ClipWriteError` (one line naming ``fname``) for a clip that cannot be a BVH."""
    from ..engine.unwrap import continuous_euler

    joints = _hierarchy(clip, fname)
    by_path = {j["path"]: i for i, j in enumerate(joints)}
    rot_joint = {}
    empty = bool(clip.tracks) and all(t.n_keys == 0 for t in clip.tracks)  # a BVH of 0 frames
    for t in clip.tracks:
        i = by_path.get(t.path)
        if i is None or not _order(joints[i]["channels"], "rotation"):
            raise ClipWriteError(
                fname,
                None,
                f"track {t.path or '(root)'!r} is not a joint with rotation channels in the BVH skeleton",
            )
        if t.n_keys == 0 and not empty:
            raise ClipWriteError(fname, None, f"track {t.path or '(root)'!r} has no keys")
        rot_joint[i] = t
    pos_joint = {}
    dropped = 0
    for o in clip.other_tracks:
        i = by_path.get(o.path)
        if (
            i is None
            or o.attribute != "m_LocalPosition"
            or o.curve is None
            or o.curve.value.shape[1:] != (3,)
            or not _order(joints[i]["channels"], "position")
            or i in pos_joint
        ):
            dropped += 1
            continue
        pos_joint[i] = o
    for i, j in enumerate(joints):
        for kind, have in (("rotation", rot_joint), ("position", pos_joint)):
            if _order(j["channels"], kind) and i not in have:
                raise ClipWriteError(
                    fname,
                    None,
                    f"joint {j['path']!r} has {kind} channels but the clip has no {kind} track for it",
                )
    # The rotation tracks decide the frames (a resample moves them, not the positions, which are
    # evaluated at whatever frames the rotations have).
    keyed = [t.times for t in rot_joint.values()] or [o.curve.time for o in pos_joint.values()]
    frames, rate = _frames(clip, keyed, fname)
    n_channels = sum(len(j["channels"]) for j in joints)
    if frames.shape[0] * max(n_channels, 1) > MAX_MOTION_VALUES:
        raise ClipWriteError(
            fname,
            None,
            f"{frames.shape[0]:,} frames x {n_channels} channels is over the {MAX_MOTION_VALUES:,} values "
            "one BVH file may hold",
        )

    # Per joint, its channels' values by axis (F, 3) in BVH's frame; then one gather in file order.
    blocks, columns, exact = [], [], []
    for i, j in enumerate(joints):
        have = {}
        if i in rot_joint:
            t = rot_joint[i]
            order = _order(j["channels"], "rotation")
            if t.kind == EULER and t.order == order and np.array_equal(t.times, frames):
                e = np.asarray(t.curve.value, dtype=np.float64)
            elif frames.shape[0] == 0:
                e = np.zeros((0, 3))
            else:
                e = continuous_euler(played(t, frames), order)
            have["rotation"] = len(blocks)
            blocks.append(e * ROTATION_MIRROR)
        if i in pos_joint:
            curve = pos_joint[i].curve
            if np.array_equal(curve.time, frames):
                p = curve.value
            else:
                p = evaluate(curve, frames) if frames.shape[0] else np.zeros((0, 3))
            have["position"] = len(blocks)
            blocks.append(np.asarray(p, dtype=np.float64) * POSITION_MIRROR)
        for ch in j["channels"]:
            kind, axis = _CHANNELS[ch.lower()]
            columns.append(3 * have[kind] + axis)
            exact.append(kind == "position")
    if blocks:
        motion = np.concatenate(blocks, axis=1)[:, columns]
    else:
        motion = np.zeros((frames.shape[0], 0))
    _check_values(motion, np.array(exact, dtype=bool), fname, joints)
    head = (
        _header(joints) + f"MOTION\nFrames: {frames.shape[0]}\nFrame Time: {_frame_time_text(clip, rate)}\n"
    )
    body = format_block(motion, np.array(exact, dtype=bool), ROTATION_DECIMALS)
    warnings = []
    if dropped:
        warnings.append(
            f"{dropped} non-rotation curve(s) not written "
            "(BVH holds the skeleton's rotation and position channels only)"
        )
    return head.encode("utf-8") + body, warnings


def _check_values(motion: np.ndarray, exact: np.ndarray, fname: str, joints: list[dict]) -> None:
    """Refuse values the reader would refuse (non-finite, past its limits): nothing written."""
    if motion.size == 0:
        return
    limit = np.where(exact, MAX_POSITION, MAX_ROTATION_DEG)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(motion) <= limit)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        what = "position" if exact[c] else "rotation"
        raise ClipWriteError(
            fname,
            None,
            f"frame {r}: {what} value {motion[r, c]:g} in column {c + 1} is not finite or beyond "
            f"+-{limit[c]:g}",
        )


def write_bvh(
    clip: Clip,
    path: str | os.PathLike,
    protect: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
) -> list[str]:
    """Write ``clip`` as a BVH file, atomically; returns warnings (curves a BVH cannot hold).

    Raises :class:`ClipWriteError` (nothing written) when the clip cannot be a BVH (module
    docstring), the output is protected, or it cannot be written."""
    fname = os.fspath(path)
    data, warnings = bvh_bytes(clip, fname)
    atomic_write_bytes(path, data, protect=protect)
    return warnings
