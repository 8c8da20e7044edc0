""".anim load and save speed against PyYAML's C loader and unityparser.

Run: ``.venv/bin/python benchmarks/anim_io.py`` (unityparser is optional: ``pip install unityparser``;
its rows are skipped when it is missing). About a minute on the shared 2-core machine, most of it
unityparser.

Files: the three largest clips of ``../shared/corpus/anim`` and a synthesized 3 MB humanoid-like clip.
The corpus copy here has no 3 MB clip (its largest is 363 KB), so one is written with our own writer:
130 ``classID 95`` float curves (the 5 IK/root quartets ``RootQ``, ``LeftFootQ`` ... as rotation
tracks plus 110 other muscle/T curves), 48 keys each at 30 fps, mirrored in ``m_EditorCurves`` like
Unity's humanoid clips: 3.0 MB, keyframe serializedVersion 3.

Load columns: ``ours`` = :func:`read_anim` (file to Clip with numpy arrays and the lossless document);
``CSafeLoader`` = ``yaml.load(text, Loader=yaml.CSafeLoader)`` on the text with the ``%TAG`` line and
the ``!u!74 &...`` tag removed (the stripping is not timed; only the C parser plus PyYAML's
constructor); ``unityparser`` = ``UnityDocument.load_yaml(path)``. Save columns: ``ours`` unchanged
(byte-identical re-emit), ``ours edit`` (one rotation track edited: that track's blocks regenerated),
``ours new`` (whole file generated, no source), ``CSafeDumper`` = ``yaml.dump(data, Dumper=CSafeDumper)``
of the loaded dict, ``unityparser`` = ``doc.dump_yaml(path)``. Each figure is the best of a few repeats
(the machine is shared); unityparser runs once on the 3 MB file.
Goal (issue 3): on the 3 MB humanoid clip, load >= 5x faster than CSafeLoader and >= 25x faster than
unityparser.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack  # noqa: E402
from curveeditor.engine.rotations import euler_to_quat, quat_mul  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402
from curveeditor.io.anim import anim_text, read_anim, write_anim  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "anim"

try:
    from unityparser import UnityDocument
except ImportError:  # pragma: no cover - optional benchmark dependency
    UnityDocument = None


def best(fn, repeat=3):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def humanoid_clip(keys: int = 48, extra_curves: int = 110) -> Clip:
    """A humanoid-like clip: 5 IK/root quaternion quartets + ``extra_curves`` muscle/T float curves."""
    rng = np.random.default_rng(7)
    t = np.arange(keys) / 30.0
    tracks = []
    for name in ("RootQ", "LeftFootQ", "RightFootQ", "LeftHandQ", "RightHandQ"):
        amp = rng.uniform(10, 60, 3)
        e = amp * np.sin(2 * np.pi * rng.uniform(0.2, 1.5, 3) * t[:, None] + rng.uniform(0, 6, 3))
        q = euler_to_quat(e, "zxy")
        curve = make_curve(t, q, "clamped_auto")
        tracks.append(RotationTrack(name, "quaternion", curve, meta={"humanoid": name}))
    others = []
    for i in range(extra_curves):
        v = rng.uniform(-1, 1) * np.sin(2 * np.pi * rng.uniform(0.2, 2.0) * t + rng.uniform(0, 6))
        v += rng.normal(0, 0.01, keys)
        attr = (
            f"Muscle {i} Front-Back"
            if i >= 15
            else f"{['Root', 'LeftFoot', 'RightFoot', 'LeftHand', 'RightHand'][i // 3]}T.{'xyz'[i % 3]}"
        )
        others.append(
            OtherTrack("", attr, "float", make_curve(t, v[:, None], "clamped_auto"), t, {"class_id": 95})
        )
    return Clip("Synthetic Humanoid", 30.0, tracks, others)


def strip_tags(text: str) -> str:
    text = re.sub(r"^%TAG.*\n", "", text, flags=re.M)
    return re.sub(r"^--- !u!\d+ &\d+", "---", text, flags=re.M)


def edit_first(clip: Clip) -> Clip:
    t = clip.tracks[0]
    c = t.curve
    if t.kind == "quaternion":
        r = np.array([0.0, np.sin(np.deg2rad(2.5)), 0.0, np.cos(np.deg2rad(2.5))])
        v = quat_mul(np.broadcast_to(r, c.value.shape), c.value)
    else:
        v = c.value + np.array([0.0, 5.0, 0.0])
    return clip.with_track(replace(t, curve=c.with_keys(value=v)))


def bench(path: Path, rows: list, run_unityparser: bool) -> None:
    text = path.read_text(encoding="utf-8")
    stripped = strip_tags(text)
    size = path.stat().st_size
    t_ours, clip = best(lambda: read_anim(path), 5)
    t_yaml, data = best(lambda: yaml.load(stripped, Loader=yaml.CSafeLoader), 3 if size > 1e6 else 5)
    t_up = None
    doc = None
    if run_unityparser and UnityDocument is not None:
        t_up, doc = best(lambda: UnityDocument.load_yaml(str(path)), 1 if size > 1e6 else 2)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out.anim"
        s_same, _ = best(lambda: write_anim(clip, out), 3)
        assert out.read_bytes() == path.read_bytes()
        edited = edit_first(clip) if clip.tracks else clip
        s_edit, _ = best(lambda: write_anim(edited, out), 3)
        fresh = replace(clip, source=None)
        s_new, _ = best(lambda: anim_text(fresh), 2)
        s_dump, _ = best(lambda: yaml.dump(data, Dumper=yaml.CSafeDumper), 2)
        s_up = None
        if doc is not None:
            s_up, _ = best(lambda: doc.dump_yaml(str(Path(d) / "up.anim")), 1)
    rows.append((path.name[:48], size, t_ours, t_yaml, t_up, s_same, s_edit, s_new, s_dump, s_up))


def fmt(x):
    return "      -" if x is None else f"{x:7.3f}"


def main() -> None:
    rows: list = []
    with tempfile.TemporaryDirectory() as d:
        synth = Path(d) / "Synthetic_Humanoid_3MB.anim"
        write_anim(humanoid_clip(), synth)
        bench(synth, rows, True)
        if CORPUS.is_dir():
            largest = sorted(CORPUS.glob("*.anim"), key=lambda p: p.stat().st_size)[-3:][::-1]
            for p in largest:
                bench(p, rows, True)
    print(f"unityparser: {'installed' if UnityDocument else 'NOT installed (rows skipped)'}")
    print()
    print("LOAD (seconds, best of repeats)")
    hdr = f"{'file':48} {'bytes':>9} {'ours':>7} {'CSafe':>7} {'unitypr':>7} {'xCSafe':>7} {'xunitypr':>8}"
    print(hdr)
    for name, size, t, ty, tu, *_ in rows:
        ru = f"{tu / t:8.1f}" if tu else "       -"
        print(f"{name:48} {size:9d} {fmt(t)} {fmt(ty)} {fmt(tu)} {ty / t:7.1f} {ru}")
    print()
    print("SAVE (seconds)")
    print(f"{'file':48} {'same':>7} {'edit1':>7} {'new':>7} {'CSafeDmp':>8} {'unitypr':>7}")
    for name, _, _, _, _, ss, se, sn, sd, su in rows:
        print(f"{name:48} {fmt(ss)} {fmt(se)} {fmt(sn)} {sd:8.3f} {fmt(su)}")
    name, size, t, ty, tu, *_ = rows[0]
    print()
    ok1 = ty / t >= 5
    print(
        f"goal: 3 MB humanoid load >= 5x faster than CSafeLoader: {ty / t:.1f}x  {'PASS' if ok1 else 'FAIL'}"
    )
    if tu:
        ok2 = tu / t >= 25
        print(
            f"goal: 3 MB humanoid load >= 25x faster than unityparser: {tu / t:.1f}x  "
            f"{'PASS' if ok2 else 'FAIL'}"
        )


if __name__ == "__main__":
    main()
