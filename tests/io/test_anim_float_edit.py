"""Editable float curves in ``.anim`` files (issue 22): humanoid muscles of the VRChat Fist gesture
written back byte-identical when unchanged, minimal-diff when edited (the ``m_FloatCurves`` entry
and its ``m_EditorCurves`` mirror, nothing else), read back with the edited keys."""

from __future__ import annotations

import difflib

import numpy as np
import pytest

from curveeditor.engine import edit as ed
from curveeditor.engine import float_curves as fc
from curveeditor.io import read_clip, write_clip
from curveeditor.io.anim.bindings import float_binding

FIST = "anim/BlackStartx__VRC-Gesture-Manager__Resources_Gm_Animations_Gesture__GESTURE__Fist.anim"


@pytest.fixture
def fist(corpus_dir):
    return corpus_dir / FIST


def _diff(a, b) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(
            a.read_text().splitlines(), b.read_text().splitlines(), lineterm="", n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_unchanged_muscle_clip_is_byte_identical(fist, tmp_path):
    clip = read_clip(fist)
    floats = fc.float_tracks(clip)
    assert len(floats) == 40 and all(fc.category(f) == "humanoid" for f in floats)
    assert sum(1 for o in clip.other_tracks if o.meta.get("mirror_of")) == 40
    out = tmp_path / "same.anim"
    write_clip(clip, out)
    assert out.read_bytes() == fist.read_bytes()


def test_edited_muscle_writes_the_entry_and_its_editor_mirror_only(fist, tmp_path):
    clip = read_clip(fist)
    f = next(o for o in fc.float_tracks(clip) if o.attribute == "RightHand.Index.2 Stretched")
    moved = ed.move_keys(f, [1], 0.0, 0, -0.125)  # the same engine edit as a rotation key drag
    edited = fc.with_float_curve(clip, f.name, moved.curve)
    mirror = next(o for o in edited.other_tracks if o.meta.get("mirror_of") == f.name)
    assert np.array_equal(mirror.curve.value, moved.curve.value)  # the two never disagree
    out = tmp_path / "edited.anim"
    write_clip(edited, out)
    diff = _diff(fist, out)
    old_v = f"{f.curve.value[1, 0]:g}"
    new_v = f"{f.curve.value[1, 0] - 0.125:g}"
    assert sorted(diff) == sorted([f"-        value: {old_v}", f"+        value: {new_v}"] * 2), diff
    back = read_clip(out)
    for o in back.other_tracks:
        if o.name == f.name:
            assert np.allclose(o.curve.value[:, 0], moved.curve.value[:, 0])
    # undo = the original object back: byte-identical again
    write_clip(fc.with_float_curve(edited, f.name, f.curve), tmp_path / "undone.anim")
    assert (tmp_path / "undone.anim").read_bytes() == fist.read_bytes()


def test_inserted_and_deleted_keys_read_back(fist, tmp_path):
    clip = read_clip(fist)
    f = next(o for o in fc.float_tracks(clip) if o.attribute == "LeftHand.Thumb.Spread")
    t_mid = 0.5 * float(f.curve.time[0] + f.curve.time[-1])
    added, i = ed.insert_key(f, t_mid)
    assert added.n_keys == f.n_keys + 1
    out = tmp_path / "added.anim"
    write_clip(fc.with_float_curve(clip, f.name, added.curve), out)
    back = next(o for o in read_clip(out).other_tracks if o.name == f.name and o.kind == "float")
    assert np.allclose(back.curve.time, added.curve.time, atol=1e-6)
    assert np.allclose(back.curve.value, added.curve.value, atol=1e-6)
    one = ed.delete_keys(added, [0, i])
    out2 = tmp_path / "deleted.anim"
    write_clip(fc.with_float_curve(clip, f.name, one.curve), out2)
    back2 = next(o for o in read_clip(out2).other_tracks if o.name == f.name and o.kind == "float")
    assert back2.n_keys == one.n_keys


def test_muscle_names_order_groups_and_bindings():
    assert len(fc.HUMAN_MUSCLES) == 95
    assert fc.muscle_index("Spine Front-Back") == 0 and fc.muscle_index("Jaw Left-Right") == 20
    assert fc.muscle_index("LeftHand.Thumb.1 Stretched") == 55
    assert fc.muscle_index("RightHand.Little.3 Stretched") == 94
    # Unity's binding indices (shared/domain/unity-anim-format.md 4.5): muscles follow the goals at 42
    assert float_binding("", "Spine Front-Back", 95).attribute == 42
    assert float_binding("", "Jaw Left-Right", 95).attribute == 62
    assert float_binding("", "LeftHand.Thumb.1 Stretched", 95).attribute == 97
    assert float_binding("", "RightHand.Thumb.1 Stretched", 95).attribute == 117
    assert fc.body_part("Left Forearm Twist In-Out") == (19, "Left Forearm")
    assert fc.body_part("Left Eye In-Out")[1] == fc.body_part("Right Eye Down-Up")[1] == "Eyes"
    assert fc.body_part("RootQ.w") == (0, "Root and IK goals")
    assert fc.body_part("LeftHand.Index.Spread")[1] == "Left Hand fingers"
    parts = [fc.body_part(m)[0] for m in fc.HUMAN_MUSCLES]
    assert parts == sorted(parts)  # the groups follow Unity's muscle order
