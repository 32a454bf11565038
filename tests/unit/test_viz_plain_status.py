"""The run status in plain words (issue 16): which method answered and why, on real runs."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.data import GENERATORS
from dpviz.viz.storyboard import panel_data, panel_tuples, plain_status, storyboard_figure

INTERNAL = ("match_", "FriendlyCore(", "n̂", "⊥ (", "dist_core", "FC_kTuple", "dp_lloyd")


@pytest.fixture(scope="module")
def runs():
    ds = GENERATORS["fig3_three"](6000, rng=0)
    stage = fc_tuple_stage(ds.X, 3, n_tuples=60, radius=1.0, rng=np.random.default_rng(0))

    def run(rho: float, fallback: bool = True):
        return fc_private_stage(ds.X, stage, rho=rho, delta=1e-6, radius=1.0, r_min=1e-3,
                                n_declared=6000, fallback=fallback, rng=np.random.default_rng(1))

    return ds, {"ok": run(10.0), "fb": run(0.001), "off": run(0.001, fallback=False)}


def test_success_failure_and_disabled_backup_in_words(runs):
    _, r = runs
    assert r["ok"].centers is not None and r["fb"].centers is not None and r["off"].centers is None
    ok, fb, off = (plain_status(r[key]) for key in ("ok", "fb", "off"))
    assert ok.startswith("FriendlyCore completed every step: the 60 pieces agreed") and "3 centers" in ok
    assert fb == ("The 60 pieces did not agree enough for FriendlyCore's core to form at this budget; "
                  "the backup method (a private grid summary of the rows) answered instead: the 3 "
                  "centers shown are its answer.")
    assert off.endswith("the backup method is off, so no centers were released.")
    for text in (ok, fb, off):
        assert not any(word in text for word in INTERNAL), text


def test_panels_a_b_carry_no_run_status_so_a_cached_copy_is_never_stale(runs):
    """Bug (issue 16): panels (a)/(b), cached per tuple stage, kept "FriendlyCore stopped after …"
    after a ρ move made the run succeed. They do not depend on the budget: same title either way."""
    ds, r = runs
    for fn in (panel_data, panel_tuples):
        assert fn(r["fb"], ds.X).layout.title.text == fn(r["ok"], ds.X).layout.title.text
        assert "backup" not in fn(r["fb"], ds.X).layout.title.text
    # the full storyboard still says what happened
    assert "backup method" in storyboard_figure(r["fb"], ds.X).layout.title.text.replace("<br>", " ")
