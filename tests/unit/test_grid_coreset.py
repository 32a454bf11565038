"""grid_coreset: FriendlyCore's fallback registered as its own algorithm (issue 24)."""

from __future__ import annotations

import numpy as np
import pytest

import dpviz
from dpviz.clustering.grid_coreset import grid_coreset
from dpviz.data import GENERATORS
from dpviz.data.ball_mixture import ball_mixture
from dpviz.registry import Public, calibrate, get
from dpviz.viz.storyboards import storyboard_builder


@pytest.fixture(scope="module")
def low_d():
    return GENERATORS["fig6_blobs"](3000, rng=11)


@pytest.fixture(scope="module")
def high_d():
    return ball_mixture(4000, d=20, k=6, rng=12)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("which", ["low_d", "high_d"])
def test_ledger_total_is_the_calibrated_budget_and_guarantee_within_target(request, which, eps):
    ds = request.getfixturevalue(which)
    n, d = ds.X.shape
    spec = get("grid_coreset")
    cal = calibrate(spec, eps, 1e-6, Public(n, d, ds.k, ds.radius), spec.make_params())
    assert cal.guarantee.eps <= eps * (1 + 1e-9) and cal.guarantee.delta <= 1e-6
    res = dpviz.run("grid_coreset", ds.X, ds.k, epsilon=eps, delta=1e-6, radius=ds.radius, rng=4,
                    n_declared=n)
    assert res.guarantee.eps <= eps * (1 + 1e-9)
    total = res.ledger.total()
    assert total.rho == pytest.approx(cal.budget.rho, rel=1e-12)
    assert res.centers.shape == (ds.k, d)
    assert np.all(np.linalg.norm(res.centers, axis=1) <= ds.radius * (1 + 1e-12))


def test_steps_released_and_internal(low_d, high_d):
    r_low = grid_coreset(low_d.X, low_d.k, rho=0.5, radius=1.0, rng=1)
    assert [s.name for s in r_low.trace] == ["removed_rows", "coreset", "centers"]
    r_high = grid_coreset(high_d.X, high_d.k, rho=0.5, radius=1.0, rng=1)
    names = [s.name for s in r_high.trace]
    assert names == ["removed_rows", "subspace", "coreset", "groups", "centers"]
    released = {s.name: s.released for s in r_high.trace}
    assert released == {"removed_rows": False, "subspace": True, "coreset": True, "groups": False,
                        "centers": True}
    assert r_high.find("coreset").data["points"].shape[1] == 20


def test_deterministic_for_a_seed_and_different_across_seeds(high_d):
    a = dpviz.run("grid_coreset", high_d.X, 6, epsilon=1.0, delta=1e-6, radius=1.0, rng=9)
    b = dpviz.run("grid_coreset", high_d.X, 6, epsilon=1.0, delta=1e-6, radius=1.0, rng=9)
    c = dpviz.run("grid_coreset", high_d.X, 6, epsilon=1.0, delta=1e-6, radius=1.0, rng=10)
    assert np.array_equal(a.centers, b.centers) and a.seed == 9
    assert not np.array_equal(a.centers, c.centers)


def test_same_centers_as_friendlycore_fallback_budget_for_budget(high_d):
    """It *is* FriendlyCore's fallback: same function, same ledger shape for the same ρ."""
    from dpviz.clustering.grid_coreset import fallback_centers
    from dpviz.privacy.budget import ZCDP
    from dpviz.privacy.ledger import Ledger

    r = grid_coreset(high_d.X, 6, rho=0.7, radius=1.0, rng=np.random.default_rng(5))
    led = Ledger("x", ZCDP(0.7))
    out = fallback_centers(high_d.X, 6, rho=0.7, radius=1.0, n_declared=4000,
                           rng=np.random.default_rng(5), ledger=led)
    assert np.array_equal(r.centers, out.centers)


def test_beats_the_origin_on_separated_high_d_data(high_d):
    from dpviz.metrics import kmeans_cost

    res = dpviz.run("grid_coreset", high_d.X, 6, epsilon=3.0, delta=1e-6, radius=1.0, rng=2,
                    n_declared=4000)
    assert kmeans_cost(high_d.X, res.centers) < 0.5 * kmeans_cost(high_d.X, np.zeros((1, 20)))


def test_storyboard_registered_and_draws_coreset(low_d):
    res = dpviz.run("grid_coreset", low_d.X, low_d.k, epsilon=1.0, delta=1e-6, radius=1.0, rng=3)
    builder = storyboard_builder("grid_coreset")
    assert builder.__name__ == "grid_coreset_storyboard"
    fig = builder(res, low_d.X, reference_centers=low_d.true_centers)
    names = [t.name for t in fig.data]
    assert "coreset cells (noisy weights)" in names and "released centers" in names


def test_friendlycore_keeps_alone_and_with_fallback(low_d):
    spec = get("friendlycore")
    assert spec.make_params(fallback=False).fallback is False
    assert spec.make_params().fallback is True
