"""Every spend of a run's ledger as a table on the page (Explore's Privacy views).

A markdown table of escaped cells (:func:`app.components.safe.md_table`), not ``st.dataframe``:
the browser lays static HTML out in a few ms, where a data grid took ~300 ms to mount on
every switch to the view (issue 16, ``docs/app.md``). Numbers stay on one line; the step paths
and notes wrap, so the table fits a projector's 1280 px; it scrolls inside a fixed-height box.
"""

from __future__ import annotations

import streamlit as st

from app.components import classroom, safe
from app.components.keys import Key
from dpviz.privacy.ledger import Ledger
from dpviz.viz.privacy import ledger_table

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
KEY: Key[object] = Key("ledger_table", object, "container: the ledger's table in a scroll box")
OWN_IDENTITIES: Key[dict] = Key(
    "_own_identities", dict, "normalized → declared: the identities this session typed or booked")
OWN_ATTEMPTS: Key[set] = Key(
    "_own_attempts", set, "ids of the ledger attempts this session booked (their times are shown)")


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


# ----------------------------------------------------------------------------- the persistent store
# Releases (Release page, server path, command line) book every attempt that read the data in
# :class:`dpviz.privacy.ledger_store.LedgerStore`, keyed by the dataset identity the user declares
# (issue 25, finding 3). These helpers are the app's view of it.
#
# Sessions see only their own (issue 46, item 3): a session is offered only the identities it typed
# or booked (:func:`own_identities`; an operator lists them all with ``dpviz ledger list``), a near
# miss of another session's identity is flagged without naming it, and the attempts table shows a
# time only for the attempts this session booked (:func:`open_attempt`): another session's attempt
# shows its cost and outcome (they compose into the total the user accepts), never when it started
# or ended (a run's duration describes its data).

IDENTITY_HELP = (
    "A name for this table that you give every time you release from it — by upload, by server "
    "path or with `python -m dpviz run` — e.g. 'customers 2026-Q1'. Every attempt on that name is "
    "booked and composed, across sessions and server restarts; a shuffled copy, a row more or "
    "less or a reload does not start a new total. Give the same table the same name: a new name "
    "starts a new ledger, and that is your declaration.")


def store():
    """The server's ledger store (PostgreSQL at ``$DPVIZ_LEDGER_DSN``, shared by replicas; else
    ``$DPVIZ_LEDGER_DIR``, else ``~/.dpviz/ledgers``); refused in classroom mode, whose server
    keeps no persistent ledger (issue 37)."""
    from dpviz.privacy.ledger_store import open_store

    if classroom.on():
        raise RuntimeError("This classroom server keeps no persistent privacy ledger.")
    return open_store()


def identity(text: str | None) -> str | None:
    """The normalized declared identity, or None when none (or an invalid one) is typed."""
    from dpviz.privacy.ledger_store import normalize_identity

    try:
        return normalize_identity(text or "")
    except ValueError:
        return None


def remember(declared: str | None) -> None:
    """This session was given ``declared`` (the user typed it): offer it again later."""
    normalized = identity(declared)
    if normalized is not None:
        st.session_state.setdefault(OWN_IDENTITIES, {}).setdefault(normalized, str(declared).strip())


def own_identities() -> list[str]:
    """The identities this session typed or booked (as first typed), sorted by normalized name."""
    own = st.session_state.get(OWN_IDENTITIES, {})
    return [own[k] for k in sorted(own)]


def open_attempt(dataset_id: str, **kwargs) -> str:
    """Book an attempt write-ahead (:meth:`~dpviz.privacy.ledger_store.LedgerStore.open_attempt`)
    and remember it as this session's (its time is shown here, to this session only)."""
    attempt = store().open_attempt(dataset_id, **kwargs)
    st.session_state.setdefault(OWN_ATTEMPTS, set()).add(attempt)
    remember(dataset_id)
    return attempt


def total(dataset_id: str):
    """The composed row-level (ε, δ) of every attempt on ``dataset_id``, as an ApproxDP."""
    from dpviz.privacy.budget import ApproxDP

    return ApproxDP(*store().total(dataset_id))


def near_identity_ok(declared: str, *, box: str, confirm: str) -> bool:
    """Warn when a NEW identity is close to a known one ("did you mean …", issue 34 finding D);
    True when the name may be used (known, close to none, or the user ticked "this is another
    table"). ``box`` keys the warning's container and ``confirm`` the checkbox (one pair per
    surface, declared in :mod:`app.components.keys`)."""
    try:
        near = store().near_matches(declared)
    except (OSError, ValueError):
        near = []
    if not near:
        return True
    own = {identity(n) for n in own_identities()}
    mine = [n for n in near if identity(n) in own]  # another session's names are never shown
    similar = (f"close to {', '.join(f'“{safe.md(n)}”' for n in mine[:3])}" if mine else
               "close to a dataset identity already booked on this server (not named here: a session "
               "sees only the identities it typed or booked; ask whoever gave you the table's name)")
    with st.container(key=box):
        st.warning((f"**Did you mean “{safe.md(mine[0])}”?** " if mine else "**Check the name.** ")
                   + f"“{safe.md(declared.strip())}” is a new dataset identity, but {similar} (same "
                   "name up to punctuation, dashes, a trailing dot, a file extension or a letter or two). A "
                   "new name starts a new ledger at (0, 0): releases of the same table under two names do "
                   "not compose. Use the known name, or confirm that this is another table.",
                   icon=":material/warning:")
        return st.checkbox(f"“{declared.strip()}” is another table: start a new ledger for it",
                           key=confirm)


def identity_note(dataset_id: str) -> str:
    """'New dataset identity …' or 'Known dataset identity: N attempts booked since …'."""
    es = store().entries(dataset_id)
    if not es:
        return (f"**New dataset identity** “{safe.md(dataset_id)}”: nothing booked on it yet; the "
                "first attempt records it as new.")
    # No "since <time>": the first booking may be another session's attempt (issue 46).
    return (f"**Known dataset identity** “{safe.md(dataset_id)}”: {len(es)} attempt(s) booked "
            "(every surface: this page, server paths, the command line).")


#: How an attempt booked write-ahead and never marked reads (issue 34, finding B): it counts at
#: its full target whatever became of its process.
OPEN_STATES = {"running": "open: running now (booked at its full target)",
               "interrupted": "interrupted: its process ended before it finished; counted as spent",
               "open": "open (booked by another host); counted as spent"}


def outcome_text(entry: dict) -> str:
    """An attempt's outcome in words (an open one says whether it is still running)."""
    if entry.get("outcome") == "open":
        return OPEN_STATES.get(entry.get("state", "open"), OPEN_STATES["open"])
    return str(entry.get("outcome", ""))


#: The time cell of an attempt this session did not book (issue 46: no start or end time).
OTHER_TIME = "— (another session or surface)"


def attempts_table(dataset_id: str, *, key: str) -> None:
    """Every attempt booked on ``dataset_id`` (whatever its outcome or surface), oldest first."""
    es = store().entries(dataset_id)
    if not es:
        return
    own = st.session_state.get(OWN_ATTEMPTS, set())
    rows = [{"#": i + 1, "time (UTC)": e.get("time", "") if e.get("id") in own else OTHER_TIME,
             "algorithm": e.get("algorithm", ""), "row-level ε": round(float(e["epsilon"]), 4),
             "row-level δ": f"{float(e['delta']):.2g}", "outcome": outcome_text(e),
             "surface": e.get("surface", "")}
            for i, e in enumerate(es)]
    with st.container(key=key):
        st.markdown(f"**Every attempt booked on this dataset identity** ({len(rows)}; each is booked at "
                    "its full budget before the run reads a row; a failed, cancelled, refused or "
                    "interrupted run read the data too, so it costs its full budget)")
        st.markdown(safe.md_table(rows))
        st.caption("Times are shown for this session's attempts only: when another session's run "
                   "started or ended would tell how long it took, and that describes its data.")
