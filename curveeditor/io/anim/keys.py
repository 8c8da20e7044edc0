"""Keyframe blocks (``m_Curve:`` lists) parsed straight into numpy arrays.

Two parsers that accept exactly the same texts with the same values:

* :func:`parse_key_blocks`, the hot path, takes every key block of a document at once and works on
  the file's bytes with numpy, line by line from the line starts (no per-byte passes over the
  file): a block's layout (key version, components) is read off its first key; then every line of
  every key must be that layout byte for byte (indentation, ``- ``, field name, ``: ``, ``{x: `` and
  the ``, y: `` separators at the line's commas, ``}``, the line break), checked with 8-byte
  gathers (``lexer.window``); what lies between is the key's numbers, which may only hold number
  characters. One-digit numbers and Unity's 0.33333334 weight are read directly (about half the
  numbers of a Unity file), plain decimals by an exact SWAR parse (:func:`_plain_decimals`), the
  rest (exponents, infinities) by one ``numpy.fromstring``; infinities only in
  :data:`NUMBER`'s spellings, ``serializedVersion`` only ``2``/``3``, as the careful parser.
  Any block that is not exactly Unity's layout, or whose numbers fail a check, goes to the
  careful parser (which names the line).
* :func:`parse_key_block`, the careful line-by-line parser: it accepts the variants Unity's own YAML
  reader does (flow mappings wrapped over lines, other spacing) and names the exact line and reason
  of anything else.

Numbers are what Unity writes and reads (:data:`NUMBER`): decimal with optional exponent (leading
dot allowed: ``-.998``), ``Infinity`` / ``-Infinity`` (and ``inf`` / YAML ``.inf``); NaN is an error.

Key layouts (``shared/domain/unity-anim-format.md`` section 3): no ``serializedVersion`` (Unity
4-5.2), ``serializedVersion: 2`` (no weights), ``serializedVersion: 3`` (weights).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import ClipReadError
from .lexer import Lines, split_key, window

__all__ = ["KeyArrays", "parse_key_block", "parse_key_blocks", "LAYOUTS", "NUMBER", "modern_tangent_modes"]

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
#: A number as Unity writes it (and our readers accept): decimal, optional exponent, or infinity.
NUMBER = re.compile(
    r"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|Infinity|infinity|Inf|inf|\.inf|\.Inf|\.INF)"
)
_NAN = re.compile(r"[-+]?\.?(?:nan|NaN|NAN)")
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
    modern_mode: np.ndarray | None = None  # (N,) tangent_mode in the modern encoding, if computed

    @property
    def n(self) -> int:
        return int(self.time.shape[0])

    def modern_tangent_mode(self) -> np.ndarray:
        """``(N,)`` read-only: :func:`modern_tangent_modes` of the raw ``tangent_mode`` (computed once;
        the fast parser fills it for all its blocks in one call)."""
        if self.modern_mode is None:
            m = modern_tangent_modes(self.tangent_mode, self.version)
            m.flags.writeable = False
            self.modern_mode = m
        return self.modern_mode


def _tangent_lut(old: bool) -> np.ndarray:
    r = np.arange(512, dtype=np.int64)
    if old:
        left, right = (r >> 1) & 3, (r >> 3) & 3
        return np.where(r <= 31, (r & 1) | (left << 1) | (right << 5), 0)
    left, right = (r >> 1) & 15, (r >> 5) & 15
    return np.where((left <= 4) & (right <= 4), r, 0)


_TANGENT_LUT = {True: _tangent_lut(True), False: _tangent_lut(False)}


def modern_tangent_modes(raw: np.ndarray, version: int | None) -> np.ndarray:
    """Unity's modern ``tangentMode`` encoding for raw file values (``(N,)`` int).

    Keys without a ``serializedVersion`` use the old 2-bit layout (bit 0 broken, bits 1-2 left, bits 3-4
    right; Editable/Smooth/Linear/Stepped = Free/Auto/Linear/Constant). Values that decode to nothing
    valid (e.g. the uninitialised-memory pattern -842150451, unknown bits) become 0 (Free):
    ``tangentMode`` is only an editing hint, never used to play the curve (a 512-entry lookup table).
    """
    r = np.asarray(raw, dtype=np.int64)
    lut = _TANGENT_LUT[version is None]
    inside = (r >= 0) & (r < 512)
    return np.where(inside, lut[np.where(inside, r, 0)], 0)


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
        if not txt:
            raise ClipReadError(path, k0 + 1, "keyframe serializedVersion is empty (Unity writes 2 or 3)")
        version = int(txt) if txt.isdigit() else -1
        if version not in (2, 3):
            raise ClipReadError(path, k0 + 1, f"keyframe serializedVersion must be 2 or 3, got {txt!r}")
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
    """Keys of the block of lines ``k0 .. k1 - 1`` (each key starts with ``- `` at the block's indent),
    parsed line by line (the careful parser; :func:`parse_key_blocks` is the fast one).

    Raises :class:`ClipReadError` (file, line, reason) for anything that is not a well-formed key list.
    """
    if k1 <= k0:
        raise ClipReadError(path, k0 + 1, "m_Curve has no keys and is not '[]'")
    ind0 = lines.indent[k0]
    if not lines.dash[k0]:
        raise ClipReadError(path, k0 + 1, f"expected a keyframe '- ...', got {lines.text(k0)!r}")
    version, comps, _per_key = _first_key_layout(lines, k0, k1, path)
    if want_components is not None and comps not in want_components:
        raise ClipReadError(
            path, k0 + 1, f"keyframe value has {comps} components; this curve list needs {want_components}"
        )
    fields = LAYOUTS[version]
    widths = [comps if f in _VECTOR_FIELDS else 1 for f in fields]
    starts = np.flatnonzero(lines.dash[k0:k1] & (lines.indent[k0:k1] == ind0)) + k0
    flat = _slow_tokens(lines, starts, k1, fields, widths, path)
    return _key_arrays(lines, path, version, comps, flat, starts)


def _key_arrays(lines: Lines, path, version, comps, flat: np.ndarray, key_lines: np.ndarray) -> KeyArrays:
    """Validated :class:`KeyArrays` from the flat float64 numbers of a block (``n * tokens``)."""
    fields = LAYOUTS[version]
    widths = [comps if f in _VECTOR_FIELDS else 1 for f in fields]
    per_tok = sum(widths)
    n = int(key_lines.shape[0])
    table = _to_float32(flat).reshape(n, per_tok)
    cols = {}
    c = 0
    for f, w in zip(fields, widths, strict=True):
        cols[f] = table[:, c : c + w]
        c += w
    raw = flat.reshape(n, per_tok)
    # A finite number past float32's range turns into inf above; in a slope that would read as a
    # stepped key, so it goes to the checks that report it.
    if not _all_valid(table, fields, widths) or np.any(np.isinf(table) & np.isfinite(raw)):
        _validate(cols, key_lines, fields, path, lines, raw)
    return _pack(version, comps, cols, key_lines)


def _to_float32(flat: np.ndarray) -> np.ndarray:
    """Unity holds every key number as float32: read them as exactly those values (float64 arrays).
    Values past float32's range become inf here and are reported as a typed error by the checks;
    numpy's overflow warning would only add lines to that one-line error."""
    with np.errstate(over="ignore"):
        return flat.astype(np.float32).astype(np.float64)


def _pack(version, comps, cols, key_lines) -> KeyArrays:
    """KeyArrays of the columns ``cols`` (name -> ``(N, w)``)."""
    n = int(key_lines.shape[0])

    def frozen(a):
        if a.flags.writeable:
            a = a.copy()
            a.flags.writeable = False  # Curve keeps read-only arrays as they are (no second copy)
        return a

    return KeyArrays(
        version=version,
        n_components=comps,
        time=frozen(cols["time"][:, 0]),
        value=frozen(cols["value"]),
        in_slope=frozen(cols["inSlope"]),
        out_slope=frozen(cols["outSlope"]),
        tangent_mode=cols["tangentMode"][:, 0].astype(np.int64),
        weighted_mode=(
            cols["weightedMode"][:, 0].astype(np.int64) if "weightedMode" in cols else np.zeros(n, np.int64)
        ),
        in_weight=frozen(cols["inWeight"]) if "inWeight" in cols else None,
        out_weight=frozen(cols["outWeight"]) if "outWeight" in cols else None,
        key_lines=key_lines,
    )


def _field_line(lines: Lines, key_start: int, key_end: int, name: str) -> int:
    for i in range(key_start, key_end):
        kv = split_key(lines.text(i))
        if kv is not None and kv[0] == name:
            return i
    return key_start


_F32_MAX = float(np.finfo(np.float32).max)


def _validate(cols, key_lines, fields, path, lines: Lines, raw=None) -> None:
    """Per-field checks that name the line of the first bad key (raises); ``raw`` = the numbers as
    float64 before the float32 rounding (to tell 'past float32' from a written infinity)."""
    n = key_lines.shape[0]
    ends = np.concatenate([key_lines[1:], [key_lines[-1] + len(fields) + 8]])

    def fail(idx: int, name: str, reason: str):
        i = int(idx)
        raise ClipReadError(
            path, _field_line(lines, key_lines[i], min(int(ends[i]), lines.n), name) + 1, reason
        )

    c = 0
    for f in fields:
        a = cols[f]
        w = a.shape[1]
        r = raw[:, c : c + w] if raw is not None else a
        c += w
        bad = np.isnan(a).any(axis=1)
        if np.any(bad):
            fail(np.argmax(bad), f, f"{f} is NaN")
        bad = (np.isfinite(r) & (np.abs(r) > _F32_MAX)).any(axis=1)
        if np.any(bad):
            i = int(np.argmax(bad))
            v = r[i][np.abs(r[i]) > _F32_MAX][0]
            fail(i, f, f"{f} {v:g} is outside float32's range (Unity stores float32)")
        if f not in ("inSlope", "outSlope"):
            bad = ~np.isfinite(a).all(axis=1)
            if np.any(bad):
                fail(np.argmax(bad), f, f"{f} is infinite")
        if f in _INT_FIELDS:
            bad = (a != np.round(a)).any(axis=1) | (np.abs(a) > 2**31).any(axis=1)
            if np.any(bad):
                fail(np.argmax(bad), f, f"{f} must be an integer")
        if f == "weightedMode":
            bad = ((a < 0) | (a > 3)).any(axis=1)
            if np.any(bad):
                fail(
                    np.argmax(bad),
                    f,
                    f"weightedMode must be 0..3 (none, in, out, both), got {int(a[np.argmax(bad), 0])}",
                )
    t = cols["time"][:, 0]
    if n > 1:
        bad = np.diff(t) <= 0
        if np.any(bad):
            i = int(np.argmax(bad)) + 1
            fail(
                i, "time", f"key time {t[i]:g} s is not after the previous key's {t[i - 1]:g} s (in float32)"
            )


def _all_valid(table: np.ndarray, fields, widths) -> bool:
    """One pass over the whole ``(N, tokens)`` table: no NaN, infinities only in slopes, integral ints,
    weightedMode 0..3, increasing times. False sends the block to the per-field checks that name the line."""
    finite_ok = np.ones(table.shape[1], dtype=bool)
    ints = np.zeros(table.shape[1], dtype=bool)
    c = 0
    wcol = None
    for f, w in zip(fields, widths, strict=True):
        if f not in ("inSlope", "outSlope"):
            finite_ok[c : c + w] = False
        if f in _INT_FIELDS:
            ints[c : c + w] = True
        if f == "weightedMode":
            wcol = c
        c += w
    if np.isnan(table).any() or not np.isfinite(table[:, ~finite_ok]).all():
        return False
    iv = table[:, ints]
    if not (np.array_equal(iv, np.round(iv)) and np.all(np.abs(iv) <= 2**31)):
        return False
    if wcol is not None and not np.all((table[:, wcol] >= 0) & (table[:, wcol] <= 3)):
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
        got = [split_key(t)[0] if split_key(t) else t.strip() for _, t in items]
        dup = next((g for j, g in enumerate(got) if g in got[:j] and g in fields), None)
        if dup is not None:
            line = items[[g for g in got].index(dup, got.index(dup) + 1)][0] + 1
            raise ClipReadError(path, line, f"keyframe field {dup!r} appears twice")
        if len(items) != len(fields):
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
                if f == "serializedVersion" and rest.strip() not in ("2", "3"):
                    raise ClipReadError(
                        path, i + 1, f"keyframe serializedVersion must be 2 or 3, got {rest!r}"
                    )
                out.append(_number(rest, path, i, f))
            else:
                if not (rest.startswith("{") and rest.endswith("}")):
                    raise ClipReadError(path, i + 1, f"{f} must be a {{x, y, z...}} mapping, got {rest!r}")
                parts = [p.strip() for p in rest[1:-1].split(",")]
                names = [p.split(":", 1)[0].strip() for p in parts]
                want = list("xyzw"[:w])
                if names != want:
                    dup = next((m for j, m in enumerate(names) if m in names[:j]), None)
                    if dup is not None:
                        raise ClipReadError(path, i + 1, f"{f} has component {dup!r} twice: {rest}")
                    raise ClipReadError(path, i + 1, f"{f} has components {names}, expected {want}")
                for p in parts:
                    if ":" in p and not p.split(":", 1)[1].startswith(" "):
                        raise ClipReadError(path, i + 1, f"{f}: expected 'name: number', got {p!r}")
                    out.append(_number(p.split(":", 1)[1] if ":" in p else "", path, i, f))
    return np.array(out, dtype=np.float64)


def _number(s: str, path, i: int, field: str) -> float:
    """One key number (:data:`NUMBER`); NaN and anything else is an error naming line ``i + 1``."""
    s = s.strip()
    if NUMBER.fullmatch(s) is None:
        if _NAN.fullmatch(s):
            raise ClipReadError(path, i + 1, f"{field} is NaN")
        raise ClipReadError(path, i + 1, f"{field} must be a number, got {s!r}")
    return float(s.replace(".inf", "inf").replace(".Inf", "inf").replace(".INF", "inf"))


# --------------------------------------------------------------------------------------------------
# The fast path: every block of a document at once.

_NUM_LUT = np.zeros(256, dtype=bool)
_NUM_LUT[np.frombuffer(b"0123456789.+-eEIinfty", dtype=np.uint8)] = True
_CHUNK_BYTES = 4 << 20  # blocks are processed in groups of about this many bytes (bounded memory)
#: The weight Unity writes for every unweighted key side, read without a parse (a third of the
#: numbers of a Unity file are this or a one-digit integer).
_THIRD = b"0.33333334"
_THIRD_LO = int.from_bytes(_THIRD[:8], "little")
_THIRD_HI = int.from_bytes(_THIRD[8:], "little")


def parse_key_blocks(lines: Lines, blocks: list[tuple[int, int, tuple | None]], path) -> list[KeyArrays]:
    """:class:`KeyArrays` of every block ``(k0, k1, want_components)`` (lines ``k0 .. k1 - 1``).

    The blocks of Unity's exact layout are parsed together, vectorized over the file's bytes (see the
    module docstring); the others, and any block whose numbers fail the checks, by
    :func:`parse_key_block`, which accepts the same texts with the same values and raises the typed
    error with the line. Blocks must not overlap.
    """
    out: list[KeyArrays | None] = [None] * len(blocks)
    order = sorted(range(len(blocks)), key=lambda j: blocks[j][0])
    group: list[int] = []
    size = 0
    for j in order:
        k0, k1, _ = blocks[j]
        if k1 <= k0:
            out[j] = parse_key_block(lines, k0, k1, path, blocks[j][2])
            continue
        group.append(j)
        size += int(lines.start[k1] - lines.start[k0])
        if size >= _CHUNK_BYTES:
            _fast_group(lines, blocks, group, out)
            group, size = [], 0
    if group:
        _fast_group(lines, blocks, group, out)
    for j, ka in enumerate(out):
        if ka is None:
            k0, k1, want = blocks[j]
            out[j] = parse_key_block(lines, k0, k1, path, want)
    return out  # type: ignore[return-value]


def _block_layout(lines: Lines, k0: int, k1: int, want) -> tuple | None:
    """(key version, components, indent, CRLF) of a block, read off its first key's lines, or None
    when the block cannot be Unity's exact layout (the careful parser then takes it). Every line of
    every key is checked against the layout afterwards (:func:`_layout_runs`)."""
    if not lines.dash[k0] or lines.start[k1] + 64 > len(lines.data):
        return None  # (a file that ends right after its keys is truncated: the careful parser says so)
    ind0 = int(lines.indent[k0])
    first = lines.raw(k0, k0 + 1)
    crlf = first.endswith(b"\r\n")
    head = b" " * ind0 + b"- "
    if first.rstrip(b"\r\n") == head + b"serializedVersion: 3":
        version = 3
    elif first.rstrip(b"\r\n") == head + b"serializedVersion: 2":
        version = 2
    elif first.startswith(head + b"time: "):
        version = None
    else:
        return None
    fields = LAYOUTS[version]
    if (k1 - k0) % len(fields):
        return None
    vline = lines.raw(k0 + fields.index("value"), k0 + fields.index("value") + 1)
    vhead = b" " * (ind0 + 2) + b"value: "
    if not vline.startswith(vhead):
        return None
    rest = vline[len(vhead) :]
    comps = rest.count(b":") if rest.startswith(b"{") else 1
    if comps not in _COMPONENTS or comps not in (want or (1, 3, 4)):
        return None
    return version, comps, ind0, crlf


def _fast_group(lines: Lines, blocks, group: list[int], out: list) -> None:
    """Parse the blocks ``group`` (sorted by position) with the vectorized path where they match
    Unity's layout exactly; leaves ``out[j]`` None for the others."""
    classes: dict[tuple, list[int]] = {}
    for j in group:
        lay = _block_layout(lines, *blocks[j])
        if lay is not None:
            classes.setdefault(lay, []).append(j)
    if not classes:
        return
    commas = None
    if any(lay[1] > 1 for lay in classes):
        # Commas separate the components of {x: .., y: ..} values: one pass over the group's bytes.
        base = int(lines.start[blocks[group[0]][0]])
        end = int(lines.start[blocks[group[-1]][1]])
        arr = np.frombuffer(lines.data, dtype=np.uint8, count=end - base, offset=base)
        commas = np.flatnonzero(arr == 44) + base
        commas = np.concatenate([commas, np.full(4, len(lines.data) + 64, dtype=np.int64)])
    # The 8 bytes after each line's first 8 (the field name of a key line at Unity's indent 8), one
    # gather for the group's lines: the key checks compare names from it instead of a window gather
    # per field line (0.16 s of the 100 MB CMU .anim's read). Per group, not per file: held for the
    # whole file (8 bytes a line) it raised that read's peak by 26 MB.
    lo = blocks[group[0]][0]
    hi = blocks[group[-1]][1]
    after8 = (window(lines.data, lines.start[lo:hi] + 8, 8), lo)
    for lay, js in classes.items():
        _fast_class(lines, blocks, js, lay, commas, out, after8)


def _fast_class(lines: Lines, blocks, js: list[int], lay: tuple, commas, out: list, after8=None) -> None:
    """The blocks ``js``, all of layout ``lay`` (:func:`_block_layout`): every line checked against
    the layout, the numbers parsed together, checked as :func:`_validate` checks them; the blocks
    that pass get their :class:`KeyArrays` in ``out``."""
    version, comps, _, _ = lay
    fields = LAYOUTS[version]
    per_key = len(fields)
    k0s = np.array([blocks[j][0] for j in js], dtype=np.int64)
    counts = (np.array([blocks[j][1] for j in js], dtype=np.int64) - k0s) // per_key
    key_block = np.repeat(np.arange(len(js)), counts)
    first_key = np.concatenate([[0], np.cumsum(counts)[:-1]])
    key_line = k0s[key_block] + (np.arange(key_block.shape[0]) - first_key[key_block]) * per_key
    rs, re_, bad = _layout_runs(lines, key_line, lay, commas, after8)
    unlike = np.zeros(len(js), dtype=bool)  # blocks not exactly the layout
    unlike[key_block[bad]] = True
    good = ~unlike[key_block]
    if not good.any():
        return
    rs, re_, key_block = rs[good], re_[good], key_block[good]
    table = _numbers(lines.data, rs, re_)
    del rs, re_
    if table is None:  # a run numpy refuses ("1e", "1-2"): the careful parser finds and names it
        return
    f32 = _to_float32(table)
    failed = unlike.copy()  # ... or with a number the checks refuse
    failed[key_block[_bad_keys(table, f32, version, comps, key_block)]] = True
    del table
    f32.flags.writeable = False
    # The int columns of every block at once (per block these small conversions cost more than
    # the numbers' parse on a 1,500-curve file).
    with np.errstate(invalid="ignore"):  # (NaN/inf rows belong to failed blocks, dropped below)
        tm = f32[:, _field_column(version, comps, "tangentMode")].astype(np.int64)
        wm = (
            f32[:, _field_column(version, comps, "weightedMode")].astype(np.int64)
            if "weightedMode" in fields
            else np.zeros(f32.shape[0], dtype=np.int64)
        )
    modern = modern_tangent_modes(tm, version)
    for a in (tm, wm, modern):
        a.flags.writeable = False
    # Read-only views of the whole class's columns; each block takes rows of them.
    cols = _columns(f32, version, comps)
    time, value, ins, outs = cols["time"][:, 0], cols["value"], cols["inSlope"], cols["outSlope"]
    inw, outw = cols.get("inWeight"), cols.get("outWeight")
    pos = 0
    for b, j in enumerate(js):
        if unlike[b]:
            continue
        n = int(counts[b])
        if not failed[b]:  # (the others: the careful parser names the line and the reason)
            r = slice(pos, pos + n)
            out[j] = KeyArrays(
                version,
                comps,
                time[r],
                value[r],
                ins[r],
                outs[r],
                tm[r],
                wm[r],
                None if inw is None else inw[r],
                None if outw is None else outw[r],
                blocks[j][0] + np.arange(n, dtype=np.int64) * per_key,
                modern[r],
            )
        pos += n


def _layout_runs(lines: Lines, key_line: np.ndarray, lay: tuple, commas, after8=None):
    """Number runs ``(rs, re)`` ``(K, tokens)`` of the keys starting at lines ``key_line`` and a bool
    ``(K,)`` of the keys whose bytes are not exactly the layout ``lay``: each line its field's prefix
    (indentation, ``- `` on the first, ``name: ``, ``{x: `` for vectors) byte for byte, then numbers
    (non-empty runs; ``, y: ``-style separators for vectors, then ``}``), then the line break. That
    the runs hold only number characters is checked where they are parsed (:func:`_numbers`)."""
    data = lines.data
    arr = np.frombuffer(data, dtype=np.uint8)
    version, comps, ind0, crlf = lay
    fields = LAYOUTS[version]
    eol = 2 if crlf else 1
    a8, a8_line0 = after8 if after8 is not None else (None, 0)  # (window at start + 8, first line)
    at = lines.start[key_line[:, None] + np.arange(len(fields) + 1)]
    bad = np.zeros(key_line.shape[0], dtype=bool)
    rs: list[np.ndarray] = []
    re_: list[np.ndarray] = []
    for j, f in enumerate(fields):
        s = at[:, j]
        e = at[:, j + 1] - eol  # end of the line's text
        vector = f in _VECTOR_FIELDS and comps > 1
        prefix = (b" " * ind0 + b"- " if j == 0 else b" " * (ind0 + 2)) + f.encode() + b": "
        prefix += b"{x: " if vector else b""
        if j == 0 and ind0 == 6 and a8 is not None:
            # Unity's indent: the name's first 8 bytes are in a8 (one of the four window
            # gathers of a key's first line saved; "      - " itself is compared byte for byte:
            # Lines.dash also holds "-\r").
            bad |= ~_bytes_equal(data, s, prefix[:8])
            bad |= _after8_differs(a8[key_line - a8_line0], prefix[8:16])
            bad |= ~_bytes_equal(data, s + 16, prefix[16:])
        elif j == 0:
            bad |= ~_bytes_equal(data, s, prefix)
        else:
            # The indentation is known (Lines.indent: exactly ind0 + 2 spaces, then no space): only
            # the bytes after it are gathered (a third of the gathers of a key's lines).
            bad |= lines.indent[key_line + j] != ind0 + 2
            tail = prefix[ind0 + 2 :]
            if ind0 + 2 == 8 and a8 is not None:
                # Unity's indent: the first 8 bytes of the field name are in a8 (an aligned gather
                # from the group's one window gather, see _fast_group).
                bad |= _after8_differs(a8[key_line + (j - a8_line0)], tail[:8])
                if len(tail) == 9:  # ("inSlope: "...: one byte gathers faster than a window)
                    bad |= arr[s + 16] != tail[8]
                elif len(tail) > 8:
                    bad |= ~_bytes_equal(data, s + 16, tail[8:])
            else:
                bad |= ~_bytes_equal(data, s + (ind0 + 2), tail)
        if crlf:
            bad |= arr[e] != 13
        r = s + len(prefix)
        if f == "serializedVersion":  # the careful parser takes "2" or "3" in any key, nothing else
            bad |= (e != r + 1) | ((arr[r] | 1) != 51)
        if not vector:
            rs.append(r)
            re_.append(e)
            continue
        ci = np.searchsorted(commas, r)
        for c in range(comps - 1):
            p = commas[ci + c]
            bad |= p >= e
            bad |= ~_bytes_equal(data, p, b", " + b"xyzw"[c + 1 : c + 2] + b": ")
            rs.append(r)
            re_.append(p)
            r = p + 5
        bad |= commas[ci + comps - 1] < e  # no further comma on the line
        bad |= arr[e - 1] != 125  # "}"
        rs.append(r)
        re_.append(e - 1)
    rs_a = np.stack(rs, axis=1)
    re_a = np.stack(re_, axis=1)
    bad |= (re_a <= rs_a).any(axis=1)
    return rs_a, re_a, bad


def _after8_differs(after8: np.ndarray, head: bytes) -> np.ndarray:
    """Bool per line: its 8 bytes after the first 8 (``after8``) do not start with ``head`` (<= 8)."""
    mask = np.uint64((1 << (8 * len(head))) - 1)
    return (after8 & mask) != np.uint64(int.from_bytes(head, "little"))


def _bytes_equal(data: bytes, pos: np.ndarray, text: bytes) -> np.ndarray:
    """Bool per position: ``data[pos : pos + len(text)] == text`` (8 bytes per gather)."""
    ok = np.ones(pos.shape[0], dtype=bool)
    for c in range(0, len(text), 8):
        chunk = text[c : c + 8]
        mask = np.uint64((1 << (8 * len(chunk))) - 1)
        ok &= (window(data, pos + c, 8) & mask) == np.uint64(int.from_bytes(chunk, "little"))
    return ok


def _numbers(data: bytes, rs: np.ndarray, re_: np.ndarray) -> np.ndarray | None:
    """The float64 numbers of the runs ``[rs, re)`` (``(K, tokens)``), or None when a run is not a
    number numpy reads (or holds a character no number has). One-digit runs and Unity's weight
    0.33333334 are read without a parse, plain decimals by :func:`_plain_decimals`, the rest by
    one ``numpy.fromstring``."""
    arr = np.frombuffer(data, dtype=np.uint8)
    n = re_ - rs
    table = np.empty(rs.shape, dtype=np.float64)
    digit = arr[rs] - np.uint8(48)
    quick = (n == 1) & (digit < 10)
    table[quick] = digit[quick]
    ten = np.flatnonzero((n == 10).ravel())
    if ten.size:
        p = rs.ravel()[ten]
        third = (window(data, p, 8) == np.uint64(_THIRD_LO)) & (
            (window(data, p + 8, 2)) == np.uint16(_THIRD_HI)
        )
        quick.ravel()[ten[third]] = True
        table.ravel()[ten[third]] = float(_THIRD)
    rest = np.flatnonzero(~quick.ravel())
    if rest.size == 0:
        return table
    # Plain decimals ("-0.009813714", about all the rest of a Unity file) by the exact SWAR parse;
    # what it does not take (exponents, infinities, odd spellings) by numpy below.
    ok, val = _plain_decimals(data, re_.ravel()[rest], n.ravel()[rest])
    table.ravel()[rest[ok]] = val[ok]
    rest = rest[~ok]
    if rest.size == 0:
        return table
    rs_g = rs.ravel()[rest]
    n_g = n.ravel()[rest] + 1  # each run and the delimiter after it (made the separator)
    offs = np.cumsum(n_g) - n_g
    # Byte positions of the runs: a cumulative sum of steps (1 inside a run, the jump to the next
    # run at its start), one int32 per byte (a repeat + arange took three int64s per byte).
    pos = np.ones(int(offs[-1] + n_g[-1]), dtype=np.int32 if len(data) < 2**31 else np.int64)
    pos[0] = rs_g[0]
    pos[offs[1:]] = rs_g[1:] - (rs_g[:-1] + n_g[:-1] - 1)
    np.cumsum(pos, out=pos)
    buf = arr[pos]
    del pos
    sep = offs + n_g - 1
    buf[sep] = 48
    # Runs may only hold number characters (no space: "1 garbage" or "1 2" fail here).
    if not _NUM_LUT[buf].all():
        return None
    buf[sep] = 32
    flat = _fromstring(buf.tobytes(), rs_g.shape[0])
    if flat is None:
        return None
    inf = np.flatnonzero(np.isinf(flat))
    if inf.size:  # numpy also reads "infInity": only the spellings of NUMBER pass
        starts, ends = rs_g[inf].tolist(), (rs_g[inf] + n_g[inf] - 1).tolist()
        if any(NUMBER.fullmatch(data[a:b].decode()) is None for a, b in zip(starts, ends, strict=True)):
            return None
    table.ravel()[rest] = flat
    return table


_W8 = np.uint64
_POW10_I = 10 ** np.arange(17, dtype=np.int64)
_POW10_F = 10.0 ** np.arange(16)  # exact: every power of ten up to 1e22 is a float64
#: Byte masks of the columns ``>= first`` of a 16-byte frame, as two little-endian words per ``first``.
_INSIDE_W = np.ascontiguousarray(
    (np.arange(16)[None, :] >= np.arange(17)[:, None]).astype(np.uint8) * np.uint8(255)
).view("<u8")
_INSIDE_BITS = (np.uint32(0xFFFF) << np.arange(17, dtype=np.uint32)).astype(np.uint16)


def _plain_decimals(data: bytes, re_: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ok, values)`` of the runs of ``n`` bytes ending at ``re_`` (``(M,)`` each): ``ok`` where a run is
    a plain decimal ``-?[0-9]+(\\.[0-9]+)?`` of at most 15 characters, ``values`` its float64, the
    same bits as ``numpy.fromstring`` / ``float``: the digits D (< 10**15 < 2**53) and the power
    10**F (F <= 14) are exact float64s, so D / 10**F is the correctly rounded quotient (Clinger's
    fast path), which is what a correctly rounded strtod returns. Each run is read right-aligned in
    a 16-byte frame (two 8-byte gathers ending at its end), its digits combined 8 at a time (SWAR).

    Replaces, for these runs, the byte-by-byte gather into a joined buffer and ``numpy.fromstring``:
    on the 100 MB CMU .anim (2.2M such numbers) gather + fromstring took ~0.30 s, this ~0.13 s."""
    m_runs = re_.shape[0]
    n = n.astype(np.int64)
    ok = (n <= 15) & (re_ >= 16)
    pos = np.where(ok, re_, 16).astype(np.int64) - 16
    view = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    words = np.empty((m_runs, 2), dtype="<u8")
    words[:, 0] = view[pos]
    words[:, 1] = view[pos + 8]
    m = words.view(np.uint8)  # (M, 16): the run in columns first .. 15
    first = np.clip(16 - n, 0, 16)
    inside = _INSIDE_BITS[first]

    def bits(b):  # (M, 16) bool -> (M,) uint16, bit c = column c
        return np.packbits(b.ravel(), bitorder="little").view("<u2")

    d = m - np.uint8(48)
    dig = d < 10
    other = ~bits(dig) & inside  # the run's non-digit columns
    dot = bits(m == 46) & other
    minus = bits(m == 45) & other
    neg = minus == (np.uint16(1) << np.minimum(first, 15).astype(np.uint16))  # "-" first
    ndot = np.bitwise_count(dot)
    p = np.bitwise_count(dot - np.uint16(1)).astype(np.int64)  # the dot's column (16: none)
    ok &= ((other & ~(dot | minus)) == 0) & ((minus == 0) | neg) & (ndot <= 1) & (n > neg)
    ok &= (ndot == 0) | ((p > first + neg) & (p < 15))  # digits before and after the dot
    d *= dig
    w = d.view("<u8")
    w &= _INSIDE_W[first]  # (digits left of the run are another number's)
    w = w * _W8(10) + (w >> _W8(8))  # byte 0 is the most significant digit of its word
    w &= _W8(0x00FF00FF00FF00FF)
    w = w * _W8(100) + (w >> _W8(16))
    w &= _W8(0x0000FFFF0000FFFF)
    w = w * _W8(10000) + (w >> _W8(32))
    w &= _W8(0xFFFFFFFF)
    # The dot's column read as a 0 digit: D' = I * 10**(F+1) + R, the number is D = I * 10**F + R.
    dd = (w[:, 0] * _W8(100000000) + w[:, 1]).astype(np.int64)
    hasdot = ndot == 1
    f = np.where(hasdot, 15 - p, 0)
    q = dd // _POW10_I[np.where(hasdot, f + 1, 16)]
    dd -= q * 9 * _POW10_I[f]
    val = dd.astype(np.float64) / _POW10_F[np.minimum(f, 15)]
    np.negative(val, out=val, where=neg)  # (-0 stays -0.0, as numpy reads it)
    return ok, val


_KIND_TIME, _KIND_VALUE, _KIND_SLOPE, _KIND_INT, _KIND_WMODE = 0, 1, 2, 3, 4
_KIND_CACHE: dict = {}


def _kind_pattern(version, comps: int) -> np.ndarray:
    """What each number of one key is, in file order (time, value, slope, int field, weightedMode)."""
    key = (version, comps)
    if key not in _KIND_CACHE:
        out = []
        for f in LAYOUTS[version]:
            w = comps if f in _VECTOR_FIELDS else 1
            k = {
                "time": _KIND_TIME,
                "inSlope": _KIND_SLOPE,
                "outSlope": _KIND_SLOPE,
                "weightedMode": _KIND_WMODE,
                "serializedVersion": _KIND_INT,
                "tangentMode": _KIND_INT,
            }.get(f, _KIND_VALUE)
            out += [k] * w
        _KIND_CACHE[key] = np.array(out, dtype=np.int8)
    return _KIND_CACHE[key]


def _field_column(version, comps: int, name: str) -> int:
    """Column of field ``name``'s (first) number in a key's numbers."""
    c = 0
    for f in LAYOUTS[version]:
        if f == name:
            return c
        c += comps if f in _VECTOR_FIELDS else 1
    raise KeyError(name)


def _columns(table: np.ndarray, version, comps: int) -> dict:
    cols = {}
    c = 0
    for f in LAYOUTS[version]:
        w = comps if f in _VECTOR_FIELDS else 1
        cols[f] = table[:, c : c + w]
        c += w
    return cols


def _fromstring(buf: bytes, count: int) -> np.ndarray | None:
    """All numbers of ``buf`` (space separated), or None when one of them is malformed."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            a = np.fromstring(buf, dtype=np.float64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None
    return a if a.shape[0] == count else None


def _bad_keys(raw: np.ndarray, f32: np.ndarray, version, comps: int, key_block: np.ndarray) -> np.ndarray:
    """Bool per key (rows of the ``(K, tokens)`` numbers, ``raw`` before and ``f32`` after the
    float32 rounding): fails a check :func:`_validate` makes (NaN, infinities outside slopes, past
    float32, non-integral int fields, weightedMode outside 0..3, a time not after the previous key's
    in the same block)."""
    kinds = _kind_pattern(version, comps)
    with np.errstate(invalid="ignore"):
        bad = np.isnan(f32).any(axis=1)
        inf = np.isinf(f32)
        if inf.any():
            bad |= (inf & (np.isfinite(raw) | (kinds != _KIND_SLOPE))).any(axis=1)
        iv = f32[:, (kinds == _KIND_INT) | (kinds == _KIND_WMODE)]
        bad |= ((iv != np.round(iv)) | (np.abs(iv) > 2**31)).any(axis=1)
        wm = f32[:, kinds == _KIND_WMODE]
        bad |= ((wm < 0) | (wm > 3)).any(axis=1)
        t = f32[:, int(np.flatnonzero(kinds == _KIND_TIME)[0])]
        bad[1:] |= ~(t[1:] > t[:-1]) & (key_block[1:] == key_block[:-1])
    return bad
