"""Issue 36, accessibility (WCAG 2.2 AA) in chromium at a projector's 1280×720.

- axe-core (from its npm package, fetched by ``make axe``; pinned in the Makefile) runs its default
  rules on every page and finds no serious or critical violation;
- every chart has a text alternative: a one-line summary that is also its accessible name, and its
  data one click away (an expander with the table);
- a chart's toolbar is one PNG download (and Streamlit's full-screen button), not ten tab stops;
- keyboard focus is drawn as a ring that hover never draws;
- the skip link leads to the page's main control: on Explore, Tab, Enter and an arrow key move ε.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    ROOT,
    assert_no_exception,
    choose_radio,
    new_app_page,
    open_app,
    rerun_after,
    slider_text,
    upload_file,
    widget,
)

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

AXE = next(iter(sorted((ROOT / "tests" / "e2e" / "vendor").glob("axe-core-*/axe.min.js"))), None)
PAGES = ["/", "/data", "/budget", "/compare", "/learn", "/release", "/mixtures", "/generate",
         "/present"]
#: Small generated data so every page draws quickly on a loaded machine.
Q = "n=2000&t=40&k=3&gk=3&seed=1"
BLOCKING = ("serious", "critical")

_AXE_RUN_JS = """
async () => {
  const res = await axe.run(document, { resultTypes: ['violations'] });
  return res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${(n.failureSummary || '').split('\\n')[1] || ''}`) }));
}
"""

# Every chart on the page: its accessible name, the summary caption and the data expander of
# the text-alternative container around it, and how many toolbar tab stops it brings.
_CHARTS_JS = """
() => [...document.querySelectorAll("[data-testid='stPlotlyChart'], .dpviz-live-chart")].map((el) => {
  const box = el.closest("[class*='_alt'][class*='st-key-']");
  const element = el.closest("[data-testid='stElementContainer']") || el;
  const stops = [...element.querySelectorAll("a[href], button, input, [tabindex]")]
    .filter((e) => e.tabIndex >= 0).length;
  return {
    name: el.getAttribute('aria-label') || '',
    role: el.getAttribute('role') || '',
    summary: box ? (box.querySelector("[data-testid='stCaptionContainer']") || {}).textContent || '' : '',
    table: box ? [...box.querySelectorAll("[data-testid='stExpander'] summary")]
      .map((s) => s.textContent).join() : '',
    stops,
  };
})
"""


@pytest.fixture(scope="module")
def page(browser, app_url):  # a projector-sized page for this module
    if AXE is None:
        pytest.fail("axe-core is missing: run `make axe` (fetches its npm package)", pytrace=False)
    page = new_app_page(browser, width=1280, height=720)
    yield page
    page.context.close()


def _axe(page: Page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(_AXE_RUN_JS)


@pytest.mark.parametrize("path", PAGES)
def test_axe_finds_no_serious_or_critical_violation(page: Page, app_url: str, path: str) -> None:
    open_app(page, f"{app_url}{path}?{Q}")
    assert_no_exception(page)
    found = [v for v in _axe(page) if v["impact"] in BLOCKING]
    assert not found, "\n".join(f"{v['impact']} {v['id']} ({v['help']}): {len(v['nodes'])} nodes, "
                                f"e.g. {v['nodes'][:3]}" for v in found)


def test_the_data_pages_upload_panel_keeps_heading_order(page: Page, app_url: str) -> None:
    """The upload panel's sections (scale, preview, bounds) are h2 under the page's h1: axe's
    heading-order rule finds nothing once a CSV is read (they were h4, a skipped level)."""
    open_app(page, f"{app_url}/data?{Q}")
    choose_radio(page, "source_radio", "Upload a CSV")
    upload_file(page, "csv_upload", ROOT / "assets" / "example_blobs.csv")
    expect(widget(page, "csv_messages")).to_contain_text("Read 300 rows × 3 columns")
    expect(page.get_by_role("heading", name="Bounds: declare the public radius Λ")).to_be_visible()
    assert_no_exception(page)
    found = [v for v in _axe(page) if v["id"] == "heading-order" or v["impact"] in BLOCKING]
    assert not found, found


@pytest.mark.parametrize("path", ["/", "/data", "/present", "/learn"])
def test_every_chart_has_a_text_alternative_and_one_toolbar_button(page: Page, app_url: str,
                                                                   path: str) -> None:
    open_app(page, f"{app_url}{path}?{Q}")
    assert_no_exception(page)
    charts = page.evaluate(_CHARTS_JS)
    assert charts, f"no chart on {path}"
    for chart in charts:
        assert chart["role"] == "figure" and len(chart["name"]) > 10, chart
        assert chart["summary"].startswith("Chart: ") and chart["name"] in chart["summary"], chart
        # the data one click away, or already on the page (said in the summary)
        assert "Data behind this chart" in chart["table"] or "(its data: " in chart["summary"], chart
        assert chart["stops"] <= 2, chart  # PNG download and full screen, not ten buttons


def test_a_charts_data_is_one_click_away(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/data?{Q}")
    box = page.locator(".st-key-data_preview_alt")
    expect(box.get_by_test_id("stDataFrame")).to_have_count(0)  # built only when asked for
    rerun_after(page, box.get_by_text("Data behind this chart").click)
    table = box.get_by_test_id("stDataFrame")
    expect(table).to_be_visible()
    assert_no_exception(page)
    assert _axe_blocking_in(page, ".st-key-data_preview_alt") == []


def _axe_blocking_in(page: Page, selector: str) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        "async (sel) => (await axe.run(sel, { resultTypes: ['violations'] })).violations"
        ".filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => v.id)", selector)
    return found


def test_keyboard_focus_is_a_ring_that_hover_never_draws(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/?{Q}")
    links = page.get_by_test_id("stSidebarNav").locator("a")
    expect(links.first).to_be_visible()
    # Tab from the top of the page until a navigation link has the keyboard focus.
    page.locator("body").focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.matches(\"[data-testid='stSidebarNav'] a\")"):
            break
    else:
        pytest.fail("no navigation link within 12 Tab presses")
    style = "(el) => { const s = getComputedStyle(el); return [s.outlineStyle, parseFloat(s.outlineWidth)]; }"
    focused = page.evaluate(f"({style})(document.activeElement)")
    assert focused[0] != "none" and focused[1] >= 2, focused
    other = links.nth(3)
    other.hover()
    hovered = other.evaluate(style)
    assert hovered[0] == "none" or hovered[1] == 0, hovered


def test_the_skip_link_leads_to_the_eps_slider(browser, app_url: str) -> None:
    page = new_app_page(browser, width=1280, height=720)
    try:
        open_app(page, f"{app_url}/?{Q}")
        page.locator("body").focus()
        page.keyboard.press("Tab")
        skip = page.get_by_test_id("stSkipToContent")
        expect(skip).to_be_focused()
        page.keyboard.press("Enter")
        thumb = page.locator(".st-key-eps_slider input[type='range']")
        expect(thumb).to_be_focused()
        before = slider_text(page, "eps_slider")
        rerun_after(page, lambda: page.keyboard.press("ArrowRight"))
        assert slider_text(page, "eps_slider") != before
        assert_no_exception(page)
    finally:
        page.context.close()


def test_axe_is_the_pinned_npm_package() -> None:
    """The checker is axe-core's own build from npm (``make axe``), not a copy from elsewhere."""
    assert AXE is not None and AXE.stat().st_size > 100_000
    version = Path(AXE).parent.name.removeprefix("axe-core-")
    makefile = (ROOT / "Makefile").read_text()
    assert f"AXE_VERSION := {version}" in makefile
    assert f"axe v{version}" in AXE.read_text()[:300]
