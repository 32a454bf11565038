"""How often the hash-tree coreset merges two clusters: hashed by hyperplanes through the center
(before issue 43) vs by its default partition (a shifted grid up to d = 5, issue 43).

A draw *merges clusters* when two true centers have the same nearest released center (so some
true cluster is answered by a center it shares with another). Data: Fig. 6 blobs (k = 8 spherical
Gaussians in the unit ball, σ = 0.0221, Tsfadia et al. 2022 §6.2) in d = 2 and d = 5, data seeds
``--seeds`` (the data stream ``harness:data:merges:d<d>``), each run ``--draws`` times at every
row-level ε (δ = 1e-6, n public) from its own algorithm stream (``bench/harness.py``: data and
algorithm streams from distinct keys). ``partition=hyperplanes`` is the hashing before issue 43 (it
draws exactly what the old code drew), ``partition=grid`` the shifted grid; the default
(``partition=auto``) is the grid up to d = GRID_MAX_D and is marked. The non-private k-means++
reference's merge rate on the same data is the floor (a data seed whose clusters overlap merges
for every method).

    PYTHONPATH=. .venv/bin/python bench/tree_coreset_merges.py            # n = 50,000, 5 seeds × 20 draws
    PYTHONPATH=. .venv/bin/python bench/tree_coreset_merges.py --n 150000 --draws 10
    PYTHONPATH=. .venv/bin/python bench/tree_coreset_merges.py --calibrate    # the grid's depth

``--calibrate`` compares the grid's depth (``levels`` 8 and 6) on calibration data: Fig. 6 blobs
in 2-D, n = 20,000, data seeds 100–102 under the stream key ``harness:data:cal:d2`` (disjoint from
the evaluation's), 20 draws each at ε = 1 (the hard end). Measured under load (issue 43): 2 merges
in 60 draws at either depth, so the grid keeps the tree's ``levels`` (8).

Prints one row per (d, ε, partition): draws, merges, rate, and the goal (≤ 1 in 50 at ε ≥ 1).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dpviz
from bench.harness import DELTA, algorithm_stream, load_text, stream
from dpviz.clustering.baselines import nonprivate_kmeans
from dpviz.clustering.tree_coreset import GRID_MAX_D
from dpviz.data import GENERATORS


def merges(true_centers: np.ndarray, centers: np.ndarray | None) -> bool:
    """Whether two true centers share their nearest released center (⊥ counts as a merge)."""
    if centers is None:
        return True
    C = np.asarray(centers, dtype=float)
    d2 = ((true_centers[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    nearest = d2.argmin(axis=1)
    return len(set(nearest.tolist())) < true_centers.shape[0]


def calibrate() -> int:
    """The grid's depth on calibration data (module docstring)."""
    data = [GENERATORS["fig6_blobs"](20_000, k=8, d=2, rng=stream(seed, "data", "cal:d2"))
            for seed in (100, 101, 102)]
    print(f"# grid depth calibration: 2-D Fig. 6 blobs, n = 20,000, seeds 100–102; {load_text()}")
    for levels in (8, 6):
        got = [merges(ds.true_centers, dpviz.run(
                   "tree_coreset", ds.X, 8, epsilon=eps, delta=DELTA, radius=1.0, n_declared=ds.n,
                   partition="grid", levels=levels,
                   rng=algorithm_stream(i, f"tree_coreset[levels={levels}]", "cal:d2", eps, j)).centers)
               for i, ds in enumerate(data) for j in range(20) for eps in (1.0,)]
        print(f"levels = {levels}: {sum(got)} merges in {len(got)} draws", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--dims", type=int, nargs="+", default=[2, 5])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--calibrate", action="store_true", help="compare grid depths on calibration data")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.calibrate:
        return calibrate()
    print(f"# tree_coreset merge rate; n = {args.n:,}, k = {args.k}, δ = {DELTA:g}, data seeds "
          f"{args.seeds}, {args.draws} draws each; {load_text()}")
    print(f"{'d':>3} {'ε':>5} {'partition':>11} {'draws':>6} {'merges':>7} {'rate':>7}  goal ≤ 0.02")
    for d in args.dims:
        data = []
        for seed in args.seeds:
            ds = GENERATORS["fig6_blobs"](args.n, k=args.k, d=d, rng=stream(seed, "data", f"merges:d{d}"))
            ref = nonprivate_kmeans(ds.X, args.k, rng=stream(seed, "reference", f"merges:d{d}"))
            data.append((seed, ds, merges(ds.true_centers, ref.centers)))
        floor = sum(m for _, _, m in data)
        print(f"{d:>3} {'∞':>5} {'k-means++':>11} {len(data):>6} {floor:>7} {floor / len(data):>7.3f}"
              "  (non-private reference, one run per data seed)")
        for eps in args.epsilons:
            auto = "grid" if d <= GRID_MAX_D else "hyperplanes"  # partition="auto"'s choice
            for part in ("hyperplanes", "grid"):
                label = f"tree_coreset[partition={part}]"
                got = []
                for seed, ds, _ in data:
                    for j in range(args.draws):
                        res = dpviz.run("tree_coreset", ds.X, args.k, epsilon=eps, delta=DELTA,
                                        radius=ds.radius, n_declared=args.n, partition=part,
                                        rng=algorithm_stream(seed, label, f"merges:d{d}", eps, j))
                        got.append(merges(ds.true_centers, res.centers))
                m = int(sum(got))
                ok = "" if part != auto else ("  default: " + ("meets" if m / len(got) <= 0.02 else "MISSES"))
                print(f"{d:>3} {eps:>5g} {part:>11} {len(got):>6} {m:>7} {m / len(got):>7.3f}{ok}",
                      flush=True)
    print(f"# {time.perf_counter() - t0:.0f} s; {os.cpu_count()} cpus")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
