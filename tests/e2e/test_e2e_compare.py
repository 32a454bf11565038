"""The Compare page in chromium: a small comparison of every registered algorithm at the same
row-level (ε, δ) draws a curve for each, the reference as a dotted line, and a click on a
FriendlyCore point opens Explore at its calibrated budget.

One `streamlit run app/main.py` for the module, one page reused by the tests.
"""

from __future__ import annotations

import math
import re
import time

import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    RERUN_TIMEOUT_MS,
    assert_no_exception,
    open_app,
    plotly_charts,
    plotly_traces,
    query_params,
    widget,
)

import dpviz

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

# Small Fig. 6 data, two row-level ε, one repetition: every registered algorithm in seconds.
COMPARE = ("/compare?src=generate&gen=fig6_blobs&n=4000&gk=8&k=8&seed=0&calg=all&celo=1.0"
           "&cehi=10.0&cpts=2&creps=1&cdelta=1e-06")
SWEEP_TIMEOUT_MS = 6 * RERUN_TIMEOUT_MS


def _feasible(name: str, eps: float) -> bool:
    """Whether the registry's plan accepts COMPARE's declared inputs at row-level ε (Easy
    Instances' refusal depends on n, k, ε, δ only, not on Λ)."""
    try:
        dpviz.registry.plan(name, eps, 1e-6, dpviz.registry.Public(n_declared=4000, d=2, k=8, radius=1.0))
    except ValueError:
        return False
    return True


def test_a_small_comparison_draws_every_algorithm(page: Page, app_url: str, shoot) -> None:
    open_app(page, app_url + COMPARE)
    assert_no_exception(page)
    expect(widget(page, "compare_guarantee")).to_contain_text("same row-level guarantee")
    # The comparison runs one (repetition, algorithm) per script run, each ending in a rerun:
    # the first chunk draws the charts, and the comparison is done when the progress box is gone.
    widget(page, "compare_run").locator("button").click()
    expect(widget(page, "compare_loss")).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
    expect(widget(page, "compare_progress")).to_have_count(0, timeout=SWEEP_TIMEOUT_MS)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                           timeout=RERUN_TIMEOUT_MS)
    assert_no_exception(page)
    traces = plotly_traces(plotly_charts(widget(page, "compare_loss")))
    names = {t["name"] for t in traces}
    for spec in dpviz.algorithms(applicable_to=2):  # the page's list: the data have d = 2
        if spec.is_private:
            # an algorithm with a fallback is two lines, alone and with fallback (issue 16)
            lines = ([f"{spec.title} with fallback", f"{spec.title} alone (fallback answers = no centers)"]
                     if spec.structure_step else [spec.title])
            # A point is drawn exactly where the plan accepts the declared inputs (Easy Instances'
            # automatic t needs more than n = 4000 rows at small ε: that cell is a gap, not a run).
            drawn = [_feasible(spec.name, eps) for eps in (1.0, 10.0)]
            for line in lines:
                curve = next(t for t in traces if t["name"] == line)
                assert curve["x"] == [1.0, 10.0], f"{line}: {curve['x']}"
                assert [y is not None and math.isfinite(y) for y in curve["y"]] == drawn, (line, curve["y"])
        else:
            assert any(n.startswith(spec.title) and "non-private reference" in n for n in names)
    # At a glance (issue 27): the ranking, one panel per method; the rest one click away.
    expect(widget(page, "compare_ranking")).to_be_visible()
    expect(widget(page, "compare_structure")).to_have_count(0)
    widget(page, "compare_more").locator("label").click()
    expect(widget(page, "compare_structure")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(widget(page, "compare_seconds")).to_be_visible()
    shoot("compare")


def test_clicking_a_friendlycore_point_opens_explore(page: Page, app_url: str) -> None:
    if widget(page, "compare_loss").count() == 0:
        test_a_small_comparison_draws_every_algorithm(page, app_url, lambda *a, **k: None)
    chart = plotly_charts(widget(page, "compare_loss"))
    title = dpviz.registry.get("friendlycore").title + " with fallback"
    # Under load the previous test's last rerun ('More figures': the chart turns into small
    # multiples, taller than the window) can still be drawing: wait for the app to be idle, then
    # for the marker to stand still, before aiming at it.
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=RERUN_TIMEOUT_MS)
    before = page.url
    x, y = _aim(page, chart, title)
    # Plotly picks the clicked point from the hover of the last mouse move, computed
    # asynchronously: click only once the hover holds a FriendlyCore point (a click before it
    # selects nothing, which was this test's flake under load).
    page.mouse.move(x, y)
    page.wait_for_function(
        "([gd, title]) => (gd._hoverdata || []).some((p) => p.fullData && p.fullData.name === title)",
        arg=[chart.element_handle(), title], timeout=RERUN_TIMEOUT_MS, polling=50)
    page.mouse.click(x, y)
    # The click reruns Compare, which switches to Explore; Explore's first run places the
    # slider's mark (it bisects the ε grid: a few plans and FriendlyCore runs), then runs at the
    # point's budget and renders the readout of that run's plan. That readout is the state to
    # wait for; its bound is the module's hang guard for computations, not a guess at their
    # speed (under two busy loops at a load average near 40 it missed expect's 60 s).
    expect(widget(page, "own_budget_readout")).to_contain_text("ρ = ", timeout=SWEEP_TIMEOUT_MS)
    expect(widget(page, "eps_slider")).to_be_visible()
    # Explore opens FriendlyCore at the point's row-level (ε, δ), like every algorithm: the same
    # plan as the comparison's (its ρ is the readout under the slider).
    expect(page).to_have_url(re.compile(r"[?&]eps=(1|10)\.0"), timeout=RERUN_TIMEOUT_MS)
    assert page.url != before
    got = query_params(page)
    assert got.get("alg", "friendlycore") == "friendlycore"
    assert "friendlycore.rho" not in got and float(got["delta"]) == 1e-6
    assert_no_exception(page)


def _aim(page: Page, chart, title: str) -> tuple[float, float]:
    """Viewport coordinates of FriendlyCore's loneliest marker (:func:`_pick`), scrolled into the
    window if the chart is taller than it, once two successive frames put it at the same place."""
    height = page.viewport_size["height"]
    last = None
    deadline = time.monotonic() + RERUN_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        x, y = _pick(chart, title)
        if not 0 < y < height:  # FriendlyCore's panel is the last row: bring the marker into view
            chart.evaluate(_SCROLL_JS, y - height / 2)
            continue
        if last == (x, y):
            return x, y
        last = (x, y)
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    raise AssertionError(f"FriendlyCore's marker did not settle inside the window: {last}")


# Scroll the chart's scrolling ancestor (Streamlit's main column) by dy pixels at once (no smooth
# scrolling: the next _pick reads where the marker is, not where an animation left it).
_SCROLL_JS = """(graph, dy) => {
  let el = graph.parentElement;
  while (el && !(el.scrollHeight > el.clientHeight && /auto|scroll/.test(getComputedStyle(el).overflowY))) {
    el = el.parentElement;
  }
  (el || document.scrollingElement).scrollBy({top: dy, behavior: "instant"});
}"""


def _pick(chart, title: str) -> tuple[float, float]:
    """Viewport coordinates of FriendlyCore's marker farthest (in pixels) from every other curve's
    markers, so that plotly's nearest-point pick is FriendlyCore's."""
    return chart.evaluate(
        """(graph, title) => {
             const box = graph.getBoundingClientRect();
             const axes = (t) => [graph._fullLayout['xaxis' + (t.xaxis || 'x').slice(1)],
                                  graph._fullLayout['yaxis' + (t.yaxis || 'y').slice(1)]];
             const pos = (t, j) => { const [xa, ya] = axes(t);  // small multiples: its panel's axes
                                     return [box.left + xa._offset + xa.c2p(t.x[j]),
                                             box.top + ya._offset + ya.c2p(t.y[j])]; };
             const medians = graph._fullData.filter((t) => t.mode === 'lines+markers' && t.visible === true);
             const fc = medians.find((t) => t.name === title);
             const others = medians.filter((t) => t !== fc)
               .flatMap((t) => Array.from(t.x, (_, j) => pos(t, j)))
               .filter((o) => Number.isFinite(o[0] + o[1]));  // a gap (a refused cell) is no marker
             let best = null, far = -1;
             for (let j = 0; j < fc.x.length; j++) {
               const p = pos(fc, j);
               const d = Math.min(1e9, ...others.map((o) => Math.hypot(o[0] - p[0], o[1] - p[1])));
               if (Number.isFinite(p[0] + p[1]) && d > far) { far = d; best = p; }
             }
             return best;
           }""", title)
