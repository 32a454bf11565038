"""Repeated private runs on one cached stage: FriendlyCore's noise redraws, and the translation
from a row-level ε to an algorithm's own budget.

Sweeps over the budget (ρ or row-level ε) and over n are :mod:`dpviz.sweeps` (the one engine);
this module keeps what is not a sweep: :func:`run_repeats` (N private outcomes of FC clustering on
the same cached tuple stage, for the noise cloud) and :func:`row_level_budget`.

All metrics are non-private diagnostics.
"""

from __future__ import annotations

import functools
import math
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
    from dpviz.clustering.friendlycore import fc_private_stage

    return fc_private_stage(X, stage, rho=rho, delta=delta, radius=radius, r_min=r_min,
                            preset=preset, rng=rng, n_declared=n_declared, fallback=fallback)


def _registered(X: np.ndarray, name: str, k: int, *, rho: float, delta: float, radius: float,
                stages: dict, stage_rng: np.random.Generator, rng: np.random.Generator) -> Result:
    """A registered algorithm at the zCDP budget ρ: its own ρ, or ε = √(2ρ) for a pure-ε one
    (ε-DP implies ε²/2-zCDP; Bun & Steinke 2016, Prop. 1.4). The sweep declares n = len(X) (a
    study tool on the caller's data). Its non-private stage is computed once per repetition."""
    from dpviz.privacy.budget import ZCDP, ApproxDP
    from dpviz.registry import Public, get

    spec = get(name)
    params = spec.make_params()
    pub = Public(n_declared=X.shape[0], d=X.shape[1], k=k, radius=radius)
    if spec.stage is not None and name not in stages:
        stages[name] = spec.stage(X, k, radius=radius, rng=stage_rng, pub=pub, params=params)
    if spec.budget_kind == "approx":
        raise ValueError(f"'{name}' has an (ε, δ) budget of its own: compare it at a row-level target "
                         "with dpviz.compare.compare_sweep, not on a ρ axis.")
    budget = {"zcdp": lambda: ZCDP(rho, delta), "pure": lambda: ApproxDP(math.sqrt(2.0 * rho), 0.0),
              "none": lambda: None}[spec.budget_kind]()
    return spec.private(X, k, budget, radius=radius, rng=rng, pub=pub, params=params,
                        stage=stages.get(name))


@functools.lru_cache(maxsize=512)
def row_level_budget(algorithm: str, eps: float, delta: float, *, n_declared: int, d: int, k: int,
                     radius: float, n_tuples: int, r_min: float, oracle: str) -> tuple[float, float]:
    """The algorithm's own (ρ, δ) whose row-level guarantee is at most (ε, δ) (issue 10, finding 6).

    Calibrated through the registry (``dpviz.registry.calibrate``: the largest budget by bisection
    whose ``guarantee`` — for FriendlyCore the row-level statement with its group-privacy step —
    is within the target). diffprivlib's pure ε is returned as ρ = ε²/2, which ``_diffprivlib``
    turns back into ε = √(2ρ).
    """
    from dpviz.registry import Public, calibrate, get

    pub = Public(n_declared=n_declared, d=d, k=k, radius=radius)
    if algorithm.startswith("fc:"):
        spec = get("friendlycore")
        params = spec.make_params(preset=algorithm[3:], n_tuples=n_tuples, r_min=r_min, oracle=oracle)
    else:
        spec = get(algorithm)
        params = spec.make_params()
    budget = calibrate(spec, eps, delta, pub, params).budget
    if spec.budget_kind == "pure":
        return budget.eps**2 / 2.0, 0.0
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
    gen, _ = check_rng(rng)
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
