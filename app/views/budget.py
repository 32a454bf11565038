"""Budget: how accuracy and success depend on the row-level ε (and on n), over repeated runs.

Algorithms are compared at the same ROW-LEVEL (ε, δ): each one's own budget is calibrated to the
target (``dpviz.registry.plan``; FriendlyCore through its group-privacy step), not at equal
nominal ρ, which favoured FriendlyCore (issue 10, finding 6). The curves are non-private
diagnostics (many runs on the same data); they are for choosing a budget, not for publishing.
Click a median point to open Explore at exactly that row-level (ε, δ). Sweeps run as jobs
(``app.components.jobs``) on the one engine (``dpviz.sweeps``).
"""

from __future__ import annotations

import streamlit as st

import dpviz
import dpviz.registry
import dpviz.viz
import dpviz.viz.sweeps
from app.components import a11y, controls, data_source, jobs, keys, modes, run, state, sweep
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
BUDGET_BADGE: Key[object] = Key("simulation_badge_budget", object, "the page's simulation badge")
BUDGET_RUN: Key[bool] = Key("budget_run", bool, "button: run (or continue) the ε sweep")
BUDGET_AUTO_STARTED: Key[set] = Key(
    "_budget_auto_started", set, "sweep specs this session started by itself (once each)")
BUDGET_AUTO: Key[object] = Key("budget_auto", object, "container: the sweep started by itself")
BUDGET_ORIGIN: Key[object] = Key(
    "budget_origin", object, "caption container: where the ε sweep's curves come from")
BUDGET_ACCURACY: Key[object] = Key(
    "budget_accuracy", object, "chart: accuracy against ε (a click opens Explore at that ε)")
BUDGET_SUCCESS: Key[object] = Key("budget_success", object, "chart: how often the run succeeded")
BUDGET_LOSS_N_RUN: Key[bool] = Key("budget_loss_n_run", bool, "button: run the loss-against-n sweep")
BUDGET_ORIGIN_N: Key[object] = Key(
    "budget_origin_n", object, "caption container: where the loss-against-n curves come from")
BUDGET_LOSS_N: Key[object] = Key("budget_loss_n", object, "chart: loss against n")
BUDGET_EPS_RANGE: Key[tuple] = Key(
    "budget_eps_range", tuple, "range select_slider: the sweep's row-level ε range")
BUDGET_POINTS: Key[int] = Key("budget_points", int, "number_input: the number of ε values")
BUDGET_REPS: Key[int] = Key("budget_reps", int, "number_input: repetitions per ε")
BUDGET_PROGRESS: Key[object] = Key("budget_progress", object, "container: the sweep's progress bar")
BUDGET_STOP: Key[bool] = Key("budget_stop", bool, "button: stop the running sweep")

st.title("Budget: what does less privacy buy?")
st.caption("Each point is the median over repetitions (band: 10–90%) of the normalized k-means "
           "loss 1 − X/Y (0 = as good as non-private) at a **row-level (ε, δ) target**: every "
           "algorithm runs at its own budget calibrated so that adding or removing one row is "
           "(ε, δ)-DP (the declared n is the dataset's n). All curves are **non-private "
           "diagnostics**: they rerun the algorithms many times on the same rows to study them.")
modes.simulation_badge(BUDGET_BADGE)

X_TITLE = "row-level ε target (every algorithm calibrated to it; log scale)"
SLOT = "budget"
#: A built-in table (public, at most 1,797 rows: seconds) gets its sweep started when the page
#: opens, so the page is never empty after the README's "pick a built-in table" (issue 36).
AUTO_RUN_MAX_N = 20_000


def sweepable() -> dict[str, str]:
    """Name → label of everything this page can sweep: every registered algorithm (each private
    one calibrated to the row-level ε axis, whatever its budget kind; the non-private reference
    once, at ε = ∞) and the variants the viz names (e.g. a budget-split preset)."""
    label = dpviz.viz.sweeps.algorithm_label
    variants = [v for v in dpviz.viz.sweeps.ALGORITHM_LABELS if "[" in v]
    names = [n for s in dpviz.algorithms(private_only=True)
             for n in (s.name, *(v for v in variants if v.startswith(f"{s.name}[")))]
    names += [s.name for s in dpviz.algorithms() if s.budget_kind == "none"]
    return {name: label(name) for name in names if _known(name)}


def _known(name: str) -> bool:
    try:
        dpviz.registry.resolve_name(name)
    except ValueError:
        return False
    return True


ALGOS = sweepable()
#: The non-private reference (the registered spec that spends no budget): the sweep of no choice.
REFERENCE = next(s.name for s in dpviz.algorithms() if s.budget_kind == "none")


def _open_explore() -> None:
    """Selection callback: Explore opens at exactly the clicked row-level (ε, δ) — the target every
    curve of this sweep was calibrated to (δ is the sweep's, Explore's own) — with no ρ of its own:
    Explore's ε slider takes an off-grid value as it is, and the run is planned from it."""
    target = sweep.explore_target(st.session_state.get(BUDGET_ACCURACY))
    if target is None:
        return
    state.update(**target)
    st.session_state[keys.GOTO_EXPLORE] = True


def _settings():
    """Algorithms, row-level ε range, points, repetitions (bound to URL parameters)."""
    p = state.params()
    state.seed_widget("balg", keys.BUDGET_ALGORITHMS, lambda v: [a for a in v.split(",") if a in ALGOS])
    c1, c2 = st.columns([3, 2])
    c1.multiselect("Algorithms", list(ALGOS), format_func=ALGOS.get, key=keys.BUDGET_ALGORITHMS,
                   on_change=state.on_change("balg", keys.BUDGET_ALGORITHMS,
                                             lambda v: ",".join(v) or REFERENCE))
    c3, c4, c5 = st.columns(3)
    sweep.range_and_runs(c2, c3, c4, widgets=(BUDGET_EPS_RANGE, BUDGET_POINTS, BUDGET_REPS),
                         keys=("blo", "bhi", "bpts", "breps"),
                         points=(2, 25), max_reps=100,
                         reps_help="The paper uses 30; each repetition redraws the pieces and the noise.")
    t = f"{p['t']}" if p["t"] else "automatic (each algorithm's own, from n and k)"
    c5.markdown(f"δ = {controls.fmt_delta(p['delta'])}, k = {p['k']}, t = {t}, "
                f"r_min = {p['rmin']:g}, oracle = {p['oracle']}, seed = {p['seed']} "
                "(from Explore)")


def _spec(ds, kind: str = "epsilon") -> sweep.SweepSpec:
    p = state.params()
    radius = data_source.radius_for(ds)
    algos = tuple(a for a in p["balg"].split(",") if a in ALGOS) or (REFERENCE,)
    if kind == "n":
        top = ds.n
        # the smallest n holds t pieces of k rows (automatic t: the spec's own, at least 2 pieces)
        ns = tuple(sorted({max(max(p["t"], 2) * p["k"], int(top * f)) for f in (0.1, 0.2, 0.4, 0.7, 1.0)}))
        return sweep.SweepSpec(ds.content_hash, algos, (), int(p["breps"]), int(p["k"]),
                               delta=float(p["delta"]), radius=float(radius), seed=int(p["seed"]),
                               **sweep.tuple_knobs(p), kind="n", ns=ns, epsilon=float(p["eps"]))
    return sweep.spec_for(ds, p, float(radius), algos)


def _origin_note(part: sweep.Partial, key: str = BUDGET_ORIGIN) -> None:
    """Say where curves this session did not compute come from (issue 16: shared links open
    with the presets' curves drawn)."""
    if part.origin == "session":
        return
    where = ("precomputed for this preset (`python -m app.precompute_sweeps`, for the code "
             f"version {sweep.running_code_hash()})" if part.origin == "precomputed"
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
    a11y.chart(fig, key=BUDGET_ACCURACY, on_select=_open_explore, selection_mode="points")
    st.caption("Click a median point to open Explore at exactly that row-level ε (and this sweep's "
               "δ); Explore's ε slider takes the clicked value as it is.")
    fig = viz.sweeps.success_figure(sw, current_rho=None)
    fig.update_layout(xaxis_title=X_TITLE)
    a11y.chart(fig, key=BUDGET_SUCCESS)
    with st.expander("The runs (non-private diagnostics)"):
        st.dataframe(sw.summary(), hide_index=True)


def _start(ds, spec: sweep.SweepSpec, resume: sweep.Partial | None = None) -> None:
    """Run ``spec`` as the page's job, one repetition per piece."""
    p = state.params()
    ref = run.reference(ds, spec.k).cost
    make = None
    if spec.kind == "n":
        make = sweep.make_data(ds, p, data_source.generator_kwargs(p) if p["src"] == "generate" else {})

    def piece(r: int, cancel, progress):
        return sweep.repetition(ds, spec, r, ref, cancel=cancel, make_data=make, progress=progress)

    sweep.start(SLOT, spec, piece, public=ds.source in sweep.PUBLIC_SOURCES, resume=resume)


def _auto_start(ds, spec: sweep.SweepSpec, running) -> bool:
    """Start ``spec``'s sweep once per session when nothing is there yet and the data is a built-in
    table (public, at most :data:`AUTO_RUN_MAX_N` rows); True while that sweep runs."""
    started = st.session_state.setdefault(BUDGET_AUTO_STARTED, set())
    job = jobs.running(SLOT)
    if job is not None:
        return job.key == spec and spec in started
    if (ds.source != "builtin" or ds.n > AUTO_RUN_MAX_N or spec in started
            or running is not None or sweep.partial(SLOT, spec) is not None):
        return False
    started.add(spec)
    _start(ds, spec)
    return True


def main() -> None:
    if st.session_state.pop(keys.GOTO_EXPLORE, False):
        st.switch_page(st.session_state[keys.PAGES]["explore"])
    got = sweep.page_dataset()
    if got is None:
        return
    ds, _ = got
    st.markdown(data_source.describe(ds))
    _settings()
    spec, spec_n = _spec(ds), _spec(ds, "n")
    running = jobs.running(SLOT)
    if running is not None and running.key not in (spec, spec_n):
        jobs.stop(SLOT)  # the settings changed under a running sweep: stop it
        running = None
    auto = _auto_start(ds, spec, running)
    part = sweep.run_button(SLOT, spec, noun="sweep", key=BUDGET_RUN, progress_key=BUDGET_PROGRESS,
                            stop_key=BUDGET_STOP, unit="repetition",
                            start=lambda resume: _start(ds, spec, resume))
    if auto:
        with st.container(key=BUDGET_AUTO):
            st.info("Sweeping this built-in table (started when the page opened, as a preset "
                    "opens drawn): the curves appear as repetitions finish.")
    if part is None or part.done == 0:
        if not auto:
            st.info(f"Press **Run sweep** to run {len(spec.algorithms)} algorithm(s) at "
                    f"{len(spec.epsilons)} row-level ε values ({sweep.fmt_epsilons(spec.epsilons)}), "
                    f"{spec.reps} repetitions each. Results are kept for this session.")
    else:
        if part.stopped and not part.complete:
            st.warning(f"Stopped after {part.done} of {spec.reps} repetitions; the curves use "
                       "the finished ones.")
        _origin_note(part)
        _charts(spec, part)

    st.divider()
    st.header("Loss vs n at Explore's row-level (ε, δ)")
    part_n = sweep.partial(SLOT, spec_n)
    if st.button(f"Run loss vs n (row-level ε = {spec_n.epsilon:.3g}, δ = {spec_n.delta:.0e}, n = "
                 f"{', '.join(f'{n:,}' for n in spec_n.ns)})", key=BUDGET_LOSS_N_RUN,
                 disabled=running is not None):
        _start(ds, spec_n)
        st.rerun()
    if part_n is not None and part_n.done:
        _origin_note(part_n, key=BUDGET_ORIGIN_N)
        fig = dpviz.viz.sweeps.loss_vs_n_figure(part_n.sweep())
        fig.update_layout(title_text=f"Normalized loss vs n at row-level ε = {spec_n.epsilon:.3g}")
        a11y.chart(fig, key=BUDGET_LOSS_N)
        st.caption(f"Every algorithm calibrated to the same row-level target (ε = {spec_n.epsilon:.3g}, "
                   f"δ = {spec_n.delta:.0e}): Explore's. Generated data is regenerated at each n from "
                   "its recipe; other data uses random subsets of its rows.")


main()
