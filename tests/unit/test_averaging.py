"""FriendlyAvg, FC_Avg and FC_Avg_UnknownDiam (Tsfadia et al. 2022, §3 and §5.1)."""

import math

import numpy as np
import pytest

from dpviz.averaging.fc_avg import fc_avg, fc_avg_unknown_diam
from dpviz.averaging.friendly_avg import friendly_avg, friendly_avg_core, friendly_avg_split
from dpviz.privacy.ledger import Ledger


def _by_name(ledger, prefix):
    return [s for _, s in ledger.spends() if s.name.startswith(prefix)]


def test_friendly_avg_constants_match_section_3():
    X = np.random.default_rng(0).normal(size=(500, 4))
    rho, delta, r = 0.7, 1e-6, 3.0
    res = friendly_avg(X, rho=rho, delta=delta, r=r, rng=0)
    (nh,) = _by_name(res.ledger, "n̂")
    (avg,) = _by_name(res.ledger, "Avg(D)")
    rho1 = 0.1 * (1 - delta) * rho
    # n̂ ~ N(n − √(ln(1/δ)/ρ₁) − 1, 1/(2ρ₁)); drawn with ρ₁ = 0.1(1−δ)ρ, charged 0.1ρ.
    assert nh.noise_scale == pytest.approx(math.sqrt(1 / (2 * rho1)), rel=1e-12)
    assert nh.budget.rho == pytest.approx(0.1 * rho, rel=1e-12)
    n_hat = res.step("friendly_avg").data["n_hat"]
    sigma = (2 * r / n_hat) / math.sqrt(2 * 0.9 * rho)
    assert avg.noise_scale == pytest.approx(sigma, rel=1e-12)
    assert avg.sensitivity == pytest.approx(2 * r / n_hat, rel=1e-12)
    assert res.step("friendly_avg").data["sigma"] == pytest.approx(sigma, rel=1e-12)
    assert res.ledger.total().rho == pytest.approx(rho) and res.ledger.total().delta == delta
    assert res.centers.shape == (1, 4)
    assert np.allclose(res.step("friendly_avg_nonprivate").data["mean"], X.mean(0))


def test_friendly_avg_n_hat_is_an_under_estimate_with_the_right_noise():
    n, rho, delta = 300, 0.5, 1e-3
    rho1 = 0.1 * (1 - delta) * rho
    rng = np.random.default_rng(1)
    X = np.zeros((n, 1))
    led = Ledger("x")
    n_hats = np.array([friendly_avg_core(X, rho=rho, delta=delta, r=1.0, rng=rng, ledger=led).n_hat
                       for _ in range(3000)])
    assert np.mean(n_hats) == pytest.approx(n - math.sqrt(math.log(1 / delta) / rho1) - 1, abs=0.3)
    assert np.std(n_hats) == pytest.approx(math.sqrt(1 / (2 * rho1)), rel=0.05)
    assert np.mean(n_hats > n) < 0.01


def test_friendly_avg_noise_std_matches_sigma_within_5_percent():
    X = np.zeros((1000, 2000))
    res = friendly_avg(X, rho=1.0, delta=1e-8, r=50.0, rng=7)
    sigma = res.step("friendly_avg").data["sigma"]
    assert np.std(res.centers[0]) == pytest.approx(sigma, rel=0.05)


def test_experiments_split_uses_only_the_public_n():
    rho, delta = 1.0, 1e-8
    split = friendly_avg_split(rho, delta, n_public=800)
    rho1 = (math.sqrt(math.log(1 / delta)) * rho / 800) ** (2 / 3)
    assert split.rho1_charge == pytest.approx(rho1) and split.rho2 == pytest.approx(rho - rho1)
    X = np.random.default_rng(2).normal(size=(100, 3))  # true n differs from the declared one
    res = friendly_avg(X, rho=rho, delta=delta, r=5.0, n_public=800, rng=0)
    (nh,) = _by_name(res.ledger, "n̂")
    assert nh.budget.rho == pytest.approx(rho1)
    assert nh.noise_scale == pytest.approx(math.sqrt(1 / (2 * (1 - delta) * rho1)))
    assert res.ledger.total().rho == pytest.approx(rho)


@pytest.mark.parametrize("n", [0, 3])
def test_friendly_avg_bottom_still_records_the_whole_budget(n):
    # n = 3 at ρ = 0.01: n̂ ≈ 3 − 136 − 1 < 0 → ⊥.
    res = friendly_avg(np.ones((n, 2)), rho=0.01, delta=1e-8, r=1.0, rng=0)
    assert res.centers is None and not res.ok
    assert res.failure == ("empty input (n = 0)" if n == 0 else "n̂ ≤ 0")
    assert res.ledger.total().rho == pytest.approx(0.01)
    assert res.ledger.total().delta == pytest.approx(1e-8)
    assert [s.mechanism for _, s in res.ledger.spends()] == ["gaussian", "event", "reserved"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(rho=-1.0), "'rho' parameter of friendly_avg.*\\(0, inf\\)"),
     (dict(delta=1.0), "'delta' parameter of friendly_avg.*\\(0, 1\\)"),
     (dict(delta=0.0), "'delta'"),
     (dict(r=-0.5), "'r' parameter of friendly_avg.*\\[0, 1e\\+100\\]"),
     (dict(r=math.inf), "'r'"),
     (dict(n_public=0), "'n_public'"),
     (dict(X=np.array([[1.0, np.inf]])), "'X'.*NaN or infinite"),
     (dict(X=np.zeros((3, 0))), "'X'.*at least one column"),
     (dict(X=np.zeros(3)), "'X'.*2-D")],
)
def test_friendly_avg_rejects_bad_parameters(kwargs, match):
    args = dict(X=np.zeros((3, 2)), rho=1.0, delta=1e-6, r=1.0)
    args.update(kwargs)
    X = args.pop("X")
    with pytest.raises(ValueError, match=match):
        friendly_avg(X, **args)


def test_friendly_avg_is_reproducible_with_a_seed():
    X = np.random.default_rng(3).normal(size=(50, 2))
    a = friendly_avg(X, rho=1.0, delta=1e-6, r=5.0, rng=11)
    b = friendly_avg(X, rho=1.0, delta=1e-6, r=5.0, rng=11)
    assert np.array_equal(a.centers, b.centers) and a.seed == 11


# --- FC_Avg and FC_Avg_UnknownDiam -----------------------------------------------------------

def _gaussian_data(n, d, seed):
    return np.random.default_rng(seed).normal(size=(n, d)) + 100.0


def test_fc_avg_budget_tree_and_constants():
    X = _gaussian_data(800, 10, 0)
    rho, delta = 1.0, 1e-8
    r = math.sqrt(2) * (math.sqrt(10) + math.sqrt(math.log(100 * 800)))
    res = fc_avg(X, rho=rho, delta=delta, r=r, rng=1)
    assert res.ok and res.centers.shape == (1, 10)
    names = [c.name for c in res.ledger.children]
    assert names == ["FriendlyCore(dist_r)", "FriendlyAvg"]
    fc, fa = res.ledger.children
    assert fc.total().rho == pytest.approx(0.1) and fc.total().delta == pytest.approx(delta / 2)
    assert fa.total().rho == pytest.approx(0.9) and fa.total().delta == pytest.approx(delta / 2)
    assert res.ledger.total().rho == pytest.approx(rho)
    assert res.ledger.total().delta == pytest.approx(delta)
    # FriendlyAvg inside FC_Avg: ρ₁ = 0.1(1 − δ/2)(0.9ρ), σ = (2r/n̂)/√(2·0.81ρ)
    (nh,) = _by_name(fa, "n̂")
    assert nh.noise_scale == pytest.approx(math.sqrt(1 / (2 * 0.1 * (1 - delta / 2) * 0.9)))
    n_hat = res.step("friendly_avg").data["n_hat"]
    (avg,) = _by_name(fa, "Avg(D)")
    assert avg.noise_scale == pytest.approx((2 * r / n_hat) / math.sqrt(2 * 0.81))
    thr = res.step("zcdp_filter").data["threshold"]
    nf = res.step("zcdp_filter").data["n_hat"]
    assert thr == pytest.approx(math.sqrt(nf * math.log(2 * nf / (delta / 2)) / (4 * 0.09)) + 0.5)
    assert res.step("friendly_avg").released and not res.step("mean_nonprivate").released
    # error close to the note's estimate for d = 10, n = 800 (σ ≈ 0.014·√10 noise + sampling)
    assert np.linalg.norm(res.centers[0] - 100.0) < 0.5


def test_fc_avg_drops_an_outlier_before_averaging():
    X = np.vstack([_gaussian_data(600, 2, 1), [[1e6, 1e6]]])
    res = fc_avg(X, rho=1.0, delta=1e-6, r=8.0, rng=0)
    keep = res.step("zcdp_filter").data["keep"]
    assert not keep[-1] and keep[:-1].sum() >= 590
    assert np.linalg.norm(res.centers[0] - 100.0) < 0.5


def test_fc_avg_empty_core_is_a_failure_with_the_full_budget():
    X = np.random.default_rng(2).normal(size=(100, 2)) * 1000.0  # r far too small
    res = fc_avg(X, rho=1.0, delta=1e-6, r=0.01, rng=0)
    assert res.failure == "empty core" and res.centers is None
    assert res.ledger.total().rho == pytest.approx(1.0)
    assert res.ledger.total().delta == pytest.approx(1e-6)
    empty = fc_avg(np.zeros((0, 3)), rho=1.0, delta=1e-6, r=1.0, rng=0)
    assert empty.failure == "empty core" and empty.ledger.total().rho == pytest.approx(1.0)


def test_fc_avg_unknown_diam_budget_and_estimate():
    X = _gaussian_data(1000, 5, 3)
    res = fc_avg_unknown_diam(X, rho=1.0, delta=1e-8, r_min=0.01, r_max=1e4, rng=4)
    assert [c.name for c in res.ledger.children] == ["FindDiam", "FC_Avg"]
    fd, fca = res.ledger.children
    assert fd.total().rho == pytest.approx(0.1) and fd.total().delta == 0.0
    assert fca.total().rho == pytest.approx(0.9) and fca.total().delta == pytest.approx(1e-8)
    assert res.ledger.total().rho == pytest.approx(1.0)
    assert res.ledger.total().delta == pytest.approx(1e-8)
    # FindDiam with β/2 and b = 1.5: q = ⌈log2(⌈log_1.5(1e6)⌉ + 1)⌉ = ⌈log2 36⌉ = 6 calls of ρ/60
    assert res.step("find_diam").data["q"] == 6
    probes = res.step("find_diam_probes").data["probes"]
    for p in probes:
        assert p["threshold"] == pytest.approx(1000 - math.sqrt(4 * math.log(6 / 0.025) / (0.1 / 6)))
    r = res.step("find_diam").data["r"]
    assert 2.0 < r < 15.0
    assert res.ok and np.linalg.norm(res.centers[0] - 100.0) < 0.5
    names = [s.name for s in res.trace]
    assert names[:2] == ["find_diam", "find_diam_probes"] and "friendly_avg" in names


@pytest.mark.parametrize(
    ("func", "kwargs", "match"),
    [(fc_avg, dict(rho=0.0, delta=1e-6, r=1.0), "'rho' parameter of fc_avg"),
     (fc_avg, dict(rho=1.0, delta=-1e-6, r=1.0), "'delta' parameter of fc_avg"),
     (fc_avg, dict(rho=1.0, delta=1e-6, r=-1.0), "'r' parameter of fc_avg"),
     (fc_avg_unknown_diam, dict(rho=1.0, delta=1e-6, r_min=0.0, r_max=1.0), "'r_min'"),
     (fc_avg_unknown_diam, dict(rho=1.0, delta=1e-6, r_min=2.0, r_max=1.0), "at least r_min"),
     (fc_avg_unknown_diam, dict(rho=1.0, delta=1e-6, r_min=1.0, r_max=2.0, beta=0.0), "'beta'")],
)
def test_fc_avg_rejects_bad_parameters(func, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(np.zeros((5, 2)), **kwargs)


@pytest.mark.parametrize("X", [np.zeros((5, 2, 1)), np.zeros(5), np.array([[np.nan, 1.0]])])
def test_fc_avg_rejects_bad_data(X):
    with pytest.raises(ValueError, match="'X' parameter of fc_avg"):
        fc_avg(X, rho=1.0, delta=1e-6, r=1.0)
    with pytest.raises(ValueError, match="'X' parameter of fc_avg_unknown_diam"):
        fc_avg_unknown_diam(X, rho=1.0, delta=1e-6, r_min=0.1, r_max=1.0)


def test_fc_avg_experiments_split_from_a_declared_n():
    X = _gaussian_data(300, 3, 5)
    res = fc_avg(X, rho=1.0, delta=1e-8, r=8.0, n_public=800, rng=0)
    (nh,) = _by_name(res.ledger.children[1], "n̂")
    rho1 = (math.sqrt(math.log(1 / 0.5e-8)) * 0.9 / 800) ** (2 / 3)  # FriendlyAvg has 0.9ρ, δ/2
    assert nh.budget.rho == pytest.approx(rho1)
    assert res.ledger.total().rho == pytest.approx(1.0)


def test_fc_avg_sampled_mode_warns_and_keeps_the_budget():
    from dpviz.core.predicates import SketchPrivacyWarning

    X = _gaussian_data(2000, 2, 6)
    with pytest.warns(SketchPrivacyWarning, match=r"App\. B"):
        res = fc_avg(X, rho=1.0, delta=1e-6, r=8.0, sampled=True, rng=0)
    assert res.ok and res.step("zcdp_filter").data["m"] < 2000
    assert res.ledger.total().rho == pytest.approx(1.0)
    assert res.ledger.total().delta == pytest.approx(1e-6)


@pytest.mark.parametrize("name", ["friendly_avg", "fc_avg", "fc_avg_unknown_diam", "check_diam",
                                  "find_diam", "coinpress_mean"])
def test_public_algorithms_document_privacy_and_references(name):
    import dpviz.averaging as avg

    doc = getattr(avg, name).__doc__
    assert "Privacy\n    -------" in doc and "References\n    ----------" in doc
