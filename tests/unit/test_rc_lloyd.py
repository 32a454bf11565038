"""rc_lloyd: radius-constrained noisy Lloyd from gauss_fit's private start (issue 44)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpviz
from dpviz.clustering.gauss_fit import MEAN_SHARE
from dpviz.clustering.rc_lloyd import (
    clipped_displacements,
    rc_lloyd,
    split_coincident,
    step_budgets,
    step_radii,
)
from dpviz.privacy.ledger import Ledger


def _blobs(n: int = 600, seed: int = 0) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centers = np.array([[0.6, 0.0, 0.0], [-0.6, 0.0, 0.0], [0.0, 0.6, 0.0]])
    return centers[gen.integers(0, 3, n)] + 0.05 * gen.standard_normal((n, 3))


def _spends(ledger: Ledger) -> dict[str, list]:
    out: dict[str, list] = {}
    for path, s in ledger.spends():
        out.setdefault(s.name, []).append((path, s))
    return out


@pytest.mark.parametrize("iters, start, count, frac, decay",
                         [(3, 0.3, 0.2, 0.25, 0.8), (1, 0.5, 0.4, 0.1, 1.0)])
def test_ledger_books_exactly_rho_and_every_noise_scale(iters, start, count, frac, decay):
    X, rho, radius = _blobs(), 0.3, 1.5
    res = rc_lloyd(X, 3, rho=rho, delta=1e-7, radius=radius, n_declared=600, iters=iters, start_share=start,
                   start="gauss", count_share=count, step_frac=frac, step_decay=decay, rng=0)
    res.ledger.check()
    assert res.ledger.total().rho == pytest.approx(rho, rel=1e-12)
    sp = _spends(res.ledger)
    rho_step = (1 - start) * rho / iters
    # The start is gauss_fit at start·ρ: its two Gaussian releases, exactly.
    (_, s_sum), = sp["sum"]
    (_, s_mom), = sp["second moment"]
    assert s_sum.noise_scale == pytest.approx(radius / math.sqrt(2 * start * rho * MEAN_SHARE), rel=1e-12)
    assert s_mom.noise_scale == pytest.approx(radius**2 / math.sqrt(2 * start * rho * (1 - MEAN_SHARE)),
                                              rel=1e-12)
    for t in range(iters):  # every step: k sums with σ = R_t/√(2ρ_sum), k counts with σ = 1/√(2ρ_count)
        R = frac * radius * decay**t
        sums = [s for path, s in sp.get("sum[0]", []) + sp.get("sum[1]", []) + sp.get("sum[2]", [])
                if f"step {t + 1}" in path]
        counts = [s for path, s in sp["count[0]"] + sp["count[1]"] + sp["count[2]"]
                  if f"step {t + 1}" in path]
        assert len(sums) == 3 and len(counts) == 3
        for s in sums:
            assert s.sensitivity == pytest.approx(R, rel=1e-15)
            assert s.noise_scale == pytest.approx(R / math.sqrt(2 * (1 - count) * rho_step), rel=1e-12)
        for s in counts:
            assert s.sensitivity == 1.0
            assert s.noise_scale == pytest.approx(1 / math.sqrt(2 * count * rho_step), rel=1e-12)
        step = res.steps("rc_step")[t].data
        assert step["sigma_sum"] == pytest.approx(R / math.sqrt(2 * (1 - count) * rho_step), rel=1e-12)
    assert res.centers.shape == (3, 3) and np.all(np.linalg.norm(res.centers, axis=1) <= radius + 1e-12)


def test_budgets_and_radii_formulas():
    assert step_budgets(1.0, 0.3, 2, 0.25) == pytest.approx((0.3, 0.2625, 0.0875))
    assert step_radii(2.0, 0.25, 0.5, 3) == pytest.approx([0.5, 0.25, 0.125])


def test_displacements_are_clipped_to_the_radius_and_counted_once():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [10.0, 0.0], [10.2, 0.0]])
    C = np.array([[0.0, 0.0], [10.0, 0.0]])
    labels, sums, counts = clipped_displacements(X, C, 1.0)
    assert labels.tolist() == [0, 0, 1, 1]
    assert counts.tolist() == [2.0, 2.0]
    assert sums[0] == pytest.approx([0.6, 0.8])  # (3, 4) cut to norm 1
    assert sums[1] == pytest.approx([0.2, 0.0])


def test_one_row_moves_a_step_statistic_by_at_most_the_radius_and_one():
    gen = np.random.default_rng(3)
    X = gen.uniform(-1, 1, (200, 4))
    C = gen.uniform(-1, 1, (3, 4))
    R = 0.3
    _, s_all, c_all = clipped_displacements(X, C, R)
    for i in range(0, 200, 17):  # remove one row: one cluster's sum moves by ≤ R, one count by 1
        _, s, c = clipped_displacements(np.delete(X, i, axis=0), C, R)
        assert np.linalg.norm(s_all - s) <= R + 1e-12
        assert np.abs(c_all - c).sum() == 1.0


def test_coincident_start_centers_are_split_along_plus_minus_the_axes_exactly():
    axes = np.array([[0.6, 0.0], [0.8, 0.0], [0.0, 1.0]])  # columns v1 = (0.6, 0.8, 0), v2 = e3
    mean = np.array([0.1, -0.2, 0.3])
    out, moved = split_coincident(np.tile(mean, (6, 1)), 0.2, axes)
    v1, v2 = axes[:, 0], axes[:, 1]
    # repeat i moves (1 + i // 2m)·scale along (−1)^i v_{(i // 2) mod m}: ±v1, ±v2, then 2·(+v1)
    want = mean + np.array([[0, 0, 0], 0.2 * v1, -0.2 * v1, 0.2 * v2, -0.2 * v2, 0.4 * v1])
    assert moved == 5
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-15)
    assert len(np.unique(out, axis=0)) == 6  # no two repeats coincide
    same, moved = split_coincident(np.eye(3), 0.2, axes)
    assert moved == 0 and np.array_equal(same, np.eye(3))


def test_a_collapsed_start_is_split_along_gauss_fits_released_axes_and_spends_nothing_more():
    X = _blobs(60, seed=5)  # ρ so small that every noisy eigenvalue is under the edge
    res = rc_lloyd(X, 3, rho=1e-4, radius=1.5, n_declared=60, start="gauss", rng=1)
    fit = res.find("gaussian_fit").data
    assert fit["directions"] == 0
    start = res.find("rc_start").data
    mean = res.find("mean").data["mean"]
    R0 = 0.2 * 1.5
    assert start["split"] == 2
    np.testing.assert_allclose(start["centers"], mean + 0.5 * R0 * np.array([0 * fit["axes"][:, 0],
                                                                               fit["axes"][:, 0],
                                                                               -fit["axes"][:, 0]]),
                               rtol=0, atol=1e-14)
    # the axes are the noisy Σ̂'s top eigenvectors: unit, orthogonal
    np.testing.assert_allclose(fit["axes"].T @ fit["axes"], np.eye(3), atol=1e-12)
    assert res.ledger.total().rho == pytest.approx(1e-4, rel=1e-12)
    assert {s.name for _, s in res.ledger.spends()} == {"sum", "second moment"} | {
        f"{kind}[{j}]" for kind in ("sum", "count") for j in range(3)}


def test_no_step_moves_a_center_farther_than_its_radius():
    X = _blobs(300, seed=2)
    res = rc_lloyd(X, 3, rho=0.01, radius=1.5, n_declared=300, iters=3, step_frac=0.2, step_decay=0.8, rng=4)
    prev = res.find("rc_start").data["centers"]
    for step in res.steps("rc_step"):
        assert np.linalg.norm(step.data["centers"] - prev, axis=1).max() <= step.data["step_radius"] + 1e-12
        prev = step.data["centers"]


def test_registered_run_meets_the_target_and_finds_separated_blobs():
    X = _blobs(900, seed=1)
    res = dpviz.run("rc_lloyd", X, 3, epsilon=3.0, delta=1e-6, radius=1.0, rng=5, n_declared=900)
    assert res.guarantee.eps <= 3.0 and res.guarantee.delta <= 1e-6
    truth = np.array([[0.6, 0.0, 0.0], [-0.6, 0.0, 0.0], [0.0, 0.6, 0.0]])
    err = np.linalg.norm(res.centers[:, None, :] - truth[None], axis=2).min(axis=0)
    assert err.max() < 0.15, err


def _three_on_a_line(n: int, d: int, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Three clusters spaced along one random direction, standardized as the app standardizes a
    table (z-scores / 3, Λ = √d): iris-sized, where gauss_fit's fit often keeps no direction."""
    u = gen.standard_normal(d)
    truth = np.outer([-1.0, 0.0, 1.0], u / np.linalg.norm(u))
    X = truth[gen.integers(0, 3, n)] + 0.3 * gen.standard_normal((n, d))
    mu, sd = X.mean(axis=0), X.std(axis=0)
    return (X - mu) / sd / 3, (truth - mu) / sd / 3


def test_the_axis_split_merges_fewer_clusters_after_a_collapsed_start():
    """Issue 44: after a collapsed start, a split along public random directions merged two
    clusters (two true centers nearest one answer center) on this table at 7ea29ee in 24 of 200
    draws, 21 of the 91 collapsed ones (23%; measured with this test's streams). Along the noisy
    Σ̂'s axes: 7 of 200, 4 of the 91 collapsed, with 4 steps; 4 of 200, 1 of 91, with the shipped 8.
    Tolerance: ≤ 14 of 200 draws (7%; binomial sd at 3.5% ≈ 1.3%) and ≤ 10% of the collapsed."""
    data_seq, algo_seq = np.random.SeedSequence(44).spawn(2)
    X, truth = _three_on_a_line(200, 4, np.random.default_rng(data_seq))
    merged, collapsed, merged_collapsed = 0, 0, 0
    for seq in algo_seq.spawn(200):
        res = dpviz.run("rc_lloyd", X, 3, epsilon=3.0, delta=1e-6, radius=2.0, n_declared=200, start="gauss",
                        rng=np.random.default_rng(seq))
        near = np.argmin(((truth[:, None, :] - res.centers[None]) ** 2).sum(axis=2), axis=1)
        merge = np.unique(near).size < 3
        collapse = res.find("gaussian_fit").data["directions"] == 0
        merged += merge
        collapsed += collapse
        merged_collapsed += merge and collapse
    assert collapsed >= 80, collapsed  # the case under test happens in ≥ 40% of draws
    assert merged <= 14, merged
    assert merged_collapsed <= 0.10 * collapsed, (merged_collapsed, collapsed)


def test_the_sign_start_books_exactly_rho_with_every_noise_scale():
    """start="sign": the mean (0.5), the mean distance (0.1) and the spatial sign covariance (0.4)
    of the start's ρ, then the same steps as the gauss start."""
    X, rho, radius, start = _blobs(), 0.3, 1.5, 0.3
    res = rc_lloyd(X, 3, rho=rho, delta=1e-7, radius=radius, n_declared=600, iters=2, start="sign", rng=7)
    res.ledger.check()
    assert res.ledger.total().rho == pytest.approx(rho, rel=1e-12)
    sp = _spends(res.ledger)
    rho_s = start * rho
    (_, s_sum), = sp["sum"]
    (_, s_dist), = sp["sum of distances"]
    (_, s_cov), = sp["spatial sign covariance"]
    assert s_sum.noise_scale == pytest.approx(radius / math.sqrt(2 * 0.5 * rho_s), rel=1e-12)
    assert s_dist.sensitivity == pytest.approx(2 * radius) and \
        s_dist.noise_scale == pytest.approx(2 * radius / math.sqrt(2 * 0.1 * rho_s), rel=1e-12)
    assert s_cov.sensitivity == 1.0
    assert s_cov.noise_scale == pytest.approx(1 / math.sqrt(2 * 0.4 * rho_s), rel=1e-12)
    assert "second moment" not in sp and res.find("gaussian_fit") is None
    rho_step = (1 - start) * rho / 2
    for j in range(3):
        for path, s in sp[f"sum[{j}]"]:
            t = int(path[1].split()[1]) - 1
            R = 0.2 * radius * 0.8**t
            assert s.noise_scale == pytest.approx(R / math.sqrt(2 * 0.8 * rho_step), rel=1e-12)
    assert res.find("rc_start").data["start"] == "sign" and res.params["start"] == "sign"


def test_an_unknown_start_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"'start' parameter of rc_lloyd must be one of \['sign', 'gauss'\]"):
        rc_lloyd(_blobs(), 3, rho=0.1, radius=1.5, n_declared=600, start="pca", rng=0)
    with pytest.raises(ValueError, match="start"):
        dpviz.run("rc_lloyd", _blobs(), 3, epsilon=1.0, delta=1e-6, radius=1.5, n_declared=600, start="pca",
                  rng=0)


def test_the_sign_starts_top_axis_stays_on_the_clusters_line_where_gauss_fits_strays():
    """Issue 44, sixth stop: on the iris-sized table above (200 × 4, ε = 3), gauss_fit's released top
    axis (its second moment's noise scales with Λ²) strays from the line the clusters lie on in a
    tenth of the draws; the spatial signs' does not. Measured with these streams (200 draws): |cos|
    to the line, median / 10th percentile, 0.80 / 0.26 (gauss, 91 collapsed starts) against
    0.986 / 0.972 (sign, none collapsed); answers merging two clusters: 4 and 4. Tolerance: the sign
    axis's 10th percentile ≥ 0.9 and gauss's ≤ 0.5 (so the test sees the difference); the sign
    start merges in ≤ 10 of 200 draws."""
    data_seq, algo_seq = np.random.SeedSequence(44).spawn(2)
    X, truth = _three_on_a_line(200, 4, np.random.default_rng(data_seq))
    line = (truth[2] - truth[0]) / np.linalg.norm(truth[2] - truth[0])
    cos: dict[str, list[float]] = {"gauss": [], "sign": []}
    merged = 0
    for seq in algo_seq.spawn(200):
        for start in ("gauss", "sign"):
            res = dpviz.run("rc_lloyd", X, 3, epsilon=3.0, delta=1e-6, radius=2.0, n_declared=200,
                            start=start, rng=np.random.default_rng(seq))
            axes = res.find("gaussian_fit" if start == "gauss" else "sign_axes").data["axes"]
            cos[start].append(abs(float(axes[:, 0] @ line)))
            if start == "sign":
                near = np.argmin(((truth[:, None, :] - res.centers[None]) ** 2).sum(axis=2), axis=1)
                merged += np.unique(near).size < 3
    g, s = np.percentile(cos["gauss"], 10), np.percentile(cos["sign"], 10)
    assert s >= 0.9 and g <= 0.5, (g, s)
    assert merged <= 10, merged


def test_auto_on_a_small_table_runs_rc_lloyds_default_sign_start():
    """The shipped rule's rc_lloyd cells are the sign start's runs (rc_lloyd[start=sign], its default
    since the sixth stop); on a wine-sized query auto runs it: its ledger books the spatial sign
    covariance and no second moment, within the target guarantee."""
    from dpviz.clustering import auto

    assert "rc_lloyd's runs are those labelled rc_lloyd[start=sign]" in auto.rule()["how"]
    choice = auto.choose(178, 13, 3, 1.0, 1e-6)
    assert (choice.algorithm, choice.params) == ("rc_lloyd", {}), choice
    X = np.random.default_rng(0).uniform(-1, 1, (178, 13)) / 3
    res = dpviz.run("auto", X, 3, epsilon=1.0, delta=1e-6, radius=math.sqrt(13), n_declared=178, rng=5)
    assert res.params["auto_choice"] == "rc_lloyd" and res.params["start"] == "sign"
    names = {s.name for _, s in res.ledger.spends()}
    assert "spatial sign covariance" in names and "second moment" not in names
    assert res.guarantee.eps <= 1.0 + 1e-9 and res.guarantee.delta <= 1e-6
