"""dpviz.triage: the verdict's public part equals the public margins, its data part predicts real
FriendlyCore runs, and a suggestion, applied, gives a FriendlyCore success (issue 16, analyst).

Seeds fixed; "success" is checked on the real private stage (no fallback used)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

import dpviz.data
from dpviz.clustering.friendlycore import budget as presets
from dpviz.clustering.friendlycore.pipeline import fc_private_stage, fc_tuple_stage
from dpviz.core.filters import zcdp_threshold
from dpviz.triage import AGREE_SHARE, expected_kept_share, triage

DELTA = 1e-6


def customers(n: int, seed: int = 12345) -> np.ndarray:
    """A customers-like table (age, income, visits) with 4 groups, mapped into [-1, 1]^3 by
    DECLARED bounds (age 0–100, income 0–150,000, visits 0–20): public, data-free."""
    rng = np.random.default_rng(seed)
    centers = np.array([[25, 30_000, 2], [45, 60_000, 8], [60, 90_000, 4], [35, 45_000, 12]], float)
    lab = rng.integers(0, 4, n)
    raw = centers[lab] + rng.normal(size=(n, 3)) * np.array([4.0, 4_000.0, 1.0])
    lo, hi = np.array([0.0, 0.0, 0.0]), np.array([100.0, 150_000.0, 20.0])
    return (raw - (lo + hi) / 2) / ((hi - lo) / 2)


def _stage_fn(X, radius, seed=0):
    cache = {}

    def stage(k, t):
        if (k, t) not in cache:
            cache[(k, t)] = fc_tuple_stage(X, k, n_tuples=t, radius=radius,
                                           rng=np.random.default_rng(seed))
        return cache[(k, t)]
    return stage


def _fc_succeeds(X, stage_fn, *, k, t, rho, radius, seed=1) -> bool:
    r = fc_private_stage(X, stage_fn(k, t), rho=rho, delta=DELTA, radius=radius, r_min=1e-3 * radius,
                         n_declared=X.shape[0], rng=np.random.default_rng(seed))
    return r.find("fallback").data["used"] is False and r.centers is not None


def test_expected_kept_share_is_the_filters_keep_probability():
    w = np.array([10, 40, 55, 60, 60, 3], dtype=float)
    n, rho, delta = w.size, 2.0, 1e-6
    rho1, rho2 = 0.1 * rho, 0.9 * rho
    n_hat = n + math.sqrt(math.log(2 / delta) / rho1)
    thr = zcdp_threshold(n_hat, rho2, delta)
    sd = math.sqrt(n_hat / (8 * rho2))
    want = np.mean([NormalDist().cdf((wi - n / 2 - thr) / sd) for wi in w])
    assert expected_kept_share(w, rho=rho, delta=delta) == pytest.approx(want, rel=1e-12)
    assert expected_kept_share(np.array([]), rho=1.0, delta=delta) == 0.0


def test_public_part_is_the_public_margins_and_ignores_the_rows():
    ds = dpviz.data.GENERATORS["fig6_blobs"](20_000, rng=0)
    kw = dict(k=8, t=200, rho=1.0, delta=DELTA, radius=ds.radius, r_min=1e-3 * ds.radius)
    v = triage(ds.X, **kw)
    split = presets.resolve_split("practical", t=200, k=8, rho=1.0, delta=DELTA,
                                  r_min=kw["r_min"], radius=ds.radius)
    want = presets.margins(split, t=200, k=8, rho=1.0, delta=DELTA, r_min=kw["r_min"],
                           radius=ds.radius, base=1.5)
    assert v.public_margins == want
    assert v.rows_per_piece == 100
    other = triage(np.random.default_rng(5).uniform(-1, 1, size=(20_000, 2)), **kw)
    assert other.public_margins == want and other.public_line == v.public_line
    assert "Non-private diagnostic" in v.data_line and "public inputs only" in v.public_line


@pytest.mark.parametrize("rho, expect", [(1.0, True), (0.3, False), (0.1, False)])
def test_verdict_predicts_the_real_run_on_the_default_lesson(rho, expect):
    ds = dpviz.data.GENERATORS["fig6_blobs"](20_000, rng=0)
    stage = _stage_fn(ds.X, ds.radius)
    v = triage(ds.X, k=8, t=200, rho=rho, delta=DELTA, radius=ds.radius, r_min=1e-3 * ds.radius,
               stage_fn=stage)
    assert v.success is expect
    assert _fc_succeeds(ds.X, stage, k=8, t=200, rho=rho, radius=ds.radius) is expect
    if not expect:
        assert v.reason == "budget" and v.agreement >= AGREE_SHARE
        (sug,) = [s for s in v.suggestions if s.kind == "rho"]
        # the slider stop where the core forms (docs/app.md; 0.794 before issue 33's known-size
        # filters moved it one stop down)
        assert sug.changes == {"rho": 0.631}
        assert _fc_succeeds(ds.X, stage, k=8, t=200, rho=0.631, radius=ds.radius)


def test_customers_disagree_at_k8_and_the_k_suggestion_gives_a_success():
    X = customers(20_000)
    radius = math.sqrt(3)  # the declared box [-1, 1]^3
    stage = _stage_fn(X, radius)
    v = triage(X, k=8, t=200, rho=1.0, delta=DELTA, radius=radius, r_min=1e-3 * radius, stage_fn=stage)
    assert not v.success and v.reason == "disagree"
    assert v.headline.startswith("Predicted: FriendlyCore's core does not form — 200 pieces of 100 rows")
    assert not _fc_succeeds(X, stage, k=8, t=200, rho=1.0, radius=radius)
    sug = next(s for s in v.suggestions if s.kind == "k")
    assert sug.changes["k"] == 4, sug
    p = {"k": 8, "t": 200, "rho": 1.0} | sug.changes
    assert _fc_succeeds(X, stage, radius=radius, **p)


def test_too_small_pieces_and_iris():
    ir = dpviz.data.BUILTIN["iris"]()
    v = triage(ir.X, k=8, t=100, rho=1.0, delta=DELTA, radius=ir.radius, r_min=1e-3 * ir.radius)
    assert v.reason == "too_small" and not v.success
    assert v.suggestions[0].changes == {"t": 3}  # 150 // (5·8)
    v3 = triage(ir.X, k=3, t=10, rho=1.0, delta=DELTA, radius=ir.radius, r_min=1e-3 * ir.radius)
    assert not v3.success
    (n_sug,) = [s for s in v3.suggestions if s.kind == "n"]
    # 75 pieces × 30 rows (150 pieces, 4,500 rows before issue 33's known-size filters)
    assert n_sug.changes == {} and "2,300 rows" in n_sug.text
