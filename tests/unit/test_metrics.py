"""Tests for dpviz.metrics: exact small examples, invariances, the k-means reference."""

import numpy as np
import pytest

from dpviz.data import fig3_three
from dpviz.metrics import (
    center_error,
    kmeans_cost,
    labeling_failure,
    match_centers,
    nearest_center,
    normalized_loss,
    reference_kmeans_cost,
)


def test_kmeans_cost_exact():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [10.0, 0.0], [10.0, 2.0]])
    C = np.array([[0.0, 0.0], [10.0, 1.0]])
    # 0 + 1 + 1 + 1
    assert kmeans_cost(X, C) == 3.0
    assert kmeans_cost(X, C[::-1]) == 3.0
    labels, d2 = nearest_center(X, C)
    np.testing.assert_array_equal(labels, [0, 0, 1, 1])
    np.testing.assert_array_equal(d2, [0.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("d", [3, 12])  # k·d = 21: per-center passes; k·d = 84: Gram form
def test_nearest_center_matches_brute_force_in_both_paths(d):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, d))
    C = rng.normal(size=(7, d))
    full = ((X[:, None] - C[None]) ** 2).sum(-1)
    labels, dist2 = nearest_center(X, C, chunk=97)  # many small chunks, one partial
    np.testing.assert_array_equal(labels, np.argmin(full, axis=1))
    np.testing.assert_allclose(dist2, full.min(axis=1), rtol=1e-12)
    from dpviz.metrics import kmeans_cost

    assert kmeans_cost(X, C) == pytest.approx(float(full.min(axis=1).sum()), rel=1e-12)


def test_nearest_center_ties_go_to_lowest_index():
    labels, _ = nearest_center(np.array([[0.5, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert labels[0] == 0


def test_normalized_loss_zero_for_reference_and_positive_for_worse():
    ds = fig3_three(3000, sigma=0.05, rng=1)
    ref = reference_kmeans_cost(ds.X, 3, rng=0)
    from sklearn.cluster import KMeans

    km = KMeans(3, n_init=3, random_state=5).fit(ds.X)
    assert normalized_loss(ds.X, km.cluster_centers_, reference_cost=ref) == pytest.approx(0.0, abs=1e-6)
    bad = km.cluster_centers_ + 0.1
    y = kmeans_cost(ds.X, bad)
    assert normalized_loss(ds.X, bad, reference_cost=ref) == pytest.approx(1 - ref / y)
    assert normalized_loss(ds.X, bad, reference_cost=ref) > 0.5
    # computed reference (same seed) equals the passed one
    assert normalized_loss(ds.X, bad, rng=0) == pytest.approx(1 - ref / y)


def test_normalized_loss_exact_small():
    X = np.array([[0.0], [2.0]])
    # reference k=1 cost: mean 1 → cost 2; centers at 0 → cost 4 → 1 − 2/4
    assert normalized_loss(X, np.array([[0.0]]), reference_cost=2.0) == 0.5
    with pytest.raises(ValueError, match="'centers' parameter of normalized_loss"):
        normalized_loss(X, np.array([[0.0, 1.0]]), reference_cost=2.0)


def test_labeling_failure_permutation_invariant():
    y = np.array([0, 0, 1, 1, 2, 2])
    assert labeling_failure(y, np.array([2, 2, 0, 0, 1, 1])) == 0.0
    assert labeling_failure(y, np.array([2, 2, 0, 1, 1, 1])) == pytest.approx(1 / 6)
    # fewer predicted labels: best matching covers 2 of 3 classes
    assert labeling_failure(y, np.array([5, 5, 7, 7, 7, 7])) == pytest.approx(2 / 6)
    # more predicted labels than true ones
    assert labeling_failure(np.array([0, 0, 0, 1]), np.array([0, 1, 2, 3])) == pytest.approx(2 / 4)
    with pytest.raises(ValueError, match="equal length"):
        labeling_failure(y, y[:3])


def test_match_centers_and_center_error():
    ref = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    est = np.array([[0.0, 11.0], [1.0, 0.0], [10.0, 0.0]])
    perm = match_centers(ref, est)
    np.testing.assert_array_equal(perm, [1, 2, 0])
    assert center_error(ref, est) == pytest.approx((1 + 0 + 1) / 3)
    # fewer estimates: unmatched reference rows get −1
    np.testing.assert_array_equal(match_centers(ref, est[1:2]), [0, -1, -1])
    assert center_error(ref, est[1:2]) == pytest.approx(1.0)


# ------------------------------------------------------------------ the strong reference (issue 35)


def _unbalanced():
    from dpviz.data.ball_mixture import ball_mixture

    return ball_mixture(20_000, d=10, k=5, weights=(1, 10, 100, 10, 1), rng=0).X


@pytest.mark.slow
def test_reference_is_never_beaten_by_another_kmeans_run():
    """Issue 35: best of 3 k-means++ was 12% worse than another run of the same on this mixture
    (one run in eight finds its 1-in-122 clusters). The reference is at most REFERENCE_TOLERANCE
    above the best of 20 other runs, for every reference seed tried."""
    from sklearn.cluster import KMeans

    from dpviz.metrics import REFERENCE_TOLERANCE, reference_kmeans

    X = _unbalanced()
    best_other = min(KMeans(5, n_init=1, random_state=100 + s).fit(X).inertia_ for s in range(20))
    for seed in (0, 1):
        ref = reference_kmeans(X, 5, rng=seed)
        assert ref.cost <= best_other * (1 + REFERENCE_TOLERANCE)
        assert ref.cost == pytest.approx(kmeans_cost(X, ref.centers), rel=1e-12)
        assert "best of 10 k-means++ restarts" in ref.recipe and "20,000 rows" in ref.recipe


def test_reference_large_n_path_polishes_on_all_rows(monkeypatch):
    """Above REFERENCE_FULL_N rows the restarts run on a sample and the kept answer is polished
    on all rows: its cost is exact on all rows and the recipe says so."""
    import dpviz.clustering.reference as m  # where the reference lives (dpviz.metrics re-exports it)

    monkeypatch.setattr(m, "REFERENCE_FULL_N", 1000)
    ds = fig3_three(3000, sigma=0.05, rng=1)
    ref = m.reference_kmeans(ds.X, 3, rng=0)
    assert ref.cost == pytest.approx(kmeans_cost(ds.X, ref.centers), rel=1e-12)
    assert ref.labels.shape == (3000,)
    assert "uniform sample of 1,000 of the 3,000 rows" in ref.recipe
    from sklearn.cluster import KMeans

    assert ref.cost <= KMeans(3, n_init=5, random_state=0).fit(ds.X).inertia_ * (1 + 1e-9)
    assert ref.recipe == m.reference_recipe(3000, 3)


def test_reference_same_seed_same_answer_and_validates():
    from dpviz.metrics import reference_kmeans

    ds = fig3_three(600, sigma=0.05, rng=2)
    a, b = reference_kmeans(ds.X, 3, rng=4), reference_kmeans(ds.X, 3, rng=4)
    np.testing.assert_array_equal(a.centers, b.centers)
    with pytest.raises(ValueError, match="'restarts' parameter of reference_kmeans"):
        reference_kmeans(ds.X, 3, restarts=0)
    with pytest.raises(ValueError, match="'k' parameter of reference_kmeans"):
        reference_kmeans(ds.X, 601)
