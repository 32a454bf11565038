"""CoinPress mean estimation (Biswas, Dong, Kamath & Ullman 2020): budget, scales, accuracy."""

import math

import numpy as np
import pytest

from dpviz.averaging.coinpress import coinpress_mean, coinpress_rho_schedule


def _tail(d, beta):
    return math.sqrt(d + 2 * math.sqrt(d * math.log(1 / beta)) + 2 * math.log(1 / beta))


def test_schedule_quarter_then_three_quarters():
    assert coinpress_rho_schedule(1.0, 1) == [1.0]
    assert coinpress_rho_schedule(1.0, 4) == pytest.approx([1 / 12, 1 / 12, 1 / 12, 0.75])
    assert sum(coinpress_rho_schedule(0.3, 40)) == pytest.approx(0.3)


def test_each_iteration_is_recorded_with_its_noise_scale():
    rng = np.random.default_rng(0)
    n, d, R, rho, beta = 500, 20, 100.0, 0.5, 0.01
    X = rng.normal(size=(n, d)) + 3.0
    res = coinpress_mean(X, rho=rho, R=R, iters=3, beta=beta, rng=1)
    spends = [s for _, s in res.ledger.spends()]
    steps = res.steps("coinpress_iter")
    assert len(spends) == len(steps) == 3
    r = R
    for s, st, rho_t in zip(spends, steps, [rho / 8, rho / 8, 0.75 * rho], strict=True):
        gamma = _tail(d, beta / n)
        clip = min(r + gamma, math.sqrt(r**2 + 2 * r * math.sqrt(2 * math.log(2 * n / beta)) + gamma**2))
        assert st.data["clip"] == pytest.approx(clip)
        assert s.budget.rho == pytest.approx(rho_t)
        assert s.sensitivity == pytest.approx(2 * clip / n)
        assert s.noise_scale == pytest.approx(2 * clip / n / math.sqrt(2 * rho_t))
        r = math.sqrt(1 / n + s.noise_scale**2) * _tail(d, beta)
        assert st.data["r_out"] == pytest.approx(r)
    assert res.ledger.total().rho == pytest.approx(rho) and res.ledger.total().delta == 0.0
    assert steps[-1].data["r_out"] < steps[0].data["r_out"] < R


def test_accurate_for_a_small_ball_and_worse_for_a_huge_one():
    rng = np.random.default_rng(2)
    d, n = 50, 2000
    X = rng.normal(size=(n, d))
    small = coinpress_mean(X, rho=1.0, R=10 * math.sqrt(d), iters=4, rng=3).centers[0]
    huge = coinpress_mean(X, rho=1.0, R=1e9, iters=4, rng=3).centers[0]
    assert np.linalg.norm(small) < 0.6
    assert np.linalg.norm(huge) > 10 * np.linalg.norm(small)


def test_center_and_reproducibility():
    X = np.random.default_rng(4).normal(size=(300, 3)) + 50.0
    a = coinpress_mean(X, rho=1.0, R=5.0, c=np.full(3, 48.0), rng=9)
    b = coinpress_mean(X, rho=1.0, R=5.0, c=np.full(3, 48.0), rng=9)
    assert np.array_equal(a.centers, b.centers) and a.centers.shape == (1, 3)
    assert np.linalg.norm(a.centers[0] - 50.0) < 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [(dict(rho=0.0), "'rho' parameter of coinpress_mean"), (dict(R=0.0), "'R'"),
     (dict(iters=0), "'iters'.*an int"), (dict(iters=2.5), "'iters'"),
     (dict(beta=1.0), "'beta'"), (dict(c=np.zeros(3)), "'c'.*shape \\(2,\\)"),
     (dict(X=np.zeros((0, 2))), "'X'.*at least one row"), (dict(X=np.zeros(4)), "'X'.*2-D")],
)
def test_rejects_bad_parameters(kwargs, match):
    args = dict(X=np.zeros((5, 2)), rho=1.0, R=1.0)
    args.update(kwargs)
    X = args.pop("X")
    with pytest.raises(ValueError, match=match):
        coinpress_mean(X, **args)
