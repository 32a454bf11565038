"""The registry entry of the hash-tree coreset (``tree_coreset``): its spec.

The mechanism, its parameters and its privacy argument are in :mod:`dpviz.clustering.tree_coreset`;
the entry sits in its own module as every other family's does (``grid_coreset_spec``,
``gauss_fit_spec``, ``baselines_spec``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpviz.clustering.tree_coreset import TreeCoresetParams, tree_coreset
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP
from dpviz.registry import AlgorithmSpec, Public, register
from dpviz.result import Result


def _private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
             pub: Public, params: TreeCoresetParams, stage: Any = None) -> Result:
    return tree_coreset(X, k, rho=budget.rho, delta=budget.delta, radius=radius, params=params, rng=rng)


SPEC = register(AlgorithmSpec(
    name="tree_coreset", title="Hash-tree coreset + noisy Lloyd", budget_kind="zcdp",
    params=TreeCoresetParams,
    paper="Chang, Ghazi, Kumar, Manurangsi. Locally private k-means in one round. ICML 2021 (the "
          "LSH-tree coreset, as in Google's DP clustering library); Charikar 2002 (SimHash); "
          "Su et al. 2016 (noisy Lloyd steps)",
    private=_private, guarantee=pure_rho_guarantee,
    steps=("hashing", "tree", "coreset", "coreset_centers", "refine", "merge", "tree_coreset_partition"),
    rank=60,
    description="A prefix tree of random-hyperplane hashes grown where noisy counts clear the noise, "
                "noisy cell means as a weighted coreset, k-means on it, then noisy Lloyd on the rows. "
                "Built for high dimension and many clusters.",
))
