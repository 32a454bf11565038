"""The user's row-level ε beside published deployments' ε: one strip on a log ε axis.

Reads :data:`dpviz.privacy.deployments.DEPLOYMENTS` (public numbers with sources; no data).
One marker per deployment, coloured by central or local DP, and the user's ε as a vertical line
named "your ε (one row)". Issue 27.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from dpviz.privacy.deployments import Deployment, beside
from dpviz.viz.colors import PALETTE, PRIVATE

#: Colour of each DP model's markers.
MODEL_COLORS = {"central": PALETTE[0], "local": PALETTE[1]}
#: Ticks of the log ε axis (1-2-5 steps).
_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50)
#: Name of the trace that draws the user's ε.
YOUR_EPS = "your ε (one row)"


def short_label(d: Deployment) -> str:
    """"Organization · product" with the product cut at its first parenthesis or comma."""
    product = d.product.split(" (")[0].split(",")[0]
    return f"{d.organization} · {product}"


def _hover(d: Deployment, relation: str) -> str:
    delta = "0" if d.delta is None else f"{d.delta:.0e}"
    rho = f", ρ = {d.rho:.4g} (zCDP)" if d.rho is not None else ""
    return (f"<b>{d.organization}</b>: {d.product} ({d.year})<br>ε = {d.epsilon:.3g}, δ = {delta}{rho}"
            f"<br>{d.model} DP, per {d.privacy_unit}<br>{relation}")


def deployments_figure(eps: float, *, height: int = 330) -> go.Figure:
    """A dot strip of the published ε (log axis, smallest at the bottom) with ``eps`` as a line.

    Parameters
    ----------
    eps:
        The user's row-level ε (positive, finite).
    height:
        Figure height in pixels.

    Notes
    -----
    The units differ (a person, a user-day, one action, and local vs central DP; see
    :mod:`dpviz.privacy.deployments`): the figure gives context, not a ranking. Its title says so.
    """
    pairs = beside(eps)  # validates eps; smallest ε first
    labels = [short_label(d) for d, _ in pairs]
    fig = go.Figure()
    for model in ("central", "local"):
        chosen = [(d, r) for d, r in pairs if d.model == model]
        fig.add_trace(go.Scatter(
            x=[d.epsilon for d, _ in chosen], y=[short_label(d) for d, _ in chosen],
            mode="markers+text", name=f"{model} DP",
            text=[f"{d.epsilon:.3g}" for d, _ in chosen], textposition="middle right",
            marker=dict(size=11, color=MODEL_COLORS[model], line=dict(width=1, color="white")),
            hovertext=[_hover(d, r) for d, r in chosen], hoverinfo="text"))
    fig.add_trace(go.Scatter(
        x=[eps, eps], y=[labels[0], labels[-1]], mode="lines", name=YOUR_EPS,
        line=dict(color=PRIVATE, width=2, dash="dash"), hoverinfo="skip"))
    values = [d.epsilon for d, _ in pairs] + [eps]
    low, high = math.log10(min(values)) - 0.25, math.log10(max(values)) + 0.35
    fig.add_annotation(x=math.log10(eps), y=1.0, yref="paper", yanchor="bottom", showarrow=False,
                       text=f"your ε = {eps:.3g} (one row)", font=dict(color=PRIVATE))
    fig.update_layout(
        height=height, margin=dict(l=10, r=10, t=50, b=10),
        title=dict(text="Published ε (their units differ from yours: context, not a ranking)",
                   font=dict(size=14)),
        legend=dict(orientation="h", yanchor="top", y=-0.28, x=0),
        xaxis=dict(type="log", range=[low, high], title=dict(text="ε (log scale)"),
                   tickvals=list(_TICKS), ticktext=[f"{t:g}" for t in _TICKS]),
        yaxis=dict(categoryorder="array", categoryarray=labels, automargin=True),
        showlegend=True)
    return fig
