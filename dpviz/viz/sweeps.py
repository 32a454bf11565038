"""Accuracy vs budget: median curve and 10–90% band over repetitions, per algorithm.

The layout follows Google's DP clustering plots: one median line per algorithm with a quantile
band over repetitions, log-scaled budget axis, and the non-private result as the ε = ∞
horizontal reference. The budget axis is the frame's (``dpviz.sweeps.axis_of``): a row-level ε
target (the app's) or a nominal ρ (the paper's), and every label and hover says which. Median
points carry ``customdata = budget`` so the app can load a clicked point.
All metrics are non-private diagnostics.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpviz.sweeps import axis_of, quantile_names, summarize
from dpviz.viz import colors
from dpviz.viz.answered import answered_text, answered_texts
from dpviz.viz.text import plotly_text

#: Legend texts and colours by registry name (old stored names are read through
#: ``dpviz.registry.registry_name``).
ALGORITHM_LABELS: dict[str, str] = {
    "friendlycore": "FriendlyCore (practical split)",
    "friendlycore[preset=paper]": "FriendlyCore (paper's split)",
    "dp_lloyd": "DP-Lloyd",
    "diffprivlib": "diffprivlib KMeans (patched: every cluster noised)",
    "kmeans++": "non-private k-means++ (ε = ∞)",
}
ALGORITHM_COLORS: dict[str, str] = {
    "friendlycore": "#0072B2", "friendlycore[preset=paper]": "#56B4E9", "dp_lloyd": "#E69F00",
    "diffprivlib": "#CC79A7", "kmeans++": "#111111",
}
METRIC_LABELS: dict[str, str] = {
    "loss": "normalized k-means loss 1 − X/Y",
    "center_error": "center error (mean distance to matched reference)",
    "seconds": "seconds (private stage)",
}
NONPRIVATE_RULE = "non-private (ε = ∞)"
CURRENT_RULE = "current"
#: The symbol and axis title of each budget axis.
AXIS_SYMBOL = {"epsilon": "ε", "rho": "ρ"}
AXIS_TITLE = {"epsilon": "row-level ε target (log scale): more privacy ← → more accuracy",
              "rho": "ρ (zCDP budget, log scale): more privacy ← → more accuracy"}


#: Suffixes of the two lines a FriendlyCore sweep is drawn as (:func:`split_fallback`).
ALONE, WITH_FALLBACK = "|alone", "|with fallback"


def _spec(name: str):
    """The registered spec of a sweep name (with parameters, or an old stored name), or None."""
    from dpviz.registry import resolve_name

    try:
        return resolve_name(name)[0]
    except (ValueError, TypeError):
        return None


def has_structure(name: str) -> bool:
    """Whether a sweep name's algorithm has a private structure step and a backup (FriendlyCore:
    its core, else the grid coreset): such an algorithm is drawn as two lines."""
    spec = _spec(str(name))
    return spec is not None and spec.structure_step is not None


def _reference(name: str) -> bool:
    """Whether a sweep name is the non-private reference (a spec that spends no budget)."""
    spec = _spec(str(name))
    return spec is not None and spec.budget_kind == "none"


def algorithm_label(name: str) -> str:
    """Legend text of a sweep algorithm name ("friendlycore[preset=paper]" → "FriendlyCore
    (paper's split)"; another registered name: its title, with its parameters)."""
    from dpviz.registry import parse_name, registry_name

    if name.endswith(ALONE):
        return f"{algorithm_label(name[:-len(ALONE)])} alone (no centers = loss 1)"
    if name.endswith(WITH_FALLBACK):
        return f"{algorithm_label(name[:-len(WITH_FALLBACK)])} with fallback"
    name = registry_name(name)
    if name in ALGORITHM_LABELS:
        return ALGORITHM_LABELS[name]
    spec = _spec(name)
    if spec is None:
        return name
    given = parse_name(name)[1]
    return spec.title + (f" ({', '.join(f'{k} {v}' for k, v in given.items())})" if given else "")


def algorithm_color(name: str, i: int = 0) -> str:
    """The fixed colour of a sweep algorithm (the i-th fallback colour for unknown names)."""
    from dpviz.registry import registry_name

    base = registry_name(name.split("|")[0])
    if name.endswith(ALONE) and base in ALGORITHM_COLORS:
        return "#009E73"  # Okabe-Ito green: FriendlyCore's own answers, apart from the backup's
    return ALGORITHM_COLORS.get(base, colors.cluster_color(i + 4))


def split_fallback(frame: pd.DataFrame) -> pd.DataFrame:
    """Each algorithm of a sweep frame with a structure step (:func:`has_structure`; FriendlyCore)
    as two lines (issue 16): "alone" — a run whose core did not form counts as no answer (loss 1,
    no center error), what the algorithm itself achieves — and "with fallback" — the centers
    actually released, the backup's included.

    Other algorithms are unchanged. Rows are told apart by the frame's ``fallback`` column.
    """
    if frame.empty or "fallback" not in frame:
        return frame
    fc = frame["algorithm"].astype(str).map(has_structure).astype(bool)
    if not fc.any():
        return frame
    with_fb = frame[fc].assign(algorithm=frame.loc[fc, "algorithm"].astype(str) + WITH_FALLBACK)
    used = frame.loc[fc, "fallback"].astype(bool)
    alone = frame[fc].assign(
        algorithm=frame.loc[fc, "algorithm"].astype(str) + ALONE,
        loss=frame.loc[fc, "loss"].where(~used, 1.0),
        center_error=frame.loc[fc, "center_error"].where(~used, math.nan))
    return pd.concat([frame[~fc], alone, with_fb], ignore_index=True)


def _frame(sweep: Any) -> pd.DataFrame:
    return sweep.frame if hasattr(sweep, "frame") else pd.DataFrame(sweep)


def _band_traces(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, color: str, group: str,
                 name: str) -> list[go.Scatter]:
    """Upper edge (invisible) then lower edge filled up to it."""
    return [
        go.Scatter(x=x, y=hi, mode="lines", line=dict(width=0), showlegend=False,
                   legendgroup=group, hoverinfo="skip", name=f"{name} upper"),
        go.Scatter(x=x, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                   fillcolor=colors.with_alpha(color, 0.2), showlegend=False, legendgroup=group,
                   hoverinfo="skip", name=f"{name} lower"),
    ]


def _y_range(values: list[np.ndarray]) -> tuple[float, float]:
    v = np.concatenate([np.ravel(a) for a in values if np.size(a)]) if values else np.zeros(1)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0.0, 1.0
    lo, hi = float(v.min()), float(v.max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1.0)
    return lo - pad, hi + pad


def _rule(x: float, y: tuple[float, float], name: str) -> go.Scatter:
    return go.Scatter(x=[x, x], y=list(y), mode="lines", name=name, hoverinfo="name",
                      line=dict(color=colors.THRESHOLD, width=1.5, dash="dash"))


def accuracy_figure(
    sweep: Any,
    *,
    metric: str = "loss",
    quantiles: tuple[float, float] = (0.1, 0.9),
    current_rho: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """Metric vs the budget axis (ε or ρ): per algorithm a median line over repetitions and a
    quantile band.

    FriendlyCore is drawn twice (:func:`split_fallback`): alone, and with its fallback.

    Parameters
    ----------
    sweep : Sweep or DataFrame
        ``dpviz.sweeps.sweep``'s result (or its frame). Rows at ``inf`` (the non-private
        reference) become a horizontal line labelled "non-private (ε = ∞)".
    metric : str
        A frame column: "loss" (default), "center_error", "seconds".
    quantiles : (lo, hi)
        The band; (0.1, 0.9) is the 10–90% band.
    current_rho : float, optional
        Drawn as a vertical rule (a budget on the frame's axis).

    Notes
    -----
    Each median marker's ``customdata`` is its budget (``customdata[0]``), followed by the band
    edges and the success rate, so a click can load that budget.
    """
    raw = _frame(sweep)
    frame = split_fallback(raw)
    ax = axis_of(frame)
    sym = AXIS_SYMBOL[ax]
    who = answered_texts(raw, ax)  # who answered each point's runs (the algorithm or its backup)
    summ = summarize(frame, metric=metric, quantiles=quantiles)
    qlo, qhi = quantile_names(quantiles)
    fig = go.Figure()
    finite = summ[np.isfinite(summ[ax].astype(float))] if not summ.empty else summ
    ys: list[np.ndarray] = []
    for i, (alg, g) in enumerate(finite.groupby("algorithm", sort=False)):
        g = g.sort_values(ax)
        color, label = algorithm_color(alg, i), algorithm_label(alg)
        x = g[ax].to_numpy(float)
        lo, hi, med = (g[c].to_numpy(float) for c in (qlo, qhi, "median"))
        ys += [lo, hi, med]
        for tr in _band_traces(x, lo, hi, color=color, group=alg, name=label):
            fig.add_trace(tr)
        fig.add_trace(go.Scatter(
            x=x, y=med, mode="lines+markers", name=label, legendgroup=alg,
            line=dict(color=color, width=2), marker=dict(size=7, color=color),
            customdata=np.c_[x, lo, hi, g["success_rate"].to_numpy(float), g["runs"]],
            text=[plotly_text(answered_text(who, alg, v)) for v in x],
            hovertemplate=(f"<b>{label}</b><br>{sym} = %{{customdata[0]:.3g}}<br>median = %{{y:.3g}}"
                           f"<br>{qlo}–{qhi}: %{{customdata[1]:.3g}} – %{{customdata[2]:.3g}}"
                           "<br>success rate %{customdata[3]:.0%} of %{customdata[4]} runs<br>%{text}"
                           f"<extra>click to load this {sym}</extra>")))
    rho_vals = finite[ax].to_numpy(float) if not finite.empty else np.array([])
    if current_rho is not None:
        rho_vals = np.append(rho_vals, float(current_rho))
    xr = (float(rho_vals.min()), float(rho_vals.max())) if rho_vals.size else (0.01, 10.0)
    nonpriv = summ[~np.isfinite(summ[ax].astype(float))] if not summ.empty else summ
    for _, row in nonpriv.iterrows():
        ys.append(np.array([row["median"]]))
        fig.add_trace(go.Scatter(
            x=list(xr), y=[row["median"], row["median"]], mode="lines",
            name=NONPRIVATE_RULE if _reference(row["algorithm"])
            else f"{algorithm_label(row['algorithm'])} ({sym} = ∞)",
            line=dict(color=algorithm_color(row["algorithm"]), width=2, dash="dot"),
            hovertemplate=f"non-private median = {row['median']:.3g}<extra></extra>"))
    yr = _y_range(ys)
    if current_rho is not None:
        fig.add_trace(_rule(float(current_rho), yr, f"{CURRENT_RULE} {sym} = {current_rho:.3g}"))
    reps = int(frame["rep"].nunique()) if "rep" in frame and not frame.empty else 0
    sub = (f"median and {qlo}–{qhi} band over {reps} repetitions; "
           "non-private diagnostic; lower is better")
    fig.update_layout(
        title=dict(text=f"{title or METRIC_LABELS.get(metric, metric) + ' vs ' + sym}"
                        f"<br><sup>{sub}</sup>"),
        template=colors.TEMPLATE, hovermode="closest",
        xaxis=dict(type="log", title=AXIS_TITLE[ax]),
        yaxis=dict(title=METRIC_LABELS.get(metric, metric), range=list(yr)),
        clickmode="event+select")
    return fig


def success_figure(sweep: Any, *, current_rho: float | None = None,
                   title: str | None = None) -> go.Figure:
    """Success rate vs the budget axis per algorithm (FC: released centers without its fallback)."""
    frame = _frame(sweep)
    ax = axis_of(frame)
    sym = AXIS_SYMBOL[ax]
    who = answered_texts(frame, ax)
    summ = summarize(frame, metric="loss")
    fig = go.Figure()
    finite = summ[np.isfinite(summ[ax].astype(float))] if not summ.empty else summ
    for i, (alg, g) in enumerate(finite.groupby("algorithm", sort=False)):
        g = g.sort_values(ax)
        x = g[ax].to_numpy(float)
        fig.add_trace(go.Scatter(
            x=x, y=g["success_rate"], mode="lines+markers",
            name=algorithm_label(alg + ALONE if has_structure(alg) else alg),
            line=dict(color=algorithm_color(alg, i)), customdata=np.c_[x, g["runs"]],
            text=[plotly_text(answered_text(who, alg, v)) for v in x],
            hovertemplate=f"{sym} = %{{customdata[0]:.3g}}"
                          "<br>success %{y:.0%} of %{customdata[1]} runs<br>%{text}<extra></extra>"))
    if current_rho is not None:
        fig.add_trace(_rule(float(current_rho), (0.0, 1.05), f"{CURRENT_RULE} {sym} = {current_rho:.3g}"))
    fig.update_layout(
        title=dict(text=f"{title or 'How often the algorithm succeeds'}<br><sup>FriendlyCore "
                        "counts as failed when its fallback released the centers</sup>"),
        template=colors.TEMPLATE, xaxis=dict(type="log", title=AXIS_TITLE[ax]),
        yaxis=dict(title="success rate", range=[0, 1.05], tickformat=".0%"))
    return fig


def loss_vs_n_figure(
    sweep: Any,
    *,
    metric: str = "loss",
    quantiles: tuple[float, float] = (0.1, 0.9),
    title: str | None = None,
) -> go.Figure:
    """Metric vs n (from ``dpviz.sweeps.sweep_n``): median and band per algorithm, log-n axis.

    The non-private reference is drawn as a dotted line of its own (it also depends on n).
    """
    frame = split_fallback(_frame(sweep))
    summ = summarize(frame, by=("algorithm", "n"), metric=metric, quantiles=quantiles)
    qlo, qhi = quantile_names(quantiles)
    fig = go.Figure()
    for i, (alg, g) in enumerate(summ.groupby("algorithm", sort=False)):
        g = g.sort_values("n")
        color, label = algorithm_color(alg, i), algorithm_label(alg)
        x = g["n"].to_numpy(float)
        for tr in _band_traces(x, g[qlo].to_numpy(float), g[qhi].to_numpy(float), color=color,
                               group=alg, name=label):
            fig.add_trace(tr)
        fig.add_trace(go.Scatter(
            x=x, y=g["median"], mode="lines+markers", name=label, legendgroup=alg,
            line=dict(color=color, width=2, dash="dot" if _reference(alg) else "solid"),
            customdata=x, hovertemplate="n = %{x:,}<br>median = %{y:.3g}<extra></extra>"))
    ax = axis_of(frame)
    vals = frame[ax][np.isfinite(frame[ax].astype(float))] if not frame.empty else []
    at = f" at {AXIS_SYMBOL[ax]} = {float(pd.Series(vals).iloc[0]):.3g}" if len(vals) else ""
    fig.update_layout(
        title=dict(text=f"{title or METRIC_LABELS.get(metric, metric) + ' vs n' + at}"
                        f"<br><sup>median and {qlo}–{qhi} band; non-private diagnostic</sup>"),
        template=colors.TEMPLATE, xaxis=dict(type="log", title="n (rows, log scale)"),
        yaxis=dict(title=METRIC_LABELS.get(metric, metric)))
    return fig


def clicked_budget(point: dict) -> float | None:
    """The budget (the axis value: ε or ρ) of a clicked median point (a plotly selection point
    dict), or None."""
    cd = point.get("customdata")
    if cd is None:
        return None
    v = cd[0] if isinstance(cd, (list, tuple, np.ndarray)) else cd
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None
