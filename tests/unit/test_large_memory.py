"""Memory of the driver's stage at large t: match_matrix's π check runs in blocks (issue 17).

At t = 5000, k = 16 the match graph's π is t²k = 400 MB (uint8); checking π_ba ∘ π_ab = id over
all pairs at once held two more arrays of that size (the 10⁷-row CLI run peaked at 2.2 GB).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpviz.core.tuple_predicates as tp


def _tuples(t: int, k: int, d: int, seed: int = 0) -> np.ndarray:
    g = np.random.default_rng(seed)
    C = g.uniform(-1, 1, (k, d))
    T = C[None] + 0.02 * g.standard_normal((t, k, d))
    T[: t // 5] = g.uniform(-1, 1, (t // 5, k, d))  # a fifth of the tuples match nothing
    return np.stack([x[g.permutation(k)] for x in T])


def _inverse_at_once(pi: np.ndarray) -> np.ndarray:
    back = np.take_along_axis(pi.transpose(1, 0, 2), pi, axis=2)
    return np.all(back == np.arange(pi.shape[2], dtype=pi.dtype), axis=2)


@pytest.mark.parametrize("entries", [1, 7 * 16, 10**9])
def test_blocked_inverse_equals_the_all_pairs_check(monkeypatch, entries):
    g = np.random.default_rng(1)
    pi = g.integers(0, 4, (37, 37, 4)).astype(np.uint8)
    pi[::3] = np.arange(4)  # identities: some pairs are inverse
    pi[:, ::3] = np.arange(4)
    monkeypatch.setattr(tp, "_INVERSE_BLOCK_ENTRIES", entries)
    np.testing.assert_array_equal(tp._inverse(pi), _inverse_at_once(pi))


def test_match_matrix_unchanged_by_blocking(monkeypatch):
    T = _tuples(120, 5, 3)
    want = tp.match_matrix(T)
    assert 0 < want.sum() < want.size
    monkeypatch.setattr(tp, "_INVERSE_BLOCK_ENTRIES", 5 * 120 * 7)
    np.testing.assert_array_equal(tp.match_matrix(T), want)


#: The peak is measured in a fresh interpreter: tracemalloc's peak counts every thread of the
#: process, and in the test process an earlier test's threads (a Dask client's event loop, an
#: engine's workers still finishing) allocate while match_matrix runs; under load they ran longer
#: and the peak failed by what they held, not by match_matrix's blocks.
_PEAK = """
import sys, tracemalloc
sys.path.insert(0, sys.argv[1])
import dpviz.core.tuple_predicates as tp
from test_large_memory import _tuples
t, k = 400, 16
T = _tuples(t, k, 2)
tp._BLOCK_ENTRIES = 20_000  # small distance slices: pi dominates
tp._INVERSE_BLOCK_ENTRIES = 100_000
tracemalloc.start()
tp.match_matrix(T)
print(tracemalloc.get_traced_memory()[1])
"""


def test_match_matrix_peak_is_pi_plus_a_block():
    t, k = 400, 16
    pi_bytes = t * t * k  # uint8
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", _PEAK, str(Path(__file__).parent)], env=env,
                         cwd=root, capture_output=True, text=True, timeout=300, check=True)
    peak = int(out.stdout.split()[-1])
    # π, rows_ok/out (t² bools each, a few), the input and one block of each kind; the
    # all-pairs check (π, its gather and the comparison) would be ≥ 3·t²k = 7.7 MB.
    assert peak < 1.5 * pi_bytes, f"peak {peak / 1e6:.2f} MB for π of {pi_bytes / 1e6:.2f} MB"


def test_file_chunks_return_the_reader_pool_memory(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    import dpviz.large.source as so

    X = np.random.default_rng(0).normal(size=(5000, 3))
    pq.write_table(pa.table({f"c{j}": X[:, j] for j in range(3)}), tmp_path / "x.parquet",
                   row_group_size=1000)
    calls = []
    monkeypatch.setattr(so, "release_reader_memory", lambda: calls.append(1))
    chunks = so.TableSource(tmp_path / "x.parquet", chunk_rows=2000, batch_rows=500).chunks()
    got = np.concatenate([b for c in chunks for b in c.batches()])
    np.testing.assert_array_equal(got, X)
    assert len(calls) == len(chunks) == 3  # once per file chunk, after its last batch
    for _ in so.TableSource(X, chunk_rows=2000).chunks()[0].batches():
        pass
    assert len(calls) == 3  # an in-memory chunk reads nothing through pyarrow
