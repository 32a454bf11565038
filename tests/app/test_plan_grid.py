"""Explore plans every ε of the slider on the background worker (issue 27: ε step ≤ 0.3 s).

``explore_live._plan_grid`` fills the same process-wide cache the page reads
(``run.fc_plan``), so that a jump of several slider steps waits for no calibration.
"""

from __future__ import annotations

from types import SimpleNamespace

from app.components import controls
from app.components.friendlycore import live as explore_live
from app.components.friendlycore import run


def test_the_grid_plans_are_the_ones_a_move_reads() -> None:
    ds = SimpleNamespace(n=31_415, d=2)  # fc_plan reads declared n and d only
    cfg = run.RunConfig(k=8, t=200, oracle="kmeans++", seed=0, rho=None, delta=1e-6, radius=1.0,
                        r_min=1e-3, preset="practical", eps=3.0)
    assert explore_live._plan_grid(ds, cfg, 3.0) == len(controls.EPS_GRID)
    before = run._plan.cache_info()
    for eps in controls.EPS_GRID:
        run.fc_plan(ds, cfg.at_eps(eps))
    after = run._plan.cache_info()
    assert after.misses == before.misses  # every move's plan is already cached
    assert after.hits == before.hits + len(controls.EPS_GRID)


def test_a_plan_the_registry_refuses_is_skipped_not_raised() -> None:
    ds = SimpleNamespace(n=1_000, d=2)  # t·k = 1,600 pieces' rows above the declared n: refused
    cfg = run.RunConfig(k=8, t=200, oracle="kmeans++", seed=0, rho=None, delta=1e-6, radius=1.0,
                        r_min=1e-3, preset="practical", eps=3.0)
    assert explore_live._plan_grid(ds, cfg, 3.0) == 0
