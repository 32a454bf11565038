"""Fixtures for the browser tests: Debian's chromium (one per session), a `streamlit run` server
per test module (the app in the module's ``APP_SCRIPT``, default ``app/main.py``) and one page
per module, reused by its tests. Helpers live in st_e2e.py (shared with bench/app_latency.py).

A module that sets ``SHARED_SERVER = True`` opts in to one server per pytest(-xdist) worker, shared
with the other opted-in modules of the same ``APP_SCRIPT`` and ``PRECOMPUTED`` (issue 45: a fresh
`streamlit run` cost each module ~0.7 s of server CPU to start and ~2 s more for the first page's
imports, and the first open of the default 150,000-row lesson ~10 s against ~4 s on a warm
server). Its page (browser context, so its sessions) stays its own; what it then shares with the
other modules is server-wide: the release ledger directory, the job registry (sweeps on public
data, keyed by what they compute), the release locks (keyed by dataset identity), the caches and
the speculation worker. So opt in only a module that releases nothing (or only under dataset
identities no other module declares, and waits for each of its releases to end: Release's,
Release cancel's and the README walk's say which), that does not need a cold server (a "fresh
load" measured from the first byte) and that does not test prefetching: a shared server runs with
``DPVIZ_PREFETCH=0``. (The speculation worker is one SCHED_IDLE thread that keeps a closed
session's queued runs; on a shared server they ran on into the next module, and on a loaded
machine a descheduled SCHED_IDLE thread holding the GIL stalls the server: a first page load of
the next module then timed out. Prefetching stays covered by tests/app/test_cache.py and by the
browser modules that keep their own server, Explore's and the journeys'.) A module that does not
opt in gets its own server, as before.

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
    healthy,
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
    """Base URL of a `streamlit run` of the module's ``APP_SCRIPT`` on a free port: a fresh one
    per module, or this worker's shared one when the module sets ``SHARED_SERVER = True``."""
    script = ROOT / getattr(request.module, "APP_SCRIPT", DEFAULT_APP)
    if not script.is_file():
        pytest.fail(f"app script {script} does not exist", pytrace=False)
    precomputed = bool(getattr(request.module, "PRECOMPUTED", False))
    # A module's own server environment (``SERVER_ENV``, e.g. a test-only pause) needs its own server.
    server_env = getattr(request.module, "SERVER_ENV", None)
    if getattr(request.module, "SHARED_SERVER", False) and not server_env:
        servers: SharedServers = request.getfixturevalue("shared_servers")
        yield servers.url(script, precomputed=precomputed)
        return
    with _server(script, tmp_path_factory, precomputed=precomputed, server_env=server_env) as url:
        yield url


@contextlib.contextmanager
def _server(script: Path, tmp_path_factory: pytest.TempPathFactory, *,
            precomputed: bool, shared: bool = False,
            server_env: dict[str, str] | None = None) -> Iterator[str]:
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    # The persistent release ledger of this server (never the user's ~/.dpviz).
    ledgers = tmp_path_factory.mktemp("ledgers")
    env = {"DPVIZ_LEDGER_DIR": str(ledgers), "DPVIZ_PRECOMPUTED": "0", **(server_env or {})}
    if shared:  # no speculation left running into the next module (see the module docstring)
        env["DPVIZ_PREFETCH"] = "0"
    if precomputed:
        env["DPVIZ_PRECOMPUTED"] = str(pinned_precomputed(tmp_path_factory.mktemp("precomputed")))
    with streamlit_server(script, log=log, env=env) as url:
        yield url


class SharedServers:
    """The servers of one pytest(-xdist) worker that opted-in modules share, started on first
    use, one per (app script, precomputed sweeps or not), all stopped when the worker ends."""

    def __init__(self, stack: contextlib.ExitStack, tmp_path_factory: pytest.TempPathFactory):
        self._stack = stack
        self._tmp = tmp_path_factory
        self._urls: dict[tuple[Path, bool], str] = {}

    def url(self, script: Path, *, precomputed: bool) -> str:
        key = (script, precomputed)
        if key not in self._urls:
            self._urls[key] = self._stack.enter_context(
                _server(script, self._tmp, precomputed=precomputed, shared=True))
        url = self._urls[key]
        if not healthy(url):  # a server an earlier module broke must not fail this one silently
            pytest.fail(f"the shared server {url} of {script.name} no longer answers "
                        "/_stcore/health (an earlier module on this worker broke it)", pytrace=False)
        return url


@pytest.fixture(scope="session")
def shared_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedServers]:
    """This worker's shared servers (``SHARED_SERVER = True`` modules)."""
    with contextlib.ExitStack() as stack:
        yield SharedServers(stack, tmp_path_factory)


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
