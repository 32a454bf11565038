"""Compare: every algorithm's accuracy, run time and structure success against the row-level ε.

Figures of a :func:`dpviz.sweeps.sweep` frame. Each private algorithm is a median line
with a quantile band over repetitions, on a log ε axis where ε is the **row-level** target every
algorithm was calibrated to (not a nominal ρ); the non-private k-means++ reference is a dotted
horizontal line. Every hover names the algorithm, the row-level (ε, δ), the algorithm's own
budget (ρ or ε) and whether the number is a simulation of a private algorithm (not a release)
or the non-private reference. Median markers carry ``customdata = [ε, δ, budget, budget δ,
guarantee ε, guarantee δ, q_lo, q_hi, runs, algorithm]`` so a click can open that algorithm and budget
(:func:`clicked_point`). All metrics are non-private diagnostics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpviz.sweeps import REFERENCE, SIMULATION, quantile_names, summarize
from dpviz.viz import colors
from dpviz.viz.answered import answered_text, answered_texts
from dpviz.viz.text import plotly_text

METRICS: dict[str, str] = {
    "loss": "normalized k-means loss 1 − X/Y",
    "labeling_failure": "labeling failure (1 − accuracy, best matching)",
    "center_error": "center error (mean distance to matched true centers)",
    "seconds": "seconds per run (private part + shared stage)",
}
EPS_AXIS = "row-level ε (every algorithm calibrated to the same (ε, δ); log scale)"
CUSTOMDATA = ("epsilon", "delta", "budget", "budget_delta", "guarantee_eps", "guarantee_delta", "q_lo",
              "q_hi", "runs", "algorithm")


def _frame(cmp: Any) -> pd.DataFrame:
    return cmp.frame if hasattr(cmp, "frame") else pd.DataFrame(cmp)


#: Suffixes of the two lines an algorithm with a fallback is drawn as (:func:`split_fallback`),
#: as on the Budget page (:data:`dpviz.viz.sweeps.ALONE`).
ALONE, WITH_FALLBACK = "|alone", "|with fallback"


def split_fallback(frame: pd.DataFrame) -> pd.DataFrame:
    """Each algorithm whose spec names a structure step (FriendlyCore: its core) as two lines
    (issue 16): "alone" — a run whose structure did not form counts as no answer (loss 1, other
    metrics NaN, as ⊥ is measured), what the algorithm itself achieves — and "with fallback" —
    the centers actually released, the backup's included. Other rows are unchanged."""
    if frame.empty or "structure_ok" not in frame:
        return frame
    has = frame["structure_ok"].map(lambda v: isinstance(v, (bool, np.bool_)))
    names = set(frame.loc[has & frame["private"].astype(bool), "algorithm"])
    if not names:
        return frame
    mine = frame["algorithm"].isin(names)
    sub = frame[mine]
    failed = sub["structure_ok"].map(lambda v: v is False or v is np.False_)
    alone = sub.assign(
        algorithm=sub["algorithm"].astype(str) + ALONE,
        title=sub["title"].astype(str) + " alone (fallback answers = no centers)",
        loss=sub["loss"].where(~failed, 1.0),
        labeling_failure=sub["labeling_failure"].where(~failed, math.nan),
        center_error=sub["center_error"].where(~failed, math.nan),
        released=sub["released"].astype(bool) & ~failed)
    with_fb = sub.assign(algorithm=sub["algorithm"].astype(str) + WITH_FALLBACK,
                         title=sub["title"].astype(str) + " with fallback")
    return pd.concat([frame[~mine], alone, with_fb], ignore_index=True)


def algorithm_colors(frame: pd.DataFrame) -> dict[str, str]:
    """A fixed colour per algorithm in the order it appears; the reference is black."""
    out, i = {}, 0
    for name, private in frame[["algorithm", "private"]].drop_duplicates("algorithm").itertuples(index=False):
        if not private:
            out[name] = colors.NONPRIVATE
        else:
            out[name] = colors.cluster_color(i)
            i += 1
    return out


def _budget_text(kind: str, budget: float, delta: float) -> str:
    """The hover text of one point's native budget (its own kind: a meta-algorithm such as
    ``auto`` may run a different algorithm at each ε)."""
    if kind == "zcdp":
        return f"native budget ρ = {budget:.3g} (zCDP), δ = {delta:.2g}"
    if kind == "approx":
        return f"native budget ε = {budget:.3g}, δ = {delta:.2g} (approx. DP)"
    return f"native budget ε = {budget:.3g} (pure DP)"


def _budget_texts(g: pd.DataFrame, who: dict[tuple[str, float], str] | None = None) -> list[str]:
    """Each point's native budget and, with ``who`` (:func:`~dpviz.viz.answered.answered_texts`),
    who answered its runs (the algorithm or its backup) on a second line."""
    out = []
    for name, eps, k, b, d in g[["algorithm", "epsilon", "budget_kind", "budget", "budget_delta"]].itertuples(
            index=False):
        line = _budget_text(k, float(b), float(d))
        answer = answered_text(who or {}, name, eps)
        out.append(f"{line}<br>{plotly_text(answer)}" if answer else line)
    return out


def _private_summary(frame: pd.DataFrame, metric: str, quantiles: tuple[float, float]) -> pd.DataFrame:
    s = summarize(frame, metric=metric, quantiles=quantiles)
    return s[s["private"].astype(bool)] if not s.empty else s


def _reference_summary(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    s = summarize(frame, metric=metric)
    return s[~s["private"].astype(bool)] if not s.empty else s


def _x_range(summ: pd.DataFrame) -> tuple[float, float]:
    x = summ["epsilon"].to_numpy(float) if not summ.empty else np.array([])
    x = x[np.isfinite(x)]
    return (float(x.min()), float(x.max())) if x.size else (1.0, 10.0)


def _band(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: str, group: str) -> list[go.Scatter]:
    """Upper edge (invisible), then the lower edge filled up to it."""
    return [
        go.Scatter(x=x, y=hi, mode="lines", line=dict(width=0), showlegend=False, legendgroup=group,
                   hoverinfo="skip", name=f"{group} upper"),
        go.Scatter(x=x, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                   fillcolor=colors.with_alpha(color, 0.2), showlegend=False, legendgroup=group,
                   hoverinfo="skip", name=f"{group} lower"),
    ]


def _customdata(g: pd.DataFrame, qlo: str, qhi: str) -> list[list[Any]]:
    cols = ["epsilon", "delta", "budget", "budget_delta", "guarantee_eps", "guarantee_delta", qlo, qhi,
            "runs", "algorithm"]
    # The last entry names the algorithm a click opens: a split line's base name.
    return [[(v.split("|")[0] if isinstance(v, str) else float(v)) for v in row]
            for row in g[cols].itertuples(index=False)]


def metric_figure(
    cmp: Any,
    metric: str = "loss",
    *,
    quantiles: tuple[float, float] = (0.1, 0.9),
    log_y: bool = False,
    title: str | None = None,
    split: bool = True,
) -> go.Figure:
    """``metric`` vs row-level ε: a median line and a quantile band per private algorithm, the
    non-private reference as a dotted horizontal line (its median over repetitions). With
    ``split``, an algorithm with a fallback is two lines, alone and with fallback
    (:func:`split_fallback`).

    Parameters
    ----------
    cmp : Comparison or DataFrame
        :func:`dpviz.sweeps.sweep`'s result (or its frame).
    metric : str
        A frame column: "loss", "labeling_failure", "center_error", "seconds".
    split : bool
        Draw an algorithm with a fallback as "alone" and "with fallback" (default True).
    quantiles : (lo, hi)
        The band (default 10–90%).
    log_y : bool
        A log y axis (run times).
    """
    frame = _frame(cmp)
    who = answered_texts(frame, "epsilon")  # who answered each point's runs
    if split:
        frame = split_fallback(frame)
    qlo, qhi = quantile_names(quantiles)
    summ = _private_summary(frame, metric, quantiles)
    palette = algorithm_colors(frame) if not frame.empty else {}
    fig = go.Figure()
    for name, g in summ.groupby("algorithm", sort=False):
        g = g.sort_values("epsilon")
        color, label = palette[name], str(g["title"].iloc[0])
        x = g["epsilon"].to_numpy(float)
        for tr in _band(x, g[qlo].to_numpy(float), g[qhi].to_numpy(float), color, name):
            fig.add_trace(tr)
        fig.add_trace(go.Scatter(
            x=x, y=g["median"].to_numpy(float), mode="lines+markers", name=label, legendgroup=name,
            meta=name, line=dict(color=color, width=2), marker=dict(size=8, color=color),
            customdata=_customdata(g, qlo, qhi), text=_budget_texts(g, who),
            hovertemplate=(f"<b>{label}</b><br>row-level ε = %{{customdata[0]:.3g}}, "
                           "δ = %{customdata[1]:.2g} (guarantee ε = %{customdata[4]:.4g}, "
                           "δ = %{customdata[5]:.2g})<br>%{text}"
                           f"<br>median = %{{y:.3g}}; {qlo}–{qhi}: %{{customdata[6]:.3g}} – "
                           f"%{{customdata[7]:.3g}} over %{{customdata[8]}} runs<br>{SIMULATION}"
                           "<extra>click to open in Explore</extra>")))
    xr = _x_range(summ)
    for _, row in _reference_summary(frame, metric).iterrows():
        y = float(row["median"])
        fig.add_trace(go.Scatter(
            x=list(xr), y=[y, y], mode="lines", name=f"{row['title']} ({REFERENCE})",
            meta=row["algorithm"], line=dict(color=palette.get(row["algorithm"], colors.NONPRIVATE),
                                             width=2, dash="dot"),
            hovertemplate=f"<b>{row['title']}</b><br>{REFERENCE}: no privacy guarantee"
                          f"<br>median = {y:.3g} over {int(row['runs'])} runs<extra></extra>"))
    reps = int(frame["rep"].nunique()) if not frame.empty else 0
    delta = summ["delta"].iloc[0] if not summ.empty else math.nan
    sub = (f"median and {qlo}–{qhi} band over {reps} repetitions at δ = {delta:.2g}; "
           "simulation (seeded, not a release); non-private diagnostic")
    fig.update_layout(
        title=dict(text=f"{title or METRICS.get(metric, metric) + ' vs ε'}<br><sup>{sub}</sup>"),
        template=colors.TEMPLATE, hovermode="closest", clickmode="event+select",
        xaxis=dict(type="log", title=EPS_AXIS),
        yaxis=dict(title=METRICS.get(metric, metric), type="log" if log_y else "linear"),
        legend=dict(orientation="h", yanchor="top", y=-0.25))
    return fig


def structure_figure(cmp: Any, *, title: str | None = None) -> go.Figure:
    """The share of runs whose private structure succeeded vs ε (e.g. FriendlyCore's core formed
    rather than its fallback answering). An algorithm whose spec names no structure step is
    drawn dashed with the share of runs that released centers at all (not ⊥)."""
    frame = _frame(cmp)
    who = answered_texts(frame, "epsilon")
    summ = _private_summary(frame, "loss", (0.1, 0.9))
    palette = algorithm_colors(frame) if not frame.empty else {}
    fig = go.Figure()
    for name, g in summ.groupby("algorithm", sort=False):
        g = g.sort_values("epsilon")
        has = bool(g["structure_share"].notna().any())
        y = (g["structure_share"] if has else g["released_share"]).to_numpy(float)
        what = "structure succeeded" if has else "released centers (no structure step)"
        label = str(g["title"].iloc[0]) + ("" if has else " (released)")
        fig.add_trace(go.Scatter(
            x=g["epsilon"].to_numpy(float), y=y, mode="lines+markers", name=label, legendgroup=name,
            meta=name, line=dict(color=palette[name], dash="solid" if has else "dash"),
            customdata=_customdata(g.assign(q10=np.nan, q90=np.nan), "q10", "q90"),
            text=_budget_texts(g, who),
            hovertemplate=(f"<b>{g['title'].iloc[0]}</b><br>row-level ε = %{{customdata[0]:.3g}}, "
                           "δ = %{customdata[1]:.2g}<br>%{text}"
                           f"<br>{what} in %{{y:.0%}} of %{{customdata[8]}} runs<br>{SIMULATION}"
                           "<extra>click to open in Explore</extra>")))
    fig.update_layout(
        title=dict(text=f"{title or 'How often each algorithm’s private structure succeeded'}"
                        "<br><sup>solid: its own structure (e.g. FriendlyCore’s core) rather than a "
                        "fallback; dashed: released centers at all; simulation (seeded, not a "
                        "release)</sup>"),
        template=colors.TEMPLATE, hovermode="closest", clickmode="event+select",
        xaxis=dict(type="log", title=EPS_AXIS),
        yaxis=dict(title="share of runs", range=[-0.02, 1.05], tickformat=".0%"),
        legend=dict(orientation="h", yanchor="top", y=-0.25))
    return fig


def available_metrics(cmp: Any) -> list[str]:
    """The accuracy metrics the frame holds values for (labels / true centers may be absent)."""
    frame = _frame(cmp)
    return [m for m in ("loss", "labeling_failure", "center_error")
            if m in frame and frame[m].notna().any()]


def compare_figures(cmp: Any, *, quantiles: tuple[float, float] = (0.1, 0.9)) -> dict[str, go.Figure]:
    """Every figure of a comparison: each available accuracy metric, the run time and the
    structure success share (keys: metric names, "seconds", "structure")."""
    frame = _frame(cmp)
    timed = frame.assign(seconds=frame["seconds"] + frame["stage_seconds"]) if not frame.empty else frame
    out = {m: metric_figure(frame, m, quantiles=quantiles) for m in available_metrics(frame)}
    out["seconds"] = metric_figure(timed, "seconds", quantiles=quantiles, log_y=True,
                                   title="Run time vs ε (loaded shared machine)", split=False)
    out["structure"] = structure_figure(frame)
    return out


def clicked_point(point: Mapping[str, Any]) -> tuple[str, float] | None:
    """(algorithm, row-level ε) of a clicked median marker (a plotly selection point), or None.

    Streamlit may deliver an array ``customdata`` as ``{"0": ..., "1": ...}``; both forms work.
    """
    cd = point.get("customdata") if hasattr(point, "get") else None
    if isinstance(cd, Mapping):
        cd = [cd[k] for k in sorted(cd, key=lambda s: int(s))]
    if not isinstance(cd, (list, tuple, np.ndarray)) or len(cd) < len(CUSTOMDATA):
        return None
    name, eps = cd[len(CUSTOMDATA) - 1], cd[0]
    try:
        eps = float(eps)
    except (TypeError, ValueError):
        return None
    if not isinstance(name, str) or not math.isfinite(eps) or eps <= 0:
        return None
    return name, eps


def small_multiples_figure(cmp: Any, metric: str = "loss", *,
                           quantiles: tuple[float, float] = (0.1, 0.9), cols: int = 3) -> go.Figure:
    """``metric`` vs row-level ε as small multiples: one panel per private algorithm (its median
    line and quantile band; an algorithm with a fallback shows both lines), the non-private
    reference dotted in every panel, shared axes, panel titles instead of a legend (issue 27:
    13 overlapping lines whose legend collided with the axis titles). Median markers carry the
    same ``customdata`` as :func:`metric_figure`, so a click opens that point in Explore."""
    from plotly.subplots import make_subplots

    frame = split_fallback(_frame(cmp))
    qlo, qhi = quantile_names(quantiles)
    summ = _private_summary(frame, metric, quantiles)
    palette = algorithm_colors(frame) if not frame.empty else {}
    bases = list(dict.fromkeys(str(a).split("|")[0] for a in summ["algorithm"])) if not summ.empty else []
    cols = max(1, min(cols, len(bases)))
    rows = max(1, math.ceil(len(bases) / cols))
    titles = [str(summ[summ["algorithm"].astype(str).str.split("|").str[0] == b]["title"].iloc[0]).split(
        " alone")[0].split(" with fallback")[0] for b in bases]
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=titles, horizontal_spacing=0.04, vertical_spacing=0.12)
    refs = _reference_summary(frame, metric)
    xr = _x_range(summ)
    for i, base in enumerate(bases):
        r, c = i // cols + 1, i % cols + 1
        for name, g in summ[summ["algorithm"].astype(str).str.split("|").str[0] == base].groupby(
                "algorithm", sort=False):
            g = g.sort_values("epsilon")
            color, label = palette[name], str(g["title"].iloc[0])
            x = g["epsilon"].to_numpy(float)
            for tr in _band(x, g[qlo].to_numpy(float), g[qhi].to_numpy(float), color, name):
                fig.add_trace(tr, row=r, col=c)
            fig.add_trace(go.Scatter(
                x=x, y=g["median"].to_numpy(float), mode="lines+markers", name=label, meta=name,
                showlegend=False, line=dict(color=color, width=2), marker=dict(size=7, color=color),
                customdata=_customdata(g, qlo, qhi),
                hovertemplate=(f"<b>{label}</b><br>row-level ε = %{{customdata[0]:.3g}}<br>median = "
                               f"%{{y:.3g}}; {qlo}–{qhi}: %{{customdata[6]:.3g}} – %{{customdata[7]:.3g}}"
                               f"<br>{SIMULATION}<extra>click to open in Explore</extra>")),
                row=r, col=c)
        for _, ref in refs.iterrows():
            fig.add_trace(go.Scatter(
                x=list(xr), y=[float(ref["median"])] * 2, mode="lines", showlegend=False,
                name=f"{ref['title']} ({REFERENCE})", line=dict(color=colors.NONPRIVATE, width=1.5,
                                                                 dash="dot"),
                hovertemplate=f"{REFERENCE}: median = {float(ref['median']):.3g}<extra></extra>"),
                row=r, col=c)
    fig.update_xaxes(type="log")
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text="row-level ε", row=rows, col=c)
    fig.update_yaxes(title_text=METRICS.get(metric, metric).split(" (")[0], col=1)
    reps = int(frame["rep"].nunique()) if not frame.empty else 0
    fig.update_layout(
        title=dict(text=f"{METRICS.get(metric, metric)} vs row-level ε, one panel per method"
                        f"<br><sup>median and {qlo}–{qhi} band over {reps} repetitions; dotted: the "
                        f"{REFERENCE}; simulation (seeded, not a release)</sup>"),
        template=colors.TEMPLATE, hovermode="closest", clickmode="event+select", showlegend=False,
        height=260 * rows + 120, margin=dict(t=110))
    return fig
