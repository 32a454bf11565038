"""A real Dask cluster for the tests: ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

Started as a user would (the ``dask`` executable next to ``sys.executable``: the venv's), on free
ports, with the worktree on the workers' PYTHONPATH; stopped by process id (SIGTERM, then SIGKILL).
Workers run without a nanny, so a worker's process id is the worker (killing it kills the worker,
nothing restarts it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def dask_exe() -> str:
    exe = Path(sys.executable).parent / "dask"
    if not exe.exists():
        raise RuntimeError(f"no dask executable next to {sys.executable}")
    return str(exe)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)

    @property
    def procs(self) -> list[subprocess.Popen]:
        return [*self.workers, self.scheduler]

    def stop(self) -> None:
        """SIGTERM the workers and wait for them, then the scheduler (SIGKILL after 10 s each).

        Workers first: a worker SIGTERMed together with its scheduler sometimes waited out the
        whole 10 s for the gone scheduler before the SIGKILL (2 of 7 stops of an idle cluster,
        and 30 s of a suite run's teardowns); in this order 5 of 5 stopped in 0.4-0.5 s."""
        for group in (self.workers, [self.scheduler]):
            for p in group:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in group:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def start(tmp: Path, n_workers: int = 2, timeout: float = 60.0) -> Cluster:
    """Scheduler + ``n_workers`` single-threaded workers; returns once they are all connected."""
    from distributed import Client

    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = open(tmp / "dask_cluster.log", "ab")  # noqa: SIM115  (the processes' log, kept open while they run)
    sched = subprocess.Popen([dask_exe(), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                              "--dashboard-address", ":0", "--no-show"],
                             stdout=log, stderr=log, env=env, cwd=tmp)
    cluster = Cluster(addr, sched)
    try:
        for i in range(n_workers):
            cluster.workers.append(subprocess.Popen(
                [dask_exe(), "worker", addr, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                 "--no-dashboard", "--memory-limit", "0", "--local-directory", str(tmp / f"w{i}")],
                stdout=log, stderr=log, env=env, cwd=tmp))
        deadline = time.monotonic() + timeout
        while True:
            try:
                with Client(addr, timeout=5) as c:
                    c.wait_for_workers(n_workers, timeout=max(1.0, deadline - time.monotonic()))
                    return cluster
            except OSError:
                if time.monotonic() > deadline or sched.poll() is not None:
                    raise
                time.sleep(0.3)
    except BaseException:
        cluster.stop()
        raise
