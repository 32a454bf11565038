"""Friend counts: dist_r (chunked Gram trick) and App. B sampled counts."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpviz.core.predicates import (
    DistR,
    Predicate,
    SketchPrivacyWarning,
    as_predicate,
    dist_r_counts,
    dist_r_cross_counts,
    friend_counts,
    sample_size,
    sampled_dist_r_counts,
)


def _brute(X, Y, r):
    return ((((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)) <= r * r).sum(1)


def test_counts_include_self_and_are_inclusive():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [10.0, 0.0]])
    # distance 5 exactly is a friend (≤), duplicates are friends, self is counted.
    assert dist_r_counts(X, 5.0).tolist() == [3, 3, 3, 1]
    assert dist_r_counts(X, 0.0).tolist() == [2, 1, 2, 1]


@pytest.mark.parametrize("chunk", [None, 1, 3, 17])
def test_chunked_counts_equal_brute_force(chunk):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    for r in [0.0, 0.5, 1.3, 10.0]:
        assert np.array_equal(dist_r_counts(X, r, chunk_size=chunk), _brute(X, X, r))
        Y = X[::3]
        assert np.array_equal(dist_r_cross_counts(X, Y, r, chunk_size=chunk), _brute(X, Y, r))


def test_counts_are_exact_far_from_the_origin():
    # Data at norm ~1e9: the Gram trick alone would lose all precision; centering keeps it exact.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 50)) + 5e8 / math.sqrt(50)
    r = math.sqrt(2) * (math.sqrt(50) + math.sqrt(math.log(100 * 200)))
    assert np.array_equal(dist_r_counts(X, r), _brute(X, X, r))


@settings(max_examples=60, deadline=None)
@given(
    X=arrays(np.float64, st.tuples(st.integers(1, 25), st.integers(1, 4)),
             elements=st.integers(-6, 6).map(float)),
    r=st.sampled_from([0.0, 1.0, 2.0, 2.5, 5.0, 3.0 * math.sqrt(2)]),
    chunk=st.integers(1, 30),
)
def test_chunked_counts_equal_brute_force_property(X, r, chunk):
    # Integer grids put many pairs exactly at distance r: the boundary must be inclusive.
    assert np.array_equal(dist_r_counts(X, r, chunk_size=chunk), _brute(X, X, r))
    assert np.array_equal(dist_r_cross_counts(X, X[::2], r, chunk_size=chunk), _brute(X, X[::2], r))


def test_empty_inputs_give_empty_counts():
    assert dist_r_counts(np.zeros((0, 2)), 1.0).shape == (0,)
    assert dist_r_cross_counts(np.zeros((3, 2)), np.zeros((0, 2)), 1.0).tolist() == [0, 0, 0]


def test_predicate_protocol_and_radius_shortcut():
    p = as_predicate(2.0, "f")
    assert isinstance(p, DistR) and isinstance(p, Predicate) and p.r == 2.0
    X = np.random.default_rng(2).normal(size=(30, 2))
    assert np.array_equal(friend_counts(X, 2.0), _brute(X, X, 2.0))
    with pytest.raises(ValueError, match="'predicate' parameter of f"):
        as_predicate(-1.0, "f")
    with pytest.raises(ValueError, match="'r' parameter of DistR"):
        DistR(float("nan"))


def test_sample_size_formula():
    # m = ⌈ln(n/δ)/(2ξ²)⌉ (App. B); ξ = 0.1, n = 1e5, δ = 1e-8 gives 1497 (the note's ≈1 496).
    assert sample_size(100_000, 1e-8, 0.1) == math.ceil(math.log(1e5 / 1e-8) / (2 * 0.01))
    assert sample_size(100_000, 1e-8, 0.1) == 1497
    assert sample_size(50, 1e-8, 0.1) == 50  # capped at n
    assert sample_size(0, 1e-8, 0.1) == 0


def test_sampled_counts_are_shifted_for_the_filter_and_warn():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 2))
    with pytest.warns(SketchPrivacyWarning, match="App. B"):
        sc = sampled_dist_r_counts(X, 1.0, xi=0.1, delta=1e-6, rng=rng)
    m = sample_size(3000, 1e-6, 0.1)
    assert sc.m == m and len(np.unique(sc.sample)) == m  # without replacement
    raw = _brute(X, X[sc.sample], 1.0)
    assert np.allclose(sc.w_tilde, raw * 3000 / m)
    # filter computes z = counts − n/2; it must equal z̃ = w̃ − (1/2 + ξ)n.
    assert np.allclose(sc.filter_counts - 3000 / 2, sc.w_tilde - (0.5 + 0.1) * 3000)
    # the estimate tracks the exact counts (hypergeometric, sd ≲ n/(2√m) ≈ 39)
    assert np.max(np.abs(sc.w_tilde - dist_r_counts(X, 1.0))) < 6 * 3000 / (2 * math.sqrt(m))


def test_sampled_counts_can_be_silenced():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sampled_dist_r_counts(np.zeros((10, 2)), 1.0, xi=0.2, delta=1e-3,
                              rng=np.random.default_rng(0), warn=False)
    with pytest.raises(ValueError, match=r"'xi'.*\(0, 0.5\)"):
        sampled_dist_r_counts(np.zeros((10, 2)), 1.0, xi=0.0, delta=1e-3,
                              rng=np.random.default_rng(0))
