"""Step 1 of Algorithm 4: the Johnson–Lindenstrauss projection to p dimensions, clipped to a public radius.

Balcan, Dick, Liang, Mou, Zhang, ICML 2017, Alg. 4 (engineer's note §3.4, §8.4 A3): the box prints
(1/√d)·G; we use (1/√p)·G (as the authors' code) and clip every projected row to the public radius
Λ_p = Λ·√(χ²_{p,q}/p) (note §8.2), so the sensitivity of the later steps is set by a public number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from dpviz.data.bounds import clip_to_ball, row_norms

#: Quantile q of χ²_p used for the projected radius (note §8.2: 0.999).
PROJECTED_QUANTILE = 0.999

#: Rows per chunk of the projection (bounds the float64 temporaries).
_CHUNK = 1 << 16


def projected_radius(radius: float, p: int, quantile: float = PROJECTED_QUANTILE) -> float:
    """Λ_p = Λ·√(χ²_{p,q}/p): for a fixed ||x|| ≤ Λ, ||Gx/√p|| ≤ Λ_p with probability q.

    Any public radius is sound (rows above it are clipped); this one clips about 1 − q of them.
    """
    return float(radius * math.sqrt(chi2.ppf(quantile, p) / p))


@dataclass(frozen=True)
class Projection:
    """The JL map and the projected, clipped rows.

    Attributes
    ----------
    G : (p, d) array
        The public random map (N(0, 1)/√p entries; independent of the data).
    Y : (n, p) float64 array
        The projected rows, each clipped to norm ≤ ``radius_p`` (NOT private: a function of X).
    radius_p : float
        The public projected radius Λ_p.
    n_clipped : int
        How many projected rows were clipped (NOT private; a diagnostic).
    """

    G: np.ndarray
    Y: np.ndarray
    radius_p: float
    n_clipped: int


def jl_projection(X: np.ndarray, p: int, radius: float, rng: np.random.Generator) -> Projection:
    """Project X (rows already in the ball of radius Λ) with G/√p and clip to Λ_p.

    The map G is drawn before any data is read. Chunked over rows, so n·d up to 1e8 stays small.
    """
    n, d = X.shape
    G = rng.standard_normal((p, d)) / math.sqrt(p)
    Y = np.empty((n, p))
    for s in range(0, n, _CHUNK):
        Y[s : s + _CHUNK] = X[s : s + _CHUNK] @ G.T
    radius_p = projected_radius(radius, p)
    n_clipped = int(np.sum(row_norms(Y) > radius_p)) if n else 0
    if n:
        Y = clip_to_ball(Y, radius_p)
    return Projection(G=G, Y=Y, radius_p=radius_p, n_clipped=n_clipped)
