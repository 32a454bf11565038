"""Each row's piece as a keyed random function of a private key and the row's content.

In memory, :func:`dpviz.clustering.tuples.assign_pieces` draws every row's piece independently.
A file read in chunks (on several workers) cannot share one stream of draws, so here the piece of
a row is ``h_key(row) mod t`` for a keyed 64-bit hash of the row's float64 bytes: a row lands in
the same piece however the file is cut, in whichever process reads it, and adding or removing one
row changes exactly one piece (that row's), which is all the sample-and-aggregate proof needs.
Equal rows share a piece.

The hash is a splitmix64-style multiply–xorshift mix applied column by column, vectorized over the
rows (a loop over the d columns, never over rows). It is not a cryptographic PRF; privacy does
not rest on it (any partition where a row's piece depends on that row only keeps one row → one
tuple); the random key only makes the pieces behave like uniform random draws for utility. The
key is drawn from the run's Generator and never released.
"""

from __future__ import annotations

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = 0x9E3779B97F4A7C15


def draw_key(rng: np.random.Generator) -> tuple[int, int]:
    """A fresh 128-bit key (two uint64 words) from the run's Generator."""
    k = rng.integers(0, 2**64, size=2, dtype=np.uint64)
    return int(k[0]), int(k[1])


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, in place on a uint64 array (wrap-around arithmetic)."""
    z ^= z >> np.uint64(30)
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


def row_hash(X: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """A keyed 64-bit hash (n,) of every row of X (its float64 values; −0.0 counts as 0.0)."""
    bits = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0).view(np.uint64)
    n, d = bits.shape
    k0, k1 = (np.uint64(k) for k in key)
    h = np.full(n, k0, dtype=np.uint64)
    for j in range(d):  # loop over columns, vectorized over rows
        salt = np.uint64((int(k1) + _GOLDEN * (j + 1)) % 2**64)
        h ^= bits[:, j]
        h += salt
        _mix(h)
    h ^= k1
    return _mix(h)


def keyed_pieces(X: np.ndarray, key: tuple[int, int], n_pieces: int) -> np.ndarray:
    """The piece (n,) int64 in [0, n_pieces) of every row: its keyed hash modulo t."""
    return (row_hash(X, key) % np.uint64(n_pieces)).astype(np.int64)
