"""``auto``: choose the algorithm from public inputs only, by a rule measured on public data.

The choice reads the declared size n, the dimension d, k and the row-level (ε, δ) — nothing
computed from the rows — so choosing is free of privacy cost, and the run is exactly the chosen
algorithm's (its guarantee, ledger and trace).

The rule (``auto_rule.json``, written by ``bench/auto_calibrate.py fit``) holds calibration cells
measured through the evaluation harness (``bench/harness.py``: data, algorithm and reference
streams from distinct keys) on public recipes that are none of the evaluation rows: balanced and
unbalanced mixtures, heavy tails, close clusters, anisotropic clusters and small standardized
tables, 3 data seeds, ε ∈ {1, 3}. Each cell stores every label's median relative excess loss
(every registered private algorithm and its public variants). A query (n, d, k, ε) takes the
``neighbours`` nearest cells in (log nε, log d, log k) — private noise scales as 1/(nε), so a
cell at (n, 3) informs a query at (3n, 1) — and picks the label with the smallest weighted
geometric-mean *regret* (loss / the cell's best loss) there; on big inputs (n ≥ ``BIG_N``) only
labels whose median time in those cells is within the rule's ``max_time_ratio`` of one KMeans
are eligible (issue 24's time goal), unless none is.

Issue 24 replaced a rule measured with the data's seed reused as the algorithm's (DP-Lloyd's
public start then *was* the true centers, and "DP-Lloyd, 1 iteration" won 28 of 54 cells).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dpviz.privacy.budget import ApproxDP
from dpviz.registry import AlgorithmSpec, Calibration, Public, calibrate, check_hinted, get, hint, register
from dpviz.result import Result

#: The measured rule (written by bench/auto_grid.py; its header says how).
RULE_PATH = Path(__file__).with_name("auto_rule.json")


@dataclass(frozen=True)
class Choice:
    """The algorithm ``auto`` picks for public inputs, and why (one sentence for the app)."""

    algorithm: str
    params: dict[str, Any]
    sentence: str
    cell: dict[str, Any]


@cache
def rule() -> dict[str, Any]:
    """The rule table (cells and how they were measured)."""
    return json.loads(RULE_PATH.read_text())


#: Queries with at least this many declared rows apply the rule's time filter.
BIG_N = 100_000
#: Loss floor in the regret ratio (relative excess losses below it are all "as good as exact").
LOSS_FLOOR = 1e-3


def _coords(n: float, d: float, k: float, eps: float) -> np.ndarray:
    return np.array([math.log10(n * eps), math.log10(d), math.log10(k)])


def _regrets(cell: dict[str, Any]) -> dict[str, float]:
    """label → (loss⁺ + floor) / (best⁺ + floor) in one cell; a label without a loss → inf."""
    # A loss below the reference k-means' (negative excess) counts as 0: as good as the reference.
    losses = {a: (math.inf if v is None else max(float(v), 0.0))
              for a, v in cell["median_excess_loss"].items()}
    best = min(losses.values())
    return {a: (v + LOSS_FLOOR) / (best + LOSS_FLOOR) for a, v in losses.items()}


def choose_from(names: tuple[str, ...] | None, n_declared: int, d: int, k: int, epsilon: float,
                delta: float) -> Choice:
    """:func:`choose` restricted to the registered algorithms ``names`` (None: all), e.g. the
    streamed ones (``dpviz.large.run``). Public inputs only."""
    table = rule()
    cells = table["cells"]
    here = _coords(n_declared, d, k, epsilon)
    dist = np.array([float(np.linalg.norm(here - _coords(c["n"], c["d"], c["k"], c["epsilon"])))
                     for c in cells])
    near = [cells[i] for i in np.argsort(dist, kind="stable")[: int(table.get("neighbours", 4))]]
    weights = [1.0 / (1.0 + float(np.linalg.norm(here - _coords(c["n"], c["d"], c["k"], c["epsilon"]))))
               for c in near]
    labels = set.intersection(*(set(c["median_excess_loss"]) for c in near))
    labels = {lab for lab in labels if names is None or lab.split("[")[0] in names}
    labels = {lab for lab in labels if lab.split("[")[0] in _registered()}
    if not labels:
        raise ValueError(f"auto: no calibrated algorithm among {names} for these inputs.")
    score: dict[str, float] = {}
    for lab in labels:
        logs = [w * math.log(_regrets(c)[lab]) for c, w in zip(near, weights, strict=True)]
        score[lab] = math.exp(sum(logs) / sum(weights))
    eligible = set(labels)
    cap = table.get("max_time_ratio")
    if cap is not None and n_declared >= BIG_N:
        fast = {lab for lab in labels
                if float(np.median([c["median_time_ratio"].get(lab, math.inf) for c in near])) <= cap}
        eligible = fast or eligible
    # Ties (e.g. a ⊥ scored as the origin) go to the answer that reads nothing, then to a label
    # that never outputs ⊥, then alphabetically.
    won = min(sorted(eligible), key=lambda lab: (score[lab], lab != "origin", "fallback=False" in lab))
    best, params = _parse(won)
    title = get(best).title + "".join(f", {key} = {v}" for key, v in params.items())
    runner = sorted((score[lab], lab) for lab in eligible if lab.split("[")[0] != best)
    versus = f" (geometric-mean regret {score[won]:.3g}" + (
        f" vs {runner[0][0]:.3g} for {runner[0][1]})" if runner else ")")
    span = ", ".join(f"{c['recipe']} n={c['n']:,} d={c['d']} k={c['k']} ε={c['epsilon']:g}" for c in near)
    sentence = (f"For {n_declared:.3g} rows in {d} dimensions with k = {k} at ε = {epsilon:g}, "
                f"{title} is expected to be best: on the {len(near)} nearest cells of the public "
                f"calibration grid ({span}) it had the lowest loss relative to each cell's best{versus}.")
    cell = {"label": won, "params": params, "regret": score[won],
            "neighbours": [{key: c[key] for key in ("recipe", "n", "d", "k", "epsilon")} for c in near]}
    return Choice(best, params, sentence, cell)


def choose(n_declared: int, d: int, k: int, epsilon: float, delta: float) -> Choice:
    """The algorithm for these public inputs (see the module docstring)."""
    return choose_from(None, n_declared, d, k, epsilon, delta)


def _registered() -> set[str]:
    from dpviz.registry import algorithms

    return {s.name for s in algorithms()}


def _parse(label: str) -> tuple[str, dict[str, Any]]:
    """"dp_lloyd[iters=1]" → ("dp_lloyd", {"iters": 1})."""
    if "[" not in label:
        return label, {}
    name, rest = label.split("[", 1)
    params: dict[str, Any] = {}
    for part in rest.rstrip("]").split(","):
        key, value = part.split("=", 1)
        v: Any = value
        if value in ("True", "False"):
            v = value == "True"
        else:
            for cast in (int, float):
                try:
                    v = cast(value)
                    break
                except ValueError:
                    continue
        params[key] = v
    return name, params


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
    paper="dpviz: the registered algorithm with the least regret on the nearest cells of a public "
          "calibration grid (bench/auto_calibrate.py)",
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
