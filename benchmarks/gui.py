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
    doc.select_keys({path: {i}})
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
    from curveeditor.app import recipe_panel

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


def take_screenshots(app, out_dir: Path) -> None:
    """The README screenshots of the real window on the bundled sample: ``editor.png`` (light),
    ``editor-dark.png`` and ``editor-preview.png`` (light, an Unwrap recipe previewed). The screen
    is grabbed with ImageMagick's ``import -window root``: the 3D view is a native OpenGL window,
    which ``QWidget.grab`` does not see. Run under ``xvfb-run -s '-screen 0 1600x1000x24'``."""
    from PySide6.QtTest import QTest

    from curveeditor.app.main_window import MainWindow

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
        subprocess.run(["import", "-window", "root", str(out_dir / name)], check=True)
        print(f"wrote {out_dir / name}")
        doc.undo_stack.setClean()
        w.close()
        _wait(app, 100)

    shot("editor.png", "light", False)
    shot("editor-dark.png", "dark", False)
    shot("editor-preview.png", "light", True)


def main() -> int:
    QStandardPaths.setTestModeEnabled(True)
    QSettings.setPath(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, "/tmp/curveeditor-bench-settings"
    )
    app = QApplication.instance() or QApplication([])
    if len(sys.argv) > 2 and sys.argv[1] == "--screenshots":
        take_screenshots(app, Path(sys.argv[2]))
        return 0
    pg.setConfigOptions(mouseRateLimit=-1)
    from PySide6.QtTest import QTest

    import curveeditor.app.main_window as mw
    from curveeditor.app.main_window import MainWindow

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


if __name__ == "__main__":
    sys.exit(main())
