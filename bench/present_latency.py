"""Present's slider move → both panels redrawn, in Debian's chromium (issue 43 item 4: ≤ 1 s).

    PYTHONPATH=. .venv/bin/python bench/present_latency.py [--url URL] [--moves 6] [--pause 0]

Starts the app as ``make run`` does (``python -m app.launch``) on a free loopback port (or uses
``--url``), opens Present on the default lesson (Fig. 6 blobs, n = 150,000, k = 8, t = 1,500; left ε
= 0.02, right ε = 10), waits for its first screen (both panels say who answered), then presses
ArrowLeft on the right slider ``--moves`` times (10 → 3 → 1 → 0.3 → 0.1 → 0.05 → 0.02), ``--pause``
seconds apart (a lecturer talking). Per move: from the key press to the page's next finished script
run, idle, with the right panel's sentence at the new ε and its chart drawn (Playwright's clock, so
a few tens of ms of driver overhead are included), and the server's CPU over that time. Prints the
table, median and max, and the load average (the machine is shared: CPU says what the app spent).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))

from app_latency import cpu_seconds, server_process  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from st_e2e import (  # noqa: E402
    launch_chromium,
    new_app_page,
    open_app,
    press_slider_key,
    slider_text,
    streamlit_server,
    widget,
)

SLOW_MS = 600_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="use a running app at this base URL instead of starting one")
    ap.add_argument("--moves", type=int, default=6)
    ap.add_argument("--pause", type=float, default=0.0, help="seconds between moves")
    args = ap.parse_args(argv)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    server = nullcontext(args.url) if args.url else streamlit_server(ROOT / "app" / "main.py")
    with server as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = new_app_page(browser, width=1280, height=720)
        page.set_default_timeout(SLOW_MS)
        proc = server_process(url)
        t0, c0 = time.perf_counter(), cpu_seconds(proc)
        open_app(page, url.rstrip("/") + "/present")
        for side in "ab":
            expect(widget(page, f"present_answer_{side}")).to_contain_text("Answered by", timeout=SLOW_MS)
        print(f"first screen: {time.perf_counter() - t0:.1f} s wall, server CPU "
              f"{cpu_seconds(proc) - c0:.1f} s (load average before: {load})", flush=True)
        rows = []
        for _ in range(args.moves):
            time.sleep(args.pause)
            before = slider_text(page, "present_b")
            c0, t0 = cpu_seconds(proc), time.perf_counter()
            press_slider_key(page, "present_b", "ArrowLeft")  # waits for the run and idle
            after = slider_text(page, "present_b")  # e.g. "3.0"; the sentence says "ε = 3"
            expect(widget(page, "present_answer_b")).to_contain_text(f"ε = {float(after):g}",
                                                                     timeout=SLOW_MS)
            expect(widget(page, "present_fig_b").locator(".js-plotly-plot")).to_be_visible()
            rows.append((before, after, time.perf_counter() - t0, cpu_seconds(proc) - c0))
            print(f"| {before} → {after} | {rows[-1][2]:.2f} s | {rows[-1][3]:.2f} s |", flush=True)
        browser.close()
    wall = [r[2] for r in rows]
    print(f"Present, right slider ArrowLeft × {len(rows)}: median {statistics.median(wall):.2f} s, "
          f"max {max(wall):.2f} s (server CPU median {statistics.median(r[3] for r in rows):.2f} s); "
          f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
