"""Classroom mode (issue 37): a read-only deployment of the app for a class.

On when the server's environment has ``DPVIZ_CLASSROOM=1`` (``dpviz app --classroom`` sets it;
:func:`dpviz.serve.classroom_on` reads it). Then the app has no uploads (no Upload source on the
Data page; a link asking for one opens the generated data; and Streamlit's upload endpoint refuses
every file: ``dpviz app`` passes ``server.maxUploadSize = 0``, and :func:`upload_limit` keeps the
same limit from inside the server process however the mode was switched on, e.g.
``DPVIZ_CLASSROOM=1 streamlit run app/main.py``, issue 46), no Release page, no server-path
releases and no persistent ledger (:func:`app.components.ledger_view.store` refuses), and every
page shows :data:`BANNER`. The landing page stays Explore on its teaching lesson (the default
parameters, app/components/state.py): every run there is a seeded simulation on public, generated
data.

Stable widget key: ``classroom_banner`` (container).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit import config as st_config

from app.components.keys import Key
from dpviz.serve import classroom_on

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
CLASSROOM_BANNER: Key[object] = Key("classroom_banner", object, "container: the classroom mode's banner")
CLASSROOM_RELEASE_OFF: Key[object] = Key(
    "classroom_release_off", object, "container: /release in classroom mode says it is off")

BANNER = ("**Classroom mode.** This server is set up for a class: every run is a seeded simulation "
          "on public example data. Uploads, the Release page and persistent privacy ledgers are "
          "off, and nothing you do here is stored.")


def on() -> bool:
    """Whether this server runs in classroom mode (``DPVIZ_CLASSROOM``)."""
    return classroom_on()


#: The upload limit outside classroom mode, in MB (``dpviz.data.load_csv``'s 50 MB limit).
UPLOAD_MB = 50
#: The app's own Streamlit config, which sets ``server.maxUploadSize = 0`` (closed until a run).
PACKAGED_CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"
_CLASSROOM_MARK = "dpviz classroom mode (DPVIZ_CLASSROOM)"
_OPEN_MARK = "dpviz: the app's upload limit (not classroom mode)"


def upload_limit() -> None:
    """Set Streamlit's ``server.maxUploadSize`` for this mode, process-wide (issue 46).

    Streamlit's upload endpoint (``PUT /_stcore/upload_file/<session>/<file>``) reads the option on
    every request and answers 413 to any body above it. The app's own ``.streamlit/config.toml``
    sets 0 MB, so a server refuses every upload until a script run has decided the mode: in
    classroom mode it stays 0 (whatever else set it); otherwise the app's own 0 is raised to
    :data:`UPLOAD_MB` (a limit an operator set by flag, environment or another config file is
    kept). ``app/main.py`` calls this first thing on every script run, so ``DPVIZ_CLASSROOM=1``
    alone refuses uploads as ``dpviz app --classroom`` does (which also passes 0 on the command
    line). The option is Streamlit's internal config (``st.set_option`` takes client options only).
    """
    current = st_config.get_option("server.maxUploadSize")
    if on():
        if current != 0:
            st_config.set_option("server.maxUploadSize", 0, _CLASSROOM_MARK)
        return
    where = st_config.get_where_defined("server.maxUploadSize")
    ours = where == _CLASSROOM_MARK or (Path(where).is_absolute()
                                        and Path(where).resolve() == PACKAGED_CONFIG)
    if current == 0 and ours:
        st_config.set_option("server.maxUploadSize", UPLOAD_MB, _OPEN_MARK)


def banner() -> None:
    """The classroom notice at the top of every page (nothing outside classroom mode)."""
    if on():
        with st.container(key=CLASSROOM_BANNER):
            st.info(BANNER, icon=":material/school:")


#: What ``/release`` says on a classroom server (issue 43: it said "Page not found").
RELEASE_OFF = ("**The Release page is turned off in classroom mode.** This server is set up for a "
               "class: it makes no private releases and keeps no privacy ledger. Every other page "
               "works on public example data; to release on your own data, run dpviz on your own "
               "machine without `--classroom` (docs/deploy.md).")


def release_off() -> None:
    """The page at ``/release`` in classroom mode: why there is no Release page here."""
    st.title("Release")
    with st.container(key=CLASSROOM_RELEASE_OFF):
        st.info(RELEASE_OFF, icon=":material/lock:")

