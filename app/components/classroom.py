"""Classroom mode (issue 37): a read-only deployment of the app for a class.

On when the server's environment has ``DPVIZ_CLASSROOM=1`` (``dpviz app --classroom`` sets it;
:func:`dpviz.serve.classroom_on` reads it). Then the app has no uploads (no Upload source on the
Data page; a link asking for one opens the generated data, and ``dpviz app`` also sets Streamlit's
``server.maxUploadSize`` to 0), no Release page, no server-path releases and no persistent ledger
(:func:`app.components.ledger_view.store` refuses), and every page shows :data:`BANNER`. The
landing page stays Explore on its teaching lesson (the default parameters, app/components/state.py):
every run there is a seeded simulation on public, generated data.

Stable widget key: ``classroom_banner`` (container).
"""

from __future__ import annotations

import streamlit as st

from app.components import keys
from dpviz.serve import classroom_on

BANNER = ("**Classroom mode.** This server is set up for a class: every run is a seeded simulation "
          "on public example data. Uploads, the Release page and persistent privacy ledgers are "
          "off, and nothing you do here is stored.")


def on() -> bool:
    """Whether this server runs in classroom mode (``DPVIZ_CLASSROOM``)."""
    return classroom_on()


def banner() -> None:
    """The classroom notice at the top of every page (nothing outside classroom mode)."""
    if on():
        with st.container(key=keys.CLASSROOM_BANNER):
            st.info(BANNER, icon=":material/school:")


#: What ``/release`` says on a classroom server (issue 43: it said "Page not found").
RELEASE_OFF = ("**The Release page is turned off in classroom mode.** This server is set up for a "
               "class: it makes no private releases and keeps no privacy ledger. Every other page "
               "works on public example data; to release on your own data, run dpviz on your own "
               "machine without `--classroom` (docs/deploy.md).")


def release_off() -> None:
    """The page at ``/release`` in classroom mode: why there is no Release page here."""
    st.title("Release")
    with st.container(key=keys.CLASSROOM_RELEASE_OFF):
        st.info(RELEASE_OFF, icon=":material/lock:")

