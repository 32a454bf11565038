"""Figure builders for Acs et al. (TKDE): kernel k-means, DPNorm, synthetic samples, ε vs epochs.

Builders read what the algorithms recorded (``Result.trace``, ``DPNormResult``, accountant values)
and label private releases vs non-private diagnostics. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.clustering.kernel_kmeans import RandomFourierFeatures, clip_features
from dpviz.generative.accountant import (
    AcsSetting,
    PaperAccount,
    one_model_epsilon,
    paper_epsilon,
    pld_epsilon,
    rdp_epsilon,
)
from dpviz.generative.dpgm import DPGMResult
from dpviz.generative.dpnorm import DPNormResult
from dpviz.result import Result
from dpviz.viz.colors import cluster_color
from dpviz.viz.storyboards import ExplorationContext, register_exploration, register_storyboard


def _pca_basis(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and top-2 principal axes of PUBLIC points P (so the projection costs no privacy)."""
    mu = P.mean(axis=0)
    _, _, Vt = np.linalg.svd(P - mu, full_matrices=False)
    V = Vt[:2].T
    if V.shape[1] < 2:
        V = np.hstack([V, np.zeros((V.shape[0], 2 - V.shape[1]))])
    return mu, V


def kernel_kmeans_figure(result: Result, X: np.ndarray, *, public: np.ndarray | None = None,
                         max_points: int = 2000) -> go.Figure:
    """Feature space (left) vs input space (right) of a :func:`dp_kernel_kmeans` run.

    Both panels project with PCA fitted on public records (``public``, default the run's k public
    initial records). Points are coloured by their final cluster — a NON-PRIVATE diagnostic (it
    places private rows); the noisy centre trajectories (feature space) and the private input-space
    centres are DP releases.
    """
    feat = result.step("features").data
    init = result.step("init").data
    P = init["public_records"] if public is None else np.asarray(public, dtype=np.float64)
    rff = RandomFourierFeatures(feat["W"], feat["b"], feat["gamma"])
    Zp = clip_features(rff.transform(P), feat["C_s"])
    labels = result.step("partition").data["labels"]
    idx = np.arange(X.shape[0]) if X.shape[0] <= max_points else np.linspace(
        0, X.shape[0] - 1, max_points).astype(int)
    Z = clip_features(rff.transform(X[idx]), feat["C_s"])
    muz, Vz = _pca_basis(Zp)
    mux, Vx = _pca_basis(P)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "Feature space z(x) (RFF, PCA on public records)", "Input space (PCA on public records)"))
    k = init["centers"].shape[0]
    traj = np.stack([init["centers"]] + [s.data["centers"] for s in result.steps("iteration")])
    for j in range(k):
        color = cluster_color(j)
        m = labels[idx] == j
        zp = (Z[m] - muz) @ Vz
        xp = (X[idx][m] - mux) @ Vx
        name = f"cluster {j}"
        fig.add_trace(go.Scattergl(x=zp[:, 0], y=zp[:, 1], mode="markers", marker=dict(size=4, color=color,
                      opacity=0.45), name=name, legendgroup=name,
                      hovertemplate="private row (diagnostic)<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Scattergl(x=xp[:, 0], y=xp[:, 1], mode="markers", marker=dict(size=4, color=color,
                      opacity=0.45), name=name, legendgroup=name, showlegend=False,
                      hovertemplate="private row (diagnostic)<extra></extra>"), row=1, col=2)
        tj = (traj[:, j] - muz) @ Vz
        fig.add_trace(go.Scatter(x=tj[:, 0], y=tj[:, 1], mode="lines+markers",
                                 line=dict(color=color, width=2), marker=dict(size=[6] * (len(tj) - 1) + [13],
                                 symbol="x", color=color), name=f"noisy centre {j} (DP)", legendgroup=name,
                                 showlegend=False, hovertemplate="noisy centre, iteration %{pointNumber}"
                                 "<extra>DP release</extra>"), row=1, col=1)
    if result.centers is not None:
        cx = (result.centers - mux) @ Vx
        fig.add_trace(go.Scatter(x=cx[:, 0], y=cx[:, 1], mode="markers", name="input-space centres (DP)",
                                 marker=dict(size=14, symbol="x", color="black")), row=1, col=2)
    fig.update_layout(title="DP kernel k-means: clusters found in feature space, shown in both spaces",
                      height=460, margin=dict(t=70, l=30, r=10, b=30))
    return fig


def dpnorm_figure(res: DPNormResult) -> go.Figure:
    """True norm histogram (NON-PRIVATE diagnostic), noisy histogram and chosen bound C_s (DP)."""
    mids = 0.5 * (res.edges[1:] + res.edges[:-1])
    width = float(res.edges[1] - res.edges[0])
    fig = go.Figure()
    fig.add_bar(x=mids, y=res.counts, width=width, name="true counts t_j (diagnostic)",
                marker_color="#BBBBBB")
    fig.add_scatter(x=mids, y=res.noisy_counts, mode="markers", name="noisy counts (DP)",
                    marker=dict(color="#D55E00", size=5))
    fig.add_vline(x=res.C_s, line=dict(color="#0072B2", width=2, dash="dash"),
                  annotation_text=f"C_s = {res.C_s:g}")
    fig.update_layout(title=f"DPNorm: noisy mode of the norm histogram (noise std {res.noise_scale:.3g})",
                      xaxis_title="norm", yaxis_title="count", bargap=0, height=360)
    return fig


def sample_grid_figure(rows: Sequence[np.ndarray], *, shape: tuple[int, int] = (8, 8),
                       row_labels: Sequence[str] | None = None, title: str = "") -> go.Figure:
    """One row of images per component (each row: (n, h·w) values in [0, 1]); DP output if sampled."""
    h, w = shape
    n_cols = max(r.shape[0] for r in rows)
    canvas = np.full((len(rows) * (h + 1) + 1, n_cols * (w + 1) + 1), np.nan)
    for i, r in enumerate(rows):
        for j, img in enumerate(r):
            y, x = 1 + i * (h + 1), 1 + j * (w + 1)
            canvas[y:y + h, x:x + w] = np.asarray(img, dtype=np.float64).reshape(h, w)
    fig = go.Figure(go.Heatmap(z=canvas, colorscale="Greys", zmin=0, zmax=1, showscale=False,
                               hoverinfo="skip"))
    ticks = [1 + i * (h + 1) + h / 2 for i in range(len(rows))]
    labels = list(row_labels) if row_labels is not None else [f"{i}" for i in range(len(rows))]
    fig.update_yaxes(autorange="reversed", tickvals=ticks, ticktext=labels, scaleanchor="x", showgrid=False)
    fig.update_xaxes(showticklabels=False, showgrid=False)
    fig.update_layout(title=title, height=40 + 34 * len(rows) * (h + 1) // 9, margin=dict(t=50, l=60, r=10,
                      b=10), plot_bgcolor="white")
    return fig


def synthetic_scatter_figure(real: np.ndarray, synthetic: np.ndarray, components: np.ndarray, *,
                             title: str = "", max_points: int = 3000) -> go.Figure:
    """Synthetic rows coloured by mixture component (DP output) over the real rows (grey, NON-PRIVATE).

    Two columns are drawn as they are; more are projected on the top-2 principal axes of the
    SYNTHETIC rows (a DP output, so the projection reads no private row). Axis titles are generic
    (column names come from a user's file and are not put into figures).
    """
    real = np.asarray(real, dtype=np.float64)
    synthetic = np.asarray(synthetic, dtype=np.float64)
    d = synthetic.shape[1]
    if d <= 2:  # the columns as they are (one column: on a line)
        mu, V = np.zeros(d), np.eye(d, 2)
        axes = ("column 1", "column 2" if d == 2 else "")
    else:
        mu, V = _pca_basis(synthetic)
        axes = ("PC 1 of the synthetic rows", "PC 2 of the synthetic rows")

    def proj(A: np.ndarray) -> np.ndarray:
        return (A - mu) @ V

    step_r = max(1, real.shape[0] // max_points)
    step_s = max(1, synthetic.shape[0] // max_points)
    fig = go.Figure()
    r = proj(real[::step_r])
    fig.add_scattergl(x=r[:, 0], y=r[:, 1], mode="markers", name="real rows (non-private view)",
                      marker=dict(size=4, color="#BBBBBB", opacity=0.5), hoverinfo="skip")
    S, comp = synthetic[::step_s], np.asarray(components)[::step_s]
    for j in np.unique(comp):
        m = comp == j
        sp = proj(S[m])
        fig.add_scattergl(x=sp[:, 0], y=sp[:, 1], mode="markers", name=f"synthetic, cluster {int(j)} (DP)",
                          marker=dict(size=5, color=cluster_color(int(j)), opacity=0.7))
    fig.update_layout(title=dict(text=title), xaxis=dict(title=dict(text=axes[0])),
                      yaxis=dict(title=dict(text=axes[1])), height=480, legend=dict(itemsizing="constant"))
    return fig


def epsilon_vs_epochs_figure(setting: AcsSetting, epochs: Sequence[float], *, k: int = 10,
                             pld: bool = True) -> go.Figure:
    """ε vs SGD epochs (Fig. 2 style): the paper's accountant, RDP, PLD and the one-model bound.

    All curves are functions of public inputs only. The parallel schedule's guarantee is the lower
    of RDP and PLD; the paper's one-model-per-step schedule is bounded by the one-model curve.
    """
    es = [float(e) for e in epochs]
    curves: dict[str, list[float]] = {"paper's accountant (Thm 4)": [], "RDP (dp-accounting)": [],
                                      f"one model per step, k={k}": []}
    if pld:
        curves["PLD (dp-accounting)"] = []
    for e in es:
        s = AcsSetting(**{**setting.__dict__, "epochs": e})
        curves["paper's accountant (Thm 4)"].append(paper_epsilon(s).eps)
        curves["RDP (dp-accounting)"].append(rdp_epsilon(s))
        curves[f"one model per step, k={k}"].append(one_model_epsilon(s, 1.0 / k))
        if pld:
            curves["PLD (dp-accounting)"].append(pld_epsilon(s))
    dash = {"paper's accountant (Thm 4)": "dot", f"one model per step, k={k}": "dash"}
    fig = go.Figure()
    for name, ys in curves.items():
        fig.add_scatter(x=es, y=ys, mode="lines+markers", name=name, line=dict(dash=dash.get(name, "solid")))
    fig.update_layout(title=f"ε vs epochs (q={setting.q:g}, σ_G={setting.sigma_G:g}, "
                            f"σ_K={setting.sigma_K:g}, σ_C={setting.sigma_C:g}, T_K={setting.T_K}, "
                            f"δ={setting.delta:g})",
                      xaxis_title="SGD epochs", yaxis_title="ε", height=400)
    return fig


def paper_budget_figure(acc: PaperAccount) -> go.Figure:
    """The paper's ε split at λ*: α_K/λ (k-means), α_S/λ (DP-SGD) and −ln δ/λ (public inputs only)."""
    parts = {"k-means α_K/λ": acc.alpha_K / acc.lam, "DP-SGD α_S/λ": acc.alpha_S / acc.lam,
             "−ln δ / λ": -np.log(acc.delta) / acc.lam}
    fig = go.Figure()
    for (name, v), color in zip(parts.items(), ("#0072B2", "#E69F00", "#999999"), strict=True):
        fig.add_bar(y=["ε"], x=[v], orientation="h", name=f"{name} = {v:.3f}", marker_color=color)
    fig.update_layout(barmode="stack", height=170, title=f"Paper's accountant: ε = {acc.eps:.3f} at λ* = "
                      f"{acc.lam}, Hölder weight j1* = {acc.j1:.3f}", margin=dict(t=50, l=30, r=10, b=20))
    return fig


def training_figure(result: DPGMResult) -> go.Figure:
    """Clipping bound C_s per DP-SGD step (DP release) and the batch's mean gradient norm and clipped
    fraction (NON-PRIVATE diagnostics)."""
    steps = np.arange(1, result.steps_run + 1)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_scatter(x=steps, y=result.clip_bounds, mode="lines", name="C_s from DPNorm (DP)",
                    line=dict(color="#0072B2"))
    fig.add_scatter(x=steps, y=[r.mean_norm for r in result.step_reports], mode="lines",
                    name="mean per-example norm (diagnostic)", line=dict(color="#999999", dash="dot"))
    fig.add_scatter(x=steps, y=[r.clipped_fraction for r in result.step_reports], mode="lines",
                    name="fraction clipped (diagnostic)", line=dict(color="#D55E00"), secondary_y=True)
    fig.update_layout(title=f"DP-SGD: {result.steps_run} steps, ε = {result.account.eps:.3g} "
                            f"({result.account.guarantee})", xaxis_title="step", height=360)
    fig.update_yaxes(title_text="norm", secondary_y=False)
    fig.update_yaxes(title_text="fraction clipped", range=[0, 1], secondary_y=True)
    return fig


def _kernel_kmeans_storyboard(result: Result, X: np.ndarray, *, reference_centers: np.ndarray | None = None,
                              **_: object) -> go.Figure:
    """Storyboard of a registered kernel k-means run: both spaces (reference centres not drawn)."""
    return kernel_kmeans_figure(result, X)


register_storyboard("kernel_kmeans", _kernel_kmeans_storyboard)


# ----------------------------------------------------------------------------- the RFF-dimension view

#: ε grid of the RFF-dimension view (the current ε is added) and the d values compared (with the current).
RFF_EPS_GRID: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
RFF_DIMENSIONS: tuple[int, ...] = (10, 50, 200)
RFF_SEEDS = 5


def _score(X: np.ndarray, labels_true: np.ndarray | None, labels: np.ndarray, centers: np.ndarray | None,
           ref_cost: float | None) -> float:
    """Clustering accuracy (Hungarian matching) with labels, else the normalized k-means loss."""
    from dpviz.metrics import labeling_failure, normalized_loss

    if labels_true is not None:
        return 1.0 - labeling_failure(labels_true, labels)
    if centers is None:
        return float("nan")
    return normalized_loss(X, centers, reference_cost=ref_cost)


def rff_dimension_figure(ctx: ExplorationContext, *, eps_grid: Sequence[float] = RFF_EPS_GRID,
                         dimensions: Sequence[int] = RFF_DIMENSIONS, seeds: int = RFF_SEEDS) -> go.Figure:
    """Accuracy vs ε for several RFF dimensions d, and the input-space baseline (Acs et al., Fig. 3).

    Each point is the mean ± sd over ``seeds`` seeded simulations (``ctx.simulate``), scored on the
    private rows: clustering accuracy under the Hungarian matching when the data have labels (the
    feature-space partition), else the normalized k-means loss of the released input-space centres.
    The baseline is standard DP k-means in input space (SuLQ Lloyd, norm bound Λ) at the same ρ,
    the same T_K and the same initial records. All of it is a NON-PRIVATE diagnostic of
    simulations: it reads the private rows (and labels) to score them.
    """
    from threadpoolctl import threadpool_limits

    from dpviz.clustering.kernel_kmeans import dp_kmeans_input
    from dpviz.metrics import kmeans_cost, reference_kmeans_cost

    X, y = ctx.X, ctx.labels
    current = int(ctx.params.n_features)
    ds = sorted({int(d) for d in dimensions} | {current})
    eps = sorted({float(e) for e in eps_grid} | {float(ctx.epsilon)})
    seed_list = [ctx.seed + i for i in range(seeds)]
    ref_cost = None
    if y is None:
        ref_cost = (kmeans_cost(X, ctx.reference_centers) if ctx.reference_centers is not None
                    else reference_kmeans_cost(X, ctx.pub.k, rng=0))
    scores = {d: np.empty((len(eps), len(seed_list))) for d in ds}
    base = np.empty((len(eps), len(seed_list)))
    with threadpool_limits(1):  # small matrices: BLAS threads only contend (10× slower on 2 loaded cores)
        for i, e in enumerate(eps):  # ≤ 7 × 4 × 5 short runs
            for j, s in enumerate(seed_list):
                for d in ds:
                    r = ctx.simulate(epsilon=e, seed=s, n_features=d)
                    scores[d][i, j] = _score(X, y, r.find("partition").data["labels"], r.centers, ref_cost)
                    if d == current:  # the baseline: same ρ, T_K and initial records as this run
                        b = dp_kmeans_input(X, ctx.pub.k, rho=r.params["rho"],
                                            public_init=r.find("init").data["public_records"],
                                            radius=ctx.pub.radius, iters=int(ctx.params.iters), rng=s)
                        base[i, j] = _score(X, y, b.find("lloyd_partition").data["labels"], b.centers,
                                            ref_cost)
    metric = ("clustering accuracy (Hungarian)" if y is not None
              else "normalized k-means loss (0 = non-private)")
    fig = go.Figure()
    series = [(f"kernel k-means, d = {d}" + (" (current)" if d == current else ""), scores[d],
               cluster_color(k), d == current) for k, d in enumerate(ds)]
    series.append(("standard DP k-means (input space)", base, "#444444", False))
    for name, sc, color, bold in series:
        mu, sd = np.nanmean(sc, axis=1), np.nanstd(sc, axis=1)
        fig.add_scatter(x=eps + eps[::-1], y=list(mu + sd) + list((mu - sd)[::-1]), fill="toself",
                        fillcolor=color, opacity=0.15, line=dict(width=0), hoverinfo="skip",
                        showlegend=False, legendgroup=name)
        fig.add_scatter(x=eps, y=mu, mode="lines+markers", name=name, legendgroup=name,
                        line=dict(color=color, width=4 if bold else 2,
                                  dash="dash" if name.startswith("standard") else "solid"),
                        hovertemplate="ε = %{x:g}: %{y:.3f}<extra>" + name + "</extra>")
    lows = [np.nanmin(np.nanmean(sc, axis=1) - np.nanstd(sc, axis=1)) for _, sc, _, _ in series]
    highs = [np.nanmax(np.nanmean(sc, axis=1) + np.nanstd(sc, axis=1)) for _, sc, _, _ in series]
    # A trace, not add_vline's annotation: on a log axis that annotation lands at 10^ε.
    fig.add_scatter(x=[float(ctx.epsilon)] * 2, y=[float(np.nanmin(lows)), float(np.nanmax(highs))],
                    mode="lines", line=dict(color="#999999", dash="dot"), name=f"current ε = {ctx.epsilon:g}",
                    hoverinfo="skip")
    fig.update_layout(
        title=dict(text=f"{metric} vs ε by RFF dimension d — feature space vs input space<br><sup>mean ± sd "
                        f"over {len(seed_list)} seeded simulations each (non-private diagnostic, not a "
                        "release); small d wins at small ε</sup>"),
        xaxis=dict(title=dict(text="row-level ε"), type="log"), yaxis=dict(title=dict(text=metric)),
        height=460, legend=dict(itemsizing="constant"))
    return fig


register_exploration(
    "kernel_kmeans", "Accuracy vs ε by d", rff_dimension_figure,
    help="Acs et al. Fig. 3: the RFF dimension d trades the kernel approximation error (small d) "
         "against the noise, which spreads over more coordinates (large d). Each curve is the mean ± sd "
         "over 5 seeded simulations at each ε; the dashed curve is standard DP k-means in input space at "
         "the same budget and initial records. Scored on the private rows: a non-private diagnostic.")
