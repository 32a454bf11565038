"""Private hypothesis selection with a sensitivity-1 minimum-distance score.

In the spirit of Bun, Kamath, Steinke, Wu (2019) and Aden-Ali, Ashtiani, Kamath (2021), as used by
Ashtiani, Majid, Narayanan (NeurIPS 2024), Thm D.2 / Lemma D.3. The score of a hypothesis h is

    s(h) = n₂ · sup_{A ∈ 𝒜} |h(A) − P̂(A)|,

with 𝒜 the unions of at most 2k cells of a fixed partition of ℝ. The Scheffé set {h_i > h_j} of two
mixtures of ≤ k Gaussians is a union of ≤ 2k intervals (their difference, a combination of 2k
Gaussians, has at most 4k − 2 zeros), so 𝒜 contains every Yatracos set up to the partition's
resolution, and the minimum-distance argument gives d_TV(p, ĥ) ≤ 3·min_h d_TV(p, h) + O(d_𝒜(p, P̂)).

Sensitivity 1 (one row added or removed): for each fixed A, n₂·h(A) − #{x ∈ A} moves by
h(A) − 1[x ∈ A] ∈ [−1, 1] when x is added (n₂ → n₂ + 1), and the sup of absolute values of
1-Lipschitz functions is 1-Lipschitz. The partition depends only on the hypotheses (public or
previously released), never on the data.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr


def cell_edges(means: np.ndarray, sds: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
    """Sorted unique edges μ + σ·z over all (μ, σ) given (z defaults to −4..4 in steps of ½)."""
    z = np.linspace(-4.0, 4.0, 17) if z is None else z
    return np.unique((np.ravel(means)[:, None] + np.ravel(sds)[:, None] * z).ravel())


def cell_masses(weights: np.ndarray, means: np.ndarray, sds: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(h, E+1) masses of the cells (−∞, e₀), [e₀, e₁), …, [e_{E−1}, ∞) under each hypothesis.

    ``weights``, ``means``, ``sds`` are (h, m) (zero weight pads hypotheses with fewer components).
    Each distinct component's CDF is evaluated once (hypotheses share most components).
    """
    pairs, inv = np.unique(np.stack([means.ravel(), sds.ravel()], axis=1), axis=0, return_inverse=True)
    comp_cdf = ndtr((edges[None, :] - pairs[:, :1]) / pairs[:, 1:])
    cdf = np.einsum("hm,hme->he", weights, comp_cdf[inv.reshape(means.shape)])
    h = cdf.shape[0]
    return np.diff(np.concatenate([np.zeros((h, 1)), cdf, np.ones((h, 1))], axis=1), axis=1)


def cell_counts(y_sorted: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(E+1,) counts of the data in the same cells."""
    cut = np.searchsorted(y_sorted, edges, side="left")
    return np.diff(np.concatenate([[0], cut, [y_sorted.size]]))


def max_union_sum(v: np.ndarray, m: int) -> np.ndarray:
    """Row-wise max of Σ_{cells in U} v over unions U of at most m runs of consecutive cells (≥ 0).

    Dynamic programme over the number of runs (a loop over j ≤ m, vectorized over rows and cells):
    with prefix sums P and F_{j}(c) the best sum of ≤ j runs inside the first c cells,
    F_j(c) = max_{c″ ≤ c} (P(c″) + max_{c′ ≤ c″} (F_{j−1}(c′) − P(c′))), F_0 = 0.
    """
    # cells on axis 0 (C order): numpy accumulates fastest along the leading axis
    P = np.concatenate([np.zeros((1, v.shape[0])), np.cumsum(v.T, axis=0)], axis=0)
    F = np.zeros_like(P)
    for _ in range(m):
        F = np.maximum.accumulate(P + np.maximum.accumulate(F - P, axis=0), axis=0)
    return F[-1]


def min_distance_scores(
    weights: np.ndarray, means: np.ndarray, sds: np.ndarray, y_sorted: np.ndarray, k: int,
    edges: np.ndarray | None = None, sets: str = "intervals",
) -> np.ndarray:
    """s(h) = sup_{A ∈ 𝒜} |n₂·h(A) − #A| for each hypothesis (sensitivity 1; see module doc).

    ``sets="intervals"``: 𝒜 = unions of ≤ 2k runs of cells (holds every Yatracos set of two
    k-mixtures). ``sets="cells"``: 𝒜 = every union of cells, so s(h) = ½·Σ_c |n₂·h(c) − #c| (the
    binned TV to the empirical distribution; Σ_c (n₂·h(c) − #c) = 0). Both are sups of
    sensitivity-1 functions, so both have sensitivity 1; "cells" scores every discrepancy (a
    smoother search), "intervals" has the smaller uniform-convergence error (VC dimension 4k).
    """
    edges = cell_edges(means[weights > 0], sds[weights > 0]) if edges is None else edges
    v = y_sorted.size * cell_masses(weights, means, sds, edges) - cell_counts(y_sorted, edges)
    if sets == "cells":
        return 0.5 * np.abs(v).sum(axis=1)
    return np.maximum(max_union_sum(v, 2 * k), max_union_sum(-v, 2 * k))
