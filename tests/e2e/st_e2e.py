"""Small helpers to drive a Streamlit app in Debian's chromium with Playwright (sync API).

Used by the e2e tests (through conftest.py) and by bench/app_latency.py.

Waiting for reruns
------------------
Streamlit publishes its state on the root element
``<div data-testid="stApp" data-test-connection-state="CONNECTED" data-test-script-state="...">``.
Checking for ``notRunning`` right after an input races with the rerun that has not started yet
(Streamlit's own e2e suite waits a fixed ~200 ms first), and a fast rerun may never show
``running`` in the DOM at all (React batches the two updates). So we count finished runs where
they are announced: every ``ForwardMsg`` the server sends on the page's websocket is decoded
with Streamlit's own protobuf classes, and each ``script_finished`` (except "finished early for
a rerun") counts one run. :func:`rerun_after` waits for *this* input's run to finish, however
fast or slow it is, then for the DOM to say ``notRunning`` with no loading skeletons left.
For the latency bench, an init script also reads the same messages in the page and keeps the
page-clock time of every finished run in ``window.__dpvizFinished`` (and of every message the
page sends in ``window.__dpvizSent``).

Widgets are located by their key: ``st.slider(..., key="rho")`` renders inside ``.st-key-rho``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from google.protobuf.message import DecodeError
from playwright.sync_api import Browser, Locator, Page, Playwright, WebSocket, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[2]

CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
CHROMIUM_MISSING = (
    "Debian's chromium is needed for the browser tests but was not found ($DPVIZ_CHROMIUM if "
    "set, else `chromium` on PATH or /usr/bin/chromium). Install it with `make chromium` "
    "(runs `sudo apt-get install -y chromium`); `playwright install` cannot download browsers here."
)
#: How long a single rerun may take before a wait fails (ms). Generous: 2 shared cores.
RERUN_TIMEOUT_MS = 60_000

# Page-clock timestamps of finished script runs, for the latency bench: reads the top level of
# every ForwardMsg (protobuf) on the websocket, before the app sees it; field 6 is
# `script_finished` (a varint status; 2 = FINISHED_EARLY_FOR_RERUN does not count).
_FINISHED_TIMES_JS = """
(() => {
  window.__dpvizFinished = [];
  const SCRIPT_FINISHED = 6, EARLY_FOR_RERUN = 2;
  const finishedStatus = (bytes) => {
    let i = 0;
    const varint = () => {
      let v = 0, shift = 0, b;
      do { b = bytes[i++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
      return v;
    };
    while (i < bytes.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag & 7;
      if (wire === 0) { const v = varint(); if (field === SCRIPT_FINISHED) return v; }
      else if (wire === 2) { const length = varint(); i += length; }
      else if (wire === 1) { i += 8; }
      else if (wire === 5) { i += 4; }
      else return null;
    }
    return null;
  };
  const Native = window.WebSocket;
  class TimedWebSocket extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const now = performance.now();
        if (!(event.data instanceof ArrayBuffer)) return;
        const status = finishedStatus(new Uint8Array(event.data));
        if (status !== null && status !== EARLY_FOR_RERUN) window.__dpvizFinished.push(now);
      });
    }
  }
  // ... and the times the page sends anything (widget values / rerun requests) to the server.
  window.__dpvizSent = [];
  TimedWebSocket.prototype.send = function (data) {
    window.__dpvizSent.push(performance.now());
    return Native.prototype.send.call(this, data);
  };
  window.WebSocket = TimedWebSocket;
})();
"""


# --------------------------------------------------------------------------------- browser ---


def chromium_path() -> str | None:
    """Debian's chromium: ``$DPVIZ_CHROMIUM`` if set (and only it), else ``chromium`` on PATH or
    /usr/bin/chromium; None if there is no executable there."""
    override = os.environ.get("DPVIZ_CHROMIUM")
    candidates = [override] if override else [shutil.which("chromium"), "/usr/bin/chromium"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def launch_chromium(playwright: Playwright) -> Browser:
    """Launch headless Debian chromium; Playwright gives it a fresh temporary profile dir."""
    path = chromium_path()
    if path is None:
        raise RuntimeError(CHROMIUM_MISSING)
    return playwright.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))


def new_app_page(browser: Browser, *, width: int = 1400, height: int = 1000,
                 track: bool = True) -> Page:
    """A page in a fresh context, with the rerun counter installed on every navigation.

    ``track=False`` leaves out :func:`track_runs` (Playwright then does not ship every
    websocket frame to this process; the page's own ``__dpvizFinished`` times remain).
    """
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(RERUN_TIMEOUT_MS)
    context.add_init_script(_FINISHED_TIMES_JS)
    page = context.new_page()
    if track:
        track_runs(page)
    return page


# ---------------------------------------------------------------------------------- server ---


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_command(script: str | Path) -> list[str]:
    """How ``script`` is served: the app's own ``app/main.py`` as ``make run`` serves it
    (``python -m app.launch``: its imports done before the server listens, issue 43), any other
    script (a test's toy page) by ``python -m streamlit run``."""
    if Path(script).resolve() == ROOT / "app" / "main.py":
        return [sys.executable, "-m", "app.launch"]
    return [sys.executable, "-m", "streamlit", "run", str(script)]


@contextmanager
def streamlit_server(script: str | Path, *, timeout: float = 60.0, log: Path | None = None,
                     env: dict[str, str] | None = None) -> Iterator[str]:
    """Serve ``script`` (:func:`serve_command`) on a free loopback port; yield its base URL; always
    kill it.

    ``env`` adds variables to the server's environment (e.g. ``DPVIZ_PREFETCH=0``).
    Polls ``/_stcore/health`` until it answers 200. The server's output goes to ``log`` (or is
    kept in memory) and is shown in the error if it never comes up.
    """
    port = free_port()
    cmd = [
        *serve_command(script),
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none", "--server.runOnSave", "false",
    ]
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(proc, url, timeout, log)
        yield url
    finally:
        stop_server(proc)
        if log:
            out.close()


def stop_server(proc: subprocess.Popen, grace: float = 1.0) -> None:
    """SIGTERM, then SIGKILL to the server's process group after ``grace`` seconds: a server
    whose session still runs a job (a page a test left mid-run) waits for that thread before it
    exits, which cost up to 10 s per test module; nothing a test checks is written at exit.
    An idle server with prefetching off exits in ~0.8 s; one with prefetching on (a module with
    its own server) waits for its speculation thread, 2.2-3.2 s measured, so it is killed at 1 s
    (it was at 2 s: one more idle second per such module, issue 45)."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def healthy(url: str, timeout: float = 10.0) -> bool:
    """Whether the server at ``url`` answers ``/_stcore/health`` with 200 within ``timeout`` s."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _wait_healthy(proc: subprocess.Popen, url: str, timeout: float, log: Path | None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log else ""
            raise RuntimeError(f"streamlit exited with code {proc.returncode} before serving "
                               f"{url}\n{tail}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-3000:] if log else ""
    raise RuntimeError(f"streamlit did not answer {url}/_stcore/health within {timeout:.0f} s"
                       f"\n{tail}")


# ------------------------------------------------------------------------------ app state ---


@dataclass
class RunLog:
    """Decoded server messages of one page: ``kinds[i]`` is the i-th frame's ForwardMsg type
    (``script_finished`` frames carry their status), ``times[i]`` its arrival (perf_counter), as
    the browser's network layer reports them (not delayed by a busy page main thread)."""

    kinds: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)  # frame indexes of completed runs
    sent: list[float] = field(default_factory=list)  # perf_counter of frames the page sent

    def finished_times(self) -> list[float]:
        """perf_counter arrival times of the completed runs' ``script_finished`` frames."""
        return [self.times[i] for i in self.finished]


_LOGS: dict[int, RunLog] = {}
_EARLY = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN


def track_runs(page: Page) -> RunLog:
    """Start decoding the page's websocket frames (done by :func:`new_app_page`)."""
    log = _LOGS.setdefault(id(page), RunLog())

    def on_frame(payload: str | bytes) -> None:
        now = time.perf_counter()
        kind = "text"
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            try:
                msg.ParseFromString(payload)
                kind = msg.WhichOneof("type") or "empty"
            except DecodeError:
                kind = "undecodable"
            if kind == "script_finished":
                status = msg.script_finished
                kind = f"script_finished:{ForwardMsg.ScriptFinishedStatus.Name(status)}"
                if status != _EARLY:
                    log.finished.append(len(log.kinds))
        log.kinds.append(kind)
        log.times.append(now)

    def on_websocket(ws: WebSocket) -> None:
        if "/_stcore/stream" in ws.url:
            ws.on("framereceived", on_frame)
            ws.on("framesent", lambda _payload: log.sent.append(time.perf_counter()))

    page.on("websocket", on_websocket)
    return log


def run_log(page: Page) -> RunLog:
    """The decoded websocket frames of a page made by :func:`new_app_page`."""
    return _LOGS[id(page)]


def runs(page: Page) -> int:
    """How many script runs of this page have finished (all navigations included)."""
    return len(run_log(page).finished)


def wait_for_app_idle(page: Page, *, after: int, timeout: float = RERUN_TIMEOUT_MS) -> None:
    """Wait until more than ``after`` runs have finished, then until the app is connected and
    ``notRunning`` with no loading skeletons left."""
    deadline = time.monotonic() + timeout / 1000
    while runs(page) <= after:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no script run finished within {timeout / 1000:.0f} s "
                               f"(finished runs: {runs(page)}, waiting for > {after})")
        page.wait_for_timeout(20)  # lets Playwright deliver websocket events
    page.locator(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
        "[data-test-script-state='notRunning']"
    ).wait_for(state="attached", timeout=timeout)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)
    page.wait_for_function(_LIVE_CHARTS_DRAWN_JS, timeout=timeout, polling=50)


# dpviz's live charts (app/components/live_chart.py) draw after the run, asynchronously: each
# says which figure it was handed (data-pending) and which one it shows (data-revision).
_LIVE_CHARTS_DRAWN_JS = """
() => Array.from(document.querySelectorAll('.dpviz-live-chart'))
  .every((el) => el.dataset.error !== undefined || el.dataset.revision === el.dataset.pending)
"""


def rerun_after(page: Page, action: Callable[[], object], *,
                timeout: float = RERUN_TIMEOUT_MS) -> None:
    """Do ``action`` (an input that triggers a rerun) and wait for that rerun to finish."""
    before = runs(page)
    action()
    wait_for_app_idle(page, after=before, timeout=timeout)


def open_app(page: Page, url: str) -> None:
    """Navigate to ``url`` and wait for the first script run to finish."""
    rerun_after(page, lambda: page.goto(url))


def assert_no_exception(page: Page) -> None:
    """Fail with the exception's text if the app shows a Streamlit exception box."""
    boxes = page.get_by_test_id("stException")
    if boxes.count():
        raise AssertionError("the app shows an exception:\n" + boxes.first.inner_text())
    broken = page.locator(".dpviz-live-chart[data-error]")
    if broken.count():
        raise AssertionError("a chart could not be drawn: " + broken.first.inner_text())


def query_params(page: Page) -> dict[str, str]:
    """The page URL's query string as a flat dict (last value wins)."""
    return {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query).items()}


# -------------------------------------------------------------------------------- widgets ---


def widget(page: Page, key: str) -> Locator:
    """The element container of the widget with ``key`` (``.st-key-<key>``)."""
    return page.locator(f".st-key-{key}")


def slider_input(page: Page, key: str) -> Locator:
    """The range input of a (select-)slider; ``aria-valuetext`` is the shown value."""
    return widget(page, key).locator("input[type='range']")


def slider_text(page: Page, key: str) -> str:
    """The value a slider shows (``aria-valuetext``)."""
    return slider_input(page, key).get_attribute("aria-valuetext") or ""


def slider_index(page: Page, key: str) -> int:
    """The slider position, counted in steps from its minimum (select-slider: option index)."""
    thumb = slider_input(page, key)
    low, step, value = (float(thumb.get_attribute(a) or 1) for a in ("min", "step", "value"))
    return round((value - low) / step)


def move_slider(page: Page, key: str, steps: int) -> None:
    """Move a slider ``steps`` positions with the arrow keys (left if negative).

    One key press at a time, each followed by its own rerun: Streamlit sends a slider's value
    at once and again after a debounce, so a burst of presses gives an unknown number of
    reruns and no way to know which one is the last.
    """
    target = slider_index(page, key) + steps
    for _ in range(abs(steps)):
        press_slider_key(page, key, "ArrowRight" if steps > 0 else "ArrowLeft")
    got = slider_index(page, key)
    if got != target:
        raise AssertionError(f"slider {key!r} at position {got}, expected {target}")


def press_slider_key(page: Page, key: str, key_name: str) -> None:
    """Press one key on a slider's thumb and wait for the rerun it triggers."""
    thumb = slider_input(page, key)
    old = thumb.get_attribute("value")
    thumb.focus()
    expect(thumb, f"slider {key!r} did not take the focus (a dialog open?)").to_be_focused()
    before = runs(page)
    thumb.press(key_name)
    expect(thumb, f"{key_name} did not move slider {key!r}").not_to_have_attribute("value", old)
    wait_for_app_idle(page, after=before)


def set_slider(page: Page, key: str, value: str, *, options: list[str] | None = None) -> None:
    """Move a slider to ``value`` with the keyboard and wait for the rerun.

    A numeric slider's target position is computed from its min/step; a select-slider needs
    its ``options`` (the labels it shows, in order), since only two of them are in the DOM.
    """
    thumb = slider_input(page, key)
    if options is not None:
        target = options.index(value)
    else:
        low, step = (float(thumb.get_attribute(a) or 1) for a in ("min", "step"))
        target = round((float(value) - low) / step)
    move_slider(page, key, target - slider_index(page, key))
    expect(thumb).to_have_attribute("aria-valuetext", value)


def select_option(page: Page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox with ``key`` and wait for the rerun."""
    box = widget(page, key).locator("input[role='combobox']")
    box.click()
    choice = page.get_by_role("option", name=option, exact=True)
    rerun_after(page, choice.click)
    expect(box).to_have_value(option)


def upload_file(page: Page, key: str, path: str | Path) -> None:
    """Upload ``path`` through the file uploader with ``key`` and wait for the rerun."""
    uploader = widget(page, key).get_by_test_id("stFileUploaderDropzoneInput")
    rerun_after(page, lambda: uploader.set_input_files(str(path)))


def click_button(page: Page, key: str) -> None:
    """Click the button (or form submit button) with ``key`` and wait for the rerun."""
    button = widget(page, key).locator("button")
    expect(button).to_be_enabled()
    rerun_after(page, button.click)


def choose_radio(page: Page, key: str, label: str) -> None:
    """Pick the radio option shown as ``label`` and wait for the rerun."""
    option = widget(page, key).locator("label").filter(has_text=label)
    rerun_after(page, option.click)


def number_input(page: Page, key: str) -> Locator:
    """The text box of a number input."""
    return widget(page, key).locator("input")


def fill_number(page: Page, key: str, value: float | str, *, in_form: bool = False) -> None:
    """Type ``value`` into a number input. Outside a form, Enter commits it and we wait for the
    rerun; inside a form nothing reruns until the submit button is clicked."""
    box = number_input(page, key)
    box.fill(str(value))
    if in_form:
        return
    rerun_after(page, lambda: box.press("Enter"))


def selectbox_value(page: Page, key: str) -> str:
    """The option a selectbox shows."""
    return widget(page, key).locator("input[role='combobox']").input_value()


def go_to_page(page: Page, title: str) -> None:
    """Open another page of a multipage app from the sidebar navigation (same session)."""
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True)
    rerun_after(page, link.click)


# -------------------------------------------------------------------------------- figures ---

_PLOTLY_TRACES_JS = """
(el) => {
  // Plotly >= 6 ships arrays as {dtype, bdata}; plotly.js keeps the decoded typed array in
  // `_inputArray`. Turn both forms into plain lists.
  const plain = (v) => {
    if (v === undefined || v === null) return null;
    if (v._inputArray !== undefined) v = v._inputArray;
    if (ArrayBuffer.isView(v)) return Array.from(v);
    if (Array.isArray(v)) return v.map((x) => (ArrayBuffer.isView(x) ? Array.from(x) : x));
    return v;
  };
  return (el.data || []).map((t) => ({
    type: t.type || 'scatter', name: t.name === undefined ? null : t.name,
    xaxis: t.xaxis || 'x', yaxis: t.yaxis || 'y',
    x: plain(t.x), y: plain(t.y), z: plain(t.z),
    labels: plain(t.labels), values: plain(t.values), text: plain(t.text),
  }));
}
"""


def plotly_charts(scope: Page | Locator) -> Locator:
    """Every drawn plotly chart under ``scope``."""
    return scope.locator(".js-plotly-plot")


def plotly_traces(chart: Locator) -> list[dict]:
    """The traces of one drawn plotly chart, as the browser holds them (decoded arrays)."""
    expect(chart).to_be_visible()
    return chart.evaluate(_PLOTLY_TRACES_JS)


# ---------------------------------------------------------------------------- screenshots ---


def capture(page: Page, path: str | Path, *, height: int | None = None,
            max_height: int = 6000) -> Path:
    """Screenshot the app, ``height`` pixels tall (default: the whole page).

    Streamlit scrolls inside its main container, so Playwright's ``full_page`` only sees the
    viewport; we grow the viewport to the content's height instead, then restore it.
    """
    size = page.viewport_size or {"width": 1400, "height": 1000}
    if height is None:
        height = page.evaluate(
            """() => Math.max(...['stMain', 'stAppViewContainer', 'stSidebarContent']
                 .map((id) => document.querySelector(`[data-testid='${id}']`))
                 .filter((el) => el !== null).map((el) => el.scrollHeight))"""
        )
    height = max(size["height"], min(int(height), max_height))
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => "
                      "requestAnimationFrame(r)))")  # let the layout settle
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(size)
    return Path(path)
