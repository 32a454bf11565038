"""The Compare page under AppTest: a toy algorithm registered in the test appears in the
algorithm list, gets a generated parameter form and a curve, at the same row-level target."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pytest
from apptest_helpers import SMALL, container, finish_job, open_app, texts

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace
from dpviz.registry import AlgorithmSpec, check_hinted, hint, register, unregister
from dpviz.result import Result, Trace
from dpviz.sweeps import REFERENCE


@dataclass(frozen=True)
class PageToyParams:
    shift: float = field(default=0.0, metadata=hint(low=-1.0, high=1.0, label="shift",
                                                    help="added to every center"))
    mode: str = field(default="mean", metadata=hint(choices=("mean", "zero")))

    def __post_init__(self) -> None:
        check_hinted(self, "Page toy")


def _private(X, k, budget, *, radius, rng, pub, params, stage=None):
    """k copies of a Laplace mean of the clipped rows (ε-DP)."""
    ledger = Ledger("page toy", budget.to_zcdp())
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    Xc = X * np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    total = laplace(Xc.sum(axis=0), sensitivity=radius * X.shape[1] ** 0.5, eps=budget.eps, rng=rng,
                    ledger=ledger, name="sum")
    trace = Trace()
    trace.add("toy_sum", released=True, total=total)
    center = total / pub.n_declared if params.mode == "mean" else np.zeros(X.shape[1])
    return Result(np.tile(center + params.shift, (k, 1)), None, ledger, trace.freeze())


@pytest.fixture
def page_toy():
    spec = register(AlgorithmSpec(
        name="page_toy", title="Page toy mean", paper="A. Toy. Means in tests. 2026",
        budget_kind="pure", params=PageToyParams, private=_private,
        guarantee=lambda b, pub, p, dp: ApproxDP(b.eps, 0.0), description="A noisy mean, k times."))
    yield spec
    unregister("page_toy")


#: A cell: the median and its q10–q90 spread, two decimals at most ("0.76 (0.1–0.96)", "0 (0–0)").
CELL = r"\d(\.\d{1,2})? \(\d(\.\d{1,2})?–\d(\.\d{1,2})?\)"
QUERY = {**SMALL, "cpts": "2", "celo": "1.0", "cehi": "10.0", "creps": "2"}


def test_a_registered_toy_appears_with_its_form_and_runs_beside_the_reference(page_toy):
    at = open_app("compare", **QUERY, calg="page_toy,dp_lloyd,kmeans++")
    assert not at.exception
    assert at.title[0].value.startswith("Compare")
    options = at.multiselect(key="compare_algorithms").options
    assert "Page toy mean" in options and any("friendlycore" in o or "FriendlyCore" in o for o in options)
    assert at.multiselect(key="compare_algorithms").value == ["page_toy", "dp_lloyd", "kmeans++"]
    guarantee = container(at, "compare_guarantee").info[0].value
    assert "same row-level guarantee" in guarantee and "not at the same nominal ρ" in guarantee
    page = texts(at)
    assert "A. Toy. Means in tests. 2026" in page  # the paper, one click away (an expander)
    assert at.number_input(key="cmp_page_toy_shift").value == 0.0
    assert at.selectbox(key="cmp_page_toy_mode").options == ["mean", "zero"]
    at.number_input(key="cmp_page_toy_shift").set_value(0.5)
    at.button(key="compare_run").click().run()
    finish_job(at, "compare")
    assert not at.exception
    keys = {getattr(c, "key", None) for c in at.get("plotly_chart")}
    assert keys == {"compare_loss"}  # at a glance: the rest one click away
    at.toggle(key="compare_more").set_value(True).run()
    keys = {getattr(c, "key", None) for c in at.get("plotly_chart")}
    assert {"compare_loss", "compare_labeling_failure", "compare_center_error", "compare_structure",
            "compare_seconds"} <= keys
    # At a glance (issue 27): the methods ranked, and one panel per method instead of a legend.
    rank = at.table[0].value
    assert list(rank["rank"]) == ["1", "2", "—"] and "non-private" in rank["method"].iloc[-1]
    assert [c for c in rank.columns if c.startswith("ε = ")] == ["ε = 1", "ε = 10"]
    loss = next(c for c in at.get("plotly_chart") if getattr(c, "key", None) == "compare_loss")
    import json

    layout = json.loads(loss.proto.spec)["layout"]
    assert not layout.get("showlegend", True) and "xaxis2" in layout
    summary = at.dataframe[-1].value  # the runs' table (the ranking is first)
    assert set(summary["algorithm"]) == {"page_toy", "dp_lloyd", "kmeans++"}
    toy = summary[summary.algorithm == "page_toy"]
    assert sorted(toy["epsilon"]) == [1.0, 10.0] and (toy["runs"] == 2).all()
    assert (toy["guarantee_eps"] <= toy["epsilon"] * (1 + 1e-12)).all()
    page = texts(at)
    assert "a **simulation**: seeded runs on the same rows" in page and REFERENCE in page
    assert "private release" not in page  # a simulation is not called a release (issue 36)
    assert "Done: 3 algorithm(s)" in container(at, "compare_state").info[0].value
    # The sweep used the form's parameters: the chunks ran with shift = 0.5.
    job = at.session_state["_job_compare"]
    assert job.key.params_of("page_toy").shift == 0.5 and len(job.parts) == job.key.total
    # A click on the toy's ε = 10 point opens it in Explore at that row-level ε with its parameters.
    from app.components.compare import explore_params

    params = explore_params("page_toy", 10.0, at.session_state["_compare_shown"])
    assert params == {"alg": "page_toy", "eps": 10.0, "k": 4, "seed": 1, "page_toy.shift": 0.5,
                      "delta": 1e-6}
    at.session_state["params"].update(params)  # what the chart's selection callback does
    at.session_state["_goto_explore"] = True
    at.run()
    assert not at.exception
    assert at.title[0].value.startswith("Explore")
    assert at.selectbox(key="ex_algorithm").value == "page_toy"
    assert at.select_slider(key="eps_slider").value == 10.0
    assert at.number_input(key="algp_page_toy_shift").value == 0.5


def test_a_click_on_a_friendlycore_point_opens_explore_at_its_calibrated_budget():
    at = open_app("compare", **{**QUERY, "calg": "friendlycore", "creps": "1", "cpts": "1", "cehi": "5.0"})
    at.button(key="compare_run").click().run()
    finish_job(at, "compare")
    assert not at.exception
    spec = at.session_state["_compare_shown"]
    from app.components.compare import explore_params

    params = explore_params("friendlycore", 5.0, spec)
    assert params["t"] == 75 and params["alg"] == "friendlycore"  # n / (10k)
    assert (params["eps"], params["delta"]) == (5.0, spec.delta) and "rho" not in params
    from dpviz.registry import Public, get
    from dpviz.sweeps import calibrated

    pub = Public(spec.n_declared, spec.d, spec.k, spec.radius)
    want = calibrated(get("friendlycore"), 5.0, spec.delta, pub, spec.params_of("friendlycore")).budget.rho
    # what the chart's selection callback does, then the page switch on the next run
    at.session_state["params"].update(params)
    at.session_state["_goto_explore"] = True
    at.run()
    assert not at.exception
    assert at.title[0].value.startswith("Explore")
    assert at.select_slider(key="eps_slider").value == 5.0  # Explore's main control for every algorithm
    readout = " ".join(str(e.value) for e in container(at, "own_budget_readout").caption)
    assert f"ρ = {want:.4g} " in readout  # the same plan's ρ as the comparison's
    # Explore's own row-level ε for that budget is the comparison's target (same accounting)
    from apptest_helpers import row_guarantee

    assert row_guarantee(at)[0] == pytest.approx(5.0, rel=2e-2)


def test_no_algorithm_exception_when_the_page_has_no_run_yet():
    at = open_app("compare", **SMALL)
    assert not at.exception
    assert "Press **Run comparison**" in texts(at) or "Run comparison" in texts(at)


def test_the_budget_page_lists_every_registered_algorithm_a_rho_sweep_can_run(page_toy):
    at = open_app("budget", **SMALL, balg="page_toy,kmeans++")
    assert not at.exception
    picker = at.multiselect(key="budget_algorithms")
    assert "Page toy mean" in picker.options and "FriendlyCore (practical split)" in picker.options
    assert picker.value == ["page_toy", "kmeans++"]
def test_a_click_on_another_algorithm_opens_its_explore_view_at_that_epsilon():
    at = open_app("compare", **{**QUERY, "calg": "dp_lloyd", "creps": "1", "cpts": "1", "cehi": "2.0"})
    at.button(key="compare_run").click().run()
    finish_job(at, "compare")
    spec = at.session_state["_compare_shown"]
    from app.components.compare import explore_params

    params = explore_params("dp_lloyd", 2.0, spec)
    assert params["alg"] == "dp_lloyd" and params["eps"] == 2.0
    at.session_state["params"].update(params)
    at.session_state["_goto_explore"] = True
    at.run()
    assert not at.exception
    assert at.selectbox(key="ex_algorithm").value == "dp_lloyd"
    assert at.select_slider(key="eps_slider").value == 2.0


def _stopping_private(X, k, budget, *, radius, rng, pub, params, stage=None):
    """The page toy, pressing Stop while it runs (what a Stop click's callback does)."""
    from app.components import jobs

    jobs.this_job().cancel.set()
    return _private(X, k, budget, radius=radius, rng=rng, pub=pub, params=params, stage=stage)


def test_stop_keeps_the_finished_runs_and_says_so():
    register(AlgorithmSpec(
        name="stopper", title="Stopping toy", paper="none", budget_kind="pure", params=PageToyParams,
        private=_stopping_private, guarantee=lambda b, pub, p, dp: ApproxDP(b.eps, 0.0)))
    try:
        at = open_app("compare", **{**QUERY, "calg": "stopper,origin", "cpts": "1", "creps": "2"})
        at.button(key="compare_run").click().run()
        finish_job(at, "compare")
        assert not at.exception
        assert not at.session_state["_job_compare"].running
        warning = " ".join(w.value for w in at.warning)
        assert "Stopped after 1 of 4 runs" in warning  # 2 algorithms × 2 repetitions
        summary = at.dataframe[-1].value  # the runs' table (the ranking is first)
        assert list(summary["algorithm"]) == ["stopper"] and list(summary["runs"]) == [1]
    finally:
        unregister("stopper")


def test_a_shared_compare_link_opens_drawn_without_recomputing():
    """Issue 27: a shared Compare link recomputed (25–60 s). A complete comparison on public data
    is shared on the server (and the presets' defaults are precomputed): another session opening
    the same link sees it at once, with no job started."""
    q = {**QUERY, "calg": "dp_lloyd,kmeans++", "creps": "1", "seed": "23"}
    a = open_app("compare", **q)
    a.button(key="compare_run").click().run()
    finish_job(a, "compare")
    ran = a.dataframe[-1].value
    b = open_app("compare", **q)
    assert not b.exception
    assert "_job_compare" not in b.session_state or not b.session_state["_job_compare"].running
    assert any(getattr(c, "key", None) == "compare_loss" for c in b.get("plotly_chart"))
    import pandas as pd

    pd.testing.assert_frame_equal(b.dataframe[-1].value, ran)


def test_the_run_state_is_one_of_idle_running_done_never_two(monkeypatch):
    """Issue 36: right after Run the page said "Press Run comparison" beside a running progress
    bar. Idle says press Run; running says running (and how far), with no "Press Run"; done says
    done. The job's pieces wait on a gate, so the job is surely running when the page is read."""
    import threading

    from app.components import sweep

    gate, piece = threading.Event(), sweep.compare_piece

    def gated(*args, **kwargs):
        gate.wait(60)
        return piece(*args, **kwargs)

    monkeypatch.setattr(sweep, "compare_piece", gated)
    at = open_app("compare", **{**QUERY, "calg": "dp_lloyd", "creps": "1", "cpts": "1"})
    assert not at.exception
    assert container(at, "compare_state").info[0].value.startswith("Press **Run comparison**")
    at.button(key="compare_run").click().run()
    job = at.session_state["_job_compare"]
    assert job.running
    running = container(at, "compare_state").info[0].value
    assert running.startswith("Running the comparison") and "(0 of 1 so far)" in running
    assert "Press **Run comparison**" not in texts(at)
    gate.set()
    finish_job(at, "compare")
    assert container(at, "compare_state").info[0].value.startswith("Done: 1 algorithm(s)")
    assert "Press **Run comparison**" not in texts(at) and "Running" not in texts(at)


def test_the_default_set_follows_the_shape_and_the_ranking_shows_its_rule_spread_and_ties(page_toy):
    """Issue 43: the default methods come from the public rule (dpviz.compare_set) for the data's
    shape; the ranking says its rule in words, shows each cell's q10–q90 spread, and shows ties as
    ties (the toy answering the origin ties the origin itself)."""
    from dpviz.compare_set import default_methods

    at = open_app("compare", **SMALL)
    assert not at.exception
    want = default_methods(3000, 2, 4, (0.5, 1.36, 3.68, 10.0), 1e-6, 3.0)
    assert at.multiselect(key="compare_algorithms").value == want
    assert {"auto", "friendlycore", "dp_lloyd"} <= set(want)
    assert "never from the rows" in texts(at)
    at = open_app("compare", **{**QUERY, "calg": "page_toy,origin,kmeans++", "creps": "10",
                                "page_toy.mode": "zero"})
    at.button(key="compare_run").click().run()
    finish_job(at, "compare")
    assert not at.exception
    ranking = container(at, "compare_ranking")
    words = " ".join(m.value for m in ranking.markdown)
    assert "Ranked by reach over the whole ε range" in words and "smallest row-level ε" in words
    assert "Tied" in words and "Page toy mean" in words
    rank = at.table[0].value
    assert list(rank["rank"]) == ["1=", "1=", "—"]
    assert "median (q10–q90) of 10 runs" in words and "runs" not in rank.columns
    cell = rank["ε = 10"].iloc[0]
    assert re.fullmatch(CELL, cell), cell  # median (q10–q90)
    assert rank["reach ε"].iloc[0] == "never"  # the origin is never within 0.1

