"""The Easy Instances storyboard builds from k-means, GMM, Averages and ⊥ Results."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.clustering.easy_instances import private_gmm, private_k_averages, private_k_means
from dpviz.viz.easy_instances import PANEL_TITLES, PANELS, easy_instances_storyboard
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
    titles = [a.text for a in fig.layout.annotations[:6]]
    assert all(t.startswith(p) for t, p in zip(titles, PANEL_TITLES, strict=True))
    for want in ("balls B(y_i, γλ_i) of Q — non-private diagnostic",
                 "chosen tuple Y* — non-private diagnostic",
                 "2σ_i noise clouds — private", "noisy centers ĉ_i — private", "private Lloyd step — private",
                 "τ₁ = ln(2m/β)/ε₁ (public)"):
        assert want in names
    # one ball per sampled tuple point, drawn as closed circles of the recorded radius
    test = r.step("test").data
    balls = fig.data[names.index("balls B(y_i, γλ_i) of Q — non-private diagnostic")]
    x = np.asarray(balls.x, dtype=float)
    assert np.count_nonzero(np.isnan(x)) == test["radii"].size
    seg = x[:49]
    assert (seg.max() - seg.min()) / 2 == pytest.approx(test["radii"].reshape(-1)[0], rel=1e-6)
    bars = fig.data[names.index("ℓ̂_Y = ℓ_Y + Lap(1/ε₁) (blue: pass, red: fail) — non-private diagnostic")]
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


# ----------------------------------------------------------------------------- the panels added for issue 12


def _legend_ids(fig) -> set[str]:
    """The legends that at least one shown trace uses."""
    return {t.legend or "legend" for t in fig.data if t.showlegend is not False}


def _every_panel_has_its_legend(fig) -> None:
    want = {"legend", *(f"legend{n}" for n in range(2, len(PANELS) + 1))}
    assert _legend_ids(fig) == want
    for name in want:  # each legend sits to the right of its panel, at the panel's top
        assert fig.layout[name].x > 1.0
    tops = sorted((fig.layout[n].y for n in want), reverse=True)
    assert tops == sorted(tops, reverse=True) and len(set(tops)) == len(PANELS)


def test_every_panel_has_a_legend_on_success_bottom_and_averages(X):
    r = private_k_means(X, 2, eps=1.0, delta=1e-6, radius=8192.0, n_tuples=1500, rng=4)
    _every_panel_has_its_legend(easy_instances_storyboard(r, X))
    Xc = _mixture(1500 * 20, R=4.0)
    bottom = private_k_means(Xc, 2, eps=1.0, delta=1e-6, radius=16.0, n_tuples=1500, rng=0)
    fig = easy_instances_storyboard(bottom, Xc)
    _every_panel_has_its_legend(fig)
    assert any("no aggregation: PrivateTestPartition: Failure" in (t.name or "") for t in fig.data)
    infeasible = private_k_means(Xc, 2, eps=1.0, delta=1e-6, radius=16.0, n_tuples=500, rng=0)
    fig = easy_instances_storyboard(infeasible, Xc)
    _every_panel_has_its_legend(fig)
    assert any("the test did not run" in (t.name or "") for t in fig.data)


def test_gauge_draws_the_recorded_q_hat_against_tau2(X):
    r = private_k_means(X, 2, eps=1.0, delta=1e-6, radius=8192.0, n_tuples=1500, rng=4)
    fig = easy_instances_storyboard(r, X)
    status = r.step("status").data
    (bar,) = [t for t in fig.data if (t.name or "").startswith("q̂ = q + Lap(1/ε₂)")]
    assert bar.x[0] == status["q_hat"] and bar.xaxis == "x3"
    (tau,) = [t for t in fig.data if (t.name or "").startswith("τ₂ = m − ln(2/β)/ε₂")]
    assert tuple(tau.x) == (status["tau2"], status["tau2"])
    assert fig.layout.annotations[2].text.endswith("→ continue")


def test_noisy_centers_voronoi_is_the_nearest_point_of_y_star(X):
    from dpviz.geometry import nearest_center

    r = private_k_means(X, 2, eps=1.0, delta=1e-6, radius=8192.0, n_tuples=1500, rng=4)
    fig = easy_instances_storyboard(r, X)
    vor = [t for t in fig.data if (t.name or "").startswith("Voronoi of Points(T) by Y* (drawn here)")]
    assert len(vor) == 2 and all(t.xaxis == "x4" for t in vor)
    assert all(t.name.split(": cluster")[0].endswith("— non-private diagnostic") for t in vor)
    P = r.step("tuples").data["tuples"].reshape(-1, 2)
    labels, _ = nearest_center(P, r.step("chosen").data["center"])
    assert sorted(len(t.x) for t in vor) == sorted(np.bincount(labels, minlength=2).tolist())


def _brute_score(S: np.ndarray, y: np.ndarray, radius: float, r_min: float) -> np.ndarray:
    """q(S, y) = min(#{x_L ≤ y}, #{x_R ≥ y}) on the grid −Λ + j·r_min, straight from the note."""
    u = (S + radius) / r_min
    xl, xr = np.floor(u + 1e-9), np.ceil(u - 1e-9)
    j = np.rint((y + radius) / r_min)
    return np.minimum((xl[None] <= j[:, None]).sum(1), (xr[None] >= j[:, None]).sum(1))


def test_interior_point_panel_scores_and_clipped_segments():
    rng = np.random.default_rng(0)
    mu = np.array([[-30.0, 0.0], [30.0, 10.0]])
    T = mu[None] + rng.normal(0, 0.01, (7000, 2, 2))
    r = private_k_averages(T, eps=60.0, delta=1e-6, radius=100.0, r_min=0.01, rng=3)
    assert r.ok
    P = T.reshape(-1, 2)
    fig = easy_instances_storyboard(r, P)
    _every_panel_has_its_legend(fig)
    plan, seg = r.step("plan").data, r.step("segments").data["segments"]
    labels = r.step("clusters").data["labels"]
    for i in range(2):
        col = np.sort(P[labels == i, 0])
        mid = seg[i, 0].mean()
        (low,) = [t for t in fig.data if t.name == f"cluster {i + 1}: score q, lower end: t₀ smallest"
                  " — non-private diagnostic"]
        assert low.xaxis == "x5"
        y = np.asarray(low.x) + mid
        want = _brute_score(col[:plan["t0"]], y, plan["radius"], plan["r_min"])
        np.testing.assert_array_equal(np.asarray(low.y), want)
        assert max(low.y) >= plan["t0"] // 2  # at the median both counts are ≥ half of the t₀ points
        (bar,) = [t for t in fig.data if t.name.startswith(f"cluster {i + 1}: segment [a₁, b₁] — private")]
        np.testing.assert_allclose(np.asarray(bar.x) + mid, seg[i, 0], rtol=0, atol=1e-12)
        clipped = int(np.count_nonzero((col < seg[i, 0, 0]) | (col > seg[i, 0, 1])))
        assert f"(clips {clipped} points" in bar.name
    # a NoisyCenters run says why panel (e) is empty
    Xs = _mixture(1500 * 60)
    rn = private_k_means(Xs, 2, eps=1.0, delta=1e-6, radius=8192.0, n_tuples=1500, rng=4)
    names = [t.name for t in easy_instances_storyboard(rn, Xs).data]
    assert "(e) PrivatekNoisyCenters has no interior point" in names
