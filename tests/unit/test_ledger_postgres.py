"""The ledger store for several hosts (issue 46, item 2): :class:`PostgresLedgerStore` on a real
PostgreSQL server that the tests start themselves (``_postgres.py``: initdb + pg_ctl on a free
loopback port), behaving as the embedded file store does, and two "replicas" (two processes)
booking at once: the total is the exact composition of every booking, none is lost, and a bound
(``open_attempt(within=…)``) refuses exactly the bookings beyond it, whichever replica makes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import _postgres
import pytest

from dpviz.privacy.ledger_store import (
    DSN_ENV,
    ENV,
    LedgerStore,
    OverBudgetError,
    PostgresLedgerStore,
    open_store,
)

ROOT = Path(__file__).resolve().parents[2]
#: Binary fractions: their sums are exact in floating point, so "exact composition" means ==.
EPS, DELTA = 0.25, 2.0**-30


@pytest.fixture(scope="module")
def postgres():
    with _postgres.running() as dsn:
        yield dsn


@pytest.fixture(params=["files", "postgres"])
def store(request, tmp_path):
    """Each store kind, empty: a fresh directory, or a fresh table name on the shared server."""
    if request.param == "files":
        return LedgerStore(tmp_path / "ledgers")
    s = PostgresLedgerStore(request.getfixturevalue("postgres"))
    s.TABLE = f"ledger_{tmp_path.name.replace('-', '_').lower()}"[:60]
    return s


def test_both_stores_book_mark_compose_and_list_alike(store):
    store.ensure_writable()
    store.book("Customers 2026-Q1", algorithm="DP-Lloyd", epsilon=1.0, delta=1e-7, outcome="release",
               surface="cli")
    a = store.open_attempt("customers 2026-q1", algorithm="FriendlyCore", epsilon=2.0, delta=1e-6,
                           surface="release-page")
    assert store.entries("customers 2026-q1")[1]["outcome"] == "open"
    store.close_attempt("customers 2026-q1", a, "release", epsilon=1.5, delta=1e-6)
    with pytest.raises(ValueError, match="already marked"):
        store.close_attempt("customers 2026-q1", a, "failed")
    assert store.total("CUSTOMERS 2026-Q1") == (2.5, 1e-7 + 1e-6)
    assert [e["outcome"] for e in store.entries("customers 2026-q1")] == ["release", "release"]
    assert store.identity("customers 2026-q1")["declared"] == "Customers 2026-Q1"
    assert store.identities() == ["Customers 2026-Q1"] and store.known("customers 2026-Q1")
    assert store.near_matches("customers 2026 Q1") == ["Customers 2026-Q1"]
    assert store.total("orders") == (0.0, 0.0) and not store.known("orders")


def test_a_booking_beyond_the_bound_is_refused_and_books_nothing(store):
    store.open_attempt("t", algorithm="a", epsilon=EPS, delta=DELTA, surface="cli", within=(EPS, DELTA))
    with pytest.raises(OverBudgetError, match="Nothing was booked"):
        store.open_attempt("t", algorithm="a", epsilon=EPS, delta=DELTA, surface="cli", within=(EPS, DELTA))
    assert store.total("t") == (EPS, DELTA) and len(store.entries("t")) == 1


def test_open_store_follows_the_environment(monkeypatch, tmp_path, postgres):
    monkeypatch.setenv(ENV, str(tmp_path))
    monkeypatch.delenv(DSN_ENV, raising=False)
    assert type(open_store()) is LedgerStore
    monkeypatch.setenv(DSN_ENV, postgres)
    s = open_store()
    assert isinstance(s, PostgresLedgerStore) and "password" not in s.location


REPLICA = f"""
import json, sys, time
from pathlib import Path
from dpviz.privacy.ledger_store import LedgerStore, OverBudgetError, PostgresLedgerStore
kind, where, table, n, cap, go = sys.argv[1:7]
store = LedgerStore(where) if kind == "files" else PostgresLedgerStore(where)
if table:
    store.TABLE = table
within = None if cap == "none" else (float(cap) * {EPS}, float(cap) * {DELTA})
booked = refused = 0
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.001)
for i in range(int(n)):
    try:
        store.open_attempt("lecture", algorithm="replica", epsilon={EPS}, delta={DELTA}, surface="library",
                           within=within)
        booked += 1
    except OverBudgetError:
        refused += 1
print(json.dumps({{"booked": booked, "refused": refused}}), flush=True)
"""


def _race(store, tmp_path, n: int, cap: int | None) -> list[dict]:
    """Two processes (replicas) each try ``n`` bookings at once on one identity; their counts."""
    where = str(store.directory) if isinstance(store, LedgerStore) and not isinstance(
        store, PostgresLedgerStore) else store.dsn
    kind = "postgres" if isinstance(store, PostgresLedgerStore) else "files"
    table = store.TABLE if kind == "postgres" else ""
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", REPLICA, kind, where, table, str(n),
                               "none" if cap is None else str(cap), str(go)],
                              stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    for p in procs:  # both imported and connected-ready before either books
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    out = []
    for p in procs:
        stdout, _ = p.communicate(timeout=300)
        assert p.returncode == 0
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


N = 40


def test_two_replicas_booking_at_once_compose_exactly(store, tmp_path):
    counts = _race(store, tmp_path, N, cap=None)
    assert [c["booked"] for c in counts] == [N, N]
    es = store.entries("lecture")
    assert len(es) == 2 * N and len({e["id"] for e in es}) == 2 * N  # none lost, none doubled
    assert store.total("lecture") == (2 * N * EPS, 2 * N * DELTA)  # the exact composition
    assert store.identity("lecture")["kind"] == "identity"  # written once, first


def test_the_bound_holds_across_two_racing_replicas(store, tmp_path):
    cap = 50  # room for 50 of the 80 bookings
    counts = _race(store, tmp_path, N, cap=cap)
    assert sum(c["booked"] for c in counts) == cap
    assert sum(c["refused"] for c in counts) == 2 * N - cap
    assert len(store.entries("lecture")) == cap
    assert store.total("lecture") == (cap * EPS, cap * DELTA)  # at the bound, never above
