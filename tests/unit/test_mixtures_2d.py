"""The 2-D inverse-sensitivity demo: score sensitivity, ledger, recovery of separated clusters."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mixtures.inverse_sensitivity import (
    CAVEATS,
    bin_edges,
    binned_scores,
    cluster_size,
    inverse_sensitivity_2d,
    param_grid_2d,
)
from dpviz.mixtures.scenarios import clusters_2d


def test_bins_have_equal_probability():
    r = bin_edges(3, 0.9)
    cdf = 1 - np.exp(-(r**2) / 2)
    assert np.allclose(cdf, [0.3, 0.6, 0.9])


def test_empty_data_scores_n_times_mass_everywhere():
    grid = param_grid_2d(5.0, n_means=5)
    s = binned_scores(np.zeros((0, 2)), grid, N=60.0)
    assert np.allclose(s, 60.0 * 0.9)


def test_scores_have_sensitivity_one():
    rng = np.random.default_rng(0)
    grid = param_grid_2d(5.0, n_means=7)
    X = rng.normal(0, 2, (300, 2))
    s0 = binned_scores(X, grid, N=100.0)
    worst = 0.0
    for x in rng.normal(0, 3, (20, 2)):
        worst = max(worst, np.abs(binned_scores(np.vstack([X, x]), grid, 100.0) - s0).max())
        worst = max(worst, np.abs(binned_scores(X[1:], grid, 100.0) - s0).max())
    assert worst <= 1.0 + 1e-12 and worst == pytest.approx(1.0)


def test_demo_ledger_and_recovery():
    sc = clusters_2d(k=3, seed=np.random.default_rng(0))  # old seed 0's scenario (issue 24)
    assert np.all(np.linalg.eigvalsh(sc.truth.covs).max(1) / np.linalg.eigvalsh(sc.truth.covs).min(1) <= 9)
    X, _ = sc.sample(1500, np.random.default_rng(1))
    r = inverse_sensitivity_2d(X, 3, epsilon=2.0, bound=10.0, n_declared=1500, rng=0)
    spends = [s for _, s in r.ledger.spends()]
    assert len(spends) == 3 and all(s.budget.eps == pytest.approx(2.0 / 3) for s in spends)
    assert r.guarantee.eps == 2.0 and r.guarantee.delta == 0.0
    assert r.params["N"] == cluster_size(1500, 3, 0.5) == 250
    assert r.params["caveats"] == CAVEATS and "not the paper" in CAVEATS[0]
    # each true mean has a pick within 1.5 grid steps (grid step 20/12)
    d = np.linalg.norm(sc.truth.means[:, None] - r.centers[None], axis=2)
    assert np.all(d.min(axis=1) < 2.5)
    assert d.min(axis=1).max() > 0.1  # and the picks are grid points, not the true means


def test_demo_rejects_non_2d_data():
    with pytest.raises(ValueError, match="2 columns"):
        inverse_sensitivity_2d(np.zeros((10, 3)), 2, epsilon=1.0, bound=1.0, n_declared=10)
