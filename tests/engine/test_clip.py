"""The clip model: validation, lookup, and "what Unity plays" for both track kinds."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack, key_quaternions, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.rotations import geodesic_angle


def _euler_track(path="A", values=((0, 0, 0), (0, 360, 0)), order="zxy"):
    return RotationTrack(path, "euler", Curve.make([0.0, 1.0], np.array(values, float)), order=order)


def test_euler_track_plays_channel_by_channel_then_converts():
    # A 0 -> 360 yaw key pair is a full spin: halfway Unity shows 180 deg about Y.
    track = _euler_track()
    q = played(track, [0.0, 0.25, 0.5, 1.0])
    # Hermite with zero slopes: s = 0.25 is 0.15625 of the way.
    expect = Rotation.from_euler("y", [[0.0], [360 * 0.15625], [180.0], [360.0]], degrees=True).as_quat()
    assert np.all(geodesic_angle(q, expect) < 1e-9)


def test_quaternion_track_normalizes_componentwise_interpolation():
    a = Rotation.from_euler("y", 0, degrees=True).as_quat()
    b = Rotation.from_euler("y", 90, degrees=True).as_quat()
    track = RotationTrack("Q", "quaternion", Curve.make([0.0, 2.0], np.stack([a, b])))
    q = played(track, [1.0])
    lerp = 0.5 * (a + b)
    assert np.allclose(q[0], lerp / np.linalg.norm(lerp))
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0)


def test_key_quaternions_match_scipy_for_intrinsic_order():
    track = _euler_track(values=((10, 20, 30), (40, 50, 60)), order="ZXY")
    q = key_quaternions(track)
    ref = Rotation.from_euler("ZXY", [[30, 10, 20], [60, 40, 50]], degrees=True).as_quat()
    assert np.all(geodesic_angle(q, ref) < 1e-9)


def test_component_count_and_order_are_validated():
    with pytest.raises(ValueError, match="needs 4 components"):
        RotationTrack("Q", "quaternion", Curve.make([0.0], [[0.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="rotation order"):
        _euler_track(order="zzx")


def test_clip_rejects_duplicate_paths_and_finds_tracks():
    with pytest.raises(ValueError, match="duplicate"):
        Clip("c", 30.0, (_euler_track("A"), _euler_track("A")))
    clip = Clip(
        "c",
        30.0,
        (_euler_track("A"), _euler_track("B")),
        (OtherTrack("A", "m_LocalPosition", "position", None),),
    )
    assert clip.track("B").path == "B"
    with pytest.raises(KeyError, match="tracks"):
        clip.track("C")
    moved = clip.with_track(_euler_track("B", values=((0, 0, 0), (0, 90, 0))))
    assert moved.track("B").curve.value[1, 1] == 90 and clip.track("B").curve.value[1, 1] == 360
    assert (clip.start, clip.end) == (0.0, 1.0)


def test_curve_arrays_are_read_only():
    track = _euler_track()
    with pytest.raises(ValueError):
        track.curve.value[0, 0] = 5.0
