"""Registry entries of the baselines: DP-Lloyd, diffprivlib's KMeans and non-private k-means++.

DP-Lloyd and diffprivlib act on rows directly (no tuple stage), so their row-level guarantee is
their own: ρ-zCDP converted at δ′ (CKS20), and pure ε.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz._validation import is_simulation
from dpviz.clustering.baselines import diffprivlib_kmeans, dp_lloyd, nonprivate_kmeans
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.registry import AlgorithmSpec, Calibration, Public, check_hinted, hint, register
from dpviz.result import Result, Trace


@dataclass(frozen=True)
class LloydParams:
    """The number of noisy Lloyd iterations T."""

    iters: int = field(default=5, metadata=hint(low=1, high=50, step=1, label="iterations T",
                                                help="noisy Lloyd iterations; each gets ρ/T"))

    def __post_init__(self) -> None:
        check_hinted(self, "DP-Lloyd")


def _lloyd_private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
                   pub: Public, params: LloydParams, stage: Any = None) -> Result:
    return dp_lloyd(X, k, rho=budget.rho, delta=budget.delta, radius=radius, iters=params.iters, rng=rng)


def _diffprivlib_guarantee(budget: ApproxDP, pub: Public, params: Any, delta_prime: float) -> ApproxDP:
    return ApproxDP(budget.eps, 0.0)


def _diffprivlib_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float,
                         rng: np.random.Generator, pub: Public, params: LloydParams,
                         stage: Any = None) -> Result:
    return diffprivlib_kmeans(X, k, eps=budget.eps, radius=radius, iters=params.iters, rng=rng)


@dataclass(frozen=True)
class ReferenceParams:
    """Restarts of scikit-learn's k-means++ (the best is kept)."""

    n_init: int = field(default=3, metadata=hint(low=1, high=20, step=1, label="restarts"))

    def __post_init__(self) -> None:
        check_hinted(self, "k-means++ (non-private)")


def _reference_private(X: np.ndarray, k: int, budget: None, *, radius: float, rng: np.random.Generator,
                       pub: Public, params: ReferenceParams, stage: Any = None) -> Result:
    return nonprivate_kmeans(X, k, rng=rng, n_init=params.n_init)


DP_LLOYD = register(AlgorithmSpec(
    name="dp_lloyd", title="DP-Lloyd", budget_kind="zcdp", params=LloydParams,
    paper="Blum, Dwork, McSherry, Nissim. Practical privacy: the SuLQ framework. PODS 2005 "
          "(Gaussian noise on sums and counts)",
    private=_lloyd_private, guarantee=pure_rho_guarantee, steps=("init", "iteration", "lloyd_partition"),
    description="Lloyd iterations from public random centers; Gaussian noise on each cluster's sum, count.",
))

DIFFPRIVLIB = register(AlgorithmSpec(
    name="diffprivlib", title="diffprivlib KMeans", budget_kind="pure", params=LloydParams,
    paper="Su, Cao, Li, Bertino, Jin. Differentially private k-means clustering. CODASPY 2016; "
          "Holohan et al. 2019 (diffprivlib)",
    private=_diffprivlib_private, guarantee=_diffprivlib_guarantee, steps=("diffprivlib",),
    releasable=False,  # diffprivlib draws its own noise (Python's random): never a release
    description="IBM diffprivlib's DPLloyd with its budget split corrected (a peer library).",
))

REFERENCE = register(AlgorithmSpec(
    name="kmeans++", title="k-means++ (non-private)", budget_kind="none", params=ReferenceParams,
    paper="Arthur, Vassilvitskii. k-means++. SODA 2007",
    private=_reference_private, steps=("kmeans",),
    description="The non-private reference: no privacy guarantee.",
))


@dataclass(frozen=True)
class OriginParams:
    """No parameters: the answer does not look at the data."""

    def __post_init__(self) -> None:
        check_hinted(self, "origin")


def _origin_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                    pub: Public, params: OriginParams, stage: Any = None) -> Result:
    trace = Trace()
    trace.add("origin", released=True, note="k centers at the origin, computed without the data")
    return Result(np.zeros((k, pub.d)), None, Ledger("origin", ZCDP(0.0, 0.0), note="reads no row"),
                  trace.freeze(), dict(algorithm="origin", k=k), simulation=is_simulation(rng))


ORIGIN = register(AlgorithmSpec(
    name="origin", title="Every center at the origin (reads no data)", budget_kind="pure",
    params=OriginParams, paper="The trivial answer: (0, 0)-DP because it never reads a row",
    private=_origin_private, guarantee=lambda b, pub, p, dp: ApproxDP(0.0, 0.0),
    calibrate=lambda eps, delta, pub, p: Calibration(ApproxDP(0.0, 0.0), 0.0, ApproxDP(0.0, 0.0)),
    steps=("origin",), rank=900,
    description="The floor every private method must beat: the center of the declared ball, k times.",
))
