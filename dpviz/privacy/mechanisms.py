"""Noise mechanisms. Each takes the sensitivity and the budget, draws from a numpy Generator,
and records itself in the ledger (name, budget, sensitivity, noise scale).

References: Tsfadia et al. 2022, Thm 2.2 (Gaussian σ = Δ₂/√(2ρ) for ρ-zCDP); Balle & Wang 2018
(analytic Gaussian for (ε, δ)-DP); Dwork & Roth 2014 (Laplace); McSherry & Talwar 2007
(exponential mechanism).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from dpviz._validation import check_scalar
from dpviz.privacy.accounting import bounded_range_eps
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger


def _perturb(value: np.ndarray | float, noise: np.ndarray) -> np.ndarray | float:
    """value + noise, keeping a scalar a Python float."""
    return value + noise if np.ndim(value) else float(value + noise)


def _add_gaussian(value: np.ndarray | float, sigma: float, rng: np.random.Generator) -> np.ndarray | float:
    """value + N(0, σ²I): by the release sampler's OpenDP measurement when ``rng`` is a
    :class:`dpviz.privacy.release.SecureRNG` (floating-point safe), else from the Generator."""
    release = getattr(rng, "gaussian_release", None)
    if release is not None:
        return release(value, sigma)
    return _perturb(value, rng.normal(0.0, sigma, size=np.shape(value)))


def gaussian_sigma_zcdp(sensitivity: float, rho: float) -> float:
    """σ = Δ₂ / √(2ρ): the Gaussian mechanism is ρ-zCDP (Tsfadia et al. 2022, Thm 2.2)."""
    check_scalar(sensitivity, "sensitivity", "gaussian_sigma_zcdp", low=0.0)
    check_scalar(rho, "rho", "gaussian_sigma_zcdp", low=0.0, low_open=True)
    return sensitivity / math.sqrt(2.0 * rho)


def _analytic_gaussian_delta(sigma: float, sensitivity: float, eps: float) -> float:
    """Exact δ of the Gaussian mechanism at ε (Balle & Wang 2018, Thm 8)."""
    a = sensitivity / (2.0 * sigma)
    b = eps * sigma / sensitivity
    return math.exp(log_ndtr(a - b)) - math.exp(eps + log_ndtr(-a - b))


def gaussian_sigma_dp(sensitivity: float, eps: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism is (ε, δ)-DP (analytic, any ε > 0).

    Unlike the classic σ = Δ√(2 ln(1.25/δ))/ε it is exact and valid for ε ≥ 1.
    """
    check_scalar(sensitivity, "sensitivity", "gaussian_sigma_dp", low=0.0, low_open=True)
    check_scalar(eps, "eps", "gaussian_sigma_dp", low=0.0, low_open=True)
    check_scalar(delta, "delta", "gaussian_sigma_dp", low=0.0, high=1.0, low_open=True, high_open=True)
    hi = sensitivity * (1.0 + math.sqrt(2.0 * math.log(1.25 / delta))) / eps * 4.0
    while _analytic_gaussian_delta(hi, sensitivity, eps) > delta:
        hi *= 2.0
    lo = hi / 2.0
    while lo > 1e-300 and _analytic_gaussian_delta(lo, sensitivity, eps) <= delta:
        lo /= 2.0
    sigma = brentq(lambda s: _analytic_gaussian_delta(s, sensitivity, eps) - delta, lo, hi,
                   xtol=1e-14 * hi, rtol=1e-12)
    # Round up so the returned σ never falls on the wrong side of δ.
    while _analytic_gaussian_delta(sigma, sensitivity, eps) > delta:
        sigma *= 1.0 + 1e-12
    return float(sigma)


def gaussian_draw(
    value: np.ndarray | float,
    *,
    sensitivity: float,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str,
    charge: ZCDP | None = None,
    note: str = "",
) -> tuple[np.ndarray | float, float]:
    """(value + N(0, σ²I), σ) with σ = Δ₂/√(2ρ); records a ρ-zCDP spend.

    The σ returned is the one drawn with and recorded in the ledger: callers that report it
    (trace steps, outcomes) read it here instead of recomputing it. ``charge`` overrides the
    accounted cost when a proof charges more than ρ for this draw (e.g. FriendlyAvg draws n̂ with
    ρ₁ = 0.1(1−δ)ρ but pays 0.1ρ after conditioning, Fact 2.4.4).
    """
    sigma = gaussian_sigma_zcdp(sensitivity, rho)
    ledger.record(name, "gaussian", charge or ZCDP(rho), sensitivity=sensitivity,
                  noise_scale=sigma, note=note)
    return _add_gaussian(value, sigma, rng), sigma


def gaussian(
    value: np.ndarray | float,
    *,
    sensitivity: float,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str,
    charge: ZCDP | None = None,
    note: str = "",
) -> np.ndarray | float:
    """value + N(0, σ²I) with σ = Δ₂/√(2ρ); records a ρ-zCDP spend (:func:`gaussian_draw`
    without the σ)."""
    return gaussian_draw(value, sensitivity=sensitivity, rho=rho, rng=rng, ledger=ledger, name=name,
                         charge=charge, note=note)[0]


def size_underestimate(
    n: int, *, charge: float, delta: float, rng: np.random.Generator, ledger: Ledger, name: str,
    event: str, note: str = "",
) -> float:
    """n̂ = n − √(ln(1/δ)/ρ₁) − 1 + N(0, 1/(2ρ₁)): a private size that is ≤ n w.p. ≥ 1 − δ.

    The one n̂ of FriendlyAvg (Tsfadia et al. 2022, §3, step 2) and FriendlyOrdTupAvg (§5.2.3,
    step 2). ρ₁ = (1 − δ)·``charge`` is drawn with and ``charge`` accounted: the consumers
    condition on N̂ ≤ n, which costs the factor 1/(1 − δ) (Fact 2.4.4). Records the draw and the
    event δ (``event`` names the consumer's section in its note). Sensitivity 1 (add/remove).
    """
    rho1 = (1.0 - delta) * charge
    n_hat = gaussian(n - math.sqrt(math.log(1.0 / delta) / rho1) - 1.0, sensitivity=1.0, rho=rho1,
                     rng=rng, ledger=ledger, name=name, charge=ZCDP(charge), note=note)
    ledger.record_event("N̂ ≤ n", delta, note=event)
    return float(n_hat)


def size_overestimate(
    n: int, *, rho: float, delta: float, rng: np.random.Generator, ledger: Ledger, name: str,
) -> float:
    """n̂ = n + √(ln(2/δ)/ρ) + N(0, 1/(2ρ)): a private size that is ≥ n w.p. ≥ 1 − δ/2.

    zCDPFilter's n̂ (Tsfadia et al. 2022, §4.2, step ii): an over-estimate, so at most n̂ score
    coordinates compose. Records the draw (the filter records its own event δ).
    """
    return float(gaussian(n + math.sqrt(math.log(2.0 / delta) / rho), sensitivity=1.0, rho=rho,
                          rng=rng, ledger=ledger, name=name))


def gaussian_dp(
    value: np.ndarray | float,
    *,
    sensitivity: float,
    eps: float,
    delta: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str,
    note: str = "",
) -> np.ndarray | float:
    """value + N(0, σ²I) with the analytic (ε, δ)-DP σ; records an (ε, δ)-DP spend."""
    sigma = gaussian_sigma_dp(sensitivity, eps, delta)
    ledger.record(name, "gaussian", ApproxDP(eps, delta), sensitivity=sensitivity,
                  noise_scale=sigma, note=note)
    return _add_gaussian(value, sigma, rng)


def laplace(
    value: np.ndarray | float,
    *,
    sensitivity: float,
    eps: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str,
    note: str = "",
) -> np.ndarray | float:
    """value + Lap(Δ₁/ε) per coordinate; ε-DP for ℓ1 sensitivity Δ₁; records an ε-DP spend."""
    check_scalar(sensitivity, "sensitivity", "laplace", low=0.0)
    check_scalar(eps, "eps", "laplace", low=0.0, low_open=True)
    scale = sensitivity / eps
    ledger.record(name, "laplace", ApproxDP(eps, 0.0), sensitivity=sensitivity,
                  noise_scale=scale, note=note)
    release = getattr(rng, "laplace_release", None)
    if release is not None:  # the release sampler: OpenDP's make_laplace
        return release(value, scale)
    return _perturb(value, rng.laplace(0.0, scale, size=np.shape(value)))


def exponential(
    scores: np.ndarray,
    *,
    sensitivity: float,
    eps: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str,
    note: str = "",
) -> int:
    """Index i drawn with probability ∝ exp(ε·score_i/(2Δ)); ε-DP (McSherry & Talwar 2007).

    Sampled with the Gumbel-max trick, which has exactly this distribution.
    """
    check_scalar(sensitivity, "sensitivity", "exponential", low=0.0, low_open=True)
    check_scalar(eps, "eps", "exponential", low=0.0, low_open=True)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("The 'scores' parameter of exponential must be a non-empty 1-D array.")
    ledger.record(name, "exponential", ApproxDP(eps, 0.0), sensitivity=sensitivity,
                  noise_scale=2.0 * sensitivity / eps, note=note)
    return gumbel_argmax(eps * s / (2.0 * sensitivity), rng)


def exponential_zcdp(
    scores: np.ndarray,
    *,
    sensitivity: float,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str,
    note: str = "",
) -> int:
    """The exponential mechanism booked as ρ-zCDP: index i with probability ∝ exp(ε·score_i/(2Δ))
    at ε = √(8ρ) (:func:`~dpviz.privacy.accounting.bounded_range_eps`).

    The exponential mechanism is ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021, Lemma
    3.2): booked as the zCDP spend ρ (as ε-DP it would count ε²/2 = 4ρ). Sampled with the
    Gumbel-max trick (:func:`gumbel_argmax`), the same draw as :func:`exponential` at that ε.
    """
    check_scalar(sensitivity, "sensitivity", "exponential_zcdp", low=0.0, low_open=True)
    eps = bounded_range_eps(rho)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("The 'scores' parameter of exponential_zcdp must be a non-empty 1-D array.")
    ledger.record(name, "exponential", ZCDP(rho, 0.0), sensitivity=sensitivity,
                  noise_scale=2.0 * sensitivity / eps,
                  note=note or f"exponential mechanism (ε = {eps:.4g}, bounded range: ε²/8-zCDP)")
    return gumbel_argmax(eps * s / (2.0 * sensitivity), rng)


def gumbel_argmax(logits: np.ndarray, rng: Any) -> int:
    """Index i with probability ∝ exp(logits_i): the exponential mechanism's draw.

    The release sampler (``SecureRNG.exponential_mechanism``: OpenDP's Gumbel noisy max) when
    ``rng`` is one; otherwise the Gumbel-max trick on ``rng.gumbel`` (a simulation; the same
    distribution, and the same numbers as before for a seeded run).
    """
    lw = np.asarray(logits, dtype=np.float64).ravel()
    draw = getattr(rng, "exponential_mechanism", None)
    if draw is not None:
        return int(draw(lw))
    return int(np.argmax(lw + rng.gumbel(size=lw.size)))


def gumbel_top(logits: np.ndarray, m: int, rng: Any) -> np.ndarray:
    """Per row of a 2-D ``logits``, ``m`` indices by Gumbel-top-m (m peeling exponential-mechanism
    draws without replacement), as an (rows, m) array, each row in the order drawn.

    OpenDP's Gumbel noisy top-k per row on the release sampler; Gumbel-max on ``rng`` otherwise.
    """
    lw = np.asarray(logits, dtype=np.float64)
    draw = getattr(rng, "exponential_top", None)
    if draw is not None:
        return np.stack([draw(row, m) for row in lw]) if lw.shape[0] else np.zeros((0, m), np.int64)
    g = lw + rng.gumbel(size=lw.shape)
    return np.argsort(-g, axis=1, kind="stable")[:, :m]
