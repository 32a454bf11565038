"""Published ε of real deployments of differential privacy, to place a user's ε among them.

Issue 27 ("things no peer has"): the chosen ε beside published real deployments' ε, with sources.
Every entry below states the number as its source does, where the source states it
(``source_read``), its privacy unit and neighbouring relation in plain words, and a caveat.
The numbers are public facts: nothing here reads any data.

The units differ from dpviz's: dpviz's guarantee is for one row of the user's data (add/remove,
``docs/privacy.md`` §0); the deployments protect a person (the US Census Bureau), a user-day
(Apple, Google) or one action (Meta), and Apple's are *local* DP (each device randomises its own
report) while the others are *central* (a curator adds noise to aggregates). So the comparison is
context for a number, never a like-for-like ranking; :func:`sentence` says so every time.

Not listed: Google's Chrome telemetry (RAPPOR) and Microsoft's Windows telemetry. No source
stating their ε could be read here, so (per the rule that every number has a source read) they
are left out; the issue's "Google's telemetry" is represented by Google's two COVID-19 search
datasets, whose ε their reports state.

The US Census Bureau's 2020 redistricting release is accounted in zCDP; its ε is not typed in
but converted from the production code's ρ with dpviz's own tight conversion
(:func:`dpviz.privacy.accounting.zcdp_to_dp`, tested against dp-accounting).

References: Desfontaines, "A list of real-world uses of differential privacy" (2021–);
US Census Bureau, DAS 2020 Redistricting Production Code; Bavadekar et al., arXiv:2009.01265;
Bavadekar et al., arXiv:2107.01179.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpviz.privacy.accounting import zcdp_to_dp

__all__ = [
    "ABOUT_FACTOR",
    "CENSUS_DELTA",
    "CENSUS_RHO",
    "DEPLOYMENTS",
    "Deployment",
    "beside",
    "docs_table",
    "sentence",
]

#: ``beside`` calls a deployment "about the same as your ε" when the two are within this factor.
ABOUT_FACTOR = 1.2

#: ρ of the 2020 Census redistricting persons file: ``rho = 1 / global_scale ** 2``
#: (source/programs/engine/budget.py) with ``global_scale = 339/542``
#: (source/configs/production/pl94/person_default.ini).
CENSUS_RHO = (542 / 339) ** 2
#: ``approx_dp_delta = 1e-10`` (source/configs/production/prod_default.ini).
CENSUS_DELTA = 1e-10

_DESFONTAINES = "https://desfontain.es/privacy/real-world-differential-privacy.html"
_CENSUS_CODE = "https://github.com/uscensusbureau/DAS_2020_Redistricting_Production_Code"


@dataclass(frozen=True)
class Deployment:
    """One published deployment of differential privacy and the ε its source states.

    Attributes
    ----------
    organization, product, year:
        Who published what, and when (the year of the release or of the document stating ε).
    model:
        ``"central"`` (a curator adds noise to aggregates) or ``"local"`` (each device randomises
        its own report before it leaves the device).
    epsilon, delta:
        The (ε, δ) of the deployment per its privacy unit; ``delta`` is None for pure ε-DP.
    rho:
        The zCDP ρ when the source states the budget as zCDP (``epsilon`` is then converted
        from it), else None.
    privacy_unit:
        What one unit of protection is, in plain words (a person, a user-day, one action).
    neighbours:
        The neighbouring relation in plain words.
    source_url, source_read:
        Where the number is stated, and exactly what there states it.
    caveat:
        What the number does not cover or where it may differ from other published figures.
    """

    organization: str
    product: str
    year: int
    model: Literal["central", "local"]
    epsilon: float
    delta: float | None
    rho: float | None
    privacy_unit: str
    neighbours: str
    source_url: str
    source_read: str
    caveat: str

    def __post_init__(self) -> None:
        if self.model not in ("central", "local"):
            raise ValueError(f"The 'model' of a Deployment must be 'central' or 'local'. Got {self.model!r}.")
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"The 'epsilon' of a Deployment must be a float in (0, inf). "
                             f"Got {self.epsilon!r}.")
        if self.delta is not None and not 0.0 < self.delta < 1.0:
            raise ValueError(f"The 'delta' of a Deployment must be None or in (0, 1). Got {self.delta!r}.")


_APPLE_READ = ("Desfontaines' list, Apple section: Apple uses local DP, all features use ε-DP "
               "\"with a privacy unit of user-day\"; {feature} uses ε = {eps:g} (citing Apple's "
               "\"Differential Privacy Overview\").")
_APPLE_CAVEAT = ("Local DP: each device randomises its own report, so noise is far larger per ε "
                 "than in a central release. Apple documents per-event budgets; the list translated "
                 "them to a user-day. Over many days the per-user total grows.")


def _apple(feature: str, eps: float) -> Deployment:
    return Deployment(
        organization="Apple", product=feature, year=2017, model="local",
        epsilon=eps, delta=None, rho=None, privacy_unit="one user's data on one day (user-day)",
        neighbours="one user's day of data changed", source_url=_DESFONTAINES,
        source_read=_APPLE_READ.format(feature=feature, eps=eps), caveat=_APPLE_CAVEAT)


DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment(
        organization="US Census Bureau",
        product="2020 Census Redistricting Data (P.L. 94-171), persons file",
        year=2021, model="central",
        epsilon=zcdp_to_dp(CENSUS_RHO, CENSUS_DELTA), delta=CENSUS_DELTA, rho=CENSUS_RHO,
        privacy_unit="one person (their census record)",
        neighbours="one person's record changed (bounded)",
        source_url=_CENSUS_CODE,
        source_read=("global_scale = 339/542 in source/configs/production/pl94/person_default.ini; "
                     "rho = 1 / global_scale ** 2 in source/programs/engine/budget.py; "
                     "approx_dp_delta = 1e-10 in source/configs/production/prod_default.ini. "
                     "ε is converted here from ρ at δ = 1e-10 with dpviz's tight zCDP conversion."),
        caveat=("The housing-units file has its own budget, not included here. ε is dpviz's "
                "conversion of the code's ρ; the Bureau's own ε figure may differ by the "
                "conversion used."),
    ),
    _apple("QuickType suggestions", 16.0),
    _apple("Emoji suggestions", 4.0),
    _apple("Lookup hints", 8.0),
    _apple("Health Type Usage", 2.0),
    Deployment(
        organization="Google", product="COVID-19 Search Trends symptoms dataset", year=2020,
        model="central", epsilon=1.68, delta=None, rho=None,
        privacy_unit="one user's symptom searches on one day (user-day)",
        neighbours="one user's day of symptom searches added or removed",
        source_url="https://arxiv.org/abs/2009.01265",
        source_read=("Abstract of arXiv:2009.01265: the anonymization protects the daily symptom "
                     "search activity of every user with ε-differential privacy for ε = 1.68."),
        caveat="Per user-day: a user searching on many days is protected per day, not in total.",
    ),
    Deployment(
        organization="Google", product="COVID-19 Vaccination Search Insights", year=2021,
        model="central", epsilon=2.19, delta=1e-5, rho=None,
        privacy_unit="one user's vaccination-related searches on one day (user-day)",
        neighbours="one user's day of vaccination-related searches added or removed",
        source_url="https://arxiv.org/abs/2107.01179",
        source_read=("Abstract of arXiv:2107.01179: every user's daily search activity related to "
                     "COVID-19 vaccinations is protected with (ε, δ)-DP for ε = 2.19 and δ = 1e-5."),
        caveat="Per user-day: a user searching on many days is protected per day, not in total.",
    ),
    Deployment(
        organization="Facebook (Meta)", product="Full URLs Data Set", year=2020, model="central",
        epsilon=0.45, delta=1e-5, rho=None,
        privacy_unit="one action of one type (e.g. one view or share of a URL)",
        neighbours="one user action added or removed, per type of action",
        source_url=_DESFONTAINES,
        source_read=("Desfontaines' list, Facebook section: Full URLs Data Set, (ε, δ) = (0.45, 1e-5) "
                     "per type of action, the action-level unit chosen to protect 99% of users; "
                     "across all metrics 96.6% of users are protected at ε = 1.453, δ = 1e-5."),
        caveat=("Action-level: a user with many actions is protected less. Across all metrics, "
                "96.6% of users are protected at ε = 1.453, δ = 1e-5."),
    ),
)


def _relation(eps: float, d: Deployment) -> str:
    ratio = d.epsilon / eps
    if ratio > ABOUT_FACTOR:
        return f"above your ε ({ratio:.3g}× yours)"
    if ratio < 1.0 / ABOUT_FACTOR:
        return f"below your ε ({ratio:.2g}× yours)"
    return "about the same as your ε"


def _check_eps(eps: float, where: str) -> float:
    eps = float(eps)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"The 'eps' parameter of {where} must be a float in (0, inf). Got {eps!r} instead.")
    return eps


def beside(eps: float) -> list[tuple[Deployment, str]]:
    """Each deployment with how its ε relates to ``eps``, smallest ε first.

    The relation is "above your ε (r× yours)", "below your ε (r× yours)" or "about the same as
    your ε" (within a factor :data:`ABOUT_FACTOR`). Ties in ε keep the order of
    :data:`DEPLOYMENTS`. The units differ (see the module docstring): this is context, not a
    like-for-like comparison.
    """
    eps = _check_eps(eps, "beside")
    ordered = sorted(DEPLOYMENTS, key=lambda d: d.epsilon)
    return [(d, _relation(eps, d)) for d in ordered]


def _name(d: Deployment) -> str:
    return f"{d.organization}'s {d.product} (ε = {d.epsilon:.3g} per {_unit_short(d)})"


def _unit_short(d: Deployment) -> str:
    if "user-day" in d.privacy_unit:
        return "user-day"
    if d.privacy_unit.startswith("one person"):
        return "person"
    return "action"


def sentence(eps: float) -> str:
    """One honest sentence placing a row-level ``eps`` among :data:`DEPLOYMENTS`.

    Names how many published ε are above, about the same and below, the nearest one on each
    side, and says that the units (a person, a user-day, one action; local vs central) differ
    from dpviz's (one row of the user's data), so the comparison is context only.
    """
    eps = _check_eps(eps, "sentence")
    pairs = beside(eps)
    n = len(pairs)
    above = [d for d, r in pairs if r.startswith("above")]
    about = [d for d, r in pairs if r.startswith("about")]
    below = [d for d, r in pairs if r.startswith("below")]
    parts = []
    if above:
        count = f"all {n}" if len(above) == n else f"{len(above)} of the {n}"
        parts.append(f"smaller than {count} published ε listed here (nearest: {_name(above[0])})")
    if about:
        named = "; ".join(_name(d) for d in about)
        parts.append(f"about the same as {named}" if len(about) == 1
                     else f"about the same as {len(about)} ({named})")
    if below:
        count = f"all {n} published ε listed here" if len(below) == n else str(len(below))
        parts.append(f"larger than {count} (nearest: {_name(below[-1])})")
    placed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (f"Your ε = {eps:.3g} per row is {placed}. Their units differ from yours (a person, a "
            "user-day or one action; local or central DP) while yours is one row of your data, "
            "so this is context for the number, not a like-for-like comparison.")


def _fmt_delta(d: Deployment) -> str:
    return "0 (pure ε-DP)" if d.delta is None else f"{d.delta:.0e}"


def docs_table() -> str:
    """The Markdown table of :data:`DEPLOYMENTS` in ``docs/privacy.md`` ("ε in the wild")."""
    lines = ["| Organization | Product | Year | Model | ε | δ | Privacy unit | Source |",
             "|---|---|---|---|---|---|---|---|"]
    for d in DEPLOYMENTS:
        eps = f"{d.epsilon:.3g}" + (f" (ρ = {d.rho:.4g} zCDP)" if d.rho is not None else "")
        lines.append(f"| {d.organization} | {d.product} | {d.year} | {d.model} | {eps} | "
                     f"{_fmt_delta(d)} | {d.privacy_unit} | <{d.source_url}> |")
    return "\n".join(lines)
