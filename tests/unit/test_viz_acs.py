"""Acs figure builders build from real runs and label releases vs diagnostics."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.clustering.kernel_kmeans import dp_kernel_kmeans
from dpviz.generative.accountant import AcsSetting
from dpviz.generative.dpnorm import dp_norm
from dpviz.viz.acs import dpnorm_figure, epsilon_vs_epochs_figure, kernel_kmeans_figure, sample_grid_figure


def test_kernel_kmeans_figure_has_both_spaces_and_trajectories() -> None:
    rng = np.random.default_rng(0)
    X = (rng.random((90, 12)) < 0.4).astype(float)
    pub = (rng.random((3, 12)) < 0.4).astype(float)
    res = dp_kernel_kmeans(X, 3, rho=2.0, public_init=pub, radius=4.0, n_features=16, iters=4, rng=1)
    fig = kernel_kmeans_figure(res, X)
    names = [t.name for t in fig.data]
    assert names.count("cluster 0") == 2  # one per panel
    traj = [t for t in fig.data if t.name == "noisy centre 1 (DP)"]
    assert len(traj) == 1 and len(traj[0].x) == 5  # init + 4 iterations
    assert "input-space centres (DP)" in names
    assert sum(len(t.x) for t in fig.data if t.name and t.name.startswith("cluster ")) == 2 * 90


def test_dpnorm_figure_marks_the_chosen_bound() -> None:
    r = dp_norm(np.full(50, 1.23), sigma_C=0.01, rng=np.random.default_rng(0), C_max=2.0, w=20)
    fig = dpnorm_figure(r)
    assert len(fig.data) == 2 and fig.layout.shapes[0].x0 == r.C_s == 1.3


def test_sample_grid_and_epsilon_curves() -> None:
    rows = [np.random.default_rng(i).random((8, 64)) for i in range(3)]
    fig = sample_grid_figure(rows, row_labels=["a", "b", "c"])
    z = np.asarray(fig.data[0].z)
    assert z.shape == (3 * 9 + 1, 8 * 9 + 1)
    np.testing.assert_allclose(z[1:9, 1:9], rows[0][0].reshape(8, 8))
    f2 = epsilon_vs_epochs_figure(AcsSetting(), [1, 20], k=10, pld=False)
    ys = {t.name: list(t.y) for t in f2.data}
    assert abs(ys["paper's accountant (Thm 4)"][1] - 1.742) < 1e-3
    assert ys["one model per step, k=10"][1] > ys["RDP (dp-accounting)"][1]


def test_registered_run_gets_the_kernel_kmeans_storyboard() -> None:
    from dpviz.registry import run
    from dpviz.viz.storyboards import storyboard_builder

    rng = np.random.default_rng(2)
    X = rng.normal(0, 1, (80, 5))
    res = run("kernel_kmeans", X, 2, epsilon=3.0, delta=1e-6, radius=4.0, rng=0, n_declared=80,
              n_features=10, iters=2)
    fig = storyboard_builder("kernel_kmeans")(res, X)
    assert any(t.name == "noisy centre 0 (DP)" for t in fig.data)


def test_paper_budget_and_training_figures() -> None:
    from dpviz.generative.accountant import paper_epsilon
    from dpviz.generative.dpgm import DPGMParams, dpgm
    from dpviz.viz.acs import paper_budget_figure, training_figure

    acc = paper_epsilon(AcsSetting())
    fig = paper_budget_figure(acc)
    assert sum(t.x[0] for t in fig.data) == pytest.approx(acc.eps, rel=1e-12)  # 0.069 + 0.522 + 1.151
    X = (np.random.default_rng(0).random((40, 6)) < 0.4).astype(float)
    r = dpgm(X, params=DPGMParams(k=1, batch_size=10, epochs=1, hidden=4), public_init=None,
             n_declared=40, delta=1e-5, rng=0)
    f2 = training_figure(r)
    assert len(f2.data) == 3 and len(f2.data[0].x) == r.steps_run == 4
    assert r.simulation
