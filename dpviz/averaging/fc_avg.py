"""FC_Avg: fully private averaging by FriendlyCore + FriendlyAvg (Tsfadia et al. 2022, §5.1).

With a known radius r (``fc_avg``) the core is dist_r-friendly, so FriendlyAvg's noise scales
with r instead of a domain bound. With an unknown radius (``fc_avg_unknown_diam``) FindDiam first
searches r in [r_min, r_max] privately.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpviz._validation import RngLike, check_data, check_delta, check_rho, check_rng, check_scalar
from dpviz.averaging.diameter import add_find_diam_steps, find_diam_core
from dpviz.averaging.friendly_avg import add_avg_steps, check_radius, friendly_avg_core
from dpviz.core.friendlycore import add_core_steps, friendly_core_mask
from dpviz.core.predicates import SKETCH_LABEL, DistR, SketchPrivacyWarning
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.result import Result, Trace

#: FC_Avg's split (§5.1.1): 0.1ρ and δ/2 to FriendlyCore, 0.9ρ and δ/2 to FriendlyAvg.
FC_AVG_FRACTIONS = {"FriendlyCore": 0.1, "FriendlyAvg": 0.9}
FC_AVG_DELTA_FRACTIONS = {"FriendlyCore": 0.5, "FriendlyAvg": 0.5}
#: FC_Avg_UnknownDiam's split (§5.1.2): 0.1ρ to FindDiam (δ = 0), 0.9ρ and all of δ to FC_Avg.
UNKNOWN_DIAM_FRACTIONS = {"FindDiam": 0.1, "FC_Avg": 0.9}
UNKNOWN_DIAM_DELTA_FRACTIONS = {"FindDiam": 0.0, "FC_Avg": 1.0}
#: The grid ratio of FindDiam inside FC_Avg_UnknownDiam (§5.1.2, step 2).
FIND_DIAM_BASE = 1.5


def _fc_avg(
    X: np.ndarray,
    *,
    budget: ZCDP,
    r: float,
    rng: np.random.Generator,
    ledger: Ledger,
    trace: Trace,
    sampled: bool = False,
    xi: float = 0.1,
    n_public: float | None = None,
) -> tuple[np.ndarray | None, str | None]:
    """FC_Avg on trusted inputs: FriendlyCore(dist_r, 0.1ρ, δ/2), then FriendlyAvg(C, 0.9ρ, δ/2, r)."""
    parts = budget.split(FC_AVG_FRACTIONS, FC_AVG_DELTA_FRACTIONS)
    fc_ledger = ledger.child("FriendlyCore(dist_r)", parts["FriendlyCore"])
    core = friendly_core_mask(X, DistR(r), rho=parts["FriendlyCore"].rho,
                              delta=parts["FriendlyCore"].delta, rng=rng, ledger=fc_ledger,
                              sampled=sampled, xi=xi)
    add_core_steps(trace, core)
    C = X[core.keep]
    avg_ledger = ledger.child("FriendlyAvg", parts["FriendlyAvg"])
    out = friendly_avg_core(C, rho=parts["FriendlyAvg"].rho, delta=parts["FriendlyAvg"].delta,
                            r=r, rng=rng, ledger=avg_ledger, n_public=n_public)
    add_avg_steps(trace, out, C.shape[0])
    trace.add("mean_nonprivate", released=False, mean=X.mean(axis=0) if len(X) else None,
              note="non-private average of all the data, for comparison only")
    failure = None
    if out.failure is not None:
        failure = "empty core" if C.shape[0] == 0 else out.failure
    return out.estimate, failure


def fc_avg(
    X: np.ndarray,
    *,
    rho: float,
    delta: float,
    r: float,
    rng: RngLike = None,
    sampled: bool = False,
    xi: float = 0.1,
    n_public: float | None = None,
) -> Result:
    """FC_Avg: a (ρ, δ)-zCDP average for data whose points are mostly within r of each other.

    Parameters
    ----------
    X : (n, d) array
    rho : float
        zCDP budget, > 0: 0.1ρ to FriendlyCore, 0.9ρ to FriendlyAvg.
    delta : float
        In (0, 1), split δ/2 + δ/2.
    r : float
        The known (public) radius of the dist_r predicate, ≥ 0.
    rng : Generator, int or None
    sampled, xi
        App. B sampled counts for FriendlyCore (privacy per the paper's sketch; opt-in).
    n_public : float, optional
        A public, declared dataset size: FriendlyAvg then splits its ρ as in the paper's
        experiments (footnote 4) instead of 0.1/0.9. Never pass the true n of private data.

    Returns
    -------
    Result
        ``centers`` (1, d) or None with ``failure`` ("empty core", "n̂ ≤ 0"); trace steps
        ``zcdp_filter``, ``core`` (internal), ``friendly_avg`` (released),
        ``friendly_avg_nonprivate`` and ``mean_nonprivate`` (internal).

    Privacy
    -------
    (ρ, δ)-zCDP under add/remove of one row, for every pair of neighbours (Thm 5.1: FriendlyCore
    makes the dist_r-friendly FriendlyAvg fully private, Thm 4.1). The ledger records every draw;
    on failure the unused budget is recorded as reserved.

    References
    ----------
    Tsfadia et al. 2022, §5.1.1 (FC_Avg, Thm 5.1), App. C.2.2 (utility).
    """
    func = "fc_avg"
    X = check_data(X, func)
    rho, delta, r = check_rho(rho, func), check_delta(delta, func), check_radius(r, func)
    if sampled:
        xi = check_scalar(xi, "xi", func, low=0.0, high=0.5, low_open=True, high_open=True)
        warnings.warn(f"fc_avg with sampled counts: {SKETCH_LABEL}. Use sampled=False for the "
                      "proved guarantee.", SketchPrivacyWarning, stacklevel=2)
    if n_public is not None:
        # A declared dataset size: at least one row (1e-300 rows made ρ₁ = ρ/2 silently).
        n_public = check_scalar(n_public, "n_public", func, low=1.0, high=math.inf, high_open=True)
    gen, seed = check_rng(rng, "averaging:fc_avg")
    ledger = Ledger("FC_Avg", ZCDP(rho, delta))
    trace = Trace()
    estimate, failure = _fc_avg(X, budget=ZCDP(rho, delta), r=r, rng=gen, ledger=ledger,
                                trace=trace, sampled=sampled, xi=xi, n_public=n_public)
    ledger.check()
    centers = None if estimate is None else np.asarray(estimate)[None, :]
    params = dict(rho=rho, delta=delta, r=r, sampled=sampled, xi=xi, n_public=n_public)
    return Result(centers, failure, ledger, trace.freeze(), params, seed)


def fc_avg_unknown_diam(
    X: np.ndarray,
    *,
    rho: float,
    delta: float,
    r_min: float,
    r_max: float,
    beta: float = 0.05,
    rng: RngLike = None,
) -> Result:
    """FC_Avg_UnknownDiam: FindDiam for r, then FC_Avg with that r; (ρ, δ)-zCDP.

    Parameters
    ----------
    X : (n, d) array
    rho : float
        zCDP budget, > 0: 0.1ρ to FindDiam, 0.9ρ to FC_Avg.
    delta : float
        In (0, 1), all to FC_Avg (FindDiam has δ = 0).
    r_min, r_max : float
        The public search range for the radius, 0 < r_min ≤ r_max.
    beta : float
        Failure probability of the utility guarantee, in (0, 1); FindDiam gets β/2.
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` (1, d) or None with ``failure``; trace steps ``find_diam`` (released r),
        ``find_diam_probes`` (internal), then those of ``fc_avg``.

    Privacy
    -------
    (ρ, δ)-zCDP under add/remove of one row (Thm 5.2): FindDiam is 0.1ρ-zCDP by composition of
    its CheckDiam calls and FC_Avg is (0.9ρ, δ)-zCDP for any radius it is handed.

    References
    ----------
    Tsfadia et al. 2022, §5.1.2 (FC_Avg_UnknownDiam, Thm 5.2); our note §3.7.
    """
    func = "fc_avg_unknown_diam"
    X = check_data(X, func)
    rho, delta = check_rho(rho, func), check_delta(delta, func)
    r_min = check_scalar(r_min, "r_min", func, low=0.0, high=math.inf, low_open=True,
                         high_open=True)
    r_max = check_scalar(r_max, "r_max", func, low=0.0, high=math.inf, low_open=True,
                         high_open=True)
    if r_max < r_min:
        raise ValueError(
            f"The 'r_max' parameter of {func} must be at least r_min. Got r_min={r_min:g}, "
            f"r_max={r_max:g}."
        )
    beta = check_scalar(beta, "beta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "averaging:fc_avg_unknown_diam")
    budget = ZCDP(rho, delta)
    parts = budget.split(UNKNOWN_DIAM_FRACTIONS, UNKNOWN_DIAM_DELTA_FRACTIONS)
    ledger = Ledger("FC_Avg_UnknownDiam", budget)
    trace = Trace()
    diam = find_diam_core(X, rho=parts["FindDiam"].rho, beta=beta / 2, r_min=r_min, r_max=r_max,
                          base=FIND_DIAM_BASE, rng=gen,
                          ledger=ledger.child("FindDiam", parts["FindDiam"]))
    add_find_diam_steps(trace, diam, r_min=r_min, r_max=r_max, base=FIND_DIAM_BASE)
    # "FC_Avg(D, ρ2, δ, β/2, r)" in the paper has an extra β: FC_Avg takes none (§5.1.2).
    estimate, failure = _fc_avg(X, budget=parts["FC_Avg"], r=diam.r, rng=gen,
                                ledger=ledger.child("FC_Avg", parts["FC_Avg"]), trace=trace)
    ledger.check()
    centers = None if estimate is None else np.asarray(estimate)[None, :]
    params = dict(rho=rho, delta=delta, r_min=r_min, r_max=r_max, beta=beta,
                  base=FIND_DIAM_BASE)
    return Result(centers, failure, ledger, trace.freeze(), params, seed)
