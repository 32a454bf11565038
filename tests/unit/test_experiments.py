"""Sweeps and noise redraws: progress, cancellation, reproducibility, tuple stage reuse.

The private stages are replaced by small fakes (monkeypatch) so these tests pin the sweep's
own behaviour; the integration test at the end runs the real algorithms.
"""

import math
import sys
import types

import numpy as np
import pandas as pd
import pytest
from _viz_fakes import TRUE_CENTERS, blobs, fake_ledger

import dpviz.experiments as ex
from dpviz.result import Result, Trace


@pytest.fixture
def fakes(monkeypatch):
    calls = {"tuples": 0, "fc": [], "dp_lloyd": 0, "nonprivate": 0}

    def tuple_stage(X, k, *, n_tuples, oracle, radius, rng):
        calls["tuples"] += 1
        return types.SimpleNamespace(tag=rng.random())  # stands in for a TupleStage

    def fc_stage(X, stage, *, rho, delta, radius, r_min, preset, rng):
        calls["fc"].append((stage, rho, preset))
        tr = Trace()
        used = rho < 0.05
        C = TRUE_CENTERS + rng.normal(scale=0.05 / math.sqrt(rho), size=TRUE_CENTERS.shape)
        tr.add("fallback", released=True, used=used, reason="empty core" if used else None,
               method="dp_lloyd", centers=C if used else None)
        return Result(C, None, fake_ledger(rho), tr.freeze())

    def dp_lloyd(X, k, *, rho, radius, rng):
        calls["dp_lloyd"] += 1
        return Result(TRUE_CENTERS + rng.normal(scale=0.1 / math.sqrt(rho), size=(3, 2)), None,
                      fake_ledger(rho))

    def nonprivate(X, k, *, rng):
        calls["nonprivate"] += 1
        return Result(TRUE_CENTERS.copy(), None, fake_ledger())

    monkeypatch.setattr(ex, "_tuple_stage", tuple_stage)
    monkeypatch.setattr(ex, "_fc_stage", fc_stage)
    monkeypatch.setattr(ex, "_dp_lloyd", dp_lloyd)
    monkeypatch.setattr(ex, "_nonprivate", nonprivate)
    return calls


X, _ = blobs(300)
ALGS = ["fc:practical", "fc:paper", "dp_lloyd", "nonprivate"]
RHOS = [0.01, 0.1, 1.0]


def _sweep(**kw):
    args = dict(algorithms=ALGS, rhos=RHOS, reps=3, delta=1e-6, n_tuples=20, radius=1.0,
                r_min=1e-3, rng=7)
    args.update(kw)
    return ex.run_sweep(X, 3, **args)


def test_tuple_stage_computed_once_per_repetition_and_shared(fakes):
    sw = _sweep()
    assert fakes["tuples"] == 3  # not 3 reps x 3 ρ x 2 presets
    assert len(fakes["fc"]) == 3 * 3 * 2
    stages = [id(s) for s, _, _ in fakes["fc"]]
    assert len(set(stages)) == 3  # one stage object per repetition, reused 6 times
    assert fakes["nonprivate"] == 3 and fakes["dp_lloyd"] == 9
    f = sw.frame
    assert list(f.columns) == list(ex.FRAME_COLUMNS)
    assert len(f) == 3 * (3 * 3 + 1)
    assert set(f[f.algorithm == "nonprivate"]["rho"]) == {math.inf}
    fc = f[f.algorithm == "fc:practical"]
    assert not fc[fc.rho == 0.01]["success"].any() and fc[fc.rho == 0.01]["fallback"].all()
    assert fc[fc.rho == 1.0]["success"].all()


def test_progress_is_called_after_every_run(fakes):
    seen = []
    sw = _sweep(progress=lambda f, m: seen.append((f, m)))
    assert len(seen) == len(sw.frame) == 30
    fr = [f for f, _ in seen]
    assert fr == sorted(fr) and fr[-1] == 1.0
    assert "ρ = 0.01" in seen[0][1]
    assert sw.complete


def test_cancellation_stops_early_and_keeps_finished_runs(fakes):
    n = {"polls": 0}

    def stop():
        n["polls"] += 1
        return n["polls"] > 4

    sw = _sweep(should_stop=stop)
    assert not sw.complete and len(sw.frame) == 4
    assert fakes["tuples"] == 1


def test_same_seed_same_sweep_and_other_seed_differs(fakes):
    cols = ["algorithm", "rho", "rep", "loss", "center_error", "success"]
    a, b, c = _sweep().frame[cols], _sweep().frame[cols], _sweep(rng=8).frame[cols]
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["loss"], c["loss"])


def test_loss_and_center_error_are_measured_against_the_references(fakes):
    sw = _sweep(true_centers=TRUE_CENTERS)
    npv = sw.frame[sw.frame.algorithm == "nonprivate"]
    np.testing.assert_allclose(npv["center_error"], 0.0, atol=1e-12)
    # the fake non-private answer is the true centers; the reference is k-means++ on X:
    # their costs are within a few percent, so the loss is near 0
    assert np.all(np.abs(npv["loss"]) < 0.05)
    s = sw.summary()
    assert list(s.columns) == ["algorithm", "rho", "median", "q10", "q90", "success_rate", "runs"]
    fc = s[s.algorithm == "fc:practical"].sort_values("rho")["median"].to_numpy()
    assert fc[0] > fc[-1]  # more budget, less loss
    assert sw.params["center_error_against"] == "true centers"


def test_bottom_counts_as_loss_one(fakes, monkeypatch):
    monkeypatch.setattr(ex, "_dp_lloyd",
                        lambda X, k, *, rho, radius, rng: Result(None, "n̂ ≤ 0", fake_ledger()))
    sw = _sweep(algorithms=["dp_lloyd"])
    assert (sw.frame["loss"] == 1.0).all() and not sw.frame["success"].any()
    assert sw.frame["center_error"].isna().all() and (sw.frame["failure"] == "n̂ ≤ 0").all()


def test_diffprivlib_runs_at_eps_sqrt_2rho(monkeypatch):
    got = []

    def diffprivlib_kmeans(X, k, *, eps, radius, rng):
        got.append(eps)
        return Result(TRUE_CENTERS, None, fake_ledger())

    mod = types.ModuleType("dpviz.clustering.baselines")
    mod.diffprivlib_kmeans = diffprivlib_kmeans
    monkeypatch.setitem(sys.modules, "dpviz.clustering.baselines", mod)
    ex.run_sweep(X, 3, algorithms=["diffprivlib"], rhos=[0.5, 2.0], reps=1, delta=1e-6,
                 radius=1.0, r_min=1e-3, rng=0)
    assert got == [pytest.approx(1.0), pytest.approx(2.0)]


def test_parameter_errors():
    with pytest.raises(ValueError, match="unknown name"):
        ex.run_sweep(X, 3, algorithms=["kmeans"], rhos=[1.0], reps=1, delta=1e-6, radius=1.0,
                     r_min=1e-3)
    with pytest.raises(ValueError, match="'rhos' parameter of run_sweep"):
        ex.run_sweep(X, 3, algorithms=ALGS, rhos=[-1.0], reps=1, delta=1e-6, radius=1.0,
                     r_min=1e-3)
    with pytest.raises(ValueError, match="public radius"):
        ex.run_sweep(X, 3, algorithms=ALGS, rhos=[1.0], reps=1, delta=1e-6, r_min=1e-3)


def test_run_repeats_redraws_noise_on_one_stage(fakes):
    stage = object()
    seen = []
    out = ex.run_repeats(X, stage, repeats=5, rho=1.0, delta=1e-6, radius=1.0, r_min=1e-3,
                         rng=3, progress=lambda f, m: seen.append(f))
    assert len(out) == 5 and all(s is stage for s, _, _ in fakes["fc"])
    assert len({r.centers.tobytes() for r in out}) == 5
    assert seen[-1] == 1.0
    again = ex.run_repeats(X, stage, repeats=5, rho=1.0, delta=1e-6, radius=1.0, r_min=1e-3,
                           rng=3)
    np.testing.assert_array_equal(out[4].centers, again[4].centers)
    few = ex.run_repeats(X, stage, repeats=5, rho=1.0, delta=1e-6, radius=1.0, r_min=1e-3,
                         rng=3, should_stop=lambda: len(fakes["fc"]) >= 12)
    assert len(few) == 2


def test_run_n_sweep_has_one_block_per_n(fakes):
    sw = ex.run_n_sweep(lambda n, rng: blobs(n, seed=int(rng.integers(100)))[0], [150, 300], 3,
                        algorithms=["fc:practical", "nonprivate"], rho=0.5, reps=2, delta=1e-6,
                        n_tuples=10, radius=1.0, r_min=1e-3, rng=1)
    assert sorted(sw.frame["n"].unique()) == [150, 300]
    assert len(sw.frame) == 2 * 2 * 2 and sw.complete


# ---- integration: the real algorithms ----------------------------------------------------------

def _real_sweep(**kw):
    from dpviz.data import fig3_three

    ds = fig3_three(2000, rng=0)
    args = dict(algorithms=["fc:practical", "dp_lloyd", "nonprivate"], rhos=[0.1, 1.0], reps=2,
                delta=1e-6, n_tuples=40, r_min=1e-3, rng=5)
    args.update(kw)
    return ex.run_sweep(ds, 3, **args)


def test_real_sweep_and_counted_tuple_stage(monkeypatch):
    real = ex._tuple_stage
    n = {"calls": 0}

    def counting(*a, **k):
        n["calls"] += 1
        return real(*a, **k)

    monkeypatch.setattr(ex, "_tuple_stage", counting)
    sw = _real_sweep()
    assert n["calls"] == 2
    assert len(sw.frame) == 2 * (2 + 2 + 1)
    assert sw.frame["loss"].between(-0.1, 1.0).all()
    assert sw.params["center_error_against"] == "true centers"


def test_parallel_sweep_equals_sequential(fakes):
    # threads share the monkeypatched fakes; the default (loky) backend runs the same _run_rep
    cols = ["algorithm", "rho", "rep", "loss", "center_error", "success"]
    seen = []
    par = _sweep(n_jobs=2, backend="threading", progress=lambda f, m: seen.append(f))
    pd.testing.assert_frame_equal(_sweep().frame[cols], par.frame[cols])
    assert par.complete and seen[-1] == 1.0 and len(seen) == 3
    stopped = _sweep(n_jobs=2, backend="threading", reps=4, should_stop=lambda: True)
    assert not stopped.complete and stopped.frame["rep"].nunique() < 4


def test_cached_references_skip_the_sweeps_own_kmeans(fakes, monkeypatch):
    def no_kmeans(*a, **k):
        raise AssertionError("the sweep ran k-means although both references were given")

    monkeypatch.setattr(ex, "_reference", no_kmeans)
    sw = _sweep(reference_cost=1.0, reference_centers=TRUE_CENTERS)
    npv = sw.frame[sw.frame.algorithm == "nonprivate"]
    from dpviz.metrics import kmeans_cost

    assert npv["loss"].iloc[0] == pytest.approx(1.0 - 1.0 / kmeans_cost(X, TRUE_CENTERS))
    np.testing.assert_allclose(npv["center_error"], 0.0, atol=1e-12)


def test_row_level_sweep_calibrates_every_algorithm_to_the_same_target():
    """Issue 10, finding 6: at one row-level (ε, δ) each algorithm gets its own budget, and the
    calibrated budget's row-level guarantee is within the target (FC through group privacy)."""
    from dpviz.privacy.accounting import approx_zcdp_to_dp
    from dpviz.privacy.budget import ZCDP
    from dpviz.registry import Public, calibrate, get

    eps, delta = 3.0, 1e-6
    kw = dict(n_declared=20_000, d=2, k=8, radius=1.0, n_tuples=200, r_min=1e-3, oracle="kmeans++")
    fc_rho, fc_delta = ex.row_level_budget("fc:practical", eps, delta, **kw)
    ll_rho, _ = ex.row_level_budget("dp_lloyd", eps, delta, **kw)
    dpl = ex.row_level_plan("diffprivlib", eps, delta, **kw)
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
    sw = ex.run_sweep(X, 3, algorithms=["dp_lloyd", "nonprivate"], rhos=[eps], reps=1, delta=delta,
                      n_tuples=20, radius=1.0, r_min=1e-3, rng=0, row_level=True)
    assert sw.params["row_level"] and set(sw.frame["algorithm"]) == {"dp_lloyd", "nonprivate"}
