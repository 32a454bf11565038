"""dpviz.run re-accounts every run's ledger against its plan's target and fails loudly if over.

The plan is computed from public inputs before the run; the ledger is what the mechanisms recorded
while running. ``registry.check_ledger`` states the ledger on its own (DP parts by basic
composition, zCDP parts by ``row_level_statement``) and raises ``LedgerOverTargetError`` above the
target — the check Google's clustering library makes after deriving its noise parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import dpviz
from dpviz.data import fig6_blobs
from dpviz.privacy.accounting import approx_zcdp_to_dp
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, laplace
from dpviz.privacy.plan import BudgetPlan
from dpviz.registry import (
    AlgorithmSpec,
    LedgerOverTargetError,
    check_hinted,
    check_ledger,
    hint,
    reaccount,
    register,
    unregister,
)
from dpviz.result import Result, Trace

DELTA = 1e-6


@pytest.fixture(scope="module")
def blobs():
    return fig6_blobs(20_000, rng=0)


@dataclass(frozen=True)
class _Params:
    spend: float = field(default=1.0, metadata=hint(low=0.0, high=4.0, help="multiple of the budget spent"))

    def __post_init__(self) -> None:
        check_hinted(self, "fake")


def _trace() -> tuple:
    t = Trace()
    t.add("fake", released=True)
    return t.freeze()


def _pure_private(X, k, budget, *, radius, rng, pub, params, stage=None) -> Result:
    """Two Laplace sums at ``spend``·ε/2 each: ``spend`` = 1 is honest, 2 spends twice the budget."""
    ledger = Ledger("fake pure")  # no node budget: only the re-accounting can see an overspend
    for name in ("sum a", "sum b"):
        laplace(X.sum(axis=0), sensitivity=radius, eps=params.spend * budget.eps / 2, rng=rng,
                ledger=ledger, name=name)
    return Result(np.zeros((k, pub.d)), None, ledger, _trace(), {"k": k})


def _zcdp_private(X, k, budget, *, radius, rng, pub, params, stage=None) -> Result:
    """One Gaussian sum at ``spend``·ρ."""
    ledger = Ledger("fake zcdp")
    gaussian(X.sum(axis=0), sensitivity=radius, rho=params.spend * budget.rho, rng=rng, ledger=ledger,
             name="sum")
    return Result(np.zeros((k, pub.d)), None, ledger, _trace(), {"k": k})


def _tuple_private(X, k, budget, *, radius, rng, pub, params, stage=None) -> Result:
    """A Gaussian sum over tuples (add/remove one TUPLE): a row replaces a tuple, two steps."""
    ledger = Ledger("fake tuples", unit="tuple")
    gaussian(X.sum(axis=0), sensitivity=radius, rho=budget.rho, rng=rng, ledger=ledger, name="tuple sum")
    return Result(np.zeros((k, pub.d)), None, ledger, _trace(), {"k": k})


def _spec(name, kind, private, guarantee):
    return AlgorithmSpec(name=name, title=name, paper="none", budget_kind=kind, params=_Params,
                         private=private, guarantee=guarantee, steps=("fake",))


@pytest.fixture
def fakes():
    specs = [
        register(_spec("fake_pure", "pure", _pure_private, lambda b, pub, p, dp: ApproxDP(b.eps, 0.0))),
        register(_spec("fake_zcdp", "zcdp", _zcdp_private,
                       lambda b, pub, p, dp: approx_zcdp_to_dp(b, dp))),
        # Claims the tuple stage per row WITHOUT group privacy: the ledger knows better.
        register(_spec("fake_tuples", "zcdp", _tuple_private,
                       lambda b, pub, p, dp: approx_zcdp_to_dp(b, dp))),
    ]
    yield specs
    for s in specs:
        unregister(s.name)


@pytest.mark.parametrize("name", ["fake_pure", "fake_zcdp"])
@pytest.mark.parametrize("n_declared", [20_000, None])
def test_an_honest_fake_passes_and_its_ledger_states_its_plan(fakes, blobs, name, n_declared):
    res = dpviz.run(name, blobs.X, 3, epsilon=2.0, delta=DELTA, radius=1.0, rng=0, n_declared=n_declared)
    got = reaccount(res.ledger, res.plan.delta_prime)
    assert got.eps == pytest.approx(res.plan.guarantee.eps, rel=1e-6)
    assert got.delta <= DELTA * (1 + 1e-9)


@pytest.mark.parametrize("name", ["fake_pure", "fake_zcdp"])
@pytest.mark.parametrize("n_declared", [20_000, None])
def test_a_fake_that_spends_more_than_its_plan_fails_loudly(fakes, blobs, name, n_declared):
    with pytest.raises(LedgerOverTargetError, match=f"'{name}' spent .* above its plan's target"):
        dpviz.run(name, blobs.X, 3, epsilon=2.0, delta=DELTA, radius=1.0, rng=0, n_declared=n_declared,
                  spend=1.5)


def test_a_tuple_stage_claimed_without_group_privacy_is_caught(fakes, blobs):
    with pytest.raises(LedgerOverTargetError, match="fake_tuples"):
        dpviz.run("fake_tuples", blobs.X, 3, epsilon=2.0, delta=DELTA, radius=1.0, rng=0, n_declared=20_000)


def test_an_overspend_just_above_the_tolerance_is_caught_and_just_below_is_not():
    target = ApproxDP(1.0, 0.0)
    p = BudgetPlan(ApproxDP(1.0, 0.0), 0.0, target, algorithm="x", target=target)
    for eps, over in ((1.0, False), (1.0 + 1e-9, False), (1.0 + 1e-4, True)):
        ledger = Ledger("x")
        ledger.record("one", "laplace", ApproxDP(eps, 0.0))
        if over:
            with pytest.raises(LedgerOverTargetError):
                check_ledger(ledger, p)
        else:
            assert check_ledger(ledger, p).eps == pytest.approx(eps)


def test_a_node_over_its_own_budget_fails_even_when_the_total_is_within():
    target = ApproxDP(10.0, 1e-6)
    p = BudgetPlan(ZCDP(1.0), 1e-6, target, algorithm="x", target=target)
    ledger = Ledger("x", ZCDP(1.0))
    ledger.child("part", ZCDP(0.1)).record("g", "gaussian", ZCDP(0.2))
    with pytest.raises(RuntimeError, match="spent"):
        check_ledger(ledger, p)


@pytest.mark.parametrize("name", [s.name for s in dpviz.algorithms(private_only=True)])
def test_every_registered_family_states_its_plan_from_its_ledger(blobs, name):
    """Each family's own ledger, re-accounted, gives its plan's ε (within 10⁻⁵) and δ ≤ the target."""
    spec = dpviz.registry.get(name)
    X = blobs.X[:, :1] if spec.dims[1] == 1 else blobs.X
    kw = {"public_X": X[:20]} if spec.needs_public_data else {}
    res = dpviz.run(name, X, 3, epsilon=3.0, delta=DELTA, radius=1.5, rng=1, n_declared=len(X), **kw)
    got = check_ledger(res.ledger, res.plan)
    assert got is not None and got.delta <= DELTA * (1 + 1e-6)
    assert got.eps <= 3.0 * (1 + 1e-6)
    assert got.eps == pytest.approx(res.plan.guarantee.eps, rel=1e-3, abs=1e-9)


@pytest.mark.parametrize("name", ["friendlycore", "tree_coreset", "balcan", "best_of"])
def test_result_carries_the_reaccounted_statement(blobs, name):
    """``Result.statement`` is check_ledger's value (the ledger re-accounted on its own, issue 45),
    no longer thrown away: within the target and equal to a fresh re-account of the same ledger."""
    X = blobs.X[:4000]
    res = dpviz.run(name, X, 4, epsilon=2.0, delta=DELTA, radius=float(blobs.radius), rng=0,
                    n_declared=len(X))
    again = reaccount(res.ledger, res.plan.delta_prime)
    assert res.statement == again and res.stated == again
    assert res.statement.eps <= 2.0 * (1 + 1e-6) and res.statement.delta <= DELTA * (1 + 1e-6)
    assert f"{res.statement.eps:.3g}" == f"{res.guarantee.eps:.3g}"  # what the surfaces print


def test_accounting_names_live_in_privacy():
    """The re-account, the check and the ρ rule are dpviz.privacy's; dpviz.registry re-exports them."""
    from dpviz import registry
    from dpviz.privacy import accounting

    for name in ("reaccount", "check_ledger", "LedgerOverTargetError", "budget_from_rho", "LEDGER_RTOL"):
        assert getattr(registry, name) is getattr(accounting, name)


@pytest.mark.parametrize("name", ["tree_coreset", "grid_coreset", "gauss_fit", "dp_lloyd", "best_of"])
def test_a_rho_axis_run_of_a_pure_rho_family_meets_its_own_check(name):
    """At an own budget ZCDP(ρ, δ) (a ρ axis: ``sweeps.at_rho`` → ``plan_at_rho``) these families
    book the own δ as reserved; their guarantee used to state δ′ only, so check_ledger raised on
    every such run (a bug found in issue 45: the ρ sweep of tree_coreset failed). Now the plan
    states what the ledger re-accounts."""
    from dpviz.registry import Public, plan_at_rho

    X = np.random.default_rng(0).uniform(-0.5, 0.5, (400, 2))
    p = plan_at_rho(name, 0.1, DELTA, Public(n_declared=400, d=2, k=3, radius=1.0))
    res = dpviz.run(name, X, 3, epsilon=p.guarantee.eps, delta=p.guarantee.delta, radius=1.0, rng=0,
                    n_declared=400, budget_plan=p)
    assert res.statement.delta == pytest.approx(2 * DELTA)  # the reserved own δ and δ′
    assert res.statement.eps == pytest.approx(p.guarantee.eps, rel=1e-9)
