"""The univariate private GMM learner: truncated Laplace, the gap histogram, the score, the ledger."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpviz.mixtures import (
    GaussianMixture1D,
    GMM1DParams,
    calibrate_crude,
    crude_stage,
    gap_histogram,
    min_distance_scores,
    mixture_of,
    private_gmm_1d,
    tlap_bound,
    tlap_noise,
    tv_distance,
)
from dpviz.mixtures.crude import GAP_L1_SENSITIVITY, found_components, group_candidates
from dpviz.mixtures.scenarios import hard_mixture, lb_light_components
from dpviz.mixtures.selection import max_union_sum
from dpviz.privacy.accounting import dp_total, group_privacy_dp
from dpviz.privacy.ledger import Ledger

EPS, DELTA = 1.0, 1e-6


# ----------------------------------------------------------------------------- truncated Laplace


def test_tlap_bound_is_the_formula_and_matches_the_note():
    expected = 2.0 * math.log(1 + (math.e**0.5 - 1) / 2e-5)
    assert tlap_bound(1.0, 0.5, 1e-5) == pytest.approx(expected, rel=1e-12)
    # Seed note §5: TLap(1, ε/6, δ/(6e^ε)) at ε = 1, δ = 1e-6 gave A ≈ 85 (replacement, 6 moves).
    assert tlap_bound(1.0, 1 / 6, 1e-6 / (6 * math.e)) == pytest.approx(85.2, abs=0.1)


def test_tlap_noise_is_surely_bounded_and_has_the_truncated_exponential_law():
    rng = np.random.default_rng(0)
    eps, delta = 1 / 3, 1e-7
    a, b = tlap_bound(1.0, eps, delta), 1.0 / eps
    z = tlap_noise(200_000, sensitivity=1.0, eps=eps, delta=delta, rng=rng)
    assert np.all(np.abs(z) <= a)
    # E|Z| of Exp(b) cut at A: b − A·e^{−A/b}/(1 − e^{−A/b}); symmetric.
    mean_abs = b - a * math.exp(-a / b) / (1 - math.exp(-a / b))
    assert np.mean(np.abs(z)) == pytest.approx(mean_abs, rel=0.01)
    assert abs(np.mean(z)) < 0.02 * b
    assert np.mean(z > 0) == pytest.approx(0.5, abs=0.005)


def test_crude_calibration_meets_the_target_through_group_privacy():
    for eps, delta in [(0.1, 1e-8), (1.0, 1e-6), (5.0, 1e-3)]:
        cal = calibrate_crude(eps, delta, 2.0)
        assert cal.eps_unit == pytest.approx(eps / 3)
        g = group_privacy_dp(type(cal.guarantee)(cal.eps_unit, cal.delta_unit), GAP_L1_SENSITIVITY)
        assert g.eps == pytest.approx(eps, rel=1e-12) and g.delta == pytest.approx(delta, rel=1e-12)
        assert cal.threshold == pytest.approx(2.0 * cal.bound)
    assert calibrate_crude(1.0, 1e-6, 2.0).bound == pytest.approx(40.99, abs=0.01)


# ----------------------------------------------------------------------------- the gap histogram


def _as_dict(h):
    return {(int(b), int(a)): int(c) for b, a, c in zip(h.scale, h.loc, h.count, strict=True)}


def test_gap_histogram_by_hand():
    # gaps: 1 at y=0 (b=0, cell width 1·4 → a=0); 0 (no bucket); 2.5 at y=1 (b=1, width 8 → a=0);
    # 0.25 at y=3.5 (b=−2, width 1 → a=3).
    h = gap_histogram(np.array([0.0, 1.0, 1.0, 3.5, 3.75]), n_declared=4)
    assert _as_dict(h) == {(0, 0): 1, (1, 0): 1, (-2, 3): 1}
    assert np.allclose(h.width, np.ldexp(4.0, h.scale))
    # exact powers of two sit at the bottom of their scale: 2^b ≤ gap < 2^{b+1}
    assert _as_dict(gap_histogram(np.array([0.0, 0.5, 1.5]), 1)) == {(-1, 0): 1, (0, 0): 1}


@pytest.mark.parametrize("seed", range(5))
def test_one_added_or_removed_row_moves_at_most_three_counts(seed):
    """Lemma F.5 for add/remove: the histogram moves by at most 3 in L1 (the calibrated sensitivity)."""
    rng = np.random.default_rng(seed)
    base = np.round(rng.standard_normal(60) * 4, 1)  # rounding makes ties (zero gaps)
    for x in np.concatenate([rng.standard_normal(40) * 6, base[:5], [base.min() - 1, base.max() + 1]]):
        h0 = _as_dict(gap_histogram(np.sort(base), 64))
        for other in (np.sort(np.append(base, x)), np.sort(np.delete(base, rng.integers(base.size)))):
            h1 = _as_dict(gap_histogram(other, 64))
            l1 = sum(abs(h0.get(key, 0) - h1.get(key, 0)) for key in h0.keys() | h1.keys())
            assert l1 <= GAP_L1_SENSITIVITY


def test_crude_stage_noise_is_bounded_and_no_empty_bucket_passes():
    rng = np.random.default_rng(1)
    x, _ = hard_mixture().sample(6000, rng)
    led = Ledger("t")
    st = crude_stage(x, eps=EPS, delta=DELTA, n_declared=6000, threshold_factor=2.0, rng=rng, ledger=led)
    A, T = st.calibration.bound, st.calibration.threshold
    assert np.all(np.abs(st.noisy - st.hist.count) <= A)
    assert np.all(st.hist.count >= 1)  # only non-empty buckets are drawn
    assert np.all(st.noisy[st.passed] >= T) and T > A
    assert np.all(st.hist.count[st.passed] >= T - A)  # a passed bucket holds at least T − A gaps
    (spend,) = led.children
    assert spend.mechanism == "truncated_laplace" and spend.sensitivity == 3
    assert (spend.budget.eps, spend.budget.delta) == (EPS, DELTA)


def test_crude_stage_finds_the_hard_mixture_at_n_5000():
    """Seed note §5: the hard mixture's three components are found at n = 5000 (here its crude half)."""
    truth = hard_mixture().truth
    x, _ = truth.sample(5000, np.random.default_rng(3))
    y = x[np.random.default_rng(4).random(5000) < 0.5]
    st = crude_stage(y, eps=EPS, delta=DELTA, n_declared=5000, threshold_factor=2.0,
                     rng=np.random.default_rng(5), ledger=Ledger("t"))
    assert found_components(group_candidates(st), truth.means, truth.sds, G=10.0).all()
    # and at n = 1000 nothing passes: ⊥
    st = crude_stage(y[:500], eps=EPS, delta=DELTA, n_declared=1000, threshold_factor=2.0,
                     rng=np.random.default_rng(5), ledger=Ledger("t"))
    assert not st.passed.any()


# ----------------------------------------------------------------------------- the score


def _brute_union_sum(v, m):
    best = 0.0
    cuts = range(len(v) + 1)
    for r in range(1, m + 1):
        for c in itertools.combinations(cuts, 2 * r):
            best = max(best, sum(v[c[2 * i]:c[2 * i + 1]].sum() for i in range(r)))
    return best


def test_max_union_sum_matches_brute_force():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(30, 7))
    for m in (1, 2, 3):
        got = max_union_sum(v, m)
        assert np.allclose(got, [_brute_union_sum(row, m) for row in v])


@pytest.mark.parametrize("sets", ["intervals", "cells"])
def test_the_min_distance_score_has_sensitivity_one(sets):
    rng = np.random.default_rng(2)
    w = rng.dirichlet(np.ones(3), size=40)
    mu = rng.normal(0, 5, (40, 3))
    sd = np.exp(rng.normal(0, 1, (40, 3)))
    y = np.sort(rng.normal(0, 5, 300))
    edges = np.linspace(-15, 15, 41)
    s0 = min_distance_scores(w, mu, sd, y, 3, edges=edges, sets=sets)
    worst = 0.0
    for x in np.concatenate([rng.normal(0, 8, 30), [-100.0, 100.0, edges[3]]]):
        s1 = min_distance_scores(w, mu, sd, np.sort(np.append(y, x)), 3, edges=edges, sets=sets)
        s2 = min_distance_scores(w, mu, sd, np.delete(y, rng.integers(y.size)), 3, edges=edges, sets=sets)
        worst = max(worst, np.abs(s1 - s0).max(), np.abs(s2 - s0).max())
    assert worst <= 1.0 + 1e-9
    assert worst > 0.5  # the bound is attained nearly: the test can fail


def test_score_prefers_the_truth():
    truth = GaussianMixture1D([0.5, 0.5], [-5, 5], [1, 1])
    y = np.sort(truth.sample(20_000, np.random.default_rng(0))[0])
    w = np.array([[0.5, 0.5], [0.5, 0.5], [0.8, 0.2]])
    mu = np.array([[-5, 5], [-5, 7], [-5, 5]], dtype=float)
    s = min_distance_scores(w, mu, np.ones((3, 2)), y, 2)
    assert s[0] < 0.02 * y.size and s[1] > 0.2 * y.size and s[2] > 0.2 * y.size


# ----------------------------------------------------------------------------- the learner


def test_tv_distance_exact_cases():
    p = GaussianMixture1D([1.0], [0.0], [1.0])
    assert tv_distance(p, p) == pytest.approx(0.0, abs=1e-12)
    # TV(N(0,1), N(1,1)) = 2Φ(1/2) − 1
    assert tv_distance(p, GaussianMixture1D([1.0], [1.0], [1.0])) == pytest.approx(0.382924922548, abs=1e-9)
    assert tv_distance(p, GaussianMixture1D([1.0], [1e6], [1e-3])) == pytest.approx(1.0, abs=1e-12)


def test_learner_ledger_totals_are_the_budget_on_success_and_on_bottom():
    truth = hard_mixture().truth
    x, _ = truth.sample(20_000, np.random.default_rng(0))
    ok = private_gmm_1d(x, 3, epsilon=EPS, delta=DELTA, n_declared=20_000, rng=1)
    bottom = private_gmm_1d(x[:400], 3, epsilon=EPS, delta=DELTA, n_declared=400, rng=1)
    assert ok.ok and not bottom.ok and bottom.centers is None
    for r in (ok, bottom):
        g = dp_total(r.ledger)
        assert g.eps == pytest.approx(EPS, rel=1e-12) and g.delta == pytest.approx(DELTA, rel=1e-12)
        assert r.guarantee == g
    assert ok.ledger.total() == bottom.ledger.total()
    fine = [s for path, s in ok.ledger.spends() if "fine" in path]
    n_rounds = GMM1DParams().n_rounds
    assert len(fine) == n_rounds == 21
    assert all(s.mechanism == "exponential" and s.sensitivity == 1.0 for s in fine)
    assert all(s.budget.eps == pytest.approx(EPS / n_rounds) for s in fine)


def test_learner_is_reproducible_and_accurate_on_the_hard_mixture():
    truth = hard_mixture().truth
    x, _ = truth.sample(20_000, np.random.default_rng(0))
    a = private_gmm_1d(x, 3, epsilon=EPS, delta=DELTA, n_declared=20_000, rng=7)
    b = private_gmm_1d(x.reshape(-1, 1), 3, epsilon=EPS, delta=DELTA, n_declared=20_000, rng=7)
    assert np.array_equal(a.centers, b.centers) and a.seed == 7
    assert tv_distance(truth, mixture_of(a)) < 0.1
    assert a.centers.shape[1] == 1 and a.centers.shape[0] <= 3


def test_light_components_scenario_is_the_construction():
    s = lb_light_components(k=4, alpha=0.2)
    assert s.truth.weights == pytest.approx([1 - 3 * 0.05, 0.05, 0.05, 0.05])
    assert s.truth.sds[0] == 1.0 and np.all(np.diff(s.truth.means) == 1e3)


@pytest.mark.parametrize(
    "kw, match",
    [(dict(k=0), "'k' parameter of private_gmm_1d"), (dict(epsilon=0.0), "'epsilon'"),
     (dict(delta=1.0), "'delta'"), (dict(n_declared=1), "'n_declared'")],
)
def test_learner_validates_its_parameters(kw, match):
    args = dict(k=2, epsilon=1.0, delta=1e-6, n_declared=100) | kw
    with pytest.raises(ValueError, match=match):
        private_gmm_1d(np.zeros(100), **args)


def test_params_validate():
    with pytest.raises(ValueError, match="threshold_factor"):
        GMM1DParams(threshold_factor=1.0)
    with pytest.raises(ValueError, match="score_sets"):
        GMM1DParams(score_sets="all")
    with pytest.raises(ValueError, match="1-D data"):
        private_gmm_1d(np.zeros((10, 2)), 2, epsilon=1.0, delta=1e-6, n_declared=10)


# ----------------------------------------------------------------------------- the registry entry


@pytest.fixture
def gmm_registered():
    import dpviz.registry as reg

    assert "private_gmm_1d" in [s.name for s in reg.algorithms()]  # registered by default (issue 26)
    return reg.get("private_gmm_1d")


def test_registry_runs_the_learner_at_the_row_level_target_and_answers_bottom_for_d2(gmm_registered):
    import dpviz.registry as reg

    spec = gmm_registered
    cal = reg.calibrate(spec, 2.0, 1e-7, reg.Public(1000, 1, 3, 1.0), spec.make_params())
    assert (cal.budget.eps, cal.budget.delta) == (2.0, 1e-7) and cal.guarantee == cal.budget
    x, _ = hard_mixture().truth.sample(20_000, np.random.default_rng(0))
    r = reg.run("private_gmm_1d", x[:, None], 3, epsilon=EPS, delta=DELTA, radius=1.0, n_declared=20_000,
                rng=3)
    assert r.algorithm == "private_gmm_1d" and r.ok
    assert (r.guarantee.eps, r.guarantee.delta) == (EPS, DELTA)  # the calibrated statement
    assert dp_total(r.ledger).eps == pytest.approx(EPS, rel=1e-12)  # what the run recorded
    r2 = reg.run("private_gmm_1d", np.zeros((50, 2)), 3, epsilon=EPS, delta=DELTA, radius=1.0, n_declared=50)
    assert not r2.ok and "1-D" in r2.failure
    assert dp_total(r2.ledger) == r.guarantee  # the whole budget, reserved, on the ⊥ branch
