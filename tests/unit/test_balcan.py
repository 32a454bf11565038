"""Balcan et al. 2017 (issue 13): each mechanism's sensitivity and noise scale, the swap-score trick,
the empty-child sampling, the ledger total, the profiles and the boundary checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpviz.clustering.balcan import (
    BalcanParams,
    activation_probability,
    balcan_kmeans,
    brute_force_swap_losses,
    candidate,
    jl_projection,
    localswap,
    private_partition,
    projected_radius,
    recover_centers,
    resolve_config,
    sample_empty_count,
    sparse_recover,
    sparsify,
    swap_losses,
)
from dpviz.clustering.balcan.localsearch import _Distances, sqdist
from dpviz.clustering.balcan.partition import geometric_skip_count
from dpviz.data.bounds import clip_to_ball, row_norms
from dpviz.privacy.accounting import dp_total
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger


def _blobs(n: int, d: int, k: int, rng: np.random.Generator, sep: float = 1.0, sd: float = 0.05):
    mu = rng.standard_normal((k, d))
    mu *= sep / np.linalg.norm(mu, axis=1, keepdims=True)
    lab = rng.integers(0, k, n)
    return clip_to_ball(mu[lab] + sd * rng.standard_normal((n, d)), 1.5), lab, mu


# ----------------------------------------------------------------------------- Alg. 1


def test_activation_probability_is_noisy_threshold_tail() -> None:
    # f(m) of Alg. 1 equals P[m + Lap(1/ε′) > γ] exactly (note §3.1).
    eps_level, gamma = 0.3, 17.0
    m = np.arange(0, 60, dtype=float)
    expected = stats.laplace.sf(gamma - m, scale=1.0 / eps_level)
    np.testing.assert_allclose(activation_probability(m, eps_level, gamma), expected, rtol=1e-12)
    # The printed closed form, both branches.
    assert activation_probability(5.0, eps_level, gamma) == pytest.approx(0.5 * math.exp(-eps_level * 12))
    assert activation_probability(20.0, eps_level, gamma) == pytest.approx(1 - 0.5 * math.exp(-eps_level * 3))


def test_f0_is_representable_in_the_theory_regime() -> None:
    # At theory constants f(0) = ½(δ/n)^20-ish underflows a float; the log form keeps it.
    from dpviz.clustering.balcan.partition import log_activation_probability

    lf = float(log_activation_probability(0.0, 1e-6, 1e9))
    assert lf == pytest.approx(math.log(0.5) - 1e3)


def test_geometric_skip_count_matches_binomial() -> None:
    # The path used when 2^p − m overflows int64 must be exactly Binomial(n, f0).
    rng = np.random.default_rng(5)
    n, f0, reps = 40, 0.1, 20000
    draws = np.array([geometric_skip_count(n, f0, rng) for _ in range(reps)])
    observed = np.bincount(draws, minlength=n + 1)[:12]
    expected = stats.binom.pmf(np.arange(12), n, f0) * reps
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    assert chi2 < stats.chi2.ppf(0.999, 11)
    assert draws.mean() == pytest.approx(n * f0, rel=0.03)


def test_sample_empty_count_huge_population() -> None:
    rng = np.random.default_rng(0)
    # 2^92 empty children at f(0) = e^-80: essentially never an activation, and no enumeration.
    assert sample_empty_count(2**92, -80.0, rng) == 0
    # Mean n·f0 for a huge population with a sizeable product (Poisson-like regime).
    f0 = 3.0 / 2**70
    draws = [sample_empty_count(2**70, math.log(f0), rng) for _ in range(3000)]
    assert np.mean(draws) == pytest.approx(3.0, rel=0.06)


def test_partition_child_sampling_matches_enumeration_p2() -> None:
    # p = 2: the root's 4 children. 5 rows in one child, the other 3 empty. Binomial count of the
    # empty children + a uniform choice must equal 4 independent decisions with prob f(count):
    # marginals f(5), f(0), f(0), f(0) and independent pairs.
    eps_level, gamma = 1.0, 5.0
    Y = np.tile([[0.5, 0.5]], (5, 1))  # root [-1, 1]^2: child bits (1, 1)
    lo, edge = np.array([-1.0, -1.0]), 2.0
    reps = 6000
    rng = np.random.default_rng(11)
    on = np.zeros((reps, 4), dtype=bool)
    for r in range(reps):
        tree = private_partition(Y, lo=lo, edge=edge, eps_level=eps_level, gamma=gamma, n_rounds=1,
                                 rng=rng, ledger=Ledger("t"))
        kids = tree.centers[tree.level == 1]
        for c in kids:
            on[r, int(c[0] > 0) * 2 + int(c[1] > 0)] = True
    f5, f0 = activation_probability(5.0, eps_level, gamma), activation_probability(0.0, eps_level, gamma)
    expected = np.array([f0, f0, f0, f5])
    se = np.sqrt(expected * (1 - expected) / reps)
    assert np.all(np.abs(on.mean(axis=0) - expected) < 4.5 * se)
    # Independence of two empty children and of an empty and the full one.
    for a, b in ((0, 1), (0, 3)):
        joint = np.mean(on[:, a] & on[:, b])
        assert joint == pytest.approx(expected[a] * expected[b], abs=4.5 * math.sqrt(joint / reps) + 1e-3)


def test_partition_ledger_sensitivity_scale_and_reserve() -> None:
    rng = np.random.default_rng(1)
    Y = rng.uniform(-0.5, 0.5, size=(3000, 3))
    led = Ledger("p")
    eps_level, rounds = 0.05, 6
    tree = private_partition(Y, lo=np.full(3, -1.0), edge=2.0, eps_level=eps_level, gamma=200.0,
                             n_rounds=rounds, rng=rng, ledger=led, eps_charge=rounds * eps_level)
    spends = [s for _, s in led.spends()]
    laps = [s for s in spends if s.mechanism == "laplace"]
    assert laps and all(s.sensitivity == 1.0 and s.noise_scale == pytest.approx(1 / eps_level) for s in laps)
    # Every branch (early stop or not) is charged n_rounds·ε′.
    assert dp_total(led).eps == pytest.approx(rounds * eps_level, rel=1e-12)
    # Centers of depth a lie on the grid of edge 2/2^a and inside the root.
    for a in range(1, len(tree.active_per_level)):
        c = tree.centers[tree.level == a]
        cell = (c - tree.lo) / (tree.edge / 2**a) - 0.5
        np.testing.assert_allclose(cell, np.round(cell), atol=1e-9)


def test_partition_theory_gamma_never_splits() -> None:
    # Theory constants: γ ≫ n, so only the root survives (note §8.2's teaching point).
    cfg = resolve_config(BalcanParams(profile="theory"), n_declared=1000, d=20, k=2, epsilon=1.0)
    assert cfg.gamma > 1e6 and cfg.p == math.ceil(8 * math.log(1000))
    rng = np.random.default_rng(3)
    Y = clip_to_ball(rng.standard_normal((1000, cfg.p)) * 0.1, 1.0)
    tree = private_partition(Y, lo=np.full(cfg.p, -2.0), edge=4.0, eps_level=cfg.eps_level,
                             gamma=cfg.gamma, n_rounds=cfg.rounds, rng=rng, ledger=Ledger("t"))
    assert tree.active_per_level == (1, 0) and tree.centers.shape == (1, cfg.p)


def test_candidate_roots_cover_ball_and_candidates_clipped() -> None:
    rng = np.random.default_rng(2)
    Y = clip_to_ball(rng.standard_normal((2000, 4)), 2.0)
    led = Ledger("c")
    cs = candidate(Y, radius_p=2.0, n_shifts=4, eps_level=0.2, gamma=30.0, n_rounds=5,
                   rng=np.random.default_rng(20), ledger=led, eps_call=1.0)
    for t in cs.trees:  # the root [lo, lo + 8]^p contains the ball of radius 2
        assert np.all(t.lo <= -2.0) and np.all(t.lo + t.edge >= 2.0)
    assert np.all(row_norms(cs.centers) <= 2.0 + 1e-9)
    assert dp_total(led).eps == pytest.approx(4.0)
    capped = candidate(Y, radius_p=2.0, n_shifts=4, eps_level=0.2, gamma=30.0, n_rounds=5,
                       rng=np.random.default_rng(20), ledger=Ledger("c"), eps_call=1.0, max_candidates=7)
    assert capped.centers.shape[0] == 7 and capped.n_before_subsample == cs.n_before_subsample


# ----------------------------------------------------------------------------- Alg. 3


@pytest.mark.parametrize("k", [1, 2, 4])
def test_swap_losses_match_brute_force(k: int) -> None:
    rng = np.random.default_rng(k)
    Y = rng.standard_normal((300, 3))
    C = rng.standard_normal((13, 3))
    z = rng.integers(0, 13, size=k)
    if k == 4:
        z[1] = z[0]  # Z^(0) is drawn i.i.d.: repeated centers must work
    fast, L = swap_losses(_Distances(Y, C), z)
    np.testing.assert_allclose(fast, brute_force_swap_losses(Y, C, z), rtol=2e-5)
    assert np.isclose(L, sqdist(Y, C[z]).min(axis=1).sum(), rtol=1e-5)
    # Same without the cached W (chunked recomputation path).
    slow, _ = swap_losses(_Distances(Y, C, cache_entries=0), z)
    np.testing.assert_allclose(slow, fast, rtol=1e-5)


def test_localswap_mechanisms_and_probabilities() -> None:
    rng = np.random.default_rng(7)
    Y = clip_to_ball(rng.standard_normal((400, 3)), 2.0)
    C = clip_to_ball(rng.standard_normal((9, 3)), 2.0)
    led = Ledger("ls")
    T3, eps, rp = 6, 3.0, 2.0
    ls = localswap(Y, C, k=3, T3=T3, eps=eps, radius_p=rp, rng=rng, ledger=led)
    spends = [s for _, s in led.spends()]
    assert len(spends) == T3 + 1 and all(s.mechanism == "exponential" for s in spends)
    assert all(s.sensitivity == pytest.approx(4 * rp**2) for s in spends)  # one row: [0, 4Λ_p²]
    assert all(s.budget.eps == pytest.approx(eps / (T3 + 1)) for s in spends)
    assert dp_total(led).eps == pytest.approx(eps)
    # The last step's probabilities are the paper's exp(−ε·ΔL/(8Λ²(T+1))) over y ∈ C \ Z.
    z_prev = ls.path[-2]
    brute = brute_force_swap_losses(Y, C, z_prev)
    L = sqdist(Y, C[z_prev]).min(axis=1).sum()
    logits = -eps * (brute - L) / (8 * rp**2 * (T3 + 1))
    logits[:, np.unique(z_prev)] = -np.inf
    p = np.exp(logits - logits.max())
    np.testing.assert_allclose(ls.last_probs, p / p.sum(), rtol=1e-4, atol=1e-12)
    # The path is consistent with the recorded swaps, and the losses with the path.
    for t, (j, y) in enumerate(ls.swaps):
        assert ls.path[t + 1][j] == y
    for t, zt in enumerate(ls.path):
        assert ls.losses[t] == pytest.approx(sqdist(Y, C[zt]).min(axis=1).sum(), rel=1e-5)
    assert 1 <= ls.chosen_t <= T3 and np.array_equal(ls.z_idx, ls.path[ls.chosen_t])


def test_localswap_large_eps_is_greedy_swap() -> None:
    # ε → ∞: each step takes the best swap y ∈ C \ Z (note §6 invariant). Alg. 3 always swaps, so
    # at a local optimum the best swap may raise the loss; the final selection then keeps the best.
    rng = np.random.default_rng(4)
    Y = clip_to_ball(rng.standard_normal((500, 2)), 3.0)
    C = clip_to_ball(rng.standard_normal((30, 2)) * 1.5, 3.0)
    ls = localswap(Y, C, k=3, T3=8, eps=1e9, radius_p=3.0, rng=rng, ledger=Ledger("g"))
    for t in range(8):
        brute = brute_force_swap_losses(Y, C, ls.path[t])
        brute[:, np.unique(ls.path[t])] = np.inf
        assert ls.losses[t + 1] == pytest.approx(brute.min(), rel=1e-5)
    assert ls.losses[ls.chosen_t] == pytest.approx(ls.losses[1:].min(), rel=1e-5)
    assert ls.p_max[-1] == pytest.approx(1.0)


# ----------------------------------------------------------------------------- recovery


def test_recover_centers_scales_and_large_eps_limit() -> None:
    rng = np.random.default_rng(8)
    d, radius = 16, 2.0
    X = clip_to_ball(rng.standard_normal((1000, d)), radius)
    labels = rng.integers(0, 3, 1000)
    led = Ledger("r")
    rec = recover_centers(X, labels, 3, eps_count=0.2, eps_sum=0.5, radius=radius, rng=rng, ledger=led)
    spends = {s.name: s for _, s in led.spends()}
    assert spends["counts"].sensitivity == 1.0 and spends["counts"].noise_scale == pytest.approx(5.0)
    assert spends["sums"].sensitivity == pytest.approx(math.sqrt(d) * radius)  # the √d fix (note §4)
    assert rec.sum_scale == pytest.approx(math.sqrt(d) * radius / 0.5)
    assert dp_total(led).eps == pytest.approx(0.7)
    exact = recover_centers(X, labels, 3, eps_count=1e12, eps_sum=1e12, radius=radius, rng=rng,
                            ledger=Ledger("r"))
    means = np.array([X[labels == j].mean(axis=0) for j in range(3)])
    np.testing.assert_allclose(exact.centers, means, atol=1e-8)


def test_sparse_recover_support_and_ledger() -> None:
    rng = np.random.default_rng(9)
    d, s, bound = 200, 3, 1.0
    X = np.zeros((600, d))
    X[:300, :3] = 0.9
    X[300:, 50:53] = -0.8
    X = sparsify(X + 0.01 * rng.standard_normal(X.shape), s, bound)
    assert np.all((X != 0).sum(axis=1) <= s) and np.all(np.abs(X) <= bound)
    labels = np.repeat([0, 1], 300)
    led = Ledger("s")
    out = sparse_recover(X, labels, 2, s=s, eta=0.5, bound=bound, eps_count=1.0, eps_select=20.0,
                         eps_value=5.0, rng=rng, ledger=led)
    m = math.ceil(2 * s / 0.5)
    assert out.support.shape == (2, m)
    assert set(range(3)) <= set(out.support[0]) and set(range(50, 53)) <= set(out.support[1])
    assert np.all((out.centers != 0).sum(axis=1) <= m)
    vals = next(sp for _, sp in led.spends() if sp.name == "values")
    assert vals.sensitivity == pytest.approx(min(m, s) * bound)
    assert dp_total(led).eps == pytest.approx(26.0)


# ----------------------------------------------------------------------------- pipeline


def test_projection_radius_and_clipping() -> None:
    rng = np.random.default_rng(0)
    X = clip_to_ball(rng.standard_normal((5000, 50)), 1.0)
    proj = jl_projection(X, 6, 1.0, rng)
    assert proj.radius_p == pytest.approx(math.sqrt(stats.chi2.ppf(0.999, 6) / 6))
    assert projected_radius(1.0, 6) == proj.radius_p
    assert np.all(row_norms(proj.Y) <= proj.radius_p * (1 + 1e-12))


@pytest.mark.parametrize("params", [
    BalcanParams(),
    BalcanParams(n_lloyd=0, refine=0.0),
    BalcanParams(recovery="sparse", sparse_s=5),
    BalcanParams(candidate=0.3, local_search=0.1, counts=0.05, sums=0.1, refine=0.1),  # leaves 0.35
])
def test_ledger_total_is_epsilon(params: BalcanParams) -> None:
    rng = np.random.default_rng(12)
    X, _, _ = _blobs(3000, 20, 4, rng)
    res = balcan_kmeans(X, 4, epsilon=0.7, radius=1.5, params=params, rng=3)
    assert dp_total(res.ledger).eps == pytest.approx(0.7, rel=1e-12)
    assert res.centers.shape == (4, 20) and res.ok
    assert np.all(row_norms(res.centers) <= 1.5 * (1 + 1e-12))
    res.ledger.check()
    assert all(s.budget.delta == 0 for _, s in res.ledger.spends())


def test_theory_profile_runs_and_reports() -> None:
    rng = np.random.default_rng(13)
    X, _, _ = _blobs(400, 10, 2, rng)
    res = balcan_kmeans(X, 2, epsilon=1.0, radius=1.5, params=BalcanParams(profile="theory", T3=3), rng=1)
    cfg = res.step("config").data
    assert cfg["trials"] == math.ceil(2 * math.log(10))
    assert cfg["shifts"] == math.ceil(27 * 2 * math.log(4000))
    assert cfg["gamma"] > 400  # γ ≫ n: nothing splits
    assert all(levels == (1, 0) for s in res.steps("partition") if s.name == "partition"
               for levels in s.data["active_per_level"])
    assert dp_total(res.ledger).eps == pytest.approx(1.0, rel=1e-12)
    assert res.step("selection").released


def test_theory_profile_at_scale_refuses_with_advice() -> None:
    # An explicit T₃ is never capped: the paper-sized run is refused with advice, before any work.
    X = np.zeros((100_000, 2))
    with pytest.raises(ValueError, match="Lower T3"):
        balcan_kmeans(X, 10, epsilon=1.0, radius=1.0, params=BalcanParams(profile="theory", T3=5000))


def test_same_seed_same_output_and_input_untouched() -> None:
    rng = np.random.default_rng(14)
    X, _, _ = _blobs(2000, 30, 3, rng)
    X0 = X.copy()
    a = balcan_kmeans(X, 3, epsilon=1.0, radius=1.5, rng=7)
    b = balcan_kmeans(X, 3, epsilon=1.0, radius=1.5, rng=7)
    np.testing.assert_array_equal(a.centers, b.centers)
    np.testing.assert_array_equal(X, X0)
    assert a.seed == 7


def test_demo_two_clusters_are_separated() -> None:
    # The authors' demo (note §3.7): d = 100, two centers of norm 10, unit-sphere noise, n = 1000.
    # Pure ε-DP with the √d-corrected recovery and an honest local-search sensitivity needs more
    # budget than the demo's ε = 0.5 (at ε ≤ 4 some seeds leave one center with no rows); at ε = 8
    # every seed recovers both clusters.
    rng = np.random.default_rng(15)
    d, n = 100, 1000
    mu = rng.standard_normal((2, d))
    mu = 10 * mu / np.linalg.norm(mu, axis=1, keepdims=True)
    noise = rng.standard_normal((n, d))
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    lab = np.repeat([0, 1], n // 2)
    X = mu[lab] + noise
    for s in range(5):
        res = balcan_kmeans(X, 2, epsilon=8.0, radius=11.0, rng=s)
        pred = np.argmin(sqdist(X, res.centers), axis=1)
        err = min(np.mean(pred != lab), np.mean(pred == lab))
        assert err < 0.02, (s, err)


def test_validation_messages() -> None:
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match=r"The 'k' parameter of balcan_kmeans must be an int in the range"):
        balcan_kmeans(X, 0, epsilon=1.0, radius=1.0)
    with pytest.raises(ValueError, match=r"The 'epsilon' parameter of balcan_kmeans"):
        balcan_kmeans(X, 2, epsilon=0.0, radius=1.0)
    with pytest.raises(ValueError, match="profile"):
        BalcanParams(profile="paper")
    with pytest.raises(ValueError, match="sum to at most 1"):
        BalcanParams(candidate=0.9, sums=0.5)
    with pytest.raises(ValueError, match=r"The 'T3' parameter of BalcanParams must be an int"):
        BalcanParams(T3=2.5)
    with pytest.raises(ValueError, match="refine"):
        BalcanParams(n_lloyd=2, refine=0.0)
    big = np.broadcast_to(np.zeros(1), (100_001, 1000))
    with pytest.raises(ValueError, match="n·d up to"):
        balcan_kmeans(big, 2, epsilon=1.0, radius=1.0)


def test_dp_total_of_a_pure_ledger_and_an_approximate_spend() -> None:
    led = Ledger("x")
    led.record("a", "laplace", ApproxDP(0.5))
    par = led.child("p", composition="parallel")
    par.record("b", "laplace", ApproxDP(0.2))
    par.record("c", "laplace", ApproxDP(0.3))
    total = dp_total(led)
    assert total.eps == pytest.approx(0.8) and total.delta == 0.0
    led.record("d", "gaussian", ApproxDP(0.1, 1e-6))
    assert dp_total(led).delta == 1e-6  # no longer pure ε-DP: balcan_kmeans raises on such a total


def test_sulq_baseline_budget_and_init() -> None:
    import dpviz
    from dpviz.privacy.accounting import rho_for_dp, zcdp_to_dp

    rng = np.random.default_rng(16)
    X, _, _ = _blobs(2000, 10, 3, rng)
    res = dpviz.run("sulq", X, 3, epsilon=1.0, delta=1e-6, radius=1.5, n_declared=2000, rng=1)
    rho = res.ledger.total().rho
    assert rho == pytest.approx(res.plan.budget.rho, rel=1e-12)  # what the plan handed, spent
    assert zcdp_to_dp(rho, 1e-6) <= 1.0 and zcdp_to_dp(rho, 1e-6) == pytest.approx(1.0, rel=1e-4)
    assert rho_for_dp(1.0, 1e-6) * (1 - 2e-5) <= rho <= rho_for_dp(1.0, 1e-6)
    assert len(res.steps("iteration")) == 20
    assert np.all(row_norms(res.step("init").data["centers"]) <= 1.5 * (1 + 1e-12))


# ----------------------------------------------------------------------------- registry


def test_registered_and_runs_through_dpviz_run() -> None:
    import dpviz
    from dpviz.registry import Public, get

    spec = get("balcan")
    assert spec.budget_kind == "pure" and spec.params is BalcanParams
    pub = Public(n_declared=2000, d=10, k=3, radius=1.5)
    assert spec.guarantee(ApproxDP(0.8), pub, BalcanParams(), 1e-9) == ApproxDP(0.8, 0.0)
    rng = np.random.default_rng(17)
    X, _, _ = _blobs(2000, 10, 3, rng)
    res = dpviz.run("balcan", X, 3, epsilon=0.9, delta=1e-6, radius=1.5, n_declared=2000, rng=0, T3=5)
    assert res.algorithm == "balcan" and res.guarantee == ApproxDP(0.9, 0.0)
    assert dp_total(res.ledger).eps == pytest.approx(0.9, rel=1e-9)
    assert {s.name for s in res.trace} >= set(spec.steps)
    sulq = dpviz.run("sulq", X, 3, epsilon=0.9, delta=1e-6, radius=1.5, n_declared=2000, rng=0)
    assert sulq.guarantee.eps <= 0.9 * (1 + 1e-9) and sulq.guarantee.delta <= 1e-6


def test_theory_default_steps_capped_with_a_note() -> None:
    from dpviz.clustering.balcan.pipeline import THEORY_AUTO_WORK, _estimated_work, _fit_theory_steps

    params = BalcanParams(profile="theory")
    cfg = resolve_config(params, n_declared=1797, d=64, k=10, epsilon=1.0)
    capped = _fit_theory_steps(cfg, params, 1797)
    assert 1 <= capped.T3 < cfg.T3 == math.ceil(100 * 10 * math.log(17970))
    assert _estimated_work(capped, 1797) <= THEORY_AUTO_WORK
    assert "capped" in capped.notes[-1]
    explicit = BalcanParams(profile="theory", T3=50)
    cfg2 = resolve_config(explicit, n_declared=1797, d=64, k=10, epsilon=1.0)
    assert _fit_theory_steps(cfg2, explicit, 1797).T3 == 50  # an explicit T₃ is never changed


def test_localswap_subsampled_books_the_amplified_epsilon_and_scores_q_rows() -> None:
    """Issue 28: with a Poisson rate q < 1 each of the T₃ + 1 mechanisms runs at
    ε_s = ln(1 + (e^{ε_step} − 1)/q) on a fresh subsample, booked as ε_step (amplification by
    Poisson subsampling, add/remove); the ledger still totals ε, and the sampled mechanisms'
    noise scale is 2Δ/ε_s. At q = 1 the run is the full-data Alg. 3 (same draws)."""
    rng = np.random.default_rng(11)
    Y = clip_to_ball(rng.standard_normal((4000, 3)), 2.0)
    C = clip_to_ball(rng.standard_normal((12, 3)), 2.0)
    T3, eps, rp, q = 6, 2.0, 2.0, 0.1
    led = Ledger("ls")
    ls = localswap(Y, C, k=3, T3=T3, eps=eps, radius_p=rp, rng=np.random.default_rng(5), ledger=led,
                   sample_rate=q)
    spends = [s for _, s in led.spends()]
    step = eps / (T3 + 1)
    eps_s = math.log1p(math.expm1(step) / q)
    assert len(spends) == T3 + 1 and all(s.budget.eps == pytest.approx(step) for s in spends)
    assert math.log1p(q * math.expm1(eps_s)) == pytest.approx(step, rel=1e-12)
    assert all(s.noise_scale == pytest.approx(2 * 4 * rp**2 / eps_s) for s in spends)
    assert dp_total(led).eps == pytest.approx(eps)
    assert 1 <= ls.chosen_t <= T3 and np.array_equal(ls.z_idx, ls.path[ls.chosen_t])
    # losses are the subsample's scaled by 1/q: within 30 % of the full loss at q = 0.1, 4000 rows
    full = [sqdist(Y, C[z]).min(axis=1).sum() for z in ls.path]
    assert np.allclose(ls.losses, full, rtol=0.3)
    a = localswap(Y, C, k=3, T3=T3, eps=eps, radius_p=rp, rng=np.random.default_rng(5), ledger=Ledger("a"))
    b = localswap(Y, C, k=3, T3=T3, eps=eps, radius_p=rp, rng=np.random.default_rng(5), ledger=Ledger("b"),
                  sample_rate=1.0)
    assert np.array_equal(a.path, b.path) and a.chosen_t == b.chosen_t


def test_localswap_subsample_mask_comes_from_the_algorithm_rng() -> None:
    """Issue 28: the Poisson mask of each step is drawn from the algorithm's Generator (not numpy's
    global state, not the data's stream): the same Generator seed gives the same subsamples and path
    whatever the global state; another seed gives other subsamples (other scaled losses)."""
    data = np.random.default_rng(21)
    Y = clip_to_ball(data.standard_normal((3000, 3)), 2.0)
    C = clip_to_ball(data.standard_normal((10, 3)), 2.0)

    def run(seed: int, global_seed: int):
        np.random.seed(global_seed)  # noqa: NPY002 -- the legacy global state is what is tested
        return localswap(Y, C, k=3, T3=5, eps=2.0, radius_p=2.0, rng=np.random.default_rng(seed),
                         ledger=Ledger("ls"), sample_rate=0.2)

    a, b, c = run(7, 1), run(7, 2), run(8, 1)
    assert np.array_equal(a.path, b.path) and np.array_equal(a.losses, b.losses)
    assert not np.array_equal(a.losses, c.losses)


def test_integer_child_keys_group_exactly_like_the_byte_keys() -> None:
    """Issue 28 speed: the integer keys (bincount or int64 unique) give the same groups, in the same
    order, as np.unique over the byte keys (so seeded runs are unchanged)."""
    from dpviz.clustering.balcan.partition import _group_int, _row_keys

    rng = np.random.default_rng(3)
    for n, p, m in ((5000, 6, 40), (3000, 12, 2000)):  # bincount path, then the int64-unique path
        parent = rng.integers(0, m, n)
        bits = rng.random((n, p)) < 0.5
        g_parent, g_bits, inverse, counts = _group_int(parent, bits, m)
        _, first, inv, c = np.unique(_row_keys(parent, bits), return_index=True, return_inverse=True,
                                     return_counts=True)
        assert np.array_equal(g_parent, parent[first]) and np.array_equal(g_bits, bits[first])
        assert np.array_equal(inverse, inv.ravel()) and np.array_equal(counts, c)
