"""A streamed run at a row-level (ε, δ): the registry's calibration, out of core.

:func:`run_stream` is :func:`dpviz.registry.run` for a table on disk: the same spec, parameters and
calibration, with a streamed private run in place of the in-memory one:

* ``friendlycore``: :func:`dpviz.large.fc_stream.fc_stream` (``dpviz.clustering.friendlycore.spec``);
* ``dp_lloyd``: :func:`dpviz.large.lloyd_stream.dp_lloyd_stream` (``dpviz.clustering.baselines_spec``);
* ``auto``: its public choice among the streamed algorithms
  (:func:`dpviz.clustering.auto.choose_from` with :data:`STREAMED`), with the ``auto_choice`` trace
  step of the in-memory ``auto``; the same int seed draws the in-memory ``auto``'s stream.

The declared size is required (a file's row count is never read for a release).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from dpviz._validation import RngLike, check_rng, check_scalar
from dpviz.clustering.friendlycore import spec as fc_spec
from dpviz.large.engine import Progress, _quiet
from dpviz.large.fc_stream import fc_stream
from dpviz.large.lloyd_stream import dp_lloyd_stream
from dpviz.large.source import TableSource
from dpviz.registry import Public, get, plan
from dpviz.result import Result, TraceStep


def _fc(src: TableSource, k: int, budget: Any, pub: Public, p: Any, **kw: Any) -> Result:
    return fc_stream(src, k, rho=budget.rho, delta=budget.delta, radius=pub.radius,
                     r_min=fc_spec._r_min(pub, p), n_declared=pub.n_declared, n_tuples=fc_spec._t(pub, p),
                     oracle=p.oracle, preset=p.preset, fallback=p.fallback, **kw)


def _lloyd(src: TableSource, k: int, budget: Any, pub: Public, p: Any, **kw: Any) -> Result:
    return dp_lloyd_stream(src, k, rho=budget.rho, delta=budget.delta, radius=pub.radius, iters=p.iters,
                           **kw)


#: The registered algorithms with a streamed implementation (``auto`` streams when its choice does).
STREAMERS: dict[str, Callable[..., Result]] = {"friendlycore": _fc, "dp_lloyd": _lloyd}
STREAMED = tuple(STREAMERS)


def streamed_choice(algorithm: str, n_declared: int, d: int, k: int, epsilon: float,
                    delta: float) -> str | None:
    """The streamed algorithm that ``algorithm`` runs on these public inputs, or None.

    ``auto`` resolves its public choice (declared n, d, k, ε, δ only)."""
    if algorithm == "auto":  # auto, out of core, chooses among the streamed algorithms
        from dpviz.clustering.auto import choose_from

        algorithm = choose_from(STREAMED, n_declared, d, k, epsilon, delta).algorithm
    return algorithm if algorithm in STREAMERS else None


def run_stream(
    data: Any, k: int, *, epsilon: float, delta: float, radius: float, n_declared: int,
    algorithm: str = "friendlycore", rng: RngLike = None, scheduler: Any = None,
    n_jobs: int | None = None, columns: list[str] | None = None, chunk_rows: int | None = None,
    progress: Progress = _quiet, **params: Any,
) -> Result:
    """Run ``algorithm`` out of core so that its row-level guarantee is at most (ε, δ).

    Returns a Result with ``algorithm`` and ``guarantee`` set, as :func:`dpviz.registry.run`.

    Raises
    ------
    ValueError
        An algorithm without a streamed implementation, bad parameters or a bad table.
    """
    func = "run_stream"
    spec = get(algorithm)
    epsilon = check_scalar(epsilon, "epsilon", func, low=0.0, low_open=True, high_open=True)
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, high_open=True)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    k = check_scalar(k, "k", func, low=1, high_open=True, integer=True)
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    p = spec.make_params(**params)
    src = data if isinstance(data, TableSource) else TableSource(
        data, columns=columns, **({} if chunk_rows is None else {"chunk_rows": chunk_rows}))
    name = streamed_choice(algorithm, n_declared, src.d, k, epsilon, delta)
    if name is None:
        chose = (f" (auto chose {_choice(n_declared, src.d, k, epsilon, delta)!r})" if algorithm == "auto"
                 else "")
        raise ValueError(f"Algorithm {algorithm!r}{chose} has no streamed implementation; "
                         f"streamed: {list(STREAMED)} (and auto when it chooses one of them).")
    pub = Public(n_declared=n_declared, d=src.d, k=k, radius=radius)
    kw = dict(rng=rng, scheduler=scheduler, n_jobs=n_jobs, progress=progress)
    if algorithm == "auto":  # as dpviz.clustering.auto._private, among the streamed algorithms
        from dpviz.clustering.auto import choose_from

        choice = choose_from(STREAMED, n_declared, src.d, k, epsilon, delta)
        gen, seed = check_rng(rng, "algorithm:auto")  # the in-memory auto's stream for this seed
        kw["rng"] = gen
        chosen_spec = get(choice.algorithm)
        chosen_params = chosen_spec.make_params(**choice.params)
        cal = plan(chosen_spec, epsilon, delta, pub, chosen_params)  # the plan of what runs
        res = STREAMERS[name](src, k, cal.budget, pub, chosen_params, **kw)
        trace = res.trace
        if p.explain:
            trace = (TraceStep("auto_choice", True, {"algorithm": name, "sentence": choice.sentence,
                                                     "cell": choice.cell},
                               "public: chosen from n_declared, d, k, ε, δ only"), *trace)
        res = dataclasses.replace(res, trace=trace, params=dict(res.params) | {"auto_choice": name},
                                  seed=res.seed if seed is None else seed)
    else:
        cal = plan(spec, epsilon, delta, pub, p)  # the run's one budget plan (Result.plan)
        res = STREAMERS[name](src, k, cal.budget, pub, p, **kw)
    return dataclasses.replace(res, algorithm=algorithm, guarantee=cal.guarantee, plan=cal,
                               params=dict(res.params) | {"n_declared": n_declared,
                                                          "budget": str(cal.budget)})


def _choice(n_declared: int, d: int, k: int, epsilon: float, delta: float) -> str:
    from dpviz.clustering.auto import choose_from

    return choose_from(STREAMED, n_declared, d, k, epsilon, delta).algorithm
