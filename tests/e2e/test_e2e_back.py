"""Back after a page switch (issue 27): one press of the browser's Back returns to the previous
page. Before, a switch pushed the new page's URL and then the app's URL sync (which puts the
parameters back into the query string) pushed a second history entry, so Back needed two presses.

One `streamlit run app/main.py` for the module, one page.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page
from st_e2e import assert_no_exception, go_to_page, open_app, rerun_after

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test


def _path(page: Page) -> str:
    return urlsplit(page.url).path.rstrip("/").rsplit("/", 1)[-1]


def test_one_back_per_page_switch(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/learn?n=3000&t=60&k=4&gk=4&seed=1")
    assert _path(page) == "learn"
    assert_no_exception(page)
    start = page.evaluate("history.length")
    go_to_page(page, "Release")
    page.wait_for_timeout(500)  # let any URL update that follows the run land
    assert _path(page) == "release"
    assert "seed=1" in page.url  # the parameters are still in the URL after the switch
    go_to_page(page, "Data")
    page.wait_for_timeout(500)
    assert _path(page) == "data"
    # One history entry per switch, not two.
    assert page.evaluate("history.length") == start + 2
    rerun_after(page, page.go_back)
    page.wait_for_timeout(300)
    assert _path(page) == "release"
    rerun_after(page, page.go_back)
    page.wait_for_timeout(300)
    assert _path(page) == "learn"
    assert_no_exception(page)
