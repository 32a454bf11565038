"""FindDiam's pair counts cached per tuple stage (dpviz.averaging.diam_levels; issue 33 item 2).

The cache must give the very integers the direct counts give (so CheckDiam's a, its noise and
the released radii are bit-identical), and a run on a warm stage must not recount pairs.
"""

import numpy as np
import pytest

import dpviz.averaging.diameter as diameter
import dpviz.data
from dpviz.averaging.diam_levels import DiamLevels, grid_r2, reference_sigma
from dpviz.clustering.friendlycore.pipeline import diam_levels, fc_private_stage, fc_tuple_stage
from dpviz.clustering.friendlycore.steps import DIAM_BASE, friendly_reorder
from dpviz.core.predicates import dist_r_counts
from dpviz.core.tuple_predicates import ordered_dist_counts


def _lattice_tuples(t: int, k: int, seed: int) -> np.ndarray:
    """k well-separated centers per tuple, jittered on a lattice of step 0.5: many pairs sit at
    exactly a grid radius (0.5, 1, 2 with r_min = 0.25, b = 2), where ≤ must be inclusive."""
    rng = np.random.default_rng(seed)
    base = 10.0 * np.arange(k)[:, None] * np.array([1.0, 0.0])
    tuples = base[None] + 0.5 * rng.integers(-3, 4, size=(t, k, 2))
    order = np.argsort(rng.random((t, k)), axis=1)  # the centers of a tuple come in any order
    return np.take_along_axis(tuples, order[:, :, None], axis=1)


def _core(t: int, c: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).choice(t, size=c, replace=False))


@pytest.mark.parametrize("c", [5, 40, 95])  # a small core (C × C) and a large one (complement)
def test_totals_equal_the_direct_counts_at_every_grid_level(c):
    t, k = 100, 3
    tuples = _lattice_tuples(t, k, 1)
    grid = (0.25, 40.0, 2.0)
    cache = DiamLevels(tuples, r_min=grid[0], r_max=grid[1], base=grid[2])
    core_index = _core(t, c, 2)
    cache.reference(int(core_index[0]))  # built, so small cores use it too
    ro = friendly_reorder(tuples[core_index], rng=np.random.default_rng(3))
    totals = cache.totals(core_index, ro.ordered, ro.permutation, grid=grid)
    assert totals is not None and len(totals) == k
    for j in range(k):
        want = [int(dist_r_counts(ro.ordered[:, j, :], grid[0] * grid[2] ** e).sum())
                for e in range(len(grid_r2(*grid)))]
        assert totals[j].tolist() == want
    # exact ties exist: the lattice puts pairs at exactly a grid radius (0.5, 1, 2, ...)
    d2 = ((ro.ordered[:, 0, None, :] - ro.ordered[None, :, 0, :]) ** 2).sum(-1)
    assert np.isin(d2[~np.eye(c, dtype=bool)], grid_r2(*grid)).any()


@pytest.mark.parametrize("c", [30, 90])
def test_dist_counts_equal_ordered_dist_counts(c):
    t, k = 100, 3
    tuples = _lattice_tuples(t, k, 4)
    cache = DiamLevels(tuples, r_min=0.25, r_max=40.0, base=2.0)
    core_index = _core(t, c, 5)
    cache.reference(int(core_index[0]))
    ro = friendly_reorder(tuples[core_index], rng=np.random.default_rng(6))
    for radii in (np.array([0.5, 1.0, 2.0]), np.array([1.0, 1.0, 0.5]), np.array([4.0, 4.0, 4.0])):
        got = cache.dist_counts(core_index, ro.ordered, ro.permutation, radii)
        assert got is not None
        assert got.tolist() == ordered_dist_counts(ro.ordered, radii).tolist()


def test_reference_sigma_is_friendly_reorders_sigma():
    tuples = _lattice_tuples(60, 4, 7)
    core_index = _core(60, 25, 8)
    ro = friendly_reorder(tuples[core_index], rng=np.random.default_rng(9))
    sigma = reference_sigma(tuples[core_index[0]], tuples)
    again = tuples[core_index[:, None], sigma[core_index][:, ro.permutation]]
    assert np.array_equal(again, ro.ordered)


def test_a_mismatched_order_or_grid_falls_back_to_direct_counting():
    t, k = 50, 3
    tuples = _lattice_tuples(t, k, 10)
    grid = (0.25, 40.0, 2.0)
    cache = DiamLevels(tuples, r_min=grid[0], r_max=grid[1], base=grid[2])
    core_index = _core(t, 40, 11)
    ro = friendly_reorder(tuples[core_index], rng=np.random.default_rng(12))
    assert cache.totals(core_index, ro.ordered, ro.permutation, grid=grid) is not None
    assert cache.totals(core_index, ro.ordered, ro.permutation, grid=(0.25, 40.0, 1.5)) is None
    shuffled = ro.ordered[:, ::-1]  # not this cache's order of the core
    assert cache.totals(core_index, shuffled, ro.permutation, grid=grid) is None
    assert cache.dist_counts(core_index, shuffled, ro.permutation, np.ones(k)) is None
    fine = (1e-60, 40.0, 1.5)  # 380 grid levels: more than uint8 levels hold
    deep = DiamLevels(tuples, r_min=fine[0], r_max=fine[1], base=fine[2])
    assert deep.totals(core_index, ro.ordered, ro.permutation, grid=fine) is None


# ----------------------------------------------------------------------------- the pipeline


@pytest.fixture(scope="module")
def lesson():
    """Fig. 6 blobs, k = 8, at a size where the core forms from ρ ≈ 0.1 (t = 300)."""
    ds = dpviz.data.GENERATORS["fig6_blobs"](30_000, rng=0)
    stage = fc_tuple_stage(ds.X, 8, n_tuples=300, oracle="kmeans++", radius=float(ds.radius),
                           rng=np.random.default_rng(1))
    return ds, stage


def _run(ds, stage, rho, seed, *, cache):
    return fc_private_stage(ds.X, stage, rho=rho, delta=1e-6, radius=float(ds.radius), r_min=0.001,
                            rng=np.random.default_rng(seed), n_declared=ds.n, cache_diam=cache)


def _release(result):
    """Everything a run releases or spends: centers, the radii and probes, every ledger spend
    (mechanism, budget, noise scale, sensitivity), the failure."""
    steps = {s.name: s.data for s in result.trace}
    spends = [(name, s.mechanism, s.budget, s.noise_scale, s.sensitivity)
              for name, s in result.ledger.spends()]
    return (None if result.centers is None else result.centers.tobytes(), result.failure,
            steps["diameters"]["radii"].tobytes(), steps["diameters"]["probes"],
            steps["dist_core"]["counts"].tobytes(), spends)


def test_cached_and_uncached_runs_release_bit_identical_outputs(lesson):
    ds, stage = lesson
    formed = 0
    for rho in (0.02, 0.1, 0.3, 1.0):  # below and above where the core forms
        for seed in (0, 1, 2):
            direct = _run(ds, stage, rho, seed, cache=False)
            cached = _run(ds, stage, rho, seed, cache=True)
            assert _release(cached) == _release(direct)
            formed += cached.step("fc_outcome").data["reason"] is None
    assert formed >= 3  # the cached path was exercised on cores that formed


def test_a_warm_stage_does_not_recount_pairs(lesson, monkeypatch):
    ds, stage = lesson
    first = _run(ds, stage, 1.0, 0, cache=True)  # builds the stage's levels
    assert first.step("fc_outcome").data["reason"] is None
    assert diam_levels(stage, r_min=0.001, radius=float(ds.radius)).built(
        int(first.step("reorder").data["reference_index"]))

    def no_counting(*args, **kwargs):
        raise AssertionError("FindDiam recounted pairs on a cached stage")

    monkeypatch.setattr(diameter, "dist_r_counts", no_counting)
    again = _run(ds, stage, 0.8, 5, cache=True)  # another ε step on the same stage
    assert again.step("fc_outcome").data["reason"] is None
    with pytest.raises(AssertionError, match="recounted"):
        _run(ds, stage, 0.8, 5, cache=False)
    assert DIAM_BASE == 1.5  # the grid the pipeline's cache is keyed on
