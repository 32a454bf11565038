"""The spatial sign covariance and mean distance releases of rc_lloyd's sign start (issue 44)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.clustering.sign_axes import mean_distance, sign_axes, spatial_signs
from dpviz.privacy.accounting import row_level_statement, zcdp_to_dp
from dpviz.privacy.audit import sequential_audit
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger

#: The audits' data and runs draw from different keys (never one integer for both).
DATA_SEQ = np.random.SeedSequence(44, spawn_key=(0,))


def _run_rng(j: int, i: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(44, spawn_key=(1, j, i)))


def _ledger(rho: float) -> Ledger:
    return Ledger("test", ZCDP(rho, 0.0))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=8))
def test_one_sign_term_has_upper_triangle_norm_at_most_one(x):
    """The sensitivity of Σ uuᵀ's upper triangle: Σ_{i≤j} (u_i u_j)² ≤ ‖u‖⁴ = 1, and 0 at the center;
    also for rows whose squared norm underflows (x = (0, 1e-160) once gave ‖u‖ = 1.00001)."""
    u = spatial_signs(np.array([x]), np.zeros(len(x)))[0]
    iu = np.triu_indices(len(x))
    assert np.linalg.norm(np.outer(u, u)[iu]) <= 1.0 + 1e-12
    if np.any(x):
        assert np.linalg.norm(u / np.max(np.abs(u))) * np.max(np.abs(u)) == pytest.approx(1.0, abs=1e-12)
    else:
        assert not np.any(u)


@pytest.mark.parametrize("tiny", [1e-160, 1e-200, 5e-324, 1e300])
def test_signs_of_rows_next_to_or_far_from_the_center_are_unit(tiny):
    u = spatial_signs(np.array([[0.0, tiny], [tiny, tiny]]), np.zeros(2))
    np.testing.assert_allclose(u, [[0.0, 1.0], [2**-0.5, 2**-0.5]], rtol=1e-15)


def test_a_row_at_the_center_adds_nothing():
    U = spatial_signs(np.array([[1.0, 2.0], [0.5, 0.5], [3.0, 2.0]]), np.array([0.5, 0.5]))
    assert U[1].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(np.linalg.norm(U[[0, 2]], axis=1), 1.0, rtol=1e-15)


def test_noise_scales_and_the_edge_are_exact():
    X = np.random.default_rng(0).uniform(-1, 1, (50, 3))
    led = _ledger(0.3)
    _, _, edge = sign_axes(X, np.zeros(3), 2, rho=0.2, n_declared=50, rng=np.random.default_rng(1),
                           ledger=led)
    mean_distance(X, np.zeros(3), 1.7, rho=0.1, n_declared=50, rng=np.random.default_rng(2), ledger=led)
    (_, cov), (_, dist) = led.spends()
    assert cov.sensitivity == 1.0 and cov.noise_scale == pytest.approx(1 / math.sqrt(0.4), rel=1e-12)
    assert dist.sensitivity == pytest.approx(3.4, rel=1e-15)
    assert dist.noise_scale == pytest.approx(3.4 / math.sqrt(0.2), rel=1e-12)
    assert edge == pytest.approx(2 * math.sqrt(3) / math.sqrt(0.4) / 50, rel=1e-12)
    assert led.total().rho == pytest.approx(0.3, rel=1e-12)


def test_at_a_large_budget_the_axes_and_the_distance_are_the_datas():
    gen = np.random.default_rng(3)
    X = np.column_stack([gen.uniform(-1, 1, 4000), 0.1 * gen.standard_normal((4000, 2))])
    led = _ledger(2e6)
    lam, axes, _ = sign_axes(X, np.zeros(3), 2, rho=1e6, n_declared=4000, rng=np.random.default_rng(4),
                             ledger=led)
    s = mean_distance(X, np.zeros(3), 2.0, rho=1e6, n_declared=4000, rng=np.random.default_rng(5), ledger=led)
    assert abs(axes[0, 0]) > 0.999 and lam[0] > 0.7 and lam.sum() <= 1.0 + 1e-3
    assert s == pytest.approx(np.linalg.norm(X, axis=1).mean(), rel=1e-3)


def test_audit_of_the_sign_release():
    """D′ adds one row along e2 to rows along e1: Σ uuᵀ's (2, 2) entry moves by 1, the most one row
    can move it. The second eigenvalue's threshold events must not show more than the claimed ε
    (α = 0.05 over both events; seeded, so the verdict is reproducible)."""
    rho, delta_prime, n = 0.05, 1e-6, 300
    gen = np.random.default_rng(DATA_SEQ)
    X = np.column_stack([gen.choice([-0.5, 0.5], n), np.zeros(n)])
    data = (X, np.vstack([X, [[0.0, 0.9]]]))

    def run(j: int, i: int) -> float:
        lam, _, _ = sign_axes(data[j], np.zeros(2), 2, rho=rho, n_declared=n,
                              rng=_run_rng(j, i), ledger=_ledger(rho))
        return float(lam[1])

    led = _ledger(rho)
    sign_axes(X, np.zeros(2), 2, rho=rho, n_declared=n, rng=_run_rng(9, 9), ledger=led)
    claimed = row_level_statement(led, delta_prime).row
    assert claimed.eps == pytest.approx(zcdp_to_dp(rho, delta_prime))
    events = [lambda v: v > 0.0, lambda v: v > 5.0 / n]

    def hits(j: int, i: int) -> list[bool]:
        v = run(j, i)
        return [bool(e(v)) for e in events]

    audit = sequential_audit(hits, len(events), claim_eps=claimed.eps, max_runs=1500, delta=claimed.delta,
                             alpha=0.05)
    assert not audit.leak


def test_the_same_audit_flags_a_sign_release_noised_for_a_twentieth_of_its_sensitivity(monkeypatch):
    """The audit above can fail: with σ computed for sensitivity 1/20 it finds a leak."""
    import dpviz.clustering.gauss_fit as gf
    import dpviz.clustering.sign_axes as sa

    real = gf.gaussian  # the release is gauss_fit.noisy_symmetric's Gaussian mechanism
    monkeypatch.setattr(gf, "gaussian",
                        lambda v, sensitivity, **kw: real(v, sensitivity=sensitivity / 20, **kw))
    rho, delta_prime, n = 0.05, 1e-6, 300
    gen = np.random.default_rng(DATA_SEQ)
    X = np.column_stack([gen.choice([-0.5, 0.5], n), np.zeros(n)])
    data = (X, np.vstack([X, [[0.0, 0.9]]]))

    def hits(j: int, i: int) -> list[bool]:
        lam, _, _ = sa.sign_axes(data[j], np.zeros(2), 2, rho=rho, n_declared=n,
                                 rng=_run_rng(j, i), ledger=_ledger(rho))
        return [bool(lam[1] > 0.0), bool(lam[1] > 0.5 / n)]

    audit = sequential_audit(hits, 2, claim_eps=zcdp_to_dp(rho, delta_prime), max_runs=1500,
                             delta=delta_prime, alpha=0.05)
    assert audit.leak
