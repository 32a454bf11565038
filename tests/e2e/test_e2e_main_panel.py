"""Issue 16 at a projector's 1280×720: the ρ slider and the ONE main panel it changes (data,
private centers, the noise cloud at a fixed scale, faint earlier draws) are on one screen.

Screenshot: docs/explore_720p.png (the viewport after two ρ moves).
"""

from __future__ import annotations

import re
import shutil

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from st_e2e import (
    ROOT,
    assert_no_exception,
    move_slider,
    new_app_page,
    open_app,
    plotly_charts,
    plotly_traces,
    slider_text,
    widget,
)

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

WIDTH, HEIGHT = 1280, 720
# The default lesson at ρ = 1: FriendlyCore answers (docs/app.md, "The teaching default").
EXPLORE = "/?src=generate&gen=fig6_blobs&n=150000&k=8&t=1500&eps=10&seed=0"  # the lesson, above its mark


@pytest.fixture
def page720(browser: Browser, app_url: str):
    page = new_app_page(browser, width=WIDTH, height=HEIGHT)
    yield page
    page.context.close()


def _drawn(page: Page) -> Locator:
    """The main panel's graph, once the figure last handed to it is on screen."""
    root = widget(page, "main_panel_chart").locator(".dpviz-live-chart")
    expect(root).to_have_attribute("data-revision", re.compile("."))
    page.wait_for_function("(el) => el.dataset.revision === el.dataset.pending",
                           arg=root.element_handle())
    return root


def _within_viewport(loc: Locator) -> dict:
    box = loc.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, box
    return box


def _legend(page: Page) -> dict[str, dict]:
    traces = plotly_traces(plotly_charts(widget(page, "main_panel_chart")))
    return {str(t["name"]).replace("<br>", " "): t for t in traces if t.get("showlegend") is not False}


def test_budget_sliders_and_main_panel_on_one_screen_at_1280x720(page720: Page, app_url: str) -> None:
    page = page720
    open_app(page, app_url + EXPLORE)
    assert_no_exception(page)
    expect(widget(page, "run_status")).to_contain_text("FriendlyCore completed every step")
    _drawn(page)
    slider = _within_viewport(widget(page, "eps_slider"))
    plot = _within_viewport(widget(page, "main_panel_chart").locator(".nsewdrag").first)
    assert plot["x"] > slider["x"] + slider["width"] - 1, "the panel sits beside the slider"
    assert plot["height"] >= 200 and plot["width"] >= 200, plot
    legend = _legend(page)
    assert "data (input, never released)" in legend
    assert "private centers (this run) — private" in legend
    cloud = next(n for n in legend if n.startswith("noise cloud ×"))
    centers = legend["private centers (this run) — private"]
    assert len(centers["x"]) == 8

    # δ moves re-plan from the row-level target (ε = 10, δ): issue 33's one budget. The default
    # lesson's core forms above its mark (ε = 5), so FriendlyCore answers at every δ here.
    move_slider(page, "delta_select", 1)  # 10⁻⁶ → 10⁻⁵
    move_slider(page, "delta_select", -2)  # → 10⁻⁷
    assert slider_text(page, "delta_select") == "10⁻⁷"
    expect(widget(page, "run_status")).to_contain_text("FriendlyCore completed every step")
    _drawn(page)
    legend = _legend(page)
    assert cloud in legend, "the cloud's magnification must stay fixed across budget moves"
    earlier = legend["earlier draws (runs you saw before)"]
    assert len(earlier["x"]) == 2 * 8  # the runs at δ = 10⁻⁶ and 10⁻⁵, faint
    assert set(zip(centers["x"], centers["y"], strict=True)) <= set(
        zip(earlier["x"], earlier["y"], strict=True))
    _within_viewport(widget(page, "eps_slider"))
    _within_viewport(widget(page, "main_panel_chart").locator(".nsewdrag").first)
    assert_no_exception(page)
    page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollTo(0, 0)")
    path = ROOT / "tests" / "e2e" / "screenshots" / "explore_720p.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    shutil.copyfile(path, ROOT / "docs" / "explore_720p.png")


def test_first_screen_opens_at_a_sound_budget_with_slider_chart_and_sentence_at_1280x720(
        page720: Page, app_url: str) -> None:
    """Issue 27, defect 3: a link with no parameters (the class's first screen) opens at a sound
    budget (row-level ε = 3, δ = 1.6e-7 below 1/n, no "weak guarantee" warning), and the
    slider, the main chart and the per-row privacy sentence are all in the 1280×720 viewport
    without scrolling."""
    page = page720
    open_app(page, app_url + "/")
    assert_no_exception(page)
    _drawn(page)
    assert slider_text(page, "eps_slider") == "3"
    readout = widget(page, "eps_readout")
    expect(readout).to_contain_text("ε = 3 · δ = 1.6e-07")
    expect(readout).not_to_contain_text("weak")
    expect(readout).not_to_contain_text("vacuous")
    _within_viewport(widget(page, "eps_slider"))
    _within_viewport(widget(page, "main_panel_chart").locator(".nsewdrag").first)
    _within_viewport(readout.get_by_text("Adding or removing any one row changes the probability"))
    _within_viewport(readout.get_by_text("ε = 3 · δ = 1.6e-07"))
    scrolled = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollTop")
    assert scrolled == 0
    path = ROOT / "tests" / "e2e" / "screenshots" / "explore_first_screen.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    shutil.copyfile(path, ROOT / "docs" / "explore_first_screen.png")
