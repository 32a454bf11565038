"""A Gaussian mixture in the unit ball: the synthetic recipe of Google's DP clustering library.

Centers uniform in the ball of radius Λ(1 − 1/ratio); each cluster N(c_i, σ²I) with
σ = √Λ/(ratio·√d); rows clipped to norm Λ. ``weights`` makes the cluster sizes unequal.
The recipe is public (it is how the peer library benchmarks itself), so dpviz uses it to compare
with that library on its own terms (bench/peers.py) and, with other seeds and ratios, as the
public calibration grid of the ``auto`` rule (bench/auto_grid.py).

Reference: google/differential-privacy, learning/clustering/demo/data_generation.py
(``generate_synthetic_dataset``), described in its README.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpviz._validation import RngLike, check_rng, check_scalar
from dpviz.data.bounds import clip_to_ball
from dpviz.data.dataset import Dataset
from dpviz.data.generators import uniform_ball


def ball_mixture(
    n: int,
    *,
    d: int = 100,
    k: int = 64,
    ratio: float = 8.0,
    weights: Sequence[float] | None = None,
    radius: float = 1.0,
    rng: RngLike = None,
) -> Dataset:
    """n rows of a k-cluster mixture in the ball of radius Λ (see the module docstring).

    Sizes are ⌊n·w_i/Σw⌋ with the remainder in the last cluster (equal weights by default).
    """
    func = "ball_mixture"
    n = check_scalar(n, "n", func, low=1, high=1e9, integer=True)
    d = check_scalar(d, "d", func, low=1, high=100_000, integer=True)
    k = check_scalar(k, "k", func, low=1, high=n, integer=True)
    ratio = check_scalar(ratio, "ratio", func, low=1.0, low_open=True, high=1e6)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high=1e12)
    w = np.ones(k) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (k,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"The 'weights' parameter of {func} must be {k} positive numbers.")
    gen, _ = check_rng(rng, "data:ball_mixture")
    sizes = np.floor(n * w / w.sum()).astype(np.int64)
    sizes[-1] += n - sizes.sum()
    centers = uniform_ball(k, d, radius * (1.0 - 1.0 / ratio), gen)
    sigma = math.sqrt(radius) / (ratio * math.sqrt(d))
    labels = np.repeat(np.arange(k), sizes)
    X = centers[labels] + sigma * gen.standard_normal((n, d))
    perm = gen.permutation(n)
    X, labels = clip_to_ball(X[perm], radius), labels[perm]
    return Dataset(X=X, name=f"ball mixture (n={n}, d={d}, k={k}, ratio={ratio:g})", labels=labels,
                   true_centers=centers, radius=radius, k=k, source="generated",
                   params=dict(recipe=func, n=n, d=d, k=k, ratio=ratio, weights=w.tolist(),
                               radius=radius))
