"""One budget plan per run: the algorithm's own budget, δ′, and the row-level guarantee, stated once.

A registered algorithm is asked for a ROW-LEVEL target (ε, δ) (add/remove one row of the user's
data). Its calibration (``dpviz.registry.plan``) turns that target into a :class:`BudgetPlan`:

* ``budget``: the algorithm's own budget (ρ-zCDP with its own δ, or pure/approximate ε-DP);
* ``delta_prime``: the slack δ′ its zCDP → (ε, δ)-DP conversion uses (0 for a pure or approximate
  DP budget);
* ``count_eps``: the ε spent on a Laplace count of the rows when no size was declared (0 when
  the size is declared), composed with the algorithm's guarantee by basic composition;
* ``guarantee``: the row-level ApproxDP of the whole run (count included), within the target;
* ``lines``: the statement in words, computed from these fields only.

Every surface (the library's ``Result.plan``, the release export, the command line, the app's
readouts and axes) reads this one object; nothing else converts between budgets and row-level
statements. The plan depends on public inputs only (declared n, d, k, Λ, the parameters).

References: Bun & Steinke 2016, Prop. 1.3/1.4 (zCDP ↔ DP); Canonne, Kamath & Steinke 2020,
Cor. 13 (tight conversion); Dwork & Roth 2014, Thm 3.16 (basic composition).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpviz.privacy.budget import ZCDP, ApproxDP


def own_budget(budget: Any) -> Any:
    """The budget itself, or the calibrated budget inside a chooser's (``auto``'s) budget."""
    inner = getattr(budget, "calibration", None) if budget is not None else None
    return own_budget(inner.budget) if isinstance(inner, BudgetPlan) else budget


def _budget_text(budget: Any) -> str:
    chosen = getattr(getattr(budget, "choice", None), "algorithm", None)
    if chosen is not None:
        return f"{_budget_text(own_budget(budget))} (the public choice: {chosen})"
    if isinstance(budget, ZCDP):
        return f"ρ = {budget.rho:.4g} zCDP with its own δ = {budget.delta:.3g}"
    if isinstance(budget, ApproxDP):
        return (f"ε = {budget.eps:.4g} (pure ε-DP)" if budget.delta == 0.0
                else f"(ε = {budget.eps:.4g}, δ = {budget.delta:.3g})-DP")
    return str(budget)


@dataclass(frozen=True)
class BudgetPlan:
    """The budget of one run and the row-level guarantee it gives (see the module docstring).

    The first three fields are positional so a spec's own ``calibrate`` can return
    ``BudgetPlan(budget, delta_prime, guarantee)``; :func:`dpviz.registry.plan` fills the rest.

    Attributes
    ----------
    budget : ZCDP, ApproxDP or None
        The algorithm's own budget (None for a non-private reference).
    delta_prime : float
        The δ′ of the zCDP → DP conversion inside ``algorithm_guarantee``.
    guarantee : ApproxDP or None
        The row-level (ε, δ)-DP of the whole run: the algorithm's guarantee composed with the
        DP count when there is one. None for a non-private reference.
    algorithm : str
        The registered name.
    target : ApproxDP or None
        The row-level target asked for (None when the plan states the guarantee of a given
        budget, :func:`dpviz.registry.plan_at_budget`).
    count_eps : float
        The pure ε of the DP count of the rows (0 when the size is declared).
    algorithm_guarantee : ApproxDP or None
        The algorithm's own row-level guarantee, before the count is composed in.
    size_source : str
        "declared" (a public size, free) or "dp_count" (paid with ``count_eps``).
    """

    budget: Any
    delta_prime: float
    guarantee: ApproxDP | None
    algorithm: str = ""
    target: ApproxDP | None = None
    count_eps: float = 0.0
    algorithm_guarantee: ApproxDP | None = None
    size_source: str = "declared"

    @property
    def is_private(self) -> bool:
        return self.guarantee is not None

    @property
    def lines(self) -> tuple[str, ...]:
        """The statement in words, from the plan's fields only (no ledger, no data)."""
        if self.guarantee is None:
            return ("A non-private reference: no privacy guarantee.",)
        own = self.algorithm_guarantee or self.guarantee
        out = [f"The algorithm's own budget: {_budget_text(self.budget)}."]
        if isinstance(own_budget(self.budget), ZCDP):
            out.append(f"Row-level guarantee of the algorithm (add/remove one row), converted with "
                       f"δ′ = {self.delta_prime:.3g}: ({own.eps:.4g}, {own.delta:.3g})-DP.")
        elif own.delta == 0.0:
            out.append(f"Row-level guarantee of the algorithm (add/remove one row): ε = {own.eps:.4g}, "
                       "pure DP (δ = 0).")
        else:
            out.append(f"Row-level guarantee of the algorithm (add/remove one row): "
                       f"({own.eps:.4g}, {own.delta:.3g})-DP.")
        if self.size_source == "dp_count":
            out.append(f"No size was declared: a Laplace count of the rows costs ε = {self.count_eps:.4g}; "
                       f"composed (basic composition): ({self.guarantee.eps:.4g}, "
                       f"{self.guarantee.delta:.3g})-DP for one row.")
        if self.target is not None:
            t = self.target
            out.append(f"Within the row-level target (ε = {t.eps:.4g}, δ = {t.delta:.3g}).")
        return tuple(out)

    def as_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready values (the release export and the command line write this)."""
        b = own_budget(self.budget)
        budget = (None if b is None else {"kind": "zcdp", "rho": b.rho, "delta": b.delta}
                  if isinstance(b, ZCDP) else {"kind": "dp", "epsilon": b.eps, "delta": b.delta}
                  if isinstance(b, ApproxDP) else {"kind": type(b).__name__, "text": str(b)})
        g, a = self.guarantee, self.algorithm_guarantee
        return {
            "algorithm": self.algorithm,
            "epsilon": None if g is None else g.eps,
            "delta": None if g is None else g.delta,
            "target": None if self.target is None else {"epsilon": self.target.eps,
                                                        "delta": self.target.delta},
            "budget": budget,
            "delta_prime": self.delta_prime,
            "count_epsilon": self.count_eps,
            "size_source": self.size_source,
            "algorithm_guarantee": None if a is None else {"epsilon": a.eps, "delta": a.delta},
            "lines": list(self.lines),
        }


__all__ = ["BudgetPlan", "own_budget"]
