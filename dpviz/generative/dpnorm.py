"""DPNorm: a private clipping bound as the noisy mode of a histogram of norms (Acs et al., Alg. 3).

The interval (0, C_max] is cut into w bins (C_{j−1}, C_j], C_j = j·C_max/w; bin j counts the norms
that fall in it, each count gets N(0, (√2σ_C)²), and the output is the upper edge C_{j*} of the bin
with the largest noisy count (§4.3). Under add/remove of one row one count changes by 1 (norms
above C_max fall in no bin), so the L2 sensitivity is 1 and the paper's noise is a Gaussian with
multiplier √2σ_C: 1/(4σ_C²)-zCDP per call (before any subsampling amplification).

The output is a noisy *mode*, not the average norm the paper says C_s "should be set to" (§4.3;
note §6.4(10)). With σ_C = 4 the noise std is ≈ 5.7 per bin, so the mode is found reliably only
when the true mode bin holds a few tens of norms.

References: Acs, Melis, Castelluccia, De Cristofaro, TKDE, §4.3, Algorithm 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz._validation import check_scalar
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger


def add_gaussian_noise(value: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """value + N(0, σ²I); through the release sampler's OpenDP measurement when ``rng`` is a
    :class:`dpviz.privacy.release.SecureRNG` (floating-point safe), as ``dpviz.privacy.mechanisms``
    does, else from the Generator."""
    release = getattr(rng, "gaussian_release", None)
    if release is not None:
        return np.asarray(release(value, sigma), dtype=np.float64)
    return value + rng.normal(0.0, sigma, size=np.shape(value))


@dataclass(frozen=True)
class DPNormResult:
    """The chosen bound and the histograms behind it.

    ``C_s`` and ``noisy_counts`` are DP outputs; ``counts`` (the true histogram) is internal.
    ``edges`` are C_0..C_w; ``j_star`` ∈ [1, w] is the winning bin.
    """

    C_s: float
    j_star: int
    edges: np.ndarray
    counts: np.ndarray
    noisy_counts: np.ndarray
    noise_scale: float


def norm_histogram(norms: np.ndarray, *, C_max: float, w: int) -> tuple[np.ndarray, np.ndarray]:
    """(edges C_0..C_w, counts t_1..t_w) with t_j = |{x : C_{j−1} < ‖x‖ ≤ C_j}| (Alg. 3, line 2)."""
    edges = np.arange(w + 1, dtype=np.float64) * (C_max / w)
    j = np.searchsorted(edges, np.asarray(norms, dtype=np.float64), side="left")  # C_{j−1} < x ≤ C_j
    inside = (j >= 1) & (j <= w)
    counts = np.bincount(j[inside] - 1, minlength=w).astype(np.float64)
    return edges, counts


def dp_norm(
    norms: np.ndarray,
    *,
    sigma_C: float,
    rng: np.random.Generator,
    C_max: float = 10.0,
    w: int = 100,
    ledger: Ledger | None = None,
    name: str = "DPNorm",
) -> DPNormResult:
    """C_s = C_{j*}, j* = argmax_{j≥1} t_j + N(0, √2σ_C) (Algorithm 3).

    Parameters
    ----------
    norms : (n,) array
        ‖g(x)‖ of the rows in the batch (feature norms in Alg. 2, per-example gradient norms in
        Alg. 4).
    sigma_C : float
        The paper's σ_C; the noise std is √2σ_C.
    rng : Generator
    C_max, w : float, int
        Largest bound and number of bins (paper: 10 and 100).
    ledger : Ledger, optional
        Where to record the release (1/(4σ_C²)-zCDP, sensitivity 1). Inside DP-SGD the call is
        accounted by the DPGM accountant with subsampling, so no ledger is passed there.

    Privacy
    -------
    1/(4σ_C²)-zCDP under add/remove of one row of ``norms``.

    References
    ----------
    Acs et al., TKDE, §4.3, Alg. 3.
    """
    func = "dp_norm"
    sigma_C = check_scalar(sigma_C, "sigma_C", func, low=0.0, low_open=True, high_open=True)
    C_max = check_scalar(C_max, "C_max", func, low=0.0, low_open=True, high_open=True)
    w = check_scalar(w, "w", func, low=1, high=1_000_000, integer=True)
    edges, counts = norm_histogram(norms, C_max=C_max, w=w)
    scale = math.sqrt(2.0) * sigma_C
    if ledger is not None:
        ledger.record(name, "gaussian", ZCDP(1.0 / (4.0 * sigma_C**2)),
                      sensitivity=1.0, noise_scale=scale, note="Alg. 3: noisy mode of the norm histogram")
    noisy = add_gaussian_noise(counts, scale, rng)
    j_star = int(np.argmax(noisy)) + 1
    return DPNormResult(float(edges[j_star]), j_star, edges, counts, noisy, scale)
