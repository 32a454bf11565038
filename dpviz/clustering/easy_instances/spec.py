"""Easy Instances' registry entries: ``easy_instances`` (PrivatekMeans) and ``easy_instances_gmm``
(PrivateGMM).

Row-level accounting: one row changes exactly one of the t tuples (t is public), which is the
replace-one relation the CKM+21 theorems use, so the tuple stage's (ε, δ) holds per row with
:data:`~.plan.TUPLE_STEPS_PER_ROW` = 1 (FriendlyCore, whose tuple stage is add/remove, needs group
privacy of size 2 for the same event). The guarantee composes the tuple stage with the row-level
steps: basic composition for k-means (all rows feed both), the larger of the two for the GMM
(a row is in S¹ or in S²). ``calibrate`` inverts it by bisection on a common scale of (ε, δ).

References: Cohen et al. 2021, Thm 4.4, 5.1, 6.1; note §5.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.tuples import ORACLES, check_declared_rows
from dpviz.privacy.budget import ApproxDP
from dpviz.registry import AlgorithmSpec, Calibration, Public, check_hinted, hint, register
from dpviz.result import Result

from .applications import (
    AGGREGATORS,
    DEFAULT_GAMMA,
    calibrate_scale,
    easy_tuple_stage,
    gmm_guarantee,
    kmeans_guarantee,
    kmeans_private_stage,
    private_gmm,
)

#: Trace steps, in run order (NoisyCenters or Averages steps in the middle).
STEPS = ("tuples", "plan", "test", "status", "chosen", "log_lambda", "noisy_centers", "clusters",
         "segments", "averages", "averages_nonprivate", "lloyd_partition", "lloyd", "lloyd_nonprivate")
GMM_STEPS = (*STEPS[:11], "gmm_partition", "gmm")

#: The γ slider's step: 980 positions on [0, 0.49]; the smallest settable γ > 0 [OURS].
GAMMA_STEP = 0.0005

#: Auto t: pieces of ≥ 10k rows, at most this many tuples [OURS].
AUTO_T_MAX = 20_000


def auto_n_tuples(n_declared: int, k: int) -> int:
    """t from the declared size: n/(10k) pieces, within [2, AUTO_T_MAX] [OURS]."""
    return int(min(AUTO_T_MAX, max(2, n_declared // (10 * k))))


def _common_fields() -> dict[str, Any]:
    return dict(
        aggregator=field(default="noisy_centers", metadata=hint(
            choices=AGGREGATORS, label="k-tuple aggregator",
            help="PrivatekNoisyCenters (practical) or PrivatekAverages (theory: needs millions of tuples)")),
        n_tuples=field(default=0, metadata=hint(
            low=0, high=10_000_000, step=1, label="tuples t",
            help="number of random pieces; 0 picks n_declared / (10k), at most 20 000")),
        gamma=field(default=0.0, metadata=hint(
            low=0.0, high=0.49, step=GAMMA_STEP, scale="linear", slider=True, label="γ (ball scale)",
            help="balls B(y_i, γλ_i) of the test; 0 = 10⁻³ (NoisyCenters) or 0.1 (Averages, < 1/6)")),
        beta=field(default=0.05, metadata=hint(low=1e-6, high=0.5, label="β", help="confidence")),
        r_min=field(default=0.0, metadata=hint(
            low=0.0, high=1e6, scale="log", public=True,
            help="interior-point grid resolution (Averages); 0 means 10⁻³·Λ")),
        oracle=field(default="kmeans++", metadata=hint(
            choices=tuple(ORACLES), help="non-private clustering run on each piece")),
    )


def _check(params: Any, func: str) -> None:
    check_hinted(params, func)
    if params.aggregator == "averages" and params.gamma >= 1.0 / 6.0:
        raise ValueError(f"The 'gamma' parameter of {func} must be < 1/6 with aggregator='averages' "
                         f"(Prop 3.1a needs 6-far balls). Got {params.gamma!r} instead.")


@dataclass(frozen=True)
class EasyKMeansParams:
    """PrivatekMeans' knobs (Cohen et al. 2021, §5; note §4.6)."""

    aggregator: str = _common_fields()["aggregator"]
    n_tuples: int = _common_fields()["n_tuples"]
    gamma: float = _common_fields()["gamma"]
    beta: float = _common_fields()["beta"]
    r_min: float = _common_fields()["r_min"]
    oracle: str = _common_fields()["oracle"]
    lloyd_fraction: float = field(default=0.25, metadata=hint(
        low=0.01, high=0.99, label="Lloyd share", help="share of (ε, δ) for the final private Lloyd step"))

    def __post_init__(self) -> None:
        _check(self, "Easy Instances k-means")


@dataclass(frozen=True)
class EasyGMMParams:
    """PrivateGMM's knobs (Cohen et al. 2021, §6; note §4.7)."""

    aggregator: str = _common_fields()["aggregator"]
    n_tuples: int = _common_fields()["n_tuples"]
    gamma: float = _common_fields()["gamma"]
    beta: float = _common_fields()["beta"]
    r_min: float = _common_fields()["r_min"]
    oracle: str = _common_fields()["oracle"]
    tuple_fraction: float = field(default=0.5, metadata=hint(
        low=0.05, high=0.95, label="S¹ share", help="probability a row goes to the tuple part S¹"))
    clip_factor: float = field(default=1.25, metadata=hint(
        low=0.5, high=10.0, label="clip factor", help="residual clip over a private 95% quantile"))

    def __post_init__(self) -> None:
        _check(self, "Easy Instances GMM")


def _t(pub: Public, params: Any) -> int:
    return params.n_tuples or auto_n_tuples(pub.n_declared, pub.k)


def _gamma(params: Any) -> float:
    return params.gamma or DEFAULT_GAMMA[params.aggregator]


def _r_min(pub: Public, params: Any) -> float:
    return params.r_min or 1e-3 * pub.radius


# ----------------------------------------------------------------------------- k-means


def easy_kmeans_guarantee(budget: ApproxDP, pub: Public, params: EasyKMeansParams,
                          delta_prime: float = 0.0) -> ApproxDP:
    """Row-level (ε, δ) of PrivatekMeans at its own budget (public inputs only)."""
    return kmeans_guarantee(budget, params.lloyd_fraction)


def easy_kmeans_calibrate(epsilon: float, delta: float, pub: Public, params: EasyKMeansParams) -> Calibration:
    budget = calibrate_scale(lambda b: kmeans_guarantee(b, params.lloyd_fraction), epsilon, delta)
    return Calibration(budget, 0.0, easy_kmeans_guarantee(budget, pub, params))


def easy_kmeans_feasible(pub: Public, params: EasyKMeansParams) -> None:
    """t·k above the declared size is refused from declared values only (issue 25, finding 1)."""
    check_declared_rows(pub.n_declared, _t(pub, params), pub.k, "Easy Instances k-means")


def easy_kmeans_stage(X: np.ndarray, k: int, *, radius: float, rng: np.random.Generator, pub: Public,
                      params: EasyKMeansParams) -> Any:
    """GenCenters: the non-private tuple stage (cached by callers)."""
    return easy_tuple_stage(X, k, n_tuples=_t(pub, params), radius=radius, oracle=params.oracle, rng=rng,
                            n_declared=pub.n_declared)


def easy_kmeans_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                        pub: Public, params: EasyKMeansParams, stage: Any = None) -> Result:
    """PrivatekMeans' private part at ``budget`` on the (cached) tuple stage."""
    if stage is None:
        stage = easy_kmeans_stage(X, k, radius=radius, rng=rng, pub=pub, params=params)
    return kmeans_private_stage(X, stage, eps=budget.eps, delta=budget.delta, radius=radius,
                                aggregator=params.aggregator, gamma=_gamma(params), beta=params.beta,
                                r_min=_r_min(pub, params), lloyd_fraction=params.lloyd_fraction, rng=rng)


SPEC = register(AlgorithmSpec(
    name="easy_instances",
    title="Easy Instances k-means (CKM+21)",
    paper="Cohen, Kaplan, Mansour, Stemmer, Tsfadia. Differentially-private clustering of easy "
          "instances. ICML 2021, §4–5",
    budget_kind="approx",
    params=EasyKMeansParams,
    private=easy_kmeans_private,
    guarantee=easy_kmeans_guarantee,
    calibrate=easy_kmeans_calibrate,
    feasible=easy_kmeans_feasible,
    stage=easy_kmeans_stage,
    stage_fields=("n_tuples", "oracle"),
    steps=STEPS,
    rank=20,
    description="Sample-and-aggregate: a private test that the t k-tuples are nearly partitioned by "
                "far balls (⊥ otherwise), one tuple plus noise scaled to its inter-center distances "
                "(or private averages of its Voronoi clusters), then one private Lloyd step.",
))


# ----------------------------------------------------------------------------- GMM


def easy_gmm_guarantee(budget: ApproxDP, pub: Public, params: EasyGMMParams,
                       delta_prime: float = 0.0) -> ApproxDP:
    """Row-level (ε, δ) of PrivateGMM at its own budget (public inputs only)."""
    return gmm_guarantee(budget)


def easy_gmm_calibrate(epsilon: float, delta: float, pub: Public, params: EasyGMMParams) -> Calibration:
    budget = calibrate_scale(gmm_guarantee, epsilon, delta)
    return Calibration(budget, 0.0, easy_gmm_guarantee(budget, pub, params))


def _gmm_t(pub: Public, params: EasyGMMParams) -> int:
    return params.n_tuples or auto_n_tuples(int(pub.n_declared * params.tuple_fraction), pub.k)


def easy_gmm_feasible(pub: Public, params: EasyGMMParams) -> None:
    """t·k above the declared size of S¹ (n_declared·tuple_fraction) is refused from declared
    values only; a short S¹ in the data itself answers ⊥ inside the mechanism (issue 25)."""
    check_declared_rows(pub.n_declared, _gmm_t(pub, params), pub.k, "Easy Instances GMM",
                        fraction=params.tuple_fraction)


def easy_gmm_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                     pub: Public, params: EasyGMMParams, stage: Any = None) -> Result:
    """PrivateGMM at ``budget`` (its S¹/S² split is drawn inside, so there is no cached stage)."""
    t = _gmm_t(pub, params)
    return private_gmm(X, k, eps=budget.eps, delta=budget.delta, radius=radius, n_tuples=t,
                       tuple_fraction=params.tuple_fraction, aggregator=params.aggregator,
                       gamma=_gamma(params), beta=params.beta, r_min=_r_min(pub, params),
                       clip_factor=params.clip_factor, oracle=params.oracle, rng=rng)


GMM_SPEC = register(AlgorithmSpec(
    name="easy_instances_gmm",
    title="Easy Instances GMM (CKM+21)",
    paper="Cohen, Kaplan, Mansour, Stemmer, Tsfadia. Differentially-private clustering of easy "
          "instances. ICML 2021, §6",
    budget_kind="approx",
    params=EasyGMMParams,
    private=easy_gmm_private,
    guarantee=easy_gmm_guarantee,
    calibrate=easy_gmm_calibrate,
    feasible=easy_gmm_feasible,
    steps=GMM_STEPS,
    rank=21,
    description="Half the rows build k-tuples of empirical means; the private k-tuple clustering "
                "gives k centers; the other half is split by them and each part gets a private mean, "
                "covariance and weight.",
))
