"""tree_coreset on Google's three rows beside DP-Lloyd and Google's DP clustering (issue 24).

Evaluation (the rows of bench/harness.py's ``EVAL_ROWS``: google 1e5 × 100, k = 64; unbal
2e5 × 10, k = 5, weights 1:10:100:10:1; large 1e6 × 20, k = 16), row-level ε ∈ {1, 3}, δ = 1e-6,
median of data seeds 0, 1, 2, relative excess k-means loss (bench/harness.py: data, algorithm
and reference streams from distinct keys). Google is re-run through bench/google_dp.py when
``GOOGLE_DP_PATH`` is set, else its quoted medians are shown. Time: median ratio to one
``KMeans(n_init=1)`` (interleaved repeats), with the load average.

    PYTHONPATH=. .venv/bin/python bench/hd_coreset.py                    # evaluation rows
    PYTHONPATH=. .venv/bin/python bench/hd_coreset.py --rows google --seeds 0
    PYTHONPATH=. .venv/bin/python bench/hd_coreset.py --floor --rows google   # leak check (below)
    PYTHONPATH=. .venv/bin/python bench/hd_coreset.py --calibrate \
        --configs "" "levels=6,bits=3" "tree_share=0.3"                 # tuning, calibration rows only

``--calibrate`` runs ``tree_coreset`` with each configuration on CALIBRATION_ROWS: recipes whose
shapes, names (hence data streams) and seeds are disjoint from the evaluation rows. The defaults
of ``TreeCoresetParams`` were chosen there, never on the evaluation rows.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from bench.harness import (
    EVAL_ROWS,
    GOOGLE_QUOTED,
    Runner,
    google_adapter,
    load_text,
    make_label,
    mixture_row,
    parse_label,
)
from bench.harness import commit as git_commit

#: Tuning data: shapes and names (so streams) unlike any evaluation row; seeds 100+.
CALIBRATION_ROWS = {
    "cal_hd": mixture_row("cal_hd", 50_000, 80, 48),
    "cal_hd_wide": mixture_row("cal_hd_wide", 80_000, 120, 64, ratio=7.0),
    "cal_unbal": mixture_row("cal_unbal", 100_000, 12, 6, weights=(1, 20, 80, 20, 2, 1)),
    "cal_mid": mixture_row("cal_mid", 300_000, 16, 12),
}
CALIBRATION_SEEDS = (100, 101)
EVAL_SEEDS = (0, 1, 2)
BASELINES = ("dp_lloyd", "dp_lloyd[iters=1]")


def _labels(configs: list[str]) -> list[str]:
    out = []
    for c in configs:
        params = parse_label(f"x[{c}]")[1] if c else {}
        out.append(make_label("tree_coreset", params))
    return out


def calibrate(configs: list[str], rows: list[str], epsilons: list[float]) -> None:
    runner = Runner(epsilons=tuple(epsilons), verbose=False)
    labels = _labels(configs)
    print(f"# calibration rows {rows}, seeds {CALIBRATION_SEEDS}, commit {git_commit()}")
    for name in rows:
        recs = runner.run_row(CALIBRATION_ROWS[name], CALIBRATION_SEEDS, labels)
        for eps in epsilons:
            for lab in labels:
                v = [r.loss for r in recs if r.epsilon == eps and r.label == lab]
                print(f"{name:<12} ε={eps:g} {lab:<60} median {statistics.median(v):8.4g}  "
                      f"all {' '.join(f'{x:.3g}' for x in v)}", flush=True)


def evaluate(rows: list[str], seeds: tuple[int, ...], epsilons: list[float], repeats: int,
             label: str, baselines: bool = True) -> None:
    has_google = google_adapter() is not None and baselines
    algs = [label, *(BASELINES if baselines else ())] + (["google"] if has_google else [])
    timed = Runner(epsilons=tuple(epsilons), time_repeats=repeats, verbose=True)
    untimed = Runner(epsilons=tuple(epsilons), verbose=True)
    print(f"# commit {git_commit()}; {load_text()}; Google {'re-run' if has_google else 'quoted'}",
          flush=True)
    table = []
    for name in rows:
        row = EVAL_ROWS[name]
        recs = timed.run_row(row, seeds, [label]) + untimed.run_row(row, seeds, algs[1:])
        for eps in epsilons:
            def med(lab: str, key: str = "loss", recs: list = recs, eps: float = eps) -> float | None:
                v = [getattr(r, key) for r in recs if r.epsilon == eps and r.label == lab
                     and getattr(r, key) is not None]
                return statistics.median(v) if v else None
            g = med("google") if has_google else None
            quoted = GOOGLE_QUOTED.get(name)
            gq = quoted[0 if eps == 1 else 1] if quoted and eps in (1, 3) else None
            table.append((name, eps, med(label), med("dp_lloyd"), med("dp_lloyd[iters=1]"), g, gq,
                          med(label, "time_ratio")))
    print(f"\n# {load_text()}")
    print("| row | ε | tree_coreset | DP-Lloyd (T=5) | DP-Lloyd (T=1) | Google (re-run) | Google (quoted) "
          "| tree_coreset time / KMeans |")
    print("|---|---|---|---|---|---|---|---|")
    for name, eps, t, lloyd, lloyd1, g, gq, tr in table:
        def f(x: float | None) -> str:
            return "—" if x is None else f"{x:.3g}"
        print(f"| {name} | {eps:g} | {f(t)} | {f(lloyd)} | {f(lloyd1)} | {f(g) if has_google else 'not run'} "
              f"| {f(gq)} | {f(tr)} |")


def floor(rows: list[str], seeds: tuple[int, ...], epsilons: list[float], label: str) -> None:
    """What the last refinement step could reach given the TRUE partition (not private; a check).

    tree_coreset's released centers are one noisy Lloyd step on its own partition with the
    refinement's σ's; with the generator's true partition instead (read without privacy) the
    same noise gives this loss. tree_coreset below it would mean a leak; far above it, missed
    clusters. A different algorithm stream ("floor") and the same data streams as the evaluation.
    """
    import numpy as np

    from bench.harness import excess_loss, reference_cost, stream
    from dpviz.clustering.tree_coreset import tree_split
    from dpviz.data.ball_mixture import ball_mixture
    from dpviz.registry import Public, get
    from dpviz.registry import calibrate as cal

    name, params = parse_label(label)
    spec = get(name)
    p = spec.make_params(**params)
    for row_name in rows:
        row = EVAL_ROWS[row_name]
        for seed in seeds:
            gen = stream(seed, "data", row.name)
            X, k, radius = row.data(seed)
            shape = dict(google=(100_000, 100, 64, None), unbal=(200_000, 10, 5, (1, 10, 100, 10, 1)),
                         large=(1_000_000, 20, 16, None))[row_name]
            ds = ball_mixture(shape[0], d=shape[1], k=shape[2], weights=shape[3], rng=gen)
            assert np.array_equal(ds.X, X)  # the same rows as the evaluation
            ref = reference_cost(X, k, stream(seed, "reference", row.name))
            for eps in epsilons:
                rho = cal(spec, eps, 1e-6, Public(X.shape[0], X.shape[1], k, radius), p).budget.rho
                sp = tree_split(rho, radius, p)
                g = stream(seed, "floor", row.name, f"{eps:g}")
                lab = ds.labels
                sums = np.stack([np.bincount(lab, weights=X[:, j], minlength=k)
                                 for j in range(X.shape[1])], 1)
                cnt = np.bincount(lab, minlength=k)
                C = (sums + sp.sigma_step_sum * g.standard_normal(sums.shape)) / (
                    cnt + sp.sigma_step_count * g.standard_normal(k))[:, None]
                print(f"floor {row_name} seed {seed} ε={eps:g}: {excess_loss(X, C, ref):.4g} "
                      f"(σ_sum {sp.sigma_step_sum:.3g}, σ_count {sp.sigma_step_count:.3g})", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--configs", nargs="*", default=[""])
    ap.add_argument("--rows", nargs="*", default=None)
    ap.add_argument("--seeds", nargs="*", type=int, default=None)
    ap.add_argument("--eps", nargs="*", type=float, default=[1.0, 3.0])
    ap.add_argument("--floor", action="store_true", help="the true-partition floor (a leak check)")
    ap.add_argument("--ours-only", action="store_true", help="skip DP-Lloyd and Google (timing runs)")
    ap.add_argument("--repeats", type=int, default=1, help="interleaved timing repeats")
    args = ap.parse_args(argv)
    if args.calibrate:
        calibrate(args.configs, args.rows or list(CALIBRATION_ROWS), args.eps)
        return 0
    label = _labels(args.configs[:1])[0]
    if args.floor:
        floor(args.rows or ["google", "unbal", "large"], tuple(args.seeds or EVAL_SEEDS), args.eps, label)
        return 0
    evaluate(args.rows or ["google", "unbal", "large"], tuple(args.seeds or EVAL_SEEDS), args.eps,
             args.repeats, label, baselines=not args.ours_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
