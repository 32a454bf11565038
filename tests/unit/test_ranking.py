"""Compare's ranking rule (dpviz.ranking) and its default set (dpviz.compare_set), issue 43."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpviz.compare_set import CLASSIC, default_methods, named_by_check
from dpviz.ranking import Rule, cell_text, mean_loss, rank_methods, reach, rule_text, tie_groups

EPS = (0.5, 1.36, 3.68, 10.0)


def _frame(losses: dict[str, list[list[float]]], reference: float | None = 0.0) -> pd.DataFrame:
    """A sweep frame: ``losses[name][i]`` are the draws' losses at EPS[i]."""
    rows = []
    for name, cells in losses.items():
        for e, draws in zip(EPS, cells, strict=True):
            for r, v in enumerate(draws):
                rows.append(dict(algorithm=name, title=name.upper(), private=True, epsilon=e, delta=1e-6,
                                 rep=r, loss=v, released=True, structure_ok=None, success=True,
                                 seconds=0.1))
    if reference is not None:
        for r in range(10):
            rows.append(dict(algorithm="kmeans++", title="k-means++ (non-private)", private=False,
                             epsilon=math.inf, delta=0.0, rep=r, loss=reference, released=True,
                             structure_ok=None, success=True, seconds=0.1))
    return pd.DataFrame(rows)


def _flat(values: list[float], reps: int = 10) -> list[list[float]]:
    return [[v] * reps for v in values]


def test_the_issue_case_ranks_by_the_whole_range_not_by_the_largest_eps():
    """Issue 43: "Candidates + local search" (0.97, 0.97, 0.76 at the smaller ε, 0 at ε = 10)
    ranked above auto (0 everywhere) when only ε = 10 counted; reach puts auto first."""
    f = _frame({"auto": _flat([0.0, 0.0, 0.0, 0.0]), "balcan": _flat([0.97, 0.97, 0.76, 0.0]),
                "dp_lloyd": _flat([0.48, 0.6, 0.7, 0.85])})
    r = rank_methods(f)
    assert list(r["algorithm"]) == ["auto", "balcan", "dp_lloyd", "kmeans++"]
    assert list(r["rank"]) == ["1", "2", "3", "—"]
    assert r["reach"].iloc[0] == 0.5 and r["reach"].iloc[1] == 10.0 and math.isinf(r["reach"].iloc[2])


def test_ties_are_shown_as_ties_and_the_next_rank_skips():
    f = _frame({"a": _flat([0.0, 0.0, 0.0, 0.0]), "b": _flat([0.004, 0.0, 0.0, 0.0]),
                "c": _flat([0.3, 0.0, 0.0, 0.0])})
    r = rank_methods(f)
    assert list(r["rank"][:3]) == ["1=", "1=", "3"]
    assert r.attrs["tied"] == [{"A", "B"}]
    # a mean loss more than the tie tolerance apart is no tie
    r2 = rank_methods(f, rule=Rule(tie=0.0001))
    assert list(r2["rank"][:3]) == ["1", "2", "3"]


def test_tie_groups_compare_to_the_groups_first_member_not_a_chain():
    assert tie_groups([(1.0, 0.0), (1.0, 0.008), (1.0, 0.016)], tie=0.01) == [1, 1, 3]
    assert tie_groups([(1.0, 0.0), (2.0, 0.0)], tie=0.01) == [1, 2]
    assert tie_groups([(math.inf, 0.5), (math.inf, 0.505)], tie=0.01) == [1, 1]


def test_each_cell_shows_its_median_and_its_q10_q90_spread():
    draws = [0.0] * 8 + [0.9, 0.9]  # q10 = 0, q90 = 0.9 (numpy's linear quantile)
    f = _frame({"a": [draws] * 4})
    r = rank_methods(f)
    q10, q90 = np.quantile(draws, [0.1, 0.9])
    assert r["ε = 0.5"].iloc[0] == cell_text(0.0, q10, q90) == "0 (0–0.9)" and q90 == pytest.approx(0.9)
    assert cell_text(0.756, 0.1, 0.96) == "0.76 (0.1–0.96)"
    assert r["runs"].iloc[0] == 10
    assert cell_text(math.nan, 0, 0) == "—"


def test_a_rising_median_carries_a_note_with_its_spread():
    low = [0.0] * 10
    bimodal = [0.0] * 4 + [0.85] * 6
    f = _frame({"tree": [low, low, low, bimodal], "flat": [low] * 4})
    r = rank_methods(f).set_index("algorithm")
    note = r.loc["tree", "note"]
    assert "median rises with ε (0.00 at ε = 0.5 → 0.85 at ε = 10)" in note
    assert "q10–q90 0.00–0.00 and 0.00–0.85" in note
    assert r.loc["flat", "note"] == ""


def test_reach_and_mean_loss():
    e = np.array(EPS)
    assert reach(e, np.array([0.5, 0.2, 0.1, 0.0])) == 3.68
    assert math.isinf(reach(e, np.array([0.5, 0.2, 0.11, np.nan])))
    assert mean_loss(e, np.array([0.2] * 4)) == pytest.approx(0.2)
    # a cell not run counts as no answer
    assert mean_loss(e, np.array([np.nan] * 4)) == pytest.approx(1.0)
    assert mean_loss(np.array([3.0]), np.array([0.4])) == 0.4
    # trapezoids over log ε: a loss that falls linearly in log ε averages to its midpoint
    x = np.geomspace(0.5, 10, 5)
    assert mean_loss(x, np.linspace(1, 0, 5)) == pytest.approx(0.5)


def test_a_cell_that_cannot_run_never_reaches_and_counts_as_loss_one():
    f = _frame({"a": _flat([0.0, 0.0, 0.0, 0.0]), "b": _flat([0.0, 0.0, 0.0, 0.0])})
    f.loc[(f["algorithm"] == "b") & (f["epsilon"] == 0.5), "loss"] = np.nan
    r = rank_methods(f).set_index("algorithm")
    assert r.loc["b", "reach"] == 1.36 and r.loc["a", "reach"] == 0.5
    assert r.loc["b", "ε = 0.5"] == "—"


def test_rule_text_says_the_rule():
    text = rule_text()
    assert "smallest row-level ε" in text and "0.1" in text and "tied" in text and "mean" in text


def test_the_default_set_follows_the_declared_shape():
    """Issue 43: auto, the calibration's best for the shape, FriendlyCore, one classic baseline;
    the method Data's Check names is always in it. On the default lesson's shape (150,000 × 2,
    k = 8) the grid coreset (what Data's Check names) and the tree coreset are in."""
    got = default_methods(150_000, 2, 8, EPS, 1e-6, 3.0)
    assert got[0] == "auto" and got[-1] == "kmeans++"
    assert {"friendlycore", CLASSIC, "grid_coreset", "tree_coreset"} <= set(got)
    assert len(got) == len(set(got)) <= 9
    for shape in [(150, 4, 3), (5_000, 10, 5), (20_000, 2, 8), (1_000_000, 50, 20)]:
        got = default_methods(*shape, EPS, 1e-6, 1.0)
        assert set(named_by_check(*shape, 1e-6, 1.0)) <= set(got), shape
        assert {"auto", "friendlycore", CLASSIC} <= set(got)
