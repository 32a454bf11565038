"""The job panel's poller (app/components/jobs.py, issue 38): a ``run_every`` fragment exists only
while a job runs. A poller left on a page whose job had ended kept a browser timer that could fire
during ``st.switch_page`` (Compare's chart click → Explore); the frontend then pruned the new
page's elements and Explore stayed blank (the click test's flake under load)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page(hold: bool) -> None:
    """A page with one job in slot "t" (held open until the test releases it) and its panel; the
    test counts the ``run_every`` fragments the panel registers."""
    import threading

    import streamlit as st

    from app.components import jobs

    calls = st.session_state.setdefault("_spy", [])
    real = st.fragment

    def spy(func=None, *, run_every=None):
        calls.append(run_every)
        return real(func, run_every=run_every) if func is not None else real(run_every=run_every)

    st.fragment = spy
    try:
        if jobs.current("t") is None:
            gate = st.session_state.setdefault("_gate", threading.Event())
            jobs.start("t", "k", lambda job: gate.wait(30) if hold else None)
        jobs.panel("t", key="t_progress", stop_key="t_stop")
    finally:
        st.fragment = real


def _job_done(at: AppTest) -> None:
    job = at.session_state["_job_t"]
    assert job.done.wait(30)


def test_a_running_job_is_polled_and_a_finished_one_registers_no_poller():
    at = AppTest.from_function(_page, kwargs={"hold": True}, default_timeout=30)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["_spy"] == [0.5]  # running: polled every half second
    at.session_state["_gate"].set()
    _job_done(at)
    at.session_state["_spy"] = []
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["_spy"] == []  # ended: no run_every fragment on the page


def test_a_job_that_ends_before_the_page_draws_registers_no_poller():
    at = AppTest.from_function(_page, kwargs={"hold": False}, default_timeout=30)
    at.run()
    _job_done(at)
    at.session_state["_spy"] = []
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["_spy"] == []
