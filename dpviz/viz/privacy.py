"""The privacy panel: the ledger as a sunburst/treemap, and the statement as display strings."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpviz.privacy.accounting import PrivacyStatement
from dpviz.privacy.ledger import Ledger
from dpviz.viz.text import wrap

#: Fill colour of a ledger node by its unit of privacy.
UNIT_COLORS: dict[str, str] = {"tuple": "#56B4E9", "row": "#E69F00"}

#: Children of a node are shrunk by this factor so float sums never exceed the parent
#: (plotly drops a branch whose children add up to more than it with branchvalues="total").
_SHRINK = 1.0 - 1e-9


def ledger_frame(ledger: Ledger) -> pd.DataFrame:
    """``ledger.to_rows()`` as a DataFrame with a ``display`` column for area charts.

    ``display`` is each row's share of the root ρ as drawn: children of a sequential node add
    up to it; children of a parallel node (which costs only its largest child) are scaled to
    fill it in proportion to their own ρ. ``rho`` stays the true accounted value.
    """
    rows = ledger.to_rows()
    df = pd.DataFrame(rows)
    kids: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        kids[r["parent"]].append(i)
    display = np.zeros(len(rows))

    def fill(i: int, value: float) -> None:
        display[i] = value
        ch = kids.get(rows[i]["id"], [])
        tot = sum(rows[c]["rho"] for c in ch)
        for c in ch:
            fill(c, value * _SHRINK * (rows[c]["rho"] / tot) if tot > 0 else 0.0)

    for root in kids[""]:
        fill(root, rows[root]["rho"])
    df["display"] = display
    return df


def _fmt(v: object, spec: str) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "—"
    return format(v, spec)


def ledger_figure(
    ledger: Ledger,
    *,
    kind: Literal["sunburst", "treemap"] = "sunburst",
    title: str | None = None,
    maxdepth: int | None = None,
) -> go.Figure:
    """Every spend of a run as a sunburst (or treemap); area = share of ρ.

    Hover shows ρ, δ, the noise scale σ, the sensitivity, the unit of privacy (row or tuple)
    and the mechanism or composition of each node. Parallel nodes (e.g. NoisyLloydStep: each
    row falls in one cluster) cost their largest child; their children are drawn filling the
    node in proportion to their own ρ, and the hover says "parallel composition".
    δ-only events (failure probabilities) have no area; their δ shows in the parent's hover.
    """
    df = ledger_frame(ledger)
    custom = np.c_[
        [_fmt(v, ".4g") for v in df["rho"]],
        [_fmt(v, ".3g") for v in df["delta"]],
        [_fmt(v, ".4g") for v in df["noise_scale"]],
        [_fmt(v, ".4g") for v in df["sensitivity"]],
        df["unit"].astype(str),
        df["mechanism"].astype(str),
        df["note"].fillna("").astype(str),
    ]
    hover = ("<b>%{label}</b><br>ρ = %{customdata[0]}<br>δ = %{customdata[1]}"
             "<br>σ = %{customdata[2]}<br>sensitivity = %{customdata[3]}"
             "<br>unit: %{customdata[4]}<br>%{customdata[5]}<br>%{customdata[6]}<extra></extra>")
    if kind not in ("sunburst", "treemap"):
        raise ValueError(f"The 'kind' parameter of ledger_figure must be 'sunburst' or 'treemap'. "
                         f"Got {kind!r} instead.")
    fill = [UNIT_COLORS.get(u, "#DDDDDD") if p else "white"
            for u, p in zip(df["unit"], df["parent"], strict=True)]
    trace = dict(type=kind, ids=df["id"], labels=df["label"], parents=df["parent"],
                 values=df["display"], branchvalues="total", customdata=custom,
                 hovertemplate=hover, maxdepth=maxdepth,
                 marker=dict(colors=fill, line=dict(color="white", width=1)))
    total = ledger.total()
    head = title or f"Privacy budget: where ρ = {total.rho:.4g} went"
    sub = (f"total {total}; area = share of ρ; blue: spends per k-tuple (one row moves one "
           "tuple: group privacy), orange: spends per row")
    sub = wrap(sub, 70, "<br>")  # titles never wrap: at a projector's width they were clipped
    return go.Figure(data=[trace], layout=dict(
        title=dict(text=f"{head}<br><sup>{sub}</sup>"),
        margin=dict(t=40 + 18 * (sub.count("<br>") + 2), l=10, r=10, b=10)))


def ledger_table(ledger: Ledger) -> pd.DataFrame:
    """The leaf spends (mechanism draws and δ events) as a table: path, mechanism, ρ, δ, σ,
    sensitivity, unit."""
    rows = []
    for path, s in ledger.spends():
        z = s.zcdp()
        rows.append(dict(step=" › ".join((*path[1:], s.name)), mechanism=s.mechanism, rho=z.rho,
                         delta=z.delta, sigma=s.noise_scale, sensitivity=s.sensitivity,
                         unit=s.unit, note=s.note))
    # The numbers first and the long texts last: a narrow page scrolls only the step path/note.
    return pd.DataFrame(rows, columns=["mechanism", "rho", "delta", "sigma", "sensitivity", "unit",
                                       "step", "note"])


@dataclass(frozen=True)
class PrivacySummary:
    """Display strings for a PrivacyStatement (the app shows them as metrics and text)."""

    paper: str
    row_level: str
    epsilon: str
    delta: str
    odds: str
    details: tuple[str, ...]


def _eps(eps: float) -> str:
    return f"{eps:.3g}" if eps < 10 else f"{eps:.1f}"


def privacy_summary(statement: PrivacyStatement) -> PrivacySummary:
    """Plain-language strings for ``row_level_statement(ledger, δ′)``.

    ``paper`` is the zCDP statement as the paper gives it; ``row_level`` the (ε, δ)-DP guarantee
    for one row of the user's data (tight conversion unless ``statement.tight`` is False);
    ``odds`` a sentence on how much one row can move any outcome's probability.
    """
    conv = "tight CKS20 conversion" if statement.tight else "simple conversion ρ + 2√(ρ ln 1/δ′)"
    return PrivacySummary(
        paper=f"Paper's guarantee: {statement.paper}",
        row_level=(f"For one row of your data: ({_eps(statement.row.eps)}, "
                   f"{statement.row.delta:.2g})-DP ({conv}, δ′ = {statement.delta_prime:.2g})"),
        epsilon=f"ε = {_eps(statement.row.eps)}",
        delta=f"δ = {statement.row.delta:.2g}",
        odds=statement.odds_sentence,
        details=tuple(statement.lines),
    )


#: dpviz's convention (not a published standard) for naming a row-level ε in words: upper bounds
#: and names. DP's theory is usually stated for ε ≤ 1; the odds factor e^ε is 2.7 at ε = 1, 20 at
#: ε = 3 and 22 000 at ε = 10, beyond which the bound says little about one person.
STRENGTH_BANDS: tuple[tuple[float, str], ...] = (
    (1.0, "strong"), (3.0, "moderate"), (10.0, "weak"), (math.inf, "very weak"),
)

STRENGTH_HELP = (
    "dpviz's convention, not a published standard: ε ≤ 1 strong (the regime DP's theory is usually "
    "stated in; odds move by at most e¹ ≈ 2.7×), ε ≤ 3 moderate (≤ 20×), ε ≤ 10 weak (≤ 22 000×), "
    "ε > 10 very weak. Whatever ε is, a δ above 1/n is called very weak (a mechanism that publishes "
    "one random row outright meets such a δ), and δ ≥ 0.5 promises nothing."
)


@dataclass(frozen=True)
class Strength:
    """A row-level (ε, δ) named in words (:data:`STRENGTH_BANDS`), with the reason."""

    band: str
    reason: str


def strength_band(eps: float, delta: float, n_declared: int | None = None) -> Strength:
    """The plain-words strength of a row-level (ε, δ)-DP guarantee (dpviz's convention).

    ``n_declared`` is the public dataset size: a δ above 1/n is named "very weak" whatever ε is.
    """
    if delta >= 0.5 or not math.isfinite(eps):
        return Strength("none", f"δ = {delta:.2g}: the guarantee is vacuous")
    if n_declared and delta > 1.0 / n_declared:
        return Strength("very weak", f"δ = {delta:.2g} is above 1/n = {1.0 / n_declared:.2g}")
    for high, band in STRENGTH_BANDS:
        if eps <= high:
            where = f"ε ≤ {high:g}" if math.isfinite(high) else f"ε > {STRENGTH_BANDS[-2][0]:g}"
            return Strength(band, f"{where}, dpviz's convention")
    raise AssertionError("unreachable: the last band is unbounded")
