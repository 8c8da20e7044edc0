"""Editing one track of a real clip changes only that track's blocks and the derived fields."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from curveeditor.engine.clip import played
from curveeditor.engine.rotations import (
    axis_angle_quat,
    equivalent_euler,
    euler_to_quat,
    geodesic_angle,
    quat_mul,
    quat_to_euler,
)
from curveeditor.engine.tangents import make_curve
from curveeditor.io.anim import anim_text, read_anim
from curveeditor.io.anim.bindings import crc32
from curveeditor.io.anim.document import parse_document
from curveeditor.io.anim.reader import build_clip
from tests.conftest import corpus_files

ANIMS = corpus_files("anim", "*.anim")
WITH_ROT = [p for p in ANIMS if read_anim(p).tracks] if ANIMS else []
corpus = pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")

ROT = quat_mul(axis_angle_quat(1, np.deg2rad(3.0)), axis_angle_quat(0, np.deg2rad(-2.0)))


def rotated(track):
    """The track with every key multiplied by a small rotation (slopes kept)."""
    c = track.curve
    if track.kind == "quaternion":
        v = quat_mul(np.broadcast_to(ROT, c.value.shape), c.value)
    else:
        q = quat_mul(np.broadcast_to(ROT, (c.n_keys, 4)), euler_to_quat(c.value, track.order))
        e = quat_to_euler(q, track.order)
        best = None
        for cand in (e, equivalent_euler(e, track.order)):
            cand = cand + 360.0 * np.round((c.value - cand) / 360.0)
            if best is None or np.abs(cand - c.value).max() < np.abs(best - c.value).max():
                best = cand
        v = best
    return replace(track, curve=c.with_keys(value=v))


def reparse(text: str):
    return build_clip(parse_document("edited.anim", text.encode("utf-8")))


def owned_entries(doc, path):
    src = doc.original_tracks[path][1]
    return {id(e) for e in src.runtime + src.editor + src.display}


def check_only_allowed(doc, new_doc, path):
    """Every block outside the edited track's entries, the binding table and m_StopTime is identical."""
    assert (
        doc.data[: doc.lines.start[doc.header_end]] == new_doc.data[: new_doc.lines.start[new_doc.header_end]]
    )
    assert [f[0] for f in doc.fields] == [f[0] for f in new_doc.fields]
    own = owned_entries(doc, path)
    new_own = owned_entries(new_doc, path)
    for (name, a, b, _), (_, a2, b2, _) in zip(doc.fields, new_doc.fields, strict=True):
        old_raw, new_raw = doc.lines.raw(a, b), new_doc.lines.raw(a2, b2)
        if name in doc.entries and doc.entries[name]:
            keep_old = [doc.lines.raw(e.start, e.end) for e in doc.entries[name] if id(e) not in own]
            keep_new = [
                new_doc.lines.raw(e.start, e.end) for e in new_doc.entries[name] if id(e) not in new_own
            ]
            assert keep_old == keep_new, name
        elif name == "m_ClipBindingConstant":
            continue
        elif name in ("m_AnimationClipSettings", "m_MuscleClipInfo"):
            ol = [ln for ln in old_raw.split(b"\n") if b"m_StopTime" not in ln]
            nl = [ln for ln in new_raw.split(b"\n") if b"m_StopTime" not in ln]
            assert ol == nl
        else:
            assert old_raw == new_raw, name


@corpus
@pytest.mark.parametrize("path", WITH_ROT, ids=lambda p: p.name[:60])
def test_edit_one_track_changes_only_its_blocks(path):
    clip = read_anim(path)
    doc = clip.source
    for track in clip.tracks[:3]:
        edited = rotated(track)
        text, warnings = anim_text(clip.with_track(edited))
        assert warnings == []
        back = reparse(text)
        check_only_allowed(doc, back.source, track.path)
        # The edited track plays the rotated motion; the others are untouched.
        grid = np.linspace(track.curve.start, track.curve.end, 61)
        assert geodesic_angle(played(edited, grid), played(back.track(track.path), grid)).max() < 1e-3
        kt = track.times
        want = quat_mul(np.broadcast_to(ROT, (kt.shape[0], 4)), played(track, kt))
        assert geodesic_angle(want, played(back.track(track.path), kt)).max() < 1e-3
        for other in clip.tracks:
            if other.path != track.path:
                assert back.track(other.path).curve.equals(other.curve)
        # Mirrored editor curves follow the new keys.
        src = back.source.original_tracks[track.path][1]
        for e in src.editor:
            c = "xyzw".index(e.attribute[-1])
            assert np.allclose(e.keys.value[:, 0], edited.curve.value[:, c], atol=1e-6)
        # Euler display curves (real ones, not the empty placeholders) show the new rotation.
        for d in src.display:
            if d.n_keys:
                c = "xyz".index(d.attribute[-1])
                disp = np.zeros((d.n_keys, 3))
                for dd in src.display:
                    disp[:, "xyz".index(dd.attribute[-1])] = dd.keys.value[:, 0]
                q_disp = euler_to_quat(disp, "zxy")
                assert geodesic_angle(q_disp, played(edited, d.keys.time)).max() < 1e-3
                # continuous: no wrap jumps
                assert np.all(np.abs(np.diff(disp, axis=0)) < 180)
                break


def _get(part):
    return next(p for p in ANIMS if part in p.name)


@corpus
def test_stop_time_follows_edit():
    clip = read_anim(_get("Camera_Rot"))
    t = clip.tracks[0]
    c = t.curve
    times = c.time.copy()
    times[-1] = 9.0
    text, _ = anim_text(clip.with_track(replace(t, curve=c.with_keys(time=times))))
    assert "    m_StopTime: 9\n" in text
    assert text.count("m_StopTime") == 1


@corpus
def test_bindings_follow_key_count_and_mode():
    clip = read_anim(_get("EulerAnimation"))
    doc = clip.source
    t = clip.tracks[0]
    h = crc32(t.path)
    assert sum(1 for b in doc.bindings if b.path == h and b.attribute == 4) == 1
    # Keys vanish: a single-key curve has no binding.
    one = replace(t, curve=t.curve.select(slice(0, 1)))
    back = reparse(anim_text(clip.with_track(one))[0]).source
    assert not any(b.path == h and b.attribute == 4 for b in back.bindings)
    assert len(back.bindings) == len(doc.bindings) - 1
    # Keys appear again: the binding comes back among the Euler bindings.
    again = reparse(anim_text(clip.with_track(one))[0])
    back2 = reparse(anim_text(again.with_track(t))[0]).source
    assert sum(1 for b in back2.bindings if b.path == h and b.attribute == 4) == 1
    # Mode switch: Euler -> quaternion storage with editor curves and binding attribute 2.
    text, _ = anim_text(clip, mode="quaternion")
    q = reparse(text)
    assert all(tr.kind == "quaternion" for tr in q.tracks)
    qd = q.source
    assert not qd.entries["m_EulerCurves"] and len(qd.entries["m_RotationCurves"]) == 2
    assert [e.attribute for e in qd.entries["m_EditorCurves"]].count("m_LocalRotation.w") == 2
    assert not any(e.attribute.startswith("localEulerAnglesRaw") for e in qd.entries["m_EditorCurves"])
    assert not qd.entries["m_EulerEditorCurves"]
    assert sorted(b.attribute for b in qd.bindings) == [1, 1, 2, 2]
    grid = np.linspace(0, 1, 201)
    for a in clip.tracks:
        assert geodesic_angle(played(a, grid), played(q.track(a.path), grid)).max() < 0.05
    # Position curves and their editor curves are untouched by the switch.
    for name in ("m_PositionCurves",):
        assert [doc.lines.raw(e.start, e.end) for e in doc.entries[name]] == [
            qd.lines.raw(e.start, e.end) for e in qd.entries[name]
        ]


@corpus
def test_add_and_delete_tracks():
    clip = read_anim(_get("EulerAnimation"))
    new = replace(clip.tracks[0], path="Skeleton/Hips/New", curve=make_curve([0, 1], [[0, 0, 0], [0, 90, 0]]))
    added = reparse(anim_text(clip.with_tracks(list(clip.tracks) + [new]))[0])
    assert added.track("Skeleton/Hips/New").curve.value[1, 1] == 90
    ad = added.source
    assert any(b.path == crc32("Skeleton/Hips/New") and b.attribute == 4 for b in ad.bindings)
    attrs = [e.attribute for e in ad.entries["m_EditorCurves"] if e.path == "Skeleton/Hips/New"]
    assert attrs == ["localEulerAnglesRaw.x", "localEulerAnglesRaw.y", "localEulerAnglesRaw.z"]
    deleted = reparse(anim_text(clip.with_tracks(clip.tracks[1:]))[0])
    gone = clip.tracks[0].path
    assert [t.path for t in deleted.tracks] == [clip.tracks[1].path]
    dd = deleted.source
    assert not any(
        e.path == gone and e.attribute and "Euler" in e.attribute for e in dd.entries["m_EditorCurves"]
    )
    assert not any(b.path == crc32(gone) and b.attribute == 4 for b in dd.bindings)
    # The position curve of the deleted rotation's bone stays.
    assert any(e.path == gone for e in dd.entries["m_PositionCurves"])


@corpus
def test_refresh_display_unwraps_euler_display_curves():
    clip = read_anim(_get("CurveFitTest"))
    text, warnings = anim_text(clip, refresh_display=True)
    assert any("display curves made continuous" in w for w in warnings)
    back = reparse(text)
    src = back.source.original_tracks["Bip001"][1]
    disp = {d.attribute[-1]: d.keys.value[:, 0] for d in src.display}
    e = np.stack([disp["x"], disp["y"], disp["z"]], axis=1)
    assert np.all(np.abs(np.diff(e, axis=0)) < 180)
    t = src.display[0].keys.time
    assert geodesic_angle(euler_to_quat(e, "zxy"), played(back.track("Bip001"), t)).max() < 1e-3
    check_only_allowed(clip.source, back.source, "Bip001")
    # The rotation curves themselves are untouched.
    assert back.track("Bip001").curve.equals(clip.track("Bip001").curve)
    assert anim_text(clip)[0] == clip.source.text


@corpus
def test_old_layout_without_euler_curves_keeps_quaternions():
    clip = read_anim(_get("RPG_anim_117"))
    text, warnings = anim_text(clip, mode="euler")
    assert text == clip.source.text  # nothing to change: quaternions are all this layout can hold
    edited = rotated(clip.tracks[0])
    text, warnings = anim_text(clip.with_track(edited), mode="euler")
    assert any("has no Euler curves" in w for w in warnings)
    back = reparse(text)
    assert back.tracks[0].kind == "quaternion"
    check_only_allowed(clip.source, back.source, clip.tracks[0].path)


@corpus
def test_crlf_file_stays_crlf_and_rename(tmp_path):
    src = _get("Camera_Rot")
    crlf = src.read_bytes().replace(b"\n", b"\r\n")
    p = tmp_path / "crlf.anim"
    p.write_bytes(crlf)
    clip = read_anim(p)
    lf = read_anim(src)
    assert clip.tracks[0].curve.equals(lf.tracks[0].curve)
    assert anim_text(clip)[0].encode() == crlf
    text, _ = anim_text(replace(clip.with_track(rotated(clip.tracks[0])), name="Renamed"))
    assert text.count("\n") == text.count("\r\n")
    back = build_clip(parse_document("x", text.encode()))
    assert back.name == "Renamed"
    assert geodesic_angle(played(back.tracks[0], [1.0]), played(rotated(lf.tracks[0]), [1.0])).max() < 1e-3


def test_humanoid_quartet_edit_round_trip():
    from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack

    t = np.linspace(0, 1, 7)
    q = euler_to_quat(np.stack([10 * np.sin(3 * t), 40 * t, np.zeros(7)], axis=1), "zxy")
    root = RotationTrack("RootQ", "quaternion", make_curve(t, q), meta={"humanoid": "RootQ"})
    hand = RotationTrack("LeftHandQ", "quaternion", make_curve(t, q[::-1].copy()))  # recognised by name
    muscle = OtherTrack(
        "", "Spine Front-Back", "float", make_curve(t, np.sin(t)[:, None]), t, {"class_id": 95}
    )
    text, warnings = anim_text(Clip("H", 30.0, [root, hand], [muscle]))
    assert warnings == []
    clip = reparse(text)
    assert [tr.path for tr in clip.tracks] == ["RootQ", "LeftHandQ"]
    doc = clip.source
    # Humanoid bindings: RootQ.x..w = 10..13, LeftHandQ = 31..34, typeID 95, customType 8.
    attrs = sorted(b.attribute for b in doc.bindings if b.type_id == 95 and b.custom_type == 8)
    assert attrs[:8] == [10, 11, 12, 13, 31, 32, 33, 34]
    assert doc.entries["m_EditorCurves"] and len(doc.entries["m_FloatCurves"]) == 9
    edited = rotated(clip.track("RootQ"))
    text2, warnings = anim_text(clip.with_track(edited))
    assert warnings == []
    back = reparse(text2)
    check_only_allowed(doc, back.source, "RootQ")
    assert geodesic_angle(played(back.track("RootQ"), t), played(edited, t)).max() < 1e-4
    assert back.track("LeftHandQ").curve.equals(clip.track("LeftHandQ").curve)
