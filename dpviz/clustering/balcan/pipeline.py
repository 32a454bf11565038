"""Algorithm 4 end to end: project, candidates, local search, recover in ℝ^d, refine; plus the SuLQ baseline.

Balcan, Dick, Liang, Mou, Zhang. Differentially private clustering in high-dimensional Euclidean
spaces. ICML 2017, Alg. 4 and §7; engineer's note §3.4, §3.7, §8.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from dpviz._validation import RngLike, check_data, check_rng, check_scalar, is_simulation
from dpviz.clustering.balcan.localsearch import localswap
from dpviz.clustering.balcan.params import BalcanConfig, BalcanParams, resolve_config
from dpviz.clustering.balcan.partition import candidate
from dpviz.clustering.balcan.projection import jl_projection
from dpviz.clustering.balcan.recovery import recover_centers, sparse_recover, sparsify
from dpviz.data.bounds import clip_to_ball
from dpviz.geometry import nearest_center
from dpviz.privacy.accounting import dp_total
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.declared import require_declared_size
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import exponential
from dpviz.result import Result, Trace

#: Largest n·d accepted (1e5 × 1000 in float64 is 0.8 GB; note §8.1).
MAX_ENTRIES = 100_000_000

#: Largest estimated work (distance evaluations) of a run before we refuse with advice.
MAX_WORK = 1e10

#: Work budget the theory profile's default T₂ and T₃ are capped to (seconds to a minute on one core).
THEORY_AUTO_WORK = 1e9

STEPS = ("projection", "partition", "candidates", "local_search", "recovery", "refinement")


def _estimated_work(cfg: BalcanConfig, n: int) -> float:
    """Rough count of the inner-loop operations of a run (public inputs only)."""
    c_max = cfg.shifts * (cfg.rounds + 1) if cfg.profile == "practical" else cfg.shifts
    if cfg.max_candidates:
        c_max = min(c_max, cfg.max_candidates)
    per_trial = cfg.shifts * n * cfg.p + cfg.T3 * c_max * n * (2 + cfg.k / 4)
    return cfg.trials * per_trial


def _fit_theory_steps(cfg: BalcanConfig, params: BalcanParams, n: int) -> BalcanConfig:
    """Cap the theory profile's default T₂ shifts and T₃ steps to a public work budget, saying so.

    The paper's T₂ ≈ 27k ln(n/δ) partitions and T₃ ≈ 100k ln(n/δ) swaps take hours at n = 10⁴.
    Only parameters left at their default are capped (half the budget to the partitions, the
    rest to the local search); an explicit value is run or refused as given. γ stays ≫ n.
    """
    if cfg.profile != "theory":
        return cfg
    notes = list(cfg.notes)
    per_shift = cfg.trials * n * cfg.p
    if not params.shifts and cfg.shifts * per_shift > THEORY_AUTO_WORK / 2:
        shifts = max(1, int(THEORY_AUTO_WORK / 2 // per_shift))
        notes.append(f"theory: shifts T₂ capped from the paper's {cfg.shifts} to {shifts} to fit a work "
                     f"budget (set shifts to override).")
        capped = resolve_config(replace(params, shifts=shifts), n_declared=cfg.n_declared, d=cfg.d,
                                k=cfg.k, epsilon=cfg.epsilon)
        cfg = replace(capped, notes=(capped.notes[0], *notes[1:]))
    if not params.T3 and _estimated_work(cfg, n) > THEORY_AUTO_WORK:
        lo, hi = 1, cfg.T3
        while lo < hi:  # the largest T₃ within the budget (work is increasing in T₃)
            mid = (lo + hi + 1) // 2
            if _estimated_work(replace(cfg, T3=mid), n) <= THEORY_AUTO_WORK:
                lo = mid
            else:
                hi = mid - 1
        notes = list(cfg.notes)
        notes.append(f"theory: T₃ capped from the paper's {cfg.T3} to {lo} steps to fit a work budget of "
                     f"{THEORY_AUTO_WORK:.0e} operations (set T3 to override).")
        cfg = replace(cfg, T3=lo, notes=tuple(notes))
    return cfg


def _recover(X: np.ndarray, labels: np.ndarray, k: int, *, eps_count: float, eps_sum: float,
             radius: float, params: BalcanParams, rng: np.random.Generator,
             ledger: Ledger) -> tuple[np.ndarray, dict[str, Any]]:
    """Dense recovery (Laplace, √d·Λ) or Alg. 5 (sparse), as the params say."""
    if params.recovery == "sparse":
        rec = sparse_recover(X, labels, k, s=params.sparse_s, eta=params.sparse_eta,
                             bound=radius / math.sqrt(params.sparse_s), eps_count=eps_count,
                             eps_select=eps_sum / 2, eps_value=eps_sum / 2, rng=rng, ledger=ledger)
        return clip_to_ball(rec.centers, radius), dict(noisy_counts=rec.noisy_counts, support=rec.support)
    rec = recover_centers(X, labels, k, eps_count=eps_count, eps_sum=eps_sum, radius=radius, rng=rng,
                          ledger=ledger)
    return rec.centers, dict(noisy_counts=rec.noisy_counts, count_scale=rec.count_scale,
                             sum_scale=rec.sum_scale, true_counts=rec.true_counts)


def _trial(X: np.ndarray, cfg: BalcanConfig, params: BalcanParams, radius: float,
           rng: np.random.Generator, ledger: Ledger, trace: Trace, trial: int) -> np.ndarray:
    """One run of Alg. 4's loop body (+ §7's refinement); returns the centers in ℝ^d."""
    k = cfg.k
    tick = time.perf_counter()
    timing: dict[str, float] = {}

    proj = jl_projection(X, cfg.p, radius, rng)
    timing["projection"] = time.perf_counter() - tick
    sample = np.arange(min(X.shape[0], 2000))
    trace.add("projection", released=False, trial=trial, G=proj.G, radius_p=proj.radius_p,
              n_clipped=proj.n_clipped, Y_sample=proj.Y[sample], sample_index=sample,
              note="Projected rows are a function of the data (not private); G is public.")

    tick = time.perf_counter()
    cand = candidate(proj.Y, radius_p=proj.radius_p, n_shifts=cfg.shifts, eps_level=cfg.eps_level,
                     gamma=cfg.gamma, n_rounds=cfg.rounds, rng=rng,
                     ledger=ledger.child("candidate (Alg. 2)", note=f"{cfg.shifts} partitions"),
                     eps_call=cfg.per_shift(), max_candidates=cfg.max_candidates)
    timing["candidate"] = time.perf_counter() - tick
    trace.add("partition", released=True, trial=trial, eps_level=cfg.eps_level, gamma=cfg.gamma,
              shifts=cand.shifts, active_per_level=[t.active_per_level for t in cand.trees],
              empty_activated=[t.empty_activated for t in cand.trees],
              roots=[(t.lo, t.edge) for t in cand.trees],
              cubes=[(t.centers, t.level) for t in cand.trees],
              note="Active cubes per level per shift (private: noisy-threshold decisions).")
    trace.add("partition_counts", released=False, trial=trial,
              counts=[t.counts for t in cand.trees], note="True child counts: NOT private (debug).")
    trace.add("candidates", released=True, trial=trial, centers=cand.centers, shift=cand.shift,
              level=cand.level, n_before_subsample=cand.n_before_subsample)

    tick = time.perf_counter()
    ls = localswap(proj.Y, cand.centers, k=k, T3=cfg.T3, eps=cfg.eps_local_search,
                   radius_p=proj.radius_p, rng=rng, sample_rate=cfg.ls_rate,
                   ledger=ledger.child("local search (Alg. 3)", note=f"T₃ + 1 = {cfg.T3 + 1} mechanisms"))
    timing["local_search"] = time.perf_counter() - tick
    U = cand.centers[ls.z_idx]
    trace.add("local_search", released=True, trial=trial, path=ls.path, swaps=ls.swaps,
              chosen_t=ls.chosen_t, centers_projected=U)
    trace.add("local_search_debug", released=False, trial=trial, losses=ls.losses,
              p_chosen=ls.p_chosen, p_max=ls.p_max, last_probs=ls.last_probs,
              final_probs=ls.final_probs, note="Losses and probabilities read the data: NOT private.")

    tick = time.perf_counter()
    labels = nearest_center(proj.Y, U)[0]  # S_j: assignment in the projected space (Alg. 4)
    centers, info = _recover(X, labels, k, eps_count=cfg.eps_counts, eps_sum=cfg.eps_sums, radius=radius,
                             params=params, rng=rng, ledger=ledger.child("recovery (Alg. 4)"))
    timing["recovery"] = time.perf_counter() - tick
    trace.add("recovery", released=True, trial=trial, centers=centers.copy(),
              noisy_counts=info["noisy_counts"],
              **{k_: v for k_, v in info.items() if k_ not in ("noisy_counts", "true_counts")})
    if "true_counts" in info:
        trace.add("recovery_debug", released=False, trial=trial, true_counts=info["true_counts"])

    tick = time.perf_counter()
    path = [centers]
    if cfg.n_lloyd:
        node = ledger.child("refinement (§7)", note=f"{cfg.n_lloyd} private Lloyd steps")
        eps_it = cfg.eps_refine / cfg.n_lloyd
        frac = params.counts / (params.counts + params.sums)
        for it in range(cfg.n_lloyd):  # loop over iterations
            lab = nearest_center(X, path[-1])[0]
            c_new, _ = _recover(X, lab, k, eps_count=frac * eps_it, eps_sum=(1 - frac) * eps_it,
                                radius=radius, params=params, rng=rng,
                                ledger=node.child(f"iteration {it + 1}"))
            path.append(c_new)
    timing["refinement"] = time.perf_counter() - tick
    trace.add("refinement", released=True, trial=trial, centers=np.array(path))
    trace.add("timing", released=False, trial=trial, **timing)
    return path[-1]


def balcan_kmeans(
    X: np.ndarray,
    k: int,
    *,
    epsilon: float,
    radius: float,
    n_declared: int | None = None,
    params: BalcanParams | None = None,
    rng: RngLike = None,
) -> Result:
    """Private k-means in high dimension by candidates + private local search (Balcan et al. 2017).

    Parameters
    ----------
    X : (n, d) array
        Rows are clipped to the ball of radius Λ (sparse recovery: s-sparsified and clipped to
        |x_r| ≤ Λ/√s, which keeps ||x|| ≤ Λ).
    k : int
    epsilon : float
        The pure ε-DP budget; the ledger spends exactly ε (unused shares are recorded as reserved).
    radius : float
        Λ, the public ℓ2 bound.
    n_declared : int, optional
        The public dataset size. Sets p, γ, the depth and the theory constants; the true n shapes
        nothing else. Default len(X) (the paper assumes n public) in a simulation only: a release
        (``rng=SecureRNG()``) without it is refused (ValueError, nothing read).
    params : BalcanParams, optional
        Profile ("practical" default, or "theory"), T₃, the split, etc.
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` (k, d). Trace steps: projection (internal), partition, candidates,
        local_search (released), local_search_debug (internal), recovery, refinement (released),
        timing (internal); with several trials (theory) each step repeats with ``trial`` set, and
        a ``selection`` step follows.

    Raises
    ------
    ValueError
        Invalid parameters; n·d > 1e8; or a configuration too expensive to run (with advice).

    Privacy
    -------
    ε-DP under add/remove of one row: candidates (Alg. 2, Thm 4), local search (Alg. 3, Thm 6),
    noisy counts and sums (parallel over cells, Lemma 1), Lloyd refinement, and (theory) the final
    exponential selection over trials compose sequentially; the ledger's pure-ε total is checked to
    be ε. Every noise scale, threshold and split depends only on ε, Λ, n_declared, d, k and params.

    References
    ----------
    Balcan, Dick, Liang, Mou, Zhang. ICML 2017, Alg. 1–5, §7; engineer's note §8.2 (profiles).
    """
    func = "balcan_kmeans"
    require_declared_size(n_declared, rng, func, "balcan")  # before any row (issue 34, A)
    shape = np.shape(X)
    # The memory guard reads the DECLARED size when there is one: a refusal at the true n would
    # tell D from D plus one row at the boundary (issue 25, finding 1).
    rows = shape[0] if n_declared is None or len(shape) != 2 else int(n_declared)
    if len(shape) == 2 and rows * shape[1] > MAX_ENTRIES:
        n, d = rows, shape[1]
        raise ValueError(f"{func} handles n·d up to {MAX_ENTRIES:.0e} in memory; the declared n·d = "
                         f"{n}·{d} = {n * d:.3g}. Subsample the rows or reduce d (e.g. PCA on public "
                         "data) first.")
    X = check_data(X, func, allow_empty=False)
    n, d = X.shape
    k = check_scalar(k, "k", func, low=1, high=10_000, integer=True)
    epsilon = check_scalar(epsilon, "epsilon", func, low=0.0, low_open=True, high_open=True)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    n_decl = n if n_declared is None else check_scalar(n_declared, "n_declared", func, low=1,
                                                        high_open=True, integer=True)
    params = BalcanParams() if params is None else params
    if not isinstance(params, BalcanParams):
        raise ValueError(f"The 'params' parameter of {func} must be a BalcanParams. Got {type(params)}.")
    gen, seed = check_rng(rng, "algorithm:balcan")
    cfg = resolve_config(params, n_declared=n_decl, d=d, k=k, epsilon=epsilon)
    cfg = _fit_theory_steps(cfg, params, n_decl)
    work = _estimated_work(cfg, n_decl)  # public size: a refusal must not depend on the true n
    if work > MAX_WORK:
        raise ValueError(
            f"profile={cfg.profile!r} at n_declared={n_decl}, k={k} needs about {work:.2g} operations "
            f"(T₂={cfg.shifts} shifts, T₃={cfg.T3} local-search steps, {cfg.trials} trial(s), "
            f"p={cfg.p}); that is the paper's constants at work. Lower T3/shifts in BalcanParams, "
            "or use profile='practical'."
        )
    Xc = sparsify(X, params.sparse_s, radius / math.sqrt(params.sparse_s)) if params.recovery == "sparse" \
        else clip_to_ball(X, radius)

    ledger = Ledger(func, ApproxDP(epsilon).to_zcdp(), note=f"pure ε = {epsilon:g}")
    trace = Trace()
    trace.add("config", released=True, **asdict(cfg))
    results = []
    for t in range(cfg.trials):  # Alg. 4's T trials (theory); one in the practical profile
        node = ledger if cfg.trials == 1 else ledger.child(f"trial {t + 1}")
        results.append(_trial(Xc, cfg, params, radius, gen, node, trace, t))
    if cfg.trials > 1:
        losses = np.array([nearest_center(Xc, c)[1].sum() for c in results])
        pick = exponential(-losses, sensitivity=4.0 * radius**2, eps=cfg.eps_select, rng=gen, ledger=ledger,
                           name="select trial", note="exponential mechanism over −L(Z^(t)) in ℝ^d, Alg. 4")
        trace.add("selection", released=True, chosen=pick)
        trace.add("selection_debug", released=False, losses=losses)
        centers = results[pick]
    else:
        centers = results[0]
    if cfg.eps_reserved > 0:
        ledger.record("reserved (unspent share)", "reserved", ApproxDP(cfg.eps_reserved),
                      note="the split leaves this unspent; recorded so the total is ε on every branch")
    total = dp_total(ledger)
    if total.eps > epsilon * (1 + 1e-9) or total.delta > 0.0:
        raise RuntimeError(f"{func} spent {total} > pure ε = {epsilon:.6g}: a bug in the budget split.")
    ledger.check()
    return Result(centers=centers, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm="balcan", k=k, epsilon=epsilon, radius=radius, n_declared=n_decl,
                              **asdict(params)), seed=seed, simulation=is_simulation(rng),
                  algorithm="balcan", guarantee=ApproxDP(epsilon, 0.0))


# ----------------------------------------------------------------------------- SuLQ baseline


def sulq_rho(X: np.ndarray, k: int, *, rho: float, radius: float, iters: int,
             rng: np.random.Generator) -> Result:
    """SuLQ k-means at a ρ-zCDP budget: box-initialised :func:`dpviz.clustering.dp_lloyd`."""
    from dpviz.clustering.baselines import dp_lloyd

    init = clip_to_ball(rng.uniform(-radius, radius, size=(k, X.shape[1])), radius)
    return dp_lloyd(X, k, rho=rho, radius=radius, iters=iters, init=init, rng=rng)
