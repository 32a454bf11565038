"""FriendlyAvg: the dist_r-friendly zCDP average (Tsfadia et al. 2022, §3).

For neighbours D, D′ = D ∪ {z} whose union is dist_r-friendly (diameter ≤ 2r), the averages
differ by at most 2r/n, so Gaussian noise scaled to 2r/n̂ with a private under-estimate n̂ ≤ n
suffices. On its own it is private only for friendly neighbours; FriendlyCore makes it fully
private (``fc_avg``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz._validation import RngLike, check_data, check_delta, check_rho, check_rng, check_scalar
from dpviz._validation import check_radius as _check_radius
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_draw, size_underestimate
from dpviz.result import Result, Trace

#: FriendlyAvg's fixed split (§3, step 1): 0.1ρ for n̂ (drawn with 0.1(1−δ)ρ), 0.9ρ for the mean.
N_HAT_FRACTION = 0.1


@dataclass(frozen=True)
class AvgOutcome:
    """What FriendlyAvg produced.

    Attributes
    ----------
    estimate : (d,) array or None
        The private average; None on ⊥.
    failure : str or None
        Why FriendlyAvg output ⊥ ("empty input (n = 0)" or "n̂ ≤ 0"); None on success.
    n_hat : float
        The private under-estimate n̂ of n (released; drawn on both branches).
    sigma : float or None
        The per-coordinate noise standard deviation (2r/n̂)/√(2ρ₂); None on ⊥.
    mean : (d,) array or None
        The non-private Avg(D) (internal, for teaching); None when n = 0.
    """

    estimate: np.ndarray | None
    failure: str | None
    n_hat: float
    sigma: float | None
    mean: np.ndarray | None


@dataclass(frozen=True)
class AvgSplit:
    """The ρ split of FriendlyAvg: ``rho1_charge`` accounted for n̂, ``rho1_draw`` used to
    draw it (= (1 − δ)·rho1_charge, Fact 2.4.4), ``rho2`` for the mean."""

    rho1_charge: float
    rho1_draw: float
    rho2: float
    rule: str


def friendly_avg_split(rho: float, delta: float, n_public: float | None = None) -> AvgSplit:
    """ρ₁ and ρ₂ of FriendlyAvg from public quantities only.

    Default (§3, step 1): ρ₁ = 0.1(1−δ)ρ drawn, 0.1ρ charged; ρ₂ = 0.9ρ. With a public,
    declared size ``n_public`` the experiments' split (footnote 4):
    ρ₁ = (√(ln(1/δ))·ρ/n_public)^{2/3}, ρ₂ = ρ − ρ₁ (ρ₁ is drawn as (1−δ)ρ₁, charged ρ₁; it is
    capped at ρ/2 so ρ₂ stays positive when n_public is tiny). Never pass the true n: it is
    private under add/remove.
    """
    if n_public is None:
        charge = N_HAT_FRACTION * rho
        return AvgSplit(charge, (1.0 - delta) * charge, rho - charge, "fixed 0.1/0.9 (§3)")
    rho1 = min((math.sqrt(math.log(1.0 / delta)) * rho / n_public) ** (2.0 / 3.0), 0.5 * rho)
    return AvgSplit(rho1, (1.0 - delta) * rho1, rho - rho1,
                    f"experiments' split from public n={n_public:g} (footnote 4)")


def friendly_avg_core(
    X: np.ndarray,
    *,
    rho: float,
    delta: float,
    r: float,
    rng: np.random.Generator,
    ledger: Ledger,
    n_public: float | None = None,
) -> AvgOutcome:
    """FriendlyAvg on trusted inputs (Tsfadia et al. 2022, §3); records its spends in ``ledger``.

    1. ρ₁ = 0.1(1−δ)ρ, ρ₂ = 0.9ρ (or the footnote-4 split from ``n_public``).
    2. n̂ = n − √(ln(1/δ)/ρ₁) − 1 + N(0, 1/(2ρ₁)) (an under-estimate: MINUS).
    3. ⊥ if n = 0 or n̂ ≤ 0.
    4. Avg(D) + N(0, σ²I), σ = (2r/n̂)/√(2ρ₂).

    The n̂ draw is charged ρ₁/(1−δ) (Fact 2.4.4: conditioning on N̂ ≤ n, probability ≥ 1−δ);
    the mean draw ρ₂; the event δ. On ⊥ the mean's ρ₂ is recorded as reserved, since the
    guarantee covers both branches.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    total = X.sum(axis=0) if n else None
    return friendly_avg_from_sums(n, total, rho=rho, delta=delta, r=r, rng=rng, ledger=ledger,
                                  n_public=n_public)


def friendly_avg_from_sums(
    n: int,
    total: np.ndarray | None,
    *,
    rho: float,
    delta: float,
    r: float,
    rng: np.random.Generator,
    ledger: Ledger,
    n_public: float | None = None,
) -> AvgOutcome:
    """:func:`friendly_avg_core` from its sufficient statistics: the count n and the sum (d,).

    The same draws and ledger entries; Avg(D) = total / n (``X.mean`` computes exactly this).
    Streaming callers (``dpviz.large``) accumulate n and the sum over chunks of a file.
    """
    split = friendly_avg_split(rho, delta, n_public)
    # Step 2: MINUS, so n̂ ≤ n w.p. ≥ 1 − δ (sensitivity 1 under add/remove).
    n_hat = size_underestimate(
        n, charge=split.rho1_charge, delta=delta, rng=rng, ledger=ledger,
        name="n̂ (FriendlyAvg size under-estimate)", event="FriendlyAvg conditions on n̂ ≤ n (§3)",
        note=f"drawn with (1−δ)ρ₁, charged ρ₁ (Fact 2.4.4); split: {split.rule}",
    )
    mean = np.asarray(total, dtype=np.float64) / n if n else None
    if n == 0 or n_hat <= 0:
        ledger.record("Avg + Gaussian (not drawn: ⊥)", "reserved", ZCDP(split.rho2),
                      note="FriendlyAvg output ⊥; the mean's budget is still accounted")
        failure = "empty input (n = 0)" if n == 0 else "n̂ ≤ 0"
        return AvgOutcome(None, failure, float(n_hat), None, mean)
    estimate, sigma = gaussian_draw(mean, sensitivity=2.0 * r / n_hat, rho=split.rho2, rng=rng,
                                    ledger=ledger, name="Avg(D) + N(0, σ²I)",
                                    note="ℓ2 sensitivity 2r/n̂ (§3, step 4)")
    return AvgOutcome(np.asarray(estimate), None, float(n_hat), sigma, mean)


def check_radius(r: float, func: str, name: str = "r") -> float:
    """r must be a float in [0, MAX_MAGNITUDE] (r² stays finite)."""
    return _check_radius(r, name, func, allow_zero=True)


def friendly_avg(
    X: np.ndarray,
    *,
    rho: float,
    delta: float,
    r: float,
    n_public: float | None = None,
    rng: RngLike = None,
) -> Result:
    """FriendlyAvg: a dist_r-friendly (ρ, δ)-zCDP average.

    Parameters
    ----------
    X : (n, d) array
        The data (n = 0 is allowed and gives ⊥).
    rho : float
        zCDP budget, > 0.
    delta : float
        In (0, 1).
    r : float
        The friendship radius: the guarantee holds for neighbours whose union has all pairs
        within a common friend at distance r (diameter ≤ 2r).
    n_public : float, optional
        A public, declared dataset size; if given, ρ is split as in the paper's experiments
        (footnote 4) instead of 0.1/0.9.
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` (1, d) or None with ``failure``; trace steps ``friendly_avg`` (released:
        estimate, sigma, n_hat) and ``friendly_avg_nonprivate`` (internal: mean, n).

    Privacy
    -------
    dist_r-friendly (ρ, δ)-zCDP under add/remove of one row (Tsfadia et al. 2022, Claim 3.1):
    private only for neighbours whose union is dist_r-friendly. Run it on a FriendlyCore output
    (``fc_avg``) for a guarantee over all neighbours.

    References
    ----------
    Tsfadia et al. 2022, §3 (FriendlyAvg) and footnote 4 (experiments' split).
    """
    func = "friendly_avg"
    X = check_data(X, func)
    rho, delta, r = check_rho(rho, func), check_delta(delta, func), check_radius(r, func)
    if n_public is not None:
        # A declared dataset size: at least one row (1e-300 rows made ρ₁ = ρ/2 silently).
        n_public = check_scalar(n_public, "n_public", func, low=1.0, high=math.inf, high_open=True)
    gen, seed = check_rng(rng, "averaging:friendly_avg")
    ledger = Ledger("FriendlyAvg", ZCDP(rho, delta))
    out = friendly_avg_core(X, rho=rho, delta=delta, r=r, rng=gen, ledger=ledger,
                            n_public=n_public)
    ledger.check()
    trace = Trace()
    add_avg_steps(trace, out, X.shape[0])
    centers = None if out.estimate is None else out.estimate[None, :]
    params = dict(rho=rho, delta=delta, r=r, n_public=n_public)
    return Result(centers, out.failure, ledger, trace.freeze(), params, seed)


def add_avg_steps(trace: Trace, out: AvgOutcome, n: int, prefix: str = "") -> None:
    """The trace steps of one FriendlyAvg call (released estimate; internal true mean)."""
    trace.add(f"{prefix}friendly_avg", released=True, estimate=out.estimate, sigma=out.sigma,
              n_hat=out.n_hat, failure=out.failure)
    trace.add(f"{prefix}friendly_avg_nonprivate", released=False, mean=out.mean, n=n,
              note="non-private average of the input, for teaching only")
