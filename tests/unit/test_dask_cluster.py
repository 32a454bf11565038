"""A real Dask cluster (``dask scheduler`` + two ``dask worker`` processes on 127.0.0.1), and faults.

Issue 29. The cluster is started as a user would (`tests/unit/_dask_procs.py`) and stopped by
process id. The command line runs in this process (``dpviz.cli.main``) so that its release
sampler can be replaced by a seeded stand-in: the release must then equal the in-memory one
(DP-Lloyd: ``dpviz.run``) or the threads' streamed one (FriendlyCore: the pieces of the streamed
path are keyed hashes, not the in-memory permutation) to 1e-12 with the same ledger rows.

Faults: a worker killed mid-run (the same release), the scheduler gone before or during the run, the
input truncated or replaced mid-read, an unwritable or full output location, Ctrl-C (one line,
exit 2 or 130, no output file). Every attempt that read the data is booked under its declared
identity (``--dataset-id``) in the persistent ledger; one that read nothing is not.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("distributed")

import _dask_procs

import dpviz
import dpviz.cli as cli
from dpviz.data import fig6_blobs
from dpviz.large.run import run_stream
from dpviz.privacy.ledger_store import ENV as LEDGER_ENV
from dpviz.privacy.ledger_store import LedgerStore

N, K, D = 24_000, 4, 2
EPS, DELTA = 4.0, 1e-6
#: The algorithm's seed; the data's seed is a distinct key (DATA_SEED), never the same int.
ALG_SEED = 20_291
DATA_SEED = 29_000_001
ROOT = Path(__file__).resolve().parents[2]
DATASET = "blobs for issue 29"


class _SeededRelease(np.random.Generator):
    """A seeded Generator the command line accepts as its release sampler (tests only: it lets a
    release be compared with the in-memory run of the same seed)."""

    is_secure_sampler = True


def _seeded() -> _SeededRelease:
    return _SeededRelease(np.random.PCG64(ALG_SEED))


@pytest.fixture(scope="module")
def rows() -> np.ndarray:
    return fig6_blobs(N, k=K, rng=DATA_SEED).X


def _write(X: np.ndarray, path: Path, group: int = 2000) -> Path:
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1]}), path, row_group_size=group)
    return path


@pytest.fixture(scope="module")
def table(rows, tmp_path_factory) -> Path:
    return _write(rows, tmp_path_factory.mktemp("dask_cluster") / "blobs.parquet")


@pytest.fixture(autouse=True)
def ledger(tmp_path_factory, monkeypatch) -> LedgerStore:
    """A fresh persistent ledger per test (``$DPVIZ_LEDGER_DIR``)."""
    path = tmp_path_factory.mktemp("ledgers")
    monkeypatch.setenv(LEDGER_ENV, str(path))
    return LedgerStore(path)


def _booked(ledger: LedgerStore) -> list[tuple[str, float, float]]:
    return [(e["outcome"], e["epsilon"], e["delta"]) for e in ledger.entries(DATASET)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = _dask_procs.start(tmp_path_factory.mktemp("dask_procs"))
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def own_cluster(tmp_path):
    """A cluster of its own, for a test that kills part of it."""
    c = _dask_procs.start(tmp_path)
    try:
        yield c
    finally:
        c.stop()


def _argv(table: Path, out: Path, algorithm: str, *extra: str) -> list[str]:
    return ["run", str(table), "--k", str(K), "--epsilon", str(EPS), "--delta", str(DELTA), "--radius", "1",
            "--n-declared", str(N), "--algorithm", algorithm, "--out", str(out), "--chunk-rows", "2000",
            "--dataset-id", DATASET, "--quiet", *extra]


def _ledger(res) -> list[dict]:
    return json.loads(json.dumps(cli._jsonable(res.ledger.to_rows())))


def _same_release(doc: dict, res) -> None:
    assert res.centers is not None and doc["centers"] is not None
    np.testing.assert_allclose(np.asarray(doc["centers"]), res.centers, rtol=0, atol=1e-12)
    assert doc["ledger"] == _ledger(res)


def _on_progress(monkeypatch, when: str, action, nth: int = 1) -> list[str]:
    """Call ``action()`` once, at the ``nth`` progress line containing ``when`` (a point mid-run)."""
    seen: list[str] = []

    def hook(self, msg: str) -> None:
        seen.append(msg)
        if sum(when in m for m in seen) == nth and when in msg:
            action()

    monkeypatch.setattr(cli._Progress, "__call__", hook)
    return seen


# ----------------------------------------------------------------------------- fast (default suite)


@pytest.mark.slow
def test_cli_on_a_real_cluster_equals_in_memory(cluster, table, rows, tmp_path, monkeypatch, ledger):
    """DP-Lloyd through ``--scheduler``: the in-memory release of the same seed (1e-12, same ledger)."""
    monkeypatch.setattr(cli, "_release_rng", _seeded)
    out = tmp_path / "lloyd.json"
    assert cli.main(_argv(table, out, "dp_lloyd", "--scheduler", cluster.address)) == 0
    doc = json.loads(out.read_text())
    assert doc["parameters"]["mode"] == "stream" and doc["parameters"]["run"]["engine"] == "dask"
    mem = dpviz.run("dp_lloyd", rows, K, epsilon=EPS, delta=DELTA, radius=1.0, n_declared=N, rng=_seeded())
    _same_release(doc, mem)
    assert doc["statement"]["epsilon"] == pytest.approx(mem.guarantee.eps, rel=1e-12)
    assert _booked(ledger) == [("release", mem.guarantee.eps, mem.guarantee.delta)]


def test_scheduler_gone_before_the_run(table, tmp_path, capsys, ledger):
    """No scheduler at the address: one line, exit 2, no file, nothing read."""
    import dask

    out = tmp_path / "r.json"
    addr = f"tcp://127.0.0.1:{_dask_procs.free_port()}"
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        assert cli.main(_argv(table, out, "dp_lloyd", "--scheduler", addr)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("dpviz: error: Cannot reach the Dask scheduler"), err
    assert "nothing was read or released" in err
    assert list(tmp_path.iterdir()) == [] and _booked(ledger) == []  # nothing read: nothing booked


@pytest.mark.parametrize("where", ["parent_is_a_file", "fifo", "read_only_fs"])
def test_unwritable_output_is_refused_before_reading(table, tmp_path, capsys, monkeypatch, where, ledger):
    """An output location that cannot take the release is refused before any row is read."""
    read = []
    monkeypatch.setattr("dpviz.large.source.TableSource.chunks", lambda self: read.append(1) or [])
    if where == "parent_is_a_file":
        (tmp_path / "afile").write_text("x")
        out = tmp_path / "afile" / "r.json"
    elif where == "fifo":  # not a regular file (as /dev/full): the rename would replace it
        out = tmp_path / "r.json"
        os.mkfifo(out)
    else:  # /proc takes no new file, even for root (mode bits would not stop root)
        out = Path("/proc") / "dpviz_release.json"
    assert cli.main(_argv(table, out, "dp_lloyd")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("dpviz: error: "), err
    assert not read and _booked(ledger) == []


def test_full_disk_at_write_leaves_no_partial_file(table, tmp_path, ledger):
    """The release cannot be written (RLIMIT_FSIZE: writes past 4 KB fail as on a full disk): one
    line, exit 2, no release, no temporary file left."""
    out = tmp_path / "out"
    out.mkdir()

    def limit() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    argv = _argv(table, out / "r.json", "dp_lloyd", "--mode", "stream", "--n-jobs", "1")
    assert env[LEDGER_ENV] == str(ledger.directory)
    p = subprocess.run([sys.executable, "-m", "dpviz", *argv], env=env, capture_output=True, text=True,
                       preexec_fn=limit, timeout=300)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("dpviz: error: ") and "too large" in err.lower(), err
    assert "The attempt is booked" in err
    assert list(out.iterdir()) == []
    assert _booked(ledger) == [("failed", EPS, DELTA)]


def test_input_replaced_mid_read_releases_nothing(table, rows, tmp_path, monkeypatch, capsys, ledger):
    """The file is replaced (same layout, other rows) after the first pass started: exit 2, one line."""
    path = _write(rows, tmp_path / "t.parquet")
    other = _write(rows[::-1].copy(), tmp_path / "other.parquet")
    seen = _on_progress(monkeypatch, " 1/", lambda: os.replace(other, path))  # after the first chunk
    out = tmp_path / "r.json"
    assert cli.main(_argv(path, out, "dp_lloyd", "--mode", "stream", "--n-jobs", "1")) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("dpviz: error: The input file") and "changed" in err, err
    assert not out.exists() and not out.with_suffix(".html").exists()
    assert any(" 1/" in m for m in seen)
    assert _booked(ledger) == [("failed", EPS, DELTA)] and "The attempt is booked" in err


# ----------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_friendlycore_on_a_real_cluster_equals_threads(cluster, table, tmp_path, monkeypatch):
    """FriendlyCore through ``--scheduler``: the threads' streamed release of the same seed."""
    monkeypatch.setattr(cli, "_release_rng", _seeded)
    out = tmp_path / "fc.json"
    assert cli.main(_argv(table, out, "friendlycore", "--scheduler", cluster.address,
                          "--param", "n_tuples=100")) == 0
    doc = json.loads(out.read_text())
    ref = run_stream(table, K, epsilon=EPS, delta=DELTA, radius=1.0, n_declared=N, algorithm="friendlycore",
                     rng=_seeded(), n_jobs=2, chunk_rows=2000, n_tuples=100)
    _same_release(doc, ref)


@pytest.mark.slow
def test_app_server_path_on_a_real_cluster_equals_in_memory(cluster, rows, tmp_path, monkeypatch, ledger):
    """The Data page's server-path release with ``DPVIZ_SCHEDULER`` set (AppTest, this process):
    it runs on the cluster and equals the in-memory DP-Lloyd release of the same seed."""
    sys.path.insert(0, str(ROOT / "tests" / "app"))
    from apptest_helpers import SMALL, open_app

    from app.components import server_path

    base = tmp_path / "data"
    base.mkdir()
    _write(rows, base / "t.parquet")
    monkeypatch.setenv(server_path.ENV, str(base))
    monkeypatch.setenv(server_path.SCHEDULER_ENV, cluster.address)
    monkeypatch.setattr("dpviz.privacy.release.SecureRNG", _seeded)
    at = open_app("data", n=SMALL["n"])  # the page's own generated rows: small (the panel never reads them)
    at.text_input(key="srv_path").input("t.parquet").run()
    at.text_input(key="srv_dataset_id").input(DATASET)
    at.selectbox(key="srv_algorithm").set_value("dp_lloyd")
    at.number_input(key="srv_k").set_value(K)
    at.number_input(key="srv_eps").set_value(EPS)
    at.number_input(key="srv_n").set_value(N)
    at.number_input(key="srv_radius").set_value(1.0)
    at.run()
    at.checkbox(key="srv_confirm").check().run()
    at.button(key="srv_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    res, text, *_ = at.session_state["_srv_result"]
    assert res.params["engine"] == "dask"
    mem = dpviz.run("dp_lloyd", rows, K, epsilon=EPS, delta=float(at.session_state["srv_delta"]), radius=1.0,
                    n_declared=N, rng=_seeded())
    _same_release(json.loads(text), mem)
    assert _booked(ledger) == [("release", mem.guarantee.eps, mem.guarantee.delta)]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["dp_lloyd", "friendlycore"])
def test_worker_killed_mid_run_gives_the_same_release(own_cluster, table, tmp_path, monkeypatch, algorithm,
                                                      ledger):
    """SIGKILL one worker once the first tasks are submitted: Dask recomputes its tasks on the other
    worker and the release equals the one without the fault."""
    monkeypatch.setattr(cli, "_release_rng", _seeded)
    victim = own_cluster.workers[0]
    seen = _on_progress(monkeypatch, "submitted", lambda: os.kill(victim.pid, signal.SIGKILL),
                        nth=2 if algorithm == "friendlycore" else 1)
    out = tmp_path / "r.json"
    params = ["--param", "n_tuples=100"] if algorithm == "friendlycore" else []
    argv = _argv(table, out, algorithm, "--scheduler", own_cluster.address, *params)
    assert cli.main(argv) == 0
    assert victim.wait(timeout=10) == -signal.SIGKILL and any("submitted" in m for m in seen)
    ref = run_stream(table, K, epsilon=EPS, delta=DELTA, radius=1.0, n_declared=N, algorithm=algorithm,
                     rng=_seeded(), n_jobs=1, chunk_rows=2000, **({"n_tuples": 100} if params else {}))
    _same_release(json.loads(out.read_text()), ref)
    assert _booked(ledger) == [("release", ref.guarantee.eps, ref.guarantee.delta)]


@pytest.mark.slow
def test_scheduler_killed_mid_run_releases_nothing(own_cluster, table, tmp_path, monkeypatch, capsys, ledger):
    """SIGKILL the scheduler once the first tasks are submitted: one line, exit 2, no file."""
    _on_progress(monkeypatch, "submitted", lambda: os.kill(own_cluster.scheduler.pid, signal.SIGKILL))
    out = tmp_path / "r.json"
    argv = _argv(table, out, "friendlycore", "--scheduler", own_cluster.address, "--param", "n_tuples=100")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(("dpviz: error: The Dask cluster", "dpviz: error: The connection")), err
    assert "nothing was released." in err and "The attempt is booked" in err
    assert not out.exists() and not out.with_suffix(".html").exists()
    assert _booked(ledger) == [("failed", EPS, DELTA)]


@pytest.mark.slow
def test_input_truncated_mid_read_on_the_cluster(own_cluster, rows, tmp_path, monkeypatch, capsys, ledger):
    """The file is truncated in place once the workers have started reading it: exit 2, one line."""
    path = _write(rows, tmp_path / "t.parquet")
    _on_progress(monkeypatch, "submitted", lambda: os.truncate(path, path.stat().st_size // 2))
    out = tmp_path / "r.json"
    argv = _argv(path, out, "friendlycore", "--scheduler", own_cluster.address, "--param", "n_tuples=100")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("dpviz: error: The input file") and "changed" in err, err
    assert not out.exists() and not out.with_suffix(".html").exists()
    assert _booked(ledger) == [("failed", EPS, DELTA)]


@pytest.mark.slow
def test_ctrl_c_mid_run_is_booked_as_cancelled(table, tmp_path, ledger):
    """SIGINT during a streamed run: exit 130, one line, no release, the attempt booked."""
    out = tmp_path / "r.json"
    argv = _argv(table, out, "friendlycore", "--mode", "stream", "--n-jobs", "1", "--param", "n_tuples=100")
    argv.remove("--quiet")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "dpviz", *argv], env=env, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stderr:  # the rows are being read
        if "stream run" in line:
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, rest
    last = rest.strip().splitlines()[-1]
    assert last.startswith("dpviz: interrupted; nothing was released. The attempt is booked"), rest
    assert not out.exists() and not out.with_suffix(".html").exists()
    assert _booked(ledger) == [("cancelled", EPS, DELTA)]
