"""Wide data (d in the thousands) never allocates a d×d matrix by surprise (issue 19)."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

from dpviz.clustering import grid_coreset as fallback
from dpviz.clustering.grid_coreset import MAX_PCA_DIM, fallback_centers
from dpviz.privacy.ledger import Ledger
from dpviz.viz.data import _PCA_DENSE_DIM, project_2d


def _blobs(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = np.zeros((3, d))
    centers[0, :3] = [3.0, 0.0, 0.0]
    centers[1, :3] = [0.0, -2.0, 0.0]
    labels = np.arange(n) % 3
    return centers[labels] + 0.1 * rng.standard_normal((n, d)), labels


def _cpu_seconds() -> float:
    """This process's CPU seconds (all its threads): the code's own cost. Wall time failed under
    load (5.7 s at load 17 beside pytest-xdist's other worker) while the work was unchanged."""
    return time.process_time()


def _peak_mb(f) -> tuple[object, float]:
    tracemalloc.start()
    try:
        out = f()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak / 2**20


def test_projection_of_wide_data_is_low_rank_and_matches_dense_pca():
    X, labels = _blobs(400, 600)
    proj, peak = _peak_mb(lambda: project_2d(X))
    assert proj.method == "pca" and proj.components.shape == (600, 2)
    assert peak < 0.5 * 600 * 600 * 8 / 2**20 + 10  # well under a 600×600 covariance and its copies
    # The same two axes as the exact PCA (up to sign, which project_2d fixes).
    _, _, vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)  # exact PCA axes
    exact = vt[:2].T
    cos = np.abs(np.sum(exact * proj.components, axis=0))
    np.testing.assert_allclose(cos, 1.0, atol=1e-6)
    assert "PC1 (" in proj.axis_titles[0]
    # The two clusters separate on PC1.
    P = proj.transform(X)
    assert abs(P[labels == 0, 0].mean() - P[labels == 1, 0].mean()) > 3.0


def test_projection_of_very_wide_data_is_fast_and_bounded():
    X, _ = _blobs(300, 20_000)
    t0 = _cpu_seconds()
    proj, peak = _peak_mb(lambda: project_2d(X))
    assert _cpu_seconds() - t0 < 5.0
    assert peak < 150  # a 20 000² covariance would be 3 200 MB
    assert proj.components.shape == (20_000, 2)
    np.testing.assert_allclose(proj.components.T @ proj.components, np.eye(2), atol=1e-8)


def test_dense_branch_below_the_limit():
    X, _ = _blobs(200, 120)
    assert _PCA_DENSE_DIM >= 120
    proj = project_2d(X)
    _, vecs = np.linalg.eigh(np.cov(X, rowvar=False))
    np.testing.assert_allclose(np.abs(np.sum(vecs[:, ::-1][:, :2] * proj.components, axis=0)), 1.0,
                               atol=1e-9)


@pytest.mark.parametrize("d", [MAX_PCA_DIM + 1, 5_000])
def test_fallback_on_wide_data_forms_no_dxd_matrix_and_spends_the_same(d):
    X, _ = _blobs(300, d)
    X = X / np.linalg.norm(X, axis=1, keepdims=True).max() * 0.99
    ledger = Ledger("fallback")
    t0 = _cpu_seconds()
    out, peak = _peak_mb(lambda: fallback_centers(X, 2, rho=0.5, radius=1.0, n_declared=300,
                                                  rng=np.random.default_rng(0), ledger=ledger))
    assert _cpu_seconds() - t0 < 10.0
    assert peak < 4 * 300 * d * 8 / 2**20 + 20  # O(n d), not O(d²) (5 000² × 8 B = 190 MB)
    assert out.centers.shape == (2, d) and np.all(np.isfinite(out.centers))
    assert np.all(np.linalg.norm(out.centers, axis=1) <= 1.0 + 1e-9)
    assert f"random 2-D subspace (d > {MAX_PCA_DIM})" in out.method
    # Same total as the PCA branch: the PCA share is recorded as reserved, not dropped.
    narrow = Ledger("fallback")
    fallback_centers(X[:, :10], 2, rho=0.5, radius=1.0, n_declared=300, rng=np.random.default_rng(0),
                     ledger=narrow)
    assert ledger.total().rho == pytest.approx(narrow.total().rho, rel=1e-12)
    reserved = [s for _, s in ledger.spends() if s.mechanism == "reserved" and "XᵀX" in s.name]
    assert len(reserved) == 1 and reserved[0].budget.rho == pytest.approx(0.2 * 0.5)


def test_pca_branch_still_used_at_the_limit(monkeypatch):
    calls = []
    real = np.linalg.eigh
    monkeypatch.setattr(fallback.np.linalg, "eigh", lambda S: calls.append(S.shape) or real(S))
    X, _ = _blobs(200, 20)
    X = X / np.linalg.norm(X, axis=1, keepdims=True).max() * 0.99
    fallback_centers(X, 2, rho=0.5, radius=1.0, n_declared=200, rng=np.random.default_rng(0),
                     ledger=Ledger("fallback"))
    assert calls == [(20, 20)]
