"""Editing-depth benchmarks: dope-sheet drag of 10,000 keys and skeleton playback frame rate.

Run under an X server: ``xvfb-run -a -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/editing.py``.

Clips: a 31-joint x 2,752-frame clip (the CMU 12_01 walk of the corpus, 31 joints, its motion tiled
to 2,752 frames: no corpus clip has that size) and the largest corpus BVH (MocapNET CMU 05_01,
165 joints x 599 frames). Without the corpus a synthetic 31 x 2,752 clip is used.

* **dope-sheet drag**: 10,000 selected keys (a block of frames across every track) dragged with real
  ``QMouseEvent`` moves on the dope sheet; per move: the move handler (the ticks' preview) then one
  synchronous repaint of the sheet and every view the move dirtied. The document (retime + graphs,
  key table, 3D view) follows when the mouse rests (``dope_sheet.LIVE_REST_MS``) and on release. Goal:
  median < 33 ms from when a move is due (a 60 Hz mouse, 90 moves) to painted, so catch-ups that
  block the event loop count. Measured in the main window (the user's case: the dope-sheet dock
  raised and sized to ~20 rows, graphs of the 31 / 100 drawn tracks, key table, 3D view) and alone,
  on both clips; the detail gives p90/max, the catch-ups during the moves, the back-to-back cost of a
  move, one catch-up (what a rest of the mouse runs: retime + every view) and the release (undo
  step + every view); and the ratio of a repaint to the same repaint with the ticks drawn one
  ``drawLine`` per key (the per-key baseline the batched image replaces).
* **skeleton playback**: per frame, ``SkeletonLayer.update_pose`` (forward kinematics + GL data) and
  one GL render of the 3D view (``paintGL`` + ``glFinish``). Goal: the frame time allows the clip's
  frame rate up to 60 fps.

Figures are wall-clock on a shared 2-core machine (other jobs inflate them); ratios are measured in
the same run.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import curveeditor.app  # noqa: E402,F401,I001 - applies the PySide6 refcount guard first
from PySide6.QtCore import QCoreApplication, QEvent, QPointF, Qt  # noqa: E402

QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
from PySide6.QtCore import QLineF  # noqa: E402
from PySide6.QtGui import QColor, QImage, QKeyEvent, QMouseEvent, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402

FRAMES, SELECTED = 2752, 10_000
CORPUS = ROOT.parent / "shared" / "corpus" / "bvh"
WALK = CORPUS / "VictorS-67__pybvh__bvh_data_cmu_12_01_walk.bvh"
LARGEST = CORPUS / "FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh"


def _tile(curve, frames: int, rate: float):
    v = np.asarray(curve.value)
    reps = int(np.ceil(frames / len(v)))
    tiled = np.concatenate([v] * reps)[:frames]
    return make_curve(np.arange(frames) / rate, tiled)


def walk_31x2752() -> Clip:
    """The corpus walk (31 joints) tiled to 2,752 frames, hierarchy kept (skeleton drawable)."""
    from dataclasses import replace

    from curveeditor.io import read_clip

    if not WALK.exists():
        rng = np.random.default_rng(3)
        t = np.arange(FRAMES) / 120.0
        tracks = [
            RotationTrack(f"J{i}", "euler", make_curve(t, rng.normal(0, 3, (FRAMES, 3)).cumsum(axis=0)))
            for i in range(31)
        ]
        return Clip("synthetic", 120.0, tracks)
    clip = read_clip(WALK)
    rate = clip.frame_rate
    tracks = [replace(t, curve=_tile(t.curve, FRAMES, rate)) for t in clip.tracks]
    others = [
        OtherTrack(
            o.path, o.attribute, o.kind, _tile(o.curve, FRAMES, rate), np.arange(FRAMES) / rate, o.meta
        )
        for o in clip.other_tracks
    ]
    return replace(clip, name="walk_31x2752", tracks=tuple(tracks), other_tracks=tuple(others))


def _mouse(widget, etype, pos: QPointF, button, buttons) -> None:
    ev = QMouseEvent(
        etype,
        pos,
        QPointF(widget.mapToGlobal(pos.toPoint())),
        button,
        buttons,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, ev)


def _select_block(doc, n_keys: int) -> dict:
    """About ``n_keys`` keys: the same block of frames in every track, from the middle of the clip."""
    n_tracks = len(doc.clip.tracks)
    per = int(np.ceil(n_keys / n_tracks))
    mid = doc.clip.tracks[0].n_keys // 2
    keys = {t.path: set(range(mid, min(mid + per, t.n_keys))) for t in doc.clip.tracks}
    doc.select_paths(list(keys))
    doc.select_keys(keys)
    return keys


def _settle(app, seconds: float = 1.0) -> None:
    """Run the event loop idle for ``seconds`` (the views' deferred work of the last edit, the recipe
    warm-up): a user starts a drag, or releases it, some time after the last one."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        app.processEvents()
        time.sleep(0.005)


def drag_sheet(app, sheet, doc, moves: int = 30, pace_ms: float | None = None) -> dict:
    """Per-move timings (ms) of a real mouse drag of the selected block on ``sheet``'s canvas.

    Per move: the ``QMouseEvent``, one synchronous repaint of the sheet, then ``processEvents`` (every
    other view the move dirtied paints too). ``pace_ms=None``: moves back to back (what one move
    costs). ``pace_ms=16``: a mouse at 60 Hz; between moves the event loop runs idle, so the
    document's throttled catch-up (retime + graphs, key table, 3D...) runs when it is due, and a move's
    latency is measured from when it was due to when it is painted: time the event loop spent busy
    with a catch-up when the move came is part of it (the user's case). Moves due while the loop was
    busy are compressed into one, as Qt does, timed from the oldest."""
    c = sheet.canvas
    keys = doc.selected_keys
    p = next(iter(keys))
    t_grab = float(doc.clip.track(p).times[min(keys[p])])
    row = next(i for i, r in enumerate(c.rows) if r.kind == "summary")
    y = c.row_y(row) + 9
    x0 = float(c.t_to_x(t_grab))
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    updates0 = getattr(c, "live_updates", 0)
    _settle(app)
    _mouse(c, QEvent.Type.MouseButtonPress, QPointF(x0, y), left, left)
    handle, total, cpu = [], [], []
    start = time.perf_counter()
    k = 1
    while k <= moves:
        if pace_ms is None:
            due = time.perf_counter()
        else:
            due = start + k * pace_ms / 1e3
            while time.perf_counter() < due:
                app.processEvents()
                time.sleep(0.0005)
            # Qt compresses mouse moves: the moves due while the event loop was busy arrive as one
            # (the newest position); the latency counts from the oldest of them.
            late = int((time.perf_counter() - start) * 1e3 / pace_ms)
            k = max(k, min(late, moves))
        x = x0 + 3.0 * k * (1 if k % 2 else 0.6)
        c0 = time.process_time()
        t0 = time.perf_counter()
        _mouse(c, QEvent.Type.MouseMove, QPointF(x, y), none, left)
        t1 = time.perf_counter()
        c.repaint()
        app.processEvents()  # every other view the move dirtied paints too
        t2 = time.perf_counter()
        cpu.append((time.process_time() - c0) * 1e3)
        handle.append((t1 - t0) * 1e3)
        total.append((t2 - due) * 1e3)
        k += 1
    updates = getattr(c, "live_updates", 0) - updates0
    t0 = time.perf_counter()
    if hasattr(c, "apply_live"):  # the catch-up a rest of the mouse would run now
        c.apply_live()
        app.processEvents()
    catch_up = (time.perf_counter() - t0) * 1e3
    _settle(app)
    t0 = time.perf_counter()
    _mouse(c, QEvent.Type.MouseButtonRelease, QPointF(x, y), left, none)
    app.processEvents()
    release = (time.perf_counter() - t0) * 1e3
    assert doc.undo_stack.count() >= 1 and not doc.in_live_edit()
    doc.undo_stack.undo()
    _settle(app)
    n = sum(len(s) for s in keys.values())
    return {
        "keys": n,
        "handle": statistics.median(handle),
        "total": statistics.median(total),
        "p90": float(np.percentile(total, 90)),
        "max": max(total),
        "cpu": statistics.median(cpu),
        "updates": updates,
        "release": release,
        "delivered": len(total),
        "catch_up": catch_up,
    }


def _drag_rows(app, sheet, doc, label: str) -> list:
    """Goal row (60 Hz paced drag) + detail of the back-to-back drag and the release."""
    quick = drag_sheet(app, sheet, doc)
    paced = drag_sheet(app, sheet, doc, moves=90, pace_ms=16.0)
    return [
        (
            f"{label}, {paced['keys']} keys",
            paced["total"],
            33.0,
            f"60 Hz mouse: p90 {paced['p90']:.1f}, max {paced['max']:.1f} ms, {paced['delivered']} of 90 "
            f"moves painted, {paced['updates']} document catch-ups; back to back: {quick['total']:.1f} ms "
            f"(CPU {quick['cpu']:.1f}); catch-up {paced['catch_up']:.0f} ms, "
            f"release {paced['release']:.0f} ms",
        )
    ]


def per_key_paint(sheet) -> float:
    """ms to paint the visible ticks one ``drawLine`` per key (the baseline of the batched image)."""
    c = sheet.canvas
    img = QImage(c.width(), c.height(), QImage.Format.Format_RGBA8888)
    t0 = time.perf_counter()
    p = QPainter(img)
    p.setPen(QColor("#1f5fd0"))
    n_vis = (c.height() - 22) // 18 + 1
    for i in range(c.scroll_rows, min(len(c.rows), c.scroll_rows + n_vis)):
        y = c.row_y(i)
        xs = c.t_to_x(c.row_times(c.rows[i]))
        p.drawLines([QLineF(x, y + 4, x, y + 14) for x in xs])
    p.end()
    return (time.perf_counter() - t0) * 1e3


def batched_paint(app, sheet, n: int = 10) -> float:
    c = sheet.canvas
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        c.repaint()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def skeleton_playback(app, clip, frames: int = 120) -> dict:
    from curveeditor.app.model.document import ClipDocument
    from curveeditor.app.view3d.gizmo import GizmoView
    from curveeditor.app.view3d.skeleton import SkeletonLayer

    doc = ClipDocument()
    doc.load(clip, None)
    gizmo = GizmoView(doc)
    gizmo.resize(700, 600)
    gizmo.show()
    layer = SkeletonLayer(gizmo)
    for _ in range(20):
        app.processEvents()
    layer.frame_character()
    view = gizmo.view
    pose_ms, render_ms = [], []
    rate = clip.frame_rate
    for k in range(frames):
        t0 = time.perf_counter()
        doc.set_time((k * 2) / rate)  # the time change drives update_pose
        t1 = time.perf_counter()
        view.makeCurrent()
        view.paintGL()
        view.context().functions().glFinish()
        t2 = time.perf_counter()
        pose_ms.append((t1 - t0) * 1e3)
        render_ms.append((t2 - t1) * 1e3)
    frame = statistics.median(np.add(pose_ms, render_ms))
    gizmo.close()
    return {
        "joints": layer.skeleton.n_joints if layer.skeleton else 0,
        "pose": statistics.median(pose_ms),
        "render": statistics.median(render_ms),
        "frame": frame,
        "fps": 1000.0 / frame,
        "goal_fps": min(rate, 60.0),
    }


def take_screenshots(out_dir: str) -> None:
    """The dope sheet on the MocapNET CMU 05_01 mocap clip (a B-box selection with the mouse while it is
    drawn and after, the box's keys mid-drag, the graphs after the drag) and the skeleton view on the
    CMU walk BVH (``--screenshots DIR``)."""
    from curveeditor.app.window.main_window import MainWindow
    from curveeditor.engine.recipe import Recipe, run_recipe
    from curveeditor.io import read_clip

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    win = MainWindow()
    win.resize(1600, 1000)
    win.show()

    def settle(n: int = 30) -> None:
        for _ in range(n):
            app.processEvents()
            time.sleep(0.01)

    clip = read_clip(LARGEST)
    win.doc.load(clip, str(LARGEST))
    dock = win.docks["Dope sheet"]
    dock.setFloating(True)
    dock.resize(1500, 620)
    dock.show()
    settle()
    fr = clip.frame_rate
    win.tools.playback.set_in(150 / fr)
    win.tools.playback.set_out(420 / fr)
    win.doc.set_time(230 / fr)
    c = win.tools.dope.canvas
    c.frame_range(120 / fr, 330 / fr)
    settle()
    # a real box selection with the mouse (B: the box may start on a key): frames 200..260 of rows 2..13
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    c.setFocus()
    QApplication.sendEvent(
        c, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_B, Qt.KeyboardModifier.NoModifier, "b")
    )
    a = QPointF(float(c.t_to_x(199.5 / fr)), c.row_y(2) + 2)
    b = QPointF(float(c.t_to_x(260.5 / fr)), c.row_y(13) + 16)
    _mouse(c, QEvent.Type.MouseButtonPress, a, left, left)
    _mouse(c, QEvent.Type.MouseMove, (a + b) / 2, none, left)
    _mouse(c, QEvent.Type.MouseMove, b, none, left)
    settle()
    win.tools.dope.grab().save(str(out / "dope_sheet_box.png"))
    _mouse(c, QEvent.Type.MouseButtonRelease, b, left, none)
    settle()
    win.tools.dope.grab().save(str(out / "dope_sheet_mocap.png"))
    # mid-drag: the box's keys moved 25 frames later (the ticks' preview, overwriting what they cover)
    grab = QPointF(float(c.t_to_x(230 / fr)), c.row_y(5) + 9)
    _mouse(c, QEvent.Type.MouseButtonPress, grab, left, left)
    for k in range(1, 6):
        _mouse(c, QEvent.Type.MouseMove, grab + QPointF(k * 5 * c.px_per_s() / fr, 0), none, left)
    win.tools.dope.grab().save(str(out / "dope_sheet_drag.png"))
    _mouse(c, QEvent.Type.MouseButtonRelease, grab + QPointF(25 * c.px_per_s() / fr, 0), left, none)
    settle()
    win.graphs.grab().save(str(out / "graphs_after_drag.png"))
    win.doc.undo_stack.undo()

    dock.setFloating(False)
    walk = read_clip(WALK)
    win.doc.load(walk, str(WALK))
    settle()
    arm = next(t.path for t in walk.tracks if t.path.endswith("LeftArm"))
    win.doc.select_paths([arm])
    win.doc.set_preview(run_recipe(walk, Recipe.of({"op": "smooth", "sigma": 0.3})).clip)
    win.doc.set_time(1.2)
    win.gizmo.view_widget.setMinimumSize(760, 600)
    win.resizeDocks([win.docks["3D view"]], [800], Qt.Orientation.Horizontal)
    settle()
    win.tools.skeleton.frame_character()
    settle()
    win.gizmo.view.render_image().save(str(out / "skeleton_bvh.png"))
    win.doc.undo_stack.setClean()
    win.close()


def main() -> int:
    if "--screenshots" in sys.argv:
        take_screenshots(sys.argv[sys.argv.index("--screenshots") + 1])
        return 0
    from curveeditor.app.dope_sheet.sheet import DopeSheet
    from curveeditor.app.model.document import ClipDocument
    from curveeditor.io import read_clip

    app = QApplication.instance() or QApplication([])
    clips = [walk_31x2752()]
    if LARGEST.exists():
        clips.append(read_clip(LARGEST))
    rows = []
    for clip in clips:
        size = f"{len(clip.tracks)} x {clip.tracks[0].n_keys}"
        doc = ClipDocument()
        doc.load(clip, None)
        sheet = DopeSheet(doc)
        sheet.resize(1400, 700)
        sheet.show()
        for _ in range(10):
            app.processEvents()
        _select_block(doc, SELECTED)
        rows += _drag_rows(app, sheet, doc, f"dope-sheet drag, dock alone ({size})")
        batched = batched_paint(app, sheet)
        base = per_key_paint(sheet)
        rows.append(
            (
                f"  repaint batched vs per-key drawLine ({size})",
                batched,
                None,
                f"per-key {base:.1f} ms = x{base / batched:.1f}",
            )
        )
        sheet.close()
    # The whole window: graphs, key table, 3D view and dope sheet all follow the drag.
    from curveeditor.app.window.main_window import MainWindow

    for clip in clips:
        size = f"{len(clip.tracks)} x {clip.tracks[0].n_keys}"
        win = MainWindow()
        win.resize(1500, 940)
        win.show()
        win.doc.load(clip, None)
        dock = win.docks["Dope sheet"]
        dock.raise_()
        # as a user working in the dope sheet sizes it: ~20 rows (the default dock shows 3)
        win.resizeDocks([dock], [440], Qt.Orientation.Vertical)
        for _ in range(20):
            app.processEvents()
        _select_block(win.doc, SELECTED)
        for _ in range(10):
            app.processEvents()
        c = win.tools.dope.canvas
        assert c.isVisible() and c.height() > 300, (c.width(), c.height())
        rows += _drag_rows(
            app, win.tools.dope, win.doc, f"dope-sheet drag, main window ({size}, {c.width()}x{c.height()})"
        )
        win.doc.undo_stack.setClean()
        win.close()
    for clip in clips:
        if not clip.meta.get("hierarchy"):
            continue
        s = skeleton_playback(app, clip)
        goal_ms = 1000.0 / s["goal_fps"]
        rows.append(
            (
                f"skeleton playback, {s['joints']} joints ({clip.name})",
                s["frame"],
                goal_ms,
                f"pose {s['pose']:.2f} + render {s['render']:.2f} ms = {s['fps']:.0f} fps "
                f"(goal {s['goal_fps']:.0f})",
            )
        )
    print(f"{'figure':62} {'median ms':>10} {'goal ms':>8}  result  detail")
    for name, ms, goal, detail in rows:
        res = "" if goal is None else ("PASS" if ms < goal else "FAIL")
        g = "" if goal is None else f"{goal:.1f}"
        print(f"{name:62} {ms:10.2f} {g:>8}  {res:6}  {detail}")
    print(
        "(wall-clock on a shared 2-core machine; other jobs inflate the figures; CPU = this process's"
        f" CPU time per move; load average {os.getloadavg()[0]:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
