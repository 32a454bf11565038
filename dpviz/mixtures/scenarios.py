"""Built-in mixtures: the seed note's hard mixture, a well-separated one, and the lower-bound
constructions of Ashtiani, Majid, Narayanan (NeurIPS 2024), App. G (seed note §4.4), in 1-D and 2-D.

The lower-bound scenarios are *instances* of the constructions (one draw of the unknown
parameters), for seeing why they are hard; a single instance proves nothing about the bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpviz._validation import check_rng
from dpviz.mixtures.mixture import GaussianMixture1D


@dataclass(frozen=True)
class GaussianMixture2D:
    """Σ_i w_i N(μ_i, Σ_i) on ℝ²: ``weights`` (k,), ``means`` (k, 2), ``covs`` (k, 2, 2)."""

    weights: np.ndarray
    means: np.ndarray
    covs: np.ndarray

    @property
    def k(self) -> int:
        return int(self.weights.size)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        labels = rng.choice(self.k, size=n, p=self.weights / self.weights.sum())
        chol = np.linalg.cholesky(self.covs)
        z = rng.standard_normal((n, 2))
        return self.means[labels] + np.einsum("nij,nj->ni", chol[labels], z), labels


@dataclass(frozen=True)
class Scenario:
    """A named mixture to sample from (``truth`` is known: the TV to it is a simulation diagnostic)."""

    key: str
    title: str
    description: str
    truth: GaussianMixture1D | GaussianMixture2D

    @property
    def d(self) -> int:
        return 1 if isinstance(self.truth, GaussianMixture1D) else 2

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.truth.sample(n, rng)


def hard_mixture() -> Scenario:
    """Weights .5/.3/.2, means −50/0/1000, sds 1/0.01/100: scales 10⁴ apart, no common grid fits."""
    return Scenario("hard", "Hard mixture (seed note §5)",
                    "weights .5/.3/.2, means −50/0/1000, sds 1/0.01/100: scales differ by 10⁴, so no "
                    "bounded grid fits all three components",
                    GaussianMixture1D([0.5, 0.3, 0.2], [-50.0, 0.0, 1000.0], [1.0, 0.01, 100.0]))


def separated_mixture(k: int = 3, gap: float = 10.0) -> Scenario:
    """k equal-weight N(i·gap, 1)."""
    return Scenario("separated", "Well-separated mixture", f"{k} equal weights, means {gap:g} apart, sd 1",
                    GaussianMixture1D(np.full(k, 1.0 / k), gap * (np.arange(k) - (k - 1) / 2), np.ones(k)))


def lb_unknown_scales(k: int = 3, R: float = 1e3, seed: int = 0) -> Scenario:
    """App. G, the kd²/(αε) term at d = 1: k equal-weight components at known far-apart means i·R
    with unknown scales (here one draw, log-uniform in [0.1, 10])."""
    rng = check_rng(seed, "data:lb_unknown_scales")[0]
    return Scenario("lb_scales", "Lower bound: known means, unknown scales (App. G)",
                    f"{k} equal weights at means i·{R:g}; unknown sds (one draw, log-uniform in [0.1, 10]). "
                    "Learning the mixture means learning most components' scales.",
                    GaussianMixture1D(np.full(k, 1.0 / k), R * np.arange(k), np.exp(rng.uniform(np.log(0.1),
                                                                                           np.log(10.0), k))))


def lb_light_components(k: int = 3, alpha: float = 0.1, R: float = 1e3, seed: int = 0) -> Scenario:
    """App. G, the k·log(1/δ)/(αε) term: one heavy known component plus k − 1 light ones of weight
    α/k at far-apart known means with unknown scales; each light one needs Ω(log(1/δ)/ε) of its own
    samples."""
    rng = check_rng(seed, "data:lb_light_components")[0]
    w = np.concatenate([[1.0 - (k - 1) * alpha / k], np.full(k - 1, alpha / k)])
    sds = np.concatenate([[1.0], np.exp(rng.uniform(np.log(0.1), np.log(10.0), k - 1))])
    return Scenario("lb_light", "Lower bound: light components (App. G)",
                    f"one heavy N(0, 1) of weight {w[0]:.3g}; {k - 1} light ones of weight "
                    f"α/k = {alpha / k:.3g} at i·{R:g} with unknown sds",
                    GaussianMixture1D(w, R * np.arange(k), sds))


def lb_covariances_2d(k: int = 3, R: float = 10.0, seed: int = 0) -> Scenario:
    """App. G, the kd²/(αε) term in 2-D: k equal weights at μ_i = i·R·e₁ (centred), unknown covariances."""
    rng = check_rng(seed, "data:lb_covariances_2d")[0]
    covs = []
    for _ in range(k):
        t = rng.uniform(0, np.pi)
        r = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        covs.append(r @ np.diag(np.exp(rng.uniform(np.log(0.3), np.log(2.0), 2)) ** 2) @ r.T)
    means = np.stack([R * (np.arange(k) - (k - 1) / 2), np.zeros(k)], axis=1)
    return Scenario("lb_cov_2d", "Lower bound: known means, unknown covariances (2-D)",
                    f"{k} equal weights at i·{R:g}·e₁; unknown covariances (one draw)",
                    GaussianMixture2D(np.full(k, 1.0 / k), means, np.array(covs)))


def clusters_2d(k: int = 3, seed: int = 0) -> Scenario:
    """k 2-D Gaussians of mixed shapes inside [−10, 10]²."""
    rng = check_rng(seed, "data:clusters_2d")[0]
    means = rng.uniform(-7, 7, (k, 2))
    covs = np.array([np.diag(rng.uniform(0.6, 1.6, 2) ** 2) for _ in range(k)])
    return Scenario("clusters_2d", "2-D clusters", f"{k} Gaussians of mixed shapes in [−10, 10]²",
                    GaussianMixture2D(np.full(k, 1.0 / k), means, covs))


SCENARIOS_1D: dict[str, Callable[..., Scenario]] = {
    "hard": hard_mixture, "separated": separated_mixture, "lb_scales": lb_unknown_scales,
    "lb_light": lb_light_components,
}
SCENARIOS_2D: dict[str, Callable[..., Scenario]] = {
    "clusters_2d": clusters_2d, "lb_cov_2d": lb_covariances_2d,
}
