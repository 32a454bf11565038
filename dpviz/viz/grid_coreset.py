"""Storyboard of ``grid_coreset``: the data, the private coreset cells (sized by noisy weight) and
the released centers, in the display projection (for d > 3 the cells lie in the private PCA
subspace, mapped back to data space).

Reads the Result's released steps only (``coreset``, ``centers``) plus the data for context;
the internal ``groups`` step is not drawn.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import centers_trace, downsample_index, points_traces, project_2d
from dpviz.viz.storyboards import register_storyboard, result_label


def grid_coreset_storyboard(result: Result, X: np.ndarray, *, reference_centers: np.ndarray | None = None,
                            max_points: int = 5_000, **_: object) -> go.Figure:
    """One panel: data, coreset cells (area ∝ noisy weight), released centers, reference."""
    X = np.asarray(X, dtype=float)
    proj = project_2d(X)
    idx = downsample_index(X.shape[0], max_points)
    traces = points_traces(proj.transform(X[idx]), name="data", opacity=0.25)
    core = result.find("coreset")
    n_cells = 0
    if core is not None and len(core.data["weights"]):
        P = np.asarray(core.data["points"], dtype=float)
        w = np.maximum(np.asarray(core.data["weights"], dtype=float), 0.0)
        n_cells = len(w)
        size = 4.0 + 22.0 * np.sqrt(w / max(float(w.max()), 1e-12))
        P2 = proj.transform(P)
        traces.append(dict(type="scatter", x=P2[:, 0], y=P2[:, 1], mode="markers",
                           name="coreset cells (noisy weights)",
                           marker=dict(size=size, color=colors.NONPRIVATE, opacity=0.45,
                                       line=dict(width=0)),
                           hovertext=[f"noisy weight {v:.1f}" for v in w], hoverinfo="text"))
    if reference_centers is not None:
        traces.append(centers_trace(proj.transform(np.asarray(reference_centers, dtype=float)),
                                    name="non-private k-means++ (diagnostic)", color=colors.NONPRIVATE,
                                    symbol="circle-open", size=13, line_color=colors.NONPRIVATE))
    if result.centers is not None:
        C = np.asarray(result.centers, dtype=float)
        order = colors.align_colors(reference_centers, C)
        traces.append(centers_trace(proj.transform(C), name="released centers",
                                    color=[colors.cluster_color(int(i)) for i in order], symbol="x"))
    sub = result.find("subspace")
    how = (f"private PCA to {sub.data['basis'].shape[1]}-D, " if sub is not None else "") + \
        f"{n_cells} coreset cells, noisy group means"
    note = proj.note()
    return go.Figure(data=traces, layout=dict(
        title=dict(text=f"{result_label(result)}<br><sup>{how}{' · ' + note if note else ''}</sup>"),
        xaxis=dict(title=dict(text=proj.axis_titles[0])),
        yaxis=dict(title=dict(text=proj.axis_titles[1]), scaleanchor="x", scaleratio=1),
        template=colors.TEMPLATE, legend=dict(itemsizing="constant")))


register_storyboard("grid_coreset", grid_coreset_storyboard)
