"""FriendlyCoreKMeans: scikit-learn conventions around fc_clustering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.data.generators import fig3_three
from dpviz.estimators import FriendlyCoreKMeans
from dpviz.metrics import center_error


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    ds = fig3_three(30_000, rng=321)
    return ds.X, ds.true_centers


def test_fit_predict_and_attributes(data) -> None:
    X, true = data
    est = FriendlyCoreKMeans(3, n_tuples=200, random_state=0)
    assert est.fit(X) is est
    assert est.cluster_centers_.shape == (3, 2) and est.n_features_in_ == 2
    assert est.failure_ is None
    assert center_error(true, est.cluster_centers_) < 0.05
    lab = est.predict(X[:500])
    assert lab.shape == (500,) and set(np.unique(lab)) <= {0, 1, 2}
    # predict = nearest private center (post-processing).
    d = ((X[:500, None, :] - est.cluster_centers_[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(lab, d.argmin(axis=1))
    assert math.isclose(est.score(X[:500]), -float(d.min(axis=1).sum()), rel_tol=1e-9)
    tot = est.result_.ledger.total()
    assert math.isclose(tot.rho, 1.0) and math.isclose(tot.delta, 1e-8)


def test_random_state_reproducible(data) -> None:
    X, _ = data
    a = FriendlyCoreKMeans(3, n_tuples=60, random_state=5).fit(X).cluster_centers_
    b = FriendlyCoreKMeans(3, n_tuples=60, random_state=5).fit(X).cluster_centers_
    np.testing.assert_array_equal(a, b)


def test_params_roundtrip() -> None:
    est = FriendlyCoreKMeans(4, rho=0.5, preset="paper")
    p = est.get_params()
    assert p["n_clusters"] == 4 and p["rho"] == 0.5 and p["preset"] == "paper"
    assert p["delta"] == 1e-8 and p["n_tuples"] == 200 and p["radius"] == 1.0 and p["r_min"] == 1e-3
    est.set_params(rho=2.0)
    assert est.rho == 2.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(eps=1.0)


def test_failure_without_fallback_and_unfitted(data) -> None:
    X, _ = data
    with pytest.raises(ValueError, match="not fitted"):
        FriendlyCoreKMeans(3).predict(X)
    # The paper preset's dist core is infeasible at t = 100: no centers without the fallback.
    est = FriendlyCoreKMeans(3, n_tuples=100, preset="paper", fallback=False, random_state=1).fit(X)
    assert est.cluster_centers_ is None and est.failure_ is not None
    with pytest.raises(ValueError, match="fallback is disabled"):
        est.predict(X)
    # With the fallback the estimator still has centers and reports why FC failed.
    est2 = FriendlyCoreKMeans(3, n_tuples=100, preset="paper", random_state=1).fit(X)
    assert est2.cluster_centers_.shape == (3, 2) and est2.failure_ is not None


def test_bad_parameters(data) -> None:
    X, _ = data
    with pytest.raises(ValueError, match="'n_clusters' parameter of FriendlyCoreKMeans"):
        FriendlyCoreKMeans(0).fit(X)
    with pytest.raises(ValueError, match="'radius' parameter"):
        FriendlyCoreKMeans(3, radius=-1.0).fit(X)
    with pytest.raises(ValueError, match="features"):
        FriendlyCoreKMeans(3, n_tuples=60, random_state=0).fit(X).predict(np.zeros((2, 5)))
