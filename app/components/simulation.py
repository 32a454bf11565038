"""THE simulation runner of the app: every page's seeded run of a registered algorithm (issue 45).

Explore's generic page (``algorithm_view``) and FriendlyCore's live page (``friendlycore/``) both
call this module, with (dataset, spec, params, public inputs, seed, ε, δ, draw); nothing else in
``app/`` seeds, stages, plans or states a run.

- **Seeds.** One run seed s gives two independent streams, ``SeedSequence(s).spawn(2)``: the first
  for the non-private stage (pieces, oracle), the second for the private stage's noise. The d-th
  re-draw of the noise (d ≥ 1) is the child ``(1, d)`` of the second stream, on the same stage.
  The same URL therefore shows the same run (:func:`seeds`).
- **Stage cache.** The spec's non-private stage is cached per (rows, algorithm, its stage fields,
  public inputs, seed, declared-public split). A public dataset's stage (a generated recipe, a
  built-in table: :data:`PUBLIC_SOURCES`) is computed once for the whole server and shared by
  every session; an upload's stays in its session (DESIGN.md).
- **The run** goes through ``dpviz.run(stage=…, budget_plan=…)``: the registry plans it from the
  row-level target (or takes a given plan, an old link's own budget), runs the private stage on
  the cached stage and re-accounts its ledger. Cached per session (:func:`run`); a public
  dataset's seeded run is a function of public inputs only, the same for every session, so it is
  computed once for the server (``cache.memo(..., public=True)``, issue 46), as are its statement
  lines. An upload's runs never leave its session.
- **Prefetch** (:func:`prefetch`) starts the same calls for the neighbouring slider positions on
  the background worker; **redraw** is :func:`run` with ``draw`` ≥ 1.
- **Privacy readout.** The number every surface shows is the run's re-accounted statement,
  ``Result.statement`` (:func:`stated`); :func:`statement_lines` adds the row-level statement's
  explanation lines with that same number.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import dpviz
from app.components import cache
from dpviz.data.holdout import PublicHoldout
from dpviz.privacy.accounting import explained_statement
from dpviz.privacy.plan import BudgetPlan
from dpviz.registry import AlgorithmSpec, Public, param_fields

#: Sources whose rows are a public recipe or a public table (never an upload): their non-private
#: stage is shared by every session of the server (only what is derived from uploads stays per
#: session).
PUBLIC_SOURCES = ("generated", "builtin")
#: Public stages kept for all sessions (FriendlyCore's holds its match graph and FindDiam levels,
#: ~30–45 MB at t = 1,500).
SHARED_STAGES = 2
_SHARED: OrderedDict[tuple, Any] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}
#: The seed of the declared-public split: drawn once, the same for every run on a dataset.
PUBLIC_SPLIT_SEED = 0


def seeds(seed: int, draw: int = 0) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(non-private stage stream, private stage stream) of a run seed; ``draw`` ≥ 1 gives the
    draw-th fresh private stream on the same stage (a re-draw of the noise)."""
    a, b = np.random.SeedSequence(int(seed)).spawn(2)
    if draw:
        b = np.random.SeedSequence(entropy=b.entropy, spawn_key=(*b.spawn_key, 1, int(draw)))
    return a, b


def rows(ds, public: PublicHoldout | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """(the private rows, the declared-public rows or None)."""
    if public is None:
        return ds.X, None
    return public.split(ds.X)


def is_public(ds) -> bool:
    """Whether ``ds``'s rows are a public recipe or table (:data:`PUBLIC_SOURCES`): what is
    computed from them alone may be shared by every session (never an upload's)."""
    return getattr(ds, "source", None) in PUBLIC_SOURCES


def _split_key(public: PublicHoldout | None) -> tuple:
    return () if public is None else ("public", public.fraction, PUBLIC_SPLIT_SEED)


class StageKey(NamedTuple):
    """What a non-private stage depends on (a run's key starts with it)."""

    content_hash: str
    algorithm: str
    stage: tuple
    pub: Public
    seed: int
    split: tuple


#: What one simulation depends on: its stage's key (:class:`StageKey`'s fields), then the params'
#: repr, the row-level (ε, δ), the given plan's key and the re-draw number (a tuple: a cache key).
RunKey = namedtuple("RunKey", [*StageKey._fields, "spec_params", "epsilon", "delta", "plan", "draw"])


def stage_key(ds, spec: AlgorithmSpec, p: Any, pub: Public, seed: int,
              public: PublicHoldout | None = None) -> StageKey:
    """What the non-private stage depends on (a run's key starts with it)."""
    return StageKey(ds.content_hash, spec.name, spec.stage_key(p), pub, int(seed), _split_key(public))


def stage(ds, spec: AlgorithmSpec, p: Any, pub: Public, seed: int,
          public: PublicHoldout | None = None) -> Any:
    """The spec's cached non-private stage (None for a spec without one); ValueError for inputs it
    refuses. Shared across sessions for a public dataset (:data:`PUBLIC_SOURCES`)."""
    if spec.stage is None:
        return None
    key = stage_key(ds, spec, p, pub, seed, public)
    X, _ = rows(ds, public)

    def compute():
        return spec.stage(X, pub.k, radius=pub.radius, rng=np.random.default_rng(seeds(seed)[0]), pub=pub,
                          params=p)

    if is_public(ds) and public is None:
        return cache.memo("stage", key, lambda: _shared_stage(key, compute))
    return cache.memo("stage", key, compute)


def _shared_stage(key: tuple, compute: Callable[[], Any]):
    """The stage of a public dataset, computed once for the server (issue 33 item 2): a class
    opening the default lesson pays it once, not once per student. Sessions asking at the same
    time wait for the one computing it (a lock per key)."""
    with _SHARED_LOCK:
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with lock:
        with _SHARED_LOCK:
            if key in _SHARED:
                _SHARED.move_to_end(key)
                return _SHARED[key]
        value = compute()
        with _SHARED_LOCK:
            _SHARED[key] = value
            while len(_SHARED) > SHARED_STAGES:
                old, _ = _SHARED.popitem(last=False)
                _KEY_LOCKS.pop(old, None)
        return value


def _plan_key(budget_plan: BudgetPlan | None) -> tuple:
    if budget_plan is None:
        return ()
    return ("plan", repr(budget_plan.budget), float(budget_plan.delta_prime))


def run_key(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilon: float, delta: float, seed: int,
            public: PublicHoldout | None = None, draw: int = 0,
            budget_plan: BudgetPlan | None = None) -> RunKey:
    """The cache key of one simulation; it starts with its :func:`stage_key`."""
    return RunKey(*stage_key(ds, spec, p, pub, seed, public), repr(p), float(epsilon), float(delta),
                  _plan_key(budget_plan), int(draw))


def _call(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilon: float, delta: float, seed: int,
          public: PublicHoldout | None, draw: int, budget_plan: BudgetPlan | None):
    """(cache key, the call) of one simulation: the same for a run made now or prefetched."""
    key = run_key(ds, spec, p, pub, epsilon=epsilon, delta=delta, seed=seed, public=public, draw=draw,
                  budget_plan=budget_plan)
    staged = stage(ds, spec, p, pub, seed, public)
    X, public_X = rows(ds, public)
    extra = {} if public_X is None else {"public_X": public_X}
    fields = {f.name: getattr(p, f.name) for f, _ in param_fields(spec.params)}
    return key, lambda: dpviz.run(
        spec.name, X, pub.k, epsilon=epsilon, delta=delta, radius=pub.radius, n_declared=pub.n_declared,
        stage=staged, budget_plan=budget_plan, rng=np.random.default_rng(seeds(seed, draw)[1]),
        **extra, **fields)


def run(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilon: float, delta: float, seed: int,
        public: PublicHoldout | None = None, draw: int = 0, budget_plan: BudgetPlan | None = None):
    """One seeded simulation of ``spec`` at the row-level target (ε, δ) (cached per session; on a
    public dataset computed once for the server).

    With ``public`` (a declared public split) the run sees only the private rows and receives the
    public ones as ``public_X``; ``pub.n_declared`` is then the private part's size. With
    ``budget_plan`` (an own budget's plan, e.g. an old link's ρ) the run spends that plan's budget
    and (ε, δ) must be its guarantee. ``draw`` ≥ 1: the draw-th re-draw of the noise.
    """
    key, compute = _call(ds, spec, p, pub, epsilon=epsilon, delta=delta, seed=seed, public=public,
                         draw=draw, budget_plan=budget_plan)
    return cache.memo("run" if not draw else "redraw", key, compute, public=is_public(ds))


def prefetch(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilons, delta: float, seed: int,
             public: PublicHoldout | None = None,
             budget_plan: BudgetPlan | None = None) -> list[tuple[tuple, Callable[[], Any]]]:
    """Start the runs at ``epsilons`` (the slider's neighbours) on the background worker
    (:func:`cache.speculate`): a step there then only waits for what is left of them. The same
    seeds as :func:`run`, so the same noise; nothing is shown until picked. Returns, per started
    (or already done) run, its key and a function giving the run (waiting for it), for more work
    to chain on the worker; empty when speculation is off. With ``budget_plan`` (an own budget's
    plan, one ε: its guarantee's) the run spends that plan, as :func:`run` does."""
    started = []
    for eps in epsilons:
        try:
            key, compute = _call(ds, spec, p, pub, epsilon=float(eps), delta=float(delta), seed=seed,
                                 public=public, draw=0, budget_plan=budget_plan)
        except ValueError:  # a stage these inputs refuse: the move itself will say so
            continue
        pending = cache.speculate("run", key, compute, public=is_public(ds))
        done = cache.peek("run", key, public=is_public(ds))
        if pending is None and done is None:  # speculation is off
            continue
        started.append((key, pending.result if pending is not None else (lambda done=done: done)))
    return started


def warm(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilon: float, delta: float, seed: int,
         budget_plan: BudgetPlan | None = None) -> tuple[RunKey, Callable[[], Any]] | None:
    """Start the run at ``epsilon`` of a public dataset (:func:`is_public`) on the background
    worker for the whole server, with its statement lines (:func:`cache.warm`): a class moving
    anywhere on the slider then finds it done (issue 46). Its key and a function giving the run
    (waiting for it); None for an upload (never shared), when speculation is off, or for inputs
    the stage refuses."""
    if not is_public(ds):
        return None
    try:
        key, compute = _call(ds, spec, p, pub, epsilon=float(epsilon), delta=float(delta), seed=seed,
                             public=None, draw=0, budget_plan=budget_plan)
    except ValueError:
        return None
    get = cache.warm("run", key, compute)
    if get is None:
        return None
    cache.warm("statement", key, lambda: _lines(get()))
    return key, get


def stated(result) -> Any:
    """THE row-level (ε, δ) of a run that every surface shows: its re-accounted statement
    (``Result.statement``, :func:`dpviz.privacy.accounting.check_ledger`'s value), else its plan's
    guarantee (a reference, a ledger with no proven guarantee)."""
    return result.stated


def _lines(result) -> Any:
    # The library states (the re-accounted number with its lines); the app displays.
    return explained_statement(result.ledger, result.plan.delta_prime, result.statement)


def statement_lines(result, key: tuple, *, public: bool = False):
    """The row-level statement of ``result``'s ledger with its explanation lines (the paper's
    zCDP total, the tuple stage through group privacy), its ``row`` being :func:`stated`'s number.
    ~10 ms (the δ′ split), so cached per run key and prefetched (:func:`prefetch_statement`);
    ``public``: the run's dataset :func:`is_public` (then computed once for the server)."""
    return cache.memo("statement", key, lambda: _lines(result), public=public)


def prefetch_statement(key: tuple, get: Callable[[], Any], *, public: bool = False) -> None:
    """Start :func:`statement_lines` of a prefetched run on the worker, after it."""
    cache.speculate("statement", key, lambda: _lines(get()), public=public)
