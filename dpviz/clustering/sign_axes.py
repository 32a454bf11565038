"""Private principal axes from spatial signs: directions that survive small n·ε.

The spatial sign covariance matrix (Locantore et al. 1999, "Robust principal component analysis
for functional data", §2; Visuri, Koivunen & Oja 2000) of rows x around a center μ is
Σ_i u_i u_iᵀ with u_i = (x_i − μ)/‖x_i − μ‖ (u_i = 0 when x_i = μ). For elliptical data its
eigenvectors are those of the covariance; on a mixture its top eigenvectors lean toward the
directions that separate the clusters, as the covariance's do.

Why it is released here (issue 44). ``gauss_fit`` releases the second moment Σxxᵀ, whose
sensitivity is Λ² (a row anywhere in the Λ-ball). On the small standardized tables the rows sit
far inside that ball (iris: Λ = 2, 90% of rows within 0.89 of the mean), so the noise buries the
spread: on iris-sized calibration tables at ε = 3 every eigenvalue falls under the noise edge in
about 60% of draws and the released top eigenvector is close to a random one. Each spatial sign has
norm 1 whatever Λ is, so the noise no longer scales with the declared ball.

Privacy. One row adds or removes one term u uᵀ; the ℓ2 norm of its upper triangle is
(Σ_{i≤j} (u_i u_j)²)^{1/2} ≤ ‖u‖² ≤ 1, so the Gaussian mechanism with sensitivity 1 at ρ is
ρ-zCDP (Bun & Steinke 2016, Prop. 1.6). The center μ must be a previous release (or public): the
signs are then measured from a fixed point, and the composition is adaptive (Lemma 2.3 there).
Everything after the noisy matrix is post-processing.

The signs carry no scale. :func:`mean_distance` releases one: the mean of ‖x − μ‖ over the rows,
whose sum moves by ≤ 2Λ when one row is added or removed (x and μ both lie in the Λ-ball).
"""

from __future__ import annotations

import numpy as np

from dpviz.clustering.gauss_fit import noise_edge, noisy_symmetric, top_axes
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp


def spatial_signs(Xc: np.ndarray, center: np.ndarray) -> np.ndarray:
    """(x − center)/‖x − center‖ per row; a row at the center gives 0 (it adds nothing). Each row is
    first divided by its largest |coordinate|, so the norm neither underflows nor overflows and every
    nonzero row has norm 1 to rounding, however close to the center it lies."""
    U = Xc - center[None, :]
    scale = np.max(np.abs(U), axis=1, initial=0.0)
    V = U / np.where(scale > 0, scale, 1.0)[:, None]
    norm = np.sqrt(np.einsum("ij,ij->i", V, V))
    return V / np.where(norm > 0, norm, 1.0)[:, None]


def mean_distance(Xc: np.ndarray, center: np.ndarray, radius: float, *, rho: float, n_declared: int,
                  rng: np.random.Generator, ledger: Ledger) -> float:
    """The noisy mean distance of the rows ``Xc`` (clipped to the Λ-ball) from the released point
    ``center`` in that ball: Σ‖x − center‖ with Gaussian noise at ρ (sensitivity 2Λ), ÷ the declared
    n, floored at 0 (post-processing)."""
    U = Xc - center[None, :]
    total = float(np.sqrt(np.einsum("ij,ij->i", U, U)).sum())
    noisy = gaussian(total, sensitivity=2.0 * radius, rho=rho, rng=rng, ledger=ledger,
                     name="sum of distances", note="one row moves Σ‖x − μ̂‖ by ≤ 2Λ")
    return max(noisy / n_declared, 0.0)


def sign_axes(Xc: np.ndarray, center: np.ndarray, m: int, *, rho: float, n_declared: int,
              rng: np.random.Generator, ledger: Ledger) -> tuple[np.ndarray, np.ndarray, float]:
    """(the m largest eigenvalues of the noisy spatial sign covariance ÷ n, descending; their unit
    eigenvectors as the columns of a d × m matrix; the noise edge 2√d·σ/n) — one Gaussian release
    of the upper triangle of Σ u uᵀ at ρ (sensitivity 1), booked on ``ledger`` (module docstring).

    ``Xc`` are the rows already clipped to the declared ball; ``center`` is a released point.
    """
    U = spatial_signs(Xc, center)
    M = noisy_symmetric(U.T @ U, sensitivity=1.0, rho=rho, rng=rng, ledger=ledger,
                        name="spatial sign covariance",
                        note="upper triangle of Σ uuᵀ, u = (x − μ̂)/‖x − μ̂‖; one row moves it by ≤ 1")
    lam, vec = top_axes(M / n_declared, m)
    return lam, vec, noise_edge(Xc.shape[1], gaussian_sigma_zcdp(1.0, rho), n_declared)
