"""``rc_lloyd``'s registry entry: radius-constrained noisy Lloyd from a private Gaussian start
(:func:`dpviz.clustering.rc_lloyd.rc_lloyd`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.rc_lloyd import STARTS, rc_lloyd
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP
from dpviz.registry import AlgorithmSpec, Public, check_hinted, hint, register
from dpviz.result import Result


@dataclass(frozen=True)
class RCLloydParams:
    """The steps, the start and its share of ρ, the counts' share of a step, the step radius schedule."""

    iters: int = field(default=8, metadata=hint(low=1, high=10, step=1, label="steps",
                                                help="radius-constrained noisy Lloyd steps after the start"))
    start_share: float = field(default=0.3, metadata=hint(
        low=0.05, high=0.95, step=0.05, label="start share",
        help="share of ρ for the private start"))
    start: str = field(default="sign", metadata=hint(
        choices=STARTS, label="start",
        help="the private start: the noisy mean, mean distance and spatial sign covariance (whose noise "
             "does not grow with Λ²), or gauss_fit's noisy mean and second moment"))
    count_share: float = field(default=0.2, metadata=hint(
        low=0.05, high=0.95, step=0.05, label="count share",
        help="share of each step's ρ for the noisy counts (the rest: the displacement sums)"))
    step_frac: float = field(default=0.2, metadata=hint(
        low=0.01, high=2.0, step=0.01, label="step radius / Λ",
        help="each row's displacement from its center is clipped to this fraction of Λ in the first "
             "step (the sums' sensitivity)"))
    step_decay: float = field(default=0.8, metadata=hint(
        low=0.1, high=1.0, step=0.05, label="step radius decay",
        help="the step radius is multiplied by this after every step"))

    def __post_init__(self) -> None:
        check_hinted(self, "rc_lloyd")


def _private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
             pub: Public, params: RCLloydParams, stage: Any = None) -> Result:
    return rc_lloyd(X, k, rho=budget.rho, delta=budget.delta, radius=radius, n_declared=pub.n_declared,
                    iters=params.iters, start_share=params.start_share, count_share=params.count_share,
                    step_frac=params.step_frac, step_decay=params.step_decay, start=params.start, rng=rng)


SPEC = register(AlgorithmSpec(
    name="rc_lloyd", title="Radius-constrained noisy Lloyd from a private Gaussian start", budget_kind="zcdp",
    params=RCLloydParams,
    paper="Diaa et al. 2024, FastLloyd §4 (radius-constrained relative updates); Su et al. 2016 "
          "(DP-Lloyd); Locantore et al. 1999 (the spatial sign covariance of the default start); Dwork, "
          "Talwar, Thakurta, Zhang 2014 (the noisy second moment of the gauss start)",
    private=_private, guarantee=pure_rho_guarantee, steps=("mean", "gaussian_fit", "gauss_fit_centers",
                                                           "sign_axes", "rc_start", "rc_step", "rc_centers"),
    rank=96,
    description="Starts from the k-means of a private Gaussian fit, then takes a few noisy Lloyd steps "
                "whose noise is calibrated to a short step radius, not the data radius: for small "
                "tables, where every noisy sum is expensive.",
))
