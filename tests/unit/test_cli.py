"""The command line: releases (memory and streamed), bad input, Ctrl-C, via main() and subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpviz.cli import main
from dpviz.data import fig6_blobs
from dpviz.privacy.release import SAMPLER_TEXT, SAMPLERS
from dpviz.registry import Public, calibrate, get

ROOT = Path(__file__).resolve().parents[2]
N, K = 20_000, 4


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    X = fig6_blobs(N, k=K, rng=0).X
    path = tmp_path_factory.mktemp("cli") / "blobs.parquet"
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "label": [f"r{i}" for i in range(N)]}), path,
                   row_group_size=4000)
    return path


def _args(table: Path, out: Path, *extra: str, algorithm: str | None = "friendlycore") -> list[str]:
    alg = ["--algorithm", algorithm] if algorithm else []
    return ["run", str(table), "--k", str(K), "--epsilon", "4", "--delta", "1e-6", "--radius", "1",
            "--n-declared", str(N), "--columns", "a,b", "--out", str(out), "--quiet", *alg,
            *(extra if "--dataset-id" in extra else ("--unbooked", *extra))]


def _keys(doc) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | set().union(*(_keys(v) for v in doc.values()))
    if isinstance(doc, list):
        return set().union(*(_keys(v) for v in doc)) if doc else set()
    return set()


@pytest.mark.parametrize("mode", ["memory", "stream"])
def test_release_json_and_offline_report(table, tmp_path, mode):
    out = tmp_path / "release.json"
    assert main(_args(table, out, "--mode", mode, "--param", "n_tuples=100")) == 0
    doc = json.loads(out.read_text())
    assert np.asarray(doc["centers"]).shape == (K, 2) and doc["failure"] is None
    st = doc["statement"]
    assert st["epsilon"] <= 4.0 * (1 + 1e-12) and st["delta"] <= 1e-6
    assert doc["public_inputs"] == {"k": K, "radius": 1.0, "n_declared": N, "d": 2, "columns": ["a", "b"]}
    assert doc["parameters"]["mode"] == mode and doc["parameters"]["algorithm"]["n_tuples"] == 100
    spec = get("friendlycore")
    cal = calibrate(spec, 4.0, 1e-6, Public(N, 2, K, 1.0), spec.make_params(n_tuples=100))
    assert doc["ledger_total"]["rho"] == pytest.approx(cal.budget.rho, rel=1e-12)
    assert doc["ledger"][0]["rho"] == pytest.approx(cal.budget.rho, rel=1e-12)
    assert not {"seed", "seconds", "method"} & _keys(doc)  # nothing to replay or time the data by
    assert doc["sampler"] == SAMPLER_TEXT and doc["samplers"] == SAMPLERS
    html = out.with_suffix(".html").read_text()
    assert "<script src=" not in html  # works offline: no external script (plotly.js is inlined)
    assert html.count("Plotly.newPlot") == 2 and len(html) > 1_000_000  # plotly.js inlined


def test_dp_lloyd_release_in_memory(table, tmp_path):
    out = tmp_path / "r.json"
    assert main(_args(table, out, "--algorithm", "dp_lloyd")) == 0
    doc = json.loads(out.read_text())
    assert doc["algorithm"]["name"] == "dp_lloyd" and doc["parameters"]["mode"] == "memory"
    assert doc["statement"]["epsilon"] <= 4.0 * (1 + 1e-12)


def test_default_is_auto_and_its_choice_decides_streaming(table, tmp_path, capsys):
    from dpviz.clustering.auto import choose_from
    from dpviz.large.run import STREAMED

    out = tmp_path / "r.json"
    assert main(_args(table, out, algorithm=None)) == 0  # no --algorithm: auto (in memory at this size)
    doc = json.loads(out.read_text())
    assert doc["algorithm"]["name"] == "auto" and doc["parameters"]["mode"] == "memory"
    assert doc["statement"]["epsilon"] <= 4.0 * (1 + 1e-12)
    # Out of core auto chooses among the streamed algorithms (issue 24: the in-memory rule may
    # pick one without a streamed implementation), so it always streams.
    picked = choose_from(STREAMED, N, 2, K, 4.0, 1e-6).algorithm
    rc = main(_args(table, tmp_path / "s.json", "--mode", "stream", algorithm=None))
    assert rc == 0 and picked in STREAMED
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["algorithm"]["name"] == "auto" and doc["parameters"]["mode"] == "stream"
    assert doc["parameters"]["run"]["auto_choice"] == picked


@pytest.mark.parametrize(("extra", "message"), [
    (["--epsilon", "-1"], "'epsilon' parameter"),
    (["--algorithm", "nope"], "Unknown algorithm 'nope'"),
    (["--algorithm", "kmeans++"], "non-private reference"),
    (["--param", "n_tuples=abc"], "is not a valid int"),
    (["--param", "bogus=1"], "expected NAME=VALUE"),
    (["--columns", "a,label"], "Column 'label' is not numeric"),
    (["--columns", "a,zz"], r"Column\(s\) \['zz'\] not in the table"),
    (["--algorithm", "balcan", "--mode", "stream"], "cannot stream"),
    (["--algorithm", "diffprivlib"], "cannot make a release"),
])
def test_bad_input_is_one_line_and_exit_2(table, tmp_path, capsys, extra, message):
    out = tmp_path / "r.json"
    assert main([*_args(table, out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpviz: error:") and "\n" not in err
    assert __import__("re").search(message, err), err
    assert not out.exists()


def test_missing_file_and_missing_out_directory(tmp_path, capsys, table):
    assert main(_args(tmp_path / "none.parquet", tmp_path / "r.json")) == 2
    assert "No such file" in capsys.readouterr().err
    assert main(_args(table, tmp_path / "no" / "r.json")) == 2
    assert "does not exist" in capsys.readouterr().err


def test_release_noise_comes_from_the_release_sampler():
    from dpviz.cli import _release_rng
    from dpviz.privacy.release import is_secure

    assert is_secure(_release_rng())


def test_list_names_the_algorithms(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "friendlycore" in out and "streams" in out and "non-private" in out


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def test_subprocess_release_and_bad_input(table, tmp_path):
    out = tmp_path / "r.json"
    ok = subprocess.run([sys.executable, "-m", "dpviz", *_args(table, out)], env=_env(), capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(out.read_text())["centers"] is not None
    bad = subprocess.run([sys.executable, "-m", "dpviz", *_args(table, out, "--delta", "2")], env=_env(),
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and "'delta' parameter" in bad.stderr


def test_ctrl_c_stops_cleanly(tmp_path):
    """SIGINT during a streamed run: exit 130, one message, no traceback, no release written."""
    X = np.random.default_rng(0).normal(size=(400_000, 6)) * 0.2
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({f"c{j}": X[:, j] for j in range(6)}), path, row_group_size=20_000)
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "dpviz", "run", str(path), "--k", "16", "--epsilon", "1", "--delta", "1e-6",
           "--radius", "2", "--n-declared", "400000", "--out", str(out), "--mode", "stream",
           "--chunk-rows", "20000", "--n-jobs", "1", "--algorithm", "friendlycore", "--unbooked"]
    # A shell that starts this suite in the background (``make test &``) passes SIGINT on as
    # ignored, and Python then installs no KeyboardInterrupt handler: Ctrl-C in a terminal
    # always arrives with the default disposition, so the child gets that back first.
    proc = subprocess.Popen(cmd, env=_env(), stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = proc.stderr.readline()  # the run has started (imports done)
    assert "stream run" in first, first
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    rc = proc.wait(timeout=60)
    assert rc == 130, rest
    assert "interrupted" in rest and "Traceback" not in rest
    assert not out.exists() and not out.with_suffix(".html").exists()


def test_scheduler_address_runs_the_streamed_path_on_dask(table, tmp_path):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "r.json"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as lc:
        assert main(_args(table, out, "--scheduler", lc.scheduler_address, "--param", "n_tuples=100")) == 0
    doc = json.loads(out.read_text())
    assert doc["parameters"]["mode"] == "stream" and doc["parameters"]["run"]["engine"] == "dask"
    assert np.asarray(doc["centers"]).shape == (K, 2)


# ----------------------------------------------------------------------------- issue 34, B–D


@pytest.fixture()
def ledger_dir(tmp_path, monkeypatch) -> Path:
    from dpviz.privacy.ledger_store import ENV

    path = tmp_path / "ledgers"
    monkeypatch.setenv(ENV, str(path))
    return path


def test_a_release_needs_a_dataset_id_or_an_explicit_opt_out(table, tmp_path, capsys, ledger_dir,
                                                               monkeypatch):
    """Finding C: without --dataset-id nothing used to be booked (and --quiet hid even the note)."""
    from dpviz.large.source import TableSource

    out = tmp_path / "r.json"
    argv = ["run", str(table), "--k", str(K), "--epsilon", "4", "--delta", "1e-6", "--radius", "1",
            "--n-declared", str(N), "--columns", "a,b", "--out", str(out), "--quiet", "--algorithm",
            "dp_lloyd"]
    read = []
    monkeypatch.setattr(TableSource, "read_all", lambda self: read.append(1))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "a release needs --dataset-id NAME" in err and "--unbooked" in err and "\n" not in err.strip()
    assert not read and not out.exists() and not ledger_dir.exists()  # nothing read, nothing booked
    monkeypatch.undo()
    from dpviz.privacy.ledger_store import ENV

    monkeypatch.setenv(ENV, str(ledger_dir))
    assert main([*argv, "--unbooked"]) == 0
    err = capsys.readouterr().err
    assert "--unbooked: this release is booked in no persistent ledger" in err  # even with --quiet
    doc = json.loads(out.read_text())
    assert doc["booking"]["booked"] is False and "--unbooked" in doc["booking"]["note"]
    assert not ledger_dir.exists()


def test_booked_release_is_written_ahead_then_marked(table, tmp_path, ledger_dir, monkeypatch):
    """Finding B: the attempt is in the ledger at its full target before the first row is read."""
    from dpviz.large.source import TableSource
    from dpviz.privacy.ledger_store import LedgerStore

    seen = []
    real = TableSource.read_all

    def spy(self):
        seen.append(LedgerStore().entries("blobs 2026"))  # what the ledger holds as the read starts
        return real(self)

    monkeypatch.setattr(TableSource, "read_all", spy)
    out = tmp_path / "r.json"
    assert main(_args(table, out, "--dataset-id", "blobs 2026", algorithm="dp_lloyd")) == 0
    (before,) = seen
    assert [(e["outcome"], e["epsilon"], e["delta"]) for e in before] == [("open", 4.0, 1e-6)]
    (after,) = LedgerStore().entries("blobs 2026")
    doc = json.loads(out.read_text())
    assert after["outcome"] == "release" and after["id"] == before[0]["id"] == doc["booking"]["attempt"]
    assert after["epsilon"] == pytest.approx(doc["statement"]["epsilon"]) and after["epsilon"] <= 4.0
    assert doc["booking"]["booked"] is True and doc["booking"]["dataset_id"] == "blobs 2026"
    # Beside the booked (ε, δ), the store keeps the native budget the plan ran DP-Lloyd at (issue 38).
    assert before[0]["native"]["kind"] == "approx"  # before the run: the target, as booked
    assert after["native"]["kind"] == "zcdp"
    assert after["native"]["rho"] == pytest.approx(doc["statement"]["plan"]["budget"]["rho"], rel=1e-12)


def test_kill_9_mid_run_leaves_the_attempt_in_the_ledger(table, tmp_path, ledger_dir):
    """Finding B: a CLI release killed with SIGKILL after reading its rows (held there by the
    documented test hook DPVIZ_TEST_PAUSE_AFTER_READ) is booked, counted in full, shown interrupted."""
    out = tmp_path / "r.json"
    env = dict(_env(), DPVIZ_LEDGER_DIR=str(ledger_dir), DPVIZ_TEST_PAUSE_AFTER_READ="300")
    proc = subprocess.Popen([sys.executable, "-m", "dpviz", *_args(table, out, "--dataset-id", "killed table",
                                                                      "--mode", "memory")],
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:  # explicit state: the rows are read and the run is held
            if "test hook: rows read" in line:
                break
        else:
            pytest.fail(f"the run ended before the hook: {proc.wait()}")
        proc.kill()  # SIGKILL: no finally, no handler runs
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    from dpviz.privacy.ledger_store import LedgerStore

    store = LedgerStore(ledger_dir)
    (e,) = store.entries("killed table")
    assert (e["outcome"], e["state"], e["epsilon"], e["delta"]) == ("open", "interrupted", 4.0, 1e-6)
    assert store.total("killed table") == (4.0, 1e-6) and not out.exists()
    shown = subprocess.run([sys.executable, "-m", "dpviz", "ledger", "show", "killed table"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "INTERRUPTED" in shown.stdout and "counted as spent" in shown.stdout
    assert "Total: ε = 4" in shown.stdout


def test_a_near_miss_of_a_known_identity_is_refused_before_reading(table, tmp_path, capsys, ledger_dir):
    """Finding D: a dash, an en dash, a trailing dot, '.csv' or one wrong letter used to start a
    fresh (0, 0) ledger silently."""
    from dpviz.privacy.ledger_store import LedgerStore

    LedgerStore().book("customers 2026-Q1", algorithm="auto", epsilon=1.0, delta=1e-7, outcome="release",
                       surface="cli")
    out = tmp_path / "r.json"
    for typo in ("customers 2026 Q1", "customers 2026–Q1", "customers 2026-Q1.", "customers 2026-Q1.csv",
                 "custmers 2026-Q1"):
        assert main(_args(table, out, "--dataset-id", typo, algorithm="dp_lloyd")) == 2
        err = capsys.readouterr().err
        assert "did you mean 'customers 2026-Q1'?" in err and "--new-identity" in err, err
    assert LedgerStore().identities() == ["customers 2026-Q1"] and not out.exists()
    assert main(_args(table, out, "--dataset-id", "customers 2026-Q2", "--new-identity",
                      algorithm="dp_lloyd")) == 0
    assert main(["ledger", "list"]) == 0
    listed = capsys.readouterr().out
    assert "customers 2026-Q1: 1 attempt(s); total ε = 1" in listed
    assert "customers 2026-Q2: 1 attempt(s)" in listed
    assert main(["ledger", "show", "customers 2026–Q1"]) == 2
    assert "Did you mean 'customers 2026-Q1'?" in capsys.readouterr().err
    assert main(["ledger", "show", "CUSTOMERS 2026-q1"]) == 0
    assert "Total: ε = 1, δ = 1e-07" in capsys.readouterr().out
