"""Segment profiles (issue 27): released centers in the data's original units with each
coordinate's noise sd, read only from released steps and declared bounds."""

from __future__ import annotations

import types

import numpy as np
import pytest

from app.components import segment_profiles as profiles
from dpviz.data import Dataset, columns
from dpviz.result import TraceStep


def _res(centers, *steps):
    return types.SimpleNamespace(centers=None if centers is None else np.asarray(centers, float),
                                 trace=tuple(steps))


def test_average_sigma_is_the_noise_sd_and_bounds_give_original_units():
    C = np.array([[0.5, -0.5], [0.0, 1.0]])
    res = _res(C, TraceStep("tuple_averages", True, {"centers": C.copy(), "sigma": np.array([0.1, 0.2])}),
               TraceStep("lloyd", True, {"used": False, "centers": None, "sigma": None}))
    raw = Dataset(np.zeros((4, 2)), "t", feature_names=("age", "income"), source="upload")
    ds = columns.scale_by_bounds(raw, [0.0, 0.0], [100.0, 200_000.0])  # declared bounds
    table, how = profiles.segment_profiles(res, ds)
    # original = centre + half-width · x; the noise sd scales by the half-width
    np.testing.assert_allclose(table["age"], [75.0, 50.0])
    np.testing.assert_allclose(table["income"], [50_000.0, 200_000.0])
    assert list(table["age ± noise sd"]) == ["5", "10"]  # text, 3 significant digits
    assert list(table["income ± noise sd"]) == ["10000", "20000"]
    assert "original units" in how and "declared bounds" in how


def test_noisy_sums_and_counts_give_sigma_over_count():
    C = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    step = TraceStep("iteration", True, {"centers": C, "noisy_counts": np.array([100.0, 0.4, -3.0]),
                                         "sigma_sum": 5.0})
    np.testing.assert_allclose(profiles.center_noise(_res(C, step)), [0.05, 5.0, 5.0])  # n̂ floored at 1


def test_a_center_kept_from_the_previous_iteration_has_no_sum_over_count_noise():
    """DP-Lloyd keeps a cluster's previous center when its noisy count is below 1: that center is not
    σ_sum / n̂ⱼ (the sum's σ over a count floored at 1 would claim a noise it does not carry)."""
    C = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    step = TraceStep("iteration", True, {"centers": C, "noisy_counts": np.array([100.0, 0.4, 50.0]),
                                         "sigma_sum": 5.0, "kept_previous": np.array([False, True, False])})
    np.testing.assert_allclose(profiles.center_noise(_res(C, step)), [0.05, np.nan, 0.1])


def test_an_unknown_noise_sd_reads_n_a_with_a_footnote_never_none_or_nan():
    """A NaN noise sd (a center kept from the previous iteration) is shown as "n/a" and the caption
    says why; the table holds no None or NaN a grid would render as "None"."""
    C = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    step = TraceStep("iteration", True, {"centers": C, "noisy_counts": np.array([100.0, 0.4, 50.0]),
                                         "sigma_sum": 5.0, "kept_previous": np.array([False, True, False])})
    ds = Dataset(np.zeros((3, 2)), "g", source="generated")
    table, how = profiles.segment_profiles(_res(C, step), ds)
    assert list(table["x1 ± noise sd"]) == ["0.05", "n/a", "0.1"]
    assert list(table["x2 ± noise sd"]) == ["0.05", "n/a", "0.1"]
    np.testing.assert_array_equal(table[["x1", "x2"]].to_numpy(), C)  # the centers stay numbers
    assert not table.isna().any().any()
    shown = table.to_string() + how
    assert "None" not in shown and "nan" not in shown.lower()
    assert "n/a: the noise scale of that center is unknown" in how and "noisy mean" in how
    # every σ known: no footnote
    _, plain = profiles.segment_profiles(_res(C, TraceStep("iteration", True, {
        "centers": C, "noisy_counts": np.array([100.0, 9.0, 50.0]), "sigma_sum": 5.0})), ds)
    assert "n/a" not in plain


def test_a_missing_center_value_reads_n_a():
    C = np.array([[1.0, np.nan], [3.0, 4.0]])
    ds = Dataset(np.zeros((3, 2)), "g", source="generated")
    table, how = profiles.segment_profiles(_res(C), ds)
    assert list(table["x2"]) == ["n/a", "4"] and table["x1"].dtype == float
    assert "n/a in a center column" in how and not table.isna().any().any()


def test_no_noise_column_when_the_method_releases_none_and_none_for_bottom():
    C = np.array([[1.0, 2.0]])
    res = _res(C, TraceStep("fallback", True, {"used": True, "centers": C, "method": "grid"}))
    ds = Dataset(np.zeros((3, 2)), "g", source="generated")
    table, how = profiles.segment_profiles(res, ds)
    assert list(table.columns) == ["segment", "x1", "x2"] and "no per-center noise scale" in how
    # a step whose centers differ from the released ones is not read
    other = _res(C, TraceStep("tuple_averages", True, {"centers": C + 1, "sigma": np.array([9.0])}))
    assert profiles.center_noise(other) is None
    assert profiles.segment_profiles(_res(None), ds)[0] is None


@pytest.mark.parametrize(("name", "n", "eps"), [("dp_lloyd", 20_000, 4.0), ("friendlycore", 100_000, 10.0)])
def test_a_real_run_reports_positive_noise_scales(name, n, eps):
    """DP-Lloyd's last iteration (σ_sum / n̂) and FriendlyCore's own answer (its core forms at this
    size and budget with these seeds: the run is checked not to be the fallback's)."""
    import dpviz.registry
    from dpviz.data import fig6_blobs

    ds = fig6_blobs(n, k=3, rng=3)
    res = dpviz.registry.run(name, ds.X, 3, epsilon=eps, delta=1e-6, radius=float(ds.radius), rng=17,
                             n_declared=n)
    fb = res.find("fallback")
    assert fb is None or not fb.data.get("used")
    noise = profiles.center_noise(res)
    assert noise is not None and noise.shape == (3,)
    fed = ~np.isnan(noise)  # NaN exactly where DP-Lloyd kept a center (its noisy count was below 1)
    last = next(s for s in reversed(res.trace) if s.name == "iteration") if name == "dp_lloyd" else None
    kept = np.zeros(3, bool) if last is None else np.asarray(last.data["kept_previous"], bool)
    np.testing.assert_array_equal(~fed, kept)
    assert fed.sum() >= 2 and np.all(noise[fed] > 0) and np.all(noise[fed] < 0.01)
