"""The dataset picker: generate from a recipe, pick a built-in dataset, or upload a CSV.

The upload path ends with the bounds step: DP needs a *public* bound Λ on every row's norm,
declared by the user. The data's own maximum norm is offered only behind a visible warning.
Uploaded bytes stay in this session's memory (keyed on their sha256) and are never written
to disk.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import streamlit as st

import dpviz.data
from app.components import cache, classroom, data_source, keys, safe, state
from app.components.keys import Key
from dpviz.data import columns

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
RECIPE_SELECT: Key[str] = Key("gen_select", str, "selectbox: the generator recipe (live)")
RECIPE_FORM: Key[object] = Key("gen_form", object, "form: the recipe's knobs, applied together")
RECIPE_N: Key[int] = Key("gen_n", int, "number_input: rows to generate")
RECIPE_D: Key[int] = Key("gen_d", int, "number_input: the dimension")
RECIPE_K: Key[int] = Key("gen_k", int, "number_input: clusters generated")
RECIPE_SEP: Key[float] = Key("gen_sep", float, "slider: the separation of the cluster centers")
RECIPE_SEED: Key[int] = Key("gen_seed", int, "number_input: the data seed")
RECIPE_APPLY: Key[bool] = Key("gen_apply", bool, "form_submit_button: apply the recipe's knobs")
REGENERATE: Key[bool] = Key("regenerate_button", bool, "button: a new data seed")
BUILTIN_SELECT: Key[str] = Key("builtin_select", str, "selectbox: the built-in dataset")
CSV_COLUMNS: Key[list] = Key("csv_columns", list, "multiselect: the numeric columns to cluster on")
CSV_COLUMNS_CAPPED: Key[object] = Key(
    "csv_columns_capped", object, "container: only the first numeric columns were pre-selected")
CSV_IDS: Key[object] = Key("csv_ids", object, "container: columns that look like identifiers")
CSV_MISSING: Key[str] = Key("csv_missing", str, "radio: rows with a missing value, drop or fill")
CSV_FILL: Key[float] = Key(
    "csv_fill_", float, "prefix: number_input, a column's fill value, csv_fill_<digest>_<column>")
CSV_SCALE: Key[str] = Key("csv_scale", str, "radio: the scaling of the columns")
CSV_BOUNDS: Key[object] = Key("csv_bounds", object, "container: the declared per-column bounds")
CSV_LO: Key[float] = Key(
    "csv_lo_", float, "prefix: number_input, a column's declared low, csv_lo_<digest>_<column>")
CSV_HI: Key[float] = Key(
    "csv_hi_", float, "prefix: number_input, a column's declared high, csv_hi_<digest>_<column>")
CSV_ERROR: Key[object] = Key("csv_error", object, "container: unreadable file / no columns")
CSV_PREVIEW: Key[object] = Key("csv_preview", object, "container: the file's first rows")
CSV_MESSAGES: Key[object] = Key("csv_messages", object, "container: dropped-row count, row cap, success")
CSV_DECLARED_N: Key[int] = Key("csv_declared_n", int, "number_input: the declared n (0 = the data's)")
CSV_USE_DATA_RADIUS: Key[bool] = Key(
    "csv_use_data_radius", bool, "checkbox: fill in the data's own maximum norm (NOT private)")
CSV_RADIUS: Key[float] = Key("csv_radius", float, "number_input: the declared Λ")
CSV_USE: Key[bool] = Key("csv_use", bool, "button: use this dataset")

SOURCES = {"generate": "Generate", "builtin": "Built-in (scikit-learn)", "upload": "Upload a CSV"}
MAX_ROWS = 200_000
#: The app's upload limit, in MB of 1024² bytes (what ``dpviz.data.load_csv``'s ``max_bytes`` gets).
MAX_MB = 50
MAX_BYTES = MAX_MB * 1024 * 1024
#: What the uploader itself accepts (Streamlit's per-widget limit, above ``server.maxUploadSize``):
#: a file a little over MAX_MB reaches the app, which says the limit in bytes (issue 43: Streamlit's
#: own refusal read "50.0MB … File must be 50.0MB or smaller" for a file just over it).
UPLOAD_CEILING_MB = 2 * MAX_MB
#: Numeric columns pre-selected at most (issue 43: a 500-column file pre-selected all 500).
MAX_DEFAULT_COLUMNS = 20

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
    st.session_state[keys.DATA_CHANGED] = True


def sync_run_defaults(ds) -> None:
    """Apply a dataset's public suggestions (k, r_min) once after the dataset changed."""
    if not st.session_state.pop(keys.DATA_CHANGED, False) or ds is None:
        return
    state.update(**data_source.suggestions(ds))


def source_radio() -> str:
    state.seed_widget("src", keys.SOURCE_RADIO)
    sources = [s for s in SOURCES if s != "upload" or not classroom.on()]  # issue 37
    st.radio("Data source", sources, format_func=SOURCES.get, key=keys.SOURCE_RADIO,
             horizontal=True, on_change=_source_changed)
    return state.get("src")


def _source_changed() -> None:
    state.update(src=st.session_state[keys.SOURCE_RADIO])
    _after_data_change()


def _gen_changed() -> None:
    state.update(gen=st.session_state[RECIPE_SELECT])
    gens = dpviz.data.GENERATORS
    spec = gens.get(state.get("gen"))
    _after_data_change()
    if spec is not None and state.get("n") > spec.default_n:
        state.update(n=spec.default_n)


def _regenerate() -> None:
    state.update(dseed=(int(state.get("dseed")) + 1) % (2**31 - 1))


def generate_panel() -> None:
    """Generator choice (live) and its knobs (in a form with Apply), plus Regenerate."""
    gens = dpviz.data.GENERATORS
    if state.get("gen") not in gens:
        state.update(gen=next(iter(gens)))
    state.seed_widget("gen", RECIPE_SELECT)
    st.selectbox("Recipe", list(gens), format_func=lambda g: gens[g].title, key=RECIPE_SELECT,
                 on_change=_gen_changed)
    spec = gens[state.get("gen")]
    st.caption(spec.description)
    knobs = data_source.generator_knobs(state.get("gen"))
    with st.form(RECIPE_FORM, border=True):
        c1, c2, c3 = st.columns(3)
        for name, key in (("n", RECIPE_N), ("d", RECIPE_D), ("gk", RECIPE_K),
                          ("sep", RECIPE_SEP), ("dseed", RECIPE_SEED)):
            state.seed_widget(name, key, in_form=True)
        c1.number_input("n (rows)", min_value=50, max_value=500_000, step=1000, key=RECIPE_N,
                        help="Number of rows. Anything above ~10⁵ makes the tuple stage slower.")
        c2.number_input("d (dimension)", min_value=1, max_value=200, step=1, key=RECIPE_D,
                        disabled="d" not in knobs, help="Dimension (only for recipes that have one).")
        c3.number_input("k (clusters generated)", min_value=1, max_value=50, step=1, key=RECIPE_K,
                        disabled="gk" not in knobs)
        c1.slider("separation", 0.1, 3.0, step=0.05, key=RECIPE_SEP, disabled="sep" not in knobs,
                  help="Spreads the cluster centers apart (only for recipes that have it).")
        c2.number_input("data seed", min_value=0, max_value=2**31 - 2, step=1, key=RECIPE_SEED)
        c3.form_submit_button(
            "Apply", key=RECIPE_APPLY, type="primary",
            on_click=_commit_gen,
        )
    st.button("Regenerate (new data seed)", key=REGENERATE, on_click=_regenerate,
              icon=":material/refresh:")


def _commit_gen() -> None:
    state.commit({"n": (RECIPE_N, int), "d": (RECIPE_D, int), "gk": (RECIPE_K, int),
                  "sep": (RECIPE_SEP, float), "dseed": (RECIPE_SEED, int)})()
    _after_data_change()


def builtin_panel() -> None:
    data = dpviz.data
    titles = getattr(data, "BUILTIN_TITLES", {})
    if state.get("builtin") not in data.BUILTIN:
        state.update(builtin=next(iter(data.BUILTIN)))
    state.seed_widget("builtin", BUILTIN_SELECT)
    st.selectbox("Dataset", list(data.BUILTIN), format_func=lambda b: titles.get(b, b),
                 key=BUILTIN_SELECT, on_change=_builtin_changed)
    st.caption("Bundled with scikit-learn (no download). Features are standardized into the public "
               "box [−1, 1]^d, so Λ = √d is known without looking at any row. They are small "
               "(150–1 797 rows): sample-and-aggregate needs many rows per piece, so expect "
               "FriendlyCore to fail here and its fallback to answer — a lesson in itself.")


def _builtin_changed() -> None:
    state.update(builtin=st.session_state[BUILTIN_SELECT])
    _after_data_change()


# ----------------------------------------------------------------------------- upload


def _load(raw: bytes, columns: tuple[str, ...] | None, name: str,
          impute: tuple[tuple[str, float], ...] = ()):
    """load_csv on the uploaded bytes, memoized in this session by (sha256, columns, fills)."""
    digest = hashlib.sha256(raw).hexdigest()
    load_csv = dpviz.data.load_csv
    return cache.memo("csv", (digest, columns, impute), lambda: load_csv(
        raw, columns=None if columns is None else list(columns), max_rows=MAX_ROWS,
        max_bytes=MAX_BYTES, name=name, impute=dict(impute) or None))


#: Largest Λ the app accepts (the URL parameter ``radius`` has the same cap, app/components/state.py).
MAX_RADIUS = 1e12

#: Shown next to the controls that put something derived from the rows into the URL or the
#: run-configuration download (issue 19: nothing data-derived leaves the page unannounced).
DISCLOSE_MAX_NORM = (
    "It also leaves the page: once you use the dataset, r_min = 10⁻³·Λ goes into the page's URL "
    "and Λ into the run-configuration download.")
DISCLOSE_USE = (
    "Using the dataset puts r_min = 10⁻³·Λ into the page's URL, and t: the paper's 200, or from the "
    "n you declare — never from your row count. The run-configuration download also carries the "
    "file name and the chosen column names. None of these is private; the rows themselves, their "
    "count and any fingerprint of them never leave this session.")


def _fill_data_radius(value: float) -> None:
    if st.session_state.get(CSV_USE_DATA_RADIUS):
        st.session_state[CSV_RADIUS] = min(float(f"{value:.6g}"), MAX_RADIUS)


def _declared_n() -> None:
    """An optional public size for the upload (sets Explore's default t; never read from the rows)."""
    st.number_input("Declared n (public, optional): the number of rows as a public fact", min_value=0,
                    max_value=10**9, value=0, step=100, key=CSV_DECLARED_N,
                    help="E.g. from the data's documentation. It sets Explore's number of pieces "
                         "t = min(200, n / 5k), which goes into the page's URL. 0: t stays at the "
                         "paper's 200 (lower it on Explore for a small table); the row count read "
                         "from the file is never used for it.")


def _use_upload(ds, radius: float, from_data: bool = False) -> None:
    """Make the upload the active dataset with Λ = ``radius``; ``from_data`` marks a Λ filled
    from the rows' own maximum norm (its provenance travels with the dataset to the Release page)."""
    ds = ds.with_radius(radius)
    if from_data:
        ds = replace(ds, params=dict(ds.params) | {"radius_source": data_source.RADIUS_FROM_DATA})
    n_decl = int(st.session_state.get(CSV_DECLARED_N) or 0)
    if n_decl:
        ds = replace(ds, params=dict(ds.params) | {"n_declared": n_decl})
    data_source.remember_upload(ds)
    state.update(src="upload")
    _after_data_change()


def _default_columns(first) -> list[str]:
    """Every numeric column but the likely id/label ones (and, when all together leave too few
    rows, but the ones with missing values)."""
    ids = dict(first.likely_ids)
    missing = dict(first.missing_by_column)
    numeric = list(first.numeric_columns)
    chosen = [c for c in numeric if c not in ids] or numeric
    if first.dataset is None:
        chosen = [c for c in chosen if not missing.get(c)] or chosen[:1]
    return chosen[:MAX_DEFAULT_COLUMNS]


def _candidate_count(first) -> int:
    """How many columns :func:`_default_columns` would pick without its cap."""
    ids = dict(first.likely_ids)
    numeric = list(first.numeric_columns)
    return len([c for c in numeric if c not in ids] or numeric)


def _missing_choice(cols: list[str], missing: dict[str, int], digest: str) -> tuple[tuple[str, float], ...]:
    """Drop rows with a missing value in a chosen column, or fill each such column with a constant
    the user declares. Returns the fills ((column, value), …), empty when dropping."""
    gaps = [c for c in cols if missing.get(c)]
    if not gaps:
        return ()
    how = st.radio("Rows with a missing value in a chosen column", ["drop", "fill"], key=CSV_MISSING,
                   format_func={"drop": "Drop those rows",
                                "fill": "Fill with a constant I declare"}.get, horizontal=True)
    if how == "drop":
        return ()
    st.caption("Type a value you know from the domain (a typical or neutral value). Not the "
               "column's mean: a mean measured on the rows is a statistic of the data, not public.")
    fills = []
    for c in gaps:
        v = st.number_input(f"Fill value for {safe.md(c)} ({missing[c]:,} missing)", value=0.0,
                            format="%.6g", key=f"{CSV_FILL}{digest}_{_slug(c)}")
        fills.append((c, float(v)))
    return tuple(fills)


SCALINGS = {"none": "No scaling (raw units)",
            "bounds": "Scale each column by bounds I declare (public)",
            "data": "Standardize by this file's mean and sd (NOT private)"}


def _scaling(ds, digest: str):
    """Optional scaling: by declared per-column bounds onto [−1, 1] (public), or by the data's
    own mean and sd (a convenience, labelled NOT private). None when the bounds are invalid."""
    st.markdown("## Scale the columns?")
    how = st.radio("Scaling", list(SCALINGS), format_func=SCALINGS.get, key=CSV_SCALE,
                   help="A column in the tens of thousands (income) outweighs one in tens (age) in "
                        "every distance. Declared bounds put every column on [−1, 1].")
    if how == "none":
        return ds
    if how == "data":
        st.warning("**Not private:** the mean and sd are statistics of *these* rows (one row moves "
                   "them), so the DP guarantee does not cover this scaling. Use it to explore; for a "
                   "release, declare bounds. The run's description says so too.",
                   icon=":material/warning:")
        return columns.scale_by_data(ds)
    lo_s, hi_s = columns.suggest_bounds(ds.X)
    st.caption("Prefilled with this file's range rounded outward: that is **NOT private** (a range "
               "measured on the rows). Type the bounds you know (units, legal or sensor ranges) for "
               "a real release; values outside are clipped to the bound.")
    lo, hi = [], []
    with st.container(key=CSV_BOUNDS):
        for j, c in enumerate(ds.feature_names[:MAX_BOUND_COLUMNS]):  # one pair of fields a column
            a, b = st.columns(2)
            lo.append(a.number_input(f"{safe.md(c)}: lower bound", value=float(lo_s[j]), format="%.6g",
                                     key=f"{CSV_LO}{digest}_{_slug(c)}"))
            hi.append(b.number_input(f"{safe.md(c)}: upper bound", value=float(hi_s[j]), format="%.6g",
                                     key=f"{CSV_HI}{digest}_{_slug(c)}"))
    if ds.d > MAX_BOUND_COLUMNS:
        st.error(f"Declaring bounds here works for up to {MAX_BOUND_COLUMNS} columns; pick fewer.")
        return None
    try:
        out = columns.scale_by_bounds(ds, lo, hi)
    except ValueError as exc:
        st.error(safe.md(exc))
        return None
    if np.allclose(lo, lo_s) and np.allclose(hi, hi_s):
        out = replace(out, params=dict(out.params) | {"bounds_source": BOUNDS_FROM_DATA})
    return out


def _slug(name: str) -> str:
    """A widget-key-safe tag for a column name (its names are user text)."""
    return hashlib.sha1(name.encode()).hexdigest()[:10]


#: Bound inputs shown at most (one pair of fields per column).
MAX_BOUND_COLUMNS = 30
BOUNDS_FROM_DATA = "suggested from this file's range (NOT private)"


def _column_label(missing: dict[str, int]):
    """Picker labels: the column name, and how many rows it would drop (plain text)."""
    def label(c: str) -> str:
        m = missing.get(c, 0)
        return f"{c} ({m:,} rows missing)" if m else c
    return label


def upload_panel() -> None:
    """CSV upload → numeric columns → NaN/inf rows dropped → row cap → declare Λ → use.

    Everything from the file (its name, column names, messages quoting them) is shown as text
    (:mod:`app.components.safe`)."""
    up = st.file_uploader(
        f"CSV file (at most {MAX_MB} MB = {MAX_BYTES:,} bytes; the first {MAX_ROWS:,} rows are used)",
        type=["csv", "txt"], key=keys.CSV_UPLOAD, max_upload_size=UPLOAD_CEILING_MB,
        help="Kept in this browser session's memory only; never written to disk or shared. "
             "A shared link carries parameters, not rows (see below for the ones set from an upload).")
    active = data_source.active_upload()
    if up is None:
        if active is not None:
            st.info(f"Using the uploaded dataset **{safe.md(active.name)}** (n = {active.n:,}, "
                    f"Λ = {active.radius:g}). Upload another file to replace it.")
        return
    raw = up.getvalue()
    fname = safe.md(up.name)
    if len(raw) > MAX_BYTES:
        with st.container(key=CSV_ERROR):
            st.error(f"**{fname}** is {len(raw):,} bytes ({len(raw) / 1024**2:.2f} MB): more than this "
                     f"app's limit of {MAX_MB} MB = {MAX_BYTES:,} bytes. Keep fewer rows (only the "
                     f"first {MAX_ROWS:,} are used) or fewer columns, and upload it again.")
            if active is not None:
                st.caption(f"Still using the previous upload ({safe.md(active.name)}).")
        return
    try:
        first = _load(raw, None, up.name)
    except ValueError as exc:
        with st.container(key=CSV_ERROR):
            st.error(f"Could not read **{fname}**: {safe.md(exc)}")
            if active is not None:
                st.caption(f"Still using the previous upload ({safe.md(active.name)}).")
        return
    digest = hashlib.sha256(raw).hexdigest()[:12]
    with st.container(key=CSV_PREVIEW):
        st.markdown("## Preview: the first rows, as read")
        st.code(safe.text_table(first.preview), language=None)
        st.caption("Shown as plain text, for you only (your rows never leave this session).")
    numeric = list(first.numeric_columns)
    missing = dict(first.missing_by_column)
    ids = dict(first.likely_ids)
    chosen = st.session_state.get(CSV_COLUMNS)
    default = _default_columns(first)
    if chosen is None or not set(chosen) <= set(numeric):
        st.session_state[CSV_COLUMNS] = default
    capped = (_candidate_count(first) > MAX_DEFAULT_COLUMNS
              and list(st.session_state[CSV_COLUMNS]) == default)
    cols = st.multiselect("Numeric columns to cluster on", numeric, key=CSV_COLUMNS,
                          format_func=_column_label(missing),
                          help="Only numeric columns are offered. Each row is one person. A column "
                               "with missing values drops those rows (or fill them below); leave "
                               "it out to keep them.")
    if capped:
        with st.container(key=CSV_COLUMNS_CAPPED):
            st.info(f"The file has {_candidate_count(first):,} numeric columns; the first "
                    f"{MAX_DEFAULT_COLUMNS} are picked to start. Choose the ones that describe "
                    "a person above: every extra column spreads the same noise over more "
                    f"dimensions, and bounds can be declared for up to {MAX_BOUND_COLUMNS}.",
                    icon=":material/view_column:")
    if ids:
        with st.container(key=CSV_IDS):
            st.caption("Left out by default (add them back above if they are real features): " + "; ".join(
                f"{safe.md(c)} — {safe.md(why)}" for c, why in ids.items()) + ". Clustering on an "
                "identifier or a label groups row numbers or the answer key, not people.")
    if any(missing.values()):
        st.caption("Rows each column would drop: " + ", ".join(
            f"{safe.md(c)} {m:,}" for c, m in missing.items() if m) + ".")
    if not cols:
        with st.container(key=CSV_ERROR):
            st.error("Pick at least one numeric column.")
        return
    fills = _missing_choice(cols, missing, digest)
    try:
        load = first if tuple(cols) == tuple(numeric) and not fills else \
            _load(raw, tuple(cols), up.name, fills)
    except ValueError as exc:
        with st.container(key=CSV_ERROR):
            st.error(safe.md(exc))
        return
    ds = load.dataset
    with st.container(key=CSV_MESSAGES):
        if ds is None:
            st.warning("All numeric columns together leave too few rows: pick fewer columns above.")
        if load.dropped_rows and ds is not None:
            st.warning(f"Dropped {load.dropped_rows:,} rows with missing (NaN), infinite or too large "
                       "values in the chosen columns.")
        if load.truncated:
            st.warning(f"Only the first {MAX_ROWS:,} rows are used (row cap).")
        if ds is not None:
            st.success(f"Read {ds.n:,} rows × {ds.d} columns from **{fname}**.")
        if load.messages:
            with st.expander("Import details"):
                for m in load.messages:
                    st.markdown(f"- {safe.md(m)}")
    if ds is None:
        return
    ds = _scaling(ds, digest)
    if ds is None:
        return
    if ds.params.get("scaled") == columns.SCALED_BY_BOUNDS:
        st.markdown("## Bounds: Λ follows from your declared bounds")
        st.caption(f"Every scaled row lies in the box [−1, 1]^{ds.d}, so Λ = √{ds.d} = "
                   f"{ds.radius:.4g} is declared without looking at any row.")
        _declared_n()
        st.button("Use this dataset", key=CSV_USE, type="primary", on_click=_use_upload,
                  args=(ds, ds.radius))
        st.caption(DISCLOSE_USE)
        return
    st.markdown("## Bounds: declare the public radius Λ")
    st.markdown(WHY_RADIUS)
    measured = dpviz.data.data_radius(ds.X)
    st.checkbox("Fill in the data's own maximum norm (NOT private)", key=CSV_USE_DATA_RADIUS,
                on_change=_fill_data_radius, args=(measured,))
    if st.session_state.get(CSV_USE_DATA_RADIUS):
        too_big = (f" It exceeds the largest Λ the app accepts ({MAX_RADIUS:g}), so Λ = {MAX_RADIUS:g}: "
                   "rescale the columns." if measured > MAX_RADIUS else "")
        st.warning(f"**Not private:** {measured:.6g} is the largest row norm of *this* data. Using "
                   "it as Λ makes the released centers depend on the most extreme row without "
                   "noise, so the DP guarantee no longer holds. Use it only to explore; declare a "
                   f"bound from domain knowledge for a real release. {DISCLOSE_MAX_NORM}{too_big}",
                   icon=":material/warning:")
    initial = {} if CSV_RADIUS in st.session_state else {"value": None}
    radius = st.number_input("Public radius Λ (rows with norm > Λ are removed)", min_value=0.0,
                             max_value=MAX_RADIUS, format="%.6g", key=CSV_RADIUS, **initial,
                             placeholder="e.g. 100 if every value is known to lie in [-50, 50]")
    ok = radius is not None and radius > 0
    _declared_n()
    filled = min(float(f"{measured:.6g}"), MAX_RADIUS)
    from_data = bool(st.session_state.get(CSV_USE_DATA_RADIUS)) or (
        ok and abs(radius - filled) <= 1e-9 * max(filled, 1.0))  # typed over, or typed the same value
    if st.button("Use this dataset", key=CSV_USE, type="primary", disabled=not ok,
                 on_click=_use_upload, args=(ds, radius or 1.0, from_data)):
        st.success("Using the uploaded dataset. Open **Explore** to run FriendlyCore on it.")
    st.caption(DISCLOSE_USE)
    if not ok:
        st.caption("Declare Λ > 0 to continue.")
