"""FriendlyCore's claim about CKM+21 ("requires either too many tuples or an extremely large
separation") on FriendlyCore's own test beds, at the same row-level (ε, δ), vs n.

Fig. 6 (k-means): fig6_blobs(n, k = 8, d = 2), Λ = 1; metric: normalized k-means loss (1 − cost of
non-private k-means++ / cost of the released centers; 1 for ⊥) and the ⊥ rate.
Fig. 7 (GMM): fig7_gmm(n, k = 5, d = 10), Λ = 10√d; metric: labelling failure of the released
centers on the true labels (1 for ⊥) and the ⊥ rate.

Methods, all through dpviz.run at the same row-level target (ε, δ):
- friendlycore (its registry defaults; the PCA oracle on Fig. 7 as in the paper);
- easy_instances / easy_instances_gmm with PrivatekNoisyCenters, t = n_min (the smallest private
  t, §7's choice) and γ = 2·10⁻³/k (the §7 bench's rule) [OURS];
- the same with PrivatekAverages (γ = 0.1), whose n_min (millions of tuples) is printed: every run
  below it is ⊥ before the data is read.

    PYTHONPATH=. .venv/bin/python bench/easy_vs_fc.py --quick
    PYTHONPATH=. .venv/bin/python bench/easy_vs_fc.py --seeds 10
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dpviz
from bench.harness import stream  # issue 24: data, reference and algorithm streams apart
from dpviz.clustering.easy_instances import averages_plan, noisy_centers_plan
from dpviz.clustering.easy_instances.applications import calibrate_scale, kmeans_guarantee
from dpviz.data.generators import fig6_blobs, fig7_gmm
from dpviz.metrics import labeling_failure, nearest_center, normalized_loss, reference_kmeans_cost

BETA = 0.05


def noisy_t(k: int, eps: float, delta: float, share: float) -> int:
    """n_min of PrivatekNoisyCenters at the tuple stage's share of the calibrated budget."""
    b = calibrate_scale(lambda x: kmeans_guarantee(x, 1 - share), eps, delta) if share < 1 else None
    e, dl = (b.eps * share, b.delta * share) if b is not None else (eps, delta)
    return noisy_centers_plan(1000, k, eps=e, delta=dl, beta=BETA, gamma=2e-3 / k).n_min


def averages_t(k: int, d: int, eps: float, delta: float, radius: float) -> int | None:
    return averages_plan(1000, k, d, eps=eps, delta=delta, beta=BETA, gamma=0.1, radius=radius,
                         r_min=radius / 1e3).n_min


def fig6(ns: list[int], seeds: int, eps: float, delta: float) -> None:
    k, d = 8, 2
    t_nc = noisy_t(k, eps, delta, 0.75)
    t_av = averages_t(k, d, 0.75 * eps, 0.75 * delta, 1.0)
    print(f"\nFig. 6 (k = {k}, d = {d}), row-level (ε, δ) = ({eps}, {delta}); easy_instances: "
          f"NoisyCenters t = {t_nc:,}, γ = {2e-3 / k:.2g}; Averages n_min = {t_av:,}")
    print("| n | method | ⊥ rate | normalized loss (mean) | seconds (mean) |")
    print("|---|---|---|---|---|")
    for n in ns:
        rows: dict[str, list[tuple[bool, float, float]]] = {}
        for seed in range(seeds):
            ds = fig6_blobs(n, k=k, d=d, rng=stream(seed, "data", "fig6", str(n)))
            ref = reference_kmeans_cost(ds.X, k, rng=stream(seed, "reference", "fig6", str(n)))
            runs = {"friendlycore": dict(),
                    "easy_instances (NoisyCenters)": dict(n_tuples=t_nc, gamma=2e-3 / k),
                    "easy_instances (Averages)": dict(aggregator="averages", n_tuples=min(t_av, n // k))}
            for name, kw in runs.items():
                alg = "friendlycore" if name == "friendlycore" else "easy_instances"
                if alg == "easy_instances" and kw["n_tuples"] * k > n:
                    rows.setdefault(name, []).append((True, 1.0, 0.0))  # t·k > n: < 1 row per center
                    continue
                t0 = time.perf_counter()
                r = dpviz.run(alg, ds.X, k, epsilon=eps, delta=delta, radius=1.0, n_declared=n,
                              rng=stream(seed, "algorithm", alg, str(n)),
                              **kw)
                secs = time.perf_counter() - t0
                loss = 1.0 if r.centers is None else normalized_loss(ds.X, r.centers, reference_cost=ref)
                rows.setdefault(name, []).append((r.centers is None, loss, secs))
        for name, vals in rows.items():
            bot = np.mean([v[0] for v in vals])
            print(f"| {n:,} | {name} | {bot:.2f} | {np.mean([v[1] for v in vals]):.3f} | "
                  f"{np.mean([v[2] for v in vals]):.2f} |", flush=True)


def fig7(ns: list[int], seeds: int, eps: float, delta: float) -> None:
    k, d = 5, 10
    radius = 10.0 * math.sqrt(d)
    t_nc = noisy_centers_plan(1000, k, eps=eps, delta=delta, beta=BETA, gamma=2e-3 / k).n_min
    t_av = averages_t(k, d, eps, delta, radius)
    print(f"\nFig. 7 GMM (k = {k}, d = {d}), row-level (ε, δ) = ({eps}, {delta}); easy_instances_gmm: "
          f"NoisyCenters t = {t_nc:,}, γ = {2e-3 / k:.2g}; Averages n_min = {t_av:,}")
    print("| n | method | ⊥ rate | labelling failure (mean) | seconds (mean) |")
    print("|---|---|---|---|---|")
    for n in ns:
        rows: dict[str, list[tuple[bool, float, float]]] = {}
        for seed in range(seeds):
            ds = fig7_gmm(n, k=k, d=d, rng=stream(seed, "data", "fig7", str(n)))
            runs = {"friendlycore (PCA oracle)": ("friendlycore", dict(oracle="pca")),
                    "easy_instances_gmm (NoisyCenters)": ("easy_instances_gmm", dict(n_tuples=t_nc,
                                                                                   gamma=2e-3 / k)),
                    "easy_instances_gmm (Averages)": ("easy_instances_gmm", dict(
                        aggregator="averages", n_tuples=min(t_av, n // (2 * k))))}
            for name, (alg, kw) in runs.items():
                if alg == "easy_instances_gmm" and kw["n_tuples"] * k > n * 0.45:
                    rows.setdefault(name, []).append((True, 1.0, 0.0))  # |S¹| < t·k
                    continue
                t0 = time.perf_counter()
                r = dpviz.run(alg, ds.X, k, epsilon=eps, delta=delta, radius=radius, n_declared=n,
                              rng=stream(seed, "algorithm", alg, str(n)),
                              **kw)
                secs = time.perf_counter() - t0
                if r.centers is None:
                    fail = 1.0
                else:
                    pred, _ = nearest_center(ds.X, r.centers)
                    fail = labeling_failure(ds.labels, pred)
                rows.setdefault(name, []).append((r.centers is None, fail, secs))
        for name, vals in rows.items():
            bot = np.mean([v[0] for v in vals])
            print(f"| {n:,} | {name} | {bot:.2f} | {np.mean([v[1] for v in vals]):.3f} | "
                  f"{np.mean([v[2] for v in vals]):.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--eps", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--n6", type=int, nargs="+", default=[20_000, 100_000, 500_000])
    ap.add_argument("--n7", type=int, nargs="+", default=[20_000, 100_000, 500_000])
    ap.add_argument("--quick", action="store_true", help="3 seeds, n ≤ 2·10⁵")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.n6, args.n7 = 3, [20_000, 200_000], [20_000, 200_000]
    fig6(args.n6, args.seeds, args.eps, args.delta)
    fig7(args.n7, args.seeds, args.eps, args.delta)


if __name__ == "__main__":
    main()
