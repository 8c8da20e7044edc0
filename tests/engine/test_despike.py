"""Despiking: injected spikes are removed, every other key's value is bit-identical."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.analysis import inspect_track
from curveeditor.engine.clip import RotationTrack, key_quaternions
from curveeditor.engine.curves import Curve
from curveeditor.engine.despike import despike_track, spike_neighbours
from curveeditor.engine.reduce import slerp_pairs
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, hemisphere_continuous
from curveeditor.engine.tangents import make_curve


def smooth_euler(n=60, rate=30.0, yaw_speed=90.0):
    t = np.arange(n) / rate
    return t, np.stack([10 * np.sin(2 * t), yaw_speed * t, 5 * np.cos(t)], axis=1)


def test_single_spike_replaced_by_slerp_of_neighbours():
    t, e = smooth_euler()
    e[20] += [0.0, 0.0, 60.0]
    src = RotationTrack("j", "euler", make_curve(t, e))
    assert inspect_track(src).spikes == 1
    out, changed = despike_track(src)
    np.testing.assert_array_equal(changed, [20])
    assert inspect_track(out).spikes == 0
    others = np.arange(60) != 20
    np.testing.assert_array_equal(out.curve.value[others], src.curve.value[others])
    # The new key is the Slerp midpoint of keys 19 and 21 (equal spacing).
    q = key_quaternions(out)
    mid = slerp_pairs(q[19][None], q[21][None], np.array([0.5]))
    assert geodesic_angle(q[20], mid[0]) < 1e-9
    # Winding kept: near the neighbours' channel values.
    assert np.all(np.abs(out.curve.value[20] - 0.5 * (e[19] + e[21])) < 1.0)


def test_free_neighbours_keep_slopes_auto_neighbours_recomputed():
    t, e = smooth_euler()
    e[30] += [50.0, 0.0, 0.0]
    free = Curve.make(t, e, np.ones((60, 3)), np.ones((60, 3)), tangent_mode=0)
    out, changed = despike_track(RotationTrack("j", "euler", free))
    np.testing.assert_array_equal(changed, [30])
    others = np.arange(60) != 30
    np.testing.assert_array_equal(out.curve.in_slope[others], free.in_slope[others])
    np.testing.assert_array_equal(out.curve.out_slope[others], free.out_slope[others])
    assert out.curve.tangent_mode[30, 0] == 136  # Free spike key switched to ClampedAuto
    auto = make_curve(t, e, mode="auto")
    out2, _ = despike_track(RotationTrack("j", "euler", auto))
    assert not np.array_equal(out2.curve.in_slope[29], auto.in_slope[29])  # neighbour recomputed
    np.testing.assert_array_equal(out2.curve.in_slope[:28], auto.in_slope[:28])
    np.testing.assert_array_equal(out2.curve.in_slope[33:], auto.in_slope[33:])


def test_quaternion_track_two_frame_spike():
    t, e = smooth_euler(80, 60.0)
    q = hemisphere_continuous(euler_to_quat(e))
    q[40:42] = euler_to_quat(e[40:42] + [0.0, 70.0, 0.0])
    src = RotationTrack("q", "quaternion", make_curve(t, q, mode="auto"))
    out, changed = despike_track(src)
    np.testing.assert_array_equal(changed, [40, 41])
    assert inspect_track(out).spikes == 0 and inspect_track(out).hemisphere_flips == 0
    assert geodesic_angle(key_quaternions(out)[40:42], euler_to_quat(e[40:42])).max() < 0.2


def test_no_spike_returns_same_track_and_bad_speed():
    t, e = smooth_euler()
    src = RotationTrack("j", "euler", make_curve(t, e))
    out, changed = despike_track(src)
    assert out is src and changed.shape == (0,)
    with pytest.raises(ValueError, match="speed_deg_s"):
        despike_track(src, -5.0)


def test_neighbours_at_ends():
    idx, prev, nxt = spike_neighbours(np.array([True, False, False, True, True]))
    np.testing.assert_array_equal(idx, [0, 3, 4])
    np.testing.assert_array_equal(prev, [1, 2, 2])
    np.testing.assert_array_equal(nxt, [1, 2, 2])


@settings(deadline=None, max_examples=60)
@given(
    st.integers(12, 60),
    st.data(),
    st.floats(40.0, 150.0),
    st.integers(0, 2),
    st.sampled_from(["zxy", "ZXY", "xyz"]),
    st.sampled_from(["clamped_auto", "auto", "linear"]),
)
def test_property_injected_spike_removed_others_bit_identical(n, data, size, axis, order, mode):
    k = data.draw(st.integers(2, n - 3))
    width = data.draw(st.integers(1, 2))
    t = np.arange(n) / 30.0
    e = np.stack([5 * np.sin(t), 30 * t, 3 * np.cos(2 * t)], axis=1)
    spiked = e.copy()
    spiked[k : k + width, axis] += size
    src = RotationTrack("j", "euler", make_curve(t, spiked, mode=mode), order=order)
    out, changed = despike_track(src, speed_deg_s=600.0)
    assert set(range(k, k + width)) <= set(changed.tolist())
    untouched = np.ones(n, dtype=bool)
    untouched[changed] = False
    np.testing.assert_array_equal(out.curve.value[untouched], src.curve.value[untouched])
    np.testing.assert_array_equal(out.times, src.times)
    assert inspect_track(out, spike_speed=600.0).spikes == 0
    clean = euler_to_quat(e, order)
    assert geodesic_angle(key_quaternions(out)[k : k + width], clean[k : k + width]).max() < 2.0
