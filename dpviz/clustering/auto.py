"""``auto``: choose the algorithm from public inputs only, by a rule measured on public data.

The choice reads the declared size n, the dimension d, k and the row-level (ε, δ) — nothing
computed from the rows — so choosing is free of privacy cost, and the run is exactly the chosen
algorithm's (its guarantee, ledger and trace). The rule is a table of cells measured by
``bench/auto_grid.py`` on public synthetic data (:func:`dpviz.data.ball_mixture.ball_mixture`
with seeds and ratios of its own, never the benchmark rows of bench/peers.py): for each cell
(n, d, k, ε), the algorithm with the lowest median relative excess k-means loss. A query takes the
nearest cell in (log n, log d, log k, log ε).

Two grids feed the table (each cell records which): the medium grid (n 1e3–1e5, well separated
mixtures, Λ = 1) and the small-data grid (n 150–2,000, weakly clustered mixtures standardized the
way the app standardizes its bundled data, Λ = √d), where the low-information answers
(``origin``, ``gauss_fit``) compete with the rest (issue 18, "never worse than trivial").
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


def _coords(n: float, d: float, k: float, eps: float) -> np.ndarray:
    return np.array([math.log10(n), math.log10(d), math.log10(k), math.log10(eps)])


def choose(n_declared: int, d: int, k: int, epsilon: float, delta: float) -> Choice:
    """The algorithm for these public inputs (the nearest measured cell's winner)."""
    table = rule()
    cells = [c for c in table["cells"] if c["best"] is not None]
    here = _coords(n_declared, d, k, epsilon)
    dist = [float(np.linalg.norm(here - _coords(c["n"], c["d"], c["k"], c["epsilon"]))) for c in cells]
    cell = cells[int(np.argmin(dist))]
    best, won = cell["best"], cell.get("label", cell["best"])
    title = get(best).title + "".join(f", {k} = {v}" for k, v in cell.get("params", {}).items())
    runner = sorted((v, a) for a, v in cell["median_excess_loss"].items()
                    if a.split("[")[0] != best and v is not None)
    versus = f" (median excess loss {cell['median_excess_loss'][won]:.3g}" + (
        f" vs {runner[0][0]:.3g} for {get(runner[0][1].split('[')[0]).title})" if runner else ")")
    sentence = (f"For {n_declared:.3g} rows in {d} dimensions with k = {k} at ε = {epsilon:g}, "
                f"{title} is expected to be best: on the public calibration grid, at n = "
                f"{cell['n']:,}, d = {cell['d']}, k = {cell['k']}, ε = {cell['epsilon']:g}, it "
                f"won{versus}.")
    return Choice(best, dict(cell.get("params", {})), sentence, cell)
