"""The Release page in chromium (issue 10): confirm the declared bounds and the budget, make one
release with the secure sampler, see the session total, download it, and check it has no seed.

One `streamlit run app/main.py` for the module, one page.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect
from st_e2e import assert_no_exception, click_button, fill_number, open_app, rerun_after, widget

pytestmark = pytest.mark.e2e
#: This worker's server (tests/e2e/conftest.py): it releases only under "blobs e2e", an identity
#: no other browser module declares, so the shared ledger directory holds nothing else of it.
SHARED_SERVER = True


def _check(page: Page, key: str) -> None:
    box = widget(page, key).locator("label")
    rerun_after(page, box.click)


def _identity(page: Page, name: str) -> None:
    box = widget(page, "release_dataset_id").locator("input")
    box.fill(name)
    rerun_after(page, lambda: box.press("Enter"))


def test_release_and_download_without_seed(page: Page, app_url: str, shoot, tmp_path) -> None:
    url = f"{app_url}/release?src=generate&gen=fig6_blobs&n=3000&gk=4&k=4&seed=1&eps=1"  # Release's ε
    open_app(page, url)
    _identity(page, "blobs e2e")
    expect(widget(page, "release_preview")).to_contain_text("New dataset identity")
    expect(widget(page, "release_preview")).to_contain_text("after this attempt")
    expect(widget(page, "release_button").locator("button")).to_be_disabled()
    fill_number(page, "release_n", 3000)
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        _check(page, key)
    click_button(page, "release_button")
    expect(widget(page, "release_output")).to_be_visible(timeout=60_000)
    # The total now holds the release (its calibrated guarantee, within the target) ...
    expect(widget(page, "release_preview")).to_contain_text(re.compile(r"ε = 1, δ = \S+ now → ε = 2"))
    # ... and a second release needs the new total accepted again (the box cleared).
    expect(widget(page, "release_button").locator("button")).to_be_disabled()
    assert_no_exception(page)
    shoot("release_made")

    with page.expect_download() as info:
        widget(page, "release_download").locator("button").click()
    path = tmp_path / "release.json"
    info.value.save_as(path)
    text = path.read_text()
    assert "seed" not in text.lower()
    out = json.loads(text)
    assert out["kind"] == "dpviz release"
    assert out["privacy"]["row_level_eps"] <= 1.0 + 1e-9
    assert out["dataset"]["n_declared"] == 3000
    assert out["centers"] is None or len(out["centers"]) == 4

    # A reload (a new session) keeps the total: the ledger is keyed by the declared identity.
    open_app(page, url)
    _identity(page, "Blobs  E2E")
    expect(widget(page, "release_preview")).to_contain_text("Known dataset identity")
    expect(widget(page, "release_preview")).to_contain_text(re.compile(r"ε = 1, δ = \S+ now → ε = 2"))
    expect(widget(page, "release_history")).to_contain_text("release-page")
