"""Sample-complexity bounds for privately learning GMMs, for the theory panel.

Ashtiani, Majid, Narayanan (NeurIPS 2024), Thms 1.4–1.6, and the prior bounds they compare with:
[AAL24b] Afzali, Ashtiani, Liaw (ALT 2024), [AAL21] Aden-Ali, Ashtiani, Liaw (univariate /
axis-aligned), non-private [ABH+18]. The Õ/Ω hide constants and polylog factors the paper does not
state: every function here sets them to 1 ("constants and polylogs set to 1"). The explicit
log(1/δ) powers are part of the statements; ``logs=False`` sets L = ln(1/δ) to 1 like the abstract's
"roughly". Formulas as reconstructed in the seed note (§3, §5.D; tag [R]/[V]).
"""

from __future__ import annotations

import numpy as np

#: The five terms of Thm 1.4, in the order of ``general_terms``.
GENERAL_TERMS = (
    "k·d²/α²",
    "k·d²/(αε)",
    "k^1.5·d^1.75·√L/(αε)",
    "k^1.5·L^1.5/(αε)",
    "k²·d/α",
)

CAVEAT = "constants and polylogs set to 1 (the paper's Õ/Ω hide them)"


def _log_inv_delta(delta: float, logs: bool) -> float:
    return float(np.log(1.0 / delta)) if logs else 1.0


def general_terms(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """The five terms of Thm 1.4 stacked on axis 0 (broadcast over d, k)."""
    d, k = np.asarray(d, dtype=float), np.asarray(k, dtype=float)
    L = _log_inv_delta(delta, logs)
    return np.stack(np.broadcast_arrays(
        k * d**2 / alpha**2,
        k * d**2 / (alpha * eps),
        k**1.5 * d**1.75 * L**0.5 / (alpha * eps),
        k**1.5 * L**1.5 / (alpha * eps),
        k**2 * d / alpha,
    ))


def new_general(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """Thm 1.4: kd²/α² + (kd² + k^1.5 d^1.75 √L + k^1.5 L^1.5)/(αε) + k²d/α."""
    return general_terms(d, k, alpha, eps, delta, logs).sum(axis=0)


def new_univariate(k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """Thm 1.5 (d = 1): k/α² + k·L/(αε)."""
    k = np.asarray(k, dtype=float)
    return k / alpha**2 + k * _log_inv_delta(delta, logs) / (alpha * eps)


def new_bound(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """The paper's upper bound: Thm 1.5 at d = 1 (Thm 1.4 is worse there), Thm 1.4 otherwise."""
    d = np.asarray(d, dtype=float)
    return np.where(d == 1, new_univariate(k, alpha, eps, delta, logs) + 0 * d,
                    new_general(d, k, alpha, eps, delta, logs))


def lower_bound(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """Thm 1.6: kd²/α² + kd²/(αε) + k·L/(αε)."""
    d, k = np.asarray(d, dtype=float), np.asarray(k, dtype=float)
    return k * d**2 / alpha**2 + k * d**2 / (alpha * eps) + k * _log_inv_delta(delta, logs) / (alpha * eps)


def aal24b(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """[AAL24b] headline: k²d⁴·L/(α²ε)."""
    d, k = np.asarray(d, dtype=float), np.asarray(k, dtype=float)
    return k**2 * d**4 * _log_inv_delta(delta, logs) / (alpha**2 * eps)


def aal21(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """[AAL21]: k²d·L^1.5/(α²ε) (axis-aligned mixtures for d > 1; the univariate prior at d = 1)."""
    d, k = np.asarray(d, dtype=float), np.asarray(k, dtype=float)
    return k**2 * d * _log_inv_delta(delta, logs) ** 1.5 / (alpha**2 * eps)


def nonprivate(d, k, alpha) -> np.ndarray:
    """[ABH+18]: Θ̃(kd²/α²)."""
    d, k = np.asarray(d, dtype=float), np.asarray(k, dtype=float)
    return k * d**2 / alpha**2


def abstract_rough(d, k) -> dict[str, np.ndarray]:
    """The abstract's "roughly" forms (α, ε, δ dropped): new kd² + k^1.5 d^1.75 + k²d vs k²d⁴."""
    d, k = np.asarray(d, dtype=float), np.asarray(k, dtype=float)
    return {"new": k * d**2 + k**1.5 * d**1.75 + k**2 * d, "AAL24b": k**2 * d**4}


def d_star(k, delta) -> np.ndarray:
    """d* = k²·ln²(1/δ): Thm 1.4 is optimal (matches Thm 1.6) for d ≥ d*."""
    return np.asarray(k, dtype=float) ** 2 * np.log(1.0 / delta) ** 2


def dominant_term(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """Index into ``GENERAL_TERMS`` of the largest Thm 1.4 term at each (d, k)."""
    return np.argmax(general_terms(d, k, alpha, eps, delta, logs), axis=0)


def gap_ratio(d, k, alpha, eps, delta, logs: bool = True) -> np.ndarray:
    """Upper / lower (Thm 1.4 or 1.5 over Thm 1.6); ≈ 1 where the paper is optimal."""
    return new_bound(d, k, alpha, eps, delta, logs) / lower_bound(d, k, alpha, eps, delta, logs)
