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
                   count_share=count, step_frac=frac, step_decay=decay, rng=0)
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
    res = rc_lloyd(X, 3, rho=1e-4, radius=1.5, n_declared=60, rng=1)
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
        res = dpviz.run("rc_lloyd", X, 3, epsilon=3.0, delta=1e-6, radius=2.0, n_declared=200,
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
