"""The smallest n at which FriendlyCore's core forms, at row-level ε ∈ {1, 3, 10} (issue 18).

Data: the paper's Fig. 6 test bed (Tsfadia et al. 2022, §6.2; ``dpviz.data.generators.fig6_blobs``:
k = 8 Gaussians, σ = 0.0221, d = 2, Λ = 1), one dataset per (n, seed). FriendlyCore runs through
``dpviz.run`` with its defaults (the practical split, the fallback on, t = ``auto_n_tuples``(n, k)
from the declared n = n) at the row-level (ε, δ = 1e-6). "Core formed" = the fallback was not
used (the match core, FindDiam and the dist core all passed). The tuple stage is computed once
per (n, seed) and shared by the three ε (it reads no budget).

n runs on a doubling grid from ``--n0``. A point is MEASURED (``--seeds`` seeds) while one run is
expected to fit ``--max-seconds`` (the last measured run's time × 4.4 per doubling: t ∝ n and
the match graph is O(t²)); above that the row is PREDICTED from the public feasibility margins
(:func:`dpviz.clustering.friendlycore.budget.margins`, in noise sds, at the calibrated ρ) and labelled so.
Prediction rule: the practical split aims at margins of 4, 4 and 1.5 sds (match core, dist core,
FindDiam); ``level`` = the smallest margin/target over the three tests, and the core is predicted
to form when level ≥ ``--level`` (default 0.25). The threshold is read off measured points: the
core formed 3/3 at level 1.0 (n = 2.56e5, ε = 10, this bench) and at level 0.49 (n = 1e6, ε = 3,
t = 5000, match margin +1.98, docs/peers.md), and in 0/3 runs at every level ≤ 0.07 measured
here; any threshold in (0.07, 0.49] fits them, 0.25 is the round middle. Above
n = 25·k·MAX_AUTO_TUPLES the automatic t stops growing, so the margins stop growing; the
``t uncapped`` column says what the level would be with t = n/(25k) (at the ρ calibrated for
t = MAX_AUTO_TUPLES, which the row-level conversion barely changes with t).

The measured points quoted above predate issue 33 (known-size filters, Lloyd floor 0.05,
16 rows per cluster in the automatic t); the exact smallest-n table since then is
``bench/fc_core_formation.py`` (docs/fc_clustering.md §6).

    PYTHONPATH=. .venv/bin/python bench/fc_core_n.py                 # n = 1e3 … 1.6e7, 3 seeds
    PYTHONPATH=. .venv/bin/python bench/fc_core_n.py --quick         # n ≤ 8e3, 1 seed (smoke)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpviz
from dpviz.clustering.friendlycore.budget import (
    MARGIN_DIAM,
    MARGIN_DIST,
    MARGIN_MATCH,
    margins,
    resolve_split,
)
from dpviz.clustering.friendlycore.spec import MAX_AUTO_TUPLES, auto_n_tuples
from dpviz.data.generators import fig6_blobs
from dpviz.registry import Public, calibrate, get

DELTA = 1e-6
K, D, RADIUS = 8, 2, 1.0
EPSILONS = (1.0, 3.0, 10.0)
#: Success share at which a point counts as "the core forms" (the issue's 80%).
SUCCESS = 0.8
#: The margins the practical split aims at (presets._TARGET_MARGIN).
TARGETS = {MARGIN_MATCH: 4.0, MARGIN_DIST: 4.0, MARGIN_DIAM: 1.5}


def predicted(n: int, eps: float, t: int | None = None) -> dict:
    """ρ at the row-level target and every margin of FriendlyCore's tests (public values only)."""
    spec = get("friendlycore")
    params = spec.make_params()
    t = t or auto_n_tuples(n, K)
    pub = Public(n_declared=n, d=D, k=K, radius=RADIUS)
    # ρ of the spec at t (t above MAX_AUTO_TUPLES is not a valid knob: ρ of the largest valid t)
    cal = calibrate(spec, eps, DELTA, pub, params.__class__(n_tuples=min(t, MAX_AUTO_TUPLES)))
    rho, delta = cal.budget.rho, cal.budget.delta
    r_min = 1e-3 * RADIUS
    split = resolve_split("practical", t=t, k=K, rho=rho, delta=delta, r_min=r_min, radius=RADIUS)
    m = margins(split, t=t, k=K, rho=rho, delta=delta, r_min=r_min, radius=RADIUS)
    return dict(t=t, rho=rho, margins=m, level=min(m[key] / TARGETS[key] for key in TARGETS))


def measure(n: int, eps_list: list[float], seeds: int) -> dict[float, dict]:
    """Core formed / time per ε over ``seeds`` datasets (the tuple stage shared across ε)."""
    spec = get("friendlycore")
    out: dict[float, dict] = {e: {"formed": [], "seconds": []} for e in eps_list}
    for seed in range(seeds):
        ds = fig6_blobs(n, k=K, d=D, rng=seed)
        pub = Public(n_declared=n, d=D, k=K, radius=RADIUS)
        t0 = time.perf_counter()
        stage = spec.stage(ds.X, K, radius=RADIUS, rng=np.random.default_rng(seed), pub=pub,
                           params=spec.make_params())
        t_stage = time.perf_counter() - t0
        for eps in eps_list:
            t0 = time.perf_counter()
            res = dpviz.run("friendlycore", ds.X, K, epsilon=eps, delta=DELTA, radius=RADIUS,
                            rng=seed + 1000, n_declared=n, stage=stage)
            out[eps]["seconds"].append(t_stage + time.perf_counter() - t0)
            out[eps]["formed"].append(not res.find("fallback").data.get("used", False))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n ≤ 8e3, 1 seed (a smoke run)")
    ap.add_argument("--eps", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n0", type=int, default=1000)
    ap.add_argument("--n-max", type=int, default=16_384_000, help="largest n (predicted above the time cap)")
    ap.add_argument("--max-seconds", type=float, default=300.0,
                    help="longest expected single run (0: predict every row)")
    ap.add_argument("--level", type=float, default=0.25,
                    help="predicted to form when every margin ≥ this share of its target")
    args = ap.parse_args(argv)
    seeds = 1 if args.quick else args.seeds
    n_max = 8000 if args.quick else args.n_max
    ns = []
    n = args.n0
    while n <= n_max:
        ns.append(n)
        n *= 2
    print(f"Fig. 6 data (k = {K}, d = {D}, Λ = {RADIUS:g}); row-level δ = {DELTA:g}; {seeds} seed(s); "
          f"t = auto_n_tuples (≤ {MAX_AUTO_TUPLES}); predicted = level ≥ {args.level:g}")
    print(f"{'n':>10} {'t':>5} {'ε':>4} {'ρ':>9} {'match':>7} {'level':>7} {'t uncapped':>16}  "
          f"{'formed':>8} {'med s':>7}  status")
    last_s = 0.0
    first: dict[float, int | None] = {e: None for e in args.eps}
    first_pred: dict[float, int | None] = {e: None for e in args.eps}
    for n in ns:
        run_it = args.max_seconds > 0 and last_s * 4.4 <= args.max_seconds
        got = measure(n, args.eps, seeds) if run_it else None
        for eps in args.eps:
            p = predicted(n, eps)
            t_unc = n // (25 * K)
            unc = predicted(n, eps, t_unc) if t_unc > MAX_AUTO_TUPLES else None
            utxt = (f"t={t_unc}: {unc['level']:+.2f}" if unc else "—")
            if got is not None:
                f = got[eps]["formed"]
                share = sum(f) / len(f)
                med = statistics.median(got[eps]["seconds"])
                last_s = max(last_s, max(got[eps]["seconds"]))
                ftxt, stxt, status = f"{sum(f)}/{len(f)}", f"{med:7.1f}", "measured; predicted"
                if share >= SUCCESS and first[eps] is None:
                    first[eps] = n
            else:
                ftxt, stxt, status = "—", "—", "PREDICTED"
            status += " forms" if p["level"] >= args.level else " no core"
            if p["level"] >= args.level and first_pred[eps] is None:
                first_pred[eps] = n
            m = p["margins"]
            print(f"{n:>10} {p['t']:>5} {eps:>4g} {p['rho']:>9.3g} {m[MARGIN_MATCH]:>+7.2f} "
                  f"{p['level']:>+7.2f} {utxt:>16}  {ftxt:>8} {stxt:>7}  {status}", flush=True)
    print()
    for eps in args.eps:
        meas = f"n = {first[eps]:,}" if first[eps] else "none up to the largest measured n"
        pred = f"n = {first_pred[eps]:,}" if first_pred[eps] else f"none up to n = {ns[-1]:,}"
        print(f"ε = {eps:g}: smallest n with ≥ {SUCCESS:.0%} of runs forming the core: {meas}; "
              f"predicted (level ≥ {args.level:g}): {pred}")


if __name__ == "__main__":
    main()
