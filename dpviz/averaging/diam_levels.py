"""FindDiam's pair counts, precomputed once per tuple stage (ρ-independent; Tsfadia et al. 2022, §5.1.2).

Inside FC_AvgOrdTup (§5.2.3) FindDiam runs once per coordinate j on the j-th points of the
reordered core tuples, and each CheckDiam call counts the pairs within r_min·b^e of each other:
O(c²) per call, about 33 calls per run, ~1 s at c ≈ 1,400 core tuples. None of those distances
depends on the budget. What does is *which* tuples are in the core (the filter's noisy keep mask)
and the random order π of FriendlyReorder. So, per tuple stage, this module computes once:

- for a reference tuple X¹ (the core's first tuple), σ_i = ord_{X¹}(Y^i) for **every** tuple i,
  exactly as :func:`dpviz.clustering.friendlycore.steps.friendly_reorder` computes it for the
  core tuples (σ_i depends on X¹ and Y^i only);
- for each reference point m, the points P_m = (Y^i_{σ_i(m)})_i and, for every pair (a, b), the
  smallest grid level e with ‖P_m[a] − P_m[b]‖² ≤ (r_min·b^e)², the squared distance computed
  as Σ (x − y)², the exact test of :func:`dpviz.core.predicates.dist_r_counts`.

A run then needs, for its core C and coordinate j (m = π(j)), the totals Σ_{a,b ∈ C} 1{level ≤ e}
for every e at once: one histogram over C × C, or, when C is most of the tuples, the rows' totals
minus a histogram over C × (not C). The counts are the same integers the direct computation
gives, so CheckDiam's a, its noise and the released radius are bit-identical (a test checks it);
only the work moves from every ε step to the cached non-private stage. Nothing here is private
or released: the counts feed CheckDiam's Gaussian, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from dpviz.averaging.diameter import diam_grid_size
from dpviz.core.tuple_predicates import ord_permutation

#: Reference tuples whose level matrices are kept per stage (k·t² bytes each: 18 MB at t = 1,500,
#: k = 8). The core's first tuple rarely changes between ε steps.
MAX_REFERENCES = 2
#: dist_{r_1..r_k} matrices kept per stage, keyed by (reference, radii): t² bytes each. The radii
#: FindDiam releases change only now and then between ε steps.
MAX_DIST_MATRICES = 4
#: Pairs per block while computing the level matrices (bounds the temporary arrays to ~40 MB).
_BLOCK_PAIRS = 1 << 21


def reference_sigma(reference: np.ndarray, tuples: np.ndarray) -> np.ndarray:
    """σ_i = ord_{reference}(Y^i) for all tuples, (t, k): the argmin map of
    :func:`~dpviz.clustering.friendlycore.steps.friendly_reorder` (same expression, so the same
    ties), the Hungarian assignment where it is not a bijection (§5.2.2)."""
    t, k, _ = tuples.shape
    if t == 0:
        return np.zeros((0, k), dtype=np.intp)
    D = np.linalg.norm(reference[None, :, None, :] - tuples[:, None, :, :], axis=3)  # (t, k, k)
    sigma = np.argmin(D, axis=2)
    bij = np.all(np.sort(sigma, axis=1) == np.arange(k), axis=1)
    for i in np.flatnonzero(~bij):
        sigma[i], _ = ord_permutation(reference, tuples[i])
    return sigma


def grid_r2(r_min: float, r_max: float, base: float) -> np.ndarray:
    """(r_min·b^e)² for e = 0..T, computed as CheckDiam and dist_r_counts compute them."""
    T = diam_grid_size(r_min, r_max, base)
    return np.array([float(r_min * base**e) ** 2 for e in range(T + 1)])


def pair_levels(P: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """levels[a, b] = the smallest e with Σ (P[a] − P[b])² ≤ r2[e] (len(r2) if none), uint8.

    The squared distance is the exact one of ``dist_r_counts`` (``_exact_le``: the difference,
    then ``einsum`` over the coordinates), so ``levels ≤ e`` is its friendship test at r2[e].
    Only the blocks on and right of the diagonal are computed: x − y and y − x are exact
    negations, so their squares, and the level, are the same."""
    t, d = P.shape
    if len(r2) >= 255:
        raise ValueError(f"pair_levels supports at most 254 grid levels; got {len(r2)}.")
    out = np.empty((t, t), dtype=np.uint8)
    rows = max(1, _BLOCK_PAIRS // max(t, 1))
    for s in range(0, t, rows):
        e = min(t, s + rows)
        diff = (P[s:e, None, :] - P[None, s:, :]).reshape(-1, d)
        d2 = np.einsum("ij,ij->i", diff, diff)
        block = np.searchsorted(r2, d2, side="left").astype(np.uint8).reshape(e - s, t - s)
        out[s:e, s:] = block
        out[s:, s:e] = block.T
    return out


@dataclass(frozen=True)
class _Reference:
    sigma: np.ndarray  # (t, k)
    levels: tuple[np.ndarray, ...]  # k matrices (t, t) uint8
    row_cum: tuple[np.ndarray, ...]  # k arrays (t, T + 2): Σ_b 1{levels[a, b] ≤ e}


class DiamLevels:
    """FindDiam's pair counts for one tuple database (a TupleStage's tuples), by reference tuple.

    ``totals(core_index, ordered, pi)`` gives, per coordinate j, the array of Σ_i s_i (CheckDiam's
    n·a) at every grid level, or None if ``ordered`` is not what this cache would order (then the
    caller counts directly). Thread-safe; keeps :data:`MAX_REFERENCES` references (LRU).
    """

    def __init__(self, tuples: np.ndarray, *, r_min: float, r_max: float, base: float) -> None:
        self.tuples = np.asarray(tuples, dtype=np.float64)
        self.grid = (float(r_min), float(r_max), float(base))
        self.r2 = grid_r2(r_min, r_max, base)
        self._refs: OrderedDict[int, _Reference] = OrderedDict()
        self._dist: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def reference(self, index: int) -> _Reference:
        """The σ's and level matrices for reference tuple ``index`` (computed once)."""
        with self._lock:
            ref = self._refs.get(index)
            if ref is not None:
                self._refs.move_to_end(index)
                return ref
        T = self.tuples
        t, k, _ = T.shape
        sigma = reference_sigma(T[index], T)
        rows = np.arange(t)
        levels, row_cum = [], []
        n_levels = len(self.r2)
        for m in range(k):
            L = pair_levels(T[rows, sigma[:, m]], self.r2)
            width = n_levels + 1
            flat = (L + (rows * width)[:, None]).ravel()  # row a, level e → a·width + e
            hist = np.bincount(flat, minlength=t * width).reshape(t, width)
            levels.append(L)
            row_cum.append(np.cumsum(hist, axis=1))
        ref = _Reference(sigma, tuple(levels), tuple(row_cum))
        with self._lock:
            ref = self._refs.setdefault(index, ref)
            while len(self._refs) > MAX_REFERENCES:
                self._refs.popitem(last=False)
        return ref

    def built(self, index: int) -> bool:
        with self._lock:
            return index in self._refs

    def totals(self, core_index: np.ndarray, ordered: np.ndarray, pi: np.ndarray, *,
               grid: tuple[float, float, float]) -> list[np.ndarray] | None:
        """Per coordinate j, Σ_{a,b ∈ core} 1{‖Ỹ^a_j − Ỹ^b_j‖ ≤ r_e} for e = 0..T (int64 arrays).

        ``ordered`` (c, k, d) and ``pi`` are FriendlyReorder's output on ``tuples[core_index]``
        with the first core tuple as reference; it is checked against this cache's σ (exact
        equality of the points), so a mismatch returns None instead of wrong counts, as does
        another FindDiam ``grid`` (r_min, r_max, b). Also None (count directly: it is cheaper)
        for a core under a quarter of the tuples whose reference is not built yet.
        """
        core_index = np.asarray(core_index, dtype=np.intp)
        c = core_index.size
        if c == 0 or tuple(map(float, grid)) != self.grid or len(self.r2) >= 255:
            return None  # (over 254 grid levels, e.g. a tiny r_min: uint8 levels do not fit)
        if 4 * c < self.tuples.shape[0] and not self.built(int(core_index[0])):
            return None
        ref = self.reference(int(core_index[0]))
        k = self.tuples.shape[1]
        m_of_j = np.asarray(pi)
        expect = self.tuples[core_index[:, None], ref.sigma[core_index][:, m_of_j]]
        if expect.shape != ordered.shape or not np.array_equal(expect, ordered):
            return None
        t = self.tuples.shape[0]
        n_levels = len(self.r2)
        out = []
        mask = np.zeros(t, dtype=bool)
        mask[core_index] = True
        rest = np.flatnonzero(~mask)
        for j in range(k):
            m = int(m_of_j[j])
            L = ref.levels[m]
            if rest.size < c:  # most tuples are in the core: all of their row totals minus the rest
                full = ref.row_cum[m][core_index].sum(axis=0)
                out_of_core = np.bincount(L[np.ix_(core_index, rest)].ravel(), minlength=n_levels + 1)
                tot = full - np.cumsum(out_of_core)
            else:
                tot = np.cumsum(np.bincount(L[np.ix_(core_index, core_index)].ravel(),
                                            minlength=n_levels + 1))
            out.append(tot[:n_levels].astype(np.int64))
        return out


    def dist_counts(self, core_index: np.ndarray, ordered: np.ndarray, pi: np.ndarray,
                    radii: np.ndarray) -> np.ndarray | None:
        """FriendlyCore(dist_r1..rk)'s friend counts of the ordered core (as
        :func:`dpviz.core.tuple_predicates.ordered_dist_counts` gives them), from a t × t
        matrix of dist_{r_1..r_k} over all tuples kept per (reference, radii): the counts of a
        core C are the rows' totals minus their pairs outside C (or a sum over C × C when C is
        small). The matrix is computed with the same ``cdist`` test, pair by pair, so the counts
        are the same integers. None when ``ordered`` is not this cache's order of the core or
        its reference is not built (then the caller counts directly)."""
        core_index = np.asarray(core_index, dtype=np.intp)
        c = core_index.size
        if c == 0 or not self.built(int(core_index[0])):
            return None
        ref = self.reference(int(core_index[0]))
        m_of_j = np.asarray(pi)
        expect = self.tuples[core_index[:, None], ref.sigma[core_index][:, m_of_j]]
        if expect.shape != ordered.shape or not np.array_equal(expect, ordered):
            return None
        r = np.asarray(radii, dtype=np.float64)
        # coordinate j of the order is reference point π(j): the radius of point m
        r_of_m = np.empty_like(r)
        r_of_m[m_of_j] = r
        key = (int(core_index[0]), r_of_m.tobytes())
        with self._lock:
            entry = self._dist.get(key)
            if entry is not None:
                self._dist.move_to_end(key)
        if entry is None:
            T, t = self.tuples, self.tuples.shape[0]
            rows = np.arange(t)
            M = np.ones((t, t), dtype=bool)
            for m in range(T.shape[1]):
                P = T[rows, ref.sigma[:, m]]
                M &= cdist(P, P) <= r_of_m[m]
            entry = (M, M.sum(axis=1).astype(np.int64))
            with self._lock:
                entry = self._dist.setdefault(key, entry)
                while len(self._dist) > MAX_DIST_MATRICES:
                    self._dist.popitem(last=False)
        M, row_totals = entry
        mask = np.zeros(M.shape[0], dtype=bool)
        mask[core_index] = True
        rest = np.flatnonzero(~mask)
        if rest.size < c:
            return row_totals[core_index] - M[np.ix_(core_index, rest)].sum(axis=1).astype(np.int64)
        return M[np.ix_(core_index, core_index)].sum(axis=1).astype(np.int64)


_CACHE_LOCK = threading.Lock()


def stage_diam_levels(tuples: np.ndarray, *, r_min: float, r_max: float, base: float,
                      owner: dict) -> DiamLevels:
    """The :class:`DiamLevels` of ``tuples`` for this grid, kept in ``owner`` (a dict that lives
    as long as the tuple stage, e.g. the stage's own cache slot)."""
    key = (float(r_min), float(r_max), float(base))
    with _CACHE_LOCK:
        levels = owner.get(key)
        if levels is None:
            levels = owner[key] = DiamLevels(tuples, r_min=r_min, r_max=r_max, base=base)
    return levels
