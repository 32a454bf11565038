"""Precompute the Budget and Compare pages' default sweeps on the synthetic presets (issues 16, 27).

    PYTHONPATH=. .venv/bin/python -m app.precompute_sweeps [--quick] [--check] [--add-all] [--stamp]

Writes ``app/precomputed/budget_sweeps.json``: for each preset below (a URL query, as a shared
link carries it), the row-level ε sweep the Budget page runs with those parameters and the
Compare page's default comparison, computed exactly as the pages compute them
(``sweep.repetition`` / ``sweep.compare_piece`` per piece, the same seed streams and the same
non-private reference), with the :func:`app.components.sweep.code_hash` it was made under. The
app loads it at start and uses an entry only while that hash matches the running code (the code
of the library modules the sweep imports, docstrings and comments left out, and the numeric
packages' versions), so a change to what the sweep computes invalidates the file until this
script is rerun; a docstring or a figure module does not. Every entry is a seeded SIMULATION on
public synthetic data (a recipe, never a user's upload) and the file says so.

``--add-all`` also precomputes Compare's "Add all" on the default lesson (every registered method,
the default ε range and repetitions: 16 methods × 10 repetitions, most of its time in kernel
k-means, Balcan et al.'s local search and the Gaussian fit on 150,000 rows), so that "Add all" on
the default data opens drawn (issue 43: fresh, it takes minutes on 2 cores).

The file also records a ``tree_digest`` of the library's raw bytes: while no byte changed, a
server reads the code hash from the file instead of parsing ~100 modules on its first page
(issue 43). ``--stamp`` re-stamps that digest in seconds when only docstrings or comments changed.

``--check`` says which files changed since the file was made and recomputes a sample of it
(:func:`check_sample`; exit 1 on a difference). ``--quick`` precomputes the default preset only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import numpy as np
import pandas as pd

import dpviz.clustering.baselines
import dpviz.data
import dpviz.metrics
from app.components import compare, state, sweep
from app.components.data_source import generator_kwargs

#: The presets whose Budget links open with curves drawn: the app's default lesson (Explore's
#: and Budget's defaults) and the Learn page's three-cluster recipe.
PRESETS: tuple[dict[str, str], ...] = (
    {},
    {"gen": "fig3_three", "k": "3"},
)


#: Compare-only presets made with ``--add-all``: "Add all" on the default lesson.
ADD_ALL: tuple[dict[str, str], ...] = ({"calg": "all"},)


def params_for(query: dict[str, str]) -> dict:
    """The app's canonical parameters for a URL query (defaults for what it leaves out)."""
    values, notices = state.parse_query(query)
    if notices:
        raise ValueError(f"bad preset {query}: {notices}")
    return {**state.defaults(), **values}


def dataset_for(p: dict):
    """The generated dataset the app builds for ``p`` (``data_source.generate``'s call)."""
    return dpviz.data.GENERATORS[p["gen"]](int(p["n"]), rng=int(p["dseed"]), **generator_kwargs(p))


#: The page's non-private reference cost (lives in ``app.components.sweep``: issue 45 item 3).
reference_cost = sweep.reference_cost


def spec_for(p: dict, ds) -> sweep.SweepSpec:
    radius = p["radius"] if p["radius"] is not None else ds.radius
    algos = tuple(a for a in p["balg"].split(",") if a)
    return sweep.spec_for(ds, p, float(radius), algos)


def compare_spec_for(p: dict, ds) -> sweep.CompareSpec:
    """The Compare page's default comparison for ``p`` (its default algorithms and parameters)."""
    import dpviz.registry

    radius = p["radius"] if p["radius"] is not None else ds.radius
    names = compare.algorithm_names(ds, p)
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


#: Columns a recomputation must reproduce exactly: what each run decided.
EXACT_COLUMNS: tuple[str, ...] = ("algorithm", "epsilon", "rep", "n", "budget_kind", "released",
                                  "success", "fallback")
#: Columns compared to :data:`RTOL` and :data:`ATOL`: the runs' numbers. The file keeps 15 decimal
#: places (|rounding| ≤ 5e-16, which matters for a δ near 1e-11) and BLAS may sum in another order
#: on another machine (~1e-15 relative): 1e-9 relative is far above both and far below what a
#: changed noise draw, seed or formula moves (≥ 1e-4 relative in every sample seen).
NUMBER_COLUMNS: tuple[str, ...] = ("budget", "budget_delta", "guarantee_eps", "guarantee_delta",
                                   "loss", "labeling_failure", "center_error", "structure_ok")
RTOL = 1e-9
ATOL = 1e-15


def _cells(frame: pd.DataFrame, epsilons: tuple[float, ...]) -> pd.DataFrame:
    cols = [c for c in (*EXACT_COLUMNS, *NUMBER_COLUMNS) if c in frame.columns]
    eps = frame["epsilon"].to_numpy(float)
    # The non-private reference runs at ε = ∞, which the file's JSON stores as null.
    frame = frame.assign(epsilon=np.where(np.isfinite(eps), eps, np.inf))
    keep = frame[np.isin(eps, epsilons) | ~np.isfinite(eps)]
    return keep[cols].sort_values(["algorithm", "epsilon"]).reset_index(drop=True)


def _differences(label: str, got: pd.DataFrame, want: pd.DataFrame) -> list[str]:
    """What differs between a recomputed and a stored sample (empty: they agree)."""
    if len(got) != len(want) or len(got) == 0:
        return [f"{label}: {len(got)} recomputed rows, {len(want)} stored"]
    out = []
    for col in EXACT_COLUMNS:
        if col in want and not (got[col].astype(str) == want[col].astype(str)).all():
            out.append(f"{label}: {col} {list(want[col])} stored, {list(got[col])} recomputed")
    for col in NUMBER_COLUMNS:
        if col in want:
            a, b = got[col].to_numpy(float), want[col].to_numpy(float)
            if not np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True):
                out.append(f"{label}: {col} {list(b)} stored, {list(a)} recomputed")
    return out


def check_sample(path=None) -> list[str]:
    """Recompute a sample of the precomputed file (whatever its code hash) and list what differs:
    for each preset, repetition 1 of its Budget sweep (every algorithm) and of its Compare sweep
    (every algorithm, one piece each), at the smallest and largest ε. Every cell's seed is keyed
    on (seed, repetition, algorithm, ε), so a sub-sweep reproduces the full sweep's cells."""
    stored = dict(sweep.read_precomputed(sweep.PRECOMPUTED if path is None else path)[1])
    problems: list[str] = []
    for query in PRESETS:
        p = params_for(query)
        ds = dataset_for(p)
        specs = (spec_for(p, ds), compare_spec_for(p, ds))
        missing = [s for s in specs if s not in stored]
        if missing:
            problems.append(f"no stored sweep for preset {query or 'default'}'s "
                            f"{', '.join(type(s).__name__ for s in missing)} (its settings changed)")
            continue
        ref = reference_cost(ds, specs[0].k)
        bspec, cspec = specs
        r = min(1, bspec.reps - 1)
        eps = (bspec.epsilons[0], bspec.epsilons[-1])
        got = sweep.repetition(ds, dataclasses.replace(bspec, epsilons=eps), r, ref)
        problems += _differences(f"Budget {query or 'default'} rep {r}", _cells(got, eps),
                                 _cells(stored[bspec][r], eps))
        r = min(1, cspec.reps - 1)
        eps = (cspec.epsilons[0], cspec.epsilons[-1])
        sub = dataclasses.replace(cspec, epsilons=eps)
        for i, (rep, name) in enumerate(sub.chunks):
            if rep == r:
                got = sweep.compare_piece(ds, sub, i, ref)
                problems += _differences(f"Compare {query or 'default'} rep {r} {name}",
                                         _cells(got, eps), _cells(stored[cspec][i], eps))
    return problems


def stamp(path=None) -> int:
    """Write the running :func:`app.components.sweep.tree_digest` into the precomputed file when
    its code hash is the running code's (so its numbers are current); exit 1 otherwise."""
    path = sweep.PRECOMPUTED if path is None else path
    doc = json.loads(path.read_text())
    if doc.get("code_hash") != sweep.code_hash():
        print(f"stale (code hash {doc.get('code_hash')} ≠ {sweep.code_hash()}): run `make precompute`")
        return 1
    doc["tree_digest"] = sweep.tree_digest()
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"stamped {path} with tree digest {doc['tree_digest']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the default preset only")
    ap.add_argument("--add-all", action="store_true",
                    help="also Compare's 'Add all' on the default lesson (slow: every method)")
    ap.add_argument("--check", action="store_true",
                    help="recompute a sample of the file and compare (exit 1 on a difference)")
    ap.add_argument("--stamp", action="store_true",
                    help="only re-stamp the file's tree digest (seconds), when its code hash is "
                         "still the running code's (a docstring or comment changed)")
    args = ap.parse_args(argv)
    if args.stamp:
        return stamp()
    if args.check:
        doc = sweep.read_precomputed(sweep.PRECOMPUTED)[0]
        stale = sweep.stale_files(doc)
        if stale:
            print(f"made under another code hash ({doc.get('code_hash')} ≠ {sweep.code_hash()}); "
                  f"changed since: {', '.join(stale)}")
        problems = check_sample()
        print("\n".join(problems) or "a recomputed sample matches the file")
        return 1 if problems or stale else 0
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
    for query in ADD_ALL if args.add_all else ():
        t0 = time.perf_counter()
        cspec, cframes = compute_compare(query)
        entries.append((cspec, cframes))
        print(f"Compare {query}: {cspec.reps} repetitions × {len(cspec.epsilons)} ε × "
              f"{len(cspec.algorithms)} algorithms in {time.perf_counter() - t0:.1f} s", flush=True)
    presets = [dict(q) for q in (PRESETS[:1] if args.quick else PRESETS)]
    sweep.save_precomputed(entries, presets + [dict(q) for q in ADD_ALL if args.add_all])
    print(f"wrote {sweep.PRECOMPUTED} (code hash {sweep.code_hash()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
