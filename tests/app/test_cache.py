"""app/components/cache.py: the session LRUs and speculation on the background worker.

Runs in Streamlit's bare mode (no script run: ``st.session_state`` is a plain per-process
state), with a job that holds the single worker so that others stay queued.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import streamlit as st

from app.components import cache

WAIT = 10  # seconds; the jobs themselves take microseconds


@pytest.fixture(autouse=True)
def _fresh_session(monkeypatch) -> Iterator[None]:
    monkeypatch.delenv("DPVIZ_PREFETCH", raising=False)
    for key in [k for k in st.session_state if str(k).startswith("_cache_")]:
        del st.session_state[key]
    yield


@pytest.fixture
def busy_worker() -> Iterator[threading.Event]:
    """Occupy the worker until the returned event is set (set at the end in any case)."""
    started, release = threading.Event(), threading.Event()

    def hold() -> str:
        started.set()
        release.wait(WAIT)
        return "held"

    cache.speculate("run", "holder", hold)
    assert started.wait(WAIT)
    yield release
    release.set()


def test_memo_waits_for_a_speculation_the_worker_is_on(busy_worker):
    busy_worker.set()
    assert cache.memo("run", "holder", lambda: "computed here") == "held"


def test_memo_computes_a_queued_speculation_itself_instead_of_waiting(busy_worker):
    queued = cache.speculate("run", "wanted", lambda: "from the worker")
    assert cache.memo("run", "wanted", lambda: "computed here") == "computed here"
    assert queued.cancelled()
    assert cache.peek("run", "wanted") == "computed here"


def test_cancel_queued_withdraws_only_what_has_not_started(busy_worker):
    for key in ("a", "b"):
        cache.speculate("statement", key, lambda key=key: key)
    cache.cancel_queued("run", "statement")
    assert list(cache.session_lru("statement")) == []
    assert list(cache.session_lru("run")) == ["holder"]  # running: kept
    again = cache.speculate("statement", "a", lambda: "a again")
    busy_worker.set()
    assert again.result(WAIT) == "a again"
    assert cache.memo("statement", "a", lambda: "computed here") == "a again"


def test_a_failed_speculation_is_computed_in_the_script():
    def fail() -> str:
        raise RuntimeError("worker failure")

    cache.speculate("run", "bad", fail).exception(WAIT)
    assert cache.peek("run", "bad") is None
    assert cache.memo("run", "bad", lambda: "computed here") == "computed here"


def test_speculation_off_computes_nothing_in_the_background(monkeypatch):
    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    assert cache.speculate("run", "x", lambda: "never") is None
    assert cache.peek("run", "x") is None


def test_lru_evicts_the_oldest_and_cancels_a_queued_eviction(busy_worker):
    size = cache.SIZES["live_figures"]
    queued = cache.speculate("live_figures", "first", lambda: "first")
    for i in range(size):
        cache.put("live_figures", i, i)
    assert "first" not in cache.session_lru("live_figures")
    assert queued.cancelled()
    assert list(cache.session_lru("live_figures")) == list(range(size))


def test_a_queued_speculation_computed_here_raises_its_error_once(busy_worker):
    cache.speculate("run", "bad", lambda: "from the worker")
    calls = []

    def compute() -> str:
        calls.append(1)
        raise ValueError("bad knobs")

    with pytest.raises(ValueError, match="bad knobs"):
        cache.memo("run", "bad", compute)
    assert calls == [1]


def test_admission_runs_at_most_limit_at_once_in_arrival_order_and_nested_calls_pass():
    import threading
    import time

    from app.components.cache import Admission

    adm = Admission(1)
    order, inside, peak = [], [0], [0]
    gate = threading.Event()

    def work(name):
        def compute():
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
            if name == "first":
                gate.wait(5)
            order.append(name)
            inside[0] -= 1
            return adm.run(lambda: name)  # nested: no second slot, no deadlock
        return adm.run(compute)

    first = threading.Thread(target=work, args=("first",))
    first.start()
    while not adm.busy():
        time.sleep(0.01)
    waiters = []
    for name in ("second", "third"):
        waiters.append(threading.Thread(target=work, args=(name,)))
        waiters[-1].start()
        while len(adm._queue) < len(waiters):  # queued in this order
            time.sleep(0.01)
    assert order == [] and adm.busy()
    gate.set()
    for t in (first, *waiters):
        t.join(10)
    assert order == ["first", "second", "third"] and peak[0] == 1
    assert not adm.busy()


def test_speculation_is_skipped_while_the_server_is_busy(monkeypatch):
    from app.components import cache

    monkeypatch.setattr(cache.ADMISSION, "busy", lambda: True)
    assert cache.speculate("run", ("busy-key",), lambda: 1) is None
    assert "busy-key" not in str(list(cache.session_lru("run")))


def test_release_memory_runs():
    from app.components import cache

    cache.release_memory()  # gc + glibc malloc_trim (a no-op where there is no glibc)
