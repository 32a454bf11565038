"""gauss_fit: the k-means of a private Gaussian fit (noisy mean and second moment)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpviz
from dpviz.clustering.gauss_fit import MEAN_SHARE, gauss_fit, noise_edge, quantize_gaussian
from dpviz.privacy.mechanisms import gaussian_sigma_zcdp


def _data(n=400, d=5, seed=0):
    gen = np.random.default_rng(seed)
    return 0.3 * gen.standard_normal((n, d))


def _spends(ledger):
    return {s.name: s for _, s in ledger.spends()}


def test_ledger_total_and_exact_noise_scales():
    X = _data()
    res = gauss_fit(X, 3, rho=0.5, radius=2.0, n_declared=400, rng=0)
    assert res.ledger.total().rho == pytest.approx(0.5, rel=1e-12)
    sp = _spends(res.ledger)
    assert sp["sum"].sensitivity == 2.0 and sp["second moment"].sensitivity == 4.0
    assert sp["sum"].noise_scale == pytest.approx(2.0 / math.sqrt(2 * 0.5 * MEAN_SHARE), rel=1e-12)
    assert sp["second moment"].noise_scale == pytest.approx(4.0 / math.sqrt(2 * 0.5 * (1 - MEAN_SHARE)),
                                                           rel=1e-12)
    fit = res.find("gaussian_fit").data
    assert fit["noise_edge"] == pytest.approx(2 * math.sqrt(5) * sp["second moment"].noise_scale / 400)
    assert res.centers.shape == (3, 5)
    assert np.all(np.linalg.norm(res.centers, axis=1) <= 2.0 + 1e-12)


def test_mean_only_puts_every_center_at_the_noisy_mean_with_the_stated_spread():
    X = _data(n=1000, d=3)
    errs = []
    for seed in range(300):
        res = gauss_fit(X, 4, rho=0.2, radius=1.0, n_declared=1000, moments=1, rng=seed)
        assert np.ptp(res.centers, axis=0).max() == 0.0
        assert res.ledger.total().rho == pytest.approx(0.2, rel=1e-12)  # all of ρ on the sum
        errs.append(res.centers[0] - X.mean(axis=0))
    sd = gaussian_sigma_zcdp(1.0, 0.2) / 1000
    assert np.std(np.array(errs)) == pytest.approx(sd, rel=0.1)  # 900 draws: ±~5% sd of sd


def test_quantizer_of_a_line_gaussian_is_lloyd_max():
    gen = np.random.default_rng(0)
    cov = np.diag([1.0, 0.0, 0.0])
    C, lam = quantize_gaussian(np.zeros(3), cov, 2, 0.0, gen)
    assert lam.tolist() == [1.0]
    assert sorted(np.round(np.abs(C[:, 0]), 2)) == pytest.approx([0.80, 0.80], abs=0.03)  # √(2/π)
    assert np.abs(C[:, 1:]).max() < 1e-12


def test_eigenvalues_under_the_noise_edge_give_the_mean():
    gen = np.random.default_rng(1)
    mean = np.array([0.1, -0.2])
    C, lam = quantize_gaussian(mean, np.diag([0.3, 0.1]), 3, 0.31, gen)
    assert lam.size == 0 and np.array_equal(C, np.repeat(mean[None], 3, axis=0))
    C, lam = quantize_gaussian(mean, np.diag([0.5, 0.1]), 3, 0.3, gen)
    assert lam.tolist() == pytest.approx([0.2])  # shrunk by the edge; the second direction dropped
    assert np.abs((C - mean)[:, 1]).max() < 1e-12


def test_noise_edge_formula():
    assert noise_edge(16, 3.0, 100) == pytest.approx(2 * 4 * 3.0 / 100)


def test_registered_run_meets_the_row_level_target():
    X = _data(n=600, d=4)
    res = dpviz.run("gauss_fit", X, 3, epsilon=1.0, delta=1e-6, radius=2.0, rng=3, n_declared=600)
    assert res.guarantee.eps <= 1.0 and res.guarantee.delta <= 1e-6
    assert res.centers.shape == (3, 4) and res.failure is None
    # Recovering a well separated 1-D structure at a generous budget: centers near ±0.8σ·u
    gen = np.random.default_rng(0)
    Y = np.zeros((20_000, 3))
    Y[:, 0] = 0.5 * gen.standard_normal(20_000)
    res = dpviz.run("gauss_fit", Y, 2, epsilon=8.0, delta=1e-6, radius=3.0, rng=0, n_declared=20_000)
    assert sorted(np.abs(res.centers[:, 0])) == pytest.approx([0.4, 0.4], abs=0.05)


def test_validation_messages():
    with pytest.raises(ValueError, match="moments"):
        gauss_fit(_data(), 2, rho=0.1, radius=1.0, n_declared=400, moments=3)
    with pytest.raises(ValueError, match="must be 1 when d > 2000"):
        gauss_fit(np.zeros((2, 2001)), 2, rho=0.1, radius=1.0, n_declared=2)
    wide = gauss_fit(np.zeros((2, 2001)), 2, rho=0.1, radius=1.0, n_declared=2, moments=1)
    assert wide.centers.shape == (2, 2001)
    with pytest.raises(ValueError, match="n_declared"):
        gauss_fit(_data(), 2, rho=0.1, radius=1.0, n_declared=0)
