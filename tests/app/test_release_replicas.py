"""Several app replicas behind one address share one ledger (issue 46, item 2; docs/deploy.md).

Two app processes pointed at the same PostgreSQL ledger (``$DPVIZ_LEDGER_DSN``), as the deploy
recipe's replicas are: a release made on the Release page of one (this test process, through
AppTest) counts on the other (a second Python process running its own AppTest of the same page):
the other shows it in the identity's total before its user accepts anything, and the bound it
books within refuses an attempt whose accepted total is stale.

This is the lighter form of the replica test (the brief allows it): the two processes run the app's
own script through Streamlit's AppTest rather than two ``streamlit run`` servers behind a proxy. The
proxy's stickiness is Streamlit's own requirement (a session lives in one process); what the
recipe adds is the shared store, and that is what is exercised here, across processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from apptest_helpers import SMALL, click_release, container, fill_release_form, open_app, texts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import _postgres  # tests/unit/_postgres.py: starts a throwaway PostgreSQL server

from dpviz.privacy.ledger_store import DSN_ENV, PostgresLedgerStore

ROOT = Path(__file__).resolve().parents[2]
ID = "lecture survey 2026"

#: The other replica: its own process and AppTest of the Release page, reading the shared ledger.
OTHER_REPLICA = f"""
import json, sys
sys.path.insert(0, {str(ROOT / "tests" / "app")!r})
from apptest_helpers import SMALL, container, open_app
at = open_app("release", **SMALL)
at.text_input(key="release_dataset_id").input({ID!r}).run()
preview = "\\n".join(str(m.value) for m in container(at, "release_preview").markdown)
print(json.dumps({{"preview": preview, "exception": [str(e.value) for e in at.exception]}}))
"""


@pytest.fixture(scope="module")
def dsn():
    with _postgres.running() as dsn:
        yield dsn


def test_a_release_booked_through_one_replica_counts_on_the_other(dsn, monkeypatch, tmp_path):
    monkeypatch.setenv(DSN_ENV, dsn)
    at = open_app("release", **SMALL)  # replica 1
    fill_release_form(at, algorithm="dp_lloyd", k=3, n=3000, eps=1.0, identity=ID)
    click_release(at)
    assert "Released" in texts(at), texts(at)
    store = PostgresLedgerStore(dsn)
    (e,) = store.entries(ID)
    assert e["outcome"] == "release" and e["surface"] == "release-page"
    eps, delta = store.total(ID)

    env = dict(os.environ, PYTHONPATH=str(ROOT), **{DSN_ENV: dsn, "DPVIZ_LEDGER_DIR": str(tmp_path / "no")})
    out = subprocess.run([sys.executable, "-c", OTHER_REPLICA], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert not seen["exception"]
    assert "Known dataset identity" in seen["preview"] and "1 attempt(s) booked" in seen["preview"]
    assert f"ε = {eps:.3g}, δ = {delta:.2g} now" in seen["preview"]  # replica 2 sees replica 1's spend
    assert not (tmp_path / "no").exists()  # nothing went to a local file ledger


def test_a_stale_acceptance_is_refused_when_another_replica_booked_since(dsn, monkeypatch):
    monkeypatch.setenv(DSN_ENV, dsn)
    ident = "stale acceptance"
    at = open_app("release", **SMALL)
    fill_release_form(at, algorithm="dp_lloyd", k=3, n=3000, eps=1.0, identity=ident)  # accepted 0 → 1
    # meanwhile another replica (another process, here the library) books on the same identity
    code = ("from dpviz.privacy.ledger_store import open_store; open_store().book("
            f"{ident!r}, algorithm='DP-Lloyd', epsilon=0.5, delta=1e-7, outcome='release', surface='cli')")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                   env=dict(os.environ, PYTHONPATH=str(ROOT), **{DSN_ENV: dsn}))
    at.button(key="release_button").click().run()
    failed = "\n".join(str(x.value) for x in container(at, "release_failed").error)
    assert "changed since you accepted it: nothing was run" in failed
    es = PostgresLedgerStore(dsn).entries(ident)
    assert [e["surface"] for e in es] == ["cli"]  # the page booked nothing
