"""FC_Clustering: private k-means / k-GMM by sample-and-aggregate with FriendlyCore (the pipeline).

Pipeline (Tsfadia et al. 2022, §5.2; engineer's note §3.8):

1. non-private stage (:func:`dpviz.clustering.tuples.tuple_stage`, alias :func:`fc_tuple_stage`):
   every row to one of t random pieces; the oracle's k centers per piece → t unordered k-tuples
   (ρ-independent, cached);
2. FC_kTupleClustering (tuple-level privacy): FriendlyCore(match_1/7) → FriendlyReorder →
   FC_AvgOrdTup (per-coordinate FindDiam, FriendlyCore(dist_r1..rk), FriendlyOrdTupAvg);
3. NoisyLloydStep (row-level, parallel over clusters) from those k private centers;
4. fallback (row-level) when step 2 outputs ⊥: a private quadtree coreset + weighted k-means.

Only the private part (2–4) depends on ρ and δ; :func:`fc_private_stage` runs it in
milliseconds on a cached :class:`~dpviz.clustering.tuples.TupleStage` and match graph.

Where things live: the steps 2–3 (FC_kTupleClustering, FC_AvgOrdTup, FriendlyReorder,
FriendlyOrdTupAvg, NoisyLloydStep) in :mod:`dpviz.clustering.friendlycore.steps`; the budget
split and the :class:`~dpviz.clustering.friendlycore.budget.FCBudget` every step reads in
:mod:`dpviz.clustering.friendlycore.budget`;
the tuple stage and its match-graph cache in :mod:`dpviz.clustering.tuples`. This module holds
the pipeline: :func:`run_private_part` (steps 2–4, shared with the streamed pipeline through a
:class:`RowAccess`), :func:`fc_private_stage` and :func:`fc_clustering`; import each step from
its own module.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from dpviz._validation import (
    MAX_CLUSTERS,
    RngLike,
    check_bool,
    check_data,
    check_delta,
    check_radius,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.averaging.diam_levels import DiamLevels, stage_diam_levels
from dpviz.clustering.friendlycore.budget import FCBudget, budget_margins, resolve_budget, suggest_n_tuples
from dpviz.clustering.friendlycore.steps import (
    DIAM_BASE,
    FC_FAILED,
    fc_k_tuple_clustering,
    noisy_lloyd_from_sums,
    partition_sums,
)
from dpviz.clustering.grid_coreset import FallbackOutcome, fallback_centers
from dpviz.clustering.tuples import TupleStage, check_declared_rows, stage_match_graph, tuple_stage
from dpviz.core.tuple_predicates import MatchGraph
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.declared import SIZE_FRACTION, DeclaredSize, record_size, resolve_size
from dpviz.privacy.ledger import Ledger
from dpviz.result import Result, Trace

#: The non-private stage of FC_Clustering: the sample-and-aggregate entry point (rows outside the
#: Λ-ball dropped; the implementation chosen from the declared size only).
fc_tuple_stage = tuple_stage


# ----------------------------------------------------------------------------- the private part


class RowAccess(Protocol):
    """How the row-level steps read the rows: in memory (:class:`InMemoryRows`) or as sums over
    the chunks of a file (``dpviz.large.fc_stream.StreamRows``). Everything else of the private
    part is :func:`run_private_part`, the same code for both."""

    #: Rows outside the Λ-ball (removed, not clipped; an internal count).
    n_removed: int
    #: The inside mask over all rows, or None when rows are not indexed (streamed).
    inside: np.ndarray | None

    def lloyd_sums(self, Y: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """NoisyLloydStep's partition of the inside rows by nearest row of Y: (labels over all rows
        with −1 outside, or None; counts (k,); sums (k, d))."""
        ...

    def fallback(self, k: int, *, rho: float, n_declared: int, rng: np.random.Generator,
                 ledger: Ledger) -> FallbackOutcome:
        """The fallback's private centers from the inside rows (ρ-zCDP, row-level)."""
        ...


class InMemoryRows:
    """:class:`RowAccess` on an (n, d) array: the rows inside the Λ-ball, kept once."""

    def __init__(self, X: np.ndarray, radius: float) -> None:
        self.radius = radius
        self.inside = np.einsum("ij,ij->i", X, X) <= radius * radius
        self.n_removed = int(X.shape[0] - self.inside.sum())
        self.X = X if self.n_removed == 0 else X[self.inside]  # no copy in the common case

    def lloyd_sums(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        labels_in, counts, sums = partition_sums(self.X, Y)
        labels = np.full(self.inside.shape[0], -1, dtype=np.int64)
        labels[self.inside] = labels_in
        return labels, counts, sums

    def fallback(self, k: int, *, rho: float, n_declared: int, rng: np.random.Generator,
                 ledger: Ledger) -> FallbackOutcome:
        return fallback_centers(self.X, k, rho=rho, radius=self.radius, n_declared=n_declared, rng=rng,
                                ledger=ledger)


_LEVELS_LOCK = threading.Lock()
_LEVELS: weakref.WeakKeyDictionary[TupleStage, dict] = weakref.WeakKeyDictionary()


def diam_levels(stage: TupleStage, *, r_min: float, radius: float) -> DiamLevels:
    """FindDiam's pair counts of the stage's tuples on the grid [r_min, 2Λ] (ratio DIAM_BASE),
    kept as long as the stage object lives (:mod:`dpviz.averaging.diam_levels`): ρ-independent,
    so every ε / δ step on a cached stage reuses them (built on the first run that needs them).
    Safe to share between threads and sessions: a pure function of the tuples."""
    with _LEVELS_LOCK:
        owner = _LEVELS.setdefault(stage, {})
    return stage_diam_levels(stage.tuples, r_min=r_min, r_max=2.0 * radius, base=DIAM_BASE, owner=owner)


def _reserve(ledger: Ledger, budget: ZCDP, why: str) -> None:
    """Account a sub-call that did not run: the guarantee covers every branch."""
    if budget.rho > 0 or budget.delta > 0:
        ledger.record(f"reserved ({why})", "reserved", budget,
                      note="not run on this branch; accounted because the guarantee covers both")


def run_private_part(
    stage: TupleStage, rows: RowAccess, budget: FCBudget, *, root: Ledger, trace: Trace,
    n_declared: int, r_min: float, radius: float, fallback: bool, rng: np.random.Generator,
    match: MatchGraph | None = None, cache_diam: bool = True,
) -> tuple[np.ndarray | None, str | None]:
    """Steps 2–4 of FC_Clustering on a tuple stage: (centers or None, the public failure).

    ``cache_diam``: FindDiam's pair counts come from the stage's cache (:func:`diam_levels`, the
    same integers, so the same release); False counts them in every run.

    The one private part of the in-memory (:func:`fc_private_stage`) and the streamed
    (``dpviz.large.fc_stream.fc_private_stream``) pipelines: the feasibility step,
    FC_kTupleClustering, then NoisyLloydStep or the fallback, reading the rows through ``rows``.
    Records into ``root`` (whose budget is the caller's (ρ, δ)) and checks its totals.

    Privacy
    -------
    (ρ, δ)-zCDP (Thm 5.4): tuple-level FC_kTupleClustering (``budget.tuple_level``), row-level
    Lloyd step and fallback. When FC outputs ⊥ (a private output), the row-level remainder (the
    Lloyd share plus the fallback reserve) goes to the fallback; every branch records the same
    totals.
    """
    t, k = stage.n_pieces, stage.k
    split = budget.split
    m = budget_margins(budget, t=t, k=k, r_min=r_min, radius=radius, base=DIAM_BASE)
    trace.add("feasibility", released=True, margins=m, fractions=dict(split.rho), preset=split.preset,
              delta_fractions=dict(split.delta),
              suggested_n_tuples=suggest_n_tuples(split, n=n_declared, k=k, rho=budget.total.rho,
                                                  delta=budget.total.delta, r_min=r_min, radius=radius),
              note="expected margins (noise sds) from public n, t, k, ρ, δ only")

    # ---- FC_kTupleClustering (unit: tuple) ---------------------------------------------
    graph = match if match is not None else stage_match_graph(stage)
    levels = diam_levels(stage, r_min=r_min, radius=radius) if cache_diam else None
    tuple_centers, internal_reason = fc_k_tuple_clustering(
        stage.tuples, graph, budget, r_min=r_min, radius=radius, rng=rng, ledger=root, trace=trace,
        levels=levels)
    failure = FC_FAILED if tuple_centers is None else None
    trace.add("fc_outcome", released=False, reason=internal_reason,
              note="which test output ⊥ is NOT released: only '⊥' is (one public reason)")
    # ---- rows inside the Λ-ball (NoisyLloydStep step 1; the fallback uses the same rows) ---
    trace.add("removed_rows", released=False, n_removed=rows.n_removed, inside=rows.inside,
              note="rows outside the Λ-ball are removed, not clipped (a non-private count)")

    b_lloyd, b_fallback = budget.parts["lloyd"], budget.parts["fallback"]
    l_lloyd = root.child("NoisyLloydStep", b_lloyd, composition="parallel", unit="row")
    centers: np.ndarray | None = None
    if tuple_centers is not None:
        r_lloyd = split.lloyd_radius_factor * radius
        labels, counts, sums = rows.lloyd_sums(tuple_centers)
        lo = noisy_lloyd_from_sums(counts, sums, tuple_centers, rho=b_lloyd.rho, delta=b_lloyd.delta,
                                   r=r_lloyd, rng=rng, ledger=l_lloyd, n_public=n_declared / k,
                                   labels=labels)
        trace.add("lloyd_partition", released=False, labels=lo.labels, counts=lo.counts,
                  n_removed=rows.n_removed, note=f"{rows.n_removed} row(s) outside the Λ-ball removed")
        trace.add("lloyd", released=True, used=True, centers=lo.centers, sigma=lo.sigma,
                  n_hat=lo.n_hat, n_kept_previous=lo.n_kept_previous, radius=r_lloyd)
        centers = lo.centers
        l_fb = root.child("fallback", b_fallback, unit="row")
        _reserve(l_fb, b_fallback, "fallback: FC succeeded")
        trace.add("fallback", released=True, used=False, reason=None, method="not needed",
                  centers=None, levels=None, n_coreset=None)
    elif fallback:
        l_lloyd.note = "not run: FC_kTupleClustering output ⊥; its share went to the fallback"
        trace.add("lloyd", released=True, used=False, centers=None, sigma=None, n_hat=None,
                  n_kept_previous=None, radius=None, note="not run: FC output ⊥")
        b_fb = b_fallback + b_lloyd
        l_fb = root.child("fallback", b_fb, unit="row",
                          note="FC output ⊥: the fallback reserve plus the Lloyd step's share")
        fo = rows.fallback(k, rho=b_fb.rho, n_declared=n_declared, rng=rng, ledger=l_fb)
        if b_fb.delta > 0:
            l_fb.record_event("unused δ of this branch (reserved)", b_fb.delta,
                              note="the fallback is pure zCDP; the δ is accounted for both branches")
        centers = fo.centers
        trace.add("fallback", released=True, used=True, reason=FC_FAILED, method=fo.method,
                  centers=fo.centers, levels=fo.levels, n_coreset=len(fo.weights))
    else:
        _reserve(l_lloyd, b_lloyd, "NoisyLloydStep: FC output ⊥")
        trace.add("lloyd", released=True, used=False, centers=None, sigma=None, n_hat=None,
                  n_kept_previous=None, radius=None, note="not run: FC output ⊥")
        root.child("fallback", ZCDP(0.0, 0.0), unit="row", note="disabled")
        trace.add("fallback", released=True, used=False, reason=FC_FAILED, method="disabled",
                  centers=None, levels=None, n_coreset=None)

    tot, want = root.total(), root.budget
    if not (math.isclose(tot.rho, want.rho, rel_tol=1e-9)
            and math.isclose(tot.delta, want.delta, rel_tol=1e-9)):
        raise RuntimeError(f"fc_clustering ledger totals {tot}, not {want}: a bug.")
    root.check()
    return centers, None if centers is not None else failure


# ----------------------------------------------------------------------------- pipeline


def _validate_private_inputs(
    X: Any, stage: TupleStage, rho: Any, delta: Any, radius: Any, r_min: Any, func: str,
) -> tuple[np.ndarray, float, float, float, float]:
    X = check_data(X, func, allow_empty=False)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func)
    radius = check_radius(radius, "radius", func)
    r_min = check_radius(r_min, "r_min", func)
    if r_min > 2.0 * radius:
        raise ValueError(
            f"The 'r_min' parameter of {func} must be at most 2·radius = {2 * radius:g} (FindDiam "
            f"searches [r_min, 2Λ]). Got r_min={r_min:g}."
        )
    if not isinstance(stage, TupleStage):
        raise ValueError(f"The 'stage' parameter of {func} must be a TupleStage from fc_tuple_stage.")
    if stage.piece_of_row.shape[0] != X.shape[0] or stage.tuples.shape[2] != X.shape[1]:
        raise ValueError(
            f"The 'stage' of {func} was computed on other data: it has {stage.piece_of_row.shape[0]} "
            f"rows and d={stage.tuples.shape[2]}; X has {X.shape[0]} rows and d={X.shape[1]}."
        )
    return X, rho, delta, radius, r_min


def fc_private_stage(
    X: np.ndarray,
    stage: TupleStage,
    *,
    rho: float,
    delta: float,
    radius: float,
    r_min: float,
    preset: str = "practical",
    fractions: Mapping[str, float] | None = None,
    fallback: bool = True,
    rng: RngLike = None,
    n_declared: int | DeclaredSize | None = None,
    match: MatchGraph | None = None,
    diam_beta: float | None = None,
    radius_factor: float | None = None,
    lloyd_radius_factor: float | None = None,
    cache_diam: bool = True,
) -> Result:
    """The private part of FC_Clustering on a precomputed TupleStage (milliseconds at t = 200).

    Parameters
    ----------
    X : (n, d) array
        The rows the stage was computed on (the Lloyd step and the fallback read them).
    stage : TupleStage
        From :func:`fc_tuple_stage` (ρ-independent; cache it).
    rho, delta : float
        The zCDP budget; the ledger's root totals exactly (ρ, δ).
    radius : float
        Λ, the public ℓ2 bound of the rows. Rows with ||x|| > Λ are removed (NoisyLloydStep,
        step 1) and counted in the ``lloyd_partition`` step; FindDiam searches [r_min, 2Λ].
    r_min : float
        FindDiam's smallest radius (paper: 0.001 for Fig. 6, 0.1 for Fig. 7).
    preset : {"practical", "paper", "reference"}
        The budget split (see :mod:`dpviz.clustering.friendlycore.budget`). "practical" is computed from
        public quantities (t, k, ρ, δ, r_min, Λ) to maximize the worst predicted margin.
    fractions : mapping, optional
        A full ρ split over match_core, find_diam, dist_core, tuple_avg, lloyd, fallback.
    fallback : bool, default True
        Reserve the split's fallback share and, when FC outputs ⊥, return the fallback's centers
        (it then also gets the Lloyd step's share, which that branch does not use).
    rng : Generator, int, None or SecureRNG
        An int seed or a Generator makes a *simulation* (``Result.simulation``; an int is kept as
        ``Result.seed``); ``dpviz.privacy.release.SecureRNG()`` makes a release (no seed).
    n_declared : int or DeclaredSize, optional
        The public dataset size: used for the fallback's grid depth, the Lloyd step's FriendlyAvg
        split and the suggested t; never the true n, core or cluster sizes. Default: a DP count
        of the rows spending ``SIZE_FRACTION``·ρ (recorded in the ledger, row-level); a
        :class:`~dpviz.privacy.declared.DeclaredSize` from ``dp_count`` drawn earlier on the same
        rows is booked here instead.
    match : MatchGraph, optional
        The stage's match graph (default: computed once per stage object and cached).
    diam_beta, radius_factor, lloyd_radius_factor : float, optional
        Override the preset's utility knobs (FindDiam's β; the multiplier on its radii; the Lloyd
        step's FriendlyAvg radius in units of Λ, ≥ 1).
    cache_diam : bool, default True
        Take FindDiam's pair counts from the stage's cache (:func:`diam_levels`, built once per
        stage object and FindDiam grid; the same integers, so a bit-identical release). False
        counts them in this run.

    Returns
    -------
    Result
        ``centers`` (k, d) private; ``failure`` (``FC_FAILED``, the one public reason) only when
        FC output ⊥ and the fallback is off. The released trace steps (declared_size, feasibility,
        diameters, tuple_averages, lloyd, fallback) are present on every branch; the internal
        ``fc_outcome`` step says which test output ⊥.

    Privacy
    -------
    (ρ, δ)-zCDP (Thm 5.4) with the FC_kTupleClustering part stated for add/remove of one *tuple*
    (unit "tuple" in the ledger) and the Lloyd step and fallback for one *row*. Rows are assigned
    to pieces independently, so one row changes one tuple (a replacement: group privacy of size 2);
    ``dpviz.privacy.accounting.row_level_statement`` turns the ledger into the per-row (ε, δ).
    The split depends on public quantities only. When FC outputs ⊥ (a private output), the
    row-level remainder (the Lloyd share plus the fallback reserve) goes to the fallback and the
    unused tuple-level shares are recorded as reserved, so every branch has the same ledger totals.

    References
    ----------
    Tsfadia et al. 2022, §5.2 (FC_kTupleClustering, FriendlyReorder, FC_AvgOrdTup,
    FriendlyOrdTupAvg, NoisyLloydStep, FC_Clustering; Thms 5.3–5.4), §6.2 (backup run).
    """
    func = "fc_private_stage"
    X, rho, delta, radius, r_min = _validate_private_inputs(X, stage, rho, delta, radius, r_min, func)
    fallback = check_bool(fallback, "fallback", func)
    gen, seed = check_rng(rng, "algorithm:friendlycore")
    n = X.shape[0]
    t, k = stage.n_pieces, stage.k
    root = Ledger("fc_clustering", ZCDP(rho, delta), unit="row")
    # Finding 4 (issue 10): the dataset size is a public input. A declared n costs nothing; without
    # one, a DP count (a declared share SIZE_FRACTION of ρ, row-level) stands in for it. The true n
    # never reaches a split, a noise scale, a grid depth or a released shape.
    size = resolve_size(n_declared, func, n_rows=n, rho=SIZE_FRACTION * rho, rng=gen)
    record_size(root, size)
    n_decl = size.n
    if size.source == "declared":  # declared values only; a DP-counted size never refuses
        check_declared_rows(n_decl, t, k, func)
    # The rest of the budget runs the pipeline, resolved once into its parts.
    budget = resolve_budget(preset, fractions=fractions, t=t, k=k, rho=rho - size.rho, delta=delta,
                            r_min=r_min, radius=radius, fallback=fallback, diam_beta=diam_beta,
                            radius_factor=radius_factor, lloyd_radius_factor=lloyd_radius_factor)
    params = dict(k=k, rho=rho, delta=delta, radius=radius, r_min=r_min, n_tuples=t, preset=preset,
                  split=budget.split.as_dict(), fallback=fallback, n_declared=n_decl,
                  size_source=size.source, rho_size=size.rho, oracle=stage.oracle)
    trace = Trace()
    trace.add("pieces", released=False, piece_of_row=stage.piece_of_row, piece_sizes=stage.piece_sizes)
    trace.add("tuples", released=False, tuples=stage.tuples)
    trace.add("declared_size", released=True, n_declared=n_decl, source=size.source, rho=size.rho,
              sigma=size.sigma, note="public: declared by the caller, or a DP count from the budget")
    centers, failure = run_private_part(stage, InMemoryRows(X, radius), budget, root=root, trace=trace,
                                        n_declared=n_decl, r_min=r_min, radius=radius, fallback=fallback,
                                        rng=gen, match=match, cache_diam=cache_diam)
    return Result(centers, failure, root, trace.freeze(), params, seed, simulation=is_simulation(rng))


def fc_clustering(
    X: np.ndarray,
    k: int,
    *,
    rho: float,
    delta: float,
    n_tuples: int = 200,
    radius: float,
    r_min: float,
    oracle: str = "kmeans++",
    preset: str = "practical",
    rng: RngLike = None,
    fallback: bool = True,
    fractions: Mapping[str, float] | None = None,
    n_declared: int | None = None,
    method: str = "auto",
    **options: Any,
) -> Result:
    """FC_Clustering: private k-means / k-GMM centers (fc_tuple_stage + fc_private_stage).

    Parameters
    ----------
    X : (n, d) array
    k : int, ≥ 1
    rho, delta : float
        zCDP budget (paper: ρ = 1, δ = 1e-8).
    n_tuples : int, default 200
        t, the number of random pieces (needs n ≥ t·k; pieces should hold many rows per cluster).
    radius : float
        Λ, the public ℓ2 bound (rows outside are removed and counted).
    r_min : float
        FindDiam's smallest radius.
    oracle : {"kmeans++", "pca"}
    preset : {"practical", "paper", "reference"}
    rng : Generator, int or None
    fallback, fractions, n_declared : see :func:`fc_private_stage`.
    method : {"auto", "batched", "sklearn"}
        Implementation of the oracle stage.
    **options
        diam_beta, radius_factor, lloyd_radius_factor (see :func:`fc_private_stage`).

    Returns
    -------
    Result
        A simulation unless ``rng`` is a SecureRNG; an int ``rng`` is kept as ``seed`` and replays
        the whole run (pieces, oracle and noise).

    Raises
    ------
    ValueError
        k < 1, n_tuples < 1 or n < n_tuples·k, radius ≤ 0, r_min ≤ 0 or > 2·radius, NaN rows,
        an unknown preset or oracle.

    Privacy
    -------
    (ρ, δ)-zCDP for any oracle (Tsfadia et al. 2022, Thm 5.4), tuple-level for the
    FC_kTupleClustering part and row-level for the rest; see :func:`fc_private_stage`.

    References
    ----------
    Tsfadia et al. 2022, §5.2.5 (FC_Clustering), §6.2 (experiments).
    """
    func = "fc_clustering"
    X = check_data(X, func, allow_empty=False)
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    check_delta(delta, func)
    check_radius(radius, "radius", func)
    check_radius(r_min, "r_min", func)
    fallback = check_bool(fallback, "fallback", func)
    gen, seed = check_rng(rng, "algorithm:friendlycore")
    t0 = time.perf_counter()
    # The size comes first: the tuple stage's method="auto" reads it (finding 4, issue 10).
    size = resolve_size(n_declared, func, n_rows=X.shape[0], rho=SIZE_FRACTION * rho, rng=gen)
    stage = tuple_stage(X, k, n_tuples=n_tuples, radius=radius, oracle=oracle, rng=gen, method=method,
                        n_declared=size.n)
    res = fc_private_stage(X, stage, rho=rho, delta=delta, radius=radius, r_min=r_min, preset=preset,
                           fractions=fractions, fallback=fallback, rng=gen, n_declared=size,
                           **options)
    params = dict(res.params) | dict(method=stage.method, seconds=time.perf_counter() - t0)
    return Result(res.centers, res.failure, res.ledger, res.trace, params, seed,
                  simulation=is_simulation(rng))
