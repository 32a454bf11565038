"""Easy Instances' sample complexity as a user gets it: `dpviz.run("easy_instances", …)` at its
registry defaults (t, γ, m and the split automatic, from public inputs), against the hand-set §7
bench (bench/easy_sample_complexity.py: the k-tuple algorithm alone at ε = 1, t = n_min,
γ = 2·10⁻³/k).

Data: a uniform mixture of k standard Gaussians N(R·e_i, I_d); Λ = R + 12 (the issue's 1036 at
R = 2¹⁰) and n_declared = n (public). Success: the released centers classify the samples perfectly
(every sample of Gaussian i nearest the same center, a different one per i) in ≥ 1 − β = 95 % of
--seeds seeds. Row-level (ε, δ = 10⁻⁶) is the WHOLE run's guarantee (tuple stage + the private
Lloyd step), unlike the hand-set bench's ε of the k-tuple stage alone.

Seeds: each (seed, n) draws its data from SeedSequence([DATA, seed, n]) and its algorithm from
SeedSequence([ALGO, seed, n]) — independent streams, never the same int for both.

The minimal n is found by doubling from --n-start, then bisection to --rel relative width; a seed
loop stops as soon as more than β·seeds runs failed. Every run is timed; the load average is
printed beside the table.

    PYTHONPATH=. .venv/bin/python bench/easy_registry_sample_complexity.py --eps 1 3 --seeds 20
    PYTHONPATH=. .venv/bin/python bench/easy_registry_sample_complexity.py --eps 1 --n 159840 239760
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import dpviz
from bench.easy_sample_complexity import BETA, mixture, perfect

DELTA = 1e-6
DATA, ALGO = 0xDA7A, 0xA160  # stream keys: data and algorithm never share a seed


def one(n: int, k: int, d: int, R: float, eps: float, seed: int, gmm: bool) -> tuple[bool, str | None, dict]:
    X, lab = mixture(n, k, d, R, np.random.default_rng(np.random.SeedSequence([DATA, seed, n])))
    r = dpviz.run("easy_instances_gmm" if gmm else "easy_instances", X, k, epsilon=eps, delta=DELTA,
                  radius=R + 12.0, n_declared=n,
                  rng=np.random.default_rng(np.random.SeedSequence([ALGO, seed, n])))
    return perfect(X, lab, r.centers, k), r.failure, r.params


def rate(n: int, k: int, d: int, R: float, eps: float, seeds: int, gmm: bool) -> tuple[float, str]:
    allowed = seeds - math.ceil((1 - BETA) * seeds)
    ok = fail = 0
    why: dict[str, int] = {}
    p: dict = {}
    for seed in range(seeds):
        try:
            good, failure, p = one(n, k, d, R, eps, seed, gmm)
        except ValueError as exc:  # refused before reading data (declared n too small)
            return 0.0, f"refused: {str(exc)[:90]}…"
        ok += good
        fail += not good
        if not good:
            key = "⊥" if failure else "not perfect"
            why[key] = why.get(key, 0) + 1
        if fail > allowed:
            break
    print(f"# ε={eps} n={n:,}: {ok}/{ok + fail} perfect {why} t={p.get('n_tuples')} "
          f"γ={p.get('gamma', 0):.3g}",
          file=sys.stderr, flush=True)
    return ok / seeds, f"t = {p.get('n_tuples')}, γ = {p.get('gamma', 0):.3g}"


def minimal_n(k: int, d: int, R: float, eps: float, seeds: int, n_start: int, rel: float,
              gmm: bool) -> tuple[int | None, str, float]:
    start = time.perf_counter()
    good = lambda n: rate(n, k, d, R, eps, seeds, gmm)  # noqa: E731
    n = n_start
    r, info = good(n)
    lo, hi = None, None
    if r >= 1 - BETA:
        hi = n
        while True:
            r2, info2 = good(n // 2)
            if r2 < 1 - BETA:
                lo = n // 2
                break
            n //= 2
            hi, info = n, info2
    else:
        lo = n
        for _ in range(6):
            n *= 2
            r2, info2 = good(n)
            if r2 >= 1 - BETA:
                hi, info = n, info2
                break
            lo = n
        if hi is None:
            return None, info, time.perf_counter() - start
    while hi - lo > rel * hi:
        mid = (lo + hi) // 2
        r3, info3 = good(mid)
        if r3 >= 1 - BETA:
            hi, info = mid, info3
        else:
            lo = mid
    return hi, info, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--R-exp", type=int, default=10)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 3.0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--n-start", type=int, default=160_000)
    ap.add_argument("--rel", type=float, default=1 / 16)
    ap.add_argument("--gmm", action="store_true", help="easy_instances_gmm instead of easy_instances")
    ap.add_argument("--n", type=int, nargs="*", default=None, help="only these n: print their rates")
    args = ap.parse_args()
    R = 2.0**args.R_exp
    name = "easy_instances_gmm" if args.gmm else "easy_instances"
    print(f"{name} via dpviz.run at its defaults; k = {args.k}, d = {args.d}, R = 2^{args.R_exp}, "
          f"Λ = {R + 12:g}, δ = {DELTA}, {args.seeds} seeds, success = perfect in ≥ {1 - BETA:.0%}; "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.n:
        print("| ε | n | perfect rate | settings |")
        print("|---|---|---|---|")
        for eps in args.eps:
            for n in args.n:
                r, info = rate(n, args.k, args.d, R, eps, args.seeds, args.gmm)
                print(f"| {eps:g} | {n:,} | {r:.2f} | {info} |", flush=True)
        return
    print("| row-level ε | minimal n | settings at it | seconds |")
    print("|---|---|---|---|")
    for eps in args.eps:
        n, info, secs = minimal_n(args.k, args.d, R, eps, args.seeds, args.n_start, args.rel, args.gmm)
        print(f"| {eps:g} | {'> 64× start' if n is None else f'{n:,}'} | {info} | {secs:.0f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
