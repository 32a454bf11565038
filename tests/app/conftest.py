"""App tests never write to the user's ~/.dpviz: every test gets its own ledger directory. Nor do
they read the committed precomputed sweeps (``DPVIZ_PRECOMPUTED=0``): a test's outcome never
depends on whether that file is current (tests/app/test_budget_shared.py checks the file itself)."""

from __future__ import annotations

import apptest_helpers  # noqa: F401  (its import scans Streamlit's components once for every AppTest here)
import pytest

from dpviz.privacy.ledger_store import ENV


@pytest.fixture(autouse=True)
def ledger_dir(tmp_path, monkeypatch):
    """A fresh ``$DPVIZ_LEDGER_DIR`` for each test (the persistent release ledger)."""
    path = tmp_path / "ledgers"
    monkeypatch.setenv(ENV, str(path))
    return path


@pytest.fixture(autouse=True)
def prefetch_only_where_tested(request, monkeypatch):
    """Work ahead (the speculation worker's neighbouring runs, figures and warm-ups) only in the
    tests marked ``prefetch``, whose subject it is; the others run as a server with
    ``DPVIZ_PREFETCH=0`` does. Here the worker is an ordinary thread (below), so in every Explore
    open it computed the neighbouring ε that no test looked at: 20–30 % of the CPU of app opens
    in a py-spy sample (issue 45). The browser modules with their own server (Explore's, the
    journeys') still run the app with prefetching on."""
    if request.node.get_closest_marker("prefetch") is None:
        monkeypatch.setenv("DPVIZ_PREFETCH", "0")


@pytest.fixture(autouse=True)
def no_precomputed_sweeps(monkeypatch):
    """Sweeps come from the session or the server's sessions, never from the committed file."""
    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "0")


@pytest.fixture(autouse=True, scope="session")
def speculation_gets_cpu_under_load():
    """The app's one speculation worker runs at SCHED_IDLE (app/components/cache.py): on a machine
    whose cores are all busy (a loaded CI box, pytest-xdist's other worker, two busy loops) it gets
    no CPU at all, and the tests that wait for a prefetched run or for the worker to start timed
    out (test_cache's busy_worker, the prefetch tests of test_app and test_one_path). They check
    what the worker computes and in what order, not its priority: here it is the same single
    worker, as an ordinary thread."""
    from concurrent.futures import ThreadPoolExecutor

    from app.components import cache

    idle = cache._WORKER
    cache._WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpviz-speculate")
    yield
    cache._WORKER.shutdown(wait=False, cancel_futures=True)
    cache._WORKER = idle


@pytest.fixture(autouse=True)
def fresh_public_values(monkeypatch):
    """Each test starts on a server that has computed nothing public yet (issue 46: the seeded runs
    and figures of public data are shared by every session of the process, ``cache.PUBLIC``), so
    that what a test computes does not depend on which tests ran before it in the same process."""
    from app.components import cache

    for queued in list(cache._WARMING.values()):  # an earlier test's warm-up not started yet
        queued.cancel()
    monkeypatch.setattr(cache, "PUBLIC", cache.PublicCache(cache.PUBLIC_SIZES))
