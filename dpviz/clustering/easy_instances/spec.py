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

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.tuples import ORACLES, check_declared_rows
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.mechanisms import gaussian_sigma_dp
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
from .plan import MIN_ROWS_PER_CLUSTER, NoisyCentersSplit, auto_noisy_centers, averages_plan

#: Trace steps, in run order (NoisyCenters or Averages steps in the middle).
STEPS = ("tuples", "plan", "test", "status", "chosen", "log_lambda", "noisy_centers", "clusters",
         "segments", "averages", "averages_nonprivate", "lloyd_partition", "lloyd", "lloyd_nonprivate")
GMM_STEPS = (*STEPS[:11], "gmm_partition", "gmm")

#: The γ slider's step: 980 positions on [0, 0.49]; the smallest settable γ > 0 [OURS].
GAMMA_STEP = 0.0005

#: The public inputs' automatic settings are shown as "automatic (value)" (registry ``auto_values``).
AUTO = "automatic"


def _common_fields() -> dict[str, Any]:
    return dict(
        aggregator=field(default="noisy_centers", metadata=hint(
            choices=AGGREGATORS, label="k-tuple aggregator",
            help="PrivatekNoisyCenters (practical) or PrivatekAverages (theory: needs millions of tuples)")),
        n_tuples=field(default=0, metadata=hint(
            low=0, high=10_000_000, step=1, label="tuples t",
            help="number of random pieces; 0 = automatic: the fewest tuples that are private at this "
                 "(ε, δ, β), n_min (larger t only shrinks the share of tuples the test tolerates)")),
        gamma=field(default=0.0, metadata=hint(
            low=0.0, high=0.49, step=GAMMA_STEP, scale="linear", slider=True, label="γ (ball scale)",
            help="balls B(y_i, γλ_i) of the test; 0 = automatic: NoisyCenters the largest γ whose noise "
                 "σ_i/λ_i still keeps every center nearest its own noisy center (w.p. 1 − β/2); "
                 "Averages 0.1 (< 1/6)")),
        beta=field(default=0.05, metadata=hint(low=1e-6, high=0.5, label="β", help="confidence")),
        r_min=field(default=0.0, metadata=hint(
            low=0.0, high=1e6, scale="log", public=True,
            help="interior-point grid resolution (Averages); 0 = automatic: 10⁻³·Λ")),
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
    lloyd_fraction: float = field(default=0.0, metadata=hint(
        low=0.0, high=0.99, label="Lloyd share",
        help="share of (ε, δ) for the final private Lloyd step; 0 = automatic: the smallest share in "
             "[0.02, 0.25] whose noise on a center of n/k rows is ≤ Λ/100 (the rest goes to the tuples)"))

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


@dataclass(frozen=True)
class Settings:
    """The k-tuple stage's settings for one run, from public inputs and the parameters.

    t, gamma, r_min: the values used (automatic where the parameter is 0); split: NoisyCenters'
    budget split (the automatic one); auto: the names set automatically.
    """

    t: int
    gamma: float
    r_min: float
    split: NoisyCentersSplit | None
    auto: tuple[str, ...]


#: The automatic Lloyd share's range and target (noise norm on a center of n/k rows ≤ Λ/100) [OURS].
LLOYD_SHARE_RANGE = (0.02, 0.25)
LLOYD_NOISE_OF_RADIUS = 0.01


def lloyd_share(budget: ApproxDP, pub: Public, params: Any) -> float:
    """The Lloyd step's share f: the parameter, or (0 = automatic) the smallest f in
    LLOYD_SHARE_RANGE with σ(Δ = Λ, fε/2, fδ)·√d/(n/k) ≤ Λ/100, i.e. the noisy sum's error on a
    center of n/k rows is a hundredth of Λ (public inputs only) [OURS]."""
    if params.lloyd_fraction:
        return float(params.lloyd_fraction)
    lo, hi = LLOYD_SHARE_RANGE

    def err(f: float) -> float:
        sigma1 = gaussian_sigma_dp(1.0, f * budget.eps / 2.0, f * budget.delta)
        return sigma1 * math.sqrt(pub.d) * pub.k / pub.n_declared

    if err(lo) <= LLOYD_NOISE_OF_RADIUS:
        return lo
    if err(hi) > LLOYD_NOISE_OF_RADIUS:
        return hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if err(mid) <= LLOYD_NOISE_OF_RADIUS else (mid, hi)
    return hi


def tuple_budget_kmeans(budget: ApproxDP, params: Any, pub: Public) -> ApproxDP:
    f = lloyd_share(budget, pub, params)
    return ApproxDP((1 - f) * budget.eps, (1 - f) * budget.delta)


def settings(pub: Public, params: Any, tuple_budget: ApproxDP, n_rows: float) -> Settings:
    """t, γ, r_min and the split from public inputs (Cohen et al. 2021 §4.4–4.5; note §4.5) [OURS].

    ``n_rows`` is the declared number of rows that feed the tuples (all of them for k-means, the S¹
    share for the GMM). NoisyCenters: :func:`~.plan.auto_noisy_centers` (t = n_min, γ at the
    separation ratio, the split minimising the sample bound). Averages: γ = 0.1, r_min = 10⁻³·Λ,
    t = its n_min. Raises ValueError, BEFORE any data is read, when the declared rows cannot fill
    the automatic t tuples with MIN_ROWS_PER_CLUSTER·k rows each; the message names the declared
    input to change (n, ε) and by how much. Nothing here reads the data.
    """
    auto = tuple(name for name, v in (("n_tuples", params.n_tuples), ("gamma", params.gamma),
                                      ("r_min", params.r_min)) if not v)
    k, d = pub.k, pub.d
    eps, delta = tuple_budget.eps, tuple_budget.delta
    r_min = params.r_min or 1e-3 * pub.radius
    if params.aggregator == "noisy_centers":
        a = auto_noisy_centers(k, d, float(eps), float(delta), float(params.beta))
        if a is not None and params.n_tuples:  # the user's t: the best split private at it, if any
            a = auto_noisy_centers(k, d, float(eps), float(delta), float(params.beta),
                                   int(params.n_tuples)) or dataclasses.replace(a, split=NoisyCentersSplit())
        if a is None:  # no private t at all (e.g. δ₀ underflows at huge ε): the aggregator's own ⊥,
            # decided from public inputs before reading the tuples, says so
            return Settings(int(params.n_tuples or 2), float(params.gamma or DEFAULT_GAMMA["noisy_centers"]),
                            float(r_min), None, auto)
        split = a.split
        gamma = params.gamma or a.gamma
        t = params.n_tuples or a.t
    else:
        split = None
        gamma = params.gamma or DEFAULT_GAMMA["averages"]
        ap = averages_plan(2, k, d, eps=eps, delta=delta, beta=params.beta, gamma=gamma,
                           radius=pub.radius, r_min=r_min)
        if ap.n_min is None:
            raise ValueError(f"Easy Instances (PrivatekAverages) has no private number of tuples at "
                             f"(ε = {eps:.3g}, δ = {delta:.2g}); raise ε or δ, or r_min.")
        t = params.n_tuples or ap.n_min
    need = MIN_ROWS_PER_CLUSTER * k * t
    if not params.n_tuples and n_rows < need:
        raise ValueError(_too_few_rows(pub, params, t, need, n_rows))
    return Settings(int(t), float(gamma), float(r_min), split, auto)


def _too_few_rows(pub: Public, params: Any, t: int, need: int, n_rows: float) -> str:
    share = n_rows / pub.n_declared
    rows = math.ceil(need / share)
    algo = "PrivatekNoisyCenters" if params.aggregator == "noisy_centers" else "PrivatekAverages"
    return (f"Easy Instances ({algo}) needs at least {rows:,} declared rows at this (ε, δ) — "
            f"t = {t:,} tuples (the fewest that are private) of ≥ {MIN_ROWS_PER_CLUSTER}k = "
            f"{MIN_ROWS_PER_CLUSTER * pub.k} rows each — but n = {pub.n_declared:,} is declared "
            f"({rows / pub.n_declared:.2g}× more rows needed). Declare more rows, raise ε "
            f"(n_min falls about as 1/ε), or lower k."
            + (" PrivatekAverages needs millions of tuples; try aggregator = noisy_centers."
               if params.aggregator == "averages" else ""))


def auto_values(budget: ApproxDP, pub: Public, params: Any, tuple_budget: ApproxDP,
                n_rows: float) -> dict[str, str]:
    """"automatic (value)" for each automatic field, or why no value (the registry's hook)."""
    try:
        s = settings(pub, params, tuple_budget, n_rows)
        t = f"{s.t:,}"
    except ValueError:
        try:  # γ and r_min do not depend on the rows: show them, and why t has no value
            s = settings(pub, params, tuple_budget, math.inf)
            t = f"{s.t:,} needs ≥ {MIN_ROWS_PER_CLUSTER * pub.k * s.t / (n_rows / pub.n_declared):,.0f} rows"
        except ValueError:
            return {name: f"{AUTO} (none)" for name in ("n_tuples", "gamma", "r_min")
                    if not getattr(params, name)}
    vals = {"n_tuples": t, "gamma": f"{s.gamma:.3g}", "r_min": f"{s.r_min:.3g}"}
    return {name: f"{AUTO} ({vals[name]})" for name in s.auto}


class LazyTuples:
    """The tuple stage, built on first use for the t a run needs (t depends on the budget, which the
    registry's ``stage`` hook does not see). Cached per t; each t gets its own seed stream
    (SeedSequence([seed, t])). Non-private."""

    def __init__(self, X: np.ndarray, k: int, *, radius: float, oracle: str, seed: int,
                 n_declared: int) -> None:
        self.X, self.k, self.radius, self.oracle, self.seed = X, k, radius, oracle, seed
        self.n_declared = n_declared
        self._stages: dict[int, Any] = {}

    def get(self, t: int) -> Any:
        if t not in self._stages:
            rng = np.random.default_rng(np.random.SeedSequence([self.seed, int(t)]))
            self._stages[t] = easy_tuple_stage(self.X, self.k, n_tuples=int(t), radius=self.radius,
                                               oracle=self.oracle, rng=rng, n_declared=self.n_declared)
        return self._stages[t]


# ----------------------------------------------------------------------------- k-means


def easy_kmeans_guarantee(budget: ApproxDP, pub: Public, params: EasyKMeansParams,
                          delta_prime: float = 0.0) -> ApproxDP:
    """Row-level (ε, δ) of PrivatekMeans at its own budget (public inputs only)."""
    return kmeans_guarantee(budget, lloyd_share(budget, pub, params))


def _kmeans_budget(epsilon: float, delta: float, pub: Public, params: EasyKMeansParams) -> ApproxDP:
    """The largest budget within the row-level target (no check that the automatic t fits)."""
    return calibrate_scale(lambda b: kmeans_guarantee(b, lloyd_share(b, pub, params)), epsilon, delta)


def easy_kmeans_calibrate(epsilon: float, delta: float, pub: Public, params: EasyKMeansParams) -> Calibration:
    budget = _kmeans_budget(epsilon, delta, pub, params)
    # The automatic t must fit the declared rows: decided here, in the plan, from declared values
    # only, so a run whose size is a DP count answers ⊥ instead of raising after the count.
    settings(pub, params, tuple_budget_kmeans(budget, params, pub), pub.n_declared)
    return Calibration(budget, 0.0, easy_kmeans_guarantee(budget, pub, params))


def easy_kmeans_feasible(pub: Public, params: EasyKMeansParams) -> None:
    """A t the user sets with t·k above the declared size is refused from declared values only
    (issue 25, finding 1); the automatic t is checked by the calibration."""
    if params.n_tuples:
        check_declared_rows(pub.n_declared, params.n_tuples, pub.k, "Easy Instances k-means")


def easy_kmeans_stage(X: np.ndarray, k: int, *, radius: float, rng: np.random.Generator, pub: Public,
                      params: EasyKMeansParams) -> LazyTuples:
    """GenCenters: the non-private tuple stage, built lazily for the t of each run (cached by callers)."""
    return LazyTuples(X, k, radius=radius, oracle=params.oracle, seed=int(rng.integers(2**63)),
                      n_declared=pub.n_declared)


def easy_kmeans_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                        pub: Public, params: EasyKMeansParams, stage: Any = None) -> Result:
    """PrivatekMeans' private part at ``budget`` on the (cached) tuple stage; t, γ, r_min and the
    split from :func:`settings` (raises before reading data when the declared rows are too few)."""
    f = lloyd_share(budget, pub, params)
    s = settings(pub, params, tuple_budget_kmeans(budget, params, pub), pub.n_declared)
    if stage is None:
        stage = easy_kmeans_stage(X, k, radius=radius, rng=rng, pub=pub, params=params)
    tuples = stage.get(s.t) if isinstance(stage, LazyTuples) else stage
    res = kmeans_private_stage(X, tuples, eps=budget.eps, delta=budget.delta, radius=radius,
                               aggregator=params.aggregator, gamma=s.gamma, beta=params.beta,
                               r_min=s.r_min, lloyd_fraction=f, rng=rng, split=s.split)
    auto = s.auto + (("lloyd_fraction",) if not params.lloyd_fraction else ())
    return dataclasses.replace(res, params=dict(res.params) | {"auto": auto})


def easy_kmeans_auto(epsilon: float, delta: float, pub: Public, params: EasyKMeansParams) -> dict[str, str]:
    """The automatic fields' values at the row-level (ε, δ) (the app's "automatic (value)")."""
    # The budget alone, not the plan: where the automatic t does not fit the declared rows, the
    # label says how many it needs (auto_values) instead of vanishing with the plan's refusal.
    budget = _kmeans_budget(epsilon, delta, pub, params)
    out = auto_values(budget, pub, params, tuple_budget_kmeans(budget, params, pub), pub.n_declared)
    if not params.lloyd_fraction:
        out["lloyd_fraction"] = f"{AUTO} ({lloyd_share(budget, pub, params):.3g})"
    return out


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
    auto_values=easy_kmeans_auto,
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
    settings(pub, params, budget, pub.n_declared * params.tuple_fraction)  # as easy_kmeans_calibrate
    return Calibration(budget, 0.0, easy_gmm_guarantee(budget, pub, params))


def easy_gmm_feasible(pub: Public, params: EasyGMMParams) -> None:
    """A t the user sets with t·k above the declared size of S¹ (n_declared·tuple_fraction) is
    refused from declared values only; a short S¹ in the data itself answers ⊥ inside the
    mechanism (issue 25). The automatic t is checked by the calibration."""
    if params.n_tuples:
        check_declared_rows(pub.n_declared, params.n_tuples, pub.k, "Easy Instances GMM",
                            fraction=params.tuple_fraction)


def easy_gmm_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                     pub: Public, params: EasyGMMParams, stage: Any = None) -> Result:
    """PrivateGMM at ``budget`` (its S¹/S² split is drawn inside, so there is no cached stage); t, γ,
    r_min and the split from :func:`settings` on the S¹ share of the declared rows."""
    s = settings(pub, params, budget, pub.n_declared * params.tuple_fraction)
    res = private_gmm(X, k, eps=budget.eps, delta=budget.delta, radius=radius, n_tuples=s.t,
                      tuple_fraction=params.tuple_fraction, aggregator=params.aggregator,
                      gamma=s.gamma, beta=params.beta, r_min=s.r_min,
                      clip_factor=params.clip_factor, oracle=params.oracle, rng=rng, split=s.split)
    return dataclasses.replace(res, params=dict(res.params) | {"auto": s.auto})


def easy_gmm_auto(epsilon: float, delta: float, pub: Public, params: EasyGMMParams) -> dict[str, str]:
    budget = calibrate_scale(gmm_guarantee, epsilon, delta)  # the budget alone, as easy_kmeans_auto
    return auto_values(budget, pub, params, budget, pub.n_declared * params.tuple_fraction)


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
    auto_values=easy_gmm_auto,
    rank=21,
    description="Half the rows build k-tuples of empirical means; the private k-tuple clustering "
                "gives k centers; the other half is split by them and each part gets a private mean, "
                "covariance and weight.",
))
