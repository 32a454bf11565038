"""FC_Clustering on a table larger than memory: two passes over the chunks, noise on the driver.

Pass 1 (non-private, on the engine): every chunk's rows inside the Λ-ball get their piece from a
keyed hash (:mod:`dpviz.large.pieces`) and are split by block of pieces (float32); every block
gathers its rows from all chunks (file order) and runs the oracle on its pieces with its own seed
(:func:`dpviz.clustering.tuples.tuples_from_pieces`). The tuples depend on the seed, t and the
rows only: identical for any chunking and any engine.

The private part runs on the driver through the same function as
:func:`dpviz.clustering.friendlycore.pipeline.fc_private_stage` (``run_private_part``: same budget, same
mechanisms, same ledger entries): FC_kTupleClustering on the t tuples, then the row-level stages
from SUMS OVER CHUNKS gathered by the engine (:class:`StreamRows`): NoisyLloydStep's per-cluster
counts and sums (FriendlyAvg from its sufficient statistics), or, when FC outputs ⊥, the
fallback's grid histograms (one pass per quadtree level), second moment and group sums.

The declared size ``n_declared`` is a public input and the only size any choice reads (the number
of pieces, the oracle's implementation, the Lloyd split, the grid depth).

References
----------
Tsfadia et al. 2022, §5.2 (FC_Clustering, NoisyLloydStep §5.2.4) and §6.2 (backup run).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpviz._validation import RngLike, check_delta, check_rho, check_rng, check_scalar, is_simulation
from dpviz.clustering import grid_coreset as fb
from dpviz.clustering.friendlycore.budget import resolve_budget
from dpviz.clustering.friendlycore.pipeline import run_private_part
from dpviz.clustering.friendlycore.steps import LloydOutcome, noisy_lloyd_from_sums  # noqa: F401  (re-exported)
from dpviz.clustering.tuples import (
    N_BLOCKS,
    ORACLES,
    TupleStage,
    block_streams,
    resolve_method,
    tuples_from_pieces,
)
from dpviz.geometry import nearest_center
from dpviz.large.engine import Engine, Progress, _quiet, make_engine
from dpviz.large.pieces import draw_key, keyed_pieces
from dpviz.large.source import Chunk, TableSource
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.declared import record_size, resolve_size
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian
from dpviz.result import Result, Trace

# ----------------------------------------------------------------------------- engine tasks
# Module-level functions of picklable arguments: they run on threads or Dask workers.


def _inside(X: np.ndarray, radius: float) -> np.ndarray:
    """The rows with ||x|| ≤ Λ (NoisyLloydStep step 1; the same rule as fc_tuple_stage)."""
    return X[np.einsum("ij,ij->i", X, X) <= radius * radius]


def split_chunk(chunk: Chunk, key: tuple[int, int], n_pieces: int, radius: float,
                edges: np.ndarray, lo: int = 0, hi: int | None = None) -> list[Any]:
    """Pass 1 task: per block of the wave [lo, hi), the chunk's rows inside the Λ-ball (float32,
    file order) and their pieces; rows of other blocks are dropped (a later wave re-reads them).
    The last element is (finite rows read, rows outside the ball) (internal counts)."""
    hi = len(edges) - 1 if hi is None else hi
    n_wave = hi - lo
    rows: list[list[np.ndarray]] = [[] for _ in range(n_wave)]
    pieces: list[list[np.ndarray]] = [[] for _ in range(n_wave)]
    n_read = n_out = 0
    for X in chunk.batches():
        Xin = _inside(X, radius)
        n_read += X.shape[0]
        n_out += X.shape[0] - Xin.shape[0]
        p = keyed_pieces(Xin, key, n_pieces)
        blk = np.searchsorted(edges, p, side="right") - 1
        keep = (blk >= lo) & (blk < hi)
        blk, Xin, p = blk[keep] - lo, Xin[keep], p[keep]
        order = np.argsort(blk, kind="stable")  # keeps file order inside each block
        bounds = np.searchsorted(blk[order], np.arange(n_wave + 1))
        Xs, ps = Xin[order].astype(np.float32), p[order].astype(np.int32)
        for b in range(n_wave):  # loop over the wave's blocks
            rows[b].append(Xs[bounds[b]:bounds[b + 1]])
            pieces[b].append(ps[bounds[b]:bounds[b + 1]])
    d = len(chunk.columns)
    out: list[Any] = [
        (np.concatenate(r) if r else np.zeros((0, d), np.float32),
         np.concatenate(q) if q else np.zeros(0, np.int32))
        for r, q in zip(rows, pieces, strict=True)
    ]
    out.append((n_read, n_out))
    return out


def block_tuples(parts: list[tuple[np.ndarray, np.ndarray]], lo: int, hi: int, k: int, oracle: str,
                 seed: int, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Pass 1 task: the tuples and sizes of pieces [lo, hi) from their rows in every chunk."""
    X = np.concatenate([p[0] for p in parts])
    piece = np.concatenate([p[1] for p in parts]).astype(np.int64) - lo
    tuples = tuples_from_pieces(X, piece, hi - lo, k, oracle=oracle, seed=seed, method=method)
    return tuples, np.bincount(piece, minlength=hi - lo)


def lloyd_sums(chunk: Chunk, radius: float, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pass 2 task: per private center of Y, the count and the sum of the chunk's rows inside the
    Λ-ball that are nearest to it (NoisyLloydStep's partition)."""
    k, d = Y.shape
    counts = np.zeros(k, dtype=np.int64)
    sums = np.zeros((k, d))
    for X in chunk.batches():
        Xin = _inside(X, radius)
        if Xin.shape[0] == 0:
            continue
        labels = nearest_center(Xin, Y)[0]
        counts += np.bincount(labels, minlength=k)
        for j in range(d):  # loop over columns, not rows
            sums[:, j] += np.bincount(labels, weights=Xin[:, j], minlength=k)
    return counts, sums


def _unit_cube(Z: np.ndarray, radius: float) -> np.ndarray:
    """The fallback's map of the Λ-box to [0, 1)^p (as fallback_centers)."""
    return np.clip((Z + radius) / (2.0 * radius), 0.0, 1.0 - 1e-12)


def unit_cube_rows(chunk: Chunk, radius: float, V: np.ndarray | None) -> np.ndarray:
    """Fallback task: the chunk's inside rows (projected on V if given) mapped to [0, 1)^p, kept by
    the engine between the quadtree's levels (p ≤ 5 columns: one read of the file for all levels)."""
    parts = [_unit_cube(_inside(X, radius) if V is None else _inside(X, radius) @ V, radius)
             for X in chunk.batches()]
    p = len(chunk.columns) if V is None else V.shape[1]
    return np.concatenate(parts) if parts else np.zeros((0, p))


def cube_counts(U: np.ndarray, level: int, keys: np.ndarray) -> np.ndarray:
    """Fallback task: the counts of one chunk's rows U in the flat cells ``keys`` of level ``level``."""
    return fb.grid_cell_counts(U, level, keys)


def chunk_cube_counts(chunk: Chunk, radius: float, V: np.ndarray | None, level: int,
                      keys: np.ndarray) -> np.ndarray:
    """Fallback task for tables too large to keep on the grid's cube: one chunk read per level."""
    return fb.grid_cell_counts(unit_cube_rows(chunk, radius, V), level, keys)


def second_moment(chunk: Chunk, radius: float) -> np.ndarray:
    """Fallback task (d > 3): XᵀX of the chunk's inside rows."""
    d = len(chunk.columns)
    M = np.zeros((d, d))
    for X in chunk.batches():
        Xin = _inside(X, radius)
        M += Xin.T @ Xin
    return M


def group_sums(chunk: Chunk, radius: float, V: np.ndarray, Cz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fallback task (d > 3): per projected center, the count and sum of its inside rows."""
    k, d = Cz.shape[0], len(chunk.columns)
    counts = np.zeros(k, dtype=np.int64)
    sums = np.zeros((k, d))
    for X in chunk.batches():
        Xin = _inside(X, radius)
        Z = Xin @ V
        labels = np.argmin(((Z[:, None, :] - Cz[None, :, :]) ** 2).sum(axis=2), axis=1)
        counts += np.bincount(labels, minlength=k)
        for j in range(d):
            sums[:, j] += np.bincount(labels, weights=Xin[:, j], minlength=k)
    return counts, sums


def _sum_over(engine: Engine, fn: Callable[..., Any], chunks: list[Chunk], *args: Any,
              progress: Progress, label: str) -> Any:
    """Σ over chunks of fn(chunk, *args) (tuples summed elementwise), in chunk order."""
    res = engine.gather(engine.map(fn, chunks, *([a] * len(chunks) for a in args), progress=progress,
                                   label=label))
    if isinstance(res[0], tuple):
        return tuple(sum(r[i] for r in res) for i in range(len(res[0])))
    return sum(res)


# ----------------------------------------------------------------------------- pass 1

#: The bytes of one block's rows (float32) that pass 1 plans for, from public sizes. A worker
#: holds its block's slices, their concatenation and the oracle's temporaries at once: with 96 MiB
#: a block it stays under ~1 GB (docs/scale.md §7). Tests pass a smaller one to force many waves.
BLOCK_BYTES = 96 * 2**20


@dataclass(frozen=True)
class StreamStage:
    """The non-private stage of a streamed run: the TupleStage (``piece_of_row`` is empty: rows
    are never indexed), the engine's internal counts and the chunks (for the second pass)."""

    stage: TupleStage
    chunks: tuple[Chunk, ...]
    n_rows: int  # finite rows read (internal, never released)
    n_outside: int  # of which outside the Λ-ball (internal)
    radius: float
    d: int
    block_bytes: int = BLOCK_BYTES  # the memory plan of pass 1, reused by the fallback's passes


def pass1_plan(n_pieces: int, n_declared: int, d: int, slots: int,
               block_bytes: int = BLOCK_BYTES) -> tuple[int, int]:
    """(blocks, blocks per wave) of pass 1, from public sizes and the engine's slots only.

    The declared rows' float32 bytes n·d·4 are cut into blocks of at most ``block_bytes`` (never
    fewer than :data:`~dpviz.clustering.tuples.N_BLOCKS`, never more than t); a wave holds at
    most ``slots`` blocks' worth of rows (at least ``slots`` blocks), and each wave re-reads the
    file for its own blocks. Small tables: one wave, the blocks of the in-memory stage.
    """
    total = 4.0 * float(n_declared) * d
    n_blocks = int(min(n_pieces, max(min(N_BLOCKS, n_pieces), np.ceil(total / block_bytes))))
    per_wave = max(slots, int(slots * block_bytes // max(total / n_blocks, 1.0)))
    return n_blocks, min(per_wave, n_blocks)


def stream_tuple_stage(
    source: TableSource, k: int, *, n_tuples: int, radius: float, n_declared: int,
    oracle: str = "kmeans++", rng: RngLike = None, engine: Engine | None = None,
    method: str = "auto", progress: Progress = _quiet, block_bytes: int = BLOCK_BYTES,
) -> StreamStage:
    """Pass 1: pieces by keyed hash, rows gathered per block of pieces, the oracle per block.

    Memory is bounded per worker: the blocks are sized from ``n_declared``·d (:func:`pass1_plan`)
    and run in waves, each wave re-reading the chunks and keeping only its own blocks' rows, so
    no worker ever holds more than about one block's rows (issue 38: 8.2 GB spilled at 10⁸ rows
    when every block's rows were split off in one read).

    The oracle's implementation ("auto") and the blocks are chosen from ``n_declared`` and d
    (public), never the file's row count. The key is drawn first from ``rng``, then one seed per
    block: the tuples depend on the seed, t, n_declared and d, never on chunking or the engine.

    Privacy
    -------
    NON-PRIVATE (internal tuples). A row's piece depends on the key and that row only, so one
    row changes one tuple, as in :func:`dpviz.clustering.tuples.compute_tuples`.
    """
    func = "stream_tuple_stage"
    k = check_scalar(k, "k", func, low=1, high_open=True, integer=True)
    t = check_scalar(n_tuples, "n_tuples", func, low=1, high=100_000, integer=True)
    if oracle not in ORACLES:
        raise ValueError(f"The 'oracle' parameter of {func} must be one of {ORACLES}. Got {oracle!r}.")
    gen, seed = check_rng(rng, "algorithm:friendlycore")
    engine = engine or make_engine()
    start = time.perf_counter()
    key = draw_key(gen)
    n_blocks, per_wave = pass1_plan(t, n_declared, source.d, engine.slots(), block_bytes)
    streams = block_streams(t, gen, n_blocks)
    edges = np.array([s.start for s, _ in streams] + [t])
    used = resolve_method(method, n_declared, source.d, oracle, n_tuples=t)
    chunks = source.chunks()
    out: list[tuple[np.ndarray, np.ndarray]] = []
    stats: list[tuple[int, int]] = []
    for lo in range(0, n_blocks, per_wave):
        hi = min(n_blocks, lo + per_wave)
        wave = f"blocks {lo + 1}-{hi} of {n_blocks}"
        out += _wave_tuples(engine, chunks, streams[lo:hi], lo, hi, key=key, t=t, k=k, radius=radius,
                            edges=edges, oracle=oracle, method=used, stats=stats if lo == 0 else None,
                            progress=progress, wave=wave)
    tuples = np.concatenate([o[0] for o in out])
    sizes = np.concatenate([o[1] for o in out])
    stage = TupleStage(tuples=tuples, piece_of_row=np.zeros(0, dtype=np.int64), piece_sizes=sizes, k=k,
                       n_pieces=t, oracle=oracle, method=used, seconds=time.perf_counter() - start,
                       seed=seed)
    return StreamStage(stage, tuple(chunks), int(sum(s[0] for s in stats)),
                       int(sum(s[1] for s in stats)), float(radius), source.d, int(block_bytes))


def _wave_tuples(engine: Engine, chunks: list[Chunk], streams: list[tuple[slice, int]], lo: int, hi: int,
                 *, key: tuple[int, int], t: int, k: int, radius: float, edges: np.ndarray, oracle: str,
                 method: str, stats: list[tuple[int, int]] | None, progress: Progress,
                 wave: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """One wave of pass 1: read every chunk keeping blocks [lo, hi), then the oracle per block.
    Appends the chunks' internal counts to ``stats`` when given (the first wave's read)."""
    n = len(chunks)
    parts = engine.map(split_chunk, chunks, [key] * n, [t] * n, [radius] * n, [edges] * n, [lo] * n,
                       [hi] * n, progress=progress, label=f"pass 1 (read, hash, split; {wave}) chunk")
    if stats is not None:
        stats += engine.gather(engine.pick(parts, hi - lo))
    picked = [engine.pick(parts, b) for b in range(hi - lo)]
    # Only the per-block slices are needed from here: on Dask, dropping the parts lets the
    # scheduler release them, so a worker holds the wave's rows once, not twice.
    del parts
    blocks = engine.map(block_tuples, picked, [s.start for s, _ in streams], [s.stop for s, _ in streams],
                        [k] * len(streams), [oracle] * len(streams), [sd for _, sd in streams],
                        [method] * len(streams), progress=progress, label=f"pass 1 (oracle; {wave}) block")
    del picked
    return engine.gather(blocks)


# ----------------------------------------------------------------------------- pass 2


class StreamRows:
    """:class:`~dpviz.clustering.friendlycore.pipeline.RowAccess` on a streamed stage: NoisyLloydStep's
    counts and sums and the fallback's statistics are sums over the chunks (engine tasks)."""

    inside = None  # rows are never indexed

    def __init__(self, st: StreamStage, engine: Engine, progress: Progress = _quiet) -> None:
        self.st, self.engine, self.progress = st, engine, progress
        self.n_removed = st.n_outside

    def lloyd_sums(self, Y: np.ndarray) -> tuple[None, np.ndarray, np.ndarray]:
        counts, sums = _sum_over(self.engine, lloyd_sums, list(self.st.chunks), self.st.radius, Y,
                                 progress=self.progress, label="pass 2 (Lloyd sums) chunk")
        return None, counts, sums

    def fallback(self, k: int, *, rho: float, n_declared: int, rng: np.random.Generator,
                 ledger: Ledger) -> fb.FallbackOutcome:
        return stream_fallback(self.st, k, rho=rho, n_declared=n_declared, rng=rng, ledger=ledger,
                               engine=self.engine, progress=self.progress, block_bytes=self.st.block_bytes)


def stream_fallback(
    st: StreamStage, k: int, *, rho: float, n_declared: int, rng: np.random.Generator, ledger: Ledger,
    engine: Engine, progress: Progress = _quiet, block_bytes: int = BLOCK_BYTES,
) -> fb.FallbackOutcome:
    """:func:`dpviz.clustering.grid_coreset.fallback_centers` with every data access a sum over chunks:
    the same draws and ledger entries. The rows' grid coordinates ([0, 1)^p, p ≤ 5, float64) are
    computed in one pass and kept by the engine for all quadtree levels (n·p·8 bytes) while the
    declared n·p·8 fits in the engine's slots × ``block_bytes``; beyond, every level re-reads the
    chunks (bounded memory; the same counts).

    Privacy
    -------
    ρ-zCDP for add/remove of one row, as the in-memory fallback.
    """
    chunks, radius, d = list(st.chunks), st.radius, st.d

    def counter(V: np.ndarray | None) -> Callable[[int, np.ndarray], np.ndarray]:
        p = d if V is None else V.shape[1]
        if 8.0 * n_declared * p > engine.slots() * block_bytes:
            # Too large to keep (from public sizes): re-read the chunks at every quadtree level.
            def reread(level: int, keys: np.ndarray) -> np.ndarray:
                return _sum_over(engine, chunk_cube_counts, chunks, radius, V, level, keys,
                                 progress=progress, label=f"fallback grid level {level} (re-read) chunk")
            return reread
        cubes = engine.map(unit_cube_rows, chunks, [radius] * len(chunks), [V] * len(chunks),
                           progress=progress, label="fallback (rows to the grid's cube) chunk")

        def count(level: int, keys: np.ndarray) -> np.ndarray:
            return _sum_over(engine, cube_counts, cubes, level, keys, progress=progress,
                             label=f"fallback grid level {level} chunk")
        return count

    if d <= fb.GRID_DIM:
        levels = fb.grid_levels(d, n_declared, rho)
        P, w = fb._quadtree_coreset(np.zeros((0, d)), levels=levels, rho=rho, rng=rng, ledger=ledger,
                                    counter=counter(None))
        C = fb._weighted_kmeans(P, w, k, rng) * 2.0 * radius - radius
        return fb.FallbackOutcome(C, "grid coreset (quadtree) + weighted k-means",
                                  P * 2 * radius - radius, w, levels)
    p = min(k, d, fb.PROJECTION_DIM)
    part = fb.projected_budget(rho)
    # fallback._private_top_subspace with XᵀX summed over chunks.
    iu = np.triu_indices(d)
    M = _sum_over(engine, second_moment, chunks, radius, progress=progress, label="fallback XᵀX chunk")
    noisy = gaussian(M[iu], sensitivity=radius**2, rho=part["subspace"].rho, rng=rng, ledger=ledger,
                     name=f"second moment XᵀX ({len(iu[0])} entries)")
    S = np.zeros((d, d))
    S[iu] = noisy
    S = S + S.T - np.diag(np.diag(S))
    V = np.linalg.eigh(S)[1][:, ::-1][:, :p]
    P, w = fb._quadtree_coreset(np.zeros((0, p)), levels=fb.PROJECTED_LEVELS, rho=part["coreset"].rho,
                                rng=rng, ledger=ledger, counter=counter(V), union_bound=True)
    Cz = fb._weighted_kmeans(P, w, k, rng) * 2.0 * radius - radius
    counts, sums = _sum_over(engine, group_sums, chunks, radius, V, Cz, progress=progress,
                             label="fallback group sums chunk")
    means = ledger.child("group means (parallel)", composition="parallel")
    C = np.zeros((k, d))
    for i in range(k):  # as fallback_centers: 0.2ρ sum (sensitivity Λ), 0.2ρ count (1), parallel
        node = means.child(f"group[{i}]")
        s = gaussian(sums[i], sensitivity=radius, rho=part["sum"].rho, rng=rng, ledger=node, name="noisy sum")
        c = gaussian(float(counts[i]), sensitivity=1.0, rho=part["count"].rho, rng=rng, ledger=node,
                     name="noisy count")
        C[i] = s / c if c >= 1.0 else V @ Cz[i]
    norms = np.linalg.norm(C, axis=1, keepdims=True)
    C = np.where(norms > radius, C * radius / np.maximum(norms, 1e-300), C)
    return fb.FallbackOutcome(C, f"private PCA to {p}-D + grid coreset + noisy group means",
                              P * 2 * radius - radius, w, fb.PROJECTED_LEVELS)


def fc_private_stream(
    st: StreamStage, *, rho: float, delta: float, r_min: float, n_declared: int,
    preset: str = "practical", fractions: Mapping[str, float] | None = None, fallback: bool = True,
    rng: RngLike = None, engine: Engine | None = None, progress: Progress = _quiet,
) -> Result:
    """The private part of FC_Clustering on a streamed stage; noise drawn on the driver.

    The same private part as :func:`dpviz.clustering.friendlycore.pipeline.fc_private_stage`
    (:func:`~dpviz.clustering.friendlycore.pipeline.run_private_part`: same budget, same draws in the same
    order, same ledger tree; ``tests/unit/test_large.py`` checks both agree), with the rows read
    as sums over chunks (:class:`StreamRows`). The trace carries no per-row array.

    Privacy
    -------
    (ρ, δ)-zCDP as fc_private_stage (Thm 5.4): tuple-level FC_kTupleClustering, row-level Lloyd
    step and fallback; every branch records the same totals.
    """
    func = "fc_private_stream"
    rho, delta = check_rho(rho, func), check_delta(delta, func)
    radius = st.radius
    r_min = check_scalar(r_min, "r_min", func, low=0.0, low_open=True, high=2.0 * radius)
    gen, seed = check_rng(rng, "algorithm:friendlycore")
    engine = engine or make_engine()
    stage = st.stage
    t, k = stage.n_pieces, stage.k
    root = Ledger("fc_clustering", ZCDP(rho, delta), unit="row")
    # The declared size is required here (no DP count of a file's rows): it costs nothing.
    size = resolve_size(n_declared, func, n_rows=0, rho=0.0, rng=gen)
    if size.source != "declared":
        raise ValueError(f"The 'n_declared' parameter of {func} must be a declared int.")
    record_size(root, size)
    n_decl = size.n
    budget = resolve_budget(preset, fractions=fractions, t=t, k=k, rho=rho - size.rho, delta=delta,
                            r_min=r_min, radius=radius, fallback=fallback)
    params = dict(k=k, rho=rho, delta=delta, radius=radius, r_min=r_min, n_tuples=t, preset=preset,
                  split=budget.split.as_dict(), fallback=fallback, n_declared=n_decl,
                  size_source=size.source, rho_size=size.rho, oracle=stage.oracle,
                  engine=getattr(engine, "name", "threads"), streamed=True)
    trace = Trace()
    trace.add("pieces", released=False, piece_sizes=stage.piece_sizes,
              note="pieces from a keyed hash of each row (dpviz.large.pieces)")
    trace.add("tuples", released=False, tuples=stage.tuples)
    trace.add("declared_size", released=True, n_declared=n_decl, source=size.source, rho=size.rho,
              sigma=size.sigma, note="public: declared by the caller")
    centers, failure = run_private_part(stage, StreamRows(st, engine, progress), budget, root=root,
                                        trace=trace, n_declared=n_decl, r_min=r_min, radius=radius,
                                        fallback=fallback, rng=gen)
    return Result(centers, failure, root, trace.freeze(), params, seed, simulation=is_simulation(rng))


# ----------------------------------------------------------------------------- end to end


def fc_stream(
    data: Any, k: int, *, rho: float, delta: float, radius: float, r_min: float, n_declared: int,
    n_tuples: int = 200, oracle: str = "kmeans++", preset: str = "practical", fallback: bool = True,
    rng: RngLike = None, scheduler: Any = None, n_jobs: int | None = None,
    columns: list[str] | None = None, chunk_rows: int | None = None, method: str = "auto",
    progress: Progress = _quiet, block_bytes: int = BLOCK_BYTES,
) -> Result:
    """FC_Clustering on a Parquet/CSV file or directory (or a :class:`TableSource`), out of core.

    Parameters
    ----------
    data : path, array or TableSource
    k, rho, delta, radius, r_min, n_tuples, oracle, preset, fallback
        As :func:`dpviz.clustering.friendlycore.pipeline.fc_clustering`.
    n_declared : int
        The public dataset size (required: the file's row count is never used).
    rng : Generator, int or None
    scheduler : str, distributed.Client or None
        A Dask scheduler address or Client; None runs on ``n_jobs`` local threads.
    columns, chunk_rows
        See :class:`TableSource`.
    block_bytes : int
        Pass 1's memory plan (:func:`pass1_plan`): the float32 bytes of one block's rows.

    Privacy
    -------
    (ρ, δ)-zCDP (Thm 5.4), as fc_clustering; the private stage runs on the driver.
    """
    src = data if isinstance(data, TableSource) else TableSource(
        data, columns=columns, **({} if chunk_rows is None else {"chunk_rows": chunk_rows}))
    n_declared = check_scalar(n_declared, "n_declared", "fc_stream", low=1, high_open=True, integer=True)
    radius = check_scalar(radius, "radius", "fc_stream", low=0.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "algorithm:friendlycore")
    engine = make_engine(scheduler, n_jobs)
    try:
        st = stream_tuple_stage(src, k, n_tuples=n_tuples, radius=radius, n_declared=n_declared,
                                oracle=oracle, rng=gen, engine=engine, method=method, progress=progress,
                                block_bytes=block_bytes)
        res = fc_private_stream(st, rho=rho, delta=delta, r_min=r_min, n_declared=n_declared,
                                preset=preset, fallback=fallback, rng=gen, engine=engine, progress=progress)
    finally:
        engine.close()  # closes only what make_engine opened (threads, a Client from an address)
    params = dict(res.params) | {"method": st.stage.method}
    return dataclasses.replace(res, params=params, seed=seed)
