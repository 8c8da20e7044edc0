"""engine.frame_errors: the write check's error from frames + Slerp, on its one-array grid."""

from dataclasses import replace

import numpy as np
import pytest

from curveeditor.engine.clip import EULER, QUATERNION, RotationTrack, key_quaternions, played
from curveeditor.engine.frame_errors import frame_errors
from curveeditor.engine.resample import slerp
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle
from curveeditor.engine.tangents import make_curve


def _frames(n=120, rate=30.0, seed=3):
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    e = np.cumsum(rng.normal(0, 6, (n, 3)), axis=0)
    return t, e


def _written(t, e, kind=EULER, order="zxy"):
    """The frames keyed as the writer keys them (Linear), times and values as float32 (a file)."""
    t32 = t.astype(np.float32).astype(np.float64)
    if kind == EULER:
        curve = make_curve(t32, e, mode="linear")
    else:
        curve = make_curve(t32, euler_to_quat(e, order), mode="linear")
    fields = ("value", "in_slope", "out_slope")
    f32 = {k: getattr(curve, k).astype(np.float32).astype(np.float64) for k in fields}
    return RotationTrack("J", kind, curve.with_keys(**f32), order=order if kind == EULER else "zxy")


def _brute(t, q, track, samples):
    return geodesic_angle(played(track, samples), slerp(t, q, samples))


@pytest.mark.parametrize("kind", [EULER, QUATERNION])
def test_matches_the_generic_functions_on_its_grid(kind):
    t, e = _frames()
    q = euler_to_quat(e, "zxy")
    w = _written(t, e, kind)
    fe = frame_errors(t, q, w)
    assert fe is not None
    # Its grid: 34 samples per 1/30 s interval (1 kHz), the frames and the written key times.
    per = 34
    grid = (t[:-1, None] + np.diff(t)[:, None] * (np.arange(per) / per)[None, :]).ravel()
    samples = np.concatenate([grid, t[-1:], w.times])
    err = _brute(t, q, w, samples)
    assert fe.max_error == pytest.approx(err.max(), abs=1e-9)
    assert fe.worst_time == pytest.approx(samples[int(np.argmax(err))], abs=1e-9)
    np.testing.assert_allclose(fe.key_errors, geodesic_angle(played(w, t), q), atol=1e-12)
    # The figures are real: what Linear Euler / nlerp plays between frames is not the Slerp.
    assert fe.max_error > 10 * fe.key_errors.max()
    # Trapezoid rms over the grid.
    g = np.append(grid, t[-1])
    sq = _brute(t, q, w, g) ** 2
    rms = np.sqrt(np.sum(0.5 * (sq[1:] + sq[:-1]) * np.diff(g)) / (t[-1] - t[0]))
    assert fe.rms_error == pytest.approx(rms, rel=1e-9)


def test_agrees_with_the_union_grid_it_replaces():
    """The figures the write check printed before (checker grid over both key sets) and now."""
    from curveeditor.engine.reduce import dense_check_grid

    t, e = _frames(n=300, rate=25.0, seed=5)
    q = euler_to_quat(e, "zxy")
    w = _written(t, e)
    fe = frame_errors(t, q, w)
    keys = np.union1d(t, w.times)
    grid, _ = dense_check_grid(keys)
    old = _brute(t, q, w, grid).max()
    assert fe.max_error == pytest.approx(old, rel=2e-3)
    # Both are samples of what the file plays: at most its maximum (on a 25 kHz grid here).
    fine = np.linspace(t[0], t[-1], 25 * 12_000)
    true = _brute(t, q, w, np.concatenate([fine, t, w.times])).max()
    assert old <= true + 1e-12 and fe.max_error <= true + 1e-12
    assert fe.max_error == pytest.approx(true, rel=2e-3)


def test_memo_reuses_the_written_evaluation():
    t, e = _frames()
    q = euler_to_quat(e, "zxy")
    w = _written(t, e)
    memo: dict = {}
    a = frame_errors(t, q, w, memo=memo)
    assert len(memo) == 1
    b = frame_errors(t, q, w, memo=memo)
    assert (a.max_error, a.rms_error) == (b.max_error, b.rms_error)


def test_not_one_key_per_frame_is_left_to_the_generic_path():
    t, e = _frames()
    q = euler_to_quat(e, "zxy")
    w = _written(t, e)
    # A key added between frames (a --tolerance key).
    mid = 0.5 * (t[3] + t[4])
    extra = make_curve(np.sort(np.append(w.times, mid)), np.insert(e, 4, e[3], axis=0), mode="linear")
    assert frame_errors(t, q, replace(w, curve=extra)) is None
    # Weighted keys.
    wm = np.zeros_like(w.curve.weighted_mode)
    wm[5] = 3
    assert frame_errors(t, q, replace(w, curve=w.curve.with_keys(weighted_mode=wm))) is None
    # A stepped key.
    outs = w.curve.out_slope.copy()
    outs[7, 0] = np.inf
    assert frame_errors(t, q, replace(w, curve=w.curve.with_keys(out_slope=outs))) is None
    # Key times that moved off the frames by more than a grid step.
    shifted = w.curve.with_keys(time=w.times + 0.004 * (np.arange(len(t)) > 0))
    assert frame_errors(t, q, replace(w, curve=shifted)) is None


def test_a_wrong_file_shows():
    """A written key that plays another pose: the error is at that frame, in degrees."""
    t, e = _frames()
    q = euler_to_quat(e, "zxy")
    bad = e.copy()
    bad[40, 1] += 3.0
    w = _written(t, bad)
    fe = frame_errors(t, q, w)
    assert fe.key_errors[40] == pytest.approx(3.0, abs=1e-3)
    assert fe.max_error == pytest.approx(3.0, abs=1e-3)
    assert fe.worst_time == pytest.approx(t[40], abs=1e-6)
    assert key_quaternions(w).shape == (len(t), 4)
