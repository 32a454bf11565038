"""auto's time on Google's 10⁶-row recipe (EVAL_ROWS["large"], data seed 0): the median of 3
interleaved (KMeans(n_init=1), auto) pairs per ε, with the load average (issue 35's time goal).

    PYTHONPATH=. .venv/bin/python bench/auto_time.py
"""

from __future__ import annotations

import statistics
import time

import dpviz
from bench.harness import EVAL_ROWS, algorithm_stream, kmeans_seconds, load_text


def main() -> None:
    X, k, radius = EVAL_ROWS["large"].data(0)
    print(load_text(), flush=True)
    for eps in (1.0, 3.0):
        km, au = [], []
        for rep in range(3):
            km.append(kmeans_seconds(X, k, seed=rep))
            t0 = time.perf_counter()
            res = dpviz.run("auto", X, k, epsilon=eps, delta=1e-6, radius=radius, n_declared=X.shape[0],
                            rng=algorithm_stream(0, "auto", "large", eps, 60 + rep))
            au.append(time.perf_counter() - t0)
        a, b = statistics.median(au), statistics.median(km)
        print(f"ε={eps:g} auto={res.params['auto_choice']} KMeans {b:.2f}s auto {a:.2f}s ratio {a / b:.2f}; "
              f"{load_text()}", flush=True)


if __name__ == "__main__":
    main()
