"""Issue 36, the Data page in chromium at 1280×720: its own k control and target-ε slider re-run
the verdicts in place (no detour to Explore), and its headings go h1 → h2 → h3 (axe-core's
heading-order finding on Data was an h4 under the h1)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import (
    assert_no_exception,
    fill_number,
    move_slider,
    new_app_page,
    open_app,
    slider_text,
    widget,
)
from test_e2e_a11y import AXE, _axe

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test
Q = "src=generate&n=3000&gk=4&k=8&t=60&seed=1"


@pytest.fixture(scope="module")
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    if AXE is None:
        pytest.fail("axe-core is missing: run `make axe` (fetches its npm package)", pytrace=False)
    page = new_app_page(browser, width=1280, height=720)
    yield page
    page.context.close()


def test_k_and_eps_on_the_data_page_rerun_the_verdict(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/data?{Q}")
    assert_no_exception(page)
    verdict = widget(page, "triage_verdict")
    expect(verdict).to_contain_text("At k = 8, t = 60, the row-level target ε = 3")
    fill_number(page, "data_k", 4)
    assert_no_exception(page)
    expect(verdict).to_contain_text("At k = 4, t = 60, the row-level target ε = 3")
    move_slider(page, "data_eps", 1)  # 3 → 5 on the grid
    assert slider_text(page, "data_eps") == "5"
    expect(verdict).to_contain_text("At k = 4, t = 60, the row-level target ε = 5")
    assert_no_exception(page)


def test_data_headings_do_not_skip_a_level(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/data?{Q}")
    levels = page.evaluate("() => [...document.querySelectorAll('[data-testid=stMain] h1, "
                           "[data-testid=stMain] h2, [data-testid=stMain] h3, [data-testid=stMain] h4, "
                           "[data-testid=stMain] h5, [data-testid=stMain] h6')]"
                           ".map((h) => Number(h.tagName[1]))")
    assert levels and levels[0] == 1
    assert all(b - a <= 1 for a, b in pairwise(levels)), levels
    found = [v for v in _axe(page) if v["id"] == "heading-order"]
    assert not found, found
