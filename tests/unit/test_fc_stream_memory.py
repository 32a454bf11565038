"""FriendlyCore's streamed pass 1 in bounded memory (issue 38): blocks sized from public sizes,
run in waves that re-read the chunks, the same tuples whatever the waves."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest

from dpviz._validation import check_rng
from dpviz.clustering.tuples import N_BLOCKS, block_streams, tuples_from_pieces
from dpviz.data import fig6_blobs
from dpviz.large import TableSource, ThreadEngine, keyed_pieces, stream_tuple_stage
from dpviz.large.fc_stream import BLOCK_BYTES, pass1_plan, stream_fallback
from dpviz.large.pieces import draw_key
from dpviz.privacy.ledger import Ledger

# The module (``dpviz.large.fc_stream`` the attribute is the function of that name).
fcs = importlib.import_module("dpviz.large.fc_stream")

K, T, N, D = 4, 60, 12_000, 2
#: A block budget that cuts the 12,000 × 2 float32 rows (96,000 bytes) into 20 blocks.
SMALL = 4 * N * D // 20


@pytest.fixture(scope="module")
def blobs():
    return fig6_blobs(N, k=K, rng=11).X


def test_pass1_plan_small_tables_keep_the_in_memory_blocks_and_one_read():
    assert pass1_plan(200, 20_000, 2, slots=2) == (N_BLOCKS, N_BLOCKS)
    assert pass1_plan(5, 20_000, 2, slots=2) == (5, 5)  # never more blocks than pieces


def test_pass1_plan_bounds_a_block_at_1e8_and_1e9_rows():
    for n, waves_at_least in ((10**8, 10), (10**9, 100)):
        blocks, per_wave = pass1_plan(5000, n, 10, slots=2)
        assert 4.0 * n * 10 / blocks <= BLOCK_BYTES  # one block's rows fit the plan
        assert per_wave == 2  # one block per slot at a time
        assert -(-blocks // per_wave) >= waves_at_least
    assert pass1_plan(30, 10**9, 10, slots=2)[0] == 30  # t caps the blocks (then memory is t's)


def test_waves_do_not_change_the_tuples(blobs):
    """1 slot (20 waves) and 20 slots (1 wave) give identical tuples: the blocks and their seeds
    depend on public sizes only, and a wave's read keeps exactly its blocks' rows."""
    src = TableSource(blobs, chunk_rows=1000)
    a = stream_tuple_stage(src, K, n_tuples=T, radius=1.0, n_declared=N, rng=3, engine=ThreadEngine(1),
                           block_bytes=SMALL)
    b = stream_tuple_stage(src, K, n_tuples=T, radius=1.0, n_declared=N, rng=3, engine=ThreadEngine(20),
                           block_bytes=SMALL)
    np.testing.assert_array_equal(a.stage.tuples, b.stage.tuples)
    np.testing.assert_array_equal(a.stage.piece_sizes, b.stage.piece_sizes)
    assert (a.n_rows, a.n_outside) == (b.n_rows, b.n_outside) == (N, 0)


def test_streamed_tuples_equal_the_blocks_computed_in_memory(blobs):
    """The waves' tuples are the oracle's on each block's rows, as computed directly."""
    src = TableSource(blobs, chunk_rows=1000)
    st = stream_tuple_stage(src, K, n_tuples=T, radius=1.0, n_declared=N, rng=5, engine=ThreadEngine(2),
                            block_bytes=SMALL)
    gen = check_rng(5, "algorithm:friendlycore")[0]  # the stage's own stream, replayed
    key = draw_key(gen)
    streams = block_streams(T, gen, 20)
    piece = keyed_pieces(blobs, key, T)
    expect = []
    for s, seed in streams:
        rows = (piece >= s.start) & (piece < s.stop)
        expect.append(tuples_from_pieces(blobs[rows].astype(np.float32), piece[rows] - s.start,
                                         s.stop - s.start, K, seed=seed, method=st.stage.method))
    np.testing.assert_allclose(st.stage.tuples, np.concatenate(expect), rtol=0, atol=0)


def test_no_block_holds_more_than_its_share_and_each_wave_reads_once(blobs, monkeypatch):
    sizes, reads = [], []
    real_block, real_split = fcs.block_tuples, fcs.split_chunk

    def block(parts, lo, hi, *args):
        sizes.append(sum(p[0].nbytes for p in parts))
        return real_block(parts, lo, hi, *args)

    def split(chunk, *args):
        reads.append(1)
        return real_split(chunk, *args)

    monkeypatch.setattr(fcs, "block_tuples", block)
    monkeypatch.setattr(fcs, "split_chunk", split)
    src = TableSource(blobs, chunk_rows=1000)
    stream_tuple_stage(src, K, n_tuples=T, radius=1.0, n_declared=N, rng=3, engine=ThreadEngine(2),
                       block_bytes=SMALL)
    assert len(sizes) == 20
    # The keyed hash spreads rows evenly: a block of 3 pieces holds ≈ 600 rows (4,800 bytes);
    # 1.3× leaves > 4 sd of binomial room.
    assert max(sizes) <= 1.3 * SMALL
    assert len(reads) == 10 * len(src.chunks())  # 20 blocks, 2 per wave: 10 reads of 12 chunks


def test_fallback_rereading_per_level_gives_the_same_release(blobs):
    src = TableSource(blobs, chunk_rows=1000)
    st = stream_tuple_stage(src, K, n_tuples=T, radius=1.0, n_declared=N, rng=3, engine=ThreadEngine(2))
    outs = []
    for bb in (BLOCK_BYTES, 8):  # keep the grid coordinates / re-read the chunks every level
        ledger = Ledger("fallback")
        outs.append(stream_fallback(dataclasses.replace(st, block_bytes=bb), K, rho=0.5, n_declared=N,
                                    rng=np.random.default_rng(7), ledger=ledger, engine=ThreadEngine(2)))
    np.testing.assert_array_equal(outs[0].centers, outs[1].centers)
    np.testing.assert_array_equal(outs[0].weights, outs[1].weights)
