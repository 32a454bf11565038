"""Budget: how accuracy and success depend on the row-level ε (and on n), over repeated runs.

Algorithms are compared at the same ROW-LEVEL (ε, δ): each one's own budget is calibrated to the
target (``dpviz.experiments.row_level_budget``; FriendlyCore through its group-privacy step), not
at equal nominal ρ, which favoured FriendlyCore (issue 10, finding 6). The curves are non-private
diagnostics (many runs on the same data); they are for choosing a budget, not for publishing.
Click a median point to load FriendlyCore's ρ for that ε into Explore.
"""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

import dpviz
import dpviz.experiments
import dpviz.privacy
import dpviz.registry
import dpviz.viz
import dpviz.viz.sweeps
from app.components import controls, data_source, modes, run, state, sweep

st.title("Budget: what does less privacy buy?")
st.caption("Each point is the median over repetitions (band: 10–90%) of the normalized k-means "
           "loss 1 − X/Y (0 = as good as non-private) at a **row-level (ε, δ) target**: every "
           "algorithm runs at its own budget calibrated so that adding or removing one row is "
           "(ε, δ)-DP (the declared n is the dataset's n). All curves are **non-private "
           "diagnostics**: they rerun the algorithms many times on the same rows to study them.")
modes.simulation_badge("simulation_badge_budget")

X_TITLE = "row-level ε target (every algorithm calibrated to it; log scale)"



def sweepable() -> dict[str, str]:
    """Name → label of everything this page can sweep: FriendlyCore's two splits, every
    registered algorithm with a ρ or ε budget of its own, and the non-private reference."""
    out = {"fc:practical": "FriendlyCore (practical split)", "fc:paper": "FriendlyCore (paper's split)"}
    out |= {s.name: s.title for s in dpviz.algorithms(private_only=True)
            if s.budget_kind in ("zcdp", "pure") and s.name != "friendlycore"}
    out["nonprivate"] = "non-private k-means++ (ε = ∞)"
    return out


ALGOS = sweepable()


def _load_rho() -> None:
    """Selection callback: FriendlyCore's ρ at the clicked row-level ε goes to Explore (the
    nearest ρ slider step)."""
    eps = sweep.rho_from_selection(st.session_state.get("budget_accuracy"))
    if eps is None:
        return
    p = state.params()
    ds = data_source.current().dataset
    if ds is None:
        return
    rho, _ = dpviz.experiments.row_level_budget(
        "fc:practical", float(eps), float(p["delta"]), n_declared=int(ds.n), d=int(ds.d),
        k=int(p["k"]), radius=float(data_source.radius_for(ds)), n_tuples=int(p["t"]),
        r_min=float(p["rmin"]), oracle=p["oracle"])
    grid = np.asarray(controls.RHO_GRID, dtype=float)
    state.update(rho=float(grid[np.argmin(np.abs(np.log(grid) - np.log(rho)))]))
    st.session_state["_goto_explore"] = True


def _settings():
    """Algorithms, ρ range, points, repetitions (bound to URL parameters)."""
    p = state.params()
    state.seed_widget("balg", "budget_algorithms", lambda v: [a for a in v.split(",") if a in ALGOS])
    c1, c2 = st.columns([3, 2])
    c1.multiselect("Algorithms", list(ALGOS), format_func=ALGOS.get, key="budget_algorithms",
                   on_change=state.on_change("balg", "budget_algorithms",
                                             lambda v: ",".join(v) or "nonprivate"))
    grid = sorted(set(controls.RHO_GRID) | {p["blo"], p["bhi"]})
    # A range select_slider: its initial value must be passed as a pair (not seeded).
    c2.select_slider("Row-level ε range (log scale)", options=grid, value=(p["blo"], p["bhi"]),
                     format_func=controls.fmt_rho, key="budget_rho_range",
                     on_change=_range_changed)
    c3, c4, c5 = st.columns(3)
    state.seed_widget("bpts", "budget_points")
    c3.number_input("ρ values", min_value=2, max_value=25, step=1, key="budget_points",
                    on_change=state.on_change("bpts", "budget_points", int))
    state.seed_widget("breps", "budget_reps")
    c4.number_input("Repetitions", min_value=1, max_value=100, step=1, key="budget_reps",
                    on_change=state.on_change("breps", "budget_reps", int),
                    help="The paper uses 30; each repetition redraws the pieces and the noise.")
    c5.markdown(f"δ = {controls.fmt_delta(p['delta'])}, k = {p['k']}, t = {p['t']}, "
                f"r_min = {p['rmin']:g}, oracle = {p['oracle']}, seed = {p['seed']} "
                "(from Explore)")


def _range_changed() -> None:
    lo, hi = st.session_state["budget_rho_range"]
    state.update(blo=float(lo), bhi=float(hi))


def _progress_box(spec: sweep.SweepSpec, part: sweep.Partial | None):
    box = st.container(key="budget_progress")
    done = 0 if part is None else part.done
    bar = box.progress(done / spec.reps, text=f"{done} of {spec.reps} repetitions")

    def progress(frac: float, msg: str) -> None:
        msg = re.sub(r"^repetition \d+( of \d+)?:\s*", "", msg)  # each chunk is one repetition
        bar.progress(min((done + frac) / spec.reps, 1.0),
                     text=f"repetition {done + 1} of {spec.reps}: {msg}")

    return progress


def _spec(ds, kind: str = "rho") -> sweep.SweepSpec:
    p = state.params()
    radius = data_source.radius_for(ds)
    algos = tuple(a for a in p["balg"].split(",") if a in ALGOS) or ("nonprivate",)
    if kind == "n":
        top = ds.n
        ns = tuple(sorted({max(p["t"] * p["k"], int(top * f)) for f in (0.1, 0.2, 0.4, 0.7, 1.0)}))
        return sweep.SweepSpec(ds.content_hash, algos, (), int(p["breps"]), int(p["k"]),
                               int(p["t"]), float(p["delta"]), float(radius), float(p["rmin"]),
                               p["oracle"], int(p["seed"]), kind="n", ns=ns,
                               rho=_fc_row_eps(ds, p, float(radius)))
    return sweep.spec_for(ds, p, float(radius), algos)


def _fc_row_eps(ds, p, radius: float) -> float:
    """The row-level ε of FriendlyCore (practical split) at Explore's ρ and δ, from public inputs
    only: the loss-vs-n target every algorithm is calibrated to (rounded for a stable key)."""
    registry = dpviz.registry
    spec = registry.get("friendlycore")
    params = spec.make_params(n_tuples=int(p["t"]), r_min=float(p["rmin"]), oracle=p["oracle"])
    pub = registry.Public(n_declared=int(ds.n), d=int(ds.d), k=int(p["k"]), radius=radius)
    budget = dpviz.privacy.ZCDP(float(p["rho"]), float(p["delta"]) / 2)
    g = spec.guarantee(budget, pub, params, float(p["delta"]) / 2)
    return float(f"{g.eps:.3g}")


def _origin_note(part: sweep.Partial, key: str = "budget_origin") -> None:
    """Say where curves this session did not compute come from (issue 16: shared links open
    with the presets' curves drawn)."""
    if part.origin == "session":
        return
    where = ("precomputed for this preset (`python -m app.precompute_sweeps`, for the code "
             f"version {sweep.code_hash()})" if part.origin == "precomputed"
             else "computed earlier on this server by another session")
    with st.container(key=key):  # one note per sweep shown: each needs its own key
        st.caption(f"**Simulation** on public synthetic data, {where}: a seeded sweep, so running "
                   "it again gives the same curves. Sweeps on uploaded data are never shared.")


def _charts(spec: sweep.SweepSpec, part: sweep.Partial) -> None:
    viz = dpviz.viz
    sw = part.sweep()
    fig = viz.sweeps.accuracy_figure(sw, current_rho=None)  # Explore's ρ is not on this ε axis
    fig.update_layout(clickmode="event+select")
    fig.update_layout(xaxis_title=X_TITLE, title_text="Normalized k-means loss vs row-level ε")
    st.plotly_chart(fig, key="budget_accuracy", on_select=_load_rho, selection_mode="points",
                    config={"displaylogo": False})
    st.caption("Click a median point to open Explore at FriendlyCore's ρ for that row-level ε "
               "(nearest slider step).")
    fig = viz.sweeps.success_figure(sw, current_rho=None)
    fig.update_layout(xaxis_title=X_TITLE)
    st.plotly_chart(fig, key="budget_success", config={"displaylogo": False})
    with st.expander("The runs (non-private diagnostics)"):
        st.dataframe(sw.summary(), hide_index=True)


def main() -> None:
    if st.session_state.pop("_goto_explore", False):
        st.switch_page(st.session_state["_pages"]["explore"])
    choice = data_source.current()
    ds = choice.dataset
    if choice.error:
        st.error(choice.error)
    if ds is None:
        st.info(choice.notice or "No dataset yet: choose one on the Data page.")
        return
    if data_source.radius_for(ds) is None:
        st.error("Declare the public radius Λ first (Data page).")
        return
    st.markdown(data_source.describe(ds))
    _settings()
    spec = _spec(ds)
    run_col, stop_col, _ = st.columns([1, 1, 4])
    running = sweep.running()
    if run_col.button("Run sweep", key="budget_run", type="primary", icon=":material/play_arrow:",
                      disabled=running is not None):
        sweep.start(spec)
        running = spec
    stop_col.button("Stop", key="budget_stop", icon=":material/stop:", on_click=sweep.stop,
                    disabled=running is None)
    spec_n = _spec(ds, "n")
    progress = None
    if running is not None:
        if running == spec:
            # The bar sits here; the next repetition runs at the end of the page, after the
            # finished repetitions have been drawn.
            progress = _progress_box(running, sweep.partial(running))
        elif running != spec_n:
            sweep.stop()  # the settings changed under a running sweep: stop it
            running = None
    part = sweep.partial(spec)
    if part is None or part.done == 0:
        st.info(f"Press **Run sweep** to run {len(spec.algorithms)} algorithm(s) at "
                f"{len(spec.rhos)} values of ρ ({sweep.fmt_rhos(spec.rhos)}), {spec.reps} "
                "repetitions each. Results are kept for this session.")
    else:
        if part.stopped and not part.complete:
            st.warning(f"Stopped after {part.done} of {spec.reps} repetitions; the curves use "
                       "the finished ones.")
        _origin_note(part)
        _charts(spec, part)

    st.divider()
    st.subheader("Loss vs n at FriendlyCore's row-level ε for the current ρ")
    part_n = sweep.partial(spec_n)
    if st.button(f"Run loss vs n (row-level ε = {spec_n.rho:.3g}, n = "
                 f"{', '.join(f'{n:,}' for n in spec_n.ns)})", key="budget_loss_n_run",
                 disabled=running is not None):
        sweep.start(spec_n)
        st.rerun()
    if running is not None and running == spec_n:
        progress = _progress_box(spec_n, part_n)
    if part_n is not None and part_n.done:
        _origin_note(part_n, key="budget_origin_n")
        fig = dpviz.viz.sweeps.loss_vs_n_figure(part_n.sweep())
        fig.update_layout(title_text=f"Normalized loss vs n at row-level ε = {spec_n.rho:.3g}")
        st.plotly_chart(fig, key="budget_loss_n", config={"displaylogo": False})
        st.caption(f"Every algorithm calibrated to the same row-level ε = {spec_n.rho:.3g} "
                   f"(δ = {spec_n.delta:.0e}): FriendlyCore's at ρ = "
                   f"{controls.fmt_rho(float(state.get('rho')))} on the full data. Generated data "
                   "is regenerated at each n from its recipe; other data uses random subsets of "
                   "its rows.")
    if running is not None and progress is not None:
        _run_chunk(ds, running, progress)  # reruns the page for the next repetition


def _run_chunk(ds, spec: sweep.SweepSpec, progress) -> None:
    """One repetition of the running sweep, then a rerun for the next one."""
    make = None
    if spec.kind == "n":
        p = state.params()
        make = sweep.make_data(ds, p, data_source.generator_kwargs(p) if p["src"] == "generate"
                               else {})
    try:
        sweep.run_chunk(ds, spec, progress, make_data=make)
    except Exception as exc:  # ValueError: bad settings; anything else: a library bug
        sweep.stop()
        st.error(run.error_text(exc))
        return
    st.rerun()


main()
