"""FriendlyCore's steps on k-tuples: FC_kTupleClustering, FC_AvgOrdTup and NoisyLloydStep.

The algorithms of Tsfadia et al. 2022, §5.2, each a function of its inputs, its budget, a
Generator and a ledger node (no pipeline, no caching, no validation of user input):

* :func:`fc_k_tuple_clustering` — **FC_kTupleClustering** (§5.2.1): FriendlyCore(match_1/7) on
  the t tuples, then FC_AvgOrdTup on the core;
* :func:`fc_avg_ord_tup` — **FC_AvgOrdTup** (§5.2.3): FriendlyReorder, one FindDiam per
  coordinate, FriendlyCore(dist_r1..rk), FriendlyOrdTupAvg;
* :func:`friendly_reorder` (§5.2.2), :func:`friendly_ord_tup_avg` (§5.2.3);
* :func:`noisy_lloyd_step` / :func:`noisy_lloyd_from_sums` — **NoisyLloydStep** (§5.2.4), in
  memory or from per-cluster sums (the streamed path).

The pipeline that runs them (budget, size, branches, trace) is
:mod:`dpviz.clustering.friendlycore.pipeline`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpviz.averaging.diam_levels import DiamLevels
from dpviz.averaging.diameter import find_diam_core
from dpviz.averaging.friendly_avg import friendly_avg_from_sums
from dpviz.clustering.friendlycore.budget import FCBudget
from dpviz.core.filters import zcdp_filter
from dpviz.core.tuple_predicates import MatchGraph, ord_permutation, ordered_dist_counts
from dpviz.geometry import nearest_center
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_draw, size_underestimate
from dpviz.result import Trace

#: FindDiam's grid ratio b (§5.1.2, b = 1.5 in the paper).
DIAM_BASE = 1.5

#: The one public failure reason of FC_kTupleClustering (Result.failure, the fallback step's
#: ``reason``). Which test output ⊥ is internal: it is a non-private function of the data.
FC_FAILED = "FC_kTupleClustering output ⊥"

# Internal reasons (the internal ``fc_outcome`` step only; never released).
EMPTY_MATCH_CORE = "empty match core (FriendlyCore(match_1/7) kept no tuple)"
EMPTY_DIST_CORE = "empty dist core (FriendlyCore(dist_r1..rk) kept no tuple)"
NHAT_NONPOSITIVE = "n̂ ≤ 0 in FriendlyOrdTupAvg (too few tuples in the dist core)"


# ----------------------------------------------------------------------------- FC_kTupleClustering


def fc_k_tuple_clustering(
    tuples: np.ndarray, graph: MatchGraph, budget: FCBudget, *, r_min: float, radius: float,
    rng: np.random.Generator, ledger: Ledger, trace: Trace, levels: DiamLevels | None = None,
) -> tuple[np.ndarray | None, str | None]:
    """FC_kTupleClustering (Tsfadia et al. 2022, §5.2.1): k private centers from t k-tuples.

    1. FriendlyCore(match_1/7) with zCDPFilter on the tuples' match graph (``budget.parts
       ["match_core"]``) keeps the core;
    2. FC_AvgOrdTup (:func:`fc_avg_ord_tup`) on the core (``budget.avg_ord``).

    Opens the ``FC_kTupleClustering`` node (unit "tuple") under ``ledger``. Every step runs on
    every branch, the empty core included (finding 3): which test emptied the core is a
    non-private fact, so the released steps, the ledger and the one public failure reason are the
    same whether the match core, the dist core or n̂ caused ⊥. Returns (centers or None, the
    internal reason), the reason being EMPTY_MATCH_CORE, EMPTY_DIST_CORE or NHAT_NONPOSITIVE.

    Privacy
    -------
    (ρ, δ)-zCDP for add/remove of one *tuple* (Thm 5.3) with (ρ, δ) = ``budget.tuple_level``.
    ``levels`` (FindDiam's pair counts of ``tuples``, cached per stage) changes only where the
    counts are computed, never their values.
    """
    match = budget.parts["match_core"]
    tk = ledger.child("FC_kTupleClustering", budget.tuple_level, unit="tuple")
    l_match = tk.child("FriendlyCore(match_1/7)", match)
    # Known size (budget.split.known_size): t is public and bounds every tuple database of the
    # row-level statement, so the filter runs with n̄ = t (dpviz.core.filters.zcdp_filter).
    n_bound = tuples.shape[0] if budget.split.known_size else None
    f1 = zcdp_filter(graph.counts, rho=match.rho, delta=match.delta, rng=rng, ledger=l_match,
                     n_bound=n_bound)
    trace.add("match_core", released=False, counts=graph.counts, scores=f1.scores,
              noisy_scores=f1.noisy_scores, threshold=f1.threshold, n_hat=f1.n_hat, keep=f1.keep,
              note="the keep mask is private (FriendlyCore); scores and counts are internal")
    l_avg = tk.child("FC_AvgOrdTup", budget.avg_ord)
    core_index = np.flatnonzero(f1.keep)
    centers, reason = fc_avg_ord_tup(tuples[core_index], core_index, budget, r_min=r_min,
                                     radius=radius, rng=rng, ledger=l_avg, trace=trace, n_bound=n_bound,
                                     levels=levels)
    if reason == "empty input":
        reason = EMPTY_MATCH_CORE if core_index.size == 0 else EMPTY_DIST_CORE
    return centers, reason


def fc_avg_ord_tup(
    core: np.ndarray, core_index: np.ndarray, budget: FCBudget, *, r_min: float, radius: float,
    rng: np.random.Generator, ledger: Ledger, trace: Trace, n_bound: int | None = None,
    levels: DiamLevels | None = None,
) -> tuple[np.ndarray | None, str | None]:
    """FC_AvgOrdTup (Tsfadia et al. 2022, §5.2.3) on the match core; (centers, reason).

    ``levels``: the stage's precomputed FindDiam pair counts (:mod:`dpviz.averaging.diam_levels`,
    indexed by ``core_index`` into the stage's tuples); the same integers as counting here, so
    the same release. None (or a core it does not cover) counts directly.

    ``n_bound``: the public bound on the core's size (t) for the known-size dist-core filter
    (``budget.split.known_size``; None runs the paper's n̂ estimate).

    1. FriendlyReorder (:func:`friendly_reorder`);
    2. one FindDiam per coordinate j, ``budget.find_diam_per_coordinate(k)`` each, over
       [r_min, 2Λ]; the radii are multiplied by ``split.radius_factor`` (post-processing);
    3. FriendlyCore(dist_r1..rk) (``budget.parts["dist_core"]``);
    4. FriendlyOrdTupAvg (:func:`friendly_ord_tup_avg`, ``budget.parts["tuple_avg"]``).

    Runs every step whatever the core's size (c = 0 included: CheckDiam, the filter and
    FriendlyOrdTupAvg handle it), so the ledger and the released steps have one shape. The
    reason is internal ("empty input" or n̂ ≤ 0); callers release only ⊥.

    Privacy
    -------
    match_1/7-friendly (ρ, δ)-zCDP on tuples (Claim 5.2.2 with composition), (ρ, δ) =
    ``budget.avg_ord``.
    """
    split = budget.split
    k = core.shape[1]
    ro = friendly_reorder(core, rng=rng)
    trace.add("reorder", released=False, core_index=core_index,
              reference_index=int(core_index[ro.reference_index]) if core_index.size else None,
              reference=core[ro.reference_index] if core_index.size else None,
              permutation=ro.permutation, ordered=ro.ordered, n_hungarian=ro.n_hungarian)
    # Step 2: one FindDiam per coordinate, ρ_diam/k each, over [r_min, 2Λ].
    rho_fd = budget.find_diam_per_coordinate(k)
    totals = None if levels is None else levels.totals(core_index, ro.ordered, ro.permutation,
                                                       grid=(r_min, 2.0 * radius, DIAM_BASE))
    radii = np.empty(k)
    probes = []
    for j in range(k):
        node = ledger.child(f"FindDiam[{j + 1}]", ZCDP(rho_fd))
        out = find_diam_core(ro.ordered[:, j, :], rho=rho_fd, beta=split.diam_beta, r_min=r_min,
                             r_max=2.0 * radius, base=DIAM_BASE, rng=rng, ledger=node,
                             level_totals=None if totals is None else totals[j])
        radii[j] = out.r
        probes.append([p.to_dict() for p in out.probes])
    # Post-processing of the released radii: FindDiam stops at the edge of the coordinate
    # cloud, where the product predicate would still fail for the tuples at the rim.
    radii_used = np.minimum(split.radius_factor * radii, 2.0 * radius)
    trace.add("diameters", released=True, radii=radii, radii_used=radii_used, probes=probes,
              note="radii are private; probes' a and threshold are internal")
    # Step 3: one FriendlyCore for all k coordinates.
    b_dist = budget.parts["dist_core"]
    l_dist = ledger.child("FriendlyCore(dist_r1..rk)", b_dist)
    counts = None if levels is None else levels.dist_counts(core_index, ro.ordered, ro.permutation,
                                                            radii_used)
    if counts is None:
        counts = ordered_dist_counts(ro.ordered, radii_used) if len(ro.ordered) else np.zeros(0, np.int64)
    f2 = zcdp_filter(counts, rho=b_dist.rho, delta=b_dist.delta, rng=rng, ledger=l_dist,
                     n_bound=n_bound)
    trace.add("dist_core", released=False, counts=counts, scores=f2.scores,
              noisy_scores=f2.noisy_scores, threshold=f2.threshold, n_hat=f2.n_hat, keep=f2.keep)
    b_ta = budget.parts["tuple_avg"]
    l_ta = ledger.child("FriendlyOrdTupAvg", b_ta)
    # Step 4 (c = 0 draws n̂ and outputs ⊥, with the means' budget reserved).
    avg = friendly_ord_tup_avg(ro.ordered[f2.keep], rho=b_ta.rho, delta=b_ta.delta, radii=radii_used,
                               rng=rng, ledger=l_ta, nhat_fraction=split.nhat_fraction)
    trace.add("tuple_averages", released=True, centers=avg.centers, sigma=avg.sigma, n_hat=avg.n_hat)
    trace.add("tuple_averages_nonprivate", released=False, centers=avg.mean)
    return avg.centers, avg.failure


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
    rho2 = rho - rho1_charge
    n_hat = size_underestimate(c, charge=rho1_charge, delta=delta, rng=rng, ledger=ledger,
                               name="n̂ (FriendlyOrdTupAvg size under-estimate)",
                               event="FriendlyOrdTupAvg conditions on n̂ ≤ n (§5.2.3)",
                               note="drawn with (1−δ)ρ₁, charged ρ₁ (Fact 2.4.4)")
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
        centers[j], sigma[j] = gaussian_draw(mean[j], sensitivity=2.0 * radii[j] / n_hat, rho=rho2 / k,
                                             rng=rng, ledger=ledger,
                                             name=f"â^{j + 1} (coordinate mean {j + 1})",
                                             note="σ_j = (2 r_j / n̂)·√(k/(2ρ₂))")
    return OrdTupAvgOutcome(centers, None, float(n_hat), sigma, mean)


@dataclass(frozen=True)
class LloydOutcome:
    """NoisyLloydStep's output: the private ``centers`` (k, d), per-cluster ``sigma`` (nan where the
    cluster's FriendlyAvg output ⊥ and its previous center was kept) and ``n_hat``; the internal
    ``counts`` and ``labels`` (the partition's labels as the caller indexes its rows: over the rows
    passed to :func:`noisy_lloyd_step`; over all rows, −1 outside the Λ-ball, in the pipeline; None
    when the rows were streamed)."""

    centers: np.ndarray
    sigma: np.ndarray
    n_hat: np.ndarray
    labels: np.ndarray | None
    counts: np.ndarray
    n_kept_previous: int


def partition_sums(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NoisyLloydStep's partition of rows X by nearest center of Y: (labels, counts, sums (k, d)).

    Each part's sum is ``part.sum(axis=0)`` over its rows in their order, exactly what
    FriendlyAvg computes from the rows themselves (internal values).
    """
    k = Y.shape[0]
    labels = nearest_center(X, Y)[0] if len(X) else np.zeros(0, dtype=np.int64)
    counts = np.bincount(labels, minlength=k)
    sums = np.zeros((k, X.shape[1]))
    order = np.argsort(labels, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    for i in np.flatnonzero(counts):  # loop over clusters, not rows
        sums[i] = np.asarray(X[order[bounds[i]:bounds[i + 1]]], dtype=np.float64).sum(axis=0)
    return labels, counts, sums


def noisy_lloyd_from_sums(
    counts: np.ndarray, sums: np.ndarray, Y: np.ndarray, *, rho: float, delta: float, r: float,
    rng: np.random.Generator, ledger: Ledger, n_public: float | None = None,
    labels: np.ndarray | None = None,
) -> LloydOutcome:
    """NoisyLloydStep (Tsfadia et al. 2022, §5.2.4) from each part's count and sum.

    FriendlyAvg(D^i, ρ, δ, r) per part i from its sufficient statistics
    (:func:`~dpviz.averaging.friendly_avg.friendly_avg_from_sums`); a part whose FriendlyAvg
    outputs ⊥ keeps its previous (already private) center: post-processing (note §8.2). The
    in-memory step (:func:`noisy_lloyd_step`) and the streamed one (sums over chunks,
    ``dpviz.large.fc_stream``) both end here.

    Privacy
    -------
    (ρ, δ)-zCDP by parallel composition: one row lies in one part. Every part lies in the
    Λ-ball, so any two rows are dist_r-friendly for r ≥ Λ (0 is a common friend), which makes
    FriendlyAvg fully private here; the paper uses r = 2Λ, r = Λ halves the noise (note §3.8e).
    """
    k = Y.shape[0]
    centers, sigma, n_hat = Y.copy(), np.full(k, np.nan), np.full(k, np.nan)
    kept = 0
    for i in range(k):
        node = ledger.child(f"cluster[{i}]", ZCDP(rho, delta))
        out = friendly_avg_from_sums(int(counts[i]), sums[i], rho=rho, delta=delta, r=r, rng=rng,
                                     ledger=node, n_public=n_public)
        n_hat[i] = out.n_hat
        if out.estimate is None:
            kept += 1  # keep the previous private center (post-processing)
        else:
            centers[i], sigma[i] = out.estimate, out.sigma
    return LloydOutcome(centers, sigma, n_hat, labels, np.asarray(counts), kept)


def noisy_lloyd_step(
    X: np.ndarray, Y: np.ndarray, *, rho: float, delta: float, r: float, rng: np.random.Generator,
    ledger: Ledger, n_public: float | None = None,
) -> LloydOutcome:
    """NoisyLloydStep (Tsfadia et al. 2022, §5.2.4) on rows already inside the Λ-ball.

    Partition the rows by their nearest private center y_i (:func:`partition_sums`) and release
    FriendlyAvg(D^i, ρ, δ, r) for each part (:func:`noisy_lloyd_from_sums`).

    Privacy
    -------
    (ρ, δ)-zCDP by parallel composition; see :func:`noisy_lloyd_from_sums`.

    References
    ----------
    Tsfadia et al. 2022, §5.2.4 (NoisyLloydStep, formal version) and §3 (FriendlyAvg).
    """
    labels, counts, sums = partition_sums(X, Y)
    return noisy_lloyd_from_sums(counts, sums, Y, rho=rho, delta=delta, r=r, rng=rng, ledger=ledger,
                                 n_public=n_public, labels=labels)
