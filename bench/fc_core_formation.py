"""The smallest n at which FriendlyCore's core forms in ≥ 95% of 20 seeds (issue 33, item 1).

Fig. 6 blobs (Tsfadia et al. 2022, §6.2; ``fig6_blobs``: k = 8 Gaussians, σ = 0.0221, d = 2,
Λ = 1), row-level ε ∈ {1, 3, 10}, δ = 10⁻⁶, FriendlyCore through ``dpviz.run`` with the
library's defaults (practical split, fallback on, t = the spec's automatic rule from the declared
n = n). "Core formed" = the registry's ``structure_ok`` (FriendlyCore answered, not its backup).

Seeds: seed s draws its DATA from ``SeedSequence(DATA_KEY, spawn_key=(s,))`` (``--fixed-data``:
every seed uses the data of seed 0, only the algorithm stream varies) and its ALGORITHM (pieces,
oracle, noise) from ``SeedSequence(ALGO_KEY, spawn_key=(s,))``: distinct keys, never shared.
The tuple stage (which reads no budget) is computed once per (n, seed) and shared by the ε.

Exact early stop: a (n, ε) point needs ≥ 19 of 20 seeds (95%); seeds run in order and the point
stops at its 2nd failure (then at most 18/20 can form: the criterion is decided, no estimate).
n walks the grid upwards; an ε is not rerun at larger n once it passed (formation is taken as
monotone in n, as the margins are). Before/after: run this script against the old tree
(``PYTHONPATH=<checkout of the old commit>``), see docs/fc_clustering.md.

    nice -n 10 env PYTHONPATH=. .venv/bin/python bench/fc_core_formation.py
    nice -n 10 env PYTHONPATH=. .venv/bin/python bench/fc_core_formation.py --fixed-data
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.spatial.distance import pdist

import dpviz
from dpviz.data.generators import fig6_blobs
from dpviz.registry import Public, get

DELTA = 1e-6
K, D, RADIUS = 8, 2, 1.0
EPSILONS = (1.0, 3.0, 10.0)
GRID = (20_000, 50_000, 100_000, 250_000, 500_000, 1_000_000)
DATA_KEY, ALGO_KEY = 33_001, 33_002
NEED = 0.95


def _rng(key: int, s: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(key, spawn_key=(s,)))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--grid", nargs="*", type=float, default=list(GRID))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--fixed-data", action="store_true",
                    help="one dataset (seed 0's); only the algorithm stream varies")
    args = ap.parse_args(argv)
    spec = get("friendlycore")
    max_fail = int(args.seeds - np.ceil(NEED * args.seeds)) + 1  # failures that decide "no"
    print(f"Fig. 6 blobs k={K} d={D} Λ={RADIUS:g}; row-level δ={DELTA:g}; {args.seeds} seeds "
          f"({'fixed data' if args.fixed_data else 'data and algorithm per seed'}); a point stops "
          f"at its failure #{max_fail}; load average {os.getloadavg()[0]:.1f}")
    print("| n | t | ε | formed / run | seeds that failed (data min separation) | s per seed |")
    print("|---|---|---|---|---|---|")
    first: dict[float, int | None] = {e: None for e in args.eps}
    for n in (int(v) for v in args.grid):
        alive = [e for e in args.eps if first[e] is None]
        if not alive:
            break
        pub = Public(n_declared=n, d=D, k=K, radius=RADIUS)
        params = spec.make_params()
        formed = {e: 0 for e in alive}
        failed: dict[float, list[str]] = {e: [] for e in alive}
        ran = {e: 0 for e in alive}
        t_used, t0 = None, time.perf_counter()
        for s in range(args.seeds):
            todo = [e for e in alive if len(failed[e]) < max_fail]
            if not todo:
                break
            ds = fig6_blobs(n, k=K, d=D, rng=_rng(DATA_KEY, 0 if args.fixed_data else s))
            sep = float(pdist(ds.true_centers).min())
            algo = _rng(ALGO_KEY, s)
            stage = spec.stage(ds.X, K, radius=RADIUS, rng=algo, pub=pub, params=params)
            t_used = stage.n_pieces
            for e in todo:
                res = dpviz.run("friendlycore", ds.X, K, epsilon=e, delta=DELTA, radius=RADIUS,
                                rng=algo, n_declared=n, stage=stage)
                ran[e] += 1
                if spec.structure_ok(res):
                    formed[e] += 1
                else:
                    failed[e].append(f"{s} ({sep:.3f})")
        per_seed = (time.perf_counter() - t0) / max(1, max(ran.values()))
        for e in alive:
            ok = ran[e] == args.seeds and formed[e] >= np.ceil(NEED * args.seeds)
            if ok:
                first[e] = n
            print(f"| {n:,} | {t_used} | {e:g} | {formed[e]}/{ran[e]}{' ✓' if ok else ''} | "
                  f"{', '.join(failed[e]) or '—'} | {per_seed:.1f} |", flush=True)
    print()
    for e in args.eps:
        got = f"n = {first[e]:,}" if first[e] else f"none up to n = {int(args.grid[-1]):,}"
        print(f"ε = {e:g}: smallest grid n with the core formed in ≥ {NEED:.0%} of {args.seeds} "
              f"seeds: {got}")


if __name__ == "__main__":
    main()
