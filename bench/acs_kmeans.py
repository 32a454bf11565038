"""Acs et al. (TKDE), Fig. 3 analogue: DP kernel k-means vs standard DP k-means on binarised digits.

Data: scikit-learn's 1,797 digits, pixels ÷16 binarised at 0.5 (m = 64); 15% held out as public
(seed 0): k = 10 random public records initialise both algorithms (a fresh draw per run), and γ is
1/median squared distance over the public split. The private part (1,528 rows) is clustered.
Protocol (paper §6): ε at δ = 1e-5 fixes ρ = T_K/(2σ_K²) (Eq. 4 ↔ zCDP, tight conversion), the same
for both algorithms; kernel k-means uses RFF of dimension d and C_s = 1; the baseline is SuLQ noisy
Lloyd in input space with Λ = C_s = √m = 8 (dp_lloyd). Metric: clustering accuracy under the best
one-to-one matching of clusters to digit labels (Hungarian; NON-private, evaluation only), mean ±
std over runs. "∞" is σ_K → 0 (ρ = 1e9): the non-private versions of both loops.

    PYTHONPATH=. .venv/bin/python bench/acs_kmeans.py                        # 20 runs, T_K = 5
    PYTHONPATH=. .venv/bin/python bench/acs_kmeans.py --iters 20             # the paper's T_K = 20
    PYTHONPATH=. .venv/bin/python bench/acs_kmeans.py --quick                # 5 runs
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dpviz.clustering.kernel_kmeans import (
    dp_kmeans_input,
    gamma_from_public,
    kernel_kmeans_sigma,
)
from dpviz.generative.data import binary_digits
from dpviz.metrics import labeling_failure
from dpviz.registry import Public, plan

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, math.inf)
DIMS = (20, 50, 200)
DELTA, K = 1e-5, 10
RADIUS = 8.0  # the input-space baseline's norm bound Λ


def rho_at(eps: float, split) -> float:
    """The ρ of the registry's plan for DP kernel k-means at the row-level (ε, δ) (∞: no noise)."""
    if math.isinf(eps):
        return 1e9
    pub = Public(n_declared=split.X.shape[0], d=split.X.shape[1], k=K, radius=RADIUS)
    return plan("kernel_kmeans", eps, DELTA, pub).budget.rho


def run(eps: float, iters: int, reps: int, split, gamma: float) -> dict[str, list[float]]:
    rho = rho_at(eps, split)
    sigma_K = math.sqrt(iters / (2.0 * rho))
    out: dict[str, list[float]] = {f"kernel d={d}": [] for d in DIMS} | {"standard": []}
    for rep in range(reps):
        init = split.public_init(K, rng=1000 + rep)
        for d in DIMS:
            loop = kernel_kmeans_sigma(split.X, init, sigma_K=sigma_K, n_features=d, gamma=gamma,
                                       iters=iters, rng=rep)
            out[f"kernel d={d}"].append(1.0 - labeling_failure(split.y, loop.labels))
        base = dp_kmeans_input(split.X, K, rho=rho, public_init=init, radius=RADIUS, iters=iters, rng=rep)
        out["standard"].append(1.0 - labeling_failure(split.y, base.step("lloyd_partition").data["labels"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 runs")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--iters", type=int, nargs="+", default=[5], help="T_K values")
    args = ap.parse_args()
    reps = args.reps or (5 if args.quick else 20)
    iters_list = tuple(args.iters)
    split = binary_digits(0.15, rng=0)
    gamma = gamma_from_public(split.X_public)
    print(f"private n = {split.X.shape[0]}, public n = {split.X_public.shape[0]}, γ = {gamma:.4f}, "
          f"δ = {DELTA:g}, {reps} runs")
    t0 = time.time()
    with threadpool_limits(1):
        for iters in iters_list:
            print(f"\nT_K = {iters}\n")
            cols = [f"kernel d={d}" for d in DIMS] + ["standard"]
            print("| ε | ρ | σ_K | " + " | ".join(cols) + " |")
            print("|---" * (3 + len(cols)) + "|")
            for eps in EPSILONS:
                res = run(eps, iters, reps, split, gamma)
                rho = rho_at(eps, split)
                cells = [f"{np.mean(res[c]):.3f} ± {np.std(res[c]):.3f}" for c in cols]
                print(f"| {'∞' if math.isinf(eps) else f'{eps:g}'} | {rho:.4g} | "
                      f"{math.sqrt(iters / (2 * rho)):.3g} | " + " | ".join(cells) + " |", flush=True)
        # Speed: one DP kernel k-means run (d = 200, T_K = 20) on the private digits.
        init = split.public_init(K, rng=0)
        times, cpu = [], []
        for rep in range(10):
            t, c = time.perf_counter(), time.process_time()
            kernel_kmeans_sigma(split.X, init, sigma_K=10.0, n_features=200, gamma=gamma, iters=20, rng=rep)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    print(f"\nspeed: DP kernel k-means (n={split.X.shape[0]}, d=200, T_K=20), median of 10 runs: "
          f"wall {np.median(times):.3f} s (min {np.min(times):.3f} s), CPU {np.median(cpu):.3f} s; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    main()
