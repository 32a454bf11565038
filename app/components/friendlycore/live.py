"""Explore's live path for FriendlyCore: what an ε / δ move shows, and what it computes ahead.

- The last good tuple stage and private run are kept in Session State: when new knobs fail
  (a ValueError for bad knobs, or a library bug) the page shows the error next to the previous
  result instead of a blank page (:func:`stage_or_last`, :func:`private_or_last`).
- The live storyboard figure of panels (c)-(g) is a pure function of the run
  (:func:`live_figure_json`), so it can be built on the background worker.
- The main panel (:func:`main_panel`, :mod:`dpviz.viz.main_panel`) keeps the centers of the
  runs shown before on this tuple stage (faint earlier draws) and one noise-cloud
  magnification per dataset and k, so that the cloud grows and shrinks with ρ.
- :func:`prefetch_next` speculates the private runs one slider step away, their privacy
  statements and (if shown) their figures (:func:`app.components.cache.speculate`).

The page (``page.py`` in this folder, FriendlyCore's live page found by ``live_pages``) only lays out widgets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import plotly.io as pio
import streamlit as st

import dpviz.viz.data
import dpviz.viz.main_panel
import dpviz.viz.storyboard
from app.components import cache, controls, keys, simulation, state
from app.components import run as shared
from app.components.friendlycore import run
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
LAST_STAGE: Key[tuple] = Key(
    "_explore_last", tuple, "(dataset, stage, cfg) of the last good tuple stage")
LAST_RESULT: Key[tuple] = Key(
    "_explore_last_result", tuple, "(private key, result) of the last good private run")
LAST_CFG: Key[object] = Key("_explore_last_cfg", object, "that run's RunConfig")
DRAWS: Key[tuple] = Key(
    "_explore_draws", tuple, "(stage key, {private key: centers}) of the runs shown on this stage")
MAGNIFICATION: Key[dict] = Key(
    "_explore_noise_x", dict, "{(content hash, k): M} of the main panel's noise cloud")

VECTOR = keys.STORYBOARD_VECTOR  # the toggle: WebGL points with hover instead of images
EARLIER_DRAWS = 12  # how many earlier draws the main panel keeps


def projection(ds):
    """The data's 2-D projection, built once per dataset (every panel and cloud shares it)."""
    viz = dpviz.viz
    return shared.memo_figure(("proj", ds.content_hash), lambda: viz.data.project_2d(
        ds.X, feature_names=ds.feature_names), public=simulation.is_public(ds))


@dataclass(frozen=True)
class Staged:
    """The tuple stage to show: ``stage`` is None when there is none; ``error`` is the message
    for the knobs asked for (then ``ds``, ``stage`` and ``cfg`` are the last good ones)."""

    ds: Any
    stage: Any
    cfg: run.RunConfig
    error: str | None = None


def stage_or_last(ds, cfg: run.RunConfig) -> Staged:
    """The cached tuple stage for ``cfg``, or, if it fails, the last good one of this session."""
    try:
        with st.spinner(f"Tuple stage (non-private): clustering {cfg.t} pieces with "
                        f"{cfg.oracle}…"):
            run.check_feasible(ds, cfg)  # declared inputs only (the registry's check)
            stage = run.tuple_stage(ds, cfg)
        st.session_state[LAST_STAGE] = (ds, stage, cfg)
        return Staged(ds, stage, cfg)
    except Exception as exc:  # ValueError: bad knobs; anything else: a library bug, not a crash
        error = shared.error_text(exc)
        last = st.session_state.get(LAST_STAGE)
        if last is None:
            return Staged(ds, None, cfg, error)
        return Staged(*last, error)


@dataclass(frozen=True)
class Shown:
    """The private run to show: ``result`` is None when there is none; ``error`` is the message
    for the knobs asked for (then ``key`` and ``result`` are the last good run's)."""

    key: tuple | None
    result: Any
    error: str | None = None
    cfg: run.RunConfig | None = None  # the run's config (its plan is the one to state)


def private_or_last(ds, stage, cfg: run.RunConfig) -> Shown:
    """The private run for ``cfg``, or, if it fails, the last good run on the same tuple stage
    (a run on other tuples would not match the panels drawn from this stage)."""
    try:
        result = run.private_run(ds, stage, cfg)
    except Exception as exc:  # ValueError: bad knobs; anything else: a library bug, not a crash
        error, last, stage_key = shared.error_text(exc), st.session_state.get(LAST_RESULT), cfg.stage_key(ds)
        if last is None or last[0][:len(stage_key)] != stage_key:  # a private key starts with it
            return Shown(None, None, error)
        return Shown(*last, error, st.session_state.get(LAST_CFG))
    key = cfg.private_key(ds)
    st.session_state[LAST_RESULT] = (key, result)
    st.session_state[LAST_CFG] = cfg
    return Shown(key, result, cfg=cfg)


def live_figure_json(result, ds, ref, proj, *, vector: bool) -> str:
    """Panels (c)-(g), the figure every ρ / δ move changes (a pure function: it may be built
    on the background worker, see :func:`prefetch_next`).

    The page keeps one graph and updates it in place (:mod:`app.components.live_chart`). The
    point clouds are one image per panel (dpviz.viz.raster) unless the user asks for hover on
    every point; fixed margins (which hold the tick labels, issue 43) let plotly.js lay it out in one pass
    (docs/app.md has the numbers). The legend sits in the grid's empty sixth cell, inside the
    fixed margins, with one entry per marker kind (issue 16). Returned as JSON, the form that
    is cached and sent. The run's status is not in the figure: the page states it above the
    tiles (issue 27: in the fixed top margin it ran into the panel titles).
    """
    ref_centers = ref.centers if ref is not None else ds.true_centers
    # The plain figure dict, sent unvalidated (as the main panel is): building and validating a
    # plotly Figure was about half of this function's time (issue 33 item 2).
    spec = dpviz.viz.storyboard.storyboard_spec(
        result, ds.X, panels="cdefg", cols=3, projector=proj, reference_centers=ref_centers,
        max_points=1_000, height_per_row=330, title=" ", legend=True, legend_in_free_cell=True,
        tick_labels=True, margin=dict(l=50, r=10, t=70, b=50), status_subtitle=False,
        points="vector" if vector else "raster")
    return pio.to_json(spec, validate=False)


def live_figure(result, result_key, ds, ref, *, vector: bool) -> str:
    """:func:`live_figure_json`, cached per run (a prefetched one is waited for)."""
    proj = projection(ds)
    return cache.memo("live_figures", ("live", result_key, vector),
                      lambda: live_figure_json(result, ds, ref, proj, vector=vector),
                      public=simulation.is_public(ds))


def prefetch_next(ds, stage, cfg: run.RunConfig, ref, *, figure: bool) -> None:
    """Start the private runs one slider step away (ε first, then δ; each planned on the worker),
    their privacy statements and (if shown) their storyboard figures on the background worker: the
    next move is most
    often one step of one slider. Speculation of earlier moves that has not started is
    withdrawn first. Same seeds, so the same release as computing them on the move; nothing
    computed here is shown unless the user moves there."""
    cache.cancel_queued("run", "statement", "live_figures")
    eps = cfg.eps if cfg.eps else float(state.get("eps"))  # a link's ρ: its ε's neighbours
    steps = [cfg.at_eps(e) for e in controls.eps_neighbours(eps)]
    steps += [replace(cfg.at_eps(eps), delta=delta) for delta in controls.delta_neighbours(cfg.delta)]
    proj, vector = projection(ds), bool(st.session_state.get(VECTOR, False))
    for step in steps:
        get_result = run.prefetch(ds, stage, step)
        if figure and get_result is not None:
            cache.speculate("live_figures", ("live", step.private_key(ds), vector),
                            lambda get=get_result: live_figure_json(get(), ds, ref, proj,
                                                                    vector=vector),
                            public=simulation.is_public(ds))
    # Then the plans of every ε of the slider at this δ (public inputs only; ~0.1 s each the first
    # time, process-wide cache): a jump of several steps then computes only its run and figure.
    cache.speculate("plans", cfg.at_eps(1.0).private_key(ds), lambda: _plan_grid(ds, cfg, eps))
    if simulation.is_public(ds):
        warm_slider(ds, stage, cfg, ref, eps, vector=vector if figure else None)


def warm_slider(ds, stage, cfg: run.RunConfig, ref, eps: float, *, vector: bool | None) -> None:
    """On a public dataset, every other ε of the slider at this δ: its run, statement, tiles and
    (``vector`` not None) live figure, computed once for the whole server on the background worker
    (:func:`cache.warm`, nearest ε first): a class of 100 moving anywhere on the slider then finds
    them done instead of each first visitor of an ε computing it while the others wait (issue 46)."""
    token = ("slider", cfg.at_eps(1.0).private_key(ds), vector)
    # once for the server (a later move, while it is busy, starts it instead): nothing per move
    if not cache.speculating() or not cache.PUBLIC.first_time(token):
        return
    proj = projection(ds)
    for e in sorted(controls.EPS_GRID, key=lambda e: abs(math.log(e / eps))):
        step = cfg.at_eps(e)
        get = run.warm(ds, stage, step)
        if get is None:  # an ε no budget meets (its move says so), or the server got busy
            continue
        key = step.private_key(ds)
        cache.warm("diagnostics", key, lambda get=get: run.diagnostics(ds, stage, get(), ref))
        if vector is not None:
            cache.warm("live_figures", ("live", key, vector),
                       lambda get=get: live_figure_json(get(), ds, ref, proj, vector=vector))


def _plan_grid(ds, cfg: run.RunConfig, eps: float) -> int:
    """Plan every ε of the slider (nearest to ``eps`` first) into the plans' cache; returns how
    many have a plan (an ε no budget meets is skipped: its move shows the registry's refusal)."""
    planned = 0
    for e in sorted(controls.EPS_GRID, key=lambda e: abs(math.log(e / eps))):
        try:
            run.fc_plan(ds, cfg.at_eps(e))
            planned += 1
        except ValueError:
            pass
    return planned


def remember_draw(stage_key: tuple, result_key: tuple, result) -> list:
    """Record the shown run's centers for this tuple stage and return the earlier ones (up to
    :data:`EARLIER_DRAWS`, oldest first, without this run's)."""
    stage, draws = st.session_state.get(DRAWS, (None, None))
    if stage != stage_key or draws is None:
        draws = {}
    earlier = [c for k, c in draws.items() if k != result_key]
    draws.pop(result_key, None)
    if result.centers is not None:
        draws[result_key] = result.centers
    while len(draws) > EARLIER_DRAWS + 1:
        draws.pop(next(iter(draws)))
    st.session_state[DRAWS] = (stage_key, draws)
    return earlier[-EARLIER_DRAWS:]


def magnification(ds, k: int, result, proj) -> float | None:
    """The main panel's noise-cloud factor M for this dataset and k, fixed by the first run that
    released Gaussian-noised centers (:func:`dpviz.viz.main_panel.cloud_magnification`)."""
    mp = dpviz.viz.main_panel
    locked = st.session_state.setdefault(MAGNIFICATION, {})
    key = (ds.content_hash, int(k))
    if key not in locked:
        noise = mp.released_noise(result)
        if noise is None:
            return None
        window = mp.data_window(ds.X, proj)
        locked[key] = mp.cloud_magnification(noise[1], window.x1 - window.x0)
    return locked[key]


def main_panel(result, result_key, ds, ref, cfg: run.RunConfig) -> str:
    """The main panel's figure (JSON) for the run on screen: data, private centers, the noise
    cloud ×M and the earlier draws of this tuple stage."""
    mp = dpviz.viz.main_panel
    proj = projection(ds)
    earlier = remember_draw(cfg.stage_key(ds), result_key, result)
    ref_centers = ref.centers if ref is not None else ds.true_centers
    M = magnification(ds, cfg.k, result, proj)

    def build() -> tuple[dict, str]:
        spec = mp.main_panel_spec(result, ds.X, projector=proj, reference_centers=ref_centers,
                                  magnification=M)
        return spec, pio.to_json(spec, validate=False)

    # The run's panel without the earlier draws (the data and cloud image, its centers) is the
    # same for every session seeing this run at this M: built once (for the server on public
    # data, issue 46); this session's earlier draws are added to it.
    spec, text = cache.memo("main_panels", ("main", result_key, M), build,
                            public=simulation.is_public(ds))
    return text if not earlier else pio.to_json(mp.with_earlier(spec, earlier, proj), validate=False)
