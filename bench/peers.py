"""dpviz against its peers at the same row-level (ε, δ = 1e-6): issue 24's goals table.

Every run goes through :mod:`bench.harness` (data, algorithm and reference streams from distinct
keys; relative excess loss with ⊥ scored as one center at the origin and counted; time as a
median interleaved ratio to one ``KMeans(n_init=1)``). Rows are the harness's ``EVAL_ROWS``
(Google's three recipe rows, the bundled tables, two held-out mixtures), none used to calibrate
``auto``. Records are appended to a JSONL file as they come, so a partial run is usable;
``--table`` prints the goals table from that file.

Google's DP clustering: a column when ``bench/google_dp.py`` (helper "hd"'s adapter, Google's
library run from its source) is importable, else "not run"; its numbers quoted in issue 24 are
printed beside, labelled as quoted.

    PYTHONPATH=. .venv/bin/python bench/peers.py run --rows iris wine breast_cancer digits \\
        held_mid held_unbal unbal google large --out bench/results/peers.jsonl
    PYTHONPATH=. .venv/bin/python bench/peers.py table --out bench/results/peers.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import dpviz
from bench.harness import (
    DELTA,
    EVAL_ROWS,
    GOOGLE_QUOTED,
    Record,
    Runner,
    commit,
    google_adapter,
    load_text,
    p90,
)


def default_labels() -> list[str]:
    """``auto``, every registered private algorithm at its defaults, and Google if present."""
    labs = ["auto"] + [s.name for s in dpviz.algorithms(private_only=True) if s.name != "auto"]
    return labs + (["google"] if google_adapter() is not None else [])


def cmd_run(args: argparse.Namespace) -> None:
    labs = args.algorithms or default_labels()
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"# commit {commit()}; {load_text()}; labels {labs}", flush=True)
    for name in args.rows:
        row = EVAL_ROWS[name]
        runner = Runner(epsilons=tuple(args.eps), delta=DELTA, timeout_factor=args.timeout_factor,
                        time_repeats=args.time_repeats if row.big else 0, timed=("auto",),
                        draws=args.draws)

        def write(rec: Record, name: str = name) -> None:
            with path.open("a") as fh:
                fh.write(json.dumps(rec.__dict__ | {"commit": commit(), "load": load_text()}) + "\n")

        seeds = tuple(range(args.first_seed, args.first_seed + args.seeds))
        print(f"# row {name}: {row.description}; seeds {seeds}; {args.draws} draws; {load_text()}",
              flush=True)
        runner.run_row(row, seeds, labs, on_record=write)


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def _ratio(a: float, best: float) -> float:
    if best > 0:
        return a / best
    return 1.0 if a <= best else math.inf


def table(records: list[dict]) -> str:
    """Markdown goals table (issue 35): per row and ε, the median and the 90th percentile over every
    (data seed, draw) of auto (its choices), the best registered algorithm by each statistic,
    auto / best, Google (run; quoted), the origin, auto's time / one KMeans, and the counts."""
    by: dict[tuple[str, float, str], list[dict]] = {}
    for r in records:
        by.setdefault((r["row"], r["epsilon"], r["label"]), []).append(r)
    rows = sorted({(r, e) for r, e, _ in by}, key=lambda x: (list(EVAL_ROWS).index(x[0]), x[1]))
    out = ["| row | ε | auto median (choice) | best median | ratio | auto p90 | best p90 | ratio | "
           "Google run median / p90 | Google quoted | origin | auto time / KMeans | seeds × draws | "
           "⊥ / stopped |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row, eps in rows:
        def stat(label: str, f, row: str = row, eps: float = eps) -> float:
            xs = [r["loss"] for r in by.get((row, eps, label), [])]
            return f(xs) if xs else math.nan
        labels = [lab for (r, e, lab) in by if r == row and e == eps]
        regs = [lab for lab in labels if lab not in ("auto", "google")]
        bm, bm_lab = min((stat(lab, _median), lab) for lab in regs) if regs else (math.nan, "—")
        bp, bp_lab = min((stat(lab, p90), lab) for lab in regs) if regs else (math.nan, "—")
        auto = by.get((row, eps, "auto"), [])
        am, ap = stat("auto", _median), stat("auto", p90)
        choice = ",".join(sorted({r["chosen"] for r in auto if r["chosen"]}))
        times = [r["time_ratio"] for r in auto if r.get("time_ratio") is not None]
        q = GOOGLE_QUOTED.get(row)
        gq = "—" if q is None else f"{q[0 if eps == 1.0 else 1]:g}"
        gm, gp = stat("google", _median), stat("google", p90)
        g = "not run" if math.isnan(gm) else f"{gm:.3g} / {gp:.3g}"
        bottoms = sum(r["bottom"] for lab in labels for r in by[(row, eps, lab)])
        stopped = sum(r["error"] == "timeout" for lab in labels for r in by[(row, eps, lab)])
        seeds = len({r["seed"] for r in auto})
        draws = len(auto) // max(seeds, 1)
        t = "—" if not times else f"{_median(times):.2f}"
        out.append(f"| {row} | {eps:g} | {am:.3g} ({choice}) | {bm:.3g} ({bm_lab}) | {_ratio(am, bm):.2f} | "
                   f"{ap:.3g} | {bp:.3g} ({bp_lab}) | {_ratio(ap, bp):.2f} | {g} | {gq} | "
                   f"{stat('origin', _median):.3g} | {t} | {seeds} × {draws} | {bottoms} / {stopped} |")
    return "\n".join(out)


def goals(records: list[dict]) -> str:
    """The four goals of issue 35, counted over the (row, ε) cells of ``records``."""
    by: dict[tuple[str, float, str], list[float]] = {}
    for r in records:
        by.setdefault((r["row"], r["epsilon"], r["label"]), []).append(r["loss"])
    cells = sorted({(r, e) for r, e, _ in by})
    within = {"median": 0, "p90": 0}
    google_won = google_cells = origin_ok = total = 0
    misses = []
    for row, eps in cells:
        if (row, eps, "auto") not in by or not any(
                r == row and e == eps and lab not in ("auto", "google") for r, e, lab in by):
            continue
        total += 1
        regs = [lab for (r, e, lab) in by if r == row and e == eps and lab not in ("auto", "google")]
        for name, f in (("median", _median), ("p90", p90)):
            a = f(by[(row, eps, "auto")])
            best = min(f(by[(row, eps, lab)]) for lab in regs)
            if _ratio(a, best) <= 1.25:
                within[name] += 1
            else:
                misses.append(f"{row} ε={eps:g} {name} {a:.3g} vs {best:.3g}")
        a = _median(by[(row, eps, "auto")])
        if (row, eps, "origin") in by:
            origin_ok += a <= _median(by[(row, eps, "origin")])
        if (row, eps, "google") in by:
            google_cells += 1
            google_won += a < _median(by[(row, eps, "google")])
    from dpviz.metrics import REFERENCE_TOLERANCE

    losses = [(r["loss"], r["row"], r["label"]) for r in records if r["label"] != "google"]
    low = min(losses) if losses else (math.nan, "—", "—")
    below = sum(x < -REFERENCE_TOLERANCE for x, _, _ in losses)
    return (f"lowest relative excess loss of any registered run {low[0]:.3g} ({low[2]} on {low[1]}); "
            f"{below} of {len(losses)} runs below −{REFERENCE_TOLERANCE:g} (the reference's tolerance)\n"
            f"auto within 1.25× of the best registered: median {within['median']}/{total}, "
            f"p90 {within['p90']}/{total}; auto ≤ origin (median) {origin_ok}/{total}; "
            f"auto < Google (median) {google_won}/{google_cells}\n"
            + "".join(f"  missed: {m}\n" for m in misses))


def full_table(records: list[dict]) -> str:
    """Every label's median loss per row and ε (∞: stopped at the harness's deadline)."""
    by: dict[tuple[str, float, str], list[float]] = {}
    for r in records:
        by.setdefault((r["row"], r["epsilon"], r["label"]), []).append(r["loss"])
    labels = sorted({lab for _, _, lab in by})
    keys = sorted({(r, e) for r, e, _ in by}, key=lambda x: (list(EVAL_ROWS).index(x[0]), x[1]))
    out = ["| row | ε | " + " | ".join(labels) + " |", "|---|---|" + "---|" * len(labels)]
    for row, eps in keys:
        cells = [f"{_median(by[(row, eps, lab)]):.3g}" if (row, eps, lab) in by else "—" for lab in labels]
        out.append(f"| {row} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def floor(row: str, eps: float, draws: int = 200) -> dict[str, float]:
    """Idealized losses on a bundled table (NOT a private algorithm; issue 18's noise floor): the
    optimal partition (best of 3 k-means++) given for free with exact counts and all of DP-Lloyd's
    ρ (T = 1, calibrated to the row-level (ε, δ)) on the k cluster sums, and the noisy mean (all of
    ρ on the sum) as one center. Medians of ``draws`` draws from the harness's reference stream."""
    import numpy as np
    from sklearn.cluster import KMeans

    from bench.harness import excess_loss, stream
    from dpviz.registry import Public, calibrate, get

    X, k, radius = EVAL_ROWS[row].data(0)
    n, d = X.shape
    km = min((KMeans(k, n_init=1, random_state=s).fit(X) for s in range(3)), key=lambda m: m.inertia_)
    spec = get("dp_lloyd")
    rho = calibrate(spec, eps, DELTA, Public(n, d, k, radius), spec.make_params(iters=1)).budget.rho
    sigma = radius / np.sqrt(2 * rho)
    gen = stream(0, "floor", row)
    counts = np.bincount(km.labels_, minlength=k)
    sums = np.stack([X[km.labels_ == j].sum(axis=0) for j in range(k)])
    part = [excess_loss(X, (sums + sigma * gen.standard_normal(sums.shape)) / counts[:, None], km.inertia_)
            for _ in range(draws)]
    mean = [excess_loss(X, ((X.sum(axis=0) + sigma * gen.standard_normal(d)) / n)[None, :], km.inertia_)
            for _ in range(draws)]
    return dict(rho=rho, origin=excess_loss(X, None, km.inertia_), partition=statistics.median(part),
                mean=statistics.median(mean))


def merge(files: list[list[dict]]) -> list[dict]:
    """The records of several files: a later file's (row, data seed, ε, label) replaces every
    earlier record of that key (a rerun); another data seed adds to it."""
    records: list[dict] = []
    for new in files:
        keys = {(r["row"], r["seed"], r["epsilon"], r["label"]) for r in new}
        records = [r for r in records if (r["row"], r["seed"], r["epsilon"], r["label"]) not in keys] + new
    return records


def compare(records: list[dict], a: str, b: str) -> str:
    """Median / p90 of label ``a`` beside label ``b`` and the origin, on every (row, ε) ``a`` ran."""
    by: dict[tuple[str, float, str], list[float]] = {}
    for r in records:
        by.setdefault((r["row"], r["epsilon"], r["label"]), []).append(r["loss"])
    out = [f"| row | ε | {a} median / p90 | {b} median / p90 | origin | runs of {a} |",
           "|---|---|---|---|---|---|"]
    keys = sorted({(r, e) for r, e, lab in by if lab == a}, key=lambda x: (list(EVAL_ROWS).index(x[0]), x[1]))
    for row, eps in keys:
        xa, xb, xo = (by.get((row, eps, lab), []) for lab in (a, b, "origin"))
        fb = f"{_median(xb):.3g} / {p90(xb):.3g}" if xb else "—"
        fa = f"{_median(xa):.3g} / {p90(xa):.3g}"
        out.append(f"| {row} | {eps:g} | {fa} | {fb} | {_median(xo):.3g} | {len(xa)} |")
    return "\n".join(out)


def cmd_table(args: argparse.Namespace) -> None:
    files = args.files or [args.out]
    records = merge([[json.loads(line) for line in Path(p).read_text().splitlines()] for p in files])
    commits = sorted({r["commit"] for r in records})
    print(f"From {files} (commits {commits}; {len(records)} runs)\n")
    print(table(records))
    print()
    print(goals(records))
    print(full_table(records))
    if args.compare:
        print()
        print(compare(records, *args.compare))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "table"))
    ap.add_argument("--rows", nargs="*", default=list(EVAL_ROWS))
    ap.add_argument("--eps", nargs="*", type=float, default=[1.0, 3.0])
    ap.add_argument("--seeds", type=int, default=3, help="how many data seeds")
    ap.add_argument("--first-seed", type=int, default=0,
                    help="the first data seed (e.g. 1 to add a second seed to an earlier file's seed 0)")
    ap.add_argument("--draws", type=int, default=10, help="algorithm draws per data seed (issue 35)")
    ap.add_argument("--algorithms", nargs="*", default=None)
    ap.add_argument("--timeout-factor", type=float, default=10.0,
                    help="stop a run slower than this × one KMeans (recorded as stopped)")
    ap.add_argument("--time-repeats", type=int, default=3, help="interleaved repeats timing auto (big rows)")
    ap.add_argument("--out", default="bench/results/peers.jsonl")
    ap.add_argument("--files", nargs="*", default=None,
                    help="table: JSONL files to read (default --out); a later file's (row, data seed, "
                         "ε, label) replaces an earlier one's")
    ap.add_argument("--compare", nargs=2, default=None, metavar=("A", "B"),
                    help="table: also label A's median / p90 beside label B's where A ran")
    args = ap.parse_args(argv)
    (cmd_run if args.command == "run" else cmd_table)(args)


if __name__ == "__main__":
    sys.exit(main())
