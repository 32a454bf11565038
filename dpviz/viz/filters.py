"""The filters' decisions: noisy scores against the keep threshold; FindDiam's probes.

zCDPFilter (Tsfadia et al. 2022, §4.2) keeps element i iff ẑ_i = (w_i − n/2) + N(0, n̂/(8ρ₂))
clears τ = √(n̂ ln(2n̂/δ)/(4ρ₂)) + 1/2. FindDiam (§5.1.2) accepts the first radius r whose
noisy mean friend count â clears n − √(4 ln(1/β)/ρ). All of these are internal values of a run
(non-private diagnostics), drawn to explain the released decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpviz.result import Result, TraceStep
from dpviz.viz import colors
from dpviz.viz.storyboard import release_label
from dpviz.viz.text import wrap


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def filter_scores_figure(
    source: Result | TraceStep | Mapping[str, Any] | Any,
    *,
    step: str = "match_core",
    title: str | None = None,
    nbins: int = 40,
) -> go.Figure:
    """Histogram of the noisy scores ẑ of kept and removed elements, with the keep threshold τ.

    Parameters
    ----------
    source : Result, TraceStep, mapping or FilterOutcome
        A Result (its trace step ``step`` is used: "match_core" or "dist_core"), the step itself,
        or anything with ``noisy_scores``, ``threshold``, ``keep`` (and optionally ``scores``,
        ``n_hat``).
    step : str
        Which filter of a Result to draw.

    Notes
    -----
    The score is z = w − n/2 (w: friend count, self included), so the dotted line z = 0 is
    "friends with exactly half of the elements"; τ sits to its right by the privacy margin. The
    true scores are a legend-only trace (a non-private diagnostic).
    """
    released = False
    label = step
    if isinstance(source, Result):
        st = source.find(step)
        if st is None:
            fig = go.Figure()
            fig.add_annotation(text=f"The run stopped before the '{step}' filter.",
                               xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
            fig.update_layout(title=title or f"{step}: not reached", template=colors.TEMPLATE)
            return fig
        source = st
    if isinstance(source, TraceStep):
        released, label, data = source.released, source.name, source.data
    else:
        data = source
    noisy = _get(data, "noisy_scores")
    if noisy is None:
        raise ValueError("filter_scores_figure needs noisy scores (zCDPFilter); BasicFilter has none.")
    noisy = np.asarray(noisy, dtype=float)
    keep = np.asarray(_get(data, "keep"), dtype=bool)
    tau = float(_get(data, "threshold"))
    scores = _get(data, "scores")
    n_hat = _get(data, "n_hat")
    n = noisy.size
    lo = float(min(noisy.min(initial=0.0), tau, 0.0))
    hi = float(max(noisy.max(initial=0.0), tau, 0.0))
    size = (hi - lo) / nbins if hi > lo else 1.0
    xbins = dict(start=lo - size, end=hi + size, size=size)
    data = [
        dict(type="histogram", x=noisy[keep], xbins=xbins, opacity=0.8,
             name=release_label(f"kept ({int(keep.sum())})", released),
             marker=dict(color=colors.KEPT)),
        dict(type="histogram", x=noisy[~keep], xbins=xbins, opacity=0.8,
             name=release_label(f"removed ({int((~keep).sum())})", released),
             marker=dict(color=colors.REMOVED)),
    ]
    if scores is not None:
        data.append(dict(type="histogram", x=np.asarray(scores, float), xbins=xbins,
                         visible="legendonly", opacity=0.4, marker=dict(color=colors.NONPRIVATE),
                         name=release_label("true scores z (before noise)", False)))
    # Both notes start at their line and grow rightwards (one below the other): a note anchored
    # to the right of z = 0 ran off the chart's left edge in a half-width column (issue 16).
    # They sit inside the plot, one line apart in pixels: offsets in paper units overlapped each
    # other and the title when the plot was short (Learn's live example at 1280 px, issue 27).
    rules = ((tau, f"keep threshold τ = {tau:.3g}", "solid", 2, 0),
             (0.0, "z = 0: friends with n/2", "dot", 1, -16))
    shapes = [dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1,
                   line=dict(color=colors.THRESHOLD, width=w, dash=dash))
              for x, _, dash, w, _ in rules]
    # The title wrapped at 32 characters: at 45 it left a narrow column's edge (issue 27).
    notes = [dict(text=text, xref="x", yref="paper", x=x, y=1.0, yanchor="top", yshift=shift,
                  xanchor="left", showarrow=False, bgcolor="rgba(255,255,255,0.8)")
             for x, text, _, _, shift in rules]
    sub = f"n = {n}" + (f", n̂ = {float(n_hat):.1f}" if n_hat is not None else "")
    layout = dict(
        title=dict(text=wrap(title or label + ": noisy scores vs keep threshold", 32) + "<br><sup>"
                   + wrap(f"{sub}; an element is kept iff its noisy score ẑ ≥ τ", 60) + "</sup>",
                   y=1.0, yref="container", yanchor="top", pad=dict(t=22)),
        barmode="overlay", template=colors.TEMPLATE, bargap=0.05, shapes=shapes,
        annotations=notes, margin=dict(t=130, b=170),
        legend=dict(orientation="h", x=0, xanchor="left", y=-0.42, yanchor="top"),
        xaxis=dict(title=dict(text="noisy score ẑ<br>= friend count − n/2 + noise")),
        yaxis=dict(title=dict(text="elements")))
    return go.Figure(data=data, layout=layout)


def find_diam_table(probes: Sequence[Any]) -> pd.DataFrame:
    """FindDiam probes as a table, one row per probe: coordinate, r, a, â, threshold, accepted.

    ``probes`` is either one probe list (a single FindDiam) or one list per coordinate (the
    ``diameters`` step of fc_clustering); a probe is a dict or a ``Probe`` record.
    """
    if len(probes) and not isinstance(probes[0], (list, tuple)):
        probes = [probes]
    rows = []
    for j, plist in enumerate(probes):
        for i, p in enumerate(plist):
            rows.append(dict(coordinate=j + 1, probe=i + 1, r=float(_get(p, "r")),
                             a=_get(p, "a"), a_hat=float(_get(p, "a_hat")),
                             threshold=float(_get(p, "threshold")),
                             accepted=bool(_get(p, "accepted"))))
    return pd.DataFrame(rows, columns=["coordinate", "probe", "r", "a", "a_hat", "threshold",
                                       "accepted"])


def find_diam_figure(
    source: Result | Sequence[Any],
    *,
    title: str | None = None,
) -> go.Figure:
    """FindDiam's search: â against the acceptance threshold for every probed radius r.

    x is r on a log axis; filled circles are accepted probes, crosses rejected ones; the dashed
    line of the same colour is the threshold n − √(4 ln(1/β)/ρ) (per coordinate j when drawn
    from fc_clustering's ``diameters`` step). The released output is the chosen r (the first
    accepted probe); a and â are non-private diagnostics.
    """
    chosen = None
    if isinstance(source, Result):
        st = source.find("diameters")
        if st is None:
            fig = go.Figure()
            fig.add_annotation(text="The run stopped before the diameter search.",
                               xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
            fig.update_layout(title=title or "FindDiam: not reached", template=colors.TEMPLATE)
            return fig
        source = st.data["probes"]
        chosen = st.data.get("radii")
    df = find_diam_table(source)
    data: list[dict] = []
    many = df["coordinate"].nunique() > 1
    hover = ("r = %{x:.4g}<br>â = %{y:.4g}<br>a = %{customdata[0]:.4g}"
             "<br>threshold = %{customdata[1]:.4g}<extra></extra>")
    for j, g in df.groupby("coordinate", sort=True):
        c = colors.cluster_color(int(j) - 1)
        lab = f"coordinate {j}: " if many else ""
        acc = g["accepted"].to_numpy(bool)
        for flag, sym in ((True, "circle"), (False, "x")):
            sel = acc == flag
            if not sel.any():
                continue
            data.append(dict(
                type="scatter", x=g["r"].to_numpy()[sel], y=g["a_hat"].to_numpy()[sel],
                mode="markers", legendgroup=f"c{j}",
                name=release_label(f"{lab}{'accepted' if flag else 'rejected'} probes â", False),
                marker=dict(color=c, symbol=sym, size=10, line=dict(width=1, color=c)),
                customdata=np.c_[g["a"].to_numpy(float)[sel], g["threshold"].to_numpy()[sel]],
                hovertemplate=hover))
        data.append(dict(type="scatter", x=g["r"].to_numpy(), y=g["threshold"].to_numpy(),
                         mode="lines", legendgroup=f"c{j}", name=f"{lab}acceptance threshold",
                         line=dict(color=c, dash="dash", width=1)))
    sub = ""
    if chosen is not None:
        sub = "chosen radii (private): " + ", ".join(f"{float(r):.3g}" for r in np.ravel(chosen))
    layout = dict(
        title=dict(text=f"{title or 'FindDiam: probes of the radius search'}<br><sup>{wrap(sub, 90)}</sup>"),
        template=colors.TEMPLATE,
        xaxis=dict(type="log", title=dict(text="radius r (log scale)")),
        yaxis=dict(title=dict(text="noisy mean friend count â")))
    return go.Figure(data=data, layout=layout)


def friends_matrix_figure(
    graph: Any,
    keep: np.ndarray | None = None,
    *,
    title: str | None = None,
) -> go.Figure:
    """The t×t friends matrix of the tuples (match_γ), kept tuples first, by friend count.

    Parameters
    ----------
    graph : MatchGraph or (t, t) bool array
        ``dpviz.core.tuple_predicates.MatchGraph`` (its ``matrix``) or the adjacency itself.
    keep : (t,) bool array, optional
        The filter's decision (the ``match_core`` step's ``keep``); a line separates the core
        from the removed tuples.

    Notes
    -----
    A non-private diagnostic: which tuples agree with which. FriendlyCore keeps a tuple when its
    noisy friend count clears the threshold; a block of mutual friends is a stable clustering.
    """
    M = np.asarray(getattr(graph, "matrix", graph), dtype=bool)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"friends_matrix_figure needs a square (t, t) matrix; got {M.shape}.")
    t = M.shape[0]
    counts = M.sum(axis=1)
    kept = np.ones(t, bool) if keep is None else np.asarray(keep, dtype=bool)
    order = np.lexsort((-counts, ~kept))  # kept first, then by friend count (descending)
    Z = M[np.ix_(order, order)].astype(np.int8)
    data = [dict(type="heatmap", z=Z, zmin=0, zmax=1, showscale=False,
                 colorscale=[[0, "#FFFFFF"], [1, colors.KEPT]],
                 name=release_label("friends (match_γ)", False),
                 customdata=np.stack(np.meshgrid(order, order, indexing="ij"), axis=-1),
                 hovertemplate="tuples %{customdata[0]} and %{customdata[1]}: "
                               "friends = %{z}<extra></extra>")]
    shapes = []
    n_kept = int(kept.sum())
    if keep is not None and 0 < n_kept < t:
        for axis in ("x", "y"):
            shapes.append(dict(type="line", xref="x" if axis == "x" else "paper",
                               yref="y" if axis == "y" else "paper",
                               x0=n_kept - 0.5 if axis == "x" else 0,
                               x1=n_kept - 0.5 if axis == "x" else 1,
                               y0=n_kept - 0.5 if axis == "y" else 0,
                               y1=n_kept - 0.5 if axis == "y" else 1,
                               line=dict(color=colors.REMOVED, width=2)))
    sub = f"{t} tuples" + (f"; core = first {n_kept} (red line)" if keep is not None else "")
    layout = dict(
        title=dict(text=f"{title or 'Which tuples are friends'}<br><sup>{sub}; "
                        "non-private diagnostic</sup>"),
        template=colors.TEMPLATE, shapes=shapes,
        xaxis=dict(title=dict(text="tuple (sorted)"), constrain="domain"),
        yaxis=dict(title=dict(text="tuple (sorted)"), autorange="reversed", scaleanchor="x"))
    return go.Figure(data=data, layout=layout)


# ----------------------------------------------------------------------------- Explore view

FILTERS_TITLE = "Filters & radii"
FILTERS_HELP = ("Scores and counts are internal, non-private diagnostics; the keep decisions and the radii "
                "are what the private algorithm acts on.")


def filters_exploration(ctx: Any) -> list[go.Figure]:
    """FriendlyCore's filters and FindDiam for the run on screen (an Explore view registered
    against its spec): the match-core and dist-core scores against their noisy thresholds, and
    the radii probed (Tsfadia et al. 2022, zCDPFilter §4.2, FindDiam §5.2.3)."""
    result = ctx.result
    names = {s.name for s in result.trace}
    figs = [filter_scores_figure(result, step=step) for step in ("match_core", "dist_core") if step in names]
    if "diameters" in names:
        figs.append(find_diam_figure(result))
    return figs


def _register() -> None:
    from dpviz.viz.storyboards import register_exploration

    register_exploration("friendlycore", FILTERS_TITLE, filters_exploration, help=FILTERS_HELP)


_register()
