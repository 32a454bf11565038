"""What a browser test module pays for its own `streamlit run` server (issue 45, docs/testing.md).

    PYTHONPATH=. .venv/bin/python bench/e2e_server_cost.py

Starts one server as tests/e2e/conftest.py does (``DPVIZ_PRECOMPUTED=0``, a temporary ledger
directory), then opens pages one after another in fresh browser contexts (new sessions):
the default lesson twice, a small Compare, the default lesson again, a small Learn page. Prints the
server's CPU time (user + system, all threads, from ``psutil``) at health and for each open, and
the wall time of each open. The first open pays the app's imports and the lesson's caches; the
later ones are what a module costs on a warm, shared server. Numbers depend on the machine's
load; compare rows of one run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from st_e2e import launch_chromium, new_app_page, open_app, streamlit_server

OPENS = ("/", "/", "/compare?n=2000", "/", "/learn?n=3000&t=60&k=4&gk=4&seed=1")


def server_process(url: str) -> psutil.Process:
    """The `streamlit run` process serving ``url`` (found by its port argument)."""
    port = url.rsplit(":", 1)[1]
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "streamlit" in " ".join(cmd) and port in cmd:
            return proc
    raise RuntimeError(f"no streamlit process on port {port}")


def cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def main() -> None:
    t0 = time.perf_counter()
    env = {"DPVIZ_PRECOMPUTED": "0"}
    with tempfile.TemporaryDirectory() as ledgers, \
            streamlit_server("app/main.py", env={**env, "DPVIZ_LEDGER_DIR": ledgers}) as url:
        proc = server_process(url)
        print(f"{'step':40s} {'wall s':>7s} {'server CPU s':>13s}")
        print(f"{'start (until /_stcore/health)':40s} {time.perf_counter() - t0:7.1f} {cpu(proc):13.2f}")
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            for path in OPENS:
                page = new_app_page(browser)
                before, start = cpu(proc), time.perf_counter()
                open_app(page, url + path)
                print(f"{'open ' + path:40s} {time.perf_counter() - start:7.1f} {cpu(proc) - before:13.2f}")
                page.context.close()
            browser.close()


if __name__ == "__main__":
    main()
