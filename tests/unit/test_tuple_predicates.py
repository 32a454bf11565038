"""match_γ and dist_{r1..rk} on hand-built tuples (Tsfadia et al. 2022, §5.2.1, §5.2.3)."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from dpviz.core.tuple_predicates import (
    GAMMA,
    match_gamma,
    match_graph,
    match_matrix,
    ord_permutation,
    ordered_dist_counts,
    ordered_dist_matrix,
)


def _brute_match(X: np.ndarray, Y: np.ndarray, gamma: float) -> bool:
    """The definition, over every permutation π (two-sided, strict)."""
    k = len(X)
    for pi in itertools.permutations(range(k)):
        ok = True
        for i in range(k):
            lhs = np.linalg.norm(X[i] - Y[pi[i]])
            m = np.inf
            for j in range(k):
                if j != i:
                    m = min(m, np.linalg.norm(X[i] - Y[pi[j]]), np.linalg.norm(X[j] - Y[pi[i]]))
            if not lhs < gamma * m:
                ok = False
                break
        if ok:
            return True
    return False


def _fig1_tuples() -> np.ndarray:
    """Fig. 1 (right): three 4-tuples that match pairwise, a fourth (pink) that matches none."""
    C = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    red = C + np.array([[0.3, 0.1], [-0.2, 0.2], [0.1, -0.3], [0.2, 0.2]])
    blue = (C + np.array([[-0.2, 0.2], [0.3, -0.1], [-0.3, 0.1], [-0.1, -0.2]]))[[2, 0, 3, 1]]
    green = (C + np.array([[0.1, -0.2], [0.0, 0.3], [0.2, 0.2], [-0.3, 0.0]]))[[3, 2, 1, 0]]
    pink = C + np.array([[0.0, 0.0], [-5.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # one center halfway between two
    return np.stack([red, blue, green, pink])


def test_fig1_like_matching_and_non_matching() -> None:
    M = match_matrix(_fig1_tuples())
    expected = np.array([[1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 1]], dtype=bool)
    np.testing.assert_array_equal(M, expected)
    g = match_graph(_fig1_tuples())
    np.testing.assert_array_equal(g.counts, [3, 3, 3, 1])


def test_strict_at_the_boundary() -> None:
    # d(x_i, y_i) = 2 and the nearest cross distance is 16: with γ = 1/8, 2 < 16/8 is False.
    X = np.array([[0.0, 0.0], [18.0, 0.0]])
    Y = np.array([[2.0, 0.0], [20.0, 0.0]])
    assert 16 * (1 / 8) == 2.0
    assert not match_gamma(X, Y, gamma=1 / 8)
    assert not _brute_match(X, Y, 1 / 8)
    # A hair inside the boundary matches.
    Y2 = np.array([[1.999, 0.0], [19.999, 0.0]])
    assert match_gamma(X, Y2, gamma=1 / 8)
    assert _brute_match(X, Y2, 1 / 8)


def test_two_sided_condition_is_used() -> None:
    # With γ = 1/8: both rows pass the one-sided test (x_1 → y_1: 1 < 9.5/8; x_2 → y_2:
    # 0.6 < 7.9/8), but y_1's column fails: ||x_1 − y_1|| = 1 is not < ||x_2 − y_1||/8 = 0.9875.
    X = np.array([[0.0, 0.0], [8.9, 0.0]])
    Y = np.array([[1.0, 0.0], [9.5, 0.0]])
    one_sided = all(
        np.linalg.norm(X[i] - Y[i]) < (1 / 8) * np.linalg.norm(X[i] - Y[1 - i]) for i in range(2)
    )
    assert one_sided
    assert not match_gamma(X, Y, gamma=1 / 8)
    assert not _brute_match(X, Y, 1 / 8)
    # Moving x_2 away from y_1 (still nearest to y_2) restores the match.
    X2 = np.array([[0.0, 0.0], [9.3, 0.0]])
    assert match_gamma(X2, Y, gamma=1 / 8)


def test_duplicate_centers_are_not_self_friendly() -> None:
    X = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    assert not match_gamma(X, X)
    Z = np.array([[0.0, 0.0], [3.0, 0.0], [5.0, 5.0]])
    assert match_gamma(Z, Z)
    assert not match_matrix(np.stack([X, Z]))[0, 0]


def test_k1_always_matches() -> None:
    T = np.array([[[0.0, 0.0]], [[100.0, 3.0]]])
    assert match_matrix(T).all()  # min over an empty set is +∞


def test_agrees_with_the_definition_on_random_tuples() -> None:
    rng = np.random.default_rng(11)
    for _ in range(12):
        k = int(rng.integers(1, 5))
        C = rng.uniform(-1, 1, (k, 2))
        T = C[None] + rng.normal(0, rng.choice([0.01, 0.05, 0.1]), (10, k, 2))
        for i in range(10):
            T[i] = T[i][rng.permutation(k)]
        M = match_matrix(T)
        for a in range(10):
            for b in range(10):
                assert M[a, b] == _brute_match(T[a], T[b], GAMMA), (k, a, b)


def test_symmetric_and_permutation_invariant() -> None:
    rng = np.random.default_rng(3)
    C = rng.uniform(-1, 1, (5, 3))
    T = C[None] + rng.normal(0, 0.02, (40, 5, 3))
    M = match_matrix(T)
    np.testing.assert_array_equal(M, M.T)
    assert 0 < M.sum() < 40 * 40  # a mix of matches and non-matches
    # Permuting the points inside each tuple changes nothing; permuting tuples permutes M.
    inner = np.stack([t[rng.permutation(5)] for t in T])
    np.testing.assert_array_equal(match_matrix(inner), M)
    order = rng.permutation(40)
    np.testing.assert_array_equal(match_matrix(T[order]), M[np.ix_(order, order)])


def test_gamma_above_one_seventh_rejected() -> None:
    T = np.zeros((2, 2, 2))
    with pytest.raises(ValueError, match="'gamma' parameter of match_matrix"):
        match_matrix(T, gamma=0.2)
    with pytest.raises(ValueError, match="gamma"):
        match_gamma(T[0], T[1], gamma=1.0)
    match_matrix(T, gamma=1 / 7)  # the boundary itself is allowed
    with pytest.raises(ValueError, match="shape"):
        match_matrix(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        match_matrix(np.full((2, 2, 2), np.nan))


def test_blocking_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpviz.core.tuple_predicates as tp

    rng = np.random.default_rng(5)
    C = rng.uniform(-1, 1, (4, 2))
    T = C[None] + rng.normal(0, 0.03, (30, 4, 2))
    full = match_matrix(T)
    monkeypatch.setattr(tp, "_BLOCK_ENTRIES", 50)  # many small blocks
    np.testing.assert_array_equal(match_matrix(T), full)


def test_match_graph_is_fast_at_paper_size() -> None:
    rng = np.random.default_rng(0)
    C = rng.uniform(-1, 1, (8, 2))
    T = C[None] + rng.normal(0, 0.003, (200, 8, 2))
    match_graph(T)
    t0 = time.perf_counter()
    g = match_graph(T)
    elapsed = time.perf_counter() - t0
    assert g.matrix.shape == (200, 200)
    assert elapsed < 1.0  # typically 20–50 ms; generous for a loaded CI machine


def test_ord_permutation_argmin_and_hungarian() -> None:
    ref = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    Y = ref[[2, 0, 1]] + 0.1
    sigma, bij = ord_permutation(ref, Y)
    assert bij
    np.testing.assert_allclose(Y[sigma], ref + 0.1)
    # Two reference points nearest to the same y: not a bijection → Hungarian, flagged.
    Y2 = np.array([[5.0, 0.0], [100.0, 100.0], [0.0, 9.0]])
    sigma2, bij2 = ord_permutation(ref, Y2)
    assert not bij2
    assert sorted(sigma2.tolist()) == [0, 1, 2]


def test_ordered_dist_counts_by_hand() -> None:
    # Two coordinates; radii (1, 2); inclusive (≤).
    T = np.array([
        [[0.0, 0.0], [10.0, 0.0]],
        [[1.0, 0.0], [12.0, 0.0]],  # coord 1 at distance 1 (= r_1), coord 2 at 2 (= r_2)
        [[0.5, 0.0], [13.0, 0.0]],  # coord 2 at 3 from tuple 0: not friends with it
    ])
    M = ordered_dist_matrix(T, np.array([1.0, 2.0]))
    expected = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(M, expected)
    np.testing.assert_array_equal(ordered_dist_counts(T, np.array([1.0, 2.0])), [2, 3, 2])
    with pytest.raises(ValueError, match="radii"):
        ordered_dist_matrix(T, np.array([1.0]))
    assert ordered_dist_matrix(np.zeros((0, 2, 2)), np.ones(2)).shape == (0, 0)
