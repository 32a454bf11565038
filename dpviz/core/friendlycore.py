"""FriendlyCore: keep the elements with many friends, privately (Tsfadia et al. 2022, §4).

``friendly_core`` runs zCDPFilter on friend counts (the practical zCDP version);
``friendly_core_dp`` runs BasicFilter (the (ε, δ)-DP version). The core C they return is *not*
private on its own: it is a certified-friendly input for an f-friendly private aggregator
(Thm 4.1 / 4.2), e.g. FriendlyAvg in ``fc_avg``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpviz._validation import RngLike, check_data, check_delta, check_rho, check_rng, check_scalar
from dpviz.core.filters import FilterOutcome, basic_filter, zcdp_filter
from dpviz.core.predicates import (
    SKETCH_LABEL,
    DistR,
    Predicate,
    SampledCounts,
    SketchPrivacyWarning,
    as_predicate,
    friend_counts,
    sampled_friend_counts,
)
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.result import Result, Trace


@dataclass(frozen=True)
class CoreOutcome:
    """One FriendlyCore call: the mask ``keep`` (= filter.keep), the filter internals, the
    friend counts w_i handed to the filter and, in sampled mode, the App. B details."""

    keep: np.ndarray
    filter: FilterOutcome
    counts: np.ndarray
    sampled: SampledCounts | None = None

    @property
    def index(self) -> np.ndarray:
        """Indices of the kept elements (the core)."""
        return np.flatnonzero(self.keep)


def friendly_core_mask(
    X: np.ndarray,
    predicate: Predicate,
    *,
    rho: float,
    delta: float,
    rng: np.random.Generator,
    ledger: Ledger,
    sampled: bool = False,
    xi: float = 0.1,
) -> CoreOutcome:
    """FriendlyCore (zCDPFilter) on trusted inputs; records its spends in ``ledger``.

    Exact mode: zCDPFilter(counts, ρ, δ). Sampled mode (App. B): δ is split in halves, δ/2 for
    the event that the sampled counts keep every bad element bad (m = ⌈ln(2n/δ)/(2ξ²)⌉) and
    δ/2 for the filter, which gets the shifted counts w̃ − ξn (so z = z̃ = w̃ − (1/2+ξ)n).
    """
    n = len(X)
    if not sampled:
        counts = friend_counts(X, predicate) if n else np.zeros(0, dtype=np.int64)
        out = zcdp_filter(counts, rho=rho, delta=delta, rng=rng, ledger=ledger)
        return CoreOutcome(out.keep, out, counts)
    sc = sampled_friend_counts(X, predicate, xi=xi, delta=delta / 2, rng=rng, warn=False)
    ledger.record_event("sampled counts keep bad elements bad (App. B)", delta / 2,
                        note=f"{SKETCH_LABEL}; m = {sc.m} of n = {n}, ξ = {xi:g}")
    out = zcdp_filter(sc.filter_counts, rho=rho, delta=delta / 2, rng=rng, ledger=ledger)
    return CoreOutcome(out.keep, out, sc.filter_counts, sc)


def add_core_steps(trace: Trace, out: CoreOutcome, prefix: str = "") -> None:
    """The trace steps of one FriendlyCore call (all internal: the core is not private alone)."""
    f = out.filter
    data: dict[str, Any] = dict(counts=out.counts, scores=f.scores, noisy_scores=f.noisy_scores,
                                threshold=f.threshold, n_hat=f.n_hat, keep=f.keep, sigma=f.sigma)
    note = ""
    if out.sampled is not None:
        data.update(m=out.sampled.m, xi=out.sampled.xi, w_tilde=out.sampled.w_tilde)
        note = SKETCH_LABEL
    trace.add(f"{prefix}zcdp_filter", released=False, note=note, **data)
    trace.add(f"{prefix}core", released=False, index=out.index, size=int(out.keep.sum()))


def _check_input(X: Any, predicate: float | Predicate, func: str) -> tuple[np.ndarray, Predicate]:
    pred = as_predicate(predicate, func)
    if isinstance(pred, DistR):
        return check_data(X, func), pred
    arr = np.asarray(X)
    if arr.ndim < 1:
        raise ValueError(f"The 'X' parameter of {func} must be an array with one element per row.")
    if np.issubdtype(arr.dtype, np.number) and arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"The 'X' parameter of {func} contains NaN or infinite values.")
    return arr, pred


def friendly_core(
    X: np.ndarray,
    predicate: float | Predicate,
    rho: float,
    delta: float,
    *,
    rng: RngLike = None,
    sampled: bool = False,
    xi: float = 0.1,
) -> Result:
    """FriendlyCore(D, f, ρ, δ): the elements kept by zCDPFilter on their friend counts.

    Parameters
    ----------
    X : (n, d) array (or any array with one element per row for a custom predicate)
    predicate : float or Predicate
        A radius r for dist_r(x, y) = 1{‖x − y‖ ≤ r}, or an object with
        ``cross_counts(X, Y)`` (see ``dpviz.core.predicates.Predicate``).
    rho, delta : float
        ρ > 0 and δ ∈ (0, 1) of the filter.
    rng : Generator, int or None
    sampled : bool
        Use App. B sampled counts (O(n·m) instead of O(n²)); privacy per the paper's sketch,
        with a :class:`SketchPrivacyWarning`. Off by default.
    xi : float
        The sampling slack ξ ∈ (0, 1/2) (sampled mode only).

    Returns
    -------
    Result
        ``centers`` None; ``failure`` "empty core" when nothing is kept (n = 0 included);
        trace steps ``zcdp_filter`` (counts, scores, noisy_scores, threshold, n_hat, keep,
        sigma) and ``core`` (index, size), both internal.

    Privacy
    -------
    The mask is (ρ, δ)-indistinguishable under add/remove of one row (Lemma 4.2) and the core
    is f-friendly; composed with any f-friendly (ρ′, δ′)-zCDP aggregator the pipeline is
    (ρ + ρ′, δ + δ′)-zCDP (Thm 4.1). The core itself is a subset of the data: never publish it.
    Sampled mode: privacy per the paper's sketch (App. B), with δ split δ/2 + δ/2.

    References
    ----------
    Tsfadia et al. 2022, §4.2 (zCDPFilter, Lemma 4.2), Thm 4.1, Appendix B.
    """
    func = "friendly_core"
    X, pred = _check_input(X, predicate, func)
    rho, delta = check_rho(rho, func), check_delta(delta, func)
    if sampled:
        xi = check_scalar(xi, "xi", func, low=0.0, high=0.5, low_open=True, high_open=True)
        warnings.warn(f"friendly_core with sampled counts: {SKETCH_LABEL}. Use sampled=False "
                      "for the proved guarantee.", SketchPrivacyWarning, stacklevel=2)
    gen, seed = check_rng(rng, "core:friendly_core")
    ledger = Ledger(f"FriendlyCore({pred.name})", ZCDP(rho, delta),
                    note=SKETCH_LABEL if sampled else "")
    out = friendly_core_mask(X, pred, rho=rho, delta=delta, rng=gen, ledger=ledger,
                             sampled=sampled, xi=xi)
    ledger.check()
    trace = Trace()
    add_core_steps(trace, out)
    failure = None if out.keep.any() else "empty core"
    params = dict(predicate=pred.name, rho=rho, delta=delta, sampled=sampled, xi=xi)
    return Result(None, failure, ledger, trace.freeze(), params, seed)


def friendly_core_dp(
    X: np.ndarray,
    predicate: float | Predicate,
    *,
    alpha: float = 0.0,
    rng: RngLike = None,
) -> Result:
    """FriendlyCoreDP(D, f, α): the elements kept by BasicFilter (Tsfadia et al. 2022, §4.1).

    Parameters
    ----------
    X : (n, d) array (or one element per row for a custom predicate)
    predicate : float or Predicate
        A radius for dist_r, or a predicate object.
    alpha : float
        Completeness slack α ∈ [0, 1/2): elements with ≥ (1 − α)n friends are kept surely.
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` None; ``failure`` "empty core" if nothing is kept; trace steps
        ``basic_filter`` (counts, scores, probabilities, keep) and ``core`` (index, size),
        both internal.

    Privacy
    -------
    Spends nothing itself (its ledger is empty): composed with an f-friendly (ε, δ)-DP
    aggregator the pipeline is (ε′, δ′)-DP as in Thm 4.2 (product filter with ℓ1 stability
    < 1/(1 − 2α), Lemma 4.1). The core itself must never be published.

    References
    ----------
    Tsfadia et al. 2022, §4.1 (BasicFilter, Lemma 4.1) and Thm 4.2.
    """
    func = "friendly_core_dp"
    X, pred = _check_input(X, predicate, func)
    alpha = check_scalar(alpha, "alpha", func, low=0.0, high=0.5, high_open=True)
    gen, seed = check_rng(rng, "core:friendly_core_dp")
    ledger = Ledger(f"FriendlyCoreDP({pred.name})", None,
                    note="BasicFilter spends nothing; the guarantee comes with the consumer (Thm 4.2)")
    counts = friend_counts(X, pred) if len(X) else np.zeros(0, dtype=np.int64)
    out = basic_filter(counts, alpha=alpha, rng=gen)
    trace = Trace()
    trace.add("basic_filter", released=False, counts=counts, scores=out.scores,
              probabilities=out.probabilities, keep=out.keep)
    trace.add("core", released=False, index=np.flatnonzero(out.keep), size=int(out.keep.sum()))
    failure = None if out.keep.any() else "empty core"
    return Result(None, failure, ledger, trace.freeze(), dict(predicate=pred.name, alpha=alpha),
                  seed)
