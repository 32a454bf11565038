"""The app's automatic t (issue 33 item 3): t = 0 is FriendlyCore's own choice from the declared n
and k (``auto_n_tuples``, public inputs only), end to end: the URL, the sidebar form, Explore's
tuple stage and plan, the Data page's verdict and the Budget page's sweep."""

from __future__ import annotations

from apptest_helpers import SMALL, finish_job, open_app

from dpviz.clustering.friendlycore.spec import auto_n_tuples


def _text(at, key: str) -> str:
    from apptest_helpers import container

    return " ".join(str(e.value) for e in container(at, key).error)


def test_t_zero_is_the_automatic_t_in_explore_and_its_plan():
    at = open_app(**{**SMALL, "t": "0"})
    assert not at.exception, [e.value for e in at.exception]
    want = auto_n_tuples(3000, 4)
    _ds, stage, cfg = at.session_state["_explore_last"]
    assert cfg.t == want and stage.tuples.shape[0] == want  # the pieces the spec's rule picks
    result = at.session_state["_explore_last_result"][1]
    assert result.params["n_tuples"] == want  # the run (and its plan) used that t
    assert at.session_state["params"]["t"] == 0  # the parameter stays "automatic"
    assert at.query_params["friendlycore.n_tuples"] == "0"
    assert f"t = {want:,} (automatic, from n and k)" in " ".join(m.value for m in at.markdown)


def test_the_form_accepts_zero_and_refuses_one():
    at = open_app(**SMALL)
    at.number_input(key="ex_t").set_value(1)
    at.button(key="ex_apply").click().run()
    assert not at.exception
    assert "or 0 for automatic" in _text(at, "ex_t_msg") and at.session_state["params"]["t"] == 60
    at.number_input(key="ex_t").set_value(0)
    at.button(key="ex_apply").click().run()
    assert not at.exception and at.session_state["params"]["t"] == 0
    assert at.session_state["_explore_last"][2].t == auto_n_tuples(3000, 4)


def test_a_bad_t_in_a_link_is_refused_with_a_notice():
    at = open_app(**{**SMALL, "t": "1"})
    assert not at.exception
    assert "t='1' ignored" in " ".join(w.value for w in at.warning)


def test_the_budget_sweep_runs_at_the_automatic_t():
    at = open_app("budget", **{**SMALL, "t": "0"}, balg="friendlycore", blo="1.0", bhi="2.0", bpts="2",
                  breps="1")
    assert not at.exception
    assert "t = automatic" in " ".join(m.value for m in at.markdown)
    at.button(key="budget_run").click().run()
    finish_job(at, "budget")
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.dataframe[0].value["algorithm"]) == {"friendlycore"}
