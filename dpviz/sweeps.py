"""The one sweep engine: registered algorithms, repeated, along a budget axis (and n).

:func:`sweep` runs each algorithm of :mod:`dpviz.registry` (and the non-private k-means++
reference) ``reps`` times at each value of the budget axis:

* ``axis="epsilon"`` (the default): each value is a **row-level** target (ε, δ); every algorithm
  is calibrated to it through its own spec (:func:`dpviz.registry.calibrate`: FriendlyCore
  through its group-privacy step, DP-Lloyd through the zCDP → DP conversion, pure-ε algorithms
  directly), so algorithms are compared at the same promise to one row, not at the same nominal
  ρ. The Compare page, the Budget page and the benches use this axis.
* ``axis="rho"``: each value is a nominal zCDP budget ρ handed to every algorithm as is (a
  pure-ε one at ε = √(2ρ): ε-DP implies ε²/2-zCDP, Bun & Steinke 2016, Prop. 1.4); approximate
  (ε, δ) algorithms have no ρ and get a "cannot meet" row. This is the paper's axis (Tsfadia et
  al. 2022, §6.2), kept to reproduce its figures.

:func:`sweep_n` adds an n axis (one sweep per size, the data regenerated or subsampled).

Algorithms are registry names (with parameters when they need them,
``"friendlycore[preset=paper]"``), or a mapping name → parameters; old stored names are read
through :func:`dpviz.registry.registry_name` (:func:`resolve`). The frame keeps the name the
caller used, so both FriendlyCore presets can be drawn side by side.

The non-private stage of a spec (e.g. FriendlyCore's tuple stage) is computed once per
(repetition, stage function, stage key) and reused at every budget and by every algorithm that
shares it.

Seeds: repetition r of algorithm a at budget b draws from a SeedSequence keyed on (seed, r, a, b),
and its stage from one keyed on (seed, r, stage key), so a run's numbers do not depend on which
other algorithms or budgets are in the sweep, nor on the order of the runs (the app runs a sweep
in chunks and gets the same frame as one call; :func:`sweep` with ``n_jobs > 1`` runs the
repetitions in parallel and gets the same frame as well).

Privacy
-------
A sweep is NOT a private release: it runs every algorithm many times on the same rows, and its
metrics (normalized k-means loss, labeling failure, center error) are exact functions of the
data. Each run is private on its own (its ``Result.guarantee``); the sweep is a simulation for
choosing an algorithm and a budget, not something to publish.

References
----------
Tsfadia et al. 2022, §6.2: the normalized k-means loss 1 − X/Y and the labeling failure.
"""

from __future__ import annotations

import dataclasses
import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpviz._validation import RngLike, check_data, check_rng, check_scalar, seed_sequence
from dpviz.clustering.baselines import reference_kmeans
from dpviz.geometry import nearest_center
from dpviz.metrics import center_error, labeling_failure, reference_recipe
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.registry import (
    AlgorithmSpec,
    Calibration,
    Public,
    algorithms,
    answered_by,
    plan,
    plan_at_rho,
    resolve_name,
)
from dpviz.registry import run as registry_run
from dpviz.result import Result

#: The budget axes: a row-level ε target, or a nominal zCDP ρ.
AXES: tuple[str, ...] = ("epsilon", "rho")


def columns(axis: str = "epsilon") -> tuple[str, ...]:
    """Columns of :attr:`Sweep.frame`, one row per (algorithm, budget, repetition); the budget
    column is named after the axis (``epsilon``: the row-level target; ``rho``: the nominal ρ)."""
    return ("algorithm", "title", "private", axis, "delta", "rep", "n", "budget_kind", "budget",
            "budget_delta", "guarantee_eps", "guarantee_delta", "loss", "labeling_failure",
            "center_error", "released", "structure_ok", "success", "fallback", "seconds",
            "stage_seconds", "failure", "answered_by")


#: Columns of a sweep along the row-level ε axis (the Compare and Budget pages').
COLUMNS: tuple[str, ...] = columns("epsilon")

#: What every number of a sweep is: the app and the figures label them with these.
SIMULATION = "simulation of the private algorithm (seeded runs, not a release)"
REFERENCE = "non-private reference"

Progress = Callable[[float, str], None]
Cancel = Callable[[], bool]
AlgorithmsArg = Sequence[str] | Mapping[str, Mapping[str, Any]] | None


def axis_of(frame: pd.DataFrame) -> str:
    """The budget column of a sweep frame: ``epsilon`` or ``rho``."""
    return "rho" if "rho" in frame.columns and "epsilon" not in frame.columns else "epsilon"


@dataclass(frozen=True)
class Sweep:
    """The runs of :func:`sweep` (or :func:`sweep_n`).

    Attributes
    ----------
    frame : DataFrame
        One row per (algorithm, budget, repetition), columns :func:`columns`: ``algorithm`` the
        name as the caller gave it, ``epsilon`` (or ``rho``) the axis value (``inf`` for the
        reference), ``delta`` the row-level δ, ``n`` the rows, ``budget`` the algorithm's own
        scalar (ρ for zCDP, ε for pure or approximate DP; NaN for the reference) with
        ``budget_delta`` and ``budget_kind`` (of that budget: a meta-algorithm reports its chosen
        algorithm's), ``guarantee_eps``/``guarantee_delta`` the row-level guarantee (≤ the target
        on the ε axis), ``loss`` the normalized k-means loss (1 when no centers were released),
        ``labeling_failure`` (NaN without labels), ``center_error`` (NaN without true centers),
        ``released`` (centers came out), ``structure_ok`` (the spec's private structure
        succeeded; None when the spec names none), ``success`` (``structure_ok`` where the spec
        names a structure, else ``released``), ``fallback`` (a fallback released the centers),
        ``seconds`` (the private run), ``stage_seconds`` (the shared non-private stage of that
        repetition), ``failure`` (a reason or None; "cannot meet" when the algorithm cannot be
        calibrated to the target, "refused" when it raised a ValueError on these inputs; both
        have a NaN loss), ``answered_by`` (who released the centers: the algorithm or its backup,
        ``dpviz.registry.answered_by``; None when the run did not happen).
    params : mapping
        The arguments of the sweep (enough to rerun it).
    complete : bool
        False when ``cancel`` stopped the sweep (the frame holds the finished runs).
    seconds : float
        Wall time.
    """

    frame: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    complete: bool = True
    seconds: float = 0.0

    def summary(self, metric: str = "loss", *,
                quantiles: tuple[float, float] = (0.1, 0.9)) -> pd.DataFrame:
        """Median, quantile band, success rate … per algorithm and budget (:func:`summarize`)."""
        return summarize(self.frame, metric=metric, quantiles=quantiles)


# ----------------------------------------------------------------------------- seeds


def _key(text: str) -> int:
    """A stable 32-bit key of a name (Python's hash() is salted per process)."""
    return zlib.crc32(text.encode())


def _child(root: np.random.SeedSequence, *path: int) -> np.random.Generator:
    seq = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *path))
    return np.random.default_rng(seq)


def _root_sequence(rng: RngLike) -> tuple[np.random.SeedSequence, int | None]:
    gen, seed = check_rng(rng, "sweep")
    if seed is not None:
        return seed_sequence(seed, "sweep"), seed
    return np.random.SeedSequence(int(gen.integers(2**63 - 1))), None


# ----------------------------------------------------------------------------- arguments


def resolve(name: str, values: Mapping[str, Any] | None = None) -> tuple[AlgorithmSpec, Any]:
    """(spec, params) of an algorithm name: a registry name, with parameters when it has them
    (``"friendlycore[preset=paper]"``); old names are read by :func:`dpviz.registry.resolve_name`."""
    return resolve_name(name, values)


def _resolve(algs: AlgorithmsArg, func: str, d: int | None = None) -> list[tuple[str, AlgorithmSpec, Any]]:
    """(name, spec, params) per requested algorithm; None means every registered one that serves d."""
    if algs is None:
        items: list[tuple[str, Mapping[str, Any]]] = [(s.name, {}) for s in algorithms(applicable_to=d)]
    elif isinstance(algs, Mapping):
        items = [(name, dict(p or {})) for name, p in algs.items()]
    else:
        items = [(name, {}) for name in algs]
    if not items:
        raise ValueError(f"The 'algorithms' parameter of {func} must name at least one of "
                         f"{[s.name for s in algorithms()]}.")
    return [(name, *resolve(name, values)) for name, values in items]


def _check_targets(values: Sequence[float], delta: float, axis: str,
                   func: str) -> tuple[list[float], float]:
    name = {"epsilon": "epsilons", "rho": "rhos"}[axis]
    out = [check_scalar(e, name, func, low=0.0, low_open=True, high_open=True) for e in values]
    if not out:
        raise ValueError(f"The '{name}' parameter of {func} must hold at least one value > 0.")
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, high_open=True)
    return sorted(set(out)), delta


# ----------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class _Truth:
    """What a run is measured against (all non-private)."""

    reference_cost: float
    labels: np.ndarray | None
    true_centers: np.ndarray | None


def _measure(X: np.ndarray, truth: _Truth, result: Result) -> dict[str, float]:
    if result.centers is None:  # ⊥: no better than no answer (the limit of 1 − X/Y as Y → ∞)
        return dict(loss=1.0, labeling_failure=math.nan, center_error=math.nan)
    C = np.asarray(result.centers, dtype=float)
    labels, d2 = nearest_center(X, C)
    y = float(d2.sum())
    return dict(
        loss=0.0 if y <= 0 else 1.0 - truth.reference_cost / y,
        labeling_failure=(labeling_failure(truth.labels, labels) if truth.labels is not None
                          else math.nan),
        center_error=(center_error(truth.true_centers, C) if truth.true_centers is not None
                      else math.nan),
    )


def _fallback(result: Result) -> tuple[bool, str | None]:
    """Whether a fallback step released the centers, and its reason."""
    step = result.find("fallback")
    used = step is not None and bool(step.data.get("used"))
    return used, (step.data.get("reason") if used else None)


# ----------------------------------------------------------------------------- rows


def _native(budget: Any) -> tuple[str, float, float]:
    """(kind, scalar, δ) of an algorithm's own budget: ("zcdp", ρ, δ), ("pure", ε, 0) or
    ("approx", ε, δ). A budget that wraps a calibration (a meta-algorithm such as ``auto``, whose
    budget is the chosen algorithm's) is read through it."""
    inner = getattr(budget, "calibration", None)
    if inner is not None and hasattr(inner, "budget"):
        return _native(inner.budget)
    if isinstance(budget, ZCDP):
        return "zcdp", budget.rho, budget.delta
    if isinstance(budget, ApproxDP):
        return ("pure" if budget.delta == 0 else "approx"), budget.eps, budget.delta
    return "none", math.nan, math.nan


@dataclass(frozen=True)
class _Unit:
    """One run: an algorithm (with its parameters and calibration) at one budget value."""

    name: str
    spec: AlgorithmSpec
    params: Any
    value: float
    cal: Calibration | None
    infeasible: str | None = None


def _row(unit: _Unit, axis: str, delta: float, rep: int, n: int, **values: Any) -> dict[str, Any]:
    spec, cal = unit.spec, unit.cal
    kind, budget, budget_delta = _native(None if cal is None else cal.budget)
    g = None if cal is None else cal.guarantee
    row = {"algorithm": unit.name, "title": spec.title, "private": spec.is_private,
           axis: unit.value if spec.is_private else math.inf,
           "delta": delta if spec.is_private else 0.0, "rep": rep, "n": n,
           "budget_kind": kind if cal is not None else spec.budget_kind, "budget": budget,
           "budget_delta": budget_delta,
           "guarantee_eps": math.nan if g is None else g.eps,
           "guarantee_delta": math.nan if g is None else g.delta,
           "loss": math.nan, "labeling_failure": math.nan, "center_error": math.nan,
           "released": False, "structure_ok": None, "success": False, "fallback": False,
           "seconds": 0.0, "stage_seconds": 0.0, "failure": None, "answered_by": None}
    row.update(values)
    return row


def calibrated(spec: AlgorithmSpec, eps: float, delta: float, pub: Public, params: Any) -> Calibration:
    """The run's budget plan, :func:`dpviz.registry.plan` (its calibration is memoized: it reads
    public inputs only, and its bisection costs more than a small run; the app calls a sweep once
    per chunk). The ε axis states the plan's guarantee, like every other surface."""
    return plan(spec, eps, delta, pub, params)


def at_rho(spec: AlgorithmSpec, rho: float, delta: float, pub: Public, params: Any) -> Calibration:
    """The nominal budget ρ for ``spec`` (``axis="rho"``): the registry's one ρ rule and its plan
    at that budget (:func:`dpviz.registry.plan_at_rho`, δ′ = δ; an (ε, δ) algorithm has no ρ:
    ValueError)."""
    return plan_at_rho(spec, rho, delta, pub, params)


def _units(specs: list[tuple[str, AlgorithmSpec, Any]], values: list[float], delta: float,
           pub: Public, axis: str) -> list[_Unit]:
    """Every (algorithm, budget) of one repetition, calibrated once (the reference runs once)."""
    budget_for = calibrated if axis == "epsilon" else at_rho
    units = []
    for name, spec, params in specs:
        if not spec.is_private:
            units.append(_Unit(name, spec, params, math.inf, calibrated(spec, 1.0, delta, pub, params)))
            continue
        for v in values:
            try:
                units.append(_Unit(name, spec, params, v, budget_for(spec, v, delta, pub, params)))
            except ValueError as exc:  # a target the algorithm cannot meet: a row, not a crash
                units.append(_Unit(name, spec, params, v, None, infeasible=str(exc)))
    return units


def _run(X: np.ndarray, k: int, unit: _Unit, pub: Public, stage: Any, rng: np.random.Generator,
         delta: float) -> Result:
    """One unit's run through :func:`dpviz.registry.run`, like every other run (issue 45): with the
    unit's plan (``budget_plan``: no second calibration) and its cached stage; ``dpviz.run``
    re-accounts the ledger against the plan (over it fails loudly) and states it on
    ``Result.statement``. A reference has no budget to hand over: it is planned by the run."""
    spec, cal = unit.spec, unit.cal
    fields = {f.name: getattr(unit.params, f.name) for f in dataclasses.fields(unit.params)}
    given = cal if spec.is_private else None
    target = (cal.target or cal.guarantee) if given is not None else ApproxDP(1.0, delta)
    return registry_run(spec.name, X, k, epsilon=target.eps, delta=target.delta, radius=pub.radius,
                        rng=rng, n_declared=pub.n_declared, stage=stage, budget_plan=given, **fields)


def _run_unit(X: np.ndarray, k: int, unit: _Unit, rep: int, pub: Public, truth: _Truth,
              root: np.random.SeedSequence, stages: dict, delta: float, axis: str) -> dict[str, Any]:
    spec, params, n = unit.spec, unit.params, X.shape[0]
    if unit.infeasible is not None:
        return _row(unit, axis, delta, rep, n, failure=f"cannot meet the target: {unit.infeasible}")
    stage, stage_seconds = None, 0.0
    if spec.stage is not None:
        skey = (spec.stage, spec.stage_key(params))
        if skey not in stages:
            t0 = time.perf_counter()
            srng = _child(root, rep, _key(f"stage:{spec.stage.__module__}.{spec.stage.__qualname__}"),
                          _key(repr(spec.stage_key(params))))
            value = spec.stage(X, k, radius=pub.radius, rng=srng, pub=pub, params=params)
            stages[skey] = (value, time.perf_counter() - t0)
        stage, stage_seconds = stages[skey]
    rng = _child(root, rep, _key(unit.name), _key(repr(unit.value)))
    t0 = time.perf_counter()
    try:
        result = _run(X, k, unit, pub, stage, rng, delta)
    except ValueError as exc:  # inputs this algorithm refuses (e.g. d < k): a row, not a crash
        return _row(unit, axis, delta, rep, n, seconds=time.perf_counter() - t0,
                    stage_seconds=stage_seconds, failure=f"refused: {exc}")
    seconds = time.perf_counter() - t0
    structure = spec.structure_ok(result)
    released = result.centers is not None
    used, reason = _fallback(result)
    return _row(unit, axis, delta, rep, n, **_measure(X, truth, result), released=released,
                structure_ok=structure, success=released if structure is None else bool(structure),
                fallback=used, seconds=seconds, stage_seconds=stage_seconds,
                failure=result.failure or reason, answered_by=answered_by(result, spec.name).who)


# ----------------------------------------------------------------------------- the sweep


def sweep(
    X: Any,
    k: int,
    *,
    algorithms: AlgorithmsArg = None,
    epsilons: Sequence[float] = (),
    rhos: Sequence[float] = (),
    delta: float,
    radius: float | None = None,
    n_declared: int | None = None,
    reps: int,
    rng: RngLike = None,
    labels: np.ndarray | None = None,
    true_centers: np.ndarray | None = None,
    reference_cost: float | None = None,
    only_reps: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    n_jobs: int = 1,
) -> Sweep:
    """Run registered algorithms along a budget axis, ``reps`` times each.

    Parameters
    ----------
    X : (n, d) array or Dataset
        A Dataset supplies ``radius``, ``labels`` and ``true_centers`` when they are not given.
    k : int
    algorithms : sequence of names, or mapping name -> parameters, optional
        Names :func:`resolve` reads (registry names, with parameters when they have them); a
        mapping gives each its parameters. None: every registered algorithm, the non-private
        ``"kmeans++"`` reference included (it runs once per repetition, at ``inf``).
    epsilons : sequence of float
        Row-level ε targets (each > 0); every algorithm is calibrated to (ε, ``delta``).
    rhos : sequence of float
        Instead of ``epsilons``: nominal zCDP budgets ρ (:func:`at_rho`); the paper's axis.
    delta : float
        Row-level δ in [0, 1) (on the ρ axis, the δ of every zCDP budget).
    radius : float
        Λ, the declared ℓ2 bound of the rows (public).
    n_declared : int, optional
        The public dataset size the algorithms read; None: len(X) (a study tool on the
        caller's own data).
    reps : int
        Repetitions; repetition r draws from seeds keyed on (seed, r, algorithm, budget).
    rng : int, Generator or None
        An int makes the sweep reproducible (and chunkable with ``only_reps``).
    labels : (n,) array, optional
        True labels: adds the labeling failure (best matching of nearest-center labels).
    true_centers : (k', d) array, optional
        Adds the center error (mean distance to matched true centers).
    reference_cost : float, optional
        X of the normalized loss; computed (:func:`dpviz.metrics.reference_kmeans`) when None.
    only_reps : sequence of int, optional
        Run only these repetitions (of ``range(reps)``): the app runs a sweep in chunks.
    progress : callable(fraction, message), optional
        Called after each run.
    cancel : callable() -> bool, optional
        Checked before each run; True stops the sweep (``complete=False``, finished runs kept).
    n_jobs : int
        Repetitions in parallel with joblib when ≠ 1 (the frame does not depend on it).

    Returns
    -------
    Sweep

    Raises
    ------
    ValueError
        For an unknown algorithm or parameter, or an invalid argument. A target that one
        algorithm cannot meet, or inputs it refuses (its ValueError), is a row with ``failure``
        set, not an error; any other exception propagates (a bug).

    Privacy
    -------
    Not a private release (a simulation: many runs on the same rows, exact metrics). Each run is
    private on its own at the row-level guarantee in its row.
    """
    t_start = time.perf_counter()
    func = "sweep"
    data = X
    Xa = check_data(getattr(data, "X", data), func, allow_empty=False)
    radius = getattr(data, "radius", None) if radius is None else radius
    if radius is None:
        raise ValueError("sweep needs the public radius Λ: pass radius=... (or a Dataset with a "
                         "declared radius).")
    labels = getattr(data, "labels", None) if labels is None else labels
    true_centers = getattr(data, "true_centers", None) if true_centers is None else true_centers
    if bool(len(epsilons)) == bool(len(rhos)):
        raise ValueError(f"{func} takes exactly one budget axis: 'epsilons' (row-level targets) or "
                         "'rhos' (nominal zCDP budgets).")
    axis = "epsilon" if len(epsilons) else "rho"
    k = check_scalar(k, "k", func, low=1, high=Xa.shape[0], integer=True)
    specs = _resolve(algorithms, func, int(Xa.shape[1]))
    values, delta = _check_targets(epsilons if axis == "epsilon" else rhos, delta, axis, func)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    n_declared = Xa.shape[0] if n_declared is None else n_declared
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    reps = check_scalar(reps, "reps", func, low=1, integer=True)
    n_jobs = check_scalar(n_jobs, "n_jobs", func, low=-1, integer=True)
    todo = list(range(reps)) if only_reps is None else sorted(set(only_reps))
    if any(not 0 <= r < reps for r in todo):
        raise ValueError(f"The 'only_reps' parameter of {func} must hold repetitions in "
                         f"[0, {reps}). Got {list(only_reps or [])} instead.")
    root, seed = _root_sequence(rng)
    if labels is not None:
        labels = np.asarray(labels).ravel()
        if labels.shape[0] != Xa.shape[0]:
            raise ValueError(f"The 'labels' parameter of {func} must have one label per row "
                             f"({Xa.shape[0]}). Got {labels.shape[0]} instead.")
    recipe = "given by the caller"
    if reference_cost is None:
        reference_cost = reference_kmeans(Xa, k, rng=_child(root, _key("reference")))[1]
        recipe = reference_recipe(Xa.shape[0], k)
    truth = _Truth(float(reference_cost), labels,
                   None if true_centers is None else np.asarray(true_centers, dtype=float))
    pub = Public(n_declared=n_declared, d=Xa.shape[1], k=k, radius=radius)
    units = _units(specs, values, delta, pub, axis)
    params = {"k": k, "algorithms": {name: p for name, _, p in specs}, f"{axis}s": tuple(values),
              "delta": delta, "radius": radius, "n_declared": n_declared, "reps": reps,
              "seed": seed, "only_reps": tuple(todo), "reference_cost": float(reference_cost),
              "reference_recipe": recipe}
    args = (Xa, k, units, pub, truth, root, delta, axis)
    if n_jobs != 1 and len(todo) > 1:
        rows, stopped = _parallel(args, todo, n_jobs, progress, cancel)
    else:
        rows, stopped = _sequential(args, todo, reps, progress, cancel)
    frame = pd.DataFrame(rows, columns=list(columns(axis)))
    return Sweep(frame, params, not stopped, time.perf_counter() - t_start)


def _repetition(args: tuple, rep: int, cancel: Cancel | None = None,
                done: Callable[[_Unit], None] | None = None) -> tuple[list[dict], bool]:
    """The runs of repetition ``rep`` (its stages shared across budgets); (rows, stopped)."""
    Xa, k, units, pub, truth, root, delta, axis = args
    stages: dict = {}
    rows: list[dict] = []
    for unit in units:
        if cancel is not None and cancel():
            return rows, True
        rows.append(_run_unit(Xa, k, unit, rep, pub, truth, root, stages, delta, axis))
        if done is not None:
            done(unit)
    return rows, False


def _sequential(args: tuple, todo: list[int], reps: int, progress: Progress | None,
                cancel: Cancel | None) -> tuple[list[dict], bool]:
    rows: list[dict] = []
    total, finished = len(args[2]) * len(todo), 0
    for rep in todo:
        def done(unit: _Unit, rep: int = rep) -> None:
            nonlocal finished
            finished += 1
            if progress is not None:
                at = "" if not unit.spec.is_private else f" at {_SYMBOL[args[7]]} = {unit.value:g}"
                progress(finished / total, f"repetition {rep + 1} of {reps}: {unit.spec.title}{at}")

        rep_rows, stopped = _repetition(args, rep, cancel, done)
        rows.extend(rep_rows)
        if stopped:
            return rows, True
    return rows, False


def _parallel(args: tuple, todo: list[int], n_jobs: int, progress: Progress | None,
              cancel: Cancel | None) -> tuple[list[dict], bool]:
    import warnings

    from joblib import Parallel, delayed

    out = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
        delayed(_repetition)(args, rep) for rep in todo)
    rows: list[dict] = []
    stopped = False
    try:
        for i, (rep_rows, _) in enumerate(out, start=1):
            rows.extend(rep_rows)
            if progress is not None:
                progress(i / len(todo), f"repetition {i} of {len(todo)} done")
            if cancel is not None and cancel() and i < len(todo):
                stopped = True
                break
    finally:
        with warnings.catch_warnings():  # joblib warns that it cancelled pending repetitions
            warnings.simplefilter("ignore", UserWarning)
            out.close()
    rows.sort(key=lambda r: r["rep"])
    return rows, stopped


_SYMBOL = {"epsilon": "ε", "rho": "ρ"}


def sweep_n(make_data: Callable[..., Any], ns: Sequence[int], k: int, *, rng: RngLike = None,
            progress: Progress | None = None, cancel: Cancel | None = None, **kwargs: Any) -> Sweep:
    """The n axis: for each n, ``make_data(n, rng=child)`` (a Dataset or an array) and one
    :func:`sweep` on it (``kwargs`` are :func:`sweep`'s; n_declared is each n). The frame's
    ``n`` column tells the sizes apart.

    Privacy
    -------
    As :func:`sweep`: a study tool, not a private release.
    """
    ns = [check_scalar(n, "ns", "sweep_n", low=1, integer=True) for n in ns]
    if not ns:
        raise ValueError("The 'ns' parameter of sweep_n must hold at least one size n.")
    gen, seed = check_rng(rng, "sweep_n")
    children = gen.spawn(2 * len(ns))
    frames, complete = [], True
    for i, n in enumerate(ns):
        if cancel is not None and cancel():
            complete = False
            break

        def sub(f: float, msg: str, i: int = i, n: int = n) -> None:
            if progress is not None:
                progress((i + f) / len(ns), f"n = {n:,}: {msg}")

        sw = sweep(make_data(n, rng=children[2 * i]), k, rng=children[2 * i + 1], progress=sub,
                   cancel=cancel, **kwargs)
        frames.append(sw.frame)
        if not sw.complete:
            complete = False
            break
    axis = "epsilon" if kwargs.get("epsilons") else "rho"
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(columns(axis)))
    return Sweep(frame, {**{k_: v for k_, v in kwargs.items() if k_ != "algorithms"}, "k": k,
                         "ns": tuple(ns), "seed": seed}, complete)


# ----------------------------------------------------------------------------- summaries


def quantile_names(quantiles: tuple[float, float]) -> tuple[str, str]:
    """Column names of a quantile band: (0.1, 0.9) → ("q10", "q90")."""
    return tuple(f"q{100 * q:g}" for q in quantiles)  # type: ignore[return-value]


#: Per-group columns a summary carries over from the frame (the first value of the group).
CARRIED = ("title", "private", "delta", "budget_kind", "budget", "budget_delta", "guarantee_eps",
           "guarantee_delta")


def summarize(frame: pd.DataFrame, *, by: Sequence[str] | None = None, metric: str = "loss",
              quantiles: tuple[float, float] = (0.1, 0.9)) -> pd.DataFrame:
    """Per group (default: algorithm × budget axis): median and quantile band of ``metric``, the
    success rate, the share of runs that released centers, the share whose structure succeeded
    (NaN if the spec names none), the median seconds and the number of runs. NaN metric values
    are left out of the quantiles; ``runs`` counts all."""
    lo, hi = quantiles
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"The 'quantiles' parameter must be (lo, hi) with 0 ≤ lo < hi ≤ 1. "
                         f"Got {quantiles!r} instead.")
    keys = list(by) if by is not None else ["algorithm", axis_of(frame)]
    qlo, qhi = quantile_names(quantiles)
    carried = [c for c in CARRIED if c in frame.columns and c not in keys]
    cols = [*keys, *carried, "median", qlo, qhi, "success_rate", "released_share",
            "structure_share", "seconds", "runs"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    f = frame.assign(
        _structure=frame["structure_ok"].map(
            lambda v: math.nan if v is None or (isinstance(v, float) and math.isnan(v)) else float(v))
        if "structure_ok" in frame else math.nan,
        _released=frame["released"].astype(float) if "released" in frame else math.nan)
    g = f.groupby(keys, sort=False, dropna=False)
    out = g[carried].first() if carried else pd.DataFrame(index=g.size().index)
    out = out.assign(
        median=g[metric].median(), **{qlo: g[metric].quantile(lo), qhi: g[metric].quantile(hi)},
        success_rate=g["success"].mean().astype(float), released_share=g["_released"].mean(),
        structure_share=g["_structure"].mean(), seconds=g["seconds"].median(),
        runs=g[metric].size(),
    ).reset_index()
    return out[cols]


def ranking(frame: pd.DataFrame, *, metric: str = "loss", at: float | None = None) -> pd.DataFrame:
    """The private algorithms of an ε sweep ranked by their median ``metric`` (lower is better):
    one row per algorithm, its median at each ε as a column ``"ε = <v>"``, ranked at ``at`` (the
    largest ε of the sweep at most 10 when None; a tie is broken by the next smaller ε), with the
    non-private reference's median as a last row (rank "—"). A table to answer "which method,
    at which ε" at a glance."""
    summ = summarize(frame, metric=metric)
    if summ.empty:
        return pd.DataFrame(columns=["rank", "method"])
    priv = summ[summ["private"].astype(bool)]
    eps = sorted(float(e) for e in priv["epsilon"].unique())
    if at is None:
        sound = [e for e in eps if e <= 10.0]
        at = sound[-1] if sound else eps[0]
    wide = priv.pivot_table(index="algorithm", columns="epsilon", values="median", sort=False)
    order = sorted(wide.index, key=lambda a: tuple(
        (wide.loc[a].get(e, math.inf) if np.isfinite(wide.loc[a].get(e, math.inf)) else math.inf)
        for e in [at, *sorted((x for x in eps if x < at), reverse=True)]))
    titles = priv.drop_duplicates("algorithm").set_index("algorithm")["title"]
    rows = [{"rank": str(i + 1), "method": titles[a],
             **{f"ε = {e:g}": wide.loc[a].get(e, math.nan) for e in eps}} for i, a in enumerate(order)]
    ref = summ[~summ["private"].astype(bool)]
    for _, r in ref.iterrows():
        title = str(r["title"])
        rows.append({"rank": "—", "method": title if "non-private" in title else f"{title} ({REFERENCE})",
                     **{f"ε = {e:g}": float(r["median"]) for e in eps}})
    out = pd.DataFrame(rows)
    out.attrs["ranked_at"] = at
    return out
