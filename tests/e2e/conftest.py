"""Fixtures for the browser tests: Debian's chromium (one per session), a `streamlit run` server
per test module (the app in the module's ``APP_SCRIPT``, default ``app/main.py``) and one page
per module, reused by its tests. Helpers live in st_e2e.py (shared with bench/app_latency.py).

The server never reads the committed precomputed sweeps as they are (whether that file is current
must not decide a test): it runs with ``DPVIZ_PRECOMPUTED=0``, or, in a module that sets
``PRECOMPUTED = True`` (a shared link that opens drawn), with a copy of the file stamped with the
running code's hash (its numbers are checked by tests/app/test_budget_shared.py).

Run: ``PYTHONPATH=. .venv/bin/python -m pytest tests/e2e -q``. If chromium is missing the tests
fail (not skip) and say how to install it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from st_e2e import (
    CHROMIUM_MISSING,
    ROOT,
    capture,
    chromium_path,
    launch_chromium,
    new_app_page,
    streamlit_server,
)

SCREENSHOTS = ROOT / "tests" / "e2e" / "screenshots"
DEFAULT_APP = "app/main.py"


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if chromium_path() is None:
        pytest.fail(CHROMIUM_MISSING, pytrace=False)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def app_url(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a fresh `streamlit run` of the module's ``APP_SCRIPT`` on a free port."""
    script = ROOT / getattr(request.module, "APP_SCRIPT", DEFAULT_APP)
    if not script.is_file():
        pytest.fail(f"app script {script} does not exist", pytrace=False)
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    # The persistent release ledger of this server (never the user's ~/.dpviz).
    ledgers = tmp_path_factory.mktemp("ledgers")
    env = {"DPVIZ_LEDGER_DIR": str(ledgers), "DPVIZ_PRECOMPUTED": "0",
           **getattr(request.module, "SERVER_ENV", {})}
    if getattr(request.module, "PRECOMPUTED", False):
        env["DPVIZ_PRECOMPUTED"] = str(pinned_precomputed(tmp_path_factory.mktemp("precomputed")))
    with streamlit_server(script, log=log, env=env) as url:
        yield url


def pinned_precomputed(directory: Path) -> Path:
    """The committed precomputed sweeps, stamped with the running code's hash, in ``directory``."""
    from app.components import sweep

    doc = json.loads(sweep.PRECOMPUTED.read_text())
    doc["code_hash"] = sweep.code_hash()
    path = directory / "budget_sweeps.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    """One page (fresh browser context) per module; tests navigate it with ``open_app``."""
    page = new_app_page(browser)
    yield page
    page.context.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def shoot(page: Page, screenshot_dir: Path):
    """``shoot(name, height=None)`` saves a screenshot of the whole app (or its top ``height``
    pixels) to tests/e2e/screenshots/<name>.png."""

    def save(name: str, *, height: int | None = None) -> Path:
        return capture(page, screenshot_dir / f"{name}.png", height=height)

    return save


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """On a failing e2e test, keep a screenshot of the page for debugging."""
    outcome = yield
    report = outcome.get_result()
    page = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and page is not None and not page.is_closed():
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):  # best effort while reporting another failure
            capture(page, SCREENSHOTS / f"FAILED-{item.name}.png")
