"""Hypothetical outcomes: many private draws on the same data, drawn as a cloud.

One private run is one sample from a distribution; showing N of them (Hullman et al.'s
hypothetical-outcome plots) shows what the noise does. The draws reuse the cached tuple stage
(``dpviz.experiments.run_repeats``); each draw's clusters are matched to the non-private
centers (``align_colors``) so a cluster keeps its colour across draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import Projector, centers_trace, downsample_index, points_traces, project_2d


def aligned_draws(results: Sequence[Result], reference_centers: np.ndarray) -> np.ndarray:
    """Centers of every successful draw reordered to match ``reference_centers``.

    Returns an (N_ok, k, d) array whose [:, j] are the draws matched to reference cluster j
    (NaN where a draw has fewer clusters than the reference).
    """
    ref = np.asarray(reference_centers, dtype=float)
    k, d = ref.shape
    out = []
    for r in results:
        if r.centers is None:
            continue
        C = np.asarray(r.centers, dtype=float)
        perm = colors.align_colors(ref, C)
        row = np.full((k, d), np.nan)
        ok = perm < k
        row[perm[ok]] = C[ok]
        out.append(row)
    return np.stack(out) if out else np.zeros((0, k, d))


def noise_cloud_figure(
    X: Any,
    results: Sequence[Result],
    nonprivate_centers: np.ndarray,
    *,
    projector: Projector | None = None,
    max_points: int = 5_000,
    rng_seed: int = 0,
    current: Result | None = None,
    title: str | None = None,
) -> go.Figure:
    """N private outcomes as a semi-transparent cloud around the non-private centers.

    Parameters
    ----------
    X : (n, d) array or Dataset
        The data (drawn faintly, downsampled for display).
    results : sequence of Result
        Private draws (e.g. ``run_repeats``: the same tuples, fresh noise). Failed draws (no
        centers) are counted in the subtitle.
    nonprivate_centers : (k, d) array
        The non-private reference (a diagnostic); fixes the cluster colours.
    current : Result, optional
        The draw on screen in the Explore page, outlined on top of the cloud.

    Notes
    -----
    The spread of each cluster's cloud is what an observer of one release cannot tell apart;
    its distance from the black diamond is the error the privacy noise costs.
    """
    X = np.asarray(getattr(X, "X", X), dtype=float)
    proj = projector or project_2d(X)
    idx = downsample_index(X.shape[0], max_points, rng_seed=rng_seed)
    fig = go.Figure()
    for tr in points_traces(proj.transform(X[idx]), name="data (input, never released)",
                            opacity=0.2, size=3):
        fig.add_trace(tr)
    ref = np.asarray(nonprivate_centers, dtype=float)
    draws = aligned_draws(results, ref)
    n_fail = sum(r.centers is None for r in results)
    opacity = float(np.clip(6.0 / max(len(results), 1) ** 0.5, 0.15, 0.7))
    for j in range(ref.shape[0]):
        pts = draws[:, j, :]
        pts = pts[~np.isnan(pts).any(axis=1)]
        P = proj.transform(pts) if pts.size else np.zeros((0, 2))
        fig.add_trace(go.Scattergl(
            x=P[:, 0], y=P[:, 1], mode="markers",
            name=f"cluster {j + 1}: {len(pts)} private draws — private",
            marker=dict(size=8, color=colors.cluster_color(j), opacity=opacity,
                        line=dict(width=0))))
    fig.add_trace(centers_trace(proj.transform(ref), name="non-private centers — non-private "
                                "diagnostic (ε = ∞)", color=colors.NONPRIVATE,
                                symbol="diamond", size=12))
    if current is not None and current.centers is not None:
        fig.add_trace(centers_trace(proj.transform(np.asarray(current.centers, float)),
                                    name="this run's centers — private", color=colors.FINAL,
                                    symbol="star", size=15, line_color=colors.NONPRIVATE))
    sub = f"{len(results)} draws of the noise on the same tuples"
    if n_fail:
        sub += f"; {n_fail} output ⊥ (no centers)"
    fig.update_layout(
        title=dict(text=f"{title or 'What else could this release have been?'}<br><sup>{sub}</sup>"),
        template="plotly_white", xaxis_title=proj.axis_titles[0],
        yaxis_title=proj.axis_titles[1], legend=dict(itemsizing="constant"))
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig
