"""A real PostgreSQL server for the tests, started as the Dask tests start their cluster.

Debian's server binaries (``make postgres`` installs the ``postgresql`` package): ``initdb`` into a
fresh directory, ``pg_ctl start`` on a free loopback port (trust authentication, loopback only,
no fsync: a throwaway cluster), ``pg_ctl stop`` and the directory removed afterwards. PostgreSQL
refuses to run as root, so as root (CI) the commands run as Debian's ``postgres`` user. Missing
binaries fail the test with the command that installs them (never a skip: ``make test`` installs
them first).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _dask_procs import free_port

INSTALL = "make postgres (Debian's postgresql package)"


def bindir() -> Path:
    """The directory of ``initdb`` and ``pg_ctl``: on PATH, else Debian's newest version's."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if not versions:
        raise RuntimeError(f"PostgreSQL's server binaries are not installed: run {INSTALL}.")
    return Path(versions[-1]).parent


@dataclass
class Server:
    dsn: str
    root: Path
    _as: list[str]
    _bin: Path

    def stop(self) -> None:
        subprocess.run([*self._as, str(self._bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast",
                        "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def start(timeout: float = 120.0) -> Server:
    """initdb + pg_ctl start; returns once the server accepts connections (its DSN in ``.dsn``)."""
    import psycopg

    bins = bindir()
    root = Path(tempfile.mkdtemp(prefix="dpviz-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb and postgres refuse root: Debian's postgres user runs them
        shutil.chown(root, "postgres", "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    log = root / "server.log"
    subprocess.run([*run_as, str(bins / "initdb"), "-D", str(root / "data"), "-U", "dpviz", "--auth=trust",
                    "-E", "UTF8", "--no-sync"], check=True, capture_output=True, timeout=timeout)
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
    subprocess.run([*run_as, str(bins / "pg_ctl"), "-D", str(root / "data"), "-o", options, "-l", str(log),
                    "-w", "-t", str(int(timeout)), "start"], check=True, capture_output=True, timeout=timeout)
    server = Server(f"postgresql://dpviz@127.0.0.1:{port}/postgres", root, run_as, bins)
    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(server.dsn, connect_timeout=5).close()
            return server
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def running() -> Iterator[str]:
    """A server for the duration of the block (a test module's fixture); yields its DSN."""
    server = start()
    try:
        yield server.dsn
    finally:
        server.stop()
