"""The algorithm registry: specs, row-level calibration, dpviz.run, discovery of a new family."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import dpviz
from dpviz.data import fig6_blobs
from dpviz.privacy.accounting import row_level_statement
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace
from dpviz.registry import AlgorithmSpec, Public, calibrate, check_hinted, get, hint, register, unregister
from dpviz.result import Result, Trace

EPS, DELTA = 3.0, 1e-6


@pytest.fixture(scope="module")
def blobs():
    return fig6_blobs(20_000, rng=0)


def test_builtin_algorithms_are_registered():
    names = [a.name for a in dpviz.algorithms()]
    assert {"friendlycore", "dp_lloyd", "diffprivlib", "kmeans++"} <= set(names)
    private = [a.name for a in dpviz.algorithms(private_only=True)]
    assert "kmeans++" not in private and "friendlycore" in private
    for spec in dpviz.algorithms():
        assert spec.title and spec.paper


@pytest.mark.parametrize("eps", [1.0, 3.0, 10.0])
@pytest.mark.parametrize("name", ["friendlycore", "dp_lloyd", "diffprivlib"])
def test_calibration_meets_the_target_tightly(name, eps):
    spec = get(name)
    cal = calibrate(spec, eps, DELTA, Public(100_000, 2, 8, 1.0), spec.make_params())
    assert cal.guarantee.eps <= eps * (1 + 1e-12)
    assert cal.guarantee.delta <= DELTA
    assert cal.guarantee.eps >= eps * (1 - 1e-4)  # the budget is not left on the table


def test_friendlycore_calibration_goes_through_group_privacy():
    """At the same row-level ε, FC gets a smaller ρ than DP-Lloyd (its tuple stage pays 2×)."""
    pub = Public(100_000, 2, 8, 1.0)
    fc = calibrate(get("friendlycore"), EPS, DELTA, pub, get("friendlycore").make_params())
    lloyd = calibrate(get("dp_lloyd"), EPS, DELTA, pub, get("dp_lloyd").make_params())
    assert fc.budget.rho < lloyd.budget.rho / 3


def test_friendlycore_run_ledger_gives_the_calibrated_guarantee(blobs):
    """The guarantee from the public split equals the statement of the ledger the run recorded."""
    res = dpviz.run("friendlycore", blobs.X, 8, epsilon=EPS, delta=DELTA, radius=1.0, rng=0,
                    n_declared=blobs.X.shape[0])
    assert res.algorithm == "friendlycore"
    spec = get("friendlycore")
    cal = calibrate(spec, EPS, DELTA, Public(blobs.X.shape[0], 2, 8, 1.0), spec.make_params())
    stmt = row_level_statement(res.ledger, cal.delta_prime)
    assert stmt.row.eps == pytest.approx(res.guarantee.eps, rel=1e-9)
    assert stmt.row.delta == pytest.approx(res.guarantee.delta, rel=1e-9)
    assert res.guarantee.eps <= EPS and res.guarantee.delta <= DELTA
    assert res.ledger.total().rho == pytest.approx(cal.budget.rho, rel=1e-9)


@pytest.mark.parametrize("name", ["dp_lloyd", "diffprivlib", "kmeans++"])
def test_run_every_baseline(blobs, name):
    res = dpviz.run(name, blobs.X, 8, epsilon=EPS, delta=DELTA, radius=1.0, rng=1,
                    n_declared=blobs.X.shape[0])
    assert res.algorithm == name and res.centers.shape == (8, 2)
    if name == "kmeans++":
        assert res.guarantee is None
    else:
        assert res.guarantee.eps <= EPS and res.guarantee.delta <= DELTA


def test_undeclared_size_buys_a_dp_count(blobs):
    res = dpviz.run("dp_lloyd", blobs.X, 8, epsilon=EPS, delta=DELTA, radius=1.0, rng=2)
    spends = [s for _, s in res.ledger.spends() if s.mechanism == "laplace"]
    assert len(spends) == 1 and spends[0].budget == ApproxDP(0.02 * EPS, 0.0)
    assert spends[0].noise_scale == pytest.approx(1.0 / (0.02 * EPS))
    assert res.guarantee.eps <= EPS * (1 + 1e-12)
    assert abs(res.params["n_declared"] - blobs.X.shape[0]) < 200  # Laplace(1/0.06): sd 24


def test_errors_are_clear(blobs):
    with pytest.raises(ValueError, match="Unknown algorithm 'nope'"):
        dpviz.run("nope", blobs.X, 8, epsilon=1, delta=1e-6, radius=1.0)
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['bogus'\]"):
        dpviz.run("friendlycore", blobs.X, 8, epsilon=1, delta=1e-6, radius=1.0, bogus=3)
    with pytest.raises(ValueError, match="cannot meet the row-level target"):
        dpviz.run("friendlycore", blobs.X, 8, epsilon=1, delta=0.0, radius=1.0, n_declared=20_000)
    with pytest.raises(ValueError, match="'preset' parameter of FriendlyCore must be one of"):
        dpviz.run("friendlycore", blobs.X, 8, epsilon=1, delta=1e-6, radius=1.0, preset="fast")
    with pytest.raises(ValueError, match="'epsilon' parameter"):
        dpviz.run("dp_lloyd", blobs.X, 8, epsilon=-1, delta=1e-6, radius=1.0)
    with pytest.raises(ValueError, match="states no row-level guarantee"):
        AlgorithmSpec(name="x", title="x", paper="x", budget_kind="pure", params=_ToyParams,
                      private=_toy_private)


# ----------------------------------------------------------------------------- a toy family


@dataclass(frozen=True)
class _ToyParams:
    shift: float = field(default=0.0, metadata=hint(low=-1.0, high=1.0, help="added to every center"))

    def __post_init__(self) -> None:
        check_hinted(self, "toy")


def _toy_private(X, k, budget, *, radius, rng, pub, params, stage=None) -> Result:
    """Noisy mean of the clipped rows, repeated k times (ε-DP, Laplace per coordinate)."""
    ledger = Ledger("toy", budget.to_zcdp())
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    Xc = X * np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    total = laplace(Xc.sum(axis=0), sensitivity=radius * X.shape[1] ** 0.5, eps=budget.eps, rng=rng,
                    ledger=ledger, name="sum")
    trace = Trace()
    trace.add("toy_sum", released=True, total=total)
    centers = np.tile(total / pub.n_declared + params.shift, (k, 1))
    return Result(centers, None, ledger, trace.freeze(), {"k": k})


@pytest.fixture
def toy():
    spec = register(AlgorithmSpec(
        name="toy", title="Toy mean", paper="none", budget_kind="pure", params=_ToyParams,
        private=_toy_private, guarantee=lambda b, pub, p, dp: ApproxDP(b.eps, 0.0), steps=("toy_sum",)))
    yield spec
    unregister("toy")


def test_a_toy_family_registered_in_a_test_runs_through_the_public_call(toy, blobs):
    assert "toy" in [a.name for a in dpviz.algorithms()]
    res = dpviz.run("toy", blobs.X, 3, epsilon=2.0, delta=0.0, radius=1.0, rng=0, n_declared=20_000,
                    shift=0.5)
    assert res.algorithm == "toy" and res.guarantee == ApproxDP(2.0, 0.0)
    assert res.centers.shape == (3, 2) and res.find("toy_sum").released
    assert res.find("missing") is None
    with pytest.raises(ValueError, match="already registered"):
        register(AlgorithmSpec(name="toy", title="t", paper="p", budget_kind="none",
                               params=_ToyParams, private=_toy_private))


def test_zcdp_budget_kinds_and_stage_fields_are_checked():
    with pytest.raises(ValueError, match="stage_fields"):
        AlgorithmSpec(name="y", title="y", paper="y", budget_kind="none", params=_ToyParams,
                      private=_toy_private, stage_fields=("nope",))
    with pytest.raises(ValueError, match="lowercase key"):
        AlgorithmSpec(name="Bad Name", title="y", paper="y", budget_kind="none", params=_ToyParams,
                      private=_toy_private)
    assert get("friendlycore").stage_key(get("friendlycore").make_params(n_tuples=50)) == (
        ("n_tuples", 50), ("oracle", "kmeans++"))
    assert isinstance(calibrate(get("dp_lloyd"), 1.0, 1e-6, Public(1000, 2, 3, 1.0),
                                get("dp_lloyd").make_params()).budget, ZCDP)


def test_auto_tuples_grow_with_the_declared_size():
    from dpviz.clustering.friendlycore.spec import MAX_AUTO_TUPLES, auto_n_tuples

    assert auto_n_tuples(20_000, 8) == 200  # the paper's t while pieces hold ≥ 10k rows
    assert auto_n_tuples(25_600, 8) == 200  # 16 rows per cluster: 25_600 / 128 = 200
    assert auto_n_tuples(1_000, 8) == 12
    assert auto_n_tuples(200_000, 8) == 1562  # 16 rows per cluster (issue 33)
    assert auto_n_tuples(10**6, 8) == MAX_AUTO_TUPLES == 5000
    assert auto_n_tuples(10**9, 8) == MAX_AUTO_TUPLES


@pytest.mark.parametrize("name", [s.name for s in dpviz.algorithms(private_only=True)])
def test_huge_epsilon_is_a_result_or_a_clear_error_never_an_overflow(name):
    """ε up to MAX_EPSILON runs (e^ε overflowed in the δ allocation above ε ≈ 709); beyond, a ValueError."""
    from dpviz._validation import MAX_EPSILON

    X = np.random.default_rng(0).normal(size=(300, 2))
    res = dpviz.run(name, X, 3, epsilon=MAX_EPSILON, delta=1e-6, radius=5.0, rng=0, n_declared=300)
    assert res.guarantee.eps <= MAX_EPSILON and res.guarantee.delta <= 1e-6
    with pytest.raises(ValueError, match="'epsilon' parameter"):
        dpviz.run(name, X, 3, epsilon=1e300, delta=1e-6, radius=5.0, rng=0, n_declared=300)
