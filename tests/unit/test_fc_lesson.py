"""The default lesson shows FriendlyCore's transition (issue 33, item 2): the core forms above the
slider's mark and not below.

The lesson is the app's default (``app/components/state.py``: Fig. 6 blobs, n = 150,000, k = 8,
t = 1,500, data seed 0, δ = 10⁻⁶), run with Explore's own calls (``bench/teaching_default.py``):
run seed s → ``SeedSequence(s).spawn(3)``, [0] the tuple stage, [1] the private stage; the budget
is the plan at the row-level (ε, δ). Fixed run seeds 0 and 1 (the tuple stage is the costly part:
one per seed); exact outcomes, no tolerance: at ε = 5 (the mark) the core forms in both, at
ε = 3 (one slider step below, Explore's opening ε) and at 2 it forms in neither. The margins
behind it (public): at ε = 3 the predicted match margin is below 0 and at ε = 5 above it.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpviz.registry as registry
from dpviz.clustering.friendlycore.budget import MARGIN_MATCH, budget_margins, resolve_budget
from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.data import GENERATORS

N, K, T, DSEED, DELTA = 150_000, 8, 1500, 0, 1e-6
#: Two tuple stages of 1,500 pieces on 150,000 rows (≈ 3 min on the loaded 2-core machine).
pytestmark = pytest.mark.slow


def test_the_lesson_constants_are_the_app_defaults() -> None:
    from app.components.controls import EPS_GRID
    from app.components.state import defaults

    d = defaults()
    assert (d["gen"], d["n"], d["gk"], d["k"], d["t"], d["dseed"]) == ("fig6_blobs", N, K, K, T, DSEED)
    assert d["delta"] == DELTA and d["eps"] == 3.0 and d["seed"] == 0
    assert EPS_GRID.index(5.0) == EPS_GRID.index(3.0) + 1  # ε = 3 is one slider step below 5


@pytest.fixture(scope="module")
def lesson():
    ds = GENERATORS["fig6_blobs"](N, rng=DSEED, d=2, k=K)
    spec = registry.get("friendlycore")
    pub = registry.Public(n_declared=N, d=2, k=K, radius=1.0)
    params = spec.make_params(n_tuples=T, r_min=1e-3)
    stages = {s: fc_tuple_stage(ds.X, K, n_tuples=T, radius=1.0,
                                rng=np.random.default_rng(np.random.SeedSequence(s).spawn(3)[0]))
              for s in (0, 1)}
    return ds, spec, pub, params, stages


def _formed(lesson, eps: float, seed: int) -> bool:
    ds, spec, pub, params, stages = lesson
    b = registry.plan(spec, eps, DELTA, pub, params).budget
    res = fc_private_stage(ds.X, stages[seed], rho=b.rho, delta=b.delta, radius=1.0, r_min=1e-3,
                           n_declared=N, rng=np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[1]))
    return bool(spec.structure_ok(res))


@pytest.mark.parametrize("seed", [0, 1])
def test_the_core_forms_at_the_mark_and_not_below(lesson, seed: int) -> None:
    assert _formed(lesson, 5.0, seed)
    assert not _formed(lesson, 3.0, seed)
    assert not _formed(lesson, 2.0, seed)


def test_the_public_margins_agree_with_the_transition(lesson) -> None:
    _, spec, pub, params, _ = lesson

    def match_margin(eps: float) -> float:
        b = registry.plan(spec, eps, DELTA, pub, params).budget
        fcb = resolve_budget("practical", rho=b.rho, delta=b.delta, t=T, k=K, r_min=1e-3, radius=1.0)
        return budget_margins(fcb, t=T, k=K, r_min=1e-3, radius=1.0)[MARGIN_MATCH]

    assert match_margin(3.0) < 0 < match_margin(5.0)
