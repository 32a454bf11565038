"""Calibration and plan: the one budget ↔ row-level translation of the code base (issue 26).

:func:`calibrate` finds the largest own budget whose row-level guarantee is within a target;
:func:`plan` is a run's :class:`~dpviz.privacy.plan.BudgetPlan` at a row-level (ε, δ) target and
:func:`plan_at_budget` the plan at a given own budget. Public inputs only. The arithmetic (the δ
splits, the ρ rule, "within") is :mod:`dpviz.privacy.accounting`'s.

One of the three parts of :mod:`dpviz.registry` (issue 45); import from :mod:`dpviz.registry`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from dpviz.privacy.accounting import budget_from_rho, compose_dp, delta_allocations, within
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.plan import BudgetPlan
from dpviz.specs import AlgorithmSpec, Budget, Calibration, Public, get

#: Share of the row-level ε spent on a DP count of the rows when no size is declared.
COUNT_EPS_FRACTION = 0.02


# ----------------------------------------------------------------------------- calibration


#: Relative width at which the budget search stops (the guarantee is then within 10⁻⁵ of target).
CALIBRATION_RTOL = 1e-5


def calibrate(spec: AlgorithmSpec, epsilon: float, delta: float, pub: Public, params: Any) -> Calibration:
    """The largest budget of ``spec``'s kind whose row-level guarantee is within (ε, δ).

    For each candidate split of δ between the algorithm's own δ and the conversion slack δ′
    (:func:`~dpviz.privacy.accounting.delta_allocations`), the scalar (ρ or ε) is found by
    bisection in log space on the spec's ``guarantee``; the allocation giving the largest budget wins.

    Raises
    ------
    ValueError
        When even a tiny budget does not meet the target (e.g. a δ below what the mechanism needs).
    """
    return _calibrate_cached(spec, float(epsilon), float(delta), pub, params)


@functools.lru_cache(maxsize=1024)
def _calibrate_cached(spec: AlgorithmSpec, epsilon: float, delta: float, pub: Public,
                      params: Any) -> Calibration:
    """:func:`calibrate`, memoized: it is a pure function of public, hashable inputs."""
    if spec.feasible is not None:
        spec.feasible(pub, params)  # declared values only: raises before any row is read
    if spec.calibrate is not None:
        cal = spec.calibrate(epsilon, delta, pub, params)
        if cal.guarantee is not None and not within(cal.guarantee, epsilon, delta):
            raise RuntimeError(f"{spec.name}'s calibration returned {cal.guarantee}, above the target.")
        return cal
    if spec.budget_kind == "none":
        return Calibration(None, 0.0, None)
    best: Calibration | None = None
    for share, slack in delta_allocations(spec.budget_kind, epsilon, delta):
        cal = _bisect(spec, epsilon, delta, pub, params, share, slack)
        if cal is not None and (best is None or _scalar(cal.budget) > _scalar(best.budget)):
            best = cal
    if best is None:
        raise ValueError(
            f"{spec.title} cannot meet the row-level target (ε={epsilon:g}, δ={delta:g}) at any "
            "budget: raise δ or ε."
        )
    return best


def _scalar(budget: Budget | None) -> float:
    return budget.rho if isinstance(budget, ZCDP) else budget.eps if budget is not None else 0.0


def _bisect(spec: AlgorithmSpec, epsilon: float, delta: float, pub: Public, params: Any,
            share: float, slack: float) -> Calibration | None:
    """The largest scalar budget (ρ or ε) with this δ allocation whose guarantee is within target."""

    def budget(x: float) -> Budget:
        return ZCDP(x, share) if spec.budget_kind == "zcdp" else ApproxDP(x, share)

    def ok(x: float) -> bool:
        try:
            return within(spec.guarantee(budget(x), pub, params, slack), epsilon, delta)
        except (ValueError, ArithmeticError):  # e.g. a δ of 0 where the algorithm needs one
            return False

    lo, hi = 1e-12, max(epsilon, 1.0)
    if not ok(lo):
        return None
    while ok(hi):
        lo, hi = hi, hi * 4.0
        if hi > 1e8:
            break
    while hi / lo > 1 + CALIBRATION_RTOL:  # bisection in log space
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return Calibration(budget(lo), slack, spec.guarantee(budget(lo), pub, params, slack))


# ----------------------------------------------------------------------------- the plan


def _spec_and_params(name: str | AlgorithmSpec, params: Any) -> tuple[AlgorithmSpec, Any]:
    spec = name if isinstance(name, AlgorithmSpec) else get(name)
    if params is None:
        params = spec.make_params()
    elif isinstance(params, dict):
        params = spec.make_params(**params)
    return spec, params


def plan(name: str | AlgorithmSpec, epsilon: float, delta: float, pub: Public, params: Any = None,
         *, count: bool = False) -> BudgetPlan:
    """THE budget plan of a run at the row-level target (ε, δ), without running anything.

    The one budget ↔ row-level translation of the code base (issue 26): :func:`run` carries this
    plan on ``Result.plan``; the release export, the command line, the sweeps and the app's
    readouts read it. Public inputs only (``pub``, ``params``), so a slider can call it.

    Parameters
    ----------
    name : str or AlgorithmSpec
    epsilon, delta : float
        The row-level target (add/remove one row).
    pub : Public
        The declared size (with ``count``: the noisy count that stands in for it), d, k, Λ.
    params : dataclass, dict or None
        The spec's parameters (None: the defaults).
    count : bool
        No size was declared: ``COUNT_EPS_FRACTION`` of ε pays for a Laplace count of the rows
        and the algorithm is calibrated to the rest (basic composition).

    Raises
    ------
    ValueError
        When no budget meets the target (the message names the declared inputs to change).
    """
    spec, p = _spec_and_params(name, params)
    epsilon, delta = float(epsilon), float(delta)
    count = bool(count) and spec.is_private
    count_eps = COUNT_EPS_FRACTION * epsilon if count else 0.0
    cal = calibrate(spec, epsilon - count_eps, delta, pub, p)
    g = cal.guarantee
    if g is not None and count:
        g = compose_dp(ApproxDP(count_eps, 0.0), g)
    return dataclasses.replace(cal, algorithm=spec.name, target=ApproxDP(epsilon, delta), guarantee=g,
                               count_eps=count_eps, algorithm_guarantee=cal.guarantee,
                               size_source="dp_count" if count else "declared")


def plan_at_budget(name: str | AlgorithmSpec, budget: Budget, pub: Public, params: Any = None, *,
                   delta_prime: float | None = None) -> BudgetPlan:
    """The plan of a run at a GIVEN own budget (a ρ slider): its row-level guarantee.

    A zCDP budget (ρ, δ) converts with δ′ = δ unless ``delta_prime`` is given (the convention of
    Explore's readout, whose run spends (ρ, δ) and states its ledger with δ′ = δ); a pure or
    approximate DP budget needs no δ′.
    """
    spec, p = _spec_and_params(name, params)
    if not spec.is_private:
        return BudgetPlan(None, 0.0, None, algorithm=spec.name)
    dp = float(budget.delta if delta_prime is None else delta_prime) if isinstance(budget, ZCDP) else 0.0
    g = spec.guarantee(budget, pub, p, dp)
    return BudgetPlan(budget, dp, g, algorithm=spec.name, algorithm_guarantee=g)


def plan_at_rho(name: str | AlgorithmSpec, rho: float, delta: float, pub: Public,
                params: Any = None) -> BudgetPlan:
    """The plan at a point ρ of a ρ axis (an old link's ρ, the ρ-sweeps, a typed ρ): the own budget
    :func:`~dpviz.privacy.accounting.budget_from_rho` gives and its row-level guarantee
    (:func:`plan_at_budget`, δ′ = δ). A reference has no budget; an approximate-DP algorithm has no
    ρ (ValueError)."""
    spec, p = _spec_and_params(name, params)
    if not spec.is_private:
        return plan_at_budget(spec, None, pub, p)
    return plan_at_budget(spec, budget_from_rho(spec.budget_kind, float(rho), float(delta)), pub, p)
