import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant
from scipy.optimize import brentq

from dpviz.privacy import (
    REPLACE_ONE,
    ZCDP,
    ApproxDP,
    Ledger,
    approx_zcdp_to_dp,
    compose_dp,
    dp_total,
    group_privacy_dp,
    group_privacy_zcdp,
    pure_rho_guarantee,
    rho_for_dp,
    row_level_statement,
    zcdp_delta,
    zcdp_to_dp,
)

# A dense grid of Rényi orders so dp-accounting's discrete minimisation is close to the infimum.
_ORDERS = list(np.concatenate([1 + np.geomspace(1e-4, 1, 400), np.linspace(2.01, 64, 800),
                               np.geomspace(64.1, 1e5, 400)]))


def _dp_accounting_eps(rho: float, delta: float) -> float:
    acc = RdpAccountant(orders=_ORDERS)
    acc.compose(dp_accounting.ZCDpEvent(rho))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize(
    "rho, delta, tight, simple",
    [(0.03125, 1e-3, 0.688, 0.960), (2.0, 1e-6, 11.689, 12.513)],
)
def test_pinned_vectors(rho, delta, tight, simple):
    assert zcdp_to_dp(rho, delta) == pytest.approx(tight, abs=5e-4)
    assert zcdp_to_dp(rho, delta, tight=False) == pytest.approx(simple, abs=5e-4)


def test_simple_bound_is_the_bun_steinke_formula():
    for rho, delta in [(1.0, 1e-8), (0.1, 1e-5), (5.0, 1e-3)]:
        assert zcdp_to_dp(rho, delta, tight=False) == pytest.approx(
            rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-15)


@pytest.mark.parametrize("rho", [1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-8, 1e-5, 1e-3])
def test_tight_conversion_agrees_with_dp_accounting(rho, delta):
    ours = zcdp_to_dp(rho, delta)
    theirs = _dp_accounting_eps(rho, delta)
    # Ours minimises over a continuum of orders: never above dp-accounting's grid value, and
    # within 0.5% of it on this dense grid.
    assert ours <= theirs + 1e-9
    assert ours == pytest.approx(theirs, rel=5e-3)
    assert ours <= zcdp_to_dp(rho, delta, tight=False)


def test_delta_and_eps_are_inverse():
    eps = zcdp_to_dp(0.7, 1e-7)
    assert zcdp_delta(0.7, eps) == pytest.approx(1e-7, rel=1e-6)


@pytest.mark.parametrize("rho, delta", [(-0.1, 1e-6), (1.0, 0.0), (1.0, 1.0), (float("nan"), 1e-6)])
def test_zcdp_to_dp_rejects_bad_input(rho, delta):
    with pytest.raises(ValueError, match="parameter of zcdp_to_dp"):
        zcdp_to_dp(rho, delta)


def test_group_privacy():
    assert group_privacy_zcdp(0.5, 2) == 2.0
    g = group_privacy_dp(ApproxDP(1.0, 1e-6), 2)
    assert g.eps == 2.0
    assert g.delta == pytest.approx(1e-6 * (1 + math.e))
    # Never looser than the k·e^{kε}·δ quoted in Tsfadia et al. §2.
    assert g.delta <= 2 * math.exp(2.0) * 1e-6


def test_approx_zcdp_to_dp_adds_delta_prime():
    out = approx_zcdp_to_dp(ZCDP(1.0, 1e-8), 1e-8)
    assert out.delta == pytest.approx(2e-8)
    assert out.eps == pytest.approx(zcdp_to_dp(1.0, 1e-8))


def test_row_level_statement_row_only_is_plain_conversion():
    led = Ledger("root", ZCDP(1.0, 1e-8))
    led.record("x", "gaussian", ZCDP(1.0))
    led.record_event("e", 1e-8)
    st = row_level_statement(led, 1e-8)
    assert st.row.eps == pytest.approx(zcdp_to_dp(1.0, 1e-8))
    assert st.row.delta == pytest.approx(2e-8)
    assert st.paper == ZCDP(1.0, 1e-8)
    assert "factor of" in st.odds_sentence


def test_row_level_statement_applies_group_privacy_to_tuple_stage():
    led = Ledger("root", ZCDP(1.0, 1e-8))
    tup = led.child("tuples", unit="tuple")
    tup.record("core", "gaussian", ZCDP(0.5))
    tup.record_event("e", 5e-9)
    led.record("lloyd", "gaussian", ZCDP(0.5))
    led.record_event("e2", 5e-9)
    dp = 1e-8
    st = row_level_statement(led, dp)
    # Hand computation at one δ′ split must never beat the optimiser's choice.
    t = approx_zcdp_to_dp(ZCDP(0.5, 5e-9), dp / 2)
    r = approx_zcdp_to_dp(ZCDP(0.5, 5e-9), dp / 2)
    hand_eps = 2 * t.eps + r.eps
    hand_delta = (1 + math.exp(t.eps)) * t.delta + r.delta
    assert st.row.eps <= hand_eps + 1e-12
    assert st.row.eps > zcdp_to_dp(1.0, dp)  # row level is weaker than the paper's statement
    assert st.row.delta <= hand_delta * 1.5 and st.row.delta >= 2e-8
    assert st.tuple_stage.rho == 0.5 and st.row_stage.rho == 0.5
    assert st.paper == ZCDP(1.0, 1e-8)


def test_row_level_statement_at_huge_budget_is_vacuous_not_an_error():
    led = Ledger("root", ZCDP(10.0, 1e-6))
    tup = led.child("tuples", unit="tuple")
    tup.record("core", "gaussian", ZCDP(8.7))
    tup.record_event("e", 5e-7)
    led.record("lloyd", "gaussian", ZCDP(1.3))
    led.record_event("e2", 5e-7)
    st = row_level_statement(led, 1e-6)
    assert st.row.delta == 1.0 and st.row.vacuous
    assert "vacuous" in st.odds_sentence
    assert any("promises nothing" in line for line in st.lines)


def test_compose_and_group_privacy_cap_delta_at_one():
    assert compose_dp(ApproxDP(1.0, 0.7), ApproxDP(1.0, 0.6)).delta == 1.0
    assert group_privacy_dp(ApproxDP(30.0, 1e-6), 2).delta == 1.0


def test_paper_statement_in_dp_is_converted_from_the_ledger_total():
    led = Ledger("root", ZCDP(1.0, 1e-8))
    led.child("tuples", unit="tuple").record("core", "gaussian", ZCDP(0.6, 5e-9))
    led.record("lloyd", "gaussian", ZCDP(0.4, 5e-9))
    st = row_level_statement(led, 1e-8)
    assert st.paper_dp.eps == pytest.approx(zcdp_to_dp(1.0, 1e-8))
    assert st.paper_dp.delta == pytest.approx(2e-8)


# ------------------------------------------------------------------ the one inverse, total, guarantee


def _dp_accounting_rho(eps: float, delta: float) -> float:
    """dp-accounting's own inverse: the ρ at which its RdpAccountant states ε for ZCDpEvent(ρ)."""
    return brentq(lambda r: _dp_accounting_eps(r, delta) - eps, 1e-9, eps, xtol=1e-14, rtol=1e-12)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (8.0, 1e-8), (30.0, 1e-6)])
def test_rho_for_dp_is_dp_accountings_inverse(eps, delta):
    rho = rho_for_dp(eps, delta)
    theirs = _dp_accounting_rho(eps, delta)
    # Ours minimises over a continuum of orders, so it allows at least dp-accounting's ρ, and on
    # this dense grid of orders no more than 1% above it.
    assert theirs <= rho <= theirs * 1.01
    # The sound side: converted back, never above ε; and tight (the next float up is not).
    assert zcdp_to_dp(rho, delta) <= eps
    assert zcdp_to_dp(rho * (1 + 1e-9), delta) > eps * (1 - 1e-9)
    # Never below the simple bound's closed-form inverse ρ = (√(ε + L) − √L)², L = ln(1/δ).
    L = math.log(1 / delta)
    assert rho >= (math.sqrt(eps + L) - math.sqrt(L)) ** 2


def test_rho_for_dp_pinned_and_rejects_bad_input():
    assert rho_for_dp(1.0, 1e-6) == pytest.approx(0.024356, abs=1e-6)
    for eps, delta in [(0.0, 1e-6), (-1.0, 1e-6), (1.0, 0.0), (1.0, 1.0)]:
        with pytest.raises(ValueError, match="parameter of rho_for_dp"):
            rho_for_dp(eps, delta)


def test_pure_rho_guarantee_states_the_booked_own_delta():
    """The own δ is booked (reserved) on such an algorithm's ledger, so it is stated (issue 45)."""
    assert pure_rho_guarantee(ZCDP(0.5, 0.0), None, None, 1e-8) == ApproxDP(zcdp_to_dp(0.5, 1e-8), 1e-8)
    g = pure_rho_guarantee(ZCDP(0.5, 1e-7), None, None, 1e-8)
    assert g == ApproxDP(zcdp_to_dp(0.5, 1e-8), 1e-7 + 1e-8)
    # Cross-checked: dp-accounting's ε for ZCDpEvent(0.5) at δ′ is within its grid's 0.5%.
    assert g.eps == pytest.approx(_dp_accounting_eps(0.5, 1e-8), rel=5e-3)


def test_dp_total_composes_sequential_parallel_and_units():
    led = Ledger("root")
    led.record("count", "laplace", ApproxDP(0.1))
    par = led.child("split", composition="parallel")
    par.record("a", "gaussian", ApproxDP(0.3, 1e-7))
    par.record("b", "laplace", ApproxDP(0.5))
    tup = led.child("tuples", unit="tuple")
    tup.record("core", "gaussian", ApproxDP(0.2, 1e-8))
    total = dp_total(led)
    assert (total.eps, total.delta) == pytest.approx((0.1 + 0.5 + 0.2, 1e-7 + 1e-8), rel=1e-12)
    assert dp_total(led, unit="tuple") == ApproxDP(0.2, 1e-8)
    row = dp_total(led, unit="row")
    assert (row.eps, row.delta) == pytest.approx((0.6, 1e-7), rel=1e-12)
    # Per row: one row replaces a tuple, two add/remove steps (group privacy, δ·(1 + e^ε)).
    per_row = dp_total(led, group=2)
    assert per_row.eps == pytest.approx(0.1 + 0.5 + 0.4)
    assert per_row.delta == pytest.approx(1e-7 + 1e-8 * (1 + math.exp(0.2)))
    # A replace-one tuple node is stated per row already: no group privacy under it.
    tup.note = f"unit = one tuple ({REPLACE_ONE})"
    assert dp_total(led, group=2) == dp_total(led)


def test_dp_total_refuses_a_zcdp_spend_and_caps_delta():
    led = Ledger("root")
    led.record("g", "gaussian", ZCDP(0.5))
    with pytest.raises(TypeError, match="dp_total needs"):
        dp_total(led)
    assert dp_total(led, unit="tuple") == ApproxDP(0.0, 0.0)  # the zCDP spend is not of that unit
    capped = Ledger("root")
    capped.record("a", "x", ApproxDP(1.0, 0.7))
    capped.record("b", "x", ApproxDP(1.0, 0.7))
    assert dp_total(capped) == ApproxDP(2.0, 1.0)
