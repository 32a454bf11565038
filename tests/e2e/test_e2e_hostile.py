"""Hostile upload in chromium (issue 19): markup in a CSV's header and file name never reaches
the page as markup. Both carry images pointing at a local beacon server (an http.server thread
on 127.0.0.1); after upload, declaring Λ, using the data, the preview and Explore, the beacon
must never have been hit. A control image added by the test itself proves the beacon is
reachable. A second browser context opened on the same link sees none of it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import (
    assert_no_exception,
    choose_radio,
    click_button,
    fill_number,
    go_to_page,
    new_app_page,
    open_app,
    query_params,
    rerun_after,
    widget,
)

pytestmark = pytest.mark.e2e
SHARED_SERVER = True  # the worker's shared server (tests/e2e/conftest.py): no release, no prefetch test

_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                     "1f15c4890000000d49444154789c6360000002000100e5270de40000000049454e44ae426082")


class Beacon:
    """Records every path requested from it."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(_PNG)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def hostile(self, tag: str) -> str:
        return (f'![{tag}]({self.url}/md-{tag}.png) <img src="{self.url}/html-{tag}.png"> '
                f"**{tag}** :red[{tag}]")


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    b = Beacon()
    b.thread.start()
    yield b
    b.server.shutdown()


def _csv(header: list[str]) -> bytes:
    quoted = ",".join('"' + h.replace('"', '""') + '"' for h in header)
    rows = "\n".join(f"{(i % 3) * 4 + (i % 7) * 0.1:g},{(i % 3) * -3 + (i % 5) * 0.1:g}"
                     for i in range(300))
    return (quoted + "\n" + rows + "\n").encode()


def test_markup_in_header_and_file_name_never_fetches(page: Page, app_url: str, beacon: Beacon,
                                                      browser: Browser) -> None:
    open_app(page, f"{app_url}/data?src=generate&n=2000")
    choose_radio(page, "source_radio", "Upload a CSV")
    name = beacon.hostile("file") + ".csv"
    payload = {"name": name, "mimeType": "text/csv",
               "buffer": _csv([beacon.hostile("colA"), beacon.hostile("colB")])}
    uploader = widget(page, "csv_upload").get_by_test_id("stFileUploaderDropzoneInput")
    rerun_after(page, lambda: uploader.set_input_files(files=[payload]))
    page.wait_for_timeout(1500)  # give any image the page renders time to be requested
    assert beacon.hits == [], f"the upload made the page fetch {beacon.hits}"
    messages = widget(page, "csv_messages")
    expect(messages).to_contain_text("Read 300 rows × 2 columns")
    expect(messages).to_contain_text("md-file.png")  # the name is on the page, as text
    fill_number(page, "csv_radius", 20)
    click_button(page, "csv_use")
    expect(widget(page, "data_facts")).to_contain_text("html-file.png")
    # Open the column picker's list and the import details, so every place the names go renders.
    widget(page, "csv_columns").click()
    page.keyboard.press("Escape")
    go_to_page(page, "Explore")
    expect(widget(page, "dataset_summary")).to_contain_text("md-file.png")
    assert_no_exception(page)
    page.wait_for_timeout(1500)  # give any stray image request time to arrive
    assert page.locator("img[src*='127.0.0.1']").count() == 0
    assert beacon.hits == [], f"the page fetched {beacon.hits}"

    # Control: the browser can reach the beacon, so the empty list above means something.
    page.evaluate(f"new Image().src = '{beacon.url}/control.png'")
    deadline = time.monotonic() + 10
    while "/control.png" not in beacon.hits and time.monotonic() < deadline:
        time.sleep(0.1)
    assert beacon.hits == ["/control.png"]

    # Isolation: a second browser context on the very link this page would share.
    other = new_app_page(browser)
    try:
        query = "&".join(f"{k}={v}" for k, v in query_params(page).items())
        open_app(other, f"{app_url}/data?{query}")
        body = other.locator("body")
        expect(body).to_contain_text("No uploaded dataset in this session yet")
        expect(body).not_to_contain_text("md-file.png")
        expect(body).not_to_contain_text("colA")
        assert_no_exception(other)
    finally:
        other.context.close()
