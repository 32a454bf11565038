"""Precompute the Budget and Compare pages' default sweeps on the synthetic presets (issues 16, 27).

    PYTHONPATH=. .venv/bin/python -m app.precompute_sweeps [--quick] [--check]

Writes ``app/precomputed/budget_sweeps.json``: for each preset below (a URL query, as a shared
link carries it), the row-level ε sweep the Budget page runs with those parameters and the
Compare page's default comparison, computed exactly as the pages compute them
(``sweep.repetition`` / ``sweep.compare_piece`` per piece, the same seed streams and the same
non-private reference), with the :func:`app.components.sweep.code_hash` it was made under. The
app loads it at start and uses an entry only while that hash matches the running code (the
library's source and the numeric packages' versions), so a change to the library invalidates
the file until this script is rerun. Every entry is a seeded SIMULATION on public synthetic
data (a recipe, never a user's upload) and the file says so.

``--check`` recomputes the first preset's first repetition and compares it with the file
(exit 1 on a difference). ``--quick`` precomputes the default preset only.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

import dpviz.clustering.baselines
import dpviz.data
import dpviz.metrics
from app.components import state, sweep
from app.components.data_source import generator_kwargs

#: The presets whose Budget links open with curves drawn: the app's default lesson (Explore's
#: and Budget's defaults) and the Learn page's three-cluster recipe.
PRESETS: tuple[dict[str, str], ...] = (
    {},
    {"gen": "fig3_three", "k": "3"},
)


def params_for(query: dict[str, str]) -> dict:
    """The app's canonical parameters for a URL query (defaults for what it leaves out)."""
    values, notices = state.parse_query(query)
    if notices:
        raise ValueError(f"bad preset {query}: {notices}")
    return {**state.defaults(), **values}


def dataset_for(p: dict):
    """The generated dataset the app builds for ``p`` (``data_source.generate``'s call)."""
    return dpviz.data.GENERATORS[p["gen"]](int(p["n"]), rng=int(p["dseed"]), **generator_kwargs(p))


def reference_cost(ds, k: int) -> float:
    """The page's non-private reference (``run.reference``: k-means++ with rng=0, its cost)."""
    res = dpviz.clustering.baselines.nonprivate_kmeans(ds.X, k, rng=0)
    return float(dpviz.metrics.kmeans_cost(ds.X, np.asarray(res.centers, dtype=float)))


def spec_for(p: dict, ds) -> sweep.SweepSpec:
    radius = p["radius"] if p["radius"] is not None else ds.radius
    algos = tuple(a for a in p["balg"].split(",") if a)
    return sweep.spec_for(ds, p, float(radius), algos)


def compare_spec_for(p: dict, ds) -> sweep.CompareSpec:
    """The Compare page's default comparison for ``p`` (its default algorithms and parameters)."""
    import dpviz.registry

    radius = p["radius"] if p["radius"] is not None else ds.radius
    names = [a for a in p["calg"].split(",") if a] if p["calg"] != "all" else \
        [s.name for s in dpviz.algorithms()]
    algos = tuple((n, dpviz.registry.get(n).make_params()) for n in names)
    return sweep.CompareSpec(ds.content_hash, algos,
                             sweep.eps_grid(p["celo"], p["cehi"], int(p["cpts"])), float(p["cdelta"]),
                             int(p["creps"]), int(p["k"]), int(ds.d), float(radius), int(ds.n),
                             int(p["seed"]))


def compute(query: dict[str, str], reps: int | None = None) -> tuple[sweep.SweepSpec, list[pd.DataFrame]]:
    p = params_for(query)
    ds = dataset_for(p)
    spec = spec_for(p, ds)
    ref = reference_cost(ds, spec.k)
    frames = [sweep.repetition(ds, spec, r, ref) for r in range(reps or spec.reps)]
    return spec, frames


def compute_compare(query: dict[str, str]) -> tuple[sweep.CompareSpec, list[pd.DataFrame]]:
    """The Compare page's default view for a preset, piece by piece as the page runs it."""
    p = params_for(query)
    ds = dataset_for(p)
    spec = compare_spec_for(p, ds)
    ref = reference_cost(ds, spec.k)
    return spec, [sweep.compare_piece(ds, spec, i, ref) for i in range(spec.total)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the default preset only")
    ap.add_argument("--check", action="store_true",
                    help="recompute the first repetition of the first preset and compare")
    args = ap.parse_args(argv)
    if args.check:
        stored = dict(sweep.load_precomputed())
        spec, frames = compute(PRESETS[0], reps=1)
        if spec not in stored:
            print(f"no precomputed sweep for the default preset under code hash {sweep.code_hash()}")
            return 1
        got, want = frames[0].reset_index(drop=True), stored[spec][0].reset_index(drop=True)
        cols = ["algorithm", "epsilon", "loss", "success"]
        same = got[cols].equals(want[cols]) or np.allclose(got["loss"], want["loss"], rtol=1e-12)
        print("precomputed repetition 0 matches a recomputation" if same else "MISMATCH")
        return 0 if same else 1
    entries = []
    for query in PRESETS[:1] if args.quick else PRESETS:
        t0 = time.perf_counter()
        spec, frames = compute(query)
        entries.append((spec, frames))
        print(f"Budget {query or 'default'}: {len(frames)} repetitions × {len(spec.epsilons)} ε × "
              f"{len(spec.algorithms)} algorithms in {time.perf_counter() - t0:.1f} s", flush=True)
        t0 = time.perf_counter()
        cspec, cframes = compute_compare(query)
        entries.append((cspec, cframes))
        print(f"Compare {query or 'default'}: {cspec.reps} repetitions × {len(cspec.epsilons)} ε × "
              f"{len(cspec.algorithms)} algorithms in {time.perf_counter() - t0:.1f} s", flush=True)
    sweep.save_precomputed(entries, [dict(q) for q in PRESETS[:len(entries)]])
    print(f"wrote {sweep.PRECOMPUTED} (code hash {sweep.code_hash()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
