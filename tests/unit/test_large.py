"""dpviz.large: chunked tables, keyed-hash pieces, the streamed FC pipeline, threads vs Dask."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpviz.clustering.friendlycore.pipeline import fc_clustering, fc_private_stage
from dpviz.clustering.grid_coreset import fallback_centers
from dpviz.data import fig6_blobs
from dpviz.large import (
    DaskEngine,
    TableSource,
    ThreadEngine,
    fc_private_stream,
    fc_stream,
    keyed_pieces,
    run_stream,
    stream_tuple_stage,
)
from dpviz.large.fc_stream import stream_fallback
from dpviz.metrics import kmeans_cost
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.registry import Public, calibrate, get

K, T, N = 8, 100, 24_000
RHO, DELTA, R_MIN = 3.0, 1e-8, 1e-3


@pytest.fixture(scope="module")
def blobs():
    X = fig6_blobs(N, k=K, rng=0).X.copy()
    X[:5] *= 3.0  # five rows outside the Λ-ball (dropped per row)
    return X


def _write_parquet(X: np.ndarray, path, row_group_size: int) -> None:
    table = pa.table({f"c{j}": X[:, j] for j in range(X.shape[1])})
    pq.write_table(table, path, row_group_size=row_group_size)


def _stage(src, rng=3, engine=None, t=T):
    return stream_tuple_stage(src, K, n_tuples=t, radius=1.0, n_declared=N, rng=rng,
                              engine=engine or ThreadEngine(2))


def _ledger_rows_equal(a: Ledger, b: Ledger) -> None:
    ra, rb = a.to_rows(), b.to_rows()
    assert [r["id"] for r in ra] == [r["id"] for r in rb]
    for x, y in zip(ra, rb, strict=True):
        assert x["mechanism"] == y["mechanism"] and x["unit"] == y["unit"]
        np.testing.assert_allclose([x["rho"], x["delta"]], [y["rho"], y["delta"]], rtol=1e-12)
        if x["noise_scale"] is not None:
            np.testing.assert_allclose(x["noise_scale"], y["noise_scale"], rtol=1e-9)


# ----------------------------------------------------------------------------- pieces


def test_keyed_pieces_depend_on_the_row_only():
    X = np.random.default_rng(1).normal(size=(5000, 3))
    key = (123, 456)
    p = keyed_pieces(X, key, 40)
    perm = np.random.default_rng(2).permutation(5000)
    assert np.array_equal(keyed_pieces(X[perm], key, 40), p[perm])  # position-free
    assert np.array_equal(np.concatenate([keyed_pieces(X[:1234], key, 40),
                                          keyed_pieces(X[1234:], key, 40)]), p)  # chunk-free
    assert not np.array_equal(keyed_pieces(X, (124, 456), 40), p)  # the key matters
    Z = np.array([[0.0, 1.0], [-0.0, 1.0]])
    assert keyed_pieces(Z, key, 7)[0] == keyed_pieces(Z, key, 7)[1]  # −0.0 is 0.0


def test_keyed_pieces_look_uniform():
    """Chi-square goodness of fit over t = 50 pieces, n = 1e5 distinct rows (df = 49)."""
    X = np.random.default_rng(3).normal(size=(100_000, 2))
    counts = np.bincount(keyed_pieces(X, (9, 10), 50), minlength=50)
    expected = 100_000 / 50
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 90.0  # the 0.9999 quantile of χ²(49) is ≈ 93.6


# ----------------------------------------------------------------------------- tuples


def test_tuples_identical_for_any_chunking_file_layout_and_format(blobs, tmp_path):
    ref = _stage(TableSource(blobs, chunk_rows=N), engine=ThreadEngine(1))
    assert ref.n_rows == N and ref.n_outside == 5
    assert ref.stage.tuples.shape == (T, K, 2) and ref.stage.piece_sizes.sum() == N - 5
    _write_parquet(blobs, tmp_path / "one.parquet", row_group_size=3000)
    d = tmp_path / "dir"
    d.mkdir()
    for i, s in enumerate(range(0, N, 7000)):  # a directory of files (sorted by name)
        _write_parquet(blobs[s:s + 7000], d / f"part-{i:02d}.parquet", row_group_size=1000)
    c = tmp_path / "csv"
    c.mkdir()
    for i, s in enumerate(range(0, N, 10_000)):
        np.savetxt(c / f"p{i}.csv", blobs[s:s + 10_000], delimiter=",", header="c0,c1", comments="",
                   fmt="%.17g")
    sources = [
        TableSource(blobs, chunk_rows=1000, batch_rows=300),
        TableSource(blobs, chunk_rows=5000, batch_rows=5000),
        TableSource(tmp_path / "one.parquet", chunk_rows=1, batch_rows=777),
        TableSource(tmp_path / "one.parquet", chunk_rows=10_000),
        TableSource(d, chunk_rows=2500, batch_rows=4096),
        TableSource(c, batch_rows=2000),
    ]
    for src in sources:
        st = _stage(src)
        assert np.array_equal(st.stage.tuples, ref.stage.tuples), src
        assert np.array_equal(st.stage.piece_sizes, ref.stage.piece_sizes), src


def test_one_row_changes_one_tuple(blobs):
    """Removing a row changes at most its own piece's tuple (the sample-and-aggregate premise)."""
    full = _stage(TableSource(blobs, chunk_rows=4000))
    drop = 1234
    less = _stage(TableSource(np.delete(blobs, drop, axis=0), chunk_rows=4000))
    changed = np.flatnonzero(np.any(full.stage.tuples != less.stage.tuples, axis=(1, 2)))
    resized = np.flatnonzero(full.stage.piece_sizes != less.stage.piece_sizes)
    assert resized.size == 1 and (full.stage.piece_sizes - less.stage.piece_sizes).sum() == 1
    assert np.array_equal(changed, resized)  # that piece's tuple moved, no other did


def test_seed_changes_pieces(blobs):
    a, b = _stage(TableSource(blobs), rng=3), _stage(TableSource(blobs), rng=4)
    assert not np.array_equal(a.stage.piece_sizes, b.stage.piece_sizes)


# ----------------------------------------------------------------------------- private part


def _in_memory_twin(st, n):
    """The streamed stage as an in-memory TupleStage (fc_private_stage only checks the row count)."""
    return dataclasses.replace(st.stage, piece_of_row=np.zeros(n, dtype=np.int64))


def test_private_stage_matches_in_memory(blobs):
    """Same split, draws, ledger and (up to summation order) centers as fc_private_stage."""
    st = _stage(TableSource(blobs, chunk_rows=3000, batch_rows=1000))
    res = fc_private_stream(st, rho=RHO, delta=DELTA, r_min=R_MIN, n_declared=N, rng=11,
                            engine=ThreadEngine(2))
    mem = fc_private_stage(blobs, _in_memory_twin(st, N), rho=RHO, delta=DELTA, radius=1.0, r_min=R_MIN,
                           n_declared=N, rng=11)
    assert res.ok and mem.ok and not res.step("fallback").data["used"]
    np.testing.assert_allclose(res.centers, mem.centers, rtol=0, atol=1e-12)
    _ledger_rows_equal(res.ledger, mem.ledger)
    tot = res.ledger.total()
    assert tot.rho == pytest.approx(RHO, rel=1e-12) and tot.delta == pytest.approx(DELTA, rel=1e-12)
    np.testing.assert_array_equal(res.step("lloyd_partition").data["counts"],
                                  mem.step("lloyd_partition").data["counts"])
    assert res.step("lloyd_partition").data["n_removed"] == 5


def test_fallback_branch_matches_in_memory_with_the_same_totals(blobs):
    """At a tiny ρ the core is empty: the streamed fallback answers as the in-memory one, and the
    ledger totals equal the success branch's (every branch accounts the whole budget)."""
    rho = 1e-4
    st = _stage(TableSource(blobs, chunk_rows=5000))
    res = fc_private_stream(st, rho=rho, delta=DELTA, r_min=R_MIN, n_declared=N, rng=2)
    mem = fc_private_stage(blobs, _in_memory_twin(st, N), rho=rho, delta=DELTA, radius=1.0, r_min=R_MIN,
                           n_declared=N, rng=2)
    assert res.step("fallback").data["used"] and mem.step("fallback").data["used"]
    np.testing.assert_allclose(res.centers, mem.centers, atol=1e-12)
    _ledger_rows_equal(res.ledger, mem.ledger)
    assert res.ledger.total().rho == pytest.approx(rho, rel=1e-12)
    assert res.ledger.total().delta == pytest.approx(DELTA, rel=1e-12)


def test_projected_fallback_matches_in_memory():
    """d > 3: noisy XᵀX, projected quadtree and group sums, all as sums over chunks."""
    X = fig6_blobs(6000, k=4, d=6, rng=np.random.default_rng(5)).X  # old seed 5's draw (issue 24)
    src = TableSource(X, chunk_rows=1000, batch_rows=400)
    st = stream_tuple_stage(src, 4, n_tuples=20, radius=1.0, n_declared=6000, rng=0)
    la, lb = Ledger("a", ZCDP(0.5)), Ledger("a", ZCDP(0.5))
    a = stream_fallback(st, 4, rho=0.5, n_declared=6000, rng=np.random.default_rng(7), ledger=la,
                        engine=ThreadEngine(2))
    Xin = X[np.einsum("ij,ij->i", X, X) <= 1.0]  # the rows fc_private_stage hands the fallback
    assert len(Xin) < len(X)  # clipped rows whose norm rounds above 1 are dropped in both
    b = fallback_centers(Xin, 4, rho=0.5, radius=1.0, n_declared=6000, rng=np.random.default_rng(7),
                         ledger=lb)
    np.testing.assert_allclose(a.centers, b.centers, atol=1e-9)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-9)
    _ledger_rows_equal(la, lb)


def test_accuracy_equivalent_to_in_memory(blobs):
    """Same k-means cost as fc_clustering (different piece draws), over 3 seeds each."""
    X = blobs[5:]
    cost_s = [kmeans_cost(X, fc_stream(X, K, rho=RHO, delta=DELTA, radius=1.0, r_min=R_MIN,
                                       n_declared=len(X), n_tuples=T, rng=s).centers) for s in range(3)]
    cost_m = [kmeans_cost(X, fc_clustering(X, K, rho=RHO, delta=DELTA, radius=1.0, r_min=R_MIN,
                                           n_declared=len(X), n_tuples=T, rng=s).centers) for s in range(3)]
    assert np.median(cost_s) <= 1.15 * np.median(cost_m)
    assert np.median(cost_m) <= 1.15 * np.median(cost_s)


def test_run_stream_meets_the_row_level_target(blobs, tmp_path):
    _write_parquet(blobs, tmp_path / "x.parquet", row_group_size=5000)
    res = run_stream(tmp_path / "x.parquet", K, epsilon=3.0, delta=1e-6, radius=1.0, n_declared=N, rng=0)
    assert res.algorithm == "friendlycore" and res.centers.shape == (K, 2)
    assert res.guarantee.eps <= 3.0 * (1 + 1e-12) and res.guarantee.delta <= 1e-6
    spec = get("friendlycore")
    cal = calibrate(spec, 3.0, 1e-6, Public(N, 2, K, 1.0), spec.make_params())
    assert res.ledger.total().rho == pytest.approx(cal.budget.rho, rel=1e-12)
    assert res.params["n_declared"] == N and res.params["n_tuples"] == min(200, N // (10 * K))
    with pytest.raises(ValueError, match="no streamed implementation"):
        run_stream(tmp_path / "x.parquet", K, epsilon=3.0, delta=1e-6, radius=1.0, n_declared=N,
                   algorithm="diffprivlib")


# ----------------------------------------------------------------------------- Dask


def test_dask_local_cluster_gives_the_same_tuples_and_release(blobs):
    distributed = pytest.importorskip("distributed")
    threads = _stage(TableSource(blobs, chunk_rows=6000), engine=ThreadEngine(2))
    res_t = fc_stream(blobs, K, rho=RHO, delta=DELTA, radius=1.0, r_min=R_MIN, n_declared=N, n_tuples=T,
                      rng=9, chunk_rows=8000)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as lc, distributed.Client(lc) as client:
        dask = _stage(TableSource(blobs, chunk_rows=4000), engine=DaskEngine(client))
        res_d = fc_stream(blobs, K, rho=RHO, delta=DELTA, radius=1.0, r_min=R_MIN, n_declared=N, n_tuples=T,
                          rng=9, chunk_rows=3000, scheduler=client)
        assert client.status == "running"  # a caller's Client is not closed
        fb_d = fc_private_stream(dask, rho=1e-4, delta=DELTA, r_min=R_MIN, n_declared=N, rng=2,
                                 engine=DaskEngine(client))  # the fallback's passes on the workers
    fb_t = fc_private_stream(threads, rho=1e-4, delta=DELTA, r_min=R_MIN, n_declared=N, rng=2)
    assert fb_d.step("fallback").data["used"] and fb_t.step("fallback").data["used"]
    np.testing.assert_allclose(fb_d.centers, fb_t.centers, atol=1e-12)
    assert np.array_equal(dask.stage.tuples, threads.stage.tuples)
    assert res_d.params["engine"] == "dask" and res_t.params["engine"] == "threads"
    np.testing.assert_allclose(res_d.centers, res_t.centers, atol=1e-12)
    _ledger_rows_equal(res_d.ledger, res_t.ledger)


# ----------------------------------------------------------------------------- sources


def test_source_drops_non_finite_rows_and_selects_columns(tmp_path):
    X = np.arange(30, dtype=float).reshape(10, 3)
    X[2, 1] = np.nan
    X[7, 0] = np.inf
    table = pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "name": [f"r{i}" for i in range(10)]})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=4)
    src = TableSource(tmp_path / "t.parquet", columns=["a", "c"], chunk_rows=3, batch_rows=2)
    got = src.read_all()
    keep = np.all(np.isfinite(X[:, [0, 2]]), axis=1)  # NaN in column b does not count
    np.testing.assert_array_equal(got, X[keep][:, [0, 2]])
    assert src.d == 2 and len(src.chunks()) == 3  # 3 row groups of ≤ 4 rows
    with pytest.raises(ValueError, match="not numeric"):
        TableSource(tmp_path / "t.parquet").read_all()
    with pytest.raises(ValueError, match=r"Column\(s\) \['zz'\] not in the table"):
        TableSource(tmp_path / "t.parquet", columns=["zz"])


def test_source_rejects_bad_paths(tmp_path):
    with pytest.raises(ValueError, match="No such file"):
        TableSource(tmp_path / "missing.parquet")
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(ValueError, match=r"not a \.parquet"):
        TableSource(tmp_path / "a.txt")
    with pytest.raises(ValueError, match=r"holds no \.parquet"):
        TableSource(tmp_path)
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    _write_parquet(np.zeros((3, 2)), tmp_path / "b.parquet", 2)
    with pytest.raises(ValueError, match="mixes Parquet and CSV"):
        TableSource(tmp_path)
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="Cannot read"):
        TableSource(tmp_path / "bad.parquet")


def test_csv_reads_every_block_as_float(tmp_path):
    """Integers for 2 MB, then a decimal and missing values: no mid-file type error; NA rows dropped."""
    path = tmp_path / "t.csv"
    i = np.arange(300_000)
    body = "\n".join(f"{a},{b}" for a, b in zip(i, i % 7, strict=True))
    path.write_text("a,b\n" + body + "\n1.5,2.5\n,3\nNA,4\n")
    X = TableSource(path, batch_rows=1000).read_all()
    assert X.shape == (300_001, 2)
    np.testing.assert_array_equal(X[-1], [1.5, 2.5])
    np.testing.assert_array_equal(X[:300_000, 1], i % 7)
