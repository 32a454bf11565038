"""A 2-D demo of the inverse-sensitivity idea over a finite grid — inspired by, NOT, the paper's algorithm.

Ashtiani, Majid, Narayanan (NeurIPS 2024), §2.3 and App. E learn one crude component per round with
the robustness-to-privacy mechanism of [HKMN23]: an exponential mechanism, over the continuous
space of (μ, Σ) and with respect to a normalized volume, whose score counts the points one must
change until the data contains N points that "look like" samples of N(μ, Σ). This module keeps
only the shape of that idea (seed note §5.B):

- candidates θ = (μ, Σ) on a finite grid inside a declared box [−B, B]²: means on a square grid,
  covariances from a few scales, aspect ratios and angles;
- score S(X, θ) = Σ_b max(0, q_b − c_b(X)) over bins b = Mahalanobis shells × angular sectors of
  N(θ) (equal probability each, covering its typical region), q_b = N·P_θ(b), N = ⌊f·n_declared/k⌋:
  the number of points that must be added to X so that its binned histogram under θ holds a
  Gaussian-shaped cluster of N points — an inverse-sensitivity score for a binned Gaussianity test;
- sensitivity 1: adding a row raises one c_b by one, removing lowers one; max(0, ·) is 1-Lipschitz;
- k rounds of the exponential mechanism P(θ) ∝ exp(−ε_t S/2), ε_t = ε/k (basic composition,
  pure ε-DP), removing the grid points near each pick (Ω_t ← Ω_{t−1} minus a neighbourhood: the
  means near the pick and the wide Σ that cover it).

Caveats (shown with every result):
1. A finite grid needs a-priori bounds on the means and the scales. In that bounded setting plain
   private hypothesis selection already works ([BSKW19], [AAK21], cited by the paper), so this demo
   gives up exactly what the paper achieves: unboundedness.
2. A pure-DP exponential mechanism over a grid, not [HKMN23]'s approximate-DP, volume-based one.
3. The binned test replaces the robust estimator and compression-consistency score; it is less
   specific: a large Σ spanning several clusters can score well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpviz._validation import check_data, check_rng, check_scalar
from dpviz.privacy.accounting import dp_total
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import exponential
from dpviz.result import Result, Trace

_FUNC = "inverse_sensitivity_2d"

CAVEATS = (
    "Inspired by, not the paper's algorithm: a finite grid inside a declared box.",
    "A finite grid needs a-priori bounds on means and scales; in that bounded setting plain private "
    "hypothesis selection already works, so the demo gives up exactly what the paper achieves: "
    "unboundedness.",
    "Pure-DP exponential mechanism over a grid, not HKMN23's approximate-DP, volume-based mechanism.",
    "The binned Gaussianity test replaces the robust estimator and compression score: a large Σ "
    "spanning several clusters can score well.",
)


@dataclass(frozen=True)
class ParamGrid2D:
    """The finite candidate set Θ: ``means`` (T, 2), ``covs`` (T, 2, 2)."""

    means: np.ndarray
    covs: np.ndarray

    @property
    def size(self) -> int:
        return int(self.means.shape[0])


def param_grid_2d(bound: float, *, n_means: int = 13, n_scales: int = 4,
                  aspects: tuple[float, ...] = (1.0, 3.0), n_angles: int = 4) -> ParamGrid2D:
    """Means on an n×n grid of [−B, B]²; σ from B/40 to B/4 (geometric); for each aspect ratio
    a > 1, ``n_angles`` rotations of diag(σ²a, σ²/a)."""
    g = np.linspace(-bound, bound, n_means)
    mx, my = np.meshgrid(g, g)
    means = np.stack([mx.ravel(), my.ravel()], axis=1)
    covs = []
    for s in np.geomspace(bound / 40.0, bound / 4.0, n_scales):
        for a in aspects:
            for t in (np.arange(n_angles) * np.pi / n_angles if a > 1 else [0.0]):
                r = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
                covs.append(r @ np.diag([s * s * a, s * s / a]) @ r.T)
    covs = np.array(covs)
    return ParamGrid2D(np.repeat(means, len(covs), axis=0), np.tile(covs, (means.shape[0], 1, 1)))


def bin_edges(shells: int, mass: float) -> np.ndarray:
    """Radii of equal-probability shells holding ``mass`` of N(0, I₂) (P(r ≤ t) = 1 − e^{−t²/2})."""
    return np.sqrt(-2.0 * np.log1p(-mass * np.arange(1, shells + 1) / shells))


def binned_scores(X: np.ndarray, grid: ParamGrid2D, N: float, *, shells: int = 3, sectors: int = 6,
                  mass: float = 0.9, chunk: int = 256) -> np.ndarray:
    """S(X, θ) = Σ_b max(0, q_b − c_b(X)) for every θ of the grid (chunked over θ)."""
    radii = bin_edges(shells, mass)
    nb = shells * sectors
    q = N * mass / nb
    out = np.empty(grid.size)
    for start in range(0, grid.size, chunk):
        sl = slice(start, min(start + chunk, grid.size))
        chol = np.linalg.cholesky(grid.covs[sl])  # Σ = L Lᵀ; z = L⁻¹(x − μ) ~ N(0, I) under θ
        a, b, c = chol[:, 0, 0, None], chol[:, 1, 0, None], chol[:, 1, 1, None]
        z0 = (X[None, :, 0] - grid.means[sl, 0, None]) / a
        z1 = (X[None, :, 1] - grid.means[sl, 1, None] - b * z0) / c
        r2 = z0 * z0 + z1 * z1
        shell = np.zeros(r2.shape, dtype=np.int64)
        for edge in radii**2:  # a loop over the few shells
            shell += r2 >= edge
        sector = np.floor((np.arctan2(z1, z0) + np.pi) / (2 * np.pi) * sectors).astype(int)
        sector = np.minimum(sector, sectors - 1)
        inside = shell < shells
        t = np.broadcast_to(np.arange(sl.stop - sl.start)[:, None], r2.shape)
        idx = (t * nb + shell * sectors + sector)[inside]
        counts = np.bincount(idx, minlength=(sl.stop - sl.start) * nb).reshape(-1, nb)
        out[sl] = np.maximum(0.0, q - counts).sum(axis=1)
    return out


def cluster_size(n_declared: int, k: int, fraction: float) -> float:
    """N = max(1, ⌊fraction·n_declared/k⌋): the points the test asks a cluster to hold (public)."""
    return float(max(1.0, np.floor(fraction * n_declared / k)))


def inverse_sensitivity_2d(
    X: object,
    k: int,
    *,
    epsilon: float,
    bound: float,
    n_declared: int,
    fraction: float = 0.5,
    rng: np.random.Generator | int | None = None,
    grid: ParamGrid2D | None = None,
    scores: np.ndarray | None = None,
) -> Result:
    """k private picks of Gaussian-looking clusters from a finite grid (demo; see the module doc).

    Parameters
    ----------
    X : (n, 2) array
    k : int, number of rounds (components).
    epsilon : float, the pure ε-DP budget (ε/k per round).
    bound : float, B: the declared box [−B, B]² of the means (public; the grid needs it).
    n_declared : int, the declared size; N = ⌊fraction·n_declared/k⌋ points per cluster.
    fraction : float, the share of a cluster's expected size the test asks for.
    grid : ParamGrid2D, optional (default ``param_grid_2d(bound)``).
    scores : array, optional: ``binned_scores(X, grid, N)`` already computed for this X and grid
        (a cache: the scores do not depend on ε or the seed).

    Returns
    -------
    Result
        ``centers`` (k, 2) means of the picks; ``params["covs"]`` (k, 2, 2); the trace holds the grid
        scores of each round (NOT private) and the picks (private).

    Privacy
    -------
    ε-DP for adding or removing one row (k exponential mechanisms of ε/k, sensitivity 1).

    References
    ----------
    Ashtiani, Majid, Narayanan, NeurIPS 2024, §2.3 (idea only); Asi & Duchi 2020 (inverse
    sensitivity); Hopkins, Kamath, Majid, Narayanan 2023 (robustness to privacy).
    """
    X = check_data(X, _FUNC, allow_empty=False)
    if X.shape[1] != 2:
        raise ValueError(f"The 'X' parameter of {_FUNC} must have 2 columns. Got {X.shape[1]} instead.")
    k = check_scalar(k, "k", _FUNC, low=1, high=8, integer=True)
    epsilon = check_scalar(epsilon, "epsilon", _FUNC, low=0.0, low_open=True)
    bound = check_scalar(bound, "bound", _FUNC, low=0.0, low_open=True, high_open=True)
    n_declared = check_scalar(n_declared, "n_declared", _FUNC, low=1, integer=True)
    fraction = check_scalar(fraction, "fraction", _FUNC, low=0.0, high=1.0, low_open=True)
    gen, seed = check_rng(rng, "mixtures:inverse_sensitivity_2d")
    grid = param_grid_2d(bound) if grid is None else grid
    N = cluster_size(n_declared, k, fraction)
    ledger = Ledger(_FUNC, note="pure ε-DP, one row added/removed; demo, not the paper's algorithm")
    trace = Trace()
    scores = binned_scores(X, grid, N) if scores is None else np.asarray(scores, dtype=np.float64)
    alive = np.ones(grid.size, dtype=bool)
    inv_covs = np.linalg.inv(grid.covs)
    picks: list[int] = []
    for t in range(k):
        cand = np.flatnonzero(alive)
        j = exponential(-scores[cand], sensitivity=1.0, eps=epsilon / k, rng=gen, ledger=ledger,
                        name=f"round {t + 1}: pick θ", note=f"{cand.size} grid points, binned score")
        i = int(cand[j])
        picks.append(i)
        trace.add(f"scores_{t + 1}", released=False, scores=np.where(alive, scores, np.nan),
                  note="grid scores are NOT private")
        trace.add(f"pick_{t + 1}", released=True, mean=grid.means[i], cov=grid.covs[i])
        # Ω_t = Ω_{t−1} minus the grid points vaguely close to the pick [O]: means within Mahalanobis
        # distance 3 of it under its Σ, or whose own 3σ ellipse holds its mean (a wide Σ that
        # spans an already picked cluster would otherwise score well again; caveat 3).
        d = grid.means - grid.means[i]
        near_pick = np.einsum("ti,ij,tj->t", d, np.linalg.inv(grid.covs[i]), d) <= 9.0
        covers_pick = np.einsum("ti,tij,tj->t", d, inv_covs, d) <= 9.0
        alive &= ~(near_pick | covers_pick)
        if not alive.any():
            break
    total = dp_total(ledger).eps  # the rounds so far, by the shared composition
    if len(picks) < k:  # the grid ran out: the unspent rounds are recorded as reserved
        ledger.record("reserved", "reserved", ApproxDP(epsilon - total, 0.0), note="grid exhausted")
    return Result(grid.means[picks], None, ledger, trace.freeze(),
                  dict(k=k, epsilon=epsilon, bound=bound, n_declared=n_declared, fraction=fraction,
                       N=N, covs=grid.covs[picks], caveats=CAVEATS), seed,
                  algorithm=None, guarantee=ApproxDP(epsilon, 0.0))
