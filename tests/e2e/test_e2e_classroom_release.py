"""Issue 43: on a classroom server (``DPVIZ_CLASSROOM=1``) ``/release`` said "Page not found";
it says the Release page is turned off in classroom mode, and the navigation still has no
Release entry."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_e2e import assert_no_exception, open_app, widget

pytestmark = pytest.mark.e2e

SERVER_ENV = {"DPVIZ_CLASSROOM": "1"}


def test_release_on_a_classroom_server_says_it_is_off(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/release")
    off = widget(page, "classroom_release_off")
    expect(off).to_contain_text("The Release page is turned off in classroom mode.")
    expect(page.get_by_text("Page not found")).to_have_count(0)
    expect(widget(page, "classroom_banner")).to_contain_text("Classroom mode")
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link", name="Explore", exact=True)).to_be_visible()
    expect(nav.get_by_role("link", name="Release", exact=True)).to_have_count(0)
    expect(nav.get_by_text("Release")).to_have_count(0)
    assert_no_exception(page)
