"""The Data page in chromium: generate and regenerate; upload a CSV, declare Λ, then a malformed
CSV (a clear message, the previous upload kept) and the app still runs FriendlyCore on the data.

One `streamlit run app/main.py` for the module, one page reused by the tests.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    ROOT,
    assert_no_exception,
    choose_radio,
    click_button,
    fill_number,
    go_to_page,
    number_input,
    open_app,
    plotly_charts,
    plotly_traces,
    query_params,
    upload_file,
    widget,
)

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

GOOD_CSV = ROOT / "assets" / "example_blobs.csv"  # 300 rows: x, y, z numeric, group text
BAD_CSV = ROOT / "assets" / "malformed.csv"  # row 4 has 5 fields under a 3-field header


def preview(page: Page) -> list[tuple[list, list]]:
    return [(t["x"], t["y"]) for t in plotly_traces(plotly_charts(widget(page, "data_preview")))]


def test_generate_apply_and_regenerate(page: Page, app_url: str, shoot) -> None:
    open_app(page, f"{app_url}/data?src=generate&gen=fig6_blobs&n=2000&gk=8&dseed=0")
    expect(widget(page, "data_facts")).to_contain_text("2,000")
    first = preview(page)

    fill_number(page, "gen_n", 3000, in_form=True)
    click_button(page, "gen_apply")
    assert query_params(page)["n"] == "3000"
    expect(widget(page, "data_facts")).to_contain_text("3,000")
    resized = preview(page)
    assert resized != first

    click_button(page, "regenerate_button")
    assert query_params(page)["dseed"] == "1"
    expect(number_input(page, "gen_seed")).to_have_value("1")
    assert preview(page) != resized, "Regenerate did not redraw the preview"
    assert_no_exception(page)
    shoot("data_generate")


def test_upload_then_malformed_csv_keeps_the_app_usable(page: Page, app_url: str,
                                                       shoot) -> None:
    open_app(page, f"{app_url}/data?src=generate&n=2000")
    choose_radio(page, "source_radio", "Upload a CSV")

    upload_file(page, "csv_upload", GOOD_CSV)
    expect(widget(page, "csv_messages")).to_contain_text("Read 300 rows × 3 columns")
    expect(widget(page, "csv_use").locator("button")).to_be_disabled()  # Λ not declared yet
    fill_number(page, "csv_radius", 2)
    click_button(page, "csv_use")
    expect(widget(page, "data_facts")).to_contain_text("300")
    shoot("data_upload")

    upload_file(page, "csv_upload", BAD_CSV)
    error = widget(page, "csv_error")
    expect(error).to_contain_text("malformed.csv")
    expect(error).to_contain_text("Data row 3 has 5 fields but the header has 3")
    expect(error).to_contain_text("Still using the previous upload")
    assert_no_exception(page)
    shoot("data_malformed")

    # still usable: Explore runs FriendlyCore on the uploaded rows (k = 3, t = 20 fit n = 300)
    go_to_page(page, "Explore")
    expect(widget(page, "dataset_summary")).to_contain_text("300")
    fill_number(page, "ex_k", 3, in_form=True)
    fill_number(page, "ex_t", 20, in_form=True)
    click_button(page, "ex_apply")
    expect(widget(page, "storyboard_live")).to_be_visible()
    expect(widget(page, "metrics_tiles")).to_contain_text("/ 20")
    assert query_params(page)["src"] == "upload"
    assert_no_exception(page)
    shoot("explore_on_upload")
