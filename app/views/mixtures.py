"""Mixtures: private density estimation of Gaussian mixtures (Ashtiani, Majid, Narayanan, NeurIPS 2024).

A univariate learner in the paper's pipeline, a 2-D demo of the inverse-sensitivity idea, and the
theory panel of sample-complexity bounds. Density estimation in TV is not clustering.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from app.components import a11y, data_source, modes
from app.components.keys import Key
from dpviz.mixtures import explore as ex
from dpviz.mixtures import theory as th
from dpviz.mixtures.inverse_sensitivity import CAVEATS
from dpviz.viz import mixtures as vm

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
MIX_BADGE: Key[object] = Key("simulation_badge_mixtures", object, "the page's simulation badge")
MIX_NOT_CLUSTERING: Key[object] = Key("mix_not_clustering", object, "container: what the page is not")
MIX_MODE: Key[str] = Key("mix_mode", str, "radio: the 1-D learner or the 2-D demo")
MIX_EPS: Key[float] = Key("mix_eps", float, "select_slider: ε")
MIX_DELTA: Key[float] = Key("mix_delta", float, "select_slider: δ")
MIX_K: Key[int] = Key("mix_k", int, "number_input: k (components)")
MIX_N: Key[int] = Key("mix_n", int, "select_slider: n (synthetic)")
MIX_SEED: Key[int] = Key("mix_seed", int, "number_input: the seed")
MIX_SCENARIO: Key[str] = Key("mix_scenario", str, "selectbox: the 1-D data")
MIX_COLUMN: Key[str] = Key("mix_column", str, "selectbox: a column of the Data page's dataset")
MIX_METRICS: Key[object] = Key("mix_metrics", object, "container: the run's metrics")
MIX_STATUS: Key[object] = Key("mix_status", object, "container: the 1-D run's outcome")
MIX_DENSITY: Key[object] = Key("mix_density", object, "chart: the learned density")
MIX_BUCKETS: Key[object] = Key("mix_buckets", object, "chart: the gap buckets")
MIX_SCENARIO_2D: Key[str] = Key("mix_scenario_2d", str, "selectbox: the 2-D scenario")
MIX_BOUND: Key[float] = Key("mix_bound", float, "number_input: the 2-D demo's declared box B")
MIX_CAVEATS: Key[object] = Key("mix_caveats", object, "container: the 2-D demo's caveats")
MIX_DEMO2D: Key[object] = Key("mix_demo2d", object, "chart: the 2-D demo")
MIX_ALPHA: Key[float] = Key("mix_alpha", float, "select_slider: α (TV accuracy)")
MIX_LOGS: Key[bool] = Key("mix_logs", bool, "toggle: keep ln(1/δ) factors")
MIX_THEORY: Key[object] = Key("mix_theory", object, "chart: the theory's bounds")
MIX_THEORY_VALUES: Key[object] = Key("mix_theory_values", object, "container: the theory's values")

N_GRID = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)
EPS_GRID = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
DELTA_GRID = (1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3)
SCEN_1D = {
    "hard": "Hard mixture (.5/.3/.2, means −50/0/1000, sds 1/0.01/100)",
    "separated": "Well-separated (means 10 apart, sd 1)",
    "lb_scales": "Lower bound: known means, unknown scales (App. G)",
    "lb_light": "Lower bound: one heavy + light components (App. G)",
}
SCEN_2D = {"clusters_2d": "2-D clusters in [−10, 10]²", "lb_cov_2d": "Lower bound: unknown covariances (2-D)"}
COLUMN = "column"


@st.cache_resource(max_entries=8, show_spinner="Sampling…")
def _data(key: str, k: int, n: int, seed: int):
    return ex.sample(key, k, n, seed)


def _source_data(source: tuple):
    """(x, truth) for ("scenario", key, k, n, seed) or ("column", dataset fingerprint, j)."""
    if source[0] == "column":
        return data_source.current().dataset.X[:, source[2]], None
    x, sc = _data(*source[1:])
    return x, sc.truth


def _fingerprint(ds) -> str:
    """Identity of the current dataset for the caches (its description and a hash of its bytes)."""
    return data_source.describe(ds) + hashlib.sha1(ds.X.tobytes()).hexdigest()[:16]


@st.cache_resource(max_entries=8, show_spinner="Non-private EM fit (diagnostic)…")
def _em(source: tuple, k: int, seed: int):
    return ex.em_fit(_source_data(source)[0], k, seed=seed)


@st.cache_resource(max_entries=32, show_spinner="Private run…")
def _run_1d(source: tuple, k: int, seed: int, eps: float, delta: float):
    x, truth = _source_data(source)
    return ex.run_1d(x, k, epsilon=eps, delta=delta, seed=seed, truth=truth, em=_em(source, k, seed))


@st.cache_resource(max_entries=8, show_spinner="Scoring the grid (not private; cached)…")
def _scores_2d(key: str, k: int, n: int, seed: int, bound: float):
    X, _ = _data(key, k, n, seed)
    return ex.grid_scores_2d(X, k, bound)


st.title("Mixtures: private density estimation")
st.caption(
    "Ashtiani, Majid, Narayanan. Sample-efficient private learning of mixtures of Gaussians. NeurIPS 2024."
)
with st.container(key=MIX_NOT_CLUSTERING):
    st.info(
        "**Density estimation in total variation is not clustering.** The learner outputs a mixture "
        "whose distribution is close to the data's in TV; the paper assumes no separation and promises "
        "nothing about recovering components or labels. Any cluster labels drawn from the learned "
        "mixture (e.g. posteriors) are post-processing without the paper's guarantee."
    )

# Every run on this page is seeded (replayable): a simulation, whatever its data (issue 25, finding 5).
modes.simulation_badge(MIX_BADGE)

left, right = st.columns([3, 2], gap="large")
with left:
    mode = st.radio("View", ["1-D learner", "2-D demo"], horizontal=True, key=MIX_MODE)
    c1, c2, c3 = st.columns(3)
    eps = c1.select_slider("ε", options=EPS_GRID, value=1.0, key=MIX_EPS)
    delta = c2.select_slider(
        "δ", options=DELTA_GRID, value=1e-6, format_func=lambda v: f"{v:.0e}", key=MIX_DELTA
    )
    k = c3.number_input("k (components)", min_value=1, max_value=6, value=3, step=1, key=MIX_K)
    c4, c5, c6 = st.columns(3)
    n = c5.select_slider("n (synthetic)", options=N_GRID, value=10_000, key=MIX_N)
    seed = c6.number_input("seed", min_value=0, max_value=10_000, value=0, step=1, key=MIX_SEED)

    if mode == "1-D learner":
        ds = data_source.current().dataset
        options = dict(SCEN_1D)
        if ds is not None:
            options[COLUMN] = f"A column of the current dataset ({ds.name})"
        key = c4.selectbox("Data", list(options), format_func=options.get, key=MIX_SCENARIO)
        source: tuple = ("scenario", key, int(k), int(n), int(seed))
        if key == COLUMN:
            column = st.selectbox(
                "Column",
                list(range(ds.X.shape[1])),
                format_func=lambda j: ds.feature_names[j],
                key=MIX_COLUMN,
            )
            st.caption(
                "A seeded simulation on your column (not a release: its noise replays from the seed). "
                "No bounds on the values are needed."
            )
            source = ("column", _fingerprint(ds), int(column))
        run = _run_1d(source, int(k), int(seed), float(eps), float(delta))
        res = run.result
        with st.container(key=MIX_METRICS):
            m1, m2 = st.columns(2)
            m3, m4 = st.columns(2)
            m1.metric("components (simulated)", 0 if run.mixture is None else run.mixture.k,
                      help="components of the simulated private mixture (seeded, not a release; ≤ k)")
            label = (
                "TV to truth (simulation)"
                if run.reference == "truth"
                else "TV to EM (non-private)"
            )
            m2.metric(label, "⊥" if run.tv_private is None else f"{run.tv_private:.3f}",
                      help="TV distance of the released mixture to the true one (known only because we "
                      "generated the data) or, on real data, to a non-private EM fit")
            m3.metric(
                "EM's TV (non-private)",
                "–" if run.tv_em is None else f"{run.tv_em:.3f}",
                help="TV of sklearn's non-private EM fit to the truth (simulation only)",
            )
            g = res.guarantee
            m4.metric(
                "ε spent (ledger)",
                f"{g.eps:.3g}",
                help=f"(ε, δ) = ({g.eps:.3g}, {g.delta:.2g}) for one row added "
                "or removed: crude (ε, δ) and fine ε on disjoint random parts",
            )
        with st.container(key=MIX_STATUS):
            if res.ok:
                st.success(
                    f"Simulation (seeded, not a release — do not publish): the private learner's "
                    f"mixture of {run.mixture.k} Gaussians (weights, means, sds): "
                    + "; ".join(
                        f"({w:.3f}, {m:.4g}, {s:.3g})"
                        for w, m, s in zip(
                            run.mixture.weights, run.mixture.means, run.mixture.sds, strict=True
                        )
                    )
                )
            else:
                st.warning("⊥ (the learner's private outcome, simulated): it found no mixture. Raise n or ε, "
                           "or lower τ.")
            if run.found is not None:
                st.caption(
                    f"Crude stage found {int(run.found.sum())} of {run.found.size} true components "
                    "(G = 10 criterion; simulation diagnostic)."
                )
        x, truth = _source_data(source)
        a11y.chart(vm.density_figure(x, res, truth=truth, em=run.em), key=MIX_DENSITY)
        a11y.chart(vm.gap_buckets_figure(res), key=MIX_BUCKETS)
        cand = res.step("crude_candidates").data
        st.caption(
            f"Crude stage: Truncated Laplace TLap(1, ε/3, δ_u) on each non-empty bucket, surely |noise| ≤ "
            f"A = {cand['bound']:.1f}; threshold T = {cand['threshold']:.1f}. Released: the buckets at or "
            "above T (blue). Grey bars are NOT private: which buckets are non-empty is itself private, "
            "so those noisy counts are a diagnostic only."
        )
        st.caption(
            "What is the paper's: the disjoint split, the gap histogram with truncated-Laplace noise and "
            "a threshold, needing no bounds (its §2.2, App. F). What is ours: cell widths, τ, and the fine "
            "stage — 21 exponential mechanisms over small sets of mixtures with a sensitivity-1 "
            "minimum-distance score (a private local search), not one selection over the paper's net. "
            "Privacy is exact; the accuracy guarantee is not the paper's."
        )
    else:
        key = c4.selectbox("Data", list(SCEN_2D), format_func=SCEN_2D.get, key=MIX_SCENARIO_2D)
        bound = st.number_input(
            "Declared box B (means in [−B, B]²; public)",
            min_value=1.0,
            max_value=1e4,
            value=10.0,
            key=MIX_BOUND,
        )
        n2 = min(int(n), 3_000)
        if n2 < int(n):
            st.caption(f"The 2-D demo samples n = {n2:,} (its grid score costs |Θ|·n).")
        X, sc = _data(key, int(k), n2, int(seed))
        run2 = ex.run_2d(
            X,
            int(k),
            epsilon=float(eps),
            bound=float(bound),
            seed=int(seed),
            truth=sc.truth,
            cached=_scores_2d(key, int(k), n2, int(seed), float(bound)),
        )
        with st.container(key=MIX_CAVEATS):
            st.warning(
                "**Inspired by, not the paper's algorithm.**\n\n" + "\n".join(f"- {c}" for c in CAVEATS[1:])
            )
        with st.container(key=MIX_METRICS):
            m1, m2 = st.columns(2)
            m1.metric("picks (simulated)", run2.result.centers.shape[0])
            m2.metric("ε spent (pure DP, ledger)", f"{run2.result.guarantee.eps:.3g}")
        a11y.chart(
            vm.demo2d_figure(X, run2.result, truth=sc.truth, bound=float(bound)), key=MIX_DEMO2D
        )

with right:
    st.header("Theory: how many samples?")
    t1, t2 = st.columns(2)
    alpha = t1.select_slider(
        "α (TV accuracy)", options=(0.01, 0.02, 0.05, 0.1, 0.2), value=0.1, key=MIX_ALPHA
    )
    logs = t2.toggle("keep ln(1/δ) factors", value=True, key=MIX_LOGS)
    a11y.chart(
        vm.theory_figure(k=int(k), alpha=float(alpha), eps=float(eps), delta=float(delta), logs=logs),
        key=MIX_THEORY,
    )
    with st.container(key=MIX_THEORY_VALUES):
        d1 = th.new_univariate(int(k), alpha, eps, delta, logs)
        st.caption(
            f"{th.CAVEAT}. At d = 1, k = {int(k)}: Thm 1.5 ≈ {float(d1):,.0f} samples, lower bound ≈ "
            f"{float(th.lower_bound(1, int(k), alpha, eps, delta, logs)):,.0f}, [AAL21] ≈ "
            f"{float(th.aal21(1, int(k), alpha, eps, delta, logs)):,.0f}. Thm 1.4 is optimal for "
            f"d ≥ d* = k²·ln²(1/δ) ≈ {float(th.d_star(int(k), delta)):,.0f}."
        )
