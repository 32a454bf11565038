"""Storyboards by algorithm: each family's figure builder, and a generic one for any Result.

A family's viz module registers its builder with :func:`register_storyboard` (the algorithm's
registry name → ``builder(result, X, *, reference_centers=None) -> go.Figure``); modules of
``dpviz.viz`` are imported on first use, so a new family adds one file and nothing else. An
algorithm without a builder gets :func:`generic_storyboard`: the data, the released centers,
the non-private reference, and a title saying which method produced them and what it guarantees.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.data import centers_trace, downsample_index, points_traces, project_2d

Builder = Callable[..., go.Figure]

_BUILDERS: dict[str, Builder] = {}
_DISCOVERED = False


def register_storyboard(name: str, builder: Builder) -> Builder:
    """Register ``builder`` as the storyboard of the algorithm called ``name``."""
    _BUILDERS[name] = builder
    return builder


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    pkg = importlib.import_module("dpviz.viz")
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"dpviz.viz.{info.name}")


def storyboard_builder(name: str | None) -> Builder:
    """The registered builder of an algorithm, or :func:`generic_storyboard`."""
    _discover()
    return _BUILDERS.get(name or "", generic_storyboard)


def result_label(result: Result) -> str:
    """Which method produced a result and what it guarantees, in one line for a title."""
    name = result.algorithm or str(result.params.get("algorithm", "algorithm"))
    if result.guarantee is None:
        what = "non-private reference: no privacy guarantee"
    else:
        what = (f"row-level (ε={result.guarantee.eps:.3g}, δ={result.guarantee.delta:.2g})-DP · "
                "simulation, not a release")
    return f"{name} — {what}"


def generic_storyboard(
    result: Result,
    X: np.ndarray,
    *,
    reference_centers: np.ndarray | None = None,
    max_points: int = 5_000,
    title: str | None = None,
) -> go.Figure:
    """The data, the algorithm's released centers and the non-private reference, one panel.

    Works for any registered algorithm's Result (it reads only ``centers``, ``failure``,
    ``algorithm`` and ``guarantee``); a ⊥ is said in the title, never drawn as centers.
    """
    X = np.asarray(X, dtype=float)
    proj = project_2d(X)
    idx = downsample_index(X.shape[0], max_points)
    traces = points_traces(proj.transform(X[idx]), name="data", opacity=0.35)
    if reference_centers is not None:
        traces.append(centers_trace(proj.transform(np.asarray(reference_centers, dtype=float)),
                                    name="non-private k-means++ (diagnostic)", color=colors.NONPRIVATE,
                                    symbol="circle-open", size=13, line_color=colors.NONPRIVATE))
    if result.centers is not None:
        C = np.asarray(result.centers, dtype=float)
        order = colors.align_colors(reference_centers, C)
        traces.append(centers_trace(proj.transform(C), name="released centers",
                                    color=[colors.cluster_color(int(i)) for i in order], symbol="x"))
    status = (f"output ⊥: {result.failure}" if result.centers is None
              else f"{len(result.centers)} centers")
    head = title or result_label(result)
    fig = go.Figure(data=traces, layout=dict(
        title=dict(text=f"{head}<br><sup>{status}{' · ' + proj.note() if proj.note() else ''}</sup>"),
        xaxis=dict(title=dict(text=proj.axis_titles[0])),
        yaxis=dict(title=dict(text=proj.axis_titles[1]), scaleanchor="x", scaleratio=1),
        template=colors.TEMPLATE, legend=dict(itemsizing="constant")))
    return fig


def _friendlycore_storyboard(result: Result, X: np.ndarray, *,
                             reference_centers: np.ndarray | None = None) -> go.Figure:
    from dpviz.viz.storyboard import storyboard_figure

    return storyboard_figure(result, X, reference_centers=reference_centers)


register_storyboard("friendlycore", _friendlycore_storyboard)
