"""``auto``: choose the algorithm from public inputs only, by a rule measured on public data.

The choice reads the declared size n, the dimension d, k and the row-level (ε, δ) — nothing
computed from the rows — so choosing is free of privacy cost, and the run is exactly the chosen
algorithm's (its guarantee, ledger and trace).

The rule (``auto_rule.json``, written by ``bench/auto_calibrate.py fit``) holds calibration cells
measured through the evaluation harness (``bench/harness.py``: data, algorithm and reference
streams from distinct keys) on public recipes that are none of the evaluation rows: balanced and
unbalanced mixtures, heavy tails, close clusters, anisotropic clusters, and (issue 35) small
standardized tables of those shapes with 10 algorithm draws each. Each cell stores every label's
median and 90th-percentile relative excess loss over its (data seed, draw) runs: every registered
private algorithm at its defaults, ``gauss_fit`` and ``origin`` (answering the origin, which reads
no row) among them. A query (n, d, k, ε) takes the ``neighbours`` nearest cells in
(log nε, log d, log k) — private noise scales as 1/(nε), so a cell at (n, 3) informs a query at
(3n, 1) — and picks the label with the smallest weighted geometric-mean *risk regret* there: in a
cell, the larger of loss / the cell's best loss on the median and on the 90th percentile (issue 35:
a method that is best on the median but sometimes far off loses to a steadier one), each cell's
regret capped at the rule's ``regret_cap`` (issue 44: a single calibration shape where a method
fails outvoted the other nearest cells; the cap and the neighbour count are chosen by a
leave-one-shape-out check on the calibration cells, ``bench/auto_calibrate.py loo``, for
queries below ``BIG_N`` rows; at n ≥ ``BIG_N`` the rule's ``big`` setting applies). Where answering
the origin has the least risk (no private method beats it on the nearest cells), ``auto`` shrinks
to the origin: a public rule, the answer reads no row and spends nothing. ``best_of`` (a
tree_coreset draw and the origin, the exponential mechanism's pick: the private counterpart of that
shrink) is a candidate where all the nearest cells measured it (the small tables and the grid's
small cells, ``bench/auto_best_of.py``). On big inputs
(n ≥ ``BIG_N``) only labels whose median time in those cells is within the rule's
``max_time_ratio`` of one KMeans are eligible (issue 24's time goal), unless none is.

Issue 24 replaced a rule measured with the data's seed reused as the algorithm's (DP-Lloyd's
public start then *was* the true centers, and "DP-Lloyd, 1 iteration" won 28 of 54 cells).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dpviz.registry import get

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
    """label → risk regret in one cell: max over {median, p90} of (loss⁺ + floor) / (best⁺ + floor),
    best taken per statistic over the cell's labels; a label without a loss → inf. A cell without
    a 90th percentile (an older rule) is scored on the median alone."""
    out: dict[str, float] = {}
    for key in ("median_excess_loss", "p90_excess_loss"):
        if key not in cell:
            continue
        # A loss below the reference k-means' (negative excess) counts as 0: as good as the reference.
        losses = {a: (math.inf if v is None else max(float(v), 0.0)) for a, v in cell[key].items()}
        best = min(losses.values())
        for a, v in losses.items():
            out[a] = max(out.get(a, 1.0), (v + LOSS_FLOOR) / (best + LOSS_FLOOR))
    return out


def choose_from(names: tuple[str, ...] | None, n_declared: int, d: int, k: int, epsilon: float,
                delta: float, table: dict[str, Any] | None = None) -> Choice:
    """:func:`choose` restricted to the registered algorithms ``names`` (None: all), e.g. the
    streamed ones (``dpviz.large.run``). Public inputs only. ``table`` replaces the shipped rule
    (``bench/auto_calibrate.py``'s leave-one-out check answers each calibration cell from the
    others)."""
    table = rule() if table is None else table
    cells = table["cells"]
    here = _coords(n_declared, d, k, epsilon)
    dist = np.array([float(np.linalg.norm(here - _coords(c["n"], c["d"], c["k"], c["epsilon"])))
                     for c in cells])
    # Issue 44: the neighbour count and regret cap were chosen by a leave-one-out check below
    # BIG_N; at n ≥ BIG_N the rule keeps its own ("big": only 8 big cells, none to leave out).
    setting = table.get("big", table) if n_declared >= BIG_N else table
    order = np.argsort(dist, kind="stable")[: int(setting.get("neighbours", 4))]
    near = [cells[i] for i in order]
    weights = [1.0 / (1.0 + float(dist[i])) for i in order]
    labels = set.intersection(*(set(c["median_excess_loss"]) for c in near))
    labels = {lab for lab in labels if names is None or lab.split("[")[0] in names}
    labels = {lab for lab in labels if lab.split("[")[0] in _registered(d)}
    if not labels:
        raise ValueError(f"auto: no calibrated algorithm among {names} for these inputs.")
    # Issue 44: one cell's regret counts at most ``regret_cap`` (the rule's; none in an older rule),
    # so a single shape where a method fails cannot outvote the other nearest cells.
    cap_r = float(setting.get("regret_cap") or math.inf)
    regrets = [_regrets(c) for c in near]
    score = {lab: math.exp(sum(w * math.log(min(r[lab], cap_r))
                               for r, w in zip(regrets, weights, strict=True)) / sum(weights))
             for lab in labels}
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
    versus = f" (geometric-mean risk regret {score[won]:.3g}" + (
        f" vs {runner[0][0]:.3g} for {runner[0][1]})" if runner else ")")
    span = ", ".join(f"{c['recipe']} n={c['n']:,} d={c['d']} k={c['k']} ε={c['epsilon']:g}" for c in near)
    why = ("no private method had less risk than answering the origin (shrink to the origin: "
           "no row is read, nothing is spent)" if best == "origin" else
           "it had the least risk (the larger of its median and 90th-percentile loss, each "
           "relative to the cell's best)")
    sentence = (f"For {n_declared:.3g} rows in {d} dimensions with k = {k} at ε = {epsilon:g}, "
                f"{title} is expected to be best: on the {len(near)} nearest cells of the public "
                f"calibration grid ({span}) {why}{versus}.")
    cell = {"label": won, "params": params, "regret": score[won],
            "neighbours": [{key: c[key] for key in ("recipe", "n", "d", "k", "epsilon")} for c in near]}
    return Choice(best, params, sentence, cell)


def choose(n_declared: int, d: int, k: int, epsilon: float, delta: float) -> Choice:
    """The algorithm for these public inputs (see the module docstring)."""
    return choose_from(None, n_declared, d, k, epsilon, delta)


def _registered(d: int) -> set[str]:
    """The registered algorithms that serve d-dimensional rows (a public input)."""
    from dpviz.registry import algorithms

    return {s.name for s in algorithms(applicable_to=d)}


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
