"""CSV robustness (issue 11): what the writer writes always reads back; what the reader refuses,
the writer refuses first with the same reason. Each test is named after the cause the fuzzer found."""

from __future__ import annotations

import os
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import Clip, RotationTrack, key_quaternions, played
from curveeditor.engine.rotations import geodesic_angle
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip
from curveeditor.io.bvh import read_bvh
from curveeditor.io.csv_io import MAX_PATH_CHARS, TrackRows, format_csv, read_csv, write_csv
from curveeditor.io.errors import ClipReadError, ClipWriteError

T = np.array([0.0, 0.5, 1.0])
E = np.array([[10.0, 20.0, 30.0], [15.0, -25.0, 35.5], [0.25, 1e-7, 359.0]])


def _clip(*paths: str, order: str = "zxy") -> Clip:
    return Clip("c", 2.0, [RotationTrack(p, "euler", make_curve(T, E), order=order) for p in paths])


def _read_error(path, **kw) -> ClipReadError:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy RuntimeWarnings must not print before the error
        with pytest.raises(ClipReadError) as info:
            read_csv(path, **kw)
    return info.value


def _write_error(clip, path, **kw) -> ClipWriteError:
    with pytest.raises(ClipWriteError) as info:
        write_csv(clip, path, **kw)
    assert not os.path.exists(path), "nothing may be written"
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("name", ["Armature/Hips 100%", "Bone%r", "A%%B", "%s%d%(x)s", "%"])
def test_percent_in_a_track_path_is_written_exactly(tmp_path, name):
    # `row_fmt % row` raised ValueError ('unsupported format character'), TypeError (Bone%r), or
    # wrote 'A%B' for 'A%%B'.
    out = tmp_path / "o.csv"
    write_csv(_clip(name, "plain"), out)
    assert out.read_text().splitlines()[1].startswith(name + ",0.0,10.0,20.0,30.0,")
    back = read_csv(out)
    assert [t.path for t in back.tracks] == [name, "plain"]
    assert back.track(name).curve.equals(make_curve(T, E))
    write_csv(_clip(name), out, keys_only=True)
    assert read_csv(out).tracks[0].path == name


@pytest.mark.parametrize("name", ["Hips\nSpine", "Hips\r\nSpine", "a\rb", 'say "hi"', "a,b", '"'])
def test_a_path_with_a_quoted_newline_reads_back_identically(tmp_path, name):
    # csv.writer(lineterminator="") wrote line breaks unquoted: a file our reader then rejected.
    out = tmp_path / "o.csv"
    write_csv(_clip(name, "after"), out)
    back = read_csv(out)
    assert [t.path for t in back.tracks] == [name, "after"]
    for t in back.tracks:
        assert t.curve.equals(make_curve(T, E))
    # Error lines stay right after a quoted line break (the careful parser counts physical lines).
    text = out.read_text()
    out.write_text(text + "after,2.0,1,abc,3,,,,,\n")
    err = _read_error(out)
    assert err.line == len(text.splitlines()) + 1 and "'abc' is not a number" in err.reason


@pytest.mark.parametrize(
    "name, reason",
    [
        (" Hips", "starts or ends with white space"),
        ("Hips\t", "starts or ends with white space"),
        ("Hips\x00", "NUL character"),
        ("Hips\udc80", "not valid Unicode"),
    ],
)
def test_a_path_csv_cannot_carry_is_refused_before_writing(tmp_path, name, reason):
    # ' Hips' was written and read back as 'Hips' (cells are stripped); NUL made the csv module fail.
    err = _write_error(_clip(name), tmp_path / "o.csv")
    assert reason in err.reason and err.path == str(tmp_path / "o.csv")


def test_several_rotation_orders_in_one_clip_are_encoded_and_read_back(tmp_path):
    # BVH joints with different orders -> CSV was warned, written, then refused by our own reader
    # ("Euler angles (order zxy) and quaternion disagree by 0.26 deg").
    text = """HIERARCHY
ROOT Hips
{
OFFSET 0 0 0
CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
JOINT Spine
{
OFFSET 0 1 0
CHANNELS 3 Xrotation Yrotation Zrotation
JOINT Head
{
OFFSET 0 1 0
CHANNELS 3 Yrotation Xrotation Zrotation
End Site
{
OFFSET 0 1 0
}
}
}
}
MOTION
Frames: 3
Frame Time: 0.033333
0 0 0 10 20 30 40 50 60 -70 80 -90
1 2 3 11 21 31 41 51 61 -71 81 -91
1 2 3 12 22 32 42 52 62 -72 82 -92
"""
    src = tmp_path / "multi.bvh"
    src.write_text(text)
    clip = read_bvh(src)
    assert {t.order for t in clip.tracks} == {"ZXY", "XYZ", "YXZ"}
    out = tmp_path / "multi.csv"
    warnings_ = write_csv(clip, out)
    assert not any("order" in w for w in warnings_)
    back = read_clip(out)
    for a in clip.tracks:
        b = back.track(a.path)
        assert b.order == a.order and b.curve.equals(a.curve)
    # keys-only files carry the order too.
    write_csv(clip, out, keys_only=True)
    assert [t.order for t in read_csv(out).tracks] == [t.order for t in clip.tracks]


def test_mixing_euler_and_quaternion_rows_for_one_path_is_a_one_line_error(tmp_path):
    p = tmp_path / "mix.csv"
    p.write_text("path,time,x,y,z,qx,qy,qz,qw\nA,0,10,0,0,,,,\nB,0,,,,0,0,0,1\nA,1,,,,0,0,0,1\n")
    err = _read_error(p)
    assert err.line == 4
    assert "track 'A' mixes Euler rows (line 2) and quaternion-only rows (line 4)" in err.reason


def test_an_order_column_must_be_one_order_per_track(tmp_path):
    p = tmp_path / "o.csv"
    p.write_text("path,order,time,x,y,z\nA,xyz,0,1,2,3\nA,XYZ,1,1,2,3\n")
    err = _read_error(p)
    assert err.line == 3 and "mixes rotation orders 'xyz' and 'XYZ'" in err.reason
    p.write_text("path,order,time,x,y,z\nA,xyz,0,1,2,3\nA,xxy,1,1,2,3\n")
    err = _read_error(p)
    assert err.line == 3 and "column 'order': 'xxy' is not a rotation order" in err.reason
    p.write_text("path,order,time,x,y,z\nA,,0,1,2,3\nB,YXZ,0,1,2,3\n")
    back = read_csv(p, order="xzy")
    assert [t.order for t in back.tracks] == ["xzy", "YXZ"]  # an empty cell takes the argument


def test_a_long_path_cell_is_refused_with_bounded_memory(tmp_path):
    # A 100 KB path cell took 791 MB (numpy's fixed-width strings: longest cell x rows), 1 MB -> 4 GB.
    p = tmp_path / "long.csv"
    rows = [f"A,{i / 30!r},1,2,3" for i in range(200)]
    rows[150] = "B" * 100_000 + ",5.0,1,2,3"
    p.write_text("path,time,x,y,z\n" + "\n".join(rows) + "\n")
    tracemalloc.start()
    err = _read_error(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (
        err.line == 152
        and f"track path of 100,000 characters (CSV paths hold at most {MAX_PATH_CHARS:,})" in (err.reason)
    )
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB"
    # Quoted, through the careful parser: the same reason.
    p.write_text('path,time,x,y,z\nA,0,1,2,3\n"' + "C," * 3000 + '",1,1,2,3\n')
    err = _read_error(p)
    assert err.line == 3 and "track path of 6,000 characters" in err.reason


def test_the_writer_refuses_a_path_the_reader_would_refuse_with_the_same_reason(tmp_path):
    # A 50 MB path name produced a 450 MB CSV the reader then refused.
    name = "J" * (MAX_PATH_CHARS + 1)
    err = _write_error(_clip(name), tmp_path / "o.csv")
    assert err.reason.startswith(f"track path of {MAX_PATH_CHARS + 1:,} characters (CSV paths hold at most")
    # Exactly the limit is fine both ways.
    ok = "J" * MAX_PATH_CHARS
    write_csv(_clip(ok), tmp_path / "o.csv")
    assert read_csv(tmp_path / "o.csv").tracks[0].path == ok
    # `sample` goes through format_csv: refused the same way, naming the output.
    with pytest.raises(ClipWriteError, match=r"^out\.csv: track path of"):
        format_csv([TrackRows(name, T, E, None)], fname="out.csv")


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("time,x,y,z\n0,1e308,0,0\n1,-1e308,0,0\n", 2, "column 'x': 1e+308 is beyond +-1e+07 deg"),
        ("time,x,y,z\n0,0,0,0\n1e300,1,0,0\n", 3, "column 'time': 1e+300 is beyond +-1e+09 s"),
        ("time,x,y,z\n0,0,0,0\n1e-300,90,0,0\n", 3, "closer than 1e-09 s"),
    ],
)
def test_values_near_float64_limits_are_a_typed_error_without_numpy_warnings(tmp_path, text, line, reason):
    p = tmp_path / "big.csv"
    p.write_text(text)
    err = _read_error(p)
    assert err.line == line and reason in err.reason, str(err)


def test_huge_quaternion_components_normalize_without_overflow(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text("time,qx,qy,qz,qw\n0,0,0,0,1e300\n1,1e300,0,0,1e300\n2,0,0,0,1e-3\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (t,) = read_csv(p).tracks
    np.testing.assert_allclose(t.curve.value, [[0, 0, 0, 1], [2**-0.5, 0, 0, 2**-0.5], [0, 0, 0, 1]])


def test_the_writer_refuses_values_the_reader_refuses(tmp_path):
    big = Clip("c", 2.0, [RotationTrack("A", "euler", make_curve(T, E * 1e6))])
    err = _write_error(big, tmp_path / "o.csv")
    assert "Euler value 3.59e+08 deg is beyond +-1e+07 deg" in err.reason


def _old_format_csv(blocks, with_speed=True) -> str:
    """The writer as it was (a ``%`` format per row), for byte-identity on ordinary values; the cells
    derived from a row's Euler angles (its quaternion, the speed) with 9 significant digits."""
    header = ["path", "time", "x", "y", "z", "qx", "qy", "qz", "qw", "speed"][: 10 if with_speed else 9]
    out = [",".join(header)]
    for b in blocks:
        n = len(b.times)
        cols = [np.asarray(b.times, dtype=np.float64).tolist()]
        fmt = ["%r"]
        for arr, width in ((b.euler, 3), (b.quats, 4)):
            if arr is None:
                fmt.append("," * (width - 1))
            else:
                cols.extend(np.asarray(arr, dtype=np.float64).reshape(n, width).T.tolist())
                derived = arr is b.quats and b.euler is not None
                fmt.append(",".join(["%.9g" if derived else "%r"] * width))
        if with_speed:
            if b.speed is None:
                fmt.append("")
            else:
                cols.append(np.asarray(b.speed, dtype=np.float64).tolist())
                fmt.append("%.9g")
        row_fmt = b.path + "," + ",".join(fmt)
        out.extend(row_fmt % row for row in zip(*cols, strict=True))
    out.append("")
    return "\n".join(out)


def test_block_formatting_is_byte_identical_to_the_per_row_writer():
    rng = np.random.default_rng(7)
    n = 20_000  # more than one formatting chunk
    t = np.arange(n) / 120.0
    vals = rng.normal(0, 100, (n, 3)) * rng.choice([1e-9, 1e-5, 1.0, 1e4], (n, 3))
    vals[0] = [0.0, -0.0, 1.0]
    q = rng.normal(size=(n, 4))
    blocks = [
        TrackRows("Hips", t, vals, q, np.abs(vals[:, 0]) * 1e14),
        TrackRows("Hips/Spine", t, None, q, None),
        TrackRows("Hand", t[:5], vals[:5], None, np.full(5, np.inf)),
        TrackRows("Empty", t[:0], None, None, None),
    ]
    assert format_csv(blocks) == _old_format_csv(blocks)
    assert format_csv(blocks, with_speed=False) == _old_format_csv(blocks, with_speed=False)


@settings(deadline=None, max_examples=150)
@given(st.text(min_size=0, max_size=12), st.sampled_from(["zxy", "xyz", "ZXY", "YZX"]))
def test_any_path_either_reads_back_identically_or_is_refused(tmp_path_factory, name, order):
    """Never a file our reader then rejects or reads differently."""
    out = tmp_path_factory.mktemp("p") / "o.csv"
    clip = _clip(name, order=order)
    try:
        write_csv(clip, out)
    except ClipWriteError:
        assert not out.exists()
        return
    (back,) = read_csv(out).tracks
    assert back.path == name and back.order == order
    assert back.curve.equals(clip.tracks[0].curve)
    np.testing.assert_allclose(geodesic_angle(played(back, T), key_quaternions(clip.tracks[0])), 0, atol=1e-9)


def test_fast_parser_keeps_line_numbers_across_blank_lines_and_crlf(tmp_path):
    p = tmp_path / "b.csv"
    p.write_bytes(b"path,time,x,y,z\r\nA,0,1,2,3\r\n\r\nA,1,1,2,3\r\n\r\n\r\nA,2,1e300,2,3\r\n")
    err = _read_error(p)
    assert err.line == 7 and "1e+300 is beyond" in err.reason
    p.write_bytes(b"path,time,x,y,z\nA,0,1,2,3\n\nA,1,4,5,6\n")
    np.testing.assert_array_equal(read_csv(p).track("A").curve.value, [[1, 2, 3], [4, 5, 6]])


def test_rows_of_many_tracks_at_once_equal_the_rows_of_each_track():
    # clip_rows batches tracks sharing times and order (10,000 BVH joints); it must equal track_rows.
    from curveeditor.io.csv_io import clip_rows, track_rows

    rng = np.random.default_rng(3)
    t = np.arange(50) / 30.0
    tracks = []
    for k in range(6):
        v = np.cumsum(rng.normal(0, 40, (50, 3)), axis=0)  # big steps: hemisphere flips inside and at seams
        tracks.append(RotationTrack(f"J{k}", "euler", make_curve(t, v), order="ZXY" if k % 2 else "zxy"))
    curve = tracks[0].curve
    for k in range(6, 9):  # share one time array object, as the BVH reader's tracks do
        tracks.append(RotationTrack(f"S{k}", "euler", curve.with_keys(value=curve.value + 170.0 * k)))
    tracks.append(RotationTrack("one", "euler", make_curve(t[:1], E[:1])))
    tracks.append(RotationTrack("q", "quaternion", make_curve(t[:3], np.eye(4)[:3], mode="auto")))
    for a, b in zip(clip_rows(tracks), [track_rows(x) for x in tracks], strict=True):
        assert (a.path, a.order) == (b.path, b.order)
        for f in ("times", "euler", "quats", "speed"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f"{a.path} {f}")


def test_tracks_sharing_key_times_get_the_curves_each_would_get_alone(tmp_path):
    # read_csv builds one curve per (kind, key times) group (20,000 two-key tracks took ~10 s at one
    # make_curve per track); each track's curve must be what make_curve gives it alone.
    rng = np.random.default_rng(5)
    rows = ["path,time,x,y,z,qx,qy,qz,qw"]
    expect = {}
    for k in range(40):
        n = 3 + k % 3  # three groups of shared times, Euler and quaternion tracks in each
        t = np.arange(n) * 0.25
        if k % 2:
            v = rng.normal(0, 90, (n, 3))
            rows += [
                f"E{k},{ti!r},{a!r},{b!r},{c!r},,,,"
                for ti, (a, b, c) in zip(t.tolist(), v.tolist(), strict=True)
            ]
            expect[f"E{k}"] = make_curve(t, v, mode="clamped_auto")
        else:
            q = rng.normal(size=(n, 4))
            rows += [
                f"Q{k},{ti!r},,,,{a!r},{b!r},{c!r},{d!r}"
                for ti, (a, b, c, d) in zip(t.tolist(), q.tolist(), strict=True)
            ]
            expect[f"Q{k}"] = make_curve(t, q / np.linalg.norm(q, axis=1)[:, None], mode="auto")
    p = tmp_path / "shared.csv"
    p.write_text("\n".join(rows) + "\n")
    back = read_csv(p)
    assert [t.path for t in back.tracks] == list(expect)
    for t in back.tracks:
        assert t.kind == ("euler" if t.path[0] == "E" else "quaternion")
        for f in ("time", "value", "in_slope", "out_slope", "in_weight", "out_weight", "tangent_mode"):
            np.testing.assert_allclose(getattr(t.curve, f), getattr(expect[t.path], f), rtol=0, atol=1e-12)
