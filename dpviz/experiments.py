"""Repeated private runs: sweeps over the budget ρ (and n), and noise redraws.

The FC pipeline has a ρ-independent, non-private stage (split the rows into t pieces and cluster
each: ``dpviz.clustering.tuples.tuple_stage``) and a cheap private stage (``fc_private_stage``).
A sweep computes the tuple stage once per repetition and reuses it for every ρ and every FC
preset, which is what makes a budget curve affordable (DESIGN.md, "Two stages"). Every
repetition draws from its own child Generator (``rng.spawn``), so a sweep is reproducible from
one seed, in any order, with or without joblib.

All metrics are non-private diagnostics: the normalized k-means loss 1 − X/Y (X = cost of
non-private k-means++ on all data, Y = cost of the released centers; Tsfadia et al. 2022, §6.2),
the mean distance to matched reference centers, and whether FriendlyCore itself succeeded.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpviz._validation import RngLike, check_data, check_delta, check_radius, check_rng, check_scalar
from dpviz.result import Result

#: The sweep's own names, kept so old links and scripts work: "fc:<preset>" runs FriendlyCore
#: clustering with that budget-split preset on the cached tuples; "nonprivate" is the ε = ∞
#: reference (one run per repetition). Every other registered algorithm (dpviz.registry) with a
#: zCDP or pure-ε budget runs under its registry name (:func:`algorithm_names`).
LEGACY_ALGORITHMS: tuple[str, ...] = ("fc:practical", "fc:paper", "dp_lloyd", "diffprivlib", "nonprivate")


def algorithm_names() -> tuple[str, ...]:
    """The names :func:`run_sweep` accepts: the legacy names, then the registered algorithms
    whose budget a zCDP ρ determines (zCDP, pure ε at ε = √(2ρ), or the non-private reference).

    Approximate-DP algorithms have no ρ: compare them at a row-level (ε, δ) with
    :func:`dpviz.compare.compare_sweep`.
    """
    from dpviz.registry import algorithms

    return LEGACY_ALGORITHMS + tuple(s.name for s in algorithms()
                                     if s.budget_kind != "approx" and s.name not in LEGACY_ALGORITHMS)

FRAME_COLUMNS: tuple[str, ...] = (
    "algorithm", "rho", "rep", "loss", "success", "center_error", "seconds", "n", "fallback",
    "failure", "stage_seconds",
)

Progress = Callable[[float, str], None]
ShouldStop = Callable[[], bool]


# ---- thin adapters (module level so tests can count calls with monkeypatch) ---------------------

def _tuple_stage(X: np.ndarray, k: int, *, n_tuples: int, oracle: str, radius: float,
                 rng: np.random.Generator) -> Any:
    """The non-private, ρ-independent stage: ``dpviz.clustering.tuples.tuple_stage`` (the one
    sample-and-aggregate entry point: rows outside the Λ-ball dropped, method from no declared
    size, i.e. a fixed public choice)."""
    from dpviz.clustering.tuples import tuple_stage

    return tuple_stage(X, k, n_tuples=n_tuples, oracle=oracle, radius=radius, rng=rng)


def _fc_stage(X: np.ndarray, stage: Any, *, rho: float, delta: float, radius: float,
              r_min: float, preset: str, rng: np.random.Generator,
              n_declared: int | None = None, fallback: bool = True) -> Result:
    """The private stage of FC clustering on cached tuples (no declared n: a DP count)."""
    from dpviz.clustering.friendlycore import fc_private_stage

    return fc_private_stage(X, stage, rho=rho, delta=delta, radius=radius, r_min=r_min,
                            preset=preset, rng=rng, n_declared=n_declared, fallback=fallback)


def _dp_lloyd(X: np.ndarray, k: int, *, rho: float, radius: float,
              rng: np.random.Generator) -> Result:
    from dpviz.clustering.baselines import dp_lloyd

    return dp_lloyd(X, k, rho=rho, radius=radius, rng=rng)


def _diffprivlib(X: np.ndarray, k: int, *, rho: float, radius: float,
                 rng: np.random.Generator) -> Result:
    """diffprivlib's KMeans at ε = √(2ρ): ε-DP implies ε²/2 = ρ-zCDP (Bun & Steinke 2016,
    Prop. 1.4), so every algorithm on a curve spends the same ρ."""
    from dpviz.clustering.baselines import diffprivlib_kmeans

    return diffprivlib_kmeans(X, k, eps=math.sqrt(2.0 * rho), radius=radius, rng=rng)


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


def _nonprivate(X: np.ndarray, k: int, *, rng: np.random.Generator) -> Result:
    from dpviz.clustering.baselines import nonprivate_kmeans

    return nonprivate_kmeans(X, k, rng=rng)


def _reference(X: np.ndarray, k: int, rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """Cost and centers of non-private k-means++ on all of X (the loss's X; a diagnostic)."""
    from sklearn.cluster import KMeans

    from dpviz.metrics import kmeans_cost

    km = KMeans(n_clusters=k, n_init=3, random_state=int(rng.integers(2**31 - 1))).fit(X)
    return kmeans_cost(X, km.cluster_centers_), km.cluster_centers_


# ---- results -------------------------------------------------------------------------------------

def summarize(
    frame: pd.DataFrame,
    *,
    by: Sequence[str] = ("algorithm", "rho"),
    metric: str = "loss",
    quantiles: tuple[float, float] = (0.1, 0.9),
) -> pd.DataFrame:
    """Median and a quantile band of ``metric`` per group, with the success rate.

    Columns: ``*by, median, q<lo>, q<hi>, success_rate, runs`` (e.g. q10, q90 for the default
    quantiles). NaN metric values (no centers) are ignored by the quantiles; ``runs`` counts all.
    """
    lo, hi = quantiles
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"The 'quantiles' parameter must be (lo, hi) with 0 ≤ lo < hi ≤ 1. "
                         f"Got {quantiles!r} instead.")
    names = quantile_names(quantiles)
    cols = [*by, "median", *names, "success_rate", "runs"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    g = frame.groupby(list(by), sort=True, dropna=False)
    out = pd.DataFrame({
        "median": g[metric].median(),
        names[0]: g[metric].quantile(lo),
        names[1]: g[metric].quantile(hi),
        "success_rate": g["success"].mean().astype(float),
        "runs": g[metric].size(),
    }).reset_index()
    return out[cols]


def quantile_names(quantiles: tuple[float, float]) -> tuple[str, str]:
    """Column names of a quantile band: (0.1, 0.9) → ("q10", "q90")."""
    return tuple(f"q{100 * q:g}" for q in quantiles)  # type: ignore[return-value]


@dataclass(frozen=True)
class Sweep:
    """The runs of a sweep, one row per (algorithm, ρ, repetition).

    Attributes
    ----------
    frame : DataFrame
        Columns ``algorithm, rho, rep, loss, success, center_error, seconds, n, fallback,
        failure, stage_seconds``. ``rho`` is ``inf`` for the non-private reference. ``loss`` is the
        normalized k-means loss (1 when the run released no centers); ``success`` is True when
        the algorithm released centers by itself (FC: without its fallback); ``seconds`` times
        the private stage only; ``stage_seconds`` the shared tuple stage of that repetition.
    params : mapping
        The sweep's arguments (enough to rerun it) and what center_error is measured against.
    complete : bool
        False when ``should_stop`` cancelled the sweep (the frame holds the finished runs).
    seconds : float
        Wall time.
    """

    frame: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    complete: bool = True
    seconds: float = 0.0

    def summary(self, metric: str = "loss", *,
                quantiles: tuple[float, float] = (0.1, 0.9)) -> pd.DataFrame:
        """Median, q10 and q90 of ``metric`` and the success rate per algorithm × ρ."""
        return summarize(self.frame, metric=metric, quantiles=quantiles)


# ---- running ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Config:
    k: int
    delta: float
    n_tuples: int
    radius: float
    r_min: float
    oracle: str
    reference_cost: float
    reference_centers: np.ndarray
    row_level: bool = False  # the x values are row-level ε targets (calibrated per algorithm)
    n: int = 0
    d: int = 0


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


def _fallback_used(result: Result) -> bool:
    step = result.find("fallback")
    return step is not None and bool(step.data.get("used"))


def _row(X: np.ndarray, cfg: _Config, algorithm: str, rho: float, rep: int, result: Result,
         seconds: float, stage_seconds: float) -> dict:
    from dpviz.metrics import center_error, kmeans_cost

    fb = _fallback_used(result)
    if result.centers is None:
        loss, err = 1.0, math.nan  # ⊥: no better than no answer (the limit of 1 − X/Y, Y → ∞)
    else:
        C = np.asarray(result.centers, dtype=float)
        y = kmeans_cost(X, C)
        loss = 0.0 if y <= 0 else 1.0 - cfg.reference_cost / y
        err = center_error(cfg.reference_centers, C)
    reason = result.failure
    if fb and reason is None:
        reason = result.find("fallback").data.get("reason")
    return dict(algorithm=algorithm, rho=rho, rep=rep, loss=loss,
                success=result.centers is not None and not fb, center_error=err,
                seconds=seconds, n=X.shape[0], fallback=fb, failure=reason,
                stage_seconds=stage_seconds)


def _run_one(X: np.ndarray, cfg: _Config, algorithm: str, rho: float, stage: Any,
             rng: np.random.Generator, stages: dict | None = None,
             stage_rng: np.random.Generator | None = None) -> Result:
    delta = cfg.delta
    if cfg.row_level and algorithm != "nonprivate":
        own, delta = row_level_budget(algorithm, rho, cfg.delta, n_declared=cfg.n, d=cfg.d, k=cfg.k,
                                      radius=cfg.radius, n_tuples=cfg.n_tuples, r_min=cfg.r_min,
                                      oracle=cfg.oracle)
        if algorithm.startswith("fc:"):  # the declared n is the one the calibration used
            return _fc_stage(X, stage, rho=own, delta=delta, radius=cfg.radius, r_min=cfg.r_min,
                             preset=algorithm[3:], rng=rng, n_declared=cfg.n)
        rho = own
    if algorithm.startswith("fc:"):
        return _fc_stage(X, stage, rho=rho, delta=cfg.delta, radius=cfg.radius, r_min=cfg.r_min,
                         preset=algorithm[3:], rng=rng)
    if algorithm == "dp_lloyd":
        return _dp_lloyd(X, cfg.k, rho=rho, radius=cfg.radius, rng=rng)
    if algorithm == "diffprivlib":
        return _diffprivlib(X, cfg.k, rho=rho, radius=cfg.radius, rng=rng)
    if algorithm == "nonprivate":
        return _nonprivate(X, cfg.k, rng=rng)
    return _registered(X, algorithm, cfg.k, rho=rho, delta=max(delta, cfg.delta), radius=cfg.radius,
                       stages={} if stages is None else stages, stage_rng=stage_rng, rng=rng)


def _units(algorithms: Sequence[str], rhos: Sequence[float]) -> list[tuple[str, float]]:
    """The (algorithm, ρ) runs of one repetition; the non-private reference runs once (ρ = ∞)."""
    from dpviz.registry import get

    units = []
    for a in algorithms:
        if a == "nonprivate" or (a not in LEGACY_ALGORITHMS and not a.startswith("fc:")
                                 and not get(a).is_private):
            units.append((a, math.inf))
        else:
            units.extend((a, float(r)) for r in rhos)
    return units


def _run_rep(
    X: np.ndarray,
    cfg: _Config,
    rep: int,
    rng: np.random.Generator,
    units: list[tuple[str, float]],
    stop: ShouldStop | None = None,
    done: Callable[[str], None] | None = None,
) -> tuple[list[dict], bool]:
    """All runs of one repetition; returns (rows, stopped).

    ``stop()`` is polled before each run; ``done(message)`` is called after each run.
    """
    stage_rng, *unit_rngs = rng.spawn(1 + len(units))
    stage, stage_seconds = None, 0.0
    stages: dict = {}  # the non-private stages of registered algorithms, shared across ρ
    rows: list[dict] = []
    for (alg, rho), urng in zip(units, unit_rngs, strict=True):
        if stop is not None and stop():
            return rows, True
        if alg.startswith("fc:") and stage is None:
            t0 = time.perf_counter()
            stage = _tuple_stage(X, cfg.k, n_tuples=cfg.n_tuples, oracle=cfg.oracle,
                                 radius=cfg.radius, rng=stage_rng)
            stage_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = _run_one(X, cfg, alg, rho, stage, urng, stages, stage_rng)
        secs = time.perf_counter() - t0
        rows.append(_row(X, cfg, alg, rho, rep, result, secs,
                         stage_seconds if alg.startswith("fc:") else 0.0))
        if done is not None:
            done(f"repetition {rep + 1}: {alg} at ρ = {rho:.3g}")
    return rows, False


def _check_algorithms(algorithms: Sequence[str], func: str) -> tuple[str, ...]:
    algs = tuple(algorithms)
    names = algorithm_names()
    if not algs:
        raise ValueError(f"The 'algorithms' parameter of {func} must name at least one of "
                         f"{list(names)}.")
    bad = [a for a in algs if a not in names and not (a.startswith("fc:") and len(a) > 3)]
    if bad:
        raise ValueError(f"The 'algorithms' parameter of {func} has unknown name(s) {bad}; "
                         f"choose from {list(names)} (or 'fc:<preset>'); approximate-DP "
                         "algorithms are compared at a row-level (ε, δ) by dpviz.compare.compare_sweep.")
    return algs


def run_sweep(
    X: Any,
    k: int,
    *,
    algorithms: Sequence[str],
    rhos: Sequence[float],
    reps: int,
    delta: float,
    n_tuples: int = 200,
    radius: float | None = None,
    r_min: float,
    rng: RngLike = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    n_jobs: int = 1,
    backend: str | None = None,
    oracle: str = "kmeans++",
    true_centers: np.ndarray | None = None,
    reference_cost: float | None = None,
    reference_centers: np.ndarray | None = None,
    row_level: bool = False,
) -> Sweep:
    """Run each algorithm at each ρ, ``reps`` times, and measure it.

    Parameters
    ----------
    X : (n, d) array or Dataset
        A Dataset supplies ``radius`` (its declared Λ) and ``true_centers`` when not given.
    k : int
        Number of clusters.
    algorithms : sequence of str
        From :func:`algorithm_names` (the legacy names and the registry);
        ``"fc:<preset>"`` for any FC budget-split preset.
    rhos : sequence of float
        The zCDP budgets (each > 0). diffprivlib runs at ε = √(2ρ) (the same ρ-zCDP).
    reps : int
        Repetitions. Repetition r uses the r-th child of ``rng`` for everything, and computes the
        tuple stage once, shared by every ρ and FC preset.
    delta, n_tuples, radius, r_min, oracle
        Passed to the algorithms (``radius`` is the public ℓ2 bound Λ).
    progress : callable(fraction, message), optional
        Called after every run (sequential) or every repetition (``n_jobs > 1``).
    should_stop : callable() -> bool, optional
        Polled before every run (sequential) or after every repetition (parallel); when it
        returns True the sweep stops and returns the finished runs with ``complete=False``.
    n_jobs : int
        Repetitions run in parallel with joblib when > 1 (results do not depend on it).
    backend : str, optional
        joblib backend ("loky" by default; "threading" shares the process).
    true_centers : (k, d) array, optional
        center_error is measured against these; otherwise against non-private k-means++ centers.
    reference_cost : float, optional
        X of the normalized loss (non-private k-means++ cost on X); computed once if None.
    reference_centers : (k, d) array, optional
        The non-private k-means++ centers (for center_error when there are no true centers).
        Pass both references when cached: then the sweep runs no k-means of its own.
    row_level : bool, default False
        Compare at equal ROW-LEVEL (ε, δ): each value of ``rhos`` is then a row-level ε target
        (with ``delta`` the row-level δ) and every algorithm runs at its own budget calibrated to
        it (:func:`row_level_budget`; the declared n is len(X)). The frame's ``rho`` column holds
        the target ε. False compares at equal nominal ρ, which is unfair to the algorithms whose
        row-level guarantee is weaker at the same ρ (FriendlyCore's group-privacy step).

    Returns
    -------
    Sweep

    Privacy
    -------
    Each run is private on its own (its Result's ledger); the sweep as a whole is NOT a private
    release: it runs many times on the same data and its metrics are non-private diagnostics.
    It is a tool to study algorithms, not to publish.
    """
    t_start = time.perf_counter()
    func = "run_sweep"
    data = X
    Xa = check_data(getattr(data, "X", data), func, allow_empty=False)
    if radius is None:
        radius = getattr(data, "radius", None)
        if radius is None:
            raise ValueError("run_sweep needs the public radius Λ: pass radius=... (or a Dataset "
                             "with a declared radius).")
    if true_centers is None:
        true_centers = getattr(data, "true_centers", None)
    k = check_scalar(k, "k", func, low=1, high=Xa.shape[0], integer=True)
    algs = _check_algorithms(algorithms, func)
    rhos = [check_scalar(r, "rhos", func, low=0.0, low_open=True, high_open=True) for r in rhos]
    if not rhos:
        raise ValueError("The 'rhos' parameter of run_sweep must hold at least one budget ρ > 0.")
    reps = check_scalar(reps, "reps", func, low=1, integer=True)
    delta = check_delta(delta, func)
    radius = check_radius(radius, "radius", func)
    r_min = check_radius(r_min, "r_min", func)
    n_jobs = check_scalar(n_jobs, "n_jobs", func, low=-1, integer=True)
    gen, seed = check_rng(rng, "experiments:run_sweep")
    ref_rng, *rep_rngs = gen.spawn(1 + reps)
    ref_cost = ref_centers = None
    if reference_cost is not None:
        ref_cost = check_scalar(reference_cost, "reference_cost", func, low=0.0, high_open=True)
    if reference_centers is not None:
        ref_centers = np.asarray(reference_centers, dtype=float)
    if ref_cost is None or (ref_centers is None and true_centers is None):
        cost, centers = _reference(Xa, k, ref_rng)
        ref_cost = cost if ref_cost is None else ref_cost
        ref_centers = centers if ref_centers is None else ref_centers
    cfg = _Config(k, delta, int(n_tuples), radius, r_min, oracle, ref_cost,
                  np.asarray(true_centers if true_centers is not None else ref_centers, float),
                  row_level=bool(row_level), n=int(Xa.shape[0]), d=int(Xa.shape[1]))
    units = _units(algs, rhos)
    total = reps * len(units)
    params = dict(k=k, algorithms=algs, rhos=tuple(rhos), reps=reps, delta=delta, row_level=row_level,
                  n_tuples=int(n_tuples), radius=radius, r_min=r_min, oracle=oracle, seed=seed,
                  reference_cost=ref_cost,
                  center_error_against="true centers" if true_centers is not None
                  else "non-private k-means++ centers")
    rows: list[dict] = []
    stopped = False
    if n_jobs == 1:
        finished = 0

        def done(msg: str) -> None:
            nonlocal finished
            finished += 1
            if progress is not None:
                progress(finished / total, msg)

        for rep in range(reps):
            rep_rows, stopped = _run_rep(Xa, cfg, rep, rep_rngs[rep], units, should_stop, done)
            rows.extend(rep_rows)
            if stopped:
                break
    else:
        from joblib import Parallel, delayed

        jobs = (delayed(_run_rep)(Xa, cfg, rep, rep_rngs[rep], units) for rep in range(reps))
        out = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")(jobs)
        try:
            for i, (rep_rows, _) in enumerate(out, start=1):
                rows.extend(rep_rows)
                if progress is not None:
                    progress(i / reps, f"repetition {i} of {reps} done")
                if should_stop is not None and should_stop() and i < reps:
                    stopped = True
                    break
        finally:
            with warnings.catch_warnings():  # joblib warns that it cancelled pending reps
                warnings.simplefilter("ignore", UserWarning)
                out.close()
        rows.sort(key=lambda r: r["rep"])
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    return Sweep(frame, params, not stopped, time.perf_counter() - t_start)


def run_n_sweep(
    make_data: Callable[..., Any],
    ns: Sequence[int],
    k: int,
    *,
    algorithms: Sequence[str],
    rho: float,
    reps: int,
    delta: float,
    n_tuples: int = 200,
    radius: float | None = None,
    r_min: float,
    rng: RngLike = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    n_jobs: int = 1,
    oracle: str = "kmeans++",
    row_level: bool = False,
) -> Sweep:
    """Loss vs n at one budget: for each n, ``make_data(n, rng=child)`` (a Dataset or an array)
    and a one-ρ :func:`run_sweep`. The frame's ``n`` column tells the sizes apart. With
    ``row_level`` the budget ``rho`` is a row-level ε target, calibrated per algorithm and n.

    Privacy
    -------
    As :func:`run_sweep`: a study tool, not a private release.
    """
    ns = [check_scalar(n, "ns", "run_n_sweep", low=1, integer=True) for n in ns]
    if not ns:
        raise ValueError("The 'ns' parameter of run_n_sweep must hold at least one size n.")
    gen, seed = check_rng(rng, "experiments:run_n_sweep")
    children = gen.spawn(2 * len(ns))
    frames, complete = [], True
    for i, n in enumerate(ns):
        if should_stop is not None and should_stop():
            complete = False
            break
        data = make_data(n, rng=children[2 * i])

        def sub_progress(f: float, msg: str, i: int = i, n: int = n) -> None:
            if progress is not None:
                progress((i + f) / len(ns), f"n = {n}: {msg}")

        sw = run_sweep(data, k, algorithms=algorithms, rhos=[rho], reps=reps, delta=delta,
                       n_tuples=n_tuples, radius=radius, r_min=r_min, rng=children[2 * i + 1],
                       progress=sub_progress, should_stop=should_stop, n_jobs=n_jobs,
                       oracle=oracle, row_level=row_level)
        frames.append(sw.frame)
        if not sw.complete:
            complete = False
            break
    frame = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame(columns=list(FRAME_COLUMNS)))
    params = dict(k=k, algorithms=tuple(algorithms), rho=rho, row_level=row_level, ns=tuple(ns), reps=reps,
                  delta=delta, n_tuples=n_tuples, radius=radius, r_min=r_min, seed=seed)
    return Sweep(frame, params, complete)


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
