"""The persistent ledger store (issue 25, finding 3): keyed by a declared identity, every attempt
booked whatever its outcome, composed by basic composition, safe under concurrent writers, and
surviving a fresh process."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from dpviz.privacy.ledger_store import COMPOSITION, ENV, LedgerStore, normalize_identity


def test_empty_store_reports_nothing(tmp_path):
    store = LedgerStore(tmp_path / "ledgers")
    assert store.total("customers") == (0.0, 0.0)
    assert store.entries("customers") == []
    assert not store.known("customers")
    assert not (tmp_path / "ledgers").exists()  # created on demand, not on reading


def test_every_outcome_is_booked_and_composes(tmp_path):
    store = LedgerStore(tmp_path)
    store.book("customers", algorithm="FriendlyCore", epsilon=1.0, delta=1e-6, outcome="release",
               surface="release-page")
    store.book("customers", algorithm="DP-Lloyd", epsilon=0.5, delta=0.0, outcome="failed",
               surface="server-path")
    store.book("customers", algorithm="auto", epsilon=0.25, delta=1e-8, outcome="cancelled",
               surface="server-path")
    store.book("customers", algorithm="Easy Instances", epsilon=2.0, delta=1e-7, outcome="refused",
               surface="cli")
    eps, delta = store.total("customers")
    assert eps == pytest.approx(3.75, abs=1e-15)
    assert delta == pytest.approx(1e-6 + 1e-8 + 1e-7, rel=1e-12)
    es = store.entries("customers")
    assert [e["outcome"] for e in es] == ["release", "failed", "cancelled", "refused"]
    assert [e["surface"] for e in es] == ["release-page", "server-path", "server-path", "cli"]
    assert es[1] == {**es[1], "algorithm": "DP-Lloyd", "epsilon": 0.5, "delta": 0.0}
    assert store.known("customers")
    assert "basic composition" in COMPOSITION


def test_identity_is_normalized_and_datasets_do_not_mix(tmp_path):
    store = LedgerStore(tmp_path)
    store.book("  Customers\t 2026-Q1 ", algorithm="a", epsilon=1, delta=0, outcome="release",
               surface="library")
    assert store.known("customers 2026-q1")
    assert store.known("CUSTOMERS 2026-Q1")
    assert store.total("customers 2026-q1") == (1.0, 0.0)
    assert store.total("customers 2026-Q2") == (0.0, 0.0)
    assert normalize_identity("Ｃｕｓｔｏｍｅｒｓ") == "customers"  # NFKC: full-width letters
    with pytest.raises(ValueError, match="identity"):
        normalize_identity("   \n ")
    with pytest.raises(ValueError):
        normalize_identity("x" * 201)


def test_new_identity_is_recorded_as_such(tmp_path):
    store = LedgerStore(tmp_path)
    assert store.identity("Sales") is None
    store.book("Sales", algorithm="a", epsilon=1, delta=0, outcome="release", surface="cli")
    store.book("sales", algorithm="a", epsilon=1, delta=0, outcome="release", surface="cli")
    ident = store.identity("SALES")
    assert ident["declared"] == "Sales" and ident["normalized"] == "sales"
    lines = [json.loads(x) for x in store.path("sales").read_text().splitlines()]
    assert [x["kind"] for x in lines] == ["identity", "attempt", "attempt"]  # one identity line


def test_file_names_are_safe(tmp_path):
    store = LedgerStore(tmp_path)
    for name in ("../../etc/passwd", "a/b", "..", "名前"):
        p = store.path(name)
        assert p.parent == tmp_path and "/" not in p.name and not p.name.startswith(".")
    assert store.path("a/b") != store.path("a-b")  # the hash keeps slug collisions apart


@pytest.mark.parametrize("kw", [dict(outcome="ok"), dict(surface="web"), dict(epsilon=-1.0),
                                dict(epsilon=math.inf), dict(delta=1.5), dict(delta=math.nan)])
def test_bad_bookings_are_refused(tmp_path, kw):
    store = LedgerStore(tmp_path)
    args = dict(algorithm="a", epsilon=1.0, delta=0.0, outcome="release", surface="cli") | kw
    with pytest.raises(ValueError):
        store.book("x", **args)
    assert store.entries("x") == []


def test_unreadable_line_refuses_to_under_count(tmp_path):
    store = LedgerStore(tmp_path)
    store.book("x", algorithm="a", epsilon=1, delta=0, outcome="release", surface="cli")
    with open(store.path("x"), "a") as f:
        f.write('{"kind": "attempt", "epsilon": 3\n')  # a torn line
    with pytest.raises(ValueError, match="not readable"):
        store.total("x")


def test_directory_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "from-env"))
    store = LedgerStore()
    store.book("x", algorithm="a", epsilon=1, delta=0, outcome="release", surface="cli")
    assert store.path("x").parent == tmp_path / "from-env"
    assert store.path("x").is_file()


def test_survives_a_fresh_process(tmp_path):
    """A new process (a server restart) sees the same total."""
    LedgerStore(tmp_path).book("x", algorithm="a", epsilon=0.7, delta=1e-9, outcome="failed",
                               surface="release-page")
    code = ("import sys; from dpviz.privacy.ledger_store import LedgerStore; "
            "print(LedgerStore(sys.argv[1]).total('X'))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         check=True, cwd=os.getcwd()).stdout
    assert out.strip() == "(0.7, 1e-09)"


#: One writer process: books ``count`` attempts of ε = 1/8 on the shared identity. Run as a fresh
#: interpreter (not multiprocessing's spawn, which re-imports the parent's ``__main__``: after an
#: AppTest ran in this process, that is the Streamlit app, and the child died with exit code 1).
_WRITER = """
import sys
from dpviz.privacy.ledger_store import LedgerStore
store = LedgerStore(sys.argv[1])
for _ in range(int(sys.argv[3])):
    store.book("shared", algorithm="w" + sys.argv[2], epsilon=0.125, delta=0.0, outcome="release",
               surface="library")
"""


def test_concurrent_writers_lose_nothing(tmp_path):
    workers, count = 4, 50
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(w), str(count)],
                              cwd=os.getcwd(), stderr=subprocess.PIPE, text=True)
             for w in range(workers)]
    for p in procs:
        # Each writer imports dpviz and fsyncs every line; on a shared, loaded machine (load ~30)
        # that took over a minute. A generous but bounded wait: a hung writer still fails.
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    store = LedgerStore(tmp_path)
    assert len(store.entries("shared")) == workers * count
    assert store.total("shared")[0] == 0.125 * workers * count  # exact: multiples of 1/8
    lines = [json.loads(x) for x in store.path("shared").read_text().splitlines()]
    assert sum(x["kind"] == "identity" for x in lines) == 1


def test_ensure_writable_before_a_run(tmp_path):
    store = LedgerStore(tmp_path / "a" / "b")
    store.ensure_writable()
    assert (tmp_path / "a" / "b").is_dir() and (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(OSError):
        LedgerStore(blocked / "sub").ensure_writable()  # a file where the directory should be


# ----------------------------------------------------------------------------- issue 34, B and D


def test_write_ahead_attempt_counts_at_its_full_target_until_marked(tmp_path):
    store = LedgerStore(tmp_path)
    a = store.open_attempt("customers", algorithm="FriendlyCore", epsilon=1.0, delta=1e-6,
                           surface="cli")
    assert store.total("customers") == (1.0, 1e-6)  # booked before any row is read
    (e,) = store.entries("customers")
    assert e["outcome"] == "open" and e["state"] == "running" and e["id"] == a
    store.close_attempt("customers", a, "release", epsilon=0.9, delta=1e-6)  # the plan's guarantee
    (e,) = store.entries("customers")
    assert (e["outcome"], e["state"], e["epsilon"]) == ("release", "closed", 0.9)
    assert store.total("customers") == (0.9, 1e-6)
    with pytest.raises(ValueError, match="already marked"):
        store.close_attempt("customers", a, "failed")
    b = store.open_attempt("customers", algorithm="DP-Lloyd", epsilon=0.5, delta=0.0, surface="cli")
    with pytest.raises(ValueError, match="exceeds its booked target"):
        store.close_attempt("customers", b, "release", epsilon=0.6, delta=0.0)
    store.close_attempt("customers", b, "cancelled")
    assert [e["outcome"] for e in store.entries("customers")] == ["release", "cancelled"]
    assert store.total("customers") == (pytest.approx(1.4), 1e-6)
    with pytest.raises(ValueError, match="No attempt"):
        store.close_attempt("customers", "nope", "failed")


def test_an_attempt_left_open_by_a_dead_process_is_spent_and_shown_interrupted(tmp_path):
    code = ("import sys; from dpviz.privacy.ledger_store import LedgerStore; "
            "LedgerStore(sys.argv[1]).open_attempt('customers', algorithm='auto', epsilon=2.0, "
            "delta=1e-7, surface='cli')")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, timeout=120,
                   env=dict(os.environ, PYTHONPATH=os.getcwd()))
    store = LedgerStore(tmp_path)
    (e,) = store.entries("customers")
    assert e["outcome"] == "open" and e["state"] == "interrupted"
    assert store.total("customers") == (2.0, 1e-7)


def test_known_identities_and_near_matches(tmp_path):
    store = LedgerStore(tmp_path)
    for name in ("Customers 2026-Q1", "triage 2026", "orders"):
        store.book(name, algorithm="a", epsilon=1, delta=0, outcome="release", surface="library")
    assert store.identities() == ["Customers 2026-Q1", "orders", "triage 2026"]
    for typo in ("customers 2026 Q1", "customers 2026–Q1", "customers 2026-Q1.", "customers 2026-Q1.csv",
                 "custmers 2026-Q1", "customers_2026_Q1"):
        assert store.near_matches(typo) == ["Customers 2026-Q1"], typo
    assert store.near_matches("customers 2026-q1") == []  # the same identity: no warning
    assert store.near_matches("inventory") == []
    assert store.near_matches("order") == ["orders"]


# ----------------------------------------------------------------------------- native budgets (issue 38)


def test_each_attempt_keeps_its_native_budget_beside_the_booked_cost(tmp_path):
    from dpviz.privacy.budget import ZCDP, ApproxDP
    from dpviz.privacy.ledger_store import native_budget
    from dpviz.registry import Public, plan

    store = LedgerStore(tmp_path)
    the_plan = plan("dp_lloyd", 1.0, 1e-6, Public(n_declared=5000, d=2, k=3, radius=1.0))
    a = store.open_attempt("customers", algorithm="DP-Lloyd", epsilon=1.0, delta=1e-6, surface="cli")
    (e,) = store.entries("customers")
    assert e["native"] == {"kind": "approx", "epsilon": 1.0, "delta": 1e-6, "count_epsilon": 0.0}
    g = the_plan.guarantee
    store.close_attempt("customers", a, "release", epsilon=g.eps, delta=g.delta, native=the_plan)
    (e,) = store.entries("customers")
    assert e["native"] == {"kind": "zcdp", "rho": the_plan.budget.rho, "delta": the_plan.budget.delta,
                           "delta_prime": the_plan.delta_prime, "count_epsilon": 0.0}
    assert e["native"]["rho"] > 0 and (e["epsilon"], e["delta"]) == (g.eps, g.delta)
    # Pure ε-DP keeps ε₀; (ε, δ)-DP keeps both; a failure after a native opening keeps the opening's.
    store.book("customers", algorithm="balcan", epsilon=0.7, delta=0.0, outcome="release", surface="cli",
               native=ApproxDP(0.7))
    b = store.open_attempt("customers", algorithm="gmm", epsilon=0.5, delta=1e-7, surface="cli",
                           native=ApproxDP(0.45, 1e-7))
    store.close_attempt("customers", b, "failed")
    natives = [x["native"] for x in store.entries("customers")]
    assert natives[1] == {"kind": "pure", "epsilon": 0.7, "count_epsilon": 0.0}
    assert natives[2] == {"kind": "approx", "epsilon": 0.45, "delta": 1e-7, "count_epsilon": 0.0}
    # The booking arithmetic is unchanged: basic composition of the booked (ε, δ), not the natives.
    assert store.total("customers") == (pytest.approx(g.eps + 0.7 + 0.5), pytest.approx(g.delta + 1e-7))
    assert native_budget(ZCDP(0.2, 1e-9)) == {"kind": "zcdp", "rho": 0.2, "delta": 1e-9, "delta_prime": 0.0,
                                              "count_epsilon": 0.0}
    with pytest.raises(ValueError, match="native budget"):
        native_budget(None)  # type: ignore[arg-type]


def test_a_store_file_written_before_native_budgets_still_reads(tmp_path):
    # Lines exactly as the store wrote them before issue 38: no "native" key anywhere.
    store = LedgerStore(tmp_path)
    old = [
        {"kind": "identity", "time": "2026-11-20T10:00:00+00:00", "declared": "Customers",
         "normalized": "customers", "note": "new dataset identity"},
        {"kind": "attempt", "time": "2026-11-20T10:00:01+00:00", "algorithm": "FriendlyCore",
         "epsilon": 1.0, "delta": 1e-6, "outcome": "release", "surface": "release-page"},
        {"kind": "attempt", "id": "a1", "time": "2026-11-20T10:05:00+00:00", "algorithm": "DP-Lloyd",
         "epsilon": 0.5, "delta": 1e-7, "outcome": "open", "surface": "cli", "pid": 1, "host": "elsewhere",
         "proc_start": None},
        {"kind": "outcome", "attempt": "a1", "time": "2026-11-20T10:06:00+00:00", "outcome": "release",
         "epsilon": 0.4, "delta": 1e-7},
    ]
    tmp_path.mkdir(exist_ok=True)
    store.path("customers").write_text("".join(json.dumps(x) + "\n" for x in old), encoding="utf-8")
    assert store.total("customers") == (pytest.approx(1.4), pytest.approx(1.1e-6))
    es = store.entries("customers")
    assert [e["native"] for e in es] == [
        {"kind": "approx", "epsilon": 1.0, "delta": 1e-6, "count_epsilon": 0.0},
        {"kind": "approx", "epsilon": 0.4, "delta": 1e-7, "count_epsilon": 0.0},  # the marked cost
    ]
    # New attempts append to the old file and compose with it.
    store.book("customers", algorithm="balcan", epsilon=0.1, delta=0.0, outcome="failed", surface="cli")
    assert store.total("customers") == (pytest.approx(1.5), pytest.approx(1.1e-6))
