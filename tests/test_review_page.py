"""The batch review page (issue 25): written by ``batch --html`` and ``clean --html``, opened in a
real browser (headless Chromium through Playwright) from disk: every row, plot and link is there,
the table sorts, and the page logs no console errors. Skipped cleanly without a browser."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from curveeditor.cli import main
from curveeditor.review.page import COLOURS
from tests.conftest import corpus_files

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RECIPE = {"version": 1, "steps": [{"op": "unwrap"}, {"op": "reduce", "max_error": 0.5}]}


def _inputs(tmp: Path) -> list[str]:
    demo = REPO / "curveeditor" / "resources" / "samples" / "demo.anim"
    bad = tmp / "broken.anim"
    bad.write_text("%YAML 1.1\nthis is not a clip\n")
    files = [str(demo), str(bad)]
    for pattern in ("*cmu_12_01_walk.bvh", "*Gangnam*.bvh"):
        files += [str(p) for p in corpus_files("bvh", pattern)]
    files += [str(p) for p in corpus_files("anim", "*mixamo*")]
    return files


@pytest.fixture(scope="module")
def batch_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review")
    recipe = tmp / "r.json"
    recipe.write_text(json.dumps(RECIPE))
    files = _inputs(tmp)
    rc = main(
        [
            "batch",
            *files,
            "-o",
            str(tmp / "out"),
            "--recipe",
            str(recipe),
            "--html",
            str(tmp / "rev"),
            "--progress",
            "none",
        ]
    )
    assert rc == 2  # the broken file fails, the others are written
    return tmp, files


def _browser():
    if CHROMIUM is None:
        pytest.skip("no chromium installed")
    sync = pytest.importorskip("playwright.sync_api")
    return sync.sync_playwright()


def test_the_page_shows_every_input_plot_and_link(batch_page):
    tmp, files = batch_page
    page_path = tmp / "rev" / "index.html"
    html = page_path.read_text()
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        problems = []
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.goto(page_path.as_uri())
        rows = page.locator("#files tbody tr")
        assert rows.count() == len(files)
        texts = [rows.nth(i).inner_text() for i in range(rows.count())]
        for f in files:
            assert any(os.path.basename(f) in t for t in texts), f
        failed = [t for t in texts if "broken.anim" in t]
        assert len(failed) == 1 and "FAILED" in failed[0]
        # sorted by the worst error when it opens, and a click on the header reverses it
        errs = [
            float(rows.nth(i).locator("td").nth(5).get_attribute("data-sort")) for i in range(rows.count())
        ]
        assert errs == sorted(errs, reverse=True)
        page.locator("#files th").nth(5).click()
        errs2 = [
            float(rows.nth(i).locator("td").nth(5).get_attribute("data-sort")) for i in range(rows.count())
        ]
        assert errs2 == sorted(errs2)
        # every ok clip has its plots (up to its three worst tracks), three channels each
        ok = len(files) - 1
        sections = page.locator("section")
        assert sections.count() == len(files)
        plots = page.locator("svg.plot")
        assert plots.count() >= ok and plots.count() <= 3 * ok
        for i in range(plots.count()):
            assert plots.nth(i).locator("polyline.after").count() == 3
            assert plots.nth(i).locator("polyline.before").count() == 3
        # the demo's unwrap removed its wraps and flips on purpose: marked on its plots
        assert page.locator("svg.plot line.removed").count() > 0
        # every output link points at the written file
        links = page.locator("#files tbody a[href$='.anim']")
        assert links.count() == ok
        for i in range(links.count()):
            target = (page_path.parent / links.nth(i).get_attribute("href")).resolve()
            assert target.is_file(), target
        browser.close()
    assert problems == []


def test_clean_writes_a_page_for_one_file(tmp_path):
    demo = REPO / "curveeditor" / "resources" / "samples" / "demo.anim"
    assert (
        main(["clean", str(demo), "-o", str(tmp_path / "d.anim"), "--unwrap", "--html", str(tmp_path / "r")])
        == 0
    )
    html = (tmp_path / "r" / "index.html").read_text()
    assert html.count("<section") == 1 and html.count('class="plot"') == 3 and "d.anim" in html


def test_page_colours_are_the_editors(qapp):
    from curveeditor.app.common.theme import LIGHT

    assert (COLOURS["x"], COLOURS["y"], COLOURS["z"]) == LIGHT.channels[:3]
    assert COLOURS["original"] == LIGHT.original
    for kind in ("wrap", "flip", "hemisphere"):
        assert COLOURS[kind] == LIGHT.problems[kind]
