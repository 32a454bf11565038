"""The Release page's release as a job, in chromium: while it runs the page shows a progress line
of public words and the elapsed time in whole minutes (no stage name, no seconds: issue 34, G),
and a Cancel button; Cancel books the attempt at its full target, says so, and shows or offers
nothing of the run. A reload (a new session) sees only "a release of this identity is running"
(issue 34, E), then the booked attempt once the run ends.

The data are Fig. 6 blobs at n = 500,000 (FriendlyCore takes several seconds on it: 7.3 s on an
idle core, longer on the shared machine), so the run is certainly still going when the test acts.
One `streamlit run app/main.py` for the module, one page.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect
from st_e2e import assert_no_exception, click_button, fill_number, open_app, rerun_after, widget

pytestmark = pytest.mark.e2e
#: This worker's server (tests/e2e/conftest.py): it releases only under "progress e2e", "cancel
#: e2e" and "reload e2e", identities no other browser module declares, and every test waits for
#: its release to end, so no job of this module runs on into the next one.
SHARED_SERVER = True

N = 500_000
#: The only progress lines the page may show (no stage name; whole minutes only).
LINE = re.compile(r"^(Drawing the release|Cancelling at the next stage boundary…) · running for "
                  r"(under a minute|about 1 minute|about \d+ minutes)$")


def _url(app_url: str) -> str:
    return f"{app_url}/release?src=generate&gen=fig6_blobs&n={N}&gk=4&k=4&seed=1&eps=1"  # Release starts at ε


def _ready(page: Page, app_url: str, identity: str) -> None:
    open_app(page, _url(app_url))
    box = widget(page, "release_dataset_id").locator("input")
    box.fill(identity)
    rerun_after(page, lambda: box.press("Enter"))
    fill_number(page, "release_n", N)
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        rerun_after(page, widget(page, key).locator("label").click)
    expect(widget(page, "release_preview")).to_contain_text("ε = 0, δ = 0 now")


def _line(page: Page) -> str:
    return widget(page, "release_progress").get_by_test_id("stProgress").inner_text().strip()


def test_a_release_shows_public_progress_and_completes(page: Page, app_url: str, shoot) -> None:
    _ready(page, app_url, "progress e2e")
    click_button(page, "release_button")
    expect(widget(page, "release_progress")).to_be_visible(timeout=30_000)
    shoot("release_progress")
    seen = []
    while widget(page, "release_progress").count() and len(seen) < 40:
        try:
            seen.append(_line(page))
        except Exception:  # the bar went away between the check and the read: the run ended
            break
        page.wait_for_timeout(250)
    assert seen, "no progress line was read while the release ran"
    for line in seen:
        assert LINE.match(line), f"not a public progress line: {line!r}"
    expect(widget(page, "release_output")).to_be_visible(timeout=120_000)
    expect(page.get_by_text("Released. Total on this dataset identity")).to_be_visible()
    expect(widget(page, "release_history")).to_contain_text("release-page")
    assert_no_exception(page)


def test_cancel_books_the_target_and_shows_nothing(page: Page, app_url: str, shoot) -> None:
    _ready(page, app_url, "cancel e2e")
    click_button(page, "release_button")
    cancel = widget(page, "release_cancel").get_by_role("button", name="Cancel")
    expect(cancel).to_be_visible(timeout=30_000)
    cancel.click()
    message = page.get_by_text("Cancelled: the attempt was booked at ε = 1, δ = 1e-06, because the run "
                               "had started reading the data")
    # The click lands in one of two explicit states: the bar says it is cancelling, or the run
    # already reached its next stage boundary and the page says it was cancelled (CI run of stop
    # 48: the boundary came before the next half-second poll, so "Cancelling" was never drawn).
    # The "Cancelling" line itself is checked without a browser in tests/app/test_release_cancel.py.
    cancelling = widget(page, "release_progress").get_by_text("Cancelling at the next stage boundary")
    expect(cancelling.or_(message).first).to_be_visible(timeout=10_000)
    expect(message).to_be_visible(timeout=120_000)
    shoot("release_cancelled")
    # the ledger total rose by the target (it was 0) ...
    expect(widget(page, "release_preview")).to_contain_text(re.compile(r"ε = 1, δ = 1e-06 now → ε = 2"))
    expect(widget(page, "release_history")).to_contain_text("cancelled")
    # ... and nothing of the run is shown or offered for download
    expect(widget(page, "release_output")).to_have_count(0)
    expect(widget(page, "release_download")).to_have_count(0)
    expect(page.get_by_test_id("stDownloadButton")).to_have_count(0)
    expect(widget(page, "release_progress")).to_have_count(0)
    assert_no_exception(page)


def test_a_reload_during_a_release_sees_only_that_it_runs(page: Page, app_url: str) -> None:
    """A reload is a new session: it is not attached to the running release (no progress, no
    Cancel), sees one sentence that does not depend on the data, and once the run ends its page
    redraws with the one booked attempt."""
    _ready(page, app_url, "reload e2e")
    click_button(page, "release_button")
    expect(widget(page, "release_progress")).to_be_visible(timeout=30_000)
    open_app(page, _url(app_url))  # the reload: the identity is typed again
    box = widget(page, "release_dataset_id").locator("input")
    box.fill("reload e2e")
    rerun_after(page, lambda: box.press("Enter"))
    expect(widget(page, "release_locked")).to_contain_text("A release of this dataset identity is running",
                                                           timeout=10_000)
    expect(widget(page, "release_progress")).to_have_count(0)
    expect(widget(page, "release_cancel")).to_have_count(0)
    expect(widget(page, "release_button").locator("button")).to_be_disabled()
    # The notice does not follow the other run (issue 46: it told when that run ended, to the
    # second): this page looks again only when asked, until the run has ended.
    deadline = time.monotonic() + 120
    while widget(page, "release_locked").count():
        assert time.monotonic() < deadline, "the other session's release did not end in 120 s"
        page.wait_for_timeout(1000)  # a person's pace; the loop ends on the state, not the time
        click_button(page, "release_check_again")
    expect(widget(page, "release_locked")).to_have_count(0)  # the run ended
    history = widget(page, "release_history")
    expect(history).to_contain_text("(1;")  # one attempt booked, not two
    expect(history).to_contain_text("release-page")
    expect(widget(page, "release_output")).to_have_count(0)  # another session's result: not shown
    assert_no_exception(page)
