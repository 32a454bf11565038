"""Quality metrics for clusterings. All are NON-PRIVATE diagnostics.

They read the raw data (or the ground truth) exactly, so their values are not differentially
private: use them to evaluate algorithms on synthetic or public data, and label them in the app
as "computed without privacy, for evaluation only".

References
----------
Tsfadia et al. 2022, §6.2: the normalized k-means loss 1 − X/Y (Fig. 6) and the labeling
failure under the best permutation (Fig. 7).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from dpviz._validation import RngLike, check_data, check_scalar
from dpviz.clustering.reference import (
    REFERENCE_TOLERANCE,
    Reference,
    reference_kmeans,
    reference_kmeans_cost,
    reference_recipe,
)
from dpviz.geometry import nearest_center

__all__ = ["REFERENCE_TOLERANCE", "Reference", "center_error", "kmeans_cost", "labeling_failure",
           "match_centers", "nearest_center", "normalized_loss", "reference_kmeans",
           "reference_kmeans_cost", "reference_recipe"]

def _check_centers(centers: np.ndarray, d: int, func: str, name: str = "centers") -> np.ndarray:
    C = np.asarray(centers, dtype=np.float64)
    if C.ndim != 2 or C.shape[0] < 1 or C.shape[1] != d:
        raise ValueError(f"The '{name}' parameter of {func} must be a (k, {d}) array with k >= 1. "
                         f"Got shape {C.shape}.")
    if not np.all(np.isfinite(C)):
        raise ValueError(f"The '{name}' parameter of {func} contains NaN or infinite values.")
    return C


def kmeans_cost(X: np.ndarray, centers: np.ndarray) -> float:
    """Σ_i min_j ||x_i − c_j||², the k-means cost of ``centers`` on X (exact, chunked).

    Privacy
    -------
    NON-PRIVATE diagnostic (exact function of every row).
    """
    X = check_data(X, "kmeans_cost")
    C = _check_centers(centers, X.shape[1], "kmeans_cost")
    if X.shape[0] == 0:
        return 0.0
    return float(nearest_center(X, C)[1].sum())


def normalized_loss(
    X: np.ndarray,
    centers: np.ndarray,
    *,
    reference_cost: float | None = None,
    rng: RngLike = None,
) -> float:
    """1 − X/Y: X the cost of the non-private reference on all data, Y the cost of ``centers``.

    0 means as good as the non-private reference (:func:`reference_kmeans`, its recipe in
    :func:`reference_recipe`); values approach 1 as the centers get worse; a value below 0 means
    the centers beat that local optimum (by at most about :data:`REFERENCE_TOLERANCE` in cost).

    Parameters
    ----------
    X : (n, d) array
    centers : (k, d) array
    reference_cost : float, optional
        A precomputed X (:func:`reference_kmeans_cost` with the same k); computed if None.
    rng : Generator, int or None
        Seeds the reference k-means++ when it is computed here.

    Privacy
    -------
    NON-PRIVATE diagnostic (Tsfadia et al. 2022, §6.2, Fig. 6 metric).
    """
    Xa = check_data(X, "normalized_loss", allow_empty=False)
    C = _check_centers(centers, Xa.shape[1], "normalized_loss")
    if reference_cost is None:
        reference_cost = reference_kmeans_cost(Xa, min(C.shape[0], Xa.shape[0]), rng=rng)
    reference_cost = check_scalar(reference_cost, "reference_cost", "normalized_loss", low=0.0,
                                  high_open=True)
    y = kmeans_cost(Xa, C)
    if y <= 0.0:
        return 0.0
    return 1.0 - reference_cost / y


def _confusion(labels_true: np.ndarray, labels_pred: np.ndarray) -> np.ndarray:
    _, ti = np.unique(labels_true, return_inverse=True)
    _, pi = np.unique(labels_pred, return_inverse=True)
    kt, kp = ti.max() + 1, pi.max() + 1
    return np.bincount(ti * kp + pi, minlength=kt * kp).reshape(kt, kp)


def labeling_failure(labels_true: np.ndarray, labels_pred: np.ndarray) -> float:
    """1 − accuracy of ``labels_pred`` under the best one-to-one matching of label values.

    The matching maximizes agreements (Hungarian algorithm on the confusion matrix); the numbers
    of distinct true and predicted labels may differ (rows of unmatched labels count as errors).
    Every distinct value is a label, including −1.

    Privacy
    -------
    NON-PRIVATE diagnostic (Tsfadia et al. 2022, §6.2, Fig. 7 metric).
    """
    yt = np.asarray(labels_true).ravel()
    yp = np.asarray(labels_pred).ravel()
    if yt.shape != yp.shape:
        raise ValueError(f"labeling_failure needs labels of equal length. Got {yt.size} true and "
                         f"{yp.size} predicted.")
    if yt.size == 0:
        raise ValueError("labeling_failure needs at least one label.")
    M = _confusion(yt, yp)
    r, c = linear_sum_assignment(M, maximize=True)
    return 1.0 - float(M[r, c].sum()) / yt.size


def match_centers(ref: np.ndarray, est: np.ndarray) -> np.ndarray:
    """perm with est[perm[i]] matched to ref[i], minimizing the total squared distance.

    If est has fewer rows than ref, unmatched entries of perm are −1; if it has more, the extra
    estimated centers are left out.

    Privacy
    -------
    NON-PRIVATE diagnostic when ref is the ground truth.
    """
    R = np.asarray(ref, dtype=np.float64)
    E = np.asarray(est, dtype=np.float64)
    if R.ndim != 2 or E.ndim != 2 or R.shape[1] != E.shape[1] or 0 in (R.shape[0], E.shape[0]):
        raise ValueError(f"match_centers needs two non-empty (k, d) arrays of the same d. "
                         f"Got shapes {R.shape} and {E.shape}.")
    cost = np.sum((R[:, None, :] - E[None, :, :]) ** 2, axis=2)
    r, c = linear_sum_assignment(cost)
    perm = np.full(R.shape[0], -1, dtype=np.int64)
    perm[r] = c
    return perm


def center_error(true: np.ndarray, est: np.ndarray) -> float:
    """Mean ℓ2 distance between matched true and estimated centers (:func:`match_centers`).

    Averaged over the min(k_true, k_est) matched pairs.

    Privacy
    -------
    NON-PRIVATE diagnostic.
    """
    T = np.asarray(true, dtype=np.float64)
    E = np.asarray(est, dtype=np.float64)
    perm = match_centers(T, E)
    ok = perm >= 0
    return float(np.mean(np.linalg.norm(T[ok] - E[perm[ok]], axis=1)))
