"""Which of the live storyboard's panels (c)-(g) change when Explore's ε moves one slider step.

    PYTHONPATH=. .venv/bin/python bench/storyboard_eps.py [--n 150000] [--t 1500]

On the default lesson's recipe (Fig. 6 blobs, k = 8, data seed 0, run seed 0, δ = 10⁻⁶) this runs
FriendlyCore as Explore does (one cached tuple stage, the runner's seed convention, the registry's
plan per ε) down the slider from ε = 30, builds the live figure exactly as the page does
(:func:`app.components.friendlycore.live.live_figure_json`) and prints, for each step, which panels'
traces, point images and titles differ from the step before. A figure split into a part that
every ε step redraws and a part that it does not only pays if some panels stay the same (issue 43
item 4, the ε step).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np

import dpviz
import dpviz.registry
from app.components import simulation
from app.components.friendlycore import live
from dpviz.clustering.friendlycore.spec import FCParams
from dpviz.data.generators import fig6_blobs
from dpviz.viz.data import project_2d

PANELS = "cdefg"
#: The ε slider from the bench's start down (app/components/controls.py's EPS_GRID, descending).
STEPS = (30.0, 20.0, 15.0, 10.0, 7.0, 5.0, 3.0, 2.0, 1.5, 1.0, 0.7, 0.5)


def panel_parts(figure: dict) -> list[tuple[str, str, str]]:
    """Per panel (in :data:`PANELS` order): its traces, its images and its title, as strings."""
    traces = {f"x{'' if i == 0 else i + 1}": [] for i in range(len(PANELS))}
    for tr in figure["data"]:
        traces.setdefault(tr.get("xaxis", "x"), []).append(json.dumps(tr, sort_keys=True))
    images = {axis: [] for axis in traces}
    for im in figure["layout"].get("images", []):
        images.setdefault(im.get("xref"), []).append(im.get("source", ""))
    titles = [a["text"] for a in figure["layout"].get("annotations", [])][:len(PANELS)]
    return [("".join(traces[a]), "".join(images[a]), t)
            for a, t in zip(list(traces)[:len(PANELS)], titles, strict=True)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=150_000)
    ap.add_argument("--t", type=int, default=1_500)
    args = ap.parse_args(argv)
    ds = fig6_blobs(args.n, k=8, rng=0)
    spec = dpviz.registry.get("friendlycore")
    pub = dpviz.registry.Public(n_declared=args.n, d=ds.X.shape[1], k=8, radius=1.0)
    params = FCParams(n_tuples=args.t)
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    stage = spec.stage(ds.X, 8, radius=1.0, rng=np.random.default_rng(simulation.seeds(0)[0]),
                       pub=pub, params=params)
    proj = project_2d(ds.X)
    print(f"Fig. 6 blobs n={args.n:,}, k=8, t={args.t}, δ=1e-6: which panels of the live "
          "storyboard change with one ε step (T = traces, I = point images, H = title)")
    print(f"{'ε from → to':>14}  " + "  ".join(f"({p})" for p in PANELS) + "   build")
    before = None
    for eps in STEPS:
        plan = dpviz.registry.plan(spec, eps, 1e-6, pub, params)
        result = dpviz.run("friendlycore", ds.X, 8, epsilon=eps, delta=1e-6, radius=1.0,
                           n_declared=args.n, stage=stage, budget_plan=plan,
                           rng=np.random.default_rng(simulation.seeds(0)[1]), **fields)
        t0 = time.perf_counter()
        parts = panel_parts(json.loads(live.live_figure_json(result, ds, None, proj, vector=False)))
        build = 1e3 * (time.perf_counter() - t0)
        if before is not None:
            cells = ["".join(c for c, i in zip("TIH", range(3), strict=True) if now[i] != old[i]) or "-"
                     for now, old in zip(parts, before[1], strict=True)]
            print(f"{before[0]:>6g} → {eps:<5g}  " + "  ".join(f"{c:>3}" for c in cells)
                  + f"   {build:4.0f} ms")
        before = (eps, parts)


if __name__ == "__main__":
    main()
