"""An empirical privacy audit in the suite (issue 10): ε lower bounds never exceed the claims.

Neighbouring datasets D and D′ = D plus one row; many runs of each mechanism on both; threshold
events on the released output; Clopper–Pearson bounds (dpviz.privacy.audit) turn the hit counts
into a lower bound on ε at confidence 1 − α. The audit's own randomness is seeded (runs i use
seeds derived from i), so its verdict is reproducible. Tolerance: none on the claim — the lower
bound must be ≤ the claimed row-level ε; α = 0.05 over all events of one mechanism (Bonferroni).

The same audit must DETECT diffprivlib's empty-cluster leak on its unpatched update (finding 7).
The default runs take ~20 s on an idle core (~60 s on a loaded one); ``-m slow`` runs the bigger
version (4× the runs, tighter bounds); ``DPVIZ_AUDIT_SCALE`` multiplies the runs of both.
"""

import dataclasses
import os

import numpy as np
import pytest

from dpviz.clustering.baselines import diffprivlib_kmeans, dp_lloyd
from dpviz.clustering.friendlycore.pipeline import fc_private_stage
from dpviz.clustering.tuples import compute_tuples
from dpviz.data.generators import fig6_blobs
from dpviz.privacy.accounting import row_level_statement, zcdp_to_dp
from dpviz.privacy.audit import SequentialAudit, clopper_pearson, eps_lower_bound, sequential_audit

ALPHA = 0.05
SCALE = int(os.environ.get("DPVIZ_AUDIT_SCALE", "1"))  # multiply the number of runs


def _audit(run, events, runs: int, delta: float, claim: float) -> SequentialAudit:
    """The audit of ``claim`` over ``events`` with at most ``runs`` runs per side, stopped as soon
    as its verdict is decided (dpviz.privacy.audit.sequential_audit: α over all events, Bonferroni;
    its ``eps_lower`` is the bound of the runs drawn); ``run(dataset_index, i)`` returns one output."""
    def hits(j: int, i: int) -> list[bool]:
        out = run(j, i)
        return [bool(e(out)) for e in events]

    return sequential_audit(hits, len(events), claim_eps=claim, max_runs=runs, delta=delta, alpha=ALPHA)


def test_clopper_pearson_matches_known_values() -> None:
    lo, hi = clopper_pearson(0, 3000, 0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 3000), rel=1e-9)
    lo, hi = clopper_pearson(21, 3000, 0.05)
    assert lo < 21 / 3000 < hi and hi - lo < 0.01
    # The finding's counts (0/3000 on D, 21/3000 on D plus one row) bound ε away from 0.
    assert eps_lower_bound(0, 21, 3000, alpha=0.05).eps_lower > 1.0


# ----------------------------------------------------------------------------- diffprivlib

CORNER = np.array([[1.0, 1.0]])
X_DPL = np.zeros((200, 2))  # every row at the origin: a second cluster is empty on D


def _diffprivlib_audit(patched: bool, runs: int) -> SequentialAudit:
    data = (X_DPL, np.vstack([X_DPL, CORNER]))

    def run(j, i):
        return diffprivlib_kmeans(data[j], 2, eps=1.0, radius=1.0, iters=1, rng=10_000 * j + i,
                                  patched=patched).centers

    # Unpatched, an empty cluster keeps its initial center, which diffprivlib draws at least
    # 0.25·(box width) inside the box; a noised center reaches the outer band.
    return _audit(run, [lambda c: np.any(np.abs(c) > 0.8)], runs, delta=0.0, claim=1.0)


def test_audit_detects_the_unpatched_diffprivlib_leak() -> None:
    audit = _diffprivlib_audit(patched=False, runs=250 * SCALE)
    assert audit.leak and audit.eps_lower > 1.0  # claimed ε = 1


@pytest.mark.slow
def test_audit_of_the_patched_diffprivlib_adapter() -> None:
    assert not _diffprivlib_audit(patched=True, runs=250 * SCALE).leak


# ----------------------------------------------------------------------------- DP-Lloyd


def test_audit_of_dp_lloyd() -> None:
    rho, delta_prime = 0.05, 1e-6
    X = np.random.default_rng(0).normal(0, 0.05, (300, 2))
    data = (X, np.vstack([X, [[0.99, 0.0]]]))
    init = np.array([[0.0, 0.0]])

    def run(j, i):
        res = dp_lloyd(data[j], 1, rho=rho, radius=1.0, iters=1, init=init, rng=20_000 * j + i)
        return res.step("iteration").data["noisy_counts"][0], res.centers[0, 0]

    claimed = row_level_statement(dp_lloyd(X, 1, rho=rho, radius=1.0, iters=1, init=init, rng=0)
                                  .ledger, delta_prime).row
    assert claimed.eps == pytest.approx(zcdp_to_dp(rho, delta_prime))
    events = [lambda o: o[0] > 301.0, lambda o: o[1] > 0.003]
    assert not _audit(run, events, 800 * SCALE, delta=claimed.delta, claim=claimed.eps).leak


# ----------------------------------------------------------------------------- FriendlyCore


@pytest.mark.slow
def test_audit_of_the_friendlycore_private_stage() -> None:
    """D′ adds one row far out; it lands in piece 0 and (worst case for any oracle) replaces that
    piece's tuple by one with every center at the row. Pieces are fixed: the row-level claim
    holds for every assignment of the other rows."""
    rho, delta, delta_prime = 1.0, 1e-8, 1e-6
    ds = fig6_blobs(40_000, rng=1100)
    stage = compute_tuples(ds.X, 8, n_tuples=200, rng=1100)
    row = np.array([[0.95, 0.0]])
    stage2 = dataclasses.replace(
        stage, tuples=np.concatenate([np.repeat(row[None], 8, axis=1), stage.tuples[1:]]),
        piece_of_row=np.concatenate([stage.piece_of_row, [0]]))
    data = ((ds.X, stage), (np.vstack([ds.X, row]), stage2))

    def run(j, i):
        X, st = data[j]
        return fc_private_stage(X, st, rho=rho, delta=delta, radius=1.0, r_min=1e-3,
                                rng=30_000 * j + i, n_declared=40_000, fallback=False)

    claimed = row_level_statement(run(0, 0).ledger, delta_prime).row
    events = [lambda r: r.centers is None,
              lambda r: r.centers is not None and np.max(r.centers[:, 0]) > 0.9]
    assert not _audit(run, events, 60 * SCALE, delta=claimed.delta, claim=claimed.eps).leak


@pytest.mark.slow
def test_bigger_audit() -> None:
    """The same audits with 4× the runs (a few minutes): tighter lower bounds, same claims."""
    global SCALE
    old, SCALE = SCALE, 4 * SCALE
    try:
        test_audit_detects_the_unpatched_diffprivlib_leak()
        test_audit_of_the_patched_diffprivlib_adapter()
        test_audit_of_dp_lloyd()
        test_audit_of_the_friendlycore_private_stage()
    finally:
        SCALE = old


# ----------------------------------------------------------------------------- issue 34, finding A
# The grid's number of levels is a public function of (d, n, ρ): at d = 2 and ρ = 0.02436 the
# budget of cells n·√(2ρ) crosses 2⁸ between n = 1,159 (one level) and n = 1,160 (two levels).
# Called directly with the release sampler and no declared size, grid_coreset used len(X): the
# number of released levels told D from D′ in every run (issue 34: 200 of 200, ε ≥ 3.81).
GRID_RHO = 0.02436
GRID_X = np.random.default_rng(34).uniform(-0.5, 0.5, (1_160, 2))
GRID_DATA = (GRID_X[:1_159], GRID_X)


def _levels(res) -> int:
    return len(res.step("coreset").data["levels"])


def test_grid_levels_cross_between_1159_and_1160_rows() -> None:
    """The boundary the audit below stands on (a public rule: d, n, ρ only)."""
    from dpviz.clustering.grid_coreset import grid_levels

    assert len(grid_levels(2, 1_159, GRID_RHO)) == 1 and len(grid_levels(2, 1_160, GRID_RHO)) == 2


def test_audit_of_direct_release_calls_without_a_declared_size() -> None:
    """Every direct door refuses a release with no declared size, on D and on D′ alike (nothing
    read, so nothing to distinguish)."""
    from dpviz.clustering.balcan import balcan_kmeans
    from dpviz.clustering.grid_coreset import grid_coreset
    from dpviz.privacy.release import SecureRNG

    for X in GRID_DATA:
        with pytest.raises(ValueError, match="needs a public size: pass n_declared"):
            grid_coreset(X, 3, rho=GRID_RHO, radius=1.0, rng=SecureRNG())
        with pytest.raises(ValueError, match="needs a public size: pass n_declared"):
            balcan_kmeans(X, 3, epsilon=1.0, radius=1.0, rng=SecureRNG())


@pytest.mark.slow
def test_audit_of_the_grid_level_count_with_a_declared_size() -> None:
    """With the size declared (the same public n on D and D′), the level count is the same on both:
    empirical ε 0.00 at the claim, in 200 release runs per side."""
    from dpviz.clustering.grid_coreset import grid_coreset
    from dpviz.privacy.release import SecureRNG

    def run(j, i):
        return _levels(grid_coreset(GRID_DATA[j], 3, rho=GRID_RHO, radius=1.0, n_declared=1_160,
                                    rng=SecureRNG()))

    audit = _audit(run, [lambda lv: lv == 2], 200 * SCALE, delta=0.0, claim=0.0)
    assert audit.eps_lower == 0.0 and not audit.leak


@pytest.mark.slow
def test_audit_of_the_grid_level_count_through_dpviz_run() -> None:
    """dpviz.run with no declared size pays for a DP count: the levels follow the noisy count, and
    the level-count distinguisher stays within the run's row-level claim."""
    import dpviz
    from dpviz.privacy.release import SecureRNG

    eps = 0.5

    def run(j, i):
        res = dpviz.run("grid_coreset", GRID_DATA[j], 3, epsilon=eps, delta=1e-6, radius=1.0,
                        rng=SecureRNG())
        return _levels(res)

    claim = dpviz.run("grid_coreset", GRID_DATA[0], 3, epsilon=eps, delta=1e-6, radius=1.0,
                      rng=SecureRNG()).guarantee
    assert not _audit(run, [lambda lv: lv >= 2], 200 * SCALE, delta=claim.delta, claim=claim.eps).leak


def test_the_cli_door_reads_the_declared_size_only(tmp_path) -> None:
    """The command line requires --n-declared (argparse), so the grid's levels on 1,159 and 1,160
    rows are the same levels in the ledger (the level count is a deterministic function of the declared n;
    with the same n_declared no run can separate D from D′ through it)."""
    import json

    from dpviz.cli import main

    labels = []
    for j, X in enumerate(GRID_DATA):
        csv, out = tmp_path / f"d{j}.csv", tmp_path / f"r{j}.json"
        np.savetxt(csv, X, delimiter=",", header="a,b", comments="")
        assert main(["run", str(csv), "--k", "3", "--epsilon", "1", "--delta", "1e-6", "--radius", "1",
                     "--n-declared", "1160", "--algorithm", "grid_coreset", "--out", str(out), "--quiet",
                     "--unbooked"]) == 0
        rows = json.loads(out.read_text())["ledger"]
        # the levels drawn (the number of cells noised at a deeper level follows the noisy survivors)
        labels.append([r["label"].split(":")[0] for r in rows if "grid counts" in r["label"]])
    assert labels[0] == labels[1] and labels[0]
    with pytest.raises(SystemExit):  # no declared size: refused by the parser, nothing read
        main(["run", str(tmp_path / "d0.csv"), "--k", "3", "--epsilon", "1", "--delta", "1e-6", "--radius",
              "1", "--algorithm", "grid_coreset", "--out", str(tmp_path / "x.json"), "--unbooked"])


# ----------------------------------------------------------------------------- sequential audit
# dpviz.privacy.audit.sequential_audit (issue 45): the fixed-count audit above, stopped early only
# when its verdict is decided. A Laplace count released at the claimed ε = 1 (scale 1/ε, the count
# of D is 0 and of D′ is 1) and the same count deliberately under-noised (scale 1/(3ε): true ε = 3).


def _laplace_count(scale: float, seed: int):
    g = np.random.default_rng(seed)

    def hits(j: int, i: int) -> list[bool]:
        out = j + g.laplace(0.0, scale)
        return [out > 0.5, out > 2.0]  # the optimal threshold, and one far in the tail

    return hits


@pytest.mark.parametrize("seed", range(3))
def test_sequential_audit_flags_an_under_noised_laplace_count(seed) -> None:
    """Scale 1/3 where ε = 1 needs 1: the audit flags it (its bound exceeds the claim) before the
    maximum count, as the fixed-count audit would at the maximum."""
    from dpviz.privacy.audit import sequential_audit

    audit = sequential_audit(_laplace_count(1 / 3, seed), 2, claim_eps=1.0, max_runs=2000)
    assert audit.leak and audit.eps_lower > 1.0 and audit.runs < audit.max_runs


@pytest.mark.parametrize("seed", range(3))
def test_sequential_audit_passes_the_correct_count(seed) -> None:
    """Scale 1/ε: no leak (its threshold event's true ratio is e^0.83, close to the claim, so the
    audit may need every run); scale 2/ε (true ε = 0.5): no leak, decided well before the 2000
    runs, and the same runs drawn to the end say "no leak" too."""
    from dpviz.privacy.audit import sequential_audit

    audit = sequential_audit(_laplace_count(1.0, seed), 2, claim_eps=1.0, max_runs=2000)
    assert not audit.leak and audit.eps_lower <= 1.0
    early = sequential_audit(_laplace_count(2.0, seed), 2, claim_eps=1.0, max_runs=2000)
    assert not early.leak and early.runs <= 1000
    full = sequential_audit(_laplace_count(2.0, seed), 2, claim_eps=1.0, max_runs=2000, looks=1)
    assert full.runs == 2000 and not full.leak


def test_sequential_audit_without_looks_is_the_fixed_count_audit() -> None:
    """``looks=1`` draws every run and reports eps_lower_bound's bound at α/(number of events)."""
    from dpviz.privacy.audit import sequential_audit

    hits = _laplace_count(1 / 3, 7)
    audit = sequential_audit(hits, 2, claim_eps=1.0, max_runs=500, looks=1)
    replay, counts = _laplace_count(1 / 3, 7), np.zeros((2, 2), dtype=int)
    for i in range(500):
        for j in (0, 1):
            counts[:, j] += replay(j, i)
    want = max(eps_lower_bound(int(a), int(b), 500, alpha=0.025).eps_lower for a, b in counts)
    assert audit.runs == 500 and audit.eps_lower == want and audit.hits == tuple(map(tuple, counts))


def test_sequential_audit_never_stops_a_leak_as_no_leak_on_a_deterministic_distinguisher() -> None:
    """The old boundary bug's shape: one side always answers differently. Flagged, and the
    early stop is the certain one (no remaining runs could bring the bound under the claim)."""
    from dpviz.privacy.audit import sequential_audit

    audit = sequential_audit(lambda j, i: [j == 1, False], 2, claim_eps=1.0, max_runs=2000)
    assert audit.leak and audit.hits[0] == (0, audit.runs) and audit.runs < 2000
