"""Issue 28: Balcan et al.'s cost on the harness's "large" row (ball mixture, n = 10⁶, d = 20,
k = 16) against one KMeans(n_init=1) on the same data in the same process — the harness's median
over interleaved repeats (KMeans, balcan, KMeans, balcan, …), with its loss and the load average.

    PYTHONPATH=. .venv/bin/python bench/balcan_large_time.py --repeats 2 --eps 1 3
"""

from __future__ import annotations

import argparse

from bench.harness import EVAL_ROWS, Runner, format_table, load_text, summarize


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = ap.parse_args()
    print(load_text())
    runner = Runner(epsilons=tuple(args.eps), time_repeats=args.repeats)
    recs = runner.run_row(EVAL_ROWS["large"], args.seeds, ["balcan"])
    print(format_table(summarize(recs)))
    print(load_text())


if __name__ == "__main__":
    main()
