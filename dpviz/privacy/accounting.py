"""Privacy accounting: zCDP ↔ (ε, δ)-DP, composition, group privacy, row-level statements.

The one home of the library's accounting: the (ε, δ) total of a ledger (:func:`dp_total`), the
zCDP inverse (ε, δ) → ρ (:func:`rho_for_dp`) and the row-level guarantee of a pure ρ-zCDP
algorithm (:func:`pure_rho_guarantee`). Families call these; none totals a ledger of its own.

References:
- Bun & Steinke 2016, Prop. 1.3 (simple bound ε = ρ + 2√(ρ ln(1/δ))) and Prop. 1.4.
- Canonne, Kamath & Steinke 2020 ("The Discrete Gaussian for DP"), Cor. 13 (tight bound).
- Tsfadia et al. 2022, §2 (facts used by FriendlyCore); Dwork & Roth 2014 (group privacy).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from dpviz._validation import MAX_MAGNITUDE, check_scalar
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger, Spend, Unit


def _log_delta_cks(rho: float, eps: float) -> float:
    """log δ(ε) for ρ-zCDP, CKS20 Cor. 13: δ = inf_{α>1} e^{(α−1)(αρ−ε)} (1−1/α)^α / (α−1)."""

    def log_bound(log_am1: float) -> float:
        am1 = math.exp(log_am1)  # α − 1 > 0
        a = 1.0 + am1
        return am1 * (a * rho - eps) + a * math.log1p(-1.0 / a) - math.log(am1)

    # The minimiser is near α* ≈ (ε + ρ)/(2ρ); search log(α − 1) on a wide bracket.
    res = minimize_scalar(log_bound, bounds=(-20.0, 20.0), method="bounded",
                          options={"xatol": 1e-10})
    return min(float(res.fun), 0.0)


def zcdp_delta(rho: float, eps: float) -> float:
    """The δ at which pure ρ-zCDP gives (ε, δ)-DP, by the tight CKS20 bound."""
    return math.exp(_log_delta_cks(rho, eps))


def zcdp_to_dp(rho: float, delta: float, tight: bool = True) -> float:
    """ε such that pure ρ-zCDP implies (ε, δ)-DP.

    ``tight=False`` is the simple bound ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3),
    the only conversion Tsfadia et al. use. ``tight=True`` inverts the CKS20 bound, which is
    never larger. Example: ρ=0.03125, δ=1e-3 → 0.688 (simple 0.960).
    """
    rho = check_scalar(rho, "rho", "zcdp_to_dp", low=0.0, high=MAX_MAGNITUDE)
    delta = check_scalar(delta, "delta", "zcdp_to_dp", low=0.0, high=1.0, low_open=True, high_open=True)
    if rho == 0.0:
        return 0.0
    simple = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    if not tight:
        return simple
    return min(_eps_cks(rho, math.log(1.0 / delta)), simple)


#: Grid of log(α − 1) for the first pass of the ε minimisation (then refined by golden section).
_LOG_AM1_GRID = np.linspace(-14.0, 16.0, 601)
#: Golden-section steps of the refinement: the bracket (two grid steps, 0.1) shrinks by
#: 0.618 per step, to < 1e-13 after 60.
_GOLDEN_STEPS = 60
_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0


def _eps_of(log_am1: np.ndarray, rho: np.ndarray, log_inv_delta: np.ndarray) -> np.ndarray:
    """αρ + (ln(1/δ) − ln α)/(α − 1) + ln(1 − 1/α) at α = 1 + e^{log_am1} (CKS20 Cor. 13)."""
    am1 = np.exp(log_am1)
    a = 1.0 + am1
    return a * rho + (log_inv_delta - np.log(a)) / am1 + np.log1p(-1.0 / a)


def _eps_cks_many(rho: np.ndarray, log_inv_delta: np.ndarray) -> np.ndarray:
    """ε(δ) = inf_{α>1} αρ + (ln(1/δ) − ln α)/(α − 1) + ln(1 − 1/α)  (CKS20 Cor. 13 solved for ε),
    for arrays of (ρ, ln 1/δ) at once.

    Minimising ε over α directly equals inverting inf_α δ_α(ε) (both are the same infimum), and
    needs no root finding: a vectorised grid pass over log(α − 1), then a golden-section
    refinement between the grid neighbours of the best point (the function is unimodal there),
    every pair at once. This is the conversion dp-accounting's RdpAccountant applies on its
    finite grid of orders, refined. Vectorised because a row-level statement converts ~40
    budgets and a calibration evaluates hundreds of statements (the Budget page's sweep).
    """
    rho = np.asarray(rho, dtype=float)[:, None]
    lid = np.asarray(log_inv_delta, dtype=float)[:, None]
    vals = _eps_of(_LOG_AM1_GRID[None, :], rho, lid)
    i = np.argmin(vals, axis=1)
    best = vals[np.arange(vals.shape[0]), i]
    lo = _LOG_AM1_GRID[np.maximum(i - 1, 0)]
    hi = _LOG_AM1_GRID[np.minimum(i + 1, _LOG_AM1_GRID.size - 1)]
    rho, lid = rho[:, 0], lid[:, 0]
    x1, x2 = hi - _INV_PHI * (hi - lo), lo + _INV_PHI * (hi - lo)
    f1, f2 = _eps_of(x1, rho, lid), _eps_of(x2, rho, lid)
    for _ in range(_GOLDEN_STEPS):
        left = f1 < f2  # the minimum is in [lo, x2]; else in [x1, hi]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x2n = np.where(left, x1, lo + _INV_PHI * (hi - lo))
        x1n = np.where(left, hi - _INV_PHI * (hi - lo), x2)
        f2n = np.where(left, f1, np.nan)
        f1n = np.where(left, np.nan, f2)
        x1, x2 = x1n, x2n
        f1 = np.where(left, _eps_of(x1, rho, lid), f1n)
        f2 = np.where(left, f2n, _eps_of(x2, rho, lid))
    refined = np.minimum(np.minimum(f1, f2), _eps_of((lo + hi) / 2.0, rho, lid))
    return np.maximum(np.minimum(refined, best), 0.0)


def _eps_cks(rho: float, log_inv_delta: float) -> float:
    """ε(δ) of CKS20 Cor. 13 for one (ρ, ln 1/δ): the same grid pass and golden-section steps
    as :func:`_eps_cks_many`, the refinement in plain floats (a one-element array costs ~20×
    more per step)."""

    def eps_of(x: float) -> float:
        am1 = math.exp(x)
        a = 1.0 + am1
        return a * rho + (log_inv_delta - math.log(a)) / am1 + math.log1p(-1.0 / a)

    vals = _eps_of(_LOG_AM1_GRID, rho, log_inv_delta)
    i = int(np.argmin(vals))
    lo = float(_LOG_AM1_GRID[max(i - 1, 0)])
    hi = float(_LOG_AM1_GRID[min(i + 1, _LOG_AM1_GRID.size - 1)])
    x1, x2 = hi - _INV_PHI * (hi - lo), lo + _INV_PHI * (hi - lo)
    f1, f2 = eps_of(x1), eps_of(x2)
    for _ in range(_GOLDEN_STEPS):
        if f1 < f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - _INV_PHI * (hi - lo)
            f1 = eps_of(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + _INV_PHI * (hi - lo)
            f2 = eps_of(x2)
    refined = min(f1, f2, eps_of((lo + hi) / 2.0))
    return max(min(refined, float(vals[i])), 0.0)


def _zcdp_to_dp_many(rho: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """:func:`zcdp_to_dp` (tight) for arrays of valid ρ ≥ 0 and δ in (0, 1), in one pass."""
    rho, delta = np.asarray(rho, dtype=float), np.asarray(delta, dtype=float)
    simple = rho + 2.0 * np.sqrt(rho * np.log(1.0 / delta))
    pos = rho > 0.0
    out = np.zeros_like(rho)
    if pos.any():
        out[pos] = np.minimum(_eps_cks_many(rho[pos], np.log(1.0 / delta[pos])), simple[pos])
    return out


def rho_for_dp(eps: float, delta: float) -> float:
    """The largest ρ whose pure ρ-zCDP gives (ε, δ)-DP by the tight conversion: the one inverse of
    :func:`zcdp_to_dp` (CKS20 Cor. 13), landed on the sound side (``zcdp_to_dp(ρ, δ) ≤ ε``).

    Example: ε = 1, δ = 1e-6 → ρ ≈ 0.02436 (the simple bound's inverse gives 0.01747).
    """
    eps = check_scalar(eps, "eps", "rho_for_dp", low=0.0, high=MAX_MAGNITUDE, low_open=True)
    delta = check_scalar(delta, "delta", "rho_for_dp", low=0.0, high=1.0, low_open=True, high_open=True)
    # zcdp_to_dp(ρ) ≥ ρ, so the root lies below ε; the tight ε is continuous and increasing in ρ.
    rho = brentq(lambda r: zcdp_to_dp(r, delta) - eps, 0.0, eps, xtol=1e-15, rtol=1e-12)
    while rho > 0.0 and zcdp_to_dp(rho, delta) > eps:  # the sound side of the root
        rho *= 1.0 - 1e-12
    return float(rho)


def pure_rho_guarantee(budget: ZCDP, pub: Any, params: Any, delta_prime: float) -> ApproxDP:
    """The row-level (ε, δ + δ′)-DP of an algorithm that is pure ρ-zCDP for one row and books the
    own δ it is handed as reserved (``"unused δ"`` on its ledger): the ``guarantee`` of every such
    family's registry entry (BS16 Prop. 1.3 / CKS20 Cor. 13 through :func:`approx_zcdp_to_dp`).
    ``pub`` and ``params`` are unused: the guarantee is the budget's alone.

    The own δ is stated because the ledger books it: the guarantee must never be below the ledger's
    independent re-account (:func:`check_ledger`). Stating ρ alone (ZCDP(ρ, 0), δ′ only) made
    every run at an own budget with δ > 0 (a ρ axis) fail that check for tree_coreset,
    grid_coreset, gauss_fit and dp_lloyd (issue 45). At a row-level target nothing changes: the
    calibration gives such an algorithm no own δ (the whole δ goes to δ′).
    """
    return approx_zcdp_to_dp(ZCDP(budget.rho, budget.delta), delta_prime)


def dp_to_zcdp(eps: float) -> float:
    """ε-DP ⇒ (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    eps = check_scalar(eps, "eps", "dp_to_zcdp", low=0.0, high=MAX_MAGNITUDE)
    return eps * eps / 2.0


def compose_zcdp(*budgets: ZCDP) -> ZCDP:
    """Adaptive composition: ρ and δ add up (Tsfadia et al. 2022, §2)."""
    return ZCDP(sum(b.rho for b in budgets), sum(b.delta for b in budgets))


def compose_dp(*budgets: ApproxDP) -> ApproxDP:
    """Basic composition of (ε, δ)-DP: ε and δ add up."""
    return ApproxDP(sum(b.eps for b in budgets), min(sum(b.delta for b in budgets), 1.0))


def advanced_step_eps(eps_total: float, n_steps: int, delta_hat: float) -> float:
    """Per-step ε so that n-fold composition is ε_total-DP: the larger of basic (ε/n) and the exact
    inverse of advanced composition [DRV10]: √(2n ln(1/δ̂))·ε₀ + n·ε₀(e^{ε₀} − 1) = ε_total [R].
    (The note's closed form ε/(2√(2n ln(2/δ))) is a lower bound on this root for ε ≤ 1.)
    Moved here from ``easy_instances/plan.py`` (issue 45): composition arithmetic lives in
    ``dpviz/privacy/``; Easy Instances' axes compose by it."""
    basic = eps_total / n_steps
    if n_steps == 1 or delta_hat <= 0:
        return basic
    c = math.sqrt(2.0 * n_steps * math.log(1.0 / delta_hat))

    def f(e0: float) -> float:
        return c * e0 + n_steps * e0 * math.expm1(e0) - eps_total

    hi = eps_total
    while f(hi) < 0:
        hi *= 2.0
    adv = brentq(f, 0.0, hi, xtol=1e-15, rtol=1e-13)
    adv = adv * (1.0 - 1e-12)  # never on the wrong side of ε_total
    return max(basic, adv)


def group_privacy_zcdp(rho: float, k: int) -> float:
    """Pure ρ-zCDP for neighbours is k²ρ-zCDP for databases k steps apart (BS16, Prop. 1.9)."""
    k = check_scalar(k, "k", "group_privacy_zcdp", low=1, integer=True)
    return k * k * rho


def group_privacy_dp(budget: ApproxDP, k: int) -> ApproxDP:
    """(ε, δ)-DP is (kε, δ·Σ_{i<k} e^{iε})-DP for databases k steps apart.

    Chaining k neighbour steps. Σ_{i<k} e^{iε} ≤ k·e^{(k−1)ε}, which is tighter than the
    k·e^{kε} quoted in Tsfadia et al. 2022, §2 (both are sound).
    """
    _check_budget(budget, ApproxDP, "budget", "group_privacy_dp")
    k = check_scalar(k, "k", "group_privacy_dp", low=1, integer=True)
    eps = budget.eps
    # Σ_{i<k} e^{iε} in closed form (a sum over k terms would hang for a huge k); δ caps at 1.
    try:
        factor = float(k) if eps == 0.0 else math.expm1(k * eps) / math.expm1(eps)
    except OverflowError:
        factor = math.inf
    delta = 1.0 if budget.delta > 0.0 and factor >= 1.0 / budget.delta else min(budget.delta * factor, 1.0)
    return ApproxDP(k * eps, delta)


def _check_budget(budget: object, kind: type, name: str, func: str) -> None:
    if not isinstance(budget, kind):
        raise TypeError(f"The '{name}' parameter of {func} must be a {kind.__name__} budget. "
                        f"Got {budget!r} instead.")


#: A tuple-unit ledger node whose note holds this states its subtree for REPLACING one tuple (the
#: CKM+21 neighbouring relation, ``easy_instances``): one row costs it once. Any other tuple spend is
#: stated for adding or removing one tuple (FriendlyCore): one row replaces a tuple, two steps.
REPLACE_ONE = "replace-one"


def dp_total(node: Ledger | Spend, *, unit: Unit | None = None, group: int = 1) -> ApproxDP:
    """The (ε, δ)-DP total of a ledger (or one spend) whose spends are all stated in (ε, δ)-DP.

    Sequential nodes compose by basic composition (ε and δ add, δ capped at 1; Dwork & Roth 2014,
    Thm 3.16); parallel nodes act on disjoint data and cost their largest child (largest ε, largest
    δ). ``unit`` keeps only the spends of that unit of privacy. ``group`` is the group-privacy size
    a tuple-unit spend is taken through (:func:`group_privacy_dp`): 1 states the tuple stage per
    tuple (the CKM+21 accounting), 2 per row (one row replaces a tuple: two add/remove steps, as
    in :func:`row_level_statement`); under a :data:`REPLACE_ONE` node it is 1. This is the only
    ledger walker in (ε, δ); a pure ε-DP ledger is one whose total has δ = 0.

    Raises
    ------
    TypeError
        On a zCDP spend (convert it explicitly: :func:`row_level_statement`).
    """
    if isinstance(node, Spend):
        if unit is not None and node.unit != unit:
            return ApproxDP(0.0, 0.0)
        if not isinstance(node.budget, ApproxDP):
            raise TypeError(f"Spend '{node.name}' is {node.budget!r}; dp_total needs (ε, δ)-DP spends.")
        return group_privacy_dp(node.budget, group) if node.unit == "tuple" and group > 1 else node.budget
    if node.unit == "tuple" and REPLACE_ONE in (node.note or ""):
        group = 1
    parts = [dp_total(c, unit=unit, group=group) for c in node.children]
    if not parts:
        return ApproxDP(0.0, 0.0)
    if node.composition == "parallel":
        return ApproxDP(max(p.eps for p in parts), max(p.delta for p in parts))
    return compose_dp(*parts)


def approx_zcdp_to_dp(budget: ZCDP, delta_prime: float, tight: bool = True) -> ApproxDP:
    """(ρ, δ)-zCDP ⇒ (ε(ρ, δ′), δ + δ′)-DP (Tsfadia et al. 2022, §2, from BS16)."""
    _check_budget(budget, ZCDP, "budget", "approx_zcdp_to_dp")
    if budget.rho == 0.0:
        return ApproxDP(0.0, budget.delta)
    return ApproxDP(zcdp_to_dp(budget.rho, delta_prime, tight), min(budget.delta + delta_prime, 1.0))


@dataclass(frozen=True)
class PrivacyStatement:
    """What a pipeline guarantees, two ways.

    ``paper`` is the zCDP total as the paper states it (``paper_dp``: the same converted to
    (ε, δ + δ′)-DP), where the tuple stage is private for
    add/remove of one *tuple* of the derived database. ``row`` is the (ε, δ)-DP guarantee for
    add/remove of one row of the user's data: the tuple stage is taken through group privacy
    (one row replaces one tuple: two add/remove steps), then composed with the row-level stages.
    """

    paper: ZCDP
    paper_dp: ApproxDP
    tuple_stage: ZCDP
    row_stage: ZCDP
    row: ApproxDP
    delta_prime: float
    tight: bool
    lines: tuple[str, ...]

    @property
    def odds_sentence(self) -> str:
        """The row-level ε as a plain-language bound on how much any outcome's odds can move."""
        return odds_sentence(self.row, lower="ρ")


def odds_sentence(row: ApproxDP, *, lower: str = "the budget") -> str:
    """A row-level (ε, δ) as a plain-language bound on how much any outcome's probability can move
    (the definition of (ε, δ)-DP, Dwork & Roth 2014, Def. 2.4, read for one added or removed row).
    One sentence for every algorithm: FriendlyCore's statement and any run's budget plan
    (``dpviz.registry.plan``) word it alike; ``lower`` names the control a vacuous guarantee asks
    the user to lower."""
    if row.vacuous:
        return ("At this budget the row-level guarantee is vacuous (δ = 1): one row's influence "
                f"is not bounded. Lower {lower} to get a meaningful guarantee.")
    factor = math.exp(min(row.eps, 700.0))
    return (
        f"Adding or removing any one row changes the probability of any outcome by at most a "
        f"factor of {factor:.3g} (e^ε), except with probability {row.delta:.2g} (δ)."
    )


def _split_epsilons(rho_t: float, rho_r: float, dts: list[float], drs: list[float],
                    tight: bool) -> tuple[np.ndarray, np.ndarray]:
    """ε of the tuple stage at each δ′_T and of the row stages at each δ′_R
    (:func:`zcdp_to_dp` of each, the tight ones in one :func:`_zcdp_to_dp_many` call)."""
    m = len(dts)
    if not tight:
        return (np.array([zcdp_to_dp(rho_t, d, False) if rho_t > 0 else 0.0 for d in dts]),
                np.array([zcdp_to_dp(rho_r, d, False) if rho_r > 0 else 0.0 for d in drs]))
    for value, name in ((rho_t, "rho"), (rho_r, "rho")):
        check_scalar(value, name, "zcdp_to_dp", low=0.0, high=MAX_MAGNITUDE)
    for d in (*dts, *(drs if rho_r > 0 else ())):
        check_scalar(d, "delta", "zcdp_to_dp", low=0.0, high=1.0, low_open=True, high_open=True)
    rhos = np.concatenate([np.full(m, rho_t), np.full(m, rho_r)])
    deltas = np.concatenate([dts, drs if rho_r > 0 else np.full(m, 0.5)])
    eps = _zcdp_to_dp_many(rhos, deltas)
    return eps[:m], eps[m:]


def explained_statement(ledger: Ledger, delta_prime: float, row: ApproxDP | None = None) -> PrivacyStatement:
    """:func:`row_level_statement` with its explanation lines, its ``row`` being ``row`` when given:
    a run's re-accounted statement (``Result.statement``, the one number every surface shows;
    the same computation, so the same number)."""
    stmt = row_level_statement(ledger, delta_prime)
    return stmt if row is None else dataclasses.replace(stmt, row=row)


def row_level_statement(ledger: Ledger, delta_prime: float, *, tight: bool = True) -> PrivacyStatement:
    """State the ledger's guarantee for one row of the user's data.

    Spends with ``unit == "tuple"`` come from sample-and-aggregate: each row is assigned to one
    piece independently, so adding or removing a row *replaces* one tuple, i.e. two add/remove
    steps of the tuple database. That stage is converted to (ε_T, δ_T + δ′_T)-DP and taken
    through group privacy with k = 2; the row-level stages are converted with δ′_R and composed.
    δ′ = δ′_T + δ′_R is split to minimise the total ε.
    """
    delta_prime = check_scalar(delta_prime, "delta_prime", "row_level_statement", low=0.0, high=1.0,
                               low_open=True, high_open=True)
    if not ledger.has_guarantee():
        raise ValueError(
            f"row_level_statement: the ledger '{ledger.name}' holds a step with no proven guarantee "
            "(App. B sampled counts or unpatched diffprivlib); no privacy statement can be made."
        )
    tup = ledger.total("tuple")
    row = ledger.total("row")
    paper = ledger.total()
    if tup.rho == 0.0 and tup.delta == 0.0:
        stmt = approx_zcdp_to_dp(row, delta_prime, tight)
        lines = (
            f"Every release is private for one row: {paper} by composition.",
            f"Converted to (ε, δ)-DP with δ′ = {delta_prime:.2g}: ε = {stmt.eps:.4g}, δ = {stmt.delta:.3g}.",
        )
        return PrivacyStatement(paper, stmt, tup, row, stmt, delta_prime, tight, lines)

    best: tuple[float, ApproxDP, ApproxDP, ApproxDP] | None = None
    fractions = [0.5] if row.rho == 0.0 else np.linspace(0.05, 0.95, 19)
    dts = [delta_prime * (1.0 if row.rho == 0.0 else f) for f in fractions]
    drs = [delta_prime - dt for dt in dts]
    # Every conversion of the δ′ split in one vectorised pass (the same ε as zcdp_to_dp each).
    t_eps, r_eps = _split_epsilons(tup.rho, row.rho, dts, drs, tight)
    for dt, dr, te, re_ in zip(dts, drs, t_eps, r_eps, strict=True):
        t_dp = (ApproxDP(0.0, tup.delta) if tup.rho == 0.0
                else ApproxDP(float(te), min(tup.delta + dt, 1.0)))
        t_group = group_privacy_dp(t_dp, 2)
        r_dp = ApproxDP(float(re_), min(row.delta + dr, 1.0)) if row.rho > 0 else ApproxDP(0.0, row.delta)
        total = compose_dp(t_group, r_dp)
        if best is None or total.eps < best[0]:
            best = (total.eps, total, t_dp, t_group)
    assert best is not None
    _, total, t_dp, t_group = best
    vacuous = (
        ("At this budget the row-level δ reaches 1: group privacy amplifies the tuple stage's δ by "
         "e^ε, so the row-level statement promises nothing. Lower ρ for a meaningful guarantee.",)
        if total.vacuous else ()
    )
    lines = (
        f"Paper's statement: {paper} (the tuple stage counted per tuple, Thm 5.4).",
        f"Tuple stage {tup} → {t_dp} for one tuple; one row replaces one tuple (2 steps), so by "
        f"group privacy {t_group} per row.",
        f"Row-level stages {row}, composed: ({total.eps:.4g}, {total.delta:.3g})-DP for one row.",
        *vacuous,
    )
    paper_dp = approx_zcdp_to_dp(paper, delta_prime, tight)
    return PrivacyStatement(paper, paper_dp, tup, row, total, delta_prime, tight, lines)


# ----------------------------------------------------------------------------- budget arithmetic
# The ρ ↔ ε rule of a ρ axis, the δ split a calibration tries, and the "within target" test: moved
# here from dpviz/registry.py (issue 45, item 2) so that every piece of composition and conversion
# arithmetic lives in dpviz/privacy/.


def within(g: ApproxDP, epsilon: float, delta: float) -> bool:
    """Whether the guarantee ``g`` is within the target (ε, δ) (a relative float slack of 10⁻¹²)."""
    return g.eps <= epsilon * (1 + 1e-12) and g.delta <= delta * (1 + 1e-12)


def pure_eps_for_rho(rho: float) -> float:
    """The pure ε that costs ρ of zCDP: ε-DP ⇒ ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4), so ε = √(2ρ)."""
    rho = check_scalar(rho, "rho", "pure_eps_for_rho", low=0.0, high=MAX_MAGNITUDE)
    return math.sqrt(2.0 * rho)


def bounded_range_eps(rho: float) -> float:
    """The ε of an ε-bounded-range mechanism (the exponential mechanism) that costs ρ of zCDP:
    ε-bounded range ⇒ ε²/8-zCDP (Cesar & Rogers 2021, Lemma 3.2), so ε = √(8ρ)."""
    rho = check_scalar(rho, "rho", "bounded_range_eps", low=0.0, high=MAX_MAGNITUDE, low_open=True)
    return math.sqrt(8.0 * rho)


def budget_from_rho(kind: str, rho: float, delta: float) -> ZCDP | ApproxDP | None:
    """The own budget at a point of a ρ axis (the ρ-sweeps): ZCDP(ρ, δ) for a zCDP algorithm, pure
    ε = √(2ρ) for a pure one (:func:`pure_eps_for_rho`), None for a reference. An approximate-DP
    algorithm has no ρ (ValueError: give it a row-level target)."""
    if kind == "zcdp":
        return ZCDP(float(rho), float(delta))
    if kind == "pure":
        return ApproxDP(pure_eps_for_rho(float(rho)), 0.0)
    if kind == "none":
        return None
    raise ValueError("An algorithm with an (ε, δ) budget of its own has no ρ: compare it at a row-level "
                     "target (dpviz.registry.plan).")


def _logistic(x: float) -> float:
    """1/(1 + e^{−x}), finite for every float x."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def delta_allocations(kind: str, epsilon: float, delta: float) -> list[tuple[float, float]]:
    """Candidate (the algorithm's own δ, the conversion slack δ′) splits of a row-level δ, tried by
    :func:`dpviz.registry.calibrate`.

    A replaced tuple multiplies δ by at most 1 + e^ε (group privacy of size 2), so
    δ/(2(1 + e^ε)) for each keeps a sample-and-aggregate algorithm within δ; a row-level
    algorithm that needs no δ of its own can give the whole δ to the conversion.
    """
    if kind == "pure":
        return [(0.0, 0.0)]
    g = 0.5 * delta * _logistic(-epsilon)  # δ/(2(1 + e^ε)), without e^ε overflowing at large ε
    if kind == "approx":
        return [(g, 0.0), (delta / 2.0, 0.0)]
    return [(g, g), (delta / 4.0, delta / 4.0), (0.0, delta)]


# ----------------------------------------------------------------------------- re-accounting


#: Relative slack of :func:`check_ledger` (float sums and the calibration's own 10⁻⁵ search width
#: are far below it; a real overspend is not).
LEDGER_RTOL = 1e-6


class LedgerOverTargetError(RuntimeError):
    """A run's ledger, re-accounted on its own, states more than its plan's target: a bug in the
    algorithm's budget split or its guarantee, never a user error (it fails loudly)."""


def _dp_only(node: Ledger | Spend) -> bool:
    """Whether every spend under ``node`` is stated in (ε, δ)-DP (pure or approximate)."""
    if isinstance(node, Spend):
        return isinstance(node.budget, ApproxDP)
    return all(_dp_only(c) for c in node.children)


def reaccount(ledger: Ledger, delta_prime: float) -> ApproxDP | None:
    """The row-level (ε, δ) of a run read from its LEDGER alone (not from the plan's guarantee).

    DP-stated subtrees (a Laplace count, a pure-DP family) compose in (ε, δ)-DP; the rest of a
    sequential root is stated by :func:`row_level_statement` (zCDP with the plan's δ′, tuple spends
    through group privacy); the two compose by basic composition. None when the ledger holds a
    step with no proven guarantee (no statement can be made from it).
    """
    if not ledger.has_guarantee():
        return None
    if _dp_only(ledger):
        return dp_total(ledger, group=2)
    dp_parts: list[Ledger | Spend] = []
    rest: list[Ledger | Spend] = list(ledger.children)
    if ledger.composition == "sequential":
        dp_parts = [c for c in ledger.children if _dp_only(c)]
        rest = [c for c in ledger.children if not _dp_only(c)]
    zc = Ledger(ledger.name, None, ledger.composition, ledger.unit, ledger.note, children=rest)
    if delta_prime <= 0.0:
        raise LedgerOverTargetError(f"The ledger '{ledger.name}' holds zCDP spends but its plan has no "
                                    "δ′ to state them with: the plan and the run disagree.")
    parts = [row_level_statement(zc, delta_prime).row, *(dp_total(c, group=2) for c in dp_parts)]
    return compose_dp(*parts)


def check_ledger(ledger: Ledger, the_plan: Any) -> ApproxDP | None:
    """Re-account a run's ledger independently and raise if it states more than ``plan.target``.

    Like Google's clustering library (``privacy_calculator.py``), which derives every noise
    parameter once and then re-accounts them: the plan (a :class:`~dpviz.privacy.plan.BudgetPlan`)
    was computed from public inputs before the run; the ledger is what the mechanisms recorded
    while running. Each node's own budget is checked too (:meth:`Ledger.check`). Returns the
    re-accounted (ε, δ) (None for a reference or a ledger with no proven guarantee): the number
    :func:`dpviz.run` puts on ``Result.statement`` and every surface shows.

    Raises
    ------
    LedgerOverTargetError
        When the re-accounted ε or δ is above the target (or, with no target, the plan's guarantee).
    """
    ledger.check()
    bound = the_plan.target if the_plan.target is not None else the_plan.guarantee
    if bound is None or not the_plan.is_private:
        return None
    got = reaccount(ledger, the_plan.delta_prime)
    if got is None:
        return None
    if (got.eps > bound.eps * (1 + LEDGER_RTOL) + 1e-12
            or got.delta > bound.delta * (1 + LEDGER_RTOL) + 1e-300):
        raise LedgerOverTargetError(
            f"The run of '{the_plan.algorithm}' spent {got} by its own ledger, above its plan's target "
            f"{bound}: this is a bug in the algorithm's budget split or guarantee, not a user error.")
    return got
