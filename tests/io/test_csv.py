"""CSV reader and writer: columns by name, sorting, duplicates, exact error lines, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import Clip, RotationTrack, played
from curveeditor.engine.curves import TangentMode, tangent_mode_bits
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, hemisphere_continuous
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, write_clip
from curveeditor.io.csv_io import WRITE_COLUMNS, read_csv, write_csv
from curveeditor.io.errors import ClipReadError, ClipWriteError


def _write(tmp_path, text: str, name: str = "clip.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _error(path, **kw) -> ClipReadError:
    with pytest.raises(ClipReadError) as info:
        read_csv(path, **kw)
    return info.value


# ------------------------------------------------------------------------------------------ reading


def test_columns_by_name_any_order_and_extra_columns(tmp_path):
    p = _write(tmp_path, "Z,note,Time,y,x\n3,hello,0.5,2,1\n6,bye,0,5,4\n")
    clip = read_csv(p)
    (t,) = clip.tracks
    assert t.path == "" and t.kind == "euler" and t.order == "zxy"
    np.testing.assert_array_equal(t.times, [0.0, 0.5])
    np.testing.assert_array_equal(t.curve.value, [[4, 5, 6], [1, 2, 3]])
    assert clip.name == "clip" and clip.meta["format"] == "csv"


def test_unsorted_rows_and_paths_in_first_appearance_order(tmp_path):
    p = _write(
        tmp_path,
        "path,time,x,y,z\nB,0.2,0,20,0\nA,0.1,1,0,0\nB,0.0,0,0,0\nA,0.0,0,0,0\nB,0.1,0,10,0\n",
    )
    clip = read_csv(p)
    assert [t.path for t in clip.tracks] == ["B", "A"]
    b = clip.track("B")
    np.testing.assert_array_equal(b.times, [0.0, 0.1, 0.2])
    np.testing.assert_array_equal(b.curve.value[:, 1], [0, 10, 20])
    # Euler keys get ClampedAuto tangents (mode 136): the inner key of a steady run gets its slope.
    assert np.all(
        b.curve.tangent_mode == tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, 0)
    )
    assert b.curve.out_slope[1, 1] == pytest.approx(100.0)
    assert clip.frame_rate == 10.0


def test_euler_order_option(tmp_path):
    p = _write(tmp_path, "time,x,y,z\n0,10,20,30\n1,40,50,60\n")
    clip = read_csv(p, order="XYZ")
    assert clip.tracks[0].order == "XYZ"
    q = played(clip.tracks[0], [0.0])
    np.testing.assert_allclose(geodesic_angle(q, euler_to_quat([10, 20, 30], "XYZ")), 0, atol=1e-9)
    assert "rotation order" in str(_error(p, order="abc"))


def test_quaternion_columns(tmp_path):
    # Second key stored on the other hemisphere: kept as stored (the inspector must see the flip).
    p = _write(tmp_path, "time,qx,qy,qz,qw\n0,0,0,0,2\n0.5,0,-0.3826834323650898,0,-0.9238795325112867\n")
    (t,) = read_csv(p).tracks
    assert t.kind == "quaternion"
    np.testing.assert_allclose(t.curve.value[0], [0, 0, 0, 1])  # normalized
    assert t.curve.value[1, 3] < 0
    assert np.all(t.curve.tangent_mode == tangent_mode_bits(TangentMode.AUTO, TangentMode.AUTO, 0))


def test_both_column_sets_euler_wins_and_must_agree(tmp_path):
    q = euler_to_quat([30.0, 370.0, 0.0])
    qs = ",".join(repr(float(v)) for v in q)
    p = _write(tmp_path, f"time,x,y,z,qx,qy,qz,qw\n0,30,370,0,{qs}\n")
    (t,) = read_csv(p).tracks
    assert t.kind == "euler"
    np.testing.assert_array_equal(t.curve.value, [[30, 370, 0]])  # the winding survives
    # 0.02 deg off on line 3 -> error naming line 3 and the angle.
    q_off = euler_to_quat([30.0, 10.02, 0.0])
    qo = ",".join(repr(float(v)) for v in q_off)
    p = _write(tmp_path, f"time,x,y,z,qx,qy,qz,qw\n0,30,370,0,{qs}\n1,30,10,0,{qo}\n")
    e = _error(p)
    assert e.line == 3 and "disagree by 0.02" in e.reason and str(e).startswith(f"{p}:3: ")
    # Within 0.01 deg is fine.
    q_ok = euler_to_quat([30.0, 10.005, 0.0])
    qk = ",".join(repr(float(v)) for v in q_ok)
    p = _write(tmp_path, f"time,x,y,z,qx,qy,qz,qw\n0,30,370,0,{qs}\n1,30,10,0,{qk}\n")
    assert read_csv(p).tracks[0].n_keys == 2


def test_duplicate_times_merge_when_equal_else_error(tmp_path):
    p = _write(tmp_path, "path,time,x,y,z\na,0,1,2,3\na,0.5,4,5,6\na,0,1,2,3\n")
    (t,) = read_csv(p).tracks
    np.testing.assert_array_equal(t.times, [0.0, 0.5])
    p = _write(tmp_path, "path,time,x,y,z\na,0,1,2,3\nb,0,9,9,9\na,0.5,4,5,6\na,0,1,2,3.5\n")
    e = _error(p)
    assert e.line == 5
    assert "time 0.0 appears again (first on line 2)" in e.reason and "'a'" in e.reason
    # Quaternion duplicates: q and -q are the same rotation.
    p = _write(tmp_path, "time,qx,qy,qz,qw\n0,0,0.6,0,0.8\n0,0,-0.6,0,-0.8\n1,0,0,0,1\n")
    assert read_csv(p).tracks[0].n_keys == 2


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("time,x,y,z\n0,1,2,3\n0.1,nan,2,3\n", 3, "NaN in column 'x'"),
        ("time,x,y,z\n0,1,2,3\n0.1,1,inf,3\n", 3, "infinite value in column 'y'"),
        ("time,x,y,z\n0,1,2,3\n\n0.1,1,abc,3\n", 4, "column 'y': 'abc' is not a number"),
        ("time,x,y,z\n0,1,2,3\n0.1,1,,3\n", 3, "missing value in column 'y'"),
        ("time,x,y,z\n0,1,2,3\n0.1,1,2\n", 3, "row has 3 fields, the header has 4"),
        ("time,x,y\n0,1,2\n", 1, "missing column 'z'"),
        ("path,x,y,z\na,1,2,3\n", 1, "missing column 'time'"),
        ("time,a,b\n0,1,2\n", 1, "missing rotation columns"),
        ("time,x,y,z,x\n0,1,2,3,4\n", 1, "column 'x' appears twice"),
        ("time,qx,qy,qz,qw\n0,0,0,0,0\n", 2, "zero quaternion"),
        ("\n\ntime,x,y,z\n0,1,2,3\n1,NaN,2,3\n", 5, "NaN in column 'x'"),
        ("time,x,y,z\r\n0,1,2,3\r\n\r\n1,2,3,nan\r\n", 4, "NaN in column 'z'"),
        ("path,time,x,y,z,qx,qy,qz,qw\na,0,1,2,3,,,,\na,1,,,,0,0,0,1\n", 3, "mixes Euler rows"),
    ],
)
def test_bad_input_names_file_line_and_reason(tmp_path, text, line, reason):
    p = _write(tmp_path, text)
    e = _error(p)
    assert e.line == line and reason in e.reason
    assert str(e) == f"{p}:{line}: {e.reason}" and "\n" not in str(e)


def test_file_level_errors(tmp_path):
    e = _error(tmp_path / "missing.csv")
    assert e.line is None and "no such file" in str(e)
    assert "empty file" in str(_error(_write(tmp_path, "\n\n")))
    (tmp_path / "latin1.csv").write_bytes(b"time,x,y,z\n0,1,2,3\xff\n")
    assert "not UTF-8" in str(_error(tmp_path / "latin1.csv"))
    # Header only: a clip with no tracks, not an error.
    assert read_csv(_write(tmp_path, "time,x,y,z\n")).tracks == ()


def test_quoted_paths_and_bom(tmp_path):
    p = tmp_path / "q.csv"
    p.write_bytes('\ufeffpath,time,x,y,z\n"Arm, left",0,1,2,3\n"Arm, left",1,1,2,4\n'.encode())
    (t,) = read_csv(p).tracks
    assert t.path == "Arm, left" and t.n_keys == 2


def test_dispatch_by_extension(tmp_path):
    p = _write(tmp_path, "time,x,y,z\n0,1,2,3\n", name="UPPER.CSV")
    assert read_clip(p).tracks[0].n_keys == 1
    with pytest.raises(ClipReadError, match=r"cannot read '\.txt' files"):
        read_clip(_write(tmp_path, "x", name="clip.txt"))
    with pytest.raises(ClipWriteError, match=r"cannot write '\.txt' files"):
        write_clip(read_clip(p), tmp_path / "out.txt")
    # .bvh is written for clips with a BVH skeleton only (io.bvh_writer): a CSV clip has none.
    with pytest.raises(ClipWriteError, match=r"no BVH skeleton"):
        write_clip(read_clip(p), tmp_path / "out.bvh")


def test_missing_reader_is_a_clear_read_error(tmp_path, monkeypatch):
    import curveeditor.io as cio

    monkeypatch.setitem(cio.READ_FORMATS, ".anim", ("curveeditor.io.not_built_yet", "read_anim"))
    clip = _write(tmp_path, "x", name="clip.anim")
    with pytest.raises(ClipReadError, match=r"reading \.anim files is not available in this build"):
        read_clip(clip)


# ------------------------------------------------------------------------------------------ writing


def _clip() -> Clip:
    t = np.array([0.0, 0.5, 1.0, 1.5])
    euler = RotationTrack(
        "Hips/Spine", "euler", make_curve(t, [[0, 170, 0], [10, 190, 5], [20, 370.25, 0], [0, 0, 0.1]])
    )
    q = np.array(
        [[0, 0, 0, 1], [0, -0.5, 0, -0.8660254037844386], [0, 0.7071067811865476, 0, 0.7071067811865476]]
    )
    quat = RotationTrack("Hand", "quaternion", make_curve(t[:3], q, mode="auto"))
    return Clip("c", 30.0, [euler, quat])


def test_written_columns_and_values(tmp_path):
    out = tmp_path / "out.csv"
    warnings = write_csv(_clip(), out)
    # Hand's Auto slopes were computed across its hemisphere flip: read back they are recomputed.
    assert (
        len(warnings) == 1
        and warnings[0].startswith("1 track(s) lose their curves in CSV")
        and "(Hand)" in warnings[0]
    )
    lines = out.read_text().splitlines()
    # Keys 0.5 s apart would read back as a 2 fps clip: the 30 fps is carried (issue 20).
    assert lines[0] == ",".join(WRITE_COLUMNS) + ",frame_rate"
    assert len(lines) == 1 + 4 + 3
    assert all(ln.endswith(",30.0") for ln in lines[1:])
    assert read_csv(out).frame_rate == 30.0
    rows = [ln.split(",")[:-1] for ln in lines[1:]]
    assert rows[2][:5] == ["Hips/Spine", "1.0", "20.0", "370.25", "0.0"]  # Euler keys as authored
    vals = np.array([[float(c) for c in r[1:]] for r in rows])
    # Quaternions: unit, hemisphere-continuous per track, same rotation as the Euler columns (cells
    # derived from the Euler angles carry 9 significant digits: 1e-9 per component).
    q = vals[:, 4:8]
    assert all(len(c.lstrip("-").replace(".", "").lstrip("0")) <= 9 for r in rows for c in r[5:10])
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-8)
    assert np.all(np.sum(q[1:4] * q[:3], axis=1) >= 0) and np.all(np.sum(q[5:] * q[4:6], axis=1) >= 0)
    np.testing.assert_allclose(geodesic_angle(euler_to_quat(vals[:, 1:4]), q), 0, atol=1e-6)
    # Hand (0 -> 60 -> 90 deg about y, key 2 stored on the other hemisphere): continuous Euler.
    assert np.all(np.abs(np.diff(vals[4:, 1:4], axis=0)) < 180)
    np.testing.assert_allclose(vals[4:, 2], [0.0, 60.0, 90.0], atol=1e-9)
    # Speed: geodesic step / dt to the next key, last repeats: Hand steps 60 then 30 deg in 0.5 s.
    np.testing.assert_allclose(vals[4:, 8], [120.0, 60.0, 60.0], rtol=1e-8)


def test_written_euler_is_what_the_graphs_draw_at_keys(tmp_path):
    """The Euler columns are ``display.key_euler`` (one decomposition for files and graphs)."""
    from curveeditor.engine.display import key_euler

    clip = _clip()
    out = tmp_path / "out.csv"
    write_csv(clip, out)
    rows = [ln.split(",") for ln in out.read_text().splitlines()[1:]]
    for track in clip.tracks:
        vals = np.array([[float(c) for c in r[2:5]] for r in rows if r[0] == track.path])
        np.testing.assert_array_equal(vals, key_euler(track))


def test_round_trip_values_exact(tmp_path):
    clip = _clip()
    out = tmp_path / "out.csv"
    write_csv(clip, out)
    back = read_csv(out)
    a, b = clip.track("Hips/Spine"), back.track("Hips/Spine")
    assert b.kind == "euler" and b.curve.equals(a.curve)  # same values, same ClampedAuto tangents
    # A quaternion track comes back as its continuous Euler decomposition (Euler columns win).
    h0, h1 = clip.track("Hand"), back.track("Hand")
    assert h1.kind == "euler"
    np.testing.assert_allclose(
        geodesic_angle(hemisphere_continuous(h0.curve.value), played(h1, h1.times)), 0, atol=1e-9
    )


def test_keys_only_round_trip_keeps_kinds_and_flips(tmp_path):
    clip = _clip()
    out = tmp_path / "keys.csv"
    write_csv(clip, out, keys_only=True)
    assert out.read_text().splitlines()[0] == "path,time,x,y,z,qx,qy,qz,qw"
    back = read_csv(out)
    for a in clip.tracks:
        b = back.track(a.path)
        assert b.kind == a.kind
        np.testing.assert_array_equal(b.times, a.times)
        np.testing.assert_allclose(b.curve.value, a.curve.value, rtol=0, atol=1e-15)
    assert back.track("Hand").curve.value[1, 3] < 0  # the flip is still there


def test_write_is_atomic_and_protects_input(tmp_path):
    src = _write(tmp_path, "time,x,y,z\n0,1,2,3\n")
    clip = read_clip(src)
    with pytest.raises(ClipWriteError, match="refusing to overwrite"):
        write_clip(clip, src, protect=src)
    assert src.read_text() == "time,x,y,z\n0,1,2,3\n"
    write_clip(clip, tmp_path / "o.csv", protect=src)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.csv", "o.csv"]


@settings(deadline=None, max_examples=50)
@given(
    st.lists(
        st.tuples(
            st.floats(-720, 720, allow_nan=False),
            st.floats(-720, 720, allow_nan=False),
            st.floats(-720, 720, allow_nan=False),
        ),
        min_size=1,
        max_size=12,
    ),
    st.randoms(use_true_random=False),
)
def test_round_trip_property_any_values_any_row_order(tmp_path_factory, values, rnd):
    """Any finite Euler values, rows shuffled on disk: read back sorted and bit-identical."""
    folder = tmp_path_factory.mktemp("rt")
    times = np.arange(len(values)) * 0.1
    track = RotationTrack("a", "euler", make_curve(times, np.array(values)))
    out = folder / "o.csv"
    write_csv(Clip("c", 10.0, [track]), out)
    lines = out.read_text().splitlines()
    body = lines[1:]
    rnd.shuffle(body)
    out.write_text("\n".join([lines[0], *body]) + "\n")
    back = read_csv(out).track("a")
    np.testing.assert_array_equal(back.times, times)
    np.testing.assert_array_equal(back.curve.value, np.array(values))


def test_quaternion_tangents_follow_the_motion(tmp_path):
    """Keys of a smooth swing read from CSV: what Unity plays between them stays on the true motion."""
    axis = np.array([0.3, 0.8, 0.52])
    axis /= np.linalg.norm(axis)

    def motion(t):
        half = np.deg2rad(120.0 * np.sin(1.5 * t))[:, None] / 2
        return np.hstack([np.sin(half) * axis, np.cos(half)])

    t = np.arange(0, 3.0001, 0.1)
    keys = np.column_stack([t, motion(t)]).tolist()
    rows = "\n".join(",".join(map(repr, row)) for row in keys)
    (track,) = read_csv(_write(tmp_path, "time,qx,qy,qz,qw\n" + rows + "\n")).tracks
    mid = t[:-1] + 0.05
    err = geodesic_angle(played(track, mid), motion(mid))
    # Degrees, keys 0.1 s apart on a swing of up to 180 deg/s; the end segments have one-sided slopes.
    assert err[1:-1].max() < 0.02 and err.max() < 0.25


def test_other_orders_are_written_in_an_order_column_and_read_back(tmp_path):
    # Before: a warning "read this file with --order ZXY", and a multi-order clip could not be read
    # back at all ("Euler angles (order zxy) and quaternion disagree").
    t = np.array([0.0, 1.0])
    e = np.array([[10.0, 20.0, 30.0], [40.0, -50.0, 60.0]])
    clip = Clip("c", 1.0, [RotationTrack("j", "euler", make_curve(t, e), order="ZXY")])
    out = tmp_path / "o.csv"
    assert write_csv(clip, out) == []
    lines = out.read_text().splitlines()
    assert lines[0] == "path,order,time,x,y,z,qx,qy,qz,qw,speed"
    assert lines[1].startswith("j,ZXY,0.0,10.0,20.0,30.0,")
    back = read_csv(out).track("j")
    assert back.order == "ZXY" and back.curve.equals(clip.track("j").curve)
    assert read_csv(out, order="xyz").track("j").order == "ZXY"  # the file's column wins
    mixed = clip.with_tracks([*clip.tracks, RotationTrack("k", "euler", make_curve(t, e), order="xyz")])
    assert write_csv(mixed, out) == []
    back = read_csv(out)
    assert [(b.path, b.order) for b in back.tracks] == [("j", "ZXY"), ("k", "xyz")]
    for a in mixed.tracks:
        np.testing.assert_allclose(geodesic_angle(played(back.track(a.path), t), played(a, t)), 0, atol=1e-9)


def test_oversized_file_is_refused_with_a_clear_error(tmp_path, monkeypatch):
    from curveeditor.io import ClipReadError, read_clip

    path = tmp_path / "huge.csv"
    path.write_text("time,x,y,z\n" + "0.0,1,2,3\n" * 200)
    monkeypatch.setenv("CURVEEDITOR_MAX_CLIP_BYTES", "1024")
    with pytest.raises(ClipReadError, match=r"huge.csv: file is 2\.0 KB, over the 1\.0 KB limit"):
        read_clip(path)
    monkeypatch.setenv("CURVEEDITOR_MAX_CLIP_BYTES", str(1 << 20))
    assert read_clip(path).tracks  # under the limit it reads


def test_memory_error_becomes_a_typed_error(tmp_path, monkeypatch):
    import curveeditor.io.csv_io as csv_io
    from curveeditor.io import ClipReadError, read_clip

    path = tmp_path / "a.csv"
    path.write_text("time,x,y,z\n0.0,1,2,3\n")

    def boom(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(csv_io, "read_csv", boom)
    with pytest.raises(ClipReadError, match="not enough memory"):
        read_clip(path)


def test_write_csv_carries_the_tangents_of_euler_tracks(tmp_path):
    # CSV used to keep key values only: an .anim track with authored tangents (CurveFitTest: 13 deg)
    # changed what Unity plays on the way through CSV (issue 8 warned; issue 20 carries them).
    from curveeditor.io.csv_io import TANGENT_COLS, write_csv

    times = np.array([0.0, 0.5, 1.0])
    values = np.array([[0.0, 0.0, 0.0], [0.0, 45.0, 0.0], [0.0, 90.0, 0.0]])
    smooth = make_curve(times, values, mode="clamped_auto")
    steep = smooth.with_keys(out_slope=np.full((3, 3), 400.0), in_slope=np.full((3, 3), 400.0))
    clip = Clip("c", 2.0, [RotationTrack("a", "euler", smooth), RotationTrack("b", "euler", steep)])
    warnings = write_csv(clip, tmp_path / "o.csv")
    assert warnings == []
    header = (tmp_path / "o.csv").read_text().splitlines()[0].split(",")
    assert header[-len(TANGENT_COLS) :] == list(TANGENT_COLS)
    back = read_csv(tmp_path / "o.csv")
    assert back.track("a").curve.equals(smooth)
    assert back.track("b").curve.equals(steep)


def test_checked_csv_write_warns_of_lost_tangents_from_the_read_back_figures(tmp_path, monkeypatch):
    # write_checked measures each track against its read-back curve; the CSV writer's tangent-loss
    # warning takes those figures (the same diff) instead of diffing again, and says the same. Since
    # Euler tracks carry their tangents (issue 20), the loss is a quaternion track's (read back Euler).
    from curveeditor.engine import diff as diff_mod
    from curveeditor.io import write_clip
    from curveeditor.io.csv_io import write_csv

    times = np.array([0.0, 0.5, 1.0])
    q = euler_to_quat(np.array([[0.0, 0.0, 0.0], [0.0, 80.0, 0.0], [0.0, 170.0, 30.0]]))
    steep = RotationTrack(
        "b",
        "quaternion",
        make_curve(times, q, mode="auto").with_keys(
            out_slope=np.full((3, 4), 1.5), in_slope=np.full((3, 4), 1.5)
        ),
    )
    clip = Clip("c", 2.0, [steep])
    alone = write_csv(clip, tmp_path / "alone.csv")
    calls = []
    real = diff_mod.diff_tracks
    monkeypatch.setattr(diff_mod, "diff_tracks", lambda *a, **k: calls.append(1) or real(*a, **k))
    checked = write_clip(clip, tmp_path / "checked.csv")
    assert checked == alone and len(alone) == 1 and "(b)" in alone[0]
    assert (tmp_path / "checked.csv").read_bytes() == (tmp_path / "alone.csv").read_bytes()
    assert len(calls) == 1  # the check's diff only (it was diffed a second time for the warning)
