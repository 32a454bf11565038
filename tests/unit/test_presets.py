"""Budget splits of FC_Clustering: the paper's constants, the practical optimizer, margins."""

from __future__ import annotations

import inspect
import math

import pytest

from dpviz.clustering.friendlycore.budget import (
    _MIN_SHARE,
    FRACTION_KEYS,
    MARGIN_DIAM,
    MARGIN_DIST,
    MARGIN_MATCH,
    FCSplit,
    diam_margin,
    margins,
    paper_split,
    practical_split,
    reference_split,
    resolve_split,
    suggest_n_tuples,
)
from dpviz.core.filters import expected_margin

PUB = dict(t=200, k=8, rho=1.0, delta=1e-8, r_min=1e-3, radius=1.0)


def test_paper_split_matches_the_note_budget_tree() -> None:
    # Note §4.3 at ρ = 0.99 (the paper's FC share when 0.01 goes to the backup).
    s = paper_split(fallback=True)
    expected = {"match_core": 0.2475, "find_diam": 0.012375, "dist_core": 0.012375,
                "tuple_avg": 0.22275, "lloyd": 0.495, "fallback": 0.01}
    for key, v in expected.items():
        assert math.isclose(s.rho[key], v, rel_tol=1e-12), key
    assert s.delta == {"match_core": 0.25, "dist_core": 0.125, "tuple_avg": 0.125, "lloyd": 0.5}
    assert s.radius_factor == 1.0 and s.lloyd_radius_factor == 2.0
    s0 = paper_split(fallback=False)
    assert s0.rho["fallback"] == 0.0 and math.isclose(s0.rho["lloyd"], 0.5)


@pytest.mark.parametrize("rho", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("fallback", [True, False])
def test_every_preset_sums_to_one(rho: float, fallback: bool) -> None:
    pub = PUB | {"rho": rho}
    for preset in ("paper", "practical", "reference"):
        s = resolve_split(preset, fallback=fallback, **pub)
        assert math.isclose(sum(s.rho.values()), 1.0, rel_tol=1e-12)
        assert math.isclose(sum(s.delta.values()), 1.0, rel_tol=1e-12)
        assert set(s.rho) == set(FRACTION_KEYS)
        assert (s.rho["fallback"] > 0) == fallback


def test_margins_are_the_feasibility_meter() -> None:
    s = reference_split()
    m = margins(s, **PUB)
    c = 0.9 * 200
    assert math.isclose(m[MARGIN_MATCH], expected_margin(200, s.rho["match_core"], 1e-8 * 0.25))
    assert math.isclose(m[MARGIN_DIST], expected_margin(c, s.rho["dist_core"], 1e-8 * 0.125))
    # FindDiam: T = ⌈log_1.5(2/0.001)⌉ = 19, q = ⌈log2 20⌉ = 5 probes per coordinate.
    rp, bp = s.rho["find_diam"] / 8 / 5, 0.2 / 5
    by_hand = (c / 2 - math.sqrt(4 * math.log(1 / bp) / rp)) / math.sqrt(2 / rp)
    assert math.isclose(m[MARGIN_DIAM], by_hand)
    assert math.isclose(diam_margin(c, s.rho["find_diam"] / 8, 0.2, 5), by_hand)


def test_paper_preset_is_infeasible_at_t200() -> None:
    # Note §4.4: the inner dist core gets ρ ≈ 0.0124: its threshold exceeds any score.
    m = margins(paper_split(), **PUB)
    assert m[MARGIN_DIST] < -3
    assert m[MARGIN_MATCH] > 0


def test_practical_maximizes_the_worst_margin() -> None:
    p = practical_split(**PUB)
    mp = margins(p, **PUB)
    for other in (paper_split(), reference_split()):
        assert min(mp.values()) > min(margins(other, **PUB).values())
    # Max–min: the margins sit at the same fraction of their targets (4, 4, 1.5 sd).
    rel = [mp[MARGIN_MATCH] / 4, mp[MARGIN_DIST] / 4, mp[MARGIN_DIAM] / 1.5]
    assert max(rel) - min(rel) < 1e-3


def test_practical_gives_the_surplus_to_the_averages_when_feasible() -> None:
    big = PUB | {"rho": 4.0}
    p = practical_split(**big)
    m = margins(p, **big)
    assert m[MARGIN_MATCH] >= 4 - 1e-6 and m[MARGIN_DIST] >= 4 - 1e-6 and m[MARGIN_DIAM] >= 1.5 - 1e-6
    lo_l, lo_a = _MIN_SHARE["lloyd"], _MIN_SHARE["tuple_avg"]
    assert p.rho["lloyd"] > lo_l and p.rho["tuple_avg"] > lo_a
    assert math.isclose(p.rho["lloyd"] - lo_l, 2 * (p.rho["tuple_avg"] - lo_a), rel_tol=1e-6)


def test_practical_reads_public_values_only() -> None:
    params = set(inspect.signature(practical_split).parameters)
    assert params == {"t", "k", "rho", "delta", "r_min", "radius", "fallback", "base"}


def test_resolve_split_overrides_and_errors() -> None:
    fr = {"match_core": 0.4, "find_diam": 0.1, "dist_core": 0.3, "tuple_avg": 0.1, "lloyd": 0.1}
    s = resolve_split("practical", fractions=fr, fallback=False, radius_factor=5.0, **PUB)
    assert s.rho == fr | {"fallback": 0.0} and s.radius_factor == 5.0
    assert s.preset == "practical+custom"
    with pytest.raises(ValueError, match="'preset' parameter"):
        resolve_split("best", **PUB)
    with pytest.raises(ValueError, match="Unknown fraction"):
        resolve_split("paper", fractions=fr | {"lsh": 0.0}, **PUB)
    with pytest.raises(ValueError, match="sum to 1"):
        resolve_split("paper", fractions=fr | {"lloyd": 0.0}, **PUB)
    with pytest.raises(ValueError, match="fallback=False"):
        resolve_split("paper", fractions=fr | {"lloyd": 0.05, "fallback": 0.05}, fallback=False, **PUB)
    with pytest.raises(ValueError, match="Unknown FC_Clustering option"):
        resolve_split("paper", gamma=0.2, **PUB)


def test_split_validation() -> None:
    good = dict(reference_split().rho)
    with pytest.raises(ValueError, match="positive share"):
        FCSplit(rho=good | {"dist_core": 0.0, "lloyd": good["lloyd"] + good["dist_core"]})
    with pytest.raises(ValueError, match="lloyd_radius_factor"):
        FCSplit(rho=good, lloyd_radius_factor=0.5)
    with pytest.raises(ValueError, match="radius_factor"):
        FCSplit(rho=good, radius_factor=0.9)
    with pytest.raises(ValueError, match="diam_beta"):
        FCSplit(rho=good, diam_beta=1.5)


def test_suggest_n_tuples() -> None:
    s = practical_split(**PUB)
    t = suggest_n_tuples(s, n=1_000_000, k=8, rho=1.0, delta=1e-8, r_min=1e-3, radius=1.0)
    assert t is not None and t > 200  # ρ = 1 at t = 200 is below 3 sd
    m = margins(s, **(PUB | {"t": t}))
    assert min(m.values()) >= 3
    assert suggest_n_tuples(s, n=5_000, k=8, rho=1.0, delta=1e-8, r_min=1e-3, radius=1.0) is None
