"""Reproduce Balcan et al. 2017, §7 (Fig. 2): private k-means in high dimension.

Three parts (``--part``):

* ``synthetic`` — Fig. 2's synthetic panel: 100,000 points from a mixture of 64 Gaussians in ℝ^100,
  ε = 1, k ∈ {2, 4, 8, 16, 32, 64}. The seed gives no recipe; ours: 64 means uniform on the unit
  sphere, equal weights (each row picks a component uniformly), x = μ_j + 0.05·N(0, I₁₀₀) (cluster
  radius ≈ 0.5, nearest means ≈ 1 apart), declared Λ = 1.5 (rows have norm ≈ 1.12; clipping is a
  no-op in practice). Bench data seeds are 0..runs−1; defaults were chosen on seed 999.
* ``digits`` — scikit-learn's digits (1,797 × 64, k = 10), objective vs ε ∈ {0.1, 0.3, 1, 3, 10}.
  Pixels 0..16 are centered at the public midpoint 8, so Λ = 8·√64 = 64 (a public bound).
* ``speed`` — n = 1e5, d = 100, k = 16: one balcan run vs one scikit-learn KMeans(n_init=1),
  same data, same process, alternating, BLAS limited to one thread for both.

Methods: balcan (practical profile, pure ε), SuLQ k-means (20 Gaussian iterations from random
centers in the public box, (ε, δ = 1e-6)), DP-Lloyd (5 Gaussian iterations from random centers
in the ball, (ε, δ = 1e-6)), FriendlyCore via ``dpviz.run`` at the same row-level (ε, δ = 1e-6),
diffprivlib's KMeans (pure ε like balcan: DPLloyd with Laplace noise, 5 iterations, its split
corrected), non-private k-means++ (scikit-learn, n_init = 1). Metric: k-means objective / n (mean ± sd).

    PYTHONPATH=. .venv/bin/python bench/balcan_bench.py --part synthetic --quick
    PYTHONPATH=. .venv/bin/python bench/balcan_bench.py --part synthetic --ks 2 4 --runs 3
    PYTHONPATH=. .venv/bin/python bench/balcan_bench.py --part digits
    PYTHONPATH=. .venv/bin/python bench/balcan_bench.py --part speed
    PYTHONPATH=. .venv/bin/python bench/balcan_bench.py --part dims --n 20000 --ks 16 --runs 2
    PYTHONPATH=. .venv/bin/python bench/balcan_bench.py --part theory --ks 10
"""

from __future__ import annotations

import argparse
import time

import numpy as np

DELTA = 1e-6
METHODS = ("balcan", "SuLQ", "DP-Lloyd", "FriendlyCore", "diffprivlib", "k-means++")


#: Stream keys (issue 28): the data and each method's randomness come from distinct SeedSequence
#: keys. The comparisons before this fix passed the SAME int to mixture64 and to the baselines, so
#: SuLQ's and DP-Lloyd's "random" starts drew the very normals that ARE the true means (retracted).
DATA_KEY, ALGO_KEY = 0xDA7A, 0xA160


def data_rng(seed: int, *tags: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([DATA_KEY, seed, *tags]))


def algo_rng(method: str, seed: int, *tags: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([ALGO_KEY, METHODS.index(method), seed, *tags]))


def mixture64(n: int, d: int = 100, sd: float = 0.05, seed: int = 0) -> np.ndarray:
    """The synthetic recipe of the module docstring (64 components, Λ = 1.5); its own data stream."""
    from dpviz.data.bounds import clip_to_ball

    rng = data_rng(seed, n, d)
    mu = rng.standard_normal((64, d))
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    X = mu[rng.integers(0, 64, n)] + sd * rng.standard_normal((n, d))
    return clip_to_ball(X, 1.5)


def run_method(name: str, X: np.ndarray, k: int, eps: float, radius: float,
               seed: int) -> tuple[float, float]:
    """(k-means objective / n, seconds) of one method on X."""
    import dpviz
    from dpviz.clustering.balcan import balcan_kmeans
    from dpviz.clustering.baselines import diffprivlib_kmeans, nonprivate_kmeans
    from dpviz.metrics import kmeans_cost

    seed = algo_rng(name, seed, X.shape[0], X.shape[1], k, round(eps * 1000))  # never the data's
    t0 = time.perf_counter()
    if name == "balcan":
        res = balcan_kmeans(X, k, epsilon=eps, radius=radius, n_declared=X.shape[0], rng=seed)
    elif name == "SuLQ":
        res = dpviz.run("sulq", X, k, epsilon=eps, delta=DELTA, radius=radius, n_declared=X.shape[0],
                        rng=seed)  # the registry's plan: the largest ρ within (ε, δ)
    elif name == "DP-Lloyd":
        res = dpviz.run("dp_lloyd", X, k, epsilon=eps, delta=DELTA, radius=radius, n_declared=X.shape[0],
                        rng=seed, iters=5)
    elif name == "diffprivlib":
        res = diffprivlib_kmeans(X, k, eps=eps, radius=radius, iters=5, rng=seed)
    elif name == "FriendlyCore":
        res = dpviz.run("friendlycore", X, k, epsilon=eps, delta=DELTA, radius=radius,
                        n_declared=X.shape[0], rng=seed)
    else:
        res = nonprivate_kmeans(X, k, rng=seed, n_init=1)
    secs = time.perf_counter() - t0
    if res.centers is None:
        return float("nan"), secs
    return kmeans_cost(X, res.centers) / X.shape[0], secs


def _fmt(vals: list[float]) -> str:
    a = np.asarray(vals, dtype=float)
    if np.all(np.isnan(a)):
        return "⊥"
    return f"{np.nanmean(a):.3f} ± {np.nanstd(a):.3f}"


def part_synthetic(n: int, ks: list[int], runs: int, methods: list[str]) -> None:
    print(f"# synthetic: n={n}, d=100, 64 components, ε=1, δ={DELTA:g} (approx-DP baselines), {runs} runs")
    print("| k | " + " | ".join(methods) + " | balcan / SuLQ | balcan / k-means++ | balcan s |")
    print("|---|" + "---|" * (len(methods) + 3))
    data = {s: mixture64(n, seed=s) for s in range(runs)}
    for k in ks:
        cost: dict[str, list[float]] = {m: [] for m in methods}
        secs: dict[str, list[float]] = {m: [] for m in methods}
        for s in range(runs):
            for m in methods:
                c, t = run_method(m, data[s], k, 1.0, 1.5, s)
                cost[m].append(c)
                secs[m].append(t)
        b = np.nanmean(cost["balcan"]) if "balcan" in cost else np.nan
        r_sulq = b / np.nanmean(cost["SuLQ"]) if "SuLQ" in cost else np.nan
        r_km = b / np.nanmean(cost["k-means++"]) if "k-means++" in cost else np.nan
        t_b = np.mean(secs["balcan"]) if "balcan" in secs else np.nan
        print(f"| {k} | " + " | ".join(_fmt(cost[m]) for m in methods)
              + f" | {r_sulq:.3f} | {r_km:.3f} | {t_b:.1f} |", flush=True)


def part_digits(epss: list[float], runs: int, methods: list[str]) -> None:
    from sklearn.datasets import load_digits

    X = load_digits().data.astype(np.float64) - 8.0  # public midpoint of the 0..16 pixel range
    radius = 8.0 * np.sqrt(64)
    print(f"# digits: n={X.shape[0]}, d=64, k=10, Λ={radius:g}, δ={DELTA:g} (approx-DP baselines), "
          f"{runs} runs")
    print("| ε | " + " | ".join(methods) + " |")
    print("|---|" + "---|" * len(methods))
    for eps in epss:
        row = []
        for m in methods:
            row.append(_fmt([run_method(m, X, 10, eps, radius, s)[0] for s in range(runs)]))
        print(f"| {eps:g} | " + " | ".join(row) + " |", flush=True)


def part_dims(n: int, dims: list[int], k: int, runs: int, methods: list[str]) -> None:
    """Does the gap to SuLQ grow with d (§7)? The synthetic recipe in ℝ^d at fixed n, k, ε = 1."""
    print(f"# dimension sweep: n={n}, k={k}, 64 components, ε=1, δ={DELTA:g}, {runs} runs")
    print("| d | " + " | ".join(methods) + " | balcan / SuLQ |")
    print("|---|" + "---|" * (len(methods) + 1))
    for d in dims:
        cost: dict[str, list[float]] = {m: [] for m in methods}
        for s in range(runs):
            X = mixture64(n, d=d, seed=s)
            for m in methods:
                cost[m].append(run_method(m, X, k, 1.0, 1.5, s)[0])
        ratio = np.nanmean(cost["balcan"]) / np.nanmean(cost["SuLQ"])
        print(f"| {d} | " + " | ".join(_fmt(cost[m]) for m in methods) + f" | {ratio:.3f} |", flush=True)


def part_harness(n: int, ks: list[int], runs: int, methods: list[str], digits: bool) -> None:
    """Issue 28: balcan vs SuLQ and DP-Lloyd (random public starts) through ``dpviz.run`` with
    bench/harness.py (independent data / algorithm / reference streams, relative excess loss over
    the best of 3 KMeans(n_init=1), ⊥ scored as the origin), on the paper's synthetic recipe (64
    unit-norm means in ℝ^100, sd 0.05, Λ = 1.5, one row per k) and on digits (harness row)."""
    from bench.harness import EVAL_ROWS, Row, Runner, format_table, load_text, summarize

    def synthetic(k: int) -> Row:
        def make(rng: np.random.Generator) -> tuple[np.ndarray, int, float]:
            mu = rng.standard_normal((64, 100))
            mu /= np.linalg.norm(mu, axis=1, keepdims=True)
            return mu[rng.integers(0, 64, n)] + 0.05 * rng.standard_normal((n, 100)), k, 1.5
        return Row(f"paper64_n{n}_k{k}", make, f"64 unit means in R^100, sd 0.05, n={n:,}, k={k}")

    runner = Runner(epsilons=(1.0,), verbose=False)
    print(f"# harness: ε = 1, δ = {DELTA:g}, {runs} seeds, methods {methods}; {load_text()}")
    records = []
    for k in ks:
        recs = runner.run_row(synthetic(k), range(runs), methods)
        records += recs
        summ = summarize(recs)
        print(f"k={k}: " + ", ".join(f"{lab} {v['loss']:.4g} (⊥ {v['bottom']}, err {v['error']})"
                                     for (_, _, lab), v in sorted(summ.items())), flush=True)
    if digits:
        records += runner.run_row(EVAL_ROWS["digits"], range(runs), methods)
    print(format_table(summarize(records)))
    print(load_text())


def part_theory(ns: list[int], k: int) -> None:
    """The theory profile's constants (no data is read): γ ≫ n, so no cube ever splits (note §8.2)."""
    from dpviz.clustering.balcan import BalcanParams, resolve_config

    print(f"# theory profile constants: ε = 1, δ (utility) = 0.1, k = {k}")
    print("| n | p | trials T₄ | shifts T₂ | ε′ | γ | γ / n | T₃ |")
    print("|---|---|---|---|---|---|---|---|")
    for n in ns:
        c = resolve_config(BalcanParams(profile="theory"), n_declared=n, d=100, k=k, epsilon=1.0)
        print(f"| {n:g} | {c.p} | {c.trials} | {c.shifts} | {c.eps_level:.2g} | {c.gamma:.3g} | "
              f"{c.gamma / n:.3g} | {c.T3} |")


def part_speed(repeats: int) -> None:
    from sklearn.cluster import KMeans

    from dpviz.clustering.balcan import balcan_kmeans

    X = mixture64(100_000, seed=0)
    t_b, t_s = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        res = balcan_kmeans(X, 16, epsilon=1.0, radius=1.5, rng=r)
        t_b.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        KMeans(n_clusters=16, n_init=1, random_state=r).fit(X)
        t_s.append(time.perf_counter() - t0)
        stages = {k: round(v, 2) for k, v in res.step("timing").data.items() if k != "trial"}
        print(f"repeat {r}: balcan {t_b[-1]:.2f} s {stages}; sklearn KMeans(n_init=1) {t_s[-1]:.2f} s")
    ratio = np.median(np.array(t_b) / np.array(t_s))
    print("| n | d | k | balcan s (median) | KMeans(n_init=1) s (median) | median ratio |")
    print("|---|---|---|---|---|---|")
    print(f"| 100000 | 100 | 16 | {np.median(t_b):.2f} | {np.median(t_s):.2f} | {ratio:.2f} |")


def main() -> None:
    from threadpoolctl import threadpool_limits

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("synthetic", "digits", "speed", "dims", "theory", "harness"),
                    default="synthetic")
    ap.add_argument("--no-digits", action="store_true", help="--part harness: synthetic rows only")
    ap.add_argument("--dims", type=int, nargs="+", default=[10, 30, 100, 300])
    ap.add_argument("--quick", action="store_true", help="n = 20,000, k ∈ {2, 8, 32}, 2 runs")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--ks", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    args = ap.parse_args()
    if args.quick:
        args.n, args.ks, args.runs = 20_000, [2, 8, 32], 2
    with threadpool_limits(limits=1):  # the machine is shared; BLAS threads only wait
        if args.part == "synthetic":
            part_synthetic(args.n, args.ks, args.runs, args.methods)
        elif args.part == "digits":
            part_digits(args.eps, args.runs, args.methods)
        elif args.part == "dims":
            part_dims(args.n, args.dims, args.ks[0], args.runs, args.methods)
        elif args.part == "theory":
            part_theory([10_000, 70_000, 100_000, 1_000_000], args.ks[0])
        elif args.part == "harness":
            labels = {"balcan": "balcan", "SuLQ": "sulq", "DP-Lloyd": "dp_lloyd",
                      "FriendlyCore": "friendlycore",
                      "diffprivlib": "diffprivlib", "k-means++": "kmeans++"}
            methods = [labels[m] for m in args.methods]
            part_harness(args.n, args.ks, args.runs, methods, not args.no_digits)
        else:
            part_speed(max(1, min(args.runs, 3)))


if __name__ == "__main__":
    main()
