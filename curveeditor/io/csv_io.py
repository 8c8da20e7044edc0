"""CSV clips: one row per key, columns found by header name.

Reading (``read_csv``):

* ``time`` (seconds) is required; ``path`` is optional (one track per distinct path, default ``""``);
  rotation columns are ``x, y, z`` (Euler degrees, columns by axis, in the ``order`` given, default
  Unity's ``"zxy"``) and/or ``qx, qy, qz, qw``. Header names are matched case-insensitively; other
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
* Any bad cell (NaN, infinite, not a number, empty), a missing column or a zero quaternion raises
  :class:`ClipReadError` naming the file, the 1-based line and the reason.

Tangents of the keys read: Euler tracks get Unity's ClampedAuto tangents (what the Animation window
gives new keys). Quaternion tracks get Unity's Auto tangents on the hemisphere-continuous components:
Unity plays quaternion curves by evaluating x, y, z, w independently and normalizing, so the slopes
should be those of a smooth curve through the keys; ClampedAuto would flatten each component at its
own extrema, which are not stops of the motion, and make the angular speed dip at those keys. With
Auto (Catmull-Rom-like, non-uniform) slopes the played motion passes through every key with a
continuous angular velocity. Measured on a 180 deg/s swing keyed every 0.1 s (``tests/io/test_csv.py``),
the played motion stays within 0.014 deg of the true one on inner segments (0.2 deg on the end
segments, whose slopes are one-sided) with Auto, against 0.31 deg (2.7 deg at the ends, and
176 deg/s speed error) with ClampedAuto.

Writing (``write_csv``): columns ``path,time,x,y,z,qx,qy,qz,qw,speed``, one row per key: the
continuous Euler angles in the track's order (the key values of Euler tracks; a continuous
decomposition for quaternion tracks), the normalized hemisphere-continuous quaternion, and the
angular speed in deg/s to the next key. Floats are written with ``repr`` (shortest text that reads
back to the same double). Output is atomic and never overwrites a ``protect`` path.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.clip import EULER, QUATERNION, Clip, RotationTrack, key_quaternions
from ..engine.rotations import (
    UNITY_ORDER,
    euler_to_quat,
    geodesic_angle,
    hemisphere_continuous,
    normalize_order,
)
from .atomic import atomic_write_text
from .errors import ClipReadError

__all__ = [
    "read_csv",
    "write_csv",
    "format_csv",
    "TrackRows",
    "EULER_QUAT_TOLERANCE_DEG",
    "DUPLICATE_TOLERANCE",
    "WRITE_COLUMNS",
]

#: Largest allowed disagreement (degrees, geodesic) between a row's Euler angles and its quaternion.
EULER_QUAT_TOLERANCE_DEG = 0.01
#: Rows with equal times merge when their values differ by at most this much (degrees for Euler
#: values, quaternion components after normalization and hemisphere alignment).
DUPLICATE_TOLERANCE = 1e-9
#: Header of written files.
WRITE_COLUMNS = ("path", "time", "x", "y", "z", "qx", "qy", "qz", "qw", "speed")

_EULER_COLS = ("x", "y", "z")
_QUAT_COLS = ("qx", "qy", "qz", "qw")


# --------------------------------------------------------------------------------------------------
# Reading


@dataclass
class _Table:
    """The parsed cells: ``values (R, K)`` floats (NaN where empty), ``empty (R, K)`` bool,
    ``paths (R,)`` numpy str array or None, ``lines (R,)`` 1-based line numbers (K numeric columns)."""

    values: np.ndarray
    empty: np.ndarray
    paths: np.ndarray | None
    lines: np.ndarray


def read_csv(path: str | os.PathLike, order: str = UNITY_ORDER) -> Clip:
    """Read a CSV clip (see the module docstring for the format).

    Args:
        path: the file.
        order: rotation order of the ``x, y, z`` columns (scipy-style, ``"zxy"`` = Unity default).

    Returns:
        A :class:`Clip` named after the file stem, with one :class:`RotationTrack` per path in order
        of first appearance; ``frame_rate`` is estimated from the median key interval (30 when no
        track has two keys); ``meta = {"format": "csv"}``.

    Raises:
        ClipReadError: unreadable file, missing column, bad cell, duplicate time with different
            values, Euler/quaternion disagreement, zero quaternion, bad ``order``.
    """
    fname = os.fspath(path)
    try:
        normalize_order(order)
    except ValueError as exc:
        raise ClipReadError(fname, None, str(exc)) from None
    try:
        with open(fname, encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except FileNotFoundError:
        raise ClipReadError(fname, None, "no such file") from None
    except IsADirectoryError:
        raise ClipReadError(fname, None, "is a folder, not a file") from None
    except UnicodeDecodeError as exc:
        raise ClipReadError(fname, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ClipReadError(fname, None, exc.strerror or str(exc)) from None

    header_no, header_line, body = _split_header(text)
    if header_line is None:
        raise ClipReadError(
            fname, None, "empty file (expected a header row with 'time' and rotation columns)"
        )
    columns = _parse_header(fname, header_line, header_no)
    has_euler, has_quat = _rotation_columns(fname, columns, header_no)
    numeric = ["time"] + (list(_EULER_COLS) if has_euler else []) + (list(_QUAT_COLS) if has_quat else [])
    col_idx = [columns.index(c) for c in numeric]
    path_idx = columns.index("path") if "path" in columns else None

    table = _parse_rows(fname, text, body, header_no, col_idx, path_idx, columns)
    tracks = _build_tracks(fname, table, numeric, has_euler, has_quat, order)
    return Clip(
        name=Path(fname).stem,
        frame_rate=_estimate_frame_rate(tracks),
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


def _show(names: Iterable[str]) -> str:
    return ",".join(f"'{n}'" for n in names)


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


def _has_blank_line(body: str) -> bool:
    """Whether numpy may have skipped a blank line (substring tests: a regex took 1.5 s on 60 MB)."""
    return body.startswith(("\n", "\r\n")) or "\n\n" in body or "\n\r\n" in body


def _parse_rows(
    fname: str,
    text: str,
    body: str,
    header_no: int,
    col_idx: list[int],
    path_idx: int | None,
    header: list[str],
) -> _Table:
    """Numeric cells of every data row. Fast path: numpy's C parser on well-formed files; any
    irregularity (empty cell, bad number, quoted newline) falls back to the csv module, which finds
    the exact line and reason."""
    k = len(col_idx)
    if not body.strip():
        return _Table(np.zeros((0, k)), np.zeros((0, k), bool), None, np.zeros(0, np.int64))
    stream = io.StringIO(body)
    try:
        values = np.loadtxt(
            stream,
            delimiter=",",
            comments=None,
            usecols=col_idx,
            dtype=np.float64,
            ndmin=2,
            quotechar='"',
        )
        paths = None
        if path_idx is not None:
            stream.seek(0)
            paths = np.loadtxt(
                stream,
                delimiter=",",
                comments=None,
                usecols=(path_idx,),
                dtype=str,
                ndmin=1,
                quotechar='"',
            )
            paths = np.char.strip(paths)
            if paths.shape[0] != values.shape[0]:
                raise ValueError("row count mismatch")
    except ValueError:
        return _parse_rows_slow(fname, text, header_no, col_idx, path_idx, header)
    if _has_blank_line(body):
        # numpy skipped blank lines: map rows to the lines that hold them.
        lines = body.split("\n")
        line_nos = np.array([i for i, line in enumerate(lines) if line.strip()], dtype=np.int64)
        line_nos += header_no + 1
    else:
        line_nos = np.arange(values.shape[0], dtype=np.int64) + header_no + 1
    if line_nos.shape[0] != values.shape[0]:
        return _parse_rows_slow(fname, text, header_no, col_idx, path_idx, header)
    return _Table(values, np.zeros(values.shape, bool), paths, line_nos)


def _parse_rows_slow(
    fname: str, text: str, header_no: int, col_idx: list[int], path_idx: int | None, header: list[str]
) -> _Table:
    reader = csv.reader(io.StringIO(text))
    values: list[list[float]] = []
    empty: list[list[bool]] = []
    paths: list[str] = []
    line_nos: list[int] = []
    need = max(col_idx + ([path_idx] if path_idx is not None else []))
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
                        fname, line_no, f"column '{header[k]}': {cell!r} is not a number"
                    ) from None
                emp.append(False)
            values.append(vals)
            empty.append(emp)
            paths.append(row[path_idx].strip() if path_idx is not None else "")
            line_nos.append(line_no)
    except csv.Error as exc:
        raise ClipReadError(fname, reader.line_num, f"malformed CSV: {exc}") from None
    arr = np.array(values, dtype=np.float64).reshape(-1, len(col_idx))
    return _Table(
        arr,
        np.array(empty, dtype=bool).reshape(arr.shape),
        np.array(paths, dtype=str) if path_idx is not None else None,
        np.array(line_nos, dtype=np.int64),
    )


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


def _build_tracks(
    fname: str, table: _Table, numeric: list[str], has_euler: bool, has_quat: bool, order: str
) -> list[RotationTrack]:
    from ..engine.tangents import make_curve

    n = table.values.shape[0]
    all_rows = np.arange(n)
    e_cols = [numeric.index(c) for c in _EULER_COLS] if has_euler else []
    q_cols = [numeric.index(c) for c in _QUAT_COLS] if has_quat else []
    t_col = 0
    _bad_cells(fname, table, numeric, all_rows, [t_col])

    # Which rows are Euler keys: with both column sets, a row with all x, y, z empty is a quaternion key.
    if has_euler and has_quat:
        euler_row = ~table.empty[:, e_cols].all(axis=1)
    else:
        euler_row = np.full(n, has_euler)
    quat_given = ~table.empty[:, q_cols].all(axis=1) if has_quat else np.zeros(n, bool)
    _bad_cells(fname, table, numeric, np.flatnonzero(euler_row), e_cols)
    _bad_cells(fname, table, numeric, np.flatnonzero(quat_given | ~euler_row), q_cols)

    quats = None
    if has_quat:
        q = table.values[:, q_cols]
        norms = np.linalg.norm(np.where(np.isfinite(q), q, 0.0), axis=1)
        zero = (quat_given | ~euler_row) & ~(norms > 1e-12)
        if zero.any():
            row = int(np.flatnonzero(zero)[0])
            raise ClipReadError(fname, int(table.lines[row]), "zero quaternion (qx,qy,qz,qw all 0)")
        quats = q / np.where(norms > 0, norms, 1.0)[:, None]

    if has_euler and has_quat:
        both = np.flatnonzero(euler_row & quat_given)
        if both.size:
            err = geodesic_angle(euler_to_quat(table.values[np.ix_(both, e_cols)], order), quats[both])
            bad = np.flatnonzero(err > EULER_QUAT_TOLERANCE_DEG)
            if bad.size:
                row = both[bad[0]]
                raise ClipReadError(
                    fname,
                    int(table.lines[row]),
                    f"Euler angles (order {order}) and quaternion disagree by {err[bad[0]]:.6g} deg "
                    f"(more than {EULER_QUAT_TOLERANCE_DEG} deg)",
                )

    # Group rows by path, tracks in order of first appearance.
    if table.paths is None:
        codes = np.zeros(n, dtype=np.int64)
        names = [""]
    else:
        # Rows usually come in runs of one path: factorize the runs, not the rows.
        heads = np.concatenate([[0], np.flatnonzero(table.paths[1:] != table.paths[:-1]) + 1])
        index: dict[str, int] = {}
        run_codes = [index.setdefault(p, len(index)) for p in table.paths[heads].tolist()]
        codes = np.repeat(np.array(run_codes, dtype=np.int64), np.diff(np.append(heads, n)))
        names = list(index)
    by_code = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[by_code], np.arange(len(names) + 1))

    tracks = []
    for k, name in enumerate(names):
        rows = by_code[bounds[k] : bounds[k + 1]]
        if rows.size == 0:
            continue
        kinds = euler_row[rows]
        if kinds.any() and not kinds.all():
            first_q = rows[np.flatnonzero(~kinds)[0]]
            raise ClipReadError(
                fname,
                int(table.lines[first_q]),
                f"track {name!r} mixes Euler rows and quaternion-only rows",
            )
        is_euler = bool(kinds[0])
        rows = rows[np.argsort(table.values[rows, t_col], kind="stable")]
        times = table.values[rows, t_col]
        if is_euler:
            vals = table.values[np.ix_(rows, e_cols)]
        else:
            vals = quats[rows]
        keep = _merge_duplicates(fname, name, times, vals, table.lines[rows], is_euler)
        times, vals = times[keep], vals[keep]
        if is_euler:
            curve = make_curve(times, vals, mode="clamped_auto")
            tracks.append(RotationTrack(name, EULER, curve, order=order))
        else:
            curve = make_curve(times, vals, mode="auto")
            tracks.append(RotationTrack(name, QUATERNION, curve))
    return tracks


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
            f"track {name!r}: time {float(times[i[first]])!r} appears again (first on line {line_a}) "
            f"with different values (differ by {diff[bad[first]]:.6g} {unit})",
        )
    keep[dup] = False
    return keep


def _estimate_frame_rate(tracks: Sequence[RotationTrack]) -> float:
    steps = [np.diff(t.times) for t in tracks if t.n_keys > 1]
    if not steps:
        return 30.0
    dt = float(np.median(np.concatenate(steps)))
    rate = 1.0 / dt
    nearest = round(rate)
    return float(nearest) if nearest >= 1 and abs(rate - nearest) <= 0.01 * nearest else rate


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
    """

    path: str
    times: np.ndarray
    euler: np.ndarray | None
    quats: np.ndarray | None
    speed: np.ndarray | None = None


def format_csv(blocks: Iterable[TrackRows], with_speed: bool = True) -> str:
    """CSV text with header ``path,time,x,y,z,qx,qy,qz,qw[,speed]`` and one row per entry of each block.

    Floats are written with ``repr`` (round-trips exactly); missing parts are empty cells.
    """
    header = WRITE_COLUMNS if with_speed else WRITE_COLUMNS[:-1]
    out = [",".join(header)]
    for b in blocks:
        n = int(np.shape(b.times)[0])
        cols: list[list] = [np.asarray(b.times, dtype=np.float64).tolist()]
        fmt = ["%r"]
        for arr, width in ((b.euler, 3), (b.quats, 4)):
            if arr is None:
                fmt.append("," * (width - 1))
            else:
                a = np.asarray(arr, dtype=np.float64).reshape(n, width)
                cols.extend(a.T.tolist())
                fmt.append(",".join(["%r"] * width))
        if with_speed:
            if b.speed is None:
                fmt.append("")
            else:
                cols.append(np.asarray(b.speed, dtype=np.float64).tolist())
                fmt.append("%r")
        prefix = _csv_cell(b.path) + ","
        row_fmt = prefix + ",".join(fmt)
        out.extend(row_fmt % row for row in zip(*cols, strict=True))
    out.append("")
    return "\n".join(out)


def _csv_cell(text: str) -> str:
    if text == "":
        return ""  # csv.writer would write '""' for a lone empty field
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([text])
    return buf.getvalue()


def track_rows(track: RotationTrack) -> TrackRows:
    """The full row set of a track: continuous Euler in the track's order (Unity's ZXY for quaternion
    tracks) along what the track plays, normalized hemisphere-continuous quaternions and the angular
    speed (deg/s) to the next key. The Euler values follow the played path, so a turn of more than
    180 deg between keys keeps its winding (``export_checks.csv_track``)."""
    from ..engine.analysis import angular_speed
    from ..engine.export_checks import csv_track

    keyed = csv_track(track)
    quats = hemisphere_continuous(key_quaternions(keyed))
    return TrackRows(track.path, keyed.times, keyed.curve.value, quats, angular_speed(keyed.times, quats))


#: Played-motion change (degrees) above which ``write_csv`` warns that the tangents were lost.
TANGENT_LOSS_WARN_DEG = 0.01


def _tangent_loss_warnings(clip: Clip, blocks: Sequence[TrackRows]) -> list[str]:
    """CSV keeps key values only; read back, the tracks get ClampedAuto tangents on the Euler columns.
    Say when what Unity plays would change by more than ``TANGENT_LOSS_WARN_DEG`` (authored tangents,
    quaternion tracks), so a round trip through CSV does not alter the motion silently."""
    from ..engine.diff import diff_tracks
    from ..engine.export_checks import has_sign_flips
    from ..engine.tangents import make_curve
    from ..engine.unwrap import unwrap_track

    lost = []
    for t, rows in zip(clip.tracks, blocks, strict=True):
        if t.n_keys < 2:
            continue
        if t.kind == QUATERNION and has_sign_flips(t):
            # Sign flips (a defect) get hemisphere-continuous rows on purpose; measure only what the
            # tangents change.
            t = unwrap_track(t)
        back = RotationTrack(
            t.path, EULER, make_curve(rows.times, rows.euler, mode="clamped_auto"), order=t.order
        )
        err = diff_tracks(t, back).max_error
        if err > TANGENT_LOSS_WARN_DEG:
            lost.append((err, t.path))
    if not lost:
        return []
    err, where = max(lost)
    return [
        f"{len(lost)} track(s) lose their tangents in CSV (key values only): read back, the played "
        f"motion differs by up to {err:.3g} deg ({where or '(root)'}); use .anim to keep it, or "
        "`sample` to bake it densely"
    ]


def _order_warnings(clip: Clip, keys_only: bool) -> list[str]:
    """CSV files carry no rotation order: say which order a reader must be given (``--order``)."""
    orders = {t.order for t in clip.tracks if t.kind == EULER or not keys_only}
    if not orders or orders == {UNITY_ORDER}:
        return []
    if len(orders) == 1:
        (order,) = orders
        return [f"Euler columns are in rotation order {order!r}: read this file with --order {order}"]
    listed = ", ".join(sorted(orders))
    return [
        f"tracks use different rotation orders ({listed}) but a CSV is read with one --order: "
        "convert them first (clean --to-order zxy) to read this file back faithfully"
    ]


def write_csv(
    clip: Clip,
    path: str | os.PathLike,
    protect: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    keys_only: bool = False,
) -> list[str]:
    """Write ``clip`` as CSV, atomically. Returns warnings: non-rotation curves that were dropped, and
    Euler orders other than Unity's ZXY (the file does not record them; see ``read_csv(order=)``).

    CSV holds key values only: tangents are not written (a reader recomputes them).

    Args:
        clip: the clip; every rotation track becomes rows (``clip.other_tracks`` are not written).
        path: the output file.
        protect: path(s) that must not be overwritten (the input); raises :class:`ClipWriteError`.
        keys_only: write each track's keys as stored, in its own kind only (Euler tracks: ``x,y,z``;
            quaternion tracks: ``qx..qw`` untouched, hemisphere flips included), no ``speed``.
            Reads back to the same kinds and values; used for authored sample files.
    """
    if keys_only:
        blocks = [
            TrackRows(t.path, t.times, t.curve.value, None)
            if t.kind == EULER
            else TrackRows(t.path, t.times, None, t.curve.value)
            for t in clip.tracks
        ]
        text = format_csv(blocks, with_speed=False)
    else:
        blocks = [track_rows(t) for t in clip.tracks]
        text = format_csv(blocks, with_speed=True)
    atomic_write_text(path, text, protect=protect)
    warnings = _order_warnings(clip, keys_only)
    if not keys_only:
        warnings.extend(_tangent_loss_warnings(clip, blocks))
    if clip.other_tracks:
        warnings.append(
            f"{len(clip.other_tracks)} non-rotation curve(s) not written (CSV holds rotation tracks only)"
        )
    return warnings
