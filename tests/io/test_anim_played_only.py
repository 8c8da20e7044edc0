"""``.anim`` with only the curves Unity plays (``editor_curves=False``, ``--no-editor-curves``, the
editor's "Export .anim (played curves only)"; issue 21's compact own-order ``.anim``): empty editor
lists, the runtime curves of the full write, the same tracks read back, and a warning naming what the
Animation window loses."""

from __future__ import annotations

import re

import numpy as np
import pytest

from curveeditor.cli import main
from curveeditor.engine.recipe import Recipe
from curveeditor.io import read_clip, write_checked
from curveeditor.io.anim.writer import NO_EDITOR_CURVES
from curveeditor.resources import SAMPLES_DIR
from tests.conftest import corpus_files

WALK = [p for p in corpus_files("bvh", "*cmu_12_01_walk.bvh")]
LIST = re.compile(rb"^  (m_\w+):", re.M)
MODE = re.compile(rb"tangentMode: -?\d+")


def _bvh(path, frames: int = 40) -> None:
    """A two-joint ZYX BVH (as CMU's) with a swinging child."""
    rows = []
    for k in range(frames):
        a = 40 * np.sin(k / 5)
        rows.append(f"0 90 0 {a:.4f} {a / 2:.4f} {-a / 3:.4f} {2 * a:.4f} {a:.4f} {10 + a / 4:.4f}")
    path.write_text(
        "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\n"
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n"
        "JOINT Knee\n{\nOFFSET 0 -1 0\nCHANNELS 3 Zrotation Yrotation Xrotation\n"
        "End Site\n{\nOFFSET 0 -1 0\n}\n}\n}\n"
        f"MOTION\nFrames: {frames}\nFrame Time: 0.008333333\n" + "\n".join(rows) + "\n"
    )


def _lists(data: bytes) -> dict[str, bytes]:
    """Top-level field name -> its text (header line included)."""
    marks = [(m.group(1).decode(), m.start()) for m in LIST.finditer(data)]
    return {
        name: data[start : marks[i + 1][1] if i + 1 < len(marks) else len(data)]
        for i, (name, start) in enumerate(marks)
    }


def _same_tracks(a, b) -> None:
    assert [t.path for t in a.tracks] == [t.path for t in b.tracks]
    for x, y in zip(a.tracks, b.tracks, strict=True):
        assert (x.kind, x.order) == (y.kind, y.order)
        np.testing.assert_array_equal(x.times, y.times)
        for field in ("value", "in_slope", "out_slope", "tangent_mode"):
            np.testing.assert_array_equal(getattr(x.curve, field), getattr(y.curve, field), err_msg=x.path)


@pytest.mark.parametrize("source", ["generated", *WALK], ids=lambda p: getattr(p, "stem", p)[-14:])
def test_a_bvh_written_with_played_curves_only_keeps_its_runtime_curves(tmp_path, source):
    if source == "generated":
        source = tmp_path / "swing.bvh"
        _bvh(source)
    clip = read_clip(source)
    full, played = tmp_path / "full.anim", tmp_path / "played.anim"
    write_checked(clip, full)
    check = write_checked(clip, played, editor_curves=False)
    assert NO_EDITOR_CURVES in check.warnings
    a, b = _lists(full.read_bytes()), _lists(played.read_bytes())
    assert b"localEulerAnglesRaw" in a["m_EditorCurves"]
    assert b["m_EditorCurves"] == b"  m_EditorCurves: []\n"
    assert b["m_EulerEditorCurves"] == b"  m_EulerEditorCurves: []\n"
    # The runtime lists are the full write's but for the tangent modes the editor curves held:
    # the runtime keys carry them now (Linear/Linear broken, 69, for a BVH's frames).
    for name in ("m_EulerCurves", "m_PositionCurves", "m_ClipBindingConstant"):
        assert MODE.sub(b"", b[name]) == MODE.sub(b"", a[name]), name
    assert b"tangentMode: 0\n" in a["m_EulerCurves"] and b"tangentMode: 0\n" not in b["m_EulerCurves"]
    assert b"tangentMode: 69" in b["m_EulerCurves"]
    assert played.stat().st_size < 0.4 * full.stat().st_size
    # Same tracks read back: keys, values, slopes, tangent modes and each joint's own order (the
    # BVH's intrinsic ZYX, m_RotationOrder 0: extrinsic xyz).
    _same_tracks(read_clip(played), read_clip(full))
    assert {t.order for t in read_clip(played).tracks} == {"xyz"}


def test_an_anim_with_editor_curves_drops_them_and_keeps_the_rest_byte_for_byte(tmp_path):
    src = SAMPLES_DIR / "demo.anim"
    clip = read_clip(src)
    out = tmp_path / "played.anim"
    check = write_checked(clip, out, editor_curves=False)
    assert NO_EDITOR_CURVES in check.warnings
    a, b = _lists(src.read_bytes()), _lists(out.read_bytes())
    assert a["m_EditorCurves"] != b"  m_EditorCurves: []\n"
    assert b["m_EditorCurves"] == b"  m_EditorCurves: []\n"
    assert b["m_EulerEditorCurves"] == b"  m_EulerEditorCurves: []\n"
    # The other lists stay as they were, but for the tangent modes the editor curves held (136,
    # ClampedAuto, on this clip's keys), which its runtime keys carry now.
    assert {k: v for k, v in a.items() if "Editor" not in k} == {
        k: MODE.sub(b"tangentMode: 0", v) for k, v in b.items() if "Editor" not in k
    }
    assert b"tangentMode: 136" in b["m_EulerCurves"] + b["m_RotationCurves"]
    _same_tracks(read_clip(out), clip)


def test_per_channel_keys_without_editor_curves_are_written_at_their_union_and_named(tmp_path):
    src = tmp_path / "swing.bvh"
    _bvh(src, 120)
    recipe = Recipe.of({"op": "reduce", "max_error": 0.5, "per_channel": True})
    from curveeditor.engine.recipe import run_recipe

    reduced = run_recipe(read_clip(src), recipe).clip
    per_channel = [t for t in reduced.tracks if t.curve.channel_keys is not None]
    assert per_channel
    out = tmp_path / "played.anim"
    check = write_checked(reduced, out, editor_curves=False)
    named = [w for w in check.warnings if "union of their times" in w]
    assert len(named) == len(per_channel)
    again = read_clip(out)
    for t in per_channel:
        assert again.track(t.path).n_keys == t.n_keys  # one runtime key holds every channel
    # A key added to a channel splits its Hermite segment exactly: the file plays the reduced clip.
    assert max(t.figures.max_error for t in check.tracks) < 1e-3


def test_cli_flag_on_convert_clean_and_batch(tmp_path, capsys):
    src = tmp_path / "swing.bvh"
    _bvh(src)
    assert main(["convert", str(src), str(tmp_path / "c.anim"), "--no-editor-curves", "--quiet"]) == 0
    assert b"m_EditorCurves: []" in (tmp_path / "c.anim").read_bytes()
    assert "editor curves not written" in capsys.readouterr().err
    out = tmp_path / "c.csv"
    assert main(["convert", str(src), str(out), "--no-editor-curves", "--quiet"]) == 2
    assert "--no-editor-curves applies to .anim outputs only" in capsys.readouterr().err and not out.exists()
    cleaned = tmp_path / "u.anim"
    assert main(["clean", str(src), "-o", str(cleaned), "--unwrap", "--no-editor-curves", "--quiet"]) == 0
    data = cleaned.read_bytes()
    assert b"m_EditorCurves: []" in data and b"m_EulerEditorCurves: []" in data
    capsys.readouterr()
    recipe = tmp_path / "r.json"
    recipe.write_text('{"version": 1, "steps": [{"op": "unwrap"}]}')
    argv = ["batch", str(src), "-o", str(tmp_path / "b"), "--recipe", str(recipe), "--progress", "none"]
    assert main([*argv, "--no-editor-curves"]) == 0
    assert b"m_EditorCurves: []" in (tmp_path / "b" / "swing.anim").read_bytes()
    argv[3] = str(tmp_path / "b2")
    assert main(argv) == 0
    assert b"localEulerAnglesRaw" in (tmp_path / "b2" / "swing.anim").read_bytes()


@pytest.mark.parametrize("name", ["*LoadedAnimationanim.anim", "*PlastAR__Assets_mixamo.com.anim"])
def test_a_clip_without_editor_curves_is_written_byte_for_byte_and_unwarned(tmp_path, name):
    found = corpus_files("anim", name)
    if not found:
        pytest.skip("../shared/corpus is not present")
    out = tmp_path / "same.anim"
    check = write_checked(read_clip(found[0]), out, editor_curves=False)
    assert out.read_bytes() == found[0].read_bytes()
    assert NO_EDITOR_CURVES not in check.warnings
