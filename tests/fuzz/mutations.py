"""Mutations of seed files: byte-level (any format) and structure-aware (per format).

Every mutation is ``fn(data: bytes, rng: random.Random) -> (bytes, invalid)``. ``invalid`` is None,
or a short reason when the mutation makes the file invalid *by construction* (a zero quaternion key,
a duplicated mapping key, a NaN cell, a CSV track mixing Euler and quaternion rows...): such a file
must be refused (exit 2); exit 0 on it is "silently accepted invalid input". A mutation that finds no
place to act returns the data unchanged and None. Only single-mutation cases keep the mark (a second
mutation could undo the first).

The generators (``bvh_deep``, ``bvh_siblings``) ignore the seed and build the file from scratch.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Callable

import numpy as np

from .seeds import BVH_ORDERS, bvh_text

Mutation = Callable[[bytes, random.Random], tuple[bytes, str | None]]

#: Tokens inserted by ``insert_junk`` (the issue's list: junk, huge numbers, NaN, quotes, newlines, %).
JUNK = (
    b"NaN",
    b"nan",
    b"inf",
    b"-Infinity",
    b"1e309",
    b"-1e300",
    b"1e39",
    b"3.5e38",
    b"5e-324",
    b"1e-45",
    b'"',
    b"'",
    b"\n",
    b"\r\n",
    b"\r",
    b"%",
    b"%r",
    b"%%",
    b"%s%d",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b": ",
    b",",
    b"\x00",
    b"\xff\xfe",
    b"\xc3",
    b"-",
    b"--- !u!74 &1\n",
    b"9" * 400,
    b"0x1p3",
    b"1_000",
    b"\t",
    b"#",
    b"&",
    b"*",
    b"!",
    b"|",
    b">",
)
#: Numbers substituted for a number of the file (past float32 and float64 limits, tiny, huge).
EXTREMES = (
    "0",
    "-0",
    "1e6",
    "-99999",
    "1e39",
    "-1e39",
    "3.5e38",
    "3.4028235e38",
    "1e300",
    "-1e300",
    "1.7976931348623157e308",
    "1e309",
    "5e-324",
    "1e-45",
    "1e-300",
    "NaN",
    "nan",
    "inf",
    "-Infinity",
    "1e20",
    "123456789012345678901234567890",
)
NON_FINITE = {"NaN", "nan", "inf", "-Infinity", "1e309"}
#: Track paths / joint names that broke writers (issue 11) plus other awkward ones.
NAMES = (
    "Armature/Hips 100%",
    "Bone%r",
    "A%%B",
    "%s",
    'quote"d',
    "it's",
    "a,b",
    "Arm L",
    "Ünïcode/Bóne",
    "tab\tname",
    "back\\slash",
    "x: y",
    "- dash",
    "#hash",
    "{brace}",
    "[list]",
    "&anchor",
    "*alias",
)
_NUMBER = re.compile(rb"(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _choose_span(data: bytes, rng: random.Random, max_len: int = 200) -> tuple[int, int]:
    a = rng.randrange(len(data) + 1)
    return a, min(len(data), a + rng.randint(1, max_len))


# ------------------------------------------------------------------------------------- byte level


def bitflip(data: bytes, rng: random.Random):
    if not data:
        return data, None
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b), None


def truncate(data: bytes, rng: random.Random):
    return data[: rng.randrange(len(data) + 1)], None


def insert_junk(data: bytes, rng: random.Random):
    i = rng.randrange(len(data) + 1)
    junk = (
        rng.choice(JUNK)
        if rng.random() < 0.85
        else bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    )
    return data[:i] + junk + data[i:], None


def delete_span(data: bytes, rng: random.Random):
    a, b = _choose_span(data, rng)
    return data[:a] + data[b:], None


def duplicate_span(data: bytes, rng: random.Random):
    a, b = _choose_span(data, rng)
    return data[:b] + data[a:b] * rng.choice((1, 1, 2, 50)) + data[b:], None


def replace_number(data: bytes, rng: random.Random):
    nums = list(_NUMBER.finditer(data))
    if not nums:
        return data, None
    m = rng.choice(nums)
    return data[: m.start()] + rng.choice(EXTREMES).encode() + data[m.end() :], None


def duplicate_lines(data: bytes, rng: random.Random):
    lines = data.split(b"\n")
    a = rng.randrange(len(lines))
    b = min(len(lines), a + rng.choice((1, 1, 2, 3, 9)))
    times = rng.choice((1, 1, 2, 200))
    return b"\n".join(lines[:b] + lines[a:b] * times + lines[b:]), None


def delete_lines(data: bytes, rng: random.Random):
    lines = data.split(b"\n")
    a = rng.randrange(len(lines))
    return b"\n".join(lines[:a] + lines[a + rng.randint(1, 3) :]), None


def swap_lines(data: bytes, rng: random.Random):
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data, None
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), None


BYTE_MUTATIONS: dict[str, Mutation] = {
    "bitflip": bitflip,
    "truncate": truncate,
    "insert_junk": insert_junk,
    "delete_span": delete_span,
    "duplicate_span": duplicate_span,
    "replace_number": replace_number,
    "duplicate_lines": duplicate_lines,
    "delete_lines": delete_lines,
    "swap_lines": swap_lines,
}

# ------------------------------------------------------------------------------------------- .anim

_QUAT_VALUE = re.compile(rb"^(\s*value: )\{x: [^,}]+, y: [^,}]+, z: [^,}]+, w: [^,}]+\}", re.M)
_VEC3_VALUE = re.compile(
    rb"^(\s*(?:value|inSlope|outSlope): )\{x: ([^,}]+), y: ([^,}]+), z: ([^,}]+)\}", re.M
)
_VEC3_KEY_VALUE = re.compile(rb"^(\s*value: )\{x: ([^,}]+), y: ([^,}]+), z: ([^,}]+)\}", re.M)
_ANY_VALUE = re.compile(rb"^(\s*(?:value|inSlope|outSlope|inWeight|outWeight): )(\{[^}\n]*\}|\S+)", re.M)
_TIME = re.compile(rb"^(\s*time: )(\S+)$", re.M)
_PATH = re.compile(rb"^(\s*path: )(.*)$", re.M)


def _pick(pattern: re.Pattern, data: bytes, rng: random.Random):
    found = list(pattern.finditer(data))
    return rng.choice(found) if found else None


def anim_zero_quaternion(data: bytes, rng: random.Random):
    m = _pick(_QUAT_VALUE, data, rng)
    if m is None:
        return data, None
    new = m.group(1) + b"{x: 0, y: 0, z: 0, w: 0}"
    return data[: m.start()] + new + data[m.end() :], "quaternion key {x: 0, y: 0, z: 0, w: 0}"


def anim_duplicate_component(data: bytes, rng: random.Random):
    m = _pick(_VEC3_VALUE, data, rng)
    if m is None:
        return data, None
    new = m.group(1) + b"{x: " + m.group(2) + b", x: 90, z: " + m.group(4) + b"}"
    return data[: m.start()] + new + data[m.end() :], "mapping {x: .., x: 90, z: ..} repeats x"


def anim_unknown_components(data: bytes, rng: random.Random):
    m = _pick(_VEC3_VALUE, data, rng)
    if m is None:
        return data, None
    new = m.group(1) + b"{q: " + m.group(2) + b", r: " + m.group(3) + b", s: " + m.group(4) + b"}"
    return data[: m.start()] + new + data[m.end() :], "mapping {q, r, s} has no x, y, z"


def anim_trailing_garbage(data: bytes, rng: random.Random):
    if rng.random() < 0.5:
        m = _pick(_TIME, data, rng)
        if m is None:
            return data, None
        return data[: m.end()] + b" garbage" + data[m.end() :], "time: N garbage"
    m = _pick(_VEC3_VALUE, data, rng)
    if m is None:
        return data, None
    new = m.group(1) + b"{x: " + m.group(2) + b" junk, y: " + m.group(3) + b", z: " + m.group(4) + b"}"
    return data[: m.start()] + new + data[m.end() :], "{x: N junk, ...}"


def anim_past_float32(data: bytes, rng: random.Random):
    """A key value or time past float32's range (Unity reads such a value as infinity)."""
    big = rng.choice((b"1e39", b"-1e300", b"3.5e38", b"1.7976931348623157e308"))
    if rng.random() < 0.3:
        m = _pick(_TIME, data, rng)
        if m is None:
            return data, None
        return data[: m.start(2)] + big + data[m.end(2) :], "key time past float32"
    # Key values only: an infinite slope is valid (Unity writes ``inSlope: Infinity`` for steps).
    m = _pick(_VEC3_KEY_VALUE, data, rng) or _pick(_QUAT_VALUE, data, rng)
    if m is None:
        return data, None
    text = m.group(0)
    comp = rng.choice([c for c in (b"x", b"y", b"z") if c + b": " in text])
    new = re.sub(comp + rb": [^,}]+", comp + b": " + big, text, count=1)
    return data[: m.start()] + new + data[m.end() :], "key value past float32"


def anim_value_extreme(data: bytes, rng: random.Random):
    """Any key field (value/slope/weight/time) replaced by an extreme number (no validity claim)."""
    m = _pick(_ANY_VALUE, data, rng) if rng.random() < 0.8 else _pick(_TIME, data, rng)
    if m is None:
        return data, None
    x = rng.choice(EXTREMES).encode()
    body = m.group(2)
    if body.startswith(b"{"):
        new = re.sub(rb"(: )[^,}]+", lambda mm: mm.group(1) + x, body, count=rng.randint(1, 4))
    else:
        new = x
    return data[: m.start(2)] + new + data[m.end(2) :], None


def anim_tangent_mode(data: bytes, rng: random.Random):
    lines = [m for m in re.finditer(rb"^(\s*tangentMode: )(\S+)$", data, re.M)]
    if not lines:
        return data, None
    m = rng.choice(lines)
    new = rng.choice((b"{x: 1}", b"-1", b"4294967295", b"99999999999999999999", b"1.5", b"", b"{}", b"136"))
    # Unknown bits are an editor hint Unity tolerates (read as Free); a mapping is not a number.
    return data[: m.start(2)] + new + data[m.end(2) :], (
        "tangentMode is a mapping" if new.startswith(b"{") else None
    )


def anim_empty_version(data: bytes, rng: random.Random):
    found = list(re.finditer(rb"(serializedVersion: )(\d+)", data))
    if not found:
        return data, None
    m = rng.choice(found)
    new = rng.choice((b"", b"99", b"-1", b"x", b"2", b"3"))
    bad = {b"": "empty serializedVersion", b"x": "serializedVersion x"}.get(new)
    return data[: m.start(2)] + new + data[m.end(2) :], bad


def anim_rotation_order(data: bytes, rng: random.Random):
    v = rng.choice((b"0", b"1", b"2", b"3", b"5", b"6", b"-1", b"99"))
    if b"m_RotationOrder:" in data:
        return re.sub(rb"(m_RotationOrder: )\S+", lambda m: m.group(1) + v, data, count=1), None
    return re.sub(
        rb"(\n(\s*)path: )",
        lambda m: b"\n" + m.group(2) + b"m_RotationOrder: " + v + m.group(1),
        data,
        count=1,
    ), None


def _yaml_name(rng: random.Random, long: int) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return ("Hips/" + "N" * long).encode()
    if kind == 1:
        return b'"line\\nbreak"'
    if kind == 2:
        return b"'quoted ''single'''"
    if kind == 3:
        return b'"tab\\tand \\"quote\\""'
    return rng.choice(NAMES).encode("utf-8")


def anim_path_name(data: bytes, rng: random.Random):
    m = _pick(_PATH, data, rng)
    if m is None:
        return data, None
    return data[: m.start(2)] + _yaml_name(rng, rng.choice((200, _scale["long_name"]))) + data[
        m.end(2) :
    ], None


def anim_clip_name(data: bytes, rng: random.Random):
    return re.sub(rb"(m_Name: ).*", lambda m: m.group(1) + _yaml_name(rng, 5000), data, count=1), None


def anim_repeat_keys(data: bytes, rng: random.Random):
    """Repeat one key block (same time) 1, 2 or 500 times: duplicated key times."""
    starts = [m.start() for m in re.finditer(rb"^\s*- serializedVersion: \d+\n\s*time:", data, re.M)]
    if len(starts) < 2:
        return data, None
    k = rng.randrange(len(starts) - 1)
    block = data[starts[k] : starts[k + 1]]
    times = rng.choice((1, 2, 500))
    return data[: starts[k + 1]] + block * times + data[starts[k + 1] :], None


def anim_huge_time(data: bytes, rng: random.Random):
    """The last key time of one curve moved far out (1e3..1e7 s): long clips through resample/sample."""
    found = list(_TIME.finditer(data))
    if not found:
        return data, None
    m = found[-1] if rng.random() < 0.5 else rng.choice(found)
    return data[: m.start(2)] + rng.choice((b"1000", b"100000", b"1e7", b"3e38")) + data[m.end(2) :], None


ANIM_MUTATIONS: dict[str, Mutation] = {
    "anim_zero_quaternion": anim_zero_quaternion,
    "anim_duplicate_component": anim_duplicate_component,
    "anim_unknown_components": anim_unknown_components,
    "anim_trailing_garbage": anim_trailing_garbage,
    "anim_past_float32": anim_past_float32,
    "anim_value_extreme": anim_value_extreme,
    "anim_tangent_mode": anim_tangent_mode,
    "anim_empty_version": anim_empty_version,
    "anim_rotation_order": anim_rotation_order,
    "anim_path_name": anim_path_name,
    "anim_clip_name": anim_clip_name,
    "anim_repeat_keys": anim_repeat_keys,
    "anim_huge_time": anim_huge_time,
}

# --------------------------------------------------------------------------------------------- BVH


def _motion_split(data: bytes):
    i = data.find(b"MOTION")
    if i < 0:
        return None
    head, motion = data[:i], data[i:]
    lines = motion.split(b"\n")
    return head, lines


#: Sizes of the generated inputs; :func:`set_scale` ("ci" or "long") switches them. The long run
#: also makes the issue's biggest inputs (10,000 siblings, 1 MB names).
SCALE = {
    "ci": {"depths": (1100,), "siblings": (300, 1000), "long_name": 100_000},
    "long": {"depths": (1100, 3000), "siblings": (300, 2000, 10_000), "long_name": 1_000_000},
}
_scale = dict(SCALE["ci"])


def set_scale(name: str) -> None:
    """Use the input sizes of ``name`` ("ci": the CI budget, "long": ``python -m tests.fuzz``)."""
    _scale.update(SCALE[name])


def bvh_deep(data: bytes, rng: random.Random):
    """A single chain nested past Python's recursion limit (1,100 levels; 3,000 in the long run)."""
    return bvh_text(depth=rng.choice(_scale["depths"]), frames=rng.choice((1, 2))).encode(), None


def bvh_siblings(data: bytes, rng: random.Random):
    """A root with thousands of sibling joints (the duplicate-path check was quadratic)."""
    return bvh_text(depth=1, siblings=rng.choice(_scale["siblings"]), frames=2).encode(), None


def bvh_frame_time(data: bytes, rng: random.Random):
    v = rng.choice(
        (
            b"5e-324",
            b"1e-9",
            b"1e-300",
            b"100",
            b"1000",
            b"1e300",
            b"86400",
            b"0",
            b"-0.033333",
            b"nan",
            b"inf",
            b"1e-320",
            b"0x1p-5",
            b"0.0333333333333333333333",
        )
    )
    new, n = re.subn(rb"(Frame Time:)[^\n]*", lambda m: m.group(1) + b" " + v, data, count=1)
    if not n:
        return data, None
    bad = v in (b"0", b"-0.033333", b"nan", b"inf", b"0x1p-5")
    return new, (f"Frame Time: {v.decode()}" if bad else None)


def bvh_extreme_value(data: bytes, rng: random.Random):
    parts = _motion_split(data)
    if parts is None or len(parts[1]) < 4:
        return data, None
    head, lines = parts
    rows = [i for i in range(3, len(lines)) if lines[i].strip()]
    if not rows:
        return data, None
    i = rng.choice(rows)
    cells = lines[i].split()
    v = rng.choice(EXTREMES)
    cells[rng.randrange(len(cells))] = v.encode()
    lines[i] = b" ".join(cells)
    return head + b"\n".join(lines), (f"motion value {v}" if v in NON_FINITE else None)


def bvh_channel_order(data: bytes, rng: random.Random):
    found = list(re.finditer(rb"CHANNELS 3 (\w+) (\w+) (\w+)", data))
    if not found:
        return data, None
    m = rng.choice(found)
    o = rng.choice(BVH_ORDERS)
    new = b"CHANNELS 3 " + b" ".join(c.encode() + b"rotation" for c in o)
    return data[: m.start()] + new + data[m.end() :], None


def bvh_joint_name(data: bytes, rng: random.Random):
    found = list(re.finditer(rb"(JOINT |ROOT )([^\n]*)", data))
    if not found:
        return data, None
    m = rng.choice(found)
    name = (
        ("J" * rng.choice((300, _scale["long_name"]))).encode()
        if rng.random() < 0.3
        else rng.choice(NAMES).encode()
    )
    return data[: m.start(2)] + name + data[m.end(2) :], None


def bvh_duplicate_joint(data: bytes, rng: random.Random):
    """Two sibling joints of the same name: a duplicate track path."""
    text = bvh_text(depth=1, siblings=rng.randint(2, 4), frames=2, names=["Same"])
    return text.encode(), "two sibling joints named 'Same'"


def bvh_frames_count(data: bytes, rng: random.Random):
    m = re.search(rb"Frames:\s*(\d+)", data)
    if m is None:
        return data, None
    n = int(m.group(1))
    v = rng.choice((n + 1, -1, 10**12, n + 1000))
    new = data[: m.start(1)] + str(v).encode() + data[m.end(1) :]
    return new, f"Frames: {v} (file has {n})"


BVH_MUTATIONS: dict[str, Mutation] = {
    "bvh_deep": bvh_deep,
    "bvh_siblings": bvh_siblings,
    "bvh_frame_time": bvh_frame_time,
    "bvh_extreme_value": bvh_extreme_value,
    "bvh_channel_order": bvh_channel_order,
    "bvh_joint_name": bvh_joint_name,
    "bvh_duplicate_joint": bvh_duplicate_joint,
    "bvh_frames_count": bvh_frames_count,
}

# --------------------------------------------------------------------------------------------- CSV


def _csv_rows(data: bytes):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:  # e.g. a cell past the csv module's field limit (a 1 MB name from a mutation)
        return None
    if len(rows) < 2 or "path" not in rows[0]:
        return None
    return rows


def _csv_bytes(rows) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def _cols(header, names):
    low = [h.strip().lower() for h in header]
    return [low.index(n) for n in names if n in low]


def csv_mixed_rows(data: bytes, rng: random.Random):
    """One row of a multi-row track switched to the other kind (Euler <-> quaternion only)."""
    rows = _csv_rows(data)
    if rows is None:
        return data, None
    h = rows[0]
    e, q, p = _cols(h, ("x", "y", "z")), _cols(h, ("qx", "qy", "qz", "qw")), h.index("path")
    if len(e) != 3 or len(q) != 4:
        return data, None
    by_path: dict[str, list[int]] = {}
    for i, r in enumerate(rows[1:], 1):
        if len(r) == len(h):
            by_path.setdefault(r[p], []).append(i)
    multi = [v for v in by_path.values() if len(v) >= 2]
    if not multi:
        return data, None
    i = rng.choice(rng.choice(multi))
    r = rows[i]
    if all(r[c] for c in e):  # Euler key -> quaternion-only key
        for c in e:
            r[c] = ""
        for c, v in zip(q, ("0", "0", "0.7071067811865476", "0.7071067811865476"), strict=True):
            r[c] = v
    else:  # quaternion key -> Euler-only key
        for c, v in zip(e, ("10", "20", "30"), strict=True):
            r[c] = v
        for c in q:
            r[c] = ""
    return _csv_bytes(rows), "one track mixes Euler and quaternion rows"


def _set_cell(data: bytes, rng: random.Random, cols_of, value_fn):
    rows = _csv_rows(data)
    if rows is None:
        return None
    cols = cols_of(rows[0])
    full = [i for i, r in enumerate(rows[1:], 1) if len(r) == len(rows[0]) and any(r[c] for c in cols)]
    if not cols or not full:
        return None
    i = rng.choice(full)
    c = rng.choice([c for c in cols if rows[i][c]])
    rows[i][c] = value_fn()
    return _csv_bytes(rows)


def csv_path_name(data: bytes, rng: random.Random):
    rows = _csv_rows(data)
    if rows is None:
        return data, None
    p = rows[0].index("path")
    old = rng.choice([r[p] for r in rows[1:] if len(r) > p])
    kind = rng.randrange(5)
    if kind == 0:
        new = "P" * rng.choice((300, _scale["long_name"]))
    elif kind == 1:
        new = "line\nbreak"
    else:
        new = rng.choice(NAMES)
    for r in rows[1:]:
        if len(r) > p and r[p] == old:
            r[p] = new
    return _csv_bytes(rows), None


def csv_bad_cell(data: bytes, rng: random.Random):
    v = rng.choice(("nan", "NaN", "inf", "-inf", "", "abc", "1e309", "1,5"))
    out = _set_cell(data, rng, lambda h: _cols(h, ("time", "x", "y", "z", "qx", "qy", "qz", "qw")), lambda: v)
    if out is None:
        return data, None
    return out, None if v == "" else f"cell {v!r}"  # an emptied cell may turn a row into a valid kind


def csv_extreme_value(data: bytes, rng: random.Random):
    v = rng.choice(("1e39", "-1e39", "1e300", "1.7976931348623157e308", "1e6", "-99999", "5e-324", "1e20"))
    out = _set_cell(data, rng, lambda h: _cols(h, ("x", "y", "z", "qx", "qy", "qz", "qw")), lambda: v)
    return (data, None) if out is None else (out, None)


def csv_extreme_time(data: bytes, rng: random.Random):
    v = rng.choice(("1e9", "1e6", "-5", "1e-300", "3e38", "1e300", "100000"))
    out = _set_cell(data, rng, lambda h: _cols(h, ("time",)), lambda: v)
    return (data, None) if out is None else (out, None)


def csv_zero_quaternion(data: bytes, rng: random.Random):
    rows = _csv_rows(data)
    if rows is None:
        return data, None
    h = rows[0]
    e, q = _cols(h, ("x", "y", "z")), _cols(h, ("qx", "qy", "qz", "qw"))
    qrows = [
        i
        for i, r in enumerate(rows[1:], 1)
        if len(r) == len(h) and q and all(r[c] for c in q) and not any(r[c] for c in e)
    ]
    if not qrows:
        return data, None
    i = rng.choice(qrows)
    for c in q:
        rows[i][c] = "0"
    return _csv_bytes(rows), "zero quaternion row"


def csv_order_column(data: bytes, rng: random.Random):
    """An ``order`` column (a per-row Euler order): valid orders, a mix, or nonsense."""
    rows = _csv_rows(data)
    if rows is None:
        return data, None
    choice = rng.randrange(3)
    rows[0].append("order")
    for r in rows[1:]:
        r.append(("zxy", rng.choice(("xyz", "ZXY", "YXZ")), "bogus")[choice])
    return _csv_bytes(rows), None


def csv_duplicate_time(data: bytes, rng: random.Random):
    """A row repeated with the same time and other values: two keys at one time."""
    rows = _csv_rows(data)
    if rows is None:
        return data, None
    h = rows[0]
    e = _cols(h, ("x", "y", "z"))
    cand = [i for i, r in enumerate(rows[1:], 1) if len(r) == len(h) and e and all(r[c] for c in e)]
    if not cand:
        return data, None
    i = rng.choice(cand)
    dup = list(rows[i])
    dup[e[0]] = repr(float(np.float64(dup[e[0]]) + 45.0)) if _is_float(dup[e[0]]) else "45"
    rows.insert(i + 1, dup)
    return _csv_bytes(rows), "two rows of one track at the same time with other values"


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


CSV_MUTATIONS: dict[str, Mutation] = {
    "csv_mixed_rows": csv_mixed_rows,
    "csv_path_name": csv_path_name,
    "csv_bad_cell": csv_bad_cell,
    "csv_extreme_value": csv_extreme_value,
    "csv_extreme_time": csv_extreme_time,
    "csv_zero_quaternion": csv_zero_quaternion,
    "csv_order_column": csv_order_column,
    "csv_duplicate_time": csv_duplicate_time,
}

STRUCTURE_MUTATIONS = {".anim": ANIM_MUTATIONS, ".bvh": BVH_MUTATIONS, ".csv": CSV_MUTATIONS}


def mutation(name: str) -> Mutation:
    """The mutation called ``name`` (byte-level or structure-aware)."""
    if name in BYTE_MUTATIONS:
        return BYTE_MUTATIONS[name]
    for table in STRUCTURE_MUTATIONS.values():
        if name in table:
            return table[name]
    raise KeyError(name)
