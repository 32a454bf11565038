"""Synthetic datasets: the papers' recipes and a few teaching shapes.

Every generator takes ``n`` and ``rng`` (Generator | int | None) and returns a
:class:`~dpviz.data.dataset.Dataset` with ground-truth labels, a public radius Λ declared by
the recipe (every row is clipped to norm ≤ Λ, so the declaration is true) and a suggested k.
All are vectorized: n = 10⁶ points in 2-D take well under a second.

References
----------
Tsfadia, Cohen, Kaplan, Mansour, Stemmer. FriendlyCore: Practical Differentially Private
Aggregation. ICML 2022, §6.2 (Figures 6 and 7) and §5.2 (Figure 3).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpviz._validation import RngLike, check_rng, check_scalar
from dpviz.data.bounds import clip_to_ball
from dpviz.data.dataset import Dataset

#: Standard deviation of the Fig. 6 clusters: 1/(32√2) ≈ 0.0221. The paper prints
#: "N(c_i, 0.0221·I)"; we read 0.0221 as the test bed's standard deviation 1/(32√2) printed as
#: a number (as a variance, sd ≈ 0.149, the eight clusters would overlap heavily in the unit ball).
FIG6_SIGMA = 0.0221


# ----------------------------------------------------------------------------- helpers


def _check_n(n: Any, func: str, minimum: int = 1) -> int:
    return check_scalar(n, "n", func, low=minimum, high=50_000_000, integer=True)


def equal_sizes(n: int, k: int) -> np.ndarray:
    """k cluster sizes summing to n, as equal as possible (the first n mod k get one more)."""
    sizes = np.full(k, n // k, dtype=np.int64)
    sizes[: n % k] += 1
    return sizes


def _sizes_from_weights(n: int, weights: np.ndarray) -> np.ndarray:
    """Deterministic sizes ∝ weights summing to n (largest remainders get the extra rows)."""
    w = np.asarray(weights, dtype=np.float64) / np.sum(weights)
    raw = w * n
    sizes = np.floor(raw).astype(np.int64)
    rest = n - int(sizes.sum())
    if rest:
        sizes[np.argsort(-(raw - sizes), kind="stable")[:rest]] += 1
    return sizes


def uniform_ball(m: int, d: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """m points uniform in the d-dimensional ball of the given radius."""
    g = rng.standard_normal((m, d))
    g /= np.maximum(np.linalg.norm(g, axis=1, keepdims=True), np.finfo(float).tiny)
    r = radius * rng.random(m) ** (1.0 / d)
    return g * r[:, None]


def _labels_for(sizes: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def _gaussian_mixture(
    sizes: np.ndarray, centers: np.ndarray, scales: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Rows N(c_i, A_i A_iᵀ) with ``scales[i]`` = A_i (d, d) or a scalar std; shuffled."""
    labels = _labels_for(sizes)
    d = centers.shape[1]
    Z = rng.standard_normal((labels.shape[0], d))
    scales = np.asarray(scales, dtype=np.float64)
    if scales.ndim == 1:
        X = Z * scales[labels][:, None] + centers[labels]
    else:
        X = np.empty_like(Z)
        start = 0
        for i, m in enumerate(sizes):  # loop over clusters (k), not points
            X[start : start + m] = Z[start : start + m] @ scales[i].T + centers[i]
            start += m
    perm = rng.permutation(labels.shape[0])
    return X[perm], labels[perm]


def _ring_centers(k: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """k centers evenly spaced on a circle of the given radius, randomly rotated (2-D)."""
    phase = rng.uniform(0.0, 2.0 * math.pi)
    ang = phase + 2.0 * math.pi * np.arange(k) / k
    return radius * np.column_stack([np.cos(ang), np.sin(ang)])


def _finish(
    X: np.ndarray,
    *,
    name: str,
    labels: np.ndarray | None,
    true_centers: np.ndarray | None,
    radius: float,
    k: int,
    params: dict[str, Any],
) -> Dataset:
    X = clip_to_ball(X, radius)
    return Dataset(X=X, name=name, labels=labels, true_centers=true_centers, radius=radius, k=k,
                   source="generated", params=params)


# ----------------------------------------------------------------------------- the recipes


def fig6_blobs(
    n: int, *, k: int = 8, d: int = 2, sigma: float = FIG6_SIGMA, rng: RngLike = None
) -> Dataset:
    """Fig. 6 of Tsfadia et al.: k spherical Gaussians in the unit ball.

    Centers c_i uniform in the ball of radius 1 − 1/32; n/k points from N(c_i, σ²I) per cluster
    (sizes differ by at most one when k ∤ n); every point clipped to norm 1; Λ = 1.

    Parameters
    ----------
    n : int
        Number of points.
    k : int, default 8
    d : int, default 2
    sigma : float, default 0.0221
        Standard deviation of each coordinate (the test bed's 1/(32√2)).
    rng : Generator, int or None

    References
    ----------
    Tsfadia et al. 2022, §6.2, Figure 6 (left).
    """
    func = "fig6_blobs"
    n = _check_n(n, func)
    k = check_scalar(k, "k", func, low=1, high=n, integer=True)
    d = check_scalar(d, "d", func, low=1, high=10_000, integer=True)
    sigma = check_scalar(sigma, "sigma", func, low=0.0, high_open=True)
    gen, seed = check_rng(rng, "data:fig6_blobs")
    centers = uniform_ball(k, d, 1.0 - 1.0 / 32.0, gen)
    X, labels = _gaussian_mixture(equal_sizes(n, k), centers, np.full(k, sigma), gen)
    return _finish(X, name=f"Fig. 6 blobs (k={k}, d={d})", labels=labels, true_centers=centers,
                   radius=1.0, k=k,
                   params=dict(recipe=func, n=n, k=k, d=d, sigma=sigma, seed=seed))


def fig7_gmm(n: int, *, k: int = 5, d: int = 10, rng: RngLike = None) -> Dataset:
    """Fig. 7 (left) of Tsfadia et al.: a uniform mixture of N(c_i, I_d), c_i uniform on {1, 2}^d.

    Pairwise center distances are ≈ √(d/2), so the clusters separate as d grows. Λ = 10√d
    (rows are clipped to it; with these centers essentially none is touched).

    References
    ----------
    Tsfadia et al. 2022, §6.2, Figure 7 (left); the paper's PCA oracle (footnote 5).
    """
    func = "fig7_gmm"
    n = _check_n(n, func)
    k = check_scalar(k, "k", func, low=1, high=n, integer=True)
    d = check_scalar(d, "d", func, low=1, high=10_000, integer=True)
    gen, seed = check_rng(rng, "data:fig7_gmm")
    centers = gen.integers(1, 3, size=(k, d)).astype(np.float64)
    X, labels = _gaussian_mixture(equal_sizes(n, k), centers, np.ones(k), gen)
    return _finish(X, name=f"Fig. 7 GMM (k={k}, d={d})", labels=labels, true_centers=centers,
                   radius=10.0 * math.sqrt(d), k=k, params=dict(recipe=func, n=n, k=k, d=d, seed=seed))


def fig3_three(
    n: int, *, separation: float = 1.0, sigma: float = 0.08, rng: RngLike = None
) -> Dataset:
    """Three 2-D clusters in the unit ball (the Fig. 3 storyboard of Tsfadia et al.).

    The paper does not give its Fig. 3 data; this recipe places three Gaussian clusters of std
    ``sigma`` on a randomly rotated circle of radius 0.55·separation (capped at 0.85); Λ = 1.

    References
    ----------
    Tsfadia et al. 2022, §5.2, Figure 3 (n = 10⁵, k = 3, t = 300 in the paper).
    """
    func = "fig3_three"
    n = _check_n(n, func)
    separation = check_scalar(separation, "separation", func, low=0.0, high=3.0)
    sigma = check_scalar(sigma, "sigma", func, low=0.0, high_open=True)
    gen, seed = check_rng(rng, "data:fig3_three")
    centers = _ring_centers(3, min(0.55 * separation, 0.85), gen)
    X, labels = _gaussian_mixture(equal_sizes(n, 3), centers, np.full(3, sigma), gen)
    return _finish(X, name="Three clusters (Fig. 3)", labels=labels, true_centers=centers,
                   radius=1.0, k=3, params=dict(recipe=func, n=n, separation=separation,
                                                sigma=sigma, seed=seed))


def varied_blobs(
    n: int, *, k: int = 4, separation: float = 1.0, rng: RngLike = None
) -> Dataset:
    """k 2-D blobs of different sizes (weights ∝ k, k−1, ..., 1) and spreads; Λ = 1.

    The smallest cluster is the hard one for sample-and-aggregate: few of its points land in
    each piece. Centers sit on a rotated circle of radius 0.6·separation (capped at 0.85).
    """
    func = "varied_blobs"
    n = _check_n(n, func)
    k = check_scalar(k, "k", func, low=1, high=min(n, 12), integer=True)
    separation = check_scalar(separation, "separation", func, low=0.0, high=3.0)
    gen, seed = check_rng(rng, "data:varied_blobs")
    centers = _ring_centers(k, min(0.6 * separation, 0.85), gen) if k > 1 else np.zeros((1, 2))
    sizes = _sizes_from_weights(n, np.arange(k, 0, -1, dtype=np.float64))
    stds = np.linspace(0.04, 0.12, k)
    X, labels = _gaussian_mixture(sizes, centers, stds, gen)
    return _finish(X, name=f"Blobs of varied size (k={k})", labels=labels, true_centers=centers,
                   radius=1.0, k=k, params=dict(recipe=func, n=n, k=k, separation=separation,
                                                sizes=sizes.tolist(), stds=stds.tolist(), seed=seed))


def anisotropic_blobs(
    n: int, *, k: int = 3, separation: float = 1.0, rng: RngLike = None
) -> Dataset:
    """k elongated 2-D Gaussians (std 0.15 along a random direction, 0.03 across); Λ = 1.

    k-means' spherical bias shows here: nearby elongated clusters get cut across.
    """
    func = "anisotropic_blobs"
    n = _check_n(n, func)
    k = check_scalar(k, "k", func, low=1, high=min(n, 12), integer=True)
    separation = check_scalar(separation, "separation", func, low=0.0, high=3.0)
    gen, seed = check_rng(rng, "data:anisotropic_blobs")
    centers = _ring_centers(k, min(0.5 * separation, 0.85), gen) if k > 1 else np.zeros((1, 2))
    theta = gen.uniform(0.0, math.pi, size=k)
    rot = np.stack([np.stack([np.cos(theta), -np.sin(theta)], -1),
                    np.stack([np.sin(theta), np.cos(theta)], -1)], axis=1)  # (k, 2, 2)
    A = rot @ np.diag([0.15, 0.03])
    X, labels = _gaussian_mixture(equal_sizes(n, k), centers, A, gen)
    return _finish(X, name=f"Anisotropic blobs (k={k})", labels=labels, true_centers=centers,
                   radius=1.0, k=k, params=dict(recipe=func, n=n, k=k, separation=separation,
                                                seed=seed))


def moons(n: int, *, noise: float = 0.06, separation: float = 1.0, rng: RngLike = None) -> Dataset:
    """Two interleaving half circles (scikit-learn's make_moons shape), scaled into the unit ball.

    Not k-means friendly on purpose (k = 2): centroids cannot describe the moons. ``separation``
    pulls the moons apart vertically. Λ = 1; no true centers.
    """
    func = "moons"
    n = _check_n(n, func, minimum=2)
    noise = check_scalar(noise, "noise", func, low=0.0, high=1.0)
    separation = check_scalar(separation, "separation", func, low=0.0, high=3.0)
    gen, seed = check_rng(rng, "data:moons")
    sizes = equal_sizes(n, 2)
    labels = _labels_for(sizes)
    t = gen.uniform(0.0, math.pi, size=n)
    outer = labels == 0
    x = np.where(outer, np.cos(t), 1.0 - np.cos(t))
    gap = 0.5 * (separation - 1.0)
    y = np.where(outer, np.sin(t) + gap, 0.5 - np.sin(t) - gap)
    X = np.column_stack([x, y]) + noise * gen.standard_normal((n, 2))
    # make_moons spans x ∈ [−1, 2], y ∈ [−0.5, 1]: centre it and scale into the unit ball.
    X = (X - np.array([0.5, 0.25])) / (1.9 + abs(gap))
    perm = gen.permutation(n)
    return _finish(X[perm], name="Two moons", labels=labels[perm], true_centers=None, radius=1.0,
                   k=2, params=dict(recipe=func, n=n, noise=noise, separation=separation, seed=seed))


def null_uniform(n: int, *, d: int = 2, k: int = 3, rng: RngLike = None) -> Dataset:
    """No structure: n points uniform in the unit ball (a null case; any k is wrong). Λ = 1.

    A good private clusterer should fail or report low confidence here, not hallucinate clusters.
    """
    func = "null_uniform"
    n = _check_n(n, func)
    d = check_scalar(d, "d", func, low=1, high=10_000, integer=True)
    k = check_scalar(k, "k", func, low=1, high=n, integer=True)
    gen, seed = check_rng(rng, "data:null_uniform")
    X = uniform_ball(n, d, 1.0, gen)
    return _finish(X, name=f"Uniform in the ball (no clusters, d={d})", labels=None,
                   true_centers=None, radius=1.0, k=k, params=dict(recipe=func, n=n, d=d, k=k,
                                                                   seed=seed))


# ----------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class GeneratorSpec:
    """A registry entry: callable like the generator, with a human title and a description."""

    func: Callable[..., Dataset]
    title: str
    description: str
    default_n: int
    has_separation: bool = False

    def __call__(self, n: int, **kwargs: Any) -> Dataset:
        return self.func(n, **kwargs)

    @property
    def name(self) -> str:
        return self.func.__name__


GENERATORS: dict[str, GeneratorSpec] = {
    "fig6_blobs": GeneratorSpec(fig6_blobs, "Fig. 6: eight blobs in the unit ball",
                                "k=8 Gaussians (std 0.0221) with centers uniform in the ball, "
                                "clipped to norm 1; Λ=1 (Tsfadia et al. §6.2).", 200_000),
    "fig7_gmm": GeneratorSpec(fig7_gmm, "Fig. 7: Gaussian mixture on {1,2}^d",
                              "k=5 unit-variance Gaussians with centers on {1,2}^d; Λ=10√d "
                              "(Tsfadia et al. §6.2).", 250_000),
    "fig3_three": GeneratorSpec(fig3_three, "Fig. 3: three clusters",
                                "Three 2-D Gaussian clusters for the step-by-step storyboard; Λ=1.",
                                100_000, has_separation=True),
    "varied_blobs": GeneratorSpec(varied_blobs, "Blobs of varied size",
                                  "Clusters with weights 4:3:2:1 and growing spread; Λ=1.", 50_000,
                                  has_separation=True),
    "anisotropic_blobs": GeneratorSpec(anisotropic_blobs, "Anisotropic blobs",
                                       "Elongated Gaussians that k-means cuts across; Λ=1.", 50_000,
                                       has_separation=True),
    "moons": GeneratorSpec(moons, "Two moons",
                           "Interleaving half circles: no centroid clustering fits; Λ=1.", 20_000,
                           has_separation=True),
    "null_uniform": GeneratorSpec(null_uniform, "No structure (uniform)",
                                  "Uniform in the unit ball: there are no clusters to find; Λ=1.",
                                  20_000),
}
