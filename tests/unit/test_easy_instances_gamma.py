"""Easy Instances' Explore view "γ: pass rate and noise": the grid comes from the γ hint, the pass
rate rises with γ and the recorded noise grows with it (note §4.5, §8), and the values drawn are
the ones each run's trace and ledger recorded."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpviz
from dpviz.clustering.easy_instances import noisy_centers_plan, private_k_noisy_centers
from dpviz.clustering.easy_instances.spec import (
    GAMMA_STEP,
    EasyGMMParams,
    EasyKMeansParams,
    easy_kmeans_calibrate,
    settings,
    tuple_budget_kmeans,
)
from dpviz.privacy.accounting import dp_total
from dpviz.registry import Public, param_fields
from dpviz.viz.easy_instances_gamma import (
    TITLE,
    GammaCell,
    gamma_exploration,
    gamma_figure,
    gamma_grid,
    read_cell,
    simulate_cells,
)
from dpviz.viz.storyboards import ExplorationContext, explorations


def make_ctx(name: str, X: np.ndarray, k: int, *, epsilon: float, delta: float, radius: float,
             seed: int = 0, **params) -> ExplorationContext:
    """An ExplorationContext like the app's: seeded simulations, the tuple stage cached per seed,
    every run memoised (app/components/algorithm_view.simulate does the same with its cache)."""
    spec = {s.name: s for s in dpviz.algorithms()}[name]
    pub = Public(n_declared=X.shape[0], d=X.shape[1], k=k, radius=radius)
    p0 = spec.make_params(**params)
    base = {f.name: getattr(p0, f.name) for f, _ in param_fields(spec.params)}
    stages: dict = {}
    runs: dict = {}

    def simulate(epsilon=epsilon, delta=delta, seed=seed, **changes):
        p = spec.make_params(**{**base, **changes})
        key = (float(epsilon), float(delta), int(seed), repr(p))
        if key not in runs:
            a, b = np.random.SeedSequence(int(seed)).spawn(2)
            stage = None
            if spec.stage is not None:
                skey = (spec.stage_key(p), int(seed))
                if skey not in stages:
                    stages[skey] = spec.stage(X, k, radius=radius, rng=np.random.default_rng(a), pub=pub,
                                              params=p)
                stage = stages[skey]
            runs[key] = dpviz.run(name, X, k, epsilon=epsilon, delta=delta, radius=radius,
                                  n_declared=pub.n_declared, stage=stage, rng=np.random.default_rng(b),
                                  **{**base, **changes})
        return runs[key]

    return ExplorationContext(result=simulate(), X=X, pub=pub, params=p0, epsilon=epsilon, delta=delta,
                              seed=seed, simulate=simulate)


@pytest.fixture(scope="module")
def two_gaussians():
    """k = 2, d = 2, N(64·e_i, I): 1000 pieces of 40 rows; the tuple centers scatter by ≈ 0.3, so
    the test's balls γ·λ (λ ≈ 90) catch them from γ ≈ 5·10⁻³ on."""
    rng = np.random.default_rng(0)
    n = 40_000
    lab = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2))
    X[np.arange(n), lab] += 64.0
    return make_ctx("easy_instances", X, 2, epsilon=3.0, delta=1e-6, radius=128.0, n_tuples=1000)


@pytest.fixture(scope="module")
def cells(two_gaussians):
    grid = gamma_grid(EasyKMeansParams, "noisy_centers")
    return simulate_cells(two_gaussians, grid, 5)


def test_registered_for_both_entries_with_a_slider_hint():
    for name, params in (("easy_instances", EasyKMeansParams), ("easy_instances_gmm", EasyGMMParams)):
        assert [v.title for v in explorations(name)] == [TITLE]
        (h,) = [h for f, h in param_fields(params) if f.name == "gamma"]
        assert (h.low, h.high, h.step, h.scale, h.slider) == (0.0, 0.49, GAMMA_STEP, "linear", True)


def test_grid_spans_the_hint_range():
    np.testing.assert_allclose(gamma_grid(EasyKMeansParams, "noisy_centers"),
                               [5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.49])
    g = gamma_grid(EasyKMeansParams, "averages")
    assert g[0] == 5e-4 and g[-1] == pytest.approx(0.1665) and g[-1] < 1 / 6  # Prop 3.1a needs < 1/6


def test_pass_rate_rises_with_gamma(cells):
    """Seed j draws the same noise at every γ, so the pass rate is monotone up to one run of five
    between neighbouring γ (the tolerance; a larger ball can catch a second point of a tuple)."""
    rate = np.array([c.pass_rate for c in cells])
    assert all(c.feasible == 5 for c in cells)
    assert np.all(np.diff(rate) >= -1 / 5 - 1e-12), rate
    assert np.all(rate[:3] == 0.0), rate  # γ ≤ 2·10⁻³: the balls (≤ 0.18) miss most tuple centers
    assert np.all(rate[5:] == 1.0), rate  # γ ≥ 0.02: every run passes
    q = np.array([np.mean(c.q_share) for c in cells])
    assert np.all(np.diff(q) >= -1 / 5 - 1e-12), q


def test_noise_grows_with_gamma_and_is_the_recorded_one(cells, two_gaussians):
    passing = [c for c in cells if c.sigma]
    med = np.array([np.median(c.sigma) for c in passing])
    assert len(passing) >= 5 and np.all(np.diff(med) > 0), med
    kappa = np.array([c.kappa for c in cells])
    assert np.all(np.diff(kappa) > 0)
    # the σ read for a run is exactly its trace's and its ledger's Gaussian noise scale
    r = two_gaussians.simulate(seed=two_gaussians.seed + 1, gamma=0.02)
    cell = GammaCell(0.02)
    read_cell(cell, r)
    sig = r.step("noisy_centers").data["sigma"]
    assert sorted(cell.sigma) == sorted(sig.tolist())
    led = sorted(s.noise_scale for _, s in r.ledger.spends() if s.name.startswith("ĉ_"))
    np.testing.assert_array_equal(sorted(sig), led)
    eta = r.step("log_lambda").data["eta"]
    np.testing.assert_array_equal(sorted(cell.ratio), sorted((sig / np.exp(eta)).tolist()))
    # and the plan's κ is the note's exp(b·ln(k/(2δ_E)))
    plan = r.step("plan").data
    assert cell.kappa == plan["kappa"]


def test_figure_marks_current_gamma_and_says_simulation(two_gaussians):
    """γ = 0 is automatic: the mark is at the γ the run recorded (chosen from public inputs)."""
    g = two_gaussians.result.params["gamma"]
    ctx = two_gaussians
    budget = easy_kmeans_calibrate(ctx.epsilon, ctx.delta, ctx.pub, ctx.params).budget
    want = settings(ctx.pub, ctx.params, tuple_budget_kmeans(budget, ctx.params, ctx.pub), ctx.pub.n_declared)
    assert "gamma" in want.auto and g == want.gamma and g != 1e-3
    fig = gamma_exploration(two_gaussians, n_seeds=2)
    assert "SIMULATION, not a release" in fig.layout.title.text
    names = [t.name for t in fig.data]
    for want in ("pass rate (not ⊥), simulated", "σ_i recorded (median, min–max over passing runs)",
                 "κ from the public plan (right axis)", f"current γ = {g:g}",
                 "share of Y ∈ Q with ℓ̂_Y ≤ τ₁ (q/m) — non-private diagnostic"):
        assert want in names
    mark = fig.data[names.index(f"current γ = {g:g}")]
    assert tuple(mark.x) == (g, g)
    assert fig.layout.xaxis2.type == "log"


def test_infeasible_everywhere_says_so():
    cells = [GammaCell(1e-3, runs=5), GammaCell(1e-2, runs=5)]
    fig = gamma_figure(cells, current=1e-3, n_seeds=5, algorithm="easy_instances", aggregator="noisy_centers")
    assert any("every γ is infeasible" in a.text for a in fig.layout.annotations)
    assert "infeasible (public inputs): ⊥ before any data is read" in [t.name for t in fig.data]


def test_gamma_whose_kappa_overflows_is_infeasible_not_a_crash():
    """γ = 0.49 (the slider's top) at k = 8: κ = exp(b·ln(k/(2δ_E))) overflows; that is decided from
    public inputs, so it is ⊥ before the tuples are read, with the same released shape and totals."""
    plan = noisy_centers_plan(2000, 8, eps=1.0, delta=1e-6, beta=0.05, gamma=0.49)
    assert plan.test.feasible and math.isinf(plan.kappa) and not plan.feasible
    T = np.random.default_rng(0).normal(size=(2000, 8, 2))
    r = private_k_noisy_centers(T, eps=1.0, delta=1e-6, gamma=0.49, rng=0)
    assert not r.ok and "κ" in r.failure and "overflow" in r.failure
    ok = private_k_noisy_centers(T, eps=1.0, delta=1e-6, gamma=1e-3, rng=0)
    assert [(s.name, sorted(s.data)) for s in r.trace if s.released] == \
        [(s.name, sorted(s.data)) for s in ok.trace if s.released]
    tot = dp_total(r.ledger)
    assert tot.eps == pytest.approx(1.0, rel=1e-12) and tot.delta == pytest.approx(1e-6, rel=1e-12)


def test_averages_view_runs_below_one_sixth_and_reads_infeasible_runs():
    """Averages needs millions of tuples: on small data every γ is ⊥ before reading the data, and the
    view says so rather than drawing an empty curve; its grid never reaches the invalid γ ≥ 1/6.
    At the automatic t the run is refused (ValueError) before any data is read, naming the declared
    rows it would need; at a set t below n_min every γ is ⊥."""
    X = np.random.default_rng(1).normal(size=(2000, 2))
    with pytest.raises(ValueError, match=r"needs at least [\d,]+ declared rows .* n = 2,000 is declared"):
        make_ctx("easy_instances", X, 2, epsilon=1.0, delta=1e-6, radius=4.0, aggregator="averages")
    ctx = make_ctx("easy_instances", X, 2, epsilon=1.0, delta=1e-6, radius=4.0, aggregator="averages",
                   n_tuples=500)
    fig = gamma_exploration(ctx, n_seeds=1)
    mark = [t for t in fig.data if t.name == "infeasible (public inputs): ⊥ before any data is read"]
    assert len(mark) == 1 and max(mark[0].x) < 1 / 6 and len(mark[0].x) == len(gamma_grid(EasyKMeansParams,
                                                                                         "averages"))
    assert "current γ = 0.1" in [t.name for t in fig.data]


def test_grid_is_simulated_seed_by_seed(two_gaussians):
    """γ does not feed the tuple stage, so the view walks the grid one seed at a time: with the app's
    3-entry stage cache, each of the 5 seeds' stages is then built once, not once per γ."""
    from dataclasses import replace

    calls = []

    def recording(**kw):
        calls.append(kw["seed"])
        return two_gaussians.simulate(**kw)

    grid = gamma_grid(EasyKMeansParams, "noisy_centers")
    simulate_cells(replace(two_gaussians, simulate=recording), grid, 5)
    assert len(calls) == 5 * grid.size
    assert calls == sorted(calls)  # never back to an earlier seed
