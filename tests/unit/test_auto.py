"""auto: a choice from public inputs only, by the rule measured through the harness (issue 24)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import dpviz
from dpviz.clustering import auto
from dpviz.data.ball_mixture import ball_mixture

#: (n, d, k) of the evaluation rows (bench/harness.py EVAL_ROWS): never a calibration cell.
EVAL_SHAPES = {(100_000, 100, 64), (200_000, 10, 5), (1_000_000, 20, 16), (150, 4, 3), (1797, 64, 10),
               (569, 30, 2), (178, 13, 3)}


def test_choice_reads_public_inputs_only():
    assert list(inspect.signature(auto.choose).parameters) == ["n_declared", "d", "k", "epsilon", "delta"]


def test_rule_file_provenance_recipes_seeds_and_no_evaluation_row():
    table = auto.rule()
    assert "bench/auto_calibrate.py" in table["how"] and "harness" in table["how"]
    prov = table["provenance"]
    assert len(prov["commit"]) >= 7 and prov["command"].startswith("bench/auto_calibrate.py fit")
    names = {s.name for s in dpviz.algorithms()}
    assert {lab.split("[")[0] for lab in table["algorithms"]} <= names
    # every registered private algorithm that serves the grid's data (d ≥ 2) was measured (auto
    # itself excepted; best_of on the small tables only, bench/auto_best_of.py; the univariate GMM
    # learner serves d = 1 only)
    served = {s.name for s in dpviz.algorithms(private_only=True, applicable_to=2)} - {"auto"}
    assert served <= set(table["algorithms"])
    recipes = {c["recipe"] for c in table["cells"]}
    assert {"balanced", "unbalanced", "heavy_tails", "close", "anisotropic", "small_std"} <= recipes
    # issue 35: small standardized tables, each with ≥ 10 algorithm draws, every label with a p90
    tables = [c for c in table["cells"] if c["recipe"].startswith("table_")]
    assert len(tables) >= 8 and min(c["n"] for c in tables) < 300
    assert {"gauss_fit", "origin"} <= set(table["algorithms"])
    for c in table["cells"]:
        assert (c["n"], c["d"], c["k"]) not in EVAL_SHAPES
        assert c["epsilon"] in (1.0, 3.0)
        assert set(c["p90_excess_loss"]) == set(c["median_excess_loss"])
        assert c["runs"] >= (10 if c["recipe"].startswith("table_") else 3)


def _rule(cells, monkeypatch, **extra):
    table = {"neighbours": 1, "max_time_ratio": 1.5, "cells": cells} | extra
    monkeypatch.setattr(auto, "rule", lambda: table)


def _cell(n, losses, times=None, d=4, k=3, eps=1.0):
    return dict(recipe="balanced", n=n, d=d, k=k, epsilon=eps, median_excess_loss=losses,
                median_time_ratio=times or dict.fromkeys(losses, 1.0), seeds=3)


def test_least_regret_wins_ties_go_to_the_origin(monkeypatch):
    _rule([_cell(1000, {"dp_lloyd": 0.5, "grid_coreset": 0.2, "origin": 3.0})], monkeypatch)
    assert auto.choose(1000, 4, 3, 1.0, 1e-6).algorithm == "grid_coreset"
    _rule([_cell(1000, {"friendlycore": 0.7, "origin": 0.7})], monkeypatch)
    assert auto.choose(1000, 4, 3, 1.0, 1e-6).algorithm == "origin"


def test_risk_a_method_best_on_the_median_but_sometimes_far_off_loses(monkeypatch):
    """Issue 35: the choice weighs the 90th percentile over draws, not only the median."""
    cell = _cell(1000, {"tree_coreset": 0.10, "gauss_fit": 0.12, "origin": 3.0})
    cell["p90_excess_loss"] = {"tree_coreset": 5.0, "gauss_fit": 0.2, "origin": 3.0}
    _rule([cell], monkeypatch)
    assert auto.choose(1000, 4, 3, 1.0, 1e-6).algorithm == "gauss_fit"
    cell["p90_excess_loss"]["tree_coreset"] = 0.15  # steady as well: the median decides
    assert auto.choose(1000, 4, 3, 1.0, 1e-6).algorithm == "tree_coreset"


def test_shrink_to_origin_where_no_private_method_beats_it(monkeypatch):
    cell = _cell(300, {"tree_coreset": 0.8, "gauss_fit": 0.7, "origin": 0.5})
    cell["p90_excess_loss"] = {"tree_coreset": 3.0, "gauss_fit": 1.5, "origin": 0.5}
    _rule([cell], monkeypatch)
    ch = auto.choose(300, 4, 3, 1.0, 1e-6)
    assert ch.algorithm == "origin" and "shrink to the origin" in ch.sentence


def test_only_algorithms_serving_d_are_candidates(monkeypatch):
    _rule([_cell(1000, {"private_gmm_1d": 0.01, "dp_lloyd": 0.5, "origin": 3.0})], monkeypatch)
    assert auto.choose(1000, 4, 3, 1.0, 1e-6).algorithm == "dp_lloyd"
    assert auto.choose(1000, 1, 3, 1.0, 1e-6).algorithm == "private_gmm_1d"


def test_calibrated_rule_on_public_inputs_tiny_budget_answers_the_origin():
    """With n·ε of a few dozen no private method can beat the mean of standardized rows; the
    calibrated rule (not a mock) shrinks to the origin there."""
    assert auto.choose(100, 13, 5, 0.3, 1e-6).algorithm == "origin"


def test_variant_label_sets_its_public_parameters(monkeypatch):
    _rule([_cell(1000, {"dp_lloyd[iters=2]": 0.1, "dp_lloyd": 0.4})], monkeypatch)
    ch = auto.choose(1000, 4, 3, 1.0, 1e-6)
    assert ch.algorithm == "dp_lloyd" and ch.params == {"iters": 2}


def test_time_filter_applies_to_big_inputs_only(monkeypatch):
    cell = _cell(100_000, {"kernel_kmeans": 0.1, "dp_lloyd": 0.12},
                 times={"kernel_kmeans": 9.0, "dp_lloyd": 0.5})
    _rule([cell], monkeypatch)
    assert auto.choose(200_000, 4, 3, 1.0, 1e-6).algorithm == "dp_lloyd"  # n ≥ BIG_N: too slow
    assert auto.choose(20_000, 4, 3, 1.0, 1e-6).algorithm == "kernel_kmeans"


def test_nearest_cells_in_log_n_eps(monkeypatch):
    """Noise scales as 1/(nε): a query at (n, ε = 3) reads the cell at (3n, ε = 1)."""
    _rule([_cell(3000, {"dp_lloyd": 0.1, "origin": 1.0}), _cell(300, {"dp_lloyd": 1.0, "origin": 0.5})],
          monkeypatch)
    assert auto.choose(1000, 4, 3, 3.0, 1e-6).algorithm == "dp_lloyd"
    assert auto.choose(100, 4, 3, 3.0, 1e-6).algorithm == "origin"


def test_auto_runs_the_chosen_algorithm_at_the_target():
    ds = ball_mixture(5_000, d=2, k=4, rng=7)
    res = dpviz.run("auto", ds.X, 4, epsilon=2.0, delta=1e-6, radius=1.0, rng=0, n_declared=5_000)
    chosen = res.params["auto_choice"]
    assert res.find("auto_choice").data["algorithm"] == chosen
    ch = auto.choose(5_000, 2, 4, 2.0, 1e-6)
    direct = dpviz.run(chosen, ds.X, 4, epsilon=2.0, delta=1e-6, radius=1.0, rng=0, n_declared=5_000,
                       **ch.params)
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


def test_auto_where_the_origin_wins_reads_no_row_and_spends_nothing(monkeypatch):
    _rule([_cell(500, {"origin": 0.3, "dp_lloyd": 2.0}, d=8, k=3)], monkeypatch)
    X = np.random.default_rng(0).uniform(-1, 1, (500, 8)) / math.sqrt(8)
    res = dpviz.run("auto", X, 3, epsilon=1.0, delta=1e-6, radius=1.0, rng=0, n_declared=500)
    assert res.params["auto_choice"] == "origin"
    assert np.array_equal(res.centers, np.zeros((3, 8)))
    assert res.guarantee.eps == 0.0 and res.guarantee.delta == 0.0


def test_rc_lloyd_is_a_calibrated_candidate_and_chosen_on_small_tables():
    """Issue 44: the small-n·ε method is measured on every small-table calibration cell, so auto can
    pick it; on a small held-out shape (not an evaluation row) the calibrated rule does."""
    table = auto.rule()
    small = [c for c in table["cells"] if c["recipe"].startswith("table_") or c["recipe"] == "small_std"]
    assert small and all("rc_lloyd" in c["median_excess_loss"] for c in small)
    assert auto.choose(320, 8, 4, 1.0, 1e-6).algorithm == "rc_lloyd"


def test_one_cell_where_a_method_fails_is_capped_at_the_rules_regret_cap(monkeypatch):
    """Issue 44: on digits-like queries one mixture cell where rc_lloyd failed (regret 18) outvoted
    three cells where it was best; with the rule's cap a single cell counts at most ``regret_cap``."""
    cells = [_cell(1000, {"rc_lloyd": 0.1, "tree_coreset": 0.25, "origin": 3.0}),
             _cell(1100, {"rc_lloyd": 0.1, "tree_coreset": 0.25, "origin": 3.0}),
             _cell(1200, {"rc_lloyd": 1.8, "tree_coreset": 0.1, "origin": 3.0})]
    _rule(cells, monkeypatch, neighbours=3)
    # no cap: exp(mean log) of (1, 1, 18) = 2.62 > (2.5, 2.5, 1) = 1.84
    assert auto.choose(1100, 4, 3, 1.0, 1e-6).algorithm == "tree_coreset"
    _rule(cells, monkeypatch, neighbours=3, regret_cap=4.0)
    # capped: (1, 1, 4) → 1.59 < 1.84 (weights 1 / (1 + distance) are nearly equal here)
    assert auto.choose(1100, 4, 3, 1.0, 1e-6).algorithm == "rc_lloyd"


def test_big_inputs_use_the_rules_big_setting(monkeypatch):
    """Issue 44: the neighbour count and cap fitted below BIG_N rows do not apply above it."""
    cells = [_cell(200_000, {"tree_coreset": 0.1, "grid_coreset": 0.2}),
             _cell(20_000, {"tree_coreset": 0.5, "grid_coreset": 0.1}),
             _cell(10_000, {"tree_coreset": 0.5, "grid_coreset": 0.1})]
    _rule(cells, monkeypatch, neighbours=3, big={"neighbours": 1, "regret_cap": None})
    assert auto.choose(auto.BIG_N * 2, 4, 3, 1.0, 1e-6).algorithm == "tree_coreset"  # its 1 nearest
    assert auto.choose(auto.BIG_N // 2, 4, 3, 1.0, 1e-6).algorithm == "grid_coreset"  # 3 nearest


def test_shipped_rule_neighbours_and_cap_are_the_leave_one_out_choice():
    """The shipped rule states how its setting was chosen (bench/auto_calibrate.py loo) and keeps
    issue 35's setting above BIG_N rows (docs/peers.md: large tables' choices unchanged)."""
    table = auto.rule()
    assert table["neighbours"] == 8 and table["regret_cap"] == 4.0
    assert table["big"] == {"neighbours": 4, "regret_cap": None}
    assert "loo" in table["how"] and "leave one calibration shape out" in table["how"]
    assert auto.choose(150_000, 2, 8, 3.0, 1e-6).algorithm == "grid_coreset"  # the default lesson
