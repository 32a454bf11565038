"""``auto``'s registry entry: its calibration picks another registered algorithm
(:func:`dpviz.clustering.auto.choose`, public inputs only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.auto import Choice, choose
from dpviz.privacy.budget import ApproxDP
from dpviz.registry import AlgorithmSpec, Calibration, Public, calibrate, check_hinted, get, hint, register
from dpviz.result import Result


@dataclass(frozen=True)
class AutoParams:
    """``auto`` has no knobs of its own: the chosen algorithm runs with its defaults."""

    explain: bool = field(default=True, metadata=hint(help="record the choice and its reason in the trace"))

    def __post_init__(self) -> None:
        check_hinted(self, "auto")


@dataclass(frozen=True)
class _Chosen:
    """auto's budget: the chosen spec's name, parameters and calibrated budget."""

    choice: Choice
    params: Any
    calibration: Calibration

    def __getattr__(self, name: str) -> Any:  # rho / eps / delta of the chosen budget
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.calibration.budget, name)


def _calibrate(epsilon: float, delta: float, pub: Public, params: AutoParams) -> Calibration:
    c = choose(pub.n_declared, pub.d, pub.k, epsilon, delta)
    spec = get(c.algorithm)
    p = spec.make_params(**c.params)
    cal = calibrate(spec, epsilon, delta, pub, p)
    return Calibration(_Chosen(c, p, cal), cal.delta_prime, cal.guarantee)  # type: ignore[arg-type]


def _guarantee(budget: Any, pub: Public, params: AutoParams, delta_prime: float) -> ApproxDP:
    return budget.calibration.guarantee


def _private(X: np.ndarray, k: int, budget: _Chosen, *, radius: float, rng: np.random.Generator,
             pub: Public, params: AutoParams, stage: Any = None) -> Result:
    spec = get(budget.choice.algorithm)
    if spec.stage is not None:
        stage = spec.stage(X, k, radius=radius, rng=rng, pub=pub, params=budget.params)
    res = spec.private(X, k, budget.calibration.budget, radius=radius, rng=rng, pub=pub,
                       params=budget.params, stage=stage)
    trace = (*res.trace,)
    if params.explain:
        from dpviz.result import TraceStep

        trace = (TraceStep("auto_choice", True, {"algorithm": spec.name, "sentence": budget.choice.sentence,
                                                  "cell": budget.choice.cell},
                           "public: chosen from n_declared, d, k, ε, δ only"), *trace)
    return Result(res.centers, res.failure, res.ledger, trace,
                  dict(res.params) | {"auto_choice": spec.name}, res.seed,
                  simulation=res.simulation)  # a release stays a release (issue 10)


SPEC = register(AlgorithmSpec(
    name="auto",
    title="auto (public choice rule)",
    paper="dpviz: the registered algorithm with the least risk (median and 90th-percentile regret) "
          "on the nearest cells of a public calibration grid (bench/auto_calibrate.py)",
    budget_kind="approx",
    params=AutoParams,
    private=_private,
    guarantee=_guarantee,
    calibrate=_calibrate,
    steps=("auto_choice",),
    description="Picks the algorithm from public inputs only (declared n, d, k, ε, δ) by a rule "
                "measured on public synthetic data; choosing costs no privacy.",
    rank=1,
))
