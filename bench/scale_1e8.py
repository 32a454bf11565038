"""10⁸ rows through the command line on a two-worker Dask process cluster (issue 29). A benchmark,
not a test.

1. ``write``: a float32 Parquet file (d = 10, k = 16 spherical Gaussians, Fig. 6's recipe) under
   /tmp (never the repository), streamed in row groups of 10⁶ rows (one row group in memory at a
   time). The data stream's seeds come from ``SeedSequence(DATA_KEY)``; the CLI draws its noise
   from ``SecureRNG`` (no seed at all), so the data and the algorithm never share a seed.
2. ``run``: starts ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (one thread
   and ``--memory-limit 1GB`` each by default, ``--memory``), warms nothing, and runs
   ``python -m dpviz run FILE --scheduler ADDRESS`` with ``--algorithm auto`` and
   ``--algorithm friendlycore`` (its automatic t) in a child
   process: wall time; CPU-seconds of the CLI process and of each worker (``/proc/PID/stat``: utime +
   stime, sampled until the process ends) per 10⁶ rows; peak RSS of the CLI (``wait4``) and of each
   worker (``/proc/PID/status`` VmHWM). Load averages are printed beside every timing.
3. The files are deleted at the end unless ``--keep``.

    PYTHONPATH=. nice -n 10 .venv/bin/python bench/scale_1e8.py write --n 10000000 100000000
    PYTHONPATH=. nice -n 10 .venv/bin/python bench/scale_1e8.py run --n 10000000 --keep
    PYTHONPATH=. nice -n 10 .venv/bin/python bench/scale_1e8.py run --n 100000000
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

DIR = Path("/tmp/dpviz_scale_1e8")
D, K = 10, 16
SIGMA = 1.0 / (32.0 * np.sqrt(2.0))
#: The data's seed key; the CLI's noise has no seed (SecureRNG), so no int is shared.
DATA_KEY = 0x5CA1E_DA7A
GROUP = 1_000_000
EPSILON, DELTA = 3.0, 1e-6
WORKER_MEMORY = "1GB"  # issue 38: FriendlyCore streamed with every worker ≤ 1 GB (was 2GB)


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def path_for(n: int) -> Path:
    return DIR / f"blobs_f32_{n}.parquet"


def write(n: int) -> Path:
    """n rows, float32, one 10⁶-row group at a time (never the whole table in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpviz.data.generators import uniform_ball

    path = path_for(n)
    if path.exists() and pq.ParquetFile(path).metadata.num_rows == n:
        return path
    DIR.mkdir(parents=True, exist_ok=True)
    root = np.random.SeedSequence(DATA_KEY)
    centres_seq, rows_seq = root.spawn(2)
    C = uniform_ball(K, D, 1.0 - 1.0 / 32.0, np.random.default_rng(centres_seq))
    streams = rows_seq.spawn((n + GROUP - 1) // GROUP)
    schema = pa.schema([(f"x{j}", pa.float32()) for j in range(D)])
    tmp = path.with_name(path.name + ".part")
    t0 = time.perf_counter()
    with pq.ParquetWriter(tmp, schema) as w:
        for i, s in enumerate(range(0, n, GROUP)):
            g = np.random.default_rng(streams[i])
            m = min(GROUP, n - s)
            X = C[g.integers(0, K, m)] + SIGMA * g.standard_normal((m, D))
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            X = np.where(norms > 1.0, X / norms, X).astype(np.float32)
            w.write_table(pa.table({f"x{j}": X[:, j] for j in range(D)}, schema=schema), row_group_size=GROUP)
    os.replace(tmp, path)
    print(f"wrote {path} ({n:.0e} rows, {path.stat().st_size / 1e9:.2f} GB) in "
          f"{time.perf_counter() - t0:.0f} s ({load()})", flush=True)
    return path


# ----------------------------------------------------------------------------- the cluster


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_exe() -> str:
    return str(Path(sys.executable).parent / "dask")


def start_cluster(n_workers: int = 2, memory: str = WORKER_MEMORY) -> tuple[str, list[subprocess.Popen]]:
    """``dask scheduler`` and ``n_workers`` ``dask worker`` processes on 127.0.0.1."""
    from distributed import Client

    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    logs = DIR / "cluster_logs"
    logs.mkdir(parents=True, exist_ok=True)
    procs = [subprocess.Popen([dask_exe(), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--dashboard-address", ":0", "--no-show"],
                              stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler.log", "w"))]  # noqa: SIM115
    for i in range(n_workers):
        procs.append(subprocess.Popen([dask_exe(), "worker", addr, "--host", "127.0.0.1", "--nthreads", "1",
                                       "--nworkers", "1", "--memory-limit", memory, "--no-dashboard",
                                       "--local-directory", str(DIR / f"worker{i}")],
                                      stdout=subprocess.DEVNULL, stderr=open(logs / f"worker{i}.log", "w")))  # noqa: SIM115
    deadline = time.monotonic() + 120
    while True:
        try:
            with Client(addr, timeout=5) as c:
                c.wait_for_workers(n_workers, timeout=max(1.0, deadline - time.monotonic()))
                break
        except OSError:
            if time.monotonic() > deadline:
                stop(procs)
                raise
            time.sleep(0.5)
    return addr, procs


def worker_pids(addr: str) -> list[int]:
    """The worker processes' ids (``dask worker --nworkers 1`` runs the worker in a child process)."""
    from distributed import Client

    with Client(addr, timeout=10) as c:
        return sorted(int(p) for p in c.run(os.getpid).values())


def stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in reversed(procs):
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# ----------------------------------------------------------------------------- measuring


def _cpu_s(pid: int) -> float | None:
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError):
        return None


def _hwm_mb(pid: int) -> float | None:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
    except OSError:
        return None
    return None


def cli_run(addr: str, wpids: list[int], n: int, algorithm: str) -> dict:
    """``python -m dpviz run FILE --scheduler ADDRESS`` in a child; CPU and peak memory of each part."""
    out = DIR / f"release_{algorithm}_{n}.json"
    cmd = [sys.executable, "-m", "dpviz", "run", str(path_for(n)), "--k", str(K), "--epsilon", str(EPSILON),
           "--delta", str(DELTA), "--radius", "1", "--n-declared", str(n), "--algorithm", algorithm,
           "--unbooked", "--scheduler", addr, "--out", str(out)]
    cpu0 = {p: _cpu_s(p) or 0.0 for p in wpids}
    before = load()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    lines: list[str] = []
    cpu_last = dict(cpu0)
    done = threading.Event()  # not proc.poll(): it would reap the child before os.wait4 does

    def read() -> None:
        for line in proc.stderr:
            lines.append(line.rstrip())

    def sample() -> None:
        while not done.is_set():
            for p in wpids:
                c = _cpu_s(p)
                if c is not None:
                    cpu_last[p] = c
            time.sleep(0.5)

    ths = [threading.Thread(target=read, daemon=True), threading.Thread(target=sample, daemon=True)]
    for th in ths:
        th.start()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for th in ths:
        th.join(timeout=5)
    for p in wpids:
        c = _cpu_s(p)
        if c is not None:
            cpu_last[p] = c
    code = os.waitstatus_to_exitcode(status)
    rec = dict(n=n, algorithm=algorithm, exit=code, wall=wall, cli_cpu=ru.ru_utime + ru.ru_stime,
               cli_rss_mb=ru.ru_maxrss / 1024, load_before=before, load_after=load(),
               worker_cpu=[cpu_last[p] - cpu0[p] for p in wpids],
               worker_hwm_mb=[_hwm_mb(p) for p in wpids], stderr_tail=lines[-6:])
    if code == 0:
        doc = json.loads(out.read_text())
        labels = [str(r["label"]) for r in doc["ledger"]]
        rec["ran"] = doc["parameters"]["run"].get("auto_choice", algorithm)
        rec["t"] = doc["parameters"]["run"].get("n_tuples")
        rec["branch"] = ("FC core formed" if any("FC succeeded" in x for x in labels)
                         else "FC ⊥ → fallback" if "fallback" in labels else "—")
        out.unlink()
        out.with_suffix(".html").unlink(missing_ok=True)
    return rec


def run(sizes: list[int], algorithms: list[str], keep: bool, memory: str = WORKER_MEMORY) -> None:
    print(f"# bench/scale_1e8.py ({load()}, {os.cpu_count()} cores shared with other sessions)\n")
    print(f"d = {D}, k = {K}, row-level (ε = {EPSILON:g}, δ = {DELTA:g}), float32 Parquet, row groups of "
          f"{GROUP:.0e}; 2 `dask worker` processes (1 thread, --memory-limit {memory} each) + "
          "`dask scheduler` on 127.0.0.1; a fresh cluster per run\n", flush=True)
    print("| n | --algorithm (ran) | exit | wall (s) | CPU CLI + workers (s) | CPU-s per 10⁶ rows | "
          "peak RSS CLI (MB) | peak RSS workers (MB) | load before → after |")
    print("|---:|---|---:|---:|---:|---:|---:|---|---|", flush=True)
    recs = []
    for n in sizes:
        write(n)
        for algorithm in algorithms:
            addr, procs = start_cluster(memory=memory)
            try:
                wpids = worker_pids(addr)
                rec = cli_run(addr, wpids, n, algorithm)
            finally:
                stop(procs)
            recs.append(rec)
            cpu = rec["cli_cpu"] + sum(rec["worker_cpu"])
            ran = rec.get("ran", "?") + (f", t = {rec['t']}" if rec.get("t") else "") + \
                (f", {rec['branch']}" if rec.get("branch", "—") != "—" else "")
            hwm = " / ".join(f"{m:.0f}" if m else "?" for m in rec["worker_hwm_mb"])
            print(f"| {n:.0e} | {algorithm} ({ran}) | {rec['exit']} | {rec['wall']:.1f} | "
                  f"{rec['cli_cpu']:.1f} + {' + '.join(f'{c:.1f}' for c in rec['worker_cpu'])} = {cpu:.1f} | "
                  f"{cpu / n * 1e6:.2f} | {rec['cli_rss_mb']:.0f} | {hwm} | "
                  f"{rec['load_before']} → {rec['load_after']} |", flush=True)
            if rec["exit"] != 0:
                print("    stderr: " + " // ".join(rec["stderr_tail"]), flush=True)
    (DIR / "results.jsonl").open("a").write("".join(json.dumps(r) + "\n" for r in recs))
    if not keep:
        for n in sizes:
            path_for(n).unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("write", "run", "clean"))
    ap.add_argument("--n", type=int, nargs="+", default=[10_000_000, 100_000_000])
    ap.add_argument("--algorithm", action="append", help="default: auto, then friendlycore")
    ap.add_argument("--keep", action="store_true", help="keep the Parquet files after the runs")
    ap.add_argument("--memory", default=WORKER_MEMORY, help="each worker's --memory-limit")
    a = ap.parse_args()
    if a.what == "write":
        for n in a.n:
            write(n)
    elif a.what == "run":
        run(a.n, a.algorithm or ["auto", "friendlycore"], a.keep, a.memory)
    else:
        for n in a.n:
            path_for(n).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
