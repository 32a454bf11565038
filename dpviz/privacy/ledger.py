"""The privacy ledger: a tree of spends mirroring an algorithm's calls.

Every mechanism records what it spent here (name, budget, sensitivity, noise scale, unit of
privacy). ``Ledger.total()`` composes the tree: children of a ``"sequential"`` node add up
(adaptive composition of zCDP, Bun & Steinke 2016, Lemma 2.3); children of a ``"parallel"`` node
act on disjoint parts of the data, so the node costs the largest child (parallel composition,
as in NoisyLloydStep, Tsfadia et al. 2022, §5.2.4).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from dpviz.privacy.budget import ZCDP, ApproxDP

Unit = Literal["row", "tuple"]
Composition = Literal["sequential", "parallel"]

#: A ledger whose node or spend note contains this (any case) has no proven guarantee (App. B
#: sampled counts, unpatched diffprivlib): no privacy statement may be made from it.
NO_GUARANTEE = "no proven guarantee"

#: Relative slack allowed when checking a total against the budget handed in (float sums).
TOTAL_RTOL = 1e-9


@dataclass(frozen=True)
class Spend:
    """One release (or one failure-probability event) and what it cost.

    ``budget`` is the accounted cost. ``noise_scale`` is the standard deviation (Gaussian) or
    scale (Laplace) actually drawn; ``sensitivity`` the one it was calibrated to. A δ-only
    spend (``mechanism == "event"``) is the failure probability of a high-probability event a
    proof conditions on (e.g. n̂ ≥ n in zCDPFilter).
    """

    name: str
    mechanism: str
    budget: ZCDP | ApproxDP
    unit: Unit = "row"
    sensitivity: float | None = None
    noise_scale: float | None = None
    note: str = ""

    def zcdp(self) -> ZCDP:
        """This spend as δ-approximate zCDP (ε-DP counts as ε²/2-zCDP)."""
        return self.budget.to_zcdp() if isinstance(self.budget, ApproxDP) else self.budget


@dataclass
class Ledger:
    """A node of the spend tree. Create the root with the caller's budget and pass it down."""

    name: str
    budget: ZCDP | None = None
    composition: Composition = "sequential"
    unit: Unit = "row"
    note: str = ""
    children: list[Ledger | Spend] = field(default_factory=list)

    def child(
        self,
        name: str,
        budget: ZCDP | None = None,
        *,
        composition: Composition = "sequential",
        unit: Unit | None = None,
        note: str = "",
    ) -> Ledger:
        """Open a sub-ledger for a sub-call (its unit defaults to this node's)."""
        node = Ledger(name, budget, composition, unit or self.unit, note)
        self.children.append(node)
        return node

    def record(
        self,
        name: str,
        mechanism: str,
        budget: ZCDP | ApproxDP,
        *,
        sensitivity: float | None = None,
        noise_scale: float | None = None,
        note: str = "",
    ) -> Spend:
        """Record one spend at this node (with this node's unit of privacy)."""
        spend = Spend(name, mechanism, budget, self.unit, sensitivity, noise_scale, note)
        self.children.append(spend)
        return spend

    def record_event(self, name: str, delta: float, note: str = "") -> Spend:
        """Record the δ of a high-probability event the privacy proof conditions on."""
        return self.record(name, "event", ZCDP(0.0, delta), note=note)

    def total(self, unit: Unit | None = None) -> ZCDP:
        """Compose the subtree; with ``unit``, only the spends of that unit of privacy."""
        parts = []
        for c in self.children:
            if isinstance(c, Spend):
                if unit is None or c.unit == unit:
                    parts.append(c.zcdp())
            else:
                parts.append(c.total(unit))
        if not parts:
            return ZCDP(0.0, 0.0)
        if self.composition == "parallel":
            return ZCDP(max(p.rho for p in parts), max(p.delta for p in parts))
        return ZCDP(sum(p.rho for p in parts), sum(p.delta for p in parts))

    def check(self) -> None:
        """Raise if any node spent more than the budget it was handed (fail loudly)."""
        for node in self.nodes():
            if node.budget is None:
                continue
            t = node.total()
            if t.rho > node.budget.rho * (1 + TOTAL_RTOL) + 1e-15 or t.delta > node.budget.delta * (
                1 + TOTAL_RTOL
            ) + 1e-300:
                raise RuntimeError(
                    f"Ledger node '{node.name}' spent {t} but was handed {node.budget}: "
                    "this is a bug in the algorithm's budget split."
                )

    def has_guarantee(self) -> bool:
        """False if any node or spend is marked :data:`NO_GUARANTEE` (keep it out of statements)."""
        notes = [n.note for n in self.nodes()] + [s.note for _, s in self.spends()]
        return not any(NO_GUARANTEE in (note or "").lower() for note in notes)

    def nodes(self) -> Iterator[Ledger]:
        """Every sub-ledger, depth first, this one included."""
        yield self
        for c in self.children:
            if isinstance(c, Ledger):
                yield from c.nodes()

    def spends(self, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Spend]]:
        """Every leaf spend with the path of node names leading to it."""
        here = (*path, self.name)
        for c in self.children:
            if isinstance(c, Spend):
                yield here, c
            else:
                yield from c.spends(here)

    def to_rows(self) -> list[dict]:
        """Flat rows (id, parent, label, ρ, δ, σ, unit, mechanism) for treemaps and tables.

        Node ρ and δ are the composed totals of their subtree, so a sunburst with
        ``branchvalues='total'`` is consistent for sequential nodes.
        """
        rows: list[dict] = []

        def walk(node: Ledger, parent: str, prefix: str) -> None:
            nid = f"{prefix}/{node.name}" if prefix else node.name
            t = node.total()
            rows.append(
                dict(id=nid, parent=parent, label=node.name, rho=t.rho, delta=t.delta,
                     noise_scale=None, sensitivity=None, unit=node.unit,
                     mechanism=f"{node.composition} composition", note=node.note)
            )
            for i, c in enumerate(node.children):
                if isinstance(c, Ledger):
                    walk(c, nid, nid)
                else:
                    z = c.zcdp()
                    rows.append(
                        dict(id=f"{nid}/{i}:{c.name}", parent=nid, label=c.name, rho=z.rho,
                             delta=z.delta, noise_scale=c.noise_scale, sensitivity=c.sensitivity,
                             unit=c.unit, mechanism=c.mechanism, note=c.note)
                    )

        walk(self, "", "")
        return rows
