"""Reading Unity .anim files: every corpus clip, every layout, checked against an independent reader.

The reference reader here is deliberately different from the production one: PyYAML's generic loader
for the structure, ``float()`` on every scalar, and its own per-segment Hermite loop.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml

from curveeditor.engine.clip import played
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, quat_normalize
from curveeditor.io.anim import read_anim
from curveeditor.io.anim.keys import modern_tangent_modes
from curveeditor.io.errors import ClipReadError
from tests.conftest import corpus_files

ANIMS = corpus_files("anim", "*.anim")
corpus = pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")


def ref_load(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^%TAG.*\n", "", text, flags=re.M)
    text = re.sub(r"^--- !u!74 &\d+", "---", text, flags=re.M)
    return yaml.load(text, Loader=yaml.CSafeLoader)["AnimationClip"]


def ref_eval(keys, t, comps):
    """Independent Hermite: per segment, per component, plain Python loops."""

    def num(v):
        return float(np.float32(float(v)))  # Unity holds key numbers as float32

    times = [num(k["time"]) for k in keys]

    def vec(v):
        return [num(v[c]) for c in comps] if isinstance(v, dict) else [num(v)]

    vals = [vec(k["value"]) for k in keys]
    ins = [vec(k["inSlope"]) for k in keys]
    outs = [vec(k["outSlope"]) for k in keys]
    out = np.zeros((len(t), len(comps)))
    for j, x in enumerate(t):
        if x <= times[0] or len(keys) == 1:
            out[j] = vals[0]
            continue
        if x >= times[-1]:
            out[j] = vals[-1]
            continue
        i = max(i for i in range(len(times)) if times[i] <= x)
        dt = times[i + 1] - times[i]
        s = (x - times[i]) / dt
        for c in range(len(comps)):
            m0, m1 = outs[i][c], ins[i + 1][c]
            if not (np.isfinite(m0) and np.isfinite(m1)):
                out[j, c] = vals[i][c]
                continue
            h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
            h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
            out[j, c] = h00 * vals[i][c] + h10 * dt * m0 + h01 * vals[i + 1][c] + h11 * dt * m1
    return out


@corpus
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:60])
def test_rotations_match_reference_reader(path):
    clip = read_anim(path)
    ref = ref_load(path)
    seen = 0
    for lname, comps in (("m_EulerCurves", "xyz"), ("m_RotationCurves", "xyzw")):
        for item in ref.get(lname) or []:
            keys = item["curve"]["m_Curve"] or []
            p = item["path"] or ""
            track = clip.track(str(p))
            assert track.n_keys == len(keys)
            if not keys:
                continue
            t0, t1 = float(keys[0]["time"]), float(keys[-1]["time"])
            grid = np.linspace(t0, t1, 97)
            v = ref_eval(keys, grid, comps)
            q_ref = euler_to_quat(v, "zxy") if lname == "m_EulerCurves" else quat_normalize(v)
            err = geodesic_angle(q_ref, played(track, grid))
            assert err.max() < 1e-6, (p, err.max())
            seen += 1
    assert seen == sum(1 for t in clip.tracks if t.n_keys)
    # Every other curve is listed read-only with its keys.
    lists = ("m_PositionCurves", "m_ScaleCurves", "m_FloatCurves", "m_EditorCurves", "m_EulerEditorCurves")
    n_other = sum(len(ref.get(k) or []) for k in lists + ("m_PPtrCurves",))
    n_listed = sum(1 for o in clip.other_tracks if o.kind in ("position", "scale", "float", "editor", "pptr"))
    assert n_listed == n_other
    assert clip.frame_rate == float(ref["m_SampleRate"])
    # PyYAML resolves "m_Name: 0000000001" to the int 1; we keep names as strings.
    assert clip.name == str(ref["m_Name"]) or (clip.name == "0000000001" and ref["m_Name"] == 1)


@corpus
def test_known_corpus_facts():
    by = {p.name: p for p in ANIMS}

    def get(part):
        return read_anim(next(p for n, p in by.items() if part in n))

    cam = get("Camera_Rot")
    (t,) = cam.tracks
    assert (t.kind, t.order, t.n_keys, t.path) == ("euler", "zxy", 3, "")
    # The editor curve localEulerAnglesRaw.y carries 0/34/0, x and z 34: per-component modes.
    assert t.curve.tangent_mode[:, 0].tolist() == [34, 34, 34]
    assert t.curve.tangent_mode[:, 1].tolist() == [0, 34, 0]
    loaded = get("LoadedAnimationanim")
    assert len(loaded.tracks) == 52 and all(t.kind == "quaternion" for t in loaded.tracks)
    ship = get("SpaceShipAnim")
    # Old (pre-5.3) 2-bit tangentMode 10 = Smooth/Smooth is Auto/Auto (34) in the modern encoding.
    float_curves = [o for o in ship.other_tracks if o.attribute.startswith("localEulerAnglesBaked")]
    assert float_curves and all((o.curve.tangent_mode == 34).all() for o in float_curves)
    assert ship.tracks[0].curve.time[1] == pytest.approx(0.0166666675)
    fish = get("CurveFitTest")
    ev = [o for o in fish.other_tracks if o.kind == "events"]
    assert ev and ev[0].times.tolist() == pytest.approx([0.16666667, 0.5])
    assert "type: 3}" in ev[0].meta["events"][0]["objectReferenceParameter"]
    const = get("ConstantTangents")
    pos = [o for o in const.other_tracks if o.kind == "position"][0]
    assert np.isinf(pos.curve.in_slope).all()
    sprite = get("New_Animation")
    pp = [o for o in sprite.other_tracks if o.kind == "pptr"][0]
    assert pp.times.shape == (41,) and pp.curve is None


def test_tangent_mode_layouts():
    raw = np.array([10, 31, 0, -842150451, 136, 103, 69, 1000])
    old = modern_tangent_modes(raw[:4], None)
    assert old.tolist() == [34, 1 | (3 << 1) | (3 << 5), 0, 0]
    new = modern_tangent_modes(raw[4:], 3)
    assert new.tolist() == [136, 103, 69, 0]


HEADER = "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!74 &7400000\nAnimationClip:\n"


def sv4_clip(
    rot_keys: str, extra_float: str = "  m_FloatCurves: []\n", compressed="  m_CompressedRotationCurves: []\n"
) -> str:
    return (
        HEADER
        + "  m_ObjectHideFlags: 0\n  m_PrefabParentObject: {fileID: 0}\n  m_PrefabInternal: {fileID: 0}\n"
        + "  m_Name: Rotation\n  serializedVersion: 4\n  m_AnimationType: 2\n  m_Compressed: 0\n"
        + "  m_UseHighQualityCurve: 1\n  m_RotationCurves:\n  - curve:\n"
        + "      serializedVersion: 2\n      m_Curve:\n"
        + rot_keys
        + "      m_PreInfinity: 2\n      m_PostInfinity: 2\n    path: Cube\n"
        + compressed
        + "  m_PositionCurves: []\n  m_ScaleCurves: []\n"
        + extra_float
        + "  m_SampleRate: 60\n  m_WrapMode: 0\n  m_Bounds:\n    m_Center: {x: 0, y: 0, z: 0}\n"
        + "    m_Extent: {x: 0, y: 0, z: 0}\n  m_ClipBindingConstant:\n    genericBindings: []\n"
        + "    pptrCurveMapping: []\n  m_AnimationClipSettings:\n    m_StartTime: 0\n    m_StopTime: 1\n"
        + "  m_EditorCurves: []\n  m_EulerEditorCurves: []\n  m_Events: []\n"
    )


OLD_KEYS = (
    "      - time: 0\n        value: {x: 0, y: 0, z: 0, w: 1}\n        inSlope: {x: 0, y: 0, z: 0, w: 0}\n"
    "        outSlope: {x: 0, y: Infinity, z: 0, w: 0}\n        tangentMode: -842150451\n"
    "      - time: .5\n        value: {x: 0, y: -.707106054, z: 0, w: .707107484}\n"
    "        inSlope: {x: 0, y: 0, z: 0, w: 0}\n        outSlope: {x: 0, y: 0, z: 0, w: 3e-45}\n"
    "        tangentMode: 10\n"
    "      - time: 1\n        value: {x: 0, y: -1, z: 0,\n          w: 0}\n"
    "        inSlope: {x: 0, y: 0, z: 0, w: 0}\n        outSlope: {x: 0, y: 0, z: 0, w: 0}\n"
    "        tangentMode: 31\n"
)


def test_sv4_layout_garbage_modes_spellings_wrapped(tmp_path):
    p = tmp_path / "Rotation.anim"
    p.write_text(sv4_clip(OLD_KEYS))
    clip = read_anim(p)
    (t,) = clip.tracks
    assert t.kind == "quaternion" and t.path == "Cube"
    assert t.curve.time.tolist() == [0, 0.5, 1]
    assert t.curve.value[1, 1] == pytest.approx(-0.707106054)
    assert t.curve.value[2].tolist() == [0, -1, 0, 0]  # wrapped flow mapping
    assert np.isinf(t.curve.out_slope[0, 1])
    assert t.curve.out_slope[1, 3] == pytest.approx(3e-45, rel=1e-3)
    assert t.curve.tangent_mode[:, 0].tolist() == [0, 34, 1 | (3 << 1) | (3 << 5)]  # garbage -> Free
    # The stepped first segment holds the first key.
    assert geodesic_angle(played(t, [0.4])[0], np.array([0, 0, 0, 1.0])) < 1e-9


def test_truncated_compressed_rotation_curves_are_a_typed_error(tmp_path):
    """Packed data shorter than its item counts (here the Take_001 hex cut short) used to be carried
    through undecoded ('0 rotation tracks ... problems: none'); it is now a one-line error at the
    line of the inconsistent field (tests/io/test_anim_compressed.py covers decoding)."""
    comp = (
        "  m_CompressedRotationCurves:\n  - m_Path: Box001_frag_002\n    m_Times:\n      m_NumItems: 31\n"
        "      m_Data: d0aa75eac68d22c551154715\n      m_BitSize: 3\n"
        "    m_Values:\n      m_NumItems: 31\n"
        "      m_Data: 9feddf7fb837e0258057e62d58072c39\n    m_Slopes:\n      m_NumItems: 124\n"
        "      m_Range: 10.685486\n      m_Start: -5.139527\n"
        "      m_Data: def67961f69260f6\n      m_BitSize: 6\n"
        "    m_PreInfinity: 2\n    m_PostInfinity: 2\n"
    )
    p = tmp_path / "c.anim"
    p.write_text(sv4_clip(OLD_KEYS, compressed=comp))
    with pytest.raises(ClipReadError) as info:
        read_anim(p)
    err = info.value
    line = p.read_text().splitlines()[err.line - 1]
    assert "m_Data: 9feddf7f" in line and "31 quaternions need 124" in err.reason


def humanoid_entry(attr: str, values, times, path="", sv7=False) -> str:
    head = "  - serializedVersion: 2\n    curve:\n" if sv7 else "  - curve:\n"
    s = head + "      serializedVersion: 2\n      m_Curve:\n"
    for t, v in zip(times, values, strict=True):
        s += (
            f"      - serializedVersion: 3\n        time: {t}\n        value: {v}\n        inSlope: 0\n"
            "        outSlope: 0\n        tangentMode: 136\n        weightedMode: 0\n"
            "        inWeight: 0.33333334\n        outWeight: 0.33333334\n"
        )
    s += "      m_PreInfinity: 2\n      m_PostInfinity: 2\n      m_RotationOrder: 4\n"
    s += f"    attribute: {attr}\n    path: {path}\n    classID: 95\n    script: {{fileID: 0}}\n"
    return s + ("    flags: 0\n" if sv7 else "")


def test_humanoid_quartets_become_tracks(tmp_path):
    q = np.array([[0, 0, 0, 1], [0, 0.38268343, 0, 0.9238795]])
    floats = "".join(humanoid_entry(f"RootQ.{c}", q[:, i], [0, 1]) for i, c in enumerate("xyzw"))
    # A quartet on a non-empty path with different key times per component.
    floats += humanoid_entry("LeftHandQ.x", [0, 0], [0, 1], "Rig")
    floats += humanoid_entry("LeftHandQ.y", [0, 0, 0], [0, 0.5, 1], "Rig")
    floats += humanoid_entry("LeftHandQ.z", [0, 0], [0, 1], "Rig")
    floats += humanoid_entry("LeftHandQ.w", [1, 1], [0, 1], "Rig")
    floats += humanoid_entry("Spine Front-Back", [0.1, 0.2], [0, 1])
    p = tmp_path / "h.anim"
    text = sv4_clip(OLD_KEYS, extra_float="  m_FloatCurves:\n" + floats)
    p.write_text(text)
    clip = read_anim(p)
    names = [t.path for t in clip.tracks]
    assert names == ["Cube", "RootQ", "Rig:LeftHandQ"]
    root = clip.track("RootQ")
    assert root.kind == "quaternion" and np.array_equal(root.curve.value, q.astype(np.float32).astype(float))
    assert clip.track("Rig:LeftHandQ").curve.time.tolist() == [0, 0.5, 1]
    assert [o.attribute for o in clip.other_tracks if o.kind == "float"] == ["Spine Front-Back"]


@corpus
def test_empty_clip():
    path = next(p for p in ANIMS if "MMD_empty" in p.name)
    clip = read_anim(path)
    assert clip.tracks == () and clip.frame_rate == 60


def _pack(items) -> str:
    """Hex of (value, bits) items packed least significant bit first (an independent encoder)."""
    bits = []
    for value, n in items:
        bits += [(int(value) >> k) & 1 for k in range(n)]
    bits += [0] * (-len(bits) % 8)
    data = bytes(sum(b << k for k, b in enumerate(bits[i : i + 8])) for i in range(0, len(bits), 8))
    return data.hex()


def test_compressed_rotation_curve_decoded(tmp_path):
    times = np.array([0.0, 0.25, 0.5, 1.0])
    ang = np.deg2rad([0.0, 30.0, 60.0, 120.0])
    q = np.stack([np.zeros(4), np.sin(ang / 2), np.zeros(4), np.cos(ang / 2)], axis=1)
    q[2] *= -1  # a negative largest component exercises the sign flag
    slopes = np.linspace(-2.0, 3.0, 16)
    t_items = [(d, 6) for d in np.diff(np.concatenate([[0], np.round(times * 100)]))]
    v_items = []
    for row in q:
        om = int(np.argmax(np.abs(row)))
        v_items.append((om | (4 if row[om] < 0 else 0), 3))
        for j in range(4):
            if j != om:
                size = 9 if (om + 1) % 4 == j else 10
                v_items.append((int((row[j] + 1) * 0.5 * ((1 << size) - 1)), size))
    lo, rng = slopes.min(), slopes.max() - slopes.min()
    s_items = [(int((s - lo) / rng * 63), 6) for s in slopes]
    comp = (
        "  m_CompressedRotationCurves:\n  - m_Path: Box\n    m_Times:\n      m_NumItems: 4\n"
        f"      m_Data: {_pack(t_items)}\n      m_BitSize: 6\n    m_Values:\n      m_NumItems: 4\n"
        f"      m_Data: {_pack(v_items)}\n    m_Slopes:\n      m_NumItems: 16\n      m_Range: {rng}\n"
        f"      m_Start: {lo}\n      m_Data: {_pack(s_items)}\n      m_BitSize: 6\n"
        "    m_PreInfinity: 2\n    m_PostInfinity: 2\n"
    )
    p = tmp_path / "c.anim"
    p.write_text(sv4_clip(OLD_KEYS, compressed=comp))
    clip = read_anim(p)
    c = clip.track("Box")  # a quaternion rotation track now (issue 8 section 4), not a read-only one
    assert c.kind == "quaternion" and c.meta["compressed"]
    assert c.times.tolist() == pytest.approx(times.tolist())
    assert geodesic_angle(c.curve.value, q).max() < 0.5  # 9-10 bit truncating quantization
    assert np.abs(c.curve.in_slope.reshape(-1) - slopes).max() <= rng / 63 + 1e-9
    assert np.array_equal(c.curve.in_slope, c.curve.out_slope)


def test_humanoid_quartet_with_different_key_times_plays_exactly(tmp_path):
    # x and w keyed at 0, 1; y at 0, 0.3, 1 with slopes: the union-time track must play the same
    # per-component Hermite curves.
    def entry(attr, times, vals, slopes):
        s = "  - curve:\n      serializedVersion: 2\n      m_Curve:\n"
        for t, v, m in zip(times, vals, slopes, strict=True):
            s += (
                f"      - serializedVersion: 2\n        time: {t}\n        value: {v}\n"
                f"        inSlope: {m}\n        outSlope: {m}\n        tangentMode: 0\n"
            )
        s += "      m_PreInfinity: 2\n      m_PostInfinity: 2\n      m_RotationOrder: 4\n"
        return s + f"    attribute: {attr}\n    path: \n    classID: 95\n    script: {{fileID: 0}}\n"

    floats = entry("RootQ.x", [0, 1], [0.0, 0.2], [0.5, -0.3])
    floats += entry("RootQ.y", [0, 0.3, 1], [0.0, 0.4, 0.1], [1.0, 0.0, -1.0])
    floats += entry("RootQ.z", [0, 1], [0.1, 0.0], [0.0, 0.0])
    floats += entry("RootQ.w", [0, 1], [1.0, 0.9], [0.0, 0.2])
    p = tmp_path / "u.anim"
    p.write_text(sv4_clip(OLD_KEYS, extra_float="  m_FloatCurves:\n" + floats))
    track = read_anim(p).track("RootQ")
    assert track.curve.time.tolist() == pytest.approx([0, 0.3, 1])
    grid = np.linspace(0, 1, 101)
    comps = []
    for keys in (
        [(0, 0.0, 0.5), (1, 0.2, -0.3)],
        [(0, 0.0, 1.0), (0.3, 0.4, 0.0), (1, 0.1, -1.0)],
        [(0, 0.1, 0.0), (1, 0.0, 0.0)],
        [(0, 1.0, 0.0), (1, 0.9, 0.2)],
    ):
        ks = [{"time": t, "value": v, "inSlope": m, "outSlope": m} for t, v, m in keys]
        comps.append(ref_eval(ks, grid, "x")[:, 0])
    want = quat_normalize(np.stack(comps, axis=1))
    assert geodesic_angle(want, played(track, grid)).max() < 1e-5


@corpus
def test_weighted_keys_read():
    clip = read_anim(next(p for p in ANIMS if "RemapCurveTestCurveClip" in p.name))
    (f,) = [o for o in clip.other_tracks if o.kind == "float"]
    assert set(np.unique(f.curve.weighted_mode)) >= {1, 2}
    i = int(np.flatnonzero(f.curve.weighted_mode[:, 0] == 2)[0])
    assert 0 < f.curve.out_weight[i, 0] < 1 and f.curve.out_weight[i, 0] != pytest.approx(1 / 3)
