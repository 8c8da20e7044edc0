"""CSV clips: one row per key, columns found by header name.

Reading (``read_csv``):

* ``time`` (seconds) is required; ``path`` is optional (one track per distinct path, default ``""``);
  rotation columns are ``x, y, z`` (Euler degrees, columns by axis) and/or ``qx, qy, qz, qw``.
  The Euler order is the row's ``order`` cell when the file has an ``order`` column (scipy-style:
  ``zxy`` extrinsic, ``ZXY`` intrinsic as in BVH), else the ``order`` argument (default Unity's
  ``"zxy"``); all rows of one track must agree. Header names are matched case-insensitively; other
  columns (``speed`` in files this module writes) are ignored.
* When both column sets are present, a row with Euler values is an Euler key (Euler carries the
  winding) and its quaternion, if given, must be the same rotation within
  ``EULER_QUAT_TOLERANCE_DEG`` (0.01 deg). A row whose ``x, y, z`` cells are all empty is a quaternion
  key; a track must not mix the two. This is how ``write_csv(..., keys_only=True)`` stores
  quaternion-keyed tracks without losing their kind.
* Quaternions are normalized but otherwise kept as stored: a sign flip between neighbouring keys
  (a hemisphere flip, which Unity plays the long way) stays visible to the inspector and to
  ``unflip``/``unwrap``.
* Rows may come in any order (sorted by time per track, stable). Two rows of one track with the same
  time are an error unless their values agree (then they are merged into one key).
* Any bad cell (NaN, infinite, not a number, empty), a missing column, a zero quaternion, a path
  cell over ``MAX_PATH_CHARS``, an Euler value past ``MAX_EULER_DEG``, a time past ``MAX_TIME_S`` or
  two keys closer than ``MIN_KEY_INTERVAL_S`` raises :class:`ClipReadError` naming the file, the
  1-based line and the reason (the limits keep the tangent slopes finite: values near float64's
  limits used to print numpy overflow warnings before the error, and a 1 MB path cell took 4 GB).

Optional columns (issue 20: a CSV carries what it can), each set all or nothing in a header:
``in_slope_x..z, out_slope_x..z, tangent_mode_x..z`` (:data:`TANGENT_COLS`: Euler slopes in deg/s,
``inf`` for a stepped side, Unity's ``tangentMode`` bits), ``weighted_mode_x..z, in_weight_x..z,
out_weight_x..z`` (:data:`WEIGHT_COLS`), ``pre_infinity, post_infinity`` (:data:`INFINITY_COLS`:
``m_PreInfinity``/``m_PostInfinity``, 0 PingPong, 1 Loop, 2 Constant) and ``frame_rate`` (Hz). A
track's tangent cells are on all its rows or none (none: the defaults below); its infinity cells
and the file's frame-rate cells must agree. Files without them read exactly as before.

Tangents of the keys read without tangent cells: Euler tracks get Unity's ClampedAuto tangents (what
the Animation window gives new keys). Quaternion tracks get Unity's Auto tangents on the
hemisphere-continuous components: Unity plays quaternion curves by evaluating x, y, z, w
independently and normalizing, so the slopes should be those of a smooth curve through the keys;
ClampedAuto would flatten each component at its own extrema, which are not stops of the motion, and
make the angular speed dip at those keys. With Auto (Catmull-Rom-like, non-uniform) slopes the
played motion passes through every key with a continuous angular velocity. Measured on a 180 deg/s
swing keyed every 0.1 s (``tests/io/test_csv.py``), the played motion stays within 0.014 deg of the
true one on inner segments (0.2 deg on the end segments, whose slopes are one-sided) with Auto,
against 0.31 deg (2.7 deg at the ends, and 176 deg/s speed error) with ClampedAuto.

Writing (``write_csv``): columns ``path,time,x,y,z,qx,qy,qz,qw,speed``, one row per key: the
continuous Euler angles in the track's order (the key values of Euler tracks; a continuous
decomposition for quaternion tracks), the normalized hemisphere-continuous quaternion, and the
angular speed in deg/s to the next key. When a track's order is not Unity's ``zxy``, an ``order``
column follows ``path`` (so a clip whose BVH joints use several orders reads back as written).
Floats are written with ``repr`` (shortest text that reads back to the same double), formatted a
whole track at a time; the quaternion and speed of an Euler row, derived from its angles, with nine
significant digits. Whatever the reader refuses, the writer refuses first with the same reason
(:class:`ClipWriteError`, nothing written): paths over ``MAX_PATH_CHARS``, with leading/trailing
white space (readers strip cells), NUL or unencodable characters; values past the limits above.
Paths holding ``,``, ``"`` or line breaks are quoted (``"a""b"``) and read back exactly. Output is
atomic and never overwrites a ``protect`` path. The optional columns are written only when the clip
needs them (:func:`carried_rows`): the tangents when an Euler track's curve is not the ClampedAuto
one the reader would rebuild (so a clip read from CSV or BVH is written exactly as before), the
infinity when a track has other than Constant, the frame rate when the key times would not give it
back. An Euler clip then round-trips exactly (keys, slopes, modes, weights, infinity, frame rate);
what a CSV still cannot hold (quaternion curves, non-rotation curves) is named by
:func:`csv_losses` before writing.
"""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..engine.clip import EULER, QUATERNION, Clip, RotationTrack, key_quaternions
from ..engine.curves import WRAP_CLAMP, Curve
from ..engine.rotations import (
    UNITY_ORDER,
    euler_to_quat,
    geodesic_angle,
    hemisphere_continuous,
    normalize_order,
)
from .atomic import atomic_write_chunks
from .check_ahead import announce_written
from .errors import ClipReadError, ClipWriteError

__all__ = [
    "read_csv",
    "write_csv",
    "format_csv",
    "TrackRows",
    "EULER_QUAT_TOLERANCE_DEG",
    "DUPLICATE_TOLERANCE",
    "WRITE_COLUMNS",
    "MAX_PATH_CHARS",
    "MAX_EULER_DEG",
    "MAX_TIME_S",
    "MIN_KEY_INTERVAL_S",
    "TANGENT_COLS",
    "WEIGHT_COLS",
    "INFINITY_COLS",
    "FRAME_RATE_COL",
    "csv_losses",
]

#: Largest allowed disagreement (degrees, geodesic) between a row's Euler angles and its quaternion.
EULER_QUAT_TOLERANCE_DEG = 0.01
#: Rows with equal times merge when their values differ by at most this much (degrees for Euler
#: values, quaternion components after normalization and hemisphere alignment).
DUPLICATE_TOLERANCE = 1e-9
#: Header of written files (plus ``order`` after ``path`` when a track is not in Unity's order).
WRITE_COLUMNS = ("path", "time", "x", "y", "z", "qx", "qy", "qz", "qw", "speed")
#: Longest track path cell (characters). Real Unity paths are a few hundred characters; a 1 MB path
#: cell in a 1 MB file used to need 4 GB (numpy's fixed-width string array, cell size x rows).
MAX_PATH_CHARS = 4096
#: Largest Euler value (degrees): Unity's float32 keys are 1 deg apart at 2**24 deg (as ``io.bvh``).
MAX_EULER_DEG = 1e7
#: Largest key time (seconds, 31 years): keeps time differences and slopes finite.
MAX_TIME_S = 1e9
#: Closest two keys of one track may be (seconds): slopes stay finite (value / interval).
MIN_KEY_INTERVAL_S = 1e-9

_EULER_COLS = ("x", "y", "z")
_QUAT_COLS = ("qx", "qy", "qz", "qw")
#: Optional column sets (issue 20: a CSV carries what it can). Tangents of Euler keys, per channel
#: x, y, z: slopes in deg/s (``inf``/``-inf`` = Unity's stepped, Constant side) and Unity's
#: ``tangentMode`` bits; weights (``weightedMode`` 0..3 and the two weights); the track's
#: pre/post infinity (``m_PreInfinity``/``m_PostInfinity``: 0 PingPong, 1 Loop, 2 Constant, 3 as
#: Constant); the clip's frame rate (Hz). Each set is all or nothing in a header.
TANGENT_COLS = tuple(f"{f}_{c}" for f in ("in_slope", "out_slope", "tangent_mode") for c in _EULER_COLS)
WEIGHT_COLS = tuple(f"{f}_{c}" for f in ("weighted_mode", "in_weight", "out_weight") for c in _EULER_COLS)
INFINITY_COLS = ("pre_infinity", "post_infinity")
FRAME_RATE_COL = "frame_rate"


# --------------------------------------------------------------------------------------------------
# Reading


@dataclass
class _Table:
    """The parsed cells: ``values (R, K)`` floats (NaN where empty), ``empty (R, K)`` bool,
    ``paths (R,)`` object array of str or None, ``orders (R,)`` object array of str (``""`` = empty
    cell) or None, ``lines (R,)`` 1-based line numbers (K numeric columns)."""

    values: np.ndarray
    empty: np.ndarray
    paths: np.ndarray | None
    orders: np.ndarray | None
    lines: np.ndarray


def read_csv(path: str | os.PathLike, order: str = UNITY_ORDER) -> Clip:
    """Read a CSV clip (see the module docstring for the format).

    Args:
        path: the file.
        order: rotation order of the ``x, y, z`` columns for rows without an ``order`` cell
            (scipy-style, ``"zxy"`` = Unity default).

    Returns:
        A :class:`Clip` named after the file stem, with one :class:`RotationTrack` per path in order
        of first appearance; ``frame_rate`` is estimated from the median key interval (30 when no
        track has two keys); ``meta = {"format": "csv"}``.

    Raises:
        ClipReadError: unreadable file, missing column, bad cell, duplicate time with different
            values, Euler/quaternion disagreement, zero quaternion, bad ``order``, a limit exceeded.
    """
    fname = os.fspath(path)
    try:
        normalize_order(order)
    except ValueError as exc:
        raise ClipReadError(fname, None, str(exc)) from None
    header_no, header_line = _read_file(fname, _first_header)
    if header_line is None:
        raise ClipReadError(
            fname, None, "empty file (expected a header row with 'time' and rotation columns)"
        )
    columns = _parse_header(fname, header_line, header_no)
    has_euler, has_quat = _rotation_columns(fname, columns, header_no)
    numeric = ["time"] + (list(_EULER_COLS) if has_euler else []) + (list(_QUAT_COLS) if has_quat else [])
    numeric += _optional_columns(fname, columns, header_no, has_euler)
    col_idx = [columns.index(c) for c in numeric]
    str_idx = [columns.index(c) if c in columns else None for c in ("path", "order")]

    table = _parse_file_fast(fname, header_no, col_idx, str_idx)
    if table is None:  # quotes, blank lines, bad cells, ...: the whole text, parsed with care
        text = _read_file(fname, lambda f: f.read())
        _, _, body = _split_header(text)
        table = _parse_rows(fname, text, body, header_no, col_idx, str_idx, columns)
    _check_strings(fname, table)
    rate = _frame_rate_cells(fname, table, numeric) if FRAME_RATE_COL in numeric else None
    tracks = _build_tracks(fname, table, numeric, has_euler, has_quat, order)  # (empties the table)
    return Clip(
        name=Path(fname).stem,
        frame_rate=rate if rate is not None else _estimate_frame_rate(tracks),
        tracks=tracks,
        meta={"format": "csv"},
    )


def _parse_header(fname: str, line: str, line_no: int) -> list[str]:
    try:
        names = next(csv.reader([line]))
    except csv.Error as exc:
        raise ClipReadError(fname, line_no, f"bad header row: {exc}") from None
    columns = [n.strip().lower() for n in names]
    seen = set()
    for n in columns:
        if n and n in seen:
            raise ClipReadError(fname, line_no, f"column {n!r} appears twice in the header")
        seen.add(n)
    if "time" not in columns:
        raise ClipReadError(fname, line_no, f"missing column 'time' (header has {_show(columns)})")
    return columns


def _rotation_columns(fname: str, columns: list[str], line_no: int) -> tuple[bool, bool]:
    """Which complete rotation column sets the header has; a partial set is an error."""
    found = []
    for group in (_EULER_COLS, _QUAT_COLS):
        present = [c for c in group if c in columns]
        if present and len(present) != len(group):
            missing = [c for c in group if c not in columns]
            raise ClipReadError(
                fname, line_no, f"missing column {_show(missing)} (have {_show(present)} of {_show(group)})"
            )
        found.append(bool(present))
    if not any(found):
        raise ClipReadError(
            fname,
            line_no,
            f"missing rotation columns: need 'x,y,z' (Euler degrees) or 'qx,qy,qz,qw' "
            f"(header has {_show(columns)})",
        )
    return found[0], found[1]


def _optional_columns(fname: str, columns: list[str], line_no: int, has_euler: bool) -> list[str]:
    """The optional column sets present in the header (:data:`TANGENT_COLS`, :data:`WEIGHT_COLS`,
    :data:`INFINITY_COLS`, :data:`FRAME_RATE_COL`); a partial set is an error, as is a tangent or
    weight set without Euler columns (tangents are per Euler channel)."""
    out: list[str] = []
    for group in (TANGENT_COLS, WEIGHT_COLS):
        present = [c for c in group if c in columns]
        if not present:
            continue
        if len(present) != len(group):
            missing = [c for c in group if c not in columns]
            raise ClipReadError(fname, line_no, f"missing column {_show(missing)} (have {_show(present)})")
        if not has_euler:
            raise ClipReadError(
                fname, line_no, f"columns {_show(group[:1])}... need the Euler columns 'x,y,z'"
            )
        out += group
    if any(c in columns for c in WEIGHT_COLS) and not any(c in columns for c in TANGENT_COLS):
        raise ClipReadError(fname, line_no, "weight columns need the tangent columns (in_slope_x, ...)")
    out += [c for c in INFINITY_COLS if c in columns]
    if FRAME_RATE_COL in columns:
        out.append(FRAME_RATE_COL)
    return out


def _frame_rate_cells(fname: str, table: _Table, numeric: list[str]) -> float | None:
    """The clip's frame rate from the ``frame_rate`` cells: every non-empty cell the same positive
    finite number; None when all are empty."""
    col = numeric.index(FRAME_RATE_COL)
    given = np.flatnonzero(~table.empty[:, col])
    if given.size == 0:
        return None
    vals = table.values[given, col]
    bad = np.flatnonzero(~(np.isfinite(vals) & (vals > 0)))
    if bad.size:
        row = given[bad[0]]
        raise ClipReadError(
            fname, int(table.lines[row]), "column 'frame_rate' must be a positive number (Hz)"
        )
    other = np.flatnonzero(vals != vals[0])
    if other.size:
        row = given[other[0]]
        raise ClipReadError(
            fname,
            int(table.lines[row]),
            f"column 'frame_rate': {vals[other[0]]:g} differs from {vals[0]:g} on line "
            f"{int(table.lines[given[0]])}",
        )
    return float(vals[0])


def _show(names: Iterable[str]) -> str:
    return ",".join(f"'{n}'" for n in names)


def _short(text: str, n: int = 40) -> str:
    """``repr`` of at most ``n`` characters of ``text`` (one line whatever it holds)."""
    return repr(text[:n]) + (f"... ({len(text):,} characters)" if len(text) > n else "")


def _read_file(fname: str, read):
    """``read(f)`` of ``fname`` opened as UTF-8 text (a byte-order mark skipped, line ends kept), with
    every way the file cannot be read turned into a :class:`ClipReadError`."""
    try:
        with open(fname, encoding="utf-8-sig", newline="") as f:
            return read(f)
    except FileNotFoundError:
        raise ClipReadError(fname, None, "no such file") from None
    except IsADirectoryError:
        raise ClipReadError(fname, None, "is a folder, not a file") from None
    except UnicodeDecodeError as exc:
        raise ClipReadError(fname, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ClipReadError(fname, None, exc.strerror or str(exc)) from None


def _first_header(f) -> tuple[int, str | None]:
    """``(line number, text)`` of the first non-blank line of ``f`` (``None`` for a blank file)."""
    for line_no, line in enumerate(f, 1):
        if line.strip():
            return line_no, line.rstrip("\r\n")
    return 1, None


#: Bytes scanned at a time by :func:`_plain_file` (the file is never held whole on the fast path).
SCAN_CHUNK = 1 << 24


def _plain_file(fname: str, header_no: int) -> int | None:
    """The number of data lines after line ``header_no`` when the file is plain (no quotes, no lone
    carriage returns, no blank lines), scanned in chunks; else None (the careful parser decides)."""
    lines = 0
    crlf = cr = 0
    prev = b""
    with open(fname, "rb") as f:
        while True:
            chunk = f.read(SCAN_CHUNK)
            if not chunk:
                break
            if b'"' in chunk or b"\n\n" in chunk:
                return None
            lines += chunk.count(b"\n")
            if b"\r" in chunk or prev == b"\r":  # (the CR scans only when there is one: 0.4 s of 380 MB)
                if prev == b"\r" and chunk[:1] == b"\n":
                    crlf += 1
                cr += chunk.count(b"\r")
                crlf += chunk.count(b"\r\n")
                if b"\n\r\n" in chunk:
                    return None
            prev = chunk[-1:]
            last = chunk
        if lines == 0:
            return None
    if cr != crlf:
        return None
    data = lines - header_no + (0 if last.endswith(b"\n") else 1)
    return data if data > 0 else None


def _parse_file_fast(
    fname: str, header_no: int, col_idx: list[int], str_idx: list[int | None]
) -> _Table | None:
    """The rows of a plain file (:func:`_plain_file`) parsed by numpy's C reader straight from the
    file (:func:`_loadtxt_cells`), or None for the careful parser. Issue 26: reading the whole text
    first, and a copy of its body for the parser, held 3 times the file."""
    n = _plain_file(fname, header_no)
    if n is None:
        return None
    try:
        with open(fname, encoding="utf-8-sig", newline=None) as f:
            for _ in range(header_no):
                f.readline()
            table = _loadtxt_cells(f, col_idx, str_idx, max_rows=n)
    except (UnicodeDecodeError, OSError):
        return None
    if table is None or table.shape[0] != n:
        return None
    return _cells_table(table, col_idx, str_idx, np.arange(n, dtype=np.int64) + header_no + 1)


def _loadtxt_cells(source, col_idx: list[int], str_idx: list[int | None], max_rows: int | None = None):
    """numpy's C reader over the data rows of ``source`` (a text file or its lines): a structured
    array with the string cells (path, order) as interned Python strings in fields ``s0``/``s1``
    (one object per distinct path: a 10-minute take's 2.2 M rows held 2.2 M copies of 31 paths,
    250 MB) and the numbers as float64 in ``v``; None when numpy refuses a cell. ``max_rows``: the
    known row count (the array is allocated once at its size; growing it held up to twice the
    table)."""
    strings = [(slot, i) for slot, i in enumerate(str_idx) if i is not None]
    fields = [(f"s{slot}", object) for slot, _ in strings] + [("v", np.float64, (len(col_idx),))]
    try:
        return np.loadtxt(
            source,
            delimiter=",",
            comments=None,
            usecols=[i for _, i in strings] + list(col_idx),
            converters={i: sys.intern for _, i in strings},
            dtype=np.dtype(fields),
            ndmin=1,
            max_rows=max_rows,
        )
    except ValueError:
        return None


def _cells_table(table, col_idx: list[int], str_idx: list[int | None], line_nos: np.ndarray) -> _Table:
    """The :class:`_Table` of :func:`_loadtxt_cells`' array: the numbers as a view of it (no second
    copy), string cells stripped where any is padded."""
    n = table.shape[0]
    out = [None, None]
    for slot, i in enumerate(str_idx):
        if i is None:
            continue
        cells = table[f"s{slot}"]
        heads = cells[_runs(cells)].tolist()  # rows repeat their run's first cell: strip only if needed
        if any(c != c.strip() for c in heads):
            cells = np.array([sys.intern(c.strip()) for c in cells.tolist()], dtype=object)
        out[slot] = cells
    values = table["v"].reshape(n, len(col_idx))
    return _Table(values, np.zeros(values.shape, bool), out[0], out[1], line_nos)


def _split_header(text: str) -> tuple[int, str | None, str]:
    """``(line number of the header, header text, text after the header line)``; blank lines before
    the header are skipped; header text is ``None`` for a blank file."""
    pos, line_no = 0, 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        if line.strip():
            return line_no, line.rstrip("\r"), text[end + 1 :]
        pos, line_no = end + 1, line_no + 1
    return line_no, None, ""


def _parse_rows(
    fname: str,
    text: str,
    body: str,
    header_no: int,
    col_idx: list[int],
    str_idx: list[int | None],
    header: list[str],
) -> _Table:
    """Cells of every data row. Fast path for plain files (no quotes, no empty cells): lines split
    in Python, numbers by numpy's C parser; anything else (quotes, empty cells, bad numbers, ragged
    rows) goes to the csv module, which finds the exact line and reason."""
    k = len(col_idx)
    if not body or body.isspace():  # not body.strip(): that copied the whole text (57 ms on 16 MB)
        return _Table(np.zeros((0, k)), np.zeros((0, k), bool), None, None, np.zeros(0, np.int64))
    fast = _parse_rows_fast(body, header_no, col_idx, str_idx)
    if fast is not None:
        return fast
    return _parse_rows_slow(fname, text, header_no, col_idx, str_idx, header)


def _parse_rows_fast(
    body: str, header_no: int, col_idx: list[int], str_idx: list[int | None]
) -> _Table | None:
    """``None`` when the file needs the careful parser. One ``np.loadtxt`` pass with a structured
    dtype: string cells (path, order) as Python strings, numbers as float64. Measured on a 16 MB,
    65-track file: as fast as parsing the numbers alone, where ``np.loadtxt(dtype=str)`` for the
    paths was a second pass and built a fixed-width array of (rows x longest cell) characters."""
    if '"' in body:
        return None  # quoted cells (commas, quotes or line breaks in a path): the csv module
    if "\r" in body:
        body = body.replace("\r\n", "\n")
        if "\r" in body:
            return None
    table = _loadtxt_cells(io.StringIO(body), col_idx, str_idx)
    if table is None:
        return None
    n = table.shape[0]
    if n != body.count("\n") + (not body.endswith("\n")):
        # numpy skipped blank lines: map rows to the lines that hold them.
        lines = body.split("\n")
        line_nos = np.array([i for i, line in enumerate(lines) if line.strip()], dtype=np.int64)
        line_nos += header_no + 1
    else:
        line_nos = np.arange(n, dtype=np.int64) + header_no + 1
    if line_nos.shape[0] != n:
        return None
    return _cells_table(table, col_idx, str_idx, line_nos)


def _parse_rows_slow(
    fname: str, text: str, header_no: int, col_idx: list[int], str_idx: list[int | None], header: list[str]
) -> _Table:
    reader = csv.reader(io.StringIO(text))
    values: list[list[float]] = []
    empty: list[list[bool]] = []
    strings: list[list[str]] = [[], []]
    line_nos: list[int] = []
    need = max(col_idx + [i for i in str_idx if i is not None])
    row_start = 1
    try:
        for row in reader:
            line_no = row_start
            row_start = reader.line_num + 1
            if line_no <= header_no or not any(cell.strip() for cell in row):
                continue
            if len(row) <= need:
                reason = f"row has {len(row)} fields, the header has {len(header)}"
                raise ClipReadError(fname, line_no, reason)
            vals, emp = [], []
            for k in col_idx:
                cell = row[k].strip()
                if not cell:
                    vals.append(np.nan)
                    emp.append(True)
                    continue
                try:
                    vals.append(float(cell))
                except ValueError:
                    raise ClipReadError(
                        fname, line_no, f"column '{header[k]}': {_short(cell)} is not a number"
                    ) from None
                emp.append(False)
            values.append(vals)
            empty.append(emp)
            for slot, i in enumerate(str_idx):
                if i is not None:
                    strings[slot].append(row[i].strip())
            line_nos.append(line_no)
    except csv.Error as exc:
        raise ClipReadError(fname, reader.line_num, f"malformed CSV: {exc}") from None
    arr = np.array(values, dtype=np.float64).reshape(-1, len(col_idx))
    cols = [np.array(strings[s], dtype=object) if str_idx[s] is not None else None for s in (0, 1)]
    return _Table(
        arr,
        np.array(empty, dtype=bool).reshape(arr.shape),
        cols[0],
        cols[1],
        np.array(line_nos, dtype=np.int64),
    )


def _runs(cells: np.ndarray) -> np.ndarray:
    """Indices where a new run of equal cells starts (rows usually come in runs of one path)."""
    n = cells.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([[0], np.flatnonzero(cells[1:] != cells[:-1]) + 1])


def _check_strings(fname: str, table: _Table) -> None:
    """Path cells within ``MAX_PATH_CHARS``; ``order`` cells valid orders (checked once per run)."""
    if table.paths is not None:
        heads = _runs(table.paths)
        lengths = np.fromiter((len(p) for p in table.paths[heads]), dtype=np.int64, count=heads.size)
        long = np.flatnonzero(lengths > MAX_PATH_CHARS)
        if long.size:
            row = int(heads[long[0]])
            raise ClipReadError(
                fname,
                int(table.lines[row]),
                f"track path of {int(lengths[long[0]]):,} characters (CSV paths hold at most "
                f"{MAX_PATH_CHARS:,})",
            )
    if table.orders is not None:
        heads = _runs(table.orders)
        for row in heads.tolist():
            cell = table.orders[row]
            if cell:
                try:
                    normalize_order(cell)
                except ValueError:
                    raise ClipReadError(
                        fname,
                        int(table.lines[row]),
                        f"column 'order': {_short(cell)} is not a rotation order "
                        "(three distinct axes, e.g. 'zxy' extrinsic or 'ZXY' intrinsic)",
                    ) from None


def _bad_cells(fname: str, table: _Table, numeric: list[str], rows: np.ndarray, cols: list[int]) -> None:
    """Raise for the first (lowest line) row among ``rows`` whose ``cols`` are empty or not finite."""
    if rows.size == 0:
        return
    sub = table.values[np.ix_(rows, cols)]
    bad = ~np.isfinite(sub)
    if not bad.any():
        return
    r, c = np.argwhere(bad)[0]
    row, col = rows[r], cols[c]
    name = numeric[col]
    if table.empty[row, col]:
        reason = f"missing value in column '{name}'"
    else:
        reason = f"{'NaN' if np.isnan(table.values[row, col]) else 'infinite value'} in column '{name}'"
    raise ClipReadError(fname, int(table.lines[row]), reason)


def _beyond(fname: str, table: _Table, numeric: list[str], rows: np.ndarray, cols: list[int], limit, unit):
    """Raise for the first of ``rows`` with a value past ``+-limit`` in ``cols`` (finite values)."""
    if rows.size == 0 or not cols:
        return
    bad = np.abs(table.values[np.ix_(rows, cols)]) > limit
    if bad.any():
        r, c = np.argwhere(bad)[0]
        value = table.values[rows[r], cols[c]]
        raise ClipReadError(
            fname,
            int(table.lines[rows[r]]),
            f"column '{numeric[cols[c]]}': {value:g} is beyond +-{limit:g} {unit}",
        )


def _unit_quats(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(unit quaternions, norms)`` of finite ``(R, 4)`` rows without overflow (scaled by the
    largest component first: components near 1e200 squared to inf); zero rows stay zero."""
    scale = np.max(np.abs(q), axis=1)
    safe = np.where(scale > 0, scale, 1.0)
    scaled = q / safe[:, None]
    norm_scaled = np.linalg.norm(scaled, axis=1)
    norms = norm_scaled * scale
    return scaled / np.where(norm_scaled > 0, norm_scaled, 1.0)[:, None], norms


def _build_tracks(
    fname: str, table: _Table, numeric: list[str], has_euler: bool, has_quat: bool, order: str
) -> list[RotationTrack]:
    """The tracks of the parsed cells ``table``, which it empties once every track's keys are
    gathered (their memory goes before the curves are made)."""
    from ..engine.tangents import make_curves

    n = table.values.shape[0]
    all_rows = np.arange(n)
    e_cols = [numeric.index(c) for c in _EULER_COLS] if has_euler else []
    q_cols = [numeric.index(c) for c in _QUAT_COLS] if has_quat else []
    t_col = 0
    _bad_cells(fname, table, numeric, all_rows, [t_col])
    _beyond(fname, table, numeric, all_rows, [t_col], MAX_TIME_S, "s")

    # Which rows are Euler keys: with both column sets, a row with all x, y, z empty is a quaternion key.
    if has_euler and has_quat:
        euler_row = ~table.empty[:, e_cols].all(axis=1)
    else:
        euler_row = np.full(n, has_euler)
    quat_given = ~table.empty[:, q_cols].all(axis=1) if has_quat else np.zeros(n, bool)
    euler_rows = np.flatnonzero(euler_row)
    _bad_cells(fname, table, numeric, euler_rows, e_cols)
    _bad_cells(fname, table, numeric, np.flatnonzero(quat_given | ~euler_row), q_cols)
    _beyond(fname, table, numeric, euler_rows, e_cols, MAX_EULER_DEG, "deg")

    # Per-row Euler order: the row's ``order`` cell, else the argument.
    if table.orders is not None:
        row_order = np.where(table.orders == "", order, table.orders)
    else:
        row_order = None

    quats = None
    if has_quat:
        quats, norms = _unit_quat_cells(table.values, q_cols)
        zero = (quat_given | ~euler_row) & ~(norms > 1e-12)
        if zero.any():
            row = int(np.flatnonzero(zero)[0])
            raise ClipReadError(fname, int(table.lines[row]), "zero quaternion (qx,qy,qz,qw all 0)")

    if has_euler and has_quat:
        both = np.flatnonzero(euler_row & quat_given)
        groups = [(order, both)] if row_order is None else _by_value(row_order, both)
        for grp_order, rows in groups:
            if rows.size == 0:
                continue
            err = _euler_quat_gap(table.values, rows, e_cols, grp_order, quats)
            bad = np.flatnonzero(err > EULER_QUAT_TOLERANCE_DEG)
            if bad.size:
                first = int(np.argmin(table.lines[rows[bad]]))
                row = rows[bad[first]]
                raise ClipReadError(
                    fname,
                    int(table.lines[row]),
                    f"Euler angles (order {grp_order}) and quaternion disagree by {err[bad[first]]:.6g} deg "
                    f"(more than {EULER_QUAT_TOLERANCE_DEG} deg)",
                )

    if quats is not None and euler_row.all():
        quats = None  # (checked: no track takes its keys from them; 70 MB of a 10-minute take)
    del all_rows

    # Group rows by path, tracks in order of first appearance.
    if table.paths is None:
        codes = np.zeros(n, dtype=np.int64)
        names = [""]
    else:
        # Rows usually come in runs of one path: factorize the runs, not the rows.
        heads = _runs(table.paths)
        index: dict[str, int] = {}
        run_codes = [index.setdefault(p, len(index)) for p in table.paths[heads].tolist()]
        codes = np.repeat(np.array(run_codes, dtype=np.int64), np.diff(np.append(heads, n)))
        names = list(index)
    by_code = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[by_code], np.arange(len(names) + 1))

    pending: list[tuple[str, bool, str, np.ndarray, np.ndarray]] = []
    extras: list[dict] = []
    for k, name in enumerate(names):
        rows = by_code[bounds[k] : bounds[k + 1]]
        if rows.size == 0:
            continue
        kinds = euler_row[rows]
        if kinds.any() and not kinds.all():
            first_q = rows[np.flatnonzero(~kinds)[0]]
            first_e = rows[np.flatnonzero(kinds)[0]]
            raise ClipReadError(
                fname,
                int(max(table.lines[first_q], table.lines[first_e])),
                f"track {_short(name)} mixes Euler rows (line {int(table.lines[first_e])}) and "
                f"quaternion-only rows (line {int(table.lines[first_q])}); a track is one or the other",
            )
        is_euler = bool(kinds[0])
        track_order = order
        if row_order is not None and is_euler:
            track_order = _track_order(fname, name, row_order[rows], table.lines[rows])
        rows = rows[np.argsort(table.values[rows, t_col], kind="stable")]
        times = table.values[rows, t_col]
        if is_euler:
            vals = table.values[np.ix_(rows, e_cols)]
        else:
            vals = quats[rows]
        keep = _merge_duplicates(fname, name, times, vals, table.lines[rows], is_euler)
        times, vals = times[keep], vals[keep]
        _check_intervals(fname, name, times, table.lines[rows][keep])
        pending.append((name, is_euler, track_order, times, vals))
        extras.append(_track_extras(fname, name, table, numeric, rows[keep], is_euler))
    # Every track's keys are gathered: the cells go before the curves are made (a 10-minute take's
    # table and quaternion cells were 260 MB under the slope computation's temporaries, issue 26).
    table.values = table.empty = table.paths = table.orders = table.lines = None
    del quats, euler_row, quat_given, euler_rows, row_order, codes, by_code
    # One make_curve per distinct (kind, key times) instead of one per track: slopes are per channel,
    # and 20,000 two-key tracks took 10 s at ~0.5 ms per call on the loaded 2-core machine.
    groups: dict[tuple[bool, bytes], list[int]] = {}
    curves: list = [None] * len(pending)
    for i, (_, is_euler, _, times, vals) in enumerate(pending):
        ex = extras[i]
        if ex.get("in_slope") is not None:  # the file's own tangents: the curve as written
            curves[i] = Curve.make(
                times,
                vals,
                ex["in_slope"],
                ex["out_slope"],
                tangent_mode=ex["tangent_mode"],
                **{k: ex[k] for k in ("weighted_mode", "in_weight", "out_weight") if k in ex},
                **_wrap_kwargs(ex),
            )
            continue
        groups.setdefault((is_euler, times.tobytes()), []).append(i)
    for (is_euler, _), members in groups.items():
        times = pending[members[0]][3]
        mode = "clamped_auto" if is_euler else "auto"
        made = make_curves(times, [pending[i][4] for i in members], mode=mode)
        for i, curve in zip(members, made, strict=True):
            curves[i] = curve
    for i, ex in enumerate(extras):
        wrap = _wrap_kwargs(ex)
        if wrap and ex.get("in_slope") is None:
            curves[i] = replace(curves[i], **wrap)
    return [
        RotationTrack(name, EULER, curve, order=track_order)
        if is_euler
        else RotationTrack(name, QUATERNION, curve)
        for (name, is_euler, track_order, _, _), curve in zip(pending, curves, strict=True)
    ]


def _unit_quat_cells(values, q_cols) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_unit_quats` of every row's ``qx..qw`` cells (empty cells as 0), in blocks of rows (the
    temporaries for all rows of a 10-minute take at once were 220 MB, issue 26)."""
    n = values.shape[0]
    quats, norms = np.empty((n, 4)), np.empty(n)
    for lo in range(0, n, _ROW_BLOCK):
        v = values[lo : lo + _ROW_BLOCK][:, q_cols]
        quats[lo : lo + _ROW_BLOCK], norms[lo : lo + _ROW_BLOCK] = _unit_quats(
            np.where(np.isfinite(v), v, 0.0)
        )
    return quats, norms


#: Rows per block of the row-wise conversions of the CSV reader.
_ROW_BLOCK = 1 << 18


def _euler_quat_gap(values, rows, e_cols, order: str, quats) -> np.ndarray:
    """Degrees between each row's Euler cells and its quaternion cells (``rows`` of ``values``), in
    blocks of rows: the conversion's temporaries for all 2.2 M rows of a 10-minute take at once were
    500 MB (issue 26)."""
    out = np.empty(rows.shape[0])
    step = _ROW_BLOCK
    for lo in range(0, rows.shape[0], step):
        r = rows[lo : lo + step]
        out[lo : lo + step] = geodesic_angle(euler_to_quat(values[np.ix_(r, e_cols)], order), quats[r])
    return out


def _wrap_kwargs(ex: dict) -> dict:
    return {k: ex[k] for k in ("pre_infinity", "post_infinity") if ex.get(k) is not None}


def _track_extras(
    fname: str, name: str, table: _Table, numeric: list[str], rows: np.ndarray, is_euler: bool
) -> dict:
    """What the optional columns give one track (its ``rows``, sorted by time, duplicates merged):
    ``in_slope``/``out_slope``/``tangent_mode`` (and the weights) when its rows carry tangents (every
    row or none), ``pre_infinity``/``post_infinity`` from any of its cells (all the same)."""
    out: dict = {}
    if rows.size == 0:
        return out
    lines = table.lines[rows]
    if TANGENT_COLS[0] in numeric:
        groups = [TANGENT_COLS] + ([WEIGHT_COLS] if WEIGHT_COLS[0] in numeric else [])
        for group in groups:
            cols = [numeric.index(c) for c in group]
            empty = table.empty[np.ix_(rows, cols)]
            if empty.all():
                continue
            if not is_euler:
                row = int(np.flatnonzero(~empty.all(axis=1))[0])
                raise ClipReadError(
                    fname,
                    int(lines[row]),
                    f"track {_short(name)}: tangent cells on a quaternion row (tangents are per Euler "
                    "channel)",
                )
            if empty.any():
                r, c = np.argwhere(empty)[0]
                raise ClipReadError(
                    fname,
                    int(lines[r]),
                    f"missing value in column '{group[c]}' (track {_short(name)} has tangents on other rows: "
                    "every row of a track or none)",
                )
            v = table.values[np.ix_(rows, cols)]
            if group is TANGENT_COLS:
                slopes = v[:, :6]
                if np.isnan(slopes).any():
                    r, c = np.argwhere(np.isnan(slopes))[0]
                    raise ClipReadError(fname, int(lines[r]), f"NaN in column '{group[c]}'")
                out["in_slope"], out["out_slope"] = slopes[:, :3].copy(), slopes[:, 3:].copy()
                out["tangent_mode"] = _int_cells(fname, group[6:], v[:, 6:], lines, 0, 2**32 - 1)
            else:
                out["weighted_mode"] = _int_cells(fname, group[:3], v[:, :3], lines, 0, 3)
                w = v[:, 3:]
                if not np.isfinite(w).all():
                    r, c = np.argwhere(~np.isfinite(w))[0]
                    raise ClipReadError(fname, int(lines[r]), f"non-finite value in column '{group[3 + c]}'")
                out["in_weight"], out["out_weight"] = w[:, :3].copy(), w[:, 3:].copy()
    for col in INFINITY_COLS:
        if col not in numeric:
            continue
        c = numeric.index(col)
        given = np.flatnonzero(~table.empty[rows, c])
        if given.size == 0:
            continue
        modes = _int_cells(fname, (col,), table.values[rows[given], c][:, None], lines[given], 0, 3)[:, 0]
        other = np.flatnonzero(modes != modes[0])
        if other.size:
            raise ClipReadError(
                fname,
                int(lines[given[other[0]]]),
                f"track {_short(name)}: column '{col}' differs between its rows",
            )
        out[col] = int(modes[0])
    return out


def _int_cells(fname: str, names, values: np.ndarray, lines: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Integer cells ``values (R, K)`` within ``lo..hi``, else an error naming the column and line."""
    ok = np.isfinite(values) & (values == np.round(values)) & (values >= lo) & (values <= hi)
    if not ok.all():
        r, c = np.argwhere(~ok)[0]
        raise ClipReadError(
            fname, int(lines[r]), f"column '{names[c]}': {values[r, c]:g} is not a whole number in {lo}..{hi}"
        )
    return values.astype(np.int64)


def _by_value(labels: np.ndarray, rows: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """``rows`` grouped by ``labels[rows]`` (few distinct values: the rotation orders)."""
    if rows.size == 0:
        return []
    sub = labels[rows]
    return [(str(v), rows[sub == v]) for v in dict.fromkeys(sub[_runs(sub)].tolist())]


def _track_order(fname: str, name: str, orders: np.ndarray, lines: np.ndarray) -> str:
    distinct = dict.fromkeys(orders[_runs(orders)].tolist())
    if len(distinct) > 1:
        a, b = list(distinct)[:2]
        line_b = int(lines[np.flatnonzero(orders == b)[0]])
        raise ClipReadError(
            fname, line_b, f"track {_short(name)} mixes rotation orders {a!r} and {b!r} in column 'order'"
        )
    return str(next(iter(distinct)))


def _check_intervals(fname: str, name: str, times: np.ndarray, lines: np.ndarray) -> None:
    if times.shape[0] < 2:
        return
    close = np.flatnonzero(np.diff(times) < MIN_KEY_INTERVAL_S)
    if close.size:
        i = int(close[0])
        raise ClipReadError(
            fname,
            int(max(lines[i], lines[i + 1])),
            f"track {_short(name)}: keys at {float(times[i])!r} and {float(times[i + 1])!r} s are closer "
            f"than {MIN_KEY_INTERVAL_S:g} s",
        )


def _merge_duplicates(
    fname: str, name: str, times: np.ndarray, vals: np.ndarray, lines: np.ndarray, is_euler: bool
) -> np.ndarray:
    """Mask of the keys to keep; raises when rows with equal times carry different values."""
    keep = np.ones(times.shape[0], dtype=bool)
    if times.shape[0] < 2:
        return keep
    dup = np.flatnonzero(times[1:] == times[:-1]) + 1
    if dup.size == 0:
        return keep
    a, b = vals[dup], vals[dup - 1]
    diff = np.max(np.abs(a - b), axis=1)
    if not is_euler:  # q and -q are the same rotation
        diff = np.minimum(diff, np.max(np.abs(a + b), axis=1))
    bad = np.flatnonzero(diff > DUPLICATE_TOLERANCE)
    if bad.size:
        i = dup[bad]
        first = int(np.argmin(np.maximum(lines[i], lines[i - 1])))
        line_a, line_b = sorted((int(lines[i[first]]), int(lines[i[first] - 1])))
        unit = "deg" if is_euler else "(quaternion components)"
        raise ClipReadError(
            fname,
            line_b,
            f"track {_short(name)}: time {float(times[i[first]])!r} appears again (first on line {line_a}) "
            f"with different values (differ by {diff[bad[first]]:.6g} {unit})",
        )
    keep[dup] = False
    return keep


def _estimate_frame_rate(tracks: Sequence[RotationTrack]) -> float:
    """A frame rate from the median key interval (a file without a ``frame_rate`` column)."""
    return _rate_of_times([t.times for t in tracks])


# --------------------------------------------------------------------------------------------------
# Writing


@dataclass(frozen=True)
class TrackRows:
    """What one track contributes to a written CSV.

    Attributes:
        path: track path.
        times: ``(N,)`` seconds.
        euler: ``(N, 3)`` degrees, columns x, y, z, or ``None`` (cells left empty).
        quats: ``(N, 4)`` x, y, z, w, or ``None`` (cells left empty).
        speed: ``(N,)`` deg/s, or ``None`` (no ``speed`` cells).
        order: rotation order of ``euler`` (``None`` = Unity's ``"zxy"``); any other order makes
            the file carry an ``order`` column.
        curve: see below (``format_csv(..., tangents=True)`` writes its slopes and modes).
    """

    path: str
    times: np.ndarray
    euler: np.ndarray | None
    quats: np.ndarray | None
    speed: np.ndarray | None = None
    order: str | None = None
    #: The Euler channels' curve (values ``euler``), when the file carries tangents (:data:`TANGENT_COLS`,
    #: :data:`WEIGHT_COLS`) and infinity (:data:`INFINITY_COLS`): its slopes, modes, weights and wrap modes.
    curve: Curve | None = None
    #: ``(pre, post)`` infinity of the track (written with ``format_csv(..., infinity=True)``).
    wrap: tuple[int, int] = (WRAP_CLAMP, WRAP_CLAMP)


#: Rows formatted per ``%`` call: bounds the format string and the argument tuple (``sample`` may
#: write millions of rows for one track).
_CHUNK_ROWS = 8192
#: How the cells derived from a row's Euler angles are spelled: its quaternion (the reader takes the
#: Euler angles and only checks that the two agree within ``EULER_QUAT_TOLERANCE_DEG``) and the
#: ``speed`` column. Nine significant digits (1e-9 per component, what a float32 needs to round-trip)
#: instead of ``repr``'s 17: a 10-minute take's 2.2 M rows formatted in 2.6 s instead of 5.9 s and
#: parsed 1.5 s faster (issue 26). Times, Euler angles, slopes and quaternion keys stay ``repr``.
_DERIVED_SPEC = "%.9g"


def format_csv(blocks: Iterable[TrackRows], **opts) -> str:
    """The CSV text of :func:`iter_csv` (same options) as one string."""
    return "".join(iter_csv(blocks, **opts))


def iter_csv(
    blocks: Iterable[TrackRows],
    with_speed: bool = True,
    fname: str = "<csv>",
    tangents: bool = False,
    weights: bool = False,
    infinity: bool = False,
    frame_rate: float | None = None,
) -> Iterator[str]:
    """CSV text, in chunks of at most ``_CHUNK_ROWS`` rows (a writer streams them: the text of a
    10-minute take is 380 MB, issue 26), with header ``path[,order],time,x,y,z,qx,qy,qz,qw[,speed]``,
    one row per entry of each block. Floats are written with ``repr`` (round-trips exactly), except the
    cells derived from a row's Euler angles (:data:`_DERIVED_SPEC`); missing parts are empty cells.

    Optional columns (what a CSV carries beyond key values, issue 20), after those: ``tangents``
    (:data:`TANGENT_COLS`: each block's ``curve`` slopes, ``inf`` for a stepped side, and tangent
    modes), ``weights`` (:data:`WEIGHT_COLS`), ``infinity`` (:data:`INFINITY_COLS`, on every row of a
    track), ``frame_rate`` (:data:`FRAME_RATE_COL`, on every row: cells are never left empty, so
    the reader's fast path reads them). A block without ``curve`` gets the ClampedAuto slopes the
    reader would give its values.

    Raises :class:`ClipWriteError` (naming ``fname``) for whatever ``read_csv`` would refuse:
    see :func:`check_rows`.

    Speed: one ``%`` format over a whole block of rows (``"%r,%r,...\\n" * rows % values``), time
    cells formatted once per distinct time array (tracks of one clip share their times). The
    per-value generator this replaces took 25 % of a ``clean`` run on a 17 MB mocap CSV
    (issue 10); ``benchmarks/csv_io.py`` compares it with the csv module."""
    blocks = list(blocks)
    checked: set[int] = set()
    for b in blocks:
        check_rows(b, fname, times_checked=id(b.times) in checked)
        checked.add(id(b.times))
    with_order = any(b.euler is not None and (b.order or UNITY_ORDER) != UNITY_ORDER for b in blocks)
    header = list(WRITE_COLUMNS if with_speed else WRITE_COLUMNS[:-1])
    if with_order:
        header.insert(1, "order")
    header += (list(TANGENT_COLS) if tangents else []) + (list(WEIGHT_COLS) if weights and tangents else [])
    header += list(INFINITY_COLS) if infinity else []
    header += [FRAME_RATE_COL] if frame_rate is not None else []
    yield ",".join(header) + "\n"
    time_cache: dict[tuple, list[tuple[np.ndarray, list[str]]]] = {}
    rate_cell = "," + repr(float(frame_rate)) if frame_rate is not None else ""
    for b in blocks:
        times = np.asarray(b.times, dtype=np.float64).reshape(-1)
        n = times.shape[0]
        if n == 0:
            continue
        cols: list[np.ndarray] = []
        spec = ["%s"]  # the time cell, pre-formatted
        for arr, width in ((b.euler, 3), (b.quats, 4)):
            if arr is None:
                spec.extend([""] * width)
            else:
                cols.append(np.asarray(arr, dtype=np.float64).reshape(n, width))
                derived = arr is b.quats and b.euler is not None
                spec.extend([_DERIVED_SPEC if derived else "%r"] * width)
        if with_speed:
            if b.speed is None:
                spec.append("")
            else:
                cols.append(np.asarray(b.speed, dtype=np.float64).reshape(n, 1))
                spec.append(_DERIVED_SPEC)
        curve = None
        if tangents:
            curve = b.curve if b.curve is not None else _as_read(times, b.euler)
            cols += [curve.in_slope, curve.out_slope, curve.tangent_mode.astype(np.float64)]
            spec += ["%r"] * 6 + ["%d"] * 3
            if weights:
                cols += [curve.weighted_mode.astype(np.float64), curve.in_weight, curve.out_weight]
                spec += ["%d"] * 3 + ["%r"] * 6
        prefix = _csv_cell(b.path) + ","
        if with_order:
            prefix += (_csv_cell(b.order or UNITY_ORDER) if b.euler is not None else "") + ","
        suffix = ""
        if infinity:
            suffix += f",{int(b.wrap[0])},{int(b.wrap[1])}"
        suffix += rate_cell
        row_fmt = prefix.replace("%", "%%") + ",".join(spec) + suffix.replace("%", "%%") + "\n"
        time_text = _time_cells(times, time_cache)
        values = np.concatenate(cols, axis=1) if cols else np.zeros((n, 0))
        width = values.shape[1] + 1
        for lo in range(0, n, _CHUNK_ROWS):
            hi = min(n, lo + _CHUNK_ROWS)
            args: list = [None] * ((hi - lo) * width)
            args[0::width] = time_text[lo:hi]
            flat = values[lo:hi].ravel().tolist()
            for j in range(width - 1):
                args[j + 1 :: width] = flat[j :: width - 1]
            yield (row_fmt * (hi - lo)) % tuple(args)


def _as_read(times: np.ndarray, euler: np.ndarray | None) -> Curve:
    """The curve ``read_csv`` gives Euler rows without tangent cells (ClampedAuto through the values)."""
    from ..engine.tangents import make_curve

    if euler is None:
        raise ClipWriteError("<csv>", None, "tangent columns need Euler values on every row")
    return make_curve(times, euler, mode="clamped_auto")


def _time_cells(times: np.ndarray, cache: dict) -> list[str]:
    """``repr`` of each time, reused across blocks with an equal time array."""
    key = (times.shape[0], float(times[0]), float(times[-1]))
    for arr, text in cache.get(key, ()):
        if arr is times or np.array_equal(arr, times):
            return text
    text = list(map(repr, times.tolist()))
    cache.setdefault(key, []).append((times, text))
    return text


def check_rows(b: TrackRows, fname: str = "<csv>", times_checked: bool = False) -> None:
    """Refuse (:class:`ClipWriteError`) a block ``read_csv`` would not read back as written: a path
    over ``MAX_PATH_CHARS``, with leading/trailing white space (cells are stripped on reading), a
    NUL or a character UTF-8 cannot encode; Euler values past ``MAX_EULER_DEG``, times past
    ``MAX_TIME_S``, keys closer than ``MIN_KEY_INTERVAL_S``; non-finite values; a bad order."""
    shown = _short(b.path)

    def fail(reason: str):
        raise ClipWriteError(fname, None, f"track {shown}: {reason}; nothing written")

    if len(b.path) > MAX_PATH_CHARS:
        raise ClipWriteError(
            fname,
            None,
            f"track path of {len(b.path):,} characters (CSV paths hold at most {MAX_PATH_CHARS:,}); "
            "nothing written",
        )
    if b.path != b.path.strip():
        fail("path starts or ends with white space, which CSV readers strip (use .anim)")
    if "\x00" in b.path:
        fail("path holds a NUL character, which CSV cannot carry (use .anim)")
    try:
        b.path.encode("utf-8")
    except UnicodeEncodeError:
        fail("path is not valid Unicode (a lone surrogate), which UTF-8 cannot encode")
    if b.order is not None:
        try:
            normalize_order(b.order)
        except ValueError as exc:
            fail(str(exc))
    times = np.asarray(b.times, dtype=np.float64).reshape(-1)
    if times.size and not times_checked:
        # NaN fails both comparisons (min/max propagate it).
        if not np.abs(times).max() <= MAX_TIME_S:
            fail(f"key times must be finite and within +-{MAX_TIME_S:g} s")
        if times.size > 1 and not np.min(np.diff(times)) >= MIN_KEY_INTERVAL_S:
            fail(f"keys closer than {MIN_KEY_INTERVAL_S:g} s (or out of order)")
    if b.euler is not None and np.size(b.euler):
        peak = np.abs(np.asarray(b.euler, dtype=np.float64)).max()
        if not np.isfinite(peak):
            fail("a non-finite Euler value")
        if peak > MAX_EULER_DEG:
            fail(f"Euler value {peak:g} deg is beyond +-{MAX_EULER_DEG:g} deg")
    if (
        b.quats is not None
        and np.size(b.quats)
        and not np.isfinite(np.asarray(b.quats, dtype=np.float64)).all()
    ):
        fail("a non-finite quaternion component")


def _csv_cell(text: str) -> str:
    """One CSV cell: quoted (quotes doubled) when it holds a comma, a quote or a line break. Not
    ``csv.writer``: with ``lineterminator=""`` it wrote line breaks unquoted, a file that then failed
    to parse."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def track_rows(track: RotationTrack) -> TrackRows:
    """The full row set of a track: continuous Euler in the track's order (Unity's ZXY for quaternion
    tracks) along what the track plays, normalized hemisphere-continuous quaternions and the angular
    speed (deg/s) to the next key. The Euler values follow the played path, so a turn of more than
    180 deg between keys keeps its winding (``export_checks.csv_track``)."""
    from ..engine.export_checks import csv_track
    from ..engine.speed import angular_speed

    keyed = csv_track(track)
    quats = hemisphere_continuous(key_quaternions(keyed))
    return TrackRows(
        track.path,
        keyed.times,
        keyed.curve.value,
        quats,
        angular_speed(keyed.times, quats),
        order=keyed.order,
    )


def clip_rows(tracks: Sequence[RotationTrack]) -> list[TrackRows]:
    """:func:`track_rows` of every track, equal to calling it per track. Euler tracks sharing one
    time array and order (every joint of a BVH) go through the engine functions once, concatenated:
    per-track calls cost about 0.3 ms each, 3 s of a 10,000-joint BVH -> CSV convert. Across the
    seams, ``hemisphere_continuous`` may flip a whole block (undone by restoring each block's first
    sign: negation is exact) and ``angular_speed`` sees one bogus step per block (overwritten by the
    block's last-key rule)."""
    from ..engine.speed import angular_speed

    out: list[TrackRows | None] = [None] * len(tracks)
    groups: dict[tuple, list[int]] = {}
    for i, t in enumerate(tracks):
        if t.kind == EULER and t.n_keys >= 2:
            groups.setdefault((id(t.times), t.order), []).append(i)
        else:
            out[i] = track_rows(t)
    for (_, order), members in groups.items():
        if len(members) == 1:
            out[members[0]] = track_rows(tracks[members[0]])
            continue
        times = tracks[members[0]].times
        n = times.shape[0]
        euler = np.concatenate([np.asarray(tracks[i].curve.value, dtype=np.float64) for i in members])
        raw = euler_to_quat(euler, order)
        quats = hemisphere_continuous(raw)
        starts = np.arange(len(members)) * n
        sign = np.where(np.all(quats[starts] == raw[starts], axis=1), 1.0, -1.0)
        quats = quats * np.repeat(sign, n)[:, None]
        speed = angular_speed(np.tile(times, len(members)), quats)
        ends = starts + n - 1
        speed[ends] = speed[ends - 1]
        for k, i in enumerate(members):
            rows = slice(k * n, (k + 1) * n)
            out[i] = TrackRows(tracks[i].path, times, euler[rows], quats[rows], speed[rows], order=order)
    return out  # type: ignore[return-value]


#: Played-motion change (degrees) above which ``write_csv`` warns that the tangents were lost.
TANGENT_LOSS_WARN_DEG = 0.01

#: Curve fields that decide what Unity plays (the tangent mode bits only say how slopes were made).
_PLAYED_FIELDS = ("value", "in_slope", "out_slope", "in_weight", "out_weight", "weighted_mode")


def _tangent_loss_warnings(clip: Clip, blocks: Sequence[TrackRows], measured=None) -> list[str]:
    """The tracks whose curves the CSV does not carry (quaternion tracks, written as Euler keys, and
    read back with ClampedAuto tangents on the Euler columns; Euler tracks carry their own tangents).
    Say when what Unity plays would change by more than ``TANGENT_LOSS_WARN_DEG`` (authored tangents,
    quaternion tracks), so a round trip through CSV does not alter the motion silently.

    ``measured`` (path -> degrees): the played change of tracks the caller already measured on the
    file as read back (``io.write_checked``'s check diffs exactly the track against its read-back
    curve); those are not diffed again (65 certified diffs, ~0.4 s of a 17 MB mocap ``clean``).
    Tracks whose curve is already exactly what the reader rebuilds (BVH and CSV inputs) are 0 without
    a diff; the rebuilt curves of tracks sharing one time array come from one ``make_curve`` call
    (per-track calls and diffs took 4.7 s of a 10,000-joint BVH -> CSV convert)."""
    from ..engine.diff import diff_tracks
    from ..engine.export_checks import has_sign_flips
    from ..engine.unwrap import unwrap_track

    measured = measured or {}
    lost = []
    todo = []
    for i, t in enumerate(clip.tracks):
        if t.n_keys < 2:
            continue
        if t.kind == QUATERNION and has_sign_flips(t):
            todo.append(i)  # the check measures the flips too; this warning is about the tangents
        elif t.path in measured:
            if measured[t.path] > TANGENT_LOSS_WARN_DEG:
                lost.append((measured[t.path], t.path))
        else:
            todo.append(i)
    rebuilt, same = _rebuilt_curves([clip.tracks[i] for i in todo], [blocks[i] for i in todo])
    for i, back_curve, unchanged in zip(todo, rebuilt, same, strict=True):
        t = clip.tracks[i]
        if unchanged:
            continue
        if t.kind == QUATERNION and has_sign_flips(t):
            # Sign flips (a defect) get hemisphere-continuous rows on purpose; measure only what the
            # tangents change.
            t = unwrap_track(t)
        back = RotationTrack(t.path, EULER, back_curve, order=t.order)
        err = diff_tracks(t, back).max_error
        if err > TANGENT_LOSS_WARN_DEG:
            lost.append((err, t.path))
    if not lost:
        return []
    err, where = max(lost)
    return [
        f"{len(lost)} track(s) lose their curves in CSV (quaternion keys written as Euler keys with "
        f"ClampedAuto tangents): read back, the played motion differs by up to {err:.3g} deg "
        f"({where or '(root)'}); use .anim to keep it, or `sample` to bake it densely"
    ]


def _rebuilt_curves(tracks: Sequence[RotationTrack], blocks: Sequence[TrackRows]) -> tuple[list, list[bool]]:
    """The ClampedAuto curve ``read_csv`` gives each block's Euler rows (``None`` under 2 keys), and
    whether it plays exactly as the track does (Euler tracks only). Blocks sharing a time array are
    built in one ``make_curve`` call (slopes are per channel) and compared in one go."""
    from ..engine.tangents import make_curve

    out: list = [None] * len(blocks)
    same = [False] * len(blocks)
    groups: dict[int, list[int]] = {}
    for i, b in enumerate(blocks):
        if np.shape(b.times)[0] >= 2:
            groups.setdefault(id(b.times), []).append(i)
    for members in groups.values():
        times = blocks[members[0]].times
        whole = make_curve(times, np.hstack([blocks[i].euler for i in members]), mode="clamped_auto")
        for k, i in enumerate(members):
            cols = slice(3 * k, 3 * k + 3)
            out[i] = replace(
                whole,
                **{f: getattr(whole, f)[:, cols] for f in (*_PLAYED_FIELDS, "tangent_mode")},
            )
        euler = [i for i in members if tracks[i].kind == EULER and _same_wrap(tracks[i].curve, whole)]
        if euler and all(
            tracks[i].curve.time is times or np.array_equal(tracks[i].curve.time, times) for i in euler
        ):
            # All members unchanged (the usual case: BVH, CSV inputs) is one comparison per field.
            kept = set(euler)
            cols = np.concatenate([np.arange(3 * k, 3 * k + 3) for k, i in enumerate(members) if i in kept])
            if all(
                np.array_equal(
                    np.hstack([getattr(tracks[i].curve, f) for i in euler]), getattr(whole, f)[:, cols]
                )
                for f in _PLAYED_FIELDS
            ):
                for i in euler:
                    same[i] = True
                continue
        for i in euler:
            same[i] = np.array_equal(tracks[i].curve.time, times) and all(
                np.array_equal(getattr(tracks[i].curve, f), getattr(out[i], f)) for f in _PLAYED_FIELDS
            )
    return out, same


def _same_wrap(a, b) -> bool:
    return a.pre_infinity == b.pre_infinity and a.post_infinity == b.post_infinity


def write_csv(
    clip: Clip,
    path: str | os.PathLike,
    protect: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    keys_only: bool = False,
    played_change=None,
) -> list[str]:
    """Write ``clip`` as CSV, atomically. Returns warnings: non-rotation curves that were dropped and
    tracks whose authored tangents CSV cannot hold. Orders other than Unity's ZXY are written in an
    ``order`` column (read back by :func:`read_csv`).

    CSV holds key values only: tangents are not written (a reader recomputes them).

    Args:
        clip: the clip; every rotation track becomes rows (``clip.other_tracks`` are not written).
        path: the output file.
        protect: path(s) that must not be overwritten (the input); raises :class:`ClipWriteError`.
        keys_only: write each track's keys as stored, in its own kind only (Euler tracks: ``x,y,z``;
            quaternion tracks: ``qx..qw`` untouched, hemisphere flips included), no ``speed``.
            Reads back to the same kinds and values; used for authored sample files.
        played_change: optional callable, called after the write, returning path -> degrees: how far
            the file as read back plays from each track (``io.write_checked`` measured it); the
            tangent-loss warning takes those figures instead of diffing the tracks again.

    Raises:
        ClipWriteError: the output is protected, cannot be written, or the clip holds what a CSV
            cannot carry so that it reads back (see :func:`check_rows`); nothing is written.
    """
    fname = os.fspath(path)
    opts: dict = {}
    rebuilt: list = []
    if keys_only:
        blocks = [
            TrackRows(t.path, t.times, t.curve.value, None, order=t.order)
            if t.kind == EULER
            else TrackRows(t.path, t.times, None, t.curve.value)
            for t in clip.tracks
        ]
        chunks = iter_csv(blocks, with_speed=False, fname=fname)
    else:
        blocks, opts, rebuilt = carried_rows(clip)
        announce_written(lambda: _as_read_back(clip, blocks, rebuilt))
        chunks = iter_csv(blocks, with_speed=True, fname=fname, **opts)
    atomic_write_chunks(path, (c.encode("utf-8") for c in chunks), protect=protect)
    warnings = []
    if not keys_only:
        measured = played_change() if played_change is not None else None
        # Tracks that carry their curve, or are already what the reader rebuilds (carried_rows
        # said so), lose no tangents; the rest are measured.
        rest = [
            i
            for i, (b, t) in enumerate(zip(blocks, clip.tracks, strict=True))
            if b.curve is None and rebuilt[i] is not t.curve
        ]
        sub = Clip(clip.name, clip.frame_rate, [clip.tracks[i] for i in rest])
        warnings.extend(_tangent_loss_warnings(sub, [blocks[i] for i in rest], measured))
    warnings.extend(csv_losses(clip, keys_only, tangent_warnings=False))
    return warnings


def carried_rows(clip: Clip) -> tuple[list[TrackRows], dict, list]:
    """The rows :func:`write_csv` writes for ``clip``, the :func:`format_csv` options and the curve
    the reader rebuilds from each block's Euler rows (:func:`_rebuilt_curves`): an Euler
    track whose curve is not what the reader rebuilds from its values (reduced, edited, read from a
    ``.anim``) keeps its own values, slopes, tangent modes and weights (the tangent columns);
    tracks with pre/post infinity other than Constant carry it; the frame rate is written when the
    key times would not give it back. A clip read from CSV or BVH (ClampedAuto through its keys, 30
    fps keys at 30 fps) is written exactly as before, with the base columns only."""
    blocks = clip_rows(clip.tracks)
    rebuilt, same = _rebuilt_curves(clip.tracks, blocks)
    # A track that is already what the reader rebuilds keeps its own curve (the rebuilt copy of a
    # 10-minute take's curves held 100 MB through the write)
    rebuilt = [t.curve if s else c for t, c, s in zip(clip.tracks, rebuilt, same, strict=True)]
    own = [i for i, t in enumerate(clip.tracks) if t.kind == EULER and t.n_keys >= 2 and not same[i]]
    for i in own:
        t = clip.tracks[i]
        quats = hemisphere_continuous(key_quaternions(t))
        from ..engine.speed import angular_speed

        blocks[i] = replace(
            blocks[i],
            times=t.times,
            euler=np.asarray(t.curve.value, dtype=np.float64),
            quats=quats,
            speed=angular_speed(t.times, quats),
            order=t.order,
            curve=t.curve,
        )
    wraps = [(int(t.curve.pre_infinity), int(t.curve.post_infinity)) for t in clip.tracks]
    for i, w in enumerate(wraps):
        if w != (WRAP_CLAMP, WRAP_CLAMP):
            blocks[i] = replace(blocks[i], wrap=w)
    opts = {
        "tangents": bool(own),
        # Weights too when a curve's differ from the reader's default (unused ones included: exact).
        "weights": any(_own_weights(clip.tracks[i].curve) for i in own),
        "infinity": any(w != (WRAP_CLAMP, WRAP_CLAMP) for w in wraps),
        "frame_rate": None,
    }
    estimate = _rate_of_times([b.times for b in blocks])
    if float(clip.frame_rate) > 0 and estimate != float(clip.frame_rate):
        opts["frame_rate"] = float(clip.frame_rate)
    return blocks, opts, rebuilt


def _as_read_back(clip: Clip, blocks: Sequence[TrackRows], rebuilt: Sequence) -> list[RotationTrack]:
    """The rotation tracks :func:`read_csv` will give back for the rows ``blocks`` (written from
    ``clip``): a block carrying its curve (the tangent columns) reads back as its track; the others
    as Euler tracks with the ClampedAuto curve the reader rebuilds from their rows (``rebuilt``, with
    the block's wrap modes). ``io.check_ahead`` compares these while the file is written and keeps
    the figures only if the file read back holds exactly these numbers; a block this does not
    foresee (one key) is left out, and then the comparison is made after the read-back."""
    out = []
    for t, b, curve in zip(clip.tracks, blocks, rebuilt, strict=True):
        if b.curve is not None:
            out.append(t)
        elif curve is not None:
            if b.wrap != (WRAP_CLAMP, WRAP_CLAMP):
                curve = replace(curve, pre_infinity=b.wrap[0], post_infinity=b.wrap[1])
            out.append(RotationTrack(t.path, EULER, curve, order=b.order or UNITY_ORDER))
    return out


def _own_weights(curve: Curve) -> bool:
    """True when ``curve`` has weights the reader would not give it back (weighted keys, or weights
    other than Unity's default 1/3)."""
    from ..engine.curves import DEFAULT_WEIGHT

    return bool(
        np.any(curve.weighted_mode)
        or np.any(curve.in_weight != DEFAULT_WEIGHT)
        or np.any(curve.out_weight != DEFAULT_WEIGHT)
    )


def csv_losses(clip: Clip, keys_only: bool = False, tangent_warnings: bool = True) -> list[str]:
    """What a CSV written from ``clip`` cannot hold (``engine.export_checks.csv_losses``, the export
    checks the editor's dialog lists): said before writing, and among :func:`write_csv`'s warnings."""
    from ..engine.export_checks import csv_losses as findings

    return findings(clip, keys_only=keys_only, quaternion_line=tangent_warnings)


def _rate_of_times(times_list) -> float:
    """:func:`_estimate_frame_rate` from key time arrays."""
    steps = [np.diff(t) for t in times_list if np.shape(t)[0] > 1]
    if not steps:
        return 30.0
    dt = float(np.median(np.concatenate(steps)))
    rate = 1.0 / dt
    nearest = round(rate)
    return float(nearest) if nearest >= 1 and abs(rate - nearest) <= 0.01 * nearest else rate
