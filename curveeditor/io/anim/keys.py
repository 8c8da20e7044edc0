"""Keyframe blocks (``m_Curve:`` lists) parsed straight into numpy arrays.

Hot path: one regex scan of the block's bytes collects every scalar after ``: ``, one conversion turns
them into floats, and a reshape to ``(N, tokens per key)`` gives the columns. The block is accepted
only when its line count, the count of every field name and the token count all match the layout of
its first key, so a deleted field, a swapped type or stray text sends it to the slow line-by-line
parser, which names the exact line and reason (and also handles flow mappings wrapped over lines).

Key layouts (``shared/domain/unity-anim-format.md`` section 3): no ``serializedVersion`` (Unity
4-5.2), ``serializedVersion: 2`` (no weights), ``serializedVersion: 3`` (weights).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import ClipReadError
from .lexer import Lines, key3, split_key

__all__ = ["KeyArrays", "parse_key_block", "LAYOUTS", "modern_tangent_modes"]

LAYOUTS = {
    None: ("time", "value", "inSlope", "outSlope", "tangentMode"),
    2: ("serializedVersion", "time", "value", "inSlope", "outSlope", "tangentMode"),
    3: (
        "serializedVersion",
        "time",
        "value",
        "inSlope",
        "outSlope",
        "tangentMode",
        "weightedMode",
        "inWeight",
        "outWeight",
    ),
}
_VECTOR_FIELDS = ("value", "inSlope", "outSlope", "inWeight", "outWeight")
_COMPONENTS = {1: None, 3: ("x", "y", "z"), 4: ("x", "y", "z", "w")}
_TOKEN = re.compile(rb": ([^\s{},]+)")
_INT_FIELDS = ("serializedVersion", "tangentMode", "weightedMode")


@dataclass
class KeyArrays:
    """Parsed keys of one AnimationCurve. Shapes: ``time (N,)``, vectors ``(N, C)``, ints ``(N,)``.

    ``tangent_mode`` is the raw integer as written (garbage included); ``first_line`` is the 0-based line
    of the block's first key and ``lines_per_key`` its stride when the block has no wrapped lines
    (else 0), used to name lines in later checks.
    """

    version: int | None
    n_components: int
    time: np.ndarray
    value: np.ndarray
    in_slope: np.ndarray
    out_slope: np.ndarray
    tangent_mode: np.ndarray
    weighted_mode: np.ndarray
    in_weight: np.ndarray | None
    out_weight: np.ndarray | None
    key_lines: np.ndarray  # (N,) 0-based line of each key's first line

    @property
    def n(self) -> int:
        return int(self.time.shape[0])


def modern_tangent_modes(raw: np.ndarray, version: int | None) -> np.ndarray:
    """Unity's modern ``tangentMode`` encoding for raw file values (``(N,)`` int).

    Keys without a ``serializedVersion`` use the old 2-bit layout (bit 0 broken, bits 1-2 left, bits 3-4
    right; Editable/Smooth/Linear/Stepped = Free/Auto/Linear/Constant). Values that decode to nothing
    valid (e.g. the uninitialised-memory pattern -842150451) become 0 (Free): ``tangentMode`` is only an
    editing hint, never used to play the curve.
    """
    r = np.asarray(raw, dtype=np.int64)
    if version is None:
        valid = (r >= 0) & (r <= 31)
        left = (r >> 1) & 3
        right = (r >> 3) & 3
        modern = (r & 1) | (left << 1) | (right << 5)
    else:
        left = (r >> 1) & 15
        right = (r >> 5) & 15
        valid = (r >= 0) & (r <= 511) & (left <= 4) & (right <= 4)
        modern = r
    return np.where(valid, modern, 0)


def _first_key_layout(lines: Lines, k0: int, k1: int, path) -> tuple[int | None, int, int]:
    """(key version, components C, lines of the first key) from the first key's field lines."""
    names: list[str] = []
    comps = 1
    i = k0
    while i < k1 and (i == k0 or not (lines.dash[i] and lines.indent[i] == lines.indent[k0])):
        if lines.indent[i] > lines.indent[k0] + 2:  # continuation of a wrapped flow mapping
            i += 1
            continue
        kv = split_key(lines.text(i))
        if kv is None:
            raise ClipReadError(path, i + 1, f"expected 'name: value' in a keyframe, got {lines.text(i)!r}")
        names.append(kv[0])
        if kv[0] == "value":
            rest = kv[1]
            j = i
            while "{" in rest and "}" not in rest and j + 1 < k1:
                j += 1
                rest += " " + lines.text(j).strip()
            comps = rest.count(":") if rest.startswith("{") else 1
        i += 1
    version = None
    if names and names[0] == "serializedVersion":
        txt = lines.text(k0).split(":", 1)[1].strip()
        version = int(txt) if txt.isdigit() else -1
    if version not in LAYOUTS or tuple(names) != LAYOUTS[version]:
        raise ClipReadError(
            path,
            k0 + 1,
            f"keyframe fields {names} do not match any Unity key layout (expected {list(LAYOUTS[3])})",
        )
    if comps not in _COMPONENTS:
        raise ClipReadError(path, k0 + 1, f"keyframe value has {comps} components; expected 1, 3 or 4")
    return version, comps, i - k0


def parse_key_block(lines: Lines, k0: int, k1: int, path, want_components=None) -> KeyArrays:
    """Keys of the block of lines ``k0 .. k1 - 1`` (each key starts with ``- `` at the block's indent).

    Raises :class:`ClipReadError` (file, line, reason) for anything that is not a well-formed key list.
    """
    if k1 <= k0:
        raise ClipReadError(path, k0 + 1, "m_Curve has no keys and is not '[]'")
    ind0 = lines.indent[k0]
    if not lines.dash[k0]:
        raise ClipReadError(path, k0 + 1, f"expected a keyframe '- ...', got {lines.text(k0)!r}")
    version, comps, per_key = _first_key_layout(lines, k0, k1, path)
    if want_components is not None and comps not in want_components:
        raise ClipReadError(
            path, k0 + 1, f"keyframe value has {comps} components; this curve list needs {want_components}"
        )
    fields = LAYOUTS[version]
    widths = [comps if f in _VECTOR_FIELDS else 1 for f in fields]
    per_tok = sum(widths)
    starts = np.flatnonzero(lines.dash[k0:k1] & (lines.indent[k0:k1] == ind0)) + k0
    n = int(starts.shape[0])
    block = lines.raw(k0, k1)
    ok = (k1 - k0) == n * per_key and per_key == len(fields)
    if ok:
        want = np.tile(np.array([key3(f) for f in fields], dtype=np.int32), n)
        ok = bool(np.array_equal(lines.key3[k0:k1], want)) and bool(
            np.all(lines.indent[k0 + 1 : k1 : per_key] == ind0 + 2)
        )
    if ok:
        toks = _TOKEN.findall(block)
        ok = len(toks) == n * per_tok
    if ok:
        try:
            flat = np.array(toks).astype(np.float64)
        except ValueError:
            ok = False
    if not ok:
        flat = _slow_tokens(lines, starts, k1, fields, widths, path)
    # Unity holds every key number as float32: read them as exactly those values.
    # Values past float32's range become inf here and are reported below as a typed error; numpy's
    # overflow warning would only add lines to that one-line error.
    with np.errstate(over="ignore"):
        table = flat.astype(np.float32).astype(np.float64).reshape(n, per_tok)
    cols = {}
    c = 0
    for f, w in zip(fields, widths, strict=True):
        cols[f] = table[:, c : c + w]
        c += w
    key_lines = starts
    _validate(cols, key_lines, fields, path, lines, table, widths)
    t = cols["time"][:, 0].copy()
    return KeyArrays(
        version=version,
        n_components=comps,
        time=t,
        value=cols["value"].copy(),
        in_slope=cols["inSlope"].copy(),
        out_slope=cols["outSlope"].copy(),
        tangent_mode=cols["tangentMode"][:, 0].astype(np.int64),
        weighted_mode=(
            cols["weightedMode"][:, 0].astype(np.int64) if "weightedMode" in cols else np.zeros(n, np.int64)
        ),
        in_weight=cols["inWeight"].copy() if "inWeight" in cols else None,
        out_weight=cols["outWeight"].copy() if "outWeight" in cols else None,
        key_lines=key_lines,
    )


def _field_line(lines: Lines, key_start: int, key_end: int, name: str) -> int:
    for i in range(key_start, key_end):
        kv = split_key(lines.text(i))
        if kv is not None and kv[0] == name:
            return i
    return key_start


def _validate(cols, key_lines, fields, path, lines: Lines, table=None, widths=None) -> None:
    if table is not None and _all_valid(table, fields, widths):
        return
    n = key_lines.shape[0]
    ends = np.concatenate([key_lines[1:], [key_lines[-1] + len(fields)]])

    def fail(idx: int, name: str, reason: str):
        i = int(idx)
        raise ClipReadError(path, _field_line(lines, key_lines[i], ends[i], name) + 1, reason)

    for f in fields:
        a = cols[f]
        bad = np.isnan(a).any(axis=1)
        if np.any(bad):
            fail(np.argmax(bad), f, f"{f} is NaN")
        if f not in ("inSlope", "outSlope"):
            bad = ~np.isfinite(a).all(axis=1)
            if np.any(bad):
                fail(np.argmax(bad), f, f"{f} is infinite")
        if f in _INT_FIELDS:
            bad = (a != np.round(a)).any(axis=1) | (np.abs(a) > 2**31).any(axis=1)
            if np.any(bad):
                fail(np.argmax(bad), f, f"{f} must be an integer")
    t = cols["time"][:, 0]
    if n > 1:
        bad = np.diff(t) <= 0
        if np.any(bad):
            i = int(np.argmax(bad)) + 1
            fail(i, "time", f"key time {t[i]:g} s is not after the previous key's {t[i - 1]:g} s")


def _all_valid(table: np.ndarray, fields, widths) -> bool:
    """One pass over the whole ``(N, tokens)`` table: no NaN, infinities only in slopes, integral ints,
    increasing times. False sends the block to the per-field checks that name the line."""
    finite_ok = np.ones(table.shape[1], dtype=bool)
    ints = np.zeros(table.shape[1], dtype=bool)
    c = 0
    for f, w in zip(fields, widths, strict=True):
        if f not in ("inSlope", "outSlope"):
            finite_ok[c : c + w] = False
        if f in _INT_FIELDS:
            ints[c : c + w] = True
        c += w
    if np.isnan(table).any() or not np.isfinite(table[:, ~finite_ok]).all():
        return False
    iv = table[:, ints]
    if not (np.array_equal(iv, np.round(iv)) and np.all(np.abs(iv) <= 2**31)):
        return False
    t = table[:, fields.index("time")]
    return t.shape[0] < 2 or bool(np.all(t[1:] > t[:-1]))


def _slow_tokens(lines: Lines, starts, k1: int, fields, widths, path) -> np.ndarray:
    """Line-by-line parse of a key block: exact errors, wrapped flow mappings accepted."""
    out: list[float] = []
    n = starts.shape[0]
    for k in range(n):
        a = int(starts[k])
        b = int(starts[k + 1]) if k + 1 < n else k1
        # Join wrapped continuation lines onto their field line.
        items: list[tuple[int, str]] = []
        base = lines.indent[a] + 2
        for i in range(a, b):
            txt = lines.text(i)
            if i > a and lines.indent[i] > base and items:
                items[-1] = (items[-1][0], items[-1][1] + " " + txt.strip())
            elif i > a and lines.indent[i] != base:
                raise ClipReadError(path, i + 1, f"unexpected indentation in a keyframe: {txt!r}")
            else:
                items.append((i, txt))
        if len(items) != len(fields):
            got = [split_key(t)[0] if split_key(t) else t.strip() for _, t in items]
            missing = [f for f in fields if f not in got]
            line = items[-1][0] + 1 if items else a + 1
            if missing:
                raise ClipReadError(path, line, f"keyframe is missing field(s) {missing}")
            raise ClipReadError(path, line, f"keyframe has fields {got}, expected {list(fields)}")
        for (i, txt), f, w in zip(items, fields, widths, strict=True):
            kv = split_key(txt)
            if kv is None or kv[0] != f:
                raise ClipReadError(path, i + 1, f"expected keyframe field {f!r}, got {txt.strip()!r}")
            rest = kv[1]
            if w == 1:
                if rest.startswith("{"):
                    raise ClipReadError(path, i + 1, f"{f} must be a number, got a mapping {rest!r}")
                out.append(_number(rest, path, i, f))
            else:
                if not (rest.startswith("{") and rest.endswith("}")):
                    raise ClipReadError(path, i + 1, f"{f} must be a {{x, y, z...}} mapping, got {rest!r}")
                parts = [p.strip() for p in rest[1:-1].split(",")]
                names = [p.split(":", 1)[0].strip() for p in parts]
                want = list("xyzw"[:w])
                if names != want:
                    raise ClipReadError(path, i + 1, f"{f} has components {names}, expected {want}")
                for p in parts:
                    out.append(_number(p.split(":", 1)[1] if ":" in p else "", path, i, f))
    return np.array(out, dtype=np.float64)


def _number(s: str, path, i: int, field: str) -> float:
    s = s.strip()
    try:
        v = float(s)
    except ValueError:
        raise ClipReadError(path, i + 1, f"{field} must be a number, got {s!r}") from None
    if np.isnan(v):
        raise ClipReadError(path, i + 1, f"{field} is NaN")
    return v
