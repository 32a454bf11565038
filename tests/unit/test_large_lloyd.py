"""Streamed DP-Lloyd (dpviz.large.lloyd_stream) equals the in-memory dp_lloyd for a fixed seed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import dpviz
from dpviz.clustering.auto import choose, choose_from
from dpviz.clustering.baselines import dp_lloyd, dp_lloyd_sigmas
from dpviz.data import fig6_blobs
from dpviz.data.bounds import row_norms
from dpviz.large import TableSource, ThreadEngine, dp_lloyd_stream, run_stream
from dpviz.large.lloyd_stream import chunk_lloyd_sums
from dpviz.large.run import STREAMED
from dpviz.registry import Public, calibrate, get

K, N, D = 6, 12_000, 3
RHO = 0.4


@pytest.fixture(scope="module")
def rows():
    X = fig6_blobs(N, k=K, d=D, rng=1).X.copy()
    # Seven rows outside the Λ-ball (norm 2): removed per row by both paths.
    X[:7] *= 2.0 / np.linalg.norm(X[:7], axis=1, keepdims=True)
    return X


@pytest.fixture(scope="module")
def parquet(rows, tmp_path_factory):
    path = tmp_path_factory.mktemp("lloyd") / "x.parquet"
    pq.write_table(pa.table({f"c{j}": rows[:, j] for j in range(D)}), path, row_group_size=1500)
    return path


def _ledger_rows_equal(a, b) -> None:
    ra, rb = a.to_rows(), b.to_rows()
    assert [r["id"] for r in ra] == [r["id"] for r in rb]
    for x, y in zip(ra, rb, strict=True):
        assert (x["mechanism"], x["unit"], x["sensitivity"]) == (y["mechanism"], y["unit"], y["sensitivity"])
        np.testing.assert_allclose([x["rho"], x["delta"]], [y["rho"], y["delta"]], rtol=1e-12)
        if x["noise_scale"] is not None:
            np.testing.assert_allclose(x["noise_scale"], y["noise_scale"], rtol=1e-12)


def _released(res) -> list[tuple[str, dict]]:
    return [(s.name, s.data) for s in res.trace if s.released]


@pytest.mark.parametrize(("chunk_rows", "batch_rows", "n_jobs"), [(1500, 700, 1), (6000, 262_144, 2)])
def test_same_centres_and_ledger_as_in_memory(rows, parquet, chunk_rows, batch_rows, n_jobs):
    mem = dp_lloyd(rows, K, rho=RHO, delta=1e-7, radius=1.0, iters=4, rng=11)
    src = TableSource(parquet, chunk_rows=chunk_rows, batch_rows=batch_rows)
    got = dp_lloyd_stream(src, K, rho=RHO, delta=1e-7, radius=1.0, iters=4, rng=11, n_jobs=n_jobs)
    np.testing.assert_allclose(got.centers, mem.centers, rtol=0, atol=1e-12)
    _ledger_rows_equal(got.ledger, mem.ledger)
    assert got.ledger.total() == mem.ledger.total()
    a, b = _released(got), _released(mem)
    assert [n for n, _ in a] == [n for n, _ in b] == ["init"] + ["iteration"] * 4
    for (_, x), (_, y) in zip(a, b, strict=True):
        np.testing.assert_allclose(x["centers"], y["centers"], rtol=0, atol=1e-12)
        if "noisy_counts" in x:  # the counts are integers summed over chunks: exactly equal inputs
            np.testing.assert_allclose(x["noisy_counts"], y["noisy_counts"], rtol=0, atol=1e-9)
            assert (x["sigma_sum"], x["sigma_count"]) == dp_lloyd_sigmas(rho=RHO, radius=1.0, iters=4)
            np.testing.assert_array_equal(x["kept_previous"], y["kept_previous"])
    part = got.find("lloyd_partition")
    assert part.released is False and part.data["labels"] is None and part.data["n_removed"] == 7
    assert got.simulation and got.seed == 11


def test_chunk_sums_add_up_to_the_in_memory_partition(rows):
    C = rows[[10, 2000, 4000, 6000, 8000, 11_000]]
    parts = [chunk_lloyd_sums(c, 1.0, C) for c in TableSource(rows, chunk_rows=2500, batch_rows=999).chunks()]
    inside = row_norms(rows) <= 1.0  # dp_lloyd's rule (rows clipped to norm 1 sit on the boundary)
    lab = np.argmin(((rows[inside][:, None, :] - C[None]) ** 2).sum(2), axis=1)
    np.testing.assert_array_equal(sum(p[0] for p in parts), np.bincount(lab, minlength=K))
    want = np.stack([rows[inside][lab == j].sum(0) for j in range(K)])
    np.testing.assert_allclose(sum(p[1] for p in parts), want, rtol=1e-12, atol=1e-9)
    assert (sum(p[2] for p in parts), sum(p[3] for p in parts)) == (N, 7)


def test_public_init_and_csv(rows, tmp_path):
    path = tmp_path / "x.csv"
    pcsv.write_csv(pa.table({f"c{j}": rows[:, j] for j in range(D)}), path)
    init = np.full((K, D), 0.1) * np.arange(K)[:, None]
    mem = dp_lloyd(rows, K, rho=RHO, radius=1.0, iters=2, init=init, rng=5)
    got = dp_lloyd_stream(path, K, rho=RHO, radius=1.0, iters=2, init=init, rng=5, n_jobs=1)
    np.testing.assert_allclose(got.centers, mem.centers, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="finite"):
        dp_lloyd_stream(path, K, rho=RHO, radius=1.0, init=np.zeros((K + 1, D)))


def test_run_stream_equals_dpviz_run_for_dp_lloyd_and_auto(rows, parquet):
    kw = dict(epsilon=2.0, delta=1e-6, radius=1.0, n_declared=N, rng=7)
    mem = dpviz.run("dp_lloyd", rows, K, **kw)
    got = run_stream(parquet, K, algorithm="dp_lloyd", **kw, chunk_rows=3000)
    assert got.algorithm == "dp_lloyd" and got.guarantee == mem.guarantee
    np.testing.assert_allclose(got.centers, mem.centers, rtol=0, atol=1e-12)
    _ledger_rows_equal(got.ledger, mem.ledger)
    assert [s.name for s in got.trace if s.released] == [s.name for s in mem.trace if s.released]
    assert got.params["n_declared"] == N and got.params["budget"] == mem.params["budget"]
    # auto out of core chooses among the streamed algorithms (issue 24: the in-memory rule may
    # pick one that does not stream); when both pick the same, they release the same centers.
    streamed = choose_from(STREAMED, N, D, K, 2.0, 1e-6)
    got = run_stream(parquet, K, algorithm="auto", **kw, chunk_rows=3000)
    assert got.find("auto_choice").data["algorithm"] == streamed.algorithm == got.params["auto_choice"]
    assert got.algorithm == "auto" and got.seed == 7
    spec = get(streamed.algorithm)
    cal = calibrate(spec, 2.0, 1e-6, Public(N, D, K, 1.0), spec.make_params(**streamed.params))
    assert got.guarantee == cal.guarantee and got.guarantee.eps <= 2.0
    assert got.ledger.total().rho == pytest.approx(cal.budget.rho, rel=1e-12)
    if choose(N, D, K, 2.0, 1e-6).algorithm == streamed.algorithm:
        mem = dpviz.run("auto", rows, K, **kw)
        np.testing.assert_allclose(got.centers, mem.centers, rtol=0, atol=1e-12)


def test_thread_engine_is_reused_and_closed(rows):
    eng = ThreadEngine(2)
    a = dp_lloyd_stream(TableSource(rows, chunk_rows=3000), K, rho=RHO, radius=1.0, iters=2, rng=3)
    b = dp_lloyd_stream(rows, K, rho=RHO, radius=1.0, iters=2, rng=3, scheduler=eng)
    np.testing.assert_allclose(a.centers, b.centers, rtol=0, atol=1e-12)
    assert a.params["engine"] == "threads"
