"""Present: two budgets side by side in large type, the sidebar hidden (a projector in a lecture).

The current dataset (Data page) and the algorithm of the URL (``alg``, FriendlyCore by default)
run at two row-level ε chosen here (URL keys ``pa`` and ``pb``); each side shows its released
centers over the data, who answered (the algorithm or its backup), the normalized loss (a
non-private diagnostic) and its guarantee in one large sentence. Every run is a seeded simulation
on the same rows (badged), through the registry (``dpviz.run``).

The default lesson opens on ε = 0.02 (the backup's centers visibly wrong, normalized loss 0.86)
beside ε = 10 (FriendlyCore's core answers, 0.000), with the lesson's rows control (issue 43).
FriendlyCore runs as Explore runs it (its tuple stage, shared by every session on a public recipe,
then only the private stage per ε), and every stop of the sliders is prefetched once the page is
drawn, so a slider move waits for no run.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import dpviz
import dpviz.metrics
import dpviz.viz
import dpviz.viz.answered
from app.components import a11y, cache, keys, modes, safe, state, sweep
from app.components import run as shared
from app.components.friendlycore import lesson
from app.components.friendlycore import run as fc_run
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
PRESENT_BADGE: Key[object] = Key("present_badge", object, "the page's simulation badge")
PRESENT_B: Key[float] = Key("present_b", float, "select_slider: the right side's row-level ε")
PRESENT_FIG: Key[object] = Key("present_fig_", object, "prefix: chart of one side, present_fig_<a|b>")
PRESENT_ANSWER: Key[object] = Key(
    "present_answer_", object, "prefix: container, one side's ε and odds sentence, present_answer_<a|b>")
PRESENT_ROWS: Key[int] = Key("present_rows", int, "segmented_control: the lesson's rows on Present")
PRESENT_LOSS: Key[object] = Key(
    "present_loss_", object, "prefix: container, one side's normalized loss, present_loss_<a|b>")

#: Large type, no sidebar, no toolbar: readable from the back of a lecture hall at 1280×720.
PRESENTER_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], header[data-testid="stHeader"]
  { display: none !important; }
.stMainBlockContainer { padding-top: 1rem; max-width: 100%; }
.stMainBlockContainer p, .stMainBlockContainer li { font-size: 1.45rem; line-height: 1.4; }
.stMainBlockContainer h1 { font-size: 2.4rem; }
.stMainBlockContainer h2 { font-size: 2rem; }
</style>
"""
#: The sliders' stops: the Explore slider's low end (the lesson's wrong answer) up to ε = 30.
BUDGETS = (0.02, 0.05, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


def _friendlycore(ds, radius: float, eps: float, *, prefetch: bool = False):
    """FriendlyCore at ε exactly as Explore runs it (the URL's k, t, δ, seed, …): the shared tuple
    stage, then the private stage (cached; with ``prefetch``, started on the background worker)."""
    cfg = fc_run.RunConfig.from_params(state.params(), radius).with_t(ds).at_eps(eps)
    stage = fc_run.tuple_stage(ds, cfg)
    if prefetch:
        return fc_run.prefetch(ds, stage, cfg)
    return fc_run.private_run(ds, stage, cfg)


def _run(ds, radius: float, name: str, eps: float):
    """The run of one side (cached per session)."""
    p = state.params()
    if name == state.DEFAULT_ALGORITHM:
        return _friendlycore(ds, radius, eps)

    def compute():
        return dpviz.run(name, ds.X, int(p["k"]), epsilon=float(eps), delta=float(p["delta"]),
                         radius=radius, n_declared=int(ds.n), rng=int(p["seed"]) + 1)

    return cache.memo("present", (ds.content_hash, name, eps, p["k"], p["delta"], p["seed"]), compute)


def _loss(ds, result) -> float | None:
    """The normalized k-means loss of the side's centers (a NON-PRIVATE diagnostic, shown as one)
    against the non-private reference Explore uses (shipped for the lesson)."""
    if result.centers is None or ds.n < int(state.get("k")):
        return None
    ref = shared.reference(ds, int(state.get("k")))
    raw = dpviz.metrics.normalized_loss(ds.X, result.centers, reference_cost=ref.cost)
    return max(0.0, float(raw))  # below 0: as good as the non-private reference (run.loss_tile)


def _side(ds, radius: float, name: str, eps: float, key: str) -> None:
    spec = dpviz.registry.get(name)
    try:
        result = _run(ds, radius, name, eps)
    except ValueError as exc:  # a target this algorithm cannot meet on these inputs
        st.error(safe.md(exc))
        return
    from dpviz.viz.data import project_2d

    # Who answered, not only who was asked: an algorithm's backup is named when it answered.
    answer = dpviz.viz.answered.answered_by(result, name)
    proj = project_2d(ds.X)  # the data and the centers in the same 2-D view
    fig = dpviz.viz.data_figure(ds, projector=proj, max_points=4_000, title=" ",
                                show_true_centers=False)
    if result.centers is not None:
        C = proj.transform(np.asarray(result.centers, float))
        fig.add_trace(go.Scatter(x=C[:, 0], y=C[:, 1], mode="markers",
                                 name=f"private centers ({answer.who})",
                                 marker=dict(size=22, symbol="x", color="#D55E00",
                                             line=dict(width=2, color="white"))))
    # No text over the picture: the sample's size goes in the page's caption (issue 43: the
    # data figure's title printed over the top tick label); short enough for 1280×720.
    fig.update_layout(height=290, showlegend=False, margin=dict(l=10, r=10, t=10, b=10),
                      font=dict(size=18), title=dict(text=""))
    g = result.plan.guarantee  # the run's one statement (Result.plan)
    what = (f"{spec.title}: no centers (too little budget here)" if result.centers is None
            else answer.label(len(result.centers)))
    said = what if result.centers is None else f"Answered by {what}"
    loss = _loss(ds, result)
    # Issue 43: one sentence per panel, under its picture (the picture first at 1280×720); the
    # heading gives ε and the loss. The sentence is also the chart's text alternative (its
    # visible caption and accessible name), so the panel says nothing twice.
    loss_text = "no loss (no centers)" if loss is None else f"normalized loss {loss:.2f}"
    sentence = (f"{said}, {loss_text} (a non-private diagnostic); one person's row changes "
                f"any outcome's odds by at most ×{math.exp(g.eps):.3g} (the run's plan: "
                f"ε = {g.eps:.3g}, δ = {g.delta:.2g})")
    with st.container(key=f"{PRESENT_ANSWER}{key}"):
        st.markdown(f"## ε = {eps:g}" + ("" if loss is None else f" · loss {loss:.2f}"))
        with st.container(key=f"{PRESENT_LOSS}{key}"):
            a11y.chart(fig, key=f"{PRESENT_FIG}{key}", config={"displayModeBar": False},
                       summary=sentence, summary_below=True)


def _prefetch(ds, radius: float, name: str, shown: tuple[float, float]) -> None:
    """Every other stop of the sliders, on the background worker (FriendlyCore only: its runs
    are Explore's cached ones), nearest to the shown ones first."""
    if name != state.DEFAULT_ALGORITHM:
        return
    todo = sorted((e for e in BUDGETS if e not in shown),
                  key=lambda e: min(abs(math.log(e / s)) for s in shown))
    for eps in todo:
        with contextlib.suppress(ValueError):  # a stop no budget meets: its move shows the refusal
            _friendlycore(ds, radius, eps, prefetch=True)


def main() -> None:
    st.markdown(PRESENTER_CSS, unsafe_allow_html=True)
    got = sweep.page_dataset()
    if got is None:
        return
    ds, radius = got
    name = state.get("alg")
    st.title(f"Same data, two privacy budgets — {dpviz.registry.get(name).title}")
    modes.simulation_badge(PRESENT_BADGE)
    state.seed_widget("pa", keys.PRESENT_A)
    state.seed_widget("pb", PRESENT_B)
    c1, rows, c2 = st.columns([5, 3, 5])
    options_a = sorted(set(BUDGETS) | {float(state.get("pa"))})  # a link's ε stays selectable
    options_b = sorted(set(BUDGETS) | {float(state.get("pb"))})
    c1.select_slider("Left: row-level ε", options=options_a, key=keys.PRESENT_A,
                     on_change=state.on_change("pa", keys.PRESENT_A, float))
    c2.select_slider("Right: row-level ε", options=options_b, key=PRESENT_B,
                     on_change=state.on_change("pb", PRESENT_B, float))
    with rows:
        lesson.rows_control(PRESENT_ROWS, short=True)
    left, right = st.columns(2, gap="large")
    pa, pb = float(state.get("pa")), float(state.get("pb"))
    with left:
        _side(ds, radius, name, pa, "a")
    with right:
        _side(ds, radius, name, pb, "b")
    st.caption(f"{safe.md(ds.name)} · n = {ds.n:,} ({min(ds.n, 4_000):,} drawn, a uniform sample) · "
               "seeded simulation on the same rows (not a release) · the Explore page has every detail.")
    _prefetch(ds, radius, name, (pa, pb))


main()
