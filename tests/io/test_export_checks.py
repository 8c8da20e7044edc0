"""Export checks: hemisphere flips, quaternion segments over 180 deg, Euler winding, order conversion."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.clip import RotationTrack, played
from curveeditor.engine.curves import Curve
from curveeditor.engine.export_checks import (
    fix_hemisphere,
    prepare_for_export,
    segment_sweep,
    to_euler_track,
    to_quaternion_track,
)
from curveeditor.engine.rotations import axis_angle_quat, geodesic_angle, quat_dot
from curveeditor.engine.tangents import make_curve


def yaw_quats(deg):
    return axis_angle_quat(1, np.deg2rad(np.asarray(deg, dtype=float)))


def test_sign_flips_are_kept_as_keyed_since_fixing_them_changes_the_motion():
    # Keys 40 deg apart stored on alternating hemispheres: Unity plays 320 deg swings between them.
    # Negating keys (the old fix) changed that motion; the writer keeps it (Unity plays the keys the
    # same way) and says how to remove it (clean --unflip).
    q = yaw_quats([0, 40, 80, 120])
    q[1] *= -1
    q[3] *= -1
    track = RotationTrack("Bone", "quaternion", make_curve([0, 1, 2, 3], q, "linear"))
    out, warnings = prepare_for_export(track)
    assert len(warnings) == 1 and "3 neighbouring key pair(s) on opposite hemispheres" in warnings[0]
    assert "kept as keyed" in warnings[0] and "--unflip" in warnings[0]
    assert out is track
    fixed, n = fix_hemisphere(track)  # the explicit operation still exists (unflip uses it)
    assert n == 3 and np.all(quat_dot(fixed.curve.value[1:], fixed.curve.value[:-1]) >= 0)


def test_opposite_hemisphere_motion_is_rekeyed_along_the_played_path():
    # A reduced 360 deg turn: keys at 0, 180.6 and 360 deg (q and -q), ~72 deg/s. The pair 180.6 deg
    # apart has dot < 0 but is motion, not a sign flip: the writer must keep the turn's direction.
    t = np.array([0.0, 2.5, 5.0])
    ang = np.array([0.0, 179.4, 360.0])
    q = yaw_quats(ang)  # q[2] = -identity: continuous along the turn
    slopes = np.gradient(q, t, axis=0)
    track = RotationTrack("Spin", "quaternion", Curve.make(t, q, slopes, slopes))
    grid = np.linspace(0, 5, 2001)
    assert quat_dot(q[2], q[1]) < 0
    out, warnings = prepare_for_export(track)
    assert out.n_keys > 3 and np.all(quat_dot(out.curve.value[1:], out.curve.value[:-1]) >= 0)
    assert geodesic_angle(played(track, grid), played(out, grid)).max() < 0.011
    assert len(warnings) == 1 and f"({out.n_keys - 3} key(s) added)" in warnings[0]
    # The old fix (negate the key, then split the now short-way segment) turned it the other way.
    flipped, _ = fix_hemisphere(track)
    assert geodesic_angle(played(track, grid), played(flipped, grid)).max() > 170


def test_quaternion_segment_over_180_gets_keys():
    # Opposite-hemisphere keys kept as they are play the long way (260 deg); keeping that motion
    # needs extra keys because Unity interpolates short-way between close keys.
    q = yaw_quats([0, 100])
    q[1] *= -1
    track = RotationTrack("Bone", "quaternion", make_curve([0, 1], q, "linear"))
    assert segment_sweep(track)[0] > 180
    out, warnings = prepare_for_export(track, fix_hemisphere_flips=False)
    assert any("more than 180 deg" in w for w in warnings)
    assert out.n_keys > 2
    grid = np.linspace(0, 1, 401)
    assert geodesic_angle(played(track, grid), played(out, grid)).max() < 0.05
    assert np.all(segment_sweep(out) <= 180)


def test_euler_spin_to_quaternion_keeps_winding():
    t = np.array([0.0, 1.0])
    e = np.array([[0.0, 0.0, 0.0], [0.0, 720.0, 0.0]])
    track = RotationTrack("Spinner", "euler", Curve.make(t, e, [[0, 720, 0]] * 2, [[0, 720, 0]] * 2))
    out, warnings = prepare_for_export(track, "quaternion")
    assert out.kind == "quaternion"
    assert any("winding" in w and "Spinner" in w for w in warnings)
    grid = np.linspace(0, 1, 2001)
    assert geodesic_angle(played(track, grid), played(out, grid)).max() < 0.05
    # Without densifying, the two keys would be the same pose: no motion at all.
    assert geodesic_angle(played(track, [0.0]), played(track, [1.0]))[0] < 1e-6
    # Total motion survived.
    assert segment_sweep(out).sum() == pytest.approx(720, abs=1)


def test_quaternion_to_euler_and_order_change():
    q = yaw_quats([0, 60, 150])
    track = RotationTrack("B", "quaternion", make_curve([0, 0.5, 1.0], q))
    e = to_euler_track(track, "zxy")
    grid = np.linspace(0, 1, 301)
    assert geodesic_angle(played(track, grid), played(e, grid)).max() < 0.02
    assert e.curve.value[-1, 1] == pytest.approx(150)
    xyz = RotationTrack("C", "euler", make_curve([0, 1], [[0, 0, 0], [30, 40, 50]]), order="xyz")
    out, warnings = prepare_for_export(xyz, "euler", "zxy")
    assert out.order == "zxy" and warnings and "converted to 'zxy'" in warnings[0]
    assert geodesic_angle(played(xyz, grid), played(out, grid)).max() < 0.02


def test_stepped_segments_stay_stepped():
    e = np.array([[0.0, 0, 0], [0, 90, 0], [0, 90, 0]])
    curve = make_curve([0, 1, 2], e, "constant")
    track = RotationTrack("S", "euler", curve)
    out, _ = to_quaternion_track(track)[0], None
    grid = np.array([0.5, 0.99, 1.0, 1.5])
    assert geodesic_angle(played(track, grid), played(out, grid)).max() < 1e-6


@settings(deadline=None, max_examples=30)
@given(
    st.lists(st.floats(-400, 400), min_size=3, max_size=3),
    st.lists(st.floats(-400, 400), min_size=3, max_size=3),
    st.floats(0.2, 2.0),
)
def test_euler_to_quaternion_property(a, b, dt):
    t = np.array([0.0, dt])
    track = RotationTrack("P", "euler", make_curve(t, np.array([a, b]), "linear"))
    out, _ = prepare_for_export(track, "quaternion")
    grid = np.linspace(0, dt, 257)
    assert geodesic_angle(played(track, grid), played(out, grid)).max() < 0.05
    assert np.all(quat_dot(out.curve.value[1:], out.curve.value[:-1]) >= 0)
