"""A registry spec for the univariate private GMM learner (``private_gmm_1d``, d = 1 data only).

Registered like every family, with ``dims=(1, 1)``: the registry knows it serves one-column data
only, so ``dpviz.algorithms(applicable_to=d)`` and the app's pages offer it on d = 1 and list it
with that reason elsewhere (it estimates a 1-D density in TV; its centers are the selected means).

The learner is (ε, δ)-DP for one added/removed row by itself (no tuples, no conversion), so its
budget *is* the row-level target: calibration is the identity. On data with d ≠ 1 it answers ⊥
(a failure, not an exception) and records its whole budget as reserved.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpviz.mixtures.learner import GMM1DParams, private_gmm_1d
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.registry import AlgorithmSpec, Calibration, Public, register
from dpviz.result import Result, Trace

STEPS = ("split", "gap_histogram", "crude_candidates", "groups", "select_0", "mixture")


def gmm_guarantee(budget: ApproxDP, pub: Public, params: GMM1DParams, delta_prime: float) -> ApproxDP:
    """Row-level (ε, δ): the budget itself (crude and fine stages on disjoint parts)."""
    return ApproxDP(budget.eps, budget.delta)


def gmm_calibrate(epsilon: float, delta: float, pub: Public, params: GMM1DParams) -> Calibration:
    return Calibration(ApproxDP(epsilon, delta), 0.0, ApproxDP(epsilon, delta))


def gmm_private(X: np.ndarray, k: int, budget: ApproxDP, *, radius: float, rng: np.random.Generator,
                pub: Public, params: GMM1DParams, stage: Any = None) -> Result:
    """``private_gmm_1d`` on a one-column X (Λ unused: the learner needs no bounds)."""
    if X.shape[1] != 1:
        ledger = Ledger("private_gmm_1d")
        ledger.record("reserved", "reserved", ApproxDP(budget.eps, budget.delta),
                      note="d ≠ 1: the univariate learner did not run")
        return Result(None, f"private_gmm_1d needs 1-D data (d = 1); got d = {X.shape[1]} (⊥)", ledger,
                      Trace().freeze(), dict(k=k), None, guarantee=ApproxDP(budget.eps, budget.delta))
    return private_gmm_1d(X[:, 0], k, epsilon=budget.eps, delta=budget.delta, n_declared=pub.n_declared,
                          rng=rng, params=params)


SPEC = register(AlgorithmSpec(
    name="private_gmm_1d",
    title="Private univariate GMM (gap histogram + hypothesis selection)",
    paper="Ashtiani, Majid, Narayanan. Sample-efficient private learning of mixtures of Gaussians. "
          "NeurIPS 2024, §2.2, App. D and F (pipeline; fine stage is ours)",
    budget_kind="approx",
    params=GMM1DParams,
    private=gmm_private,
    guarantee=gmm_guarantee,
    calibrate=gmm_calibrate,
    steps=STEPS,
    description="Density estimation in TV for d = 1, not clustering: a private histogram of sorted gaps "
                "finds crude components without bounds on means or scales; private hypothesis "
                "selection with a sensitivity-1 minimum-distance score refines them. Its centers are the "
                "selected means; labels drawn from the mixture carry no guarantee.",
    dims=(1, 1),
    # Its learner (dpviz/mixtures/learner.py) returns every run as a simulation, even with the
    # release sampler, and its draws have not been checked against SecureRNG's samplers: release
    # pages must not offer it until they are.
    releasable=False,
    rank=300,
))
