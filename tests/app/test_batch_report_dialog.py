"""File > Open batch report (issue 25): a batch's JSON report opens as a table in the editor, sorted by
the worst error, and a row opens its clip (the output, or the input of a failed file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from curveeditor.batch.runner import run_batch
from tests.app.windows import shown_window
from tests.conftest import corpus_files

REPO = Path(__file__).resolve().parents[2]
RECIPE = {"version": 1, "steps": [{"op": "unwrap"}, {"op": "reduce", "max_error": 0.5}]}


@pytest.fixture
def report(tmp_path):
    bad = tmp_path / "broken.anim"
    bad.write_text("not a clip\n")
    inputs = [str(REPO / "curveeditor" / "resources" / "samples" / "demo.anim"), str(bad)]
    inputs += [str(p) for p in corpus_files("bvh", "*cmu_12_01_walk.bvh")]
    path = tmp_path / "report.json"
    run_batch(inputs, tmp_path / "out", RECIPE, report_path=path, progress=lambda *a: None)
    return path, inputs


@pytest.fixture
def window(qapp, tmp_path):
    yield from shown_window(tmp_path)


def test_a_row_opens_its_clip(qtbot, window, report):
    path, inputs = report
    window.open_batch_report(str(path))
    dlg = window.batch_report
    qtbot.waitExposed(dlg)
    model, proxy = dlg.model, dlg.proxy
    assert model.rowCount() == len(inputs)
    # sorted by the worst error: the failed file (no figures) first, then the largest error
    first = proxy.mapToSource(proxy.index(0, 0)).row()
    assert model.rows[first]["status"] == "failed"
    errs = [proxy.index(r, 4).data(Qt.ItemDataRole.UserRole) for r in range(1, proxy.rowCount())]
    assert errs == sorted(errs, reverse=True)
    # every header shows whole (the keys and error columns were cut at the default width)
    hh = dlg.table.horizontalHeader()
    fm = hh.fontMetrics()
    for col in (1, 2, 3, 4, 5):
        text = model.headerData(col, Qt.Orientation.Horizontal)
        assert hh.sectionSize(col) >= fm.horizontalAdvance(text), text
    demo = next(i for i, e in enumerate(model.rows) if e["input"].endswith("demo.anim"))
    # the error against the steps' tolerances apart from the intended change: the demo's unwrap
    # removes a spin Unity played (~180 deg of played change), its reduce keeps 0.5 deg
    err, change = float(model.index(demo, 4).data()), float(model.index(demo, 5).data())
    assert err <= 0.5 < 170.0 < change
    demo_row = model.rows[demo]
    assert change == pytest.approx(demo_row["max_error"], abs=1e-4)
    dlg.open_row(demo)
    qtbot.waitUntil(lambda: window.doc.path == model.rows[demo]["output"], timeout=10000)
    assert window.doc.clip.name == "demo"
    dlg.close()  # (a dialog left shown would be taken for another test's box)


def test_a_bad_report_is_one_message(qtbot, window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}))
    window.open_batch_report(str(bad))
    assert shown and "not a batch report" in shown[0]
