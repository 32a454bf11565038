"""Easy Instances: the derived quantities (m, ε₁, ε₂, τ₁, τ₂, ℓ, n_min, L, ε_avg, t₀) from public
inputs only and the budget splits (the ledger's (ε, δ) total is
:func:`dpviz.privacy.accounting.dp_total`).

Every constant carries the tag of the engineer's note (``/work/shared/papers/seed-easy-instances.md``):
[S] stated in the seed, [S-skel] step structure stated with the symbols restored, [D] derived by us
(sound, not necessarily the paper's constant), [R] recalled from the literature, [OURS] a dpviz
default. The seed dump lost almost every formula, so most constants here are [D] or [OURS].

References
----------
Cohen, Kaplan, Mansour, Stemmer, Tsfadia. Differentially-Private Clustering of Easy Instances.
ICML 2021 (arXiv 2112.14445), §4.1–4.4 and App. A.1; note §4–5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from scipy.optimize import brentq
from scipy.stats import chi2, norm

from dpviz.privacy.accounting import advanced_step_eps  # the composition arithmetic: privacy's
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_sigma_dp

#: Tuple-relation steps per row. One row added or removed changes exactly one of the t tuples
#: (rows are assigned to pieces independently, ``dpviz.clustering.tuples.assign_pieces``), and t
#: is public, so the tuple database sees ONE replacement: exactly the replace-one neighbouring
#: relation on a fixed number of tuples under which CKM+21 prove Thm 4.1/4.4 [S-skel, note §1].
#: FriendlyCore's tuple stage is add/remove, where a replacement is two steps; the CKM+21
#: statements are already replace-one, so no group privacy is needed here. Set to 2 to account
#: as FriendlyCore does (more conservative; `calibrate`/`guarantee` follow it).
TUPLE_STEPS_PER_ROW = 1

#: Upper end of the search for the minimal number of tuples (larger t counts as infeasible).
T_SEARCH_MAX = 10**13


# ----------------------------------------------------------------------------- accounting


def reserve(ledger: Ledger, name: str, budget: ApproxDP, note: str) -> None:
    """Record an unspent share (a branch that did not run), so every branch totals the same."""
    if budget.eps > 0 or budget.delta > 0:
        ledger.record(name, "reserved", budget, note=note)


# ----------------------------------------------------------------------------- the test


@dataclass(frozen=True)
class PartitionPlan:
    """PrivateTestPartition's derived quantities (note §4.2), all from public inputs.

    Attributes
    ----------
    t : number of tuples (public) · eps_s, eps_T, eps_Q : status budget and its two halves [OURS]
    delta0 : the near-partition failure probability δ₀ · beta : the test's confidence
    gamma : ball scale γ (r_i = γ·min_{j≠i}‖y_i − y_j‖) [D]
    m : size of the sample Q, smallest with m·ε₂(m) ≥ ln(2/(βδ₀)) [D]; None if no m ≤ t works
    eps1 = ε_T/m : Laplace budget per ℓ̂_Y [D] · eps2 = ln(1 + (t/m)(e^{ε_Q} − 1)) [D, WOR subsampling]
    tau1 = ln(2m/β)/ε₁ [D] · tau2 = m − ln(2/β)/ε₂ [D]
    ell = (ln(2m/β) + ln(m/δ₀))/ε₁ : the "ℓ" of §4.2.1 [D]
    """

    t: int
    eps_s: float
    eps_T: float  # noqa: N815 (paper notation)
    eps_Q: float  # noqa: N815 (paper notation)
    delta0: float
    beta: float
    gamma: float
    m: int | None
    eps1: float
    eps2: float
    tau1: float
    tau2: float
    ell: float

    @property
    def feasible(self) -> bool:
        """t ≥ 2ℓ + 2 (a tuple common to neighbours is partitioned by both B, B′; Thm 4.1/4.4 [D])."""
        return self.m is not None and self.t >= 2.0 * self.ell + 2.0


def eps2_of(m: int, t: int, eps_Q: float) -> float:
    """ε₂(m) = ln(1 + (t/m)(e^{ε_Q} − 1)): Laplace budget on q that sampling m of t tuples without
    replacement amplifies to ε_Q (Balle, Barthe & Gaboardi 2018, substitution relation) [D/R]."""
    a = t / m
    if eps_Q < 30.0:
        return math.log1p(a * math.expm1(eps_Q))
    return eps_Q + math.log(a) + math.log1p((1.0 - a) * math.exp(-eps_Q) / a)  # same, no overflow


def partition_plan(t: int, *, eps_s: float, delta0: float, beta: float, gamma: float,
                   q_share: float = 0.5) -> PartitionPlan:
    """The test's constants for t tuples (note §4.2). ``q_share`` of ε_s goes to ε_Q (the count q
    over the sample Q), the rest to ε_T (the m counts ℓ̂_Y); the note's split is ε_T = ε_Q = ε_s/2
    [OURS]. A smaller ε_Q makes the sample m larger (m·ε₂(m) ≥ ln(2/(βδ₀))) but ε₁ = ε_T/m larger
    per tuple, so n_min = ⌈2ℓ + 2⌉ can fall: :func:`auto_noisy_centers` picks the share."""
    eps_Q = q_share * eps_s
    eps_T = eps_s - eps_Q
    target = math.log(2.0 / (beta * delta0))
    m: int | None
    if t * eps2_of(t, t, eps_Q) < target:
        m = None
    else:  # m·ε₂(m) is increasing in m: bisection for the smallest m ∈ [1, t]
        lo, hi = 1, t
        while lo < hi:
            mid = (lo + hi) // 2
            if mid * eps2_of(mid, t, eps_Q) >= target:
                hi = mid
            else:
                lo = mid + 1
        m = lo
    if m is None:
        return PartitionPlan(t, eps_s, eps_T, eps_Q, delta0, beta, gamma, None, math.nan, math.nan,
                        math.nan, math.nan, math.inf)
    eps1 = eps_T / m
    eps2 = eps2_of(m, t, eps_Q)
    tau1 = math.log(2.0 * m / beta) / eps1
    tau2 = m - math.log(2.0 / beta) / eps2
    ell = (math.log(2.0 * m / beta) + math.log(m / delta0)) / eps1
    return PartitionPlan(t, eps_s, eps_T, eps_Q, delta0, beta, gamma, m, eps1, eps2, tau1, tau2, ell)


def minimal_t(feasible: callable, t_max: int = T_SEARCH_MAX) -> int | None:
    """Smallest t with ``feasible(t)``, for a predicate that stays true once true (doubling, then
    bisection). None when even ``t_max`` is infeasible."""
    hi = 2
    while not feasible(hi):
        if hi >= t_max:
            return None
        hi = min(hi * 2, t_max)
    lo = max(hi // 2, 1)
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


# ----------------------------------------------------------------------------- splits


@dataclass(frozen=True)
class NoisyCentersSplit:
    """PrivatekNoisyCenters' budget split (note §5.3) [OURS]: test ε/2, log-Laplace on λ ε/4 with
    event slack δ_E = δ/32, Gaussian centers (ε/4, δ/8); β/2 to the test. The near-partition event
    gets ``event`` = (1+e)/8 of δ, i.e. δ₀ = event·δ/(1 + e^ε): the note's δ₀ = δ/8 at ε = 1, and
    never more than δ at any ε (the note's fixed δ/8 would exceed δ once ε > 2)."""

    test: float = 0.5
    lam: float = 0.25
    gauss: float = 0.25
    event: float = (1.0 + math.e) / 8.0
    delta_E: float = 1.0 / 32.0  # noqa: N815 (paper notation)
    delta_G: float = 1.0 / 8.0  # noqa: N815 (paper notation)
    q_share: float = 0.5  # ε_Q = q_share·ε_s, ε_T the rest (note §4.2: ½) [OURS]


@dataclass(frozen=True)
class AveragesSplit:
    """PrivatekAverages' budget split (note §5.3) [OURS]: test ε/2; k × AvgRd (ε/2, δ/2); the
    near-partition event (1+e)/8 of δ (δ₀ = δ/8 at ε = 1, as :class:`NoisyCentersSplit`)."""

    test: float = 0.5
    avg: float = 0.5
    event: float = (1.0 + math.e) / 8.0
    delta_A: float = 0.5  # noqa: N815 (paper notation)


def delta0_of(eps_total: float, event_delta: float) -> float:
    """δ₀ such that the §4.2.1 claim's conditioning costs ``event_delta`` = (1 + e^{ε_s+ε_A})·δ₀
    [D, note §4.2 "our accounting"]."""
    return event_delta / (1.0 + math.exp(min(eps_total, 700.0)))


@dataclass(frozen=True)
class NoisyCentersPlan:
    """Derived quantities of PrivatekNoisyCenters (note §4.5) from public inputs.

    Attributes
    ----------
    test : PartitionPlan · k : int · eps, delta : the k-tuple algorithm's own budget
    eps_lam = split.lam·ε, delta_E · eps_G, delta_G
    delta_log = ln((1+2γ)/(1−2γ)) : log-ratio bound of λ_i between neighbours [D, Eq. (5)]
    b = k·Δ_log/ε_λ : Laplace scale on ln λ_i [D] · kappa = exp(b·ln(k/(2δ_E))) [D]
    event_delta = (1 + e^ε)·δ₀ [D] · n_min : smallest t with t ≥ 2ℓ(t) + 2 [D]
    """

    test: PartitionPlan
    k: int
    eps: float
    delta: float
    eps_lam: float
    delta_E: float  # noqa: N815 (paper notation)
    eps_G: float  # noqa: N815 (paper notation)
    delta_G: float  # noqa: N815 (paper notation)
    delta_log: float
    b: float
    kappa: float
    event_delta: float
    n_min: int | None

    @property
    def feasible(self) -> bool:
        """t ≥ n_min, and a finite κ (γ small enough that the noise bound does not overflow)."""
        return self.test.feasible and math.isfinite(self.kappa)

    @property
    def reserved_delta(self) -> float:
        return self.delta - self.event_delta - self.delta_E - self.delta_G


def noisy_centers_plan(t: int, k: int, *, eps: float, delta: float, beta: float, gamma: float,
                       split: NoisyCentersSplit | None = None) -> NoisyCentersPlan:
    """PrivatekNoisyCenters' constants; raises ValueError for γ ∉ (0, 1/2)."""
    split = split or NoisyCentersSplit()
    if not 0.0 < gamma < 0.5:
        raise ValueError(f"PrivatekNoisyCenters needs γ in (0, 1/2) (balls disjoint, Δ_log finite). "
                         f"Got {gamma}.")

    event = split.event * delta
    delta0 = delta0_of(eps * (split.test + split.lam + split.gauss), event)

    def tp(tt: int) -> PartitionPlan:
        return partition_plan(tt, eps_s=split.test * eps, delta0=delta0, beta=beta / 2.0, gamma=gamma,
                              q_share=split.q_share)

    eps_lam, delta_E = split.lam * eps, split.delta_E * delta
    delta_log = math.log((1.0 + 2.0 * gamma) / (1.0 - 2.0 * gamma))
    b = k * delta_log / eps_lam
    log_kappa = b * math.log(k / (2.0 * delta_E))
    kappa = math.exp(log_kappa) if log_kappa < 709.0 else math.inf  # overflow: infeasible γ
    n_min = minimal_t(lambda tt: tp(tt).feasible)
    return NoisyCentersPlan(tp(t), k, eps, delta, eps_lam, delta_E, split.gauss * eps,
                            split.delta_G * delta, delta_log, b, kappa, event, n_min)


@dataclass(frozen=True)
class AveragesPlan:
    """Derived quantities of PrivatekAverages (note §4.3–4.4) from public inputs.

    Attributes
    ----------
    test : PartitionPlan · k, d : int · eps, delta : own budget · radius Λ, r_min : grid [S-skel]
    L = 2k(2ℓ+1) : group-size bound Σℓ_i [D] · eps_A, delta_A : averaging share [OURS]
    eps_avg = ε_A/L, delta_avg = δ_A/(L·e^{ε_A}) : each AvgRd call [D]
    delta_hat = δ_avg/2 : advanced-composition slack over d axes [OURS] · delta_c = δ_avg/(2d)
    eps_c : per-axis budget (max of basic and advanced composition) [D/OURS]
    eps_bs = ε_c/2 : BoundingSegment per axis, two InteriorPoints at ε_c/4 [S-skel/D]
    eps_gauss = ε_c/2 : Gaussian per axis (with δ_c) [S-skel]
    grid_size |G| = ⌊2Λ/r_min⌋ + 1 [S-skel] · beta_bs = β/(4kd) [D]
    t0 = ⌈(8/ε_bs)·ln(4|G|/β_bs)⌉ : points per end of BoundingSegment [D]
    event_delta : (1 + e^ε)·δ₀ [D] · n_min : smallest t with t ≥ max(2ℓ+2, 2t₀) [D]
    """

    test: PartitionPlan
    k: int
    d: int
    eps: float
    delta: float
    radius: float
    r_min: float
    L: float
    eps_A: float  # noqa: N815 (paper notation)
    delta_A: float  # noqa: N815 (paper notation)
    eps_avg: float
    delta_avg: float
    delta_hat: float
    delta_c: float
    eps_c: float
    eps_bs: float
    eps_gauss: float
    grid_size: int
    beta_bs: float
    t0: int
    event_delta: float
    n_min: int | None

    @property
    def feasible(self) -> bool:
        return self.test.feasible and self.test.t >= 2 * self.t0

    @property
    def reserved_delta(self) -> float:
        return self.delta - self.event_delta - self.delta_A


def _averages_core(t: int, k: int, d: int, eps: float, delta: float, beta: float, gamma: float,
                   radius: float, r_min: float, split: AveragesSplit) -> AveragesPlan:
    event = split.event * delta
    delta0 = delta0_of(eps * (split.test + split.avg), event)
    tp = partition_plan(t, eps_s=split.test * eps, delta0=delta0, beta=beta / 2.0, gamma=gamma)
    eps_A, delta_A = split.avg * eps, split.delta_A * delta
    L = 2.0 * k * (2.0 * math.ceil(tp.ell) + 1.0) if math.isfinite(tp.ell) else math.inf
    eps_avg = eps_A / L
    delta_avg = delta_A / (L * math.exp(min(eps_A, 700.0)))
    delta_hat = delta_avg / 2.0
    delta_c = delta_avg / (2.0 * d)
    eps_c = advanced_step_eps(eps_avg, d, delta_hat) if eps_avg > 0 else 0.0
    grid = math.floor(2.0 * radius / r_min + 1e-9) + 1
    beta_bs = beta / (4.0 * k * d)
    eps_bs = eps_c / 2.0
    t0 = math.ceil((8.0 / eps_bs) * math.log(4.0 * grid / beta_bs)) if eps_bs > 0 else 2**62
    return AveragesPlan(tp, k, d, eps, delta, radius, r_min, L, eps_A, delta_A, eps_avg, delta_avg,
                        delta_hat, delta_c, eps_c, eps_bs, eps_c / 2.0, grid, beta_bs, t0, event, None)


def averages_plan(t: int, k: int, d: int, *, eps: float, delta: float, beta: float, gamma: float,
                  radius: float, r_min: float, split: AveragesSplit | None = None) -> AveragesPlan:
    """PrivatekAverages' constants; γ must be < 1/6 (balls ≥ 6-far, Prop 3.1a) [D]."""
    split = split or AveragesSplit()
    if not 0.0 < gamma < 1.0 / 6.0:
        raise ValueError(f"PrivatekAverages needs γ in (0, 1/6) (Prop 3.1a needs 6-far balls). Got {gamma}.")
    n_min = minimal_t(lambda tt: _averages_core(tt, k, d, eps, delta, beta, gamma, radius, r_min,
                                                split).feasible)
    core = _averages_core(t, k, d, eps, delta, beta, gamma, radius, r_min, split)
    return AveragesPlan(**{**core.__dict__, "n_min": n_min})


# ----------------------------------------------------------------------------- automatic settings


#: A tuple's piece must hold at least this many rows per cluster for the oracle to see every
#: cluster (the bench's smallest s is 2k) [OURS].
MIN_ROWS_PER_CLUSTER = 2

#: The automatic split's search grid [OURS]: test share, log-Laplace share (the Gaussian gets the
#: rest, at least 0.1) and ε_Q's share of the test.
AUTO_TEST_SHARES = (0.2, 0.3, 0.4, 0.5)
AUTO_LAM_SHARES = (0.1, 0.2, 0.3, 0.4)
AUTO_Q_SHARES = (0.2, 0.3, 0.5)


def separation_ratio(k: int, d: int, beta: float) -> float:
    """Largest σ/λ for which k true centers (pairwise λ apart) stay each nearest its OWN released
    center ĉ_i = c_i + N(0, σ²I_d), with probability ≥ 1 − β/2 [D/OURS].

    For an ordered pair (i, j), ‖c_i − ĉ_j‖² − ‖c_i − ĉ_i‖² = λ² − 2⟨c_i − c_j, e_j⟩ + ‖e_j‖² − ‖e_i‖²
    has mean λ² and variance 4λ²σ² + 4dσ⁴; a normal quantile z at β/(2k(k−1)) (union bound over
    the ordered pairs) gives 4z²(r² + d r⁴) ≤ 1, r = σ/λ. The Voronoi split of the rows by Ĉ is
    then the true one whenever the clusters are tight against λ, which is what the private Lloyd
    step (k-means) or the per-cluster learner (GMM) needs. Public inputs only.
    """
    z = float(norm.isf(beta / 2.0 / max(k * (k - 1), 1)))
    return math.sqrt((math.sqrt(1.0 + d / (z * z)) - 1.0) / (2.0 * d))


def noise_ratio(gamma: float, k: int, eps: float, delta: float, split: NoisyCentersSplit) -> float:
    """σ_i/λ_i of PrivatekNoisyCenters at the median of the log-Laplace (η_i = ln λ_i):
    (2γ/(1−2γ))·κ·σ_G(Δ = 1, ε_G/k, δ_G/k) [D, note §4.5]; inf when κ overflows."""
    delta_log = math.log((1.0 + 2.0 * gamma) / (1.0 - 2.0 * gamma))
    log_kappa = k * delta_log / (split.lam * eps) * math.log(k / (2.0 * split.delta_E * delta))
    if log_kappa >= 709.0:
        return math.inf
    sigma1 = gaussian_sigma_dp(1.0, split.gauss * eps / k, split.delta_G * delta / k)
    return (2.0 * gamma / (1.0 - 2.0 * gamma)) * math.exp(log_kappa) * sigma1


def gamma_for_ratio(ratio: float, k: int, eps: float, delta: float, split: NoisyCentersSplit) -> float:
    """The γ at which :func:`noise_ratio` equals ``ratio`` (it is increasing in γ); 0.49 at most."""
    top = 0.49
    if noise_ratio(top, k, eps, delta, split) <= ratio:
        return top

    def f(lg: float) -> float:
        r = noise_ratio(math.exp(lg), k, eps, delta, split)
        return (math.log(r) if math.isfinite(r) else 1e3) - math.log(ratio)

    return math.exp(brentq(f, math.log(1e-12), math.log(top), xtol=1e-10))


@dataclass(frozen=True)
class AutoNoisyCenters:
    """PrivatekNoisyCenters' automatic settings from public inputs (k, d, ε, δ, β).

    Attributes
    ----------
    split : the budget split (shares and ε_Q's share of the test) · gamma : γ at ``ratio``
    t : n_min of the split (the fewest tuples that are private) · m : the test's sample size
    ratio : the σ/λ target, :func:`separation_ratio` · score : t·χ²_d(1 − τ₁/(2tk))/γ², the
    samples a tuple set needs up to the (unknown) squared separation; the split minimises it
    rows_min : MIN_ROWS_PER_CLUSTER·k·t, the declared rows below which the plan is refused
    """

    split: NoisyCentersSplit
    gamma: float
    t: int
    m: int
    ratio: float
    score: float
    rows_min: int


@lru_cache(maxsize=256)
def auto_noisy_centers(k: int, d: int, eps: float, delta: float, beta: float,
                       t_fixed: int | None = None) -> AutoNoisyCenters | None:
    """t, γ, m and the split of PrivatekNoisyCenters from public inputs [OURS, derived from note §4.5].

    For every split of a small grid: t = n_min (more tuples only shrink the fraction τ₁/t of tuples
    the test tolerates), γ the largest with noise ratio ≤ :func:`separation_ratio` (larger balls
    pass looser tuples; κ and σ grow with γ), m the smallest private sample. A tuple set passes once
    every tuple center is within γλ of the sampled tuples', i.e. s ≳ k·χ²_d(1 − τ₁/(2tk))/(γR)²
    rows per tuple for separation R (the bound of bench/easy_sample_complexity.py); the split
    minimising t·s is kept. None when no t ≤ 10¹³ is private. With ``t_fixed`` (the user's t), only
    splits private at that t compete (None if none is) and t = t_fixed.
    """
    ratio = separation_ratio(k, d, beta)
    best: AutoNoisyCenters | None = None
    grid = [NoisyCentersSplit()] + [
        NoisyCentersSplit(test=te, lam=la, gauss=1.0 - te - la, q_share=qs)
        for te in AUTO_TEST_SHARES for la in AUTO_LAM_SHARES for qs in AUTO_Q_SHARES if 1.0 - te - la >= 0.1]
    for split in grid:
        gamma = gamma_for_ratio(ratio, k, eps, delta, split)
        plan = noisy_centers_plan(2, k, eps=eps, delta=delta, beta=beta, gamma=gamma, split=split)
        if plan.n_min is None or (t_fixed is not None and plan.n_min > t_fixed):
            continue
        t = plan.n_min if t_fixed is None else t_fixed
        tp = noisy_centers_plan(t, k, eps=eps, delta=delta, beta=beta, gamma=gamma, split=split).test
        score = t * k * float(chi2.isf(tp.tau1 / (2.0 * t * k), d)) / gamma**2
        if best is None or score < best.score:
            best = AutoNoisyCenters(split, gamma, t, int(tp.m), ratio, score, MIN_ROWS_PER_CLUSTER * k * t)
    return best
