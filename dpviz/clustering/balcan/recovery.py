"""Lifting back to ℝ^d: noisy counts and sums (Alg. 4) and sparse recovery (Alg. 5).

Balcan, Dick, Liang, Mou, Zhang, ICML 2017, Alg. 4 last lines, §6.1 Alg. 5, §7 (SuLQ refinement);
engineer's note §3.4–3.5, §4, §8.2.

Fixes of the printed recovery (note §4, §8.4 A8): a row in the ℓ2 ball of radius Λ moves a sum in
ℝ^d by at most √d·Λ in ℓ1, so the per-coordinate Laplace scale is √d·Λ/ε (the box's Λ/ε lacks √d);
the count is released with its own noise and the center is noisy_sum / max(noisy_count, 1) — the
noise scale never depends on a true count (the authors' code uses the true cluster size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz.data.bounds import clip_to_ball
from dpviz.geometry import cluster_sums
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gumbel_top, laplace


@dataclass(frozen=True)
class Recovery:
    """Noisy centers in ℝ^d from a partition of the rows (DP-safe except the NOT-private fields).

    Attributes
    ----------
    centers : (k, d) array
        noisy_sum / max(noisy_count, 1), clipped to the ball of radius Λ.
    noisy_counts : (k,) array
    count_scale, sum_scale : float
        The Laplace scales drawn (1/ε_count and √d·Λ/ε_sum per coordinate).
    true_counts : (k,) array
        NOT private (debug).
    """

    centers: np.ndarray
    noisy_counts: np.ndarray
    count_scale: float
    sum_scale: float
    true_counts: np.ndarray


def recover_centers(
    X: np.ndarray,
    labels: np.ndarray,
    k: int,
    *,
    eps_count: float,
    eps_sum: float,
    radius: float,
    rng: np.random.Generator,
    ledger: Ledger,
) -> Recovery:
    """Noisy means of the k cells of a partition (Alg. 4, last step, with the √d fix).

    Privacy
    -------
    (ε_count + ε_sum)-DP under add/remove of one row: one row is in one cell, so the count vector
    has ℓ1 sensitivity 1 and the (k, d) sum matrix ℓ1 sensitivity √d·Λ (parallel composition over
    cells, Lemma 1, is the single Laplace release of the whole vector).
    """
    d = X.shape[1]
    sums, counts = cluster_sums(X, labels, k)
    node = ledger.child("noisy counts and sums", note="parallel over the k cells (Lemma 1)")
    noisy_counts = np.asarray(laplace(counts, sensitivity=1.0, eps=eps_count, rng=rng, ledger=node,
                                      name="counts", note="ℓ1 sensitivity 1"))
    sum_sens = math.sqrt(d) * radius
    noisy_sums = np.asarray(laplace(sums, sensitivity=sum_sens, eps=eps_sum, rng=rng, ledger=node,
                                    name="sums", note="ℓ1 sensitivity √d·Λ (the paper's Λ lacks √d)"))
    centers = clip_to_ball(noisy_sums / np.maximum(noisy_counts, 1.0)[:, None], radius)
    return Recovery(centers=centers, noisy_counts=noisy_counts, count_scale=1.0 / eps_count,
                    sum_scale=sum_sens / eps_sum, true_counts=counts)


# ----------------------------------------------------------------------------- Algorithm 5


def sparsify(X: np.ndarray, s: int, bound: float) -> np.ndarray:
    """Enforce the sparse domain of Alg. 5 per row: keep the s largest |x_r|, clip to [−Λ∞, Λ∞].

    A per-row public map (privacy-neutral), so the declared domain ||x||₀ ≤ s, ||x||∞ ≤ Λ∞ holds.
    """
    Xc = np.clip(X, -bound, bound)
    if s < X.shape[1]:
        drop = np.argpartition(np.abs(Xc), X.shape[1] - s, axis=1)[:, : X.shape[1] - s]
        np.put_along_axis(Xc, drop, 0.0, axis=1)
    return Xc


@dataclass(frozen=True)
class SparseRecovery:
    """Alg. 5 applied to every cell (DP-safe: support order and noisy values).

    Attributes
    ----------
    centers : (k, d) array
        s_sel-sparse centers: noisy sums on the selected coordinates / max(noisy count, 1).
    support : (k, m) int array
        The selected coordinates, in selection order.
    noisy_counts : (k,) array
    """

    centers: np.ndarray
    support: np.ndarray
    noisy_counts: np.ndarray


def sparse_recover(
    X: np.ndarray,
    labels: np.ndarray,
    k: int,
    *,
    s: int,
    eta: float,
    bound: float,
    eps_count: float,
    eps_select: float,
    eps_value: float,
    rng: np.random.Generator,
    ledger: Ledger,
) -> SparseRecovery:
    """Alg. 5 per cell: pick m = ⌈2s/η⌉ coordinates by the exponential mechanism, release their noisy values.

    Deviation, for a sound pure-ε statement (note §3.5, A12): the algorithm box scores |μ[r]| with
    the TRUE n and charges ≈ ε(1+η) in total (note §4). We score the sums |S[r]| (sensitivity Λ∞
    per coordinate under add/remove: a row has |x_r| ≤ Λ∞), peel m coordinates by m exponential
    mechanisms of ε_select/m each (sampled at once by Gumbel-top-m, the same distribution), release
    the m sums with Laplace of ℓ1 sensitivity min(m, s)·Λ∞ (a row has ≤ s non-zeros), and divide
    by a noisy count. Cells are disjoint, so each mechanism composes in parallel over cells.

    Privacy
    -------
    (ε_count + ε_select + ε_value)-DP under add/remove of one row.

    References
    ----------
    Balcan et al. 2017, §6.1, Alg. 5, Thm 10; note §3.5 (Gumbel-top-k equals peeling).
    """
    d = X.shape[1]
    m = min(d, math.ceil(2 * s / eta))
    sums, counts = cluster_sums(X, labels, k)
    node = ledger.child("sparse recovery (Alg. 5)", note="parallel over the k cells")
    noisy_counts = np.asarray(laplace(counts, sensitivity=1.0, eps=eps_count, rng=rng, ledger=node,
                                      name="counts"))
    sel_node = node.child("select coordinates", note=f"{m} peeling steps, each parallel over cells")
    eps_pick = eps_select / m
    for step in range(m):  # the m peeling steps (ε_select/m each) are drawn at once below
        sel_node.record(f"pick {step + 1}", "exponential", ApproxDP(eps_pick), sensitivity=bound,
                        noise_scale=2.0 * bound / eps_pick,
                        note="score |S[r]| (sensitivity Λ∞), one pick per cell (disjoint cells)")
    support = gumbel_top(eps_pick * np.abs(sums) / (2.0 * bound), m, rng)  # Gumbel-top-m
    picked = np.take_along_axis(sums, support, axis=1)
    noisy = np.asarray(laplace(picked, sensitivity=min(m, s) * bound, eps=eps_value, rng=rng,
                               ledger=node, name="values",
                               note="ℓ1 sensitivity min(m, s)·Λ∞ over the selected coordinates"))
    centers = np.zeros((k, d))
    np.put_along_axis(centers, support, noisy / np.maximum(noisy_counts, 1.0)[:, None], axis=1)
    centers = np.clip(centers, -bound, bound)
    return SparseRecovery(centers=centers, support=support, noisy_counts=noisy_counts)
