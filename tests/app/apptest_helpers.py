"""AppTest helpers: open the app at a page with URL parameters, find widgets by key."""

from __future__ import annotations

import functools
from pathlib import Path

from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

MAIN = Path(__file__).resolve().parents[2] / "app" / "main.py"
#: Small data so each test stays well under 20 s on two shared cores.
SMALL = {"n": "3000", "t": "60", "k": "4", "gk": "4", "seed": "1"}
TIMEOUT = 90


def scan_components_once() -> None:
    """Scan the installed distributions for Streamlit component manifests once per process.

    Every new ``AppTest`` makes its own component registry, and that scans the metadata of every
    installed distribution (``streamlit/testing/v1/app_test.py`` ``_run`` →
    ``discover_and_register_components`` → ``manifest_scanner.scan_component_manifests``): about
    300 packages here, 0.3–0.9 s of CPU per app opened, 370 opens in ``tests/app`` (341 s of a
    loaded run's workers; issue 45). A server scans once when it starts. Nothing is installed
    into this interpreter while the tests run, so one scan per process gives every ``AppTest``
    the same manifests; each caller gets its own list. Idempotent."""
    scan = manifest_scanner.scan_component_manifests
    if hasattr(scan, "cache_info"):
        return
    cached = functools.cache(scan)

    @functools.wraps(scan)
    def scan_once(max_workers: int | None = None):
        return list(cached(max_workers))

    scan_once.cache_info = cached.cache_info  # type: ignore[attr-defined]
    manifest_scanner.scan_component_manifests = scan_once


scan_components_once()


def open_app(page: str | None = None, *, via_explore: bool = False, **query: str) -> AppTest:
    """Run the app once at ``page`` (default Explore) with ``query`` in the URL, as a browser opens
    ``/<page>?<query>``. With ``via_explore`` it runs Explore first and then switches, as a user who
    walked there does (a test about what Explore leaves behind). Opening directly saved a whole
    Explore run (~1.5–3 s of CPU on SMALL) in each of the ~130 opens of another page (issue 45)."""
    at = AppTest.from_file(str(MAIN), default_timeout=TIMEOUT)
    at.query_params.update(query)
    if page is not None and via_explore:
        at.run()
    if page is not None:
        at.switch_page(f"views/{page}.py")
    return at.run()


def texts(at: AppTest) -> str:
    """All markdown, captions, errors, warnings and infos on the page, joined."""
    parts = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return "\n".join(parts)


def metric(at: AppTest, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"No metric {label!r}; metrics: {[m.label for m in at.metric]}")


def container(at: AppTest, key: str):
    """The block (st.container / st.form ...) created with ``key``, searched in main and sidebar."""
    stack = [at.main, at.sidebar]
    while stack:
        node = stack.pop()
        if getattr(node, "key", None) == key:
            return node
        stack.extend(getattr(node, "children", {}).values())
    raise AssertionError(f"No container with key {key!r}")


def has_container(at: AppTest, key: str) -> bool:
    try:
        container(at, key)
    except AssertionError:
        return False
    return True


#: The main privacy number of Explore's readout (app.components.controls.ROW_METRIC).
ROW_METRIC = "Privacy per row of your data"


def row_guarantee(at: AppTest) -> tuple[float, float]:
    """(ε, δ) per row from the readout's main metric "ε = 17.1 · δ = 0.0013"."""
    value = metric(at, ROW_METRIC)
    eps, delta = (part.split("=")[1].strip() for part in value.split("·"))
    return float(eps), float(delta)


def paper_eps(at: AppTest) -> float:
    """The paper's per-tuple ε from the readout's secondary line."""
    import re

    m = re.search(r"ε = ([0-9.e+-]+) per tuple", texts(at))
    if m is None:
        raise AssertionError("No per-tuple ε line on the page")
    return float(m.group(1))


def finish_job(at: AppTest, slot: str) -> None:
    """Wait for the page's background job (app.components.jobs) to end, then rerun the page (a
    browser's polling fragment does that rerun by itself)."""
    job = at.session_state[f"_job_{slot}"]
    assert job.wait(TIMEOUT), f"the {slot} job did not finish in {TIMEOUT} s"
    at.run()


def hand_over_rho(at: AppTest, rho: float) -> AppTest:
    """Open FriendlyCore's run at the row-level target of the own budget ``rho`` (δ as set), as an
    old ρ link does (``app/components/state.LINK_RHO``, converted once by the plan's rule), and
    rerun. Tests that need FriendlyCore's core to answer use it: on the row-level ε slider (δ ≤ 1e-6
    per row) the teaching data's core completes at no grid ε (the plan gives a tiny own δ)."""
    at.session_state["_link_rho"] = float(rho)
    return at.run()


def fill_release_form(at: AppTest, *, algorithm: str, k: int, n: int, eps: float | None = None,
                      identity: str | None = None) -> None:
    """Fill the Release page's form (identity, algorithm, k, ε, declared n) and tick its three
    confirmations, rerunning as the browser does; the page raises nothing."""
    if identity is not None:
        at.text_input(key="release_dataset_id").input(identity)
    at.selectbox(key="release_algorithm").set_value(algorithm)
    at.number_input(key="release_k").set_value(k)
    if eps is not None:
        at.number_input(key="release_eps").set_value(eps)
    at.number_input(key="release_n").set_value(n)
    at.run()
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        at.checkbox(key=key).check()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def click_release(at: AppTest) -> None:
    """Click the Release page's button; when it started a release job (app.components.jobs, slot
    "release") that the page has not shown finished yet, wait for it to end and rerun the page, as
    the browser's polling fragment does (a job that ended within the click's run is shown then)."""
    def get(key: str):
        try:
            return at.session_state[key]
        except KeyError:
            return None

    before = get("_job_release")
    at.button(key="release_button").click().run()
    started = get("_job_release")
    if started is not None and started is not before and started.info["id"] not in (
            get("_release_jobs_seen") or ()):
        assert started.wait(TIMEOUT), f"the release job did not finish in {TIMEOUT} s"
        at.run()
