"""CheckDiam and FindDiam: a private search for an effective diameter (Tsfadia et al. 2022, §5.1.2).

CheckDiam(r) privately tests whether almost all pairs of points are within distance r (the
mean friend count a is close to n). FindDiam binary-searches the grid r_min·b^e, e = 0..T, for
the smallest accepted radius, so FC_Avg can run without a known diameter.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from dpviz._validation import RngLike, check_data, check_radius, check_rho, check_rng, check_scalar
from dpviz.core.predicates import dist_r_counts
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian
from dpviz.result import Result, Trace

#: Relative slack when rounding log_b(r_max/r_min) up, so an exact power is not bumped by one.
_LOG_RTOL = 1e-9


@dataclass(frozen=True)
class Probe:
    """One CheckDiam call.

    Attributes
    ----------
    r : float
        The radius tested (public: a grid point).
    a : float
        The non-private mean friend count (1/n)·Σ_i s_i (internal).
    a_hat : float
        a + N(0, 2/ρ) (released).
    threshold : float
        n − √(4 ln(1/β)/ρ): accept iff a_hat ≥ threshold (internal, since it contains n).
    accepted : bool
        The released decision.
    """

    r: float
    a: float
    a_hat: float
    threshold: float
    accepted: bool

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class DiamOutcome:
    """What FindDiam produced: the released radius ``r``, its ``probes`` (in call order) and
    ``n_calls``, the number of CheckDiam calls made (≤ q, the number budgeted)."""

    r: float
    probes: tuple[Probe, ...]
    n_calls: int


def check_diam_margin(rho: float, beta: float) -> float:
    """√(4 ln(1/β)/ρ): how far below n the noisy mean count may fall and still pass (§5.1.2)."""
    return math.sqrt(4.0 * math.log(1.0 / beta) / rho)


def check_diam_core(
    X: np.ndarray,
    *,
    rho: float,
    beta: float,
    r: float,
    rng: np.random.Generator,
    ledger: Ledger,
    total: int | None = None,
) -> Probe:
    """CheckDiam (Tsfadia et al. 2022, §5.1.2) on trusted inputs; records its draw in ``ledger``.

    ``total``: Σ_i s_i at this r if the caller counted it already (the same integer
    ``dist_r_counts(X, r).sum()`` gives, e.g. from :mod:`dpviz.averaging.diam_levels`, cached per
    tuple stage); None counts it here.

    s_i = #{j : ‖x_i − x_j‖ ≤ r} (self included); a = (1/n)Σ s_i; â = a + N(0, 2/ρ)
    (σ = √(2/ρ), sensitivity 2); accept iff â − n ≥ −√(4 ln(1/β)/ρ).

    n = 0: a is 0/0. We set a := n = 0, so the tested statistic a − n is 0, as for n = 1
    (where a = 1); it keeps sensitivity ≤ 2 and the ρ-zCDP guarantee. (A deterministic reject
    at n = 0 would not be private: Pr[accept] would jump from 0 to ≈ 1 − β on adding one row.)
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if total is None:
        total = int(dist_r_counts(X, r).sum()) if n else 0
    a = float(total) / n if n else 0.0
    # The proof shows a′ − 1 ≤ a ≤ a′ + 2 under add/remove, so a (and a − n) has sensitivity 2.
    a_hat = gaussian(a, sensitivity=2.0, rho=rho, rng=rng, ledger=ledger,
                     name=f"â (CheckDiam, r={r:.4g})", note="â = a + N(0, 2/ρ), sensitivity 2")
    threshold = n - check_diam_margin(rho, beta)
    return Probe(float(r), a, float(a_hat), float(threshold), bool(a_hat >= threshold))


def diam_grid_size(r_min: float, r_max: float, base: float) -> int:
    """T = ⌈log_b(r_max/r_min)⌉ (our reading of §5.1.2, step i)."""
    t = math.log(r_max / r_min) / math.log(base)
    return max(0, math.ceil(t - _LOG_RTOL * max(1.0, abs(t))))


def find_diam_calls(r_min: float, r_max: float, base: float) -> int:
    """q = ⌈log2(T + 1)⌉: the largest number of CheckDiam calls the binary search can make.

    The paper writes log2(t) for the per-call split, which undercounts (t = 18.75 gives 4.23
    versus 5 real calls, overspending ρ) and is ≤ 0 for t ≤ 1; we split by the actual maximum
    (our note §3.7 / paper §5.1.2).
    """
    return math.ceil(math.log2(diam_grid_size(r_min, r_max, base) + 1))


def find_diam_core(
    X: np.ndarray,
    *,
    rho: float,
    beta: float,
    r_min: float,
    r_max: float,
    base: float = 1.5,
    rng: np.random.Generator,
    ledger: Ledger,
    level_totals: np.ndarray | None = None,
) -> DiamOutcome:
    """FindDiam (Tsfadia et al. 2022, §5.1.2) on trusted inputs; records its spends in ``ledger``.

    ``level_totals`` (optional, length T + 1): Σ_i s_i at r_min·b^e for every grid level e,
    precomputed from the same points (:class:`dpviz.averaging.diam_levels.DiamLevels`); the
    probes, their noise and the released radius are then exactly those of counting here.

    Binary search for the smallest e ∈ {0..T} with CheckDiam(r_min·b^e) = 1 (lo = 0, hi = T;
    mid = (lo+hi)//2; accept → hi = mid, reject → lo = mid + 1); returns r_min·b^lo, which is
    r_min·b^T ≥ r_max if every probe rejects. Each call gets ρ/q and β/q with q = ⌈log2(T+1)⌉
    the maximum number of calls (fixing the paper's log2(t), §5.1.2). Calls the search did not
    need are recorded as a reserved spend, so the ledger always totals ρ.
    """
    T = diam_grid_size(r_min, r_max, base)
    q = find_diam_calls(r_min, r_max, base)
    probes: list[Probe] = []
    lo, hi = 0, T
    while lo < hi:
        mid = (lo + hi) // 2
        probe = check_diam_core(X, rho=rho / q, beta=beta / q, r=r_min * base**mid, rng=rng,
                                ledger=ledger,
                                total=None if level_totals is None else int(level_totals[mid]))
        probes.append(probe)
        if probe.accepted:
            hi = mid
        else:
            lo = mid + 1
    n_calls = len(probes)
    if n_calls > q:  # pragma: no cover - impossible by the binary-search bound
        raise RuntimeError(f"FindDiam made {n_calls} calls but budgeted q={q}.")
    if n_calls < q:
        ledger.record(f"{q - n_calls} unused CheckDiam call(s) (reserved)", "reserved",
                      ZCDP(rho - n_calls * (rho / q)),
                      note="the split is by the maximum number of calls q = ⌈log2(T+1)⌉")
    if q == 0:
        ledger.record("no CheckDiam call needed (T = 0; reserved)", "reserved", ZCDP(rho))
    return DiamOutcome(float(r_min * base**lo), tuple(probes), n_calls)


def _check_beta(beta: float, func: str) -> float:
    return check_scalar(beta, "beta", func, low=0.0, high=1.0, low_open=True, high_open=True)


def _check_positive(value: float, name: str, func: str) -> float:
    return check_radius(value, name, func)


def check_diam(
    X: np.ndarray, *, rho: float, beta: float = 0.05, r: float, rng: RngLike = None
) -> Result:
    """CheckDiam: a ρ-zCDP test of whether D is (nearly) dist_r-complete.

    Parameters
    ----------
    X : (n, d) array
    rho : float
        zCDP budget, > 0.
    beta : float
        Failure probability of the utility guarantee, in (0, 1).
    r : float
        The radius to test, ≥ 0.
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` None; trace step ``check_diam`` (released: r, a_hat, accepted; internal: a,
        threshold, n). ``params`` holds the inputs.

    Privacy
    -------
    ρ-zCDP under add/remove of one row: one Gaussian draw with σ = √(2/ρ) on a statistic of
    sensitivity 2 (Tsfadia et al. 2022, §5.1.2).

    References
    ----------
    Tsfadia et al. 2022, §5.1.2 (CheckDiam) and App. C.2.3 (utility).
    """
    func = "check_diam"
    X = check_data(X, func)
    rho, beta = check_rho(rho, func), _check_beta(beta, func)
    r = check_radius(r, "r", func, allow_zero=True)
    gen, seed = check_rng(rng, "averaging:check_diam")
    ledger = Ledger("CheckDiam", ZCDP(rho))
    probe = check_diam_core(X, rho=rho, beta=beta, r=r, rng=gen, ledger=ledger)
    ledger.check()
    trace = Trace()
    trace.add("check_diam", released=True, note="a and threshold are internal (non-private)",
              n=X.shape[0], **probe.to_dict())
    return Result(None, None, ledger, trace.freeze(), dict(rho=rho, beta=beta, r=r), seed)


def find_diam(
    X: np.ndarray,
    *,
    rho: float,
    beta: float = 0.05,
    r_min: float,
    r_max: float,
    base: float = 1.5,
    rng: RngLike = None,
) -> Result:
    """FindDiam: a ρ-zCDP search for a radius r ∈ [r_min, b·r_max) making D nearly dist_r-complete.

    Parameters
    ----------
    X : (n, d) array
    rho : float
        zCDP budget, > 0, split evenly over q = ⌈log2(T+1)⌉ CheckDiam calls.
    beta : float
        Failure probability, in (0, 1), split the same way.
    r_min, r_max : float
        The search range, 0 < r_min ≤ r_max (public).
    base : float
        The grid ratio b > 1; the grid is r_min·b^e, e = 0..T, T = ⌈log_b(r_max/r_min)⌉.
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` None; trace steps ``find_diam`` (released: r, n_calls, q, T) and
        ``find_diam_probes`` (internal: one dict per probe with r, a, a_hat, threshold,
        accepted).

    Privacy
    -------
    ρ-zCDP under add/remove of one row, by composition of at most q CheckDiam calls of ρ/q
    each (Tsfadia et al. 2022, §5.1.2).

    References
    ----------
    Tsfadia et al. 2022, §5.1.2 (FindDiam); our note §3.7 (the number of calls).
    """
    func = "find_diam"
    X = check_data(X, func)
    rho, beta = check_rho(rho, func), _check_beta(beta, func)
    r_min = _check_positive(r_min, "r_min", func)
    r_max = _check_positive(r_max, "r_max", func)
    if r_max < r_min:
        raise ValueError(
            f"The 'r_max' parameter of {func} must be at least r_min. Got r_min={r_min:g}, "
            f"r_max={r_max:g}."
        )
    base = check_scalar(base, "base", func, low=1.0, high=math.inf, low_open=True,
                        high_open=True)
    gen, seed = check_rng(rng, "averaging:find_diam")
    ledger = Ledger("FindDiam", ZCDP(rho))
    out = find_diam_core(X, rho=rho, beta=beta, r_min=r_min, r_max=r_max, base=base, rng=gen,
                         ledger=ledger)
    ledger.check()
    trace = Trace()
    add_find_diam_steps(trace, out, r_min=r_min, r_max=r_max, base=base)
    params = dict(rho=rho, beta=beta, r_min=r_min, r_max=r_max, base=base)
    return Result(None, None, ledger, trace.freeze(), params, seed)


def add_find_diam_steps(
    trace: Trace, out: DiamOutcome, *, r_min: float, r_max: float, base: float
) -> None:
    """The trace steps of one FindDiam call."""
    trace.add("find_diam", released=True, r=out.r, n_calls=out.n_calls,
              q=find_diam_calls(r_min, r_max, base), T=diam_grid_size(r_min, r_max, base))
    trace.add("find_diam_probes", released=False,
              note="a and threshold are non-private; a_hat and accepted are released",
              probes=[p.to_dict() for p in out.probes])
