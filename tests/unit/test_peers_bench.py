"""Issue 18's benches: FriendlyCore's smallest-n predictor and the small-data floor (bench/)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fc_core_n_predictor_reads_public_margins():
    fc = _load("fc_core_n")
    from dpviz.clustering.friendlycore.budget import MARGIN_MATCH

    p = fc.predicted(1_024_000, 3.0)
    assert p["t"] == 5000  # auto_n_tuples caps at MAX_AUTO_TUPLES
    # docs/peers.md's t = 5000 row measured +1.98; issue 33 (known-size filters, Lloyd floor 0.05)
    # raised the predicted margin at the same row-level (ε, δ) to +3.62
    assert p["margins"][MARGIN_MATCH] == pytest.approx(3.62, abs=0.01)
    assert p["level"] == pytest.approx(min(p["margins"][key] / fc.TARGETS[key] for key in fc.TARGETS))
    # the threshold (0.25) separates the boundary points of ε = 10 since issue 33
    # (bench/fc_core_formation.py --fixed-data: 0/2 at n = 5e4, 20/20 at 1e5)
    assert fc.predicted(64_000, 10.0)["level"] < 0.25 <= fc.predicted(128_000, 10.0)["level"]
    # above the cap an explicit t is honoured for the margins (ρ of the largest valid t)
    big = fc.predicted(8_192_000, 1.0, t=40_960)
    assert big["t"] == 40_960 and big["level"] > fc.predicted(8_192_000, 1.0)["level"]


def test_floor_at_a_huge_budget_reaches_the_partition_and_the_mean():
    peers = _load("peers")
    f = peers.floor("iris", 300.0, draws=5)  # (the registry's calibration overflows above ~300)
    assert f["partition"] == pytest.approx(0.0, abs=1e-3)  # the free optimal partition, no noise
    assert f["mean"] == pytest.approx(f["origin"], rel=1e-3)  # standardized: the mean is the origin
    low = peers.floor("iris", 1.0, draws=5)
    assert low["rho"] < f["rho"] and low["partition"] > f["partition"]


def test_peers_table_merges_a_second_data_seed_and_replaces_a_rerun():
    """Issue 35: a file adding data seed 1 keeps seed 0's runs; a rerun of seed 0 replaces them."""
    peers = _load("peers")

    def rec(seed: int, draw: int, loss: float) -> dict:
        return dict(row="iris", seed=seed, epsilon=1.0, label="tree_coreset", loss=loss, draw=draw)

    first = [rec(0, j, 1.0) for j in range(3)]
    merged = peers.merge([first, [rec(1, j, 2.0) for j in range(3)]])
    assert sorted((r["seed"], r["loss"]) for r in merged) == [(0, 1.0)] * 3 + [(1, 2.0)] * 3
    rerun = peers.merge([first, [rec(0, 0, 5.0)]])
    assert [(r["seed"], r["loss"]) for r in rerun] == [(0, 5.0)]
