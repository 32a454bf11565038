"""The Result every algorithm returns: the answer and the story of how it got there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.plan import BudgetPlan


@dataclass(frozen=True)
class TraceStep:
    """One named step of a run and what it produced.

    ``released`` is True when ``data`` is private output (publishable only from a release,
    ``Result.simulation`` False; a simulation is replayable from its seed); False for internal,
    non-private values kept for teaching and diagnostics (never publish those).
    """

    name: str
    released: bool
    data: Mapping[str, Any]
    note: str = ""


class Trace:
    """A mutable list of steps filled during a run, frozen into ``Result.trace`` at the end."""

    def __init__(self) -> None:
        self._steps: list[TraceStep] = []

    def add(self, name: str, *, released: bool, note: str = "", **data: Any) -> TraceStep:
        step = TraceStep(name, released, data, note)
        self._steps.append(step)
        return step

    def extend(self, steps: tuple[TraceStep, ...], prefix: str = "") -> None:
        for s in steps:
            self._steps.append(TraceStep(prefix + s.name, s.released, s.data, s.note))

    def freeze(self) -> tuple[TraceStep, ...]:
        return tuple(self._steps)


def find_step(trace: tuple[TraceStep, ...] | list[TraceStep], name: str) -> TraceStep | None:
    """The first step of ``trace`` called ``name``, or None."""
    return next((s for s in trace if s.name == name), None)


@dataclass(frozen=True)
class Result:
    """The output of a private algorithm.

    Attributes
    ----------
    centers : (k, d) array or None
        The private answer (an average is a (1, d) array); None when the algorithm output ⊥.
    failure : str or None
        A short reason when the algorithm output ⊥ (empty core, n̂ ≤ 0, ...). A failure is an
        answer, not an exception.
    ledger : Ledger
        What was spent; ``ledger.total()`` equals the budget the caller gave.
    trace : tuple of TraceStep
        The ordered steps, for the figure builders.
    params : mapping
        The parameters of the call (enough, with ``seed``, to rerun it exactly).
    seed : int or None
        The seed a *simulation* drew its randomness from (an int ``rng``); None otherwise. A
        release never stores its noise seed (it has none: see ``dpviz.privacy.release``).
    algorithm : str or None
        The registered algorithm that produced it (``dpviz.registry``), when run through it.
    guarantee : ApproxDP or None
        The row-level (ε, δ)-DP guarantee of the run (add/remove one row of the user's data);
        None for a non-private reference or when the caller ran a function directly.
    simulation : bool, default True
        False only for a release: noise drawn by :class:`dpviz.privacy.release.SecureRNG`. A
        simulation (seeded, or from any numpy Generator) is for exploring; its numbers must not
        be published, since whoever can replay its noise can subtract it.
    plan : BudgetPlan or None
        The run's budget plan (``dpviz.registry.plan``): its own budget, δ′, the row-level
        guarantee (``guarantee`` is ``plan.guarantee``) and the statement lines. Set by
        :func:`dpviz.run`; None when the caller ran a function directly.
    statement : ApproxDP or None
        The row-level (ε, δ) re-accounted from the run's LEDGER alone
        (:func:`dpviz.privacy.accounting.check_ledger`, never above ``plan.target``): THE number
        every surface shows. Set by :func:`dpviz.run`; None for a reference, a ledger with no
        proven guarantee, or a function called directly (:attr:`stated` then falls back to
        ``guarantee``).
    answered_by : str or None
        Who released the centers, in the one wording of :func:`dpviz.registry.answered_by`
        (e.g. "grid coreset (FriendlyCore clustering's backup)", "no one (⊥)"). Set by
        :func:`dpviz.run`; read by the release export, which sits below the registry.
    """

    centers: np.ndarray | None
    failure: str | None
    ledger: Ledger
    trace: tuple[TraceStep, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    algorithm: str | None = None
    guarantee: ApproxDP | None = None
    simulation: bool = True
    plan: BudgetPlan | None = None
    statement: ApproxDP | None = None
    answered_by: str | None = None

    def __post_init__(self) -> None:
        if self.seed is not None and not self.simulation:
            raise ValueError("A Result with a seed is a simulation: a release never stores its seed.")

    @property
    def stated(self) -> ApproxDP | None:
        """The row-level (ε, δ) to show: the re-accounted ``statement``, else ``guarantee``."""
        return self.statement if self.statement is not None else self.guarantee

    @property
    def ok(self) -> bool:
        return self.failure is None

    def step(self, name: str) -> TraceStep:
        """The first trace step called ``name`` (KeyError naming the available steps if none)."""
        step = find_step(self.trace, name)
        if step is not None:
            return step
        raise KeyError(f"No trace step '{name}'. Steps: {[s.name for s in self.trace]}")

    def find(self, name: str) -> TraceStep | None:
        """The first trace step called ``name``, or None (the one lookup every caller uses)."""
        return find_step(self.trace, name)

    def steps(self, prefix: str) -> list[TraceStep]:
        return [s for s in self.trace if s.name.startswith(prefix)]
