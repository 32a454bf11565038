"""k-means of a private Gaussian fit: the cheap, low-information answer for small data.

On small data at small ε every private clustering pays noise per cluster; when the data is also
weakly clustered, the best private answer looks at the data as little as possible. This module
releases only the first two moments of the rows, each with the Gaussian mechanism (Dwork,
Talwar, Thakurta, Zhang 2014, "Analyze Gauss", for the second moment), and answers with the k
centers that best quantize the fitted Gaussian N(μ̂, Σ̂) — post-processing that reads no row.

* ``moments=1``: the noisy mean, k times (a private 1-means).
* ``moments=2`` (default): μ̂ and Σ̂ = Ŝ/n − μ̂μ̂ᵀ, its eigenvalues shrunk by the public noise edge
  (2√d·σ_S/n, the spectral norm of the noise matrix) and clipped at 0, then the k-means centers of
  a sample from N(0, Σ̂) restricted to its top min(k, d) directions, shifted by μ̂. When every
  eigenvalue is under the noise edge the answer is the noisy mean (the fit degrades to 1-means).
  The trace keeps those top min(k, d) eigenvectors of the noisy Σ̂ (``axes``, before shrinking;
  post-processing of the release): ``rc_lloyd`` splits a collapsed start along them.

The denominator is the declared size n (public), not a noisy count. Rows are clipped to the
declared ball first, so one row moves the sum by ≤ Λ and the upper triangle of Σxxᵀ by ≤ Λ² in
ℓ2 (Σ_{i≤j}(x_i x_j)² ≤ ‖x‖⁴).
"""

from __future__ import annotations

import math
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
from dpviz.data.bounds import clip_to_ball
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp
from dpviz.result import Result, Trace

#: Share of ρ for the mean when the second moment is released too (a fixed, public split).
MEAN_SHARE = 0.5
#: Sample drawn from the fitted Gaussian per center (post-processing; no privacy cost).
SAMPLE_PER_CENTER = 400
#: Cap on that sample (issue 44: the quantizer's time at k = 55).
SAMPLE_MAX = 8000
#: Largest d for ``moments=2``: the second moment is a d × d matrix (2000² doubles = 32 MB).
MAX_DIM_SECOND_MOMENT = 2000


def noise_edge(d: int, sigma: float, n: int) -> float:
    """Spectral norm of the symmetric Gaussian noise on Σ̂ (entries sd σ/n): ≈ 2√d·σ/n."""
    return 2.0 * math.sqrt(d) * sigma / n


#: Lloyd iterations of the quantizer (it stops earlier when no label changes) and its restarts.
QUANTIZER_ITERS = 30
QUANTIZER_RESTARTS = 2


def lloyd_quantizer(Z: np.ndarray, k: int, gen: np.random.Generator) -> np.ndarray:
    """The k-means centers of the sample ``Z`` (post-processing of public draws): k-means++ seeding
    (Arthur & Vassilvitskii 2007) and Lloyd's iterations in numpy, the best of
    :data:`QUANTIZER_RESTARTS`. Issue 44: scikit-learn's KMeans(n_init=3) here cost 9–43× one KMeans
    on the data of a small table (its fixed overhead on a 400·k sample); this costs well under it."""
    best, best_cost = None, np.inf
    sq = np.einsum("ij,ij->i", Z, Z)
    for _ in range(QUANTIZER_RESTARTS):
        C = Z[[int(gen.integers(Z.shape[0]))]]
        d2 = np.maximum(sq - 2.0 * Z @ C[0] + C[0] @ C[0], 0.0)
        for _ in range(1, k):  # k-means++ seeding: each next center drawn ∝ D²
            total = d2.sum()
            c = Z[int(gen.choice(Z.shape[0], p=d2 / total) if total > 0 else gen.integers(Z.shape[0]))]
            C = np.vstack([C, c])
            d2 = np.minimum(d2, np.maximum(sq - 2.0 * Z @ c + c @ c, 0.0))
        labels = None
        for _ in range(QUANTIZER_ITERS):  # ‖z‖² is the same for every center: left out of the argmin
            new = np.argmin(np.einsum("ij,ij->i", C, C)[None, :] - 2.0 * Z @ C.T, axis=1)
            if labels is not None and np.array_equal(new, labels):
                break
            labels = new
            counts = np.bincount(labels, minlength=k)
            sums = np.stack([np.bincount(labels, weights=Z[:, j], minlength=k) for j in range(Z.shape[1])],
                            axis=1)  # loop over the ≤ k sample dimensions
            C = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
        cost = float(np.min(sq[:, None] - 2.0 * Z @ C.T + np.einsum("ij,ij->i", C, C)[None, :], axis=1).sum())
        if cost < best_cost:
            best, best_cost = C, cost
    assert best is not None
    return best


def noisy_mean(Xc: np.ndarray, radius: float, *, rho: float, n_declared: int, rng: np.random.Generator,
               ledger: Ledger, trace: Trace) -> np.ndarray:
    """The noisy mean of the clipped rows ``Xc``: their sum with Gaussian noise at ρ (sensitivity Λ),
    ÷ the declared n, projected into the Λ-ball; booked on ``ledger``, traced as "mean"."""
    mean = gaussian(Xc.sum(axis=0), sensitivity=radius, rho=rho, rng=rng, ledger=ledger,
                    name="sum", note="one row moves the sum of clipped rows by ≤ Λ") / n_declared
    mean = clip_to_ball(mean[None, :], radius)[0]
    trace.add("mean", released=True, mean=mean.copy(), sigma_sum=gaussian_sigma_zcdp(radius, rho),
              n_declared=n_declared)
    return mean


def noisy_symmetric(S: np.ndarray, *, sensitivity: float, rho: float, rng: np.random.Generator,
                    ledger: Ledger, name: str, note: str) -> np.ndarray:
    """The symmetric matrix ``S`` released as its upper triangle with Gaussian noise at ρ (ℓ2
    ``sensitivity``), mirrored below the diagonal (post-processing)."""
    iu = np.triu_indices(S.shape[0])
    out = np.zeros_like(S, dtype=np.float64)
    out[iu] = gaussian(S[iu], sensitivity=sensitivity, rho=rho, rng=rng, ledger=ledger, name=name, note=note)
    return out + np.triu(out, 1).T


def top_axes(cov: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(the m largest eigenvalues of the symmetrized ``cov``, descending; their unit eigenvectors as
    the columns of a d × m matrix). Post-processing of a released covariance."""
    lam, vec = np.linalg.eigh((cov + cov.T) / 2.0)
    order = np.argsort(lam)[::-1][:m]
    return lam[order], vec[:, order]


def quantize_gaussian(mean: np.ndarray, cov: np.ndarray | None, k: int, edge: float,
                      gen: np.random.Generator,
                      axes: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """k centers quantizing N(mean, cov) after shrinking its eigenvalues by ``edge``.

    ``axes``: ``top_axes(cov, min(k, d))`` when the caller has it already (then ``cov`` may be None).
    Returns (centers, shrunk eigenvalues of the kept directions). Post-processing only.
    """
    if axes is None:
        assert cov is not None
        axes = top_axes(cov, min(k, cov.shape[0]))
    lam, vec = axes
    lam = np.maximum(lam - edge, 0.0)
    keep = lam > 0
    if k == 1 or not np.any(keep):
        return np.repeat(mean[None, :], k, axis=0), lam[keep]
    basis = vec[:, keep] * np.sqrt(lam[keep])
    Z = gen.standard_normal((min(SAMPLE_PER_CENTER * k, SAMPLE_MAX), basis.shape[1]))
    return mean[None, :] + lloyd_quantizer(Z, k, gen) @ basis.T, lam[keep]


def gauss_fit(X: np.ndarray, k: int, *, rho: float, radius: float, n_declared: int, moments: int = 2,
              delta: float = 0.0, rng: Any = None) -> Result:
    """The k-means centers of a ρ-zCDP Gaussian fit to the rows (module docstring).

    Privacy
    -------
    ρ-zCDP under add/remove of one row: the noisy sum (sensitivity Λ) and, with ``moments=2``,
    the noisy upper triangle of Σxxᵀ (sensitivity Λ²), at ρ·MEAN_SHARE and ρ·(1 − MEAN_SHARE)
    (all of ρ to the sum with ``moments=1``). Everything after is post-processing.
    """
    func = "gauss_fit"
    X = check_data(X, func)
    d = X.shape[1]
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_radius(radius, "radius", func)
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    moments = check_scalar(moments, "moments", func, low=1, high=2, integer=True)
    if moments == 2 and d > MAX_DIM_SECOND_MOMENT:
        raise ValueError(f"The 'moments' parameter of {func} must be 1 when d > {MAX_DIM_SECOND_MOMENT} "
                         f"(the second moment is a d × d matrix). Got d = {d}.")
    gen, seed = check_rng(rng, "algorithm:gauss_fit")
    Xc = clip_to_ball(X, radius)
    ledger = Ledger(func, ZCDP(rho, delta))
    trace = Trace()
    rho_mean = rho if moments == 1 else rho * MEAN_SHARE
    mean = noisy_mean(Xc, radius, rho=rho_mean, n_declared=n_declared, rng=gen, ledger=ledger, trace=trace)
    if moments == 1:
        centers = np.repeat(mean[None, :], k, axis=0)
    else:
        rho_cov = rho - rho_mean
        Sn = noisy_symmetric(Xc.T @ Xc, sensitivity=radius**2, rho=rho_cov, rng=gen, ledger=ledger,
                             name="second moment", note="upper triangle of Σxxᵀ; one row moves it by ≤ Λ²")
        sigma_cov = gaussian_sigma_zcdp(radius**2, rho_cov)
        edge = noise_edge(d, sigma_cov, n_declared)
        cov = Sn / n_declared - np.outer(mean, mean)
        axes = top_axes(cov, min(k, d))
        centers, lam = quantize_gaussian(mean, cov, k, edge, gen, axes=axes)
        centers = clip_to_ball(centers, radius)
        trace.add("gaussian_fit", released=True, eigenvalues=lam, noise_edge=edge, sigma_cov=sigma_cov,
                  directions=int(lam.size), axes=axes[1])
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta), note="gauss_fit is pure ρ-zCDP.")
    trace.add("gauss_fit_centers", released=True, centers=centers.copy())
    ledger.check()
    return Result(centers=centers, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, rho=rho, delta=delta, radius=radius, moments=moments,
                              n_declared=n_declared), seed=seed, simulation=is_simulation(rng))
