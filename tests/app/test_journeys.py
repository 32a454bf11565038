"""Issue 16: the teacher's and the stakeholder's journeys through Explore (AppTest).

Privacy in words next to the slider, a target ε that sets ρ, honest labels for the fallback,
and the bugs the issue lists. Small data (apptest_helpers.SMALL) keeps each test short.
"""

from __future__ import annotations

import pytest
from apptest_helpers import SMALL, container, open_app, paper_eps, row_guarantee, texts
from streamlit.testing.v1 import AppTest

from dpviz.privacy import row_level_statement
from dpviz.viz.privacy import strength_band


def _result(at: AppTest):
    return at.session_state["_explore_last_result"][1]


def _text(at: AppTest, key: str) -> str:
    """Every text value inside the container ``key`` (alerts, markdown, captions)."""
    out, stack = [], [container(at, key)]
    while stack:
        node = stack.pop()
        if hasattr(node, "value") and isinstance(getattr(node, "value", None), str):
            out.append(node.value)
        stack.extend(getattr(node, "children", {}).values())
    return "\n".join(out)


# ----------------------------------------------------------------------------- privacy in words


def test_readout_gives_row_level_eps_and_delta_band_odds_and_paper_line():
    at = open_app(**SMALL)
    assert not at.exception
    eps, delta = row_guarantee(at)
    # the main number is the run's own row-level statement (ε and δ together), not the paper's
    fresh = row_level_statement(_result(at).ledger, 1e-6)
    assert eps == pytest.approx(fresh.row.eps, rel=5e-3)
    assert delta == pytest.approx(fresh.row.delta, rel=5e-2)
    page = texts(at)
    band = strength_band(fresh.row.eps, fresh.row.delta, 3000).band
    assert f"Privacy strength: **{band}**" in page
    assert "changes the probability of any outcome by at most a factor" in page
    # the paper's per-tuple ε is the secondary line, smaller than the per-row one
    assert paper_eps(at) == pytest.approx(fresh.paper_dp.eps, rel=5e-3) and paper_eps(at) < eps


def test_target_eps_sets_rho_and_the_readout_meets_it():
    at = open_app(**SMALL)
    rho_before = at.select_slider(key="rho_slider").value
    at.number_input(key="eps_target").set_value(5.0)
    at.button(key="eps_target_apply").click().run()
    assert not at.exception
    rho = at.select_slider(key="rho_slider").value
    assert rho != rho_before and at.query_params["rho"] == repr(float(rho))
    eps, delta = row_guarantee(at)
    # the shown guarantee (from the new run's ledger) is the target, within the bisection width
    assert eps == pytest.approx(5.0, rel=2e-2) and delta <= 1e-6 * 1.01
    assert "Privacy strength: **weak**" in texts(at)
    assert "within your target (ε = 5, δ = 1e-06)" in texts(at)


def test_target_without_eps_asks_for_it_and_keeps_rho():
    at = open_app(**SMALL)
    rho_before = at.select_slider(key="rho_slider").value
    at.button(key="eps_target_apply").click().run()
    assert not at.exception
    assert at.select_slider(key="rho_slider").value == rho_before
    assert any("Type the row-level ε you need first" in str(e.value) for e in at.error)


def test_learn_eps_table_is_per_row_and_agrees_with_a_run_ledger():
    """Learn's FriendlyCore column is the row-level (ε, δ) the run's own ledger states."""
    import numpy as np

    from dpviz.clustering.friendlycore import fc_private_stage, fc_tuple_stage
    from dpviz.data import GENERATORS

    at = open_app("learn", **SMALL)
    assert not at.exception
    frame = next(df.value for df in at.dataframe if "FriendlyCore at this ρ: (ε, δ) per row" in df.value)
    row = frame[frame["δ"] == "10⁻⁶"].iloc[0]
    ds = GENERATORS["fig3_three"](20_000, rng=0)
    stage = fc_tuple_stage(ds.X, 3, n_tuples=200, radius=1.0, rng=np.random.default_rng(0))
    result = fc_private_stage(ds.X, stage, rho=1.0, delta=1e-6, radius=1.0, r_min=0.001,
                              n_declared=20_000, rng=np.random.default_rng(0))
    fresh = row_level_statement(result.ledger, 1e-6).row
    eps, delta = (float(v) for v in row["FriendlyCore at this ρ: (ε, δ) per row"].strip("()").split(","))
    assert eps == pytest.approx(fresh.eps, rel=5e-3) and delta == pytest.approx(fresh.delta, rel=5e-2)
    assert "per ROW" in texts(at)


# ----------------------------------------------------------------------------- honest labels


def test_status_in_plain_words_and_the_fallback_switch():
    at = open_app(**SMALL, rho="0.001")
    status = _text(at, "run_status")
    assert "The 60 pieces did not agree enough for FriendlyCore's core to form at this budget" in status
    assert "backup method (a private grid summary of the rows) answered instead" in status
    for internal in ("match_", "FriendlyCore(", "n̂", "FC_kTuple", "stopped after"):
        assert internal not in status
    assert _result(at).centers is not None
    at.toggle(key="fallback_toggle").set_value(False).run()
    assert not at.exception
    status = _text(at, "run_status")
    assert "the backup method is off, so no centers were released" in status
    assert _result(at).centers is None and at.query_params["fb"] == "false"
