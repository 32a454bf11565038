"""Issue 36, offline: the app asks nothing of any host but its own server.

Every page of the navigation is opened in a fresh tab, on small generated data (what a page
requests does not depend on its rows; the default lesson's 150,000 rows cost minutes of a loaded
suite here), while every request the browser makes
(documents, scripts, fonts, images, the favicon, websockets) is recorded; a request to any other
host is also aborted, as it would be in a classroom without internet. The test fails on any such
request and checks that the Material Symbols icon font (the icons in alerts and buttons, e.g.
the simulation badge's "science" icon) did load from the app's own server.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, Route
from st_e2e import assert_no_exception, new_app_page, open_app

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

#: Small generated data so every page draws quickly (as in test_e2e_a11y.py).
Q = "n=2000&t=40&k=3&gk=3&seed=1"
#: Schemes that never leave the browser.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome-extension"}

# The icon font is bundled with Streamlit's frontend and served by the app; "science" is the
# simulation badge's icon (app/components/modes.py), drawn as a ligature of that font.
_ICON_FONT_JS = """
async () => {
  await document.fonts.ready;
  const faces = [...document.fonts].filter((f) => f.family.replace(/"/g, '') === 'Material Symbols Rounded');
  return { faces: faces.map((f) => f.status),
           drawn: document.fonts.check('24px "Material Symbols Rounded"', 'science') };
}
"""


def _outside(url: str, app_netloc: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme not in LOCAL_SCHEMES and parts.netloc != app_netloc


def _nav_paths(page: Page, app_url: str) -> list[str]:
    """The path of every page in the sidebar navigation (so a new page is covered too)."""
    hrefs = page.get_by_test_id("stSidebarNav").locator("a").evaluate_all(
        "(links) => links.map((a) => a.href)")
    paths = sorted({urlsplit(h).path for h in hrefs})
    assert len(paths) >= 8, f"expected the app's pages in the navigation, found {paths}"
    return paths


def _blocker(netloc: str, got: list[str]):
    """A route handler that aborts (and records in ``got``) every request to another host."""

    def block(route: Route) -> None:
        if _outside(route.request.url, netloc):
            got.append(route.request.url)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    return block


def _visit(browser: Browser, url: str, netloc: str, got: list[str]) -> Page:
    """Open ``url`` in a fresh tab (nothing cached, the favicon asked again) that records in ``got``
    (and aborts) every request to another host, wait for its first run, its live charts and the
    network to settle, and check that the icon font loaded from the app's server. The page is
    returned open; the caller closes its context."""
    page = new_app_page(browser)
    page.context.route("**/*", _blocker(netloc, got))
    page.on("request", lambda request: _outside(request.url, netloc)
            and request.url not in got and got.append(request.url))
    page.on("websocket", lambda ws: _outside(ws.url.replace("ws", "http", 1), netloc)
            and got.append(ws.url))
    open_app(page, url)
    assert_no_exception(page)
    page.wait_for_load_state("networkidle")
    icon_font = page.evaluate(_ICON_FONT_JS)
    assert icon_font["drawn"] and "loaded" in icon_font["faces"], (
        f"{url}: the Material Symbols font did not load from the app's server: {icon_font}")
    return page


@pytest.fixture(scope="module")
def outside_requests(browser: Browser, app_url: str) -> dict[str, list[str]]:
    """Per page path: the requests the page made to any other host (each one aborted). The first
    page (the app's default, ``/``) is opened like every other and also gives the navigation's
    paths (issue 45: it used to be opened once more, unwatched, only for them)."""
    netloc = urlsplit(app_url).netloc
    seen: dict[str, list[str]] = {"/": []}
    first = _visit(browser, f"{app_url}/?{Q}", netloc, seen["/"])
    paths = _nav_paths(first, app_url)
    first.context.close()
    assert "/" in paths, f"the default page is not in the navigation: {paths}"
    for path in paths:
        if path not in seen:
            _visit(browser, f"{app_url}{path}?{Q}", netloc, seen.setdefault(path, [])).context.close()
    return seen


def test_no_page_requests_another_host(outside_requests: dict[str, list[str]]) -> None:
    offenders = {path: urls for path, urls in outside_requests.items() if urls}
    assert not offenders, f"pages requested hosts other than the app's server: {offenders}"


def test_the_present_page_draws_its_icons_offline(browser: Browser, app_url: str) -> None:
    """The presenter's simulation badge shows the icon, not the word "science" in text."""
    netloc = urlsplit(app_url).netloc
    page = new_app_page(browser, width=1280, height=720)
    page.context.route("**/*", _blocker(netloc, []))
    try:
        open_app(page, f"{app_url}/present?{Q}")
        assert_no_exception(page)
        icon = page.locator(".st-key-present_badge [data-testid='stAlertDynamicIcon']")
        assert icon.inner_text().strip() == "science"  # the ligature's text ...
        page.evaluate("() => document.fonts.ready")
        # ... drawn by the icon font: one glyph about as wide as it is tall, not seven letters.
        box = icon.bounding_box()
        assert box is not None and box["width"] < 2 * box["height"], box
    finally:
        page.context.close()
