"""``gauss_fit``'s registry entry: the k-means of a private Gaussian fit
(:func:`dpviz.clustering.gauss_fit.gauss_fit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.gauss_fit import gauss_fit
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP
from dpviz.registry import AlgorithmSpec, Public, check_hinted, hint, register
from dpviz.result import Result


@dataclass(frozen=True)
class GaussFitParams:
    """How many moments to release (1: the mean only; 2: mean and second moment)."""

    moments: int = field(default=2, metadata=hint(low=1, high=2, step=1, label="moments",
                                                  help="1: all k centers at the noisy mean; 2: "
                                                       "k-means of the private Gaussian fit"))

    def __post_init__(self) -> None:
        check_hinted(self, "gauss_fit")


def _private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
             pub: Public, params: GaussFitParams, stage: Any = None) -> Result:
    return gauss_fit(X, k, rho=budget.rho, delta=budget.delta, radius=radius, n_declared=pub.n_declared,
                     moments=params.moments, rng=rng)


SPEC = register(AlgorithmSpec(
    name="gauss_fit", title="k-means of a private Gaussian fit", budget_kind="zcdp", params=GaussFitParams,
    paper="Dwork, Talwar, Thakurta, Zhang. Analyze Gauss: optimal bounds for privacy-preserving "
          "principal component analysis. STOC 2014 (the noisy second moment)",
    private=_private, guarantee=pure_rho_guarantee, steps=("mean", "gaussian_fit", "gauss_fit_centers"),
    rank=95,
    description="Releases the noisy mean and second moment only; the centers quantize the fitted "
                "Gaussian. The low-information answer for small, weakly clustered data.",
))
