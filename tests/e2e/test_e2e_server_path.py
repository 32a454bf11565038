"""A table on the server by path in chromium (issue 17): the Data page opens a small Parquet file
inside DPVIZ_SERVER_DATA_DIR and makes one streamed release, downloaded as JSON.

One `streamlit run app/main.py` for the module (with the variable set), one page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    assert_no_exception,
    click_button,
    fill_number,
    open_app,
    rerun_after,
    streamlit_server,
    widget,
)

from dpviz.clustering.auto import choose_from
from dpviz.data import fig6_blobs
from dpviz.large.run import STREAMED

pytestmark = pytest.mark.e2e
N, K = 4000, 3


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with a server data directory holding tables/small.parquet."""
    base = tmp_path_factory.mktemp("server_data")
    (base / "tables").mkdir()
    X = fig6_blobs(N, k=K, rng=2).X
    pq.write_table(pa.table({"x": X[:, 0], "y": X[:, 1]}), base / "tables" / "small.parquet",
                   row_group_size=1000)
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    with streamlit_server("app/main.py", log=log, env={"DPVIZ_SERVER_DATA_DIR": str(base)}) as url:
        yield url


def test_open_a_server_parquet_by_path_and_release(page: Page, app_url: str, shoot, tmp_path) -> None:
    open_app(page, f"{app_url}/data")
    expect(widget(page, "srv_panel")).to_be_visible()
    box = widget(page, "srv_path").locator("input")
    box.fill("../escape.parquet")
    rerun_after(page, lambda: box.press("Enter"))
    expect(widget(page, "srv_error")).to_contain_text("outside the server data directory")

    box.fill("tables/small.parquet")
    rerun_after(page, lambda: box.press("Enter"))
    expect(widget(page, "srv_panel")).to_contain_text("1 parquet file(s) · d = 2")
    # The default algorithm, auto: out of core it chooses among the streamed algorithms.
    fill_number(page, "srv_k", K)
    fill_number(page, "srv_n", N)
    fill_number(page, "srv_radius", 1)
    expect(widget(page, "srv_run").locator("button")).to_be_disabled()
    rerun_after(page, widget(page, "srv_confirm").locator("label").click)
    click_button(page, "srv_run")
    expect(widget(page, "srv_output")).to_be_visible(timeout=60_000)
    expect(widget(page, "srv_output")).to_contain_text(
        "-differentially private for adding or removing one row")
    assert_no_exception(page)
    shoot("server_path_release")

    with page.expect_download() as info:
        widget(page, "srv_download").locator("button").click()
    path = tmp_path / "release.json"
    info.value.save_as(path)
    doc = json.loads(path.read_text())
    assert doc["algorithm"]["name"] == "auto" and doc["parameters"]["mode"] == "stream"
    picked = choose_from(STREAMED, N, 2, K, 1.0, 1e-8).algorithm
    assert doc["parameters"]["run"]["auto_choice"] == picked and picked in STREAMED
    assert doc["public_inputs"] == {"k": K, "radius": 1.0, "n_declared": N, "d": 2, "columns": ["x", "y"]}
    assert len(doc["centers"]) == K and doc["statement"]["epsilon"] <= 1.0 * (1 + 1e-9)
