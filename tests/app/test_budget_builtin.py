"""Issue 36: following the README, Budget after "pick a built-in table" was empty (a built-in table
is not a preset, so no curves until Run). A built-in table's sweep starts when the page opens."""

from __future__ import annotations

from apptest_helpers import container, finish_job, open_app, texts


def test_budget_on_a_builtin_table_starts_its_sweep_and_draws_the_curves():
    at = open_app("budget", src="builtin", builtin="iris", k="3", t="10")
    assert not at.exception, [e.value for e in at.exception]
    job = at.session_state["_job_budget"]
    assert job.key.kind == "epsilon" and job.key.k == 3
    if job.running:
        assert "started when the page opened" in container(at, "budget_auto").info[0].value
    assert "Press **Run sweep**" not in texts(at)
    finish_job(at, "budget")
    assert not at.exception
    keys = {getattr(c, "key", None) for c in at.get("plotly_chart")}
    assert {"budget_accuracy", "budget_success"} <= keys
    at.run()  # once per session: a finished sweep is not started again
    assert at.session_state["_job_budget"] is job


def test_generated_data_still_waits_for_run():
    at = open_app("budget", src="generate", n="3000", k="4", t="60", gk="4", seed="1")
    assert not at.exception
    assert "Press **Run sweep**" in texts(at)
