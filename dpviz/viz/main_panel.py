"""One main panel of a private run: the data, the private centers, the noise they carry, and
earlier draws, at a scale that does not move with the budget (issue 16's teaching view).

- The data is drawn faintly (one image, :mod:`dpviz.viz.raster`); the axes are the data's square
  window, fixed for a dataset, so moving ρ moves the centers and not the axes.
- The noise cloud: each released center plus samples of the Gaussian noise its mechanism added,
  N(0, σ_j² I) with σ_j as recorded in the trace (FriendlyAvg inside the private Lloyd step, or
  the tuple averages; Tsfadia et al. 2022, §5.2 steps 6-7). At n = 20,000 that noise is a few
  thousandths of the data's width, invisible unmagnified, so the cloud is drawn ×M with M given
  by the caller and kept fixed (:func:`cloud_magnification`): the cloud then grows and shrinks
  with ρ. The legend says ×M. σ is post-processing of the run's own record, the samples are
  illustration (seeded), never a release.
- Earlier draws: the centers of runs the user saw before (e.g. other ρ), faint.

Nothing is recomputed from the rows besides the projection and the display sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from dpviz.result import Result
from dpviz.viz import colors, raster
from dpviz.viz.answered import answered_by
from dpviz.viz.data import Projector, centers_trace, downsample_index, points_traces, project_2d
from dpviz.viz.storyboard.labels import release_label, wrap
from dpviz.viz.text import plotly_text

DATA_NAME = "data (input, never released)"
#: Tick marks and labels on both axes (small type: the panel is ~430 px wide on Explore).
TICKS = dict(showticklabels=True, ticks="outside", ticklen=3, tickfont=dict(size=9), nticks=5)
#: Fixed margins that hold the tick labels and the axis titles (px).
MARGIN_LEFT, MARGIN_BOTTOM = 40, 36
CENTERS_NAME = release_label("private centers (this run)", True)
EARLIER_NAME = "earlier draws (runs you saw before)"


def released_noise(result: Result) -> tuple[np.ndarray, np.ndarray] | None:
    """(centers (k, d), σ (k,)) of the step whose centers are ``result.centers`` and that recorded
    the Gaussian noise it added (``lloyd``, else ``tuple_averages``); None when another method
    answered (e.g. the backup's grid summary) or nothing was released."""
    if result.centers is None:
        return None
    C = np.asarray(result.centers, dtype=float)
    for name in ("lloyd", "tuple_averages"):
        step = result.find(name)
        if step is None or step.data.get("centers") is None or step.data.get("sigma") is None:
            continue
        sc = np.asarray(step.data["centers"], dtype=float)
        if sc.shape == C.shape and np.array_equal(sc, C):
            return C, np.asarray(step.data["sigma"], dtype=float)
    return None


def grid_count_sigma(result: Result) -> float | None:
    """The Gaussian σ on each cell count of the backup's grid summary (from the run's ledger: the
    ``grid counts`` spends, equal at every level), or None when no grid count was noised. It grows
    as ρ shrinks (σ = 1/√(2ρ_level)): the backup's noise scale, which the panel states in words."""
    scales = [s.noise_scale for _, s in result.ledger.spends()
              if s.name.startswith("grid counts") and s.noise_scale is not None]
    return float(max(scales)) if scales else None


def cloud_magnification(sigma: np.ndarray, width: float, *, share: float = 0.12) -> float:
    """A round factor M (1, 2 or 5 × 10^m, at least 1) so that 2σ·M is about ``share`` of
    ``width``: large enough to see; the caller keeps one M per dataset so that clouds compare."""
    s = np.asarray(sigma, dtype=float)
    s = s[np.isfinite(s) & (s > 0)]
    if s.size == 0 or width <= 0:
        return 1.0
    raw = share * width / (2 * float(np.median(s)))
    if raw <= 1:
        return 1.0
    exp = math.floor(math.log10(raw))
    mant = raw / 10 ** exp
    nice = 1 if mant < 2 else 2 if mant < 5 else 5
    return float(nice * 10 ** exp)


def noise_cloud(centers: np.ndarray, sigma: np.ndarray, magnification: float, *,
                samples: int = 60, rng_seed: int = 0) -> np.ndarray:
    """(k, samples, d) illustration points: center j plus ``samples`` draws of M·N(0, σ_j² I)
    (NaN rows where σ_j is NaN: that center's mechanism output ⊥ and it was kept as is)."""
    C = np.asarray(centers, dtype=float)
    Z = np.random.default_rng(rng_seed).standard_normal((C.shape[0], samples, C.shape[1]))
    return C[:, None, :] + float(magnification) * np.asarray(sigma, dtype=float)[:, None, None] * Z


def data_window(X: np.ndarray, projector: Projector, *, max_points: int = 2_000,
                rng_seed: int = 0) -> raster.Window:
    """The panel's fixed square window: the data's projected display sample, padded."""
    X = np.asarray(getattr(X, "X", X), dtype=float)
    idx = downsample_index(X.shape[0], max_points, rng_seed=rng_seed)
    return raster.square_window(projector.transform(X[idx]) if X.shape[0] else np.zeros((0, 2)))


def main_panel_figure(result: Result, X: np.ndarray, **kw) -> go.Figure:
    """The main panel (see the module docstring) as a plotly Figure: :func:`main_panel_spec`'s
    keywords."""
    return go.Figure(main_panel_spec(result, X, **kw))


def main_panel_spec(
    result: Result,
    X: np.ndarray,
    *,
    projector: Projector | None = None,
    reference_centers: np.ndarray | None = None,
    earlier: Sequence[np.ndarray] = (),
    magnification: float | None = None,
    samples: int = 60,
    max_points: int = 2_000,
    rng_seed: int = 0,
    height: int = 300,
    legend_width: int = 150,
) -> dict:
    """The main panel as a plotly figure dict ``{"data", "layout"}`` with fixed margins (not
    validated: ``plotly.io.to_json(spec, validate=False)`` sends it ~40 ms sooner than a
    ``go.Figure`` on the live path; :func:`main_panel_figure` wraps it).

    Parameters
    ----------
    earlier : sequence of (k, d) arrays
        Centers of earlier runs, drawn faintly (grey).
    magnification : float, optional
        M: the noise cloud is drawn ×M around each center (the legend says so); None draws no
        cloud. Keep it fixed across runs on one dataset so that clouds compare.
    samples : int
        Noise samples per center (seeded by ``rng_seed``: the same picture for the same run).
    legend_width : int
        The fixed right margin (px) that holds the legend: the margins never grow
        (``autoexpand=False``), so plotly.js lays the figure out in one pass.
    """
    X_arr = np.asarray(getattr(X, "X", X), dtype=float)
    proj = projector or project_2d(X_arr)
    idx = downsample_index(X_arr.shape[0], max_points, rng_seed=rng_seed)
    P = proj.transform(X_arr[idx]) if X_arr.shape[0] else np.zeros((0, 2))
    # The decimation, said under the panel (issue 33): the picture is a sample of the rows.
    drawn = (f" · {len(idx):,} of {X_arr.shape[0]:,} rows drawn (a uniform sample)"
             if len(idx) < X_arr.shape[0] else "")
    window = raster.square_window(P)
    data = points_traces(P, name=DATA_NAME, opacity=0.22, size=3)[0]
    background, foreground, svg = [data], [], []
    C = None if result.centers is None else np.asarray(result.centers, dtype=float)
    if C is not None and reference_centers is not None:
        color_of = colors.align_colors(np.asarray(reference_centers, dtype=float), C)
    elif C is not None:
        color_of = colors.canonical_order(proj.transform(C))
    else:
        color_of = np.zeros(0, dtype=int)
    ccolor = [colors.cluster_color(int(c)) for c in color_of]
    noise = released_noise(result)
    if noise is not None and magnification:
        Cn, sigma = noise
        ok = np.isfinite(sigma)
        cloud = noise_cloud(Cn, sigma, magnification, samples=samples, rng_seed=rng_seed)
        cloud2 = proj.transform(cloud[ok].reshape(-1, Cn.shape[1]))
        col = np.repeat(np.asarray(ccolor, dtype=object)[ok], samples).tolist()
        foreground.append(dict(type="scattergl", mode="markers", x=cloud2[:, 0], y=cloud2[:, 1],
                               name=f"noise cloud ×{magnification:g}: each center's Gaussian noise",
                               marker=dict(size=4, color=col, opacity=0.35)))
    if C is not None:
        C2 = proj.transform(C)
        svg.append(dict(centers_trace(C2, name=CENTERS_NAME, color=ccolor, symbol="x", size=11,
                                      line_color=colors.NONPRIVATE),
                        hovertemplate=f"answered by {plotly_text(answered_by(result).who)}<extra></extra>"))
    note = None
    if C is None:
        note = "No centers were released at this budget."
    elif noise is None:
        sigma = grid_count_sigma(result)
        scale = "" if sigma is None else f"each grid cell's row count carries noise of σ = {sigma:.3g} rows; "
        answer = answered_by(result)
        who = answer.who if answer.backup is not None else "Another method"
        note = f"Answered by {who}: {scale}no noise cloud (not one Gaussian per center)."
    uri = raster.traces_image(background, foreground, window)
    stubs = [raster.legend_stub(tr) for tr in background + foreground]
    if foreground:  # the stub's marker takes the first cluster's colour
        stubs[-1]["marker"]["color"] = ccolor[0] if ccolor else colors.DATA
    traces = [dict(tr, name=wrap(tr["name"], 24)) for tr in stubs + [dict(t, type="scatter") for t in svg]]
    layout = dict(
        # where :func:`with_earlier` puts the earlier draws: under this run's centers
        meta=dict(earlier_at=len(stubs)),
        template=colors.TEMPLATE, height=height, showlegend=True,
        margin=dict(l=MARGIN_LEFT, r=legend_width, t=6, b=MARGIN_BOTTOM, autoexpand=False),
        legend=dict(orientation="v", x=1.02, y=1, xanchor="left", yanchor="top",
                    font=dict(size=10), itemsizing="constant", tracegroupgap=4),
        # Ticks on (issue 43: a projected panel needs a scale); the margins stay fixed.
        xaxis=dict(range=list(window.x_range), title=dict(text=proj.axis_titles[0] + drawn, standoff=2),
                   **TICKS),
        yaxis=dict(range=list(window.y_range), title=dict(text=proj.axis_titles[1], standoff=2),
                   scaleanchor="x", scaleratio=1, **TICKS),
        images=[raster.layout_image(uri, window)] if uri else [],
        # The note sits in the right margin under the legend, never over the plot: at its top it
        # covered a center (issue 43).
        annotations=[dict(text=wrap(note, max(16, legend_width // 6)), xref="paper", yref="paper",
                          x=1.02, y=0.0, xanchor="left", yanchor="bottom", align="left",
                          showarrow=False, font=dict(size=9))] if note else [],
    )
    return with_earlier(dict(data=traces, layout=layout), earlier, proj)


def with_earlier(spec: dict, earlier: Sequence[np.ndarray], projector: Projector) -> dict:
    """``spec`` (a :func:`main_panel_spec`) with the centers of ``earlier`` runs drawn faintly
    (grey) under this run's centers. A new dict: ``spec`` itself is left as it is, so the panel of
    a run can be built once and shared, each viewer adding the earlier draws it has seen."""
    E = [np.asarray(e, dtype=float) for e in earlier if e is not None and np.size(e)]
    if not E:
        return spec
    E2 = projector.transform(np.vstack(E))
    trace = dict(centers_trace(E2, name=EARLIER_NAME, color="#7F8C8D", symbol="x-thin", size=8,
                               line_color="#7F8C8D", opacity=0.45), hoverinfo="skip", type="scatter")
    trace["name"] = wrap(trace["name"], 24)
    data = list(spec["data"])
    data.insert(spec["layout"]["meta"]["earlier_at"], trace)
    return dict(spec, data=data)
