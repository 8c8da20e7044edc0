"""Order and kind conversion: same pose at every key, continuous, winding kept, played motion close."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curveeditor.engine.analysis import inspect_track
from curveeditor.engine.clip import RotationTrack, key_quaternions, played
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.reorder import convert_kind, convert_order, euler_chain
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle, middle_axis, quat_dot, quat_to_euler
from curveeditor.engine.tangents import make_curve


def euler_track(e, rate=30.0, order="zxy", mode="clamped_auto") -> RotationTrack:
    t = np.arange(len(e)) / rate
    return RotationTrack("j", "euler", make_curve(t, np.asarray(e, float), mode=mode), order=order)


def pose_at_source_keys(src: RotationTrack, out: RotationTrack) -> float:
    idx = np.searchsorted(out.times, src.times)
    np.testing.assert_allclose(out.times[idx], src.times)
    return float(geodesic_angle(key_quaternions(out)[idx], key_quaternions(src)).max())


def test_convert_order_keeps_pose_and_motion():
    t = np.arange(90) / 30.0
    e = np.stack([30 * np.sin(t), 120 * t, 20 * np.cos(2 * t)], axis=1)
    src = euler_track(e, order="ZXY")
    out = convert_order(src, "xyz")
    assert out.order == "xyz" and out.kind == "euler"
    assert pose_at_source_keys(src, out) < 1e-9
    assert diff_tracks(src, out).max_error <= 0.01
    rep = inspect_track(out)
    assert rep.wrap_jumps == 0 and rep.euler_flips == 0


def test_spin_between_keys_survives_both_conversions():
    t = np.arange(5) * 0.5
    e = np.stack([np.zeros(5), np.arange(5) * 180.0, np.zeros(5)], axis=1)  # 720 deg, 180 per key
    src = RotationTrack("s", "euler", make_curve(t, e, mode="linear"))
    q = convert_kind(src, "quaternion")
    assert q.kind == "quaternion"
    kq = q.curve.value
    steps = geodesic_angle(kq[:-1], kq[1:])
    assert steps.max() < 180.0 and np.all(quat_dot(kq[:-1], kq[1:]) > 0)
    assert q.n_keys > 5  # keys inserted where the Euler segments spin
    assert diff_tracks(src, q).max_error <= 0.01
    back = convert_kind(q, "euler", order="zxy")
    assert abs(back.curve.value[-1, 1] - back.curve.value[0, 1]) == pytest.approx(720.0, abs=1e-6)
    assert diff_tracks(src, back).max_error <= 0.01
    other = convert_order(src, "XYZ")
    assert diff_tracks(src, other).max_error <= 0.01


def test_quaternion_to_euler_is_continuous():
    t = np.arange(200) / 60.0
    e = np.stack([10 * np.sin(3 * t), 250 * t, 5 * t], axis=1)
    src = RotationTrack("q", "quaternion", make_curve(t, euler_to_quat(e), mode="auto"))
    out = convert_kind(src, "euler")
    assert out.order == "zxy"
    assert pose_at_source_keys(src, out) < 1e-9
    assert inspect_track(out).wrap_jumps == 0
    assert out.curve.value[-1, 1] - out.curve.value[0, 1] > 700


def test_euler_chain_continues_from_start():
    q = euler_to_quat(np.array([[0.0, 350.0, 0.0], [0.0, 355.0, 0.0]]))
    e = euler_chain(q, "zxy", np.array([0.0, 710.0, 0.0]))
    np.testing.assert_allclose(e[:, 1], [710.0, 715.0], atol=1e-9)


def test_bad_arguments():
    src = euler_track(np.zeros((4, 3)))
    with pytest.raises(ValueError):
        convert_order(src, "xxy")
    with pytest.raises(ValueError, match="kind"):
        convert_kind(src, "matrix")
    assert convert_order(src, "zxy") is src


angles = st.floats(-120.0, 120.0, allow_nan=False)


@settings(deadline=None, max_examples=50)
@given(
    st.lists(st.tuples(angles, angles, angles), min_size=2, max_size=15),
    st.sampled_from(["zxy", "XYZ", "yzx", "ZYX"]),
    st.sampled_from(["xyz", "zxy", "YXZ"]),
    st.sampled_from(["clamped_auto", "linear", "auto"]),
)
def test_property_reorder_keeps_pose_at_every_key(values, order, new_order, mode):
    e = np.cumsum(np.asarray(values) * 0.5, axis=0)
    src = euler_track(e, order=order, mode=mode)
    # Through gimbal lock of the new order no Euler curve follows the motion closely (the outer
    # channels swing by up to 180 deg in an instant): the pose-at-keys property still holds there.
    dense = played(src, np.linspace(src.times[0], src.times[-1], 400))
    near_lock = np.abs(quat_to_euler(dense, new_order)[:, middle_axis(new_order)]) > 80.0
    out = convert_order(src, new_order)
    assert pose_at_source_keys(src, out) < 1e-6
    q = convert_kind(src, "quaternion")
    assert pose_at_source_keys(src, q) < 1e-6
    kq = q.curve.value
    assert np.all(geodesic_angle(kq[:-1], kq[1:]) < 180.0)
    if not np.any(near_lock):
        grid = np.linspace(src.times[0], src.times[-1], 400)
        assert geodesic_angle(played(out, grid), played(src, grid)).max() < 0.05


def test_rekey_bound_holds_between_the_source_grid_points_near_gimbal_lock():
    # A path that grazes ZXY's gimbal lock (x -> -90): the zxy decomposition swings fast, rekey adds
    # keys ~1 ms apart, and checking only on the source's 1 kHz grid let 0.17-0.26 deg through.
    from curveeditor.engine.reorder import DEFAULT_MAX_ERROR_DEG, rekey

    t = np.arange(0, 2.0001, 1 / 30)
    g = np.linspace(0, 2, 400001)
    for miss in (0.01, 0.05, 0.2):
        zxy = np.stack([-90 + miss + 400 * (t - 1.01) ** 2, 20 * t, 10 * t], axis=1)
        src_e = np.degrees(np.unwrap(np.radians(quat_to_euler(euler_to_quat(zxy, "zxy"), "ZXY")), axis=0))
        src = RotationTrack("g", "euler", make_curve(t, src_e), order="ZXY")
        out = rekey(src, "euler", "zxy")
        assert geodesic_angle(played(src, g), played(out, g)).max() <= DEFAULT_MAX_ERROR_DEG + 1e-6


# The fuzz run's last hang (issue 11, seed 11 case 6745): a CSV quaternion track with one key at 1e6 s.
_FAR_KEY_QUATS = [
    (0.0, (-0.26210900223793543, -0.16475726219017578, 0.7687324781394242, -0.5596465782572528)),
    (0.2, (0.26484473423336674, -0.5608868346185713, -0.2031275457540323, -0.7576294778164063)),
    (0.3, (-0.8308600342837347, 0.045967498114604204, 0.5028852121001341, 0.23380559445427737)),
    (0.4, (0.8417840639716885, -0.0009427937176823914, 0.16269163303216116, 0.5147136420619165)),
    (0.5, (0.6324609488251584, -0.4398743468568259, -0.5010850905318759, 0.3942301855960842)),
    (0.6, (-0.004020228118660436, -0.7590858059120555, 0.4999796622987612, -0.4168847734282647)),
    (0.7, (-0.4105439175587895, -0.8825898108396235, -0.21664988045533784, 0.07451004533784172)),
    (0.8, (0.30145952764860356, -0.6324692054210969, 0.43234995432791845, 0.5676075883711688)),
    (0.9, (-0.41237739583426825, 0.13576804381232901, -0.4984647871300255, -0.7503630972240966)),
    (1.0, (0.01634147565390495, 0.40205322637174995, -0.08490946427336163, -0.9115242960087954)),
    (1.1, (-0.4279846484064313, 0.3834364979789787, -0.2068251285971179, 0.7918516015812721)),
    (1.2, (-0.6465260450712592, -0.5915173065795438, -0.47773317135815946, -0.06230863540050886)),
    (1e6, (0.07614951213603696, -0.5383894747592909, -0.41915070839249585, 0.7270837014566668)),
]


def test_rekey_bounds_its_checker_grid_on_a_segment_spanning_1e6_seconds(monkeypatch, tmp_path):
    """A segment over 180 deg across 1e6 s densifies to ~1,000 intervals of ~1,000 s; at 1 kHz with
    2,000 samples per interval the old checker grid held 2 M samples per round, 12 rounds (26 s): the
    grid is now bounded per round (reorder.REKEY_GRID_SAMPLES) and the result still keeps every key."""
    from curveeditor.engine import reorder
    from curveeditor.engine.recipe import Recipe, run_recipe
    from curveeditor.io import read_clip

    # As the CSV reader and `clean --unwrap` hand the track to the .anim writer.
    rows = ["path,time,x,y,z,qx,qy,qz,qw"]
    rows += [f"Spine,{t!r},,,,{q[0]!r},{q[1]!r},{q[2]!r},{q[3]!r}" for t, q in _FAR_KEY_QUATS]
    (tmp_path / "far.csv").write_text("\n".join(rows) + "\n")
    clip = run_recipe(read_clip(str(tmp_path / "far.csv")), Recipe.of({"op": "unwrap"})).clip
    src = clip.track("Spine")
    sizes = []
    grid_fn = reorder.dense_check_grid

    def recording(times, *a, **k):
        out = grid_fn(times, *a, **k)
        sizes.append(out[0].shape[0])
        return out

    monkeypatch.setattr(reorder, "dense_check_grid", recording)
    out = reorder.rekey(src, "quaternion", "zxy")
    assert sizes and max(sizes) <= 250_001  # reorder.REKEY_GRID_SAMPLES (+ the closing key)
    assert np.all(np.isin(src.times, out.times))
    # Every source key keeps its pose.
    assert float(geodesic_angle(played(out, src.times), key_quaternions(src)).max()) < 1e-6


def test_dense_check_grid_max_samples_thins_long_intervals_only():
    from curveeditor.engine.reduce import dense_check_grid

    t = np.array([0.0, 0.01, 0.02, 1000.0, 2000.0])
    full, _ = dense_check_grid(t)
    assert full.shape[0] == 10 + 10 + 2000 + 2000 + 1
    grid, start = dense_check_grid(t, max_samples=1000)
    assert grid.shape[0] <= 1001
    assert np.array_equal(grid[start], t)  # every key on the grid
    per = np.diff(start)
    assert per[0] == 10 and per[1] == 10 and per[2] >= 10 and per[3] >= 10
    same, _ = dense_check_grid(t, max_samples=10**6)
    assert np.array_equal(same, full)
