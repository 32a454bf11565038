"""Kernel k-means' Explore view "Accuracy vs ε by d" (Acs et al. Fig. 3, issue 14): what it simulates
and draws, on digits with a declared public split, within a few seconds."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dpviz
from dpviz.data import load_builtin
from dpviz.data.holdout import holdout_of
from dpviz.registry import Public, get
from dpviz.viz.acs import RFF_DIMENSIONS, RFF_EPS_GRID, rff_dimension_figure
from dpviz.viz.storyboards import ExplorationContext, explorations


def _ctx(labels: bool = True, n_features: int = 30, eps: float = 3.0):
    ds = load_builtin("digits")
    priv, pub_rows, h = holdout_of(ds.X, 0.15, rng=0)
    spec = get("kernel_kmeans")
    p = spec.make_params(n_features=n_features)
    pub = Public(n_declared=h.n_private, d=ds.d, k=10, radius=ds.radius)
    calls = []

    def simulate(epsilon=None, delta=None, seed=None, **changes):
        q = spec.make_params(**{"n_features": p.n_features, **changes})
        calls.append((epsilon, seed, q.n_features))
        return dpviz.run("kernel_kmeans", priv, 10, epsilon=epsilon, delta=1e-6, radius=ds.radius,
                         n_declared=h.n_private, rng=seed, public_X=pub_rows, n_features=q.n_features)

    res = simulate(eps, None, 0)
    calls.clear()
    ctx = ExplorationContext(result=res, X=priv, pub=pub, params=p, epsilon=eps, delta=1e-6, seed=0,
                             simulate=simulate, labels=ds.labels[h.private_idx] if labels else None)
    return ctx, calls


def test_the_view_is_registered_for_kernel_kmeans() -> None:
    assert [v.title for v in explorations("kernel_kmeans")] == ["Accuracy vs ε by d"]
    assert get("kernel_kmeans").params.__dataclass_fields__["n_features"].metadata["dpviz"].slider


@pytest.mark.slow
def test_accuracy_vs_eps_by_d_on_digits_mean_and_band_over_five_seeds() -> None:
    ctx, calls = _ctx()
    t = time.perf_counter()
    fig = rff_dimension_figure(ctx)
    elapsed = time.perf_counter() - t
    eps = sorted(set(RFF_EPS_GRID) | {3.0})
    ds = sorted(set(RFF_DIMENSIONS) | {30})
    # every (ε, seed, d) simulated once, seeds 0..4, the current d included
    assert sorted(calls) == sorted((e, s, d) for e in eps for s in range(5) for d in ds)
    lines = [tr for tr in fig.data if tr.mode == "lines+markers"]
    bands = [tr for tr in fig.data if tr.fill == "toself"]
    assert [tr.name for tr in lines] == [f"kernel k-means, d = {d}" + (" (current)" if d == 30 else "")
                                         for d in ds] + ["standard DP k-means (input space)"]
    assert len(bands) == len(lines)
    for tr in lines:
        assert list(tr.x) == eps and np.all((np.asarray(tr.y) >= 0) & (np.asarray(tr.y) <= 1))
    # the band is mean ± sd: symmetric around the line
    for band, line in zip(bands, lines, strict=True):
        up, down = np.asarray(band.y[: len(eps)]), np.asarray(band.y[len(eps):])[::-1]
        np.testing.assert_allclose((up + down) / 2, line.y)
    by = {tr.name: np.asarray(tr.y) for tr in lines}
    # the paper's trade-off: small d wins at small ε, large d at large ε; accuracy grows with ε
    assert by["kernel k-means, d = 10"][0] > by["kernel k-means, d = 200"][0] + 0.1  # ε = 0.5
    assert by["kernel k-means, d = 200"][-1] > by["kernel k-means, d = 10"][-1] + 0.1  # ε = 16
    assert by["kernel k-means, d = 200"][-1] > by["kernel k-means, d = 200"][0] + 0.2
    assert "clustering accuracy (Hungarian)" in fig.layout.title.text
    assert elapsed < 30.0, elapsed  # ~3 s on a quiet 2-core machine; generous under shared load


@pytest.mark.slow
def test_without_labels_the_view_shows_the_normalized_loss() -> None:
    ctx, _ = _ctx(labels=False, n_features=50)
    fig = rff_dimension_figure(ctx, eps_grid=(1.0, 8.0), dimensions=(50,), seeds=2)
    assert "normalized k-means loss" in fig.layout.title.text
    lines = [tr for tr in fig.data if tr.mode == "lines+markers"]
    assert [tr.name for tr in lines] == ["kernel k-means, d = 50 (current)",
                                         "standard DP k-means (input space)"]
    loss = np.asarray(lines[0].y)
    assert loss[-1] < loss[0] and np.all(loss < 1.0)  # more ε, lower loss; 0 = the non-private cost


@pytest.mark.parametrize("eps", [3.0])
def test_the_baseline_runs_at_the_same_rho_and_initial_records(eps) -> None:
    from dpviz.clustering.kernel_kmeans import dp_kmeans_input

    ctx, _ = _ctx(eps=eps)
    r = ctx.simulate(epsilon=eps, seed=0, n_features=30)
    b = dp_kmeans_input(ctx.X, 10, rho=r.params["rho"], public_init=r.find("init").data["public_records"],
                        radius=ctx.pub.radius, iters=5, rng=0)
    assert b.ledger.total().rho == pytest.approx(r.params["rho"])
