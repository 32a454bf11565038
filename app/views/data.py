"""Data: choose what to cluster (generate, built-in, upload) and preview it; on a local install,
a large table on the server by path (a streamed release, app/components/server_path.py)."""

from __future__ import annotations

import streamlit as st

import dpviz.viz
from app.components import a11y, data_source, dataset_picker, families, server_path, state

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


def _pending_upload() -> bool:
    """A file sits in the uploader that is not the dataset in use (new and not yet used, or one
    that failed to read): verdicts about the dataset in use must not stand next to it (issue 27)."""
    up = st.session_state.get("csv_upload")
    file_id = getattr(up, "file_id", None)
    seen = st.session_state.setdefault("_data_file_at_use", {})
    if ds is not None and ds.content_hash not in seen:
        seen[ds.content_hash] = file_id  # the file in the uploader when this dataset came into use
    return src == "upload" and up is not None and (ds is None or seen.get(ds.content_hash) != file_id)

with right:
    if choice.error:
        with st.container(key="data_error"):
            st.error(choice.error)
            if ds is not None:
                st.caption("The previous dataset stays on screen.")
    if choice.notice:
        st.info(choice.notice)
    if ds is not None:
        with st.container(key="data_facts"):
            st.markdown(data_source.describe(ds))
            st.caption("Public facts: n, d and the declared Λ come from the recipe or your "
                       "declaration. The picture below shows the raw rows: it is a "
                       "**non-private** view for you, the data owner.")
        data_figure = dpviz.viz.data_figure
        if data_figure is None:
            st.info("The preview figure builder (dpviz.viz.data_figure) is not available.")
        else:
            a11y.chart(data_figure(ds, max_points=5_000), key="data_preview")
        with st.expander("Recipe and parameters"):
            st.json(dict(ds.params), expanded=False)
        if choice.error or _pending_upload():
            with st.container(key="data_verdict_hidden"):
                st.info("The verdicts are about the dataset in use, not the file above: use the "
                        "new file (or fix it) to check it.")
        else:
            triage.clustering_panel(ds)
            triage.panel(ds)
server_path.panel()  # only when DPVIZ_SERVER_DATA_DIR names a directory (off by default)
st.page_link(st.session_state["_pages"]["explore"], label="Run FriendlyCore on this data →",
             icon=":material/insights:")
