"""Explore: one private FriendlyCore clustering run, drawn as the paper's Figure 3 storyboard.

Expensive knobs (dataset, n, k, t, oracle, Λ, r_min, preset, seed) sit in the sidebar form;
ρ and δ are live: moving them reruns only the fragment below, i.e. only the private stage on
the cached tuples.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

import dpviz.clustering.presets
import dpviz.viz
import dpviz.viz.data
import dpviz.viz.filters
import dpviz.viz.noise
import dpviz.viz.privacy
import dpviz.viz.raster
import dpviz.viz.storyboard
from app.components import (
    algorithm_view,
    cache,
    controls,
    data_source,
    explore_form,
    live_chart,
    modes,
    run,
    state,
)

st.title("Explore: one private run, step by step")

_LAST = "_explore_last"  # (dataset, stage, cfg) of the last good tuple stage
_LAST_RESULT = "_explore_last_result"  # (private key, result) of the last good private run
_VECTOR = "storyboard_vector"  # the toggle: WebGL points with hover instead of images
_VIEW = "explore_view"  # the view picker: one view of the run at a time
VIEWS = ("Storyboard", "Privacy", "Re-draw noise", "Filters & radii", "Downloads")

PANEL_TEXT = {
    "a": "The data (input; never released).",
    "b": "The oracle's centers of every piece: t k-tuples (non-private, internal).",
    "c": "FriendlyCore keeps tuples whose noisy friend score clears the threshold.",
    "d": "The reference tuple orders every core tuple; points split into k clouds.",
    "e": "Private averages of each cloud (released) vs the non-private means.",
    "f": "The private centers on the data.",
    "g": "After one private Lloyd step on all rows (the final release).",
}


#: Step-through mode: one sentence of narration per step (Tsfadia et al. 2022, §5.2, Fig. 3).
NARRATION = {
    "a": "Start with the rows. They are the input and are never released; FriendlyCore first "
         "splits them at random into t pieces.",
    "b": "Each piece is clustered without privacy, giving k centers per piece — one k-tuple. Where "
         "the pieces agree, their tuples pile up on the same spots.",
    "c": "FriendlyCore counts, with noise, how many other tuples agree with each one and keeps "
         "those above a threshold: the core. Smaller ρ means more noise on the counts, so at some "
         "point no tuple clears the bar.",
    "d": "One core tuple is the reference: every core tuple's centers are matched to its centers, "
         "so the k coordinates line up into k clouds.",
    "e": "Each cloud is averaged and Gaussian noise scaled to the budget is added: the red × are "
         "private, the diamonds the non-private averages they estimate.",
    "f": "These private centers sit on the full data.",
    "g": "Finally one private Lloyd step moves each center to a noisy mean of the rows nearest it: "
         "the stars are the released answer.",
}
_STEP = "_story_step"


def _step_through(result, ds, proj, ref_centers) -> None:
    """Prev/Next through panels (a)-(g), one at a time with a sentence of narration; the list
    of steps shows where you are."""
    keys = "abcdefg"
    i = int(st.session_state.get(_STEP, 0)) % len(keys)

    def move(delta: int) -> None:
        st.session_state[_STEP] = (int(st.session_state.get(_STEP, 0)) + delta) % len(keys)

    c1, c2, c3 = st.columns([1, 1, 6])
    c1.button("◀ Prev", key="step_prev", on_click=move, args=(-1,), disabled=i == 0,
              width="stretch")
    c2.button("Next ▶", key="step_next", on_click=move, args=(1,), disabled=i == len(keys) - 1,
              width="stretch")
    key = keys[i]
    with c3, st.container(key="step_narration"):
        st.markdown(f"**Step {i + 1} of {len(keys)} — ({key})** {NARRATION[key]}")
    left, right = st.columns([3, 1])
    fn = dpviz.viz.storyboard.PANEL_FUNCTIONS[key]
    fig = fn(result, ds.X, projector=proj, reference_centers=ref_centers, max_points=2_000)
    fig.update_layout(height=460, margin=dict(l=55, r=10, t=60, b=45),
                      legend=dict(orientation="h", y=-0.15))
    left.plotly_chart(fig, key="storyboard_step", config={"displaylogo": False})
    right.markdown("\n".join(f"- **▶ ({k}) {PANEL_TEXT[k]}**" if j == i else f"- ({k}) {PANEL_TEXT[k]}"
                              for j, k in enumerate(keys)))


def _error(msg: str) -> None:
    with st.container(key="explore_error"):
        st.error(msg)


def _panel(key: str, fn, result, ds, proj, ref_centers, stage_key) -> None:
    """Panel (a) or (b): they do not depend on ρ or δ, so each is built once per tuple stage."""
    def build() -> str:
        fig = fn(result, ds.X, projector=proj, reference_centers=ref_centers, max_points=2_000)
        fig.update_layout(margin=dict(l=55, r=10, t=40, b=45), showlegend=False, height=330,
                          title=dict(font=dict(size=13)))
        return fig.to_json()

    live_chart.live_chart(run.memo_figure(("panel", key, stage_key), build),
                          key=f"storyboard_{key}")
    st.caption(f"({key}) {PANEL_TEXT[key]}")


def _projection(ds):
    viz = dpviz.viz
    return run.memo_figure(("proj", ds.content_hash), lambda: viz.data.project_2d(
        ds.X, feature_names=ds.feature_names))


def _live_figure_json(result, ds, ref, proj, *, vector: bool) -> str:
    """Panels (c)-(g), the figure every ρ / δ move changes (a pure function: it may be built
    on the background worker, see :func:`_prefetch_next`).

    The page keeps one graph and updates it in place (:mod:`app.components.live_chart`). The
    point clouds are one image per panel (dpviz.viz.raster) unless the user asks for hover on
    every point; fixed margins and no tick labels let plotly.js lay it out in one pass
    (docs/app.md has the numbers). Returned as JSON, the form that is cached and sent.
    """
    ref_centers = ref.centers if ref is not None else ds.true_centers
    fig = dpviz.viz.storyboard.storyboard_figure(
        result, ds.X, panels="cdefg", cols=3, projector=proj, reference_centers=ref_centers,
        max_points=1_000, height_per_row=330, title=" ", legend=False, tick_labels=False,
        margin=dict(l=10, r=10, t=70, b=10), points="vector" if vector else "raster")
    return fig.to_json()


def _storyboard(result, result_key, ds, ref, stage_key) -> None:
    storyboard = dpviz.viz.storyboard
    proj = _projection(ds)
    ref_centers = ref.centers if ref is not None else ds.true_centers
    with st.container(key="storyboard"):
        if proj.method == "pca":
            st.caption(proj.note())
        if st.toggle("Step through (one step at a time, with narration)", key="step_mode"):
            _step_through(result, ds, proj, ref_centers)
            return
        # (a) and (b) do not depend on ρ or δ: two charts built once per tuple stage.
        for col, key in zip(st.columns(2), "ab", strict=True):
            with col:
                _panel(key, storyboard.PANEL_FUNCTIONS[key], result, ds, proj, ref_centers,
                       stage_key)
        vector = st.toggle("Hover on every point (WebGL: each ρ move redraws about 1.5× "
                           "slower)", key=_VECTOR, value=False)
        spec = cache.memo("live_figures", ("live", result_key, vector),
                          lambda: _live_figure_json(result, ds, ref, proj, vector=vector))
        live_chart.live_chart(spec, key="storyboard_live")
        st.markdown("\n".join(f"- ({key}) {PANEL_TEXT[key]}" for key in "cdefg"))


def _prefetch_next(ds, stage, cfg: run.RunConfig, ref, *, figure: bool) -> None:
    """Start the private runs one slider step away (ρ first, then δ), their privacy statements
    and (if shown) their storyboard figures on the background worker: the next move is most
    often one step of one slider. Speculation of earlier moves that has not started is
    withdrawn first. Same seeds, so the same release as computing them on the move; nothing
    computed here is shown unless the user moves there."""
    cache.cancel_queued("run", "statement", "live_figures")
    steps = [replace(cfg, rho=rho) for rho in controls.rho_neighbours(cfg.rho)]
    steps += [replace(cfg, delta=delta) for delta in controls.delta_neighbours(cfg.delta)]
    proj, vector = _projection(ds), bool(st.session_state.get(_VECTOR, False))
    for step in steps:
        get_result = run.prefetch(ds, stage, step)
        if figure and get_result is not None:
            cache.speculate("live_figures", ("live", step.private_key(ds), vector),
                            lambda get=get_result: _live_figure_json(get(), ds, ref, proj,
                                                                     vector=vector))


def _view_picker() -> str:
    """One view at a time, and only its elements are built and sent.

    A button row rather than ``st.tabs``: the browser re-renders every element of the fragment
    on each ρ move, and inside tabs each costs about twice as much (a fragment of 40 captions:
    ~55 ms of page script per rerun, ~115 ms inside ``st.tabs``, headless chromium, 2 cores).
    """
    return st.segmented_control("View", VIEWS, key=_VIEW, default=VIEWS[0], required=True,
                                label_visibility="collapsed", width="stretch")


def _tiles(diag: run.Diagnostics, result) -> None:
    tag = "non-private diagnostic"
    with st.container(key="metrics_tiles"):
        c1, c2, c3, c4 = st.columns(4)
        kept = "—" if diag.tuples_kept is None else f"{diag.tuples_kept} / {diag.tuples_total}"
        c1.metric("Tuples kept (core)", kept, help="How many of the t k-tuples passed the first "
                  "FriendlyCore filter. Computed from the internal keep mask: " + tag + ".")
        c1.caption(tag)
        loss, note = run.loss_tile(diag.normalized_loss)
        c2.metric("Normalized k-means loss", loss, help="1 − X/Y with X the cost of non-private "
                  "k-means++ on all rows and Y the cost of the private centers (0 = as good as "
                  "non-private; Tsfadia et al. Fig. 6). Exact function of the rows: " + tag + ". "
                  "Shown as 0 when the private centers happen to cost less than the reference.")
        c2.caption(tag + note)
        err = "—" if diag.center_error is None else f"{diag.center_error:.4f}"
        c3.metric("Center error", err, help="Mean distance from each true (generating) center "
                  "to its matched private center; only for data with known centers. " + tag + ".")
        c3.caption(tag + ("" if diag.center_error is not None else " (no true centers)"))
        k = 0 if result.centers is None else len(result.centers)
        c4.metric("Centers released", f"{k}", help="The number of private centers in the output.")
        c4.caption("private output (simulated: not a release)")


def _privacy_view(result, statement, cfg) -> None:
    viz = dpviz.viz
    summary = viz.privacy.privacy_summary(statement)
    with st.container(key="privacy_statement"):
        st.markdown(f"**{summary.row_level}**")
        st.markdown(summary.odds)
        st.markdown(summary.paper + " — the paper's unit is one k-tuple of the derived database.")
        with st.expander("How the row-level statement is derived"):
            for line in summary.details:
                st.markdown(f"- {line}")
    left = right = st.container()  # stacked: side by side, the margins table was clipped (issue 16)
    with left:
        live_chart.live_chart(viz.privacy.ledger_figure(result.ledger), key="ledger_chart")
    with right, st.container(key="feasibility"):
        st.markdown("**Feasibility margins** (public: computed from n̂-free declared "
                    "quantities, never from the data)")
        feas = result.find("feasibility")
        if feas is None:
            st.caption("No feasibility step in this run.")
        else:
            rows = []
            presets = dpviz.clustering.presets
            for name, m in dict(feas.data.get("margins", {})).items():
                rows.append({"FriendlyCore call": name, "expected margin (sd)": round(m, 2),
                             "keep chance": f"{presets.keep_probability(m):.0%}"})
            st.dataframe(rows, hide_index=True)
            st.caption(f"Preset: {feas.data.get('preset', cfg.preset)}. A margin below ~1 sd "
                       "means the filter will likely drop even perfectly friendly tuples: "
                       "raise ρ or t.")
    # Widths that fit a projector's 1280 px: long step paths and notes end in "…" (the full text
    # on hover) instead of pushing the numbers off the table's right edge (issue 16).
    widths = dict(mechanism=90, rho=70, delta=70, sigma=70, sensitivity=80, unit=50, step=240, note=110)
    st.dataframe(viz.privacy.ledger_table(result.ledger), hide_index=True, column_config={
        c: st.column_config.Column(width=w) for c, w in widths.items()})


def _filters_view(result) -> None:
    viz = dpviz.viz
    names = {s.name for s in result.trace}
    c1, c2 = st.columns(2)
    with c1:
        if "match_core" in names:
            live_chart.live_chart(viz.filters.filter_scores_figure(result, step="match_core"),
                                  key="filter_match_chart")
    with c2:
        if "dist_core" in names:
            live_chart.live_chart(viz.filters.filter_scores_figure(result, step="dist_core"),
                                  key="filter_dist_chart")
    if "diameters" in names:
        live_chart.live_chart(viz.filters.find_diam_figure(result), key="find_diam_chart")
    st.caption("Scores and counts are internal, non-private diagnostics; the keep decisions and "
               "the radii are what the private algorithm acts on.")


def _cloud_view(ds, stage, cfg, result, ref) -> None:
    viz = dpviz.viz
    c1, c2 = st.columns([1, 3])
    n_draws = c1.number_input("N draws", min_value=2, max_value=100, value=20, step=1,
                              key="redraw_n")
    zoom = c1.toggle("Zoom into each cluster", value=True, key="redraw_zoom",
                     help="One panel per cluster: at large ρ the noise is far smaller than the "
                          "clusters and would be invisible on the full plot.")
    fixed = c1.toggle("Same scale at every ρ", value=True, key="redraw_fixed",
                      help="Every panel keeps the scale of the first cloud drawn on this data "
                           "(at this k), so moving ρ shows the noise grow or shrink; off, each "
                           "panel fits its own cloud and the clouds look alike at every ρ.")
    if c1.button("Re-draw noise ×N", key="redraw_button", icon=":material/casino:"):
        st.session_state["_cloud_for"] = (cfg.private_key(ds), int(n_draws))
    want = (cfg.private_key(ds), int(n_draws))
    if st.session_state.get("_cloud_for") != want:
        c2.info("Press **Re-draw noise ×N** to run the private stage N more times on the same "
                "tuples with fresh noise: the cloud shows what this run could have been. A "
                "non-private diagnostic: N draws together cost N·ρ.")
        return
    with st.spinner(f"Drawing {n_draws} private outcomes…"):
        draws = run.redraws(ds, stage, cfg, int(n_draws))
    ref_centers = ref.centers if ref is not None and ref.centers is not None else ds.true_centers
    if ref_centers is None:
        c2.warning("No non-private reference centers to anchor the cloud.")
        return
    scale = None
    if zoom and fixed:  # the first cloud's scale, kept for this data and k until switched off
        locked = st.session_state.setdefault("_cloud_scale", {})
        key = (ds.content_hash, cfg.k)
        if key not in locked:
            locked[key] = viz.noise.zoom_scale(draws, ref_centers, _projection(ds))
        scale = locked[key]
    elif not fixed:
        st.session_state.pop("_cloud_scale", None)
    fig = viz.noise.noise_cloud_figure(ds, draws, ref_centers, current=result, max_points=2_000,
                                       zoom=zoom, scale=scale, projector=_projection(ds))
    c2.plotly_chart(fig, key="redraw_chart", config={"displaylogo": False})
    ok = sum(r.centers is not None for r in draws)
    c2.caption(f"{ok} of {len(draws)} draws released centers. **Non-private diagnostic:** the "
               f"{len(draws)} draws together are one composed release costing {len(draws)}·ρ = "
               f"{len(draws) * cfg.rho:.3g} (and {len(draws)}·δ) by composition, and they are "
               "seeded (replayable); the black reference (non-private k-means++) is a diagnostic.")


def _downloads_view(ds, cfg, result, statement, ref) -> None:
    viz = dpviz.viz
    c1, c2, c3 = st.columns(3)
    c1.download_button("Simulated centers (CSV, do not publish)",
                       run.centers_csv(result, ds.feature_names),
                       file_name="dpviz_simulated_centers.csv", mime="text/csv", key="dl_centers",
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Run configuration (JSON)",
                       run.config_json(ds, cfg, state.params(), statement, state.query_dict()),
                       file_name="dpviz_run_config.json", mime="application/json",
                       key="dl_config", on_click="ignore", icon=":material/download:")
    ref_centers = ref.centers if ref is not None else ds.true_centers

    def figure_html() -> str:
        fig = viz.storyboard.storyboard_figure(result, ds.X, reference_centers=ref_centers)
        return fig.to_html(include_plotlyjs="cdn", full_html=True)

    c3.download_button("Storyboard figure (HTML)", figure_html, file_name="dpviz_storyboard.html",
                       mime="text/html", key="dl_figure", on_click="ignore",
                       icon=":material/download:")
    st.caption("These are a **simulation**: the configuration lists the seed streams, which "
               "replay the noise exactly, so the centers must not be published. Make a release "
               "on the **Release** page. Uploaded rows are never included, but for an upload the "
               "configuration carries the file name, column names, n, Λ and a sha256 fingerprint "
               "of the rows, none of them private.")


def fallback_toggle(key: str = "fallback_toggle") -> bool:
    """FriendlyCore's fallback on/off (``fc_private_stage(fallback=...)``): off, a run whose core
    does not form releases no centers instead of the grid summary's."""
    state.seed_widget("fb", key)
    st.toggle("Backup method", key=key,
              on_change=state.on_change("fb", key, bool),
              help="On: if FriendlyCore's pieces do not agree enough for a core to form, a private "
                   "grid summary of the rows (a quadtree coreset + weighted k-means) answers "
                   "instead, from the budget share reserved for it. Off: such a run releases no "
                   "centers, so you see FriendlyCore alone. The total ρ is the same either way; "
                   "the readout shows the row-level ε of each.")
    return bool(state.get("fb"))


@st.fragment
def live(ds, stage, cfg: run.RunConfig) -> None:
    """ρ and δ controls and everything that depends on them (reruns alone on a ρ/δ move)."""
    lap = run.Laps("explore.live")
    c1, c2, c3 = st.columns([5, 3, 4], gap="medium")
    with c2:  # δ and the fallback first: the slider's mark depends on them
        delta = controls.delta_select()
        fallback = fallback_toggle()
    with c1:
        mark = run.feasible_rho(replace(cfg, delta=delta, fallback=fallback), controls.RHO_GRID)
        rho = controls.rho_slider(mark=mark, t=cfg.t)
    cfg = replace(cfg, rho=rho, delta=delta, fallback=fallback)
    result_key, stage_key, failed = cfg.private_key(ds), cfg.stage_key(ds), False
    try:
        result = run.private_run(ds, stage, cfg)
        st.session_state[_LAST_RESULT] = (result_key, result)
    except Exception as exc:  # ValueError: bad knobs; anything else: a library bug, not a crash
        _error(run.error_text(exc))
        failed, last = True, st.session_state.get(_LAST_RESULT)
        if last is None or last[0][:len(stage_key)] != stage_key:  # a private key starts with it
            return
        result_key, result = last
        st.caption("Showing the previous result.")
    lap("private")
    statement = run.statement(result_key, result, delta)
    lap("statement")
    with c3:
        controls.epsilon_readout(rho, delta, statement, n_declared=int(ds.n))
        controls.target_epsilon(lambda eps, d: run.calibrate_fc(ds, cfg, eps, d))
    lap("readout")

    storyboard = dpviz.viz.storyboard
    status = storyboard.run_status(result)
    with st.container(key="run_status"):
        # In plain words: which method answered and, if not FriendlyCore, why (issue 16).
        text = storyboard.plain_status(result)
        if result.centers is None:
            st.error(text)
        elif status.fallback_used or not status.complete:
            st.warning(text)
        else:
            st.success(text)
    with st.spinner("Computing the non-private reference (k-means++ on all rows, once)…"):
        ref = run.reference(ds, cfg.k) if ds.n >= cfg.k else None
    lap("status+reference")
    _tiles(run.diagnostics(ds, stage, result, ref), result)
    lap("tiles")

    view = _view_picker()
    if view == VIEWS[0]:
        _storyboard(result, result_key, ds, ref, stage_key)
    elif view == VIEWS[1]:
        _privacy_view(result, statement, cfg)
    elif view == VIEWS[2]:
        _cloud_view(ds, stage, cfg, result, ref)
    elif view == VIEWS[3]:
        _filters_view(result)
    else:
        _downloads_view(ds, cfg, result, statement, ref)
    lap("view")
    state.sync_url()
    if not failed:
        _prefetch_next(ds, stage, cfg, ref, figure=view == VIEWS[0])
    lap.done()


def main() -> None:
    run.Laps("explore.main (full rerun)").done()
    explore_form.sidebar_form()
    choice = data_source.current()
    if choice.error:
        _error(choice.error)
    if choice.notice:
        st.info(choice.notice)
    ds = choice.dataset
    if ds is None:
        st.info("No dataset yet: choose one on the **Data** page.")
        return
    notes = explore_form.sync_run_defaults(ds)
    if notes:
        with st.container(key="auto_changes"):
            for note in notes:
                st.info(note, icon=":material/published_with_changes:")
    radius = data_source.radius_for(ds)
    if radius is None:
        _error("This dataset has no public radius Λ yet. Declare one on the Data page (bounds "
               "step) or in the sidebar: DP needs a bound on every row's norm that does not come "
               "from the data.")
        return
    spec = algorithm_view.algorithm_picker()
    st.caption(spec.description + " Every number says whether it is a **private** output or a "
               "**non-private diagnostic** (for you only).")
    if spec.name != "friendlycore":
        st.markdown(data_source.describe(ds) + f" · Λ used = {radius:g}")
        algorithm_view.render(ds, spec, radius)
        return
    modes.simulation_badge("simulation_badge_explore")
    p = state.params()
    cfg = run.RunConfig.from_params(p, radius)
    try:
        with st.spinner(f"Tuple stage (non-private): clustering {cfg.t} pieces with "
                        f"{cfg.oracle}…"):
            stage = run.tuple_stage(ds, cfg)
        st.session_state[_LAST] = (ds, stage, cfg)
    except Exception as exc:  # ValueError: bad knobs; anything else: a library bug, not a crash
        _error(run.error_text(exc))
        last = st.session_state.get(_LAST)
        if last is None:
            return
        ds, stage, cfg = last
        st.caption(f"Showing the previous tuple stage (k = {cfg.k}, t = {cfg.t}).")
    st.markdown(data_source.describe(ds) + f" · Λ used = {cfg.radius:g}")
    if (k_note := data_source.k_note(ds, cfg.k)) is not None:  # issue 16: k = 8 on iris
        st.info(k_note, icon=":material/info:")
    live(ds, stage, cfg)


main()
