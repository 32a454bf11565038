"""Storyboard of Balcan et al.'s clustering: projection, partition, candidates, local search, recovery.

Each builder reads one ``Result`` of :func:`dpviz.clustering.balcan.balcan_kmeans` (and, for the
debug panels, the data) and returns a plotly figure; nothing here imports Streamlit. Panels that
read the data without noise say "non-private diagnostic" in their titles (engineer's note §7).

References: Balcan, Dick, Liang, Mou, Zhang, ICML 2017, Alg. 1–4, Fig. 1; note §7.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import centers_trace, downsample_index, project_2d
from dpviz.viz.storyboards import register_storyboard, result_label
from dpviz.viz.text import wrap

#: Subplot titles of the storyboard, in order.
PANELS = (
    "1 · JL projection (coords 1–2; non-private diagnostic)",
    "2 · activation f(m) = P[m + Lap(1/ε′) > γ] (DP-safe)",
    "3 · active cubes per level and shift (DP-safe)",
    "4 · candidates and the chosen k (DP-safe)",
    "5 · local search: objective per swap (non-private diagnostic)",
    "6 · recovered vs non-private centers (PCA of ℝ^d)",
)


def _first(result: Result, name: str):
    return result.find(name)


def _circle(r: float, m: int = 96) -> tuple[np.ndarray, np.ndarray]:
    t = np.linspace(0.0, 2.0 * np.pi, m)
    return r * np.cos(t), r * np.sin(t)


def projection_traces(result: Result) -> list[go.Scatter]:
    """Projected rows (a sample, coords 1–2) and the public clipping radius Λ_p."""
    step = _first(result, "projection")
    if step is None:
        return []
    Y = np.asarray(step.data["Y_sample"])
    cx, cy = _circle(float(step.data["radius_p"]))
    return [
        go.Scattergl(x=Y[:, 0], y=Y[:, 1], mode="markers", name="projected rows (sample)",
                     marker=dict(size=3, color=colors.with_alpha(colors.cluster_color(0), 0.35))),
        go.Scatter(x=cx, y=cy, mode="lines", name=f"Λ_p = {step.data['radius_p']:.3g} (clip)",
                   line=dict(color="gray", dash="dot")),
    ]


def activation_traces(result: Result) -> list[go.Scatter]:
    """f(m) against the cube count m, with γ marked: a function of public constants only."""
    from dpviz.clustering.balcan.partition import activation_probability

    cfg = _first(result, "config").data
    gamma, eps_level = float(cfg["gamma"]), float(cfg["eps_level"])
    width = max(10.0 / eps_level, 1.0)
    m = np.linspace(max(0.0, gamma - width), gamma + width, 400)
    return [
        go.Scatter(x=m, y=activation_probability(m, eps_level, gamma), mode="lines", name="f(m)",
                   line=dict(color=colors.cluster_color(1))),
        go.Scatter(x=[gamma, gamma], y=[0, 1], mode="lines", name=f"γ = {gamma:.3g}",
                   line=dict(color="gray", dash="dash")),
    ]


def partition_traces(result: Result) -> list[go.Bar]:
    """Active cubes per depth, one bar group per random shift (the tree implied by C)."""
    step = _first(result, "partition")
    if step is None:
        return []
    out = []
    for r, levels in enumerate(step.data["active_per_level"]):
        out.append(go.Bar(x=list(range(len(levels))), y=list(levels), name=f"shift {r + 1}",
                          marker_color=colors.cluster_color(r)))
    return out


def partition_cells_figure(result: Result, shift: int = 0, max_points: int = 2000) -> go.Figure:
    """The active cubes of one shift, level by level, drawn in projected coords 1–2 (DP-safe cells).

    Cubes are axis-aligned, so each projects onto two coordinates as a square (note §7 item 4).
    The projected rows underneath are a non-private diagnostic.
    """
    part = _first(result, "partition")
    proj = _first(result, "projection")
    fig = go.Figure(layout=dict(template=colors.TEMPLATE, yaxis=dict(scaleanchor="x", scaleratio=1),
                                title=f"Active cubes of shift {shift + 1} by depth (coords 1–2; rows: "
                                      "non-private diagnostic)"))
    if proj is not None:
        Y = np.asarray(proj.data["Y_sample"])[:max_points]
        fig.add_trace(go.Scattergl(x=Y[:, 0], y=Y[:, 1], mode="markers", name="projected rows",
                                   marker=dict(size=3, color=colors.DATA)))
    if part is None or shift >= len(part.data["cubes"]):
        return fig
    centers, level = part.data["cubes"][shift]
    _, edge = part.data["roots"][shift]
    for a in np.unique(level):  # loop over depths (≤ ~10)
        c = np.asarray(centers)[np.asarray(level) == a]
        h = edge / 2.0 ** (a + 1)
        xs: list[float | None] = []
        ys: list[float | None] = []
        for x0, y0 in c[:, :2]:  # one closed square per active cube (≤ a few hundred)
            xs += [x0 - h, x0 + h, x0 + h, x0 - h, x0 - h, None]
            ys += [y0 - h, y0 - h, y0 + h, y0 + h, y0 - h, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"depth {a} ({len(c)} active)",
                                 line=dict(color=colors.cluster_color(int(a)), width=1)))
    return fig


def candidate_traces(result: Result) -> list[go.Scattergl]:
    """Candidates (coords 1–2 of ℝ^p) coloured by depth, and the k chosen by the local search."""
    cand = _first(result, "candidates")
    ls = _first(result, "local_search")
    if cand is None:
        return []
    C = np.asarray(cand.data["centers"])
    level = np.asarray(cand.data["level"])
    out = [go.Scattergl(x=C[:, 0], y=C[:, 1], mode="markers", name=f"candidates (|C| = {len(C)})",
                        marker=dict(size=6, color=level, colorscale="Viridis", showscale=False),
                        text=[f"depth {a}" for a in level])]
    if ls is not None:
        U = np.asarray(ls.data["centers_projected"])
        out.append(centers_trace(U[:, :2], name="chosen Z (projected)", color=colors.PRIVATE, symbol="x"))
    return out


def local_search_traces(result: Result) -> list[go.Scatter]:
    """L(Z^(t)) per step, the chosen iterate t*, and the probability of each drawn swap."""
    dbg = _first(result, "local_search_debug")
    ls = _first(result, "local_search")
    if dbg is None or ls is None:
        return []
    L = np.asarray(dbg.data["losses"])
    t = np.arange(len(L))
    t_star = int(ls.data["chosen_t"])
    return [
        go.Scatter(x=t, y=L, mode="lines+markers", name="L(Z^(t)) in ℝ^p",
                   line=dict(color=colors.cluster_color(2))),
        go.Scatter(x=[t_star], y=[L[t_star]], mode="markers", name=f"selected t* = {t_star}",
                   marker=dict(size=14, symbol="star", color="black")),
    ]


def swap_probability_figure(result: Result) -> go.Figure:
    """Per step: probability of the drawn swap and of the likeliest swap (non-private diagnostic)."""
    dbg = _first(result, "local_search_debug")
    fig = go.Figure(layout=dict(template=colors.TEMPLATE, title="Swap probabilities per step "
                                "(non-private diagnostic)", xaxis_title="step t",
                                yaxis=dict(title="probability", type="log")))
    if dbg is not None:
        t = np.arange(1, len(dbg.data["p_chosen"]) + 1)
        fig.add_trace(go.Scatter(x=t, y=dbg.data["p_chosen"], mode="lines+markers", name="drawn swap"))
        fig.add_trace(go.Scatter(x=t, y=dbg.data["p_max"], mode="lines", name="likeliest swap"))
        k, m = np.shape(dbg.data["last_probs"])
        fig.add_trace(go.Scatter(x=t, y=np.full(len(t), 1.0 / max(k * m, 1)), mode="lines",
                                 name="uniform (ε → 0)", line=dict(dash="dot", color="gray")))
    return fig


def recovery_traces(result: Result, X: np.ndarray,
                    reference_centers: np.ndarray | None = None) -> list[go.Scattergl]:
    """Data (PCA sample), recovered centers, refined centers and the non-private reference."""
    X = np.asarray(X, dtype=float)
    proj = project_2d(X)
    idx = downsample_index(X.shape[0], 3000)
    P = proj.transform(X[idx])
    out = [go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name="data (sample)",
                        marker=dict(size=3, color="lightgray"))]
    if reference_centers is not None:
        R = proj.transform(np.asarray(reference_centers, dtype=float))
        out.append(centers_trace(R, name="non-private k-means++ (diagnostic)", color=colors.NONPRIVATE,
                                 symbol="circle-open", line_color=colors.NONPRIVATE))
    rec = _first(result, "recovery")
    if rec is not None:
        out.append(centers_trace(proj.transform(np.asarray(rec.data["centers"])), name="recovered (Alg. 4)",
                                 color=colors.cluster_color(3), symbol="diamond", size=11))
    if result.centers is not None:
        out.append(centers_trace(proj.transform(np.asarray(result.centers)), name="released (after Lloyd)",
                                 color=colors.cluster_color(0), symbol="x"))
    return out


def balcan_storyboard(result: Result, X: np.ndarray, *,
                      reference_centers: np.ndarray | None = None) -> go.Figure:
    """The six-panel storyboard (``PANELS``) of one run."""
    # Titles wrapped to two or three short lines in a smaller font, and room between the rows for
    # them: at 1280 px each panel is ~240 px wide, and the one-line titles ran into each other
    # and into the figure's title (issue 27).
    fig = make_subplots(rows=2, cols=3, subplot_titles=[wrap(t, 30) for t in PANELS],
                        horizontal_spacing=0.07, vertical_spacing=0.22)
    fig.update_annotations(font=dict(size=12))
    for tr in projection_traces(result):
        fig.add_trace(tr, row=1, col=1)
    for tr in activation_traces(result):
        fig.add_trace(tr, row=1, col=2)
    for tr in partition_traces(result):
        fig.add_trace(tr, row=1, col=3)
    for tr in candidate_traces(result):
        fig.add_trace(tr, row=2, col=1)
    for tr in local_search_traces(result):
        fig.add_trace(tr, row=2, col=2)
    for tr in recovery_traces(result, X, reference_centers):
        fig.add_trace(tr, row=2, col=3)
    cfg = _first(result, "config")
    sub = ""
    if cfg is not None:
        c = cfg.data
        sub = (f"profile {c['profile']} · p={c['p']} · shifts={c['shifts']} · γ={c['gamma']:.3g} · "
               f"T₃={c['T3']} · Lloyd={c['n_lloyd']}" + (f" · {c['notes'][0]}" if c["notes"] else ""))
    fig.update_layout(template=colors.TEMPLATE, height=760, barmode="group",
                      margin=dict(t=150),
                      title=dict(text=f"{result_label(result)}<br><sup>{wrap(sub, 110)}</sup>"))
    fig.update_xaxes(title_text="m (points in a cube)", row=1, col=2)
    fig.update_xaxes(title_text="depth", row=1, col=3)
    fig.update_xaxes(title_text="step t", row=2, col=2)
    return fig


register_storyboard("balcan", balcan_storyboard)
