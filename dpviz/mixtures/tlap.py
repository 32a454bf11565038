"""The truncated Laplace mechanism (Geng, Ding, Guo, Kumar 2020; Ashtiani–Majid–Narayanan 2024, Def. A.2,
Lemma A.3, Prop. F.1).

TLap(Δ, ε, δ) has density ∝ exp(−ε|x|/Δ) on [−A, A], A = (Δ/ε)·ln(1 + (e^ε − 1)/(2δ)), and 0 outside.
Adding it to a statistic that moves by at most Δ between neighbours is (ε, δ)-DP, and the noise is
*surely* at most A in absolute value: a count of 0 plus noise never reaches a threshold T > A.
"""

from __future__ import annotations

import math

import numpy as np

from dpviz._validation import check_scalar


def tlap_bound(sensitivity: float, eps: float, delta: float) -> float:
    """A = (Δ/ε)·ln(1 + (e^ε − 1)/(2δ)): the sure bound on |noise| (Def. A.2)."""
    check_scalar(sensitivity, "sensitivity", "tlap_bound", low=0.0, low_open=True)
    check_scalar(eps, "eps", "tlap_bound", low=0.0, low_open=True)
    check_scalar(delta, "delta", "tlap_bound", low=0.0, high=1.0, low_open=True, high_open=True)
    return sensitivity / eps * math.log1p(math.expm1(eps) / (2.0 * delta))


def tlap_noise(
    size: int, *, sensitivity: float, eps: float, delta: float, rng: np.random.Generator
) -> np.ndarray:
    """``size`` i.i.d. TLap(Δ, ε, δ) draws by the exact inverse CDF of |x| (a truncated exponential)."""
    a = tlap_bound(sensitivity, eps, delta)
    b = sensitivity / eps
    u = rng.random(size)
    mag = -b * np.log1p(-u * -math.expm1(-a / b))  # |x| ∈ [0, A): inverse CDF of Exp(b) cut at A
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    return sign * np.minimum(mag, a)
