"""`.anim` in the clip's own rotation order (issue 21): every order written with its
``m_RotationOrder``, read back and played in that order, BVH frames written as they are."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack, played
from curveeditor.engine.reorder import is_frame_samples
from curveeditor.engine.rotations import UNITY_ROTATION_ORDERS, euler_to_quat, extrinsic_order, geodesic_angle
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, write_checked
from curveeditor.io.anim import anim_text
from curveeditor.io.anim.document import parse_document
from curveeditor.io.anim.reader import build_clip

ORDERS = [o for e in UNITY_ROTATION_ORDERS for o in (e, e.upper()[::-1])]


def wavy_track(order: str, n: int = 40) -> RotationTrack:
    t = np.arange(n) / 30.0
    e = np.stack([70 * np.sin(2.1 * t), 50 * np.sin(1.3 * t + 1), 120 * np.sin(0.7 * t + 2)], axis=1)
    return RotationTrack("Hips/Spine", "euler", make_curve(t, e, "clamped_auto"), order)


@pytest.mark.parametrize("order", ORDERS)
def test_every_order_is_written_read_and_played_in_that_order(order):
    track = wavy_track(order)
    text, warnings = anim_text(Clip("o", 30.0, [track]))
    idx = UNITY_ROTATION_ORDERS.index(extrinsic_order(order))
    assert f"m_RotationOrder: {idx}" in text
    assert (idx == 4) == (not warnings)  # a non-ZXY track is named in the export note
    back = build_clip(parse_document("o.anim", text.encode())).track("Hips/Spine")
    assert back.order == UNITY_ROTATION_ORDERS[idx]
    # The same keys and values (float32 as stored), not re-keyed
    assert back.n_keys == track.n_keys
    assert np.array_equal(back.curve.value, track.curve.value.astype(np.float32).astype(np.float64))
    t = np.linspace(0, track.times[-1], 997)
    assert geodesic_angle(played(track, t), played(back, t)).max() < 2e-3
    # ... and that order is what plays: the same values read in ZXY are another motion
    if idx != 4:
        zxy = RotationTrack("x", "euler", back.curve, "zxy")
        assert geodesic_angle(played(zxy, t), played(track, t)).max() > 1.0


def test_an_own_order_file_rewrites_byte_identical(tmp_path):
    other = RotationTrack("Hips", "euler", wavy_track("yxz").curve, "yxz")
    clip = Clip("o", 30.0, [wavy_track("ZYX"), other])
    first = tmp_path / "a.anim"
    write_checked(clip, first)
    again = tmp_path / "b.anim"
    write_checked(read_clip(first), again)
    assert again.read_bytes() == first.read_bytes()


def _bvh(path, frames: int = 200) -> None:
    t = np.arange(frames) / 120.0
    rows = []
    for k in range(frames):
        # Zrotation Yrotation Xrotation (ZYX) with a wrap of the X channel across +-180
        x = (150 + 60 * t[k]) % 360 - 180 if k > 0 else -30.0
        rows.append(
            f"0 0 0 {40 * np.sin(3 * t[k]):.4f} {20 * np.cos(2 * t[k]):.4f} {x:.4f} "
            f"{10 * np.sin(5 * t[k]):.4f} {-25 * np.sin(2 * t[k]):.4f} {35 * np.cos(4 * t[k]):.4f}"
        )
    path.write_text(
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n"
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n"
        "  JOINT Spine\n  {\n    OFFSET 0 10 0\n    CHANNELS 3 Zrotation Yrotation Xrotation\n"
        "    End Site\n    {\n      OFFSET 0 10 0\n    }\n  }\n}\n"
        f"MOTION\nFrames: {frames}\nFrame Time: {1 / 120:.8f}\n" + "\n".join(rows) + "\n"
    )


def test_bvh_frames_go_to_anim_as_they_are(tmp_path):
    bvh = tmp_path / "take.bvh"
    _bvh(bvh)
    src = read_clip(bvh)
    assert all(is_frame_samples(t) and t.order == "ZYX" for t in src.tracks)
    check = write_checked(src, tmp_path / "take.anim")
    assert check.keys_added == 0
    text = (tmp_path / "take.anim").read_text()
    assert text.count("m_RotationOrder: 0") == 2 * 4  # 2 tracks: runtime + 3 editor curves each
    back = read_clip(tmp_path / "take.anim")
    for t in src.tracks:
        w = back.track(t.path)
        assert w.order == "xyz" and np.array_equal(w.times, t.times.astype(np.float32).astype(float))
        # The frames' own values (float32), except whole turns where a channel wraps between frames
        d = w.curve.value - t.curve.value
        turns = np.round(d / 360.0)
        assert np.abs(d - 360.0 * turns).max() < 1e-4
        # Poses at the frames and the short way between them (Slerp of the frames)
        at = geodesic_angle(played(w, t.times), euler_to_quat(t.curve.value, "ZYX"))
        assert at.max() < 1e-3
    assert check.track("Hips").writer.max_error < 0.5  # no 300 deg spin across the wrap
    assert any("'ZYX' kept (m_RotationOrder 0 XYZ)" in w for w in check.warnings)


def test_to_zxy_on_request(tmp_path):
    bvh = tmp_path / "take.bvh"
    _bvh(bvh)
    from curveeditor.cli import main

    assert main(["clean", str(bvh), "--to-order", "zxy", "-o", str(tmp_path / "z.anim")]) == 0
    text = (tmp_path / "z.anim").read_text()
    assert "m_RotationOrder: 0" not in text and "m_RotationOrder: 4" in text


def test_a_reduced_bvh_track_is_not_taken_for_frames(tmp_path):
    """A track reduced to evenly spaced keys (here 2) keeps the BVH's channel meta but is a curve:
    the writer must write its fitted tangents, not re-key it as Linear frames (0.89 deg off on the
    corpus bvh_test2's RightCollar)."""
    bvh = tmp_path / "take.bvh"
    _bvh(bvh)
    src = read_clip(bvh)
    t = src.track("Hips/Spine")
    slow = RotationTrack(
        t.path, "euler", make_curve(t.times, t.curve.value * 0.01 + 5.0), t.order, dict(t.meta)
    )
    from curveeditor.engine.reduce import reduce_track

    red = reduce_track(slow, 0.5)
    assert red.n_keys == 2 and red.meta.get("bvh_channels") and not is_frame_samples(red)
    assert is_frame_samples(t)
    write_checked(src.with_track(red), tmp_path / "r.anim")
    back = read_clip(tmp_path / "r.anim").track(t.path)
    assert np.allclose(back.curve.out_slope[0], red.curve.out_slope[0], rtol=1e-6, atol=1e-6)
    grid = np.linspace(0, t.times[-1], 301)
    assert geodesic_angle(played(back, grid), played(red, grid)).max() < 1e-3


@pytest.mark.parametrize("order", ORDERS)
def test_the_editors_samples_play_every_order(order):
    """What the graphs, the 3D view and playback draw (``display.sample_track``) is the track's own
    order: the same rotations as ``played``, and continuous Euler values in that order."""
    from curveeditor.engine.display import sample_track

    track = wavy_track(order)
    back = build_clip(parse_document("o.anim", anim_text(Clip("o", 30.0, [track]))[0].encode())).track(
        "Hips/Spine"
    )
    t = np.linspace(0, track.times[-1], 301)
    s = sample_track(back, t)
    assert geodesic_angle(s.quat, played(track, t)).max() < 2e-3
    assert geodesic_angle(euler_to_quat(s.euler, back.order), played(back, t)).max() < 1e-6
