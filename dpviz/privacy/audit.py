"""An empirical privacy audit: a lower bound on ε from a threshold distinguisher.

Run a mechanism many times on two neighbouring datasets D and D′ (one row added), count how often
an event S (e.g. "a statistic of the output exceeds τ") happens on each, and bound the two
probabilities with Clopper–Pearson intervals. Any (ε, δ)-DP mechanism has
P_D′[S] ≤ e^ε·P_D[S] + δ, so with confidence 1 − α

    ε ≥ ln((p̲_D′ − δ) / p̄_D)

where p̲ is the lower and p̄ the upper Clopper–Pearson bound (each at level α/2). A lower bound
above the claimed ε is evidence of a bug; one below it proves nothing (audits are not proofs).

References: Jagielski, Ullman, Oprea 2020 ("Auditing differentially private machine learning",
§3, Clopper–Pearson); Ding et al. 2018 ("Detecting violations of differential privacy").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import beta as beta_dist

from dpviz._validation import check_scalar


def clopper_pearson(hits: int, runs: int, alpha: float) -> tuple[float, float]:
    """The exact two-sided (1 − α) Clopper–Pearson interval for a binomial proportion."""
    hits = check_scalar(hits, "hits", "clopper_pearson", low=0, high=runs, integer=True)
    alpha = check_scalar(alpha, "alpha", "clopper_pearson", low=0.0, high=1.0, low_open=True,
                         high_open=True)
    lo = 0.0 if hits == 0 else float(beta_dist.ppf(alpha / 2, hits, runs - hits + 1))
    hi = 1.0 if hits == runs else float(beta_dist.ppf(1 - alpha / 2, hits + 1, runs - hits))
    return lo, hi


@dataclass(frozen=True)
class AuditBound:
    """ε lower bound of one event S in one direction (D′ over D, or D over D′)."""

    eps_lower: float
    hits_d: int
    hits_d_prime: int
    runs: int


def eps_lower_bound(hits_d: int, hits_d_prime: int, runs: int, *, delta: float = 0.0,
                    alpha: float = 0.05) -> AuditBound:
    """max over both directions of ln((p̲_a − δ)/p̄_b), with confidence 1 − α (0 if none > 0).

    α is split over the two directions (Bonferroni), each using a two-sided (1 − α/2) interval.
    """
    best = 0.0
    for a, b in ((hits_d_prime, hits_d), (hits_d, hits_d_prime)):
        lo_a, _ = clopper_pearson(a, runs, alpha / 2)
        _, hi_b = clopper_pearson(b, runs, alpha / 2)
        if lo_a - delta > 0 and hi_b > 0:
            best = max(best, math.log((lo_a - delta) / hi_b))
    return AuditBound(best, hits_d, hits_d_prime, runs)
