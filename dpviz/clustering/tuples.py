"""Sample-and-aggregate, the non-private stage: split the rows into t pieces, cluster each piece.

The result (t k-tuples of centers) depends on the data, k, t, the oracle and the seed, but not on
the privacy budget, so the app computes it once and reruns only the private aggregation when ρ or
δ moves (DESIGN.md, "Two stages").

**The entry point is** :func:`tuple_stage` (alias ``fc_tuple_stage``): rows outside the public
Λ-ball dropped (FriendlyCore) or clipped (Easy Instances), the pieces, the oracle, and the
implementation chosen from the *declared* size only. FriendlyCore (``fc_clustering``, the
registry's stage, the app's run layer), the sweeps (``dpviz.sweeps``) and Easy Instances
call it; :func:`stage_match_graph` is the stage's cached match graph. Lower-level pieces:
:func:`compute_tuples` (pieces + oracle on given rows), :func:`block_streams` and
:func:`tuples_from_pieces` (pieces gathered elsewhere: ``dpviz.large``), the batched k-means
(``_tuples_batched``) and the per-piece scikit-learn loop.

Thread safety: native thread limits come from :mod:`dpviz._threads` (``one_thread``, safe from
any number of threads); the match-graph cache is guarded by a lock.

Two implementations of the same oracle:

* ``method="batched"``: one numpy k-means over all pieces at once (pieces padded and masked;
  greedy k-means++ seeding vectorized across pieces; Lloyd iterations with early stop). No
  Python loop over points; loops run over the k seeding steps, the Lloyd iterations and groups
  of pieces (to bound memory).
* ``method="sklearn"``: scikit-learn ``KMeans(n_init=1)`` per piece, pinned to one thread.

``method="auto"`` picks the faster one for the input size (measured in ``bench/tuples_speed.py``).

References
----------
Tsfadia et al. 2022, §5.2 (FC_Clustering, steps 1–4; the PCA oracle of footnote 5);
Arthur & Vassilvitskii 2007 (k-means++); the greedy variant with 2 + ⌊ln k⌋ local trials is
scikit-learn's ``_kmeans_plusplus``.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpviz._threads import default_n_jobs, one_thread
from dpviz._validation import MAX_CLUSTERS, RngLike, check_data, check_radius, check_rng, check_scalar
from dpviz.core.tuple_predicates import GAMMA, MatchGraph, match_graph
from dpviz.data.bounds import clip_to_ball

Oracle = Literal["kmeans++", "pca"]
Method = Literal["auto", "batched", "sklearn"]

ORACLES: tuple[str, ...] = ("kmeans++", "pca")
METHODS: tuple[str, ...] = ("auto", "batched", "sklearn")

#: ``method="auto"`` uses the batched numpy k-means while n·d is at most this (per oracle) and
#: the per-piece scikit-learn loop above it. Set from bench/tuples_speed.py on 2 shared, heavily
#: loaded cores (best of 3, one thread each). d=2, k=8, t=200, batched vs sklearn: 29–38× faster
#: at n=10⁴, 8–10× at 5·10⁴, 4× at 2·10⁵, 3× at 4·10⁵, 0.8–2.9× at 10⁶ (parity within the
#: noise). Fig. 7 data, d=50, k=5: k-means++ batched 2× faster at n=5·10⁴, slower at 2.5·10⁵;
#: the PCA oracle (Lloyd in k dimensions) is faster batched at every size tried.
AUTO_BATCHED_MAX_CELLS: dict[str, int] = {"kmeans++": 1_000_000, "pca": 20_000_000}

#: Elements (pieces × rows × max(k, local trials)) per batched group; bounds peak memory.
_GROUP_ELEMENTS = 4_000_000

#: The pieces are cut into this many blocks (fewer when t is smaller), each with its own random
#: stream spawned from the caller's Generator. Blocks run on ``n_jobs`` threads; because the cut
#: and the streams depend only on t, the tuples for a seed are the same for every ``n_jobs``.
N_BLOCKS = 8

#: Lloyd defaults (scikit-learn's KMeans defaults).
MAX_ITER = 300
TOL = 1e-4


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class TupleStage:
    """The non-private stage of sample-and-aggregate.

    Attributes
    ----------
    tuples : (t, k, d) array
        The oracle's k centers for each piece (internal, non-private).
    piece_of_row : (n,) int array
        The piece of each row (independent uniform draws: one row touches one piece).
    piece_sizes : (t,) int array
        Rows per piece.
    k, n_pieces : int
    oracle : {"kmeans++", "pca"}
    method : {"batched", "sklearn"}
        The implementation actually used.
    seconds : float
        Wall time of the stage.
    valid : (t,) bool array
        False for a tuple from a piece with fewer than k rows, or with two equal centers (such a
        tuple is not match_γ-friendly with itself). Invalid tuples are still the oracle's output
        for that piece, so keeping or dropping them is privacy-neutral (each depends on one
        piece only); they simply never find friends.
    seed : int or None
        The replay seed (None when a Generator was passed).
    """

    tuples: np.ndarray
    piece_of_row: np.ndarray
    piece_sizes: np.ndarray
    k: int
    n_pieces: int
    oracle: str
    method: str
    seconds: float
    valid: np.ndarray | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        tuples = np.asarray(self.tuples, dtype=np.float64)
        if tuples.ndim != 3 or tuples.shape[:2] != (self.n_pieces, self.k):
            raise ValueError(f"TupleStage.tuples must have shape (n_pieces, k, d) = "
                             f"({self.n_pieces}, {self.k}, d). Got {tuples.shape}.")
        sizes = np.asarray(self.piece_sizes, dtype=np.int64)
        if self.valid is None:
            object.__setattr__(self, "valid", tuple_validity(tuples, sizes))
        for name in ("tuples", "piece_of_row", "piece_sizes", "valid"):
            arr = np.array(getattr(self, name), copy=True)
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @property
    def n_valid(self) -> int:
        return int(np.count_nonzero(self.valid))


#: Two centers closer than this times (1 + the tuple's largest norm) count as duplicates.
DUPLICATE_RTOL = 1e-9


def tuple_validity(tuples: np.ndarray, piece_sizes: np.ndarray) -> np.ndarray:
    """True where the piece had ≥ k rows and the tuple's k centers are finite and pairwise
    distinct (farther apart than DUPLICATE_RTOL·(1 + max norm): rounding noise is not distinct)."""
    k = tuples.shape[1]
    ok = (np.asarray(piece_sizes) >= k) & np.all(np.isfinite(tuples), axis=(1, 2))
    if k > 1:
        diff = tuples[:, :, None, :] - tuples[:, None, :, :]
        d2 = np.einsum("tijd,tijd->tij", diff, diff)
        d2[:, np.arange(k), np.arange(k)] = np.inf
        scale = 1.0 + np.sqrt(np.einsum("tkd,tkd->tk", tuples, tuples).max(axis=1))
        with np.errstate(invalid="ignore"):
            ok &= np.sqrt(d2.min(axis=(1, 2))) > DUPLICATE_RTOL * scale
    return ok


# ----------------------------------------------------------------------------- pieces


def assign_pieces(n: int, n_pieces: int, rng: np.random.Generator) -> np.ndarray:
    """Each of n rows to one of ``n_pieces`` pieces, independently and uniformly at random.

    Not "shuffle then consecutive chunks of size ⌊n/t⌋" (FC_Clustering step 1–2): with
    independent draws, adding or removing one row changes exactly one piece and moves no chunk
    boundary, so one row changes at most one tuple (seed note §4.5).
    """
    return rng.integers(0, n_pieces, size=n, dtype=np.int64)


def _fill_small_piece(Xp: np.ndarray, k: int, d: int) -> np.ndarray:
    """A deterministic placeholder tuple for a piece with fewer than k rows (flagged invalid)."""
    if Xp.shape[0] == 0:
        return np.zeros((k, d))
    return Xp[np.arange(k) % Xp.shape[0]].copy()


# ----------------------------------------------------------------------------- batched k-means


def _sqdist(P: np.ndarray, C: np.ndarray, sqn: np.ndarray | None = None) -> np.ndarray:
    """Squared distances (g, m, c) between rows P (g, m, d) and centers C (g, c, d), clamped ≥ 0."""
    cross = P @ C.transpose(0, 2, 1)
    cn = np.einsum("gcd,gcd->gc", C, C)
    if sqn is None:
        sqn = np.einsum("gmd,gmd->gm", P, P)
    return np.maximum(sqn[:, :, None] + cn[:, None, :] - 2.0 * cross, 0.0)


def _sample_rows(w: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Per piece, ``n_draws`` row indices drawn with probability ∝ w (g, m); rows of w sum > 0."""
    cs = np.cumsum(w, axis=1)
    u = rng.random((w.shape[0], n_draws)) * cs[:, -1:]
    idx = np.sum(cs[:, None, :] <= u[:, :, None], axis=2)
    return np.minimum(idx, w.shape[1] - 1)


def _kmeanspp_batched(
    P: np.ndarray, mask: np.ndarray, sqn: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """Greedy k-means++ seeding in every piece at once; never picks a row twice while unpicked
    rows with positive distance remain (so ≥ k distinct rows give k distinct centers)."""
    g, m, d = P.shape
    ar = np.arange(g)
    sizes = mask.sum(axis=1)
    n_trials = 2 + int(math.log(k))
    C = np.empty((g, k, d))
    chosen = np.zeros((g, m), dtype=bool)
    first = np.minimum((rng.random(g) * sizes).astype(np.int64), np.maximum(sizes - 1, 0))
    C[:, 0] = P[ar, first]
    chosen[ar, first] = True
    # Squared distances below this count as 0 (rounding of the Gram trick on duplicate rows).
    eps = 1e-12 * (sqn.sum(axis=1) / np.maximum(sizes, 1) + 1e-300)[:, None]
    PT = np.ascontiguousarray(P.transpose(0, 2, 1))  # (g, d, m)
    maskf = mask.astype(np.float64)
    dist2 = _sqdist(P, C[:, :1], sqn)[:, :, 0] * mask
    dist2 = np.where(dist2 > eps, dist2, 0.0)
    for j in range(1, k):  # loop over the k seeding steps, vectorized over pieces and rows
        free = mask & ~chosen
        w = np.where(free, dist2, 0.0)
        empty = w.sum(axis=1) <= 0
        if np.any(empty):  # no mass left: uniform over unpicked rows, else any row
            fb = free[empty]
            exhausted = ~fb.any(axis=1)  # fewer than j + 1 rows: repeat a row (flagged invalid)
            fb[exhausted] = mask[empty][exhausted]
            fb[~fb.any(axis=1), 0] = True  # an empty piece: its (zero) padding row
            w[empty] = fb
        cand = _sample_rows(w, n_trials, rng)  # (g, L)
        Cc = P[ar[:, None], cand]  # (g, L, d)
        # ||p − c||² for every candidate and row, laid out (g, L, m), updated in place.
        new_dist2 = Cc @ PT
        new_dist2 *= -2.0
        new_dist2 += sqn[:, None, :]
        new_dist2 += np.einsum("gld,gld->gl", Cc, Cc)[:, :, None]
        np.maximum(new_dist2, 0.0, out=new_dist2)
        np.minimum(new_dist2, dist2[:, None, :], out=new_dist2)
        pot = (new_dist2 @ maskf[:, :, None])[:, :, 0]  # potential of each candidate
        best = np.argmin(pot, axis=1)
        C[:, j] = Cc[ar, best]
        dist2 = new_dist2[ar, best]
        dist2 = np.where(dist2 > eps, dist2, 0.0)
        chosen[ar, cand[ar, best]] = True
    return C


def _cluster_means(
    P: np.ndarray, mask: np.ndarray, labels: np.ndarray, k: int, fallback: np.ndarray
) -> np.ndarray:
    """Per piece, the mean of each cluster's rows; an empty cluster keeps ``fallback``.

    Padded rows are zero in P and carry weight 0 in ``mask``, so no boolean indexing is needed.
    """
    g, m, d = P.shape
    w = mask.astype(np.float64)
    if d <= 4:
        flat = (np.arange(g)[:, None] * k + labels).ravel()
        counts = np.bincount(flat, weights=w.ravel(), minlength=g * k).reshape(g, k)
        sums = np.empty((g, k, d))
        flatP = P.reshape(g * m, d)
        for j in range(d):  # loop over dimensions, not points
            sums[:, :, j] = np.bincount(flat, weights=flatP[:, j], minlength=g * k).reshape(g, k)
    else:
        onehot = (labels[:, :, None] == np.arange(k)) * w[:, :, None]  # (g, m, k)
        counts = onehot.sum(axis=1)
        sums = onehot.transpose(0, 2, 1) @ P
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts[:, :, None]
    return np.where(counts[:, :, None] > 0, means, fallback)


def _lloyd_batched(
    P: np.ndarray, mask: np.ndarray, C: np.ndarray, *, max_iter: int, tol: np.ndarray
) -> np.ndarray:
    """Lloyd iterations in every piece at once; a piece stops (and leaves the working set) once
    its center shift² ≤ its tol, as scikit-learn's per-piece run would."""
    k = C.shape[1]
    C = C.copy()
    idx = np.arange(P.shape[0])  # pieces still iterating
    Pw, Mw, Cw, tw = P, mask, C, tol
    for _ in range(max_iter):
        # argmin_j ||p − c_j||² = argmin_j (||c_j||² − 2 p·c_j): ||p||² is not needed.
        score = np.einsum("gcd,gcd->gc", Cw, Cw)[:, None, :] - 2.0 * (Pw @ Cw.transpose(0, 2, 1))
        newC = _cluster_means(Pw, Mw, np.argmin(score, axis=2), k, Cw)
        done = np.sum((newC - Cw) ** 2, axis=(1, 2)) <= tw
        Cw = newC
        if done.all():
            break
        if done.any():
            C[idx[done]] = Cw[done]
            keep = ~done
            idx, Pw, Mw, Cw, tw = idx[keep], Pw[keep], Mw[keep], Cw[keep], tw[keep]
    C[idx] = Cw
    return C


def _labels_batched(P: np.ndarray, C: np.ndarray) -> np.ndarray:
    score = np.einsum("gcd,gcd->gc", C, C)[:, None, :] - 2.0 * (P @ C.transpose(0, 2, 1))
    return np.argmin(score, axis=2)


def _kmeans_batched(
    P: np.ndarray, mask: np.ndarray, k: int, rng: np.random.Generator, *, max_iter: int, tol: float
) -> np.ndarray:
    """k-means++ then Lloyd in every piece; P is centred per piece and zero on padded rows."""
    sizes = np.maximum(mask.sum(axis=1), 1)
    sqn = np.einsum("gmd,gmd->gm", P, P)
    # scikit-learn's tolerance: tol × mean per-feature variance of the piece.
    tol_abs = tol * sqn.sum(axis=1) / (sizes * P.shape[2])
    C = _kmeanspp_batched(P, mask, sqn, k, rng)
    return _lloyd_batched(P, mask, C, max_iter=max_iter, tol=tol_abs)


def _pca_oracle_batched(
    P: np.ndarray, mask: np.ndarray, k: int, rng: np.random.Generator, *, max_iter: int, tol: float
) -> np.ndarray:
    """Footnote 5: top-k PCA projection, k-means++ there, cluster means in the original space,
    one Lloyd step. P is centred per piece and zero on padded rows."""
    m, d = P.shape[1:]
    q = min(k, d)
    if d <= m:
        _, V = np.linalg.eigh(P.transpose(0, 2, 1) @ P)  # ascending eigenvalues
        V = V[:, :, ::-1][:, :, :q]
    else:
        _, _, Vt = np.linalg.svd(P, full_matrices=False)
        V = Vt[:, :q, :].transpose(0, 2, 1)
    Z = P @ V  # (g, m, q); padded rows stay 0
    Cz = _kmeans_batched(Z, mask, k, rng, max_iter=max_iter, tol=tol)
    labels = _labels_batched(Z, Cz)
    # Map the clustering back: means in the original space (empty: the back-projected center).
    C = _cluster_means(P, mask, labels, k, Cz @ V.transpose(0, 2, 1))
    # One Lloyd step in the original space.
    return _cluster_means(P, mask, _labels_batched(P, C), k, C)


def _tuples_batched(
    X: np.ndarray, piece_of_row: np.ndarray, sizes: np.ndarray, k: int, oracle: str,
    rng: np.random.Generator, *, max_iter: int, tol: float, n_jobs: int = 1,
) -> np.ndarray:
    n, d = X.shape
    t = sizes.shape[0]
    order = np.argsort(piece_of_row, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    m = max(int(sizes.max()), 1)
    ps = piece_of_row[order]
    pos = np.arange(n) - starts[ps]
    P = np.zeros((t, m, d))
    P[ps, pos] = X[order]
    mask = np.zeros((t, m), dtype=bool)
    mask[ps, pos] = True
    mu = P.sum(axis=1) / np.maximum(sizes, 1)[:, None]
    P -= mu[:, None, :]
    P *= mask[:, :, None]
    width = max(k, 2 + int(math.log(k)), d if oracle == "pca" else 1)
    group = max(1, _GROUP_ELEMENTS // (m * width))
    out = np.empty((t, k, d))
    oracle_fn = _pca_oracle_batched if oracle == "pca" else _kmeans_batched

    def block(sl: slice, gen: np.random.Generator) -> None:
        for s in range(sl.start, sl.stop, group):  # groups of pieces (bounded memory)
            g = slice(s, min(s + group, sl.stop))
            out[g] = oracle_fn(P[g], mask[g], k, gen, max_iter=max_iter, tol=tol)

    _run_blocks(block, _blocks(t), rng, n_jobs)
    return out + mu[:, None, :]


def _blocks(t: int, n_blocks: int | None = None) -> list[slice]:
    """Cut t pieces into contiguous blocks: at most N_BLOCKS (a function of t only), or
    ``n_blocks`` of them when a caller bounds a block's rows from public sizes (``dpviz.large``)."""
    n_blocks = N_BLOCKS if n_blocks is None else max(1, int(n_blocks))
    edges = np.linspace(0, t, min(n_blocks, t) + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges) if b > a]


def _run_blocks(
    fn: Callable[[slice, np.random.Generator], None], blocks: Sequence[slice],
    rng: np.random.Generator, n_jobs: int,
) -> None:
    """fn(block, its own Generator) for every block, on ``n_jobs`` threads (numpy and
    scikit-learn release the GIL in their kernels). The streams are spawned before any block
    runs, so the result does not depend on the number of threads or their timing."""
    gens = [np.random.default_rng(int(x)) for x in rng.integers(0, 2**63 - 1, size=len(blocks))]
    def one(b: slice, g: np.random.Generator) -> None:
        # OpenMP's thread count is per thread: limit it inside every worker, not only the caller.
        with one_thread():
            fn(b, g)

    if n_jobs <= 1 or len(blocks) == 1:
        for b, g in zip(blocks, gens, strict=True):
            one(b, g)
        return
    with ThreadPoolExecutor(max_workers=min(n_jobs, len(blocks))) as pool:
        for f in [pool.submit(one, b, g) for b, g in zip(blocks, gens, strict=True)]:
            f.result()


# ----------------------------------------------------------------------------- sklearn loop


def _pca_oracle_piece(Xp: np.ndarray, k: int, seed: int, max_iter: int, tol: float) -> np.ndarray:
    from sklearn.cluster import KMeans

    mu = Xp.mean(axis=0)
    P = Xp - mu
    q = min(k, P.shape[1])
    _, _, Vt = np.linalg.svd(P, full_matrices=False)
    V = Vt[:q].T
    Z = P @ V
    km = KMeans(n_clusters=k, n_init=1, random_state=seed, max_iter=max_iter, tol=tol).fit(Z)
    labels = km.labels_
    C = km.cluster_centers_ @ V.T
    counts = np.bincount(labels, minlength=k)
    sums = np.zeros((k, P.shape[1]))
    np.add.at(sums, labels, P)
    C = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
    lab = np.argmin((C * C).sum(1)[None, :] - 2.0 * P @ C.T, axis=1)
    counts = np.bincount(lab, minlength=k)
    sums = np.zeros_like(C)
    np.add.at(sums, lab, P)
    C = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
    return C + mu


def _tuples_sklearn(
    X: np.ndarray, piece_of_row: np.ndarray, sizes: np.ndarray, k: int, oracle: str,
    rng: np.random.Generator, *, max_iter: int, tol: float, n_jobs: int = 1,
) -> np.ndarray:
    from sklearn.cluster import KMeans

    t, d = sizes.shape[0], X.shape[1]
    order = np.argsort(piece_of_row, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    seeds = rng.integers(0, 2**31 - 1, size=t)
    out = np.empty((t, k, d))

    def block(sl: slice, _gen: np.random.Generator) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning on pieces with duplicate rows
            for i in range(sl.start, sl.stop):  # loop over pieces
                Xp = X[order[bounds[i] : bounds[i + 1]]]
                if Xp.shape[0] < k:
                    out[i] = _fill_small_piece(Xp, k, d)
                elif oracle == "pca":
                    out[i] = _pca_oracle_piece(Xp, k, int(seeds[i]), max_iter, tol)
                else:
                    km = KMeans(n_clusters=k, n_init=1, random_state=int(seeds[i]),
                                max_iter=max_iter, tol=tol)
                    out[i] = km.fit(Xp).cluster_centers_

    _run_blocks(block, _blocks(t), rng, n_jobs)
    return out


# ----------------------------------------------------------------------------- public


#: ``method="auto"`` also picks the batched k-means when pieces are this small (rows per piece,
#: n / t): at n = 10⁶, d = 2, k = 8, t = 5000 (200 rows a piece) it took 3.8 s against 45.7 s for
#: the per-piece scikit-learn loop (shared 2-core machine, load ≈ 13).
AUTO_BATCHED_MAX_PIECE_ROWS = 2_000


def resolve_method(method: str, n: int, d: int = 2, oracle: str = "kmeans++",
                   n_tuples: int | None = None) -> str:
    """The implementation ``method="auto"`` picks for an (n, d) input split into ``n_tuples``
    pieces (AUTO_BATCHED_MAX_CELLS, AUTO_BATCHED_MAX_PIECE_ROWS). ``n`` is the declared size."""
    if method == "auto":
        small_pieces = n_tuples is not None and n / n_tuples <= AUTO_BATCHED_MAX_PIECE_ROWS
        return "batched" if small_pieces or n * d <= AUTO_BATCHED_MAX_CELLS[oracle] else "sklearn"
    return method


def compute_tuples(
    X: np.ndarray,
    k: int,
    *,
    n_tuples: int = 200,
    oracle: Oracle = "kmeans++",
    rng: RngLike = None,
    method: Method = "auto",
    max_iter: int = MAX_ITER,
    tol: float = TOL,
    n_jobs: int | None = None,
    require_rows: bool = True,
) -> TupleStage:
    """Split the rows into ``n_tuples`` random pieces and cluster each with the oracle.

    Tsfadia et al.'s FC_Clustering steps 1–4, with pieces drawn row by row (see
    :func:`assign_pieces`). Pieces hold Binomial(n, 1/t) rows; a piece with fewer than k rows
    gets a placeholder tuple (its rows repeated) that is flagged ``valid=False``.

    Parameters
    ----------
    X : (n, d) array
    k : int
        Centers per tuple.
    n_tuples : int, default 200
        Number of pieces t (the paper uses 200; 300 in Fig. 3).
    oracle : {"kmeans++", "pca"}
        "kmeans++": Lloyd after greedy k-means++ seeding (scikit-learn's KMeans, n_init=1).
        "pca": footnote 5's clusterer for Gaussian mixtures: project the piece on its top-k
        principal components, run k-means++ there, take the cluster means in the original
        space, then one Lloyd step.
    rng : Generator, int or None
    method : {"auto", "batched", "sklearn"}
        Same oracle, two implementations; "auto" picks the faster for n.
    max_iter, tol : Lloyd stopping rule (scikit-learn's meaning and defaults).
    n_jobs : int, optional
        Threads for the pieces (default: every core this process may use). The pieces are cut
        into blocks with their own random streams (:data:`N_BLOCKS`), so the tuples for a given
        seed are identical for every ``n_jobs``.

    Returns
    -------
    TupleStage

    require_rows : bool, default True
        Raise when n < n_tuples·k (a direct, non-private call that asked for too many pieces).
        Private paths pass False (:func:`tuple_stage` always does): whether the rows suffice is
        then data, and a shortfall only leaves pieces with < k rows, whose placeholder tuples
        are flagged invalid and find no friends (the mechanism answers ⊥ like any other
        failure). A data-dependent refusal would tell D from D minus one row (issue 25).

    Raises
    ------
    ValueError
        k < 1, n_tuples < 1, an unknown oracle or method, or (``require_rows``) n < n_tuples·k.

    Privacy
    -------
    NON-PRIVATE: the tuples are internal values. Privacy comes from the aggregation that
    follows (FriendlyCore over the tuples); it holds for any oracle, and with independent piece
    assignment one row changes one tuple (replace = distance 2 in the tuple relation).

    References
    ----------
    Tsfadia et al. 2022, §5.2.5 (FC_Clustering steps 1–4) and footnote 5 (PCA oracle).
    """
    func = "compute_tuples"
    X = check_data(X, func)
    n, _ = X.shape
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    t = check_scalar(n_tuples, "n_tuples", func, low=1, high_open=True, integer=True)
    if oracle not in ORACLES:
        raise ValueError(f"The 'oracle' parameter of {func} must be one of {ORACLES}. Got {oracle!r}.")
    if method not in METHODS:
        raise ValueError(f"The 'method' parameter of {func} must be one of {METHODS}. Got {method!r}.")
    max_iter = check_scalar(max_iter, "max_iter", func, low=1, high_open=True, integer=True)
    tol = check_scalar(tol, "tol", func, low=0.0, high_open=True)
    n_jobs = default_n_jobs() if n_jobs is None else check_scalar(
        n_jobs, "n_jobs", func, low=1, high=1024, integer=True)
    if require_rows and n < t * k:  # a caller's non-private call; private paths pass False
        raise ValueError(
            f"n_tuples={t} with k={k} needs at least {t * k} rows; got n={n}. "
            f"Use n_tuples <= {max(n // k, 1)} or a smaller k.")
    gen, seed = check_rng(rng, "algorithm:friendlycore")
    start = time.perf_counter()
    piece_of_row = assign_pieces(n, t, gen)
    sizes = np.bincount(piece_of_row, minlength=t)
    used = resolve_method(method, n, X.shape[1], oracle, n_tuples=t)
    impl = _tuples_batched if used == "batched" else _tuples_sklearn
    if n == 0:  # no rows (e.g. none inside Λ): every piece is a placeholder, flagged invalid
        tuples = np.zeros((t, k, X.shape[1]))
    else:
        with one_thread():  # tiny BLAS calls: threads only add contention
            tuples = impl(X, piece_of_row, sizes, k, oracle, gen, max_iter=max_iter, tol=tol,
                          n_jobs=n_jobs)
    small = np.flatnonzero(sizes < k)
    if small.size:
        for i in small:  # rare: only pieces with < k rows
            tuples[i] = _fill_small_piece(X[piece_of_row == i], k, X.shape[1])
    seconds = time.perf_counter() - start
    return TupleStage(tuples=tuples, piece_of_row=piece_of_row, piece_sizes=sizes, k=k,
                      n_pieces=t, oracle=oracle, method=used, seconds=seconds, seed=seed)


# ----------------------------------------------------------------------------- gathered pieces


def block_streams(n_pieces: int, rng: np.random.Generator,
                  n_blocks: int | None = None) -> list[tuple[slice, int]]:
    """The blocks of :func:`_blocks` with one seed each, drawn from ``rng`` before any block runs.

    A caller that gathers the pieces itself (``dpviz.large``: pieces from a keyed hash, blocks
    run on threads or Dask workers) runs :func:`tuples_from_pieces` once per block with its
    seed, so the tuples depend on the seed and t only, never on the engine or its timing.
    ``n_blocks`` (default: :data:`N_BLOCKS`) must itself come from public sizes only.
    """
    blocks = _blocks(n_pieces, n_blocks)
    seeds = rng.integers(0, 2**63 - 1, size=len(blocks))
    return [(b, int(s)) for b, s in zip(blocks, seeds, strict=True)]


def tuples_from_pieces(
    X: np.ndarray, piece_of_row: np.ndarray, n_pieces: int, k: int, *, oracle: str = "kmeans++",
    seed: int, method: str = "sklearn", max_iter: int = MAX_ITER, tol: float = TOL,
) -> np.ndarray:
    """The oracle's (n_pieces, k, d) tuples of pieces already drawn (one block, one stream).

    ``piece_of_row`` holds values in [0, n_pieces); rows of a piece are used in the order given.
    A pure function of its arguments (runs on any thread or worker); ``method`` is "batched" or
    "sklearn" (resolve "auto" from public sizes with :func:`resolve_method`). A piece with
    fewer than k rows gets the placeholder tuple of :func:`compute_tuples` (flagged invalid).

    Privacy
    -------
    NON-PRIVATE (internal tuples), as :func:`compute_tuples`: tuple i reads piece i only.
    """
    if method not in ("batched", "sklearn"):
        raise ValueError(f"The 'method' parameter of tuples_from_pieces must be 'batched' or 'sklearn'. "
                         f"Got {method!r} instead.")
    X = np.asarray(X)
    d = X.shape[1]
    piece_of_row = np.asarray(piece_of_row, dtype=np.int64)
    sizes = np.bincount(piece_of_row, minlength=n_pieces)
    if X.shape[0] == 0:
        return np.zeros((n_pieces, k, d))
    impl = _tuples_batched if method == "batched" else _tuples_sklearn
    gen = np.random.default_rng(seed)
    with one_thread():
        tuples = impl(X, piece_of_row, sizes, k, oracle, gen, max_iter=max_iter, tol=tol, n_jobs=1)
    for i in np.flatnonzero(sizes < k):  # rare: only pieces with < k rows
        tuples[i] = _fill_small_piece(X[piece_of_row == i], k, d)
    return tuples


# ----------------------------------------------------------------------------- the entry point

#: ``tuple_stage(method="auto")`` without a declared size: a fixed, data-independent choice
#: (batched is within 0.8–2.9× of the per-piece loop at n·d = 10⁶; bench/tuples_speed.py).
AUTO_WITHOUT_SIZE = "batched"

#: What :func:`tuple_stage` does with rows outside the Λ-ball.
OUTSIDE = ("drop", "clip", "keep")


def tuple_stage(
    X: np.ndarray,
    k: int,
    *,
    n_tuples: int = 200,
    radius: float,
    oracle: str = "kmeans++",
    rng: RngLike = None,
    method: str = "auto",
    n_declared: int | None = None,
    outside: str = "drop",
) -> TupleStage:
    """The non-private stage of sample-and-aggregate: THE entry point for every caller.

    ``method="auto"`` picks the implementation from the *declared* size (``n_declared``·d; with
    no declared size, the data-independent ``AUTO_WITHOUT_SIZE``), never from the true n: the two
    implementations draw different tuples, so the switch would shape the release.

    ``outside`` says what happens to rows with ||x|| > Λ:

    * "drop" (FriendlyCore): dropped before the pieces are drawn (NoisyLloydStep drops them
      too): one far row would otherwise take a center of its piece's tuple and spoil that tuple's
      matches. The returned stage indexes all rows of X; ``piece_of_row`` is −1 for a dropped row.
    * "clip" (Easy Instances): scaled back onto the sphere of radius Λ (a per-row map).
    * "keep": the rows are used as given (the caller bounded them).

    Each rule is per row, so one row still changes at most one piece. ρ-independent: cache it.

    Privacy
    -------
    NON-PRIVATE (internal tuples); see :func:`compute_tuples`.

    References
    ----------
    Tsfadia et al. 2022, §5.2.5 (FC_Clustering steps 1–4) and §5.2.4 (removal of rows outside Λ).
    """
    func = "tuple_stage"
    X = check_data(X, func, allow_empty=False)
    radius = check_radius(radius, "radius", func)
    if outside not in OUTSIDE:
        raise ValueError(f"The 'outside' parameter of {func} must be one of {OUTSIDE}. Got {outside!r}.")
    if method == "auto":
        method = AUTO_WITHOUT_SIZE if n_declared is None else resolve_method(
            "auto", int(n_declared), X.shape[1], oracle, n_tuples=n_tuples)
    if outside == "clip":
        X = clip_to_ball(X, radius)
    inside = np.einsum("ij,ij->i", X, X) <= radius * radius
    # Never a refusal from the data (issue 25, finding 1): too few rows (inside Λ) leaves pieces
    # with < k rows, flagged invalid; feasibility is checked from DECLARED values by the callers
    # (check_declared_rows).
    if outside != "drop" or inside.all():
        return compute_tuples(X, k, n_tuples=n_tuples, oracle=oracle, rng=rng, method=method,
                              require_rows=False)
    st = compute_tuples(X[inside], k, n_tuples=n_tuples, oracle=oracle, rng=rng, method=method,
                        require_rows=False)
    piece = np.full(X.shape[0], -1, dtype=np.int64)
    piece[inside] = st.piece_of_row
    return TupleStage(tuples=st.tuples, piece_of_row=piece, piece_sizes=st.piece_sizes, k=st.k,
                      n_pieces=st.n_pieces, oracle=st.oracle, method=st.method, seconds=st.seconds,
                      valid=st.valid, seed=st.seed)


def check_declared_rows(n_declared: int, n_tuples: int, k: int, func: str, *,
                        fraction: float = 1.0) -> None:
    """Refuse, from DECLARED values only, a tuple stage that cannot have k rows per piece:
    ``fraction``·n_declared < n_tuples·k. The message names the declared inputs to change and
    quotes no count read from the data."""
    need = int(n_tuples) * int(k)
    if fraction * n_declared < need:
        share = "" if fraction == 1.0 else f" × tuple_fraction {fraction:g}"
        raise ValueError(
            f"{func}: n_tuples={n_tuples} with k={k} needs at least {need} rows, but the declared "
            f"size n_declared={n_declared}{share} is below it. Lower n_tuples or k, or declare the "
            "size the data really has.")


_MATCH_LOCK = threading.Lock()
_MATCH_CACHE: weakref.WeakKeyDictionary[TupleStage, dict[float, MatchGraph]] = weakref.WeakKeyDictionary()


def stage_match_graph(stage: TupleStage, *, gamma: float = GAMMA) -> MatchGraph:
    """The match_γ graph of a TupleStage, computed once per (stage object, γ) and cached.

    The graph is ρ-independent, so the app reruns only the private part when ρ or δ moves.
    The cache is keyed on the stage object's identity and dies with it. Thread-safe: the cache
    is read and written under a lock; two threads asking at once may both compute the graph
    (a pure function of the tuples), and both get the one that was stored first.
    """
    with _MATCH_LOCK:
        cached = _MATCH_CACHE.get(stage, {}).get(gamma)
    if cached is not None:
        return cached
    graph = match_graph(stage.tuples, gamma=gamma)
    with _MATCH_LOCK:
        return _MATCH_CACHE.setdefault(stage, {}).setdefault(gamma, graph)
