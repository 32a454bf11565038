"""The Learn page's FriendlyCore lesson (``app/views/learn.py``): its row-level guarantee at a ρ,
and the live example's runs (``run.demo_run``, ``run.demo_figures``, ``run.demo_prefetch``)."""

from __future__ import annotations

import functools

import dpviz.registry
from app.components.friendlycore.run import demo_figures, demo_prefetch, demo_run  # noqa: F401

#: The live example's public inputs (``run.demo_run``: 20,000 rows, k = 3, t = 200, Λ = 1).
N, K, T, RADIUS, R_MIN = 20_000, 3, 200, 1.0, 0.001


@functools.lru_cache(maxsize=256)
def row_guarantee(rho: float, delta: float):
    """FriendlyCore's row-level (ε, δ) at the own budget (ρ, δ) with δ′ = δ on the live example's
    public inputs: converted by the plan's rule (``budget_from_rho`` → ``plan_at_budget``), which
    Explore's readout agrees with. Public inputs only, so cached process-wide."""
    registry = dpviz.registry
    spec = registry.get("friendlycore")
    pub = registry.Public(n_declared=N, d=2, k=K, radius=RADIUS)
    params = spec.make_params(n_tuples=T, r_min=R_MIN)
    return registry.plan_at_rho(spec, float(rho), float(delta), pub, params).guarantee
