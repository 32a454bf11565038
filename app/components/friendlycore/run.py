"""FriendlyCore's own part of Explore: its knobs (:class:`RunConfig`), the slider's mark
(:func:`core_eps`), the metric tiles (:func:`diagnostics`) and the Learn page's demo run.

Everything else of a run is the app's one runner, :mod:`app.components.simulation` (issue 45):
seeds (``SeedSequence(s).spawn(2)``: the tuple stage's stream, the private stage's; the d-th
re-draw a child of the second), the tuple stage (cached; shared by every session for a public
dataset), the run through ``dpviz.run(stage=…, budget_plan=…)``, prefetch, re-draws and the privacy
number (``Result.statement``, the re-accounted ledger). The functions below that name a stage,
a run, a prefetch, a re-draw or a statement only translate a :class:`RunConfig` into the runner's
(spec, params, public inputs, seed, ε, δ) and call it.

Old links: until issue 45 FriendlyCore's re-draws used a third seed stream (``spawn(3)[2]``); they
now use the runner's, so "Re-draw noise ×N" shows other draws than before (the run itself, its
tuple stage and its noise are unchanged).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

import dpviz.clustering.baselines
import dpviz.clustering.friendlycore.budget
import dpviz.clustering.friendlycore.pipeline
import dpviz.clustering.friendlycore.spec
import dpviz.data
import dpviz.metrics
import dpviz.privacy
import dpviz.registry
from app.components import cache, shipped, simulation
from app.components.friendlycore import knobs
from app.components.run import Reference
from dpviz.clustering.friendlycore.spec import FCParams


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines one Explore run (besides the dataset's rows). FriendlyCore's
    knobs (t, oracle, r_min, preset, fallback) are named as in the one table of
    :mod:`app.components.friendlycore.knobs`, which also gives their parameter, URL name and
    ``FCParams`` field (:meth:`from_params`, :meth:`fc_params`)."""

    k: int
    t: int
    oracle: str
    seed: int
    rho: float | None
    delta: float
    radius: float
    r_min: float
    preset: str
    fallback: bool = True
    #: The row-level ε target (Explore's main control): the run spends the budget the registry's
    #: plan gives for (eps, delta) (:func:`fc_plan`). None (or 0): the run spends the own budget
    #: (rho, delta) with δ′ = δ (the Learn page's ρ lesson; an old link's ρ, converted once).
    eps: float | None = None

    @classmethod
    def from_params(cls, p: Mapping[str, Any], radius: float) -> RunConfig:
        """The run at the app's one budget, the row-level target (``eps``, ``delta``)."""
        return cls(k=int(p["k"]), seed=int(p["seed"]), rho=None, delta=float(p["delta"]),
                   radius=float(radius), eps=float(p["eps"]), **knobs.from_params(p))

    def fc_params(self, *, stage_only: bool = False) -> FCParams:
        """FriendlyCore's parameters of this run (all knobs, or the tuple stage's only), through
        the knobs' table (:func:`knobs.fc_params`)."""
        values = {k.name: k.kind(getattr(self, k.name)) for k in knobs.KNOBS}
        return knobs.fc_params(values, stage_only=stage_only)

    def stage_key(self, ds) -> tuple:
        """The runner's key of this run's tuple stage (:func:`simulation.stage_key`)."""
        return stage_key(ds, self)

    def private_key(self, ds) -> tuple:
        """The runner's key of this run (:func:`simulation.run_key`); it starts with the stage's."""
        return private_key(ds, self)

    def with_t(self, ds) -> RunConfig:
        """This run with t resolved: t = 0 (automatic) is the t the registered spec picks from the
        declared n and k (``auto_n_tuples``, public inputs only), so the tuple stage, the plan and
        the page all use the same pieces."""
        if self.t:
            return self
        auto = dpviz.clustering.friendlycore.spec.auto_n_tuples
        return replace(self, t=int(auto(int(ds.n), int(self.k))))

    def at_eps(self, eps: float) -> RunConfig:
        """This run at the row-level target ε (and this δ): the budget comes from the plan."""
        return replace(self, eps=float(eps), rho=None)


@functools.lru_cache(maxsize=512)
def _plan(n: int, d: int, k: int, radius: float, params: FCParams, eps: float | None, rho: float | None,
          delta: float):
    registry = dpviz.registry
    spec = registry.get(knobs.ALGORITHM)
    pub = registry.Public(n_declared=n, d=d, k=k, radius=radius)
    if eps:
        return registry.plan(spec, eps, delta, pub, params)
    return registry.plan_at_rho(spec, float(rho), delta, pub, params)


def check_feasible(ds, cfg: RunConfig) -> None:
    """Raise the registry's ValueError when FriendlyCore cannot run with these declared inputs
    (e.g. t·k above the declared n): before the tuple stage, so the page keeps the last good one."""
    spec, p, pub = _inputs(ds, cfg)
    if spec.feasible is not None:
        spec.feasible(pub, p)


def fc_plan(ds, cfg: RunConfig):
    """The budget plan of FriendlyCore's run for ``cfg`` (:func:`dpviz.registry.plan`, the one
    budget ↔ row-level translation): at the row-level target (``cfg.eps``, ``cfg.delta``) or, for
    an old link's own budget (``cfg.rho``, ``cfg.delta``, δ′ = δ), its guarantee
    (:func:`dpviz.registry.plan_at_budget`). Public inputs only; memoized. What a run spent is
    ``Result.plan``; this is for the readouts made before a run (the ρ entry, triage, the plans'
    prefetch)."""
    return _plan(int(ds.n), int(ds.d), int(cfg.k), float(cfg.radius), cfg.fc_params(),
                 float(cfg.eps) if cfg.eps else None, None if cfg.rho is None else float(cfg.rho),
                 float(cfg.delta))


def _inputs(ds, cfg: RunConfig):
    """(spec, params, public inputs) of ``cfg``: what the runner takes (a simulation declares the
    dataset's size, as the other algorithms' view does)."""
    spec = dpviz.registry.get(knobs.ALGORITHM)
    p = cfg.fc_params()
    pub = dpviz.registry.Public(n_declared=int(ds.n), d=int(ds.d), k=int(cfg.k), radius=float(cfg.radius))
    return spec, p, pub


def _stage_inputs(ds, cfg: RunConfig):
    """(spec, params, public inputs) of ``cfg``'s tuple stage: its stage fields only (t, oracle),
    so a budget knob the spec refuses never hides the last good stage's key."""
    spec = dpviz.registry.get(knobs.ALGORITHM)
    p = cfg.fc_params(stage_only=True)
    pub = dpviz.registry.Public(n_declared=int(ds.n), d=int(ds.d), k=int(cfg.k), radius=float(cfg.radius))
    return spec, p, pub


def _target(ds, cfg: RunConfig) -> dict[str, Any]:
    """The runner's (ε, δ, budget_plan) for ``cfg``: the row-level target, or an old link's own
    budget ρ with its plan (whose guarantee is then the target)."""
    if cfg.eps:
        return {"epsilon": float(cfg.eps), "delta": float(cfg.delta), "budget_plan": None}
    the_plan = fc_plan(ds, cfg)
    return {"epsilon": the_plan.guarantee.eps, "delta": the_plan.guarantee.delta, "budget_plan": the_plan}


def stage_key(ds, cfg: RunConfig) -> tuple:
    spec, p, pub = _stage_inputs(ds, cfg)
    return simulation.stage_key(ds, spec, p, pub, int(cfg.seed))


def private_key(ds, cfg: RunConfig) -> tuple:
    spec, p, pub = _inputs(ds, cfg)
    return simulation.run_key(ds, spec, p, pub, seed=int(cfg.seed), **_target(ds, cfg))


def seeds(seed: int) -> tuple[np.random.SeedSequence, ...]:
    """(tuple-stage stream, private-stage stream) for a run seed: the runner's (:func:`simulation.seeds`)."""
    return simulation.seeds(seed)


def tuple_stage(ds, cfg: RunConfig):
    """The cached non-private tuple stage (raises ValueError for infeasible k, t), the runner's
    (:func:`simulation.stage`; shared across sessions for a public dataset)."""
    # The private stage refuses t·k above the declared n (the simulation declares ds.n) from
    # declared values only; refuse here too, before clustering t pieces it would never use, so
    # the form shows the refusal and the last good stage and run stay on screen.
    dpviz.clustering.tuples.check_declared_rows(int(ds.n), cfg.t, cfg.k, "fc_private_stage")
    spec, p, pub = _stage_inputs(ds, cfg)
    return simulation.stage(ds, spec, p, pub, int(cfg.seed))


def private_run(ds, stage, cfg: RunConfig):
    """The run for ``cfg`` through the runner (:func:`simulation.run`: cached; ValueError on bad
    knobs). ``stage`` is the runner's own cached stage (:func:`tuple_stage`)."""
    spec, p, pub = _inputs(ds, cfg)
    return simulation.run(ds, spec, p, pub, seed=int(cfg.seed), **_target(ds, cfg))


def prefetch(ds, stage, cfg: RunConfig) -> Callable[[], Any] | None:
    """Start the run for ``cfg`` (one slider step away, or the Learn page's next ρ) and its
    statement's lines on the worker (:func:`simulation.prefetch`); a function giving the run, or
    None when speculation is off."""
    spec, p, pub = _inputs(ds, cfg)
    target = _target(ds, cfg)
    started = simulation.prefetch(ds, spec, p, pub, epsilons=(target["epsilon"],), delta=target["delta"],
                                  seed=int(cfg.seed), budget_plan=target["budget_plan"])
    if not started:
        return None
    key, get = started[0]
    simulation.prefetch_statement(key, get, public=simulation.is_public(ds))
    return get


def warm(ds, stage, cfg: RunConfig) -> Callable[[], Any] | None:
    """Start the run for ``cfg`` on a public dataset for the whole server (:func:`simulation.warm`;
    None for an upload or when speculation is off): a function giving the run."""
    spec, p, pub = _inputs(ds, cfg)
    target = _target(ds, cfg)
    started = simulation.warm(ds, spec, p, pub, epsilon=target["epsilon"], delta=target["delta"],
                              seed=int(cfg.seed), budget_plan=target["budget_plan"])
    return None if started is None else started[1]


def redraw(ds, stage, cfg: RunConfig, draw: int):
    """The ``draw``-th re-draw of the run for ``cfg`` (:func:`simulation.run` with ``draw``): the
    same tuples and plan, fresh noise. Registered explorations get it as ``ctx.simulate(draw=i)``."""
    spec, p, pub = _inputs(ds, cfg)
    return simulation.run(ds, spec, p, pub, seed=int(cfg.seed), draw=int(draw), **_target(ds, cfg))


def core_forms(result) -> bool:
    """Whether FriendlyCore's own core answered (the run's decision: its spec's structure step)."""
    return bool(dpviz.registry.get("friendlycore").structure_ok(result))


def core_eps(ds, stage, cfg: RunConfig, grid: tuple[float, ...]) -> float | None:
    """The smallest row-level ε of the slider's grid from which this seeded simulation's core
    forms, found the way the run decides: by running the private stage at each ε's planned budget
    (cached, as a slider move would) and reading its outcome, bisecting over the grid (about
    log₂(len(grid)) runs, once per stage, δ, preset, r_min and fallback). None if the core does
    not form at the top of the grid.

    A non-private diagnostic of this simulation (it reads the rows through the runs), shown as
    one: the public prediction (``presets.smallest_feasible_rho``) placed the mark a step or two
    early (issue 27).
    """
    def ok(i: int) -> bool:
        try:
            return core_forms(private_run(ds, stage, cfg.at_eps(grid[i])))
        except ValueError:  # no budget meets this target (e.g. a δ below what the run needs)
            return False

    def compute() -> float | None:
        lo, hi = 0, len(grid) - 1
        if not ok(hi):
            return None
        if ok(lo):
            return float(grid[lo])
        while hi - lo > 1:  # invariant: the core does not form at lo and forms at hi
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return float(grid[hi])

    return cache.memo("core_eps", (*cfg.at_eps(1.0).private_key(ds), grid), compute,
                      public=simulation.is_public(ds))


@dataclass(frozen=True)
class Diagnostics:
    """The metric tiles (all NON-PRIVATE diagnostics: exact functions of the rows)."""

    tuples_kept: int | None
    tuples_total: int
    normalized_loss: float | None
    center_error: float | None
    #: Where the loss's reference came from when it was not computed in this session: the
    #: shipped cache of the default lesson (:mod:`app.components.shipped`), said on screen.
    reference_note: str = ""


def diagnostics(ds, stage, result, ref: Reference | None, *, key: tuple | None = None) -> Diagnostics:
    """The tiles' diagnostics of ``result``; with the run's ``key`` cached per run (once for the
    server on a public dataset: the normalized loss reads every row, ~20 ms at 150,000 rows)."""
    if key is not None:
        return cache.memo("diagnostics", key, lambda: diagnostics(ds, stage, result, ref),
                          public=simulation.is_public(ds))
    metrics = dpviz.metrics
    kept = None
    for s in result.trace:
        if s.name == "match_core" and s.data.get("keep") is not None:
            kept = int(np.count_nonzero(s.data["keep"]))
    t = int(np.asarray(stage.tuples).shape[0])
    note = shipped.NOTE if ref is not None and ref.recipe.endswith(shipped.NOTE) else ""
    if result.centers is None:
        return Diagnostics(kept, t, None, None, note)
    loss = None
    if ref is not None:
        loss = float(metrics.normalized_loss(ds.X, result.centers, reference_cost=ref.cost))
    err = None
    if ds.true_centers is not None:
        err = float(metrics.center_error(ds.true_centers, result.centers))
    return Diagnostics(kept, t, loss, err, note)


# ----------------------------------------------------------------------------- messages


def demo_dataset(n: int = 20_000, seed: int = 0):
    """The Learn page's small public dataset: three clusters (Fig. 3 recipe)."""
    return cache.memo("demo_data", (n, seed),
                      lambda: dpviz.data.GENERATORS["fig3_three"](n, rng=seed))


def _demo_config(ds, rho: float, t: int, seed: int) -> RunConfig:
    return RunConfig(k=3, t=t, oracle="kmeans++", seed=seed, rho=float(rho), delta=1e-6,
                     radius=float(ds.radius or 1.0), r_min=0.001, preset="practical")


def demo_run(rho: float, *, n: int = 20_000, t: int = 200, seed: int = 0):
    """A small FC run for the Learn page (k = 3, t = 200, Λ = 1, r_min = 0.001)."""
    ds = demo_dataset(n, seed)
    cfg = _demo_config(ds, rho, t, seed)
    stage = tuple_stage(ds, cfg)
    return ds, private_run(ds, stage, cfg)


def demo_figures(rho: float, build: Callable[[Any, Any], Any]):
    """``build(ds, result)`` (the figures) of the Learn page's run at ``rho``, cached per
    session: moving back to a ρ redraws without rebuilding anything. The run itself is
    :func:`demo_run` (the tuple stage computed once, then the private stage per ρ)."""
    ds, result = demo_run(rho)
    return cache.memo("figures", ("learn", float(rho)), lambda: build(ds, result))


def demo_prefetch(rhos, build: Callable[[Any, Any], Any]) -> None:
    """Start the Learn page's runs at ``rhos`` and their figures on the background worker
    (:func:`prefetch`: the same seed stream, so the same run as computed on the move)."""
    cache.cancel_queued("run", "statement", "figures")
    ds = demo_dataset()
    for rho in rhos:
        cfg = _demo_config(ds, rho, 200, 0)
        get = prefetch(ds, tuple_stage(ds, cfg), cfg)
        if get is not None:
            cache.speculate("figures", ("learn", float(rho)),
                            lambda get=get: build(ds, get()))


def statement(ds, cfg: RunConfig, result, *, key: tuple | None = None):
    """The run's row-level statement with its explanation lines (:func:`simulation.statement_lines`):
    its ``row`` is the run's re-accounted ``Result.statement``, the number every surface shows.
    Cached per run (and prefetched with the neighbouring runs)."""
    return simulation.statement_lines(result, cfg.private_key(ds) if key is None else key,
                                      public=simulation.is_public(ds))
