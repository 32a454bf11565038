"""Balcan et al. on the harness's "large" row (10⁶ × 20, k = 16): loss and time ÷ one KMeans per label.

Streams from bench.harness (data, algorithm, reference from distinct keys). Each label: one KMeans(n_init=1)
timed right before the run, the run timed once; the load average printed beside.

    PYTHONPATH=. .venv/bin/python bench/balcan_large.py --eps 3 --labels balcan "balcan[ls_rows=1000000]"
"""

from __future__ import annotations

import argparse
import json
import time

from bench.harness import EVAL_ROWS, Runner, excess_loss, kmeans_seconds, load_text, reference_cost, stream


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--row", default="large")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eps", nargs="*", type=float, default=[3.0])
    ap.add_argument("--labels", nargs="*", default=["balcan"])
    ap.add_argument("--stream-label", default=None,
                    help="key the algorithm stream by this label instead (e.g. the issue's 'balcan' stream)")
    ap.add_argument("--reps", type=int, default=0,
                    help="also run each label on streams '<stream label>#1' … '#reps' (independent draws)")
    ap.add_argument("--out", default="bench/results/balcan_large.jsonl")
    a = ap.parse_args()
    row = EVAL_ROWS[a.row]
    X, k, radius = row.data(a.seed)
    ref = reference_cost(X, k, stream(a.seed, "reference", row.name))
    runner = Runner(epsilons=tuple(a.eps), verbose=False)
    for eps in a.eps:
        for label, skey in [(lab, (a.stream_label or lab) + (f"#{r}" if r else ""))
                            for lab in a.labels for r in range(a.reps + 1)]:
            t_km = kmeans_seconds(X, k, seed=a.seed)
            rng = stream(a.seed, "algorithm", skey, row.name, f"{eps:g}")
            t0 = time.perf_counter()
            centers, err, _ = runner.run_one(X, k, radius, label, eps, rng)
            secs = time.perf_counter() - t0
            rec = dict(row=a.row, seed=a.seed, eps=eps, label=label, stream=skey,
                       loss=excess_loss(X, centers, ref),
                       bottom=centers is None, err=err, seconds=secs, kmeans_seconds=t_km,
                       ratio=secs / t_km, load=load_text())
            print(json.dumps(rec), flush=True)
            with open(a.out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
