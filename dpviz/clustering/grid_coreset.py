"""The private grid coreset: private PCA, a noisy adaptive grid, noisy group means.

One mechanism, two callers: :func:`grid_coreset` (registered as ``grid_coreset``, its spec in
``grid_coreset_spec.py``) runs it on its own budget, and FC_Clustering calls
:func:`fallback_centers` as its fallback when FriendlyCore outputs ⊥ (the paper ran Google's LSH
clustering with 1% of the budget when FC failed, §6.2). Here:

* d ≤ 3 — a private **adaptive grid (quadtree) coreset**: noisy counts of the cells of a grid
  over the Λ-box, refined level by level only inside cells whose noisy count clears a threshold;
  every surviving cell (and the unexplained mass of each refined parent) becomes a weighted point,
  and weighted k-means++/Lloyd on those points (post-processing) gives the centers. It adapts to
  both tight clusters (fine cells) and diffuse ones (coarse cells).
* d > 3 — **private PCA**: Gaussian noise on the second-moment matrix XᵀX (0.2ρ) gives the
  top-p subspace (p = min(k, d, 5)); the same coreset there (0.4ρ, up to 2**9 cells per axis,
  at most 2048 cells refined per level) picks k groups; the rows are partitioned by their
  nearest projected center, and each group's mean is released in the full space by noisy sum
  and noisy count (0.4ρ, parallel composition over the groups). Cluster centers lie near the
  top eigenvectors of XᵀX, so the projection keeps them apart where a random one would not.
  For d > MAX_PCA_DIM (1000, public) the d×d matrix is never formed: a random, data-independent
  p-D subspace replaces the PCA and its 0.2ρ is recorded as reserved (a weaker but bounded
  fallback; cluster on fewer columns for a better one).

Privacy
-------
ρ-zCDP under add/remove of one row of the Λ-ball (rows outside are removed first). One row lies
in exactly one cell per level, so each level's count vector has ℓ2 sensitivity 1; the levels
compose sequentially (ρ/L each). In d > 3, one row changes XᵀX by xxᵀ (Frobenius norm ≤ Λ²),
one group's sum by ≤ Λ and its count by 1; the groups compose in parallel.

References
----------
Tsfadia et al. 2022, §6.2 (a backup algorithm with a reserved share of ρ); grid/quadtree
coresets for private k-means: Su et al. 2016 ("Differentially private k-means clustering"),
Feldman et al. 2009 (private coresets); the noisy second moment: Dwork, Talwar, Thakurta, Zhang
2014 ("Analyze Gauss").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans

from dpviz._threads import one_thread
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
from dpviz.data.bounds import row_norms
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.declared import require_declared_size
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp
from dpviz.result import Result, Trace

#: Survival threshold of a noisy cell count, in noise standard deviations.
THRESHOLD_SDS = 3.0
#: Largest projection dimension of the d > 3 branch (p = min(k, d, 5)).
PROJECTION_DIM = 5
#: Largest number of grid dimensions handled without projection.
GRID_DIM = 3
#: At most this many cells are refined per quadtree level.
MAX_ACTIVE_CELLS = 2048
#: Grids with at most this many cells are counted with one bincount over all cells (8 MB).
DENSE_GRID_CELLS = 1 << 20
#: Levels of the projected quadtree (cells per axis 2, 4, ..., 2**9 over the Λ-box).
PROJECTED_LEVELS = tuple(range(1, 10))
#: Largest d for the private PCA: it forms and decomposes a d×d matrix (8 MB and ~0.3 s at
#: d = 1000; 200 MB and > 1 min at d = 5000). Above it a random subspace is used (issue 19).
MAX_PCA_DIM = 1000


@dataclass(frozen=True)
class FallbackOutcome:
    """Private centers (k, d) from the fallback and what it built (weights are private)."""

    centers: np.ndarray
    method: str
    points: np.ndarray  # coreset points (m, p), p = d or the projection dimension
    weights: np.ndarray  # their noisy weights (private)
    levels: tuple[int, ...]  # grid levels used (cells per axis = 2**level)
    basis: np.ndarray | None = None  # (d, p) private subspace of the d > 3 branch (a DP output)
    labels: np.ndarray | None = None  # internal: each row's group in the d > 3 branch (not released)


def grid_levels(d: int, n: int, rho: float) -> tuple[int, ...]:
    """Public choice of the quadtree levels (cells per axis 2**ℓ) from d, declared n and ρ.

    The finest level has about n·√(2ρ) cells in all (n rows over the count noise's sd): finer
    cells could not clear the threshold even if the rows were spread evenly over the box, and the
    quadtree only refines cells that do. Chosen on tuning seeds (Fig. 6 data, seeds 1000+).
    """
    start = {1: 4, 2: 3, 3: 2}.get(d, 2)
    finest_cap = {1: 14, 2: 8, 3: 6}.get(d, 6)
    budget_cells = max(2.0, n * math.sqrt(2.0 * max(rho, 1e-12)))
    finest = math.floor(math.log2(budget_cells) / d)
    finest = max(start, min(finest_cap, finest))
    return tuple(range(start, finest + 1))


def _quadtree_coreset(
    U: np.ndarray, *, levels: tuple[int, ...], rho: float, rng: np.random.Generator, ledger: Ledger,
    max_active: int = MAX_ACTIVE_CELLS, counter: Callable[[int, np.ndarray], np.ndarray] | None = None,
    union_bound: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Private weighted coreset of U ∈ [0, 1)^p: (cell centers (m, p), noisy weights (m,)).

    ``union_bound``: a level that noises m cells keeps a cell only above max(3, √(2 ln m)) noise
    sds, so that about one empty cell per level clears the threshold however many are tested (the
    projected branch tests up to 2048·2^p cells a level; at 3 sds ~90 empty cells survive, and a
    cluster of them became a center far from every row: issue 16, Fig. 7). Post-processing.

    At most ``max_active`` cells (the largest noisy counts: post-processing) are refined further.
    ``counter(level, keys)``, if given, returns the rows' counts in those flat cells of the
    2**level grid instead of U (a streaming caller sums them over chunks; U then only gives p).
    """
    p = U.shape[1]
    rho_level = rho / len(levels)
    sigma = gaussian_sigma_zcdp(1.0, rho_level)  # a count has sensitivity 1
    tau = THRESHOLD_SDS * sigma
    points: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    active: np.ndarray | None = None  # integer coords (m, p) of surviving cells at the last level
    active_w: np.ndarray | None = None
    prev = None
    used = 0
    for lvl in levels:
        used += 1
        g = 2**lvl
        if active is None:
            cells = np.array(np.unravel_index(np.arange(g**p), (g,) * p)).T
        else:
            step = 2 ** (lvl - prev)
            sub = np.array(np.unravel_index(np.arange(step**p), (step,) * p)).T
            cells = (active[:, None, :] * step + sub[None, :, :]).reshape(-1, p)
        keys = np.ravel_multi_index(cells.T, (g,) * p)
        counts = counter(lvl, keys) if counter is not None else grid_cell_counts(U, lvl, keys)
        noisy = gaussian(counts, sensitivity=1.0, rho=rho_level, rng=rng, ledger=ledger,
                         name=f"grid counts (level {lvl}: {g}^{p} cells, {len(keys)} noised)")
        tau_l = tau if not union_bound else sigma * max(THRESHOLD_SDS, math.sqrt(2.0 * math.log(len(keys))))
        keep = noisy >= tau_l
        if np.count_nonzero(keep) > max_active:
            keep &= noisy >= np.partition(noisy, -max_active)[-max_active]
        if active is not None:
            # The mass of each parent not explained by its surviving children stays at the parent.
            m_par = len(active)
            child_sum = (np.where(keep, noisy, 0.0)).reshape(m_par, -1).sum(axis=1)
            rest = active_w - child_sum
            par_keep = rest >= tau_l
            gp = 2**prev
            points.append((active[par_keep] + 0.5) / gp)
            weights.append(rest[par_keep])
        active, active_w, prev = cells[keep], noisy[keep], lvl
        if len(active) == 0:
            break
    if used < len(levels):  # every cell died: the deeper levels are not drawn, still accounted
        ledger.record(f"{len(levels) - used} deeper grid level(s) not needed (reserved)", "reserved",
                      ZCDP(rho_level * (len(levels) - used)),
                      note="the split is fixed in advance over all levels")
    if active is not None and len(active):
        points.append((active + 0.5) / 2**prev)
        weights.append(active_w)
    if not points:
        return np.zeros((0, p)), np.zeros(0)
    return np.concatenate(points), np.concatenate(weights)


def grid_cell_counts(U: np.ndarray, level: int, keys: np.ndarray) -> np.ndarray:
    """How many rows of U ∈ [0, 1)^p fall in each flat cell ``keys`` of the 2**level grid."""
    g, p = 2**level, U.shape[1]
    coords = np.minimum((U * g).astype(np.int64), g - 1)  # (n, p)
    return _cell_counts(np.ravel_multi_index(coords.T, (g,) * p), keys, g**p)


def _cell_counts(row_keys: np.ndarray, keys: np.ndarray, n_cells: int) -> np.ndarray:
    """How many rows fall in each cell of ``keys`` (flat cell indexes, distinct).

    One bincount over the whole grid when it is small (~10x faster than the search at
    n = 1e5); a sorted search otherwise.
    """
    if n_cells <= DENSE_GRID_CELLS:
        return np.bincount(row_keys, minlength=n_cells)[keys].astype(np.float64)
    order = np.argsort(keys)
    keys_sorted = keys[order]
    pos = np.minimum(np.searchsorted(keys_sorted, row_keys), len(keys_sorted) - 1)
    hit = keys_sorted[pos] == row_keys  # rows inside one of the cells
    counts = np.zeros(len(keys), dtype=np.float64)
    counts[order] = np.bincount(pos[hit], minlength=len(keys_sorted))
    return counts


def _weighted_kmeans(P: np.ndarray, w: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k centers of the weighted points (post-processing of private values)."""
    if len(P) == 0:
        return np.zeros((k, P.shape[1]))
    if len(P) <= k:
        reps = np.resize(np.arange(len(P)), k)
        return P[reps] + 1e-9 * np.arange(k)[:, None]
    km = KMeans(n_clusters=k, n_init=5, random_state=int(rng.integers(2**31 - 1)))
    # A few hundred weighted points: threads only add overhead, and when the cores are busy
    # (a browser drawing next to the app server) OpenMP's waiting threads turned a 10 ms fit
    # into ~1 s at the 90th percentile (2 cores, two busy processes).
    with one_thread():
        km.fit(P, sample_weight=np.maximum(w, 1e-12))
    return km.cluster_centers_


#: The projected fallback's (d > GRID_DIM) split of its ρ: the private subspace, the coreset on it,
#: and per group (parallel over groups) the noisy sum and the noisy count.
PROJECTED_SPLIT = {"subspace": 0.2, "coreset": 0.4, "sum": 0.2, "count": 0.2}


def projected_budget(rho: float) -> dict[str, ZCDP]:
    """The parts of the projected fallback's ρ (:data:`PROJECTED_SPLIT`, by ``ZCDP.split``); the
    in-memory and the streamed fallback both read them."""
    return ZCDP(rho).split(PROJECTED_SPLIT)


def _private_top_subspace(
    X: np.ndarray, p: int, *, rho: float, radius: float, rng: np.random.Generator, ledger: Ledger,
) -> np.ndarray:
    """Top-p eigenvectors (d, p) of the noisy second moment XᵀX + E (Gaussian, symmetric).

    One row changes XᵀX by xxᵀ, whose Frobenius norm is ||x||² ≤ Λ²; the upper triangle
    (diagonal included) is released with ℓ2 sensitivity Λ² (ρ-zCDP), then mirrored.
    For d > MAX_PCA_DIM (public) no d×d matrix is formed: a random orthonormal basis, drawn
    independently of the data, is returned and the share ρ is recorded as reserved.
    """
    d = X.shape[1]
    if d > MAX_PCA_DIM:
        ledger.record(f"second moment XᵀX (not drawn: d = {d} > {MAX_PCA_DIM}, random subspace) "
                      "(reserved)", "reserved", ZCDP(rho))
        Q, _ = np.linalg.qr(rng.standard_normal((d, p)))
        return Q
    iu = np.triu_indices(d)
    M = X.T @ X
    noisy = gaussian(M[iu], sensitivity=radius**2, rho=rho, rng=rng, ledger=ledger,
                     name=f"second moment XᵀX ({len(iu[0])} entries)")
    S = np.zeros((d, d))
    S[iu] = noisy
    S = S + S.T - np.diag(np.diag(S))
    _, vecs = np.linalg.eigh(S)
    return vecs[:, ::-1][:, :p]


def fallback_centers(
    X: np.ndarray, k: int, *, rho: float, radius: float, n_declared: int,
    rng: np.random.Generator, ledger: Ledger, projection_dim: int = PROJECTION_DIM,
) -> FallbackOutcome:
    """Private k centers of the rows X (all inside the Λ-ball) with budget ρ (pure zCDP).

    ``projection_dim`` (public) caps the private-PCA dimension p = min(k, d, projection_dim).

    Privacy
    -------
    ρ-zCDP for add/remove of one row (see the module docstring); records its draws in ``ledger``.

    References
    ----------
    Tsfadia et al. 2022, §6.2 (backup); Su et al. 2016 (grid-based private k-means).
    """
    d = X.shape[1]
    if d <= GRID_DIM:
        levels = grid_levels(d, n_declared, rho)
        U = np.clip((X + radius) / (2.0 * radius), 0.0, 1.0 - 1e-12)
        P, w = _quadtree_coreset(U, levels=levels, rho=rho, rng=rng, ledger=ledger)
        C = _weighted_kmeans(P, w, k, rng) * 2.0 * radius - radius
        return FallbackOutcome(C, "grid coreset (quadtree) + weighted k-means", P * 2 * radius - radius,
                               w, levels)
    # d > 3: private PCA (Gaussian noise on the second-moment matrix), quadtree coreset on the
    # top-p subspace, then each group's mean in the full space. Budget 0.2 / 0.4 / 0.4.
    p = min(k, d, projection_dim)
    part = projected_budget(rho)
    V = _private_top_subspace(X, p, rho=part["subspace"].rho, radius=radius, rng=rng, ledger=ledger)
    Z = X @ V  # ||z|| ≤ ||x|| ≤ Λ
    U = np.clip((Z + radius) / (2.0 * radius), 0.0, 1.0 - 1e-12)
    P, w = _quadtree_coreset(U, levels=PROJECTED_LEVELS, rho=part["coreset"].rho, rng=rng, ledger=ledger,
                             union_bound=True)
    Cz = _weighted_kmeans(P, w, k, rng) * 2.0 * radius - radius
    labels = np.argmin(((Z[:, None, :] - Cz[None, :, :]) ** 2).sum(axis=2), axis=1)
    means = ledger.child("group means (parallel)", composition="parallel")
    C = np.zeros((k, d))
    # 0.4ρ per group (parallel): 0.2ρ for the sum (ℓ2 sensitivity Λ), 0.2ρ for the count (1).
    for i in range(k):
        node = means.child(f"group[{i}]")
        rows = X[labels == i]
        s = gaussian(rows.sum(axis=0), sensitivity=radius, rho=part["sum"].rho, rng=rng, ledger=node,
                     name="noisy sum")
        c = gaussian(float(len(rows)), sensitivity=1.0, rho=part["count"].rho, rng=rng, ledger=node,
                     name="noisy count")
        C[i] = s / c if c >= 1.0 else V @ Cz[i]
    norms = np.linalg.norm(C, axis=1, keepdims=True)
    C = np.where(norms > radius, C * radius / np.maximum(norms, 1e-300), C)
    how = f"private PCA to {p}-D" if d <= MAX_PCA_DIM else f"random {p}-D subspace (d > {MAX_PCA_DIM})"
    return FallbackOutcome(C, f"{how} + grid coreset + noisy group means",
                           P * 2 * radius - radius, w, PROJECTED_LEVELS, basis=V, labels=labels)


#: Trace steps, in order (``subspace`` only when d > 3).
STEPS = ("removed_rows", "subspace", "coreset", "groups", "centers")


def grid_coreset(
    X: np.ndarray,
    k: int,
    *,
    rho: float,
    delta: float = 0.0,
    radius: float,
    n_declared: int | None = None,
    projection_dim: int = PROJECTION_DIM,
    rng: RngLike = None,
) -> Result:
    """Private k-means centers by private PCA, a grid coreset and noisy group means (module doc).

    Parameters
    ----------
    X : (n, d) array
    k : int
    rho : float
        zCDP budget (pure ρ-zCDP).
    delta : float, default 0
        Accepted for a uniform interface; recorded as reserved and left unspent.
    radius : float
        The public ℓ2 bound Λ (rows beyond it are removed).
    n_declared : int, optional
        The public dataset size (chooses the grid levels when d ≤ 3); default the number of rows,
        a simulation convenience only: a release (``rng=SecureRNG()``) without it is refused
        (ValueError, nothing read), since the true n would shape the grid.
    projection_dim : int, default 5
        Public cap on the private-PCA dimension (d > 3).
    rng : Generator, int or None

    Returns
    -------
    Result
        Trace: ``removed_rows`` (internal), ``subspace`` (released, d > 3), ``coreset``
        (released: points in data space and noisy weights), ``groups`` (internal: row groups),
        ``centers`` (released).

    Privacy
    -------
    ρ-zCDP under add/remove of one row; see the module docstring.

    References
    ----------
    Su et al. 2016; Feldman et al. 2009; Dwork et al. 2014; Tsfadia et al. 2022, §6.2.
    """
    func = "grid_coreset"
    require_declared_size(n_declared, rng, func, "grid_coreset")  # before any row (issue 34, A)
    X = check_data(X, func, allow_empty=False)
    n = X.shape[0]
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_radius(radius, "radius", func)
    n_decl = n if n_declared is None else check_scalar(n_declared, "n_declared", func, low=1,
                                                       high_open=True, integer=True)
    projection_dim = check_scalar(projection_dim, "projection_dim", func, low=1, high=64, integer=True)
    gen, seed = check_rng(rng, "algorithm:grid_coreset")
    inside = row_norms(X) <= radius
    Xin = X[inside]
    ledger = Ledger(func, ZCDP(rho, delta))
    trace = Trace()
    trace.add("removed_rows", released=False, n_removed=int(n - inside.sum()),
              note="rows beyond the declared radius Λ are removed before any count (internal)")
    out = fallback_centers(Xin, k, rho=rho, radius=radius, n_declared=n_decl, rng=gen, ledger=ledger,
                           projection_dim=projection_dim)
    points = out.points
    if out.basis is not None:
        trace.add("subspace", released=True, basis=out.basis.copy(),
                  note=f"private PCA: top-{out.basis.shape[1]} eigenvectors of the noisy XᵀX")
        points = out.points @ out.basis.T  # coreset cells back in data space (inside the subspace)
    trace.add("coreset", released=True, points=points, weights=out.weights.copy(), levels=out.levels,
              method=out.method, note=f"{len(out.weights)} weighted cells with noisy counts")
    if out.labels is not None:
        labels = np.full(n, -1, dtype=np.int64)
        labels[inside] = out.labels
        trace.add("groups", released=False, labels=labels, counts=np.bincount(out.labels, minlength=k),
                  note="each row's nearest projected center (internal, never released)")
    trace.add("centers", released=True, centers=out.centers.copy(), note=out.method)
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta),
                      note="the grid coreset is pure ρ-zCDP; the requested δ is left unspent.")
    ledger.check()
    return Result(centers=out.centers, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, rho=rho, delta=delta, radius=radius, n_declared=n_decl,
                              projection_dim=projection_dim, method=out.method,
                              grid_dim=GRID_DIM),
                  seed=seed, simulation=is_simulation(rng))
