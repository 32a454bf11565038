"""The n axis of the sweep engine and the row-level budget of a sweep name (``dpviz.sweeps.resolve``
→ ``dpviz.registry.plan``).

The sweep engine itself (stages shared, seeds, cancellation, the ρ and ε axes) is tested in
test_compare.py. (Noise redraws, once ``run_repeats`` here, are the app runner's re-draws:
``app.components.simulation.run(draw=i)``.)
"""


import pytest
from _viz_fakes import blobs

import dpviz.sweeps as ex

X, _ = blobs(300)


@pytest.mark.slow
def test_the_n_axis_has_one_block_per_n():
    """dpviz.sweeps.sweep_n: one sweep per size, the data made by the caller's recipe."""
    from dpviz.sweeps import sweep_n

    sw = sweep_n(lambda n, rng: blobs(n, seed=int(rng.integers(100)))[0], [150, 300], 3,
                 algorithms=["dp_lloyd", "kmeans++"], epsilons=[2.0], reps=2, delta=1e-6,
                 radius=1.0, rng=1)
    assert sorted(sw.frame["n"].unique()) == [150, 300]
    assert len(sw.frame) == 2 * 2 * 2 and sw.complete
    lloyd = sw.frame[sw.frame.algorithm == "dp_lloyd"]
    assert (lloyd["guarantee_eps"] <= 2.0 * (1 + 1e-9)).all() and lloyd["released"].all()


def test_row_level_sweep_calibrates_every_algorithm_to_the_same_target():
    """Issue 10, finding 6: at one row-level (ε, δ) each algorithm gets its own budget, and the
    calibrated budget's row-level guarantee is within the target (FC through group privacy)."""
    from dpviz.privacy.accounting import approx_zcdp_to_dp
    from dpviz.privacy.budget import ZCDP
    from dpviz.registry import Public, calibrate, get, plan

    eps, delta = 3.0, 1e-6
    pub = Public(20_000, 2, 8, 1.0)
    fc_spec, fc_params = ex.resolve("fc:practical", {"n_tuples": 200, "r_min": 1e-3, "oracle": "kmeans++"})
    fc = plan(fc_spec, eps, delta, pub, fc_params)  # the sweep's name → the registry's one plan
    fc_rho, fc_delta = fc.budget.rho, fc.budget.delta
    ll_rho = plan("dp_lloyd", eps, delta, pub).budget.rho
    dpl = plan("diffprivlib", eps, delta, pub)
    spec = get("friendlycore")
    cal = calibrate(spec, eps, delta, Public(20_000, 2, 8, 1.0),
                    spec.make_params(n_tuples=200, r_min=1e-3))
    assert cal.budget == ZCDP(fc_rho, fc_delta)
    g = spec.guarantee(cal.budget, Public(20_000, 2, 8, 1.0), spec.make_params(n_tuples=200, r_min=1e-3),
                       cal.delta_prime)  # re-accounted independently from the budget
    assert g.eps <= eps * (1 + 1e-9) and g.delta <= delta * (1 + 1e-9)
    assert g.eps > 0.99 * eps  # the bisection uses the target, it does not waste it
    assert approx_zcdp_to_dp(ZCDP(ll_rho, 0.0), delta).eps == pytest.approx(eps, rel=1e-4)
    assert dpl.budget.eps == pytest.approx(eps) and dpl.guarantee.eps == pytest.approx(eps)  # at ε itself
    # Equal nominal ρ was unfair: FC needs a far smaller ρ for the same per-row guarantee.
    assert fc_rho < ll_rho / 3

