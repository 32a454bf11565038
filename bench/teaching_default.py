"""Where FriendlyCore's core starts to form on Explore's ε slider (issues 16, 33: the default lesson).

For each candidate default (generator, n, k, t, data seed) and each row-level ε of the slider's
grid (``app/components/controls.EPS_GRID``, δ = 10⁻⁶), whether the core forms (FriendlyCore
answers, not its backup) for run seeds 0, 1, …: the app's own calls (data ``GENERATORS[gen](n,
rng=dseed, d, k)``; the run seed's ``SeedSequence(seed).spawn(3)`` streams: [0] tuple stage,
[1] private stage; the budget from ``registry.plan`` at (ε, δ); practical split, fallback on,
r_min = 10⁻³·Λ, n_declared = n). Seed 0 is what Explore opens on: its "mark" is the smallest ε
from which the core forms at every larger ε of the grid (Explore's ``run.core_eps``).

    nice -n 10 env PYTHONPATH=. .venv/bin/python bench/teaching_default.py            # docs/fc_clustering.md
    nice -n 10 env PYTHONPATH=. .venv/bin/python bench/teaching_default.py --quick    # the default, 2 seeds

``--losses`` (issue 43 item 1: the price of privacy must show): per candidate (n, t) and per ε,
the normalized k-means loss (``dpviz.metrics.normalized_loss`` against the non-private reference
the app ships, ``reference_kmeans(X, k, rng=0)``) of the run Explore shows, its median, q10 and
q90 over run seeds 0 … seeds−1, and in how many of them FriendlyCore's own core answered:

    nice -n 10 env PYTHONPATH=. .venv/bin/python bench/teaching_default.py --losses --seeds 10
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dpviz.registry as registry
from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.clustering.reference import reference_kmeans
from dpviz.data import GENERATORS
from dpviz.metrics import normalized_loss

#: Explore's ε slider (app/components/controls.EPS_GRID).
EPS_GRID = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0)
DELTA = 1e-6
#: The default lesson (app/components/state.py) first, then the alternatives weighed.
CANDIDATES = (("fig6_blobs", 150_000, 8, 1500, 0), ("fig6_blobs", 100_000, 8, 1000, 0),
              ("fig6_blobs", 50_000, 8, 500, 0), ("fig6_blobs", 20_000, 8, 200, 0))


def formed_at(gen: str, n: int, k: int, t: int, dseed: int, seed: int) -> dict[float, bool]:
    """Core formed, per ε of the grid, for one run seed (Explore's calls)."""
    ds = GENERATORS[gen](n, rng=dseed, d=2, k=k)
    radius = float(ds.radius)
    spec = registry.get("friendlycore")
    pub = registry.Public(n_declared=n, d=2, k=k, radius=radius)
    params = spec.make_params(n_tuples=t, r_min=1e-3 * radius)
    ss = np.random.SeedSequence(seed).spawn(3)
    stage = fc_tuple_stage(ds.X, k, n_tuples=t, radius=radius, rng=np.random.default_rng(ss[0]))
    out = {}
    for eps in EPS_GRID:
        b = registry.plan(spec, eps, DELTA, pub, params).budget
        r = fc_private_stage(ds.X, stage, rho=b.rho, delta=b.delta, radius=radius, r_min=1e-3 * radius,
                             n_declared=n, rng=np.random.default_rng(ss[1]))
        out[eps] = bool(spec.structure_ok(r))
    return out


#: ``--losses``: the lesson's rows control's settings at the lesson's t (app/components/shipped.py).
LOSS_CANDIDATES = (("fig6_blobs", 150_000, 8, 1500, 0), ("fig6_blobs", 50_000, 8, 1500, 0),
                   ("fig6_blobs", 20_000, 8, 1500, 0))
#: ``--losses``: the slider's ends, Present's stops and the ε around the core's mark.
LOSS_EPS = (0.02, 0.05, 0.1, 0.3, 1.0, 3.0, 5.0, 10.0)


def losses(gen: str, n: int, k: int, t: int, dseed: int, seeds: int,
           eps_list: tuple[float, ...] = LOSS_EPS) -> dict[float, tuple[np.ndarray, int]]:
    """Per ε: (normalized losses over run seeds 0 … seeds−1, how many runs the core answered),
    by Explore's calls (``dpviz.run`` on the seeded tuple stage, the app's seed streams)."""
    ds = GENERATORS[gen](n, rng=dseed, d=2, k=k)
    radius = float(ds.radius)
    ref_cost = reference_kmeans(ds.X, k, rng=0).cost
    spec = registry.get("friendlycore")
    out: dict[float, tuple[list[float], int]] = {e: ([], 0) for e in eps_list}
    for seed in range(seeds):
        ss = np.random.SeedSequence(seed).spawn(3)
        stage = fc_tuple_stage(ds.X, k, n_tuples=t, radius=radius, rng=np.random.default_rng(ss[0]))
        for eps in eps_list:
            r = registry.run("friendlycore", ds.X, k, epsilon=eps, delta=DELTA, radius=radius,
                             rng=np.random.default_rng(ss[1]), n_declared=n, stage=stage,
                             n_tuples=t, r_min=1e-3 * radius)
            got, formed = out[eps]
            got.append(normalized_loss(ds.X, r.centers, reference_cost=ref_cost))
            out[eps] = (got, formed + bool(spec.structure_ok(r)))
    return {e: (np.asarray(v), c) for e, (v, c) in out.items()}


def print_losses(seeds: int) -> None:
    print("| n | t | ε | median loss | q10 | q90 | core answered | s |")
    print("|---|---|---|---|---|---|---|---|")
    for gen, n, k, t, dseed in LOSS_CANDIDATES:
        t0 = time.perf_counter()
        got = losses(gen, n, k, t, dseed, seeds)
        dt = time.perf_counter() - t0
        for eps, (v, formed) in got.items():
            q10, med, q90 = np.quantile(v, [0.1, 0.5, 0.9])
            print(f"| {n:,} | {t} | {eps:g} | {med:.3f} | {q10:.3f} | {q90:.3f} | {formed} of {v.size} | "
                  f"{dt:.0f} |", flush=True)


def mark(row: dict[float, bool]) -> float | None:
    """The smallest ε of the grid from which the core forms at every larger ε."""
    m = None
    for eps in reversed(EPS_GRID):
        if not row[eps]:
            break
        m = eps
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the default lesson only, two seeds")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--losses", action="store_true", help="the losses per ε and rows (issue 43)")
    args = ap.parse_args()
    if args.losses:
        print(f"row-level δ = {DELTA:g}; load average {os.getloadavg()[0]:.1f}")
        print_losses(args.seeds)
        return
    cands = CANDIDATES[:1] if args.quick else CANDIDATES
    seeds = 2 if args.quick else args.seeds
    print(f"row-level δ = {DELTA:g}; load average {os.getloadavg()[0]:.1f}")
    print("| data | n | k | t | run seed | mark (ε) | formed at ε = " + " ".join(f"{e:g}" for e in EPS_GRID)
          + " | s |")
    print("|---|---|---|---|---|---|---|---|")
    for gen, n, k, t, dseed in cands:
        for seed in range(seeds):
            t0 = time.perf_counter()
            row = formed_at(gen, n, k, t, dseed, seed)
            cells = "".join("█" if row[e] else "·" for e in EPS_GRID)
            print(f"| {gen} (seed {dseed}) | {n:,} | {k} | {t} | {seed} | {mark(row)} | {cells} | "
                  f"{time.perf_counter() - t0:.0f} |", flush=True)


if __name__ == "__main__":
    main()
