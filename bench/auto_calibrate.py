"""Calibrate ``auto``'s public choice rule on a public grid, through the evaluation harness.

    PYTHONPATH=. .venv/bin/python bench/auto_calibrate.py run --out bench/results/auto_grid.jsonl
    PYTHONPATH=. .venv/bin/python bench/auto_calibrate.py run --tables 16 \
        --out bench/results/auto_tables.jsonl
    PYTHONPATH=. .venv/bin/python bench/auto_calibrate.py fit --files bench/results/auto_grid.jsonl \
        bench/results/auto_tables.jsonl --write

``run`` measures every registered private algorithm at its defaults (iterating
``dpviz.algorithms()``, so an algorithm merged later is picked up by re-running; ``origin`` and
``gauss_fit`` included; ``--variants`` adds the public variants of :data:`VARIANTS`) on a grid of
cells, ε ∈ {1, 3}, row-level δ = 1e-6, n passed as public. The mixture grid (``cells``): balanced
and unbalanced weights, heavy tails, close clusters, anisotropic clusters and small standardized
tables, 3 data seeds, one draw each. Issue 35's small-table grid (``--tables``, :func:`table_cells`):
n 100–5,000, the same shapes standardized as the app standardizes a table (Λ = √d), one data seed
and 10 algorithm draws each. None of them is an evaluation row (:data:`bench.harness.EVAL_ROWS`):
recipes, sizes and seeds differ (cells never take an evaluation row's (n, d, k)). Streams, loss and
⊥ scoring are the harness's; each run also records its wall time over one ``KMeans(n_init=1)`` on
the same data. A run slower than ``--timeout`` s (or 10× KMeans) is stopped and recorded as such,
and that label gets no further draws in that cell. Results are appended per cell to a JSONL file,
so a partial grid is usable.

``fit`` turns the records into ``dpviz/clustering/auto_rule.json``: per cell and ε, each label's
median and 90th-percentile loss over its runs and its median time ratio (defaults only, unless
``--variants``). ``auto`` answers a query by the least risk regret over the nearest cells
(:mod:`dpviz.clustering.auto`). The rule records its provenance (commit, command, grid files).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import dpviz
from bench.harness import (
    DELTA,
    Row,
    Runner,
    algorithm_stream,
    commit,
    excess_loss,
    kmeans_seconds,
    load_text,
    make_label,
    p90,
    parse_label,
    reference_cost,
    stream,
)
from dpviz.clustering.auto import RULE_PATH
from dpviz.data.ball_mixture import ball_mixture
from dpviz.data.bounds import clip_to_ball
from dpviz.data.builtin import standardize_to_box
from dpviz.data.generators import uniform_ball

EPSILONS = (1.0, 3.0)
SEEDS = (101, 102, 103)  # data seeds of the grid (evaluation uses 0, 1, 2 on other recipes)
NEIGHBOURS = 4
MAX_TIME_RATIO = 1.5
TIME_CAP = 10.0

#: Public variants besides each algorithm's defaults.
VARIANTS: dict[str, tuple[dict[str, Any], ...]] = {
    "dp_lloyd": ({"iters": 1}, {"iters": 2}, {"iters": 3}),
    "gauss_fit": ({"moments": 1},),
    "grid_coreset": ({"projection_dim": 3}, {"projection_dim": 8}),
    "tree_coreset": ({"refine_steps": 0}, {"refine_steps": 3}),
    "friendlycore": ({"fallback": False},),
}


def labels(variants: bool = False) -> list[str]:
    """Every registered private algorithm (not ``auto``; ``origin`` included) at its defaults, as
    harness labels; with ``variants`` also its public variants (:data:`VARIANTS`)."""
    out = []
    for spec in dpviz.algorithms(private_only=True):
        if spec.name == "auto":
            continue
        out.append(spec.name)
        fields = {f.name for f in __import__("dataclasses").fields(spec.params)}
        for v in VARIANTS.get(spec.name, ()) if variants else ():
            if set(v) <= fields:
                out.append(make_label(spec.name, v))
    return out


# ----------------------------------------------------------------------------- recipes


def _mixture(rng: np.random.Generator, n: int, d: int, k: int, *, ratio: float, weights=None,
             noise: str = "gauss") -> np.ndarray:
    """Google's recipe with a different noise: 'gauss', 't3' (Student t, 3 dof) or 'aniso'."""
    if noise == "gauss":
        return ball_mixture(n, d=d, k=k, ratio=ratio, weights=weights, rng=rng).X
    w = np.ones(k) if weights is None else np.asarray(weights, float)
    sizes = np.floor(n * w / w.sum()).astype(np.int64)
    sizes[-1] += n - sizes.sum()
    centers = uniform_ball(k, d, 1.0 - 1.0 / ratio, rng)
    sigma = 1.0 / (ratio * math.sqrt(d))
    lab = np.repeat(np.arange(k), sizes)
    if noise == "t3":
        Z = rng.standard_t(3, size=(n, d)) / math.sqrt(3.0)  # unit variance, heavy tails
    else:  # anisotropic: per cluster, a random rotation with axis scales from 0.2 to 2.5
        Z = rng.standard_normal((n, d))
        for j in range(k):  # loop over k clusters (vectorized within)
            Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
            scales = np.exp(rng.uniform(math.log(0.2), math.log(2.5), d))
            idx = lab == j
            Z[idx] = (Z[idx] * scales) @ Q.T
    X = centers[lab] + sigma * Z
    return clip_to_ball(X[rng.permutation(n)], 1.0)


def recipe_row(recipe: str, n: int, d: int, k: int) -> Row:
    name = f"{recipe}:n{n}:d{d}:k{k}"

    def make(rng: np.random.Generator) -> tuple[np.ndarray, int, float]:
        if recipe == "balanced":
            return _mixture(rng, n, d, k, ratio=5.0), k, 1.0
        if recipe == "unbalanced":
            return _mixture(rng, n, d, k, ratio=6.0, weights=2.0 ** -np.arange(k) + 0.02), k, 1.0
        if recipe == "heavy_tails":
            return _mixture(rng, n, d, k, ratio=6.0, noise="t3"), k, 1.0
        if recipe == "close":
            return _mixture(rng, n, d, k, ratio=2.5), k, 1.0
        if recipe == "anisotropic":
            return _mixture(rng, n, d, k, ratio=5.0, noise="aniso"), k, 1.0
        if recipe == "small_std":
            X = _mixture(rng, n, d, k, ratio=float(rng.choice([1.5, 2.0, 3.0])))
            return standardize_to_box(X), k, float(math.sqrt(d))
        if recipe.startswith("table_"):  # issue 35: small tables of varied shapes, as the app scales them
            shape = recipe.removeprefix("table_")
            ratio = float(rng.choice([1.2, 2.0, 3.5, 6.0]))
            w = None if shape != "unbalanced" else 2.0 ** -np.arange(k) + 0.05
            X = _mixture(rng, n, d, k, ratio=ratio, weights=w,
                         noise={"heavy": "t3", "aniso": "aniso"}.get(shape, "gauss"))
            return standardize_to_box(X), k, float(math.sqrt(d))
        raise ValueError(recipe)
    return Row(name, make, f"{recipe} n={n} d={d} k={k}")


#: (n, d, k) of the evaluation rows: no calibration cell takes one.
EVAL_SHAPES = {(100_000, 100, 64), (200_000, 10, 5), (1_000_000, 20, 16), (150, 4, 3), (1797, 64, 10),
               (569, 30, 2), (178, 13, 3)}

RECIPES = ("balanced", "unbalanced", "heavy_tails", "close", "anisotropic")
#: Issue 35's small standardized tables (shapes of the recipes above, scaled as the app scales a table).
TABLE_RECIPES = ("table_balanced", "table_unbalanced", "table_heavy", "table_aniso")
SMALL_SEEDS = (201,)  # data seed of the small-table cells (10 algorithm draws each)


def table_cells(count: int, design: int = 35) -> list[tuple[str, int, int, int]]:
    """Issue 35's small-table design: ``count`` cells, n 100–5,000 (log-uniform), d 2–64, k 2–10,
    cycling through :data:`TABLE_RECIPES`; never an evaluation row's (n, d, k). ``design`` keys
    the design's own stream: issue 44's second design (``design=44``, data seed 202) adds cells
    to the same region (a query there otherwise read one data seed per cell)."""
    rng = np.random.default_rng(np.random.SeedSequence(2035, spawn_key=(design,)))  # the design's own
    out = []
    for i in range(count):
        n = round(10 ** rng.uniform(2.0, math.log10(5000)))
        d = int(rng.choice((2, 4, 6, 9, 13, 20, 30, 45, 64)))
        k = int(rng.choice((2, 3, 4, 5, 6, 8, 10)))
        if (n, d, k) not in EVAL_SHAPES and n >= 5 * k:
            out.append((TABLE_RECIPES[i % len(TABLE_RECIPES)], n, d, k))
    return out


def cells(count: int, small: int) -> list[tuple[str, int, int, int]]:
    """A fixed quasi-random design: ``count`` mixture cells (n 500–60,000, d 2–128, k 2–64) cycling
    through the recipes, and ``small`` standardized-table cells (n 150–2,000, d 4–64, k 2–10).
    Cells are interleaved (a small one every few) so that a partial run still spans the space."""
    rng = np.random.default_rng(np.random.SeedSequence(2024, spawn_key=(7,)))  # the design's own
    ds = (2, 3, 5, 8, 12, 20, 32, 50, 80, 128)
    ks = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
    out = []
    for i in range(count):
        n = int(round(10 ** rng.uniform(math.log10(800), math.log10(30_000)), -1))
        d = int(ds[rng.integers(len(ds))])
        k = int(min(ks[rng.integers(len(ks))], max(2, n // 40)))
        if (n, d, k) not in EVAL_SHAPES:
            out.append((RECIPES[i % len(RECIPES)], n, d, k))
    small_cells = []
    for _ in range(small):
        n = round(10 ** rng.uniform(math.log10(150), math.log10(2000)))
        d = int(rng.choice((4, 8, 13, 20, 30, 45, 64)))
        k = int(rng.choice((2, 3, 4, 6, 8, 10)))
        if (n, d, k) not in EVAL_SHAPES:
            small_cells.append(("small_std", n, d, k))
    merged: list[tuple[str, int, int, int]] = []
    step = max(1, count // max(small, 1))
    for i, c in enumerate(out):
        merged.append(c)
        if small_cells and (i + 1) % step == 0:
            merged.append(small_cells.pop(0))
    return merged + small_cells


def big_cells(count: int) -> list[tuple[str, int, int, int]]:
    """Big mixture cells (n 100,000–400,000, log-uniform; d 5–50; k 4–32), cycling through
    :data:`RECIPES`: the queries of 10⁵–10⁶ rows otherwise read cells 10–40× smaller in nε."""
    rng = np.random.default_rng(np.random.SeedSequence(2035, spawn_key=(100,)))  # the design's own
    out = []
    for i in range(count):
        n = round(10 ** rng.uniform(5.0, math.log10(400_000)), -3)
        d = int(rng.choice((5, 8, 12, 16, 24, 32, 50)))
        k = int(rng.choice((4, 6, 8, 12, 16, 24, 32)))
        if (n, d, k) not in EVAL_SHAPES:
            out.append((RECIPES[(i + 1) % len(RECIPES)], int(n), d, k))
    return out


# ----------------------------------------------------------------------------- run


class _TimeoutError(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _TimeoutError


def run_cell(cell: tuple[str, int, int, int], labs: list[str], timeout: float,
             seeds: tuple[int, ...] = SEEDS, draws: int = 1) -> list[dict]:
    """Every (data seed, ε, label, draw) of one cell, streams from the harness."""
    recipe, n, d, k = cell
    row = recipe_row(recipe, n, d, k)
    serves = {s.name for s in dpviz.algorithms(applicable_to=d)}
    out = []
    for seed in seeds:
        X, kk, radius = row.data(seed)
        ref = reference_cost(X, kk, stream(seed, "reference", row.name))
        t_km = kmeans_seconds(X, kk, seed=seed)
        for eps in EPSILONS:
            for lab in (lab for lab in labs if lab.split("[")[0] in serves):
                for draw in range(draws):
                    rec = _run(row, X, kk, radius, ref, t_km, lab, eps, seed, draw, timeout)
                    out.append(rec | dict(recipe=recipe, n=n, d=d, k=k))
                    if rec["status"] == "timeout":  # too slow to be auto's choice: no more draws
                        break
    return out


def _run(row: Row, X: np.ndarray, k: int, radius: float, ref: float, t_km: float, lab: str,
         eps: float, seed: int, draw: int, timeout: float) -> dict:
    runner = Runner(epsilons=EPSILONS, verbose=False)
    rng = algorithm_stream(seed, lab, row.name, eps, draw)
    signal.signal(signal.SIGALRM, _alarm)
    # A run slower than TIME_CAP × KMeans can never be auto's choice (its time goal is 1.5×):
    # stop it there, bounded by --timeout.
    signal.setitimer(signal.ITIMER_REAL, min(timeout, max(3.0, TIME_CAP * t_km)))
    t0 = time.perf_counter()
    status = "ok"
    try:
        centers, err, _ = runner.run_one(X, k, radius, lab, eps, rng)
        if err:
            status = "error"
        elif centers is None:
            status = "bottom"
    except _TimeoutError:
        centers, status = None, "timeout"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    secs = time.perf_counter() - t0
    loss = excess_loss(X, centers, ref) if status != "timeout" else None
    return dict(seed=seed, epsilon=eps, label=lab, loss=loss, status=status, seconds=secs,
                time_ratio=secs / t_km, draw=draw)


def cmd_run(args: argparse.Namespace) -> None:
    labs = args.labels or labels(args.variants)
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["recipe"], r["n"], r["d"], r["k"]))
    grid = (table_cells(args.tables, args.design) if args.tables else big_cells(args.big) if args.big
            else cells(args.cells, args.small))
    if args.only_in:  # issue 44: a new label on exactly the cells an earlier (partial) file measured
        measured = {(r["recipe"], r["n"], r["d"], r["k"])
                    for r in map(json.loads, Path(args.only_in).read_text().splitlines())}
        grid = [c for c in grid if c in measured]
    if args.max_d:  # issue 44: re-measure a label whose code changed below some d (tree_coreset, d ≤ 5)
        grid = [c for c in grid if c[2] <= args.max_d]
    seeds, draws = (SMALL_SEEDS, args.draws) if args.tables or args.big else (SEEDS, 1)
    if args.seeds:
        seeds = tuple(args.seeds)
    print(f"# {len(grid)} cells × {len(seeds)} seeds × {draws} draws × ε {EPSILONS} × {len(labs)} labels; "
          f"commit {commit()}; {load_text()}", flush=True)
    print(f"# labels: {labs}", flush=True)
    start = time.perf_counter()
    for i, cell in enumerate(grid):
        if cell in done or (args.part and i % args.part[1] != args.part[0]):
            continue
        if args.budget and time.perf_counter() - start > args.budget:
            print(f"# stopped: time budget {args.budget:.0f}s spent after {i} cells", flush=True)
            break
        t0 = time.perf_counter()
        recs = run_cell(cell, labs, args.timeout, seeds, draws)
        with path.open("a") as fh:
            for r in recs:
                fh.write(json.dumps(r) + "\n")
        scored = [r for r in recs if r["loss"] is not None]
        best = (min(scored, key=lambda r: r["loss"]) if scored
                else {"label": "none (all stopped)", "loss": math.inf})
        print(f"[{i + 1}/{len(grid)}] {cell} {time.perf_counter() - t0:.0f}s  best {best['label']} "
              f"{best['loss']:.3g}  ({load_text()})", flush=True)


# ----------------------------------------------------------------------------- fit


def summarize_cells(records: list[dict], variants: bool = False, keep: tuple[str, ...] = ()) -> list[dict]:
    """Per (cell, ε): each label's median and 90th-percentile loss over the cell's (data seed,
    draw) runs (a timeout counts as +inf), its median time ratio and the run counts. Without
    ``variants`` only the registered defaults are kept (labels without ``[…]``) and the public
    variants named in ``keep`` (issue 44: ``best_of[also=rc_lloyd]``)."""
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for r in records:
        if not variants and "[" in r["label"] and r["label"] not in keep:
            continue
        key = (r["recipe"], r["n"], r["d"], r["k"], r["epsilon"])
        groups.setdefault(key, {}).setdefault(r["label"], []).append(r)
    out = []
    for (recipe, n, d, k, eps), by_label in groups.items():
        def losses(rs: list[dict]) -> list[float]:
            return [math.inf if r["loss"] is None else r["loss"] for r in rs]
        med = {lab: statistics.median(losses(rs)) for lab, rs in by_label.items()}
        q90 = {lab: p90(losses(rs)) for lab, rs in by_label.items()}
        tr = {lab: statistics.median(r["time_ratio"] for r in rs) for lab, rs in by_label.items()}
        runs = max(len(rs) for rs in by_label.values())
        seeds = len({r["seed"] for rs in by_label.values() for r in rs})
        out.append(dict(recipe=recipe, n=n, d=d, k=k, epsilon=eps, median_excess_loss=med,
                        p90_excess_loss=q90, median_time_ratio=tr, seeds=seeds, runs=runs))
    return out


def _default_label(label: str) -> str:
    """The registered name whose defaults ``label``'s parameters are ("" if they are not)."""
    name, params = parse_label(label)
    spec = dpviz.registry.get(name)
    default = spec.make_params()
    return name if all(getattr(default, k) == v for k, v in params.items()) else ""


def _records(args: argparse.Namespace) -> tuple[list[dict], list[str], dict[str, str]]:
    """The records of ``--files`` with ``--alias`` applied (and ``--supersede``), the files, the aliases."""
    files = args.files or [args.out]
    alias = dict(a.split("=", 1)[::-1] for a in args.alias)  # label → name ("best_of=best_of[…]")
    for label, name in alias.items():
        if _default_label(label) != name:
            raise SystemExit(f"--alias {name}={label}: {label} is not {name}'s registered default")
    by_file = [[(r := json.loads(line)) | {"label": alias.get(r["label"], r["label"])}
                for line in Path(f).read_text().splitlines()] for f in files]
    if args.supersede:  # issue 44: a later file's runs of a (cell, label) replace the earlier files' ones
        later: set[tuple] = set()
        for i in range(len(by_file) - 1, -1, -1):
            keys = {_key(r) for r in by_file[i]}
            by_file[i] = [r for r in by_file[i] if _key(r) not in later]
            later |= keys
    return [r for rs in by_file for r in rs], files, alias


def _key(r: dict) -> tuple:
    """A record's (cell, label)."""
    return (r["recipe"], r["n"], r["d"], r["k"], r["label"])


def _small(cell: dict) -> bool:
    """A cell of issue 44's small-table region (n ≤ 5,000, d ≤ 64, k ≤ 10)."""
    return cell["n"] <= 5000 and cell["d"] <= 64 and cell["k"] <= 10


def leave_one_out(cells_: list[dict], neighbours: int, regret_cap: float | None = None,
                  withhold: tuple[str, ...] = ()) -> list[dict]:
    """Issue 44: each calibration shape (recipe, n, d, k; both its ε) answered by the rule built
    from the *other* shapes' cells with ``neighbours`` nearest cells, and the chosen label's
    median and 90th-percentile loss in the left-out cell over that cell's best (loss floor as the
    rule's; a label the cell did not measure → inf). ``withhold``: labels the rule may not choose
    (still counted in the left-out cell's best, so rules with and without them compare on one
    scale). Calibration cells only: this is how the rule's neighbour count is chosen, never on an
    evaluation table."""
    from dpviz.clustering.auto import LOSS_FLOOR, choose_from

    def shape(c: dict) -> tuple:
        return (c["recipe"], c["n"], c["d"], c["k"])

    out = []
    for c in cells_:
        others = [o | {key: {a: v for a, v in o[key].items() if a not in withhold}
                       for key in ("median_excess_loss", "p90_excess_loss")}
                  for o in cells_ if shape(o) != shape(c)]
        try:
            won = choose_from(None, c["n"], c["d"], c["k"], c["epsilon"], DELTA,
                              table={"cells": others, "neighbours": neighbours, "regret_cap": regret_cap,
                                     "big": {"neighbours": NEIGHBOURS, "regret_cap": None},
                                     "max_time_ratio": MAX_TIME_RATIO}).cell["label"]
        except ValueError:
            continue
        ratios = []
        for key in ("median_excess_loss", "p90_excess_loss"):
            losses = {a: math.inf if v is None else max(float(v), 0.0) for a, v in c[key].items()}
            ratios.append((losses.get(won, math.inf) + LOSS_FLOOR) / (min(losses.values()) + LOSS_FLOOR))
        out.append(dict(cell=(*shape(c), c["epsilon"]), label=won, median=ratios[0], p90=ratios[1],
                        small=_small(c)))
    return out


def cmd_loo(args: argparse.Namespace) -> None:
    """Leave-one-shape-out check of the rule for each ``--neighbours`` count (calibration only)."""
    records, files, _ = _records(args)
    cells_ = summarize_cells(records, args.variants, tuple(args.keep))
    print(f"# leave-one-shape-out over {len(cells_)} calibration cells from {files}")
    print("| neighbours | regret cap | region | cells | ≤ 1.25× best (median) | ≤ 1.25× best (p90) | both | "
          "geometric-mean risk regret |")
    print("|---|---|---|---|---|---|---|---|")
    for nb, cap in ((nb, cap) for nb in args.neighbours_grid for cap in args.cap_grid):
        res = leave_one_out(cells_, nb, cap or None, tuple(args.withhold))
        for region, rs in (("small tables", [r for r in res if r["small"]]), ("all", res)):
            risk = [min(max(r["median"], r["p90"]), 1e3) for r in rs]
            print(f"| {nb} | {cap or '—'} | {region} | {len(rs)} | {sum(r['median'] <= 1.25 for r in rs)} | "
                  f"{sum(r['p90'] <= 1.25 for r in rs)} | "
                  f"{sum(max(r['median'], r['p90']) <= 1.25 for r in rs)} | "
                  f"{math.exp(statistics.fmean(math.log(x) for x in risk)):.3f} |", flush=True)
        if args.verbose:
            for r in res:
                if r["small"] and max(r["median"], r["p90"]) > 1.25:
                    print(f"    miss {r['cell']}: {r['label']} median ×{r['median']:.2f} p90 ×{r['p90']:.2f}")


def cmd_pair(args: argparse.Namespace) -> None:
    """Issue 44: label B against label A (``--pair A B``) cell by cell over the cells both measured
    (calibration files only): on how many B's median and 90th percentile are lower, and the
    geometric means of B ÷ A (loss floor as the rule's)."""
    from dpviz.clustering.auto import LOSS_FLOOR

    a, b = args.pair
    records, files, _ = _records(args)
    cells_ = [c for c in summarize_cells(records, variants=True)
              if a in c["median_excess_loss"] and b in c["median_excess_loss"]]
    print(f"# {b} against {a} on {len(cells_)} calibration cells from {files}")
    print("| statistic | B lower | B > 1.25 × A | B < 0.8 × A | geometric mean of B ÷ A |")
    print("|---|---|---|---|---|")
    for key, name in (("median_excess_loss", "median"), ("p90_excess_loss", "p90")):
        r = [(max(c[key][b], 0.0) + LOSS_FLOOR) / (max(c[key][a], 0.0) + LOSS_FLOOR) for c in cells_]
        lower, worse, better = sum(x < 1 for x in r), sum(x > 1.25 for x in r), sum(x < 0.8 for x in r)
        gm = math.exp(statistics.fmean(math.log(x) for x in r))
        print(f"| {name} | {lower} | {worse} | {better} | {gm:.3f} |")


def cmd_fit(args: argparse.Namespace) -> None:
    records, files, alias = _records(args)
    cells_ = summarize_cells(records, args.variants, tuple(args.keep))
    labs = sorted({lab for c in cells_ for lab in c["median_excess_loss"]})
    rule = {
        "how": ("bench/auto_calibrate.py: per cell, each label's median and 90th-percentile relative "
                f"excess k-means loss over its runs: the mixture grid (recipes {list(RECIPES)} and "
                f"small_std, data seeds {list(SEEDS)}, one draw each) and issue 35's small standardized "
                f"tables ({list(TABLE_RECIPES)}, data seed {list(SMALL_SEEDS)}, 10 algorithm draws; issue 44 "
                "adds a second design of them, --design 44, data seed 202); "
                f"row-level δ = {DELTA:g}, n public; streams, loss and ⊥ scoring from bench/harness.py "
                "(reference: dpviz.metrics.reference_kmeans). Candidates: every registered private "
                "algorithm at its defaults, origin included"
                + (f", and the public variants {list(args.keep)}" if args.keep else "")
                + ". A query takes the label with the smallest "
                "weighted geometric-mean risk regret (per cell, the larger of median / cell best and "
                f"p90 / cell best) over the {args.neighbours} nearest cells in (log nε, log d, log k), among "
                f"labels whose median time there is ≤ {MAX_TIME_RATIO}× one KMeans(n_init=1) when "
                "n ≥ 100,000."
                + (f" Each cell's regret is capped at {args.regret_cap:g}." if args.regret_cap else "")
                + (" Where a later file re-measured a (cell, label) (a code change), its runs replace the "
                   "earlier ones." if args.supersede else "")
                + " Neighbour count and cap chosen by bench/auto_calibrate.py loo (leave one calibration "
                  f"shape out; calibration cells only) for n < 100,000; at n ≥ 100,000 {NEIGHBOURS} "
                  "neighbours and no cap, as before issue 44."
                + "".join(f" {name}'s runs are those labelled {label} (its registered defaults); a label "
                          "is a candidate only where all the nearest cells measured it."
                          for label, name in alias.items())),
        "kind": "risk",
        "neighbours": args.neighbours,
        "regret_cap": args.regret_cap or None,
        # n ≥ 100,000: issue 35's setting (8 big cells only: no leave-one-out there)
        "big": {"neighbours": NEIGHBOURS, "regret_cap": None},
        "max_time_ratio": MAX_TIME_RATIO,
        "provenance": {"commit": commit(), "command": " ".join(["bench/auto_calibrate.py", *sys.argv[1:]]),
                       "records": len(records), "grid_files": [str(f) for f in files]},
        "algorithms": labs,
        "cells": cells_,
    }
    text = json.dumps(rule, indent=1, sort_keys=False, default=lambda x: None)
    text = text.replace("Infinity", "null")
    if args.write:
        RULE_PATH.write_text(text + "\n")
        print(f"wrote {RULE_PATH} ({len(cells_)} cells, {len(labs)} labels)")
    else:
        print(text[:2000])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "fit", "loo", "pair"))
    ap.add_argument("--pair", nargs=2, metavar=("A", "B"), help="pair: the two labels to compare")
    ap.add_argument("--neighbours", type=int, default=NEIGHBOURS, help="fit: the rule's neighbour count")
    ap.add_argument("--neighbours-grid", type=int, nargs="*", default=[2, 3, 4, 6, 8],
                    help="loo: neighbour counts to check")
    ap.add_argument("--verbose", action="store_true", help="loo: list the small-table misses")
    ap.add_argument("--regret-cap", type=float, default=0.0, help="fit: the rule's regret cap (0: none)")
    ap.add_argument("--cap-grid", type=float, nargs="*", default=[0.0, 2.0, 3.0, 4.0, 8.0],
                    help="loo: regret caps to check (0: none)")
    ap.add_argument("--out", default="bench/results/auto_grid.jsonl")
    ap.add_argument("--cells", type=int, default=30)
    ap.add_argument("--small", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run before it is stopped")
    ap.add_argument("--budget", type=float, default=0.0, help="stop starting cells after this many s")
    ap.add_argument("--labels", nargs="*", default=None)
    ap.add_argument("--part", type=int, nargs=2, default=None, metavar=("I", "M"),
                    help="run only cells i with i mod M = I (two niced processes share a grid)")
    ap.add_argument("--variants", action="store_true", help="also each algorithm's public variants")
    ap.add_argument("--tables", type=int, default=0,
                    help="run issue 35's small-table design of this many cells instead (10 draws)")
    ap.add_argument("--design", type=int, default=35, help="--tables: the design's key (44: issue 44's)")
    ap.add_argument("--seeds", type=int, nargs="*", default=None, help="run: data seeds")
    ap.add_argument("--draws", type=int, default=10, help="algorithm draws per data seed (--tables, --big)")
    ap.add_argument("--big", type=int, default=0, help="run this many big mixture cells (10⁵–4·10⁵ rows)")
    ap.add_argument("--only-in", default=None, metavar="FILE",
                    help="run: only the cells FILE has records of (a new label on an earlier grid)")
    ap.add_argument("--keep", nargs="*", default=[], metavar="LABEL",
                    help="fit/loo: public variants that are candidates too (e.g. best_of[also=rc_lloyd])")
    ap.add_argument("--withhold", nargs="*", default=[], metavar="LABEL",
                    help="loo: labels the rule may not choose (still in each cell's best)")
    ap.add_argument("--max-d", type=int, default=0, help="run: only the cells with d ≤ this (0: all)")
    ap.add_argument("--supersede", action="store_true",
                    help="fit/loo: a (cell, label) in a later file replaces its runs in earlier files")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--files", nargs="*", default=None, help="fit: JSONL files to read (default --out)")
    ap.add_argument("--alias", nargs="*", default=[], metavar="NAME=LABEL",
                    help="fit: read LABEL's runs as NAME's (LABEL must equal NAME's registered defaults, "
                         "e.g. best_of=best_of[score_clip=0.015625] once that is best_of's default)")
    args = ap.parse_args(argv)
    {"run": cmd_run, "fit": cmd_fit, "loo": cmd_loo, "pair": cmd_pair}[args.command](args)


if __name__ == "__main__":
    main()
