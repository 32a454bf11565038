"""The registry entry of the private grid coreset (``grid_coreset``): its parameters and spec.

The mechanism — private PCA, the noisy adaptive grid, noisy group means — and its privacy argument
are in :mod:`dpviz.clustering.grid_coreset` (also FriendlyCore's fallback when no core forms).
Registered on its own so that it can be chosen, explained and accounted without a FriendlyCore
core attempt (issue 24: at real budgets it is what answered under FriendlyCore's name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.grid_coreset import PROJECTION_DIM, STEPS, grid_coreset
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP
from dpviz.registry import AlgorithmSpec, Public, check_hinted, hint, register
from dpviz.result import Result


@dataclass(frozen=True)
class GridCoresetParams:
    """The private-PCA dimension cap p (public)."""

    projection_dim: int = field(default=PROJECTION_DIM, metadata=hint(
        low=1, high=16, step=1, label="PCA dimension cap p",
        help="d > 3: the coreset is built on the top-min(k, d, p) private principal directions"))

    def __post_init__(self) -> None:
        check_hinted(self, "grid_coreset")


def _private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
             pub: Public, params: GridCoresetParams, stage: Any = None) -> Result:
    return grid_coreset(X, k, rho=budget.rho, delta=budget.delta, radius=radius,
                        n_declared=pub.n_declared, projection_dim=params.projection_dim, rng=rng)


SPEC = register(AlgorithmSpec(
    name="grid_coreset",
    title="Private grid coreset (private PCA + noisy grid + noisy means)",
    paper="Su, Cao, Li, Bertino, Jin. Differentially private k-means clustering. CODASPY 2016 "
          "(grid); Dwork, Talwar, Thakurta, Zhang. Analyze Gauss. STOC 2014 (private PCA)",
    budget_kind="zcdp",
    params=GridCoresetParams,
    private=_private,
    guarantee=pure_rho_guarantee,
    steps=STEPS,
    rank=2,
    description="Private PCA (noisy XᵀX) to a few dimensions, a private adaptive grid coreset there "
                "(noisy cell counts), k-means on the coreset, then each group's noisy mean in the "
                "full space. FriendlyCore's fallback, on its own.",
))
