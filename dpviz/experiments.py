"""Repeated private runs on one cached stage: FriendlyCore's noise redraws, and the translation
from a row-level ε to an algorithm's own budget.

Sweeps over the budget (ρ or row-level ε) and over n are :mod:`dpviz.sweeps` (the one engine);
this module keeps what is not a sweep: :func:`run_repeats` (N private outcomes of FC clustering on
the same cached tuple stage, for the noise cloud) and :func:`row_level_plan` (the registry's
budget plan of a sweep name).

All metrics are non-private diagnostics.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from dpviz._validation import RngLike, check_data, check_rng, check_scalar
from dpviz.result import Result

Progress = Callable[[float, str], None]
ShouldStop = Callable[[], bool]


def _fc_stage(X: np.ndarray, stage: Any, *, rho: float, delta: float, radius: float,
              r_min: float, preset: str, rng: np.random.Generator,
              n_declared: int | None = None, fallback: bool = True) -> Result:
    """The private stage of FC clustering on cached tuples (no declared n: a DP count)."""
    from dpviz.clustering.friendlycore.pipeline import fc_private_stage

    return fc_private_stage(X, stage, rho=rho, delta=delta, radius=radius, r_min=r_min,
                            preset=preset, rng=rng, n_declared=n_declared, fallback=fallback)


@functools.lru_cache(maxsize=512)
def row_level_plan(algorithm: str, eps: float, delta: float, *, n_declared: int, d: int, k: int,
                   radius: float, n_tuples: int, r_min: float, oracle: str) -> Any:
    """The registry's :class:`~dpviz.privacy.plan.BudgetPlan` of a sweep name at the row-level
    target (ε, δ) (``dpviz.registry.plan``; a name with parameters, ``"friendlycore[preset=paper]"``,
    is read by ``dpviz.registry.resolve_name``; the tuple knobs go to the specs that have them)."""
    from dpviz.registry import Public, param_fields, plan, resolve_name

    pub = Public(n_declared=n_declared, d=d, k=k, radius=radius)
    spec, _ = resolve_name(algorithm)
    fields = {f.name for f, _hint in param_fields(spec.params)}
    knobs = {"n_tuples": n_tuples, "r_min": r_min, "oracle": oracle}
    _, params = resolve_name(algorithm, {k: v for k, v in knobs.items() if k in fields})
    return plan(spec, eps, delta, pub, params)


def row_level_budget(algorithm: str, eps: float, delta: float, **public: Any) -> tuple[float, float]:
    """The own zCDP (ρ, δ) of a zCDP algorithm's plan at the row-level target (the app's ρ
    slider reads it). A pure-ε algorithm has no ρ of its own: read ``row_level_plan``."""
    budget = row_level_plan(algorithm, eps, delta, **public).budget
    if not hasattr(budget, "rho"):
        raise ValueError(f"{algorithm!r} has no ρ of its own; read row_level_plan(...).budget.")
    return budget.rho, budget.delta



def run_repeats(
    X: Any,
    stage: Any,
    *,
    repeats: int,
    rho: float,
    delta: float,
    radius: float,
    r_min: float,
    preset: str = "practical",
    rng: RngLike = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    n_declared: int | None = None,
    fallback: bool = True,
) -> list[Result]:
    """``repeats`` private outcomes of FC clustering on the same cached tuple stage.

    ``n_declared`` is the public size handed to every draw (None: each pays for a DP count);
    ``fallback`` is ``fc_private_stage``'s (off: a draw whose core does not form releases ⊥).

    Only the noise is redrawn (each repeat from its own child of ``rng``); the pieces and tuples
    are those of ``stage``. The draws feed :func:`dpviz.viz.noise.noise_cloud_figure`.
    Cancelled runs return the draws finished so far.

    Privacy
    -------
    A NON-PRIVATE DIAGNOSTIC (simulation): each Result alone would be a (ρ, δ)-zCDP run, but the
    N of them together cost N·ρ (N·δ) by composition, and a seeded ``rng`` makes every draw
    replayable. They are for seeing what the noise does, never for release.
    """
    func = "run_repeats"
    Xa = check_data(getattr(X, "X", X), func, allow_empty=False)
    repeats = check_scalar(repeats, "repeats", func, low=1, integer=True)
    gen, _ = check_rng(rng, "experiments:run_repeats")
    out: list[Result] = []
    for i, child in enumerate(gen.spawn(repeats)):
        if should_stop is not None and should_stop():
            break
        extra: dict[str, Any] = {} if n_declared is None else {"n_declared": n_declared}
        if not fallback:
            extra["fallback"] = False
        out.append(_fc_stage(Xa, stage, rho=rho, delta=delta, radius=radius, r_min=r_min,
                             preset=preset, rng=child, **extra))
        if progress is not None:
            progress((i + 1) / repeats, f"draw {i + 1} of {repeats}")
    return out
