"""Every registered algorithm on Fig. 6 data at the same row-level (ε, δ): loss, success, time.

Data: Tsfadia et al. 2022, §6.2, Fig. 6 test bed (``dpviz.data.generators.fig6_blobs``: k = 8
Gaussians, std 0.0221, in the unit ball, Λ = 1, d = 2), one dataset per n (seed 0). Every
algorithm of ``dpviz.algorithms()`` (new families appear without an edit here) is calibrated to
the row-level target (ε, δ = 1e-6) for adding or removing one row, with the declared size
n_declared = n, and run ``reps`` times (``dpviz.compare.compare_sweep``; its seeds are keyed on
(seed, repetition, algorithm, ε)). Columns: the native budget each algorithm got (ρ for zCDP, ε
otherwise), the median normalized k-means loss 1 − X/Y with its 10–90% band, the share of runs
whose private structure succeeded (FriendlyCore: the core formed, no fallback; algorithms without
a structure step: the share that released centers, marked *), and the median seconds of a run
(the private part plus the shared non-private stage). The k-means++ row is the non-private
reference (ε = ∞).

    PYTHONPATH=. .venv/bin/python bench/compare.py            # n = 1e4, 1e5, 1e6; 10 reps
    PYTHONPATH=. .venv/bin/python bench/compare.py --quick    # n = 1e4, 1e5; 3 reps
"""

from __future__ import annotations

import argparse
import math
import time

import pandas as pd

DELTA = 1e-6
EPSILONS = (1.0, 3.0, 10.0)
K, RADIUS = 8, 1.0


def run(ns: list[int], reps: int, epsilons: list[float], algorithms: list[str] | None) -> pd.DataFrame:
    from threadpoolctl import threadpool_limits

    from bench.harness import stream  # issue 24: data and algorithm streams apart
    from dpviz.compare import compare_sweep, summarize
    from dpviz.data.generators import fig6_blobs

    out = []
    for n in ns:
        ds = fig6_blobs(n, k=K, rng=stream(0, "data", "fig6", str(n)))
        t0 = time.perf_counter()
        with threadpool_limits(limits=1):  # a shared machine: one BLAS thread
            cmp = compare_sweep(ds.X, K, algorithms=algorithms, epsilons=epsilons, delta=DELTA,
                                radius=RADIUS, n_declared=n, reps=reps,
                                rng=stream(0, "algorithm", "compare_sweep", str(n)), labels=ds.labels,
                                true_centers=ds.true_centers)
        f = cmp.frame.assign(seconds=cmp.frame["seconds"] + cmp.frame["stage_seconds"])
        s = summarize(f).assign(n=n)
        out.append(s)
        print(f"# n = {n:,}: {len(f)} runs in {time.perf_counter() - t0:.0f} s", flush=True)
    return pd.concat(out, ignore_index=True)


def table(s: pd.DataFrame) -> str:
    lines = ["| n | algorithm | row-level ε | native budget | median loss (q10–q90) | success | "
             "median s |", "|---|---|---|---|---|---|---|"]
    for _, r in s.iterrows():
        if r["private"]:
            sym = "ρ" if r["budget_kind"] == "zcdp" else "ε"
            budget = f"{sym} = {r['budget']:.3g}"
            eps = f"{r['epsilon']:g}"
        else:
            budget, eps = "none (non-private reference)", "∞"
        if r["private"] and math.isnan(r["budget"]):
            lines.append(f"| {r['n']:,} | {r['title']} | {eps} | cannot meet the target | — | — | — |")
            continue
        share = r["structure_share"]
        success = (f"{r['released_share']:.0%}*" if share is None or math.isnan(share) else f"{share:.0%}")
        lines.append(f"| {r['n']:,} | {r['title']} | {eps} | {budget} | {r['median']:.3f} "
                     f"({r['q10']:.3f}–{r['q90']:.3f}) | {success} | {r['seconds']:.3g} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="n = 1e4, 1e5 and 3 repetitions")
    ap.add_argument("--ns", type=int, nargs="+", help="dataset sizes (default 1e4 1e5 1e6)")
    ap.add_argument("--reps", type=int, help="repetitions (default 10; --quick 3)")
    ap.add_argument("--eps", type=float, nargs="+", default=list(EPSILONS), help="row-level ε targets")
    ap.add_argument("--algorithms", nargs="+", help="registered names (default: every one)")
    args = ap.parse_args()
    ns = args.ns or ([10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000])
    reps = args.reps or (3 if args.quick else 10)
    import dpviz

    names = args.algorithms or [s.name for s in dpviz.algorithms()]
    print(f"# Fig. 6 blobs (k = {K}, d = 2, Λ = {RADIUS}); row-level δ = {DELTA:g}; ε ∈ {args.eps}; "
          f"{reps} repetitions; algorithms: {', '.join(names)}")
    s = run(ns, reps, args.eps, args.algorithms)
    print(table(s))
    print("\n* no structure step: the share of runs that released centers. Timings on a shared, "
          "loaded machine (one BLAS thread).")


if __name__ == "__main__":
    main()
