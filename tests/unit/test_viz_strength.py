"""The row-level (ε, δ) in words: dpviz's strength bands and their edges."""

from __future__ import annotations

import math

import pytest

from dpviz.viz.privacy import STRENGTH_BANDS, strength_band


@pytest.mark.parametrize(("eps", "band"), [
    (0.1, "strong"), (1.0, "strong"), (1.0001, "moderate"), (3.0, "moderate"), (3.01, "weak"),
    (10.0, "weak"), (10.01, "very weak"), (500.0, "very weak"),
])
def test_bands_follow_the_thresholds(eps, band):
    assert strength_band(eps, 1e-9, n_declared=20_000).band == band


def test_thresholds_are_the_documented_ones():
    assert [h for h, _ in STRENGTH_BANDS] == [1.0, 3.0, 10.0, math.inf]


def test_delta_above_one_over_n_is_very_weak_whatever_eps():
    s = strength_band(0.5, 1e-4, n_declared=20_000)
    assert s.band == "very weak" and "1/n" in s.reason
    # at 1/n exactly it is not above 1/n; without a declared n the δ test is skipped
    assert strength_band(0.5, 5e-5, n_declared=20_000).band == "strong"
    assert strength_band(0.5, 1e-4).band == "strong"


def test_vacuous_delta_promises_nothing():
    assert strength_band(0.5, 0.5).band == "none"
    assert strength_band(math.inf, 1e-9).band == "none"
