"""DP kernel k-means' registry entry: parameters, row-level guarantee, declared public records.

References: Acs et al., IEEE TKDE (ICDM 2017), §4.1, Alg. 2 and footnote 3.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from dpviz.clustering.kernel_kmeans import dp_kernel_kmeans, gamma_from_public
from dpviz.data.generators import uniform_ball
from dpviz.privacy.accounting import pure_rho_guarantee
from dpviz.privacy.budget import ZCDP
from dpviz.registry import AlgorithmSpec, Public, check_hinted, hint, register
from dpviz.result import Result

# The registered run takes the paper's k PUBLIC initial records from ``public_X`` (records the caller
# declares public: a held-out split or public synthetic data; dpviz.run(..., public_X=...)). Without
# them it starts from k points uniform in the ball of radius Λ (data-independent), which loses
# accuracy (docs/acs.md).


@dataclass(frozen=True)
class KernelKMeansParams:
    """DP kernel k-means knobs (Acs et al., Alg. 2)."""

    n_features: int = field(default=50, metadata=hint(
        low=5, high=1000, step=5, label="RFF dimension d", slider=True,
        help="number of random Fourier features. Small d wins at small ε: the noise per feature sum "
             "is the same at any d, but a larger d has more noisy coordinates (Fig. 3)."))
    iters: int = field(default=5, metadata=hint(low=1, high=50, step=1, label="iterations T_K",
                                                help="noisy Lloyd iterations (paper: 20)"))
    gamma: float = field(default=0.0, metadata=hint(
        low=0.0, high=1e4, scale="log", public=True, label="RBF width γ",
        help="kernel exp(−γ‖x−y‖²); 0 means: 1/median squared distance of the public records "
             "when there are some, else 1/Λ² (both public)"))
    input_share: float = field(default=0.1, metadata=hint(
        low=0.01, high=0.99, step=0.01, label="share for input-space means",
        help="fraction of ρ spent on the private mean of each final cluster in input space"))

    def __post_init__(self) -> None:
        check_hinted(self, "DP kernel k-means")


#: Public records read to tune γ (1/median squared distance): ~80k pairs, a stable median, O(m²) work.
GAMMA_PUBLIC_ROWS = 400


def public_init_records(public_X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct public records drawn at random (footnote 3: "random records drawn from public data")."""
    if public_X.shape[0] < k:
        raise ValueError(f"DP kernel k-means starts from k = {k} distinct public records, but only "
                         f"{public_X.shape[0]} public record(s) were given: declare more public rows "
                         "or lower k.")
    return public_X[rng.choice(public_X.shape[0], size=k, replace=False)]


def _kk_private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
                pub: Public, params: KernelKMeansParams, stage: object = None,
                public_X: np.ndarray | None = None) -> Result:
    if public_X is None:
        init = uniform_ball(k, pub.d, radius, rng)  # public: drawn without the data
        gamma = params.gamma or 1.0 / (radius * radius)
    else:
        init = public_init_records(public_X, k, rng)
        gamma = params.gamma or _public_gamma(public_X, radius)
    res = dp_kernel_kmeans(X, k, rho=budget.rho, delta=budget.delta, public_init=init, radius=radius,
                           n_features=params.n_features, gamma=gamma, iters=params.iters,
                           input_share=params.input_share, rng=rng)
    init_from = "uniform in the Λ-ball (no public records)" if public_X is None else "public records"
    return dataclasses.replace(res, params=dict(res.params) | {"init_from": init_from})


def _public_gamma(public_X: np.ndarray, radius: float) -> float:
    """γ from the first GAMMA_PUBLIC_ROWS public records; 1/Λ² if they are all equal."""
    try:
        return gamma_from_public(public_X[:GAMMA_PUBLIC_ROWS])
    except ValueError:
        return 1.0 / (radius * radius)


KERNEL_KMEANS = register(AlgorithmSpec(
    name="kernel_kmeans",
    title="DP kernel k-means (random Fourier features)",
    paper="Acs, Melis, Castelluccia, De Cristofaro. Differentially private mixture of generative neural "
          "networks. IEEE TKDE (ICDM 2017), §4.1, Alg. 2",
    budget_kind="zcdp",
    params=KernelKMeansParams,
    private=_kk_private,
    guarantee=pure_rho_guarantee,
    steps=("features", "init", "iteration", "partition", "input_means"),
    rank=40,
    uses_public_data=True,
    description="Lloyd in a random-feature space of the RBF kernel (features of norm ≤ 1, so the noise "
                "does not grow with Λ), Gaussian noise on sizes and feature sums; then a private mean of "
                "each cluster in input space. Starts from k records you declare public (or, without "
                "any, from random points in the ball).",
))
