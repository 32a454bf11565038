"""zCDPFilter and BasicFilter on friend counts (Tsfadia et al. 2022, §4.1-§4.2)."""

import math

import numpy as np
import pytest

from dpviz.core.filters import basic_filter, expected_margin, zcdp_filter, zcdp_threshold
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
