"""Compare: every registered algorithm on the current dataset at the same row-level (ε, δ).

The algorithms, their parameter forms and their paper statements come from the registry
(``dpviz.algorithms()``, ``dpviz.registry.param_fields``): a new family appears here without an
edit. The curves are a simulation (seeded runs on the same rows, exact metrics), not a release.

Layout (issue 36, at 1280×720): the title, one line on the guarantee, the run state (idle, running
or done: never two at once) and the chosen methods ranked fill the first screen; the settings,
the per-method panels and the long explanation follow. A message stands from the page's first
element until the results (or the reason there are none) replace it.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

import dpviz
import dpviz.compare_set
import dpviz.ranking
from app.components import a11y, compare, controls, data_source, jobs, keys, run, safe, state, sweep
from app.components.keys import Key
from dpviz.registry import AlgorithmSpec, param_fields
from dpviz.sweeps import REFERENCE
from dpviz.viz import compare as figures

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
COMPARE_SEEN_DELTA: Key[float] = Key(
    "_compare_seen_delta", float, "the app's δ when Compare last looked (its own δ follows changes)")
COMPARE_DELTA: Key[float] = Key("compare_delta", float, "select_slider: Compare's row-level δ")
COMPARE_ALL: Key[bool] = Key("compare_all", bool, "button: add every registered algorithm")
COMPARE_ALGORITHM_FIELD: Key[object] = Key(
    "cmp_", object, "prefix: an algorithm's parameter widget, cmp_<algorithm>_<field>")
COMPARE_SHOWN: Key[object] = Key("_compare_shown", object, "the CompareSpec whose charts are shown")
COMPARE_RANKING: Key[object] = Key("compare_ranking", object, "container: the methods ranked")
COMPARE_RANK_TABLE: Key[object] = Key("compare_rank_table", object, "dataframe: the ranking")
COMPARE_LOSS: Key[object] = Key(
    "compare_loss", object, "chart: one small panel per method (a click opens Explore)")
COMPARE_MORE: Key[bool] = Key("compare_more", bool, "toggle: the other metrics' figures")
COMPARE_METRIC: Key[object] = Key("compare_", object, "prefix: chart of one more metric, compare_<metric>")
COMPARE_STRUCTURE: Key[object] = Key("compare_structure", object, "chart: each structure's success rate")
COMPARE_SECONDS: Key[object] = Key("compare_seconds", object, "chart: run time")
COMPARE_TABLE: Key[object] = Key("compare_table", object, "dataframe: the runs' medians")
COMPARE_GUARANTEE: Key[object] = Key("compare_guarantee", object, "container: the same-guarantee note")
COMPARE_TOP: Key[object] = Key("compare_top", object, "container: run state and results")
COMPARE_RUN: Key[bool] = Key("compare_run", bool, "button: run (or continue) the comparison")
COMPARE_STATE: Key[object] = Key("compare_state", object, "container: the comparison's run state line")
COMPARE_EPS_RANGE: Key[tuple] = Key(
    "compare_eps_range", tuple, "range select_slider: the comparison's row-level ε range")
COMPARE_POINTS: Key[int] = Key("compare_points", int, "number_input: the number of ε values")
COMPARE_REPS: Key[int] = Key("compare_reps", int, "number_input: repetitions per ε")
COMPARE_PROGRESS: Key[object] = Key("compare_progress", object, "container: the comparison's progress bar")
COMPARE_STOP: Key[bool] = Key("compare_stop", bool, "button: stop the running comparison")

KIND_TEXT = {
    "zcdp": "its own budget is ρ-zCDP; calibrated so that the row-level (ε, δ) of its ledger (zCDP → "
            "DP conversion, and group privacy for a sample-and-aggregate stage) meets the target",
    "pure": "its own budget is pure ε-DP; calibrated so that its row-level ε meets the target",
    "approx": "its own budget is (ε, δ)-DP; calibrated so that its row-level (ε, δ) meets the target",
    "none": "no privacy guarantee: the non-private reference",
}
ACCURACY = ("loss", "labeling_failure", "center_error")
SLOT = "compare"
#: What every private number on this page is (never "a private release": nothing is released).
SIMULATED = ("a **simulation**: seeded runs on the same rows, measured exactly (non-private "
             "diagnostics), not a release")
#: Shown from the page's first element until the results (or the reason for none) replace it.
LOADING = "Loading the dataset and the comparison (results appear here)…"


def _title(spec: AlgorithmSpec) -> str:
    if spec.is_private or "non-private" in spec.title:  # no "(non-private) (non-private reference)"
        return spec.title
    return f"{spec.title} ({REFERENCE})"


# ----------------------------------------------------------------------------- settings


def _chosen(names: list[str], default: list[str]) -> list[str]:
    calg = state.get("calg")
    if calg == "all":
        return names
    if calg == "default":
        return default
    return [a for a in calg.split(",") if a in names]


def _algorithms_changed(names: list[str], default: list[str]) -> None:
    picked = st.session_state[keys.COMPARE_ALGORITHMS]
    if set(picked) == set(names):
        state.update(calg="all")
    elif list(picked) == list(default):
        state.update(calg="default")
    else:
        state.update(calg=",".join(picked) or "default")


def _add_all(names: list[str]) -> None:
    st.session_state[keys.COMPARE_ALGORITHMS] = list(names)
    state.update(calg="all")


def _sync_delta() -> None:
    """Compare's δ (``cdelta``, its own URL key) follows the app's δ whenever that changed since
    this page last looked (issue 36: dataset, k, target ε and δ carry across pages); a link's own
    ``cdelta`` stands while the app's δ is unchanged."""
    p = state.params()
    seen = st.session_state.get(COMPARE_SEEN_DELTA, state.defaults()["delta"])
    if p["delta"] != seen:
        state.update(cdelta=float(p["delta"]))
    st.session_state[COMPARE_SEEN_DELTA] = p["delta"]


def _delta_changed() -> None:
    value = float(st.session_state[COMPARE_DELTA])
    state.update(cdelta=value, delta=value)  # the app's δ from now on
    st.session_state[COMPARE_SEEN_DELTA] = value


def _settings(specs: list[AlgorithmSpec], ds) -> list[AlgorithmSpec]:
    """Algorithms, row-level ε range and δ, points, repetitions (bound to URL parameters)."""
    p = state.params()
    names = [s.name for s in specs]
    by_name = {s.name: s for s in specs}
    default = [a for a in compare.default_set(ds, state.params()) if a in names]
    state.seed_widget("calg", keys.COMPARE_ALGORITHMS, lambda v: _chosen(names, default))
    # full width, short chip labels: every chip shows its whole name at 1280 px
    st.multiselect("Algorithms (by default: the set for this data's shape)", names,
                   key=keys.COMPARE_ALGORITHMS, format_func=lambda n: _title(by_name[n]),
                   on_change=_algorithms_changed, args=(names, default))
    st.caption(dpviz.compare_set.rule_text() + " For this data (n = "
               f"{ds.n:,}, d = {ds.d}, k = {p['k']}): "
               + ", ".join(_title(by_name[n]) for n in default) + ".")
    c1, c2 = st.columns([3, 2])
    c3, c4, c5 = st.columns(3)
    sweep.range_and_runs(c1, c3, c4, widgets=(COMPARE_EPS_RANGE, COMPARE_POINTS, COMPARE_REPS),
                         keys=("celo", "cehi", "cpts", "creps"),
                         points=(1, 12), max_reps=50,
                         reps_help="Each repetition redraws every seeded random choice (pieces and noise).")
    _sync_delta()
    state.seed_widget("cdelta", COMPARE_DELTA)
    c2.select_slider("Row-level δ", options=sorted(set(controls.DELTA_GRID) | {p["cdelta"]}),
                     format_func=controls.fmt_delta, key=COMPARE_DELTA, on_change=_delta_changed)
    c5.markdown(f"k = {p['k']}, seed = {p['seed']} (from Explore)")
    c5.button(f"Add all {len(names)}", key=COMPARE_ALL, on_click=_add_all, args=(names,),
              disabled=len(_chosen(names, default)) == len(names),
              help="Add every registered algorithm (on the default lesson precomputed; elsewhere "
                   "slower: every method runs at every ε and repetition).")
    return [by_name[n] for n in _chosen(names, default)]


def _param_widget(spec: AlgorithmSpec, f: dataclasses.Field, h) -> object:
    """One parameter's widget, generated from its hint."""
    key, label = f"{COMPARE_ALGORITHM_FIELD}{spec.name}_{f.name}", h.label or f.name
    lo = None if h.low is None else h.low
    hi = None if h.high is None else h.high
    if h.choices is not None:
        options = list(h.choices)
        st.selectbox(label, options, index=options.index(f.default), key=key, help=h.help or None)
    elif isinstance(f.default, bool):
        st.checkbox(label, value=f.default, key=key, help=h.help or None)
    elif isinstance(f.default, int):
        st.number_input(label, min_value=None if lo is None else int(lo),
                        max_value=None if hi is None else int(hi), value=int(f.default),
                        step=int(h.step or 1), key=key, help=h.help or None)
    elif isinstance(f.default, float):
        st.number_input(label, min_value=None if lo is None else float(lo),
                        max_value=None if hi is None else float(hi), value=float(f.default),
                        step=float(h.step) if h.step else None, format="%g", key=key,
                        help=h.help or None)
    else:
        st.text_input(label, value=str(f.default), key=key, help=h.help or None)
    return st.session_state[key]


def _algorithm_box(spec: AlgorithmSpec):
    """The paper-level statement, the reference and the parameter form of one algorithm; returns
    its parameters (None, with the error shown, when they are invalid)."""
    with st.expander(f"{_title(spec)}: paper, guarantee and parameters"):
        st.markdown(f"**Reference.** {spec.paper}")
        if spec.description:
            st.markdown(spec.description)
        st.markdown(f"**Guarantee.** {KIND_TEXT[spec.budget_kind].capitalize()}.")
        values = {f.name: _param_widget(spec, f, h) for f, h in param_fields(spec.params)}
        try:
            return spec.make_params(**values)
        except ValueError as exc:
            st.error(safe.md(exc))  # may quote a URL value: shown as text
            return None


# ----------------------------------------------------------------------------- clicks


def _open_explore(chart_key: str) -> None:
    """Selection callback: the clicked (algorithm, ε) opens in Explore on the next run."""
    spec = st.session_state.get(COMPARE_SHOWN)
    event = st.session_state.get(chart_key) or {}
    points = (event.get("selection", {}) if hasattr(event, "get") else {}).get("points", []) or []
    for pt in points:
        hit = figures.clicked_point(dict(pt))
        if hit is None or spec is None:
            continue
        state.update(**compare.explore_params(*hit, spec))
        st.session_state[keys.GOTO_EXPLORE] = True
        return


# ----------------------------------------------------------------------------- results


def _charts(spec: sweep.CompareSpec, part: sweep.Partial) -> None:
    """At a glance: the methods ranked, then one small panel per method; everything else (other
    metrics, structure, run time, the runs) one click away."""
    frame = part.frame()
    st.session_state[COMPARE_SHOWN] = spec
    _ranking(frame)
    st.caption(f"Every private number is {SIMULATED}. Dotted: the **{REFERENCE}** (no "
               "privacy). Click a point to open that method and budget in Explore.")
    a11y.chart(figures.small_multiples_figure(frame), key=COMPARE_LOSS,
               on_select=lambda: _open_explore(COMPARE_LOSS), selection_mode="points")
    # Drawn only when asked: every chart costs the browser time (issue 27: the default view ≤ 10 s).
    if st.toggle("More figures: other accuracy metrics, how often each structure succeeded, run "
                 "time", key=COMPARE_MORE):
        figs = figures.compare_figures(frame)
        for metric in ACCURACY[1:]:
            if metric in figs:
                key = f"{COMPARE_METRIC}{metric}"
                a11y.chart(figs[metric], key=key, on_select=lambda key=key: _open_explore(key),
                           selection_mode="points")
        a11y.chart(figs["structure"], key=COMPARE_STRUCTURE)
        a11y.chart(figs["seconds"], key=COMPARE_SECONDS)
    with st.expander(f"The runs: median per algorithm and ε (simulation; {REFERENCE} at ε = ∞)"):
        st.dataframe(part_summary(part), hide_index=True, key=COMPARE_TABLE)
        top = max(spec.epsilons)
        st.caption(f"Rerun one of them yourself at row-level ε = {top:g} (a new seed: a new draw):")
        st.code("\n".join(compare.reproduce_call(name, top, spec) for name, _ in spec.algorithms
                          if dpviz.registry.get(name).is_private), language="python")


def _ranking(frame) -> None:
    """The methods ranked by the library's rule over the whole ε range (:mod:`dpviz.ranking`),
    the rule in words, each cell's spread, ties as ties, a note on every rising median."""
    rank = dpviz.ranking.rank_methods(frame)
    rule = rank.attrs["rule"]
    runs = int(rank["runs"].min()) if len(rank) else 0
    with st.container(key=COMPARE_RANKING):
        st.markdown(f"**Ranked by reach over the whole ε range**: reach = the smallest row-level ε "
                    f"at which the median normalized loss is ≤ {rule.target:g}; a tie on reach goes to "
                    "the lower mean loss over the range; “1=” marks a tie. Each cell: median "
                    f"(q10–q90) of {runs} runs.")
        # a static table (text, not a canvas): projected whole, read by screen readers and tests
        shown = rank.drop(columns=["algorithm", "note", "runs"]).assign(
            method=[m if r == "—" else m.split(" (")[0] for m, r in zip(rank["method"], rank["rank"],
                                                                        strict=True)],
            reach=[("—" if r == "—" else f"{v:g}" if v != float("inf") else "never")
                   for r, v in zip(rank["rank"], rank["reach"], strict=True)],
            **{"mean loss": [dpviz.ranking.short(v) for v in rank["mean loss"]]})
        shown.attrs = {}  # the rule and the tied groups are said in words below
        with st.container(key=COMPARE_RANK_TABLE):
            st.table(shown.rename(columns={"reach": "reach ε", "mean loss": "mean"}), hide_index=True,
                     border="horizontal")
        st.caption(dpviz.ranking.rule_text(rule) + f" Normalized loss: 0 = as good as the {REFERENCE}, "
                   "1 = no better than no answer.")
        lines = [f"**Tied** (same reach, mean losses within {rule.tie:g}): " + ", ".join(sorted(group))
                 for group in rank.attrs["tied"]]
        lines += [f"**{m}**: {note}." for m, note, r in zip(rank["method"], rank["note"], rank["rank"],
                                                              strict=True) if note and r != "—"]
        if lines:
            st.markdown("\n".join(f"- {line}" for line in lines))


def part_summary(part: sweep.Partial):
    from dpviz.sweeps import summarize

    s = summarize(part.frame())
    return s.rename(columns={"median": "median loss", "budget": "native budget (ρ or ε)"})


def _guarantee() -> None:
    with st.container(key=COMPARE_GUARANTEE):
        st.info("Every algorithm runs at the **same row-level guarantee**: (ε, δ)-DP for adding or "
                "removing one row of your data — not at the same nominal ρ. Each is calibrated "
                "through its own accounting (a zCDP budget through the zCDP → DP conversion; a "
                "sample-and-aggregate stage, where one row replaces one tuple, through group "
                "privacy), so a lower curve is a better algorithm at the same promise to each person.",
                icon=":material/balance:")


def _state_line(spec: sweep.CompareSpec, part: sweep.Partial | None, n_algos: int) -> str:
    """The one message of the run state: idle, running or done (stopped), never two at once."""
    what = (f"{n_algos} algorithm(s) at row-level ε ∈ {{{sweep.fmt_epsilons(spec.epsilons)}}}, "
            f"δ = {controls.fmt_delta(spec.delta)}, {spec.reps} repetition(s) each")
    job = jobs.running(SLOT)
    if job is not None and job.key == spec:
        done = 0 if part is None else part.done
        return (f"Running the comparison: {what}. The ranking appears as runs finish "
                f"({done} of {spec.total} so far).")
    if part is None or part.done == 0:
        return (f"Press **Run comparison** to run {what}. Results are kept for this session and "
                "dataset.")
    if part.stopped and not part.complete:
        return f"Stopped after {part.done} of {part.total} runs; the ranking uses the finished ones."
    where = {"precomputed": " (precomputed)",
             "session": ""}.get(getattr(part, "origin", "session"), " (computed earlier on this "
                                "server by another session for the same public data)")
    return f"Done: {what}{where}."


def main() -> None:
    if st.session_state.pop(keys.GOTO_EXPLORE, False):
        st.switch_page(st.session_state[keys.PAGES]["explore"])
    # The loading message is sent before the title's text, so no frame shows the title alone: a
    # fresh Compare once showed only its title for 0.5 s (test_e2e_compare_first_screen, issue 38).
    # The run state's box holds one placeholder from the first element on: the loading message is
    # replaced by the state in one delta, never by an empty box (an emptied container showed the
    # title alone for 0.7 s while the ranking was computed, issue 43).
    title = st.empty()
    with st.container(key=COMPARE_STATE):
        loading = st.empty()
    loading.info(LOADING, icon=":material/hourglass_top:")
    title.title("Compare methods at one guarantee")
    got = sweep.page_dataset()
    if got is None:
        loading.empty()
        _guarantee()
        return
    ds, radius = got
    top = st.container(key=COMPARE_TOP)  # run state and results: filled after the settings
    # below the results (the sidebar names the data too): the ranking fits the first 1280×720 screen
    st.caption(data_source.describe(ds) + f" · n_declared = {ds.n:,} (taken as public, as in "
               "Explore) · every method at the **same row-level (ε, δ)** (below: why)")
    st.subheader("Settings")
    specs = _settings(list(dpviz.algorithms(applicable_to=int(ds.d))), ds)
    chosen = [(s.name, _algorithm_box(s)) for s in specs]
    _guarantee()
    algos = tuple((n, p) for n, p in chosen if p is not None)
    p = state.params()
    spec = sweep.CompareSpec(
        ds.content_hash, algos, sweep.eps_grid(p["celo"], p["cehi"], int(p["cpts"])),
        float(p["cdelta"]), int(p["creps"]), int(p["k"]), int(ds.d), float(radius), int(ds.n),
        int(p["seed"]))
    running = jobs.running(SLOT)
    if running is not None and running.key != spec:
        jobs.stop(SLOT)  # the settings changed under a running comparison
    with top:
        part = sweep.run_button(SLOT, spec, noun="comparison", key=COMPARE_RUN,
                                progress_key=COMPARE_PROGRESS, stop_key=COMPARE_STOP, unit="run",
                                start=lambda resume: _start(ds, spec, resume), disabled=not algos)
        # the loading message's place takes the run state: a message stands there throughout
        line = _state_line(spec, part, len(algos))
        (loading.warning if line.startswith("Stopped") else loading.info)(line)
        if part is not None and part.done > 0:
            _charts(spec, part)


def _start(ds, spec: sweep.CompareSpec, resume: sweep.Partial | None = None) -> None:
    """Run ``spec`` as the page's job, one (repetition, algorithm) per piece."""
    ref = run.reference(ds, spec.k).cost

    def piece(i: int, cancel, progress):
        return sweep.compare_piece(ds, spec, i, ref, cancel=cancel, progress=progress)

    sweep.start(SLOT, spec, piece, public=ds.source in sweep.PUBLIC_SOURCES, resume=resume)


main()
