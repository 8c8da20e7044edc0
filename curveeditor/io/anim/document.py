"""The ``.anim`` source document: the file's bytes cut into top-level fields and curve entries.

:class:`AnimDocument` is what :func:`curveeditor.io.anim.read_anim` stores in ``Clip.source``. It keeps
the original bytes and, for every top-level field and every curve-list item, its line range, so the
writer can re-emit untouched parts byte for byte and regenerate only what was edited.

Line numbers are 0-based inside this module; errors report them 1-based.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ClipReadError
from .keys import KeyArrays, _field_line, parse_key_blocks
from .lexer import Lines, check_bytes, scalar_string, split_key

__all__ = ["AnimDocument", "Entry", "BindingItem", "parse_document", "CURVE_LISTS", "REQUIRED_FIELDS"]

#: Curve lists with AnimationCurve entries, and the component count of their values.
CURVE_LISTS = {
    "m_RotationCurves": (4,),
    "m_EulerCurves": (3,),
    "m_PositionCurves": (3,),
    "m_ScaleCurves": (3,),
    "m_FloatCurves": (1,),
    "m_EditorCurves": (1,),
    "m_EulerEditorCurves": (1,),
}
OTHER_LISTS = ("m_CompressedRotationCurves", "m_PPtrCurves", "m_Events")

#: Fields every Unity version writes (sv3 to sv7); a file without them is truncated or not a clip.
REQUIRED_FIELDS = (
    "m_Name",
    "m_RotationCurves",
    "m_PositionCurves",
    "m_ScaleCurves",
    "m_FloatCurves",
    "m_SampleRate",
    "m_WrapMode",
    "m_EditorCurves",
    "m_Events",
)


@dataclass
class Entry:
    """One item of a curve list (lines ``start`` .. ``end - 1``)."""

    list_name: str
    index: int
    start: int
    end: int
    path: str = ""
    attribute: str | None = None
    class_id: int | None = None
    script: str = "{fileID: 0}"
    flags: str | None = None
    item_version: str | None = None  # sv7 "- serializedVersion: 2" item header
    curve_version: str | None = None
    pre_infinity: int = 2
    post_infinity: int = 2
    rotation_order: int | None = None
    keys: KeyArrays | None = None
    n_keys: int = 0
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    extra: dict = field(default_factory=dict)


@dataclass
class BindingItem:
    start: int
    end: int
    path: int
    attribute: int
    type_id: int
    custom_type: int
    is_pptr: int


@dataclass
class AnimDocument:
    """A parsed ``.anim`` file (see module docstring)."""

    path: str
    data: bytes
    lines: Lines
    header_end: int  # line index of "AnimationClip:" + 1
    fields: list[tuple[str, int, int, str]]  # (name, start, end, rest of the key line)
    entries: dict[str, list[Entry]]
    clip_version: int
    name: str
    sample_rate: float
    legacy: bool
    bindings: list[BindingItem]
    binding_key: str  # "typeID" or "classID"
    bindings_versioned: bool
    stop_time_line: int | None
    settings: dict[str, str]
    events: list[dict]
    original_tracks: dict = field(default_factory=dict)  # track path -> (RotationTrack, TrackSource)
    original_floats: dict = field(default_factory=dict)  # float name -> (OtherTrack, Entry, mirrors)
    style: str | None = None

    def field_span(self, name: str) -> tuple[int, int] | None:
        for n, a, b, _ in self.fields:
            if n == name:
                return a, b
        return None

    def field_rest(self, name: str) -> str | None:
        for n, _, _, rest in self.fields:
            if n == name:
                return rest
        return None

    @property
    def sv7(self) -> bool:
        return self.clip_version >= 7

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "surrogateescape")


def _int(path, line: int, name: str, rest: str) -> int:
    try:
        return int(rest.strip())
    except ValueError:
        raise ClipReadError(path, line + 1, f"{name} must be an integer, got {rest.strip()!r}") from None


def _version(path, line: int, name: str, rest: str) -> int:
    """A ``serializedVersion`` field: Unity always writes a small non-negative integer there; an empty
    or other value means a damaged file (Unity would read it as 0, an older layout it then misreads)."""
    t = rest.strip()
    if not t:
        raise ClipReadError(path, line + 1, f"{name} is empty")
    if not t.isdigit() or not t.isascii():
        raise ClipReadError(path, line + 1, f"{name} must be a non-negative integer, got {t!r}")
    return int(t)


def _float(path, line: int, name: str, rest: str) -> float:
    try:
        v = float(rest.strip())
    except ValueError:
        raise ClipReadError(path, line + 1, f"{name} must be a number, got {rest.strip()!r}") from None
    if not np.isfinite(v):
        raise ClipReadError(path, line + 1, f"{name} must be finite, got {rest.strip()!r}")
    return v


def _read_header(path, lines: Lines) -> int:
    """Index of the ``AnimationClip:`` line; checks the YAML/Unity header before it."""
    saw_doc = False
    for i in range(min(lines.n, 50)):
        t = lines.text(i).lstrip("\ufeff")
        if not t.strip() or t.startswith("%"):
            continue
        if t.startswith("--- "):
            if saw_doc:
                break
            parts = t.split()
            tag = parts[1] if len(parts) > 1 else ""
            if not tag.startswith("!u!"):
                raise ClipReadError(path, i + 1, f"not a Unity YAML object header: {t!r}")
            if tag != "!u!74":
                raise ClipReadError(path, i + 1, f"not an AnimationClip (class {tag[3:]}, expected 74)")
            saw_doc = True
            continue
        if t == "AnimationClip:" or t.startswith("AnimationClip:"):
            if not saw_doc:
                raise ClipReadError(path, i + 1, "missing the '--- !u!74 &...' document header")
            if t.strip() != "AnimationClip:":
                raise ClipReadError(path, i + 1, f"malformed AnimationClip line {t!r}")
            return i
        if saw_doc:
            cls = t.split(":", 1)[0]
            raise ClipReadError(path, i + 1, f"not an AnimationClip: the object is {cls!r}")
        raise ClipReadError(path, i + 1, "not a Unity .anim file (no '%YAML' / '--- !u!74' header)")
    if lines.n == 0:
        raise ClipReadError(path, 1, "empty file")
    raise ClipReadError(path, min(lines.n, 50), "not a Unity .anim file (no 'AnimationClip:' object)")


def parse_document(path: str | os.PathLike, data: bytes, parse_blocks=parse_key_blocks) -> AnimDocument:
    """Parse ``data`` (the file's bytes) into an :class:`AnimDocument`.

    ``parse_blocks(lines, blocks, path)``: the key parser (:func:`~.keys.parse_key_blocks`; the
    reader in parts, :mod:`.parts`, parses the blocks it cut out of ``data`` with it).

    Raises :class:`ClipReadError` on bad input."""
    path = os.fspath(path)
    check_bytes(path, data)
    lines = Lines(data)
    top = _read_header(path, lines)
    ind, dash, blank = lines.indent, lines.dash, lines.blank
    body = slice(top + 1, lines.n)  # (slices, not index arrays: 8 bytes a line less at the peak)
    bad = np.flatnonzero((ind[body] < 2) & ~blank[body]) + top + 1
    if bad.size:
        i = int(bad[0])
        raise ClipReadError(
            path, i + 1, f"unexpected top-level line {lines.text(i)!r} (truncated or not one clip)"
        )
    tab = re.search(rb"(?m)^ *\t", data) if b"\t" in data else None
    if tab is not None:
        line = data.count(b"\n", 0, tab.start()) + 1
        raise ClipReadError(path, line, "tab in indentation (YAML indents with spaces)")
    keys = np.flatnonzero((ind[body] == 2) & ~dash[body] & ~blank[body]) + top + 1
    fields: list[tuple[str, int, int, str]] = []
    for j, i in enumerate(keys):
        i = int(i)
        end = int(keys[j + 1]) if j + 1 < len(keys) else lines.n
        kv = split_key(lines.text(i))
        if kv is None:
            raise ClipReadError(path, i + 1, f"expected 'field: value', got {lines.text(i).strip()!r}")
        fields.append((kv[0], i, end, kv[1]))
    filled = ~blank[body]
    if keys.size and filled.any() and int(keys[0]) != int(np.argmax(filled)) + top + 1:
        i = int(np.argmax(filled)) + top + 1
        raise ClipReadError(path, i + 1, f"unexpected line {lines.text(i)!r}")
    names = [f[0] for f in fields]
    for req in REQUIRED_FIELDS:
        if req not in names:
            last = fields[-1][2] if fields else top + 1
            raise ClipReadError(path, last, f"missing field {req} (file truncated or not an AnimationClip)")
    seen = set()
    for n, a, _, _ in fields:
        if n in seen:
            raise ClipReadError(path, a + 1, f"field {n} appears twice")
        seen.add(n)
    fd = {n: (a, b, rest) for n, a, b, rest in fields}

    def scalar_field(name, conv, default=None):
        if name not in fd:
            return default
        a, b, rest = fd[name]
        if b - a > 1 and any(not lines.blank[k] for k in range(a + 1, b)):
            raise ClipReadError(path, a + 2, f"{name} must be a single value")
        return conv(path, a, name, rest)

    a, b, rest = fd["m_Name"]
    name = scalar_string(rest)
    if name is None:
        raise ClipReadError(path, a + 1, f"m_Name is not a string: {rest!r}")
    clip_version = scalar_field(
        "serializedVersion", lambda p, ln, n, r: _version(p, ln, "clip serializedVersion", r), 0
    )
    sample_rate = scalar_field("m_SampleRate", _float)
    if not sample_rate > 0:
        raise ClipReadError(
            path, fd["m_SampleRate"][0] + 1, f"m_SampleRate must be positive, got {sample_rate:g}"
        )
    scalar_field("m_WrapMode", _int)
    legacy = bool(scalar_field("m_Legacy", _int, 0))
    if "m_AnimationType" in fd:
        legacy = scalar_field("m_AnimationType", _int) == 1
    scalar_field("m_Compressed", _int, 0)

    entries: dict[str, list[Entry]] = {}
    for lname in list(CURVE_LISTS) + list(OTHER_LISTS):
        if lname not in fd:
            entries[lname] = []
            continue
        a, b, rest = fd[lname]
        entries[lname] = _list_items(path, lines, lname, a, b, rest)
    blocks: list[tuple[int, int, tuple | None]] = []
    owners: list[Entry] = []
    # The entry- and curve-level lines of every curve entry, found once (key lines are the bulk).
    struct = np.flatnonzero(~blank & (ind <= 6) & ~(dash & (ind == 6)))
    texts = [
        data[a:b].decode("utf-8", "surrogateescape").rstrip("\r\n")
        for a, b in zip(lines.start[struct].tolist(), lines.start[struct + 1].tolist(), strict=True)
    ]
    s_lines = list(
        zip(struct.tolist(), texts, ind[struct].tolist(), dash[struct].tolist(), _splits(texts), strict=True)
    )
    entry_list = [(want, e) for lname, want in CURVE_LISTS.items() for e in entries[lname]]
    bounds = np.searchsorted(struct, [(e.start, e.end) for _, e in entry_list]).reshape(-1, 2).tolist()
    for (want, e), (a0, b0) in zip(entry_list, bounds, strict=True):
        blk = _parse_curve_entry(path, lines, e, want, s_lines[a0:b0])
        if blk is not None:
            blocks.append(blk)
            owners.append(e)
    # All key blocks at once: the vectorized parser works on the whole file (keys.py).
    for e, ka in zip(owners, parse_blocks(lines, blocks, path), strict=True):
        e.keys = ka
        e.n_keys = ka.n
        e.times = ka.time
    for e in entries["m_RotationCurves"]:
        _check_quaternions(path, lines, e)
    for e in entries["m_PPtrCurves"]:
        _parse_pptr_entry(path, lines, e)
    for e in entries["m_CompressedRotationCurves"]:
        _parse_compressed_entry(path, lines, e)
    events = [_parse_event(path, lines, e) for e in entries["m_Events"]]

    bindings, bkey, bver = _parse_bindings(path, lines, fd.get("m_ClipBindingConstant"))
    settings, stop_line = _parse_settings(
        path, lines, fd.get("m_AnimationClipSettings") or fd.get("m_MuscleClipInfo")
    )
    return AnimDocument(
        path=path,
        data=data,
        lines=lines,
        header_end=top + 1,
        fields=fields,
        entries=entries,
        clip_version=clip_version,
        name=name,
        sample_rate=sample_rate,
        legacy=legacy,
        bindings=bindings,
        binding_key=bkey,
        bindings_versioned=bver,
        stop_time_line=stop_line,
        settings=settings,
        events=events,
    )


def _list_items(path, lines: Lines, lname: str, a: int, b: int, rest: str) -> list[Entry]:
    if rest == "[]":
        extra = [k for k in range(a + 1, b) if not lines.blank[k]]
        if extra:
            raise ClipReadError(path, extra[0] + 1, f"unexpected line after '{lname}: []'")
        return []
    if rest != "":
        raise ClipReadError(path, a + 1, f"{lname} must be a list, got {rest!r}")
    # Slices, not an index array of the list's lines (3.6M lines on the 100 MB CMU .anim: the
    # fancy-indexed gathers took 0.05 s).
    body = slice(a + 1, b)
    items = np.flatnonzero((lines.indent[body] == 2) & lines.dash[body]) + (a + 1)
    filled = ~lines.blank[body]
    if not filled.any():
        raise ClipReadError(path, a + 1, f"{lname} has no items and is not '[]' (truncated?)")
    first = int(np.argmax(filled)) + a + 1
    if items.size == 0 or int(items[0]) != first:
        i = first
        raise ClipReadError(
            path, i + 1, f"expected a '- ' list item in {lname}, got {lines.text(i).strip()!r}"
        )
    starts = items.tolist()
    ends = starts[1:] + [b]
    return [Entry(lname, j, s, e) for j, (s, e) in enumerate(zip(starts, ends, strict=True))]


def _structure(path, lines: Lines, e: Entry, pptr: bool = False, sel=None):
    """Entry-level (indent 4) and curve-level (indent 6) ``key: value`` lines of an entry, with
    wrapped flow mappings and folded plain scalars joined. Returns (top dict, curve dict) of
    name -> (line, rest). With ``pptr`` the ``- time/value`` key list under ``curve:`` is skipped."""
    top: dict[str, tuple[int, str]] = {}
    cur: dict[str, tuple[int, str]] = {}
    if sel is None:
        rng = np.arange(e.start, e.end)
        ind = lines.indent[rng]
        dash = lines.dash[rng]
        if pptr:
            idx = rng[(ind <= 6) & ~lines.blank[rng]].tolist()
        else:
            idx = rng[((ind <= 6) & ~(dash & (ind == 6))) & ~lines.blank[rng]].tolist()
        texts = [lines.text(i) for i in idx]
        sel = list(
            zip(idx, texts, lines.indent[idx].tolist(), lines.dash[idx].tolist(), _splits(texts), strict=True)
        )
    last = None  # (dict, key, indent of the key)
    skipping = False
    for i, t, ii, is_dash, kv in sel:
        if pptr:
            if ii == 4 and is_dash and i != e.start:
                skipping = True
                continue
            if skipping and ii > 4:
                continue
            skipping = False
        if last is not None and ii > last[2]:
            d0, k0, _ = last
            ln0, rest0 = d0[k0]
            if rest0 != "":  # wrapped flow mapping or folded plain scalar
                d0[k0] = (ln0, rest0 + " " + t.strip())
                continue
        if kv is None or (i != e.start and is_dash):
            raise ClipReadError(path, i + 1, f"unexpected line in a {e.list_name} item: {t.strip()!r}")
        k, rest = kv
        if i == e.start or ii == 4:
            d, level = top, 4
        elif ii == 6 and not pptr:
            d, level = cur, 6
        else:
            raise ClipReadError(path, i + 1, f"unexpected indentation in a {e.list_name} item: {t.strip()!r}")
        if k in d:
            raise ClipReadError(path, i + 1, f"field {k} appears twice in a {e.list_name} item")
        d[k] = (i, rest)
        last = (d, k, level)
    return top, cur


def _splits(texts: list[str]) -> list[tuple[str, str] | None]:
    """:func:`_split_fast` of every line, each distinct text split once (Unity repeats most entry
    lines verbatim: ``m_PreInfinity: 2``, ``classID: 4``...)."""
    cache: dict[str, tuple[str, str] | None] = {}
    out = []
    for t in texts:
        kv = cache.get(t, _UNSPLIT)
        if kv is _UNSPLIT:
            kv = cache[t] = _split_fast(t)
        out.append(kv)
    return out


_UNSPLIT = ("", "")  # (a sentinel: no line splits to this object)


def _split_fast(t: str) -> tuple[str, str] | None:
    """:func:`split_key` for the plain ``name: value`` lines Unity writes (3x faster); anything
    else goes to the regex, so both give the same answer."""
    body = t.lstrip(" ")
    if body.startswith("- "):
        body = body[2:]
    k, sep, rest = body.partition(": ")
    if sep and k and ":" not in k and k[0] not in "'\"{}[],#\t" and not k[0].isspace():
        return k, rest.strip()
    return split_key(t)


def _entry_names(path, e: Entry, top: dict, need_attribute: bool) -> None:
    if "path" not in top:
        raise ClipReadError(path, e.end, f"{e.list_name} item has no 'path' (truncated?)")
    ln, rest = top["path"]
    p = scalar_string(rest)
    if p is None:
        raise ClipReadError(path, ln + 1, f"path is not a string: {rest!r}")
    e.path = p
    if "attribute" in top:
        ln, rest = top["attribute"]
        at = scalar_string(rest)
        if at is None:
            raise ClipReadError(path, ln + 1, f"attribute is not a string: {rest!r}")
        e.attribute = at
    elif need_attribute:
        raise ClipReadError(path, e.end, f"{e.list_name} item has no 'attribute'")
    if "classID" in top:
        e.class_id = _int(path, top["classID"][0], "classID", top["classID"][1])
    elif need_attribute:
        raise ClipReadError(path, e.end, f"{e.list_name} item has no 'classID'")
    if "script" in top:
        e.script = top["script"][1]
    if "flags" in top:
        e.flags = top["flags"][1]
    if "serializedVersion" in top:
        e.item_version = top["serializedVersion"][1]
        _version(path, top["serializedVersion"][0], f"{e.list_name} item serializedVersion", e.item_version)


def _parse_curve_entry(path, lines: Lines, e: Entry, want, sel=None) -> tuple[int, int, tuple] | None:
    """Fill ``e`` from its non-key lines (``sel``: their indices, if known); returns its key block
    ``(k0, k1, want)`` (None for ``[]``)."""
    top, cur = _structure(path, lines, e, sel=sel)
    if "curve" not in top:
        raise ClipReadError(path, e.start + 1, f"{e.list_name} item has no 'curve'")
    if top["curve"][1] != "":
        raise ClipReadError(path, top["curve"][0] + 1, "curve must be a mapping")
    _entry_names(
        path,
        e,
        top,
        need_attribute=e.list_name in ("m_FloatCurves", "m_EditorCurves", "m_EulerEditorCurves"),
    )
    if "m_Curve" not in cur:
        raise ClipReadError(path, top["curve"][0] + 1, "AnimationCurve has no m_Curve (truncated?)")
    for k in ("m_PreInfinity", "m_PostInfinity"):
        if k not in cur:
            raise ClipReadError(path, cur["m_Curve"][0] + 1, f"AnimationCurve has no {k} (truncated?)")
    e.pre_infinity = _int(path, cur["m_PreInfinity"][0], "m_PreInfinity", cur["m_PreInfinity"][1])
    e.post_infinity = _int(path, cur["m_PostInfinity"][0], "m_PostInfinity", cur["m_PostInfinity"][1])
    for k in ("m_PreInfinity", "m_PostInfinity"):
        v = _int(path, cur[k][0], k, cur[k][1])
        if not 0 <= v <= 4:
            raise ClipReadError(path, cur[k][0] + 1, f"{k} must be a wrap mode 0..4, got {v}")
    if "m_RotationOrder" in cur:
        e.rotation_order = _int(path, cur["m_RotationOrder"][0], "m_RotationOrder", cur["m_RotationOrder"][1])
        if not 0 <= e.rotation_order <= 5:
            raise ClipReadError(
                path, cur["m_RotationOrder"][0] + 1, f"m_RotationOrder must be 0..5, got {e.rotation_order}"
            )
    if "serializedVersion" in cur:
        e.curve_version = cur["serializedVersion"][1]
        _version(path, cur["serializedVersion"][0], "AnimationCurve serializedVersion", e.curve_version)
    ln, rest = cur["m_Curve"]
    e.extra["m_curve_line"] = ln
    e.extra["key_end"] = ln + 1
    if rest == "[]":
        e.n_keys = 0
        return None
    if rest != "":
        raise ClipReadError(path, ln + 1, f"m_Curve must be a list, got {rest!r}")
    # The key block runs to the next curve-level line after m_Curve.
    after = [v[0] for v in cur.values() if v[0] > ln] + [v[0] for v in top.values() if v[0] > ln]
    k1 = min(after) if after else e.end
    k0 = ln + 1
    while k1 > k0 and lines.blank[k1 - 1]:
        k1 -= 1
    e.extra["key_end"] = k1
    return k0, k1, want


def _check_quaternions(path, lines: Lines, e: Entry) -> None:
    """A quaternion key must have a direction: Unity normalizes what it plays, and a zero key (or
    one whose square norm underflows) has none."""
    k = e.keys
    if k is None or k.n == 0:
        return
    v = k.value
    norm2 = np.einsum("ij,ij->i", v, v)
    bad = ~(norm2 > 0.0)
    if np.any(bad):
        i = int(np.argmax(bad))
        val = ", ".join(f"{c}: {x:g}" for c, x in zip("xyzw", v[i], strict=True))
        k0 = int(k.key_lines[i])
        line = _field_line(lines, k0, min(k0 + 12, lines.n), "value")
        raise ClipReadError(path, line + 1, f"quaternion key {{{val}}} at {k.time[i]:g} s has zero length")


def _parse_pptr_entry(path, lines: Lines, e: Entry) -> None:
    top, _ = _structure(path, lines, e, pptr=True)
    if "curve" not in top:
        raise ClipReadError(path, e.start + 1, "m_PPtrCurves item has no 'curve'")
    _entry_names(path, e, top, need_attribute=True)
    ln, rest = top["curve"]
    times = []
    values = []
    if rest not in ("", "[]"):
        raise ClipReadError(path, ln + 1, f"PPtr curve must be a list, got {rest!r}")
    i = ln + 1
    while i < e.end and not (lines.indent[i] <= 4 and not lines.dash[i]):
        kv = split_key(lines.text(i))
        if not (lines.indent[i] == 4 and lines.dash[i]) or kv is None or kv[0] != "time":
            raise ClipReadError(
                path, i + 1, f"expected '- time: ...' in a PPtr curve, got {lines.text(i).strip()!r}"
            )
        times.append(_float(path, i, "time", kv[1]))
        i += 1
        kv = split_key(lines.text(i)) if i < e.end and lines.indent[i] == 6 else None
        if kv is None or kv[0] != "value":
            raise ClipReadError(path, i + 1, "PPtr key has no 'value: {fileID: ...}'")
        val, vl = kv[1], i
        i += 1
        while i < e.end and lines.indent[i] > 6:  # wrapped flow mapping
            val += " " + lines.text(i).strip()
            i += 1
        if not (val.startswith("{") and val.endswith("}") and "fileID" in val):
            raise ClipReadError(
                path, vl + 1, f"PPtr key value must be an object reference {{fileID: ...}}, got {val!r}"
            )
        values.append(val)
    if len(values) != len(times):
        raise ClipReadError(path, e.start + 1, "PPtr curve keys must each have a time and a value")
    t = np.array(times, dtype=np.float64)
    if t.size > 1 and np.any(np.diff(t) < 0):
        raise ClipReadError(path, e.start + 1, "PPtr key times are not sorted")
    e.times = t
    e.n_keys = t.size
    e.extra["values"] = values


def _parse_compressed_entry(path, lines: Lines, e: Entry) -> None:
    """An ``m_CompressedRotationCurves`` item, decoded (:mod:`.compressed`) into ``e.extra["decoded"]``
    = (times, values, in_slopes, out_slopes); inconsistent packed data is a ClipReadError at the line
    of the sub-field concerned."""
    kv = split_key(lines.text(e.start))
    if kv is None or kv[0] != "m_Path":
        raise ClipReadError(path, e.start + 1, "m_CompressedRotationCurves item must start with m_Path")
    p = scalar_string(kv[1])
    if p is None:
        raise ClipReadError(path, e.start + 1, "m_Path is not a string")
    e.path = p
    groups: dict[str, dict[str, str]] = {}
    where: dict[str, int] = {}
    cur = None
    cur_name = ""
    for i in range(e.start + 1, e.end):
        if lines.blank[i]:
            continue
        kv = split_key(lines.text(i))
        if kv is None:
            raise ClipReadError(
                path, i + 1, f"unexpected line in a compressed curve: {lines.text(i).strip()!r}"
            )
        if lines.indent[i] == 4:
            cur_name = kv[0]
            if kv[0] in groups or kv[0] in where:
                raise ClipReadError(path, i + 1, f"field {kv[0]} appears twice in a compressed curve")
            where[kv[0]] = i
            cur = groups.setdefault(kv[0], {}) if kv[1] == "" else None
            if kv[0] in ("m_PreInfinity", "m_PostInfinity"):
                v = _int(path, i, kv[0], kv[1])
                if not 0 <= v <= 4:
                    raise ClipReadError(path, i + 1, f"{kv[0]} must be a wrap mode 0..4, got {v}")
                setattr(e, "pre_infinity" if kv[0] == "m_PreInfinity" else "post_infinity", v)
        elif cur is not None:
            if kv[0] in cur:
                raise ClipReadError(path, i + 1, f"field {cur_name}.{kv[0]} appears twice")
            cur[kv[0]] = kv[1]
            where[f"{cur_name}.{kv[0]}"] = i
        else:
            raise ClipReadError(
                path, i + 1, f"unexpected line in a compressed curve: {lines.text(i).strip()!r}"
            )
    for g in ("m_Times", "m_Values", "m_Slopes"):
        if g not in groups or "m_NumItems" not in groups[g]:
            raise ClipReadError(path, e.end, f"compressed curve has no {g}.m_NumItems (truncated?)")
    from .compressed import PackedDataError, decode_compressed_curve  # (legacy clips only)

    try:
        decoded = decode_compressed_curve(groups)
    except PackedDataError as exc:
        line = where.get(exc.field, where.get(exc.field.split(".")[0], e.start))
        raise ClipReadError(path, line + 1, f"compressed rotation curve {e.path!r}: {exc}") from None
    e.extra["num_items"] = int(decoded[0].shape[0])
    e.extra["packed"] = groups
    e.extra["decoded"] = decoded
    e.n_keys = e.extra["num_items"]
    e.times = decoded[0]


_EVENT_FIELDS = (
    "time",
    "functionName",
    "data",
    "objectReferenceParameter",
    "floatParameter",
    "intParameter",
    "messageOptions",
)


def _parse_event(path, lines: Lines, e: Entry) -> dict:
    top, _ = _structure(path, lines, e, pptr=True)
    ev = {}
    for k in _EVENT_FIELDS:
        if k not in top:
            raise ClipReadError(path, e.end, f"event has no {k} (truncated?)")
    ev["time"] = _float(path, top["time"][0], "time", top["time"][1])
    ev["floatParameter"] = _float(path, top["floatParameter"][0], "floatParameter", top["floatParameter"][1])
    ev["intParameter"] = _int(path, top["intParameter"][0], "intParameter", top["intParameter"][1])
    ev["messageOptions"] = _int(path, top["messageOptions"][0], "messageOptions", top["messageOptions"][1])
    ev["functionName"] = scalar_string(top["functionName"][1]) or ""
    ev["data"] = scalar_string(top["data"][1]) or ""
    ref = top["objectReferenceParameter"][1]
    if not (ref.startswith("{") and ref.endswith("}")):
        raise ClipReadError(
            path,
            top["objectReferenceParameter"][0] + 1,
            f"objectReferenceParameter must be a {{fileID...}} mapping, got {ref!r}",
        )
    ev["objectReferenceParameter"] = ref
    e.times = np.array([ev["time"]])
    return ev


def _parse_bindings(path, lines: Lines, span):
    if span is None:
        return [], "typeID", True
    a, b, rest = span
    if rest != "":
        raise ClipReadError(path, a + 1, "m_ClipBindingConstant must be a mapping")
    gb = None
    for i in range(a + 1, b):
        if lines.indent[i] == 4 and not lines.dash[i]:
            kv = split_key(lines.text(i))
            if kv is None:
                raise ClipReadError(path, i + 1, f"unexpected line {lines.text(i).strip()!r}")
            if kv[0] == "genericBindings":
                gb = (i, kv[1])
    if gb is None:
        raise ClipReadError(path, a + 1, "m_ClipBindingConstant has no genericBindings")
    ln, rest = gb
    items: list[BindingItem] = []
    key, versioned = "typeID", True
    if rest == "[]":
        return items, key, versioned
    if rest != "":
        raise ClipReadError(path, ln + 1, f"genericBindings must be a list, got {rest!r}")
    ind, dash, blank = lines.indent[ln + 1 : b], lines.dash[ln + 1 : b], lines.blank[ln + 1 : b]
    is_item = (ind == 4) & dash
    past = np.flatnonzero((ind <= 4) & ~blank & ~is_item)  # the first line after the list
    end = int(past[0]) + ln + 1 if past.size else b
    starts = (np.flatnonzero(is_item[: end - ln - 1]) + ln + 1).tolist()
    if not starts:
        return items, key, versioned
    # One decode for all the items' lines, each distinct line split once (they repeat verbatim).
    kvs = _splits(_line_texts(lines, starts[0], end))
    for j, s in enumerate(starts):
        e = starts[j + 1] if j + 1 < len(starts) else end
        vals = {}
        for i in range(s, e):
            kv = kvs[i - starts[0]]
            if kv is None:
                raise ClipReadError(path, i + 1, f"unexpected line in a binding: {lines.text(i).strip()!r}")
            vals[kv[0]] = (i, kv[1])
        if "classID" in vals:
            key = "classID"
        versioned = "serializedVersion" in vals
        if versioned:
            _version(
                path, vals["serializedVersion"][0], "binding serializedVersion", vals["serializedVersion"][1]
            )

        def num(k, vals=vals, s=s):
            if k not in vals:
                raise ClipReadError(path, s + 1, f"binding has no {k}")
            return _int(path, vals[k][0], k, vals[k][1])

        items.append(
            BindingItem(
                s,
                e,
                num("path"),
                num("attribute"),
                num(key),
                num("customType") if "customType" in vals else 0,
                num("isPPtrCurve") if "isPPtrCurve" in vals else 0,
            )
        )
    return items, key, versioned


def _line_texts(lines: Lines, a: int, b: int) -> list[str]:
    """:meth:`Lines.text` of lines ``a .. b - 1``, from one decode of their bytes."""
    if b <= a:
        return []
    return [t.rstrip("\r") for t in lines.raw(a, b).decode("utf-8", "surrogateescape").split("\n")[: b - a]]


def _parse_settings(path, lines: Lines, span):
    if span is None:
        return {}, None
    a, b, _ = span
    out: dict[str, str] = {}
    stop = None
    for i in range(a + 1, b):
        if lines.blank[i]:
            continue
        kv = split_key(lines.text(i))
        if kv is None:
            raise ClipReadError(path, i + 1, f"unexpected line in clip settings: {lines.text(i).strip()!r}")
        out[kv[0]] = kv[1]
        if kv[0] == "serializedVersion" and lines.indent[i] == 4:
            _version(path, i, "clip settings serializedVersion", kv[1])
        if kv[0] == "m_StopTime" and lines.indent[i] == 4:
            _float(path, i, "m_StopTime", kv[1])
            stop = i
        elif (
            kv[0] in ("m_StartTime", "m_CycleOffset", "m_Level", "m_OrientationOffsetY")
            and lines.indent[i] == 4
        ):
            _float(path, i, kv[0], kv[1])
    return out, stop
