"""CheckDiam and FindDiam (Tsfadia et al. 2022, §5.1.2): constants, budget, search behaviour."""

import math

import numpy as np
import pytest

from dpviz.averaging.diameter import (
    check_diam,
    check_diam_core,
    diam_grid_size,
    find_diam,
    find_diam_calls,
    find_diam_core,
)
from dpviz.privacy.ledger import Ledger


def _gaussian_spends(ledger):
    return [s for _, s in ledger.spends() if s.mechanism == "gaussian"]


def test_check_diam_noise_and_threshold_match_the_formulas():
    X = np.random.default_rng(0).normal(size=(40, 3))
    rho, beta, r = 0.3, 0.01, 2.0
    res = check_diam(X, rho=rho, beta=beta, r=r, rng=1)
    (spend,) = _gaussian_spends(res.ledger)
    # â = a + N(0, 2/ρ): standard deviation √(2/ρ), sensitivity 2 (§5.1.2, step ii).
    assert spend.noise_scale == pytest.approx(math.sqrt(2.0 / rho), rel=1e-12)
    assert spend.sensitivity == 2.0
    step = res.step("check_diam")
    assert step.data["threshold"] == pytest.approx(40 - math.sqrt(4 * math.log(1 / beta) / rho))
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert step.data["a"] == pytest.approx((d2 <= r * r).sum() / 40)
    assert step.data["accepted"] == (step.data["a_hat"] >= step.data["threshold"])
    assert res.ledger.total().rho == pytest.approx(rho) and res.ledger.total().delta == 0.0


def test_check_diam_noise_std_matches_sigma_within_5_percent():
    X = np.zeros((5, 2))
    rho = 0.5
    rng = np.random.default_rng(3)
    led = Ledger("x")
    a_hats = np.array([check_diam_core(X, rho=rho, beta=0.1, r=0.0, rng=rng, ledger=led).a_hat
                       for _ in range(4000)])
    assert np.all(a_hats != 5.0)
    assert np.std(a_hats - 5.0) == pytest.approx(math.sqrt(2 / rho), rel=0.05)


def test_check_diam_accepts_complete_and_rejects_spread_data():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 2))
    assert check_diam(X, rho=1.0, beta=0.05, r=100.0, rng=rng).step("check_diam").data["accepted"]
    assert not check_diam(X, rho=1.0, beta=0.05, r=0.1, rng=rng).step("check_diam").data["accepted"]


def test_check_diam_empty_data_keeps_the_statistic_private():
    # n = 0: a − n := 0 (as for n = 1), so acceptance is a noisy, not a deterministic, outcome.
    res = check_diam(np.zeros((0, 2)), rho=1.0, r=1.0, rng=0)
    assert res.step("check_diam").data["a"] == 0.0
    assert res.ledger.total().rho == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("r_min", "r_max", "base", "T", "q"),
    [(1.0, 1.0, 1.5, 0, 0), (1.0, 1.5, 1.5, 1, 1), (1.0, 2.25, 1.5, 2, 2), (0.01, 100.0, 1.5, 23, 5),
     (1.0, 8.0, 2.0, 3, 2), (1.0, 9.0, 2.0, 4, 3)],
)
def test_grid_size_and_number_of_calls(r_min, r_max, base, T, q):
    assert diam_grid_size(r_min, r_max, base) == T
    assert find_diam_calls(r_min, r_max, base) == q


def test_find_diam_uses_exactly_q_calls_budget_and_splits_beta():
    X = np.random.default_rng(5).normal(size=(200, 2))
    rho, beta = 0.4, 0.1
    res = find_diam(X, rho=rho, beta=beta, r_min=0.01, r_max=100.0, rng=2)
    q = 5  # T = ⌈log_1.5(1e4)⌉ = 23, q = ⌈log2 24⌉ = 5
    spends = _gaussian_spends(res.ledger)
    assert res.step("find_diam").data["q"] == q
    assert len(spends) == res.step("find_diam").data["n_calls"] <= q
    for s in spends:
        assert s.budget.rho == pytest.approx(rho / q)
        assert s.noise_scale == pytest.approx(math.sqrt(2 / (rho / q)))
    for p in res.step("find_diam_probes").data["probes"]:
        assert p["threshold"] == pytest.approx(200 - math.sqrt(4 * math.log(q / beta) / (rho / q)))
    assert res.ledger.total().rho == pytest.approx(rho)


def test_find_diam_records_unused_calls_as_reserved():
    # T = 2 → q = 2; accepting at mid = 1 then at mid = 0 uses both, rejecting at 1 stops at 1.
    X = np.zeros((50, 2))
    res = find_diam(X, rho=1.0, r_min=1.0, r_max=2.25, rng=0)
    used = res.step("find_diam").data["n_calls"]
    reserved = [s for _, s in res.ledger.spends() if s.mechanism == "reserved"]
    assert len(reserved) == (used < 2)
    assert res.ledger.total().rho == pytest.approx(1.0)
    # Noise-free (huge ρ): two points 2 apart; grid 1, 1.5, 2.25; mid = 1 rejects → one call.
    two = find_diam(np.array([[0.0, 0.0], [2.0, 0.0]]), rho=1e12, r_min=1.0, r_max=2.25, rng=0)
    assert two.step("find_diam").data["n_calls"] == 1 and two.step("find_diam").data["r"] == 2.25
    (res_spend,) = [s for _, s in two.ledger.spends() if s.mechanism == "reserved"]
    assert res_spend.budget.rho == pytest.approx(1e12 / 2)
    assert two.ledger.total().rho == pytest.approx(1e12)
    one = find_diam(X, rho=1.0, r_min=1.0, r_max=1.0, rng=0)
    assert one.step("find_diam").data["r"] == 1.0 and one.ledger.total().rho == pytest.approx(1.0)


def test_find_diam_picks_a_sensible_radius_on_a_known_cloud():
    # 400 points uniform in a ball of radius 1 in 2-D: all pairs within 2, most within ~1.7.
    rng = np.random.default_rng(6)
    u = rng.normal(size=(400, 2))
    X = u / np.linalg.norm(u, axis=1, keepdims=True) * np.sqrt(rng.random((400, 1)))
    radii = [find_diam(X, rho=1.0, r_min=0.001, r_max=100.0, rng=s).step("find_diam").data["r"]
             for s in range(10)]
    assert all(1.0 <= r <= 2.0 * 1.5 for r in radii)


def test_find_diam_core_search_is_the_smallest_accepted_exponent():
    # Noise-free check via a huge ρ: the search must return the smallest grid radius ≥ diameter.
    X = np.array([[0.0, 0.0], [3.0, 0.0]])
    out = find_diam_core(X, rho=1e12, beta=0.5, r_min=1.0, r_max=100.0, base=2.0,
                         rng=np.random.default_rng(0), ledger=Ledger("x"))
    assert out.r == 4.0
    assert out.n_calls == len(out.probes) <= find_diam_calls(1.0, 100.0, 2.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(rho=0.0), "'rho'.*\\(0, inf\\)"), (dict(beta=1.0), "'beta'.*\\(0, 1\\)"),
     (dict(r_min=-1.0), "'r_min'"), (dict(r_max=0.5, r_min=1.0), "r_max.*at least r_min"),
     (dict(base=1.0), "'base'.*\\(1, inf\\)"), (dict(X=np.array([1.0, 2.0])), "'X'.*2-D"),
     (dict(X=np.array([[np.nan, 1.0]])), "'X'.*NaN")],
)
def test_find_diam_rejects_bad_parameters(kwargs, match):
    args = dict(X=np.zeros((3, 2)), rho=1.0, beta=0.05, r_min=0.1, r_max=10.0)
    args.update(kwargs)
    X = args.pop("X")
    with pytest.raises(ValueError, match=match):
        find_diam(X, **args)


def test_check_diam_rejects_negative_radius():
    with pytest.raises(ValueError, match="'r' parameter of check_diam"):
        check_diam(np.zeros((3, 2)), rho=1.0, r=-1.0)
