import math

import numpy as np
import pytest
from scipy.stats import norm

from dpviz.privacy import (
    ZCDP,
    ApproxDP,
    Ledger,
    exponential,
    gaussian_dp,
    gaussian_sigma_dp,
    gaussian_sigma_zcdp,
    laplace,
)


def _gaussian_delta(sigma: float, sens: float, eps: float) -> float:
    # Balle & Wang 2018, Thm 8, written independently of the implementation.
    return norm.cdf(sens / (2 * sigma) - eps * sigma / sens) - math.exp(eps) * norm.cdf(
        -sens / (2 * sigma) - eps * sigma / sens)


def test_zcdp_sigma_formula():
    assert gaussian_sigma_zcdp(2.0, 0.5) == 2.0
    with pytest.raises(ValueError, match="'rho'"):
        gaussian_sigma_zcdp(1.0, 0.0)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (1.0, 1e-5), (4.0, 1e-8)])
def test_analytic_gaussian_sigma_is_tight(eps, delta):
    s = gaussian_sigma_dp(1.0, eps, delta)
    assert _gaussian_delta(s, 1.0, eps) <= delta
    assert _gaussian_delta(s * (1 - 1e-6), 1.0, eps) > delta * (1 - 1e-3)
    if eps < 1:  # never worse than the classic calibration where that one is valid
        assert s <= math.sqrt(2 * math.log(1.25 / delta)) / eps


def test_gaussian_dp_records_approx_dp_spend():
    led = Ledger("root")
    gaussian_dp(np.zeros(3), sensitivity=1.0, eps=1.0, delta=1e-5, rng=np.random.default_rng(0),
                ledger=led, name="g")
    _, sp = next(led.spends())
    assert sp.budget == ApproxDP(1.0, 1e-5)
    assert sp.noise_scale == pytest.approx(3.7306, abs=1e-3)  # Balle & Wang's table value


def test_laplace_scale_and_std():
    led = Ledger("root")
    out = laplace(np.zeros(100_000), sensitivity=2.0, eps=0.5, rng=np.random.default_rng(1),
                  ledger=led, name="lap")
    _, sp = next(led.spends())
    assert sp.noise_scale == 4.0
    assert led.total() == ZCDP(0.125, 0.0)
    assert np.std(out) == pytest.approx(4.0 * math.sqrt(2), rel=0.02)


def test_exponential_mechanism_distribution():
    scores = np.array([0.0, 1.0, 2.0])
    eps, sens = 2.0, 1.0
    rng = np.random.default_rng(2)
    led = Ledger("root")
    draws = np.array([exponential(scores, sensitivity=sens, eps=eps, rng=rng, ledger=led, name="em")
                      for _ in range(20_000)])
    p = np.exp(eps * scores / (2 * sens))
    p /= p.sum()
    freq = np.bincount(draws, minlength=3) / draws.size
    assert np.allclose(freq, p, atol=0.015)  # ≈ 4 sd of a binomial frequency at n = 20k
    assert led.total().rho == pytest.approx(20_000 * eps**2 / 2)
