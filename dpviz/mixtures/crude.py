"""The crude stage of the univariate learner: a private histogram of sorted gaps.

Ashtiani, Majid, Narayanan (NeurIPS 2024), §2.2 and App. F (Algorithm 3, Lemmas F.2–F.6). Sort the
points; each gap y_{j+1} − y_j > 0 goes to bucket (a, b) with scale 2^b ≤ gap < 2^{b+1} and location
a = ⌊y_j / (2^b·n)⌋ (a cell whose width grows with the scale, so one scale has at most two cells
over [μ − σ, μ + σ]); Truncated-Laplace noise on each non-empty bucket; the buckets whose noisy
count reaches T > A are the crude candidates. No a-priori bound on the means or the scales.

Our choices where the paper's text is missing ([O] in the seed note): the cell width
2^b·n_declared, the threshold T = τ·A (τ = 2 by default), and the calibration below.

Privacy (one row, add/remove): adding a point y splits at most one gap into two (or adds one gap
at an end), so at most 3 bucket counts move by 1 each (L1 ≤ 3). Each unit move of one count is
(ε/3, δ_u)-DP under TLap(1, ε/3, δ_u); three chained moves give (ε, δ_u·(1 + e^{ε/3} + e^{2ε/3}))
(group privacy), so δ_u = δ / (1 + e^{ε/3} + e^{2ε/3}). Noise on empty buckets is never drawn: an
empty bucket's noisy count is at most A < T, so it could never be released (Lemma F.2); the output
equals that of noising every bucket of ℤ² and thresholding. The paper's neighbours replace a row
(Def. 1.2), which moves 6 counts; ours add or remove one, which moves 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz.mixtures.tlap import tlap_bound, tlap_noise
from dpviz.privacy.accounting import group_privacy_dp
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger

#: Counts one added or removed row can move (each by one): Lemma F.5 for add/remove.
GAP_L1_SENSITIVITY = 3


@dataclass(frozen=True)
class GapHistogram:
    """The non-empty buckets of the gap histogram (NOT private: true counts).

    ``scale`` b and ``loc`` a index the bucket; ``width`` = 2^b·n_declared is its location cell.
    """

    scale: np.ndarray
    loc: np.ndarray
    count: np.ndarray
    n_declared: int

    @property
    def width(self) -> np.ndarray:
        return np.ldexp(float(self.n_declared), self.scale)


def gap_histogram(y_sorted: np.ndarray, n_declared: int) -> GapHistogram:
    """Bucket the positive gaps of sorted data (Alg. 3, steps 1–4). Zero gaps go to no bucket."""
    gaps = np.diff(y_sorted)
    keep = gaps > 0
    gaps, left = gaps[keep], y_sorted[:-1][keep]
    # frexp: gap = m·2^e with m ∈ [0.5, 1), so 2^(e−1) ≤ gap < 2^e exactly (no log rounding).
    _, e = np.frexp(gaps)
    b = e.astype(np.int64) - 1
    a = np.floor(left / np.ldexp(float(n_declared), b)).astype(np.int64)
    if b.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return GapHistogram(empty, empty, empty, n_declared)
    order = np.lexsort((a, b))
    b, a = b[order], a[order]
    start = np.flatnonzero(np.concatenate([[True], (b[1:] != b[:-1]) | (a[1:] != a[:-1])]))
    count = np.diff(np.append(start, b.size))
    return GapHistogram(b[start], a[start], count.astype(np.int64), n_declared)


@dataclass(frozen=True)
class CrudeCalibration:
    """TLap parameters per unit change and the threshold for an (ε, δ)-DP histogram."""

    eps_unit: float
    delta_unit: float
    bound: float  # A: the sure bound on |noise|
    threshold: float  # T = τ·A > A

    @property
    def guarantee(self) -> ApproxDP:
        """The (ε, δ) this calibration gives for one added/removed row (group privacy over 3 moves)."""
        return group_privacy_dp(ApproxDP(self.eps_unit, self.delta_unit), GAP_L1_SENSITIVITY)


def calibrate_crude(eps: float, delta: float, threshold_factor: float) -> CrudeCalibration:
    """ε_u = ε/3, δ_u = δ/Σ_{i<3} e^{iε/3}; A = tlap_bound(1, ε_u, δ_u); T = τ·A."""
    s = GAP_L1_SENSITIVITY
    eps_u = eps / s
    delta_u = delta / sum(math.exp(i * eps_u) for i in range(s))
    a = tlap_bound(1.0, eps_u, delta_u)
    return CrudeCalibration(eps_u, delta_u, a, threshold_factor * a)


@dataclass(frozen=True)
class CrudeStage:
    """The crude stage's output.

    Released: ``passed`` buckets (``scale``, ``loc``, ``noisy`` restricted to ``passed``) and the
    calibration. NOT released: ``hist`` (true counts of every non-empty bucket) and the noisy counts
    of the buckets below T (which buckets are non-empty is itself private).
    """

    hist: GapHistogram
    noisy: np.ndarray
    passed: np.ndarray
    calibration: CrudeCalibration


def crude_stage(
    y: np.ndarray,
    *,
    eps: float,
    delta: float,
    n_declared: int,
    threshold_factor: float,
    rng: np.random.Generator,
    ledger: Ledger,
) -> CrudeStage:
    """Alg. 3 steps 1–5: sorted gaps, noisy bucket counts, threshold. Records an (ε, δ)-DP spend."""
    hist = gap_histogram(np.sort(y), n_declared)
    cal = calibrate_crude(eps, delta, threshold_factor)
    g = cal.guarantee
    if g.eps > eps * (1 + 1e-12) or g.delta > delta * (1 + 1e-9):
        raise RuntimeError(f"crude stage calibration {g} exceeds its budget (ε={eps}, δ={delta}): a bug.")
    noisy = hist.count + tlap_noise(hist.count.size, sensitivity=1.0, eps=cal.eps_unit,
                                    delta=cal.delta_unit, rng=rng)
    ledger.record(
        "gap histogram", "truncated_laplace", ApproxDP(eps, delta), sensitivity=GAP_L1_SENSITIVITY,
        noise_scale=1.0 / cal.eps_unit,
        note=(f"TLap(1, ε/3, δ_u) per non-empty bucket, |noise| ≤ A = {cal.bound:.4g}, "
              f"T = {cal.threshold:.4g}; 3 unit moves per row → group privacy "
              "(AMN24 Lemmas F.5–F.6, add/remove)"),
    )
    return CrudeStage(hist, noisy, noisy >= cal.threshold, cal)


@dataclass(frozen=True)
class CrudeGroup:
    """Passed buckets that describe one component (post-processing of released values).

    ``mean`` and ``sd`` are our crude point estimates [O]: the count-weighted location (finer cells
    weigh more) and σ̂ = n̂·2^{b̄+½}/e^{0.84}, from E[ln gap] = ln(σ/n) + ln√(2π) − γ + ½ for
    Gaussian data. ``n_hat`` is the sum of the group's noisy counts.
    """

    mean: float
    sd: float
    n_hat: float
    lo: float
    hi: float
    buckets: np.ndarray  # indices into the passed buckets

#: e^{ln√(2π) − γ + ½}: mean gap of Gaussian data in units of σ/n (see CrudeGroup).
_GAP_CONSTANT = math.exp(0.5 * math.log(2 * math.pi) - 0.5772156649015329 + 0.5)


def group_candidates(stage: CrudeStage, max_scale_diff: int = 2) -> list[CrudeGroup]:
    """Greedy, non-transitive grouping of passed buckets (post-processing) [O].

    The bucket with the largest noisy count seeds a group; every remaining bucket whose scale is
    within ``max_scale_diff`` octaves of the seed's and whose cell meets the seed's cell joins it;
    repeat. Comparing with the seed only (not transitively) keeps one component's tail buckets,
    whose cells widen with the scale, from chaining distinct components together.
    """
    idx = np.flatnonzero(stage.passed)
    b = stage.hist.scale[idx]
    w = stage.hist.width[idx]
    lo = stage.hist.loc[idx] * w
    hi = lo + w
    c = np.maximum(stage.noisy[idx], 0.0)
    free = np.ones(idx.size, dtype=bool)
    groups = []
    for s in np.argsort(-c, kind="stable"):  # a loop over passed buckets (few), not over points
        if not free[s]:
            continue
        m = free & (np.abs(b - b[s]) <= max_scale_diff) & (lo <= hi[s]) & (lo[s] <= hi)
        free &= ~m
        n_hat = float(c[m].sum())
        bbar = float(np.sum(c[m] * b[m]) / n_hat)
        prec = c[m] / w[m]
        mean = float(np.sum(prec * (lo[m] + hi[m]) / 2) / prec.sum())
        sd = n_hat * 2.0 ** (bbar + 0.5) / _GAP_CONSTANT
        groups.append(CrudeGroup(mean, sd, n_hat, float(lo[m].min()), float(hi[m].max()), idx[m]))
    return groups


def found_components(
    groups: list[CrudeGroup], means: np.ndarray, sds: np.ndarray, G: float = 10.0
) -> np.ndarray:
    """Which true components (μ_i, σ_i) some group approximates crudely (simulation diagnostic).

    The crude criterion of AMN24 §2.1 in 1-D with our G: σ̂/G ≤ σ_i ≤ G·σ̂ and |μ_i − μ̂| ≤ G·σ̂.
    The paper allows G = poly(n); G = 10 is much stricter.
    """
    found = np.zeros(len(means), dtype=bool)
    for g in groups:
        found |= (sds >= g.sd / G) & (sds <= g.sd * G) & (np.abs(np.asarray(means) - g.mean) <= G * g.sd)
    return found
