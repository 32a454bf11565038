"""Where Compare's "Add all" spends its time on the default lesson (issue 43).

    PYTHONPATH=. .venv/bin/python bench/compare_add_all.py [--reps 1]

Runs the pieces of "Add all" (every registered method at Compare's default ε range, δ and
repetitions, on the default lesson's rows: ``app.precompute_sweeps``' data and reference) for the
first ``--reps`` repetitions exactly as the page does (``sweep.compare_piece``), and prints each
method's seconds per repetition (its 4 ε), their sum, the extrapolation to the page's repetitions,
and whether the precomputed file holds "Add all" under the running code (then the page opens it
drawn, with no run). Times are wall seconds on this machine at the printed load.
"""

from __future__ import annotations

import argparse
import os
import time

from app import precompute_sweeps as ps
from app.components import sweep
from bench.harness import load_text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1, help="repetitions to time (of the page's 10)")
    args = ap.parse_args(argv)
    p = {**ps.params_for({}), "calg": "all"}
    ds = ps.dataset_for(p)
    spec = ps.compare_spec_for(p, ds)
    ref = ps.reference_cost(ds, spec.k)
    print(f"# Add all on the default lesson: {ds.n:,} rows, {len(spec.algorithms)} methods × "
          f"{len(spec.epsilons)} ε × {spec.reps} repetitions; {load_text()}; {os.cpu_count()} cpus")
    seconds: dict[str, float] = {}
    for i, (rep, name) in enumerate(spec.chunks):
        if rep >= args.reps:
            break
        t0 = time.perf_counter()
        sweep.compare_piece(ds, spec, i, ref)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t0
    total = sum(seconds.values())
    for name, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"{name:20s} {s / args.reps:8.2f} s per repetition  {100 * s / total:5.1f}%")
    print(f"{'all':20s} {total / args.reps:8.2f} s per repetition; × {spec.reps} repetitions ≈ "
          f"{total / args.reps * spec.reps / 60:.1f} min computed fresh")
    stored = {s for s, _ in sweep.load_precomputed()}
    hint = "no (run `python -m app.precompute_sweeps --add-all`)"
    print("precomputed under the running code: " + ("yes (opens drawn)" if spec in stored else hint))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
