"""Time the two implementations of the tuple stage (batched numpy vs per-piece scikit-learn).

Usage: PYTHONPATH=. .venv/bin/python bench/tuples_speed.py [--reps 3] [--sizes 10000 50000 ...]

Fig. 6 data (d=2, k=8), t=200 pieces, oracle k-means++; both pinned to one BLAS/OpenMP thread.
Reports the best of ``--reps`` runs (the least disturbed by other load) and the speed-up; the
crossover sets ``dpviz.clustering.tuples.AUTO_BATCHED_MAX_CELLS`` (``method="auto"``).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from dpviz.clustering.tuples import AUTO_BATCHED_MAX_CELLS, compute_tuples
from dpviz.data import fig6_blobs
from dpviz.metrics import kmeans_cost


def piece_cost(X: np.ndarray, stage) -> float:
    return sum(kmeans_cost(X[stage.piece_of_row == i], stage.tuples[i])
               for i in range(stage.n_pieces))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 200_000, 1_000_000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--t", type=int, default=200)
    args = ap.parse_args()

    warm = fig6_blobs(5_000, rng=0)
    for method in ("batched", "sklearn"):  # imports and first-call overheads
        compute_tuples(warm.X, args.k, n_tuples=20, rng=0, method=method)

    print(f"tuple stage, d=2, k={args.k}, t={args.t}, oracle k-means++, best of {args.reps} "
          f"(load average before: {os.getloadavg()[0]:.2f})")
    print(f"{'n':>10} {'batched s':>10} {'sklearn s':>10} {'speed-up':>9} {'cost ratio':>11}")
    for n in args.sizes:
        ds = fig6_blobs(n, rng=1)
        best = {}
        cost = {}
        for method in ("batched", "sklearn"):
            times = []
            for rep in range(args.reps):
                st = compute_tuples(ds.X, args.k, n_tuples=args.t, rng=rep, method=method)
                times.append(st.seconds)
            best[method] = min(times)
            cost[method] = piece_cost(ds.X, st)
        print(f"{n:>10,} {best['batched']:>10.3f} {best['sklearn']:>10.3f} "
              f"{best['sklearn'] / best['batched']:>8.1f}x "
              f"{cost['batched'] / cost['sklearn']:>11.4f}")
    print(f"method='auto' uses batched while n*d <= {AUTO_BATCHED_MAX_CELLS} "
          f"(load average after: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
