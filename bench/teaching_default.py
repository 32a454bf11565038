"""Where FriendlyCore's two regimes sit on Explore's ρ slider (issue 16: a teaching default).

For each candidate default (dataset, n, k, t) and each ρ of the slider's grid, how often the core
forms (FriendlyCore answers without its fallback) over a few seeds, next to the smallest ρ at which
the predicted match-core margin (presets.margins, public quantities only) is ≥ 0 — the mark
Explore draws on the slider. Same calls as the app (fc_tuple_stage, fc_private_stage, practical
split, δ = 10⁻⁶, r_min = 10⁻³·Λ, n_declared = n).

    nice -n 10 python bench/teaching_default.py            # the grid in docs/app.md
    nice -n 10 python bench/teaching_default.py --quick    # one candidate, two seeds
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpviz.clustering.friendlycore.budget import smallest_feasible_rho
from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.data import GENERATORS

#: Explore's slider grid (app/components/controls.RHO_GRID), 10⁻³ … 10.
RHO_GRID = tuple(float(f"{10 ** (i / 10):.3g}") for i in range(-30, 11))
DELTA = 1e-6




def success_curve(gen: str, n: int, k: int, t: int, seeds: int) -> dict[float, float]:
    ds = GENERATORS[gen](n, rng=0)
    radius = float(ds.radius)
    ok = {rho: 0 for rho in RHO_GRID}
    for seed in range(seeds):
        ss = np.random.SeedSequence(seed).spawn(3)  # the app's seed streams (friendlycore/run.py)
        stage = fc_tuple_stage(ds.X, k, n_tuples=t, radius=radius, rng=np.random.default_rng(ss[0]))
        for rho in RHO_GRID:
            r = fc_private_stage(ds.X, stage, rho=rho, delta=DELTA, radius=radius, r_min=1e-3 * radius,
                                 n_declared=n, rng=np.random.default_rng(ss[1]))
            used = next(s.data.get("used") for s in r.trace if s.name == "fallback")
            ok[rho] += int(r.centers is not None and not used)
    return {rho: v / seeds for rho, v in ok.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one candidate, two seeds")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    cands = [("fig6_blobs", 20_000, 8, 200)]
    if not args.quick:
        cands += [("fig6_blobs", 20_000, 8, 400), ("fig3_three", 20_000, 3, 200),
                  ("fig3_three", 20_000, 3, 400)]
    seeds = 2 if args.quick else args.seeds
    for gen, n, k, t in cands:
        t0 = time.perf_counter()
        curve = success_curve(gen, n, k, t, seeds)
        radius = float(GENERATORS[gen](n, rng=0).radius)
        mark = smallest_feasible_rho(RHO_GRID, "practical", t=t, k=k, delta=DELTA, r_min=1e-3 * radius,
                                     radius=radius)
        first = next((rho for rho in RHO_GRID if curve[rho] > 0), None)
        always = next((rho for rho in RHO_GRID if all(curve[r] == 1 for r in RHO_GRID if r >= rho)), None)
        print(f"\n{gen} n={n} k={k} t={t} ({n // t} rows/piece), {seeds} seeds, "
              f"{time.perf_counter() - t0:.0f} s")
        print(f"  predicted match margin >= 0 from rho = {mark}")
        print(f"  core forms in some seed from rho = {first}; in every seed from rho = {always}")
        print("  rho:     " + " ".join(f"{r:>6g}" for r in RHO_GRID[10:]))
        print("  success: " + " ".join(f"{curve[r]:>6.2f}" for r in RHO_GRID[10:]))


if __name__ == "__main__":
    main()
