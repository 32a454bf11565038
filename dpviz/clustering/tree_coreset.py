"""Private hash-tree coreset, k-means on it, then noisy Lloyd refinement on the rows.

The family that works in high dimension with many clusters (issue 24), designed from the
literature, not from any implementation:

1. **Hashing** (public randomness). Every row gets a bit string, ``bits`` more bits per level, so
   the prefixes form a tree with ``2**bits`` children per node. In high dimension the bits are
   ``levels · bits`` random hyperplanes through the center of the declared ball (SimHash,
   Charikar 2002). Below :data:`GRID_MAX_D` dimensions (``partition="auto"``) they are a randomly
   shifted dyadic grid instead (a quadtree: level ℓ halves every cell along each of the d axes,
   ``bits = d``). Issue 43: hyperplanes through the center cut space into cones, so in 2-D two
   clusters in one direction from the center share every cell at every depth (on Fig. 6 blobs
   about one draw in five merged two clusters at every ε), and 16 random lines through random
   points of the ball instead still merged in 3 of 10 draws (n = 20,000); a grid cell at depth ℓ
   has side 4Λ/2^ℓ, so clusters farther apart than that are always apart
   (``bench/tree_coreset_merges.py`` measures both).
2. **Tree** (ρ_tree). Level by level, the children of the *active* nodes get a noisy count
   (Gaussian, one count vector per level of ℓ2 sensitivity 1: a row lies in one child). A child
   is active when its noisy count clears ``threshold_sds`` noise standard deviations, so the tree
   grows only where there is mass above the noise (at most ``max_nodes`` per level: the largest
   noisy counts). Every level is released whatever the data: an empty level releases an empty
   vector and its share of ρ is booked all the same.
3. **Cells** (ρ_cells). Each row belongs to its *deepest active* node: the active nodes form a
   partition of the rows (no mass is lost where the tree stops). One Gaussian release of the
   (cells × d) sum matrix (sensitivity Λ) and one of the count vector (sensitivity 1) gives each
   cell a noisy mean and weight: the weighted coreset (Feldman, Fiat, Kaplan, Nissim 2009 for
   private coresets; Chang, Ghazi, Kumar, Manurangsi 2021 and Google's DP clustering library for
   the LSH-tree version). Cells whose noisy mean is too noisy (weight below the public minimum
   ``σ_sum·√d / (max_point_noise·Λ)`` or below the tree threshold) are dropped (post-processing).
4. **k-means on the coreset** (post-processing): weighted k-means++ with Lloyd, ``restarts`` times.
5. **Refinement** (ρ_refine): ``refine_steps`` DP-Lloyd steps on the rows from those centers
   (Blum, Dwork, McSherry, Nissim 2005; Su et al. 2016): noisy per-cluster sums and counts, a
   center moving only when its noisy count makes its mean precise enough. Google's library stops
   at step 4; the refinement is what turns a coarse coreset into accurate centers.

Privacy
-------
ρ-zCDP under add/remove of one row of the Λ-ball (rows are clipped to it first, a per-row map).
The partition (hyperplanes, or the grid's random shift) is drawn from the algorithm's stream
before any row is read, from d and Λ only: it is data-independent, so under either partition a
row lies in exactly one child per level, and the ``levels`` count releases, the cell sums and
counts and the refinement's sums and counts compose sequentially (Bun & Steinke 2016, Lemma 2.3);
each is one Gaussian mechanism on a vector whose ℓ2 sensitivity is 1 (counts) or Λ (sums), since
one row lies in exactly one node of a level, one cell and one cluster. The shares are public
parameters; the row-level (ε, δ) follows from ρ alone (CKS20 conversion), i.e. from public inputs
only.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from dpviz._threads import one_thread
from dpviz._validation import (
    MAX_CLUSTERS,
    check_data,
    check_delta,
    check_radius,
    check_rho,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.data.bounds import clip_to_ball
from dpviz.geometry import cluster_sums, nearest_center
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian_draw, gaussian_sigma_zcdp
from dpviz.registry import check_hinted, hint
from dpviz.result import Result, Trace

#: Most hash bits in all (node codes are int64 prefixes).
MAX_BITS = 60
#: ``partition="auto"`` hashes rows of at most this many dimensions with the shifted grid (its
#: fan-out 2**d per node stays small), more with hyperplanes through the center (issue 24's
#: high-dimensional design, unchanged).
GRID_MAX_D = 5


@dataclass(frozen=True)
class TreeCoresetParams:
    """The tree's shape, its pruning threshold, the budget split and the refinement."""

    levels: int = field(default=8, metadata=hint(low=1, high=20, step=1, label="tree levels L",
                                                 help="levels of the hash tree; each gets ρ_tree/L"))
    bits: int = field(default=2, metadata=hint(low=1, high=6, step=1, label="bits per level",
                                               help="hyperplanes per level: 2**bits children per node"))
    threshold_sds: float = field(default=4.0, metadata=hint(
        low=1.0, high=10.0, step=0.5, label="threshold (noise sds)",
        help="a node grows when its noisy count clears this many noise standard deviations"))
    max_nodes: int = field(default=2048, metadata=hint(low=16, high=16384, step=16, scale="log",
                                                       label="max nodes per level"))
    tree_share: float = field(default=0.15, metadata=hint(low=0.02, high=0.9, step=0.01,
                                                         label="tree share of ρ"))
    cell_share: float = field(default=0.3, metadata=hint(low=0.02, high=0.9, step=0.01,
                                                          label="coreset share of ρ"))
    count_frac: float = field(default=0.05, metadata=hint(
        low=0.01, high=0.9, step=0.01, label="count fraction",
        help="share of a sum/count release spent on the counts"))
    refine_steps: int = field(default=1, metadata=hint(low=0, high=10, step=1, label="refinement steps",
                                                       help="noisy Lloyd steps on the rows at the end"))
    max_point_noise: float = field(default=0.8, metadata=hint(
        low=0.05, high=5.0, step=0.05, label="max coreset point noise (× Λ)",
        help="a coreset cell is kept when its mean's expected noise is at most this × Λ"))
    coreset: str = field(default="leaves", metadata=hint(
        choices=("leaves", "all"), label="coreset cells",
        help="leaves: only cells of nodes without an active child (pure); all: every cell"))
    oversample: float = field(default=1.5, metadata=hint(
        low=1.0, high=4.0, step=0.25, label="oversampling k′/k",
        help="k-means on the coreset seeds k′ = ⌈oversample·k⌉ centers; after the first refinement "
             "step they are merged to k (weighted by noisy counts)"))
    restarts: int = field(default=10, metadata=hint(low=1, high=20, step=1, label="k-means restarts",
                                                   help="weighted k-means++ restarts on the coreset"))
    partition: str = field(default="auto", metadata=hint(
        choices=("auto", "grid", "hyperplanes"), label="hash partition",
        help="grid: a randomly shifted dyadic grid, d bits per level (bits per level is then d); "
             "hyperplanes: random hyperplanes through the ball's center (SimHash); auto: the grid "
             f"up to d = {GRID_MAX_D}, hyperplanes above"))

    def __post_init__(self) -> None:
        check_hinted(self, "tree_coreset")
        if self.levels * self.bits > MAX_BITS:
            raise ValueError(f"The 'levels' × 'bits' of tree_coreset must be at most {MAX_BITS}. "
                             f"Got {self.levels} × {self.bits}.")
        if self.tree_share + self.cell_share > 1.0 - 1e-9 and self.refine_steps > 0:
            raise ValueError("The 'tree_share' + 'cell_share' of tree_coreset must leave a share for "
                             f"the refinement (below 1). Got {self.tree_share} + {self.cell_share}.")
        if self.tree_share + self.cell_share > 1.0 + 1e-12:
            raise ValueError("The 'tree_share' + 'cell_share' of tree_coreset must be at most 1. "
                             f"Got {self.tree_share} + {self.cell_share}.")


@dataclass(frozen=True)
class TreeSplit:
    """ρ of every release and its σ, a function of ρ, d, Λ and the parameters only (public)."""

    rho_level: float
    rho_cell_sum: float
    rho_cell_count: float
    rho_step_sum: float
    rho_step_count: float
    sigma_level: float
    sigma_cell_sum: float
    sigma_cell_count: float
    sigma_step_sum: float
    sigma_step_count: float


def tree_split(rho: float, radius: float, p: TreeCoresetParams) -> TreeSplit:
    """The public budget split: ρ_tree/L per level, ρ_cells and ρ_refine/T per step (sum | count)."""
    refine_share = (1.0 - p.tree_share - p.cell_share) if p.refine_steps > 0 else 0.0
    cell_share = p.cell_share if p.refine_steps > 0 else 1.0 - p.tree_share
    rho_level = rho * p.tree_share / p.levels
    rho_cells = rho * cell_share
    rho_step = rho * refine_share / p.refine_steps if p.refine_steps > 0 else 0.0
    cf = p.count_frac

    def sig(sens: float, r: float) -> float:
        return gaussian_sigma_zcdp(sens, r) if r > 0 else math.inf

    return TreeSplit(rho_level, rho_cells * (1 - cf), rho_cells * cf, rho_step * (1 - cf), rho_step * cf,
                     sig(1.0, rho_level), sig(radius, rho_cells * (1 - cf)), sig(1.0, rho_cells * cf),
                     sig(radius, rho_step * (1 - cf)), sig(1.0, rho_step * cf))


def hyperplanes(levels: int, bits: int, d: int, gen: Any) -> np.ndarray:
    """``levels·bits`` random unit normals (public randomness from the algorithm's stream)."""
    G = np.asarray(gen.normal(0.0, 1.0, size=(levels * bits, d)), dtype=np.float64)
    return G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300)


#: The grid's fan-out 2**d per node: ``partition="grid"`` serves at most this many dimensions.
GRID_LIMIT_D = 10


def uses_grid(p: TreeCoresetParams, d: int) -> bool:
    """Whether the hashing is the shifted grid (a function of the parameters and d: public)."""
    if p.partition == "grid" and d > GRID_LIMIT_D:
        raise ValueError(f"The 'partition' of tree_coreset can be 'grid' only up to d = {GRID_LIMIT_D} "
                         f"(2**d children per node). Got d = {d}; use 'auto' or 'hyperplanes'.")
    return p.partition == "grid" or (p.partition == "auto" and d <= GRID_MAX_D)


def grid_levels(levels: int, d: int) -> int:
    """The grid's depth: ``levels``, at most :data:`MAX_BITS` // d (d bits per level)."""
    return max(1, min(levels, MAX_BITS // d))


def grid_shift(d: int, radius: float, gen: Any) -> np.ndarray:
    """The grid's public random corner a ∈ [−3Λ, −Λ]^d: its root box [a, a + 4Λ)^d holds the
    Λ-ball whatever the shift (drawn without the data)."""
    return -radius - 2.0 * radius * np.asarray(gen.random(d), dtype=np.float64)


def grid_chunks(X: np.ndarray, corner: np.ndarray, radius: float, levels: int) -> np.ndarray:
    """(levels, n) int64: each row's d-bit child at each level of the shifted dyadic grid; bit i
    of level ℓ is the last bit of the row's cell index along axis i at side 4Λ/2^ℓ (which half of
    its parent cell it is in)."""
    n, d = X.shape
    U = np.clip((X - corner[None, :]) / (4.0 * radius), 0.0, np.nextafter(1.0, 0.0))  # in [0, 1)
    q = np.floor(U * float(1 << levels)).astype(np.int64)  # the cell index at the deepest level
    weights = np.left_shift(1, np.arange(d - 1, -1, -1, dtype=np.int64))
    out = np.empty((levels, n), dtype=np.int64)
    for lv in range(levels):  # a loop over ≤ 60 levels, vectorized over rows
        out[lv] = ((q >> (levels - 1 - lv)) & 1) @ weights
    return out


def grid_boxes(codes: list[np.ndarray], corner: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Every cell's box [lo, hi) (cells numbered root first, then level by level) of the shifted grid.

    A function of the released tree (the active codes) and the public shift only, so using it is
    post-processing. Level ℓ's code is its parent's code followed by one d-bit chunk whose bit i is
    the row's half of the parent cell along axis i (:func:`grid_chunks`).
    """
    d = corner.shape[0]
    lo, side = [], []
    for lv, c in enumerate(codes):
        idx = np.zeros((c.size, d), dtype=np.int64)
        for step in range(lv):  # the chunk of level step + 1 sits (lv − 1 − step)·d bits up
            chunk = (c >> ((lv - 1 - step) * d)) & ((1 << d) - 1)
            bit = (chunk[:, None] >> np.arange(d - 1, -1, -1, dtype=np.int64)[None, :]) & 1
            idx = 2 * idx + bit
        s = 4.0 * radius / float(1 << lv)
        lo.append(corner[None, :] + idx * s)
        side.append(np.full(c.size, s))
    lo_all = np.concatenate(lo) if lo else np.zeros((0, d))
    return lo_all, lo_all + np.concatenate(side)[:, None]


def level_chunks(X: np.ndarray, G: np.ndarray, levels: int, bits: int) -> np.ndarray:
    """(levels, n) int64: the ``bits``-bit SimHash chunk of each row at each level."""
    B = (X @ G.T >= 0.0).astype(np.float64)  # (n, levels·bits); float products are exact here
    weights = np.exp2(np.arange(bits - 1, -1, -1, dtype=np.float64))
    return np.ascontiguousarray((B.reshape(X.shape[0], levels, bits) @ weights).T).astype(np.int64)


def _noisy(value: np.ndarray, *, sensitivity: float, rho: float, gen: Any, ledger: Ledger, name: str,
           note: str) -> np.ndarray:
    """A Gaussian release booked in the ledger; an empty vector is booked but drawn from nothing."""
    if value.size == 0:
        ledger.record(name, "gaussian", ZCDP(rho), sensitivity=sensitivity,
                      noise_scale=gaussian_sigma_zcdp(sensitivity, rho), note=note + " (empty release)")
        return value.astype(np.float64)
    out, _ = gaussian_draw(value.astype(np.float64), sensitivity=sensitivity, rho=rho, rng=gen,
                           ledger=ledger, name=name, note=note)
    return np.asarray(out, dtype=np.float64)


def grow_tree(chunks: np.ndarray, *, bits: int, threshold: float, max_nodes: int, rho_level: float,
              gen: Any, ledger: Ledger) -> tuple[np.ndarray, list[np.ndarray], list[dict]]:
    """Grow the prefix tree level by level; return each row's cell, the cells' codes, per-level stats.

    A row's cell is its deepest active node (cells are numbered root first, then level by level).
    """
    levels, n = chunks.shape
    fan = 1 << bits
    active = np.zeros(1, dtype=np.int64)  # the root's code
    rows = np.arange(n)  # rows whose current node is active ...
    node = np.zeros(n, dtype=np.int64)  # ... and that node's index in ``active``
    cell = np.zeros(n, dtype=np.int64)
    cell_codes: list[np.ndarray] = [active.copy()]
    stats: list[dict] = []
    offset = 1
    sigma = gaussian_sigma_zcdp(1.0, rho_level)
    for lv in range(levels):
        cand = (active[:, None] * fan + np.arange(fan, dtype=np.int64)[None, :]).ravel()  # sorted
        pos = node * fan + chunks[lv, rows]  # each inside row's child, as an index into ``cand``
        counts = np.bincount(pos, minlength=cand.size).astype(np.float64)
        noisy = _noisy(counts, sensitivity=1.0, rho=rho_level, gen=gen, ledger=ledger,
                       name=f"level {lv + 1} counts",
                       note=f"{cand.size} children of the active nodes; a row lies in one child")
        passed = np.flatnonzero(noisy >= threshold)
        if passed.size > max_nodes:  # post-processing of the noisy counts: keep the largest
            passed = np.sort(passed[np.argsort(noisy[passed])[::-1][:max_nodes]])
        new_index = np.full(cand.size, -1, dtype=np.int64)
        new_index[passed] = np.arange(passed.size)
        nxt = new_index[pos]
        moved = nxt >= 0
        rows, node = rows[moved], nxt[moved]
        cell[rows] = offset + node
        offset += passed.size
        active = cand[passed]
        cell_codes.append(active)
        stats.append(dict(level=lv + 1, candidates=int(cand.size), active=int(active.size),
                          sigma=sigma, noisy_counts=noisy[passed].copy()))
    return cell, cell_codes, stats


def leaf_cells(codes: list[np.ndarray], bits: int) -> np.ndarray:
    """Which cells are leaves of the active tree (no active child): a function of the released tree.

    An inner node's cell holds the rows left in it by children under the threshold, fragments of
    possibly several clusters, so its mean may lie between clusters.
    """
    out = []
    for lv, c in enumerate(codes):
        nxt = codes[lv + 1] >> bits if lv + 1 < len(codes) else np.zeros(0, dtype=np.int64)
        out.append(~np.isin(c, nxt))
    return np.concatenate(out)


def weighted_kmeans(P: np.ndarray, w: np.ndarray, k: int, restarts: int, gen: Any) -> np.ndarray:
    """k centers of the weighted coreset (weighted k-means++ and Lloyd; post-processing)."""
    m, d = P.shape
    if m == 0:
        return np.zeros((k, d))
    if m <= k:
        mean = (w[:, None] * P).sum(axis=0) / w.sum()
        return np.vstack([P, np.repeat(mean[None, :], k - m, axis=0)])
    with one_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # duplicate seeds: fewer distinct centers
        km = KMeans(k, n_init=restarts, random_state=int(gen.integers(2**31 - 1))).fit(P, sample_weight=w)
    return km.cluster_centers_.copy()


def tree_coreset(X: np.ndarray, k: int, *, rho: float, radius: float, delta: float = 0.0,
                 params: TreeCoresetParams | None = None, rng: Any = None) -> Result:
    """Private hash-tree coreset → weighted k-means → noisy Lloyd refinement (module docstring).

    Returns
    -------
    Result
        Trace: ``hashing`` (public hyperplanes), ``tree`` (per-level active nodes, released),
        ``coreset`` (noisy cell means and weights, released), ``coreset_centers`` (released),
        ``refine`` × T (released centers and noisy counts), ``tree_coreset_partition`` (internal).

    Privacy
    -------
    ρ-zCDP under add/remove of one row (see the module docstring); a δ > 0 is reserved, unspent.
    """
    func = "tree_coreset"
    p = params or TreeCoresetParams()
    X = check_data(X, func)
    n, d = X.shape
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    rho = check_rho(rho, func)
    delta = check_delta(delta, func, allow_zero=True)
    radius = check_radius(radius, "radius", func)
    gen, seed = check_rng(rng, "algorithm:tree_coreset")
    split = tree_split(rho, radius, p)
    Xc = clip_to_ball(X, radius)
    ledger = Ledger(func, ZCDP(rho, delta))
    trace = Trace()

    # 1. the public partition: a shifted grid in low dimension, else hyperplanes through the center
    if uses_grid(p, d):
        levels, bits = grid_levels(p.levels, d), d
        if levels != p.levels:  # fewer levels than asked (d bits each): ρ_tree over the levels grown
            split = tree_split(rho, radius, replace(p, levels=levels))
        corner = grid_shift(d, radius, gen)
        grid = corner
        chunks = grid_chunks(Xc, corner, radius, levels)
        trace.add("hashing", released=True, partition="grid", corner=corner.copy(), levels=levels,
                  bits=bits, note="Public: a dyadic grid of root side 4Λ at a random shift, drawn "
                                  "without the data.")
    else:
        levels, bits, grid = p.levels, p.bits, None
        G = hyperplanes(levels, bits, d, gen)
        chunks = level_chunks(Xc, G, levels, bits)
        trace.add("hashing", released=True, partition="hyperplanes", hyperplanes=G.copy(), levels=levels,
                  bits=bits, note="Public: random hyperplanes through the ball's center, drawn without "
                                  "the data.")

    # 2. the tree
    threshold = p.threshold_sds * split.sigma_level
    tree_node = ledger.child("tree", ZCDP(split.rho_level * levels),
                             note=f"{levels} levels of noisy child counts (sensitivity 1 each)")
    cell, codes, stats = grow_tree(chunks, bits=bits, threshold=threshold,
                                   max_nodes=p.max_nodes, rho_level=split.rho_level, gen=gen,
                                   ledger=tree_node)
    m = sum(c.size for c in codes)
    trace.add("tree", released=True, active_per_level=[1] + [s["active"] for s in stats],
              candidates_per_level=[1] + [s["candidates"] for s in stats], threshold=threshold,
              sigma_level=split.sigma_level, level_noisy_counts=[s["noisy_counts"] for s in stats],
              cells=int(m))

    # 3. the coreset: one noisy sum and count per cell
    cells_node = ledger.child("coreset cells", ZCDP(split.rho_cell_sum + split.rho_cell_count),
                              note="each row lies in its deepest active node")
    sums, counts = cluster_sums(Xc, cell, m)
    noisy_sums = _noisy(sums, sensitivity=radius, rho=split.rho_cell_sum, gen=gen, ledger=cells_node,
                        name="cell sums", note="one row moves one cell's sum by ≤ Λ")
    noisy_counts = _noisy(counts, sensitivity=1.0, rho=split.rho_cell_count, gen=gen, ledger=cells_node,
                          name="cell counts", note="one row moves one cell's count by 1")
    min_weight = max(p.threshold_sds * split.sigma_cell_count,
                     split.sigma_cell_sum * math.sqrt(d) / (p.max_point_noise * radius), 1.0)
    leaf = leaf_cells(codes, bits)
    keep = (noisy_counts >= min_weight) & (leaf if p.coreset == "leaves" else True)
    means = noisy_sums[keep] / noisy_counts[keep, None] if np.any(keep) else np.zeros((0, d))
    if grid is not None:
        # The rows of a grid cell lie in its box, so their mean does: projecting the noisy mean onto
        # the box (released tree + public shift) is post-processing that never moves it farther
        # from the true mean (issue 43: on 2-D blobs 0.08 apart the unprojected means, ±0.04 at the
        # minimum weight, smeared two clusters into one).
        lo, hi = grid_boxes(codes, grid, radius)
        means = np.clip(means, lo[keep], np.nextafter(hi[keep], lo[keep]))
    points = clip_to_ball(means, radius)
    weights = noisy_counts[keep]
    trace.add("coreset", released=True, points=points.copy(), weights=weights.copy(), min_weight=min_weight,
              leaves=int(leaf.sum()),
              sigma_sum=split.sigma_cell_sum, sigma_count=split.sigma_cell_count, cells=int(m))

    # 4. k-means on the coreset (post-processing): k′ = ⌈oversample·k⌉ seeds when a refinement follows
    k_seed = k if p.refine_steps == 0 else max(k, math.ceil(p.oversample * k))
    C = clip_to_ball(weighted_kmeans(points, weights, k_seed, p.restarts, gen), radius)
    trace.add("coreset_centers", released=True, centers=C.copy(), coreset_points=int(points.shape[0]))

    # 5. refinement: noisy Lloyd steps on the rows; after the first, k′ centers are merged to k
    labels = nearest_center(Xc, C)[0] if n else np.zeros(0, dtype=np.int64)
    if p.refine_steps > 0:
        rho_step = split.rho_step_sum + split.rho_step_count
        ref_node = ledger.child("refinement", ZCDP(rho_step * p.refine_steps),
                                note=f"{p.refine_steps} noisy Lloyd step(s) on the rows")
        min_count = max(1.0, split.sigma_step_sum * math.sqrt(d) / radius)
        for t in range(p.refine_steps):
            kk = C.shape[0]
            s, c = cluster_sums(Xc, labels, kk)
            step = ref_node.child(f"step {t + 1}", ZCDP(rho_step))
            ns = _noisy(s, sensitivity=radius, rho=split.rho_step_sum, gen=gen, ledger=step,
                        name="cluster sums", note="one row moves one cluster's sum by ≤ Λ")
            nc = _noisy(c, sensitivity=1.0, rho=split.rho_step_count, gen=gen, ledger=step,
                        name="cluster counts", note="one row moves one cluster's count by 1")
            ok = nc >= min_count
            if np.any(ok):
                C = C.copy()
                C[ok] = clip_to_ball(ns[ok] / nc[ok, None], radius)
            trace.add("refine", released=True, index=t, centers=C.copy(), noisy_counts=nc.copy(),
                      moved=ok.copy(), sigma_sum=split.sigma_step_sum, sigma_count=split.sigma_step_count,
                      min_count=min_count)
            if kk > k:  # merge the k′ refined centers to k, weighted by their noisy counts
                C = clip_to_ball(weighted_kmeans(C, np.maximum(nc, 1e-3), k, p.restarts, gen), radius)
                trace.add("merge", released=True, centers=C.copy(), from_centers=kk,
                          note="Post-processing: weighted k-means of the refined k′ centers.")
            if t + 1 < p.refine_steps and n:  # the next step's partition
                labels = nearest_center(Xc, C)[0]
    trace.add("tree_coreset_partition", released=False, labels=labels.astype(np.int64),
              note="Non-private: the partition of the rows the last step summed (nearest seeds).")
    if delta > 0:
        ledger.record("unused δ", "reserved", ZCDP(0.0, delta), note="tree_coreset is pure ρ-zCDP.")
    ledger.check()
    return Result(centers=C, failure=None, ledger=ledger, trace=trace.freeze(),
                  params=dict(algorithm=func, k=k, rho=rho, delta=delta, radius=radius,
                              **{f: getattr(p, f) for f in p.__dataclass_fields__}),
                  seed=seed, simulation=is_simulation(rng))

