"""The user's ε beside published real deployments' ε (issue 27, "things no peer has").

A collapsed expander with a strip of published ε on a log axis (``dpviz.viz.deployments``), a
table with each deployment's source, and one sentence from ``dpviz.privacy.deployments`` that
says the units differ. Every number shown is public: nothing here reads the user's data.
"""

from __future__ import annotations

import streamlit as st

import dpviz.privacy
import dpviz.viz.deployments
from app.components import a11y

TITLE = "Your ε beside published deployments"
CAPTION = ("Every number here is public, stated by the source linked in its row; no data is read. "
           "Your ε is per row of your data; theirs protect a person, a user-day or one action.")


def _source_name(url: str) -> str:
    if "arxiv.org/abs/" in url:
        return "arXiv:" + url.rsplit("/", 1)[-1]
    if "desfontain.es" in url:
        return "Desfontaines' list"
    if "uscensusbureau" in url:
        return "Census DAS production code"
    return url


def table_markdown() -> str:
    """The deployments as a Markdown table (organization, product, ε, δ, unit, model, source link)."""
    lines = ["| Organization | Product | ε | δ | Privacy unit | Model | Source |",
             "|---|---|---|---|---|---|---|"]
    for d in dpviz.privacy.deployments.DEPLOYMENTS:
        delta = "0" if d.delta is None else f"{d.delta:.0e}"
        eps = f"{d.epsilon:.3g}" + (f" (ρ = {d.rho:.3g})" if d.rho is not None else "")
        lines.append(f"| {d.organization} | {d.product} | {eps} | {delta} | {d.privacy_unit} | "
                     f"{d.model} | [{_source_name(d.source_url)}]({d.source_url}) |")
    return "\n".join(lines)


def _body(eps: float, key: str) -> None:
    a11y.chart(dpviz.viz.deployments.deployments_figure(eps), key=f"{key}_chart",
               config={"displayModeBar": False}, data_on_page="the table below")
    st.markdown(dpviz.privacy.deployments.sentence(eps))
    with st.container(key=f"{key}_table"):
        st.markdown(table_markdown())
    st.caption(CAPTION + " Caveats and the passage each number comes from: docs/privacy.md, "
               "\"ε in the wild\".")


def beside_expander(eps: float, *, key: str, lazy: bool = True) -> None:
    """A collapsed expander placing ``eps`` (row-level) among published deployments.

    ``lazy=True`` builds the contents only while the expander is open (opening it reruns the
    page); ``lazy=False`` builds them on every run (cheap: a small figure and a table) and opening
    it does not rerun — for pages where a rerun would interrupt work in progress.
    """
    if lazy:
        box = st.expander(TITLE, key=key, on_change="rerun", icon=":material/public:")
        if box.open:
            with box:
                _body(eps, key)
        return
    with st.expander(TITLE, key=key, icon=":material/public:"):
        _body(eps, key)
