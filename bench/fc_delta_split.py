"""Would a utility-aware δ split give Explore's lesson its core back? (issue 27, finding of issue 26)

``dpviz.registry.calibrate`` tries a few splits of the row-level δ between FriendlyCore's own δ and
the conversion's slack δ′ (``dpviz.privacy.accounting.delta_allocations``) and keeps the one with
the largest ρ;
FriendlyCore's own δ then becomes tiny (ε = 3, δ = 1e-6 per row: own δ 2.4e-8). For each row-level
ε of Explore's slider and each feasible allocation this prints the calibrated (own δ, ρ), the
practical split's predicted margins (public inputs only) and how often the core forms over
seeded runs on the teaching lesson (fig6_blobs, n = 20,000, k = 8, t = 200, the app's calls).

    PYTHONPATH=. python bench/fc_delta_split.py [--seeds 10] [--n 20000] [--t 200]

Data and algorithm streams: the data from ``data:fig6_blobs`` (int seed 0), the tuple stage and
each private run from their own ``SeedSequence`` children of a separate root (never the data's).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import dpviz.registry as registry
from dpviz.clustering.friendlycore import budget as fcb
from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.data import fig6_blobs
from dpviz.privacy.accounting import delta_allocations

EPS = (1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0)
DELTA = 1e-6
K, R_MIN = 8, 1e-3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--t", type=int, default=200)
    args = ap.parse_args()
    spec = registry.get("friendlycore")
    pub = registry.Public(n_declared=args.n, d=2, k=K, radius=1.0)
    params = spec.make_params(n_tuples=args.t, oracle="kmeans++", preset="practical", fallback=True,
                              r_min=R_MIN)
    ds = fig6_blobs(args.n, rng=0)
    streams = np.random.SeedSequence(2027).spawn(args.seeds + 1)  # algorithm streams only
    stage = fc_tuple_stage(ds.X, K, n_tuples=args.t, oracle="kmeans++", radius=1.0,
                           rng=np.random.default_rng(streams[0]))
    print(f"fig6_blobs n={args.n:,} k={K} t={args.t}, row-level δ = {DELTA:g}, {args.seeds} seeds "
          f"(load average {os.getloadavg()[0]:.1f})")
    print("| row-level ε | own δ | ρ | margin match / dist / FindDiam (sd) | core formed |")
    print("|---|---|---|---|---|")
    for eps in EPS:
        for share, slack in delta_allocations("zcdp", eps, DELTA):
            cal = registry._bisect(spec, eps, DELTA, pub, params, share, slack)
            if cal is None:
                continue
            rho, own = cal.budget.rho, cal.budget.delta
            split = fcb.practical_split(t=args.t, k=K, rho=rho, delta=own, r_min=R_MIN, radius=1.0)
            m = list(fcb.margins(split, t=args.t, k=K, rho=rho, delta=own, r_min=R_MIN,
                                 radius=1.0).values())
            formed = sum(
                bool(spec.structure_ok(fc_private_stage(
                    ds.X, stage, rho=rho, delta=own, radius=1.0, r_min=R_MIN, preset="practical",
                    n_declared=args.n, fallback=True, rng=np.random.default_rng(s))))
                for s in streams[1:])
            print(f"| {eps:g} | {own:.2g} | {rho:.4g} | {m[0]:.2f} / {m[1]:.2f} / {m[2]:.2f} "
                  f"| {formed}/{args.seeds} |")


if __name__ == "__main__":
    main()
