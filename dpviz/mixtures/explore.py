"""One call per view of the Mixtures page: sample a scenario, run the learner, measure TV.

Every number is labelled by what it is: the learner's output is a private release; TV to the truth
is a simulation diagnostic (the truth is known only because we generated the data); EM and the TV
to an EM fit are non-private diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpviz._validation import seed_sequence
from dpviz.mixtures.baselines import em_fit
from dpviz.mixtures.crude import CrudeGroup, found_components
from dpviz.mixtures.inverse_sensitivity import (
    ParamGrid2D,
    binned_scores,
    cluster_size,
    inverse_sensitivity_2d,
    param_grid_2d,
)
from dpviz.mixtures.learner import GMM1DParams, mixture_of, private_gmm_1d
from dpviz.mixtures.mixture import GaussianMixture1D, tv_distance
from dpviz.mixtures.scenarios import SCENARIOS_1D, SCENARIOS_2D, GaussianMixture2D, Scenario
from dpviz.result import Result


def scenario(key: str, k: int) -> Scenario:
    """A built-in scenario with k components (1-D or 2-D)."""
    table = SCENARIOS_1D | SCENARIOS_2D
    if key not in table:
        raise ValueError(f"Unknown scenario {key!r}; built-in: {sorted(table)}.")
    return table[key]() if key == "hard" else table[key](k=k)


def data_rng(seed: int) -> np.random.Generator:
    """The data's own stream for ``seed``, independent of the learner's stream for the same seed.

    Sharing one seed would correlate them: the learner's split coins would be the very uniforms
    that chose each point's component, and the crude part would hold one component only.
    """
    return np.random.default_rng(seed_sequence(seed, "data:mixture_scenario"))


def sample(key: str, k: int, n: int, seed: int) -> tuple[np.ndarray, Scenario]:
    sc = scenario(key, k)
    x, _ = sc.sample(n, data_rng(seed))
    return x, sc


@dataclass(frozen=True)
class Run1D:
    """A learner run and its diagnostics.

    ``tv_private``: TV(learned, reference) with reference = the truth (simulation) or, on real
    data, the EM fit (non-private). ``tv_em``: TV(EM, truth) (simulation; None on real data).
    ``found``: which true components the crude groups approximate (G = 10; simulation).
    """

    result: Result
    mixture: GaussianMixture1D | None
    em: GaussianMixture1D
    reference: str
    tv_private: float | None
    tv_em: float | None
    found: np.ndarray | None


def run_1d(x: np.ndarray, k: int, *, epsilon: float, delta: float, seed: int,
           truth: GaussianMixture1D | None = None, em: GaussianMixture1D | None = None,
           params: GMM1DParams | None = None) -> Run1D:
    """The private learner on x (declared size = len(x), treated as public) plus diagnostics."""
    res = private_gmm_1d(x, k, epsilon=epsilon, delta=delta, n_declared=int(np.size(x)), rng=seed,
                         params=params)
    mix = mixture_of(res)
    em = em_fit(x, k, seed=seed) if em is None else em
    ref = truth if truth is not None else em
    tv_private = None if mix is None else tv_distance(ref, mix)
    tv_em = None if truth is None else tv_distance(truth, em)
    found = None
    if truth is not None:
        g = res.step("groups").data
        groups = [CrudeGroup(m, s, n, lo, hi, np.zeros(0, int))
                  for m, s, n, lo, hi in zip(g["means"], g["sds"], g["n_hat"], g["lo"], g["hi"], strict=True)]
        found = found_components(groups, truth.means, truth.sds)
    return Run1D(res, mix, em, "truth" if truth is not None else "EM fit", tv_private, tv_em, found)


@dataclass(frozen=True)
class Run2D:
    X: np.ndarray
    truth: GaussianMixture2D | None
    result: Result
    grid: ParamGrid2D


def grid_scores_2d(
    X: np.ndarray, k: int, bound: float, fraction: float = 0.5
) -> tuple[ParamGrid2D, np.ndarray]:
    """The grid and its scores (NOT private; independent of ε and the seed, so callers cache them)."""
    grid = param_grid_2d(bound)
    return grid, binned_scores(X, grid, cluster_size(X.shape[0], k, fraction))


def run_2d(X: np.ndarray, k: int, *, epsilon: float, bound: float, seed: int,
           truth: GaussianMixture2D | None = None,
           cached: tuple[ParamGrid2D, np.ndarray] | None = None) -> Run2D:
    grid, scores = grid_scores_2d(X, k, bound) if cached is None else cached
    res = inverse_sensitivity_2d(X, k, epsilon=epsilon, bound=bound, n_declared=X.shape[0], rng=seed,
                                 grid=grid, scores=scores)
    return Run2D(X, truth, res, grid)
