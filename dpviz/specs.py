"""Specs and names: what a registered algorithm is (:class:`AlgorithmSpec`, its hinted parameter
dataclass, :class:`Public` inputs), the registry of them with discovery, names with parameters,
and who answered a run (:func:`answered_by`).

One of the three parts of :mod:`dpviz.registry` (issue 45: split by concept): this one, the
calibration and plan (:mod:`dpviz.planning`) and the run (:mod:`dpviz.runner`). Import the names
from :mod:`dpviz.registry`, which re-exports all three.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpviz._validation import check_scalar
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.plan import BudgetPlan
from dpviz.result import Result

BudgetKind = Literal["zcdp", "pure", "approx", "none"]
Budget = ZCDP | ApproxDP

#: Packages whose modules are imported to find registered families.
FAMILY_PACKAGES: tuple[str, ...] = ("dpviz.clustering", "dpviz.mixtures", "dpviz.generative")


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


def markdown_table() -> str:
    """The README's algorithm table: one row per registered algorithm, in rank order."""
    rows = ["| `dpviz.run(name, …)` | algorithm | budget | paper |", "|---|---|---|---|"]
    for spec in algorithms():
        paper = spec.paper.replace("|", "/")
        rows.append(f"| `{spec.name}` | {spec.title} | {spec.budget_kind} | {paper} |")
    return "\n".join(rows)
