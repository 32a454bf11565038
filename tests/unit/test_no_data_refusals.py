"""No refusal that depends on the data (issue 25, finding 1) and a release sampler for every
releasable algorithm (finding 6).

The boundary of finding 1: D = 96 rows inside Λ plus 904 outside, declared n = 1000, k = 8 (so
FriendlyCore's t = 12 and t·k = 96), ε = 1, the release sampler. The old code released on D and
raised "…got n=95" on D minus one inside row: an empirical ε ≥ 6.12 against a claim of 1. Here
both are answers (a release or ⊥), booked in the ledger, via the library and the command line.
"""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pytest
from _fast_release import FastReleaseSampler

import dpviz
from dpviz.privacy.audit import eps_lower_bound, sequential_audit
from dpviz.privacy.mechanisms import gumbel_argmax, gumbel_top
from dpviz.privacy.release import SecureRNG
from dpviz.registry import algorithms

N_IN, N_OUT, K, EPS, DELTA, RADIUS = 96, 904, 8, 1.0, 1e-6, 1.0
N_DECLARED = N_IN + N_OUT
PRIVATE = [s.name for s in algorithms(private_only=True)]

#: Easy Instances' automatic t is its paper's sample complexity (n_min: thousands of tuples), so
#: its plan refuses these small declared sizes from declared values (issue 28). The small-data
#: checks here set t, which the aggregator answers with its own ⊥ when t is below n_min.
EXPLICIT: dict[str, dict] = {"easy_instances": {"n_tuples": 40}, "easy_instances_gmm": {"n_tuples": 40}}


def _cli_params(name: str) -> list[str]:
    return [a for k, v in EXPLICIT.get(name, {}).items() for a in ("--param", f"{k}={v}")]


def boundary_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """D (96 rows inside the unit ball, 904 outside) and D minus one inside row."""
    g = np.random.default_rng(seed)
    u = g.normal(size=(N_DECLARED, 2))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    r = np.concatenate([g.uniform(0.1, 0.9, N_IN), g.uniform(1.5, 3.0, N_OUT)])
    D = u * r[:, None]
    return D, D[1:]


def _fc_outcome(X: np.ndarray, rng=None) -> str:
    """"raised", "core" (FriendlyCore's own structure) or "other" (fallback / ⊥), on the release
    sampler (``rng``, default a fresh ``SecureRNG()``)."""
    try:
        res = dpviz.run("friendlycore", X, K, epsilon=EPS, delta=DELTA, radius=RADIUS,
                        rng=SecureRNG() if rng is None else rng, n_declared=N_DECLARED)
    except ValueError:
        return "raised"
    return "core" if dpviz.registry.get("friendlycore").structure_ok(res) else "other"


def _audit(runs: int, sampler=None) -> float:
    """The largest ε lower bound over the events "raised" and "core formed", both directions
    (Clopper–Pearson, α = 0.05 split over the two events). ``sampler(j, i)`` is run i's release
    sampler on D (j = 0) or D minus one row (j = 1); by default a fresh ``SecureRNG()``."""
    D, Dm = boundary_data()
    rng = sampler or (lambda j, i: None)
    a = [_fc_outcome(D, rng(0, i)) for i in range(runs)]
    b = [_fc_outcome(Dm, rng(1, i)) for i in range(runs)]
    return max(eps_lower_bound(a.count(ev), b.count(ev), runs, alpha=0.025).eps_lower
               for ev in ("raised", "core"))


def test_boundary_audit_fast():
    """60 + 60 runs on OpenDP's sampler: the old code's refusal (always on one side) gives a bound
    of about 2.4."""
    assert _audit(60) <= EPS


@pytest.mark.slow
@pytest.mark.timeout(3600)  # ≤ 4000 FriendlyCore releases (≈ 5–15 ms each, more on a loaded machine)
def test_boundary_audit_slow():
    """Up to 2000 + 2000 release runs, the same counts, α and claim as before issue 45, as a
    sequential audit (dpviz.privacy.audit.sequential_audit: it stops early only when the 2000-run
    verdict is certain, or, for "no leak", decided but for a stated 0.84 % chance), on the release
    path with numpy's noise (tests/unit/_fast_release.py: OpenDP's exact draws were ~21 of the
    ~23 ms of a release, and this audit is of who answers, not of the sampler; the fast audit above
    and ``test_every_algorithm_releases_with_the_secure_sampler_or_is_marked`` keep OpenDP's)."""
    D, Dm = boundary_data()

    def hits(j: int, i: int) -> list[bool]:
        out = _fc_outcome(Dm if j else D, FastReleaseSampler([45, j, i]))
        return [out == "raised", out == "core"]

    audit = sequential_audit(hits, 2, claim_eps=EPS, max_runs=2000, alpha=0.05)
    print(f"boundary audit, {audit.runs} + {audit.runs} of at most 2000 + 2000 runs: ε lower bound "
          f"{audit.eps_lower:.3f} (claim {EPS}), hits {audit.hits}; load {os.getloadavg()[0]:.1f}")
    assert not audit.leak and audit.eps_lower <= EPS


def _kind(res) -> str:
    return "release" if res.centers is not None else "⊥"


def _check_booked(res) -> None:
    """The run's plan is stated and its spend is on the ledger (every path books the budget)."""
    assert res.plan is not None and res.guarantee == res.plan.guarantee
    if res.guarantee.eps > 0:
        assert res.ledger.to_rows(), res.ledger


@pytest.mark.parametrize("name", PRIVATE)
def test_neighbours_at_the_boundary_both_answer_and_are_booked(name):
    """D and D minus one row: both a Result (a release or one generic ⊥), both booked."""
    spec = dpviz.registry.get(name)
    rng = SecureRNG if spec.releasable else (lambda: 7)
    for X in boundary_data():
        res = dpviz.run(name, X, K, epsilon=EPS, delta=DELTA, radius=RADIUS, rng=rng(),
                        n_declared=N_DECLARED, **EXPLICIT.get(name, {}))
        assert _kind(res) in ("release", "⊥")
        assert res.simulation == (not spec.releasable)
        _check_booked(res)
        if res.failure is not None:  # a failure never quotes a count read from the data
            assert not re.search(r"\b(95|96)\b|\bn\s*=\s*\d", res.failure), res.failure


def test_gmm_shortfall_in_the_data_is_a_booked_failure():
    """|S¹| < t·k in the DATA (60 rows against a declared 1000): ⊥ with the whole budget booked;
    the old code raised, quoting |S¹| and n."""
    X = boundary_data()[0][:60] * 0.3
    res = dpviz.run("easy_instances_gmm", X, 2, epsilon=EPS, delta=DELTA, radius=RADIUS, rng=SecureRNG(),
                    n_declared=N_DECLARED, **EXPLICIT["easy_instances_gmm"])
    assert res.centers is None and res.failure and "60" not in res.failure
    from dpviz.privacy.accounting import dp_total

    tot = dp_total(res.ledger)
    assert tot.eps == pytest.approx(res.plan.budget.eps) and tot.delta == pytest.approx(res.plan.budget.delta)


def test_declared_infeasibility_is_refused_from_declared_values_only():
    X = boundary_data()[0]
    for name in ("friendlycore", "easy_instances", "easy_instances_gmm"):
        with pytest.raises(ValueError, match=r"declared size n_declared=40") as err:
            dpviz.run(name, X, K, epsilon=EPS, delta=DELTA, radius=RADIUS, rng=SecureRNG(), n_declared=40,
                      n_tuples=12)
        assert str(N_DECLARED) not in str(err.value)  # the true row count is never quoted


def test_a_dp_counted_size_too_small_answers_bottom_with_the_count_booked():
    """No declared size: a DP count of the 50 rows (Laplace, ε = 0.02, scale 50) decides against
    t·k = 96. The count is noisy, so each run is checked against its own count (``n_declared`` in
    its params): below 96 it answers ⊥ with only the count booked, else it runs. Ten fixed seeds
    cover both branches (with one unseeded draw, ~20% of runs counted ≥ 96 and the test failed)."""
    X = boundary_data()[0][:50]
    branches = set()
    for seed in range(10):
        res = dpviz.run("friendlycore", X, K, epsilon=EPS, delta=DELTA, radius=RADIUS, rng=seed,
                        n_tuples=12)
        assert res.plan.size_source == "dp_count"
        too_small = res.params["n_declared"] < 12 * K
        branches.add(too_small)
        if too_small:
            assert res.centers is None and res.failure == dpviz.registry.COUNT_INFEASIBLE
            assert res.guarantee.eps == pytest.approx(0.02 * EPS)
            assert [s.mechanism for _, s in res.ledger.spends()] == ["laplace"]
        else:
            assert res.failure != dpviz.registry.COUNT_INFEASIBLE
            assert res.guarantee.eps <= EPS * (1 + 1e-9)
    assert branches == {True, False}


@pytest.mark.parametrize("name", PRIVATE)
def test_cli_neighbours_both_answer_and_are_booked(name, tmp_path):
    from dpviz.cli import EXIT_BAD_INPUT, main

    spec = dpviz.registry.get(name)
    codes, kinds = [], []
    for i, X in enumerate(boundary_data()):
        csv = tmp_path / f"d{i}.csv"
        np.savetxt(csv, X, delimiter=",", header="a,b", comments="")
        out = tmp_path / f"r{i}.json"
        codes.append(main(["run", str(csv), "--k", str(K), "--epsilon", str(EPS), "--delta", str(DELTA),
                           "--radius", str(RADIUS), "--n-declared", str(N_DECLARED), "--out", str(out),
                           "--report", str(tmp_path / f"r{i}.html"), "--quiet", "--unbooked",
                           "--algorithm", name, *_cli_params(name)]))
        if codes[-1] == 0:
            doc = json.loads(out.read_text())
            kinds.append("release" if doc["centers"] is not None else "⊥")
            assert doc["statement"]["epsilon"] <= EPS * (1 + 1e-9) and doc["ledger"]
    if spec.releasable:
        assert codes == [0, 0] and set(kinds) <= {"release", "⊥"}
    else:  # refused from the spec (a public property), the same on both neighbours
        assert codes == [EXIT_BAD_INPUT, EXIT_BAD_INPUT]


@pytest.mark.parametrize("name", ["friendlycore", "dp_lloyd"])
def test_cli_streamed_neighbours_both_answer(name, tmp_path):
    """The streamed path (chunks, keyed pieces) gives the same kind of answer on both neighbours."""
    from dpviz.cli import main

    docs = []
    for i, X in enumerate(boundary_data()):
        csv = tmp_path / f"d{i}.csv"
        np.savetxt(csv, X, delimiter=",", header="a,b", comments="")
        out = tmp_path / f"r{i}.json"
        assert main(["run", str(csv), "--k", str(K), "--epsilon", str(EPS), "--delta", str(DELTA),
                     "--radius", str(RADIUS), "--n-declared", str(N_DECLARED), "--out", str(out),
                     "--report", str(tmp_path / f"r{i}.html"), "--quiet", "--unbooked", "--algorithm", name,
                     "--mode", "stream"]) == 0
        docs.append(json.loads(out.read_text()))
    assert all(d["ledger"] and d["statement"]["epsilon"] <= EPS * (1 + 1e-9) for d in docs)
    assert docs[0]["statement"] == docs[1]["statement"]  # the plan: public inputs only


# ----------------------------------------------------------------------------- the release sampler


def test_every_algorithm_releases_with_the_secure_sampler_or_is_marked():
    """Finding 6: on a small dataset each registered private algorithm either makes a release
    (not a simulation, no crash) or says it cannot (``releasable=False``)."""
    g = np.random.default_rng(4)
    mu = np.array([[0.6, 0.0], [-0.6, 0.0]])
    X = mu[g.integers(0, 2, 3000)] + 0.05 * g.normal(size=(3000, 2))
    for spec in algorithms(private_only=True):
        res = dpviz.run(spec.name, X, 2, epsilon=4.0, delta=1e-6, radius=1.0, rng=SecureRNG(),
                        n_declared=3000, **EXPLICIT.get(spec.name, {}))
        assert res.simulation == (not spec.releasable), spec.name
    assert {s.name for s in dpviz.registry.releasable()} == {s.name for s in algorithms(private_only=True)
                                                             if s.releasable}
    assert not dpviz.registry.get("diffprivlib").releasable


def test_secure_exponential_mechanism_has_the_right_distribution():
    """OpenDP's Gumbel noisy max: P(i) ∝ exp(logit_i); −∞ has probability 0 (3000 draws, 5σ)."""
    s = SecureRNG()
    logits = np.array([0.0, math.log(2.0), -math.inf, math.log(1.0)])
    draws = np.array([gumbel_argmax(logits, s) for _ in range(3000)])
    p = np.array([1, 2, 0, 1]) / 4.0
    freq = np.bincount(draws, minlength=4) / draws.size
    assert freq[2] == 0.0
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / draws.size) + 1e-12)
    top = gumbel_top(np.array([[0.0, 50.0, 40.0, -50.0], [9.0, -9.0, 0.0, 30.0]]), 2, s)
    assert top.tolist() == [[1, 2], [3, 0]]  # gaps of 10+ nats: the order is all but certain
    seeded = gumbel_top(np.zeros((3, 5)), 2, np.random.default_rng(0))
    assert seeded.shape == (3, 2) and all(len(set(r)) == 2 for r in seeded.tolist())


def test_the_fast_release_sampler_takes_the_release_path_with_the_same_noise():
    """The slow boundary audit's sampler (tests/unit/_fast_release.py): a release, never a
    simulation, and the same noise as OpenDP's: Gaussian σ, Laplace b, P(i) ∝ exp(logit_i) and
    Gumbel-top-m (fixed seed; 5σ bounds of the sample moments and frequencies)."""
    from dpviz.privacy.release import is_secure

    s = FastReleaseSampler(0)
    assert is_secure(s) and all(is_secure(c) for c in s.spawn(2))
    n = 20_000
    g = np.asarray(s.gaussian_release(np.full(n, 3.0), 2.0)) - 3.0
    assert abs(g.mean()) <= 5 * 2.0 / math.sqrt(n) and abs(g.std() / 2.0 - 1) <= 5 / math.sqrt(2 * n)
    lap = np.asarray(s.laplace_release(np.zeros(n), 0.5))
    assert abs(np.abs(lap).mean() / 0.5 - 1) <= 5 / math.sqrt(n)  # E|X| = b, sd(|X|) = b
    assert isinstance(s.gaussian_release(1.0, 1.0), float) and s.gaussian_release(1.0, 0) == 1.0
    logits = np.array([0.0, math.log(2.0), -math.inf, math.log(1.0)])
    draws = np.array([gumbel_argmax(logits, s) for _ in range(3000)])
    p = np.array([1, 2, 0, 1]) / 4.0
    freq = np.bincount(draws, minlength=4) / draws.size
    assert freq[2] == 0.0 and np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / draws.size) + 1e-12)
    top = gumbel_top(np.array([[0.0, 50.0, 40.0, -50.0], [9.0, -9.0, 0.0, 30.0]]), 2, s)
    assert top.tolist() == [[1, 2], [3, 0]]
    D, _ = boundary_data()
    res = dpviz.run("friendlycore", D, K, epsilon=EPS, delta=DELTA, radius=RADIUS, rng=FastReleaseSampler(1),
                    n_declared=N_DECLARED)
    assert not res.simulation and res.seed is None and res.guarantee.eps > 0 and res.ledger.to_rows()

