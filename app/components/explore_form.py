"""Explore's sidebar form: the expensive knobs (dataset, n, k, t, oracle, Λ, r_min, preset, seed).

They only take effect on Apply, because changing any of them reruns the non-private tuple stage
(seconds at n = 10⁵). ρ and δ are not here: they are live on the page.
"""

from __future__ import annotations

import streamlit as st

import dpviz.data
from app.components import data_source, dataset_picker, state

ORACLES = {"kmeans++": "k-means++ (scikit-learn KMeans)", "pca": "PCA oracle (Gaussian mixtures)"}
PRESETS = {"practical": "practical (tuned, sound)", "paper": "paper-formal constants",
           "reference": "reference"}


def dataset_options() -> dict[str, str]:
    """Option id → label for every dataset the form can switch to."""
    data = dpviz.data
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
        spec = dpviz.data.GENERATORS[gen]
        state.update(src="generate", gen=gen)
        if state.get("n") > spec.default_n:
            state.update(n=spec.default_n)
    elif option.startswith("builtin:"):
        state.update(src="builtin", builtin=option[8:])
    else:
        state.update(src="upload")
    return True


#: The form's numeric fields: (parameter, widget key, label in the UI, low, high). The widgets
#: themselves take any number, so an out-of-range value gets a message next to its field (a
#: bounded st.number_input only turns red in the browser and submits nothing, silently).
LIMITS = (("n", "ex_n", "n", 50, 500_000), ("k", "ex_k", "k", 1, 50), ("t", "ex_t", "t", 2, 5000),
          ("seed", "ex_seed", "Seed", 0, 2**31 - 2))
_ERRORS = "_explore_form_errors"
_SUBMITTED = "_explore_form_submitted"


def field_errors() -> dict[str, str]:
    """Messages of the last Apply, by widget key (shown under the field)."""
    return st.session_state.get(_ERRORS, {})


#: FriendlyCore's own knobs in this form (shown only when FriendlyCore is the algorithm): the URL
#: parameter and its widget key.
FC_FIELDS = {"t": "ex_t", "oracle": "ex_oracle", "rmin": "ex_rmin", "preset": "ex_preset"}


def _check_limits() -> dict[str, str]:
    errors = {}
    for _name, key, label, low, high in LIMITS:
        if key not in st.session_state:  # a field of another algorithm, not shown
            continue
        v = st.session_state.get(key)
        if v is None or not float(v).is_integer() or not low <= v <= high:
            shown = "empty" if v is None else f"{v:g}"
            errors[key] = (f"{label} must be a whole number from {low:,} to {high:,} (got {shown}); "
                           "nothing was changed and the previous result stays.")
    rmin = st.session_state.get("ex_rmin", 1.0)
    if rmin is None or not rmin > 0:
        errors["ex_rmin"] = "r_min must be above 0; nothing was changed."
    return errors


def _apply() -> None:
    ss = st.session_state
    errors = _check_limits()
    ss[_ERRORS] = errors
    if errors:  # keep every parameter (and the result on screen) as it was
        return
    k_before = state.get("k")
    changed = _set_dataset(ss["ex_dataset"])
    fields = {"n": ("ex_n", int), "k": ("ex_k", int), "t": ("ex_t", int),
              "oracle": ("ex_oracle", str), "radius": ("ex_radius", _radius),
              "rmin": ("ex_rmin", float), "preset": ("ex_preset", str), "seed": ("ex_seed", int)}
    state.commit({name: f for name, f in fields.items() if f[0] in ss})()
    ss[_SUBMITTED] = {name: state.get(name) for name in ("t", "k", "rmin")}
    if changed:
        # The new dataset's suggestions (k, r_min, Λ = its declared one) apply unless the user
        # changed k in the same Apply.
        st.session_state["_data_changed"] = True
        if state.get("k") != k_before:
            st.session_state["_keep_k"] = state.get("k")


def _radius(v):
    return None if v is None or v <= 0 else float(v)


_SEEN = "_explore_seen_settings"
_WHY = {
    "t": "t (pieces) is at most n/(5k), so each piece keeps about 5k rows for the oracle to find k "
         "clusters, and at most the paper's 200",
    "k": "the dataset's suggested number of clusters",
    "rmin": "r_min is 10⁻³·Λ of the dataset",
}
_LABEL = {"t": "t", "k": "k", "rmin": "r_min"}


def sync_run_defaults(ds) -> list[str]:
    """Apply the dataset's suggestions after a dataset change, and say what changed by itself.

    Returns one sentence per setting (t, k, r_min) that changed since Explore last showed it
    without the user typing it: after a dataset change (with the reason), or from a link or
    another page (Compare, Budget). Issue 16: t went 200 → 3 for iris silently.
    """
    keep_k = st.session_state.pop("_keep_k", None)
    data_changed = bool(st.session_state.get("_data_changed"))
    dataset_picker.sync_run_defaults(ds)
    if keep_k is not None:
        state.update(k=keep_k)
    now = {name: state.get(name) for name in ("t", "k", "rmin")}
    seen = st.session_state.get(_SEEN)
    typed = st.session_state.pop(_SUBMITTED, {})
    st.session_state[_SEEN] = {**now, "_dataset": current_option()}
    if seen is None:
        return []
    # The Data page applies the suggestions itself (its own sync_run_defaults): a dataset that
    # changed since Explore last showed one explains the change as well.
    data_changed = data_changed or seen.get("_dataset") != current_option()
    notes = []
    for name, value in now.items():
        if value == seen.get(name):
            continue
        if (not data_changed and typed.get(name) == value) or (name == "k" and keep_k is not None):
            continue  # the user typed it (a k typed with a new dataset is kept as typed)
        why = (f"for this dataset: {_WHY[name]}" if data_changed
               else "by a link or another page (Compare, Budget)")
        notes.append(f"{_LABEL[name]} changed from {seen[name]:g} to {value:g} automatically, {why}.")
    return notes


def _message(errors: dict[str, str], key: str) -> None:
    """The Apply's message for one field, right under it (container ``<key>_msg``)."""
    if key in errors:
        with st.container(key=f"{key}_msg"):
            st.error(errors[key], icon=":material/error:")


def sidebar_form(algorithm: str | None = None) -> None:
    """The data and run settings; FriendlyCore's own knobs (t, oracle, r_min, preset) only when the
    chosen ``algorithm`` is FriendlyCore (or none is chosen yet); another algorithm's parameters are
    its own form, generated from its spec."""
    friendlycore = algorithm in (None, "friendlycore")
    opts = dataset_options()
    if current_option() not in opts:
        opts[current_option()] = current_option()
    keys = {"n": "ex_n", "k": "ex_k", "radius": "ex_radius", "seed": "ex_seed"}
    if friendlycore:
        keys |= FC_FIELDS
    else:  # not shown: their widget values would be committed by Apply
        for key in FC_FIELDS.values():
            st.session_state.pop(key, None)
    for name, key in keys.items():
        state.seed_widget(name, key)
    want = current_option()
    if st.session_state.get("ex_dataset") != want:
        st.session_state["ex_dataset"] = want
    with st.sidebar.form("explore_form"):
        st.markdown("**Run settings** (apply to rerun the tuple stage)")
        st.selectbox("Dataset", list(opts), format_func=opts.get, key="ex_dataset")
        errors = field_errors()
        st.number_input("n (generated data only)", step=1000, key="ex_n",
                        help="Rows to generate: 50 to 500,000.")
        _message(errors, "ex_n")
        c1, c2 = st.columns(2)
        with c1:
            st.number_input("k (clusters)", step=1, key="ex_k", help="1 to 50.")
            _message(errors, "ex_k")
        if friendlycore:
            with c2:
                st.number_input("t (tuples)", step=10, key="ex_t",
                                help="Number of pieces, 2 to 5,000. Each piece needs at least k rows; "
                                     "the paper uses t = 200. More tuples make the private filters "
                                     "work with less ρ but leave fewer rows per piece.")
                _message(errors, "ex_t")
            st.selectbox("Oracle (non-private, per piece)", list(ORACLES), format_func=ORACLES.get,
                         key="ex_oracle")
        st.number_input("Public radius Λ (empty = the dataset's declared one)", min_value=0.0,
                        format="%.6g", key="ex_radius",
                        help="Rows with norm > Λ are removed (not clipped) before the private "
                             "steps. It must be public (not measured from the data).")
        if friendlycore:
            st.number_input("r_min (smallest radius searched)", format="%.4g", key="ex_rmin")
            _message(errors, "ex_rmin")
            st.selectbox("Budget split preset", list(PRESETS), format_func=PRESETS.get,
                         key="ex_preset")
        st.number_input("Seed", step=1, key="ex_seed",
                        help="Seeds the pieces, the oracle and the noise. Same seed + same URL = "
                             "same picture.")
        _message(errors, "ex_seed")
        st.form_submit_button("Apply", key="ex_apply", type="primary", on_click=_apply)
