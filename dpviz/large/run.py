"""A streamed run at a row-level (ε, δ): the registry's FriendlyCore calibration, out of core.

:func:`run_stream` is :func:`dpviz.registry.run` for a table on disk: the same spec, parameters and
calibration (``dpviz.clustering.fc_spec``), with :func:`dpviz.large.fc_stream.fc_stream` as the
private run. The declared size is required (a file's row count is never read for a release).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpviz._validation import RngLike, check_scalar
from dpviz.clustering import fc_spec
from dpviz.large.engine import Progress, _quiet
from dpviz.large.fc_stream import fc_stream
from dpviz.large.source import TableSource
from dpviz.registry import Public, calibrate, get
from dpviz.result import Result

#: The registered algorithms that have a streamed implementation.
STREAMED = ("friendlycore",)


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
    if algorithm not in STREAMED:
        raise ValueError(f"Algorithm {algorithm!r} has no streamed implementation; "
                         f"streamed: {list(STREAMED)}.")
    spec = get(algorithm)
    epsilon = check_scalar(epsilon, "epsilon", func, low=0.0, low_open=True, high_open=True)
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, high_open=True)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    k = check_scalar(k, "k", func, low=1, high_open=True, integer=True)
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    p = spec.make_params(**params)
    src = data if isinstance(data, TableSource) else TableSource(
        data, columns=columns, **({} if chunk_rows is None else {"chunk_rows": chunk_rows}))
    pub = Public(n_declared=n_declared, d=src.d, k=k, radius=radius)
    cal = calibrate(spec, epsilon, delta, pub, p)
    res = fc_stream(src, k, rho=cal.budget.rho, delta=cal.budget.delta, radius=radius,
                    r_min=fc_spec._r_min(pub, p), n_declared=n_declared, n_tuples=fc_spec._t(pub, p),
                    oracle=p.oracle, preset=p.preset, fallback=p.fallback, rng=rng, scheduler=scheduler,
                    n_jobs=n_jobs, progress=progress)
    return dataclasses.replace(res, algorithm=algorithm, guarantee=cal.guarantee)
