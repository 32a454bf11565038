"""Does ``best_of`` (draws of tree_coreset and the origin, the exponential mechanism's pick) help?
Measured on ``auto``'s calibration cells only (issue 35's small standardized tables, data seed 201,
10 algorithm draws, streams from the harness), never on an evaluation row, so its public knobs
(``score_clip``, ``select_share``, ``runs``) are chosen on data disjoint from ``docs/peers.md``.

    PYTHONPATH=. .venv/bin/python bench/auto_best_of.py run --labels "best_of[score_clip=0.0625]" \\
        --out bench/results/auto_best_of.jsonl
    PYTHONPATH=. .venv/bin/python bench/auto_best_of.py table --out bench/results/auto_best_of.jsonl \\
        --base bench/results/auto_tables.jsonl

With ``--grid 30 8 --base bench/results/auto_grid.jsonl`` the same on the mixture grid
(auto_grid.jsonl's 25 cells, 3 data seeds, one draw each). ``table`` prints, per label, over
the cells × ε: the geometric mean of its median and of its 90th percentile relative to
tree_coreset's (same cells, same data, other streams), and how often it is within 1.25× of the
cell's best registered label (medians and p90s from the calibration file).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

from bench.auto_calibrate import SEEDS, SMALL_SEEDS, cells, run_cell, table_cells
from bench.harness import commit, load_text, p90


def cmd_run(args: argparse.Namespace) -> None:
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    grid = cells(*args.grid) if args.grid else table_cells(args.tables)
    if args.recipes:
        grid = [c for c in grid if c[0] in args.recipes and c[1] <= args.max_n]
    if args.grid and Path(args.base).exists():  # only the cells the calibration file measured
        lines = Path(args.base).read_text().splitlines()
        measured = {(r["recipe"], r["n"], r["d"], r["k"]) for r in map(json.loads, lines)}
        grid = [c for c in grid if c in measured]
    if path.exists():  # cells already in --out for every label: not rerun
        have = {((r["recipe"], r["n"], r["d"], r["k"]), r["label"])
                for r in map(json.loads, path.read_text().splitlines())}
        grid = [c for c in grid if not all((c, lab) in have for lab in args.labels)]
    seeds, draws = (SEEDS, 1) if args.grid else (SMALL_SEEDS, args.draws)
    print(f"# {len(grid)} cells × seeds {seeds} × {draws} draws × {args.labels}; commit {commit()}; "
          f"{load_text()}", flush=True)
    for i, cell in enumerate(grid):
        if args.part and i % args.part[1] != args.part[0]:
            continue
        recs = run_cell(cell, args.labels, args.timeout, seeds, draws)
        with path.open("a") as fh:
            for r in recs:
                fh.write(json.dumps(r | {"commit": commit()}) + "\n")
        print(f"[{i + 1}/{len(grid)}] {cell} done ({load_text()})", flush=True)


def _stats(records: list[dict]) -> dict[tuple, dict[str, tuple[float, float]]]:
    by: dict[tuple, dict[str, list[float]]] = {}
    for r in records:
        key = (r["recipe"], r["n"], r["d"], r["k"], r["epsilon"])
        by.setdefault(key, {}).setdefault(r["label"], []).append(math.inf if r["loss"] is None else r["loss"])
    return {key: {lab: (statistics.median(xs), p90(xs)) for lab, xs in labs.items()}
            for key, labs in by.items()}


def cmd_table(args: argparse.Namespace) -> None:
    base = _stats([json.loads(x) for x in Path(args.base).read_text().splitlines()])
    new = _stats([json.loads(x) for x in Path(args.out).read_text().splitlines()])
    labels = sorted({lab for cell in new.values() for lab in cell})
    floor = 1e-3
    print("| label | cells | median / tree_coreset (geo. mean) | p90 / tree_coreset | median ≤ 1.25× best "
          "| p90 ≤ 1.25× best | median ≤ origin |")
    print("|---|---|---|---|---|---|---|")
    for lab in ["tree_coreset", *labels]:
        rm, rp, wm, wp, org, cells = [], [], 0, 0, 0, 0
        for key, cell in new.items():
            if lab not in cell and lab != "tree_coreset":
                continue
            ref = base.get(key, {})
            if "tree_coreset" not in ref:
                continue
            m, q = cell[lab] if lab in cell else ref[lab]
            tm, tq = ref["tree_coreset"]
            bm = min(v[0] for v in ref.values())
            bq = min(v[1] for v in ref.values())
            cells += 1
            rm.append(math.log((m + floor) / (tm + floor)))
            rp.append(math.log((q + floor) / (tq + floor)))
            wm += (m + floor) <= 1.25 * (bm + floor)
            wp += (q + floor) <= 1.25 * (bq + floor)
            org += m <= ref["origin"][0] + 1e-12
        if cells:
            gm, gp = math.exp(statistics.fmean(rm)), math.exp(statistics.fmean(rp))
            print(f"| {lab} | {cells} | {gm:.3f} | {gp:.3f} | {wm}/{cells} | {wp}/{cells} | {org}/{cells} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "table"))
    ap.add_argument("--labels", nargs="*", default=["best_of"])
    ap.add_argument("--tables", type=int, default=16)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--grid", type=int, nargs=2, default=None,
                    help="run on the mixture grid cells(count, small) of bench/auto_calibrate.py instead "
                         "(data seeds 101–103, one draw; only the cells --base measured; "
                         "auto_grid.jsonl is cells(30, 8))")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--part", type=int, nargs=2, default=None)
    ap.add_argument("--recipes", nargs="*", default=None, help="run only the cells of these recipes …")
    ap.add_argument("--max-n", type=int, default=10**9, help="… with at most this many rows")
    ap.add_argument("--out", default="bench/results/auto_best_of.jsonl")
    ap.add_argument("--base", default="bench/results/auto_tables.jsonl")
    args = ap.parse_args(argv)
    (cmd_run if args.command == "run" else cmd_table)(args)


if __name__ == "__main__":
    main()
