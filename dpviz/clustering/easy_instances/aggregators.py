"""The two private k-tuple clustering algorithms: PrivatekAverages (§4.3) and PrivatekNoisyCenters
(§4.4). Both run PrivateTestPartition first and output ⊥ on Failure; the released shape (trace
steps and their keys) and the ledger totals are the same on every branch.

Unit of privacy: one tuple of the t-tuple database (replace-one, t public); see
:data:`~.plan.TUPLE_STEPS_PER_ROW` for the row-level statement.

References
----------
Cohen et al. 2021, §4.3 (PrivatekAverages, Thm 4.1–4.2), §4.4 (PrivatekNoisyCenters, Thm 4.3–4.4);
note §4.4–4.5 and §5.3 (budget tree).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from dpviz._validation import RngLike, check_rng, check_scalar, is_simulation
from dpviz.geometry import nearest_center
from dpviz.privacy.accounting import dp_total
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_dp, laplace
from dpviz.result import Result, Trace

from .interior_point import avg_rd, record_avg_rd
from .partition import LAMBDA_FLOOR, min_distances, private_test_partition
from .plan import (
    AveragesPlan,
    AveragesSplit,
    NoisyCentersPlan,
    NoisyCentersSplit,
    averages_plan,
    noisy_centers_plan,
    reserve,
)

Outcome = tuple[np.ndarray | None, str | None]
NOISY_SPLIT = NoisyCentersSplit()
AVERAGES_SPLIT = AveragesSplit()


def infeasible_reason(name: str, t: int, n_min: int | None) -> str:
    """The ⊥ message for a setting that cannot be private at this t (decided from public inputs)."""
    need = "no t up to 10¹³" if n_min is None else f"t ≥ {n_min:,}"
    return f"{name} infeasible: t = {t:,} tuples, but these public inputs need {need} (n_min)"


def noisy_infeasible_reason(plan: NoisyCentersPlan, gamma: float) -> str:
    """Why a NoisyCenters plan is infeasible: t < n_min, or κ overflows at this γ (public inputs)."""
    if not plan.test.feasible:
        return infeasible_reason("PrivatekNoisyCenters", plan.test.t, plan.n_min)
    return (f"PrivatekNoisyCenters infeasible: γ = {gamma:g} makes κ = exp(b·ln(k/(2δ_E))) overflow "
            f"(b = {plan.b:.3g}), i.e. infinite noise; use a smaller γ")


def _check_tuples(T: Any, func: str) -> np.ndarray:
    T = np.asarray(T, dtype=np.float64)
    if T.ndim != 3 or T.shape[0] < 1 or T.shape[1] < 1 or T.shape[2] < 1:
        raise ValueError(f"The 'T' parameter of {func} must be a (t, k, d) array of t ≥ 1 k-tuples. "
                         f"Got shape {T.shape}.")
    if not np.all(np.isfinite(T)):
        raise ValueError(f"The 'T' parameter of {func} contains NaN or infinite values.")
    return T


def _check_budget(eps: float, delta: float, beta: float, func: str) -> None:
    check_scalar(eps, "eps", func, low=0.0, low_open=True, high_open=True)
    check_scalar(delta, "delta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    check_scalar(beta, "beta", func, low=0.0, high=1.0, low_open=True, high_open=True)


def plan_dict(plan: Any) -> dict[str, Any]:
    """The plan's public quantities as a flat dict (for the trace and the app)."""
    out = {k: v for k, v in plan.__dict__.items() if k != "test"}
    out.update({f"test_{k}": v for k, v in plan.test.__dict__.items()})
    out["feasible"] = plan.feasible
    return out


# ----------------------------------------------------------------------------- NoisyCenters


NOISY_RELEASED = {"status": ("success", "q_hat", "tau2", "m"),
                  "log_lambda": ("eta", "b", "kappa"),
                  "noisy_centers": ("centers", "sigma", "sensitivity")}


def _skeleton(trace: Trace, released: dict[str, tuple[str, ...]], present: set[str], why: str) -> None:
    """Add the released steps a ⊥ branch did not reach, with the same keys and None values."""
    for name, keys in released.items():
        if name not in present:
            trace.add(name, released=True, note=f"not run: {why}", **dict.fromkeys(keys))


def run_noisy_centers(T: np.ndarray, valid: np.ndarray | None, plan: NoisyCentersPlan, gamma: float,
                      rng: np.random.Generator, ledger: Ledger, trace: Trace) -> Outcome:
    """PrivatekNoisyCenters steps 1–5 on a feasible plan; records into ``ledger`` and ``trace``."""
    _t, k, _ = T.shape
    eps_lam, eps_G, delta_G = plan.eps_lam, plan.eps_G, plan.delta_G
    out = private_test_partition(T, plan=plan.test, rng=rng, ledger=ledger, trace=trace, valid=valid,
                                 event_delta=plan.event_delta)
    lam_node = ledger.child("log-Laplace on λ_i", note=f"b = kΔ_log/ε_λ = {plan.b:.4g}, κ = {plan.kappa:.4g}")
    g_node = ledger.child("Gaussian on the centers", note="per center (ε_G/k, δ_G/k), noise ∝ e^{η_i}")
    failure = out.failure
    if failure is not None:
        reserve(lam_node, "log-Laplace on λ (not run)", ApproxDP(eps_lam, plan.delta_E), failure)
        reserve(g_node, "Gaussian on the centers (not run)", ApproxDP(eps_G, delta_G), failure)
        _skeleton(trace, NOISY_RELEASED, {"status"}, failure)
        return None, failure
    # Step 3: c_1..c_k = the selected tuple Y* [S].
    c = T[out.sample[out.chosen]]
    lam = np.maximum(min_distances(c), LAMBDA_FLOOR)
    # Step 4a [D]: η_i = ln λ_i + Lap(b); ℓ1 sensitivity of (ln λ_i)_i is k·Δ_log.
    eta = np.asarray(laplace(np.log(lam), sensitivity=k * plan.delta_log, eps=eps_lam, rng=rng,
                             ledger=lam_node, name="η_i = ln λ_i + Lap(b), i = 1..k",
                             note=f"Δ_log = ln((1+2γ)/(1−2γ)) = {plan.delta_log:.4g}"), dtype=np.float64)
    lam_node.record("E: every λ̂_i ≥ λ_i/κ (one-sided Laplace tails)", "event",
                    ApproxDP(0.0, plan.delta_E), note="κ = exp(b·ln(k/(2δ_E)))")
    # Step 4b [D]: Δ_i = (2γ/(1−2γ))·κ·e^{η_i}; ĉ_i = c_i + N(0, σ_i² I), σ_i for (ε_G/k, δ_G/k).
    sens = (2.0 * gamma / (1.0 - 2.0 * gamma)) * plan.kappa * np.exp(eta)
    noisy = np.empty_like(c)
    sigma = np.empty(k)
    for i in range(k):  # loop over the k centers
        noisy[i] = gaussian_dp(c[i], sensitivity=float(sens[i]), eps=eps_G / k, delta=delta_G / k,
                               rng=rng, ledger=g_node, name=f"ĉ_{i + 1} = c_{i + 1} + N(0, σ²I)")
        sigma[i] = g_node.children[-1].noise_scale
    # Step 5 [OURS]: a uniformly random order (outputs are unordered, footnote 2 [S]).
    perm = rng.permutation(k)
    trace.add("chosen", released=False, center=c[perm], lam=lam[perm], permutation=perm,
              note="the selected input tuple Y* and its λ_i (non-private), in output order")
    trace.add("log_lambda", released=True, eta=eta[perm], b=plan.b, kappa=plan.kappa)
    trace.add("noisy_centers", released=True, centers=noisy[perm], sigma=sigma[perm], sensitivity=sens[perm])
    return noisy[perm], None


def private_k_noisy_centers(
    T: np.ndarray, *, eps: float, delta: float, beta: float = 0.05, gamma: float = 1e-3,
    rng: RngLike = None, valid: np.ndarray | None = None, split: NoisyCentersSplit = NOISY_SPLIT,
) -> Result:
    """PrivatekNoisyCenters(T, ε, δ, β, γ): test, pick one passing tuple, noise scaled to its
    inter-center distances (log-space Laplace on λ_i, then Gaussian), randomly permuted.

    Parameters
    ----------
    T : (t, k, d) array — the k-tuples · eps, delta : own budget (tuple level)
    beta : confidence · gamma : ball scale, in (0, 1/2); ~1e-3 for small k [D, note §8]
    rng : Generator, int or None · valid : (t,) bool, False = never partitioned (duplicates)
    split : NoisyCentersSplit [OURS]

    Returns
    -------
    Result with ``centers`` (k, d) or None (⊥, ``failure`` says why). An infeasible t (< n_min)
    is ⊥ before the tuples are read.

    Privacy
    -------
    (ε, δ)-DP for replacing one tuple of a database of t ≥ n_min tuples (Thm 4.4 [S-skel]; our
    split and event accounting [D]); the ledger total is exactly (ε, δ) by basic composition.

    References
    ----------
    Cohen et al. 2021, §4.4; note §4.5.
    """
    func = "private_k_noisy_centers"
    T = _check_tuples(T, func)
    _check_budget(eps, delta, beta, func)
    check_scalar(gamma, "gamma", func, low=0.0, high=0.5, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "easy_instances:private_k_noisy_centers")
    t, k, _ = T.shape
    t_start = time.perf_counter()
    plan = noisy_centers_plan(t, k, eps=eps, delta=delta, beta=beta, gamma=gamma, split=split)
    ledger = Ledger("PrivatekNoisyCenters", unit="tuple")
    trace = Trace()
    centers, failure = noisy_centers_into(T, valid, plan, gamma, gen, ledger, trace)
    params = dict(algorithm="PrivatekNoisyCenters", eps=eps, delta=delta, beta=beta, gamma=gamma, t=t, k=k,
                  seconds=time.perf_counter() - t_start)
    return Result(centers, failure, ledger, trace.freeze(), params, seed, simulation=is_simulation(rng))


def noisy_centers_into(T: np.ndarray, valid: np.ndarray | None, plan: NoisyCentersPlan, gamma: float,
                       rng: np.random.Generator, ledger: Ledger, trace: Trace) -> Outcome:
    """Plan step (public), then the run or an infeasible ⊥; the ledger node totals (ε, δ) always."""
    trace.add("plan", released=True, **plan_dict(plan),
              note="derived from public inputs only (t, k, ε, δ, β, γ)")
    if not plan.feasible:
        failure = noisy_infeasible_reason(plan, gamma)
        reserve(ledger, "whole budget (infeasible, no data read)", ApproxDP(plan.eps, plan.delta), failure)
        _skeleton(trace, NOISY_RELEASED, set(), failure)
        return None, failure
    centers, failure = run_noisy_centers(T, valid, plan, gamma, rng, ledger, trace)
    reserve(ledger, "unused δ (reserved)", ApproxDP(0.0, max(plan.reserved_delta, 0.0)),
            "the split's δ parts sum to less than δ")
    _check_total(ledger, plan.eps, plan.delta)
    return centers, failure


def _check_total(ledger: Ledger, eps: float, delta: float) -> None:
    tot = dp_total(ledger)
    if not (math.isclose(tot.eps, eps, rel_tol=1e-9) and math.isclose(tot.delta, delta, rel_tol=1e-9)):
        raise RuntimeError(f"{ledger.name} ledger totals {tot}, not (ε={eps}, δ={delta}): a bug.")


# ----------------------------------------------------------------------------- Averages


AVERAGES_RELEASED = {"status": ("success", "q_hat", "tau2", "m"),
                     "segments": ("segments",),
                     "averages": ("centers", "sigma")}


def run_averages(T: np.ndarray, valid: np.ndarray | None, plan: AveragesPlan, rng: np.random.Generator,
                 ledger: Ledger, trace: Trace) -> tuple[np.ndarray | None, str | None]:
    """PrivatekAverages steps 1–6 on a feasible plan; records into ``ledger`` and ``trace``."""
    t, k, d = T.shape
    out = private_test_partition(T, plan=plan.test, rng=rng, ledger=ledger, trace=trace, valid=valid,
                                 event_delta=plan.event_delta)
    avg_node = ledger.child(f"k × AvgRd under group privacy (Σℓ_i ≤ L = {plan.L:.0f})",
                            note=f"each AvgRd at ε_avg = ε_A/L = {plan.eps_avg:.3g}, "
                                 f"δ_avg = δ_A/(L·e^ε_A) = {plan.delta_avg:.3g}")
    if out.failure is not None:
        reserve(avg_node, "k × AvgRd (not run)", ApproxDP(plan.eps_A, plan.delta_A), out.failure)
        _skeleton(trace, AVERAGES_RELEASED, {"status"}, out.failure)
        return None, out.failure
    # Step 3 [S-skel]: C_i = points of T nearest to c_i, c = Y*.
    c = T[out.sample[out.chosen]]
    P = T.reshape(t * k, d)
    labels, _ = nearest_center(P, c)
    perm = rng.permutation(k)  # step 6 [OURS]: released per-cluster values in a random order
    averages = np.empty((k, d))
    segments = np.empty((k, d, 2))
    sigma = np.empty((k, d))
    means = np.empty((k, d))
    sizes = np.bincount(labels, minlength=k)
    order = np.argsort(labels, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    for pos, i in enumerate(perm):  # loop over the k clusters
        Ci = P[order[bounds[i]:bounds[i + 1]]]
        res = avg_rd(Ci, t=t, eps_c=plan.eps_c, delta_c=plan.delta_c, t0=plan.t0, radius=plan.radius,
                     r_min=plan.r_min, rng=rng)
        record_avg_rd(avg_node, pos, res, d=d, eps_avg=plan.eps_avg, delta_avg=plan.delta_avg,
                      eps_c=plan.eps_c, delta_c=plan.delta_c, t=t)
        averages[pos], segments[pos], sigma[pos], means[pos] = res.average, res.segments, res.sigma, res.mean
    # Step 5 [D]: group privacy of total size L over the k calls, charged explicitly.
    avg_node.record(f"group privacy: Σℓ_i ≤ L = 2k(2ℓ+1) = {plan.L:.0f}", "group_privacy",
                    ApproxDP(plan.eps_A - k * plan.eps_avg, max(plan.delta_A - k * plan.delta_avg, 0.0)),
                    note="the practical bottleneck (§7): L·(ε_avg, e^{ε_A}δ_avg) minus the k raw calls")
    trace.add("clusters", released=False, center=c[perm], labels=np.argsort(perm)[labels], sizes=sizes[perm],
              note="Voronoi of Points(T) by Y* (non-private), clusters in output order")
    trace.add("segments", released=True, segments=segments)
    trace.add("averages", released=True, centers=averages, sigma=sigma)
    trace.add("averages_nonprivate", released=False, centers=means)
    return averages, None


def averages_into(T: np.ndarray, valid: np.ndarray | None, plan: AveragesPlan, rng: np.random.Generator,
                  ledger: Ledger, trace: Trace) -> tuple[np.ndarray | None, str | None]:
    t = T.shape[0]
    trace.add("plan", released=True, **plan_dict(plan),
              note="derived from public inputs only (t, k, d, ε, δ, β, γ, Λ, r_min)")
    if not plan.feasible:
        failure = infeasible_reason("PrivatekAverages", t, plan.n_min)
        reserve(ledger, "whole budget (infeasible, no data read)", ApproxDP(plan.eps, plan.delta), failure)
        _skeleton(trace, AVERAGES_RELEASED, set(), failure)
        return None, failure
    if np.any(np.einsum("tkd,tkd->tk", T, T) > plan.radius**2 * (1 + 1e-12)):
        raise ValueError(f"PrivatekAverages needs every tuple point in B(0, Λ = {plan.radius:g}); "
                         "clip the rows to the ball first (a per-row map).")
    centers, failure = run_averages(T, valid, plan, rng, ledger, trace)
    reserve(ledger, "unused δ (reserved)", ApproxDP(0.0, max(plan.reserved_delta, 0.0)),
            "the split's δ parts sum to less than δ")
    _check_total(ledger, plan.eps, plan.delta)
    return centers, failure


def private_k_averages(
    T: np.ndarray, *, eps: float, delta: float, radius: float, r_min: float, beta: float = 0.05,
    gamma: float = 0.1, rng: RngLike = None, valid: np.ndarray | None = None,
    split: AveragesSplit = AVERAGES_SPLIT,
) -> Result:
    """PrivatekAverages(T, ε, δ, β, Λ, r_min): test, Voronoi of Points(T) by the chosen tuple, AvgRd
    per cluster under group privacy of size Σℓ_i ≤ L = 2k(2ℓ+1), randomly permuted.

    Parameters
    ----------
    T : (t, k, d) array in B(0, Λ) · eps, delta : own budget (tuple level) · radius : Λ
    r_min : interior-point grid resolution · beta · gamma : in (0, 1/6), default 0.1 [OURS]
    rng · valid · split : AveragesSplit [OURS]

    Returns
    -------
    Result; ⊥ (before reading T) when t < n_min = max(2ℓ+2, 2t₀) — millions of tuples at ε = 1.

    Privacy
    -------
    (ε, δ)-DP for replacing one tuple (t fixed) (Thm 4.1 [S-skel]; group size and split [D/OURS]).

    References
    ----------
    Cohen et al. 2021, §4.3 and App. A.1; note §4.3–4.4.
    """
    func = "private_k_averages"
    T = _check_tuples(T, func)
    _check_budget(eps, delta, beta, func)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    r_min = check_scalar(r_min, "r_min", func, low=0.0, high=2.0 * radius, low_open=True)
    check_scalar(gamma, "gamma", func, low=0.0, high=1.0 / 6.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "easy_instances:private_k_averages")
    t, k, d = T.shape
    t_start = time.perf_counter()
    plan = averages_plan(t, k, d, eps=eps, delta=delta, beta=beta, gamma=gamma, radius=radius,
                         r_min=r_min, split=split)
    ledger = Ledger("PrivatekAverages", unit="tuple")
    trace = Trace()
    centers, failure = averages_into(T, valid, plan, gen, ledger, trace)
    params = dict(algorithm="PrivatekAverages", eps=eps, delta=delta, beta=beta, gamma=gamma, radius=radius,
                  r_min=r_min, t=t, k=k, seconds=time.perf_counter() - t_start)
    return Result(centers, failure, ledger, trace.freeze(), params, seed, simulation=is_simulation(rng))
