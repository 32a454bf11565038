"""A table on the server by path (issue 17): off by default, confined to DPVIZ_SERVER_DATA_DIR, a
streamed release with its guarantee and download."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apptest_helpers import SMALL, container, has_container, open_app, texts

from app.components import server_path
from dpviz.data import fig6_blobs
from dpviz.privacy.ledger_store import LedgerStore

N, K = 3000, 3
#: The page's own generated dataset, which the server path panel never reads: small, so each open
#: does not first generate and describe the default lesson's 150,000 rows (~2.5 s each, issue 45).
PAGE_DATA = {"n": SMALL["n"]}


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    base = tmp_path / "data"
    (base / "sub").mkdir(parents=True)
    X = fig6_blobs(N, k=K, rng=0).X
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "name": [f"p{i}" for i in range(N)]}),
                   base / "sub" / "small.parquet", row_group_size=1000)
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n")
    monkeypatch.setenv(server_path.ENV, str(base))
    return base


def test_off_by_default(monkeypatch):
    monkeypatch.delenv(server_path.ENV, raising=False)
    assert server_path.root() is None
    at = open_app("data", **PAGE_DATA)
    assert not at.exception and not has_container(at, "srv_panel")
    monkeypatch.setenv(server_path.ENV, "/no/such/directory")  # a bad setting keeps it off
    assert server_path.root() is None


def test_paths_cannot_leave_the_directory(data_dir, tmp_path):
    base = server_path.root()
    assert base == data_dir.resolve()
    assert server_path.resolve("sub/small.parquet", base) == (data_dir / "sub" / "small.parquet").resolve()
    assert server_path.resolve(str(data_dir / "sub"), base) == (data_dir / "sub").resolve()  # absolute inside
    for bad in ("../secret.csv", "sub/../../secret.csv", str(tmp_path / "secret.csv"), "/etc/passwd",
                "~/x.csv"):
        with pytest.raises(ValueError, match="outside the server data directory"):
            server_path.resolve(bad, base)
    os.symlink(tmp_path / "secret.csv", data_dir / "link.csv")  # a symlink pointing out
    with pytest.raises(ValueError, match="outside"):
        server_path.resolve("link.csv", base)
    (data_dir / "dir").mkdir()
    os.symlink(tmp_path / "secret.csv", data_dir / "dir" / "in.csv")  # a directory's file pointing out
    with pytest.raises(ValueError, match="links outside"):
        server_path.open_table("dir", base)
    for bad, msg in (("", "Enter the path"), ("nope.parquet", "No such file"), ("a\x00b", "NUL")):
        with pytest.raises(ValueError, match=msg):
            server_path.resolve(bad, base)
    src = server_path.open_table("sub", base)
    assert server_path.numeric_columns(src) == ["a", "b"]  # the text column is not offered


def _keys(doc) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | set().union(*(_keys(v) for v in doc.values()))
    if isinstance(doc, list):
        return set().union(*(_keys(v) for v in doc)) if doc else set()
    return set()


def _fill(at, path: str, algorithm: str = "dp_lloyd") -> None:
    at.text_input(key="srv_path").input(path).run()
    at.text_input(key="srv_dataset_id").input("small table")
    at.selectbox(key="srv_algorithm").set_value(algorithm)
    at.number_input(key="srv_k").set_value(K)
    at.number_input(key="srv_eps").set_value(2.0)
    at.number_input(key="srv_n").set_value(N)
    at.number_input(key="srv_radius").set_value(1.0)
    at.run()


def test_outside_path_is_refused_as_text(data_dir):
    at = open_app("data", **PAGE_DATA)
    at.text_input(key="srv_path").input("../secret.csv").run()
    assert not at.exception
    err = container(at, "srv_error")
    assert "outside the server data directory" in str(err.error[0].value)
    at.text_input(key="srv_path").input("**bold**.parquet").run()
    assert r"\*\*bold\*\*" in str(container(at, "srv_error").error[0].value)  # shown as text


def test_streamed_release_from_a_server_path(data_dir, ledger_dir):
    at = open_app("data", **PAGE_DATA)
    assert has_container(at, "srv_panel")
    _fill(at, "sub/small.parquet")
    assert at.multiselect(key="srv_columns").value == ["a", "b"]
    assert at.button(key="srv_run").disabled  # not before confirming that n and Λ are public
    at.checkbox(key="srv_confirm").check().run()
    assert not at.button(key="srv_run").disabled
    at.button(key="srv_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert has_container(at, "srv_output")
    res, text, _, columns, total = at.session_state["_srv_result"]
    assert res.algorithm == "dp_lloyd" and res.params["streamed"] and not res.simulation and res.seed is None
    assert res.centers.shape == (K, 2) and columns == ["a", "b"]
    assert res.guarantee.eps <= 2.0 * (1 + 1e-9) and total.eps == pytest.approx(res.guarantee.eps)
    assert [e["outcome"] for e in LedgerStore(ledger_dir).entries("Small Table")] == ["release"]
    doc = json.loads(text)
    assert doc["public_inputs"]["n_declared"] == N and doc["parameters"]["mode"] == "stream"
    assert not {"seed", "seconds", "method"} & _keys(doc) and np.asarray(doc["centers"]).shape == (K, 2)
    assert "Released: (" in texts(at)
    at.run()  # a rerun keeps showing the release; nothing is drawn again
    assert at.session_state["_srv_result"][0] is res and "_srv_running" not in at.session_state


def test_a_bad_value_mid_file_and_a_cancelled_run_release_nothing_and_are_booked(data_dir, ledger_dir):
    body = "0.123456,0.654321\n" * 120_000  # 2 MB: the type inference sees only the first block
    (data_dir / "late.csv").write_text("a,b\n" + body + "oops,0.5\n")
    at = open_app("data", **PAGE_DATA)
    _fill(at, "late.csv")
    assert at.multiselect(key="srv_columns").value == ["a", "b"]
    at.checkbox(key="srv_confirm").check().run()
    at.button(key="srv_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "did not produce a release" in texts(at) and "_srv_result" not in at.session_state
    store = LedgerStore(ledger_dir)
    assert [e["outcome"] for e in store.entries("small table")] == ["failed"]
    at.session_state["_srv_running"] = "ε = 2, δ = 1e-08"  # what an interrupted run (Cancel) leaves behind
    at.run()
    assert "cancelled before it finished: nothing was released" in texts(at)
    assert "_srv_running" not in at.session_state
