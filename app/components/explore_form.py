"""Explore's sidebar form: the expensive knobs (dataset, n, k, Λ, seed, and the chosen family's
own fields from its folder, ``app/components/<family>/form.py``; FriendlyCore's t, oracle, r_min,
preset).

They only take effect on Apply, because changing any of them reruns the non-private stage
(seconds at n = 10⁵). ε and δ are not here: they are live on the page.
"""

from __future__ import annotations

import streamlit as st

import dpviz.data
from app.components import data_source, dataset_picker, families, keys, state
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
KEEP_K: Key[int] = Key("_keep_k", int, "a k typed with a new dataset (kept over its suggestion)")
_ERRORS: Key[dict] = Key(
    "_explore_form_errors", dict, "widget key → message of the last Apply")
_SUBMITTED: Key[dict] = Key(
    "_explore_form_submitted", dict, "t, k, r_min as the user typed them in the last Apply")
_SEEN: Key[dict] = Key(
    "_explore_seen_settings", dict, "t, k, r_min and the dataset Explore last showed")
EX_DATASET: Key[str] = Key("ex_dataset", str, "sidebar form: the dataset option")
EX_N: Key[int] = Key("ex_n", int, "sidebar form: rows to generate")
EX_K: Key[int] = Key("ex_k", int, "sidebar form: k")
EX_RADIUS: Key[float] = Key("ex_radius", float, "sidebar form: the public radius Λ (0 = declared)")
EX_SEED: Key[int] = Key("ex_seed", int, "sidebar form: the run seed")
EXPLORE_FORM: Key[object] = Key("explore_form", object, "form: Explore's sidebar form (FriendlyCore's)")
EX_APPLY: Key[bool] = Key("ex_apply", bool, "form_submit_button: Apply of the sidebar form")


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
LIMITS = (("n", EX_N, "n", 50, 500_000), ("k", EX_K, "k", 1, 50),
          ("seed", EX_SEED, "Seed", 0, 2**31 - 2))


def field_errors() -> dict[str, str]:
    """Messages of the last Apply, by widget key (shown under the field)."""
    return st.session_state.get(_ERRORS, {})


def family_form(algorithm: str | None = None):
    """The form part of ``algorithm``'s family folder (default: the algorithm Explore shows), or
    None when its parameters are all in its generated form."""
    return families.module(algorithm or state.get("alg"), "form")


def _check_limits() -> dict[str, str]:
    errors = {}
    form = family_form()
    for _name, key, label, low, high in (*LIMITS, *(form.LIMITS if form else ())):
        if key not in st.session_state:  # a field of another algorithm, not shown
            continue
        v = st.session_state.get(key)
        if v is None or not float(v).is_integer() or not low <= v <= high:
            shown = "empty" if v is None else f"{v:g}"
            errors[key] = (f"{label} must be a whole number from {low:,} to {high:,} (got {shown}); "
                           "nothing was changed and the previous result stays.")
    return errors | (form.check() if form else {})


def _apply() -> None:
    ss = st.session_state
    errors = _check_limits()
    ss[_ERRORS] = errors
    if errors:  # keep every parameter (and the result on screen) as it was
        return
    k_before = state.get("k")
    changed = _set_dataset(ss[EX_DATASET])
    form = family_form()
    fields = {"n": (EX_N, int), "k": (EX_K, int), "radius": (EX_RADIUS, _radius),
              "seed": (EX_SEED, int), **(form.FIELDS if form else {})}
    state.commit({name: f for name, f in fields.items() if f[0] in ss})()
    ss[_SUBMITTED] = {name: state.get(name) for name in ("t", "k", "rmin")}
    if changed:
        # The new dataset's suggestions (k, r_min, Λ = its declared one) apply unless the user
        # changed k in the same Apply.
        st.session_state[keys.DATA_CHANGED] = True
        if state.get("k") != k_before:
            st.session_state[KEEP_K] = state.get("k")


def _radius(v):
    return None if v is None or v <= 0 else float(v)


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
    keep_k = st.session_state.pop(KEEP_K, None)
    data_changed = bool(st.session_state.get(keys.DATA_CHANGED))
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
    # what the dataset suggests (t by its rule at the suggested k, or at the k now)
    suggested = [] if ds is None else [data_source.suggestions(ds),
                                       data_source.suggestions(ds, int(now["k"]))]
    for name, value in now.items():
        if value == seen.get(name):
            continue
        if (not data_changed and typed.get(name) == value) or (name == "k" and keep_k is not None):
            continue  # the user typed it (a k typed with a new dataset is kept as typed)
        # Issue 43: a k set to 4 on the Data page after choosing Iris (suggested 3) is not "the
        # dataset's suggested number": the dataset explains a value only when it is its suggestion.
        from_data = data_changed and any(sg.get(name) == value for sg in suggested)
        why = (f"for this dataset: {_WHY[name]}" if from_data
               else "on another page or by a link (Data, Compare, Budget)")
        notes.append(f"{_LABEL[name]} changed from {seen[name]:g} to {value:g} automatically, {why}.")
    return notes


def _message(errors: dict[str, str], key: str) -> None:
    """The Apply's message for one field, right under it (container ``<key>_msg``)."""
    if key in errors:
        with st.container(key=f"{key}_msg"):
            st.error(errors[key], icon=":material/error:")


def _shown_keys() -> set[str]:
    """Every family form's widget keys (those of a family not shown are dropped before Apply)."""
    return {key for path in families.ROOT.glob("*/form.py")
            for key, _ in families.module(path.parent.name, "form").FIELDS.values()}


def sidebar_form(algorithm: str | None = None) -> None:
    """The data and run settings; the chosen ``algorithm``'s family fields (its folder's
    ``form.py``; the default algorithm's when none is chosen yet) only when it is shown; another
    algorithm's parameters are its own form, generated from its spec."""
    form = family_form(algorithm or state.DEFAULT_ALGORITHM)
    opts = dataset_options()
    if current_option() not in opts:
        opts[current_option()] = current_option()
    widgets = {"n": EX_N, "k": EX_K, "radius": EX_RADIUS, "seed": EX_SEED}
    own = {name: key for name, (key, _conv) in (form.FIELDS if form else {}).items()}
    widgets |= own
    for key in _shown_keys() - set(own.values()):  # not shown: Apply would commit them
        st.session_state.pop(key, None)
    for name, key in widgets.items():
        state.seed_widget(name, key, in_form=True)
    want = current_option()
    if st.session_state.get(EX_DATASET) != want:
        st.session_state[EX_DATASET] = want
    with st.sidebar.form(EXPLORE_FORM):
        st.markdown("**Run settings** (apply to rerun the tuple stage)")
        st.selectbox("Dataset", list(opts), format_func=opts.get, key=EX_DATASET)
        errors = field_errors()

        def message(key: str) -> None:
            _message(errors, key)

        st.number_input("n (generated data only)", step=1000, key=EX_N,
                        help="Rows to generate: 50 to 500,000.")
        message(EX_N)
        c1, c2 = st.columns(2)
        with c1:
            st.number_input("k (clusters)", step=1, key=EX_K, help="1 to 50.")
            message(EX_K)
        if form:
            with c2:
                form.beside_k(message)
            form.under_k()
        st.number_input("Public radius Λ (empty = the dataset's declared one)", min_value=0.0,
                        format="%.6g", key=EX_RADIUS,
                        help="Rows with norm > Λ are removed (not clipped) before the private "
                             "steps. It must be public (not measured from the data).")
        if form:
            form.after_radius(message)
        st.number_input("Seed", step=1, key=EX_SEED,
                        help="Seeds the pieces, the oracle and the noise. Same seed + same URL = "
                             "same picture.")
        message(EX_SEED)
        st.form_submit_button("Apply", key=EX_APPLY, type="primary", on_click=_apply)
