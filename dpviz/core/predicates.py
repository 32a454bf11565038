"""Friendship predicates and friend counts for FriendlyCore.

A predicate f is reflexive and symmetric ("x and y are friends"); the filters only need each
element's friend count w_i = Σ_j f(x_i, x_j) (j = i included). The dist_r predicate
f(x, y) = 1{‖x − y‖ ≤ r} (inclusive ≤) is counted here in row blocks with the Gram trick, so
memory stays bounded: never an n × n matrix for large n.

Appendix B of the paper replaces exact counts with counts against one random m-subset, cutting
the O(n²) work to O(n·m); :func:`sampled_friend_counts` implements it as an opt-in whose privacy
rests on the paper's sketch.

References: Tsfadia et al. 2022, §2 (dist_r, f-friendly, f-complete), §4 (filters on counts),
Appendix B (sampling-based FriendlyCore).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np
from threadpoolctl import ThreadpoolController

from dpviz._validation import check_scalar

#: Float64 elements per block of pairwise squared distances (1M elements = 8 MB; blocks that
#: fit in cache were 2x faster than 32 MB ones on the reference machine).
BLOCK_ELEMENTS = 1 << 20

#: The label every App. B (sampled counts) result carries in warnings, ledger notes and the UI.
#: App. B sampled counts carry NO PROVEN GUARANTEE (issue 10, finding 8): the sampled score's
#: sensitivity is not ½ and a row is in the sample with probability m/n ≫ δ, which the paper's
#: sketch does not account for. Ledgers holding it are refused by every privacy statement.
SKETCH_LABEL = "no proven guarantee (App. B sampled counts: a proof sketch only)"


class SketchPrivacyWarning(UserWarning):
    """A guarantee rests on a proof sketch (Tsfadia et al. 2022, App. B), not a full proof."""


@runtime_checkable
class Predicate(Protocol):
    """A reflexive, symmetric friendship predicate that can count friends in bulk.

    ``cross_counts(X, Y)[i]`` is #{j : f(X[i], Y[j]) = 1}; friend counts within one dataset are
    ``cross_counts(X, X)`` (self included, since f is reflexive).
    """

    name: str

    def cross_counts(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class DistR:
    """The predicate dist_r(x, y) = 1{‖x − y‖ ≤ r} (Tsfadia et al. 2022, §2; inclusive ≤)."""

    r: float
    chunk_size: int | None = None

    def __post_init__(self) -> None:
        check_scalar(self.r, "r", "DistR", low=0.0, high=math.inf, high_open=True)

    @property
    def name(self) -> str:
        return f"dist_r (r={self.r:.4g})"

    def cross_counts(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        if X is Y:  # friend counts within one set: the symmetric path does half the work
            return dist_r_counts(X, self.r, chunk_size=self.chunk_size)
        return dist_r_cross_counts(X, Y, self.r, chunk_size=self.chunk_size)


def as_predicate(predicate: float | Predicate, func: str) -> Predicate:
    """A radius becomes :class:`DistR`; a predicate object is returned as is."""
    if isinstance(predicate, Predicate):
        return predicate
    r = check_scalar(predicate, "predicate", func, low=0.0, high=math.inf, high_open=True)
    return DistR(r)


#: Pair counts from which BLAS is pinned to one thread while counting (see _single_thread_blas).
SINGLE_THREAD_PAIRS = 1 << 20


@cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


@contextlib.contextmanager
def _single_thread_blas(pairs: int) -> Iterator[None]:
    """Pin BLAS to one thread for large counts.

    The block products are thin (k = d + 1), so threads buy little; on a shared 2-core machine
    OpenBLAS threads spin against other processes and one count at n = 20 000 took 30 s wall
    instead of 3.6 s. The limit is process-wide while it lasts.
    """
    if pairs < SINGLE_THREAD_PAIRS:
        yield
        return
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield


def _block_rows(n_rows: int, n_cols: int, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return max(1, int(chunk_size))
    return max(1, min(max(n_rows, 1), BLOCK_ELEMENTS // max(n_cols, 1)))


def _augmented(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Gram trick folded into one matrix product.

    Both sets are translated by the mean of Y (distances are unchanged; this avoids the Gram
    trick's cancellation for data far from the origin). With A = [−2x, 1] and B = [y; ‖y‖²],
    (A @ B)_ij = ‖y_j‖² − 2x_i·y_j = ‖x_i − y_j‖² − ‖x_i‖², so d²_ij ≤ r² is a per-row
    threshold test against r² − ‖x_i‖²: one pass over each block instead of four.
    Returns A (n_x, d+1), B (d+1, n_y) C-contiguous, and ‖x_i‖².
    """
    shift = Y.mean(axis=0)
    Xc, Yc = X - shift, Y - shift
    A = np.empty((X.shape[0], X.shape[1] + 1))
    A[:, :-1] = -2.0 * Xc
    A[:, -1] = 1.0
    B = np.empty((Y.shape[1] + 1, Y.shape[0]))
    B[:-1] = Yc.T
    B[-1] = np.einsum("ij,ij->i", Yc, Yc)
    return A, B, np.einsum("ij,ij->i", Xc, Xc)


def _tolerance(sq_x: np.ndarray, sq_y: np.ndarray, d: int) -> np.ndarray:
    # Rounding error of the Gram trick is at most ~ (d + 2)·ε·(‖x‖² + ‖y‖²); entries that
    # close to r² are recomputed exactly. (Clamping d² at 0 is implicit: r² ≥ 0, so a negative
    # rounding result already counts as a friend, exactly as max(d², 0) would.)
    return 8.0 * (d + 2) * np.finfo(np.float64).eps * (sq_x + float(sq_y.max(initial=0.0)))


def _row_counts(mask: np.ndarray) -> np.ndarray:
    # For long rows, count_nonzero over each whole contiguous row is ~10x faster than
    # count_nonzero(axis=1); for short rows the per-row Python call would dominate.
    if mask.shape[1] < 4096:
        return np.count_nonzero(mask, axis=1).astype(np.int64)
    return np.fromiter((np.count_nonzero(row) for row in mask), dtype=np.int64, count=len(mask))


def _exact_le(X: np.ndarray, Y: np.ndarray, i: np.ndarray, j: np.ndarray, r2: float) -> np.ndarray:
    diff = X[i] - Y[j]
    return np.einsum("ij,ij->i", diff, diff) <= r2


def dist_r_cross_counts(
    X: np.ndarray, Y: np.ndarray, r: float, *, chunk_size: int | None = None
) -> np.ndarray:
    """For each row x_i of X, #{j : ‖x_i − y_j‖ ≤ r} over the rows of Y.

    Squared distances come from the Gram trick ‖x‖² + ‖y‖² − 2x·y, one block of rows at a time
    (``chunk_size`` rows; by default as many as fit in 8 MB), so memory is O(chunk·|Y|).
    Entries within the rounding error of r² are recomputed exactly as Σ (x − y)², so the result
    equals the brute-force count of Σ_k (x_ik − y_jk)² ≤ r².
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    nx, ny = X.shape[0], Y.shape[0]
    counts = np.zeros(nx, dtype=np.int64)
    if nx == 0 or ny == 0:
        return counts
    r2 = float(r) ** 2
    A, B, sq_x = _augmented(X, Y)
    tol = _tolerance(sq_x, B[-1], X.shape[1])
    lo, hi = (r2 - sq_x) - tol, (r2 - sq_x) + tol
    rows = min(_block_rows(nx, ny, chunk_size), nx)
    buf = np.empty((rows, ny))
    sure_buf = np.empty((rows, ny), dtype=bool)
    maybe_buf = np.empty_like(sure_buf)
    with _single_thread_blas(nx * ny):
        for s in range(0, nx, rows):
            e = min(s + rows, nx)
            block = np.matmul(A[s:e], B, out=buf[: e - s])
            sure = np.less_equal(block, lo[s:e, None], out=sure_buf[: e - s])
            maybe = np.less_equal(block, hi[s:e, None], out=maybe_buf[: e - s])
            counts[s:e] = _row_counts(sure)
            if np.count_nonzero(maybe) != counts[s:e].sum():  # rare: pairs near the boundary
                ii, jj = np.nonzero(maybe & ~sure)
                ok = _exact_le(X, Y, s + ii, jj, r2)
                np.add.at(counts, s + ii[ok], 1)
    return counts


def dist_r_counts(X: np.ndarray, r: float, *, chunk_size: int | None = None) -> np.ndarray:
    """Friend counts w_i = #{j : ‖x_i − x_j‖ ≤ r} (self included) in bounded memory.

    Parameters
    ----------
    X : (n, d) array
    r : float
        The radius of dist_r (inclusive: a pair at distance exactly r are friends).
    chunk_size : int, optional
        Rows per block of pairwise distances; default fits a block in 8 MB.

    Returns
    -------
    (n,) int64 array. Non-private: feed it to a filter, never publish it.

    References
    ----------
    Tsfadia et al. 2022, §2 (dist_r) and §8.1 of our note (Gram trick, row chunks).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    if n == 0:
        return counts
    r2 = float(r) ** 2
    A, B, sq = _augmented(X, X)
    tol = _tolerance(sq, sq, X.shape[1])
    lo, hi = (r2 - sq) - tol, (r2 - sq) + tol
    rows = min(_block_rows(n, n, chunk_size), n)
    buf = np.empty(rows * n)
    sure_buf = np.empty(rows * n, dtype=bool)
    maybe_buf = np.empty_like(sure_buf)
    # Symmetry halves the work: block rows [s, e) against columns [s, n) only. The square part
    # [s, e) × [s, e) is symmetric, so its row sums count both directions; the part right of it
    # adds to its rows (row sums) and to its columns (column sums).
    with _single_thread_blas(n * n // 2):
        for s in range(0, n, rows):
            e = min(s + rows, n)
            shape = (e - s, n - s)
            size = shape[0] * shape[1]
            block = np.matmul(A[s:e], B[:, s:], out=buf[:size].reshape(shape))
            sure = np.less_equal(block, lo[s:e, None], out=sure_buf[:size].reshape(shape))
            maybe = np.less_equal(block, hi[s:e, None], out=maybe_buf[:size].reshape(shape))
            counts[s:e] += _row_counts(sure)
            counts[e:] += sure[:, e - s:].view(np.uint8).sum(axis=0, dtype=np.int64)
            if np.count_nonzero(maybe) != np.count_nonzero(sure):  # rare: pairs near the boundary
                ii, jj = np.nonzero(maybe & ~sure)
                ok = _exact_le(X, X, s + ii, s + jj, r2)
                i, j = s + ii[ok], s + jj[ok]
                np.add.at(counts, i, 1)
                np.add.at(counts, j[j >= e], 1)
    return counts


def friend_counts(X: np.ndarray, predicate: float | Predicate) -> np.ndarray:
    """Exact friend counts w_i = Σ_j f(x_i, x_j), self included (O(n²) predicate calls)."""
    return np.asarray(as_predicate(predicate, "friend_counts").cross_counts(X, X), dtype=np.int64)


@dataclass(frozen=True)
class SampledCounts:
    """Sampled friend counts of Tsfadia et al. 2022, App. B.

    Attributes
    ----------
    w_tilde : (n,) float array
        w̃_i = (n/m)·Σ_{y ∈ S} f(x_i, y) over one shared m-subset S drawn without replacement.
    filter_counts : (n,) float array
        w̃_i − ξn: what to hand to ``zcdp_filter`` / ``basic_filter`` as counts, so that the
        filter's z_i = counts_i − n/2 equals the paper's z̃_i = w̃_i − (1/2 + ξ)n.
    m : int
        The sample size ⌈ln(n/δ)/(2ξ²)⌉ (capped at n, when S is all of D).
    sample : (m,) int array
        The indices of S (internal).
    xi : float
        The slack ξ.
    """

    w_tilde: np.ndarray
    filter_counts: np.ndarray
    m: int
    sample: np.ndarray
    xi: float


def sample_size(n: int, delta: float, xi: float) -> int:
    """m = ⌈ln(n/δ)/(2ξ²)⌉ (App. B), capped at n; 0 for n = 0."""
    if n <= 0:
        return 0
    return min(n, math.ceil(math.log(n / delta) / (2.0 * xi * xi)))


def sampled_friend_counts(
    X: np.ndarray,
    predicate: float | Predicate,
    *,
    xi: float,
    delta: float,
    rng: np.random.Generator,
    warn: bool = True,
) -> SampledCounts:
    """Friend counts against one random m-subset (Tsfadia et al. 2022, App. B), O(n·m) work.

    With m = ⌈ln(n/δ)/(2ξ²)⌉, w.p. ≥ 1 − δ every element with w_i ≤ n/2 has
    w̃_i ≤ (1/2 + ξ)n (hypergeometric tail, Scala 2009 Eq. 10, and a union bound), so the
    filter's "bad" elements stay bad under z̃_i = w̃_i − (1/2 + ξ)n.

    Privacy
    -------
    Per the paper's sketch only ("equivalent up to an additional δ"): it does not re-derive the
    noise scale for the event that the added or removed row falls into S, and m depends on n.
    A :class:`SketchPrivacyWarning` says so unless ``warn=False``; callers must also note it in
    their ledger (``friendly_core`` does).

    References
    ----------
    Tsfadia et al. 2022, Appendix B; our note §3.9.
    """
    xi = check_scalar(xi, "xi", "sampled_friend_counts", low=0.0, high=0.5, low_open=True,
                      high_open=True)
    delta = check_scalar(delta, "delta", "sampled_friend_counts", low=0.0, high=1.0,
                         low_open=True, high_open=True)
    pred = as_predicate(predicate, "sampled_friend_counts")
    if warn:
        warnings.warn(
            f"Sampled friend counts: {SKETCH_LABEL}. The paper does not re-derive the noise "
            "for a row that falls into the sample; use exact counts (sampled=False) for the "
            "proved guarantee.",
            SketchPrivacyWarning,
            stacklevel=2,
        )
    n = len(X)
    m = sample_size(n, delta, xi)
    sample = np.sort(rng.choice(n, size=m, replace=False)) if m else np.zeros(0, dtype=np.int64)
    raw = np.asarray(pred.cross_counts(X, X[sample]), dtype=np.float64) if n else np.zeros(0)
    w_tilde = raw * (n / m) if m else raw
    return SampledCounts(w_tilde, w_tilde - xi * n, m, sample, xi)


def sampled_dist_r_counts(
    X: np.ndarray, r: float, *, xi: float, delta: float, rng: np.random.Generator,
    warn: bool = True,
) -> SampledCounts:
    """:func:`sampled_friend_counts` for dist_r (App. B); see there for the privacy caveat."""
    return sampled_friend_counts(X, DistR(r), xi=xi, delta=delta, rng=rng, warn=warn)
