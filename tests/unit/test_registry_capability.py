"""The registry says which data each algorithm serves (issue 26: a capability-aware registry)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpviz
from dpviz.registry import AlgorithmSpec, DataShape, applicability, get, register, unregister


def test_private_gmm_1d_is_registered_by_default_and_serves_one_column_only():
    assert "private_gmm_1d" in [s.name for s in dpviz.algorithms()]
    one = [s.name for s in dpviz.algorithms(applicable_to=1)]
    two = [s.name for s in dpviz.algorithms(applicable_to=DataShape(d=2))]
    assert "private_gmm_1d" in one and "private_gmm_1d" not in two
    assert "friendlycore" in one and "friendlycore" in two


def test_applicability_gives_a_reason_for_every_algorithm_left_out():
    rows = applicability(DataShape(d=2), private_only=True)
    assert [s.name for s, _ in rows] == [s.name for s in dpviz.algorithms(private_only=True)]
    reasons = {s.name: why for s, why in rows}
    assert reasons["private_gmm_1d"] == ("Private univariate GMM (gap histogram + hypothesis selection) "
                                         "serves d = 1 data; these rows have d = 2.")
    served = {s.name for s in dpviz.algorithms(private_only=True, applicable_to=2)}
    assert served == {name for name, why in reasons.items() if why is None}


def test_budget_kinds_filter_names_the_kind():
    shape = DataShape(d=2, budget_kinds=("zcdp", "pure"))
    kinds = {s.budget_kind for s in dpviz.algorithms(private_only=True, applicable_to=shape)}
    assert kinds <= {"zcdp", "pure"} and "zcdp" in kinds
    why = get("private_gmm_1d").why_not(DataShape(d=1, budget_kinds=("zcdp",)))
    assert why is not None and "'approx'" in why


@pytest.fixture
def needy():
    """A toy spec that cannot run without declared public records and serves 2 ≤ d ≤ 3."""
    base = get("dp_lloyd")
    spec = dataclasses.replace(base, name="toy_needs_public", uses_public_data=True,
                               needs_public_data=True, dims=(2, 3))
    register(spec)
    yield spec
    unregister("toy_needs_public")


def test_dimension_range_and_public_data_needs(needy):
    assert needy.why_not(DataShape(d=2, public_rows=5)) is None
    assert "2 ≤ d ≤ 3" in needy.why_not(DataShape(d=4, public_rows=5))
    assert "PUBLIC" in needy.why_not(DataShape(d=2))
    assert "toy_needs_public" not in [s.name for s in dpviz.algorithms(applicable_to=2)]
    assert "toy_needs_public" in [s.name for s in dpviz.algorithms(applicable_to=DataShape(2, public_rows=1))]


@pytest.mark.parametrize("kw, match", [
    (dict(dims=(0, None)), "dims"), (dict(dims=(3, 2)), "dims"),
    (dict(needs_public_data=True), "needs public data"),
])
def test_bad_capability_declarations_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(get("dp_lloyd"), name="toy_bad", **kw)


def test_shape_is_checked():
    with pytest.raises(ValueError, match="d ≥ 1"):
        DataShape(d=0)


def test_gmm_runs_through_dpviz_run_on_one_column_without_opting_in():
    x = np.concatenate([np.random.default_rng(1).normal(-5, 1, 4000),
                        np.random.default_rng(2).normal(5, 1, 4000)])[:, None]
    res = dpviz.run("private_gmm_1d", x, 2, epsilon=2.0, delta=1e-6, radius=20.0, n_declared=len(x), rng=3)
    assert res.algorithm == "private_gmm_1d" and res.guarantee.eps <= 2.0
    assert isinstance(get("private_gmm_1d"), AlgorithmSpec)


@pytest.mark.slow
def test_budget_sweep_keeps_approx_algorithms_on_its_row_level_axis():
    """Budget's sweep used to drop every "approx" algorithm from its list (issue 26)."""
    from dpviz.sweeps import sweep

    x = np.concatenate([np.random.default_rng(4).normal(-5, 1, 3000),
                        np.random.default_rng(5).normal(5, 1, 3000)])[:, None]
    sw = sweep(x, 2, epsilons=[1.0, 4.0], reps=1, delta=1e-6, radius=20.0, rng=6)
    assert "private_gmm_1d" in set(sw.frame["algorithm"])  # every algorithm that serves d = 1
    got = sw.frame[sw.frame["algorithm"] == "private_gmm_1d"]
    assert sorted(got["epsilon"]) == [1.0, 4.0]
    on_rho = sweep(x, 2, algorithms=["private_gmm_1d"], rhos=[1.0], reps=1, delta=1e-6, radius=20.0, rng=6)
    row = on_rho.frame.iloc[0]  # a ρ axis has no point for it: a refused row that says why, not a drop
    assert not row["released"] and "row-level target" in row["failure"]
