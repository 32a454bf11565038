"""The d > 3 fallback keeps its centers near the rows (issue 16: the Fig. 7 preset showed a loss of
0.05 but a center error of 7.5, with centers drawn off the panel).

Cause: the projected quadtree noises up to 2048·2^5 cells a level and kept every cell above
3 noise sds, so ~90 empty cells a level survived; weighted k-means put a center on a cluster of
them, a group of ~2 rows whose center lay far from every row. Fix: a union-bound threshold
max(3, √(2 ln m)) sds for m cells noised (post-processing). Seeds fixed; the old code gives a
center of norm 16.4 at ρ = 0.05 and a center error of 5.29 at ρ = 0.1 (Explore's seeds)."""

from __future__ import annotations

import numpy as np
import pytest

import dpviz.data
import dpviz.metrics
from dpviz.clustering import grid_coreset as fb
from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger


@pytest.fixture(scope="module")
def fig7():
    # The data of the old int seed 0 (a Generator is used as given; an int is now keyed on the
    # generator's name, issue 24): the numbers in the docstring are for this draw.
    return dpviz.data.GENERATORS["fig7_gmm"](50_000, k=5, d=10, rng=np.random.default_rng(0))


def test_projected_fallback_centers_lie_among_the_rows(fig7):
    led = Ledger("fallback", ZCDP(0.05, 0.0), unit="row")
    out = fb.fallback_centers(fig7.X, 5, rho=0.05, radius=fig7.radius, n_declared=fig7.n,
                              rng=np.random.default_rng(1), ledger=led)
    lo, hi = fig7.X.min(axis=0), fig7.X.max(axis=0)
    assert np.all((out.centers >= lo) & (out.centers <= hi)), np.linalg.norm(out.centers, axis=1)
    assert dpviz.metrics.center_error(fig7.true_centers, out.centers) < 1.5
    assert led.total().rho == pytest.approx(0.05, rel=1e-12)


def test_fig7_preset_center_error_agrees_with_its_loss_at_a_small_budget(fig7):
    ss = np.random.SeedSequence(0).spawn(3)  # Explore's streams for run seed 0
    stage = fc_tuple_stage(fig7.X, 5, n_tuples=200, radius=fig7.radius, oracle="pca",
                           rng=np.random.default_rng(ss[0]))
    res = fc_private_stage(fig7.X, stage, rho=0.1, delta=1e-6, radius=fig7.radius, r_min=0.1,
                           n_declared=fig7.n, rng=np.random.default_rng(ss[1]))
    assert res.find("fallback").data["used"] is True  # the backup answers at this budget
    err = dpviz.metrics.center_error(fig7.true_centers, res.centers)
    # old code: 5.29 (a center far off the rows). Issue 33 lowered the practical split's Lloyd floor
    # to 0.05, so on ⊥ the fallback gets 0.10 of ρ instead of 0.20 (error 1.09 here); the bound is
    # the one the d > 3 fallback test above uses.
    assert err < 1.5, err
    assert np.abs(res.centers).max() < np.abs(fig7.X).max()
