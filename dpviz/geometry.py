"""Geometry shared by the algorithms and the diagnostics: the nearest center of every row, and
per-cluster sums.

It lives below both (algorithms must not import :mod:`dpviz.metrics`, the non-private
diagnostics), so the import graph runs privacy → geometry → algorithms → metrics → viz.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix


def nearest_center(X: np.ndarray, centers: np.ndarray,
                   chunk: int = 65_536) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest center and the squared distance to it, per row (chunked).

    For small k·d, one vectorized pass over the rows per center and coordinate (no (n, k, d)
    temporary, no BLAS threads); otherwise the Gram form ||c||² − 2x·c per chunk of rows. Ties
    go to the lowest index. The returned distance is recomputed exactly for the chosen center.
    """
    X = np.asarray(X, dtype=np.float64)
    C = np.asarray(centers, dtype=np.float64)
    n, d = X.shape
    k = C.shape[0]
    if d * k <= 64:
        best = np.full(n, np.inf)
        labels = np.zeros(n, dtype=np.int64)
        for i in range(k):
            d2 = (X[:, 0] - C[i, 0]) ** 2
            for j in range(1, d):
                d2 += (X[:, j] - C[i, j]) ** 2
            labels[d2 < best] = i
            np.minimum(best, d2, out=best)
        return labels, best
    labels = np.empty(n, dtype=np.int64)
    dist2 = np.empty(n)
    cn = np.einsum("ij,ij->i", C, C)
    for s in range(0, n, chunk):
        B = X[s:s + chunk]
        lab = np.argmin(cn[None, :] - 2.0 * B @ C.T, axis=1)
        diff = B - C[lab]
        labels[s:s + chunk] = lab
        dist2[s:s + chunk] = np.einsum("ij,ij->i", diff, diff)
    return labels, dist2


def cluster_sums(X: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums (k, d) and counts (k,), by one sparse one-hot product (O(n·d)).

    A dense (n, k) one-hot times X was 70× slower at n = 150,000, d = 200 (6.5 vs 0.09 s):
    BLAS streams the mostly-zero matrix.
    """
    n = X.shape[0]
    S = csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    return np.asarray(S @ X), np.bincount(labels, minlength=k).astype(np.float64)
