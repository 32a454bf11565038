"""Present: two budgets side by side in large type, the sidebar hidden (a projector in a lecture).

The current dataset (Data page) and the algorithm of the URL (``alg``, FriendlyCore by default)
run at two row-level ε chosen here (URL keys ``pa`` and ``pb``); each side shows its released
centers over the data and its guarantee in one large sentence. Every run is a seeded simulation
on the same rows (badged), through the registry (``dpviz.run``).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import dpviz
import dpviz.viz
import dpviz.viz.answered
from app.components import a11y, cache, keys, modes, safe, state, sweep

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
BUDGETS = (0.1, 0.3, 1.0, 3.0, 10.0)


def _side(ds, radius: float, name: str, eps: float, key: str) -> None:
    p = state.params()
    spec = dpviz.registry.get(name)

    def compute():
        return dpviz.run(name, ds.X, int(p["k"]), epsilon=float(eps), delta=float(p["delta"]),
                         radius=radius, n_declared=int(ds.n), rng=int(p["seed"]) + 1)

    try:
        result = cache.memo("present", (ds.content_hash, name, eps, p["k"], p["delta"], p["seed"]),
                            compute)
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
    fig.update_layout(height=430, showlegend=False, margin=dict(l=10, r=10, t=10, b=10),
                      font=dict(size=18))
    g = result.plan.guarantee  # the run's one statement (Result.plan)
    what = (f"{spec.title}: no centers (too little budget here)" if result.centers is None
            else answer.label(len(result.centers)))
    a11y.chart(fig, key=f"{keys.PRESENT_FIG}{key}", config={"displayModeBar": False},
               summary=f"{ds.name}: the data (a 2-D view) and {what}, at ε = {eps:g}")
    with st.container(key=f"{keys.PRESENT_ANSWER}{key}"):
        st.markdown(f"## ε = {eps:g}\n{what}. One person's row changes the odds of any "
                    f"outcome by at most **×{math.exp(g.eps):.3g}** (the run's plan: "
                    f"ε = {g.eps:.3g}, δ = {g.delta:.2g}).")


def main() -> None:
    st.markdown(PRESENTER_CSS, unsafe_allow_html=True)
    got = sweep.page_dataset()
    if got is None:
        return
    ds, radius = got
    name = state.get("alg")
    st.title(f"Same data, two privacy budgets — {dpviz.registry.get(name).title}")
    modes.simulation_badge(keys.PRESENT_BADGE)
    state.seed_widget("pa", keys.PRESENT_A)
    state.seed_widget("pb", keys.PRESENT_B)
    c1, c2 = st.columns(2)
    c1.select_slider("Left: row-level ε", options=BUDGETS, key=keys.PRESENT_A,
                     on_change=state.on_change("pa", keys.PRESENT_A, float))
    c2.select_slider("Right: row-level ε", options=BUDGETS, key=keys.PRESENT_B,
                     on_change=state.on_change("pb", keys.PRESENT_B, float))
    left, right = st.columns(2, gap="large")
    with left:
        _side(ds, radius, name, float(state.get("pa")), "a")
    with right:
        _side(ds, radius, name, float(state.get("pb")), "b")
    st.caption(f"{safe.md(ds.name)} · n = {ds.n:,} · seeded simulation on the same rows (not a "
               "release) · the Explore page has every detail.")


main()
