"""dpviz.sweeps.sweep: every registered algorithm at the same row-level (ε, δ), a tidy frame.

Toy algorithms registered inside the tests pin the sweep's own behaviour (calibration per
algorithm, the non-private stage shared across ε, seeds, chunks, cancel); one test runs the real
FriendlyCore and DP-Lloyd at the same row-level target.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

import dpviz
from dpviz.data import fig6_blobs
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, laplace
from dpviz.registry import CALIBRATION_RTOL, AlgorithmSpec, check_hinted, get, hint, register, unregister
from dpviz.result import Result, Trace
from dpviz.sweeps import COLUMNS, summarize, sweep

DELTA = 1e-6
DS = fig6_blobs(2000, k=4, rng=0)
REF = 1.0  # a fixed reference cost (X of the loss) so the toy tests run no k-means


@dataclass(frozen=True)
class ToyParams:
    spread: float = field(default=0.0, metadata=hint(low=0.0, high=1.0, help="added noise-free jitter"))
    share: int = field(default=1, metadata=hint(low=1, high=10, help="a stage knob"))

    def __post_init__(self) -> None:
        check_hinted(self, "Toy")


CALLS: dict[str, int] = {"stage": 0}


def _toy_stage(X, k, *, radius, rng, pub, params):
    """The 'non-private stage': k rows picked by the seed (counts its calls)."""
    CALLS["stage"] += 1
    return X[rng.choice(X.shape[0], size=k, replace=False)]


def _toy_private(X, k, budget, *, radius, rng, pub, params, stage=None):
    """Laplace noise of scale Λ/ε on the stage's rows; ⊥ below ε = 0.5 (a structure failure)."""
    ledger = Ledger("toy", budget.to_zcdp())
    trace = Trace()
    if budget.eps < 0.5:
        trace.add("core", released=True, used=True)
        return Result(None, "too little budget", ledger, trace.freeze())
    C = laplace(stage, sensitivity=radius, eps=budget.eps, rng=rng, ledger=ledger, name="centers")
    trace.add("core", released=True, used=False)
    return Result(C, None, ledger, trace.freeze())


def _toy_z_private(X, k, budget, *, radius, rng, pub, params, stage=None):
    ledger = Ledger("toy_z", budget)
    C = gaussian(np.zeros((k, X.shape[1])), sensitivity=radius, rho=budget.rho, rng=rng, ledger=ledger,
                 name="centers")
    return Result(C, None, ledger, ())


@pytest.fixture
def toys():
    CALLS["stage"] = 0
    specs = [
        register(AlgorithmSpec(
            name="toy", title="Toy (pure)", paper="none", budget_kind="pure", params=ToyParams,
            private=_toy_private, guarantee=lambda b, pub, p, dp: ApproxDP(b.eps, 0.0),
            stage=_toy_stage, stage_fields=("share",), structure_step="core")),
        register(AlgorithmSpec(
            name="toy_z", title="Toy (zCDP)", paper="none", budget_kind="zcdp", params=ToyParams,
            private=_toy_z_private,
            guarantee=lambda b, pub, p, dp: ApproxDP(b.rho + 2 * math.sqrt(b.rho * math.log(1 / dp)), dp)
            if dp > 0 else ApproxDP(math.inf, 0.0))),
    ]
    yield specs
    unregister("toy")
    unregister("toy_z")


def _sweep(algorithms, **kw):
    args = dict(epsilons=[0.25, 1.0, 4.0], delta=DELTA, radius=1.0, n_declared=2000, reps=3, rng=5,
                reference_cost=REF)
    args.update(kw)
    return sweep(DS.X, 4, algorithms=algorithms, **args)


def test_every_registered_algorithm_by_default_with_the_reference(toys):
    cmp = _sweep(None, reps=1, epsilons=[1.0])
    names = set(cmp.frame["algorithm"])
    assert {"toy", "toy_z", "friendlycore", "dp_lloyd", "kmeans++"} <= names
    assert names == {s.name for s in dpviz.algorithms(applicable_to=DS.X.shape[1])}
    assert "private_gmm_1d" not in names  # d = 1 only (the registry says so, issue 26)
    assert list(cmp.frame.columns) == list(COLUMNS)
    ref = cmp.frame[cmp.frame.algorithm == "kmeans++"]
    assert len(ref) == 1 and ref["epsilon"].iloc[0] == math.inf and not ref["private"].iloc[0]
    assert math.isnan(ref["guarantee_eps"].iloc[0])
    private = cmp.frame[cmp.frame.private]
    # An algorithm whose plan refuses this target from declared values (Easy Instances' automatic t
    # needs more declared rows than n = 2,000) is a row with the plan's reason and no budget; every
    # other private algorithm (auto too) is calibrated at the target.
    pub = dpviz.registry.Public(n_declared=2000, d=DS.X.shape[1], k=4, radius=1.0)
    refuses = set()
    for name in private["algorithm"]:
        try:
            dpviz.registry.plan(name, 1.0, DELTA, pub)
        except ValueError:
            refuses.add(name)
    assert refuses == {"easy_instances", "easy_instances_gmm"}
    refused = private[private.algorithm.isin(refuses)]
    assert refused["budget"].isna().all() and refused["guarantee_eps"].isna().all()
    assert refused["failure"].str.startswith("cannot meet the target: ").all()
    assert refused["failure"].str.contains("declared rows").all()
    met = private[~private.algorithm.isin(refuses)]
    assert met["budget"].ge(0).all() and met["guarantee_eps"].le(1.0 * (1 + 1e-12)).all()
    assert private["budget_kind"].isin(["zcdp", "pure", "approx"]).all()


def test_each_algorithm_is_calibrated_to_the_same_row_level_target(toys):
    f = _sweep({"toy": {}, "toy_z": {}}).frame
    toy = f[f.algorithm == "toy"]
    # Pure ε: the native budget is the target itself (up to the bisection width), never above it.
    assert (toy["budget"] <= toy["epsilon"]).all()
    assert (toy["budget"] >= toy["epsilon"] * (1 - 2 * CALIBRATION_RTOL)).all()
    assert (toy["guarantee_eps"] == toy["budget"]).all()
    assert (toy["guarantee_delta"] == 0).all() and (toy["budget_kind"] == "pure").all()
    z = f[f.algorithm == "toy_z"]
    for _, row in z.iterrows():
        # The zCDP toy's own (ρ, δ′) statement is within (ε, δ) and tight.
        assert row["guarantee_eps"] <= row["epsilon"] * (1 + 1e-12)
        assert row["guarantee_eps"] >= row["epsilon"] * (1 - 1e-4)
        assert row["guarantee_delta"] <= DELTA
        assert row["budget"] + 2 * math.sqrt(row["budget"] * math.log(1 / row["guarantee_delta"])) == \
            pytest.approx(row["guarantee_eps"], rel=1e-12)


def test_the_stage_runs_once_per_repetition_and_stage_key_not_per_epsilon(toys):
    cmp = _sweep({"toy": {}})
    assert CALLS["stage"] == 3  # 3 repetitions × 3 ε: one stage per repetition
    f = cmp.frame
    assert len(f) == 9
    # within a repetition, every ε saw the same stage (same stage time recorded)
    assert (f.groupby("rep")["stage_seconds"].nunique() == 1).all()
    _sweep({"toy": {"share": 2}}, reps=2)
    assert CALLS["stage"] == 5  # a different stage key is a different stage


def test_structure_failure_and_bottom_are_rows_not_errors(toys):
    f = _sweep({"toy": {}}).frame
    low, high = f[f.epsilon == 0.25], f[f.epsilon == 4.0]
    assert (low["failure"] == "too little budget").all() and not low["released"].any()
    assert (low["loss"] == 1.0).all() and low["center_error"].isna().all()
    assert (low["structure_ok"] == False).all()  # noqa: E712 (object column)
    assert (high["structure_ok"] == True).all() and high["released"].all()  # noqa: E712
    assert summarize(f)["released_share"].tolist() == [0.0, 1.0, 1.0]


def test_metrics_match_dpviz_metrics(toys):
    from dpviz.metrics import center_error, kmeans_cost, labeling_failure, nearest_center

    cmp = _sweep({"toy": {}}, epsilons=[4.0], reps=1, labels=DS.labels, true_centers=DS.true_centers)
    row = cmp.frame.iloc[0]
    # rerun the same seeds by hand: stage and private run through the spec
    from dpviz.registry import Public
    from dpviz.sweeps import _child, _key, _root_sequence

    root, _ = _root_sequence(5)
    spec, params = get("toy"), ToyParams()
    stage = _toy_stage(DS.X, 4, radius=1.0, rng=_child(root, 0, _key(
        f"stage:{_toy_stage.__module__}.{_toy_stage.__qualname__}"), _key(repr(spec.stage_key(params)))),
        pub=None, params=params)
    res = _toy_private(DS.X, 4, ApproxDP(4.0, 0.0), radius=1.0, rng=_child(root, 0, _key("toy"), _key("4.0")),
                       pub=Public(2000, 2, 4, 1.0), params=params, stage=stage)
    assert row["loss"] == pytest.approx(1 - REF / kmeans_cost(DS.X, res.centers), rel=1e-12)
    assert row["center_error"] == pytest.approx(center_error(DS.true_centers, res.centers), rel=1e-12)
    assert row["labeling_failure"] == pytest.approx(
        labeling_failure(DS.labels, nearest_center(DS.X, res.centers)[0]), rel=1e-12)


def test_seeds_do_not_depend_on_chunks_order_or_other_algorithms(toys):
    cols = ["algorithm", "epsilon", "rep", "loss", "budget", "failure"]
    whole = _sweep({"toy": {}, "toy_z": {}}).frame[cols]
    chunks = pd.concat([_sweep({"toy": {}, "toy_z": {}}, only_reps=[r]).frame[cols] for r in (2, 0, 1)])
    key = ["algorithm", "epsilon", "rep"]
    pd.testing.assert_frame_equal(whole.sort_values(key).reset_index(drop=True),
                                  chunks.sort_values(key).reset_index(drop=True))
    alone = _sweep({"toy": {}}).frame[cols]
    pd.testing.assert_frame_equal(alone.reset_index(drop=True),
                                  whole[whole.algorithm == "toy"].reset_index(drop=True))
    other = _sweep({"toy": {}}, rng=6).frame
    assert not np.allclose(other[other.released]["loss"], alone[alone.loss < 1]["loss"])


def test_progress_and_cancel(toys):
    seen = []
    cmp = _sweep({"toy": {}, "toy_z": {}}, progress=lambda f, m: seen.append((f, m)))
    assert len(seen) == 18 and seen[-1][0] == pytest.approx(1.0) and cmp.complete
    assert seen[0][1] == "repetition 1 of 3: Toy (pure) at ε = 0.25"
    assert all(b[0] > a[0] for a, b in itertools.pairwise(seen))
    count = {"n": 0}

    def cancel():
        count["n"] += 1
        return count["n"] > 4  # checked before each run: four runs finish

    cmp = _sweep({"toy": {}, "toy_z": {}}, cancel=cancel)
    assert not cmp.complete and len(cmp.frame) == 4


def test_friendlycore_and_lloyd_at_the_same_row_level_target():
    ds = fig6_blobs(4000, rng=1)
    cmp = sweep(ds.X, 8, algorithms=["friendlycore", "dp_lloyd"], epsilons=[3.0], delta=DELTA,
                        radius=1.0, n_declared=4000, reps=1, rng=0)
    f = cmp.frame.set_index("algorithm")
    for name in ("friendlycore", "dp_lloyd"):
        assert 3.0 * (1 - 1e-4) <= f.loc[name, "guarantee_eps"] <= 3.0 * (1 + 1e-12)
        assert f.loc[name, "guarantee_delta"] <= DELTA
    # FriendlyCore pays group privacy for its tuple stage: a much smaller ρ at the same ε
    assert f.loc["friendlycore", "budget"] < f.loc["dp_lloyd", "budget"] / 3
    assert isinstance(f.loc["friendlycore", "structure_ok"], bool)
    assert f.loc["dp_lloyd", "structure_ok"] is None


def test_a_target_an_algorithm_cannot_meet_is_a_row():
    cmp = sweep(DS.X, 4, algorithms=["friendlycore", "diffprivlib"], epsilons=[1.0], delta=0.0,
                        radius=1.0, n_declared=2000, reps=1, rng=0, reference_cost=REF)
    f = cmp.frame.set_index("algorithm")
    assert f.loc["friendlycore", "failure"].startswith("cannot meet the target")
    assert not f.loc["friendlycore", "released"] and math.isnan(f.loc["friendlycore", "loss"])
    assert f.loc["diffprivlib", "released"] and f.loc["diffprivlib", "guarantee_eps"] <= 1.0


def test_summary_bands_and_shares(toys):
    s = _sweep({"toy": {}}).summary()
    assert list(s["epsilon"]) == [0.25, 1.0, 4.0]
    row = s[s.epsilon == 4.0].iloc[0]
    assert row["q10"] <= row["median"] <= row["q90"] and row["runs"] == 3
    assert row["structure_share"] == 1.0 and s[s.epsilon == 0.25]["structure_share"].iloc[0] == 0.0
    with pytest.raises(ValueError, match="quantiles"):
        _sweep({"toy": {}}, reps=1).summary(quantiles=(0.9, 0.1))


def test_errors_are_clear(toys):
    with pytest.raises(ValueError, match="Unknown algorithm 'nope'"):
        _sweep(["nope"])
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['bogus'\]"):
        _sweep({"toy": {"bogus": 1}})
    with pytest.raises(ValueError, match="'epsilons' parameter of sweep"):
        _sweep(["toy"], epsilons=[0.0])
    with pytest.raises(ValueError, match="'epsilons' parameter of sweep"):
        _sweep(["toy"], epsilons=[-1.0])
    with pytest.raises(ValueError, match="'only_reps' parameter"):
        _sweep(["toy"], only_reps=[3])
    with pytest.raises(ValueError, match="'labels' parameter"):
        _sweep(["toy"], labels=DS.labels[:10])
    with pytest.raises(ValueError, match="'algorithms' parameter"):
        _sweep([])


def test_structure_ok_of_the_registry():
    spec = get("friendlycore")
    ledger = Ledger("x", ZCDP(1.0, 0.0))
    ok, fell = Trace(), Trace()
    ok.add("fallback", released=True, used=False)
    fell.add("fallback", released=True, used=True)
    C = np.zeros((2, 2))
    assert spec.structure_ok(Result(C, None, ledger, ok.freeze())) is True
    assert spec.structure_ok(Result(C, None, ledger, fell.freeze())) is False
    assert spec.structure_ok(Result(None, "⊥", ledger, ok.freeze())) is False
    assert spec.structure_ok(Result(C, None, ledger, ())) is False
    assert get("dp_lloyd").structure_ok(Result(C, None, ledger, ())) is None


def test_the_rho_axis_and_names_with_parameters_run_on_the_same_engine(toys):
    """One engine (issue 26, finding 3): the nominal-ρ axis (the paper's) and the Budget page's
    names with parameters ("friendlycore[preset=paper]") and the non-private reference run through
    dpviz.sweeps.sweep like every name."""
    CALLS["stage"] = 0
    sw = sweep(DS.X, 4, algorithms={"toy": {}, "toy_z": {}, "kmeans++": {},
                                    "friendlycore[preset=paper]": {"n_tuples": 20, "r_min": 1e-3}},
               rhos=[0.02, 2.0], reps=2, delta=DELTA, radius=1.0, rng=0, reference_cost=REF)
    f = sw.frame
    assert "rho" in f.columns and "epsilon" not in f.columns
    assert CALLS["stage"] == 2  # the toy's stage: once per repetition, shared by both ρ
    ref = f[f.algorithm == "kmeans++"]
    assert len(ref) == 2 and (ref["rho"] == math.inf).all() and (ref["title"] == get("kmeans++").title).all()
    toy = f[f.algorithm == "toy"]  # pure ε at ε = √(2ρ): 0.2 < 0.5 gives ⊥, 2 gives centers
    assert toy[toy.rho == 0.02]["failure"].eq("too little budget").all()
    assert toy[toy.rho == 2.0]["success"].all()
    assert np.allclose(toy["budget"], np.sqrt(2 * toy["rho"]))
    fc = f[f.algorithm == "friendlycore[preset=paper]"]
    assert len(fc) == 4 and (fc["budget_kind"] == "zcdp").all() and np.allclose(fc["budget"], fc["rho"])
    assert set(summarize(f)["algorithm"]) == {"toy", "toy_z", "kmeans++", "friendlycore[preset=paper]"}
    with pytest.raises(ValueError, match="Unknown algorithm 'nope'"):
        sweep(DS.X, 4, algorithms=["nope"], rhos=[1.0], reps=1, delta=DELTA, radius=1.0)
    with pytest.raises(ValueError, match="exactly one budget axis"):
        sweep(DS.X, 4, algorithms=["toy"], rhos=[1.0], epsilons=[1.0], reps=1, delta=DELTA, radius=1.0)


def test_parallel_repetitions_give_the_same_frame():
    one = _sweep(["dp_lloyd", "kmeans++"], reps=3).frame
    par = _sweep(["dp_lloyd", "kmeans++"], reps=3, n_jobs=2).frame
    pd.testing.assert_frame_equal(one.drop(columns=["seconds", "stage_seconds"]),
                                  par.drop(columns=["seconds", "stage_seconds"]))


def test_an_algorithm_that_refuses_the_inputs_is_a_row_and_the_others_still_run(toys):
    def refuse(X, k, budget, *, radius, rng, pub, params, stage=None):
        raise ValueError(f"needs d ≥ k; got d = {X.shape[1]}, k = {k}")

    register(AlgorithmSpec(name="refuser", title="Refuser", paper="none", budget_kind="pure",
                           params=ToyParams, private=refuse,
                           guarantee=lambda b, pub, p, dp: ApproxDP(b.eps, 0.0)))
    try:
        f = _sweep(["refuser", "toy"], reps=1, epsilons=[4.0]).frame.set_index("algorithm")
    finally:
        unregister("refuser")
    assert f.loc["refuser", "failure"] == "refused: needs d ≥ k; got d = 2, k = 4"
    assert math.isnan(f.loc["refuser", "loss"]) and not f.loc["refuser", "released"]
    assert f.loc["toy", "released"]


def test_ranking_orders_methods_by_median_loss_at_the_largest_sound_epsilon():
    rows = []
    for alg, title, losses in (("a", "A", {1.0: 0.9, 10.0: 0.3, 50.0: 0.0}),
                               ("b", "B", {1.0: 0.5, 10.0: 0.1, 50.0: 0.2}),
                               ("c", "C", {1.0: 0.4, 10.0: 0.1, 50.0: 0.1})):
        for e, v in losses.items():
            rows += [dict(algorithm=alg, title=title, private=True, epsilon=e, loss=v, rep=r,
                          success=True, seconds=0.0, released=True, structure_ok=None) for r in range(2)]
    rows += [dict(algorithm="kmeans++", title="k-means++ (non-private)", private=False,
                  epsilon=math.inf, loss=0.0, rep=0, success=True, seconds=0.0, released=True,
                  structure_ok=None)]
    from dpviz.sweeps import ranking

    r = ranking(pd.DataFrame(rows))
    assert r.attrs["ranked_at"] == 10.0  # ε = 50 is outside sound territory: not the ranking's ε
    assert list(r["method"]) == ["C", "B", "A", "k-means++ (non-private)"]  # B, C tie at 10: ε = 1 decides
    assert list(r["rank"]) == ["1", "2", "3", "—"] and r.loc[0, "ε = 1"] == 0.4
