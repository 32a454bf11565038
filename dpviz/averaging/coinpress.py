"""CoinPress mean estimation with known covariance I (Biswas, Dong, Kamath & Ullman 2020).

The baseline of Tsfadia et al. 2022, Fig. 5. Start from a public ball B(c, R) known to contain
the mean; each iteration clips the data to a slightly larger ball, releases a noisy mean, and
shrinks the ball around it to the radius the noise and the sampling error allow. The last
iteration's noisy mean is the estimate.

Re-implemented from the paper (Algorithms 1-2, "MVMRec" and "MVM"); our reading of the
clipping radius and budget split follows its public test bed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz._validation import RngLike, check_data, check_rho, check_rng, check_scalar
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp
from dpviz.result import Result, Trace


def gaussian_tail_radius(d: int, beta: float) -> float:
    """γ(d, β) = √(d + 2√(d ln(1/β)) + 2 ln(1/β)): Pr[‖N(0, I_d)‖ > γ] ≤ β (Laurent-Massart)."""
    lb = math.log(1.0 / beta)
    return math.sqrt(d + 2.0 * math.sqrt(d * lb) + 2.0 * lb)


def coinpress_rho_schedule(rho: float, iters: int) -> list[float]:
    """The per-iteration budgets: ρ/4 shared evenly by the first t − 1 iterations, 3ρ/4 for the
    last (the split of the CoinPress experiments); all of ρ when t = 1."""
    if iters == 1:
        return [rho]
    return [rho / (4.0 * (iters - 1))] * (iters - 1) + [0.75 * rho]


@dataclass(frozen=True)
class CoinPressStep:
    """One iteration: the ball B(c, r) going in, the clip radius, the noise σ, the ball out."""

    c_in: np.ndarray
    r_in: float
    clip: float
    rho: float
    sigma: float
    c_out: np.ndarray
    r_out: float


def _coinpress_step(
    X: np.ndarray, c: np.ndarray, r: float, rho_t: float, beta: float,
    rng: np.random.Generator, ledger: Ledger, name: str,
) -> CoinPressStep:
    """One MVMRec step (BDKU20, Alg. 1) with n treated as public."""
    n, d = X.shape
    gamma = gaussian_tail_radius(d, beta / n)  # all n points' noise within γ, union bound
    # x_i − c = (μ − c) + z_i with ‖μ − c‖ ≤ r: ‖x_i − c‖² ≤ r² + 2r·√(2 ln(2n/β)) + γ² w.h.p.
    # (the tighter radius of the CoinPress code); r + γ is the triangle-inequality bound.
    clip = min(r + gamma, math.sqrt(r * r + 2.0 * r * math.sqrt(2.0 * math.log(2.0 * n / beta))
                                    + gamma * gamma))
    diff = X - c
    norms = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    scale = np.minimum(1.0, clip / np.maximum(norms, np.finfo(float).tiny))
    mean = c + (scale @ diff) / n  # the mean of the rows projected onto B(c, clip)
    sens = 2.0 * clip / n  # replacing one clipped row moves the mean by ≤ 2·clip/n
    c_out = np.asarray(gaussian(mean, sensitivity=sens, rho=rho_t, rng=rng, ledger=ledger,
                                name=name, note="clipped mean, n public"))
    sigma = gaussian_sigma_zcdp(sens, rho_t)  # the σ gaussian() drew with
    # The new ball: sampling error (variance 1/n per coordinate) plus noise (σ²), at level β.
    r_out = math.sqrt(1.0 / n + sigma * sigma) * gaussian_tail_radius(d, beta)
    return CoinPressStep(c, r, clip, rho_t, sigma, c_out, r_out)


def coinpress_mean(
    X: np.ndarray,
    *,
    rho: float,
    R: float,
    iters: int = 4,
    c: np.ndarray | None = None,
    beta: float = 0.01,
    rng: RngLike = None,
) -> Result:
    """CoinPress: private mean of N(μ, I) data given a public ball B(c, R) ∋ μ.

    Parameters
    ----------
    X : (n, d) array, n ≥ 1
    rho : float
        zCDP budget, > 0: ρ/4 over the first t − 1 iterations, 3ρ/4 for the last.
    R : float
        Public radius with ‖μ − c‖ ≤ R, > 0.
    iters : int
        Number of iterations t ≥ 1.
    c : (d,) array, optional
        Public center (default the origin).
    beta : float
        Per-iteration failure probability of the utility analysis (clip and shrink radii).
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers`` (1, d); trace steps ``coinpress_iter`` (released per iteration: c_out,
        r_out, clip, sigma) and ``coinpress_nonprivate`` (internal: the mean).

    Privacy
    -------
    ρ-zCDP under replacement of one row with n public (the model of BDKU20): each iteration is
    a Gaussian mechanism on a mean of rows clipped to a public ball (ℓ2 sensitivity 2·clip/n),
    composed over the iterations. Unlike FC_Avg (add/remove), it uses the true n in its noise.

    References
    ----------
    Biswas, Dong, Kamath & Ullman 2020, "CoinPress: Practical Private Mean and Covariance
    Estimation", Algorithms 1-2 (known covariance); Tsfadia et al. 2022, §6.1 (Fig. 5).
    """
    func = "coinpress_mean"
    X = check_data(X, func, allow_empty=False)
    rho = check_rho(rho, func)
    R = check_scalar(R, "R", func, low=0.0, high=math.inf, low_open=True, high_open=True)
    iters = check_scalar(iters, "iters", func, low=1, integer=True)
    beta = check_scalar(beta, "beta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    d = X.shape[1]
    if c is None:
        center = np.zeros(d)
    else:
        center = np.asarray(c, dtype=np.float64)
        if center.shape != (d,) or not np.all(np.isfinite(center)):
            raise ValueError(f"The 'c' parameter of {func} must be a finite array of shape ({d},). "
                             f"Got shape {center.shape}.")
    gen, seed = check_rng(rng, "averaging:coinpress_mean")
    ledger = Ledger("CoinPress", ZCDP(rho),
                    note="replace-one neighbours with public n (BDKU20)")
    trace = Trace()
    r = R
    for t, rho_t in enumerate(coinpress_rho_schedule(rho, iters), start=1):
        step = _coinpress_step(X, center, r, rho_t, beta, gen, ledger,
                               name=f"iteration {t}/{iters}: clipped mean + N(0, σ²I)")
        trace.add("coinpress_iter", released=True, iteration=t, c_in=step.c_in, r_in=step.r_in,
                  clip=step.clip, rho=step.rho, sigma=step.sigma, c_out=step.c_out,
                  r_out=step.r_out)
        center, r = step.c_out, step.r_out
    ledger.check()
    trace.add("coinpress_nonprivate", released=False, mean=X.mean(axis=0),
              note="non-private mean, for comparison only")
    params = dict(rho=rho, R=R, iters=iters, beta=beta)
    return Result(center[None, :], None, ledger, trace.freeze(), params, seed)
