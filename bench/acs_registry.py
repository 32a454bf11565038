"""The registered `kernel_kmeans` with and without a declared public split (issue 14), and the cost of
Explore's "Accuracy vs ε by d" view.

Data: the app's built-in digits (scikit-learn, standardized into [−1, 1]^64, Λ = 8); 15% of the rows
declared PUBLIC with `hold_out_public(seed 0)`, the other 1,527 rows private (n_declared = 1,527).
Each row of the table runs `dpviz.run(name, X_private, 10, epsilon=ε, delta=1e-6, radius=8,
n_declared=1527)` at the registered defaults (d = 50, T_K = 5, input_share = 0.1):

- `kernel_kmeans` + `public_X`: k random public records initialise, γ = 1/median squared distance
  of the public records (Alg. 2, footnote 3);
- `kernel_kmeans` without: k points uniform in the Λ-ball, γ = 1/Λ² (the registry's fallback);
- `dp_lloyd`: the registered input-space DP k-means (its own data-independent init).

Metric: clustering accuracy of the internal partition under the Hungarian matching to the digit
labels (NON-private evaluation), mean ± std over seeds. The guarantee is the same in each column.

    PYTHONPATH=. .venv/bin/python bench/acs_registry.py            # 10 seeds
    PYTHONPATH=. .venv/bin/python bench/acs_registry.py --quick    # 5 seeds
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

import dpviz
from dpviz.data import load_builtin
from dpviz.data.holdout import holdout_of
from dpviz.metrics import labeling_failure
from dpviz.registry import Public, get
from dpviz.viz.storyboards import ExplorationContext

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
K, DELTA = 10, 1e-6


def _labels(res) -> np.ndarray:
    step = res.find("partition") or res.find("lloyd_partition")
    return step.data["labels"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 seeds")
    ap.add_argument("--seeds", type=int, default=None)
    args = ap.parse_args()
    seeds = args.seeds or (5 if args.quick else 10)
    ds = load_builtin("digits")
    priv, pub, h = holdout_of(ds.X, 0.15, rng=0)
    y = ds.labels[h.private_idx]
    print(f"digits: {h.n_private} private rows, {h.n_public} declared public, Λ = {ds.radius:g}, k = {K}, "
          f"δ = {DELTA:g}, {seeds} seeds")
    cols = ("kernel_kmeans + public_X", "kernel_kmeans (ball init)", "dp_lloyd")
    print("\n| ε | " + " | ".join(cols) + " | guarantee ε |")
    print("|---" * (len(cols) + 2) + "|")
    t0 = time.time()
    with threadpool_limits(1):
        for eps in EPSILONS:
            acc = {c: [] for c in cols}
            g = set()
            for s in range(seeds):
                kw = dict(epsilon=eps, delta=DELTA, radius=ds.radius, n_declared=h.n_private, rng=s)
                runs = {cols[0]: dpviz.run("kernel_kmeans", priv, K, public_X=pub, **kw),
                        cols[1]: dpviz.run("kernel_kmeans", priv, K, **kw),
                        cols[2]: dpviz.run("dp_lloyd", priv, K, **kw)}
                for c, r in runs.items():
                    acc[c].append(1.0 - labeling_failure(y, _labels(r)))
                g |= {round(runs[cols[0]].guarantee.eps, 6), round(runs[cols[1]].guarantee.eps, 6)}
            cells = [f"{np.mean(acc[c]):.3f} ± {np.std(acc[c]):.3f}" for c in cols]
            print(f"| {eps:g} | " + " | ".join(cells) + f" | {', '.join(f'{v:.4g}' for v in sorted(g))} |",
                  flush=True)
    print(f"({time.time() - t0:.1f} s)")

    # The Explore view's cost on the same data (what the app does, without the session cache).
    from dpviz.viz.acs import rff_dimension_figure

    spec = get("kernel_kmeans")
    p = spec.make_params()

    def simulate(epsilon=None, delta=None, seed=None, **changes):
        q = spec.make_params(**changes)
        return dpviz.run("kernel_kmeans", priv, K, epsilon=epsilon, delta=DELTA, radius=ds.radius,
                         n_declared=h.n_private, rng=seed, public_X=pub, n_features=q.n_features)

    res = simulate(3.0, None, 0)
    ctx = ExplorationContext(result=res, X=priv, pub=Public(h.n_private, ds.d, K, ds.radius), params=p,
                             epsilon=3.0, delta=DELTA, seed=0, simulate=simulate, labels=y)
    t, c = time.perf_counter(), time.process_time()
    rff_dimension_figure(ctx)
    print(f"\n'Accuracy vs ε by d' view (7 ε × 3 d × 5 seeds + 35 baseline runs, cold cache): "
          f"wall {time.perf_counter() - t:.1f} s, CPU {time.process_time() - c:.1f} s; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
