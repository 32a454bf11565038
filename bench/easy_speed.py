"""Speed of the Easy Instances private stage on cached tuples (t = 1000, k = 8, d = 2).

Three timings (median of --reps runs, fresh seed each):
1. PrivatekNoisyCenters alone on tight tuples (the test passes: m matrix products, log-Laplace,
   k Gaussians) — the issue's ≤ 50 ms target;
2. the same on the k-means++ tuples of Fig. 6 data (n = 2·10⁵; the test fails: ⊥ path);
3. kmeans_private_stage (aggregator + private Lloyd step over the n rows) on those cached tuples
   (⊥ path) and on the tuples of a tight Fig. 6 variant (σ = 10⁻⁴: the test passes).

    PYTHONPATH=. .venv/bin/python bench/easy_speed.py [--reps 20 | --quick]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from dpviz.clustering.easy_instances import easy_tuple_stage, kmeans_private_stage, private_k_noisy_centers
from dpviz.data.generators import fig6_blobs

T_TUPLES, K, D = 1000, 8, 2
#: Row-level ε of the k-means runs: the tuple stage gets 0.75·(ε, δ), feasible at t = 1000.
EPS_KM = 1.5


_CPU: list[float] = []


def median_ms(fn, reps: int) -> float:
    """Median wall ms; the median CPU ms of this process goes to _CPU (less sensitive to load)."""
    out, cpu = [], []
    for i in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn(i)
        out.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    _CPU.append(1e3 * statistics.median(cpu))
    return 1e3 * statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="5 repetitions (the project's bench convention)")
    args = ap.parse_args()
    if args.quick:
        args.reps = 5
    rng = np.random.default_rng(0)
    mu = rng.uniform(-100, 100, (K, D))
    tight = mu[None] + rng.normal(0, 1e-4, (T_TUPLES, K, D))
    tight = np.take_along_axis(tight, np.argsort(rng.random((T_TUPLES, K)), axis=1)[:, :, None], axis=1)
    r = private_k_noisy_centers(tight, eps=1.0, delta=1e-6, rng=0)
    assert r.ok, r.failure
    t1 = median_ms(lambda i: private_k_noisy_centers(tight, eps=1.0, delta=1e-6, rng=i), args.reps)
    X = fig6_blobs(200_000, rng=0).X
    stage = easy_tuple_stage(X, K, n_tuples=T_TUPLES, radius=1.0, rng=0)
    r2 = private_k_noisy_centers(stage.tuples, eps=1.0, delta=1e-6, rng=0, valid=stage.valid)
    t2 = median_ms(lambda i: private_k_noisy_centers(stage.tuples, eps=1.0, delta=1e-6, rng=i,
                                                     valid=stage.valid), args.reps)
    t3 = median_ms(lambda i: kmeans_private_stage(X, stage, eps=EPS_KM, delta=1e-6, radius=1.0, rng=i),
                   args.reps)
    Xt = fig6_blobs(200_000, sigma=1e-4, rng=0).X
    stage_t = easy_tuple_stage(Xt, K, n_tuples=T_TUPLES, radius=1.0, rng=0)
    r4 = kmeans_private_stage(Xt, stage_t, eps=EPS_KM, delta=1e-6, radius=1.0, rng=0)
    r3 = kmeans_private_stage(X, stage, eps=EPS_KM, delta=1e-6, radius=1.0, rng=0)
    t4 = median_ms(lambda i: kmeans_private_stage(Xt, stage_t, eps=EPS_KM, delta=1e-6, radius=1.0,
                                                  rng=i), args.reps)
    c1, c2, c3, c4 = _CPU
    print(f"| stage (t={T_TUPLES}, k={K}, d={D}) | outcome | median wall ms | median CPU ms |")
    print("|---|---|---|---|")
    print(f"| PrivatekNoisyCenters, tight tuples | success | {t1:.1f} | {c1:.1f} |")
    print(f"| PrivatekNoisyCenters, Fig. 6 k-means++ tuples (n=2e5) | {r2.failure or 'success'} "
          f"| {t2:.1f} | {c2:.1f} |")
    print(f"| kmeans_private_stage, ε={EPS_KM}, Fig. 6 tuples | {r3.failure or 'success'} | {t3:.1f} "
          f"| {c3:.1f} |")
    print(f"| kmeans_private_stage, ε={EPS_KM}, tight Fig. 6 (σ=1e-4) | {r4.failure or 'success'} "
          f"| {t4:.1f} | {c4:.1f} |")


if __name__ == "__main__":
    main()
