"""Tests for dpviz.clustering.tuples: piece assignment, the two k-means implementations, PCA oracle."""

import numpy as np
import pytest
from scipy.stats import chi2_contingency, chisquare

from dpviz.clustering.tuples import (
    AUTO_BATCHED_MAX_CELLS,
    TupleStage,
    assign_pieces,
    compute_tuples,
    resolve_method,
    tuple_validity,
)
from dpviz.data import fig3_three, fig7_gmm
from dpviz.metrics import center_error, kmeans_cost


def test_assign_pieces_uniform_chi_square():
    rng = np.random.default_rng(12345)
    pieces = assign_pieces(100_000, 200, rng)
    assert pieces.shape == (100_000,) and pieces.min() >= 0 and pieces.max() < 200
    counts = np.bincount(pieces, minlength=200)
    # H0: uniform over 200 pieces; fixed seed, reject only at the 0.1 % level
    assert chisquare(counts).pvalue > 1e-3
    # pieces are independent of row order: the first and second halves look alike
    a = np.bincount(pieces[:50_000], minlength=200)
    b = np.bincount(pieces[50_000:], minlength=200)
    assert chi2_contingency(np.stack([a, b])).pvalue > 1e-3


def test_validation_messages():
    X = np.zeros((1200, 2))
    with pytest.raises(ValueError, match=r"n_tuples=500 with k=8 needs at least 4000 rows; got n=1200\."):
        compute_tuples(X, 8, n_tuples=500)
    with pytest.raises(ValueError, match="'k' parameter of compute_tuples"):
        compute_tuples(X, 0, n_tuples=5)
    with pytest.raises(ValueError, match="'n_tuples' parameter of compute_tuples"):
        compute_tuples(X, 2, n_tuples=0)
    with pytest.raises(ValueError, match="'oracle' parameter"):
        compute_tuples(X, 2, n_tuples=5, oracle="dbscan")
    with pytest.raises(ValueError, match="'method' parameter"):
        compute_tuples(X, 2, n_tuples=5, method="gpu")


@pytest.fixture(scope="module")
def three():
    return fig3_three(30_000, sigma=0.05, rng=11)


@pytest.mark.parametrize("method", ["batched", "sklearn"])
def test_stage_fields_and_reproducible(three, method):
    a = compute_tuples(three.X, 3, n_tuples=60, rng=4, method=method)
    b = compute_tuples(three.X, 3, n_tuples=60, rng=4, method=method)
    assert a.tuples.shape == (60, 3, 2) and a.method == method and a.oracle == "kmeans++"
    assert a.piece_sizes.sum() == three.n and a.piece_sizes.shape == (60,)
    np.testing.assert_array_equal(np.bincount(a.piece_of_row, minlength=60), a.piece_sizes)
    # sklearn's chunked float reductions may differ in the last ulp between runs
    np.testing.assert_allclose(a.tuples, b.tuples, rtol=1e-12, atol=1e-14)
    assert a.seconds > 0 and a.seed == 4 and a.n_valid == 60
    assert not a.tuples.flags.writeable


def test_batched_and_sklearn_equal_quality(three):
    """Same pieces (same seed → same assignment); total per-piece cost within 1 %."""
    costs = {}
    for method in ("batched", "sklearn"):
        st = compute_tuples(three.X, 3, n_tuples=100, rng=8, method=method)
        costs[method] = sum(
            kmeans_cost(three.X[st.piece_of_row == i], st.tuples[i]) for i in range(100))
        # every tuple finds the three true centers
        errs = [center_error(three.true_centers, st.tuples[i]) for i in range(100)]
        assert max(errs) < 0.05
    assert costs["batched"] == pytest.approx(costs["sklearn"], rel=0.01)


@pytest.mark.parametrize("method", ["batched", "sklearn"])
def test_pca_oracle_recovers_fig7_centers(method):
    ds = fig7_gmm(50_000, k=5, d=50, rng=21)
    st = compute_tuples(ds.X, 5, n_tuples=40, oracle="pca", rng=3, method=method)
    assert st.tuples.shape == (40, 5, 50) and st.oracle == "pca"
    errs = np.array([center_error(ds.true_centers, st.tuples[i]) for i in range(40)])
    # ≈250 points per cluster per piece: sampling error √(50/250) ≈ 0.45, centers ≈ 5 apart
    assert np.median(errs) < 0.6
    assert np.mean(errs < 1.0) >= 0.9


def test_small_pieces_and_duplicates_are_flagged():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    st = compute_tuples(X, 3, n_tuples=20, rng=1, method="batched")  # mean piece size 3
    small = st.piece_sizes < 3
    assert small.any()
    assert not st.valid[small].any() and st.valid[~small].all()
    assert np.all(np.isfinite(st.tuples))
    # only two distinct points: no piece can hold 3 distinct centers
    Y = np.repeat([[0.0, 0.0], [1.0, 1.0]], 300, axis=0)
    for method in ("batched", "sklearn"):
        st = compute_tuples(Y, 3, n_tuples=10, rng=2, method=method)
        assert st.n_valid == 0


def test_batched_seeding_gives_distinct_centers_with_exactly_k_rows():
    X = np.arange(40, dtype=float).reshape(20, 2)
    st = compute_tuples(X, 4, n_tuples=1, rng=0, method="batched")
    assert st.valid.all()
    st = compute_tuples(np.repeat(X[:4], 1, axis=0), 4, n_tuples=1, rng=0, method="batched")
    np.testing.assert_array_equal(np.sort(st.tuples[0], axis=0), X[:4])


def test_tuple_validity_exact():
    tuples = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [2.0, 0.0]]])
    np.testing.assert_array_equal(tuple_validity(tuples, np.array([5, 5, 1])), [True, False, False])


def test_tuple_stage_checks_shape():
    with pytest.raises(ValueError, match="shape"):
        TupleStage(tuples=np.zeros((3, 2, 2)), piece_of_row=np.zeros(3, int),
                   piece_sizes=np.ones(3, int), k=3, n_pieces=3, oracle="kmeans++",
                   method="batched", seconds=0.0)


def test_auto_switch():
    cells = AUTO_BATCHED_MAX_CELLS["kmeans++"]
    assert resolve_method("auto", cells // 2, 2) == "batched"
    assert resolve_method("auto", cells // 2 + 1, 2) == "sklearn"
    assert resolve_method("auto", cells // 2 + 1, 2, "pca") == "batched"
    assert resolve_method("sklearn", 10) == "sklearn"
    st = compute_tuples(np.random.default_rng(0).normal(size=(400, 2)), 2, n_tuples=10, rng=0)
    assert st.method == "batched"


@pytest.mark.parametrize("method", ["batched", "sklearn"])
@pytest.mark.parametrize("oracle", ["kmeans++", "pca"])
def test_tuples_do_not_depend_on_the_number_of_threads(method, oracle):
    """Blocks of pieces draw their own streams before any runs: 1, 2 or 3 threads agree exactly."""
    X = fig3_three(6_000, rng=3).X
    runs = [compute_tuples(X, 4, n_tuples=30, oracle=oracle, method=method, rng=11, n_jobs=j)
            for j in (1, 2, 3)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.tuples, runs[0].tuples)
        np.testing.assert_array_equal(r.piece_of_row, runs[0].piece_of_row)


def test_blocks_cover_every_piece_once():
    from dpviz.clustering.tuples import N_BLOCKS, _blocks

    for t in (1, 2, 7, 8, 9, 200, 1001):
        cut = _blocks(t)
        assert len(cut) == min(N_BLOCKS, t)
        assert [i for sl in cut for i in range(sl.start, sl.stop)] == list(range(t))


def test_auto_method_takes_the_batched_kmeans_for_small_pieces():
    from dpviz.clustering.tuples import resolve_method

    assert resolve_method("auto", 1_000_000, 2) == "sklearn"  # 5000 rows a piece at t = 200
    assert resolve_method("auto", 1_000_000, 2, n_tuples=200) == "sklearn"
    assert resolve_method("auto", 1_000_000, 2, n_tuples=5000) == "batched"  # 200 rows a piece
    assert resolve_method("sklearn", 10, 2, n_tuples=5) == "sklearn"
