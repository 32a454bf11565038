"""Issue 44's table: ``auto`` on small tables against every registered method, Google's DP
clustering and FastLloyd, at row-level ε ∈ {1, 3}, δ = 1e-6, ≥ 10 independent draws per cell.

Every run goes through :mod:`bench.harness` (data, algorithm and reference streams from distinct
keys; loss = cost / reference − 1 with ⊥ scored as one center at the origin; the reference is
:func:`dpviz.metrics.reference_kmeans`, the best of ≥ 10 k-means++ restarts plus recombination,
at least as good as the best of 20 restarts on these tables). Rows:

* the four bundled evaluation tables (iris, wine, breast cancer, digits: never used to calibrate
  ``auto`` or to choose ``rc_lloyd``'s defaults);
* held-out small tables (``HELD_OUT``): scikit-learn's bundled diabetes table (442 × 10, k = 4,
  standardized to the box as the app does) and generated tables of the calibration recipes at
  shapes and data streams no calibration cell has.

Columns: Google's DP clustering where ``bench/google_dp.py`` loads it (``GOOGLE_DP_PATH``),
FastLloyd where ``bench/fastlloyd.py`` loads it (``FASTLLOYD_PATH``); each prints "not run"
otherwise. Issue 44's quoted Google and FastLloyd medians are printed beside, labelled quoted.

    export GOOGLE_DP_PATH=/tmp/gdp/learning FASTLLOYD_PATH=/tmp/fastlloyd OMP_NUM_THREADS=1
    PYTHONPATH=. .venv/bin/python bench/small_tables.py run --out bench/results/small_tables.jsonl
    PYTHONPATH=. .venv/bin/python bench/small_tables.py table --out bench/results/small_tables.jsonl
    PYTHONPATH=. .venv/bin/python bench/small_tables.py time --rows iris wine breast_cancer digits
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

import numpy as np

import dpviz
from bench import peers
from bench.auto_calibrate import recipe_row
from bench.harness import DELTA, EVAL_ROWS, Record, Row, Runner, commit, load_text, p90

EVAL = ("iris", "wine", "breast_cancer", "digits")


def _diabetes_row() -> Row:
    def make(rng: np.random.Generator) -> tuple[np.ndarray, int, float]:
        from sklearn.datasets import load_diabetes

        from dpviz.data.builtin import standardize_to_box

        X = standardize_to_box(load_diabetes().data)
        return X, 4, float(math.sqrt(X.shape[1]))
    return Row("diabetes", make, "scikit-learn's diabetes table (442 × 10), k = 4, standardized to the box")


def _held_rows() -> dict[str, Row]:
    rows = {"diabetes": _diabetes_row()}
    for recipe, n, d, k in (("table_balanced", 320, 8, 4), ("table_aniso", 900, 16, 5),
                            ("table_heavy", 450, 36, 3), ("table_unbalanced", 1200, 40, 6)):
        row = recipe_row(recipe, n, d, k)
        rows[row.name] = Row("held:" + row.name, row.make, "held out: " + row.description)
    return rows


#: Held-out small tables: no calibration cell has their shape or data stream.
HELD_OUT = _held_rows()
ROWS: dict[str, Row] = {name: EVAL_ROWS[name] for name in EVAL} | HELD_OUT

#: Issue 44's quoted medians (ε = 1, ε = 3): Google's library and FastLloyd, outside review.
QUOTED = {"iris": ((7.77, 2.08), (2.97, 1.14)), "wine": ((0.800, 0.490), (1.72, 0.833)),
          "breast_cancer": ((0.396, 0.201), (2.04, 0.652)), "digits": ((0.546, 0.380), (0.964, 0.752))}


def fastlloyd_adapter():
    """``bench.fastlloyd.run`` if FastLloyd's snapshot is loadable, else None ("not run")."""
    try:
        from bench.fastlloyd import run
    except ImportError:
        return None
    return run


class PeerRunner(Runner):
    """The harness's runner with FastLloyd as one more column (label ``fastlloyd``)."""

    def run_one(self, X, k, radius, label, eps, rng):
        if label == "fastlloyd":
            fn = fastlloyd_adapter()
            if fn is None:
                raise RuntimeError("FastLloyd adapter not present")
            return fn(X, k, epsilon=eps, delta=self.delta, radius=radius, rng=rng), "", ""
        return super().run_one(X, k, radius, label, eps, rng)


def default_labels() -> list[str]:
    """bench/peers.py's labels (``auto``, every registered private algorithm, Google if present),
    and FastLloyd if present."""
    return peers.default_labels() + (["fastlloyd"] if fastlloyd_adapter() is not None else [])


def cmd_run(args: argparse.Namespace) -> None:
    labs = args.algorithms or default_labels()
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"# commit {commit()}; {load_text()}; labels {labs}", flush=True)
    for name in args.rows:
        row = ROWS[name]
        runner = PeerRunner(epsilons=tuple(args.eps), delta=DELTA, timeout_factor=args.timeout_factor,
                            draws=args.draws, first_draw=args.first_draw, verbose=False)
        serves = {s.name for s in dpviz.algorithms(applicable_to=row.data(0)[0].shape[1])}
        row_labs = [lab for lab in labs if lab in ("google", "fastlloyd") or lab.split("[")[0] in serves]

        def write(rec: Record, name: str = name) -> None:
            with path.open("a") as fh:
                fh.write(json.dumps(rec.__dict__ | {"table": name, "commit": commit()}) + "\n")

        print(f"# {name}: {row.description}; draws {args.first_draw}–{args.first_draw + args.draws - 1}; "
              f"{load_text()}", flush=True)
        runner.run_row(row, (0,), row_labs, on_record=write)


def cmd_time(args: argparse.Namespace) -> None:
    """Median CPU time of each label over one ``KMeans(n_init=1)`` on the same table, interleaved
    (issue 44: ``gauss_fit`` ≤ 5× one KMeans on these tables). CPU time of this process
    (``time.process_time``; run with OMP_NUM_THREADS=1), not wall time: on a machine shared by
    many jobs a millisecond KMeans's wall time is mostly waiting for a core."""
    import time

    from sklearn.cluster import KMeans

    from bench.harness import algorithm_stream

    labs = args.algorithms or ["gauss_fit", "rc_lloyd", "auto"]
    print(f"# commit {commit()}; {load_text()}; {args.repeats} interleaved repeats, CPU time")
    print("| table | ε | KMeans ms | " + " | ".join(f"{lab} / KMeans" for lab in labs) + " |")
    print("|---|---|---|" + "---|" * len(labs))
    runner = PeerRunner(delta=DELTA, verbose=False)
    for name in args.rows:
        X, k, radius = ROWS[name].data(0)
        for e in args.eps:
            km: list[float] = []
            alg: dict[str, list[float]] = {lab: [] for lab in labs}
            for r in range(args.repeats):  # interleaved: KMeans, then each label
                t0 = time.process_time()
                KMeans(k, n_init=1, random_state=r).fit(X)
                km.append(time.process_time() - t0)
                for lab in labs:
                    rng = algorithm_stream(0, lab, ROWS[name].name, e, r)
                    t0 = time.process_time()
                    runner.run_one(X, k, radius, lab, e, rng)
                    alg[lab].append(time.process_time() - t0)
            base = statistics.median(km)
            cells = [f"{statistics.median(alg[lab]) / base:.2f}" for lab in labs]
            print(f"| {name} | {e:g} | {1000 * base:.1f} | " + " | ".join(cells) + " |", flush=True)


def _stats(xs: list[float]) -> tuple[float, float]:
    return (statistics.median(xs), p90(xs)) if xs else (math.nan, math.nan)


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else (1.0 if a <= b else math.inf)


#: Bootstrap replicates of the 1.25× ratios, and their stream (analysis only: no algorithm or data
#: stream shares it).
BOOT = 2000
BOOT_SEED = 44


def _boot_stats(xs: list[float], gen: np.random.Generator, size: int | None = None) -> np.ndarray:
    """(BOOT, 2) medians and 90th percentiles of resamples (with replacement, of ``size`` draws,
    default as many as given) of one label's draws; a stopped run (inf) stays above every finite loss."""
    a = np.asarray(xs, dtype=np.float64)
    a = np.where(np.isinf(a), 1e300, a)
    s = a[gen.integers(a.size, size=(BOOT, size or a.size))]
    return np.stack([np.median(s, axis=1), np.percentile(s, 90, axis=1)], axis=1)


def ratio_interval(auto: list[float], regs: list[list[float]], seed: int = BOOT_SEED) -> np.ndarray:
    """95% percentile-bootstrap intervals of auto ÷ best registered at the median and at p90, as
    [[lo, hi] (median), [lo, hi] (p90)]: every label's draws are resampled independently and the
    best is re-chosen in each replicate (so the min over labels' selection bias is in the interval).
    An interval that straddles 1.25 means the draws cannot tell a miss from a hit."""
    gen = np.random.default_rng(seed)
    a = _boot_stats(auto, gen)
    best = np.min(np.stack([_boot_stats(x, gen) for x in regs]), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(best > 0, a / np.where(best > 0, best, 1.0), np.where(a <= best, 1.0, np.inf))
    return np.percentile(r, [2.5, 97.5], axis=0).T


def null_within(auto: list[float], own: list[float], others: list[list[float]],
                seed: int = BOOT_SEED) -> np.ndarray:
    """P(auto within 1.25× of the best registered) at the median and at p90 *if auto's draws and its
    choice's own registered draws came from one distribution* (they run the same algorithm at the
    same budget on other streams): both samples are redrawn, at their sizes, from the two pooled;
    every other label is resampled from its own draws. The sum over cells is the count of cells
    within 1.25× that independent draws of this size can be expected to show when auto chooses
    as well as it can."""
    gen = np.random.default_rng(seed)
    a, c = _boot_stats(auto + own, gen, len(auto)), _boot_stats(auto + own, gen, len(own))
    best = np.min(np.stack([c] + [_boot_stats(x, gen) for x in others]), axis=0)
    return np.mean(a <= 1.25 * best, axis=0)


def chance_at_least(ps: list[float], m: int) -> float:
    """P(at least m of independent events with probabilities ``ps``): the Poisson-binomial tail."""
    dist = np.array([1.0])
    for p in ps:  # loop over cells (≤ a few dozen)
        dist = np.convolve(dist, [1.0 - p, p])
    return float(dist[m:].sum())


def table(records: list[dict]) -> str:
    """The issue-44 table and its goals, from the records."""
    by: dict[tuple[str, float, str], list[float]] = {}
    choice: dict[tuple[str, float], set[str]] = {}
    for r in records:
        by.setdefault((r["table"], r["epsilon"], r["label"]), []).append(r["loss"])
        if r["label"] == "auto" and r["chosen"]:
            choice.setdefault((r["table"], r["epsilon"]), set()).add(r["chosen"])
    keys = sorted({(t, e) for t, e, _ in by}, key=lambda x: (list(ROWS).index(x[0]), x[1]))
    out = ["| table | ε | auto median / p90 (choice) | best registered median / p90 | Google median / p90 "
           "(quoted) | FastLloyd median / p90 (quoted) | origin | auto ÷ best (median, p90) | "
           "95% interval of auto ÷ best (median; p90) | P(within 1.25×) if auto ≡ its choice (median, p90) | "
           "choice's own run ÷ best (median, p90) | Google ÷ auto | draws |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    goals = dict(cells=0, held=0, two_x=0, below_google=0, below_fl=0, google_cells=0, fl_cells=0,
                 within_med=0, within_p90=0, origin_ok=0, choice_med=0, choice_p90=0, sure_med=0, sure_p90=0,
                 open_med=0, open_p90=0, null_cells=0)
    null_p: list[np.ndarray] = []
    misses: list[str] = []
    for t, e in keys:
        regs = [lab for (tt, ee, lab) in by
                if tt == t and ee == e and lab not in ("auto", "google", "fastlloyd")]
        if (t, e, "auto") not in by or not regs:
            continue
        am, ap = _stats(by[(t, e, "auto")])
        bm, bm_lab = min((_stats(by[(t, e, lab)])[0], lab) for lab in regs)
        bp, bp_lab = min((_stats(by[(t, e, lab)])[1], lab) for lab in regs)
        gm, gp = _stats(by.get((t, e, "google"), []))
        fm, fp = _stats(by.get((t, e, "fastlloyd"), []))
        om = _stats(by.get((t, e, "origin"), []))[0]
        q = QUOTED.get(t)
        qi = 0 if e == 1.0 else 1
        gq = f" ({q[0][qi]:g})" if q else ""
        fq = f" ({q[1][qi]:g})" if q else ""
        g_txt = "not run" if math.isnan(gm) else f"{gm:.3g} / {gp:.3g}"
        f_txt = "not run" if math.isnan(fm) else f"{fm:.3g} / {fp:.3g}"
        rm, rp = _ratio(am, bm), _ratio(ap, bp)
        # The choice's quality apart from draw-to-draw spread: the chosen label's own registered
        # run (same algorithm and budget as auto's, other streams) over the best registered.
        chosen = choice.get((t, e), set())
        own = [_stats(by[(t, e, c)]) for c in chosen if (t, e, c) in by]
        pw = (null_within(by[(t, e, "auto")], by[(t, e, next(iter(chosen)))],
                          [by[(t, e, lab)] for lab in regs if lab not in chosen])
              if len(chosen) == 1 and len(own) == 1 else np.array([math.nan, math.nan]))
        cm, cp = (max(_ratio(m, bm) for m, _ in own), max(_ratio(q, bp) for _, q in own)) if own else (
            math.nan, math.nan)
        ci = ratio_interval(by[(t, e, "auto")], [by[(t, e, lab)] for lab in regs])
        out.append(f"| {t} | {e:g} | {am:.3g} / {ap:.3g} ({', '.join(sorted(choice.get((t, e), [])))}) | "
                   f"{bm:.3g} ({bm_lab}) / {bp:.3g} ({bp_lab}) | {g_txt}{gq} | {f_txt}{fq} | {om:.3g} | "
                   f"{rm:.2f}, {rp:.2f} | {ci[0, 0]:.2f}–{ci[0, 1]:.2f}; {ci[1, 0]:.2f}–{ci[1, 1]:.2f} | "
                   f"{pw[0]:.2f}, {pw[1]:.2f} | "
                   f"{cm:.2f}, {cp:.2f} | "
                   f"{'—' if math.isnan(gm) else f'{_ratio(gm, am):.2f}'} | "
                   f"{len(by[(t, e, 'auto')])} |")
        goals["cells"] += 1
        goals["held"] += t in HELD_OUT
        goals["within_med"] += rm <= 1.25
        goals["within_p90"] += rp <= 1.25
        goals["origin_ok"] += am <= om
        goals["choice_med"] += cm <= 1.25
        goals["choice_p90"] += cp <= 1.25
        goals["sure_med"] += ci[0, 1] <= 1.25  # within 1.25× over the whole interval
        goals["sure_p90"] += ci[1, 1] <= 1.25
        goals["open_med"] += ci[0, 0] <= 1.25 < ci[0, 1]  # the draws cannot decide
        goals["open_p90"] += ci[1, 0] <= 1.25 < ci[1, 1]
        if not math.isnan(pw[0]):
            goals["null_cells"] += 1
            null_p.append(pw)
        if rm > 1.25 or rp > 1.25:
            misses.append(f"{t} ε={e:g}: auto {am:.3g}/{ap:.3g} vs best {bm:.3g} ({bm_lab}) / "
                          f"{bp:.3g} ({bp_lab})")
        if not math.isnan(gm):
            goals["google_cells"] += 1
            goals["two_x"] += gm >= 2 * am
            goals["below_google"] += am < gm
        if not math.isnan(fm):
            goals["fl_cells"] += 1
            goals["below_fl"] += am < fm
    g = goals
    out += ["", f"cells {g['cells']} ({g['held']} held out); auto within 1.25× of the best registered: "
            f"median {g['within_med']}/{g['cells']}, p90 {g['within_p90']}/{g['cells']} (the choice's own "
            f"registered run: median {g['choice_med']}/{g['cells']}, p90 {g['choice_p90']}/{g['cells']}); "
            f"95% interval wholly ≤ 1.25: median {g['sure_med']}/{g['cells']}, "
            f"p90 {g['sure_p90']}/{g['cells']}, "
            f"straddling 1.25: median {g['open_med']}, p90 {g['open_p90']}; expected within if auto ≡ its "
            f"choice (over {g['null_cells']} cells): median {sum(p[0] for p in null_p):.1f}, p90 "
            f"{sum(p[1] for p in null_p):.1f}, and the chance of ≥ 90% of them: median "
            f"{chance_at_least([p[0] for p in null_p], math.ceil(0.9 * len(null_p))):.2f}, p90 "
            f"{chance_at_least([p[1] for p in null_p], math.ceil(0.9 * len(null_p))):.2f}; "
            f"auto ≤ origin "
            f"(median) {g['origin_ok']}/{g['cells']}; auto ≥ 2× better than Google (median) {g['two_x']}/"
            f"{g['google_cells']}; auto < Google {g['below_google']}/{g['google_cells']}; auto < FastLloyd "
            f"{g['below_fl']}/{g['fl_cells']}"]
    out += [f"  missed 1.25×: {m}" for m in misses]
    return "\n".join(out)


def cmd_table(args: argparse.Namespace) -> None:
    files = args.files or [args.out]
    by_file = [[json.loads(line) for line in Path(f).read_text().splitlines()] for f in files]
    if args.supersede:  # a later file's run of the same streams replaces an earlier file's (a code change)
        def run_key(r: dict) -> tuple:
            return r["table"], r["label"], r["epsilon"], r.get("draw", 0)
        later: set[tuple] = set()
        for i in range(len(by_file) - 1, -1, -1):
            keys = {run_key(r) for r in by_file[i]}
            by_file[i] = [r for r in by_file[i] if run_key(r) not in later]
            later |= keys
    records = [r for rs in by_file for r in rs]
    print(f"From {files} (commits {sorted({r['commit'] for r in records})}; {len(records)} runs)\n")
    print(table(records))


#: The large rows of docs/peers.md and the default lesson (Fig. 6 blobs): (name, n, d, k).
LARGE = (("google", 100_000, 100, 64), ("unbal", 200_000, 10, 5), ("large", 1_000_000, 20, 16),
         ("held_mid", 50_000, 50, 32), ("held_unbal", 30_000, 30, 10), ("default lesson", 150_000, 2, 8))


def cmd_choices(args: argparse.Namespace) -> None:
    """``auto``'s choice under the shipped rule and under ``--old-rule`` (a rule file from before a
    refit) on every row here and the large rows: a row whose choice is unchanged runs exactly as
    before (same algorithm, same streams), so the large-table regression check is needed only where
    it changed."""
    from dpviz.clustering.auto import choose_from

    old = json.loads(Path(args.old_rule).read_text())
    shapes = [(name, *ROWS[name].data(0)[0].shape, ROWS[name].data(0)[1]) for name in ROWS]
    print("| row | n | d | k | ε | before | after | changed |\n|---|---|---|---|---|---|---|---|")
    for name, n, d, k in [*shapes, *LARGE]:
        for e in args.eps:
            a = choose_from(None, n, d, k, e, DELTA, table=old).cell["label"]
            b = choose_from(None, n, d, k, e, DELTA).cell["label"]
            print(f"| {name} | {n:,} | {d} | {k} | {e:g} | {a} | {b} | {'**yes**' if a != b else 'no'} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "table", "time", "choices"))
    ap.add_argument("--supersede", action="store_true",
                    help="table: a later file's run of a (table, label, ε, draw), the same streams, "
                         "replaces an earlier file's (re-run every draw of a label whose code changed)")
    ap.add_argument("--old-rule", default=None, help="choices: the rule file before a refit")
    ap.add_argument("--repeats", type=int, default=15, help="time: interleaved repeats")
    ap.add_argument("--rows", nargs="*", default=list(ROWS))
    ap.add_argument("--eps", nargs="*", type=float, default=[1.0, 3.0])
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--first-draw", type=int, default=0,
                    help="run: index of the first draw (a second batch continues the first's streams)")
    ap.add_argument("--algorithms", nargs="*", default=None)
    ap.add_argument("--timeout-factor", type=float, default=10.0)
    ap.add_argument("--out", default="bench/results/small_tables.jsonl")
    ap.add_argument("--files", nargs="*", default=None)
    args = ap.parse_args(argv)
    {"run": cmd_run, "table": cmd_table, "time": cmd_time, "choices": cmd_choices}[args.command](args)


if __name__ == "__main__":
    main()
