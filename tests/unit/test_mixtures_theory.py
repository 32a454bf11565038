"""Theory panel values against the seed note's sanity numbers (§5.D; constants and polylogs = 1)."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mixtures import theory as th

A, E, D = 0.1, 1.0, 1e-6


def test_sanity_values_d2_k3():
    assert th.new_general(2, 3, A, E, D) == pytest.approx(4.8e3, rel=0.01)
    terms = th.general_terms(2, 3, A, E, D)
    assert terms[3] == pytest.approx(2.7e3, rel=0.02)  # k^1.5 L^1.5/(αε) dominates
    assert int(th.dominant_term(2, 3, A, E, D)) == 3
    assert th.GENERAL_TERMS[3] == "k^1.5·L^1.5/(αε)"
    assert th.lower_bound(2, 3, A, E, D) == pytest.approx(1.7e3, rel=0.03)  # 1734
    assert th.aal24b(2, 3, A, E, D) == pytest.approx(2.0e5, rel=0.01)


def test_sanity_values_d1_k3():
    assert th.new_univariate(3, A, E, D) == pytest.approx(714, abs=1)
    assert th.lower_bound(1, 3, A, E, D) == pytest.approx(744, abs=1)
    assert th.aal21(1, 3, A, E, D) == pytest.approx(4.6e4, rel=0.01)
    # the panel uses Thm 1.5 at d = 1 (Thm 1.4 is worse there)
    assert th.new_bound(1, 3, A, E, D) == pytest.approx(714, abs=1)
    assert th.new_general(1, 3, A, E, D) > th.new_bound(1, 3, A, E, D)


def test_sanity_values_d100_k5():
    assert th.new_general(100, 5, A, E, D) == pytest.approx(6.8e6, rel=0.01)
    assert th.aal24b(100, 5, A, E, D) == pytest.approx(3.5e12, rel=0.02)


def test_crossover_d_star():
    L = np.log(1 / D)
    assert th.d_star(3, D) == pytest.approx(9 * L**2)
    # at d*, k^1.5 d^1.75 √L = k d² exactly (the note's algebra)
    d = th.d_star(3, D)
    t = th.general_terms(d, 3, A, E, D) * (A * E)
    assert t[2] == pytest.approx(t[1], rel=1e-12)
    # far above d*, upper/lower → 1; at d = 2 the gap is large
    assert th.gap_ratio(1e3 * d, 3, A, E, D) < 1.1
    assert th.gap_ratio(2, 3, A, E, D) > 2.5


def test_rough_forms_and_logs_switch():
    r = th.abstract_rough(10, 2)
    assert r["new"] == pytest.approx(2 * 100 + 2**1.5 * 10**1.75 + 4 * 10)
    assert r["AAL24b"] == 4 * 10**4
    assert th.new_univariate(3, A, E, D, logs=False) == pytest.approx(300 + 30)
    assert th.nonprivate(3, 2, A) == pytest.approx(2 * 9 / A**2)


def test_vectorised_over_a_grid():
    d, k = np.meshgrid(np.arange(1, 6), np.arange(1, 4))
    assert th.dominant_term(d, k, A, E, D).shape == d.shape
    assert th.new_bound(d, k, A, E, D).shape == d.shape
