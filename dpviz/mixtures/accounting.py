"""(ε, δ)-DP totals of a ledger whose spends are all ApproxDP.

``Ledger.total()`` composes in zCDP (ε-DP counts as ε²/2-zCDP), which is lossy for an (ε, δ)-DP
algorithm; this walks the same tree with basic composition (sequential: ε and δ add up) and
parallel composition (disjoint parts of the data: the largest ε and the largest δ).
"""

from __future__ import annotations

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger, Spend


def approx_dp_total(ledger: Ledger) -> ApproxDP:
    """Compose the tree of ApproxDP spends (TypeError on a zCDP spend: convert it explicitly)."""
    parts: list[ApproxDP] = []
    for c in ledger.children:
        if isinstance(c, Spend):
            if not isinstance(c.budget, ApproxDP):
                raise TypeError(f"Spend '{c.name}' is {c.budget}; approx_dp_total needs ApproxDP spends.")
            parts.append(c.budget)
        else:
            parts.append(approx_dp_total(c))
    if not parts:
        return ApproxDP(0.0, 0.0)
    if ledger.composition == "parallel":
        return ApproxDP(max(p.eps for p in parts), max(p.delta for p in parts))
    return ApproxDP(sum(p.eps for p in parts), min(sum(p.delta for p in parts), 1.0))
