"""BVH reader: hierarchy, per-joint orders, the X mirror into Unity's frame, exact frames, typed errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from curveeditor.engine.clip import played
from curveeditor.engine.curves import evaluate
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle
from curveeditor.engine.tangents import make_curve
from curveeditor.io.bvh import TANGENT_MODE, frame_rate_from_frame_time, read_bvh
from curveeditor.io.errors import ClipReadError
from tests.conftest import corpus_files

ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]


def _scipy_quat(order_upper: str, euler_by_axis: np.ndarray) -> np.ndarray:
    """Independent reference: scipy intrinsic Euler, angles given in the order's sequence."""
    cols = ["XYZ".index(a) for a in order_upper]
    return Rotation.from_euler(order_upper, euler_by_axis[:, cols], degrees=True).as_quat()


def _mirror_quat(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, 1.0])


@pytest.mark.parametrize("order", ORDERS + [o.lower() for o in ORDERS])
def test_euler_mirror_equals_quaternion_mirror(order):
    rng = np.random.default_rng(7)
    e = rng.uniform(-400, 400, size=(500, 3))
    ref = _mirror_quat(euler_to_quat(e, order))
    got = euler_to_quat(e * np.array([1.0, -1.0, -1.0]), order)
    assert np.max(geodesic_angle(ref, got)) < 1e-9
    # and it really is the X-mirrored matrix M R M with M = diag(-1, 1, 1)
    m = np.diag([-1.0, 1.0, 1.0])
    mats = m @ Rotation.from_quat(euler_to_quat(e, order)).as_matrix() @ m
    assert np.allclose(Rotation.from_quat(got).as_matrix(), mats, atol=1e-12)


SMALL = """HIERARCHY
ROOT Hips
{
  OFFSET 1.0 2.0 3.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Xrotation Yrotation Zrotation
    JOINT Neck {
      OFFSET 0 5 0.5
      CHANNELS 6 Zposition Yposition Xposition Yrotation Zrotation Xrotation
      End Site
      {
        OFFSET 0 4 0
      }
    }
  }
  JOINT Leg
  {
    OFFSET 3 -1 0
    CHANNELS 0
    End Site
    {
      OFFSET 0 -9 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.04
1 2 3 10 20 30 5 6 7 0.1 0.2 0.3 90 -45 170
4 5 6 -179 179 0 8 9 10 0.4 0.5 0.6 91 -46 -170
7 8 9 12 22 32 11 12 13 0.7 0.8 0.9 92 -47 175
"""


def _write(tmp_path: Path, text: str, name: str = "clip.bvh") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_small_file_structure_and_values(tmp_path):
    clip = read_bvh(_write(tmp_path, SMALL))
    assert clip.name == "clip"
    assert clip.frame_rate == pytest.approx(25.0)
    assert [t.path for t in clip.tracks] == ["Hips", "Hips/Spine", "Hips/Spine/Neck"]
    assert [t.order for t in clip.tracks] == ["ZXY", "XYZ", "YZX"]
    assert all(t.kind == "euler" for t in clip.tracks)
    times = np.array([0.0, 0.04, 0.08])
    for t in clip.tracks:
        assert np.array_equal(t.times, times)

    hips = clip.track("Hips").curve.value
    # file columns Z X Y = (10, 20, 30) -> by axis (x=20, y=30, z=10), mirrored -> (20, -30, -10)
    assert np.array_equal(hips[0], [20.0, -30.0, -10.0])
    assert np.array_equal(hips[1], [179.0, -0.0, 179.0])
    neck = clip.track("Hips/Spine/Neck").curve.value
    # Y Z X = (90, -45, 170) -> by axis (x=170, y=90, z=-45) -> (170, -90, 45)
    assert np.array_equal(neck[0], [170.0, -90.0, 45.0])

    pos = {o.path: o for o in clip.other_tracks}
    for o in clip.other_tracks:
        assert o.curve.equals(make_curve(o.times, o.curve.value, mode=TANGENT_MODE))
    assert set(pos) == {"Hips", "Hips/Spine/Neck"}
    assert all(o.attribute == "m_LocalPosition" and o.kind == "position" for o in pos.values())
    assert np.array_equal(pos["Hips"].curve.value[0], [-1.0, 2.0, 3.0])
    # Z Y X = (0.1, 0.2, 0.3) -> (x=0.3, y=0.2, z=0.1) -> (-0.3, 0.2, 0.1)
    assert np.allclose(pos["Hips/Spine/Neck"].curve.value[0], [-0.3, 0.2, 0.1])
    assert np.array_equal(pos["Hips"].times, times)

    h = clip.meta["hierarchy"]
    assert [j["name"] for j in h] == ["Hips", "Spine", "Neck", "Leg"]
    assert [j["parent"] for j in h] == [None, 0, 1, 0]
    assert h[0]["offset"] == [1.0, 2.0, 3.0]  # as in the file (unmirrored)
    assert h[2]["offset"] == [0.0, 5.0, 0.5]
    assert h[2]["channels"] == ["Zposition", "Yposition", "Xposition", "Yrotation", "Zrotation", "Xrotation"]
    assert h[3]["channels"] == [] and h[3]["end_site"] == [0.0, -9.0, 0.0]
    assert h[1]["end_site"] is None
    assert clip.meta["frame_time"] == 0.04 and clip.meta["frames"] == 3 and clip.meta["mirror"] == "x"


def test_played_at_frame_times_is_exactly_the_frames(tmp_path):
    clip = read_bvh(_write(tmp_path, SMALL))
    frames = np.loadtxt(SMALL.splitlines()[-3:])
    cols = {"Hips": [3, 4, 5], "Hips/Spine": [6, 7, 8], "Hips/Spine/Neck": [12, 13, 14]}
    for track in clip.tracks:
        t = track.times
        # the same curve make_curve builds for this track alone (the reader batches the slopes)
        assert track.curve.equals(make_curve(t, track.curve.value, mode=TANGENT_MODE))
        # the curve passes through every frame bit for bit
        assert np.array_equal(evaluate(track.curve, t), track.curve.value)
        ref = _mirror_quat(_scipy_quat(track.order, _by_axis(frames[:, cols[track.path]], track.order)))
        assert np.max(geodesic_angle(played(track, t), ref)) < 1e-9
    # clamped auto: no overshoot between frames on any channel
    dense = np.linspace(0, 0.08, 401)
    for track in clip.tracks:
        v = evaluate(track.curve, dense)
        assert np.all(v <= track.curve.value.max(axis=0) + 1e-9)
        assert np.all(v >= track.curve.value.min(axis=0) - 1e-9)


def _by_axis(listed: np.ndarray, order: str) -> np.ndarray:
    out = np.empty_like(listed)
    for k, axis in enumerate(order):
        out[:, "XYZ".index(axis)] = listed[:, k]
    return out


@pytest.mark.parametrize(
    "frame_time,rate",
    [
        (0.033333, 30.0),
        (0.0083333, 120.0),
        (0.016667, 60.0),
        (0.04, 25.0),
        (0.0333, 1 / 0.0333),
        (0.7, 1 / 0.7),
    ],
)
def test_frame_rate_snaps_printed_frame_times(frame_time, rate):
    assert frame_rate_from_frame_time(frame_time) == rate


def test_multiple_roots_and_brace_layouts(tmp_path):
    text = (
        "HIERARCHY\nROOT A {\nOFFSET 0 0 0\nCHANNELS 3 Yrotation Xrotation Zrotation\n}\n"
        "ROOT B\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n"
        "MOTION\nFrames:\t2\nFrame Time:\t.5\n1 2 3 4 5 6\n\n7 8 9 10 11 12\n\n"
    )
    clip = read_bvh(_write(tmp_path, text))
    assert [t.path for t in clip.tracks] == ["A"]
    assert clip.tracks[0].order == "YXZ"
    assert [o.path for o in clip.other_tracks] == ["B"]
    assert clip.frame_rate == 2.0
    assert np.array_equal(clip.other_tracks[0].curve.value, [[-4.0, 5.0, 6.0], [-10.0, 11.0, 12.0]])


def test_zero_frames_gives_empty_tracks(tmp_path):
    text = SMALL.split("Frames:")[0] + "Frames: 0\nFrame Time: 0.01\n"
    clip = read_bvh(_write(tmp_path, text))
    assert len(clip.tracks) == 3 and all(t.n_keys == 0 for t in clip.tracks)


def _lines(text):
    return text.splitlines()


def _replace_line(text: str, lineno: int, new: str) -> str:
    lines = _lines(text)
    lines[lineno - 1] = new
    return "\n".join(lines) + "\n"


def _n(text: str, startswith: str) -> int:
    return next(i + 1 for i, line in enumerate(_lines(text)) if line.strip().startswith(startswith))


FIRST_FRAME = _n(SMALL, "1 2 3")
BAD_CASES = {
    "truncated motion": (SMALL.rsplit("\n", 2)[0] + "\n", FIRST_FRAME + 2, "truncated motion"),
    "extra frame": (SMALL + "1 2 3 4 5 6 7 8 9 1 2 3 4 5 6\n", FIRST_FRAME + 3, "Frames says 3"),
    "short row": (_replace_line(SMALL, FIRST_FRAME + 1, "1 2 3"), FIRST_FRAME + 1, "declares 15 channels"),
    "non-numeric": (
        _replace_line(SMALL, FIRST_FRAME + 1, "4 5 6 -179 abc 0 8 9 10 0.4 0.5 0.6 91 -46 -170"),
        FIRST_FRAME + 1,
        "'abc' is not a number",
    ),
    "nan": (
        _replace_line(SMALL, FIRST_FRAME + 2, "7 8 9 12 22 nan 11 12 13 0.7 0.8 0.9 92 -47 175"),
        FIRST_FRAME + 2,
        "column 6 is not finite",
    ),
    "channel count mismatch": (
        SMALL.replace("CHANNELS 3 Xrotation Yrotation Zrotation", "CHANNELS 4 Xrotation Yrotation Zrotation"),
        _n(SMALL, "CHANNELS 3"),
        "declares 4 channels but lists 3",
    ),
    "two rotation channels": (
        SMALL.replace("CHANNELS 3 Xrotation Yrotation Zrotation", "CHANNELS 2 Xrotation Yrotation"),
        _n(SMALL, "CHANNELS 3"),
        "2 rotation channels",
    ),
    "unknown channel": (
        SMALL.replace("CHANNELS 3 Xrotation Yrotation Zrotation", "CHANNELS 3 Xrotation Yrotation Wrotation"),
        _n(SMALL, "CHANNELS 3"),
        "lists 2",
    ),
    "frames not an integer": (
        SMALL.replace("Frames: 3", "Frames: three"),
        _n(SMALL, "Frames:"),
        "not an integer",
    ),
    "frame time zero": (
        SMALL.replace("Frame Time: 0.04", "Frame Time: 0"),
        _n(SMALL, "Frame Time"),
        "positive",
    ),
    "missing frame time": (SMALL.replace("Frame Time: 0.04", "1 2 3"), _n(SMALL, "Frame Time"), "Frame Time"),
    "no motion": (SMALL.split("MOTION")[0], len(_lines(SMALL.split("MOTION")[0])), "no MOTION"),
    "truncated hierarchy": (
        "\n".join(_lines(SMALL)[:12]) + "\nMOTION\nFrames: 0\nFrame Time: 1\n",
        13,
        "ends early",
    ),
    "not bvh": ("hello world\n", 1, "expected HIERARCHY"),
    "empty": ("", None, "empty file"),
    "bad offset": (
        SMALL.replace("OFFSET 0 10 0", "OFFSET 0 x 0"),
        _n(SMALL, "OFFSET 0 10 0"),
        "not a number",
    ),
    "duplicate joint": (
        SMALL.replace("JOINT Leg", "JOINT Spine"),
        _n(SMALL, "JOINT Leg"),
        "duplicate joint path",
    ),
    "unexpected token": (
        SMALL.replace("OFFSET 3 -1 0", "OFFSET 3 -1 0 7"),
        _n(SMALL, "OFFSET 3 -1 0"),
        "unexpected",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_raises_typed_error_with_line(tmp_path, case):
    text, line, reason = BAD_CASES[case]
    path = _write(tmp_path, text)
    with pytest.raises(ClipReadError) as info:
        read_bvh(path)
    err = info.value
    assert err.path == str(path)
    assert err.line == line, str(err)
    assert reason in err.reason, str(err)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(ClipReadError, match="cannot read"):
        read_bvh(tmp_path / "nope.bvh")
    p = tmp_path / "bin.bvh"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ClipReadError):
        read_bvh(p)


# ---------------------------------------------------------------------------------------------- corpus

CORPUS = corpus_files("bvh", "*.bvh")


def _sources_column(name: str, column: str) -> str | None:
    """``SOURCES.tsv``'s ``column`` for corpus file ``name`` (None when absent)."""
    if not CORPUS:
        return None
    tsv = CORPUS[0].parent / "SOURCES.tsv"
    if not tsv.exists():
        return None
    rows = [line.split("\t") for line in tsv.read_text().splitlines()]
    if column not in rows[0]:
        return None
    col = rows[0].index(column)
    return next((r[col] for r in rows[1:] if r[0] == name and len(r) > col), None)


def _independent(path: Path):
    """Channel lists per joint (file order) and the motion matrix, parsed without the reader."""
    lines = path.read_text().splitlines()
    chans = [line.split()[2:] for line in lines if line.strip().upper().startswith("CHANNELS")]
    m = next(i for i, line in enumerate(lines) if line.strip() == "MOTION")
    motion = np.loadtxt([line for line in lines[m + 3 :] if line.strip()], ndmin=2)
    return chans, motion


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS, ids=[p.name[-40:] for p in CORPUS])
def test_corpus_file(path):
    clip = read_bvh(path)
    chans, motion = _independent(path)
    rot_joints = [c for c in chans if any("rotation" in x.lower() for x in c)]
    pos_joints = [c for c in chans if any("position" in x.lower() for x in c)]
    assert len(clip.tracks) == len(rot_joints)
    assert len(clip.other_tracks) == len(pos_joints)
    assert motion.shape[0] == clip.meta["frames"]

    want_orders = ["".join(x[0].upper() for x in c if "rotation" in x.lower()) for c in rot_joints]
    assert [t.order for t in clip.tracks] == want_orders
    spec = _sources_column(path.name, "channel_order(s)")
    if spec:
        root_spec, _, rest = spec.partition(":")
        entries = rest.split(",")
        counts = Counter()
        for e in entries:
            order, _, n = e.partition("x")
            counts[order] += int(n)
        assert Counter(t.order for t in clip.tracks) == counts
        assert clip.tracks[0].order == entries[0].partition("x")[0]

    times = np.arange(motion.shape[0]) / clip.frame_rate
    # the printed frame time (0.033333) is snapped to the rate the author meant (SOURCES fps column)
    assert abs(clip.frame_rate - 1.0 / clip.meta["frame_time"]) <= 1e-4 * clip.frame_rate
    fps = _sources_column(path.name, "fps")
    if fps:
        assert clip.frame_rate == float(fps)
    column = 0
    tracks = iter(clip.tracks)
    for c in chans:
        rot = [k for k, x in enumerate(c) if "rotation" in x.lower()]
        if rot:
            track = next(tracks)
            assert np.allclose(track.times, times, rtol=0, atol=1e-9)
            order = "".join(c[k][0].upper() for k in rot)
            listed = motion[:, [column + k for k in rot]]
            ref = _mirror_quat(Rotation.from_euler(order, listed, degrees=True).as_quat())
            err = geodesic_angle(played(track, track.times), ref)
            assert np.max(err) < 1e-6, (track.path, float(np.max(err)))
        column += len(c)
    assert column == motion.shape[1]
