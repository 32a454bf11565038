"""ρ (or δ) slider → redraw latency of the Explore page, measured in Debian's chromium.

    PYTHONPATH=. .venv/bin/python bench/app_latency.py [--n 100000] [--slider eps|delta]
        [--moves 10] [--url URL] [--no-prefetch] [--plotly-chart] [--vector] [--net]
        [--json PATH] [--browser-metrics]
    PYTHONPATH=. .venv/bin/python bench/app_latency.py --compare [OPENS]   # Compare's default view

Starts the app as ``make run`` does (``python -m app.launch``) on a free loopback port (or uses
``--url``), opens Explore on the Fig. 6 blobs at n = 1e5 through the query string (ρ starts at 3.16;
with ``--slider delta``, ρ = 1 and δ starts at 10⁻³), waits for the tuple stage, makes one warm-up
move, then presses ArrowLeft on the slider ``--moves`` times. Each move lands on a value not shown
before. The app has usually prefetched it (the runs one step away on either slider are started after
each move, docs/app.md); ``--no-prefetch`` starts the app with ``DPVIZ_PREFETCH=0`` so that every
move computes its private run, as a jump of several steps does. ``--plotly-chart`` starts it with
static serving off, so the storyboard falls back to ``st.plotly_chart``, which the browser rebuilds
on every move (the design before the live chart of app/components/live_chart.py, kept for
comparison).

Per move, all times in the page's own clock (``performance.now()``), from the ``keydown``:

- sent: the page sends the new slider value to the server (the frontend's debounce);
- server (with ``--net``): from that frame leaving to the ``script_finished`` frame arriving,
  as the browser's network layer reports them to Playwright. Off by default: Playwright then
  ships every websocket frame to this process, CPU taken from the page being timed;
- finished: the page's JavaScript gets that ``script_finished`` message (later than its network
  arrival when the main thread is busy rendering the messages sent before it);
- redrawn: the last DOM change inside any plotly chart of the page (the figures are drawn);
- total: the later of the two, i.e. input → the page shows the new release and is idle;
- cpu: the Streamlit server's CPU time (user + system, all its threads: the script and the
  prefetch worker) from the key press to the end of the wait, which includes the 400 ms quiet
  period. On a machine loaded by other sessions this, not the wall time, says what the app
  itself spends; the first load's line gives the server's CPU for the first screen too.

The wait for a move to end runs in the page (timers only; no requestAnimationFrame polling).
Prints a table, median / p90 / max and a CPU probe (this VM's speed drifts by up to ~1.8× within
minutes: compare tables measured at similar probe times). ``--json PATH`` also writes the raw
numbers. The issue's target: total ≤ 300 ms at n = 1e5.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import psutil  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402
from st_e2e import (  # noqa: E402
    launch_chromium,
    new_app_page,
    run_log,
    slider_input,
    slider_text,
    streamlit_server,
    widget,
)

QUERY = "/?src=generate&gen=fig6_blobs&n={n}&k=8&t={t}&{budget}&delta={delta}&seed=0"
#: --slider: (widget key, start value in the URL, fresh steps below the start). The row-level ε
#: is Explore's main control (issue 26): a move plans FriendlyCore's ρ (memoized per ε; the
#: neighbours' plans are computed on the worker with their runs); δ moves at an old link's exact ρ.
SLIDERS = {"eps": ("eps_slider", {"budget": "eps=30", "delta": "1e-06"}, 14),
           "delta": ("delta_select", {"budget": "rho=1.0", "delta": "0.001"}, 9)}

# The keydown time, and the time of every DOM change inside a plotly chart after it (the app
# replaces some chart elements on a rerun and updates others in place: both show up here).
_INSTRUMENT_JS = """
() => {
  if (!window.__benchArmed) {
    window.__benchArmed = true;
    document.addEventListener('keydown', () => {
      if (window.__benchKey === null) window.__benchKey = performance.now();
    }, true);
    const inChart = (node) => {
      const el = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
      return el !== null && (el.closest('.js-plotly-plot') !== null
                             || el.querySelector('.js-plotly-plot') !== null);
    };
    new MutationObserver((mutations) => {
      if (window.__benchKey === null) return;
      const now = performance.now();
      if (mutations.some((m) => inChart(m.target)
                         || Array.from(m.addedNodes).some(inChart))) {
        window.__benchDraws.push(now);
      }
    }).observe(document.body, {subtree: true, childList: true, attributes: true,
                               characterData: true});
  }
  window.__benchKey = null;
  window.__benchDraws = [];
  return document.querySelectorAll('.js-plotly-plot').length;
}
"""

_TIMES_JS = """
() => ({key: window.__benchKey, draws: window.__benchDraws.slice(),
        finished: window.__dpvizFinished.slice(), sent: window.__dpvizSent.slice()})
"""


_SIGNATURE_JS = """
() => {
  const gd = document.querySelector('.st-key-storyboard_live .js-plotly-plot');
  return gd && gd.data ? JSON.stringify(gd.data.map((t) => [t.x, t.y])) : null;
}
"""

# Resolves once the move is over: its script_finished has reached the page, the live figure
# differs from ``before``, and no chart has changed for ``quietMs``. Event-driven (timers
# only, no requestAnimationFrame polling), so waiting adds no work to the page being timed.
_DONE_JS = """
([before, quietMs, timeoutMs]) => new Promise((resolve, reject) => {
  const t0 = performance.now();
  const signature = """ + _SIGNATURE_JS.strip() + """;
  const check = () => {
    const now = performance.now(), key = window.__benchKey;
    const last = Math.max(key || 0, ...window.__benchDraws);
    const finished = key !== null && window.__dpvizFinished.some((f) => f > key);
    if (finished && now - last >= quietMs && signature() !== before) return resolve(true);
    if (now - t0 > timeoutMs) return reject(new Error('the move did not finish'));
    setTimeout(check, Math.max(25, quietMs - (now - last)));
  };
  setTimeout(check, quietMs);
})
"""


def server_process(url: str) -> psutil.Process | None:
    """The Streamlit server listening on ``url``'s port (one this script started, or ``--url``'s
    if it runs as this user): its CPU time is read per move, because on a machine loaded by other
    sessions wall time says little about the app's own work."""
    port = url.rstrip("/").rsplit(":", 1)[-1]
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "streamlit" in " ".join(cmd) and port in cmd:
            return proc
    return None


def cpu_seconds(proc: psutil.Process | None) -> float:
    """User + system CPU seconds of ``proc`` (all its threads: the script threads and the
    prefetch worker); nan without a process."""
    if proc is None:
        return math.nan
    t = proc.cpu_times()
    return t.user + t.system


def measure_move(page: Page, slider: str = "eps_slider", *, net: bool = False, presses: int = 1,
                 server: psutil.Process | None = None) -> dict:
    """Press ArrowLeft ``presses`` times at once on ``slider`` (one move of that many steps: the
    frontend sends the value once, after its debounce); return the move's timings (ms).

    The page times everything itself (``performance.now()``); Python only presses the key and
    then waits on one promise. With ``net``, Playwright's record of the websocket frames gives
    the network-level server time too (that record costs CPU in the driver on every frame).
    """
    before_value = slider_text(page, slider)
    before = page.evaluate(_SIGNATURE_JS)
    thumb = slider_input(page, slider)
    thumb.focus()
    charts = page.evaluate(_INSTRUMENT_JS)
    cpu0 = cpu_seconds(server)
    t_press = time.perf_counter()
    for _ in range(presses):
        thumb.press("ArrowLeft")
    page.evaluate(_DONE_JS, [before, 400, 60_000])
    cpu1 = cpu_seconds(server)
    t = page.evaluate(_TIMES_JS)
    key = t["key"]
    finished = [f for f in t["finished"] if f > key]
    draws = [d for d in t["draws"] if d > key]
    sent = [x for x in t["sent"] if x > key]
    if key is None or not finished or not draws or not sent:
        raise RuntimeError(f"incomplete timing for the move from {before_value}: {t}")
    out = {
        "from": before_value, "to": slider_text(page, slider), "charts": charts,
        "sent_ms": sent[0] - key, "finished_ms": finished[0] - key,
        "redrawn_ms": max(draws) - key, "first_draw_ms": min(draws) - key,
        "total_ms": max(finished[0], max(draws)) - key,
        # the server's CPU from the key press to the end of the wait (which includes the 400 ms
        # quiet period, so prefetch work done then for the next move is counted here too)
        "cpu_ms": 1000 * (cpu1 - cpu0),
    }
    if net:  # network level (Playwright, perf_counter): value sent → script_finished received
        log = run_log(page)
        net_sent = next(x for x in log.sent if x > t_press)
        net_done = next(x for x in log.finished_times() if x > net_sent)
        out["server_ms"] = 1000 * (net_done - net_sent)
    return out


class BrowserMetrics:
    """The page's main-thread time by kind between its creation and :meth:`report`, from
    chromium's DevTools ``Performance.getMetrics`` (cumulative seconds of the renderer's main
    thread: all tasks, script, layout, style recalculation). Thread time, not wall time: on a
    busy machine it says what the page itself spends on each move."""

    KINDS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")

    def __init__(self, page: Page) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.start = self._read()

    def _read(self) -> dict[str, float]:
        return {m["name"]: m["value"] for m in self.cdp.send("Performance.getMetrics")["metrics"]}

    def report(self, moves: int) -> str:
        end = self._read()
        per = {k: 1000 * (end[k] - self.start[k]) / moves for k in self.KINDS}
        return ("page main thread per move (Performance.getMetrics, mean over the moves and their "
                "400 ms quiet waits): " + ", ".join(f"{k.removesuffix('Duration').lower()} "
                                                      f"{v:.0f} ms" for k, v in per.items()))


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def report(moves: list[dict], *, n: int, load: str, prefetch: bool, chart: str,
           slider: str = "eps", t: int = 200) -> str:
    net = "server_ms" in moves[0]
    cols = ["sent_ms", *(["server_ms"] if net else []), "finished_ms", "redrawn_ms", "total_ms",
            *(["cpu_ms"] if not math.isnan(moves[0].get("cpu_ms", math.nan)) else [])]
    name = {"eps": "ε", "delta": "δ"}[slider]
    lines = [f"Explore, Fig. 6 blobs n={n:,}, k=8, t={t}; {name} slider ArrowLeft × {len(moves)}, "
             f"prefetch {'on' if prefetch else 'off'}, storyboard: {chart} "
             f"(load average before: {load})",
             f"{'move':>4}  {name + ' from → to':>16}" + "".join(f"  {c[:-3]:>8}" for c in cols)]
    for i, m in enumerate(moves, 1):
        lines.append(f"{i:>4}  {m['from'] + ' → ' + m['to']:>16}"
                     + "".join(f"  {m[c]:>6.0f}ms" for c in cols))
    for name in cols:
        v = [m[name] for m in moves]
        lines.append(f"{name[:-3]:>9}: median {statistics.median(v):6.0f} ms   "
                     f"p90 {_pct(v, 0.9):6.0f} ms   max {max(v):6.0f} ms")
    return "\n".join(lines)


def cpu_probe_ms() -> float:
    """Milliseconds for a fixed pure-Python loop (best of 3): this VM's speed drifts by up to
    ~1.8× within minutes, so each table says how fast the machine was while it was measured."""
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        acc = 0
        for i in range(1_000_000):
            acc += i * i
        best = min(best, 1000 * (time.perf_counter() - t0))
    return best


def _open(page: Page, url: str) -> None:
    """Load the page and wait for its first run (page-side: no websocket record needed)."""
    page.goto(url)
    page.wait_for_function(
        """() => window.__dpvizFinished.length > 0
                 && document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
                 && document.querySelector('.st-key-storyboard_live .js-plotly-plot')""",
        timeout=180_000, polling=200)


def _vector_points(page: Page) -> None:
    """Turn the storyboard's hover toggle on and wait until the WebGL figure is drawn."""
    runs = page.evaluate("() => window.__dpvizFinished.length")
    widget(page, "storyboard_vector").locator("label").click()
    page.wait_for_function(
        """(runs) => window.__dpvizFinished.length > runs
                 && document.querySelector('.st-key-storyboard_live .js-plotly-plot .gl-container')
                 && document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")""",
        arg=runs, timeout=60_000, polling=200)


# ----------------------------------------------------------------- issue 16: three timings ---

# Arms a page-clock timer on the next key press or click anywhere, and records every DOM change
# in the page's main area after it (a view's new elements, a chart drawn, a progress bar).
_ARM_JS = """
() => {
  if (!window.__j16Armed) {
    window.__j16Armed = true;
    const start = () => { if (window.__j16Key === null) window.__j16Key = performance.now(); };
    document.addEventListener('keydown', start, true);
    document.addEventListener('pointerdown', start, true);
    new MutationObserver(() => {
      if (window.__j16Key !== null) window.__j16Last = performance.now();
    }).observe(document.body, {subtree: true, childList: true, attributes: true,
                               characterData: true});
  }
  window.__j16Key = null;
  window.__j16Last = 0;
}
"""

# Resolves once the input is served: a script_finished after it reached the page, the app is
# idle, every live chart shows the figure it was handed, [an element matching ``ready`` is on
# the page,] and nothing in the page changed for ``quietMs``. Returns the times (page clock).
_SETTLED_JS = """
([ready, quietMs, timeoutMs]) => new Promise((resolve, reject) => {
  const t0 = performance.now();
  const check = () => {
    const now = performance.now(), key = window.__j16Key;
    const fin = key === null ? [] : window.__dpvizFinished.filter((f) => f > key);
    const idle = document.querySelector(
      "[data-testid='stApp'][data-test-script-state='notRunning']") !== null;
    const live = Array.from(document.querySelectorAll('.dpviz-live-chart')).every(
      (el) => el.dataset.error !== undefined || el.dataset.revision === el.dataset.pending);
    const there = !ready || document.querySelector(ready) !== null;
    const last = Math.max(key || 0, window.__j16Last);
    if (fin.length && idle && live && there && now - last >= quietMs) {
      return resolve({key, finished: fin[0], last, runs: fin.length});
    }
    if (now - t0 > timeoutMs) return reject(new Error('not settled: ' + JSON.stringify(
      {key, fin: fin.length, idle, live, there})));
    setTimeout(check, 50);
  };
  setTimeout(check, quietMs);
})
"""


def _settle(page: Page, action, *, ready: str | None = None, quiet_ms: int = 400,
            timeout_ms: int = 180_000) -> dict:
    """Arm the timer, do ``action`` (a key press or click), wait until the page has settled;
    the input's latency in ms (input → the later of its script_finished and the last change of
    the page), without the quiet period the wait needs to know it is over."""
    page.evaluate(_ARM_JS)
    action()
    t = page.evaluate(_SETTLED_JS, [ready, quiet_ms, timeout_ms])
    return {"finished_ms": t["finished"] - t["key"],
            "total_ms": max(t["finished"], t["last"]) - t["key"], "runs": t["runs"]}


def learn_steps(page: Page, url: str, moves: int) -> list[dict]:
    """The Learn page's live example: ArrowLeft on its ρ slider, ``moves`` times (1 warm-up)."""
    _open_idle(page, url + "/learn", ".st-key-learn_storyboard_chart .js-plotly-plot")
    out = []
    for i in range(moves + 1):
        thumb = slider_input(page, "learn_demo_rho")
        thumb.focus()
        before = slider_text(page, "learn_demo_rho")
        m = _settle(page, lambda th=thumb: th.press("ArrowLeft"))
        m["what"] = f"ρ {before} → {slider_text(page, 'learn_demo_rho')}"
        if i:  # the first move is a warm-up (lazy imports, first figure)
            out.append(m)
    return out


VIEW_ORDER = ("Privacy", "Re-draw noise", "Filters & radii", "Downloads", "Storyboard")


def view_switches(page: Page, url: str, rounds: int) -> list[dict]:
    """Explore (the default lesson): click each view of the view picker in turn, ``rounds``
    times over the five views (the first round is a warm-up)."""
    _open_idle(page, url + "/", ".st-key-storyboard_live .js-plotly-plot")
    out = []
    for r in range(rounds + 1):
        for view in VIEW_ORDER:
            button = widget(page, "explore_view").get_by_role("radio", name=view, exact=True)
            m = _settle(page, button.click)
            m["what"] = f"view → {view}"
            if r:
                out.append(m)
    return out


def budget_sweep(page: Page, url: str) -> list[dict]:
    """The Budget page's default sweep. Open the page (a shared link): the time until its
    curves are drawn if the sweep is precomputed or shared on this server; otherwise click Run
    sweep and time the first curves (the first repetition) and the whole sweep (the Run button
    enabled again)."""
    t0 = time.perf_counter()
    _open_idle(page, url + "/budget", ".st-key-budget_run button")
    drawn = page.wait_for_function(  # the curves, or the invitation to run the sweep
        """() => document.querySelector('.st-key-budget_accuracy .js-plotly-plot') ? 'drawn'
                 : Array.from(document.querySelectorAll("[data-testid='stAlertContentInfo']"))
                     .some((el) => el.innerText.includes('Press Run sweep')) ? 'empty' : null""",
        timeout=180_000, polling=50).json_value()
    opened = 1000 * (time.perf_counter() - t0)
    if drawn == "drawn":
        origin = page.locator(".st-key-budget_origin").inner_text().strip()[:40]
        return [{"what": f"Budget link → curves drawn ({origin}…)", "total_ms": opened,
                 "runs": 1}]
    page.evaluate(_ARM_JS)
    widget(page, "budget_run").locator("button").click()
    first = page.evaluate(
        """() => new Promise((resolve) => {
             const check = () => document.querySelector('.st-key-budget_accuracy .js-plotly-plot')
               ? resolve(performance.now() - window.__j16Key) : setTimeout(check, 50);
             check();
           })""")
    done = page.evaluate(_SETTLED_JS, [".st-key-budget_run button:not([disabled])", 800, 600_000])
    total = max(done["finished"], done["last"]) - done["key"]
    return [{"what": "Budget: Run sweep → first curves drawn", "total_ms": first, "runs": 1},
            {"what": "Budget: Run sweep → whole default sweep drawn", "total_ms": total,
             "runs": done["runs"]}]


def compare_view(page: Page, url: str) -> dict:
    """The Compare page's default view from a shared link (a new session): the time until the
    ranked table and the small multiples are drawn (precomputed for the presets, or shared on this
    server), or until the page invites a Run (then it is not precomputed here: ``drawn`` False)."""
    t0 = time.perf_counter()
    _open_idle(page, url + "/compare", ".st-key-compare_run button")
    drawn = page.wait_for_function(
        """() => document.querySelector('.st-key-compare_loss .js-plotly-plot')
                   && document.querySelector('.st-key-compare_ranking') ? 'drawn'
                 : Array.from(document.querySelectorAll("[data-testid='stAlertContentInfo']"))
                     .some((el) => el.innerText.includes('Run comparison')) ? 'empty' : null""",
        timeout=180_000, polling=50).json_value()
    return {"what": "Compare link → default view drawn" if drawn == "drawn"
            else "Compare link → not precomputed (Run comparison offered)",
            "total_ms": 1000 * (time.perf_counter() - t0), "drawn": drawn == "drawn"}


def _open_idle(page: Page, url: str, ready: str) -> None:
    page.goto(url)
    page.wait_for_function(
        """(ready) => window.__dpvizFinished.length > 0 && document.querySelector(ready)
                     && document.querySelector(
                          "[data-testid='stApp'][data-test-script-state='notRunning']")""",
        arg=ready, timeout=180_000, polling=200)
    page.wait_for_timeout(500)


ISSUE16_TARGETS = {"learn": 300, "view": 500, "budget": 10_000}


def issue16(url: str, *, moves: int, rounds: int, skip_budget: bool) -> tuple[list, list[float]]:
    """The three timings of issue 16, each in a fresh browser context (a new session)."""
    rows: list[tuple[str, list[dict]]] = []
    probe = [cpu_probe_ms()]
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        rows.append(("learn", learn_steps(new_app_page(browser, track=False), url, moves)))
        rows.append(("view", view_switches(new_app_page(browser, track=False), url, rounds)))
        if not skip_budget:
            first = budget_sweep(new_app_page(browser, track=False), url)
            if len(first) == 1:  # drawn on open: open the link again in a new session, the
                first[0]["what"] += ", first visit"  # first one paid the page's imports
                again = budget_sweep(new_app_page(browser, track=False), url)
                again[0]["what"] += ", link opened again"
                first += again
            rows.append(("budget", first))
        browser.close()
    probe.append(cpu_probe_ms())
    return rows, probe


def issue16_report(rows, probe, *, load: str, label: str) -> str:
    """One table: each measured input, then per kind median / max against the target."""
    lines = [f"Issue 16 timings ({label}; load average before: {load})",
             "| kind | input | finished (ms) | total (ms) |", "|---|---|---|---|"]
    for kind, ms in rows:
        for m in ms:
            fin = f"{m['finished_ms']:.0f}" if "finished_ms" in m else ""
            lines.append(f"| {kind} | {m['what']} | {fin} | {m['total_ms']:.0f} |")
    lines += ["", "| timing | target | median | max | inputs |", "|---|---|---|---|---|"]
    names = {"learn": "Learn live example, one ρ step", "view": "Explore, switch view",
             "budget": "Budget default sweep"}
    for kind, ms in rows:
        if kind == "budget":
            for m in ms:
                lines.append(f"| {m['what']} | ≤ {ISSUE16_TARGETS[kind] / 1000:.0f} s | "
                             f"{m['total_ms'] / 1000:.1f} s | | 1 |")
            continue
        v = [m["total_ms"] for m in ms]
        lines.append(f"| {names[kind]} | ≤ {ISSUE16_TARGETS[kind]} ms | "
                     f"{statistics.median(v):.0f} ms | {max(v):.0f} ms | {len(v)} |")
    lines.append(f"\nCPU probe (1e6-step Python loop, before / after): {probe[0]:.0f} / "
                 f"{probe[1]:.0f} ms (compare tables measured at similar probe times only)")
    return "\n".join(lines)


# ------------------------------------------------- issue 43: speed where a person waits ---

#: Data's Check on a built-in table (its default: Iris).
CHECK_QUERY = "/data?src=builtin&builtin={builtin}"
#: Budget on a built-in table (its sweep starts by itself there; a short one: the click, not the
#: sweep, is timed); a click on a curve's point opens Explore at that (ε, δ). The link carries the
#: run knobs the Data page sets for Iris (k = its 3 classes, t = n/(5k) = 10): a link without them
#: keeps the lesson's k = 8, t = 1,500, and Explore then opened on FriendlyCore's "needs at least
#: 12000 rows" error, which the first version of this row waited on for a storyboard in vain.
BUDGET_QUERY = ("/budget?src=builtin&builtin={builtin}&k=3&t=10&balg=friendlycore,dp_lloyd"
                "&bpts=3&breps=2")
_VERDICT = ".st-key-clustering_verdict [data-testid='stAlertContainer']"
_STORYBOARD = ".st-key-storyboard_live .js-plotly-plot"

# The pixel position of a point of the Budget chart's first curve (plotly's own axis maps).
_POINT_XY_JS = """
(gd) => {
  const data = gd._fullData;  // decoded arrays (gd.data may hold Plotly's base64 typed arrays)
  const tr = data.findIndex((t) => (t.mode || '').includes('markers') && t.x && t.x.length
                                   && t.visible === true && t.fill === 'none');
  const t = data[tr], i = Math.floor(t.x.length / 2), fl = gd._fullLayout;
  const xa = fl[(t.xaxis || 'x').replace('x', 'xaxis')], ya = fl[(t.yaxis || 'y').replace('y', 'yaxis')];
  const box = gd.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.l2p(xa.type === 'log' ? Math.log10(t.x[i]) : t.x[i]),
          y: box.top + ya._offset + ya.l2p(ya.type === 'log' ? Math.log10(t.y[i]) : t.y[i])};
}
"""


def data_check(page: Page, url: str, builtin: str = "iris") -> dict:
    """Data on a built-in table: press Check, until its sentence is shown and the page settled."""
    _open_idle(page, url + CHECK_QUERY.format(builtin=builtin), ".st-key-clustering_verdict_run button")
    button = widget(page, "clustering_verdict_run").locator("button").first
    button.scroll_into_view_if_needed()
    m = _settle(page, button.click, ready=_VERDICT, timeout_ms=600_000)
    m["what"] = f"Data: Check on {builtin}"
    return m


def budget_click(page: Page, url: str, builtin: str = "iris") -> dict:
    """Budget on a built-in table, its sweep finished: click a point of the first curve, until
    Explore shows that (ε, δ) drawn and the page settled."""
    _open_idle(page, url + BUDGET_QUERY.format(builtin=builtin), ".st-key-budget_run button")
    page.wait_for_function(  # the sweep drawn and done (the Run button enabled again)
        """() => document.querySelector('.st-key-budget_accuracy .js-plotly-plot')
                 && document.querySelector('.st-key-budget_run button:not([disabled])')""",
        timeout=600_000, polling=200)
    page.wait_for_timeout(800)
    chart = widget(page, "budget_accuracy").locator(".js-plotly-plot")
    chart.scroll_into_view_if_needed()
    xy = chart.evaluate(_POINT_XY_JS)
    m = _settle(page, lambda: page.mouse.click(xy["x"], xy["y"]), ready=_STORYBOARD,
                timeout_ms=600_000)
    if urlparse(page.url).path.rstrip("/") not in ("", "/explore"):  # Explore is the default page: /
        raise RuntimeError(f"the click did not open Explore (at {page.url})")
    m["what"] = f"Budget ({builtin}): click a point → Explore drawn"
    return m


#: The five waits of issue 43 item 4: name → (goal in s, function(page, url) → timing dict).
#: Other helpers add theirs (Present's slider, Explore's ε step, Compare's first screen) here.
ISSUE43_ROWS: dict[str, tuple[float, Any]] = {
    "check": (3.0, data_check),
    "budget_click": (3.0, budget_click),
}


def issue43(url: str, names: list[str], repeats: int) -> list[tuple[str, float, list[dict]]]:
    """Each chosen wait ``repeats`` times, each in a new browser session."""
    out = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        for name in names:
            goal, measure = ISSUE43_ROWS[name]
            runs_ = []
            for _ in range(repeats):
                page = new_app_page(browser, width=1280, height=720, track=False)
                runs_.append(measure(page, url))
                page.context.close()
            out.append((name, goal, runs_))
        browser.close()
    return out


def issue43_report(rows, *, load: str, label: str) -> str:
    lines = [f"Issue 43 waits ({label}; load average before: {load})",
             "| wait | goal | median | max | runs |", "|---|---|---|---|---|"]
    for _name, goal, ms in rows:
        v = [m["total_ms"] / 1000 for m in ms]
        lines.append(f"| {ms[0]['what']} | ≤ {goal:g} s | {statistics.median(v):.1f} s | "
                     f"{max(v):.1f} s | {len(v)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="rows of the Fig. 6 blobs")
    ap.add_argument("--t", type=int, default=200, help="tuples (the default lesson: --n 150000 --t 1500)")
    ap.add_argument("--slider", choices=sorted(SLIDERS), default="eps",
                    help="the slider to move: ρ (from 3.16) or δ (from 10⁻³)")
    ap.add_argument("--moves", type=int, help="measured moves after 1 warm-up (default: 10 for "
                    "ρ, 8 for δ)")
    ap.add_argument("--url", help="use a running app at this base URL instead of starting one")
    ap.add_argument("--json", type=Path, help="also write the raw timings here")
    ap.add_argument("--browser-metrics", action="store_true",
                    help="also print the page's main-thread time per move by kind (script, "
                         "layout, style), from chromium's Performance.getMetrics over the moves")
    ap.add_argument("--net", action="store_true",
                    help="also report the network-level server time (Playwright records every "
                         "websocket frame, which costs CPU next to the page being timed)")
    ap.add_argument("--no-prefetch", action="store_true",
                    help="start the app with DPVIZ_PREFETCH=0: every move computes its private "
                         "run (as a jump of several slider steps does)")
    ap.add_argument("--plotly-chart", action="store_true",
                    help="start the app with static serving off, so the storyboard falls back "
                         "to st.plotly_chart (rebuilt on every move) instead of the live chart "
                         "updated in place (app/components/live_chart.py)")
    ap.add_argument("--vector", action="store_true",
                    help="turn on the storyboard's 'Hover on every point' toggle (WebGL points "
                         "instead of one image per panel) before the moves")
    ap.add_argument("--issue16", action="store_true",
                    help="instead: the three timings of issue 16 in one table (Learn's live "
                         "example per ρ step, Explore's view switch, the default Budget sweep)")
    ap.add_argument("--no-budget", action="store_true", help="--issue16 without the Budget sweep")
    ap.add_argument("--no-precomputed", action="store_true",
                    help="--issue16: start the app with DPVIZ_PRECOMPUTED=0, so the Budget sweep "
                         "is computed on Run (not read from app/precomputed/)")
    ap.add_argument("--label", default="this checkout", help="--issue16: a name for the table")
    ap.add_argument("--jump", type=int, default=1, metavar="STEPS",
                    help="each move goes STEPS slider steps at once (a jump: not prefetched)")
    ap.add_argument("--pause", type=float, default=0.0, metavar="S",
                    help="wait S seconds before each measured move (a user reading the picture)")
    ap.add_argument("--second-visit", action="store_true",
                    help="after the moves, open the same link in a new session (a second student "
                         "of a class) and time its first screen too")
    ap.add_argument("--compare", type=int, metavar="OPENS", nargs="?", const=3,
                    help="instead: open the Compare page's default link OPENS times, each in a new "
                         "session, and time its default view (issue 27's goal: ≤ 10 s)")
    ap.add_argument("--issue43", nargs="?", const="check", metavar="WAITS",
                    help="instead: time issue 43's waits (comma-separated names of ISSUE43_ROWS; "
                         "default: check), each --repeats times in a new session")
    ap.add_argument("--repeats", type=int, default=3, help="--issue43: runs per wait")
    args = ap.parse_args(argv)
    if args.issue43:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        server = nullcontext(args.url) if args.url else streamlit_server(ROOT / "app" / "main.py")
        with server as url:
            rows = issue43(url.rstrip("/"), args.issue43.split(","), args.repeats)
        print(issue43_report(rows, load=load, label=args.label))
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        return 0
    if args.compare:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        server = nullcontext(args.url) if args.url else streamlit_server(ROOT / "app" / "main.py")
        with server as url, sync_playwright() as pw:
            browser = launch_chromium(pw)
            rows = [compare_view(new_app_page(browser, track=False), url.rstrip("/"))
                    for _ in range(args.compare)]
            browser.close()
        print(f"Compare's default view (issue 27, goal ≤ 10 s; load average before: {load})")
        print("| open | what | seconds |\n|---|---|---|")
        for i, r in enumerate(rows, 1):
            print(f"| {i} | {r['what']} | {r['total_ms'] / 1000:.1f} |")
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        return 0
    if args.issue16:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        env16 = {"DPVIZ_PRECOMPUTED": "0"} if args.no_precomputed else {}
        server = (nullcontext(args.url) if args.url
                  else streamlit_server(ROOT / "app" / "main.py", env=env16))
        with server as url:
            rows, probe = issue16(url.rstrip("/"), moves=args.moves or 6, rounds=1,
                                  skip_budget=args.no_budget)
        print(issue16_report(rows, probe, load=load, label=args.label))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({"load": load, "rows": rows, "cpu_probe_ms": probe},
                                            indent=1))
        return 0
    key, start, fresh = SLIDERS[args.slider]
    args.moves = args.moves or min(10, (fresh - 1) // args.jump)
    if (args.moves + 1) * args.jump > fresh:
        ap.error(f"--moves × --jump must be at most {fresh - args.jump} for --slider {args.slider} "
                 "(fresh grid steps below the start, one move for the warm-up)")
    if args.url and (args.no_prefetch or args.plotly_chart):
        ap.error("--no-prefetch and --plotly-chart apply to the app this script starts, "
                 "not to --url")

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    env = {**({"DPVIZ_PREFETCH": "0"} if args.no_prefetch else {}),
           **({"STREAMLIT_SERVER_ENABLE_STATIC_SERVING": "false"} if args.plotly_chart else {})}
    server = (nullcontext(args.url) if args.url
              else streamlit_server(ROOT / "app" / "main.py", env=env))
    with server as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = new_app_page(browser, height=1400, track=args.net)
        proc = server_process(url)
        t0, c0 = time.perf_counter(), cpu_seconds(proc)
        _open(page, url.rstrip("/") + QUERY.format(n=args.n, t=args.t, **start))
        print(f"first load (data, tuple stage, first private run): "
              f"{time.perf_counter() - t0:.1f} s wall, server CPU {cpu_seconds(proc) - c0:.1f} s "
              f"(load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())}); status: "
              f"{widget(page, 'run_status').inner_text().strip()[:90]}", flush=True)
        if args.vector:
            _vector_points(page)
        measure_move(page, key, net=args.net, presses=args.jump, server=proc)  # warm-up: imports
        probe = [cpu_probe_ms()]
        metrics = BrowserMetrics(page) if args.browser_metrics else None
        moves = []
        for _ in range(args.moves):
            time.sleep(args.pause)
            moves.append(measure_move(page, key, net=args.net, presses=args.jump, server=proc))
        if metrics is not None:
            print(metrics.report(len(moves)))
        probe.append(cpu_probe_ms())
        if args.second_visit:
            other = new_app_page(browser, height=1400, track=False)
            t0, c0 = time.perf_counter(), cpu_seconds(proc)
            _open(other, url.rstrip("/") + QUERY.format(n=args.n, t=args.t, **start))
            print(f"second visit (a new session, same link): {time.perf_counter() - t0:.1f} s wall, "
                  f"server CPU {cpu_seconds(proc) - c0:.1f} s (load average now: "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
        browser.close()
    chart = "st.plotly_chart" if args.plotly_chart else "live chart (Plotly.react)"
    chart += ", WebGL points" if args.vector else ", raster points"
    print(report(moves, n=args.n, load=load, prefetch=not args.no_prefetch, chart=chart,
                 slider=args.slider, t=args.t))
    if args.jump > 1 or args.pause:
        print(f"each move: {args.jump} slider step(s) at once, after a {args.pause:g} s pause")
    print(f"CPU probe (1e6-step Python loop, before / after the moves): {probe[0]:.0f} / "
          f"{probe[1]:.0f} ms (compare tables measured at similar probe times only)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"n": args.n, "load": load, "moves": moves,
                                         "slider": args.slider,
                                         "prefetch": not args.no_prefetch, "chart": chart,
                                         "cpu_probe_ms": probe},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
