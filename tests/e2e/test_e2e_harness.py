"""The e2e helpers themselves, against the tiny app tests/e2e/apps/harness.py: if these fail,
the real-app flows cannot be trusted either."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    CHROMIUM_MISSING,
    assert_no_exception,
    chromium_path,
    move_slider,
    open_app,
    plotly_charts,
    plotly_traces,
    query_params,
    runs,
    select_option,
    set_slider,
    slider_text,
    upload_file,
    widget,
)

pytestmark = pytest.mark.e2e
APP_SCRIPT = "tests/e2e/apps/harness.py"
# The repository's .streamlit/config.toml starts every server at a 0 MB upload limit, which only
# dpviz's own script raises (app/components/classroom.upload_limit, issue 46); the toy app is not
# dpviz, so its server is given the limit the way an operator would, by Streamlit's environment.
SERVER_ENV = {"STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "50"}
RHOS = ["0.01", "0.03", "0.1", "0.3", "1.0", "3.0"]


def figure_data(page: Page, key: str) -> list[dict]:
    """The traces of the plotly figure with ``key`` as drawn in the browser."""
    return plotly_traces(plotly_charts(widget(page, key)))


def test_query_string_sets_widgets(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/?rho=0.03&k=7&oracle=pca")
    assert slider_text(page, "rho") == "0.03"
    assert slider_text(page, "k") == "7"
    expect(widget(page, "oracle").locator("input")).to_have_value("pca")
    assert query_params(page) == {"rho": "0.03", "k": "7", "oracle": "pca"}
    assert_no_exception(page)


def test_each_slider_step_is_one_rerun_and_redraws(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/?rho=0.1&k=5")
    before = figure_data(page, "fig")
    start = runs(page)
    move_slider(page, "rho", 2)
    assert runs(page) == start + 2
    assert slider_text(page, "rho") == "1.0"
    after = figure_data(page, "fig")
    # noise / sqrt(2 rho): same draw, scaled by sqrt(0.1 / 1.0)
    assert after[0]["x"] == pytest.approx([x * (0.1 / 1.0) ** 0.5 for x in before[0]["x"]])
    assert query_params(page)["rho"] == "1.0"


def test_set_slider_and_select(page: Page, app_url: str) -> None:
    open_app(page, f"{app_url}/")
    set_slider(page, "rho", "3.0", options=RHOS)
    set_slider(page, "k", "3")
    select_option(page, "oracle", "pca")
    assert query_params(page) == {"rho": "3.0", "k": "3", "oracle": "pca"}
    assert len(figure_data(page, "fig")[0]["x"]) == 3


def test_upload_good_then_bad_csv(page: Page, app_url: str, tmp_path) -> None:
    open_app(page, f"{app_url}/")
    good = tmp_path / "good.csv"
    good.write_text("a,b\n1,2\n3,4\n5,6\n")
    bad = tmp_path / "bad.csv"
    bad.write_text('a,b\n"x,1\n')
    upload_file(page, "csv", good)
    expect(page.get_by_test_id("stAlert")).to_contain_text("Loaded 3 rows")
    upload_file(page, "csv", bad)
    expect(page.get_by_test_id("stAlert")).to_contain_text("Could not read this CSV")
    # still usable: a slider move reruns the script and redraws
    move_slider(page, "k", 1)
    assert len(figure_data(page, "fig")[0]["x"]) == 6
    assert_no_exception(page)
    json.dumps(query_params(page))


def test_missing_chromium_is_reported_with_the_fix(monkeypatch, tmp_path) -> None:
    """Without chromium the browser fixture fails (never skips) with how to install it."""
    monkeypatch.setenv("DPVIZ_CHROMIUM", str(tmp_path / "no-chromium"))
    assert chromium_path() is None
    assert "make chromium" in CHROMIUM_MISSING and "apt-get install" in CHROMIUM_MISSING
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("DPVIZ_CHROMIUM", str(fake))
    assert chromium_path() == str(fake)
