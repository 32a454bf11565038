"""Every registered algorithm on the same data at the same **row-level** (ε, δ): a tidy frame.

:func:`compare_sweep` runs each algorithm of :mod:`dpviz.registry` (and the non-private
k-means++ reference) ``reps`` times at each row-level target (ε, δ). Each algorithm is
calibrated to the target through its own spec (:func:`dpviz.registry.calibrate`: FriendlyCore
through its group-privacy step, DP-Lloyd through the zCDP → DP conversion, pure-ε algorithms
directly), so the curves compare algorithms at the same guarantee for one row of the user's
data, not at the same nominal ρ. The non-private stage of a spec (e.g. FriendlyCore's tuple
stage) is computed once per (repetition, stage function, stage key) and reused at every ε.

Seeds: repetition r of algorithm a at ε draws from a SeedSequence keyed on (seed, r, a, ε), and
its stage from one keyed on (seed, r, stage key), so a run's numbers do not depend on which other
algorithms or ε values are in the sweep, nor on the order of the runs (the app runs a sweep in
chunks and gets the same frame as one call).

Privacy
-------
A comparison is NOT a private release: it runs every algorithm many times on the same rows, and
its metrics (normalized k-means loss, labeling failure, center error) are exact functions of the
data. Each run is private on its own (its ``Result.guarantee``); the sweep is a simulation for
choosing an algorithm and a budget, not something to publish.

References
----------
Tsfadia et al. 2022, §6.2: the normalized k-means loss 1 − X/Y and the labeling failure.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpviz._validation import RngLike, check_data, check_rng, check_scalar, seed_sequence
from dpviz.geometry import nearest_center
from dpviz.metrics import center_error, labeling_failure, reference_kmeans_cost
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.registry import AlgorithmSpec, Calibration, Public, algorithms, calibrate, get
from dpviz.result import Result

#: Columns of :attr:`Comparison.frame`, one row per (algorithm, ε, repetition).
COLUMNS: tuple[str, ...] = (
    "algorithm", "title", "private", "epsilon", "delta", "rep", "budget_kind", "budget",
    "budget_delta", "guarantee_eps", "guarantee_delta", "loss", "labeling_failure", "center_error",
    "released", "structure_ok", "seconds", "stage_seconds", "failure",
)

#: What every number of a comparison is: the app and the figures label them with these.
SIMULATION = "private release (simulation)"
REFERENCE = "non-private reference"

Progress = Callable[[float, str], None]
Cancel = Callable[[], bool]
AlgorithmsArg = Sequence[str] | Mapping[str, Mapping[str, Any]] | None


@dataclass(frozen=True)
class Comparison:
    """The runs of :func:`compare_sweep`.

    Attributes
    ----------
    frame : DataFrame
        One row per (algorithm, ε, repetition), columns :data:`COLUMNS`: ``epsilon``/``delta``
        the row-level target (``inf``/0 for the reference), ``budget`` the algorithm's own scalar
        (ρ for zCDP, ε for pure or approximate DP; NaN for the reference) with ``budget_delta``
        and ``budget_kind`` (of that budget: a meta-algorithm reports its chosen algorithm's),
        ``guarantee_eps``/``guarantee_delta`` the calibrated row-level guarantee (≤ the target),
        ``loss`` the normalized k-means loss (1 when no centers were released), ``labeling_failure``
        (NaN without labels), ``center_error`` (NaN without true centers), ``released`` (centers
        came out), ``structure_ok`` (the spec's private structure succeeded; None when the spec
        names none), ``seconds`` (the private run), ``stage_seconds`` (the shared non-private
        stage of that repetition, counted once per run that used it), ``failure`` (a reason or
        None; "cannot meet" when the algorithm cannot be calibrated to the target, "refused" when
        it raised a ValueError on these inputs; both have a NaN loss).
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
        return summarize(self.frame, metric=metric, quantiles=quantiles)


# ----------------------------------------------------------------------------- seeds


def _key(text: str) -> int:
    """A stable 32-bit key of a name (Python's hash() is salted per process)."""
    return zlib.crc32(text.encode())


def _child(root: np.random.SeedSequence, *path: int) -> np.random.Generator:
    seq = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *path))
    return np.random.default_rng(seq)


def _root_sequence(rng: RngLike) -> tuple[np.random.SeedSequence, int | None]:
    gen, seed = check_rng(rng, "compare")
    if seed is not None:
        return seed_sequence(seed, "compare"), seed
    return np.random.SeedSequence(int(gen.integers(2**63 - 1))), None


# ----------------------------------------------------------------------------- arguments


def _resolve(algs: AlgorithmsArg, func: str) -> list[tuple[AlgorithmSpec, Any]]:
    """(spec, params) per requested algorithm; None means every registered one."""
    if algs is None:
        items: list[tuple[str, Mapping[str, Any]]] = [(s.name, {}) for s in algorithms()]
    elif isinstance(algs, Mapping):
        items = [(name, dict(p or {})) for name, p in algs.items()]
    else:
        items = [(name, {}) for name in algs]
    if not items:
        raise ValueError(f"The 'algorithms' parameter of {func} must name at least one of "
                         f"{[s.name for s in algorithms()]}.")
    out = []
    for name, values in items:
        spec = get(name)
        out.append((spec, spec.make_params(**values)))
    return out


def _check_targets(epsilons: Sequence[float], delta: float, func: str) -> tuple[list[float], float]:
    eps = [check_scalar(e, "epsilons", func, low=0.0, low_open=True, high_open=True) for e in epsilons]
    if not eps:
        raise ValueError(f"The 'epsilons' parameter of {func} must hold at least one ε > 0.")
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, high_open=True)
    return sorted(set(eps)), delta


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


def _row(spec: AlgorithmSpec, eps: float, delta: float, rep: int, cal: Calibration | None,
         **values: Any) -> dict[str, Any]:
    kind, budget, budget_delta = _native(None if cal is None else cal.budget)
    g = None if cal is None else cal.guarantee
    row = dict(algorithm=spec.name, title=spec.title, private=spec.is_private,
               epsilon=eps if spec.is_private else math.inf, delta=delta if spec.is_private else 0.0,
               rep=rep, budget_kind=kind if cal is not None else spec.budget_kind, budget=budget,
               budget_delta=budget_delta,
               guarantee_eps=math.nan if g is None else g.eps,
               guarantee_delta=math.nan if g is None else g.delta,
               loss=math.nan, labeling_failure=math.nan, center_error=math.nan, released=False,
               structure_ok=None, seconds=0.0, stage_seconds=0.0, failure=None)
    row.update(values)
    return row


@dataclass(frozen=True)
class _Unit:
    """One run: an algorithm (with its parameters and calibration) at one target ε."""

    spec: AlgorithmSpec
    params: Any
    eps: float
    cal: Calibration | None
    infeasible: str | None = None


def calibrated(spec: AlgorithmSpec, eps: float, delta: float, pub: Public, params: Any) -> Calibration:
    """:func:`dpviz.registry.calibrate` (memoized there: it reads public inputs only, and its
    bisection costs more than a small run; the app calls a sweep once per chunk)."""
    return calibrate(spec, eps, delta, pub, params)


def _units(specs: list[tuple[AlgorithmSpec, Any]], epsilons: list[float], delta: float,
           pub: Public) -> list[_Unit]:
    """Every (algorithm, ε) of one repetition, calibrated once (the reference runs once)."""
    units = []
    for spec, params in specs:
        if not spec.is_private:
            units.append(_Unit(spec, params, math.inf, calibrated(spec, 1.0, delta, pub, params)))
            continue
        for eps in epsilons:
            try:
                units.append(_Unit(spec, params, eps, calibrated(spec, eps, delta, pub, params)))
            except ValueError as exc:  # a target the algorithm cannot meet: a row, not a crash
                units.append(_Unit(spec, params, eps, None, infeasible=str(exc)))
    return units


def _run_unit(X: np.ndarray, k: int, unit: _Unit, rep: int, pub: Public, truth: _Truth,
              root: np.random.SeedSequence, stages: dict, delta: float) -> dict[str, Any]:
    spec, params, eps = unit.spec, unit.params, unit.eps
    if unit.infeasible is not None:
        return _row(spec, eps, delta, rep, None, failure=f"cannot meet the target: {unit.infeasible}")
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
    rng = _child(root, rep, _key(spec.name), _key(repr(eps)))
    t0 = time.perf_counter()
    try:
        result = spec.private(X, k, unit.cal.budget, radius=pub.radius, rng=rng, pub=pub,
                              params=params, stage=stage)
    except ValueError as exc:  # inputs this algorithm refuses (e.g. d < k): a row, not a crash
        return _row(spec, eps, delta, rep, unit.cal, seconds=time.perf_counter() - t0,
                    stage_seconds=stage_seconds, failure=f"refused: {exc}")
    seconds = time.perf_counter() - t0
    return _row(spec, eps, delta, rep, unit.cal, **_measure(X, truth, result),
                released=result.centers is not None, structure_ok=spec.structure_ok(result),
                seconds=seconds, stage_seconds=stage_seconds, failure=result.failure)


# ----------------------------------------------------------------------------- the sweep


def compare_sweep(
    X: Any,
    k: int,
    *,
    algorithms: AlgorithmsArg = None,
    epsilons: Sequence[float],
    delta: float,
    radius: float,
    n_declared: int,
    reps: int,
    rng: RngLike = None,
    labels: np.ndarray | None = None,
    true_centers: np.ndarray | None = None,
    reference_cost: float | None = None,
    only_reps: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Comparison:
    """Run registered algorithms at the same row-level (ε, δ) targets, ``reps`` times each.

    Parameters
    ----------
    X : (n, d) array
    k : int
    algorithms : sequence of names, or mapping name -> parameters, optional
        Registered names (:func:`dpviz.algorithms`); a mapping gives each its parameters. None:
        every registered algorithm, the non-private ``"kmeans++"`` reference included (it runs
        once per repetition, with ``epsilon = inf``).
    epsilons : sequence of float
        Row-level ε targets (each > 0); every algorithm is calibrated to (ε, ``delta``).
    delta : float
        Row-level δ in [0, 1).
    radius : float
        Λ, the declared ℓ2 bound of the rows (public).
    n_declared : int
        The public dataset size the algorithms read (never ``len(X)``).
    reps : int
        Repetitions; repetition r draws from seeds keyed on (seed, r, algorithm, ε).
    rng : int, Generator or None
        An int makes the sweep reproducible (and chunkable with ``only_reps``).
    labels : (n,) array, optional
        True labels: adds the labeling failure (best matching of nearest-center labels).
    true_centers : (k', d) array, optional
        Adds the center error (mean distance to matched true centers).
    reference_cost : float, optional
        X of the normalized loss; computed (non-private k-means++ on X) when None.
    only_reps : sequence of int, optional
        Run only these repetitions (of ``range(reps)``): the app runs a sweep in chunks.
    progress : callable(fraction, message), optional
        Called after each run.
    cancel : callable() -> bool, optional
        Checked before each run; True stops the sweep (``complete=False``, finished runs kept).

    Returns
    -------
    Comparison

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
    func = "compare_sweep"
    Xa = check_data(X, func, allow_empty=False)
    k = check_scalar(k, "k", func, low=1, high=Xa.shape[0], integer=True)
    specs = _resolve(algorithms, func)
    epsilons, delta = _check_targets(epsilons, delta, func)
    radius = check_scalar(radius, "radius", func, low=0.0, low_open=True, high_open=True)
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    reps = check_scalar(reps, "reps", func, low=1, integer=True)
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
    if reference_cost is None:
        reference_cost = reference_kmeans_cost(Xa, k, rng=_child(root, _key("reference")))
    truth = _Truth(float(reference_cost), labels,
                   None if true_centers is None else np.asarray(true_centers, dtype=float))
    pub = Public(n_declared=n_declared, d=Xa.shape[1], k=k, radius=radius)
    units = _units(specs, epsilons, delta, pub)
    total = len(units) * len(todo)
    rows: list[dict[str, Any]] = []
    stopped = False
    for rep in todo:
        stages: dict = {}  # this repetition's non-private stages, shared across ε
        for unit in units:
            if cancel is not None and cancel():
                stopped = True
                break
            rows.append(_run_unit(Xa, k, unit, rep, pub, truth, root, stages, delta))
            if progress is not None:
                at = "" if not unit.spec.is_private else f" at ε = {unit.eps:g}"
                progress(len(rows) / total, f"repetition {rep + 1} of {reps}: {unit.spec.title}{at}")
        if stopped:
            break
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    params = dict(k=k, algorithms={s.name: p for s, p in specs}, epsilons=tuple(epsilons),
                  delta=delta, radius=radius, n_declared=n_declared, reps=reps, seed=seed,
                  only_reps=tuple(todo), reference_cost=float(reference_cost))
    return Comparison(frame, params, not stopped, time.perf_counter() - t_start)


# ----------------------------------------------------------------------------- summaries


def quantile_names(quantiles: tuple[float, float]) -> tuple[str, str]:
    """Column names of a quantile band: (0.1, 0.9) → ("q10", "q90")."""
    return tuple(f"q{100 * q:g}" for q in quantiles)  # type: ignore[return-value]


SUMMARY_COLUMNS = ("algorithm", "title", "private", "epsilon", "delta", "budget_kind", "budget",
                   "budget_delta", "guarantee_eps", "guarantee_delta", "median")


def summarize(frame: pd.DataFrame, *, metric: str = "loss",
              quantiles: tuple[float, float] = (0.1, 0.9)) -> pd.DataFrame:
    """Per (algorithm, ε): median and quantile band of ``metric``, the share of runs that
    released centers, the share whose structure succeeded (NaN if the spec names none), the
    median seconds and the number of runs. NaN metric values are left out of the quantiles."""
    lo, hi = quantiles
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"The 'quantiles' parameter must be (lo, hi) with 0 ≤ lo < hi ≤ 1. "
                         f"Got {quantiles!r} instead.")
    qlo, qhi = quantile_names(quantiles)
    cols = [*SUMMARY_COLUMNS, qlo, qhi, "released_share", "structure_share", "seconds", "runs"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    f = frame.assign(_structure=frame["structure_ok"].map(
        lambda v: math.nan if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)))
    keys = ["algorithm", "epsilon"]
    g = f.groupby(keys, sort=False, dropna=False)
    first = g[["title", "private", "delta", "budget_kind", "budget", "budget_delta", "guarantee_eps",
               "guarantee_delta"]].first()
    out = first.assign(
        median=g[metric].median(), **{qlo: g[metric].quantile(lo), qhi: g[metric].quantile(hi)},
        released_share=g["released"].mean().astype(float), structure_share=g["_structure"].mean(),
        seconds=g["seconds"].median(), runs=g[metric].size(),
    ).reset_index()
    return out[cols]
