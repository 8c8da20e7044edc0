"""A second implementation reads our glTF files: Blender's glTF importer (Debian's blender, headless;
needs python3-numpy). Skipped when Blender is absent. ``benchmarks/formats_io.py`` runs the same
check on the corpus's largest clips."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from curveeditor.engine.rotations import geodesic_angle
from curveeditor.io import read_clip, write_clip
from curveeditor.io.gltf import viewer_played

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("blender") is None, reason="Blender is not installed")


def _blender_rotations(glb: Path, fps: float, tmp_path: Path) -> dict:
    out = tmp_path / "blender.json"
    res = subprocess.run(
        [
            "blender",
            "-b",
            "--factory-startup",
            "--python",
            str(REPO / "benchmarks" / "blender_gltf.py"),
            "--",
            str(glb),
            str(out),
            str(fps),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if not out.exists():
        if "No module named 'numpy'" in res.stdout + res.stderr:
            pytest.skip("Blender's glTF importer needs python3-numpy")
        raise AssertionError(res.stdout[-2000:] + res.stderr[-2000:])
    return json.loads(out.read_text())


def _differences(glb: Path, tmp_path: Path) -> dict[str, float]:
    clip = read_clip(glb)
    data = _blender_rotations(glb, clip.frame_rate, tmp_path)
    out = {}
    for t in clip.tracks:
        b = np.asarray(data["objects"][t.path.rsplit("/", 1)[-1]])  # (w, x, y, z) in Blender's Z up
        unity = np.stack([b[:, 1], -b[:, 3], b[:, 2], b[:, 0]], axis=1)  # glTF (x, z, -y), X-mirrored
        times = (np.arange(len(b)) + data["start"]) / clip.frame_rate
        keep = times <= t.curve.end + 1e-9
        out[t.path] = float(geodesic_angle(unity[keep], viewer_played(t, times[keep])).max())
    return out


def test_blender_reads_our_frames(tmp_path):
    glb = tmp_path / "chain.glb"
    write_clip(read_clip(REPO / "tests" / "data" / "fbx" / "chain.bvh"), glb)
    diffs = _differences(glb, tmp_path)
    assert len(diffs) == 7 and max(diffs.values()) < 1e-3, diffs


def test_blender_reads_our_cubic_curves(tmp_path, samples_dir):
    """CUBICSPLINE: Blender agrees within 1e-3 deg on every demo track but ``Prop``, whose 34 keys are
    up to 1 s and 90 deg apart: there Blender 3.4 plays up to 0.17 deg off, where the spec's formula
    applied to the file's numbers agrees with our reader (``test_gltf.py``), so the difference is
    Blender's (measured, not hidden: the assertion below pins it)."""
    glb = tmp_path / "demo.glb"
    write_clip(read_clip(samples_dir / "demo.anim"), glb)
    diffs = _differences(glb, tmp_path)
    others = {p: d for p, d in diffs.items() if p != "Prop"}
    assert len(others) == 5 and max(others.values()) < 1e-3, diffs
    assert diffs["Prop"] < 0.5, diffs
