"""Key edits behind the commands: time clamping, moves, quaternion keys edited through Euler,
insert on the played curve, delete, paste, tangent presets (Unity's tangentMode integers)."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine import display
from curveeditor.engine import edit as ed
from curveeditor.engine.clip import RotationTrack, played
from curveeditor.engine.curves import TangentMode, tangent_mode_bits
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle
from curveeditor.engine.tangents import make_curve

T = np.arange(6) / 30.0


def euler_track():
    v = np.stack([np.linspace(0, 50, 6), np.sin(T * 9) * 20, np.zeros(6)], axis=1)
    return RotationTrack("A", "euler", make_curve(T, v))


def quat_track():
    e = np.stack([np.linspace(0, 40, 6), np.linspace(10, 70, 6), np.zeros(6)], axis=1)
    q = euler_to_quat(e, "zxy")
    q[3] *= -1  # a stored key on the other hemisphere (same rotation)
    return RotationTrack("Q", "quaternion", make_curve(T, q, "linear"))


def test_clamp_time_shift_keeps_order_and_zero():
    t = np.array([0.0, 0.1, 0.2, 0.3])
    sel = np.array([False, True, True, False])
    assert ed.clamp_time_shift(t, sel, 0.5, 0.01) == pytest.approx(0.09)
    assert ed.clamp_time_shift(t, sel, -0.5, 0.01) == pytest.approx(-0.09)
    assert ed.clamp_time_shift(t, np.array([True, False, False, False]), -1.0, 0.01) == 0.0
    assert ed.clamp_time_shift(t, np.ones(4, bool), 2.0, 0.01) == 2.0


def test_move_keys_changes_only_selected_channel_and_recomputes_auto_slopes():
    tr = euler_track()
    new = ed.move_keys(tr, [2], 0.0, 1, 5.0)
    np.testing.assert_allclose(new.curve.value[2], tr.curve.value[2] + [0, 5, 0])
    np.testing.assert_array_equal(np.delete(new.curve.value, 2, 0), np.delete(tr.curve.value, 2, 0))
    assert not np.allclose(new.curve.out_slope[1:4, 1], tr.curve.out_slope[1:4, 1])  # ClampedAuto follows
    assert tr.curve.value[2, 1] != new.curve.value[2, 1]  # input untouched (immutable)


def test_quaternion_key_moved_in_euler_keeps_hemisphere_and_pose_elsewhere():
    tr = quat_track()
    e_before = display.key_euler(tr)
    new = ed.move_keys(tr, [3], 0.0, 0, 10.0)
    e_after = display.key_euler(new)
    assert e_after[3, 0] == pytest.approx(e_before[3, 0] + 10.0, abs=1e-6)
    np.testing.assert_allclose(e_after[3, 1:], e_before[3, 1:], atol=1e-6)
    # the stored sign of the edited key is kept (it was on the flipped hemisphere)
    assert np.dot(new.curve.value[3], tr.curve.value[3]) > 0
    others = [0, 1, 2, 4, 5]
    np.testing.assert_array_equal(new.curve.value[others], tr.curve.value[others])


@pytest.mark.parametrize("order", ["XYZ", "yxz"])
def test_quaternion_key_euler_edit_uses_the_tracks_order(order):
    """Quaternion tracks keep the order they were converted from (e.g. a BVH joint's); the display
    Euler channels are in that order, so an edit must convert back in it, not in Unity's ZXY."""
    e = np.stack([np.linspace(10, 40, 6), np.linspace(20, 60, 6), np.linspace(30, 5, 6)], axis=1)
    tr = RotationTrack("Q", "quaternion", make_curve(T, euler_to_quat(e, order), "linear"), order=order)
    before = display.key_euler(tr)
    new = ed.move_keys(tr, [2], 0.0, 0, 1e-4)
    after = display.key_euler(new)
    assert after[2, 0] == pytest.approx(before[2, 0] + 1e-4, abs=1e-7)
    np.testing.assert_allclose(after[2, 1:], before[2, 1:], atol=1e-7)
    assert geodesic_angle(new.curve.value[2], tr.curve.value[2]) == pytest.approx(1e-4, rel=1e-3)
    one = ed.set_key(tr, 4, channel=2, value=before[4, 2] + 2.0)
    np.testing.assert_allclose(display.key_euler(one)[4], before[4] + [0, 0, 2.0], atol=1e-7)


def test_insert_key_keeps_the_played_pose():
    tr = euler_track()
    t = float(T[1] + T[2]) / 2
    new, i = ed.insert_key(tr, t)
    assert new.n_keys == tr.n_keys + 1 and new.times[i] == pytest.approx(t)
    assert int(new.curve.tangent_mode[i, 0]) == 136
    assert geodesic_angle(played(new, [t]), played(tr, [t]))[0] < 1e-6
    same, j = ed.insert_key(tr, float(T[3]))
    assert same is tr and j == 3


def test_delete_keys_refuses_empty_and_recomputes_neighbours():
    tr = euler_track()
    new = ed.delete_keys(tr, [2, 3])
    np.testing.assert_allclose(new.times, T[[0, 1, 4, 5]])
    with pytest.raises(ValueError, match="at least one key"):
        ed.delete_keys(tr, range(6))


def test_copy_paste_replaces_keys_at_same_time():
    tr = euler_track()
    clip = ed.copy_keys(tr, [0, 1])
    assert clip.time[0] == 0.0
    new, idx = ed.paste_keys(tr, clip, float(T[5]))
    assert new.n_keys == 7
    np.testing.assert_allclose(new.curve.value[idx], tr.curve.value[:2])
    with pytest.raises(ValueError, match="component"):
        ed.paste_keys(quat_track(), clip, 1.0)


def test_tangent_presets_and_sides_match_unity_encoding():
    tr = euler_track()
    assert np.all(ed.set_tangent_preset(tr, [1], "Auto").curve.tangent_mode[1] == 34)
    flat = ed.set_tangent_preset(tr, [1], "Flat").curve
    assert np.all(flat.tangent_mode[1] == 0) and np.all(flat.in_slope[1] == 0)
    broken = ed.set_tangent_preset(tr, [1], "Broken").curve
    assert np.all(broken.tangent_mode[1] == tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True))
    lin = ed.set_side_mode(tr, [2], "in", "Linear").curve
    assert np.all(
        lin.tangent_mode[2] == tangent_mode_bits(TangentMode.LINEAR, TangentMode.CLAMPED_AUTO, True)
    )
    secant = (tr.curve.value[2] - tr.curve.value[1]) / (T[2] - T[1])
    np.testing.assert_allclose(lin.in_slope[2], secant)
    const = ed.set_side_mode(tr, [2], "both", "Constant").curve
    assert np.all(const.tangent_mode[2] == 103) and np.all(np.isinf(const.out_slope[2]))
    w = ed.set_side_mode(tr, [2], "out", "Weighted").curve
    assert np.all(w.weighted_mode[2] == 2)
    toggled_off = ed.set_side_mode(tr.with_curve(w), [2], "out", "Weighted").curve
    assert np.all(toggled_off.weighted_mode[2] == 0)


def test_free_smooth_and_handle_slope():
    tr = euler_track()
    new = ed.set_slope(tr, 2, 0, "out", 123.0)
    assert new.curve.in_slope[2, 0] == new.curve.out_slope[2, 0] == 123.0
    assert new.curve.tangent_mode[2, 0] == 0
    broken = ed.set_tangent_preset(tr, [2], "Broken")
    one = ed.set_slope(broken, 2, 0, "in", -7.0)
    assert one.curve.in_slope[2, 0] == -7.0 and one.curve.out_slope[2, 0] == broken.curve.out_slope[2, 0]
    wt = ed.set_weight(tr, 1, 0, "out", 0.7)
    assert wt.curve.out_weight[1, 0] == pytest.approx(0.7)
    assert ed.set_weight(tr, 1, 0, "in", 3.0).curve.in_weight[1, 0] == 1.0  # clipped to the segment


def test_paste_finds_clashing_keys_as_the_pairwise_table_did():
    """``merge_keys`` finds the existing keys a paste replaces by binary search (the (N, K) table of
    time differences was 576 MB for 1,000 keys pasted into a 10-minute take): the same keys."""
    from curveeditor.engine.edit import _TIME_EPS, _near

    rng = np.random.default_rng(3)
    times = np.sort(rng.uniform(0, 10, 500))
    others = np.sort(
        np.concatenate([rng.choice(times, 40) + rng.uniform(-2e-6, 2e-6, 40), rng.uniform(0, 10, 60)])
    )
    table = np.any(np.abs(times[:, None] - others[None, :]) < _TIME_EPS, axis=1)
    assert table.any() and np.array_equal(_near(times, others, _TIME_EPS), table)
    assert not _near(times, others[:0], _TIME_EPS).any() and _near(times[:0], others, _TIME_EPS).shape == (0,)
