"""Issue 28: calibrating Balcan et al.'s practical profile on data DISJOINT from the evaluation.

Calibration recipe (never an evaluation row): 32 unit-norm means in ℝ^50, sd 0.08, clipped to
Λ = 1.5, n = 40 000, seeds 100, 101 (the evaluation is 64 means in ℝ^100, sd 0.05, n = 10⁵,
seeds 0–2, and digits). Loss: relative excess over the best of 3 KMeans(n_init=1). Variants of
the profile (candidate / local-search / counts / sums / refine shares, T₃, Lloyd steps) against
SuLQ and DP-Lloyd (random public starts), all through ``dpviz.run`` at ε = 1, δ = 10⁻⁶, with
data and each algorithm on their own SeedSequence streams.

--uniformity prints how far the local search's swap probabilities are from uniform (the trace's
non-private diagnostics): the measured reason the profile cannot be tuned to win at this n.

    PYTHONPATH=. .venv/bin/python bench/balcan_calibrate.py --ks 4 16 48
    PYTHONPATH=. .venv/bin/python bench/balcan_calibrate.py --uniformity --ks 4 16
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from sklearn.cluster import KMeans

import dpviz
from dpviz.metrics import kmeans_cost

CALIB, ALGO = 0xCA11B, 0xA160

VARIANTS: dict[str, tuple[str, dict]] = {
    "A_default": ("balcan", {}),
    "B_lloyd4": ("balcan", dict(n_lloyd=4, refine=0.5, candidate=0.25, local_search=0.05, counts=0.02,
                                sums=0.18)),
    "C_T3_3": ("balcan", dict(T3=3, local_search=0.2, n_lloyd=3, refine=0.45, candidate=0.2, counts=0.02,
                              sums=0.13)),
    "D_lloyd5": ("balcan", dict(T3=5, n_lloyd=5, refine=0.6, candidate=0.2, local_search=0.05, counts=0.02,
                                sums=0.13)),
    "sulq": ("sulq", {}),
    "dp_lloyd": ("dp_lloyd", {}),
}


def data(seed: int, n: int = 40_000, d: int = 50, comps: int = 32, sd: float = 0.08) -> np.ndarray:
    g = np.random.default_rng(np.random.SeedSequence([CALIB, seed]))
    mu = g.standard_normal((comps, d))
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    X = mu[g.integers(0, comps, n)] + sd * g.standard_normal((n, d))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / 1.5)


def algo(seed: int, k: int, i: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([ALGO, seed, k, i]))


def sweep(ks: list[int], seeds: list[int]) -> None:
    print(f"| k | {' | '.join(VARIANTS)} |  (median relative excess loss; load {os.getloadavg()[0]:.1f})")
    print("|---|" + "---|" * len(VARIANTS))
    for k in ks:
        res: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for seed in seeds:
            X = data(seed)
            ref = min(KMeans(k, n_init=1, random_state=r).fit(X).inertia_ for r in range(3))
            for i, (v, (name, p)) in enumerate(VARIANTS.items()):
                r = dpviz.run(name, X, k, epsilon=1.0, delta=1e-6, radius=1.5, n_declared=len(X),
                              rng=algo(seed, k, i), **p)
                res[v].append(kmeans_cost(X, r.centers) / ref - 1 if r.ok else np.nan)
        print(f"| {k} | " + " | ".join(f"{np.median(x):.4g}" for x in res.values()) + " |", flush=True)


def uniformity(ks: list[int]) -> None:
    print("| k | |C| | uniform 1/(k|C|) | median p_max of a swap | median p of the drawn swap | "
          "final selection max p | 1/T₃ | loss Z⁽⁰⁾ → Z⁽ᵀ⁾ |")
    print("|---|---|---|---|---|---|---|---|")
    for k in ks:
        X = data(100)
        r = dpviz.run("balcan", X, k, epsilon=1.0, delta=1e-6, radius=1.5, n_declared=len(X),
                      rng=algo(100, k, 99))
        dbg, m = r.find("local_search_debug").data, len(r.find("candidates").data["centers"])
        print(f"| {k} | {m} | {1 / (k * m):.3g} | {np.median(dbg['p_max']):.3g} | "
              f"{np.median(dbg['p_chosen']):.3g} | "
              f"{dbg['final_probs'].max():.3g} | {1 / len(dbg['final_probs']):.3g} | "
              f"{dbg['losses'][0]:.4g} → {dbg['losses'][-1]:.4g} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", type=int, nargs="+", default=[4, 16, 48])
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 101])
    ap.add_argument("--uniformity", action="store_true")
    args = ap.parse_args()
    uniformity(args.ks) if args.uniformity else sweep(args.ks, args.seeds)


if __name__ == "__main__":
    main()
