"""Univariate Gaussian mixtures and their total-variation distance.

Ashtiani, Majid, Narayanan (NeurIPS 2024), §1: a GMM is {(w_i, μ_i, σ_i)} and the learner is judged
by d_TV(D, D̂) = ½∫|f − f̂|, not by recovering components (density estimation is not clustering).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

_SQRT_2PI = float(np.sqrt(2.0 * np.pi))


@dataclass(frozen=True)
class GaussianMixture1D:
    """Σ_i w_i N(μ_i, σ_i²) on ℝ. Weights are renormalized to sum to 1; every σ_i > 0.

    Attributes
    ----------
    weights, means, sds : (m,) arrays
    """

    weights: np.ndarray
    means: np.ndarray
    sds: np.ndarray

    def __post_init__(self) -> None:
        w = np.atleast_1d(np.asarray(self.weights, dtype=np.float64))
        mu = np.atleast_1d(np.asarray(self.means, dtype=np.float64))
        sd = np.atleast_1d(np.asarray(self.sds, dtype=np.float64))
        if not (w.ndim == mu.ndim == sd.ndim == 1 and w.size == mu.size == sd.size and w.size >= 1):
            raise ValueError(
                "A GaussianMixture1D needs 1-D weights, means and sds of one common length >= 1. "
                f"Got shapes {w.shape}, {mu.shape}, {sd.shape}."
            )
        if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.sum() > 0):
            raise ValueError(f"The weights of a GaussianMixture1D must be finite, >= 0, not all 0. Got {w}.")
        if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(sd)) and np.all(sd > 0)):
            raise ValueError(f"A GaussianMixture1D needs finite means and sds > 0. Got {mu}, {sd}.")
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "means", mu)
        object.__setattr__(self, "sds", sd)

    @property
    def k(self) -> int:
        return int(self.weights.size)

    def pdf(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64)[..., None] - self.means) / self.sds
        return np.sum(self.weights * np.exp(-0.5 * z * z) / (self.sds * _SQRT_2PI), axis=-1)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64)[..., None] - self.means) / self.sds
        return np.sum(self.weights * ndtr(z), axis=-1)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n draws and their component labels."""
        labels = rng.choice(self.k, size=n, p=self.weights)
        return rng.normal(self.means[labels], self.sds[labels]), labels

    def to_dict(self) -> dict[str, list[float]]:
        return {"weights": self.weights.tolist(), "means": self.means.tolist(), "sds": self.sds.tolist()}


def _support_grid(*mixtures: GaussianMixture1D, points_per_component: int = 801) -> np.ndarray:
    """The union of μ ± 12σ grids of every component: resolves scales that differ by 1e6."""
    z = np.linspace(-12.0, 12.0, points_per_component)
    pts = [m.means[:, None] + m.sds[:, None] * z for m in mixtures]
    return np.unique(np.concatenate([p.ravel() for p in pts]))


def tv_distance(p: GaussianMixture1D, q: GaussianMixture1D) -> float:
    """d_TV(p, q) = sup_A |p(A) − q(A)|, with A = {f_p > f_q} located on a dense union grid.

    The masses of A are exact (CDF differences); only the crossing points are located on the grid
    (linear interpolation), so the error is second order in the grid step. Mass beyond μ ± 12σ of
    every component is below 1e-32.
    """
    x = _support_grid(p, q)
    diff = p.pdf(x) - q.pdf(x)
    pos = diff > 0
    # Crossing points between grid neighbours whose sign differs (linear interpolation).
    idx = np.flatnonzero(pos[1:] != pos[:-1])
    t = diff[idx] / (diff[idx] - diff[idx + 1])
    cross = x[idx] + t * (x[idx + 1] - x[idx])
    bounds = np.concatenate([[-np.inf], cross, [np.inf]])
    # Interval i between bounds[i] and bounds[i+1] has the sign of the grid points inside it.
    starts_pos = np.concatenate([[pos[0]], pos[idx + 1]])
    lo, hi = bounds[:-1][starts_pos], bounds[1:][starts_pos]
    mass = (p.cdf(hi) - p.cdf(lo)) - (q.cdf(hi) - q.cdf(lo))
    return float(np.clip(np.sum(mass), 0.0, 1.0))
