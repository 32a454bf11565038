"""Issue 46 item 1: a session whose run must wait for the server says so in the browser, and when
its run starts, instead of slowing down with everyone else.

The server admits one computation at a time (``DPVIZ_MAX_RUNS=1``), and its first computation
holds that slot until the test releases it (the test hook ``DPVIZ_TEST_HOLD_FIRST_SLOT``, which
writes ``<file>.held`` once it holds): the first session's run is then busy for as long as the test
wants, and a second session opening the same lesson waits in line. The test waits on explicit
states only: the hook's file, the message in the second page, the drawn main panels.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import RERUN_TIMEOUT_MS, assert_no_exception, new_app_page, wait_for_app_idle, widget

pytestmark = pytest.mark.e2e

RELEASE = Path(tempfile.gettempdir()) / f"dpviz-e2e-queue-{os.getpid()}"
SERVER_ENV = {"DPVIZ_MAX_RUNS": "1", "DPVIZ_TEST_HOLD_FIRST_SLOT": str(RELEASE)}
LESSON = "/?src=generate&gen=fig6_blobs&n=3000&gk=4&k=4&t=60&seed=1"


def test_a_session_waiting_for_the_server_is_told_when_its_run_starts(page: Page, browser: Browser,
                                                                       app_url: str) -> None:
    held = Path(f"{RELEASE}.held")
    RELEASE.unlink(missing_ok=True)
    second = new_app_page(browser)
    try:
        page.goto(app_url + LESSON)
        deadline = time.monotonic() + RERUN_TIMEOUT_MS / 1000
        while not held.exists():  # the first session's computation holds the server's one slot
            assert time.monotonic() < deadline, "the first session never took the slot"
            page.wait_for_timeout(100)

        second.goto(app_url + LESSON)
        notice = second.get_by_text("Your run starts", exact=False)
        expect(notice).to_be_visible(timeout=RERUN_TIMEOUT_MS)
        expect(notice).to_contain_text("The server is busy: 1 run is computing")

        RELEASE.touch()  # the first computation ends: both sessions' runs go on, one at a time
        for p in (page, second):
            expect(widget(p, "main_panel")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
            wait_for_app_idle(p, after=0)
            assert_no_exception(p)
        expect(second.get_by_text("Your run starts", exact=False)).to_have_count(0)  # gone once run
    finally:
        RELEASE.touch()
        second.context.close()
        RELEASE.unlink(missing_ok=True)
        held.unlink(missing_ok=True)
