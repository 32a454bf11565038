"""Measure the public choice rule of ``auto`` on a public synthetic grid; write the rule file.

For every cell (n, d, k, ε) of the grid, every registered private algorithm (except ``auto``)
runs at the row-level (ε, δ = 1e-6) on data from :func:`dpviz.data.ball_mixture.ball_mixture`
with cluster ratios and seeds of this script's own (never bench/peers.py's rows), and the cell's
winner is the algorithm with the lowest median relative excess k-means loss
(cost / cost(best of 3 k-means++) − 1). Prints the table and writes
``dpviz/clustering/auto_rule.json`` (with ``--write``).

    PYTHONPATH=. .venv/bin/python bench/auto_grid.py --write                   # the full grid
    PYTHONPATH=. .venv/bin/python bench/auto_grid.py --medium --write          # the 18-cell grid
    PYTHONPATH=. .venv/bin/python bench/auto_grid.py --small --merge --write \
        --algorithms origin gauss_fit dp_lloyd kernel_kmeans balcan friendlycore sulq
    PYTHONPATH=. .venv/bin/python bench/auto_grid.py --quick                   # a 4-cell smoke run

``--small`` is the small-data grid (n ≤ 2,000; issue 18's "never worse than trivial"): weakly
clustered mixtures (ratios SMALL_RATIOS, where the trivial answer is within a small factor of the
optimum) passed through the preprocessing the app gives its bundled data
(:func:`dpviz.data.builtin.standardize_to_box`: z-score, clip to ±3, into [−1, 1]^d, Λ = √d), so
the trivial answer (the origin) is the data's mean, as it is for standardized data. ``--merge``
keeps the rule file's other cells and replaces the cells measured again (same n, d, k, ε); each
cell records the grid that measured it.
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
from dpviz.data.builtin import standardize_to_box
from dpviz.metrics import kmeans_cost

DELTA = 1e-6
#: Calibration data: ratios and seeds distinct from bench/peers.py (ratio 8, seeds 0..2).
RATIOS = (4.0, 16.0)
SEED0 = 1000
#: The small-data grid's mixtures: weakly clustered (between/within spread ≈ (ratio − 1)² ≤ 4).
SMALL_RATIOS = (1.5, 2.0, 3.0)

GRIDS = {
    "quick": (list(itertools.product((1000, 20_000), (2,), (4,), (1.0, 3.0))), 1),
    "medium": (list(itertools.product((1000, 10_000, 100_000), (2, 20, 100), (8,), (1.0, 3.0))), 1),
    "full": (list(itertools.product((500, 5_000, 50_000), (2, 10, 100), (4, 16), (1.0, 3.0))), 2),
    "small": (list(itertools.product((150, 500, 2000), (4, 16, 64), (3, 10), (1.0, 3.0))), 1),
}


def calibration_data(grid: str, n: int, d: int, k: int, ratio: float, seed: int) -> tuple[np.ndarray, float]:
    """(X, Λ) of one calibration dataset: Google's recipe; on the small grid, standardized to the box."""
    X = ball_mixture(n, d=d, k=k, ratio=ratio, rng=seed).X
    if grid == "small":
        return standardize_to_box(X), float(np.sqrt(d))
    return X, 1.0


def excess_loss(X: np.ndarray, centers: np.ndarray | None, ref_cost: float) -> float:
    if centers is None:  # ⊥: answered as one center at the origin (the trivial release)
        centers = np.zeros((1, X.shape[1]))
    return kmeans_cost(X, centers) / ref_cost - 1.0


def reference_cost(X: np.ndarray, k: int, seed: int) -> float:
    return min(KMeans(k, n_init=1, random_state=seed + i).fit(X).inertia_ for i in range(3))


#: Parameter variants tried besides each algorithm's defaults (public knobs the rule may set).
VARIANTS: dict[str, tuple[dict, ...]] = {"dp_lloyd": ({"iters": 1}, {"iters": 2}, {"iters": 3}),
                                       "gauss_fit": ({"moments": 1},)}


def candidates(algorithms: list[str]) -> list[tuple[str, dict]]:
    """(algorithm, params) pairs: every algorithm with its defaults, plus VARIANTS."""
    return [(a, {}) for a in algorithms] + [(a, v) for a in algorithms for v in VARIANTS.get(a, ())]


def label(a: str, params: dict) -> str:
    return a + "".join(f"[{k}={v}]" for k, v in params.items())


def run_cell(n: int, d: int, k: int, eps: float, algorithms: list[str], seeds: int,
             grid: str = "medium") -> dict:
    cands = candidates(algorithms)
    losses: dict[str, list[float]] = {label(a, p): [] for a, p in cands}
    ratios = SMALL_RATIOS if grid == "small" else RATIOS
    for s, ratio in itertools.product(range(seeds), ratios):
        seed = SEED0 + 97 * s + int(ratio)
        X, radius = calibration_data(grid, n, d, k, ratio, seed)
        ref = reference_cost(X, k, seed)
        for a, p in cands:
            try:
                res = dpviz.run(a, X, k, epsilon=eps, delta=DELTA, radius=radius, rng=seed,
                                n_declared=n, **p)
                losses[label(a, p)].append(excess_loss(X, res.centers, ref))
            except ValueError as exc:  # infeasible here (e.g. too few rows): not a candidate
                print(f"  {a}: {exc}", file=sys.stderr)
    med = {a: (statistics.median(v) if v else None) for a, v in losses.items()}
    ok = {a: v for a, v in med.items() if v is not None}
    best = min(ok, key=ok.get) if ok else None
    a, p = next((a, p) for a, p in cands if label(a, p) == best)
    return dict(n=n, d=d, k=k, epsilon=eps, best=a, params=p, label=best, grid=grid,
                ratios=list(ratios), median_excess_loss=med)


def merge(old: dict, cells: list[dict]) -> list[dict]:
    """The old rule's cells with the newly measured ones replacing those at the same (n, d, k, ε)."""
    key = lambda c: (c["n"], c["d"], c["k"], c["epsilon"])  # noqa: E731
    fresh = {key(c) for c in cells}
    kept = [c | {"grid": c.get("grid", "medium")} for c in old["cells"] if key(c) not in fresh]
    return kept + cells


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help="4 cells, 1 seed")
    which.add_argument("--medium", action="store_true", help="18 cells (n 1e3–1e5, d 2–100, k = 8), 1 seed")
    which.add_argument("--small", action="store_true", help="36 small-data cells (n ≤ 2,000), 1 seed")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per ratio (default: the grid's)")
    ap.add_argument("--algorithms", nargs="*", default=None, help="registered names to run (default: all)")
    ap.add_argument("--merge", action="store_true", help="keep the rule file's other cells")
    ap.add_argument("--write", action="store_true", help=f"write {RULE_PATH.name}")
    args = ap.parse_args(argv)
    name = "quick" if args.quick else "medium" if args.medium else "small" if args.small else "full"
    algorithms = [s.name for s in dpviz.algorithms(private_only=True) if s.name != "auto"
                  and (args.algorithms is None or s.name in args.algorithms)]
    grid, seeds = GRIDS[name]
    seeds = args.seeds or seeds
    ratios = SMALL_RATIOS if name == "small" else RATIOS
    print(f"grid {name}; algorithms: {', '.join(algorithms)}; δ = {DELTA:g}; ratios {ratios}; "
          f"{seeds} seed(s) × {len(ratios)} ratios per cell")
    labels = [label(a, p) for a, p in candidates(algorithms)]
    head = f"{'n':>7} {'d':>4} {'k':>3} {'ε':>4}  " + " ".join(f"{a[-12:]:>12}" for a in labels) + "  best"
    print(head)
    cells = []
    t0 = time.perf_counter()
    for n, d, k, eps in grid:
        if n < 10 * k:
            continue
        c = run_cell(n, d, k, eps, algorithms, seeds, grid=name)
        cells.append(c)
        vals = " ".join(f"{c['median_excess_loss'][a]:>12.4g}" if c["median_excess_loss"][a] is not None
                        else f"{'—':>12}" for a in labels)
        print(f"{n:>7} {d:>4} {k:>3} {eps:>4g}  {vals}  {c['label']}", flush=True)
    print(f"{len(cells)} cells in {time.perf_counter() - t0:.0f} s")
    if args.write:
        how = (f"bench/auto_grid.py --{name}" + (" --algorithms " + " ".join(algorithms) if args.algorithms
                                                 else "") +
               f": median relative excess k-means loss over {seeds} seed(s) × ratios {list(ratios)} "
               f"of ball_mixture (seeds from {SEED0})" + (", standardized to the box (Λ = √d)"
                                                          if name == "small" else "") +
               f", row-level δ = {DELTA:g}")
        if args.merge and RULE_PATH.exists():
            old = json.loads(RULE_PATH.read_text())
            olds = old["how"].split("\n")  # one line per grid that measured some of the cells
            out = dict(how="\n".join([h for h in olds if not h.startswith(f"bench/auto_grid.py --{name}")]
                                     + [how]),
                       algorithms=sorted(set(old["algorithms"]) | set(algorithms)),
                       cells=merge(old, cells))
        else:
            out = dict(how=how, algorithms=algorithms, cells=cells)
        Path(RULE_PATH).write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {RULE_PATH}")


if __name__ == "__main__":
    main()
