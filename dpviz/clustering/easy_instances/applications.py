"""Applications of private k-tuple clustering: PrivatekMeans (GenCenters + one private Lloyd step)
and PrivateGMM (GenEmpiricalMeans + a per-cluster private mean, covariance and weight).

Both reuse the sample-and-aggregate stage of :mod:`dpviz.clustering.tuples` (rows to t pieces
independently at random, one k-means++ per piece): one row changes exactly one tuple [OURS: the
note's disjoint variant, §4.6]. Rows are first clipped to B(0, Λ) (a per-row map).

References
----------
Cohen et al. 2021, §5 (PrivatekMeans, GenCenters, Thm 5.1–5.4) and §6 (PrivateGMM,
GenEmpiricalMeans, Thm 6.1–6.2); note §4.6–4.7.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpviz._validation import RngLike, check_data, check_rng, check_scalar, is_simulation
from dpviz.clustering.tuples import TupleStage, tuple_stage
from dpviz.data.bounds import clip_to_ball
from dpviz.geometry import nearest_center
from dpviz.privacy.accounting import compose_dp, dp_total, group_privacy_dp
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_sigma_dp, gumbel_argmax
from dpviz.result import Result, Trace

from .aggregators import AVERAGES_RELEASED, NOISY_RELEASED, averages_into, noisy_centers_into
from .plan import (
    TUPLE_STEPS_PER_ROW,
    NoisyCentersSplit,
    averages_plan,
    noisy_centers_plan,
    reserve,
)

Aggregator = Literal["noisy_centers", "averages"]
AGGREGATORS: tuple[str, ...] = ("noisy_centers", "averages")

#: Default γ per aggregator: NoisyCenters ~1e-3 (note §4.5 table, κ ≈ 1.7 at k = 2) [D/OURS];
#: Averages 0.1 (< 1/6 for Prop 3.1a) [OURS].
DEFAULT_GAMMA = {"noisy_centers": 1e-3, "averages": 0.1}


# ----------------------------------------------------------------------------- accounting


def kmeans_guarantee(budget: ApproxDP, lloyd_fraction: float) -> ApproxDP:
    """Row-level (ε, δ) of PrivatekMeans at its own budget: the tuple stage ((1−f)·budget, one tuple
    replaced per row, :data:`TUPLE_STEPS_PER_ROW`) composed with the Lloyd step (f·budget, each row
    in one cluster: parallel) [S-skel Thm 5.1; row relation OURS]."""
    f = lloyd_fraction
    tup = group_privacy_dp(ApproxDP((1 - f) * budget.eps, (1 - f) * budget.delta), TUPLE_STEPS_PER_ROW)
    return compose_dp(tup, ApproxDP(f * budget.eps, f * budget.delta))


def gmm_guarantee(budget: ApproxDP) -> ApproxDP:
    """Row-level (ε, δ) of PrivateGMM: a row is in S¹ (changes one tuple) or in S² (changes one
    S²_i), so the larger of the two stages' guarantees (Thm 6.1 [S-skel/D])."""
    tup = group_privacy_dp(budget, TUPLE_STEPS_PER_ROW)
    return ApproxDP(max(tup.eps, budget.eps), max(tup.delta, budget.delta))


def calibrate_scale(guarantee: Any, epsilon: float, delta: float) -> ApproxDP:
    """The largest s·(ε, δ) whose guarantee is within the row-level target (bisection on s);
    exactly (ε, δ) when the guarantee is the identity."""
    target = ApproxDP(epsilon, delta)
    g = guarantee(target)
    if g.eps <= epsilon * (1 + 1e-12) and g.delta <= delta * (1 + 1e-12):
        return target
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        g = guarantee(ApproxDP(mid * epsilon, mid * delta))
        if g.eps <= epsilon and g.delta <= delta:
            lo = mid
        else:
            hi = mid
    return ApproxDP(lo * epsilon, lo * delta)


# ----------------------------------------------------------------------------- tuple stage


def easy_tuple_stage(X: np.ndarray, k: int, *, n_tuples: int, radius: float, oracle: str = "kmeans++",
                     rng: RngLike = None, method: str = "auto", n_declared: int | None = None) -> TupleStage:
    """GenCenters, disjoint variant [OURS]: clip rows to B(0, Λ), then one k-means++ per random piece.

    The sample-and-aggregate entry point :func:`dpviz.clustering.tuples.tuple_stage` with
    ``outside="clip"``; ``method="auto"`` reads the declared size (or, without one, a fixed
    choice), never the rows' count.

    Privacy: NON-PRIVATE (internal tuples); one row changes one tuple.
    """
    X = check_data(X, "easy_tuple_stage", allow_empty=False)
    return tuple_stage(X, k, n_tuples=n_tuples, radius=radius, oracle=oracle, rng=rng, method=method,
                       n_declared=n_declared, outside="clip")


@dataclass(frozen=True)
class _Aggregated:
    centers: np.ndarray | None
    failure: str | None


def _aggregate(stage: TupleStage, *, aggregator: str, budget: ApproxDP, beta: float, gamma: float,
               radius: float, r_min: float, rng: np.random.Generator, ledger: Ledger,
               trace: Trace, split: NoisyCentersSplit | None = None) -> _Aggregated:
    T = np.asarray(stage.tuples)
    t, k, d = T.shape
    title = "PrivatekNoisyCenters" if aggregator == "noisy_centers" else "PrivatekAverages"
    node = ledger.child(f"kTupleClustering: {title}",
                        unit="tuple", note=f"own budget {budget}, unit = one tuple (replace-one, t = {t})")
    if aggregator == "noisy_centers":
        plan = noisy_centers_plan(t, k, eps=budget.eps, delta=budget.delta, beta=beta, gamma=gamma,
                                  split=split)
        c, f = noisy_centers_into(T, stage.valid, plan, gamma, rng, node, trace)
    else:
        plan = averages_plan(t, k, d, eps=budget.eps, delta=budget.delta, beta=beta, gamma=gamma,
                             radius=radius, r_min=r_min)
        c, f = averages_into(T, stage.valid, plan, rng, node, trace)
    return _Aggregated(c, f)


def _check_common(func: str, k: int, eps: float, delta: float, radius: float, beta: float,
                  aggregator: str, gamma: float | None, r_min: float | None) -> tuple[float, float]:
    check_scalar(k, "k", func, low=1, high_open=True, integer=True)
    check_scalar(eps, "eps", func, low=0.0, low_open=True, high_open=True)
    check_scalar(delta, "delta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    check_scalar(beta, "beta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    if aggregator not in AGGREGATORS:
        raise ValueError(f"The 'aggregator' parameter of {func} must be one of {AGGREGATORS}. "
                         f"Got {aggregator!r}.")
    gamma = DEFAULT_GAMMA[aggregator] if gamma is None else gamma
    high = 0.5 if aggregator == "noisy_centers" else 1.0 / 6.0
    gamma = check_scalar(gamma, "gamma", func, low=0.0, high=high, low_open=True, high_open=True)
    r_min = radius / 1000.0 if r_min is None else r_min  # Λ/r_min = 10³ (note §6) [OURS]
    r_min = check_scalar(r_min, "r_min", func, low=0.0, high=2.0 * radius, low_open=True)
    return gamma, r_min


# ----------------------------------------------------------------------------- k-means


LLOYD_RELEASED = {"lloyd": ("centers", "sigma", "n_hat")}


def private_lloyd_step(X: np.ndarray, centers: np.ndarray, *, budget: ApproxDP, radius: float,
                       rng: np.random.Generator, ledger: Ledger) -> dict[str, np.ndarray]:
    """One private Lloyd step (PrivatekMeans step 3, G = noisy sum / noisy count) [S-skel; G OURS].

    S_i = rows nearest to ĉ_i; n̂_i = |S_i| + Lap(2/ε_G); Σ_{S_i} x + N(0, σ²I) with Δ₂ = Λ at
    (ε_G/2, δ_G); â_i = sum/max(n̂_i, 1), projected into B(0, Λ). One row is in one S_i, so the k
    clusters compose in parallel (add/remove of a row).
    """
    k, d = centers.shape
    labels, _ = nearest_center(X, centers)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=k) for j in range(d)], axis=1)
    node = ledger.child("private Lloyd step", composition="parallel", unit="row",
                        note="each row is in one cluster: parallel composition over the k clusters")
    e, dl = budget.eps, budget.delta
    sigma = gaussian_sigma_dp(radius, e / 2.0, dl)
    n_hat = counts + rng.laplace(0.0, 2.0 / e, size=k)
    noisy_sums = sums + rng.normal(0.0, sigma, size=(k, d))
    for i in range(k):
        c = node.child(f"cluster {i + 1}")
        c.record("n̂_i = |S_i| + Lap(2/ε_G)", "laplace", ApproxDP(e / 2.0, 0.0), sensitivity=1.0,
                 noise_scale=2.0 / e)
        c.record("Σ_{S_i} x + N(0, σ²I)", "gaussian", ApproxDP(e / 2.0, dl), sensitivity=radius,
                 noise_scale=sigma)
    out = noisy_sums / np.maximum(n_hat, 1.0)[:, None]
    norms = np.linalg.norm(out, axis=1)
    out *= np.minimum(1.0, radius / np.maximum(norms, 1e-300))[:, None]
    mean = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1.0)[:, None], np.nan)
    return dict(centers=out, sigma=np.full(k, sigma), n_hat=n_hat, labels=labels, counts=counts, mean=mean)


def private_k_means(
    X: np.ndarray, k: int, *, eps: float, delta: float, radius: float, n_tuples: int = 1000,
    aggregator: Aggregator = "noisy_centers", gamma: float | None = None, beta: float = 0.05,
    r_min: float | None = None, lloyd_fraction: float = 0.25, oracle: str = "kmeans++",
    rng: RngLike = None, stage: TupleStage | None = None, method: str = "auto",
) -> Result:
    """PrivatekMeans: GenCenters (t k-means++ tuples), a private k-tuple clustering, one private
    Lloyd step on all rows.

    Parameters
    ----------
    X : (n, d) array · k : int · eps, delta : the algorithm's own (ε, δ) (row level, see Privacy)
    radius : Λ, public bound on row norms (rows are clipped to it)
    n_tuples : t, number of pieces/tuples (public; must reach the aggregator's n_min)
    aggregator : "noisy_centers" (practical) or "averages" (theory, needs millions of tuples)
    gamma : ball scale (default 1e-3 / 0.1 per aggregator) · beta : confidence
    r_min : interior-point resolution for "averages" (default Λ/1000) [OURS]
    lloyd_fraction : share f of (ε, δ) for the Lloyd step [OURS 0.25]
    oracle : tuple oracle · rng · stage : a cached :func:`easy_tuple_stage` (same X, k, t, Λ)
    method : tuple-stage implementation

    Returns
    -------
    Result: ``centers`` (k, d) or None with ``failure`` (infeasible t, test Failure, no passing
    tuple). The trace has the same released steps (and keys) on every branch.

    Privacy
    -------
    Row level (add/remove one row): the tuple stage gets (1−f)(ε, δ) for replacing one tuple
    (one row changes one tuple, t public), the Lloyd step f(ε, δ); basic composition gives (ε, δ)
    (:func:`kmeans_guarantee`). The ledger totals exactly (ε, δ).

    References
    ----------
    Cohen et al. 2021, §5 (Thm 5.1, disjoint variant); note §4.6.
    """
    func = "private_k_means"
    X = check_data(X, func, allow_empty=False)
    gamma, r_min = _check_common(func, k, eps, delta, radius, beta, aggregator, gamma, r_min)
    f = check_scalar(lloyd_fraction, "lloyd_fraction", func, low=0.0, high=1.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "algorithm:easy_instances")
    t_start = time.perf_counter()
    if stage is None:
        stage = easy_tuple_stage(X, k, n_tuples=n_tuples, radius=radius, oracle=oracle, rng=gen,
                                 method=method)
    res = kmeans_private_stage(X, stage, eps=eps, delta=delta, radius=radius, aggregator=aggregator,
                               gamma=gamma, beta=beta, r_min=r_min, lloyd_fraction=f, rng=gen)
    params = dict(res.params) | dict(oracle=stage.oracle, method=stage.method,
                                     seconds=time.perf_counter() - t_start)
    return Result(res.centers, res.failure, res.ledger, res.trace, params, seed,
                  simulation=is_simulation(rng))


def kmeans_private_stage(
    X: np.ndarray, stage: TupleStage, *, eps: float, delta: float, radius: float,
    aggregator: str = "noisy_centers", gamma: float | None = None, beta: float = 0.05,
    r_min: float | None = None, lloyd_fraction: float = 0.25, rng: RngLike = None,
    split: NoisyCentersSplit | None = None,
) -> Result:
    """The private part of :func:`private_k_means` on a cached tuple stage (see there); ``split``
    is NoisyCenters' budget split (default :class:`~.plan.NoisyCentersSplit`)."""
    func = "kmeans_private_stage"
    X = check_data(X, func, allow_empty=False)
    k = stage.k
    gamma, r_min = _check_common(func, k, eps, delta, radius, beta, aggregator, gamma, r_min)
    gen, seed = check_rng(rng, "algorithm:easy_instances")
    t_start = time.perf_counter()
    f = lloyd_fraction
    b_tuple = ApproxDP((1 - f) * eps, (1 - f) * delta)
    b_lloyd = ApproxDP(f * eps, f * delta)
    root = Ledger("PrivatekMeans", unit="row")
    trace = Trace()
    trace.add("tuples", released=False, tuples=stage.tuples, valid=stage.valid, piece_sizes=stage.piece_sizes,
              note="GenCenters: one k-means++ per random piece (non-private)")
    agg = _aggregate(stage, aggregator=aggregator, budget=b_tuple, beta=beta, gamma=gamma, radius=radius,
                     r_min=r_min, rng=gen, ledger=root, trace=trace, split=split)
    if agg.centers is not None:
        inside = np.einsum("ij,ij->i", X, X) <= radius * radius
        Xc = X if inside.all() else clip_to_ball(X, radius)  # no copy in the common case
        lo = private_lloyd_step(Xc, agg.centers, budget=b_lloyd, radius=radius, rng=gen, ledger=root)
        trace.add("lloyd_partition", released=False, labels=lo["labels"], counts=lo["counts"])
        trace.add("lloyd", released=True, centers=lo["centers"], sigma=lo["sigma"], n_hat=lo["n_hat"])
        trace.add("lloyd_nonprivate", released=False, centers=lo["mean"])
        centers = lo["centers"]
    else:
        node = root.child("private Lloyd step", composition="parallel", unit="row")
        reserve(node, "private Lloyd step (not run)", b_lloyd, agg.failure or "")
        trace.add("lloyd", released=True, note=f"not run: {agg.failure}",
                  **dict.fromkeys(LLOYD_RELEASED["lloyd"]))
        centers = None
    tot = dp_total(root)
    if not (math.isclose(tot.eps, eps, rel_tol=1e-9) and math.isclose(tot.delta, delta, rel_tol=1e-9)):
        raise RuntimeError(f"PrivatekMeans ledger totals {tot}, not (ε={eps}, δ={delta}): a bug.")
    params = dict(algorithm="PrivatekMeans", aggregator=aggregator, eps=eps, delta=delta, radius=radius,
                  n_tuples=stage.n_pieces, k=k, gamma=gamma, beta=beta, r_min=r_min, lloyd_fraction=f,
                  seconds=time.perf_counter() - t_start)
    return Result(centers, agg.failure, root, trace.freeze(), params, seed, simulation=is_simulation(rng))


# ----------------------------------------------------------------------------- GMM


GMM_RELEASED = {"gmm": ("means", "covariances", "weights", "n_hat")}

#: PrivateGMM's per-cluster split of G's budget [OURS]: count 0.1ε; two clip scales 0.1ε each (pure);
#: mean (0.3ε, δ/2); covariance (0.4ε, δ/2).
GMM_SPLIT = {"count": 0.1, "scale_mean": 0.1, "mean": 0.3, "scale_cov": 0.1, "cov": 0.4}

#: The residual clip radius is ``clip_factor`` × a private ``CLIP_QUANTILE``-quantile of the
#: residual norms of the cluster [OURS].
CLIP_QUANTILE = 0.95


def private_quantile(values: np.ndarray, q: float, *, eps: float, upper: float,
                     rng: np.random.Generator) -> float:
    """A private q-quantile of values in [0, upper] (exponential mechanism over the n + 1 gaps
    between sorted values, score −|i − q·n|, weight ∝ gap length; Smith 2011) [R].

    ε-DP: adding or removing one value changes every gap's score by at most 1.
    """
    v = np.sort(np.clip(values, 0.0, upper))
    edges = np.concatenate([[0.0], v, [upper]])
    length = np.diff(edges)
    n = v.size
    score = -np.abs(np.arange(n + 1) - q * n)
    with np.errstate(divide="ignore"):
        lw = eps * score / 2.0 + np.log(length)
    i = gumbel_argmax(lw, rng)
    return float(edges[i] + rng.random() * length[i])


def _psd(S: np.ndarray, floor: float) -> np.ndarray:
    w, V = np.linalg.eigh(0.5 * (S + S.T))
    return (V * np.maximum(w, floor)) @ V.T


def _clip_rows(r: np.ndarray, R: float) -> np.ndarray:
    nr = np.linalg.norm(r, axis=1)
    return r * np.minimum(1.0, R / np.maximum(nr, 1e-300))[:, None]


def private_gaussian_learner(S2: np.ndarray, centers: np.ndarray, *, budget: ApproxDP, clip_factor: float,
                             radius: float, rng: np.random.Generator,
                             ledger: Ledger) -> dict[str, np.ndarray]:
    """PrivateGMM steps 4–5 with G = clipped noisy moments [OURS; the paper names a KLSU19 variant].

    S²_i = rows nearest ĉ_i [S-skel]. n̂_i = |S²_i| + Lap(1/ε_n) [D]. Mean: residuals x − ĉ_i clipped to
    R₁ = clip_factor × a private 95% quantile of their norms (:func:`private_quantile`), μ̂ = ĉ_i +
    (Σ r + N(0, σ_μ²I))/n̂ (Δ₂ = R₁). Covariance: residuals x − μ̂_i clipped to R₂ (a second private
    quantile), Σ̂ = PSD((Σ r rᵀ + symmetric N(0, σ_Σ²))/n̂) (Δ_F = R₂²). ŵ_i = n̂_i/Σ_j n̂_j with n̂
    clamped ≥ 1 [S-skel/OURS]. Clusters compose in parallel (one row is in one S²_i).
    """
    k, d = centers.shape
    labels, _ = nearest_center(S2, centers) if S2.shape[0] else (np.zeros(0, dtype=np.int64), None)
    node = ledger.child("S²: per-cluster Gaussian learner", composition="parallel", unit="row")
    e = {name: f * budget.eps for name, f in GMM_SPLIT.items()}
    dl = budget.delta / 2.0
    means = np.empty((k, d))
    covs = np.empty((k, d, d))
    n_hat = np.empty(k)
    clip = np.empty((k, 2))
    iu = np.triu_indices(d)
    true_means = np.full((k, d), np.nan)
    for i in range(k):  # loop over the k clusters
        Si = S2[labels == i]
        if Si.shape[0]:
            true_means[i] = Si.mean(axis=0)
        c = node.child(f"cluster {i + 1}")
        c.record("n̂_i = |S²_i| + Lap(1/ε_n)", "laplace", ApproxDP(e["count"], 0.0), sensitivity=1.0,
                 noise_scale=1.0 / e["count"])
        n_hat[i] = Si.shape[0] + rng.laplace(0.0, 1.0 / e["count"])
        n_eff = max(n_hat[i], 1.0)
        # mean
        r = Si - centers[i]
        R1 = max(clip_factor * private_quantile(np.linalg.norm(r, axis=1), CLIP_QUANTILE, eps=e["scale_mean"],
                                                upper=2.0 * radius, rng=rng), 1e-9 * radius)
        s_mu = gaussian_sigma_dp(R1, e["mean"], dl)
        c.record(f"R₁: private {CLIP_QUANTILE:.0%} quantile of ‖x − ĉ_i‖", "exponential",
                 ApproxDP(e["scale_mean"], 0.0), sensitivity=1.0, noise_scale=2.0 / e["scale_mean"])
        c.record("Σ clip(x − ĉ_i, R₁) + N(0, σ_μ²I)", "gaussian", ApproxDP(e["mean"], dl), sensitivity=R1,
                 noise_scale=s_mu)
        means[i] = centers[i] + (_clip_rows(r, R1).sum(axis=0) + rng.normal(0.0, s_mu, size=d)) / n_eff
        # covariance
        r = Si - means[i]
        R2 = max(clip_factor * private_quantile(np.linalg.norm(r, axis=1), CLIP_QUANTILE, eps=e["scale_cov"],
                                                upper=2.0 * radius, rng=rng), 1e-9 * radius)
        s_cov = gaussian_sigma_dp(R2 * R2, e["cov"], dl)
        c.record(f"R₂: private {CLIP_QUANTILE:.0%} quantile of ‖x − μ̂_i‖", "exponential",
                 ApproxDP(e["scale_cov"], 0.0), sensitivity=1.0, noise_scale=2.0 / e["scale_cov"])
        c.record("Σ r rᵀ + N(0, σ_Σ²) (upper triangle), r = clip(x − μ̂_i, R₂)", "gaussian",
                 ApproxDP(e["cov"], dl), sensitivity=R2 * R2, noise_scale=s_cov)
        rc = _clip_rows(r, R2)
        noise = np.zeros((d, d))
        noise[iu] = rng.normal(0.0, s_cov, size=iu[0].size)
        noise = noise + np.triu(noise, 1).T
        covs[i] = _psd((rc.T @ rc + noise) / n_eff, 1e-6 * R2 * R2 / d)
        clip[i] = (R1, R2)
    w = np.maximum(n_hat, 1.0)
    return dict(means=means, covariances=covs, weights=w / w.sum(), n_hat=n_hat, labels=labels,
                true_means=true_means, clip=clip)


def private_gmm(
    X: np.ndarray, k: int, *, eps: float, delta: float, radius: float, n_tuples: int = 1000,
    tuple_fraction: float = 0.5, aggregator: Aggregator = "noisy_centers", gamma: float | None = None,
    beta: float = 0.05, r_min: float | None = None, clip_factor: float = 1.25, oracle: str = "kmeans++",
    rng: RngLike = None, method: str = "auto", split: NoisyCentersSplit | None = None,
) -> Result:
    """PrivateGMM: split rows into S¹ (tuples) and S² (learning), GenEmpiricalMeans on S¹, a private
    k-tuple clustering, then a private mean, covariance and weight per cluster of S².

    Parameters
    ----------
    X, k, eps, delta, radius, n_tuples, aggregator, gamma, beta, r_min, oracle, rng, method :
        as :func:`private_k_means`. · split : NoisyCenters' budget split (default the note's)
    tuple_fraction : probability a row goes to S¹ (an independent coin per row) [OURS 0.5]
    clip_factor : residual clip radius over a private 95% quantile of residual norms [OURS 1.25]

    Returns
    -------
    Result: ``centers`` = the k means (or None); the released step "gmm" holds means,
    covariances, weights and n̂.

    Privacy
    -------
    Row level: a row is in S¹ (one tuple replaced: the k-tuple stage's (ε, δ)) or in S² (one
    cluster's G: (ε, δ)), so the whole run is (ε, δ)-DP (parallel composition, Thm 6.1 [S-skel/D]).

    References
    ----------
    Cohen et al. 2021, §6 (PrivateGMM, GenEmpiricalMeans); note §4.7.
    """
    func = "private_gmm"
    X = check_data(X, func, allow_empty=False)
    gamma, r_min = _check_common(func, k, eps, delta, radius, beta, aggregator, gamma, r_min)
    tf = check_scalar(tuple_fraction, "tuple_fraction", func, low=0.0, high=1.0, low_open=True,
                      high_open=True)
    clip_factor = check_scalar(clip_factor, "clip_factor", func, low=0.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "algorithm:easy_instances_gmm")
    t_start = time.perf_counter()
    Xc = clip_to_ball(X, radius)
    in_s1 = gen.random(Xc.shape[0]) < tf  # step 1 [OURS]: an independent coin per row
    S1, S2 = Xc[in_s1], Xc[~in_s1]
    budget = ApproxDP(eps, delta)
    root = Ledger("PrivateGMM", composition="parallel", unit="row",
                  note="a row is in S¹ or in S²: parallel composition of the two stages")
    trace = Trace()
    # |S¹| is data (a coin per row): never a refusal (issue 25, finding 1). Too few rows leave
    # pieces with < k rows, flagged invalid; the private test then answers ⊥. The declared
    # feasibility (n_declared·tuple_fraction ≥ t·k) is checked by the registry before any row.
    # S¹ is already clipped; its size is random (a coin per row), so "auto" must not read it.
    stage = tuple_stage(S1, k, n_tuples=n_tuples, radius=radius, oracle=oracle, rng=gen, method=method,
                        outside="keep")
    trace.add("tuples", released=False, tuples=stage.tuples, valid=stage.valid, piece_sizes=stage.piece_sizes,
              in_s1=in_s1, note="GenEmpiricalMeans on S¹: the oracle's cluster means per piece (non-private)")
    agg = _aggregate(stage, aggregator=aggregator, budget=budget, beta=beta, gamma=gamma, radius=radius,
                     r_min=r_min, rng=gen, ledger=root, trace=trace, split=split)
    if agg.centers is not None:
        g = private_gaussian_learner(S2, agg.centers, budget=budget, clip_factor=clip_factor, radius=radius,
                                     rng=gen, ledger=root)
        trace.add("gmm_partition", released=False, labels=g["labels"], true_means=g["true_means"],
                  clip=g["clip"])
        trace.add("gmm", released=True, means=g["means"], covariances=g["covariances"], weights=g["weights"],
                  n_hat=g["n_hat"])
        centers = g["means"]
    else:
        node = root.child("S²: per-cluster Gaussian learner", composition="parallel", unit="row")
        reserve(node, "Gaussian learner (not run)", budget, agg.failure or "")
        trace.add("gmm", released=True, note=f"not run: {agg.failure}", **dict.fromkeys(GMM_RELEASED["gmm"]))
        centers = None
    tot = dp_total(root)
    if not (math.isclose(tot.eps, eps, rel_tol=1e-9) and math.isclose(tot.delta, delta, rel_tol=1e-9)):
        raise RuntimeError(f"PrivateGMM ledger totals {tot}, not (ε={eps}, δ={delta}): a bug.")
    params = dict(algorithm="PrivateGMM", aggregator=aggregator, eps=eps, delta=delta, radius=radius,
                  n_tuples=n_tuples, k=k, gamma=gamma, beta=beta, r_min=r_min, tuple_fraction=tf,
                  clip_factor=clip_factor, oracle=stage.oracle, method=stage.method,
                  seconds=time.perf_counter() - t_start)
    return Result(centers, agg.failure, root, trace.freeze(), params, seed, simulation=is_simulation(rng))


__all__ = [
    "AGGREGATORS", "AVERAGES_RELEASED", "GMM_RELEASED", "LLOYD_RELEASED", "NOISY_RELEASED",
    "calibrate_scale", "easy_tuple_stage", "gmm_guarantee", "kmeans_guarantee", "kmeans_private_stage",
    "private_gaussian_learner", "private_gmm", "private_k_means", "private_lloyd_step",
]
