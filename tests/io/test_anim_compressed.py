"""Legacy compressed clips (m_Compressed: 1, m_CompressedRotationCurves), issue 8 section 4.

The test encodes its own clip with a small encoder that follows Unity's PackedIntVector /
PackedQuatVector / PackedFloatVector layout (CompressedAnimationCurve::CompressQuatCurve): times as
hundredth-of-a-second deltas, quaternions in 32 bits (3 flag bits, 9/10/10-bit components), slopes
quantized over [start, start + range] with 6 bits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from curveeditor.engine.rotations import euler_to_quat, geodesic_angle
from curveeditor.io import read_clip, write_clip
from curveeditor.io.errors import ClipReadError
from tests.conftest import corpus_files


def pack_bits(values, bit_size: int) -> str:
    bits = []
    for v in values:
        bits += [(int(v) >> b) & 1 for b in range(bit_size)]
    bits += [0] * (-len(bits) % 8)
    data = np.packbits(np.array(bits, dtype=np.uint8), bitorder="little") if bits else np.zeros(0, np.uint8)
    return data.tobytes().hex()


def pack_ints(values) -> tuple[str, int]:
    top = max(values) if len(values) else 0
    bit_size = int(np.ceil(np.log2(top + 1))) if top else 0
    return pack_bits(values, bit_size), bit_size


def pack_quats(q: np.ndarray) -> str:
    bits = []
    for x in q:
        a = np.abs(x)
        om = int(np.argmax(a))  # Unity keeps the first of equal maxima; argmax does too
        flags = om | (4 if x[om] < 0 else 0)
        bits += [(flags >> b) & 1 for b in range(3)]
        for j in range(4):
            if j == om:
                continue
            size = 9 if (om + 1) % 4 == j else 10
            scaled = min(max((x[j] + 1) * 0.5, 0.0), 1.0)
            v = int(np.float32(scaled) * ((1 << size) - 1))
            bits += [(v >> b) & 1 for b in range(size)]
    return np.packbits(np.array(bits, dtype=np.uint8), bitorder="little").tobytes().hex()


def pack_floats(values, bit_size: int = 6) -> tuple[str, float, float]:
    values = np.asarray(values, dtype=np.float32)
    lo, hi = float(values.min()), float(values.max())
    rng = hi - lo
    scaled = np.clip((values - lo) / rng, 0, 1) if rng else np.zeros_like(values)
    ints = (scaled * ((1 << bit_size) - 1)).astype(np.int64)
    return pack_bits(ints, bit_size), rng, lo


def compressed_clip_text(tracks: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> str:
    """An sv3 (Unity 4) clip whose rotations live in m_CompressedRotationCurves only."""
    items = []
    for path, (t, q, slopes) in tracks.items():
        hundredths = np.rint(np.asarray(t) * 100).astype(np.int64)
        deltas = np.diff(np.concatenate([[0], hundredths]))
        tdata, tbits = pack_ints(deltas.tolist())
        sdata, srange, sstart = pack_floats(slopes.reshape(-1))
        items.append(
            f"  - m_Path: {path}\n"
            f"    m_Times:\n      m_NumItems: {len(t)}\n      m_Data: {tdata}\n      m_BitSize: {tbits}\n"
            f"    m_Values:\n      m_NumItems: {len(t)}\n      m_Data: {pack_quats(q)}\n"
            f"    m_Slopes:\n      m_NumItems: {slopes.size}\n      m_Range: {srange!r}\n"
            f"      m_Start: {sstart!r}\n      m_Data: {sdata}\n      m_BitSize: 6\n"
            "    m_PreInfinity: 2\n    m_PostInfinity: 2\n"
        )
    return (
        "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!74 &7400000\nAnimationClip:\n"
        "  serializedVersion: 3\n  m_ObjectHideFlags: 0\n  m_PrefabParentObject: {fileID: 0}\n"
        "  m_PrefabInternal: {fileID: 0}\n  m_Name: Take 001\n  m_AnimationType: 1\n  m_Compressed: 1\n"
        "  m_RotationCurves: []\n  m_CompressedRotationCurves:\n"
        + "".join(items)
        + "  m_PositionCurves: []\n"
        "  m_ScaleCurves: []\n  m_FloatCurves: []\n  m_SampleRate: 30\n  m_WrapMode: 0\n"
        "  m_Bounds:\n    m_Center: {x: 0, y: 0, z: 0}\n    m_Extent: {x: 0, y: 0, z: 0}\n"
        "  m_MuscleClipInfo:\n    m_StartTime: 0\n    m_StopTime: 0\n  m_EditorCurves: []\n"
        "  m_EulerEditorCurves: []\n  m_Events: []\n"
    )


def source_tracks():
    t = np.arange(31) / 30.0
    e = np.stack([40 * np.sin(2 * t), 170 * t, 15 * np.cos(3 * t)], axis=1)
    q = euler_to_quat(e, "zxy")
    slopes = np.gradient(q, t, axis=0)
    t2 = np.arange(8) / 10.0
    q2 = euler_to_quat(np.stack([t2 * 0, t2 * 90, t2 * 0], axis=1), "zxy")
    s2 = np.concatenate([np.gradient(q2, t2, axis=0), np.gradient(q2, t2, axis=0) * 1.1])  # in != out
    return {"Box001_frag_002": (t, q, slopes), "Root/Lid": (t2, q2, s2)}


@pytest.fixture
def compressed_file(tmp_path):
    p = tmp_path / "Take_001.anim"
    p.write_text(compressed_clip_text(source_tracks()))
    return p


def test_compressed_curves_are_decoded_into_quaternion_tracks(compressed_file):
    clip = read_clip(compressed_file)
    src = source_tracks()
    assert [t.path for t in clip.tracks] == list(src)
    for tr in clip.tracks:
        t, q, slopes = src[tr.path]
        assert tr.kind == "quaternion" and tr.n_keys == len(t)
        assert np.allclose(tr.times, np.rint(t * 100) / 100, atol=1e-6)
        # 9/10-bit components (truncated, as Unity packs them): within a degree of the source.
        assert geodesic_angle(tr.curve.value, q).max() < 1.0
        assert np.abs(tr.curve.in_slope - slopes[: len(t)]).max() <= (slopes.max() - slopes.min()) / 63 + 1e-6
    lid = clip.track("Root/Lid")
    assert not np.array_equal(lid.curve.in_slope, lid.curve.out_slope)  # 8N slopes: separate in/out


def test_inspect_counts_the_decoded_tracks(compressed_file):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "inspect", "--json", str(compressed_file)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    tracks = out["tracks"] if isinstance(out, dict) else out
    assert len(tracks) == 2


def test_an_unchanged_compressed_clip_is_written_byte_identical(compressed_file, tmp_path):
    # Issue 20: `convert Take_001.anim out.anim` rewrote the unchanged legacy clip uncompressed
    # (39 kB -> 78 kB, with a warning). An unchanged clip stays byte-identical, packed curves included.
    clip = read_clip(compressed_file)
    out = tmp_path / "out.anim"
    warnings = write_clip(clip, out)
    assert out.read_bytes() == compressed_file.read_bytes()
    assert not [w for w in warnings if "compressed" in w]
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    cli_out = tmp_path / "cli.anim"
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "convert", str(compressed_file), str(cli_out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert cli_out.read_bytes() == compressed_file.read_bytes()


def test_only_the_edited_compressed_curve_is_rewritten(compressed_file, tmp_path):
    from dataclasses import replace

    clip = read_clip(compressed_file)
    lid = clip.track("Root/Lid")
    v = np.array(lid.curve.value)
    v[3] = [0.0, 0.0, 0.0, 1.0]
    edited = clip.with_track(replace(lid, curve=lid.curve.with_keys(value=v)))
    out = tmp_path / "edited.anim"
    warnings = write_clip(edited, out)
    text = out.read_text()
    source = compressed_file.read_text()
    # The untouched curve's packed entry is kept verbatim, the flag with it ...
    box = source[source.index("  - m_Path: Box001_frag_002\n") : source.index("  - m_Path: Root/Lid\n")]
    assert box in text and "m_Compressed: 1\n" in text and "m_Path: Root/Lid" not in text
    said = [w for w in warnings if "compressed" in w]
    assert len(said) == 1 and said[0].startswith("1 edited compressed")
    assert "the other 1 stay compressed" in said[0]
    back = read_clip(out)
    assert back.track("Box001_frag_002").curve.equals(clip.track("Box001_frag_002").curve)
    # ... and the edited one is ordinary keys playing the edit.
    assert back.track("Root/Lid").meta.get("list") != "m_CompressedRotationCurves"
    assert np.allclose(back.track("Root/Lid").curve.value[3], [0, 0, 0, 1], atol=1e-6)
    # Every curve edited: nothing packed is left, the flag says so.
    box_t = clip.track("Box001_frag_002")
    vb = np.array(box_t.curve.value)
    vb[0] = [0.0, 0.0, 0.0, 1.0]
    both = edited.with_track(replace(box_t, curve=box_t.curve.with_keys(value=vb)))
    write_clip(both, tmp_path / "both.anim")
    text = (tmp_path / "both.anim").read_text()
    assert "m_Compressed: 0\n" in text and "m_CompressedRotationCurves: []\n" in text
    assert text.count("  - curve:\n") == 2


def test_an_edited_compressed_track_is_exported(compressed_file, tmp_path):
    from dataclasses import replace

    clip = read_clip(compressed_file)
    tr = clip.tracks[0]
    v = np.array(tr.curve.value)
    v[5] = [0.0, 0.0, 0.0, 1.0]
    clip = clip.with_track(replace(tr, curve=tr.curve.with_keys(value=v)))
    out = tmp_path / "edited.anim"
    write_clip(clip, out)
    back = read_clip(out)
    assert np.allclose(back.track(tr.path).curve.value[5], [0, 0, 0, 1], atol=1e-6)


def _corrupt(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    "what,edit,reason,field",
    [
        (
            "bit count",
            lambda s: _corrupt(s, "      m_BitSize: 6\n", "      m_BitSize: 7\n"),
            "bytes",
            "m_Data",
        ),
        (
            "item count",
            lambda s: _corrupt(s, "m_NumItems: 31\n      m_Data: ", "m_NumItems: 30\n      m_Data: "),
            "",
            "",
        ),
        (
            "hex",
            lambda s: s.replace(
                "    m_Values:\n      m_NumItems: 31\n      m_Data: ",
                "    m_Values:\n      m_NumItems: 31\n      m_Data: zz",
                1,
            ),
            "hex",
            "m_Data",
        ),
        (
            "slope count",
            lambda s: _corrupt(s, "m_NumItems: 124\n", "m_NumItems: 125\n"),
            "slope values",
            "m_NumItems",
        ),
        (
            "bit size range",
            lambda s: _corrupt(s, "      m_BitSize: 6\n", "      m_BitSize: 40\n"),
            "0..32",
            "m_BitSize",
        ),
    ],
)
def test_inconsistent_packed_data_is_a_one_line_error_with_file_and_line(tmp_path, what, edit, reason, field):
    text = edit(compressed_clip_text(source_tracks()))
    p = tmp_path / "bad.anim"
    p.write_text(text)
    with pytest.raises(ClipReadError) as info:
        read_clip(p)
    err = info.value
    assert err.path == str(p) and err.line is not None and "\n" not in str(err)
    assert reason in err.reason, err.reason
    assert "compressed rotation curve" in err.reason
    if field:
        assert field in text.splitlines()[err.line - 1]


ANIMS = [p for p in corpus_files("anim", "*.anim") if b"m_Compressed: 1" in p.read_bytes()]


@pytest.mark.skipif(not ANIMS, reason="no corpus clip with m_Compressed: 1")
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:50])
def test_corpus_compressed_clips_decode(path):
    clip = read_clip(path)
    assert clip.tracks and all(t.kind == "quaternion" for t in clip.tracks)
