"""Explore: one private run of any registered algorithm, step by step.

One path for every algorithm (issue 26): the picker lists what serves the data, the sidebar form
shows the chosen algorithm's parameters, and its live page is drawn by
``app/components/live_pages.render``: the live page of the algorithm's family folder
(``app/components/<family>/page.py``) or the generic one (``algorithm_view.render``). This page
names no algorithm.
"""

from __future__ import annotations

import streamlit as st

from app.components import algorithm_view, data_source, explore_form, keys, live_pages, rerun_timing
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
AUTO_CHANGES: Key[object] = Key(
    "auto_changes", object, "container: t, k or r_min changed automatically, with the reason")

# One screen at 1280×720 (issue 16): the sliders and the main panel beside them fit when the
# page's top padding is 2.5rem instead of Streamlit's 6rem (style-only HTML takes no space).
st.html("<style>[data-testid='stMainBlockContainer'] { padding-top: 2.5rem; }"
        # the row-level "ε = 17.1 · δ = 0.0013" wraps in a narrow column instead of ending in "…"
        f".st-key-{keys.EPS_READOUT} [data-testid='stMetricValue'] * {{ white-space: normal; "
        "overflow: visible; text-overflow: clip; }"
        # a smaller main number keeps the per-row sentence above the fold at 720 px (issue 27)
        f".st-key-{keys.EPS_READOUT} [data-testid='stMetricValue'] {{ font-size: 1.75rem; }}</style>")
st.title("Explore: one private run, step by step")


def _error(msg: str) -> None:
    with st.container(key=keys.EXPLORE_ERROR):
        st.error(msg)


def main() -> None:
    rerun_timing.Laps("explore.main (full rerun)").done()
    choice = data_source.current()
    ds = choice.dataset
    # the picker first: the sidebar shows the chosen algorithm's parameters only
    spec = None if ds is None else algorithm_view.algorithm_picker(int(ds.d))
    explore_form.sidebar_form(None if spec is None else spec.name)
    if choice.error:
        _error(choice.error)
    if choice.notice:
        st.info(choice.notice)
    if ds is None:
        st.info("No dataset yet: choose one on the **Data** page.")
        return
    notes = explore_form.sync_run_defaults(ds)
    if notes:
        with st.container(key=AUTO_CHANGES):
            for note in notes:
                st.info(note, icon=":material/published_with_changes:")
    radius = data_source.radius_for(ds)
    if radius is None:
        _error("This dataset has no public radius Λ yet. Declare one on the Data page (bounds "
               "step) or in the sidebar: DP needs a bound on every row's norm that does not come "
               "from the data.")
        return
    live_pages.render(ds, spec, radius)


main()
