"""Privacy accounting for DPGM: the paper's moments accountant, the modern one, and the correction.

Three accounts of the same run (Acs et al., TKDE, §3.4 and §5):

* **paper** — the moments accountant with the paper's Hölder composition (Theorem 3, Eq. 4 and
  Eq. 7, Theorem 4): ε = min over integer λ ≤ 32 of (α_K(λ) + α_S(λ) − log δ)/λ. It reproduces the
  paper's ε = 1.74 for the Fig. 4 setting.
* **modern** — Google's ``dp-accounting`` (RDP and PLD) under add/remove of one row, with the noise
  the algorithms actually draw (std √2·σ·sensitivity, so noise multipliers √2σ). The histogram of
  DPNorm and the gradient sum on the same Poisson batch compose exactly into one Gaussian with
  1/σ_eff² = 1/σ_hist² + 1/σ_grad² (Gaussian composition is exact, also adaptively).
* **one model per step** — the paper's schedule (Alg. 1, line 4: one model θ_s updated per step)
  reveals s. For a row in cluster c the step is a mixture: with probability p_c a subsampled
  Gaussian at rate q/p_c, otherwise nothing; its RDP is log(1 − p_c + p_c·e^{(α−1)·R_c(α)})/(α−1)
  (exact for a public mixture index). The paper's claim α_{S_k} ≤ α_{S_1} ignores this.

Which one is the guarantee depends on the training schedule: DPGM's default "parallel" schedule
(every model updated on one Poisson batch of all of D; clusters are disjoint) is covered by all
three and its guarantee is the tightest sound one (PLD); the "one_model" schedule is covered only by
the mixture bound.

Errors in the paper corrected here (see ``/work/shared/papers/seed-acs-dpgm.md``, §6.4):
Lemma 1 prints α_𝒢(λ) = (λ²+λ)/4σ², a factor 2 too small for noise multiplier σ; under add/remove
with the paper's √2σ noise it is exact, which is how Eq. 4 is used below. §5 prints α_G3/α_G4 for
the SGD mechanisms (means 𝒢4 = DPNorm, 𝒢5 = gradient) and ℓ1, ℓ2 for j1, j2.

References: Acs, Melis, Castelluccia, De Cristofaro, "Differentially Private Mixture of Generative
Neural Networks", IEEE TKDE (Theorems 1, 3, 4; Eqs. 4, 7); Abadi et al. 2016 (moments accountant);
Mironov, Talwar, Zhang 2019 (sampled Gaussian RDP, §3.3); Canonne, Kamath, Steinke 2020 and
Asoodeh et al. 2020 (improved RDP → (ε, δ) conversion); Doroshenko et al. 2022 (PLD).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import gammaln, log_ndtr, logsumexp

from dpviz._validation import check_scalar

Schedule = Literal["parallel", "one_model"]
AccountName = Literal["paper", "rdp", "pld", "one_model"]

#: Orders λ of the paper's accountant: integers, "enough to compute α(λ) for λ ≤ 32" (§6).
PAPER_LAMBDAS = tuple(range(1, 33))
#: RDP orders for the modern accounts: few fractional ones (each costs a slow series), every integer
#: to 63, then a sparse tail.
RDP_ORDERS = tuple(sorted({1.1, 1.25, 1.5, 1.75, *np.arange(2.0, 11.0, 0.5), *range(11, 64), 64.0, 80.0,
                           96.0, 128.0, 160.0, 192.0, 256.0, 384.0, 512.0, 1024.0}))


# ----------------------------------------------------------------------------- log-moments


def gaussian_log_moment(lam: float, sigma: float) -> float:
    """α_𝒢(λ) = (λ²+λ)/(2σ²) for a Gaussian mechanism with noise multiplier σ (std/sensitivity).

    Lemma 1 of the paper prints /4σ²; this is the correct value (the privacy loss is
    N(1/2σ², 1/σ²)). With the paper's noise std √2σ·Δ and add/remove sensitivity Δ the multiplier is
    √2σ, which gives back the paper's (λ²+λ)/4σ².
    """
    return (lam * lam + lam) / (2.0 * sigma * sigma)


def _log_comb(n: float, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    """log A_α for integer α (Mironov et al. 2019, Eq. 3): the binomial expansion."""
    i = np.arange(alpha + 1, dtype=np.float64)
    terms = _log_comb(alpha, i) + i * math.log(q) + (alpha - i) * math.log1p(-q) + (i * i - i) / (
        2.0 * sigma * sigma)
    return float(logsumexp(terms))


def _log_a_frac(q: float, sigma: float, alpha: float) -> float:
    """log A_α for fractional α (Mironov et al. 2019, §3.3), the series summed vectorised.

    Split at z0 = σ² log(1/q − 1) + 1/2; the terms of both tails are summed until they fall e^30
    below the total (the same stopping rule as dp-accounting's ``_compute_log_a_frac``).
    """
    z0 = sigma * sigma * math.log(1.0 / q - 1.0) + 0.5
    n_terms = math.ceil(alpha) + 64
    while True:
        i = np.arange(n_terms, dtype=np.float64)
        j = alpha - i
        log_coef = _log_comb(alpha, i)
        log_t0 = log_coef + i * math.log(q) + j * math.log1p(-q)
        log_t1 = log_coef + j * math.log(q) + i * math.log1p(-q)
        # 0.5·erfc(x/√2) = Φ(−x): log_e0 = log Φ(−(i − z0)/σ), log_e1 = log Φ(−(z0 − j)/σ).
        log_e0 = log_ndtr((z0 - i) / sigma)
        log_e1 = log_ndtr((j - z0) / sigma)
        s0 = log_t0 + (i * i - i) / (2.0 * sigma * sigma) + log_e0
        s1 = log_t1 + (j * j - j) / (2.0 * sigma * sigma) + log_e1
        total = float(logsumexp(np.concatenate([s0, s1])))
        tail_small = max(s0[-1], s1[-1]) < total - 30 and s0[-1] < s0[-2] and s1[-1] < s1[-2]
        if tail_small or n_terms > 200_000:
            return total
        n_terms *= 2


@functools.lru_cache(maxsize=200_000)
def subsampled_gaussian_log_moment(lam: float, q: float, sigma: float) -> float:
    """α_𝒢(λ) = log max(E1(λ), E2(λ)) of the Poisson-subsampled Gaussian (paper §5, after Eq. 7).

    E2(λ) = ∫ μ1 (μ1/μ0)^λ = ∫ μ0 (μ1/μ0)^{λ+1} = A_{λ+1} in Mironov et al.'s notation, and
    E1(λ) = B_{λ+1} ≤ A_{λ+1} (Mironov et al. 2019, Thm 5; checked numerically in the tests), so
    α_𝒢(λ) = log A_{λ+1}. λ may be fractional (Theorem 3 evaluates it at λ/j).
    """
    if q >= 1.0:
        return gaussian_log_moment(lam, sigma)
    alpha = lam + 1.0
    if float(alpha).is_integer():
        return _log_a_int(q, sigma, int(alpha))
    return _log_a_frac(q, sigma, alpha)


# ----------------------------------------------------------------------------- the paper's account


@dataclass(frozen=True)
class AcsSetting:
    """The public inputs of one DPGM accounting (the paper's symbols).

    ``sigma_C``, ``sigma_K``, ``sigma_G`` are the paper's noise scales: the algorithms draw noise
    with std √2·σ·(bound) (Alg. 2 lines 10–11, Alg. 3 line 2, Alg. 4 line 6). ``q`` = L/|D| is the
    per-row sampling rate; an epoch is ⌈1/q⌉ SGD steps (§6). ``dpnorm_in_kmeans`` charges DPNorm
    in k-means (non-RBF kernels; Eq. 4 charges it T_K times, as printed); with the RBF kernel C_s = 1
    and DPNorm is not called (α_G1 = 0). ``dpnorm_in_sgd`` is the adaptive clipping of Alg. 4.
    """

    sigma_C: float = 4.0  # noqa: N815 - the paper's symbol
    sigma_K: float = 40.0  # noqa: N815 - the paper's symbol
    sigma_G: float = 1.0  # noqa: N815 - the paper's symbol
    q: float = 0.0017
    T_K: int = 20
    epochs: float = 20.0
    delta: float = 1e-5
    dpnorm_in_kmeans: bool = False
    dpnorm_in_sgd: bool = True

    def __post_init__(self) -> None:
        f = "AcsSetting"
        for name in ("sigma_C", "sigma_K", "sigma_G"):
            check_scalar(getattr(self, name), name, f, low=0.0, low_open=True, high_open=True)
        check_scalar(self.q, "q", f, low=0.0, high=1.0, low_open=True)
        check_scalar(self.T_K, "T_K", f, low=0, high=10_000, integer=True)
        check_scalar(self.epochs, "epochs", f, low=0.0, high=10_000.0)
        check_scalar(self.delta, "delta", f, low=0.0, high=1.0, low_open=True, high_open=True)

    @property
    def steps_per_epoch(self) -> int:
        """⌈1/q⌉ SGD steps per epoch (§6: "one epoch consists of ⌈1/q⌉ SGD iterations")."""
        return math.ceil(1.0 / self.q - 1e-9)

    @property
    def T_S(self) -> int:  # noqa: N802 - the paper's T_𝒮
        """SGD iterations: epochs × ⌈1/q⌉."""
        return round(self.epochs * self.steps_per_epoch)


@dataclass(frozen=True)
class PaperAccount:
    """The paper's ε (Theorem 4) and its decomposition at the minimising λ.

    ε = (alpha_K + alpha_S − log δ)/lam; ``j1`` is the Hölder weight of DPNorm at that λ.
    """

    eps: float
    delta: float
    lam: int
    j1: float
    alpha_K: float  # noqa: N815 - the paper's symbol
    alpha_S: float  # noqa: N815 - the paper's symbol


def _sgd_step_log_moment(lam: float, q: float, sigma_C: float, sigma_G: float,
                         dpnorm: bool) -> tuple[float, float]:
    """min over j1 + j2 = 1 of j1·α_G4(λ/j1) + j2·α_G5(λ/j2) (Eq. 7, one step); returns (value, j1).

    Each term j·α(λ/j) is the perspective of a convex function, so the objective is convex in j1
    and a bounded scalar minimisation finds the global minimum (the paper uses 10 values of j1;
    its 1.74 needs j1 ≈ 0.08, below that coarse grid's 0.1).
    """
    if not dpnorm:
        return subsampled_gaussian_log_moment(float(lam), q, sigma_G), 0.0

    def f(j1: float) -> float:
        return (j1 * subsampled_gaussian_log_moment(lam / j1, q, sigma_C)
                + (1.0 - j1) * subsampled_gaussian_log_moment(lam / (1.0 - j1), q, sigma_G))

    res = minimize_scalar(f, bounds=(1e-3, 1.0 - 1e-3), method="bounded", options=dict(xatol=1e-5))
    return float(res.fun), float(res.x)


@functools.lru_cache(maxsize=4096)
def paper_epsilon(setting: AcsSetting, lambdas: tuple[int, ...] = PAPER_LAMBDAS) -> PaperAccount:
    """ε of DPGM by the paper's accountant (Theorem 4 with Eq. 4 and Eq. 7).

    α_K(λ) = T_K·(λ²+λ)·(1/4σ_C² [if DPNorm in k-means] + 1/2σ_K²)  (Eq. 4),
    α_S(λ) = T_S · min_j (j1·α_G4(λ/j1) + j2·α_G5(λ/j2))           (Eq. 7),
    ε = min_{λ ∈ lambdas} (α_K(λ) + α_S(λ) − log δ)/λ.

    For the Fig. 4 setting (σ_C = 4, σ_K = 40, σ_G = 1, q = 0.0017, T_K = 20, 20 epochs, δ = 1e-5)
    this gives ε = 1.742 (paper: 1.74).
    """
    s = setting
    best: PaperAccount | None = None
    for lam in lambdas:
        a_k = s.T_K * (lam * lam + lam) * (1.0 / (2.0 * s.sigma_K ** 2)
                                           + (1.0 / (4.0 * s.sigma_C ** 2) if s.dpnorm_in_kmeans else 0.0))
        step, j1 = _sgd_step_log_moment(lam, s.q, s.sigma_C, s.sigma_G, s.dpnorm_in_sgd)
        a_s = s.T_S * step
        eps = (a_k + a_s - math.log(s.delta)) / lam
        if best is None or eps < best.eps:
            best = PaperAccount(eps, s.delta, lam, j1, a_k, a_s)
    assert best is not None
    return best


# ----------------------------------------------------------------------------- modern accounts


@contextlib.contextmanager
def _quiet_absl():
    """dp-accounting logs a warning for each fractional order near 1 whose series does not converge
    at large sampling rates; it then drops that order (its bound stays sound). Keep the log quiet."""
    log = logging.getLogger("absl")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _import_dp_accounting():
    try:
        import dp_accounting
        from dp_accounting.rdp import rdp_privacy_accountant
    except ImportError as exc:  # pragma: no cover - pinned in requirements.txt
        raise ImportError("The modern DPGM account needs 'dp-accounting' (pip install "
                          "dp-accounting==0.6.0, pinned in requirements.txt).") from exc
    return dp_accounting, rdp_privacy_accountant


def sgd_noise_multiplier(setting: AcsSetting, *, sqrt2: bool = True) -> float:
    """Noise multiplier of one DP-SGD step: histogram and gradient composed, 1/σ² = Σ 1/σ_i².

    ``sqrt2=True`` uses the noise actually drawn (std √2σ over add/remove sensitivity 1 or C_s);
    ``sqrt2=False`` the paper's convention (multiplier σ, its replace-one reading).
    """
    f = math.sqrt(2.0) if sqrt2 else 1.0
    inv = 1.0 / (f * setting.sigma_G) ** 2
    if setting.dpnorm_in_sgd:
        inv += 1.0 / (f * setting.sigma_C) ** 2
    return 1.0 / math.sqrt(inv)


def _kmeans_events(setting: AcsSetting, sqrt2: bool):
    dpa, _ = _import_dp_accounting()
    f = math.sqrt(2.0) if sqrt2 else 1.0
    events = []
    if setting.T_K:
        # Counts and sums: 2 Gaussian releases per iteration, multiplier √2σ_K each (Alg. 2, 10–11).
        events.append(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(f * setting.sigma_K), 2 * setting.T_K))
    if setting.dpnorm_in_kmeans:
        # DPNorm is called once (Alg. 2, line 4); Eq. 4 charges it T_K times (conservative).
        events.append(dpa.GaussianDpEvent(f * setting.sigma_C))
    return events


def dpgm_event(setting: AcsSetting, *, sqrt2: bool = True):
    """The dp-accounting event of DPGM with the parallel schedule: k-means, then T_S sampled steps."""
    dpa, _ = _import_dp_accounting()
    events = _kmeans_events(setting, sqrt2)
    if setting.T_S:
        step = dpa.PoissonSampledDpEvent(setting.q, dpa.GaussianDpEvent(sgd_noise_multiplier(setting,
                                                                                            sqrt2=sqrt2)))
        events.append(dpa.SelfComposedDpEvent(step, setting.T_S))
    return dpa.ComposedDpEvent(events)


@functools.lru_cache(maxsize=1024)
def rdp_epsilon(setting: AcsSetting, *, sqrt2: bool = True) -> float:
    """ε by dp-accounting's RDP accountant (add/remove of one row), parallel schedule."""
    dpa, _ = _import_dp_accounting()
    acc = dpa.rdp.RdpAccountant(list(RDP_ORDERS))
    with _quiet_absl():
        acc.compose(dpgm_event(setting, sqrt2=sqrt2))
    return float(acc.get_epsilon(setting.delta))


@functools.lru_cache(maxsize=256)
def pld_epsilon(setting: AcsSetting, *, sqrt2: bool = True, discretization: float = 1e-3) -> float:
    """ε by dp-accounting's PLD accountant (pessimistic discretisation; add/remove of one row)."""
    dpa, _ = _import_dp_accounting()
    acc = dpa.pld.PLDAccountant(value_discretization_interval=discretization)
    try:
        acc.compose(dpgm_event(setting, sqrt2=sqrt2))
        return float(acc.get_epsilon(setting.delta))
    except (MemoryError, ValueError, OverflowError):
        # Tiny noise multipliers make the discretised loss grid astronomically long: no useful bound.
        return math.inf


@functools.lru_cache(maxsize=1024)
def one_model_epsilon(setting: AcsSetting, p_min: float, *, sqrt2: bool = True) -> float:
    """ε of the paper's one-model-per-step schedule, with the model index s revealed.

    Step: pick model s with public probability p_s (noisy cluster sizes), Poisson-sample its
    cluster at rate q/p_s. For a row in cluster c, RDP per step at order α is
    log(1 − p_c + p_c·exp((α−1)·R_SG(α; q/p_c, σ_eff)))/(α−1), exact for a public mixture index;
    it grows as p_c shrinks, so the bound uses the smallest selection probability ``p_min``
    (1/k for k equal clusters). Composed over T_S steps, plus k-means; improved RDP conversion.
    """
    dpa, rdp_mod = _import_dp_accounting()
    check_scalar(p_min, "p_min", "one_model_epsilon", low=0.0, high=1.0, low_open=True)
    orders = np.asarray(RDP_ORDERS)
    sigma = sgd_noise_multiplier(setting, sqrt2=sqrt2)
    q_c = min(1.0, setting.q / p_min)
    sg = dpa.rdp.RdpAccountant(list(orders))
    with _quiet_absl():
        sg.compose(dpa.PoissonSampledDpEvent(q_c, dpa.GaussianDpEvent(sigma)))
    r = np.asarray(sg.rdp)
    step = np.logaddexp(math.log1p(-p_min) if p_min < 1 else -np.inf,
                        math.log(p_min) + (orders - 1.0) * r) / (orders - 1.0)
    km = dpa.rdp.RdpAccountant(list(orders))
    km.compose(dpa.ComposedDpEvent(_kmeans_events(setting, sqrt2)))
    total = (setting.T_S * step if setting.T_S else 0.0) + np.asarray(km.rdp)
    eps, _ = rdp_mod.compute_epsilon(orders, total, setting.delta)
    return float(eps)


# ----------------------------------------------------------------------------- all three


@dataclass(frozen=True)
class AcsAccount:
    """Every account of one DPGM run, and which of them is the guarantee.

    ``paper`` (paper's accountant), ``rdp`` / ``pld`` (dp-accounting, add/remove of one row, noise as
    drawn) and ``one_model`` (the mixture bound for the paper's one-model-per-step schedule) are ε at
    ``delta``. ``guarantee`` names the account that is the row-level guarantee for ``schedule``:
    the smaller sound bound (``pld`` or ``rdp``) for the parallel schedule, ``one_model`` for the paper's.
    ``paper_valid`` says whether the paper's number bounds the schedule at all.
    """

    setting: AcsSetting
    schedule: Schedule
    paper: PaperAccount
    rdp: float
    pld: float
    one_model: float
    k: int
    guarantee: AccountName
    paper_valid: bool

    @property
    def eps(self) -> float:
        """The guaranteed ε (row-level, add/remove of one row) at ``setting.delta``."""
        return {"paper": self.paper.eps, "rdp": self.rdp, "pld": self.pld,
                "one_model": self.one_model}[self.guarantee]


def acs_account(setting: AcsSetting, *, k: int = 1, schedule: Schedule = "parallel",
                p_min: float | None = None, pld: bool = True) -> AcsAccount:
    """All accounts of a DPGM run, with the guarantee flagged (see :class:`AcsAccount`).

    ``p_min`` is the smallest model-selection probability of the one-model schedule (default 1/k,
    equal clusters). With ``pld=False`` the PLD account is skipped (reported as inf) for speed.
    """
    k = check_scalar(k, "k", "acs_account", low=1, high=10_000, integer=True)
    if schedule not in ("parallel", "one_model"):
        raise ValueError(f"The 'schedule' parameter of acs_account must be 'parallel' or 'one_model'. "
                         f"Got {schedule!r} instead.")
    p = 1.0 / k if p_min is None else p_min
    paper = paper_epsilon(setting)
    r = rdp_epsilon(setting)
    pl = pld_epsilon(setting) if pld else math.inf
    om = one_model_epsilon(setting, p)
    if schedule == "parallel" or k == 1:
        # Both are sound; PLD is usually tighter, but its pessimistic discretisation can lose to RDP
        # after very many compositions (e.g. σ_G = 2, 100 epochs), so take the smaller.
        guarantee: AccountName = "pld" if pl <= r else "rdp"
        valid = True
    else:
        guarantee, valid = "one_model", False
    return AcsAccount(setting, schedule, paper, r, pl, om, k, guarantee, valid)


def calibrate_sigma_g(setting: AcsSetting, epsilon: float, *, k: int = 1, schedule: Schedule = "parallel",
                      p_min: float | None = None, rtol: float = 1e-3) -> float:
    """The smallest σ_G whose guarantee at ``setting.delta`` is ≤ ε (other inputs from ``setting``).

    Bisection in log σ_G on the RDP account (parallel schedule) or the one-model bound; RDP is an
    upper bound of the PLD guarantee up to discretisation, so the returned σ_G is sound for both.
    Raises ValueError when even σ_G = 1e4 cannot meet ε (the k-means part alone exceeds it).
    """
    epsilon = check_scalar(epsilon, "epsilon", "calibrate_sigma_g", low=0.0, low_open=True, high_open=True)
    p = 1.0 / k if p_min is None else p_min

    def eps_at(sigma_g: float) -> float:
        s = AcsSetting(**{**setting.__dict__, "sigma_G": sigma_g})
        return rdp_epsilon(s) if schedule == "parallel" or k == 1 else one_model_epsilon(s, p)

    lo, hi = 0.1, 1e4
    if eps_at(hi) > epsilon:
        raise ValueError(f"No σ_G ≤ 1e4 meets ε = {epsilon:g} with these settings: the clustering and "
                         f"DPNorm parts alone cost more. Raise ε, σ_K or σ_C, or lower T_K.")
    if eps_at(lo) <= epsilon:
        return lo
    while hi / lo > 1.0 + rtol:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if eps_at(mid) <= epsilon else (mid, hi)
    return hi
