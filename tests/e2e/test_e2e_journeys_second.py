"""Issue 27's three journeys, walked again in chromium at a 1280×720 projector size.

Lecturer: the Learn page's ε table fits the screen (its last column is not cut). Manager (what
budget is needed): a shared Budget link opens with its curves drawn on a row-level ε axis (the
hover says ε), and a shared Compare link opens with the methods ranked and one panel per method.
Analyst: a 5,000-row customers CSV (3 segments) is uploaded, bounded and used, and the Data page
answers "will private clustering be useful here?" in one sentence, never outside sound territory.
Screenshots: docs/journey_lecturer.png, docs/journey_lecturer_present.png, docs/journey_manager.png,
docs/journey_manager_compare.png,
docs/journey_analyst_verdict.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import (
    RERUN_TIMEOUT_MS,
    ROOT,
    assert_no_exception,
    choose_radio,
    click_button,
    new_app_page,
    open_app,
    plotly_charts,
    runs,
    upload_file,
    wait_for_app_idle,
    widget,
)
from test_e2e_journeys import BOUNDS, _fill_all  # the analyst's bounds and how to type them

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # this worker's server (tests/e2e/conftest.py): releases nothing, needs no cold server
PRECOMPUTED = True  # the server reads the presets' precomputed sweeps (tests/e2e/conftest.py)

W, H = 1280, 720


@pytest.fixture(scope="module")
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    page = new_app_page(browser, width=W, height=H)
    yield page
    page.context.close()


def _shot(page: Page, name: str) -> None:
    page.mouse.move(0, H - 1)  # no tooltip over the shot
    page.wait_for_timeout(300)
    page.screenshot(path=str(ROOT / "docs" / f"{name}.png"))


def _drawn(drawn) -> None:
    """A shared link of a preset opens drawn: the server reads the precomputed sweeps (conftest
    pins a copy for the running code, ``PRECOMPUTED = True``), so no Run is pressed."""
    expect(drawn).to_be_visible(timeout=RERUN_TIMEOUT_MS)


def test_lecturer_sees_the_whole_eps_table_at_1280(page: Page, app_url: str) -> None:
    open_app(page, app_url + "/learn")
    assert_no_exception(page)
    table = widget(page, "learn_eps_table")
    table.scroll_into_view_if_needed()
    expect(table).to_be_visible()
    box = table.locator("[data-testid='stDataFrame']").bounding_box()
    assert box is not None and box["x"] + box["width"] <= W, box
    grid = table.locator("[data-testid='stDataFrame']")
    # every header is drawn inside the frame (the glide grid draws on a canvas: check the
    # frame's scroll width does not exceed its width, i.e. no horizontal scrolling is needed)
    overflow = grid.evaluate("el => { const s = el.querySelector('.dvn-scroller');"
                             " return s ? s.scrollWidth - s.clientWidth : 0; }")
    assert overflow <= 1, overflow
    _shot(page, "journey_lecturer")
    # Presenter mode: two budgets side by side, large type, no sidebar.
    open_app(page, app_url + "/present?alg=dp_lloyd&pa=0.3&pb=3.0")
    assert_no_exception(page)
    expect(page.locator("[data-testid='stSidebar']")).to_be_hidden()
    expect(plotly_charts(page)).to_have_count(2, timeout=120_000)
    # each side's heading: its ε (and the loss, issue 43's one-sentence panels)
    expect(page.get_by_role("heading", name=re.compile(r"^ε = 0\.3(?![\d.])"))).to_be_visible()
    _shot(page, "journey_lecturer_present")


def test_manager_opens_budget_and_compare_links_and_reads_eps(page: Page, app_url: str) -> None:
    open_app(page, app_url + "/budget")
    assert_no_exception(page)
    chart = widget(page, "budget_accuracy")
    _drawn(chart.locator(".js-plotly-plot"))  # precomputed: drawn without pressing Run
    templates = chart.locator(".js-plotly-plot").evaluate(
        "gd => gd.data.map(t => t.hovertemplate || '').join(' ')")
    assert "ε = " in templates and "ρ = " not in templates
    xtitle = chart.locator(".js-plotly-plot").evaluate("gd => gd.layout.xaxis.title.text")
    assert "ε" in xtitle and "ρ" not in xtitle
    expect(widget(page, "budget_points")).to_contain_text("ε values")
    chart.scroll_into_view_if_needed()
    _shot(page, "journey_manager")
    open_app(page, app_url + "/compare")
    assert_no_exception(page)
    ranking = widget(page, "compare_ranking")
    _drawn(ranking)
    expect(ranking).to_contain_text("Ranked by reach over the whole ε range")
    expect(plotly_charts(widget(page, "compare_loss"))).to_have_count(1)
    ranking.scroll_into_view_if_needed()
    _shot(page, "journey_manager_compare")


def _customers(path: Path, n: int = 5000, seed: int = 11) -> Path:
    """customer_id, age, income, visits a month: 3 segments."""
    rng = np.random.default_rng(seed)
    means = np.array([[28, 35_000, 2], [45, 80_000, 6], [63, 50_000, 12]], float)
    sd = np.array([4, 8_000, 1.5])
    X = means[rng.integers(0, 3, n)] + rng.normal(size=(n, 3)) * sd
    lines = ["customer_id,age,income,visits"] + [
        f"{200_001 + i},{a:.0f},{inc:.0f},{v:.1f}" for i, (a, inc, v) in enumerate(X)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_analyst_gets_one_sentence_about_private_clustering(page: Page, app_url: str,
                                                           tmp_path: Path) -> None:
    csv = _customers(tmp_path / "customers.csv")
    open_app(page, f"{app_url}/data?src=generate&n=2000&k=8&seed=0&eps=1")
    choose_radio(page, "source_radio", "Upload a CSV")
    upload_file(page, "csv_upload", csv)
    assert_no_exception(page)
    expect(widget(page, "data_verdict_hidden")).to_be_visible()  # not the old data's verdict
    choose_radio(page, "csv_scale", "Scale each column by bounds I declare (public)")
    _fill_all(page, "csv_lo_", [lo for lo, _ in BOUNDS])
    _fill_all(page, "csv_hi_", [hi for _, hi in BOUNDS])
    click_button(page, "csv_use")
    assert_no_exception(page)
    box = widget(page, "clustering_verdict")
    # The click's rerun computes the verdict (a sweep): wait for its sentence, then for the idle
    # app; rerun_after's 60 s bound is for a UI rerun and failed at load 30 while it computed.
    before = runs(page)
    widget(page, "clustering_verdict_run").locator("button").first.click()
    sentence = box.locator("[data-testid='stAlertContainer']").first
    expect(sentence).to_contain_text("at your target ε = 1", timeout=300_000)
    wait_for_app_idle(page, after=before)
    assert_no_exception(page)
    text = sentence.inner_text()
    m = re.search(r"from row-level ε = ([0-9.]+) \(δ = ([0-9.e-]+)\)", text)
    if m:  # a suggestion: sound territory only
        assert float(m.group(1)) <= 10 and float(m.group(2)) < 1 / 5000, text
    else:
        assert "No budget in sound territory" in text, text
    (ROOT / "docs" / "journey_analyst_verdict.txt").write_text(text.strip() + "\n")
    box.scroll_into_view_if_needed()
    _shot(page, "journey_analyst_verdict")
