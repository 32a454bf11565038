"""Figures of the Mixtures page: density, gap buckets, the 2-D demo, the theory panel.

Each builder reads what the learner recorded (``Result.trace``) and labels every curve: private
release, simulation (the known truth) or non-private diagnostic.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.mixtures import theory as th
from dpviz.mixtures.mixture import GaussianMixture1D
from dpviz.result import Result
from dpviz.viz.colors import PALETTE

PRIVATE, TRUTH, EM, DIAG = PALETTE[0], "#444444", PALETTE[1], "#AAAAAA"


def _density_grid(x: np.ndarray, mixtures: list[GaussianMixture1D]) -> np.ndarray:
    lo, hi = np.quantile(x, [0.0005, 0.9995]) if x.size else (-1.0, 1.0)
    pad = 0.03 * (hi - lo) or 1.0
    lo, hi = lo - pad, hi + pad
    pts = [np.linspace(lo, hi, 1500)]
    for m in mixtures:
        pts.append((m.means[:, None] + m.sds[:, None] * np.linspace(-5, 5, 201)).ravel())
    g = np.unique(np.concatenate(pts))
    return g[(g >= lo) & (g <= hi)]


def density_figure(x: np.ndarray, result: Result, *, truth: GaussianMixture1D | None = None,
                   em: GaussianMixture1D | None = None, bins: int = 200, height: int = 420) -> go.Figure:
    """Histogram of the data (density, log y) with the learned, true and EM densities.

    The crude groups (private, post-processing) are marked as vertical dotted lines.
    """
    mix = result.params.get("mixture")
    mixtures = [m for m in (mix, truth, em) if m is not None]
    grid = _density_grid(x, mixtures)
    fig = go.Figure()
    hist, edges = np.histogram(x, bins=bins, range=(grid[0], grid[-1]), density=True)
    fig.add_bar(x=(edges[:-1] + edges[1:]) / 2, y=np.where(hist > 0, hist, np.nan), width=np.diff(edges),
                marker_color=DIAG, opacity=0.6, name="data histogram (NOT private)")
    if truth is not None:
        fig.add_scatter(x=grid, y=truth.pdf(grid), mode="lines", line=dict(color=TRUTH, dash="dash"),
                        name="truth (simulation)")
    if em is not None:
        fig.add_scatter(x=grid, y=em.pdf(grid), mode="lines", line=dict(color=EM, dash="dot"),
                        name="EM fit (NOT private)")
    if mix is not None:
        fig.add_scatter(x=grid, y=mix.pdf(grid), mode="lines", line=dict(color=PRIVATE, width=2.5),
                        name="learned mixture (private release)")
    try:
        groups = result.step("groups").data
        for m in groups["means"]:
            fig.add_vline(x=m, line=dict(color=PRIVATE, dash="dot", width=1))
    except KeyError:
        pass
    top = max([float(np.nanmax(hist))] + [float(m.pdf(grid).max()) for m in mixtures])
    fig.update_yaxes(range=[np.log10(top) - 7.0, np.log10(top) + 0.3])  # 7 decades below the peak
    fig.update_layout(height=height, yaxis_type="log", bargap=0, margin=dict(l=10, r=10, t=40, b=10),
                      title="Density (log scale); dotted lines: crude candidates (private)",
                      legend=dict(orientation="h", y=-0.18), xaxis_title="x", yaxis_title="density")
    return fig


def gap_buckets_figure(result: Result, *, top: int = 40, height: int = 380) -> go.Figure:
    """Noisy bucket counts against the threshold T (left) and the passed buckets (right)."""
    fig = make_subplots(cols=2, column_widths=[0.58, 0.42], subplot_titles=(
        f"Noisy counts vs T (top {top})", "Released buckets"))
    try:
        hist = result.step("gap_histogram").data
        cand = result.step("crude_candidates").data
    except KeyError:
        return fig
    T, A = cand["threshold"], cand["bound"]
    order = np.argsort(-hist["noisy"])[:top]
    passed = hist["noisy"][order] >= T
    labels = [f"b={b}, a={a}" for b, a in zip(hist["scale"][order], hist["loc"][order], strict=True)]
    fig.add_bar(x=labels, y=hist["noisy"][order], marker_color=np.where(passed, PRIVATE, DIAG),
                name="noisy count (blue: ≥ T, released; grey: NOT private)", row=1, col=1)
    fig.add_hline(y=T, line=dict(color="#D55E00"), annotation_text=f"T = {T:.0f}", row=1, col=1)
    fig.add_hline(y=A, line=dict(color="#D55E00", dash="dot"), annotation_text=f"A = {A:.0f} (noise bound)",
                  row=1, col=1)
    centers = cand["loc"] * cand["width"] + cand["width"] / 2
    fig.add_scatter(x=centers, y=cand["scale"], mode="markers", row=1, col=2,
                    marker=dict(size=6 + 14 * np.sqrt(cand["noisy"] / max(cand["noisy"].max(initial=1), 1)),
                                color=PRIVATE),
                    error_x=dict(type="data", array=cand["width"] / 2, visible=True, thickness=1),
                    name="released bucket (cell ± width/2)")
    fig.update_xaxes(showticklabels=False, row=1, col=1)
    fig.update_xaxes(title_text="location cell (a·2^b·n)", row=1, col=2)
    fig.update_yaxes(title_text="noisy count", row=1, col=1)
    fig.update_yaxes(title_text="scale b (2^b ≤ gap)", row=1, col=2)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), showlegend=True,
                      legend=dict(orientation="h", y=-0.15))
    return fig


def _ellipse(mean: np.ndarray, cov: np.ndarray, r: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    t = np.linspace(0, 2 * np.pi, 80)
    pts = mean[:, None] + np.linalg.cholesky(cov) @ (r * np.stack([np.cos(t), np.sin(t)]))
    return pts[0], pts[1]


def demo2d_figure(X: np.ndarray, result: Result, *, truth=None, bound: float, max_points: int = 3000,
                  height: int = 480) -> go.Figure:
    """Data, the declared box, the private picks (2σ ellipses) and the truth (simulation)."""
    idx = np.random.default_rng(0).permutation(X.shape[0])[:max_points]
    fig = go.Figure()
    fig.add_scatter(x=X[idx, 0], y=X[idx, 1], mode="markers", marker=dict(size=3, color=DIAG),
                    name="data (NOT private)")
    fig.add_shape(type="rect", x0=-bound, y0=-bound, x1=bound, y1=bound, line=dict(dash="dash", color="#999"))
    if truth is not None:
        for i in range(truth.k):
            ex, ey = _ellipse(truth.means[i], truth.covs[i])
            fig.add_scatter(x=ex, y=ey, mode="lines", line=dict(color=TRUTH, dash="dash"),
                            name="truth (simulation)", showlegend=i == 0)
    if result.centers is not None:
        for i, (m, c) in enumerate(zip(result.centers, result.params["covs"], strict=True)):
            ex, ey = _ellipse(m, c)
            fig.add_scatter(x=ex, y=ey, mode="lines", line=dict(color=PRIVATE, width=2.5),
                            name="picks (private release)", showlegend=i == 0)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), yaxis_scaleanchor="x",
                      title="Inverse-sensitivity demo over a grid (inspired by, not the paper's algorithm)",
                      legend=dict(orientation="h", y=-0.12))
    return fig


def theory_figure(*, k: int, alpha: float, eps: float, delta: float, logs: bool = True,
                  height: int = 1350) -> go.Figure:
    """Four stacked panels: n vs d, n vs k at d = 1, the largest Thm 1.4 term over (d, k), and the
    upper/lower gap (one column: the page shows it beside the learner)."""
    P_D, P_K, P_MAP, P_GAP = 1, 2, 3, 4  # rows
    fig = make_subplots(rows=4, cols=1, vertical_spacing=0.075, subplot_titles=(
        f"n vs d (k = {k})", "n vs k at d = 1", "Largest term of Thm 1.4 over (d, k)",
        f"Upper / lower bound (k = {k})"))
    d = np.unique(np.round(np.geomspace(1, 1e5, 120)))
    series = {
        "this paper (Thm 1.4; 1.5 at d = 1)": th.new_bound(d, k, alpha, eps, delta, logs),
        "[AAL24b]": th.aal24b(d, k, alpha, eps, delta, logs),
        "lower bound (Thm 1.6)": th.lower_bound(d, k, alpha, eps, delta, logs),
        "non-private": th.nonprivate(d, k, alpha),
    }
    colors = (PRIVATE, EM, TRUTH, DIAG)
    for (name, y), c in zip(series.items(), colors, strict=True):
        fig.add_scatter(x=d, y=y, mode="lines", name=name, line=dict(color=c), row=P_D, col=1)
    ds = float(th.d_star(k, delta)) if logs else float(k**2)
    fig.add_vline(x=ds, line=dict(dash="dash", color="#D55E00"), row=P_D, col=1,
                  annotation_text=f"d* = k²ln²(1/δ) ≈ {ds:.3g}" if logs else f"d* = k² = {ds:.3g}")
    ks = np.arange(1, 101)
    for name, y, c in (("Thm 1.5 (linear in k)", th.new_univariate(ks, alpha, eps, delta, logs), PRIVATE),
                       ("[AAL21] (quadratic in k)", th.aal21(1, ks, alpha, eps, delta, logs), EM),
                       ("lower bound, d = 1", th.lower_bound(1, ks, alpha, eps, delta, logs), TRUTH)):
        fig.add_scatter(x=ks, y=y, mode="lines", name=name, line=dict(color=c, dash="dot"), row=P_K, col=1)
    dg = np.geomspace(1, 1e5, 80)
    kg = np.unique(np.round(np.geomspace(1, 200, 60)))
    D, K = np.meshgrid(dg, kg)
    dom = th.dominant_term(D, K, alpha, eps, delta, logs)
    fig.add_heatmap(x=dg, y=kg, z=dom, zmin=-0.5, zmax=4.5, showscale=True, row=P_MAP, col=1,
                    colorscale=[[(i + j) / 5, PALETTE[i]] for i in range(5) for j in (0, 1)],
                    colorbar=dict(tickvals=list(range(5)), ticktext=list(th.GENERAL_TERMS), len=0.2,
                                  y=0.36, x=1.0, thickness=12),
                    hovertemplate="d=%{x:.3g}, k=%{y}<br>term %{z}<extra></extra>", name="dominant term")
    dsk = th.d_star(kg, delta) if logs else kg**2.0
    inside = dsk <= dg[-1]
    fig.add_scatter(x=dsk[inside], y=kg[inside], mode="lines", row=P_MAP, col=1,
                    line=dict(color="white", dash="dash"), name="d = d*(k)", showlegend=False)
    fig.add_scatter(x=d, y=th.gap_ratio(d, k, alpha, eps, delta, logs), mode="lines", row=P_GAP, col=1,
                    line=dict(color=PRIVATE), name="upper / lower", showlegend=False)
    fig.add_vline(x=ds, line=dict(dash="dash", color="#D55E00"), row=P_GAP, col=1)
    for r in (P_D, P_K, P_MAP, P_GAP):
        fig.update_xaxes(type="log", row=r, col=1)
        fig.update_yaxes(type="log", row=r, col=1)
    fig.update_xaxes(title_text="d", row=P_D, col=1)
    fig.update_xaxes(title_text="k", row=P_K, col=1)
    fig.update_xaxes(title_text="d", row=P_MAP, col=1)
    fig.update_yaxes(title_text="k", row=P_MAP, col=1)
    fig.update_xaxes(title_text="d", row=P_GAP, col=1)
    fig.update_yaxes(title_text="samples n", row=P_D, col=1)
    fig.update_yaxes(title_text="samples n", row=P_K, col=1)
    caveat = th.CAVEAT + ("" if logs else "; ln(1/δ) set to 1")
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(orientation="h", y=-0.04, font=dict(size=10)),
                      title=dict(text=f"Sample complexity at α = {alpha:g}, ε = {eps:g}, δ = {delta:g}<br>"
                                 f"<sup>{caveat}</sup>", font=dict(size=14)))
    return fig
