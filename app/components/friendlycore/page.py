"""FriendlyCore's registered live page in Explore (``app/components/live_pages.py``): the run of
the paper's Figure 3, drawn as its storyboard, with the live main panel and chart.

Expensive knobs (dataset, n, k, t, oracle, Λ, r_min, preset, seed) sit in the sidebar form; the
row-level ε and δ are live: moving them reruns only the fragment below, i.e. only the private
stage on the cached tuples, at the budget the registry's plan gives (``run.fc_plan``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import streamlit as st

import dpviz.clustering.friendlycore.budget
import dpviz.registry
import dpviz.viz
import dpviz.viz.answered
import dpviz.viz.data
import dpviz.viz.filters
import dpviz.viz.noise
import dpviz.viz.privacy
import dpviz.viz.raster
import dpviz.viz.storyboard
import dpviz.viz.storyboards
from app.components import (
    algorithm_view,
    controls,
    data_source,
    downloads,
    keys,
    ledger_view,
    live_chart,
    modes,
    rerun_timing,
    safe,
    simulation,
    state,
)
from app.components import run as shared
from app.components.friendlycore import knobs, lesson, run
from app.components.friendlycore import live as explore_live
from app.components.keys import Key
from dpviz.privacy.release import jsonable

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
FALLBACK_TOGGLE: Key[bool] = Key("fallback_toggle", bool, "FriendlyCore's backup method on/off")
_VIEW: Key[str] = Key("explore_view", str, "the view picker (one view of the run)")
DL_CONFIG: Key[bool] = Key("dl_config", bool, "download_button: the run's configuration")
DL_FIGURE: Key[bool] = Key("dl_figure", bool, "download_button: the storyboard figure as HTML")
EXPLORE_BADGE: Key[object] = Key("simulation_badge_explore", object, "the page's simulation badge")
STORYBOARD: Key[object] = Key("storyboard", object, "container: FriendlyCore's storyboard view")
STORYBOARD_PANEL: Key[object] = Key(
    "storyboard_", object, "prefix: chart of panel (a) or (b), storyboard_<panel>")
STORYBOARD_LIVE: Key[object] = Key("storyboard_live", object, "chart: panels (c)-(g) in one live figure")
ANSWERED_BY: Key[object] = Key("answered_by", object, "container: which method answered (core or backup)")
FEASIBILITY: Key[object] = Key("feasibility", object, "container: whether the settings can succeed")
MORE_ROWS: Key[bool] = Key("more_rows", bool, "button: open the lesson with enough rows for a core")
RHO_LINK_NOTE: Key[object] = Key(
    "rho_link_note", object, "container: an old ρ link's budget and its row-level (ε, δ)")
MAIN_PANEL: Key[object] = Key("main_panel", object, "container: the main panel beside the controls")
MAIN_PANEL_CHART: Key[object] = Key("main_panel_chart", object, "chart: the main panel's live figure")
LESSON_ROWS: Key[int] = Key("lesson_rows", int, "segmented_control: the default lesson's rows (n)")

#: FriendlyCore's own views; its registered explorations (dpviz.viz.storyboards: "Filters & radii"
#: in dpviz/viz/filters.py, "Re-draw noise" in dpviz/viz/noise.py) come before Downloads, rendered
#: as every family's are.
VIEWS = ("Storyboard", "Privacy", "Downloads")

#: The panels' captions (:mod:`dpviz.viz.storyboard.labels`).
PANEL_TEXT = dpviz.viz.storyboard.PANEL_TEXT


def _error(msg: str) -> None:
    with st.container(key=keys.EXPLORE_ERROR):
        st.error(msg)


def _panel(key: str, fn, result, ds, proj, ref_centers, stage_key) -> None:
    """Panel (a) or (b): they do not depend on ρ or δ, so each is built once per tuple stage."""
    def build() -> str:
        # The points as an image (dpviz.viz.raster): two WebGL graphs to build on every switch
        # to this view cost the browser ~0.5 s (docs/app.md, issue 16's speed targets).
        fig = fn(result, ds.X, projector=proj, reference_centers=ref_centers, max_points=2_000,
                 points="raster")
        fig.update_layout(margin=dict(l=55, r=10, t=40, b=45), showlegend=False, height=330,
                          title=dict(font=dict(size=13)))
        return fig.to_json()

    live_chart.live_chart(shared.memo_figure(("panel", key, stage_key), build,
                                             public=simulation.is_public(ds)),
                          key=f"{STORYBOARD_PANEL}{key}")
    st.caption(f"({key}) {PANEL_TEXT[key]}")


def _storyboard(result, result_key, ds, ref, stage_key) -> None:
    storyboard = dpviz.viz.storyboard
    proj = explore_live.projection(ds)
    ref_centers = ref.centers if ref is not None else ds.true_centers
    with st.container(key=STORYBOARD):
        if proj.method == "pca":
            st.caption(proj.note())
        if st.toggle("Step through (one step at a time, with narration)", key=keys.STEP_MODE):
            algorithm_view.step_through(dpviz.viz.storyboards.story_steps("friendlycore"), result, ds.X,
                                        reference_centers=ref_centers, projector=proj)
            return
        # (a) and (b) do not depend on ρ or δ: two charts built once per tuple stage.
        for col, key in zip(st.columns(2), "ab", strict=True):
            with col:
                _panel(key, storyboard.PANEL_FUNCTIONS[key], result, ds, proj, ref_centers,
                       stage_key)
        vector = st.toggle("Hover on every point (WebGL: each ρ move redraws about 1.5× "
                           "slower)", key=keys.STORYBOARD_VECTOR, value=False)
        live_chart.live_chart(explore_live.live_figure(result, result_key, ds, ref, vector=vector),
                              key=STORYBOARD_LIVE)
        st.markdown("\n".join(f"- ({key}) {PANEL_TEXT[key]}" for key in "cdefg"))


def _views() -> tuple[str, ...]:
    extra = tuple(v.title for v in dpviz.viz.storyboards.explorations("friendlycore"))
    return (*VIEWS[:-1], *extra, VIEWS[-1])


def _view_picker() -> str:
    """One view at a time, and only its elements are built and sent.

    A button row rather than ``st.tabs``: the browser re-renders every element of the fragment
    on each ρ move, and inside tabs each costs about twice as much (a fragment of 40 captions:
    ~55 ms of page script per rerun, ~115 ms inside ``st.tabs``, headless chromium, 2 cores).
    """
    return st.segmented_control("View", _views(), key=_VIEW, default=VIEWS[0], required=True,
                                label_visibility="collapsed", width="stretch")


def _tiles(diag: run.Diagnostics, result) -> None:
    tag = "non-private diagnostic"
    with st.container(key=keys.METRICS_TILES):
        c1, c2, c3, c4 = st.columns(4)
        kept = "—" if diag.tuples_kept is None else f"{diag.tuples_kept} / {diag.tuples_total}"
        c1.metric("Tuples kept (core)", kept, help="How many of the t k-tuples passed the first "
                  "FriendlyCore filter. Computed from the internal keep mask: " + tag + ".")
        c1.caption(tag)
        loss, note = shared.loss_tile(diag.normalized_loss)
        c2.metric("Normalized k-means loss", loss, help="1 − X/Y with X the cost of non-private "
                  "k-means++ on all rows and Y the cost of the private centers (0 = as good as "
                  "non-private; Tsfadia et al. Fig. 6). Exact function of the rows: " + tag + ". "
                  "Shown as 0 when the private centers happen to cost less than the reference.")
        c2.caption(tag + note + (f" · {diag.reference_note}" if diag.reference_note else ""))
        err = "—" if diag.center_error is None else f"{diag.center_error:.4f}"
        c3.metric("Center error", err, help="Mean distance from each true (generating) center "
                  "to its matched private center; only for data with known centers. " + tag + ".")
        c3.caption(tag + ("" if diag.center_error is not None else " (no true centers)"))
        k = 0 if result.centers is None else len(result.centers)
        answer = dpviz.viz.answered.answered_by(result, "friendlycore")
        c4.metric("Centers released", f"{k}", help="The number of private centers in the output, "
                  "and who released them: FriendlyCore's own core or its backup.")
        with c4.container(key=ANSWERED_BY):
            st.caption(f"by {answer.who} · private output (simulated: not a release)")


def _privacy_view(result, statement, cfg) -> None:
    viz = dpviz.viz
    summary = viz.privacy.privacy_summary(statement)
    with st.container(key=keys.PRIVACY_STATEMENT):
        st.markdown(f"**{summary.row_level}**")
        st.markdown(summary.odds)
        st.markdown(summary.paper + " — the paper's unit is one k-tuple of the derived database.")
        with st.expander("How the row-level statement is derived"):
            for line in summary.details:
                st.markdown(f"- {line}")
    left = right = st.container()  # stacked: side by side, the margins table was clipped (issue 16)
    with left:
        # Four rings: the 40-odd CheckDiam slivers of the full depth were unreadable and cost
        # ~65 ms of the switch to this view (issue 16); a click on a ring opens its inner
        # spends, and the table below lists every one.
        live_chart.live_chart(viz.privacy.ledger_figure(result.ledger, maxdepth=4),
                              key=keys.LEDGER_CHART)
        st.caption("Click a ring to open the spends inside it (the centre goes back).")
    with right, st.container(key=FEASIBILITY):
        st.markdown("**Feasibility margins** (public: computed from n̂-free declared "
                    "quantities, never from the data)")
        feas = result.find("feasibility")
        if feas is None:
            st.caption("No feasibility step in this run.")
        else:
            rows = []
            presets = dpviz.clustering.friendlycore.budget
            for name, m in dict(feas.data.get("margins", {})).items():
                rows.append({"FriendlyCore call": name, "expected margin (sd)": round(m, 2),
                             "keep chance": f"{presets.keep_probability(m):.0%}"})
            st.markdown(safe.md_table(rows))
            st.caption(f"Preset: {feas.data.get('preset', cfg.preset)}. A margin below ~1 sd "
                       "means the filter will likely drop even perfectly friendly tuples: "
                       "raise ρ or t.")
    # Static markdown tables, not st.dataframe: mounting the two grids took ~0.4 s of the
    # browser's time on every switch to this view, over the 0.5 s target (issue 16).
    ledger_view.ledger_table_view(result.ledger)


def config_json(ds, cfg: run.RunConfig, params: Mapping[str, Any], statement=None,
                url_query: Mapping[str, str] | None = None, result=None) -> str:
    """The run configuration (enough to reproduce it with the library) as JSON; with ``result``,
    who answered (the algorithm or its backup) and the run's budget plan (``Result.plan``)."""
    dataset: dict[str, Any] = {"name": ds.name, "source": ds.source, "d": ds.d,
                               "recipe": jsonable(downloads.public_recipe(ds))}
    if ds.source != "upload":  # a recipe's n is public; an upload's row count is not
        dataset = {"name": ds.name, "source": ds.source, "n": ds.n, **dataset}
    out: dict[str, Any] = {
        "kind": "simulation — not a release: the seed streams below replay the noise exactly, "
                "so results of this configuration must not be published",
        "dataset": dataset,
        "run": {**cfg.__dict__, "seed_streams": "SeedSequence(seed).spawn(3): [tuple stage, "
                                                "private stage, noise redraws]"},
        "calls": [
            "stage = dpviz.clustering.friendlycore.pipeline.fc_tuple_stage(X, k, n_tuples=t, oracle=oracle, "
            "radius=radius, rng=default_rng(SeedSequence(seed).spawn(3)[0]))",
            "result = dpviz.clustering.friendlycore.pipeline.fc_private_stage(X, stage, rho=rho, "
            "delta=delta, radius=radius, r_min=r_min, preset=preset, "
            "rng=default_rng(SeedSequence(seed).spawn(3)[1]))",
        ],
        "app_parameters": jsonable(dict(params)),
    }
    if url_query is not None:
        out["url_query"] = dict(url_query)
    if statement is not None:
        out["privacy"] = {"paper": str(statement.paper), "row_level_eps": statement.row.eps,
                          "row_level_delta": statement.row.delta,
                          "delta_prime": statement.delta_prime, "lines": list(statement.lines)}
    if result is not None:
        out["answered_by"] = dpviz.registry.answered_by(result).who
        if getattr(result, "plan", None) is not None:
            out["plan"] = result.plan.as_dict()
    if ds.source == "upload":
        out["note"] = ("Uploaded data is not included, nor its row count or any fingerprint of it: "
                       "only the file name, the chosen columns and what you declared.")
    return json.dumps(out, indent=2, default=str)


def _downloads_view(ds, cfg, result, statement, ref) -> None:
    viz = dpviz.viz
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("Simulated centers (CSV, do not publish)",
                       downloads.centers_csv(result, ds.feature_names),
                       file_name="dpviz_simulated_centers.csv", mime="text/csv", key=keys.DL_CENTERS,
                       on_click="ignore", icon=":material/download:")
    c4.download_button("Privacy ledger (CSV)", lambda: downloads.ledger_csv(result),
                       file_name="dpviz_ledger.csv", mime="text/csv", key=keys.DL_LEDGER,
                       on_click="ignore", icon=":material/download:")
    c2.download_button("Run configuration (JSON)",
                       config_json(ds, cfg, state.params(), statement, state.query_dict(),
                                             result=result),
                       file_name="dpviz_run_config.json", mime="application/json",
                       key=DL_CONFIG, on_click="ignore", icon=":material/download:")
    ref_centers = ref.centers if ref is not None else ds.true_centers

    def figure_html() -> str:
        fig = viz.storyboard.storyboard_figure(result, ds.X, reference_centers=ref_centers)
        return fig.to_html(include_plotlyjs="cdn", full_html=True)

    if downloads.storyboard_offered(ds):  # it draws every row: not for an upload
        c3.download_button("Storyboard figure (HTML)", figure_html, file_name="dpviz_storyboard.html",
                           mime="text/html", key=DL_FIGURE, on_click="ignore",
                           icon=":material/download:")
    st.caption(downloads.EXPLORE_CAPTION)


def _exploration(title: str, ds, stage, cfg: run.RunConfig, result, statement, ref) -> None:
    """A registered exploration of FriendlyCore, rendered by the same code as every family's
    (``algorithm_view.show_exploration``). Its simulations go through the registry at the
    row-level (ε, δ) of the run on screen, except re-draws (``simulate(draw=i)``), which keep this
    page's exact ρ and tuples (``run.redraw``): at a vacuous ρ no row-level target exists."""
    spec = dpviz.registry.get("friendlycore")
    view = next(v for v in dpviz.viz.storyboards.explorations("friendlycore") if v.title == title)
    p = cfg.fc_params()
    pub = dpviz.registry.Public(n_declared=int(ds.n), d=int(ds.d), k=cfg.k, radius=cfg.radius)
    ref_centers = ref.centers if ref is not None else ds.true_centers
    ctx = algorithm_view.exploration_context(ds, spec, p, pub, result, statement.row.eps,
                                             statement.row.delta, ref_centers)
    other = ctx.simulate

    def simulate(epsilon=None, delta=None, seed=None, draw=None, **changes):
        if draw and epsilon is None and delta is None and seed is None and not changes:
            return run.redraw(ds, stage, cfg, int(draw))
        return other(epsilon=epsilon, delta=delta, seed=seed, draw=draw, **changes)

    algorithm_view.show_exploration(view, replace(ctx, simulate=simulate))


def fallback_toggle(key: str = FALLBACK_TOGGLE) -> bool:
    """FriendlyCore's fallback on/off (``fc_private_stage(fallback=...)``): off, a run whose core
    does not form releases no centers instead of the grid summary's."""
    fb = knobs.FALLBACK.param
    state.seed_widget(fb, key)
    st.toggle("Backup method", key=key,
              on_change=state.on_change(fb, key, bool),
              help="On: if FriendlyCore's pieces do not agree enough for a core to form, a private "
                   "grid summary of the rows (a quadtree coreset + weighted k-means) answers "
                   "instead, from the budget share reserved for it. Off: such a run releases no "
                   "centers, so you see FriendlyCore alone. The total ρ is the same either way; "
                   "the readout shows the row-level ε of each.")
    return bool(state.get(fb))


def _budget(ds, cfg: run.RunConfig) -> tuple[run.RunConfig, str | None]:
    """(the run's config, a note): at the row-level target (ε, δ) of the sliders, or, while an old
    link's ρ applies (``state.link_rho``, made with the old ρ slider), at that own budget converted
    by the plan's rule (``budget_from_rho`` → ``plan_at_budget``, δ′ = δ): the same run as before,
    the slider at its row-level ε, and a note that shows both. Moving ε or δ leaves it."""
    rho = state.link_rho()
    if rho is None:
        return cfg.at_eps(float(state.get("eps"))), None
    cfg = replace(cfg, rho=rho, eps=None)
    try:
        g = run.fc_plan(ds, cfg).guarantee
    except ValueError:  # knobs the registry refuses: the run reports it
        return cfg, None
    state.show_link_target(g.eps)
    note = (f"Opened with an own budget ρ = {rho:g} (δ = {controls.fmt_delta(cfg.delta)}) from a link "
            f"made with the old ρ slider: the same run, whose row-level guarantee is ε = {g.eps:.3g}, "
            f"δ = {g.delta:.2g} (the plan's rule). Moving ε or δ plans the run from the row-level "
            "target instead.")
    return cfg, note


#: Rows per piece of the teaching lesson (20,000 rows, t = 200), kept when :func:`_more_rows_link`
#: offers more rows; and the generator's largest n (``state``'s ``n`` parameter).
_ROWS_PER_PIECE, _MAX_ROWS = 100, 500_000


def _more_rows(cfg: run.RunConfig) -> tuple[int, int] | None:
    """(n, t) of the same generated lesson with 5× the rows (at least 100,000) and as many more
    pieces, offered when the core forms at no ε of the slider: FriendlyCore's core needs many
    pieces at a sound row-level ε (docs/app.md, bench/fc_delta_split.py), and the class can see it
    form there. None for uploads and built-ins (their rows are what they are) or at the
    generator's largest n."""
    if state.get("src") != "generate":
        return None
    n = min(max(100_000, 5 * int(state.get("n"))), _MAX_ROWS)
    t = n // _ROWS_PER_PIECE
    return (n, t) if n > int(state.get("n")) and t > cfg.t else None


def _more_rows_button(cfg: run.RunConfig) -> None:
    """:func:`_more_rows` as a button that opens that lesson (nothing when there is none). A button,
    not a page link: a link to the page it is on does not reload its parameters."""
    more = _more_rows(cfg)
    if more is None:
        return
    n, t = more
    if st.button(f"FriendlyCore's own core needs more pieces at a sound ε: open this lesson with {n:,} "
                 f"rows and t = {t:,} pieces (the slider's mark then shows from which ε its core forms)",
                 key=MORE_ROWS, icon=":material/arrow_forward:", type="tertiary"):
        state.update(n=n, t=t)
        st.rerun(scope="app")  # new data: the whole page, not only this fragment


@st.fragment
def live(ds, stage, cfg: run.RunConfig) -> None:
    """The row-level ε and δ controls and everything that depends on them (reruns alone on a move)."""
    lap = rerun_timing.Laps("explore.live")
    # The sliders on the left, the one main panel they change on the right: both on one screen
    # at 1280×720 (issue 16).
    left, right = st.columns([5, 6], gap="medium")
    eps_slot = left.container()
    c2, c2b = left.columns(2)
    c3 = left.container()
    with c2:  # δ and the fallback first: the slider's mark depends on them
        delta = controls.delta_select()
    with c2b:
        fallback = fallback_toggle()
    cfg, link_note = _budget(ds, replace(cfg, delta=delta, fallback=fallback))
    with eps_slot:
        mark = run.core_eps(ds, stage, cfg, controls.EPS_GRID)
        controls.eps_slider(mark=mark, t=cfg.t)
        if link_note is not None:
            with st.container(key=RHO_LINK_NOTE):
                st.info(link_note, icon=":material/link:")
    stage_key = cfg.stage_key(ds)
    # a knob no budget meets (the plan's ValueError, e.g. t·k above the declared n) fails here too
    shown = explore_live.private_or_last(ds, stage, cfg)
    if shown.error is not None:
        _error(shown.error)
    if shown.result is None:
        return
    if shown.error is not None:
        st.caption("Showing the previous result.")
    result_key, result, failed = shown.key, shown.result, shown.error is not None
    shown_cfg = shown.cfg or cfg
    plan = result.plan  # the plan the run spent (dpviz.run's)
    lap("private")
    statement = run.statement(ds, shown_cfg, result, key=result_key)
    lap("statement")
    with c3:  # the per-row sentence first: it stays on the first screen at 1280×720
        controls.epsilon_readout(statement, n_declared=int(ds.n))
        with st.container(key=keys.OWN_BUDGET_READOUT):
            controls.own_budget_readout("FriendlyCore", "zcdp", plan)
        controls.rho_entry(lambda rho, delta: run.fc_plan(
            ds, replace(cfg, rho=rho, delta=delta, eps=None)).guarantee)
    lap("readout")

    storyboard = dpviz.viz.storyboard
    status = storyboard.run_status(result)
    with st.container(key=keys.RUN_STATUS):
        # In plain words: which method answered and, if not FriendlyCore, why (issue 16).
        text = storyboard.plain_status(result)
        if result.centers is None:
            st.error(text)
        elif status.fallback_used or not status.complete:
            st.warning(text)
        else:
            st.success(text)
    if mark is None:
        _more_rows_button(cfg)
    with st.spinner("Computing the non-private reference (k-means++ on all rows, once)…"):
        ref = shared.reference(ds, cfg.k) if ds.n >= cfg.k else None
    lap("status+reference")
    with right, st.container(key=MAIN_PANEL):
        live_chart.live_chart(explore_live.main_panel(result, result_key, ds, ref, cfg),
                              key=MAIN_PANEL_CHART)
    lap("main panel")
    _tiles(run.diagnostics(ds, stage, result, ref, key=result_key), result)
    lap("tiles")

    view = _view_picker()
    if view == VIEWS[0]:
        _storyboard(result, result_key, ds, ref, stage_key)
    elif view == VIEWS[1]:
        _privacy_view(result, statement, cfg)
    elif view == VIEWS[2]:
        _downloads_view(ds, cfg, result, statement, ref)
    else:
        _exploration(view, ds, stage, cfg, result, statement, ref)
    lap("view")
    state.sync_url()
    if not failed:
        explore_live.prefetch_next(ds, stage, cfg, ref, figure=view == VIEWS[0])
    lap.done()


def render(ds, spec, radius: float) -> None:
    """FriendlyCore's Explore on dataset ``ds`` with the declared radius (the hook's signature)."""
    modes.simulation_badge(EXPLORE_BADGE)
    p = state.params()
    cfg = run.RunConfig.from_params(p, radius).with_t(ds)  # t = 0: the automatic t
    staged = explore_live.stage_or_last(ds, cfg)
    if staged.error is not None:
        _error(staged.error)
    if staged.stage is None:
        return
    ds, stage, cfg = staged.ds, staged.stage, staged.cfg
    if staged.error is not None:
        st.caption(f"Showing the previous tuple stage (k = {cfg.k}, t = {cfg.t}).")
    auto = f" · t = {cfg.t:,} (automatic, from n and k)" if not int(p["t"]) else ""
    st.markdown(data_source.describe(ds) + f" · Λ used = {cfg.radius:g}" + auto)
    with st.sidebar:  # issue 43: the lesson's second knob, off the first screen's main column
        lesson.rows_control(LESSON_ROWS)
    if (k_note := data_source.k_note(ds, cfg.k)) is not None:  # issue 16: k = 8 on iris
        st.info(k_note, icon=":material/info:")
    live(ds, stage, cfg)
