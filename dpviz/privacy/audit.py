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

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import binom

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
    best = max(_one_direction(hits_d_prime, hits_d, runs, delta, alpha),
               _one_direction(hits_d, hits_d_prime, runs, delta, alpha))
    return AuditBound(best, hits_d, hits_d_prime, runs)


def _one_direction(a: int, b: int, runs: int, delta: float, alpha: float) -> float:
    """ln((p̲_a − δ)/p̄_b) (0 if not positive), each bound a two-sided (1 − α/2) interval's: the
    bound of one direction in :func:`eps_lower_bound`; it grows with ``a`` and falls with ``b``."""
    lo_a, _ = clopper_pearson(a, runs, alpha / 2)
    _, hi_b = clopper_pearson(b, runs, alpha / 2)
    return max(0.0, math.log((lo_a - delta) / hi_b)) if lo_a - delta > 0 and hi_b > 0 else 0.0


# ----------------------------------------------------------------------------- sequential

#: How sure an early "no leak" must be that the full count would say the same (see
#: :func:`sequential_audit`): the confidence of the hit-rate bounds it extrapolates from, and the
#: tail it allows the remaining runs' hit counts.
CURTAIL_ALPHA = 1e-4
CURTAIL_GAMMA = 1e-4


@dataclass(frozen=True)
class SequentialAudit:
    """The verdict of :func:`sequential_audit`: ``leak`` when the ε lower bound at ``max_runs``
    exceeds the claim (decided early only when certain), ``runs`` per side drawn before stopping."""

    leak: bool
    eps_lower: float
    runs: int
    max_runs: int
    hits: tuple[tuple[int, int], ...]


def _worst_final(a: int, b: int, m: int, max_runs: int, gamma: float, alpha_c: float) -> tuple[int, int]:
    """Final counts (A, B) at ``max_runs`` that the remaining runs exceed (A) or fall short of (B)
    with probability ≤ ``gamma`` each, for every hit rate inside the (1 − ``alpha_c``)
    Clopper–Pearson interval of the ``m`` runs so far (a binomial's tails grow with its rate)."""
    rest = max_runs - m
    _, p_hi = clopper_pearson(a, m, alpha_c)
    p_lo, _ = clopper_pearson(b, m, alpha_c)
    return a + int(binom.ppf(1 - gamma, rest, p_hi)), b + int(binom.ppf(gamma, rest, p_lo))


def sequential_audit(hits, n_events: int, *, claim_eps: float, max_runs: int, delta: float = 0.0,
                     alpha: float = 0.05, looks: int = 8, gamma: float = CURTAIL_GAMMA,
                     alpha_c: float = CURTAIL_ALPHA) -> SequentialAudit:
    """The fixed-count audit (``max_runs`` per side, α split over the events by Bonferroni, as
    :func:`eps_lower_bound`) with curtailment: it looks after every ``max_runs / looks`` runs per
    side and stops

    - with "leak" when the verdict at ``max_runs`` is already certain: some event's bound exceeds
      ``claim_eps`` even if every remaining run went the mechanism's way (deterministic
      curtailment; no α is spent on the looks, the final test is the fixed one);
    - with "no leak" when, for every event and direction, the final bound stays ≤ ``claim_eps`` even
      at final counts the remaining runs reach with probability ≤ ``gamma`` for any hit rate inside
      the data's (1 − ``alpha_c``) Clopper–Pearson interval (stochastic curtailment, Lan, Simon &
      Halperin 1982). The false-alarm rate is the fixed test's α (stopping to pass raises none);
      the chance that an early "no leak" differs from the full count's verdict is at most
      ``(looks − 1) · 2 · n_events · (alpha_c + 2 · gamma)`` (union bound over the looks, events,
      directions, the two rate bounds and the two tails: 0.84 % for two events at the defaults).

    ``hits(j, i)`` is run ``i`` on D (``j = 0``) or D′ (``j = 1``): one bool per event. Runs are
    drawn in order, so a seeded ``hits`` gives a reproducible verdict; the lower bound reported is
    the fixed-count bound of the runs drawn (at ``runs`` instead of ``max_runs``).
    """
    counts = np.zeros((n_events, 2), dtype=np.int64)
    a = alpha / n_events
    step = max(1, -(-max_runs // looks))
    m, leak = 0, None
    while m < max_runs:
        stop = min(max_runs, m + step)
        for i in range(m, stop):
            for j in (0, 1):
                counts[:, j] += np.asarray(hits(j, i), dtype=bool)
        m = stop
        if m == max_runs:
            break
        rest, pairs = max_runs - m, [(int(x), int(y)) for x, y in counts]
        # One direction's final bound grows with its own hits and falls with the other side's:
        # at its smallest when every remaining run goes the mechanism's way.
        if any(_one_direction(u, v + rest, max_runs, delta, a) > claim_eps
               for x, y in pairs for u, v in ((x, y), (y, x))):
            leak = True  # the full count's verdict is certainly "leak"
            break
        if all(_one_direction(*_worst_final(u, v, m, max_runs, gamma, alpha_c), max_runs, delta, a)
               <= claim_eps for x, y in pairs for u, v in ((x, y), (y, x))):
            leak = False  # the full count's verdict is "no leak" but for the stated chance
            break
    lb = max(eps_lower_bound(int(x), int(y), m, delta=delta, alpha=a).eps_lower for x, y in counts)
    return SequentialAudit(leak=lb > claim_eps if leak is None else leak, eps_lower=lb, runs=m,
                           max_runs=max_runs, hits=tuple((int(x), int(y)) for x, y in counts))
