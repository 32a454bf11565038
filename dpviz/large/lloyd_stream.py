"""DP-Lloyd on a table larger than memory: one pass over the chunks per noisy iteration.

:func:`dpviz.clustering.baselines.dp_lloyd` reads the rows only through each iteration's
per-cluster counts and sums (the rows inside the Λ-ball, partitioned by their nearest current
centre). Those are sums over rows, so here every chunk computes its own counts and sums on the
engine (threads or Dask workers), the driver adds them in chunk order and draws the noise exactly
as the in-memory function does: the same public initial centres, the same Gaussian draws in the
same order, the same ledger. For a fixed seed the released centres equal the in-memory ones up to
the floating-point order of the sums (tested to 1e-12 in ``tests/unit/test_large_lloyd.py``).

Memory is one batch per running task; the file is read ``iters`` times.

References
----------
Blum, Dwork, McSherry, Nissim 2005 (SuLQ k-means); Su et al. 2016 (DPLloyd); Tsfadia et al. 2022,
§5.2.4 (removal outside Λ, parallel composition).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpviz._validation import (
    MAX_CLUSTERS,
    RngLike,
    check_delta,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.clustering.baselines import dp_lloyd_init, dp_lloyd_sigmas, noisy_lloyd_iteration
from dpviz.data.bounds import row_norms
from dpviz.geometry import nearest_center
from dpviz.large.engine import Engine, Progress, _quiet, make_engine
from dpviz.large.source import Chunk, TableSource
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.result import Result, Trace


def chunk_lloyd_sums(chunk: Chunk, radius: float, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Engine task: the chunk's per-cluster counts (k,) and sums (k, d) of its rows with ||x|| ≤ Λ
    (dp_lloyd's rule: ``row_norms(X) <= radius``) by nearest centre of C, plus (finite rows read,
    rows outside the ball) (internal counts, never released)."""
    k, d = C.shape
    counts = np.zeros(k, dtype=np.int64)
    sums = np.zeros((k, d))
    n_read = n_out = 0
    for X in chunk.batches():
        Xin = X[row_norms(X) <= radius]
        n_read += X.shape[0]
        n_out += X.shape[0] - Xin.shape[0]
        if Xin.shape[0] == 0:
            continue
        labels = nearest_center(Xin, C)[0]
        counts += np.bincount(labels, minlength=k)
        for j in range(d):  # loop over columns, vectorized over rows
            sums[:, j] += np.bincount(labels, weights=Xin[:, j], minlength=k)
    return counts, sums, n_read, n_out


def _summed(engine: Engine, chunks: list[Chunk], radius: float, C: np.ndarray, progress: Progress,
            label: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    parts = engine.gather(engine.map(chunk_lloyd_sums, chunks, [radius] * len(chunks), [C] * len(chunks),
                                     progress=progress, label=label))
    k, d = C.shape
    counts, sums = np.zeros(k, dtype=np.int64), np.zeros((k, d))
    for c, s, _, _ in parts:  # chunk order: the sum does not depend on which task finished first
        counts += c
        sums += s
    return counts, sums, sum(p[2] for p in parts), sum(p[3] for p in parts)


def dp_lloyd_stream(
    data: Any, k: int, *, rho: float, delta: float = 0.0, radius: float, iters: int = 5,
    init: np.ndarray | None = None, rng: RngLike = None, scheduler: Any = None, n_jobs: int | None = None,
    columns: list[str] | None = None, chunk_rows: int | None = None, progress: Progress = _quiet,
) -> Result:
    """:func:`dpviz.clustering.baselines.dp_lloyd` on a Parquet/CSV file or directory, out of core.

    Parameters
    ----------
    data : path, array or TableSource
    k, rho, delta, radius, iters, init, rng
        As :func:`dp_lloyd` (same draws in the same order, same ledger).
    scheduler, n_jobs, columns, chunk_rows
        As :func:`dpviz.large.fc_stream.fc_stream`.

    Returns
    -------
    Result
        The trace of dp_lloyd: ``init`` and ``iteration`` × T (released), and an internal
        ``lloyd_partition`` holding the LAST ITERATION's counts (no labels: rows are never
        indexed; the in-memory function re-partitions with the final centres, which would cost
        one more read of the table for an internal diagnostic).

    Privacy
    -------
    ρ-zCDP under add/remove of one row, as dp_lloyd: T iterations × (ρ/2T sums + ρ/2T counts),
    each a parallel composition over clusters. No size is read from the table.
    """
    func = "dp_lloyd_stream"
    src = data if isinstance(data, TableSource) else TableSource(
        data, columns=columns, **({} if chunk_rows is None else {"chunk_rows": chunk_rows}))
    d = src.d
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    iters = check_scalar(iters, "iters", func, low=1, high=1000, integer=True)
    gen, seed = check_rng(rng, "algorithm:dp_lloyd")
    C, init_note = dp_lloyd_init(k, d, radius, init, gen, func)
    ledger = Ledger("dp_lloyd", ZCDP(rho, delta))
    trace = Trace()
    trace.add("init", released=True, note=init_note, centers=C.copy())
    sigma_sum, sigma_count = dp_lloyd_sigmas(rho=rho, radius=radius, iters=iters)
    rho_it = rho / iters
    engine = make_engine(scheduler, n_jobs)
    chunks = src.chunks()
    counts = np.zeros(k, dtype=np.int64)
    n_out = 0
    try:
        for it in range(iters):
            counts, sums, _, n_out = _summed(engine, chunks, radius, C, progress,
                                                  f"DP-Lloyd iteration {it + 1}/{iters} chunk")
            C = noisy_lloyd_iteration(C, sums, counts, it=it, rho_it=rho_it, radius=radius, rng=gen,
                                      ledger=ledger, trace=trace, sigmas=(sigma_sum, sigma_count))
    finally:
        engine.close()  # closes only what make_engine opened
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta),
                      note="DP-Lloyd is pure ρ-zCDP; the requested δ is left unspent.")
    trace.add("lloyd_partition", released=False, labels=None, counts=counts, n_removed=n_out,
              note="the last iteration's partition (streamed: rows are never indexed)")
    ledger.check()
    return Result(centers=C, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm="dp_lloyd", k=k, rho=rho, delta=delta, radius=radius, iters=iters,
                              streamed=True, engine=getattr(engine, "name", "threads")),
                  seed=seed, simulation=is_simulation(rng))
