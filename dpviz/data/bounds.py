"""ℓ2 bounds: the (non-private) measured radius of a dataset and clipping to a declared ball."""

from __future__ import annotations

import math

import numpy as np

from dpviz._validation import check_data, check_radius

#: Rows per chunk when computing norms (bounds memory for very large n).
_CHUNK = 1 << 18


def row_norms(X: np.ndarray) -> np.ndarray:
    """ℓ2 norm of every row, computed in chunks."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty(X.shape[0])
    for s in range(0, X.shape[0], _CHUNK):
        blk = X[s : s + _CHUNK]
        out[s : s + _CHUNK] = np.sqrt(np.einsum("ij,ij->i", blk, blk))
    return out


def data_radius(X: np.ndarray) -> float:
    """max_i ||x_i||: the radius of the smallest origin-centred ball holding the data.

    Privacy
    -------
    NON-PRIVATE. This is an exact statistic of the data: one row can move it arbitrarily.
    Never use it as the public bound Λ of a private algorithm without warning the user that the
    guarantee no longer holds (declare Λ from domain knowledge instead).
    """
    X = check_data(X, "data_radius")
    if X.shape[0] == 0:
        return 0.0
    return float(row_norms(X).max())


def clip_to_ball(X: np.ndarray, radius: float) -> np.ndarray:
    """Scale every row with norm > ``radius`` back onto the sphere of that radius (a new array).

    Rows inside the ball are unchanged. Clipping with a public radius is a per-row map, so it is
    privacy-neutral (Tsfadia et al. 2022 clip the Fig. 6 data to norm 1, §6.2).
    """
    radius = check_radius(radius, "radius", "clip_to_ball")
    X = check_data(X, "clip_to_ball")
    norms = row_norms(X)
    scale = radius / np.maximum(norms, radius)  # 1 inside the ball; no division by ~0
    out = X * scale[:, None]
    # Guard rounding: a rescaled row may land a few ulps above the radius.
    over = row_norms(out) > radius
    if np.any(over):
        out[over] *= math.nextafter(1.0, 0.0) ** 4
    return out
