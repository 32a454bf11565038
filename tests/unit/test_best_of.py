"""best_of: draws of a zCDP algorithm and the origin, the exponential mechanism's pick (issue 35)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpviz
from dpviz.clustering.best_of import (
    BASES,
    BestOfParams,
    best_of,
    clipped_cost,
    private_pick,
    score_sensitivity,
    selection_eps,
)
from dpviz.privacy.accounting import approx_zcdp_to_dp
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.registry import Public, get, plan


def _blobs(n: int = 600, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centers = np.array([[0.6, 0.0], [-0.6, 0.0], [0.0, 0.6]])
    return centers[gen.integers(0, 3, n)] + 0.03 * gen.standard_normal((n, 2))


def _spends(ledger: Ledger) -> dict[str, list]:
    out: dict[str, list] = {}
    for path, s in ledger.spends():
        out.setdefault(s.name, []).append((path, s))
    return out


@pytest.mark.parametrize("runs, share, clip, also", [(1, 0.1, 1.0, "none"), (3, 0.25, 1 / 64, "none"),
                                                     (1, 0.1, 1 / 16, "rc_lloyd"),
                                                     (2, 0.2, 1 / 16, "gauss_fit")])
def test_ledger_books_exactly_rho_and_the_selection_noise_scale(runs, share, clip, also):
    X, rho, radius = _blobs(), 0.4, 1.5
    p = BestOfParams(runs=runs, select_share=share, score_clip=clip, also=also)
    m = runs + (also != "none")
    res = best_of(X, 3, rho=rho, delta=1e-7, radius=radius, pub=Public(600, 2, 3, radius), params=p, rng=0)
    assert res.ledger.total().rho == pytest.approx(rho, rel=1e-12)
    res.ledger.check()
    (_path, sel), = _spends(res.ledger)["selection"]
    eps = math.sqrt(8 * share * rho)
    assert sel.budget == ZCDP(share * rho, 0.0)
    assert sel.sensitivity == pytest.approx(clip * 4 * radius**2, rel=1e-15)
    assert sel.noise_scale == pytest.approx(2 * clip * 4 * radius**2 / eps, rel=1e-12)
    draws = [c for c in res.ledger.children if isinstance(c, Ledger)]
    assert len(draws) == m
    for node in draws:  # each draw of the base (and of ``also``, issue 44): (1 − s)·ρ / m
        assert node.total().rho == pytest.approx((1 - share) * rho / m, rel=1e-12)
    names = res.find("best_of_choice").data["candidates"]
    assert res.find("best_of_choice").data["chosen"] in names
    assert names[:runs] == [f"tree_coreset draw {j + 1}" for j in range(runs)]
    assert (f"{also} draw" in names) == (also != "none")
    if also != "none":  # the second algorithm's own ledger, at the draw's budget
        assert draws[-1].name == get(also).name


def test_selection_eps_is_the_bounded_range_conversion():
    assert selection_eps(0.5, 0.2) ** 2 / 8 == pytest.approx(0.1, rel=1e-15)
    with pytest.raises(ValueError, match="ε²/8"):
        private_pick(_blobs(), [np.zeros((3, 2))], radius=1.0, clip=1.0, eps=1.0, rho=0.5,
                     rng=np.random.default_rng(0), ledger=Ledger("t"))


def test_pick_frequencies_are_the_exponential_mechanism():
    X = _blobs(12)
    radius, clip, eps = 1.0, 0.25, 0.5
    cands = [np.array([[0.6, 0.0], [-0.6, 0.0], [0.0, 0.6]]), np.zeros((3, 2)), np.array([[0.6, 0.0]] * 3)]
    Xc = X  # inside the unit ball
    costs = np.array([clipped_cost(Xc, C, radius, clip) for C in cands])
    logits = -eps * costs / (2 * score_sensitivity(radius, clip))
    want = np.exp(logits - logits.max())
    want /= want.sum()
    gen = np.random.default_rng(1)
    m = 4000
    got = np.bincount([private_pick(X, cands, radius=radius, clip=clip, eps=eps, rho=eps**2 / 8, rng=gen,
                                    ledger=Ledger("t")) for _ in range(m)], minlength=3) / m
    sd = np.sqrt(want * (1 - want) / m)
    assert np.all(np.abs(got - want) <= 4 * sd + 1e-9), (got, want)
    assert want.min() > 0.05 and want.max() < 0.9  # the test is not degenerate


def test_each_score_moves_by_at_most_its_sensitivity_when_a_row_is_added():
    gen = np.random.default_rng(3)
    radius, clip = 1.0, 1 / 16
    X = _blobs(100)
    far = np.array([[-0.99, -0.1]])
    for C in (np.zeros((3, 2)), 5.0 * gen.standard_normal((3, 2)), np.array([[0.6, 0.0]] * 3)):
        a = clipped_cost(X, C, radius, clip)
        b = clipped_cost(np.vstack([X, far]), C, radius, clip)
        assert 0.0 <= b - a <= score_sensitivity(radius, clip) + 1e-12
    # the cap binds: the far row against a center at (0.6, 0) is ‖·‖² ≈ 2.5 > τ = 0.25
    C = np.array([[0.6, 0.0]] * 3)
    assert clipped_cost(far, C, radius, clip) == pytest.approx(0.25, rel=1e-15)


@pytest.mark.parametrize("base", BASES)
def test_every_base_is_a_plain_zcdp_conversion(base):
    """best_of composes its bases in zCDP: that is valid only for bases whose guarantee is the
    conversion of their ρ (no tuple unit, no group privacy)."""
    spec = get(base)
    pub = Public(1000, 3, 4, 1.0)
    for rho in (0.01, 0.3, 2.0):
        got = spec.guarantee(ZCDP(rho, 0.0), pub, spec.make_params(), 1e-6)
        assert got == approx_zcdp_to_dp(ZCDP(rho, 0.0), 1e-6)


@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_run_through_the_registry_meets_the_target(eps):
    X = _blobs()
    pub = Public(600, 2, 3, 1.0)
    p = plan("best_of", eps, 1e-6, pub, {"runs": 2})
    assert p.guarantee.eps <= eps * (1 + 1e-9) and p.guarantee.delta <= 1e-6
    res = dpviz.run("best_of", X, 3, epsilon=eps, delta=1e-6, radius=1.0, n_declared=600, rng=5, runs=2)
    assert res.ok and res.centers.shape == (3, 2)
    assert np.all(np.linalg.norm(res.centers, axis=1) <= 1.0 + 1e-12)
    assert res.ledger.total().rho == pytest.approx(p.budget.rho, rel=1e-12)


def test_a_large_budget_picks_a_draw_over_the_origin():
    """At ρ = 50 on three well separated blobs, the origin's capped cost is ~600·0.36 higher than
    a draw's; the exponential mechanism then picks a draw in every one of 20 runs."""
    X = _blobs()
    chosen = [dpviz.run("best_of", X, 3, epsilon=40.0, delta=1e-6, radius=1.0, n_declared=600, rng=s)
              .find("best_of_choice").data["chosen"] for s in range(20)]
    assert "origin" not in chosen


def test_without_the_origin_and_only_bottoms_the_answer_is_bottom(monkeypatch):
    from dpviz.clustering import best_of as mod
    from dpviz.result import Result

    spec = get("tree_coreset")

    def bottom(X, k, budget, **kw):
        led = Ledger("tree_coreset", budget)
        led.record("sum", "gaussian", ZCDP(budget.rho, 0.0))
        return Result(None, "⊥", led, (), {})

    monkeypatch.setattr(mod, "get", lambda name: type(spec)(**{**spec.__dict__, "private": bottom}))
    res = best_of(_blobs(), 3, rho=0.5, delta=0.0, radius=1.0, pub=Public(600, 2, 3, 1.0),
                  params=BestOfParams(runs=2, origin=False), rng=0)
    assert res.centers is None
    assert "selection" not in _spends(res.ledger)
    assert res.ledger.total().rho == pytest.approx(0.45, rel=1e-12)  # the draws' (1 − 0.1)·ρ only


def test_the_guarantee_is_the_ledgers_reaccount_at_a_budget_with_its_own_delta():
    """best_of's guarantee is the shared ``pure_rho_guarantee`` (issue 45): ZCDP(ρ, δ) → (ε, δ + δ′),
    as before, and it equals the independent re-account of a run's ledger at a ρ-axis budget
    ZCDP(ρ, δ) (its bases book their own δ as reserved). ZCDP(ρ, 0) (δ′ only) would be below the
    ledger's re-account there: check_ledger raises on it."""
    from dpviz.privacy.accounting import approx_zcdp_to_dp, pure_rho_guarantee, reaccount

    spec, pub, rho, delta = get("best_of"), Public(600, 2, 3, 1.0), 0.3, 1e-6
    assert spec.guarantee is pure_rho_guarantee
    g = spec.guarantee(ZCDP(rho, delta), pub, spec.make_params(runs=2), delta)
    assert g == approx_zcdp_to_dp(ZCDP(rho, delta), delta)  # the number best_of stated before
    res = best_of(_blobs(), 3, rho=rho, delta=delta, radius=1.0, pub=pub, params=BestOfParams(runs=2), rng=0)
    again = reaccount(res.ledger, delta)
    assert again.delta == g.delta and again.eps == pytest.approx(g.eps, rel=1e-12)  # ρ summed over the tree
    # at a row-level target the plan gives no own δ: the whole δ goes to δ′
    p = plan("best_of", 2.0, delta, pub, {"runs": 2})
    assert p.budget.delta == 0.0 and p.delta_prime == delta


def test_the_selection_books_itself_through_the_shared_mechanism():
    from dpviz.privacy.mechanisms import exponential_zcdp

    led = Ledger("t")
    i = exponential_zcdp(np.array([0.0, -1.0]), sensitivity=2.0, rho=0.125, rng=np.random.default_rng(0),
                         ledger=led, name="selection")
    (_path, s), = led.spends()
    assert i in (0, 1) and s.budget == ZCDP(0.125, 0.0) and s.noise_scale == pytest.approx(4.0 / 1.0)
