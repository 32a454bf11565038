"""The Explore pipeline, cached per session: tuple stage → private stage → diagnostics.

Two stages (DESIGN.md, "Two stages, for live interaction"):

- the tuple stage (pieces and the oracle's k-tuples) depends on the rows, k, t, the oracle and
  the seed, not on the budget. It is cached per session keyed on
  ``(content_hash, k, t, oracle, seed)``;
- the private stage reruns on every ε / δ move (at the budget of the run's plan, ``fc_plan``),
  on the cached tuples (milliseconds at t = 200); its results are kept in a small per-session LRU
  so moving back to a budget is instant.

The non-private reference (k-means++ on all rows: its centers and cost, used by the normalized
loss and the noise cloud) is computed once per ``(content_hash, k)``.

Seeds: one run seed s gives independent streams, ``SeedSequence(s).spawn(3)``: the first for
the tuple stage (pieces, oracle), the second for the private stage's noise, the third for the
"Re-draw noise ×N" draws. The same URL therefore shows the same run.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
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
from app.components import cache, shipped
from app.components.run import Reference


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines one Explore run (besides the dataset's rows)."""

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
        return cls(k=int(p["k"]), t=int(p["t"]), oracle=str(p["oracle"]), seed=int(p["seed"]),
                   rho=None, delta=float(p["delta"]), radius=float(radius),
                   r_min=float(p["rmin"]), preset=str(p["preset"]),
                   fallback=bool(p.get("fb", True)), eps=float(p["eps"]))

    def stage_key(self, ds) -> tuple:
        return (ds.content_hash, self.k, self.t, self.oracle, self.seed, self.radius)

    def private_key(self, ds) -> tuple:
        return (*self.stage_key(ds), self.rho, self.delta, self.radius, self.r_min, self.preset,
                self.fallback, self.eps or None)

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
def _plan(n: int, d: int, k: int, radius: float, t: int, oracle: str, preset: str, fallback: bool,
          r_min: float, eps: float | None, rho: float | None, delta: float):
    registry = dpviz.registry
    spec = registry.get("friendlycore")
    pub = registry.Public(n_declared=n, d=d, k=k, radius=radius)
    params = spec.make_params(n_tuples=t, oracle=oracle, preset=preset, fallback=fallback, r_min=r_min)
    if eps:
        return registry.plan(spec, eps, delta, pub, params)
    return registry.plan_at_budget(spec, registry.budget_from_rho(spec.budget_kind, float(rho), delta),
                                   pub, params)


def check_feasible(ds, cfg: RunConfig) -> None:
    """Raise the registry's ValueError when FriendlyCore cannot run with these declared inputs
    (e.g. t·k above the declared n): before the tuple stage, so the page keeps the last good one."""
    spec = dpviz.registry.get("friendlycore")
    if spec.feasible is not None:
        pub = dpviz.registry.Public(n_declared=int(ds.n), d=int(ds.d), k=int(cfg.k), radius=float(cfg.radius))
        spec.feasible(pub, spec.make_params(n_tuples=cfg.t, oracle=cfg.oracle, preset=cfg.preset,
                                            fallback=cfg.fallback, r_min=cfg.r_min))


def fc_plan(ds, cfg: RunConfig):
    """THE budget plan of FriendlyCore's run for ``cfg`` (:func:`dpviz.registry.plan`, the one
    budget ↔ row-level translation; issue 26): at the row-level target (``cfg.eps``, ``cfg.delta``)
    or, for a given own budget (``cfg.rho``, ``cfg.delta``, δ′ = δ), its guarantee
    (:func:`dpviz.registry.plan_at_budget`). Public inputs only (declared n, d, k, Λ, t, oracle,
    preset, fallback, r_min); memoized (a pure function; safe on the background worker).
    ``plan.budget.rho`` is what the private stage spends, ``plan.delta_prime`` the δ′ its
    statement uses."""
    return _plan(int(ds.n), int(ds.d), int(cfg.k), float(cfg.radius), int(cfg.t), str(cfg.oracle),
                 str(cfg.preset), bool(cfg.fallback), float(cfg.r_min), float(cfg.eps) if cfg.eps else None,
                 None if cfg.rho is None else float(cfg.rho), float(cfg.delta))


def seeds(seed: int) -> tuple[np.random.SeedSequence, ...]:
    """(tuple-stage stream, private-stage stream, noise-redraw stream) for a run seed."""
    return tuple(np.random.SeedSequence(int(seed)).spawn(3))


def tuple_stage(ds, cfg: RunConfig):
    """The cached non-private tuple stage (raises ValueError for infeasible k, t).

    Through ``fc_tuple_stage``, the library's one tuple-stage entry point: rows outside the
    Λ-ball are dropped before the pieces are drawn, as the private stage drops them.
    """
    fc_tuple_stage = dpviz.clustering.friendlycore.pipeline.fc_tuple_stage
    # The private stage refuses t·k above the declared n (the simulation declares ds.n) from
    # declared values only; refuse here too, before clustering t pieces it would never use, so
    # the form shows the refusal and the last good stage and run stay on screen.
    dpviz.clustering.tuples.check_declared_rows(int(ds.n), cfg.t, cfg.k, "fc_private_stage")

    def compute():
        return fc_tuple_stage(ds.X, cfg.k, n_tuples=cfg.t, oracle=cfg.oracle, radius=cfg.radius,
                              rng=np.random.default_rng(seeds(cfg.seed)[0]))

    if getattr(ds, "source", None) in PUBLIC_SOURCES:  # a public recipe's: one for every session
        return cache.memo("stage", cfg.stage_key(ds), lambda: _shared_stage(cfg.stage_key(ds), compute))
    return cache.memo("stage", cfg.stage_key(ds), compute)


#: Sources whose rows are a public recipe or a public table (never an upload): their tuple stage
#: is shared by every session of the server (DESIGN.md: only what is derived from uploads stays
#: per session).
PUBLIC_SOURCES = ("generated", "builtin")
#: Public tuple stages kept for all sessions (each holds its match graph and FindDiam levels,
#: ~30–45 MB at t = 1,500).
SHARED_STAGES = 2
_SHARED: OrderedDict[tuple, Any] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}


def _shared_stage(key: tuple, compute: Callable[[], Any]):
    """The tuple stage of a public dataset, computed once for the server (issue 33 item 2): the
    match graph and FindDiam's levels are cached on the stage object, so a class opening the
    default lesson pays them once, not once per student. Sessions asking at the same time wait
    for the one computing it (a lock per key)."""
    with _SHARED_LOCK:
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with lock:
        with _SHARED_LOCK:
            if key in _SHARED:
                _SHARED.move_to_end(key)
                return _SHARED[key]
        stage = compute()
        with _SHARED_LOCK:
            _SHARED[key] = stage
            while len(_SHARED) > SHARED_STAGES:
                old, _ = _SHARED.popitem(last=False)
                _KEY_LOCKS.pop(old, None)
        return stage


def _run(ds, stage, cfg: RunConfig, rng: np.random.Generator):
    """FriendlyCore through ``dpviz.run`` like every family (issue 33): the registry plans the run
    from the row-level target (or takes the plan of an old link's ρ, :func:`fc_plan`), runs the
    private stage on the cached tuple stage and re-accounts its ledger. A simulation treats the
    dataset's size as declared (as the other algorithms' view does); the Release page asks for a
    declared n or pays for a DP count."""
    the_plan = fc_plan(ds, cfg)
    target = (float(cfg.eps), float(cfg.delta)) if cfg.eps else (the_plan.guarantee.eps,
                                                                   the_plan.guarantee.delta)
    return dpviz.registry.run(
        "friendlycore", ds.X, int(cfg.k), epsilon=target[0], delta=target[1], radius=float(cfg.radius),
        rng=rng, n_declared=int(ds.n), stage=stage, budget_plan=None if cfg.eps else the_plan,
        n_tuples=int(cfg.t), oracle=str(cfg.oracle), preset=str(cfg.preset), fallback=bool(cfg.fallback),
        r_min=float(cfg.r_min))


def _private(ds, stage, cfg: RunConfig):
    """The private stage on the private-stage seed stream (the same draw wherever it runs)."""
    return _run(ds, stage, cfg, np.random.default_rng(seeds(cfg.seed)[1]))


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

    return cache.memo("core_eps", (*cfg.at_eps(1.0).private_key(ds), grid), compute)


def private_run(ds, stage, cfg: RunConfig):
    """The private stage for ``cfg`` on the cached tuples (cached; ValueError on bad knobs)."""
    return cache.memo("run", cfg.private_key(ds), lambda: _private(ds, stage, cfg))


def prefetch(ds, stage, cfg: RunConfig) -> Callable[[], Any] | None:
    """Start the private stage for ``cfg`` and its privacy statement in the background (e.g.
    one ρ step away), so that moving the slider there only waits for what is left of them
    (:func:`cache.speculate`).

    It is the run :func:`private_run` would compute: the same seed stream, so the same noise.
    Nothing is shown until the user picks that ρ; a result computed and never shown releases
    nothing. Returns a function giving the run (waiting for it), for more work to chain on
    the worker, or None if speculation is off.
    """
    key = cfg.private_key(ds)
    pending = cache.speculate("run", key, lambda: _private(ds, stage, cfg))
    done = cache.peek("run", key)
    if pending is None and done is None:  # speculation is off
        return None
    get = pending.result if pending is not None else (lambda: done)
    # the plan (memoized) is read on the worker too: a new ε's calibration is not on the step
    cache.speculate("statement", key, lambda: _statement(get(), fc_plan(ds, cfg).delta_prime))
    return get


def redraw(ds, stage, cfg: RunConfig, draw: int):
    """The ``draw``-th re-draw of the private stage for ``cfg``: the same tuples and the exact
    budget of the run on screen (its plan's ρ), fresh noise from the third seed stream (cached).
    Registered explorations get it as ``ctx.simulate(draw=i)`` on FriendlyCore's page."""
    def compute():
        ss = seeds(cfg.seed)[2]
        rng = np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, int(draw))))
        return _run(ds, stage, cfg, rng)

    return cache.memo("redraw", (*cfg.private_key(ds), int(draw)), compute)


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


def diagnostics(ds, stage, result, ref: Reference | None) -> Diagnostics:
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


def _statement(result, delta_prime: float):
    return dpviz.privacy.row_level_statement(result.ledger, delta_prime)


def statement(ds, cfg: RunConfig, result, *, key: tuple | None = None):
    """``row_level_statement(result.ledger, δ′)`` with the δ′ of the run's plan (:func:`fc_plan`):
    every privacy number shown comes from here.

    It costs ~10 ms (``zcdp_to_dp`` minimises over the Rényi order directly), so it is cached
    per run and prefetched with the neighbouring runs (:func:`prefetch`). It is a pure function of
    the run's ledger and public plan: the cached statement is the one a fresh call would give.
    """
    return cache.memo("statement", cfg.private_key(ds) if key is None else key,
                      lambda: _statement(result, fc_plan(ds, cfg).delta_prime))
