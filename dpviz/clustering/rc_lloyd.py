"""Radius-constrained noisy Lloyd from a private Gaussian start: private k-means for small n·ε.

Why the small-table winners win (issue 44). On a table of a few hundred rows at ε ≤ 3, one
noisy cluster sum whose sensitivity is the data radius Λ (DP-Lloyd, Su et al. 2016) moves a center
by ≈ Λ·√d/(n_j·√(2ρ)), comparable to the distances between clusters, and a public random start
wastes iterations. ``gauss_fit`` wins by asking little (two moments, then post-processing);
FastLloyd (Diaa et al. 2024, §4 "radius-constrained updates") wins on iris by *relative* updates:
each cluster releases the sum of its rows' displacements from the current center, which are short,
so the noise is calibrated to a step radius R ≪ Λ instead of Λ, and a noisy count then only scales
a short step. This module combines both:

1. **Private start** (share ``start_share`` of ρ): the k-means of a fitted Gaussian. By default
   (``start="sign"``, :func:`sign_start`) the fit is N(μ̂, s²·M̂) from the noisy mean μ̂, the noisy
   mean distance s of the rows from it and the noisy spatial sign covariance M̂ around it
   (:mod:`dpviz.clustering.sign_axes`); with ``start="gauss"`` it is
   :func:`dpviz.clustering.gauss_fit.gauss_fit` (noisy mean and second moment; its ledger is a
   child here).
2. **T radius-constrained Lloyd steps** (the rest of ρ, evenly): assign every row to its nearest
   center c_j, clip its displacement u = x − c_j to norm R (our variant: FastLloyd drops rows
   farther than R and clips the step; clipping the displacement keeps every row, a Huber-like
   step), release per cluster the noisy displacement sum (ℓ2 sensitivity R, share
   1 − ``count_share`` of the step) and the noisy count (sensitivity 1, share ``count_share``);
   clusters are disjoint, so each kind composes in parallel (Su et al. 2016; Tsfadia et al. 2022,
   §5.2.4). The step Ŝ_j / n̂_j is cut to norm R (FastLloyd's bounded update: the true mean
   displacement has norm ≤ R, so the cut only removes noise) and the new center, projected into
   the Λ-ball, is c_j plus that step; a cluster whose noisy count is below ``MIN_COUNT`` keeps its
   center (post-processing).
   R = ``step_frac``·Λ, shrinking by ``step_decay`` each step (public schedule; FastLloyd's
   ``diagonal_then_frac`` also starts wide and narrows). The defaults (R_0 = 0.2·Λ, decay 0.8,
   start 0.3·ρ, counts 0.2 of a step) were chosen on ``auto``'s generated calibration tables only
   (table recipes of ``bench/auto_calibrate.py``, data seeds 301–302), never on the bundled
   tables. T = 8 (4 until issue 44's fourth stop) was chosen among T ∈ {4, 5, 6, 8, 10}, with the
   axis split below, on ``auto``'s calibration cells only, by the rule's own leave-one-shape-out
   check (``bench/auto_calibrate.py loo``: most small-table cells within 1.25× of the best on
   median and p90, then the geometric-mean risk regret; docs/peers.md). Centers of the start that
   coincide (its answer when the fit is under the noise edge) are first moved apart by R_0/2 along
   ± the top eigenvectors of the released matrix (:func:`split_coincident`; post-processing, no
   budget; issue 44's fourth stop, which replaced a public random split).

**The sign start** (issue 44, sixth stop; the default since). gauss_fit's second moment Σxxᵀ has
sensitivity Λ², and on small standardized tables the rows sit far inside the Λ-ball (iris: Λ = 2,
90% of rows within 0.89 of the mean), so on iris-sized calibration tables its fit keeps no
direction in most draws and its released top axis is often close to a random one. The sign start
releases the mean (sensitivity Λ), the mean distance (2Λ) and the spatial sign covariance (1) at
0.5, 0.1 and 0.4 of the start's ρ: no release grows with Λ², and the signs' top axis stays near
the direction that separates the clusters. Chosen on ``auto``'s calibration cells only: against
the gauss start it lowers the median on 77 and the p90 on 80 of rc_lloyd's 130 cells (geometric
means of the ratio 0.84 and 0.87), and the rule's leave-one-shape-out check has 76 of 104
small-table cells within 1.25× of the best on both statistics with the sign start as rc_lloyd's,
against 61 with the gauss start and 71 with both as candidates (docs/peers.md, sixth stop).

Rows are clipped to the declared Λ-ball first (as everywhere in dpviz), so the gauss start's
sensitivities are gauss_fit's. The denominator of the start's statistics is the declared size n.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpviz._validation import (
    MAX_CLUSTERS,
    check_data,
    check_delta,
    check_radius,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.clustering.gauss_fit import MEAN_SHARE, gauss_fit, noisy_mean, quantize_gaussian
from dpviz.clustering.sign_axes import mean_distance, sign_axes
from dpviz.data.bounds import clip_to_ball
from dpviz.geometry import nearest_center
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp
from dpviz.result import Result, Trace

#: A cluster whose noisy count is below this keeps its center (and this floors the divisor).
MIN_COUNT = 2.0
#: The private starts: the spatial signs' (the default since issue 44's sixth stop) or gauss_fit's
#: (noisy mean and second moment); module docstring.
STARTS = ("sign", "gauss")
#: ``start="sign"``: the share of the start's ρ for the mean distance (the mean takes MEAN_SHARE, the
#: spatial sign covariance the rest).
SIGN_SCALE_SHARE = 0.1


def step_budgets(rho: float, start_share: float, iters: int,
                 count_share: float) -> tuple[float, float, float]:
    """(ρ of the start, ρ of one step's sums, ρ of one step's counts): the start takes
    ``start_share``·ρ, each of the T steps (1 − start_share)·ρ/T split (1 − count_share, count_share)."""
    rho_start = start_share * rho
    rho_step = (rho - rho_start) / iters
    return rho_start, (1.0 - count_share) * rho_step, count_share * rho_step


def step_radii(radius: float, step_frac: float, step_decay: float, iters: int) -> np.ndarray:
    """The public clip radii R_t = step_frac·Λ·step_decay^t of the displacements, t = 0 … T − 1."""
    return step_frac * radius * step_decay ** np.arange(iters)


def split_coincident(C: np.ndarray, scale: float, axes: np.ndarray) -> tuple[np.ndarray, int]:
    """Centers with every repeat moved along ± the start's principal axes, and how many moved.

    gauss_fit answers k copies of the noisy mean when every eigenvalue of its noisy second moment
    is under the noise edge; a Lloyd step cannot separate identical centers (every row goes to
    the first). The i-th repeat (i = 0, 1, …) moves by (1 + ⌊i/2m⌋)·``scale`` along
    (−1)^i·v_{⌊i/2⌋ mod m}, where v_1 … v_m are the columns of ``axes`` (gauss_fit's top
    eigenvectors of the noisy Σ̂, largest first): mean ± v₁, ± v₂, …, and no two repeats coincide.
    Issue 44: a public random direction cut the data through the mean at random and merged two
    clusters in up to half the draws on iris-sized tables; the noisy Σ̂'s eigenvectors, though their
    eigenvalues are under the edge, still lean toward the spread. Free: it reads only gauss_fit's
    release (post-processing: Dwork & Roth 2014, Prop. 2.1; zCDP is closed under it too, Bun &
    Steinke 2016)."""
    C = C.copy()
    _, first = np.unique(C, axis=0, return_index=True)
    repeat = np.setdiff1d(np.arange(C.shape[0]), first)
    i = np.arange(repeat.size)
    m = axes.shape[1]
    length = scale * (1 + i // (2 * m)) * np.where(i % 2 == 0, 1.0, -1.0)
    C[repeat] += length[:, None] * axes[:, (i // 2) % m].T
    return C, int(repeat.size)


def gauss_start(X: np.ndarray, k: int, rho: float, radius: float, n_declared: int, scale: float,
                gen: np.random.Generator, ledger: Ledger, trace: Trace) -> tuple[np.ndarray, int]:
    """(start centers, how many were split apart): gauss_fit at ρ (its ledger a child of ``ledger``,
    its trace appended), coincident centers split along its noisy Σ̂'s top eigenvectors."""
    start = gauss_fit(X, k, rho=rho, radius=radius, n_declared=n_declared, rng=gen)
    ledger.children.append(start.ledger)
    trace.extend(start.trace)
    fit = start.find("gaussian_fit")
    assert fit is not None  # gauss_fit with its default moments = 2 always records its fit
    return split_coincident(np.asarray(start.centers, dtype=np.float64), scale, fit.data["axes"])


def sign_start(Xc: np.ndarray, k: int, rho: float, radius: float, n_declared: int, scale: float,
               gen: np.random.Generator, ledger: Ledger, trace: Trace) -> tuple[np.ndarray, int]:
    """(start centers, how many were split apart) from three releases at ρ in all (module docstring):

    1. the noisy mean μ̂ (``MEAN_SHARE``·ρ; the sum of the clipped rows ``Xc``, sensitivity Λ, ÷ the
       declared n, projected into the ball);
    2. the noisy mean distance s from μ̂ (``SIGN_SCALE_SHARE``·ρ; sensitivity 2Λ,
       :func:`dpviz.clustering.sign_axes.mean_distance`);
    3. the noisy spatial sign covariance M̂ around μ̂ (the rest;
       :func:`dpviz.clustering.sign_axes.sign_axes`).

    The centers quantize N(μ̂, s²·M̂) after shrinking M̂'s eigenvalues by its noise edge, as gauss_fit
    quantizes its fit (for elliptical rows x − μ = r·u, s²·M ≈ E r²·E uuᵀ, the covariance's shape at
    its scale); when no eigenvalue clears the edge the k copies of μ̂ are split along M̂'s top
    eigenvectors by ``scale`` (:func:`split_coincident`). Post-processing after the releases."""
    node = ledger.child("sign start", ZCDP(rho))
    rho_mean, rho_scale = MEAN_SHARE * rho, SIGN_SCALE_SHARE * rho
    mean = noisy_mean(Xc, radius, rho=rho_mean, n_declared=n_declared, rng=gen, ledger=node, trace=trace)
    s = mean_distance(Xc, mean, radius, rho=rho_scale, n_declared=n_declared, rng=gen, ledger=node)
    rho_axes = rho - rho_mean - rho_scale
    lam, axes, edge = sign_axes(Xc, mean, min(k, Xc.shape[1]), rho=rho_axes, n_declared=n_declared,
                                rng=gen, ledger=node)
    C, kept = quantize_gaussian(mean, None, k, s**2 * edge, gen, axes=(s**2 * lam, axes))
    trace.add("sign_axes", released=True, eigenvalues=lam, noise_edge=edge, axes=axes, mean_distance=s,
              directions=int(kept.size), sigma=gaussian_sigma_zcdp(1.0, rho_axes))
    return split_coincident(clip_to_ball(C, radius), scale, axes)


def clipped_displacements(Xc: np.ndarray, C: np.ndarray,
                          R: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, per-cluster sums of min(1, R/‖u‖)·u with u = x − c_label, counts): each row adds a
    vector of norm ≤ R to one cluster's sum and 1 to its count."""
    k, d = C.shape
    labels, d2 = nearest_center(Xc, C)
    U = Xc - C[labels]
    norm = np.sqrt(d2)
    U *= np.minimum(1.0, R / np.maximum(norm, 1e-300))[:, None]
    sums = np.stack([np.bincount(labels, weights=U[:, j], minlength=k) for j in range(d)], axis=1) \
        if d else np.zeros((k, 0))  # loop over dimensions, not rows
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    return labels, sums, counts


def rc_lloyd(X: np.ndarray, k: int, *, rho: float, radius: float, n_declared: int, iters: int = 8,
             start_share: float = 0.3, count_share: float = 0.2, step_frac: float = 0.2,
             step_decay: float = 0.8, start: str = "sign", delta: float = 0.0, rng: Any = None) -> Result:
    """Radius-constrained noisy Lloyd from a private start (module docstring).

    Privacy
    -------
    ρ-zCDP under add/remove of one row, by sequential composition (Bun & Steinke 2016, Lemma 2.3)
    of the start (``start_share``·ρ: with ``start="sign"`` the Gaussian releases of the mean
    (sensitivity Λ), the mean distance (2Λ) and the spatial sign covariance (1), each measured from
    released values, :mod:`dpviz.clustering.sign_axes`; with ``start="gauss"`` gauss_fit's own
    proof) and T steps of (1 − start_share)·ρ/T,
    each the parallel composition over the k disjoint clusters of a Gaussian displacement sum
    (sensitivity R_t: one row adds or removes one clipped displacement of norm ≤ R_t; the centers
    it is measured from are the previous release) and a Gaussian count (sensitivity 1).
    Everything else is post-processing. The δ argument is reserved, unspent.
    """
    func = "rc_lloyd"
    X = check_data(X, func)
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_radius(radius, "radius", func)
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    iters = check_scalar(iters, "iters", func, low=1, high=10, integer=True)
    start_share = check_scalar(start_share, "start_share", func, low=0.05, high=0.95)
    count_share = check_scalar(count_share, "count_share", func, low=0.05, high=0.95)
    step_frac = check_scalar(step_frac, "step_frac", func, low=0.01, high=2.0)
    step_decay = check_scalar(step_decay, "step_decay", func, low=0.1, high=1.0)
    if start not in STARTS:
        raise ValueError(f"The 'start' parameter of {func} must be one of {list(STARTS)}. "
                         f"Got {start!r} instead.")
    gen, seed = check_rng(rng, "algorithm:rc_lloyd")
    ledger = Ledger(func, ZCDP(rho, delta))
    trace = Trace()
    rho_start, rho_sum, rho_count = step_budgets(rho, start_share, iters, count_share)
    radii = step_radii(radius, step_frac, step_decay, iters)
    Xc = clip_to_ball(X, radius)
    if start == "gauss":
        C, split = gauss_start(X, k, rho_start, radius, n_declared, 0.5 * float(radii[0]), gen, ledger, trace)
        note = ("gauss_fit's centers (coincident ones moved apart along its noisy Σ̂'s top eigenvectors): "
                "the private start")
    else:
        C, split = sign_start(Xc, k, rho_start, radius, n_declared, 0.5 * float(radii[0]), gen, ledger, trace)
        note = ("the k-means of N(μ̂, s²·M̂) from the noisy mean, mean distance and spatial sign covariance "
                "(coincident ones moved apart along M̂'s top eigenvectors): the private start")
    trace.add("rc_start", released=True, centers=C.copy(), rho=rho_start, split=split, start=start, note=note)
    for t, R in enumerate(radii):
        _, sums, counts = clipped_displacements(Xc, C, float(R))
        node = ledger.child(f"step {t + 1}", ZCDP(rho_sum + rho_count))
        sums_node = node.child("displacement sums", ZCDP(rho_sum), composition="parallel",
                               note=f"one row adds a displacement of norm ≤ R = {R:.4g} to one cluster")
        counts_node = node.child("cluster counts", ZCDP(rho_count), composition="parallel",
                                 note="one row changes one cluster's count by 1")
        noisy_sums = np.empty_like(sums)
        noisy_counts = np.empty(k)
        for j in range(k):  # loop over clusters (parallel composition)
            noisy_sums[j] = gaussian(sums[j], sensitivity=float(R), rho=rho_sum, rng=gen, ledger=sums_node,
                                     name=f"sum[{j}]")
            noisy_counts[j] = gaussian(float(counts[j]), sensitivity=1.0, rho=rho_count, rng=gen,
                                       ledger=counts_node, name=f"count[{j}]")
        ok = noisy_counts >= MIN_COUNT
        move = clip_to_ball(noisy_sums[ok] / noisy_counts[ok, None], float(R))  # FastLloyd's clip_distance
        C[ok] = clip_to_ball(C[ok] + move, radius)
        trace.add("rc_step", released=True, index=t, centers=C.copy(), noisy_counts=noisy_counts,
                  step_radius=float(R), sigma_sum=gaussian_sigma_zcdp(float(R), rho_sum),
                  sigma_count=gaussian_sigma_zcdp(1.0, rho_count), kept_previous=~ok)
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta), note="rc_lloyd is pure ρ-zCDP.")
    trace.add("rc_centers", released=True, centers=C.copy())
    ledger.check()
    return Result(centers=C, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, rho=rho, delta=delta, radius=radius, iters=iters,
                              start_share=start_share, count_share=count_share, step_frac=step_frac,
                              step_decay=step_decay, start=start, n_declared=n_declared),
                  seed=seed, simulation=is_simulation(rng))
