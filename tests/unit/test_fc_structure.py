"""Issue 11's library clean-ups: FriendlyCore's budget resolved once (FCBudget), one n̂ mechanism,
mechanisms that return their σ, and process-wide state that is safe from worker threads.

(That the refactors moved no number is ``test_fc_pins.py``.)
"""

from __future__ import annotations

import importlib
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import threadpoolctl

import dpviz._threads as _threads
import dpviz.clustering.friendlycore.steps as steps
import dpviz.clustering.tuples as tuples
from dpviz.clustering.friendlycore.budget import (
    FRACTION_KEYS,
    FCBudget,
    budget_margins,
    margins,
    practical_split,
    resolve_budget,
)
from dpviz.clustering.friendlycore.pipeline import fc_clustering, fc_private_stage
from dpviz.data import fig6_blobs
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_draw, size_overestimate, size_underestimate

favg = importlib.import_module("dpviz.averaging.friendly_avg")  # the package exports a function of that name
PUB = dict(t=200, k=8, r_min=1e-3, radius=1.0)


# ----------------------------------------------------------------------------- FCBudget


def test_fc_budget_parts_are_zcdp_split_of_the_split():
    split = practical_split(rho=0.7, delta=1e-8, **PUB)
    b = FCBudget.of(0.7, 1e-8, split)
    assert b.parts == ZCDP(0.7, 1e-8).split(dict(split.rho), dict(split.delta))
    for key in FRACTION_KEYS:  # exact: one multiplication per part
        assert b.parts[key] == ZCDP(0.7 * split.rho[key], 1e-8 * split.delta.get(key, 0.0))
    tup = ("match_core", "find_diam", "dist_core", "tuple_avg")
    assert b.tuple_level.rho == 0.7 * sum(split.rho[key] for key in tup)
    assert b.avg_ord.delta == 1e-8 * (split.delta["dist_core"] + split.delta["tuple_avg"])
    assert math.isclose(b.tuple_level.rho + b.row_level.rho, 0.7, rel_tol=1e-12)
    assert math.isclose(b.tuple_level.delta + b.row_level.delta, 1e-8, rel_tol=1e-12)
    assert b.find_diam_per_coordinate(8) == 0.7 * split.rho["find_diam"] / 8


def test_the_cached_practical_split_cannot_be_changed_through_a_returned_one():
    a = practical_split(rho=0.3, delta=1e-8, **PUB)
    want = dict(a.rho)
    a.rho["lloyd"] = 0.0  # FCSplit is frozen, its dicts are not: a caller's edit stays its own
    b = practical_split(rho=0.3, delta=1e-8, **PUB)
    assert dict(b.rho) == want and b.rho is not a.rho


def test_margins_read_the_budget():
    b = resolve_budget("reference", rho=0.5, delta=1e-6, **PUB)
    assert budget_margins(b, **PUB) == margins(b.split, rho=0.5, delta=1e-6, **PUB)


def test_the_ledger_of_a_run_is_the_budget():
    """Every node of fc_private_stage's ledger holds the FCBudget part it was given."""
    ds = fig6_blobs(4000, k=4, rng=2)
    stage = tuples.tuple_stage(ds.X, 4, n_tuples=40, radius=1.0, rng=2)
    res = fc_private_stage(ds.X, stage, rho=0.8, delta=1e-7, radius=1.0, r_min=1e-3, rng=2,
                           n_declared=4000, preset="reference")
    b = resolve_budget("reference", rho=0.8, delta=1e-7, t=40, k=4, r_min=1e-3, radius=1.0)
    nodes = {n.name: n.budget for n in res.ledger.nodes()}
    assert nodes["FC_kTupleClustering"] == b.tuple_level
    assert nodes["FriendlyCore(match_1/7)"] == b.parts["match_core"]
    assert nodes["FC_AvgOrdTup"] == b.avg_ord
    assert nodes["FriendlyCore(dist_r1..rk)"] == b.parts["dist_core"]
    assert nodes["FriendlyOrdTupAvg"] == b.parts["tuple_avg"]
    assert nodes["NoisyLloydStep"] == b.parts["lloyd"]
    assert nodes["FindDiam[1]"] == ZCDP(b.find_diam_per_coordinate(4))


# ----------------------------------------------------------------------------- mechanisms


def test_gaussian_draw_returns_the_sigma_it_drew_with_and_recorded():
    led = Ledger("t", ZCDP(1.0))
    v, sigma = gaussian_draw(np.zeros(3), sensitivity=2.0, rho=0.5, rng=np.random.default_rng(4),
                             ledger=led, name="x")
    assert sigma == 2.0 / math.sqrt(1.0) == led.children[0].noise_scale
    np.testing.assert_array_equal(v, np.random.default_rng(4).normal(0.0, sigma, size=3))
    w = gaussian(np.zeros(3), sensitivity=2.0, rho=0.5, rng=np.random.default_rng(4), ledger=led, name="y")
    np.testing.assert_array_equal(v, w)


def test_size_estimates_exact():
    led = Ledger("t", ZCDP(1.0, 1e-6))
    n_hat = size_underestimate(100, charge=0.1, delta=1e-6, rng=np.random.default_rng(1), ledger=led,
                               name="n̂", event="ev")
    rho1 = (1 - 1e-6) * 0.1
    want = 100 - math.sqrt(math.log(1e6) / rho1) - 1 + np.random.default_rng(1).normal(
        0.0, 1.0 / math.sqrt(2 * rho1))
    assert n_hat == want
    assert led.children[0].budget == ZCDP(0.1) and led.total() == ZCDP(0.1, 1e-6)  # charged ρ₁, event δ
    over = size_overestimate(100, rho=0.1, delta=1e-6, rng=np.random.default_rng(1), ledger=led, name="m")
    assert over == 100 + math.sqrt(math.log(2e6) / 0.1) + np.random.default_rng(1).normal(
        0.0, 1.0 / math.sqrt(0.2))


def test_friendly_avg_and_ord_tup_avg_share_one_n_hat(monkeypatch):
    seen = []

    def spy(n, **kw):
        seen.append(kw["name"])
        return size_underestimate(n, **kw)

    monkeypatch.setattr(favg, "size_underestimate", spy)
    monkeypatch.setattr(steps, "size_underestimate", spy)
    rng = np.random.default_rng(0)
    favg.friendly_avg_core(rng.normal(size=(50, 2)), rho=1.0, delta=1e-6, r=1.0, rng=rng,
                           ledger=Ledger("a", ZCDP(1.0, 1e-6)))
    steps.friendly_ord_tup_avg(rng.normal(size=(30, 2, 2)), rho=1.0, delta=1e-6, radii=np.ones(2), rng=rng,
                               ledger=Ledger("b", ZCDP(1.0, 1e-6)))
    assert seen == ["n̂ (FriendlyAvg size under-estimate)", "n̂ (FriendlyOrdTupAvg size under-estimate)"]


# ----------------------------------------------------------------------------- threads


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in _threads._threadpools().info() if i["user_api"] == "blas"]


@pytest.fixture
def sole_limit_user():
    """These tests read the process-wide BLAS limit, so no other thread may hold ``one_thread``
    while they run. An earlier test in the same worker process can leave one that does: a
    ThreadEngine closes with ``shutdown(wait=False)``, so a task already running (a cancelled or
    failed run's piece) finishes in the background, and on a loaded machine it still held the
    limit here (the limit was 1 where the test set 2, or was restored under the test). Wait for
    that state to end: no user of the limit, no thread controlling OpenBLAS."""
    deadline = time.monotonic() + 300
    while True:
        with _threads._LIMIT_LOCK:
            if _threads._limit_users == 0:
                break
        if time.monotonic() > deadline:
            names = sorted(t.name for t in threading.enumerate())
            pytest.fail(f"another thread still holds one_thread after 300 s: {names}")
        time.sleep(0.05)
    threadpoolctl.OpenBLASController.clear_controlling_thread(force=True)


def test_one_thread_overlapping_on_two_threads_keeps_and_restores_the_blas_limit(sole_limit_user):
    """A enters, B enters, A leaves (B still limited), B leaves (the limit is restored). Two plain
    threadpoolctl contexts fail both checks: A restores 2 under B, and B restores A's 1 for good."""
    pools = _threads._threadpools()
    with pools.limit(limits=2, user_api="blas"):
        before = _blas_threads()
        assert before and all(n == 2 for n in before)
        a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
        seen = {}

        def a():
            with _threads.one_thread():
                a_in.set()
                b_in.wait(10)
            a_out.set()

        def b():
            a_in.wait(10)
            with _threads.one_thread():
                b_in.set()
                a_out.wait(10)
                seen["b after a left"] = _blas_threads()

        ts = [threading.Thread(target=a), threading.Thread(target=b)]
        for th in ts:
            th.start()
        for th in ts:
            th.join(20)
        assert seen["b after a left"] == [1] * len(before)
        assert _blas_threads() == before


def test_stage_match_graph_concurrent_calls_share_one_graph():
    ds = fig6_blobs(2000, k=3, rng=5)
    stage = tuples.tuple_stage(ds.X, 3, n_tuples=60, radius=1.0, rng=5)
    with ThreadPoolExecutor(4) as pool:
        graphs = list(pool.map(lambda _: tuples.stage_match_graph(stage), range(8)))
    assert all(g is graphs[0] for g in graphs)


def _fingerprint(res):
    rows = [(r["id"], r["rho"], r["delta"], r["noise_scale"]) for r in res.ledger.to_rows()]
    return res.centers, res.failure, rows


def test_two_pipelines_in_threads_equal_sequential(sole_limit_user):
    """Two FC_Clustering runs (one with a core, one falling back) at once on two threads: the same
    centers and ledgers as one after the other, and the BLAS limit is what it was."""
    ds = fig6_blobs(20_000, k=8, rng=0)
    calls = [dict(rho=1.0, rng=7), dict(rho=1e-3, rng=8)]

    def run(kw):
        return fc_clustering(ds.X, 8, delta=1e-8, radius=1.0, r_min=1e-3, n_tuples=200, n_declared=20_000,
                             **kw)

    before = _blas_threads()
    seq = [_fingerprint(run(kw)) for kw in calls]
    with ThreadPoolExecutor(2) as pool:
        par = [_fingerprint(r) for r in pool.map(run, calls)]
    for (c1, f1, l1), (c2, f2, l2) in zip(seq, par, strict=True):
        np.testing.assert_array_equal(c1, c2)
        assert f1 == f2 and l1 == l2
    assert seq[0][2] != seq[1][2]  # two different branches ran side by side
    assert _blas_threads() == before
