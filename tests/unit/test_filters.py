"""zCDPFilter and BasicFilter on friend counts (Tsfadia et al. 2022, §4.1-§4.2)."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpviz.core.filters import (
    basic_filter,
    expected_margin,
    expected_margin_known,
    known_size_threshold,
    zcdp_filter,
    zcdp_threshold,
)
from dpviz.privacy.ledger import Ledger


def test_zcdp_filter_noise_scales_and_threshold_match_section_4_2():
    rho, delta = 0.4, 1e-6
    counts = np.array([10, 9, 1, 10, 7, 10, 10, 10, 10, 10])
    led = Ledger("f")
    out = zcdp_filter(counts, rho=rho, delta=delta, rng=np.random.default_rng(0), ledger=led)
    nh, ev, z = (s for _, s in led.spends())
    rho1, rho2 = 0.1 * rho, 0.9 * rho
    assert nh.noise_scale == pytest.approx(math.sqrt(1 / (2 * rho1)), rel=1e-12)  # var 1/(2ρ₁)
    assert ev.mechanism == "event" and ev.budget.delta == delta
    n_hat = out.n_hat
    # ẑ_i = z_i + N(0, n̂/(8ρ₂)); threshold √(n̂ ln(2n̂/δ)/(4ρ₂)) + 1/2.
    assert z.noise_scale == pytest.approx(math.sqrt(n_hat / (8 * rho2)), rel=1e-12)
    assert out.sigma == pytest.approx(math.sqrt(n_hat / (8 * rho2)), rel=1e-12)
    assert out.threshold == pytest.approx(math.sqrt(n_hat * math.log(2 * n_hat / delta) / (4 * rho2))
                                          + 0.5, rel=1e-12)
    assert zcdp_threshold(n_hat, rho - 0.1 * rho, delta) == out.threshold
    assert np.array_equal(out.scores, counts - 5.0)
    assert np.array_equal(out.keep, out.noisy_scores >= out.threshold)
    assert led.total().rho == pytest.approx(rho) and led.total().delta == delta


def test_zcdp_filter_n_hat_over_estimates_n():
    rho, delta, n = 1.0, 1e-4, 50
    rng = np.random.default_rng(1)
    led = Ledger("f")
    n_hats = np.array([zcdp_filter(np.full(n, n), rho=rho, delta=delta, rng=rng, ledger=led).n_hat
                       for _ in range(2000)])
    # E[n̂] = n + √(ln(2/δ)/ρ₁) (PLUS): a deliberate over-estimate.
    assert np.mean(n_hats) == pytest.approx(n + math.sqrt(math.log(2 / delta) / (0.1 * rho)), abs=0.2)
    assert np.std(n_hats) == pytest.approx(math.sqrt(1 / (2 * 0.1 * rho)), rel=0.05)
    assert np.all(n_hats > n)


def test_basic_filter_probabilities():
    alpha = 0.1
    counts = np.array([10, 9, 5, 4, 7])
    out = basic_filter(counts, alpha=alpha, rng=np.random.default_rng(0))
    # p_i = clip(z_i/((1/2 − α)n), 0, 1) with n = len(counts) = 5
    n = len(counts)
    z = counts - n / 2
    assert np.allclose(out.probabilities, np.clip(z / ((0.5 - alpha) * n), 0, 1))
    assert out.n_hat is None and out.threshold is None


def test_basic_filter_keeps_a_complete_set_surely():
    out = basic_filter(np.full(20, 20), alpha=0.0, rng=np.random.default_rng(0))
    assert out.keep.all() and np.all(out.probabilities == 1.0)


def test_expected_margin_grows_with_n():
    assert expected_margin(800, 0.1, 1e-8) > 4 > expected_margin(200, 0.1, 1e-8)


# ----------------------------------------------------------------------------- known size (issue 33)


def test_known_size_filter_spends_rho_on_the_scores_alone_at_the_exact_scale():
    """n̄ public: no n̂ draw, ρ₂ = ρ, σ = √(n̄/(8ρ)) (ℓ2 sensitivity √n̄/2), δ on one event."""
    rho, delta, n_bound = 0.3, 1e-7, 16
    counts = np.array([10, 9, 1, 10, 7, 10, 10, 10, 10, 10])
    led = Ledger("f")
    out = zcdp_filter(counts, rho=rho, delta=delta, rng=np.random.default_rng(0), ledger=led,
                      n_bound=n_bound)
    ev, z = (s for _, s in led.spends())
    assert ev.mechanism == "event" and ev.budget.delta == delta
    assert z.mechanism == "gaussian" and z.zcdp().rho == pytest.approx(rho, rel=1e-12)
    assert z.sensitivity == pytest.approx(math.sqrt(n_bound) / 2, rel=1e-12)
    assert z.noise_scale == pytest.approx(math.sqrt(n_bound / (8 * rho)), rel=1e-12)
    assert out.sigma == z.noise_scale and out.n_hat == n_bound
    assert np.array_equal(out.scores, counts - 5.0)  # z_i = w_i − n/2 with the true n
    assert np.array_equal(out.keep, out.noisy_scores >= out.threshold)
    assert led.total().rho == pytest.approx(rho, rel=1e-12) and led.total().delta == delta


def test_known_size_threshold_is_the_exact_gaussian_tail_at_delta_over_n_bound():
    """A bad element (z = 1/2) is kept with probability exactly δ/n̄ (a union over ≤ n̄ is ≤ δ);
    tighter than the paper's Chernoff threshold at the same ρ, n̂ and δ."""
    for n_bound, rho, delta in ((200, 0.01, 1e-9), (5000, 0.003, 6e-9), (3, 2.0, 0.1)):
        thr = known_size_threshold(n_bound, rho, delta)
        sigma = math.sqrt(n_bound / (8 * rho))
        assert norm.sf((thr - 0.5) / sigma) == pytest.approx(delta / n_bound, rel=1e-9)
        assert thr < zcdp_threshold(n_bound, rho, delta / 2)  # the paper's bad-element half of δ


def test_known_size_filter_keeps_a_bad_element_at_rate_delta_over_n_bound():
    """Statistical check of the calibration: z = 1/2 exactly (w = 3 of n = 5), n̄ = 10, δ = 0.2:
    each such element is kept with probability δ/n̄ = 0.02; 40,000 draws, tolerance 5 sds."""
    led = Ledger("f")
    rng = np.random.default_rng(33)
    kept = np.concatenate([zcdp_filter(np.full(5, 3), rho=1.0, delta=0.2, rng=rng, ledger=led,
                                       n_bound=10).keep for _ in range(8000)])
    p = 0.2 / 10
    assert abs(kept.mean() - p) <= 5 * math.sqrt(p * (1 - p) / kept.size)


def test_known_size_filter_refuses_more_elements_than_its_bound():
    with pytest.raises(ValueError, match="exceed the public size bound"):
        zcdp_filter(np.full(5, 5), rho=1.0, delta=1e-6, rng=np.random.default_rng(0),
                    ledger=Ledger("f"), n_bound=4)


def test_expected_margin_known_matches_simulated_margins_and_beats_the_estimated_size():
    """On a complete set (w_i = n) the mean of (ẑ − threshold)/σ is the predicted margin (±0.05);
    the known size gains over the paper's n̂ at the same (ρ, δ)."""
    n, rho, delta = 300, 0.05, 1e-8
    led = Ledger("f")
    rng = np.random.default_rng(4)
    m = [(o.noisy_scores - o.threshold) / o.sigma for o in (
        zcdp_filter(np.full(n, n), rho=rho, delta=delta, rng=rng, ledger=led, n_bound=n)
        for _ in range(200))]
    assert np.mean(m) == pytest.approx(expected_margin_known(n, n, rho, delta), abs=0.05)
    assert expected_margin_known(n, n, rho, delta) > expected_margin(n, rho, delta) + 0.5
