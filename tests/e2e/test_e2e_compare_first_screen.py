"""Issues 36 and 43, Compare at a projector's 1280×720 from a fresh load (chromium).

The chosen methods' results (the ranking, one row per method) are inside the first screen; from
the page's first element on, a message says what is happening (no title over nothing for more than
a moment: every state that stays on screen 0.5 s or more carries the message or the results); the
run state is one message (done here: the default comparison is precomputed); the captions call
the curves a simulation, never a release; every chip of the algorithm picker shows its whole name.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import (
    RERUN_TIMEOUT_MS,
    assert_no_exception,
    new_app_page,
    open_app,
    runs,
    wait_for_app_idle,
    widget,
)

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # this worker's server (tests/e2e/conftest.py): releases nothing, needs no cold server
PRECOMPUTED = True  # the default comparison opens drawn (tests/e2e/conftest.py pins the sweeps)

W, H = 1280, 720
#: Issue 43 item 4 asks ≤ 5 s on a quiet machine; the suite runs beside 6 other sessions on 2
#: cores, so the browser test allows this much for the load (bench/app_latency.py measures the 5 s).
LOAD_ALLOWANCE_S = 25.0
def _default_titles() -> tuple[str, ...]:
    """The default lesson's default set (dpviz.compare_set's rule for 150,000 × 2, k = 8), as chips."""
    import dpviz
    from dpviz.compare_set import default_methods

    names = default_methods(150_000, 2, 8, (0.5, 1.36, 3.68, 10.0), 1e-6, 3.0)
    return tuple(dpviz.registry.get(n).title for n in names)


#: The default set's chips (their full titles).
DEFAULT_METHODS = _default_titles()

#: The main area's text, read every 50 ms from the navigation on, until the ranking is there:
#: [ms since the read began, text] each time it changes, and the end time.
_FIRST_TEXTS_JS = """
async (limitMs) => {
  const seen = [];
  const t0 = performance.now();
  while (performance.now() - t0 < limitMs) {
    const main = document.querySelector("[data-testid='stMain']");
    const text = main ? main.innerText.trim() : '';
    if (text && (seen.length === 0 || seen[seen.length - 1][1] !== text)) {
      seen.push([performance.now() - t0, text]);
    }
    if (text.includes('Ranked by reach')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {seen, end: performance.now() - t0};
}
"""
#: What a state on screen must carry: the loading message, the run state or the results.
MESSAGES = ("Loading the dataset and the comparison", "Ranked by reach", "Running the comparison",
            "Press Run comparison")


@pytest.fixture(scope="module")
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    page = new_app_page(browser, width=W, height=H)
    yield page
    page.context.close()


def test_a_fresh_compare_shows_a_message_first_and_the_ranking_in_the_first_screen(
        page: Page, app_url: str) -> None:
    before = runs(page)
    page.goto(f"{app_url}/compare")
    t0 = time.monotonic()
    got = page.evaluate(_FIRST_TEXTS_JS, RERUN_TIMEOUT_MS)
    took = time.monotonic() - t0
    seen = got["seen"]
    assert seen, "nothing was drawn"
    ends = [t for t, _ in seen[1:]] + [got["end"]]
    for (start, text), end in zip(seen, ends, strict=True):
        if end - start >= 500:
            assert any(m in text for m in MESSAGES), f"{(end - start) / 1000:.1f} s of: {text[:200]}"
    assert "Ranked by reach" in seen[-1][1], f"no ranking after {took:.1f} s: {seen[-1][1][:300]}"
    assert took <= 5.0 + LOAD_ALLOWANCE_S, f"first screen after {took:.1f} s (issue 43 item 4: ≤ 5 s)"
    # The rest is about the page the run leaves: wait for that run to end (the ranking's caption
    # comes before its table; on a loaded machine the table was not drawn 5 s later).
    wait_for_app_idle(page, after=before)
    expect(widget(page, "compare_ranking")).to_be_visible()
    assert_no_exception(page)
    # the state: done, one message, no "Press Run" and no progress bar
    state = widget(page, "compare_state")
    expect(state).to_contain_text(f"Done: {len(DEFAULT_METHODS)} algorithm(s)")
    expect(page.get_by_text("Press Run comparison")).to_have_count(0)
    expect(page.get_by_test_id("stProgress")).to_have_count(0)
    # the ranking, one row per chosen method (a static table: the header and a row per method),
    # inside the first 1280×720 screen, not scrolled (the names: tests/app/test_compare_page.py)
    grid = widget(page, "compare_ranking").get_by_test_id("stTable")
    expect(grid.locator("tr")).to_have_count(len(DEFAULT_METHODS) + 1)  # the header and a row each
    box = grid.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= H, box
    # honest captions: a simulation, not "a private release (simulation)"
    main = page.get_by_test_id("stMain").inner_text()
    assert "a simulation: seeded runs on the same rows" in main and "private release" not in main


def test_every_algorithm_chip_shows_its_whole_name(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/compare")
    picker = widget(page, "compare_algorithms")
    picker.scroll_into_view_if_needed()
    chips = picker.locator("[data-tag]")
    expect(chips).to_have_count(len(DEFAULT_METHODS))
    frame = picker.get_by_test_id("stMultiSelectTagsContainer").bounding_box()
    for i in range(len(DEFAULT_METHODS)):
        chip = chips.nth(i)
        text = chip.locator("span[title]")
        cut = text.evaluate("(el) => el.scrollWidth > el.clientWidth + 1")
        box = chip.bounding_box()
        assert not cut and box["x"] + box["width"] <= frame["x"] + frame["width"], chip.inner_text()
    assert sorted(chips.all_inner_texts()) == sorted(DEFAULT_METHODS)
