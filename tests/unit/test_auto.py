"""auto: a choice from public inputs only, by the measured rule; the ball-mixture recipe."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import dpviz
from dpviz.clustering import auto
from dpviz.data.ball_mixture import ball_mixture


def test_choice_reads_public_inputs_only():
    assert list(inspect.signature(auto.choose).parameters) == ["n_declared", "d", "k", "epsilon", "delta"]


def test_rule_file_names_registered_algorithms_and_how_it_was_measured():
    table = auto.rule()
    assert "bench/auto_grid.py" in table["how"]
    names = {s.name for s in dpviz.algorithms()}
    for c in table["cells"]:
        assert c["best"] in names
        ok = {a: v for a, v in c["median_excess_loss"].items() if v is not None}
        assert c["label"] == min(ok, key=ok.get) and c["label"].startswith(c["best"])


def test_nearest_cell_wins():
    c = auto.rule()["cells"][0]
    ch = auto.choose(c["n"], c["d"], c["k"], c["epsilon"], 1e-6)
    assert ch.algorithm == c["best"] and ch.cell == c
    assert f"at ε = {c['epsilon']:g}" in ch.sentence


def test_auto_runs_the_chosen_algorithm_at_the_target():
    ds = ball_mixture(5_000, d=2, k=4, rng=7)
    res = dpviz.run("auto", ds.X, 4, epsilon=2.0, delta=1e-6, radius=1.0, rng=0, n_declared=5_000)
    chosen = res.params["auto_choice"]
    assert res.find("auto_choice").data["algorithm"] == chosen
    direct = dpviz.run(chosen, ds.X, 4, epsilon=2.0, delta=1e-6, radius=1.0, rng=0, n_declared=5_000)
    assert res.guarantee == direct.guarantee
    assert res.guarantee.eps <= 2.0 and res.guarantee.delta <= 1e-6


def test_ball_mixture_is_googles_recipe():
    ds = ball_mixture(20_000, d=10, k=5, ratio=8.0, weights=(1, 10, 100, 10, 1), rng=0)
    sizes = np.bincount(ds.labels)
    assert sizes.tolist() == [163, 1639, 16393, 1639, 166]  # ⌊n w/Σw⌋, remainder to the last
    assert np.linalg.norm(ds.true_centers, axis=1).max() <= 1 - 1 / 8
    assert np.linalg.norm(ds.X, axis=1).max() <= 1 + 1e-12
    big = ds.X[ds.labels == 2] - ds.true_centers[2]
    sigma = 1 / (8 * math.sqrt(10))
    assert np.std(big) == pytest.approx(sigma, rel=0.02)
    with pytest.raises(ValueError, match="weights"):
        ball_mixture(100, d=2, k=3, weights=(1, 0, 1))


def _small_cells():
    return [c for c in auto.rule()["cells"] if c.get("grid") == "small"]


def test_small_data_has_its_own_cells_and_the_big_rows_keep_theirs():
    """Issue 18: n ≤ 2,000 is calibrated on the small grid; the peers rows still read the medium one."""
    cells = auto.rule()["cells"]
    small = _small_cells()
    assert len(small) == 36 and all(c["n"] <= 2000 for c in small)
    assert all(c.get("grid") == "medium" for c in cells if c["n"] > 2000)
    for c in small:  # the low-information candidates were measured in every small cell
        low_information = {"origin", "gauss_fit", "gauss_fit[moments=1]", "dp_lloyd[iters=1]"}
        assert low_information <= set(c["median_excess_loss"])
        assert c["ratios"] == [1.5, 2.0, 3.0]
    for n, d, k in ((100_000, 100, 64), (200_000, 10, 5), (1_000_000, 20, 16)):
        for eps in (1.0, 3.0):
            assert auto.choose(n, d, k, eps, 1e-6).cell["grid"] == "medium"


def test_auto_where_the_origin_won_reads_no_row_and_spends_nothing():
    c = next(c for c in _small_cells() if c["best"] == "origin")
    X = np.random.default_rng(0).uniform(-1, 1, (c["n"], c["d"])) / math.sqrt(c["d"])
    res = dpviz.run("auto", X, c["k"], epsilon=c["epsilon"], delta=1e-6, radius=1.0, rng=0, n_declared=c["n"])
    assert res.params["auto_choice"] == "origin"
    assert np.array_equal(res.centers, np.zeros((c["k"], c["d"])))
    assert res.guarantee.eps == 0.0 and res.guarantee.delta == 0.0


def test_merge_replaces_remeasured_cells_and_keeps_the_others():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "auto_grid.py"
    spec = importlib.util.spec_from_file_location("auto_grid", path)
    grid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grid)
    old = {"cells": [dict(n=1, d=2, k=3, epsilon=1.0, best="a"), dict(n=5, d=2, k=3, epsilon=1.0, best="b")]}
    new = [dict(n=1, d=2, k=3, epsilon=1.0, best="c", grid="small")]
    out = grid.merge(old, new)
    assert [(c["n"], c["best"], c["grid"]) for c in out] == [(5, "b", "medium"), (1, "c", "small")]
