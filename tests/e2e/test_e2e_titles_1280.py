"""Issue 27 at a projector's 1280 px: the storyboards' panel titles do not overlap each other or
the figure's title (Balcan et al.'s six panels, FriendlyCore's seven), and the Learn page's
tables show their last column without a horizontal scroll (measured in chromium).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page
from st_e2e import assert_no_exception, new_app_page, open_app
from test_e2e_clipping import _CLIPPED_TEXT_JS, _WIDE_TABLES_JS

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

Q = "n=3000&t=60&k=4&gk=4&seed=1"

#: Pairs of texts (figure title, panel titles, annotations) of one chart whose boxes intersect.
_OVERLAPS_JS = """
(root) => {
  const out = [];
  for (const chart of root.querySelectorAll('.js-plotly-plot')) {
    const boxes = [...chart.querySelectorAll('.gtitle, .annotation-text')]
      .map((t) => [t.textContent.slice(0, 40), t.getBoundingClientRect()])
      .filter(([, r]) => r.width > 0);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, r] = boxes[i], [b, s] = boxes[j];
        if (r.left < s.right - 1 && s.left < r.right - 1 && r.top < s.bottom - 1 && s.top < r.bottom - 1)
          out.push(a + ' ∩ ' + b);
      }
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def page(browser, app_url):  # a projector-sized page for this module
    page = new_app_page(browser, width=1280, height=720)
    yield page
    page.context.close()


@pytest.mark.parametrize("alg", ["balcan", "friendlycore"])
def test_storyboard_titles_do_not_overlap_at_1280px(page: Page, app_url: str, alg: str) -> None:
    open_app(page, f"{app_url}/?alg={alg}&{Q}")
    assert_no_exception(page)
    page.wait_for_timeout(800)  # plotly lays out its text after the first frame
    main = page.get_by_test_id("stMain")
    assert main.locator(".js-plotly-plot").count() >= 1
    assert main.evaluate(_OVERLAPS_JS) == []
    assert main.evaluate(_CLIPPED_TEXT_JS) == []


def test_learn_tables_and_titles_fit_at_1280px(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/learn?{Q}")
    assert_no_exception(page)
    page.wait_for_timeout(800)
    main = page.get_by_test_id("stMain")
    assert main.locator('[data-testid="stDataFrame"], [data-testid="stMarkdownContainer"] table').count()
    assert main.evaluate(_WIDE_TABLES_JS) == []
    assert main.evaluate(_OVERLAPS_JS) == []
    assert main.evaluate(_CLIPPED_TEXT_JS) == []
