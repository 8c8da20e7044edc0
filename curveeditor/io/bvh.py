"""BVH (Biovision Hierarchy) reader: a motion-capture file becomes a :class:`~curveeditor.engine.clip.Clip`
(the writer is :mod:`.bvh_writer`).

What comes out (``shared/domain/rotations.md`` section 1):

* One Euler :class:`RotationTrack` per joint that has rotation channels, named by its path from the
  root (``Hips/Spine/Spine1``). The rotation order is the joint's own *intrinsic* order as listed in
  its ``CHANNELS`` line (``Zrotation Xrotation Yrotation`` -> ``"ZXY"``, ``R = Rz * Rx * Ry``); orders
  may differ per joint. Values are degrees, columns (x, y, z) by axis.
* One :class:`OtherTrack` (``kind="position"``, ``attribute="m_LocalPosition"``, 3 components x, y, z,
  in the file's length unit) per joint that has position channels (usually only the root).
* BVH is right-handed, Unity left-handed: everything is mirrored through the X axis. Positions
  ``(x, y, z) -> (-x, y, z)``; rotations ``(x, y, z, w) -> (x, -y, -z, w)``. Conjugating an axis
  rotation by the mirror keeps a rotation about X and negates rotations about Y and Z, so each factor
  of the Euler product maps on its own: Euler values ``(ex, ey, ez) -> (ex, -ey, -ez)`` in the *same*
  order (``tests/io/test_bvh.py`` checks this against the quaternion mirror).
* Keys: one per frame at ``t = i / frame_rate`` with ``frame_rate = 1 / frame_time``, snapped to the
  nearest whole number when within 0.01 % of it: files print the frame time rounded (``0.033333``,
  ``.0083333``), and the clip should be the 30 or 120 fps clip its author meant, with keys on Unity's
  frame boundaries (the drift is below 0.4 ms after 1000 frames). ``clip.meta["frame_time"]`` keeps
  the file's value. BVH is sampled data,
  so the tangents are Unity's ClampedAuto (``tangents.make_curve(mode="clamped_auto")``): the curve
  passes through every frame exactly, is smooth between frames (no corners as with linear tangents)
  and never overshoots the neighbouring frame values (no invented motion as with Auto tangents).
  Channel values are kept as stored (no unwrap): a 179 -> -179 jump in the file stays visible so the
  inspector can flag it and ``unwrap`` can fix it.
* ``clip.meta["hierarchy"]``: the skeleton as written in the file (unmirrored offsets, parents, channel
  lists, end sites) so a writer can produce BVH again; ``clip.meta["mirror"] = "x"`` records the
  conversion applied to the motion.

Bad input (missing sections, truncated hierarchy or motion, channel count mismatches, non-numeric or
non-finite values, frame count mismatches) raises :class:`~curveeditor.io.errors.ClipReadError` with
the file, the 1-based line and the reason. Limits (each a one-line error, never a hang or a traceback):
frame rates within ``FRAME_RATE_RANGE`` (1 to 10,000 fps), rotation values within
``MAX_ROTATION_DEG`` (1e7 deg), positions within float32's range, joint paths within
``MAX_TOTAL_PATH_CHARS`` in all. The hierarchy parser is iterative (any nesting depth) and linear in
the number of joints.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

from ..engine.clip import EULER, Clip, OtherTrack, RotationTrack
from ..engine.tangents import make_curves
from .errors import ClipReadError

__all__ = [
    "read_bvh",
    "frame_rate_from_frame_time",
    "TANGENT_MODE",
    "BVH_MIRROR",
    "ROTATION_MIRROR",
    "POSITION_MIRROR",
    "FRAME_RATE_RANGE",
    "MAX_ROTATION_DEG",
    "MAX_POSITION",
    "MAX_TOTAL_PATH_CHARS",
]

#: Tangent mode of the curves built from BVH frames (see module docstring).
TANGENT_MODE = "clamped_auto"

#: Axis mirrored to go from BVH's right-handed frame to Unity's left-handed frame.
BVH_MIRROR = "x"
#: The X mirror on Euler values (x, y, z) by axis, in the joint's own order, and on positions
#: (module docstring). Each is its own inverse: the writer (:mod:`.bvh_writer`) applies the same.
ROTATION_MIRROR = np.array([1.0, -1.0, -1.0])
POSITION_MIRROR = np.array([-1.0, 1.0, 1.0])

#: Frame rates (frames per second, ``1 / Frame Time``) a BVH file may have. Real capture runs at 24 to
#: 1,000 fps; pose files use 1 fps. Outside this range the clip is almost certainly corrupt:
#: ``Frame Time: 5e-324`` overflowed ``1 / frame_time``, ``1e-9`` made keys a nanosecond apart, and
#: ``100``/``1000`` stretched 8 frames over 13 min / 2 h, which ``--resample 60`` turned into a
#: 115 s / 3.9 GB run on an 8.9 KB file.
FRAME_RATE_RANGE = (1.0, 10_000.0)
#: Largest rotation channel value (degrees). Unity keys are float32, whose spacing reaches 1 deg at
#: 2**24 = 1.7e7 deg: past 1e7 deg a value is no longer a pose to within a degree anywhere it goes.
MAX_ROTATION_DEG = 1e7
#: Largest position channel value (the file's length unit): float32's range, what Unity can store.
MAX_POSITION = float(np.finfo(np.float32).max)

_CHANNELS = {
    "xposition": ("position", 0),
    "yposition": ("position", 1),
    "zposition": ("position", 2),
    "xrotation": ("rotation", 0),
    "yrotation": ("rotation", 1),
    "zrotation": ("rotation", 2),
}


@dataclass
class _Joint:
    name: str
    path: str
    parent: int | None
    line: int
    offset: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    channels: list[str] = field(default_factory=list)
    end_site: list[float] | None = None
    first_column: int = 0  # index of this joint's first channel in a motion row


class _Tokens:
    """Whitespace tokens of the HIERARCHY section with their 1-based line numbers."""

    def __init__(self, path: str, lines: list[str], start: int, stop: int):
        self.path = path
        self.items: list[tuple[str, int]] = []
        extend = self.items.extend
        for i in range(start, stop):
            toks = lines[i].replace("{", " { ").replace("}", " } ").split()
            extend(zip(toks, repeat(i + 1, len(toks)), strict=True))
        self.pos = 0
        self.end_line = stop + 1  # the MOTION line: where the hierarchy ended early

    def error(self, line: int | None, reason: str) -> ClipReadError:
        return ClipReadError(self.path, line, reason)

    def peek(self) -> tuple[str, int] | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def next(self, what: str) -> tuple[str, int]:
        item = self.peek()
        if item is None:
            raise self.error(self.end_line, f"hierarchy ends early: expected {what}")
        self.pos += 1
        return item

    def expect(self, word: str) -> int:
        if self.pos >= len(self.items):
            raise self.error(self.end_line, f"hierarchy ends early: expected {word!r}")
        tok, line = self.items[self.pos]
        self.pos += 1
        if tok != word:
            raise self.error(line, f"expected {word!r}, found {tok!r}")
        return line

    def number(self, what: str) -> float:
        tok, line = self.next(what)
        try:
            v = float(tok)
        except ValueError:
            raise self.error(line, f"{what}: {tok!r} is not a number") from None
        if not math.isfinite(v):
            raise self.error(line, f"{what}: {tok!r} is not a finite number")
        return v

    def offset(self, what: str) -> list[float]:
        """The three numbers of an ``OFFSET`` (``what`` names it in errors: ``OFFSET``)."""
        p = self.pos
        if p + 3 <= len(self.items):
            try:
                v = [float(self.items[p][0]), float(self.items[p + 1][0]), float(self.items[p + 2][0])]
            except ValueError:
                v = None
            if v is not None and all(map(math.isfinite, v)):
                self.pos += 3
                return v
        return [self.number(f"{what} x"), self.number(f"{what} y"), self.number(f"{what} z")]

    def rest_of_line(self, line: int) -> list[str]:
        out = []
        while (item := self.peek()) is not None and item[1] == line and item[0] != "{":
            out.append(item[0])
            self.pos += 1
        return out


#: Longest joint path (characters, ``Hips/Spine/...``) summed over all joints. Paths grow with the
#: nesting depth, so a file of N nested joints holds about N² / 2 path characters: a 1 MB file of
#: 50,000 nested one-letter joints would need over 1 G characters. 2**26 (64 M) still reads a
#: 3,000-level chain of ``J1234`` names (22 M); real skeletons stay under 100 levels and 20 K.
MAX_TOTAL_PATH_CHARS = 1 << 26


@dataclass
class _Open:
    """A ``ROOT``/``JOINT`` block being parsed (an entry of the parser's explicit stack)."""

    index: int
    keyword_line: int
    seen_offset: bool = False
    seen_channels: bool = False


def _parse_joints(tk: _Tokens, joints: list[_Joint], keyword_line: int) -> None:
    """Parse one ``ROOT`` block (the keyword already consumed) and all its descendants.

    Iterative, with an explicit stack of open blocks: the recursive version hit Python's recursion
    limit (``RecursionError``) at about 1,000 nested joints. Duplicate paths are found with a set
    (the list scan made 10,000 sibling joints take 4.6 s and 20,000 take 25 s)."""
    seen_paths = {j.path for j in joints}
    total_chars = sum(len(j.path) for j in joints)
    stack: list[_Open] = []

    def open_joint(parent: int | None, line: int) -> None:
        nonlocal total_chars
        words = tk.rest_of_line(line)
        if not words:
            raise tk.error(line, "joint without a name")
        name = " ".join(words)
        path = name if parent is None else f"{joints[parent].path}/{name}"
        if path in seen_paths:
            raise tk.error(line, f"duplicate joint path {path!r}")
        total_chars += len(path)
        if total_chars > MAX_TOTAL_PATH_CHARS:
            raise tk.error(
                line,
                f"joint paths exceed {MAX_TOTAL_PATH_CHARS:,} characters in all (joint {len(joints) + 1}, "
                f"nested {len(stack) + 1} levels deep)",
            )
        seen_paths.add(path)
        stack.append(_Open(len(joints), line))
        joints.append(_Joint(name=name, path=path, parent=parent, line=line))
        tk.expect("{")

    open_joint(None, keyword_line)
    items, n_items = tk.items, len(tk.items)
    while stack:
        top = stack[-1]
        joint = joints[top.index]
        name = joint.name
        if tk.pos >= n_items:
            raise tk.error(tk.end_line, f"hierarchy ends early: expected '}}' closing joint {name!r}")
        tok, line = items[tk.pos]
        tk.pos += 1
        key = tok.upper()
        if tok == "}":
            if not top.seen_offset:
                raise tk.error(top.keyword_line, f"joint {name!r} has no OFFSET")
            stack.pop()
        elif key == "OFFSET":
            if top.seen_offset:
                raise tk.error(line, f"joint {name!r} has two OFFSET lines")
            joint.offset = tk.offset("OFFSET")
            top.seen_offset = True
        elif key == "CHANNELS":
            if top.seen_channels:
                raise tk.error(line, f"joint {name!r} has two CHANNELS lines")
            joint.channels = _parse_channels(tk, name, line)
            top.seen_channels = True
        elif key == "JOINT":
            open_joint(top.index, line)
        elif key == "END":
            _expect_site(tk)
            tk.expect("{")
            off_tok, off_line = tk.next("OFFSET of End Site")
            if off_tok.upper() != "OFFSET":
                raise tk.error(off_line, f"expected OFFSET in End Site, found {off_tok!r}")
            end = tk.offset("OFFSET")
            tk.expect("}")
            joint.end_site = end
        else:
            raise tk.error(line, f"unexpected {tok!r} in joint {name!r}")


def _expect_site(tk: _Tokens) -> None:
    tok, line = tk.next("'Site'")
    if tok.upper() != "SITE":
        raise tk.error(line, f"expected 'End Site', found 'End {tok}'")


def _parse_channels(tk: _Tokens, name: str, line: int) -> list[str]:
    tok, _ = tk.next("channel count")
    try:
        n = int(tok)
    except ValueError:
        raise tk.error(line, f"CHANNELS count {tok!r} is not an integer") from None
    if not 0 <= n <= 6:
        raise tk.error(line, f"joint {name!r}: CHANNELS count {n} (expected 0 to 6)")
    channels = []
    for k in range(n):
        item = tk.peek()
        if item is None or item[0].lower() not in _CHANNELS:
            raise tk.error(line, f"joint {name!r}: CHANNELS declares {n} channels but lists {k}")
        channels.append(item[0])
        tk.pos += 1
    lower = [c.lower() for c in channels]
    if len(set(lower)) != len(lower):
        raise tk.error(line, f"joint {name!r}: repeated channel in {' '.join(channels)}")
    for kind in ("rotation", "position"):
        count = sum(_CHANNELS[c][0] == kind for c in lower)
        if count not in (0, 3):
            raise tk.error(
                line, f"joint {name!r}: {count} {kind} channels (expected 0 or 3): {' '.join(channels)}"
            )
    return channels


def _parse_header(path: str, lines: list[str], start: int, stop: int) -> list[_Joint]:
    tk = _Tokens(path, lines, start, stop)
    joints: list[_Joint] = []
    while tk.peek() is not None:
        tok, line = tk.next("ROOT")
        if tok.upper() != "ROOT":
            raise tk.error(line, f"expected ROOT, found {tok!r}")
        _parse_joints(tk, joints, line)
    if not joints:
        raise tk.error(stop + 1, "HIERARCHY has no ROOT joint")
    column = 0
    for j in joints:
        j.first_column = column
        column += len(j.channels)
    return joints


def _header_value(path: str, lines: list[str], i: int, label: str) -> str:
    if i >= len(lines):
        raise ClipReadError(path, len(lines), f"file ends before the '{label}' line")
    text = lines[i].strip()
    if not text.lower().startswith(label.lower()):
        raise ClipReadError(path, i + 1, f"expected '{label}', found {text[:40]!r}")
    return text[len(label) :].strip()


def _motion(path: str, lines: list[str], first: int, frames: int, n_channels: int) -> np.ndarray:
    """The motion block as a ``(frames, n_channels)`` float array (file values, unmirrored)."""
    data_idx = [i for i in range(first, len(lines)) if lines[i].strip()]
    if len(data_idx) < frames:
        line = (data_idx[-1] + 2) if data_idx else first + 1
        raise ClipReadError(
            path, line, f"truncated motion: Frames says {frames} but the file has {len(data_idx)} frame lines"
        )
    if len(data_idx) > frames:
        raise ClipReadError(
            path,
            data_idx[frames] + 1,
            f"{len(data_idx)} frame lines but Frames says {frames}",
        )
    if frames and n_channels:
        # numpy's C text reader: 24 ms for CMU's 599 x 498 values, where joining the lines for
        # numpy.fromstring took 70 ms. Anything it refuses, or a row of another length, goes to the
        # careful pass below, which names the line.
        values = _load_rows([lines[i] for i in data_idx])
        if values is not None and values.shape == (frames, n_channels):
            return _finite(path, values, data_idx)
    rows = [lines[i].split() for i in data_idx]
    for i, row in zip(data_idx, rows, strict=True):
        if len(row) != n_channels:
            raise ClipReadError(
                path, i + 1, f"frame has {len(row)} values, the hierarchy declares {n_channels} channels"
            )
    if frames == 0 or n_channels == 0:
        return np.zeros((frames, n_channels))
    text = " ".join(lines[i] for i in data_idx)
    try:
        values = np.fromstring(text, dtype=np.float64, sep=" ")
    except ValueError:
        values = None
    if values is None or values.size != frames * n_channels:
        for i, row in zip(data_idx, rows, strict=True):  # slow path only to name the bad line
            for tok in row:
                try:
                    float(tok)
                except ValueError:
                    raise ClipReadError(path, i + 1, f"{tok!r} is not a number") from None
        raise ClipReadError(path, data_idx[0] + 1, "motion values could not be read")
    return _finite(path, values.reshape(frames, n_channels), data_idx)


#: Frame lines from which :func:`_load_rows` parses two halves side by side where the process may
#: fork: the 10-minute 120 fps take's 72,000 lines were 1.09 s of numpy's text reader in a 1.5 s read.
SPLIT_MIN_ROWS = 20_000


def _load_rows(rows: list[str]) -> np.ndarray | None:
    """The frame lines ``rows`` as a 2-D float array by numpy's C text reader, or None where it
    refuses them (or a row has another length: the caller's careful pass names the line). Long
    motions are read as two halves, one in a forked child (``io.beside.fork_map``)."""
    if len(rows) < SPLIT_MIN_ROWS:
        return _loadtxt(rows)
    from .beside import fork_map

    half = len(rows) // 2
    parts = fork_map(_loadtxt, [rows[:half], rows[half:]])
    if any(p is None for p in parts) or parts[0].shape[1] != parts[1].shape[1]:
        return None
    return np.concatenate(parts)


def _loadtxt(rows: list[str]) -> np.ndarray | None:
    try:
        return np.loadtxt(rows, dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        return None


def _finite(path: str, values: np.ndarray, data_idx: list[int]) -> np.ndarray:
    """``values`` when every one is finite, else the error naming the first bad value's line."""
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ClipReadError(path, data_idx[r] + 1, f"value {values[r, c]} in column {c + 1} is not finite")
    return values


def _check_magnitudes(
    path: str, joints: list[_Joint], values: np.ndarray, lines: list[str], first: int
) -> None:
    """Refuse rotation values past ``MAX_ROTATION_DEG`` and positions past ``MAX_POSITION`` (finite
    values near float64's limits overflowed in the tangent slopes and printed numpy warnings)."""
    if values.size == 0:
        return
    limit = np.empty(values.shape[1])
    for j in joints:
        for k, ch in enumerate(j.channels):
            kind = _CHANNELS[ch.lower()][0]
            limit[j.first_column + k] = MAX_ROTATION_DEG if kind == "rotation" else MAX_POSITION
    bad = np.abs(values) > limit
    if not bad.any():
        return
    r, c = np.argwhere(bad)[0]
    data_lines = [i for i in range(first, len(lines)) if lines[i].strip()]
    what = "rotation" if limit[c] == MAX_ROTATION_DEG else "position"
    unit = " deg" if what == "rotation" else ""
    raise ClipReadError(
        path,
        data_lines[r] + 1,
        f"{what} value {values[r, c]:g}{unit} in column {c + 1} is beyond +-{limit[c]:g}{unit}",
    )


def read_bvh(path: str | os.PathLike) -> Clip:
    """Read a ``.bvh`` file into a :class:`Clip` in Unity's left-handed frame (see module docstring).

    Raises :class:`ClipReadError` (file, line, reason) for unreadable or invalid files.
    """
    path_s = os.fspath(path)
    try:
        raw = Path(path_s).read_bytes()
    except OSError as e:
        raise ClipReadError(path_s, None, f"cannot read file: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    if "\x00" in text[:4096]:
        raise ClipReadError(path_s, None, "not a BVH file (binary data)")
    lines = text.splitlines()

    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise ClipReadError(path_s, None, "empty file")
    if lines[first].strip().upper() != "HIERARCHY":
        raise ClipReadError(
            path_s, first + 1, f"not a BVH file: expected HIERARCHY, found {lines[first][:40]!r}"
        )
    motion = next((i for i in range(first + 1, len(lines)) if lines[i].strip().upper() == "MOTION"), None)
    if motion is None:
        raise ClipReadError(path_s, len(lines), "no MOTION section (truncated file?)")
    joints = _parse_header(path_s, lines, first + 1, motion)

    frames_text = _header_value(path_s, lines, motion + 1, "Frames:")
    try:
        frames = int(frames_text)
    except ValueError:
        raise ClipReadError(path_s, motion + 2, f"Frames: {frames_text!r} is not an integer") from None
    if frames < 0:
        raise ClipReadError(path_s, motion + 2, f"Frames: {frames} is negative")
    ft_text = _header_value(path_s, lines, motion + 2, "Frame Time:")
    try:
        frame_time = float(ft_text)
    except ValueError:
        raise ClipReadError(path_s, motion + 3, f"Frame Time: {ft_text!r} is not a number") from None
    if not (np.isfinite(frame_time) and frame_time > 0):
        raise ClipReadError(path_s, motion + 3, f"Frame Time must be positive, got {ft_text}")
    lo, hi = FRAME_RATE_RANGE
    if not 1.0 / hi <= frame_time <= 1.0 / lo:
        raise ClipReadError(
            path_s,
            motion + 3,
            f"Frame Time: {ft_text} s is {'over' if frame_time < 1.0 / hi else 'under'} "
            f"{hi if frame_time < 1.0 / hi else lo:,g} frames per second "
            f"(BVH files are read at {lo:g} to {hi:,g} fps)",
        )

    n_channels = sum(len(j.channels) for j in joints)
    values = _motion(path_s, lines, motion + 3, frames, n_channels)
    _check_magnitudes(path_s, joints, values, lines, motion + 3)
    # The file's bytes, text and lines are 3 copies of it: gone before the curves are built
    # (a 10-minute 120 fps take: 160 MB of them at the read's peak, issue 26).
    del raw, text, lines
    return _build_clip(path_s, joints, values, frame_time)


def _columns(joint: _Joint, kind: str) -> tuple[list[int], str]:
    """Motion columns of a joint's ``kind`` channels ordered by axis (x, y, z), and their listed order."""
    by_axis = [0, 0, 0]
    order = ""
    for k, ch in enumerate(joint.channels):
        ckind, axis = _CHANNELS[ch.lower()]
        if ckind == kind:
            by_axis[axis] = joint.first_column + k
            order += "XYZ"[axis]
    return by_axis, order


def frame_rate_from_frame_time(frame_time: float) -> float:
    """``1 / frame_time`` (Hz), snapped to the nearest whole number within 0.01 % (module docstring).

    ``frame_time`` is seconds, finite and positive; a frame time so small that its inverse overflows
    (``5e-324``) gives ``inf`` (``read_bvh`` refuses rates outside ``FRAME_RATE_RANGE`` first)."""
    with np.errstate(over="ignore"):
        rate = float(np.float64(1.0) / np.float64(frame_time))
    if not np.isfinite(rate):
        return rate
    whole = round(rate)
    if whole >= 1 and abs(rate - whole) <= 1e-4 * rate:
        return float(whole)
    return rate


def _build_clip(path: str, joints: list[_Joint], values: np.ndarray, frame_time: float) -> Clip:
    frames = values.shape[0]
    rate = frame_rate_from_frame_time(frame_time)
    times = np.arange(frames, dtype=np.float64) / rate
    step = 1.0 / rate
    rot: list[tuple[_Joint, str, np.ndarray]] = []
    pos: list[tuple[_Joint, np.ndarray]] = []
    for j in joints:
        cols, order = _columns(j, "rotation")
        if order:
            rot.append((j, order, values[:, cols] * ROTATION_MIRROR))
        cols, order = _columns(j, "position")
        if order:
            pos.append((j, values[:, cols] * POSITION_MIRROR))
    curves = make_curves(times, [b for *_, b in rot] + [b for _, b in pos], mode=TANGENT_MODE)
    tracks = [
        RotationTrack(
            j.path,
            EULER,
            curve,
            order=order,
            # The frame step (s) tells the frames from what an op leaves (reorder.is_frame_samples).
            meta={"bvh_channels": list(j.channels), "bvh_joint": j.name, "bvh_frame_step": step},
        )
        for (j, order, _), curve in zip(rot, curves[: len(rot)], strict=True)
    ]
    others = [
        OtherTrack(
            path=j.path,
            attribute="m_LocalPosition",
            kind="position",
            curve=curve,
            times=times,
            meta={"bvh_channels": list(j.channels), "bvh_joint": j.name},
        )
        for (j, _), curve in zip(pos, curves[len(rot) :], strict=True)
    ]
    hierarchy = [
        {
            "name": j.name,
            "path": j.path,
            "parent": j.parent,
            "offset": list(j.offset),
            "channels": list(j.channels),
            "end_site": None if j.end_site is None else list(j.end_site),
        }
        for j in joints
    ]
    meta = {
        "format": "bvh",
        "path": path,
        "frame_time": frame_time,
        "frames": frames,
        "mirror": BVH_MIRROR,
        "hierarchy": hierarchy,
    }
    return Clip(
        name=Path(path).stem,
        frame_rate=rate,
        tracks=tuple(tracks),
        other_tracks=tuple(others),
        source=None,
        meta=meta,
    )
