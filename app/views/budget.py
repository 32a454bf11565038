"""Budget: how accuracy and success depend on ρ (and on n), over repeated private runs.

The curves are non-private diagnostics (many runs on the same data); they are for choosing a
budget, not for publishing. Click a median point to load that ρ into Explore.
"""

from __future__ import annotations

import re

import streamlit as st

import dpviz
from app.components import controls, data_source, lib, run, state, sweep
from dpviz import experiments

st.title("Budget: what does less privacy buy?")
st.caption("Each point is the median over repetitions (band: 10–90%) of the normalized k-means "
           "loss 1 − X/Y (0 = as good as non-private). All curves are **non-private diagnostics**: "
           "they rerun the algorithms many times on the same rows to study them.")

ALGOS = {"fc:practical": "FriendlyCore (practical split)", "fc:paper": "FriendlyCore (paper's split)",
         "dp_lloyd": "DP-Lloyd", "diffprivlib": "diffprivlib KMeans",
         "nonprivate": "non-private k-means++ (ε = ∞)"}
# ... then every other registered algorithm a ρ sweep can run (zCDP, or pure ε at ε = √(2ρ)).
ALGOS |= {n: dpviz.registry.get(n).title for n in experiments.algorithm_names() if n not in ALGOS}


def _load_rho() -> None:
    """Selection callback: the clicked point's ρ goes to Explore."""
    rho = sweep.rho_from_selection(st.session_state.get("budget_accuracy"))
    if rho is not None:
        state.update(rho=rho)
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
    c2.select_slider("ρ range (log scale)", options=grid, value=(p["blo"], p["bhi"]),
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
                               p["oracle"], int(p["seed"]), kind="n", ns=ns, rho=float(p["rho"]))
    rhos = sweep.rho_grid(p["blo"], p["bhi"], p["bpts"])
    return sweep.SweepSpec(ds.content_hash, algos, rhos, int(p["breps"]), int(p["k"]), int(p["t"]),
                           float(p["delta"]), float(radius), float(p["rmin"]), p["oracle"],
                           int(p["seed"]))


def _charts(spec: sweep.SweepSpec, part: sweep.Partial) -> None:
    viz = lib.viz_modules()
    sw = part.sweep()
    rho = float(state.get("rho"))
    fig = viz.sweeps.accuracy_figure(sw, current_rho=rho)
    fig.update_layout(clickmode="event+select")
    st.plotly_chart(fig, key="budget_accuracy", on_select=_load_rho, selection_mode="points",
                    config={"displaylogo": False})
    st.caption("Click a median point to open Explore at that ρ.")
    st.plotly_chart(viz.sweeps.success_figure(sw, current_rho=rho), key="budget_success",
                    config={"displaylogo": False})
    with st.expander("The runs (non-private diagnostics)"):
        st.dataframe(sw.summary(), hide_index=True)


def main() -> None:
    if st.session_state.pop("_goto_explore", False):
        st.switch_page(st.session_state["_pages"]["explore"])
    if not lib.require("data", "experiments", "viz", "metrics"):
        return
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
        _charts(spec, part)

    st.divider()
    st.subheader("Loss vs n at the current ρ")
    part_n = sweep.partial(spec_n)
    if st.button(f"Run loss vs n (ρ = {controls.fmt_rho(spec_n.rho)}, n = "
                 f"{', '.join(f'{n:,}' for n in spec_n.ns)})", key="budget_loss_n_run",
                 disabled=running is not None):
        sweep.start(spec_n)
        st.rerun()
    if running is not None and running == spec_n:
        progress = _progress_box(spec_n, part_n)
    if part_n is not None and part_n.done:
        st.plotly_chart(lib.viz_modules().sweeps.loss_vs_n_figure(part_n.sweep()),
                        key="budget_loss_n", config={"displaylogo": False})
        st.caption("Generated data is regenerated at each n from its recipe; other data uses "
                   "random subsets of its rows.")
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
