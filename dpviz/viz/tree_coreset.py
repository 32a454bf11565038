"""Storyboard of the hash-tree coreset: tree growth, noisy counts, the coreset, refinement.

Each builder reads one ``Result`` of :func:`dpviz.clustering.tree_coreset.tree_coreset` (and the
data for the background and the 2-D axes) and returns a plotly figure; nothing here imports
Streamlit. Panels drawn over the rows say "non-private diagnostic" in their titles: the rows and
the PCA axes fitted on them are not private; the tree, the coreset and the centers are releases.

References: Chang, Ghazi, Kumar, Manurangsi, ICML 2021 (LSH-tree coreset); Su et al. 2016
(noisy Lloyd steps).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import centers_trace, downsample_index, project_2d
from dpviz.viz.storyboards import register_storyboard, result_label

#: Subplot titles of the storyboard, in order.
PANELS = (
    "1 · tree: candidate and active nodes per level (DP-safe)",
    "2 · noisy counts of the active nodes vs the threshold (DP-safe)",
    "3 · weighted coreset: noisy cell means (axes: PCA of the rows, non-private diagnostic)",
    "4 · coreset centers → refined centers (rows: non-private diagnostic)",
)


def tree_traces(result: Result) -> list[go.Bar]:
    """Candidates (children of active nodes) and active nodes per level."""
    step = result.find("tree")
    if step is None:
        return []
    lv = list(range(len(step.data["active_per_level"])))
    return [
        go.Bar(x=lv, y=step.data["candidates_per_level"], name="children counted",
               marker_color=colors.with_alpha(colors.cluster_color(1), 0.45)),
        go.Bar(x=lv, y=step.data["active_per_level"], name="active (noisy count ≥ threshold)",
               marker_color=colors.cluster_color(0)),
    ]


def count_traces(result: Result) -> list[go.Scatter]:
    """Every active node's noisy count at its level, and the public threshold."""
    step = result.find("tree")
    if step is None:
        return []
    xs, ys = [], []
    for lv, counts in enumerate(step.data["level_noisy_counts"], start=1):
        c = np.asarray(counts, dtype=float)
        xs.append(np.full(c.size, lv))
        ys.append(c)
    x = np.concatenate(xs) if xs else np.zeros(0)
    y = np.concatenate(ys) if ys else np.zeros(0)
    thr = float(step.data["threshold"])
    top = max(len(step.data["level_noisy_counts"]), 1)
    return [
        go.Scattergl(x=x, y=y, mode="markers", name="noisy count (active node)",
                     marker=dict(size=5, color=colors.cluster_color(2), opacity=0.6)),
        go.Scatter(x=[0.5, top + 0.5], y=[thr, thr], mode="lines", name=f"threshold {thr:.3g}",
                   line=dict(color="gray", dash="dash")),
    ]


def coreset_traces(result: Result, proj) -> list[go.Scattergl]:
    """The coreset's noisy cell means, sized by their noisy weights."""
    step = result.find("coreset")
    if step is None or len(step.data["points"]) == 0:
        return []
    P = proj.transform(np.asarray(step.data["points"], dtype=float))
    w = np.asarray(step.data["weights"], dtype=float)
    size = 4 + 16 * np.sqrt(w / max(w.max(), 1e-12))
    return [go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name=f"coreset ({len(w)} cells)",
                         marker=dict(size=size, color=colors.with_alpha(colors.cluster_color(4), 0.6)),
                         text=[f"weight {x:.0f}" for x in w])]


def center_traces(result: Result, X: np.ndarray, proj,
                  reference_centers: np.ndarray | None) -> list[go.Scattergl]:
    """Rows (sample), the coreset's k-means centers, the released centers and the reference."""
    idx = downsample_index(X.shape[0], 3000)
    P = proj.transform(X[idx])
    out = [go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name="rows (sample)",
                        marker=dict(size=3, color="lightgray"))]
    if reference_centers is not None:
        out.append(centers_trace(proj.transform(np.asarray(reference_centers, dtype=float)),
                                 name="non-private k-means++ (diagnostic)", color=colors.NONPRIVATE,
                                 symbol="circle-open", line_color=colors.NONPRIVATE))
    cc = result.find("coreset_centers")
    if cc is not None:
        out.append(centers_trace(proj.transform(np.asarray(cc.data["centers"], dtype=float)),
                                 name="k-means on the coreset", color=colors.cluster_color(3),
                                 symbol="diamond", size=10))
    if result.centers is not None:
        out.append(centers_trace(proj.transform(np.asarray(result.centers, dtype=float)),
                                 name="released (after refinement)", color=colors.PRIVATE, symbol="x"))
    return out


def tree_coreset_storyboard(result: Result, X: np.ndarray, *,
                            reference_centers: np.ndarray | None = None) -> go.Figure:
    """The four-panel storyboard (``PANELS``) of one run."""
    X = np.asarray(X, dtype=float)
    proj = project_2d(X)
    fig = make_subplots(rows=2, cols=2, subplot_titles=PANELS, horizontal_spacing=0.08,
                        vertical_spacing=0.14)
    for tr in tree_traces(result):
        fig.add_trace(tr, row=1, col=1)
    for tr in count_traces(result):
        fig.add_trace(tr, row=1, col=2)
    for tr in center_traces(result, X, proj, None)[:1] + coreset_traces(result, proj):
        fig.add_trace(tr, row=2, col=1)
    for tr in center_traces(result, X, proj, reference_centers):
        fig.add_trace(tr, row=2, col=2)
    p = result.params
    sub = (f"{p.get('levels')} levels × {p.get('bits')} bits · threshold {p.get('threshold_sds')} sds · "
           f"shares tree {p.get('tree_share')}, coreset {p.get('cell_share')} · "
           f"{p.get('refine_steps')} refinement step(s)")
    fig.update_layout(template=colors.TEMPLATE, height=760, barmode="overlay",
                      title=dict(text=f"{result_label(result)}<br><sup>{sub}</sup>"))
    fig.update_xaxes(title_text="tree level", row=1, col=1)
    fig.update_xaxes(title_text="tree level", row=1, col=2)
    fig.update_yaxes(title_text="nodes", type="log", row=1, col=1)
    fig.update_yaxes(title_text="noisy count", type="log", row=1, col=2)
    return fig


register_storyboard("tree_coreset", tree_coreset_storyboard)
