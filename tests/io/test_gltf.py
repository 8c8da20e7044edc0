"""glTF 2.0 in and out (issue 21): samplers, the frame conversion, round trips read back, the Khronos
validator on every written file, bad input."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from curveeditor.cli import main as cli_main
from curveeditor.engine.clip import QUATERNION, Clip, RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve, evaluate, stepped_intervals
from curveeditor.engine.resample import slerp
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle
from curveeditor.engine.skeleton import pose, skeleton_from_clip
from curveeditor.engine.tangents import make_curve
from curveeditor.io import ClipReadError, ClipWriteError, read_clip, write_checked, write_clip
from curveeditor.io.gltf import viewer_played
from tests.io.gltf_validator import assert_valid

REPO = Path(__file__).resolve().parents[2]
CHAIN_BVH = REPO / "tests" / "data" / "fbx" / "chain.bvh"


def _gltf(tmp_path: Path, samplers: list[tuple], nodes=None, animations=None, name="hand.gltf", glb=False):
    """A glTF file from ``samplers``: ``(node, path, interpolation, times (N,), output (M, C))``."""
    blob = bytearray()
    views, accessors = [], []

    def add(arr, kind, bounds=False):
        a = np.ascontiguousarray(arr, dtype="<f4")
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": a.nbytes})
        blob.extend(a.tobytes())
        acc = {"bufferView": len(views) - 1, "componentType": 5126, "count": int(a.shape[0]), "type": kind}
        if bounds:
            acc["min"] = [float(a.min())]
            acc["max"] = [float(a.max())]
        accessors.append(acc)
        return len(accessors) - 1

    anims = animations or [samplers]
    out_anims = []
    for k, group in enumerate(anims):
        chans, samps = [], []
        for node, path, interp, times, out in group:
            i = add(np.asarray(times).reshape(-1, 1), "SCALAR", True)
            o = add(out, "VEC4" if path == "rotation" else "VEC3")
            samps.append({"input": i, "output": o, "interpolation": interp})
            chans.append({"sampler": len(samps) - 1, "target": {"node": node, "path": path}})
        out_anims.append({"name": f"take{k}", "channels": chans, "samplers": samps})
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes
        or [{"name": "Root", "children": [1]}, {"name": "Child", "translation": [1.0, 2.0, 3.0]}],
        "animations": out_anims,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob)}],
    }
    path = tmp_path / name
    if glb:
        text = json.dumps(doc).encode()
        text += b" " * (-len(text) % 4)
        body = bytes(blob) + b"\x00" * (-len(blob) % 4)
        chunks = (
            struct.pack("<II", len(text), 0x4E4F534A)
            + text
            + struct.pack("<II", len(body), 0x004E4942)
            + body
        )
        path.write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks)
    else:
        doc["buffers"][0]["uri"] = (
            "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()
        )
        path.write_text(json.dumps(doc))
    return path


def _qy(deg):
    h = np.radians(np.asarray(deg, dtype=np.float64)) / 2
    return np.stack([np.zeros_like(h), np.sin(h), np.zeros_like(h), np.cos(h)], axis=-1)


# ------------------------------------------------------------------------------------------- reading


def test_linear_rotation_is_mirrored_and_plays_slerp(tmp_path):
    times = np.array([0.0, 0.5, 1.0])
    q = _qy([0.0, 60.0, 170.0])
    path = _gltf(tmp_path, [(1, "rotation", "LINEAR", times, q)], glb=True)
    clip = read_clip(path)
    (t,) = clip.tracks
    assert t.path == "Root/Child" and t.kind == QUATERNION
    assert t.meta["gltf_interpolation"] == "LINEAR" and t.meta["frame_poses"]
    # X mirror into Unity's frame: a turn about +Y becomes a turn about -Y.
    want = q * np.array([1.0, -1.0, -1.0, 1.0])
    assert np.max(geodesic_angle(key_quaternions(t), want)) < 1e-4
    grid = np.linspace(0, 1, 41)
    assert np.max(geodesic_angle(viewer_played(t, grid), slerp(times, want, grid))) < 1e-4
    # keys evenly spaced: poses at frames (2 fps here), the Slerp between them
    assert clip.frame_rate == 2.0


def test_step_and_cubicspline_samplers(tmp_path):
    times = np.array([0.0, 1.0, 2.0])
    q = _qy([0.0, 90.0, 10.0])
    a = np.array([[0, 0.1, 0, 0], [0, 0.5, 0, -0.2], [0, -0.3, 0, 0.1]])  # in tangents
    b = np.array([[0, 0.7, 0, 0], [0, -0.4, 0, 0.1], [0, 0.2, 0, 0]])  # out tangents
    cubic = np.stack([a, q, b], axis=1).reshape(-1, 4)
    pos = np.array([[0, 0, 0], [1, 2, 3], [4, 5, 6]], dtype=float)
    path = _gltf(
        tmp_path,
        [
            (0, "rotation", "STEP", times, q),
            (1, "rotation", "CUBICSPLINE", times, cubic),
            (1, "translation", "STEP", times, pos),
        ],
    )
    clip = read_clip(path)
    step, cub = clip.track("Root"), clip.track("Root/Child")
    assert np.all(stepped_intervals(step.curve))
    assert np.max(geodesic_angle(played(step, [0.5, 1.5]), _qy([0.0, 90.0]) * [1, -1, -1, 1])) < 1e-4
    # CUBICSPLINE: the spec's Hermite on the components (tangents per second), normalized = Unity's model
    s = 0.3
    h = (2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2)
    p = h[0] * q[0] + h[1] * b[0] + h[2] * q[1] + h[3] * a[1]
    p = p / np.linalg.norm(p) * [1, -1, -1, 1]
    assert geodesic_angle(played(cub, [0.3]), p[None])[0] < 1e-4
    (pos_track,) = clip.other_tracks
    assert pos_track.attribute == "m_LocalPosition" and pos_track.kind == "position"
    np.testing.assert_allclose(evaluate(pos_track.curve, [1.5])[0], [-1, 2, 3], atol=1e-6)
    # skeleton rest offsets mirrored too
    joints = clip.meta["joints"]
    assert joints["paths"] == ["Root", "Root/Child"] and joints["parents"] == [-1, 0]
    np.testing.assert_allclose(joints["offsets"][1], [-1.0, 2.0, 3.0])


def test_takes_by_index_and_name(tmp_path):
    times = np.array([0.0, 1.0])
    path = _gltf(
        tmp_path,
        [],
        animations=[
            [(0, "rotation", "LINEAR", times, _qy([0, 10]))],
            [(1, "rotation", "LINEAR", times, _qy([0, 20]))],
        ],
    )
    assert read_clip(path).meta["takes"] == ["take0", "take1"]
    from curveeditor.io import take_names

    assert take_names(path) == ["take0", "take1"]  # (listed without reading an animation)
    assert read_clip(path).tracks[0].path == "Root"
    assert read_clip(path, take=1).tracks[0].path == "Root/Child"
    assert read_clip(path, take="take1").meta["take"] == "take1"
    with pytest.raises(ClipReadError, match="no animation named 'nope'"):
        read_clip(path, take="nope")
    with pytest.raises(ClipReadError, match="no animation 5"):
        read_clip(path, take=5)


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "empty file"),
        (b"not json at all", "not a glTF file"),
        (b'{"nodes": []}', "no 'asset'"),
        (b'{"asset": {"version": "1.0"}}', "only glTF 2.0"),
        (b'{"asset": {"version": "2.0"}, "nodes": [{"name": "a"}]}', "no animations"),
        (b"glTF\x02\x00\x00\x00\xff\xff\x00\x00", "truncated GLB"),
        (
            b'{"asset": {"version": "2.0"}, "nodes": [{}], "animations": [{"channels": [{"sampler": 0, '
            b'"target": {"node": 0, "path": "rotation"}}], "samplers": [{"input": 7, "output": 0}]}]}',
            "no accessor 7",
        ),
        (
            b'{"asset": {"version": "2.0"}, "buffers": [{"uri": "missing.bin", "byteLength": 8}],'
            b' "nodes": [{}], "animations": [{"channels": [], "samplers": []}]}',
            "cannot read 'missing.bin'",
        ),
    ],
)
def test_bad_input_is_one_line_error(tmp_path, content, reason, capsys):
    bad = tmp_path / "bad.gltf"
    bad.write_bytes(content)
    with pytest.raises(ClipReadError, match=reason) as e:
        read_clip(bad)
    assert "\n" not in str(e.value) and str(e.value).startswith(str(bad))
    out = tmp_path / "out.anim"
    assert cli_main(["convert", str(bad), str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("curveeditor-cli: error:")


def test_accessor_past_its_buffer(tmp_path):
    path = _gltf(tmp_path, [(1, "rotation", "LINEAR", np.array([0.0, 1.0]), _qy([0, 10]))])
    doc = json.loads(path.read_text())
    doc["accessors"][1]["count"] = 50
    path.write_text(json.dumps(doc))
    with pytest.raises(ClipReadError, match="reads past the end"):
        read_clip(path)


# ------------------------------------------------------------------------------------------- writing


@pytest.mark.parametrize("ext", [".glb", ".gltf"])
def test_bvh_frames_written_linear_at_the_frames(tmp_path, ext):
    bvh = read_clip(CHAIN_BVH)
    out = tmp_path / f"chain{ext}"
    check = write_checked(bvh, out)
    assert_valid(out)
    back = read_clip(out)
    assert back.frame_rate == bvh.frame_rate == 30.0
    for t in bvh.tracks:
        w = back.track(t.path)
        assert w.meta["gltf_interpolation"] == "LINEAR" and w.n_keys == t.n_keys
        np.testing.assert_allclose(w.times, t.times, atol=0)  # back on the frame grid exactly
        assert float(np.max(geodesic_angle(key_quaternions(w), key_quaternions(t)))) < 1e-3
        c = check.track(t.path)
        assert c.writer.frames and c.keys_added == 0 and c.writer.max_error < 1e-3
    # the root's translation kept, mirrored back and forth
    (pos,) = [o for o in back.other_tracks if o.attribute == "m_LocalPosition"]
    (src,) = [o for o in bvh.other_tracks if o.attribute == "m_LocalPosition"]
    np.testing.assert_allclose(pos.curve.value, src.curve.value, atol=1e-4)
    # the node hierarchy carries the BVH skeleton: same joint positions at every frame
    sb, _ = skeleton_from_clip(bvh)
    sg, why = skeleton_from_clip(back)
    assert why == ""
    times = bvh.tracks[0].times
    pb, pg = pose(sb, bvh, times), pose(sg, back, times)
    for j, p in enumerate(sb.paths):
        assert np.max(np.abs(pb.positions[:, j] - pg.positions[:, sg.index(p)])) < 1e-3


def test_curves_written_as_cubicspline_checked_as_a_viewer_plays(tmp_path, samples_dir):
    clip = read_clip(samples_dir / "demo.anim")
    out = tmp_path / "demo.glb"
    check = write_checked(clip, out)
    assert_valid(out)
    back = read_clip(out)
    for t in clip.tracks:
        w = back.track(t.path)
        assert w.meta["gltf_interpolation"] == "CUBICSPLINE"
        grid = np.linspace(t.curve.start, t.curve.end, 4001)
        err = geodesic_angle(viewer_played(w, grid), played(t, grid))
        assert float(err.max()) <= 0.012  # the writer's tolerance plus float32
        assert check.track(t.path).writer.max_error <= 0.012
    assert any("Euler track(s) written as quaternion keys" in w for w in check.warnings)
    assert any("float / object-reference curve(s) not written" in w for w in check.warnings)
    # glTF -> glTF: the same bytes (quaternion curves written as they are, no keys added)
    again = tmp_path / "again.glb"
    check2 = write_checked(back, again)
    assert check2.keys_added == 0
    assert again.read_bytes() == out.read_bytes()


def test_step_and_root_track_round_trip(tmp_path):
    times = np.array([0.0, 0.5, 1.5])
    q = euler_to_quat(np.array([[0, 0, 0], [0, 90, 0], [30, 10, 0]], dtype=float))
    stepped = RotationTrack("", QUATERNION, make_curve(times, q, mode="constant"))
    child = RotationTrack("Arm", QUATERNION, make_curve(times, q, mode="auto"))
    clip = Clip("steps", 30.0, (stepped, child))
    out = tmp_path / "steps.gltf"
    write_clip(clip, out)
    assert_valid(out)
    back = read_clip(out)
    assert [t.path for t in back.tracks] == ["", "Arm"]
    assert back.track("").meta["gltf_interpolation"] == "STEP"
    grid = np.linspace(0, 1.5, 301)
    for t in clip.tracks:
        assert float(np.max(geodesic_angle(viewer_played(back.track(t.path), grid), played(t, grid)))) < 1e-3


def test_mixed_stepped_track_is_refused_nothing_written(tmp_path):
    times = np.array([0.0, 1.0, 2.0])
    q = euler_to_quat(np.array([[0, 0, 0], [0, 90, 0], [30, 10, 0]], dtype=float))
    c = make_curve(times, q, mode="auto")
    outs = c.out_slope.copy()
    outs[0] = np.inf
    clip = Clip("mixed", 30.0, (RotationTrack("A", QUATERNION, c.with_keys(out_slope=outs)),))
    out = tmp_path / "mixed.glb"
    with pytest.raises(ClipWriteError, match="mixes stepped and smooth"):
        write_clip(clip, out)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_negative_times_refused(tmp_path):
    times = np.array([-1.0, 1.0])
    clip = Clip(
        "neg", 30.0, (RotationTrack("A", QUATERNION, make_curve(times, euler_to_quat(np.zeros((2, 3))))),)
    )
    with pytest.raises(ClipWriteError, match="cannot be negative"):
        write_clip(clip, tmp_path / "neg.glb")


def test_cli_convert_and_clean_write_gltf(tmp_path, samples_dir, capsys):
    out = tmp_path / "demo.gltf"
    assert cli_main(["convert", str(samples_dir / "demo.csv"), str(out)]) == 0
    text = capsys.readouterr().out
    assert "written file read back" in text
    assert_valid(out)
    cleaned = tmp_path / "clean.glb"
    assert cli_main(["clean", str(out), "--unwrap", "--reduce", "0.5", "-o", str(cleaned)]) == 0
    assert_valid(cleaned)
    assert read_clip(cleaned).tracks


def test_validator_installed_in_ci(tmp_path, samples_dir):
    """The validator itself on one file of each kind (skipped only where Node.js or the npm package is
    missing; ``packaging/bootstrap.sh test`` installs both, so CI runs it)."""
    import os

    if os.environ.get("CI"):
        from tests.io.gltf_validator import available

        assert available(), "CI must have Node.js and gltf-validator (packaging/bootstrap.sh test)"
    for src, name in ((samples_dir / "demo.anim", "a.glb"), (CHAIN_BVH, "b.gltf")):
        out = tmp_path / name
        write_clip(read_clip(src), out)
        report = assert_valid(out, required=True)
        assert report["numErrors"] == 0 and report["numWarnings"] == 0


def test_help_names_the_formats(capsys):
    try:
        cli_main(["--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    # the lists come from io.formats' tables: .fbx is read, never written
    reads, writes = text.split("convert between formats by extension (reads ")[1].split("; writes ")
    writes = writes.split(" turn ")[0]
    assert {".fbx", ".glb", ".gltf"} <= set(reads.replace(",", " ").split())
    assert ".glb" in writes and ".gltf" in writes and ".fbx" not in writes
    assert "FBX (read) and glTF" in text


def test_frame_rate_kept_through_extras(tmp_path):
    times = np.array([0.0, 0.1, 0.35])  # uneven keys: no rate from the spacing
    q = euler_to_quat(np.array([[0, 0, 0], [0, 20, 0], [0, 40, 0]], dtype=float))
    clip = Clip("r", 24.0, (RotationTrack("A", QUATERNION, make_curve(times, q, mode="linear")),))
    out = tmp_path / "r.glb"
    write_clip(clip, out)
    assert read_clip(out).frame_rate == 24.0
    doc_path = _gltf(tmp_path, [(0, "rotation", "LINEAR", times, q)])
    assert read_clip(doc_path).frame_rate == 30.0  # no extras, uneven keys: Unity's default


def test_curve_unit_helpers_agree():
    # CUBICSPLINE tangents are per second: the engine's Hermite with the same slopes is the same curve.
    t = np.array([0.0, 2.0])
    c = Curve.make(t, np.array([[0.0], [1.0]]), np.array([[0.0], [3.0]]), np.array([[2.0], [0.0]]))
    s = 0.25
    want = (s**3 - 2 * s**2 + s) * 2.0 * 2.0 + (-2 * s**3 + 3 * s**2) + (s**3 - s**2) * 2.0 * 3.0
    assert abs(evaluate(c, [0.5])[0, 0] - want) < 1e-12


def test_written_cubicspline_is_the_spec_formula_on_the_file(tmp_path, samples_dir):
    """An independent reading of the written file: the glTF spec's CUBICSPLINE formula applied to the
    accessors' raw float32 numbers (pygltflib, no engine code), X-mirrored into Unity's frame, plays
    what Unity plays of the clip within the writer's tolerance."""
    import pygltflib

    clip = read_clip(samples_dir / "demo.anim")
    out = tmp_path / "demo.glb"
    write_clip(clip, out)
    g = pygltflib.GLTF2().load(str(out))
    blob = g.binary_blob()

    def acc(i):
        a = g.accessors[i]
        v = g.bufferViews[a.bufferView]
        w = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[a.type]
        return np.frombuffer(blob, "<f4", a.count * w, v.byteOffset + (a.byteOffset or 0)).reshape(a.count, w)

    anim = g.animations[0]
    by_name = {n.name: i for i, n in enumerate(g.nodes)}
    checked = 0
    for t in clip.tracks:
        node = by_name[t.path.rsplit("/", 1)[-1]]
        (ch,) = [c for c in anim.channels if c.target.node == node and c.target.path == "rotation"]
        s = anim.samplers[ch.sampler]
        assert s.interpolation == "CUBICSPLINE"
        times = acc(s.input)[:, 0].astype(float)
        a, v, b = np.moveaxis(acc(s.output).astype(float).reshape(len(times), 3, 4), 1, 0)
        grid = np.linspace(times[0], times[-1], 3001)
        k = np.clip(np.searchsorted(times, grid, "right") - 1, 0, len(times) - 2)
        td = (times[k + 1] - times[k])[:, None]
        u = ((grid - times[k]) / td[:, 0])[:, None]
        p = (
            (2 * u**3 - 3 * u**2 + 1) * v[k]
            + td * (u**3 - 2 * u**2 + u) * b[k]
            + (-2 * u**3 + 3 * u**2) * v[k + 1]
            + td * (u**3 - u**2) * a[k + 1]
        )
        p = p / np.linalg.norm(p, axis=1)[:, None] * [1, -1, -1, 1]
        assert float(np.max(geodesic_angle(p, played(t, grid)))) <= 0.012, t.path
        checked += 1
    assert checked == len(clip.tracks) == 6
