"""The app's two modes, named on screen (issue 10).

*Simulate* is what every view does by default: seeded, reproducible, shareable by URL, with the
same noise reused across slider positions so curves are smooth. Anyone holding the seed can
replay and subtract that noise, so nothing it shows may be published: :func:`simulation_badge`
says so wherever private-looking numbers appear.

*Release* is the deliberate action on the Release page: one draw from the secure sampler
(``dpviz.privacy.release.SecureRNG``), booked in the dataset's persistent ledger of releases
(``dpviz.privacy.ledger_store``).
"""

from __future__ import annotations

import streamlit as st

from app.components import classroom
from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
_RELEASES: Key[list] = Key("_releases", list, "this session's releases")

SIMULATION_TEXT = ("**Simulation — not a release: do not publish these numbers.** Seeded and "
                   "replayable (the seed is in the URL); make a release on the **Release** page.")


def simulation_badge(key: str) -> None:
    """The simulation warning, in a container with ``key`` (tests find it by key)."""
    text = SIMULATION_TEXT
    if classroom.on():  # no Release page on a class's server (issue 37)
        text = text.replace("; make a release on the **Release** page.", ".")
    with st.container(key=key):
        st.warning(text, icon=":material/science:")


def releases(dataset_hash: str) -> list:
    """The releases (Result, exported JSON) made on that dataset in this session, oldest first."""
    return st.session_state.setdefault(_RELEASES, {}).setdefault(dataset_hash, [])
