"""The Easy Instances storyboard builds from k-means, GMM, Averages and ⊥ Results."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.clustering.easy_instances import private_gmm, private_k_averages, private_k_means
from dpviz.viz.easy_instances import PANEL_TITLES, easy_instances_storyboard
from dpviz.viz.storyboards import storyboard_builder


def _mixture(n: int, d: int = 2, R: float = 4096.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lab = rng.integers(0, 2, n)
    mu = np.zeros((2, d))
    mu[[0, 1], [0, 1]] = R
    return mu[lab] + rng.normal(size=(n, d))


@pytest.fixture(scope="module")
def X():  # noqa: N802 (the data matrix)
    return _mixture(1500 * 60)


def _names(fig):
    return [t.name for t in fig.data]


def test_registered_for_both_entries():
    assert storyboard_builder("easy_instances") is easy_instances_storyboard
    assert storyboard_builder("easy_instances_gmm") is easy_instances_storyboard


def test_storyboard_kmeans_success(X):
    r = private_k_means(X, 2, eps=1.0, delta=1e-6, radius=8192.0, n_tuples=1500, rng=4)
    assert r.ok
    fig = easy_instances_storyboard(r, X, reference_centers=np.array([[4096.0, 0], [0, 4096.0]]))
    names = _names(fig)
    assert [a.text for a in fig.layout.annotations[:4]] == list(PANEL_TITLES)
    for want in ("balls B(y_i, γλ_i) of Q — non-private diagnostic",
                 "chosen tuple Y* — non-private diagnostic",
                 "2σ_i noise clouds — private", "noisy centers ĉ_i — private", "private Lloyd step — private",
                 "τ₁ = ln(2m/β)/ε₁"):
        assert want in names
    # one ball per sampled tuple point, drawn as closed circles of the recorded radius
    test = r.step("test").data
    balls = fig.data[names.index("balls B(y_i, γλ_i) of Q — non-private diagnostic")]
    x = np.asarray(balls.x, dtype=float)
    assert np.count_nonzero(np.isnan(x)) == test["radii"].size
    seg = x[:49]
    assert (seg.max() - seg.min()) / 2 == pytest.approx(test["radii"].reshape(-1)[0], rel=1e-6)
    bars = fig.data[names.index("ℓ̂_Y = ℓ_Y + Lap(1/ε₁) — non-private diagnostic")]
    np.testing.assert_allclose(bars.y, test["ell_hat"])
    assert "continue" in " ".join(a.text for a in fig.layout.annotations)


def test_storyboard_bottom_says_why(X):
    Xc = _mixture(1500 * 20, R=4.0)
    r = private_k_means(Xc, 2, eps=1.0, delta=1e-6, radius=16.0, n_tuples=1500, rng=0)
    assert not r.ok
    fig = easy_instances_storyboard(r, Xc)
    assert "output ⊥" in fig.layout.title.text and "Failure" in fig.layout.title.text
    assert "private Lloyd step — private" not in _names(fig)
    assert "→ ⊥" in " ".join(a.text for a in fig.layout.annotations)
    r2 = private_k_means(Xc, 2, eps=1.0, delta=1e-6, radius=16.0, n_tuples=500, rng=0)  # infeasible
    fig2 = easy_instances_storyboard(r2, Xc)
    assert "infeasible" in fig2.layout.title.text and "n_min" in fig2.layout.title.text


def test_storyboard_gmm_and_averages():
    Xg = _mixture(1500 * 120, seed=1)
    r = private_gmm(Xg, 2, eps=1.0, delta=1e-6, radius=8192.0, n_tuples=1500, rng=6)
    assert r.ok
    assert "2σ ellipses of (μ̂_i, Σ̂_i) — private" in _names(easy_instances_storyboard(r, Xg))
    rng = np.random.default_rng(0)
    mu = np.array([[-30.0, 0.0], [30.0, 10.0]])
    T = mu[None] + rng.normal(0, 0.01, (7000, 2, 2))
    ra = private_k_averages(T, eps=60.0, delta=1e-6, radius=100.0, r_min=0.01, rng=3)
    assert ra.ok
    # a bare aggregator Result has no "tuples" step: panel (a) stays empty, (c) draws the boxes
    names = _names(easy_instances_storyboard(ra, T.reshape(-1, 2)))
    assert "bounding segments [a_j, b_j] — private" in names
    assert "private averages â_i — private" in names
