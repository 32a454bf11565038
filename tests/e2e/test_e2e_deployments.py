"""Issue 27, "the chosen ε beside published real deployments' ε", in chromium.

Learn: the membership game's ε is drawn beside the published ε (US Census 2020, Apple, Google,
Facebook) in a collapsed expander; opening it shows the strip and the table with the Census row,
and moving the game's ε moves "your ε" in the figure and in the sentence. Release: the same
expander follows the ε the release will spend.

One `streamlit run app/main.py` for the module, one page. Screenshot: docs/learn_deployments.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    ROOT,
    assert_no_exception,
    fill_number,
    open_app,
    plotly_charts,
    plotly_traces,
    rerun_after,
    set_slider,
    widget,
)

from dpviz.privacy import deployments

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

GAME_OPTIONS = ["0.1", "0.25", "0.5", "1.0", "2.0", "3.0", "5.0", "10.0"]
YOUR_EPS = "your ε (one row)"


def _your_eps(page: Page, key: str) -> list[float]:
    chart = plotly_charts(widget(page, key))
    expect(chart).to_have_count(1)
    (line,) = [t for t in plotly_traces(chart.first) if t["name"] == YOUR_EPS]
    return line["x"]


def _published(page: Page, key: str) -> list[float]:
    traces = plotly_traces(plotly_charts(widget(page, key)).first)
    return sorted(x for t in traces if t["name"] != YOUR_EPS for x in t["x"])


def test_learn_shows_the_game_eps_beside_deployments(page: Page, app_url: str) -> None:
    open_app(page, app_url + "/learn")
    assert_no_exception(page)
    box = widget(page, "learn_deploy")
    expect(box).to_contain_text("Your ε beside published deployments")
    expect(plotly_charts(box)).to_have_count(0)  # collapsed: nothing built until opened
    rerun_after(page, box.locator("summary").click)
    assert_no_exception(page)
    assert _your_eps(page, "learn_deploy") == [1.0, 1.0]
    assert _published(page, "learn_deploy") == pytest.approx(
        sorted(d.epsilon for d in deployments.DEPLOYMENTS))
    table = widget(page, "learn_deploy_table")
    expect(table).to_contain_text("US Census Bureau")
    expect(table.get_by_role("row").filter(has_text="US Census Bureau")).to_contain_text("17.1")
    expect(table.get_by_role("link", name="arXiv:2009.01265")).to_have_attribute(
        "href", "https://arxiv.org/abs/2009.01265")
    expect(box).to_contain_text(deployments.sentence(1.0))
    expect(box).to_contain_text("no data is read")
    page.mouse.move(0, 0)  # no tooltip over the shot
    page.set_viewport_size({"width": 1400, "height": 2000})  # the whole expander in the shot
    box.screenshot(path=str(ROOT / "docs" / "learn_deployments.png"))
    page.set_viewport_size({"width": 1400, "height": 1000})

    set_slider(page, "learn_mia_eps", "10.0", options=GAME_OPTIONS)
    assert_no_exception(page)
    assert _your_eps(page, "learn_deploy") == [10.0, 10.0]
    expect(box).to_contain_text(deployments.sentence(10.0))
    expect(box).to_contain_text("Your ε = 10 per row is smaller than 2 of the 8")


def test_release_shows_the_eps_it_will_spend(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/release?src=generate&gen=fig6_blobs&n=3000&gk=4&k=4&seed=1&eps=1")
    assert_no_exception(page)
    box = widget(page, "release_deploy")
    box.locator("summary").click()  # not lazy on Release: opening it does not rerun the page
    expect(box).to_contain_text(deployments.sentence(1.0))
    fill_number(page, "release_eps", 20)
    assert_no_exception(page)
    expect(box).to_contain_text("Your ε = 20 per row is about the same as US Census Bureau's")
    assert _your_eps(page, "release_deploy") == [20.0, 20.0]
