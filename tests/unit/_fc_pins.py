"""Pinned FriendlyCore runs: a fixed-seed fingerprint of every released and internal number.

The library clean-ups of issue 11 (FCBudget, the split of ``friendlycore.py``, one private
stage for the streamed and in-memory paths, thread-safe caches) are refactors: for a fixed seed
they must not move a single number, trace field or ledger entry. ``tests/unit/data/fc_pins.npz``
and ``fc_pins.json`` were written by this module on the code BEFORE those changes (main at
8d1b23e)::

    PYTHONPATH=$PWD:$PWD/tests/unit python tests/unit/_fc_pins.py --write

and ``tests/unit/test_fc_pins.py`` compares today's runs with them (numbers to 1e-12 relative).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).parent / "data"
NPZ, JSON = DATA / "fc_pins.npz", DATA / "fc_pins.json"
N, K, T = 20_000, 8, 200


def _flatten(prefix: str, v: Any, num: dict[str, np.ndarray], other: dict[str, Any]) -> None:
    if isinstance(v, dict):
        for key, x in v.items():
            _flatten(f"{prefix}/{key}", x, num, other)
    elif isinstance(v, (list, tuple)) and not (v and all(isinstance(x, (int, float)) for x in v)):
        other[f"{prefix}#len"] = len(v)
        for i, x in enumerate(v):
            _flatten(f"{prefix}[{i}]", x, num, other)
    elif v is None or isinstance(v, str):
        other[prefix] = v
    elif isinstance(v, (bool, np.bool_)):
        other[prefix] = bool(v)
    else:
        a = np.asarray(v)
        if a.dtype.kind in "biu" and a.size > 1000:  # long index/mask arrays: exact, by digest
            other[f"{prefix}#sha256"] = f"{a.dtype.kind}{a.shape}" + hashlib.sha256(
                np.ascontiguousarray(a, dtype=np.int64).tobytes()).hexdigest()
        else:
            num[prefix] = a


def fingerprint(res: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Every number of a Result (centers, trace, ledger rows, params but timings) and its strings."""
    num: dict[str, np.ndarray] = {}
    other: dict[str, Any] = {"failure": res.failure, "steps": [s.name for s in res.trace]}
    _flatten("centers", res.centers, num, other)
    for i, s in enumerate(res.trace):
        other[f"trace[{i}].released"] = s.released
        other[f"trace[{i}].note"] = s.note
        _flatten(f"trace[{i}]:{s.name}", dict(s.data), num, other)
    for i, row in enumerate(res.ledger.to_rows()):
        _flatten(f"ledger[{i}]", dict(row), num, other)
    params = {key: v for key, v in dict(res.params).items() if key != "seconds"}
    _flatten("params", params, num, other)
    if res.guarantee is not None:
        num["guarantee"] = np.array([res.guarantee.eps, res.guarantee.delta])
    return num, other


def cases() -> dict[str, Any]:
    """The pinned runs: name → Result (fig6-like data; success, ⊥ + fallback, ⊥ without, streamed,
    registry)."""
    import dpviz
    from dpviz.clustering.friendlycore.pipeline import fc_clustering
    from dpviz.data import fig6_blobs
    from dpviz.large import fc_stream

    # The pinned data: the old int seeds' draws (issue 24: an int is now keyed on the recipe).
    X = fig6_blobs(N, k=K, rng=np.random.default_rng(0)).X.copy()
    X[:3] *= 3.0  # three rows outside the Λ-ball
    X5 = fig6_blobs(6000, k=4, d=5, rng=np.random.default_rng(1)).X
    common = dict(radius=1.0, r_min=1e-3, n_tuples=T)
    return {
        "ok": fc_clustering(X, K, rho=1.0, delta=1e-8, rng=7, n_declared=N, **common),
        "ok_dp_count": fc_clustering(X, K, rho=1.0, delta=1e-8, rng=8, **common),
        "bot_fallback": fc_clustering(X, K, rho=1e-3, delta=1e-8, rng=7, n_declared=N, **common),
        "bot_nofallback": fc_clustering(X, K, rho=1e-3, delta=1e-8, rng=7, n_declared=N,
                                        fallback=False, **common),
        "paper_preset": fc_clustering(X, K, rho=1.0, delta=1e-8, rng=9, n_declared=N, preset="paper",
                                      **common),
        "bot_fallback_d5": fc_clustering(X5, 4, rho=1e-3, delta=1e-8, rng=3, n_declared=6000,
                                         radius=1.0, r_min=1e-3, n_tuples=50),
        "stream_ok": fc_stream(X, K, rho=1.0, delta=1e-8, n_declared=N, rng=5, n_jobs=2, **common),
        "stream_bot": fc_stream(X, K, rho=1e-3, delta=1e-8, n_declared=N, rng=5, n_jobs=2, **common),
        "registry": dpviz.run("friendlycore", X, K, epsilon=100.0, delta=1e-6, radius=1.0, rng=11,
                              n_declared=N),
        "registry_bot": dpviz.run("friendlycore", X, K, epsilon=0.05, delta=1e-6, radius=1.0, rng=11,
                                  n_declared=N),
    }


def all_fingerprints() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    num: dict[str, np.ndarray] = {}
    other: dict[str, Any] = {}
    for name, res in cases().items():
        n, o = fingerprint(res)
        num |= {f"{name}|{key}": v for key, v in n.items()}
        other |= {f"{name}|{key}": v for key, v in o.items()}
    return num, other


if __name__ == "__main__" and "--write" in sys.argv:
    num, other = all_fingerprints()
    DATA.mkdir(exist_ok=True)
    np.savez_compressed(NPZ, **num)
    JSON.write_text(json.dumps(other, ensure_ascii=False, indent=0, sort_keys=True))
    print(f"wrote {len(num)} arrays and {len(other)} other values")
