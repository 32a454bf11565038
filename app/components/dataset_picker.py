"""The dataset picker: generate from a recipe, pick a built-in dataset, or upload a CSV.

The upload path ends with the bounds step: DP needs a *public* bound Λ on every row's norm,
declared by the user. The data's own maximum norm is offered only behind a visible warning.
Uploaded bytes stay in this session's memory (keyed on their sha256) and are never written
to disk.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from app.components import cache, data_source, lib, state

SOURCES = {"generate": "Generate", "builtin": "Built-in (scikit-learn)", "upload": "Upload a CSV"}
MAX_ROWS = 200_000
MAX_MB = 50

WHY_RADIUS = (
    "**Why DP needs Λ.** Differential privacy calibrates its noise to how much *one row* can "
    "change the answer. If rows can be anywhere, one row can move a center arbitrarily far and "
    "no finite noise hides it. So the algorithm clips every row into a ball of radius Λ around "
    "the origin and calibrates to Λ. Λ must be *public*: chosen from domain knowledge (units, "
    "sensor ranges), not measured on the data — a radius measured on the data is itself a "
    "statistic of the data and leaks the most extreme row."
)


def _after_data_change() -> None:
    """When the dataset changes, reset the run knobs that belong to the dataset (k, Λ, r_min)."""
    st.session_state["_data_changed"] = True


def sync_run_defaults(ds) -> None:
    """Apply a dataset's public suggestions (k, r_min) once after the dataset changed."""
    if not st.session_state.pop("_data_changed", False) or ds is None:
        return
    updates = {"radius": None}
    if ds.k:
        updates["k"] = int(ds.k)
    if ds.radius:
        updates["rmin"] = float(f"{ds.radius * 1e-3:.3g}")
    k = updates.get("k", state.get("k"))
    # The paper's t = 200, but keep at least ~5k rows per piece so the oracle can find k clusters
    # (small data gets fewer pieces; FriendlyCore may then fail and say so).
    updates["t"] = min(200, max(2, ds.n // (5 * k)))
    state.update(**updates)


def source_radio() -> str:
    state.seed_widget("src", "source_radio")
    st.radio("Data source", list(SOURCES), format_func=SOURCES.get, key="source_radio",
             horizontal=True, on_change=_source_changed)
    return state.get("src")


def _source_changed() -> None:
    state.update(src=st.session_state["source_radio"])
    _after_data_change()


def _gen_changed() -> None:
    state.update(gen=st.session_state["gen_select"])
    gens = lib.get("data").GENERATORS
    spec = gens.get(state.get("gen"))
    _after_data_change()
    if spec is not None and state.get("n") > spec.default_n:
        state.update(n=spec.default_n)


def _regenerate() -> None:
    state.update(dseed=(int(state.get("dseed")) + 1) % (2**31 - 1))


def generate_panel() -> None:
    """Generator choice (live) and its knobs (in a form with Apply), plus Regenerate."""
    gens = lib.get("data").GENERATORS
    if state.get("gen") not in gens:
        state.update(gen=next(iter(gens)))
    state.seed_widget("gen", "gen_select")
    st.selectbox("Recipe", list(gens), format_func=lambda g: gens[g].title, key="gen_select",
                 on_change=_gen_changed)
    spec = gens[state.get("gen")]
    st.caption(spec.description)
    knobs = data_source.generator_knobs(state.get("gen"))
    with st.form("gen_form", border=True):
        c1, c2, c3 = st.columns(3)
        for name, key in (("n", "gen_n"), ("d", "gen_d"), ("gk", "gen_k"), ("sep", "gen_sep"),
                          ("dseed", "gen_seed")):
            state.seed_widget(name, key)
        c1.number_input("n (rows)", min_value=50, max_value=500_000, step=1000, key="gen_n",
                        help="Number of rows. Anything above ~10⁵ makes the tuple stage slower.")
        c2.number_input("d (dimension)", min_value=1, max_value=200, step=1, key="gen_d",
                        disabled="d" not in knobs, help="Dimension (only for recipes that have one).")
        c3.number_input("k (clusters generated)", min_value=1, max_value=50, step=1, key="gen_k",
                        disabled="gk" not in knobs)
        c1.slider("separation", 0.1, 3.0, step=0.05, key="gen_sep", disabled="sep" not in knobs,
                  help="Spreads the cluster centers apart (only for recipes that have it).")
        c2.number_input("data seed", min_value=0, max_value=2**31 - 2, step=1, key="gen_seed")
        c3.form_submit_button(
            "Apply", key="gen_apply", type="primary",
            on_click=_commit_gen,
        )
    st.button("Regenerate (new data seed)", key="regenerate_button", on_click=_regenerate,
              icon=":material/refresh:")


def _commit_gen() -> None:
    state.commit({"n": ("gen_n", int), "d": ("gen_d", int), "gk": ("gen_k", int),
                  "sep": ("gen_sep", float), "dseed": ("gen_seed", int)})()
    _after_data_change()


def builtin_panel() -> None:
    data = lib.get("data")
    titles = getattr(data, "BUILTIN_TITLES", {})
    if state.get("builtin") not in data.BUILTIN:
        state.update(builtin=next(iter(data.BUILTIN)))
    state.seed_widget("builtin", "builtin_select")
    st.selectbox("Dataset", list(data.BUILTIN), format_func=lambda b: titles.get(b, b),
                 key="builtin_select", on_change=_builtin_changed)
    st.caption("Bundled with scikit-learn (no download). Features are standardized into the public "
               "box [−1, 1]^d, so Λ = √d is known without looking at any row. They are small "
               "(150–1 797 rows): sample-and-aggregate needs many rows per piece, so expect "
               "FriendlyCore to fail here and its fallback to answer — a lesson in itself.")


def _builtin_changed() -> None:
    state.update(builtin=st.session_state["builtin_select"])
    _after_data_change()


# ----------------------------------------------------------------------------- upload


def _load(raw: bytes, columns: tuple[str, ...] | None, name: str):
    """load_csv on the uploaded bytes, memoized in this session by (sha256, columns)."""
    digest = hashlib.sha256(raw).hexdigest()
    load_csv = lib.get("data").load_csv
    return cache.memo("csv", (digest, columns), lambda: load_csv(
        raw, columns=None if columns is None else list(columns), max_rows=MAX_ROWS,
        max_bytes=MAX_MB * 1024 * 1024, name=name))


def _fill_data_radius(value: float) -> None:
    if st.session_state.get("csv_use_data_radius"):
        st.session_state["csv_radius"] = float(f"{value:.6g}")


def _use_upload(ds, radius: float) -> None:
    data_source.remember_upload(ds.with_radius(radius))
    state.update(src="upload")
    _after_data_change()


def upload_panel() -> None:
    """CSV upload → numeric columns → NaN/inf rows dropped → row cap → declare Λ → use."""
    up = st.file_uploader(
        f"CSV file (at most {MAX_MB} MB; the first {MAX_ROWS:,} rows are used)", type=["csv", "txt"],
        key="csv_upload",
        help="Kept in this browser session's memory only; never written to disk or shared. "
             "A shared link carries the parameters but not the data.")
    active = data_source.active_upload()
    if up is None:
        if active is not None:
            st.info(f"Using the uploaded dataset **{active.name}** (n = {active.n:,}, "
                    f"Λ = {active.radius:g}). Upload another file to replace it.")
        return
    raw = up.getvalue()
    try:
        first = _load(raw, None, up.name)
    except ValueError as exc:
        with st.container(key="csv_error"):
            st.error(f"Could not read **{up.name}**: {exc}")
            if active is not None:
                st.caption(f"Still using the previous upload ({active.name}).")
        return
    numeric = list(first.numeric_columns)
    if "csv_columns" not in st.session_state or not set(st.session_state["csv_columns"]) <= set(numeric):
        st.session_state["csv_columns"] = numeric
    cols = st.multiselect("Numeric columns to cluster on", numeric, key="csv_columns",
                          help="Only numeric columns are offered. Each row is one person.")
    if not cols:
        with st.container(key="csv_error"):
            st.error("Pick at least one numeric column.")
        return
    try:
        load = first if tuple(cols) == tuple(numeric) else _load(raw, tuple(cols), up.name)
    except ValueError as exc:
        with st.container(key="csv_error"):
            st.error(str(exc))
        return
    ds = load.dataset
    with st.container(key="csv_messages"):
        if load.dropped_rows:
            st.warning(f"Dropped {load.dropped_rows:,} rows with missing (NaN) or infinite values "
                       "in the chosen columns.")
        if load.truncated:
            st.warning(f"Only the first {MAX_ROWS:,} rows are used (row cap).")
        if ds is not None:
            st.success(f"Read {ds.n:,} rows × {ds.d} columns from **{up.name}**.")
        if load.messages:
            with st.expander("Import details"):
                for m in load.messages:
                    st.markdown(f"- {m}")
    if ds is None:
        return
    st.markdown("#### Bounds: declare the public radius Λ")
    st.markdown(WHY_RADIUS)
    measured = lib.get("data").data_radius(ds.X)
    st.checkbox("Fill in the data's own maximum norm (NOT private)", key="csv_use_data_radius",
                on_change=_fill_data_radius, args=(measured,))
    if st.session_state.get("csv_use_data_radius"):
        st.warning(f"**Not private:** {measured:.6g} is the largest row norm of *this* data. Using "
                   "it as Λ makes the released centers depend on the most extreme row without "
                   "noise, so the DP guarantee no longer holds. Use it only to explore; declare a "
                   "bound from domain knowledge for a real release.", icon=":material/warning:")
    initial = {} if "csv_radius" in st.session_state else {"value": None}
    radius = st.number_input("Public radius Λ (rows with norm > Λ are removed)", min_value=0.0,
                             format="%.6g", key="csv_radius", **initial,
                             placeholder="e.g. 100 if every value is known to lie in [-50, 50]")
    ok = radius is not None and radius > 0
    if st.button("Use this dataset", key="csv_use", type="primary", disabled=not ok,
                 on_click=_use_upload, args=(ds, radius or 1.0)):
        st.success("Using the uploaded dataset. Open **Explore** to run FriendlyCore on it.")
    if not ok:
        st.caption("Declare Λ > 0 to continue.")
