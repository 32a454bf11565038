"""Speed of FC_Clustering: the whole pipeline vs one scikit-learn KMeans, and the private stage.

1. n = 2e5, d = 2, k = 8, t = 200 (Fig. 6 data): fc_clustering end to end vs
   KMeans(n_clusters=8, n_init=1) on the same data (target ratio ≤ 1.5); the private stage alone
   on a cached TupleStage and match graph (target ≤ 50 ms; also shown without the Lloyd step
   over the n rows).
2. n = 1e6, d = 16, k = 8: the whole pipeline with its peak traced memory (tracemalloc) and
   the process's peak RSS.

    PYTHONPATH=. .venv/bin/python bench/fc_speed.py
"""

from __future__ import annotations

import os
import resource
import statistics
import time
import tracemalloc

from sklearn.cluster import KMeans

from dpviz.clustering.friendlycore.pipeline import fc_clustering, fc_private_stage, fc_tuple_stage
from dpviz.clustering.tuples import stage_match_graph
from dpviz.core import tuple_predicates as fcm
from dpviz.data.generators import fig6_blobs

RHO, DELTA, R_MIN = 1.0, 1e-8, 1e-3


def _median_time(fn, reps: int) -> float:
    """Median wall time; also records the median CPU time (process) in _CPU[-1]."""
    out, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        out.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    _CPU.append(statistics.median(cpu))
    return statistics.median(out)


_CPU: list[float] = []


def part1(reps: int = 5) -> None:
    X = fig6_blobs(200_000, rng=0).X
    t_km = _median_time(lambda: KMeans(n_clusters=8, n_init=1, random_state=0).fit(X), reps)
    t_fc = _median_time(lambda: fc_clustering(X, 8, rho=RHO, delta=DELTA, n_tuples=200, radius=1.0,
                                              r_min=R_MIN, rng=0), reps)
    stage = fc_tuple_stage(X, 8, n_tuples=200, radius=1.0, rng=0)
    t_match = _median_time(lambda: fcm.match_graph(stage.tuples), reps)
    stage_match_graph(stage)  # cache
    seeds = iter(range(10_000))
    t_priv = _median_time(lambda: fc_private_stage(X, stage, rho=RHO, delta=DELTA, radius=1.0,
                                                   r_min=R_MIN, rng=next(seeds)), 4 * reps)
    # NoisyLloydStep in the pipeline = the partition of the rows + FriendlyAvg per part
    # (friendlycore.run_private_part calls both through the friendlycore module).
    origs = {name: getattr(fcm, name) for name in ("partition_sums", "noisy_lloyd_from_sums")}
    step_times: list[float] = []

    def timed(fn):
        def wrapper(*a, **kw):
            t0 = time.perf_counter()
            out = fn(*a, **kw)
            step_times.append(time.perf_counter() - t0)
            return out
        return wrapper

    for name, fn in origs.items():
        setattr(fcm, name, timed(fn))
    lloyd_times: list[float] = []
    try:
        t_priv2 = []
        for s in range(4 * reps):
            before = len(step_times)
            t0 = time.perf_counter()
            fc_private_stage(X, stage, rho=RHO, delta=DELTA, radius=1.0, r_min=R_MIN, rng=20_000 + s)
            lloyd_times.append(sum(step_times[before:]))
            t_priv2.append(time.perf_counter() - t0 - lloyd_times[-1])
    finally:
        for name, fn in origs.items():
            setattr(fcm, name, fn)
    print("\n### Speed at n=2e5, d=2, k=8, t=200 (median wall time)")
    c_km, c_fc, c_match, c_priv = _CPU[:4]
    print("| what | wall s | CPU s |")
    print("|---|---|---|")
    print(f"| sklearn KMeans(n_init=1) | {t_km:.3f} | {c_km:.3f} |")
    print(f"| fc_clustering (whole pipeline) | {t_fc:.3f} | {c_fc:.3f} |")
    print(f"| ratio pipeline / KMeans | {t_fc / t_km:.2f} | {c_fc / c_km:.2f} |")
    print(f"| tuple stage ({stage.method}) | {stage.seconds:.3f} | |")
    print(f"| match_γ graph (200×200, cached per stage) | {t_match:.4f} | {c_match:.4f} |")
    print(f"| private stage on cached tuples (incl. Lloyd over n rows) | {t_priv:.4f} | {c_priv:.4f} |")
    print(f"| private stage without the Lloyd step | {statistics.median(t_priv2):.4f} | |")
    print(f"| NoisyLloydStep over n rows | {statistics.median(lloyd_times):.4f} | |")
    print(f"(load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def part2() -> None:
    X = fig6_blobs(1_000_000, d=16, rng=1).X
    t0 = time.perf_counter()
    res = fc_clustering(X, 8, rho=RHO, delta=DELTA, n_tuples=200, radius=1.0, r_min=R_MIN, rng=1)
    secs = time.perf_counter() - t0
    tracemalloc.start()  # a second, traced run: tracemalloc slows allocations, so time the first
    fc_clustering(X, 8, rho=RHO, delta=DELTA, n_tuples=200, radius=1.0, r_min=R_MIN, rng=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t_km = _median_time(lambda: KMeans(n_clusters=8, n_init=1, random_state=0).fit(X), 1)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("\n### n=1e6, d=16, k=8, t=200")
    print("| what | value |")
    print("|---|---|")
    print(f"| data size | {X.nbytes / 2**20:.0f} MiB |")
    print(f"| fc_clustering seconds | {secs:.2f} (core success: {not res.step('fallback').data['used']}) |")
    print(f"| sklearn KMeans(n_init=1) seconds | {t_km:.2f} |")
    print(f"| peak traced memory during fc_clustering (beyond X) | {peak / 2**20:.0f} MiB |")
    print(f"| process peak RSS | {rss:.0f} MiB |")
    print(f"(load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    import sys

    if "--large-only" not in sys.argv:
        part1()
    part2()
