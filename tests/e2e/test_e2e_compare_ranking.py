"""Issue 43 item 2, Compare in chromium at 1280×720: the default set follows the public rule for
the default lesson's shape (the method Data's Check names among them), the ranking states its rule
in words and is the library's rule (dpviz.ranking) on the same runs, every cell shows its q10–q90
spread, ties are shown as ties and a rising median carries its note.

The default comparison opens drawn (the precomputed sweeps, pinned by tests/e2e/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pandas as pd
import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import assert_no_exception, new_app_page, open_app, widget

import dpviz
from dpviz.compare_set import default_methods, named_by_check
from dpviz.ranking import rank_methods

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # this worker's server (tests/e2e/conftest.py): releases nothing, needs no cold server
#: A cell: the median and its q10–q90 spread, two decimals at most ("0.76 (0.1–0.96)", "0 (0–0)").
CELL = r"\d(\.\d{1,2})? \(\d(\.\d{1,2})?–\d(\.\d{1,2})?\)"
PRECOMPUTED = True

W, H = 1280, 720
#: The default lesson's declared shape and Compare's default range, δ and target ε.
SHAPE, EPS, DELTA, TARGET = (150_000, 2, 8), (0.5, 1.36, 3.68, 10.0), 1e-6, 3.0


@pytest.fixture(scope="module")
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    page = new_app_page(browser, width=W, height=H)
    yield page
    page.context.close()


def _stored_frame() -> pd.DataFrame:
    """The default comparison's runs as the app reads them (the committed precomputed file)."""
    from app import precompute_sweeps
    from app.components import sweep

    p = precompute_sweeps.params_for({})
    spec = precompute_sweeps.compare_spec_for(p, precompute_sweeps.dataset_for(p))
    stored = dict(sweep.read_precomputed(sweep.PRECOMPUTED)[1])
    return pd.concat(stored[spec], ignore_index=True)


def _table(page: Page) -> list[list[str]]:
    """The ranking table's rows as the browser shows them (header first)."""
    table = widget(page, "compare_ranking").get_by_test_id("stTable")
    expect(table).to_be_visible()
    return table.evaluate("""(el) => Array.from(el.querySelectorAll('tr')).map(
        (tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.innerText.trim()))""")


def test_the_default_set_is_the_public_rule_for_the_shape(page: Page, app_url: str, shoot) -> None:
    open_app(page, f"{app_url}/compare")
    assert_no_exception(page)
    expect(widget(page, "compare_ranking")).to_be_visible()
    shoot("compare_1280x720", height=H)  # the first screen a lecturer projects (docs/compare_1280x720.png)
    want = default_methods(*SHAPE, EPS, DELTA, TARGET)
    titles = [dpviz.registry.get(n).title for n in want]
    chips = widget(page, "compare_algorithms").locator("[data-tag]")
    expect(chips).to_have_count(len(want))
    assert sorted(chips.all_inner_texts()) == sorted(titles)
    # issue 43: the grid coreset (what Data's Check names here) and the hash-tree coreset are in
    assert {"grid_coreset", "tree_coreset"} <= set(want)
    assert set(named_by_check(*SHAPE, DELTA, TARGET)) <= set(want)
    main = page.get_by_test_id("stMain").inner_text()
    assert "never from the rows" in main  # the rule, in words


def test_the_ranking_is_the_librarys_rule_with_spreads_ties_and_notes(page: Page, app_url: str) -> None:
    if widget(page, "compare_ranking").count() == 0:
        open_app(page, f"{app_url}/compare")
    ranking = widget(page, "compare_ranking")
    expect(ranking).to_contain_text("Ranked by reach over the whole ε range")
    words = ranking.inner_text()
    assert "smallest row-level ε at which the method's median normalized loss is at most 0.1" in words
    assert "median (q10–q90)" in words
    rows = _table(page)
    header, body = rows[0], rows[1:]
    want = rank_methods(_stored_frame())
    assert header[:2] == ["rank", "method"] and [c for c in header if c.startswith("ε = ")] == [
        f"ε = {e:g}" for e in EPS]
    # the page's ranks, methods and cells are the library's on the same runs
    assert [r[0] for r in body] == list(want["rank"])
    assert [r[1] for r in body] == [m if r == "—" else m.split(" (")[0]  # short names, full on the chips
                                    for m, r in zip(want["method"], want["rank"], strict=True)]
    for col in (c for c in header if c.startswith("ε = ")):
        i = header.index(col)
        assert [r[i] for r in body] == list(want[col]), col
        # every cell that ran shows its median and its q10–q90 spread
        assert all(re.fullmatch(CELL, r[i]) or r[i] == "—" for r in body)
    # ties as ties: the tied methods share a rank marked "=", and the page names the group
    for group in want.attrs["tied"]:
        assert "Tied" in words and all(m in words for m in group)
    tied = [r for r in body if r[0].endswith("=")]
    assert len(tied) == sum(len(g) for g in want.attrs["tied"])
    # a median that rises with ε carries its note (with the draws' spread)
    for method, note in zip(want["method"], want["note"], strict=True):
        if note and method in words and not note.startswith("no privacy"):
            assert note.split(";")[0] in words, method
    assert_no_exception(page)
