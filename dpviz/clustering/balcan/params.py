"""Parameters of Balcan et al.'s private clustering: the two profiles and the resolved constants.

**theory** follows the algorithm boxes (Alg. 1–4): p = ⌈8 ln n⌉, T₂ = ⌈27k ln(n/δ)⌉ shifts,
ε′ = ε_call/(2 log₂ n), γ = (20/ε′)·ln(n/δ_call), T₃ = ⌈100k ln(n/δ)⌉, T₄ = ⌈2 ln(1/δ)⌉ trials with the
box's split (ε/6T₄ candidate, ε/6T₄ local search, ε/24T₄ counts, ε/24T₄ sums, ε/3 final selection).
At any realistic n, γ ≫ n and no cube ever splits (note §8.2): the teaching point of this profile.

**practical** is the note's §8.2 recommendation, sound and pure ε-DP: p = max(2, ⌊ln(n)/2⌋), a few
shifts, a capped depth, γ = γ_mult·ln(n)/ε′, T₃ = 20, one trial, private Lloyd refinement (§7),
with an editable split. Every constant is a function of public inputs only (n_declared, d, k, ε, Λ).

δ here is ``beta``: the failure probability of the UTILITY statements. It is not a privacy parameter
(the algorithm is pure ε-DP; note §1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dpviz.registry import check_hinted, hint

PROFILES = ("practical", "theory")
RECOVERIES = ("dense", "sparse")

#: Names of the budget parts, in pipeline order.
PARTS = ("candidate", "local_search", "counts", "sums", "refine")


#: Automatic rows per local-search step (practical profile) [OURS]: each step's exponential
#: mechanism scores a Poisson subsample of this expected size at the amplified ε (localsearch.py).
AUTO_LS_ROWS = 20_000


@dataclass(frozen=True)
class BalcanParams:
    """The knobs of :func:`~dpviz.clustering.balcan.balcan_kmeans` (0 means "profile default")."""

    profile: str = field(default="practical", metadata=hint(
        choices=PROFILES,
        help="theory: the paper's constants (γ ≫ n: nothing splits); practical: sound defaults"))
    T3: int = field(default=0, metadata=hint(low=0, high=20000, step=1,
                                              help="local-search steps T₃ (0 = profile default)"))
    p: int = field(default=0, metadata=hint(low=0, high=128, step=1, help="JL dimension (0 = auto)"))
    shifts: int = field(default=0, metadata=hint(low=0, high=5000, step=1,
                                                  help="random shifts of Alg. 2 (0 = profile default)"))
    rounds: int = field(default=0, metadata=hint(low=0, high=30, step=1,
                                                  help="partition depth (0 = profile default)"))
    gamma_mult: float = field(default=1.0, metadata=hint(
        low=0.1, high=20.0, help="practical γ = γ_mult·ln(n)/ε′ (theory uses the paper's γ)"))
    max_candidates: int = field(default=400, metadata=hint(
        low=0, high=20000, step=1, help="public cap on |C|: a uniform subsample (0 = no cap)"))
    ls_rows: int = field(default=0, metadata=hint(
        low=0, high=10_000_000, step=1, label="local-search rows",
        help="expected rows each local-search step scores (a fresh Poisson subsample, amplified back "
             "to the step's ε); 0 = automatic: 20 000 (practical) or all rows (theory)"))
    n_lloyd: int = field(default=1, metadata=hint(low=0, high=20, step=1,
                                                   help="private Lloyd refinement steps (practical)"))
    candidate: float = field(default=0.3, metadata=hint(low=0.0, high=1.0, help="ε share: candidate set"))
    local_search: float = field(default=0.1, metadata=hint(low=0.0, high=1.0, help="ε share: local search"))
    counts: float = field(default=0.03, metadata=hint(low=0.0, high=1.0, help="ε share: noisy counts"))
    sums: float = field(default=0.22, metadata=hint(low=0.0, high=1.0, help="ε share: noisy sums"))
    refine: float = field(default=0.35, metadata=hint(low=0.0, high=1.0, help="ε share: Lloyd refinement"))
    recovery: str = field(default="dense", metadata=hint(
        choices=RECOVERIES, help="sparse: Alg. 5 (rows s-sparse, |x_r| ≤ Λ∞ = Λ/√s)"))
    sparse_s: int = field(default=10, metadata=hint(low=1, high=10000, step=1, help="sparsity s (Alg. 5)"))
    sparse_eta: float = field(default=0.25, metadata=hint(low=0.01, high=1.0, help="accuracy η (Alg. 5)"))
    beta: float = field(default=0.1, metadata=hint(
        low=1e-6, high=0.5, help="utility failure probability δ of the paper (not privacy)"))

    def __post_init__(self) -> None:
        func = "BalcanParams"
        check_hinted(self, func)
        total = sum(getattr(self, n) for n in PARTS)
        if total > 1.0 + 1e-12:
            parts = ", ".join(f"{n}={getattr(self, n):g}" for n in PARTS)
            raise ValueError(f"The ε shares of {func} must sum to at most 1. Got {total:g} ({parts}).")
        if self.profile == "practical" and (self.candidate <= 0 or self.local_search <= 0
                                            or self.counts <= 0 or self.sums <= 0):
            raise ValueError(f"The ε shares candidate, local_search, counts and sums of {func} must be "
                             "positive (each step releases something).")
        if self.profile == "practical" and self.n_lloyd > 0 and self.refine <= 0:
            raise ValueError(f"n_lloyd={self.n_lloyd} refinement steps need a positive 'refine' share "
                             f"in {func}; set refine > 0 or n_lloyd = 0.")


@dataclass(frozen=True)
class BalcanConfig:
    """Every constant of one run, resolved from public inputs (n_declared, d, k, ε, Λ) and the params.

    ``eps_*`` are per-trial budgets; ``eps_select`` the final selection over trials (theory).
    """

    profile: str
    n_declared: int
    d: int
    k: int
    epsilon: float
    p: int
    trials: int
    shifts: int
    rounds: int
    eps_level: float
    gamma: float
    T3: int
    max_candidates: int
    n_lloyd: int
    eps_candidate: float
    eps_local_search: float
    eps_counts: float
    eps_sums: float
    eps_refine: float
    eps_select: float
    eps_reserved: float
    notes: tuple[str, ...]
    ls_rate: float = 1.0  # Poisson rate of the local search's row subsample (public: from n_declared)

    def per_shift(self) -> float:
        return self.eps_candidate / self.shifts


def resolve_config(params: BalcanParams, *, n_declared: int, d: int, k: int, epsilon: float) -> BalcanConfig:
    """The constants of a run (public inputs only). Overrides of 0 take the profile's value."""
    n = max(n_declared, 3)
    beta = params.beta
    notes: list[str] = []
    if params.profile == "theory":
        p = params.p or math.ceil(8 * math.log(n))
        trials = max(1, math.ceil(2 * math.log(1 / beta)))
        shifts = params.shifts or math.ceil(27 * k * math.log(n / beta))
        rounds = params.rounds or max(1, math.floor(math.log2(n)))
        T3 = params.T3 or math.ceil(100 * k * math.log(n / beta))
        eps_cand = epsilon / (6 * trials)
        eps_call = eps_cand / shifts
        eps_level = eps_call / (2 * math.log2(n))  # Alg. 1: ε′ = ε/(2 log n), log₂ as the depth
        gamma = 20.0 / eps_level * math.log(n * shifts / beta)  # Alg. 2 passes δ/T to Alg. 1
        eps_ls = epsilon / (6 * trials)
        eps_counts = eps_sums = epsilon / (24 * trials)
        eps_select = epsilon / 3 if trials > 1 else 0.0
        eps_refine = 0.0
        n_lloyd = 0
        used = trials * (eps_cand + eps_ls + eps_counts + eps_sums) + eps_select
        notes.append(f"theory: γ = {gamma:.3g} vs n = {n_declared}: a cube splits only if its noisy count "
                     f"exceeds γ, so {'nothing splits' if gamma > n_declared else 'some cubes may split'}.")
        if params.shifts or params.T3 or params.p or params.rounds:
            notes.append("theory profile with overrides (shifts/T3/p/rounds): not the paper's constants.")
    else:
        p = params.p or max(2, min(12, math.floor(math.log(n) / 2)))
        trials = 1
        shifts = params.shifts or min(k, 3)
        rounds = params.rounds or max(1, min(math.floor(math.log2(n)), 8))
        T3 = params.T3 or 20
        eps_cand = params.candidate * epsilon
        eps_level = eps_cand / (shifts * rounds)
        gamma = params.gamma_mult * math.log(n) / eps_level
        eps_ls = params.local_search * epsilon
        eps_counts = params.counts * epsilon
        eps_sums = params.sums * epsilon
        n_lloyd = params.n_lloyd
        eps_refine = params.refine * epsilon if n_lloyd else 0.0
        eps_select = 0.0
        used = eps_cand + eps_ls + eps_counts + eps_sums + eps_refine
    return BalcanConfig(
        profile=params.profile, n_declared=n_declared, d=d, k=k, epsilon=epsilon, p=p, trials=trials,
        shifts=shifts, rounds=rounds, eps_level=eps_level, gamma=gamma, T3=T3,
        max_candidates=params.max_candidates,
        n_lloyd=n_lloyd, eps_candidate=eps_cand, eps_local_search=eps_ls, eps_counts=eps_counts,
        eps_sums=eps_sums, eps_refine=eps_refine, eps_select=eps_select,
        eps_reserved=max(0.0, epsilon - used), notes=tuple(notes),
        ls_rate=min(1.0, (params.ls_rows or (AUTO_LS_ROWS if params.profile == "practical" else n))
                    / n),
    )
