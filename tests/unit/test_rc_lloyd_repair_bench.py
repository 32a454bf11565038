"""bench/rc_lloyd_repair.py (issue 44, fifth stop): the explored variants book exactly ρ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.rc_lloyd_repair import split_candidates, variant
from dpviz.clustering.best_of import score_sensitivity


def _blobs(n: int = 240, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centers = np.array([[0.6, 0.0, 0.0], [-0.6, 0.0, 0.0], [0.0, 0.6, 0.0]])
    return centers[gen.integers(0, 3, n)] + 0.05 * gen.standard_normal((n, 3))


@pytest.mark.parametrize("kind", ["repair", "restarts"])
def test_variant_books_exactly_rho_and_the_selection_scale(kind):
    rho, radius, share, clip = 0.2, 1.5, 0.1, 0.0625
    _, _, ledger = variant(_blobs(), 3, rho, radius, np.random.default_rng(1), kind, share, clip)
    assert math.isclose(ledger.total().rho, rho, rel_tol=1e-12)
    sel = [s for _, s in ledger.spends() if s.name == "selection"]
    assert len(sel) == 1
    tau = clip * 4 * radius ** 2
    assert sel[0].budget.rho == pytest.approx(share * rho, rel=1e-12)
    assert sel[0].sensitivity == tau == score_sensitivity(radius, clip)
    assert sel[0].noise_scale == pytest.approx(2 * tau / math.sqrt(8 * share * rho), rel=1e-12)


def test_oracle_books_everything_but_the_selection():
    rho, share = 0.2, 0.1
    _, _, ledger = variant(_blobs(), 3, rho, 1.5, np.random.default_rng(1), "repair-oracle", share, 0.0625)
    assert math.isclose(ledger.total().rho, (1 - share) * rho, rel_tol=1e-12)
    assert not [s for _, s in ledger.spends() if s.name == "selection"]


def test_split_candidates_move_the_closest_pair_onto_each_other_center():
    C = np.array([[0.0, 0.0], [0.1, 0.0], [2.0, 0.0]])
    axes = np.eye(2)
    cands = split_candidates(C, axes, 0.5)
    assert len(cands) == 1 + 2 * 2 * 2 and np.array_equal(cands[0], C)
    # j = 0 (closest pair {0, 1}), i = 1, v = e1: c_0 = c_1 + 0.5·e1, c_1 = c_1 − 0.5·e1
    np.testing.assert_array_equal(cands[1], [[0.6, 0.0], [-0.4, 0.0], [2.0, 0.0]])
    # j = 1, i = 2, v = e2: c_1 = c_2 + 0.5·e2, c_2 = c_2 − 0.5·e2
    np.testing.assert_array_equal(cands[8], [[0.0, 0.0], [2.0, 0.5], [2.0, -0.5]])
