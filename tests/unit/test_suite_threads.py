"""tests/conftest.py (issue 45 item 5): an xdist worker, and every process it starts, runs one
BLAS/OpenMP thread; a run without xdist keeps the libraries' defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

#: Loads tests/conftest.py as pytest would in this process, then reports the native thread pools
#: of this process and the environment a process it starts inherits.
PROBE = """
import json, os, runpy, sys
runpy.run_path("tests/conftest.py")
import threadpoolctl, sklearn.cluster  # sklearn loads the OpenMP runtime
pools = [(i["user_api"], i["num_threads"]) for i in threadpoolctl.threadpool_info()]
child = {v: os.environ.get(v) for v in sys.argv[1:]}
print(json.dumps({"pools": pools, "child": child}))
"""


def _probe(worker: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (*VARS, "PYTEST_XDIST_WORKER")}
    if worker:
        env["PYTEST_XDIST_WORKER"] = worker
    out = subprocess.run([sys.executable, "-c", PROBE, *VARS], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_an_xdist_worker_and_what_it_starts_run_one_native_thread():
    got = _probe("gw0")
    apis = {api for api, _ in got["pools"]}
    assert {"blas", "openmp"} <= apis, got
    assert all(n == 1 for _, n in got["pools"]), got
    assert got["child"] == dict.fromkeys(VARS, "1")


def test_a_run_without_xdist_keeps_the_defaults():
    got = _probe(None)
    assert got["child"] == dict.fromkeys(VARS)
    if (os.cpu_count() or 1) > 1:
        assert any(n > 1 for api, n in got["pools"] if api == "openmp"), got
