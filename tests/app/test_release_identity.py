"""The Release page's dataset identity (issue 34, findings B and D): known identities are offered
(pick or type), a new name close to a known one is flagged ("did you mean …") and nothing can run
until the user says it is another table, and an attempt left open by a dead process shows as
interrupted and counts in the total."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from apptest_helpers import SMALL, click_release, container, fill_release_form, has_container, open_app, texts

from dpviz.privacy.ledger_store import LedgerStore

KNOWN = "customers 2026-Q1"


def _confirm(at) -> None:
    fill_release_form(at, algorithm="dp_lloyd", k=3, n=3000)


def test_a_session_is_offered_only_the_identities_it_typed_or_booked(ledger_dir):
    """Issue 46, item 3: the picker listed every identity on the server to every session. Now a
    fresh session is offered none of the identities others booked; the ones it types are offered
    back (an operator lists them all with `dpviz ledger list`)."""
    store = LedgerStore(ledger_dir)
    for name in (KNOWN, "orders"):
        store.book(name, algorithm="DP-Lloyd", epsilon=1.0, delta=1e-7, outcome="release", surface="cli")
    at = open_app("release", **SMALL)
    assert "release_known_id" not in [s.key for s in at.selectbox]
    assert "orders" not in texts(at) and KNOWN not in texts(at)
    at.text_input(key="release_dataset_id").input(KNOWN).run()  # given the name: it is ours now
    assert "Known dataset identity" in texts(at)  # its total composes (the user accepts it)
    at.text_input(key="release_dataset_id").input("new table").run()
    picker = at.selectbox(key="release_known_id")
    assert picker.options[1:] == [KNOWN, "new table"]  # never "orders"
    picker.set_value(KNOWN).run()
    assert at.text_input(key="release_dataset_id").value == KNOWN
    assert "Known dataset identity" in texts(at) and not has_container(at, "release_near_identity")


def _near_warning(at) -> str:
    return "\n".join(str(w.value) for w in container(at, "release_near_identity").warning)


def test_a_near_miss_is_flagged_and_blocks_the_run_until_declared_new(ledger_dir):
    store = LedgerStore(ledger_dir)
    store.book(KNOWN, algorithm="DP-Lloyd", epsilon=1.0, delta=1e-7, outcome="release", surface="cli")
    for typo in ("customers 2026 Q1", "customers 2026–Q1", "customers 2026-Q1.", "customers 2026-Q1.csv",
                 "custmers 2026-Q1"):
        at = open_app("release", **SMALL)
        at.text_input(key="release_dataset_id").input(typo)
        _confirm(at)
        # another session's identity: flagged, never named (issue 46)
        assert "Check the name." in _near_warning(at) and f"“{KNOWN}”" not in _near_warning(at), typo
        assert at.button(key="release_button").disabled  # nothing can run on the near-miss as is
    at.checkbox(key="release_new_identity").check().run()
    assert not at.button(key="release_button").disabled
    click_release(at)
    assert "Released" in texts(at)
    assert sorted(store.identities()) == ["custmers 2026-q1", KNOWN]  # a new ledger, as declared


def test_a_near_miss_of_the_sessions_own_identity_names_it(ledger_dir):
    LedgerStore(ledger_dir).book(KNOWN, algorithm="DP-Lloyd", epsilon=1.0, delta=1e-7, outcome="release",
                                 surface="cli")
    at = open_app("release", **SMALL)
    at.text_input(key="release_dataset_id").input(KNOWN).run()  # given to this session
    at.text_input(key="release_dataset_id").input("customers 2026 Q1")
    _confirm(at)
    assert f"Did you mean “{KNOWN}”?" in _near_warning(at)
    assert at.button(key="release_button").disabled


def test_another_sessions_attempts_show_no_time(ledger_dir):
    """Issue 46, item 3: the attempts table showed every attempt's start time to the second,
    whoever booked it. Now only this session's own attempts show a time."""
    store = LedgerStore(ledger_dir)
    store.book(KNOWN, algorithm="DP-Lloyd", epsilon=1.0, delta=1e-7, outcome="release", surface="cli")
    other = store.entries(KNOWN)[0]["time"]
    at = open_app("release", **SMALL)
    at.text_input(key="release_dataset_id").input(KNOWN)
    fill_release_form(at, algorithm="dp_lloyd", k=3, n=3000)
    click_release(at)
    assert "Released" in texts(at)
    table = "\n".join(str(m.value) for m in container(at, "release_history").markdown)
    mine = store.entries(KNOWN)[1]
    assert mine["surface"] == "release-page"
    stamp = r"(?<![\d-]){}T{}\\:{}\\:{}"  # a time as the markdown table escapes it
    # Row by row: the two bookings can fall in the same second, so the other's time may equal
    # this session's own (which is shown); what must hold is that the other's row shows none.
    other_row = next(r for r in table.splitlines() if r.endswith("| cli |"))
    mine_row = next(r for r in table.splitlines() if r.endswith("| release-page |"))
    assert not re.search(stamp.format(other[:10], *other[11:19].split(":")), other_row), table
    assert not re.search(r"\d{4}-\d\d-\d\dT", other_row), table
    assert re.search(stamp.format(mine["time"][:10], *mine["time"][11:19].split(":")), mine_row), table
    assert "another session or surface" in table
    assert not re.search(r"since \d{4}-\d\d-\d\d", texts(at))  # the identity note has no first time


def test_an_attempt_left_open_by_a_dead_process_is_shown_interrupted_and_counted(ledger_dir):
    code = ("import sys; from dpviz.privacy.ledger_store import LedgerStore; LedgerStore(sys.argv[1])"
            f".open_attempt({KNOWN!r}, algorithm='FriendlyCore', epsilon=2.0, delta=1e-7, "
            "surface='release-page')")
    subprocess.run([sys.executable, "-c", code, str(ledger_dir)], check=True, timeout=120,
                   env=dict(os.environ, PYTHONPATH=os.getcwd()))
    at = open_app("release", **SMALL)
    at.text_input(key="release_dataset_id").input(KNOWN).run()
    table = "\n".join(str(m.value) for m in container(at, "release_history").markdown)
    assert "interrupted\\: its process ended before it finished; counted as spent" in table  # md-escaped
    preview = "\n".join(str(m.value) for m in container(at, "release_preview").markdown)
    assert "ε = 2, δ = 1e-07 now" in preview
