"""Budget splits for FC_Clustering: the paper's formal constants, and a practical optimizer.

Every split is a function of PUBLIC quantities only (declared n, t, k, d, ρ, δ, r_min, Λ): never
of the data, the true core size or the true cluster sizes. A split is a set of fractions of the
caller's (ρ, δ), one per private sub-call:

========== ============================================== =========== ==========
key        sub-call                                       ledger node unit
========== ============================================== =========== ==========
match_core FriendlyCore(match_1/7) on the t tuples        FC_k...    tuple
find_diam  the k FindDiam calls (one per coordinate)      FC_AvgOrdTup tuple
dist_core  FriendlyCore(dist_r1..rk) on ordered tuples    FC_AvgOrdTup tuple
tuple_avg  FriendlyOrdTupAvg                              FC_AvgOrdTup tuple
lloyd      NoisyLloydStep (parallel over clusters)        root        row
fallback   reserved for the fallback branch               root        row
========== ============================================== =========== ==========

A split is resolved ONCE per run into an :class:`FCBudget` (:func:`resolve_budget`): the run's
(ρ, δ) split by :meth:`~dpviz.privacy.budget.ZCDP.split` into the parts above and the ledger
nodes that group them (FC_kTupleClustering, FC_AvgOrdTup). The pipeline, the streamed pipeline,
the feasibility margins and the registry's guarantee all read that object; no other code
multiplies a fraction by ρ.

References: Tsfadia et al. 2022, §5.2 (FC_kTupleClustering, FC_AvgOrdTup, FC_Clustering); the
engineer's note §4.3 (budget trees) and §4.4 (the formal split is infeasible at t = 200).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from dpviz.averaging.diameter import find_diam_calls
from dpviz.core.filters import expected_margin, expected_margin_known
from dpviz.privacy.budget import ZCDP

FRACTION_KEYS = ("match_core", "find_diam", "dist_core", "tuple_avg", "lloyd", "fallback")
#: The parts of FC_kTupleClustering (tuple-level) and of FC_AvgOrdTup inside it; the rest is row-level.
TUPLE_KEYS = ("match_core", "find_diam", "dist_core", "tuple_avg")
AVG_ORD_KEYS = ("find_diam", "dist_core", "tuple_avg")
ROW_KEYS = ("lloyd", "fallback")
PRESETS = ("paper", "practical", "reference")

#: Margin names (one per FriendlyCore-like test) in the ``feasibility`` trace step.
MARGIN_MATCH = "FriendlyCore(match_1/7)"
MARGIN_DIST = "FriendlyCore(dist_r1..rk)"
MARGIN_DIAM = "FindDiam (CheckDiam at half the core)"

#: δ fractions of every preset: the paper's halvings (FC_Clustering δ/2 → FC_kTupleClustering
#: δ/2 → match core δ/4, FC_AvgOrdTup δ/4 → dist core δ/8, FriendlyOrdTupAvg δ/8; Lloyd δ/2).
#: FindDiam and the fallback are pure zCDP (δ = 0).
PAPER_DELTA = {"match_core": 0.25, "dist_core": 0.125, "tuple_avg": 0.125, "lloyd": 0.5}


@dataclass(frozen=True)
class FCSplit:
    """A complete, validated budget split and the utility-only knobs of FC_Clustering.

    Attributes
    ----------
    rho, delta : mapping key → fraction of the caller's ρ (δ); each sums to ≤ 1 (exactly 1 for ρ).
    diam_beta : float
        β handed to each per-coordinate ``find_diam`` (utility only; the search's test slack).
    radius_factor : float ≥ 1
        The radii r_j from FindDiam are multiplied by this (post-processing of private values).
    lloyd_radius_factor : float
        NoisyLloydStep's FriendlyAvg radius, as a multiple of Λ (paper: 2; 1 is also sound).
    nhat_fraction : float
        FriendlyOrdTupAvg's share for n̂ (paper: 0.1).
    core_guess : float
        Public guess of the match-core size as a fraction of t (for the dist-core margin only).
    known_size : bool
        Run both FriendlyCore filters (match core, dist core) as the known-size zCDPFilter with
        n̄ = t (:func:`dpviz.core.filters.zcdp_filter`, "Known size"): t is public and every tuple
        database of the row-level statement has ≤ t tuples, so n̂ need not be estimated (no ρ₁,
        no δ/2 for n̂ ≥ n) and the threshold is the exact Gaussian tail. The paper's preset keeps
        the estimated n̂ (False). Changes utility only; each filter still spends its (ρ, δ).
    preset : str
    """

    rho: Mapping[str, float]
    delta: Mapping[str, float] = field(default_factory=lambda: dict(PAPER_DELTA))
    diam_beta: float = 0.2
    radius_factor: float = 4.0
    lloyd_radius_factor: float = 1.0
    nhat_fraction: float = 0.1
    core_guess: float = 0.9
    known_size: bool = False
    preset: str = "custom"

    def __post_init__(self) -> None:
        for what, fr in (("rho", self.rho), ("delta", self.delta)):
            unknown = set(fr) - set(FRACTION_KEYS)
            if unknown:
                raise ValueError(
                    f"Unknown {what} fraction(s) {sorted(unknown)} in an FC_Clustering split; "
                    f"the parts are {list(FRACTION_KEYS)}."
                )
            for key, v in fr.items():
                if not (isinstance(v, (int, float)) and math.isfinite(v) and 0 <= v <= 1):
                    raise ValueError(f"The {what} fraction '{key}' must be in [0, 1]. Got {v!r}.")
            if sum(fr.values()) > 1 + 1e-9:
                raise ValueError(f"The {what} fractions must sum to at most 1. Got {sum(fr.values()):g}.")
        if abs(sum(self.rho.values()) - 1.0) > 1e-9:
            raise ValueError(
                f"The rho fractions of an FC_Clustering split must sum to 1 (the whole budget is "
                f"accounted). Got {sum(self.rho.values()):g}."
            )
        for key in ("match_core", "dist_core", "tuple_avg", "lloyd"):
            if self.rho.get(key, 0.0) <= 0 or self.delta.get(key, 0.0) <= 0:
                raise ValueError(
                    f"The split must give the '{key}' part a positive share of rho and delta. "
                    f"Got rho={self.rho.get(key, 0.0)!r}, delta={self.delta.get(key, 0.0)!r}."
                )
        if self.rho.get("find_diam", 0.0) <= 0:
            raise ValueError("The split must give 'find_diam' a positive share of rho.")
        if not 0 < self.diam_beta < 1:
            raise ValueError(f"diam_beta must be in (0, 1). Got {self.diam_beta!r}.")
        if not self.radius_factor >= 1:
            raise ValueError(f"radius_factor must be >= 1. Got {self.radius_factor!r}.")
        if not self.lloyd_radius_factor >= 1:
            raise ValueError(
                f"lloyd_radius_factor must be >= 1 (FriendlyAvg needs every pair of rows in the "
                f"Λ-ball to be dist_r-friendly, which holds for r ≥ Λ). Got {self.lloyd_radius_factor!r}."
            )
        if not 0 < self.nhat_fraction < 1:
            raise ValueError(f"nhat_fraction must be in (0, 1). Got {self.nhat_fraction!r}.")

    def as_dict(self) -> dict[str, Any]:
        return dict(rho=dict(self.rho), delta=dict(self.delta), diam_beta=self.diam_beta,
                    radius_factor=self.radius_factor, lloyd_radius_factor=self.lloyd_radius_factor,
                    nhat_fraction=self.nhat_fraction, core_guess=self.core_guess,
                    known_size=self.known_size, preset=self.preset)


@dataclass(frozen=True)
class FCBudget:
    """FC_Clustering's budget, resolved once: the run's (ρ, δ), its split and every part.

    Built by :meth:`of` (or :func:`resolve_budget`) with :meth:`ZCDP.split
    <dpviz.privacy.budget.ZCDP.split>`; every consumer (the in-memory and streamed pipelines,
    :func:`budget_margins`, the registry's guarantee) reads its parts instead of multiplying
    fractions by ρ itself.

    Attributes
    ----------
    total : ZCDP
        The (ρ, δ) the pipeline runs on (the caller's ρ minus a DP size count's share, if any).
    split : FCSplit
    parts : mapping key → ZCDP
        One budget per FRACTION_KEYS part (``total.split(split.rho, split.delta)``).
    groups : mapping name → ZCDP
        The ledger nodes that group parts: "tuple" (FC_kTupleClustering: TUPLE_KEYS), "avg_ord"
        (FC_AvgOrdTup: AVG_ORD_KEYS) and "row" (ROW_KEYS); each is ρ·Σ fractions, δ·Σ fractions.
    """

    total: ZCDP
    split: FCSplit
    parts: Mapping[str, ZCDP]
    groups: Mapping[str, ZCDP]

    @classmethod
    def of(cls, rho: float, delta: float, split: FCSplit) -> FCBudget:
        total = ZCDP(rho, delta)
        parts = total.split({key: split.rho.get(key, 0.0) for key in FRACTION_KEYS},
                            {key: split.delta.get(key, 0.0) for key in FRACTION_KEYS})

        def group(keys: tuple[str, ...]) -> tuple[float, float]:
            return (sum(split.rho.get(key, 0.0) for key in keys),
                    sum(split.delta.get(key, 0.0) for key in keys))

        tup, avg, row = group(TUPLE_KEYS), group(AVG_ORD_KEYS), group(ROW_KEYS)
        # Two splits because the groups nest (avg_ord ⊂ tuple): each is a valid split of the total.
        groups = total.split({"tuple": tup[0], "row": row[0]}, {"tuple": tup[1], "row": row[1]})
        groups |= total.split({"avg_ord": avg[0]}, {"avg_ord": avg[1]})
        return cls(total, split, parts, groups)

    @property
    def tuple_level(self) -> ZCDP:
        """FC_kTupleClustering's node (unit: tuple)."""
        return self.groups["tuple"]

    @property
    def avg_ord(self) -> ZCDP:
        """FC_AvgOrdTup's node: FindDiam, FriendlyCore(dist_r1..rk), FriendlyOrdTupAvg."""
        return self.groups["avg_ord"]

    @property
    def row_level(self) -> ZCDP:
        """The row-level parts: the Lloyd step and the fallback reserve."""
        return self.groups["row"]

    def find_diam_per_coordinate(self, k: int) -> float:
        """ρ of each of the k per-coordinate FindDiam calls (FC_AvgOrdTup step 2)."""
        return self.parts["find_diam"].rho / k


def resolve_budget(
    preset: str, *, rho: float, delta: float, t: int, k: int, r_min: float, radius: float,
    fallback: bool = True, fractions: Mapping[str, float] | None = None, **overrides: Any,
) -> FCBudget:
    """The :class:`FCBudget` of a run: :func:`resolve_split` (public inputs only), then the parts."""
    split = resolve_split(preset, fractions=fractions, t=t, k=k, rho=rho, delta=delta, r_min=r_min,
                          radius=radius, fallback=fallback, **overrides)
    return FCBudget.of(rho, delta, split)


def diam_margin(c: float, rho: float, beta: float, q: int) -> float:
    """Feasibility of one CheckDiam probe of FindDiam, in noise sds.

    A probe with budget ρ′ = ρ/q and β′ = β/q accepts r when â ≥ c − √(4 ln(1/β′)/ρ′) (note §3.7,
    with a the mean friend count); â has sd √(2/ρ′). The margin (c/2 − slack)/sd says how surely a
    radius at which the average row has fewer than half the core as friends is rejected. Below 0,
    the slack swallows the test and the search drifts to r_min.
    """
    rp, bp = rho / q, beta / q
    slack = math.sqrt(4.0 * math.log(1.0 / bp) / rp)
    return (c / 2.0 - slack) / math.sqrt(2.0 / rp)


#: Which test reads which part of the split (one margin per test).
MARGIN_PART = {MARGIN_MATCH: "match_core", MARGIN_DIST: "dist_core", MARGIN_DIAM: "find_diam"}


def _margin(name: str, part: ZCDP, *, t: int, c: float, k: int, beta: float, q: int,
            known: bool = False) -> float:
    """The expected margin of test ``name`` given its part of the budget (the one formula per test,
    read by :func:`budget_margins` and by the optimizer's candidate fractions). ``known``: the
    FriendlyCore filters run with the public size bound n̄ = t (FCSplit.known_size)."""
    if name == MARGIN_MATCH:
        return (expected_margin_known(t, t, part.rho, part.delta) if known
                else expected_margin(t, part.rho, part.delta))
    if name == MARGIN_DIST:
        return (expected_margin_known(c, t, part.rho, part.delta) if known
                else expected_margin(c, part.rho, part.delta))
    return diam_margin(c, part.rho / k, beta, q)


def budget_margins(budget: FCBudget, *, t: int, k: int, r_min: float, radius: float,
                   base: float = 1.5) -> dict[str, float]:
    """Expected margins (in noise sds) of every FriendlyCore-like test, from public values only.

    The match core sees t tuples; the dist core and FindDiam see a public guess
    c = core_guess · t (the true core size is private). Uses ``expected_margin`` (§4.4).
    """
    split = budget.split
    c = max(1.0, split.core_guess * t)
    q = max(1, find_diam_calls(r_min, 2.0 * radius, base))
    return {name: _margin(name, budget.parts[key], t=t, c=c, k=k, beta=split.diam_beta, q=q,
                          known=split.known_size)
            for name, key in MARGIN_PART.items()}


def margins(
    split: FCSplit, *, t: int, k: int, rho: float, delta: float, r_min: float, radius: float,
    base: float = 1.5,
) -> dict[str, float]:
    """:func:`budget_margins` of ``split`` at (ρ, δ)."""
    return budget_margins(FCBudget.of(rho, delta, split), t=t, k=k, r_min=r_min, radius=radius,
                          base=base)


def paper_split(*, fallback: bool = True) -> FCSplit:
    """The formal constants (§5.2.5, §5.2.3, §5.2.4): ρ/2 tuples + ρ/2 Lloyd; inside
    FC_kTupleClustering ρ/2 match core + ρ/2 FC_AvgOrdTup; inside FC_AvgOrdTup 0.05/0.05/0.9.
    With the fallback on, the paper's experiments reserved 1% of ρ (0.99 + 0.01, §6.2)."""
    s = 0.99 if fallback else 1.0
    rho = {"match_core": s * 0.25, "find_diam": s * 0.25 * 0.05, "dist_core": s * 0.25 * 0.05,
           "tuple_avg": s * 0.25 * 0.9, "lloyd": s * 0.5, "fallback": 1.0 - s}
    # The paper's FindDiam β: β/(2k) of a β it does not report; note §5 default 0.05 (k-free
    # here because find_diam_calls already splits over the probes).
    return FCSplit(rho=rho, delta=dict(PAPER_DELTA), diam_beta=0.05, radius_factor=1.0,
                   lloyd_radius_factor=2.0, nhat_fraction=0.1, core_guess=0.9, preset="paper")


def reference_split(*, fallback: bool = True) -> FCSplit:
    """The fixed split that worked on a reference run at ρ = 1, t = 200 (issue #3):
    0.4 match core, 0.3 dist core, 0.1 FindDiam, 0.1 tuple averages, 0.1 Lloyd (scaled to
    leave the fallback its reserve), CheckDiam β 0.2, radii × 4."""
    fb = 0.05 if fallback else 0.0
    base = {"match_core": 0.4, "find_diam": 0.1, "dist_core": 0.3, "tuple_avg": 0.1, "lloyd": 0.1}
    tot = sum(base.values())
    rho = {key: (1.0 - fb) * v / tot for key, v in base.items()} | {"fallback": fb}
    return FCSplit(rho=rho, delta=dict(PAPER_DELTA), diam_beta=0.2, radius_factor=4.0,
                   lloyd_radius_factor=1.0, preset="reference")


#: Practical optimizer settings (chosen on tuning seeds, not on benchmark seeds; see docs).
_TARGET_MARGIN = {MARGIN_MATCH: 4.0, MARGIN_DIST: 4.0, MARGIN_DIAM: 1.5}
#: The Lloyd step's floor is small because the row-level statement converts the row-level part
#: on its own and adds its ε (dpviz.privacy.accounting.row_level_statement): ε grows like √ρ of a
#: part, so a small row-level share costs a large slice of ε, while FriendlyCore's tests (group
#: privacy: ≈ 4× their ρ) starve. At row-level ε = 3, δ = 10⁻⁶, t = 2000 a floor of 0.15 left the
#: tuple-level part ρ = 0.0252 (match margin −0.73 sd), 0.05 leaves 0.0290 (−0.23 sd)
#: (docs/fc_clustering.md). The Lloyd step's noise, σ ∝ k/(n√ρ), is small at the sizes where the
#: core forms; once the tests reach their targets it gets 2/3 of the surplus as before.
_MIN_SHARE = {"tuple_avg": 0.1, "lloyd": 0.05}
_FALLBACK_SHARE = 0.05


def _fraction_needed(reaches: Callable[[float], bool]) -> float:
    """Smallest fraction f ∈ (0, 1] with reaches(f) (margins increase with f, so reaches is
    monotone); 1.0+ (i.e. 2.0) when even f = 1 falls short."""
    if not reaches(1.0):
        return 2.0
    lo, hi = 1e-6, 1.0
    for _ in range(24):  # relative precision (10^6)^(2^-24) ≈ 1 + 1e-6
        mid = math.sqrt(lo * hi)
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi


@functools.lru_cache(maxsize=8192)
def _part_bracket(name: str, target: float, delta: float, t: int, c: float, k: int, beta: float,
                  q: int, known: bool = False) -> tuple[float, float]:
    """(lo, hi): part budgets ρ_p with margin(lo) < ``target`` ≤ margin(hi) for test ``name``,
    hi/lo ≤ 1 + 1e-9 (lo = 0 or hi = inf at the ends of 10^±30).

    A margin depends on its part's ρ only, not on the total, so the optimizer's runs at the many
    totals a calibration tries (:func:`dpviz.registry.calibrate`) share these (cached)."""
    def margin(r: float) -> float:
        return _margin(name, ZCDP(r, delta), t=t, c=c, k=k, beta=beta, q=q, known=known)

    lo, hi = 1e-30, 1e30
    if margin(hi) < target:
        return hi, math.inf
    if margin(lo) >= target:
        return 0.0, lo
    while hi / lo > 1.0 + 1e-9:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if margin(mid) >= target else (mid, hi)
    return lo, hi


def practical_split(
    *, t: int, k: int, rho: float, delta: float, r_min: float, radius: float,
    fallback: bool = True, base: float = 1.5,
) -> FCSplit:
    """:func:`_practical_split` (cached), as a fresh object: FCSplit is frozen but its ``rho`` and
    ``delta`` are plain dicts, so the cached split is never handed out where a caller (on any
    thread) could change the one every later run reads."""
    split = _practical_split(t=t, k=k, rho=rho, delta=delta, r_min=r_min, radius=radius,
                             fallback=fallback, base=base)
    return dataclasses.replace(split, rho=dict(split.rho), delta=dict(split.delta))


@functools.lru_cache(maxsize=256)
def _practical_split(
    *, t: int, k: int, rho: float, delta: float, r_min: float, radius: float,
    fallback: bool = True, base: float = 1.5,
) -> FCSplit:
    """Optimizer: pick the fractions from public (t, k, ρ, δ, r_min, Λ) to maximize the worst
    predicted margin of the FriendlyCore calls and FindDiam, then give what is left to the
    averages.

    1. For a common level s, each test needs the smallest fraction reaching s·target (targets:
       4 sd for both FriendlyCore calls, 1.5 sd for FindDiam's probes).
    2. If the needs at s = 1 fit beside the minimum shares of the tuple averages and the Lloyd
       step (and the fallback reserve), the surplus goes 1/3 to the tuple averages and 2/3 to
       the Lloyd step (whose noise sets the final accuracy). Otherwise s is lowered by bisection
       until they fit (max–min of the margins relative to their targets).

    Privacy
    -------
    Any split is sound (composition); this one reads no data, only public parameters.
    (Cached: the same public inputs give the same frozen split.)
    """
    fb = _FALLBACK_SHARE if fallback else 0.0
    proto = FCSplit(rho={"match_core": 0.25, "find_diam": 0.25, "dist_core": 0.25,
                         "tuple_avg": 0.125, "lloyd": 0.125})
    c = max(1.0, proto.core_guess * t)
    q = max(1, find_diam_calls(r_min, 2.0 * radius, base))
    total = ZCDP(rho, delta)

    public = {"t": t, "c": c, "k": k, "beta": proto.diam_beta, "q": q, "known": True}

    def fraction(name: str, target: float) -> float:
        # the part test ``name`` reads if it got fraction f of the total (ZCDP.split's products)
        part_delta = total.delta * PAPER_DELTA.get(MARGIN_PART[name], 0.0)
        lo, hi = _part_bracket(name, target, part_delta, **public)

        def reaches(f: float) -> bool:
            """margin(part) ≥ target, as evaluating it would say: from the bracket (margins
            increase with ρ) unless the part falls inside it."""
            rho = total.rho * f
            if lo < rho < hi:
                return _margin(name, ZCDP(rho, part_delta), **public) >= target
            return rho >= hi
        return _fraction_needed(reaches)

    room = 1.0 - fb - sum(_MIN_SHARE.values())

    def needs(s: float) -> dict[str, float]:
        return {name: fraction(name, s * _TARGET_MARGIN[name]) for name in MARGIN_PART}

    need = needs(1.0)
    if sum(need.values()) > room:
        lo, hi = -3.0, 1.0  # a negative level: the best we can do is still below 0 sd
        for _ in range(16):  # margin level to ±6e-5 of the targets
            mid = (lo + hi) / 2
            if sum(needs(mid).values()) <= room:
                lo = mid
            else:
                hi = mid
        need = needs(lo)
        if sum(need.values()) > room:  # hopeless: even -3 sd does not fit; split room evenly
            need = {name: room / 3 for name in MARGIN_PART}
    surplus = room - sum(need.values())
    frac = {
        "match_core": need[MARGIN_MATCH],
        "find_diam": need[MARGIN_DIAM],
        "dist_core": need[MARGIN_DIST],
        "tuple_avg": _MIN_SHARE["tuple_avg"] + surplus / 3,
        "lloyd": _MIN_SHARE["lloyd"] + 2 * surplus / 3,
        "fallback": fb,
    }
    # Exact sum to 1 (float dust goes to the Lloyd step).
    frac["lloyd"] += 1.0 - sum(frac.values())
    return FCSplit(rho=frac, delta=dict(PAPER_DELTA), diam_beta=proto.diam_beta,
                   radius_factor=4.0, lloyd_radius_factor=1.0, known_size=True, preset="practical")


def suggest_n_tuples(
    split: FCSplit, *, n: int, k: int, rho: float, delta: float, r_min: float, radius: float,
    min_margin: float = 3.0,
) -> int | None:
    """Smallest t on a grid (pieces of ≥ 10k rows of the declared n) at which ``split`` reaches
    ``min_margin`` on every test, or None if none does (public values only)."""
    t_max = n // (10 * k)
    for t in (50, 75, 100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 5000):
        if t > t_max:
            return None
        m = margins(split, t=t, k=k, rho=rho, delta=delta, r_min=r_min, radius=radius)
        if min(m.values()) >= min_margin:
            return t
    return None


def resolve_split(
    preset: str, *, fractions: Mapping[str, float] | None = None, t: int, k: int, rho: float,
    delta: float, r_min: float, radius: float, fallback: bool = True, **overrides: Any,
) -> FCSplit:
    """The split for a preset name, with optional ρ ``fractions`` and knob overrides.

    ``fractions`` (a full ρ split over FRACTION_KEYS summing to 1) replaces the preset's ρ split;
    ``overrides`` may set diam_beta, radius_factor, lloyd_radius_factor, nhat_fraction, core_guess
    or delta (a δ split).
    """
    if preset == "paper":
        split = paper_split(fallback=fallback)
    elif preset == "reference":
        split = reference_split(fallback=fallback)
    elif preset == "practical":
        split = practical_split(t=t, k=k, rho=rho, delta=delta, r_min=r_min, radius=radius,
                                fallback=fallback)
    else:
        raise ValueError(f"The 'preset' parameter must be one of {list(PRESETS)}. Got {preset!r} instead.")
    kw = split.as_dict()
    if fractions is not None:
        fr = {key: float(fractions.get(key, 0.0)) for key in FRACTION_KEYS}
        unknown = set(fractions) - set(FRACTION_KEYS)
        if unknown:
            raise ValueError(f"Unknown fraction(s) {sorted(unknown)}; the parts are {list(FRACTION_KEYS)}.")
        kw["rho"] = fr
        kw["preset"] = f"{preset}+custom"
    bad = set(overrides) - {"diam_beta", "radius_factor", "lloyd_radius_factor", "nhat_fraction",
                            "core_guess", "delta"}
    if bad:
        raise ValueError(f"Unknown FC_Clustering option(s) {sorted(bad)}.")
    kw.update({key: v for key, v in overrides.items() if v is not None})
    if not fallback and kw["rho"].get("fallback", 0.0) > 0:
        raise ValueError("fallback=False but the split reserves a 'fallback' share of rho; set it to 0.")
    return FCSplit(**kw)


def smallest_feasible_rho(
    grid: Sequence[float], preset: str, *, t: int, k: int, delta: float, r_min: float, radius: float,
    fallback: bool = True,
) -> float | None:
    """The smallest ρ of ``grid`` (ascending) at which the predicted match-core margin is ≥ 0.

    Below it the noise on the t tuples' friend counts exceeds their slack, so the match core is
    not expected to form (:func:`margins`, §4.4). Public inputs only; None if no ρ of the grid
    reaches 0.
    """
    for rho in grid:
        budget = resolve_budget(preset, t=t, k=k, rho=rho, delta=delta, r_min=r_min, radius=radius,
                                fallback=fallback)
        if budget_margins(budget, t=t, k=k, r_min=r_min, radius=radius)[MARGIN_MATCH] >= 0:
            return float(rho)
    return None


def keep_probability(margin: float) -> float:
    """Φ(margin): the chance a fully friendly element survives its filter (for the app)."""
    return NormalDist().cdf(margin)
