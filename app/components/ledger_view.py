"""Every spend of a run's ledger as a table on the page (Explore's Privacy views).

A markdown table of escaped cells (:func:`app.components.safe.md_table`), not ``st.dataframe``:
the browser lays static HTML out in a few ms, where a data grid took ~300 ms to mount on
every switch to the view (issue 16, ``docs/app.md``). Numbers stay on one line; the step paths
and notes wrap, so the table fits a projector's 1280 px; it scrolls inside a fixed-height box.
"""

from __future__ import annotations

import streamlit as st

from app.components import safe
from dpviz.privacy.ledger import Ledger
from dpviz.viz.privacy import ledger_table

KEY = "ledger_table"

# Style-only HTML takes no space on the page. Columns 7 and 8 are ``step`` and ``note``
# (:func:`dpviz.viz.privacy.ledger_table` puts the numbers first).
_CSS = (f"<style>.st-key-{KEY} table {{ font-size: 0.8rem; }} "
        f".st-key-{KEY} th, .st-key-{KEY} td {{ padding: 0.15rem 0.4rem; white-space: nowrap; }} "
        f".st-key-{KEY} td:nth-child(n+7) {{ white-space: normal; overflow-wrap: anywhere; }}</style>")


def ledger_table_view(ledger: Ledger, *, height: int = 320) -> None:
    """A heading with the number of spends, then the table in a scroll box of ``height`` px."""
    table = ledger_table(ledger)
    st.html(_CSS)
    st.markdown(f"**Every spend** ({len(table)} mechanism draws and δ events; the chart above "
                "groups them; a CSV is on the Downloads view)")
    with st.container(height=height, key=KEY):
        st.markdown(safe.md_table(table.to_dict("records")))
