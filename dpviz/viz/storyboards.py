"""Storyboards by algorithm: each family's figure builder, and a generic one for any Result.

A family's viz module registers its builder with :func:`register_storyboard` (the algorithm's
registry name → ``builder(result, X, *, reference_centers=None) -> go.Figure``); modules of
``dpviz.viz`` are imported on first use, so a new family adds one file and nothing else. An
algorithm without a builder gets :func:`generic_storyboard`: the data, the released centers,
the non-private reference, and a title saying which method produced them and what it guarantees.

A family may also add extra Explore views with :func:`register_exploration`: a builder that
receives an :class:`ExplorationContext` (the run on screen and a cached ``simulate`` for other
budgets or parameters) and returns one figure, e.g. a parameter's effect on the pass rate.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.registry import Public
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


@dataclass(frozen=True)
class ExplorationContext:
    """What an exploration builder may read: the run on screen and a way to simulate others.

    ``simulate(epsilon=None, delta=None, seed=None, draw=None, **params)`` returns one seeded
    *simulation* of the same algorithm on the same data and declarations, with any budget, seed or
    parameter changed (the app caches it per session; the non-private stage is reused when the
    changed parameters do not feed it). ``draw=i`` (i ≥ 1) keeps everything, the non-private stage
    included, and draws the private stage's noise afresh: the i-th of N re-draws. Every figure
    built from it is a simulation, never a release.
    """

    result: Result
    X: np.ndarray
    pub: Public
    params: Any
    epsilon: float
    delta: float
    seed: int
    simulate: Callable[..., Result]
    reference_centers: np.ndarray | None = None
    labels: np.ndarray | None = None
    options: Any = None  # the view's own settings (an instance of Exploration.options), if any
    memo: dict | None = None  # kept across reruns for this algorithm and data (e.g. a locked scale)


@dataclass(frozen=True)
class Exploration:
    """An extra Explore view of one algorithm (e.g. "γ vs pass rate", "accuracy vs ε by d").

    ``options``: a frozen dataclass of the view's own settings, its fields hinted like an
    algorithm's parameters (:func:`dpviz.registry.hint`); the app draws a widget per field and
    hands the values to the builder as ``ctx.options``. ``compute_label``: when set, the view is
    built only after a button with this label is pressed (a costly simulation the user asks for).
    """

    algorithm: str
    title: str
    builder: Callable[[ExplorationContext], go.Figure | list[go.Figure]]  # one figure or several
    help: str = ""
    options: type | None = None
    compute_label: str | None = None


_EXPLORATIONS: dict[str, list[Exploration]] = {}


def register_exploration(algorithm: str, title: str,
                         builder: Callable[[ExplorationContext], go.Figure | list[go.Figure]],
                         *, help: str = "", options: type | None = None,
                         compute_label: str | None = None) -> Exploration:
    """Add a view titled ``title`` to the Explore page of ``algorithm`` (replacing one of that title)."""
    view = Exploration(algorithm, title, builder, help, options, compute_label)
    views = [v for v in _EXPLORATIONS.get(algorithm, []) if v.title != title]
    _EXPLORATIONS[algorithm] = [*views, view]
    return view


@dataclass(frozen=True)
class StoryStep:
    """One step of an algorithm's step-through: a panel, its caption, a sentence of narration,
    and the paper's step it draws (named the same in the header and the panel's title).

    ``builder(result, X, *, reference_centers=None, projector=None, max_points=2000) -> go.Figure``.
    """

    key: str
    caption: str
    narration: str
    builder: Callable[..., go.Figure]
    paper_step: int | None = None


_STEPS: dict[str, tuple[StoryStep, ...]] = {}


def register_steps(algorithm: str, steps: tuple[StoryStep, ...] | list[StoryStep]) -> None:
    """Give ``algorithm`` a step-through (Prev/Next over ``steps`` on its Explore page)."""
    _STEPS[algorithm] = tuple(steps)


def story_steps(algorithm: str | None) -> tuple[StoryStep, ...]:
    """The registered step-through of an algorithm (empty if it has none)."""
    _discover()
    return _STEPS.get(algorithm or "", ())


def explorations(algorithm: str | None) -> list[Exploration]:
    """The registered extra views of an algorithm, in registration order."""
    _discover()
    return list(_EXPLORATIONS.get(algorithm or "", []))


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


def _friendlycore_steps() -> tuple[StoryStep, ...]:
    """FC_Clustering's panels (a)–(g) as a step-through (Tsfadia et al. 2022, §5.2 steps 2–7)."""
    from dpviz.viz.storyboard import NARRATION, PANEL_FUNCTIONS, PANEL_TEXT

    paper = {"b": 2, "c": 4, "d": 5, "e": 6, "g": 7}
    return tuple(StoryStep(key, PANEL_TEXT[key], NARRATION[key], PANEL_FUNCTIONS[key], paper.get(key))
                 for key in "abcdefg")


register_steps("friendlycore", _friendlycore_steps())
