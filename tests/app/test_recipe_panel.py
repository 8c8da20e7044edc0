"""RecipePanel: live preview in a worker thread, parameter widgets, apply/undo, save/load; and the
worker runner it uses (newer requests cancel older ones, stale results are dropped)."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QMessageBox

from curveeditor.app.common.workers import CancelToken, LatestRunner, run_in_thread
from curveeditor.app.model.document import ClipDocument
from curveeditor.app.recipe.panel import RecipePanel
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve
from curveeditor.engine.diff import diff_tracks
from curveeditor.engine.recipe import Recipe, run_recipe


def _wrapping_clip():
    # Y turns steadily through 180: the keys wrap 170 -> 179 -> -179 -> -170 (a 358 deg jump).
    t = np.arange(8) / 30.0
    y = np.array([150, 160, 170, 179, -179, -170, -160, -150], dtype=float)
    head = RotationTrack("Root/Head", "euler", Curve.make(t, np.c_[np.zeros(8), y, np.zeros(8)]))
    still = RotationTrack("Root/Still", "euler", Curve.make(t, np.tile([5.0, 0.0, 0.0], (8, 1))))
    return Clip("wrap", 30.0, [head, still])


@pytest.fixture
def setup(qtbot):
    doc = ClipDocument()
    doc.load(_wrapping_clip(), None)
    panel = RecipePanel(doc)
    qtbot.addWidget(panel)
    yield doc, panel
    panel.shutdown()


def _wait_preview(qtbot, panel, doc, previous=None):
    qtbot.waitUntil(lambda: doc.preview is not None and doc.preview is not previous, timeout=5000)
    return doc.preview


def test_unwrap_preview_removes_wrap_jump(setup, qtbot):
    doc, panel = setup
    panel.add_step("unwrap")
    preview = _wait_preview(qtbot, panel, doc)
    before = doc.clip.track("Root/Head").curve.value[:, 1]
    after = preview.track("Root/Head").curve.value[:, 1]
    assert np.abs(np.diff(before)).max() > 300
    assert np.abs(np.diff(after)).max() < 20  # the 358 deg jump is gone
    # ... the pose at every key is unchanged (between the wrapping keys the original plays a
    # 358 deg spin, so the played error there is large: that is the fix) ...
    d = diff_tracks(doc.clip.track("Root/Head"), preview.track("Root/Head"))
    at_keys = np.isin(d.times, doc.clip.track("Root/Head").times)
    assert at_keys.sum() == 8 and d.errors[at_keys].max() < 1e-6
    assert d.max_error > 90
    # ... and it is exactly what the engine computes.
    expected = run_recipe(doc.clip, Recipe.of({"op": "unwrap"}), ["Root/Head"]).clip
    np.testing.assert_allclose(after, expected.track("Root/Head").curve.value[:, 1])
    assert doc.clip is doc.original  # preview only
    assert "ms" in panel.status_text()
    assert panel.apply_button.isEnabled()


def test_parameter_widget_change_reruns(setup, qtbot):
    doc, panel = setup
    panel.add_step("unwrap")
    first = _wait_preview(qtbot, panel, doc)
    spin = panel._param_widgets["spin_speed"][1]
    assert isinstance(spin, QDoubleSpinBox) and spin.suffix().strip() == "\u00b0/s"
    # A huge spin speed treats the 358 deg step as deliberate motion: kept as authored.
    spin.setValue(spin.maximum())
    second = _wait_preview(qtbot, panel, doc, previous=first)
    np.testing.assert_array_equal(
        second.track("Root/Head").curve.value, doc.clip.track("Root/Head").curve.value
    )
    assert panel.steps[0].params["spin_speed"] == spin.maximum()


def test_widgets_follow_param_specs(setup):
    _doc, panel = setup
    panel.add_step("smooth")
    w = panel._param_widgets
    assert isinstance(w["method"][1], QComboBox)
    assert w["sigma"][1].suffix().strip() == "s"
    assert not w["cutoff"][1].isVisibleTo(panel)  # butterworth-only parameter hidden
    w["method"][1].setCurrentIndex(w["method"][1].findData("butterworth"))
    assert w["cutoff"][1].isVisibleTo(panel) and not w["sigma"][1].isVisibleTo(panel)
    assert panel.recipe().to_dict()["steps"] == [
        {"op": "smooth", "method": "butterworth", "cutoff": 6.0, "order": 2}
    ]
    panel.add_step("resample")
    hz = panel._param_widgets["hz"][1]
    assert hz.value() == hz.minimum() and hz.specialValueText().startswith("auto")
    assert panel.recipe().to_dict()["steps"][1] == {
        "op": "resample",
        "hz": None,
        "method": "slerp",
        "spin_speed": 1800.0,
        "pose_error": 0.0,
    }
    # The pose-error trade of the resample (issue 20) is a widget from the registry like the others.
    pose = panel._param_widgets["pose_error"][1]
    assert pose.value() == 0.0 and pose.maximum() == 1.0 and pose.suffix().strip() == "\u00b0"


def test_apply_is_one_undo_step(setup, qtbot):
    doc, panel = setup
    panel.add_step("unwrap")
    preview = _wait_preview(qtbot, panel, doc)
    original = doc.clip
    assert panel.apply()
    assert doc.clip is preview
    assert doc.preview is None
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Apply recipe"
    doc.undo_stack.undo()
    assert doc.clip is original
    qtbot.wait(150)
    assert doc.preview is None  # no automatic re-preview after Apply until the next change


def test_discard_and_scope(setup, qtbot):
    doc, panel = setup
    panel.add_step("unwrap")
    _wait_preview(qtbot, panel, doc)
    assert list(panel.result.changes) == ["Root/Head"]  # selected track only
    panel.discard()
    assert doc.preview is None and doc.clip is doc.original
    panel.scope.setCurrentIndex(panel.scope.findData("all"))
    qtbot.waitUntil(lambda: panel.result is not None and len(panel.result.changes) == 2, timeout=5000)


def test_reorder_enable_remove(setup, qtbot):
    _doc, panel = setup
    panel.add_step("unwrap")
    panel.add_step("reduce")
    panel.list.setCurrentRow(1)
    panel.move_current(-1)
    assert [s.op for s in panel.steps] == ["reduce", "unwrap"]
    assert panel.list.item(0).text().startswith("1. Reduce")
    panel.set_enabled(0, False)
    assert [s["op"] for s in panel.recipe().to_dict()["steps"]] == ["unwrap"]
    panel.list.setCurrentRow(0)
    panel.remove_current()
    assert [s.op for s in panel.steps] == ["unwrap"]


def test_bad_parameter_shows_error_inline(setup, qtbot):
    doc, panel = setup
    panel.add_step("limit")
    panel.set_param(0, "yaw", [10.0, -10.0])  # min > max: the engine rejects it
    qtbot.waitUntil(lambda: "greater than" in panel.status_text(), timeout=3000)
    assert doc.preview is None


def test_save_load_round_trip(setup, tmp_path, qtbot):
    doc, panel = setup
    panel.add_step("unwrap", {"spin_speed": 900.0})
    panel.add_step("smooth", {"method": "butterworth", "cutoff": 4.0, "order": 3})
    panel.add_step("limit", {"yaw": [-45.0, 30.0]})
    path = tmp_path / "r.json"
    panel.save_recipe(str(path))
    saved = json.loads(path.read_text())
    assert saved == panel.recipe().to_dict()
    assert Recipe.load(path).to_dict() == saved  # what the CLI reads
    other = RecipePanel(doc)
    qtbot.addWidget(other)
    other.load_recipe(str(path))
    assert other.recipe().to_dict() == saved
    other.shutdown()


def test_bad_recipe_file_shows_message(setup, tmp_path, monkeypatch):
    _doc, panel = setup
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "steps": [{"op": "smooth", "sigmaa": 1}]}')
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    assert not panel.load_recipe_interactive(str(bad))
    assert shown and "sigmaa" in shown[0] and "did you mean 'sigma'" in shown[0]
    bad.write_text("{not json")
    assert not panel.load_recipe_interactive(str(bad))
    assert "not valid JSON" in shown[-1]


# ------------------------------------------------------------------ workers


def test_latest_runner_cancels_older_and_drops_stale(qtbot):
    runner = LatestRunner()
    seen_tokens: list[CancelToken] = []
    release = threading.Event()

    def slow(token, _progress):
        seen_tokens.append(token)
        release.wait(2.0)
        return "slow"  # returned although cancelled: must be dropped

    results = []
    runner.finished.connect(lambda gen, res, _s: results.append((gen, res)))
    g1 = runner.submit(slow)
    qtbot.waitUntil(lambda: len(seen_tokens) == 1, timeout=2000)
    g2 = runner.submit(lambda _t, _p: "fast")
    assert seen_tokens[0].cancelled  # the newer request cancelled the older
    qtbot.waitUntil(lambda: results == [(g2, "fast")], timeout=2000)
    release.set()
    assert runner.wait(3000)
    qtbot.wait(50)
    assert results == [(g2, "fast")] and g1 < g2
    assert not runner.busy


def test_latest_runner_reports_errors(qtbot):
    runner = LatestRunner()
    with qtbot.waitSignal(runner.failed, timeout=2000) as sig:
        runner.submit(lambda _t, _p: 1 / 0)
    assert "division by zero" in sig.args[1]


def test_run_in_thread_progress_done_error_cancel(qtbot):
    progress, done, errors, cancelled = [], [], [], []

    def work(token, report):
        for i in range(3):
            report((i + 1) / 3, f"step {i}")
            time.sleep(0.01)
        return 42

    job = run_in_thread(work, done.append, errors.append, on_progress=lambda f, t: progress.append(f))
    qtbot.waitUntil(lambda: job.is_finished, timeout=3000)
    assert done == [42] and errors == [] and progress[-1] == pytest.approx(1.0)

    job = run_in_thread(lambda t, p: int("x"), done.append, errors.append)
    qtbot.waitUntil(lambda: job.is_finished, timeout=3000)
    assert isinstance(errors[0], ValueError) and "Traceback" in job.traceback

    token = CancelToken()
    gate = threading.Event()

    def cancellable(tok, _p):
        gate.wait(2.0)
        tok.raise_if_cancelled()
        return "no"

    job = run_in_thread(
        cancellable, done.append, cancel_token=token, on_cancelled=lambda: cancelled.append(1)
    )
    token.cancel()
    gate.set()
    qtbot.waitUntil(lambda: job.is_finished, timeout=3000)
    assert cancelled == [1] and done == [42]


def test_every_op_builds_widgets_and_a_valid_recipe(setup):
    from curveeditor.engine.recipe import OPS

    _doc, panel = setup
    for op in OPS:
        panel.add_step(op)
        for p in OPS[op].params:  # one widget per parameter, built from the ParamSpec
            assert p.name in panel._param_widgets
    steps = panel.recipe().to_dict()["steps"]
    assert [s["op"] for s in steps] == list(OPS)
    assert Recipe.from_dict(panel.recipe().to_dict()).to_dict() == panel.recipe().to_dict()


def test_drag_reorder_follows_the_list_model(setup, qtbot):
    from PySide6.QtCore import QModelIndex

    _doc, panel = setup
    for op in ("unwrap", "reduce", "resample"):
        panel.add_step(op)
    # What a drag-and-drop does to the list: move row 0 after row 2.
    assert panel.list.model().moveRow(QModelIndex(), 0, QModelIndex(), 3)
    assert [s.op for s in panel.steps] == ["reduce", "resample", "unwrap"]
    qtbot.waitUntil(lambda: panel.list.item(0).text().startswith("1. Reduce"), timeout=2000)


def test_stale_preview_is_not_applied_over_a_newer_edit(setup, qtbot):
    doc, panel = setup
    panel.add_step("unwrap")
    first = _wait_preview(qtbot, panel, doc)
    still = doc.clip.track("Root/Still")
    edited = doc.clip.with_track(still.with_curve(still.curve.with_keys(value=still.curve.value + 1.0)))
    doc.apply_clip(edited, "hand edit")
    assert not panel.apply_button.isEnabled()
    if doc.preview is first:  # the re-run has not landed yet: Apply must refuse
        assert not panel.apply() and doc.clip is edited
    second = _wait_preview(qtbot, panel, doc, previous=first)
    assert second.track("Root/Still") is edited.track("Root/Still")  # built on the edited clip
    assert panel.apply() and doc.clip is second


def _big_clip(n_tracks=40, n_keys=3000):
    t = np.arange(n_keys) / 60.0
    rng = np.random.default_rng(3)
    tracks = [
        RotationTrack(
            f"Bone{i}",
            "euler",
            Curve.make(t, np.c_[30 * np.sin(t + i), 40 * np.cos(0.7 * t), rng.normal(0, 0.5, n_keys)]),
        )
        for i in range(n_tracks)
    ]
    return Clip("big", 60.0, tracks)


def test_long_run_shows_progress_and_can_be_cancelled(qtbot):
    doc = ClipDocument()
    doc.load(_big_clip(), None)
    panel = RecipePanel(doc)
    qtbot.addWidget(panel)
    panel.show()
    try:
        panel.scope.setCurrentIndex(panel.scope.findData("all"))
        panel.add_step("reduce", {"max_error": 0.05})
        qtbot.waitUntil(lambda: panel.progress_row.isVisible(), timeout=5000)
        # with a cancel callback run_recipe reduces groups of about 16,000 keys (5 tracks here) and
        # ticks after each: progress and Cancel within a few seconds, not after the whole reduce
        qtbot.waitUntil(lambda: panel.progress_bar.value() > 0, timeout=20000)
        assert "of 40 tracks" in panel.progress_bar.format()
        panel.cancel_button.click()
        qtbot.waitUntil(lambda: not panel.runner.busy, timeout=10000)
        assert not panel.progress_row.isVisible()
        assert doc.preview is None and "cancelled" in panel.status_label.text()
    finally:
        panel.shutdown()


def test_limit_turnback_checkbox_and_lerp_speed_come_from_the_registry(setup, qtbot):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QCheckBox

    doc, panel = setup
    panel.show()
    qtbot.waitExposed(panel)
    panel.add_step("limit")
    box = panel._param_widgets["turnback"][1]
    speed = panel._param_widgets["lerp_speed"][1]
    smooth = panel._param_widgets["smooth"][1]
    assert isinstance(box, QCheckBox) and not box.isChecked()
    assert speed.isHidden() and not smooth.isHidden()  # lerp_speed only applies with turnback
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))  # the indicator
    assert box.isChecked() and not speed.isHidden() and smooth.isHidden()
    assert isinstance(speed, QDoubleSpinBox) and speed.value() == 5.0
    step = panel.recipe().to_dict()["steps"][0]
    assert step["turnback"] is True and step["lerp_speed"] == 5.0 and "smooth" not in step
    assert "turnback on" in panel.list.item(0).text()
    # The preview runs the turn-back at the clip's frame rate.
    qtbot.waitUntil(lambda: doc.preview is not None, timeout=5000)
    want = run_recipe(doc.clip, Recipe.from_dict(panel.recipe().to_dict()), paths=doc.selected_paths or None)
    head = doc.preview.track("Root/Head")
    np.testing.assert_allclose(head.curve.value, want.clip.track("Root/Head").curve.value)


# Each op's CLI flags (``curveeditor-cli clean``), with values off every default so that a widget left
# alone is caught. Together they cover every parameter of every op in the registry (asserted below).
CLI_FORMS = [
    ["--unwrap", "--spin-speed", "900"],
    ["--unflip"],
    ["--resample", "24", "--method", "squad", "--spin-speed", "1200", "--pose-error", "0.25"],
    ["--reduce", "0.25", "--tip-error", "3", "--per-channel"],
    ["--smooth", "gaussian:0.125"],
    ["--smooth", "butterworth:4.5:3"],
    ["--despike", "540"],
    ["--despike"],
    ["--max-speed", "360"],
    ["--limit", "yaw=-40:55,pitch=-30:20,smooth=0.25"],
    ["--limit", "yaw=-50:50,pitch=-10:35,turnback=on,lerp_speed=8"],
    ["--to-order", "xyz"],
    ["--to-kind", "euler"],
]


def _type_into(widget, spec, value):
    """Set one parameter widget to ``value`` through its own setters, as a user's edit does."""
    from PySide6.QtWidgets import QCheckBox, QSpinBox

    if isinstance(widget, QCheckBox):
        widget.setChecked(bool(value))
    elif isinstance(widget, QComboBox):
        i = widget.findData(value)
        assert i >= 0, f"{spec.name}: no entry for {value!r}"
        widget.setCurrentIndex(i)
    elif isinstance(widget, QSpinBox):
        widget.setValue(int(value))
    elif isinstance(widget, QDoubleSpinBox):
        widget.setValue(widget.minimum() if value is None else float(value))
    else:  # a range: min / max spin boxes
        widget.hi.setValue(float(value[1]))
        widget.lo.setValue(float(value[0]))


def test_every_registry_op_and_parameter_is_in_the_panel_and_builds_the_cli_recipe(setup):
    """The Add step list holds every op of ``OPS``; every parameter has a widget; a recipe built with
    those widgets equals the recipe the CLI's flags build (so no option exists on one face only)."""
    from curveeditor.cli import SHORTHAND_ORDER
    from curveeditor.engine.recipe import OPS
    from tests.test_cli import _recipe_for

    _doc, panel = setup
    assert list(panel.add_actions) == list(OPS)
    covered: set[tuple[str, str]] = set()
    cli_ops: set[str] = set()
    for argv in CLI_FORMS:
        want = _recipe_for(argv)
        assert len(want.steps) == 1, argv
        step = want.steps[0]
        cli_ops.add(step.op)
        spec = OPS[step.op]
        panel.set_recipe(Recipe())
        panel.add_actions[step.op].trigger()  # the Add step menu entry
        widgets = panel._param_widgets
        assert set(widgets) == {p.name for p in spec.params}, step.op
        # unconditional parameters first: they decide which conditional ones apply (method, turnback)
        for p in sorted(spec.params, key=lambda p: p.when is not None):
            if p.name in step.params:
                label, w = widgets[p.name]
                assert w.isVisibleTo(panel) and label.isVisibleTo(panel), (step.op, p.name)
                _type_into(w, p, step.params[p.name])
                if step.params[p.name] != p.default:
                    covered.add((step.op, p.name))
            else:
                assert not widgets[p.name][1].isVisibleTo(panel), (step.op, p.name)  # does not apply
        assert panel.recipe().to_dict() == want.to_dict(), argv
    assert cli_ops == set(OPS)
    every = {(op, p.name) for op in OPS for p in OPS[op].params}
    assert every - covered == set(), "parameters no CLI form above sets off their default"
    assert set(SHORTHAND_ORDER) | {"to_kind"} == set(OPS)
    # the CLI spells the choices itself (no engine import for --help): the registry's, exactly
    from curveeditor import cli

    assert cli._ORDERS == OPS["to_order"].param("order").choices
    assert cli._RESAMPLE_METHODS == OPS["resample"].param("method").choices


def test_reduce_tip_error_widget_comes_from_the_registry(qtbot, tmp_path):
    """The reduce step's joint-position bound (issue 23): an mm spin box that is "off" (None) by
    default; set, the preview holds every joint within it (a BVH rig)."""
    from curveeditor.engine.skeleton import skeleton_from_clip
    from curveeditor.engine.tip_error import length_unit_mm, position_errors
    from tests.engine.test_tip_error import _chain_clip

    clip = _chain_clip(tmp_path)
    doc = ClipDocument()
    doc.load(clip, None)
    panel = RecipePanel(doc)
    qtbot.addWidget(panel)
    try:
        panel.add_step("reduce")
        first = _wait_preview(qtbot, panel, doc)
        tip = panel._param_widgets["tip_error"][1]
        assert isinstance(tip, QDoubleSpinBox) and tip.suffix().strip() == "mm"
        assert tip.value() == tip.minimum() and tip.specialValueText() == "off"
        assert panel.recipe().to_dict()["steps"][0]["tip_error"] is None
        tip.setValue(1.0)
        second = _wait_preview(qtbot, panel, doc, previous=first)
        assert panel.recipe().to_dict()["steps"][0]["tip_error"] == 1.0
        sk, _ = skeleton_from_clip(clip)
        t = np.linspace(0, clip.end, 1201)
        assert position_errors(sk, clip, second, t)[0] * length_unit_mm(clip, sk) <= 1.0
        assert position_errors(sk, clip, first, t)[0] * length_unit_mm(clip, sk) > 1.0
    finally:
        panel.shutdown()
