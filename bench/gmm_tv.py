"""TV distance vs n for the univariate private GMM learner, non-private EM, and a naive baseline.

Issue 15 (Ashtiani, Majid, Narayanan, NeurIPS 2024; the paper has no experiments). Mixtures: the
seed note's hard mixture (weights .5/.3/.2, means −50/0/1000, sds 1/0.01/100) and a well-separated
one (3 equal weights, means −10/0/10, sd 1). At (ε, δ) = (1, 1e-6), k = 3:

- learner: ``private_gmm_1d`` (declared n = n), TV to the truth; ⊥ counts as TV = 1;
- found: share of true components the crude stage approximates (G = 10 criterion);
- EM: ``sklearn.mixture.GaussianMixture`` (k-means init, n_init = 2), NOT private;
- naive: clip to [−B, B], add Lap(2B/ε) to every point, then EM (ε-DP for replacing a row; needs
  the bound B = 2000 for the hard mixture, 50 for the separated one);
- time: the learner's wall time and CPU time (process_time; wall time on a shared machine
  includes waiting for a core), medians over reps, one thread per job.

Seeds: rep r draws data from SeedSequence([1000 + r, 0xDA7A]) and runs the learner with seed
11_000 + r. The learner's defaults (atoms per group, levels, move sets) were chosen in a
development loop on these two mixtures with data seeds 0–3 and learner seeds 10_000–10_003;
the bench seeds are disjoint from those.

    PYTHONPATH=. .venv/bin/python bench/gmm_tv.py            # n = 1e3 … 1e6, 3 reps
    PYTHONPATH=. .venv/bin/python bench/gmm_tv.py --quick    # n = 1e3, 1e4, 1e5, 2 reps
    PYTHONPATH=. .venv/bin/python bench/gmm_tv.py --timing   # the learner alone at n = 1e5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from joblib import Parallel, delayed

EPS, DELTA, K = 1.0, 1e-6, 3
BOUND = {"hard": 2000.0, "separated": 50.0}


def one_rep(key: str, n: int, rep: int, em_too: bool) -> dict:
    from threadpoolctl import threadpool_limits

    from dpviz.mixtures import explore as ex
    from dpviz.mixtures.baselines import em_fit, noisy_points_em
    from dpviz.mixtures.crude import CrudeGroup, found_components
    from dpviz.mixtures.learner import mixture_of, private_gmm_1d
    from dpviz.mixtures.mixture import tv_distance

    with threadpool_limits(limits=1):
        x, sc = ex.sample(key, K, n, 1000 + rep)
        truth = sc.truth
        t0, c0 = time.perf_counter(), time.process_time()
        res = private_gmm_1d(x, K, epsilon=EPS, delta=DELTA, n_declared=n, rng=11_000 + rep)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        mix = mixture_of(res)
        g = res.step("groups").data
        groups = [CrudeGroup(m, s, c, lo, hi, np.zeros(0, int)) for m, s, c, lo, hi in
                  zip(g["means"], g["sds"], g["n_hat"], g["lo"], g["hi"], strict=True)]
        row = dict(key=key, n=n, rep=rep, seconds=secs, cpu=cpu, bottom=float(mix is None),
                   tv=1.0 if mix is None else tv_distance(truth, mix),
                   found=float(found_components(groups, truth.means, truth.sds).mean()))
        if em_too:
            row["em"] = tv_distance(truth, em_fit(x, K, seed=rep, n_init=2))
            naive = noisy_points_em(x, K, epsilon=EPS, bound=BOUND[key],
                                    rng=np.random.default_rng(20_000 + rep), seed=rep)
            row["naive"] = tv_distance(truth, naive)
        return row


def timing(n: int = 100_000, reps: int = 5) -> None:
    """The learner alone at n, in this process (no pool): wall and CPU seconds, median of reps."""
    from dpviz.mixtures import explore as ex
    from dpviz.mixtures.learner import private_gmm_1d

    for key in ("hard", "separated"):
        x, _ = ex.sample(key, K, n, 1000)
        private_gmm_1d(x, K, epsilon=EPS, delta=DELTA, n_declared=n, rng=0)  # warm-up
        wall, cpu = [], []
        for r in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            private_gmm_1d(x, K, epsilon=EPS, delta=DELTA, n_declared=n, rng=11_000 + r)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(f"{key:<10} n = {n}: wall {np.median(wall):.3f} s (min {min(wall):.3f}), "
              f"cpu {np.median(cpu):.3f} s (min {min(cpu):.3f}), {reps} runs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--ns", type=str, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-em-above", type=int, default=10**9, help="skip EM/naive above this n")
    ap.add_argument("--timing", action="store_true", help="only time the learner at n = 1e5")
    args = ap.parse_args()
    if args.timing:
        timing()
        return
    reps = args.reps or (2 if args.quick else 3)
    full = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
    ns = ([int(float(v)) for v in args.ns.split(",")] if args.ns else
          [1_000, 10_000, 100_000] if args.quick else full)
    t0 = time.perf_counter()
    rows = Parallel(n_jobs=args.jobs)(delayed(one_rep)(key, n, rep, n <= args.no_em_above)
                                      for key in ("hard", "separated") for n in ns for rep in range(reps))
    print(f"(ε, δ) = ({EPS}, {DELTA}), k = {K}, reps = {reps}; medians (learner TV: min–max)")
    print(f"{'mixture':<10}{'n':>9}  {'learner TV':>18}  {'⊥':>4}  {'found':>6}  {'EM TV':>7}  "
          f"{'naive TV':>8}  {'wall s':>7}  {'cpu s':>6}")
    for key in ("hard", "separated"):
        for n in ns:
            rs = [r for r in rows if r["key"] == key and r["n"] == n]
            tv = np.array([r["tv"] for r in rs])
            em = [r["em"] for r in rs if "em" in r]
            nv = [r["naive"] for r in rs if "naive" in r]
            em_med = np.median(em) if em else float("nan")
            nv_med = np.median(nv) if nv else float("nan")
            print(f"{key:<10}{n:>9}  {np.median(tv):>7.3f} ({tv.min():.3f}–{tv.max():.3f})  "
                  f"{np.mean([r['bottom'] for r in rs]):>4.2f}  {np.mean([r['found'] for r in rs]):>6.2f}  "
                  f"{em_med:>7.3f}  {nv_med:>8.3f}  {np.median([r['seconds'] for r in rs]):>7.3f}  "
                  f"{np.median([r['cpu'] for r in rs]):>6.3f}")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
