"""The real app in chromium: every page loads, ρ moves redraw Explore, shared links reproduce it.

One `streamlit run app/main.py` for the module and one page (one browser session) reused by the
tests: the app caches the tuple stage per session, so each fresh session costs a full tuple
stage; only the tests about links open new sessions.
Screenshots go to tests/e2e/screenshots/ (explore.png is the README's assets/screenshot.png,
copied by tests/e2e/update_screenshot.py).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import (
    assert_no_exception,
    go_to_page,
    move_slider,
    new_app_page,
    number_input,
    open_app,
    plotly_charts,
    plotly_traces,
    press_slider_key,
    query_params,
    rerun_after,
    selectbox_value,
    slider_text,
    widget,
)

from app.components.state import URL_NAMES

pytestmark = pytest.mark.e2e

# Fig. 6 blobs at the app's default size: FriendlyCore completes every step at ρ = 1.
EXPLORE = "/?src=generate&gen=fig6_blobs&n=20000&k=8&t=200&rho=1.0&seed=0"
README_HEIGHT = 1500


def chart_traces(page: Page, key: str) -> list[dict]:
    return plotly_traces(plotly_charts(widget(page, key)))


def private_centers(page: Page) -> list[tuple[list, list]]:
    """(x, y) of every trace of panel (f), the private centers on the data: the fourth subplot
    (axes x4/y4) of the live grid of panels (c)-(g)."""
    return [(t["x"], t["y"]) for t in chart_traces(page, "storyboard_live")
            if t.get("xaxis") == "x4"]


def ensure_explore(page: Page, app_url: str) -> None:
    """Open EXPLORE unless this page already shows the app's Explore page, healthy, in a live
    session (reusing the session reuses its cached tuple stage)."""
    if (not page.url.startswith(app_url) or widget(page, "eps_slider").count() == 0
            or page.get_by_test_id("stException").count() > 0):
        open_app(page, app_url + EXPLORE)


def test_eps_slider_redraws_the_storyboard(page: Page, app_url: str, shoot) -> None:
    open_app(page, app_url + EXPLORE)
    # the link's exact ρ = 1 (an old ρ link): the ε slider sits at that budget's row-level ε
    assert slider_text(page, "eps_slider") == "17.1"
    expect(widget(page, "rho_link_note")).to_contain_text("ρ = 1")
    expect(widget(page, "run_status")).to_contain_text("completed every step")
    shoot("explore", height=README_HEIGHT)  # the README screenshot: both storyboard rows
    shoot("explore_full")
    centers = private_centers(page)
    eps = widget(page, "eps_readout").inner_text()
    data_panel = chart_traces(page, "storyboard_a")
    live = plotly_charts(widget(page, "storyboard_live"))
    live.evaluate("(graph) => { graph.__e2eMark = 'drawn before the move'; }")
    revision = live.get_attribute("data-revision")

    move_slider(page, "eps_slider", -2)  # 17.1 → 10 on the grid: planned from the row-level target

    assert slider_text(page, "eps_slider") == "10"
    assert query_params(page)["eps"] == "10.0" and "friendlycore.rho" not in query_params(page)
    expect(widget(page, "eps_readout")).not_to_have_text(eps)
    expect(widget(page, "own_budget_readout")).to_contain_text("ρ = ")
    assert private_centers(page) != centers, "panel (f) was not redrawn after the ε move"
    assert chart_traces(page, "storyboard_a") == data_panel, "the data panel must not change"
    assert live.get_attribute("data-revision") != revision
    assert live.evaluate("(graph) => graph.__e2eMark") == "drawn before the move", \
        "the live chart was rebuilt instead of updated in place (Plotly.react)"
    assert_no_exception(page)
    shoot("explore_after_eps_move")


def test_copied_link_reproduces_the_view(page: Page, app_url: str, browser: Browser) -> None:
    """A second user opening the first one's URL sees the same parameters and the same release."""
    ensure_explore(page, app_url)
    move_slider(page, "eps_slider", 1)
    link = page.url
    centers = private_centers(page)
    status = widget(page, "run_status").inner_text()

    other = new_app_page(browser)
    try:
        open_app(other, link)
        assert query_params(other) == query_params(page)
        assert slider_text(other, "eps_slider") == slider_text(page, "eps_slider")
        expect(widget(other, "run_status")).to_have_text(status)
        assert private_centers(other) == centers, "same seed and parameters, different release"
    finally:
        other.context.close()


def test_every_page_loads_without_exception(page: Page, app_url: str, shoot) -> None:
    ensure_explore(page, app_url)
    for title, heading in (("Data", "Data"), ("Budget", "Budget"), ("Learn", "Learn"),
                           ("Explore", "Explore")):
        go_to_page(page, title)
        expect(page.locator("h1").first).to_contain_text(heading)
        assert_no_exception(page)
        shoot(f"page_{title.lower()}")
    for key in ("storyboard_a", "storyboard_b", "storyboard_live"):
        expect(plotly_charts(widget(page, key))).to_have_count(1)


def test_shared_url_parameters_show_in_the_widgets(page: Page, app_url: str, shoot) -> None:
    shared = {"src": "generate", "gen": "fig6_blobs", "n": "6000", "rho": "0.316",
              "delta": "1e-08", "k": "6", "t": "150", "oracle": "pca", "preset": "paper",
              "seed": "7"}
    open_app(page, app_url + "/?" + "&".join(f"{k}={v}" for k, v in shared.items()))
    assert_no_exception(page)
    expect(widget(page, "own_budget_readout")).to_contain_text("ρ = 0.316 ")  # the link's exact ρ
    expect(widget(page, "rho_link_note")).to_be_visible()
    assert slider_text(page, "delta_select") == "10⁻⁸"
    expect(number_input(page, "ex_n")).to_have_value(re.compile(r"^6,?000$"))
    expect(number_input(page, "ex_k")).to_have_value("6")
    expect(number_input(page, "ex_t")).to_have_value("150")
    expect(number_input(page, "ex_seed")).to_have_value("7")
    assert "pca" in selectbox_value(page, "ex_oracle").lower()
    assert "paper" in selectbox_value(page, "ex_preset").lower()
    got = query_params(page)
    # the link's ρ is read once and never written back: the URL carries its row-level ε (issue 33)
    assert "rho" not in got and "friendlycore.rho" not in got and "eps" in got
    for name, value in shared.items():  # FriendlyCore's keys come back namespaced (issue 26)
        if name == "rho":
            continue
        url = URL_NAMES.get(name, name)
        assert float(got[url]) == float(value) if name == "delta" else \
            got[url] == value, f"URL parameter {url}: {got.get(url)!r} != {value!r}"
    # the run used them: six private centers at t = 150
    expect(widget(page, "metrics_tiles")).to_contain_text("/ 150")
    shoot("explore_shared_url")


def test_eps_grid_ends_run_without_exception(page: Page, app_url: str, shoot) -> None:
    """End and Home on the ε slider: the largest and the smallest ε of the grid still give a
    release (or a clear failure message) and a privacy statement, never an exception."""
    ensure_explore(page, app_url)
    for key_name, eps in (("End", "30"), ("Home", "0.1")):
        press_slider_key(page, "eps_slider", key_name)
        assert slider_text(page, "eps_slider") == eps
        shoot(f"explore_eps_{eps}")
        assert_no_exception(page)
        assert query_params(page)["eps"] == f"{float(eps)!r}"
        expect(widget(page, "run_status")).to_be_visible()
        expect(widget(page, "eps_readout")).to_be_visible()


def test_every_view_shows_and_the_storyboard_comes_back_drawn(page: Page, app_url: str,
                                                              shoot) -> None:
    """The view picker: each view of the run renders without exception; back on the
    Storyboard, its live charts are mounted afresh and drawn with the same figure."""
    open_app(page, app_url + EXPLORE)  # a run that completes: every view has its charts
    live = plotly_charts(widget(page, "storyboard_live"))
    revision = live.get_attribute("data-revision")
    for view, shown in (("Privacy", "privacy_statement"), ("Re-draw noise", "explore_compute_friendlycore"),
                        ("Filters & radii", "exploration"), ("Downloads", "dl_centers"),
                        ("Storyboard", "storyboard_live")):
        rerun_after(page, widget(page, "explore_view").get_by_text(view, exact=True).click)
        expect(widget(page, shown)).to_be_visible()
        assert_no_exception(page)
        shoot(f"explore_view_{view.split()[0].lower()}")
    assert live.get_attribute("data-revision") == revision
    expect(live.locator(".main-svg").first).to_be_visible()


def test_a_chart_that_cannot_load_plotly_js_says_so_and_the_app_stays_usable(
        browser: Browser, app_url: str) -> None:
    other = new_app_page(browser)
    try:
        other.route(re.compile(r".*/app/static/plotly-[^/]*\.min\.js$"), lambda r: r.abort())
        open_app(other, app_url + EXPLORE)
        message = widget(other, "storyboard_live").locator(".dpviz-live-chart-error")
        expect(message).to_contain_text("Could not draw this chart")
        expect(widget(other, "run_status")).to_contain_text("completed every step")
        expect(widget(other, "eps_readout")).to_contain_text("Privacy per row")
        with pytest.raises(AssertionError, match="could not be drawn"):
            assert_no_exception(other)
    finally:
        other.context.close()


def test_where_the_core_forms_at_no_eps_a_button_opens_the_lesson_with_enough_rows(
        browser: Browser, app_url: str) -> None:
    """Issue 27 (a lesson that teaches): on the old default lesson (20,000 rows, t = 200; issue 33
    moved the default to 150,000 rows) the core forms at no ε of the slider; a button opens the
    same lesson with 5× the rows and pieces, where the slider's mark shows from which ε
    FriendlyCore's own core forms (the run's decision)."""
    page = new_app_page(browser, width=1280, height=720)
    try:
        open_app(page, app_url + "/?src=generate&gen=fig6_blobs&n=20000&k=8&t=200&seed=0")
        expect(page.get_by_text("the core forms at no ε of this slider")).to_be_visible()
        button = widget(page, "more_rows").get_by_role("button")
        expect(button).to_contain_text("open this lesson with 100,000 rows and t = 1,000 pieces")
        button.click()
        page.wait_for_function("() => /[?&]n=100000/.test(location.search)", timeout=60_000)
        expect(page.get_by_text(re.compile(r"core forms from ε ≈ \d"))).to_be_visible(timeout=180_000)
        params = query_params(page)
        assert params[URL_NAMES.get("n", "n")] == "100000" and params[URL_NAMES.get("t", "t")] == "1000"
        assert_no_exception(page)
    finally:
        page.close()


def test_the_default_lesson_shows_the_core_forming_above_the_mark_and_not_below(
        browser: Browser, app_url: str) -> None:
    """Issue 33 (a default lesson that shows the transition): Explore opens on Fig. 6 blobs at
    150,000 rows, t = 1,500, row-level ε = 3, where the backup answers; the slider's mark says the
    core forms from ε ≈ 5 (between 2 and 8); one step up (ε = 5) FriendlyCore's own core answers,
    and back at ε = 3 the backup answers again. Waits for the status tile's text, never a delay."""
    page = new_app_page(browser, width=1280, height=720)
    try:
        open_app(page, app_url + "/")
        assert slider_text(page, "eps_slider") == "3"
        expect(widget(page, "run_status")).to_contain_text("answered instead", timeout=180_000)
        mark = page.get_by_text(re.compile(r"core forms from ε ≈ \d"))
        expect(mark.first).to_be_visible(timeout=180_000)
        got = float(re.search(r"core forms from ε ≈ ([\d.]+)", mark.first.inner_text()).group(1))
        assert 2.0 <= got <= 8.0
        move_slider(page, "eps_slider", 1)  # 3 → 5 on the grid
        assert slider_text(page, "eps_slider") == "5"
        expect(widget(page, "run_status")).to_contain_text("completed every step", timeout=180_000)
        move_slider(page, "eps_slider", -1)  # back below the mark
        assert slider_text(page, "eps_slider") == "3"
        expect(widget(page, "run_status")).to_contain_text("answered instead", timeout=180_000)
        assert_no_exception(page)
    finally:
        page.close()
