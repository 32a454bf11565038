"""The Easy Instances storyboard (note §7), drawn from one Result's trace; nothing is recomputed.

Panels: (a) the tuples, the sample Q with its balls B(y_i, γλ_i), the chosen tuple Y* and the
tuples it fails to partition; (b) ℓ̂_Y against τ₁ per sampled tuple, and q̂ against τ₂ (the
⊥/continue gauge); (c) the aggregation: noise clouds (2σ circles) around the noisy centers for
PrivatekNoisyCenters, or the Voronoi clusters, the private bounding segments and private vs
non-private averages for PrivatekAverages; (d) the answer: the private Lloyd step (k-means) or
the Gaussians' 2σ ellipses (GMM), against the non-private values. Legends say which values are
private releases and which are non-private diagnostics. For d > 2 everything is drawn in the
data's first two principal components (circles keep their radius: the projection is orthonormal).

References: Cohen et al. 2021, §4–6; note §7.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import centers_trace, downsample_index, points_traces, project_2d
from dpviz.viz.storyboard import release_label
from dpviz.viz.storyboards import register_storyboard, result_label

PANEL_TITLES = (
    "(a) tuples, sample Q and balls B(y_i, γλ_i)",
    "(b) ℓ̂_Y vs τ₁ · q̂ vs τ₂",
    "(c) aggregation",
    "(d) answer",
)

#: Points of the circle template (a closed polyline).
_CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 49)), np.sin(np.linspace(0, 2 * np.pi, 49))], axis=1)


def _nd(name: str) -> str:
    return release_label(name, False)


def _pr(name: str) -> str:
    return release_label(name, True)


def _data(result: Result, name: str) -> dict[str, Any] | None:
    step = result.find(name)
    return None if step is None else dict(step.data)


def _circles(centers2: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x, y of several circles as one polyline (None-separated, i.e. NaN)."""
    xs, ys = [], []
    for c, r in zip(centers2, radii, strict=True):
        pts = c + r * _CIRCLE
        xs.extend([*pts[:, 0], np.nan])
        ys.extend([*pts[:, 1], np.nan])
    return np.array(xs), np.array(ys)


def _ellipses(means2: np.ndarray, covs2: np.ndarray, scale: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for m, S in zip(means2, covs2, strict=True):
        w, V = np.linalg.eigh(0.5 * (S + S.T))
        pts = m + (_CIRCLE * (scale * np.sqrt(np.maximum(w, 0.0)))) @ V.T
        xs.extend([*pts[:, 0], np.nan])
        ys.extend([*pts[:, 1], np.nan])
    return np.array(xs), np.array(ys)


def _line(x: np.ndarray, y: np.ndarray, *, name: str, color: str, width: float = 1.2,
          dash: str | None = None, showlegend: bool = True) -> go.Scatter:
    return go.Scatter(x=x, y=y, mode="lines", name=name, showlegend=showlegend,
                      line=dict(color=color, width=width, dash=dash), hoverinfo="skip")


def _panel_tuples(fig: go.Figure, result: Result, proj: Any, max_points: int) -> str | None:
    tup = _data(result, "tuples")
    test = _data(result, "test")
    if tup is None or tup.get("tuples") is None:
        return "no tuples recorded"
    T = np.asarray(tup["tuples"])
    t, k, d = T.shape
    P = T.reshape(t * k, d)
    idx = downsample_index(P.shape[0], max_points)
    fig.add_traces(points_traces(proj.transform(P[idx]), name=_nd("Points(T)"),
                                 opacity=0.4, size=4), rows=1, cols=1)
    if test is None:
        return None
    Q = T[np.asarray(test["sample"])]
    radii = np.asarray(test["radii"])
    Q2 = proj.transform(Q.reshape(-1, d))
    x, y = _circles(Q2, radii.reshape(-1))
    fig.add_trace(_line(x, y, name=_nd("balls B(y_i, γλ_i) of Q"), color=colors.KEPT),
                  row=1, col=1)
    fig.add_trace(centers_trace(Q2, name=_nd("sample Q"), color=colors.KEPT,
                                symbol="circle", size=7), row=1, col=1)
    part = np.asarray(test["partitioned"], dtype=bool)
    if test.get("chosen_index") is not None:
        bad = T[~part].reshape(-1, d)
        if bad.size:
            bi = downsample_index(bad.shape[0], max_points)
            label = _nd(f"tuples not partitioned by B_Y* ({int((~part).sum())})")
            fig.add_traces(points_traces(proj.transform(bad[bi]), color=colors.REMOVED, size=6, opacity=0.8,
                                         name=label), rows=1, cols=1)
        fig.add_trace(centers_trace(proj.transform(T[test["chosen_index"]]), color=colors.REFERENCE,
                                    name=_nd("chosen tuple Y*"), symbol="diamond", size=11),
                      row=1, col=1)
    return None


def _panel_test(fig: go.Figure, result: Result) -> str | None:
    test = _data(result, "test")
    status = _data(result, "status") or {}
    if test is None:
        return None
    ell_hat = np.asarray(test["ell_hat"])
    m = ell_hat.size
    xs = [f"Y{j + 1}" for j in range(m)]
    fig.add_trace(go.Bar(x=xs, y=ell_hat, name=_nd("ℓ̂_Y = ℓ_Y + Lap(1/ε₁)"),
                         marker_color=[colors.KEPT if p else colors.REMOVED for p in test["passed"]]),
                  row=1, col=2)
    fig.add_trace(go.Scatter(x=xs, y=np.asarray(test["ell"]), mode="markers",
                             name=_nd("ℓ_Y (tuples not partitioned)"),
                             marker=dict(color=colors.NONPRIVATE, symbol="line-ew-open", size=18)),
                  row=1, col=2)
    fig.add_trace(_line(np.array([xs[0], xs[-1]]), np.full(2, test["tau1"]), name="τ₁ = ln(2m/β)/ε₁",
                        color=colors.THRESHOLD, dash="dash"), row=1, col=2)
    if status.get("q_hat") is not None:
        verdict = "continue" if status["success"] else "⊥"
        fig.add_annotation(text=f"q = {test['q']} of m = {m} passed · q̂ = {status['q_hat']:.2f} "
                                f"{'≥' if status['success'] else '<'} τ₂ = {status['tau2']:.2f} → {verdict}",
                           xref="x2 domain", yref="y2 domain", x=0.5, y=1.02, showarrow=False,
                           font=dict(size=11, color=colors.PRIVATE))
    return None


def _panel_aggregation(fig: go.Figure, result: Result, proj: Any, X: np.ndarray,
                       max_points: int) -> str | None:
    noisy = _data(result, "noisy_centers")
    chosen = _data(result, "chosen")
    if noisy is not None and noisy.get("centers") is not None and chosen is not None:
        C = proj.transform(np.asarray(noisy["centers"]))
        c = proj.transform(np.asarray(chosen["center"]))
        sig = np.asarray(noisy["sigma"])
        x, y = _circles(C, 2 * sig)
        fig.add_trace(_line(x, y, name=_pr("2σ_i noise clouds"), color=colors.PRIVATE,
                            dash="dot"), row=2, col=1)
        x, y = _circles(c, 2 * sig)
        fig.add_trace(_line(x, y, name=_nd("2σ_i around c_i (where ĉ_i lands)"),
                            color=colors.NONPRIVATE, width=0.8), row=2, col=1)
        fig.add_trace(centers_trace(c, name=_nd("Y* = c_i"), color=colors.REFERENCE,
                                    symbol="diamond", size=10), row=2, col=1)
        fig.add_trace(centers_trace(C, name=_pr("noisy centers ĉ_i"), color=colors.PRIVATE),
                      row=2, col=1)
        return None
    avg = _data(result, "averages")
    if avg is not None and avg.get("centers") is not None:
        clus = _data(result, "clusters") or {}
        tup = _data(result, "tuples")
        if tup is not None and clus.get("labels") is not None:
            T = np.asarray(tup["tuples"])
            P = T.reshape(-1, T.shape[2])
            idx = downsample_index(P.shape[0], max_points)
            fig.add_traces(points_traces(proj.transform(P[idx]), np.asarray(clus["labels"])[idx],
                                         name=_nd("Voronoi of Points(T) by Y*"), opacity=0.4),
                           rows=2, cols=1)
        seg = np.asarray(_data(result, "segments")["segments"])
        if seg.shape[1] == 2:  # the per-axis segments are a box in 2-D
            xs, ys = [], []
            for box in seg:
                (a0, b0), (a1, b1) = box
                xs.extend([a0, b0, b0, a0, a0, np.nan])
                ys.extend([a1, a1, b1, b1, a1, np.nan])
            fig.add_trace(_line(np.array(xs), np.array(ys), name=_pr("bounding segments [a_j, b_j]"),
                                color=colors.PRIVATE, dash="dash"), row=2, col=1)
        nonp = np.asarray(_data(result, "averages_nonprivate")["centers"])
        fig.add_trace(centers_trace(proj.transform(nonp), name=_nd("Avg(C_i)"), color=colors.NONPRIVATE,
                                    symbol="circle-open", size=12, line_color=colors.NONPRIVATE),
                      row=2, col=1)
        fig.add_trace(centers_trace(proj.transform(np.asarray(avg["centers"])),
                                    name=_pr("private averages â_i"), color=colors.PRIVATE),
                      row=2, col=1)
        return None
    return None


def _panel_answer(fig: go.Figure, result: Result, proj: Any, X: np.ndarray, max_points: int,
                  reference_centers: np.ndarray | None) -> None:
    idx = downsample_index(X.shape[0], max_points)
    fig.add_traces(points_traces(proj.transform(X[idx]), name="data", opacity=0.3, showlegend=False),
                   rows=2, cols=2)
    if reference_centers is not None:
        fig.add_trace(centers_trace(proj.transform(np.asarray(reference_centers)),
                                    name=_nd("non-private k-means++"), color=colors.NONPRIVATE,
                                    symbol="circle-open", size=13, line_color=colors.NONPRIVATE),
                      row=2, col=2)
    gmm = _data(result, "gmm")
    if gmm is not None and gmm.get("means") is not None:
        M = np.asarray(gmm["means"])
        S = np.asarray(gmm["covariances"])
        comps = proj.components
        x, y = _ellipses(proj.transform(M), np.einsum("da,kde,eb->kab", comps, S, comps))
        fig.add_trace(_line(x, y, name=_pr("2σ ellipses of (μ̂_i, Σ̂_i)"), color=colors.PRIVATE),
                      row=2, col=2)
        fig.add_trace(centers_trace(proj.transform(M), name=_pr("means μ̂_i"), color=colors.PRIVATE),
                      row=2, col=2)
    lloyd = _data(result, "lloyd")
    if lloyd is not None and lloyd.get("centers") is not None:
        nonp = _data(result, "lloyd_nonprivate")
        if nonp is not None:
            fig.add_trace(centers_trace(proj.transform(np.asarray(nonp["centers"])),
                                        name=_nd("Lloyd step without noise"),
                                        color=colors.NONPRIVATE, symbol="x-thin-open", size=12,
                                        line_color=colors.NONPRIVATE), row=2, col=2)
        fig.add_trace(centers_trace(proj.transform(np.asarray(lloyd["centers"])),
                                    name=_pr("private Lloyd step"), color=colors.FINAL),
                      row=2, col=2)


def easy_instances_storyboard(result: Result, X: np.ndarray, *, reference_centers: np.ndarray | None = None,
                              max_points: int = 4_000) -> go.Figure:
    """The 4-panel storyboard of an Easy Instances run (k-means, GMM or a bare k-tuple aggregator).

    A ⊥ run keeps its panels: what ran is drawn, and the reason is in the title.
    """
    X = np.asarray(X, dtype=float)
    proj = project_2d(X)
    fig = make_subplots(rows=2, cols=2, subplot_titles=PANEL_TITLES, horizontal_spacing=0.08,
                        vertical_spacing=0.12)
    _panel_tuples(fig, result, proj, max_points)
    _panel_test(fig, result)
    _panel_aggregation(fig, result, proj, X, max_points)
    _panel_answer(fig, result, proj, X, max_points, reference_centers)
    plan = _data(result, "plan") or {}
    facts = []
    if plan:
        ell = plan.get("test_ell", float("nan"))
        facts.append(f"t = {plan.get('test_t')}, m = {plan.get('test_m')}, ℓ = {ell:.0f}, "
                     f"n_min = {plan.get('n_min')}")
        if "L" in plan:
            facts.append(f"L = {plan['L']:.0f}, ε_avg = {plan['eps_avg']:.2g}, t₀ = {plan['t0']:,}")
        if "kappa" in plan:
            facts.append(f"γ = {plan.get('test_gamma')}, κ = {plan['kappa']:.3g}")
    status = f"output ⊥: {result.failure}" if result.centers is None else f"{len(result.centers)} centers"
    fig.update_layout(
        title=dict(text=f"{result_label(result)}<br><sup>{status} · {' · '.join(facts)}"
                        f"{' · ' + proj.note() if proj.note() else ''}</sup>"),
        template=colors.TEMPLATE, height=820, legend=dict(itemsizing="constant", font=dict(size=10)))
    for r, c in ((1, 1), (2, 1), (2, 2)):
        fig.update_xaxes(title_text=proj.axis_titles[0], row=r, col=c)
        fig.update_yaxes(title_text=proj.axis_titles[1], row=r, col=c)
    return fig


register_storyboard("easy_instances", easy_instances_storyboard)
register_storyboard("easy_instances_gmm", easy_instances_storyboard)
