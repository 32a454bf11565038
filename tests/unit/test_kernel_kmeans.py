"""DP kernel k-means (Acs et al., Alg. 2): features, clipping, exact noise scales, budget, baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.clustering.kernel_kmeans import (
    RandomFourierFeatures,
    clip_features,
    dp_kernel_kmeans,
    dp_kmeans_input,
    gamma_from_public,
    sigma_K_for_rho,
)
from dpviz.privacy.accounting import rho_for_dp, zcdp_to_dp
from dpviz.registry import Public, plan


def _blobs(n: int = 300, m: int = 8, k: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    means = rng.normal(0, 3.0, (k, m))
    y = rng.integers(0, k, n)
    X = means[y] + rng.normal(0, 0.5, (n, m))
    pub = means + rng.normal(0, 0.5, (k, m))  # "public" records: one per component
    return X, y, pub


# ----------------------------------------------------------------------------- features


def test_rff_norms_theorem2_and_kernel_approximation() -> None:
    rng = np.random.default_rng(1)
    X = (rng.random((50, 16)) < 0.4).astype(float)
    gamma = 0.05
    rff = RandomFourierFeatures.draw(16, 20_000, gamma, rng)
    assert rff.W.std() == pytest.approx(math.sqrt(2 * gamma), rel=0.01)  # w ~ N(0, 2γI)
    assert np.all((rff.b >= 0) & (rff.b < 2 * math.pi))
    Z = rff.transform(X)
    norms = np.linalg.norm(Z, axis=1)
    assert np.all(norms <= math.sqrt(2) + 1e-12)
    assert np.mean(norms**2) == pytest.approx(1.0, abs=0.01)  # E‖z‖² = 1 (Theorem 2)
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    assert np.max(np.abs(Z @ Z.T - K)) < 0.05  # d = 20,000: error ~ 1/√d


def test_clip_features_bounds_and_keeps_short_rows() -> None:
    Z = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = clip_features(Z, 1.0)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])


def test_gamma_from_public_is_inverse_median_squared_distance() -> None:
    P = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])  # squared distances 1, 4, 5 → median 4
    assert gamma_from_public(P) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="two distinct public records"):
        gamma_from_public(np.zeros((3, 2)))


# ----------------------------------------------------------------------------- budget


def test_ledger_noise_scales_are_the_papers_exactly() -> None:
    X, _, pub = _blobs()
    rho, T, share = 0.5, 7, 0.2
    res = dp_kernel_kmeans(X, 3, rho=rho, public_init=pub, radius=12.0, n_features=30, iters=T,
                           input_share=share, C_s=0.9, rng=3)
    sigma_K = math.sqrt(T / (2 * (1 - share) * rho))
    assert sigma_K == pytest.approx(sigma_K_for_rho((1 - share) * rho, T))
    spends = list(res.ledger.spends())
    sizes = [s for p, s in spends if "kernel Lloyd" in p and s.name == "cluster sizes"]
    sums = [s for p, s in spends if "kernel Lloyd" in p and s.name == "feature sums"]
    assert len(sizes) == len(sums) == T
    for s in sizes:
        assert s.sensitivity == 1.0 and s.noise_scale == pytest.approx(math.sqrt(2) * sigma_K, rel=1e-12)
        assert s.budget.rho == pytest.approx(1 / (4 * sigma_K**2), rel=1e-12)
    for s in sums:
        assert s.sensitivity == 0.9
        assert s.noise_scale == pytest.approx(math.sqrt(2) * sigma_K * 0.9, rel=1e-12)
    # Input-space means: ρ·share split evenly; sums with sensitivity Λ.
    inp = {s.name: s for p, s in spends if "input-space means" in p}
    assert inp["cluster sizes"].noise_scale == pytest.approx(1 / math.sqrt(share * rho), rel=1e-12)
    assert inp["cluster sums"].noise_scale == pytest.approx(12.0 / math.sqrt(share * rho), rel=1e-12)
    # Eq. 4 (RBF): the loop spends T/(2σ_K²); the whole run exactly ρ.
    assert res.ledger.total().rho == pytest.approx(rho, rel=1e-12)
    assert res.step("features").data["sigma_K"] == pytest.approx(sigma_K)


def test_drawn_count_noise_has_std_sqrt2_sigma_k() -> None:
    # Iteration 1 assigns against the public init, so its true sizes are known: n̂ − n ~ N(0, 2σ_K²).
    X, _, pub = _blobs(n=120, m=4)
    rho, T = 0.02, 1
    sigma_K = math.sqrt(T / (2 * 0.9 * rho))
    diffs = []
    for seed in range(300):
        res = dp_kernel_kmeans(X, 3, rho=rho, public_init=pub, radius=10.0, n_features=16, iters=T,
                               rng=seed)
        f = res.step("features").data
        rff = RandomFourierFeatures(f["W"], f["b"], f["gamma"])
        Z = clip_features(rff.transform(X), 1.0)
        C0 = res.step("init").data["centers"]
        a = np.argmin((C0**2).sum(1)[None] - 2 * Z @ C0.T, axis=1)
        diffs.append(res.steps("iteration")[0].data["noisy_counts"] - np.bincount(a, minlength=3))
    d = np.concatenate(diffs)
    assert d.std() == pytest.approx(math.sqrt(2) * sigma_K, rel=0.06)  # 900 draws: ~2.4% s.e.
    assert abs(d.mean()) < 4 * math.sqrt(2) * sigma_K / math.sqrt(d.size)


def test_no_noise_limit_is_lloyd_on_features() -> None:
    X, y, pub = _blobs(seed=4)
    res = dp_kernel_kmeans(X, 3, rho=1e12, public_init=pub, radius=20.0, n_features=100, iters=6,
                           gamma=0.02, rng=5)
    f = res.step("features").data
    Z = clip_features(RandomFourierFeatures(f["W"], f["b"], f["gamma"]).transform(X), 1.0)
    C = clip_features(RandomFourierFeatures(f["W"], f["b"], f["gamma"]).transform(pub), 1.0)
    for _ in range(6):
        a = np.argmin(((Z[:, None] - C[None]) ** 2).sum(-1), axis=1)
        C = np.stack([Z[a == j].mean(0) for j in range(3)])
    np.testing.assert_allclose(res.steps("iteration")[-1].data["centers"], C, atol=1e-5)
    labels = res.step("partition").data["labels"]
    np.testing.assert_array_equal(labels, np.argmin(((Z[:, None] - C[None]) ** 2).sum(-1), axis=1))
    # Input-space centres are the cluster means (clipping inactive at Λ = 20).
    np.testing.assert_allclose(res.centers, np.stack([X[labels == j].mean(0) for j in range(3)]), atol=1e-4)
    # Well-separated blobs: the clustering matches the truth up to relabelling.
    assert len({(int(a), int(b)) for a, b in zip(labels, y, strict=True)}) == 3


def test_same_seed_same_result_and_inputs_not_mutated() -> None:
    X, _, pub = _blobs()
    X0, pub0 = X.copy(), pub.copy()
    a = dp_kernel_kmeans(X, 3, rho=1.0, public_init=pub, radius=12.0, n_features=20, iters=3, rng=9)
    b = dp_kernel_kmeans(X, 3, rho=1.0, public_init=pub, radius=12.0, n_features=20, iters=3, rng=9)
    np.testing.assert_array_equal(a.centers, b.centers)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(pub, pub0)
    assert a.seed == 9 and a.ok and a.centers.shape == (3, 8)


def test_delta_is_reserved_and_validation() -> None:
    X, _, pub = _blobs()
    r = dp_kernel_kmeans(X, 3, rho=1.0, delta=1e-6, public_init=pub, radius=12.0, n_features=8, iters=2,
                         rng=0)
    assert r.ledger.total().delta == pytest.approx(1e-6)
    msg = r"'public_init' parameter of dp_kernel_kmeans must be a finite \(3, 8\)"
    with pytest.raises(ValueError, match=msg):
        dp_kernel_kmeans(X, 3, rho=1.0, public_init=pub[:2], radius=12.0)
    with pytest.raises(ValueError, match=r"'input_share' parameter of dp_kernel_kmeans must be a float in "
                                         r"the range \(0, 1\)"):
        dp_kernel_kmeans(X, 3, rho=1.0, public_init=pub, radius=12.0, input_share=1.0)
    with pytest.raises(ValueError, match="'k' parameter of dp_kernel_kmeans"):
        dp_kernel_kmeans(X, 0, rho=1.0, public_init=pub, radius=12.0)


def test_the_registry_plan_is_the_budget_door() -> None:
    # A row-level (ε, δ) reaches this algorithm only through registry.plan: the largest ρ whose
    # pure-ρ guarantee is within the target, i.e. the one zCDP inverse up to the search's width.
    pub = Public(n_declared=3000, d=5, k=3, radius=15.0)
    for eps, delta in [(0.5, 1e-5), (1.0, 1e-6), (8.0, 1e-5)]:
        p = plan("kernel_kmeans", eps, delta, pub)
        assert p.budget.delta == 0.0 and p.delta_prime == delta  # its own δ is unused: all of δ converts
        assert p.guarantee.eps <= eps and p.guarantee.delta == delta
        assert zcdp_to_dp(p.budget.rho, delta) == pytest.approx(p.guarantee.eps, rel=1e-12)
        assert rho_for_dp(eps, delta) * (1 - 2e-5) <= p.budget.rho <= rho_for_dp(eps, delta)
    # The paper's k-means-only example: ρ = T_K/(2σ_K²) = 20/3200 gives ε ≤ 0.543 at δ = 1e-5.
    assert zcdp_to_dp(20 / 3200, 1e-5) <= 0.543


def test_baseline_uses_the_same_noise_in_input_space() -> None:
    X, _, pub = _blobs()
    rho, T = 0.3, 4
    res = dp_kmeans_input(X, 3, rho=rho, public_init=pub, radius=15.0, iters=T, rng=0)
    sigma_K = sigma_K_for_rho(rho, T)
    it = res.steps("iteration")[0].data
    assert it["sigma_count"] == pytest.approx(math.sqrt(2) * sigma_K, rel=1e-12)
    assert it["sigma_sum"] == pytest.approx(math.sqrt(2) * sigma_K * 15.0, rel=1e-12)
    assert res.ledger.total().rho == pytest.approx(rho)


def test_registered_kernel_kmeans_meets_the_row_level_target() -> None:
    from dpviz.registry import get, run

    X, _, _ = _blobs(n=200)
    spec = get("kernel_kmeans")
    assert spec.budget_kind == "zcdp" and spec.steps[-1] == "input_means"
    r = run("kernel_kmeans", X, 3, epsilon=2.0, delta=1e-6, radius=15.0, rng=0, n_declared=200,
            n_features=20, iters=3)
    assert r.algorithm == "kernel_kmeans" and r.centers.shape == (3, 8)
    assert r.guarantee.eps <= 2.0 * (1 + 1e-9) and r.guarantee.delta <= 1e-6
    # The spent ρ converts (tight CKS20) to the guarantee's ε at the calibrated δ′.
    assert zcdp_to_dp(r.ledger.total().rho, r.guarantee.delta) == pytest.approx(r.guarantee.eps, rel=1e-6)
    with pytest.raises(ValueError, match="'n_features' parameter of DP kernel k-means"):
        spec.make_params(n_features=1)


def test_a_secure_sampler_run_is_a_release_and_a_seeded_run_is_not() -> None:
    from dpviz.privacy.release import SecureRNG

    X, _, pub = _blobs(n=60)
    sec = dp_kernel_kmeans(X, 3, rho=1.0, public_init=pub, radius=12.0, n_features=8, iters=1,
                           rng=SecureRNG())
    assert not sec.simulation and sec.seed is None
    sim = dp_kernel_kmeans(X, 3, rho=1.0, public_init=pub, radius=12.0, n_features=8, iters=1, rng=0)
    assert sim.simulation and sim.seed == 0
