"""Issue 16: clipped axis titles and tables in Explore's Privacy and Filters views, measured in
chromium at a projector's 1280 px: every title, axis title and annotation of every chart lies
inside its chart, and no table of those views needs a horizontal scroll to show its columns.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page
from st_e2e import assert_no_exception, new_app_page, open_app, rerun_after, widget

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

EXPLORE = "/?src=generate&gen=fig6_blobs&n=20000&k=8&t=200&rho=1.0&seed=0"

#: For each chart: texts (title, axis titles, annotations) whose box leaves the chart's box.
_CLIPPED_TEXT_JS = """
(root) => {
  const out = [];
  for (const chart of root.querySelectorAll('.js-plotly-plot')) {
    const box = chart.getBoundingClientRect();
    for (const t of chart.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .annotation-text')) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      const out_x = r.left < box.left - 1 || r.right > box.right + 1;
      if (out_x || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        out.push(t.textContent.slice(0, 60));
    }
  }
  return out;
}
"""
#: Tables whose content is wider than their box: glide data grids (``st.dataframe``) and markdown
#: tables (the Privacy view's margins and ledger), against the block they sit in.
_WIDE_TABLES_JS = """
(root) => Array.from(root.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller'))
  .filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.scrollWidth + ' > ' + s.clientWidth)
  .concat(Array.from(root.querySelectorAll('[data-testid="stMarkdownContainer"] table'))
    .map((t) => [t, t.closest('[data-testid="stVerticalBlock"]')])
    .map(([t, box]) => [t.getBoundingClientRect().right, box.getBoundingClientRect().right])
    .filter(([t, box]) => t > box + 1).map(([t, box]) => 'table ' + t + ' > ' + box))
"""
#: The markdown tables in ``root`` (the check above is empty for a view that has none).
_TABLES_JS = """(root) => root.querySelectorAll('[data-testid="stMarkdownContainer"] table, '
  + '[data-testid="stDataFrame"]').length"""


@pytest.fixture(scope="module")
def page(browser, app_url):  # a projector-sized page for this module
    page = new_app_page(browser, width=1280, height=720)
    yield page
    page.context.close()


@pytest.mark.parametrize("view", ["Privacy", "Filters & radii"])
def test_no_clipped_titles_or_tables_at_1280px(page: Page, app_url: str, view: str) -> None:
    open_app(page, app_url + EXPLORE)
    rerun_after(page, widget(page, "explore_view").get_by_text(view, exact=True).click)
    assert_no_exception(page)
    main = page.get_by_test_id("stMain")
    page.wait_for_timeout(500)  # plotly lays out its text after the first frame
    assert main.evaluate(_CLIPPED_TEXT_JS) == []
    assert main.evaluate(_WIDE_TABLES_JS) == []
    if view == "Privacy":  # the margins and the ledger: the check above looked at two tables
        assert main.evaluate(_TABLES_JS) == 2


def test_the_ledger_table_of_another_algorithm_fits_at_1280px(page: Page, app_url: str) -> None:
    """The registry's Privacy view (here Balcan et al.'s, whose notes are long) shares the table."""
    open_app(page, app_url + EXPLORE + "&alg=balcan")
    rerun_after(page, widget(page, "alg_view").get_by_text("Privacy", exact=True).click)
    assert_no_exception(page)
    main = page.get_by_test_id("stMain")
    assert main.evaluate(_TABLES_JS) == 1
    assert main.evaluate(_WIDE_TABLES_JS) == []


#: Metric values ("ε = 17.1 · δ = 0.0013") that Streamlit would end with "…".
_CLIPPED_METRICS_JS = """
(root) => Array.from(root.querySelectorAll('[data-testid="stMetricValue"]'))
  .filter((v) => Array.from(v.querySelectorAll('*')).concat([v])
    .some((e) => e.scrollWidth > e.clientWidth + 1))
  .map((v) => v.textContent)
"""


def test_the_row_level_readout_is_never_cut_off_at_1280px(page: Page, app_url: str) -> None:
    open_app(page, app_url + EXPLORE)
    assert_no_exception(page)
    readout = widget(page, "eps_readout")
    readout.scroll_into_view_if_needed()
    assert "δ = " in readout.inner_text()
    assert readout.evaluate(_CLIPPED_METRICS_JS) == []
