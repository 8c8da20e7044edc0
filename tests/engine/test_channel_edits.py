"""Per-curve key edits (issue 22 "Per-curve work"): the cells of an ``(N, 3)`` channel mask, nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine import edit as ed
from curveeditor.engine.clip import RotationTrack
from curveeditor.engine.curves import evaluate
from curveeditor.engine.rotations import euler_to_quat
from curveeditor.engine.tangents import make_curve


def _track(n=12, kind="euler"):
    t = np.arange(n) / 10.0
    e = np.stack([40 * np.sin(3 * t), 25 * np.cos(2 * t), 10 * t], axis=1)
    if kind == "euler":
        return RotationTrack("Hips/Spine", "euler", make_curve(t, e))
    return RotationTrack("Hips/Spine", "quaternion", make_curve(t, euler_to_quat(e, "zxy")))


def _grid(tr):
    return np.linspace(float(tr.times[0]) - 0.05, float(tr.times[-1]) + 0.05, 997)


def test_delete_on_one_channel_plays_like_a_delete_there_and_keeps_the_others_bit_for_bit():
    tr = _track()
    m = np.zeros((tr.n_keys, 3), dtype=bool)
    m[[4, 5], 0] = True
    new = ed.delete_channel_keys(tr, m)
    assert new.n_keys == tr.n_keys  # Y and Z keep their keys at those times
    g = _grid(tr)
    ref = ed.delete_keys(tr, [4, 5])
    np.testing.assert_allclose(evaluate(new.curve, g)[:, 0], evaluate(ref.curve, g)[:, 0], atol=1e-6)
    np.testing.assert_array_equal(evaluate(new.curve, g)[:, 1:], evaluate(tr.curve, g)[:, 1:])
    np.testing.assert_array_equal(new.curve.tangent_mode[:, 1:], tr.curve.tangent_mode[:, 1:])
    assert np.all(new.curve.tangent_mode[[4, 5], 0] == 0)  # Free Smooth pass-through points


def test_delete_on_every_channel_removes_the_key_and_quaternion_keys_go_whole():
    tr = _track()
    m = np.zeros((tr.n_keys, 3), dtype=bool)
    m[3] = True
    m[7, 1] = True
    new = ed.delete_channel_keys(tr, m)
    assert new.n_keys == tr.n_keys - 1
    assert 0.3 not in set(np.round(new.times, 6))
    q = _track(kind="quaternion")
    qm = np.zeros((q.n_keys, 3), dtype=bool)
    qm[2, 2] = True
    assert ed.delete_channel_keys(q, qm).n_keys == q.n_keys - 1


def test_tangent_preset_and_side_mode_change_only_the_masked_cells():
    tr = _track()
    m = np.zeros((tr.n_keys, 3), dtype=bool)
    m[5, 1] = True
    new = ed.set_tangent_preset(tr, [5], "Flat", channels=m)
    assert new.curve.in_slope[5, 1] == 0.0 and new.curve.out_slope[5, 1] == 0.0
    assert new.curve.tangent_mode[5, 1] == 0
    changed = new.curve.tangent_mode != tr.curve.tangent_mode
    assert changed.sum() == 1 and changed[5, 1]
    np.testing.assert_array_equal(new.curve.in_slope[:, [0, 2]], tr.curve.in_slope[:, [0, 2]])
    lin = ed.set_side_mode(tr, [5], "out", "Linear", channels=m)
    changed = lin.curve.tangent_mode != tr.curve.tangent_mode
    assert changed.sum() == 1 and changed[5, 1]


def test_move_keys_value_mask_adds_to_the_masked_cells_only():
    tr = _track()
    m = np.zeros((tr.n_keys, 3), dtype=bool)
    m[2, 0] = m[6, 2] = True
    new = ed.move_keys(tr, [2, 6], 0.0, None, 5.0, value_mask=m)
    d = new.curve.value - tr.curve.value
    expect = np.where(m, 5.0, 0.0)
    np.testing.assert_allclose(d, expect, atol=1e-12)


def test_paste_on_one_channel_leaves_the_other_channels_playing_as_before():
    tr = _track()
    keys = ed.copy_keys(tr, [2])
    ch = np.array([[True, False, False]])
    new, idx = ed.paste_channel_keys(tr, keys, 0.55, ch)  # between keys 5 and 6
    assert new.n_keys == tr.n_keys + 1
    i = int(idx[0])
    assert new.curve.time[i] == pytest.approx(0.55)
    assert new.curve.value[i, 0] == pytest.approx(tr.curve.value[2, 0])
    g = _grid(tr)
    np.testing.assert_allclose(evaluate(new.curve, g)[:, 1:], evaluate(tr.curve, g)[:, 1:], atol=1e-6)
    # pasting onto an existing key time keeps that key's other channels
    new2, idx2 = ed.paste_channel_keys(tr, keys, 0.5, ch)
    assert new2.n_keys == tr.n_keys
    j = int(idx2[0])
    np.testing.assert_array_equal(new2.curve.value[j, 1:], tr.curve.value[5, 1:])
    assert new2.curve.value[j, 0] == pytest.approx(tr.curve.value[2, 0])
