"""Baselines to compare FriendlyCore clustering with: non-private k-means, DP-Lloyd, diffprivlib.

Each returns a :class:`~dpviz.result.Result` whose ledger total equals the budget handed in.
"""

from __future__ import annotations

import math
import sys
import types
import warnings

import numpy as np

from dpviz._validation import (
    MAX_CLUSTERS,
    RngLike,
    check_data,
    check_delta,
    check_radius,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.data.bounds import clip_to_ball, row_norms
from dpviz.data.generators import uniform_ball
from dpviz.geometry import nearest_center
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp
from dpviz.result import Result, Trace

#: diffprivlib's coordinate normalisation factor ρ in ``KMeans._split_epsilon`` (Su et al. 2016).
_DIFFPRIVLIB_RHO = 0.225


# ----------------------------------------------------------------------------- non-private


def reference_kmeans(
    X: np.ndarray, k: int, *, rng: RngLike = None, n_init: int | None = None
) -> tuple[np.ndarray, float, np.ndarray]:
    """The non-private reference clustering on all of X: (centers (k, d), cost on X, labels).

    ``n_init`` None (the default): :func:`dpviz.clustering.reference.reference_kmeans`, the strong
    reference whose cost is the X of the normalized loss (Tsfadia et al. 2022, §6.2; issue 35: many
    k-means++ restarts, its recipe in :func:`dpviz.clustering.reference.reference_recipe`); the
    sweeps read it from here.
    An int: scikit-learn k-means++, best of ``n_init`` seeded runs (the registered ``kmeans++``
    algorithm, :func:`nonprivate_kmeans`).

    Privacy
    -------
    NON-PRIVATE diagnostic.
    """
    from sklearn.cluster import KMeans

    from dpviz.clustering.reference import reference_kmeans as strong

    X = check_data(X, "reference_kmeans", allow_empty=False)
    k = check_scalar(k, "k", "reference_kmeans", low=1, high=X.shape[0], integer=True)
    if n_init is None:
        ref = strong(X, k, rng=rng)
        return ref.centers, ref.cost, ref.labels
    n_init = check_scalar(n_init, "n_init", "reference_kmeans", low=1, high=100, integer=True)
    gen, _ = check_rng(rng, "reference")
    km = KMeans(n_clusters=k, n_init=n_init, random_state=int(gen.integers(2**31 - 1))).fit(X)
    centers = km.cluster_centers_.copy()
    d2 = nearest_center(X, centers)[1]
    return centers, float(d2.sum()), km.labels_.astype(np.int64)


def nonprivate_kmeans(X: np.ndarray, k: int, *, rng: RngLike = None, n_init: int = 3) -> Result:
    """scikit-learn k-means++ (best of ``n_init`` seeded runs): the non-private reference.

    Returns
    -------
    Result
        ``centers`` (k, d); an empty ledger (budget 0); one internal trace step ``kmeans``.

    Privacy
    -------
    NONE. The centers are an exact function of the data; shown for comparison only.

    References
    ----------
    Arthur & Vassilvitskii 2007 (k-means++); Tsfadia et al. 2022, §6.2 (the X of 1 − X/Y).
    """
    func = "nonprivate_kmeans"
    X = check_data(X, func, allow_empty=False)
    k = check_scalar(k, "k", func, low=1, high=X.shape[0], integer=True)
    n_init = check_scalar(n_init, "n_init", func, low=1, high=100, integer=True)
    gen, seed = check_rng(rng, "algorithm:kmeans++")
    centers, cost, labels = reference_kmeans(X, k, rng=gen, n_init=n_init)
    ledger = Ledger(func, ZCDP(0.0, 0.0), note="non-private: no privacy guarantee")
    trace = Trace()
    trace.add("kmeans", released=False, note="Non-private k-means++: no privacy guarantee.",
              centers=centers.copy(), labels=labels, inertia=float(cost))
    return Result(centers=centers, failure=None, ledger=ledger,
                  trace=trace.freeze(), params=dict(algorithm=func, k=k, n_init=n_init), seed=seed)


# ----------------------------------------------------------------------------- DP-Lloyd


def dp_lloyd_sigmas(*, rho: float, radius: float, iters: int) -> tuple[float, float]:
    """(σ_sum, σ_count) of :func:`dp_lloyd`: ρ/(2·iters) each, sensitivities Λ and 1.

    σ_sum = Λ/√(2·ρ/(2T)) = Λ·√(T/ρ) and σ_count = √(T/ρ).
    """
    rho_half = rho / (2.0 * iters)
    return gaussian_sigma_zcdp(radius, rho_half), gaussian_sigma_zcdp(1.0, rho_half)


def _sums_counts(X: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=k) for j in range(X.shape[1])],
                    axis=1) if X.shape[0] else np.zeros((k, X.shape[1]))
    return sums, counts


def dp_lloyd_init(k: int, d: int, radius: float, init: np.ndarray | None, rng: np.random.Generator,
                  func: str) -> tuple[np.ndarray, str]:
    """DP-Lloyd's public start: k points uniform in the Λ-ball, or the caller's public centers."""
    if init is None:
        note = f"Public: {k} points uniform in the ball of radius Λ={radius:g}."
        return uniform_ball(k, d, radius, rng), note
    C = np.asarray(init, dtype=np.float64)
    if C.shape != (k, d) or not np.all(np.isfinite(C)):
        raise ValueError(f"The 'init' parameter of {func} must be a finite ({k}, {d}) array. "
                         f"Got shape {C.shape}.")
    return clip_to_ball(C, radius), "Public centers given by the caller (must not come from the data)."


def noisy_lloyd_iteration(C: np.ndarray, sums: np.ndarray, counts: np.ndarray, *, it: int, rho_it: float,
                          radius: float, rng: np.random.Generator, ledger: Ledger, trace: Trace,
                          sigmas: tuple[float, float]) -> np.ndarray:
    """One DP-Lloyd iteration's private part from its per-cluster sums and counts (Su et al. 2016).

    ρ_it/2 on the sums (sensitivity Λ) and ρ_it/2 on the counts (sensitivity 1), each a parallel
    composition over clusters; a cluster whose noisy count is below 1 keeps its previous center.
    Shared by the in-memory :func:`dp_lloyd` and the streamed ``dpviz.large.lloyd_stream`` (same
    draws in the same order, so both release the same centers for a seed).
    """
    k = C.shape[0]
    node = ledger.child(f"iteration {it + 1}", ZCDP(rho_it))
    sums_node = node.child("cluster sums", ZCDP(rho_it / 2), composition="parallel",
                           note="one row changes one cluster's sum by ≤ Λ")
    counts_node = node.child("cluster counts", ZCDP(rho_it / 2), composition="parallel",
                             note="one row changes one cluster's count by 1")
    noisy_sums = np.empty_like(sums)
    noisy_counts = np.empty(k)
    for j in range(k):  # loop over clusters (parallel composition)
        noisy_sums[j] = gaussian(sums[j], sensitivity=radius, rho=rho_it / 2, rng=rng,
                                 ledger=sums_node, name=f"sum[{j}]")
        noisy_counts[j] = gaussian(float(counts[j]), sensitivity=1.0, rho=rho_it / 2, rng=rng,
                                   ledger=counts_node, name=f"count[{j}]")
    ok = noisy_counts >= 1.0
    new = C.copy()
    if np.any(ok):
        new[ok] = clip_to_ball(noisy_sums[ok] / noisy_counts[ok, None], radius)
    trace.add("iteration", released=True, index=it, centers=new.copy(), noisy_counts=noisy_counts,
              sigma_sum=sigmas[0], sigma_count=sigmas[1], kept_previous=~ok)
    return new


def dp_lloyd(
    X: np.ndarray,
    k: int,
    *,
    rho: float,
    delta: float = 0.0,
    radius: float,
    iters: int = 5,
    init: np.ndarray | None = None,
    rng: RngLike = None,
) -> Result:
    """DP-Lloyd: Lloyd iterations with Gaussian noise on each cluster's sum and count.

    Rows with norm > Λ are removed (as in NoisyLloydStep). Each iteration gets ρ/T, split evenly
    between the sums (ℓ2 sensitivity Λ: one row moves one cluster's sum by at most Λ) and the
    counts (sensitivity 1); clusters are disjoint, so the k releases of one kind compose in
    parallel. A center becomes noisy_sum / noisy_count (projected into the ball of radius Λ);
    when noisy_count < 1 the previous center is kept (post-processing).

    Parameters
    ----------
    X : (n, d) array
    k : int
    rho : float
        zCDP budget.
    delta : float, default 0
        Accepted for a uniform interface; DP-Lloyd is pure ρ-zCDP, so a δ > 0 is recorded as
        reserved and left unspent.
    radius : float
        The public ℓ2 bound Λ.
    iters : int, default 5
        Number of noisy Lloyd iterations T.
    init : (k, d) array, optional
        Public initial centers; default k points uniform in the ball of radius Λ, drawn without
        looking at the data.
    rng : Generator, int or None

    Returns
    -------
    Result
        Trace: ``init`` (released), ``iteration`` × T (released: centers, noisy counts, σ's),
        ``lloyd_partition`` (internal: labels with −1 for removed rows, counts, n_removed).

    Privacy
    -------
    ρ-zCDP under add/remove of one row: T iterations × (ρ/2T + ρ/2T), each a parallel
    composition over clusters of Gaussian mechanisms (σ_sum = Λ√(T/ρ), σ_count = √(T/ρ)).

    References
    ----------
    Blum, Dwork, McSherry, Nissim 2005 (SuLQ k-means); Su et al. 2016 (DPLloyd); Tsfadia et al.
    2022, §5.2.4 (NoisyLloydStep: removal outside Λ, parallel composition).
    """
    func = "dp_lloyd"
    X = check_data(X, func)
    n, d = X.shape
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_radius(radius, "radius", func)
    iters = check_scalar(iters, "iters", func, low=1, high=1000, integer=True)
    gen, seed = check_rng(rng, "algorithm:dp_lloyd")
    C, init_note = dp_lloyd_init(k, d, radius, init, gen, func)
    ledger = Ledger(func, ZCDP(rho, delta))
    trace = Trace()
    trace.add("init", released=True, note=init_note, centers=C.copy())

    inside = row_norms(X) <= radius
    Xin = X[inside]
    sigma_sum, sigma_count = dp_lloyd_sigmas(rho=rho, radius=radius, iters=iters)
    rho_it = rho / iters
    labels = np.zeros(0, dtype=np.int64)
    for it in range(iters):
        labels = nearest_center(Xin, C)[0] if Xin.shape[0] else labels
        sums, counts = _sums_counts(Xin, labels, k)
        C = noisy_lloyd_iteration(C, sums, counts, it=it, rho_it=rho_it, radius=radius, rng=gen,
                                  ledger=ledger, trace=trace, sigmas=(sigma_sum, sigma_count))
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta),
                      note="DP-Lloyd is pure ρ-zCDP; the requested δ is left unspent.")
    full = np.full(n, -1, dtype=np.int64)
    final = nearest_center(Xin, C)[0] if Xin.shape[0] else labels
    full[inside] = final
    trace.add("lloyd_partition", released=False, labels=full,
              counts=np.bincount(final, minlength=k), n_removed=int(n - inside.sum()))
    ledger.check()
    return Result(centers=C, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, rho=rho, delta=delta, radius=radius,
                              iters=iters), seed=seed, simulation=is_simulation(rng))


# ----------------------------------------------------------------------------- diffprivlib


def _import_diffprivlib() -> tuple[type, type]:
    """diffprivlib's BudgetAccountant and KMeans.

    diffprivlib 0.6.6's package ``__init__`` imports ``diffprivlib.models.forest``, which needs
    ``sklearn.tree._tree.DOUBLE`` (gone in scikit-learn 1.9), so ``import diffprivlib`` fails.
    K-means does not use the forest module: on that ImportError we register a stub for it (its
    classes raise if used) and import again.
    """
    try:
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import KMeans
    except ImportError as exc:
        reason = str(exc)
        name = "diffprivlib.models.forest"
        if name in sys.modules:
            raise
        stub = types.ModuleType(name)
        stub.__doc__ = f"Stub registered by dpviz: the real module failed to import ({reason})."

        class _Unavailable:
            def __init__(self, *args: object, **kwargs: object) -> None:
                raise ImportError(f"diffprivlib's forest models are unavailable here: {reason}")

        stub.RandomForestClassifier = _Unavailable  # type: ignore[attr-defined]
        stub.DecisionTreeClassifier = _Unavailable  # type: ignore[attr-defined]
        sys.modules[name] = stub
        from diffprivlib.accountant import BudgetAccountant
        from diffprivlib.models import KMeans
    return BudgetAccountant, KMeans


def diffprivlib_true_spend_factor(d: int) -> float:
    """True ε spent by diffprivlib 0.6.6 ``KMeans(epsilon=ε)`` on d-dim data, divided by ε.

    ``KMeans._split_epsilon`` returns ``(ε_i·norm, ε_0·norm)`` with ε_i = 1 (meant per
    coordinate of a sum) and ε_0 = ∛(4dρ²), ρ = 0.225 (meant for the count), and
    norm = ε / (T·(d·ε_i + ε_0)). ``_update_centers`` unpacks them the other way round
    (``epsilon_0, epsilon_i = ...``), so the count gets norm and each of the d coordinates gets
    ε_0·norm. Per iteration the spend is norm·(1 + d·ε_0) instead of norm·(d + ε_0), so over T
    iterations the total is ε·(1 + d·c)/(d + c), c = ∛(4dρ²). Since (1 + dc) − (d + c) =
    (d − 1)(c − 1) and c > 1 ⇔ d ≥ 5, it over-spends for d ≥ 5 and under-spends for 2 ≤ d ≤ 4.
    """
    c = np.cbrt(4.0 * d * _DIFFPRIVLIB_RHO**2)
    return float((1.0 + d * c) / (d + c))


def diffprivlib_kmeans(
    X: np.ndarray,
    k: int,
    *,
    eps: float,
    radius: float,
    iters: int = 5,
    rng: RngLike = None,
    patched: bool = True,
) -> Result:
    """diffprivlib's DP k-means (DPLloyd of Su et al.) with its ε split and privacy leaks corrected.

    Bounds are the public box [−Λ, Λ]^d (data clipped to it by diffprivlib). Four corrections
    (the last two only with ``patched=True``, the default):

    * diffprivlib 0.6.6 swaps its count and coordinate budgets (see
      :func:`diffprivlib_true_spend_factor`), so we pass ε / factor(d) and the true spend is
      exactly the requested ε (checked after the fit against diffprivlib's own split).
    * diffprivlib picks the number of iterations (2..7) from the true n, a data-dependent
      choice; we fix it to the public ``iters``.
    * Its ``_update_centers`` skips a cluster with no rows: that center keeps its previous value
      with no noise, so an empty cluster is visible in the output and one row can flip it (issue
      10, finding 7: a center stayed in a corner 0/3000 times on D, 21/3000 on D plus one row).
      The patch noises every cluster, empty ones included (count 0, sum 0), as the proof needs.
    * Its noise comes from a RandomState seeded with a 31-bit int; the patch seeds MT19937 from a
      full-entropy SeedSequence (256 bits from ``rng``; OS entropy for None or a SecureRNG).

    ``patched=False`` runs diffprivlib's own update and 31-bit seed (for the empirical audit,
    which must detect the leak): it has NO privacy guarantee.

    Returns
    -------
    Result
        Ledger: one ε-DP spend equal to ``eps`` (its zCDP total is ε²/2, Fact 2.2); trace step
        ``diffprivlib`` (released centers and the split actually used).

    Privacy
    -------
    ``patched=True``: ε-DP under add/remove of one row (basic composition of T iterations of
    geometric noise on counts and bounded-domain Laplace noise on each coordinate sum, parallel
    over clusters, every cluster noised). Its samplers are diffprivlib's, not floating-point
    safe: a simulation even with a SecureRNG. ``patched=False``: no guarantee (empty clusters).

    References
    ----------
    Su, Cao, Li, Bertino, Jin 2016 (DPLloyd); Holohan et al. 2019 (diffprivlib),
    ``diffprivlib/models/k_means.py``.
    """
    BudgetAccountant, DPKMeans = _import_diffprivlib()

    func = "diffprivlib_kmeans"
    X = check_data(X, func)
    n, d = X.shape
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    eps = check_scalar(eps, "eps", func, low=0.0, low_open=True, high_open=True)
    radius = check_radius(radius, "radius", func)
    iters = check_scalar(iters, "iters", func, low=1, high=1000, integer=True)
    if n < k:
        raise ValueError(f"diffprivlib_kmeans needs at least k={k} rows.")
    gen, seed = check_rng(rng, "algorithm:diffprivlib")

    class _FixedIters(DPKMeans):
        def _calc_iters(self, n_dims: int, n_samples: int, rho: float = _DIFFPRIVLIB_RHO) -> int:
            return iters  # public, instead of diffprivlib's choice from the true n

    factor = diffprivlib_true_spend_factor(d)
    eps_passed = eps / factor
    if patched:
        cls = _patched_kmeans_class(_FixedIters)
        random_state = np.random.RandomState(
            np.random.MT19937(np.random.SeedSequence(gen.integers(2**63, size=4).tolist())))
    else:
        cls, random_state = _FixedIters, int(gen.integers(2**31 - 1))
    model = cls(n_clusters=k, epsilon=eps_passed, bounds=(np.full(d, -radius), np.full(d, radius)),
                random_state=random_state, accountant=BudgetAccountant())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    # Re-account independently from diffprivlib's own split, in the order its caller uses it.
    eps_count, eps_coord = model._split_epsilon(d, iters)
    true_spend = iters * (eps_count + d * eps_coord)
    if not math.isclose(true_spend, eps, rel_tol=1e-9):
        raise RuntimeError(f"diffprivlib spent ε={true_spend:.6g}, not the requested {eps:.6g}: "
                           "its budget split changed; update diffprivlib_true_spend_factor.")
    ledger = Ledger(func, ApproxDP(eps).to_zcdp(),
                    note="" if patched else "UNPATCHED diffprivlib: no proven guarantee (empty clusters)")
    ledger.record("DPLloyd (diffprivlib)", "geometric+laplace", ApproxDP(eps),
                  sensitivity=2.0 * radius,
                  note=(f"{iters} iterations × (count ε={eps_count:.4g} + {d} coordinates × "
                        f"ε={eps_coord:.4g}) = ε={true_spend:.6g}; passed epsilon={eps_passed:.6g} "
                        f"to correct diffprivlib's swapped split (factor {factor:.4f})"))
    ledger.check()
    centers = np.asarray(model.cluster_centers_, dtype=np.float64).copy()
    trace = Trace()
    trace.add("diffprivlib", released=patched, centers=centers.copy(), eps_passed=eps_passed,
              eps_count=eps_count, eps_coordinate=eps_coord, iters=iters, factor=factor,
              patched=patched)
    return Result(centers=centers, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, eps=eps, radius=radius, iters=iters,
                              patched=patched),
                  seed=seed)


def _patched_kmeans_class(base: type) -> type:
    """``base`` with an ``_update_centers`` that noises every cluster, empty ones included.

    Same mechanisms and budget as diffprivlib 0.6.6's ``KMeans._update_centers`` (which it
    otherwise copies, including its unpacking order of ``_split_epsilon``); only the
    ``if cluster not in labels: continue`` is gone, and the labels are counted with one bincount.
    """
    import diffprivlib.models.k_means as km  # its mechanisms, looked up at call time

    class _Patched(base):  # type: ignore[misc, valid-type]
        def _update_centers(self, X, centers, labels, dims, total_iters, random_state):
            epsilon_0, epsilon_i = self._split_epsilon(dims, total_iters)
            geometric = km.GeometricFolded(epsilon=epsilon_0, sensitivity=1, lower=0.5, upper=float("inf"),
                                        random_state=random_state)
            counts = np.bincount(labels, minlength=self.n_clusters)
            for cluster in range(self.n_clusters):  # every cluster: an empty one too (issue 10)
                noisy_count = geometric.randomise(int(counts[cluster]))
                cluster_sum = np.sum(X[labels == cluster], axis=0) if counts[cluster] else np.zeros(dims)
                noisy_sum = np.zeros(dims)
                for i in range(dims):
                    lap = km.LaplaceBoundedDomain(epsilon=epsilon_i,
                                               sensitivity=self.bounds[1][i] - self.bounds[0][i],
                                               lower=noisy_count * self.bounds[0][i],
                                               upper=noisy_count * self.bounds[1][i],
                                               random_state=random_state)
                    noisy_sum[i] = lap.randomise(float(cluster_sum[i]))
                centers[cluster, :] = noisy_sum / noisy_count
            return centers

    return _Patched
