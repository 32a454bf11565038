"""Registry entries: Balcan et al.'s private clustering ("balcan") and the SuLQ k-means baseline ("sulq").

Both act on rows directly (no tuple stage), so the row-level guarantee is the algorithm's own:
pure ε for "balcan", ρ-zCDP converted at δ′ (CKS20) for "sulq".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.balcan.params import BalcanParams
from dpviz.clustering.balcan.pipeline import STEPS, balcan_kmeans, sulq_rho
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.registry import AlgorithmSpec, Calibration, Public, check_hinted, hint, register
from dpviz.result import Result


def balcan_guarantee(budget: ApproxDP, pub: Public, params: BalcanParams, delta_prime: float) -> ApproxDP:
    """Pure ε-DP for add/remove of one row: every mechanism acts on rows (no tuple stage)."""
    return ApproxDP(budget.eps, 0.0)


def balcan_calibrate(epsilon: float, delta: float, pub: Public, params: BalcanParams) -> Calibration:
    """The whole row-level ε is the algorithm's pure budget (no bisection needed); δ is not used."""
    return Calibration(ApproxDP(epsilon, 0.0), 0.0, ApproxDP(epsilon, 0.0))


def balcan_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                   pub: Public, params: BalcanParams, stage: Any = None) -> Result:
    """The whole pipeline at the pure budget ε (its constants come from ``pub``, never len(X))."""
    return balcan_kmeans(X, k, epsilon=budget.eps, radius=radius, n_declared=pub.n_declared,
                         params=params, rng=rng)


@dataclass(frozen=True)
class SuLQParams:
    """SuLQ k-means as run in Balcan et al. §7: 20 iterations from random box centers."""

    iters: int = field(default=20, metadata=hint(low=1, high=100, step=1, label="iterations",
                                                 help="noisy Lloyd iterations (§7: 20)"))

    def __post_init__(self) -> None:
        check_hinted(self, "SuLQ k-means")


def _sulq_private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
                  pub: Public, params: SuLQParams, stage: Any = None) -> Result:
    return sulq_rho(X, k, rho=budget.rho, radius=radius, iters=params.iters, rng=rng)


SPEC = register(AlgorithmSpec(
    name="balcan",
    title="Candidates + private local search",
    paper="Balcan, Dick, Liang, Mou, Zhang. Differentially private clustering in high-dimensional "
          "Euclidean spaces. ICML 2017",
    budget_kind="pure",
    params=BalcanParams,
    private=balcan_private,
    guarantee=balcan_guarantee,
    calibrate=balcan_calibrate,
    steps=STEPS,
    rank=10,
    description="Project to a few dimensions, build private candidate centers from randomly shifted "
                "grids, choose k of them by private local search, then recover noisy means in the "
                "original space. Pure ε-DP.",
))

SULQ = register(AlgorithmSpec(
    name="sulq",
    title="SuLQ k-means",
    paper="Blum, Dwork, McSherry, Nissim. Practical privacy: the SuLQ framework. PODS 2005 "
          "(as run by Balcan et al. 2017, §7)",
    budget_kind="zcdp",
    params=SuLQParams,
    private=_sulq_private,
    guarantee=pure_rho_guarantee,
    steps=("init", "iteration", "lloyd_partition"),
    rank=60,
    description="20 Lloyd iterations with Gaussian noise on sums and counts, from random centers in the "
                "public box [−Λ, Λ]^d.",
))
