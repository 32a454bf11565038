"""Learn: differential privacy, zCDP, sample-and-aggregate and FriendlyCore, with live examples."""

from __future__ import annotations

import numpy as np
import streamlit as st

import dpviz.privacy
import dpviz.viz
import dpviz.viz.filters
import dpviz.viz.storyboard
from app.components import a11y, controls, deployments, families, keys, live_chart, membership, modes, state
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
_GAME: Key[object] = Key("_membership_game", object, "the Learn page's membership game")
LEARN_MIA: Key[object] = Key("learn_mia", object, "container: the membership-inference game")
LEARN_MIA_EPS: Key[float] = Key("learn_mia_eps", float, "select_slider: ε of the game's release")
LEARN_MIA_BADGE: Key[object] = Key("learn_mia_badge", object, "the game's simulation badge")
MI_ROUND: Key[object] = Key("mi_round", object, "chart: the game's current round")
MI_GUESS_OUT: Key[bool] = Key("mi_guess_out", bool, "button: guess Alice is OUT")
MI_RESULT: Key[object] = Key("mi_result", object, "container: the guesses' score against chance")
MI_AGAIN: Key[bool] = Key("mi_again", bool, "button: play again (a new game)")
LEARN_DEPLOY: Key[object] = Key("learn_deploy", object, "prefix: the deployments expander's keys")
LEARN_RHO: Key[float] = Key("learn_rho", float, "select_slider: ρ of the zCDP conversion")
LEARN_EPS_TABLE: Key[object] = Key("learn_eps_table", object, "container: the ε table")
LEARN_DEMO_RHO: Key[float] = Key("learn_demo_rho", float, "select_slider: ρ of the FriendlyCore demo")
LEARN_STORYBOARD_CHART: Key[object] = Key("learn_storyboard_chart", object, "chart: the demo's storyboard")
LEARN_FILTER_CHART: Key[object] = Key("learn_filter_chart", object, "chart: the demo's filter")
LEARN_TRY: Key[object] = Key("learn_try", object, "container: links into Explore")

#: The default algorithm's lesson (its family folder's ``lesson.py``: FriendlyCore's live example).
lesson = families.module(state.DEFAULT_ALGORITHM, "lesson")

st.title("Learn: private clustering in five minutes")

PAGES = st.session_state.get(keys.PAGES, {})

st.header("1. Differential privacy")
st.markdown(
    "A release is **differentially private** if it would look almost the same whether or not any "
    "one person's row were in the data. Formally, an algorithm M is (ε, δ)-DP if for any two "
    "datasets that differ in one row and any set S of outcomes, "
    "P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ. Small ε means the odds of any conclusion about a "
    "person can change by at most a factor e^ε; δ is a small probability of failure.\n\n"
    "The price is noise: every released number is perturbed enough to hide one row. How much "
    "noise depends on the **sensitivity** (how far one row can move the answer) — which is why "
    "DP needs a *public* bound Λ on the data, declared before looking at it."
)


GAME_EPS = [0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0]


def _game() -> dict:
    """This session's game: its key (OS entropy, never in the URL), ε, and the rounds played."""
    eps = float(st.session_state.get(LEARN_MIA_EPS, 1.0))
    game = st.session_state.get(_GAME)
    if game is None or game["eps"] != eps:  # a new ε starts a new game
        game = {"key": membership.new_game_key(), "eps": eps, "guesses": [], "truths": []}
        st.session_state[_GAME] = game
    return game


def _guess(inside: bool) -> None:
    game = _game()
    r = membership.play_round(game["key"], len(game["guesses"]), game["eps"])
    game["guesses"].append(inside)
    game["truths"].append(r.inside)
    game["guarantee"] = (r.eps, r.delta)  # the release's row-level (ε, δ), from its plan


def _new_game() -> None:
    st.session_state.pop(_GAME, None)


def membership_game() -> None:
    """Play the attacker: N rounds of in-or-out against a real private release, then the hit
    rate beside the best any attacker can do at that (ε, δ)."""
    st.subheader("Make e^ε concrete: the membership game")
    st.markdown(f"You are the attacker. Each round a coin decides whether **Alice's row** is in a "
                f"small dataset; its center is released privately at the ε you choose "
                f"(DP-Lloyd through `dpviz.run`). You see everyone else's rows, Alice's, where the "
                f"center would be without noise in either world, and the release. Guess: in or "
                f"out? After {membership.ROUNDS} rounds, your hit rate stands beside the best "
                f"hit rate any attacker can expect.")
    st.select_slider("ε of the release", options=GAME_EPS, value=1.0, key=LEARN_MIA_EPS)
    modes.simulation_badge(LEARN_MIA_BADGE)
    game = _game()
    played = len(game["guesses"])
    if played:
        last = "IN" if game["truths"][-1] else "OUT"
        right = game["guesses"][-1] == game["truths"][-1]
        st.markdown(f"Round {played}: Alice was **{last}** — you were "
                    f"**{'right' if right else 'wrong'}**.")
    if played < membership.ROUNDS:
        r = membership.play_round(game["key"], played, game["eps"])
        st.caption(f"Round {played + 1} of {membership.ROUNDS} · the release is "
                   f"({r.eps:.3g}, {r.delta:.0e})-DP per row.")
        # The guesses above the picture (issue 43: below it they were below the fold at 1280×720).
        c1, c2 = st.columns(2)
        c1.button("Alice is IN", key=keys.MI_GUESS_IN, on_click=_guess, args=(True,),
                  icon=":material/login:", width="stretch")
        c2.button("Alice is OUT", key=MI_GUESS_OUT, on_click=_guess, args=(False,),
                  icon=":material/logout:", width="stretch")
        a11y.chart(membership.round_figure(r, played + 1), key=MI_ROUND,
                   config={"displayModeBar": False}, summary=membership.summary(r, played + 1))
        return
    rate = membership.hit_rate(game["guesses"], game["truths"])
    eps_row, delta_row = game["guarantee"]
    bound = membership.attacker_bound(eps_row, delta_row)
    with st.container(key=MI_RESULT):
        c1, c2 = st.columns(2)
        c1.metric(f"Your hit rate, {membership.ROUNDS} rounds", f"{rate:.0%}")
        c2.metric("Best possible attacker", f"{bound:.1%}",
                  help="(e^ε + δ)/(1 + e^ε): no membership test's expected hit rate beats it at "
                       "even odds (Kairouz, Oh & Viswanath 2015, Thm 2.1); 50% is a coin flip.")
        hits = sum(g == t for g, t in zip(game["guesses"], game["truths"], strict=True))
        st.markdown(membership.verdict(hits, membership.ROUNDS, bound))
        st.caption(f"At ε = {eps_row:.3g} a row's presence shifts the odds of any guess by at most "
                   f"e^ε = {np.exp(eps_row):.3g}×. With {membership.ROUNDS} rounds luck alone moves "
                   f"a hit rate by about ±{100 / np.sqrt(membership.ROUNDS) / 2:.0f} points. The "
                   "bound is the worst case over all releases at this (ε, δ); this one (Gaussian "
                   "noise, one step) leaks less than its ε allows.")
    st.button("Play again", key=MI_AGAIN, on_click=_new_game, icon=":material/replay:")


with st.container(key=LEARN_MIA):
    membership_game()
    deployments.beside_expander(float(st.session_state.get(LEARN_MIA_EPS, 1.0)),
                                key=LEARN_DEPLOY)  # this ε beside real deployments'

st.header("2. zCDP and the budget ρ")
st.markdown(
    "dpviz accounts in **zero-concentrated DP** (ρ-zCDP, Bun & Steinke 2016): adding Gaussian "
    "noise of standard deviation σ = Δ/√(2ρ) to a value of sensitivity Δ costs ρ, and budgets of "
    "successive steps simply add up. For display, ρ is converted to (ε, δ)-DP; the tight "
    "conversion (Canonne, Kamath & Steinke 2020) gives a smaller ε than the textbook "
    "ε = ρ + 2√(ρ ln 1/δ)."
)


privacy = dpviz.privacy
rho = st.select_slider("ρ", options=controls.RHO_GRID, value=1.0, format_func=controls.fmt_rho,
                       key=LEARN_RHO)
rows = []
for delta in (1e-5, 1e-6, 1e-8):
    own = lesson.row_guarantee(rho, delta)
    rows.append({"δ": controls.fmt_delta(delta),
                 "ε (tight)": round(privacy.zcdp_to_dp(rho, delta, tight=True), 3),
                 "ε (simple)": round(privacy.zcdp_to_dp(rho, delta, tight=False), 3),
                 "FriendlyCore (ε, δ)": f"({own.eps:.3g}, {own.delta:.2g})",
                 "σ, mean of 1,000": round(privacy.gaussian_sigma_zcdp(2.0 / 1000, rho), 5)})
#: Short headers so the table fits at 1280 px (issue 27: its last column was cut); the long
#: meaning of each is its column's help.
EPS_TABLE_HELP = {
    "ε (tight)": "ε per row of a ρ-zCDP step on rows (the tight conversion)",
    "ε (simple)": "ε per row of a ρ-zCDP step on rows (the simple bound ρ + 2√(ρ ln 1/δ))",
    "FriendlyCore (ε, δ)": "FriendlyCore's row-level (ε, δ) at this ρ (its group-privacy step included)",
    "σ, mean of 1,000": "Gaussian noise σ for the mean of 1,000 rows in the unit ball at this ρ",
}
with st.container(key=LEARN_EPS_TABLE):
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_config={c: st.column_config.Column(c, help=h) for c, h in EPS_TABLE_HELP.items()})
    st.caption("Public guarantees, computed from ρ and δ only, all per ROW of the data (the unit "
               "Explore shows). FriendlyCore's column is its row-level guarantee on the live "
               "example below (n = 20,000, k = 3, t = 200, Λ = 1): its tuple stage is private per "
               "k-tuple and one row replaces one tuple, so group privacy makes its per-row ε "
               "larger than ρ's plain conversion.")

st.header("3. Sample and aggregate")
st.markdown(
    "Clustering is hard to make private directly: a center is an exact function of many rows. "
    "**Sample and aggregate** sidesteps this. Split the rows at random into t pieces and run an "
    "ordinary, non-private k-means on each piece; each piece returns a k-tuple of centers. One "
    "person's row lands in exactly one piece, so it can change at most one tuple. Now the task is "
    "to *aggregate* t tuples privately — and when the clusters are real, most tuples agree."
)

st.header("4. FriendlyCore")
st.markdown(
    "FriendlyCore (Tsfadia, Cohen, Kaplan, Mansour & Stemmer, ICML 2022) is the aggregator. Two "
    "tuples are *friends* if they match (each center of one is close to a center of the other). "
    "FriendlyCore privately keeps the tuples with many friends — the **core** — using a noisy "
    "count and a threshold, so that adding or removing one tuple changes the core only a little. "
    "On the core, the problem becomes easy: order every tuple like a reference tuple, find the "
    "spread of each coordinate privately, and average each coordinate with Gaussian noise. A "
    "final private Lloyd step on all rows refines the centers. If the core is empty (the pieces "
    "disagree, or ρ is too small), the run falls back to a simpler private method and says so."
)
viz = dpviz.viz


def _demo_figures(ds, result) -> tuple[str, str | None]:
    """The live example's two figures as JSON (built once per ρ, cached with the run): the
    storyboard with its point clouds as one image per panel and fixed margins, so plotly.js
    lays it out in one pass, and the filter scores; both updated in place on a ρ move
    (:mod:`app.components.live_chart`), as Explore's live storyboard is (docs/app.md)."""
    fig = viz.storyboard.storyboard_figure(result, ds.X, panels="bcfg", cols=2, max_points=2_000,
                                           height_per_row=300, points="raster",
                                           tick_labels=False, margin=dict(l=10, r=10, t=70, b=10))
    scores = None
    if result.find("match_core") is not None:
        scores = viz.filters.filter_scores_figure(result, step="match_core").to_json()
    return fig.to_json(), scores


@st.fragment
def live_example() -> None:
    """The live example: a ρ move reruns only this fragment. The runs one slider step away and
    their figures are then started on the background worker (``lesson.demo_prefetch``), so a
    one-step move finds them ready."""
    demo_rho = st.select_slider("ρ for the live example", options=controls.RHO_GRID, value=1.0,
                                format_func=controls.fmt_rho, key=LEARN_DEMO_RHO)
    with st.spinner("A small private run (20 000 rows, t = 200 pieces)…"):
        figures = lesson.demo_figures(demo_rho, _demo_figures)
    st.caption("A seeded **simulation** on public synthetic data (not a release): see the "
               "Release page for what a publishable run looks like.")
    c1, c2 = st.columns([3, 2])
    with c1:
        live_chart.live_chart(figures[0], key=LEARN_STORYBOARD_CHART)
    with c2:
        if figures[1] is not None:
            live_chart.live_chart(figures[1], key=LEARN_FILTER_CHART)
        st.caption("Left: the tuples, the private centers and the Lloyd step (the paper's "
                   "Figure 3 panels b, c, f, g; points drawn as images). Right: the noisy friend "
                   "scores of the tuples against the keep threshold (internal, non-private "
                   "diagnostic). Lower ρ spreads the scores and raises the threshold.")
    lesson.demo_prefetch(controls.rho_neighbours(demo_rho), _demo_figures)


live_example()

st.header("5. What to try")
TRY = [
    ("Spend too little: watch the core empty out", {"eps": "0.1"},
     "At row-level ε = 0.1 the filters' noise swamps the friend counts; FriendlyCore fails and the "
     "fallback answers. Move ε up until the core survives (the slider's mark shows where)."),
    ("Too few rows per piece", {"src": "generate", "gen": "fig6_blobs", "n": "2000", "t": "200"},
     "10 rows per piece cannot find 8 clusters: tuples disagree and few are friends."),
    ("Shapes k-means cannot describe", {"src": "generate", "gen": "moons", "k": "2"},
     "Private or not, centroids do not fit moons: the private answer is only as good as the "
     "non-private one."),
    ("No clusters at all", {"src": "generate", "gen": "null_uniform", "k": "3"},
     "On uniform data the pieces disagree, so a good private algorithm should fail rather than "
     "invent clusters."),
    ("The paper's Figure 7 in 10-D", {"src": "generate", "gen": "fig7_gmm", "n": "50000", "d": "10",
                                     "gk": "5", "k": "5", "oracle": "pca", "rmin": "0.1"},
     "Gaussian mixture with the PCA oracle; the storyboard shows the first two principal "
     "components."),
]
with st.container(key=LEARN_TRY):
    for title, query, text in TRY:
        if "explore" in PAGES:
            st.page_link(PAGES["explore"], label=title, query_params=query,
                         icon=":material/arrow_forward:")
        st.caption(text)
    if "budget" in PAGES:
        st.page_link(PAGES["budget"], label="Find the ε where FriendlyCore beats DP-Lloyd",
                     icon=":material/arrow_forward:")
        st.caption("Run a sweep on the Budget page and click a point to inspect that row-level ε.")
