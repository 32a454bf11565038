"""The Easy Instances storyboard (note §7), drawn from one Result's trace.

Six panels, each with its own legend: (a) the tuples, the sample Q with its balls B(y_i, γλ_i), the
chosen tuple Y* and the tuples it fails to partition; (b) ℓ̂_Y against τ₁ per sampled tuple;
(c) the ⊥/continue gauge, q̂ against τ₂; (d) the Voronoi clusters of Points(T) by Y* and the
aggregation: noise clouds (2σ circles) around the noisy centers for PrivatekNoisyCenters, or the
private bounding segments and private vs non-private averages for PrivatekAverages;
(e) PrivatekAverages' interior-point scores along axis 1 with the clipped segments; (f) the answer:
the private Lloyd step (k-means) or the Gaussians' 2σ ellipses (GMM), against the non-private
values. Legends say which values are private releases and which are non-private diagnostics.

Everything is read from the trace except two diagnostics computed here from the trace's internal
(non-private) steps, and labelled so: the Voronoi cells of Y* for NoisyCenters (which never
forms them), and the interior-point score q(S, y) on a coarse display grid (the algorithm samples
the grid by blocks and never enumerates it). For d > 2 the point panels are drawn in the data's
first two principal components (circles keep their radius: the projection is orthonormal).

References: Cohen et al. 2021, §4–6 and App. A.1; note §7.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.clustering.easy_instances.interior_point import ip_blocks
from dpviz.geometry import nearest_center
from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import centers_trace, downsample_index, points_traces, project_2d
from dpviz.viz.storyboard import release_label
from dpviz.viz.storyboards import register_storyboard, result_label

PANEL_TITLES = (
    "(a) tuples, sample Q and balls B(y_i, γλ_i)",
    "(b) ℓ̂_Y vs τ₁ per sampled tuple",
    "(c) ⊥/continue gauge: q̂ vs τ₂",
    "(d) Voronoi clusters of Y* and aggregation",
    "(e) interior-point scores and clipped segments, axis 1",
    "(f) answer",
)

#: (row, col) of each panel, in PANEL_TITLES order: one column, each legend to the right of its panel.
PANELS = tuple((r, 1) for r in range(1, 7))

#: Relative panel heights (the gauge is a single pair of bars).
ROW_HEIGHTS = (1.0, 0.6, 0.3, 1.0, 0.7, 1.0)

#: Points of the coarse display grid of panel (e) (the mechanism's grid is never enumerated).
IP_DISPLAY_POINTS = 400

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
        return _empty(fig, 1, "no tuples recorded (a bare k-tuple aggregator run)")
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
    if test is None:
        return _empty(fig, 2, "the test did not run (infeasible: ⊥ before the tuples are read)")
    ell_hat = np.asarray(test["ell_hat"])
    m = ell_hat.size
    xs = [f"Y{j + 1}" for j in range(m)]
    fig.add_trace(go.Bar(x=xs, y=ell_hat, name=_nd("ℓ̂_Y = ℓ_Y + Lap(1/ε₁) (blue: pass, red: fail)"),
                         marker_color=[colors.KEPT if p else colors.REMOVED for p in test["passed"]]),
                  row=2, col=1)
    fig.add_trace(go.Scatter(x=xs, y=np.asarray(test["ell"]), mode="markers",
                             name=_nd("ℓ_Y (tuples not partitioned)"),
                             marker=dict(color=colors.NONPRIVATE, symbol="line-ew-open", size=18)),
                  row=2, col=1)
    fig.add_trace(_line(np.array([xs[0], xs[-1]]), np.full(2, test["tau1"]), name="τ₁ = ln(2m/β)/ε₁ (public)",
                        color=colors.THRESHOLD, dash="dash"), row=2, col=1)
    return None


def _panel_gauge(fig: go.Figure, result: Result) -> str | None:
    """(c) q̂ = q + Lap(1/ε₂) against τ₂ = m − ln(2/β)/ε₂: Success (continue) or Failure (⊥)."""
    test = _data(result, "test")
    status = _data(result, "status") or {}
    if test is None or status.get("q_hat") is None:
        return _empty(fig, 3, "no gauge: the test did not run (infeasible: ⊥ before reading data)")
    m, q_hat, tau2 = int(status["m"]), float(status["q_hat"]), float(status["tau2"])
    ok = bool(status["success"])
    cats = np.array(["q", "q̂"])
    fig.add_trace(go.Bar(y=["q̂"], x=[q_hat], orientation="h", name=_pr(f"q̂ = q + Lap(1/ε₂) = {q_hat:.2f}"),
                         marker_color=colors.KEPT if ok else colors.REMOVED), row=3, col=1)
    fig.add_trace(go.Bar(y=["q"], x=[test["q"]], orientation="h", marker_color=colors.NONPRIVATE,
                         opacity=0.5, name=_nd(f"q = {test['q']} of m = {m} passed")), row=3, col=1)
    fig.add_trace(_line(np.full(2, tau2), cats, name=f"τ₂ = m − ln(2/β)/ε₂ = {tau2:.2f} (public)",
                        color=colors.THRESHOLD, dash="dash", width=2), row=3, col=1)
    fig.add_trace(_line(np.full(2, float(m)), cats, name=f"m = {m} sampled tuples (public)",
                        color=colors.DATA, dash="dot"), row=3, col=1)
    verdict = f"q̂ = {q_hat:.2f} {'≥' if ok else '<'} τ₂ = {tau2:.2f} → {'continue' if ok else '⊥'}"
    for ann in fig.layout.annotations:  # the verdict joins the panel's title
        if ann.text == PANEL_TITLES[2]:
            ann.text = f"{PANEL_TITLES[2]}: {verdict}"
    return None


def _empty(fig: go.Figure, panel: int, text: str) -> str:
    """Say in an empty panel why it is empty (a legend entry too, so every panel has a legend)."""
    ax = "" if panel == 1 else str(panel)
    fig.add_annotation(text=text, xref=f"x{ax} domain", yref=f"y{ax} domain", x=0.5, y=0.5,
                       showarrow=False, font=dict(size=11, color=colors.THRESHOLD))
    r, c = PANELS[panel - 1]
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"({'abcdef'[panel - 1]}) {text}",
                             marker=dict(color=colors.THRESHOLD)), row=r, col=c)
    return text


def _points_of(result: Result, X: np.ndarray) -> np.ndarray | None:
    """Points(T), (t·k, d): from the "tuples" step, or X itself for a bare aggregator run on X."""
    tup = _data(result, "tuples")
    if tup is not None and tup.get("tuples") is not None:
        T = np.asarray(tup["tuples"])
        return T.reshape(-1, T.shape[2])
    return None


def _voronoi(fig: go.Figure, result: Result, proj: Any, X: np.ndarray, max_points: int) -> None:
    """Points(T) coloured by the Voronoi cell of Y* (recorded for Averages; computed here, as a
    non-private diagnostic, for NoisyCenters, which never forms the cells)."""
    clus = _data(result, "clusters") or {}
    P = _points_of(result, X)
    if clus.get("labels") is not None:
        labels = np.asarray(clus["labels"])
        if P is None and X.shape[0] == labels.size:
            P = X
        name = _nd("Voronoi of Points(T) by Y*")
    else:
        test = _data(result, "test") or {}
        if P is None or test.get("chosen_index") is None:
            return
        chosen = _data(result, "chosen")
        Y = (np.asarray(chosen["center"]) if chosen is not None
             else np.asarray(_data(result, "tuples")["tuples"])[test["chosen_index"]])
        labels, _ = nearest_center(P, Y)
        name = _nd("Voronoi of Points(T) by Y* (drawn here)")
    if P is None or P.shape[0] != labels.size:
        return
    idx = downsample_index(P.shape[0], max_points)
    fig.add_traces(points_traces(proj.transform(P[idx]), labels[idx], name=name, opacity=0.35, size=4),
                   rows=4, cols=1)


def _panel_aggregation(fig: go.Figure, result: Result, proj: Any, X: np.ndarray,
                       max_points: int) -> str | None:
    _voronoi(fig, result, proj, X, max_points)
    noisy = _data(result, "noisy_centers")
    chosen = _data(result, "chosen")
    if noisy is not None and noisy.get("centers") is not None and chosen is not None:
        C = proj.transform(np.asarray(noisy["centers"]))
        c = proj.transform(np.asarray(chosen["center"]))
        sig = np.asarray(noisy["sigma"])
        x, y = _circles(C, 2 * sig)
        fig.add_trace(_line(x, y, name=_pr("2σ_i noise clouds"), color=colors.PRIVATE,
                            dash="dot"), row=4, col=1)
        x, y = _circles(c, 2 * sig)
        fig.add_trace(_line(x, y, name=_nd("2σ_i around c_i (where ĉ_i lands)"),
                            color=colors.NONPRIVATE, width=0.8), row=4, col=1)
        fig.add_trace(centers_trace(c, name=_nd("Y* = c_i"), color=colors.REFERENCE,
                                    symbol="diamond", size=10), row=4, col=1)
        fig.add_trace(centers_trace(C, name=_pr("noisy centers ĉ_i"), color=colors.PRIVATE),
                      row=4, col=1)
        return None
    avg = _data(result, "averages")
    if avg is not None and avg.get("centers") is not None:
        seg = np.asarray(_data(result, "segments")["segments"])
        if seg.shape[1] == 2:  # the per-axis segments are a box in 2-D
            xs, ys = [], []
            for box in seg:
                (a0, b0), (a1, b1) = box
                xs.extend([a0, b0, b0, a0, a0, np.nan])
                ys.extend([a1, a1, b1, b1, a1, np.nan])
            fig.add_trace(_line(np.array(xs), np.array(ys), name=_pr("bounding segments [a_j, b_j]"),
                                color=colors.PRIVATE, dash="dash"), row=4, col=1)
        nonp = np.asarray(_data(result, "averages_nonprivate")["centers"])
        fig.add_trace(centers_trace(proj.transform(nonp), name=_nd("Avg(C_i)"), color=colors.NONPRIVATE,
                                    symbol="circle-open", size=12, line_color=colors.NONPRIVATE),
                      row=4, col=1)
        fig.add_trace(centers_trace(proj.transform(np.asarray(avg["centers"])),
                                    name=_pr("private averages â_i"), color=colors.PRIVATE),
                      row=4, col=1)
        return None
    return _empty(fig, 4, f"no aggregation: {result.failure or 'not run'}")


def ip_scores(S_sorted: np.ndarray, y: np.ndarray, *, radius: float, r_min: float) -> np.ndarray:
    """InteriorPoint's score q(S, y) at display points y (each snapped to the r_min grid), read off
    the same blocks the sampler draws from (:func:`~dpviz.clustering.easy_instances.interior_point.
    ip_blocks`). A diagnostic: it reads the points S."""
    blocks = ip_blocks(S_sorted, radius, r_min)
    order = np.argsort(blocks.start)
    start, score = blocks.start[order], blocks.score[order]
    j = np.clip(np.rint((np.clip(y, -radius, radius) + radius) / r_min), 0, blocks.n_grid - 1)
    return score[np.searchsorted(start, j.astype(np.int64), side="right") - 1]


def _panel_interior_point(fig: go.Figure, result: Result, X: np.ndarray) -> str | None:
    """(e) PrivatekAverages' BoundingSegment on axis 1 of each cluster: the two InteriorPoint scores
    (t₀ smallest and t₀ largest points; weight ∝ exp(ε_c·q/8)) on a coarse display grid, and the
    released clipped segment [a_1, b_1] with the number of points it clips."""
    seg = _data(result, "segments") or {}
    clus = _data(result, "clusters") or {}
    plan = _data(result, "plan") or {}
    if seg.get("segments") is None or clus.get("labels") is None or "t0" not in plan:
        why = ("PrivatekNoisyCenters has no interior point" if "kappa" in plan
               else f"PrivatekAverages did not reach it: {result.failure or 'not run'}")
        return _empty(fig, 5, why)
    labels = np.asarray(clus["labels"])
    P = _points_of(result, X)
    if P is None and X.shape[0] == labels.size:
        P = X
    if P is None:
        return _empty(fig, 5, "no points recorded")
    segments = np.asarray(seg["segments"])
    radius, r_min, t0 = float(plan["radius"]), float(plan["r_min"]), int(plan["t0"])
    k = segments.shape[0]
    cols = [np.sort(P[labels == i, 0]) for i in range(k)]
    scores = []
    for i, col in enumerate(cols):  # loop over the k clusters
        if not col.size:
            continue
        tt = min(t0, col.size)
        a, b = segments[i, 0]
        pad = 0.15 * (col[-1] - col[0]) + 3 * r_min
        y = np.linspace(min(col[0], a) - pad, max(col[-1], b) + pad, IP_DISPLAY_POINTS)
        for part, end, dash in ((col[:tt], "lower end: t₀ smallest", None),
                                (col[-tt:], "upper end: t₀ largest", "dot")):
            scores.append((i, end, dash, y, ip_scores(part, y, radius=radius, r_min=r_min)))
    top = max([float(q.max()) for *_, q in scores] + [1.0])
    mid = segments[:, 0, :].mean(axis=1)  # each cluster drawn around its segment's midpoint
    for i, end, dash, y, q in scores:
        fig.add_trace(go.Scatter(x=y - mid[i], y=q, mode="lines",
                                 name=_nd(f"cluster {i + 1}: score q, {end}"),
                                 line=dict(color=colors.cluster_color(i), dash=dash, shape="hv")),
                      row=5, col=1)
    for i, col in enumerate(cols):  # the released segments, as bars below the scores
        a, b = segments[i, 0]
        clipped = int(np.count_nonzero((col < a) | (col > b)))
        fig.add_trace(go.Scatter(x=[a - mid[i], b - mid[i]], y=[-0.06 * (i + 1) * top] * 2,
                                 mode="lines+markers",
                                 line=dict(color=colors.cluster_color(i), width=5),
                                 marker=dict(symbol="line-ns-open", size=12),
                                 name=_pr(f"cluster {i + 1}: segment [a₁, b₁]") + f" (clips {clipped} "
                                      "points: a non-private count)"), row=5, col=1)
    fig.update_yaxes(title_text=f"score q(S, y); weight ∝ exp(ε_c·q/8), ε_c = {plan['eps_c']:.3g}",
                     range=[-0.06 * (k + 1) * top, 1.05 * top], row=5, col=1)
    fig.update_xaxes(title_text="axis 1, minus each cluster's segment midpoint (a₁ + b₁)/2", row=5, col=1)
    return None


def _panel_answer(fig: go.Figure, result: Result, proj: Any, X: np.ndarray, max_points: int,
                  reference_centers: np.ndarray | None) -> None:
    idx = downsample_index(X.shape[0], max_points)
    fig.add_traces(points_traces(proj.transform(X[idx]), name="data (rows)", opacity=0.3), rows=6, cols=1)
    if reference_centers is not None:
        fig.add_trace(centers_trace(proj.transform(np.asarray(reference_centers)),
                                    name=_nd("non-private k-means++"), color=colors.NONPRIVATE,
                                    symbol="circle-open", size=13, line_color=colors.NONPRIVATE),
                      row=6, col=1)
    gmm = _data(result, "gmm")
    if gmm is not None and gmm.get("means") is not None:
        M = np.asarray(gmm["means"])
        S = np.asarray(gmm["covariances"])
        comps = proj.components
        x, y = _ellipses(proj.transform(M), np.einsum("da,kde,eb->kab", comps, S, comps))
        fig.add_trace(_line(x, y, name=_pr("2σ ellipses of (μ̂_i, Σ̂_i)"), color=colors.PRIVATE),
                      row=6, col=1)
        fig.add_trace(centers_trace(proj.transform(M), name=_pr("means μ̂_i"), color=colors.PRIVATE),
                      row=6, col=1)
    lloyd = _data(result, "lloyd")
    if lloyd is not None and lloyd.get("centers") is not None:
        nonp = _data(result, "lloyd_nonprivate")
        if nonp is not None:
            fig.add_trace(centers_trace(proj.transform(np.asarray(nonp["centers"])),
                                        name=_nd("Lloyd step without noise"),
                                        color=colors.NONPRIVATE, symbol="x-thin-open", size=12,
                                        line_color=colors.NONPRIVATE), row=6, col=1)
        fig.add_trace(centers_trace(proj.transform(np.asarray(lloyd["centers"])),
                                    name=_pr("private Lloyd step"), color=colors.FINAL),
                      row=6, col=1)


def _legend_per_panel(fig: go.Figure) -> None:
    """One legend per panel, to its right (plotly's legend, legend2, …, each at its subplot's top)."""
    ids = {}
    for n, (r, c) in enumerate(PANELS, start=1):
        sub = fig.get_subplot(r, c)
        ids["x" if n == 1 else f"x{n}"] = ("legend" if n == 1 else f"legend{n}", sub.xaxis.domain,
                                            sub.yaxis.domain)
    for tr in fig.data:
        leg = ids.get(getattr(tr, "xaxis", None) or "x")
        if leg is not None:
            tr.legend = leg[0]
    for name, _xdom, ydom in ids.values():
        fig.layout[name] = dict(x=1.02, xanchor="left", y=ydom[1], yanchor="top", font=dict(size=10),
                                itemsizing="constant", bgcolor="rgba(255,255,255,0)")


def easy_instances_storyboard(result: Result, X: np.ndarray, *, reference_centers: np.ndarray | None = None,
                              max_points: int = 4_000) -> go.Figure:
    """The 6-panel storyboard of an Easy Instances run (k-means, GMM or a bare k-tuple aggregator).

    A ⊥ run keeps its panels: what ran is drawn, an empty panel says why, and the reason is in
    the title.
    """
    X = np.asarray(X, dtype=float)
    proj = project_2d(X)
    fig = make_subplots(rows=len(PANELS), cols=1, subplot_titles=PANEL_TITLES, vertical_spacing=0.045,
                        row_heights=list(ROW_HEIGHTS))
    _panel_tuples(fig, result, proj, max_points)
    _panel_test(fig, result)
    _panel_gauge(fig, result)
    _panel_aggregation(fig, result, proj, X, max_points)
    _panel_interior_point(fig, result, X)
    _panel_answer(fig, result, proj, X, max_points, reference_centers)
    _legend_per_panel(fig)
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
        template=colors.TEMPLATE, height=2300, margin=dict(r=400), showlegend=True)
    for r, c in ((1, 1), (4, 1), (6, 1)):
        fig.update_xaxes(title_text=proj.axis_titles[0], row=r, col=c)
        fig.update_yaxes(title_text=proj.axis_titles[1], row=r, col=c)
    fig.update_yaxes(title_text="tuples", row=2, col=1)
    fig.update_xaxes(title_text="sampled tuples of Q", row=2, col=1)
    fig.update_xaxes(title_text="count of passing tuples", row=3, col=1)
    return fig


register_storyboard("easy_instances", easy_instances_storyboard)
register_storyboard("easy_instances_gmm", easy_instances_storyboard)
