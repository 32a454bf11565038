"""DP kernel k-means with random Fourier features (Acs et al., TKDE, §4.1, Algorithm 2).

Rows are mapped by random Fourier features z(x) = √(2/d)·cos(Wᵀx + b) approximating the Gaussian
RBF kernel exp(−γ‖x − y‖²), clipped to ‖ẑ‖ ≤ C_s = 1 (Theorem 2: E‖z(x)‖ ≤ 1 for every x, so
no private norm estimate is needed), and clustered by a noisy Lloyd loop: each of the T_K
iterations adds N(0, (√2σ_K)²) to every cluster size and N(0, (√2σ_K·C_s)²·I) to every feature sum
(Alg. 2, lines 10–11). Centres start from k PUBLIC records (footnote 3) that the caller passes.
Afterwards each row is assigned to its nearest final centre (post-processing) and, so that the
result is comparable to input-space algorithms, a private mean of each final cluster is released
in input space (rows clipped to the public radius Λ), charged to the same budget.

Paper errors fixed here (see ``/work/shared/papers/seed-acs-dpgm.md`` §6.4): the kernel is printed
exp(−γ‖x − y‖₂) with "standard deviation 2γI"; the Gaussian RBF exp(−γ‖x − y‖²) with
w ~ N(0, 2γ·I) (per-coordinate std √(2γ), as sklearn's RBFSampler) is the kernel whose spectral
density is Gaussian. Alg. 2 assigns in iteration T against the centres of T − 1; the final
partition uses the final centres (§5: "implemented by the last iteration").

Privacy unit: one row, add/remove. Then one row changes one cluster size by 1 and one feature
sum by ≤ C_s, so the paper's noise std √2σ_K·(1 or C_s) is a Gaussian with multiplier √2σ_K:
each release is 1/(4σ_K²)-zCDP and the loop is ρ_K = T_K/(2σ_K²)-zCDP — exactly the paper's
Eq. 4 (RBF form) α_K(λ) = T_K(λ²+λ)/(2σ_K²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz._validation import (
    RngLike,
    check_data,
    check_delta,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.clustering.baselines import dp_lloyd
from dpviz.data.bounds import clip_to_ball, row_norms
from dpviz.geometry import cluster_sums
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian
from dpviz.result import Result, Trace

# ----------------------------------------------------------------------------- features


@dataclass(frozen=True)
class RandomFourierFeatures:
    """z(x) = √(2/d)·[cos(⟨w_i, x⟩ + b_i)]_{i≤d}, w_i ~ N(0, 2γ·I_m), b_i ~ U[0, 2π) (Eq. 3).

    E⟨z(x), z(y)⟩ = exp(−γ‖x − y‖²) and E‖z(x)‖² = 1 for every x (Theorem 2); ‖z(x)‖ ≤ √2 always.
    The map is drawn without looking at any data.
    """

    W: np.ndarray  # (m, d)
    b: np.ndarray  # (d,)
    gamma: float

    @classmethod
    def draw(cls, m: int, d: int, gamma: float, rng: np.random.Generator) -> RandomFourierFeatures:
        # Alg. 2 lines 1–2 (kernel corrected to the Gaussian RBF, see the module docstring).
        W = rng.normal(0.0, math.sqrt(2.0 * gamma), size=(m, d))
        b = rng.uniform(0.0, 2.0 * math.pi, size=d)
        return cls(W, b, gamma)

    @property
    def d(self) -> int:
        return self.b.shape[0]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """z(X), shape (n, d) (Alg. 2, line 3)."""
        return math.sqrt(2.0 / self.d) * np.cos(X @ self.W + self.b)


def clip_features(Z: np.ndarray, C_s: float) -> np.ndarray:
    """ẑ = z / max(1, ‖z‖/C_s) (Alg. 2, line 5)."""
    return Z / np.maximum(1.0, row_norms(Z) / C_s)[:, None]


def gamma_from_public(X_public: np.ndarray) -> float:
    """γ = 1/median‖x − x′‖² over distinct pairs of PUBLIC records (the paper never states γ).

    Never call this on private data: like RBFSampler(gamma='scale') it reads the data.
    """
    P = check_data(X_public, "gamma_from_public", allow_empty=False)
    sq = np.einsum("ij,ij->i", P, P)
    d2 = sq[:, None] + sq[None, :] - 2.0 * P @ P.T
    iu = np.triu_indices(P.shape[0], k=1)
    med = float(np.median(d2[iu])) if iu[0].size else 0.0
    if not med > 0.0:
        raise ValueError("gamma_from_public needs at least two distinct public records.")
    return 1.0 / med


# ----------------------------------------------------------------------------- budget ↔ σ_K


def sigma_K_for_rho(rho: float, iters: int) -> float:  # noqa: N802 - the paper's σ_𝒦
    """σ_K with T_K/(2σ_K²) = ρ: the loop of Alg. 2 then spends exactly ρ-zCDP."""
    return math.sqrt(iters / (2.0 * rho))


# ----------------------------------------------------------------------------- the noisy loop


@dataclass(frozen=True)
class KernelLloyd:
    """What the noisy Lloyd loop in feature space released, and its internal partition.

    ``centers`` (k, d) and ``history`` (per iteration: centres, noisy counts) are DP outputs;
    ``labels`` (nearest final centre per row) and ``true_counts`` are internal (non-private).
    """

    centers: np.ndarray
    history: tuple[tuple[np.ndarray, np.ndarray], ...]
    labels: np.ndarray
    true_counts: np.ndarray


def _assign(Z: np.ndarray, C: np.ndarray) -> np.ndarray:
    """argmin_j ‖ẑ − ĉ_j‖² via ‖ĉ‖² − 2ẑ·ĉ (Alg. 2, line 9)."""
    return np.argmin(np.einsum("ij,ij->i", C, C)[None, :] - 2.0 * Z @ C.T, axis=1)


def _kernel_lloyd(Z: np.ndarray, C0: np.ndarray, *, iters: int, sigma_K: float, C_s: float,
                  rng: np.random.Generator, ledger: Ledger) -> KernelLloyd:
    """Alg. 2 lines 7–11 on clipped features Z from centres C0; records every release in ``ledger``."""
    k = C0.shape[0]
    C = C0.copy()
    history = []
    # Per release ρ = 1/(4σ_K²): gaussian() then draws std = sensitivity·√2σ_K, the paper's noise.
    rho_release = 1.0 / (4.0 * sigma_K * sigma_K)
    for t in range(iters):
        node = ledger.child(f"iteration {t + 1}", ZCDP(2.0 * rho_release))
        sums, counts = cluster_sums(Z, _assign(Z, C), k)
        # Line 10: n̂_i = |D̂_i| + N(0, √2σ_K); one row changes one count by 1 (add/remove).
        n_hat = gaussian(counts, sensitivity=1.0, rho=rho_release, rng=rng, ledger=node,
                         name="cluster sizes", note="Alg. 2 line 10: std √2σ_K")
        # Line 11: Σ ẑ + N(0, √2σ_K·C_s·I); one row changes one cluster's sum by ≤ C_s.
        s_hat = gaussian(sums, sensitivity=C_s, rho=rho_release, rng=rng, ledger=node,
                         name="feature sums", note="Alg. 2 line 11: std √2σ_K·C_s")
        # A cluster whose noisy size is < 1 keeps its previous centre (guard unspecified in the
        # paper; post-processing).
        ok = n_hat >= 1.0
        C = C.copy()
        C[ok] = s_hat[ok] / n_hat[ok, None]
        history.append((C.copy(), np.asarray(n_hat, dtype=np.float64).copy()))
    labels = _assign(Z, C)
    return KernelLloyd(C, tuple(history), labels, np.bincount(labels, minlength=k))


def kernel_kmeans_sigma(
    X: np.ndarray,
    public_init: np.ndarray,
    *,
    sigma_K: float,
    n_features: int = 200,
    gamma: float | None = None,
    iters: int = 20,
    C_s: float = 1.0,
    rng: RngLike = None,
    ledger: Ledger | None = None,
) -> KernelLloyd:
    """Algorithm 2 exactly as the paper parameterises it: by the noise scale σ_K.

    The Fig. 3 protocol ("d depending on σ_K, which directly yields ε using Eq. 4"): the loop is
    T_K/(2σ_K²)-zCDP under add/remove of one row (recorded in ``ledger`` if given). k = len(public_init).
    The result's ``labels`` are internal (non-private); ``centers`` and ``history`` are DP outputs.

    References: Acs et al., TKDE, Alg. 2, Eq. 4.
    """
    func = "kernel_kmeans_sigma"
    X = check_data(X, func)
    P = check_data(public_init, func, allow_empty=False)
    if P.shape[1] != X.shape[1]:
        raise ValueError(f"The 'public_init' parameter of {func} must have {X.shape[1]} columns. "
                         f"Got {P.shape[1]}.")
    sigma_K = check_scalar(sigma_K, "sigma_K", func, low=0.0, low_open=True, high_open=True)
    iters = check_scalar(iters, "iters", func, low=1, high=1000, integer=True)
    gen, _ = check_rng(rng, "algorithm:kernel_kmeans")
    gamma = gamma_from_public(P) if gamma is None else gamma
    rff = RandomFourierFeatures.draw(X.shape[1], n_features, gamma, gen)
    led = ledger if ledger is not None else Ledger(func)
    node = led.child("kernel k-means", ZCDP(iters / (2.0 * sigma_K**2)))
    return _kernel_lloyd(clip_features(rff.transform(X), C_s), clip_features(rff.transform(P), C_s),
                         iters=iters, sigma_K=sigma_K, C_s=C_s, rng=gen, ledger=node)


# ----------------------------------------------------------------------------- the public entry


def dp_kernel_kmeans(
    X: np.ndarray,
    k: int,
    *,
    rho: float,
    delta: float = 0.0,
    public_init: np.ndarray,
    radius: float,
    n_features: int = 200,
    gamma: float | None = None,
    iters: int = 20,
    input_share: float = 0.1,
    C_s: float = 1.0,
    rng: RngLike = None,
) -> Result:
    """DP kernel k-means with random Fourier features (Algorithm 2), plus input-space centres.

    Parameters
    ----------
    X : (n, m) array
        The private rows.
    k : int
        Number of clusters.
    rho : float
        zCDP budget of the whole run.
    delta : float, default 0
        Accepted for a uniform interface; the run is pure ρ-zCDP, so δ is recorded as reserved.
    public_init : (k, m) array
        k PUBLIC records (a held-out public split, never private rows) used as initial centres,
        mapped through the same z and clipped (footnote 3).
    radius : float
        Public ℓ2 bound Λ on input rows, used only for the input-space means (rows are clipped).
    n_features : int, default 200
        RFF dimension d (the paper's default after Fig. 3).
    gamma : float, optional
        RBF width γ; default :func:`gamma_from_public` on ``public_init`` (public data only).
    iters : int, default 20
        T_K.
    input_share : float, default 0.1
        Fraction of ρ spent on the input-space means; the rest, ρ_K, runs the loop with
        σ_K = √(T_K/(2ρ_K)).
    C_s : float, default 1
        Feature clipping bound (1 for the RBF kernel, Theorem 2).
    rng : Generator, int or None

    Returns
    -------
    Result
        ``centers``: (k, m) input-space centres (private cluster means; the public init record where
        a noisy size is < 1). Trace: ``features`` (released: the map, γ, σ_K), ``init`` (released),
        ``iteration`` × T_K (released: feature-space centres, noisy sizes), ``partition``
        (internal: labels, true sizes), ``input_means`` (released: centres, noisy sizes).

    Privacy
    -------
    ρ-zCDP under add/remove of one row: the loop spends T_K·2·1/(4σ_K²) = (1 − input_share)·ρ
    (Eq. 4, RBF form), the input-space means input_share·ρ (sums with sensitivity Λ, sizes with
    sensitivity 1, half each; clusters are disjoint, so each release is one vector Gaussian).

    References
    ----------
    Acs, Melis, Castelluccia, De Cristofaro, TKDE, §4.1, Alg. 2, Theorem 2, Eq. 4; Rahimi & Recht
    2007 (random features); Blum, Dwork, McSherry, Nissim 2005 (SuLQ k-means).
    """
    func = "dp_kernel_kmeans"
    X = check_data(X, func)
    m = X.shape[1]
    k = check_scalar(k, "k", func, low=1, high_open=True, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    n_features = check_scalar(n_features, "n_features", func, low=1, high=100_000, integer=True)
    iters = check_scalar(iters, "iters", func, low=1, high=1000, integer=True)
    input_share = check_scalar(input_share, "input_share", func, low=0.0, high=1.0, low_open=True,
                               high_open=True)
    C_s = check_scalar(C_s, "C_s", func, low=0.0, low_open=True, high_open=True)
    P = np.asarray(public_init, dtype=np.float64)
    if P.shape != (k, m) or not np.all(np.isfinite(P)):
        raise ValueError(f"The 'public_init' parameter of {func} must be a finite ({k}, {m}) array of "
                         f"public records. Got shape {P.shape}.")
    if gamma is None:
        gamma = gamma_from_public(P)
    gamma = check_scalar(gamma, "gamma", func, low=0.0, low_open=True, high_open=True)
    gen, seed = check_rng(rng, "algorithm:kernel_kmeans")

    rho_K = (1.0 - input_share) * rho
    rho_in = input_share * rho
    sigma_K = sigma_K_for_rho(rho_K, iters)
    ledger = Ledger(func, ZCDP(rho, delta))
    trace = Trace()

    rff = RandomFourierFeatures.draw(m, n_features, gamma, gen)
    Z_raw = rff.transform(X)
    Z = clip_features(Z_raw, C_s)
    C0 = clip_features(rff.transform(P), C_s)
    trace.add("features", released=True, note="Random Fourier features for exp(−γ‖x−y‖²), drawn "
              "without the data.", W=rff.W, b=rff.b, gamma=gamma, C_s=C_s, sigma_K=sigma_K)
    trace.add("init", released=True, note="k public records mapped by the same z.", centers=C0.copy(),
              public_records=P.copy())
    loop = _kernel_lloyd(Z, C0, iters=iters, sigma_K=sigma_K, C_s=C_s, rng=gen,
                         ledger=ledger.child("kernel Lloyd", ZCDP(rho_K)))
    for t, (C, n_hat) in enumerate(loop.history):
        trace.add("iteration", released=True, index=t, centers=C, noisy_counts=n_hat,
                  sigma_count=math.sqrt(2.0) * sigma_K, sigma_sum=math.sqrt(2.0) * sigma_K * C_s)
    trace.add("partition", released=False, note="Nearest final noisy centre (non-private labels).",
              labels=loop.labels, counts=loop.true_counts,
              feature_norms=row_norms(Z_raw))

    centers, n_in = _input_space_means(X, loop.labels, P, radius=radius, rho=rho_in, rng=gen,
                                       ledger=ledger.child("input-space means", ZCDP(rho_in)))
    trace.add("input_means", released=True, note="Private mean of each final cluster in input space.",
              centers=centers.copy(), noisy_counts=n_in)
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta),
                      note="DP kernel k-means is pure ρ-zCDP; the requested δ is left unspent.")
    ledger.check()
    return Result(centers=centers, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, rho=rho, delta=delta, radius=radius,
                              n_features=n_features, gamma=gamma, iters=iters, input_share=input_share,
                              C_s=C_s), seed=seed, algorithm="kernel_kmeans",
                  simulation=is_simulation(gen))


def _input_space_means(X: np.ndarray, labels: np.ndarray, fallback: np.ndarray, *, radius: float,
                       rho: float, rng: np.random.Generator, ledger: Ledger) -> tuple[np.ndarray, np.ndarray]:
    """Noisy sum / noisy size of each cluster in input space, rows clipped to Λ (ρ/2 each)."""
    k = fallback.shape[0]
    with np.errstate(over="ignore"):  # all-zero rows: radius/tiny overflows to inf, harmlessly
        Xc = clip_to_ball(X, radius)
    sums, counts = cluster_sums(Xc, labels, k)
    n_hat = gaussian(counts, sensitivity=1.0, rho=rho / 2.0, rng=rng, ledger=ledger,
                     name="cluster sizes")
    s_hat = gaussian(sums, sensitivity=radius, rho=rho / 2.0, rng=rng, ledger=ledger,
                     name="cluster sums", note="rows clipped to the public radius Λ")
    ok = n_hat >= 1.0
    C = fallback.copy()
    with np.errstate(over="ignore"):
        C[ok] = clip_to_ball(s_hat[ok] / n_hat[ok, None], radius)
    return C, np.asarray(n_hat, dtype=np.float64)


# ----------------------------------------------------------------------------- the baseline


def dp_kmeans_input(X: np.ndarray, k: int, *, rho: float, delta: float = 0.0, public_init: np.ndarray,
                    radius: float, iters: int = 20, rng: RngLike = None) -> Result:
    """The paper's baseline: standard DP k-means (SuLQ noisy Lloyd) in input space, norm bound Λ.

    Same initial public records and the same noise as Alg. 2 in input space: with ρ split evenly
    between sizes and sums over T iterations (:func:`dpviz.clustering.baselines.dp_lloyd`), the
    size noise is √(T/ρ) = √2σ_K and the sum noise √2σ_K·Λ for σ_K = √(T/(2ρ)). The paper fixes
    Λ = C_s = √m for binary data (§6, Fig. 3).

    Privacy
    -------
    ρ-zCDP under add/remove of one row (rows with norm > Λ are removed, as in dp_lloyd).

    References
    ----------
    Acs et al., TKDE, §6 (Fig. 3 baseline); Blum, Dwork, McSherry, Nissim 2005.
    """
    return dp_lloyd(X, k, rho=rho, delta=delta, radius=radius, iters=iters, init=public_init, rng=rng)
