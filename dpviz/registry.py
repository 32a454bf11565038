"""The algorithm registry: every private clustering algorithm behind one interface.

Each family registers one :class:`AlgorithmSpec` at the bottom of its own module (see
``dpviz/clustering/friendlycore/spec.py`` for FriendlyCore). A spec states its name and paper, a frozen,
self-validating parameter dataclass whose fields carry UI hints (:func:`hint`), its budget kind,
how a **row-level** (ε, δ) target becomes its own budget, an optional non-private stage (cached by
the app so a budget move reruns only the private part), the private run, and its trace-step names.

The app, the sweeps, the Compare page, the benches and the command line iterate
:func:`algorithms`; :func:`run` is the one public call::

    dpviz.run("friendlycore", X, 8, epsilon=3.0, delta=1e-6, radius=1.0, n_declared=len(X))

Discovery: every module of the packages in :data:`FAMILY_PACKAGES` is imported on the first call
to :func:`algorithms`, :func:`get` or :func:`run`, so a new family is one new module that calls
:func:`register`; nothing else is edited.

The row-level contract (docs/privacy.md): ``guarantee(budget, pub, params, delta_prime)`` is the
(ε, δ)-DP guarantee for adding or removing one row of the user's data, computed from public
inputs only. :func:`calibrate` finds the largest budget whose guarantee is within the target.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

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
from dpviz.privacy.accounting import (
    LEDGER_RTOL,
    LedgerOverTargetError,
    budget_from_rho,
    check_ledger,
    compose_dp,
    delta_allocations,
    reaccount,
    within,
)
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace
from dpviz.privacy.plan import BudgetPlan
from dpviz.result import Result

BudgetKind = Literal["zcdp", "pure", "approx", "none"]
Budget = ZCDP | ApproxDP

#: Packages whose modules are imported to find registered families.
FAMILY_PACKAGES: tuple[str, ...] = ("dpviz.clustering", "dpviz.mixtures", "dpviz.generative")

#: Share of the row-level ε spent on a DP count of the rows when no size is declared.
COUNT_EPS_FRACTION = 0.02


# ----------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class ParamHint:
    """How a parameter is shown: its range and step, a log or linear scale, choices, help text,
    and whether it is a public declaration (a bound the user states, not a tuning knob)."""

    low: float | None = None
    high: float | None = None
    step: float | None = None
    scale: Literal["linear", "log"] = "linear"
    choices: tuple[Any, ...] | None = None
    help: str = ""
    public: bool = False
    label: str = ""
    slider: bool = False  # shown as a slider (a knob whose effect the user sweeps), not a number box


def hint(**kw: Any) -> dict[str, ParamHint]:
    """``field(metadata=hint(low=1, high=500, help="..."))``: attach UI hints to a field."""
    return {"dpviz": ParamHint(**kw)}


def param_fields(params_cls: type) -> list[tuple[dataclasses.Field, ParamHint]]:
    """The fields of a spec's parameter dataclass with their hints (a default hint if none)."""
    return [(f, f.metadata.get("dpviz", ParamHint())) for f in dataclasses.fields(params_cls)]


def check_hinted(params: Any, func: str) -> None:
    """Validate every field of a parameter dataclass against its hint (range, choices, type).

    Call it from ``__post_init__``; messages follow the codebase's scikit-learn form.
    """
    for f, h in param_fields(type(params)):
        v = getattr(params, f.name)
        if h.choices is not None:
            if v not in h.choices:
                raise ValueError(f"The '{f.name}' parameter of {func} must be one of {list(h.choices)}. "
                                 f"Got {v!r} instead.")
            continue
        if isinstance(f.default, bool):
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"The '{f.name}' parameter of {func} must be a bool. Got {v!r} instead.")
            continue
        if isinstance(f.default, (int, float)):
            check_scalar(v, f.name, func, low=-math.inf if h.low is None else h.low,
                         high=math.inf if h.high is None else h.high,
                         integer=isinstance(f.default, int))


# ----------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class Public:
    """The public inputs every algorithm may read: the declared size, d, k and the radius Λ."""

    n_declared: int
    d: int
    k: int
    radius: float


#: A spec's calibration result: the one budget plan of a run (dpviz.privacy.plan).
Calibration = BudgetPlan


Guarantee = Callable[[Budget, Public, Any, float], ApproxDP]


@dataclass(frozen=True)
class DataShape:
    """What a caller has to run on: the dimension, how many records are declared public, and
    (optionally) which budget kinds the caller can state (e.g. a page that sweeps ρ only).

    ``dpviz.algorithms(applicable_to=DataShape(d=1))`` lists the algorithms that serve it;
    :func:`applicability` also says why each other one does not.
    """

    d: int
    public_rows: int = 0
    budget_kinds: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if int(self.d) < 1 or int(self.public_rows) < 0:
            raise ValueError(f"A DataShape needs d ≥ 1 and public_rows ≥ 0. Got d = {self.d}, "
                             f"public_rows = {self.public_rows}.")


@dataclass(frozen=True)
class AlgorithmSpec:
    """One registered algorithm.

    Attributes
    ----------
    name, title, paper : str
        The key (URLs, the command line, benches), a display title, the reference.
    budget_kind : {"zcdp", "pure", "approx", "none"}
        The algorithm's own budget: ``ZCDP(rho, delta)``, ``ApproxDP(eps, 0)``,
        ``ApproxDP(eps, delta)``, or none (a non-private reference).
    params : type
        A frozen dataclass; every field has a default and a :func:`hint`; ``__post_init__``
        validates (:func:`check_hinted`).
    private : callable
        ``private(X, k, budget, *, radius, rng, pub, params, stage) -> Result``. It must not
        read ``len(X)`` for anything that shapes a release: ``pub.n_declared`` is the size.
        With ``uses_public_data`` it also receives ``public_X`` (an (m, d) array or None).
    guarantee : callable
        ``guarantee(budget, pub, params, delta_prime) -> ApproxDP``: the row-level (ε, δ) for
        add/remove of one row, from public inputs only. Required unless ``budget_kind == "none"``.
    stage : callable, optional
        The non-private stage ``stage(X, k, *, radius, rng, pub, params) -> object``; it
        depends only on the data, k, the seed and ``stage_fields`` (so it is cached).
    stage_fields : tuple of str
        The parameter fields the stage depends on.
    steps : tuple of str
        The trace-step names the algorithm emits (its storyboard draws them).
    structure_step : str, optional
        A trace step whose ``data["used"]`` (False) or presence marks that the algorithm's own
        private structure succeeded (e.g. FriendlyCore's core) rather than a fallback.
    calibrate : callable, optional
        ``calibrate(epsilon, delta, pub, params) -> Calibration``; default: :func:`calibrate`
        searches the budget whose ``guarantee`` meets the target.
    description : str
        One or two sentences for the app.
    rank : int
        Listing order (lower first; ties in registration order).
    dims : (int, int or None)
        The data dimensions the algorithm serves, inclusive (None: no upper bound); e.g. (1, 1)
        for a univariate learner. Other dimensions are listed with a reason, never run silently.
    needs_public_data : bool
        The algorithm cannot run without records the user declares PUBLIC (implies
        ``uses_public_data``).
    uses_public_data : bool
        The algorithm can use records the user declares PUBLIC (e.g. k initial centres,
        Acs et al. footnote 3): :func:`run` then passes ``public_X`` to ``private`` (None when the
        caller gives none, and the algorithm falls back to a data-independent choice). Public
        records get no privacy and are not part of X; the guarantee is about the rows of X only.
    feasible : callable, optional
        ``feasible(pub, params)`` raises ValueError when the DECLARED inputs cannot work (e.g.
        n_tuples·k above the declared size), naming the declared input to change. Called by
        :func:`calibrate` (so by :func:`plan` and :func:`run` before any row is read). A shortfall
        found in the data itself is never a refusal: the mechanism answers ⊥ (issue 25).
    releasable : bool
        False when the algorithm cannot draw its randomness from the release sampler
        (:class:`dpviz.privacy.release.SecureRNG`), so a run is always a simulation: pages must
        not offer it for release (:func:`releasable`).
    """

    name: str
    title: str
    paper: str
    budget_kind: BudgetKind
    params: type
    private: Callable[..., Result]
    guarantee: Guarantee | None = None
    stage: Callable[..., Any] | None = None
    stage_fields: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    structure_step: str | None = None
    calibrate: Callable[[float, float, Public, Any], Calibration] | None = None
    description: str = ""
    rank: int = 100
    uses_public_data: bool = False
    releasable: bool = True
    feasible: Callable[[Public, Any], None] | None = None
    dims: tuple[int, int | None] = (1, None)
    needs_public_data: bool = False
    #: ``auto_values(epsilon, delta, pub, params) -> {field: "automatic (value)"}``: the value a
    #: parameter left at its "automatic" default takes at these public inputs (shown by the app).
    auto_values: Callable[[float, float, Public, Any], dict[str, str]] | None = None

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower() or " " in self.name:
            raise ValueError(f"An algorithm name must be a lowercase key without spaces. Got {self.name!r}.")
        if self.budget_kind not in ("zcdp", "pure", "approx", "none"):
            raise ValueError(f"Unknown budget kind {self.budget_kind!r} for algorithm {self.name!r}.")
        if self.budget_kind != "none" and self.guarantee is None:
            raise ValueError(f"Algorithm {self.name!r} is private but states no row-level guarantee.")
        if not dataclasses.is_dataclass(self.params):
            raise ValueError(f"The params of algorithm {self.name!r} must be a dataclass type.")
        names = {f.name for f in dataclasses.fields(self.params)}
        missing = set(self.stage_fields) - names
        if missing:
            raise ValueError(f"stage_fields {sorted(missing)} of {self.name!r} are not parameters.")
        lo, hi = self.dims
        if lo < 1 or (hi is not None and hi < lo):
            raise ValueError(f"dims of {self.name!r} must be (low ≥ 1, high ≥ low or None). Got {self.dims}.")
        if self.needs_public_data and not self.uses_public_data:
            raise ValueError(f"{self.name!r} needs public data but does not take it (uses_public_data).")

    def why_not(self, shape: DataShape) -> str | None:
        """None when the algorithm serves ``shape``; otherwise one sentence saying why not."""
        lo, hi = self.dims
        if shape.d < lo or (hi is not None and shape.d > hi):
            want = f"d = {lo}" if hi == lo else f"d ≥ {lo}" if hi is None else f"{lo} ≤ d ≤ {hi}"
            return f"{self.title} serves {want} data; these rows have d = {shape.d}."
        if self.needs_public_data and shape.public_rows < 1:
            return f"{self.title} needs records declared PUBLIC; none are declared."
        if shape.budget_kinds is not None and self.budget_kind not in shape.budget_kinds:
            return (f"{self.title}'s budget is {self.budget_kind!r}; this view states "
                    f"{', '.join(shape.budget_kinds)} budgets only.")
        return None

    @property
    def is_private(self) -> bool:
        return self.budget_kind != "none"

    def make_params(self, **values: Any) -> Any:
        """The parameter dataclass from keyword values (unknown names are a ValueError)."""
        names = [f.name for f in dataclasses.fields(self.params)]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"Unknown parameter(s) {unknown} for algorithm '{self.name}'; "
                             f"its parameters are {names}.")
        return self.params(**values)

    def stage_key(self, params: Any) -> tuple:
        """The part of the parameters the non-private stage depends on (a cache key)."""
        return tuple((f, getattr(params, f)) for f in self.stage_fields)

    def structure_ok(self, result: Result) -> bool | None:
        """Whether the run's own private structure succeeded (None if the spec names none).

        The ``structure_step`` of the trace decides: a step with a ``used`` entry (a fallback
        step) succeeded when it was not used; any other step succeeded by being there. A run
        that released no centers did not succeed.
        """
        if self.structure_step is None:
            return None
        if result.centers is None:
            return False
        step = result.find(self.structure_step)
        if step is None:
            return False
        return not bool(step.data["used"]) if "used" in step.data else True


# ----------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, AlgorithmSpec] = {}
_DISCOVERED = False


def register(spec: AlgorithmSpec, *, replace: bool = False) -> AlgorithmSpec:
    """Add a spec; a second spec with the same name is an error unless ``replace``."""
    _discover()  # the built-in families first, whoever registers
    if spec.name in _REGISTRY and not replace and _REGISTRY[spec.name] is not spec:
        raise ValueError(f"An algorithm named '{spec.name}' is already registered.")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a spec (tests that register a toy algorithm clean up with this)."""
    _REGISTRY.pop(name, None)


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    for pkg_name in FAMILY_PACKAGES:
        try:
            pkg = importlib.import_module(pkg_name)
        except ModuleNotFoundError:
            continue
        for info in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{pkg_name}.{info.name}")


def algorithms(*, private_only: bool = False,
               applicable_to: DataShape | int | None = None) -> tuple[AlgorithmSpec, ...]:
    """Every registered spec in rank order (``private_only`` drops references; ``applicable_to``,
    a :class:`DataShape` or a dimension d, keeps those that serve it — :func:`applicability`
    says why the others do not)."""
    _discover()
    specs = sorted(_REGISTRY.values(), key=lambda s: s.rank)  # stable: ties keep registration order
    specs = [s for s in specs if s.is_private or not private_only]
    if applicable_to is not None:
        shape = _shape(applicable_to)
        specs = [s for s in specs if s.why_not(shape) is None]
    return tuple(specs)


def _shape(applicable_to: DataShape | int) -> DataShape:
    return applicable_to if isinstance(applicable_to, DataShape) else DataShape(d=int(applicable_to))


def applicability(applicable_to: DataShape | int, *,
                  private_only: bool = False) -> tuple[tuple[AlgorithmSpec, str | None], ...]:
    """Every registered spec with None (it serves ``applicable_to``) or the reason it does not."""
    shape = _shape(applicable_to)
    return tuple((s, s.why_not(shape)) for s in algorithms(private_only=private_only))


def releasable() -> tuple[AlgorithmSpec, ...]:
    """The specs a release page may offer: private, and drawing every random choice from the
    release sampler (``spec.releasable``)."""
    return tuple(s for s in algorithms(private_only=True) if s.releasable)


def get(name: str) -> AlgorithmSpec:
    """The spec called ``name`` (ValueError listing the names if there is none)."""
    _discover()
    if name not in _REGISTRY:
        raise ValueError(f"Unknown algorithm {name!r}; registered: {sorted(_REGISTRY)}.")
    return _REGISTRY[name]


# ----------------------------------------------------------------------------- names with params
# One naming scheme (issue 33): a sweep or a link names an algorithm by its registry name, with
# parameters when it needs them: ``"friendlycore[preset=paper]"`` is FriendlyCore with the paper's
# budget split; ``"kmeans++"`` is the registered non-private reference.

#: Names stored before issue 33 (Budget links, precomputed sweep keys, ledger files) and the
#: registry names they meant; read through :func:`registry_name` only.
_OLD_NAMES: dict[str, str] = {"nonprivate": "kmeans++"}
_OLD_PRESET = "fc:"  # "fc:<preset>": FriendlyCore with that budget-split preset


def variant_name(name: str, **params: Any) -> str:
    """A registry name with parameters: ``variant_name("friendlycore", preset="paper")`` →
    ``"friendlycore[preset=paper]"`` (the bare name when there are none)."""
    if not params:
        return name
    return f"{name}[{';'.join(f'{k}={v}' for k, v in sorted(params.items()))}]"


def parse_name(name: str) -> tuple[str, dict[str, str]]:
    """(registry name, parameters as text) of a name written by :func:`variant_name` (old names
    are read through :func:`registry_name` first). The parameters are the spec's to validate."""
    name = registry_name(name)
    base, bracket, rest = name.partition("[")
    if not bracket:
        return name, {}
    if not rest.endswith("]"):
        raise ValueError(f"Malformed algorithm name {name!r}; expected 'name[key=value;...]'.")
    params = {}
    for item in filter(None, rest[:-1].split(";")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"Malformed algorithm name {name!r}; expected 'name[key=value;...]'.")
        params[key.strip()] = value.strip()
    return base, params


def registry_name(name: str) -> str:
    """THE mapping of old stored algorithm names to registry names (issue 33): ``"fc:<preset>"``
    → ``"friendlycore[preset=<preset>]"`` (bare ``"friendlycore"`` for its default preset),
    ``"nonprivate"`` → ``"kmeans++"``; any other name is returned as it is."""
    name = str(name).strip()
    if name.startswith(_OLD_PRESET) and len(name) > len(_OLD_PRESET):
        preset = name[len(_OLD_PRESET):]
        default = {f.name: f.default for f, _ in param_fields(get("friendlycore").params)}["preset"]
        return variant_name("friendlycore", **({} if preset == default else {"preset": preset}))
    return _OLD_NAMES.get(name, name)


def resolve_name(name: str, values: Any = None) -> tuple[AlgorithmSpec, Any]:
    """(spec, validated params) of a name with parameters (:func:`parse_name`); ``values`` (a
    mapping) adds or overrides parameters. Text parameters take the type of the field's default."""
    base, given = parse_name(name)
    spec = get(base)
    defaults = {f.name: f.default for f, _hint in param_fields(spec.params)}
    typed = {k: _typed(defaults.get(k), v) for k, v in given.items()}
    return spec, spec.make_params(**{**typed, **dict(values or {})})


def _typed(default: Any, text: str) -> Any:
    if isinstance(default, bool):
        return text in ("true", "True", "1")
    if isinstance(default, int):
        return int(float(text))
    if isinstance(default, float):
        return float(text)
    return text


# ----------------------------------------------------------------------------- calibration


#: Relative width at which the budget search stops (the guarantee is then within 10⁻⁵ of target).
CALIBRATION_RTOL = 1e-5


def calibrate(spec: AlgorithmSpec, epsilon: float, delta: float, pub: Public, params: Any) -> Calibration:
    """The largest budget of ``spec``'s kind whose row-level guarantee is within (ε, δ).

    For each candidate split of δ between the algorithm's own δ and the conversion slack δ′
    (:func:`~dpviz.privacy.accounting.delta_allocations`), the scalar (ρ or ε) is found by
    bisection in log space on the spec's ``guarantee``; the allocation giving the largest budget wins.

    Raises
    ------
    ValueError
        When even a tiny budget does not meet the target (e.g. a δ below what the mechanism needs).
    """
    return _calibrate_cached(spec, float(epsilon), float(delta), pub, params)


@functools.lru_cache(maxsize=1024)
def _calibrate_cached(spec: AlgorithmSpec, epsilon: float, delta: float, pub: Public,
                      params: Any) -> Calibration:
    """:func:`calibrate`, memoized: it is a pure function of public, hashable inputs."""
    if spec.feasible is not None:
        spec.feasible(pub, params)  # declared values only: raises before any row is read
    if spec.calibrate is not None:
        cal = spec.calibrate(epsilon, delta, pub, params)
        if cal.guarantee is not None and not within(cal.guarantee, epsilon, delta):
            raise RuntimeError(f"{spec.name}'s calibration returned {cal.guarantee}, above the target.")
        return cal
    if spec.budget_kind == "none":
        return Calibration(None, 0.0, None)
    best: Calibration | None = None
    for share, slack in delta_allocations(spec.budget_kind, epsilon, delta):
        cal = _bisect(spec, epsilon, delta, pub, params, share, slack)
        if cal is not None and (best is None or _scalar(cal.budget) > _scalar(best.budget)):
            best = cal
    if best is None:
        raise ValueError(
            f"{spec.title} cannot meet the row-level target (ε={epsilon:g}, δ={delta:g}) at any "
            "budget: raise δ or ε."
        )
    return best


def _scalar(budget: Budget | None) -> float:
    return budget.rho if isinstance(budget, ZCDP) else budget.eps if budget is not None else 0.0


def _bisect(spec: AlgorithmSpec, epsilon: float, delta: float, pub: Public, params: Any,
            share: float, slack: float) -> Calibration | None:
    """The largest scalar budget (ρ or ε) with this δ allocation whose guarantee is within target."""

    def budget(x: float) -> Budget:
        return ZCDP(x, share) if spec.budget_kind == "zcdp" else ApproxDP(x, share)

    def ok(x: float) -> bool:
        try:
            return within(spec.guarantee(budget(x), pub, params, slack), epsilon, delta)
        except (ValueError, ArithmeticError):  # e.g. a δ of 0 where the algorithm needs one
            return False

    lo, hi = 1e-12, max(epsilon, 1.0)
    if not ok(lo):
        return None
    while ok(hi):
        lo, hi = hi, hi * 4.0
        if hi > 1e8:
            break
    while hi / lo > 1 + CALIBRATION_RTOL:  # bisection in log space
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return Calibration(budget(lo), slack, spec.guarantee(budget(lo), pub, params, slack))


# ----------------------------------------------------------------------------- the plan


def _spec_and_params(name: str | AlgorithmSpec, params: Any) -> tuple[AlgorithmSpec, Any]:
    spec = name if isinstance(name, AlgorithmSpec) else get(name)
    if params is None:
        params = spec.make_params()
    elif isinstance(params, dict):
        params = spec.make_params(**params)
    return spec, params


def plan(name: str | AlgorithmSpec, epsilon: float, delta: float, pub: Public, params: Any = None,
         *, count: bool = False) -> BudgetPlan:
    """THE budget plan of a run at the row-level target (ε, δ), without running anything.

    The one budget ↔ row-level translation of the code base (issue 26): :func:`run` carries this
    plan on ``Result.plan``; the release export, the command line, the sweeps and the app's
    readouts read it. Public inputs only (``pub``, ``params``), so a slider can call it.

    Parameters
    ----------
    name : str or AlgorithmSpec
    epsilon, delta : float
        The row-level target (add/remove one row).
    pub : Public
        The declared size (with ``count``: the noisy count that stands in for it), d, k, Λ.
    params : dataclass, dict or None
        The spec's parameters (None: the defaults).
    count : bool
        No size was declared: ``COUNT_EPS_FRACTION`` of ε pays for a Laplace count of the rows
        and the algorithm is calibrated to the rest (basic composition).

    Raises
    ------
    ValueError
        When no budget meets the target (the message names the declared inputs to change).
    """
    spec, p = _spec_and_params(name, params)
    epsilon, delta = float(epsilon), float(delta)
    count = bool(count) and spec.is_private
    count_eps = COUNT_EPS_FRACTION * epsilon if count else 0.0
    cal = calibrate(spec, epsilon - count_eps, delta, pub, p)
    g = cal.guarantee
    if g is not None and count:
        g = compose_dp(ApproxDP(count_eps, 0.0), g)
    return dataclasses.replace(cal, algorithm=spec.name, target=ApproxDP(epsilon, delta), guarantee=g,
                               count_eps=count_eps, algorithm_guarantee=cal.guarantee,
                               size_source="dp_count" if count else "declared")


def plan_at_budget(name: str | AlgorithmSpec, budget: Budget, pub: Public, params: Any = None, *,
                   delta_prime: float | None = None) -> BudgetPlan:
    """The plan of a run at a GIVEN own budget (a ρ slider): its row-level guarantee.

    A zCDP budget (ρ, δ) converts with δ′ = δ unless ``delta_prime`` is given (the convention of
    Explore's readout, whose run spends (ρ, δ) and states its ledger with δ′ = δ); a pure or
    approximate DP budget needs no δ′.
    """
    spec, p = _spec_and_params(name, params)
    if not spec.is_private:
        return BudgetPlan(None, 0.0, None, algorithm=spec.name)
    dp = float(budget.delta if delta_prime is None else delta_prime) if isinstance(budget, ZCDP) else 0.0
    g = spec.guarantee(budget, pub, p, dp)
    return BudgetPlan(budget, dp, g, algorithm=spec.name, algorithm_guarantee=g)


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
    return dataclasses.replace(res, ledger=ledger, algorithm=name, guarantee=the_plan.guarantee,
                               plan=the_plan, statement=stated,
                               params=dict(res.params) | {"n_declared": n_declared,
                                                          "size_source": the_plan.size_source,
                                                          "budget": str(cal.budget)}
                               | ({"public_rows": 0 if public is None else int(public.shape[0])}
                                  if spec.uses_public_data else {}),
                               simulation=res.simulation or is_simulation(rng),
                               seed=res.seed if seed is None else seed)


# ----------------------------------------------------------------------------- who answered
# Every label that names an algorithm next to released centers reads :func:`answered_by`, so a run
# whose own structure did not form (FriendlyCore's core) is never titled with the algorithm's name
# alone when its backup (the private grid coreset) released the centers (issue 33, item 4). Read from
# the released trace only: the fallback step's ``used`` bit and ``method``, private outputs.

#: The backup's short name, for a fallback step whose ``method`` mentions a grid coreset.
GRID_CORESET = "grid coreset"


@dataclass(frozen=True)
class Answer:
    """Who released a run's centers.

    Attributes
    ----------
    algorithm : str
        The title of the algorithm that was run (the registered spec's).
    backup : str or None
        The backup's short name when the backup answered (e.g. "grid coreset"), else None.
    released : bool
        Whether any centers were released (False: the output is ⊥).
    """

    algorithm: str
    backup: str | None
    released: bool

    @property
    def who(self) -> str:
        """Who answered, e.g. "FriendlyCore clustering" or "grid coreset (FriendlyCore clustering's
        backup)"; "no one (⊥)" when nothing was released."""
        if not self.released:
            return "no one (⊥)"
        if self.backup is not None:
            return f"{self.backup} ({self.algorithm}'s backup)"
        return self.algorithm

    @property
    def own(self) -> bool:
        """The algorithm itself answered (not its backup, not ⊥)."""
        return self.released and self.backup is None

    def label(self, k: int | None = None) -> str:
        """One line for a title or a legend: "<who>: k private centers" (or ": no centers (⊥)")."""
        if not self.released:
            return f"{self.algorithm}: no centers (⊥)"
        return f"{self.who}: {k} private centers" if k is not None else self.who


def _title(name: str | None) -> str:
    if not name:
        return "the algorithm"
    try:
        return get(name).title
    except ValueError:
        return str(name)


def backup_name(method: Any) -> str:
    """A fallback step's ``method`` in a few words ("grid coreset (quadtree) + weighted k-means" →
    "grid coreset")."""
    text = str(method or "backup")
    return GRID_CORESET if GRID_CORESET in text else text


def answered_by(result: Any, algorithm: str | None = None) -> Answer:
    """Who released ``result``'s centers (see the module docstring); ``algorithm`` names the
    registered algorithm when the result does not (a spec's ``private`` called directly)."""
    title = _title(getattr(result, "algorithm", None) or algorithm)
    if result.centers is None:
        return Answer(title, None, False)
    fb = next((s for s in getattr(result, "trace", ()) or () if s.name == "fallback"), None)
    if fb is not None and bool(fb.data.get("used")):
        return Answer(title, backup_name(fb.data.get("method")), True)
    return Answer(title, None, True)



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
                  simulation=is_simulation(rng))


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


def markdown_table() -> str:
    """The README's algorithm table: one row per registered algorithm, in rank order."""
    rows = ["| `dpviz.run(name, …)` | algorithm | budget | paper |", "|---|---|---|---|"]
    for spec in algorithms():
        paper = spec.paper.replace("|", "/")
        rows.append(f"| `{spec.name}` | {spec.title} | {spec.budget_kind} | {paper} |")
    return "\n".join(rows)


__all__ = [
    "LEDGER_RTOL", "AlgorithmSpec", "Answer", "BudgetPlan", "Calibration", "DataShape",
    "LedgerOverTargetError", "ParamHint",
    "Public", "algorithms", "answered_by", "applicability", "budget_from_rho", "calibrate", "check_hinted",
    "check_ledger", "check_public", "get", "hint", "markdown_table", "param_fields", "plan", "plan_at_budget",
    "reaccount", "register", "releasable", "run", "unregister",
]
