"""FriendlyCore (zCDPFilter) and FriendlyCoreDP (BasicFilter) end to end."""

import math

import numpy as np
import pytest

from dpviz.core.friendlycore import friendly_core, friendly_core_dp
from dpviz.core.predicates import DistR, SketchPrivacyWarning
from dpviz.privacy.accounting import row_level_statement


def _ball(n, d, radius, rng):
    u = rng.normal(size=(n, d))
    return u / np.linalg.norm(u, axis=1, keepdims=True) * radius * rng.random((n, 1)) ** (1 / d)


def test_complete_dataset_keeps_its_whole_core_in_99_percent_of_runs():
    # All 800 points lie within distance 2 of each other (ball of radius 1) and r = 2:
    # dist_r-complete; the expected filter margin at ρ = 0.1, δ = 1e-8 is ≈ 4.5 sd (§4.4).
    rng = np.random.default_rng(0)
    X = _ball(800, 3, 1.0, rng)
    counts = DistR(2.0).cross_counts(X, X)
    assert np.all(counts == 800)

    class Cached:  # the same dist_r counts, computed once (keeps 200 runs fast)
        name = "dist_r (r=2)"

        def cross_counts(self, A, B):
            return counts

    full = sum(friendly_core(X, Cached(), 0.1, 1e-8, rng=rng).step("core").data["size"] == 800
               for _ in range(200))
    assert full >= 198


def test_a_far_outlier_is_dropped():
    rng = np.random.default_rng(1)
    X = np.vstack([_ball(400, 2, 1.0, rng), [[50.0, 50.0]]])
    res = friendly_core(X, 2.0, 0.5, 1e-6, rng=rng)
    keep = res.step("zcdp_filter").data["keep"]
    assert not keep[-1] and keep[:-1].all()
    assert res.step("zcdp_filter").data["counts"][-1] == 1
    assert 400 not in res.step("core").data["index"]


def test_trace_and_ledger():
    rng = np.random.default_rng(2)
    X = _ball(300, 2, 1.0, rng)
    res = friendly_core(X, 2.0, 0.3, 1e-5, rng=3)
    f = res.step("zcdp_filter")
    assert not f.released and not res.step("core").released
    assert set(f.data) >= {"counts", "scores", "noisy_scores", "threshold", "n_hat", "keep"}
    assert np.array_equal(f.data["scores"], f.data["counts"] - 150.0)
    n_hat = f.data["n_hat"]
    assert f.data["threshold"] == pytest.approx(
        math.sqrt(n_hat * math.log(2 * n_hat / 1e-5) / (4 * 0.27)) + 0.5)
    assert res.centers is None and res.ok
    assert res.ledger.total().rho == pytest.approx(0.3) and res.ledger.total().delta == 1e-5


def test_empty_input_is_an_empty_core_failure_with_full_ledger():
    res = friendly_core(np.zeros((0, 2)), 1.0, 0.5, 1e-6, rng=0)
    assert res.failure == "empty core" and res.step("core").data["size"] == 0
    assert res.ledger.total().rho == pytest.approx(0.5) and res.ledger.total().delta == 1e-6


def test_duplicates_are_fine():
    res = friendly_core(np.ones((500, 2)), 0.0, 1.0, 1e-6, rng=0)
    assert res.step("core").data["size"] == 500


def test_sampled_mode_warns_splits_delta_and_keeps_a_complete_set():
    rng = np.random.default_rng(4)
    X = _ball(3000, 2, 1.0, rng)
    with pytest.warns(SketchPrivacyWarning, match=r"no proven guarantee \(App. B"):
        res = friendly_core(X, 2.0, 1.0, 1e-6, rng=rng, sampled=True, xi=0.1)
    f = res.step("zcdp_filter")
    assert "App. B" in f.note and f.data["m"] == math.ceil(math.log(3000 / 0.5e-6) / 0.02)
    # the filter saw z̃ = w̃ − (1/2 + ξ)n
    assert np.allclose(f.data["scores"], f.data["w_tilde"] - 0.6 * 3000)
    assert res.step("core").data["size"] == 3000
    events = [s for _, s in res.ledger.spends() if s.mechanism == "event"]
    assert sorted(e.budget.delta for e in events) == [0.5e-6, 0.5e-6]
    assert any("App. B" in e.note for e in events)
    assert res.ledger.total().rho == pytest.approx(1.0) and res.ledger.total().delta == 1e-6
    # No proven guarantee (issue 10, finding 8): kept out of every privacy statement.
    assert not res.ledger.has_guarantee()
    with pytest.raises(ValueError, match="no proven guarantee"):
        row_level_statement(res.ledger, 1e-6)


def test_custom_predicate_object():
    class SameSign:
        name = "same sign"

        def cross_counts(self, X, Y):
            return (np.sign(X[:, None, 0]) == np.sign(Y[None, :, 0])).sum(1)

    X = np.concatenate([np.full((900, 1), 1.0), np.full((100, 1), -1.0)])
    res = friendly_core(X, SameSign(), 1.0, 1e-6, rng=0)
    keep = res.step("zcdp_filter").data["keep"]
    assert keep[:900].all() and not keep[900:].any()
    assert res.params["predicate"] == "same sign"


def test_friendly_core_dp_basic_filter():
    rng = np.random.default_rng(5)
    X = np.vstack([_ball(100, 2, 1.0, rng), [[30.0, 0.0]]])
    res = friendly_core_dp(X, 2.0, alpha=0.1, rng=0)
    b = res.step("basic_filter")
    n = 101
    assert np.allclose(b.data["probabilities"], np.clip((b.data["counts"] - n / 2) / (0.4 * n), 0, 1))
    assert b.data["keep"][:100].all() and not b.data["keep"][100]
    assert res.ledger.total().rho == 0.0 and res.ledger.budget is None
    assert friendly_core_dp(np.zeros((0, 2)), 1.0).failure == "empty core"


@pytest.mark.parametrize(
    ("args", "match"),
    [((np.zeros((3, 2)), -1.0, 1.0, 1e-6), "'predicate' parameter of friendly_core"),
     ((np.zeros((3, 2)), 1.0, 0.0, 1e-6), r"'rho'.*\(0, inf\)"),
     ((np.zeros((3, 2)), 1.0, 1.0, 1.5), r"'delta'.*\(0, 1\)"),
     ((np.zeros(3), 1.0, 1.0, 1e-6), "'X'.*2-D"),
     ((np.array([[np.nan, 0.0]]), 1.0, 1.0, 1e-6), "'X'.*NaN")],
)
def test_friendly_core_rejects_bad_parameters(args, match):
    with pytest.raises(ValueError, match=match):
        friendly_core(*args)


def test_bad_xi_and_alpha():
    with pytest.raises(ValueError, match="'xi'"):
        friendly_core(np.zeros((3, 2)), 1.0, 1.0, 1e-6, sampled=True, xi=0.7)
    with pytest.raises(ValueError, match=r"'alpha'.*\[0, 0.5\)"):
        friendly_core_dp(np.zeros((3, 2)), 1.0, alpha=0.5)


@pytest.mark.parametrize("func", [friendly_core, friendly_core_dp])
def test_public_algorithms_document_privacy_and_references(func):
    assert "Privacy\n    -------" in func.__doc__ and "References\n    ----------" in func.__doc__
