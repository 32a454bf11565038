"""Tests for dpviz.clustering.baselines: ledgers, DP-Lloyd noise scales, the diffprivlib correction."""

import math

import numpy as np
import pytest

from dpviz.clustering import baselines as bl
from dpviz.data import fig3_three, fig7_gmm
from dpviz.metrics import center_error, nearest_center


@pytest.fixture(scope="module")
def three():
    return fig3_three(6000, sigma=0.05, rng=3)


def test_nonprivate_kmeans(three):
    r = bl.nonprivate_kmeans(three.X, 3, rng=0)
    assert r.ok and r.centers.shape == (3, 2)
    assert r.ledger.total().rho == 0 and r.ledger.total().delta == 0
    step = r.step("kmeans")
    assert not step.released and "no privacy" in step.note
    assert center_error(three.true_centers, r.centers) < 0.01


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_dp_lloyd_ledger_and_sigmas(three, delta):
    rho, iters, radius = 0.5, 4, 1.0
    r = bl.dp_lloyd(three.X, 3, rho=rho, delta=delta, radius=radius, iters=iters, rng=1)
    total = r.ledger.total()
    assert total.rho == pytest.approx(rho, rel=1e-12) and total.delta == pytest.approx(delta)
    # σ_sum = Λ/√(2·ρ/(2T)) = Λ√(T/ρ); σ_count = √(T/ρ)
    expected_sum = radius * math.sqrt(iters / rho)
    expected_count = math.sqrt(iters / rho)
    spends = list(r.ledger.spends())
    sums = [s for _, s in spends if s.name.startswith("sum[")]
    counts = [s for _, s in spends if s.name.startswith("count[")]
    assert len(sums) == len(counts) == 3 * iters
    assert all(s.noise_scale == pytest.approx(expected_sum) and s.sensitivity == radius for s in sums)
    assert all(s.noise_scale == pytest.approx(expected_count) and s.sensitivity == 1 for s in counts)
    assert all(s.budget.rho == pytest.approx(rho / (2 * iters)) for s in sums + counts)
    iters_steps = r.steps("iteration")
    assert len(iters_steps) == iters and all(s.released for s in iters_steps)
    assert iters_steps[0].data["sigma_sum"] == pytest.approx(expected_sum)
    assert not r.step("lloyd_partition").released


def test_dp_lloyd_noise_is_calibrated(three):
    """Empirical noise of the released counts (fixed partition via a public init) matches σ."""
    rho, radius = 2.0, 1.0
    init = three.true_centers
    draws = [bl.dp_lloyd(three.X, 3, rho=rho, radius=radius, iters=1, init=init, rng=seed)
             .step("iteration").data["noisy_counts"] for seed in range(200)]
    true_counts = np.bincount(nearest_center(three.X, init)[0], minlength=3)
    resid = np.array(draws) - true_counts
    # T = 1: σ_count = √(T/ρ); 600 draws put the sample sd within 10 % of σ (≈ 3.5 standard errors)
    assert resid.std() == pytest.approx(math.sqrt(1 / rho), rel=0.1)
    assert abs(resid.mean()) < 0.2


def test_dp_lloyd_removes_outside_rows_and_recovers_centers():
    ds = fig3_three(30_000, sigma=0.05, rng=4)
    X = np.vstack([ds.X, [[5.0, 5.0]]])
    r = bl.dp_lloyd(X, 3, rho=1.0, radius=1.0, iters=5, init=ds.true_centers + 0.05, rng=2)
    part = r.step("lloyd_partition").data
    assert part["n_removed"] == 1 and part["labels"][-1] == -1
    assert center_error(ds.true_centers, r.centers) < 0.01
    assert np.linalg.norm(r.centers, axis=1).max() <= 1.0


def test_dp_lloyd_bad_params(three):
    with pytest.raises(ValueError, match="'rho' parameter of dp_lloyd"):
        bl.dp_lloyd(three.X, 3, rho=0, radius=1)
    with pytest.raises(ValueError, match="'radius' parameter of dp_lloyd"):
        bl.dp_lloyd(three.X, 3, rho=1, radius=-1)
    with pytest.raises(ValueError, match="'init' parameter of dp_lloyd"):
        bl.dp_lloyd(three.X, 3, rho=1, radius=1, init=np.zeros((2, 2)))


def test_diffprivlib_factor_formula():
    # by hand: c = ∛(4·d·0.225²); factor = (1 + d c)/(d + c)
    for d in (1, 2, 4, 5, 10, 50):
        c = (4 * d * 0.050625) ** (1 / 3)
        assert bl.diffprivlib_true_spend_factor(d) == pytest.approx((1 + d * c) / (d + c))
    assert bl.diffprivlib_true_spend_factor(1) == pytest.approx(1.0)
    assert bl.diffprivlib_true_spend_factor(4) < 1 < bl.diffprivlib_true_spend_factor(5)


@pytest.mark.parametrize("d", [2, 10])
def test_diffprivlib_true_spend_equals_requested(monkeypatch, d):
    """Capture the ε of every mechanism diffprivlib builds; their composition must equal eps."""
    bl._import_diffprivlib()
    import diffprivlib.models.k_means as km

    used = []

    def spy(cls):
        class Spy(cls):
            def __init__(self, *args, **kwargs):
                used.append((cls.__name__, kwargs["epsilon"]))
                super().__init__(*args, **kwargs)

        return Spy

    monkeypatch.setattr(km, "GeometricFolded", spy(km.GeometricFolded))
    monkeypatch.setattr(km, "LaplaceBoundedDomain", spy(km.LaplaceBoundedDomain))
    ds = fig7_gmm(3000, k=3, d=d, rng=0)
    eps, iters = 1.5, 4
    r = bl.diffprivlib_kmeans(ds.X, 3, eps=eps, radius=ds.radius, iters=iters, rng=0)
    geo = [e for name, e in used if name == "GeometricFolded"]
    lap = [e for name, e in used if name == "LaplaceBoundedDomain"]
    # one count mechanism per iteration (shared by the clusters) and d coordinate mechanisms per
    # non-empty cluster; clusters compose in parallel, iterations sequentially
    assert len(geo) == iters and len(set(geo)) == 1
    assert len(lap) % d == 0 and len(set(lap)) == 1
    spent = iters * (geo[0] + d * lap[0])
    assert spent == pytest.approx(eps, rel=1e-9)
    # diffprivlib's swap: the count gets the "1" share and each coordinate the ∛(4dρ²) share
    assert geo[0] / lap[0] == pytest.approx(1 / (4 * d * 0.225**2) ** (1 / 3))
    assert r.ledger.total().rho == pytest.approx(eps**2 / 2)
    assert r.step("diffprivlib").data["eps_passed"] == pytest.approx(
        eps / bl.diffprivlib_true_spend_factor(d))
    assert r.centers.shape == (3, d)
