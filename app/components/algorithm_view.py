"""Explore for any registered algorithm: a form generated from its spec, a live row-level ε,
its storyboard, privacy statement and ledger.

Nothing here names an algorithm: the picker lists ``dpviz.algorithms()``, the form is built from
the parameter dataclass's hints (``dpviz.registry.param_fields``), the run goes through
``dpviz.registry`` (each algorithm calibrated to the row-level (ε, δ) target), and the figure is
the family's registered storyboard (``dpviz.viz.storyboards``). A family may register a richer
live page instead (``app/components/live_pages.py``; FriendlyCore's is ``friendlycore/page.py``).

Two stages as everywhere: the spec's non-private stage is cached per (rows, algorithm, its
stage fields, k, seed, Λ, declared n), so moving ε reruns only the private part.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import streamlit as st

import dpviz
from app.components import (
    a11y,
    controls,
    downloads,
    keys,
    ledger_view,
    live_chart,
    run,
    safe,
    simulation,
    state,
)
from app.components.keys import Key
from dpviz.data.holdout import PublicHoldout, hold_out_public
from dpviz.registry import AlgorithmSpec, Public, param_fields
from dpviz.viz.privacy import ledger_figure
from dpviz.viz.storyboards import ExplorationContext, explorations, story_steps, storyboard_builder

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
ALG_FORM_ERROR: Key[str] = Key(
    "_alg_form_error", str, "the message of a generated parameter form's refused Apply")
EXPLORATION_FOR: Key[tuple] = Key(
    "_exploration_for", tuple, "(algorithm, view) whose exploration options are shown")
EXPLORATION_MEMO: Key[dict] = Key(
    "_exploration_memo", dict, "(content hash, algorithm) → computed explorations")
_STEP: Key[int] = Key("_story_step", int, "the step-through's current panel")
PICKER_KEY: Key[str] = Key("ex_algorithm", str, "the algorithm Explore shows")
ALG_FORM: Key[object] = Key(
    "alg_form_", object, "prefix: another algorithm's generated sidebar form, alg_form_<algorithm>")
ALG_APPLY: Key[bool] = Key("alg_apply", bool, "form_submit_button: Apply of a generated form")
ALG_PARAM: Key[object] = Key(
    "algp_", object, "prefix: a generated form's field (its value), algp_<algorithm>_<field>")
ALG_PUBLIC_PCT: Key[int] = Key(
    "algpub_", int, "prefix: slider, the share of rows declared public, algpub_<algorithm>")
PUBLIC_ROWS_NOTE: Key[object] = Key(
    "public_rows_note", object, "sidebar container: the warning that the declared-public rows get no privacy")
PLAIN_PRIVACY: Key[object] = Key("plain_privacy", object, "container: the guarantee in plain words")
ALG_VIEW: Key[str] = Key("alg_view", str, "segmented_control: a generic algorithm's view picker")
ALG_STORYBOARD: Key[object] = Key("alg_storyboard", object, "chart: a generic algorithm's storyboard")
STEP_PREV: Key[bool] = Key("step_prev", bool, "button: the step-through's previous panel")
STEP_NEXT: Key[bool] = Key("step_next", bool, "button: the step-through's next panel")
STEP_NARRATION: Key[object] = Key("step_narration", object, "container: the step's sentence of narration")
STORYBOARD_STEP: Key[object] = Key("storyboard_step", object, "chart: the step-through's one panel")
EXPLORATION: Key[object] = Key("exploration", object, "container: a registered exploration's charts")
EXPLORATION_OPTION: Key[object] = Key(
    "explore_opt_", object, "prefix: an exploration's option widget, explore_opt_<algorithm>_<option>")
EXPLORATION_COMPUTE: Key[bool] = Key(
    "explore_compute_", bool, "prefix: button, compute an exploration, explore_compute_<algorithm>")
EXPLORATION_CHART: Key[object] = Key(
    "alg_exploration_", object, "prefix: an exploration's chart, alg_exploration_<title> (then _<i>)")

#: The row-level ε target on a log-like grid (one grid for every algorithm, FriendlyCore included).
EPS_GRID = controls.EPS_GRID


def _label(spec: AlgorithmSpec) -> str:
    return spec.title


def algorithm_picker(d: int) -> AlgorithmSpec:
    """The algorithm Explore shows (bound to the URL key ``alg``): those that serve d-column data
    (``dpviz.algorithms(applicable_to=d)``); the others are listed with the registry's reason."""
    rows = dpviz.registry.applicability(int(d), private_only=True)
    specs = {s.name: s for s, why in rows if why is None}
    state.seed_widget("alg", PICKER_KEY)
    if st.session_state.get(PICKER_KEY) not in specs:
        asked = st.session_state.get(PICKER_KEY)
        default = state.DEFAULT_ALGORITHM
        first = default if default in specs else next(iter(specs))
        st.session_state[PICKER_KEY] = first
        state.update(alg=first)
        why = next((w for s, w in rows if s.name == asked and w is not None), None)
        if why is not None:  # a link or the previous dataset chose it: say why it is not shown
            st.warning(f"{why} Showing {specs[first].title} instead.", icon=":material/info:")
    # In the sidebar, above the run settings: the main area's first screen keeps the slider, the
    # chart and the privacy sentence together at 1280×720 (issue 27, defect 3).
    bar = st.sidebar
    bar.selectbox("Algorithm", list(specs), format_func=lambda n: _label(specs[n]), key=PICKER_KEY,
                  on_change=state.on_change("alg", PICKER_KEY, str),
                  help="Every registered private clustering algorithm that serves this data. Each is "
                       "run at the row-level (ε, δ) you choose; FriendlyCore also has its paper's "
                       "ρ-zCDP controls.")
    spec = specs[state.get("alg")]
    bar.caption(spec.description + " Every number says whether it is a **private** output or a "
                "**non-private diagnostic** (for you only).")
    left_out = [why for _, why in rows if why is not None]
    if left_out:
        with bar.expander(f"{len(left_out)} algorithm(s) do not apply to this data"):
            st.markdown("\n".join(f"- {why}" for why in left_out))
    return spec


# ----------------------------------------------------------------------------- the form


def _widget_key(spec: AlgorithmSpec, field: str) -> str:
    return f"{ALG_PARAM}{spec.name}_{field}"


def _current(spec: AlgorithmSpec) -> dict[str, Any]:
    values = {f.name: f.default for f, _ in param_fields(spec.params)}
    values.update(state.algorithm_params(spec.name))
    return values


def _field_widget(spec: AlgorithmSpec, f, h, value: Any, auto: str | None = None) -> None:
    key = _widget_key(spec, f.name)
    label = h.label or f.name
    if auto and not st.session_state.get(key, value):  # left at 0: say what "automatic" means here
        label = f"{label}: {auto}"
    kw = dict(key=key, help=h.help or None)
    if key not in st.session_state:
        st.session_state[key] = value
    if h.choices is not None:
        st.selectbox(label, list(h.choices), **kw)
    elif h.slider and isinstance(f.default, (int, float)) and h.low is not None and h.high is not None:
        cast = int if isinstance(f.default, int) else float
        step = cast(h.step) if h.step else (1 if cast is int else None)
        if cast is float and step:  # as many decimals as the step (the default %0.2f shows 10⁻³ as 0.00)
            kw["format"] = f"%.{max(0, -math.floor(math.log10(step)))}f"
        st.slider(label, min_value=cast(h.low), max_value=cast(h.high), step=step, **kw)
    elif isinstance(f.default, bool):
        st.checkbox(label, **kw)
    elif isinstance(f.default, int):
        st.number_input(label, min_value=None if h.low is None else int(h.low),
                        max_value=None if h.high is None else int(h.high),
                        step=int(h.step or 1), **kw)
    elif isinstance(f.default, float):
        st.number_input(label, min_value=h.low, max_value=h.high, format="%.6g", **kw)
    else:
        st.text_input(label, **kw)


def _apply(spec: AlgorithmSpec) -> None:
    values = {f.name: st.session_state[_widget_key(spec, f.name)] for f, _ in param_fields(spec.params)}
    try:
        spec.make_params(**values)
    except (ValueError, TypeError) as exc:
        st.session_state[ALG_FORM_ERROR] = safe.md(exc)  # may quote a URL value
        return
    st.session_state.pop(ALG_FORM_ERROR, None)
    defaults = {f.name: f.default for f, _ in param_fields(spec.params)}
    for name, v in values.items():
        key = state.algorithm_key(spec.name, name)
        if v == defaults[name]:
            state.params().pop(key, None)
        else:
            state.update(**{key: v})


def _auto_values(spec: AlgorithmSpec, values: dict[str, Any], pub: Public | None) -> dict[str, str]:
    """The spec's ``auto_values`` at the current (ε, δ) and public inputs ({} if none or invalid)."""
    if spec.auto_values is None or pub is None:
        return {}
    try:
        return spec.auto_values(float(state.get("eps")), float(state.get("delta")), pub,
                                spec.make_params(**values))
    except (ValueError, TypeError):
        return {}


def params_form(spec: AlgorithmSpec, pub: Public | None = None) -> None:
    """The spec's parameters as a sidebar form (generated from the field hints); a field left at
    its automatic default is labelled "automatic (value)" from the spec's ``auto_values``."""
    values = _current(spec)
    auto = _auto_values(spec, values, pub)
    with st.sidebar.form(f"{ALG_FORM}{spec.name}"):
        st.markdown(f"**{spec.title}** settings")
        for f, h in param_fields(spec.params):
            _field_widget(spec, f, h, values[f.name], auto.get(f.name))
        st.form_submit_button("Apply", key=ALG_APPLY, type="primary", on_click=_apply, args=(spec,))
    err = st.session_state.get(ALG_FORM_ERROR)
    if err:
        st.sidebar.error(err)


# ----------------------------------------------------------------------------- declared public rows

#: The seed of the public split: drawn once, the same for every run and algorithm on a dataset.
PUBLIC_SPLIT_SEED = simulation.PUBLIC_SPLIT_SEED
#: Largest share of the rows the user may declare public.
PUBLIC_MAX_PERCENT = 50


def _public_key(spec: AlgorithmSpec) -> str:
    return f"{ALG_PUBLIC_PCT}{spec.name}"


def public_control(spec: AlgorithmSpec, n: int) -> PublicHoldout | None:
    """For a spec with ``uses_public_data``: the share of rows the user declares PUBLIC (0: none)."""
    if not spec.uses_public_data:
        return None
    key = _public_key(spec)
    st.session_state.setdefault(key, 0)
    pct = st.sidebar.slider(
        "Rows declared PUBLIC (%)", 0, PUBLIC_MAX_PERCENT, step=5, key=key,
        help="Some algorithms can use records that are already public (Acs et al.: k initial centres "
             "from public data). Declare a share of these rows public only if they really are.")
    if pct == 0 or n < 2:
        st.sidebar.caption(f"No rows declared public: {spec.title} runs without public records "
                           "(kernel k-means then starts from random points in the ball, less accurately).")
        return None
    split = hold_out_public(n, pct / 100.0, rng=PUBLIC_SPLIT_SEED)
    with st.sidebar.container(key=PUBLIC_ROWS_NOTE):
        st.warning(f"{split.n_public:,} rows ({pct}%, drawn once at random with seed {PUBLIC_SPLIT_SEED}) "
                   f"are declared PUBLIC: they get **no privacy**, and the algorithm may read them "
                   f"freely. The private run uses only the other {split.n_private:,} rows, and the "
                   "guarantee covers those rows.", icon=":material/public:")
    return split


# ----------------------------------------------------------------------------- running
# Every run goes through the one runner, app/components/simulation.py (seeds, stage cache, the
# run through dpviz.run, prefetch, re-draws, the privacy number).


def _rows(ds, public: PublicHoldout | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(the private rows, the declared-public rows or None)."""
    return simulation.rows(ds, public)


def simulate(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilon: float, delta: float,
             seed: int, public: PublicHoldout | None = None, draw: int = 0):
    """One seeded simulation of ``spec`` at the row-level target (:func:`simulation.run`)."""
    return simulation.run(ds, spec, p, pub, epsilon=epsilon, delta=delta, seed=seed, public=public,
                          draw=draw)


def prefetch_neighbours(ds, spec: AlgorithmSpec, p: Any, pub: Public, *, epsilon: float, delta: float,
                        seed: int, public: PublicHoldout | None = None) -> list:
    """Start the runs one ε step away in the background (:func:`simulation.prefetch`), for every
    algorithm as for FriendlyCore: a step there then only waits for what is left."""
    return simulation.prefetch(ds, spec, p, pub, epsilons=controls.eps_neighbours(epsilon), delta=delta,
                               seed=seed, public=public)


# ----------------------------------------------------------------------------- the page


def own_budget_readout(spec: AlgorithmSpec, result) -> None:
    """The algorithm's own budget under the row-level ε slider, from the run's plan
    (``Result.plan``, written by ``dpviz.run``): :func:`controls.own_budget_readout`."""
    controls.own_budget_readout(spec.title, spec.budget_kind, getattr(result, "plan", None))


def plain_privacy(result) -> None:
    """The plain-words sentence FriendlyCore's readout shows, for every algorithm: how much one row
    can move any outcome's probability, from the run's re-accounted statement
    (:func:`simulation.stated`: ``Result.statement``, the number every surface shows)."""
    st.caption(dpviz.privacy.odds_sentence(simulation.stated(result)))


def _status(spec: AlgorithmSpec, result) -> None:
    with st.container(key=keys.RUN_STATUS):
        if result.centers is None:
            st.error(f"{spec.title} released no centers: {result.failure}.")
        else:
            st.success(f"{spec.title} released {len(result.centers)} centers "
                       "(simulation: seeded, not a release).")


def _privacy(spec: AlgorithmSpec, result, delta: float, public: PublicHoldout | None = None) -> None:
    g = simulation.stated(result)  # the run's re-accounted statement: the one number
    with st.container(key=keys.PRIVACY_STATEMENT):
        st.markdown(f"**Row-level guarantee: (ε = {g.eps:.3g}, δ = {g.delta:.2g})-DP** for adding or "
                    "removing one row of your data.")
        if public is not None:
            st.markdown(f"**{public.n_public:,} rows were declared PUBLIC and have no privacy.** The "
                        f"guarantee covers the other {public.n_private:,} rows (the private run's "
                        f"declared size); the public rows were used as {spec.title}'s public records.")
        factor = math.exp(g.eps)
        st.markdown(f"Any one row changes the probability of any outcome by at most a factor of "
                    f"{factor:.3g} (e^ε), except with probability {g.delta:.2g} (δ).")
        budget = result.params.get("budget", "—")
        st.caption(f"{spec.title}'s own budget after calibration: {budget} "
                   f"(budget kind: {spec.budget_kind}). Reference: {spec.paper}. The ledger below "
                   "lists every spend; its zCDP column converts (ε, δ) spends as ε²/2 for display.")
    live_chart.live_chart(ledger_figure(result.ledger), key=keys.LEDGER_CHART)
    ledger_view.ledger_table_view(result.ledger)


def _tiles(ds, result, ref) -> None:
    from dpviz import metrics

    tag = "non-private diagnostic"
    with st.container(key=keys.METRICS_TILES):
        c1, c2, c3 = st.columns(3)
        loss = None
        if result.centers is not None and ref is not None:
            loss = float(metrics.normalized_loss(ds.X, result.centers, reference_cost=ref.cost))
        c1.metric("Normalized k-means loss", "—" if loss is None else f"{loss:.3f}",
                  help="1 − X/Y against the "
                  + (ref.recipe if ref is not None and ref.recipe else "non-private k-means on all rows")
                  + " (0 = as good).")
        c1.caption(tag)
        err = None
        if result.centers is not None and ds.true_centers is not None:
            err = float(metrics.center_error(ds.true_centers, result.centers))
        c2.metric("Center error", "—" if err is None else f"{err:.4f}")
        c2.caption(tag + ("" if err is not None else " (no true centers)"))
        c3.metric("Centers released", "0" if result.centers is None else str(len(result.centers)))
        c3.caption("private output (simulation)")


def exploration_context(ds, spec: AlgorithmSpec, p: Any, pub: Public, result, eps: float, delta: float,
                        ref_centers, public: PublicHoldout | None = None) -> ExplorationContext:
    """What a registered exploration of ``spec`` reads: the run on screen and cached simulations."""
    seed = int(state.get("seed"))

    def other(epsilon: float | None = None, delta_: float | None = None, seed_: int | None = None,
              draw: int | None = None, **changes: Any):
        q = spec.make_params(**{**{f.name: getattr(p, f.name) for f, _ in param_fields(spec.params)},
                                **changes})
        return simulate(ds, spec, q, pub, epsilon=eps if epsilon is None else float(epsilon),
                        delta=delta if delta_ is None else float(delta_),
                        seed=seed if seed_ is None else int(seed_), public=public, draw=int(draw or 0))

    X, _ = _rows(ds, public)
    labels = ds.labels if ds.labels is None or public is None else ds.labels[public.private_idx]
    memo = st.session_state.setdefault(EXPLORATION_MEMO, {}).setdefault((ds.content_hash, spec.name), {})
    return ExplorationContext(result=result, X=X, pub=pub, params=p, epsilon=eps, delta=delta,
                              seed=seed, simulate=lambda epsilon=None, delta=None, seed=None, draw=None,
                              **kw: other(epsilon, delta, seed, draw, **kw),
                              reference_centers=ref_centers, labels=labels, memo=memo)


def _options(view) -> Any:
    """The view's own settings as widgets (generated from its hinted dataclass), or None."""
    if view.options is None:
        return None
    fields = param_fields(view.options)
    cols = st.columns(len(fields)) if fields else []
    values = {}
    for col, (f, h) in zip(cols, fields, strict=True):
        key = f"{EXPLORATION_OPTION}{view.algorithm}_{f.name}"
        label = h.label or f.name
        with col:
            if isinstance(f.default, bool):
                values[f.name] = st.toggle(label, value=f.default, key=key, help=h.help or None)
            elif isinstance(f.default, int):
                values[f.name] = int(st.number_input(label, min_value=int(h.low), max_value=int(h.high),
                                                     value=f.default, step=int(h.step or 1), key=key,
                                                     help=h.help or None))
            else:
                values[f.name] = st.number_input(label, value=f.default, key=key, help=h.help or None)
    return view.options(**values)


def step_through(steps, result, X, *, reference_centers=None, projector=None) -> None:
    """Prev/Next through an algorithm's registered steps (``dpviz.viz.storyboards.story_steps``),
    one panel at a time with a sentence of narration; the list of steps shows where you are. The
    header names the paper's step as the panel's title does ("Panel 4 of 7 — (d) · paper step 5")."""
    i = int(st.session_state.get(_STEP, 0)) % len(steps)

    def move(delta: int) -> None:
        st.session_state[_STEP] = (int(st.session_state.get(_STEP, 0)) + delta) % len(steps)

    c1, c2, c3 = st.columns([1, 1, 6])
    c1.button("◀ Prev", key=STEP_PREV, on_click=move, args=(-1,), disabled=i == 0, width="stretch")
    c2.button("Next ▶", key=STEP_NEXT, on_click=move, args=(1,), disabled=i == len(steps) - 1,
              width="stretch")
    step = steps[i]
    with c3, st.container(key=STEP_NARRATION):
        st.markdown(f"**Panel {i + 1} of {len(steps)} — ({step.key})**"
                    + ("" if step.paper_step is None else f" · paper step {step.paper_step}")
                    + f" {step.narration}")
    left, right = st.columns([3, 1])
    kw = {} if projector is None else {"projector": projector}
    fig = step.builder(result, X, reference_centers=reference_centers, max_points=2_000, **kw)
    fig.update_layout(height=460, margin=dict(l=55, r=10, t=60, b=45), legend=dict(orientation="h", y=-0.15))
    a11y.chart(fig, key=STORYBOARD_STEP, where=left)
    right.markdown("\n".join(f"- **▶ ({s.key}) {s.caption}**" if j == i else f"- ({s.key}) {s.caption}"
                              for j, s in enumerate(steps)))


def show_exploration(view, ctx: ExplorationContext) -> None:
    """One registered exploration of any algorithm: its help, its settings, then its figure(s)
    (two per row); a view with a ``compute_label`` is built after its button is pressed, and
    stays until the run or its settings change."""
    if view.help:
        st.caption(view.help)
    options = _options(view)
    ctx = dataclasses.replace(ctx, options=options)
    if view.compute_label is not None:
        want = (view.algorithm, view.title, ctx.epsilon, ctx.delta, ctx.seed, repr(ctx.params), repr(options),
                ctx.pub)
        if st.button(view.compute_label, key=f"{EXPLORATION_COMPUTE}{view.algorithm}",
                     icon=":material/casino:"):
            st.session_state[EXPLORATION_FOR] = want
        if st.session_state.get(EXPLORATION_FOR) != want:
            st.info(f"Press **{view.compute_label}** to compute this view (a simulation).")
            return
    try:
        with st.spinner(f"Simulating {view.title}…"):
            figs = view.builder(ctx)
    except ValueError as exc:
        st.error(safe.md(exc))
        return
    figs = list(figs) if isinstance(figs, (list, tuple)) else [figs]
    with st.container(key=EXPLORATION):
        # two per row; an odd last one takes the full width
        slots = [c for _ in range(len(figs) // 2) for c in st.columns(2)] + [st.container()] * (len(figs) % 2)
        for i, (slot, fig) in enumerate(zip(slots, figs, strict=False)):
            a11y.chart(fig, key=f"{EXPLORATION_CHART}{view.title}" + (f"_{i}" if i else ""), where=slot)


def render(ds, spec: AlgorithmSpec, radius: float) -> None:
    """Explore for ``spec`` on dataset ``ds`` with the declared radius."""
    params_form(spec, None if spec.uses_public_data else
                Public(n_declared=int(ds.n), d=int(ds.d), k=int(state.get("k")), radius=float(radius)))
    try:
        p = spec.make_params(**_current(spec))
    except (ValueError, TypeError) as exc:
        st.error(safe.md(exc))  # may quote a URL value: shown as text
        return
    k = int(state.get("k"))
    public = public_control(spec, int(ds.n))
    n_private = int(ds.n) if public is None else public.n_private
    pub = Public(n_declared=n_private, d=int(ds.d), k=k, radius=float(radius))
    st.caption(f"{spec.paper}. The declared size n = {n_private:,} is treated as public (a "
               "declaration, like Λ)." + ("" if public is None else
                                         f" It excludes the {public.n_public:,} rows declared public."))
    c1, c2 = st.columns([5, 3])
    with c1:
        eps = controls.eps_slider()
    with c2:
        delta = controls.delta_select()
    try:
        with st.spinner(f"Running {spec.title}…"):
            result = simulate(ds, spec, p, pub, epsilon=eps, delta=delta, seed=int(state.get("seed")),
                              public=public)
    except Exception as exc:  # ValueError: the user's settings; anything else a library bug
        with st.container(key=keys.EXPLORE_ERROR):
            st.error(run.error_text(exc))
        return
    prefetch_neighbours(ds, spec, p, pub, epsilon=eps, delta=delta, seed=int(state.get("seed")),
                        public=public)
    with c1, st.container(key=keys.OWN_BUDGET_READOUT):
        own_budget_readout(spec, result)
    with c1, st.container(key=PLAIN_PRIVACY):
        plain_privacy(result)
    st.info("Simulation — not a release: seeded and reproducible from the URL, so do not publish "
            "these numbers.", icon=":material/science:")
    _status(spec, result)
    ref = run.reference(ds, k) if ds.n >= k else None
    _tiles(ds, result, ref)
    extra = {v.title: v for v in explorations(spec.name)}
    view = st.segmented_control("View", ("Storyboard", *extra, "Privacy", "Downloads"), key=ALG_VIEW,
                                default="Storyboard", required=True, label_visibility="collapsed")
    ref_centers = ref.centers if ref is not None else ds.true_centers
    if view == "Storyboard":
        steps = story_steps(spec.name)
        if steps and st.toggle("Step through (one step at a time, with narration)", key=keys.STEP_MODE):
            step_through(steps, result, _rows(ds, public)[0], reference_centers=ref_centers)
        else:
            fig = storyboard_builder(spec.name)(result, _rows(ds, public)[0], reference_centers=ref_centers)
            a11y.chart(fig, key=ALG_STORYBOARD)
    elif view in extra:
        show_exploration(extra[view], exploration_context(ds, spec, p, pub, result, eps, delta, ref_centers,
                                                          public))
    elif view == "Privacy":
        _privacy(spec, result, delta, public)
    else:
        st.download_button("Centers (CSV, simulation)", downloads.centers_csv(result, ds.feature_names),
                           file_name=f"dpviz_{spec.name}_centers.csv", mime="text/csv",
                           key=keys.DL_CENTERS, on_click="ignore", icon=":material/download:")
        st.download_button("Privacy ledger (CSV)", lambda: downloads.ledger_csv(result),
                           file_name=f"dpviz_{spec.name}_ledger.csv", mime="text/csv",
                           key=keys.DL_LEDGER, on_click="ignore", icon=":material/download:")
