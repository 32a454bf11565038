"""The default lesson's non-private reference k-means, shipped with the app (issue 33 item 2).

Explore's first screen on the default lesson (Fig. 6 blobs, n = 150,000, k = 8; its rows control
also offers 20,000 and 50,000 rows, issue 43) drew most of its
time from the non-private reference: many k-means++ restarts on all rows
(:func:`dpviz.metrics.reference_kmeans`, ~3 s of CPU, ~10 s on a loaded server), for the
normalized-loss tile and the main panel's reference centers. The rows are a public recipe, so
its result can ship: ``make precompute`` (``python -m app.precompute_lesson``) writes
``app/precomputed/lesson_reference.json`` with the dataset's content hash, k, and the hash of
the code that computes it (the reference's import closure, docstrings and comments left out,
and the numeric packages' versions: :mod:`app.components.code_fingerprint`). The app uses an
entry only while all three match, and says on screen that it did; otherwise it computes the
reference as before. ``DPVIZ_PRECOMPUTED=0`` turns it off (as for the precomputed sweeps).

Nothing here reads a user's rows: an upload's content hash is never in the file, and the file
holds a non-private diagnostic of public synthetic data only. Streamlit-free.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

PATH = Path(__file__).resolve().parents[1] / "precomputed" / "lesson_reference.json"
#: The command that regenerates the file (also run by ``make precompute``).
COMMAND = "make precompute"
#: The library modules the reference is computed by (their import closure is hashed).
ROOTS: tuple[str, ...] = ("dpviz.clustering.reference",)
#: The packages whose versions can change the reference's numbers.
_PACKAGES = ("numpy", "scipy", "scikit-learn", "threadpoolctl")
#: The default lesson's rows control (issue 43: fewer rows make privacy dearer), the default
#: (app/components/state.py) last.
LESSON_ROWS: tuple[int, ...] = (20_000, 50_000, 150_000)
#: The lessons shipped: generated data only (the recipe's parameters as the URL carries them),
#: one per setting of the rows control.
LESSONS: tuple[dict[str, Any], ...] = tuple(
    {"gen": "fig6_blobs", "n": n, "dseed": 0, "k": 8} for n in LESSON_ROWS)
#: What the screen says when the reference came from the file.
NOTE = (f"reference loaded from the shipped cache (app/precomputed/{PATH.name}, computed by "
        f"`{COMMAND}` on this public recipe)")


def package_versions() -> tuple[str, ...]:
    """The numeric packages' versions the reference depends on."""
    from app.components import code_fingerprint

    return code_fingerprint.package_versions(_PACKAGES)


@functools.cache
def code_hash() -> str:
    """The hash of the reference's code (its import closure from :data:`ROOTS`) and versions."""
    from app.components import code_fingerprint

    digests = code_fingerprint.digests(closure(ROOTS))
    return code_fingerprint.combine(digests, package_versions())


def closure(roots: tuple[str, ...]) -> dict[str, Path]:
    """The dpviz modules the reference runs: ``roots`` and what they import, transitively, but
    not their parent packages' ``__init__`` (``dpviz/__init__`` imports the whole library, and a
    change to FriendlyCore does not change a k-means reference)."""
    from app.components import code_fingerprint as cf

    todo, seen = list(roots), {}
    while todo:
        name = todo.pop()
        path = None if name in seen else cf._module_file(name)
        if path is None:
            continue
        seen[name] = path = path.resolve()
        todo.extend(m for m in cf._imports(name, path) if m != cf.PACKAGE)
    return dict(sorted(seen.items()))


def compute(X: np.ndarray, k: int) -> dict[str, Any]:
    """The entry the app would compute for rows X: ``dpviz.metrics.reference_kmeans(X, k, rng=0)``
    (the call of ``app.components.run.reference``; ``dpviz.metrics`` re-exports it from
    :mod:`dpviz.clustering.reference`), as JSON-ready values (floats round-trip)."""
    import time

    from dpviz.clustering.reference import reference_kmeans

    t0 = time.perf_counter()
    ref = reference_kmeans(X, k, rng=0)
    return {"k": int(k), "centers": np.asarray(ref.centers, dtype=np.float64).tolist(),
            "cost": float(ref.cost), "recipe": ref.recipe, "seconds": time.perf_counter() - t0}


@functools.cache
def _entries(path: Path, mtime: float) -> dict[tuple[str, int], dict[str, Any]]:
    doc = json.loads(path.read_text())
    if doc.get("code_hash") != code_hash():
        return {}
    return {(e["content_hash"], int(e["k"])): e for e in doc.get("entries", [])}


def entries() -> dict[tuple[str, int], dict[str, Any]]:
    """The file's entries made under the running code's hash, by (content hash, k)."""
    if os.environ.get("DPVIZ_PRECOMPUTED", "1") == "0" or not PATH.is_file():
        return {}
    try:
        return _entries(PATH, PATH.stat().st_mtime)
    except (OSError, ValueError, KeyError):  # a damaged file: compute as if it were not there
        return {}


def reference(ds, k: int) -> tuple[np.ndarray, float, float, str] | None:
    """(centers, cost, seconds it took to compute, recipe with :data:`NOTE`) for the dataset
    ``ds`` and k if shipped under the running code, else None. Generated datasets only."""
    if getattr(ds, "source", None) != "generated":
        return None
    entry = entries().get((ds.content_hash, int(k)))
    if entry is None:
        return None
    centers = np.asarray(entry["centers"], dtype=np.float64)
    return centers, float(entry["cost"]), float(entry["seconds"]), f"{entry['recipe']}; {NOTE}"
