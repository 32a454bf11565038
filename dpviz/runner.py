"""The run: :func:`run`, the one public call that runs a registered algorithm at a row-level
target, with its stages, cancellation, a given plan and the re-account of its ledger
(:func:`dpviz.privacy.accounting.check_ledger`, whose value becomes ``Result.statement``).

One of the three parts of :mod:`dpviz.registry` (issue 45); import from :mod:`dpviz.registry`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from dpviz._validation import (
    MAX_CLUSTERS,
    MAX_EPSILON,
    RngLike,
    check_data,
    check_radius,
    check_rng,
    check_scalar,
    is_simulation,
)
from dpviz.planning import COUNT_EPS_FRACTION, plan
from dpviz.privacy.accounting import check_ledger, reaccount, within
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace
from dpviz.privacy.plan import BudgetPlan
from dpviz.result import Result
from dpviz.specs import AlgorithmSpec, Public, algorithms, answered_by, get

# ----------------------------------------------------------------------------- running


#: The stages :func:`run` reports to its ``progress`` hook, in this order. Which of them a run
#: goes through depends on public facts only: the DP count when no size is declared, the
#: non-private stage when the spec has one and none is handed in. None names a branch, a count or
#: an outcome.
STAGE_COUNT = "DP count of the rows"
STAGE_PLAN = "budget plan"
STAGE_NONPRIVATE = "non-private stage"
STAGE_PRIVATE = "private stage"
STAGES: tuple[str, ...] = (STAGE_COUNT, STAGE_PLAN, STAGE_NONPRIVATE, STAGE_PRIVATE)


class CancelToken(Protocol):
    """What :func:`run` accepts as ``cancel``: e.g. a ``threading.Event``."""

    def is_set(self) -> bool: ...


class RunCancelledError(Exception):
    """Raised by :func:`run` when its ``cancel`` token is set at a stage boundary.

    The rows had been read by then (they are validated before the first boundary): a caller that
    books attempts must book this one at its full target. Nothing of the run is returned.
    """


def stages(name: str | AlgorithmSpec, *, n_declared: int | None = None,
           stage: Any = None) -> tuple[str, ...]:
    """The stages :func:`run` will report for these PUBLIC inputs, in order (no data needed)."""
    spec = get(name) if isinstance(name, str) else name
    out = [STAGE_COUNT] if n_declared is None and spec.is_private else []
    out.append(STAGE_PLAN)
    if stage is None and spec.stage is not None:
        out.append(STAGE_NONPRIVATE)
    return (*out, STAGE_PRIVATE)


def _declared_size(X: np.ndarray, epsilon: float, rng: np.random.Generator) -> tuple[int, Ledger]:
    """A Laplace count of the rows (sensitivity 1, ε-DP) when the caller declares no size."""
    ledger = Ledger("declared size (DP count)", ApproxDP(epsilon).to_zcdp())
    noisy = laplace(float(X.shape[0]), sensitivity=1.0, eps=epsilon, rng=rng, ledger=ledger,
                    name="n̂ (rows, Laplace count)", note="no size declared: a DP count stands in")
    return max(round(noisy), 1), ledger


def run(
    name: str,
    X: Any,
    k: int,
    *,
    epsilon: float,
    delta: float,
    radius: float,
    rng: RngLike = None,
    n_declared: int | None = None,
    stage: Any = None,
    public_X: Any = None,
    progress: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
    budget_plan: BudgetPlan | None = None,
    **params: Any,
) -> Result:
    """Run a registered algorithm so that its **row-level** guarantee is at most (ε, δ).

    Parameters
    ----------
    name : str
        A registered algorithm (:func:`algorithms`).
    X : (n, d) array
    k : int
    epsilon, delta : float
        The row-level target: (ε, δ)-DP for adding or removing one row.
    radius : float
        Λ, the declared ℓ2 bound of the rows.
    rng : Generator, int or None
    n_declared : int, optional
        The public dataset size. When omitted, ``COUNT_EPS_FRACTION`` of ε buys a Laplace count
        of the rows, recorded in the ledger, and the algorithm is calibrated to the rest.
    stage : optional
        A precomputed non-private stage (from ``spec.stage``) to reuse.
    public_X : (m, d) array, optional
        Records the caller declares PUBLIC (a held-out split of the same population, or public
        synthetic data), for an algorithm with ``uses_public_data`` (a ValueError otherwise).
        They are not private rows: X must not contain them, they get no privacy, and the
        guarantee and ledger are those of X alone. ``Result.params`` records their number
        (``public_rows``), never their contents.
    progress : callable, optional
        ``progress(stage)`` is called as each stage starts, with one of :data:`STAGES` (the
        sequence is :func:`stages`: public inputs only). Nothing else is reported: no count, no
        branch, no outcome (a caller may show it while the run lasts).
    cancel : object with ``is_set()``, optional
        E.g. a ``threading.Event``, checked at every stage boundary: before each stage and once
        more after the last. When set, the run stops there and raises
        :class:`RunCancelledError` (the library cannot stop inside a stage, so a cancel takes effect at
        the next boundary). The rows have been read by then: book the attempt at its target.
    budget_plan : BudgetPlan, optional
        The run's plan, already made from public inputs (e.g. :func:`plan_at_budget` of an own
        budget a user typed as ρ, an old link's): used instead of calibrating, once its algorithm
        matches and its guarantee is within the target (ε, δ) (ValueError otherwise); needs
        ``n_declared``. The run's ledger is re-accounted against the target all the same.
    **params
        The spec's parameters (unknown names raise ValueError).

    Returns
    -------
    Result
        With ``algorithm`` = name and ``guarantee`` = the row-level (ε, δ).

    Raises
    ------
    RunCancelledError
        When ``cancel`` is set at a stage boundary.
    """
    spec = get(name)

    def boundary(next_stage: str | None) -> None:
        """A stage boundary: stop here if cancelled, else announce the next stage (if any)."""
        if cancel is not None and cancel.is_set():
            raise RunCancelledError(f"dpviz.run('{name}') was cancelled at a stage boundary.")
        if next_stage is not None and progress is not None:
            progress(next_stage)

    func = f"dpviz.run('{name}')"
    X = check_data(X, func, allow_empty=False)
    k = check_scalar(k, "k", func, low=1, high=MAX_CLUSTERS, integer=True)
    # A given plan may state a vacuous guarantee (δ = 1: an old link's large ρ); it is still the
    # run's statement, so its target is read as given.
    given = budget_plan is not None
    epsilon = check_scalar(epsilon, "epsilon", func, low=0.0, low_open=True,
                           high=math.inf if given else MAX_EPSILON)
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, high_open=not given)
    radius = check_radius(radius, "radius", func)
    p = spec.make_params(**params)
    public = check_public(public_X, X.shape[1], spec, func)
    gen, seed = check_rng(rng, f"algorithm:{name}")
    count_ledger: Ledger | None = None
    if n_declared is None and spec.is_private:
        boundary(STAGE_COUNT)
        n_declared, count_ledger = _declared_size(X, COUNT_EPS_FRACTION * epsilon, gen)
    elif n_declared is None:
        n_declared = X.shape[0]  # a non-private reference: nothing to protect
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    pub = Public(n_declared=n_declared, d=X.shape[1], k=k, radius=radius)
    boundary(STAGE_PLAN)
    if budget_plan is not None:
        the_plan = _given_plan(spec, budget_plan, epsilon, delta, count_ledger is not None)
    else:
        the_plan = None
    try:
        the_plan = the_plan or plan(spec, epsilon, delta, pub, p, count=count_ledger is not None)
    except ValueError:
        if count_ledger is None:
            raise  # declared inputs only: the caller changes them
        # The DP count (already drawn and booked) made the run infeasible: that is a released
        # outcome of the count, answered as ⊥ with the count's spend on the ledger.
        return _count_only_failure(spec, epsilon, delta, n_declared, count_ledger, rng)
    cal = the_plan
    if stage is None and spec.stage is not None:
        boundary(STAGE_NONPRIVATE)
        stage = spec.stage(X, k, radius=radius, rng=gen, pub=pub, params=p)
    extra = {"public_X": public} if spec.uses_public_data else {}
    boundary(STAGE_PRIVATE)
    res = spec.private(X, k, cal.budget, radius=radius, rng=gen, pub=pub, params=p, stage=stage, **extra)
    boundary(None)  # a cancel pressed during the last stage: nothing of the run is returned
    ledger = res.ledger
    if count_ledger is not None:
        ledger = Ledger("dpviz.run", None, children=[count_ledger, res.ledger])
    # Re-accounted after every run (over the target is a bug); its value is the run's statement.
    stated = check_ledger(ledger, the_plan)
    # A release only when the release sampler drew every random choice (issue 10).
    out = dataclasses.replace(res, ledger=ledger, algorithm=name, guarantee=the_plan.guarantee,
                               plan=the_plan, statement=stated,
                               params=dict(res.params) | {"n_declared": n_declared,
                                                          "size_source": the_plan.size_source,
                                                          "budget": str(cal.budget)}
                               | ({"public_rows": 0 if public is None else int(public.shape[0])}
                                  if spec.uses_public_data else {}),
                               simulation=res.simulation or is_simulation(rng),
                               seed=res.seed if seed is None else seed)
    # Who answered, in the one wording (specs.answered_by), for readers below the registry (the
    # release export).
    return dataclasses.replace(out, answered_by=answered_by(out).who)


def _given_plan(spec: AlgorithmSpec, given: BudgetPlan, epsilon: float, delta: float,
                counted: bool) -> BudgetPlan:
    """A caller's plan for :func:`run` (``budget_plan``), checked before any row is used."""
    if counted:
        raise ValueError(f"dpviz.run('{spec.name}'): a given budget_plan needs a declared size "
                         "(n_declared); without one the plan must include the DP count.")
    if given.algorithm != spec.name or given.guarantee is None or given.budget is None:
        raise ValueError(f"dpviz.run('{spec.name}'): the given budget_plan is for "
                         f"{given.algorithm!r}, or states no guarantee.")
    if not within(given.guarantee, epsilon, delta):
        raise ValueError(f"dpviz.run('{spec.name}'): the given budget_plan states {given.guarantee}, "
                         f"above the target (ε={epsilon:g}, δ={delta:g}).")
    return dataclasses.replace(given, target=ApproxDP(epsilon, delta))


#: The one failure text of a run stopped by its DP-counted size (no data-dependent count quoted).
COUNT_INFEASIBLE = ("⊥: the DP-counted size is too small for these settings (declare the size to decide "
                    "in advance)")


def _count_only_failure(spec: AlgorithmSpec, epsilon: float, delta: float,
                        n_counted: int, count_ledger: Ledger, rng: RngLike) -> Result:
    """⊥ after the DP count: only the count was spent (booked), nothing else read the rows."""
    count_eps = COUNT_EPS_FRACTION * epsilon
    g = ApproxDP(count_eps, 0.0)
    the_plan = BudgetPlan(None, 0.0, g, algorithm=spec.name, target=ApproxDP(epsilon, delta),
                          count_eps=count_eps, algorithm_guarantee=ApproxDP(0.0, 0.0),
                          size_source="dp_count")
    ledger = Ledger("dpviz.run", None, children=[count_ledger])
    return Result(None, COUNT_INFEASIBLE, ledger, (), {"n_declared": n_counted, "size_source": "dp_count"},
                  algorithm=spec.name, guarantee=g, plan=the_plan, statement=reaccount(ledger, 0.0),
                  simulation=is_simulation(rng), answered_by=answered_by(Result(None, None, ledger)).who)


def check_public(public_X: Any, d: int, spec: AlgorithmSpec, func: str) -> np.ndarray | None:
    """Validate declared-public records: a finite (m, d) array with m ≥ 1, for a spec that uses them."""
    if public_X is None:
        return None
    if not spec.uses_public_data:
        users = [s.name for s in algorithms() if s.uses_public_data]
        raise ValueError(f"The 'public_X' parameter of {func} is for an algorithm that uses public "
                         f"records; {spec.name!r} does not (those that do: {users}).")
    P = np.asarray(public_X, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] < 1 or P.shape[1] != d:
        raise ValueError(f"The 'public_X' parameter of {func} must be a 2-D array of public records "
                         f"with {d} columns, like X. Got shape {P.shape}.")
    if not np.all(np.isfinite(P)):
        raise ValueError(f"The 'public_X' parameter of {func} must contain only finite values.")
    return P
