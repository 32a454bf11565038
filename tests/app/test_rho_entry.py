"""A ρ the user types (issue 33 item 3): users who think in zCDP type ρ (with δ); it is converted
once, by the plan's rule (``budget_from_rho`` → ``plan_at_budget``), into the row-level target
(ε, δ) the run is then planned from, and the page shows both. No ρ is kept as a parameter."""

from __future__ import annotations

from apptest_helpers import SMALL, container, open_app

from dpviz.registry import Public, budget_from_rho, get, plan, plan_at_budget


def _note(at) -> str:
    return " ".join(str(e.value) for e in container(at, "rho_entry_note").caption)


def test_a_typed_rho_becomes_the_row_level_target_and_the_page_shows_both():
    at = open_app(**SMALL)
    assert not at.exception
    at.number_input(key="rho_entry").set_value(0.01).run()
    assert not at.exception
    spec = get("friendlycore")
    pub, params = Public(3000, 2, 4, 1.0), spec.make_params(n_tuples=60, r_min=0.001)
    g = plan_at_budget(spec, budget_from_rho("zcdp", 0.01, 1e-6), pub, params).guarantee
    p = at.session_state["params"]
    assert (p["eps"], p["delta"]) == (g.eps, g.delta) and "rho" not in p
    assert "_link_rho" not in at.session_state
    assert at.select_slider(key="eps_slider").value == g.eps
    note = _note(at)
    assert "ρ = 0.01" in note and f"ε = {g.eps:.3g}" in note and f"δ = {g.delta:.2g}" in note
    want = plan(spec, g.eps, g.delta, pub, params)  # the run is planned from that target
    assert at.session_state["_explore_last_result"][1].plan.budget == want.budget
    assert dict(at.query_params)["eps"] == repr(g.eps) and "friendlycore.rho" not in dict(at.query_params)


def test_a_typed_rho_with_a_vacuous_row_level_delta_sets_no_target():
    at = open_app(**SMALL)
    at.number_input(key="rho_entry").set_value(10.0).run()
    assert not at.exception
    assert at.session_state["params"]["eps"] == 3.0  # unchanged
    assert "guarantees only δ = 1 per row" in _note(at)
