"""Explore's sidebar form: the expensive knobs (dataset, n, k, t, oracle, Λ, r_min, preset, seed).

They only take effect on Apply, because changing any of them reruns the non-private tuple stage
(seconds at n = 10⁵). ρ and δ are not here: they are live on the page.
"""

from __future__ import annotations

import streamlit as st

from app.components import data_source, dataset_picker, lib, state

ORACLES = {"kmeans++": "k-means++ (scikit-learn KMeans)", "pca": "PCA oracle (Gaussian mixtures)"}
PRESETS = {"practical": "practical (tuned, sound)", "paper": "paper-formal constants",
           "reference": "reference"}


def dataset_options() -> dict[str, str]:
    """Option id → label for every dataset the form can switch to."""
    data = lib.get("data")
    opts = {f"gen:{g}": f"Generate: {spec.title}" for g, spec in data.GENERATORS.items()}
    titles = getattr(data, "BUILTIN_TITLES", {})
    opts.update({f"builtin:{b}": f"Built-in: {titles.get(b, b)}" for b in data.BUILTIN})
    if data_source.active_upload() is not None or state.get("src") == "upload":
        opts["upload"] = "Uploaded CSV (this session)"
    return opts


def current_option() -> str:
    p = state.params()
    if p["src"] == "generate":
        return f"gen:{p['gen']}"
    if p["src"] == "builtin":
        return f"builtin:{p['builtin']}"
    return "upload"


def _set_dataset(option: str) -> bool:
    """Point the parameters at a dataset option; True if it changed."""
    if option == current_option():
        return False
    if option.startswith("gen:"):
        gen = option[4:]
        spec = lib.get("data").GENERATORS[gen]
        state.update(src="generate", gen=gen)
        if state.get("n") > spec.default_n:
            state.update(n=spec.default_n)
    elif option.startswith("builtin:"):
        state.update(src="builtin", builtin=option[8:])
    else:
        state.update(src="upload")
    return True


def _apply() -> None:
    ss = st.session_state
    k_before = state.get("k")
    changed = _set_dataset(ss["ex_dataset"])
    state.commit({"n": ("ex_n", int), "k": ("ex_k", int), "t": ("ex_t", int),
                  "oracle": ("ex_oracle", str), "radius": ("ex_radius", _radius),
                  "rmin": ("ex_rmin", float), "preset": ("ex_preset", str),
                  "seed": ("ex_seed", int)})()
    if changed:
        # The new dataset's suggestions (k, r_min, Λ = its declared one) apply unless the user
        # changed k in the same Apply.
        st.session_state["_data_changed"] = True
        if state.get("k") != k_before:
            st.session_state["_keep_k"] = state.get("k")


def _radius(v):
    return None if v is None or v <= 0 else float(v)


def sync_run_defaults(ds) -> None:
    keep_k = st.session_state.pop("_keep_k", None)
    dataset_picker.sync_run_defaults(ds)
    if keep_k is not None:
        state.update(k=keep_k)


def sidebar_form() -> None:
    opts = dataset_options()
    if current_option() not in opts:
        opts[current_option()] = current_option()
    keys = {"n": "ex_n", "k": "ex_k", "t": "ex_t", "oracle": "ex_oracle", "radius": "ex_radius",
            "rmin": "ex_rmin", "preset": "ex_preset", "seed": "ex_seed"}
    for name, key in keys.items():
        state.seed_widget(name, key)
    want = current_option()
    if st.session_state.get("ex_dataset") != want:
        st.session_state["ex_dataset"] = want
    with st.sidebar.form("explore_form"):
        st.markdown("**Run settings** (apply to rerun the tuple stage)")
        st.selectbox("Dataset", list(opts), format_func=opts.get, key="ex_dataset")
        st.number_input("n (generated data only)", min_value=50, max_value=500_000, step=1000,
                        key="ex_n")
        c1, c2 = st.columns(2)
        c1.number_input("k (clusters)", min_value=1, max_value=50, step=1, key="ex_k")
        c2.number_input("t (tuples)", min_value=2, max_value=5000, step=10, key="ex_t",
                        help="Number of pieces. Each piece needs at least k rows; the paper uses "
                             "t = 200. More tuples make the private filters work with less ρ but "
                             "leave fewer rows per piece.")
        st.selectbox("Oracle (non-private, per piece)", list(ORACLES), format_func=ORACLES.get,
                     key="ex_oracle")
        st.number_input("Public radius Λ (empty = the dataset's declared one)", min_value=0.0,
                        format="%.6g", key="ex_radius",
                        help="Rows with norm > Λ are removed (not clipped) before the private "
                             "steps. It must be public (not measured from the data).")
        st.number_input("r_min (smallest radius searched)", min_value=1e-9, format="%.4g",
                        key="ex_rmin")
        st.selectbox("Budget split preset", list(PRESETS), format_func=PRESETS.get,
                     key="ex_preset")
        st.number_input("Seed", min_value=0, max_value=2**31 - 2, step=1, key="ex_seed",
                        help="Seeds the pieces, the oracle and the noise. Same seed + same URL = "
                             "same picture.")
        st.form_submit_button("Apply", key="ex_apply", type="primary", on_click=_apply)
