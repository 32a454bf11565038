"""The storyboard's figure builders: the panels of the paper's Figure 3 from one FC Result.

Panels (Tsfadia et al. 2022, §5.2, Figure 3; the informal FC_Clustering's step numbers):
(a) the data; (b) the points of all t k-tuples (step 2); (c) core vs removed tuples (step 4);
(d) the reference tuple and the split of tuple points into coordinate clouds (step 5);
(e) private tuple averages vs the non-private ones (step 6); (f) the private centers on the data;
(g) the centers after the private Lloyd step (step 7).

Everything is read from ``Result.trace`` (the schema in INTERFACES.md); nothing is recomputed.
Each legend entry says whether it is a private release or a non-private diagnostic
(``TraceStep.released``). Missing steps (a run that stopped early) become an annotation that
says where and why it stopped and what the fallback returned. The run's status is
:mod:`dpviz.viz.storyboard.status`, the words :mod:`dpviz.viz.storyboard.labels`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.result import Result, TraceStep
from dpviz.viz import colors, raster
from dpviz.viz.data import (
    Projector,
    _scattergl,
    centers_trace,
    downsample_index,
    points_traces,
    project_2d,
)
from dpviz.viz.storyboard.labels import KIND_BY_CENTER, KIND_CLOUDS, release_label, wrap
from dpviz.viz.storyboard.status import RunStatus, drawable_step, plain_status, run_status


@dataclass(frozen=True)
class Panel:
    """One storyboard panel: its title, traces (plotly trace dicts) and any explanatory message."""

    key: str
    title: str
    traces: tuple[Any, ...]
    messages: tuple[str, ...] = ()


@dataclass
class _Context:
    result: Result
    X: np.ndarray
    proj: Projector
    P: np.ndarray  # projected, downsampled data
    idx: np.ndarray
    n: int
    color_of: np.ndarray
    status: RunStatus
    extra: dict = field(default_factory=dict)

    def step(self, name: str) -> TraceStep | None:
        return drawable_step(self.result, name)

    def ccolor(self, j: int) -> str:
        return colors.cluster_color(int(self.color_of[j]) if j < len(self.color_of) else j)


def _cluster_centers_for_colors(result: Result) -> np.ndarray | None:
    """Centers indexed by the run's coordinate j (the order of the ordered tuples)."""
    for name, key in (("tuple_averages", "centers"), ("lloyd", "centers"),
                      ("tuple_averages_nonprivate", "centers"), ("reorder", "reference")):
        s = drawable_step(result, name)
        if s is not None and s.data.get(key) is not None:
            return np.asarray(s.data[key], dtype=float)
    if result.centers is not None:
        return np.asarray(result.centers, dtype=float)
    return None


def _context(
    result: Result,
    X: np.ndarray,
    *,
    projector: Projector | None,
    reference_centers: np.ndarray | None,
    max_points: int,
    rng_seed: int,
) -> _Context:
    X = np.asarray(getattr(X, "X", X), dtype=float)
    proj = projector or project_2d(X)
    idx = downsample_index(X.shape[0], max_points, rng_seed=rng_seed)
    P = proj.transform(X[idx]) if X.shape[0] else np.zeros((0, 2))
    C = _cluster_centers_for_colors(result)
    if C is None:
        color_of = np.arange(64)
    elif reference_centers is not None:
        color_of = colors.align_colors(reference_centers, C)
    else:
        color_of = colors.canonical_order(proj.transform(C))
    return _Context(result, X, proj, P, idx, X.shape[0], color_of, run_status(result))


def _faint_data(ctx: _Context, *, showlegend: bool = True) -> dict:
    tr = points_traces(ctx.P, name="data (input, never released)", opacity=0.18, size=3,
                       showlegend=showlegend)[0]
    return dict(tr, _raster="background")


def _dense(traces: list[dict]) -> list[dict]:
    """Mark point clouds that ``points="raster"`` draws into the panel's image."""
    return [dict(tr, _raster="foreground") for tr in traces]


def _plotly(tr: dict) -> dict:
    """The trace without this module's private keys."""
    return {k: v for k, v in tr.items() if not k.startswith("_")}


def _missing(ctx: _Context, *needed: str) -> tuple[str, ...]:
    """The short annotation of a panel whose steps are absent (empty if all present).

    The full reason (:func:`plain_status`) goes in the figure's subtitle.
    """
    absent = [s for s in needed if ctx.step(s) is None]
    if not absent:
        return ()
    # One sentence, drawn above the panel (never over its points; issue 43).
    if ctx.status.fallback_used:
        return ("Not reached: stopped before this step; the backup method answered.",)
    if ctx.result.centers is None:
        return ("Not reached: stopped before this step; the backup method is off (⊥).",)
    return ("Not reached: FriendlyCore stopped before this step.",)


def _cloud(points: np.ndarray, proj: Projector, *, name: str, **kw: Any) -> dict:
    P = proj.transform(points.reshape(-1, points.shape[-1])) if points.size else np.zeros((0, 2))
    return dict(_scattergl(P[:, 0], P[:, 1], name=name, **kw), _raster="foreground")


def _circle(center2: np.ndarray, r: float, m: int = 48) -> tuple[np.ndarray, np.ndarray]:
    th = np.linspace(0, 2 * np.pi, m + 1)
    return center2[0] + r * np.cos(th), center2[1] + r * np.sin(th)


# ---- the panels -------------------------------------------------------------------------------

def _panel_a(ctx: _Context) -> Panel:
    shown = f"showing {ctx.idx.size:,} of {ctx.n:,} points" if ctx.idx.size < ctx.n else f"n = {ctx.n:,}"
    pieces = ctx.step("pieces")
    if ctx.extra.get("color_pieces") and pieces is not None:
        piece = np.asarray(pieces.data["piece_of_row"])[ctx.idx]
        palette = np.asarray(colors.PALETTE)
        tr = _dense([_scattergl(ctx.P[:, 0], ctx.P[:, 1],
                                name=release_label("data coloured by its random piece",
                                                   pieces.released),
                                marker=dict(size=3, opacity=0.5,
                                            color=palette[np.mod(piece, len(palette))].tolist()))])
        t = len(pieces.data["piece_sizes"])
        return Panel("a", f"a. data split into t={t} random pieces ({shown})", tuple(tr))
    tr = _dense(points_traces(ctx.P, name="data (input, never released)", opacity=0.35, size=3))
    return Panel("a", f"a. data ({shown})", tuple(tr))


def _panel_b(ctx: _Context) -> Panel:
    s = ctx.step("tuples")
    traces: list[Any] = [_faint_data(ctx)]
    if s is None:
        return Panel("b", "b. k-tuples of the pieces", tuple(traces), _missing(ctx, "tuples"))
    T = np.asarray(s.data["tuples"], dtype=float)
    t, k = T.shape[0], T.shape[1]
    traces.append(_cloud(T, ctx.proj, name=release_label("points of all k-tuples", s.released),
                         marker=dict(size=5, color="#34495E", opacity=0.7)))
    return Panel("b", f"b. points of all t={t} {k}-tuples (paper step 2)", tuple(traces))


def _panel_c(ctx: _Context) -> Panel:
    s, tup = ctx.step("match_core"), ctx.step("tuples")
    traces: list[Any] = [_faint_data(ctx)]
    if s is None or tup is None:
        return Panel("c", "c. core vs removed tuples", tuple(traces),
                     _missing(ctx, "tuples", "match_core"))
    T = np.asarray(tup.data["tuples"], dtype=float)
    keep = np.asarray(s.data["keep"], dtype=bool)
    # Removed first, kept last: the core is what the panel is about, so its tuples are drawn on
    # top where both pile up on a cluster (issue 43: the kept tuples hid under the removed ones).
    traces.append(_cloud(T[~keep], ctx.proj,
                         name=release_label("removed tuples", s.released),
                         marker=dict(size=7, color=colors.REMOVED, symbol="x",
                                     line=dict(width=1.5, color=colors.REMOVED))))
    traces.append(_cloud(T[keep], ctx.proj, name=release_label("core tuples (kept)", s.released),
                         marker=dict(size=5, color=colors.KEPT, opacity=0.8)))
    return Panel("c", f"c. core: {int(keep.sum())} of {keep.size} tuples kept (paper step 4)",
                 tuple(traces))


def _panel_d(ctx: _Context) -> Panel:
    s = ctx.step("reorder")
    traces: list[Any] = [_faint_data(ctx)]
    if s is None:
        return Panel("d", "d. reference tuple and the split", tuple(traces), _missing(ctx, "reorder"))
    ordered = np.asarray(s.data["ordered"], dtype=float)
    for j in range(ordered.shape[1]):
        traces.append(dict(_cloud(ordered[:, j, :], ctx.proj,
                                  name=release_label(f"cloud Q{j + 1} (coordinate {j + 1})", s.released),
                                  marker=dict(size=5, color=ctx.ccolor(j), opacity=0.75)),
                           _kind=release_label(KIND_CLOUDS, s.released)))
    ref = ctx.proj.transform(np.asarray(s.data["reference"], dtype=float))
    traces.append(centers_trace(ref, name=release_label("reference tuple", s.released),
                                color=colors.REFERENCE, symbol="circle-open", size=16,
                                line_color=colors.REFERENCE))
    return Panel("d", "d. reference tuple (black) and the k clouds it splits (paper step 5)",
                 tuple(traces))


def _panel_e(ctx: _Context) -> Panel:
    s, npv, ro, dia = (ctx.step(n) for n in ("tuple_averages", "tuple_averages_nonprivate",
                                             "reorder", "diameters"))
    traces: list[Any] = [_faint_data(ctx)]
    if ro is not None:
        ordered = np.asarray(ro.data["ordered"], dtype=float)
        for j in range(ordered.shape[1]):
            traces.append(dict(_cloud(ordered[:, j, :], ctx.proj, showlegend=False,
                                      name=release_label(f"cloud Q{j + 1} (coordinate {j + 1})",
                                                         ro.released),
                                      marker=dict(size=4, color=ctx.ccolor(j), opacity=0.25)),
                               _kind=release_label(KIND_CLOUDS, ro.released)))
    if s is None:
        return Panel("e", "e. private vs non-private averages", tuple(traces),
                     _missing(ctx, "tuple_averages"))
    C = np.asarray(s.data["centers"], dtype=float)
    C2 = ctx.proj.transform(C)
    if dia is not None and dia.data.get("radii_used") is not None:
        radii = np.asarray(dia.data["radii_used"], dtype=float)
        xs: list[float | None] = []
        ys: list[float | None] = []
        for j in range(min(len(radii), C2.shape[0])):
            cx, cy = _circle(C2[j], float(radii[j]))
            xs += [*cx, None]
            ys += [*cy, None]
        traces.append(_scattergl(np.array(xs, dtype=float), np.array(ys, dtype=float),
                                 mode="lines", visible="legendonly",
                                 name=release_label("FindDiam radii r_j", dia.released),
                                 line=dict(color=colors.THRESHOLD, width=1, dash="dot")))
    if npv is not None:
        traces.append(centers_trace(ctx.proj.transform(np.asarray(npv.data["centers"], float)),
                                    name=release_label("non-private averages", npv.released),
                                    color=colors.NONPRIVATE, symbol="diamond-open", size=13,
                                    line_color=colors.NONPRIVATE))
    traces.append(centers_trace(C2, name=release_label("private averages", s.released),
                                color=colors.PRIVATE, symbol="x", size=13))
    return Panel("e", "e. private averages (red) vs non-private ones (paper step 6)", tuple(traces))


def _fallback_trace(ctx: _Context) -> tuple[list[Any], tuple[str, ...]]:
    fb = ctx.step("fallback")
    if fb is None or not fb.data.get("used") or fb.data.get("centers") is None:
        return [], ()
    C2 = ctx.proj.transform(np.asarray(fb.data["centers"], dtype=float))
    name = release_label(f"fallback centers ({fb.data.get('method', 'fallback')})", fb.released)
    return ([centers_trace(C2, name=name, color=colors.PRIVATE, symbol="square", size=13)],
            _missing(ctx, "lloyd"))


def _panel_f(ctx: _Context) -> Panel:
    s = ctx.step("tuple_averages")
    traces: list[Any] = [_faint_data(ctx)]
    if s is None:
        fb, _ = _fallback_trace(ctx)
        return Panel("f", "f. private centers on the data", tuple(traces + fb),
                     _missing(ctx, "tuple_averages"))
    C2 = ctx.proj.transform(np.asarray(s.data["centers"], dtype=float))
    traces.append(centers_trace(C2, name=release_label("private centers (tuple averages)",
                                                        s.released),
                                color=[ctx.ccolor(j) for j in range(C2.shape[0])],
                                symbol="x", size=15, line_color=colors.NONPRIVATE))
    return Panel("f", "f. private centers over the full data", tuple(traces))


def _panel_g(ctx: _Context) -> Panel:
    s, part = ctx.step("lloyd"), ctx.step("lloyd_partition")
    traces: list[Any] = []
    if part is not None and part.data.get("labels") is not None:
        lab = np.asarray(part.data["labels"])[ctx.idx]
        suffix = release_label("", part.released)
        kind = KIND_BY_CENTER + suffix
        traces += [dict(tr, _kind=kind) for tr in _dense(points_traces(
            ctx.P, lab, color_of=ctx.color_of, suffix=suffix, name="data by nearest center",
            opacity=0.3, size=3))]
    else:
        traces.append(_faint_data(ctx))
    if s is None:
        fb, _ = _fallback_trace(ctx)
        return Panel("g", "g. after the private Lloyd step", tuple(traces + fb),
                     _missing(ctx, "lloyd"))
    C2 = ctx.proj.transform(np.asarray(s.data["centers"], dtype=float))
    removed = part.data.get("n_removed") if part is not None else None
    note = f"; {removed} rows outside Λ removed" if removed else ""
    traces.append(centers_trace(C2, name=release_label("final centers (private Lloyd step)",
                                                        s.released),
                                color=colors.FINAL, symbol="star", size=17,
                                line_color=colors.NONPRIVATE))
    return Panel("g", f"g. after the private Lloyd step (paper step 7{note})", tuple(traces))


_BUILDERS = {"a": _panel_a, "b": _panel_b, "c": _panel_c, "d": _panel_d, "e": _panel_e,
             "f": _panel_f, "g": _panel_g}


def storyboard_panels(
    result: Result,
    X: np.ndarray,
    *,
    panels: Sequence[str] = "abcdefg",
    projector: Projector | None = None,
    reference_centers: np.ndarray | None = None,
    max_points: int = 20_000,
    rng_seed: int = 0,
    color_pieces: bool = False,
) -> list[Panel]:
    """The chosen panels as :class:`Panel` records (title, traces, messages).

    ``color_pieces`` colours panel (a) by each row's random piece (palette cycled; Tsfadia et
    al. 2022, §5.2 step 1).
    """
    bad = [p for p in panels if p not in _BUILDERS]
    if bad:
        raise ValueError(f"Unknown storyboard panel(s) {bad}; choose from 'abcdefg'.")
    ctx = _context(result, X, projector=projector, reference_centers=reference_centers,
                   max_points=max_points, rng_seed=rng_seed)
    ctx.extra["color_pieces"] = color_pieces
    return [_BUILDERS[p](ctx) for p in panels]


def _annotation(text: str, width: int, size: int, xref: str = "paper",
                yref: str = "paper") -> dict:
    # Above the plot area, not over it: a box at its top covered a center (issue 43).
    return dict(text=wrap(text, width), xref=xref, yref=yref, x=0.5, y=1.0, yanchor="bottom",
                yshift=2, showarrow=False, font=dict(size=size, color=colors.REMOVED))


#: Panels drawn before the private stage: they do not depend on the budget, so their titles carry
#: no run status (an app that caches them per tuple stage would otherwise show a stale one).
PRE_PRIVATE_PANELS = "ab"


def _single_figure(panel: Panel, proj: Projector, result: Result, *,
                   points: Literal["vector", "raster"] = "vector") -> go.Figure:
    title = panel.title
    status = run_status(result)
    if panel.key not in PRE_PRIVATE_PANELS and (not status.complete or status.fallback_used):
        title = f"{title}<br><sup>{wrap(plain_status(result), 90)}</sup>"
    # The panel's message is the title's last line, in a top margin that holds all its lines:
    # the status lines ran into a separate note (issue 43).
    for m in panel.messages:
        title = f"{title}<br><sup>{wrap(m, 90)}</sup>"
    layout = dict(
        title=dict(text=title, yref="container", y=1.0, yanchor="top", pad=dict(t=28)),
        margin=dict(t=44 + 22 * (title.count("<br>") + 1)),
        template=colors.TEMPLATE, legend=dict(itemsizing="constant"),
        xaxis=dict(title=dict(text=proj.axis_titles[0])),
        yaxis=dict(title=dict(text=proj.axis_titles[1]), scaleanchor="x", scaleratio=1))
    traces = list(panel.traces)
    if points == "raster":  # the clouds as one image: no WebGL context to build in the browser
        window = _raster_window([panel])
        traces, uris = _rasterize(traces, window)
        layout["images"] = [raster.layout_image(u, window) for u in uris]
        layout["xaxis"]["range"] = list(_axis_range(traces, window, 0))
        layout["yaxis"]["range"] = list(_axis_range(traces, window, 1))
    elif points != "vector":
        raise ValueError(f"The 'points' parameter must be 'vector' or 'raster'. Got {points!r}.")
    return go.Figure(data=[_plotly(tr) for tr in traces], layout=layout)


def _panel_figure(key: str, result: Result, X: np.ndarray, *,
                  points: Literal["vector", "raster"] = "vector", **kw: Any) -> go.Figure:
    """One panel as its own figure; ``points`` as in :func:`storyboard_figure`."""
    proj = kw.get("projector") or project_2d(np.asarray(getattr(X, "X", X), dtype=float))
    kw["projector"] = proj
    (panel,) = storyboard_panels(result, X, panels=key, **kw)
    return _single_figure(panel, proj, result, points=points)


def panel_data(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(a) The data (downsampled for display)."""
    return _panel_figure("a", result, X, **kw)


def panel_tuples(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(b) The points of all t k-tuples (the oracle's centers per piece; non-private)."""
    return _panel_figure("b", result, X, **kw)


def panel_core(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(c) Core vs removed tuples (the match_{1/7} FriendlyCore filter's decision)."""
    return _panel_figure("c", result, X, **kw)


def panel_reorder(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(d) The reference tuple and the ordered coordinate clouds Q^j, coloured by j."""
    return _panel_figure("d", result, X, **kw)


def panel_averages(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(e) Private tuple averages vs the non-private coordinate means (radii on demand)."""
    return _panel_figure("e", result, X, **kw)


def panel_centers(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(f) The private centers over the full data (or the fallback's)."""
    return _panel_figure("f", result, X, **kw)


def panel_lloyd(result: Result, X: np.ndarray, **kw: Any) -> go.Figure:
    """(g) The data split by nearest center and the centers after the private Lloyd step."""
    return _panel_figure("g", result, X, **kw)


PANEL_FUNCTIONS = {"a": panel_data, "b": panel_tuples, "c": panel_core, "d": panel_reorder,
                   "e": panel_averages, "f": panel_centers, "g": panel_lloyd}


def storyboard_figure(
    result: Result,
    X: np.ndarray,
    *,
    panels: Sequence[str] = "abcdefg",
    cols: int = 4,
    projector: Projector | None = None,
    reference_centers: np.ndarray | None = None,
    max_points: int = 5_000,
    rng_seed: int = 0,
    height_per_row: int = 360,
    color_pieces: bool = False,
    title: str | None = None,
    points: Literal["vector", "raster"] = "vector",
    legend: bool = True,
    legend_in_free_cell: bool = False,
    tick_labels: bool = True,
    margin: dict | None = None,
    status_subtitle: bool = True,
) -> go.Figure:
    """All storyboard panels in one grid of subplots (shared projection, one legend): the
    validated :class:`plotly.graph_objects.Figure` of :func:`storyboard_spec` (which see for the
    parameters)."""
    return go.Figure(storyboard_spec(
        result, X, panels=panels, cols=cols, projector=projector,
        reference_centers=reference_centers, max_points=max_points, rng_seed=rng_seed,
        height_per_row=height_per_row, color_pieces=color_pieces, title=title, points=points,
        legend=legend, legend_in_free_cell=legend_in_free_cell, tick_labels=tick_labels,
        margin=margin, status_subtitle=status_subtitle))


def storyboard_spec(
    result: Result,
    X: np.ndarray,
    *,
    panels: Sequence[str] = "abcdefg",
    cols: int = 4,
    projector: Projector | None = None,
    reference_centers: np.ndarray | None = None,
    max_points: int = 5_000,
    rng_seed: int = 0,
    height_per_row: int = 360,
    color_pieces: bool = False,
    title: str | None = None,
    points: Literal["vector", "raster"] = "vector",
    legend: bool = True,
    legend_in_free_cell: bool = False,
    tick_labels: bool = True,
    margin: dict | None = None,
    status_subtitle: bool = True,
) -> dict:
    """All storyboard panels in one grid of subplots (shared projection, one legend), as the
    plain figure dict ``{"data": [...], "layout": {...}}``: what a live page sends with
    ``plotly.io.to_json(spec, validate=False)``, without building and validating a Figure
    (about half of the storyboard's server time at n = 150,000; a test checks the JSON is
    the validated Figure's).

    Parameters
    ----------
    result : Result
        An ``fc_clustering`` / ``fc_private_stage`` Result (its trace is drawn).
    X : (n, d) array or Dataset
        The data the run used (drawn faintly under every panel, downsampled to ``max_points``).
    reference_centers : (k, d) array, optional
        Fixes the cluster colours (e.g. non-private or true centers) so they do not change
        between reruns; by default clusters are coloured in the order of their x position.
    points : {"vector", "raster"}
        "vector" draws every point as a WebGL marker (hover on each). "raster" draws the point
        clouds (data, tuple points) into one PNG per panel and keeps only centers and lines as
        SVG traces: no WebGL context and few DOM nodes, so the browser redraws the figure in
        ~0.1 s instead of ~1 s (:mod:`dpviz.viz.raster`). Legends are the same in both.
    legend : bool
        False leaves the legend out (and, with "raster", the data-less traces that carry the
        legend entries of the images): a smaller figure for callers that explain it in text.
        A trace kind drawn once per cluster or coordinate (the clouds Q_j, the data by nearest
        center) has one entry; the trace's colour tells the clusters apart.
    legend_in_free_cell : bool
        Draw the legend in the grid's first empty cell (e.g. the sixth cell of panels (c)-(g)
        on 2 × 3) instead of below the grid: it is then inside the plot area, so fixed
        ``margin`` need not grow for it and plotly.js still lays the figure out in one pass.
        Needs fewer panels than cells.
    tick_labels : bool
        False hides the axes' tick labels (the projected coordinates carry no meaning a reader
        needs); with ``margin`` it spares plotly.js a second layout pass to fit them.
    margin : dict, optional
        Fixed figure margins (plotly's ``l, r, t, b``); they are then not grown to fit the
        legend or tick labels (``autoexpand=False``), which makes plotly.js draw the figure once
        instead of twice.
    status_subtitle : bool
        False leaves the run's status (:func:`plain_status`, e.g. why the fallback answered) out
        of the figure's subtitle (when the run stopped early or fell back), for a caller that
        states it next to the figure: in a fixed top margin its two or three lines ran into the
        first row's panel titles (issue 27).

    Notes
    -----
    Panels whose steps are absent carry an annotation saying where the run stopped, why, and
    what the fallback released; the title repeats it.
    """
    if points not in ("vector", "raster"):
        raise ValueError(f"The 'points' parameter must be 'vector' or 'raster'. Got {points!r}.")
    if legend_in_free_cell and len(panels) % cols == 0:
        raise ValueError(f"legend_in_free_cell needs a free cell: {len(panels)} panels fill "
                         f"{len(panels) // cols} rows of {cols}. Use another 'cols'.")
    X_arr = np.asarray(getattr(X, "X", X), dtype=float)
    proj = projector or project_2d(X_arr)
    plist = storyboard_panels(result, X_arr, panels=panels, projector=proj,
                              reference_centers=reference_centers, max_points=max_points,
                              rng_seed=rng_seed, color_pieces=color_pieces)
    rows = -(-len(plist) // cols)
    layout = _grid_layout(rows, cols, len(plist))
    annotations = layout.pop("annotations")
    # Projected at 1280×720 (issue 43): every title and message is wrapped to its column's
    # width, so neighbouring titles never print over each other.
    chars = title_chars(cols)
    for ann, p in zip(annotations, plist, strict=True):
        ann["text"] = wrap(p.title, chars)
    window = _raster_window(plist) if points == "raster" else None
    images: list[dict] = []
    data: list[dict] = []
    seen: set[str] = set()
    for i, p in enumerate(plist):
        sfx = "" if i == 0 else str(i + 1)
        traces = _one_entry_per_kind(p.traces)
        if window is not None:
            traces, uris = _rasterize(traces, window, stubs=legend)
            images += [raster.layout_image(u, window, xref=f"x{sfx}", yref=f"y{sfx}")
                       for u in uris]
            layout.setdefault(f"xaxis{sfx}", {})["range"] = list(_axis_range(traces, window, 0))
            layout.setdefault(f"yaxis{sfx}", {})["range"] = list(_axis_range(traces, window, 1))
        for tr in traces:
            tr = dict(_plotly(tr), xaxis=f"x{sfx}", yaxis=f"y{sfx}",
                      legendgroup=tr.get("legendgroup") or tr["name"])
            if tr["name"] in seen or tr.get("showlegend") is False:
                tr["showlegend"] = False
            else:
                seen.add(tr["name"])
            data.append(tr)
        annotations += _above(annotations[i], p.messages, chars, f"x{sfx} domain", f"y{sfx} domain")
        layout.setdefault(f"yaxis{sfx}", {}).update(scaleanchor=f"x{sfx}", scaleratio=1)
        for axis, text in zip((f"xaxis{sfx}", f"yaxis{sfx}"), proj.axis_titles, strict=True):
            layout.setdefault(axis, {})["title"] = dict(text=text, font=dict(size=10), standoff=2)
        for axis in (f"xaxis{sfx}", f"yaxis{sfx}"):
            layout.setdefault(axis, {}).update(
                dict(showticklabels=True, ticks="outside", ticklen=3, tickfont=dict(size=9),
                     nticks=5) if tick_labels else dict(showticklabels=False, ticks=""))
    status = run_status(result)
    head = title or "FriendlyCore clustering, step by step (Tsfadia et al. 2022, Fig. 3)"
    stopped = status.fallback_used or not status.complete
    sub = proj.note() if not stopped else wrap(plain_status(result), 110) if status_subtitle else ""
    layout.update(title=dict(text=f"{head}<br><sup>{sub}</sup>" if sub else head),
                  annotations=annotations, template=colors.TEMPLATE,
                  height=height_per_row * rows + 120,
                  legend=dict(orientation="h", y=-0.05, itemsizing="constant"),
                  showlegend=legend)
    if legend_in_free_cell:
        layout["legend"] = _legend_in_cell(layout, len(plist) + 1)
        for tr in data:  # the cell is one column wide: its entries wrap to it (issue 43)
            tr["name"] = wrap(tr["name"], LEGEND_CHARS * 3 // cols)
    if margin is not None:
        layout["margin"] = dict(margin, autoexpand=False)
    if images:
        layout["images"] = images
    return {"data": data, "layout": layout}


#: Title characters per line for a grid of ``cols`` panels across a page's main column (about
#: 820 px at 1280×720 with the sidebar open; 11 px type).
def title_chars(cols: int) -> int:
    """How many characters of a panel title fit on one line above a column of ``cols``."""
    return max(24, 114 // max(1, cols))


#: Legend characters per line in a free cell of a three-column grid (9 px type): most entries
#: then take one line and all of them fit the cell, with no scrolling (issue 43).
LEGEND_CHARS = 46
#: The height of one line of a panel's title or message (px, 10–11 px type).
_LINE_PX = 14


def _above(title: dict, messages: Sequence[str], chars: int, xref: str, yref: str) -> list[dict]:
    """The panel's messages as one annotation just above its plot area (never over its points),
    the panel's title moved up over them."""
    if not messages:
        return []
    text = wrap(" ".join(messages), chars)
    title["yshift"] = title.get("yshift", 0) + _LINE_PX * (text.count("<br>") + 1) + 2
    return [dict(text=text, xref=xref, yref=yref, x=0.5, y=1.0, yanchor="bottom", yshift=1,
                 showarrow=False, font=dict(size=10, color=colors.REMOVED))]


def _one_entry_per_kind(traces: Sequence[dict]) -> list[dict]:
    """One legend entry per trace kind (``_kind``): the first trace of a kind is named after
    it, the others join its legend group without an entry of their own."""
    out, kinds = [], set()
    for tr in traces:
        kind = tr.get("_kind")
        if kind is None:
            out.append(tr)
        elif kind in kinds or tr.get("showlegend") is False:
            out.append(dict(tr, showlegend=False, legendgroup=kind))
        else:
            kinds.add(kind)
            out.append(dict(tr, name=kind, legendgroup=kind))
    return out


def _legend_in_cell(layout: dict, cell: int) -> dict:
    """A vertical legend at the top left of the grid's ``cell`` (1-based), whose axes are hidden."""
    sfx = "" if cell == 1 else str(cell)
    for axis in (f"xaxis{sfx}", f"yaxis{sfx}"):
        layout.setdefault(axis, {})["visible"] = False
    x0 = layout[f"xaxis{sfx}"]["domain"][0]
    y1 = layout[f"yaxis{sfx}"]["domain"][1]
    return dict(x=x0, y=y1, xanchor="left", yanchor="top", orientation="v", itemsizing="constant",
                tracegroupgap=0,
                font=dict(size=9), bgcolor="rgba(0,0,0,0)")


@functools.lru_cache(maxsize=16)
def _grid_layout_cached(rows: int, cols: int, n: int) -> str:
    # make_subplots only for the axis domains and the title annotations (~50 ms a call, so it
    # is cached); the traces and the rest of the layout go into one Figure constructor.
    # The vertical gap holds a row's tick labels and axis title, and the next row's titles and
    # messages (two lines each at most): issue 43.
    grid = make_subplots(rows=rows, cols=cols, subplot_titles=[f"panel {i}" for i in range(n)],
                         horizontal_spacing=0.05, vertical_spacing=0.17)
    return json.dumps(grid.layout.to_plotly_json())


def _grid_layout(rows: int, cols: int, n: int) -> dict:
    """A fresh copy of the subplot grid's layout, with one title annotation per panel."""
    layout = json.loads(_grid_layout_cached(rows, cols, n))
    layout["annotations"] = layout.get("annotations", [])[:n]
    for ann in layout["annotations"]:
        ann["font"] = dict(size=11)
    return layout


def _raster_window(plist: Sequence[Panel]) -> raster.Window:
    """One square window over every rasterized point of every panel (all share the projection)."""
    pts = [np.column_stack([np.asarray(tr["x"], float), np.asarray(tr["y"], float)])
           for p in plist for tr in p.traces if tr.get("_raster")]
    return raster.square_window(np.vstack(pts) if pts else np.zeros((0, 2)))


def _rasterize(traces: list[dict], window: raster.Window, *,
               stubs: bool = True) -> tuple[list[dict], list[str]]:
    """(SVG traces, image URIs) of one panel: the point clouds become one image and keep
    data-less legend stubs; the other traces (centers, radii) become SVG ``scatter``."""
    background = [tr for tr in traces if tr.get("_raster") == "background"]
    foreground = [tr for tr in traces if tr.get("_raster") == "foreground"]
    uri = raster.traces_image(background, foreground, window)
    out = [raster.legend_stub(tr) for tr in background + foreground] if stubs else []
    out += [dict(tr, type="scatter") for tr in traces if not tr.get("_raster")]
    return out, [] if uri is None else [uri]


def _axis_range(traces: list[dict], window: raster.Window, axis: int) -> tuple[float, float]:
    """The window's range on ``axis`` (0 = x), widened to show every SVG point (e.g. a noisy
    private center outside the data)."""
    lo, hi = (window.x_range if axis == 0 else window.y_range)
    vals = [np.asarray(tr["xy"[axis]], dtype=float) for tr in traces
            if tr.get("type") == "scatter" and tr.get("visible") != "legendonly"]
    vals = [v[np.isfinite(v)] for v in vals if v.size]
    if any(v.size for v in vals):
        allv = np.concatenate(vals)
        pad = 0.03 * (hi - lo)
        lo, hi = min(lo, float(allv.min()) - pad), max(hi, float(allv.max()) + pad)
    return lo, hi
