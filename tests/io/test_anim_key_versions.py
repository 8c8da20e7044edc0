"""Keyframe layouts of the ``.anim`` files the writer makes (issue 21: a BVH's ``.anim`` size).

A new clip's unweighted curves are written as serializedVersion 2 keys (Unity 5.3-2017's layout: no
``weightedMode``/``inWeight``/``outWeight``, which Unity reads as unweighted with weights 1/3); a curve
with weights gets serializedVersion 3 keys, so nothing of it is lost. Editing such a file later keeps
weights too (its 2018.2+ header says the target Unity knows them); a Unity 2017 file still says what
its layout cannot hold.
"""

from __future__ import annotations

import re

import numpy as np

from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import DEFAULT_WEIGHT
from curveeditor.engine.edit import set_side_mode, set_weight
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, write_clip
from curveeditor.io.anim import anim_text
from tests.conftest import with_weights

T = np.arange(6) / 30.0
E = np.stack([np.sin(3 * T) * 40, np.cos(2 * T) * 20, T * 30], axis=1)


def _versions(text: str) -> list[str]:
    """The ``serializedVersion`` of every key, in file order."""
    return re.findall(r"^ {6}- serializedVersion: (\d)$", text, flags=re.M)


def _clip(*curves) -> Clip:
    return Clip("k", 30.0, [RotationTrack(f"Bone{i}", "euler", c) for i, c in enumerate(curves)])


def _x_cell(i: int) -> np.ndarray:
    """The ``(N, 3)`` selection of key ``i``'s x component."""
    cells = np.zeros((len(T), 3), dtype=bool)
    cells[i, 0] = True
    return cells


def test_unweighted_curves_are_written_without_weight_fields_and_read_back_the_same(tmp_path):
    clip = _clip(make_curve(T, E))
    out = tmp_path / "a.anim"
    write_clip(clip, out)
    text = out.read_text()
    assert set(_versions(text)) == {"2"} and len(_versions(text)) == 6 * 4  # runtime + 3 editor curves
    assert "weightedMode" not in text and "inWeight" not in text and "outWeight" not in text
    back = read_clip(out).tracks[0].curve
    assert np.all(back.weighted_mode == 0)
    assert np.all(back.in_weight == DEFAULT_WEIGHT) and np.all(back.out_weight == DEFAULT_WEIGHT)
    src = clip.tracks[0].curve
    np.testing.assert_array_equal(back.value, src.value.astype(np.float32).astype(np.float64))


def test_a_curve_with_weights_keeps_them_in_version_3_keys(tmp_path):
    weighted = set_weight(
        set_side_mode(_clip(make_curve(T, E)).tracks[0], [2], "out", "Weighted", channels=_x_cell(2)),
        2,
        0,
        "out",
        0.6,
    )
    clip = Clip(
        "k",
        30.0,
        [
            weighted,
            RotationTrack("Plain", "euler", make_curve(T, E)),
            RotationTrack("Heavy", "euler", with_weights(make_curve(T, E))),
        ],
    )
    out = tmp_path / "w.anim"
    write_clip(clip, out)
    back = read_clip(out)
    # (the runtime vector key holds one weightedMode: y and z read back out-weighted at 1/3, the
    # same cubic)
    assert back.tracks[0].curve.weighted_mode[2, 0] == 2
    assert back.tracks[0].curve.out_weight[2, 0] == np.float32(0.6)
    assert np.all(back.track("Heavy").curve.in_weight == np.float32(0.25))  # unweighted, not default
    # Per curve: the weighted track's runtime curve and its x editor curve (the weighted side) in
    # version 3, the Plain track in version 2; Heavy's every curve in 3.
    text = anim_text(clip)[0]
    runtime = text[: text.index("  m_PositionCurves:")]
    assert _versions(runtime) == ["3"] * 6 + ["2"] * 6 + ["3"] * 6
    editor = text[text.index("  m_EditorCurves:") :]
    assert _versions(editor) == ["3"] * 6 + ["2"] * 12 + ["2"] * 18 + ["3"] * 18


def test_weights_edited_into_a_written_file_are_kept_and_not_warned(tmp_path):
    first = tmp_path / "first.anim"
    write_clip(_clip(make_curve(T, E)), first)
    clip = read_clip(first)
    edited = set_weight(set_side_mode(clip.tracks[0], [3], "in", "Weighted"), 3, 1, "in", 0.7)
    out = tmp_path / "second.anim"
    warnings = write_clip(clip.with_track(edited), out)
    assert not [w for w in warnings if "weight" in w]
    back = read_clip(out).tracks[0].curve
    assert back.weighted_mode[3, 1] == 1 and back.in_weight[3, 1] == np.float32(0.7)


def test_a_written_file_saved_again_unchanged_is_byte_identical(tmp_path):
    first = tmp_path / "first.anim"
    write_clip(_clip(make_curve(T, E), with_weights(make_curve(T, E))), first)
    again = tmp_path / "again.anim"
    write_clip(read_clip(first), again)
    assert again.read_bytes() == first.read_bytes()
