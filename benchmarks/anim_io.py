""".anim write and read speed and memory on real and generated clips, against PyYAML's C loader.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/anim_io.py`` (a few minutes on the shared 2-core
machine; ``--quick`` writes only the largest BVH, not the 100 MB file or the generated clip).

Every figure is measured in a child process (a fresh interpreter per step, so one step's memory
does not hide another's): the child imports the code, then times only the step and reports its own
peak RSS (``VmHWM`` of ``/proc/self/status``, which includes reading the source for a write;
``ru_maxrss`` would include the parent's high-water mark, which Linux carries across exec).

A write is measured four times, each in its own child: the **checked write** (``io.write_checked``,
what ``convert X.bvh X.anim`` runs: key the frames, render, stream into the temp file, read the temp
file back with our reader, compare with the source, rename; by default the comparison runs ahead,
beside the render and the read-back, when the load average leaves a core free
(``io.check_ahead.CHECK_AHEAD = None``), in a forked child of the benchmark's single-threaded child
process, on the tracks the writer writes, used after the read-back only if every track read back
holds those numbers bit for bit), split into prepare+render+write, the wait for that comparison,
the read-back (``read_anim`` of the temp file, with its own peak: VmHWM is reset through
``/proc/self/clear_refs`` before it) and the comparison after it (the bitwise match, or the whole
comparison: "NOT USED"), with the child's CPU seconds and peak RSS (``ru_maxrss``, which counts
the pages it shares with the writer); the same **sequential** (``CHECK_AHEAD = False``: after the
read-back) and **ahead in a thread** (``True``, ``AHEAD_IN_PROCESS = False``: what the editor does,
as it has threads of its own), shown, not goals (their gain depends on a free core); and the
**render+write alone** (``prepare_samples`` + ``write_anim`` with no read-back), all of which must
write the same bytes. Keys added and the max error at the frames (from the frame's pose) and between
frames (from the Slerp between them; for a clip of curves: from what the source plays) are the
checked write's figures, i.e. of the file written, read back and played.

Rows:

* the corpus's two largest BVHs (``Malcolm_Gangnam-Style``, ``Joe_Walk-In-Circle``) and
  ``CMU_Sample_05_01``, written as .anim (``convert``), and that .anim read back (the CMU one is the
  58 MB dense file; it is read again with its keys spelled as serializedVersion 3, the ~100 MB that
  Unity 2018+ would write for it, :func:`as_version_3`);
* a generated CMU-style BVH (the issue's clip: 31 joints x 2,752 frames at 120 fps, ZYX channels,
  2.2 MB; :func:`write_cmu_style_bvh`), read with our BVH reader and written as .anim, and the same
  motion as ZYX Hermite curves (:func:`cmu_style_clip`; curves, not samples: the writer re-keys them
  to ZXY along their played path, a harder case than the issue's);
* the corpus's largest .anim (``LoadedAnimationanim``, 363 KB) read and written;
* a generated 2.8 MB, 1,520-curve Biped-like .anim (117 bones ``Bip001/Bip001 Bone000/...``, position,
  rotation and scale curves with their editor curves), read, written, and ``inspect`` (the whole CLI
  run) against ``yaml.load(..., CSafeLoader)`` alone on the same text (tags stripped, not timed).

A BVH is also written with ``--no-editor-curves`` (only the curves Unity plays), and the generated
CMU-style BVH's sizes are held to issue 21's 35 MB for CMU 01_01 (with editor curves, written as
serializedVersion 2 keys without weight fields, it is about 1.7 times that: FAIL, printed as measured).

Goals (issue 8 section 2, issue 10): write >= 30 MB/s with peak RSS < 300 MB (the checked write is
the one users run; the write alone is printed beside it so a miss caused by the read-back shows);
no keys added to a per-frame clip, within 0.01 deg at the frames; read a 100 MB .anim in < 3 s with
peak RSS < 600 MB; inspect of the 2.8 MB / 1,520-curve clip <= 0.15 x CSafeLoader.
Absolute speeds are inflated by the other processes on the machine: the load average is printed.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"
BVH_LARGEST = "PeizhuoLi__ganimator__data_Malcolm_Gangnam-Style.bvh"
BVH_SECOND = "PeizhuoLi__ganimator__data_Joe_Walk-In-Circle.bvh"
BVH_CMU = "FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh"
ANIM_LARGEST = "Malmaars__3Dto2DTool__Assets_Resources_LoadedAnimationanim.anim"

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from curveeditor.io import read_clip, write_checked


def hwm():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) * 1024


def reset_hwm():
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0): per-phase peaks.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


step, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
out = {{}}
# The code a write runs, imported before the timer: the machine's environment sets
# PYTHONDONTWRITEBYTECODE, so each child would otherwise compile these modules from source inside
# the timed step (0.1-0.15 s; an installed package loads its .pyc in ~30 ms).
import curveeditor.engine.diff, curveeditor.engine.frame_errors, curveeditor.engine.reorder
import curveeditor.io.anim.reader, curveeditor.io.anim.writer, curveeditor.io.verify
if step in ("write", "ahead", "sequential", "render", "played"):
    if src == "GENERATED":
        from benchmarks.anim_io import cmu_style_clip
        clip = cmu_style_clip()
    else:
        clip = read_clip(src)
    if step == "render":
        # Render + write alone (no read-back): what the writer itself costs.
        from curveeditor.io.anim import write_anim
        from curveeditor.io.verify import prepare_samples
        t = time.perf_counter()
        warnings = write_anim(prepare_samples(clip, ".anim"), dst)
        dt = time.perf_counter() - t
    else:
        # The checked write, as `convert` runs it; the read-back and the comparisons timed apart.
        # "write": the default (check_ahead.CHECK_AHEAD None: compared ahead when a core looks free,
        # in a forked child: this process has one thread and no Qt); "ahead": always ahead, in a
        # thread; "sequential": after the read-back only.
        import threading
        from curveeditor.io import check_ahead, verify
        check_ahead.CHECK_AHEAD = {{"write": None, "played": None, "ahead": True, "sequential": False}}[step]
        check_ahead.AHEAD_IN_PROCESS = False if step == "ahead" else None
        split = {{"read_back": 0.0, "compare": 0.0, "wait": 0.0, "thread": 0.0,
                  "peak_before_read_back": 0, "read_back_peak": 0, "child_rss": 0,
                  "in_process": False}}
        real_read, real_check = verify._read_back, verify.check_written
        ahead = check_ahead.CheckAhead
        real_wait, real_run, real_result = ahead.wait, ahead._compare, ahead.result_for

        def timed_read(*a, **k):
            split["peak_before_read_back"] = hwm()
            reset_hwm()
            t0 = time.perf_counter()
            r = real_read(*a, **k)
            split["read_back"] += time.perf_counter() - t0
            split["read_back_peak"] = hwm()
            return r

        def timed_check(*a, **k):
            if threading.current_thread() is not threading.main_thread():
                return real_check(*a, **k)
            t0 = time.perf_counter()
            r = real_check(*a, **k)
            split["compare"] += time.perf_counter() - t0
            return r

        def timed_wait(self):
            t0 = time.perf_counter()
            real_wait(self)
            split["wait"] += time.perf_counter() - t0
            child = self.queue.child if self.queue is not None else None
            if child is not None:  # (beside.Beside: its peak RSS and CPU once reaped)
                split["child_rss"] = max(split["child_rss"], child.peak_rss)
                split["child_cpu"] = split.get("child_cpu", 0.0) + child.cpu
            split["in_process"] = split["in_process"] or self.in_process

        def timed_run(self, i):
            t0 = time.perf_counter()
            r = real_run(self, i)
            if threading.current_thread() is not threading.main_thread():
                split["thread"] += time.perf_counter() - t0
            return r

        def timed_result(self, written):
            t0, w0 = time.perf_counter(), split["wait"]
            r = real_result(self, written)
            split["compare"] += time.perf_counter() - t0 - (split["wait"] - w0)  # (its wait apart)
            split["ahead_used"] = r is not None
            return r

        verify._read_back, verify.check_written = timed_read, timed_check
        ahead.wait, ahead._compare, ahead.result_for = timed_wait, timed_run, timed_result
        t = time.perf_counter()
        # "played": --no-editor-curves (only the curves Unity plays; issue 21's compact .anim)
        check = write_checked(clip, dst, **({{"editor_curves": False}} if step == "played" else {{}}))
        dt = time.perf_counter() - t
        warnings = list(check.warnings)
        out.update(split)
        out["added"] = check.keys_added
        out["at"] = max((tc.writer.key_error for tc in check.tracks), default=0.0)
        out["between"] = max((tc.writer.max_error for tc in check.tracks), default=0.0)
        out["frames"] = any(tc.writer.frames for tc in check.tracks)
else:
    t = time.perf_counter()
    clip = read_clip(src)
    dt = time.perf_counter() - t
    warnings = []
# VmHWM is this process's own peak (ru_maxrss keeps the parent's high-water mark across fork+exec);
# after a reset it is the peak since then, so the whole step's peak is the larger of the two phases.
rss = max(hwm(), out.get("peak_before_read_back", 0))
print(json.dumps({{"seconds": dt, "rss": rss, "warnings": warnings, **out}}))
"""


def child(step: str, src: Path, dst: Path | None = None) -> dict:
    code = CHILD.format(root=str(ROOT))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-c", code, step, str(src), str(dst or "")],
        capture_output=True,
        text=True,
        env=env,
    )
    if r.returncode != 0:
        raise RuntimeError(f"{step} {src}: {r.stderr.strip()[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def cmu_style_clip(joints: int = 31, frames: int = 2752, rate: float = 120.0):
    """A CMU-style mocap clip: ZYX Euler channels (BVH intrinsic), smooth motion with noise."""
    import numpy as np

    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.tangents import make_curve

    rng = np.random.default_rng(31)
    t = np.arange(frames) / rate
    tracks = []
    path = "Hips"
    for j in range(joints):
        if j % 6 == 0:
            path = "Hips"
        path = f"{path}/Joint{j:02d}"
        amp = rng.uniform(5, 70, 3)
        e = amp * np.sin(2 * np.pi * rng.uniform(0.1, 1.2, 3) * t[:, None] + rng.uniform(0, 6, 3))
        e += rng.normal(0, 0.05, e.shape)
        tracks.append(RotationTrack(path, "euler", make_curve(t, e, "clamped_auto"), order="ZYX"))
    return Clip("CMU_style_31x2752", rate, tracks)


_V2_KEY = re.compile(
    r"^(?P<i> +)- serializedVersion: 2\n(?P<body>(?P=i)  time: .*\n(?P=i)  value: (?P<v>.*)\n"
    r"(?P=i)  inSlope: .*\n(?P=i)  outSlope: .*\n(?P=i)  tangentMode: .*\n)",
    flags=re.M,
)


def as_version_3(text: str) -> str:
    """``text`` with every serializedVersion 2 key spelled as the serializedVersion 3 key Unity reads
    it as (unweighted, default weights 1/3): the layout new clips had before issue 21's compaction."""

    def key(m: re.Match) -> str:
        v, i = m.group("v"), m.group("i")
        comps = re.findall(r"(\w): ", v) if v.startswith("{") else []
        w = ("{" + ", ".join(f"{c}: 0.33333334" for c in comps) + "}") if comps else "0.33333334"
        return (
            f"{i}- serializedVersion: 3\n{m.group('body')}{i}  weightedMode: 0\n"
            f"{i}  inWeight: {w}\n{i}  outWeight: {w}\n"
        )

    return _V2_KEY.sub(key, text)


def write_cmu_style_bvh(path: Path, joints: int = 31, frames: int = 2752, rate: float = 120.0) -> None:
    """:func:`cmu_style_clip`'s motion as a BVH file (issue 8's "2 MB CMU-style BVH, 31 joints x 2,752
    frames, ZYX channels"): a root with position channels (still) and the first track's rotation,
    then chains of up to 6 joints under it, ``joints`` in all, each joint's Zrotation Yrotation
    Xrotation channels holding the clip's x, y, z degrees at its frames."""
    import numpy as np

    clip = cmu_style_clip(joints, frames, rate)
    root, rest = clip.tracks[0], clip.tracks[1:]
    lines = [
        "HIERARCHY",
        "ROOT Hips",
        "{",
        "  OFFSET 0 0 0",
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
    ]
    cols = [np.zeros((frames, 3)), root.curve.value[:, ::-1]]  # (z, y, x) per the channel order
    depth = 0
    for j, tr in enumerate(rest):
        if j % 6 == 0 and depth:
            lines += [
                "  " * (depth + 1) + "End Site",
                "  " * (depth + 1) + "{",
                "  " * (depth + 2) + "OFFSET 0 1 0",
                "  " * (depth + 1) + "}",
            ]
            for k in range(depth, 0, -1):
                lines.append("  " * k + "}")
            depth = 0
        pad = "  " * (depth + 1)
        lines += [
            pad + f"JOINT {tr.path.rsplit('/', 1)[-1]}",
            pad + "{",
            pad + "  OFFSET 0 1 0",
            pad + "  CHANNELS 3 Zrotation Yrotation Xrotation",
        ]
        cols.append(tr.curve.value[:, ::-1])  # (z, y, x) per the channel order
        depth += 1
    pad = "  " * (depth + 1)
    lines += [pad + "End Site", pad + "{", pad + "  OFFSET 0 1 0", pad + "}"]
    for k in range(depth, 0, -1):
        lines.append("  " * k + "}")
    lines += ["}", "MOTION", f"Frames: {frames}", f"Frame Time: {1.0 / rate:.8f}"]
    table = np.hstack(cols)
    body = "\n".join(" ".join(f"{v:.4f}" for v in row) for row in table)
    path.write_text("\n".join(lines) + "\n" + body + "\n")


def biped_anim_clip(bones: int = 117, keys: int = 6, rate: float = 30.0):
    """A Biped-like clip: 117 bones on long paths, position + rotation + scale curves (1,521 curves
    with Unity's mirrored editor curves)."""
    import numpy as np

    from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack
    from curveeditor.engine.rotations import euler_to_quat
    from curveeditor.engine.tangents import make_curve

    rng = np.random.default_rng(3)
    t = np.arange(keys) / rate
    tracks, others = [], []
    names = ["Pelvis", "Spine", "Spine1", "Neck", "Head", "L Clavicle", "L UpperArm", "L Forearm", "L Hand"]
    path = "Bip001"
    for b in range(bones):
        if b % len(names) == 0:
            path = "Bip001"
        path = f"{path}/Bip001 {names[b % len(names)]}{'' if b < len(names) else b}"
        e = rng.uniform(-60, 60, 3) * np.sin(
            2 * np.pi * rng.uniform(0.2, 1.5, 3) * t[:, None] + rng.uniform(0, 6, 3)
        )
        tracks.append(
            RotationTrack(path, "quaternion", make_curve(t, euler_to_quat(e, "zxy"), "clamped_auto"))
        )
        p = rng.normal(0, 0.3, 3) + 0.01 * np.sin(t[:, None] * rng.uniform(1, 3, 3))
        others.append(
            OtherTrack(path, "m_LocalPosition", "position", make_curve(t, p, "clamped_auto"), t, {})
        )
        s = 1 + 0.01 * np.sin(t[:, None] * rng.uniform(1, 3, 3))
        others.append(OtherTrack(path, "m_LocalScale", "scale", make_curve(t, s, "clamped_auto"), t, {}))
    return Clip("Biped", rate, tracks, others)


def csafe_seconds(path: Path) -> float:
    import yaml

    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^%TAG.*\n", "", text, flags=re.M)
    text = re.sub(r"^--- !u!\d+ &\d+", "---", text, flags=re.M)
    t = time.perf_counter()
    yaml.load(text, Loader=yaml.CSafeLoader)
    return time.perf_counter() - t


def inspect_seconds(path: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "inspect", str(path)], capture_output=True, env=env
    )
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode()[-300:])
    return dt


MB = 1e6


def main() -> None:
    quick = "--quick" in sys.argv
    rows = []  # (file, step, MB, seconds, rss, extra)
    goals = []
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        sources = []
        for name in (BVH_LARGEST, BVH_SECOND, BVH_CMU):
            p = CORPUS / "bvh" / name
            if p.exists() and not (quick and name != BVH_LARGEST):
                sources.append((p.name[:40], p))
        if not quick:
            # The clip: a CMU-style BVH (read by our BVH reader: per-frame samples) ...
            gen = d / "generated_cmu_style.bvh"
            write_cmu_style_bvh(gen)
            sources.append(("generated BVH 31 joints x 2,752 fr ZYX", gen))
            # ... and the same motion as ZYX Hermite curves (not samples: the writer re-keys them).
            sources.append(("generated 31x2,752 ZYX curves (no BVH)", Path("GENERATED")))
        for label, src in sources:
            out = d / (src.stem + ".anim")
            alone = d / ("alone_" + out.name)
            rw = child("render", src, alone)
            w = child("write", src, out)
            size = out.stat().st_size
            same = filecmp.cmp(alone, out, shallow=False)
            alone.unlink()
            seq = child("sequential", src, alone)
            same = same and filecmp.cmp(alone, out, shallow=False)
            alone.unlink()
            ahead = child("ahead", src, alone)
            same = same and filecmp.cmp(alone, out, shallow=False)
            alone.unlink()
            ref = "frames" if w["frames"] else "curves"
            figs = (w["added"], w["at"], w["between"])
            rows.append((label, "render+write alone", size / MB, rw["seconds"], rw["rss"], None))
            where = "a child process" if w["in_process"] else "a thread"
            early = w["thread"] or w["in_process"]
            used = f"in {where} beside the render" if w.get("ahead_used") else "after the read-back"
            if early and not w.get("ahead_used"):
                used = f"in {where}, NOT USED: compared after the read-back"
            rb, cmpd, wait = w["read_back"], w["compare"], w["wait"]
            rest = w["seconds"] - rb - cmpd - wait
            before = w["peak_before_read_back"]
            thread = "  (its thread's compare, beside the render)"
            rows.append((label, f"checked write ({ref})", size / MB, w["seconds"], w["rss"], figs))
            rows.append((f"  (default: compared {used})", "", size / MB, w["seconds"], None, None))
            rows.append(("  of which prepare+render+write", "", size / MB, rest, before, None))
            rows.append((f"  of which wait for {where}'s compare", "", size / MB, wait, None, None))
            rows.append(("  of which read-back (read_anim)", "", size / MB, rb, w["read_back_peak"], None))
            rows.append(("  of which compare after the read-back", "", size / MB, cmpd, None, None))
            if w["thread"]:
                rows.append((thread, "", size / MB, w["thread"], None, None))
            if w["in_process"]:
                # ru_maxrss of the child: the pages it shares with the writer count in both.
                child_row = "  (its child's compare: CPU s, peak RSS incl. shared pages)"
                rows.append((child_row, "", size / MB, w["child_cpu"], w["child_rss"], None))
            rows.append((label, "checked, sequential", size / MB, seq["seconds"], seq["rss"], None))
            seq_check = seq["read_back"] + seq["compare"]
            rows.append(("  of which read-back + compare", "", size / MB, seq_check, None, None))
            in_thread = "checked, ahead in a thread"
            rows.append((label, in_thread, size / MB, ahead["seconds"], ahead["rss"], None))
            after = ahead["wait"] + ahead["read_back"] + ahead["compare"]
            rows.append(("  of which wait + read-back + compare", "", size / MB, after, None, None))
            rows.append((thread, "", size / MB, ahead["thread"], None, None))
            if not same:
                print(f"WARNING {label}: the checked writes and the write alone wrote different bytes")
            for what, r in (("checked write (convert)", w), ("render+write alone", rw)):
                goals.append((f"{label[:28]} {what} >= 30 MB/s", size / MB / r["seconds"], 30.0, ">="))
                goals.append((f"{label[:28]} {what} peak RSS < 300 MB", r["rss"] / MB, 300.0, "<"))
            if w["frames"]:
                goals.append((f"{label[:28]} keys added (no --tolerance)", w["added"], 0, "<="))
                goals.append((f"{label[:28]} max error at frames, deg", w["at"], 0.01, "<="))
            else:
                goals.append((f"{label[:28]} max error (keys and between), deg", w["between"], 0.012, "<="))
            if w["frames"]:
                # Issue 21: a BVH as .anim with only the curves Unity plays (--no-editor-curves).
                played = d / ("played_" + out.name)
                pw = child("played", src, played)
                psize = played.stat().st_size
                played.unlink()
                pfigs = (pw["added"], pw["at"], pw["between"])
                rows.append((label, "--no-editor-curves", psize / MB, pw["seconds"], pw["rss"], pfigs))
                if "generated" in label:
                    goals.append((f"{label[:28]} .anim MB, editor curves", size / MB, 35.0, "<"))
                    goals.append((f"{label[:28]} .anim MB, --no-editor-curves", psize / MB, 35.0, "<"))
            r = child("read", out)
            rows.append((label + " .anim", "read", size / MB, r["seconds"], r["rss"], None))
            if size > 50 * MB:
                goals.append((f"read {size / MB:.0f} MB .anim < 3 s", r["seconds"], 3.0, "<"))
                goals.append((f"read {size / MB:.0f} MB .anim peak RSS < 600 MB", r["rss"] / MB, 600.0, "<"))
                # The same keys as Unity 2018+ writes them (serializedVersion 3, weight fields): the
                # size of file the read goal was set on (about 100 MB for CMU 05_01).
                v3 = d / ("v3_" + out.name)
                v3.write_text(as_version_3(out.read_text()))
                v3size = v3.stat().st_size
                r3 = child("read", v3)
                v3.unlink()
                rows.append(
                    (label + " .anim", "read, version 3 keys", v3size / MB, r3["seconds"], r3["rss"], None)
                )
                goals.append(
                    (f"read {v3size / MB:.0f} MB .anim (version 3 keys) < 3 s", r3["seconds"], 3.0, "<")
                )
                goals.append(
                    (
                        f"read {v3size / MB:.0f} MB .anim (version 3 keys) peak RSS < 600 MB",
                        r3["rss"] / MB,
                        600.0,
                        "<",
                    )
                )
            out.unlink()
        # .anim files: the largest corpus one and the generated 1,520-curve Biped.
        from curveeditor.io import write_clip

        biped = d / "Biped_1520_curves.anim"
        write_clip(biped_anim_clip(), biped)
        anims = [("generated Biped 1,521 curves", biped)]
        p = CORPUS / "anim" / ANIM_LARGEST
        if p.exists():
            anims.append((p.name[:40], p))
        for label, src in anims:
            size = src.stat().st_size
            r = child("read", src)
            cs = csafe_seconds(src)
            rows.append((label, "read", size / MB, r["seconds"], r["rss"], ("csafe", cs)))
            out = d / ("w_" + src.name)
            w = child("write", src, out)
            rows.append((label, "write (unchanged)", size / MB, w["seconds"], w["rss"], None))
            if src == biped:
                ins = inspect_seconds(src)
                rows.append((label, "inspect (CLI run)", size / MB, ins, None, ("csafe", cs)))
                goals.append(("inspect 2.8 MB / 1,521 curves vs CSafeLoader <= 0.15x", ins / cs, 0.15, "<="))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures inflated by it)")
    print()
    hdr = (
        f"{'file':42} {'step':22} {'MB':>7} {'s':>7} {'MB/s':>7} {'peak MB':>8} {'xCSafe':>7}"
        f" {'keys+':>6} {'err@frames':>10} {'err between':>11}"
    )
    print(hdr)
    print("-" * len(hdr))
    for label, step, mb, s, rss, extra in rows:
        ratio = keys = e1 = e2 = ""
        if extra and extra[0] == "csafe":
            ratio = f"{s / extra[1]:7.3f}"
        elif extra:
            keys, e1, e2 = f"{extra[0]:6d}", f"{extra[1]:10.4f}", f"{extra[2]:11.4f}"
        rs = f"{rss / MB:8.0f}" if rss else "       -"
        cols = f"{rs} {ratio:>7} {keys:>6} {e1:>10} {e2:>11}"
        rate = f"{mb / s:7.1f}" if s >= 0.05 else "      -"  # (a wait of 0.000 s is no speed)
        print(f"{label:42} {step:22} {mb:7.2f} {s:7.3f} {rate} {cols}")
    print()
    print("goals")
    for name, value, goal, op in goals:
        ok = value >= goal if op == ">=" else (value < goal if op == "<" else value <= goal)
        print(f"  {name:60} {value:9.3f} (goal {op} {goal:g})  {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
