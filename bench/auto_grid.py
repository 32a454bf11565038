"""Measure the public choice rule of ``auto`` on a public synthetic grid; write the rule file.

For every cell (n, d, k, ε) of the grid, every registered private algorithm (except ``auto``)
runs at the row-level (ε, δ = 1e-6) on data from :func:`dpviz.data.ball_mixture.ball_mixture`
with cluster ratios and seeds of this script's own (never bench/peers.py's rows), and the cell's
winner is the algorithm with the lowest median relative excess k-means loss
(cost / cost(best of 3 k-means++) − 1). Prints the table and writes
``dpviz/clustering/auto_rule.json`` (with ``--write``).

    PYTHONPATH=. .venv/bin/python bench/auto_grid.py --write            # the full grid
    PYTHONPATH=. .venv/bin/python bench/auto_grid.py --quick            # a 4-cell smoke run
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

import dpviz
from dpviz.clustering.auto import RULE_PATH
from dpviz.data.ball_mixture import ball_mixture
from dpviz.metrics import kmeans_cost

DELTA = 1e-6
#: Calibration data: ratios and seeds distinct from bench/peers.py (ratio 8, seeds 0..2).
RATIOS = (4.0, 16.0)
SEED0 = 1000


def excess_loss(X: np.ndarray, centers: np.ndarray | None, ref_cost: float) -> float:
    if centers is None:  # ⊥: answered as one center at the origin (the trivial release)
        centers = np.zeros((1, X.shape[1]))
    return kmeans_cost(X, centers) / ref_cost - 1.0


def reference_cost(X: np.ndarray, k: int, seed: int) -> float:
    return min(KMeans(k, n_init=1, random_state=seed + i).fit(X).inertia_ for i in range(3))


#: Parameter variants tried besides each algorithm's defaults (public knobs the rule may set).
VARIANTS: dict[str, tuple[dict, ...]] = {"dp_lloyd": ({"iters": 1}, {"iters": 2}, {"iters": 3})}


def candidates(algorithms: list[str]) -> list[tuple[str, dict]]:
    """(algorithm, params) pairs: every algorithm with its defaults, plus VARIANTS."""
    return [(a, {}) for a in algorithms] + [(a, v) for a in algorithms for v in VARIANTS.get(a, ())]


def label(a: str, params: dict) -> str:
    return a + "".join(f"[{k}={v}]" for k, v in params.items())


def run_cell(n: int, d: int, k: int, eps: float, algorithms: list[str], seeds: int) -> dict:
    cands = candidates(algorithms)
    losses: dict[str, list[float]] = {label(a, p): [] for a, p in cands}
    for s, ratio in itertools.product(range(seeds), RATIOS):
        seed = SEED0 + 97 * s + int(ratio)
        ds = ball_mixture(n, d=d, k=k, ratio=ratio, rng=seed)
        ref = reference_cost(ds.X, k, seed)
        for a, p in cands:
            try:
                res = dpviz.run(a, ds.X, k, epsilon=eps, delta=DELTA, radius=1.0, rng=seed,
                                n_declared=n, **p)
                losses[label(a, p)].append(excess_loss(ds.X, res.centers, ref))
            except ValueError as exc:  # infeasible here (e.g. too few rows): not a candidate
                print(f"  {a}: {exc}", file=sys.stderr)
    med = {a: (statistics.median(v) if v else None) for a, v in losses.items()}
    ok = {a: v for a, v in med.items() if v is not None}
    best = min(ok, key=ok.get) if ok else None
    a, p = next((a, p) for a, p in cands if label(a, p) == best)
    return dict(n=n, d=d, k=k, epsilon=eps, best=a, params=p, label=best, median_excess_loss=med)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="4 cells, 1 seed")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--write", action="store_true", help=f"write {RULE_PATH.name}")
    args = ap.parse_args(argv)
    algorithms = [s.name for s in dpviz.algorithms(private_only=True) if s.name != "auto"]
    if args.quick:
        grid = list(itertools.product((1000, 20_000), (2,), (4,), (1.0, 3.0)))
        seeds = 1
    else:
        grid = list(itertools.product((500, 5_000, 50_000), (2, 10, 100), (4, 16), (1.0, 3.0)))
        seeds = args.seeds
    print(f"algorithms: {', '.join(algorithms)}; δ = {DELTA:g}; ratios {RATIOS}; "
          f"{seeds} seed(s) × {len(RATIOS)} ratios per cell")
    labels = [label(a, p) for a, p in candidates(algorithms)]
    head = f"{'n':>7} {'d':>4} {'k':>3} {'ε':>4}  " + " ".join(f"{a[-12:]:>12}" for a in labels) + "  best"
    print(head)
    cells = []
    t0 = time.perf_counter()
    for n, d, k, eps in grid:
        if n < 10 * k:
            continue
        c = run_cell(n, d, k, eps, algorithms, seeds)
        cells.append(c)
        vals = " ".join(f"{c['median_excess_loss'][a]:>12.4g}" if c["median_excess_loss"][a] is not None
                        else f"{'—':>12}" for a in labels)
        print(f"{n:>7} {d:>4} {k:>3} {eps:>4g}  {vals}  {c['label']}", flush=True)
    print(f"{len(cells)} cells in {time.perf_counter() - t0:.0f} s")
    if args.write:
        out = dict(
            how=("bench/auto_grid.py" + (" --quick" if args.quick else "") +
                 f": median relative excess k-means loss over {seeds} seed(s) × ratios {list(RATIOS)} "
                 f"of ball_mixture (seeds from {SEED0}), row-level δ = {DELTA:g}"),
            algorithms=algorithms, cells=cells)
        Path(RULE_PATH).write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {RULE_PATH}")


if __name__ == "__main__":
    main()
