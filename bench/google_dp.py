"""Google's DP clustering (google/differential-privacy, learning/clustering) beside dpviz's.

An adapter, not a copy: Google's code is never committed here. It is loaded at run time from a
snapshot extracted OUTSIDE the repository, named by the environment variable ``GOOGLE_DP_PATH``
(the snapshot's ``learning`` directory, the one that holds ``clustering/``). Without it, or when
its imports fail (it needs ``absl-py``, ``dp_accounting``, ``scipy``, ``scikit-learn``), ``run``
is None and every caller prints "not run" (bench/harness.py's ``google_adapter``).

Extract a snapshot (a git directory of the repository, e.g. from a mirror)::

    PYTHONPATH=. .venv/bin/python bench/google_dp.py --extract /path/to/differential-privacy.git /tmp/gdp
    export GOOGLE_DP_PATH=/tmp/gdp/learning
    PYTHONPATH=. .venv/bin/python bench/google_dp.py          # a smoke run (or "not run", exit 0)

``run(X, k, *, epsilon, delta, radius, rng)`` calls ``clustering_algorithm.private_lsh_clustering``
with its defaults (the README's basic usage) and returns its centers. Google's code draws from
numpy's global random state; the adapter seeds it from ``rng`` (the algorithm's stream, never the
data's) and restores it afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

ENV = "GOOGLE_DP_PATH"


def _load() -> tuple[Any, Any] | None:
    """(clustering_algorithm, clustering_params) from ``$GOOGLE_DP_PATH``, or None."""
    path = os.environ.get(ENV)
    if not path:
        return None
    if os.path.isdir(os.path.join(path, "learning", "clustering")):
        path = os.path.join(path, "learning")
    if not os.path.isdir(os.path.join(path, "clustering")):
        return None
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        from clustering import clustering_algorithm, clustering_params  # type: ignore[import-not-found]
    except ImportError as exc:  # a missing dependency: say which, run nothing
        print(f"google_dp: cannot import Google's clustering from {path}: {exc}", file=sys.stderr)
        return None
    return clustering_algorithm, clustering_params


_MODULES = _load()


def _run(X: np.ndarray, k: int, *, epsilon: float, delta: float, radius: float,
         rng: np.random.Generator) -> np.ndarray:
    """Centers of Google's ``private_lsh_clustering`` at (ε, δ) on X clipped to Λ (defaults)."""
    assert _MODULES is not None
    algo, params = _MODULES
    state = np.random.get_state()  # noqa: NPY002 (Google draws from the legacy global state)
    np.random.seed(int(rng.integers(0, 2**32 - 1)))  # noqa: NPY002
    try:
        data = params.Data(np.asarray(X, dtype=np.float64), radius)
        res = algo.private_lsh_clustering(k, data, params.DifferentialPrivacyParam(epsilon, delta))
    finally:
        np.random.set_state(state)  # noqa: NPY002
    return np.asarray(res.centers, dtype=np.float64)


#: The adapter (None when Google's code is not available: callers print "not run").
run: Callable[..., np.ndarray] | None = _run if _MODULES is not None else None


def extract(git_dir: str, dest: str) -> str:
    """``git archive`` the snapshot's learning/clustering into ``dest`` (outside this repo)."""
    here = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
    if os.path.realpath(dest).startswith(here + os.sep):
        raise SystemExit("google_dp: extract outside the repository (Google's code is never committed).")
    os.makedirs(dest, exist_ok=True)
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD", "learning/clustering"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", dest], input=archive, check=True)
    return os.path.join(dest, "learning")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extract", nargs=2, metavar=("GIT_DIR", "DEST"))
    args = ap.parse_args(argv)
    if args.extract:
        print(f"export {ENV}={extract(*args.extract)}")
        return 0
    if run is None:
        print(f"google_dp: not run (set {ENV} to an extracted snapshot's learning/ directory)")
        return 0
    from dpviz.data.ball_mixture import ball_mixture
    from dpviz.metrics import kmeans_cost

    gen = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(1,)))
    ds = ball_mixture(20_000, d=10, k=5, rng=gen)
    C = run(ds.X, 5, epsilon=3.0, delta=1e-6, radius=1.0, rng=np.random.default_rng(
        np.random.SeedSequence(0, spawn_key=(2,))))
    rel = kmeans_cost(ds.X, C) / kmeans_cost(ds.X, ds.true_centers) - 1
    print(f"google_dp: ran, {C.shape[0]} centers, loss vs true centers − 1 = {rel:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
