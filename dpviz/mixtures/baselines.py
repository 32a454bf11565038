"""Reference fits for the univariate learner: non-private EM and a naive private baseline."""

from __future__ import annotations

import numpy as np
from sklearn.mixture import GaussianMixture

from dpviz.mixtures.mixture import GaussianMixture1D


def em_fit(x: np.ndarray, k: int, *, seed: int = 0, n_init: int = 1) -> GaussianMixture1D:
    """NOT private: ``sklearn.mixture.GaussianMixture`` (EM, k-means++ init) on the raw data."""
    gm = GaussianMixture(n_components=k, n_init=n_init, random_state=seed, reg_covar=1e-12)
    gm.fit(np.asarray(x, dtype=np.float64).reshape(-1, 1))
    return GaussianMixture1D(gm.weights_, gm.means_[:, 0], np.sqrt(gm.covariances_.reshape(-1)))


def noisy_points_em(x: np.ndarray, k: int, *, epsilon: float, bound: float, rng: np.random.Generator,
                    seed: int = 0) -> GaussianMixture1D:
    """The naive baseline: clip each point to [−B, B], add Lap(2B/ε) to it, then EM.

    Privacy: each released point is ε-DP in its own row (local randomization), so the noisy
    multiset is ε-DP for *replacing* one row; its size n is not hidden, so it is not DP for
    add/remove. It needs the a-priori bound B that the paper's learner does not.
    """
    noisy = np.clip(x, -bound, bound) + rng.laplace(0.0, 2.0 * bound / epsilon, size=np.shape(x))
    return em_fit(noisy, k, seed=seed, n_init=1)
