"""FastLloyd (Diaa, Fenaux, Humphries, Kerschbaum et al., "FastLloyd: Federated, Accurate, Secure,
and Tunable k-Means Clustering with Differential Privacy", 2024) beside dpviz's: a bench column.

An adapter, not a copy: FastLloyd's code is never committed here. It is loaded at run time from a
snapshot extracted OUTSIDE the repository, named by the environment variable ``FASTLLOYD_PATH``
(the directory holding ``configs/``, ``parties/``, ``data_io/``, ``utils/``). Without it, or when
its imports fail, ``run`` is None and the bench prints "not run" (as for Google's,
``bench/google_dp.py``). Extract a snapshot from its git directory::

    PYTHONPATH=. .venv/bin/python bench/fastlloyd.py \
        --extract /work/.mirror/D-Diaa+FastLloyd/repo /tmp/fastlloyd
    export FASTLLOYD_PATH=/tmp/fastlloyd

``run(X, k, *, epsilon, delta, radius, rng)`` runs its single-process protocol (``local_proto``,
one unmasked client, no secure aggregation: the DP algorithm of the paper's central model) with the
settings of its accuracy experiments: Gaussian analytic mechanism, the radius-constrained
``diagonal_then_frac`` updates, ``fold`` post-processing, α = 0.8 (its CLI default), iterations from
its own ``calculate_iters``. Its data domain is the box [−1, 1]^d: the bench's rows are already in
it (bundled tables are standardized to that box, mixtures lie in the unit ball), so X is passed
as is (clipped to the box, a no-op on them). FastLloyd fixes its own δ = 1/(n ln n) (its
``Server.dp_setup``), which is *larger* than the bench's 1e-6 on every table here (1.3e-3 on
iris): the column is, if anything, favoured; ``delta`` is accepted and ignored, and the bench says
so. Its legacy global RNG is seeded from ``rng`` (the algorithm's stream) and restored.

The installed diffprivlib's ``models`` package no longer imports against this scikit-learn; the
adapter imports only ``diffprivlib.mechanisms`` (what FastLloyd's server uses) without running the
package's ``__init__``; matplotlib (imported by its ``utils`` for plots the adapter never draws)
and tqdm (its progress bar) are stubbed when not installed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

ENV = "FASTLLOYD_PATH"
#: FastLloyd's accuracy-experiment settings (configs/defaults.py ``acc_parameters``, CLI α).
SETTINGS = dict(dp="gaussiananalytic", method="diagonal_then_frac", post="fold", alpha=0.8)


class _Quiet(list):
    """A silent stand-in for tqdm's bar (iterable, ``set_description`` does nothing)."""

    def set_description(self, text: str) -> None:
        pass


def _load() -> tuple[Any, Any, Any] | None:
    """(Params, local_proto, unscale) from ``$FASTLLOYD_PATH``, or None."""
    path = os.environ.get(ENV)
    if not path or not os.path.isdir(os.path.join(path, "parties")):
        return None
    spec = importlib.util.find_spec("diffprivlib")
    if spec is None or spec.submodule_search_locations is None:
        return None
    if "diffprivlib" not in sys.modules:  # the mechanisms only (module docstring)
        pkg = types.ModuleType("diffprivlib")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["diffprivlib"] = pkg
    if importlib.util.find_spec("matplotlib") is None:  # its utils import pyplot for plots only
        sys.modules.setdefault("matplotlib", types.ModuleType("matplotlib"))
        plt = types.ModuleType("matplotlib.pyplot")
        plt.rcParams = {}  # type: ignore[attr-defined]
        sys.modules.setdefault("matplotlib.pyplot", plt)
    if importlib.util.find_spec("tqdm") is None:  # its progress bar
        tq = types.ModuleType("tqdm")
        tq.tqdm = _Quiet  # type: ignore[attr-defined]
        sys.modules.setdefault("tqdm", tq)
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        with contextlib.chdir(path):  # its configs/defaults.py lists ./data at import
            from configs import Params  # type: ignore[import-not-found]
            from data_io import unscale  # type: ignore[import-not-found]
            from utils.protocols import local_proto  # type: ignore[import-not-found]
    except (ImportError, OSError) as exc:
        print(f"fastlloyd: cannot import FastLloyd from {path}: {exc}", file=sys.stderr)
        return None
    return Params, local_proto, unscale


_MODULES = _load()


def _run(X: np.ndarray, k: int, *, epsilon: float, delta: float, radius: float,
         rng: np.random.Generator) -> np.ndarray:
    """FastLloyd's centers at ε on X (in the box [−1, 1]^d); ``delta`` is FastLloyd's own."""
    assert _MODULES is not None
    Params, local_proto, unscale = _MODULES
    n, d = X.shape
    seed = int(rng.integers(1, 2**31 - 1))
    params = Params(seed=seed, data_size=n, dim=d, k=k, eps=float(epsilon), num_clients=1, fixed=False,
                    **SETTINGS)
    params.calculate_iters()
    state = np.random.get_state()  # noqa: NPY002 (FastLloyd draws from the legacy global state)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # its tqdm bar
            centers, _ = local_proto([np.clip(np.asarray(X, dtype=np.float64), -1.0, 1.0)], params,
                                     method="unmasked")
    finally:
        np.random.set_state(state)  # noqa: NPY002
    return np.asarray(unscale(centers), dtype=np.float64)  # local_proto returns fixed point


#: The adapter (None when FastLloyd's code is not available: callers print "not run").
run: Callable[..., np.ndarray] | None = _run if _MODULES is not None else None


def extract(git_dir: str, dest: str) -> str:
    """``git archive`` the snapshot's Python packages into ``dest`` (outside this repository)."""
    here = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
    if os.path.realpath(dest).startswith(here + os.sep):
        raise SystemExit("fastlloyd: extract outside the repository (FastLloyd's code is never committed).")
    os.makedirs(dest, exist_ok=True)
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD", "configs", "parties",
                              "data_io", "utils"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", dest], input=archive, check=True)
    os.makedirs(os.path.join(dest, "data"), exist_ok=True)  # configs/defaults.py lists it at import
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extract", nargs=2, metavar=("GIT_DIR", "DEST"))
    args = ap.parse_args(argv)
    if args.extract:
        print(f"export {ENV}={extract(*args.extract)}")
        return 0
    if run is None:
        print(f"fastlloyd: not run (set {ENV} to an extracted snapshot)")
        return 0
    from dpviz.data import load_builtin
    from dpviz.metrics import kmeans_cost, reference_kmeans

    ds = load_builtin("iris")
    C = run(ds.X, 3, epsilon=1.0, delta=1e-6, radius=ds.radius, rng=np.random.default_rng(
        np.random.SeedSequence(0, spawn_key=(2,))))
    ref = reference_kmeans(ds.X, 3, rng=0).cost
    loss = kmeans_cost(ds.X, C) / ref - 1
    print(f"fastlloyd: ran on iris at ε = 1, {C.shape[0]} centers, loss = {loss:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
