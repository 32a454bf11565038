"""The registry drives the app: a toy algorithm registered here appears and runs in Explore,
and every registered algorithm gets a generated form, a live ε and namespaced URL keys."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from apptest_helpers import SMALL, container, open_app, texts

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace
from dpviz.registry import AlgorithmSpec, check_hinted, hint, register, unregister
from dpviz.result import Result, Trace


@dataclass(frozen=True)
class ToyParams:
    shift: float = field(default=0.0, metadata=hint(low=-1.0, high=1.0, label="shift",
                                                    help="added to every center"))

    def __post_init__(self) -> None:
        check_hinted(self, "Toy mean")


def _toy(X, k, budget, *, radius, rng, pub, params, stage=None) -> Result:
    ledger = Ledger("toy", budget.to_zcdp())
    total = laplace(np.clip(X, -radius, radius).sum(axis=0), sensitivity=radius * X.shape[1],
                    eps=budget.eps, rng=rng, ledger=ledger, name="sum of clipped rows")
    trace = Trace()
    trace.add("toy_sum", released=True, total=total)
    return Result(np.tile(total / pub.n_declared + params.shift, (k, 1)), None, ledger, trace.freeze())


@pytest.fixture
def toy():
    register(AlgorithmSpec(name="toy", title="Toy mean (test)", paper="A test, 2026",
                           budget_kind="pure", params=ToyParams, private=_toy,
                           guarantee=lambda b, pub, p, dp: ApproxDP(b.eps, 0.0),
                           description="The clipped mean, k times."))
    yield
    unregister("toy")


def test_a_toy_algorithm_appears_in_explore_and_runs(toy):
    at = open_app(**SMALL, alg="toy", eps="2.0", **{"toy.shift": "0.25"})
    assert not at.exception
    picker = at.selectbox(key="ex_algorithm")
    assert "Toy mean (test)" in picker.options and picker.value == "toy"
    assert picker.options[0] == "FriendlyCore clustering"  # rank 0, the default
    page = texts(at)
    assert "Toy mean (test) released 4 centers" in page
    assert "Simulation — not a release" in page
    assert at.number_input(key="algp_toy_shift").value == 0.25
    at.segmented_control(key="alg_view").set_value("Privacy").run()
    assert "(ε = 2, δ = 0)-DP" in texts(at)
    table = container(at, "ledger_table").markdown[0].value.splitlines()  # the toy's one spend
    assert len(table) == 3 and "laplace" in table[2]
    at.segmented_control(key="alg_view").set_value("Downloads").run()
    assert [d.label for d in at.get("download_button")] == ["Centers (CSV, simulation)",
                                                            "Privacy ledger (CSV)"]


def test_every_registered_algorithm_renders_in_explore():
    """Every algorithm that serves the data (d = 2 here) renders; the others are listed with the
    registry's reason and a link to one opens FriendlyCore instead (issue 26)."""
    import dpviz

    for spec, why in dpviz.registry.applicability(2, private_only=True):
        at = open_app(**SMALL, alg=spec.name, eps="3.0")
        assert not at.exception, spec.name
        if why is not None:
            assert at.selectbox(key="ex_algorithm").value == "friendlycore"
            assert spec.name not in at.selectbox(key="ex_algorithm").options
            assert why in texts(at)
            assert any(why in str(w.value) and "instead" in str(w.value) for w in at.warning)
            continue
        assert at.selectbox(key="ex_algorithm").value == spec.name
        if spec.name != "friendlycore":
            refused = any("declared rows" in e.value for e in at.error)  # Easy Instances on 3 000 rows
            assert f"{spec.title} released" in texts(at) or "released no centers" in texts(at) or refused


def test_bad_namespaced_url_value_is_ignored_with_a_notice():
    at = open_app(**SMALL, alg="dp_lloyd", **{"dp_lloyd.iters": "0"})
    assert not at.exception
    # notices are markdown-escaped (a link's text is shown as text): compare without the escapes
    assert any("dp_lloyd.iters" in w.value.replace("\\", "") for w in at.warning)
    assert at.number_input(key="algp_dp_lloyd_iters").value == 5


def test_old_links_without_alg_open_friendlycore():
    at = open_app(**SMALL, rho="0.5")
    assert not at.exception
    assert at.selectbox(key="ex_algorithm").value == "friendlycore"
    assert "alg" not in at.query_params


def test_the_toy_algorithm_appears_on_every_page_that_lists_algorithms(toy):
    budget = open_app("budget", **SMALL)
    assert not budget.exception
    assert "Toy mean (test)" in budget.multiselect(key="budget_algorithms").options
    compare = open_app("compare", **SMALL)
    assert not compare.exception
    assert "toy" in texts(compare) or any("Toy mean (test)" in str(w.options)
                                          for w in compare.multiselect)
    release = open_app("release", **SMALL)
    assert not release.exception
    options = release.selectbox(key="release_algorithm").options
    assert any("toy" in o or "Toy mean (test)" in o for o in options)


def test_a_registered_exploration_is_a_view_with_cached_simulations(toy):
    """A family's extra view appears in Explore and simulates other budgets and parameters."""
    import json

    import plotly.graph_objects as go

    from dpviz.viz.storyboards import _EXPLORATIONS, register_exploration

    seen = []

    def shift_effect(ctx):
        other = ctx.simulate(epsilon=2 * ctx.epsilon, shift=0.5)
        seen.append((ctx.epsilon, other.guarantee.eps, float(other.centers[0, 0] - ctx.result.centers[0, 0])))
        return go.Figure(layout=dict(title=dict(text=f"toy view at ε={ctx.epsilon:g}")))

    register_exploration("toy", "Shift effect", shift_effect, help="What the shift does.")
    try:
        at = open_app(**SMALL, alg="toy", eps="2.0")
        view = at.segmented_control(key="alg_view")
        assert "Shift effect" in view.options
        view.set_value("Shift effect").run()
        assert not at.exception
        assert "What the shift does." in texts(at)
        charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
        assert any(c["layout"]["title"]["text"] == "toy view at ε=2" for c in charts)
        eps, other_eps, _ = seen[-1]
        assert eps == 2.0 and other_eps == pytest.approx(4.0)
    finally:
        _EXPLORATIONS.pop("toy", None)
