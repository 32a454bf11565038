"""scikit-learn style wrappers around dpviz's private clustering algorithms."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpviz._validation import MAX_CLUSTERS, RngLike, check_bool, check_data, check_scalar
from dpviz.clustering.friendlycore.pipeline import fc_clustering
from dpviz.result import Result


class FriendlyCoreKMeans:
    """Private k-means with FriendlyCore (Tsfadia et al. 2022, FC_Clustering), sklearn-style.

    Parameters
    ----------
    n_clusters : int
        k.
    rho, delta : float, default 1.0, 1e-8
        The zCDP budget of one ``fit`` (paper: ρ = 1, δ = 1e-8).
    n_tuples : int, default 200
        Number of random pieces t (needs n ≥ t·n_clusters).
    radius : float, default 1.0
        Λ, the public ℓ2 bound of the rows (rows outside are removed, not clipped).
    r_min : float, default 1e-3
        Smallest radius of the diameter search.
    oracle : {"kmeans++", "pca"}
    preset : {"practical", "paper", "reference"}
    fallback : bool, default True
        Return the fallback's private centers when FriendlyCore outputs ⊥.
    random_state : Generator, int or None

    Attributes
    ----------
    cluster_centers_ : (n_clusters, d) array or None
        Private centers; None only if FC failed and the fallback is disabled.
    failure_ : str or None
        Why FriendlyCore output ⊥ (also set when the fallback supplied the centers).
    result_ : Result
        The full result (ledger, trace, params).
    n_features_in_ : int

    Privacy
    -------
    Each ``fit`` is (ρ, δ)-zCDP (tuple-level for the FriendlyCore part, row-level for the rest;
    see :func:`dpviz.clustering.friendlycore.pipeline.fc_private_stage`). ``predict`` is post-processing.

    References
    ----------
    Tsfadia et al. 2022, §5.2 and §6.2.
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        rho: float = 1.0,
        delta: float = 1e-8,
        n_tuples: int = 200,
        radius: float = 1.0,
        r_min: float = 1e-3,
        oracle: str = "kmeans++",
        preset: str = "practical",
        fallback: bool = True,
        random_state: RngLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.rho = rho
        self.delta = delta
        self.n_tuples = n_tuples
        self.radius = radius
        self.r_min = r_min
        self.oracle = oracle
        self.preset = preset
        self.fallback = fallback
        self.random_state = random_state

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in (
            "n_clusters", "rho", "delta", "n_tuples", "radius", "r_min", "oracle", "preset",
            "fallback", "random_state")}

    def set_params(self, **params: Any) -> FriendlyCoreKMeans:
        valid = self.get_params()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"Invalid parameter {key!r} for FriendlyCoreKMeans. Valid: {sorted(valid)}.")
            setattr(self, key, value)
        return self

    def fit(self, X: Any, y: Any = None) -> FriendlyCoreKMeans:
        """Compute private centers of X (y is ignored)."""
        X = check_data(X, "FriendlyCoreKMeans.fit", allow_empty=False)
        # Named as the user named them (not fc_clustering's 'k').
        k = check_scalar(self.n_clusters, "n_clusters", "FriendlyCoreKMeans", low=1, high=MAX_CLUSTERS,
                         integer=True)
        check_bool(self.fallback, "fallback", "FriendlyCoreKMeans")
        res: Result = fc_clustering(
            X, k, rho=self.rho, delta=self.delta, n_tuples=self.n_tuples,
            radius=self.radius, r_min=self.r_min, oracle=self.oracle, preset=self.preset,
            fallback=self.fallback, rng=self.random_state)
        self.result_ = res
        self.cluster_centers_ = res.centers
        fb = res.find("fallback").data if res.find("fallback") is not None else {}
        self.failure_ = res.failure or (fb.get("reason") if fb.get("used") else None)
        self.n_features_in_ = X.shape[1]
        return self

    def _check_fitted(self) -> np.ndarray:
        if not hasattr(self, "result_"):
            raise ValueError("This FriendlyCoreKMeans instance is not fitted yet. Call 'fit' first.")
        if self.cluster_centers_ is None:
            raise ValueError(
                f"FriendlyCoreKMeans has no centers: FriendlyCore failed ({self.failure_}) and the "
                "fallback is disabled. Refit with fallback=True, a larger rho or more rows."
            )
        return self.cluster_centers_

    def predict(self, X: Any) -> np.ndarray:
        """Index of the nearest private center for each row (post-processing)."""
        C = self._check_fitted()
        X = check_data(X, "FriendlyCoreKMeans.predict")
        if X.shape[1] != C.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features, but FriendlyCoreKMeans was fitted with "
                             f"{C.shape[1]}.")
        d2 = np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ C.T + np.einsum("ij,ij->i", C, C)[None]
        return np.argmin(d2, axis=1)

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).predict(X)

    def score(self, X: Any, y: Any = None) -> float:
        """Negative k-means cost of X against the private centers (sklearn's convention)."""
        C = self._check_fitted()
        X = check_data(X, "FriendlyCoreKMeans.score")
        lab = self.predict(X)
        return -float(np.sum((X - C[lab]) ** 2))

