"""Privacy budgets: δ-approximate ρ-zCDP and (ε, δ)-DP, with named splits.

References: Bun & Steinke 2016 (zCDP); Tsfadia et al. 2022, §2 (the (ρ, δ)-zCDP they use,
with ξ = 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

_TOL = 1e-12


def _check_fractions(fractions: Mapping[str, float], what: str) -> None:
    if not fractions:
        raise ValueError(f"The {what} fractions of a budget split must name at least one part.")
    for name, f in fractions.items():
        if not (isinstance(f, (int, float)) and math.isfinite(f) and f >= 0):
            raise ValueError(
                f"The {what} fraction '{name}' of a budget split must be a float in [0, 1]. Got {f!r}."
            )
    total = sum(fractions.values())
    if total > 1 + _TOL:
        parts = ", ".join(f"{k}={v:g}" for k, v in fractions.items())
        raise ValueError(
            f"The {what} fractions of a budget split must sum to at most 1. Got {total:g} ({parts})."
        )


@dataclass(frozen=True)
class ZCDP:
    """A δ-approximate ρ-zCDP budget (Tsfadia et al. 2022, Def. 2.3; ξ = 0).

    ``delta = 0`` is pure ρ-zCDP (Bun & Steinke 2016).
    """

    rho: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.rho, (int, float)) and math.isfinite(self.rho) and self.rho >= 0):
            raise ValueError(f"The 'rho' of a ZCDP budget must be a float in [0, inf). Got {self.rho!r}.")
        if not (isinstance(self.delta, (int, float)) and 0 <= self.delta < 1):
            raise ValueError(f"The 'delta' of a ZCDP budget must be a float in [0, 1). Got {self.delta!r}.")

    def split(
        self, rho: Mapping[str, float], delta: Mapping[str, float] | None = None
    ) -> dict[str, ZCDP]:
        """Split by named fractions; ``delta`` fractions default to the ``rho`` ones.

        Parts named in only one mapping get 0 of the other resource. Fractions may sum to less
        than 1 (the rest is unspent) but never more.
        """
        delta = rho if delta is None else delta
        _check_fractions(rho, "rho")
        _check_fractions(delta, "delta")
        names = list(dict.fromkeys([*rho, *delta]))
        return {n: ZCDP(self.rho * rho.get(n, 0.0), self.delta * delta.get(n, 0.0)) for n in names}

    def __add__(self, other: ZCDP) -> ZCDP:
        return ZCDP(self.rho + other.rho, self.delta + other.delta)

    def __str__(self) -> str:
        return f"(ρ={self.rho:.4g}, δ={self.delta:.3g})-zCDP"


@dataclass(frozen=True)
class ApproxDP:
    """An (ε, δ)-DP budget."""

    eps: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.eps, (int, float)) and math.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(
                f"The 'eps' of an ApproxDP budget must be a float in [0, inf). Got {self.eps!r}."
            )
        # δ = 1 is allowed: it is the (vacuous) statement that composition or group privacy
        # can reach at very large budgets, and it must be shown, not crash.
        if not (isinstance(self.delta, (int, float)) and 0 <= self.delta <= 1):
            raise ValueError(
                f"The 'delta' of an ApproxDP budget must be a float in [0, 1]. Got {self.delta!r}."
            )

    def split(
        self, eps: Mapping[str, float], delta: Mapping[str, float] | None = None
    ) -> dict[str, ApproxDP]:
        """Split by named fractions, as :meth:`ZCDP.split`."""
        delta = eps if delta is None else delta
        _check_fractions(eps, "eps")
        _check_fractions(delta, "delta")
        names = list(dict.fromkeys([*eps, *delta]))
        return {n: ApproxDP(self.eps * eps.get(n, 0.0), self.delta * delta.get(n, 0.0)) for n in names}

    @property
    def vacuous(self) -> bool:
        """True when δ = 1: the statement promises nothing."""
        return self.delta >= 1.0

    def to_zcdp(self) -> ZCDP:
        """(ε, δ)-DP ⇒ (ε²/2, δ)-zCDP (Tsfadia et al. 2022, Fact 2.2; Bun & Steinke 2016, Prop. 1.4)."""
        return ZCDP(self.eps**2 / 2.0, self.delta)

    def __str__(self) -> str:
        return f"(ε={self.eps:.4g}, δ={self.delta:.3g})-DP"
