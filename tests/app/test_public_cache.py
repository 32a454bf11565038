"""Issue 46 item 1: what every session computes on public data is computed once for the server.

A seeded simulation of a public dataset (a generated recipe, a built-in table), its statement,
the slider's core mark and the figures' JSON are the same for every session that asks, so they
live in one bounded process-wide cache (``cache.PUBLIC``); an upload's never do. Sessions asking
for a value being computed wait for that one computation. And the admission queue tells a
waiting session when its run starts. Streamlit's bare mode (``st.session_state`` is one
per-process dict: clearing its caches stands for a new session), as tests/app/test_shared_stage.py.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import dpviz.data
import dpviz.viz.main_panel
from app.components import cache, controls, simulation
from app.components import run as shared
from app.components.friendlycore import live, run

WAIT = 20  # seconds: a deadline for explicit states, never a timing the test relies on


def _new_session() -> None:
    for key in [k for k in st.session_state if str(k).startswith("_cache_")]:
        del st.session_state[key]


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    monkeypatch.setattr(cache, "PUBLIC", cache.PublicCache(cache.PUBLIC_SIZES))
    monkeypatch.setattr(simulation, "_SHARED", type(simulation._SHARED)())
    monkeypatch.setattr(simulation, "_KEY_LOCKS", {})
    _new_session()
    yield
    _new_session()


def _cfg(ds, eps=3.0):
    return run.RunConfig(k=3, t=20, oracle="kmeans++", seed=0, rho=None, delta=1e-6,
                         radius=float(ds.radius), r_min=0.001, preset="practical", eps=eps)


def _shared_objects() -> list:
    return [v for lru in cache.PUBLIC._lrus.values() for v in lru.values()]


def _session_view(ds, cfg):
    """What a session's first screen computes on the live path: the run, its statement, the
    slider's core mark, the reference and the live figure's JSON."""
    stage = run.tuple_stage(ds, cfg)
    result = run.private_run(ds, stage, cfg)
    ref = shared.reference(ds, cfg.k)
    return dict(result=result, statement=run.statement(ds, cfg, result),
                mark=run.core_eps(ds, stage, cfg, controls.EPS_GRID[-4:]), ref=ref,
                figure=live.live_figure(result, cfg.private_key(ds), ds, ref, vector=False))


def test_a_public_datasets_runs_and_figures_are_computed_once_for_the_server(fresh, monkeypatch):
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    assert simulation.is_public(ds)
    calls = []
    real_run = simulation.dpviz.run
    monkeypatch.setattr(simulation.dpviz, "run", lambda *a, **kw: calls.append(1) or real_run(*a, **kw))
    first = _session_view(ds, _cfg(ds))
    runs_first = len(calls)
    assert runs_first >= 2  # the shown run and core_eps' bisection over the grid
    _new_session()
    second = _session_view(ds, _cfg(ds))
    assert len(calls) == runs_first  # the second session ran nothing
    for name, value in first.items():
        assert second[name] is value, name  # the same objects, not equal copies
    # another ε is another run (the key has the target), computed once too
    _session_view(ds, _cfg(ds, eps=1.0))
    assert len(calls) == runs_first + 1


def test_an_uploads_runs_and_figures_stay_in_its_session(fresh):
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    upload = replace(ds, source="upload")  # the same rows and content hash: only the source differs
    assert not simulation.is_public(upload)
    mine = _session_view(upload, _cfg(upload))
    shared = _shared_objects()  # nothing of the upload reached the server-wide cache
    assert not any(v is x for v in shared for x in mine.values() if x is not None)
    assert run.private_run(upload, run.tuple_stage(upload, _cfg(upload)), _cfg(upload)) is mine["result"]
    _new_session()
    again = _session_view(upload, _cfg(upload))
    assert not any(v is x for v in _shared_objects() for x in [*mine.values(), *again.values()]
                   if x is not None)
    assert again["result"] is not mine["result"] and again["figure"] is not mine["figure"]
    assert again["figure"] == mine["figure"]  # the same seeded computation, computed again
    # and a public session afterwards does not see the upload's values either
    _new_session()
    public = _session_view(ds, _cfg(ds))
    assert public["result"] is not mine["result"] and public["result"] is not again["result"]


def test_sessions_asking_at_once_wait_for_one_computation():
    store = cache.PublicCache({"run": 4})
    release, calls, out = threading.Event(), [], []

    def compute():
        calls.append(1)
        assert release.wait(WAIT)
        return object()

    threads = [threading.Thread(target=lambda: out.append(store.get_or_compute("run", "k", compute)))
               for _ in range(6)]
    for th in threads:
        th.start()
    deadline = time.monotonic() + WAIT
    while store._computing.get(("run", "k"), [None, 0])[1] < 6:  # all six hold or wait for the key
        assert time.monotonic() < deadline, "the six sessions never all asked"
        time.sleep(0.01)
    release.set()
    for th in threads:
        th.join(WAIT)
    assert len(calls) == 1 and len(out) == 6 and all(v is out[0] for v in out)
    assert not store._computing  # no lock left behind


def test_the_public_cache_is_bounded_and_empties():
    store = cache.PublicCache({"run": 3})
    for i in range(5):
        store.get_or_compute("run", i, lambda i=i: i)
    assert len(store) == 3 and store.get("run", 0) is cache._MISSING and store.get("run", 4) == 4
    store.clear()
    assert len(store) == 0


def test_the_queue_message_says_when_the_run_starts():
    assert cache.queue_message(0, 2, None) == (
        "The server is busy: 2 runs are computing and no other run waits before yours. Your run "
        "starts as soon as one of them finishes.")
    assert cache.queue_message(1, 1, None).startswith(
        "The server is busy: 1 run is computing and 1 other run waits before yours.")
    # third in line behind two slots, 2 s a computation: (2 + 1) × 2 / 2 = 3 s
    assert cache.queue_message(2, 2, 2.0).endswith("2 other runs wait before yours. Your run starts "
                                                   "in about 3 s.")
    assert cache.queue_message(0, 1, 0.01).endswith("in about 1 s.")  # never "0 s"


def test_a_queued_run_waits_its_turn_and_is_told_when_it_starts(monkeypatch):
    shown: list[str] = []

    class Recorder:
        def show(self, text):
            shown.append(text)

        def clear(self):
            shown.append("cleared")

    monkeypatch.setattr(cache, "_QueueNotice", Recorder)
    adm = cache.Admission(1)
    adm.mean_s = 4.0  # as if the last computations took 4 s
    holding, release = threading.Event(), threading.Event()

    def hold():
        holding.set()
        assert release.wait(WAIT)
        return "first"

    first = threading.Thread(target=adm.run, args=(hold,))
    first.start()
    assert holding.wait(WAIT)
    out = []
    second = threading.Thread(target=lambda: out.append(adm.run(lambda: "second")))
    second.start()
    deadline = time.monotonic() + WAIT
    while not shown:  # the second run is in line and has been told so
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert out == []  # it has not run while the slot is held
    release.set()
    first.join(WAIT)
    second.join(WAIT)
    assert out == ["second"]
    assert shown[0] == cache.queue_message(0, 1, 4.0) and shown[0].endswith("in about 4 s.")
    assert shown[-1] == "cleared"


_NOTICE_PAGE = """
from app.components import cache
notice = cache._QueueNotice()
notice.show(cache.queue_message(3, 2, 1.5))
"""


def test_the_queue_message_is_on_the_waiting_sessions_page():
    at = AppTest.from_string(_NOTICE_PAGE, default_timeout=30).run()
    assert [e.value for e in at.info] == [cache.queue_message(3, 2, 1.5)]
    assert "Your run starts in about 3 s." in at.info[0].value


@pytest.mark.prefetch
def test_the_slider_is_warmed_once_for_the_server_and_never_for_an_upload(fresh, monkeypatch):
    monkeypatch.setenv("DPVIZ_PREFETCH", "1")
    # A worker of its own and an empty register of warm-ups: the app's one speculation worker may
    # still hold jobs an earlier test on this pytest worker queued, and the loop below waits until
    # the register is empty (a fresh-clone run timed out here behind test_two_sessions' jobs).
    from concurrent.futures import ThreadPoolExecutor

    own = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpviz-speculate-test")
    monkeypatch.setattr(cache, "_WORKER", own)
    monkeypatch.setattr(cache, "_WARMING", {})  # and only this test's warm-ups to wait for
    monkeypatch.setattr(controls, "EPS_GRID", (1.0, 3.0, 10.0))
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    cfg = _cfg(ds)
    stage, ref = run.tuple_stage(ds, cfg), shared.reference(ds, cfg.k)
    live.warm_slider(ds, stage, cfg, ref, 3.0, vector=False)
    deadline = time.monotonic() + 3 * WAIT
    while cache._WARMING:  # the worker has finished every job it was given
        assert time.monotonic() < deadline, "the warm-up did not finish"
        time.sleep(0.05)
    for eps in controls.EPS_GRID:
        key = cfg.at_eps(eps).private_key(ds)
        result = cache.PUBLIC.get("run", key)
        assert result is not cache._MISSING, eps
        assert cache.PUBLIC.get("live_figures", ("live", key, False)) is not cache._MISSING, eps
        assert cache.PUBLIC.get("statement", key) is not cache._MISSING, eps
        _new_session()  # another session's move there computes nothing: it gets the same run
        assert run.private_run(ds, stage, cfg.at_eps(eps)) is result
    live.warm_slider(ds, stage, cfg, ref, 10.0, vector=False)
    assert not cache._WARMING  # once for the server: nothing started again
    upload = replace(ds, source="upload")
    before = len(cache.PUBLIC)
    assert run.warm(upload, stage, _cfg(upload)) is None
    assert not cache._WARMING and len(cache.PUBLIC) == before


def test_the_main_panel_is_built_once_but_a_sessions_earlier_draws_stay_its_own(fresh):
    ds = dpviz.data.GENERATORS["fig3_three"](2_000, rng=0)
    cfg3, cfg10 = _cfg(ds), _cfg(ds, eps=10.0)
    stage, ref = run.tuple_stage(ds, cfg3), shared.reference(ds, cfg3.k)
    r3, r10 = run.private_run(ds, stage, cfg3), run.private_run(ds, stage, cfg10)
    k3, k10 = cfg3.private_key(ds), cfg10.private_key(ds)
    earlier = dpviz.viz.main_panel.EARLIER_NAME.split(" (")[0]  # the faint trace's name (wrapped)

    def new_session():
        _new_session()
        for key in (live.DRAWS, live.MAGNIFICATION):
            st.session_state.pop(key, None)

    new_session()
    assert earlier not in live.main_panel(r3, k3, ds, ref, cfg3)  # session A opens at ε = 3 ...
    mine = live.main_panel(r10, k10, ds, ref, cfg10)  # ... and moves to 10: 3's centers drawn faintly
    assert earlier in mine
    new_session()  # session B opens at ε = 3 too: the same shared panel, none of A's draws
    theirs = live.main_panel(r3, k3, ds, ref, cfg3)
    assert earlier not in theirs
    shared_panels = [v for v in cache.PUBLIC._lrus["main_panels"].values()]
    assert any(text is theirs for _, text in shared_panels)  # the very string, built once
    assert not any(earlier in text for _, text in shared_panels)  # no session's draws in it
