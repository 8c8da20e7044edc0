"""The issue's reproducers (issue 11), as small deterministic inputs.

Each :data:`REPRODUCERS` entry: ``name -> (ext, make_bytes() | special, commands, invalid)``; the
CI suite runs every entry through the runner's contract, and the editor tests open a handful of them
in the real window. ``invalid`` is the reason the file must be refused (else None: any outcome that
keeps the contract is fine, e.g. a 3,000-level BVH may be read or refused with one line).
"""

from __future__ import annotations

import re

import numpy as np

from .cases import Case
from .seeds import _anim_bytes, _csv_bytes, bvh_text

#: A small clip: one Euler and one quaternion track, 5 keys at 30 fps (seeds._clip parameters).
_PARAMS = (2, 5, "eq", 1 / 30, 7, 30.0)
_EULER_ONLY = (1, 5, "e", 1 / 30, 3, 30.0)


def anim_small() -> bytes:
    return _anim_bytes(_PARAMS, None)


def anim_zero_quaternion() -> bytes:
    """The quaternion track's second key set to ``{x: 0, y: 0, z: 0, w: 0}``."""
    data = anim_small()
    found = list(re.finditer(rb"value: \{x: [^,}]+, y: [^,}]+, z: [^,}]+, w: [^,}]+\}", data))
    m = found[1]
    return data[: m.start()] + b"value: {x: 0, y: 0, z: 0, w: 0}" + data[m.end() :]


def anim_sub(pattern: bytes, repl: bytes, which: int = 1) -> bytes:
    """``anim_small`` with the ``which``-th match of ``pattern`` (a regex) replaced by ``repl``."""
    data = anim_small()
    m = list(re.finditer(pattern, data))[which]
    return data[: m.start()] + m.expand(repl) + data[m.end() :]


_E3 = rb"value: \{x: ([^,}]+), y: ([^,}]+), z: ([^,}]+)\}"


def anim_truncated() -> bytes:
    """Cut in the middle of a key (a download or copy that stopped)."""
    data = anim_small()
    return data[: data.index(b"inSlope", len(data) // 2) + 12]


def anim_past_float32() -> bytes:
    """An Euler key value of -1e300 (past float32: Unity would read infinity)."""
    return anim_sub(_E3, rb"value: {x: -1e300, y: \2, z: \3}")


def bvh_mixed_orders(frames: int = 3, big: float | None = None) -> bytes:
    """Joints in ZXY, XYZ and YXZ order with 20-60 deg motion; ``big`` puts one cell at that value."""
    n = 6 + 3 * 3
    rs = np.random.default_rng(5)
    values = rs.uniform(-60, 60, size=(frames, n))
    if big is not None:
        values[1, 7] = big
    return bvh_text(depth=3, frames=frames, orders=["ZXY", "XYZ", "YXZ"], values=values).encode()


def bvh_frame_time(ft: str, frames: int = 8) -> bytes:
    return bvh_text(
        depth=2,
        frames=frames,
        frame_time=ft,
        values=np.random.default_rng(2).uniform(-30, 30, size=(frames, 12)),
    ).encode()


def csv_with_path(name: str) -> bytes:
    """A CSV clip whose track is called ``name`` (quoted by the csv module as needed)."""
    import csv
    import io

    text = _csv_bytes(_EULER_ONLY, True).decode()
    rows = list(csv.reader(io.StringIO(text)))
    for r in rows[1:]:
        r[0] = name
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode()


def csv_mixed_rows() -> bytes:
    """Track ``Hips``: two Euler rows and one quaternion-only row."""
    return (
        b"path,time,x,y,z,qx,qy,qz,qw\n"
        b"Hips,0,10,20,30,,,,\n"
        b"Hips,0.1,,,,0,0,0.7071067811865476,0.7071067811865476\n"
        b"Hips,0.2,12,22,32,,,,\n"
    )


def csv_value(v: str) -> bytes:
    return f"path,time,x,y,z\nHips,0,10,20,30\nHips,0.1,{v},20,30\nHips,0.2,12,22,32\n".encode()


ALL = (
    "inspect",
    "inspect_json",
    "convert_anim",
    "convert_csv",
    "clean_reduce_anim",
    "clean_squad",
    "sample",
    "load",
)

REPRODUCERS: dict[str, tuple] = {
    "anim_zero_quaternion": (".anim", anim_zero_quaternion, ALL, "quaternion key {x: 0, y: 0, z: 0, w: 0}"),
    "anim_truncated": (".anim", anim_truncated, ("inspect", "convert_csv", "load"), "truncated file"),
    "anim_past_float32": (".anim", anim_past_float32, ("inspect", "convert_anim", "load"), "value -1e300"),
    "anim_time_garbage": (
        ".anim",
        lambda: anim_sub(rb"time: (\S+)", rb"time: \1 garbage"),
        ("inspect",),
        "time: N garbage",
    ),
    "anim_duplicate_x": (
        ".anim",
        lambda: anim_sub(_E3, rb"value: {x: \1, x: 90, z: \3}"),
        ("inspect",),
        "{x: .., x: 90, z: ..}",
    ),
    "anim_qrs": (
        ".anim",
        lambda: anim_sub(_E3, rb"value: {q: \1, r: \2, s: \3}"),
        ("inspect",),
        "{q: .., r: .., s: ..}",
    ),
    "anim_value_junk": (
        ".anim",
        lambda: anim_sub(_E3, rb"value: {x: 360 junk, y: \2, z: \3}"),
        ("inspect",),
        "{x: 360 junk, ...}",
    ),
    "bvh_deep": (
        ".bvh",
        lambda: bvh_text(depth=1100, frames=1).encode(),
        ("inspect", "convert_csv", "load"),
        None,
    ),
    "bvh_siblings_10000": (
        ".bvh",
        lambda: bvh_text(depth=1, siblings=10_000, frames=2).encode(),
        ("inspect",),
        None,
    ),
    "bvh_frame_time_5e-324": (".bvh", lambda: bvh_frame_time("5e-324"), ("inspect", "convert_anim"), None),
    "bvh_frame_time_1e-9": (".bvh", lambda: bvh_frame_time("1e-9"), ("convert_anim", "convert_csv"), None),
    "bvh_frame_time_100_squad": (".bvh", lambda: bvh_frame_time("100"), ("clean_squad",), None),
    "bvh_frame_time_1000_squad": (".bvh", lambda: bvh_frame_time("1000"), ("clean_squad",), None),
    "bvh_mixed_orders_csv": (".bvh", bvh_mixed_orders, ("convert_csv", "sample"), None),
    "bvh_1e6_deg_reorder": (".bvh", lambda: bvh_mixed_orders(big=1e6), ("convert_anim",), None),
    "csv_percent_path": (
        ".csv",
        lambda: csv_with_path("Armature/Hips 100%"),
        ("convert_csv", "convert_anim"),
        None,
    ),
    "csv_percent_r_path": (".csv", lambda: csv_with_path("Bone%r"), ("convert_csv",), None),
    "csv_double_percent_path": (".csv", lambda: csv_with_path("A%%B"), ("convert_csv",), None),
    "csv_newline_path": (".csv", lambda: csv_with_path("line\nbreak"), ("convert_csv", "convert_anim"), None),
    "csv_huge_path_cell": (".csv", lambda: csv_with_path("P" * 100_000), ("convert_csv",), None),
    "csv_mixed_rows": (".csv", csv_mixed_rows, ("inspect",), "one track mixes Euler and quaternion rows"),
    "csv_past_float32_to_anim": (".csv", lambda: csv_value("1e39"), ("convert_anim",), None),
    "csv_near_float64_max": (
        ".csv",
        lambda: csv_value("1.7976931348623157e308"),
        ("inspect", "clean_reduce_anim", "clean_squad"),
        None,
    ),
    "fifo": (".anim", "fifo", ("inspect",), None),
    "dev_zero": (".anim", "dev_zero", ("inspect",), None),
}


def reproducer_cases() -> list[tuple[str, Case]]:
    """Every (reproducer, command) pair as a runnable :class:`Case`, named ``reproducer-command``."""
    out = []
    for name, (ext, make, commands, invalid) in REPRODUCERS.items():
        for cmd in commands:
            if isinstance(make, str):
                case = Case(ext, b"", cmd, special=make)
            else:
                case = Case(ext, make(), cmd, (name,), invalid)
            out.append((f"{name}-{cmd}", case))
    return out
