"""Write clips as Unity ``.anim`` text.

Two paths:

* **Edited document** (``clip.source`` is an :class:`AnimDocument`): every top-level field and curve
  entry that no edit touches is copied byte for byte. An edited rotation track regenerates only its
  runtime curve entry (keeping the entry's own non-key lines), its mirrored editor curves
  (``localEulerAnglesRaw.*`` / ``m_LocalRotation.*`` / humanoid ``RootQ.*`` copies), its Euler display
  curves in ``m_EulerEditorCurves`` (continuous Euler of the new rotation at its keys), ``m_StopTime``
  and, when keys appear or vanish (or a track changes mode), its ``genericBindings`` items.
  Numbers use the file's own spelling style (:mod:`.floats`).
* **New clip** (no ``.anim`` source): Unity's full modern field set (serializedVersion 6 as written by
  Unity 2018.3-2021), exact bindings. Keys are serializedVersion 2, the layout Unity 5.3-2017 wrote
  (no ``weightedMode``/``inWeight``/``outWeight``: Unity reads them as unweighted with weights 1/3),
  except on curves with weights, which get serializedVersion 3 keys. On a dense clip the weight
  lines were 37% of the bytes (CMU 01_01's 2,752 frames: 95.0 MB -> 59.6 MB).

Euler tracks are written in their own rotation order (issue 21), with its ``m_RotationOrder``
(0 XYZ .. 5 ZYX: any extrinsic order, or an intrinsic one as its reversed extrinsic equivalent, so a
BVH joint's ``ZYX`` frames are written as they are, ``m_RotationOrder: 0``): no re-keying, the same
keys and values; the export warnings say which tracks are not in Unity's ZXY (Unity plays them; its
Animation window edits Euler curves in ZXY). ``keep_order=False`` converts them to ZXY instead (same
poses, continuous values, keys added where the motion needs them), as ``clean --to-order zxy`` does.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator

import numpy as np

from ...engine.clip import EULER, QUATERNION, Clip, RotationTrack
from ...engine.curves import DEFAULT_WEIGHT, Curve
from ...engine.export_checks import CONVERT_TOLERANCE_DEG, prepare_for_export, to_euler_track
from ...engine.rotations import UNITY_ORDER, UNITY_ROTATION_ORDERS, extrinsic_order
from ..atomic import atomic_write_chunks
from ..check_ahead import announce_written
from ..errors import ClipWriteError
from .bindings import HUMANOID_IK_INDEX, Binding, binding_lines, float_binding, transform_binding
from .document import AnimDocument, Entry
from .floats import detect_style, format_floats, format_matrix
from .lexer import yaml_string
from .reader import DISPLAY_ATTRS, EULER_EDITOR, HUMANOID_Q, QUAT_EDITOR, TrackSource, editor_curves_addable

__all__ = ["write_anim", "render", "render_chunks", "Fmt"]

_RUNTIME_LIST = {EULER: "m_EulerCurves", QUATERNION: "m_RotationCurves"}
_COMP = "xyzw"


def _hq(t: RotationTrack) -> str | None:
    """The humanoid attribute prefix (``RootQ``) of a quartet track, else None. Tracks read from an
    ``.anim`` say so in ``meta``; others (e.g. from CSV) are recognised by name (``RootQ``,
    ``PATH:LeftHandQ``)."""
    if t.meta.get("humanoid"):
        return t.meta["humanoid"]
    m = HUMANOID_Q.match(t.path.rsplit(":", 1)[-1] + ".x")
    if m is not None and t.kind == QUATERNION and f"{m.group(1)}.x" in HUMANOID_IK_INDEX:
        return m.group(1)
    return None


class Fmt:
    """How the target file spells things.

    ``key_version``: the keyframe ``serializedVersion`` of unweighted curves (3, 2, or None for the
    Unity 4.x-5.2 keys without one). ``weights``: the target Unity knows weighted keys (2018.1 on:
    serializedVersion 3 keys, or a 2018.2+ header), so a curve with weights gets serializedVersion 3
    keys even where the others are written as 2 (:meth:`key_version_of`)."""

    def __init__(
        self,
        key_version=3,
        style="modern",
        sv7=False,
        rotation_order=True,
        empty_path="path: ",
        weights: bool | None = None,
    ):
        self.key_version = key_version
        self.weights = key_version == 3 if weights is None else weights
        self.style = style
        self.sv7 = sv7
        self.rotation_order = rotation_order
        self.empty_path = empty_path
        #: Spelled columns of this render, by (style, values' bytes): a number column is spelled
        #: once however many entries hold it (runtime + editor curves, tracks sharing key times).
        self._columns: dict = {}
        self._ones: dict = {}

    def key_version_of(self, curve: Curve, sl: slice) -> int | None:
        """The keyframe ``serializedVersion`` of the components ``sl`` of ``curve``: the file's
        own, but 3 for a curve with weights (weighted keys, or weights other than Unity's default
        1/3) where the target knows weights, so that nothing of them is lost."""
        if self.key_version != 2 or not self.weights:
            return self.key_version
        return 3 if _has_weights(curve, sl) else 2

    def column(self, a: np.ndarray, style: str | None, like: np.ndarray | None = None):
        """The spellings of ``a (n,)`` for :func:`_splice`: constant ``bytes`` when every key spells
        the same, else a :class:`_Spelled` (cached). ``like`` (n,), a column spelled before (the
        in-slopes of the out-slopes): the values of ``a`` equal to it bit for bit, at the same key
        or at the next one (Linear tangents: a key's out-slope is the next key's in-slope), reuse
        its spellings; only the others are spelled."""
        a = np.ascontiguousarray(a)
        if _constant(a, style):
            return self._one(a[0], style)
        key = _column_key(a, style)
        got = self._columns.get(key)
        if got is None:
            if like is not None and style is not None and a.dtype == np.float64 and a.shape[0] > 1:
                got = self._reuse(a, np.ascontiguousarray(like, dtype=np.float64), style)
            if got is None:
                got = _spell_column(a, style)
            self._columns[key] = got
        return got

    def _reuse(self, a: np.ndarray, like: np.ndarray, style: str) -> _Spelled | None:
        """:meth:`column` of ``a`` built from ``like``'s spellings where the bits agree (same key,
        or ``a[i] == like[i + 1]``), or None when fewer than half of them do."""
        bits, lbits = a.view(np.uint64), like.view(np.uint64)
        same = np.zeros(a.shape[0], dtype=bool)
        same[:-1] = bits[:-1] == lbits[1:]
        shift = 1
        if 2 * int(same.sum()) < a.shape[0]:
            same = bits == lbits
            shift = 0
            if 2 * int(same.sum()) < a.shape[0]:
                return None
        prev = self.column(like, style)
        if not isinstance(prev, _Spelled):
            return None
        return _reuse(prev, a, style, same, shift)

    def _one(self, v, style: str | None) -> bytes:
        """The spelling of one number (cached: default weights and modes recur in every block)."""
        key = (style, np.asarray(v).tobytes())
        got = self._ones.get(key)
        if got is None:
            got = (str(int(v)) if style is None else format_floats([v], style)[0]).encode("ascii")
            self._ones[key] = got
        return got

    def prefetch(self, cols: list[np.ndarray], style: str) -> None:
        """Spell the float columns ``cols`` (each ``(n,)``) not spelled yet in one pass: one
        :func:`floats.format_matrix` call per key block instead of one per column (per-call overhead
        was a third of the spelling time on 2,000-key tracks)."""
        todo: dict = {}
        for a in cols:
            a = np.ascontiguousarray(a)
            if _constant(a, style):
                continue
            key = _column_key(a, style)
            if key not in self._columns:
                todo.setdefault(key, a)
        if len(todo) < 2:
            return
        mat, lengths = format_matrix(np.concatenate(list(todo.values())), style)
        row = 0
        for key, a in todo.items():
            n = a.shape[0]
            self._columns[key] = _Spelled(mat[row : row + n], lengths[row : row + n])
            row += n

    def forget(self) -> None:
        """Drop the spelled columns (the render is done)."""
        self._columns.clear()
        self._ones.clear()


def _has_weights(curve: Curve, sl: slice) -> bool:
    """Whether components ``sl`` of ``curve`` have any weighted key or a weight other than Unity's
    default (compared at float32, the precision a file holds): what serializedVersion 2 keys, which
    have no weight fields, would lose."""
    if np.any(curve.weighted_mode[:, sl] != 0):
        return True
    w = np.float32(DEFAULT_WEIGHT)
    return bool(
        np.any(curve.in_weight[:, sl].astype(np.float32) != w)
        or np.any(curve.out_weight[:, sl].astype(np.float32) != w)
    )


def _column_key(a: np.ndarray, style: str | None) -> tuple:
    """The spelling cache's key of the contiguous column ``a``: its style, dtype, length and a
    128-bit digest of its bytes (the bytes themselves were 576 KB per key on a 72,000-key track;
    a collision would spell another column's numbers, which the write check's read-back refuses)."""
    return (style, a.dtype.str, a.shape[0], hashlib.blake2b(a.data, digest_size=16).digest())


def _constant(a: np.ndarray, style: str | None) -> bool:
    """True when every value of ``a (n,)`` spells the same (equal, and for floats the same sign: only
    zeros can differ in sign and be equal). Array methods, not ``np.all``: called for every column
    of every key block (5,000 times for a 66 MB file), its wrappers were half of the cost."""
    if a.shape[0] == 1:
        return True
    v = a[0]
    if not (a == v).all():
        return False
    return style is None or v != 0 or bool((np.signbit(a) == np.signbit(v)).all())


def _old_tangent_mode(m: np.ndarray) -> np.ndarray:
    """Modern tangentMode -> the pre-5.3 2-bit layout (ClampedAuto becomes Smooth)."""
    m = np.asarray(m, dtype=np.int64)
    left = (m >> 1) & 15
    right = (m >> 5) & 15
    left = np.where(left == 4, 1, np.minimum(left, 3))
    right = np.where(right == 4, 1, np.minimum(right, 3))
    return (m & 1) | (left << 1) | (right << 3)


def key_block(
    curve: Curve, fmt: Fmt, comp: int | None, indent: int = 6, runtime_tm: np.ndarray | None = None
) -> str:
    """Keyframe lines of ``curve`` (all components as a vector curve when ``comp`` is None, else the
    scalar curve of component ``comp``); :func:`key_bytes` as text."""
    return key_bytes(curve, fmt, comp, indent, runtime_tm).decode("ascii")


def key_bytes(
    curve: Curve, fmt: Fmt, comp: int | None, indent: int = 6, runtime_tm: np.ndarray | None = None
) -> bytes:
    """Keyframe lines of ``curve`` as ASCII bytes (see :func:`key_block`).

    Vectorized (:func:`_splice`): the numbers of a column are spelled once per render
    (:meth:`Fmt.column`, shared by the runtime entry, the editor curves and every track with the same
    key times) and spliced between the constant parts of Unity's key layout; a column with one
    spelling for all keys (default weights, tangent modes) becomes part of the constant text, and
    out-slopes equal to the in-slopes (or to the next key's in-slope: Linear tangents) reuse their
    spellings. The per-key Python loop this replaces wrote 5 MB/s.
    """
    n = curve.n_keys
    if n == 0:
        return b""
    if n < _SMALL_BLOCK:
        return _key_block_small(curve, fmt, comp, indent, runtime_tm).encode("ascii")
    sl = slice(None) if comp is None else slice(comp, comp + 1)
    val, ins, outs = curve.value[:, sl], curve.in_slope[:, sl], curve.out_slope[:, sl]
    inw, outw = curve.in_weight[:, sl], curve.out_weight[:, sl]
    c = val.shape[1]
    if comp is None:
        tm = np.zeros(n, dtype=np.int64) if runtime_tm is None else np.asarray(runtime_tm, dtype=np.int64)
        wm = np.bitwise_or.reduce(curve.weighted_mode, axis=1)
    else:
        tm = curve.tangent_mode[:, comp]
        wm = curve.weighted_mode[:, comp]
    if fmt.key_version is None:
        tm = _old_tangent_mode(tm) if comp is not None else tm
    kv = fmt.key_version_of(curve, sl)
    style = fmt.style
    p0 = " " * indent + "- "
    p1 = " " * (indent + 2)
    names = _COMP[:c]
    pieces: list = []

    def lit(t: str) -> None:
        pieces.append(t.encode("utf-8"))

    def vec(a: np.ndarray, field_name: str, like: np.ndarray | None = None) -> None:
        """Field ``field_name`` of every key from the columns of ``a (n, c)``; ``like`` (n, c): a
        column already spelled that ``a`` may repeat (equal, or shifted by one key)."""
        lit(p1 + field_name + ": ")
        if comp is not None:
            pieces.append(fmt.column(a[:, 0], style, None if like is None else like[:, 0]))
        else:
            lit("{")
            for j in range(c):
                lit(("" if j == 0 else ", ") + names[j] + ": ")
                pieces.append(fmt.column(a[:, j], style, None if like is None else like[:, j]))
            lit("}")
        lit("\n")

    cols = [curve.time] + [a[:, j] for a in (val, ins) for j in range(c)]
    if kv == 3:
        cols += [inw[:, j] for j in range(c)]
    fmt.prefetch(cols, style)
    if kv is None:
        lit(p0 + "time: ")
    else:
        lit(f"{p0}serializedVersion: {kv}\n{p1}time: ")
    pieces.append(fmt.column(curve.time, style))
    lit("\n")
    vec(val, "value")
    vec(ins, "inSlope")
    # Equal in/out slopes (by value: a -0 out-slope beside a 0 in-slope) are written with the
    # in-slopes' spellings, as the writer always has (the bytes of existing exports stay the same).
    vec(ins if np.array_equal(ins, outs) else outs, "outSlope", ins)
    lit(p1 + "tangentMode: ")
    pieces.append(fmt.column(tm, None))
    lit("\n")
    if kv == 3:
        lit(p1 + "weightedMode: ")
        pieces.append(fmt.column(wm, None))
        lit("\n")
        vec(inw, "inWeight")
        vec(inw if np.array_equal(inw, outw) else outw, "outWeight", inw)
    return _splice(n, pieces)


_SMALL_BLOCK = 8  # keys; below this a per-key Python loop costs less than the vectorized setup


def _key_block_small(curve: Curve, fmt: Fmt, comp: int | None, indent: int, runtime_tm) -> str:
    """:func:`key_block` for a few keys (same text), one f-string per key."""
    n = curve.n_keys
    sl = slice(None) if comp is None else slice(comp, comp + 1)
    val, ins, outs = curve.value[:, sl], curve.in_slope[:, sl], curve.out_slope[:, sl]
    inw, outw = curve.in_weight[:, sl], curve.out_weight[:, sl]
    c = val.shape[1]
    nums = format_floats(np.concatenate([curve.time[:, None], val, ins, outs, inw, outw], axis=1), fmt.style)
    stride = 1 + 5 * c
    if comp is None:
        tm = np.zeros(n, dtype=np.int64) if runtime_tm is None else np.asarray(runtime_tm, dtype=np.int64)
        wm = np.bitwise_or.reduce(curve.weighted_mode, axis=1)
    else:
        tm = curve.tangent_mode[:, comp]
        wm = curve.weighted_mode[:, comp]
        if fmt.key_version is None:
            tm = _old_tangent_mode(tm)
    tm, wm = tm.tolist(), wm.tolist()
    p0 = " " * indent + "- "
    p1 = " " * (indent + 2)
    names = _COMP[:c]

    def vec(parts):
        if comp is not None:
            return parts[0]
        return "{" + ", ".join(f"{a}: {b}" for a, b in zip(names, parts, strict=True)) + "}"

    out = []
    kv = fmt.key_version_of(curve, sl)
    for i in range(n):
        r = nums[i * stride : (i + 1) * stride]
        if kv is None:
            out.append(f"{p0}time: {r[0]}\n")
        else:
            out.append(f"{p0}serializedVersion: {kv}\n{p1}time: {r[0]}\n")
        out.append(
            f"{p1}value: {vec(r[1 : 1 + c])}\n{p1}inSlope: {vec(r[1 + c : 1 + 2 * c])}\n"
            f"{p1}outSlope: {vec(r[1 + 2 * c : 1 + 3 * c])}\n{p1}tangentMode: {tm[i]}\n"
        )
        if kv == 3:
            wi, wo = r[1 + 3 * c : 1 + 4 * c], r[1 + 4 * c : 1 + 5 * c]
            out.append(f"{p1}weightedMode: {wm[i]}\n{p1}inWeight: {vec(wi)}\n{p1}outWeight: {vec(wo)}\n")
    return "".join(out)


class _Spelled:
    """The spellings of one column of numbers (``(n,)``): ``mat (n, W) uint8`` left-aligned text,
    ``lengths (n,) uint8`` its valid bytes per row. (A render keeps every column it spelled until
    the editor curves that repeat them are written: a ``(n, W)`` byte mask beside ``mat`` doubled
    that, 620 MB of the 10-minute take's 2.4 GB convert.)"""

    __slots__ = ("mat", "lengths")

    def __init__(self, mat: np.ndarray, lengths: np.ndarray):
        self.mat = mat
        self.lengths = np.asarray(lengths).astype(np.uint8)

    def mask(self, k0: int, k1: int) -> np.ndarray:
        """``(k1 - k0, W) bool``: the valid bytes of rows ``k0:k1``."""
        return np.arange(self.mat.shape[1], dtype=np.uint8)[None, :] < self.lengths[k0:k1, None]


def _spell_column(a: np.ndarray, style: str | None) -> _Spelled:
    """Spell the values ``a (n,)``: floats in ``style``, integers when ``style`` is None."""
    if style is None:
        return _Spelled(*_int_matrix(a))
    return _Spelled(*format_matrix(a, style))


def _reuse(prev: _Spelled, a: np.ndarray, style: str, same: np.ndarray, shift: int) -> _Spelled:
    """The spellings of ``a (n,)``: row ``i`` copied from ``prev``'s row ``i + shift`` where ``same``
    (the values are equal bit for bit, so the spelling is), the other values spelled here."""
    n = a.shape[0]
    rows = np.flatnonzero(same)
    other = np.flatnonzero(~same)
    w = prev.mat.shape[1]
    if other.size:
        o_mat, o_len = format_matrix(a[other], style)
        w = max(w, o_mat.shape[1])
    mat = np.zeros((n, w), dtype=np.uint8)
    lengths = np.zeros(n, dtype=np.uint8)
    pw = prev.mat.shape[1]
    mat[rows, :pw] = prev.mat[rows + shift]
    lengths[rows] = prev.lengths[rows + shift]
    if other.size:
        mat[other, : o_mat.shape[1]] = o_mat
        lengths[other] = o_len
    return _Spelled(mat, lengths)


def _int_matrix(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decimal spellings of integers (few distinct values: tangent and weighted modes), as
    :func:`floats.format_matrix` returns them."""
    u, inv = np.unique(np.asarray(v).astype(np.int64), return_inverse=True)
    texts = [str(int(x)).encode("ascii") for x in u.tolist()]
    ulen = np.array([len(t) for t in texts], dtype=np.int64)
    table = np.zeros((len(texts), int(ulen.max())), dtype=np.uint8)
    for i, t in enumerate(texts):
        table[i, : len(t)] = np.frombuffer(t, dtype=np.uint8)
    return table[inv.reshape(-1)], ulen[inv.reshape(-1)]


_KEYS_PER_PASS = 4096  # bounded temporaries (a few hundred bytes of row per key)


def _splice(n: int, pieces: list) -> bytes:
    """The text of ``n`` keys, each the concatenation of ``pieces``: constant ``bytes`` or a
    :class:`_Spelled` column. Per pass of keys, the pieces are laid side by side in one ``(keys, W)``
    byte matrix (constants broadcast) with the mask of its valid bytes, and one boolean compress
    reads the text out row by row (no Python per key; the earlier per-byte gather index cost 8 bytes
    of temporaries per output byte and ran at half the speed)."""
    merged: list = []
    for p in pieces:
        if isinstance(p, bytes) and merged and isinstance(merged[-1], bytes):
            merged[-1] += p
        else:
            merged.append(p)
    consts = {}
    for i, p in enumerate(merged):
        if isinstance(p, bytes):
            consts[i] = np.frombuffer(p, dtype=np.uint8)
    out = []
    for k0 in range(0, n, _KEYS_PER_PASS):
        k1 = min(n, k0 + _KEYS_PER_PASS)
        m = k1 - k0
        rows, masks = [], []
        for i, p in enumerate(merged):
            if i in consts:
                c = consts[i]
                rows.append(np.broadcast_to(c, (m, c.shape[0])))
                masks.append(np.broadcast_to(True, (m, c.shape[0])))
            else:
                rows.append(p.mat[k0:k1])
                masks.append(p.mask(k0, k1))
        out.append(np.concatenate(rows, axis=1)[np.concatenate(masks, axis=1)].tobytes())
    return b"".join(out)


def new_entry(
    curve: Curve | None,
    fmt: Fmt,
    path: str,
    comp: int | None = None,
    attribute: str | None = None,
    class_id: int = 4,
    rotation_order: int = 4,
    script: str = "{fileID: 0}",
    modes_in_runtime: bool = False,
) -> str:
    """A whole curve-list item (runtime vector entry when ``attribute`` is None, else a scalar entry)."""
    return entry_bytes(
        curve, fmt, path, comp, attribute, class_id, rotation_order, script, modes_in_runtime
    ).decode("utf-8", "surrogateescape")


def entry_bytes(
    curve: Curve | None,
    fmt: Fmt,
    path: str,
    comp: int | None = None,
    attribute: str | None = None,
    class_id: int = 4,
    rotation_order: int = 4,
    script: str = "{fileID: 0}",
    modes_in_runtime: bool = False,
) -> bytes:
    """:func:`new_entry` as UTF-8 bytes (what the streaming render writes). ``modes_in_runtime``: a
    runtime vector entry with no editor curves beside it carries the keys' tangent modes itself
    (:func:`_common_tangent_modes`)."""
    scalar = attribute is not None
    head = "  - serializedVersion: 2\n    curve:\n" if (fmt.sv7 and scalar) else "  - curve:\n"
    tm = _common_tangent_modes(curve) if modes_in_runtime and curve is not None else None
    keys = key_bytes(curve, fmt, comp, runtime_tm=tm) if curve is not None and curve.n_keys else b""
    pre = curve.pre_infinity if curve is not None else 2
    post = curve.post_infinity if curve is not None else 2
    s = [head, "      serializedVersion: 2\n", "      m_Curve:\n" if keys else "      m_Curve: []\n"]
    tail = [f"      m_PreInfinity: {pre}\n      m_PostInfinity: {post}\n"]
    if fmt.rotation_order:
        tail.append(f"      m_RotationOrder: {rotation_order}\n")
    if scalar:
        tail.append(f"    attribute: {yaml_string(attribute)}\n")
    tail.append(f"    path: {yaml_string(path)}\n" if path else f"    {fmt.empty_path}\n")
    if scalar:
        tail.append(f"    classID: {class_id}\n    script: {script}\n")
        if fmt.sv7:
            tail.append("    flags: 0\n")
    return _utf8("".join(s)) + keys + _utf8("".join(tail))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def rewrite_entry(
    doc: AnimDocument, e: Entry, curve: Curve, fmt: Fmt, comp: int | None, runtime_tm=None
) -> str:
    """Entry ``e`` with its keys replaced by ``curve`` (component ``comp``); other lines verbatim."""
    lines = doc.lines
    ml = e.extra["m_curve_line"]
    kend = e.extra["key_end"]
    mtxt = lines.text(ml)
    indent = len(mtxt) - len(mtxt.lstrip(" "))
    keys = key_block(curve, fmt, comp, indent, runtime_tm) if curve.n_keys else ""
    eol = "\r\n" if lines.raw(ml, ml + 1).endswith(b"\r\n") else "\n"
    mline = " " * indent + ("m_Curve:" if keys else "m_Curve: []") + eol
    if eol != "\n":
        keys = keys.replace("\n", eol)
    pre = lines.raw(e.start, ml).decode("utf-8", "surrogateescape")
    post = lines.raw(kend, e.end).decode("utf-8", "surrogateescape")
    if curve.pre_infinity != e.pre_infinity or curve.post_infinity != e.post_infinity:
        post = post.replace(f"m_PreInfinity: {e.pre_infinity}", f"m_PreInfinity: {curve.pre_infinity}", 1)
        post = post.replace(f"m_PostInfinity: {e.post_infinity}", f"m_PostInfinity: {curve.post_infinity}", 1)
    return pre + mline + keys + post


def _euler_order_index(track: RotationTrack, keep_order: bool, original_order: str | None):
    """(m_RotationOrder, order to write in) for an Euler track."""
    o = track.order
    ext = extrinsic_order(o)
    if ext in UNITY_ROTATION_ORDERS and (ext == UNITY_ORDER or keep_order or original_order == o):
        return UNITY_ROTATION_ORDERS.index(ext), o
    return 4, UNITY_ORDER


#: ``m_RotationOrder`` values as Unity names them (``RotationOrder`` enum).
ORDER_NAMES = ("XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX")


def _own_order_note(name: str, order: str, idx: int) -> str:
    """The export note of an Euler track written in its own order, not Unity's ZXY."""
    return f"{name}: rotation order {order!r} kept (m_RotationOrder {idx} {ORDER_NAMES[idx]})"


def _display_curve(track: RotationTrack) -> Curve:
    """Continuous ZXY Euler (degrees) of a quaternion track at its keys: the Euler display curves."""
    return to_euler_track(track, UNITY_ORDER, tol=None).curve


def _check_float32_times(track: RotationTrack) -> None:
    """Unity stores key times as float32: keys closer than that resolution cannot be written."""
    t32 = track.times.astype(np.float32)
    if t32.shape[0] > 1 and not np.all(t32[1:] > t32[:-1]):
        i = int(np.argmax(~(t32[1:] > t32[:-1]))) + 1
        raise ValueError(
            f"track {track.path!r}: keys at {float(track.times[i - 1])!r} s and {float(track.times[i])!r} s "
            "are the same time in float32, which Unity stores"
        )


_F32_MAX = float(np.finfo(np.float32).max)


def _check_float32_values(track: RotationTrack) -> None:
    """Unity stores key numbers as float32: a finite number past its range (a -1e300 deg cell in a
    CSV) cannot be written (it would become Infinity, a stepped slope or a file we reject)."""
    c = track.curve
    for name, a in (
        ("key time", c.time[:, None]),
        ("value", c.value),
        ("in slope", c.in_slope),
        ("out slope", c.out_slope),
    ):
        over = np.isfinite(a) & (np.abs(a) > _F32_MAX)
        if np.any(over):
            i, j = np.argwhere(over)[0]
            raise ValueError(
                f"track {track.path!r}: {name} {a[i, j]:g} at {c.time[i]:g} s is outside float32's range "
                "(Unity stores float32)"
            )


def _prepare(track: RotationTrack, kind: str, keep_order: bool, original_order, fix_hemisphere: bool):
    _check_float32_values(track)
    if kind == EULER:
        idx, order = _euler_order_index(track, keep_order, original_order)
        out, w = prepare_for_export(track, EULER, order, fix_hemisphere)
        if idx != 4 and track.kind == EULER and original_order != track.order:
            w = [_own_order_note(track.path or "(root)", track.order, idx)] + w
    else:
        out, w = prepare_for_export(track, QUATERNION, None, fix_hemisphere)
        idx = 4
    _check_float32_values(out)
    _check_float32_times(out)
    return out, w, idx


def _unchanged(track: RotationTrack, orig: RotationTrack) -> bool:
    if track is orig:
        return True
    return track.kind == orig.kind and track.order == orig.order and track.curve.equals(orig.curve)


# --------------------------------------------------------------------------------------------------
# Edited document


def _doc_fmt(doc: AnimDocument) -> Fmt:
    if doc.style is None:
        doc.style = detect_style(doc.text, doc.clip_version)
    kv = 3 if doc.clip_version >= 6 else None
    ro = doc.clip_version >= 6 and doc.field_span("m_EulerCurves") is not None
    for lst in doc.entries.values():
        for e in lst:
            if e.keys is not None:
                kv = e.keys.version
                ro = e.rotation_order is not None
                break
        else:
            continue
        break
    empty = "path: " if b"path: \n" in doc.data or b"path:\n" not in doc.data else "path:"
    # Weighted keys came with Unity 2018.1; m_CorrespondingSourceObject with 2018.2's header.
    weights = kv == 3 or doc.field_span("m_CorrespondingSourceObject") is not None
    return Fmt(kv, doc.style, doc.sv7, ro, empty, weights)


class _Edits:
    def __init__(self, doc: AnimDocument):
        self.doc = doc
        self.replace: dict[int, str] = {}  # id(entry) -> new text ('' = removed)
        self.append: dict[str, list[str]] = {}
        self.bind_remove: set[int] = set()  # binding item start lines
        self.bind_add: list[tuple[int, Binding]] = []  # (attribute group, binding)

    def add(self, lname: str, text: str) -> None:
        self.append.setdefault(lname, []).append(text)


def _binding_rules(doc: AnimDocument):
    uses = bool(doc.bindings) or (
        not doc.legacy and not any(e.n_keys >= 2 for lst in doc.entries.values() for e in lst)
    )
    have = {(b.path, b.attribute) for b in doc.bindings}
    single_rule = True
    for lname, kind in (
        ("m_PositionCurves", "position"),
        ("m_ScaleCurves", "scale"),
        ("m_EulerCurves", "euler"),
        ("m_RotationCurves", "quaternion"),
    ):
        for e in doc.entries[lname]:
            b = transform_binding(e.path, kind)
            if e.n_keys == 1 and (b.path, b.attribute) in have:
                single_rule = False
    return uses, single_rule


def _track_bindings(path: str, kind: str, humanoid: str | None) -> list[Binding]:
    if humanoid:
        p, _, prefix = path.rpartition(":") if ":" in path else ("", "", path)
        return [float_binding(p, f"{prefix}.{c}", 95) for c in _COMP]
    return [transform_binding(path, kind)]


def _update_bindings(
    ed: _Edits,
    uses: bool,
    single_rule: bool,
    old: list[Binding],
    old_keys: int,
    new: list[Binding],
    new_keys: int,
):
    doc = ed.doc
    need = (lambda n: n >= 2 or (n == 1 and not single_rule)) if uses else (lambda n: False)
    items = {(b.path, b.attribute): b for b in doc.bindings}
    old_set = {(b.path, b.attribute) for b in old}
    new_set = {(b.path, b.attribute) for b in new}
    if old_set != new_set or not need(new_keys):
        for b in old:
            it = items.get((b.path, b.attribute))
            if it is not None and ((b.path, b.attribute) not in new_set or not need(new_keys)):
                ed.bind_remove.add(it.start)
    if need(new_keys):
        for b in new:
            key = (b.path, b.attribute)
            present = (
                key in items and (key in old_set and old_keys > 0) and items[key].start not in ed.bind_remove
            )
            if key in items and key in old_set and items[key].start not in ed.bind_remove:
                continue
            if not present:
                ed.bind_add.append((b.attribute if b.type_id == 4 else 100, b))


def _wrapped_display(src: TrackSource) -> bool:
    """True when the track's Euler display curves jump by more than 180 deg between keys."""
    for d in src.display:
        if d.n_keys > 1 and np.any(np.abs(np.diff(d.keys.value[:, 0])) > 180.0):
            return True
    return False


def _render_doc(
    clip: Clip,
    doc: AnimDocument,
    mode,
    keep_order,
    fix_hemisphere,
    refresh_display=False,
    editor_curves: bool = True,
) -> tuple[Iterator[bytes], list[str]]:
    fmt = _doc_fmt(doc)
    ed = _Edits(doc)
    warnings: list[str] = []
    uses, single_rule = _binding_rules(doc)
    seen = set()
    changed_any = False
    add_editor = editor_curves and _needs_editor_curves(clip, doc)
    written: list[tuple[RotationTrack, int]] = []  # (track as written, its m_RotationOrder)
    for t in clip.tracks:
        seen.add(t.path)
        orig = doc.original_tracks.get(t.path)
        src: TrackSource | None = orig[1] if orig else None
        humanoid = (src.kind == "humanoid") if src else bool(_hq(t))
        kind = QUATERNION if humanoid else (mode or t.kind)
        if humanoid and mode == EULER:
            warnings.append(f"{t.path}: humanoid rotation curves stay quaternions")
        if kind == EULER and doc.field_span("m_EulerCurves") is None:
            # Unity < 5.3 layouts have no m_EulerCurves list: such a clip can only hold quaternions.
            kind = QUATERNION
            if orig is None or not _unchanged(t, orig[0]):
                warnings.append(
                    f"{t.path or '(root)'}: this clip layout (serializedVersion {doc.clip_version}, "
                    "before Unity 5.3) has no Euler curves; written as quaternion keys"
                )
        # An unchanged compressed curve (m_Compressed: 1) stays packed, byte for byte; an edited one is
        # written as ordinary keys (issue 20: every compressed curve used to be rewritten).
        if orig is not None and kind == orig[0].kind and _unchanged(t, orig[0]):
            want = refresh_display is True or (refresh_display and t.path in refresh_display)
            if want and t.kind == QUATERNION and _wrapped_display(src):
                changed_any = True
                dc = _display_curve(t)
                for d in src.display:
                    if d.n_keys:
                        ed.replace[id(d)] = rewrite_entry(doc, d, dc, fmt, "xyz".index(d.attribute[-1]))
                warnings.append(f"{t.path or '(root)'}: Euler display curves made continuous (no wrap jumps)")
            if add_editor:
                idx = _euler_order_index(t, True, t.order)[0] if t.kind == EULER else 4
                written.append((t, idx))
            continue
        changed_any = True
        original_order = orig[0].order if orig and orig[0].kind == EULER else None
        new, w, order_idx = _prepare(t, kind, keep_order, original_order, fix_hemisphere)
        warnings += w
        warnings += _layout_warnings(new, orig[0] if orig else None, fmt, src, add_editor)
        if new.curve.channel_keys is not None and (
            not editor_curves
            or (not add_editor and src is not None and src.kind == new.kind and not src.editor)
        ):
            warnings.append(_union_keys_warning(new))
        if add_editor:
            written.append((new, order_idx))
        _apply_track(
            ed,
            fmt,
            new,
            src,
            order_idx,
            uses,
            single_rule,
            humanoid,
            orig[0] if orig else None,
            editor_curves,
        )
    for p, (ot, src) in doc.original_tracks.items():
        if p not in seen:
            changed_any = True
            _remove_source(ed, src)
            _update_bindings(
                ed,
                uses,
                single_rule,
                _track_bindings(p, ot.kind, src.attribute_prefix if src.kind == "humanoid" else None),
                ot.n_keys,
                [],
                0,
            )
    changed_any |= _apply_floats(clip, doc, ed, fmt, uses, single_rule)
    if add_editor:
        warnings.append(_add_editor_curves(clip, doc, ed, fmt, written))
    if clip.name != doc.name or np.float32(clip.frame_rate) != np.float32(doc.sample_rate):
        changed_any = True
    if not editor_curves and _drop_editor_curves(clip, doc, ed, fmt):
        changed_any = True
        warnings.append(NO_EDITOR_CURVES)  # (a clip that had none keeps its bytes, unwarned)
    comp = doc.entries["m_CompressedRotationCurves"]
    n_edit = sum(1 for e in comp if id(e) in ed.replace)
    if n_edit:
        left = len(comp) - n_edit
        warnings.append(
            f"{n_edit} edited compressed rotation curve(s) (m_Compressed: 1, a Unity 4 clip) written as "
            "ordinary m_RotationCurves keys; "
            + (f"the other {left} stay compressed" if left else "m_Compressed set to 0")
        )
    if not changed_any:
        return iter([doc.data]), warnings
    return _assemble(clip, doc, ed, fmt), warnings


def _needs_editor_curves(clip: Clip, doc: AnimDocument) -> bool:
    """True when a clip with no editor curves at all (:func:`editor_curves_addable`) has a track
    whose channels are keyed independently (``--per-channel``): its runtime curve can only hold them
    at the union of their times (one key holds every component), so the Animation window's editor
    curves are added to hold each channel's own keys, as Unity keeps a clip edited there."""
    return editor_curves_addable(doc) and any(t.curve.channel_keys is not None for t in clip.tracks)


#: The runtime list and the Transform property of a position or scale curve.
_TRANSFORM_CURVES = {
    "position": ("m_PositionCurves", "m_LocalPosition"),
    "scale": ("m_ScaleCurves", "m_LocalScale"),
}


def _other_editor_args(o, fmt: Fmt, script: str = "{fileID: 0}") -> list[tuple]:
    """:func:`entry_bytes` arguments of the editor curves mirroring a position, scale (one per
    component) or float curve ``o`` (an ``OtherTrack`` with a curve Unity can store: 3 components,
    or 1 and a class ID); none for any other."""
    c = o.curve
    if o.kind in _TRANSFORM_CURVES and c.n_components == 3:
        attr = _TRANSFORM_CURVES[o.kind][1]
        return [(c, fmt, o.path, k, f"{attr}.{_COMP[k]}") for k in range(3)]
    if o.kind == "float" and c.n_components == 1 and o.meta.get("class_id"):
        return [(c, fmt, o.path, 0, o.attribute, int(o.meta["class_id"]), 4, script)]
    return []


def _add_editor_curves(
    clip: Clip, doc: AnimDocument, ed: _Edits, fmt: Fmt, written: list[tuple[RotationTrack, int]]
) -> str:
    """Editor curves for every curve of a clip that had none (:func:`_needs_editor_curves`): each
    rotation track's ``localEulerAnglesRaw.*`` / ``m_LocalRotation.*`` (each channel's own keys),
    ``m_LocalPosition.*``, ``m_LocalScale.*`` and each float curve's copy, so that the Animation
    window, which rebuilds the played curves from the editor curves when the clip is edited there,
    has all of them (a partial set would lose the rest). The played curves are as before. Returns
    the export note."""
    for t, order_idx in written:
        for lname, args in _track_entry_args(t, fmt, order_idx, editor=True):
            if lname in ("m_EditorCurves", "m_EulerEditorCurves"):
                ed.add(lname, new_entry(*args))
    for o in clip.other_tracks:
        if o.curve is None:
            continue
        src = doc.original_floats.get(o.name)
        for args in _other_editor_args(o, fmt, src[1].script if src is not None else "{fileID: 0}"):
            ed.add("m_EditorCurves", new_entry(*args))
    return (
        "editor curves added (the clip had none): they hold each channel's own keys of a "
        "--per-channel reduction, which the played curves hold at the union of their times; "
        "Unity's Animation window shows and edits them"
    )


def _drop_editor_curves(clip: Clip, doc: AnimDocument, ed: _Edits, fmt: Fmt) -> bool:
    """Empty the document's ``m_EditorCurves`` and ``m_EulerEditorCurves`` (edits made to them above
    included); True when there was anything to drop. The runtime curve of a rotation track kept
    verbatim gets the keys' tangent modes its editor curves held (:func:`_common_tangent_modes`)."""
    dropped = False
    for t in clip.tracks:
        orig = doc.original_tracks.get(t.path)
        if orig is None or orig[1].kind != t.kind or not orig[1].editor:
            continue
        e = orig[1].runtime[0]
        if id(e) in ed.replace or e.keys is None or e.keys.n != t.n_keys:
            continue
        modes = _common_tangent_modes(t.curve)
        if fmt.key_version is None:
            modes = _old_tangent_mode(modes)
        if not np.array_equal(modes, e.keys.tangent_mode):
            ed.replace[id(e)] = rewrite_entry(doc, e, t.curve, fmt, None, modes)
    for lname in ("m_EditorCurves", "m_EulerEditorCurves"):
        dropped |= bool(ed.append.pop(lname, None))
        for e in doc.entries[lname]:
            ed.replace[id(e)] = ""
            dropped = True
    return dropped


def _apply_floats(clip: Clip, doc: AnimDocument, ed: _Edits, fmt: Fmt, uses, single_rule) -> bool:
    """Edited one-channel float curves (muscles, blend shapes, ...): each one's ``m_FloatCurves``
    entry and its ``m_EditorCurves`` mirror get the new keys, every other line verbatim. Unchanged
    curves (the object as read, or equal keys) are not touched. True when something was rewritten."""
    if not doc.original_floats:
        return False
    changed = False
    for o in clip.other_tracks:
        if o.kind != "float":
            continue
        orig = doc.original_floats.get(o.name)
        if orig is None or o is orig[0] or o.curve is None:
            continue
        ot, e, mirrors = orig
        if o.curve.equals(ot.curve):
            continue
        changed = True
        ed.replace[id(e)] = rewrite_entry(doc, e, o.curve, fmt, 0)
        for m in mirrors:
            ed.replace[id(m)] = rewrite_entry(doc, m, o.curve, fmt, 0)
        if o.curve.n_keys != ot.curve.n_keys:
            b = [float_binding(o.path, o.attribute, int(o.meta.get("class_id") or 0), e.script)]
            _update_bindings(ed, uses, single_rule, b, ot.curve.n_keys, b, o.curve.n_keys)
    return changed


def _modes_edited(t: RotationTrack, original: RotationTrack | None) -> bool:
    if original is None:
        return True
    a, b = t.curve.tangent_mode, original.curve.tangent_mode
    return a.shape != b.shape or not np.array_equal(t.times, original.times) or not np.array_equal(a, b)


def _runtime_tangent_modes(
    t: RotationTrack, e: Entry, original: RotationTrack | None, fmt: Fmt, has_editor: bool = True
):
    """The ``tangentMode`` of each runtime vector key, in the file's key layout.

    Unedited keys keep the file's raw value (garbage included); edited modes are written as Unity
    writes a vector key: one integer per key, the components' common mode (keys whose components
    differ keep Free there; the per-component modes live in the mirrored editor curves), in the old
    2-bit layout for keys without serializedVersion.
    """
    same_times = e.keys is not None and e.keys.n == t.n_keys and np.array_equal(e.keys.time, t.times)
    if same_times and not _modes_edited(t, original):
        return e.keys.tangent_mode
    if fmt.weights and has_editor:
        # Modern editor-made clips: the editor curves hold the modes (as before this change).
        return e.keys.tangent_mode if same_times else None
    out = _common_tangent_modes(t.curve)
    if fmt.key_version is None:
        out = _old_tangent_mode(out)
    return out


def _common_tangent_modes(curve: Curve) -> np.ndarray:
    """``(n,)`` the ``tangentMode`` Unity writes on a runtime vector key: the components' common
    mode, Free (0) where they differ (their own modes live in the editor curves, when there are any)."""
    tm = np.asarray(curve.tangent_mode, dtype=np.int64)
    uniform = np.all(tm == tm[:, :1], axis=1)
    return np.where(uniform, tm[:, 0], 0)


def _layout_warnings(
    t: RotationTrack, original: RotationTrack | None, fmt: Fmt, src, editor_added: bool = False
) -> list[str]:
    """What the file's key layout cannot hold of an edited track's tangents (issue 8 section 2): keys
    without weight fields (Unity 4.x-2017 layouts) drop weights, and keys without serializedVersion
    have no ClampedAuto (written as Smooth, Unity's old name for Auto). Said once per track."""
    if fmt.weights:
        return []
    out = []
    name = t.path or "(root)"
    c = t.curve
    layout = "keys without serializedVersion" if fmt.key_version is None else "serializedVersion 2 keys"
    if np.any(c.weighted_mode != 0):
        n = int(np.count_nonzero(np.any(c.weighted_mode != 0, axis=1)))
        out.append(
            f"{name}: {n} weighted key(s) written unweighted: this file's {layout} have no weight fields "
            "(what Unity plays between them changes; save as a new clip to keep the weights)"
        )
    if fmt.key_version is None and _modes_edited(t, original):
        left = (c.tangent_mode >> 1) & 15
        right = (c.tangent_mode >> 5) & 15
        ca = np.any((left == 4) | (right == 4), axis=1)
        if np.any(ca):
            out.append(
                f"{name}: {int(np.count_nonzero(ca))} key(s) with ClampedAuto tangents written as Smooth: "
                f"this file's {layout} (Unity 4.x-5.2) have no ClampedAuto; the slopes are kept as they are"
            )
    if (
        _modes_edited(t, original)
        and src is not None
        and not src.editor
        and not editor_added
        and src.kind != "humanoid"
    ):
        tm = c.tangent_mode
        mixed = ~np.all(tm == tm[:, :1], axis=1)
        if np.any(mixed):
            out.append(
                f"{name}: {int(np.count_nonzero(mixed))} key(s) with different tangent modes per component "
                "written as Free: the clip has no editor curves, and a runtime key holds one tangentMode"
            )
    return out


def _remove_source(ed: _Edits, src: TrackSource) -> None:
    for e in src.runtime + src.editor + src.display:
        ed.replace[id(e)] = ""


def _apply_track(
    ed: _Edits,
    fmt: Fmt,
    t: RotationTrack,
    src: TrackSource | None,
    order_idx: int,
    uses,
    single_rule,
    humanoid,
    original: RotationTrack | None = None,
    editor_curves: bool = True,
) -> None:
    doc = ed.doc
    new_b = _track_bindings(t.path, t.kind, _hq(t) if humanoid else None)
    if src is not None and src.kind == "humanoid":
        for c, e in enumerate(src.runtime):
            ed.replace[id(e)] = rewrite_entry(doc, e, t.curve, fmt, c)
        for e in src.editor:
            c = _COMP.index(e.attribute[-1])
            ed.replace[id(e)] = rewrite_entry(doc, e, t.curve, fmt, c)
        old_n = max(e.n_keys for e in src.runtime)
        _update_bindings(ed, uses, single_rule, new_b, old_n, new_b, t.n_keys)
        return
    if src is not None and src.kind == t.kind:
        e = src.runtime[0]
        tm = _runtime_tangent_modes(t, e, original, fmt, editor_curves and bool(src.editor))
        text = rewrite_entry(doc, e, t.curve, fmt, None, tm)
        if t.kind == EULER and e.rotation_order is not None and e.rotation_order != order_idx:
            text = text.replace(f"m_RotationOrder: {e.rotation_order}", f"m_RotationOrder: {order_idx}", 1)
        ed.replace[id(e)] = text
        for ee in src.editor:
            c = _COMP.index(ee.attribute[-1])
            ec, comp = _editor_curve(t.curve, c)
            etext = rewrite_entry(doc, ee, ec, fmt, comp)
            if t.kind == EULER and ee.rotation_order is not None and ee.rotation_order != order_idx:
                etext = etext.replace(
                    f"m_RotationOrder: {ee.rotation_order}", f"m_RotationOrder: {order_idx}", 1
                )
            ed.replace[id(ee)] = etext
        if t.kind == QUATERNION:
            disp = [
                d
                for d in src.display
                if d.n_keys > 0 or d.attribute.rsplit(".", 1)[0] != "m_LocalEulerAngles"
            ]
            if disp:
                dc = _display_curve(t)
                for d in disp:
                    ed.replace[id(d)] = rewrite_entry(doc, d, dc, fmt, "xyz".index(d.attribute[-1]))
        old_b = _track_bindings(t.path, t.kind, None)
        _update_bindings(ed, uses, single_rule, old_b, e.n_keys, new_b, t.n_keys)
        return
    # A new track, or a track switched between Euler and quaternion storage.
    old_n = 0
    old_b: list[Binding] = []
    has_editor = True
    if src is not None:
        _remove_source(ed, src)
        old_n = src.runtime[0].n_keys
        old_b = _track_bindings(t.path, QUATERNION if src.kind == "compressed" else src.kind, None)
        has_editor = bool(src.editor) or bool(doc.entries["m_EditorCurves"])
    else:
        has_editor = bool(doc.entries["m_EditorCurves"]) or not any(
            doc.entries[n]
            for n in (
                "m_RotationCurves",
                "m_EulerCurves",
                "m_PositionCurves",
                "m_ScaleCurves",
                "m_FloatCurves",
            )
        )
    for lname, text in _track_entries(t, fmt, order_idx, editor_curves and has_editor):
        ed.add(lname, text)
    _update_bindings(ed, uses, single_rule, old_b, old_n, new_b, t.n_keys)


def _track_entries(t: RotationTrack, fmt: Fmt, order_idx: int, editor: bool = True) -> list[tuple[str, str]]:
    """(list name, entry text) of a rotation track in Unity's editor layout."""
    return [(lname, new_entry(*args)) for lname, args in _track_entry_args(t, fmt, order_idx, editor)]


def _editor_curve(curve: Curve, c: int) -> tuple[Curve, int]:
    """(curve, component) an editor curve (``localEulerAnglesRaw.xyz[c]``, ``m_LocalRotation.xyzw[c]``)
    is written from: the track's curve, or channel ``c``'s own keys when its channels are keyed
    independently."""
    if curve.channel_keys is None:
        return curve, c
    return curve.channel(c), 0


def _track_entry_args(
    t: RotationTrack, fmt: Fmt, order_idx: int, editor: bool = True
) -> list[tuple[str, tuple]]:
    """(list name, :func:`entry_bytes` arguments) of a rotation track's entries in Unity's editor
    layout (the streaming render spells each entry when its list is written)."""
    if _hq(t):
        p, _, prefix = t.path.rpartition(":") if ":" in t.path else ("", "", t.path)
        out = [("m_FloatCurves", (t.curve, fmt, p, c, f"{prefix}.{_COMP[c]}", 95)) for c in range(4)]
        if editor:
            out += [("m_EditorCurves", (t.curve, fmt, p, c, f"{prefix}.{_COMP[c]}", 95)) for c in range(4)]
        return out
    modes = not editor  # no editor curves to hold the tangent modes: the runtime keys do
    if t.kind == EULER:
        out = [("m_EulerCurves", (t.curve, fmt, t.path, None, None, 4, order_idx, "{fileID: 0}", modes))]
        if editor:
            out += [
                # The editor curves carry the track's order too (Unity rebuilds the runtime curve
                # from them when the clip is edited), and each channel's own keys (channel_keys).
                ("m_EditorCurves", (ec, fmt, t.path, comp, f"{EULER_EDITOR}.{_COMP[c]}", 4, order_idx))
                for c in range(3)
                for ec, comp in (_editor_curve(t.curve, c),)
            ]
            out += [
                ("m_EulerEditorCurves", (None, fmt, t.path, None, f"m_LocalEulerAngles.{_COMP[c]}"))
                for c in range(3)
            ]
        return out
    out = [("m_RotationCurves", (t.curve, fmt, t.path, None, None, 4, 4, "{fileID: 0}", modes))]
    if editor:
        out += [
            ("m_EditorCurves", (ec, fmt, t.path, comp, f"{QUAT_EDITOR}.{_COMP[c]}"))
            for c in range(4)
            for ec, comp in (_editor_curve(t.curve, c),)
        ]
    return out


def _stop_time(clip: Clip, doc: AnimDocument, fmt: Fmt) -> str | None:
    """New ``m_StopTime`` line text, or None to keep the original."""
    if doc.stop_time_line is None:
        return None
    old_stop = float(doc.lines.text(doc.stop_time_line).split(":", 1)[1])
    old_max = 0.0
    for lst in doc.entries.values():
        for e in lst:
            if e.n_keys and e.times.size:
                old_max = max(old_max, float(e.times[-1]))
    new_max = 0.0
    for lname, lst in doc.entries.items():
        if lname in (
            "m_RotationCurves",
            "m_CompressedRotationCurves",
            "m_EulerCurves",
            "m_EditorCurves",
            "m_EulerEditorCurves",
        ):
            continue
        for e in lst:
            if (
                e.n_keys
                and e.times.size
                and not (
                    lname == "m_FloatCurves"
                    and e.class_id == 95
                    and e.attribute
                    and HUMANOID_Q.match(e.attribute)
                )
            ):
                new_max = max(new_max, float(e.times[-1]))
    for lst_name in ("m_EditorCurves", "m_EulerEditorCurves"):
        for e in doc.entries[lst_name]:
            is_rot = e.attribute and (
                e.attribute.rsplit(".", 1)[0] in (EULER_EDITOR, QUAT_EDITOR) + DISPLAY_ATTRS
                or HUMANOID_Q.match(e.attribute)
            )
            if e.n_keys and not is_rot:
                new_max = max(new_max, float(e.times[-1]))
    for t in clip.tracks:
        if t.n_keys:
            new_max = max(new_max, float(t.times[-1]))
    if np.float32(new_max) == np.float32(old_max):
        return None
    if old_stop == 0.0 and old_max > 0.0:
        return None
    new_stop = new_max + max(0.0, old_stop - old_max)
    txt = doc.lines.text(doc.stop_time_line)
    return txt.split(":", 1)[0] + ": " + format_floats([new_stop], fmt.style)[0] + "\n"


def _assemble(clip: Clip, doc: AnimDocument, ed: _Edits, fmt: Fmt) -> Iterator[bytes]:
    """The edited document as byte chunks: verbatim spans of the source as bytes, regenerated
    parts (text) encoded one by one (a CRLF file stays CRLF, generated lines too)."""
    lines = doc.lines
    raw = lines.raw
    out: list[str | bytes] = [raw(0, doc.header_end)]
    stop = _stop_time(clip, doc, fmt)
    # Renamed clip / changed frame rate: those single lines follow the Clip.
    scalars = {}
    if clip.name != doc.name:
        scalars["m_Name"] = yaml_string(clip.name)
    if np.float32(clip.frame_rate) != np.float32(doc.sample_rate):
        scalars["m_SampleRate"] = format_floats([clip.frame_rate], fmt.style)[0]
    comp = doc.entries["m_CompressedRotationCurves"]
    if comp and all(id(e) in ed.replace for e in comp):
        scalars["m_Compressed"] = "0"  # nothing packed is left
    by_name = {}
    for lname, lst in doc.entries.items():
        by_name[lname] = lst
    for name, a, b, _rest in doc.fields:
        if name == "m_CompressedRotationCurves" and any(id(e) in ed.replace for e in by_name[name]):
            kept = [
                raw(e.start, e.end).decode("utf-8", "surrogateescape")
                for e in by_name[name]
                if id(e) not in ed.replace
            ]
            out.append(f"  {name}:\n" + "".join(kept) if kept else f"  {name}: []\n")
            continue
        if name in by_name and name not in ("m_Events", "m_PPtrCurves", "m_CompressedRotationCurves"):
            lst = by_name[name]
            touched = any(id(e) in ed.replace for e in lst) or ed.append.get(name)
            if touched:
                parts = []
                for e in lst:
                    parts.append(
                        ed.replace.get(id(e), None)
                        if id(e) in ed.replace
                        else raw(e.start, e.end).decode("utf-8", "surrogateescape")
                    )
                parts += ed.append.get(name, [])
                body = "".join(p for p in parts if p)
                tail_end = lst[-1].end if lst else a + 1
                tail = raw(tail_end, b).decode("utf-8", "surrogateescape") if lst else ""
                out.append(f"  {name}:\n" + body + tail if body else f"  {name}: []\n")
                continue
        if name == "m_ClipBindingConstant" and (ed.bind_remove or ed.bind_add):
            out.append(_bindings_text(doc, ed, a, b, fmt))
            continue
        if name in scalars and b == a + 1:
            out.append(f"  {name}: {scalars[name]}\n")
            continue
        if stop is not None and a <= doc.stop_time_line < b:
            sl = doc.stop_time_line
            out += [raw(a, sl), stop, raw(sl + 1, b)]
        else:
            out.append(raw(a, b))
    n_lf = doc.data.count(b"\n")
    crlf = bool(n_lf) and doc.data.count(b"\r\n") == n_lf
    # Verbatim spans are whole lines of the source, so converting part by part is converting the
    # whole (a span of a CRLF file is already CRLF).
    for part in out:
        if isinstance(part, bytes):
            yield part
        else:
            if crlf:
                part = part.replace("\r\n", "\n").replace("\n", "\r\n")
            yield part.encode("utf-8", "surrogateescape")


def _bindings_text(doc: AnimDocument, ed: _Edits, a: int, b: int, fmt: Fmt) -> str:
    lines = doc.lines
    raw = lines.raw
    dec = lambda x: x.decode("utf-8", "surrogateescape")  # noqa: E731
    sample = dec(raw(doc.bindings[0].start, doc.bindings[0].end)) if doc.bindings else ""
    sv7 = ("isIntCurve" in sample) if sample else fmt.sv7
    key = doc.binding_key
    versioned = doc.bindings_versioned if doc.bindings else True
    kept = [it for it in doc.bindings if it.start not in ed.bind_remove]
    items = [
        (
            it.attribute if it.type_id == 4 and it.custom_type in (0, 4) and it.attribute <= 4 else 100,
            dec(raw(it.start, it.end)),
        )
        for it in kept
    ]
    for group, bnd in ed.bind_add:
        txt = binding_lines(bnd, key, sv7, versioned)
        pos = len(items)
        for i in range(len(items) - 1, -1, -1):
            if items[i][0] <= group:
                pos = i + 1
                break
        else:
            pos = 0 if items and group < items[0][0] else len(items)
        items.insert(pos, (group, txt))
    # Rebuild the genericBindings part; everything else in the field stays verbatim.
    gb_line = None
    for i in range(a + 1, b):
        if lines.text(i).strip().startswith("genericBindings:"):
            gb_line = i
            break
    end = doc.bindings[-1].end if doc.bindings else gb_line + 1
    head = dec(raw(a, gb_line))
    body = "".join(t for _, t in items)
    gb = "    genericBindings:\n" + body if body else "    genericBindings: []\n"
    return head + gb + dec(raw(end, b))


# --------------------------------------------------------------------------------------------------
# New clip


#: The export warning of ``editor_curves=False`` (domain notes, unity-anim-format section 6).
NO_EDITOR_CURVES = (
    "editor curves not written (m_EditorCurves and m_EulerEditorCurves empty, as in a clip made in code "
    "or copied from an FBX import): Unity plays the clip, but its Animation window has no curves to "
    "show or edit, and an edit there rebuilds the played curves from the empty editor curves"
)


def _union_keys_warning(t: RotationTrack) -> str:
    return (
        f"{t.path or '(root)'}: each channel's own keys written at the union of their times "
        f"({t.n_keys} keys, {t.curve.channel_key_count()} of them a channel's own): this "
        "track has no editor curves, and a runtime key holds every channel"
    )


def _render_new(
    clip: Clip, mode, keep_order, fix_hemisphere, editor_curves: bool = True
) -> tuple[Iterator[bytes], list[str]]:
    """The new-clip text as a stream of byte chunks (one per entry) and the warnings.

    Every track is prepared (and every warning known) before the first chunk; each entry is spelled
    only when its list is written, so the whole text never sits in memory (the joined ``str`` and
    its encoding peaked at 3.4x the file size)."""
    fmt = Fmt(2, "modern", False, True, "path: ", weights=True)
    warnings: list[str] = []
    lists: dict[str, list[tuple]] = {
        n: []
        for n in (
            "m_RotationCurves",
            "m_EulerCurves",
            "m_PositionCurves",
            "m_ScaleCurves",
            "m_FloatCurves",
            "m_EditorCurves",
            "m_EulerEditorCurves",
        )
    }
    binds: list[tuple[int, Binding]] = []
    end = 0.0
    root_transform = False
    written: list[RotationTrack] = []
    for t in clip.tracks:
        humanoid = bool(_hq(t))
        kind = QUATERNION if humanoid else (mode or t.kind)
        new, w, idx = _prepare(t, kind, keep_order, None, fix_hemisphere)
        warnings += w
        if not editor_curves and new.curve.channel_keys is not None:
            warnings.append(_union_keys_warning(new))
        written.append(new)
        for lname, args in _track_entry_args(new, fmt, idx, editor_curves):
            lists[lname].append(args)
        if new.n_keys >= 2:
            for bnd in _track_bindings(new.path, new.kind, _hq(new) if humanoid else None):
                binds.append((bnd.attribute if not humanoid else 100, bnd))
        if new.n_keys:
            end = max(end, float(new.times[-1]))
        root_transform |= new.path == "" and not humanoid
    for o in clip.other_tracks:
        if o.curve is None or o.kind not in ("position", "scale", "float"):
            continue
        c = o.curve
        if o.kind in _TRANSFORM_CURVES:
            if c.n_components != 3:
                warnings.append(f"{o.name}: {o.kind} curve needs 3 components; not written")
                continue
            lname = _TRANSFORM_CURVES[o.kind][0]
            lists[lname].append((c, fmt, o.path, None, None, 4, 4, "{fileID: 0}", not editor_curves))
            if editor_curves:
                lists["m_EditorCurves"].extend(_other_editor_args(o, fmt))
            if c.n_keys >= 2:
                bnd = transform_binding(o.path, o.kind)
                binds.append((bnd.attribute, bnd))
            root_transform |= o.path == ""
        else:
            cid = int(o.meta.get("class_id") or 0)
            if c.n_components != 1 or not cid:
                warnings.append(f"{o.name}: float curve needs 1 component and a class_id; not written")
                continue
            lists["m_FloatCurves"].append((c, fmt, o.path, 0, o.attribute, cid))
            if editor_curves:
                lists["m_EditorCurves"].extend(_other_editor_args(o, fmt))
            if c.n_keys >= 2:
                binds.append((100, float_binding(o.path, o.attribute, cid)))
        if c.n_keys:
            end = max(end, float(c.time[-1]))
    binds.sort(key=lambda x: x[0])  # positions, rotations, scales, Euler, then the rest (stable)
    if not editor_curves:
        warnings.append(NO_EDITOR_CURVES)
    announce_written(lambda tracks=written: tracks)
    del written

    def lst(name):
        items = lists.pop(name)
        if not items:
            yield f"  {name}: []\n".encode()
            return
        yield f"  {name}:\n".encode()
        items.reverse()
        while items:
            # Popped as written: a curve is freed once the last list holding it is out.
            yield entry_bytes(*items.pop())

    rate = format_floats([clip.frame_rate])[0]
    loop = 1 if clip.meta.get("loop_time") else 0
    gb = "".join(binding_lines(b) for _, b in binds)
    parts = [
        "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!74 &7400000\nAnimationClip:\n",
        "  m_ObjectHideFlags: 0\n  m_CorrespondingSourceObject: {fileID: 0}\n",
        "  m_PrefabInstance: {fileID: 0}\n",
        "  m_PrefabAsset: {fileID: 0}\n",
        f"  m_Name: {yaml_string(clip.name) or 'clip'}\n",
        "  serializedVersion: 6\n  m_Legacy: 0\n  m_Compressed: 0\n  m_UseHighQualityCurve: 1\n",
        "m_RotationCurves",
        "  m_CompressedRotationCurves: []\n",
        "m_EulerCurves",
        "m_PositionCurves",
        "m_ScaleCurves",
        "m_FloatCurves",
        "  m_PPtrCurves: []\n",
        f"  m_SampleRate: {rate}\n  m_WrapMode: 0\n",
        "  m_Bounds:\n    m_Center: {x: 0, y: 0, z: 0}\n    m_Extent: {x: 0, y: 0, z: 0}\n",
        "  m_ClipBindingConstant:\n",
        ("    genericBindings:\n" + gb) if gb else "    genericBindings: []\n",
        "    pptrCurveMapping: []\n",
        "  m_AnimationClipSettings:\n    serializedVersion: 2\n",
        "    m_AdditiveReferencePoseClip: {fileID: 0}\n",
        "    m_AdditiveReferencePoseTime: 0\n    m_StartTime: 0\n",
        f"    m_StopTime: {format_floats([end])[0]}\n",
        "    m_OrientationOffsetY: 0\n    m_Level: 0\n    m_CycleOffset: 0\n",
        "    m_HasAdditiveReferencePose: 0\n",
        f"    m_LoopTime: {loop}\n",
        "    m_LoopBlend: 0\n    m_LoopBlendOrientation: 0\n    m_LoopBlendPositionY: 0\n",
        "    m_LoopBlendPositionXZ: 0\n    m_KeepOriginalOrientation: 0\n    m_KeepOriginalPositionY: 1\n",
        "    m_KeepOriginalPositionXZ: 0\n    m_HeightFromFeet: 0\n    m_Mirror: 0\n",
        "m_EditorCurves",
        "m_EulerEditorCurves",
        f"  m_HasGenericRootTransform: {int(root_transform)}\n",
        "  m_HasMotionFloatCurves: 0\n  m_Events: []\n",
    ]

    def chunks() -> Iterator[bytes]:
        pending: list[str] = []
        for p in parts:
            if p in lists:
                if pending:
                    yield "".join(pending).encode("utf-8", "surrogateescape")
                    pending = []
                yield from lst(p)
            else:
                pending.append(p)
        if pending:
            yield "".join(pending).encode("utf-8", "surrogateescape")
        fmt.forget()

    return chunks(), warnings


# --------------------------------------------------------------------------------------------------


def render(
    clip: Clip,
    mode: str | None = None,
    keep_order: bool = True,
    fix_hemisphere: bool = True,
    refresh_display=False,
    editor_curves: bool = True,
) -> tuple[str, list[str]]:
    """The ``.anim`` text for ``clip`` and the export warnings.

    ``mode``: None keeps each track's kind; ``"euler"`` / ``"quaternion"`` converts every transform
    rotation track (humanoid quartets always stay quaternions). ``keep_order`` (default): write
    Euler tracks in their own order with its ``m_RotationOrder``; False converts them to ZXY.
    ``fix_hemisphere``: flip quaternion keys onto one hemisphere. ``refresh_display``: True (or a set
    of track paths) also rewrites the
    Euler display curves (``localEulerAngles*`` in ``m_EulerEditorCurves``) of unedited quaternion
    tracks whose display jumps by more than 180 deg, as continuous curves (what ``clean --unwrap``
    wants); edited tracks always get fresh display curves. ``editor_curves=False`` writes only the
    curves Unity plays: ``m_EditorCurves`` and ``m_EulerEditorCurves`` are empty, as in a clip made
    in code or copied from an FBX import (about a third of the bytes of a dense Euler clip; the
    warnings say what the Animation window then lacks).
    """
    chunks, warnings = render_chunks(clip, mode, keep_order, fix_hemisphere, refresh_display, editor_curves)
    return b"".join(chunks).decode("utf-8", "surrogateescape"), warnings


def render_chunks(
    clip: Clip,
    mode: str | None = None,
    keep_order: bool = True,
    fix_hemisphere: bool = True,
    refresh_display=False,
    editor_curves: bool = True,
) -> tuple[Iterator[bytes], list[str]]:
    """:func:`render` as a stream: ``(chunks, warnings)``, the file's bytes in order (an entry or a
    verbatim span each) and the export warnings (all known before the first chunk).

    :func:`write_anim` writes the chunks into the temp file as they come, so the text is never held
    whole. Iterating may raise ``ValueError`` (a value Unity cannot store)."""
    if mode not in (None, EULER, QUATERNION):
        raise ValueError(f"mode must be None, 'euler' or 'quaternion', got {mode!r}")
    doc = clip.source if isinstance(clip.source, AnimDocument) else None
    if doc is not None:
        chunks, warnings = _render_doc(
            clip, doc, mode, keep_order, fix_hemisphere, refresh_display, editor_curves
        )
    else:
        chunks, warnings = _render_new(clip, mode, keep_order, fix_hemisphere, editor_curves)
    return chunks, _group_order_warnings(warnings)


_ORDER_WARNING = re.compile(
    r"^(.*): rotation order ('\w+' converted to '\w+') \((.*?)(?:; (\d+) key\(s\) added.*)?\)$"
)


_KEPT_WARNING = re.compile(r"^(.*): rotation order ('\w+' kept \(m_RotationOrder \d \w+\))$")


def _group_order_warnings(warnings: list[str]) -> list[str]:
    """One line per order conversion or kept order instead of one per track (BVH files have dozens
    of joints)."""
    groups: dict[str, list[tuple[str, int]]] = {}
    kept: dict[str, list[str]] = {}
    out = []
    for w in warnings:
        k = _KEPT_WARNING.match(w)
        if k is not None:
            kept.setdefault(k.group(2), []).append(k.group(1))
            continue
        m = _ORDER_WARNING.match(w)
        if m is None:
            out.append(w)
            continue
        groups.setdefault(m.group(2), []).append((m.group(1), int(m.group(4) or 0)))
    for what, names in kept.items():
        who = (
            names[0]
            if len(names) == 1
            else (f"{len(names)} tracks ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})")
        )
        out.append(
            f"{who}: rotation order {what}, written as keyed (Unity plays it; its Animation window "
            "edits Euler curves in ZXY: clean --to-order zxy converts)"
        )
    for conv, items in groups.items():
        if len(items) == 1:
            name, added = items[0]
            out.append(next(w for w in warnings if w.startswith(f"{name}: rotation order {conv.split()[0]}")))
            continue
        names = ", ".join(n for n, _ in items[:3]) + (", ..." if len(items) > 3 else "")
        added = sum(a for _, a in items)
        tail = f"; {added} key(s) added to keep the motion" if added else ""
        out.append(
            f"{len(items)} tracks ({names}): rotation order {conv} "
            f"(same motion within {CONVERT_TOLERANCE_DEG:g} deg{tail})"
        )
    return out


def write_anim(
    clip: Clip,
    path,
    mode=None,
    protect=None,
    keep_order: bool = True,
    fix_hemisphere: bool = True,
    refresh_display=False,
    editor_curves: bool = True,
) -> list[str]:
    """Write ``clip`` as a Unity ``.anim`` to ``path`` atomically; returns the export warnings.

    Options as in :func:`render`.

    Raises :class:`ClipWriteError` when ``path`` is ``protect`` (the input) or cannot be written, or when
    the clip cannot be expressed (e.g. non-finite values); nothing is written then.
    """
    try:
        chunks, warnings = render_chunks(
            clip, mode, keep_order, fix_hemisphere, refresh_display, editor_curves
        )
        atomic_write_chunks(path, chunks, protect=protect)
    except ValueError as exc:
        raise ClipWriteError(os.fspath(path), None, str(exc)) from exc
    return warnings
