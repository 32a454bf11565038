"""AvgRd: per-axis private bounding segments (interior point by the exponential mechanism on a grid,
sampled without enumerating the grid), clipping, then the Gaussian mechanism.

InteriorPoint (Prop. A.1.2a), BoundingSegment (Prop. A.1.2b), Avg1D (Prop. A.1.3a) and AvgRd
(Prop. 2.2.6 = A.1.3b) of Cohen et al. 2021 as the note (§4.3) reconstructs them. The Gaussian
step is made add/remove-safe [OURS, note §4.3 caveat]: it noises the sum of (clip(x, a, b) − mid),
whose sensitivity is (b − a)/2, and divides by the public number of tuples t, never by |S|.

References
----------
Cohen et al. 2021, §2.2.6 and App. A.1; McSherry & Talwar 2007 (exponential mechanism);
Balle & Wang 2018 (analytic Gaussian σ, used in place of the note's Δ√(2 ln(1.25/δ))/ε, which it
never exceeds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_sigma_dp, gumbel_argmax


@dataclass(frozen=True)
class IPBlocks:
    """The exponential mechanism of InteriorPoint, grouped into blocks of equal score.

    Grid index j ∈ {0..N} is the grid point −Λ + j·r_min. Block b covers indices
    ``start[b] .. end[b]`` (inclusive) and every index in it has score ``score[b]``.
    """

    start: np.ndarray
    end: np.ndarray
    score: np.ndarray
    n_grid: int

    def log_weights(self, eps: float) -> np.ndarray:
        """log of (number of grid points) × exp(ε·q/2) per block (sensitivity of q is 1)."""
        return eps * self.score / 2.0 + np.log((self.end - self.start + 1).astype(np.float64))


def ip_blocks(S: np.ndarray, radius: float, r_min: float) -> IPBlocks:
    """Score blocks of q(S, y) = min{#{x : x_L ≤ y}, #{x : x_R ≥ y}} over the grid (note §4.3) [D].

    q changes only at the indices of the x_L and x_R, so those are singleton blocks and the gaps
    between them are blocks of constant score [OURS block layout]. O(n log n); the grid (size
    2Λ/r_min + 1, possibly 10¹²) is never enumerated.
    """
    n_grid = math.floor(2.0 * radius / r_min + 1e-9) + 1
    u = (np.clip(np.asarray(S, dtype=np.float64), -radius, radius) + radius) / r_min
    snap = np.rint(u)
    # a point on the grid (up to rounding) is its own x_L and x_R
    u = np.where(np.abs(u - snap) <= 1e-9 * np.maximum(1.0, snap), snap, u)
    left = np.clip(np.floor(u), 0, n_grid - 1).astype(np.int64)
    right = np.clip(np.ceil(u), 0, n_grid - 1).astype(np.int64)
    left.sort()
    right.sort()
    bp = np.unique(np.concatenate([left, right, [0, n_grid - 1]]))
    gap_start = bp[:-1] + 1
    gap_end = bp[1:] - 1
    has_gap = gap_end >= gap_start
    start = np.concatenate([bp, gap_start[has_gap]])
    end = np.concatenate([bp, gap_end[has_gap]])
    n = left.size
    a = np.searchsorted(left, start, side="right")  # #{x_L ≤ j}
    b = n - np.searchsorted(right, start, side="left")  # #{x_R ≥ j}
    return IPBlocks(start, end, np.minimum(a, b).astype(np.float64), n_grid)


def interior_point(S: np.ndarray, *, eps: float, radius: float, r_min: float,
                   rng: np.random.Generator) -> float:
    """InteriorPoint(S, ε): a grid point drawn with Pr[y] ∝ exp(ε·q(S, y)/2) (ε-DP; q has
    sensitivity 1 under adding, removing or replacing one element) [S-skel/D].

    Block sampling (note §4.3, "Õ(n) implementation" [S]): draw a block with probability ∝ its
    weight (Gumbel-max on log weights), then a grid point uniformly inside it.
    """
    blocks = ip_blocks(S, radius, r_min)
    lw = blocks.log_weights(eps)
    i = gumbel_argmax(lw, rng)
    j = blocks.start[i] + rng.integers(0, blocks.end[i] - blocks.start[i] + 1)
    return -radius + float(j) * r_min


def bounding_segment(S_sorted: np.ndarray, *, eps: float, t0: int, radius: float, r_min: float,
                     rng: np.random.Generator) -> tuple[float, float]:
    """BoundingSegment(S, ε) (Prop. A.1.2b, ε-DP) [S-skel/D]: interior points (ε/2 each) of the t₀
    smallest and the t₀ largest elements, widened by r_min. ``S_sorted`` is sorted ascending."""
    lo = interior_point(S_sorted[:t0], eps=eps / 2.0, radius=radius, r_min=r_min, rng=rng) - r_min
    hi = interior_point(S_sorted[-t0:], eps=eps / 2.0, radius=radius, r_min=r_min, rng=rng) + r_min
    return (lo, hi) if lo <= hi else (hi, lo)  # post-processing: an ordered segment


@dataclass(frozen=True)
class AvgRdOutcome:
    """AvgRd on one cluster: the private average, the private segments and the noise per axis.

    Attributes
    ----------
    average : (d,) private â · segments : (d, 2) private [a_j, b_j]
    sigma : (d,) noise sd of the *average* per axis (σ of the sum divided by t)
    sensitivity : (d,) (b_j − a_j)/2, the sum's sensitivity per axis
    n_clipped : (d,) internal count of points moved by clipping (non-private diagnostic)
    mean : (d,) internal non-private average of the cluster
    """

    average: np.ndarray
    segments: np.ndarray
    sigma: np.ndarray
    sensitivity: np.ndarray
    n_clipped: np.ndarray
    mean: np.ndarray


def avg_rd(C: np.ndarray, *, t: int, eps_c: float, delta_c: float, t0: int, radius: float,
           r_min: float, rng: np.random.Generator) -> AvgRdOutcome:
    """AvgRd(C): per axis j, BoundingSegment at ε_c/2 then the Gaussian mechanism at (ε_c/2, δ_c)
    on Σ(clip(x_j, a_j, b_j) − mid_j), divided by the public t [S-skel; add/remove form OURS].

    The d axes compose (advanced composition, :func:`~.plan.advanced_step_eps`); the caller
    records the charge. Loops over the d axes only.
    """
    n, d = C.shape
    avg = np.empty(d)
    seg = np.empty((d, 2))
    sig = np.empty(d)
    sens = np.empty(d)
    clipped = np.zeros(d, dtype=np.int64)
    Cs = np.sort(C, axis=0)
    for j in range(d):  # loop over axes
        if n == 0:  # an empty cluster: the mechanisms still run on the empty multiset
            a, b = bounding_segment(np.array([0.0]), eps=eps_c / 2.0, t0=1, radius=radius,
                                    r_min=r_min, rng=rng)
        else:
            a, b = bounding_segment(Cs[:, j], eps=eps_c / 2.0, t0=min(t0, n), radius=radius,
                                    r_min=r_min, rng=rng)
        mid = 0.5 * (a + b)
        sens[j] = 0.5 * (b - a)
        col = C[:, j]
        clipped[j] = int(np.count_nonzero((col < a) | (col > b)))
        s = float(np.sum(np.clip(col, a, b) - mid))
        sigma_sum = gaussian_sigma_dp(sens[j], eps_c / 2.0, delta_c) if sens[j] > 0 else 0.0
        avg[j] = mid + (s + rng.normal(0.0, sigma_sum)) / t
        seg[j] = (a, b)
        sig[j] = sigma_sum / t
    mean = C.mean(axis=0) if n else np.full(d, np.nan)
    return AvgRdOutcome(avg, seg, sig, sens, clipped, mean)


def record_avg_rd(ledger: Ledger, i: int, out: AvgRdOutcome, *, d: int, eps_avg: float, delta_avg: float,
                  eps_c: float, delta_c: float, t: int) -> None:
    """Ledger lines of one AvgRd call at (ε_avg, δ_avg): the d axes' BoundingSegments and Gaussians,
    each charged half of the composed (advanced composition) cost; notes give the per-axis raw ε."""
    node = ledger.child(f"AvgRd[{i + 1}]", note=f"d={d} axes, per axis ε_c={eps_c:.4g}, δ_c={delta_c:.3g}")
    node.record(f"BoundingSegment × {d} axes (2 InteriorPoints at ε_c/4 each)", "exponential",
                ApproxDP(eps_avg / 2.0, delta_avg / 4.0), sensitivity=1.0,
                noise_scale=float(2.0 / (eps_c / 4.0)),
                note="half of AvgRd's composed cost; δ = half the advanced-composition slack")
    node.record(f"Gaussian × {d} axes on Σ(clip − mid) / t", "gaussian",
                ApproxDP(eps_avg / 2.0, delta_avg * 3.0 / 4.0),
                sensitivity=float(np.max(out.sensitivity)), noise_scale=float(np.max(out.sigma) * t),
                note=f"per axis (ε_c/2, δ_c); σ of the sum per axis = {np.round(out.sigma * t, 6).tolist()}")
