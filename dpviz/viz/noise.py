"""Hypothetical outcomes: many private draws on the same data, drawn as a cloud.

One private run is one sample from a distribution; showing N of them (Hullman et al.'s
hypothetical-outcome plots) shows what the noise does. The draws reuse the cached tuple stage
(the app runner's re-draws, ``app.components.simulation.run(draw=i)``); each draw's clusters
are matched to the non-private centers (``align_colors``) so a cluster keeps its colour across draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.registry import hint
from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import Projector, centers_trace, downsample_index, points_traces, project_2d


def aligned_draws(results: Sequence[Result], reference_centers: np.ndarray) -> np.ndarray:
    """Centers of every successful draw reordered to match ``reference_centers``.

    Returns an (N_ok, k, d) array whose [:, j] are the draws matched to reference cluster j
    (NaN where a draw has fewer clusters than the reference).
    """
    ref = np.asarray(reference_centers, dtype=float)
    k, d = ref.shape
    out = []
    for r in results:
        if r.centers is None:
            continue
        C = np.asarray(r.centers, dtype=float)
        perm = colors.align_colors(ref, C)
        row = np.full((k, d), np.nan)
        ok = perm < k
        row[perm[ok]] = C[ok]
        out.append(row)
    return np.stack(out) if out else np.zeros((0, k, d))


def noise_cloud_figure(
    X: Any,
    results: Sequence[Result],
    nonprivate_centers: np.ndarray,
    *,
    projector: Projector | None = None,
    max_points: int = 5_000,
    rng_seed: int = 0,
    current: Result | None = None,
    zoom: bool = False,
    scale: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """N private outcomes as a semi-transparent cloud around the non-private centers.

    Parameters
    ----------
    X : (n, d) array or Dataset
        The data (drawn faintly, downsampled for display).
    results : sequence of Result
        Private draws (e.g. re-draws: the same tuples, fresh noise). Failed draws (no
        centers) are counted in the subtitle.
    nonprivate_centers : (k, d) array
        The non-private reference (a diagnostic); fixes the cluster colours.
    current : Result, optional
        The draw on screen in the Explore page, outlined on top of the cloud.
    zoom : bool
        One small panel per cluster, centred on its non-private center and scaled to its cloud
        (private noise is often far smaller than the spread of the data).
    scale : float, optional
        With ``zoom``: one half-width (in the projected units) for every panel instead of each
        cloud's own, so clusters — and figures at two budgets — compare at the same scale (a
        cloud at its own scale looks alike at every ρ). :func:`zoom_scale` gives the one that
        fits a set of draws.

    Notes
    -----
    The spread of each cluster's cloud is what an observer of one release cannot tell apart;
    its distance from the black diamond is the error the privacy noise costs.
    """
    X = np.asarray(getattr(X, "X", X), dtype=float)
    proj = projector or project_2d(X)
    idx = downsample_index(X.shape[0], max_points, rng_seed=rng_seed)
    if zoom:
        return _zoomed(X[idx], results, nonprivate_centers, proj, current, title, scale)
    fig = go.Figure()
    for tr in points_traces(proj.transform(X[idx]), name="data (input, never released)",
                            opacity=0.2, size=3):
        fig.add_trace(tr)
    ref = np.asarray(nonprivate_centers, dtype=float)
    draws = aligned_draws(results, ref)
    n_fail = sum(r.centers is None for r in results)
    opacity = float(np.clip(6.0 / max(len(results), 1) ** 0.5, 0.15, 0.7))
    for j in range(ref.shape[0]):
        pts = draws[:, j, :]
        pts = pts[~np.isnan(pts).any(axis=1)]
        P = proj.transform(pts) if pts.size else np.zeros((0, 2))
        fig.add_trace(go.Scattergl(
            x=P[:, 0], y=P[:, 1], mode="markers",
            name=f"cluster {j + 1}: {len(pts)} private draws — private",
            marker=dict(size=8, color=colors.cluster_color(j), opacity=opacity,
                        line=dict(width=0))))
    fig.add_trace(centers_trace(proj.transform(ref), name="non-private centers — non-private "
                                "diagnostic (ε = ∞)", color=colors.NONPRIVATE,
                                symbol="diamond", size=12))
    if current is not None and current.centers is not None:
        fig.add_trace(centers_trace(proj.transform(np.asarray(current.centers, float)),
                                    name="this run's centers — private", color=colors.NONPRIVATE,
                                    symbol="star-open", size=15, line_color=colors.NONPRIVATE))
    sub = f"{len(results)} draws of the noise on the same tuples"
    if n_fail:
        sub += f"; {n_fail} output ⊥ (no centers)"
    fig.update_layout(
        title=dict(text=f"{title or 'What else could this release have been?'}<br><sup>{sub}</sup>"),
        template=colors.TEMPLATE, xaxis_title=proj.axis_titles[0],
        yaxis_title=proj.axis_titles[1], legend=dict(itemsizing="constant"))
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig


def zoom_scale(results: Sequence[Result], nonprivate_centers: np.ndarray, projector: Projector,
               *, margin: float = 1.3) -> float:
    """The one half-width at which every cluster's cloud of ``results`` fits its zoomed panel."""
    ref = np.asarray(nonprivate_centers, dtype=float)
    D = aligned_draws(results, ref)
    R2 = projector.transform(ref)
    half = 0.0
    for j in range(ref.shape[0]):
        pts = D[:, j, :]
        pts = pts[~np.isnan(pts).any(axis=1)]
        if pts.size:
            half = max(half, float(np.max(np.abs(projector.transform(pts) - R2[j]))))
    return max(half * margin, 1e-6 * (1.0 + float(np.abs(R2).max())))


def _zoomed(
    Xs: np.ndarray,
    results: Sequence[Result],
    nonprivate_centers: np.ndarray,
    proj: Projector,
    current: Result | None,
    title: str | None,
    scale: float | None = None,
) -> go.Figure:
    """Small multiples: cluster j's draws around non-private center j, each at its own scale
    (or all at ``scale``)."""
    ref = np.asarray(nonprivate_centers, dtype=float)
    k = ref.shape[0]
    cols = min(k, 4)
    rows = -(-k // cols)
    draws = aligned_draws(results, ref)
    cur = aligned_draws([current], ref)[0] if current is not None and current.centers is not None \
        else None
    R2 = proj.transform(ref)
    P = proj.transform(Xs) if Xs.size else np.zeros((0, 2))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"cluster {j + 1}" for j in range(k)],
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    for j in range(k):
        r, c = j // cols + 1, j % cols + 1
        pts = draws[:, j, :]
        pts = pts[~np.isnan(pts).any(axis=1)]
        D = proj.transform(pts) if pts.size else np.zeros((0, 2))
        if scale is not None:
            half = float(scale)
        else:
            half = float(np.max(np.abs(D - R2[j]))) * 1.3 if D.size else 0.0
            half = max(half, 1e-6 * (1.0 + float(np.abs(R2[j]).max())))
        near = np.all(np.abs(P - R2[j]) <= half, axis=1)
        first = j == 0
        fig.add_trace(go.Scattergl(x=P[near, 0], y=P[near, 1], mode="markers",
                                   name="data (input, never released)", showlegend=first,
                                   legendgroup="data",
                                   marker=dict(size=3, color=colors.DATA, opacity=0.3)),
                      row=r, col=c)
        fig.add_trace(go.Scattergl(x=D[:, 0], y=D[:, 1], mode="markers",
                                   name=f"cluster {j + 1}: {len(D)} private draws — private",
                                   marker=dict(size=8, color=colors.cluster_color(j), opacity=0.6)),
                      row=r, col=c)
        fig.add_trace(centers_trace(R2[j : j + 1], name="non-private centers — non-private "
                                    "diagnostic (ε = ∞)", color=colors.NONPRIVATE,
                                    symbol="diamond", size=11, showlegend=first), row=r, col=c)
        if cur is not None and not np.isnan(cur[j]).any():
            fig.add_trace(centers_trace(proj.transform(cur[j : j + 1]),
                                        name="this run's centers — private",
                                        color=colors.NONPRIVATE, symbol="star-open", size=15,
                                        line_color=colors.NONPRIVATE, showlegend=first),
                          row=r, col=c)
        fig.update_xaxes(range=[R2[j, 0] - half, R2[j, 0] + half], row=r, col=c)
        fig.update_yaxes(range=[R2[j, 1] - half, R2[j, 1] + half], row=r, col=c)
    n_fail = sum(res.centers is None for res in results)
    if scale is None:
        sub = f"{len(results)} draws, each panel zoomed on one cluster (own scale)"
    else:
        sub = f"{len(results)} draws, every panel at the same scale (±{scale:.3g})"
    if n_fail:
        sub += f"; {n_fail} output ⊥ (no centers)"
    fig.update_layout(
        title=dict(text=f"{title or 'What else could this release have been?'}<br><sup>{sub}</sup>"),
        template=colors.TEMPLATE, height=320 * rows + 120)
    return fig


# ----------------------------------------------------------------------------- Explore view

REDRAW_TITLE = "Re-draw noise"
REDRAW_HELP = ("Runs the private stage N more times on the same non-private stage with fresh noise, at "
               "the row-level guarantee on screen: the cloud shows what this run could have been. A "
               "non-private diagnostic: N draws together are one composed release costing N times the "
               "budget (by composition), and they are seeded (replayable); the black reference "
               "(non-private k-means++) is a diagnostic.")


@dataclass(frozen=True)
class RedrawOptions:
    """The re-draw view's settings (shown as widgets by the app)."""

    n_draws: int = field(default=20, metadata=hint(low=2, high=100, step=1, label="N draws"))
    zoom: bool = field(default=True, metadata=hint(
        label="Zoom into each cluster",
        help="One panel per cluster: at large budgets the noise is far smaller than the clusters and "
             "would be invisible on the full plot."))
    fixed: bool = field(default=True, metadata=hint(
        label="Same scale at every budget",
        help="Every panel keeps the scale of the first cloud drawn on this data (at this k), so "
             "moving the budget shows the noise grow or shrink; off, each panel fits its own cloud."))


def redraw_exploration(ctx: Any) -> go.Figure:
    """N re-draws of the private stage as a cloud around the non-private centers (an Explore view
    registered against FriendlyCore's spec; any family could register the same)."""
    o = ctx.options or RedrawOptions()
    if ctx.reference_centers is None:
        raise ValueError("No non-private reference centers to anchor the cloud.")
    draws = [ctx.simulate(draw=i) for i in range(1, int(o.n_draws) + 1)]
    proj = project_2d(ctx.X)
    scale = None
    memo = ctx.memo if ctx.memo is not None else {}
    key = ("cloud_scale", int(ctx.pub.k))
    if o.zoom and o.fixed:  # the first cloud's scale, kept for this data and k until switched off
        if key not in memo:
            memo[key] = zoom_scale(draws, ctx.reference_centers, proj)
        scale = memo[key]
    elif not o.fixed:
        memo.pop(key, None)
    ok = sum(r.centers is not None for r in draws)
    return noise_cloud_figure(ctx.X, draws, ctx.reference_centers, current=ctx.result, max_points=2_000,
                              zoom=o.zoom, scale=scale, projector=proj,
                              title=f"{ok} of {len(draws)} draws released centers")


def _register() -> None:
    from dpviz.viz.storyboards import register_exploration

    register_exploration("friendlycore", REDRAW_TITLE, redraw_exploration, help=REDRAW_HELP,
                         options=RedrawOptions, compute_label="Re-draw noise ×N")


_register()
