"""Predicates on k-tuples of centers: match_γ (unordered) and dist_{r_1..r_k} (ordered).

Both are evaluated for all t×t pairs at once (vectorized numpy over chunks of tuples), and the
friend counts w_i = Σ_j f(X^i, X^j) (j = i included) are what ``dpviz.core.filters.zcdp_filter``
consumes.

References: Tsfadia et al. 2022, §5.2.1 (match_γ, two-sided, strict; ord_X(Y)) and §5.2.3
(dist_{r_1..r_k}); engineer's note §3.1 items 2–5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from dpviz._validation import check_scalar

#: The γ of the paper; the privacy proof of FriendlyReorder covers every γ ≤ 1/7 (note §3.8a).
GAMMA = 1.0 / 7.0

#: Number of float64 entries of the (B·k) × t distance slices evaluated at once.
_BLOCK_ENTRIES = 1_000_000
#: Entries of π gathered at once by :func:`_inverse` (uint8: 16 MB).
_INVERSE_BLOCK_ENTRIES = 16_000_000


@dataclass(frozen=True)
class MatchGraph:
    """match_γ over all pairs of a tuple database: ρ-independent, so compute once and cache.

    Attributes
    ----------
    matrix : (t, t) bool
        matrix[a, b] = match_γ(X^a, X^b); symmetric; the diagonal is False for a tuple with two
        equal (or γ-close) centers.
    counts : (t,) int
        Friend counts w_a = Σ_b matrix[a, b] (self included when self-friendly).
    gamma : float
    seconds : float
        Wall time of the computation (for the app's timing panel).
    """

    matrix: np.ndarray
    counts: np.ndarray
    gamma: float
    seconds: float = 0.0


def _check_tuples(tuples: np.ndarray, func: str) -> np.ndarray:
    T = np.asarray(tuples, dtype=np.float64)
    if T.ndim != 3 or T.shape[1] < 1 or T.shape[2] < 1:
        raise ValueError(
            f"The 'tuples' parameter of {func} must be an array of shape (t, k, d) with k, d >= 1. "
            f"Got shape {T.shape} instead."
        )
    if T.size and not np.all(np.isfinite(T)):
        raise ValueError(f"The 'tuples' parameter of {func} contains NaN or infinite values.")
    return T


def check_gamma(gamma: float, func: str) -> float:
    """γ must lie in (0, 1/7]: FriendlyReorder's privacy proof needs γ ≤ 1/7 (note §3.8a)."""
    return check_scalar(gamma, "gamma", func, low=0.0, high=GAMMA * (1 + 1e-12), low_open=True)


def _row_stats(
    Xblk: np.ndarray, T: np.ndarray, gamma: float
) -> tuple[np.ndarray, np.ndarray]:
    """For a block of tuples ``Xblk`` (B, k, d) against all tuples ``T`` (t, k, d):
    π[a, b, i] = argmin_j ||x^a_i − x^b_j|| and ok[a, b] = every row i has its smallest distance
    < γ × its second smallest. One pass over the k columns keeps the smallest (m1, first index)
    and second smallest (m2) distance of every row, on contiguous (B·k, t) slices."""
    B, k, d = Xblk.shape
    rows = Xblk.reshape(B * k, d)
    m1 = cdist(rows, T[:, 0, :])
    m2 = np.full_like(m1, np.inf)
    pi = np.zeros(m1.shape, dtype=np.intp)
    for j in range(1, k):
        v = cdist(rows, T[:, j, :])
        np.minimum(m2, np.maximum(m1, v), out=m2)
        better = v < m1  # strict: ties keep the first index (deterministic tie-breaking)
        pi[better] = j
        np.minimum(m1, v, out=m1)
    rows_ok = (m1 < gamma * m2).reshape(B, k, -1)  # strict (<), §5.2.1; k = 1: m2 = ∞
    return pi.reshape(B, k, -1).transpose(0, 2, 1), np.all(rows_ok, axis=1)


def match_matrix(tuples: np.ndarray, *, gamma: float = GAMMA) -> np.ndarray:
    """match_γ(X^a, X^b) for every pair of tuples, as a (t, t) boolean matrix.

    match_γ(X, Y) = 1 iff some permutation π of [k] has, for every i,
    ||x_i − y_{π(i)}|| < γ · min_{j≠i} min{||x_i − y_{π(j)}||, ||x_j − y_{π(i)}||}.
    For γ < 1 the only candidate is π(i) = argmin_j ||x_i − y_j|| (ties to the smallest j);
    if that map is not a bijection the pair does not match.

    Parameters
    ----------
    tuples : (t, k, d) array
        Unordered k-tuples (the order of the k points inside a tuple does not matter).
    gamma : float in (0, 1/7]

    Returns
    -------
    (t, t) bool array, symmetric. A tuple with two equal centers is not its own friend
    (the strict test fails with min = 0).

    Privacy
    -------
    None by itself: a predicate. match_{1/7}-friendliness is what FriendlyReorder's privacy
    proof needs, so γ > 1/7 is rejected.

    References
    ----------
    Tsfadia et al. 2022, §5.2.1 (formal, two-sided definition); note §3.1 item 3.
    """
    gamma = check_gamma(gamma, "match_matrix")
    T = _check_tuples(tuples, "match_matrix")
    t, k, _ = T.shape
    if t == 0:
        return np.zeros((0, 0), dtype=bool)
    # For γ < 1, match_γ(X^a, X^b) holds iff, with π_ab(i) = argmin_j ||x^a_i − x^b_j||:
    #  (1) each row's nearest distance is < γ × its second nearest (the min over j ≠ i of
    #      ||x_i − y_π(j)|| is the second nearest once π(i) is the nearest),
    #  (2) the same holds for every column, i.e. for the rows of the pair (b, a), and
    #  (3) π_ba ∘ π_ab = id (so π_ab is a bijection and x_i is the nearest point to y_π(i)).
    # cdist computes each distance from the coordinate differences, so D[a,i,b,j] ==
    # D[b,j,a,i] exactly and the predicate is exactly symmetric.
    block = max(1, _BLOCK_ENTRIES // (k * t))
    # π as the smallest integer type: (t, t, k) entries is 1.6 GB as intp at t = 5000, k = 8.
    pi = np.empty((t, t, k), dtype=np.uint8 if k <= 255 else np.intp)
    rows_ok = np.empty((t, t), dtype=bool)
    for a0 in range(0, t, block):
        a1 = min(t, a0 + block)
        pi[a0:a1], rows_ok[a0:a1] = _row_stats(T[a0:a1], T, gamma)
    out = rows_ok & rows_ok.T & _inverse(pi)
    return out


def _inverse(pi: np.ndarray) -> np.ndarray:
    """inverse[a, b] = (π_ba ∘ π_ab = id), computed in blocks of rows a.

    π_ba(π_ab(i)) over all pairs at once held two more (t, t, k) arrays besides π (the gathered
    values and their comparison: 0.8 GB at t = 5000, k = 16, the largest part of the 10⁷-row
    CLI run's peak memory); blocks of at most ``_INVERSE_BLOCK_ENTRIES`` entries bound that."""
    t, _, k = pi.shape
    ident = np.arange(k, dtype=pi.dtype)
    inverse = np.empty((t, t), dtype=bool)
    block = max(1, _INVERSE_BLOCK_ENTRIES // max(1, t * k))
    for a0 in range(0, t, block):
        a1 = min(t, a0 + block)
        back = np.take_along_axis(pi[:, a0:a1].transpose(1, 0, 2), pi[a0:a1], axis=2)  # π_ba(π_ab(i))
        inverse[a0:a1] = np.all(back == ident, axis=2)
    return inverse


def match_gamma(X: np.ndarray, Y: np.ndarray, *, gamma: float = GAMMA) -> bool:
    """match_γ(X, Y) for two k-tuples of shape (k, d) (see :func:`match_matrix`)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.shape != Y.shape or X.ndim != 2:
        raise ValueError(
            f"match_gamma needs two tuples of the same shape (k, d). Got {X.shape} and {Y.shape}."
        )
    return bool(match_matrix(np.stack([X, Y]), gamma=gamma)[0, 1])


def match_graph(tuples: np.ndarray, *, gamma: float = GAMMA) -> MatchGraph:
    """The match_γ matrix and friend counts of a tuple database (cache it per TupleStage).

    Privacy
    -------
    None by itself (non-private counts, internal); zCDPFilter makes them private.

    References
    ----------
    Tsfadia et al. 2022, §5.2.1; §4.2 (the counts w_i that zCDPFilter thresholds).
    """
    import time

    t0 = time.perf_counter()
    m = match_matrix(tuples, gamma=gamma)
    counts = m.sum(axis=1).astype(np.int64)
    return MatchGraph(m, counts, float(gamma), time.perf_counter() - t0)


def ord_permutation(reference: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, bool]:
    """σ with ord_X(Y) = Y[σ]: σ(i) = argmin_j ||x_i − y_j|| (§5.2.1, ord_X).

    Returns (σ, bijective). When the argmin map is not a bijection (a δ-probability event inside
    a match_{1/7}-friendly core) σ is the Hungarian assignment instead and ``bijective`` is False.
    """
    D = cdist(np.asarray(reference, dtype=np.float64), np.asarray(Y, dtype=np.float64))
    sigma = np.argmin(D, axis=1)
    k = D.shape[0]
    if np.array_equal(np.sort(sigma), np.arange(k)):
        return sigma, True
    from scipy.optimize import linear_sum_assignment

    _, cols = linear_sum_assignment(D)
    return cols, False


def ordered_dist_matrix(ordered: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """dist_{r_1..r_k}(X^a, X^b) = Π_j 1{||x^a_j − x^b_j|| ≤ r_j} for all pairs, (c, c) bool.

    Parameters
    ----------
    ordered : (c, k, d) array
        Ordered tuples (coordinate j of every tuple estimates the same center).
    radii : (k,) array of r_j ≥ 0 (inclusive ≤, like dist_r).

    References
    ----------
    Tsfadia et al. 2022, §5.2.3 (dist_{r_1..r_k}); note §3.1 item 2.
    """
    T = _check_tuples(ordered, "ordered_dist_matrix") if np.size(ordered) else np.asarray(ordered)
    r = np.asarray(radii, dtype=np.float64)
    c = T.shape[0]
    if c == 0:
        return np.zeros((0, 0), dtype=bool)
    k = T.shape[1]
    if r.shape != (k,) or np.any(~np.isfinite(r)) or np.any(r < 0):
        raise ValueError(
            f"The 'radii' parameter of ordered_dist_matrix must hold k={k} finite values >= 0. "
            f"Got {radii!r} instead."
        )
    out = np.ones((c, c), dtype=bool)
    for j in range(k):  # k is small; each step is a vectorized c×c comparison
        out &= cdist(T[:, j, :], T[:, j, :]) <= r[j]
    return out


def ordered_dist_counts(ordered: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Friend counts Σ_b dist_{r_1..r_k}(X^a, X^b) (self included: the predicate is reflexive)."""
    return ordered_dist_matrix(ordered, radii).sum(axis=1).astype(np.int64)
