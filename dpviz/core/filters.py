"""The FriendlyCore filters: zCDPFilter and BasicFilter, on precomputed friend counts.

Reference: Tsfadia et al. 2022, §4.1 (BasicFilter, Lemma 4.1) and §4.2 (zCDPFilter, Lemma 4.2).
The filters only need, for each element i, its friend count w_i = Σ_j f(x_i, x_j) (j = i
included; f is reflexive); predicates and chunked counting live in ``dpviz.core.predicates``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from dpviz._validation import check_scalar
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_draw, size_overestimate

#: zCDPFilter's split of its ρ: ρ₁ = 0.1ρ for n̂, ρ₂ = 0.9ρ for the scores (§4.2, step i).
ZCDP_FILTER_N_FRACTION = 0.1


@dataclass(frozen=True)
class FilterOutcome:
    """What a filter produced. ``keep`` is the released mask v; the rest is internal.

    For BasicFilter ``n_hat``, ``noisy_scores``, ``threshold`` and ``sigma`` are None and
    ``probabilities`` holds p_i.
    """

    keep: np.ndarray
    scores: np.ndarray
    noisy_scores: np.ndarray | None
    threshold: float | None
    n_hat: float | None
    sigma: float | None
    probabilities: np.ndarray | None = None


def zcdp_threshold(n_hat: float, rho2: float, delta: float) -> float:
    """The keep threshold √(n̂·ln(2n̂/δ)/(4ρ₂)) + 1/2 of zCDPFilter (§4.2, step iii)."""
    return math.sqrt(n_hat * math.log(2.0 * n_hat / delta) / (4.0 * rho2)) + 0.5


def known_size_threshold(n_bound: float, rho: float, delta: float) -> float:
    """The keep threshold σ·Φ⁻¹(1 − δ/n̄) + 1/2 of the known-size zCDPFilter, σ = √(n̄/(8ρ)).

    The exact Gaussian tail: a bad element (z ≤ 1/2) is kept with probability exactly δ/n̄, where
    the paper's Chernoff form √(2 ln(2n̂/δ))·σ bounds it by δ/(2n̂) (§4.2, step iii).
    """
    sigma = math.sqrt(n_bound / (8.0 * rho))
    return sigma * float(-ndtri(delta / n_bound)) + 0.5


def zcdp_filter(
    counts: np.ndarray,
    *,
    rho: float,
    delta: float,
    rng: np.random.Generator,
    ledger: Ledger,
    n_bound: int | None = None,
) -> FilterOutcome:
    """zCDPFilter (Tsfadia et al. 2022, §4.2) on friend counts w_i; n = len(counts).

    Steps: ρ₁ = 0.1ρ, ρ₂ = 0.9ρ; n̂ = n + √(ln(2/δ)/ρ₁) + N(0, 1/(2ρ₁)) (an over-estimate,
    n̂ ≥ n w.p. 1 − δ/2); z_i = w_i − n/2; ẑ_i = z_i + N(0, n̂/(8ρ₂)); v_i = 1 iff
    ẑ_i ≥ √(n̂ ln(2n̂/δ)/(4ρ₂)) + 1/2.

    Privacy
    -------
    (ρ, δ)-indistinguishable masks for add/remove of one element (Lemma 4.2); with an
    f-friendly (ρ′, δ′)-zCDP consumer, (ρ + ρ′, δ + δ′)-zCDP (Thm 4.1). The ledger records the
    n̂ draw (ρ₁), the score draw (ρ₂, ℓ2 sensitivity √n̂/2 over all i) and the event δ.

    Known size (``n_bound`` = n̄, a PUBLIC bound with n ≤ n̄)
    --------------------------------------------------------
    When every database the guarantee is asked about has at most n̄ elements, n̂ := n̄ replaces
    step ii: the event n̂ ≥ n holds surely, so ρ₁ is not spent (ρ₂ = ρ) and the δ/2 of that
    event goes to the bad-element event; the threshold is the exact Gaussian tail
    :func:`known_size_threshold` (each bad element, z ≤ 1/2, kept with probability δ/n̄; a union
    over ≤ n̄ of them is ≤ δ). The scores get N(0, n̄/(8ρ)), ℓ2 sensitivity √n̄/2 over ≤ n̄
    coordinates as in Lemma 4.2. So the mask is (ρ, δ)-indistinguishable under add/remove for
    databases of size ≤ n̄ (Lemma 4.2's proof with E certain). FC_Clustering's tuple databases
    have exactly t tuples (t public) and the group-privacy chain of one row (T → T∖{x} → T′, note
    §4.5) stays within size ≤ t; the dist core runs on a subset of them. Raises ``ValueError``
    when n > n̄ (a caller bug: n̄ is public, the size is not checked against data otherwise).
    """
    rho = check_scalar(rho, "rho", "zcdp_filter", low=0.0, low_open=True)
    delta = check_scalar(delta, "delta", "zcdp_filter", low=0.0, high=1.0, low_open=True, high_open=True)
    w = np.asarray(counts, dtype=np.float64)
    n = w.shape[0]
    if n_bound is not None:
        return _known_size_filter(w, n_bound=n_bound, rho=rho, delta=delta, rng=rng, ledger=ledger)
    rho1 = ZCDP_FILTER_N_FRACTION * rho
    rho2 = rho - rho1
    # Step ii: a deliberately over-estimated n (PLUS), so at most n̂ coordinates compose to ρ₂.
    n_hat = size_overestimate(n, rho=rho1, delta=delta, rng=rng, ledger=ledger,
                              name="n̂ (filter size estimate)")
    ledger.record_event("n̂ ≥ n and no bad element kept", delta,
                        note="Lemma 4.2: the events E, E′ hold with probability ≥ 1 − δ")
    # Any deterministic function of n̂ is post-processing; guard ln(2n̂/δ) for tiny n̂ (§8.2).
    n_hat_eff = max(n_hat, 1.0)
    z = w - n / 2.0
    # ẑ has variance n̂/(8ρ₂): each coordinate has sensitivity 1/2, so the vector has ℓ2
    # sensitivity √n̂/2 given n̂ ≥ n, and σ = (√n̂/2)/√(2ρ₂) = √(n̂/(8ρ₂)).
    sens = math.sqrt(n_hat_eff) / 2.0
    z_noisy, sigma = gaussian_draw(z, sensitivity=sens, rho=rho2, rng=rng, ledger=ledger,
                                   name="ẑ_i (noisy friend scores)")
    threshold = zcdp_threshold(n_hat_eff, rho2, delta)
    keep = np.asarray(z_noisy >= threshold, dtype=bool) if n else np.zeros(0, dtype=bool)
    return FilterOutcome(keep, z, np.asarray(z_noisy), threshold, float(n_hat), sigma)


def _known_size_filter(
    w: np.ndarray, *, n_bound: int, rho: float, delta: float, rng: np.random.Generator,
    ledger: Ledger,
) -> FilterOutcome:
    """zCDPFilter with a public size bound n̄ ≥ n (see :func:`zcdp_filter`, "Known size")."""
    n = w.shape[0]
    n_bound = int(check_scalar(n_bound, "n_bound", "zcdp_filter", low=1, integer=True))
    if n > n_bound:
        raise ValueError(f"zcdp_filter: {n} elements exceed the public size bound n_bound={n_bound}.")
    ledger.record_event("no bad element kept", delta,
                        note=f"known size n ≤ n̄ = {n_bound}: each bad element kept w.p. δ/n̄ "
                             "(exact Gaussian tail), a union over ≤ n̄ of them")
    z = w - n / 2.0
    sens = math.sqrt(n_bound) / 2.0  # ℓ2 over ≤ n̄ coordinates of sensitivity 1/2
    z_noisy, sigma = gaussian_draw(z, sensitivity=sens, rho=rho, rng=rng, ledger=ledger,
                                   name="ẑ_i (noisy friend scores)")
    threshold = known_size_threshold(float(n_bound), rho, delta)
    keep = np.asarray(z_noisy >= threshold, dtype=bool) if n else np.zeros(0, dtype=bool)
    return FilterOutcome(keep, z, np.asarray(z_noisy), threshold, float(n_bound), sigma)


def basic_filter(
    counts: np.ndarray,
    *,
    alpha: float,
    rng: np.random.Generator,
) -> FilterOutcome:
    """BasicFilter (Tsfadia et al. 2022, §4.1): v_i ~ Bern(p_i), p_i = clip(z_i/((1/2−α)n), 0, 1).

    Spends no budget itself: its privacy comes through Thm 4.2 with the consumer's (ε, δ).
    """
    alpha = check_scalar(alpha, "alpha", "basic_filter", low=0.0, high=0.5, high_open=True)
    w = np.asarray(counts, dtype=np.float64)
    n = w.shape[0]
    z = w - n / 2.0
    p = np.clip(z / ((0.5 - alpha) * n), 0.0, 1.0) if n else np.zeros(0)
    keep = rng.random(n) < p
    return FilterOutcome(keep, z, None, None, None, None, probabilities=p)


def expected_margin(n: float, rho: float, delta: float, alpha: float = 0.0) -> float:
    """Feasibility meter: the expected margin of zCDPFilter in noise standard deviations.

    For an (f, α)-complete input every element has z ≥ (1/2 − α)n; the margin is
    (z − threshold)/sd(ẑ) evaluated at E[n̂] = n + √(ln(2/δ)/ρ₁). Uses only public n, ρ, δ.
    A margin ≥ 3 keeps almost every such element; ≤ 0 keeps about half or fewer.
    """
    rho1 = ZCDP_FILTER_N_FRACTION * rho
    rho2 = rho - rho1
    n_hat = max(n + math.sqrt(math.log(2.0 / delta) / rho1), 1.0)
    z = (0.5 - alpha) * n
    return (z - zcdp_threshold(n_hat, rho2, delta)) / math.sqrt(n_hat / (8.0 * rho2))


def expected_margin_known(n: float, n_bound: float, rho: float, delta: float) -> float:
    """:func:`expected_margin` of the known-size zCDPFilter (n̂ = n̄ public, ρ₂ = ρ, exact tail):
    ((1/2)n − threshold)/σ for n fully friendly elements, σ = √(n̄/(8ρ)). Public inputs only."""
    n_bound = max(float(n_bound), 1.0)
    return (0.5 * n - known_size_threshold(n_bound, rho, delta)) / math.sqrt(n_bound / (8.0 * rho))
