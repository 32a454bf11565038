"""FC_Clustering: private k-means / k-GMM by sample-and-aggregate with FriendlyCore.

Pipeline (Tsfadia et al. 2022, §5.2; engineer's note §3.8):

1. non-private stage (``dpviz.clustering.tuples.compute_tuples``): every row to one of t random
   pieces; the oracle's k centers per piece → t unordered k-tuples (ρ-independent, cached);
2. FC_kTupleClustering (tuple-level privacy): FriendlyCore(match_1/7) → FriendlyReorder →
   FC_AvgOrdTup (per-coordinate FindDiam, FriendlyCore(dist_r1..rk), FriendlyOrdTupAvg);
3. NoisyLloydStep (row-level, parallel over clusters) from those k private centers;
4. fallback (row-level) when step 2 outputs ⊥: a private quadtree coreset + weighted k-means.

Only the private part (2–4) depends on ρ and δ; :func:`fc_private_stage` runs it in
milliseconds on a cached :class:`~dpviz.clustering.tuples.TupleStage` and match graph.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpviz._validation import (
    RngLike,
    check_data,
    check_delta,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.averaging.diameter import find_diam_core
from dpviz.averaging.friendly_avg import friendly_avg_core
from dpviz.clustering.fallback import fallback_centers
from dpviz.clustering.presets import FCSplit, margins, resolve_split, suggest_n_tuples
from dpviz.clustering.tuples import TupleStage, compute_tuples, resolve_method
from dpviz.core.filters import zcdp_filter
from dpviz.core.tuple_predicates import GAMMA, MatchGraph, match_graph, ord_permutation, ordered_dist_counts
from dpviz.geometry import nearest_center
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.declared import SIZE_FRACTION, DeclaredSize, record_size, resolve_size
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian
from dpviz.result import Result, Trace

#: ``fc_tuple_stage(method="auto")`` without a declared size: a fixed, data-independent choice
#: (batched is within 0.8–2.9× of the per-piece loop at n·d = 10⁶; bench/tuples_speed.py).
AUTO_WITHOUT_SIZE = "batched"

#: FindDiam's grid ratio b (§5.1.2, b = 1.5 in the paper).
DIAM_BASE = 1.5

#: The one public failure reason of FC_kTupleClustering (Result.failure, the fallback step's
#: ``reason``). Which test output ⊥ is internal: it is a non-private function of the data.
FC_FAILED = "FC_kTupleClustering output ⊥"

# Internal reasons (the internal ``fc_outcome`` step only; never released).
EMPTY_MATCH_CORE = "empty match core (FriendlyCore(match_1/7) kept no tuple)"
EMPTY_DIST_CORE = "empty dist core (FriendlyCore(dist_r1..rk) kept no tuple)"
NHAT_NONPOSITIVE = "n̂ ≤ 0 in FriendlyOrdTupAvg (too few tuples in the dist core)"


# ----------------------------------------------------------------------------- caching

_MATCH_CACHE: weakref.WeakKeyDictionary[TupleStage, dict[float, MatchGraph]] = weakref.WeakKeyDictionary()


def stage_match_graph(stage: TupleStage, *, gamma: float = GAMMA) -> MatchGraph:
    """The match_γ graph of a TupleStage, computed once per (stage object, γ) and cached.

    The graph is ρ-independent, so the app reruns only the private part when ρ or δ moves.
    The cache is keyed on the stage object's identity and dies with it.
    """
    per_stage = _MATCH_CACHE.setdefault(stage, {})
    if gamma not in per_stage:
        per_stage[gamma] = match_graph(stage.tuples, gamma=gamma)
    return per_stage[gamma]


# ----------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class ReorderOutcome:
    """FriendlyReorder's output: ``ordered`` (c, k, d) tuples, all aligned with the reference.

    ``reference_index`` indexes the core (0: the first core tuple); ``permutation`` is the
    uniformly random π; ``n_hungarian`` counts tuples whose argmin map was not a bijection.
    """

    ordered: np.ndarray
    reference_index: int
    permutation: np.ndarray
    n_hungarian: int


def friendly_reorder(core: np.ndarray, *, rng: np.random.Generator) -> ReorderOutcome:
    """FriendlyReorder (Tsfadia et al. 2022, §5.2.2): align every core tuple with the first.

    Ỹ^i = (y^i_{σ_i(π(1))}, …, y^i_{σ_i(π(k))}) with σ_i(j) = argmin_l ||x^1_j − y^i_l|| (ord_{X^1})
    and π a uniformly random permutation of [k]. Inside a match_{1/7}-friendly core σ_i is a
    bijection; otherwise (a δ-probability event) the Hungarian assignment is used and counted.

    Privacy
    -------
    A ∘ FriendlyReorder is match_{1/7}-friendly (ρ, δ)-zCDP when A is (ρ, δ)-zCDP on ordered
    tuples (Claim 5.2.2): the random π couples the runs whose first tuple differs.

    References
    ----------
    Tsfadia et al. 2022, §5.2.2; note §3.8a.
    """
    c, k, _ = core.shape
    pi = rng.permutation(k)
    if c == 0:
        return ReorderOutcome(core.copy(), 0, pi, 0)
    ref = core[0]
    # σ_i(j) = argmin_l ||x^1_j − y^i_l|| for all core tuples at once (first index on ties).
    D = np.linalg.norm(ref[None, :, None, :] - core[:, None, :, :], axis=3)  # (c, k, k)
    sigma = np.argmin(D, axis=2)
    bij = np.all(np.sort(sigma, axis=1) == np.arange(k), axis=1)
    n_hung = int(np.count_nonzero(~bij))
    for i in np.flatnonzero(~bij):  # rare inside a friendly core: Hungarian fallback
        sigma[i], _ = ord_permutation(ref, core[i])
    ordered = np.take_along_axis(core, sigma[:, pi, None], axis=1)  # Ỹ^i_j = y^i_{σ_i(π(j))}
    return ReorderOutcome(ordered, 0, pi, n_hung)


@dataclass(frozen=True)
class OrdTupAvgOutcome:
    """FriendlyOrdTupAvg's output: private ``centers`` (k, d) or None on ⊥; ``sigma`` (k,)."""

    centers: np.ndarray | None
    failure: str | None
    n_hat: float
    sigma: np.ndarray | None
    mean: np.ndarray | None  # non-private coordinate means (internal)


def friendly_ord_tup_avg(
    ordered: np.ndarray, *, rho: float, delta: float, radii: np.ndarray, rng: np.random.Generator,
    ledger: Ledger, nhat_fraction: float = 0.1,
) -> OrdTupAvgOutcome:
    """FriendlyOrdTupAvg (Tsfadia et al. 2022, §5.2.3): dist_{r_1..r_k}-friendly tuple average.

    1. ρ₁ = f(1−δ)ρ drawn (fρ charged, Fact 2.4.4), ρ₂ = (1−f)ρ; f = 0.1 in the paper.
    2. n̂ = c − √(ln(1/δ)/ρ₁) − 1 + N(0, 1/(2ρ₁)); ⊥ if c = 0 or n̂ ≤ 0.
    3. â^j = Avg(D^j) + N(0, σ_j² I), σ_j = (2 r_j / n̂)·√(k/(2ρ₂)) for j = 1..k.

    The paper's step 4 writes σ_j = (2r_j/n)·√(k/(2ρ₂)) with the true n: a typo. The proof
    bounds the sensitivity 2r_j/n ≤ 2r_j/n̂ after conditioning on N̂ ≤ n, and using n would leak
    the core size; we use n̂ as FriendlyAvg does (§5.2.3; note §3.8b).

    Privacy
    -------
    dist_{r_1..r_k}-friendly (ρ, δ)-zCDP: each coordinate's mean gets ρ₂/k (composition).

    References
    ----------
    Tsfadia et al. 2022, §5.2.3 (FriendlyOrdTupAvg); note §3.8b (the n̂ correction).
    """
    c, k, _ = ordered.shape
    rho1_charge = nhat_fraction * rho
    rho1 = (1.0 - delta) * rho1_charge
    rho2 = rho - rho1_charge
    n_hat = gaussian(c - math.sqrt(math.log(1.0 / delta) / rho1) - 1.0, sensitivity=1.0, rho=rho1,
                     rng=rng, ledger=ledger, name="n̂ (FriendlyOrdTupAvg size under-estimate)",
                     charge=ZCDP(rho1_charge), note="drawn with (1−δ)ρ₁, charged ρ₁ (Fact 2.4.4)")
    ledger.record_event("N̂ ≤ n", delta, note="FriendlyOrdTupAvg conditions on n̂ ≤ n (§5.2.3)")
    mean = ordered.mean(axis=0) if c else None
    if c == 0 or n_hat <= 0:
        ledger.record("coordinate means (not drawn: ⊥)", "reserved", ZCDP(rho2),
                      note="FriendlyOrdTupAvg output ⊥; the means' budget is still accounted")
        return OrdTupAvgOutcome(None, "empty input" if c == 0 else NHAT_NONPOSITIVE, float(n_hat),
                                None, mean)
    centers = np.empty_like(mean)
    sigma = np.empty(k)
    for j in range(k):
        # n̂, not n: see the docstring (§5.2.3 typo; note §3.8b).
        sens = 2.0 * radii[j] / n_hat
        centers[j] = gaussian(mean[j], sensitivity=sens, rho=rho2 / k, rng=rng, ledger=ledger,
                              name=f"â^{j + 1} (coordinate mean {j + 1})",
                              note="σ_j = (2 r_j / n̂)·√(k/(2ρ₂))")
        sigma[j] = sens / math.sqrt(2.0 * rho2 / k)
    return OrdTupAvgOutcome(centers, None, float(n_hat), sigma, mean)


@dataclass(frozen=True)
class LloydOutcome:
    centers: np.ndarray
    sigma: np.ndarray  # nan where the cluster's FriendlyAvg output ⊥ (center kept)
    n_hat: np.ndarray
    labels: np.ndarray  # over the rows passed in
    counts: np.ndarray
    n_kept_previous: int


def noisy_lloyd_step(
    X: np.ndarray, Y: np.ndarray, *, rho: float, delta: float, r: float, rng: np.random.Generator,
    ledger: Ledger, n_public: float | None = None,
) -> LloydOutcome:
    """NoisyLloydStep (Tsfadia et al. 2022, §5.2.4) on rows already inside the Λ-ball.

    Partition the rows by their nearest private center y_i and release FriendlyAvg(D^i, ρ, δ, r)
    for each part. If a part's FriendlyAvg outputs ⊥, its previous (already private) center is
    kept: post-processing (note §8.2).

    Privacy
    -------
    (ρ, δ)-zCDP by parallel composition: one row lies in one part. Every part lies in the
    Λ-ball, so any two rows are dist_r-friendly for r ≥ Λ (0 is a common friend), which makes
    FriendlyAvg fully private here; the paper uses r = 2Λ, r = Λ halves the noise (note §3.8e).

    References
    ----------
    Tsfadia et al. 2022, §5.2.4 (NoisyLloydStep, formal version) and §3 (FriendlyAvg).
    """
    k = Y.shape[0]
    labels = nearest_center(X, Y)[0] if len(X) else np.zeros(0, dtype=np.int64)
    counts = np.bincount(labels, minlength=k)
    centers = Y.copy()
    sigma = np.full(k, np.nan)
    n_hat = np.full(k, np.nan)
    kept = 0
    order = np.argsort(labels, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    for i in range(k):
        part = X[order[bounds[i]:bounds[i + 1]]]
        node = ledger.child(f"cluster[{i}]", ZCDP(rho, delta))
        out = friendly_avg_core(part, rho=rho, delta=delta, r=r, rng=rng, ledger=node,
                                n_public=n_public)
        n_hat[i] = out.n_hat
        if out.estimate is None:
            kept += 1  # keep the previous private center (post-processing)
        else:
            centers[i] = out.estimate
            sigma[i] = out.sigma
    return LloydOutcome(centers, sigma, n_hat, labels, counts, kept)


# ----------------------------------------------------------------------------- pipeline


def _budget(rho: float, delta: float, split: FCSplit, *keys: str) -> ZCDP:
    return ZCDP(rho * sum(split.rho.get(k, 0.0) for k in keys),
                delta * sum(split.delta.get(k, 0.0) for k in keys))


def _reserve(ledger: Ledger, budget: ZCDP, why: str) -> None:
    """Account a sub-call that did not run: the guarantee covers every branch."""
    if budget.rho > 0 or budget.delta > 0:
        ledger.record(f"reserved ({why})", "reserved", budget,
                      note="not run on this branch; accounted because the guarantee covers both")


def _validate_private_inputs(
    X: Any, stage: TupleStage, rho: Any, delta: Any, radius: Any, r_min: Any, func: str,
) -> tuple[np.ndarray, float, float, float, float]:
    X = check_data(X, func, allow_empty=False)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    r_min = check_scalar(r_min, "r_min", func, low=0.0, low_open=True, high_open=True)
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
        The budget split (see :mod:`dpviz.clustering.presets`). "practical" is computed from
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
    gen, seed = check_rng(rng)
    n = X.shape[0]
    t, k = stage.n_pieces, stage.k
    root = Ledger("fc_clustering", ZCDP(rho, delta), unit="row")
    # Finding 4 (issue 10): the dataset size is a public input. A declared n costs nothing; without
    # one, a DP count (a declared share SIZE_FRACTION of ρ, row-level) stands in for it. The true n
    # never reaches a split, a noise scale, a grid depth or a released shape.
    size = resolve_size(n_declared, func, n_rows=n, rho=SIZE_FRACTION * rho, rng=gen)
    record_size(root, size)
    n_decl = size.n
    rho_run = rho - size.rho  # the rest of the budget runs the pipeline
    split = resolve_split(preset, fractions=fractions, t=t, k=k, rho=rho_run, delta=delta, r_min=r_min,
                          radius=radius, fallback=fallback, diam_beta=diam_beta,
                          radius_factor=radius_factor, lloyd_radius_factor=lloyd_radius_factor)
    params = dict(k=k, rho=rho, delta=delta, radius=radius, r_min=r_min, n_tuples=t, preset=preset,
                  split=split.as_dict(), fallback=fallback, n_declared=n_decl, size_source=size.source,
                  rho_size=size.rho, oracle=stage.oracle)
    trace = Trace()
    trace.add("pieces", released=False, piece_of_row=stage.piece_of_row, piece_sizes=stage.piece_sizes)
    trace.add("tuples", released=False, tuples=stage.tuples)
    trace.add("declared_size", released=True, n_declared=n_decl, source=size.source, rho=size.rho,
              sigma=size.sigma, note="public: declared by the caller, or a DP count from the budget")
    m = margins(split, t=t, k=k, rho=rho_run, delta=delta, r_min=r_min, radius=radius, base=DIAM_BASE)
    trace.add("feasibility", released=True, margins=m, fractions=dict(split.rho), preset=split.preset,
              delta_fractions=dict(split.delta),
              suggested_n_tuples=suggest_n_tuples(split, n=n_decl, k=k, rho=rho_run, delta=delta,
                                                  r_min=r_min, radius=radius),
              note="expected margins (noise sds) from public n, t, k, ρ, δ only")

    b_tuple = _budget(rho_run, delta, split, "match_core", "find_diam", "dist_core", "tuple_avg")
    b_match = _budget(rho_run, delta, split, "match_core")
    b_avg_ord = _budget(rho_run, delta, split, "find_diam", "dist_core", "tuple_avg")
    b_lloyd = _budget(rho_run, delta, split, "lloyd")
    b_fallback = _budget(rho_run, delta, split, "fallback")

    # ---- FC_kTupleClustering (unit: tuple) ---------------------------------------------
    # Every step runs on every branch, the empty core included (finding 3): which test emptied
    # the core is a non-private fact, so the released steps, the ledger and the one public
    # failure reason are the same whether the match core, the dist core or n̂ caused ⊥.
    tk = root.child("FC_kTupleClustering", b_tuple, unit="tuple")
    graph = match if match is not None else stage_match_graph(stage)
    l_match = tk.child("FriendlyCore(match_1/7)", b_match)
    f1 = zcdp_filter(graph.counts, rho=b_match.rho, delta=b_match.delta, rng=gen, ledger=l_match)
    trace.add("match_core", released=False, counts=graph.counts, scores=f1.scores,
              noisy_scores=f1.noisy_scores, threshold=f1.threshold, n_hat=f1.n_hat, keep=f1.keep,
              note="the keep mask is private (FriendlyCore); scores and counts are internal")
    l_avg = tk.child("FC_AvgOrdTup", b_avg_ord)
    core_index = np.flatnonzero(f1.keep)
    tuple_centers, internal_reason = _fc_avg_ord_tup(
        stage.tuples[core_index], core_index, split=split, rho=rho_run, delta=delta, r_min=r_min,
        radius=radius, rng=gen, ledger=l_avg, trace=trace)
    if internal_reason == "empty input":
        internal_reason = EMPTY_MATCH_CORE if core_index.size == 0 else EMPTY_DIST_CORE
    failure = FC_FAILED if tuple_centers is None else None
    trace.add("fc_outcome", released=False, reason=internal_reason,
              note="which test output ⊥ is NOT released: only '⊥' is (one public reason)")

    # ---- rows inside the Λ-ball (NoisyLloydStep step 1; the fallback uses the same rows) ---
    inside = np.einsum("ij,ij->i", X, X) <= radius * radius
    n_removed = int(n - inside.sum())
    Xin = X if n_removed == 0 else X[inside]  # no copy in the common case
    trace.add("removed_rows", released=False, n_removed=n_removed, inside=inside,
              note="rows outside the Λ-ball are removed, not clipped (a non-private count)")

    l_lloyd = root.child("NoisyLloydStep", b_lloyd, composition="parallel", unit="row")
    centers: np.ndarray | None = None
    if tuple_centers is not None:
        r_lloyd = split.lloyd_radius_factor * radius
        lo = noisy_lloyd_step(Xin, tuple_centers, rho=b_lloyd.rho, delta=b_lloyd.delta, r=r_lloyd,
                              rng=gen, ledger=l_lloyd, n_public=n_decl / k)
        labels = np.full(n, -1, dtype=np.int64)
        labels[inside] = lo.labels
        trace.add("lloyd_partition", released=False, labels=labels, counts=lo.counts,
                  n_removed=n_removed, note=f"{n_removed} row(s) outside the Λ-ball removed")
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
        fo = fallback_centers(Xin, k, rho=b_fb.rho, radius=radius, n_declared=n_decl, rng=gen,
                              ledger=l_fb)
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

    tot = root.total()
    if not (math.isclose(tot.rho, rho, rel_tol=1e-9) and math.isclose(tot.delta, delta, rel_tol=1e-9)):
        raise RuntimeError(f"fc_clustering ledger totals {tot}, not (ρ={rho}, δ={delta}): a bug.")
    root.check()
    return Result(centers, None if centers is not None else failure, root, trace.freeze(), params,
                  seed, simulation=is_simulation(rng))


def _fc_avg_ord_tup(
    core: np.ndarray, core_index: np.ndarray, *, split: FCSplit, rho: float, delta: float,
    r_min: float, radius: float, rng: np.random.Generator, ledger: Ledger, trace: Trace,
) -> tuple[np.ndarray | None, str | None]:
    """FriendlyReorder then FC_AvgOrdTup (§5.2.2–5.2.3) on the match core; (centers, reason).

    Runs every step whatever the core's size (c = 0 included: CheckDiam, the filter and
    FriendlyOrdTupAvg handle it), so the ledger and the released steps have one shape. The
    reason is internal ("empty input" or n̂ ≤ 0); callers release only ⊥.
    """
    k = core.shape[1]
    ro = friendly_reorder(core, rng=rng)
    trace.add("reorder", released=False, core_index=core_index,
              reference_index=int(core_index[ro.reference_index]) if core_index.size else None,
              reference=core[ro.reference_index] if core_index.size else None,
              permutation=ro.permutation, ordered=ro.ordered, n_hungarian=ro.n_hungarian)
    # FC_AvgOrdTup step 2: one FindDiam per coordinate, ρ_diam/k each, over [r_min, 2Λ].
    rho_fd = rho * split.rho["find_diam"] / k
    radii = np.empty(k)
    probes = []
    for j in range(k):
        node = ledger.child(f"FindDiam[{j + 1}]", ZCDP(rho_fd))
        out = find_diam_core(ro.ordered[:, j, :], rho=rho_fd, beta=split.diam_beta, r_min=r_min,
                             r_max=2.0 * radius, base=DIAM_BASE, rng=rng, ledger=node)
        radii[j] = out.r
        probes.append([p.to_dict() for p in out.probes])
    # Post-processing of the released radii: FindDiam stops at the edge of the coordinate
    # cloud, where the product predicate would still fail for the tuples at the rim.
    radii_used = np.minimum(split.radius_factor * radii, 2.0 * radius)
    trace.add("diameters", released=True, radii=radii, radii_used=radii_used, probes=probes,
              note="radii are private; probes' a and threshold are internal")
    # Step 3: one FriendlyCore for all k coordinates.
    b_dist = ZCDP(rho * split.rho["dist_core"], delta * split.delta["dist_core"])
    l_dist = ledger.child("FriendlyCore(dist_r1..rk)", b_dist)
    counts = ordered_dist_counts(ro.ordered, radii_used) if len(ro.ordered) else np.zeros(0, np.int64)
    f2 = zcdp_filter(counts, rho=b_dist.rho, delta=b_dist.delta, rng=rng, ledger=l_dist)
    trace.add("dist_core", released=False, counts=counts, scores=f2.scores,
              noisy_scores=f2.noisy_scores, threshold=f2.threshold, n_hat=f2.n_hat, keep=f2.keep)
    b_ta = ZCDP(rho * split.rho["tuple_avg"], delta * split.delta["tuple_avg"])
    l_ta = ledger.child("FriendlyOrdTupAvg", b_ta)
    kept = ro.ordered[f2.keep]
    # Step 4 (c = 0 draws n̂ and outputs ⊥, with the means' budget reserved).
    avg = friendly_ord_tup_avg(kept, rho=b_ta.rho, delta=b_ta.delta, radii=radii_used, rng=rng,
                               ledger=l_ta, nhat_fraction=split.nhat_fraction)
    trace.add("tuple_averages", released=True, centers=avg.centers, sigma=avg.sigma, n_hat=avg.n_hat)
    trace.add("tuple_averages_nonprivate", released=False, centers=avg.mean)
    return avg.centers, avg.failure


def fc_tuple_stage(
    X: np.ndarray,
    k: int,
    *,
    n_tuples: int = 200,
    radius: float,
    oracle: str = "kmeans++",
    rng: RngLike = None,
    method: str = "auto",
    n_declared: int | None = None,
) -> TupleStage:
    """The non-private stage of FC_Clustering, on the rows inside the Λ-ball only.

    The one tuple-stage entry point for every caller (library, app, sweeps, benches).
    ``method="auto"`` picks the implementation from the *declared* size (``n_declared``·d; with
    no declared size, the data-independent ``AUTO_WITHOUT_SIZE``), never from the true n: the two
    implementations draw different tuples, so the switch would shape the release.

    Rows with ||x|| > Λ are dropped before the pieces are drawn (NoisyLloydStep drops them too):
    one far row would otherwise take a center of its piece's tuple and spoil that tuple's
    matches. Dropping is a per-row rule, so one row still changes at most one piece. The
    returned stage indexes all rows of X; ``piece_of_row`` is −1 for a dropped row. ρ-independent:
    cache it and call :func:`fc_private_stage` with the same X.

    Privacy
    -------
    NON-PRIVATE (internal tuples); see :func:`dpviz.clustering.tuples.compute_tuples`.

    References
    ----------
    Tsfadia et al. 2022, §5.2.5 (FC_Clustering steps 1–4) and §5.2.4 (removal of rows outside Λ).
    """
    func = "fc_tuple_stage"
    X = check_data(X, func, allow_empty=False)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    if method == "auto":
        method = AUTO_WITHOUT_SIZE if n_declared is None else resolve_method(
            "auto", int(n_declared), X.shape[1], oracle, n_tuples=n_tuples)
    inside = np.einsum("ij,ij->i", X, X) <= radius * radius
    if inside.all():
        return compute_tuples(X, k, n_tuples=n_tuples, oracle=oracle, rng=rng, method=method)
    st = compute_tuples(X[inside], k, n_tuples=n_tuples, oracle=oracle, rng=rng, method=method)
    piece = np.full(X.shape[0], -1, dtype=np.int64)
    piece[inside] = st.piece_of_row
    return TupleStage(tuples=st.tuples, piece_of_row=piece, piece_sizes=st.piece_sizes, k=st.k,
                      n_pieces=st.n_pieces, oracle=st.oracle, method=st.method, seconds=st.seconds,
                      valid=st.valid, seed=st.seed)


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
    k = check_scalar(k, "k", func, low=1, high_open=True, integer=True)
    rho = check_rho(rho, func)
    check_delta(delta, func)
    check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    check_scalar(r_min, "r_min", func, low=0.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng)
    t0 = time.perf_counter()
    # The size comes first: the tuple stage's method="auto" reads it (finding 4, issue 10).
    size = resolve_size(n_declared, func, n_rows=X.shape[0], rho=SIZE_FRACTION * rho, rng=gen)
    stage = fc_tuple_stage(X, k, n_tuples=n_tuples, radius=radius, oracle=oracle, rng=gen,
                           method=method, n_declared=size.n)
    res = fc_private_stage(X, stage, rho=rho, delta=delta, radius=radius, r_min=r_min, preset=preset,
                           fractions=fractions, fallback=fallback, rng=gen, n_declared=size,
                           **options)
    params = dict(res.params) | dict(method=stage.method, seconds=time.perf_counter() - t0)
    return Result(res.centers, res.failure, res.ledger, res.trace, params, seed,
                  simulation=is_simulation(rng))
