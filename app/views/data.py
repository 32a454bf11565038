"""Data: choose what to cluster (generate, built-in, upload) and preview it; on a local install,
a large table on the server by path (a streamed release, app/components/server_path.py)."""

from __future__ import annotations

import math

import streamlit as st

import dpviz.viz
from app.components import (
    a11y,
    controls,
    data_source,
    dataset_picker,
    families,
    keys,
    safe,
    server_path,
    state,
)
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
DATA_FILE_AT_USE: Key[dict] = Key(
    "_data_file_at_use", dict, "content hash → the uploader's file id when that dataset came into use")
DATA_SETTINGS: Key[object] = Key("data_settings", object, "container: the settings the verdicts use")
DATA_K: Key[int] = Key("data_k", int, "number_input: k, bound to the app's parameters")
DATA_EPS: Key[float] = Key("data_eps", float, "select_slider: the target row-level ε on Data")
DATA_SOUND_DELTA: Key[bool] = Key("data_sound_delta", bool, "button: set δ below 1/(10n)")
DATA_ERROR: Key[object] = Key("data_error", object, "container: the source's error")
DATA_NOTICE: Key[object] = Key("data_notice", object, "container: the source's notice")
DATA_FACTS: Key[object] = Key("data_facts", object, "container: the dataset's public facts")
DATA_PREVIEW: Key[object] = Key("data_preview", object, "chart: the non-private preview of the rows")
DATA_VERDICT_HIDDEN: Key[object] = Key(
    "data_verdict_hidden", object, "container: why the verdicts are hidden (a file not yet in use)")

#: The Data page's verdict: the default algorithm's (its family folder's ``triage.py``).
triage = families.module(state.DEFAULT_ALGORITHM, "triage")

st.title("Data")
st.caption("Choose the data a private clustering will run on. Each row is one person: the privacy "
           "guarantee protects any single row.")

src = dataset_picker.source_radio()
left, right = st.columns([2, 3], gap="large")
with left:
    if src == "generate":
        dataset_picker.generate_panel()
    elif src == "builtin":
        dataset_picker.builtin_panel()
    else:
        dataset_picker.upload_panel()

choice = data_source.current()
ds = choice.dataset
dataset_picker.sync_run_defaults(ds)
#: What the right-hand column says while a file sits in the uploader but no upload is in use yet
#: (issue 36: it said "No uploaded dataset in this session yet … upload the file" right after one).
PENDING_FILE = ("**{name}** is uploaded but not in use yet: choose its columns and how to scale "
                "them on the left, then press **Use this dataset**. Nothing about it is shown here "
                "until then{previous}.")


def _pending_upload() -> bool:
    """A file sits in the uploader that is not the dataset in use (new and not yet used, or one
    that failed to read): verdicts about the dataset in use must not stand next to it (issue 27)."""
    up = st.session_state.get(keys.CSV_UPLOAD)
    file_id = getattr(up, "file_id", None)
    seen = st.session_state.setdefault(DATA_FILE_AT_USE, {})
    if ds is not None and ds.content_hash not in seen:
        seen[ds.content_hash] = file_id  # the file in the uploader when this dataset came into use
    return src == "upload" and up is not None and (ds is None or seen.get(ds.content_hash) != file_id)


def _notice() -> str | None:
    """The source's notice, true to the uploader: a file in it is named, not asked for again."""
    up = st.session_state.get(keys.CSV_UPLOAD)
    if src == "upload" and up is not None and data_source.active_upload() is None:
        previous = "" if ds is None else f"; the view below is still the previous dataset, {safe.md(ds.name)}"
        return PENDING_FILE.format(name=safe.md(getattr(up, "name", "Your file")), previous=previous)
    return choice.notice


def _settings(ds) -> None:
    """The run settings the verdicts use, on this page (issue 36: no detour to Explore's sidebar):
    k and the row-level target ε, bound to the app's parameters (Explore, Budget, Compare and
    Release read the same ones); each change re-runs the verdicts below."""
    with st.container(key=DATA_SETTINGS, border=True):
        st.markdown("**Settings the checks use** (shared with Explore, Budget, Compare and Release)")
        c1, c2 = st.columns([1, 3])
        state.seed_widget("k", DATA_K, int)
        c1.number_input("k (clusters)", min_value=1, max_value=50, step=1, key=DATA_K,
                        on_change=state.on_change("k", DATA_K, int),
                        help="How many centers the private clustering releases.")
        with c2:
            controls.eps_slider(DATA_EPS, label="Target row-level ε (the guarantee for one row)")
        n = int(ds.n)
        delta = float(state.get("delta"))
        if delta > 0.1 / n:  # a δ the Release page calls unsafe (above 1/n), or close to it
            sound = 10.0 ** math.floor(math.log10(0.1 / n))
            st.warning(f"δ = {controls.fmt_delta(delta)} is above 1/(10n) = {0.1 / n:.2g} for "
                       f"n = {n:,} (a δ near 1/n allows publishing a whole row; the Release page "
                       f"calls δ above 1/n unsafe). The suggestions below state δ = {0.1 / n:.2g}.",
                       icon=":material/warning:")
            st.button(f"Set δ = {controls.fmt_delta(sound)}", key=DATA_SOUND_DELTA,
                      on_click=state.update, kwargs={"delta": sound}, icon=":material/tune:")

with right:
    if choice.error:
        with st.container(key=DATA_ERROR):
            st.error(choice.error)
            if ds is not None:
                st.caption("The previous dataset stays on screen.")
    notice = _notice()
    if notice:
        with st.container(key=DATA_NOTICE):
            st.info(notice)
    if ds is not None:
        with st.container(key=DATA_FACTS):
            st.markdown(data_source.describe(ds))
            st.caption("Public facts: n, d and the declared Λ come from the recipe or your "
                       "declaration. The picture below shows the raw rows: it is a "
                       "**non-private** view for you, the data owner.")
        data_figure = dpviz.viz.data_figure
        if data_figure is None:
            st.info("The preview figure builder (dpviz.viz.data_figure) is not available.")
        else:
            a11y.chart(data_figure(ds, max_points=5_000), key=DATA_PREVIEW)
        with st.expander("Recipe and parameters"):
            st.json(dict(ds.params), expanded=False)
        if choice.error or _pending_upload():
            with st.container(key=DATA_VERDICT_HIDDEN):
                st.info("The verdicts are about the dataset in use, not the file above: use the "
                        "new file (or fix it) to check it.")
        elif data_source.radius_for(ds) is not None:
            st.header("Will it work at your settings?")
            _settings(ds)
            triage.clustering_panel(ds)
            triage.panel(ds)
server_path.panel()  # only when DPVIZ_SERVER_DATA_DIR names a directory (off by default)
st.page_link(st.session_state[keys.PAGES]["explore"], label="Run FriendlyCore on this data →",
             icon=":material/insights:")
