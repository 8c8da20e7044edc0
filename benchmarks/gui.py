"""Editor responsiveness on a 60-track x 3000-key clip (Euler ZXY, ClampedAuto keys at 60 Hz).

Run under an X server (Xvfb): ``xvfb-run -a -s '-screen 0 1600x1000x24' .venv/bin/python benchmarks/gui.py``
(about 30 s on the shared 2-core machine).

Prints one table with each figure, its goal and PASS/FAIL:

* **key drag -> data updated** and **key drag -> painted** (goal: median < 16 ms), each with and
  without the 3D view: real ``QMouseEvent`` moves sent to the graph viewport while dragging one
  selected key of the primary track (pyqtgraph's 100 Hz mouse rate limit is switched off so every
  event is handled). "Data updated" is the move handler returning: model edit and every view's data
  (graphs, key table, timeline readout, 3D tripod) set, nothing painted yet. "Painted" adds one
  ``processEvents`` that repaints every widget the move dirtied, the 3D view included (its own
  native GL window since the QOpenGLWindow switch; before it, a QOpenGLWidget made Qt compose the
  whole window through llvmpipe, ~17 ms per repaint under Xvfb). The "without 3D view" window has a
  plain widget in the 3D dock. The full-redraw baseline rebuilds the track's items from scratch.
  ``BENCH_PROFILE=1`` prints a cProfile of the drag.
* **recipe preview: param change -> drawn** (goal: < 100 ms, one track): ``set_param`` to the preview
  curves painted, split into "to result" (coalescing delay + the engine's ``run_recipe`` with its
  diffs in the worker + installing the preview in every view) and "drawing" (the paint).
* **cold start to first painted window** (goal: < 1.5 s): ``python -m curveeditor --quit-after-paint``
  in a fresh process, from spawn to the first paint event of the window (best and median of 3).

``--screenshots DIR`` instead writes the README screenshots (see :func:`take_screenshots`).

The default (real-clip) table measures each clip in a fresh window (the previous one deleted),
with a fresh settings folder (default layout: X/Y/Z plots + speed strip) and after the recipe ops'
background imports; playback runs in Qt's event loop for 2 s. Each figure is wall-clock from the
input event to every dirtied widget painted, with this process's CPU time beside it.

Under each clip's table, the playback frame's breakdown: the main thread's CPU time per tick of each
``timeChanged`` handler and each paint (:data:`PLAY_SLOTS`), the rest (Qt's layout, widget painting,
event dispatch), and the 3D view's own frames per second. ``--playback [--repeat N]`` measures only
the playback rows (N runs per clip), for A/B comparisons in one run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import curveeditor.app  # noqa: E402,F401,I001 - applies the PySide6 refcount guard first
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QPointF, Qt  # noqa: E402

QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QSettings, QStandardPaths  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from benchmarks.pixels import PixelProbe  # noqa: E402
from curveeditor.engine.clip import Clip, RotationTrack  # noqa: E402
from curveeditor.engine.tangents import make_curve  # noqa: E402

N_TRACKS, N_KEYS, RATE = 60, 3000, 60.0


def make_clip() -> Clip:
    rng = np.random.default_rng(7)
    t = np.arange(N_KEYS) / RATE
    tracks = []
    for i in range(N_TRACKS):
        amp = rng.uniform(20, 80, 3)
        freq = rng.uniform(0.1, 1.5, 3)
        phase = rng.uniform(0, 2 * np.pi, 3)
        e = amp * np.sin(2 * np.pi * freq * t[:, None] + phase) + rng.normal(0, 0.3, (N_KEYS, 3))
        tracks.append(RotationTrack(f"Root/Spine{i // 10}/Bone{i}", "euler", make_curve(t, e)))
    return Clip("bench", RATE, tracks)


def send(widget, etype, pos: QPoint, button, buttons):
    ev = QMouseEvent(
        etype, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, ev)


def bench_drag(app, win) -> dict[str, list[float]]:
    doc = win.doc
    clip = make_clip()
    doc.load(clip, None)
    path = clip.tracks[5].path
    doc.select_paths([path])
    app.processEvents()
    tr = doc.clip.track(path)
    i = N_KEYS // 2
    doc.select_keys({(path, 0): {i}})  # as a click on the X curve selects it (per curve)
    doc.set_time(float(tr.times[i]) + 0.5)
    plot = win.graphs.euler_plots[0]
    t0 = float(tr.times[i])
    plot.setXRange(t0 - 2.0, t0 + 2.0, padding=0)
    lo, hi = float(tr.curve.value[:, 0].min()), float(tr.curve.value[:, 0].max())
    plot.setYRange(lo - 5, hi + 5, padding=0)
    app.processEvents()
    vp = win.graphs.glw.viewport()
    scene = plot.getViewBox().mapViewToScene(QPointF(t0, float(tr.curve.value[i, 0])))
    start = win.graphs.glw.mapFromScene(scene)
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(vp, QEvent.Type.MouseMove, start, none, none)
    send(vp, QEvent.Type.MouseButtonPress, start, left, left)
    app.processEvents()
    times = []
    handler = []
    prof = None
    if os.environ.get("BENCH_PROFILE"):
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    for k in range(1, 81):
        p = start + QPoint((k % 7) - 3, -k)  # wiggle in time, climb in value
        t_a = time.perf_counter()
        send(vp, QEvent.Type.MouseMove, p, none, left)
        t_h = time.perf_counter()
        app.processEvents()  # paints every widget the move updated
        times.append((time.perf_counter() - t_a) * 1000)
        handler.append((t_h - t_a) * 1000)
    if prof is not None:
        prof.disable()
        import pstats

        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
    send(vp, QEvent.Type.MouseButtonRelease, p, left, none)
    app.processEvents()
    if doc.undo_stack.count() != 1:
        raise SystemExit(
            f"the drag did not register as one undo step ({doc.undo_stack.count()}); start {start}"
        )
    # baseline: redraw the whole selection (what a naive "rebuild on every change" would do)
    full = []
    for _ in range(10):
        t_a = time.perf_counter()
        win.graphs.cache._d.clear()
        win.graphs.rebuild(frame=False)
        app.processEvents()
        full.append((time.perf_counter() - t_a) * 1000)
    # the first moves include one-off drag start work
    return {"total": times[5:], "handler": handler[5:], "full": full}


def wait_for_result(panel, timeout_ms: int) -> None:
    """Run the event loop until the panel's next preview result (or the timeout). A nested event
    loop waits in Qt without holding the GIL, as the application does; a Python polling loop
    (processEvents + sleep) would contend with the worker thread for the GIL and slow the recipe
    run about 2x."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    panel.resultReady.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    panel.resultReady.disconnect(loop.quit)


def bench_recipe(app, win) -> dict[str, list[float] | float] | None:
    """Parameter change -> preview drawn, for one selected track.

    Each sample: ``set_param`` (what a spin box edit calls) at t0; ``resultReady`` (the worker's
    result installed as the document preview, every view's data updated) at t1; then one
    ``processEvents`` paints the graphs, the 3D view and the rest (t2). Reported: t2 - t0 (the goal),
    t1 - t0, t2 - t1, and the engine's own run time (``run_recipe`` incl. its diffs, in the worker)."""
    panel = getattr(win, "recipe", None)
    if panel is None:
        return None
    from curveeditor.app.recipe import panel as recipe_panel

    debounce = float(getattr(recipe_panel, "_DEBOUNCE_MS", 0))
    # A track the drag benchmark did not touch: the dragged one has a key squeezed next to its
    # neighbour, and the engine's diff grid (10 samples per key interval) makes its run ~2x slower.
    doc = win.doc
    doc.select_paths([doc.clip.tracks[6].path])
    app.processEvents()
    runs: list[float] = []
    panel.runner.finished.connect(lambda _g, _r, sec: runs.append(sec * 1000))
    with_result = []

    def on_result(_r):
        with_result.append(time.perf_counter())

    panel.resultReady.connect(on_result)
    panel.add_step("smooth", {"method": "gaussian", "sigma": 0.05})
    wait_for_result(panel, 20000)  # warm-up run (imports, caches)
    app.processEvents()
    total, result, draw = [], [], []
    runs.clear()
    for k in range(8):
        with_result.clear()
        t_a = time.perf_counter()
        panel.set_param(0, "sigma", 0.04 + 0.005 * k)
        wait_for_result(panel, 10000)
        if not with_result:
            continue
        app.processEvents()  # paints what the preview changed
        t_c = time.perf_counter()
        total.append((t_c - t_a) * 1000)
        result.append((with_result[0] - t_a) * 1000)
        draw.append((t_c - with_result[0]) * 1000)
    panel.resultReady.disconnect(on_result)
    panel.discard()
    return {"total": total, "result": result, "draw": draw, "engine": runs, "debounce": debounce}


def bench_cold_start() -> list[float]:
    out = []
    for _ in range(3):
        t_a = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "curveeditor", "--quit-after-paint"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = proc.stdout.readline()
        t_b = time.perf_counter()
        proc.wait(timeout=30)
        if line.strip() == "painted":
            out.append(t_b - t_a)
    return out


def _wait(app, ms: int) -> None:
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.005)


def _run_event_loop(ms: int) -> None:
    """Run Qt's event loop for ``ms`` milliseconds, as the application does (``app.exec``). A polling
    loop (``processEvents`` + 5 ms sleeps, :func:`_wait`) delays every due timer by up to the sleep:
    it held playback at 35-42 ticks/s where the event loop runs the 60 Hz timer on time."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def take_screenshots(app, out_dir: Path) -> None:
    """The README screenshots of the real window on the bundled sample: ``editor.png`` (light),
    ``editor-dark.png`` and ``editor-preview.png`` (light, an Unwrap recipe previewed). The screen
    is grabbed from the X server (:func:`grab_screen`): the 3D view is a native OpenGL window,
    which ``QWidget.grab`` does not see. Run under ``xvfb-run -s '-screen 0 1600x1000x24'``."""
    from PySide6.QtTest import QTest

    from curveeditor.app.window.main_window import MainWindow

    out_dir.mkdir(parents=True, exist_ok=True)

    def shot(name: str, theme: str, preview: bool) -> None:
        w = MainWindow(autosave_folder="/tmp/curveeditor-shot-autosave")
        w.set_theme(theme)
        w.setGeometry(0, 0, 1600, 1000)
        w.show()
        QTest.qWaitForWindowExposed(w)
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        w.files.loaded.connect(loop.quit)
        QTimer.singleShot(20000, loop.quit)
        w.open_initial(None)  # the bundled sample, read in a worker thread
        loop.exec()
        _wait(app, 200)
        doc = w.doc
        doc.select_paths(["Character"])
        doc.select_keys({"Character": {40}})
        doc.set_time(float(doc.clip.track("Character").times[40]))
        if preview:
            w.recipe.add_step("unwrap")
            deadline = time.perf_counter() + 10
            while doc.preview is None and time.perf_counter() < deadline:
                app.processEvents()
                time.sleep(0.005)
        _wait(app, 600)
        grab_screen(out_dir / name)
        print(f"wrote {out_dir / name}")
        doc.undo_stack.setClean()
        w.close()
        _wait(app, 100)

    shot("editor.png", "light", False)
    shot("editor-dark.png", "dark", False)
    shot("editor-preview.png", "light", True)


def grab_screen(path: Path) -> None:
    """The whole X screen as PNG: ImageMagick's ``import -window root`` when installed, else Qt's
    ``QScreen.grabWindow(0)`` (the root window from the X server, native GL windows included)."""
    import shutil

    if shutil.which("import"):
        subprocess.run(["import", "-window", "root", str(path)], check=True)
        return
    from PySide6.QtGui import QGuiApplication

    if not QGuiApplication.primaryScreen().grabWindow(0).save(str(path)):
        raise SystemExit(f"could not write {path}")


def take_rig_screenshots(app, out_dir: Path) -> None:
    """Issue 9 screenshots of the real window (1600 x 1000 screen, ``import -window root``):
    ``rig-biped-deep-bone.png`` (the generated Biped rig, a 13-level-deep finger bone selected) and
    ``rig-mocap-15-overlay.png`` (15 tracks of the CMU mocap BVH overlaid, with the legend)."""
    from PySide6.QtTest import QTest

    from curveeditor.app.window.main_window import MainWindow
    from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip

    out_dir.mkdir(parents=True, exist_ok=True)

    def window():
        w = MainWindow(autosave_folder="/tmp/curveeditor-shot-autosave")
        w.set_theme("light")
        w.setGeometry(0, 0, 1600, 960)
        w.reset_layout()
        w.show()
        QTest.qWaitForWindowExposed(w)
        _wait(app, 300)
        return w

    w = window()
    w.doc.load(biped_clip(300, 30.0), None)
    w.doc.select_paths([DEEP_BIPED_BONE])
    w.doc.select_keys({DEEP_BIPED_BONE: {120}})
    w.doc.set_time(4.0)
    _wait(app, 800)
    grab_screen(out_dir / "rig-biped-deep-bone.png")
    print(f"wrote {out_dir / 'rig-biped-deep-bone.png'}")
    w.doc.undo_stack.setClean()
    w.close()
    _wait(app, 100)

    cmu = CORPUS / "bvh" / "FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh"
    w = window()
    w.files.open_path(str(cmu))
    _loop_until(app, w.files.loaded, 60000)
    clip = w.doc.clip
    w.graphs.set_layout(overlay=True)
    w.act_overlay.setChecked(True)
    paths = [t.path for t in clip.tracks if t.n_keys > 2][:15]
    w.doc.select_paths(paths)
    w.doc.set_time(clip.start + 0.4 * (clip.end - clip.start))
    _wait(app, 1000)
    grab_screen(out_dir / "rig-mocap-15-overlay.png")
    print(f"wrote {out_dir / 'rig-mocap-15-overlay.png'}")
    w.doc.undo_stack.setClean()
    w.close()
    _wait(app, 100)


def take_keymap_screenshot(app, out_dir: Path) -> None:
    """Issue 22: ``keymap-editor.png``, Help > Keyboard shortcuts over the CMU mocap rig, one
    shortcut changed (bold) and a refused conflict waiting for "Take it over"."""
    from PySide6.QtTest import QTest

    from curveeditor.app.window.main_window import MainWindow

    out_dir.mkdir(parents=True, exist_ok=True)
    w = MainWindow(autosave_folder="/tmp/curveeditor-shot-autosave")
    w.set_theme("light")
    w.setGeometry(0, 0, 1600, 960)
    w.reset_layout()
    w.show()
    QTest.qWaitForWindowExposed(w)
    w.files.open_path(str(CORPUS / "bvh" / "FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh"))
    _loop_until(app, w.files.loaded, 60000)
    w.keymap.reset_all()
    w.act_shortcuts.trigger()
    dlg = w.shortcuts_dialog
    dlg.move(380, 140)
    QTest.qWaitForWindowExposed(dlg)
    dlg.select("view.reset_layout")
    dlg.recorder.setFocus()
    QTest.keyClick(dlg.recorder, Qt.Key.Key_F8)
    dlg.select("view.frame_all")
    dlg.recorder.setFocus()
    QTest.keyClick(dlg.recorder, Qt.Key.Key_F)  # Frame selection's: refused, Take it over offered
    dlg.table.scrollToItem(dlg.table.item(dlg.row_of("view.frame_all"), 0))
    _wait(app, 600)
    grab_screen(out_dir / "keymap-editor.png")
    print(f"wrote {out_dir / 'keymap-editor.png'}")
    w.keymap.reset_all()
    dlg.close()
    w.doc.undo_stack.setClean()
    w.close()
    _wait(app, 100)


def take_muscle_screenshots(app, out_dir: Path) -> None:
    """Issue 22: ``muscle-curves-fist.png``, the VRChat Fist gesture (40 finger muscles): the tree by
    body part, the Left Index muscles in the value strip after two of their keys were dragged
    (one undo step each, as a drag would: ``engine.edit.move_keys``), a key selected;
    ``muscle-curves-full-body.png``, a generated full-body humanoid (95 muscles + root), the Left
    Arm and Forearm muscles shown."""
    from PySide6.QtTest import QTest

    from curveeditor.app.window.main_window import MainWindow
    from curveeditor.engine import edit as ed
    from curveeditor.engine import float_curves as fc
    from tests.app.rig_clips import humanoid_muscle_clip

    out_dir.mkdir(parents=True, exist_ok=True)

    def window():
        w = MainWindow(autosave_folder="/tmp/curveeditor-shot-autosave")
        w.set_theme("light")
        w.setGeometry(0, 0, 1600, 960)
        w.reset_layout()
        w.show()
        QTest.qWaitForWindowExposed(w)
        return w

    def select(w, names):
        from PySide6.QtCore import QItemSelectionModel, QModelIndex

        from curveeditor.app.tracks.tree import OTHER_ROLE

        view = w.tracks.view
        m = view.model()
        sm = view.selectionModel()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows

        def walk(parent):
            for r in range(m.rowCount(parent)):
                idx = m.index(r, 0, parent)
                if m.data(idx, OTHER_ROLE) in names:
                    sm.select(idx, flags)
                    if m.data(idx, OTHER_ROLE) == names[-1]:
                        view.scrollTo(idx)
                walk(idx)

        sm.clearSelection()
        walk(QModelIndex())

    w = window()
    w.files.open_path(
        str(
            CORPUS
            / "anim"
            / "BlackStartx__VRC-Gesture-Manager__Resources_Gm_Animations_Gesture__GESTURE__Fist.anim"
        )
    )
    _loop_until(app, w.files.loaded, 60000)
    doc = w.doc
    index = [n for n in (o.name for o in fc.float_tracks(doc.clip)) if n.startswith("LeftHand.Index")]
    for name, dv in ((index[0], 1.4), (index[2], 0.9)):
        o = doc.other_track(name)
        doc.apply_clip(
            fc.with_float_curve(doc.clip, name, ed.move_keys(o, [1], 0.0, 0, dv).curve), "Move keys"
        )
    select(w, index)
    doc.select_float_keys({index[0]: {1}})
    w.graphs.frame_all()
    _wait(app, 800)
    grab_screen(out_dir / "muscle-curves-fist.png")
    print(f"wrote {out_dir / 'muscle-curves-fist.png'}")
    doc.undo_stack.setClean()
    w.close()
    _wait(app, 100)

    w = window()
    w.doc.load(humanoid_muscle_clip(91, 30.0), None)
    arm = [m for m in fc.HUMAN_MUSCLES if m.startswith(("Left Arm", "Left Forearm"))]
    select(w, arm)
    w.doc.select_float_keys({arm[0]: {30, 31, 32}})
    w.doc.set_time(1.5)
    w.graphs.frame_all()
    _wait(app, 800)
    grab_screen(out_dir / "muscle-curves-full-body.png")
    print(f"wrote {out_dir / 'muscle-curves-full-body.png'}")
    w.doc.undo_stack.setClean()
    w.close()
    _wait(app, 100)


def take_curve_screenshots(app, out_dir: Path) -> None:
    """Issue 22 "Per-curve work" screenshots of the real window (1600 x 1000 screen, ``import
    -window root``): ``percurve-biped-light.png`` / ``percurve-biped-dark.png`` (Biped rig, keys
    selected per curve, the active key's fields, rings and selected marks), ``percurve-drag-label.png``
    (mid-drag on the Gangnam BVH: the live value beside the key), ``percurve-walk-31-legend.png``
    (the CMU walk's 31 joints: the legend beside the plots), ``percurve-isolate.png`` (Isolate on 15
    Gangnam tracks) and ``percurve-walk-hierarchy.png`` (a thigh's hierarchy selected in 3D)."""
    from PySide6.QtTest import QTest

    from curveeditor.io import read_clip
    from tests.app.rig_clips import biped_clip

    out_dir.mkdir(parents=True, exist_ok=True)
    from curveeditor.app.window.main_window import MainWindow

    def window(theme="light"):
        w = MainWindow(autosave_folder="/tmp/curveeditor-shot-autosave")
        w.set_theme(theme)
        w.setGeometry(0, 0, 1600, 960)
        w.reset_layout()
        w.show()
        QTest.qWaitForWindowExposed(w)
        _wait(app, 300)
        return w

    def done(w, name):
        _wait(app, 700)
        grab_screen(out_dir / name)
        print(f"wrote {out_dir / name}")
        w.doc.undo_stack.setClean()
        w.close()
        _wait(app, 100)

    bone = "Bip001/Bip001 Pelvis/Bip001 Spine/Bip001 Spine1"
    for theme in ("light", "dark"):
        w = window(theme)
        w.doc.load(biped_clip(300, 30.0), None)
        w.doc.select_paths([bone])
        w.graphs.strips[0].plot.setXRange(0.0, 1.6, padding=0)
        w.graphs._frame_values()
        w.doc.select_keys({(bone, 0): {9, 10}, (bone, 1): {20}}, active=(bone, 20, 1))
        w.doc.set_time(0.8)
        done(w, f"percurve-biped-{theme}.png")

    gangnam = CORPUS / "bvh" / "PeizhuoLi__ganimator__data_Malcolm_Gangnam-Style.bvh"
    walk = CORPUS / "bvh" / "VictorS-67__pybvh__bvh_data_cmu_12_01_walk.bvh"
    if gangnam.is_file():
        w = window()
        w.doc.load(read_clip(gangnam), None)
        path = w.doc.clip.tracks[3].path
        w.doc.select_paths([path])
        g = w.graphs
        g.strips[0].plot.setXRange(2.0, 3.0, padding=0)
        g._frame_values()
        _wait(app, 300)
        kt, kv = g.display_keys(path)
        i = int(np.searchsorted(kt, 2.5))
        vb = g.euler_plots[1].getViewBox()
        start = g.glw.mapFromScene(vb.mapViewToScene(QPointF(float(kt[i]), float(kv[i, 1]))))
        w.doc.select_keys({(path, 1): {i}}, active=(path, i, 1))
        g.input.begin_drag(vb, g.glw.mapToScene(start), Qt.KeyboardModifier.NoModifier)
        p0 = vb.mapSceneToView(QPointF(g.glw.mapToScene(start)))
        g.input.drag_to(vb, p0, QPointF(p0.x(), p0.y() + 0.4), Qt.KeyboardModifier.NoModifier, False)
        _wait(app, 500)
        grab_screen(out_dir / "percurve-drag-label.png")
        print(f"wrote {out_dir / 'percurve-drag-label.png'}")
        g.input.cancel_drag()
        w.doc.undo_stack.setClean()
        w.close()
        _wait(app, 100)

        w = window()
        w.doc.load(read_clip(gangnam), None)
        paths = [t.path for t in w.doc.clip.tracks[:15]]
        w.doc.select_paths(paths)
        w.doc.select_keys({(paths[0], 1): {120, 160, 200}, (paths[4], 2): {300, 330}})
        w.graphs.solo.isolate_selected()
        done(w, "percurve-isolate.png")
    if walk.is_file():
        w = window()
        w.doc.load(read_clip(walk), None)
        w.doc.select_paths([t.path for t in w.doc.clip.tracks])
        done(w, "percurve-walk-31-legend.png")

        w = window()
        w.doc.load(read_clip(walk), None)
        thigh = next(t.path for t in w.doc.clip.tracks if t.path.endswith("LeftUpLeg"))
        w.doc.select_hierarchy(thigh)
        w.tools.skeleton.frame_character()
        done(w, "percurve-walk-hierarchy.png")


def synthetic_main(app) -> int:
    """The first wave's table: a synthetic 60 x 3000 clip (drag, recipe preview, cold start)."""
    pg.setConfigOptions(mouseRateLimit=-1)
    from PySide6.QtTest import QTest

    import curveeditor.app.window.main_window as mw
    from curveeditor.app.window.main_window import MainWindow

    def window():
        w = MainWindow(autosave_folder="/tmp/curveeditor-bench-autosave")
        w.resize(1500, 940)
        w.show()
        QTest.qWaitForWindowExposed(w)
        app.processEvents()
        return w

    win = window()
    drag = bench_drag(app, win)
    rec = bench_recipe(app, win)
    win.doc.undo_stack.setClean()
    win.close()
    # Same drag in a window without the 3D view: a QOpenGLWidget makes Qt composite the whole window
    # through OpenGL, which is llvmpipe (software) under Xvfb.
    from PySide6.QtWidgets import QWidget

    class _NoGL(QWidget):  # same dock, no QOpenGLWidget
        def __init__(self, _doc, parent=None):
            super().__init__(parent)

    gizmo, mw.GizmoView = mw.GizmoView, _NoGL
    win = window()
    drag_nogl = bench_drag(app, win)
    win.doc.undo_stack.setClean()
    win.close()
    mw.GizmoView = gizmo
    cold = bench_cold_start()

    rows = []
    med = statistics.median

    def drag_rows(d, label):
        hmed, tmed = med(d["handler"]), med(d["total"])
        rows.append(
            (
                f"key drag -> data updated, {label}",
                f"{hmed:.1f} ms",
                "< 16 ms",
                hmed < 16,
                "model edit + every view's data (graphs, key table, timeline, 3D), before painting",
            )
        )
        rows.append(
            (
                f"key drag -> painted, {label}",
                f"{tmed:.1f} ms",
                "< 16 ms",
                tmed < 16,
                f"p90 {np.percentile(d['total'], 90):.1f} ms; full redraw baseline {med(d['full']):.1f} ms "
                f"(x{med(d['full']) / tmed:.1f})",
            )
        )

    drag_rows(drag, "with 3D view")
    drag_rows(drag_nogl, "without 3D view")
    if rec is None:
        rows.append(("recipe preview: param change -> drawn", "n/a", "< 100 ms", False, "no recipe panel"))
    elif rec["total"]:
        m = med(rec["total"])
        eng = f"engine run_recipe {med(rec['engine']):.0f} ms" if rec["engine"] else "engine n/a"
        rows.append(
            (
                "recipe preview: param change -> drawn (1 track)",
                f"{m:.0f} ms",
                "< 100 ms",
                m < 100,
                f"min {min(rec['total']):.0f}; to result {med(rec['result']):.0f} ms "
                f"(incl. {rec['debounce']:.0f} ms coalescing, {eng}), drawing {med(rec['draw']):.0f} ms",
            )
        )
    else:
        rows.append(("recipe preview: param change -> drawn", "timeout", "< 100 ms", False, ""))
    if cold:
        rows.append(
            (
                "cold start -> first painted window",
                f"{min(cold):.2f} s",
                "< 1.5 s",
                min(cold) < 1.5,
                f"best of {len(cold)}; median {med(cold):.2f} s",
            )
        )
    else:
        rows.append(("cold start -> first painted window", "n/a", "< 1.5 s", False, "no 'painted' line"))
    print(f"clip: {N_TRACKS} tracks x {N_KEYS} keys (Euler ZXY, {RATE:g} Hz)")
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':>9}  {'goal':>8}  result  notes")
    for name, val, goal, ok, note in rows:
        print(f"{name:<{w}}  {val:>9}  {goal:>8}  {'PASS' if ok else 'FAIL':>6}  {note}")
    return 0


# ---------------------------------------------------------------------------------------------------
# Real clips (issue 9): open -> curves, track selection, 15 tracks, drag, zoom, pan, playback.

CORPUS = Path(os.environ.get("CURVEEDITOR_CORPUS") or ROOT.parent / "shared" / "corpus")
DEFAULT_CLIPS = [
    CORPUS / "anim" / "Malmaars__3Dto2DTool__Assets_Resources_LoadedAnimationanim.anim",
    CORPUS / "anim" / "Tiotao__PlastAR__Assets_mixamo.com.anim",
    CORPUS / "bvh" / "PeizhuoLi__ganimator__data_Malcolm_Gangnam-Style.bvh",
    CORPUS / "bvh" / "FORTH-ModelBasedTracker__MocapNET__dataset_CMU_Sample_05_01.bvh",
    "biped",  # generated 99-track Biped-like rig with long paths (tests/app/rig_clips.py)
]


def _loop_until(app, signal, timeout_ms: int) -> bool:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    got = []
    signal.connect(lambda *_a: (got.append(1), loop.quit()))
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    return bool(got)


def _vp_send_wheel(widget, pos: QPoint, delta: int) -> None:
    from PySide6.QtGui import QWheelEvent

    ev = QWheelEvent(
        QPointF(pos),
        QPointF(widget.mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, delta),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, ev)


CPU_MS: list[float] = []  # process CPU time of each _timed call (ms), in call order


def _timed(app, fn) -> float:
    """ms from calling ``fn`` to every widget it dirtied painted (one processEvents). The process
    CPU time of the same span goes to ``CPU_MS``: on the shared machine the wall-clock figure
    includes waiting for a core, the CPU figure is what the editor itself spent."""
    c_a = time.process_time()
    t_a = time.perf_counter()
    fn()
    app.processEvents()
    wall = (time.perf_counter() - t_a) * 1000
    CPU_MS.append((time.process_time() - c_a) * 1000)
    return wall


def bench_clip(app, win, source, input_only: bool = False) -> dict:
    """Every measure of the real-clip table on one clip (a path, or "biped")."""
    doc = win.doc
    out: dict = {}
    doc.undo_stack.setClean()
    if source == "biped":
        from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip

        clip = biped_clip(900, 30.0)
        t_a = time.perf_counter()
        doc.load(clip, None)
        app.processEvents()
        out["open"] = (time.perf_counter() - t_a) * 1000
        out["name"] = "generated Biped rig (99 tracks, 13 levels)"
        doc.select_paths([DEEP_BIPED_BONE])
        app.processEvents()
    else:
        path = str(source)
        t_a = time.perf_counter()
        win.files.open_path(path)
        if not _loop_until(app, win.files.loaded, 60000):
            raise SystemExit(f"{path}: did not load")
        app.processEvents()  # first curves painted
        out["open"] = (time.perf_counter() - t_a) * 1000
        out["name"] = os.path.basename(path)
        out["size_mb"] = os.path.getsize(path) / 1e6
    clip = doc.clip
    out["shape"] = (
        f"{len(clip.tracks)} tracks x {max(t.n_keys for t in clip.tracks)} keys @ {clip.frame_rate:g} fps"
    )
    keyed = [t.path for t in clip.tracks if t.n_keys >= 3]
    if input_only:
        return {**out, **bench_input(app, win, keyed)}
    # track selection (one track at a time, new tracks: nothing cached)
    sel = []
    for p in keyed[1:11]:
        sel.append(_timed(app, lambda p=p: doc.select_paths([p])))
    out["select"] = sel
    out["select_cpu"] = CPU_MS[-len(sel) :]
    # 15 tracks at once (three different sets)
    many = []
    for k in range(3):
        group = keyed[(k * 15) % max(len(keyed) - 15, 1) :][:15]
        if len(group) < 2:
            break
        many.append((len(group), _timed(app, lambda g=group: doc.select_paths(g))))
    out["many"] = many
    out.update(bench_input(app, win, keyed))
    out.update(bench_gizmo(app, win))
    out.update(bench_playback(win))
    return out


def bench_input(app, win, keyed: list[str]) -> dict:
    """Key drag, wheel zoom and middle-button pan over the X graph, each step timed from the input
    event to its pixels on screen (:class:`benchmarks.pixels.PixelProbe`)."""
    doc, graphs = win.doc, win.graphs
    clip = doc.clip
    out: dict = {}
    # key drag on the primary track: one key, real mouse events, painted per step
    tr = next((clip.track(p) for p in keyed if clip.track(p).kind == "euler"), clip.track(keyed[0]))
    doc.select_paths([tr.path])
    app.processEvents()
    i = tr.n_keys // 2
    # the key on the X curve, as a click on it selects it (per curve; the whole key X, Y, Z with
    # View > Select whole keys, whose drag moves and repaints all three plots)
    doc.select_keys({(tr.path, 0): {i}})
    plot = graphs.euler_plots[0]
    t0 = float(tr.times[i])
    v0 = float(graphs.cache.keys(tr)[1][i, 0])
    # 4 s of curve, or less so that a key interval is >= 1/40 of the plot: the time cursor sits inside
    # the dragged key's interval, clear of its hit area (it would take the press), as when one scrubs
    # near a key and drags it: every step changes the pose at the cursor, so the 3D view (tripod,
    # skeleton) redraws with the curves, as it does by hand.
    dt = float(tr.times[i + 1]) - t0
    half = min(2.0, 20 * dt)
    plot.setXRange(t0 - half, t0 + half, padding=0)
    doc.set_time(t0 + 0.6 * dt)
    lo, hi = float(graphs.cache.keys(tr)[1][:, 0].min()), float(graphs.cache.keys(tr)[1][:, 0].max())
    plot.setYRange(lo - 5, hi + 5, padding=0)
    app.processEvents()
    vp = graphs.glw.viewport()
    start = graphs.glw.mapFromScene(plot.getViewBox().mapViewToScene(QPointF(t0, v0)))
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    probe = PixelProbe(app, vp, getattr(getattr(win, "gizmo", None), "view", None))
    send(vp, QEvent.Type.MouseMove, start, none, none)
    send(vp, QEvent.Type.MouseButtonPress, start, left, left)
    app.processEvents()
    probe.verify()
    drag = []
    for k in range(1, 41):
        p = start + QPoint((k % 5) - 2, -k)
        drag.append(probe.step(lambda p=p: send(vp, QEvent.Type.MouseMove, p, none, left)))
        drag[-1].changed = probe.verify()
    send(vp, QEvent.Type.MouseButtonRelease, p, left, none)
    app.processEvents()
    out["drag"] = drag[3:]
    out["drag_ok"] = doc.undo_stack.count() >= 1
    doc.undo_stack.undo()
    app.processEvents()
    # wheel zoom (alternating in/out notches at the plot's centre)
    centre = graphs.glw.mapFromScene(plot.getViewBox().sceneBoundingRect().center())
    probe.verify()
    zoom = []
    for k in range(20):
        delta = 120 if k % 2 == 0 else -120
        zoom.append(probe.step(lambda d=delta: _vp_send_wheel(vp, centre, d)))
        zoom[-1].changed = probe.verify()
    out["zoom"] = zoom[2:]
    # pan: middle-button drag
    mid = Qt.MouseButton.MiddleButton
    send(vp, QEvent.Type.MouseMove, centre, none, none)
    send(vp, QEvent.Type.MouseButtonPress, centre, mid, mid)
    app.processEvents()
    probe.verify()
    pan = []
    for k in range(1, 31):
        p = centre + QPoint(4 * k, 0)
        pan.append(probe.step(lambda p=p: send(vp, QEvent.Type.MouseMove, p, none, mid)))
        pan[-1].changed = probe.verify()
    send(vp, QEvent.Type.MouseButtonRelease, p, mid, none)
    app.processEvents()
    out["pan"] = pan[2:]
    probe.close()
    return out


def bench_playback(win, ms: int = 2000) -> dict:
    """Playback for ``ms`` of real time in Qt's event loop: ``timeChanged`` ticks per second, the 3D
    view's frames per second (``frameSwapped``) and the per-slot breakdown (:data:`PLAY_SLOTS`)."""
    doc = win.doc
    win.graphs.frame_all()
    doc.set_time(doc.clip.start)
    ticks = []
    frames = []
    on_tick = lambda _t: ticks.append(time.perf_counter())  # noqa: E731
    on_frame = lambda: frames.append(time.perf_counter())  # noqa: E731
    doc.timeChanged.connect(on_tick)
    gl_view = getattr(getattr(win, "gizmo", None), "view", None)
    if gl_view is not None:
        gl_view.frameSwapped.connect(on_frame)
    SLOT_CPU.clear()
    SLOT_CALLS.clear()
    _SLOTS_ON[0] = True
    thread_a, load = time.thread_time(), os.getloadavg()[0]
    win.timeline.set_playing(True)
    _run_event_loop(ms)
    win.timeline.set_playing(False)
    thread_cpu = time.thread_time() - thread_a
    _SLOTS_ON[0] = False
    doc.timeChanged.disconnect(on_tick)
    if gl_view is not None:
        gl_view.frameSwapped.disconnect(on_frame)
    span = ticks[-1] - ticks[0] if len(ticks) > 2 else 0.0
    n = max(len(ticks), 1)
    return {
        "fps": (len(ticks) - 1) / span if span else 0.0,
        "gl_fps": (len(frames) - 1) / span if span and len(frames) > 1 else 0.0,
        "clip_fps": float(doc.clip.frame_rate),
        "tick_cpu": thread_cpu * 1000 / n,
        "slots": {k: (v * 1000 / n, SLOT_CALLS[k] / n) for k, v in SLOT_CPU.items()},
        "load": load,
    }


#: What a playback frame spends, slot by slot (main thread CPU, ``time.thread_time``): each
#: ``timeChanged`` handler and each paint, as (label, module, class, method). The classes are
#: patched by :func:`install_slot_timers` before any window exists (signals connected to bound
#: methods keep the function they were given).
PLAY_SLOTS = [
    ("all timeChanged handlers (Timeline._tick)", "curveeditor.app.window.timeline", "Timeline", "_tick"),
    ("  timeline: slider, time box, readout", "curveeditor.app.window.timeline", "Timeline", "_on_time"),
    ("  graphs: time cursors", "curveeditor.app.graphs.panel", "GraphPanel", "_on_time"),
    ("  3D view: tripods, rings", "curveeditor.app.view3d.gizmo", "GizmoView", "_on_time"),
    ("  3D view: skeleton pose", "curveeditor.app.view3d.skeleton", "SkeletonLayer", "update_pose"),
    ("  diff panel: cursor", "curveeditor.app.recipe.diff_panel", "DiffPanel", "_on_time"),
    ("paint: 3D view (paintGL)", "curveeditor.app.view3d.gizmo", "GLViewWindow", "paintGL"),
    ("paint: graphs (GraphicsView)", "pyqtgraph.widgets.GraphicsView", "GraphicsView", "paintEvent"),
    ("paint: dope sheet", "curveeditor.app.dope_sheet.sheet", "DopeCanvas", "paintEvent"),
]
SLOT_CPU: dict[str, float] = {}
SLOT_CALLS: dict[str, int] = {}
_SLOTS_ON = [False]


def install_slot_timers() -> None:
    """Wrap every :data:`PLAY_SLOTS` method so that, while ``_SLOTS_ON[0]``, its main-thread CPU
    time and calls add up in ``SLOT_CPU`` / ``SLOT_CALLS`` (about 1 us per call otherwise)."""
    import importlib

    for label, module, cls_name, meth in PLAY_SLOTS:
        cls = getattr(importlib.import_module(module), cls_name)
        fn = getattr(cls, meth)

        def timed(*a, _fn=fn, _label=label, **k):
            if not _SLOTS_ON[0]:
                return _fn(*a, **k)
            c = time.thread_time()
            try:
                return _fn(*a, **k)
            finally:
                SLOT_CPU[_label] = SLOT_CPU.get(_label, 0.0) + time.thread_time() - c
                SLOT_CALLS[_label] = SLOT_CALLS.get(_label, 0) + 1

        setattr(cls, meth, timed)


def print_breakdown(r: dict) -> None:
    """The per-slot breakdown of one playback run, under the clip's table."""
    slots = r["slots"]
    print(
        f"  playback frame, main-thread CPU per tick: {r['tick_cpu']:.2f} ms (not a goal: the "
        f"budget at 60 fps is 16.7 ms); "
        f"3D view {r['gl_fps']:.1f} frames/s; load average {r['load']:.2f} (shared machine)"
    )
    named = 0.0
    for label, *_ in PLAY_SLOTS:
        ms, calls = slots.get(label, (0.0, 0.0))
        if not label.startswith(" "):
            named += ms
        print(f"    {label:<44} {ms:6.2f} ms  ({calls:.2f} calls/tick)")
    rest = r["tick_cpu"] - named
    print(f"    {'rest: Qt layout, widget paint, events':<44} {rest:6.2f} ms")


def clip_rows(r: dict) -> list[tuple]:
    med = statistics.median

    def p90(v):
        return float(np.percentile(v, 90))

    rows = []
    big = r.get("size_mb", 0) >= 1.0
    goal_open = 1500.0
    rows.append(
        (
            "open -> first curves drawn",
            f"{r['open']:.0f} ms",
            "< 1.5 s" if big else "(< 1.5 s @3MB)",
            r["open"] < goal_open,
            f"read in a worker + load + paint; {r.get('size_mb', 0):.2f} MB",
        )
    )
    rows.append(
        (
            "track selection",
            f"{med(r['select']):.0f} ms",
            "< 100 ms",
            med(r["select"]) < 100,
            f"median of {len(r['select'])}, max {max(r['select']):.0f} ms; CPU {med(r['select_cpu']):.0f} ms",
        )
    )
    if r["many"]:
        n = r["many"][0][0]
        v = [m for _n, m in r["many"]]
        rows.append(
            (f"{n}-track selection", f"{med(v):.0f} ms", "< 300 ms", med(v) < 300, f"median of {len(v)}")
        )
    rows.extend(input_rows(r))
    if r.get("gizmo"):
        v, cpu = r["gizmo"], r["gizmo_cpu"]
        ok = med(v) < 25 and p90(v) < 50 and r["gizmo_ok"] and r["gizmo_same"] == 0
        note = (
            f"input to pixel (grab of the 3D view after the frame swapped); p90 {p90(v):.1f} ms, n={len(v)}; "
            f"CPU median {med(cpu):.1f} ms; {r['gizmo_what']}, view {r['gizmo_size']}; "
            f"unchanged frames {r['gizmo_same']}; one undo step: {'yes' if r['gizmo_ok'] else 'NO'}"
        )
        rows.append(("gizmo rotate drag -> pixels", f"{med(v):.1f} ms", "<25 / p90<50", ok, note))
    rows.append(playback_row(r))
    return rows


def input_rows(r: dict) -> list[tuple]:
    """The drag / zoom / pan rows (input -> pixels on screen)."""
    return [
        _pixel_row(label, r[key])
        for key, label in (
            ("drag", "key drag: input -> pixels"),
            ("zoom", "wheel zoom: input -> pixels"),
            ("pan", "pan: input -> pixels"),
        )
    ]


#: Input-to-pixel goals (issue 22): median and 90th percentile, ms.
PIXEL_GOAL_MEDIAN_MS, PIXEL_GOAL_P90_MS = 25.0, 50.0


def _pixel_row(label: str, steps: list) -> tuple:
    """A table row of :class:`~benchmarks.pixels.StepTiming` steps: input -> pixels on screen (the
    goal), with the handler time and the old one-``processEvents`` figure as secondary columns."""
    med = statistics.median

    def p90(v):
        return float(np.percentile(v, 90))

    px = [s.pixel_ms for s in steps]
    hd = [s.handler_ms for s in steps]
    first = [s.first_pass_ms for s in steps]
    cpu = [s.cpu_ms for s in steps]
    unchanged = sum(1 for s in steps if not getattr(s, "changed", True))
    gl = sum(1 for s in steps if s.gl_frame)
    late = sum(1 for s in steps if s.timed_out)
    ok = med(px) < PIXEL_GOAL_MEDIAN_MS and p90(px) < PIXEL_GOAL_P90_MS and not late and not unchanged
    graph = [s.graph_ms for s in steps]
    note = (
        f"p90 {p90(px):.1f} ms, n={len(px)}; graph area alone {med(graph):.1f} ms; handler "
        f"{med(hd):.1f} ms, handler + 1 processEvents {med(first):.1f} ms; CPU {med(cpu):.1f} ms; "
        f"3D frames {gl}/{len(px)}"
    )
    if unchanged:
        note += f"; {unchanged} steps left the screen unchanged"
    if late:
        note += f"; {late} steps timed out"
    return (label, f"{med(px):.1f} ms", f"<{PIXEL_GOAL_MEDIAN_MS:g} / p90<{PIXEL_GOAL_P90_MS:g}", ok, note)


def playback_row(r: dict) -> tuple:
    goal_fps = min(r["clip_fps"], 60.0)
    return (
        "playback",
        f"{r['fps']:.1f} /s",
        f">= {goal_fps * 0.95:.0f} /s",
        r["fps"] >= goal_fps * 0.95,
        f"time updates per second; 3D view {r['gl_fps']:.1f} frames/s; clip at {r['clip_fps']:g} fps",
    )


def many_tracks_rows(app, win) -> list[tuple]:
    """15 and 60 selected tracks of a generated 60-track mocap-like clip (2,752 frames, like CMU)."""
    from tests.app.rig_clips import many_tracks_clip

    clip = many_tracks_clip(60, 2752, 120.0)
    win.doc.load(clip, None)
    win.doc.select_paths([clip.tracks[0].path])
    app.processEvents()
    paths = [t.path for t in clip.tracks]
    t15 = _timed(app, lambda: win.doc.select_paths(paths[1:16]))
    c15 = CPU_MS[-1]
    t60 = _timed(app, lambda: win.doc.select_paths(paths))
    c60 = CPU_MS[-1]
    return [
        (
            "15 tracks x 2752 keys selected -> drawn",
            f"{t15:.0f} ms",
            "< 300 ms",
            t15 < 300,
            f"generated, cold cache; CPU {c15:.0f} ms",
        ),
        (
            "60 tracks x 2752 keys selected -> drawn",
            f"{t60:.0f} ms",
            "< 1 s",
            t60 < 1000,
            f"generated, cold cache; CPU {c60:.0f} ms",
        ),
    ]


def print_table(title: str, rows) -> None:
    print(f"\n== {title}")
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':>10}  {'goal':>14}  result  notes")
    for name, val, goal, ok, note in rows:
        print(f"{name:<{w}}  {val:>10}  {goal:>14}  {'PASS' if ok else 'FAIL':>6}  {note}")


def _prepare_measuring() -> None:
    """What every table measures after: no mouse-rate limit, the recipe ops' scipy imports done (the
    window starts them on a worker thread 1 s after the first clip is drawn, ~2 s holding the GIL,
    which would overlap the first clip's figures only), the playback slots timed."""
    pg.setConfigOptions(mouseRateLimit=-1)
    from curveeditor.app.recipe.preview import _warm_up

    _warm_up(None, None)
    install_slot_timers()


def _bench_window(app):
    """A fresh main window, shown and exposed (one window at a time, as in the application)."""
    from PySide6.QtTest import QTest

    from curveeditor.app.window.main_window import MainWindow

    win = MainWindow(autosave_folder="/tmp/curveeditor-bench-autosave")
    win.resize(1500, 940)
    win.show()
    QTest.qWaitForWindowExposed(win)
    return win


def _close_window(app, win) -> None:
    """Close and delete ``win``: a closed window kept alive kept its views, caches and GL scene, and
    every later clip's figures paid for them (collector passes)."""
    win.doc.undo_stack.setClean()
    win.close()
    win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    import gc

    gc.collect()


def real_main(app, clips, input_only: bool = False) -> int:
    print(
        "Machine shared with other helpers (2 cores): every wall-clock figure is inflated by their load "
        f"(load average now {os.getloadavg()[0]:.2f}); CPU = this process's CPU time for the same span."
    )
    _prepare_measuring()
    for src in clips:
        if src != "biped" and not Path(src).is_file():
            print(f"\n== {src}: absent, skipped")
            continue
        win = _bench_window(app)
        app.processEvents()
        r = bench_clip(app, win, src, input_only)
        if not r["drag_ok"]:
            print(f"{src}: the drag did not register")
        if input_only:
            print_table(f"{r['name']} ({r['shape']})", input_rows(r))
        else:
            print_table(f"{r['name']} ({r['shape']})", clip_rows(r))
            print_breakdown(r)
        _close_window(app, win)
    if input_only:
        return 0
    win = _bench_window(app)
    print_table("many tracks", many_tracks_rows(app, win))
    win.close()
    cold = bench_cold_start()
    if cold:
        print_table(
            "start-up",
            [
                (
                    "cold start -> first painted window",
                    f"{min(cold):.2f} s",
                    "< 1.5 s",
                    min(cold) < 1.5,
                    f"best of {len(cold)}; median {statistics.median(cold):.2f} s",
                )
            ],
        )
    return 0


def playback_main(app, clips, repeat: int) -> int:
    """``--playback``: only the playback row and its breakdown, ``repeat`` runs per clip (each clip
    opened in a fresh window as in the full table, its first keyed Euler track selected, as the
    full table leaves it before playing)."""
    print(f"Machine shared with other helpers (2 cores); load average now {os.getloadavg()[0]:.2f}.")
    _prepare_measuring()
    for src in clips:
        if src != "biped" and not Path(src).is_file():
            print(f"\n== {src}: absent, skipped")
            continue
        win = _bench_window(app)
        if src == "biped":
            from tests.app.rig_clips import DEEP_BIPED_BONE, biped_clip

            win.doc.load(biped_clip(900, 30.0), None)
            name, first = "generated Biped rig (99 tracks, 13 levels)", DEEP_BIPED_BONE
        else:
            win.files.open_path(str(src))
            if not _loop_until(app, win.files.loaded, 60000):
                raise SystemExit(f"{src}: did not load")
            name, first = os.path.basename(str(src)), None
        clip = win.doc.clip
        keyed = [t for t in clip.tracks if t.n_keys >= 3]
        if first is None:
            first = next((t.path for t in keyed if t.kind == "euler"), keyed[0].path)
        win.doc.select_paths([first])
        _run_event_loop(500)
        runs = [bench_playback(win) for _ in range(repeat)]
        n_keys = max(t.n_keys for t in clip.tracks)
        shape = f"{len(clip.tracks)} tracks x {n_keys} keys @ {clip.frame_rate:g} fps"
        print_table(f"{name} ({shape})", [playback_row(r) for r in runs])
        for r in runs:
            print_breakdown(r)
        _close_window(app, win)
    return 0


class _Swaps:
    """Counts the GL window's swapped frames (connected before the input event: the swap may come
    inside the ``processEvents`` that handles it, or from ``requestUpdate``'s timer after)."""

    def __init__(self, gl_view):
        self.n = 0
        gl_view.frameSwapped.connect(self._count)

    def _count(self) -> None:
        self.n += 1

    def wait_past(self, n: int, timeout_ms: int = 500) -> bool:
        """Run Qt's event loop until more than ``n`` frames were swapped (or the timeout)."""
        from PySide6.QtCore import QEventLoop, QTimer

        if self.n > n:
            return True
        loop = QEventLoop()
        timer = QTimer()
        timer.setInterval(1)
        timer.timeout.connect(lambda: loop.quit() if self.n > n else None)
        timer.start()
        QTimer.singleShot(timeout_ms, loop.quit)
        loop.exec()
        timer.stop()
        return self.n > n


def _grab_region(widget):
    """The on-screen pixels of ``widget`` (a native GL window included) from the X server: the frame
    the user sees, not a re-render (``QScreen.grabWindow(0, ...)`` reads the root window)."""
    from PySide6.QtGui import QGuiApplication

    top_left = widget.mapToGlobal(QPoint(0, 0))
    return QGuiApplication.primaryScreen().grabWindow(
        0, top_left.x(), top_left.y(), widget.width(), widget.height()
    )


def bench_gizmo(app, win) -> dict:
    """Rotation gizmo drag, input to pixel: real mouse events on the 3D view's screen-space ring of a
    bone (a BVH arm joint; the single gizmo's track on clips without a character), each step timed
    from sending the event to the changed pixels grabbed from the screen (the event handled, the
    document keyed live, every view updated and painted, the GL frame swapped, then the 3D view's
    region read back from the X server). Steps whose grab equals the previous one are counted."""
    doc, gizmo = win.doc, win.gizmo
    rot = getattr(getattr(win, "tools", None), "rotate", None)
    if rot is None:
        return {}
    clip = doc.clip
    keyed = [t for t in clip.tracks if t.n_keys >= 3]
    arm = next((t for t in keyed if t.path.endswith(("LeftArm", "LeftForeArm"))), None)
    track = arm or next((t for t in keyed if t.kind == "euler"), keyed[0])
    doc.select_paths([track.path])
    doc.clear_key_selection()
    doc.set_time(doc.snap_time(clip.start + 0.4 * (clip.end - clip.start)))
    rot.set_enabled(True)
    gizmo.reset_view()
    _run_event_loop(300)
    view = gizmo.view
    c = rot.ring_pixels("center")[0]
    ring = rot.ring_pixels("view")
    p0 = ring[len(ring) // 8]
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    n0 = doc.undo_stack.index()  # count() keeps undone commands (the key drag's) until a push
    send(view, QEvent.Type.MouseMove, QPoint(*map(int, p0)), none, none)
    send(view, QEvent.Type.MouseButtonPress, QPoint(*map(int, p0)), left, left)
    swaps = _Swaps(view)
    swaps.wait_past(-1, 100)
    rel = p0 - c
    r, a0 = float(np.hypot(*rel)), float(np.arctan2(rel[1], rel[0]))
    times, cpu, same, prev = [], [], 0, _grab_region(gizmo.view_widget).toImage()
    prof = None
    if os.environ.get("BENCH_PROFILE") == "gizmo":
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    for k in range(1, 41):
        a = a0 - np.radians(2.0 * k)
        pos = QPoint(int(round(c[0] + r * np.cos(a))), int(round(c[1] + r * np.sin(a))))
        n = swaps.n
        c_a, t_a = time.process_time(), time.perf_counter()
        send(view, QEvent.Type.MouseMove, pos, none, left)
        app.processEvents()
        swaps.wait_past(n)
        grab = _grab_region(gizmo.view_widget)
        times.append((time.perf_counter() - t_a) * 1000)
        cpu.append((time.process_time() - c_a) * 1000)
        img = grab.toImage()
        same += img == prev
        prev = img
    if prof is not None:
        import pstats

        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
    send(view, QEvent.Type.MouseButtonRelease, pos, left, none)
    app.processEvents()
    ok = doc.undo_stack.index() == n0 + 1
    if ok:
        doc.undo_stack.undo()
        app.processEvents()
    return {
        "gizmo": times[2:],
        "gizmo_cpu": cpu[2:],
        "gizmo_same": same,
        "gizmo_ok": ok and rot.steps > 0,
        "gizmo_what": f"{track.path.rsplit('/', 1)[-1]}, "
        + ("character" if win.tools.skeleton.active() else "single gizmo"),
        "gizmo_size": f"{view.width()}x{view.height()}",
    }


def take_view3d_screenshots(app, out_dir: Path) -> None:
    """Issue 22 screenshots of the real window (1600 x 1000, the X screen grabbed): ``gizmo_rotate.png``
    (the Gangnam BVH's left arm mid-drag on its local ring, the curves and key table following),
    ``motion_trail.png`` (the CMU walk's left hand trail, following the root) and ``onion_skin.png``
    (the Bandai kick with onion-skin ghosts, the whole clip framed)."""
    from PySide6.QtTest import QTest

    from curveeditor.app.window.main_window import MainWindow

    out_dir.mkdir(parents=True, exist_ok=True)

    def window(path):
        w = MainWindow(autosave_folder="/tmp/curveeditor-shot-autosave")
        w.set_theme("light")
        w.setGeometry(0, 0, 1600, 1000)
        w.show()
        QTest.qWaitForWindowExposed(w)
        _wait(app, 300)
        w.files.open_path(str(path))
        _loop_until(app, w.files.loaded, 60000)
        _wait(app, 300)
        return w

    def bone(w, name):
        p = next(t.path for t in w.doc.clip.tracks if t.path.endswith(name))
        w.doc.select_paths([p])
        return p

    def done(w, name):
        _wait(app, 500)
        grab_screen(out_dir / name)
        print(f"wrote {out_dir / name}")
        w.doc.undo_stack.setClean()
        w.close()
        _wait(app, 100)

    w = window(CORPUS / "bvh" / "PeizhuoLi__ganimator__data_Malcolm_Gangnam-Style.bvh")
    bone(w, "LeftArm")
    w.doc.set_time(w.doc.snap_time(3.7))
    w.tools.motion.set_trail(False)
    _wait(app, 300)
    rot, view = w.tools.rotate, w.gizmo.view
    c = rot.ring_pixels("center")[0]
    ring = rot.ring_pixels("x")
    k = next(i for i in range(0, len(ring) - 1, 3) if rot.pick(*ring[i]) == "x")
    p0 = ring[k]
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(view, QEvent.Type.MouseMove, QPoint(*map(int, p0)), none, none)
    send(view, QEvent.Type.MouseButtonPress, QPoint(*map(int, p0)), left, left)
    rel = p0 - c
    r, a0 = float(np.hypot(*rel)), float(np.arctan2(rel[1], rel[0]))
    for i in range(1, 21):
        a = a0 - np.radians(2.5 * i)
        send(
            view,
            QEvent.Type.MouseMove,
            QPoint(int(c[0] + r * np.cos(a)), int(c[1] + r * np.sin(a))),
            none,
            left,
        )
        _wait(app, 15)
    _wait(app, 300)
    done(w, "gizmo_rotate.png")  # mid-drag: the ring yellow, the key live in the curves and table

    w = window(CORPUS / "bvh" / "VictorS-67__pybvh__bvh_data_cmu_12_01_walk.bvh")
    bone(w, "LeftForeArm")
    w.tools.act_follow.setChecked(True)
    w.tools.motion.set_trail_frames(before=120, after=120)
    w.tools.rotate.set_enabled(False)
    w.doc.set_time(2.0)
    done(w, "motion_trail.png")

    w = window(
        CORPUS / "bvh" / "BandaiNamcoResearchInc__Bandai-Namco-Research-Motiondataset__dataset_"
        "Bandai-Namco-Research-Motiondataset-1_data_dataset-1_kick_normal_001.bvh"
    )
    bone(w, "UpperLeg_R")
    w.tools.rotate.set_enabled(False)
    w.tools.motion.set_onion(True)
    w.tools.motion.set_onion_frames(count=3, step=4)
    w.doc.set_time(w.doc.snap_time(0.45 * w.doc.clip.end))
    done(w, "onion_skin.png")


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clip", action="append", help="measure this clip (repeatable; 'biped' = generated rig)")
    ap.add_argument("--synthetic", action="store_true", help="the first wave's synthetic 60 x 3000 table")
    ap.add_argument("--screenshots", metavar="DIR", help="write the README screenshots to DIR")
    ap.add_argument("--rig-screenshots", metavar="DIR", help="write the issue 9 rig screenshots to DIR")
    ap.add_argument(
        "--view3d-screenshots", metavar="DIR", help="write the issue 22 3D view screenshots to DIR"
    )
    ap.add_argument("--keymap-screenshot", metavar="DIR", help="write the keymap editor screenshot to DIR")
    ap.add_argument("--muscle-screenshots", metavar="DIR", help="write the muscle-curve screenshots to DIR")
    ap.add_argument("--curve-screenshots", metavar="DIR", help="write the issue 22 per-curve screenshots")
    ap.add_argument("--playback", action="store_true", help="only the playback rows and their breakdown")
    ap.add_argument("--repeat", type=int, default=1, help="playback runs per clip with --playback")
    ap.add_argument("--input", action="store_true", help="only the drag / zoom / pan (input -> pixels) rows")
    args = ap.parse_args()
    QStandardPaths.setTestModeEnabled(True)
    # A fresh settings folder per run: every run measures the default layout (stacked X/Y/Z plots +
    # speed strip), not whatever view the previous run (or a screenshot run) left behind.
    import tempfile

    QSettings.setPath(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp(prefix="curveeditor-bench-")
    )
    app = QApplication.instance() or QApplication([])
    if args.screenshots:
        take_screenshots(app, Path(args.screenshots))
        return 0
    if args.muscle_screenshots:
        take_muscle_screenshots(app, Path(args.muscle_screenshots))
        return 0
    if args.keymap_screenshot:
        take_keymap_screenshot(app, Path(args.keymap_screenshot))
        return 0
    if args.rig_screenshots:
        take_rig_screenshots(app, Path(args.rig_screenshots))
        return 0
    if args.curve_screenshots:
        take_curve_screenshots(app, Path(args.curve_screenshots))
        return 0
    if args.view3d_screenshots:
        take_view3d_screenshots(app, Path(args.view3d_screenshots))
        return 0
    if args.synthetic:
        return synthetic_main(app)
    if args.playback:
        return playback_main(app, args.clip or DEFAULT_CLIPS, args.repeat)
    return real_main(app, args.clip or DEFAULT_CLIPS, input_only=args.input)


if __name__ == "__main__":
    sys.exit(main())
